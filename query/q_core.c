/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Opening a hwtrace database for questions, and the results the verbs
 * return.  The database is opened with SQLITE_OPEN_READONLY (and
 * query_only on), so that nothing a user types can change it; an archive is
 * indexed once into a cache beside it.  A result is kept in memory as cells
 * in one text pool; hwtr_q_run keeps it whole, so that a failure half-way
 * never shows a partial answer, and hwtr_q_stream lets the verbs that can
 * hand it over in blocks of rows (q_res_stream), so that a long answer
 * starts at once and needs no more memory than a block.
 */

#include <sqlite3.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>

#include "q_int.h"
#include "hwtr_x86.h"

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
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return (q_res_push(res, type, buf));
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

int
q_res_row_end(struct hwtr_q *q, struct hwtr_q_res *res)
{
	int rc;

	if (res->out == NULL || res->ncols == 0 ||
	    res->ncells < Q_BLOCK_ROWS * res->ncols)
		return (0);
	if ((rc = q_out_rows(res->out, res, 1)) < 0)
		return (q_fail(q, rc, rc == -HWTR_E_IO ? "cannot write the "
		    "answer" : "out of memory"));
	return (0);
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

/* --- SQL helpers ---------------------------------------------------------- */

int
q_prepare(struct hwtr_q *q, sqlite3_stmt **stp, const char *sql)
{
	if (sqlite3_prepare_v2(q->db, sql, -1, stp, NULL) != SQLITE_OK) {
		*stp = NULL;
		return (q_dbfail(q, "cannot prepare a query"));
	}
	return (0);
}

int
q_bindv(struct hwtr_q *q, sqlite3_stmt *st, const char *sig, va_list ap)
{
	int i, rc = SQLITE_OK;

	for (i = 1; sig != NULL && *sig != '\0' && rc == SQLITE_OK; sig++, i++) {
		switch (*sig) {
		case 'i':
			rc = sqlite3_bind_int64(st, i, va_arg(ap, int64_t));
			break;
		case 's':
			rc = sqlite3_bind_text(st, i, va_arg(ap, const char *),
			    -1, SQLITE_TRANSIENT);
			break;
		default:
			rc = sqlite3_bind_null(st, i);
			break;
		}
	}
	if (rc != SQLITE_OK)
		return (q_dbfail(q, "cannot bind a parameter"));
	return (0);
}

/* Column @c of @st's row as a cell (text: SQLite gives its length). */
static int
q_res_push_col(struct hwtr_q_res *res, enum hwtr_q_type t, sqlite3_stmt *st,
    int c)
{
	const char *s = (const char *)sqlite3_column_text(st, c);
	size_t len;

	if (s == NULL)
		return (q_res_push_n(res, HWTR_Q_NULL, NULL, 0, 1));
	len = strlen(s);
	return (q_res_push_n(res, t, s, len, t == HWTR_Q_TEXT ?
	    q_dwidth(s, len) : len));
}

int
q_res_fill(struct hwtr_q *q, struct hwtr_q_res *res, sqlite3_stmt *st)
{
	enum hwtr_q_type t;
	int c, rc, n = sqlite3_column_count(st);

	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		for (c = 0; c < n; c++) {
			switch (sqlite3_column_type(st, c)) {
			case SQLITE_INTEGER:
				t = HWTR_Q_INT;
				break;
			case SQLITE_FLOAT:
				t = HWTR_Q_REAL;
				break;
			case SQLITE_NULL:
				t = HWTR_Q_NULL;
				break;
			default:
				t = HWTR_Q_TEXT;
				break;
			}
			if (sqlite3_column_type(st, c) == SQLITE_BLOB) {
				struct q_str hx = { 0 };
				const unsigned char *b =
				    sqlite3_column_blob(st, c);
				int k, len = sqlite3_column_bytes(st, c);

				q_str_puts(&hx, "x'");
				for (k = 0; k < len; k++)
					q_str_printf(&hx, "%02x", b[k]);
				q_str_puts(&hx, "'");
				rc = hx.err ? -HWTR_E_NOMEM :
				    q_res_push(res, t, hx.p);
				free(hx.p);
			} else
				rc = q_res_push_col(res, t, st, c);
			if (rc < 0)
				return (q_fail(q, rc, "out of memory"));
		}
		if ((rc = q_res_row_end(q, res)) < 0)
			return (rc);
	}
	if (rc != SQLITE_DONE)
		return (q_dbfail(q, "query failed"));
	return (0);
}

int
q_select(struct hwtr_q *q, struct hwtr_q_res **resp, const char *sql,
    const char *sig, ...)
{
	sqlite3_stmt *st;
	const char *names[64];
	va_list ap;
	int i, n, rc;

	*resp = NULL;
	if ((rc = q_prepare(q, &st, sql)) < 0)
		return (rc);
	va_start(ap, sig);
	rc = q_bindv(q, st, sig, ap);
	va_end(ap);
	n = sqlite3_column_count(st);
	if (rc == 0 && n > 64)
		rc = q_fail(q, -HWTR_E_LIMIT, "too many columns (%d)", n);
	if (rc == 0) {
		for (i = 0; i < n; i++)
			names[i] = sqlite3_column_name(st, i);
		rc = q_res_new(resp, (size_t)n, names);
		if (rc < 0)
			q_fail(q, rc, "out of memory");
	}
	if (rc == 0)
		rc = q_res_fill(q, *resp, st);
	sqlite3_finalize(st);
	if (rc < 0) {
		hwtr_q_res_free(*resp);
		*resp = NULL;
	}
	return (rc);
}

int
q_int(struct hwtr_q *q, int64_t *vp, int64_t dflt, const char *sql,
    const char *sig, ...)
{
	sqlite3_stmt *st;
	va_list ap;
	int rc;

	*vp = dflt;
	if ((rc = q_prepare(q, &st, sql)) < 0)
		return (rc);
	va_start(ap, sig);
	rc = q_bindv(q, st, sig, ap);
	va_end(ap);
	if (rc == 0) {
		switch (sqlite3_step(st)) {
		case SQLITE_ROW:
			if (sqlite3_column_type(st, 0) != SQLITE_NULL)
				*vp = sqlite3_column_int64(st, 0);
			break;
		case SQLITE_DONE:
			break;
		default:
			rc = q_dbfail(q, "query failed");
		}
	}
	sqlite3_finalize(st);
	return (rc);
}

/* --- symbols and suggestions --------------------------------------------- */

static size_t
q_lev(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j, *row, prev, cur, best;

	if (la > 256 || lb > 256)
		return ((size_t)-1);
	if ((row = malloc((lb + 1) * sizeof(*row))) == NULL)
		return ((size_t)-1);
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		prev = row[0];
		row[0] = i;
		for (j = 1; j <= lb; j++) {
			cur = row[j];
			best = prev + (a[i - 1] == b[j - 1] ? 0 : 1);
			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			prev = cur;
		}
	}
	best = row[lb];
	free(row);
	return (best);
}

/*
 * The up to 3 names of @sql's first column closest to @word: a name that
 * contains the word, or is within a third of its length in edit distance.
 * Scans the names once; symbol tables are small next to the trace.
 */
static void
q_suggest(struct hwtr_q *q, const char *sql, const char *word, char *out,
    size_t outlen)
{
	sqlite3_stmt *st;
	struct {
		char	name[128];
		size_t	d;
	} best[3];
	size_t nbest = 0, d, k, lim, i;
	char plain[128];
	const char *name;

	out[0] = '\0';
	/* The pattern without glob characters is what is compared. */
	for (i = 0, k = 0; word[i] != '\0' && k + 1 < sizeof(plain); i++)
		if (strchr("*?[]", word[i]) == NULL)
			plain[k++] = word[i];
	plain[k] = '\0';
	if (k == 0 || sqlite3_prepare_v2(q->db, sql, -1, &st, NULL) !=
	    SQLITE_OK)
		return;
	lim = strlen(plain) / 3 + 1;
	while (sqlite3_step(st) == SQLITE_ROW) {
		name = (const char *)sqlite3_column_text(st, 0);
		if (name == NULL || strlen(name) >= sizeof(best[0].name))
			continue;
		if (strstr(name, plain) != NULL ||
		    strcasestr(name, plain) != NULL)
			d = strlen(name) - strlen(plain) > lim ? lim : 
			    strlen(name) - strlen(plain);
		else
			d = q_lev(plain, name);
		if (d > lim)
			continue;
		for (k = 0; k < nbest; k++)
			if (strcmp(best[k].name, name) == 0)
				break;
		if (k < nbest)
			continue;
		/* Insert sorted by distance, then name. */
		for (k = nbest; k > 0 && (best[k - 1].d > d ||
		    (best[k - 1].d == d && strcmp(best[k - 1].name, name) >
		    0)); k--)
			if (k < 3)
				best[k] = best[k - 1];
		if (k < 3) {
			snprintf(best[k].name, sizeof(best[k].name), "%s",
			    name);
			best[k].d = d;
			if (nbest < 3)
				nbest++;
		}
	}
	sqlite3_finalize(st);
	for (k = 0; k < nbest; k++) {
		size_t l = strlen(out);

		snprintf(out + l, outlen - l, "%s'%s'", k == 0 ?
		    "; did you mean " : k + 1 == nbest ? " or " : ", ",
		    best[k].name);
	}
	if (nbest > 0 && strlen(out) + 2 < outlen)
		strcat(out, "?");
}

static int
q_is_glob(const char *p)
{
	return (strpbrk(p, "*?[") != NULL);
}

/*
 * Aliases (the same address of the same image: "printf" and "_IO_printf")
 * are one function; a block or call names one of them.
 */
#define Q_SYM_ALIASES(w)						\
	"SELECT DISTINCT a.id FROM symbols s JOIN symbols a ON a.image = "	\
	"s.image AND a.addr = s.addr AND (a.kind = s.kind OR s.kind NOT IN "	\
	"('func', 'ifunc')) WHERE " w " ORDER BY a.id"

/*
 * The symbols a plain name (no glob) names, as "(id,id)" in @in: those
 * whose name contains its last component, sifted by q_name_match(), and
 * the one whose mangled name it is.
 */
static int
q_sym_plain(struct hwtr_q *q, const char *pattern, struct q_str *in)
{
	sqlite3_stmt *st;
	struct q_pat *pat;
	char *key;
	const char *name;
	int rc, n = 0;

	if ((key = q_name_key(pattern)) == NULL ||
	    (pat = q_pat_new(pattern)) == NULL) {
		free(key);
		return (q_fail(q, -HWTR_E_NOMEM, "out of memory"));
	}
	rc = q_prepare(q, &st, "SELECT id, name, mangled = ?1 FROM symbols "
	    "WHERE name = ?1 OR mangled = ?1 OR instr(name, ?2) > 0");
	if (rc < 0) {
		free(key);
		q_pat_free(pat);
		return (rc);
	}
	sqlite3_bind_text(st, 1, pattern, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, key, -1, SQLITE_TRANSIENT);
	q_str_puts(in, "(");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		name = (const char *)sqlite3_column_text(st, 1);
		if (sqlite3_column_int(st, 2) != 1 && (name == NULL ||
		    !q_pat_match(pat, name)))
			continue;
		q_str_printf(in, "%s%lld", n++ ? "," : "",
		    (long long)sqlite3_column_int64(st, 0));
	}
	q_str_puts(in, ")");
	sqlite3_finalize(st);
	free(key);
	q_pat_free(pat);
	if (rc != SQLITE_DONE)
		return (q_dbfail(q, "cannot read symbols"));
	return (n);
}

/* The ids @sql gives (bound to @pattern), appended to @s as "(id,id)". */
static int
q_sym_list(struct hwtr_q *q, const char *sql, const char *pattern,
    struct q_str *s)
{
	sqlite3_stmt *st;
	int rc, n = 0;

	if ((rc = q_prepare(q, &st, sql)) < 0)
		return (rc);
	if (sqlite3_bind_parameter_count(st) > 0)
		sqlite3_bind_text(st, 1, pattern, -1, SQLITE_TRANSIENT);
	q_str_puts(s, "(");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		q_str_printf(s, "%s%lld", n++ ? "," : "",
		    (long long)sqlite3_column_int64(st, 0));
	q_str_puts(s, ")");
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return (q_dbfail(q, "cannot read symbols"));
	if (s->err)
		return (q_fail(q, -HWTR_E_NOMEM, "out of memory"));
	return (n);
}

int
q_sym_ids(struct hwtr_q *q, const char *what, const char *pattern,
    char **listp)
{
	struct q_str s = { 0 }, in = { 0 };
	char sugg[512], *sql = NULL;
	int n = 0;

	*listp = NULL;
	/*
	 * A glob matches demangled names and mangled ones whole; a plain
	 * name as gdb's linespecs do (q_names.c): "count_words" is
	 * "shapes::count_words", "f" every overload of "ns::f".  Go's
	 * "(*T).M" is a plain name when no glob matches it.
	 */
	if (q_is_glob(pattern) && (n = q_sym_list(q, Q_SYM_ALIASES("s.name "
	    "GLOB ?1 OR s.mangled GLOB ?1 OR s.name = ?1"), pattern, &s)) < 0)
		goto out;
	if (n == 0 && (!q_is_glob(pattern) || strstr(pattern, "(*") != NULL) &&
	    (n = q_sym_plain(q, pattern, &in)) > 0) {
		free(s.p);
		memset(&s, 0, sizeof(s));
		if (in.err || asprintf(&sql, Q_SYM_ALIASES("s.id IN %s"),
		    in.p) < 0) {
			n = q_fail(q, -HWTR_E_NOMEM, "out of memory");
			goto out;
		}
		n = q_sym_list(q, sql, pattern, &s);
		free(sql);
	}
	if (n == 0) {
		q_suggest(q, "SELECT DISTINCT name FROM symbols WHERE kind IN "
		    "('func', 'ifunc', 'plt', 'notype')", pattern, sugg,
		    sizeof(sugg));
		n = q_fail(q, -HWTR_E_NOENT, "%s: no symbol matches '%s'%s",
		    what, pattern, sugg);
	}
out:
	free(in.p);
	if (n > 0)
		*listp = s.p;
	else
		free(s.p);
	return (n);
}
#undef Q_SYM_ALIASES

/*
 * The thread whose tid is @tid, into *@idp: one thread row must have it
 * (a CPU-mode thread and a thread of a stream of its own, or two
 * processes' threads, may share a tid: then its number must be given).
 */
int
q_thread_of_tid(struct hwtr_q *q, int64_t tid, int64_t *idp)
{
	int64_t n, lo, hi;
	int rc;

	if ((rc = q_int(q, &n, 0, "SELECT count(*) FROM threads WHERE "
	    "tid = ?", "i", tid)) < 0 ||
	    (rc = q_int(q, &lo, 0, "SELECT min(id) FROM threads WHERE "
	    "tid = ?", "i", tid)) < 0 ||
	    (rc = q_int(q, &hi, 0, "SELECT max(id) FROM threads WHERE "
	    "tid = ?", "i", tid)) < 0)
		return (rc);
	if (n == 0)
		return (q_fail(q, -HWTR_E_NOENT, "no thread has tid %lld (see "
		    "'threads')", (long long)tid));
	if (n > 1)
		return (q_fail(q, -HWTR_E_INVAL, "tid %lld is %lld threads "
		    "(numbers %lld to %lld; see 'threads'): give its number "
		    "with --thread", (long long)tid, (long long)n,
		    (long long)lo, (long long)hi));
	*idp = lo;
	return (0);
}

int
q_check_thread(struct hwtr_q *q, int64_t id)
{
	int64_t n;
	int rc;

	if ((rc = q_int(q, &n, 0, "SELECT count(*) FROM threads WHERE id = ?",
	    "i", id)) < 0)
		return (rc);
	if (n == 0) {
		q_int(q, &n, 0, "SELECT max(id) FROM threads", NULL);
		return (q_fail(q, -HWTR_E_NOENT,
		    "no thread %lld (threads are numbered 1 to %lld; see "
		    "'threads')", (long long)id, (long long)n));
	}
	return (0);
}

int
q_wf_open(struct hwtr_q *q, struct q_wfile *wf, const char *path)
{
	int e;

	wf->path = path;
	wf->tmp = NULL;
	/* Exclusively, never through a link, mode 0600. */
	if ((wf->fd = hwtr_out_create(path, 0, &wf->tmp)) < 0) {
		e = errno;
		wf->tmp = NULL;
		return (q_fail(q, -HWTR_E_IO, "cannot create '%s.partial': %s",
		    path, strerror(e)));
	}
	return (0);
}

int
q_wf_write(struct hwtr_q *q, struct q_wfile *wf, const char *buf, size_t len)
{
	size_t off = 0;
	ssize_t w;

	while (off < len) {
		w = write(wf->fd, buf + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return (q_fail(q, -HWTR_E_IO, "cannot write '%s': %s",
			    wf->tmp != NULL ? wf->tmp : wf->path,
			    strerror(w < 0 ? errno : EIO)));
		off += (size_t)w;
	}
	return (0);
}

void
q_wf_abort(struct q_wfile *wf)
{
	if (wf->fd >= 0)
		close(wf->fd);
	wf->fd = -1;
	if (wf->tmp != NULL)
		unlink(wf->tmp);
	free(wf->tmp);
	wf->tmp = NULL;
}

int
q_wf_commit(struct hwtr_q *q, struct q_wfile *wf)
{
	int e, fd = wf->fd;

	wf->fd = -1;
	if (close(fd) != 0) {
		e = errno;
		q_fail(q, -HWTR_E_IO, "cannot write '%s': %s",
		    wf->tmp != NULL ? wf->tmp : wf->path, strerror(e));
		q_wf_abort(wf);
		return (-HWTR_E_IO);
	}
	if (hwtr_out_commit(wf->tmp, wf->path) != 0) {
		e = errno;
		q_fail(q, -HWTR_E_IO, "cannot rename '%s' to '%s': %s", wf->tmp,
		    wf->path, strerror(e));
		q_wf_abort(wf);
		return (-HWTR_E_IO);
	}
	free(wf->tmp);
	wf->tmp = NULL;
	return (0);
}

int
q_write_file(struct hwtr_q *q, const char *path, const char *buf, size_t len)
{
	struct q_wfile wf;
	int rc;

	if ((rc = q_wf_open(q, &wf, path)) < 0)
		return (rc);
	if ((rc = q_wf_write(q, &wf, buf, len)) < 0) {
		q_wf_abort(&wf);
		return (rc);
	}
	return (q_wf_commit(q, &wf));
}

/* --- the SQL function hwtr_disasm(code, offset, ip, mode) ----------------- */

static void
q_sql_disasm(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const uint8_t *code;
	int64_t off;
	char text[128];
	int len, mode;

	(void)argc;
	code = sqlite3_value_blob(argv[0]);
	len = sqlite3_value_bytes(argv[0]);
	off = sqlite3_value_int64(argv[1]);
	mode = sqlite3_value_type(argv[3]) == SQLITE_NULL ? 64 :
	    sqlite3_value_int(argv[3]);
	if (code == NULL || off < 0 || off >= len) {
		sqlite3_result_null(ctx);
		return;
	}
	if (hwtr_x86_disasm(code + off, (size_t)(len - off),
	    (uint64_t)sqlite3_value_int64(argv[2]), mode, text,
	    sizeof(text)) < 0)
		snprintf(text, sizeof(text), "(bad)");
	sqlite3_result_text(ctx, text, -1, SQLITE_TRANSIENT);
}

/*
 * hwtr_disasm() on a CoreSight database: Zydis decodes x86 only, so an ARM
 * instruction is shown as its encoding, as objdump prints it beside the
 * mnemonic: an A64 or A32 word ("d503201f"; mode 64, 32), a T32 halfword
 * ("bf00") or halfword pair ("f000 b800"; mode 16).
 */
static void
q_sql_armenc(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const uint8_t *c;
	char text[32];
	int64_t off;
	int len, mode;
	unsigned h0, h1;

	(void)argc;
	c = sqlite3_value_blob(argv[0]);
	len = sqlite3_value_bytes(argv[0]);
	off = sqlite3_value_int64(argv[1]);
	mode = sqlite3_value_int(argv[3]);
	if (c == NULL || off < 0 || off + 2 > len) {
		sqlite3_result_null(ctx);
		return;
	}
	c += off;
	h0 = (unsigned)c[0] | (unsigned)c[1] << 8;
	if (mode == 16 && (h0 >> 11) < 0x1d)
		snprintf(text, sizeof(text), "%04x", h0);
	else if (off + 4 > len)
		snprintf(text, sizeof(text), "(bad)");
	else {
		h1 = (unsigned)c[2] | (unsigned)c[3] << 8;
		if (mode == 16)
			snprintf(text, sizeof(text), "%04x %04x", h0, h1);
		else
			snprintf(text, sizeof(text), "%08x", h1 << 16 | h0);
	}
	sqlite3_result_text(ctx, text, -1, SQLITE_TRANSIENT);
}

/* --- opening -------------------------------------------------------------- */

enum q_kind { Q_KIND_DB, Q_KIND_ARCHIVE, Q_KIND_OTHER };

static int
q_sniff(const char *path, enum q_kind *kp, char *errbuf, size_t errlen)
{
	unsigned char h[16];
	struct stat st;
	ssize_t n;
	int fd;

	/* Never waits on a FIFO: anything but a regular file is refused. */
	if ((fd = hwtr_in_open(path, &st, errbuf, errlen)) < 0)
		return (fd);
	n = read(fd, h, sizeof(h));
	close(fd);
	if (n == 16 && memcmp(h, "SQLite format 3", 16) == 0)
		*kp = Q_KIND_DB;
	else if (n >= 4 && h[0] == 0x28 && h[1] == 0xb5 && h[2] == 0x2f &&
	    h[3] == 0xfd)
		*kp = Q_KIND_ARCHIVE;	/* zstd frame: hwtrace(5) */
	else
		*kp = Q_KIND_OTHER;
	return (0);
}

/*
 * Views and triggers hwtrace did not write: a view in place of one of its
 * tables (a recursive one never ends) or a trigger is refused, naming it.
 * The one view hwtrace writes must be its own text.
 */
static int
q_db_schema_check(struct hwtr_q *q, const char *path)
{
	const char *want = hwtr_ix_view_sql(), *type, *name, *sql;
	sqlite3_stmt *st;
	size_t n;
	int rc, ok;

	if (sqlite3_prepare_v2(q->db, "SELECT type, name, sql FROM "
	    "sqlite_master WHERE type IN ('view', 'trigger')", -1, &st,
	    NULL) != SQLITE_OK)
		return (q_dbfail(q, "cannot read the schema"));
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		type = (const char *)sqlite3_column_text(st, 0);
		name = (const char *)sqlite3_column_text(st, 1);
		sql = (const char *)sqlite3_column_text(st, 2);
		/* want is the statement with ";\n" after it. */
		n = strlen(want) - 2;
		ok = type != NULL && strcmp(type, "view") == 0 && name != NULL &&
		    strcmp(name, "call_times") == 0 && sql != NULL &&
		    strlen(sql) == n && strncmp(sql, want, n) == 0;
		if (!ok) {
			rc = q_fail(q, -HWTR_E_FORMAT, "'%s': %s '%s' was not "
			    "written by hwtrace: refused", path,
			    type ? type : "object", name ? name : "?");
			sqlite3_finalize(st);
			return (rc);
		}
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return (q_dbfail(q, "cannot read the schema"));
	return (0);
}

/* Open @path read-only and check that it is a database this code reads. */
int
q_db_open(struct hwtr_q *q, const char *path)
{
	int64_t appid, ver, arm;
	int rc;

	rc = sqlite3_open_v2(path, &q->db, SQLITE_OPEN_READONLY |
	    SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK)
		return (q_fail(q, -HWTR_E_DB, "cannot open '%s': %s", path,
		    q->db ? sqlite3_errmsg(q->db) : sqlite3_errstr(rc)));
	/*
	 * A database may come from anywhere, and query sql runs what the
	 * user types: SQLite's defensive settings before anything is read.
	 * No two-argument fts3_tokenizer() (it calls through a pointer the
	 * SQL supplies), no extension loading, no writes to the schema,
	 * and no functions with side effects called from the schema's views
	 * or triggers (trusted_schema off).
	 */
	if (sqlite3_db_config(q->db, SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER, 0,
	    NULL) != SQLITE_OK ||
	    sqlite3_db_config(q->db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0,
	    NULL) != SQLITE_OK ||
	    sqlite3_db_config(q->db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL) !=
	    SQLITE_OK ||
	    sqlite3_db_config(q->db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL) !=
	    SQLITE_OK)
		return (q_dbfail(q, "cannot set up the connection"));
	rc = q_int(q, &appid, 0, "PRAGMA application_id", NULL);
	if (rc < 0)
		return (q_fail(q, -HWTR_E_FORMAT,
		    "'%s' is not a hwtrace database (%s)", path,
		    sqlite3_errmsg(q->db)));
	if (appid != HWTR_DB_APPLICATION_ID)
		return (q_fail(q, -HWTR_E_FORMAT, "'%s' is not a hwtrace "
		    "database (SQLite application_id %#llx, hwtrace writes "
		    "%#x)", path, (unsigned long long)appid,
		    HWTR_DB_APPLICATION_ID));
	if ((rc = q_int(q, &ver, 0, "PRAGMA user_version", NULL)) < 0)
		return (rc);
	if (ver > HWTR_DB_SCHEMA_VERSION)
		return (q_fail(q, -HWTR_E_VERSION, "'%s' has database schema "
		    "version %lld, newer than this hwtrace reads (%d); use a "
		    "newer hwtrace", path, (long long)ver,
		    HWTR_DB_SCHEMA_VERSION));
	if (ver < 1)
		return (q_fail(q, -HWTR_E_FORMAT, "'%s' is not a complete "
		    "hwtrace database (schema version %lld)", path,
		    (long long)ver));
	if (ver < HWTR_DB_SCHEMA_VERSION)
		return (q_fail(q, -HWTR_E_VERSION, "'%s' has database schema "
		    "version %lld, older than this hwtrace reads (%d); index "
		    "its archive again", path, (long long)ver,
		    HWTR_DB_SCHEMA_VERSION));
	if ((rc = q_db_schema_check(q, path)) < 0)
		return (rc);
	/* CoreSight streams: ARM code (see q_sql_armenc()). */
	if ((rc = q_int(q, &arm, 0, "SELECT count(*) FROM streams WHERE "
	    "format IN ('coresight', 'etmv3', 'ptm', 'etmv4', 'ete')",
	    NULL)) < 0)
		return (rc);
	/*
	 * Memory-mapped reads: a verb that visits rows spread over the file
	 * (func: one calls row per invocation, each on its own page) costs a
	 * page-cache copy per page through read(2), and SQLite's own cache
	 * (2 MB) holds little of a large history.  Read-only, so a mapping is
	 * safe; past 1 GiB SQLite reads the rest as before.
	 */
	if (sqlite3_exec(q->db, "PRAGMA query_only = 1; "
	    "PRAGMA mmap_size = 1073741824", NULL, NULL, NULL) != SQLITE_OK ||
	    hwtr_ix_sqlite_register(q->db) < 0 ||
	    sqlite3_create_function(q->db, "hwtr_disasm", 4, SQLITE_UTF8 |
	    SQLITE_DETERMINISTIC, NULL, arm > 0 ? q_sql_armenc : q_sql_disasm,
	    NULL, NULL) != SQLITE_OK)
		return (q_dbfail(q, "cannot set up the connection"));
	return (0);
}

/*
 * Whether the cache @cache can answer for @archive: a database, newer than
 * the archive, made from this very archive (its meta archive_id is the
 * archive's identity: a stale cache of a replaced archive, even one given
 * the old time with cp -p, is indexed again).  A cache this user does not
 * own, or that is not a regular file, is refused: another user could have
 * planted it.  A partial database (meta partial: q_lazy.c) is usable only
 * as the partial cache (@tail).  1 usable, 0 index again, < 0 refused.
 */
static int
q_cache_usable(struct hwtr_q *q, const char *archive, const char *cache,
    int tail)
{
	struct stat sa, sc;
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	char id[HWTR_AR_ID_LEN], eb[256];
	const unsigned char *v;
	enum q_kind k;
	int ok = 0;

	if (lstat(cache, &sc) != 0)
		return (0);
	if (!S_ISREG(sc.st_mode))
		return (q_fail(q, -HWTR_E_PERM, "cache '%s' is not a regular "
		    "file: not used (remove it, or name another with "
		    "--db)", cache));
	if (sc.st_uid != geteuid())
		return (q_fail(q, -HWTR_E_PERM, "cache '%s' belongs to uid %ld, "
		    "not to this user (uid %ld): not trusted (remove it, or "
		    "name another with --db)", cache, (long)sc.st_uid,
		    (long)geteuid()));
	if (stat(archive, &sa) != 0)
		return (0);
	if (q_sniff(cache, &k, eb, sizeof(eb)) < 0 || k != Q_KIND_DB)
		return (0);
	if (sc.st_mtim.tv_sec < sa.st_mtim.tv_sec ||
	    (sc.st_mtim.tv_sec == sa.st_mtim.tv_sec &&
	    sc.st_mtim.tv_nsec < sa.st_mtim.tv_nsec))
		return (0);
	if (hwtr_ar_identity(archive, id, eb, sizeof(eb)) < 0)
		return (0);
	/* A cache written by an older hwtrace is indexed again too. */
	if (sqlite3_open_v2(cache, &db, SQLITE_OPEN_READONLY |
	    SQLITE_OPEN_NOFOLLOW, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) ==
	    SQLITE_OK && sqlite3_step(st) == SQLITE_ROW &&
	    sqlite3_column_int64(st, 0) == HWTR_DB_SCHEMA_VERSION)
		ok = 1;
	sqlite3_finalize(st);
	st = NULL;
	if (ok && !(sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE "
	    "key = 'archive_id'", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW &&
	    (v = sqlite3_column_text(st, 0)) != NULL &&
	    strcmp((const char *)v, id) == 0))
		ok = 0;
	sqlite3_finalize(st);
	st = NULL;
	if (ok && !tail && !(sqlite3_prepare_v2(db, "SELECT count(*) FROM "
	    "meta WHERE key = 'partial'", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0) == 0))
		ok = 0;
	sqlite3_finalize(st);
	sqlite3_close(db);
	if (!ok)
		hwtr_logf(&q->log, HWTR_LOG_INFO, "cache '%s' was not made from "
		    "'%s' as it is now", cache, archive);
	return (ok);
}

/*
 * One indexer per cache: "<cache>.lock" (made beside it, never through a
 * link, kept afterwards: removing it would let a later process lock
 * another file than a waiter holds) is locked with flock(2) before the
 * cache is checked again and made.  A query that finds it locked waits
 * for the other process, then uses the cache that process made.  The
 * kernel releases the lock when its holder dies, even of SIGKILL, so a
 * waiter is never left hanging; the wait polls so that a cancel request
 * stops it.  A lock file another user owns is not waited for.  *@fdp is
 * the locked descriptor, or -1 (no lock could be made: index anyway).
 */
static int
q_cache_lock(struct hwtr_q *q, int *fdp)
{
	struct timespec ts = { 0, 50 * 1000 * 1000 };
	struct stat st;
	char *lk;
	int fd, said = 0;

	*fdp = -1;
	if (asprintf(&lk, "%s.lock", q->dbpath) < 0)
		return (q_fail(q, -HWTR_E_NOMEM, "out of memory"));
	fd = open(lk, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
	    0600);
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    st.st_uid != geteuid()) {
		hwtr_logf(&q->log, HWTR_LOG_INFO, "lock '%s' not usable: "
		    "indexing without it", lk);
		if (fd >= 0)
			close(fd);
		free(lk);
		return (0);
	}
	while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		if (errno != EWOULDBLOCK && errno != EINTR) {
			close(fd);
			free(lk);
			return (0);
		}
		if (!said++)
			hwtr_logf(&q->log, HWTR_LOG_INFO, "waiting for another "
			    "hwtrace indexing into '%s'", q->dbpath);
		if (q->opts.cancel != NULL && *q->opts.cancel) {
			close(fd);
			q_fail(q, -HWTR_E_INTR, "interrupted while waiting for "
			    "'%s'", lk);
			free(lk);
			return (-HWTR_E_INTR);
		}
		nanosleep(&ts, NULL);
	}
	free(lk);
	*fdp = fd;
	return (0);
}

/* q_open_archive() once the lock is held: the caches may be ready now. */
static int
q_open_locked(struct hwtr_q *q, const char *path)
{
	const char *e = getenv("HWTRACE_QUERY_TAIL");
	unsigned long long v;
	uint64_t tail = Q_TAIL_BYTES;
	char *endp;
	int rc;

	if ((rc = q_cache_usable(q, path, q->dbpath, 0)) != 0)
		return (rc < 0 ? rc : 0);
	if (!q->opts.lazy) {
		if ((rc = q_lazy_index(q, path, q->dbpath, 0)) < 0)
			return (rc);
		if (unlink(q->tailpath) != 0 && errno != ENOENT)
			hwtr_logf(&q->log, HWTR_LOG_WARN, "cannot remove the "
			    "partial cache '%s': %s", q->tailpath,
			    strerror(errno));
		return (0);
	}
	free(q->dbpath);
	if ((q->dbpath = strdup(q->tailpath)) == NULL)
		return (q_fail(q, -HWTR_E_NOMEM, "out of memory"));
	if ((rc = q_cache_usable(q, path, q->tailpath, 1)) != 0)
		return (rc < 0 ? rc : 0);
	if (e != NULL) {
		v = strtoull(e, &endp, 0);
		if (*e != '\0' && *endp == '\0' && v > 0)
			tail = v;
	}
	if ((rc = q_lazy_index(q, path, q->tailpath, tail)) < 0)
		return (rc);
	/* Nothing was cut: the full cache after all. */
	if ((rc = q_db_open(q, q->tailpath)) < 0 || (rc = q_lazy_open(q)) < 0)
		return (rc);
	sqlite3_close(q->db);
	q->db = NULL;
	if (!q->tail && hwtr_out_commit(q->tailpath, q->fullpath) == 0) {
		free(q->dbpath);
		if ((q->dbpath = strdup(q->fullpath)) == NULL)
			return (q_fail(q, -HWTR_E_NOMEM, "out of memory"));
	}
	return (0);
}

/*
 * Archive @path: its full cache (q->dbpath) when usable; else, for a lazy
 * verb, its partial cache "<cache>.tail" (made now when missing: the end
 * of each stream, HWTRACE_QUERY_TAIL bytes for tests), which becomes the
 * full cache when the archive was short enough to be decoded whole; else
 * a full index, which replaces a partial cache.  Anything but the first
 * look is done holding the cache's lock (q_cache_lock()).
 */
static int
q_open_archive(struct hwtr_q *q, const char *path)
{
	int rc, lk;

	if ((q->archive = strdup(path)) == NULL ||
	    (q->fullpath = strdup(q->dbpath)) == NULL ||
	    asprintf(&q->tailpath, "%s.tail", q->dbpath) < 0) {
		q->tailpath = NULL;
		return (q_fail(q, -HWTR_E_NOMEM, "out of memory"));
	}
	if ((rc = q_cache_usable(q, path, q->dbpath, 0)) != 0)
		return (rc < 0 ? rc : 0);
	if ((rc = q_cache_lock(q, &lk)) < 0)
		return (rc);
	rc = q_open_locked(q, path);
	if (lk >= 0)
		close(lk);
	return (rc);
}

int
hwtr_q_open(struct hwtr_q **qp, const char *path,
    const struct hwtr_q_opts *opts, char *errbuf, size_t errlen)
{
	struct hwtr_q *q;
	enum q_kind kind;
	char eb[512];
	int rc;

	*qp = NULL;
	if (errbuf == NULL || errlen == 0) {
		errbuf = eb;
		errlen = sizeof(eb);
	}
	errbuf[0] = '\0';
	if ((rc = q_sniff(path, &kind, errbuf, errlen)) < 0)
		return (rc);
	if ((q = calloc(1, sizeof(*q))) == NULL) {
		snprintf(errbuf, errlen, "out of memory");
		return (-HWTR_E_NOMEM);
	}
	if (opts != NULL) {
		q->log = opts->log;
		q->opts = *opts;
		q->opts.cache = NULL;
	}
	switch (kind) {
	case Q_KIND_DB:
		q->dbpath = strdup(path);
		break;
	case Q_KIND_ARCHIVE:
		if (opts != NULL && opts->cache != NULL)
			q->dbpath = strdup(opts->cache);
		else if (asprintf(&q->dbpath, "%s.db", path) < 0)
			q->dbpath = NULL;
		break;
	default:
		snprintf(errbuf, errlen, "'%s' is neither a hwtrace database "
		    "nor a hwtrace archive", path);
		free(q);
		return (-HWTR_E_FORMAT);
	}
	if (q->dbpath == NULL) {
		rc = q_fail(q, -HWTR_E_NOMEM, "out of memory");
		goto fail;
	}
	if (kind == Q_KIND_ARCHIVE && (rc = q_open_archive(q, path)) < 0)
		goto fail;
	if ((rc = q_db_open(q, q->dbpath)) < 0 || (rc = q_lazy_open(q)) < 0)
		goto fail;
	*qp = q;
	return (0);
fail:
	snprintf(errbuf, errlen, "%s", q->msg);
	hwtr_q_close(q);
	return (rc);
}

int
hwtr_q_close(struct hwtr_q *q)
{
	int rc = 0;

	if (q == NULL)
		return (0);
	if (q->db != NULL && sqlite3_close(q->db) != SQLITE_OK)
		rc = -HWTR_E_DB;
	free(q->dbpath);
	free(q->cut);
	free(q->archive);
	free(q->fullpath);
	free(q->tailpath);
	q_lost_clear(&q->lost);
	free(q);
	return (rc);
}

void
hwtr_q_req_init(struct hwtr_q_req *req, enum hwtr_q_verb verb)
{
	memset(req, 0, sizeof(*req));
	req->verb = verb;
	req->thread = -1;
	req->n = -1;
	req->depth = -1;
	req->t_from = -1;
	req->t_to = -1;
	req->from = -1;
	req->count = -1;
	req->min_dur = -1;
	req->max_depth = -1;
	req->at = -1;
	req->to = -1;
	req->tid = -1;
	req->sql_timeout_ms = -1;
	req->sql_max_length = HWTR_Q_SQL_MAX_LENGTH;
}

/* --- symbol names --------------------------------------------------------- */

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

static size_t
q_name_slot(const struct q_names *nm, int64_t id)
{
	uint64_t h = (uint64_t)id * 0x9e3779b97f4a7c15ULL;
	size_t i = (size_t)(h >> 20) & (nm->cap - 1);

	while (nm->tab[i].used && nm->tab[i].id != id)
		i = (i + 1) & (nm->cap - 1);
	return (i);
}

const struct q_name *
q_name_get(struct hwtr_q *q, struct q_names *nm, int64_t id)
{
	struct q_name *e, *ot;
	const char *s;
	size_t i, ocap, len;
	char **nb;

	if (nm->cap == 0 || (nm->n + 1) * 2 > nm->cap) {
		ot = nm->tab;
		ocap = nm->cap;
		nm->cap = ocap ? ocap * 2 : 256;
		if ((nm->tab = calloc(nm->cap, sizeof(*nm->tab))) == NULL) {
			nm->tab = ot;
			nm->cap = ocap;
			q_fail(q, -HWTR_E_NOMEM, "out of memory");
			return (NULL);
		}
		for (i = 0; i < ocap; i++)
			if (ot[i].used)
				nm->tab[q_name_slot(nm, ot[i].id)] = ot[i];
		free(ot);
	}
	e = &nm->tab[q_name_slot(nm, id)];
	if (e->used)
		return (e);
	if (nm->st == NULL && q_prepare(q, &nm->st, "SELECT name FROM symbols "
	    "WHERE id = ?1") < 0)
		return (NULL);
	sqlite3_reset(nm->st);
	sqlite3_bind_int64(nm->st, 1, id);
	switch (sqlite3_step(nm->st)) {
	case SQLITE_ROW:
		s = (const char *)sqlite3_column_text(nm->st, 0);
		break;
	case SQLITE_DONE:
		s = NULL;
		break;
	default:
		q_dbfail(q, "cannot read symbols");
		return (NULL);
	}
	e->used = 1;
	e->id = id;
	e->name = NULL;
	e->len = 0;
	e->w = 0;
	e->hash = 0;
	if (s != NULL) {
		len = strlen(s);
		/*
		 * Names point into the pool: a pool about to move is kept
		 * as it is and a new one started.
		 */
		if (nm->pool.p != NULL &&
		    nm->pool.len + len + 1 > nm->pool.cap) {
			nb = realloc(nm->blocks, (nm->nblocks + 1) *
			    sizeof(*nb));
			if (nb == NULL) {
				e->used = 0;
				q_fail(q, -HWTR_E_NOMEM, "out of memory");
				return (NULL);
			}
			nm->blocks = nb;
			nm->blocks[nm->nblocks++] = nm->pool.p;
			memset(&nm->pool, 0, sizeof(nm->pool));
		}
		if (nm->pool.p == NULL) {
			nm->pool.cap = len + 1 > 65536 ? len + 1 : 65536;
			if ((nm->pool.p = malloc(nm->pool.cap)) == NULL) {
				nm->pool.cap = 0;
				e->used = 0;
				q_fail(q, -HWTR_E_NOMEM, "out of memory");
				return (NULL);
			}
		}
		e->name = nm->pool.p + nm->pool.len;
		memcpy(nm->pool.p + nm->pool.len, s, len + 1);
		nm->pool.len += len + 1;
		e->len = (uint32_t)len;
		e->w = (uint32_t)q_dwidth(s, len);
		e->hash = q_hash(s, len);
	}
	nm->n++;
	return (e);
}

void
q_names_free(struct q_names *nm)
{
	size_t i;

	sqlite3_finalize(nm->st);
	free(nm->tab);
	free(nm->pool.p);
	for (i = 0; i < nm->nblocks; i++)
		free(nm->blocks[i]);
	free(nm->blocks);
	memset(nm, 0, sizeof(*nm));
}
