/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * One trace through both Intel PT decoders, libipt's block decoder and
 * fpt, over the same code (hwtr_test_fpt.h's image), for the tests that
 * compare them (tests/fuzz/fuzz_fpt.c; tests/indexer/t_fpt.c may too).
 */

#ifndef HWTR_TEST_FPTBOTH_H
#define HWTR_TEST_FPTBOTH_H

#include <pthread.h>

#include "hwtr_test_fpt.h"

/*
 * libipt's block decoder follows a loop of direct jumps by recursion, a
 * frame (208 bytes in Debian's build) per instruction up to a block's
 * 65,535: more than a thread's 8 MiB (the fuzzer found one, seed 12727).
 * The indexer gives it a stack of its own (decode.c, IX_DEC_STACK); so
 * do these tests, a thread's of this size.
 */
#define TF_LIBIPT_STACK	((size_t)32 << 20)

struct tf_libipt_job {
	struct pt_block_decoder *bd;
	struct tf_items	*want;
};

static inline void *
tf_libipt_thread(void *arg)
{
	struct tf_libipt_job *j = arg;

	tf_run_libipt(j->bd, j->want);
	return (NULL);
}

/* tf_run_libipt() on a stack of TF_LIBIPT_STACK (the caller's if none). */
static inline void
tf_run_libipt_deep(struct pt_block_decoder *bd, struct tf_items *want)
{
	struct tf_libipt_job j = { bd, want };
	pthread_attr_t attr;
	pthread_t t;
	int started;

	if (pthread_attr_init(&attr) != 0) {
		tf_run_libipt(bd, want);
		return;
	}
	started = pthread_attr_setstacksize(&attr, TF_LIBIPT_STACK) == 0 &&
	    pthread_create(&t, &attr, tf_libipt_thread, &j) == 0;
	pthread_attr_destroy(&attr);
	if (started)
		(void)pthread_join(t, NULL);
	else
		tf_run_libipt(bd, want);
}

/*
 * Decode [@pt, @pt + @len) with @cfg (libipt) into @want and with @fc
 * (fpt; its read_code and ctx set by the caller) into @got, at most @max
 * items and @max_insns instructions each: code that loops without trace
 * gives blocks for ever.  0, or -1 when a decoder cannot be made (what
 * in @why).
 */
static inline int
tf_run_both(const uint8_t *pt, size_t len, const struct tf_img *im,
    const struct pt_config *cfg, const struct fpt_config *fc, size_t max,
    uint64_t max_insns, struct tf_items *want, struct tf_items *got,
    const char **why)
{
	struct pt_config c = *cfg;
	struct fpt_config f = *fc;
	struct pt_block_decoder *bd;
	struct pt_image *img;
	struct fpt *d;

	memset(want, 0, sizeof(*want));
	memset(got, 0, sizeof(*got));
	want->max = got->max = max;
	want->max_insns = got->max_insns = max_insns;
	c.begin = (uint8_t *)(uintptr_t)pt;
	c.end = (uint8_t *)(uintptr_t)pt + len;
	f.begin = pt;
	f.end = pt + len;
	*why = "libipt image";
	if ((img = tf_pt_image(im)) == NULL)
		return (-1);
	*why = "libipt decoder";
	if ((bd = pt_blk_alloc_decoder(&c)) == NULL ||
	    pt_blk_set_image(bd, img) != 0) {
		pt_blk_free_decoder(bd);
		pt_image_free(img);
		return (-1);
	}
	tf_run_libipt_deep(bd, want);
	pt_blk_free_decoder(bd);
	pt_image_free(img);
	*why = "fpt_new";
	if (fpt_new(&d, &f) != 0)
		return (-1);
	tf_run_fpt(d, got);
	fpt_free(d);
	return (0);
}

#endif /* !HWTR_TEST_FPTBOTH_H */
