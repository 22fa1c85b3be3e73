/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Walking the calls of one thread at most D deep, and the code run at
 * most D deep, through the calls_thread index (thread, entry_seq).
 *
 * A depth bound as "AND depth <= D" reads every call of the thread to keep
 * a few: on gzip's 4.7 M calls a scan, whatever D.  But the calls of a
 * thread in entry order are its call tree depth first, and the calls
 * nested in call C are those entered in C's blocks, before its exit_seq.
 * So a walk in entry order that reaches a call at depth D seeks past its
 * exit_seq, one index search, and never reads what is deeper: it costs
 * the calls it returns.  Rows with equal entry_seq (a call with no block)
 * are ordered by id, so a seek from C resumes after C.
 *
 * The code run at most D deep (hot and coverage --depth) is the blocks of
 * the thread less those of the calls at depth D + 1, whose spans
 * [entry_seq, exit_seq) the same walk finds; the blocks left are counted
 * from exec_order, range by range, into temp.q_cnt.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "q_int.h"

int
q_walk_open(struct hwtr_q *q, struct q_walk *w, const char *cols,
    int64_t thread, int64_t maxdepth, int64_t seq_lo, int64_t seq_hi)
{
	struct q_str sql = { 0 };
	int rc;

	memset(w, 0, sizeof(*w));
	w->q = q;
	w->thread = thread;
	w->maxdepth = maxdepth >= 0 ? maxdepth : INT64_MAX;
	w->seq_hi = seq_hi;
	q_str_puts(&sql, "SELECT id, depth, entry_seq, exit_seq");
	if (cols != NULL && cols[0] != '\0')
		q_str_printf(&sql, ", %s", cols);
	q_str_puts(&sql, " FROM calls c " Q_WALK_WHERE);
	if ((rc = q_sql_ready(q, &sql, -1)) < 0)
		return (rc);
	rc = q_prepare(q, &w->st, sql.p);
	free(sql.p);
	if (rc < 0)
		return (rc);
	sqlite3_bind_int64(w->st, 1, thread);
	sqlite3_bind_int64(w->st, 2, seq_lo);
	sqlite3_bind_int64(w->st, 3, INT64_MIN);
	sqlite3_bind_int64(w->st, 4, INT64_MIN);
	sqlite3_bind_int64(w->st, 5, seq_hi);
	q_walk_insns(w, INT64_MIN, INT64_MAX);
	return (0);
}

void
q_walk_rewind(struct q_walk *w, int64_t maxdepth, int64_t seq_lo,
    int64_t seq_hi)
{
	sqlite3_reset(w->st);
	w->maxdepth = maxdepth >= 0 ? maxdepth : INT64_MAX;
	w->seq_hi = seq_hi;
	w->skip = 0;
	w->relative = 0;
	sqlite3_bind_int64(w->st, 2, seq_lo);
	sqlite3_bind_int64(w->st, 3, INT64_MIN);
	sqlite3_bind_int64(w->st, 4, INT64_MIN);
	sqlite3_bind_int64(w->st, 5, seq_hi);
}

void
q_walk_insns(struct q_walk *w, int64_t lo, int64_t hi)
{
	sqlite3_bind_int64(w->st, 6, lo);
	sqlite3_bind_int64(w->st, 7, hi);
}

/*
 * The roots of a walk that starts inside the call tree: its first call
 * and every later call no deeper than the last root (its caller is then
 * one of the calls open before the walk's first block, whose depths fall
 * as they return).  What the walk seeks past is deeper than the bound,
 * so it holds no root.
 */
void
q_walk_relative(struct q_walk *w, int64_t maxdepth)
{
	w->relative = 1;
	w->rel = maxdepth;
	w->base = INT64_MAX;
	w->maxdepth = INT64_MAX;
}

/* Resume after call @id (entered at @es) at block @from. */
static void
q_walk_seek(struct q_walk *w, int64_t from, int64_t es, int64_t id)
{
	sqlite3_reset(w->st);
	sqlite3_bind_int64(w->st, 2, from);
	sqlite3_bind_int64(w->st, 3, es);
	sqlite3_bind_int64(w->st, 4, id);
	w->nseek++;
}

int
q_walk_step(struct q_walk *w)
{
	int64_t id, depth, es, xs;
	int rc;

	if (w->st == NULL)
		return (0);
	for (;;) {
		rc = sqlite3_step(w->st);
		if (rc == SQLITE_DONE)
			return (0);
		if (rc != SQLITE_ROW)
			return (q_dbfail(w->q, "cannot read calls"));
		id = sqlite3_column_int64(w->st, 0);
		depth = sqlite3_column_int64(w->st, 1);
		es = sqlite3_column_int64(w->st, 2);
		xs = sqlite3_column_int64(w->st, 3);
		if (w->skip) {
			/*
			 * The seek past the call at the bound is made only
			 * when the next row is inside it: a call with no
			 * callees (most) costs no seek.  A row at or past its
			 * exit is the one the seek would have found first.
			 */
			w->skip = 0;
			if (es < w->skip_seq) {
				q_walk_seek(w, w->skip_seq, w->skip_es,
				    w->skip_id);
				continue;
			}
		}
		if (w->relative && depth < w->base) {
			/* A root: the bound is below it. */
			w->base = depth;
			w->maxdepth = depth > INT64_MAX - w->rel ? INT64_MAX :
			    depth + w->rel;
		}
		if (depth > w->maxdepth) {
			/* Entered inside a call the walk did not see. */
			if (xs > es)
				q_walk_seek(w, xs, es, id);
			continue;
		}
		/* At the bound: what it calls is deeper; seek past it. */
		if (depth == w->maxdepth && xs > es + 1) {
			w->skip = 1;
			w->skip_seq = xs;
			w->skip_es = es;
			w->skip_id = id;
		}
		return (1);
	}
}

void
q_walk_close(struct q_walk *w)
{
	sqlite3_finalize(w->st);
	w->st = NULL;
}

/*
 * The calls open at block @seq of @thread at most @maxdepth deep,
 * innermost first, into *frp (malloc'd; *np their number): the last call
 * entered at or before @seq, and its callers, less those that returned
 * before @seq (once one holds @seq, its callers do).  Each is one lookup
 * (calls_thread, then the primary key).
 */
int
q_walk_stack(struct hwtr_q *q, int64_t thread, int64_t seq, int64_t maxdepth,
    struct q_span **frp, size_t *np)
{
	sqlite3_stmt *st = NULL, *up = NULL, *s;
	struct q_span f, *fr = NULL;
	size_t n = 0, cap = 0;
	int64_t parent;
	int rc;

	*frp = NULL;
	*np = 0;
	if ((rc = q_prepare(q, &st, Q_WALK_INNER)) < 0 ||
	    (rc = q_prepare(q, &up, "SELECT id, depth, entry_seq, exit_seq, "
	    "parent FROM calls WHERE id = ?1")) < 0)
		goto out;
	sqlite3_bind_int64(st, 1, thread);
	sqlite3_bind_int64(st, 2, seq);
	s = st;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		f.id = sqlite3_column_int64(s, 0);
		f.depth = sqlite3_column_int64(s, 1);
		f.entry_seq = sqlite3_column_int64(s, 2);
		f.exit_seq = sqlite3_column_int64(s, 3);
		parent = sqlite3_column_type(s, 4) == SQLITE_NULL ? -1 :
		    sqlite3_column_int64(s, 4);
		if (f.exit_seq > seq && f.entry_seq <= seq &&
		    f.depth <= maxdepth) {
			if (hwtr_grow(&fr, &cap, n + 1, sizeof(*fr)) < 0) {
				rc = q_fail(q, -HWTR_E_NOMEM, "out of memory");
				goto out;
			}
			fr[n++] = f;
		}
		if (parent < 0) {
			rc = SQLITE_DONE;
			break;
		}
		sqlite3_reset(up);
		sqlite3_bind_int64(up, 1, parent);
		s = up;
	}
	rc = rc == SQLITE_DONE ? 0 : q_dbfail(q, "cannot read calls");
out:
	sqlite3_finalize(st);
	sqlite3_finalize(up);
	if (rc < 0) {
		free(fr);
		fr = NULL;
		n = 0;
	}
	*frp = fr;
	*np = n;
	return (rc);
}

/*
 * A reader of one thread's execution order (Q_WALK_BLOCKS, from block
 * @next on): the gaps between the calls a depth cuts out are often a few
 * blocks apart, and each search of exec_order decodes a whole chunk, so a
 * gap close after the last one is reached by reading on, a far one by a
 * search.
 */
struct q_xr {
	sqlite3_stmt	*st;
	int64_t		thread, next, hi;
	int		open;
};

/* Read on rather than search when the gap is at most this many blocks. */
#define Q_XR_NEAR	8192

/* Count the blocks @lo to @hi of @xr's thread into @cnt. */
static int
q_cnt_range(struct hwtr_q *q, struct q_xr *xr, int64_t lo, int64_t hi,
    int64_t *cnt, int64_t nblk)
{
	int64_t b, seq;
	int rc;

	if (lo > hi)
		return (0);
	if (!xr->open || lo < xr->next || lo - xr->next > Q_XR_NEAR) {
		sqlite3_reset(xr->st);
		sqlite3_bind_int64(xr->st, 1, xr->thread);
		sqlite3_bind_int64(xr->st, 2, lo);
		sqlite3_bind_int64(xr->st, 3, xr->hi);
		xr->open = 1;
		xr->next = lo;
	}
	while ((rc = sqlite3_step(xr->st)) == SQLITE_ROW) {
		seq = sqlite3_column_int64(xr->st, 0);
		b = sqlite3_column_int64(xr->st, 1);
		xr->next = seq + 1;
		if (seq >= lo && b >= 0 && b < nblk)
			cnt[b]++;
		if (seq >= hi)
			return (0);
	}
	xr->open = 0;
	return (rc == SQLITE_DONE ? 0 : q_dbfail(q, "cannot read the "
	    "execution order"));
}

/* The blocks @lo to @hi of @thread run at most @depth deep, into @cnt. */
static int
q_cnt_thread(struct hwtr_q *q, sqlite3_stmt *ex, int64_t thread,
    int64_t depth, int64_t lo, int64_t hi, int64_t *cnt, int64_t nblk)
{
	struct q_xr xr = { ex, thread, 0, hi, 0 };
	struct q_span *fr;
	struct q_walk w;
	int64_t pos = lo, es, xs;
	size_t n, i;
	int rc;

	/* No depth: the blocks of the range, all (coverage --from, --to). */
	if (depth < 0)
		return (q_cnt_range(q, &xr, lo, hi, cnt, nblk));
	/* Started inside a call deeper than @depth: from where it returns. */
	if ((rc = q_walk_stack(q, thread, lo, depth + 1, &fr, &n)) < 0)
		return (rc);
	for (i = 0; i < n; i++)
		if (fr[i].depth == depth + 1) {
			pos = fr[i].exit_seq;
			break;
		}
	free(fr);
	if ((rc = q_walk_open(q, &w, NULL, thread, depth + 1, pos, hi)) < 0)
		return (rc);
	while ((rc = q_walk_step(&w)) == 1) {
		if (sqlite3_column_int64(w.st, 1) != depth + 1)
			continue;
		es = sqlite3_column_int64(w.st, 2);
		xs = sqlite3_column_int64(w.st, 3);
		if ((rc = q_cnt_range(q, &xr, pos, es - 1, cnt, nblk)) < 0)
			break;
		if (xs > pos)
			pos = xs;
	}
	q_walk_close(&w);
	if (rc < 0)
		return (rc);
	return (q_cnt_range(q, &xr, pos, hi, cnt, nblk));
}

int
q_depth_counts(struct hwtr_q *q, const struct q_rng *r, int64_t thread,
    int64_t depth)
{
	sqlite3_stmt *th = NULL, *ex = NULL, *ins = NULL;
	int64_t *cnt = NULL, nblk, t, b, key, last;
	int rc;

	if ((rc = q_blocks_span(q, NULL, &nblk)) < 0)
		return (rc);
	if ((cnt = calloc((size_t)nblk + 1, sizeof(*cnt))) == NULL)
		return (q_fail(q, -HWTR_E_NOMEM, "out of memory"));
	/*
	 * The connection is query_only (q_core.c) on a database opened
	 * read-only: lifted for the temporary table alone, set again below.
	 */
	if (sqlite3_exec(q->db, "PRAGMA query_only = 0; "
	    "CREATE TEMP TABLE IF NOT EXISTS q_cnt("
	    "thread INTEGER NOT NULL, block INTEGER NOT NULL, count INTEGER "
	    "NOT NULL, PRIMARY KEY (thread, block)) WITHOUT ROWID; DELETE "
	    "FROM temp.q_cnt", NULL, NULL, NULL) != SQLITE_OK) {
		rc = q_dbfail(q, "cannot make a temporary table");
		goto out;
	}
	if ((rc = q_prepare(q, &ex, Q_WALK_BLOCKS)) < 0 ||
	    (rc = q_prepare(q, &ins, "INSERT INTO temp.q_cnt VALUES (?1, ?2, "
	    "?3)")) < 0 ||
	    (rc = q_prepare(q, &th, "SELECT id, blocks FROM threads WHERE "
	    "?1 < 0 OR id = ?1 ORDER BY id")) < 0)
		goto out;
	/* The counts of the threads asked for, summed, kept under that key. */
	key = r->on ? r->thread : thread;
	sqlite3_bind_int64(th, 1, key);
	while ((rc = sqlite3_step(th)) == SQLITE_ROW) {
		t = sqlite3_column_int64(th, 0);
		/* The thread's last block (a damaged count: no wrap). */
		last = sqlite3_column_int64(th, 1);
		last = last > INT64_MIN ? last - 1 : INT64_MIN;
		rc = r->on ? q_cnt_thread(q, ex, t, depth, r->seq_lo,
		    r->seq_hi, cnt, nblk) : q_cnt_thread(q, ex, t, depth, 0,
		    last, cnt, nblk);
		if (rc < 0)
			goto out;
	}
	if (rc != SQLITE_DONE) {
		rc = q_dbfail(q, "cannot read threads");
		goto out;
	}
	for (b = 0; b < nblk; b++) {
		if (cnt[b] == 0)
			continue;
		sqlite3_reset(ins);
		sqlite3_bind_int64(ins, 1, key);
		sqlite3_bind_int64(ins, 2, b);
		sqlite3_bind_int64(ins, 3, cnt[b]);
		if (sqlite3_step(ins) != SQLITE_DONE) {
			rc = q_dbfail(q, "cannot fill a temporary table");
			goto out;
		}
	}
	rc = 0;
out:
	sqlite3_finalize(th);
	sqlite3_finalize(ex);
	sqlite3_finalize(ins);
	free(cnt);
	if (sqlite3_exec(q->db, "PRAGMA query_only = 1", NULL, NULL, NULL) !=
	    SQLITE_OK && rc == 0)
		rc = q_dbfail(q, "cannot set query_only");
	return (rc);
}

int
q_range_depth(struct hwtr_q *q, const struct hwtr_q_req *req,
    const char *what, struct q_rng *r, int always)
{
	int rc;

	if ((rc = q_range(q, req, what, r)) < 0)
		return (rc);
	return (q_range_count(q, req, what, r, always));
}

int
q_range_count(struct hwtr_q *q, const struct hwtr_q_req *req,
    const char *what, struct q_rng *r, int always)
{
	int rc;

	if (req->depth < 0 && !(always && r->on))
		return (0);
	if (req->by != NULL && strcmp(req->by, "edge") == 0)
		return (q_fail(q, -HWTR_E_INVAL, "%s --by edge: branches are "
		    "counted per thread, not by depth; --depth applies to "
		    "--by function, line, image and block", what));
	if (!r->on) {
		r->thread = req->thread;
		r->seq_lo = 0;
		r->seq_hi = INT64_MAX;
	}
	if ((rc = q_depth_counts(q, r, req->thread, req->depth)) < 0)
		return (rc);
	r->on = 1;
	r->cnt = 1;
	return (0);
}

/*
 * The call at the head of a chain of tail calls: call @id, entered at
 * block @seq at depth @depth with entry_kind "tail", replaced the call
 * before it at that depth, which may itself be a tail call, and so on
 * back to a call of another kind (a call, or at the roots a start or a
 * return).  The call a tail call replaced is the last one entered before
 * it at its depth: between the two only that call's own callees (deeper)
 * were entered.  So the calls of the thread are read backwards from
 * @seq, those callees included, through calls_thread; every call of a
 * chain ran at least one block, so entry_seq goes down strictly.  Sets
 * *@headp to the head's id (@id when @kind is not "tail"), -1 when the
 * chain leaves the table (a window that starts inside it).
 */
int
q_tail_head(struct hwtr_q *q, int64_t thread, int64_t id, int64_t seq,
    int64_t depth, const char *kind, int64_t *headp)
{
	sqlite3_stmt *st = NULL;
	int64_t d;
	int rc;

	*headp = id;
	if (kind == NULL || strcmp(kind, "tail") != 0)
		return (0);
	if ((rc = q_prepare(q, &st, "SELECT id, depth, entry_seq, "
	    "entry_kind = 'tail' FROM calls WHERE thread = ?1 AND "
	    "entry_seq < ?2 ORDER BY entry_seq DESC, id DESC")) < 0)
		return (rc);
	*headp = -1;
	sqlite3_bind_int64(st, 1, thread);
	sqlite3_bind_int64(st, 2, seq);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if ((d = sqlite3_column_int64(st, 1)) > depth)
			continue;
		if (d < depth)
			break;
		*headp = sqlite3_column_int64(st, 0);
		if (!sqlite3_column_int(st, 3))
			break;
		/* A tail call too: the one before it. */
		*headp = -1;
		seq = sqlite3_column_int64(st, 2);
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 2, seq);
	}
	rc = rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 :
	    q_dbfail(q, "cannot read calls");
	sqlite3_finalize(st);
	return (rc);
}

/* The entry_seq, entry_insn and entry_kind of call @id. */
static int
q_call_entry(struct hwtr_q *q, int64_t id, int64_t *seqp, int64_t *insnp,
    char *kind, size_t kindlen)
{
	sqlite3_stmt *st = NULL;
	const char *k;
	int rc;

	*seqp = *insnp = 0;
	kind[0] = '\0';
	if ((rc = q_prepare(q, &st, "SELECT entry_seq, entry_insn, "
	    "entry_kind FROM calls WHERE id = ?1")) < 0)
		return (rc);
	sqlite3_bind_int64(st, 1, id);
	if (sqlite3_step(st) != SQLITE_ROW)
		rc = q_dbfail(q, "cannot read calls");
	else {
		*seqp = sqlite3_column_int64(st, 0);
		*insnp = sqlite3_column_int64(st, 1);
		k = (const char *)sqlite3_column_text(st, 2);
		snprintf(kind, kindlen, "%s", k != NULL ? k : "");
	}
	sqlite3_finalize(st);
	return (rc);
}

int
q_tail_site(struct hwtr_q *q, int64_t thread, int64_t seq, int64_t depth,
    int64_t *seqp, int64_t *insnp)
{
	int64_t head, insn;
	char kind[16];
	int rc;

	if ((rc = q_tail_head(q, thread, -1, seq, depth, "tail", &head)) < 0)
		return (rc);
	if (head < 0 || (rc = q_call_entry(q, head, &seq, &insn, kind,
	    sizeof(kind))) < 0)
		return (rc);
	*seqp = seq;
	*insnp = insn - 1;
	return (0);
}

/*
 * A root's callers are missing from the trace when the root (or the head
 * of its chain of tail calls) was entered by a return out of the traced
 * frames, or started where the thread's trace begins without tracing
 * being enabled there: a ring kept only the end of the trace.  A thread
 * traced from its first instruction has an "enabled" event at the block
 * its first root starts at.
 */
int
q_root_untraced(struct hwtr_q *q, int64_t thread, int64_t id, int *untracedp)
{
	int64_t head, seq, insn, n;
	char kind[16];
	int rc;

	*untracedp = 0;
	if ((rc = q_call_entry(q, id, &seq, &insn, kind, sizeof(kind))) < 0 ||
	    (rc = q_tail_head(q, thread, id, seq, 0, kind, &head)) < 0)
		return (rc);
	if (head < 0) {
		*untracedp = 1;
		return (0);
	}
	if (head != id && (rc = q_call_entry(q, head, &seq, &insn, kind,
	    sizeof(kind))) < 0)
		return (rc);
	if (strcmp(kind, "return") == 0) {
		*untracedp = 1;
		return (0);
	}
	if (strcmp(kind, "start") != 0)
		return (0);
	if ((rc = q_int(q, &n, 0, "SELECT count(*) FROM events WHERE "
	    "thread = ?1 AND seq = ?2 AND kind IN ('enabled', 'resumed')",
	    "ii", thread, seq)) < 0)
		return (rc);
	*untracedp = n == 0;
	return (0);
}
