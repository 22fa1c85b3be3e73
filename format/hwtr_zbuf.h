/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * One-shot zstd compression of a memory buffer, for the indexer's column
 * stores (indexer/colstore.c) and the SQLite extension that reads them.
 * format/ owns zstd; this is its buffer-to-buffer face.  No sqlite; safe
 * from any thread and inside the loadable extension.  Outside the
 * extension, a thread keeps its compression context (freed when it ends).
 */

#ifndef HWTR_ZBUF_H
#define HWTR_ZBUF_H

#include <stddef.h>

/* Bytes hwtr_zbuf_compress() may need for @n bytes of input. */
size_t hwtr_zbuf_bound(size_t n);

/*
 * Compress @n bytes at @src into @dst (@cap bytes, at least
 * hwtr_zbuf_bound(n)) as one zstd frame that records its content size.
 * Returns the frame's length, or 0 on failure.
 */
size_t hwtr_zbuf_compress(void *dst, size_t cap, const void *src, size_t n,
    int level);

/*
 * hwtr_zbuf_compress() with zstd's shortest match also set (3 to 7; 0:
 * the level's own).  The same kind of frame: any reader decodes it.
 */
size_t hwtr_zbuf_compress_mm(void *dst, size_t cap, const void *src,
    size_t n, int level, int min_match);

/*
 * Decompress the frame of @n bytes at @src into @dst, which must be
 * exactly @want bytes long: returns 0 when the frame holds exactly @want
 * bytes, -1 when it is not a valid frame or holds another size.
 */
int hwtr_zbuf_decompress(void *dst, size_t want, const void *src, size_t n);

/* The content size the frame at @src records, or -1 (none, not a frame). */
long long hwtr_zbuf_size(const void *src, size_t n);

#endif /* !HWTR_ZBUF_H */
