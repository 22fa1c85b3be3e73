/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The call paths of the calls column store (indexer/colpath.c), on call
 * histories written here whose every path is known by construction:
 * the calls merged by the path of their callers, counts and sums exact,
 * ids in the order of each path's first call; a thread's calls never
 * under another thread's; a caller that is not among the calls still
 * open makes a root, as the query's tree makes one; call sites split the
 * paths; callees taken in turn keep their paths apart; and a history of
 * more paths than the limit gets no rows.
 */

#include <atf-c.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwtrace.h"
#include "hwtr_ix_sqlite.h"
#include "../../indexer/schema.sql.h"
#include "../../indexer/colstore.h"

static sqlite3 *
schema_db(void)
{
	sqlite3 *db;
	char *err = NULL;

	ATF_REQUIRE_EQ(sqlite3_open(":memory:", &db), SQLITE_OK);
	ATF_REQUIRE_EQ(hwtr_ix_sqlite_register(db), 0);
	if (sqlite3_exec(db, HWTR_IX_SCHEMA_SQL, NULL, NULL, &err) !=
	    SQLITE_OK)
		atf_tc_fail("schema does not create: %s", err);
	return (db);
}

/*
 * A call: @id of @thread at @depth under @parent (0: none), symbol @sym,
 * call site @cip (0: none), @insns of them @self its own, @dur ns (-1:
 * no time).
 */
static void
put(struct hwtr_cs_paths *p, int64_t id, int64_t thread, int64_t parent,
    int64_t depth, int64_t sym, int64_t cip, int64_t insns, int64_t self,
    int64_t dur)
{
	struct hwtr_cs_row r;

	memset(&r, 0, sizeof(r));
	r.v[CS_ID] = id;
	r.v[CS_THREAD] = thread;
	r.v[CS_PARENT] = parent;
	if (parent == 0)
		r.nul |= 1u << CS_PARENT;
	r.v[CS_DEPTH] = depth;
	r.v[CS_SYMBOL] = sym;
	r.v[CS_FUNC_IP] = 0x1000 * sym;
	r.v[CS_CALL_IP] = cip;
	if (cip == 0)
		r.nul |= 1u << CS_CALL_IP;
	r.v[CS_INSNS] = insns;
	r.v[CS_SELF_INSNS] = self;
	if (dur >= 0) {
		r.v[CS_ENTRY_NS] = 1000 * id;
		r.v[CS_EXIT_NS] = 1000 * id + dur;
	} else
		r.nul |= (1u << CS_ENTRY_NS) | (1u << CS_EXIT_NS);
	ATF_REQUIRE_EQ(hwtr_cs_paths_add(p, &r), 0);
}

/* A new set of paths, or the test fails. */
static struct hwtr_cs_paths *
paths_new(void)
{
	struct hwtr_cs_paths *p;

	ATF_REQUIRE_EQ(hwtr_cs_paths_new(&p), 0);
	return (p);
}

/* A database with the schema and @p's call_paths written; @p freed. */
static sqlite3 *
written(struct hwtr_cs_paths *p)
{
	sqlite3 *db = schema_db();
	char err[256] = "";

	ATF_REQUIRE_MSG(hwtr_cs_paths_write(p, db, err, sizeof(err)) == 0,
	    "write: %s", err);
	hwtr_cs_paths_free(p);
	return (db);
}

/* call_paths as "id thread parent depth symbol call_ip calls ... dur;". */
static void
rows_eq(sqlite3 *db, const char *want)
{
	sqlite3_stmt *st;
	char got[4096];
	size_t n = 0;
	int i;

	got[0] = '\0';
	ATF_REQUIRE_EQ(sqlite3_prepare_v2(db, "SELECT id, thread, "
	    "coalesce(parent, '-'), depth, symbol, coalesce(call_ip, '-'), "
	    "calls, insns, self_insns, coalesce(duration_ns, '-') FROM "
	    "call_paths ORDER BY id", -1, &st, NULL), SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW) {
		for (i = 0; i < sqlite3_column_count(st); i++) {
			n += (size_t)snprintf(got + n, sizeof(got) - n, "%s%s",
			    i ? " " : "", sqlite3_column_text(st, i));
			ATF_REQUIRE(n < sizeof(got));
		}
		n += (size_t)snprintf(got + n, sizeof(got) - n, ";");
		ATF_REQUIRE(n < sizeof(got));
	}
	sqlite3_finalize(st);
	ATF_CHECK_MSG(strcmp(got, want) == 0, "expected call_paths '%s', "
	    "got '%s'", want, got);
}

ATF_TC_WITHOUT_HEAD(paths_merge_by_caller_path);
ATF_TC_BODY(paths_merge_by_caller_path, tc)
{
	struct hwtr_cs_paths *p = paths_new();
	sqlite3 *db;

	/*
	 * Thread 1: main(1) calls f(2) twice from one site, each calling
	 * g(3); then h(4) from main, which calls g(3) (another path); a
	 * second root main.  Thread 2: main with a parent id of thread 1,
	 * which is no caller of its: a root of thread 2.
	 */
	put(p, 1, 1, 0, 0, 1, 0, 100, 10, 50);
	put(p, 2, 1, 1, 1, 2, 0x10, 30, 20, 20);
	put(p, 3, 1, 2, 2, 3, 0x20, 10, 10, -1);
	put(p, 4, 1, 1, 1, 2, 0x10, 40, 25, 10);
	put(p, 5, 1, 4, 2, 3, 0x20, 15, 15, 5);
	put(p, 6, 1, 1, 1, 4, 0x30, 20, 13, -1);
	put(p, 7, 1, 6, 2, 3, 0x40, 7, 7, -1);
	put(p, 8, 1, 0, 0, 1, 0, 5, 5, 1);
	put(p, 9, 2, 1, 0, 1, 0, 9, 9, -1);
	db = written(p);
	rows_eq(db,
	    "1 1 - 0 1 - 2 105 15 51;"
	    "2 1 1 1 2 16 2 70 45 30;"
	    "3 1 2 2 3 32 2 25 25 5;"
	    "4 1 1 1 4 48 1 20 13 -;"
	    "5 1 4 2 3 64 1 7 7 -;"
	    "6 2 - 0 1 - 1 9 9 -;");
	sqlite3_close(db);
}

ATF_TC_WITHOUT_HEAD(paths_caller_among_open_calls);
ATF_TC_BODY(paths_caller_among_open_calls, tc)
{
	struct hwtr_cs_paths *p = paths_new();
	sqlite3 *db;

	/*
	 * a(1) calls b(2); c(3) names b as its caller at depth 1, where b
	 * is no longer open (c's depth closes it): a root, as the query's
	 * tree takes it; d(4) names a, still open, under it.  Same site.
	 */
	put(p, 1, 1, 0, 0, 1, 0, 10, 1, -1);
	put(p, 2, 1, 1, 1, 2, 0x10, 2, 2, -1);
	put(p, 3, 1, 2, 1, 3, 0x10, 3, 3, -1);
	put(p, 4, 1, 1, 1, 4, 0x10, 4, 4, -1);
	db = written(p);
	rows_eq(db,
	    "1 1 - 0 1 - 1 10 1 -;"
	    "2 1 1 1 2 16 1 2 2 -;"
	    "3 1 - 1 3 16 1 3 3 -;"
	    "4 1 1 1 4 16 1 4 4 -;");
	sqlite3_close(db);
}

ATF_TC_WITHOUT_HEAD(paths_callees_in_turn);
ATF_TC_BODY(paths_callees_in_turn, tc)
{
	struct hwtr_cs_paths *p = paths_new();
	sqlite3 *db;

	/*
	 * A caller's next callee is tried against its last one first
	 * (colpath.c): main(1) calls f(2) and g(3) in turn, g twice in a
	 * row, f from a second site (another path), f under g, then f from
	 * main again after g's f; two roots main of thread 1, one of thread
	 * 2 (another path).
	 */
	put(p, 1, 1, 0, 0, 1, 0, 100, 10, -1);
	put(p, 2, 1, 1, 1, 2, 0x10, 10, 10, -1);
	put(p, 3, 1, 1, 1, 3, 0x20, 20, 20, -1);
	put(p, 4, 1, 1, 1, 2, 0x10, 10, 10, -1);
	put(p, 5, 1, 1, 1, 3, 0x20, 20, 20, -1);
	put(p, 6, 1, 1, 1, 3, 0x20, 20, 19, -1);
	put(p, 7, 1, 6, 2, 2, 0x10, 1, 1, -1);
	put(p, 8, 1, 1, 1, 2, 0x11, 4, 4, -1);
	put(p, 9, 1, 1, 1, 2, 0x10, 10, 10, -1);
	put(p, 10, 1, 0, 0, 1, 0, 50, 50, -1);
	put(p, 11, 2, 0, 0, 1, 0, 7, 7, -1);
	db = written(p);
	rows_eq(db,
	    "1 1 - 0 1 - 2 150 60 -;"
	    "2 1 1 1 2 16 3 30 30 -;"
	    "3 1 1 1 3 32 3 60 59 -;"
	    "4 1 3 2 2 16 1 1 1 -;"
	    "5 1 1 1 2 17 1 4 4 -;"
	    "6 2 - 0 1 - 1 7 7 -;");
	sqlite3_close(db);
}

ATF_TC_WITHOUT_HEAD(paths_too_many_none_written);
ATF_TC_BODY(paths_too_many_none_written, tc)
{
	struct hwtr_cs_paths *p = paths_new();
	sqlite3 *db;
	sqlite3_stmt *st;
	int64_t i, n = 600000;

	/* 600,000 roots of distinct symbols: as many paths, over the limit. */
	for (i = 1; i <= n; i++)
		put(p, i, 1, 0, 0, i, 0, 1, 1, -1);
	db = written(p);
	ATF_REQUIRE_EQ(sqlite3_prepare_v2(db, "SELECT count(*) FROM "
	    "call_paths", -1, &st, NULL), SQLITE_OK);
	ATF_REQUIRE_EQ(sqlite3_step(st), SQLITE_ROW);
	ATF_CHECK_MSG(sqlite3_column_int64(st, 0) == 0, "expected no rows "
	    "for %lld paths, got %lld", (long long)n,
	    (long long)sqlite3_column_int64(st, 0));
	sqlite3_finalize(st);
	sqlite3_close(db);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, paths_merge_by_caller_path);
	ATF_TP_ADD_TC(tp, paths_caller_among_open_calls);
	ATF_TP_ADD_TC(tp, paths_callees_in_turn);
	ATF_TP_ADD_TC(tp, paths_too_many_none_written);
	return (atf_no_error());
}
