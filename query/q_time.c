/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The timeline verb: calls and events of every thread in time order,
 * streamed.  One SQL statement with ORDER BY time over all the calls
 * makes SQLite sort the whole table before the first row (37 s for the
 * 1.5 GB gzip database, and 8 s to find that a 10 ms window is empty).
 * But within a thread, calls entered later were entered no earlier
 * (entry_ns is a thread's own clock, which does not run backwards), so
 * each thread's calls come in time order from the calls table's entry order
 * (thread, entry_seq) as they are, and a time is found in them by
 * bisection over entry_seq, a few dozen index lookups.  The threads'
 * ordered cursors are merged with a heap: the first row comes after one
 * lookup per thread, memory holds a row per thread plus the block of
 * rows being written, and a window costs what it returns.
 *
 * Events are few (enable/disable, errors, exec and mmap); each thread's
 * are read with their own ORDER BY, from the events_thread index.
 */

#include <stdlib.h>
#include <string.h>

#include "q_int.h"

struct tl_cur {
	sqlite3_stmt	*st;
	struct q_walk	w;		/* calls: st is w.st */
	int		call;		/* 1: calls; 0: events */
	int		off;		/* first column of the row (calls: 4) */
	int64_t		t, thread, seq, o;
	int		thread_null;	/* events with no thread: first */
	int		has_t;		/* a time (range of instructions) */
	int64_t		tv;		/* ... and it */
};

struct tl {
	struct hwtr_q	*q;
	struct tl_cur	*cur;		/* the cursors */
	size_t		ncur;
	size_t		*heap;		/* indexes into cur, a min-heap */
	size_t		nheap;
	int64_t		t0, from, to;	/* from, to: absolute ns */
	int64_t		maxdepth;	/* --depth; -1: any */
	struct q_rng	r;		/* --from, --to as instructions */
	struct q_names	names;
};

static int
tl_less(const struct tl_cur *a, const struct tl_cur *b)
{
	if (a->t != b->t)
		return (a->t < b->t);
	if (a->thread_null != b->thread_null)
		return (a->thread_null);
	if (a->thread != b->thread)
		return (a->thread < b->thread);
	if (a->seq != b->seq)
		return (a->seq < b->seq);
	/* Events before calls of the same seq, then by id. */
	if (a->call != b->call)
		return (!a->call);
	return (a->o < b->o);
}

static void
tl_sift_down(struct tl *tl, size_t i)
{
	size_t l, m, tmp;

	for (;;) {
		l = 2 * i + 1;
		m = i;
		if (l < tl->nheap && tl_less(&tl->cur[tl->heap[l]],
		    &tl->cur[tl->heap[m]]))
			m = l;
		if (l + 1 < tl->nheap && tl_less(&tl->cur[tl->heap[l + 1]],
		    &tl->cur[tl->heap[m]]))
			m = l + 1;
		if (m == i)
			return;
		tmp = tl->heap[i];
		tl->heap[i] = tl->heap[m];
		tl->heap[m] = tmp;
		i = m;
	}
}

/*
 * Step cursor @c to its next row within the window.  Returns 1 with a
 * row, 0 at its end, < 0 on failure.  Calls without a time are skipped
 * (as before: a timeline shows what has a time); past @to a thread's
 * calls are done.
 */
static int
tl_step(struct tl *tl, struct tl_cur *c)
{
	int rc;

	for (;;) {
		if (c->call) {
			if ((rc = q_walk_step(&c->w)) < 0)
				return (rc);
			rc = rc == 1 ? SQLITE_ROW : SQLITE_DONE;
		} else
			rc = sqlite3_step(c->st);
		if (rc == SQLITE_DONE)
			return (0);
		if (rc != SQLITE_ROW)
			return (q_dbfail(tl->q, "timeline: cannot read"));
		c->has_t = sqlite3_column_type(c->st, c->off) != SQLITE_NULL;
		c->tv = sqlite3_column_int64(c->st, c->off);
		if (tl->r.on) {
			/*
			 * A range of one thread's instructions: in its order
			 * (times, where known, follow it); the calls entered
			 * at those instructions.
			 */
			c->t = 0;
			if (c->call && (sqlite3_column_int64(c->st, 11) <
			    tl->r.insn_lo || sqlite3_column_int64(c->st, 11) >
			    tl->r.insn_hi))
				continue;
		} else {
			if (!c->has_t)
				continue;
			c->t = c->tv;
		}
		if (c->call && !tl->r.on) {
			if (c->t > tl->to)
				return (0);
			if (c->t < tl->from)
				continue;
		}
		/* As SQL orders them: a NULL seq first; events before calls. */
		c->seq = sqlite3_column_type(c->st, c->off + 1) ==
		    SQLITE_NULL ? INT64_MIN : sqlite3_column_int64(c->st,
		    c->off + 1);
		c->o = sqlite3_column_int64(c->st, c->off + 2);
		return (1);
	}
}

/* Push the row of cursor @c into @res, as the old SQL's columns. */
static int
tl_row(struct tl *tl, struct tl_cur *c, struct hwtr_q_res *res)
{
	sqlite3_stmt *st = c->st;
	const struct q_name *nm;
	char hex[32];
	int rc;

	int k = c->off;

	if (c->has_t)
		rc = q_res_push_int(res, q_sat_sub(c->tv, tl->t0));
	else
		rc = q_res_push(res, HWTR_Q_NULL, NULL);
	if (c->thread_null)
		rc |= q_res_push(res, HWTR_Q_NULL, NULL);
	else
		rc |= q_res_push_int(res, c->thread);
	if (sqlite3_column_type(st, k + 1) == SQLITE_NULL)
		rc |= q_res_push(res, HWTR_Q_NULL, NULL);
	else
		rc |= q_res_push_int(res, c->seq);
	if (c->call) {
		rc |= q_res_push(res, HWTR_Q_TEXT, "call");
		nm = NULL;
		if (sqlite3_column_type(st, k + 3) != SQLITE_NULL &&
		    (nm = q_name_get(tl->q, &tl->names,
		    sqlite3_column_int64(st, k + 3))) == NULL)
			return (-HWTR_E_NOMEM);
		if (nm != NULL && nm->name != NULL)
			rc |= q_res_push_n(res, HWTR_Q_TEXT, nm->name, nm->len,
			    nm->w);
		else {
			q_fmt_hex(hex, (uint64_t)sqlite3_column_int64(st,
			    k + 4));
			rc |= q_res_push(res, HWTR_Q_TEXT, hex);
		}
		rc |= q_res_push_int(res, sqlite3_column_int64(st, k + 5));
		if (sqlite3_column_type(st, k + 6) == SQLITE_NULL ||
		    !c->has_t)
			rc |= q_res_push(res, HWTR_Q_NULL, NULL);
		else
			rc |= q_res_push_int(res, q_sat_sub(
			    sqlite3_column_int64(st, k + 6), c->tv));
	} else {
		rc |= q_res_push(res, HWTR_Q_TEXT,
		    (const char *)sqlite3_column_text(st, 3));
		rc |= q_res_push(res, sqlite3_column_type(st, 4) ==
		    SQLITE_NULL ? HWTR_Q_NULL : HWTR_Q_TEXT,
		    (const char *)sqlite3_column_text(st, 4));
		rc |= q_res_push(res, HWTR_Q_NULL, NULL);
		rc |= q_res_push(res, HWTR_Q_NULL, NULL);
	}
	return (rc != 0 ? q_fail(tl->q, -HWTR_E_NOMEM, "out of memory") : 0);
}

/*
 * The first entry_seq of thread @thread whose call has a time at or after
 * @t (or one past its last call): bisection over entry_seq, each probe
 * one index lookup.  A probe lands on the first call at or after a seq
 * that has a time.
 */
static int
tl_seek(struct tl *tl, sqlite3_stmt *probe, int64_t thread, int64_t t,
    int64_t lo, int64_t hi, int64_t *seqp)
{
	int64_t mid, s;
	int rc;

	/* Invariant: calls before lo are earlier than t; from hi on, not. */
	while (lo < hi) {
		/* A damaged database's seqs span more than INT64_MAX. */
		mid = lo + (int64_t)(((uint64_t)hi - (uint64_t)lo) / 2);
		rc = q_step2(probe, thread, mid);
		if (rc == SQLITE_DONE) {
			hi = mid;
			continue;
		}
		if (rc != SQLITE_ROW)
			return (q_dbfail(tl->q, "timeline: cannot seek"));
		s = sqlite3_column_int64(probe, 1);
		if (sqlite3_column_int64(probe, 0) < t)
			lo = s < INT64_MAX ? s + 1 : INT64_MAX;
		else
			hi = mid;
	}
	*seqp = lo;
	return (0);
}

static int
tl_open(struct tl *tl, const struct hwtr_q_req *req)
{
	sqlite3_stmt *th = NULL, *probe = NULL;
	struct tl_cur *c;
	int64_t nthreads, thread, lo, hi, seq;
	size_t cap;
	int rc;

	if ((rc = q_int(tl->q, &nthreads, 0, "SELECT count(*) FROM threads",
	    NULL)) < 0)
		return (rc);
	cap = 2 * (size_t)nthreads + 1;
	if ((tl->cur = calloc(cap, sizeof(*tl->cur))) == NULL ||
	    (tl->heap = calloc(cap, sizeof(*tl->heap))) == NULL)
		return (q_fail(tl->q, -HWTR_E_NOMEM, "out of memory"));
	if ((rc = q_prepare(tl->q, &th, "SELECT t.id, (SELECT entry_seq "
	    "FROM calls c WHERE c.thread = t.id ORDER BY entry_seq LIMIT 1), "
	    "(SELECT max(entry_seq) FROM calls c WHERE c.thread = t.id) FROM "
	    "threads t WHERE ?1 < 0 OR "
	    "t.id = ?1 ORDER BY t.id")) < 0)
		goto out;
	if ((rc = q_prepare(tl->q, &probe, Q_TL_PROBE)) < 0)
		goto out;
	sqlite3_bind_int64(th, 1, tl->r.on ? tl->r.thread : req->thread);
	while ((rc = sqlite3_step(th)) == SQLITE_ROW && tl->ncur + 2 <= cap) {
		thread = sqlite3_column_int64(th, 0);
		if (sqlite3_column_type(th, 1) != SQLITE_NULL) {
			lo = sqlite3_column_int64(th, 1);
			/* Past the last call's entry (a damaged one: no wrap). */
			hi = sqlite3_column_int64(th, 2);
			hi = hi < INT64_MAX ? hi + 1 : INT64_MAX;
			seq = lo;
			if (tl->r.on) {
				seq = tl->r.seq_lo;
				hi = tl->r.seq_hi;
			} else if (tl->from > INT64_MIN && (rc = tl_seek(tl,
			    probe, thread, tl->from, lo, hi, &seq)) < 0)
				goto out;
			c = &tl->cur[tl->ncur++];
			c->call = 1;
			c->off = 4;
			c->thread = thread;
			if ((rc = q_walk_open(tl->q, &c->w, "entry_ns, "
			    "entry_seq, id, symbol, func_ip, depth, exit_ns, "
			    "entry_insn", thread, tl->maxdepth, seq,
			    tl->r.on ? hi : INT64_MAX)) < 0)
				goto out;
			c->st = c->w.st;
		}
		c = &tl->cur[tl->ncur++];
		c->thread = thread;
		if (tl->r.on) {
			/* The events of the range's blocks (events_thread). */
			if ((rc = q_prepare(tl->q, &c->st,
			    Q_TL_EVENTS_RANGE)) < 0)
				goto out;
			sqlite3_bind_int64(c->st, 1, thread);
			sqlite3_bind_int64(c->st, 2, tl->r.seq_lo);
			sqlite3_bind_int64(c->st, 3, tl->r.seq_hi);
			continue;
		}
		if ((rc = q_prepare(tl->q, &c->st, Q_TL_EVENTS)) < 0)
			goto out;
		sqlite3_bind_int64(c->st, 1, thread);
		sqlite3_bind_int64(c->st, 2, tl->from);
		sqlite3_bind_int64(c->st, 3, tl->to);
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		rc = q_dbfail(tl->q, "timeline: cannot read threads");
		goto out;
	}
	/* Events of no thread (every thread asked for): first at a time. */
	if (req->thread < 0 && !tl->r.on) {
		c = &tl->cur[tl->ncur++];
		c->thread_null = 1;
		if ((rc = q_prepare(tl->q, &c->st, "SELECT ns, seq, id, kind, "
		    "detail FROM events WHERE thread IS NULL AND ns IS NOT "
		    "NULL AND ns >= ?1 AND ns <= ?2 ORDER BY ns, seq, id")) < 0)
			goto out;
		sqlite3_bind_int64(c->st, 1, tl->from);
		sqlite3_bind_int64(c->st, 2, tl->to);
	}
	rc = 0;
out:
	sqlite3_finalize(th);
	sqlite3_finalize(probe);
	return (rc);
}

int
q_timeline(struct hwtr_q *q, const struct hwtr_q_req *req,
    struct hwtr_q_res **resp)
{
	static const char *const cols[] = { "time_ns", "thread", "seq",
	    "kind", "what", "depth", "duration_ns" };
	struct hwtr_q_res *res = NULL;
	struct tl tl;
	size_t i;
	int rc;

	*resp = NULL;
	memset(&tl, 0, sizeof(tl));
	tl.q = q;
	if (req->thread >= 0 && (rc = q_check_thread(q, req->thread)) < 0)
		return (rc);
	if (req->t_from >= 0 && req->t_to >= 0 && req->t_from > req->t_to)
		return (q_fail(q, -HWTR_E_INVAL, "timeline: --from is after "
		    "--to"));
	if ((rc = q_int(q, &tl.t0, 0, Q_T0_SQL, NULL)) < 0)
		return (rc);
	tl.maxdepth = req->depth;
	/* Instructions (a time range stays over every thread's times). */
	if ((req->from >= 0 || req->to >= 0) &&
	    (rc = q_range(q, req, "timeline", &tl.r)) < 0)
		return (rc);
	/* The window in absolute ns; relative times beyond it clamp. */
	tl.from = req->t_from >= 0 ? q_sat_add(tl.t0, req->t_from) :
	    INT64_MIN;
	tl.to = req->t_to >= 0 ? q_sat_add(tl.t0, req->t_to) : INT64_MAX;
	if ((rc = tl_open(&tl, req)) < 0)
		goto out;
	if ((rc = q_res_new(&res, HWTR_NELEM(cols), cols)) < 0) {
		q_fail(q, rc, "out of memory");
		goto out;
	}
	q_res_stream(q, res);
	for (i = 0; i < tl.ncur; i++) {
		if ((rc = tl_step(&tl, &tl.cur[i])) < 0)
			goto out;
		if (rc == 1)
			tl.heap[tl.nheap++] = i;
	}
	for (i = tl.nheap; i-- > 0; )
		tl_sift_down(&tl, i);
	while (tl.nheap > 0) {
		struct tl_cur *c = &tl.cur[tl.heap[0]];

		if ((rc = tl_row(&tl, c, res)) < 0 ||
		    (rc = q_res_row_end(q, res)) < 0)
			goto out;
		if ((rc = tl_step(&tl, c)) < 0)
			goto out;
		if (rc == 0)
			tl.heap[0] = tl.heap[--tl.nheap];
		tl_sift_down(&tl, 0);
	}
	*resp = res;
	res = NULL;
	rc = 0;
out:
	for (i = 0; i < tl.ncur; i++)
		if (tl.cur[i].call)
			q_walk_close(&tl.cur[i].w);
		else
			sqlite3_finalize(tl.cur[i].st);
	free(tl.cur);
	free(tl.heap);
	q_names_free(&tl.names);
	hwtr_q_res_free(res);
	return (rc);
}
