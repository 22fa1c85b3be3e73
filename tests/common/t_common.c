/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/* Unit tests of common/: error strings, time conversion, names, growth. */

#include <atf-c.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hwtrace.h"
#include "hwtr_common.h"
#include "hwtr_test.h"

ATF_TC_WITHOUT_HEAD(errstr_covers_every_code);
ATF_TC_BODY(errstr_covers_every_code, tc)
{
	int e;

	for (e = 0; e < HWTR_E_MAX; e++)
		ATF_CHECK_MSG(strcmp(hwtr_errstr(-e), "unknown error") != 0,
		    "error %d has no string", e);
	ATF_CHECK_STREQ(hwtr_errstr(-HWTR_E_MAX), "unknown error");
	ATF_CHECK_STREQ(hwtr_errstr(-HWTR_E_TRUNCATED), "truncated input");
}

ATF_TC_WITHOUT_HEAD(tsc_to_ns_scales_both_ways);
ATF_TC_BODY(tsc_to_ns_scales_both_ways, tc)
{
	/* 2 GHz TSC: ns = tsc / 2, as mult 2^31 shift 32. */
	struct hwtr_timeconv c = { 1, 1000, 5000000000LL, 1u << 31, 32 };

	ATF_CHECK_EQ(hwtr_tsc_to_ns(&c, 1000), 5000000000LL);
	ATF_CHECK_EQ(hwtr_tsc_to_ns(&c, 3000), 5000001000LL);
	ATF_CHECK_EQ(hwtr_tsc_to_ns(&c, 0), 5000000000LL - 500);
	/* Large deltas do not overflow 64 bits in between. */
	ATF_CHECK_EQ(hwtr_tsc_to_ns(&c, 1000 + (1ULL << 62)),
	    5000000000LL + (1LL << 61));
	c.valid = 0;
	ATF_CHECK_EQ(hwtr_tsc_to_ns(&c, 3000), 0);
}

ATF_TC_WITHOUT_HEAD(sideband_type_names);
ATF_TC_BODY(sideband_type_names, tc)
{
	int t;

	for (t = 1; t < HWTR_SB_MAX; t++)
		ATF_CHECK_MSG(strcmp(hwtr_sb_type_name(t), "unknown") != 0,
		    "sideband type %d has no name", t);
	ATF_CHECK_STREQ(hwtr_sb_type_name(HWTR_SB_MMAP), "mmap");
	ATF_CHECK_STREQ(hwtr_sb_type_name(0), "unknown");
	ATF_CHECK_STREQ(hwtr_sb_type_name(HWTR_SB_MAX), "unknown");
}

/*
 * hwtr_grow: capacities by construction (16, then doubled until the need
 * fits), the elements kept, and a request whose bytes overflow size_t
 * refused with the array left as it was.
 */
ATF_TC_WITHOUT_HEAD(grow_doubles_and_keeps);
ATF_TC_BODY(grow_doubles_and_keeps, tc)
{
	uint32_t *v = NULL;
	size_t cap = 0, i;

	ATF_REQUIRE_EQ(hwtr_grow(&v, &cap, 0, sizeof(*v)), 0);
	ATF_CHECK_MSG(v == NULL && cap == 0, "need 0: expected no array, "
	    "got %p of %zu", (void *)v, cap);
	ATF_REQUIRE_EQ(hwtr_grow(&v, &cap, 1, sizeof(*v)), 0);
	ATF_CHECK_MSG(v != NULL && cap == 16, "need 1: expected 16, got %zu",
	    cap);
	for (i = 0; i < 16; i++)
		v[i] = (uint32_t)i * 7;
	ATF_REQUIRE_EQ(hwtr_grow(&v, &cap, 16, sizeof(*v)), 0);
	ATF_CHECK_MSG(cap == 16, "need 16 of 16: expected 16, got %zu", cap);
	ATF_REQUIRE_EQ(hwtr_grow(&v, &cap, 17, sizeof(*v)), 0);
	ATF_CHECK_MSG(cap == 32, "need 17: expected 32, got %zu", cap);
	ATF_REQUIRE_EQ(hwtr_grow(&v, &cap, 100, sizeof(*v)), 0);
	ATF_CHECK_MSG(cap == 128, "need 100 of 32: expected 128, got %zu", cap);
	for (i = 0; i < 16; i++)
		ATF_CHECK_MSG(v[i] == (uint32_t)i * 7, "element %zu: expected "
		    "%u, got %u", i, (unsigned)i * 7, (unsigned)v[i]);
	ATF_CHECK_EQ(hwtr_grow(&v, &cap, SIZE_MAX / 2, sizeof(*v)),
	    -HWTR_E_NOMEM);
	ATF_CHECK_MSG(cap == 128 && v != NULL && v[15] == 105, "after a "
	    "refused growth: expected the array of 128 kept, got %zu", cap);
	free(v);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, errstr_covers_every_code);
	ATF_TP_ADD_TC(tp, tsc_to_ns_scales_both_ways);
	ATF_TP_ADD_TC(tp, sideband_type_names);
	ATF_TP_ADD_TC(tp, grow_doubles_and_keeps);
	return (atf_no_error());
}
