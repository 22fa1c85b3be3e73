/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/* One-shot zstd of a buffer (hwtr_zbuf.h). */

#include <zstd.h>

#include "hwtr_zbuf.h"

size_t
hwtr_zbuf_bound(size_t n)
{
	return (ZSTD_compressBound(n));
}

size_t
hwtr_zbuf_compress(void *dst, size_t cap, const void *src, size_t n,
    int level)
{
	size_t r;

	r = ZSTD_compress(dst, cap, src, n, level);
	return (ZSTD_isError(r) ? 0 : r);
}

long long
hwtr_zbuf_size(const void *src, size_t n)
{
	unsigned long long sz = ZSTD_getFrameContentSize(src, n);

	if (sz == ZSTD_CONTENTSIZE_ERROR || sz == ZSTD_CONTENTSIZE_UNKNOWN ||
	    sz > (1ULL << 62))
		return (-1);
	return ((long long)sz);
}

int
hwtr_zbuf_decompress(void *dst, size_t want, const void *src, size_t n)
{
	unsigned long long sz;
	size_t r;

	sz = ZSTD_getFrameContentSize(src, n);
	if (sz == ZSTD_CONTENTSIZE_ERROR || sz == ZSTD_CONTENTSIZE_UNKNOWN ||
	    sz != (unsigned long long)want)
		return (-1);
	r = ZSTD_decompress(dst, want, src, n);
	return (ZSTD_isError(r) || r != want ? -1 : 0);
}
