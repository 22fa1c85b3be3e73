/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The sideband record codec, member names and the small memory helpers the
 * writer and reader share.  Records are little-endian whatever the host is:
 * a fixed header (type, header size, record size, time, pid, tid) and then
 * type-specific fields.  A reader skips a type it does not know by its size
 * and ignores bytes past the fields it knows, which is how later minor
 * versions add record types and fields.
 */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwtr_common.h"
#include "hwtr_format.h"

void *
hwtr_pool_alloc(struct hwtr_pool *p, size_t size)
{
	void *m;

	if (hwtr_grow(&p->v, &p->cap, p->n + 1, sizeof(*p->v)) < 0)
		return (NULL);
	if ((m = calloc(1, size ? size : 1)) == NULL)
		return (NULL);
	p->v[p->n++] = m;
	return (m);
}

char *
hwtr_pool_strndup(struct hwtr_pool *p, const char *s, size_t len)
{
	char *d;

	if ((d = hwtr_pool_alloc(p, len + 1)) == NULL)
		return (NULL);
	memcpy(d, s, len);
	d[len] = '\0';
	return (d);
}

char *
hwtr_pool_strdup(struct hwtr_pool *p, const char *s)
{
	return (hwtr_pool_strndup(p, s, strlen(s)));
}

void
hwtr_pool_free(struct hwtr_pool *p)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		free(p->v[i]);
	free(p->v);
	memset(p, 0, sizeof(*p));
}

void
hwtr_warn(struct hwtr_warnings *w, const char *fmt, ...)
{
	char buf[512], *s;
	va_list ap;

	/* A warning lost to out-of-memory is not worth failing a read over. */
	if (w == NULL || w->n >= 10000)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (hwtr_grow(&w->v, &w->cap, w->n + 1, sizeof(*w->v)) < 0)
		return;
	if ((s = strdup(buf)) != NULL)
		w->v[w->n++] = s;
}

void
hwtr_warnings_free(struct hwtr_warnings *w)
{
	size_t i;

	for (i = 0; i < w->n; i++)
		free(w->v[i]);
	free(w->v);
	memset(w, 0, sizeof(*w));
}

/*
 * Names are relative, made of [A-Za-z0-9._-] components separated by
 * single slashes, no component "." or "..", at most HWTR_NAME_MAX bytes:
 * safe to extract anywhere and unambiguous.
 */
int
hwtr_name_ok(const char *name)
{
	const char *c, *comp;
	size_t n;

	n = strlen(name);
	if (n == 0 || n > HWTR_NAME_MAX)
		return (0);
	comp = name;
	for (c = name;; c++) {
		if (*c == '/' || *c == '\0') {
			if (c == comp)
				return (0);	/* empty: leading, trailing or // */
			if ((c - comp == 1 && comp[0] == '.') ||
			    (c - comp == 2 && comp[0] == '.' && comp[1] == '.'))
				return (0);
			if (*c == '\0')
				return (1);
			comp = c + 1;
			continue;
		}
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		    (*c >= '0' && *c <= '9') || *c == '.' || *c == '_' ||
		    *c == '-'))
			return (0);
	}
}

/* Little-endian output with bounds kept in one place. */
struct wr {
	uint8_t		*p;
	size_t		cap, len;
	int		over;
};

static void
put(struct wr *w, uint64_t v, int n)
{
	int i;

	if (w->cap - w->len < (size_t)n) {
		w->over = 1;
		return;
	}
	for (i = 0; i < n; i++)
		w->p[w->len++] = (uint8_t)(v >> (8 * i));
}

static void
putbytes(struct wr *w, const void *b, size_t n)
{
	if (w->cap - w->len < n) {
		w->over = 1;
		return;
	}
	memcpy(w->p + w->len, b, n);
	w->len += n;
}

static int
putstr(struct wr *w, const char *s)
{
	size_t n;

	if (s == NULL) {
		put(w, HWTR_SB_STR_NONE, 2);
		return (0);
	}
	n = strlen(s);
	if (n >= HWTR_SB_STR_MAX)
		return (-1);
	put(w, n, 2);
	putbytes(w, s, n);
	return (0);
}

int
hwtr_sb_encode(const struct hwtr_sb_rec *r, uint8_t *buf, size_t cap,
    size_t *lenp, char *err, size_t errlen)
{
	struct wr w = { buf, cap, 0, 0 };
	int bad = 0;

	put(&w, (uint64_t)r->type, 2);
	put(&w, HWTR_SB_HDR_SIZE, 2);
	put(&w, 0, 4);			/* size, patched below */
	put(&w, r->time, 8);
	put(&w, (uint32_t)r->pid, 4);
	put(&w, (uint32_t)r->tid, 4);
	switch (r->type) {
	case HWTR_SB_PROC_START:
		put(&w, (uint32_t)r->u.proc_start.ppid, 4);
		break;
	case HWTR_SB_THREAD_START:
		put(&w, (uint32_t)r->u.thread_start.ptid, 4);
		break;
	case HWTR_SB_PROC_EXIT:
	case HWTR_SB_THREAD_EXIT:
		put(&w, (uint32_t)r->u.exit.kind, 4);
		put(&w, (uint32_t)r->u.exit.value, 4);
		break;
	case HWTR_SB_EXEC:
		bad |= putstr(&w, r->u.exec.path);
		break;
	case HWTR_SB_COMM:
		put(&w, r->u.comm.exec, 1);
		bad |= putstr(&w, r->u.comm.comm);
		break;
	case HWTR_SB_MMAP:
		if (r->u.mmap.build_id_len > HWTR_BUILD_ID_MAX) {
			snprintf(err, errlen, "mmap record: build-id of %u bytes",
			    r->u.mmap.build_id_len);
			return (-HWTR_E_INVAL);
		}
		put(&w, r->u.mmap.addr, 8);
		put(&w, r->u.mmap.len, 8);
		put(&w, r->u.mmap.pgoff, 8);
		put(&w, r->u.mmap.prot, 4);
		put(&w, r->u.mmap.flags, 4);
		put(&w, r->u.mmap.build_id_len, 1);
		putbytes(&w, r->u.mmap.build_id, r->u.mmap.build_id_len);
		bad |= putstr(&w, r->u.mmap.path);
		bad |= putstr(&w, r->u.mmap.image);
		break;
	case HWTR_SB_MUNMAP:
		put(&w, r->u.munmap.addr, 8);
		put(&w, r->u.munmap.len, 8);
		break;
	case HWTR_SB_SWITCH:
		put(&w, (uint32_t)r->u.sw.cpu, 4);
		put(&w, r->u.sw.out, 1);
		put(&w, r->u.sw.preempt, 1);
		put(&w, 0, 2);
		break;
	case HWTR_SB_LOST:
		put(&w, r->u.lost.stream, 4);
		put(&w, (uint32_t)r->u.lost.reason, 4);
		put(&w, r->u.lost.bytes, 8);
		put(&w, r->u.lost.records, 8);
		break;
	case HWTR_SB_BUFPOS:
		put(&w, r->u.bufpos.stream, 4);
		put(&w, 0, 4);
		put(&w, r->u.bufpos.offset, 8);
		break;
	default:
		snprintf(err, errlen, "sideband record of unknown type %d",
		    (int)r->type);
		return (-HWTR_E_INVAL);
	}
	if (bad) {
		snprintf(err, errlen, "%s record: string of %d bytes or more",
		    hwtr_sb_type_name(r->type), HWTR_SB_STR_MAX);
		return (-HWTR_E_INVAL);
	}
	if (w.over)
		return (-HWTR_E_LIMIT);
	buf[4] = (uint8_t)w.len;
	buf[5] = (uint8_t)(w.len >> 8);
	buf[6] = (uint8_t)(w.len >> 16);
	buf[7] = (uint8_t)(w.len >> 24);
	*lenp = w.len;
	return (0);
}

/* Little-endian input, bounded by the record. */
struct rdr {
	const uint8_t	*p;
	size_t		len, off;
	int		short_;
};

static uint64_t
get(struct rdr *r, int n)
{
	uint64_t v = 0;
	int i;

	if (r->len - r->off < (size_t)n) {
		r->short_ = 1;
		r->off = r->len;
		return (0);
	}
	for (i = 0; i < n; i++)
		v |= (uint64_t)r->p[r->off++] << (8 * i);
	return (v);
}

/* Returns 0, or -1 with @why set. */
static int
getstr(struct rdr *r, struct hwtr_pool *pool, const char **sp, int optional,
    const char **why)
{
	uint64_t n;

	n = get(r, 2);
	if (r->short_)
		return (0);
	if (n == HWTR_SB_STR_NONE) {
		if (!optional) {
			*why = "required string absent";
			return (-1);
		}
		*sp = NULL;
		return (0);
	}
	if (n >= HWTR_SB_STR_MAX) {
		*why = "string too long";
		return (-1);
	}
	if (r->len - r->off < n) {
		r->short_ = 1;
		return (0);
	}
	if (memchr(r->p + r->off, '\0', n) != NULL) {
		*why = "NUL byte in a string";
		return (-1);
	}
	if ((*sp = hwtr_pool_strndup(pool, (const char *)r->p + r->off, n)) ==
	    NULL) {
		*why = NULL;
		return (-2);
	}
	r->off += n;
	return (0);
}

int
hwtr_sb_decode(const uint8_t *p, size_t avail, struct hwtr_sb_rec *rec,
    struct hwtr_pool *pool, size_t *usedp, size_t *extrap, char *err,
    size_t errlen)
{
	struct rdr r = { p, avail, 0, 0 };
	uint64_t type, hsize, size;
	const char *why = NULL;
	int rc = 0;

	memset(rec, 0, sizeof(*rec));
	if (avail < 8) {
		snprintf(err, errlen, "record header cut: %zu bytes left", avail);
		return (-HWTR_E_FORMAT);
	}
	type = get(&r, 2);
	hsize = get(&r, 2);
	size = get(&r, 4);
	if (hsize < HWTR_SB_HDR_SIZE || size < hsize) {
		snprintf(err, errlen, "record type %ju: header size %ju, "
		    "record size %ju (header needs %d)", (uintmax_t)type,
		    (uintmax_t)hsize, (uintmax_t)size, HWTR_SB_HDR_SIZE);
		return (-HWTR_E_FORMAT);
	}
	if (size > avail || size > HWTR_SB_REC_MAX) {
		snprintf(err, errlen, "record type %ju claims %ju bytes, "
		    "%zu remain", (uintmax_t)type, (uintmax_t)size, avail);
		return (-HWTR_E_FORMAT);
	}
	*usedp = size;
	*extrap = 0;
	rec->type = (enum hwtr_sb_type)type;
	r.len = size;
	rec->time = get(&r, 8);
	rec->pid = (int32_t)get(&r, 4);
	rec->tid = (int32_t)get(&r, 4);
	r.off = hsize;
	switch (type) {
	case HWTR_SB_PROC_START:
		rec->u.proc_start.ppid = (int32_t)get(&r, 4);
		break;
	case HWTR_SB_THREAD_START:
		rec->u.thread_start.ptid = (int32_t)get(&r, 4);
		break;
	case HWTR_SB_PROC_EXIT:
	case HWTR_SB_THREAD_EXIT:
		rec->u.exit.kind = (enum hwtr_exit_kind)get(&r, 4);
		rec->u.exit.value = (int32_t)get(&r, 4);
		if (!r.short_ && rec->u.exit.kind > HWTR_EXIT_SIGNAL)
			why = "unknown exit kind";
		break;
	case HWTR_SB_EXEC:
		rc = getstr(&r, pool, &rec->u.exec.path, 0, &why);
		break;
	case HWTR_SB_COMM:
		rec->u.comm.exec = (uint8_t)get(&r, 1);
		rc = getstr(&r, pool, &rec->u.comm.comm, 0, &why);
		break;
	case HWTR_SB_MMAP:
		rec->u.mmap.addr = get(&r, 8);
		rec->u.mmap.len = get(&r, 8);
		rec->u.mmap.pgoff = get(&r, 8);
		rec->u.mmap.prot = (uint32_t)get(&r, 4);
		rec->u.mmap.flags = (uint32_t)get(&r, 4);
		rec->u.mmap.build_id_len = (uint8_t)get(&r, 1);
		if (r.short_)
			break;
		if (rec->u.mmap.build_id_len > HWTR_BUILD_ID_MAX) {
			why = "build-id longer than 64 bytes";
			break;
		}
		if (r.len - r.off < rec->u.mmap.build_id_len) {
			r.short_ = 1;
			break;
		}
		memcpy(rec->u.mmap.build_id, r.p + r.off,
		    rec->u.mmap.build_id_len);
		r.off += rec->u.mmap.build_id_len;
		rc = getstr(&r, pool, &rec->u.mmap.path, 0, &why);
		if (rc == 0)
			rc = getstr(&r, pool, &rec->u.mmap.image, 1, &why);
		if (rc == 0 && !r.short_ && rec->u.mmap.image != NULL &&
		    !hwtr_name_ok(rec->u.mmap.image))
			why = "image key outside the name charset";
		break;
	case HWTR_SB_MUNMAP:
		rec->u.munmap.addr = get(&r, 8);
		rec->u.munmap.len = get(&r, 8);
		break;
	case HWTR_SB_SWITCH:
		rec->u.sw.cpu = (int32_t)get(&r, 4);
		rec->u.sw.out = (uint8_t)get(&r, 1);
		rec->u.sw.preempt = (uint8_t)get(&r, 1);
		(void)get(&r, 2);
		break;
	case HWTR_SB_LOST:
		rec->u.lost.stream = (uint32_t)get(&r, 4);
		rec->u.lost.reason = (enum hwtr_lost_reason)get(&r, 4);
		rec->u.lost.bytes = get(&r, 8);
		rec->u.lost.records = get(&r, 8);
		break;
	case HWTR_SB_BUFPOS:
		rec->u.bufpos.stream = (uint32_t)get(&r, 4);
		(void)get(&r, 4);
		rec->u.bufpos.offset = get(&r, 8);
		break;
	default:
		return (0);
	}
	if (rc == -2)
		return (-HWTR_E_NOMEM);
	if (rc != 0 || why != NULL) {
		snprintf(err, errlen, "%s record: %s", hwtr_sb_type_name(rec->type),
		    why);
		return (-HWTR_E_FORMAT);
	}
	if (r.short_) {
		snprintf(err, errlen, "%s record of %ju bytes is too short for "
		    "its fields", hwtr_sb_type_name(rec->type), (uintmax_t)size);
		return (-HWTR_E_FORMAT);
	}
	*extrap = size - r.off;
	return (1);
}
