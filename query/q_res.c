/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Results: kept in memory as cells in one text pool, each cell's type and
 * display width beside it, and the widest integer of a column as a hint
 * for a streamed table.  Below q_fmt.c, which renders them, and
 * q_stmt.c, which fills them from statements.
 */

#include <sqlite3.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "q_int.h"

/* --- results ------------------------------------------------------------ */

int
q_res_new(struct hwtr_q_res **resp, size_t ncols, const char *const *names)
{
	struct hwtr_q_res *res;
	size_t i;

	*resp = NULL;
	if ((res = calloc(1, sizeof(*res))) == NULL)
		return (-HWTR_E_NOMEM);
	res->ncols = ncols;
	if ((res->names = calloc(ncols + 1, sizeof(char *))) == NULL) {
		free(res);
		return (-HWTR_E_NOMEM);
	}
	for (i = 0; i < ncols; i++)
		if ((res->names[i] = strdup(names[i] ? names[i] : "")) ==
		    NULL) {
			hwtr_q_res_free(res);
			return (-HWTR_E_NOMEM);
		}
	*resp = res;
	return (0);
}

/* Frees what @l holds (q_gaps.c fills it); leaves it empty. */
void
q_lost_clear(struct q_lost *l)
{
	free(l->gaps);
	free(l->note);
	free(l->before);
	memset(l, 0, sizeof(*l));
}

void
hwtr_q_res_free(struct hwtr_q_res *res)
{
	size_t i;

	if (res == NULL)
		return;
	for (i = 0; i < res->ncols; i++)
		free(res->names[i]);
	free(res->names);
	free(res->hint);
	free(res->cells);
	free(res->pool.p);
	q_lost_clear(&res->lost);
	free(res);
}

int
q_res_push_n(struct hwtr_q_res *res, enum hwtr_q_type type, const char *s,
    size_t len, size_t w)
{
	struct q_cell *nc;
	size_t ncap;

	if (res->ncells == res->cap) {
		ncap = res->cap ? res->cap * 2 : 64;
		if ((nc = realloc(res->cells, ncap * sizeof(*nc))) == NULL)
			return (-HWTR_E_NOMEM);
		res->cells = nc;
		res->cap = ncap;
	}
	if (len > UINT32_MAX / 2)
		return (-HWTR_E_LIMIT);
	nc = &res->cells[res->ncells];
	if (s == NULL) {
		nc->type = HWTR_Q_NULL;
		nc->off = Q_NULLOFF;
		nc->len = 0;
		nc->w = 1;		/* shown as "-" */
	} else {
		nc->type = type;
		nc->off = res->pool.len;
		nc->len = (uint32_t)len;
		nc->w = (uint32_t)w;
		/* The text and its NUL (q_str_add keeps one after it). */
		q_str_add(&res->pool, s, len);
		if (res->pool.err)
			return (-HWTR_E_NOMEM);
		res->pool.len++;
	}
	res->ncells++;
	return (0);
}

int
q_res_push(struct hwtr_q_res *res, enum hwtr_q_type type, const char *s)
{
	size_t len;

	if (s == NULL)
		return (q_res_push_n(res, HWTR_Q_NULL, NULL, 0, 1));
	len = strlen(s);
	return (q_res_push_n(res, type, s, len, q_dwidth(s, len)));
}

int
q_res_pushf(struct hwtr_q_res *res, enum hwtr_q_type type, const char *fmt,
    ...)
{
	char buf[512], *p = buf;
	va_list ap;
	int n, rc;

	/* Most cells fit in place; a cell with a long name is as long. */
	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return (-HWTR_E_INVAL);
	if ((size_t)n >= sizeof(buf)) {
		if ((p = malloc((size_t)n + 1)) == NULL)
			return (-HWTR_E_NOMEM);
		va_start(ap, fmt);
		vsnprintf(p, (size_t)n + 1, fmt, ap);
		va_end(ap);
	}
	rc = q_res_push(res, type, p);
	if (p != buf)
		free(p);
	return (rc);
}

size_t
q_fmt_i64(char *buf, int64_t v)
{
	static const char pairs[] =
	    "00010203040506070809101112131415161718192021222324252627282930"
	    "31323334353637383940414243444546474849505152535455565758596061"
	    "6263646566676869707172737475767778798081828384858687888990919293"
	    "949596979899";
	char tmp[24], *p = tmp + sizeof(tmp);
	uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
	size_t len;

	/* Two digits a division: this runs for most cells of a long answer. */
	while (u >= 100) {
		p -= 2;
		memcpy(p, pairs + (u % 100) * 2, 2);
		u /= 100;
	}
	if (u >= 10) {
		p -= 2;
		memcpy(p, pairs + u * 2, 2);
	} else
		*--p = (char)('0' + u);
	if (v < 0)
		*--p = '-';
	len = (size_t)(tmp + sizeof(tmp) - p);
	memcpy(buf, p, len);
	buf[len] = '\0';
	return (len);
}

size_t
q_fmt_hex(char *buf, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	char tmp[16];
	size_t n = 0, len = 0;

	if (v == 0) {
		buf[0] = '0';
		buf[1] = '\0';
		return (1);
	}
	while (v != 0) {
		tmp[n++] = digits[v & 0xf];
		v >>= 4;
	}
	buf[len++] = '0';
	buf[len++] = 'x';
	while (n > 0)
		buf[len++] = tmp[--n];
	buf[len] = '\0';
	return (len);
}

int
q_res_push_int(struct hwtr_q_res *res, int64_t v)
{
	char buf[24];
	size_t n = q_fmt_i64(buf, v);

	return (q_res_push_n(res, HWTR_Q_INT, buf, n, n));
}

void
q_res_hint(struct hwtr_q_res *res, size_t col, int64_t v)
{
	char buf[24];
	size_t n;

	if (col >= res->ncols)
		return;
	if (res->hint == NULL &&
	    (res->hint = calloc(res->ncols, sizeof(*res->hint))) == NULL)
		return;		/* a hint: alignment only */
	n = q_fmt_i64(buf, v);
	if (n > res->hint[col])
		res->hint[col] = n;
}

void
q_res_stream(struct hwtr_q *q, struct hwtr_q_res *res)
{
	res->out = q->out;
}

size_t
hwtr_q_res_nrows(const struct hwtr_q_res *res)
{
	return (res->ncols ? res->ncells / res->ncols : 0);
}

const char *
hwtr_q_res_cell(const struct hwtr_q_res *res, size_t row, size_t col,
    enum hwtr_q_type *typep)
{
	const struct q_cell *c;

	if (col >= res->ncols || row >= hwtr_q_res_nrows(res)) {
		if (typep != NULL)
			*typep = HWTR_Q_NULL;
		return (NULL);
	}
	c = &res->cells[row * res->ncols + col];
	if (typep != NULL)
		*typep = c->type;
	return (Q_CELL_S(res, c));
}
