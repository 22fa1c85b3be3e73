/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * fptbare: fpt, the indexer's own Intel PT decoder, alone, against
 * libipt's block decoder alone (ixbare's loop) on the same trace and
 * code, in CPU time (issue 29: fpt at 8 times ixbare's instructions per
 * CPU-second).  Each runs ptxed's loop to the end of each stream,
 * instructions summed block by block, nothing stored; setup (reading the
 * archive, the images, allocating the decoders) is not timed.  fpt runs
 * two ways:
 * - runs: as `index` drives it (indexer/segfast.c): after a block from
 *   fpt_next(), the rest of its memoized run (fpt_run_rest(),
 *   fpt_run_take()), then run after run from the TNT bits at hand
 *   (fpt_run_next()), their blocks taken without fpt_next()'s checks,
 *   neither asked after a block whose item says no run follows, but
 *   fpt_walk()'s blocks, a random walk's, taken many at a time;
 * - items: fpt_next() alone, one item per block.
 * A round runs libipt, then fpt each way (-R: runs only, -1: items
 * only); there are @runs rounds (-r, default 3) and each loop's best run
 * counts.  Both loops by default: fpt takes a ninth of libipt's time or
 * less, so the second loop adds little to a round, and the two are
 * measured under the same load.  A stream fpt says is unsupported is
 * counted and its time still measured up to that point, and said.  -F
 * runs fpt alone (for a profiler; no ratio then).  Exit 1 when a loop's
 * count differs from libipt's on a stream fpt decoded to its end (not
 * with -F), from the other loop's, or from its own the round before.
 *
 * fptbare [-F] [-R | -1] [-r RUNS] -a ARCHIVE
 * Prints per stream and loop (runs first), then in total per loop:
 *   stream S LOOP: BYTES bytes, I instructions, libipt NS ns (IPS/s),
 *     fpt I instructions NS ns (IPS/s), ratio R[, unsupported: WHY]
 *   total LOOP: BYTES bytes, I instructions, libipt NS ns, fpt I
 *     instructions NS ns, ratio R
 */

#include <err.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <intel-pt.h>

#include "hwtrace.h"
#include "../lib/hwtr_test_fpt.h"

static uint64_t
cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec);
}

static int
count_block(void *ctx, const struct pt_block *b)
{
	*(uint64_t *)ctx += b->ninsn;
	return (0);
}

/* libipt's block decoder over the whole stream: instructions. */
static uint64_t
run_libipt(struct pt_block_decoder *d)
{
	uint64_t n = 0;
	struct tf_libipt_cb cb = { count_block, NULL, NULL, &n };

	tf_libipt_loop(d, &cb);
	return (n);
}

enum { L_RUNS, L_ITEMS, NLOOP };
static const char *const loop_name[NLOOP] = { "runs", "items" };

/* The instructions of @n blocks from @b. */
static inline uint64_t
sum_blocks(const struct fpt_block *b, size_t n)
{
	uint64_t s = 0;
	size_t i;

	for (i = 0; i < n; i++)
		s += b[i].ninsn;
	return (s);
}

#define WALK_MAX	256	/* segfast.c's batch of fpt_walk() blocks */

/*
 * The instructions of the walks fpt gives next (fpt_walk()), as
 * segfast.c takes them; out of line, its buffer with it, so that the
 * run loop around it stays as it was where no walk comes (gz8).
 */
static uint64_t __attribute__((noinline))
walk_fpt(struct fpt *d)
{
	struct fpt_block wb[WALK_MAX];
	uint64_t n = 0;
	size_t k;

	do {
		k = fpt_walk(d, wb, WALK_MAX);
		n += sum_blocks(wb, k);
	} while (k == WALK_MAX);
	return (n);
}

/*
 * fpt over the whole stream, one item per fpt_next() call, or with @runs
 * the way segfast.c takes blocks: after each block item, the rest of its
 * memoized run, then run after run from the TNT bits at hand (no limit:
 * segfast.c stops every 4096 blocks for the indexer's progress checks).
 * Instructions; @why set when unsupported.
 */
static inline __attribute__((always_inline)) uint64_t
run_fpt_loop(struct fpt *d, int runs, const char **why)
{
	const struct fpt_block *b;
	struct fpt_memo *m;
	struct fpt_item it;
	uint64_t n = 0;
	size_t k;
	int rc;

	*why = NULL;
	rc = fpt_sync_forward(d);
	while (rc == 0 && (rc = fpt_next(d, &it)) == 0) {
		/*
		 * A block after which fpt says no run follows (ixgen's),
		 * tested first: both bytes at once, so that this loop
		 * tests no more than the item loop does.
		 */
		if (runs && it.kind == FPT_ITEM_BLOCK && !it.runs) {
			n += it.block.ninsn;
			/* As segfast.c: the walk's blocks next, if any. */
			n += walk_fpt(d);
			continue;
		}
		if (it.kind != FPT_ITEM_BLOCK) {
			if (it.event.kind == FPT_EV_ERROR)
				rc = fpt_sync_forward(d);
			continue;
		}
		n += it.block.ninsn;
		/* As segfast.c: no run machinery where fpt says none is. */
		if (!runs)
			continue;
		if ((k = fpt_run_rest(d, &b, &m)) > 0) {
			n += sum_blocks(b, k);
			fpt_run_take(d, k);
		}
		while ((k = fpt_run_next(d, SIZE_MAX, &b, &m)) > 0)
			n += sum_blocks(b, k);
	}
	if (rc == -HWTR_E_UNSUPPORTED)
		*why = fpt_unsupported(d);
	return (n);
}

/* run_fpt_loop(), each loop made apart: neither tests @runs per block. */
static uint64_t
run_fpt(struct fpt *d, int runs, const char **why)
{
	return (runs ? run_fpt_loop(d, 1, why) : run_fpt_loop(d, 0, why));
}

struct total {
	uint64_t	bytes, ninsn, lns;
	uint64_t	fninsn[NLOOP], fns[NLOOP];
	int		runs, fpt_only, bad;
	int		loop[NLOOP];	/* which loops run */
};

static void
bench_stream(void *ctx, size_t s, const uint8_t *buf, size_t len,
    struct tf_img *im, struct pt_config *cfg, struct fpt_config *fc)
{
	struct total *t = ctx;
	int runs = t->runs;
	char what[64];
	uint64_t lns = UINT64_MAX, n = 0, t0, t1;
	uint64_t fns[NLOOP] = { UINT64_MAX, UINT64_MAX }, fn[NLOOP] = { 0 };
	const char *why[NLOOP] = { NULL };
	struct pt_image *img;
	int r, l;

	snprintf(what, sizeof(what), "stream %zu", s);
	if ((img = tf_pt_image(im)) == NULL)
		errx(1, "%s: cannot make libipt's image", what);
	for (r = 0; r < runs; r++) {
		struct pt_block_decoder *d = pt_blk_alloc_decoder(cfg);

		if (d == NULL || pt_blk_set_image(d, img) < 0)
			errx(1, "%s: cannot allocate libipt's decoder", what);
		if (!t->fpt_only) {
			t0 = cpu_ns();
			n = run_libipt(d);
			t1 = cpu_ns();
			if (t1 - t0 < lns)
				lns = t1 - t0;
		}
		pt_blk_free_decoder(d);
		for (l = 0; l < NLOOP; l++) {
			struct fpt *f;
			uint64_t c;

			if (!t->loop[l])
				continue;
			if (fpt_new(&f, fc) < 0)
				errx(1, "%s: cannot allocate fpt", what);
			t0 = cpu_ns();
			c = run_fpt(f, l == L_RUNS, &why[l]);
			t1 = cpu_ns();
			fpt_free(f);
			if (t1 - t0 < fns[l])
				fns[l] = t1 - t0;
			if (r > 0 && c != fn[l]) {
				warnx("%s %s: %" PRIu64 " instructions, %"
				    PRIu64 " the round before", what,
				    loop_name[l], c, fn[l]);
				t->bad = 1;
			}
			fn[l] = c;
		}
	}
	pt_image_free(img);
	if (t->fpt_only)
		lns = 0;
	if (lns == 0)
		lns = 1;
	for (l = 0; l < NLOOP; l++) {
		if (!t->loop[l])
			continue;
		if (fns[l] == 0)
			fns[l] = 1;
		printf("%s %s: %zu bytes, %" PRIu64 " instructions, libipt %"
		    PRIu64 " ns (%.0f/s), fpt %" PRIu64 " instructions %"
		    PRIu64 " ns (%.0f/s), ratio %.2f%s%s\n", what,
		    loop_name[l], len, n, lns, n * 1e9 / (double)lns, fn[l],
		    fns[l], fn[l] * 1e9 / (double)fns[l], n == 0 ? 0.0 :
		    ((double)fn[l] / (double)fns[l]) / ((double)n /
		    (double)lns), why[l] ? ", unsupported: " : "",
		    why[l] ? why[l] : "");
		/* libipt's count unless fpt handed the stream back. */
		if (!t->fpt_only && why[l] == NULL && fn[l] != n) {
			warnx("%s %s: fpt counted %" PRIu64 " instructions, "
			    "libipt %" PRIu64, what, loop_name[l], fn[l], n);
			t->bad = 1;
		}
		t->fninsn[l] += fn[l];
		t->fns[l] += fns[l];
	}
	/* The run API takes the blocks fpt_next() would give. */
	if (t->loop[L_RUNS] && t->loop[L_ITEMS] &&
	    fn[L_RUNS] != fn[L_ITEMS]) {
		warnx("%s: the run loop counted %" PRIu64 " instructions, "
		    "the item loop %" PRIu64, what, fn[L_RUNS], fn[L_ITEMS]);
		t->bad = 1;
	}
	t->bytes += len;
	t->ninsn += n;
	t->lns += lns;
}

static void
usage(void)
{
	fprintf(stderr, "usage: fptbare [-F] [-R | -1] [-r RUNS] -a "
	    "ARCHIVE\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	struct total t;
	char emsg[256], tmpl[] = "/tmp/fptbare.XXXXXX";
	const char *path = NULL;
	int c, l, runs = 3, rc;

	memset(&t, 0, sizeof(t));
	t.loop[L_RUNS] = t.loop[L_ITEMS] = 1;
	while ((c = getopt(argc, argv, "1FRa:r:")) != -1) {
		switch (c) {
		case '1':
			if (!t.loop[L_ITEMS])
				usage();
			t.loop[L_RUNS] = 0;
			break;
		case 'F':
			t.fpt_only = 1;
			break;
		case 'R':
			if (!t.loop[L_RUNS])
				usage();
			t.loop[L_ITEMS] = 0;
			break;
		case 'a':
			path = optarg;
			break;
		case 'r':
			runs = atoi(optarg);
			if (runs < 1 || runs > 100)
				errx(2, "-r: expected 1 to 100 runs, got "
				    "'%s'", optarg);
			break;
		default:
			usage();
		}
	}
	if (path == NULL || optind != argc)
		usage();
	if (mkdtemp(tmpl) == NULL)
		err(1, "mkdtemp");
	t.runs = runs;
	rc = tf_archive_each(path, tmpl, bench_stream, &t, emsg, sizeof(emsg));
	rmdir(tmpl);
	if (rc < 0)
		errx(1, "%s", emsg);
	for (l = 0; l < NLOOP; l++) {
		if (!t.loop[l])
			continue;
		printf("total %s: %" PRIu64 " bytes, %" PRIu64 " instructions, "
		    "libipt %" PRIu64 " ns, fpt %" PRIu64 " instructions %"
		    PRIu64 " ns, ratio %.2f\n", loop_name[l], t.bytes,
		    t.ninsn, t.lns, t.fninsn[l], t.fns[l], t.fns[l] &&
		    t.lns && t.ninsn ? ((double)t.fninsn[l] /
		    (double)t.fns[l]) / ((double)t.ninsn / (double)t.lns) :
		    0.0);
	}
	if (t.bad)
		errx(1, "the counts differ (above)");
	return (0);
}
