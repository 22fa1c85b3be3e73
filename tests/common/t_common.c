/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Unit tests of common/: error strings, time conversion, names, growth,
 * SHA-256's two implementations.
 */

#include <atf-c.h>
#include <stdint.h>
#include <stdio.h>
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

/* The digest of @len bytes at @p fed in pieces of @piece bytes, as hex. */
static void
sha_hex(const uint8_t *p, size_t len, size_t piece, char hex[65])
{
	struct hwtr_sha256 s;
	uint8_t d[32];
	size_t i, k;

	hwtr_sha256_init(&s);
	for (i = 0; i < len; i += k) {
		k = len - i < piece ? len - i : piece;
		hwtr_sha256_update(&s, p + i, k);
	}
	hwtr_sha256_final(&s, d);
	hwtr_hex(hex, d, 32);
}

/* sha256sum's digest of @len bytes at @p (written to a file first). */
static void
sha256sum_hex(const uint8_t *p, size_t len, char hex[65])
{
	FILE *f;

	ATF_REQUIRE((f = fopen("in.bin", "wb")) != NULL);
	ATF_REQUIRE_EQ(fwrite(p, 1, len, f), len);
	ATF_REQUIRE_EQ(fclose(f), 0);
	ATF_REQUIRE((f = popen("sha256sum in.bin", "r")) != NULL);
	ATF_REQUIRE(fgets(hex, 65, f) != NULL);
	ATF_REQUIRE_EQ(pclose(f), 0);
	hex[64] = '\0';
}

/*
 * The SHA extensions' rounds (common/sha256.c) and the portable ones
 * give the same digests: FIPS 180-4's "abc" and two-block examples, then
 * pseudo-random messages of every length up to 300 bytes and some long
 * ones, each fed whole and in uneven pieces (the block-at-a-time path
 * and the many-blocks path), against each other and, for a few, against
 * coreutils' sha256sum.  Skips where the processor has no SHA
 * extensions: only the portable rounds run there.
 */
ATF_TC_WITHOUT_HEAD(sha256_accel_same_digests);
ATF_TC_BODY(sha256_accel_same_digests, tc)
{
	static const size_t longs[] = { 4096, 65536 + 17, 1048576 + 63 };
	static const size_t pieces[] = { 1, 7, 64, 65, 1000, SIZE_MAX };
	char a[65], b[65], c[65];
	uint8_t *buf;
	uint64_t x = 0x9e3779b97f4a7c15u;
	size_t len, i, j, maxlen = 1048576 + 63;

	if (!hwtr_sha256_accel(-1))
		atf_tc_skip("this processor has no SHA extensions: only the "
		    "portable rounds run here");
	ATF_REQUIRE((buf = malloc(maxlen)) != NULL);
	for (i = 0; i < maxlen; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		buf[i] = (uint8_t)(x >> 32);
	}
	for (i = 0; i < 2; i++) {
		ATF_REQUIRE_EQ(hwtr_sha256_accel(i == 0), i == 0);
		sha_hex((const uint8_t *)"abc", 3, SIZE_MAX, a);
		ATF_CHECK_STREQ(a, "ba7816bf8f01cfea414140de5dae2223b00361a396"
		    "177a9cb410ff61f20015ad");
		sha_hex((const uint8_t *)"abcdbcdecdefdefgefghfghighijhijkijkl"
		    "jklmklmnlmnomnopnopq", 56, 5, a);
		ATF_CHECK_STREQ(a, "248d6a61d20638b8e5c026930c3e6039a33ce45964"
		    "ff2167f6ecedd419db06c1");
	}
	for (len = 0; len <= 300 + sizeof(longs) / sizeof(longs[0]); len++) {
		size_t n = len <= 300 ? len : longs[len - 301];

		for (j = 0; j < sizeof(pieces) / sizeof(pieces[0]); j++) {
			ATF_REQUIRE(hwtr_sha256_accel(1));
			sha_hex(buf, n, pieces[j], a);
			ATF_REQUIRE_EQ(hwtr_sha256_accel(0), 0);
			sha_hex(buf, n, pieces[j], b);
			ATF_CHECK_STREQ_MSG(a, b, "%zu bytes in pieces of %zu",
			    n, pieces[j]);
		}
		if (n % 61 == 0 || n > 300) {
			sha256sum_hex(buf, n, c);
			ATF_CHECK_STREQ_MSG(a, c, "%zu bytes against sha256sum",
			    n);
		}
	}
	free(buf);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, errstr_covers_every_code);
	ATF_TP_ADD_TC(tp, tsc_to_ns_scales_both_ways);
	ATF_TP_ADD_TC(tp, sideband_type_names);
	ATF_TP_ADD_TC(tp, grow_doubles_and_keeps);
	ATF_TP_ADD_TC(tp, sha256_accel_same_digests);
	return (atf_no_error());
}
