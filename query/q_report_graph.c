/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * hwtrace report's two drawings, as JSON for the page: the flame graph of
 * the whole run (tree's paths, merged by call path, pruned to frames of at
 * least a fraction of the run) and each thread's call timeline (calls at
 * most a few levels deep, bucketed into a fixed number of columns; calls
 * shorter than half a column are left out).  Both stay of bounded size
 * whatever the length of the trace: hwtrace-report(1) says how.
 */

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "q_int.h"
#include "q_report.h"

/* The flame graph's root, one node per thread under it. */
static void
rg_node_open(struct q_str *o, const char *name, int64_t value, int64_t thread)
{
	/* A node follows "[" (a first child) or "}" (its sibling). */
	if (o->len > 0 && o->p[o->len - 1] == '}')
		q_str_add(o, ",", 1);
	q_str_puts(o, "{\"name\":");
	hwtr_json_quote(q_str_put, o, name);
	q_str_printf(o, ",\"value\":%lld", (long long)value);
	/* A thread's node says its number, for q_rp_flame_gaps()' marks. */
	if (thread >= 0)
		q_str_printf(o, ",\"thread\":%lld", (long long)thread);
	q_str_puts(o, ",\"children\":[");
}

/*
 * The nodes of the tree rows of one thread, @r0 to before @r1, as nested
 * JSON objects; rows below @minv instructions are left out with their
 * subtree (their instructions stay in their parent's).  At most @maxn
 * nodes are written (*@nodes counts them); the rest are left out as if
 * they were small.
 */
static int
rg_flame_rows(struct q_str *o, const struct hwtr_q_res *tree, size_t r0,
    size_t r1, int64_t minv, size_t maxn, size_t *nodes)
{
	int64_t depth, cur = -1, skip = -1, v;
	const char *fn;
	size_t r;

	for (r = r0; r < r1; r++) {
		depth = strtoll(hwtr_q_res_cell(tree, r, 1, NULL), NULL, 10);
		v = strtoll(hwtr_q_res_cell(tree, r, 4, NULL), NULL, 10);
		if (skip >= 0 && depth > skip)
			continue;
		skip = -1;
		if (v < minv || *nodes >= maxn) {
			skip = depth;
			continue;
		}
		/* Close the nodes this one is not inside. */
		for (; cur >= depth; cur--)
			q_str_puts(o, "]}");
		assert(cur == depth - 1 || cur == -1);
		if (cur != depth - 1)
			return (-1);	/* a row deeper than its parent + 1 */
		fn = hwtr_q_res_cell(tree, r, 2, NULL);
		while (fn != NULL && *fn == ' ')
			fn++;
		rg_node_open(o, fn != NULL ? fn : "?", v, -1);
		cur = depth;
		(*nodes)++;
	}
	for (; cur >= 0; cur--)
		q_str_puts(o, "]}");
	return (0);
}

int
q_rp_flame(struct hwtr_q *q, struct q_str *o, int64_t maxnodes,
    int64_t *prunedp)
{
	struct hwtr_q_req req;
	struct hwtr_q_res *tree = NULL, *th = NULL;
	int64_t total = 0, minv, thread, tins;
	size_t r, r0, nrows, nodes = 0, t;
	char label[512];
	const char *name;
	int rc;

	hwtr_q_req_init(&req, HWTR_Q_TREE);
	if ((rc = q_select(q, &th, "SELECT id, coalesce(tid, -1), coalesce(name, ''), "
	    "coalesce(insns, 0) FROM threads WHERE calls > 0 ORDER BY id",
	    NULL)) < 0)
		return (rc);
	for (t = 0; t < hwtr_q_res_nrows(th); t++)
		if (__builtin_add_overflow(total, strtoll(hwtr_q_res_cell(th,
		    t, 3, NULL), NULL, 10), &total)) {
			rc = q_fail(q, -HWTR_E_FORMAT, "report: the threads' "
			    "instructions add up past 2^63 (a damaged "
			    "database?)");
			goto out;
		}
	if ((rc = q_tree(q, &req, &tree)) < 0)
		goto out;
	nrows = hwtr_q_res_nrows(tree);
	/* A frame narrower than 1/20000 of the run is not drawn anyway. */
	minv = total / 20000;
	rg_node_open(o, "all threads", total, -1);
	for (t = 0, r = 0; t < hwtr_q_res_nrows(th); t++) {
		thread = strtoll(hwtr_q_res_cell(th, t, 0, NULL), NULL, 10);
		tins = strtoll(hwtr_q_res_cell(th, t, 3, NULL), NULL, 10);
		name = hwtr_q_res_cell(th, t, 2, NULL);
		/* The tree's rows are by thread, in the threads' order. */
		for (r0 = r; r < nrows && strtoll(hwtr_q_res_cell(tree, r, 0,
		    NULL), NULL, 10) == thread; r++)
			;
		snprintf(label, sizeof(label), "thread %lld (tid %s%s%s)",
		    (long long)thread, hwtr_q_res_cell(th, t, 1, NULL),
		    *name != '\0' ? " " : "", name);
		rg_node_open(o, label, tins, thread);
		if (rg_flame_rows(o, tree, r0, r, minv, (size_t)maxnodes,
		    &nodes) < 0) {
			rc = q_fail(q, -HWTR_E_INVAL, "report: unexpected tree "
			    "rows of thread %lld", (long long)thread);
			goto out;
		}
		q_str_puts(o, "]}");
	}
	q_str_puts(o, "]}");
	*prunedp = minv;
	rc = o->err ? q_fail(q, -HWTR_E_NOMEM, "out of memory") : 0;
out:
	hwtr_q_res_free(tree);
	hwtr_q_res_free(th);
	return (rc);
}

/*
 * The column of @cols (> 0) over a thread of @ninsns (> 0) instructions
 * where instruction @insn less @back (1 or 2) falls: (insn - back) * cols
 * / ninsns within 0 and cols - 1.  Positions from a damaged database may
 * be anywhere in int64: none is let overflow.
 */
static int64_t
rg_col(int64_t insn, int64_t back, int64_t ninsns, int64_t cols)
{
	int64_t p, c;

	assert(ninsns > 0 && cols > 0 && back >= 0);
	if (insn <= back)
		return (0);
	p = insn - back;
	if (p >= ninsns)
		return (cols - 1);
	/* p < ninsns: the quotient is below cols, if not the product. */
	if (__builtin_mul_overflow(p, cols, &c))
		c = (int64_t)((long double)p * (long double)cols /
		    (long double)ninsns);
	else
		c /= ninsns;
	return (c >= cols ? cols - 1 : c);
}

/*
 * Where thread @thread lost trace or decoding, as columns of its
 * timeline: decode errors, overflows, lost data and places where the
 * trace was off (hwtrace-db(5), events).
 */
static int
rg_gaps(struct hwtr_q *q, struct q_str *o, int64_t thread, int64_t ninsns,
    int64_t cols)
{
	sqlite3_stmt *st = NULL;
	int64_t insn, col, last = -1;
	const char *kind;
	int rc, first = 1;

	if ((rc = q_prepare(q, &st, "SELECT coalesce(insn, 0), kind FROM "
	    "events WHERE thread = ?1 AND kind IN ('lost', 'overflow', "
	    "'decode-error', 'disabled', 'async-disabled') ORDER BY id")) < 0)
		return (rc);
	sqlite3_bind_int64(st, 1, thread);
	q_str_puts(o, ",\"gaps\":[");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		insn = sqlite3_column_int64(st, 0);
		kind = (const char *)sqlite3_column_text(st, 1);
		col = rg_col(insn, 1, ninsns, cols);
		if (col == last)
			continue;
		last = col;
		q_str_printf(o, "%s[%lld,", first ? "" : ",", (long long)col);
		hwtr_json_quote(q_str_put, o, kind != NULL ? kind : "?");
		q_str_add(o, "]", 1);
		first = 0;
	}
	sqlite3_finalize(st);
	q_str_add(o, "]", 1);
	return (rc == SQLITE_DONE ? 0 : q_dbfail(q, "report: gaps"));
}

/*
 * One thread's timeline: its calls at most @depth deep and at least half
 * a column long, as spans [depth, first column, last column, name], the
 * neighbours of one name at one depth merged.
 */
static int
rg_thread_line(struct hwtr_q *q, struct q_str *o, int64_t thread,
    int64_t ninsns, int64_t cols, int64_t depth)
{
	sqlite3_stmt *st = NULL;
	int64_t d, lo, hi, pd = -1, plo = 0, phi = -1;
	const char *name;
	char *pname = NULL;
	int rc, first = 1;

	assert(ninsns > 0 && cols > 0);
	if ((rc = q_prepare(q, &st, "SELECT c.depth, c.entry_insn, "
	    "coalesce(c.exit_insn, c.entry_insn + c.insns), coalesce(s.name, "
	    "printf('%#x', c.func_ip)) FROM calls c LEFT JOIN symbols s ON "
	    "s.id = c.symbol WHERE c.thread = ?1 AND c.depth < ?2 AND "
	    "c.insns * 2 * ?3 >= ?4 ORDER BY c.depth, c.entry_seq, c.id")) < 0)
		return (rc);
	sqlite3_bind_int64(st, 1, thread);
	sqlite3_bind_int64(st, 2, depth);
	sqlite3_bind_int64(st, 3, cols);
	sqlite3_bind_int64(st, 4, ninsns);
	q_str_puts(o, ",\"spans\":[");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		d = sqlite3_column_int64(st, 0);
		lo = rg_col(sqlite3_column_int64(st, 1), 1, ninsns, cols);
		hi = rg_col(sqlite3_column_int64(st, 2), 2, ninsns, cols);
		hi = hi < lo ? lo : hi;
		name = (const char *)sqlite3_column_text(st, 3);
		if (name == NULL)
			name = "?";
		if (d == pd && pname != NULL && strcmp(pname, name) == 0 &&
		    lo <= phi + 1) {
			phi = hi > phi ? hi : phi;
			continue;
		}
		if (pname != NULL) {
			q_str_printf(o, "%s[%lld,%lld,%lld,", first ? "" : ",",
			    (long long)pd, (long long)plo, (long long)phi);
			hwtr_json_quote(q_str_put, o, pname);
			q_str_add(o, "]", 1);
			first = 0;
		}
		free(pname);
		if ((pname = strdup(name)) == NULL) {
			rc = SQLITE_NOMEM;
			break;
		}
		pd = d;
		plo = lo;
		phi = hi;
	}
	if (pname != NULL && rc == SQLITE_DONE) {
		q_str_printf(o, "%s[%lld,%lld,%lld,", first ? "" : ",",
		    (long long)pd, (long long)plo, (long long)phi);
		hwtr_json_quote(q_str_put, o, pname);
		q_str_add(o, "]", 1);
	}
	free(pname);
	sqlite3_finalize(st);
	q_str_add(o, "]", 1);
	if (rc != SQLITE_DONE)
		return (q_dbfail(q, "report: timeline"));
	return (rg_gaps(q, o, thread, ninsns, cols));
}

int
q_rp_timeline(struct hwtr_q *q, struct q_str *o, int64_t cols,
    int64_t depth, int64_t maxthreads)
{
	struct hwtr_q_res *th = NULL;
	int64_t thread, ninsns;
	const char *name;
	size_t t;
	int rc;

	if ((rc = q_select(q, &th, "SELECT id, coalesce(tid, -1), coalesce(name, ''), "
	    "insns FROM threads WHERE insns > 0 ORDER BY insns DESC, id LIMIT ?1",
	    "i", maxthreads)) < 0)
		return (rc);
	q_str_printf(o, "{\"columns\":%lld,\"depth\":%lld,\"threads\":[",
	    (long long)cols, (long long)depth);
	for (t = 0; t < hwtr_q_res_nrows(th); t++) {
		thread = strtoll(hwtr_q_res_cell(th, t, 0, NULL), NULL, 10);
		ninsns = strtoll(hwtr_q_res_cell(th, t, 3, NULL), NULL, 10);
		/* insns > 0 holds for text and reals too: not counts. */
		if (ninsns <= 0) {
			rc = q_fail(q, -HWTR_E_FORMAT, "report: thread %lld: "
			    "its instructions '%s' are not a count (a damaged "
			    "database?)", (long long)thread,
			    hwtr_q_res_cell(th, t, 3, NULL));
			break;
		}
		name = hwtr_q_res_cell(th, t, 2, NULL);
		q_str_printf(o, "%s{\"thread\":%lld,\"tid\":%s,\"insns\":%lld,"
		    "\"name\":", t ? "," : "", (long long)thread,
		    hwtr_q_res_cell(th, t, 1, NULL), (long long)ninsns);
		hwtr_json_quote(q_str_put, o, name);
		if ((rc = rg_thread_line(q, o, thread, ninsns, cols, depth)) < 0)
			break;
		q_str_add(o, "}", 1);
	}
	q_str_puts(o, "]}");
	hwtr_q_res_free(th);
	if (rc == 0 && o->err)
		rc = q_fail(q, -HWTR_E_NOMEM, "out of memory");
	return (rc);
}

/*
 * Where the flame graph lost data: each loss event (lost, overflow,
 * decode-error; the first 100) as {thread, kind, detail, path}, the path
 * the call stack at its place (bt --at, outermost first), empty for a
 * loss before the thread's first instruction (a ring's start) and NULL
 * thread for a capture-wide one.  The page marks the deepest frame of
 * the flame graph on the path.
 */
int
q_rp_flame_gaps(struct hwtr_q *q, struct q_str *o)
{
	struct hwtr_q_res *ev = NULL, *bt = NULL;
	struct hwtr_q_req req;
	const char *fn, *thread, *insn;
	size_t e, r, n;
	int rc;

	if ((rc = q_select(q, &ev, "SELECT thread, kind, insn, "
	    "coalesce(detail, '') FROM events WHERE kind IN ('lost', "
	    "'overflow', 'decode-error') ORDER BY id LIMIT 100", NULL)) < 0)
		return (rc);
	q_str_add(o, "[", 1);
	for (e = 0; e < hwtr_q_res_nrows(ev); e++) {
		thread = hwtr_q_res_cell(ev, e, 0, NULL);
		insn = hwtr_q_res_cell(ev, e, 2, NULL);
		q_str_printf(o, "%s{\"thread\":%s,\"kind\":", e ? "," : "",
		    thread != NULL ? thread : "null");
		hwtr_json_quote(q_str_put, o, hwtr_q_res_cell(ev, e, 1, NULL));
		q_str_puts(o, ",\"detail\":");
		hwtr_json_quote(q_str_put, o, hwtr_q_res_cell(ev, e, 3, NULL));
		q_str_puts(o, ",\"path\":[");
		if (thread != NULL && insn != NULL) {
			hwtr_q_req_init(&req, HWTR_Q_BT);
			req.thread = strtoll(thread, NULL, 10);
			req.at = strtoll(insn, NULL, 10);
			/* No stack there: the mark stays on the thread. */
			if (hwtr_q_run(q, &req, &bt) < 0)
				bt = NULL;
			n = bt != NULL ? hwtr_q_res_nrows(bt) : 0;
			for (r = n; r > 0; r--) {
				fn = hwtr_q_res_cell(bt, r - 1, 2, NULL);
				if (fn == NULL || *fn == '(')
					continue;
				if (o->len > 0 && o->p[o->len - 1] != '[')
					q_str_add(o, ",", 1);
				hwtr_json_quote(q_str_put, o, fn);
			}
			hwtr_q_res_free(bt);
			bt = NULL;
		}
		q_str_puts(o, "]}");
	}
	q_str_add(o, "]", 1);
	hwtr_q_res_free(ev);
	return (o->err ? q_fail(q, -HWTR_E_NOMEM, "out of memory") : 0);
}
