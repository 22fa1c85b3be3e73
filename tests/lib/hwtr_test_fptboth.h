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

#include "hwtr_test_fpt.h"

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
	tf_run_libipt(bd, want);
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
