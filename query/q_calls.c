/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * hwtrace query calls and func (q_verbs.c dispatches the verbs): one row
 * per invocation, read raw from the calls table and formatted here, over
 * a thread, a range of it (q_range.c) or to a depth (q_walk.c).
 */

#include <stdlib.h>
#include <string.h>

#include "q_int.h"

/*
 * calls and func: one row per invocation, read raw from the calls table
 * and formatted here.  Names come from a cache of symbols by id, and the
 * caller from the calls still open at the depth above (a scan in entry
 * order meets every caller before its callees), so that a row costs one
 * step of one statement, with no per-row joins and no SQL printf.
 */
#define Q_CALL_COLS							\
	"c.id, c.thread, c.depth, c.symbol, c.func_ip, c.parent, "	\
	"c.call_ip, c.entry_seq, c.entry_insn, c.entry_ns, c.exit_ns, "	\
	"c.insns, c.self_insns, c.blocks, c.entry_kind, c.exit_kind "
#define Q_CALL_RAW	Q_CALL_COLS "FROM calls c "
/* With the caller's symbol and func_ip (hidden columns of calls). */
#define Q_FUNC_RAW	Q_CALL_COLS ", c.caller_symbol, c.caller_ip FROM calls c "

static const char *const q_call_cols[] = { "call", "thread", "depth",
    "function", "caller", "call_site", "seq", "insn", "start_ns",
    "duration_ns", "insns", "self_insns", "blocks", "entry_kind",
    "exit_kind" };

/* A call that may be a caller: its id and what to call it. */
struct q_frame {
	int64_t		id, symbol, func_ip;
	int		has_sym;
};

struct q_callfmt {
	struct q_names	names;
	sqlite3_stmt	*par;		/* a caller not met yet */
	struct q_frame	*stk;		/* by depth: last call met */
	size_t		nstk;
	struct q_frame	pcache[64];	/* callers looked up, by id */
	int64_t		t0;
};

static void
q_callfmt_free(struct q_callfmt *cf)
{
	q_names_free(&cf->names);
	sqlite3_finalize(cf->par);
	free(cf->stk);
}

/* Push the name of a function: its symbol's, else its address. */
static int
q_push_func(struct hwtr_q *q, struct q_callfmt *cf, struct hwtr_q_res *res,
    const struct q_frame *f)
{
	const struct q_name *nm = NULL;
	char hex[24];
	size_t n;

	if (f->has_sym && (nm = q_name_get(q, &cf->names, f->symbol)) == NULL)
		return (-HWTR_E_DB);
	if (nm != NULL && nm->name != NULL)
		return (q_res_push_n(res, HWTR_Q_TEXT, nm->name, nm->len,
		    nm->w));
	n = q_fmt_hex(hex, (uint64_t)f->func_ip);
	return (q_res_push_n(res, HWTR_Q_TEXT, hex, n, n));
}

/* The caller of a call whose parent is @pid; 0, or 1 when it is absent. */
static int
q_caller(struct hwtr_q *q, struct q_callfmt *cf, int64_t pid, int64_t depth,
    struct q_frame *f)
{
	struct q_frame *c;
	int rc;

	if (depth >= 1 && (size_t)depth - 1 < cf->nstk &&
	    cf->stk[depth - 1].id == pid) {
		*f = cf->stk[depth - 1];
		return (0);
	}
	c = &cf->pcache[(uint64_t)pid % HWTR_NELEM(cf->pcache)];
	if (c->id == pid && pid != 0) {
		*f = *c;
		return (0);
	}
	if (cf->par == NULL && (rc = q_prepare(q, &cf->par, "SELECT symbol, "
	    "func_ip FROM calls WHERE id = ?1")) < 0)
		return (rc);
	sqlite3_reset(cf->par);
	sqlite3_bind_int64(cf->par, 1, pid);
	switch (sqlite3_step(cf->par)) {
	case SQLITE_ROW:
		f->id = pid;
		f->has_sym = sqlite3_column_type(cf->par, 0) != SQLITE_NULL;
		f->symbol = sqlite3_column_int64(cf->par, 0);
		f->func_ip = sqlite3_column_int64(cf->par, 1);
		*c = *f;
		return (0);
	case SQLITE_DONE:
		return (1);
	default:
		return (q_dbfail(q, "cannot read calls"));
	}
}

static int
q_push_textcol(struct hwtr_q_res *res, sqlite3_stmt *st, int c)
{
	const char *s = (const char *)sqlite3_column_text(st, c);
	size_t len;

	if (s == NULL)
		return (q_res_push_n(res, HWTR_Q_NULL, NULL, 0, 1));
	len = (size_t)sqlite3_column_bytes(st, c);
	return (q_res_push_n(res, HWTR_Q_TEXT, s, len, q_dwidth(s, len)));
}

/*
 * The rows of @st (Q_CALL_RAW, bound) into @res.  Columns that
 * hwtrace-db(5) declares NOT NULL are read without a type check.
 */
static int
q_call_rows(struct hwtr_q *q, struct q_callfmt *cf, struct hwtr_q_res *res,
    sqlite3_stmt *st, struct q_walk *w, int64_t limit, int64_t *nrowsp)
{
	struct q_frame me, caller;
	int64_t depth, a, b, nrows = 0;
	char hex[24];
	size_t n;
	int k = w != NULL ? 4 : 0;	/* the walk's own columns first */
	int rc, callers;

	memset(&caller, 0, sizeof(caller));
	if (w != NULL)
		st = w->st;
	/* Q_FUNC_RAW: the callers come with the rows. */
	callers = sqlite3_column_count(st) >= k + 18;
	for (;;) {
		if (w != NULL) {
			if (limit >= 0 && nrows >= limit) {
				rc = SQLITE_DONE;
				break;
			}
			if ((rc = q_walk_step(w)) < 0)
				return (rc);
			rc = rc == 1 ? SQLITE_ROW : SQLITE_DONE;
		} else
			rc = sqlite3_step(st);
		if (rc != SQLITE_ROW)
			break;
		nrows++;
		me.id = sqlite3_column_int64(st, k + 0);
		depth = sqlite3_column_int64(st, k + 2);
		me.has_sym = sqlite3_column_type(st, k + 3) != SQLITE_NULL;
		me.symbol = sqlite3_column_int64(st, k + 3);
		me.func_ip = sqlite3_column_int64(st, k + 4);
		rc = q_res_push_int(res, me.id);
		rc |= q_res_push_int(res, sqlite3_column_int64(st, k + 1));
		rc |= q_res_push_int(res, depth);
		if (rc != 0)
			goto nomem;
		if ((rc = q_push_func(q, cf, res, &me)) < 0)
			goto fail;
		if (sqlite3_column_type(st, k + 5) == SQLITE_NULL)
			rc = 1;
		else if (callers) {
			rc = sqlite3_column_type(st, k + 17) == SQLITE_NULL;
			caller.id = sqlite3_column_int64(st, k + 5);
			caller.has_sym = sqlite3_column_type(st, k + 16) !=
			    SQLITE_NULL;
			caller.symbol = sqlite3_column_int64(st, k + 16);
			caller.func_ip = sqlite3_column_int64(st, k + 17);
		} else if ((rc = q_caller(q, cf, sqlite3_column_int64(st, k + 5),
		    depth, &caller)) < 0)
			goto fail;
		if (rc == 0)
			rc = q_push_func(q, cf, res, &caller);
		else
			rc = q_res_push_n(res, HWTR_Q_NULL, NULL, 0, 1);
		if (rc < 0)
			goto fail;
		if (sqlite3_column_type(st, k + 6) == SQLITE_NULL)
			rc = q_res_push_n(res, HWTR_Q_NULL, NULL, 0, 1);
		else {
			n = q_fmt_hex(hex, (uint64_t)sqlite3_column_int64(st,
			    k + 6));
			rc = q_res_push_n(res, HWTR_Q_TEXT, hex, n, n);
		}
		rc |= q_res_push_int(res, sqlite3_column_int64(st, k + 7));
		rc |= q_res_push_int(res, sqlite3_column_int64(st, k + 8));
		if (sqlite3_column_type(st, k + 9) == SQLITE_NULL)
			rc |= q_res_push_n(res, HWTR_Q_NULL, NULL, 0, 1);
		else
			rc |= q_res_push_int(res, q_sat_sub(
			    sqlite3_column_int64(st, k + 9), cf->t0));
		if (sqlite3_column_type(st, k + 9) == SQLITE_NULL ||
		    sqlite3_column_type(st, k + 10) == SQLITE_NULL)
			rc |= q_res_push_n(res, HWTR_Q_NULL, NULL, 0, 1);
		else {
			a = sqlite3_column_int64(st, k + 9);
			b = sqlite3_column_int64(st, k + 10);
			rc |= q_res_push_int(res, q_sat_sub(b, a));
		}
		rc |= q_res_push_int(res, sqlite3_column_int64(st, k + 11));
		rc |= q_res_push_int(res, sqlite3_column_int64(st, k + 12));
		rc |= q_res_push_int(res, sqlite3_column_int64(st, k + 13));
		rc |= q_push_textcol(res, st, k + 14);
		rc |= q_push_textcol(res, st, k + 15);
		if (rc != 0)
			goto nomem;
		/* This call is the caller of what follows it one level down. */
		if (depth >= 0 && depth < (1 << 24)) {
			if ((size_t)depth >= cf->nstk) {
				struct q_frame *ns;
				size_t ncap = (size_t)depth * 2 + 16;

				if ((ns = realloc(cf->stk, ncap *
				    sizeof(*ns))) == NULL)
					goto nomem;
				for (n = cf->nstk; n < ncap; n++) {
					memset(&ns[n], 0, sizeof(ns[n]));
					ns[n].id = INT64_MIN;
				}
				cf->stk = ns;
				cf->nstk = ncap;
			}
			cf->stk[depth] = me;
		}
		if ((rc = q_res_row_end(q, res)) < 0)
			return (rc);
	}
	if (nrowsp != NULL)
		*nrowsp = nrows;
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		return (q_dbfail(q, "cannot read calls"));
	return (0);
nomem:
	return (q_fail(q, -HWTR_E_NOMEM, "out of memory"));
fail:
	return (rc);
}

/*
 * Bounds of the numeric columns of calls, from the threads table, for the
 * alignment of a long (streamed) table: ids up to max(id), positions and
 * counts up to a thread's length, times up to its last time.
 */
static int
q_call_hints(struct hwtr_q *q, struct hwtr_q_res *res, int64_t t0)
{
	static const struct { int col, what; } h[] = { { 0, 0 }, { 1, 1 },
	    { 2, 2 }, { 6, 3 }, { 7, 4 }, { 8, 5 }, { 9, 5 }, { 10, 4 },
	    { 11, 4 }, { 12, 3 } };
	sqlite3_stmt *st;
	int64_t v[6];
	size_t i;
	int rc;

	if (res->out == NULL)
		return (0);
	if ((rc = q_prepare(q, &st, "SELECT (SELECT max(id) FROM calls), "
	    "max(id), max(max_depth), max(blocks), max(insns), max(last_ns) "
	    "FROM threads")) < 0)
		return (rc);
	if (sqlite3_step(st) == SQLITE_ROW) {
		for (i = 0; i < 6; i++)
			v[i] = sqlite3_column_int64(st, (int)i);
		v[5] = sqlite3_column_type(st, 5) == SQLITE_NULL ? 0 :
		    q_sat_sub(v[5], t0);
		for (i = 0; i < HWTR_NELEM(h); i++)
			q_res_hint(res, (size_t)h[i].col, v[h[i].what]);
	}
	sqlite3_finalize(st);
	return (0);
}

/*
 * Run @sql (Q_CALL_RAW rows; ?1 ?2 ?3 bound to @a @b @c, and ?4 to ?7 to
 * @d to @g when it has them) into *resp.
 */
static int
q_call_select5(struct hwtr_q *q, struct hwtr_q_res **resp, const char *sql,
    int64_t a, int64_t b, int64_t c, int64_t d, int64_t e, int64_t f,
    int64_t g)
{
	struct q_callfmt cf;
	sqlite3_stmt *st = NULL;
	size_t i;
	int rc;

	*resp = NULL;
	memset(&cf, 0, sizeof(cf));
	for (i = 0; i < HWTR_NELEM(cf.pcache); i++)
		cf.pcache[i].id = INT64_MIN;
	if ((rc = q_int(q, &cf.t0, 0, Q_T0_SQL, NULL)) < 0 ||
	    (rc = q_prepare(q, &st, sql)) < 0)
		goto out;
	sqlite3_bind_int64(st, 1, a);
	sqlite3_bind_int64(st, 2, b);
	if (sqlite3_bind_parameter_count(st) >= 3)
		sqlite3_bind_int64(st, 3, c);
	if (sqlite3_bind_parameter_count(st) >= 5) {
		sqlite3_bind_int64(st, 4, d);
		sqlite3_bind_int64(st, 5, e);
	}
	if (sqlite3_bind_parameter_count(st) >= 7) {
		sqlite3_bind_int64(st, 6, f);
		sqlite3_bind_int64(st, 7, g);
	}
	if ((rc = q_res_new(resp, HWTR_NELEM(q_call_cols), q_call_cols)) < 0) {
		rc = q_fail(q, rc, "out of memory");
		goto out;
	}
	q_res_stream(q, *resp);
	if ((rc = q_call_hints(q, *resp, cf.t0)) == 0)
		rc = q_call_rows(q, &cf, *resp, st, NULL, -1, NULL);
out:
	sqlite3_finalize(st);
	q_callfmt_free(&cf);
	if (rc < 0) {
		hwtr_q_res_free(*resp);
		*resp = NULL;
	}
	return (rc);
}

static int
q_call_select(struct hwtr_q *q, struct hwtr_q_res **resp, const char *sql,
    int64_t a, int64_t b, int64_t c)
{
	return (q_call_select5(q, resp, sql, a, b, c, 0, -1, 0, -1));
}

/*
 * calls --depth D (D > 0): each thread's calls (of thread @thread, -1:
 * every thread, or of the range @r) in entry order, walked at most D deep
 * (q_walk.c: a seek past each call at depth D, so that the calls deeper
 * are never read), at most @n in all (-1: no limit).
 */
static int
q_call_walk(struct hwtr_q *q, struct hwtr_q_res **resp, int64_t thread,
    int64_t depth, int64_t n, const struct q_rng *r)
{
	struct q_callfmt cf;
	struct q_walk w;
	sqlite3_stmt *th = NULL;
	int64_t done = 0, got;
	size_t i;
	int rc;

	*resp = NULL;
	memset(&cf, 0, sizeof(cf));
	memset(&w, 0, sizeof(w));
	for (i = 0; i < HWTR_NELEM(cf.pcache); i++)
		cf.pcache[i].id = INT64_MIN;
	if ((rc = q_int(q, &cf.t0, 0, Q_T0_SQL, NULL)) < 0 ||
	    (rc = q_prepare(q, &th, "SELECT id FROM threads WHERE ?1 < 0 OR "
	    "id = ?1 ORDER BY id")) < 0)
		goto out;
	if ((rc = q_res_new(resp, HWTR_NELEM(q_call_cols), q_call_cols)) < 0) {
		rc = q_fail(q, rc, "out of memory");
		goto out;
	}
	q_res_stream(q, *resp);
	if ((rc = q_call_hints(q, *resp, cf.t0)) < 0)
		goto out;
	sqlite3_bind_int64(th, 1, r->on ? r->thread : thread);
	while ((n < 0 || done < n) && (rc = sqlite3_step(th)) == SQLITE_ROW) {
		if ((rc = q_walk_open(q, &w, Q_CALL_COLS,
		    sqlite3_column_int64(th, 0), depth, r->on ? r->seq_lo : 0,
		    r->on ? r->seq_hi : INT64_MAX)) < 0)
			goto out;
		if (r->on)
			q_walk_insns(&w, r->insn_lo, r->insn_hi);
		rc = q_call_rows(q, &cf, *resp, NULL, &w, n < 0 ? -1 : n - done,
		    &got);
		q_walk_close(&w);
		if (rc < 0)
			goto out;
		done += got;
	}
	rc = rc == SQLITE_ROW || rc == SQLITE_DONE || rc == 0 ? 0 :
	    q_dbfail(q, "cannot read threads");
out:
	q_walk_close(&w);
	sqlite3_finalize(th);
	q_callfmt_free(&cf);
	if (rc < 0) {
		hwtr_q_res_free(*resp);
		*resp = NULL;
	}
	return (rc);
}

int
q_calls(struct hwtr_q *q, const struct hwtr_q_req *req,
    struct hwtr_q_res **resp)
{
	int64_t depth = req->depth >= 0 ? req->depth : INT64_MAX;
	int64_t n = req->n >= 0 ? req->n : -1;
	struct q_rng r;
	int rc;

	if (req->thread >= 0 && (rc = q_check_thread(q, req->thread)) < 0)
		return (rc);
	if ((rc = q_range(q, req, "calls", &r)) < 0)
		return (rc);
	/*
	 * --depth below the roots: a walk that never reads deeper calls
	 * (with a range, of the range's blocks).
	 */
	if (req->depth > 0)
		return (q_call_walk(q, resp, req->thread, req->depth, n, &r));
	/* A range: the calls entered in its blocks (calls_thread). */
	if (r.on)
		return (q_call_select5(q, resp, "SELECT " Q_CALL_RAW
		    Q_CALLS_RANGE_WHERE, r.thread, depth, n, r.seq_lo,
		    r.seq_hi, r.insn_lo, r.insn_hi));
	/*
	 * The roots alone (--depth 0) come a lookup each (Q_CALLS_ROOTS),
	 * whatever the length of the thread.  Deeper levels usually hold
	 * most calls: a scan of the thread in entry order is cheaper than
	 * gathering and sorting them, and stops early under -n.
	 */
	if (req->depth == 0)
		return (q_call_select(q, resp, Q_CALLS_ROOTS "SELECT "
		    Q_CALL_RAW "WHERE c.id IN (SELECT id FROM sel) AND "
		    "c.depth <= ?2 ORDER BY c.thread, c.entry_seq, c.id "
		    "LIMIT ?3", req->thread, depth, n));
	if (req->thread >= 0)
		return (q_call_select(q, resp, "SELECT " Q_CALL_RAW
		    "WHERE c.thread = ?1 AND c.depth <= ?2 "
		    "ORDER BY c.entry_seq, c.id LIMIT ?3", req->thread, depth,
		    n));
	return (q_call_select(q, resp, "SELECT " Q_CALL_RAW
	    "WHERE ?1 < 0 AND c.depth <= ?2 ORDER BY c.id LIMIT ?3", -1, depth,
	    n));
}

int
q_func(struct hwtr_q *q, const struct hwtr_q_req *req,
    struct hwtr_q_res **resp)
{
	struct q_str sql = { 0 };
	char *ids;
	int rc;

	if (req->pattern == NULL || req->pattern[0] == '\0')
		return (q_fail(q, -HWTR_E_INVAL, "func: no pattern"));
	/* A function only ever inlined has no symbol, and no calls. */
	if ((rc = q_sym_ids(q, "func", req->pattern, &ids)) == -HWTR_E_NOENT &&
	    q_inl_named(q, req->pattern)) {
		if (req->thread >= 0 &&
		    (rc = q_check_thread(q, req->thread)) < 0)
			return (rc);
		if ((rc = q_res_new(resp, HWTR_NELEM(q_call_cols),
		    q_call_cols)) < 0)
			return (q_fail(q, rc, "out of memory"));
		goto inlined;
	}
	if (rc < 0)
		return (rc);
	q_str_puts(&sql, "SELECT " Q_FUNC_RAW "WHERE c.symbol IN ");
	q_str_printf(&sql, "%s AND ?1 = ?1 AND ?2 = ?2 %s ORDER BY c.id", ids,
	    req->thread >= 0 ? "AND c.thread = ?1" : "");
	free(ids);
	if ((rc = q_sql_ready(q, &sql, req->thread)) < 0)
		return (rc);
	rc = q_call_select(q, resp, sql.p, req->thread, 0, 0);
	free(sql.p);
	if (rc < 0)
		return (rc);
inlined:
	/* Then the entries into its inlined instances (q_inline.c). */
	if ((rc = q_inl_entries(q, *resp, req->pattern, req->thread)) < 0) {
		hwtr_q_res_free(*resp);
		*resp = NULL;
	}
	return (rc);
}
