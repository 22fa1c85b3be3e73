/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Unsigned LEB128 varints and zigzag coding, as the column stores write
 * them (colstore.c, linestore.c; hwtrace-db(5) CALLS STORAGE and LINES
 * STORAGE).  Inline: the codecs call them once a value.
 */

#ifndef HWTR_IX_VARINT_H
#define HWTR_IX_VARINT_H

#include <stdint.h>

#if defined(__GNUC__)
#define IX_VARINT_LIKELY(x)	__builtin_expect(!!(x), 1)
#else
#define IX_VARINT_LIKELY(x)	(x)
#endif

/* @d (a difference taken modulo 2^64) with its sign in the lowest bit. */
static inline uint64_t
ix_zz(uint64_t d)
{
	return ((d << 1) ^ (uint64_t)((int64_t)d >> 63));
}

static inline uint64_t
ix_unzz(uint64_t u)
{
	return ((u >> 1) ^ (uint64_t)-(int64_t)(u & 1));
}

/* @u at @p (at most 10 bytes); returns the byte after it. */
static inline uint8_t *
ix_varint_put(uint8_t *p, uint64_t u)
{
	/*
	 * Most values are one byte: that path falls through (gcc had put
	 * it out of line, two jumps a value).
	 */
	if (IX_VARINT_LIKELY(u < 0x80)) {
		*p = (uint8_t)u;
		return (p + 1);
	}
	/* Two and three bytes (addresses, times) straight, then a loop. */
	p[0] = (uint8_t)(u | 0x80);
	p[1] = (uint8_t)(u >> 7);
	if (u < (1u << 14))
		return (p + 2);
	p[1] |= 0x80;
	p[2] = (uint8_t)(u >> 14);
	if (u < (1u << 21))
		return (p + 3);
	p[2] |= 0x80;
	p += 3;
	u >>= 21;
	while (u >= 0x80) {
		*p++ = (uint8_t)(u | 0x80);
		u >>= 7;
	}
	*p++ = (uint8_t)u;
	return (p);
}

/* A varint from [*pp, end); -1 when it runs past the end or is too long. */
static inline int
ix_varint_get(const uint8_t **pp, const uint8_t *end, uint64_t *up)
{
	const uint8_t *p = *pp;
	uint64_t u = 0;
	int shift;

	for (shift = 0; p < end && shift < 64; shift += 7) {
		uint8_t b = *p++;

		u |= (uint64_t)(b & 0x7f) << shift;
		if ((b & 0x80) == 0) {
			*pp = p;
			*up = u;
			return (0);
		}
	}
	return (-1);
}

#endif /* !HWTR_IX_VARINT_H */
