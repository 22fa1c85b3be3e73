/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The bottom of query/: a handle's error message, growable text, the
 * display width of UTF-8 text and the name hash.  Everything else in the
 * module stands on these; they call nothing of it.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "q_int.h"

#ifdef __clang_analyzer__
#undef q_fail			/* q_int.h's help to the analyzer */
#undef q_dbfail
#endif

/* --- diagnostics ---------------------------------------------------------- */

int
q_fail(struct hwtr_q *q, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(q->msg, sizeof(q->msg), fmt, ap);
	va_end(ap);
	return (err);
}

int
q_dbfail(struct hwtr_q *q, const char *what)
{
	return (q_fail(q, -HWTR_E_DB, "%s: %s", what, sqlite3_errmsg(q->db)));
}

const char *
hwtr_q_errmsg(const struct hwtr_q *q)
{
	return (q == NULL ? "no query handle" : q->msg);
}

/* --- growable text ---------------------------------------------------- */

void
q_str_add(struct q_str *s, const char *p, size_t n)
{
	char *np;
	size_t ncap;

	if (s->err)
		return;
	if (s->len + n + 1 > s->cap) {
		ncap = s->cap ? s->cap : 256;
		while (ncap < s->len + n + 1)
			ncap *= 2;
		if ((np = realloc(s->p, ncap)) == NULL) {
			s->err = 1;
			return;
		}
		s->p = np;
		s->cap = ncap;
	}
	memcpy(s->p + s->len, p, n);
	s->len += n;
	s->p[s->len] = '\0';
}

void
q_str_puts(struct q_str *s, const char *p)
{
	q_str_add(s, p, strlen(p));
}

void
q_str_printf(struct q_str *s, const char *fmt, ...)
{
	char small[256], *big;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0) {
		s->err = 1;
		return;
	}
	if ((size_t)n < sizeof(small)) {
		q_str_add(s, small, (size_t)n);
		return;
	}
	if ((big = malloc((size_t)n + 1)) == NULL) {
		s->err = 1;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	va_end(ap);
	q_str_add(s, big, (size_t)n);
	free(big);
}

/* A hwtr_put_fn into the q_str @arg (the JSON writer's output). */
void
q_str_put(void *arg, const char *p, size_t len)
{
	q_str_add(arg, p, len);
}

/* The name of @verb, as messages say it. */
const char *
q_verb_name(enum hwtr_q_verb verb)
{
	static const char *const names[] = {
		[HWTR_Q_SUMMARY] = "summary", [HWTR_Q_THREADS] = "threads",
		[HWTR_Q_LAST] = "last", [HWTR_Q_CALLS] = "calls",
		[HWTR_Q_TREE] = "tree", [HWTR_Q_FUNC] = "func",
		[HWTR_Q_COVERAGE] = "coverage", [HWTR_Q_HOT] = "hot",
		[HWTR_Q_BRANCHES] = "branches", [HWTR_Q_TIMELINE] = "timeline",
		[HWTR_Q_INSNS] = "insns", [HWTR_Q_SQL] = "sql",
		[HWTR_Q_EXPORT] = "export", [HWTR_Q_BT] = "bt",
		[HWTR_Q_ANNOTATE] = "annotate",
	};

	if ((size_t)verb >= sizeof(names) / sizeof(names[0]) ||
	    names[verb] == NULL)
		return ("query");
	return (names[verb]);
}

/* --- display width and the name hash ------------------------------------ */

/* Display width of UTF-8 text: code points, not bytes. */
size_t
q_dwidth(const char *s, size_t len)
{
	size_t w = 0, i;

	for (i = 0; i < len; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			w++;
	return (w);
}

/* FNV-1a of @len bytes of @s: the key of the name caches. */
uint64_t
q_hash(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ULL;
	}
	return (h);
}
