/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/* Unit tests of common/: error strings, time conversion, names. */

#include <atf-c.h>
#include <string.h>

#include "hwtrace.h"
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

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, errstr_covers_every_code);
	ATF_TP_ADD_TC(tp, tsc_to_ns_scales_both_ways);
	ATF_TP_ADD_TC(tp, sideband_type_names);
	return (atf_no_error());
}
