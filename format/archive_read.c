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
 *
 * The member table and its kinds are in ar_member.c, frame reading in
 * ar_frame.c; ar_int.h is what the three share.
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
#include <zstd_errors.h>

#include "ar_int.h"
#include "hwtr_elf.h"

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

	if (ar_pread_all(ar, b, sizeof(b), off, &got) < 0) {
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
		if (ar_pread_all(ar, b, 3, pos, &got) < 0) {
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

	if ((d = ar_get_dctx(ar)) == NULL)
		return (-HWTR_E_NOMEM);
	while (o.pos < cap && done < csize) {
		piece = csize - done < sizeof(ib) ? (size_t)(csize - done) :
		    sizeof(ib);
		if ((rc = ar_pread_all(ar, ib, piece, off + done, &got)) < 0)
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
	ar_put_dctx(ar, d);
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
	char why[HWTR_ERRMSG_MAX], name[HWTR_NAME_MAX + 1];
	uint64_t off = 0, csize, fcs, size, fsize = ar->st.file_size;
	int64_t data_off;
	size_t got, plen, idx;
	int rc, eof, tar_end = 0;
	enum frame_res fr;
	uint32_t magic;

	ar->st.valid_end = 0;
	while (off < fsize) {
		if ((rc = ar_pread_all(ar, b, 8, off, &got)) < 0)
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
		/* ar_add_member() checks the ratio. */
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
		if ((rc = ar_parse_tar(ar, off, pre, plen, name, &size, &eof,
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
		if ((rc = ar_add_member(ar, name, off, csize, fcs, size, &idx)) < 0)
			return (rc);
		if (data_off >= 0 && (uint64_t)data_off != ar->m[idx].hdr_len)
			return (ar_err(ar, HWTR_E_FORMAT, "member '%s' at 0x%jx: "
			    "data at %jd, the frame size says %ju", name,
			    (uintmax_t)off, (intmax_t)data_off,
			    (uintmax_t)ar->m[idx].hdr_len));
		if ((rc = ar_process_member(ar, idx)) < 0)
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
	char why[HWTR_ERRMSG_MAX], name[HWTR_NAME_MAX + 1];
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
	if ((rc = ar_parse_tar(ar, m->info.offset, pre, plen, name, &size, &eof,
	    &data_off)) < 0)
		return (rc);
	if (eof || strcmp(name, m->info.name) != 0 || size != m->size ||
	    (data_off >= 0 && (uint64_t)data_off != m->hdr_len))
		return (ar_holds_other(ar, m, name, size, eof));
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
	char why[HWTR_ERRMSG_MAX];
	size_t got, i, idx;
	struct ar_member em;
	const struct hwtr_toc_ent *t;
	int rc;

	if (ar->st.file_size < HWTR_TRAILER_SIZE)
		return (0);
	if (ar_pread_all(ar, tr, sizeof(tr), ar->st.file_size - sizeof(tr),
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
		    ar_parse_tar(ar, endoff, pre, plen, name, &size, &eof, NULL) < 0 ||
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

		if (ar_read_member_alloc(ar, &em, JSON_MAX, &buf, &len) < 0)
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
		if ((rc = ar_add_member(ar, t->name, t->offset, t->csize,
		    t->usize, t->size, &idx)) < 0)
			return (rc);
		if ((rc = check_toc_member(ar, idx)) < 0)
			return (rc);
		ar->m[idx].has_sha256 = t->has_sha256;
		memcpy(ar->m[idx].sha256, t->sha256, 32);
		if ((rc = ar_process_member(ar, idx)) < 0)
			return (rc);
	}
	if (prev_end != endoff)
		return (ar_err(ar, HWTR_E_FORMAT, "%s: the table of contents "
		    "ends at 0x%jx, %s starts at 0x%jx", HWTR_END_NAME,
		    (uintmax_t)prev_end, HWTR_END_NAME, (uintmax_t)endoff));
	if ((rc = ar_add_member(ar, HWTR_END_NAME, endoff, csize, fcs, em.size,
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
	ar->ratio_used = 0;
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
	char ebuf[HWTR_ERRMSG_MAX];
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
	if (ar->opts.ratio_allowance == 0)
		ar->opts.ratio_allowance = 1ULL << 30;
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
	return (ar_read_member_alloc(ar, &ar->m[i], ar->opts.max_member_size <
	    HWTR_AR_MEM_MAX ? ar->opts.max_member_size : HWTR_AR_MEM_MAX,
	    bufp, lenp));
}

int
hwtr_ar_find_member(const struct hwtr_ar *ar, const char *name, size_t *ip)
{
	return (ar_hash_find(ar, name, ip) ? 0 : -HWTR_E_NOENT);
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
	return (ar_read_member_alloc(ar, &ar->m[ar->s[stream].chunks[chunk].member],
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
	int i = ar_image_index(ar, key);

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
	if ((rc = ar_read_member_alloc(ar, &ar->m[ar->img[i].member],
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
	rc = ar_read_member_stream(ar, &ar->m[ar->img[i].member], extract_write,
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
	char why[HWTR_ERRMSG_MAX];
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
	    (buf = malloc((size_t)fcs)) == NULL || (d = ar_get_dctx(ar)) == NULL)
		rc = -HWTR_E_NOMEM;
	else if ((rc = ar_pread_all(ar, cbuf, (size_t)csize, off, &got)) < 0)
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
	ar_put_dctx(ar, d);
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
		if ((rc = ar_read_member_stream(ar, m, NULL, NULL, sha)) < 0)
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
		if (!ar_hash_find(ar, ar->toc[i].name, &j) ||
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
