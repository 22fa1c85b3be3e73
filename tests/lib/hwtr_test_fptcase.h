/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * A hand-built trace over a few bytes of code, through libipt and fpt,
 * as an ATF case checks it (tests/indexer/t_fpthot.c, t_fptexit.c).
 */

#ifndef HWTR_TEST_FPTCASE_H
#define HWTR_TEST_FPTCASE_H

#include <atf-c.h>
#include <stdio.h>
#include <stdlib.h>

#include "hwtr_test_fptboth.h"

/*
 * fpt on @pt over @code (at 0x1000, written to code.bin), with the map
 * callback its hot path needs, must give libipt's items, @nitems of them
 * (by construction), whole or (unless @whole) some and then unsupported.
 * With @dump set in the environment, libipt's items are printed.
 */
static inline void
tf_case(const char *what, const uint8_t *code, size_t clen,
    const uint8_t *pt, size_t len, size_t nitems, int whole,
    const char *dump)
{
	struct tf_items want, got;
	struct pt_config cfg;
	struct fpt_config fc;
	struct tf_img *im;
	const char *why;
	char msg[512], b[160];
	size_t i;
	FILE *fp;

	ATF_REQUIRE((fp = fopen("code.bin", "wb")) != NULL);
	ATF_REQUIRE(fwrite(code, 1, clen, fp) == clen && fclose(fp) == 0);
	ATF_REQUIRE((im = calloc(1, sizeof(*im))) != NULL);
	ATF_REQUIRE(tf_img_add(im, "code.bin", code, 0, clen, 0x1000) == 0);
	pt_config_init(&cfg);
	memset(&fc, 0, sizeof(fc));
	fc.read_code = tf_read_code;
	fc.map = tf_map;
	fc.ctx = im;
	if (tf_run_both(pt, len, im, &cfg, &fc, 10000, 10000, &want, &got,
	    &why) != 0)
		atf_tc_fail("%s: %s failed", what, why);
	if (getenv(dump) != NULL)
		for (i = 0; i < want.n; i++) {
			tf_fmt(&want.v[i], b, sizeof(b));
			printf("%s %zu: %s\n", what, i, b);
		}
	if (tf_compare(&want, &got, msg, sizeof(msg)) != 0)
		atf_tc_fail("%s: %s", what, msg);
	ATF_CHECK_MSG(!whole || got.unsup == NULL, "%s: expected fpt to "
	    "decode it whole, it said unsupported: %s", what, got.unsup);
	ATF_CHECK_MSG(want.n == nitems, "%s: expected %zu items, libipt "
	    "gave %zu", what, nitems, want.n);
	tf_items_free(&want);
	tf_items_free(&got);
	free(im);
}

#endif /* !HWTR_TEST_FPTCASE_H */
