/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The verbs of hwtrace query.  Most are one SQL statement over the tables
 * of hwtrace-db(5) that the indexer keeps small: aggregated block counts,
 * branches and calls, and the execution order read through exec_order /
 * exec_insns with constraints that let them touch only the chunks needed.
 * Every statement is written so that SQLite can use the schema's indexes
 * (thread first, then position); a verb over one thread never scans the
 * others.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "q_int.h"

#define Q_SYM_JOIN(b, s, f)						\
	" LEFT JOIN symbols " s " ON " s ".id = " b ".symbol"		\
	" LEFT JOIN files " f " ON " f ".id = " b ".file"

/* Every database has these rows. */
#define Q_SUMMARY_SQL			\
	"SELECT 'source' AS item, (SELECT value FROM meta WHERE key = "	\
	"'capture_source') AS value"					\
	" UNION ALL SELECT 'command', (SELECT value FROM meta WHERE key = " \
	"'argv')"							\
	" UNION ALL SELECT 'exit', (SELECT group_concat(value, ' ') FROM " \
	"(SELECT value FROM meta WHERE key IN ('exit_kind', 'exit_value') " \
	"ORDER BY key))"						\
	" UNION ALL SELECT 'archive_complete', (SELECT CAST(value AS "	\
	"INTEGER) FROM meta WHERE key = 'archive_complete')"		\
	" UNION ALL SELECT 'streams', count(*) FROM streams"		\
	" UNION ALL SELECT 'processes', count(*) FROM processes"	\
	" UNION ALL SELECT 'threads', count(*) FROM threads"		\
	" UNION ALL SELECT 'images', count(*) FROM images"		\
	" UNION ALL SELECT 'instructions', coalesce(sum(insns), 0) FROM " \
	"threads"							\
	" UNION ALL SELECT 'blocks', coalesce(sum(blocks), 0) FROM threads" \
	" UNION ALL SELECT 'static_blocks', (SELECT max(id) + 1 FROM "	\
	"blocks)"							\
	" UNION ALL SELECT 'calls', coalesce(sum(calls), 0) FROM threads" \
	" UNION ALL SELECT 'start', strftime('%Y-%m-%dT%H:%M:%fZ', "	\
	"coalesce(min(first_ns), (SELECT CAST(value AS INTEGER) FROM meta " \
	"WHERE key = 'start_ns')) / 1000000000.0, 'unixepoch') FROM "	\
	"threads"							\
	" UNION ALL SELECT 'duration_ns', max(last_ns) - min(first_ns) FROM " \
	"threads"							\
	" UNION ALL SELECT 'trace_bytes', coalesce(sum(bytes), 0) FROM " \
	"streams"							\
	" UNION ALL SELECT 'decode_errors', coalesce(sum(errors), 0) FROM " \
	"streams"							\
	" UNION ALL SELECT 'undecoded_bytes', coalesce(sum("		\
	"undecoded_bytes), 0) FROM streams"				\
	" UNION ALL SELECT 'lost_bytes', coalesce(sum(lost_bytes), 0) FROM " \
	"streams"							\
	" UNION ALL SELECT 'lost_events', count(*) FROM events WHERE kind " \
	"IN ('lost', 'overflow')"

/*
 * The cycles row comes only from a database with CoreSight cycle counts:
 * older databases have no cycles table, and the others no row to sum.
 */
static int
q_summary(struct hwtr_q *q, struct hwtr_q_res **resp)
{
	int64_t has_cycles;
	int rc;

	if ((rc = q_int(q, &has_cycles, 0, "SELECT count(*) FROM "
	    "sqlite_master WHERE type = 'table' AND name = 'cycles'",
	    NULL)) < 0)
		return (rc);
	return (q_select(q, resp, has_cycles ? Q_SUMMARY_SQL
	    " UNION ALL SELECT 'cycles', sum(count) FROM cycles WHERE "
	    "cumulative HAVING count(*) > 0" : Q_SUMMARY_SQL, NULL));
}

static int
q_threads(struct hwtr_q *q, struct hwtr_q_res **resp)
{
	return (q_select(q, resp,
	    "SELECT t.id AS thread, t.pid, t.tid, t.name, s.name AS stream, "
	    "t.blocks, t.insns, t.calls, t.max_depth, t.errors, t.gaps, "
	    "t.last_ns - t.first_ns AS duration_ns, "
	    "CASE WHEN t.exit_kind IS NULL THEN NULL ELSE t.exit_kind || ' ' || "
	    "t.exit_value END AS exit "
	    "FROM threads t LEFT JOIN streams s ON s.id = t.stream "
	    "ORDER BY t.id", NULL));
}

/*
 * Run @sql once per selected thread (@thread, or every thread with blocks)
 * with (thread, lo, hi) bound: rows lo..hi of the thread, where lo is
 * @from, or "length - n" clamped at 0 when @from < 0.  @tail, when not
 * NULL, runs after each thread's rows with the thread bound and adds
 * what it returns (same columns).
 */
static int
q_per_thread(struct hwtr_q *q, struct hwtr_q_res **resp, int64_t thread,
    const char *sql, const char *tail, const char *lencol, int64_t n,
    int64_t from, const char *const *names, size_t ncols)
{
	sqlite3_stmt *ts = NULL, *st = NULL, *tl = NULL;
	char tsql[160];
	int64_t id, len, lo;
	int rc;

	if (thread >= 0 && (rc = q_check_thread(q, thread)) < 0)
		return (rc);
	snprintf(tsql, sizeof(tsql), "SELECT id, %s FROM threads WHERE "
	    "(?1 < 0 OR id = ?1) AND blocks > 0 ORDER BY id", lencol);
	if ((rc = q_res_new(resp, ncols, names)) < 0)
		return (q_fail(q, rc, "out of memory"));
	q_res_stream(q, *resp);
	if ((rc = q_prepare(q, &ts, tsql)) < 0 ||
	    (rc = q_prepare(q, &st, sql)) < 0 ||
	    (tail != NULL && (rc = q_prepare(q, &tl, tail)) < 0))
		goto out;
	sqlite3_bind_int64(ts, 1, thread);
	while ((rc = sqlite3_step(ts)) == SQLITE_ROW) {
		id = sqlite3_column_int64(ts, 0);
		len = sqlite3_column_int64(ts, 1);
		lo = from >= 0 ? from : (len > n ? len - n : 0);
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_int64(st, 2, lo);
		sqlite3_bind_int64(st, 3, lo + n - 1);
		if ((rc = q_res_fill(q, *resp, st)) < 0)
			goto out;
		if (tl == NULL)
			continue;
		sqlite3_reset(tl);
		sqlite3_bind_int64(tl, 1, id);
		if ((rc = q_res_fill(q, *resp, tl)) < 0)
			goto out;
	}
	rc = rc == SQLITE_DONE ? 0 : q_dbfail(q, "cannot read threads");
out:
	sqlite3_finalize(ts);
	sqlite3_finalize(st);
	sqlite3_finalize(tl);
	if (rc < 0) {
		hwtr_q_res_free(*resp);
		*resp = NULL;
	}
	return (rc);
}

/*
 * The source line of the instruction at offset @off of block b: the line
 * row at or before it, but not before the start of its function, since
 * the lines table has no end-of-sequence rows and code without line
 * information (libc in a static binary) would otherwise borrow the last
 * line of the function before it.
 */
#define Q_ADDR_LINE(off)						\
	"(SELECT lf.path || ':' || l.line FROM lines l JOIN files lf ON "	\
	"lf.id = l.file WHERE l.image = b.image AND l.addr <= b.image_addr "	\
	"+ (" off ") AND l.addr >= coalesce((SELECT addr FROM symbols WHERE "	\
	"id = b.symbol), 0) ORDER BY l.addr DESC LIMIT 1)"
#define Q_INSN_LINE	Q_ADDR_LINE("e.ip - b.start_ip")

static const char *const q_insn_cols[] = { "thread", "insn", "address",
    "function", "line", "instruction" };

/* A position counted from a thread's start is not known in a window. */
static const char q_insn_sql[] =
    "SELECT e.thread, CASE WHEN hwtr_tail_cut(e.thread) THEN NULL ELSE "
    "e.insn END, printf('%#x', e.ip), "
    Q_FUNC("b", "s", "e.ip - b.start_ip") ", " Q_INSN_LINE ", "
    "hwtr_disasm(b.code, e.ip - b.start_ip, e.ip, b.mode) "
    "FROM exec_insns e JOIN blocks b ON b.id = e.block "
    "LEFT JOIN symbols s ON s.id = b.symbol "
    "WHERE e.thread = ?1 AND e.insn >= ?2 AND e.insn <= ?3 ORDER BY e.insn";

/*
 * Where thread ?1's trace stopped for good, when the event that ended it
 * carries an address: the instruction that did not complete (a fault, a
 * signal, the thread killed), which no block row shows since it never
 * retired.  Named from the mapping live at the event's time, as a block
 * is; @pos is the event's column for the position (seq or insn), @what
 * the SQL of the columns after the line.  No row when the trace ends
 * otherwise (a system call, the end of the capture) or resumes later.
 */
#define Q_STOP_SQL(pos, what)						\
	"WITH ev AS (SELECT e.id, e.thread, e." pos " AS pos, e.ip, e.tsc, "	\
	"e.pid FROM events e JOIN threads t ON t.id = e.thread WHERE "	\
	"e.thread = ?1 AND e.ip IS NOT NULL AND e.kind IN ('disabled', "	\
	"'async-disabled') AND e.seq >= t.blocks ORDER BY e.id DESC "	\
	"LIMIT 1), m AS (SELECT ev.*, mp.image, ev.ip - mp.bias AS a FROM "	\
	"ev LEFT JOIN mappings mp ON mp.pid = ev.pid AND ev.ip >= "		\
	"mp.start_ip AND ev.ip < mp.end_ip AND (mp.from_tsc IS NULL OR "	\
	"ev.tsc IS NULL OR mp.from_tsc <= ev.tsc) AND (mp.to_tsc IS NULL "	\
	"OR ev.tsc IS NULL OR ev.tsc <= mp.to_tsc) ORDER BY mp.id DESC "	\
	"LIMIT 1), s AS (SELECT m.*, sy.name, sy.addr AS saddr FROM m "	\
	"LEFT JOIN symbols sy ON sy.image = m.image AND sy.addr <= m.a AND "	\
	"m.a < sy.addr + sy.size ORDER BY sy.addr DESC LIMIT 1) "		\
	"SELECT s.thread, CASE WHEN hwtr_tail_cut(s.thread) THEN NULL ELSE "	\
	"s.pos END, printf('%#x', s.ip), CASE WHEN s.name IS "		\
	"NULL THEN NULL WHEN s.a = s.saddr THEN s.name ELSE s.name || '+' "	\
	"|| printf('%#x', s.a - s.saddr) END, (SELECT lf.path || ':' || "	\
	"l.line FROM lines l JOIN files lf ON lf.id = l.file WHERE l.image "	\
	"= s.image AND l.addr <= s.a AND l.addr >= coalesce(s.saddr, 0) "	\
	"ORDER BY l.addr DESC LIMIT 1), " what " FROM s WHERE NOT EXISTS "	\
	"(SELECT 1 FROM events r WHERE r.thread = s.thread AND r.id > s.id "	\
	"AND r.kind IN ('enabled', 'resumed'))"

static int
q_last(struct hwtr_q *q, const struct hwtr_q_req *req,
    struct hwtr_q_res **resp)
{
	static const char *const cols[] = { "thread", "seq", "address",
	    "function", "line", "insns", "ends_with" };
	int64_t n = req->n >= 0 ? req->n : 10;

	if (n == 0)
		return (q_res_new(resp, req->insns ? 6 : 7, req->insns ?
		    q_insn_cols : cols));
	if (req->insns)
		return (q_per_thread(q, resp, req->thread, q_insn_sql,
		    Q_STOP_SQL("insn", "(SELECT CASE WHEN p.exit_kind = 'signal' "
		    "THEN '(stopped here: the process ended by signal ' || "
		    "p.exit_value || ')' ELSE '(stopped here)' END FROM "
		    "(SELECT 1) LEFT JOIN processes p ON p.pid = s.pid)"),
		    "insns", n, -1, q_insn_cols, 6));
	return (q_per_thread(q, resp, req->thread,
	    "SELECT e.thread, CASE WHEN hwtr_tail_cut(e.thread) THEN NULL "
	    "ELSE e.seq END, printf('%#x', b.start_ip), "
	    Q_FUNC("b", "s", "0") ", " Q_ADDR_LINE("0") ", b.ninsns, "
	    "b.last_class FROM exec_order e JOIN blocks b ON b.id = e.block"
	    Q_SYM_JOIN("b", "s", "f")
	    " WHERE e.thread = ?1 AND e.seq >= ?2 AND e.seq <= ?3 "
	    "ORDER BY e.seq", Q_STOP_SQL("seq", "0, 'stopped'"), "blocks", n,
	    -1, cols, 7));
}

static int
q_insns(struct hwtr_q *q, const struct hwtr_q_req *req,
    struct hwtr_q_res **resp)
{
	int64_t thread = req->thread, count = req->count >= 0 ? req->count :
	    20;
	int rc;

	if (thread < 0) {
		if ((rc = q_int(q, &thread, -1, "SELECT min(id) FROM threads "
		    "WHERE blocks > 0", NULL)) < 0)
			return (rc);
		if (thread < 0)
			return (q_res_new(resp, 6, q_insn_cols));
	}
	if (count == 0)
		return (q_res_new(resp, 6, q_insn_cols));
	return (q_per_thread(q, resp, thread, q_insn_sql, NULL, "insns",
	    count, req->from, q_insn_cols, 6));
}

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

static int
q_bt_thread(struct hwtr_q *q, struct q_bt *bt, struct hwtr_q_res *res,
    int64_t thread, int64_t nblocks, int64_t ninsns, int64_t at)
{
	char *func = NULL, *line = NULL;
	int64_t pos, id, frame = 0, insn, root = -1;
	uint64_t addr = 0, child_ip = 0;
	int64_t child_seq = -1;
	int has_addr = 0, implicit = 0, untraced = 0, rc;
	/* Only the end of its trace was decoded (q_lazy.c). */
	int cut = q_lazy_cut(q, thread);

	if (at >= 0) {
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
		pos = sqlite3_column_int64(bt->at, 0);
		addr = (uint64_t)sqlite3_column_int64(bt->at, 1);
		has_addr = 1;
		func = q_coltext(bt->at, 2) ? strdup(q_coltext(bt->at, 2)) :
		    NULL;
		line = q_coltext(bt->at, 3) ? strdup(q_coltext(bt->at, 3)) :
		    NULL;
		insn = at;
	} else {
		/* The last block, and the fault after it if there was one. */
		pos = nblocks - 1;
		insn = ninsns > 0 ? ninsns - 1 : 0;
		sqlite3_reset(bt->last);
		sqlite3_bind_int64(bt->last, 1, thread);
		sqlite3_bind_int64(bt->last, 2, pos);
		if (sqlite3_step(bt->last) != SQLITE_ROW)
			return (q_dbfail(q, "bt: cannot read the last block"));
		addr = (uint64_t)sqlite3_column_int64(bt->last, 0);
		has_addr = 1;
		func = q_coltext(bt->last, 1) ? strdup(q_coltext(bt->last, 1)) :
		    NULL;
		line = q_coltext(bt->last, 2) ? strdup(q_coltext(bt->last, 2)) :
		    NULL;
		implicit = strncmp(q_coltext(bt->last, 3), "call", 4) == 0;
		sqlite3_reset(bt->stop);
		sqlite3_bind_int64(bt->stop, 1, thread);
		if ((rc = sqlite3_step(bt->stop)) == SQLITE_ROW) {
			/* The faulting instruction: frame 0. */
			if (implicit) {
				/* It is the callee's first: a frame of its own. */
				child_ip = addr;
				child_seq = pos + 1;
			}
			free(func);
			free(line);
			addr = (uint64_t)sqlite3_column_int64(bt->stop, 6);
			func = q_coltext(bt->stop, 5) ?
			    strdup(q_coltext(bt->stop, 5)) : NULL;
			line = q_coltext(bt->stop, 4) ?
			    strdup(q_coltext(bt->stop, 4)) : NULL;
			insn = ninsns;
		} else if (rc != SQLITE_DONE) {
			rc = q_dbfail(q, "bt: cannot read events");
			goto out;
		} else
			implicit = 0;
		if (implicit) {
			if ((rc = q_bt_frame(q, &bt->chain, bt->inl, res,
			    thread, &frame, func, 1, addr, line, -1,
			    cut ? -1 : insn)) < 0)
				goto out;
			free(func);
			free(line);
			func = line = NULL;
			has_addr = 0;
			insn = ninsns - 1;
		}
	}
	/* The innermost call holding @pos, then its parents. */
	if ((rc = q_int(q, &id, -1, Q_CALL_LAST_UPTO, "ii", thread, pos)) < 0)
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
		if (entry_seq <= pos && pos < exit_seq) {
			if (child_seq >= 0) {
				/* Where this frame called the one inside. */
				free(func);
				free(line);
				func = line = NULL;
				sqlite3_reset(bt->site);
				sqlite3_bind_int64(bt->site, 1, thread);
				sqlite3_bind_int64(bt->site, 2, child_seq - 1);
				sqlite3_bind_int64(bt->site, 3, (int64_t)child_ip);
				if (child_seq > 0 &&
				    sqlite3_step(bt->site) == SQLITE_ROW &&
				    sqlite3_column_int(bt->site, 3)) {
					if (q_coltext(bt->site, 0) != NULL)
						func = strdup(q_coltext(bt->site,
						    0));
					if (q_coltext(bt->site, 1) != NULL)
						line = strdup(q_coltext(bt->site,
						    1));
				}
				addr = child_ip;
				has_addr = child_ip != 0;
			}
			if (func == NULL && q_bt_symname(bt, sym, has_sym))
				func = strdup(q_bt_symname(bt, sym, has_sym));
			if ((rc = q_bt_frame(q, &bt->chain, bt->inl, res,
			    thread, &frame, func, has_addr, addr, line,
			    cut ? -1 : id, cut ? -1 : insn)) < 0)
				goto out;
			free(func);
			free(line);
			func = line = NULL;
			/* The next frame's location: this call's call site. */
			child_seq = has_call ? entry_seq : 0;
			child_ip = has_call ? call_ip : 0;
			insn = has_call ? entry_insn - 1 : -1;
			/* A tail call's: that of the call it replaced. */
			if (has_call && tail && (rc = q_tail_site(q, thread,
			    entry_seq, depth, &child_seq, &insn)) < 0)
				goto out;
		}
		id = has_parent ? parent : -1;
	}
	if (frame == 0 && (rc = q_bt_frame(q, &bt->chain, bt->inl, res,
	    thread, &frame, func, has_addr, addr, line, -1,
	    cut ? -1 : insn)) < 0)
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
	free(func);
	free(line);
	return (rc);
}

static int
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
	while ((rc = sqlite3_step(ts)) == SQLITE_ROW)
		if ((rc = q_bt_thread(q, &bt, *resp,
		    sqlite3_column_int64(ts, 0), sqlite3_column_int64(ts, 1),
		    sqlite3_column_int64(ts, 2), req->at)) < 0)
			goto out;
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
			rc |= q_res_push_int(res, sqlite3_column_int64(st, k + 9) -
			    cf->t0);
		if (sqlite3_column_type(st, k + 9) == SQLITE_NULL ||
		    sqlite3_column_type(st, k + 10) == SQLITE_NULL)
			rc |= q_res_push_n(res, HWTR_Q_NULL, NULL, 0, 1);
		else {
			a = sqlite3_column_int64(st, k + 9);
			b = sqlite3_column_int64(st, k + 10);
			rc |= q_res_push_int(res, b - a);
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
		    v[5] - t0;
		for (i = 0; i < HWTR_NELEM(h); i++)
			q_res_hint(res, (size_t)h[i].col, v[h[i].what]);
	}
	sqlite3_finalize(st);
	return (0);
}

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
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, thread);
		sqlite3_bind_int64(st, 2, mid);
		rc = sqlite3_step(st);
		if (rc != SQLITE_ROW && rc != SQLITE_DONE)
			return (q_dbfail(q, "cannot read timestamps"));
		if (rc == SQLITE_DONE || sqlite3_column_int64(st, 1) >= t)
			hi = mid;
		else
			lo = mid + 1;
	}
	sqlite3_reset(st);
	sqlite3_bind_int64(st, 1, thread);
	sqlite3_bind_int64(st, 2, lo);
	rc = sqlite3_step(st);
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
	int64_t t0, has, s;
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
		if ((rc = q_ts_seq(q, st, r->thread, nblocks, t0 + req->t_from,
		    &s)) < 0)
			goto out;
		r->seq_lo = s >= 0 ? s : nblocks;
	}
	if (req->t_to >= 0 && req->t_to < INT64_MAX - t0) {
		if ((rc = q_ts_seq(q, st, r->thread, nblocks, t0 + req->t_to +
		    1, &s)) < 0)
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

static int
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

static int
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
	if (sql.err) {
		free(sql.p);
		return (q_fail(q, -HWTR_E_NOMEM, "out of memory"));
	}
	if (req->thread >= 0 && (rc = q_check_thread(q, req->thread)) < 0) {
		free(sql.p);
		return (rc);
	}
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

static const char *const q_kinds[] = { "cond-taken", "cond-not-taken",
    "jump", "jump-indirect", "call", "call-indirect", "return", "syscall",
    "sysret", "async", "fallthrough" };

#define Q_EDGE_COLS							\
	Q_FUNC("fb", "fs", "br.from_ip - fb.start_ip") " AS \"from\", "	\
	Q_FUNC("tb", "ts", "br.to_ip - tb.start_ip") " AS \"to\", "		\
	"br.kind, sum(br.count) AS count, printf('%#x', br.from_ip) AS "	\
	"from_address, printf('%#x', br.to_ip) AS to_address "		\
	"FROM branches br JOIN blocks fb ON fb.id = br.from_block "	\
	"JOIN blocks tb ON tb.id = br.to_block "				\
	"LEFT JOIN symbols fs ON fs.id = fb.symbol "			\
	"LEFT JOIN symbols ts ON ts.id = tb.symbol "

static int
q_branches(struct hwtr_q *q, const struct hwtr_q_req *req,
    struct hwtr_q_res **resp)
{
	struct q_str sql = { 0 }, kl = { 0 };
	char *from = NULL, *to = NULL;
	size_t i;
	int rc;

	if (req->kind != NULL) {
		for (i = 0; i < HWTR_NELEM(q_kinds); i++)
			if (strcmp(req->kind, q_kinds[i]) == 0)
				break;
		if (i == HWTR_NELEM(q_kinds)) {
			for (i = 0; i < HWTR_NELEM(q_kinds); i++)
				q_str_printf(&kl, "%s%s", i ? ", " : "",
				    q_kinds[i]);
			rc = q_fail(q, -HWTR_E_INVAL, "branches: unknown kind "
			    "'%s' (kinds: %s)", req->kind, kl.p ? kl.p : "");
			free(kl.p);
			return (rc);
		}
	}
	if (req->from_sym != NULL &&
	    (rc = q_sym_ids(q, "branches --from", req->from_sym, &from)) < 0)
		return (rc);
	if (req->to_sym != NULL &&
	    (rc = q_sym_ids(q, "branches --to", req->to_sym, &to)) < 0) {
		free(from);
		return (rc);
	}
	q_str_puts(&sql, "SELECT " Q_EDGE_COLS "WHERE 1");
	if (from != NULL)
		q_str_printf(&sql, " AND fb.symbol IN %s", from);
	if (to != NULL)
		q_str_printf(&sql, " AND tb.symbol IN %s", to);
	if (req->kind != NULL)
		q_str_puts(&sql, " AND br.kind = ?1");
	if (req->thread >= 0)
		q_str_puts(&sql, " AND br.thread = ?2");
	q_str_puts(&sql, " GROUP BY br.from_ip, br.to_ip, br.kind "
	    "ORDER BY count DESC, br.from_ip, br.to_ip, br.kind");
	free(from);
	free(to);
	if (sql.err) {
		free(sql.p);
		return (q_fail(q, -HWTR_E_NOMEM, "out of memory"));
	}
	if (req->thread >= 0 && (rc = q_check_thread(q, req->thread)) < 0) {
		free(sql.p);
		return (rc);
	}
	if (req->kind != NULL && req->thread >= 0)
		rc = q_select(q, resp, sql.p, "si", req->kind, req->thread);
	else if (req->kind != NULL)
		rc = q_select(q, resp, sql.p, "s", req->kind);
	else if (req->thread >= 0)
		rc = q_select(q, resp, sql.p, "ni", req->thread);
	else
		rc = q_select(q, resp, sql.p, NULL);
	free(sql.p);
	return (rc);
}

/*
 * hot: the counts come from block_counts, or over a range (--from, --to)
 * from the blocks of the range in exec_order (whole blocks: those holding
 * its first and last instruction count whole).  Percentages are of the
 * instructions of the threads, or of the range.
 */
static int
q_hot(struct hwtr_q *q, const struct hwtr_q_req *req,
    struct hwtr_q_res **resp)
{
	const char *by = req->by != NULL ? req->by : "func";
	int64_t n = req->n >= 0 ? req->n : 20;
	const char *src, *tot, *sel;
	struct q_str sql = { 0 };
	struct q_rng r;
	int rc;

	if (req->thread >= 0 && (rc = q_check_thread(q, req->thread)) < 0)
		return (rc);
	if (strcmp(by, "line") == 0)
		return (q_hot_lines(q, req, resp));
	if ((rc = q_range_depth(q, req, "hot", &r, 0)) < 0)
		return (rc);
	if (strcmp(by, "inline") == 0) {
		if (r.on || r.cnt)
			return (q_fail(q, -HWTR_E_INVAL, "hot --by inline: "
			    "counts of whole threads only (no --from, --to or "
			    "--depth)"));
		return (q_inl_hot(q, resp, req->thread, n));
	}
	if (r.cnt) {
		/* --depth: what ran that deep (q_walk.c). */
		src = Q_DEPTH_COUNTS;
		tot = "(SELECT sum(x.count * xb.ninsns) FROM " Q_DEPTH_COUNTS
		    " x JOIN blocks xb ON xb.id = x.block WHERE ?1 < 0 OR "
		    "x.thread = ?1)";
	} else if (r.on) {
		src = Q_RANGE_COUNTS;
		tot = "(SELECT sum(x.count * xb.ninsns) FROM " Q_RANGE_COUNTS
		    " x JOIN blocks xb ON xb.id = x.block)";
	} else {
		src = "block_counts";
		tot = "(SELECT sum(insns) FROM threads WHERE ?1 < 0 OR id = ?1)";
	}
	if (strcmp(by, "func") == 0 || strcmp(by, "function") == 0)
		/* Code with no symbol: one [unknown] row per image, as perf. */
		sel = "SELECT coalesce(s.name, '[unknown]') AS function, i.path AS "
		    "image, sum(c.count * b.ninsns) AS insns, sum(c.count) AS "
		    "blocks, round(100.0 * sum(c.count * b.ninsns) / @T, 2) AS "
		    "percent FROM @S c JOIN blocks b ON b.id = "
		    "c.block LEFT JOIN symbols s ON s.id = b.symbol LEFT JOIN "
		    "images i ON i.id = b.image WHERE ?1 < 0 OR c.thread = ?1 "
		    "GROUP BY b.symbol, CASE WHEN b.symbol IS NULL THEN "
		    "b.image END ORDER BY insns DESC, function LIMIT ?2";
	else if (strcmp(by, "image") == 0)
		sel = "SELECT i.path AS image, sum(c.count * b.ninsns) AS "
		    "insns, sum(c.count) AS blocks, round(100.0 * sum(c.count * "
		    "b.ninsns) / @T, 2) AS percent FROM @S c JOIN blocks b ON "
		    "b.id = c.block LEFT JOIN images i ON i.id = b.image WHERE "
		    "?1 < 0 OR c.thread = ?1 GROUP BY b.image ORDER BY insns "
		    "DESC, image LIMIT ?2";
	else if (strcmp(by, "block") == 0)
		sel = "SELECT printf('%#x', b.start_ip) AS address, "
		    Q_FUNC("b", "s", "0") " AS function, " Q_ADDR_LINE("0")
		    " AS line, sum(c.count) AS count, b.ninsns AS block_insns, "
		    "sum(c.count) * b.ninsns AS insns, round(100.0 * "
		    "sum(c.count) * b.ninsns / @T, 2) AS percent "
		    "FROM @S c JOIN blocks b ON b.id = c.block"
		    Q_SYM_JOIN("b", "s", "f")
		    " WHERE ?1 < 0 OR c.thread = ?1 GROUP BY b.id "
		    "ORDER BY insns DESC, b.id LIMIT ?2";
	else if (strcmp(by, "edge") == 0) {
		if (r.on)
			return (q_fail(q, -HWTR_E_INVAL, "hot --by edge: "
			    "branches are counted per thread, not by position; "
			    "--from and --to apply to --by function, line, "
			    "image and block"));
		return (q_select(q, resp, "SELECT " Q_EDGE_COLS "WHERE ?1 < 0 "
		    "OR br.thread = ?1 GROUP BY br.from_ip, br.to_ip, br.kind "
		    "ORDER BY count DESC, br.from_ip, br.to_ip, br.kind "
		    "LIMIT ?2", "ii", req->thread, n));
	} else
		return (q_fail(q, -HWTR_E_INVAL, "hot: unknown --by '%s' "
		    "(function, inline, line, image, block or edge)", by));
	/* @T: the total, @S: the counts. */
	for (; *sel != '\0'; sel++)
		if (sel[0] == '@' && (sel[1] == 'T' || sel[1] == 'S')) {
			q_str_puts(&sql, sel[1] == 'T' ? tot : src);
			sel++;
		} else
			q_str_add(&sql, sel, 1);
	if (sql.err) {
		free(sql.p);
		return (q_fail(q, -HWTR_E_NOMEM, "out of memory"));
	}
	rc = r.on ? q_select(q, resp, sql.p, "iiii", r.thread, n, r.seq_lo,
	    r.seq_hi) : q_select(q, resp, sql.p, "ii", req->thread, n);
	free(sql.p);
	return (rc);
}

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
static int
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

static int q_verb(struct hwtr_q *q, const struct hwtr_q_req *req,
    struct hwtr_q_res **resp);

int
hwtr_q_run(struct hwtr_q *q, const struct hwtr_q_req *req,
    struct hwtr_q_res **resp)
{
	struct hwtr_q_req byt;
	int rc;

	*resp = NULL;
	q->msg[0] = '\0';
	if ((rc = q_lazy_need(q, req)) < 0)
		return (rc);
	/* --thread tid:N: the thread's number, then as --thread. */
	if (req->tid >= 0) {
		byt = *req;
		if ((rc = q_thread_of_tid(q, req->tid, &byt.thread)) < 0)
			return (rc);
		req = &byt;
	}
	q_limit_begin(q, req->sql_timeout_ms, req->verb == HWTR_Q_SQL);
	rc = q_verb(q, req, resp);
	/* A stopped statement leaves the answer short, whatever rc says. */
	if (q_limit_end(q)) {
		hwtr_q_res_free(*resp);
		*resp = NULL;
		rc = q_fail(q, -HWTR_E_LIMIT, "%s: stopped after %jd.%03jd s "
		    "of CPU time (the time limit; raise it with --timeout, 0 "
		    "for none)", q_verb_name(req->verb),
		    (intmax_t)(q->lim_ms / 1000), (intmax_t)(q->lim_ms % 1000));
	}
	return (rc);
}

/* The verb @req names. */
static int
q_verb(struct hwtr_q *q, const struct hwtr_q_req *req,
    struct hwtr_q_res **resp)
{
	switch (req->verb) {
	case HWTR_Q_SUMMARY:
		return (q_summary(q, resp));
	case HWTR_Q_THREADS:
		return (q_threads(q, resp));
	case HWTR_Q_LAST:
		return (q_last(q, req, resp));
	case HWTR_Q_CALLS:
		return (q_calls(q, req, resp));
	case HWTR_Q_TREE:
		return (q_tree(q, req, resp));
	case HWTR_Q_FUNC:
		return (q_func(q, req, resp));
	case HWTR_Q_COVERAGE:
		return (q_cov(q, req, resp));
	case HWTR_Q_HOT:
		return (q_hot(q, req, resp));
	case HWTR_Q_BRANCHES:
		return (q_branches(q, req, resp));
	case HWTR_Q_TIMELINE:
		return (q_timeline(q, req, resp));
	case HWTR_Q_INSNS:
		return (q_insns(q, req, resp));
	case HWTR_Q_SQL:
		return (q_sql(q, req, resp));
	case HWTR_Q_EXPORT:
		return (q_export(q, req, resp));
	case HWTR_Q_BT:
		return (q_bt(q, req, resp));
	case HWTR_Q_ANNOTATE:
		return (q_annotate(q, req, resp));
	}
	return (q_fail(q, -HWTR_E_INVAL, "unknown query verb %d",
	    (int)req->verb));
}

int
hwtr_q_stream(struct hwtr_q *q, const struct hwtr_q_req *req,
    enum hwtr_q_format fmt, int width,
    int (*sink)(void *arg, const char *buf, size_t len), void *arg)
{
	struct hwtr_q_res *res = NULL;
	struct q_out out;
	int rc;

	if (fmt > HWTR_Q_FMT_JSON)
		return (q_fail(q, -HWTR_E_INVAL, "unknown output format %d",
		    (int)fmt));
	q_out_init(&out, fmt, width, sink, arg);
	q->out = &out;
	rc = hwtr_q_run(q, req, &res);
	q->out = NULL;
	if (rc >= 0 && res != NULL) {
		res->out = NULL;
		if ((rc = q_out_end(&out, res)) < 0)
			q_fail(q, rc, rc == -HWTR_E_IO ? "cannot write the "
			    "answer" : "out of memory");
	}
	hwtr_q_res_free(res);
	q_out_fini(&out);
	return (rc < 0 ? rc : 0);
}
