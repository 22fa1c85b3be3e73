/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Private to format/: the pieces the archive writer and reader share (member
 * names, the sideband record codec, JSON descriptions, a memory pool).  The
 * layout they implement is documented in hwtrace(5).
 */

#ifndef HWTR_FORMAT_H
#define HWTR_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "hwtrace.h"

/* Member names (hwtrace(5) MEMBERS). */
#define HWTR_MANIFEST_NAME	"hwtrace.json"
#define HWTR_END_NAME		"end.json"
#define HWTR_NAME_MAX		255

/* The trailer: a zstd skippable frame after the tar end-of-archive frame. */
#define HWTR_TRAILER_MAGIC	0x184D2A5Eu
#define HWTR_TRAILER_TAG	"HWTRACE\0"
#define HWTR_TRAILER_SIZE	40	/* 8 frame header + 32 content */

/* Sideband record codec (hwtrace(5) SIDEBAND). */
#define HWTR_SB_HDR_SIZE	24
#define HWTR_SB_REC_MAX		65536	/* bytes in one record */
#define HWTR_SB_STR_MAX		4096	/* bytes in one string */
#define HWTR_SB_STR_NONE	0xffffu	/* string length meaning "absent" */
#define HWTR_SB_MEMBER_MAX	(1u << 20) /* writer flushes at this size */

/* Allocations whose lifetime is the reader's; freed all at once. */
struct hwtr_pool {
	void		**v;
	size_t		n, cap;
};

void *hwtr_pool_alloc(struct hwtr_pool *p, size_t size);
char *hwtr_pool_strdup(struct hwtr_pool *p, const char *s);
char *hwtr_pool_strndup(struct hwtr_pool *p, const char *s, size_t len);
void hwtr_pool_free(struct hwtr_pool *p);

/* 1 when @name is in the member name charset of hwtrace(5), else 0. */
int hwtr_name_ok(const char *name);

/*
 * Encode @rec at @buf (@cap bytes); *lenp receives its size.  -HWTR_E_INVAL
 * for a record that cannot be encoded (string too long, bad type);
 * -HWTR_E_LIMIT when @cap is too small.
 */
int hwtr_sb_encode(const struct hwtr_sb_rec *rec, uint8_t *buf, size_t cap,
    size_t *lenp, char *err, size_t errlen);

/*
 * Decode the record at @p (@avail bytes left in the member).  *usedp
 * receives its size.  Returns 1 for a record of a known type (in @rec, its
 * strings in @pool), 0 for an unknown type (skipped; its type in
 * @rec->type), or a negative error with @err saying what is wrong relative
 * to the record start.  *extrap receives the bytes of fields this reader
 * does not know (ignored).
 */
int hwtr_sb_decode(const uint8_t *p, size_t avail, struct hwtr_sb_rec *rec,
    struct hwtr_pool *pool, size_t *usedp, size_t *extrap, char *err,
    size_t errlen);

/*
 * JSON descriptions.  The writers return malloc'd text (NULL: out of
 * memory).  The parsers fill their structures from pool memory; on error
 * they return -HWTR_E_FORMAT (or -HWTR_E_VERSION) with @err naming @member
 * and the field; unknown fields are appended to @warn (may be NULL).
 */
struct hwtr_warnings {
	char		**v;
	size_t		n, cap;
};

void hwtr_warn(struct hwtr_warnings *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void hwtr_warnings_free(struct hwtr_warnings *w);

char *hwtr_json_meta(const struct hwtr_capture_meta *m);
int hwtr_json_parse_meta(const char *member, const void *buf, size_t len,
    struct hwtr_capture_meta *m, uint32_t *major, uint32_t *minor,
    struct hwtr_pool *pool, struct hwtr_warnings *w, char *err, size_t errlen);

char *hwtr_json_stream(const struct hwtr_stream_desc *d);
int hwtr_json_parse_stream(const char *member, const void *buf, size_t len,
    struct hwtr_stream_desc *d, struct hwtr_pool *pool,
    struct hwtr_warnings *w, char *err, size_t errlen);

char *hwtr_json_image(const struct hwtr_image_desc *d);
int hwtr_json_parse_image(const char *member, const void *buf, size_t len,
    struct hwtr_image_desc *d, struct hwtr_pool *pool,
    struct hwtr_warnings *w, char *err, size_t errlen);

/* One table-of-contents entry of end.json. */
struct hwtr_toc_ent {
	const char	*name;
	uint64_t	offset;		/* of the member's zstd frame */
	uint64_t	csize;		/* compressed bytes of the frame */
	uint64_t	usize;		/* tar bytes: headers + data + padding */
	uint64_t	size;		/* data bytes */
	int		has_sha256;
	uint8_t		sha256[32];
};

char *hwtr_json_end(const struct hwtr_capture_end *e,
    const struct hwtr_toc_ent *toc, size_t ntoc);
int hwtr_json_parse_end(const char *member, const void *buf, size_t len,
    struct hwtr_capture_end *e, struct hwtr_toc_ent **tocp, size_t *ntocp,
    uint64_t max_entries, struct hwtr_pool *pool, struct hwtr_warnings *w,
    char *err, size_t errlen);

/* Names of enumerations as they appear in JSON. */

#endif /* !HWTR_FORMAT_H */
