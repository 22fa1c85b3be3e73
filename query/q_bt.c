/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * hwtrace query bt (q_verbs.c dispatches the verbs): a thread's call
 * stack at its end or at an instruction, from the calls table and the
 * event that stopped its trace; its inlined frames come from q_inline.c.
 */

#include <stdlib.h>
#include <string.h>

#include "q_int.h"

/*
 * bt: the call stack of a thread at its end (where it crashed) or at
 * instruction @at, innermost frame first, as gdb's bt prints it after a
 * crash.  Each frame is named by the function containing its location,
 * as a debugger does, not by the function its call entered: a call
 * through a PLT stub or a tail call is still named by where it is.  Frame
 * 0's location is the instruction that did not complete (the fault) or
 * the one at @at; an outer frame's is the call instruction of the frame
 * inside it.  The frames are the calls containing the position, found
 * from the last call entered at or before it (calls_thread) and its
 * parents (a primary key lookup each): any call containing the position
 * was entered before it and still holds it, so it is an ancestor of that
 * last one.  A call instruction whose callee faulted at its first
 * instruction has no calls row; its frame is added from the last block.
 */
static const char *const q_bt_cols[] = { "thread", "frame", "function",
    "address", "line", "call", "insn", "inlined" };

/* The function name and the line of address ?3 in the block at seq ?2. */
#define Q_BT_SITE_SQL							\
	"SELECT s.name, " Q_ADDR_LINE("?3 - b.start_ip") ", b.last_class, "	\
	"b.start_ip <= ?3 AND ?3 <= b.last_ip FROM exec_order e JOIN "	\
	"blocks b ON b.id = e.block LEFT JOIN symbols s ON s.id = b.symbol "	\
	"WHERE e.thread = ?1 AND e.seq = ?2"

/* bt's last row for a thread decoded only at its end. */
#define Q_BT_NOT_DECODED	"(frames above not decoded)"
/* ... and for a stack whose outer frames the trace does not hold. */
#define Q_BT_NOT_TRACED		"(frames above not in the trace)"

struct q_bt {
	sqlite3_stmt	*site, *call, *last, *stop, *at, *fname, *chain;
	int64_t		frame;
	int		inl;		/* the database has inlines */
};

static const char *
q_coltext(sqlite3_stmt *st, int c)
{
	return ((const char *)sqlite3_column_text(st, c));
}

/* A symbol's name by id (NULL: none); valid until @st is stepped again. */
static const char *
q_bt_symname(struct q_bt *bt, int64_t sym, int has)
{
	if (!has)
		return (NULL);
	sqlite3_reset(bt->fname);
	sqlite3_bind_int64(bt->fname, 1, sym);
	if (sqlite3_step(bt->fname) != SQLITE_ROW)
		return (NULL);
	return (q_coltext(bt->fname, 0));
}

/*
 * Where bt's next frame is: its function and line (allocated), its
 * address and instruction; the block (seq) that holds the position; and
 * the call site of the frame inside it, where the next frame called it.
 */
struct q_bt_loc {
	char		*func, *line;
	uint64_t	addr;
	int		has_addr;
	int64_t		pos, insn;
	uint64_t	child_ip;
	int64_t		child_seq;
};

/* bt --at @at: frame 0 is the instruction @at of @thread. */
static int
q_bt_at(struct hwtr_q *q, struct q_bt *bt, int64_t thread, int64_t ninsns,
    int64_t at, struct q_bt_loc *l)
{
	if (at >= ninsns)
		return (q_fail(q, -HWTR_E_INVAL, "bt: --at %lld: thread "
		    "%lld ran %lld instructions (0 to %lld)",
		    (long long)at, (long long)thread,
		    (long long)ninsns, (long long)ninsns - 1));
	sqlite3_reset(bt->at);
	sqlite3_bind_int64(bt->at, 1, thread);
	sqlite3_bind_int64(bt->at, 2, at);
	if (sqlite3_step(bt->at) != SQLITE_ROW)
		return (q_dbfail(q, "bt: cannot read instruction"));
	l->pos = sqlite3_column_int64(bt->at, 0);
	l->addr = (uint64_t)sqlite3_column_int64(bt->at, 1);
	l->has_addr = 1;
	l->func = q_coltext(bt->at, 2) ? strdup(q_coltext(bt->at, 2)) : NULL;
	l->line = q_coltext(bt->at, 3) ? strdup(q_coltext(bt->at, 3)) : NULL;
	l->insn = at;
	return (0);
}

/*
 * A signal handler that returned to a callee's first instruction: the
 * last block is the sigreturn after a handler (a call entered as
 * "signal", whose exit is that block) that interrupted the callee before
 * its first instruction completed, right after the call instruction.
 * The fault comes again there (Rust's and crash reporters' handlers
 * return to it), so frame 0 is that callee, of its own, called from the
 * block before the handler: 1 with l->child_seq, l->child_ip and
 * *@call_insn (the call instruction's number) set, 0 when the end is
 * something else.
 */
static int
q_bt_resumed_callee(struct hwtr_q *q, int64_t thread, struct q_bt_loc *l,
    int64_t *call_insn)
{
	sqlite3_stmt *st = NULL;
	int64_t id, head, entry_seq = 0, exit_seq = 0, entry_insn = 0;
	int64_t depth, last_ip = 0, is_call = 0;
	const char *kind;
	int rc, n, sig = 0;

	if (l->pos < 2)
		return (0);
	if ((rc = q_int(q, &id, -1, Q_CALL_LAST_UPTO, "ii", thread,
	    l->pos - 1)) < 0)
		return (rc);
	if ((rc = q_prepare(q, &st, "SELECT parent, entry_kind, entry_seq, "
	    "exit_seq, entry_insn, depth FROM calls WHERE id = ?1")) < 0)
		return (rc);
	/*
	 * Up from the last call entered, to the handler's frame: entered as
	 * "signal", or the head of the chain of tail calls that replaced it
	 * (a handler that ends in a jump to signal(2)).
	 */
	for (n = 0; id >= 0 && n < 64 && rc >= 0 && !sig; n++) {
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, id);
		if (sqlite3_step(st) != SQLITE_ROW)
			break;
		kind = (const char *)sqlite3_column_text(st, 1);
		entry_seq = sqlite3_column_int64(st, 2);
		exit_seq = sqlite3_column_int64(st, 3);
		entry_insn = sqlite3_column_int64(st, 4);
		depth = sqlite3_column_int64(st, 5);
		sig = kind != NULL && strcmp(kind, "signal") == 0;
		if (!sig && kind != NULL && strcmp(kind, "tail") == 0 &&
		    (rc = q_tail_head(q, thread, id, entry_seq, depth, kind,
		    &head)) >= 0 && head >= 0) {
			sqlite3_reset(st);
			sqlite3_bind_int64(st, 1, head);
			if (sqlite3_step(st) != SQLITE_ROW)
				break;
			kind = (const char *)sqlite3_column_text(st, 1);
			if (kind != NULL && strcmp(kind, "signal") == 0) {
				sig = 1;
				entry_seq = sqlite3_column_int64(st, 2);
				entry_insn = sqlite3_column_int64(st, 4);
				break;
			}
			sqlite3_reset(st);
			sqlite3_bind_int64(st, 1, id);
			if (sqlite3_step(st) != SQLITE_ROW)
				break;
		}
		id = sqlite3_column_type(st, 0) == SQLITE_NULL ? -1 :
		    sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	if (rc < 0)
		return (rc);
	if (!sig || exit_seq != l->pos || entry_seq < 1 || entry_insn < 1)
		return (0);
	if ((rc = q_int(q, &is_call, 0, "SELECT b.last_class LIKE 'call%' "
	    "FROM exec_order e JOIN blocks b ON b.id = e.block WHERE "
	    "e.thread = ?1 AND e.seq = ?2", "ii", thread, entry_seq - 1)) < 0 ||
	    (is_call && (rc = q_int(q, &last_ip, 0, "SELECT b.last_ip FROM "
	    "exec_order e JOIN blocks b ON b.id = e.block WHERE e.thread = ?1 "
	    "AND e.seq = ?2", "ii", thread, entry_seq - 1)) < 0))
		return (rc);
	if (!is_call)
		return (0);
	l->child_seq = entry_seq;
	l->child_ip = (uint64_t)last_ip;
	*call_insn = entry_insn - 1;
	return (1);
}

/*
 * bt at the end of @thread's trace: frame 0 is the last block's last
 * instruction, or the instruction after it that did not complete (the
 * fault); when the last block ends in a call, the fault is the callee's
 * first instruction, a frame of its own, added here (*@frame counts it);
 * so is it when a signal handler interrupted that callee before its first
 * instruction and returned there (q_bt_resumed_callee()).
 */
static int
q_bt_end(struct hwtr_q *q, struct q_bt *bt, struct hwtr_q_res *res,
    int64_t thread, int64_t nblocks, int64_t ninsns, int cut,
    int64_t *frame, struct q_bt_loc *l)
{
	int64_t call_insn = ninsns - 1;
	int implicit, rc;

	/* The last block, and the fault after it if there was one. */
	l->pos = nblocks - 1;
	l->insn = ninsns > 0 ? ninsns - 1 : 0;
	sqlite3_reset(bt->last);
	sqlite3_bind_int64(bt->last, 1, thread);
	sqlite3_bind_int64(bt->last, 2, l->pos);
	if (sqlite3_step(bt->last) != SQLITE_ROW)
		return (q_dbfail(q, "bt: cannot read the last block"));
	l->addr = (uint64_t)sqlite3_column_int64(bt->last, 0);
	l->has_addr = 1;
	l->func = q_coltext(bt->last, 1) ? strdup(q_coltext(bt->last, 1)) :
	    NULL;
	l->line = q_coltext(bt->last, 2) ? strdup(q_coltext(bt->last, 2)) :
	    NULL;
	implicit = q_coltext(bt->last, 3) != NULL &&
	    strncmp(q_coltext(bt->last, 3), "call", 4) == 0;
	sqlite3_reset(bt->stop);
	sqlite3_bind_int64(bt->stop, 1, thread);
	if (!implicit && !cut &&
	    (rc = q_bt_resumed_callee(q, thread, l, &call_insn)) != 0) {
		if (rc < 0)
			return (rc);
		implicit = 2;
	}
	if ((rc = sqlite3_step(bt->stop)) == SQLITE_ROW) {
		/* The faulting instruction: frame 0. */
		if (implicit == 1) {
			/* It is the callee's first: a frame of its own. */
			l->child_ip = l->addr;
			l->child_seq = l->pos + 1;
		}
		free(l->func);
		free(l->line);
		l->addr = (uint64_t)sqlite3_column_int64(bt->stop, 6);
		l->func = q_coltext(bt->stop, 5) ?
		    strdup(q_coltext(bt->stop, 5)) : NULL;
		l->line = q_coltext(bt->stop, 4) ?
		    strdup(q_coltext(bt->stop, 4)) : NULL;
		l->insn = ninsns;
	} else if (rc != SQLITE_DONE)
		return (q_dbfail(q, "bt: cannot read events"));
	else {
		implicit = 0;
		l->child_seq = -1;
		l->child_ip = 0;
	}
	if (implicit) {
		if ((rc = q_bt_frame(q, &bt->chain, bt->inl, res, thread,
		    frame, l->func, 1, l->addr, l->line, -1,
		    cut ? -1 : l->insn)) < 0)
			return (rc);
		free(l->func);
		free(l->line);
		l->func = l->line = NULL;
		l->has_addr = 0;
		l->insn = call_insn;
	}
	return (0);
}

static int
q_bt_thread(struct hwtr_q *q, struct q_bt *bt, struct hwtr_q_res *res,
    int64_t thread, int64_t nblocks, int64_t ninsns, int64_t at)
{
	struct q_bt_loc l;
	int64_t id, frame = 0, root = -1;
	int untraced = 0, rc;
	/* Only the end of its trace was decoded (q_lazy.c). */
	int cut = q_lazy_cut(q, thread);

	memset(&l, 0, sizeof(l));
	l.child_seq = -1;
	if (at >= 0)
		rc = q_bt_at(q, bt, thread, ninsns, at, &l);
	else
		rc = q_bt_end(q, bt, res, thread, nblocks, ninsns, cut,
		    &frame, &l);
	if (rc < 0)
		goto out;
	/* The innermost call holding @pos, then its parents. */
	if ((rc = q_int(q, &id, -1, Q_CALL_LAST_UPTO, "ii", thread, l.pos)) < 0)
		goto out;
	while (id >= 0) {
		int64_t parent, entry_seq, exit_seq, entry_insn, sym, depth;
		int has_parent, has_sym, has_call, tail;
		uint64_t call_ip;

		sqlite3_reset(bt->call);
		sqlite3_bind_int64(bt->call, 1, id);
		if (sqlite3_step(bt->call) != SQLITE_ROW) {
			rc = q_dbfail(q, "bt: cannot read calls");
			goto out;
		}
		has_parent = sqlite3_column_type(bt->call, 0) != SQLITE_NULL;
		parent = sqlite3_column_int64(bt->call, 0);
		has_sym = sqlite3_column_type(bt->call, 1) != SQLITE_NULL;
		sym = sqlite3_column_int64(bt->call, 1);
		has_call = sqlite3_column_type(bt->call, 2) != SQLITE_NULL;
		call_ip = (uint64_t)sqlite3_column_int64(bt->call, 2);
		entry_seq = sqlite3_column_int64(bt->call, 3);
		exit_seq = sqlite3_column_int64(bt->call, 4);
		entry_insn = sqlite3_column_int64(bt->call, 5);
		tail = sqlite3_column_int(bt->call, 6);
		depth = sqlite3_column_int64(bt->call, 7);
		root = has_parent ? root : id;
		if (entry_seq <= l.pos && l.pos < exit_seq) {
			if (l.child_seq >= 0) {
				/* Where this frame called the one inside. */
				free(l.func);
				free(l.line);
				l.func = l.line = NULL;
				sqlite3_reset(bt->site);
				sqlite3_bind_int64(bt->site, 1, thread);
				sqlite3_bind_int64(bt->site, 2,
				    l.child_seq - 1);
				sqlite3_bind_int64(bt->site, 3,
				    (int64_t)l.child_ip);
				if (l.child_seq > 0 &&
				    sqlite3_step(bt->site) == SQLITE_ROW &&
				    sqlite3_column_int(bt->site, 3)) {
					if (q_coltext(bt->site, 0) != NULL)
						l.func = strdup(
						    q_coltext(bt->site, 0));
					if (q_coltext(bt->site, 1) != NULL)
						l.line = strdup(
						    q_coltext(bt->site, 1));
				}
				l.addr = l.child_ip;
				l.has_addr = l.child_ip != 0;
			}
			if (l.func == NULL && q_bt_symname(bt, sym, has_sym))
				l.func = strdup(q_bt_symname(bt, sym, has_sym));
			if ((rc = q_bt_frame(q, &bt->chain, bt->inl, res,
			    thread, &frame, l.func, l.has_addr, l.addr, l.line,
			    cut ? -1 : id, cut ? -1 : l.insn)) < 0)
				goto out;
			free(l.func);
			free(l.line);
			l.func = l.line = NULL;
			/* The next frame's location: this call's call site. */
			l.child_seq = has_call ? entry_seq : 0;
			l.child_ip = has_call ? call_ip : 0;
			/* None before the first (a damaged entry_insn). */
			l.insn = has_call && entry_insn > 0 ? entry_insn - 1 :
			    -1;
			/* A tail call's: that of the call it replaced. */
			if (has_call && tail && (rc = q_tail_site(q, thread,
			    entry_seq, depth, &l.child_seq, &l.insn)) < 0)
				goto out;
		}
		id = has_parent ? parent : -1;
	}
	if (frame == 0 && (rc = q_bt_frame(q, &bt->chain, bt->inl, res,
	    thread, &frame, l.func, l.has_addr, l.addr, l.line, -1,
	    cut ? -1 : l.insn)) < 0)
		goto out;
	/*
	 * The outermost frame decoded was entered before the window: its
	 * callers are not known (hwtrace-query(1), lazy verbs).
	 */
	if (cut && (rc = q_bt_row(q, res, thread, frame, Q_BT_NOT_DECODED, 0,
	    0, NULL, -1, -1, 0)) < 0)
		goto out;
	/* The trace itself starts below the outermost frame's callers. */
	if (!cut && root >= 0 && ((rc = q_root_untraced(q, thread, root,
	    &untraced)) < 0 || (untraced && (rc = q_bt_row(q, res, thread,
	    frame, Q_BT_NOT_TRACED, 0, 0, NULL, -1, -1, 0)) < 0)))
		goto out;
	rc = 0;
out:
	free(l.func);
	free(l.line);
	return (rc);
}

int
q_bt(struct hwtr_q *q, const struct hwtr_q_req *req,
    struct hwtr_q_res **resp)
{
	struct q_bt bt;
	sqlite3_stmt *ts = NULL;
	int64_t thread = req->thread;
	int rc;

	*resp = NULL;
	memset(&bt, 0, sizeof(bt));
	if (thread >= 0 && (rc = q_check_thread(q, thread)) < 0)
		return (rc);
	bt.inl = q_inl_on(q);
	if (req->at >= 0 && thread < 0) {
		/* Instruction numbers are a thread's: the first by default. */
		if ((rc = q_int(q, &thread, -1, "SELECT min(id) FROM threads "
		    "WHERE blocks > 0", NULL)) < 0)
			return (rc);
		if (thread < 0)
			return (q_res_new(resp, HWTR_NELEM(q_bt_cols),
			    q_bt_cols));
	}
	if ((rc = q_res_new(resp, HWTR_NELEM(q_bt_cols), q_bt_cols)) < 0)
		return (q_fail(q, rc, "out of memory"));
	if ((rc = q_prepare(q, &ts, "SELECT id, blocks, insns FROM threads "
	    "WHERE (?1 < 0 OR id = ?1) AND blocks > 0 ORDER BY id")) < 0 ||
	    (rc = q_prepare(q, &bt.site, Q_BT_SITE_SQL)) < 0 ||
	    (rc = q_prepare(q, &bt.call, "SELECT parent, symbol, call_ip, "
	    "entry_seq, exit_seq, entry_insn, entry_kind = 'tail', depth FROM "
	    "calls WHERE id = ?1")) < 0 ||
	    (rc = q_prepare(q, &bt.last, "SELECT b.last_ip, s.name, "
	    Q_ADDR_LINE("b.last_ip - b.start_ip") ", b.last_class FROM "
	    "exec_order e JOIN blocks b ON b.id = e.block LEFT JOIN symbols s "
	    "ON s.id = b.symbol WHERE e.thread = ?1 AND e.seq = ?2")) < 0 ||
	    (rc = q_prepare(q, &bt.stop, Q_STOP_SQL("seq", "s.name, s.ip"))) < 0 ||
	    (rc = q_prepare(q, &bt.at, "SELECT e.seq, e.ip, s.name, "
	    Q_INSN_LINE " FROM exec_insns e JOIN blocks b ON b.id = e.block "
	    "LEFT JOIN symbols s ON s.id = b.symbol WHERE e.thread = ?1 AND "
	    "e.insn = ?2")) < 0 ||
	    (rc = q_prepare(q, &bt.fname, "SELECT name FROM symbols WHERE "
	    "id = ?1")) < 0)
		goto out;
	sqlite3_bind_int64(ts, 1, thread);
	while ((rc = sqlite3_step(ts)) == SQLITE_ROW) {
		/* Positions are counted back from the thread's last. */
		if (sqlite3_column_int64(ts, 2) < 0) {
			rc = q_fail(q, -HWTR_E_FORMAT, "bt: thread %lld: its "
			    "instructions %lld are out of range (a damaged "
			    "database?)", (long long)sqlite3_column_int64(ts,
			    0), (long long)sqlite3_column_int64(ts, 2));
			goto out;
		}
		if ((rc = q_bt_thread(q, &bt, *resp,
		    sqlite3_column_int64(ts, 0), sqlite3_column_int64(ts, 1),
		    sqlite3_column_int64(ts, 2), req->at)) < 0)
			goto out;
	}
	rc = rc == SQLITE_DONE ? 0 : q_dbfail(q, "bt: cannot read threads");
out:
	sqlite3_finalize(ts);
	sqlite3_finalize(bt.site);
	sqlite3_finalize(bt.call);
	sqlite3_finalize(bt.last);
	sqlite3_finalize(bt.stop);
	sqlite3_finalize(bt.at);
	sqlite3_finalize(bt.fname);
	sqlite3_finalize(bt.chain);
	if (rc < 0) {
		hwtr_q_res_free(*resp);
		*resp = NULL;
	}
	return (rc);
}
