/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * hwtrace query sql (q_verbs.c dispatches the verbs): the user's SQL,
 * read-only, with an authorizer and a length limit (the time limit is
 * every verb's, hwtr_q_run()).
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "q_int.h"

/*
 * The functions user SQL may call: SQLite's own (core, aggregate, window,
 * date and time, math, JSON) and hwtrace's.  Anything else a build of
 * SQLite or a loaded library may offer (fts3_tokenizer, which calls
 * through a pointer given as a blob; load_extension; whatever comes next)
 * is refused.  Sorted for bsearch().
 */
static const char *const q_sql_funcs[] = {
	"->", "->>", "abs", "acos", "acosh", "asin", "asinh", "atan", "atan2",
	"atanh", "avg", "ceil", "ceiling", "char", "coalesce", "concat",
	"concat_ws", "cos", "cosh", "count", "cume_dist", "date", "datetime",
	"degrees", "dense_rank", "exp", "first_value", "floor", "format",
	"glob", "group_concat", "hex", "ifnull", "iif", "instr", "json",
	"json_array", "json_array_length", "json_each", "json_extract",
	"json_group_array", "json_group_object", "json_insert", "json_object",
	"json_patch", "json_quote", "json_remove", "json_replace", "json_set",
	"json_tree", "json_type", "json_valid", "julianday", "lag",
	"last_value", "lead", "length", "like", "likelihood", "likely", "ln",
	"log", "log10", "log2", "lower", "ltrim", "max", "min", "mod",
	"nth_value", "ntile", "nullif", "octet_length", "percent_rank", "pi",
	"pow", "power", "printf", "quote", "radians", "random", "randomblob",
	"rank", "replace", "round", "row_number", "rtrim", "sign", "sin",
	"sinh", "soundex", "sqrt", "strftime", "string_agg", "substr",
	"substring", "sum", "tan", "tanh", "time", "timediff", "total",
	"trim", "trunc", "typeof", "unhex", "unicode", "unixepoch",
	"unlikely", "upper", "zeroblob"
};

#define Q_DENIED_LEN	160

static int
q_sql_cmp(const void *a, const void *b)
{
	return (strcasecmp(a, *(const char *const *)b));
}

/*
 * The authorizer of user SQL: reads of the database's own tables, views
 * and the table-valued functions above only, calls of the functions above
 * and hwtrace's (hwtr_*) only, a few read-only pragmas that describe the
 * schema, no ATTACH (which would create a file).  Statements that write
 * are refused before they run by q_sql_run().
 */
static int
q_sql_auth(void *arg, int action, const char *a1, const char *a2,
    const char *db, const char *trigger)
{
	static const char *const pragmas[] = { "index_info", "index_list",
	    "index_xinfo", "table_info", "table_list", "table_xinfo", NULL };
	char *denied = arg;
	size_t i;

	(void)trigger;
	switch (action) {
	case SQLITE_SELECT:
	case SQLITE_RECURSIVE:
		return (SQLITE_OK);
	case SQLITE_READ:
		/* SQLite also asks with no database for a table's rowid. */
		if (db == NULL || strcmp(db, "main") == 0)
			return (SQLITE_OK);
		snprintf(denied, Q_DENIED_LEN, "reading '%s.%s'",
		    db ? db : "?", a1 ? a1 : "?");
		return (SQLITE_DENY);
	case SQLITE_FUNCTION:
		if (a2 != NULL && (strncasecmp(a2, "hwtr_", 5) == 0 ||
		    bsearch(a2, q_sql_funcs, HWTR_NELEM(q_sql_funcs),
		    sizeof(q_sql_funcs[0]), q_sql_cmp) != NULL))
			return (SQLITE_OK);
		snprintf(denied, Q_DENIED_LEN, "the function %s()",
		    a2 ? a2 : "?");
		return (SQLITE_DENY);
	case SQLITE_PRAGMA:
		for (i = 0; a1 != NULL && pragmas[i] != NULL; i++)
			if (strcasecmp(a1, pragmas[i]) == 0)
				return (SQLITE_OK);
		snprintf(denied, Q_DENIED_LEN, "PRAGMA %s", a1 ? a1 : "?");
		return (SQLITE_DENY);
	case SQLITE_ATTACH:
	case SQLITE_DETACH:
		snprintf(denied, Q_DENIED_LEN, "ATTACH and DETACH");
		return (SQLITE_DENY);
	default:
		/*
		 * The rest write (CREATE, INSERT, ...: refused by the
		 * read-only check, with a clearer message) or change nothing
		 * (BEGIN, COMMIT), and sqlite3_declare_vtab() of hwtrace's
		 * virtual tables comes through here as a CREATE TABLE.
		 */
		return (SQLITE_OK);
	}
}

static int q_sql_run(struct hwtr_q *q, const struct hwtr_q_req *req,
    struct hwtr_q_res **resp);

/*
 * User SQL runs with the authorizer above and a length limit
 * (SQLITE_LIMIT_LENGTH: randomblob(1e9) and strings grown without end are
 * refused), both removed afterwards; the time limit is hwtr_q_run()'s, as
 * for every verb.
 */
int
q_sql(struct hwtr_q *q, const struct hwtr_q_req *req,
    struct hwtr_q_res **resp)
{
	int64_t len = req->sql_max_length;
	char denied[Q_DENIED_LEN] = "";
	int oldlen, rc;

	if (len <= 0)
		len = HWTR_Q_SQL_MAX_LENGTH;
	if (len > INT32_MAX)
		len = INT32_MAX;
	oldlen = sqlite3_limit(q->db, SQLITE_LIMIT_LENGTH, (int)len);
	sqlite3_set_authorizer(q->db, q_sql_auth, denied);
	rc = q_sql_run(q, req, resp);
	sqlite3_set_authorizer(q->db, NULL, NULL);
	sqlite3_limit(q->db, SQLITE_LIMIT_LENGTH, oldlen);
	if (rc < 0 && q->lim_expired)
		;	/* hwtr_q_run() says so */
	else if (rc < 0 && sqlite3_errcode(q->db) == SQLITE_TOOBIG)
		rc = q_fail(q, -HWTR_E_LIMIT, "sql: a string or blob longer "
		    "than %jd bytes (the length limit; raise it with "
		    "--max-length)", (intmax_t)len);
	else if (rc < 0 && sqlite3_errcode(q->db) == SQLITE_AUTH)
		rc = q_fail(q, -HWTR_E_PERM, "sql: refused %s: user SQL may "
		    "only read the database with SQLite's and hwtrace's "
		    "functions", denied[0] ? denied : "a statement");
	return (rc);
}

/*
 * Any read-only SQL: every statement of @text runs in turn, a statement
 * that would write is refused before it runs, and the rows of the last
 * statement that returns columns are the answer.
 */
static int
q_sql_run(struct hwtr_q *q, const struct hwtr_q_req *req,
    struct hwtr_q_res **resp)
{
	const char *tail = req->sql, *names[256];
	struct hwtr_q_res *res = NULL;
	sqlite3_stmt *st;
	int i, n, rc;

	*resp = NULL;
	if (tail == NULL)
		return (q_fail(q, -HWTR_E_INVAL, "sql: no statement"));
	while (*tail != '\0') {
		const char *start = tail;

		if (sqlite3_prepare_v2(q->db, tail, -1, &st, &tail) !=
		    SQLITE_OK) {
			hwtr_q_res_free(res);
			return (q_fail(q, -HWTR_E_DB, "sql: %s",
			    sqlite3_errmsg(q->db)));
		}
		if (st == NULL)		/* white space or a comment */
			continue;
		if (!sqlite3_stmt_readonly(st)) {
			int len = (int)(tail - start);

			while (len > 0 && strchr(" \t\n;", start[len - 1]))
				len--;
			while (len > 0 && strchr(" \t\n", *start)) {
				start++;
				len--;
			}
			sqlite3_finalize(st);
			hwtr_q_res_free(res);
			return (q_fail(q, -HWTR_E_PERM, "sql: the database is "
			    "opened read-only; refusing a statement that "
			    "writes: '%.*s'", len > 60 ? 60 : len, start));
		}
		n = sqlite3_column_count(st);
		if (n > 256) {
			sqlite3_finalize(st);
			hwtr_q_res_free(res);
			return (q_fail(q, -HWTR_E_LIMIT, "sql: too many "
			    "columns (%d)", n));
		}
		if (n > 0) {
			hwtr_q_res_free(res);
			res = NULL;
			for (i = 0; i < n; i++)
				names[i] = sqlite3_column_name(st, i);
			if ((rc = q_res_new(&res, (size_t)n, names)) < 0) {
				sqlite3_finalize(st);
				return (q_fail(q, rc, "out of memory"));
			}
		}
		if (n > 0)
			rc = q_res_fill(q, res, st);
		else {
			while ((rc = sqlite3_step(st)) == SQLITE_ROW)
				;
			rc = rc == SQLITE_DONE ? 0 : -HWTR_E_DB;
		}
		sqlite3_finalize(st);
		if (rc < 0) {
			hwtr_q_res_free(res);
			return (q_fail(q, -HWTR_E_DB, "sql: %s",
			    sqlite3_errmsg(q->db)));
		}
	}
	if (res == NULL && (rc = q_res_new(&res, 0, names)) < 0)
		return (q_fail(q, rc, "out of memory"));
	*resp = res;
	return (0);
}
