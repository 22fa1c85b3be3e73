/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * SHA-256 as specified by FIPS 180-4, section 6.2.  Images are keyed by
 * their content hash and the archive's table of contents carries one per
 * member, so the project needs it without linking a crypto library.
 *
 * On x86-64 processors with the SHA extensions (CPUID.(EAX=7,ECX=0):EBX
 * bit 29, with SSSE3 and SSE4.1) the compression function runs on
 * SHA256RNDS2/MSG1/MSG2, chosen once at run time: a capture hashes every
 * member it writes (gz8's 67.5 MB of PT: 1.8% of the capture's CPU with
 * the portable rounds).  The two give the same digests: t_common checks
 * them against each other and against FIPS 180-4's examples.
 */

#include <stdatomic.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>
#define SHA_X86	1
#endif

#include "hwtr_common.h"

static const uint32_t K[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
	0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
	0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
	0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
	0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
	0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
	0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
	0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2
};

#define ROTR(x, n)	(((x) >> (n)) | ((x) << (32 - (n))))
#define CH(x, y, z)	(((x) & (y)) ^ (~(x) & (z)))
#define MAJ(x, y, z)	(((x) & (y)) ^ ((x) & (z)) ^ ((y) & (z)))
#define BSIG0(x)	(ROTR(x, 2) ^ ROTR(x, 13) ^ ROTR(x, 22))
#define BSIG1(x)	(ROTR(x, 6) ^ ROTR(x, 11) ^ ROTR(x, 25))
#define SSIG0(x)	(ROTR(x, 7) ^ ROTR(x, 18) ^ ((x) >> 3))
#define SSIG1(x)	(ROTR(x, 17) ^ ROTR(x, 19) ^ ((x) >> 10))

static void
sha256_block_c(uint32_t h[8], const uint8_t *p)
{
	uint32_t w[64], a, b, c, d, e, f, g, hh, t1, t2;
	int t;

	for (t = 0; t < 16; t++)
		w[t] = (uint32_t)p[4 * t] << 24 | (uint32_t)p[4 * t + 1] << 16 |
		    (uint32_t)p[4 * t + 2] << 8 | p[4 * t + 3];
	for (; t < 64; t++)
		w[t] = SSIG1(w[t - 2]) + w[t - 7] + SSIG0(w[t - 15]) + w[t - 16];
	a = h[0]; b = h[1]; c = h[2]; d = h[3];
	e = h[4]; f = h[5]; g = h[6]; hh = h[7];
	for (t = 0; t < 64; t++) {
		t1 = hh + BSIG1(e) + CH(e, f, g) + K[t] + w[t];
		t2 = BSIG0(a) + MAJ(a, b, c);
		hh = g; g = f; f = e; e = d + t1;
		d = c; c = b; b = a; a = t1 + t2;
	}
	h[0] += a; h[1] += b; h[2] += c; h[3] += d;
	h[4] += e; h[5] += f; h[6] += g; h[7] += hh;
}

#ifdef SHA_X86
/*
 * @n blocks with the SHA extensions.  They keep the eight working
 * variables as two vectors, ABEF and CDGH (A in the highest lane); each
 * SHA256RNDS2 does two rounds from the low two lanes of its message-plus-
 * constant operand.  The schedule is made four words at a time: MSG1 adds
 * sigma0 of the words 15 back, the words 7 back are added (an ALIGNR of
 * the two groups before), and MSG2 adds sigma1 of the words 2 back.
 */
__attribute__((target("sha,sse4.1,ssse3")))
static void
sha256_blocks_x86(uint32_t h[8], const uint8_t *p, size_t n)
{
	const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL,
	    0x0405060700010203LL);
	__m128i abef, cdgh, t, save0, save1, m[4], wk;
	int g;

	/* h[0..3] = A B C D, h[4..7] = E F G H, A in the lowest lane. */
	t = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&h[0]), 0xb1);
	cdgh = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&h[4]),
	    0x1b);
	abef = _mm_alignr_epi8(t, cdgh, 8);
	cdgh = _mm_blend_epi16(cdgh, t, 0xf0);
	for (; n > 0; n--, p += 64) {
		save0 = abef;
		save1 = cdgh;
		for (g = 0; g < 16; g++) {
			__m128i *mg = &m[g & 3];

			if (g < 4)
				*mg = _mm_shuffle_epi8(_mm_loadu_si128(
				    (const __m128i *)(p + 16 * g)), bswap);
			else
				*mg = _mm_sha256msg2_epu32(_mm_add_epi32(
				    _mm_sha256msg1_epu32(*mg, m[(g + 1) & 3]),
				    _mm_alignr_epi8(m[(g + 3) & 3],
				    m[(g + 2) & 3], 4)), m[(g + 3) & 3]);
			wk = _mm_add_epi32(*mg,
			    _mm_loadu_si128((const __m128i *)&K[4 * g]));
			cdgh = _mm_sha256rnds2_epu32(cdgh, abef, wk);
			/* cdgh is ABEF two rounds on, abef their CDGH. */
			abef = _mm_sha256rnds2_epu32(abef, cdgh,
			    _mm_shuffle_epi32(wk, 0x0e));
		}
		abef = _mm_add_epi32(abef, save0);
		cdgh = _mm_add_epi32(cdgh, save1);
	}
	t = _mm_shuffle_epi32(abef, 0x1b);
	cdgh = _mm_shuffle_epi32(cdgh, 0xb1);
	_mm_storeu_si128((__m128i *)&h[0], _mm_blend_epi16(t, cdgh, 0xf0));
	_mm_storeu_si128((__m128i *)&h[4], _mm_alignr_epi8(cdgh, t, 8));
}

/* 1: the SHA extensions are there and used, 0: not, -1: not yet asked. */
static atomic_int sha_x86 = -1;

static int
sha_x86_probe(void)
{
	unsigned a, b, c, d;
	int have;

	have = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_SSSE3) &&
	    (c & bit_SSE4_1) && __get_cpuid_count(7, 0, &a, &b, &c, &d) &&
	    (b & bit_SHA);
	atomic_store_explicit(&sha_x86, have, memory_order_relaxed);
	return (have);
}
#endif

/* @n consecutive 64-byte blocks at @p into @h. */
static void
sha256_blocks(uint32_t h[8], const uint8_t *p, size_t n)
{
#ifdef SHA_X86
	int x = atomic_load_explicit(&sha_x86, memory_order_relaxed);

	if (x < 0)
		x = sha_x86_probe();
	if (x > 0) {
		sha256_blocks_x86(h, p, n);
		return;
	}
#endif
	for (; n > 0; n--, p += 64)
		sha256_block_c(h, p);
}

int
hwtr_sha256_accel(int use)
{
#ifdef SHA_X86
	int x;

	if (use < 0) {
		x = atomic_load_explicit(&sha_x86, memory_order_relaxed);
		return (x < 0 ? sha_x86_probe() : x);
	}
	if (use == 0) {
		atomic_store_explicit(&sha_x86, 0, memory_order_relaxed);
		return (0);
	}
	return (sha_x86_probe());
#else
	(void)use;
	return (0);
#endif
}

void
hwtr_sha256_init(struct hwtr_sha256 *s)
{
	static const uint32_t h0[8] = {
		0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
		0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19
	};

	memcpy(s->h, h0, sizeof(h0));
	s->len = 0;
	s->nbuf = 0;
}

void
hwtr_sha256_update(struct hwtr_sha256 *s, const void *data, size_t len)
{
	const uint8_t *p = data;
	size_t n;

	s->len += len;
	if (s->nbuf > 0) {
		n = 64 - s->nbuf;
		if (n > len)
			n = len;
		memcpy(s->buf + s->nbuf, p, n);
		s->nbuf += n;
		p += n;
		len -= n;
		if (s->nbuf < 64)
			return;
		sha256_blocks(s->h, s->buf, 1);
		s->nbuf = 0;
	}
	if (len >= 64) {
		sha256_blocks(s->h, p, len / 64);
		p += len & ~(size_t)63;
		len &= 63;
	}
	memcpy(s->buf, p, len);
	s->nbuf = len;
}

void
hwtr_sha256_final(struct hwtr_sha256 *s, uint8_t out[32])
{
	uint64_t bits = s->len * 8;
	int i;

	s->buf[s->nbuf++] = 0x80;
	if (s->nbuf > 56) {
		memset(s->buf + s->nbuf, 0, 64 - s->nbuf);
		sha256_blocks(s->h, s->buf, 1);
		s->nbuf = 0;
	}
	memset(s->buf + s->nbuf, 0, 56 - s->nbuf);
	for (i = 0; i < 8; i++)
		s->buf[56 + i] = (uint8_t)(bits >> (56 - 8 * i));
	sha256_blocks(s->h, s->buf, 1);
	for (i = 0; i < 8; i++) {
		out[4 * i] = (uint8_t)(s->h[i] >> 24);
		out[4 * i + 1] = (uint8_t)(s->h[i] >> 16);
		out[4 * i + 2] = (uint8_t)(s->h[i] >> 8);
		out[4 * i + 3] = (uint8_t)s->h[i];
	}
}

void
hwtr_sha256(const void *data, size_t len, uint8_t out[32])
{
	struct hwtr_sha256 s;

	hwtr_sha256_init(&s);
	hwtr_sha256_update(&s, data, len);
	hwtr_sha256_final(&s, out);
}
