/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * fuzz_reader: the libFuzzer target for the archive reader (`make fuzz`).
 *
 * Each input is written to a memfd and opened by path (/proc/self/fd/N),
 * walked end to end (fuzz_walk.h), verified and closed.  libFuzzer fails on
 * any crash, sanitizer report, leak, timeout or excess memory.
 *
 * Archives are zstd frames with checksums, so byte-level mutations almost
 * never get past the first frame's checksum to the tar headers, JSON and
 * sideband records behind it.  The custom mutator therefore mutates half of
 * the time inside the archive: it splits the input into its zstd frames,
 * decompresses one, mutates the content (tar header, JSON, records, chunk
 * bytes), compresses it again with a valid checksum and splices it back,
 * or it drops, duplicates or swaps whole frames.  Offsets in the final
 * table of contents then disagree with the file, which the reader must
 * notice as well.  Inputs that are not a sequence of frames get libFuzzer's
 * own byte mutations.
 *
 * The harness keeps one memfd in a static: libFuzzer runs inputs one at a
 * time in one process, and this is a test program, not the library.
 */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <zstd.h>

#include "hwtrace.h"
#include "fuzz_walk.h"

#define MAX_CONTENT	(1u << 20)	/* a frame we mutate, decompressed */
#define MAX_FRAMES	4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
    unsigned int seed);

static int memfd = -1;
static char memfd_path[64];

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hwtr_ar_opts opts;
	struct fuzz_walk w;
	size_t done;
	ssize_t n;

	if (memfd < 0) {
		memfd = memfd_create("fuzz_reader", 0);
		if (memfd < 0) {
			perror("memfd_create");
			abort();
		}
		snprintf(memfd_path, sizeof(memfd_path), "/proc/self/fd/%d",
		    memfd);
	}
	if (ftruncate(memfd, 0) != 0) {
		perror("ftruncate");
		abort();
	}
	for (done = 0; done < size; done += (size_t)n) {
		n = pwrite(memfd, data + done, size - done, (off_t)done);
		if (n <= 0) {
			perror("pwrite");
			abort();
		}
	}

	/*
	 * Limits well under libFuzzer's -rss_limit_mb: a member may claim up
	 * to 64 MiB; the ratio limit stays the reader's default.
	 */
	memset(&opts, 0, sizeof(opts));
	opts.max_member_size = 64u << 20;
	opts.max_members = 100000;
	opts.max_sideband = 1u << 20;
	fuzz_walk(memfd_path, &opts, &w);
	return (0);
}

struct frame {
	size_t	off, len;
};

static uint32_t
next_rand(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return (*s);
}

/* Split @data into zstd frames; returns their number, 0 if it is not one. */
static size_t
split_frames(const uint8_t *data, size_t size, struct frame *f, size_t max)
{
	size_t off = 0, n = 0, len;

	while (off < size) {
		if (n == max)
			return (0);
		len = ZSTD_findFrameCompressedSize(data + off, size - off);
		if (ZSTD_isError(len) || len == 0)
			return (0);
		f[n].off = off;
		f[n].len = len;
		n++;
		off += len;
	}
	return (n);
}

/*
 * Replace frame @k of @data with a mutation of its content; returns the
 * new size, or 0 when this frame cannot be mutated that way.
 */
static size_t
mutate_inside(uint8_t *data, size_t size, size_t max_size,
    const struct frame *f, uint32_t *rs)
{
	unsigned long long csize;
	uint8_t *content, *out;
	size_t clen, cap, olen, nsize;
	ZSTD_CCtx *cctx;

	csize = ZSTD_getFrameContentSize(data + f->off, f->len);
	if (csize == ZSTD_CONTENTSIZE_ERROR || csize > MAX_CONTENT)
		return (0);
	if (csize == ZSTD_CONTENTSIZE_UNKNOWN)
		csize = MAX_CONTENT;
	cap = (size_t)csize + 1024;
	content = malloc(cap);
	if (content == NULL)
		return (0);
	clen = ZSTD_decompress(content, (size_t)csize, data + f->off, f->len);
	if (ZSTD_isError(clen)) {
		free(content);
		return (0);
	}
	/* The tar header is where most of the parsing is: aim there often. */
	if (clen > 512 && next_rand(rs) % 2 == 0)
		(void)LLVMFuzzerMutate(content, 512, 512);
	else
		clen = LLVMFuzzerMutate(content, clen, cap);
	olen = ZSTD_compressBound(clen);
	out = malloc(olen);
	cctx = ZSTD_createCCtx();
	if (out == NULL || cctx == NULL) {
		free(out);
		free(content);
		ZSTD_freeCCtx(cctx);
		return (0);
	}
	(void)ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 1);
	(void)ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
	olen = ZSTD_compress2(cctx, out, olen, content, clen);
	ZSTD_freeCCtx(cctx);
	free(content);
	nsize = size - f->len + olen;
	if (ZSTD_isError(olen) || nsize > max_size) {
		free(out);
		return (0);
	}
	memmove(data + f->off + olen, data + f->off + f->len,
	    size - f->off - f->len);
	memcpy(data + f->off, out, olen);
	free(out);
	return (nsize);
}

/* Drop, duplicate or swap whole frames; returns the new size or 0. */
static size_t
mutate_frames(uint8_t *data, size_t size, size_t max_size,
    const struct frame *f, size_t nf, uint32_t *rs)
{
	size_t a = next_rand(rs) % nf, b = next_rand(rs) % nf, t;
	uint8_t *tmp;

	switch (next_rand(rs) % 3) {
	case 0:		/* drop frame a */
		memmove(data + f[a].off, data + f[a].off + f[a].len,
		    size - f[a].off - f[a].len);
		return (size - f[a].len);
	case 1:		/* a copy of frame a after frame b */
		if (size + f[a].len > max_size)
			return (0);
		tmp = malloc(f[a].len);
		if (tmp == NULL)
			return (0);
		memcpy(tmp, data + f[a].off, f[a].len);
		t = f[b].off + f[b].len;
		memmove(data + t + f[a].len, data + t, size - t);
		memcpy(data + t, tmp, f[a].len);
		free(tmp);
		return (size + f[a].len);
	default:	/* swap neighbours a and a+1 */
		if (a + 1 >= nf)
			return (0);
		tmp = malloc(f[a].len);
		if (tmp == NULL)
			return (0);
		memcpy(tmp, data + f[a].off, f[a].len);
		memmove(data + f[a].off, data + f[a + 1].off, f[a + 1].len);
		memcpy(data + f[a].off + f[a + 1].len, tmp, f[a].len);
		free(tmp);
		return (size);
	}
}

size_t
LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
    unsigned int seed)
{
	static struct frame frames[MAX_FRAMES];
	uint32_t rs = seed | 1;
	size_t nf, k, n;

	if (next_rand(&rs) % 2 == 0 &&
	    (nf = split_frames(data, size, frames, MAX_FRAMES)) > 0) {
		if (next_rand(&rs) % 8 == 0)
			n = mutate_frames(data, size, max_size, frames, nf,
			    &rs);
		else {
			k = next_rand(&rs) % nf;
			n = mutate_inside(data, size, max_size, &frames[k],
			    &rs);
		}
		if (n > 0)
			return (n);
	}
	return (LLVMFuzzerMutate(data, size, max_size));
}
