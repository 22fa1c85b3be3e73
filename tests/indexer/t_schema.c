/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The database schema: it creates cleanly, hwtrace-db(5) documents every
 * table and column of it, and the exec_order / exec_insns functions expand
 * a hand-encoded execution order exactly as the manual describes, and
 * take bounds of any type as SQL compares them (an ordinary table of the
 * same rows says which match).
 */

#include <atf-c.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwtrace.h"
#include "hwtr_ix_sqlite.h"
#include "hwtr_test.h"
#include "../../indexer/schema.sql.h"
#include "../lib/hwtr_test_ix.h"

static char *
slurp(const char *path)
{
	FILE *fp;
	char *buf;
	long n;

	fp = fopen(path, "r");
	ATF_REQUIRE_MSG(fp != NULL, "cannot open %s", path);
	fseek(fp, 0, SEEK_END);
	n = ftell(fp);
	rewind(fp);
	buf = malloc((size_t)n + 1);
	ATF_REQUIRE(buf != NULL);
	ATF_REQUIRE_EQ(fread(buf, 1, (size_t)n, fp), (size_t)n);
	buf[n] = '\0';
	fclose(fp);
	return (buf);
}

/* @word appears in @man as a macro argument (".Li word", ".Ss word"...). */
static int
documented(const char *man, const char *word)
{
	const char *p = man;
	size_t n = strlen(word);

	while ((p = strstr(p, word)) != NULL) {
		char before = p == man ? ' ' : p[-1];
		char after = p[n];

		if ((before == ' ' || before == '\n') &&
		    (after == ' ' || after == '\n' || after == ','))
			return (1);
		p += n;
	}
	return (0);
}

ATF_TC_WITHOUT_HEAD(manual_documents_every_column);
ATF_TC_BODY(manual_documents_every_column, tc)
{
	sqlite3 *db = ixt_schema_db();
	sqlite3_stmt *t, *c;
	char *man = slurp(HWTR_TEST_SRC "/docs/hwtrace-db.5");
	char ver[64];
	int ntables = 0;

	ATF_REQUIRE_EQ(sqlite3_prepare_v2(db, "SELECT name FROM sqlite_schema "
	    "WHERE type = 'table' ORDER BY name", -1, &t, NULL), SQLITE_OK);
	while (sqlite3_step(t) == SQLITE_ROW) {
		const char *table = (const char *)sqlite3_column_text(t, 0);

		ntables++;
		ATF_CHECK_MSG(documented(man, table),
		    "table %s is not in hwtrace-db(5)", table);
		ATF_REQUIRE_EQ(sqlite3_prepare_v2(db, "SELECT name FROM "
		    "pragma_table_info(?1)", -1, &c, NULL), SQLITE_OK);
		sqlite3_bind_text(c, 1, table, -1, SQLITE_STATIC);
		while (sqlite3_step(c) == SQLITE_ROW) {
			const char *col =
			    (const char *)sqlite3_column_text(c, 0);

			ATF_CHECK_MSG(documented(man, col),
			    "column %s.%s is not in hwtrace-db(5)", table, col);
		}
		sqlite3_finalize(c);
	}
	sqlite3_finalize(t);
	ATF_CHECK_MSG(ntables >= 15, "expected >= 15 tables, got %d", ntables);
	snprintf(ver, sizeof(ver), "schema version %d",
	    HWTR_DB_SCHEMA_VERSION);
	ATF_CHECK_MSG(strstr(man, ver) != NULL,
	    "hwtrace-db(5) does not name schema version %d",
	    HWTR_DB_SCHEMA_VERSION);
	free(man);
	sqlite3_close(db);
}

ATF_TC_WITHOUT_HEAD(schema_sets_version_and_application_id);
ATF_TC_BODY(schema_sets_version_and_application_id, tc)
{
	sqlite3 *db = ixt_schema_db();
	sqlite3_stmt *st;

	ATF_REQUIRE_EQ(sqlite3_prepare_v2(db, "SELECT * FROM pragma_user_version,"
	    " pragma_application_id", -1, &st, NULL), SQLITE_OK);
	ATF_REQUIRE_EQ(sqlite3_step(st), SQLITE_ROW);
	ATF_CHECK_EQ(sqlite3_column_int(st, 0), HWTR_DB_SCHEMA_VERSION);
	ATF_CHECK_EQ(sqlite3_column_int(st, 1), HWTR_DB_APPLICATION_ID);
	sqlite3_finalize(st);
	sqlite3_close(db);
}

static void
query_eq(sqlite3 *db, const char *sql, const char *expect)
{
	sqlite3_stmt *st;
	char got[4096];
	size_t n = 0;
	int i;

	got[0] = '\0';
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		atf_tc_fail("%s: %s", sql, sqlite3_errmsg(db));
	while (sqlite3_step(st) == SQLITE_ROW) {
		for (i = 0; i < sqlite3_column_count(st); i++) {
			const char *v =
			    (const char *)sqlite3_column_text(st, i);

			n += (size_t)snprintf(got + n, sizeof(got) - n, "%s%s",
			    i ? "|" : "", v ? v : "");
			ATF_REQUIRE(n < sizeof(got));
		}
		n += (size_t)snprintf(got + n, sizeof(got) - n, ";");
	}
	sqlite3_finalize(st);
	ATF_CHECK_MSG(strcmp(got, expect) == 0, "%s:\nexpected %s\ngot      %s",
	    sql, expect, got);
}

/*
 * Thread 1 runs blocks 0 1 2 0 | 0 1 2 (two chunks), thread 2 runs 1 1.
 * Values are zigzag(block - (previous + 1)): the chunk 0 1 2 0 is
 * 00 00 00 05 as hwtrace-db(5) describes.
 */
#define EXEC_FIXTURE_SQL						\
	"INSERT INTO blocks (id, start_ip, last_ip, size, ninsns, "	\
	"mode, last_class, exec_count, insn_lens) VALUES "		\
	"(0, 4096, 4100, 6, 2, 64, 'other', 3, x'0402'),"		\
	"(1, 4102, 4102, 2, 1, 64, 'cond', 4, x'02'),"			\
	"(2, 4200, 4208, 9, 3, 64, 'jump', 2, x'030501');"		\
	"INSERT INTO exec_chunks VALUES "				\
	"(1, 0, 4, 0, 8, 100, x'00000005'),"				\
	"(1, 4, 3, 8, 6, NULL, x'000000'),"				\
	"(2, 0, 2, 0, 2, NULL, x'0201');"				\
	"INSERT INTO timestamps VALUES (1, 0, 0, 100, NULL),"		\
	"(1, 5, 10, 200, NULL);"

ATF_TC_WITHOUT_HEAD(exec_order_expands_chunks);
ATF_TC_BODY(exec_order_expands_chunks, tc)
{
	sqlite3 *db = ixt_schema_db();
	char *err = NULL;

	if (sqlite3_exec(db, EXEC_FIXTURE_SQL, NULL, NULL, &err) != SQLITE_OK)
		atf_tc_fail("insert: %s", err);
	query_eq(db, "SELECT thread, seq, block, insn, tsc FROM exec_order",
	    "1|0|0|0|100;1|1|1|2|100;1|2|2|3|100;1|3|0|6|100;1|4|0|8|100;"
	    "1|5|1|10|200;1|6|2|11|200;2|0|1|0|;2|1|1|1|;");
	query_eq(db, "SELECT seq, block FROM exec_order WHERE thread = 1 AND "
	    "seq >= 3 AND seq < 6", "3|0;4|0;5|1;");
	query_eq(db, "SELECT seq FROM exec_order WHERE thread = 1 AND seq = 4",
	    "4;");
	query_eq(db, "SELECT insn, ip FROM exec_insns WHERE thread = 1 AND "
	    "insn BETWEEN 7 AND 9", "7|4100;8|4096;9|4100;");
	query_eq(db, "SELECT count(*), sum(ip) FROM exec_insns",
	    "16|66218;");
	query_eq(db, "SELECT seq FROM exec_order WHERE thread = 1 "
	    "ORDER BY seq DESC LIMIT 2", "6;5;");
	sqlite3_close(db);
}

/*
 * A cursor hands its block facts to the next (exec_vtab.c xo_open()):
 * a block changed in between, by this connection or another, is read
 * again.  Block 1 runs at seq 1 and 5, block 0 at 0, 3 and 4; the
 * instruction counts follow from ninsns by construction.
 */
ATF_TC_WITHOUT_HEAD(exec_order_rereads_changed_blocks);
ATF_TC_BODY(exec_order_rereads_changed_blocks, tc)
{
	const char *q = "SELECT insn FROM exec_order WHERE thread = 1";
	sqlite3 *db, *other;
	char *err = NULL;

	ATF_REQUIRE_EQ(sqlite3_open("x.db", &db), SQLITE_OK);
	ATF_REQUIRE_EQ(hwtr_ix_sqlite_register(db), 0);
	if (sqlite3_exec(db, HWTR_IX_SCHEMA_SQL HWTR_IX_INDEX_SQL
	    "INSERT INTO blocks (id, start_ip, last_ip, size, ninsns, mode, "
	    "last_class, exec_count, insn_lens) VALUES "
	    "(0, 4096, 4100, 6, 2, 64, 'other', 3, x'0402'),"
	    "(1, 4102, 4102, 2, 1, 64, 'cond', 4, x'02'),"
	    "(2, 4200, 4208, 9, 3, 64, 'jump', 2, x'030501');"
	    "INSERT INTO exec_chunks VALUES "
	    "(1, 0, 4, 0, 8, NULL, x'00000005'),"
	    "(1, 4, 3, 8, 6, NULL, x'000000');", NULL, NULL, &err) !=
	    SQLITE_OK)
		atf_tc_fail("schema or insert: %s", err);
	query_eq(db, q, "0;2;3;6;8;10;11;");
	query_eq(db, q, "0;2;3;6;8;10;11;");
	/* Inside this connection's transaction, then another's commit. */
	ATF_REQUIRE_EQ(sqlite3_exec(db, "BEGIN; UPDATE blocks SET ninsns = 4 "
	    "WHERE id = 1", NULL, NULL, NULL), SQLITE_OK);
	query_eq(db, q, "0;2;6;9;8;10;14;");
	ATF_REQUIRE_EQ(sqlite3_exec(db, "COMMIT", NULL, NULL, NULL),
	    SQLITE_OK);
	ATF_REQUIRE_EQ(sqlite3_open("x.db", &other), SQLITE_OK);
	ATF_REQUIRE_EQ(sqlite3_exec(other, "UPDATE blocks SET ninsns = 1 "
	    "WHERE id = 0", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(other);
	query_eq(db, q, "0;1;5;8;8;9;13;");
	/* What a transaction rolled back made is forgotten. */
	ATF_REQUIRE_EQ(sqlite3_exec(db, "BEGIN; UPDATE blocks SET ninsns = 2 "
	    "WHERE id = 2", NULL, NULL, NULL), SQLITE_OK);
	query_eq(db, q, "0;1;5;7;8;9;13;");
	ATF_REQUIRE_EQ(sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL),
	    SQLITE_OK);
	query_eq(db, q, "0;1;5;8;8;9;13;");
	sqlite3_close(db);
}

/*
 * The rows of @tmpl with each '@' replaced by @table, as text ("a|b;"
 * a row), into @got.
 */
static void
rows_of(sqlite3 *db, const char *tmpl, const char *table, char *got,
    size_t size)
{
	char sql[512];
	sqlite3_stmt *st;
	size_t n = 0, t = strlen(table);
	int i;

	for (; *tmpl != '\0'; tmpl++) {
		ATF_REQUIRE(n + t + 1 < sizeof(sql));
		if (*tmpl == '@') {
			memcpy(sql + n, table, t);
			n += t;
		} else
			sql[n++] = *tmpl;
	}
	sql[n] = '\0';
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		atf_tc_fail("%s: %s", sql, sqlite3_errmsg(db));
	n = 0;
	got[0] = '\0';
	while (sqlite3_step(st) == SQLITE_ROW) {
		for (i = 0; i < sqlite3_column_count(st); i++) {
			const char *v =
			    (const char *)sqlite3_column_text(st, i);

			n += (size_t)snprintf(got + n, size - n, "%s%s",
			    i ? "|" : "", v ? v : "NULL");
			ATF_REQUIRE(n < size);
		}
		n += (size_t)snprintf(got + n, size - n, ";");
		ATF_REQUIRE(n < size);
	}
	ATF_REQUIRE_MSG(sqlite3_errcode(db) == SQLITE_DONE, "%s: %s", sql,
	    sqlite3_errmsg(db));
	sqlite3_finalize(st);
}

/*
 * The rows of @tmpl on the virtual table @vt and on the ordinary table
 * @ref ('@' in @tmpl names the table): the same, compared as text.
 */
static void
same_as_ordinary(sqlite3 *db, const char *tmpl, const char *vt,
    const char *ref)
{
	char a[4096], b[4096];

	rows_of(db, tmpl, vt, a, sizeof(a));
	rows_of(db, tmpl, ref, b, sizeof(b));
	ATF_CHECK_MSG(strcmp(a, b) == 0, "%s (@ is %s):\nan ordinary table: "
	    "%s\n%-18s %s", tmpl, vt, b, vt, a);
}

/*
 * Bounds on exec_order's thread and seq, and exec_insns' insn, given as
 * reals, text, blobs, NULL and int64's edges (exec_vtab.c xo_bound()):
 * the rows an ordinary table of the same rows gives (SQL compares a
 * number below any text or blob, a real as a number).  The rows are
 * exec_order_expands_chunks' fixture's, written out as that case states
 * them, and its instructions from the blocks' lengths.
 */
ATF_TC_WITHOUT_HEAD(exec_bounds_as_sql_compares);
ATF_TC_BODY(exec_bounds_as_sql_compares, tc)
{
	static const char *const order_w[] = {
		"seq = 2.5", "seq = 3.0", "seq > 2.5", "seq >= 2.5",
		"seq < 2.5", "seq <= 2.5", "seq >= 'x'", "seq > 'x'",
		"seq = 'x'", "seq < 'x'", "seq <= x'00'", "seq >= x'00'",
		"seq >= NULL", "seq < NULL",
		"seq < -9223372036854775808", "seq <= -9223372036854775808",
		"seq > 9223372036854775807", "seq >= 9223372036854775807",
		"seq < -9223372036854775808.0", "seq > 9.3e18",
		"seq < 9.3e18", "seq >= -1e300", "seq <= -1e300",
		"seq = 1e300",
		"thread = 1.0", "thread = 1.5", "thread = 'x'",
		"thread = 1 AND seq BETWEEN 1.5 AND 4.5",
		"thread = 2 AND seq > -0.5", "thread = 1 AND seq > 4 AND "
		"seq < 'x'", "thread = 1 AND seq = 4.0",
	};
	static const char *const insn_w[] = {
		"insn = 7.5", "insn = 7.0", "insn >= 7.5 AND insn < 9.5",
		"insn >= 'x'", "insn < 'x'", "insn > 12.5",
		"insn <= -9223372036854775808", "insn > 9223372036854775807",
		"thread = 1 AND insn BETWEEN 2.5 AND 'x'",
	};
	sqlite3 *db = ixt_schema_db();
	char *err = NULL, q[256];
	size_t i;

	if (sqlite3_exec(db, EXEC_FIXTURE_SQL
	    "CREATE TABLE ref_order (thread, seq, block, insn, tsc);"
	    "INSERT INTO ref_order VALUES (1, 0, 0, 0, 100), (1, 1, 1, 2, 100),"
	    "(1, 2, 2, 3, 100), (1, 3, 0, 6, 100), (1, 4, 0, 8, 100),"
	    "(1, 5, 1, 10, 200), (1, 6, 2, 11, 200), (2, 0, 1, 0, NULL),"
	    "(2, 1, 1, 1, NULL);"
	    "CREATE TABLE ref_insns (thread, insn, ip);"
	    "INSERT INTO ref_insns VALUES (1, 0, 4096), (1, 1, 4100),"
	    "(1, 2, 4102), (1, 3, 4200), (1, 4, 4203), (1, 5, 4208),"
	    "(1, 6, 4096), (1, 7, 4100), (1, 8, 4096), (1, 9, 4100),"
	    "(1, 10, 4102), (1, 11, 4200), (1, 12, 4203), (1, 13, 4208),"
	    "(2, 0, 4102), (2, 1, 4102);", NULL, NULL, &err) != SQLITE_OK)
		atf_tc_fail("insert: %s", err);
	same_as_ordinary(db, "SELECT thread, seq, block, insn, tsc FROM @ "
	    "ORDER BY thread, seq", "exec_order", "ref_order");
	same_as_ordinary(db, "SELECT thread, insn, ip FROM @ ORDER BY thread, "
	    "insn", "exec_insns", "ref_insns");
	for (i = 0; i < sizeof(order_w) / sizeof(order_w[0]); i++) {
		snprintf(q, sizeof(q), "SELECT thread, seq, block FROM @ WHERE "
		    "%s ORDER BY thread, seq", order_w[i]);
		same_as_ordinary(db, q, "exec_order", "ref_order");
	}
	for (i = 0; i < sizeof(insn_w) / sizeof(insn_w[0]); i++) {
		snprintf(q, sizeof(q), "SELECT thread, insn, ip FROM @ WHERE "
		    "%s ORDER BY thread, insn", insn_w[i]);
		same_as_ordinary(db, q, "exec_insns", "ref_insns");
	}
	sqlite3_close(db);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, manual_documents_every_column);
	ATF_TP_ADD_TC(tp, schema_sets_version_and_application_id);
	ATF_TP_ADD_TC(tp, exec_order_expands_chunks);
	ATF_TP_ADD_TC(tp, exec_order_rereads_changed_blocks);
	ATF_TP_ADD_TC(tp, exec_bounds_as_sql_compares);
	return (atf_no_error());
}
