/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The archive reader's frame reading: decompression contexts, a frame
 * decompressed into regions, its tar headers parsed with libarchive, and a
 * member read whole (checked against its header) or streamed in bounded
 * memory.
 */

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>
#include <zstd_errors.h>

#include "ar_int.h"

/* The reader's message (ar_err()): the bottom of the reader's files. */
void
ar_seterr(struct hwtr_ar *ar, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&ar->lock);
	va_start(ap, fmt);
	vsnprintf(ar->errmsg, sizeof(ar->errmsg), fmt, ap);
	va_end(ap);
	pthread_mutex_unlock(&ar->lock);
}

/*
 * The message and error of zstd's error @r in the frame of member @what
 * at @off: a wrong checksum is HWTR_E_CHECKSUM, anything else a format
 * error.
 */
static int
ar_zerr(struct hwtr_ar *ar, size_t r, const char *what, uintmax_t off)
{
	return (ar_err(ar, ZSTD_getErrorCode(r) == ZSTD_error_checksum_wrong ?
	    HWTR_E_CHECKSUM : HWTR_E_FORMAT, "member '%s': frame at 0x%jx: %s",
	    what, off, ZSTD_getErrorName(r)));
}

int
ar_pread_all(struct hwtr_ar *ar, void *buf, size_t len, uint64_t off,
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

/* ---- decompression -------------------------------------------------------- */

/*
 * A decompression context for one call.  Creating one allocates its
 * window, which costs more than decompressing a small chunk, so idle
 * contexts are kept (each call still has one of its own).
 */
ZSTD_DCtx *
ar_get_dctx(struct hwtr_ar *ar)
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

void
ar_put_dctx(struct hwtr_ar *ar, ZSTD_DCtx *d)
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

	if ((d = ar_get_dctx(ar)) == NULL ||
	    (ibuf = malloc(csize < READ_PIECE ? (size_t)csize : READ_PIECE)) ==
	    NULL) {
		ar_put_dctx(ar, d);
		return (-HWTR_E_NOMEM);
	}
	memset(&out, 0, sizeof(out));
	rlen = 0;
	while (done < csize) {
		piece = csize - done < READ_PIECE ? (size_t)(csize - done) :
		    READ_PIECE;
		if ((rc = ar_pread_all(ar, ibuf, piece, off + done, &got)) < 0)
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
				rc = ar_zerr(ar, r, what, (uintmax_t)off);
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
	ar_put_dctx(ar, d);
	return (rc);
}

/*
 * Parse the tar headers in @hdr (@len bytes) with libarchive; check the
 * entry is a regular file and fill @name (HWTR_NAME_MAX + 1) and @sizep.
 * With @data_off: where the data starts (when it lies in @hdr).
 */
int
ar_parse_tar(struct hwtr_ar *ar, uint64_t foff, const void *hdr, size_t len,
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
int
ar_holds_other(struct hwtr_ar *ar, const struct ar_member *m, const char *name,
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
	if ((rc = ar_parse_tar(ar, m->info.offset, hdr, (size_t)m->hdr_len, name,
	    &size, &eof, NULL)) < 0)
		return (rc);
	if (eof || strcmp(name, m->info.name) != 0 || size != m->size)
		return (ar_holds_other(ar, m, name, size, eof));
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
	if (cbuf == NULL || buf == NULL || (d = ar_get_dctx(ar)) == NULL) {
		rc = ar_err(ar, HWTR_E_NOMEM, "member '%s': out of memory "
		    "for %ju bytes", m->info.name, (uintmax_t)m->info.usize);
		goto fail;
	}
	if ((rc = ar_pread_all(ar, cbuf, (size_t)m->info.csize, m->info.offset,
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
	ar_put_dctx(ar, d);
	d = NULL;
	free(cbuf);
	cbuf = NULL;
	if ((rc = ar_parse_tar(ar, m->info.offset, buf, (size_t)m->hdr_len, name,
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
	ar_put_dctx(ar, d);
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

	if ((rc = ar_pread_all(ar, buf, m->info.csize < ZSTD_FRAMEHEADERSIZE_MAX ?
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

int
ar_read_member_stream(struct hwtr_ar *ar, const struct ar_member *m,
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
	if ((d = ar_get_dctx(ar)) == NULL || (ibuf = malloc(READ_PIECE)) ==
	    NULL || (obuf = malloc(STREAM_PIECE)) == NULL) {
		ar_put_dctx(ar, d);
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
		if ((rc = ar_pread_all(ar, ibuf, piece, m->info.offset + done,
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
				rc = ar_zerr(ar, r, m->info.name,
				    (uintmax_t)m->info.offset);
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
					    ar_parse_tar(ar, m->info.offset, hdr,
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
	ar_put_dctx(ar, d);
	return (rc);
}

int
ar_read_member_alloc(struct hwtr_ar *ar, const struct ar_member *m, uint64_t max,
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
