/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Craft archives for the reader's tests directly with libarchive and zstd,
 * independently of format/'s writer: hostile members (links, devices, bad
 * names), bombs, other versions, unknown members and records.
 */

#ifndef CRAFT_H
#define CRAFT_H

#include <atf-c.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <archive.h>
#include <archive_entry.h>
#include <zstd.h>

struct craft_member {
	const char	*name;
	const void	*data;
	size_t		len;
	unsigned	type;		/* AE_IF*; 0: regular file */
	const char	*link;		/* symlink or hardlink target */
	/* With craft_opts.toc: */
	const char	*toc_name;	/* the name in end.json; NULL: name */
	uint64_t	claim_size;	/* the tar header's size (base-256);
					   0: the real one */
	int		window_log;	/* this member's frame: a window of
					   2^window_log, no content size */
};

/* Member @m: @name holding the @len bytes at @data (borrowed). */
static inline void
craft_set(struct craft_member *m, const char *name, const void *data,
    size_t len)
{
	m->name = name;
	m->data = data;
	m->len = len;
}

struct craft_opts {
	int		window_log;	/* 0: default */
	int		no_content_size;
	int		tar_end;	/* write the tar end frame */
	/*
	 * End as a complete archive does: end.json listing every member
	 * (offset, csize, usize, size as crafted), the tar end frame and the
	 * trailer that points at end.json (hwtrace(5)), so that the reader
	 * opens it through its table of contents.
	 */
	int		toc;
	int		no_checksum;	/* frames without a content checksum */
};

struct craft_buf {
	uint8_t		*p;
	size_t		len, cap;
};

static la_ssize_t
craft_cb(struct archive *a, void *arg, const void *buf, size_t len)
{
	struct craft_buf *b = arg;

	(void)a;
	if (b->len + len > b->cap) {
		b->cap = (b->len + len) * 2;
		b->p = realloc(b->p, b->cap);
		ATF_REQUIRE(b->p != NULL);
	}
	memcpy(b->p + b->len, buf, len);
	b->len += len;
	return ((la_ssize_t)len);
}

/*
 * One step of compression @op of @in by @c, its output appended to @f;
 * what ZSTD_compressStream2 returns (0: the frame is done).
 */
static size_t
craft_zstep(FILE *f, ZSTD_CCtx *c, ZSTD_inBuffer *in, ZSTD_EndDirective op)
{
	uint8_t out[1 << 16];
	ZSTD_outBuffer ob = { out, sizeof(out), 0 };
	size_t r;

	r = ZSTD_compressStream2(c, &ob, in, op);
	ATF_REQUIRE(!ZSTD_isError(r));
	ATF_REQUIRE(fwrite(out, 1, ob.pos, f) == ob.pos);
	return (r);
}

/* Compress @b as one frame and append it to @f. */
static void
craft_frame(FILE *f, struct craft_buf *b, const struct craft_opts *o)
{
	ZSTD_CCtx *c = ZSTD_createCCtx();
	ZSTD_inBuffer in = { b->p, b->len, 0 };
	size_t r;

	ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, 3);
	ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag,
	    o != NULL && o->no_checksum ? 0 : 1);
	if (o != NULL && o->window_log != 0)
		ZSTD_CCtx_setParameter(c, ZSTD_c_windowLog, o->window_log);
	if (o == NULL || !o->no_content_size)
		ZSTD_CCtx_setPledgedSrcSize(c, b->len);
	else {
		/* Streamed with an unknown size: the header keeps the window. */
		ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, 0);
		(void)craft_zstep(f, c, &in, ZSTD_e_continue);
	}
	do
		r = craft_zstep(f, c, &in, ZSTD_e_end);
	while (r != 0);
	ZSTD_freeCCtx(c);
	b->len = 0;
}

/*
 * Give the ustar header at @h the size @size in base-256 (as GNU tar and
 * libarchive read sizes that do not fit 11 octal digits) and a new
 * checksum.
 */
static void
craft_claim_size(uint8_t *h, uint64_t size)
{
	unsigned sum = 0;
	int i;

	memset(h + 124, 0, 12);
	h[124] = 0x80;
	for (i = 0; i < 8; i++)
		h[135 - i] = (uint8_t)(size >> (8 * i));
	memset(h + 148, ' ', 8);
	for (i = 0; i < 512; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
	h[155] = ' ';
}

static void
craft_le64(uint8_t *p, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Append end.json's frame, the tar end frame and the trailer to @f. */
static void
craft_end(FILE *f, struct archive *a, struct craft_buf *b, const char *toc,
    const struct craft_opts *o)
{
	struct archive_entry *e;
	uint8_t tr[40];
	long endoff, endend;
	char *js;

	ATF_REQUIRE(asprintf(&js, "{\"end_ns\": 1, \"exit\": {\"kind\": "
	    "\"code\", \"value\": 0}, \"lost_bytes\": 0, \"lost_records\": "
	    "0, \"members\": [%s]}", toc) > 0);
	e = archive_entry_new();
	archive_entry_set_pathname(e, "end.json");
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_perm(e, 0644);
	archive_entry_set_size(e, (la_int64_t)strlen(js));
	ATF_REQUIRE(archive_write_header(a, e) == ARCHIVE_OK);
	ATF_REQUIRE(archive_write_data(a, js, strlen(js)) ==
	    (la_ssize_t)strlen(js));
	archive_write_finish_entry(a);
	archive_entry_free(e);
	endoff = ftell(f);
	craft_frame(f, b, o);
	endend = ftell(f);
	archive_write_close(a);
	craft_frame(f, b, o);
	memset(tr, 0, sizeof(tr));
	craft_le64(tr, 0x184D2A5Eu);
	tr[4] = 32;
	memcpy(tr + 8, "HWTRACE", 8);
	craft_le64(tr + 16, 1);
	craft_le64(tr + 24, (uint64_t)endoff);
	craft_le64(tr + 32, (uint64_t)(endend - endoff));
	ATF_REQUIRE(fwrite(tr, 1, sizeof(tr), f) == sizeof(tr));
	free(js);
}

static void
craft(const char *path, const struct craft_member *m, size_t n,
    const struct craft_opts *o)
{
	struct craft_buf b = { NULL, 0, 0 };
	struct archive *a = archive_write_new();
	struct archive_entry *e;
	struct craft_opts mo;
	FILE *f = fopen(path, "wb");
	char *toc = strdup(""), *nt;
	uint64_t usize, size;
	long off;
	size_t i;

	ATF_REQUIRE(a != NULL && f != NULL);
	archive_write_set_format_pax(a);
	archive_write_set_bytes_per_block(a, 0);
	archive_write_set_bytes_in_last_block(a, 1);
	ATF_REQUIRE(archive_write_open2(a, &b, NULL, craft_cb, NULL, NULL) ==
	    ARCHIVE_OK);
	for (i = 0; i < n; i++) {
		e = archive_entry_new();
		archive_entry_set_pathname(e, m[i].name);
		archive_entry_set_filetype(e, m[i].type ? m[i].type : AE_IFREG);
		archive_entry_set_perm(e, 0644);
		if (m[i].type == AE_IFLNK)
			archive_entry_set_symlink(e, m[i].link);
		else if (m[i].link != NULL)
			archive_entry_set_hardlink(e, m[i].link);
		if (m[i].type == 0 || m[i].type == AE_IFREG)
			archive_entry_set_size(e, (la_int64_t)m[i].len);
		ATF_REQUIRE_MSG(archive_write_header(a, e) == ARCHIVE_OK,
		    "%s", archive_error_string(a));
		if (m[i].len > 0 && (m[i].type == 0 || m[i].type == AE_IFREG))
			ATF_REQUIRE(archive_write_data(a, m[i].data, m[i].len) ==
			    (la_ssize_t)m[i].len);
		archive_write_finish_entry(a);
		archive_entry_free(e);
		if (m[i].claim_size != 0)
			craft_claim_size(b.p, m[i].claim_size);
		usize = b.len;
		size = m[i].type == 0 || m[i].type == AE_IFREG ? m[i].len : 0;
		off = ftell(f);
		if (o != NULL)
			mo = *o;
		else
			memset(&mo, 0, sizeof(mo));
		if (m[i].window_log != 0) {
			mo.window_log = m[i].window_log;
			mo.no_content_size = 1;
		}
		craft_frame(f, &b, &mo);
		ATF_REQUIRE(asprintf(&nt, "%s%s{\"name\": \"%s\", \"offset\": "
		    "%ld, \"csize\": %ld, \"usize\": %ju, \"size\": %ju}", toc,
		    i > 0 ? ", " : "", m[i].toc_name ? m[i].toc_name : m[i].name,
		    off, ftell(f) - off, (uintmax_t)usize, (uintmax_t)size) > 0);
		free(toc);
		toc = nt;
	}
	if (o != NULL && o->toc)
		craft_end(f, a, &b, toc, o);
	else
		archive_write_close(a);
	if (o != NULL && o->tar_end && !o->toc)
		craft_frame(f, &b, o);
	archive_write_free(a);
	free(toc);
	free(b.p);
	fclose(f);
}

/* A manifest of format version @ver, with @extra JSON fields ("" none). */
static char *
craft_manifest(const char *ver, const char *extra)
{
	char *s;

	ATF_REQUIRE(asprintf(&s, "{\"format\": \"%s\", \"writer\": \"craft\", "
	    "\"host\": \"h\", \"source\": \"step\", \"source_version\": null, "
	    "\"sideband_origin\": null, \"caveats\": [], \"cpu\": "
	    "{\"vendor\": \"amd\", \"family\": 25, \"model\": 1, "
	    "\"stepping\": 1, \"brand\": \"\"}, \"argv\": [\"x\"], "
	    "\"start_ns\": 0, \"timeconv\": null%s}", ver, extra) > 0);
	return (s);
}

#define CRAFT_STREAM0	"{\"id\": 0, \"name\": \"s\", \"format\": \"none\", " \
	"\"pid\": -1, \"tid\": -1, \"cpu\": -1}"

/* Little-endian sideband record encoding, written here independently. */
static size_t
sb_put(uint8_t *p, uint64_t v, int n)
{
	int i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
	return ((size_t)n);
}

/* A header of @size bytes (type, 24, size, time, pid, tid). */
static size_t
sb_hdr(uint8_t *p, unsigned type, uint32_t size, uint64_t time, int32_t pid,
    int32_t tid)
{
	size_t n = 0;

	n += sb_put(p + n, type, 2);
	n += sb_put(p + n, 24, 2);
	n += sb_put(p + n, size, 4);
	n += sb_put(p + n, time, 8);
	n += sb_put(p + n, (uint32_t)pid, 4);
	n += sb_put(p + n, (uint32_t)tid, 4);
	return (n);
}

#endif /* !CRAFT_H */
