/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The range filters of hwtrace query (--from, --to, bt) use indexes, not
 * scans: SQLite's EXPLAIN QUERY PLAN of the statements the verbs run
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
#include "../../query/q_int.h"

static sqlite3 *
open_schema(void)
{
	sqlite3 *db;
	char *err = NULL;

	ATF_REQUIRE_EQ(sqlite3_open(":memory:", &db), SQLITE_OK);
	if (sqlite3_exec(db, HWTR_IX_SCHEMA_SQL HWTR_IX_INDEX_SQL, NULL, NULL,
	    &err) != SQLITE_OK)
		atf_tc_fail("schema does not create: %s", err);
	ATF_REQUIRE_EQ(hwtr_ix_sqlite_register(db), 0);
	return (db);
}

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

ATF_TC_WITHOUT_HEAD(calls_range_uses_calls_thread);
ATF_TC_BODY(calls_range_uses_calls_thread, tc)
{
	sqlite3 *db = open_schema();

	/* calls --from --to, tree's ends, bt's innermost frame. */
	expect(db, "SELECT c.id FROM calls c " Q_CALLS_RANGE_WHERE,
	    "SEARCH c USING INDEX calls_thread (thread=? AND entry_seq>? AND "
	    "entry_seq<?)", "SCAN c");
	expect(db, "SELECT c.id FROM calls c " Q_TREE_RANGE_WHERE,
	    "SEARCH c USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)",
	    "calls_thread");
	expect(db, Q_CALL_FIRST_FROM,
	    "SEARCH calls USING COVERING INDEX calls_thread (thread=? AND "
	    "entry_seq>?)", "SCAN calls");
	expect(db, Q_CALL_LAST_UPTO,
	    "SEARCH calls USING COVERING INDEX calls_thread (thread=? AND "
	    "entry_seq<?)", "SCAN calls");
	sqlite3_close(db);
}

ATF_TC_WITHOUT_HEAD(exec_range_reads_only_its_chunks);
ATF_TC_BODY(exec_range_reads_only_its_chunks, tc)
{
	sqlite3 *db = open_schema();

	/*
	 * idxNum of exec_order/exec_insns (indexer/exec_vtab.c): 1 thread =,
	 * 2 and 4 seq bounds, 8 and 16 insn bounds.  7: thread and both seq
	 * bounds; 25: thread and insn = (both bounds).
	 */
	expect(db, Q_SEQ_OF_INSN, "VIRTUAL TABLE INDEX 25:", NULL);
	expect(db, "SELECT * FROM " Q_RANGE_COUNTS " c",
	    "VIRTUAL TABLE INDEX 7:", NULL);
	sqlite3_close(db);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, calls_range_uses_calls_thread);
	ATF_TP_ADD_TC(tp, exec_range_reads_only_its_chunks);
	return (atf_no_error());
}
