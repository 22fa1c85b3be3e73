/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The ranges of a thread the verbs take (--from, --to: instructions or
 * times) as positions of its blocks, for calls, hot, tree, timeline,
 * annotate and export.
 */

#include <string.h>

#include "q_int.h"

/*
 * The first timestamp of thread @thread at ns >= @t (a wall-clock time),
 * as its seq, or -1: a binary search over the positions, each probe one
 * lookup by primary key, since the times of a thread do not go back.
 */
int
q_ts_seq(struct hwtr_q *q, sqlite3_stmt *st, int64_t thread, int64_t nblocks,
    int64_t t, int64_t *seqp)
{
	int64_t lo = 0, hi = nblocks, mid;
	int rc;

	*seqp = -1;
	/* The least s whose first timestamp at or after it is at >= t. */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		rc = q_step2(st, thread, mid);
		if (rc != SQLITE_ROW && rc != SQLITE_DONE)
			return (q_dbfail(q, "cannot read timestamps"));
		if (rc == SQLITE_DONE || sqlite3_column_int64(st, 1) >= t)
			hi = mid;
		else
			lo = mid + 1;
	}
	rc = q_step2(st, thread, lo);
	if (rc == SQLITE_ROW && sqlite3_column_int64(st, 1) >= t)
		*seqp = sqlite3_column_int64(st, 0);
	else if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return (q_dbfail(q, "cannot read timestamps"));
	sqlite3_reset(st);
	return (0);
}

/*
 * A time range (ns from the trace start): the blocks whose time (that of
 * the last timestamp at or before them, as exec_order's) is in it, and the
 * instructions of those blocks.
 */
static int
q_range_time(struct hwtr_q *q, const struct hwtr_q_req *req,
    const char *what, struct q_rng *r, int64_t nblocks)
{
	sqlite3_stmt *st = NULL;
	int64_t t0, has, s, e;
	int rc;

	if ((rc = q_int(q, &has, 0, "SELECT count(*) FROM (SELECT 1 FROM "
	    "timestamps WHERE thread = ?1 AND ns IS NOT NULL LIMIT 1)", "i",
	    r->thread)) < 0)
		return (rc);
	if (has == 0)
		return (q_fail(q, -HWTR_E_INVAL, "%s: thread %lld has no "
		    "timing: give --from and --to as instruction numbers",
		    what, (long long)r->thread));
	if ((rc = q_int(q, &t0, 0, Q_T0_SQL, NULL)) < 0 ||
	    (rc = q_prepare(q, &st, "SELECT seq, ns FROM timestamps WHERE "
	    "thread = ?1 AND seq >= ?2 AND ns IS NOT NULL ORDER BY seq "
	    "LIMIT 1")) < 0)
		return (rc);
	r->seq_lo = 0;
	r->seq_hi = nblocks - 1;
	if (req->t_from >= 0) {
		if ((rc = q_ts_seq(q, st, r->thread, nblocks,
		    q_sat_add(t0, req->t_from), &s)) < 0)
			goto out;
		r->seq_lo = s >= 0 ? s : nblocks;
	}
	if (req->t_to >= 0 && (e = q_sat_add(t0, req->t_to)) < INT64_MAX) {
		if ((rc = q_ts_seq(q, st, r->thread, nblocks, e + 1, &s)) < 0)
			goto out;
		if (s >= 0)
			r->seq_hi = s - 1;
	}
	rc = 0;
	r->insn_lo = 0;
	r->insn_hi = -1;
	if (r->seq_lo > r->seq_hi) {
		r->seq_lo = 0;
		r->seq_hi = -1;
		goto out;
	}
	if ((rc = q_int(q, &r->insn_lo, 0, "SELECT insn FROM exec_order WHERE "
	    "thread = ?1 AND seq = ?2", "ii", r->thread, r->seq_lo)) < 0 ||
	    (rc = q_int(q, &r->insn_hi, -1, "SELECT e.insn + b.ninsns - 1 "
	    "FROM exec_order e JOIN blocks b ON b.id = e.block WHERE "
	    "e.thread = ?1 AND e.seq = ?2", "ii", r->thread, r->seq_hi)) < 0)
		goto out;
out:
	sqlite3_finalize(st);
	return (rc);
}

int
q_range(struct hwtr_q *q, const struct hwtr_q_req *req, const char *what,
    struct q_rng *r)
{
	int64_t n, nblocks;
	int rc, timed = req->t_from >= 0 || req->t_to >= 0;

	memset(r, 0, sizeof(*r));
	r->thread = req->thread;
	if (req->from < 0 && req->to < 0 && !timed)
		return (0);
	r->on = 1;
	if (timed && (req->from >= 0 || req->to >= 0))
		return (q_fail(q, -HWTR_E_INVAL, "%s: a range is of "
		    "instructions or of times, not both", what));
	if (req->from >= 0 && req->to >= 0 && req->from > req->to)
		return (q_fail(q, -HWTR_E_INVAL, "%s: --from %lld is after "
		    "--to %lld", what, (long long)req->from,
		    (long long)req->to));
	if (req->t_from >= 0 && req->t_to >= 0 && req->t_from > req->t_to)
		return (q_fail(q, -HWTR_E_INVAL, "%s: --from %lld ns is after "
		    "--to %lld ns", what, (long long)req->t_from,
		    (long long)req->t_to));
	if (r->thread < 0 && (rc = q_int(q, &r->thread, -1, "SELECT min(id) "
	    "FROM threads WHERE blocks > 0", NULL)) < 0)
		return (rc);
	if ((rc = q_int(q, &n, 0, "SELECT insns FROM threads WHERE id = ?1",
	    "i", r->thread)) < 0 ||
	    (rc = q_int(q, &nblocks, 0, "SELECT blocks FROM threads WHERE id "
	    "= ?1", "i", r->thread)) < 0)
		return (rc);
	if (n < 0 || nblocks < 0)
		return (q_fail(q, -HWTR_E_FORMAT, "threads: thread %lld has "
		    "%lld instructions in %lld blocks: out of range (a damaged "
		    "database?)", (long long)r->thread, (long long)n,
		    (long long)nblocks));
	if (timed)
		return (q_range_time(q, req, what, r, nblocks));
	r->insn_lo = req->from >= 0 ? req->from : 0;
	r->insn_hi = req->to >= 0 && req->to < n ? req->to : n - 1;
	r->seq_lo = 0;
	r->seq_hi = -1;		/* empty until both ends are found */
	if (r->insn_lo > r->insn_hi)
		return (0);
	if ((rc = q_int(q, &r->seq_lo, -1, Q_SEQ_OF_INSN, "ii", r->thread,
	    r->insn_lo)) < 0 ||
	    (rc = q_int(q, &r->seq_hi, -1, Q_SEQ_OF_INSN, "ii", r->thread,
	    r->insn_hi)) < 0)
		return (rc);
	if (r->seq_lo < 0 || r->seq_hi < 0) {
		r->seq_lo = 0;
		r->seq_hi = -1;
	}
	return (0);
}
