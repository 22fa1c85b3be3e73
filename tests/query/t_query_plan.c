/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The range filters of hwtrace query (--from, --to, --depth, bt) use
 * indexes, not scans: SQLite's EXPLAIN QUERY PLAN of the statements the verbs run
 * (query/q_int.h) on the schema of hwtrace-db(5) searches calls through
 * calls_thread and reads exec_order / exec_insns with the thread and
 * position constraints that let them touch only the chunks needed.
 */

#include <atf-c.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwtrace.h"
#include "hwtr_ix_sqlite.h"
#include "../../indexer/schema.sql.h"
#include "../lib/hwtr_test_ix.h"
#include "../../query/q_int.h"

/* The plan of @sql, its "detail" lines joined by " | ", into @buf. */
static void
plan(sqlite3 *db, const char *sql, char *buf, size_t len)
{
	sqlite3_stmt *st;
	char q[4096];
	size_t n = 0;

	snprintf(q, sizeof(q), "EXPLAIN QUERY PLAN %s", sql);
	if (sqlite3_prepare_v2(db, q, -1, &st, NULL) != SQLITE_OK)
		atf_tc_fail("cannot prepare '%s': %s", sql, sqlite3_errmsg(db));
	buf[0] = '\0';
	while (sqlite3_step(st) == SQLITE_ROW && n < len)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? " | " : "",
		    (const char *)sqlite3_column_text(st, 3));
	sqlite3_finalize(st);
}

static void
expect(sqlite3 *db, const char *sql, const char *want, const char *never)
{
	char p[2048];

	plan(db, sql, p, sizeof(p));
	if (strstr(p, want) == NULL)
		atf_tc_fail("plan of '%s': expected '%s', got '%s'", sql, want,
		    p);
	if (never != NULL && strstr(p, never) != NULL)
		atf_tc_fail("plan of '%s': '%s' (a scan), got '%s'", sql, never,
		    p);
}

/*
 * idxNum and idxStr of the calls virtual table (indexer/calls_vtab.c):
 * plan 0 a scan in id order, 1 id =, 2 symbol =, 3 a thread's pages; +8
 * descending; +16 an order by entry_seq taken as id order, which holds
 * while calls_rows (rows written with SQL) is empty.  idxStr: per argument its column (I id, T thread, S
 * entry_seq, Y symbol) and operator (= > g < l).  The order asked is
 * consumed (no TEMP B-TREE): a LIMIT 1 reads one page.
 */
ATF_TC_WITHOUT_HEAD(calls_range_uses_calls_thread);
ATF_TC_BODY(calls_range_uses_calls_thread, tc)
{
	sqlite3 *db = ixt_schema_db();

	/* calls --from --to, tree's ends, bt's innermost frame. */
	expect(db, "SELECT c.id FROM calls c " Q_CALLS_RANGE_WHERE,
	    "SCAN c VIRTUAL TABLE INDEX 19:T=SgSl", "TEMP B-TREE");
	expect(db, "SELECT c.id FROM calls c " Q_TREE_RANGE_WHERE,
	    "SCAN c VIRTUAL TABLE INDEX 0:IgIl", "TEMP B-TREE");
	expect(db, Q_CALL_FIRST_FROM,
	    "SCAN calls VIRTUAL TABLE INDEX 19:T=Sg", "TEMP B-TREE");
	expect(db, Q_CALL_LAST_UPTO,
	    "SCAN calls VIRTUAL TABLE INDEX 27:T=Sl", "TEMP B-TREE");
	/* func: the symbol index; a caller: by id. */
	expect(db, "SELECT c.id FROM calls c WHERE c.symbol = ?1",
	    "SCAN c VIRTUAL TABLE INDEX 2:Y=", NULL);
	expect(db, "SELECT p.symbol FROM calls c JOIN calls p ON "
	    "p.id = c.parent WHERE c.thread = 1",
	    "SCAN p VIRTUAL TABLE INDEX 1:I=", NULL);
	/* The ends of the table, without reading it. */
	expect(db, "SELECT id FROM calls ORDER BY id LIMIT 1",
	    "SCAN calls VIRTUAL TABLE INDEX 0:", "TEMP B-TREE");
	expect(db, "SELECT max(id) FROM calls",
	    "VIRTUAL TABLE INDEX 8:", NULL);
	sqlite3_close(db);
}

ATF_TC_WITHOUT_HEAD(exec_range_reads_only_its_chunks);
ATF_TC_BODY(exec_range_reads_only_its_chunks, tc)
{
	sqlite3 *db = ixt_schema_db();

	/*
	 * idxNum of exec_order/exec_insns (indexer/exec_vtab.c): 1 thread =,
	 * 2 and 4 seq bounds, 8 and 16 insn bounds.  7: thread and both seq
	 * bounds; 25: thread and insn = (both bounds).
	 */
	expect(db, Q_SEQ_OF_INSN, "VIRTUAL TABLE INDEX 25:", NULL);
	/* A range's blocks, counted by q_depth_counts(). */
	expect(db, Q_WALK_BLOCKS, "VIRTUAL TABLE INDEX 7:", NULL);
	sqlite3_close(db);
}

/*
 * --depth (calls at most D deep) on timeline and export --perfetto, and
 * the code run at most D deep on hot and coverage: q_walk.c's walk and
 * the stack where a window starts are searches of calls_thread; the
 * blocks left are read from exec_order by thread and seq bounds (and
 * counted into temp.q_cnt, which holds only what was asked for).
 */
ATF_TC_WITHOUT_HEAD(depth_walk_uses_calls_thread);
ATF_TC_BODY(depth_walk_uses_calls_thread, tc)
{
	sqlite3 *db = ixt_schema_db();

	/* calls: a thread's pages of the range (calls_vtab.c, above). */
	expect(db, "SELECT id, depth, entry_seq, exit_seq FROM calls "
	    Q_WALK_WHERE, "SCAN calls VIRTUAL TABLE INDEX 19:T=SgSl",
	    "TEMP B-TREE");
	expect(db, Q_WALK_INNER, "SCAN calls VIRTUAL TABLE INDEX 27:T=Sl",
	    "TEMP B-TREE");
	expect(db, Q_WALK_BLOCKS, "VIRTUAL TABLE INDEX 7:", "TEMP B-TREE");
	/* coverage over a range or a depth: its counts by thread and block. */
	ATF_REQUIRE_EQ(sqlite3_exec(db, "CREATE TEMP TABLE q_cnt(thread "
	    "INTEGER NOT NULL, block INTEGER NOT NULL, count INTEGER NOT NULL, "
	    "PRIMARY KEY (thread, block)) WITHOUT ROWID", NULL, NULL, NULL),
	    SQLITE_OK);
	expect(db, "SELECT s.name, " Q_CNT_FN_SUM " FROM symbols s WHERE "
	    "s.image = ?1", "SEARCH c USING PRIMARY KEY (thread=? AND "
	    "block=?)", "SCAN c");
	expect(db, "SELECT s.name, " Q_CNT_FN_SUM " FROM symbols s WHERE "
	    "s.image = ?1", "SEARCH b USING INDEX blocks_symbol (symbol=?)",
	    "SCAN b");
	sqlite3_close(db);
}

/*
 * coverage's instructions per function: the function's blocks (and its
 * aliases') by blocks_symbol, never every block once per function (the
 * first way of counting aliases did: 5 -> 27 s on six million blocks).
 */
ATF_TC_WITHOUT_HEAD(coverage_function_blocks_by_index);
ATF_TC_BODY(coverage_function_blocks_by_index, tc)
{
	sqlite3 *db = ixt_schema_db();

	expect(db, "SELECT s.name, " Q_FN_SUM_ALL " FROM symbols s WHERE "
	    "s.image = ?1", "SEARCH b USING INDEX blocks_symbol (symbol=?)",
	    "SCAN b");
	expect(db, "SELECT s.name, " Q_FN_SUM_THREAD " FROM symbols s WHERE "
	    "s.image = ?1", "SEARCH b USING INDEX blocks_symbol (symbol=?)",
	    "SCAN b");
	expect(db, "SELECT s.name, " Q_FN_SUM_THREAD " FROM symbols s WHERE "
	    "s.image = ?1", "SEARCH c USING PRIMARY KEY (thread=? AND "
	    "block=?)", "SCAN c");
	sqlite3_close(db);
}

/*
 * timeline: a time is found by bisection over calls_thread, events by
 * events_thread (by time, or by the blocks of an instruction range);
 * export --perfetto's time window by bisection over the timestamps'
 * primary key.
 */
ATF_TC_WITHOUT_HEAD(timeline_export_ranges_use_indexes);
ATF_TC_BODY(timeline_export_ranges_use_indexes, tc)
{
	sqlite3 *db = ixt_schema_db();

	expect(db, Q_TL_PROBE, "SCAN calls VIRTUAL TABLE INDEX 19:T=Sg",
	    "TEMP B-TREE");
	expect(db, Q_TL_EVENTS, "SEARCH events USING INDEX events_thread "
	    "(thread=?)", "SCAN events");
	expect(db, Q_TL_EVENTS_RANGE, "SEARCH events USING INDEX "
	    "events_thread (thread=? AND seq>? AND seq<?)", "SCAN events");
	expect(db, Q_TS_NEXT, "SEARCH timestamps USING PRIMARY KEY "
	    "(thread=? AND seq>?)", "SCAN timestamps");
	expect(db, Q_TS_PREV, "SEARCH timestamps USING PRIMARY KEY "
	    "(thread=? AND seq<?)", "SCAN timestamps");
	sqlite3_close(db);
}

/* The call_times view: by call through the key, by thread calls_thread. */
ATF_TC_WITHOUT_HEAD(call_times_uses_calls_indexes);
ATF_TC_BODY(call_times_uses_calls_indexes, tc)
{
	sqlite3 *db = ixt_schema_db();

	expect(db, "SELECT * FROM call_times WHERE call = ?1",
	    "SCAN c VIRTUAL TABLE INDEX 1:I=", "SCAN threads");
	expect(db, "SELECT * FROM call_times WHERE thread = ?1",
	    "SCAN c VIRTUAL TABLE INDEX 3:T=", "SCAN threads");
	sqlite3_close(db);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, depth_walk_uses_calls_thread);
	ATF_TP_ADD_TC(tp, coverage_function_blocks_by_index);
	ATF_TP_ADD_TC(tp, timeline_export_ranges_use_indexes);
	ATF_TP_ADD_TC(tp, call_times_uses_calls_indexes);
	ATF_TP_ADD_TC(tp, calls_range_uses_calls_thread);
	ATF_TP_ADD_TC(tp, exec_range_reads_only_its_chunks);
	return (atf_no_error());
}
