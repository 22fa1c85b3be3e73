/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * What the trace lost, for the answers that depend on it (hwtrace-query(1),
 * "Lost data").  A trace loses data where a ring overwrote its start, where
 * the tracer overflowed, where a chunk is missing or unreadable, where the
 * decoder met bytes it could not follow, and at its end when the archive
 * is truncated.  The indexer records each as an event (lost, overflow,
 * decode-error) or in meta (archive_complete); here they are found for the
 * range a verb answers over, before the verb runs, so that a streamed
 * answer can carry the mark from its first row: the table gets a footer,
 * each JSON row a member, and the caller the note (hwtr_q_lost()).
 *
 * A gap is placed at the block it comes before (its seq): 0 when the trace
 * lost its start, the thread's length when it lost its end.  A LOST record
 * of the sideband has no position; it is placed by its reason (a ring's
 * overwritten bytes come before what it kept; a trace stopped when full
 * lost its end), else by its time, else it is taken to be anywhere.
 */

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "q_int.h"

/* Places named in a note; the others are counted. */
#define Q_LOST_NAMED	4
/* Gaps kept for export --folded; the others are counted in the note. */
#define Q_LOST_KEEP	4096

/* Which verbs' answers depend on the whole trace (or their range of it). */
static int
q_lost_verb(enum hwtr_q_verb verb)
{
	switch (verb) {
	case HWTR_Q_SUMMARY:
	case HWTR_Q_LAST:
	case HWTR_Q_CALLS:
	case HWTR_Q_TREE:
	case HWTR_Q_FUNC:
	case HWTR_Q_COVERAGE:
	case HWTR_Q_HOT:
	case HWTR_Q_BRANCHES:
	case HWTR_Q_EXPORT:
	case HWTR_Q_BT:
	case HWTR_Q_ANNOTATE:
		return (1);
	default:
		return (0);
	}
}

/* Whether the verb answers over a range of one thread (--from, --to). */
static int
q_lost_ranged(const struct hwtr_q_req *req)
{
	switch (req->verb) {
	case HWTR_Q_CALLS:
	case HWTR_Q_TREE:
	case HWTR_Q_COVERAGE:
	case HWTR_Q_HOT:
	case HWTR_Q_EXPORT:
	case HWTR_Q_ANNOTATE:
		return (req->from >= 0 || req->to >= 0 || req->t_from >= 0 ||
		    req->t_to >= 0);
	default:
		return (0);
	}
}

/*
 * The seq a sideband LOST event of @thread (@nblocks long) comes before:
 * by the reason in its @detail (ix_image.c writes it), else by its time
 * @tsc among the thread's timestamps; -1 when nothing places it.
 */
static int
q_lost_place(struct hwtr_q *q, int64_t thread, int64_t nblocks,
    const char *detail, int has_tsc, int64_t tsc, int64_t *seqp)
{
	int64_t first, last, s;
	int rc;

	*seqp = -1;
	if (detail != NULL && strstr(detail, "ring overwritten") != NULL) {
		*seqp = 0;
		return (0);
	}
	if (detail != NULL && strstr(detail, "stopped when full") != NULL) {
		*seqp = nblocks;
		return (0);
	}
	if (!has_tsc)
		return (0);
	if ((rc = q_int(q, &first, -1, "SELECT first_tsc FROM threads WHERE "
	    "id = ?1", "i", thread)) < 0 ||
	    (rc = q_int(q, &last, -1, "SELECT last_tsc FROM threads WHERE "
	    "id = ?1", "i", thread)) < 0)
		return (rc);
	if (first < 0 || last < 0)
		return (0);
	if (tsc <= first) {
		*seqp = 0;
		return (0);
	}
	if (tsc > last) {
		*seqp = nblocks;
		return (0);
	}
	if ((rc = q_int(q, &s, -1, "SELECT seq FROM timestamps WHERE thread "
	    "= ?1 AND tsc >= ?2 ORDER BY seq LIMIT 1", "ii", thread,
	    tsc)) < 0)
		return (rc);
	*seqp = s >= 0 ? s : nblocks;
	return (0);
}

/* The bounds a gap must lie in for @req to depend on it. */
struct q_lost_rng {
	int64_t		thread;		/* -1: every thread */
	int		on;		/* a range of one thread */
	int64_t		lo, hi;		/* seqs a gap may come before */
	int64_t		n;		/* last -n */
};

/*
 * Whether a gap before block @seq of @thread (@nblocks long; @seq -1:
 * anywhere) falls in what @req answers over.  A range's calls, blocks and
 * counts lie in blocks lo..hi: a gap between two of them, or before the
 * first when the range starts with the thread, or after the last when it
 * ends with it, is in it.  last shows the final blocks: a gap among them
 * or after them is.
 */
static int
q_lost_in(const struct hwtr_q_req *req, const struct q_lost_rng *lr,
    int64_t thread, int64_t nblocks, int64_t seq)
{
	int64_t lo, hi;

	if (lr->thread >= 0 && thread != lr->thread)
		return (0);
	if (seq < 0)
		return (1);
	if (req->verb == HWTR_Q_LAST) {
		lo = nblocks > lr->n ? nblocks - lr->n : 0;
		return (seq > lo || (lo == 0 && seq == 0));
	}
	if (!lr->on)
		return (1);
	lo = lr->lo;
	hi = lr->hi;
	if (hi < lo)
		return (0);
	if (seq > lo && seq <= hi)
		return (1);
	if (seq <= lo && lo == 0)
		return (1);
	return (seq > hi && hi >= nblocks - 1);
}

static int
q_lost_add(struct hwtr_q *q, int64_t thread, int64_t seq, int64_t insn,
    const char *what)
{
	struct q_lost *l = &q->lost;
	struct q_gap *g;

	l->n++;
	if (l->ngaps >= Q_LOST_KEEP)
		return (0);
	if (l->ngaps == l->cap) {
		size_t ncap = l->cap ? l->cap * 2 : 16;

		if ((g = realloc(l->gaps, ncap * sizeof(*g))) == NULL)
			return (q_fail(q, -HWTR_E_NOMEM, "out of memory"));
		l->gaps = g;
		l->cap = ncap;
	}
	g = &l->gaps[l->ngaps++];
	memset(g, 0, sizeof(*g));
	g->thread = thread;
	g->seq = seq;
	g->insn = insn;
	snprintf(g->what, sizeof(g->what), "%s", what);
	return (0);
}

/*
 * The events that lost data, of the threads @lr names; a sideband one of
 * a stream (no thread) is its stream's thread's.
 */
#define Q_LOST_EVENTS							\
	"WITH ev AS (SELECT coalesce(e.thread, (SELECT min(t2.id) FROM "	\
	"threads t2 WHERE t2.stream = e.stream)) AS thread, e.seq, e.insn, "	\
	"e.kind, e.detail, e.tsc, e.id FROM events e WHERE e.kind IN "	\
	"('lost', 'overflow', 'decode-error')) SELECT ev.thread, ev.seq, "	\
	"ev.insn, ev.kind, ev.detail, ev.tsc, coalesce(t.blocks, 0) FROM ev "	\
	"LEFT JOIN threads t ON t.id = ev.thread WHERE ?1 < 0 OR "		\
	"ev.thread = ?1 OR ev.thread IS NULL ORDER BY ev.thread, ev.seq, "	\
	"ev.id"

static int
q_lost_events(struct hwtr_q *q, const struct hwtr_q_req *req,
    const struct q_lost_rng *lr)
{
	sqlite3_stmt *st = NULL;
	int64_t thread, seq, insn, nblocks;
	const char *kind, *detail;
	char what[Q_GAP_WHAT];
	int rc;

	if ((rc = q_prepare(q, &st, Q_LOST_EVENTS)) < 0)
		return (rc);
	sqlite3_bind_int64(st, 1, lr->thread);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		thread = sqlite3_column_type(st, 0) == SQLITE_NULL ? -1 :
		    sqlite3_column_int64(st, 0);
		kind = (const char *)sqlite3_column_text(st, 3);
		detail = (const char *)sqlite3_column_text(st, 4);
		nblocks = sqlite3_column_int64(st, 6);
		insn = sqlite3_column_type(st, 2) == SQLITE_NULL ? -1 :
		    sqlite3_column_int64(st, 2);
		if (sqlite3_column_type(st, 1) != SQLITE_NULL)
			seq = sqlite3_column_int64(st, 1);
		else if (thread < 0)
			seq = -1;
		else if ((rc = q_lost_place(q, thread, nblocks, detail,
		    sqlite3_column_type(st, 5) != SQLITE_NULL,
		    sqlite3_column_int64(st, 5), &seq)) < 0)
			goto out;
		/* A capture-wide loss: whole answers only. */
		if (thread < 0 && lr->on)
			continue;
		if (thread >= 0 && !q_lost_in(req, lr, thread, nblocks, seq))
			continue;
		/* "lost 20596 bytes, ...", "decode error: ...", "overflow". */
		snprintf(what, sizeof(what), "%s%s%s", strcmp(kind,
		    "decode-error") == 0 ? "decode error" : kind,
		    detail == NULL ? "" : strcmp(kind, "lost") == 0 ? " " :
		    ": ", detail != NULL ? detail : "");
		if ((rc = q_lost_add(q, thread, seq, insn, what)) < 0)
			goto out;
	}
	rc = rc == SQLITE_DONE ? 0 : q_dbfail(q, "cannot read events");
out:
	sqlite3_finalize(st);
	return (rc);
}

/*
 * A truncated archive lost the end of the capture: every thread's trace
 * may stop short of where it ran to.  One place for each thread asked.
 */
static int
q_lost_truncated(struct hwtr_q *q, const struct hwtr_q_req *req,
    const struct q_lost_rng *lr)
{
	sqlite3_stmt *st = NULL;
	int64_t complete, thread, nblocks;
	int rc;

	if ((rc = q_int(q, &complete, 1, "SELECT CAST(value AS INTEGER) "
	    "FROM meta WHERE key = 'archive_complete'", NULL)) < 0)
		return (rc);
	if (complete != 0)
		return (0);
	if ((rc = q_prepare(q, &st, "SELECT id, blocks FROM threads WHERE "
	    "(?1 < 0 OR id = ?1) AND blocks > 0 ORDER BY id")) < 0)
		return (rc);
	sqlite3_bind_int64(st, 1, lr->thread);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		thread = sqlite3_column_int64(st, 0);
		nblocks = sqlite3_column_int64(st, 1);
		if (!q_lost_in(req, lr, thread, nblocks, nblocks))
			continue;
		if ((rc = q_lost_add(q, thread, nblocks, -1, "the archive is "
		    "truncated: the end of the trace is missing")) < 0)
			goto out;
	}
	rc = rc == SQLITE_DONE ? 0 : q_dbfail(q, "cannot read threads");
out:
	sqlite3_finalize(st);
	return (rc);
}

/* Where gap @g lies, for people. */
static void
q_lost_where(struct q_str *s, const struct q_gap *g, int64_t nblocks)
{
	if (g->thread < 0) {
		q_str_puts(s, "capture-wide");
		return;
	}
	q_str_printf(s, "thread %lld ", (long long)g->thread);
	if (g->seq < 0)
		q_str_puts(s, "at an unknown place");
	else if (g->seq == 0)
		q_str_puts(s, "before its first block");
	else if (g->seq >= nblocks)
		q_str_puts(s, "after its last block");
	else if (g->insn >= 0)
		q_str_printf(s, "before instruction %lld",
		    (long long)g->insn);
	else
		q_str_printf(s, "before block %lld", (long long)g->seq);
}

/* The note: what the answer is, then the first places. */
static int
q_lost_text(struct hwtr_q *q, const char *lead)
{
	struct q_lost *l = &q->lost;
	struct q_str s = { 0 };
	int64_t nblocks;
	size_t i;
	int rc;

	q_str_printf(&s, "%s: the trace lost data in %lld place%s (", lead,
	    (long long)l->n, l->n == 1 ? "" : "s");
	for (i = 0; i < l->ngaps && i < Q_LOST_NAMED; i++) {
		if ((rc = q_int(q, &nblocks, 0, "SELECT blocks FROM threads "
		    "WHERE id = ?1", "i", l->gaps[i].thread)) < 0) {
			free(s.p);
			return (rc);
		}
		if (i > 0)
			q_str_puts(&s, "; ");
		q_lost_where(&s, &l->gaps[i], nblocks);
		q_str_printf(&s, ": %s", l->gaps[i].what);
	}
	if (l->n > Q_LOST_NAMED)
		q_str_printf(&s, "; and %lld more", (long long)(l->n -
		    Q_LOST_NAMED));
	q_str_puts(&s, ")");
	if (s.err) {
		free(s.p);
		return (q_fail(q, -HWTR_E_NOMEM, "out of memory"));
	}
	free(l->note);
	l->note = s.p;
	return (0);
}

int
q_lost_find(struct hwtr_q *q, const struct hwtr_q_req *req)
{
	struct q_lost_rng lr;
	struct q_rng r;
	int rc;

	q_lost_clear(&q->lost);
	if (!q_lost_verb(req->verb))
		return (0);
	memset(&lr, 0, sizeof(lr));
	lr.thread = req->thread;
	lr.n = req->n >= 0 ? req->n : 10;
	if (q_lost_ranged(req)) {
		/* Errors in the range are the verb's to say. */
		if (q_range(q, req, q_verb_name(req->verb), &r) < 0) {
			q->msg[0] = '\0';
			return (0);
		}
		lr.on = r.on;
		lr.thread = r.thread;
		lr.lo = r.seq_lo;
		lr.hi = r.seq_hi;
	}
	if ((rc = q_lost_events(q, req, &lr)) < 0 ||
	    (rc = q_lost_truncated(q, req, &lr)) < 0)
		return (rc);
	if (q->lost.n == 0)
		return (0);
	q->lost.lower = req->verb != HWTR_Q_LAST && req->verb != HWTR_Q_BT;
	return (q_lost_text(q, req->verb == HWTR_Q_LAST ? "these "
	    "blocks may not follow each other or be the last" :
	    req->verb == HWTR_Q_BT ? "the stack may be wrong" :
	    "counts are lower bounds"));
}

/*
 * bt: the frames whose call was entered before a gap that comes before
 * the stack's position (the trace does not show what ran between): the
 * stack above the gap is the one the calls table held on, which the lost
 * part may have changed.  Named in the note; @res holds bt's rows
 * (thread, frame, function, address, line, call, insn, inlined).
 */
/* " frame 3" or " frames 0, 1, 2": the @n frames listed in @fr. */
static void
q_lost_frames(struct q_str *s, const struct q_str *fr, size_t n)
{
	if (n == 0)
		return;
	q_str_puts(s, n == 1 ? " frame" : " frames");
	q_str_add(s, fr->p, fr->len);
}

int
q_lost_bt(struct hwtr_q *q, struct hwtr_q_res *res)
{
	struct q_lost *l = &q->lost;
	struct q_str s = { 0 }, fr = { 0 };
	sqlite3_stmt *st = NULL;
	size_t r, i, nr = hwtr_q_res_nrows(res), nfr = 0;
	const char *tc, *cc, *fc;
	int64_t thread, call, entry, last = -1;
	int rc = 0, hit;

	if (l->n == 0 || nr == 0)
		return (0);
	assert(res->ncols >= 6);
	if ((rc = q_prepare(q, &st, "SELECT entry_seq FROM calls WHERE id = "
	    "?1")) < 0)
		return (rc);
	free(l->before);
	l->nbefore = 0;
	if ((l->before = calloc(nr, 1)) == NULL) {
		sqlite3_finalize(st);
		return (q_fail(q, -HWTR_E_NOMEM, "out of memory"));
	}
	l->nbefore = nr;
	q_str_puts(&s, "the stack may be wrong:");
	for (r = 0; r < nr; r++) {
		tc = hwtr_q_res_cell(res, r, 0, NULL);
		fc = hwtr_q_res_cell(res, r, 1, NULL);
		cc = hwtr_q_res_cell(res, r, 5, NULL);
		if (tc == NULL || fc == NULL || cc == NULL)
			continue;
		thread = strtoll(tc, NULL, 10);
		call = strtoll(cc, NULL, 10);
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, call);
		if (sqlite3_step(st) != SQLITE_ROW)
			continue;
		entry = sqlite3_column_int64(st, 0);
		/* A gap of its thread after the frame was entered. */
		for (hit = 0, i = 0; i < l->ngaps && !hit; i++)
			hit = l->gaps[i].thread == thread &&
			    l->gaps[i].seq > entry;
		if (!hit)
			continue;
		if (thread != last) {
			q_lost_frames(&s, &fr, nfr);
			q_str_printf(&s, "%s thread %s", last >= 0 ? ";" :
			    "", tc);
			fr.len = 0;
			nfr = 0;
		}
		q_str_printf(&fr, "%s %s", nfr > 0 ? "," : "", fc);
		nfr++;
		l->before[r] = 1;
		last = thread;
	}
	q_lost_frames(&s, &fr, nfr);
	free(fr.p);
	sqlite3_finalize(st);
	if (last < 0) {
		/* No frame is older than a gap: the stack is whole. */
		free(s.p);
		q_lost_clear(l);
		return (0);
	}
	q_str_puts(&s, " entered before the trace lost data");
	if (s.err) {
		free(s.p);
		return (q_fail(q, -HWTR_E_NOMEM, "out of memory"));
	}
	rc = q_lost_text(q, s.p);
	free(s.p);
	return (rc);
}

/*
 * export --folded: a frame "[gap]" under the stack open where the trace
 * lost data, weighing 1, so that a flame graph shows (and its search
 * finds) where the picture is incomplete; a loss before a thread's first
 * block or of unknown place is a root frame.  @multi: the stacks start
 * with "thread N;".  *@np counts the lines added.
 */
int
q_lost_folded(struct hwtr_q *q, struct q_str *o, int multi, int64_t *np)
{
	struct q_lost *l = &q->lost;
	sqlite3_stmt *st = NULL;
	struct q_span *fr = NULL;
	size_t i, k, n = 0;
	const char *name;
	int rc = 0;

	*np = 0;
	if (l->ngaps == 0)
		return (0);
	if ((rc = q_prepare(q, &st, "SELECT s.name FROM calls c LEFT JOIN "
	    "symbols s ON s.id = c.symbol WHERE c.id = ?1")) < 0)
		return (rc);
	for (i = 0; i < l->ngaps; i++) {
		const struct q_gap *g = &l->gaps[i];

		/* Two losses at one place are one frame. */
		if (i > 0 && g->thread == g[-1].thread && g->seq == g[-1].seq &&
		    g->seq >= 0)
			continue;
		if (multi && g->thread >= 0)
			q_str_printf(o, "thread %lld;", (long long)g->thread);
		free(fr);
		fr = NULL;
		n = 0;
		if (g->thread >= 0 && g->seq > 0 && (rc = q_walk_stack(q,
		    g->thread, g->seq - 1, INT64_MAX, &fr, &n)) < 0)
			break;
		/* Innermost first: the path is written outermost first. */
		for (k = n; k > 0; k--) {
			sqlite3_reset(st);
			sqlite3_bind_int64(st, 1, fr[k - 1].id);
			name = sqlite3_step(st) == SQLITE_ROW ?
			    (const char *)sqlite3_column_text(st, 0) : NULL;
			if (name == NULL)
				name = "[unknown]";
			/* As q_prof.c writes a frame: no ';' nor line end. */
			for (; *name != '\0'; name++)
				q_str_add(o, *name == ';' || *name == '\n' ||
				    *name == '\r' ? "_" : name, 1);
			q_str_add(o, ";", 1);
		}
		q_str_puts(o, "[gap] 1\n");
		(*np)++;
	}
	free(fr);
	sqlite3_finalize(st);
	if (rc == 0 && o->err)
		rc = q_fail(q, -HWTR_E_NOMEM, "out of memory");
	return (rc);
}

const char *
hwtr_q_lost(const struct hwtr_q *q)
{
	return (q->lost.note);
}

const char *
hwtr_q_res_lost(const struct hwtr_q_res *res)
{
	return (res->lost.note);
}
