/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/* Unit tests of hwtr_grow() (common/grow.c). */

#include <atf-c.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hwtrace.h"
#include "hwtr_common.h"

ATF_TC_WITHOUT_HEAD(grows_by_doubling);
ATF_TC_BODY(grows_by_doubling, tc)
{
	uint32_t *a = NULL;
	size_t cap = 0, i;

	/* Nothing needed: nothing allocated. */
	ATF_REQUIRE_EQ(hwtr_grow((void **)&a, &cap, 0, sizeof(*a)), 0);
	ATF_CHECK(a == NULL);
	ATF_CHECK_EQ(cap, 0);
	/* 16 at first, then doubled until the need fits. */
	ATF_REQUIRE_EQ(hwtr_grow((void **)&a, &cap, 1, sizeof(*a)), 0);
	ATF_REQUIRE(a != NULL);
	ATF_CHECK_MSG(cap == 16, "capacity %zu for 1, expected 16", cap);
	for (i = 0; i < 16; i++)
		a[i] = (uint32_t)i;
	ATF_REQUIRE_EQ(hwtr_grow((void **)&a, &cap, 16, sizeof(*a)), 0);
	ATF_CHECK_MSG(cap == 16, "capacity %zu for 16, expected 16", cap);
	ATF_REQUIRE_EQ(hwtr_grow((void **)&a, &cap, 17, sizeof(*a)), 0);
	ATF_CHECK_MSG(cap == 32, "capacity %zu for 17, expected 32", cap);
	ATF_REQUIRE_EQ(hwtr_grow((void **)&a, &cap, 200, sizeof(*a)), 0);
	ATF_CHECK_MSG(cap == 256, "capacity %zu for 200, expected 256", cap);
	/* The elements already there are kept. */
	for (i = 0; i < 16; i++)
		ATF_CHECK_MSG(a[i] == i, "a[%zu] = %u after growing", i,
		    (unsigned)a[i]);
	a[255] = 7;
	free(a);
}

ATF_TC_WITHOUT_HEAD(refuses_overflow);
ATF_TC_BODY(refuses_overflow, tc)
{
	char *p = NULL;
	uint64_t *q = NULL;
	size_t cap = 0, qcap = 0;

	ATF_REQUIRE_EQ(hwtr_grow((void **)&p, &cap, 4, 1), 0);
	memcpy(p, "abc", 4);
	/* More bytes than a size_t holds once doubled: refused, unchanged. */
	ATF_CHECK_EQ(hwtr_grow((void **)&p, &cap, SIZE_MAX, 1),
	    -HWTR_E_NOMEM);
	ATF_CHECK_EQ(cap, 16);
	ATF_CHECK_STREQ(p, "abc");
	/* Elements whose total overflows: refused before realloc. */
	ATF_CHECK_EQ(hwtr_grow((void **)&q, &qcap, SIZE_MAX / 4,
	    sizeof(*q)), -HWTR_E_NOMEM);
	ATF_CHECK(q == NULL);
	ATF_CHECK_EQ(qcap, 0);
	free(p);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, grows_by_doubling);
	ATF_TP_ADD_TC(tp, refuses_overflow);
	return (atf_no_error());
}
