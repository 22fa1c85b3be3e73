/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Statements: prepared, bound from a signature and stepped into a result
 * (handing each full block of rows of a streamed result to the writer of
 * q_fmt.c), or read as one integer; and the checks before a verb's
 * statement runs (its text whole, its thread there); the time limit's
 * clock, which SQLite's progress handler and C loops between steps ask.
 * Above the results (q_res.c) and their writer, below everything that
 * asks the database.
 */

#include <assert.h>
#include <sqlite3.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "q_int.h"

/* --- a streamed result's full block, to the writer ----------------------- */

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

/*
 * The end of a row: @pushed is the results of pushing its cells or'ed
 * together (non-zero: one ran out of memory, which is the failure), else
 * q_res_row_end().
 */
int
q_res_row_done(struct hwtr_q *q, struct hwtr_q_res *res, int pushed)
{
	if (pushed != 0)
		return (q_fail(q, -HWTR_E_NOMEM, "out of memory"));
	return (q_res_row_end(q, res));
}

/* --- the time limit (q_limit_begin() in q_verbs.c) ----------------------- */

/*
 * CPU time, not time on the clock: a verb whose answer waits on its
 * reader (a pager, a slow pipe) spends none while it waits, and a
 * statement that never ends spends its budget at the machine's pace.
 */
int64_t
q_cpu_ns(void)
{
	struct timespec now;

	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now) != 0)
		return (0);
	return ((int64_t)now.tv_sec * 1000000000 + now.tv_nsec);
}

int
q_limit_check(void *arg)
{
	struct hwtr_q *q = arg;

	assert(q->lim_ms > 0);
	if (!q->lim_expired && q_cpu_ns() - q->lim_start_ns >=
	    q->lim_ms * 1000000)
		q->lim_expired = 1;
	return (q->lim_expired);
}

int
q_limit_poll(struct hwtr_q *q)
{
	return (q->lim_ms > 0 && q_limit_check(q));
}

/* --- statements ----------------------------------------------------------- */

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
q_step2(sqlite3_stmt *st, int64_t a, int64_t b)
{
	assert(st != NULL);
	sqlite3_reset(st);
	sqlite3_bind_int64(st, 1, a);
	sqlite3_bind_int64(st, 2, b);
	return (sqlite3_step(st));
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

int
q_blocks_span(struct hwtr_q *q, const char *what, int64_t *np)
{
	int64_t n, nrows;
	int rc;

	*np = 0;
	if ((rc = q_int(q, &n, 0, "SELECT coalesce(max(id), -1) + 1 FROM "
	    "blocks", NULL)) < 0 ||
	    (rc = q_int(q, &nrows, 0, "SELECT count(*) FROM blocks",
	    NULL)) < 0)
		return (rc);
	if (n > 2 * nrows + 65536)
		return (q_fail(q, -HWTR_E_FORMAT, "%s%sblocks: ids reach %lld "
		    "for %lld rows (a damaged database?)", what != NULL ?
		    what : "", what != NULL ? ": " : "", (long long)n - 1,
		    (long long)nrows));
	*np = n < 0 ? 0 : n;
	return (0);
}

/* --- a thread named, a statement's text built ------------------------- */

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

/*
 * A statement's text @sql built, for thread @thread (-1: every thread):
 * 0 when the text is whole and the thread exists, else the failure, with
 * @sql's text freed.
 */
int
q_sql_ready(struct hwtr_q *q, struct q_str *sql, int64_t thread)
{
	int rc;

	if (sql->err) {
		free(sql->p);
		return (q_fail(q, -HWTR_E_NOMEM, "out of memory"));
	}
	if (thread >= 0 && (rc = q_check_thread(q, thread)) < 0) {
		free(sql->p);
		return (rc);
	}
	return (0);
}

/* --- sums that a corrupt database can take past int64 ------------------ */

/*
 * SQLite's sum() of integers fails with a bare "integer overflow" that
 * names no table, column or row.  The counts the verbs total (a thread's
 * instructions, a stream's bytes) cannot pass 2^63 in a real trace, only
 * in a forged or damaged database, so that is an error here too, but one
 * that says where: the column, and its largest row, by @who (an SQL
 * expression naming a row of @table, such as "'thread ' || id").  The
 * sum itself is exact whatever the order of the rows.  @table, @col,
 * @who and @where are the program's SQL, never input; @where may use ?1,
 * bound to @arg.
 */
int
q_sum_int(struct hwtr_q *q, const char *verb, const char *table,
    const char *col, const char *who, const char *where, int64_t arg,
    int64_t *sump)
{
	sqlite3_stmt *st;
	__int128 sum = 0;
	int64_t v, big = 0;
	char *sql, *bigwho = NULL;
	const char *w;
	int rc, have = 0;

	*sump = 0;
	if (asprintf(&sql, "SELECT %s, %s FROM %s WHERE %s", col, who, table,
	    where != NULL ? where : "1") < 0)
		return (q_fail(q, -HWTR_E_NOMEM, "out of memory"));
	rc = q_prepare(q, &st, sql);
	free(sql);
	if (rc < 0)
		return (rc);
	if (sqlite3_bind_parameter_count(st) > 0)
		sqlite3_bind_int64(st, 1, arg);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (sqlite3_column_type(st, 0) == SQLITE_NULL)
			continue;
		/* Text or a real (a damaged database) as SQLite converts it. */
		w = (const char *)sqlite3_column_text(st, 1);
		v = sqlite3_column_int64(st, 0);
		sum += v;
		if (!have || (v < 0 ? -(__int128)v : v) > (big < 0 ?
		    -(__int128)big : big)) {
			free(bigwho);
			if ((bigwho = strdup(w != NULL ? w : "a row")) == NULL) {
				rc = q_fail(q, -HWTR_E_NOMEM, "out of memory");
				goto out;
			}
			big = v;
			have = 1;
		}
	}
	if (rc != SQLITE_DONE) {
		rc = q_dbfail(q, "cannot read the totals");
		goto out;
	}
	if (sum > INT64_MAX || sum < INT64_MIN) {
		rc = q_fail(q, -HWTR_E_FORMAT, "%s: the sum of %s.%s is out of "
		    "the 64-bit range (largest: %lld in %s): the database is "
		    "corrupt", verb, table, col, (long long)big, bigwho);
		goto out;
	}
	*sump = (int64_t)sum;
	rc = 0;
out:
	sqlite3_finalize(st);
	free(bigwho);
	return (rc);
}

/*
 * The counts that the verbs' SQL sums (hot, branches, coverage, tree)
 * besides the threads' and streams' totals: how the largest of each is
 * read, with its magnitude and its row named.
 */
static const struct {
	const char	*what;		/* for the message */
	const char	*sql;		/* value (integer), magnitude, who */
} q_sum_cols[] = {
	{ "block_counts.count x blocks.ninsns",
	  "SELECT c.count, abs(c.count * 1.0 * b.ninsns), 'thread ' || "
	  "c.thread || ', block ' || c.block || ' (' || b.ninsns || "
	  "' instructions)' FROM block_counts c JOIN blocks b ON b.id = "
	  "c.block ORDER BY 2 DESC, 1 DESC LIMIT 1" },
	{ "blocks.exec_count x blocks.ninsns",
	  "SELECT exec_count, abs(exec_count * 1.0 * ninsns), 'block ' || "
	  "id || ' (' || ninsns || ' instructions)' FROM blocks ORDER BY 2 "
	  "DESC, 1 DESC LIMIT 1" },
	{ "branches.count",
	  "SELECT count, abs(count * 1.0), 'thread ' || thread || ', branch "
	  "' || printf('%#x', from_ip) || ' -> ' || printf('%#x', to_ip) "
	  "FROM branches ORDER BY 2 DESC, 1 DESC LIMIT 1" },
	{ "call_paths.calls",
	  "SELECT calls, abs(calls * 1.0), 'thread ' || thread || ', path ' "
	  "|| id FROM call_paths ORDER BY 2 DESC, 1 DESC LIMIT 1" },
	{ "call_paths.insns",
	  "SELECT insns, abs(insns * 1.0), 'thread ' || thread || ', path ' "
	  "|| id FROM call_paths ORDER BY 2 DESC, 1 DESC LIMIT 1" },
};

/*
 * After @verb's SQL failed with SQLite's bare "integer overflow": a sum
 * of its went past 2^63, which only a damaged or forged database does.
 * Say so, naming the column: the threads' and streams' totals as
 * q_sum_int() does, else the count (of q_sum_cols) with the largest
 * value, and its row.  Runs only on that failure: the scans it makes
 * cost nothing to an answer.  Returns the error, with the message set.
 */
int
q_sum_explain(struct hwtr_q *q, const char *verb)
{
	static const char *const tcols[] = { "insns", "blocks", "calls" };
	static const char *const scols[] = { "bytes", "errors",
	    "undecoded_bytes", "lost_bytes" };
	sqlite3_stmt *st;
	double mag, best = -1;
	int64_t v, bv = 0;
	char who[160] = "";
	const char *w, *what = NULL;
	size_t i;
	int rc;

	for (i = 0; i < HWTR_NELEM(tcols); i++)
		if ((rc = q_sum_int(q, verb, "threads", tcols[i], Q_WHO_THREAD,
		    NULL, 0, &v)) < 0)
			return (rc);
	for (i = 0; i < HWTR_NELEM(scols); i++)
		if ((rc = q_sum_int(q, verb, "streams", scols[i], Q_WHO_STREAM,
		    NULL, 0, &v)) < 0)
			return (rc);
	for (i = 0; i < HWTR_NELEM(q_sum_cols); i++) {
		/* A table this database does not have: nothing to blame. */
		if (sqlite3_prepare_v2(q->db, q_sum_cols[i].sql, -1, &st,
		    NULL) != SQLITE_OK)
			continue;
		if (sqlite3_step(st) == SQLITE_ROW &&
		    (mag = sqlite3_column_double(st, 1)) > best) {
			best = mag;
			bv = sqlite3_column_int64(st, 0);
			w = (const char *)sqlite3_column_text(st, 2);
			snprintf(who, sizeof(who), "%s", w != NULL ? w : "a row");
			what = q_sum_cols[i].what;
		}
		sqlite3_finalize(st);
	}
	if (what == NULL)
		return (q_fail(q, -HWTR_E_FORMAT, "%s: a sum is out of the "
		    "64-bit range (integer overflow): the database is corrupt",
		    verb));
	return (q_fail(q, -HWTR_E_FORMAT, "%s: a sum over %s is out of the "
	    "64-bit range (largest count: %lld in %s): the database is "
	    "corrupt", verb, what, (long long)bv, who));
}
