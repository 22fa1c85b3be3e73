/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The JSON hwtrace outputs itself (hwtrace info --json, the query verbs'
 * json format, the Perfetto export), written as it is made: the quoting
 * of strings (RFC 8259, section 7) and the writer that puts the commas,
 * colons and brackets (struct hwtr_jw).  The archive's JSON members are
 * written and parsed by format/ with jansson; output that streams row by
 * row, and must take any bytes an archive holds, needs only this.
 */

#include <assert.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include "hwtr_common.h"

void
hwtr_json_quote(hwtr_put_fn put, void *arg, const char *s)
{
	const unsigned char *p, *run;
	const char *e;
	char u[8];

	if (s == NULL) {
		put(arg, "null", 4);
		return;
	}
	put(arg, "\"", 1);
	for (p = run = (const unsigned char *)s; *p != '\0'; p++) {
		switch (*p) {
		case '"':
			e = "\\\"";
			break;
		case '\\':
			e = "\\\\";
			break;
		case '\n':
			e = "\\n";
			break;
		case '\r':
			e = "\\r";
			break;
		case '\t':
			e = "\\t";
			break;
		default:
			if (*p >= 0x20 && *p != 0x7f)
				continue;
			snprintf(u, sizeof(u), "\\u%04x", *p);
			e = u;
		}
		if (p > run)
			put(arg, (const char *)run, (size_t)(p - run));
		put(arg, e, e == u ? 6 : 2);
		run = p + 1;
	}
	if (p > run)
		put(arg, (const char *)run, (size_t)(p - run));
	put(arg, "\"", 1);
}

void
hwtr_jw_init(struct hwtr_jw *j, hwtr_put_fn put, void *arg, int flags)
{
	j->put = put;
	j->arg = arg;
	j->flags = flags;
	j->depth = 0;
	j->key = 0;
	j->ws = NULL;
	j->any[0] = 0;
}

void
hwtr_jw_ws(struct hwtr_jw *j, const char *ws)
{
	j->ws = ws;
}

static void
put_ws(struct hwtr_jw *j)
{
	const char *p;

	if (j->ws == NULL)
		return;
	for (p = j->ws; *p != '\0'; p++)
		;
	j->put(j->arg, j->ws, (size_t)(p - j->ws));
	j->ws = NULL;
}

/*
 * Before a key, or a value that has none (an array's element, the top
 * level): the comma after the previous item and the layout.
 */
static void
item(struct hwtr_jw *j)
{
	if (j->key) {
		j->key = 0;
		return;
	}
	if (j->any[j->depth]) {
		j->put(j->arg, ",", 1);
		if (j->ws == NULL && (j->flags & HWTR_JW_SPACED))
			j->put(j->arg, " ", 1);
	}
	j->any[j->depth] = 1;
	put_ws(j);
}

static void
open_(struct hwtr_jw *j, char o, char c)
{
	item(j);
	assert(j->depth + 1 < HWTR_JW_DEPTH);
	j->put(j->arg, &o, 1);
	j->depth++;
	j->any[j->depth] = 0;
	j->close[j->depth] = c;
}

void
hwtr_jw_obj(struct hwtr_jw *j)
{
	open_(j, '{', '}');
}

void
hwtr_jw_arr(struct hwtr_jw *j)
{
	open_(j, '[', ']');
}

void
hwtr_jw_end(struct hwtr_jw *j)
{
	assert(j->depth > 0 && !j->key);
	put_ws(j);
	j->put(j->arg, &j->close[j->depth], 1);
	j->depth--;
}

void
hwtr_jw_key(struct hwtr_jw *j, const char *key)
{
	assert(j->depth > 0 && j->close[j->depth] == '}' && !j->key);
	item(j);
	hwtr_json_quote(j->put, j->arg, key);
	if (j->flags & HWTR_JW_SPACED)
		j->put(j->arg, ": ", 2);
	else
		j->put(j->arg, ":", 1);
	j->key = 1;
}

void
hwtr_jw_str(struct hwtr_jw *j, const char *s)
{
	item(j);
	hwtr_json_quote(j->put, j->arg, s);
}

void
hwtr_jw_num(struct hwtr_jw *j, const char *text, size_t len)
{
	item(j);
	j->put(j->arg, text, len);
}

void
hwtr_jw_numf(struct hwtr_jw *j, const char *fmt, ...)
{
	char buf[64];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	assert(n >= 0 && (size_t)n < sizeof(buf));
	hwtr_jw_num(j, buf, (size_t)n);
}

void
hwtr_jw_u64(struct hwtr_jw *j, uint64_t v)
{
	hwtr_jw_numf(j, "%" PRIu64, v);
}

void
hwtr_jw_i64(struct hwtr_jw *j, int64_t v)
{
	hwtr_jw_numf(j, "%" PRId64, v);
}

void
hwtr_jw_bool(struct hwtr_jw *j, int v)
{
	hwtr_jw_num(j, v ? "true" : "false", v ? 4 : 5);
}

void
hwtr_jw_null(struct hwtr_jw *j)
{
	hwtr_jw_num(j, "null", 4);
}

void
hwtr_jw_kstr(struct hwtr_jw *j, const char *key, const char *s)
{
	hwtr_jw_key(j, key);
	hwtr_jw_str(j, s);
}

void
hwtr_jw_ku64(struct hwtr_jw *j, const char *key, uint64_t v)
{
	hwtr_jw_key(j, key);
	hwtr_jw_u64(j, v);
}

void
hwtr_jw_ki64(struct hwtr_jw *j, const char *key, int64_t v)
{
	hwtr_jw_key(j, key);
	hwtr_jw_i64(j, v);
}
