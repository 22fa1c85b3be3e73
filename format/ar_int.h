/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * What the archive reader's files share (format/ only; `make layers'
 * refuses it elsewhere):
 *   archive_read.c  opening: trailer and table of contents, or a scan of
 *                   the frames; the public calls; verify
 *   ar_member.c     the member table: names and their hash, the table of
 *                   member kinds (kind, size limit, parse), the parsers
 *   ar_frame.c      reading a frame: decompression contexts, tar headers,
 *                   a member read whole or streamed in bounded memory
 */

#ifndef HWTR_AR_INT_H
#define HWTR_AR_INT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#define ZSTD_STATIC_LINKING_ONLY	/* ZSTD_getFrameHeader: a stable API since 1.4 */
#include <zstd.h>

#include "hwtr_common.h"
#include "hwtr_format.h"

#define ZSTD_MAGIC		0xFD2FB528u
#define SKIP_MAGIC_MASK		0xFFFFFFF0u
#define SKIP_MAGIC		0x184D2A50u
#define WINDOW_LOG_MAX		27	/* 128 MiB: refuse bigger windows */
#define HDR_PREFIX		8192	/* tar headers must fit in this */
#define JSON_MAX		(64u << 20)
#define BLOCK_MAX		(128u << 10)
#define READ_PIECE		(1u << 20)
#define SB_MEMBER_LIMIT		(64u << 20)
/*
 * The whole sideband is held in memory (records and their strings): at
 * most this many bytes of it, and by default at most 1M records (144
 * bytes each), so that a reader's memory stays far below 512 MB whatever
 * an archive declares.
 */
#define SB_TOTAL_LIMIT		(128u << 20)
#define ONESHOT_MAX		(64u << 20) /* frames read whole into memory */

struct ar_member {
	struct hwtr_member_info info;
	uint64_t	hdr_len;	/* tar header bytes before the data */
	uint64_t	size;		/* data bytes */
	int		has_sha256;
	uint8_t		sha256[32];
	size_t		obj;		/* 1 + index of its stream, image or
					   pending description; 0 none */
};

struct ar_stream {
	struct hwtr_stream_desc d;
	struct hwtr_chunk_info *chunks;
	size_t		nchunks, cap;
	uint64_t	next;
};

struct ar_image {
	struct hwtr_image_desc d;
	size_t		member;
};

struct ar_pending {
	struct hwtr_image_desc d;
	int		used;		/* its data member was seen */
};

/* Make room for one more element of @size in *@vp (doubling). */

struct hwtr_ar {
	int		fd;
	char		*path;
	struct hwtr_ar_opts opts;
	struct hwtr_ar_status st;
	char		why[HWTR_ERRMSG_MAX];
	char		errmsg[HWTR_ERRMSG_MAX];
	pthread_mutex_t	lock;		/* errmsg and dctx, shared by readers */
	ZSTD_DCtx	*dctx[8];	/* idle decompression contexts */
	size_t		ndctx;

	struct hwtr_pool pool;
	struct hwtr_warnings warn;

	struct hwtr_capture_meta meta;
	int		have_meta;
	struct hwtr_capture_end end;
	int		have_end;
	/* The tar end frame after end.json, for verify: 0 none found. */
	uint64_t	tend_off, tend_csize;
	struct hwtr_toc_ent *toc;	/* end.json's table, pool memory */
	size_t		ntoc;

	struct ar_member *m;
	size_t		nm, mcap;
	uint32_t	*hash;		/* member index + 1, 0 empty */
	size_t		hashcap;

	struct ar_stream *s;
	size_t		ns, scap;
	struct ar_image	*img;		/* complete images */
	size_t		ni, icap;
	struct ar_pending *pending;	/* image descriptions */
	size_t		npending, pcap;

	struct hwtr_sb_rec *sb;
	size_t		nsb, sbcap;
	uint64_t	sb_bytes;	/* sideband member bytes read */
	uint64_t	ratio_used;	/* content above the ratio so far */
	uint8_t		sb_unknown[8192];	/* bitmap of warned types */
	uint8_t		sb_extra[HWTR_SB_MAX];
};

/* archive_read.c */
void	ar_seterr(struct hwtr_ar *ar, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));

/* Keep the message, evaluate to the error (visibly negative). */
#define ar_err(ar, code, ...)	(ar_seterr((ar), __VA_ARGS__), -(code))

/* ar_member.c */
int	ar_hash_find(const struct hwtr_ar *ar, const char *name, size_t *ip);
int	ar_image_index(const struct hwtr_ar *ar, const char *key);
int	ar_add_member(struct hwtr_ar *ar, const char *name, uint64_t off,
	    uint64_t csize, uint64_t usize, uint64_t size, size_t *idxp);
int	ar_process_member(struct hwtr_ar *ar, size_t idx);

/* ar_frame.c */
int	ar_pread_all(struct hwtr_ar *ar, void *buf, size_t len, uint64_t off,
	    size_t *gotp);
ZSTD_DCtx *ar_get_dctx(struct hwtr_ar *ar);
void	ar_put_dctx(struct hwtr_ar *ar, ZSTD_DCtx *d);
int	ar_parse_tar(struct hwtr_ar *ar, uint64_t foff, const void *hdr,
	    size_t len, char *name, uint64_t *sizep, int *eofp,
	    int64_t *data_off);
int	ar_holds_other(struct hwtr_ar *ar, const struct ar_member *m,
	    const char *name, uint64_t size, int eof);
int	ar_read_member_stream(struct hwtr_ar *ar, const struct ar_member *m,
	    int (*fn)(void *, const void *, size_t), void *arg,
	    uint8_t sha[32]);
int	ar_read_member_alloc(struct hwtr_ar *ar, const struct ar_member *m,
	    uint64_t max, void **bufp, size_t *lenp);

#endif /* !HWTR_AR_INT_H */
