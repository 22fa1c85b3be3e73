/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/* One-shot zstd of a buffer (hwtr_zbuf.h). */

#include <zstd.h>

#include "hwtr_zbuf.h"

#ifndef HWTR_SQLITE_EXTENSION
#include <pthread.h>

/*
 * A compression context per thread, kept: ZSTD_compress() makes and
 * frees one per call, which is 3 times the cost of compressing a 4 KiB
 * buffer (13 against 4 us measured here; the indexer compresses 10^5
 * chunks of a trace's execution order).  The frames are the same.  Not
 * in the loadable extension, which only decompresses and may be
 * unloaded before its threads end.
 */
static pthread_key_t zb_key;
static pthread_once_t zb_once = PTHREAD_ONCE_INIT;
static int zb_have_key;

static void
zb_free(void *p)
{
	ZSTD_freeCCtx(p);
}

static void
zb_init(void)
{
	zb_have_key = pthread_key_create(&zb_key, zb_free) == 0;
}

static ZSTD_CCtx *
zb_cctx(void)
{
	ZSTD_CCtx *c;

	if (pthread_once(&zb_once, zb_init) != 0 || !zb_have_key)
		return (NULL);
	if ((c = pthread_getspecific(zb_key)) != NULL)
		return (c);
	if ((c = ZSTD_createCCtx()) != NULL &&
	    pthread_setspecific(zb_key, c) != 0) {
		ZSTD_freeCCtx(c);
		c = NULL;
	}
	return (c);
}
#endif

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
#ifndef HWTR_SQLITE_EXTENSION
	ZSTD_CCtx *c = zb_cctx();

	if (c != NULL)
		r = ZSTD_compressCCtx(c, dst, cap, src, n, level);
	else
#endif
		r = ZSTD_compress(dst, cap, src, n, level);
	return (ZSTD_isError(r) ? 0 : r);
}

size_t
hwtr_zbuf_compress_mm(void *dst, size_t cap, const void *src, size_t n,
    int level, int min_match)
{
	ZSTD_CCtx *c = NULL, *own = NULL;
	size_t r;

#ifndef HWTR_SQLITE_EXTENSION
	c = zb_cctx();
#endif
	if (c == NULL && (c = own = ZSTD_createCCtx()) == NULL)
		return (0);
	/* The parameters stick to the context: set both every time. */
	r = ZSTD_CCtx_reset(c, ZSTD_reset_session_and_parameters);
	if (!ZSTD_isError(r))
		r = ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, level);
	if (!ZSTD_isError(r))
		r = ZSTD_CCtx_setParameter(c, ZSTD_c_minMatch, min_match);
	if (!ZSTD_isError(r))
		r = ZSTD_compress2(c, dst, cap, src, n);
	ZSTD_freeCCtx(own);
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
