/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * fpt, the indexer's own Intel PT decoder, against libipt's block decoder
 * as the referee: on every trace the project can reach here (the shared
 * corpus's libipt cases with their code and CPU, ixgen's traces over a
 * fixture program, whole and damaged, step and valgrind captures of a
 * fixture), both decode the same bytes over the same code in ptxed's loop,
 * and their blocks (start, end, instruction count) and events (kind, IP,
 * time) must be equal one by one.  Where fpt meets something it does not
 * handle it must say so (unsupported) and its items until then must be
 * libipt's; the unsupported traces are counted and printed with the
 * reason.
 */

#include <sys/mman.h>
#include <sys/stat.h>

#include <atf-c.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwtrace.h"
#include "hwtr_test.h"
#include "../lib/hwtr_test_fpt.h"

#define NREASON	32

/* A PSB's 16 bytes, for the hand-built traces. */
#define PSB_BYTES \
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, \
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82

/* A PSB+: 64-bit mode, FUP at 0x1000 + @lo (under 0x100), PSBEND. */
#define PSB_PLUS_64(lo) \
	PSB_BYTES, 0x99, 0x01, 0x7d, (lo), 0x10, 0, 0, 0, 0, 0x02, 0x23

struct tally {
	unsigned	traces, equal, unsup, skipped, differ;
	uint64_t	items, insns;
	char		first[1024];
	/* Unsupported, by reason. */
	const char	*reason[NREASON];
	unsigned	nreason[NREASON], nreasons;
	/* Unsupported among the cases fpt must decode whole. */
	unsigned	must, must_unsup;
	char		must_first[512];
};

/*
 * libipt cases (the name before "-ptxed") with what fpt decodes as
 * libipt does, each for every CPU it is run with: unsupported there is a
 * failure.
 */
static const char *const whole_cases[] = {
	"skl014-call", "skl014-jmp",		/* SKL014 */
	"skd022",				/* SKD022 */
	"bdm70-tip_pgd-psb_fup-tip_pge",	/* PSB+ FUP, disabled */
	"psb_nofup-psb",
	/* TraceStop, power events, PTWRITE while tracing is off */
	"exstop_ip-tip_pgd", "fup-tip_pgd-stop", "mwait-pwre-exstop_ip-pwrx",
	"psb-exstop", "ptw", "ptw-fup", "pwre-exstop_ip-pwrx",
	"tip_pgd-exstop-tip_pge", "tip_pgd-psb-stop", "tip_pgd-stop",
	"tip_pge-exstop", "tip_pge-pwre-pwrx-tip_pgd",
	/* MODE.TSX outside PSB+ */
	"psb-tsx_abort", "psb-tsx_abort-tip-fup-tip_pgd",
	"psb-tsx_abort-tip_pgd", "tip_pgd-tsx",
	"tip_pge-tsx_abort-tip-fup-tip_pgd", "tip_pge-tsx_abort-tip_pgd",
	"tsx-abort", "tsx-commit", "bdm64-tip-xabort",
	/* OVF, resolved with tracing on and off */
	"ovf", "ovf-mnt-fup", "ovf-mnt-tip_pge", "ovf-pwre-pwrx-tip_pge",
	"mwait-pwre-exstop_ip-fup-ovf", "mwait-pwre-exstop_ip-ovf",
	/* PIP, VMCS, MNT in PSB+ and while tracing is off */
	"psb-pip-psb", "psb-pip-tip_pge", "psb-mnt-fup-psbend",
	/* PIP and VMCS while tracing: bound to an instruction */
	"pip-far_call", "pip-pip_mov_cr3-fail", "pip_mov_cr3-pip_mov_cr3",
	"vmcs-far_call",
	NULL
};

static int
must_whole(const char *name)
{
	size_t i, n;

	for (i = 0; whole_cases[i] != NULL; i++) {
		n = strlen(whole_cases[i]);
		if (strncmp(name, whole_cases[i], n) == 0 &&
		    strncmp(name + n, "-ptxed", 6) == 0)
			return (1);
	}
	return (0);
}

static void
count_reason(struct tally *t, const char *why)
{
	unsigned i;

	for (i = 0; i < t->nreasons; i++)
		if (strcmp(t->reason[i], why) == 0)
			break;
	if (i == t->nreasons) {
		if (t->nreasons == NREASON)
			return;
		t->reason[t->nreasons++] = why;
	}
	t->nreason[i]++;
}

/*
 * Blocks taken through fpt_run_rest() and fpt_run_take() (the
 * indexer's loop, segfast.c) rather than fpt_next() alone, when set:
 * how many, and the runs' rests checked against what their memo
 * promises: it stays while the run gives the same blocks.
 */
static int use_rest;
static uint64_t rest_taken, rest_checked;

/* A block's print in a memo. */
static uint32_t
rest_print(const struct fpt_block *b)
{
	return ((uint32_t)(b->ip ^ b->end_ip ^ b->ninsn ^
	    ((uint64_t)b->isid << 20) ^ (b->ip >> 32)));
}

/* An item of fpt's block @b, as tf_run_fpt() records it. */
static void
rest_add(struct tf_items *l, const struct fpt_block *b)
{
	struct fpt_item it;

	memset(&it, 0, sizeof(it));
	it.kind = FPT_ITEM_BLOCK;
	it.block = *b;
	tf_add(l, &it);
}

/*
 * The rest of a run: its memo new (zero), the blocks' prints kept in
 * it; or kept for these blocks, the same prints.
 */
static void
rest_check(struct fpt_memo *m, const struct fpt_block *rb, size_t n)
{
	uint32_t p[FPT_MEMO_BYTES / 4];
	size_t i, k;

	if (m->rb == NULL) {
		ATF_REQUIRE_MSG(m->n == 0 && m->len == 0 && m->tag == 0,
		    "a run's memo is not zero the first time");
		if (n > FPT_MEMO_BYTES / 4)
			return;
		for (i = 0; i < n; i++)
			p[i] = rest_print(&rb[i]);
		memcpy(m->bytes, p, n * 4);
		m->rb = rb;
		m->n = (uint8_t)n;
		return;
	}
	ATF_REQUIRE_MSG(rb >= m->rb && rb < m->rb + m->n,
	    "a run's memo kept for another run's blocks");
	k = (size_t)(rb - m->rb);
	ATF_REQUIRE_MSG(n == m->n - k, "a run with %zu blocks left, %zu "
	    "before", n, m->n - k);
	memcpy(p, m->bytes, m->n * 4);
	for (i = 0; i < n; i++)
		ATF_REQUIRE_MSG(rest_print(&rb[i]) == p[k + i],
		    "a run's block %zu is not as its memo has it", k + i);
	rest_checked++;
}

/*
 * After each item of tf_run_fpt_with(): a block's run, its rest taken 1,
 * 2, 3 ... blocks at a time (*@arg counts the steps).
 */
static int
take_rest(struct fpt *d, struct tf_items *l, const struct fpt_item *it,
    void *arg)
{
	const struct fpt_block *rb;
	struct fpt_memo *m;
	size_t *step = arg, n, k, i;

	while (it->kind == FPT_ITEM_BLOCK &&
	    (n = fpt_run_rest(d, &rb, &m)) > 0) {
		rest_check(m, rb, n);
		k = 1 + (*step)++ % n;
		for (i = 0; i < k; i++)
			rest_add(l, &rb[i]);
		fpt_run_take(d, k);
		rest_taken += k;
		if (l->capped)
			return (1);
	}
	return (0);
}

/* tf_run_fpt(), a run's rest taken as segfast.c takes it. */
static void
run_fpt_rest(struct fpt *d, struct tf_items *l)
{
	size_t step = 0;

	tf_run_fpt_with(d, l, take_rest, &step);
}

/*
 * Decode @pt with both decoders over @im; count the outcome in @t.
 * @what names the trace in messages.
 */
static void
diff_one(const char *what, const uint8_t *pt, size_t len,
    const struct tf_img *im, const struct pt_config *base,
    const struct fpt_config *fbase, struct tally *t)
{
	struct pt_config cfg = *base;
	struct fpt_config fc = *fbase;
	struct pt_block_decoder *bd;
	struct pt_image *img;
	struct fpt *f;
	struct tf_items want, got;
	const char *dump;
	char msg[512];

	memset(&want, 0, sizeof(want));
	memset(&got, 0, sizeof(got));
	/* Code that loops without trace gives blocks for ever. */
	want.max = got.max = 4000000;
	want.max_insns = got.max_insns = 100000000;
	cfg.begin = (uint8_t *)(uintptr_t)pt;
	cfg.end = (uint8_t *)(uintptr_t)pt + len;
	fc.begin = pt;
	fc.end = pt + len;
	fc.read_code = tf_read_code;
	fc.ctx = (void *)(uintptr_t)im;
	ATF_REQUIRE_MSG((img = tf_pt_image(im)) != NULL, "%s: libipt image",
	    what);
	ATF_REQUIRE_MSG((bd = pt_blk_alloc_decoder(&cfg)) != NULL,
	    "%s: libipt decoder", what);
	ATF_REQUIRE(pt_blk_set_image(bd, img) == 0);
	tf_run_libipt(bd, &want);
	pt_blk_free_decoder(bd);
	pt_image_free(img);
	ATF_REQUIRE_MSG(fpt_new(&f, &fc) == 0, "%s: fpt_new", what);
	if (use_rest)
		run_fpt_rest(f, &got);
	else
		tf_run_fpt(f, &got);
	fpt_free(f);

	t->traces++;
	if ((dump = getenv("T_FPT_DUMP")) != NULL &&
	    strstr(what, dump) != NULL) {
		size_t i;
		char a[160];

		for (i = 0; i < want.n || i < got.n; i++) {
			tf_fmt(i < want.n ? &want.v[i] : NULL, a, sizeof(a));
			printf("%zu libipt %s\n", i, a);
			tf_fmt(i < got.n ? &got.v[i] : NULL, a, sizeof(a));
			printf("%zu fpt    %s\n", i, a);
		}
	}
	if (tf_compare(&want, &got, msg, sizeof(msg)) != 0) {
		t->differ++;
		printf("%s: DIFFERS: %s\n", what, msg);
		if (t->first[0] == '\0')
			snprintf(t->first, sizeof(t->first), "%s: %s", what,
			    msg);
	} else if (got.unsup != NULL) {
		t->unsup++;
		count_reason(t, got.unsup);
		if (must_whole(what) && t->must_unsup++ == 0)
			snprintf(t->must_first, sizeof(t->must_first),
			    "%s: %s", what, got.unsup);
		printf("%s: unsupported at offset %#" PRIx64 " after %zu of "
		    "%zu items: %s\n", what, got.unsup_off, got.n, want.n,
		    got.unsup);
	} else
		t->equal++;
	if (must_whole(what))
		t->must++;
	t->items += got.n;
	t->insns += got.insns;
	tf_items_free(&want);
	tf_items_free(&got);
}

/*
 * One ptxed command line of a libipt case: its --raw images, --pt, --cpu
 * and filter.  Returns 0, or -1 (with @why) for commands whose options
 * change what is decoded beyond what the indexer uses (sideband, block
 * flags, tick events).
 */
static int
diff_cmd(const char *dir, const char *name, char *line, struct tally *t,
    const char **why)
{
	struct tf_img *im;
	struct pt_config cfg;
	struct fpt_config fc;
	char *tok, *save = NULL, *pt = NULL, path[2048];
	uint8_t *files[8], *trace;
	size_t nf = 0, len, flen, i;
	int rc = -1;

	im = calloc(1, sizeof(*im));
	ATF_REQUIRE(im != NULL);
	pt_config_init(&cfg);
	memset(&fc, 0, sizeof(fc));
	*why = NULL;
	for (tok = strtok_r(line, " \t\n", &save); tok != NULL;
	    tok = strtok_r(NULL, " \t\n", &save)) {
		if (strcmp(tok, "--raw") == 0) {
			char *arg = strtok_r(NULL, " \t\n", &save), *c1, *c2;
			uint64_t from = 0, to = 0, addr;

			if (arg == NULL || nf == 8 ||
			    (c1 = strchr(arg, ':')) == NULL) {
				*why = "a --raw this test cannot read";
				goto out;
			}
			*c1++ = '\0';
			if ((c2 = strchr(c1, ':')) != NULL) {
				char *dash;

				*c2++ = '\0';
				from = strtoull(c1, &dash, 0);
				if (*dash == '-')
					to = strtoull(dash + 1, NULL, 0);
				addr = strtoull(c2, NULL, 0);
			} else
				addr = strtoull(c1, NULL, 0);
			snprintf(path, sizeof(path), "%s/%s", dir, arg);
			if ((files[nf] = tf_slurp(path, &flen)) == NULL) {
				*why = "a --raw file is missing";
				goto out;
			}
			if (to == 0 || to > flen)
				to = flen;
			ATF_REQUIRE(tf_img_add(im, strdup(path), files[nf],
			    from, to - from, addr) == 0);
			nf++;
		} else if (strcmp(tok, "--pt") == 0) {
			tok = strtok_r(NULL, " \t\n", &save);
			if (tok == NULL)
				goto out;
			free(pt);
			if (asprintf(&pt, "%s/%s", dir, tok) < 0)
				goto out;
		} else if (strcmp(tok, "--cpu") == 0) {
			unsigned f = 0, m = 0, s = 0;

			tok = strtok_r(NULL, " \t\n", &save);
			if (tok == NULL || sscanf(tok, "%u/%u/%u", &f, &m,
			    &s) < 2) {
				*why = "a --cpu this test cannot read";
				goto out;
			}
			cfg.cpu.vendor = pcv_intel;
			cfg.cpu.family = (uint16_t)f;
			cfg.cpu.model = (uint8_t)m;
			cfg.cpu.stepping = (uint8_t)s;
			pt_cpu_errata(&cfg.errata, &cfg.cpu);
			fc.intel = 1;
			fc.family = (uint16_t)f;
			fc.model = (uint8_t)m;
			fc.stepping = (uint8_t)s;
		} else if (strncmp(tok, "--filter:addr0_", 15) == 0) {
			char *arg = strtok_r(NULL, " \t\n", &save);
			uint64_t v = arg != NULL ? strtoull(arg, NULL, 0) : 0;

			if (strcmp(tok + 15, "cfg") == 0) {
				cfg.addr_filter.config.addr_cfg = v & 0xf;
				fc.filtering = v != 0;
				fc.filter_cfg[0] = (uint8_t)(v & 0xf);
			} else if (strcmp(tok + 15, "a") == 0) {
				cfg.addr_filter.addr0_a = v;
				fc.filter_a[0] = v;
			} else {
				cfg.addr_filter.addr0_b = v;
				fc.filter_b[0] = v;
			}
		} else if (strcmp(tok, "--nom-freq") == 0) {
			tok = strtok_r(NULL, " \t\n", &save);
			cfg.nom_freq = (uint8_t)(tok ? atoi(tok) : 0);
		} else if (strncmp(tok, "--pevent", 8) == 0 ||
		    strncmp(tok, "--sb", 4) == 0 ||
		    strncmp(tok, "--block:end-on", 14) == 0 ||
		    strcmp(tok, "--event:tick") == 0) {
			*why = "sideband, block or tick options the indexer "
			    "does not use";
			goto out;
		}
	}
	if (pt == NULL || (trace = tf_slurp(pt, &len)) == NULL) {
		*why = "no trace";
		goto out;
	}
	diff_one(name, trace, len, im, &cfg, &fc, t);
	free(trace);
	rc = 0;
out:
	for (i = 0; i < im->n; i++)
		free((char *)(uintptr_t)im->sec[i].path);
	for (i = 0; i < nf; i++)
		free(files[i]);
	free(im);
	free(pt);
	return (rc);
}

static void
report(const char *what, const struct tally *t)
{
	unsigned i;

	printf("%s: %u traces: %u equal, %u unsupported, %u differ, %u "
	    "skipped; %" PRIu64 " items, %" PRIu64 " instructions "
	    "compared\n", what, t->traces, t->equal, t->unsup, t->differ,
	    t->skipped, t->items, t->insns);
	for (i = 0; i < t->nreasons; i++)
		printf("%s: unsupported %u times: %s\n", what, t->nreason[i],
		    t->reason[i]);
	fflush(stdout);
}

ATF_TC_WITHOUT_HEAD(libipt_corpus);
ATF_TC_BODY(libipt_corpus, tc)
{
	const char *root = HWTR_TEST_CORPUS "/libipt-ptt";
	struct tally t;
	struct dirent *de, *fe;
	DIR *dp, *fdp;
	char dir[1024], path[2048], line[4096], name[1200];
	const char *why;

	HWTR_REQUIRE_CORPUS("libipt-ptt");
	memset(&t, 0, sizeof(t));
	ATF_REQUIRE((dp = opendir(root)) != NULL);
	while ((de = readdir(dp)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(dir, sizeof(dir), "%s/%s", root, de->d_name);
		if ((fdp = opendir(dir)) == NULL)
			continue;
		while ((fe = readdir(fdp)) != NULL) {
			FILE *fp;
			size_t n = strlen(fe->d_name);

			if (strstr(fe->d_name, "-ptxed") == NULL || n < 4 ||
			    strcmp(fe->d_name + n - 4, ".cmd") != 0)
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, fe->d_name);
			if ((fp = fopen(path, "r")) == NULL)
				continue;
			if (fgets(line, sizeof(line), fp) != NULL) {
				snprintf(name, sizeof(name), "%s", fe->d_name);
				if (diff_cmd(dir, name, line, &t, &why) < 0) {
					t.skipped++;
					printf("%s: skipped: %s\n", name, why);
				}
			}
			fclose(fp);
		}
		closedir(fdp);
	}
	closedir(dp);
	report("libipt corpus", &t);
	if (t.differ > 0)
		atf_tc_fail("%u of %u traces differ from libipt; first: %s",
		    t.differ, t.traces, t.first);
	ATF_CHECK_MSG(t.must > 0, "none of the cases fpt must decode whole "
	    "was found");
	ATF_CHECK_MSG(t.must_unsup == 0, "%u of %u cases fpt must decode "
	    "whole were unsupported, expected none; first: %s", t.must_unsup,
	    t.must, t.must_first);
	ATF_CHECK_MSG(t.equal > 0, "no libipt case was decoded whole by fpt "
	    "(expected some)");
}

struct arctx {
	const char	*path;
	struct tally	*t;
};

static void
diff_stream(void *ctx, size_t s, const uint8_t *buf, size_t len,
    struct tf_img *im, struct pt_config *cfg, struct fpt_config *fc)
{
	struct arctx *a = ctx;
	char what[1200];

	snprintf(what, sizeof(what), "%s stream %zu", a->path, s);
	diff_one(what, buf, len, im, cfg, fc, a->t);
}

/*
 * Every Intel PT stream of archive @path, with the images its sideband
 * maps into the stream's process, as ixbare -a and the indexer set them
 * up (one image per stream, mappings in sideband order).
 */
static void
diff_archive(const char *path, struct tally *t)
{
	struct arctx a = { path, t };
	char err[256];

	if (tf_archive_each(path, ".", diff_stream, &a, err, sizeof(err)) < 0)
		atf_tc_fail("%s: %s", path, err);
}

static void
check(const char *what, const struct tally *t, int want_whole)
{
	report(what, t);
	if (t->differ > 0)
		atf_tc_fail("%u of %u streams differ from libipt; first: %s",
		    t->differ, t->traces, t->first);
	ATF_REQUIRE_MSG(t->traces > 0, "%s: no Intel PT stream", what);
	if (want_whole)
		ATF_CHECK_MSG(t->unsup == 0, "%s: %u of %u streams "
		    "unsupported by fpt, expected none", what, t->unsup,
		    t->traces);
}

/* Run @cmd (through sh); skip the case with @what when it fails. */
static void
run_or_skip(const char *cmd, const char *what)
{
	if (system(cmd) != 0)
		atf_tc_skip("%s unavailable: %s", what, cmd);
}

static void
ixgen_case(const char *opts, int want_whole)
{
	char cmd[2048];
	struct tally t;
	struct stat st;

	if (stat(HWTR_TEST_BUILD "/bench/ixgen", &st) != 0 ||
	    stat(HWTR_TEST_PROGS "/calls", &st) != 0)
		atf_tc_skip("ixgen or the calls fixture is not built");
	snprintf(cmd, sizeof(cmd), "%s/bench/ixgen %s %s/calls g.hwtrace",
	    HWTR_TEST_BUILD, opts, HWTR_TEST_PROGS);
	ATF_REQUIRE_MSG(system(cmd) == 0, "ixgen failed: %s", cmd);
	memset(&t, 0, sizeof(t));
	diff_archive("g.hwtrace", &t);
	check(opts, &t, want_whole);
}

ATF_TC_WITHOUT_HEAD(ixgen_whole);
ATF_TC_BODY(ixgen_whole, tc)
{
	ixgen_case("-n 300000 -t 3 -s 7", 1);
}

/*
 * The blocks of memoized runs taken as the indexer takes them
 * (fpt_run_rest(), fpt_run_take()): still libipt's, and a run's memo
 * stays with the same blocks.
 */
ATF_TC_WITHOUT_HEAD(run_rest);
ATF_TC_BODY(run_rest, tc)
{
	use_rest = 1;
	ixgen_case("-n 300000 -t 3 -s 7", 1);
	printf("%" PRIu64 " blocks taken from runs' rests, %" PRIu64
	    " rests checked\n", rest_taken, rest_checked);
	/* ixgen's walk, seed 7: 581 blocks, 211 rests checked. */
	ATF_CHECK_MSG(rest_taken > 200 && rest_checked > 50,
	    "few blocks from runs' rests: %" PRIu64 ", %" PRIu64 " checked",
	    rest_taken, rest_checked);
}

ATF_TC_WITHOUT_HEAD(ixgen_flipped);
ATF_TC_BODY(ixgen_flipped, tc)
{
	ixgen_case("-n 200000 -t 2 -s 11 -c flip", 0);
}

ATF_TC_WITHOUT_HEAD(ixgen_garbage);
ATF_TC_BODY(ixgen_garbage, tc)
{
	ixgen_case("-n 200000 -t 2 -s 13 -c garbage", 0);
}

ATF_TC_WITHOUT_HEAD(ixgen_truncated);
ATF_TC_BODY(ixgen_truncated, tc)
{
	ixgen_case("-n 200000 -t 2 -s 17 -c truncate", 0);
}

static void
capture_case(const char *source, const char *prog)
{
	char cmd[2048];
	struct tally t;
	struct stat st;

	if (stat(HWTR_TEST_PROGS, &st) != 0)
		atf_tc_skip("the fixture programs are not built");
	if (strcmp(source, "valgrind") == 0)
		run_or_skip("command -v valgrind >/dev/null 2>&1", "valgrind");
	snprintf(cmd, sizeof(cmd), "%s capture --force --source %s -o c.hwtrace -- "
	    "%s/%s >out 2>err", HWTR_TEST_HWTRACE, source, HWTR_TEST_PROGS,
	    prog);
	run_or_skip(cmd, "capture");
	memset(&t, 0, sizeof(t));
	diff_archive("c.hwtrace", &t);
	check(source, &t, 1);
}

ATF_TC_WITHOUT_HEAD(step_capture);
ATF_TC_BODY(step_capture, tc)
{
	capture_case("step", "calls");
}

ATF_TC_WITHOUT_HEAD(valgrind_capture);
ATF_TC_BODY(valgrind_capture, tc)
{
	capture_case("valgrind", "calls");
}

/* Dynamically linked: several images, libipt's cache cut at each change. */
ATF_TC_WITHOUT_HEAD(step_capture_dynamic);
ATF_TC_BODY(step_capture_dynamic, tc)
{
	capture_case("step", "plt");
}

ATF_TC_WITHOUT_HEAD(valgrind_capture_dynamic);
ATF_TC_BODY(valgrind_capture_dynamic, tc)
{
	capture_case("valgrind", "plt");
}

/*
 * A hand-built trace @pt over @code at @addr (written to code.bin for
 * libipt), that fpt must decode as libipt does: whole with @nitems items,
 * or, with @unsup, handing it to libipt after @nitems items.
 */
static void
handmade_map_as(const char *what, const uint8_t *pt, size_t len,
    const uint8_t *code, size_t clen, uint64_t addr, unsigned nitems,
    int unsup, int map)
{
	struct tf_img *im;
	struct pt_config cfg;
	struct fpt_config fc;
	struct tally t;
	FILE *fp;

	ATF_REQUIRE((fp = fopen("code.bin", "wb")) != NULL);
	ATF_REQUIRE(fwrite(code, 1, clen, fp) == clen && fclose(fp) == 0);
	ATF_REQUIRE((im = calloc(1, sizeof(*im))) != NULL);
	ATF_REQUIRE(tf_img_add(im, "code.bin", code, 0, clen, addr) == 0);
	pt_config_init(&cfg);
	memset(&fc, 0, sizeof(fc));
	if (map)
		fc.map = tf_map;
	memset(&t, 0, sizeof(t));
	diff_one(what, pt, len, im, &cfg, &fc, &t);
	free(im);
	report(what, &t);
	if (t.differ > 0)
		atf_tc_fail("%s", t.first);
	if (unsup)
		ATF_CHECK_MSG(t.unsup == 1, "%s: expected fpt to hand it to "
		    "libipt, got %u whole", what, t.equal);
	else
		ATF_CHECK_MSG(t.equal == 1, "%s: expected fpt to decode it "
		    "whole, got %u unsupported", what, t.unsup);
	ATF_CHECK_MSG(t.items == nitems, "%s: expected %u items, got %"
	    PRIu64, what, nitems, t.items);
}

static void
handmade_as(const char *what, const uint8_t *pt, size_t len,
    const uint8_t *code, size_t clen, uint64_t addr, unsigned nitems,
    int unsup)
{
	handmade_map_as(what, pt, len, code, clen, addr, nitems, unsup, 0);
}

static void
handmade(const char *what, const uint8_t *pt, size_t len,
    const uint8_t *code, size_t clen, uint64_t addr, unsigned nitems)
{
	handmade_as(what, pt, len, code, clen, addr, nitems, 0);
}

/*
 * PIP, VMCS and MNT in a PSB+ (status updates at the FUP's IP, the MNT
 * not one), then VMCS and PIP while tracing is off (standalone events),
 * each with the time of the TSC before.  By construction: the three
 * status updates and the MNT's event, the block to the ret (3 insns),
 * the disable, the VMCS and the PIP: 8 items.
 */
ATF_TC_WITHOUT_HEAD(psb_paging_vmcs);
ATF_TC_BODY(psb_paging_vmcs, tc)
{
	static const uint8_t pt[] = {
		PSB_BYTES,
		0x19, 0x56, 0x34, 0x12, 0, 0, 0, 0,		/* TSC */
		0x02, 0x43, 0x00, 0x0a, 0, 0, 0, 0,		/* PIP */
		0x02, 0xc8, 0x12, 0, 0, 0, 0,			/* VMCS */
		0x99, 0x01,					/* MODE 64 */
		0x7d, 0x00, 0x10, 0, 0, 0, 0,			/* FUP */
		0x02, 0xc3, 0x88, 1, 2, 3, 4, 5, 6, 7, 8,	/* MNT */
		0x02, 0x23,					/* PSBEND */
		0x01,						/* TIP.PGD */
		0x19, 0x78, 0x56, 0x34, 0x12, 0, 0, 0,		/* TSC */
		0x02, 0xc8, 0x34, 0, 0, 0, 0,			/* VMCS */
		0x02, 0x43, 0x00, 0x0b, 0, 0, 0, 0,		/* PIP */
	};
	/* nop; nop; ret: the TIP.PGD binds to the ret. */
	static const uint8_t code[] = { 0x90, 0x90, 0xc3 };

	handmade("psb_paging_vmcs", pt, sizeof(pt), code, sizeof(code),
	    0x1000, 8);
}

/*
 * A CBR between a TNT whose second bit is still unused and a TIP: CBR is
 * an event to libipt (ptev_cbr), so its read on stops there and the
 * indirect jump's query is a bad one; fpt once passed over the CBR to the
 * TIP.  By construction: the PSB+'s mode; the jz (1 insn); the jmp rax
 * (1 insn) and the error: 4 items.
 */
ATF_TC_WITHOUT_HEAD(cbr_before_tip_with_bits);
ATF_TC_BODY(cbr_before_tip_with_bits, tc)
{
	static const uint8_t pt[] = {
		PSB_PLUS_64(0x00),				/* PSB+ at 0x1000 */
		0x08,						/* TNT: N N */
		0x02, 0x03, 0x20, 0x00,				/* CBR */
		0x2d, 0x00, 0x10,				/* TIP 0x1000 */
	};
	/* jz +0; jmp rax */
	static const uint8_t code[] = { 0x74, 0x00, 0xff, 0xe0 };

	handmade("cbr_before_tip_with_bits", pt, sizeof(pt), code,
	    sizeof(code), 0x1000, 4);
}

/*
 * A CBR and an MNT while tracing is on, after the PSB+: two events to
 * libipt (ptev_cbr, ptev_mnt) before the next block, bound to no
 * instruction.  By construction: the PSB+'s mode, the CBR and the MNT;
 * nop, nop, jmp rax (3 insns) twice, the TIP.PGD at the second jmp, and
 * the disable: 6 items.
 */
ATF_TC_WITHOUT_HEAD(cbr_mnt_while_tracing);
ATF_TC_BODY(cbr_mnt_while_tracing, tc)
{
	static const uint8_t pt[] = {
		PSB_PLUS_64(0x00),				/* PSB+ at 0x1000 */
		0x02, 0x03, 0x20, 0x00,				/* CBR */
		0x02, 0xc3, 0x88, 1, 2, 3, 4, 5, 6, 7, 8,	/* MNT */
		0x2d, 0x00, 0x10,				/* TIP 0x1000 */
		0x01,						/* TIP.PGD */
	};
	/* nop; nop; jmp rax */
	static const uint8_t code[] = { 0x90, 0x90, 0xff, 0xe0 };

	handmade("cbr_mnt_while_tracing", pt, sizeof(pt), code,
	    sizeof(code), 0x1000, 6);
}

/*
 * BBP, an opcode libipt 2.0 does not know, right after a TIP: a decode
 * error (libipt reads ahead past the TIP it returns), then on at the
 * next PSB.  By construction: the PSB+'s mode at 0x1000; nop, jmp rax (2
 * insns); the error; the second PSB+'s mode at 0x1003; the ret there (1
 * insn) and the TIP.PGD's disable: 6 items.
 */
ATF_TC_WITHOUT_HEAD(unknown_opcode);
ATF_TC_BODY(unknown_opcode, tc)
{
	static const uint8_t pt[] = {
		PSB_PLUS_64(0x00),				/* PSB+ at 0x1000 */
		0x2d, 0x00, 0x10,				/* TIP */
		0x02, 0x63, 0x00,				/* BBP */
		PSB_PLUS_64(0x03),				/* PSB+ at 0x1003 */
		0x01,						/* TIP.PGD */
	};
	/* nop; jmp rax; ret */
	static const uint8_t code[] = { 0x90, 0xff, 0xe0, 0xc3 };

	handmade("unknown_opcode", pt, sizeof(pt), code, sizeof(code),
	    0x1000, 6);
}

/*
 * A bad packet right after a long TNT: libipt reads ahead over what
 * follows a TNT when it takes it, so the conditional branch's query fails
 * there with the TNT's bit unused; fpt must fail at the same branch, not
 * one block later.  Then on at the next PSB.  By construction: the
 * PSB+'s mode; the first jz (1 insn) and the error at the bad PSB; the
 * second PSB+'s mode; the ret (1 insn) and the TIP.PGD's disable: 6
 * items.
 */
ATF_TC_WITHOUT_HEAD(bad_after_tnt);
ATF_TC_BODY(bad_after_tnt, tc)
{
	static const uint8_t pt[] = {
		PSB_PLUS_64(0x00),				/* PSB+ at 0x1000 */
		0x02, 0xa3, 0x04, 0, 0, 0, 0, 0,		/* LTNT: N N */
		0x02, 0x82, 0x02, 0x82, 0x19,			/* bad PSB */
		PSB_PLUS_64(0x04),				/* PSB+ at 0x1004 */
		0x01,						/* TIP.PGD */
	};
	/* jz +0; jz +0; ret */
	static const uint8_t code[] = { 0x74, 0x00, 0x74, 0x00, 0xc3 };

	handmade("bad_after_tnt", pt, sizeof(pt), code, sizeof(code),
	    0x1000, 6);
}

/*
 * A long TNT with no bit but its stop bit: a bad packet to libipt, which
 * fails the conditional branch's query (fpt once asserted there).  Then
 * on at the next PSB.  By construction: the PSB+'s mode; the jz (1 insn)
 * and the error; the second PSB+'s mode; the ret (1 insn) and the
 * TIP.PGD's disable: 6 items.
 */
ATF_TC_WITHOUT_HEAD(tnt64_no_bits);
ATF_TC_BODY(tnt64_no_bits, tc)
{
	static const uint8_t pt[] = {
		PSB_PLUS_64(0x00),				/* PSB+ at 0x1000 */
		0x02, 0xa3, 0x01, 0, 0, 0, 0, 0,		/* LTNT: none */
		PSB_PLUS_64(0x02),				/* PSB+ at 0x1002 */
		0x01,						/* TIP.PGD */
	};
	/* jz +0; ret */
	static const uint8_t code[] = { 0x74, 0x00, 0xc3 };

	handmade("tnt64_no_bits", pt, sizeof(pt), code, sizeof(code),
	    0x1000, 6);
}

/*
 * A bad packet right after the TIP.PGE that follows a PSB+: libipt hands
 * over the PSB+'s mode event and then fetches the next one (its trailing
 * event), whose read on fails; so the mode event is lost and the error
 * comes first.  Then on at the next PSB.  By construction: the error at
 * the bad PSB; the second PSB+'s mode; the ret (1 insn) and the
 * TIP.PGD's disable: 4 items.
 */
ATF_TC_WITHOUT_HEAD(bad_after_trailing_event);
ATF_TC_BODY(bad_after_trailing_event, tc)
{
	static const uint8_t pt[] = {
		PSB_BYTES,
		0x99, 0x01,					/* MODE 64 */
		0x02, 0x23,					/* PSBEND */
		0x71, 0x00, 0x10, 0, 0, 0, 0,			/* TIP.PGE */
		0x02, 0x82, 0x02, 0x82, 0x19,			/* bad PSB */
		PSB_PLUS_64(0x00),				/* PSB+ at 0x1000 */
		0x01,						/* TIP.PGD */
	};
	/* ret */
	static const uint8_t code[] = { 0xc3 };

	handmade("bad_after_trailing_event", pt, sizeof(pt), code,
	    sizeof(code), 0x1000, 4);
}

/*
 * A PSB cut by the end of the trace right after a TIP: libipt's read on
 * after the TIP decodes it (a PSB+ is no event to it), meets the end and
 * ends the trace there, before the TIP's target is decoded; fpt must not
 * decode one block more (found by fuzz_fpt).  By construction: the PSB+'s
 * mode at 0x1000; nop, jmp rax (2 insns); the end: 2 items.
 */
ATF_TC_WITHOUT_HEAD(cut_psb_after_tip);
ATF_TC_BODY(cut_psb_after_tip, tc)
{
	static const uint8_t pt[] = {
		PSB_PLUS_64(0x00),				/* PSB+ at 0x1000 */
		0x2d, 0x03, 0x10,				/* TIP 0x1003 */
		0x02, 0x82, 0x19,				/* cut PSB */
	};
	/* nop; jmp rax; jz +0; ret */
	static const uint8_t code[] = { 0x90, 0xff, 0xe0, 0x74, 0x00, 0xc3 };

	handmade("cut_psb_after_tip", pt, sizeof(pt), code, sizeof(code),
	    0x1000, 2);
}

/*
 * bad_after_trailing_event with a CYC before the bad packet: libipt's
 * read on after the TIP.PGE passes the CYC (a timing update) and fails
 * at the bad packet, so the PSB+'s mode event is lost; fpt must not hand
 * that event over (found by fuzz_fpt, when fpt still handed CYC to
 * libipt).  Then on at the next PSB.  By construction: the error; the
 * second PSB+'s mode; the ret (1 insn) and the TIP.PGD's disable: 4
 * items.
 */
ATF_TC_WITHOUT_HEAD(cyc_before_bad_after_event);
ATF_TC_BODY(cyc_before_bad_after_event, tc)
{
	static const uint8_t pt[] = {
		PSB_BYTES,
		0x99, 0x01,					/* MODE 64 */
		0x02, 0x23,					/* PSBEND */
		0x71, 0x00, 0x10, 0, 0, 0, 0,			/* TIP.PGE */
		0x03,						/* CYC */
		0x02, 0x82, 0x02, 0x82, 0x19,			/* bad PSB */
		PSB_PLUS_64(0x00),				/* PSB+ at 0x1000 */
		0x01,						/* TIP.PGD */
	};
	/* ret */
	static const uint8_t code[] = { 0xc3 };

	handmade("cyc_before_bad_after_event", pt, sizeof(pt), code,
	    sizeof(code), 0x1000, 4);
}

/*
 * A TIP.PGE without IP right after another: libipt hands over the first
 * one's enabled event, then fetches the next event (its trailing event),
 * which cannot do without its IP; so the enabled event is lost and the
 * error comes in its place (found by fuzz_fpt).  Then on at the next
 * PSB.  By construction: the first PSB+'s mode; the error; the second
 * PSB+'s mode; the ret (1 insn) and the TIP.PGD's disable: 5 items.
 */
ATF_TC_WITHOUT_HEAD(pge_without_ip_trailing);
ATF_TC_BODY(pge_without_ip_trailing, tc)
{
	static const uint8_t pt[] = {
		PSB_BYTES,
		0x99, 0x01,					/* MODE 64 */
		0x02, 0x23,					/* PSBEND */
		0x71, 0x00, 0x10, 0, 0, 0, 0,			/* TIP.PGE */
		0x11,						/* TIP.PGE, no IP */
		PSB_PLUS_64(0x00),				/* PSB+ at 0x1000 */
		0x01,						/* TIP.PGD */
	};
	/* ret */
	static const uint8_t code[] = { 0xc3 };

	handmade("pge_without_ip_trailing", pt, sizeof(pt), code,
	    sizeof(code), 0x1000, 5);
}

/*
 * A TIP with reserved IP bytes right after a TIP.PGE: libipt's read on
 * after the enabled event stops before a TIP without decoding it, so the
 * enabled event stands and the error comes where the flow needs the TIP;
 * fpt must not fail the enabled event there (found by fuzz_fpt).  Then on
 * at the next PSB.  By construction: the first PSB+'s mode; the enabled
 * event at 0x1000; the jmp rax (1 insn); the error; the second PSB+'s
 * mode; the ret (1 insn) and the TIP.PGD's disable: 7 items.
 */
ATF_TC_WITHOUT_HEAD(bad_tip_after_enable);
ATF_TC_BODY(bad_tip_after_enable, tc)
{
	static const uint8_t pt[] = {
		PSB_BYTES,
		0x99, 0x01,					/* MODE 64 */
		0x02, 0x23,					/* PSBEND */
		0x71, 0x00, 0x10, 0, 0, 0, 0,			/* TIP.PGE */
		0xed,						/* bad TIP */
		PSB_PLUS_64(0x02),				/* PSB+ at 0x1002 */
		0x01,						/* TIP.PGD */
	};
	/* jmp rax; ret */
	static const uint8_t code[] = { 0xff, 0xe0, 0xc3 };

	handmade("bad_tip_after_enable", pt, sizeof(pt), code,
	    sizeof(code), 0x1000, 7);
}

/*
 * A TIP.PGE with reserved IP bytes right after a TNT: libipt's read on
 * after the TNT stops before the event packet without decoding it, so
 * the TNT's bits are all used before the flow meets the error; fpt must
 * not fail at the first bit (found by fuzz_fpt).  Then on at the next
 * PSB.  By construction: the PSB+'s mode; the three jz (1 insn each); the
 * error at the ret, which needs trace; the second PSB+'s mode; the ret (1
 * insn) and the TIP.PGD's disable: 8 items.
 */
ATF_TC_WITHOUT_HEAD(bad_event_after_tnt);
ATF_TC_BODY(bad_event_after_tnt, tc)
{
	static const uint8_t pt[] = {
		PSB_PLUS_64(0x00),				/* PSB+ at 0x1000 */
		0x10,						/* TNT: N N N */
		0xb1,						/* bad TIP.PGE */
		PSB_PLUS_64(0x06),				/* PSB+ at 0x1006 */
		0x01,						/* TIP.PGD */
	};
	/* jz +0; jz +0; jz +0; ret */
	static const uint8_t code[] = { 0x74, 0x00, 0x74, 0x00, 0x74, 0x00,
	    0xc3 };

	handmade("bad_event_after_tnt", pt, sizeof(pt), code, sizeof(code),
	    0x1000, 8);
}

/*
 * The trace ends in the middle of the event after a TIP.PGE (a MODE.exec
 * waiting for its TIP): libipt hands over the enabled event, then its
 * fetch of the next event meets the end (-pte_eos), which loses the
 * enabled event and ends the trace; fpt must not give it (found by
 * fuzz_fpt).  By construction: the PSB+'s mode event only: 1 item.
 */
ATF_TC_WITHOUT_HEAD(end_in_event_after_enable);
ATF_TC_BODY(end_in_event_after_enable, tc)
{
	static const uint8_t pt[] = {
		PSB_BYTES,
		0x99, 0x01,					/* MODE 64 */
		0x02, 0x23,					/* PSBEND */
		0x71, 0x00, 0x10, 0, 0, 0, 0,			/* TIP.PGE */
		0x99, 0x01,					/* MODE 64 */
	};
	/* ret */
	static const uint8_t code[] = { 0xc3 };

	handmade("end_in_event_after_enable", pt, sizeof(pt), code,
	    sizeof(code), 0x1000, 1);
}

/*
 * A PSB+ holding a TNT right after a TIP.PGE: libipt's read on after the
 * enabled event decodes the PSB+ whole and fails in it (bad context), so
 * the PSB+'s mode event before is lost and the error comes first.  fpt
 * does not decode a PSB+ with such a packet: it must hand the trace to
 * libipt before giving the mode event (found by fuzz_fpt).  By
 * construction: unsupported before any item.
 */
ATF_TC_WITHOUT_HEAD(tnt_in_psb_after_enable);
ATF_TC_BODY(tnt_in_psb_after_enable, tc)
{
	static const uint8_t pt[] = {
		PSB_BYTES,
		0x99, 0x01,					/* MODE 64 */
		0x02, 0x23,					/* PSBEND */
		0x71, 0x00, 0x10, 0, 0, 0, 0,			/* TIP.PGE */
		PSB_BYTES,
		0x04,						/* TNT: N */
		0x02, 0x23,					/* PSBEND */
		PSB_PLUS_64(0x00),				/* PSB+ at 0x1000 */
		0x01,						/* TIP.PGD */
	};
	/* ret */
	static const uint8_t code[] = { 0xc3 };

	handmade_as("tnt_in_psb_after_enable", pt, sizeof(pt), code,
	    sizeof(code), 0x1000, 0, 1);
}

/*
 * A bad CYC (a payload over 64 bits) right after a TIP taken while TNT
 * bits are left: libipt reads ahead over the status packets after a TIP
 * and fails the query that took it, so the jmp's target is never
 * reached; fpt must not go on with the bits left (found by fuzz_fpt).
 * Then on at the next PSB.  By construction: the PSB+'s mode; the jz (1
 * insn); the jmp rax (1 insn) and the error; the second PSB+'s mode; the
 * ret (1 insn) and the TIP.PGD's disable: 7 items.
 */
ATF_TC_WITHOUT_HEAD(bad_cyc_after_tip);
ATF_TC_BODY(bad_cyc_after_tip, tc)
{
	static const uint8_t pt[] = {
		PSB_PLUS_64(0x00),				/* PSB+ at 0x1000 */
		0x08,						/* TNT: N N */
		0x2d, 0x04, 0x10,				/* TIP 0x1004 */
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,	/* bad CYC */
		0xff, 0xff, 0x02,
		PSB_PLUS_64(0x06),				/* PSB+ at 0x1006 */
		0x01,						/* TIP.PGD */
	};
	/* jz +0; jmp rax; jz +0; ret */
	static const uint8_t code[] = { 0x74, 0x00, 0xff, 0xe0, 0x74, 0x00,
	    0xc3 };

	handmade("bad_cyc_after_tip", pt, sizeof(pt), code, sizeof(code),
	    0x1000, 7);
}

/*
 * An unknown opcode after a TIP.PGD that binds to the next branch:
 * libipt fetches the disable event before that block and reads ahead
 * after it, where it fails; so the block to the disable is never given.
 * fpt must fail there too, not after the block (found by fuzz_fpt).  Then
 * on at the next PSB.  By construction: the PSB+'s mode; the jz (1
 * insn); the error; the second PSB+'s mode; the ret (1 insn) and the
 * TIP.PGD's disable: 6 items.
 */
ATF_TC_WITHOUT_HEAD(bad_after_pgd);
ATF_TC_BODY(bad_after_pgd, tc)
{
	static const uint8_t pt[] = {
		PSB_PLUS_64(0x00),				/* PSB+ at 0x1000 */
		0x04,						/* TNT: N */
		0x01,						/* TIP.PGD */
		0x02, 0x00,					/* bad opcode */
		PSB_PLUS_64(0x02),				/* PSB+ at 0x1002 */
		0x01,						/* TIP.PGD */
	};
	/* jz +0; ret */
	static const uint8_t code[] = { 0x74, 0x00, 0xc3 };

	handmade("bad_after_pgd", pt, sizeof(pt), code, sizeof(code),
	    0x1000, 6);
}

/*
 * A TNT-64 without bits (a bad packet) after a TIP: libipt's read on
 * after the TIP stops before a TNT without decoding it, and the next
 * block fetches no event, so the flow runs to the conditional branch
 * whose query meets the error; fpt must not fail before that block
 * (found by fuzz_fpt).  Then on at the next PSB.  By construction: the
 * PSB+'s mode; the jmp rax (1 insn); nop, jz (2 insns) and the error;
 * the second PSB+'s mode; the ret (1 insn) and the TIP.PGD's disable: 7
 * items.
 */
ATF_TC_WITHOUT_HEAD(bad_tnt64_after_tip);
ATF_TC_BODY(bad_tnt64_after_tip, tc)
{
	static const uint8_t pt[] = {
		PSB_PLUS_64(0x00),				/* PSB+ at 0x1000 */
		0x2d, 0x02, 0x10,				/* TIP 0x1002 */
		0x02, 0xa3, 0, 0, 0, 0, 0, 0,			/* bad LTNT */
		PSB_PLUS_64(0x05),				/* PSB+ at 0x1005 */
		0x01,						/* TIP.PGD */
	};
	/* jmp rax; nop; jz +0; ret */
	static const uint8_t code[] = { 0xff, 0xe0, 0x90, 0x74, 0x00, 0xc3 };

	handmade("bad_tnt64_after_tip", pt, sizeof(pt), code, sizeof(code),
	    0x1000, 7);
}

/*
 * A TIP cut by the end of the trace where a conditional branch needs a
 * TNT bit: libipt's query looks at the header before decoding and calls
 * a TIP there a bad query, an error, not the end of the trace (found by
 * fuzz_fpt).  By construction: the PSB+'s mode; the jz (1 insn) and the
 * error: 3 items.
 */
ATF_TC_WITHOUT_HEAD(cut_tip_at_cond);
ATF_TC_BODY(cut_tip_at_cond, tc)
{
	static const uint8_t pt[] = {
		PSB_PLUS_64(0x00),				/* PSB+ at 0x1000 */
		0x2d, 0x02,					/* cut TIP */
	};
	/* jz +0; ret */
	static const uint8_t code[] = { 0x74, 0x00, 0xc3 };

	handmade("cut_tip_at_cond", pt, sizeof(pt), code, sizeof(code),
	    0x1000, 3);
}

/*
 * A MODE.TSX while tracing (it waits for a FUP) and then a TNT: libipt's
 * fetch of the TSX event goes on to its FUP and meets the TNT first, a
 * bad query; fpt must not go on with the TNT (found by fuzz_fpt).  Then
 * on at the next PSB.  By construction: the PSB+'s mode; the first jz (1
 * insn); the error; the second PSB+'s mode; the ret (1 insn) and the
 * TIP.PGD's disable: 6 items.
 */
ATF_TC_WITHOUT_HEAD(tnt_before_tsx_fup);
ATF_TC_BODY(tnt_before_tsx_fup, tc)
{
	static const uint8_t pt[] = {
		PSB_PLUS_64(0x00),				/* PSB+ at 0x1000 */
		0x04,						/* TNT: N */
		0x99, 0x20,					/* MODE.TSX */
		0x04,						/* TNT: N */
		PSB_PLUS_64(0x04),				/* PSB+ at 0x1004 */
		0x01,						/* TIP.PGD */
	};
	/* jz +0; jz +0; ret */
	static const uint8_t code[] = { 0x74, 0x00, 0x74, 0x00, 0xc3 };

	handmade("tnt_before_tsx_fup", pt, sizeof(pt), code, sizeof(code),
	    0x1000, 6);
}

/*
 * A TSC, an error, a resync at a PSB+ without TSC: libipt's time starts
 * over at the sync, so the second PSB+'s event has no time and its TSC
 * field is 0; fpt must not keep the old TSC there (found by fuzz_fpt).
 * By construction: the first PSB+'s mode (TSC 0x123456); the jz (1
 * insn) and the error; the second PSB+'s mode (no TSC); the ret (1
 * insn) and the TIP.PGD's disable: 6 items.
 */
ATF_TC_WITHOUT_HEAD(no_tsc_after_resync);
ATF_TC_BODY(no_tsc_after_resync, tc)
{
	static const uint8_t pt[] = {
		PSB_BYTES,
		0x19, 0x56, 0x34, 0x12, 0, 0, 0, 0,		/* TSC */
		0x99, 0x01,					/* MODE 64 */
		0x7d, 0x00, 0x10, 0, 0, 0, 0,			/* FUP */
		0x02, 0x23,					/* PSBEND */
		0x04,						/* TNT: N */
		0x02, 0x00,					/* bad opcode */
		PSB_PLUS_64(0x02),				/* PSB+ at 0x1002 */
		0x01,						/* TIP.PGD */
	};
	/* jz +0; ret */
	static const uint8_t code[] = { 0x74, 0x00, 0xc3 };

	handmade("no_tsc_after_resync", pt, sizeof(pt), code, sizeof(code),
	    0x1000, 6);
}

/*
 * bad_after_tnt with a FUP between the TNT and the bad packet: a FUP no
 * event waits for is decoded by libipt's read-ahead (an asynchronous
 * branch's first half), which reads on to the bad packet, so the query
 * that took the TNT still fails with its bits unused; fpt must not stop
 * looking at the FUP (found by fuzz_fpt).  By construction, as there: 6
 * items.
 */
ATF_TC_WITHOUT_HEAD(bad_after_tnt_fup);
ATF_TC_BODY(bad_after_tnt_fup, tc)
{
	static const uint8_t pt[] = {
		PSB_PLUS_64(0x00),				/* PSB+ at 0x1000 */
		0x02, 0xa3, 0x04, 0, 0, 0, 0, 0,		/* LTNT: N N */
		0x3d, 0x04, 0x10,				/* FUP 0x1004 */
		0x02, 0x82, 0x02, 0x82, 0x19,			/* bad PSB */
		PSB_PLUS_64(0x04),				/* PSB+ at 0x1004 */
		0x01,						/* TIP.PGD */
	};
	/* jz +0; jz +0; ret */
	static const uint8_t code[] = { 0x74, 0x00, 0x74, 0x00, 0xc3 };

	handmade("bad_after_tnt_fup", pt, sizeof(pt), code, sizeof(code),
	    0x1000, 6);
}

/*
 * A direct call, then an indirect call in the same block, three times
 * over: from the second time on the blocks come from fpt's hot path over
 * cached entries (hot_one(): the call's entry and the next; the hot path
 * needs fpt's map callback), which pushes
 * both return addresses, the direct call's first; the two compressed
 * returns after it pop them in the other order, and a wrong order sends
 * the flow elsewhere.  By construction, as libipt gives them
 * (T_FPT_DUMP=call_then): the PSB+'s mode; 5 blocks the first round (the
 * cache fill ends a block at the call: call; call rax; ret; ret; jmp
 * rax), 4 in each of the two others (call and call rax in one block);
 * the call block again, the TIP.PGD binding to its call rax; the
 * disable: 16 items.
 */
ATF_TC_WITHOUT_HEAD(call_then_ind_call);
ATF_TC_BODY(call_then_ind_call, tc)
{
#define ROUND \
		0x2d, 0x20, 0x10,		/* TIP 0x1020 */ \
		0x0e,				/* TNT: T T */ \
		0x2d, 0x00, 0x10		/* TIP 0x1000 */
	static const uint8_t pt[] = {
		PSB_PLUS_64(0x00),				/* PSB+ at 0x1000 */
		ROUND, ROUND, ROUND,
		0x01,						/* TIP.PGD */
	};
#undef ROUND
	/*
	 * 0x1000 call 0x1010; jmp rax; 0x1010 call rax; ret; 0x1020 ret
	 * (nops between).
	 */
	static const uint8_t code[] = {
		0xe8, 0x0b, 0x00, 0x00, 0x00, 0xff, 0xe0, 0x90,
		0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
		0xff, 0xd0, 0xc3, 0x90, 0x90, 0x90, 0x90, 0x90,
		0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
		0xc3,
	};

	/* With a map callback, as the indexer gives: the hot path runs. */
	handmade_map_as("call_then_ind_call", pt, sizeof(pt), code,
	    sizeof(code), 0x1000, 16, 0, 1);
}

/*
 * A run of PSB payload longer than a PSB (ten pairs): libipt's sync goes
 * to the end of the run and syncs at its last 16 bytes, where a PSB+
 * follows; fpt must sync there too, not at the run's start, where the
 * rest of the run reads as a bad PSB (found by fuzz_fpt).  By
 * construction: the PSB+'s mode; the enabled event at 0x1000; the ret (1
 * insn) and the TIP.PGD's disable: 4 items.
 */
ATF_TC_WITHOUT_HEAD(psb_run);
ATF_TC_BODY(psb_run, tc)
{
	static const uint8_t pt[] = {
		PSB_BYTES,
		0x02, 0x82, 0x02, 0x82,				/* 2 pairs more */
		0x99, 0x01,					/* MODE 64 */
		0x02, 0x23,					/* PSBEND */
		0x71, 0x00, 0x10, 0, 0, 0, 0,			/* TIP.PGE */
		0x01,						/* TIP.PGD */
		0x00, 0x00,					/* PAD */
	};
	/* ret */
	static const uint8_t code[] = { 0xc3 };

	handmade("psb_run", pt, sizeof(pt), code, sizeof(code), 0x1000, 4);
}

/*
 * A PSB+ without status updates, a TIP.PGE and a bad CYC: libipt's sync
 * fetches the first event itself, and the read on after the TIP.PGE fails
 * the sync, after which ptxed's loop gives up; fpt's sync must fail too,
 * not give an error item later (found by fuzz_fpt).  By construction: no
 * item.
 */
ATF_TC_WITHOUT_HEAD(bad_in_first_event);
ATF_TC_BODY(bad_in_first_event, tc)
{
	static const uint8_t pt[] = {
		PSB_BYTES,
		0x02, 0x23,					/* PSBEND */
		0x71, 0x00, 0x10, 0, 0, 0, 0,			/* TIP.PGE */
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,	/* bad CYC */
		0xff, 0xff, 0x02,
		PSB_PLUS_64(0x00),				/* PSB+ at 0x1000 */
		0x01,						/* TIP.PGD */
	};
	/* ret */
	static const uint8_t code[] = { 0xc3 };

	handmade("bad_in_first_event", pt, sizeof(pt), code, sizeof(code),
	    0x1000, 0);
}

/*
 * A PSB+ with two status updates and a bad packet after it: libipt's
 * sync hands over the first update, and the fetch of the second, which
 * reads on to the bad packet, fails (an error item) where one update
 * alone fails the sync; fpt must not fail the sync here (found by
 * fuzz_fpt).  Then on at the next PSB.  By construction: the error; the
 * second PSB+'s mode; the ret (1 insn) and the TIP.PGD's disable: 4
 * items.
 */
ATF_TC_WITHOUT_HEAD(bad_after_two_updates);
ATF_TC_BODY(bad_after_two_updates, tc)
{
	static const uint8_t pt[] = {
		PSB_BYTES,
		0x99, 0x01,					/* MODE 64 */
		0x99, 0x01,					/* MODE 64 */
		0x02, 0x23,					/* PSBEND */
		0x02, 0x00,					/* bad opcode */
		PSB_PLUS_64(0x00),				/* PSB+ at 0x1000 */
		0x01,						/* TIP.PGD */
	};
	/* ret */
	static const uint8_t code[] = { 0xc3 };

	handmade("bad_after_two_updates", pt, sizeof(pt), code, sizeof(code),
	    0x1000, 4);
}

/*
 * A PSB+ without FUP (tracing off), then one with a FUP and no TIP.PGE:
 * past the sync the FUP turns only libipt's query decoder on; its block
 * decoder, still off, steps from the IP it had (none) to the status
 * update's and fails; fpt, which took the FUP for tracing on, must hand
 * the segment to libipt (found by fuzz_fpt).  By construction: the first
 * PSB+'s mode, then libipt's error: 1 item before fpt says unsupported.
 */
ATF_TC_WITHOUT_HEAD(psb_fup_while_disabled);
ATF_TC_BODY(psb_fup_while_disabled, tc)
{
	static const uint8_t pt[] = {
		PSB_BYTES, 0x99, 0x01, 0x02, 0x23,		/* PSB+, off */
		PSB_PLUS_64(0x00),				/* FUP 0x1000 */
	};
	/* ret */
	static const uint8_t code[] = { 0xc3 };

	handmade_as("psb_fup_while_disabled", pt, sizeof(pt), code,
	    sizeof(code), 0x1000, 1, 1);
}

/*
 * A MODE.exec and its TIP after the last TNT bit: libipt fetches the
 * mode's event (at the TIP's IP) before the next block and steps to it
 * without its block cache, through the backward jmp a cache fill would
 * end a block at, to the jmp rax that takes the TIP (found by fuzz_fpt).
 * By construction: the PSB+'s mode; the jz (1 insn); xor, jmp, nop, jmp
 * rax (4 insns, one block); the mode's event at 0x1000; then the jz
 * again meets the end of the trace: 4 items.
 */
ATF_TC_WITHOUT_HEAD(mode_tip_past_backward_jmp);
ATF_TC_BODY(mode_tip_past_backward_jmp, tc)
{
	static const uint8_t pt[] = {
		PSB_PLUS_64(0x00),				/* FUP 0x1000 */
		0x06,						/* TNT: T */
		0x99, 0x01,					/* MODE 64 */
		0x2d, 0x00, 0x10,				/* TIP 0x1000 */
	};
	/* jz 0x1006; nop; jmp rax; nop; xor edx, edx; jmp 0x1002 */
	static const uint8_t code[] = { 0x74, 0x04, 0x90, 0xff, 0xe0, 0x90,
	    0x31, 0xd2, 0xeb, 0xf8 };

	handmade("mode_tip_past_backward_jmp", pt, sizeof(pt), code,
	    sizeof(code), 0x1000, 4);
}

/*
 * Two FUPs no event waits for, then the end of the trace, where a jmp rax
 * wants its TIP, a TNT bit still unused: libipt's read-ahead takes each
 * FUP for an asynchronous branch's first half and meets the end, the end
 * of the flow, not an error (found by fuzz_fpt).  By construction: the
 * PSB+'s mode; the jz (1 insn); the jmp rax (1 insn): 3 items.
 */
ATF_TC_WITHOUT_HEAD(two_fups_then_end);
ATF_TC_BODY(two_fups_then_end, tc)
{
	static const uint8_t pt[] = {
		PSB_PLUS_64(0x00),				/* FUP 0x1000 */
		0x08,						/* TNT: N N */
		0x3d, 0x00, 0x10,				/* FUP 0x1000 */
		0x3d, 0x00, 0x10,				/* FUP 0x1000 */
	};
	/* jz +0; jmp rax */
	static const uint8_t code[] = { 0x74, 0x00, 0xff, 0xe0 };

	handmade("two_fups_then_end", pt, sizeof(pt), code, sizeof(code),
	    0x1000, 3);
}

/*
 * TIP.PGE, PIP, TIP.PGD, a bad PSB: libipt's PIP while tracing waits for
 * no TIP (no FUP before it), so the fetch after the enabled event ends at
 * the PIP, and the bad PSB fails the paging event instead (fuzz_fpt).
 * By construction: the mode; the enabled event; the mov cr3 the PIP binds
 * to (1 insn); the error; the next PSB+'s mode, mov cr3 and ret (2
 * insns), the disable: 7 items.
 */
ATF_TC_WITHOUT_HEAD(pip_after_pge_then_bad);
ATF_TC_BODY(pip_after_pge_then_bad, tc)
{
	static const uint8_t pt[] = {
		PSB_BYTES, 0x99, 0x01, 0x02, 0x23,		/* MODE 64 */
		0x71, 0x00, 0x10, 0, 0, 0, 0,			/* TIP.PGE */
		0x02, 0x43, 0x00, 0x20, 0, 0, 0, 0,		/* PIP */
		0x01,						/* TIP.PGD */
		0x02, 0x82, 0x02, 0x82, 0x19,			/* bad PSB */
		PSB_PLUS_64(0x00),				/* PSB+ at 0x1000 */
		0x01,						/* TIP.PGD */
	};
	/*
	 * Behind a FUP's asynchronous branch, tracing or not, it waits: its
	 * fetch meets the end and loses the mode event: 0 items.
	 */
	static const uint8_t pt2[] = {
		PSB_BYTES, 0x99, 0x01, 0x02, 0x23,		/* MODE 64 */
		0x3d, 0x00, 0x10,				/* FUP */
		0x02, 0x43, 0x00, 0x20, 0, 0, 0, 0,		/* PIP */
	};
	static const uint8_t code[] = { 0x0f, 0x22, 0xd8, 0xc3 };

	handmade("pip_after_pge_then_bad", pt, sizeof(pt), code, sizeof(code),
	    0x1000, 7);
	handmade("fup_pip_then_end", pt2, sizeof(pt2), code, sizeof(code),
	    0x1000, 0);
}

/*
 * The last IP is zero at a PSB (the SDM; libipt clears it reading a
 * PSB+): a 16-bit TIP.PGE after one is at 0xfff8, not 0x1fff8 with the
 * upper bytes from before.  By construction: mode, enabled at 0x10000,
 * ret (1 insn), disable; the same from the second PSB+ at 0xfff8: 8.
 */
ATF_TC_WITHOUT_HEAD(psb_resets_last_ip);
ATF_TC_BODY(psb_resets_last_ip, tc)
{
	static const uint8_t pt[] = {
		PSB_BYTES, 0x99, 0x01, 0x02, 0x23,		/* MODE 64 */
		0x71, 0x00, 0x00, 0x01, 0, 0, 0,		/* TIP.PGE */
		0x01,						/* TIP.PGD */
		PSB_BYTES, 0x99, 0x01, 0x02, 0x23,		/* MODE 64 */
		0x31, 0xf8, 0xff,				/* TIP.PGE */
		0x01,						/* TIP.PGD */
	};
	/* At 0xfff0: 8 nops, ret at 0xfff8, 7 nops, ret at 0x10000. */
	static const uint8_t code[] = {
		0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0xc3,
		0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0xc3,
	};

	handmade("psb_resets_last_ip", pt, sizeof(pt), code, sizeof(code),
	    0xfff0, 8);
}

/*
 * 02 c3 not followed by 88 is no MNT, however short: libipt's read on
 * after the TIP fails there with a bad opcode, not at the end (fuzz_fpt).
 * By construction: the mode; nop, jmp rax (2 insns); the error: 3 items.
 */
ATF_TC_WITHOUT_HEAD(cut_bad_mnt_after_tip);
ATF_TC_BODY(cut_bad_mnt_after_tip, tc)
{
	static const uint8_t pt[] = {
		PSB_PLUS_64(0x00),				/* PSB+ at 0x1000 */
		0x2d, 0x00, 0x10,				/* TIP */
		0x02, 0xc3, 0x02,				/* no MNT */
	};
	static const uint8_t code[] = { 0x90, 0xff, 0xe0 };

	handmade("cut_bad_mnt_after_tip", pt, sizeof(pt), code, sizeof(code),
	    0x1000, 3);
}

/*
 * BOUND (62 outside 64-bit mode) is no branch to libipt, an interrupt to
 * Zydis's categories (fuzz_fpt).  By construction: the mode (32), the
 * enabled event, bound and ret (2 insns), the disable: 4 items.
 */
ATF_TC_WITHOUT_HEAD(bound_is_no_branch);
ATF_TC_BODY(bound_is_no_branch, tc)
{
	static const uint8_t pt[] = {
		PSB_BYTES, 0x99, 0x02, 0x02, 0x23,		/* MODE 32 */
		0x71, 0x00, 0x10, 0, 0, 0, 0,			/* TIP.PGE */
		0x01,						/* TIP.PGD */
	};
	static const uint8_t code[] = { 0x62, 0x0a, 0xc3 };

	handmade("bound_is_no_branch", pt, sizeof(pt), code, sizeof(code),
	    0x1000, 4);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, libipt_corpus);
	ATF_TP_ADD_TC(tp, psb_paging_vmcs);
	ATF_TP_ADD_TC(tp, unknown_opcode);
	ATF_TP_ADD_TC(tp, bad_after_tnt);
	ATF_TP_ADD_TC(tp, tnt64_no_bits);
	ATF_TP_ADD_TC(tp, cbr_before_tip_with_bits);
	ATF_TP_ADD_TC(tp, cbr_mnt_while_tracing);
	ATF_TP_ADD_TC(tp, bad_after_trailing_event);
	ATF_TP_ADD_TC(tp, cut_psb_after_tip);
	ATF_TP_ADD_TC(tp, cyc_before_bad_after_event);
	ATF_TP_ADD_TC(tp, pge_without_ip_trailing);
	ATF_TP_ADD_TC(tp, bad_tip_after_enable);
	ATF_TP_ADD_TC(tp, bad_event_after_tnt);
	ATF_TP_ADD_TC(tp, end_in_event_after_enable);
	ATF_TP_ADD_TC(tp, tnt_in_psb_after_enable);
	ATF_TP_ADD_TC(tp, bad_cyc_after_tip);
	ATF_TP_ADD_TC(tp, bad_after_pgd);
	ATF_TP_ADD_TC(tp, bad_tnt64_after_tip);
	ATF_TP_ADD_TC(tp, cut_tip_at_cond);
	ATF_TP_ADD_TC(tp, tnt_before_tsx_fup);
	ATF_TP_ADD_TC(tp, no_tsc_after_resync);
	ATF_TP_ADD_TC(tp, bad_after_tnt_fup);
	ATF_TP_ADD_TC(tp, call_then_ind_call);
	ATF_TP_ADD_TC(tp, psb_run);
	ATF_TP_ADD_TC(tp, bad_in_first_event);
	ATF_TP_ADD_TC(tp, bad_after_two_updates);
	ATF_TP_ADD_TC(tp, psb_fup_while_disabled);
	ATF_TP_ADD_TC(tp, mode_tip_past_backward_jmp);
	ATF_TP_ADD_TC(tp, two_fups_then_end);
	ATF_TP_ADD_TC(tp, pip_after_pge_then_bad);
	ATF_TP_ADD_TC(tp, psb_resets_last_ip);
	ATF_TP_ADD_TC(tp, cut_bad_mnt_after_tip);
	ATF_TP_ADD_TC(tp, bound_is_no_branch);
	ATF_TP_ADD_TC(tp, ixgen_whole);
	ATF_TP_ADD_TC(tp, ixgen_flipped);
	ATF_TP_ADD_TC(tp, run_rest);
	ATF_TP_ADD_TC(tp, ixgen_garbage);
	ATF_TP_ADD_TC(tp, ixgen_truncated);
	ATF_TP_ADD_TC(tp, step_capture);
	ATF_TP_ADD_TC(tp, valgrind_capture);
	ATF_TP_ADD_TC(tp, step_capture_dynamic);
	ATF_TP_ADD_TC(tp, valgrind_capture_dynamic);
	return (atf_no_error());
}
