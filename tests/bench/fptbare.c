/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * fptbare: fpt, the indexer's own Intel PT decoder, alone, against
 * libipt's block decoder alone (ixbare's loop) on the same trace and
 * code, in CPU time (issue 29: fpt at 8 times ixbare's instructions per
 * CPU-second).  Both run ptxed's loop to the end of each stream, nothing
 * stored; setup (reading the archive, the images, allocating the
 * decoders) is not timed.  Each decoder runs @runs times (-r, default 3)
 * and the best run counts.  A stream fpt says is unsupported is counted
 * and its time still measured up to that point, and said.  -F runs fpt
 * alone (for a profiler; no ratio then).
 *
 * fptbare [-F] [-r RUNS] -a ARCHIVE
 * Prints per stream and in total:
 *   stream S: BYTES bytes, I instructions, libipt NS ns (IPS/s),
 *     fpt NS ns (IPS/s), ratio R[, unsupported: WHY]
 *   total: ... ratio R
 */

#include <err.h>
#include <inttypes.h>
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

/* fpt over the whole stream: instructions; @why set when unsupported. */
static uint64_t
run_fpt(struct fpt *d, const char **why)
{
	struct fpt_item it;
	uint64_t n = 0;
	int rc;

	*why = NULL;
	rc = fpt_sync_forward(d);
	while (rc == 0) {
		rc = fpt_next(d, &it);
		if (rc == -HWTR_E_UNSUPPORTED) {
			*why = fpt_unsupported(d);
			break;
		}
		if (rc != 0)
			break;
		if (it.kind == FPT_ITEM_BLOCK)
			n += it.block.ninsn;
		else if (it.event.kind == FPT_EV_ERROR)
			rc = fpt_sync_forward(d);
	}
	return (n);
}

struct total {
	uint64_t	bytes, ninsn, fninsn, lns, fns;
	int		runs, fpt_only;
};

static void
bench_stream(void *ctx, size_t s, const uint8_t *buf, size_t len,
    struct tf_img *im, struct pt_config *cfg, struct fpt_config *fc)
{
	struct total *t = ctx;
	int runs = t->runs;
	char what[64];
	uint64_t lns = UINT64_MAX, fns = UINT64_MAX, n = 0, fn = 0, t0, t1;
	const char *why = NULL;
	struct pt_image *img;
	int r;

	snprintf(what, sizeof(what), "stream %zu", s);
	if ((img = tf_pt_image(im)) == NULL)
		errx(1, "%s: cannot make libipt's image", what);
	for (r = 0; r < runs; r++) {
		struct pt_block_decoder *d = pt_blk_alloc_decoder(cfg);
		struct fpt *f;

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
		if (fpt_new(&f, fc) < 0)
			errx(1, "%s: cannot allocate fpt", what);
		t0 = cpu_ns();
		fn = run_fpt(f, &why);
		t1 = cpu_ns();
		if (t1 - t0 < fns)
			fns = t1 - t0;
		fpt_free(f);
	}
	pt_image_free(img);
	if (t->fpt_only)
		lns = 0;
	if (lns == 0)
		lns = 1;
	if (fns == 0)
		fns = 1;
	printf("%s: %zu bytes, %" PRIu64 " instructions, libipt %" PRIu64
	    " ns (%.0f/s), fpt %" PRIu64 " instructions %" PRIu64
	    " ns (%.0f/s), ratio %.2f%s%s\n", what, len, n, lns,
	    n * 1e9 / (double)lns, fn, fns, fn * 1e9 / (double)fns,
	    n == 0 ? 0.0 : ((double)fn / (double)fns) / ((double)n /
	    (double)lns), why ? ", unsupported: " : "", why ? why : "");
	t->bytes += len;
	t->ninsn += n;
	t->fninsn += fn;
	t->lns += lns;
	t->fns += fns;
}

int
main(int argc, char **argv)
{
	struct total t;
	char emsg[256], tmpl[] = "/tmp/fptbare.XXXXXX";
	const char *path = NULL;
	int c, runs = 3, rc;

	memset(&t, 0, sizeof(t));
	while ((c = getopt(argc, argv, "Fa:r:")) != -1) {
		switch (c) {
		case 'F':
			t.fpt_only = 1;
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
			fprintf(stderr, "usage: fptbare [-F] [-r RUNS] -a "
			    "ARCHIVE\n");
			return (2);
		}
	}
	if (path == NULL || optind != argc) {
		fprintf(stderr, "usage: fptbare [-F] [-r RUNS] -a "
		    "ARCHIVE\n");
		return (2);
	}
	if (mkdtemp(tmpl) == NULL)
		err(1, "mkdtemp");
	t.runs = runs;
	rc = tf_archive_each(path, tmpl, bench_stream, &t, emsg, sizeof(emsg));
	rmdir(tmpl);
	if (rc < 0)
		errx(1, "%s", emsg);
	printf("total: %" PRIu64 " bytes, %" PRIu64 " instructions, libipt %"
	    PRIu64 " ns, fpt %" PRIu64 " instructions %" PRIu64 " ns, "
	    "ratio %.2f\n", t.bytes, t.ninsn, t.lns, t.fninsn, t.fns,
	    t.fns && t.lns && t.ninsn ? ((double)t.fninsn / (double)t.fns) /
	    ((double)t.ninsn / (double)t.lns) : 0.0);
	return (0);
}
