/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The JIT code of a perf.data file (issue 32): a JIT compiler that writes
 * perf's jitdump (V8 with --perf-prof, the JVM's libperf-jvmti, .NET)
 * maps its jit-PID.dump file executable once, as a marker, so that perf
 * record sees it; perf inject --jit later replaces the marker with one
 * MMAP2 record per code load, naming jitted-PID-N.so files it writes
 * beside the dump.  Either way the recording names the dump.  This file
 * finds each dump before the archive is begun (so a broken one refuses
 * the import before anything is written), and writes it as the member
 * jit/jit-PID.dump (its names) and its code loads as code regions,
 * jit/code-PID.bin (hwtr_jit.h), each valid from its load until a later
 * load or move covers any of its bytes.  The jitted-PID-N.so files hold
 * the very bytes of the loads; when the dump of their process is
 * imported, their mappings are left out of the sideband (see
 * hwtr_perf_jit_skip()) so that the code is in the archive once.
 * A process that mapped anonymous executable memory may have written a
 * perf map instead (node --perf-basic-prof): it is stored as
 * jit/perf-PID.map, its names only.
 */

#include <assert.h>
#include <inttypes.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwtrace.h"
#include "hwtr_common.h"
#include "hwtr_elf.h"
#include "hwtr_import.h"
#include "hwtr_jit.h"
#include "perf_file.h"
#include "perf_record.h"

/* This file's failures, through the importer's formatter (import_perf.c). */
#define pj_err	hwtr_perf_fail

/* Largest jitdump read, and largest code-region member written. */
#define PJ_DUMP_MAX	(1ULL << 30)
#define PJ_CODE_MAX	(1ULL << 30)

/* One code region: a load's bytes at its address from its time. */
struct pj_reg {
	uint64_t	addr, end;	/* [addr, end) */
	uint64_t	from, until;	/* the dump's clock */
	const uint8_t	*bytes;
	uint32_t	len;
	size_t		seq;		/* order in the dump */
};

/* One jitdump read. */
struct pj_dump {
	uint32_t	pid;
	char		*path;
	void		*buf;
	size_t		len;
	struct hwtr_jit_list l;
	struct pj_reg	*reg;
	size_t		nreg;
};

/* One perf map (perf-PID.map) found for a process with anonymous code. */
struct pj_map {
	uint32_t	pid;
	void		*buf;		/* NULL: looked for, not stored */
	size_t		len;
};

struct hwtr_perf_jit {
	struct hwtr_perf_data *pd;
	struct pj_dump	*d;
	size_t		nd, dcap;
	struct pj_map	*map;
	size_t		nmap, mapcap;
	uint32_t	*missing;	/* pids whose dump was not found */
	size_t		nmissing, mcap;
};

static int jitted_pid(const char *, uint32_t *);
static int anon_code(const char *);
static const char *base_name(const char *);
static void beside(const struct hwtr_perf_data *, const char *, char *,
    size_t);

/*
 * Regions of @dm's code loads (and moves, which jitmap.c makes a new
 * symbol at the new address), each ending when a later one overlaps it.
 * The live regions never overlap one another, so a tree ordered by
 * address, where overlapping compares equal, finds each one a new region
 * ends: every region enters and leaves it once.
 */
static int reg_cmp_live(const void *, const void *);
static int reg_cmp_time(const void *, const void *);

static int
make_regions(struct hwtr_perf_jit *j, struct pj_dump *dm, size_t *bigp)
{
	const struct hwtr_jit_sym *s;
	struct pj_reg *r;
	void *root = NULL, *node;
	size_t i;

	*bigp = 0;
	if (dm->l.n == 0)
		return (0);
	if ((dm->reg = calloc(dm->l.n, sizeof(*dm->reg))) == NULL)
		return (pj_err(j->pd, -HWTR_E_NOMEM, "out of memory"));
	for (i = 0; i < dm->l.n; i++) {
		s = &dm->l.v[i];
		if (s->code == NULL || s->size == 0)
			continue;
		if (s->size > HWTR_CODE_MAX_LEN) {
			(*bigp)++;
			continue;
		}
		r = &dm->reg[dm->nreg];
		r->addr = s->start;
		r->end = s->start + s->size;
		r->from = s->timestamp;
		r->until = s->until;
		r->bytes = s->code;
		r->len = (uint32_t)s->size;
		r->seq = dm->nreg++;
	}
	if (dm->nreg > HWTR_CODE_MAX_REGIONS)
		return (pj_err(j->pd, -HWTR_E_LIMIT, "jitdump '%s': %zu code "
		    "loads, more than the %u code regions an archive holds",
		    dm->path, dm->nreg, HWTR_CODE_MAX_REGIONS));
	qsort(dm->reg, dm->nreg, sizeof(*dm->reg), reg_cmp_time);
	for (i = 0; i < dm->nreg; i++) {
		r = &dm->reg[i];
		while ((node = tfind(r, &root, reg_cmp_live)) != NULL) {
			struct pj_reg *old = *(struct pj_reg **)node;

			assert(old != r && old->from <= r->from);
			if (old->until > r->from)
				old->until = r->from;
			tdelete(old, &root, reg_cmp_live);
		}
		if (tsearch(r, &root, reg_cmp_live) == NULL) {
			for (i = 0; i < dm->nreg; i++)
				tdelete(&dm->reg[i], &root, reg_cmp_live);
			return (pj_err(j->pd, -HWTR_E_NOMEM, "out of memory"));
		}
	}
	for (i = 0; i < dm->nreg; i++)
		tdelete(&dm->reg[i], &root, reg_cmp_live);
	assert(root == NULL);
	return (0);
}

/*
 * Read and parse the dump of process @pid named at @recorded: under
 * --symfs, at the recorded path, then beside the perf.data file.  0 when
 * read (or already read), 1 when not found.
 */
static int
read_dump(struct hwtr_perf_jit *j, const struct hwtr_import_opts *o,
    uint32_t pid, const char *recorded)
{
	struct hwtr_perf_data *pd = j->pd;
	struct pj_dump *dm;
	char cand[3][4400], ebuf[HWTR_ERRMSG_MAX];
	size_t i, n = 0, big;
	int rc;

	for (i = 0; i < j->nd; i++)
		if (j->d[i].pid == pid)
			return (0);
	for (i = 0; i < j->nmissing; i++)
		if (j->missing[i] == pid)
			return (1);
	if (o->symfs != NULL && strstr(recorded, "..") == NULL)
		snprintf(cand[n++], sizeof(cand[0]), "%s/%s", o->symfs,
		    recorded);
	if (recorded[0] == '/')
		snprintf(cand[n++], sizeof(cand[0]), "%s", recorded);
	beside(pd, base_name(recorded), cand[n++], sizeof(cand[0]));
	if (hwtr_grow(&j->d, &j->dcap, j->nd + 1, sizeof(*j->d)) < 0)
		return (pj_err(pd, -HWTR_E_NOMEM, "out of memory"));
	dm = &j->d[j->nd];
	memset(dm, 0, sizeof(*dm));
	for (i = 0; i < n; i++)
		if (hwtr_read_file(cand[i], PJ_DUMP_MAX, &dm->buf, &dm->len,
		    ebuf, sizeof(ebuf)) == 0)
			break;
	if (i == n) {
		if (hwtr_grow(&j->missing, &j->mcap, j->nmissing + 1,
		    sizeof(*j->missing)) < 0)
			return (pj_err(pd, -HWTR_E_NOMEM, "out of memory"));
		j->missing[j->nmissing++] = pid;
		return (hwtr_perf_caveat(pd, "process %" PRIu32 ": its "
		    "jitdump '%s' was not found (--symfs, the recorded path, "
		    "beside the perf.data file): its JIT code is not in the "
		    "archive", pid, recorded) < 0 ? -HWTR_E_NOMEM : 1);
	}
	j->nd++;
	dm->pid = pid;
	if ((dm->path = strdup(cand[i])) == NULL)
		return (pj_err(pd, -HWTR_E_NOMEM, "out of memory"));
	if ((rc = hwtr_jit_parse_dump(&dm->l, dm->path, dm->buf, dm->len,
	    ebuf, sizeof(ebuf))) < 0)
		return (pj_err(pd, rc, "jitdump %s", rc == -HWTR_E_NOMEM ?
		    "out of memory" : ebuf));
	if (dm->l.pid != pid)
		return (pj_err(pd, -HWTR_E_FORMAT, "jitdump '%s' is of "
		    "process %" PRIu32 ", the recording maps it in process %"
		    PRIu32, dm->path, dm->l.pid, pid));
	if ((rc = make_regions(j, dm, &big)) < 0)
		return (rc);
	if (big > 0 && hwtr_perf_caveat(pd, "jitdump '%s': %zu code loads "
	    "larger than %u bytes are not stored as code regions", dm->path,
	    big, HWTR_CODE_MAX_LEN) < 0)
		return (pj_err(pd, -HWTR_E_NOMEM, "out of memory"));
	return (0);
}

/*
 * The perf map of process @pid, which ran anonymous code: under --symfs
 * (DIR/tmp/perf-PID.map), beside the perf.data file, then where the
 * runtime wrote it, /tmp (as perf report looks).  One that does not parse
 * is left out with a caveat; none found is not an error (most processes
 * with anonymous code write no map).
 */
static int
read_map(struct hwtr_perf_jit *j, const struct hwtr_import_opts *o,
    uint32_t pid)
{
	struct hwtr_perf_data *pd = j->pd;
	struct hwtr_jit_list l;
	struct pj_map *m;
	char cand[3][4400], ebuf[HWTR_ERRMSG_MAX];
	char name[32];
	size_t i, n = 0;
	int rc;

	for (i = 0; i < j->nmap; i++)
		if (j->map[i].pid == pid)
			return (0);
	if (hwtr_grow(&j->map, &j->mapcap, j->nmap + 1, sizeof(*j->map)) < 0)
		return (pj_err(pd, -HWTR_E_NOMEM, "out of memory"));
	m = &j->map[j->nmap++];
	memset(m, 0, sizeof(*m));
	m->pid = pid;
	if (o->symfs != NULL)
		snprintf(cand[n++], sizeof(cand[0]), "%s/tmp/perf-%" PRIu32
		    ".map", o->symfs, pid);
	snprintf(name, sizeof(name), "perf-%" PRIu32 ".map", pid);
	beside(pd, name, cand[n++], sizeof(cand[0]));
	snprintf(cand[n++], sizeof(cand[0]), "/tmp/perf-%" PRIu32 ".map", pid);
	for (i = 0; i < n; i++)
		if (hwtr_read_file(cand[i], HWTR_AR_MEM_MAX, &m->buf, &m->len,
		    ebuf, sizeof(ebuf)) == 0)
			break;
	if (i == n)
		return (0);
	memset(&l, 0, sizeof(l));
	rc = hwtr_jit_parse_map(&l, cand[i], m->buf, m->len, ebuf,
	    sizeof(ebuf));
	hwtr_jit_list_free(&l);
	if (rc == -HWTR_E_NOMEM)
		return (pj_err(pd, rc, "out of memory"));
	if (rc < 0) {
		free(m->buf);
		m->buf = NULL;
		if (hwtr_perf_caveat(pd, "process %" PRIu32 ": perf map left "
		    "out: %s", pid, ebuf) < 0)
			return (pj_err(pd, -HWTR_E_NOMEM, "out of memory"));
	}
	return (0);
}

int
hwtr_perf_jit_find(struct hwtr_perf_data *pd,
    const struct hwtr_import_opts *o, const struct hwtr_perf_jit_clock *clk,
    struct hwtr_perf_jit **jp)
{
	struct hwtr_perf_jit *j;
	struct hwtr_perf_rec pr;
	const char *b;
	char dump[4400];
	uint32_t pid;
	size_t i;
	int rc = 0;

	*jp = NULL;
	if ((j = calloc(1, sizeof(*j))) == NULL)
		return (pj_err(pd, -HWTR_E_NOMEM, "out of memory"));
	j->pd = pd;
	for (i = 0; i < pd->nsb && rc >= 0; i++) {
		const uint8_t *p = pd->buf + pd->sb[i].file_off;
		size_t room = pd->data_end - pd->sb[i].file_off;

		if (hwtr_perf_rec_parse(p, room, hwtr_perf_layout(pd, p,
		    room), &pr, NULL, 0) < 0 || (pr.type != HWTR_PERF_MMAP &&
		    pr.type != HWTR_PERF_MMAP2))
			continue;
		b = base_name(pr.u.mmap.filename);
		if (anon_code(pr.u.mmap.filename)) {
			rc = read_map(j, o, pr.u.mmap.pid);
		} else if (strncmp(b, "jit-", 4) == 0 && hwtr_jit_name_ok(b)) {
			/* The marker: the agent's own mapping of the dump. */
			rc = read_dump(j, o, pr.u.mmap.pid, pr.u.mmap.filename);
		} else if (jitted_pid(b, &pid) && pid == pr.u.mmap.pid) {
			/* perf inject --jit writes the .so beside the dump. */
			snprintf(dump, sizeof(dump), "%.*sjit-%" PRIu32 ".dump",
			    (int)(b - pr.u.mmap.filename), pr.u.mmap.filename,
			    pid);
			rc = read_dump(j, o, pid, dump);
		}
	}
	for (i = 0; i < j->nd && rc >= 0; i++)
		if ((j->d[i].l.flags & HWTR_JIT_F_ARCH_TIMESTAMP) &&
		    !clk->tsc && !pd->has_tc)
			rc = pj_err(pd, -HWTR_E_FORMAT, "jitdump '%s' has TSC "
			    "timestamps (JITDUMP_FLAGS_ARCH_TIMESTAMP) and the "
			    "recording has no TIME_CONV record to convert them "
			    "to perf clock time (record with -k 1 and an agent "
			    "that writes CLOCK_MONOTONIC times)", j->d[i].path);
	if (rc < 0) {
		hwtr_perf_jit_free(j);
		return (rc);
	}
	*jp = j;
	return (0);
}

int
hwtr_perf_jit_skip(const struct hwtr_perf_jit *j, const char *path)
{
	uint32_t pid;
	size_t i;

	if (j == NULL || !jitted_pid(base_name(path), &pid))
		return (0);
	for (i = 0; i < j->nd; i++)
		if (j->d[i].pid == pid)
			return (1);
	return (0);
}

/* A time of the dump @dm in the archive's clock. */
static uint64_t
arch_time(const struct hwtr_perf_jit *j, const struct pj_dump *dm,
    const struct hwtr_perf_jit_clock *clk, uint64_t t)
{
	const struct hwtr_perf_data *pd = j->pd;
	uint64_t c, quot, rem, ns;

	if (!(dm->l.flags & HWTR_JIT_F_ARCH_TIMESTAMP))
		return (clk->ns(clk->arg, t));
	if (clk->tsc)
		return (clk->tsc_mask != 0 ? t & clk->tsc_mask : t);
	/* perf's tsc_to_perf_time(), with TIME_CONV's short counter. */
	assert(pd->has_tc);
	c = t;
	if (pd->tc_ext && pd->tc_short && pd->tc_mask != 0)
		c = pd->tc_cycles + ((c - pd->tc_cycles) & pd->tc_mask);
	if (pd->tc_shift >= 64)
		return (clk->ns(clk->arg, pd->tc_zero));
	quot = c >> pd->tc_shift;
	rem = c & ((UINT64_C(1) << pd->tc_shift) - 1);
	ns = pd->tc_zero + quot * pd->tc_mult +
	    ((rem * pd->tc_mult) >> pd->tc_shift);
	return (clk->ns(clk->arg, ns));
}

/* jit/code-PID.bin of @dm, regions in address order within time. */
static int
write_code(struct hwtr_perf_jit *j, struct pj_dump *dm, struct hwtr_aw *aw,
    const struct hwtr_perf_jit_clock *clk)
{
	struct pj_reg *r;
	uint64_t total = HWTR_CODE_HDR, from, until;
	uint8_t *buf, *p;
	char name[32];
	size_t i;
	int rc;

	for (i = 0; i < dm->nreg; i++) {
		total += HWTR_CODE_REC + dm->reg[i].len;
		if (total > PJ_CODE_MAX)
			return (pj_err(j->pd, -HWTR_E_LIMIT, "jitdump '%s': "
			    "its code regions pass %llu bytes", dm->path,
			    (unsigned long long)PJ_CODE_MAX));
	}
	if ((buf = malloc((size_t)total)) == NULL)
		return (pj_err(j->pd, -HWTR_E_NOMEM, "out of memory"));
	hwtr_code_put_hdr(buf);
	p = buf + HWTR_CODE_HDR;
	for (i = 0; i < dm->nreg; i++) {
		r = &dm->reg[i];
		from = arch_time(j, dm, clk, r->from);
		until = r->until == UINT64_MAX ? UINT64_MAX :
		    arch_time(j, dm, clk, r->until);
		if (until < from)	/* a wrapped short counter */
			until = from;
		hwtr_code_put_rec(p, r->addr, from, until, r->len);
		memcpy(p + HWTR_CODE_REC, r->bytes, r->len);
		p += HWTR_CODE_REC + r->len;
	}
	assert((uint64_t)(p - buf) == total);
	snprintf(name, sizeof(name), "code-%" PRIu32 ".bin", dm->pid);
	rc = hwtr_aw_add_jit(aw, name, buf, (size_t)total);
	free(buf);
	if (rc < 0)
		return (pj_err(j->pd, rc, "member jit/%s: %s", name,
		    hwtr_aw_errmsg(aw)));
	return (0);
}

int
hwtr_perf_jit_write(struct hwtr_perf_jit *j, struct hwtr_aw *aw,
    const struct hwtr_perf_jit_clock *clk)
{
	struct pj_dump *dm;
	char name[32];
	size_t i;
	int rc;

	for (i = 0; j != NULL && i < j->nmap; i++) {
		if (j->map[i].buf == NULL)
			continue;
		snprintf(name, sizeof(name), "perf-%" PRIu32 ".map",
		    j->map[i].pid);
		if ((rc = hwtr_aw_add_jit(aw, name, j->map[i].buf,
		    j->map[i].len)) < 0)
			return (pj_err(j->pd, rc, "member jit/%s: %s", name,
			    hwtr_aw_errmsg(aw)));
	}
	for (i = 0; j != NULL && i < j->nd; i++) {
		dm = &j->d[i];
		snprintf(name, sizeof(name), "jit-%" PRIu32 ".dump", dm->pid);
		if ((rc = hwtr_aw_add_jit(aw, name, dm->buf, dm->len)) < 0)
			return (pj_err(j->pd, rc, "member jit/%s: %s", name,
			    hwtr_aw_errmsg(aw)));
		if (dm->nreg > 0 && (rc = write_code(j, dm, aw, clk)) < 0)
			return (rc);
	}
	return (0);
}

size_t
hwtr_perf_jit_regions(const struct hwtr_perf_jit *j)
{
	size_t i, n = 0;

	for (i = 0; j != NULL && i < j->nd; i++)
		n += j->d[i].nreg;
	return (n);
}

void
hwtr_perf_jit_free(struct hwtr_perf_jit *j)
{
	size_t i;

	if (j == NULL)
		return;
	for (i = 0; i < j->nd; i++) {
		hwtr_jit_list_free(&j->d[i].l);
		free(j->d[i].reg);
		free(j->d[i].buf);
		free(j->d[i].path);
	}
	free(j->d);
	for (i = 0; i < j->nmap; i++)
		free(j->map[i].buf);
	free(j->map);
	free(j->missing);
	free(j);
}

/* ---- helpers --------------------------------------------------------- */

/* Live regions by address; overlapping ones compare equal. */
static int
reg_cmp_live(const void *a, const void *b)
{
	const struct pj_reg *x = a, *y = b;

	if (x->end <= y->addr)
		return (-1);
	if (x->addr >= y->end)
		return (1);
	return (0);
}

/* Regions by time, then by their order in the dump. */
static int
reg_cmp_time(const void *a, const void *b)
{
	const struct pj_reg *x = a, *y = b;

	if (x->from != y->from)
		return (x->from < y->from ? -1 : 1);
	return (x->seq < y->seq ? -1 : x->seq > y->seq);
}

/* 1 when @b is perf inject's jitted-PID-N.so; the pid in *@pidp. */
static int
jitted_pid(const char *b, uint32_t *pidp)
{
	unsigned long long v;
	size_t n, m;

	if (strncmp(b, "jitted-", 7) != 0)
		return (0);
	for (n = 0; b[7 + n] >= '0' && b[7 + n] <= '9'; n++)
		;
	if (n == 0 || n > 10 || b[7 + n] != '-')
		return (0);
	for (m = 0; b[8 + n + m] >= '0' && b[8 + n + m] <= '9'; m++)
		;
	if (m == 0 || strcmp(b + 8 + n + m, ".so") != 0)
		return (0);
	v = strtoull(b + 7, NULL, 10);
	if (v > UINT32_MAX)
		return (0);
	*pidp = (uint32_t)v;
	return (1);
}

static const char *
base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return (s != NULL ? s + 1 : path);
}

/* A mapping of anonymous memory as perf names it (JIT code lives there). */
static int
anon_code(const char *path)
{
	return (strcmp(path, "//anon") == 0 || strncmp(path, "[anon", 5) == 0 ||
	    strncmp(path, "/memfd:", 7) == 0);
}

/* @name in the directory of the perf.data file, into @buf. */
static void
beside(const struct hwtr_perf_data *pd, const char *name, char *buf,
    size_t len)
{
	const char *slash = strrchr(pd->path, '/');

	snprintf(buf, len, "%.*s%s", slash != NULL ?
	    (int)(slash - pd->path + 1) : 0, pd->path, name);
}
