/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The archive reader.
 *
 * A complete archive is opened through its trailer: the last 40 bytes point
 * at end.json, whose table of contents gives every member's frame.  Any
 * other file (cut, still being written, damaged near its end) is scanned:
 * frame and block headers are walked without decompressing data, and only
 * the first bytes of each frame are decompressed to parse its tar headers
 * with libarchive.  The scan stops at the first incomplete or unreadable
 * frame and says where and why; every member before it is usable.
 *
 * Nothing in the file is trusted: names, types, sizes, ratios, counts and
 * cross-references are checked before anything is allocated or used.
 * Reading a member (chunk, image) decompresses only its frame with pread()
 * and a DCtx of its own, so several threads may read at once.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>
#define ZSTD_STATIC_LINKING_ONLY	/* ZSTD_getFrameHeader: a stable API since 1.4 */
#include <zstd.h>
#include <zstd_errors.h>

#include "hwtr_common.h"
#include "hwtr_format.h"
#include "hwtr_elf.h"

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
static int
grow(void *vp, size_t *capp, size_t n, size_t size)
{
	void **v = vp, *nv;
	size_t cap;

	if (n < *capp)
		return (0);
	cap = *capp ? 2 * *capp : 16;
	if ((nv = realloc(*v, cap * size)) == NULL)
		return (-HWTR_E_NOMEM);
	*v = nv;
	*capp = cap;
	return (0);
}

struct hwtr_ar {
	int		fd;
	char		*path;
	struct hwtr_ar_opts opts;
	struct hwtr_ar_status st;
	char		why[512];
	char		errmsg[512];
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
	uint8_t		sb_unknown[8192];	/* bitmap of warned types */
	uint8_t		sb_extra[HWTR_SB_MAX];
};

static void
ar_seterr(struct hwtr_ar *ar, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
ar_seterr(struct hwtr_ar *ar, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&ar->lock);
	va_start(ap, fmt);
	vsnprintf(ar->errmsg, sizeof(ar->errmsg), fmt, ap);
	va_end(ap);
	pthread_mutex_unlock(&ar->lock);
}

/* Keep the message, evaluate to the error (visibly negative). */
#define ar_err(ar, code, ...)	(ar_seterr((ar), __VA_ARGS__), -(code))

static int
pread_all(struct hwtr_ar *ar, void *buf, size_t len, uint64_t off,
    size_t *gotp)
{
	uint8_t *p = buf;
	size_t got = 0;
	ssize_t n;

	*gotp = 0;
	while (got < len) {
		n = pread(ar->fd, p + got, len - got, (off_t)(off + got));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return (ar_err(ar, HWTR_E_IO, "%s: read at 0x%jx: %s",
			    ar->path, (uintmax_t)(off + got), strerror(errno)));
		if (n == 0)
			break;
		got += (size_t)n;
	}
	*gotp = got;
	return (0);
}

static uint32_t
le32(const uint8_t *p)
{
	return ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24);
}

static uint64_t
le64(const uint8_t *p)
{
	return ((uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32);
}

/* ---- member table -------------------------------------------------------- */

static uint64_t
name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s != '\0'; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ULL;
	return (h);
}

static int
hash_find(const struct hwtr_ar *ar, const char *name, size_t *ip)
{
	size_t i, mask;
	uint32_t v;

	if (ar->hashcap == 0)
		return (0);
	mask = ar->hashcap - 1;
	for (i = name_hash(name) & mask; (v = ar->hash[i]) != 0;
	    i = (i + 1) & mask)
		if (strcmp(ar->m[v - 1].info.name, name) == 0) {
			*ip = v - 1;
			return (1);
		}
	return (0);
}

static int
hash_insert(struct hwtr_ar *ar, size_t idx)
{
	uint32_t *nh;
	size_t i, j, mask, ncap;

	if (2 * (ar->nm + 1) > ar->hashcap) {
		ncap = ar->hashcap ? 2 * ar->hashcap : 256;
		if ((nh = calloc(ncap, sizeof(*nh))) == NULL)
			return (-HWTR_E_NOMEM);
		for (j = 0; j < ar->hashcap; j++) {
			if (ar->hash[j] == 0)
				continue;
			for (i = name_hash(ar->m[ar->hash[j] - 1].info.name) &
			    (ncap - 1); nh[i] != 0; i = (i + 1) & (ncap - 1))
				;
			nh[i] = ar->hash[j];
		}
		free(ar->hash);
		ar->hash = nh;
		ar->hashcap = ncap;
	}
	mask = ar->hashcap - 1;
	for (i = name_hash(ar->m[idx].info.name) & mask; ar->hash[i] != 0;
	    i = (i + 1) & mask)
		;
	ar->hash[i] = (uint32_t)idx + 1;
	return (0);
}

static int
all_digits(const char *s, size_t n, int hex)
{
	size_t i;

	if (n == 0)
		return (0);
	for (i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
		    (hex && s[i] >= 'a' && s[i] <= 'f')))
			return (0);
	return (1);
}

/*
 * The kind of a member from its name (hwtrace(5) MEMBERS).  For stream
 * members *idp receives the stream id; for chunks *offp the stream offset.
 */
static enum hwtr_member_kind
classify(const char *name, uint32_t *idp, uint64_t *offp)
{
	const char *p, *slash;
	unsigned long long v;
	size_t n;

	if (strcmp(name, HWTR_MANIFEST_NAME) == 0)
		return (HWTR_M_MANIFEST);
	if (strcmp(name, HWTR_END_NAME) == 0)
		return (HWTR_M_END);
	if (strncmp(name, "aux/", 4) == 0)
		return (HWTR_M_AUX);
	if (strncmp(name, "sideband/", 9) == 0) {
		p = name + 9;
		n = strlen(p);
		if (n > 3 && strcmp(p + n - 3, ".sb") == 0 &&
		    all_digits(p, n - 3, 0))
			return (HWTR_M_SIDEBAND);
		return (HWTR_M_UNKNOWN);
	}
	if (strncmp(name, "images/", 7) == 0) {
		p = name + 7;
		if (strchr(p, '/') != NULL)
			return (HWTR_M_UNKNOWN);
		n = strlen(p);
		if (n > 5 && strcmp(p + n - 5, ".json") == 0)
			return (n - 5 < HWTR_IMAGE_KEY_MAX ? HWTR_M_IMAGE_DESC :
			    HWTR_M_UNKNOWN);
		return (n < HWTR_IMAGE_KEY_MAX && strchr(p, '.') == NULL ?
		    HWTR_M_IMAGE : HWTR_M_UNKNOWN);
	}
	if (strncmp(name, "streams/", 8) == 0) {
		p = name + 8;
		if ((slash = strchr(p, '/')) == NULL ||
		    !all_digits(p, (size_t)(slash - p), 0) || slash - p > 10 ||
		    (slash - p > 1 && p[0] == '0'))
			return (HWTR_M_UNKNOWN);
		v = strtoull(p, NULL, 10);
		if (v >= UINT32_MAX)
			return (HWTR_M_UNKNOWN);
		*idp = (uint32_t)v;
		p = slash + 1;
		if (strcmp(p, "stream.json") == 0)
			return (HWTR_M_STREAM_DESC);
		if (strlen(p) == 22 && strcmp(p + 16, ".chunk") == 0 &&
		    all_digits(p, 16, 1)) {
			*offp = strtoull(p, NULL, 16);
			return (HWTR_M_CHUNK);
		}
	}
	return (HWTR_M_UNKNOWN);
}

/*
 * A name under streams/ that classify() did not take but that claims to be
 * a stream's: a stream directory that is not a canonical decimal id ("00",
 * "+1", "4294967295"), or a chunk name whose offset is not 16 lowercase hex
 * digits.  Refused rather than skipped: a reader that skipped it would see
 * a stream without the data the writer meant it to have.
 */
static int
stream_name_bad(const char *name)
{
	const char *p, *slash;
	size_t n;

	if (strncmp(name, "streams/", 8) != 0)
		return (0);
	p = name + 8;
	if ((slash = strchr(p, '/')) == NULL)
		return (1);
	n = (size_t)(slash - p);
	if (!all_digits(p, n, 0) || n > 10 || (n > 1 && p[0] == '0') ||
	    strtoull(p, NULL, 10) >= UINT32_MAX)
		return (1);
	p = slash + 1;
	n = strlen(p);
	return (n >= 6 && strcmp(p + n - 6, ".chunk") == 0);
}

/* ---- decompression -------------------------------------------------------- */

/*
 * A decompression context for one call.  Creating one allocates its
 * window, which costs more than decompressing a small chunk, so idle
 * contexts are kept (each call still has one of its own).
 */
static ZSTD_DCtx *
get_dctx(struct hwtr_ar *ar)
{
	ZSTD_DCtx *d = NULL;

	pthread_mutex_lock(&ar->lock);
	if (ar->ndctx > 0)
		d = ar->dctx[--ar->ndctx];
	pthread_mutex_unlock(&ar->lock);
	if (d != NULL) {
		ZSTD_DCtx_reset(d, ZSTD_reset_session_only);
		return (d);
	}
	if ((d = ZSTD_createDCtx()) == NULL)
		return (NULL);
	ZSTD_DCtx_setParameter(d, ZSTD_d_windowLogMax, WINDOW_LOG_MAX);
	return (d);
}

static void
put_dctx(struct hwtr_ar *ar, ZSTD_DCtx *d)
{
	if (d == NULL)
		return;
	pthread_mutex_lock(&ar->lock);
	if (ar->ndctx < HWTR_NELEM(ar->dctx)) {
		ar->dctx[ar->ndctx++] = d;
		d = NULL;
	}
	pthread_mutex_unlock(&ar->lock);
	ZSTD_freeDCtx(d);
}

/*
 * Decompress the frame at [@off, @off + @csize) into the regions @dst[i]
 * of @dlen[i] bytes (a NULL region is decompressed and dropped) whose sum
 * is the frame's whole content.  Fails if the frame holds more or less.
 * @what names the member in messages.
 */
static int
decompress_frame(struct hwtr_ar *ar, const char *what, uint64_t off,
    uint64_t csize, void *const *dst, const uint64_t *dlen, int nreg)
{
	ZSTD_DCtx *d;
	ZSTD_inBuffer in;
	ZSTD_outBuffer out;
	uint8_t *ibuf = NULL, drop[4096], over[1];
	uint64_t done = 0, rlen;
	size_t r = 1, got, piece;
	int reg = 0, rc = 0;

	if ((d = get_dctx(ar)) == NULL ||
	    (ibuf = malloc(csize < READ_PIECE ? (size_t)csize : READ_PIECE)) ==
	    NULL) {
		put_dctx(ar, d);
		return (-HWTR_E_NOMEM);
	}
	memset(&out, 0, sizeof(out));
	rlen = 0;
	while (done < csize) {
		piece = csize - done < READ_PIECE ? (size_t)(csize - done) :
		    READ_PIECE;
		if ((rc = pread_all(ar, ibuf, piece, off + done, &got)) < 0)
			goto out;
		if (got < piece) {
			rc = ar_err(ar, HWTR_E_TRUNCATED, "member '%s': frame at "
			    "0x%jx cut at 0x%jx", what, (uintmax_t)off,
			    (uintmax_t)(off + done + got));
			goto out;
		}
		done += piece;
		in.src = ibuf;
		in.size = piece;
		in.pos = 0;
		while (in.pos < in.size) {
			/* Move to the next region when this one is full. */
			while (reg < nreg && rlen == dlen[reg]) {
				reg++;
				rlen = 0;
			}
			if (reg < nreg) {
				uint64_t left = dlen[reg] - rlen;

				if (dst[reg] != NULL) {
					out.dst = (uint8_t *)dst[reg] + rlen;
					out.size = left > SIZE_MAX ? SIZE_MAX :
					    (size_t)left;
				} else {
					out.dst = drop;
					out.size = left < sizeof(drop) ?
					    (size_t)left : sizeof(drop);
				}
			} else {
				out.dst = over;
				out.size = sizeof(over);
			}
			out.pos = 0;
			r = ZSTD_decompressStream(d, &out, &in);
			if (ZSTD_isError(r)) {
				rc = ar_err(ar, ZSTD_getErrorCode(r) ==
				    ZSTD_error_checksum_wrong ? HWTR_E_CHECKSUM :
				    HWTR_E_FORMAT, "member '%s': frame at 0x%jx: "
				    "%s", what, (uintmax_t)off,
				    ZSTD_getErrorName(r));
				goto out;
			}
			if (reg >= nreg && out.pos > 0) {
				rc = ar_err(ar, HWTR_E_FORMAT, "member '%s': frame "
				    "at 0x%jx holds more than its declared size",
				    what, (uintmax_t)off);
				goto out;
			}
			rlen += out.pos;
			if (r == 0)
				break;
		}
		if (r == 0)
			break;
	}
	while (reg < nreg && rlen == dlen[reg]) {
		reg++;
		rlen = 0;
	}
	if (r != 0 || reg < nreg || done != csize || in.pos != in.size)
		rc = ar_err(ar, HWTR_E_FORMAT, "member '%s': frame at 0x%jx "
		    "does not end where expected (0x%jx)", what,
		    (uintmax_t)off, (uintmax_t)(off + csize));
out:
	free(ibuf);
	put_dctx(ar, d);
	return (rc);
}

/*
 * Parse the tar headers in @hdr (@len bytes) with libarchive; check the
 * entry is a regular file and fill @name (HWTR_NAME_MAX + 1) and @sizep.
 * With @data_off: where the data starts (when it lies in @hdr).
 */
static int
parse_tar(struct hwtr_ar *ar, uint64_t foff, const void *hdr, size_t len,
    char *name, uint64_t *sizep, int *eofp, int64_t *data_off)
{
	struct archive *a;
	struct archive_entry *e;
	const char *pn;
	const void *blk;
	size_t blen;
	la_int64_t boff;
	int r, rc = 0;

	*eofp = 0;
	*sizep = 0;
	name[0] = '\0';
	if (data_off != NULL)
		*data_off = -1;
	if ((a = archive_read_new()) == NULL)
		return (-HWTR_E_NOMEM);
	archive_read_support_format_tar(a);
	if (archive_read_open_memory(a, hdr, len) != ARCHIVE_OK) {
		rc = ar_err(ar, HWTR_E_FORMAT, "frame at 0x%jx: not a tar "
		    "member: %s", (uintmax_t)foff, archive_error_string(a));
		goto out;
	}
	r = archive_read_next_header(a, &e);
	if (r == ARCHIVE_EOF) {
		*eofp = 1;
		goto out;
	}
	if (r != ARCHIVE_OK) {
		rc = ar_err(ar, HWTR_E_FORMAT, "frame at 0x%jx: bad tar "
		    "header: %s", (uintmax_t)foff, archive_error_string(a));
		goto out;
	}
	pn = archive_entry_pathname(e);
	if (pn == NULL)
		pn = "";
	if (archive_entry_filetype(e) != AE_IFREG ||
	    archive_entry_hardlink(e) != NULL ||
	    archive_entry_symlink(e) != NULL) {
		rc = ar_err(ar, HWTR_E_FORMAT, "member '%.255s' at 0x%jx: not a "
		    "regular file (links, devices, directories and fifos are "
		    "refused)", pn, (uintmax_t)foff);
		goto out;
	}
	if (!hwtr_name_ok(pn)) {
		rc = ar_err(ar, HWTR_E_FORMAT, "member at 0x%jx: name "
		    "'%.255s' is absolute, has '..' or characters outside "
		    "[A-Za-z0-9._-/]", (uintmax_t)foff, pn);
		goto out;
	}
	if (!archive_entry_size_is_set(e) || archive_entry_size(e) < 0) {
		rc = ar_err(ar, HWTR_E_FORMAT, "member '%s' at 0x%jx: no size",
		    pn, (uintmax_t)foff);
		goto out;
	}
	strcpy(name, pn);
	*sizep = (uint64_t)archive_entry_size(e);
	if (data_off != NULL) {
		*data_off = -1;
		if (*sizep > 0 && archive_read_data_block(a, &blk, &blen,
		    &boff) == ARCHIVE_OK && boff == 0 &&
		    (const uint8_t *)blk >= (const uint8_t *)hdr &&
		    (const uint8_t *)blk < (const uint8_t *)hdr + len)
			*data_off = (const uint8_t *)blk - (const uint8_t *)hdr;
	}
out:
	archive_read_free(a);
	return (rc);
}

/* Member @m's frame holds another member (@name, @size) or the tar end. */
static int
holds_other(struct hwtr_ar *ar, const struct ar_member *m, const char *name,
    uint64_t size, int eof)
{
	return (ar_err(ar, HWTR_E_FORMAT, "member '%s': the frame at 0x%jx "
	    "holds '%s' of %ju bytes instead", m->info.name,
	    (uintmax_t)m->info.offset, eof ? "(tar end)" : name,
	    (uintmax_t)size));
}

/*
 * Read member @m: its data into @data (m->size bytes; NULL: dropped),
 * checking that its tar header names it.
 */
static int
read_member_into(struct hwtr_ar *ar, const struct ar_member *m, void *data)
{
	uint8_t hdr[HDR_PREFIX];
	void *dst[3];
	uint64_t dlen[3], size;
	char name[HWTR_NAME_MAX + 1];
	int eof, rc;

	dst[0] = hdr;
	dlen[0] = m->hdr_len;
	dst[1] = data;
	dlen[1] = m->size;
	dst[2] = NULL;
	dlen[2] = m->info.usize - m->hdr_len - m->size;
	if ((rc = decompress_frame(ar, m->info.name, m->info.offset,
	    m->info.csize, dst, dlen, 3)) < 0)
		return (rc);
	if ((rc = parse_tar(ar, m->info.offset, hdr, (size_t)m->hdr_len, name,
	    &size, &eof, NULL)) < 0)
		return (rc);
	if (eof || strcmp(name, m->info.name) != 0 || size != m->size)
		return (holds_other(ar, m, name, size, eof));
	return (0);
}

/*
 * Read member @m whose frame is small enough to hold in memory: one
 * pread() and single-pass decompression straight into the result, which
 * is as fast as the zstd command (streaming goes through the context's own
 * buffer); the data is then moved over the tar headers.
 */
static int
read_member_oneshot(struct hwtr_ar *ar, const struct ar_member *m,
    void **bufp, size_t *lenp)
{
	ZSTD_DCtx *d = NULL;
	uint8_t *cbuf, *buf;
	char name[HWTR_NAME_MAX + 1];
	uint64_t size;
	size_t got, r;
	int eof, rc;

	cbuf = malloc((size_t)m->info.csize);
	buf = malloc((size_t)m->info.usize + 1);
	if (cbuf == NULL || buf == NULL || (d = get_dctx(ar)) == NULL) {
		rc = ar_err(ar, HWTR_E_NOMEM, "member '%s': out of memory "
		    "for %ju bytes", m->info.name, (uintmax_t)m->info.usize);
		goto fail;
	}
	if ((rc = pread_all(ar, cbuf, (size_t)m->info.csize, m->info.offset,
	    &got)) < 0)
		goto fail;
	if (got < m->info.csize) {
		rc = ar_err(ar, HWTR_E_TRUNCATED, "member '%s': frame at 0x%jx "
		    "cut at 0x%jx", m->info.name, (uintmax_t)m->info.offset,
		    (uintmax_t)(m->info.offset + got));
		goto fail;
	}
	/* Exactly one frame, exactly the declared content. */
	r = ZSTD_findFrameCompressedSize(cbuf, got);
	if (ZSTD_isError(r) || r != got ||
	    ZSTD_getFrameContentSize(cbuf, got) != m->info.usize) {
		rc = ar_err(ar, HWTR_E_FORMAT, "member '%s': the frame at 0x%jx "
		    "is not one frame of %ju bytes holding %ju", m->info.name,
		    (uintmax_t)m->info.offset, (uintmax_t)m->info.csize,
		    (uintmax_t)m->info.usize);
		goto fail;
	}
	r = ZSTD_decompressDCtx(d, buf, (size_t)m->info.usize, cbuf, got);
	if (ZSTD_isError(r) || r != m->info.usize) {
		rc = ar_err(ar, ZSTD_isError(r) && ZSTD_getErrorCode(r) ==
		    ZSTD_error_checksum_wrong ? HWTR_E_CHECKSUM : HWTR_E_FORMAT,
		    "member '%s': frame at 0x%jx: %s", m->info.name,
		    (uintmax_t)m->info.offset, ZSTD_isError(r) ?
		    ZSTD_getErrorName(r) : "short content");
		goto fail;
	}
	put_dctx(ar, d);
	d = NULL;
	free(cbuf);
	cbuf = NULL;
	if ((rc = parse_tar(ar, m->info.offset, buf, (size_t)m->hdr_len, name,
	    &size, &eof, NULL)) < 0)
		goto fail;
	if (eof || strcmp(name, m->info.name) != 0 || size != m->size) {
		rc = ar_err(ar, HWTR_E_FORMAT, "member '%s': the frame at "
		    "0x%jx holds '%s' of %ju bytes instead", m->info.name,
		    (uintmax_t)m->info.offset, eof ? "(tar end)" : name,
		    (uintmax_t)size);
		goto fail;
	}
	memmove(buf, buf + m->hdr_len, (size_t)m->size);
	buf[m->size] = '\0';
	*bufp = buf;
	*lenp = (size_t)m->size;
	return (0);
fail:
	put_dctx(ar, d);
	free(cbuf);
	free(buf);
	return (rc);
}

/*
 * Read member @m in bounded memory, whatever it declares: its data is
 * handed to @fn (when not NULL) in pieces of at most STREAM_PIECE bytes,
 * in order, and hashed into *@sha when @sha is not NULL.  The tar header
 * is checked as read_member_into() checks it, the frame's checksum by
 * zstd.  A decompression bomb costs time here, never memory.
 */
#define STREAM_PIECE	(256u << 10)
/*
 * The frame of @m declares its content size, and it is the member's
 * (hwtrace(5)): a streamed frame without one decompresses, but a reader
 * that allocates by the declared size refuses it, so verify must too.
 * @buf: scratch of at least ZSTD_FRAMEHEADERSIZE_MAX bytes.
 */
static int
frame_declares(struct hwtr_ar *ar, const struct ar_member *m, uint8_t *buf)
{
	unsigned long long fcs;
	size_t got;
	int rc;

	if ((rc = pread_all(ar, buf, m->info.csize < ZSTD_FRAMEHEADERSIZE_MAX ?
	    (size_t)m->info.csize : ZSTD_FRAMEHEADERSIZE_MAX, m->info.offset,
	    &got)) < 0)
		return (rc);
	fcs = ZSTD_getFrameContentSize(buf, got);
	if (fcs == ZSTD_CONTENTSIZE_UNKNOWN)
		return (ar_err(ar, HWTR_E_FORMAT, "member '%s': frame at 0x%jx "
		    "declares no content size (hwtrace(5) requires one)",
		    m->info.name, (uintmax_t)m->info.offset));
	if (fcs != ZSTD_CONTENTSIZE_ERROR && fcs != m->info.usize)
		return (ar_err(ar, HWTR_E_FORMAT, "member '%s': frame at 0x%jx "
		    "declares %llu bytes, the member has %ju", m->info.name,
		    (uintmax_t)m->info.offset, fcs, (uintmax_t)m->info.usize));
	/* A bad header: the decompression below says what is wrong. */
	return (0);
}

static int
read_member_stream(struct hwtr_ar *ar, const struct ar_member *m,
    int (*fn)(void *, const void *, size_t), void *arg, uint8_t sha[32])
{
	struct hwtr_sha256 h;
	ZSTD_DCtx *d;
	ZSTD_inBuffer in;
	ZSTD_outBuffer out;
	uint8_t *ibuf = NULL, *obuf = NULL, hdr[HDR_PREFIX];
	char name[HWTR_NAME_MAX + 1];
	uint64_t done = 0, pos = 0, size, total = m->info.usize;
	size_t got, piece, k, r = 1;
	int rc = 0, eof;

	if (m->hdr_len > sizeof(hdr))
		return (ar_err(ar, HWTR_E_FORMAT, "member '%s': headers of %ju "
		    "bytes", m->info.name, (uintmax_t)m->hdr_len));
	if ((d = get_dctx(ar)) == NULL || (ibuf = malloc(READ_PIECE)) ==
	    NULL || (obuf = malloc(STREAM_PIECE)) == NULL) {
		put_dctx(ar, d);
		free(ibuf);
		return (-HWTR_E_NOMEM);
	}
	if (sha != NULL)
		hwtr_sha256_init(&h);
	if ((rc = frame_declares(ar, m, ibuf)) < 0)
		goto out;
	while (done < m->info.csize && r != 0) {
		if (ar->opts.cancel != NULL && *ar->opts.cancel) {
			rc = ar_err(ar, HWTR_E_INTR, "member '%s': interrupted",
			    m->info.name);
			goto out;
		}
		piece = m->info.csize - done < READ_PIECE ?
		    (size_t)(m->info.csize - done) : READ_PIECE;
		if ((rc = pread_all(ar, ibuf, piece, m->info.offset + done,
		    &got)) < 0)
			goto out;
		if (got < piece) {
			rc = ar_err(ar, HWTR_E_TRUNCATED, "member '%s': frame at "
			    "0x%jx cut at 0x%jx", m->info.name,
			    (uintmax_t)m->info.offset,
			    (uintmax_t)(m->info.offset + done + got));
			goto out;
		}
		done += piece;
		in.src = ibuf;
		in.size = piece;
		in.pos = 0;
		while (in.pos < in.size && r != 0) {
			if (ar->opts.cancel != NULL && *ar->opts.cancel) {
				rc = ar_err(ar, HWTR_E_INTR, "member '%s': "
				    "interrupted", m->info.name);
				goto out;
			}
			out.dst = obuf;
			out.size = STREAM_PIECE;
			out.pos = 0;
			r = ZSTD_decompressStream(d, &out, &in);
			if (ZSTD_isError(r)) {
				rc = ar_err(ar, ZSTD_getErrorCode(r) ==
				    ZSTD_error_checksum_wrong ? HWTR_E_CHECKSUM :
				    HWTR_E_FORMAT, "member '%s': frame at 0x%jx: "
				    "%s", m->info.name, (uintmax_t)m->info.offset,
				    ZSTD_getErrorName(r));
				goto out;
			}
			if (out.pos > total - pos) {
				rc = ar_err(ar, HWTR_E_FORMAT, "member '%s': frame "
				    "at 0x%jx holds more than its declared size",
				    m->info.name, (uintmax_t)m->info.offset);
				goto out;
			}
			for (k = 0; k < out.pos; ) {
				uint64_t at = pos + k;
				size_t n;

				if (at < m->hdr_len) {
					n = (size_t)(m->hdr_len - at);
					if (n > out.pos - k)
						n = out.pos - k;
					memcpy(hdr + at, obuf + k, n);
					if (at + n == m->hdr_len && (rc =
					    parse_tar(ar, m->info.offset, hdr,
					    (size_t)m->hdr_len, name, &size,
					    &eof, NULL)) < 0)
						goto out;
					if (at + n == m->hdr_len && (eof ||
					    strcmp(name, m->info.name) != 0 ||
					    size != m->size)) {
						rc = ar_err(ar, HWTR_E_FORMAT,
						    "member '%s': the frame at "
						    "0x%jx holds '%s' of %ju bytes "
						    "instead", m->info.name,
						    (uintmax_t)m->info.offset, eof ?
						    "(tar end)" : name,
						    (uintmax_t)size);
						goto out;
					}
				} else if (at < m->hdr_len + m->size) {
					n = (size_t)(m->hdr_len + m->size - at);
					if (n > out.pos - k)
						n = out.pos - k;
					if (sha != NULL)
						hwtr_sha256_update(&h, obuf + k,
						    n);
					if (fn != NULL &&
					    (rc = fn(arg, obuf + k, n)) < 0)
						goto out;
				} else
					n = out.pos - k;	/* padding */
				k += n;
			}
			pos += out.pos;
		}
	}
	if (r != 0 || done != m->info.csize || in.pos != in.size ||
	    pos != total)
		rc = ar_err(ar, HWTR_E_FORMAT, "member '%s': frame at 0x%jx "
		    "does not end where expected (0x%jx)", m->info.name,
		    (uintmax_t)m->info.offset,
		    (uintmax_t)(m->info.offset + m->info.csize));
	else if (sha != NULL)
		hwtr_sha256_final(&h, sha);
out:
	free(ibuf);
	free(obuf);
	put_dctx(ar, d);
	return (rc);
}

static int
read_member_alloc(struct hwtr_ar *ar, const struct ar_member *m, uint64_t max,
    void **bufp, size_t *lenp)
{
	void *buf;
	int rc;

	*bufp = NULL;
	*lenp = 0;
	if (m->size > max || m->size > SIZE_MAX - 1)
		return (ar_err(ar, HWTR_E_LIMIT, "member '%s': %ju bytes "
		    "(limit %ju)", m->info.name, (uintmax_t)m->size,
		    (uintmax_t)max));
	if (m->info.csize <= ONESHOT_MAX && m->info.usize <= SIZE_MAX - 1)
		return (read_member_oneshot(ar, m, bufp, lenp));
	/* One spare byte so text members can be NUL-terminated. */
	if ((buf = malloc((size_t)m->size + 1)) == NULL)
		return (ar_err(ar, HWTR_E_NOMEM, "member '%s': out of memory "
		    "for %ju bytes", m->info.name, (uintmax_t)m->size));
	if ((rc = read_member_into(ar, m, buf)) < 0) {
		free(buf);
		return (rc);
	}
	((uint8_t *)buf)[m->size] = '\0';
	*bufp = buf;
	*lenp = (size_t)m->size;
	return (0);
}

/* ---- member processing ---------------------------------------------------- */

/* Lookups go through the member names' hash: no quadratic cases. */
static struct ar_stream *
stream_by_id(struct hwtr_ar *ar, uint32_t id)
{
	char name[64];
	size_t i;

	snprintf(name, sizeof(name), "streams/%u/stream.json", id);
	if (!hash_find(ar, name, &i) || ar->m[i].obj == 0)
		return (NULL);
	return (&ar->s[ar->m[i].obj - 1]);
}

static int
image_index(const struct hwtr_ar *ar, const char *key)
{
	char name[HWTR_IMAGE_KEY_MAX + 16];
	size_t i;

	if (strlen(key) >= HWTR_IMAGE_KEY_MAX)
		return (-1);
	snprintf(name, sizeof(name), "images/%s", key);
	if (!hash_find(ar, name, &i) || ar->m[i].obj == 0 ||
	    ar->m[i].info.kind != HWTR_M_IMAGE)
		return (-1);
	return ((int)(ar->m[i].obj - 1));
}

static int
do_sideband(struct hwtr_ar *ar, const struct ar_member *m, const uint8_t *p,
    size_t len)
{
	struct hwtr_sb_rec rec, *n;
	char why[256];
	size_t off = 0, used, extra, cap;
	int rc;

	while (off < len) {
		rc = hwtr_sb_decode(p + off, len - off, &rec, &ar->pool, &used,
		    &extra, why, sizeof(why));
		if (rc == -HWTR_E_NOMEM)
			return (rc);
		if (rc < 0)
			return (ar_err(ar, HWTR_E_FORMAT, "member '%s' offset "
			    "0x%zx: %s", m->info.name, off, why));
		off += used;
		if (rc == 0) {
			unsigned t = (unsigned)rec.type & 0xffff;

			if (!(ar->sb_unknown[t / 8] & (1u << (t % 8)))) {
				ar->sb_unknown[t / 8] |= (uint8_t)(1u << (t % 8));
				hwtr_warn(&ar->warn, "%s: sideband records of "
				    "unknown type %u skipped", m->info.name, t);
			}
			continue;
		}
		if (extra > 0 && !ar->sb_extra[rec.type]) {
			ar->sb_extra[rec.type] = 1;
			hwtr_warn(&ar->warn, "%s: %s records carry fields this "
			    "reader does not know (skipped)", m->info.name,
			    hwtr_sb_type_name(rec.type));
		}
		/* References point backwards (hwtrace(5)): check them now. */
		if ((rec.type == HWTR_SB_LOST && rec.u.lost.stream !=
		    UINT32_MAX && stream_by_id(ar, rec.u.lost.stream) == NULL) ||
		    (rec.type == HWTR_SB_BUFPOS &&
		    stream_by_id(ar, rec.u.bufpos.stream) == NULL))
			return (ar_err(ar, HWTR_E_FORMAT, "member '%s' offset "
			    "0x%zx: %s record names stream %u, which does not "
			    "exist", m->info.name, off - used,
			    hwtr_sb_type_name(rec.type), rec.type ==
			    HWTR_SB_LOST ? rec.u.lost.stream :
			    rec.u.bufpos.stream));
		if (rec.type == HWTR_SB_MMAP && rec.u.mmap.image != NULL &&
		    image_index(ar, rec.u.mmap.image) < 0)
			return (ar_err(ar, HWTR_E_FORMAT, "member '%s' offset "
			    "0x%zx: mmap record names image '%s', which does "
			    "not exist", m->info.name, off - used,
			    rec.u.mmap.image));
		if (ar->nsb >= ar->opts.max_sideband)
			return (ar_err(ar, HWTR_E_LIMIT, "member '%s': more than "
			    "%ju sideband records", m->info.name,
			    (uintmax_t)ar->opts.max_sideband));
		if (ar->nsb == ar->sbcap) {
			cap = ar->sbcap ? 2 * ar->sbcap : 256;
			if ((n = realloc(ar->sb, cap * sizeof(*n))) == NULL)
				return (-HWTR_E_NOMEM);
			ar->sb = n;
			ar->sbcap = cap;
		}
		ar->sb[ar->nsb++] = rec;
	}
	return (0);
}

/*
 * Take member @idx (already in ar->m) into the reader's view: parse what
 * needs parsing, check cross-references.  Members come in file order.
 */
static int
process_member(struct hwtr_ar *ar, size_t idx)
{
	struct ar_member *m = &ar->m[idx];
	struct ar_stream *s;
	struct hwtr_chunk_info *nc;
	struct hwtr_image_desc d;
	struct ar_pending *pd;
	char dname[HWTR_NAME_MAX + 8];
	const char *key;
	uint32_t id = 0;
	uint64_t coff = 0, maj = 0;
	uint32_t major, minor;
	void *buf = NULL;
	size_t len, i, cap;
	int rc = 0;

	m->info.kind = classify(m->info.name, &id, &coff);
	if (idx == 0 && m->info.kind != HWTR_M_MANIFEST)
		return (ar_err(ar, HWTR_E_FORMAT, "not an hwtrace archive: the "
		    "first member is '%s', not '%s'", m->info.name,
		    HWTR_MANIFEST_NAME));
	(void)maj;
	switch (m->info.kind) {
	case HWTR_M_MANIFEST:
		if (idx != 0)
			return (ar_err(ar, HWTR_E_FORMAT, "member '%s' at 0x%jx: "
			    "only the first member may be the manifest",
			    m->info.name, (uintmax_t)m->info.offset));
		if ((rc = read_member_alloc(ar, m, JSON_MAX, &buf, &len)) < 0)
			return (rc);
		rc = hwtr_json_parse_meta(m->info.name, buf, len, &ar->meta,
		    &major, &minor, &ar->pool, &ar->warn, ar->errmsg,
		    sizeof(ar->errmsg));
		ar->st.version_major = major;
		ar->st.version_minor = minor;
		if (rc == 0)
			ar->have_meta = 1;
		break;
	case HWTR_M_STREAM_DESC:
		if ((rc = read_member_alloc(ar, m, JSON_MAX, &buf, &len)) < 0)
			return (rc);
		if ((rc = grow(&ar->s, &ar->scap, ar->ns, sizeof(*ar->s))) < 0)
			break;
		s = &ar->s[ar->ns];
		memset(s, 0, sizeof(*s));
		rc = hwtr_json_parse_stream(m->info.name, buf, len, &s->d,
		    &ar->pool, &ar->warn, ar->errmsg, sizeof(ar->errmsg));
		if (rc == 0 && s->d.id != id)
			rc = ar_err(ar, HWTR_E_FORMAT, "%s: field 'id' is %u, "
			    "the member name says %u", m->info.name, s->d.id,
			    id);
		if (rc == 0)
			m->obj = ++ar->ns;
		break;
	case HWTR_M_CHUNK:
		if (m->size > HWTR_CHUNK_MAX)
			return (ar_err(ar, HWTR_E_LIMIT, "member '%s': a chunk "
			    "of %ju bytes (writers split chunks at %u)",
			    m->info.name, (uintmax_t)m->size, HWTR_CHUNK_MAX));
		if ((s = stream_by_id(ar, id)) == NULL)
			return (ar_err(ar, HWTR_E_FORMAT, "member '%s': stream %u "
			    "has no stream.json before it", m->info.name, id));
		if (coff < s->next)
			return (ar_err(ar, HWTR_E_FORMAT, "member '%s': stream "
			    "offset 0x%jx goes back before 0x%jx",
			    m->info.name, (uintmax_t)coff, (uintmax_t)s->next));
		if (m->size > UINT64_MAX - coff)
			return (ar_err(ar, HWTR_E_FORMAT, "member '%s': chunk "
			    "overflows the stream offset", m->info.name));
		if (s->nchunks == s->cap) {
			cap = s->cap ? 2 * s->cap : 16;
			if ((nc = realloc(s->chunks, cap * sizeof(*nc))) == NULL)
				return (-HWTR_E_NOMEM);
			s->chunks = nc;
			s->cap = cap;
		}
		s->chunks[s->nchunks].member = idx;
		s->chunks[s->nchunks].offset = coff;
		s->chunks[s->nchunks].len = m->size;
		s->nchunks++;
		s->next = coff + m->size;
		break;
	case HWTR_M_IMAGE_DESC:
		if ((rc = read_member_alloc(ar, m, JSON_MAX, &buf, &len)) < 0)
			return (rc);
		rc = hwtr_json_parse_image(m->info.name, buf, len, &d, &ar->pool,
		    &ar->warn, ar->errmsg, sizeof(ar->errmsg));
		if (rc < 0)
			break;
		key = m->info.name + 7;
		if (strncmp(key, d.key, strlen(d.key)) != 0 ||
		    strcmp(key + strlen(d.key), ".json") != 0) {
			rc = ar_err(ar, HWTR_E_FORMAT, "%s: field 'key' is '%s', "
			    "the member name says otherwise", m->info.name,
			    d.key);
			break;
		}
		if ((rc = grow(&ar->pending, &ar->pcap, ar->npending,
		    sizeof(*ar->pending))) < 0)
			break;
		ar->pending[ar->npending].d = d;
		ar->pending[ar->npending].used = 0;
		m->obj = ++ar->npending;
		break;
	case HWTR_M_IMAGE:
		snprintf(dname, sizeof(dname), "%s.json", m->info.name);
		if (!hash_find(ar, dname, &i) || ar->m[i].obj == 0 ||
		    ar->m[i].info.kind != HWTR_M_IMAGE_DESC)
			return (ar_err(ar, HWTR_E_FORMAT, "member '%s': image "
			    "without a description before it", m->info.name));
		pd = &ar->pending[ar->m[i].obj - 1];
		if (pd->d.size != m->size)
			return (ar_err(ar, HWTR_E_FORMAT, "member '%s': %ju bytes, "
			    "its description says %ju", m->info.name,
			    (uintmax_t)m->size, (uintmax_t)pd->d.size));
		if (grow(&ar->img, &ar->icap, ar->ni, sizeof(*ar->img)) < 0)
			return (-HWTR_E_NOMEM);
		ar->img[ar->ni].d = pd->d;
		ar->img[ar->ni].member = idx;
		pd->used = 1;
		m->obj = ++ar->ni;
		break;
	case HWTR_M_SIDEBAND:
		/* Writers flush at 1 MiB; anything far bigger is absurd. */
		if (m->size > SB_TOTAL_LIMIT - ar->sb_bytes)
			return (ar_err(ar, HWTR_E_LIMIT, "member '%s': more than "
			    "%u bytes of sideband in all", m->info.name,
			    SB_TOTAL_LIMIT));
		ar->sb_bytes += m->size;
		if ((rc = read_member_alloc(ar, m, SB_MEMBER_LIMIT, &buf,
		    &len)) < 0)
			return (rc);
		rc = do_sideband(ar, m, buf, len);
		break;
	case HWTR_M_AUX:
		break;
	case HWTR_M_END:
		if ((rc = read_member_alloc(ar, m, JSON_MAX, &buf, &len)) < 0)
			return (rc);
		rc = hwtr_json_parse_end(m->info.name, buf, len, &ar->end,
		    &ar->toc, &ar->ntoc, ar->opts.max_members, &ar->pool,
		    &ar->warn, ar->errmsg, sizeof(ar->errmsg));
		if (rc == 0)
			ar->have_end = 1;
		break;
	default:
		if (stream_name_bad(m->info.name))
			return (ar_err(ar, HWTR_E_FORMAT, "member '%s' at 0x%jx: "
			    "not a stream member name (streams/ID/stream.json "
			    "or streams/ID/OFFSET.chunk, ID in decimal without "
			    "leading zeros, OFFSET in 16 lowercase hex digits)",
			    m->info.name, (uintmax_t)m->info.offset));
		hwtr_warn(&ar->warn, "unknown member '%s' skipped",
		    m->info.name);
		break;
	}
	free(buf);
	if (rc == -HWTR_E_NOMEM)
		return (ar_err(ar, HWTR_E_NOMEM, "out of memory"));
	return (rc);
}

/*
 * Add a member to the table after checking what a hostile file could get
 * wrong: duplicate names, counts, sizes, ratio.
 */
static int
add_member(struct hwtr_ar *ar, const char *name, uint64_t off, uint64_t csize,
    uint64_t usize, uint64_t size, size_t *idxp)
{
	struct ar_member *nm, *m;
	size_t i, cap;
	uint64_t padded;

	if (hash_find(ar, name, &i))
		return (ar_err(ar, HWTR_E_FORMAT, "member '%s' at 0x%jx: "
		    "duplicate name (first at 0x%jx)", name, (uintmax_t)off,
		    (uintmax_t)ar->m[i].info.offset));
	if (ar->nm >= ar->opts.max_members)
		return (ar_err(ar, HWTR_E_LIMIT, "member '%s' at 0x%jx: more "
		    "than %ju members", name, (uintmax_t)off,
		    (uintmax_t)ar->opts.max_members));
	if (size > ar->opts.max_member_size)
		return (ar_err(ar, HWTR_E_LIMIT, "member '%s' at 0x%jx: %ju "
		    "bytes (limit %ju)", name, (uintmax_t)off, (uintmax_t)size,
		    (uintmax_t)ar->opts.max_member_size));
	padded = (size + 511) & ~(uint64_t)511;
	if (usize < padded + 512 || usize - padded > HDR_PREFIX ||
	    (usize - padded) % 512 != 0)
		return (ar_err(ar, HWTR_E_FORMAT, "member '%s' at 0x%jx: frame "
		    "content of %ju bytes does not fit %ju data bytes",
		    name, (uintmax_t)off, (uintmax_t)usize, (uintmax_t)size));
	if (usize / csize > ar->opts.max_ratio)
		return (ar_err(ar, HWTR_E_LIMIT, "member '%s' at 0x%jx: "
		    "%ju bytes from %ju compressed exceeds the ratio limit "
		    "%ju", name, (uintmax_t)off, (uintmax_t)usize,
		    (uintmax_t)csize, (uintmax_t)ar->opts.max_ratio));
	if (ar->nm == ar->mcap) {
		cap = ar->mcap ? 2 * ar->mcap : 64;
		if ((nm = realloc(ar->m, cap * sizeof(*nm))) == NULL)
			return (-HWTR_E_NOMEM);
		ar->m = nm;
		ar->mcap = cap;
	}
	m = &ar->m[ar->nm];
	memset(m, 0, sizeof(*m));
	if ((m->info.name = hwtr_pool_strdup(&ar->pool, name)) == NULL)
		return (-HWTR_E_NOMEM);
	m->info.offset = off;
	m->info.csize = csize;
	m->info.usize = usize;
	m->size = size;
	m->hdr_len = usize - padded;
	if (hash_insert(ar, ar->nm) < 0)
		return (-HWTR_E_NOMEM);
	*idxp = ar->nm++;
	return (0);
}

/* ---- scanning --------------------------------------------------------------- */

/* FR_LIMIT and FR_REFUSE are errors, not cuts: a hostile frame. */
enum frame_res { FR_OK, FR_CUT, FR_BAD, FR_LIMIT, FR_REFUSE };

/*
 * Walk the zstd frame at @off: header, then block headers only.  Sets
 * *csizep and *fcsp.  FR_CUT when the file ends inside it.
 */
static enum frame_res
walk_frame(struct hwtr_ar *ar, uint64_t off, uint64_t *csizep, uint64_t *fcsp,
    char *why, size_t whylen)
{
	ZSTD_frameHeader zfh;
	uint8_t b[ZSTD_FRAMEHEADERSIZE_MAX];
	uint64_t pos, fsize = ar->st.file_size, bmax;
	uint32_t bh, bsize;
	size_t got, r;

	if (pread_all(ar, b, sizeof(b), off, &got) < 0) {
		snprintf(why, whylen, "%s", ar->errmsg);
		return (FR_BAD);
	}
	r = ZSTD_getFrameHeader(&zfh, b, got);
	if (ZSTD_isError(r)) {
		snprintf(why, whylen, "bad zstd frame header at 0x%jx: %s",
		    (uintmax_t)off, ZSTD_getErrorName(r));
		return (FR_BAD);
	}
	if (r > 0) {
		snprintf(why, whylen, "frame header at 0x%jx cut", (uintmax_t)off);
		return (FR_CUT);
	}
	if (zfh.frameType != ZSTD_frame) {
		snprintf(why, whylen, "unexpected skippable frame at 0x%jx",
		    (uintmax_t)off);
		return (FR_BAD);
	}
	if (zfh.windowSize > (1ULL << WINDOW_LOG_MAX)) {
		snprintf(why, whylen, "frame at 0x%jx: window of %ju bytes "
		    "exceeds the limit 2^%d", (uintmax_t)off,
		    (uintmax_t)zfh.windowSize, WINDOW_LOG_MAX);
		return (FR_LIMIT);
	}
	if (zfh.frameContentSize == ZSTD_CONTENTSIZE_UNKNOWN) {
		snprintf(why, whylen, "frame at 0x%jx: no content size",
		    (uintmax_t)off);
		return (FR_BAD);
	}
	if (zfh.dictID != 0) {
		snprintf(why, whylen, "frame at 0x%jx: needs a dictionary",
		    (uintmax_t)off);
		return (FR_BAD);
	}
	/*
	 * Chunks carry no SHA-256 in the table of contents: their frame's
	 * content checksum is their only integrity check, so it is required.
	 */
	if (!zfh.checksumFlag) {
		snprintf(why, whylen, "frame at 0x%jx: no content checksum "
		    "(hwtrace(5) requires one on every frame)", (uintmax_t)off);
		return (FR_REFUSE);
	}
	bmax = zfh.blockSizeMax;
	pos = off + zfh.headerSize;
	for (;;) {
		if (pread_all(ar, b, 3, pos, &got) < 0) {
			snprintf(why, whylen, "%s", ar->errmsg);
			return (FR_BAD);
		}
		if (got < 3) {
			snprintf(why, whylen, "frame at 0x%jx cut in the block "
			    "header at 0x%jx", (uintmax_t)off, (uintmax_t)pos);
			return (FR_CUT);
		}
		bh = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16;
		bsize = bh >> 3;
		pos += 3;
		switch ((bh >> 1) & 3) {
		case 0:		/* raw */
		case 2:		/* compressed */
			if (bsize > bmax || bsize > BLOCK_MAX) {
				snprintf(why, whylen, "frame at 0x%jx: block at "
				    "0x%jx of %u bytes", (uintmax_t)off,
				    (uintmax_t)(pos - 3), bsize);
				return (FR_BAD);
			}
			pos += bsize;
			break;
		case 1:		/* RLE */
			pos += 1;
			break;
		default:
			snprintf(why, whylen, "frame at 0x%jx: reserved block "
			    "type at 0x%jx", (uintmax_t)off, (uintmax_t)(pos - 3));
			return (FR_BAD);
		}
		if (pos > fsize) {
			snprintf(why, whylen, "frame at 0x%jx cut in the block "
			    "at 0x%jx", (uintmax_t)off, (uintmax_t)(pos - 3));
			return (FR_CUT);
		}
		if (bh & 1)
			break;
	}
	if (zfh.checksumFlag)
		pos += 4;
	if (pos > fsize) {
		snprintf(why, whylen, "frame at 0x%jx cut in its checksum",
		    (uintmax_t)off);
		return (FR_CUT);
	}
	*csizep = pos - off;
	*fcsp = zfh.frameContentSize;
	return (FR_OK);
}

/* Decompress the first @cap bytes of the frame at @off into @out. */
static int
frame_prefix(struct hwtr_ar *ar, uint64_t off, uint64_t csize, uint8_t *out,
    size_t cap, size_t *lenp)
{
	ZSTD_DCtx *d;
	ZSTD_inBuffer in;
	ZSTD_outBuffer o = { out, cap, 0 };
	uint8_t ib[16384];
	uint64_t done = 0;
	size_t got, piece, r;
	int rc = 0;

	if ((d = get_dctx(ar)) == NULL)
		return (-HWTR_E_NOMEM);
	while (o.pos < cap && done < csize) {
		piece = csize - done < sizeof(ib) ? (size_t)(csize - done) :
		    sizeof(ib);
		if ((rc = pread_all(ar, ib, piece, off + done, &got)) < 0)
			break;
		if (got < piece) {
			rc = ar_err(ar, HWTR_E_TRUNCATED, "frame at 0x%jx cut",
			    (uintmax_t)off);
			break;
		}
		done += piece;
		in.src = ib;
		in.size = piece;
		in.pos = 0;
		while (in.pos < in.size && o.pos < cap) {
			r = ZSTD_decompressStream(d, &o, &in);
			if (ZSTD_isError(r)) {
				rc = ar_err(ar, HWTR_E_FORMAT, "frame at 0x%jx: %s",
				    (uintmax_t)off, ZSTD_getErrorName(r));
				goto out;
			}
			if (r == 0)
				goto out;
		}
	}
out:
	put_dctx(ar, d);
	*lenp = o.pos;
	return (rc);
}

static void
set_cut(struct hwtr_ar *ar, uint64_t valid_end, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
set_cut(struct hwtr_ar *ar, uint64_t valid_end, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ar->why, sizeof(ar->why), fmt, ap);
	va_end(ap);
	ar->st.why = ar->why;
	ar->st.valid_end = valid_end;
	ar->st.complete = 0;
}

/*
 * Scan the file frame by frame.  Errors in the members themselves (a
 * hostile name, bad JSON) fail the open; the file ending, or a frame that
 * cannot be walked, only ends the scan.
 */
static int
scan_frames(struct hwtr_ar *ar)
{
	uint8_t pre[HDR_PREFIX], b[8];
	char why[512], name[HWTR_NAME_MAX + 1];
	uint64_t off = 0, csize, fcs, size, fsize = ar->st.file_size;
	int64_t data_off;
	size_t got, plen, idx;
	int rc, eof, tar_end = 0;
	enum frame_res fr;
	uint32_t magic;

	ar->st.valid_end = 0;
	while (off < fsize) {
		if ((rc = pread_all(ar, b, 8, off, &got)) < 0)
			return (rc);
		if (got < 4) {
			set_cut(ar, off, "cut at 0x%jx: %zu bytes of a frame "
			    "header", (uintmax_t)off, got);
			return (0);
		}
		magic = le32(b);
		if ((magic & SKIP_MAGIC_MASK) == SKIP_MAGIC) {
			if (got < 8 || fsize - off - 8 < le32(b + 4)) {
				set_cut(ar, off, "cut at 0x%jx: skippable frame "
				    "incomplete", (uintmax_t)off);
				return (0);
			}
			off += 8 + (uint64_t)le32(b + 4);
			ar->st.valid_end = off;
			continue;
		}
		if (magic != ZSTD_MAGIC) {
			set_cut(ar, off, "unreadable at 0x%jx: not a zstd frame "
			    "(magic 0x%08x)", (uintmax_t)off, magic);
			if (off == 0)
				return (ar_err(ar, HWTR_E_FORMAT, "not an hwtrace "
				    "archive: no zstd frame at offset 0"));
			return (0);
		}
		if (tar_end) {
			hwtr_warn(&ar->warn, "frame at 0x%jx after the tar end "
			    "ignored", (uintmax_t)off);
			break;
		}
		fr = walk_frame(ar, off, &csize, &fcs, why, sizeof(why));
		if (fr == FR_CUT) {
			set_cut(ar, off, "cut at 0x%jx: %s", (uintmax_t)off, why);
			return (0);
		}
		/* Hostile limits are errors, not cuts. */
		if (fr == FR_LIMIT)
			return (ar_err(ar, HWTR_E_LIMIT, "%s", why));
		if (fr == FR_REFUSE)
			return (ar_err(ar, HWTR_E_FORMAT, "%s", why));
		if (fr == FR_BAD) {
			if (off == 0)
				return (ar_err(ar, HWTR_E_FORMAT, "not an hwtrace "
				    "archive: %s", why));
			set_cut(ar, off, "unreadable at 0x%jx: %s",
			    (uintmax_t)off, why);
			return (0);
		}
		if (fcs / csize > ar->opts.max_ratio)
			return (ar_err(ar, HWTR_E_LIMIT, "frame at 0x%jx: %ju "
			    "bytes from %ju compressed exceeds the ratio limit "
			    "%ju", (uintmax_t)off, (uintmax_t)fcs,
			    (uintmax_t)csize, (uintmax_t)ar->opts.max_ratio));
		if (fcs > ar->opts.max_member_size + HDR_PREFIX + 512)
			return (ar_err(ar, HWTR_E_LIMIT, "frame at 0x%jx: %ju "
			    "bytes exceeds the member size limit %ju",
			    (uintmax_t)off, (uintmax_t)fcs,
			    (uintmax_t)ar->opts.max_member_size));
		rc = frame_prefix(ar, off, csize, pre,
		    fcs < sizeof(pre) ? (size_t)fcs : sizeof(pre), &plen);
		if (rc < 0) {
			set_cut(ar, off, "unreadable at 0x%jx: %s", (uintmax_t)off,
			    ar->errmsg);
			if (off == 0)
				return (rc);
			return (0);
		}
		if ((rc = parse_tar(ar, off, pre, plen, name, &size, &eof,
		    &data_off)) < 0)
			return (rc);
		if (eof) {
			tar_end = 1;
			ar->tend_off = off;
			ar->tend_csize = csize;
			off += csize;
			ar->st.valid_end = off;
			continue;
		}
		if ((rc = add_member(ar, name, off, csize, fcs, size, &idx)) < 0)
			return (rc);
		if (data_off >= 0 && (uint64_t)data_off != ar->m[idx].hdr_len)
			return (ar_err(ar, HWTR_E_FORMAT, "member '%s' at 0x%jx: "
			    "data at %jd, the frame size says %ju", name,
			    (uintmax_t)off, (intmax_t)data_off,
			    (uintmax_t)ar->m[idx].hdr_len));
		if ((rc = process_member(ar, idx)) < 0)
			return (rc);
		off += csize;
		ar->st.valid_end = off;
	}
	if (!ar->have_end)
		set_cut(ar, ar->st.valid_end, "cut at 0x%jx: no %s member",
		    (uintmax_t)ar->st.valid_end, HWTR_END_NAME);
	return (0);
}

/*
 * The capture is complete when end.json was read, even if what follows it
 * (tar end, trailer) was cut: nothing of the capture is missing.
 */
static int
scan(struct hwtr_ar *ar)
{
	int rc;

	if ((rc = scan_frames(ar)) < 0)
		return (rc);
	if (ar->have_end) {
		if (ar->st.why != NULL)
			hwtr_warn(&ar->warn, "after %s: %s", HWTR_END_NAME,
			    ar->st.why);
		ar->st.why = NULL;
		ar->st.complete = 1;
	}
	return (0);
}

/*
 * A member listed in end.json's table is checked as a scan checks what it
 * finds (the table is a claim, and nothing in an archive is trusted): its
 * frame (window, content size, checksum, where it ends) and its tar header
 * (a regular file, a good name, the size the table says), before any verb
 * uses it.
 */
static int
check_toc_member(struct hwtr_ar *ar, size_t idx)
{
	struct ar_member *m = &ar->m[idx];
	uint8_t pre[HDR_PREFIX];
	char why[512], name[HWTR_NAME_MAX + 1];
	uint64_t csize, fcs, size;
	int64_t data_off;
	size_t plen;
	enum frame_res fr;
	int rc, eof;

	fr = walk_frame(ar, m->info.offset, &csize, &fcs, why, sizeof(why));
	if (fr == FR_LIMIT)
		return (ar_err(ar, HWTR_E_LIMIT, "member '%s': %s",
		    m->info.name, why));
	if (fr == FR_REFUSE)
		return (ar_err(ar, HWTR_E_FORMAT, "member '%s': %s",
		    m->info.name, why));
	/*
	 * A damaged frame (bytes changed, a block header among them, or data
	 * that no longer decompresses) fails when the member is read, and
	 * verify names it; the other members stay readable.
	 */
	if (fr != FR_OK)
		return (0);
	if (csize != m->info.csize || fcs != m->info.usize)
		return (ar_err(ar, HWTR_E_FORMAT, "member '%s': the frame at "
		    "0x%jx has %ju bytes holding %ju, %s says %ju holding %ju",
		    m->info.name, (uintmax_t)m->info.offset, (uintmax_t)csize,
		    (uintmax_t)fcs, HWTR_END_NAME, (uintmax_t)m->info.csize,
		    (uintmax_t)m->info.usize));
	if (frame_prefix(ar, m->info.offset, csize, pre,
	    fcs < sizeof(pre) ? (size_t)fcs : sizeof(pre), &plen) < 0)
		return (0);
	if ((rc = parse_tar(ar, m->info.offset, pre, plen, name, &size, &eof,
	    &data_off)) < 0)
		return (rc);
	if (eof || strcmp(name, m->info.name) != 0 || size != m->size ||
	    (data_off >= 0 && (uint64_t)data_off != m->hdr_len))
		return (holds_other(ar, m, name, size, eof));
	return (0);
}

/*
 * Open through the trailer and end.json's table.  Returns 1 when done, 0
 * when the file has no usable trailer (scan instead), < 0 on a hostile
 * table.
 */
static int
open_toc(struct hwtr_ar *ar)
{
	uint8_t tr[HWTR_TRAILER_SIZE];
	uint64_t endoff, endcsize, csize, fcs, prev_end = 0;
	char why[512];
	size_t got, i, idx;
	struct ar_member em;
	const struct hwtr_toc_ent *t;
	int rc;

	if (ar->st.file_size < HWTR_TRAILER_SIZE)
		return (0);
	if (pread_all(ar, tr, sizeof(tr), ar->st.file_size - sizeof(tr),
	    &got) < 0 || got != sizeof(tr))
		return (0);
	if (le32(tr) != HWTR_TRAILER_MAGIC || le32(tr + 4) !=
	    HWTR_TRAILER_SIZE - 8 || memcmp(tr + 8, HWTR_TRAILER_TAG, 8) != 0 ||
	    le64(tr + 16) != 1)
		return (0);
	endoff = le64(tr + 24);
	endcsize = le64(tr + 32);
	if (endoff >= ar->st.file_size || endcsize == 0 ||
	    endcsize > ar->st.file_size - endoff || endcsize > JSON_MAX)
		return (0);
	if (walk_frame(ar, endoff, &csize, &fcs, why, sizeof(why)) != FR_OK ||
	    csize != endcsize || fcs > JSON_MAX || fcs / csize >
	    ar->opts.max_ratio)
		return (0);
	/* Read end.json first, as a member of its own. */
	memset(&em, 0, sizeof(em));
	{
		uint8_t pre[HDR_PREFIX];
		char name[HWTR_NAME_MAX + 1];
		uint64_t size;
		size_t plen;
		int eof;

		if (frame_prefix(ar, endoff, csize, pre, fcs < sizeof(pre) ?
		    (size_t)fcs : sizeof(pre), &plen) < 0 ||
		    parse_tar(ar, endoff, pre, plen, name, &size, &eof, NULL) < 0 ||
		    eof || strcmp(name, HWTR_END_NAME) != 0)
			return (0);
		em.size = size;
	}
	/* The table is a claim: every entry is checked before use. */
	em.info.name = HWTR_END_NAME;
	em.info.offset = endoff;
	em.info.csize = csize;
	em.info.usize = fcs;
	em.hdr_len = fcs - ((em.size + 511) & ~(uint64_t)511);
	if (em.hdr_len > HDR_PREFIX || em.size > JSON_MAX)
		return (0);
	{
		void *buf;
		size_t len;

		if (read_member_alloc(ar, &em, JSON_MAX, &buf, &len) < 0)
			return (0);
		rc = hwtr_json_parse_end(HWTR_END_NAME, buf, len, &ar->end,
		    &ar->toc, &ar->ntoc, ar->opts.max_members, &ar->pool,
		    &ar->warn, ar->errmsg, sizeof(ar->errmsg));
		free(buf);
		if (rc < 0)
			return (rc);
	}
	for (i = 0; i < ar->ntoc; i++) {
		t = &ar->toc[i];
		if (!hwtr_name_ok(t->name))
			return (ar_err(ar, HWTR_E_FORMAT, "%s: member %zu: name "
			    "'%.255s' is absolute, has '..' or characters outside "
			    "[A-Za-z0-9._-/]", HWTR_END_NAME, i, t->name));
		/*
		 * Frames follow each other without gaps: a table that skips
		 * bytes would hide members from the reader.
		 */
		if (t->offset != prev_end || t->csize > endoff - t->offset)
			return (ar_err(ar, HWTR_E_FORMAT, "%s: member '%s': frame "
			    "at 0x%jx of %ju bytes does not follow the previous "
			    "one (which ends at 0x%jx) inside [0, 0x%jx)",
			    HWTR_END_NAME, t->name, (uintmax_t)t->offset,
			    (uintmax_t)t->csize, (uintmax_t)prev_end,
			    (uintmax_t)endoff));
		prev_end = t->offset + t->csize;
		if ((rc = add_member(ar, t->name, t->offset, t->csize,
		    t->usize, t->size, &idx)) < 0)
			return (rc);
		if ((rc = check_toc_member(ar, idx)) < 0)
			return (rc);
		ar->m[idx].has_sha256 = t->has_sha256;
		memcpy(ar->m[idx].sha256, t->sha256, 32);
		if ((rc = process_member(ar, idx)) < 0)
			return (rc);
	}
	if (prev_end != endoff)
		return (ar_err(ar, HWTR_E_FORMAT, "%s: the table of contents "
		    "ends at 0x%jx, %s starts at 0x%jx", HWTR_END_NAME,
		    (uintmax_t)prev_end, HWTR_END_NAME, (uintmax_t)endoff));
	if ((rc = add_member(ar, HWTR_END_NAME, endoff, csize, fcs, em.size,
	    &idx)) < 0)
		return (rc);
	ar->m[idx].info.kind = HWTR_M_END;
	ar->have_end = 1;
	ar->st.complete = 1;
	ar->st.valid_end = ar->st.file_size;
	/* Between end.json and the trailer: checked by verify. */
	ar->tend_off = endoff + csize;
	ar->tend_csize = ar->st.file_size - HWTR_TRAILER_SIZE - ar->tend_off;
	return (1);
}

/* Forget everything a failed table-of-contents open left behind. */
static void
reset_view(struct hwtr_ar *ar)
{
	size_t i;

	for (i = 0; i < ar->ns; i++)
		free(ar->s[i].chunks);
	free(ar->s);
	ar->s = NULL;
	ar->ns = 0;
	free(ar->img);
	ar->img = NULL;
	ar->ni = 0;
	free(ar->pending);
	ar->pending = NULL;
	ar->npending = ar->pcap = 0;
	ar->scap = ar->icap = 0;
	free(ar->sb);
	ar->sb = NULL;
	ar->nsb = ar->sbcap = 0;
	ar->sb_bytes = 0;
	free(ar->m);
	ar->m = NULL;
	ar->nm = ar->mcap = 0;
	free(ar->hash);
	ar->hash = NULL;
	ar->hashcap = 0;
	ar->toc = NULL;
	ar->ntoc = 0;
	ar->have_meta = ar->have_end = 0;
	memset(&ar->meta, 0, sizeof(ar->meta));
	memset(&ar->end, 0, sizeof(ar->end));
	memset(ar->sb_unknown, 0, sizeof(ar->sb_unknown));
	memset(ar->sb_extra, 0, sizeof(ar->sb_extra));
	hwtr_warnings_free(&ar->warn);
}

int
hwtr_ar_open(struct hwtr_ar **arp, const char *path,
    const struct hwtr_ar_opts *opts)
{
	struct hwtr_ar *ar;
	struct stat st;
	char ebuf[256];
	int rc;

	*arp = NULL;
	if ((ar = calloc(1, sizeof(*ar))) == NULL)
		return (-HWTR_E_NOMEM);
	pthread_mutex_init(&ar->lock, NULL);
	ar->fd = -1;
	*arp = ar;
	if (opts != NULL)
		ar->opts = *opts;
	if (ar->opts.max_member_size == 0)
		ar->opts.max_member_size = 4ULL << 30;
	if (ar->opts.max_members == 0)
		ar->opts.max_members = 1000000;
	if (ar->opts.max_sideband == 0)
		ar->opts.max_sideband = 1ULL << 20;
	if (ar->opts.max_ratio == 0)
		ar->opts.max_ratio = 4096;
	if ((ar->path = strdup(path)) == NULL)
		return (ar_err(ar, HWTR_E_NOMEM, "out of memory"));
	/* A FIFO or a device is refused at once, never waited for. */
	if ((ar->fd = hwtr_in_open(path, &st, ebuf, sizeof(ebuf))) < 0) {
		rc = ar->fd;
		ar->fd = -1;
		return (ar_err(ar, -rc, "%s", ebuf));
	}
	ar->st.file_size = (uint64_t)st.st_size;
	if (ar->st.file_size == 0)
		return (ar_err(ar, HWTR_E_FORMAT, "'%s' is empty", path));
	rc = open_toc(ar);
	if (rc < 0)
		return (rc);
	if (rc == 0) {
		reset_view(ar);
		if ((rc = scan(ar)) < 0)
			return (rc);
	}
	if (!ar->have_meta)
		return (ar_err(ar, HWTR_E_TRUNCATED, "'%s': %s", path,
		    ar->st.why != NULL ? ar->st.why : "no manifest"));
	return (0);
}

int
hwtr_ar_identity(const char *path, char *id, char *err, size_t errlen)
{
	struct hwtr_sha256 h;
	struct stat st;
	uint8_t tr[HWTR_TRAILER_SIZE], sz[8], dig[32], *buf;
	uint64_t from = 0, endoff, left;
	ssize_t n;
	int fd, i;

	id[0] = '\0';
	if ((fd = hwtr_open_regular(path, &st, err, errlen)) < 0)
		return (fd);
	if ((uint64_t)st.st_size >= HWTR_TRAILER_SIZE &&
	    pread(fd, tr, sizeof(tr), st.st_size - HWTR_TRAILER_SIZE) ==
	    (ssize_t)sizeof(tr) && le32(tr) == HWTR_TRAILER_MAGIC &&
	    memcmp(tr + 8, HWTR_TRAILER_TAG, 8) == 0) {
		endoff = le64(tr + 24);
		if (endoff < (uint64_t)st.st_size)
			from = endoff;
	}
	if ((buf = malloc(READ_PIECE)) == NULL) {
		close(fd);
		return (-HWTR_E_NOMEM);
	}
	hwtr_sha256_init(&h);
	for (i = 0; i < 8; i++)
		sz[i] = (uint8_t)((uint64_t)st.st_size >> (8 * i));
	hwtr_sha256_update(&h, sz, sizeof(sz));
	left = (uint64_t)st.st_size - from;
	while (left > 0) {
		n = pread(fd, buf, left < READ_PIECE ? (size_t)left : READ_PIECE,
		    (off_t)from);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			snprintf(err, errlen, "cannot read '%s': %s", path,
			    n < 0 ? strerror(errno) : "it shrank");
			free(buf);
			close(fd);
			return (-HWTR_E_IO);
		}
		hwtr_sha256_update(&h, buf, (size_t)n);
		from += (uint64_t)n;
		left -= (uint64_t)n;
	}
	free(buf);
	close(fd);
	hwtr_sha256_final(&h, dig);
	memcpy(id, "sha256:", 7);
	hwtr_hex(id + 7, dig, sizeof(dig));
	return (0);
}

int
hwtr_ar_close(struct hwtr_ar *ar)
{
	size_t i;

	if (ar == NULL)
		return (0);
	for (i = 0; i < ar->ns; i++)
		free(ar->s[i].chunks);
	free(ar->s);
	free(ar->img);
	free(ar->pending);
	free(ar->sb);
	free(ar->m);
	free(ar->hash);
	hwtr_warnings_free(&ar->warn);
	hwtr_pool_free(&ar->pool);
	for (i = 0; i < ar->ndctx; i++)
		ZSTD_freeDCtx(ar->dctx[i]);
	if (ar->fd >= 0)
		close(ar->fd);
	free(ar->path);
	pthread_mutex_destroy(&ar->lock);
	free(ar);
	return (0);
}

const char *
hwtr_ar_errmsg(const struct hwtr_ar *ar)
{
	return (ar != NULL ? ar->errmsg : "no reader");
}

const struct hwtr_ar_status *
hwtr_ar_status(const struct hwtr_ar *ar)
{
	return (&ar->st);
}

const struct hwtr_capture_meta *
hwtr_ar_meta(const struct hwtr_ar *ar)
{
	return (ar->have_meta ? &ar->meta : NULL);
}

const struct hwtr_capture_end *
hwtr_ar_end(const struct hwtr_ar *ar)
{
	return (ar->have_end ? &ar->end : NULL);
}

size_t
hwtr_ar_nmembers(const struct hwtr_ar *ar)
{
	return (ar->nm);
}

const struct hwtr_member_info *
hwtr_ar_member(const struct hwtr_ar *ar, size_t i)
{
	return (i < ar->nm ? &ar->m[i].info : NULL);
}

int
hwtr_ar_read_member(struct hwtr_ar *ar, size_t i, void **bufp, size_t *lenp)
{
	*bufp = NULL;
	*lenp = 0;
	if (i >= ar->nm)
		return (ar_err(ar, HWTR_E_NOENT, "no member %zu", i));
	return (read_member_alloc(ar, &ar->m[i], ar->opts.max_member_size <
	    HWTR_AR_MEM_MAX ? ar->opts.max_member_size : HWTR_AR_MEM_MAX,
	    bufp, lenp));
}

int
hwtr_ar_find_member(const struct hwtr_ar *ar, const char *name, size_t *ip)
{
	return (hash_find(ar, name, ip) ? 0 : -HWTR_E_NOENT);
}

size_t
hwtr_ar_nstreams(const struct hwtr_ar *ar)
{
	return (ar->ns);
}

const struct hwtr_stream_desc *
hwtr_ar_stream(const struct hwtr_ar *ar, size_t i)
{
	return (i < ar->ns ? &ar->s[i].d : NULL);
}

size_t
hwtr_ar_nchunks(const struct hwtr_ar *ar, size_t stream)
{
	return (stream < ar->ns ? ar->s[stream].nchunks : 0);
}

const struct hwtr_chunk_info *
hwtr_ar_chunk(const struct hwtr_ar *ar, size_t stream, size_t chunk)
{
	if (stream >= ar->ns || chunk >= ar->s[stream].nchunks)
		return (NULL);
	return (&ar->s[stream].chunks[chunk]);
}

int
hwtr_ar_read_chunk(struct hwtr_ar *ar, size_t stream, size_t chunk,
    void **bufp, size_t *lenp)
{
	*bufp = NULL;
	*lenp = 0;
	if (stream >= ar->ns || chunk >= ar->s[stream].nchunks)
		return (ar_err(ar, HWTR_E_NOENT, "no chunk %zu in stream %zu",
		    chunk, stream));
	return (read_member_alloc(ar, &ar->m[ar->s[stream].chunks[chunk].member],
	    ar->opts.max_member_size, bufp, lenp));
}

size_t
hwtr_ar_nimages(const struct hwtr_ar *ar)
{
	return (ar->ni);
}

const struct hwtr_image_desc *
hwtr_ar_image(const struct hwtr_ar *ar, size_t i)
{
	return (i < ar->ni ? &ar->img[i].d : NULL);
}

int
hwtr_ar_find_image(const struct hwtr_ar *ar, const char *key)
{
	int i = image_index(ar, key);

	return (i >= 0 ? i : -HWTR_E_NOENT);
}

/* The image's bytes must be those its description names. */
static int
image_sha_check(struct hwtr_ar *ar, size_t i, const uint8_t sha[32])
{
	if (memcmp(sha, ar->img[i].d.sha256, 32) != 0)
		return (ar_err(ar, HWTR_E_CHECKSUM, "member '%s': SHA-256 "
		    "differs from its description",
		    ar->m[ar->img[i].member].info.name));
	return (0);
}

int
hwtr_ar_read_image(struct hwtr_ar *ar, size_t i, void **bufp, size_t *lenp)
{
	uint8_t sha[32];
	int rc;

	*bufp = NULL;
	*lenp = 0;
	if (i >= ar->ni)
		return (ar_err(ar, HWTR_E_NOENT, "no image %zu", i));
	if ((rc = read_member_alloc(ar, &ar->m[ar->img[i].member],
	    HWTR_AR_MEM_MAX, bufp, lenp)) < 0)
		return (rc);
	hwtr_sha256(*bufp, *lenp, sha);
	if ((rc = image_sha_check(ar, i, sha)) < 0) {
		free(*bufp);
		*bufp = NULL;
		*lenp = 0;
	}
	return (rc);
}

struct extract {
	int	fd;
	int	err;
};

static int
extract_write(void *arg, const void *buf, size_t len)
{
	struct extract *x = arg;
	const uint8_t *p = buf;
	ssize_t n;

	while (len > 0) {
		n = write(x->fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			x->err = errno;
			return (-HWTR_E_IO);
		}
		p += n;
		len -= (size_t)n;
	}
	return (0);
}

int
hwtr_ar_extract_image(struct hwtr_ar *ar, size_t i, int fd)
{
	struct extract x = { fd, 0 };
	uint8_t sha[32];
	int rc;

	if (i >= ar->ni)
		return (ar_err(ar, HWTR_E_NOENT, "no image %zu", i));
	rc = read_member_stream(ar, &ar->m[ar->img[i].member], extract_write,
	    &x, sha);
	if (rc < 0 && x.err != 0)
		return (ar_err(ar, HWTR_E_IO, "member '%s': cannot write it "
		    "out: %s", ar->m[ar->img[i].member].info.name,
		    strerror(x.err)));
	if (rc < 0)
		return (rc);
	return (image_sha_check(ar, i, sha));
}

size_t
hwtr_ar_nsideband(const struct hwtr_ar *ar)
{
	return (ar->nsb);
}

const struct hwtr_sb_rec *
hwtr_ar_sideband_rec(const struct hwtr_ar *ar, size_t i)
{
	return (i < ar->nsb ? &ar->sb[i] : NULL);
}

size_t
hwtr_ar_nwarnings(const struct hwtr_ar *ar)
{
	return (ar->warn.n);
}

const char *
hwtr_ar_warning(const struct hwtr_ar *ar, size_t i)
{
	return (i < ar->warn.n ? ar->warn.v[i] : NULL);
}

/*
 * The tar end after end.json (hwtrace(5)): one frame with its checksum,
 * holding zeros only, two 512-byte blocks or more, up to the trailer.
 * Readers do without it, but tar(1) and zstd -t fail on an archive
 * whose end frame is damaged, so verify does too.
 */
#define TAR_END_MAX	(64u << 10)

static int
check_tar_end(struct hwtr_ar *ar)
{
	uint64_t off = ar->tend_off, csize, fcs;
	uint8_t *cbuf = NULL, *buf = NULL;
	ZSTD_DCtx *d = NULL;
	char why[512];
	size_t got, r, i;
	int rc = 0;

	why[0] = '\0';
	if (off == 0)
		snprintf(why, sizeof(why), "missing or unreadable");
	else if (walk_frame(ar, off, &csize, &fcs, why, sizeof(why)) !=
	    FR_OK)
		;
	else if (csize != ar->tend_csize || fcs < 1024 || fcs % 512 != 0 ||
	    fcs > TAR_END_MAX)
		snprintf(why, sizeof(why), "a frame of %ju bytes holding %ju, "
		    "expected %ju holding 1024 or more", (uintmax_t)csize,
		    (uintmax_t)fcs, (uintmax_t)ar->tend_csize);
	else if ((cbuf = malloc((size_t)csize)) == NULL ||
	    (buf = malloc((size_t)fcs)) == NULL || (d = get_dctx(ar)) == NULL)
		rc = -HWTR_E_NOMEM;
	else if ((rc = pread_all(ar, cbuf, (size_t)csize, off, &got)) < 0)
		;
	else {
		r = ZSTD_decompressDCtx(d, buf, (size_t)fcs, cbuf, got);
		if (ZSTD_isError(r) || r != fcs)
			snprintf(why, sizeof(why), "%s", ZSTD_isError(r) ?
			    ZSTD_getErrorName(r) : "short content");
		for (i = 0; why[0] == '\0' && i < fcs; i++)
			if (buf[i] != 0)
				snprintf(why, sizeof(why), "byte %zu is not "
				    "zero", i);
	}
	put_dctx(ar, d);
	free(cbuf);
	free(buf);
	if (rc == 0 && why[0] != '\0')
		rc = off == 0 ? ar_err(ar, HWTR_E_FORMAT, "the tar end frame "
		    "after %s: %s", HWTR_END_NAME, why) : ar_err(ar,
		    HWTR_E_FORMAT, "the tar end frame after %s (at 0x%jx): %s",
		    HWTR_END_NAME, (uintmax_t)off, why);
	return (rc);
}

int
hwtr_ar_verify(struct hwtr_ar *ar)
{
	struct ar_member *m;
	uint8_t sha[32];
	size_t i, j;
	int rc;

	/* Every member streamed through: bounded memory, whatever it is. */
	for (i = 0; i < ar->nm; i++) {
		m = &ar->m[i];
		if ((rc = read_member_stream(ar, m, NULL, NULL, sha)) < 0)
			return (rc);
		if (m->has_sha256 && memcmp(sha, m->sha256, 32) != 0)
			return (ar_err(ar, HWTR_E_CHECKSUM, "member '%s': "
			    "SHA-256 differs from the table of contents",
			    m->info.name));
		if (m->info.kind == HWTR_M_IMAGE) {
			for (j = 0; j < ar->ni; j++)
				if (ar->img[j].member == i)
					break;
			if (j < ar->ni && (rc = image_sha_check(ar, j,
			    sha)) < 0)
				return (rc);
		}
	}
	/* A scanned archive: the table must agree with the frames found. */
	for (i = 0; i < ar->ntoc; i++) {
		if (!hash_find(ar, ar->toc[i].name, &j) ||
		    ar->m[j].info.offset != ar->toc[i].offset ||
		    ar->m[j].info.csize != ar->toc[i].csize ||
		    ar->m[j].size != ar->toc[i].size)
			return (ar_err(ar, HWTR_E_FORMAT, "member '%s': the table "
			    "of contents in %s disagrees with the file",
			    ar->toc[i].name, HWTR_END_NAME));
	}
	for (i = 0; i < ar->npending; i++)
		if (ar->st.complete && !ar->pending[i].used)
			return (ar_err(ar, HWTR_E_FORMAT, "images/%s.json: "
			    "image without its data member",
			    ar->pending[i].d.key));
	return (ar->have_end ? check_tar_end(ar) : 0);
}
