/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Unit tests of hwtr_bsearch() (common/common.c), held to a linear scan:
 * the first index whose element is not below the key, on sorted arrays
 * with runs of equal values, every key from under the first to over the
 * last, and with no more probes than a binary search makes.
 */

#include <atf-c.h>
#include <stdint.h>
#include <stdlib.h>

#include "hwtrace.h"
#include "hwtr_common.h"

struct probe {
	const int	*v;
	size_t		 n;
	int		 key;
	int		 le;	/* below: v[i] <= key (else v[i] < key) */
	unsigned	 calls;
	int		 outside;
};

static int
below(const void *key, const void *base, size_t i)
{
	struct probe *p = (struct probe *)(uintptr_t)key;

	ATF_REQUIRE(base == p->v);
	p->calls++;
	if (i >= p->n)
		p->outside = 1;
	return (p->le ? p->v[i] <= p->key : p->v[i] < p->key);
}

/* The same answer by looking at every element. */
static size_t
linear(const struct probe *p)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		if (p->le ? p->v[i] > p->key : p->v[i] >= p->key)
			break;
	return (i);
}

static unsigned
log2_ceil(size_t n)
{
	unsigned k = 0;

	while (((size_t)1 << k) < n)
		k++;
	return (k);
}

ATF_TC_WITHOUT_HEAD(matches_a_linear_scan);
ATF_TC_BODY(matches_a_linear_scan, tc)
{
	int v[64];
	struct probe p;
	size_t n, i, got, want;
	unsigned seed = 12345;

	for (n = 0; n <= 64; n++) {
		/* Ascending, with repeats: steps of 0, 1 or 2. */
		for (i = 0; i < n; i++) {
			seed = seed * 1103515245u + 12345u;
			v[i] = (i ? v[i - 1] : 0) + (int)((seed >> 16) % 3);
		}
		for (p.key = -2; p.key <= (n ? v[n - 1] : 0) + 2; p.key++) {
			for (p.le = 0; p.le <= 1; p.le++) {
				p.v = v;
				p.n = n;
				p.calls = 0;
				p.outside = 0;
				got = hwtr_bsearch(&p, v, n, below);
				want = linear(&p);
				ATF_CHECK_MSG(got == want, "n %zu key %d %s: "
				    "index %zu, expected %zu", n, p.key,
				    p.le ? "<=" : "<", got, want);
				ATF_CHECK_MSG(!p.outside, "n %zu key %d: "
				    "probed past the end", n, p.key);
				ATF_CHECK_MSG(p.calls <= log2_ceil(n + 1),
				    "n %zu: %u probes, expected at most %u",
				    n, p.calls, log2_ceil(n + 1));
			}
		}
	}
}

ATF_TC_WITHOUT_HEAD(empty_asks_nothing);
ATF_TC_BODY(empty_asks_nothing, tc)
{
	struct probe p = { NULL, 0, 0, 0, 0, 0 };

	ATF_CHECK_EQ(hwtr_bsearch(&p, NULL, 0, below), 0);
	ATF_CHECK_MSG(p.calls == 0, "%u probes of nothing, expected 0",
	    p.calls);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, matches_a_linear_scan);
	ATF_TP_ADD_TC(tp, empty_asks_nothing);
	return (atf_no_error());
}
