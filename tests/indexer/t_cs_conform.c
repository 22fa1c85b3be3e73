/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * CoreSight conformance: every ETMv3, PTM, ETMv4 and ETE snapshot of the
 * shared corpus (OpenCSD's own test snapshots) is imported with hwtrace import,
 * read back from the archive and decoded by the indexer's OpenCSD decoder
 * (ix_cs_decode() over the archive's streams and memory images).  Per
 * trace ID, in order, the instruction ranges (start, end, instruction
 * count, ISA), exceptions and address-not-accessible elements must equal
 * those in expected/<name>.ppl[.xz], which Debian's trc_pkt_lister wrote:
 * nothing here is compared with what this code wrote itself.  Of a
 * snapshot with several buffers trc_pkt_lister decodes the one it names,
 * and only that buffer's stream is compared.  Each
 * snapshot is printed with pass or fail.  A second case does the same for
 * the ETE decoder on a copy of an ETMv4 snapshot declared ETE, with
 * trc_pkt_lister run here on that copy as the reference.  Cycle counts
 * are compared through the database: hwtrace index's cycles table against
 * the "[CC=n]" values of the same expected output.
 */

#include <atf-c.h>
#include <dirent.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hwtrace.h"
#include "hwtr_test.h"
#include "../../indexer/hwtr_ix.h"

struct line {
	unsigned	id;
	char		s[96];
};

struct lines {
	struct line	*v;
	size_t		n, cap;
};

static void
lines_add(struct lines *l, unsigned id, const char *s)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 1024;
		l->v = realloc(l->v, l->cap * sizeof(*l->v));
		ATF_REQUIRE(l->v != NULL);
	}
	l->v[l->n].id = id;
	snprintf(l->v[l->n].s, sizeof(l->v[l->n].s), "%s", s);
	l->n++;
}

static const char *
isa_name(int isa)
{
	return (isa == IX_CS_A64 ? "A64" : isa == IX_CS_A32 ? "A32" :
	    isa == IX_CS_T32 ? "T32" : "?");
}

static const char *const memtrans_names[] = { "init", "start", "commit",
	"fail" };

static int
collect(void *arg, const struct ix_cs_elem *e)
{
	struct lines *l = arg;
	char s[96];

	switch (e->kind) {
	case IX_CS_RANGE:
		snprintf(s, sizeof(s), "range 0x%" PRIx64 "-0x%" PRIx64
		    " n=%u %s %s %s", e->st, e->en, e->ninsn, isa_name(e->isa),
		    e->last_exec ? "E" : "N", ix_class_names[e->last_class]);
		break;
	case IX_CS_EXCEPTION:
		if (e->en != 0)
			snprintf(s, sizeof(s), "exception 0x%x ret 0x%" PRIx64,
			    e->excnum, e->en);
		else
			snprintf(s, sizeof(s), "exception 0x%x", e->excnum);
		break;
	case IX_CS_EXC_RET:
		snprintf(s, sizeof(s), "exception-return");
		break;
	case IX_CS_NACC:
		snprintf(s, sizeof(s), "nacc 0x%" PRIx64, e->st);
		break;
	case IX_CS_TIMESTAMP:
		snprintf(s, sizeof(s), "timestamp 0x%" PRIx64, e->ts);
		break;
	case IX_CS_MEMTRANS:
		snprintf(s, sizeof(s), "memtrans %s",
		    memtrans_names[e->memtrans & 3]);
		break;
	case IX_CS_MARKER:
		snprintf(s, sizeof(s), "ts-marker 0x%x", e->marker);
		break;
	case IX_CS_NO_SYNC:
		snprintf(s, sizeof(s), "no-sync");
		break;
	default:
		return (0);
	}
	lines_add(l, e->trace_id, s);
	return (0);
}

/* trc_pkt_lister's output @ppl or @ppl.xz (its name in @path), or NULL. */
static FILE *
ppl_open(const char *ppl, char *path, size_t pathlen)
{
	char cmd[1200];
	FILE *f;

	snprintf(path, pathlen, "%s", ppl);
	if (access(path, R_OK) == 0)
		snprintf(cmd, sizeof(cmd), "cat '%s'", path);
	else {
		snprintf(cmd, sizeof(cmd), "xz -dc '%s.xz'", path);
		snprintf(path, pathlen, "%s.xz", ppl);
		if (access(path, R_OK) != 0)
			return (NULL);
	}
	f = popen(cmd, "r");
	ATF_REQUIRE(f != NULL);
	return (f);
}

/*
 * The class of a range's last instruction, from what trc_pkt_lister prints
 * after "E " or "N ": "BR  b+link ", "iBR A64:ret ", "WFI.WFE" ...  Direct
 * branches (BR) are calls with a link, conditional or jumps; indirect ones
 * (iBR) calls with a link, returns (A64 RET and its pointer-authenticated
 * forms, a v7 implied return) or jumps (ERET among them); anything else
 * (ISB, WFI/WFE/WFET, TSTART, "---") is not a branch.
 */
static const char *
range_class(const char *t)
{
	while (*t == ' ')
		t++;
	if (strncmp(t, "iBR", 3) == 0)
		return (strstr(t, "b+link") != NULL ? "call-indirect" :
		    strstr(t, "A64:ret") != NULL ||
		    strstr(t, "impl ret") != NULL ? "return" :
		    "jump-indirect");
	if (strncmp(t, "BR ", 3) == 0)
		return (strstr(t, "b+link") != NULL ? "call" :
		    strstr(t, "<cond>") != NULL ? "cond" : "jump");
	return ("other");
}

/*
 * The number in @base right after @key in @p, part of @line of the
 * decoder's output @path; the test fails when there is none.
 */
static unsigned long long
num_after(const char *path, const char *line, const char *p,
    const char *key, int base)
{
	const char *q = strstr(p, key);
	char *end;
	unsigned long long v;

	if (q == NULL)
		atf_tc_fail("%s: unparsed line, expected '%s': %s", path, key,
		    line);
	q += strlen(key);
	v = strtoull(q, &end, base);
	if (end == q)
		atf_tc_fail("%s: unparsed line, expected a number after "
		    "'%s': %s", path, key, line);
	return (v);
}

/*
 * The elements trc_pkt_lister printed, from @path or @path.xz, and into
 * @src (when not NULL) the trace buffer it decoded: of a snapshot with
 * several buffers it decodes only the one it names ("Using ETB_1 as trace
 * source").
 */
static int
expected(const char *ppl, struct lines *l, char *src, size_t srclen)
{
	char path[1024], buf[4096], s[96], isa[8], name[128];
	unsigned id, n;
	unsigned long long a, b;
	const char *p, *q;
	FILE *f;

	if ((f = ppl_open(ppl, path, sizeof(path))) == NULL)
		return (-1);
	if (src != NULL)
		src[0] = '\0';
	while (fgets(buf, sizeof(buf), f) != NULL) {
		if (src != NULL && src[0] == '\0' &&
		    sscanf(buf, "Using %127s as trace source", name) == 1)
			snprintf(src, srclen, "%s", name);
		if (strncmp(buf, "Idx:", 4) != 0 ||
		    (p = strstr(buf, "; ID:")) == NULL ||
		    sscanf(p, "; ID:%x;", &id) != 1)
			continue;
		if ((p = strstr(buf, "OCSD_GEN_TRC_ELEM_INSTR_RANGE(")) != NULL) {
			if (sscanf(p, "OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec "
			    "range=0x%llx:[0x%llx] num_i(%u) %*s (ISA=%3s)",
			    &a, &b, &n, isa) != 4 ||
			    (q = strstr(p, "(ISA=")) == NULL ||
			    (q = strchr(q, ')')) == NULL ||
			    (q[2] != 'E' && q[2] != 'N'))
				atf_tc_fail("%s: unparsed line: %s", path, buf);
			snprintf(s, sizeof(s), "range 0x%llx-0x%llx n=%u %s "
			    "%c %s", a, b, n, isa, q[2], range_class(q + 3));
		} else if ((p = strstr(buf, "OCSD_GEN_TRC_ELEM_EXCEPTION(")) !=
		    NULL) {
			n = (unsigned)num_after(path, buf, p, "excep num (", 16);
			if ((q = strstr(p, "pref ret addr:")) != NULL &&
			    sscanf(q, "pref ret addr:%llx", &a) == 1)
				snprintf(s, sizeof(s), "exception 0x%x ret "
				    "0x%llx", n, a);
			else
				snprintf(s, sizeof(s), "exception 0x%x", n);
		} else if (strstr(buf, "OCSD_GEN_TRC_ELEM_EXCEPTION_RET(") !=
		    NULL)
			snprintf(s, sizeof(s), "exception-return");
		else if (strstr(buf, "OCSD_GEN_TRC_ELEM_NO_SYNC(") != NULL)
			snprintf(s, sizeof(s), "no-sync");
		else if ((p = strstr(buf, "OCSD_GEN_TRC_ELEM_TIMESTAMP(")) !=
		    NULL) {
			a = num_after(path, buf, p, "TS=", 16);
			snprintf(s, sizeof(s), "timestamp 0x%llx", a);
		} else if ((p = strstr(buf, "OCSD_GEN_TRC_ELEM_MEMTRANS(")) !=
		    NULL) {
			p += strlen("OCSD_GEN_TRC_ELEM_MEMTRANS(");
			snprintf(s, sizeof(s), "memtrans %s",
			    strncasecmp(p, "start", 5) == 0 ? "start" :
			    strncasecmp(p, "commit", 6) == 0 ? "commit" :
			    strncasecmp(p, "fail", 4) == 0 ? "fail" : "init");
		} else if ((p = strstr(buf, "OCSD_GEN_TRC_ELEM_SYNC_MARKER(")) !=
		    NULL) {
			n = (unsigned)num_after(path, buf, p,
			    "Timestamp marker(", 16);
			snprintf(s, sizeof(s), "ts-marker 0x%x", n);
		} else if ((p = strstr(buf, "OCSD_GEN_TRC_ELEM_ADDR_NACC(")) !=
		    NULL) {
			a = num_after(path, buf, p,
			    "OCSD_GEN_TRC_ELEM_ADDR_NACC(", 16);
			snprintf(s, sizeof(s), "nacc 0x%llx", a);
		} else
			continue;
		lines_add(l, id, s);
	}
	pclose(f);
	return (0);
}

/*
 * Import the snapshot in @snapdir and decode every stream of the archive,
 * or only the one of trace buffer @src when @src is not NULL.
 */
static int
decode_snapshot(const char *name, const char *snapdir, const char *src,
    struct lines *l, int *decodable, char *why, size_t whylen)
{
	char sname[200];
	size_t ndone = 0;
	char cmd[2400], out[300], err[256];
	const struct hwtr_stream_desc *sd;
	const struct hwtr_sb_rec *r;
	struct ix_cs_mem *mem = NULL;
	void **imgs = NULL;
	size_t *imglen = NULL;
	struct hwtr_ar *ar;
	size_t s, c, i, nmem = 0, nimg;
	int rc, idx;

	snprintf(out, sizeof(out), "%s.hwtrace", name);
	snprintf(cmd, sizeof(cmd), "'%s' import '%s' -o '%s'",
	    HWTR_TEST_HWTRACE, snapdir, out);
	if (system(cmd) != 0)
		atf_tc_fail("%s: '%s' failed", name, cmd);
	rc = hwtr_ar_open(&ar, out, NULL);
	ATF_REQUIRE_MSG(rc >= 0, "%s: cannot read back %s", name, out);
	*decodable = 0;
	if (src != NULL)
		snprintf(sname, sizeof(sname), "buffer %s", src);
	for (s = 0; s < hwtr_ar_nstreams(ar); s++) {
		sd = hwtr_ar_stream(ar, s);
		if (src != NULL && strcmp(sd->name, sname) != 0)
			continue;
		for (i = 0; i < sd->cs.nsources; i++)
			if (sd->cs.sources[i].protocol == HWTR_TF_ETMV3 ||
			    sd->cs.sources[i].protocol == HWTR_TF_PTM ||
			    sd->cs.sources[i].protocol == HWTR_TF_ETMV4 ||
			    sd->cs.sources[i].protocol == HWTR_TF_ETE)
				*decodable = 1;
	}
	/* The memory images, where the sideband maps them. */
	nimg = 0;
	for (i = 0; i < hwtr_ar_nsideband(ar); i++) {
		r = hwtr_ar_sideband_rec(ar, i);
		if (r->type != HWTR_SB_MMAP || r->u.mmap.image == NULL)
			continue;
		idx = hwtr_ar_find_image(ar, r->u.mmap.image);
		ATF_REQUIRE_MSG(idx >= 0, "%s: image %s not found", name,
		    r->u.mmap.image);
		mem = realloc(mem, (nmem + 1) * sizeof(*mem));
		imgs = realloc(imgs, (nimg + 1) * sizeof(*imgs));
		imglen = realloc(imglen, (nimg + 1) * sizeof(*imglen));
		ATF_REQUIRE(mem != NULL && imgs != NULL && imglen != NULL);
		ATF_REQUIRE(hwtr_ar_read_image(ar, (size_t)idx, &imgs[nimg],
		    &imglen[nimg]) >= 0);
		ATF_REQUIRE(r->u.mmap.pgoff < imglen[nimg]);
		mem[nmem].addr = r->u.mmap.addr;
		mem[nmem].p = (const uint8_t *)imgs[nimg] + r->u.mmap.pgoff;
		mem[nmem].len = r->u.mmap.len;
		nmem++;
		nimg++;
	}
	for (s = 0; s < hwtr_ar_nstreams(ar); s++) {
		uint8_t *buf = NULL;
		size_t len = 0;

		sd = hwtr_ar_stream(ar, s);
		ATF_REQUIRE_EQ(sd->format, HWTR_TF_CORESIGHT);
		if (src != NULL && strcmp(sd->name, sname) != 0)
			continue;
		ndone++;
		for (c = 0; c < hwtr_ar_nchunks(ar, s); c++) {
			void *p;
			size_t n;

			ATF_REQUIRE(hwtr_ar_read_chunk(ar, s, c, &p, &n) >= 0);
			buf = realloc(buf, len + n);
			ATF_REQUIRE(buf != NULL);
			memcpy(buf + len, p, n);
			len += n;
			free(p);
		}
		rc = ix_cs_decode(sd, buf, len, mem, nmem, collect, l, err,
		    sizeof(err));
		free(buf);
		if (rc < 0) {
			snprintf(why, whylen, "stream %zu: %s", s, err);
			break;
		}
	}
	for (i = 0; i < nimg; i++)
		free(imgs[i]);
	free(imgs);
	free(imglen);
	free(mem);
	hwtr_ar_close(ar);
	if (rc >= 0 && src != NULL && ndone == 0) {
		snprintf(why, whylen, "no stream '%s' in the archive", sname);
		return (-1);
	}
	return (rc < 0 ? rc : 0);
}

/* Compare per trace ID; the first difference in @why. */
static int
compare(const struct lines *want, const struct lines *got, char *why,
    size_t whylen, size_t *nranges)
{
	unsigned id;
	size_t i, j, k;

	*nranges = 0;
	for (id = 0; id < 128; id++) {
		i = j = k = 0;
		for (;;) {
			while (i < want->n && want->v[i].id != id)
				i++;
			while (j < got->n && got->v[j].id != id)
				j++;
			if (i == want->n && j == got->n)
				break;
			if (i == want->n || j == got->n ||
			    strcmp(want->v[i].s, got->v[j].s) != 0) {
				snprintf(why, whylen, "trace ID 0x%02x element "
				    "%zu: expected '%s', got '%s'", id, k,
				    i < want->n ? want->v[i].s : "(end)",
				    j < got->n ? got->v[j].s : "(end)");
				return (-1);
			}
			if (strncmp(want->v[i].s, "range", 5) == 0)
				(*nranges)++;
			i++;
			j++;
			k++;
		}
	}
	return (0);
}

/* Snapshots tested, failed, and the failures' messages. */
struct tally {
	char	fails[4096];
	int	tested;
	int	failed;
};

/* Snapshot @name tested and failed, saying @why. */
static void
tally_fail(struct tally *t, const char *name, const char *why)
{
	size_t len = strlen(t->fails);

	printf("%s: fail: %s\n", name, why);
	snprintf(t->fails + len, sizeof(t->fails) - len, "%s%s: %s",
	    t->failed ? "; " : "", name, why);
	t->failed++;
	t->tested++;
}

/* What a snapshot's test found. */
enum snap_result {
	SNAP_SKIP,
	SNAP_PASS,
	SNAP_FAIL
};

/*
 * One snapshot @name of the corpus directory @dir, and the path of what
 * trc_pkt_lister printed for it; @want and @got, empty, for its test to
 * fill; a failure says why in @why.
 */
struct snap {
	const char	*dir;
	const char	*name;
	char		 ppl[1100];
	struct lines	 want;
	struct lines	 got;
	char		 why[512];
};

typedef enum snap_result snap_test(struct snap *s);

/*
 * @test on every OpenCSD snapshot of the corpus (skips without it): at
 * least @min tested (@what, in the failure), and every one passes; the
 * failures are named all together.
 */
static void
each_snapshot(snap_test *test, int min, const char *what)
{
	char dir[1024];
	struct tally t = { "", 0, 0 };
	struct dirent *de;
	struct snap sn;
	DIR *d;

	HWTR_REQUIRE_CORPUS("opencsd/snapshots");
	snprintf(dir, sizeof(dir), "%s/opencsd/snapshots", HWTR_TEST_CORPUS);
	d = opendir(dir);
	ATF_REQUIRE(d != NULL);
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		memset(&sn, 0, sizeof(sn));
		sn.dir = dir;
		sn.name = de->d_name;
		snprintf(sn.ppl, sizeof(sn.ppl), "%s/opencsd/expected/%s.ppl",
		    HWTR_TEST_CORPUS, de->d_name);
		switch (test(&sn)) {
		case SNAP_FAIL:
			tally_fail(&t, sn.name, sn.why);
			break;
		case SNAP_PASS:
			t.tested++;
			break;
		case SNAP_SKIP:
			break;
		}
		fflush(stdout);
		free(sn.want.v);
		free(sn.got.v);
	}
	closedir(d);
	ATF_REQUIRE_MSG(t.tested >= min, "expected %s, tested %d", what,
	    t.tested);
	if (t.failed)
		atf_tc_fail("%d of %d snapshots differ: %s", t.failed, t.tested,
		    t.fails);
}

/*
 * One snapshot's instruction ranges against trc_pkt_lister's: decoded
 * from its directory as they are in the expected output's output.
 */
static enum snap_result
snap_ranges(struct snap *s)
{
	char snap[1400], src[128];
	size_t nranges;
	int decodable;

	snprintf(snap, sizeof(snap), "%s/%s", s->dir, s->name);
	if (expected(s->ppl, &s->want, src, sizeof(src)) < 0) {
		printf("%s: skipped: no expected output\n", s->name);
		return (SNAP_SKIP);
	}
	if (s->want.n == 0) {
		printf("%s: skipped: trc_pkt_lister printed no decoded "
		    "elements\n", s->name);
		return (SNAP_SKIP);
	}
	if (decode_snapshot(s->name, snap, src[0] != '\0' ? src : NULL,
	    &s->got, &decodable, s->why, sizeof(s->why)) < 0)
		return (SNAP_FAIL);
	if (!decodable) {
		printf("%s: skipped: no ETMv3/PTM/ETMv4/ETE source\n", s->name);
		return (SNAP_SKIP);
	}
	if (compare(&s->want, &s->got, s->why, sizeof(s->why), &nranges) < 0)
		return (SNAP_FAIL);
	printf("%s: pass (%zu elements, %zu ranges)\n", s->name, s->want.n,
	    nranges);
	return (SNAP_PASS);
}

ATF_TC(snapshots);
ATF_TC_HEAD(snapshots, tc)
{
	atf_tc_set_md_var(tc, "descr", "instruction ranges, exceptions and "
	    "inaccessible addresses per trace ID equal trc_pkt_lister's for "
	    "every ETMv3/PTM/ETMv4/ETE snapshot of the corpus");
	atf_tc_set_md_var(tc, "timeout", "300");
}

ATF_TC_BODY(snapshots, tc)
{
	each_snapshot(snap_ranges, 8, "the corpus's ETMv3/PTM/ETMv4 "
	    "snapshots");
}

/*
 * The copy or snapshot in @snapdir, imported and decoded, against what
 * trc_pkt_lister printed into @ppl for it: at least @min elements and
 * @minranges ranges, per trace ID equal.
 */
static void
check_against(const char *label, const char *snapdir, const char *ppl,
    size_t min, size_t minranges)
{
	char why[512], src[128];
	struct lines want, got;
	size_t nranges;
	int decodable;

	memset(&want, 0, sizeof(want));
	memset(&got, 0, sizeof(got));
	ATF_REQUIRE(expected(ppl, &want, src, sizeof(src)) == 0);
	ATF_REQUIRE_MSG(want.n >= min, "%s: trc_pkt_lister decoded only %zu "
	    "elements", label, want.n);
	ATF_REQUIRE_MSG(src[0] != '\0', "%s: %s does not say which buffer "
	    "trc_pkt_lister decoded", label, ppl);
	if (decode_snapshot(label, snapdir, src, &got, &decodable, why,
	    sizeof(why)) < 0)
		atf_tc_fail("%s: %s", label, why);
	ATF_REQUIRE_MSG(decodable, "%s: the archive has no source OpenCSD "
	    "decodes", label);
	if (compare(&want, &got, why, sizeof(why), &nranges) < 0)
		atf_tc_fail("%s: %s", label, why);
	printf("%s: pass (%zu elements, %zu ranges)\n", label, want.n,
	    nranges);
	ATF_CHECK_MSG(nranges >= minranges, "%s: %zu ranges, expected at "
	    "least %zu", label, nranges, minranges);
	free(want.v);
	free(got.v);
}

/* Skip the test case unless trc_pkt_lister is installed. */
static void
need_lister(void)
{
	if (system("command -v trc_pkt_lister > /dev/null") != 0)
		atf_tc_skip("trc_pkt_lister (libopencsd-bin) is not installed");
}

/*
 * Copy the corpus's snapshot @snap into ./@dir and run the shell command
 * @edit on the copy; the test fails if either fails.
 */
static void
snap_copy(const char *snap, const char *dir, const char *edit)
{
	char cmd[2048];

	snprintf(cmd, sizeof(cmd), "cp -R '%s/opencsd/snapshots/%s' '%s' && "
	    "%s", HWTR_TEST_CORPUS, snap, dir, edit);
	ATF_REQUIRE_MSG(system(cmd) == 0, "cannot make the copy %s of %s: %s",
	    dir, snap, cmd);
}

/*
 * ETE on a larger trace than the corpus's real ETE snapshots (which the
 * snapshots case checks): ETE's packets are ETMv4's with additions, so
 * juno_r1_1's ETMv4 trace is declared ETE (type ETE, TRCIDR1 architecture
 * 5, which an ETE TRCDEVARCH confirms) and Debian's trc_pkt_lister decodes
 * the copy with OpenCSD's ETE decoder: its ranges (not the same as the
 * ETMv4 reading of those bytes) are the reference for hwtrace's ETE path,
 * from import through decode.
 */
ATF_TC(ete_as_trc_pkt_lister);
ATF_TC_HEAD(ete_as_trc_pkt_lister, tc)
{
	atf_tc_set_md_var(tc, "descr", "an ETMv4 snapshot declared ETE "
	    "decodes to trc_pkt_lister's ETE ranges per trace ID");
	atf_tc_set_md_var(tc, "timeout", "120");
}
ATF_TC_BODY(ete_as_trc_pkt_lister, tc)
{
	HWTR_REQUIRE_CORPUS("opencsd/snapshots/juno_r1_1");
	need_lister();
	snap_copy("juno_r1_1", "ete", "for f in ete/device_*.ini; do "
	    "grep -q '^type=ETM4$' \"$f\" || continue; sed -i -e "
	    "'s/^type=ETM4$/type=ETE/' -e "
	    "'s/^\\(TRCIDR1([^)]*)=0x[0-9A-Fa-f]*\\)4\\([0-9A-Fa-f]\\)"
	    "\\([0-9A-Fa-f]\\)$/\\15\\2\\3/' -e "
	    "'s/^\\[regs\\]$/[regs]\\nTRCDEVARCH(0x3EF)=0x47725A13/' "
	    "\"$f\"; done");
	ATF_REQUIRE_MSG(system("test \"$(grep -l '^type=ETE$' ete/*.ini | "
	    "wc -l)\" -ge 1 && ! grep -q '^type=ETM4$' ete/*.ini && "
	    "grep -q '^TRCIDR1(0x079)=0x4100F502$' ete/device_*.ini") == 0,
	    "the copy does not declare ETE as intended");
	ATF_REQUIRE(system("trc_pkt_lister -ss_dir ete -decode "
	    "-no_time_print > ete.ppl 2>&1") == 0);
	ATF_REQUIRE_MSG(system("grep -q 'Protocol printer ETE' ete.ppl") == 0,
	    "trc_pkt_lister did not read the copy as ETE");
	check_against("ete", "ete", "ete.ppl", 1000, 1000);
}

/*
 * ETE snapshots with two buffers: the corpus's output covers the first
 * (trc_pkt_lister decodes the buffer it names, ETB_1), so trc_pkt_lister
 * -src_name ETB_2 is run here for the second.  s_9001's second buffer
 * holds most of its trace; ete-wfet's is empty, which both decode to
 * nothing at all.
 */
ATF_TC(ete_second_buffer);
ATF_TC_HEAD(ete_second_buffer, tc)
{
	atf_tc_set_md_var(tc, "descr", "the second buffer of the two-buffer "
	    "ETE snapshots (s_9001, ete-wfet's empty one) decodes to "
	    "trc_pkt_lister -src_name ETB_2's elements");
	atf_tc_set_md_var(tc, "timeout", "120");
}
ATF_TC_BODY(ete_second_buffer, tc)
{
	static const struct {
		const char	*name;
		size_t		min, minranges;
	} snaps[] = { { "s_9001", 150, 150 }, { "ete-wfet", 0, 0 } };
	char cmd[2048], snap[1100], ppl[64];
	size_t i;

	HWTR_REQUIRE_CORPUS("opencsd/snapshots/s_9001");
	HWTR_REQUIRE_CORPUS("opencsd/snapshots/ete-wfet");
	need_lister();
	for (i = 0; i < sizeof(snaps) / sizeof(snaps[0]); i++) {
		snprintf(snap, sizeof(snap), "%s/opencsd/snapshots/%s",
		    HWTR_TEST_CORPUS, snaps[i].name);
		snprintf(ppl, sizeof(ppl), "%s-2.ppl", snaps[i].name);
		snprintf(cmd, sizeof(cmd), "trc_pkt_lister -ss_dir '%s' "
		    "-src_name ETB_2 -decode -no_time_print > '%s' 2>&1",
		    snap, ppl);
		ATF_REQUIRE(system(cmd) == 0);
		snprintf(cmd, sizeof(cmd), "grep -q '^Using ETB_2 as trace "
		    "source' '%s' && grep -q 'Protocol printer ETE' '%s'", ppl,
		    ppl);
		ATF_REQUIRE_MSG(system(cmd) == 0, "%s: trc_pkt_lister did not "
		    "decode ETB_2 as ETE", snaps[i].name);
		check_against(snaps[i].name, snap, ppl, snaps[i].min,
		    snaps[i].minranges);
	}
}

/*
 * ETE's instrumentation packet (ITE, header 0x09, an EL byte and 8 bytes
 * of payload) has no trace: make a copy of tme_simple with one after its
 * TRACE_ON packet, and the trace's start (A-sync, TRACE_INFO, TRACE_ON)
 * again after it.  OpenCSD 1.3.3 does not know the packet (a reserved
 * header to it): the decoder loses sync and finds it again at that
 * A-sync.  hwtrace must decode the copy as trc_pkt_lister does, loss
 * included.
 */
ATF_TC(ete_ite_as_trc_pkt_lister);
ATF_TC_HEAD(ete_ite_as_trc_pkt_lister, tc)
{
	atf_tc_set_md_var(tc, "descr", "an ETE trace with an instrumentation "
	    "(ITE) packet decodes to trc_pkt_lister's elements per trace ID, "
	    "the loss of sync it causes included");
	atf_tc_set_md_var(tc, "timeout", "120");
}
ATF_TC_BODY(ete_ite_as_trc_pkt_lister, tc)
{
	static const uint8_t ite[10] = { 0x09, 0x01, 1, 2, 3, 4, 5, 6, 7, 8 };
	uint8_t buf[4096];
	size_t n;
	FILE *f;

	HWTR_REQUIRE_CORPUS("opencsd/snapshots/tme_simple");
	need_lister();
	snap_copy("tme_simple", "ite", "chmod -R u+w ite");
	ATF_REQUIRE((f = fopen("ite/session1.bin", "rb")) != NULL);
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	/* An A-sync (12 bytes), TRACE_INFO (2), TRACE_ON (0x04) first. */
	ATF_REQUIRE_MSG(n > 15 && n < sizeof(buf) && buf[14] == 0x04,
	    "tme_simple's trace does not start as expected");
	ATF_REQUIRE((f = fopen("ite/session1.bin", "wb")) != NULL);
	ATF_REQUIRE(fwrite(buf, 1, 15, f) == 15);
	ATF_REQUIRE(fwrite(ite, 1, sizeof(ite), f) == sizeof(ite));
	ATF_REQUIRE(fwrite(buf, 1, n, f) == n);
	ATF_REQUIRE(fclose(f) == 0);
	ATF_REQUIRE(system("trc_pkt_lister -ss_dir ite -decode "
	    "-no_time_print > ite.ppl 2>&1") == 0);
	ATF_REQUIRE_MSG(system("grep -q 'Protocol printer ETE' ite.ppl && "
	    "grep -q 'NO_SYNC( \\[bad-packet\\])' ite.ppl") == 0,
	    "trc_pkt_lister did not lose sync at the ITE packet");
	check_against("ite", "ite", "ite.ppl", 40, 40);
}

/*
 * DSTREAM framing: a55-test-tpiu is the corpus's DSTREAM capture (512-byte
 * blocks, frame syncs, an 8-byte footer per block); its expected output
 * lists packets only, so trc_pkt_lister -dstream_format -decode is run
 * here for the elements.  The snapshot has no memory dump: every element
 * is an inaccessible address, which is what it must agree on.
 */
ATF_TC(dstream_as_trc_pkt_lister);
ATF_TC_HEAD(dstream_as_trc_pkt_lister, tc)
{
	atf_tc_set_md_var(tc, "descr", "the DSTREAM-framed snapshot decodes "
	    "to trc_pkt_lister -dstream_format's elements per trace ID");
	atf_tc_set_md_var(tc, "timeout", "120");
}
ATF_TC_BODY(dstream_as_trc_pkt_lister, tc)
{
	char cmd[2048], snap[1100];

	HWTR_REQUIRE_CORPUS("opencsd/snapshots/a55-test-tpiu");
	need_lister();
	snprintf(snap, sizeof(snap), "%s/opencsd/snapshots/a55-test-tpiu",
	    HWTR_TEST_CORPUS);
	snprintf(cmd, sizeof(cmd), "trc_pkt_lister -ss_dir '%s' "
	    "-dstream_format -decode -no_time_print > a55.ppl 2>&1", snap);
	ATF_REQUIRE(system(cmd) == 0);
	check_against("a55", snap, "a55.ppl", 10, 0);
}

/*
 * TPIU framing: the corpus has no TPIU capture, so make one: juno_r1_1's
 * memory-aligned ETB buffer with a frame sync (ff ff ff 7f) before every
 * fourth 16-byte frame, as a TPIU inserts them, declared "tpiu" in
 * trace.ini (its STM buffer dropped).  trc_pkt_lister -tpiu decodes the
 * same copy for the reference.
 */
ATF_TC(tpiu_as_trc_pkt_lister);
ATF_TC_HEAD(tpiu_as_trc_pkt_lister, tc)
{
	atf_tc_set_md_var(tc, "descr", "an ETB buffer with TPIU frame syncs "
	    "decodes to trc_pkt_lister -tpiu's ranges per trace ID");
	atf_tc_set_md_var(tc, "timeout", "120");
}
ATF_TC_BODY(tpiu_as_trc_pkt_lister, tc)
{
	static const uint8_t fsync[4] = { 0xff, 0xff, 0xff, 0x7f };
	uint8_t frame[16];
	size_t n, k = 0;
	FILE *in, *out;

	HWTR_REQUIRE_CORPUS("opencsd/snapshots/juno_r1_1");
	need_lister();
	snap_copy("juno_r1_1", "tpiu", "sed -i -e "
	    "'0,/^format=coresight$/s//format=tpiu/' -e "
	    "'s/^buffers=buffer0,buffer1$/buffers=buffer0/' -e "
	    "'/^STM_12=ETB_1$/d' tpiu/trace.ini && grep -q '^format=tpiu$' "
	    "tpiu/trace.ini && ! grep -q '^STM_12=' tpiu/trace.ini");
	ATF_REQUIRE((in = fopen("tpiu/cstrace.bin", "rb")) != NULL);
	ATF_REQUIRE((out = fopen("tpiu/cstrace.tpiu", "wb")) != NULL);
	while ((n = fread(frame, 1, sizeof(frame), in)) > 0) {
		if (k++ % 4 == 0)
			ATF_REQUIRE(fwrite(fsync, 1, 4, out) == 4);
		ATF_REQUIRE(fwrite(frame, 1, n, out) == n);
	}
	ATF_REQUIRE(k > 1000);
	fclose(in);
	ATF_REQUIRE(fclose(out) == 0);
	ATF_REQUIRE(rename("tpiu/cstrace.tpiu", "tpiu/cstrace.bin") == 0);
	ATF_REQUIRE(system("trc_pkt_lister -ss_dir tpiu -tpiu -decode "
	    "-no_time_print > tpiu.ppl 2>&1") == 0);
	check_against("tpiu", "tpiu", "tpiu.ppl", 1000, 1000);
	ATF_REQUIRE(system("'" HWTR_TEST_HWTRACE "' info tpiu.hwtrace | "
	    "grep -q 'coresight: frame tpiu'") == 0);
}

/*
 * The cycle counts trc_pkt_lister printed ("[CC=n]" on any element), per
 * trace ID in order, each as "seq=S insn=I cc=N element": S and I are
 * the ranges and their instructions before the element, so that a
 * range's own count is at that range's position, as hwtrace-db(5) says
 * of the cycles table.  Returns how many, or -1 without the file.
 */
static long
expected_cc(const char *ppl, struct lines *l)
{
	static const char *const names[][2] = {
		{ "INSTR_RANGE", "range" },
		{ "CYCLE_COUNT", "cycle-count" },
		{ "TIMESTAMP", "timestamp" },
		{ "TRACE_ON", "trace-on" },
		{ "PE_CONTEXT", "pe-context" },
		{ "EXCEPTION", "exception" },
		{ "ADDR_UNKNOWN", "address-unknown" },
	};
	static uint64_t nr[256], ni[256];
	char path[1024], buf[4096], s[96];
	const char *p, *el;
	unsigned id, n, cc;
	long total = 0;
	size_t k;
	FILE *f;

	memset(nr, 0, sizeof(nr));
	memset(ni, 0, sizeof(ni));
	if ((f = ppl_open(ppl, path, sizeof(path))) == NULL)
		return (-1);
	while (fgets(buf, sizeof(buf), f) != NULL) {
		if (strncmp(buf, "Idx:", 4) != 0 ||
		    (p = strstr(buf, "; ID:")) == NULL ||
		    sscanf(p, "; ID:%x;", &id) != 1 || id > 255 ||
		    (p = strstr(buf, "OCSD_GEN_TRC_ELEM_")) == NULL)
			continue;
		p += strlen("OCSD_GEN_TRC_ELEM_");
		el = "other";
		for (k = 0; k < sizeof(names) / sizeof(names[0]); k++)
			if (strncmp(p, names[k][0], strlen(names[k][0])) == 0 &&
			    p[strlen(names[k][0])] == '(')
				el = names[k][1];
		if (strstr(p, "[CC=") != NULL) {
			cc = (unsigned)num_after(path, buf, p, "[CC=", 10);
			snprintf(s, sizeof(s), "seq=%" PRIu64 " insn=%" PRIu64
			    " cc=%u %s", nr[id], ni[id], cc, el);
			lines_add(l, id, s);
			total++;
		}
		if (strcmp(el, "range") == 0) {
			n = (unsigned)num_after(path, buf, p, "num_i(", 10);
			nr[id]++;
			ni[id] += n;
		}
	}
	pclose(f);
	return (total);
}

/* The cycles rows of database @db, per trace ID as expected_cc() has them. */
static void
db_cc(const char *db, struct lines *l)
{
	sqlite3 *h;
	sqlite3_stmt *st;
	char s[96];
	unsigned id;
	int rc;

	ATF_REQUIRE_MSG(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) ==
	    SQLITE_OK, "cannot open %s", db);
	rc = sqlite3_prepare_v2(h, "SELECT t.name, c.seq, c.insn, c.count, "
	    "c.element FROM cycles c JOIN threads t ON t.id = c.thread "
	    "ORDER BY c.id", -1, &st, NULL);
	ATF_REQUIRE_MSG(rc == SQLITE_OK, "%s: %s", db, sqlite3_errmsg(h));
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);

		ATF_REQUIRE_MSG(name != NULL && sscanf(name, "trace ID 0x%x",
		    &id) == 1, "%s: a cycles row of thread '%s', not a trace "
		    "ID's", db, name ? name : "(null)");
		snprintf(s, sizeof(s), "seq=%lld insn=%lld cc=%lld %s",
		    (long long)sqlite3_column_int64(st, 1),
		    (long long)sqlite3_column_int64(st, 2),
		    (long long)sqlite3_column_int64(st, 3),
		    (const char *)sqlite3_column_text(st, 4));
		lines_add(l, id, s);
	}
	ATF_REQUIRE_MSG(rc == SQLITE_DONE, "%s: %s", db, sqlite3_errmsg(h));
	sqlite3_finalize(st);
	sqlite3_close(h);
}

/*
 * One snapshot's cycle counts against trc_pkt_lister's: the cycles table
 * of hwtrace index's database as the expected output's output has them.
 */
static enum snap_result
snap_cycles(struct snap *s)
{
	char cmd[2800];
	size_t nranges;
	long n;

	if ((n = expected_cc(s->ppl, &s->want)) <= 0) {
		printf("%s: skipped: %s\n", s->name, n < 0 ? "no expected "
		    "output" : "no cycle counts in the expected output");
		return (SNAP_SKIP);
	}
	snprintf(cmd, sizeof(cmd), "'%s' import '%s/%s' -o cc.hwtrace && "
	    "'%s' index -q -o cc.db cc.hwtrace", HWTR_TEST_HWTRACE, s->dir,
	    s->name, HWTR_TEST_HWTRACE);
	if (system(cmd) != 0)
		atf_tc_fail("%s: '%s' failed", s->name, cmd);
	db_cc("cc.db", &s->got);
	if (compare(&s->want, &s->got, s->why, sizeof(s->why), &nranges) < 0)
		return (SNAP_FAIL);
	printf("%s: pass (%ld cycle counts)\n", s->name, n);
	return (SNAP_PASS);
}

ATF_TC(cycle_counts);
ATF_TC_HEAD(cycle_counts, tc)
{
	atf_tc_set_md_var(tc, "descr", "for every snapshot whose expected "
	    "output has cycle counts, the cycles table of hwtrace index's "
	    "database holds trc_pkt_lister's counts per trace ID, in order, "
	    "with their elements at the positions of their ranges");
	atf_tc_set_md_var(tc, "timeout", "300");
}

ATF_TC_BODY(cycle_counts, tc)
{
	each_snapshot(snap_cycles, 2, "the corpus's snapshots with cycle "
	    "counts (TC2, Snowball)");
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, cycle_counts);
	ATF_TP_ADD_TC(tp, snapshots);
	ATF_TP_ADD_TC(tp, ete_as_trc_pkt_lister);
	ATF_TP_ADD_TC(tp, ete_second_buffer);
	ATF_TP_ADD_TC(tp, ete_ite_as_trc_pkt_lister);
	ATF_TP_ADD_TC(tp, dstream_as_trc_pkt_lister);
	ATF_TP_ADD_TC(tp, tpiu_as_trc_pkt_lister);
	return (atf_no_error());
}
