/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The calls column store (indexer/colstore.c) and its virtual table
 * (indexer/calls_vtab*.c), against call histories generated here, whose
 * every row is known: three threads of calls given to the writer in exit
 * order (a root that lasts the whole thread, so that its page is written
 * before it ends and it comes late), read back through SQL and compared
 * with the generated rows and with counts computed here; constraints that
 * read only their pages (the others are made unreadable); damaged pages
 * that give an error, not a crash; rows written with SQL; the copy of
 * each symbol's calls (calls_bysym) with their callers, against the
 * generated rows, read with the pages made unreadable; and what the
 * fuzzer of SQL found wrong after writes (dd1d25f), each against an
 * ordinary table holding the generated rows.
 */

#include <atf-c.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwtrace.h"
#include "hwtr_test.h"
#include "hwtr_ix_sqlite.h"
#include "../../indexer/schema.sql.h"
#include "../../indexer/colstore.h"
#include "../../indexer/hwtr_ix.h"

#define MAXCALLS	60000

struct gen {
	uint64_t	s;
	struct hwtr_cs_row *rows;	/* by id - 1 */
	int64_t		nrows;
	/*
	 * For the symbol copy made as the rows come: which calls were
	 * given (by id - 1), and whether the calls still open are said to
	 * be final even where pop() changes them (id % 97 == 0).
	 */
	uint8_t		*given;
	int		open_calls, lie;
	int64_t		asked;
};

static uint32_t
rnd(struct gen *g)
{
	g->s = g->s * 6364136223846793005ULL + 1442695040888963407ULL;
	return ((uint32_t)(g->s >> 33));
}

#define NUL(c)	(1u << (c))

/* Close call @id at (@seq, @insn, @tsc); hand it to the writer. */
static void
pop(struct gen *g, struct hwtr_cs_writer *w, int64_t id, int64_t seq,
    int64_t insn, int64_t tsc, int kind)
{
	struct hwtr_cs_row *r = &g->rows[id - 1];

	r->v[CS_EXIT_SEQ] = seq;
	r->v[CS_EXIT_INSN] = insn;
	r->v[CS_EXIT_KIND] = kind;
	r->v[CS_EXIT_TSC] = tsc;
	r->v[CS_EXIT_NS] = tsc + 1700000000000000000LL;
	if (r->nul & NUL(CS_ENTRY_TSC))
		r->nul |= NUL(CS_EXIT_TSC) | NUL(CS_EXIT_NS);
	r->v[CS_INSNS] = insn - r->v[CS_ENTRY_INSN];
	r->v[CS_SELF_INSNS] = r->v[CS_INSNS] / 3;
	r->v[CS_BLOCKS] = seq - r->v[CS_ENTRY_SEQ];
	if (id % 97 == 0) {
		/* Values an indexer would not write: the codec takes them. */
		r->v[CS_BLOCKS] += 5;
		r->v[CS_FUNC_IP] = (int64_t)0xffffffff81000000ULL;
		r->v[CS_EXIT_TSC] = -12345;
		r->nul &= ~NUL(CS_EXIT_TSC);
		r->nul |= NUL(CS_EXIT_NS);
	}
	g->given[id - 1] = 1;
	/* Two rows in three filled in place, as the indexer does. */
	if (id % 3 != 0) {
		*hwtr_cs_writer_slot(w, id) = *r;
		ATF_REQUIRE_MSG(hwtr_cs_writer_commit(w) == 0, "commit %lld: "
		    "%s", (long long)id, hwtr_cs_writer_error(w));
	} else
		ATF_REQUIRE_MSG(hwtr_cs_writer_put(w, r) == 0, "put %lld: %s",
		    (long long)id, hwtr_cs_writer_error(w));
}

/* @n calls of thread @t, ids from g->nrows + 1, written in exit order. */
static void
gen_thread(struct gen *g, struct hwtr_cs_writer *w, int64_t t, int64_t n)
{
	int64_t stack[256], base = g->nrows + 1, seq = 0, insn = 0, tsc = 0;
	int depth = 0, floor = 1, rungs = 0;

	ATF_REQUIRE(hwtr_cs_writer_thread(w, t, base) == 0);
	while (g->nrows - base + 1 < n || depth > 0) {
		/*
		 * The root stays; its children mostly nest a little.  In
		 * thread 3 a call entered every 1100 calls stays open too
		 * (floor): 30 calls open in 30 pages, more than the writer
		 * keeps, so that pages are written without them.
		 */
		int push = g->nrows - base + 1 < n && (depth <= floor ||
		    (depth == floor + 1 ? rnd(g) % 10 != 0 : depth < 90 &&
		    rnd(g) % 100 < 49));

		if (push && t == 3 && rungs < 30 &&
		    (g->nrows - base + 1) % 1100 == 1099) {
			floor = depth + 1;
			rungs++;
		}

		seq += 1 + rnd(g) % 3;
		insn += 1 + rnd(g) % 10;
		if (rnd(g) % 2)
			tsc += rnd(g) % 100;
		if (push) {
			struct hwtr_cs_row *r = &g->rows[g->nrows];
			int64_t id = ++g->nrows;

			memset(r, 0, sizeof(*r));
			r->v[CS_ID] = id;
			r->v[CS_THREAD] = t;
			if (depth > 0) {
				r->v[CS_PARENT] = stack[depth - 1];
				r->v[CS_CALL_IP] = g->rows[stack[depth - 1] -
				    1].v[CS_FUNC_IP] + 5 + rnd(g) % 40;
				r->v[CS_ENTRY_KIND] = rnd(g) % 50 ? 0 : 3;
			} else {
				r->nul |= NUL(CS_PARENT) | NUL(CS_CALL_IP);
				r->v[CS_ENTRY_KIND] = 1;
			}
			r->v[CS_DEPTH] = depth;
			/*
			 * In thread 3 half the calls are of symbol 1: pages
			 * of the symbol copy filled one after the other.
			 */
			if (rnd(g) % 20 == 0)
				r->nul |= NUL(CS_SYMBOL);
			else if (t == 3 && rnd(g) % 2)
				r->v[CS_SYMBOL] = 1;
			else
				r->v[CS_SYMBOL] = 1 + rnd(g) % 50;
			r->v[CS_FUNC_IP] = 0x401000 + 64 * r->v[CS_SYMBOL];
			r->v[CS_ENTRY_SEQ] = seq;
			r->v[CS_ENTRY_INSN] = insn;
			/* Thread 1 has no time at its start. */
			if (t == 1 && seq < 200)
				r->nul |= NUL(CS_ENTRY_TSC) | NUL(CS_ENTRY_NS);
			r->v[CS_ENTRY_TSC] = tsc;
			r->v[CS_ENTRY_NS] = tsc + 1700000000000000000LL;
			stack[depth++] = id;
		} else {
			depth--;
			pop(g, w, stack[depth], seq, insn, tsc,
			    g->nrows - base + 1 >= n ? 2 : rnd(g) % 30 ? 0 : 1);
		}
	}
}

/*
 * The writer's open-calls callback: a call entered and not given, with
 * its columns at entry; pop() changes the func_ip of every 97th call, so
 * those are said not to be final (unless g->lie).
 */
static int
open_call(void *arg, int64_t id, struct hwtr_cs_row *r)
{
	struct gen *g = arg;
	const struct hwtr_cs_row *e;
	static const int key[] = { CS_ID, CS_THREAD, CS_PARENT, CS_DEPTH,
	    CS_SYMBOL, CS_FUNC_IP, CS_CALL_IP };
	size_t i;

	g->asked++;
	if (id < 1 || id > g->nrows || g->given[id - 1] ||
	    (id % 97 == 0 && !g->lie))
		return (0);
	e = &g->rows[id - 1];
	r->nul = 0;
	for (i = 0; i < sizeof(key) / sizeof(key[0]); i++) {
		r->v[key[i]] = e->v[key[i]];
		r->nul |= e->nul & NUL(key[i]);
	}
	return (1);
}

/* A database with the schema and three generated threads. */
static sqlite3 *
make_db_opt(struct gen *g, int open_calls, int lie, int *streamedp)
{
	struct hwtr_cs_writer *w;
	sqlite3 *db;
	char *err = NULL;

	memset(g, 0, sizeof(*g));
	g->s = 42;
	g->open_calls = open_calls;
	g->lie = lie;
	g->rows = calloc(MAXCALLS, sizeof(*g->rows));
	g->given = calloc(MAXCALLS, 1);
	ATF_REQUIRE(g->rows != NULL && g->given != NULL);
	ATF_REQUIRE_EQ(sqlite3_open(":memory:", &db), SQLITE_OK);
	ATF_REQUIRE_EQ(hwtr_ix_sqlite_register(db), 0);
	if (sqlite3_exec(db, HWTR_IX_SCHEMA_SQL HWTR_IX_INDEX_SQL, NULL, NULL,
	    &err) != SQLITE_OK)
		atf_tc_fail("schema does not create: %s", err);
	ATF_REQUIRE_EQ(hwtr_cs_writer_open(db, &w), 0);
	if (open_calls)
		hwtr_cs_writer_open_calls(w, open_call, g);
	/* 5000, 3001 (the next thread's ids do not start on a page), 40000. */
	gen_thread(g, w, 1, 5000);
	gen_thread(g, w, 2, 3001);
	gen_thread(g, w, 3, 40000);
	ATF_REQUIRE_MSG(hwtr_cs_writer_finish(w) == 0, "finish: %s",
	    hwtr_cs_writer_error(w));
	if (streamedp != NULL)
		*streamedp = hwtr_cs_writer_streamed(w);
	hwtr_cs_writer_close(w);
	free(g->given);
	g->given = NULL;
	return (db);
}

static sqlite3 *
make_db(struct gen *g)
{
	return (make_db_opt(g, 0, 0, NULL));
}

static int64_t
one(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	int64_t v = -1;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		atf_tc_fail("cannot prepare '%s': %s", sql, sqlite3_errmsg(db));
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	else
		atf_tc_fail("'%s': %s", sql, sqlite3_errmsg(db));
	sqlite3_finalize(st);
	return (v);
}

static const char *const col_names[CS_NCOLS] = { "id", "thread", "parent",
    "depth", "symbol", "func_ip", "call_ip", "entry_kind", "exit_kind",
    "entry_seq", "exit_seq", "entry_insn", "exit_insn", "entry_tsc",
    "exit_tsc", "entry_ns", "exit_ns", "insns", "self_insns", "blocks" };

/* Every row of calls, in id order, is the generated one. */
static void
check_all(sqlite3 *db, const struct gen *g, int64_t skip_id)
{
	sqlite3_stmt *st;
	int64_t k = 0;
	int c;

	ATF_REQUIRE_EQ(sqlite3_prepare_v2(db, "SELECT * FROM calls ORDER BY id",
	    -1, &st, NULL), SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW) {
		const struct hwtr_cs_row *r;

		if (k + 1 == skip_id)
			k++;
		ATF_REQUIRE_MSG(k < g->nrows, "more rows than generated");
		r = &g->rows[k++];
		for (c = 0; c < CS_NCOLS; c++) {
			if (c == CS_ENTRY_KIND || c == CS_EXIT_KIND) {
				const char *want = (c == CS_ENTRY_KIND ?
				    hwtr_cs_entry_kinds :
				    hwtr_cs_exit_kinds)[r->v[c]];
				const char *got =
				    (const char *)sqlite3_column_text(st, c);

				ATF_REQUIRE_MSG(got != NULL &&
				    strcmp(got, want) == 0, "call %lld: %s "
				    "expected %s, got %s", (long long)r->v[0],
				    col_names[c], want, got ? got : "NULL");
			} else if (r->nul & NUL(c))
				ATF_REQUIRE_MSG(sqlite3_column_type(st, c) ==
				    SQLITE_NULL, "call %lld: %s expected NULL, "
				    "got %lld", (long long)r->v[0], col_names[c],
				    (long long)sqlite3_column_int64(st, c));
			else
				ATF_REQUIRE_MSG(sqlite3_column_type(st, c) ==
				    SQLITE_INTEGER && sqlite3_column_int64(st,
				    c) == r->v[c], "call %lld: %s expected "
				    "%lld, got %lld", (long long)r->v[0],
				    col_names[c], (long long)r->v[c],
				    (long long)sqlite3_column_int64(st, c));
		}
	}
	ATF_REQUIRE_MSG(sqlite3_errcode(db) == SQLITE_DONE ||
	    sqlite3_errcode(db) == SQLITE_OK, "scan: %s", sqlite3_errmsg(db));
	sqlite3_finalize(st);
	if (k + 1 == skip_id)
		k++;
	ATF_REQUIRE_EQ_MSG(k, g->nrows, "expected %lld rows, got %lld",
	    (long long)g->nrows, (long long)k);
}

ATF_TC_WITHOUT_HEAD(rows_read_back);
ATF_TC_BODY(rows_read_back, tc)
{
	struct gen g;
	sqlite3 *db = make_db(&g);
	char sql[256];
	int64_t i, n, want, lo, hi;

	check_all(db, &g, -1);
	/* The root of thread 3 came after its page was written. */
	ATF_REQUIRE_MSG(g.rows[8001].v[CS_THREAD] == 3 &&
	    g.rows[8001].v[CS_DEPTH] == 0 &&
	    g.rows[8001].v[CS_EXIT_SEQ] > g.rows[g.nrows - 2].v[CS_ENTRY_SEQ],
	    "thread %lld depth %lld exit %lld last entry %lld",
	    (long long)g.rows[8001].v[CS_THREAD],
	    (long long)g.rows[8001].v[CS_DEPTH],
	    (long long)g.rows[8001].v[CS_EXIT_SEQ],
	    (long long)g.rows[g.nrows - 2].v[CS_ENTRY_SEQ]);
	/* Lookups by id, between threads and past the end. */
	for (i = 1; i <= g.nrows + 2; i += 37) {
		snprintf(sql, sizeof(sql), "SELECT count(*) FROM calls WHERE "
		    "id = %lld AND entry_seq = %lld", (long long)i,
		    (long long)(i <= g.nrows ? g.rows[i - 1].v[CS_ENTRY_SEQ] :
		    0));
		ATF_REQUIRE_EQ_MSG(one(db, sql), i <= g.nrows,
		    "id %lld", (long long)i);
	}
	/* A symbol's calls, with and without a thread. */
	for (i = 1; i <= 50; i += 7) {
		int64_t t;

		for (t = 0; t <= 3; t++) {
			for (want = 0, n = 0; n < g.nrows; n++)
				want += !(g.rows[n].nul & NUL(CS_SYMBOL)) &&
				    g.rows[n].v[CS_SYMBOL] == i &&
				    (t == 0 || g.rows[n].v[CS_THREAD] == t);
			snprintf(sql, sizeof(sql), "SELECT count(*) FROM calls "
			    "WHERE symbol = %lld%s%lld", (long long)i,
			    t ? " AND thread = " : " AND 0 = ", (long long)t);
			ATF_REQUIRE_EQ_MSG(one(db, sql), want,
			    "symbol %lld thread %lld", (long long)i,
			    (long long)t);
		}
	}
	/* Ranges of entry positions, both directions. */
	for (lo = 0; lo < 150000; lo += 9973) {
		hi = lo + 5000;
		for (want = 0, n = 0; n < g.nrows; n++)
			want += g.rows[n].v[CS_THREAD] == 3 &&
			    g.rows[n].v[CS_ENTRY_SEQ] >= lo &&
			    g.rows[n].v[CS_ENTRY_SEQ] <= hi;
		snprintf(sql, sizeof(sql), "SELECT count(*) FROM calls WHERE "
		    "thread = 3 AND entry_seq BETWEEN %lld AND %lld",
		    (long long)lo, (long long)hi);
		ATF_REQUIRE_EQ_MSG(one(db, sql), want, "range %lld-%lld",
		    (long long)lo, (long long)hi);
		for (want = -1, n = 0; n < g.nrows; n++)
			if (g.rows[n].v[CS_THREAD] == 3 &&
			    g.rows[n].v[CS_ENTRY_SEQ] <= hi)
				want = g.rows[n].v[CS_ID];
		snprintf(sql, sizeof(sql), "SELECT coalesce((SELECT id FROM "
		    "calls WHERE thread = 3 AND entry_seq <= %lld ORDER BY "
		    "entry_seq DESC, id DESC LIMIT 1), -1)", (long long)hi);
		ATF_REQUIRE_EQ_MSG(one(db, sql), want, "last up to %lld",
		    (long long)hi);
	}
	/* Parents through a join on id. */
	for (want = 0, n = 0; n < g.nrows; n++)
		want += !(g.rows[n].nul & NUL(CS_PARENT)) &&
		    g.rows[g.rows[n].v[CS_PARENT] - 1].v[CS_DEPTH] + 1 ==
		    g.rows[n].v[CS_DEPTH];
	ATF_REQUIRE_EQ(one(db, "SELECT count(*) FROM calls c JOIN calls p ON "
	    "p.id = c.parent WHERE p.depth + 1 = c.depth"), want);
	/*
	 * Twelve cursors at once, each on a page of its own: more than the
	 * table keeps decoded, so some read pages of their own.
	 */
	{
		char q[2048];
		size_t len;
		int j;

		len = (size_t)snprintf(q, sizeof(q), "SELECT sum(c12.depth) "
		    "FROM calls c1");
		for (j = 2; j <= 12; j++)
			len += (size_t)snprintf(q + len, sizeof(q) - len,
			    " JOIN calls c%d ON c%d.id = c%d.id + 1100", j, j,
			    j - 1);
		snprintf(q + len, sizeof(q) - len, " WHERE c1.id <= 20000");
		for (want = 0, n = 0; n < 20000; n++)
			if (n + 11 * 1100 < g.nrows)
				want += g.rows[n + 11 * 1100].v[CS_DEPTH];
		ATF_REQUIRE_EQ_MSG(one(db, q), want, "%s", q);
	}
	ATF_REQUIRE_EQ(one(db, "SELECT id FROM calls ORDER BY id LIMIT 1"), 1);
	ATF_REQUIRE_EQ(one(db, "SELECT max(id) FROM calls"), g.nrows);
	sqlite3_close(db);
	free(g.rows);
}

ATF_TC_WITHOUT_HEAD(ranges_read_only_their_pages);
ATF_TC_BODY(ranges_read_only_their_pages, tc)
{
	struct gen g;
	sqlite3 *db = make_db(&g);
	sqlite3_stmt *st;
	int64_t n, want = 0, lo = 60000, hi = 61000;
	char sql[512];

	for (n = 0; n < g.nrows; n++)
		want += g.rows[n].v[CS_THREAD] == 3 &&
		    g.rows[n].v[CS_ENTRY_SEQ] >= lo &&
		    g.rows[n].v[CS_ENTRY_SEQ] <= hi;
	ATF_REQUIRE(want > 0);
	/* Every page that cannot hold the range becomes unreadable. */
	snprintf(sql, sizeof(sql), "UPDATE calls_pages SET data = x'02ff' "
	    "WHERE NOT (thread = 3 AND seq1 >= %lld AND seq0 <= %lld)",
	    (long long)lo, (long long)hi);
	ATF_REQUIRE_EQ(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	ATF_REQUIRE(one(db, "SELECT count(*) FROM calls_pages WHERE data = "
	    "x'02ff'") > 40);
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM calls WHERE thread = "
	    "3 AND entry_seq >= %lld AND entry_seq <= %lld", (long long)lo,
	    (long long)hi);
	ATF_REQUIRE_EQ_MSG(one(db, sql), want, "the range read other pages: "
	    "%s", sqlite3_errmsg(db));
	/* A scan of all of them fails, saying which page. */
	ATF_REQUIRE_EQ(sqlite3_prepare_v2(db, "SELECT count(*) FROM calls",
	    -1, &st, NULL), SQLITE_OK);
	ATF_REQUIRE(sqlite3_step(st) != SQLITE_ROW);
	ATF_REQUIRE_MSG(strstr(sqlite3_errmsg(db), "corrupt page of ids from "
	    "1 in calls_pages") != NULL, "message: %s", sqlite3_errmsg(db));
	sqlite3_finalize(st);
	sqlite3_close(db);
	free(g.rows);
}

ATF_TC_WITHOUT_HEAD(damaged_pages_give_errors);
ATF_TC_BODY(damaged_pages_give_errors, tc)
{
	struct gen g;
	sqlite3 *db = make_db(&g);
	sqlite3_stmt *get, *put, *q;
	uint8_t *blob;
	int len, cut, i, errs = 0, rc;

	ATF_REQUIRE_EQ(sqlite3_prepare_v2(db, "SELECT data FROM calls_pages "
	    "WHERE id0 = 1025", -1, &get, NULL), SQLITE_OK);
	ATF_REQUIRE_EQ(sqlite3_step(get), SQLITE_ROW);
	len = sqlite3_column_bytes(get, 0);
	blob = malloc((size_t)len);
	ATF_REQUIRE(blob != NULL && len > 16);
	memcpy(blob, sqlite3_column_blob(get, 0), (size_t)len);
	sqlite3_finalize(get);
	ATF_REQUIRE_EQ(sqlite3_prepare_v2(db, "UPDATE calls_pages SET data = "
	    "?1 WHERE id0 = 1025", -1, &put, NULL), SQLITE_OK);
	ATF_REQUIRE_EQ(sqlite3_prepare_v2(db, "SELECT sum(insns) FROM calls "
	    "WHERE id BETWEEN 1025 AND 2048", -1, &q, NULL), SQLITE_OK);
	/* Truncated anywhere, and each byte changed: an error or a row. */
	for (cut = 0; cut < len + len; cut++) {
		uint8_t *b = malloc((size_t)len);

		memcpy(b, blob, (size_t)len);
		if (cut < len)
			i = cut;
		else {
			i = len;
			b[cut - len] ^= 0x5a;
		}
		sqlite3_bind_blob(put, 1, b, i, SQLITE_TRANSIENT);
		ATF_REQUIRE_EQ(sqlite3_step(put), SQLITE_DONE);
		sqlite3_reset(put);
		free(b);
		rc = sqlite3_step(q);
		if (rc != SQLITE_ROW) {
			errs++;
			ATF_REQUIRE_MSG(strstr(sqlite3_errmsg(db), "corrupt page "
			    "of ids from 1025 in calls_pages: ") != NULL,
			    "damage %d: message '%s'", cut,
			    sqlite3_errmsg(db));
		}
		sqlite3_reset(q);
		if (cut < len)
			ATF_REQUIRE_MSG(rc != SQLITE_ROW, "page cut at %d of "
			    "%d bytes read as a page", cut, len);
	}
	ATF_REQUIRE(errs >= len);
	/* Undamaged again: the same rows. */
	sqlite3_bind_blob(put, 1, blob, len, SQLITE_STATIC);
	ATF_REQUIRE_EQ(sqlite3_step(put), SQLITE_DONE);
	sqlite3_finalize(put);
	sqlite3_finalize(q);
	check_all(db, &g, -1);
	free(blob);
	sqlite3_close(db);
	free(g.rows);
}

/*
 * The rows of "symbol = @sym" (and "thread = @t" when @t > 0) in id order
 * (descending when @desc), with the hidden caller columns, are the
 * generated calls of that symbol, every column, and their parents'.
 */
static void
check_symbol(sqlite3 *db, const struct gen *g, int64_t sym, int64_t t,
    int desc)
{
	sqlite3_stmt *st;
	char sql[256];
	int64_t k, got = 0, want = 0;
	int c;

	snprintf(sql, sizeof(sql), "SELECT *, caller_symbol, caller_ip FROM "
	    "calls WHERE symbol = %lld%s%lld ORDER BY id%s", (long long)sym,
	    t > 0 ? " AND thread = " : " AND 0 = ", (long long)t,
	    desc ? " DESC" : "");
	ATF_REQUIRE_EQ(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	for (k = desc ? g->nrows - 1 : 0; k >= 0 && k < g->nrows;
	    k += desc ? -1 : 1) {
		const struct hwtr_cs_row *r = &g->rows[k], *p = NULL;

		if ((r->nul & NUL(CS_SYMBOL)) || r->v[CS_SYMBOL] != sym ||
		    (t > 0 && r->v[CS_THREAD] != t))
			continue;
		want++;
		ATF_REQUIRE_MSG(sqlite3_step(st) == SQLITE_ROW, "%s: call %lld "
		    "missing: %s", sql, (long long)r->v[0], sqlite3_errmsg(db));
		got++;
		for (c = 0; c < CS_NCOLS; c++) {
			if (c == CS_ENTRY_KIND || c == CS_EXIT_KIND)
				continue;
			if (r->nul & NUL(c))
				ATF_REQUIRE_MSG(sqlite3_column_type(st, c) ==
				    SQLITE_NULL, "%s: call %lld: %s not NULL",
				    sql, (long long)r->v[0], col_names[c]);
			else
				ATF_REQUIRE_MSG(sqlite3_column_int64(st, c) ==
				    r->v[c], "%s: call %lld: %s expected %lld, "
				    "got %lld", sql, (long long)r->v[0],
				    col_names[c], (long long)r->v[c],
				    (long long)sqlite3_column_int64(st, c));
		}
		ATF_REQUIRE_MSG(strcmp((const char *)sqlite3_column_text(st,
		    CS_ENTRY_KIND), hwtr_cs_entry_kinds[r->v[CS_ENTRY_KIND]])
		    == 0 && strcmp((const char *)sqlite3_column_text(st,
		    CS_EXIT_KIND), hwtr_cs_exit_kinds[r->v[CS_EXIT_KIND]]) == 0,
		    "%s: call %lld: kinds", sql, (long long)r->v[0]);
		/* The caller: the generated parent's symbol and func_ip. */
		if (!(r->nul & NUL(CS_PARENT)))
			p = &g->rows[r->v[CS_PARENT] - 1];
		if (p == NULL || (p->nul & NUL(CS_SYMBOL)))
			ATF_REQUIRE_MSG(sqlite3_column_type(st, CS_NCOLS) ==
			    SQLITE_NULL, "%s: call %lld: caller_symbol %lld, "
			    "expected NULL", sql, (long long)r->v[0],
			    (long long)sqlite3_column_int64(st, CS_NCOLS));
		else
			ATF_REQUIRE_MSG(sqlite3_column_int64(st, CS_NCOLS) ==
			    p->v[CS_SYMBOL], "%s: call %lld: caller_symbol "
			    "%lld, expected %lld", sql, (long long)r->v[0],
			    (long long)sqlite3_column_int64(st, CS_NCOLS),
			    (long long)p->v[CS_SYMBOL]);
		if (p == NULL)
			ATF_REQUIRE_MSG(sqlite3_column_type(st, CS_NCOLS + 1) ==
			    SQLITE_NULL, "%s: call %lld: caller_ip not NULL",
			    sql, (long long)r->v[0]);
		else
			ATF_REQUIRE_MSG(sqlite3_column_int64(st, CS_NCOLS + 1) ==
			    p->v[CS_FUNC_IP], "%s: call %lld: caller_ip %#llx, "
			    "expected %#llx", sql, (long long)r->v[0],
			    (unsigned long long)sqlite3_column_int64(st,
			    CS_NCOLS + 1), (unsigned long long)p->v[CS_FUNC_IP]);
	}
	ATF_REQUIRE_MSG(sqlite3_step(st) == SQLITE_DONE, "%s: more than the "
	    "%lld rows generated: %s", sql, (long long)want,
	    sqlite3_errmsg(db));
	sqlite3_finalize(st);
	ATF_REQUIRE(got == want);
}

ATF_TC_WITHOUT_HEAD(symbol_copy);
ATF_TC_BODY(symbol_copy, tc)
{
	struct gen g;
	sqlite3 *db = make_db(&g);
	sqlite3_stmt *st;
	int64_t sym, t, n;

	ATF_REQUIRE(one(db, "SELECT count(*) FROM calls_bysym") > 50);
	/* The hidden columns as the scan of the pages looks them up. */
	for (sym = 1; sym <= 50; sym++)
		for (t = 0; t <= 3; t++)
			check_symbol(db, &g, sym, t, sym % 2);
	ATF_REQUIRE_EQ(one(db, "SELECT count(*) FROM calls c LEFT JOIN calls p "
	    "ON p.id = c.parent WHERE c.caller_symbol IS NOT p.symbol OR "
	    "c.caller_ip IS NOT p.func_ip"), 0);
	/* A lookup by symbol reads the copy, not the pages. */
	ATF_REQUIRE_EQ(sqlite3_exec(db, "UPDATE calls_pages SET data = x'02ff'",
	    NULL, NULL, NULL), SQLITE_OK);
	for (sym = 1; sym <= 50; sym += 3)
		check_symbol(db, &g, sym, 0, 0);
	/* And a damaged copy is an error that says where. */
	ATF_REQUIRE_EQ(sqlite3_exec(db, "UPDATE calls_bysym SET data = "
	    "substr(data, 1, length(data) - 1) WHERE symbol = 7", NULL, NULL,
	    NULL), SQLITE_OK);
	ATF_REQUIRE_EQ(sqlite3_prepare_v2(db, "SELECT count(*) FROM calls "
	    "WHERE symbol = 7", -1, &st, NULL), SQLITE_OK);
	ATF_REQUIRE(sqlite3_step(st) != SQLITE_ROW);
	ATF_REQUIRE_MSG(strstr(sqlite3_errmsg(db), "corrupt page of symbol 7 "
	    "from id ") != NULL && strstr(sqlite3_errmsg(db), "calls_bysym")
	    != NULL, "message: %s", sqlite3_errmsg(db));
	sqlite3_finalize(st);
	for (n = 0, t = 0; t < g.nrows; t++)
		n += !(g.rows[t].nul & NUL(CS_SYMBOL)) &&
		    g.rows[t].v[CS_SYMBOL] == 8;
	ATF_REQUIRE_EQ(one(db, "SELECT count(*) FROM calls WHERE symbol = 8"),
	    n);
	sqlite3_close(db);
	free(g.rows);
}

/* The rows of @sql (one column) of @a and @b are the same. */
/*
 * Column @c of @x's and @y's rows: the same type and bytes (a NULL or
 * empty value has no bytes to compare, and memcmp() may not be given a
 * null pointer).
 */
static int
same_value(sqlite3_stmt *x, sqlite3_stmt *y, int c)
{
	int n = sqlite3_column_bytes(x, c);
	const void *p, *q;

	if (sqlite3_column_type(x, c) != sqlite3_column_type(y, c) ||
	    n != sqlite3_column_bytes(y, c))
		return (0);
	if (n == 0)
		return (1);
	p = sqlite3_column_blob(x, c);
	q = sqlite3_column_blob(y, c);
	return (p != NULL && q != NULL && memcmp(p, q, (size_t)n) == 0);
}

static void
same_rows(sqlite3 *a, sqlite3 *b, const char *sql)
{
	sqlite3_stmt *x, *y;
	int64_t n = 0;
	int rx, ry, c;

	ATF_REQUIRE_EQ(sqlite3_prepare_v2(a, sql, -1, &x, NULL), SQLITE_OK);
	ATF_REQUIRE_EQ(sqlite3_prepare_v2(b, sql, -1, &y, NULL), SQLITE_OK);
	for (;;) {
		rx = sqlite3_step(x);
		ry = sqlite3_step(y);
		ATF_REQUIRE_MSG(rx == ry, "%s: row %lld in one database only",
		    sql, (long long)n);
		if (rx != SQLITE_ROW)
			break;
		for (c = 0; c < sqlite3_column_count(x); c++)
			ATF_REQUIRE_MSG(same_value(x, y, c),
			    "%s: row %lld column %d differs", sql, (long long)n,
			    c);
		n++;
	}
	ATF_REQUIRE_EQ(rx, SQLITE_DONE);
	ATF_REQUIRE(n > 0);
	sqlite3_finalize(x);
	sqlite3_finalize(y);
}

/*
 * The symbol copy and the call paths made as the rows come (the writer
 * told the calls still open): the generated calls and callers, the same
 * pages and paths as those made from the pages at the end, without
 * reading a page back; calls said to be final that are not (their row
 * differs) make the writer go back to the pages, with the same result.
 */
ATF_TC_WITHOUT_HEAD(symbol_copy_streamed);
ATF_TC_BODY(symbol_copy_streamed, tc)
{
	struct gen g, h;
	sqlite3 *ref, *db;
	int64_t sym, t;
	int streamed = -1, lie;
	static const char *const sql[] = {
		"SELECT symbol, id0, thread, n, data FROM calls_bysym "
		    "ORDER BY symbol, id0",
		"SELECT * FROM call_paths ORDER BY id",
		"SELECT * FROM calls_pages ORDER BY id0",
	};
	size_t i;

	ref = make_db(&h);
	for (lie = 0; lie <= 1; lie++) {
		db = make_db_opt(&g, 1, lie, &streamed);
		ATF_REQUIRE_MSG(streamed == !lie, "lie %d: streamed %d", lie,
		    streamed);
		ATF_REQUIRE(g.asked > 0);
		for (i = 0; i < sizeof(sql) / sizeof(sql[0]); i++)
			same_rows(ref, db, sql[i]);
		/* Callers by construction, the pages unreadable. */
		ATF_REQUIRE_EQ(sqlite3_exec(db, "UPDATE calls_pages SET data = "
		    "x'02ff'", NULL, NULL, NULL), SQLITE_OK);
		for (sym = 1; sym <= 50; sym++)
			for (t = 0; t <= 3; t++)
				check_symbol(db, &g, sym, t, sym % 2);
		sqlite3_close(db);
		free(g.rows);
	}
	sqlite3_close(ref);
	free(h.rows);
}

ATF_TC_WITHOUT_HEAD(sql_writes_merge);
ATF_TC_BODY(sql_writes_merge, tc)
{
	struct gen g;
	sqlite3 *db = make_db(&g);
	char sql[256];
	int64_t last;

	/* A page row deleted: gone from the scan, the symbol index, by id. */
	ATF_REQUIRE_EQ(sqlite3_exec(db, "DELETE FROM calls WHERE id = 4321",
	    NULL, NULL, NULL), SQLITE_OK);
	check_all(db, &g, 4321);
	ATF_REQUIRE_EQ(one(db, "SELECT count(*) FROM calls WHERE id = 4321"),
	    0);
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM calls WHERE symbol = "
	    "%lld AND id = 4321", (long long)g.rows[4320].v[CS_SYMBOL]);
	ATF_REQUIRE_EQ_MSG(one(db, sql), 0, "deleted call 4321 is still in the "
	    "symbol copy");
	ATF_REQUIRE(!(g.rows[4320].nul & NUL(CS_SYMBOL)));
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM calls WHERE symbol = "
	    "%lld AND id BETWEEN 4300 AND 4400",
	    (long long)g.rows[4320].v[CS_SYMBOL]);
	last = one(db, sql);
	/* Inserted back with SQL (into calls_rows): in its place again. */
	snprintf(sql, sizeof(sql), "INSERT INTO calls SELECT 4321, %lld, "
	    "%lld, %lld, %lld, %lld, %lld, '%s', '%s', %lld, %lld, %lld, %lld,"
	    " %lld, %lld, %lld, %lld, %lld, %lld, %lld",
	    (long long)g.rows[4320].v[1], (long long)g.rows[4320].v[2],
	    (long long)g.rows[4320].v[3], (long long)g.rows[4320].v[4],
	    (long long)g.rows[4320].v[5], (long long)g.rows[4320].v[6],
	    hwtr_cs_entry_kinds[g.rows[4320].v[7]],
	    hwtr_cs_exit_kinds[g.rows[4320].v[8]],
	    (long long)g.rows[4320].v[9], (long long)g.rows[4320].v[10],
	    (long long)g.rows[4320].v[11], (long long)g.rows[4320].v[12],
	    (long long)g.rows[4320].v[13], (long long)g.rows[4320].v[14],
	    (long long)g.rows[4320].v[15], (long long)g.rows[4320].v[16],
	    (long long)g.rows[4320].v[17], (long long)g.rows[4320].v[18],
	    (long long)g.rows[4320].v[19]);
	ATF_REQUIRE(!(g.rows[4320].nul & ~(NUL(CS_EXIT_NS))));
	ATF_REQUIRE_EQ_MSG(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK,
	    "%s", sqlite3_errmsg(db));
	if (g.rows[4320].nul & NUL(CS_EXIT_NS))
		ATF_REQUIRE_EQ(sqlite3_exec(db, "UPDATE calls SET exit_ns = NULL "
		    "WHERE id = 4321", NULL, NULL, NULL), SQLITE_OK);
	check_all(db, &g, -1);
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM calls WHERE symbol = "
	    "%lld AND id BETWEEN 4300 AND 4400",
	    (long long)g.rows[4320].v[CS_SYMBOL]);
	ATF_REQUIRE_EQ(one(db, sql), last + 1);
	ATF_REQUIRE_EQ(one(db, "SELECT count(*) FROM calls_rows"), 1);
	/* An id that exists is refused. */
	ATF_REQUIRE(sqlite3_exec(db, "INSERT INTO calls (id, thread, depth, "
	    "func_ip, entry_kind, exit_kind, entry_seq, exit_seq, entry_insn, "
	    "exit_insn, insns, self_insns, blocks) VALUES (17, 1, 0, 0, 'call',"
	    " 'return', 0, 0, 0, 0, 0, 0, 0)", NULL, NULL, NULL) != SQLITE_OK);
	sqlite3_close(db);
	free(g.rows);
}

/*
 * A row written with SQL whose entry_seq sorts before the pages' rows of
 * its thread: ORDER BY entry_seq is no longer id order, and the table
 * must not answer it as if it were.
 */
ATF_TC_WITHOUT_HEAD(sql_rows_break_seq_order);
ATF_TC_BODY(sql_rows_break_seq_order, tc)
{
	struct gen g;
	sqlite3 *db = make_db(&g);
	char sql[512];
	long long t = (long long)g.rows[0].v[CS_THREAD];

	snprintf(sql, sizeof(sql), "SELECT id FROM calls WHERE thread = %lld "
	    "ORDER BY entry_seq, id LIMIT 1", t);
	ATF_REQUIRE_EQ(one(db, sql), g.rows[0].v[CS_ID]);
	snprintf(sql, sizeof(sql), "INSERT INTO calls (id, thread, depth, "
	    "func_ip, entry_kind, exit_kind, entry_seq, exit_seq, entry_insn, "
	    "exit_insn, insns, self_insns, blocks) VALUES (9999999, %lld, 0, 0, "
	    "'call', 'return', -5, -4, 0, 0, 0, 0, 0)", t);
	ATF_REQUIRE_EQ_MSG(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK,
	    "%s", sqlite3_errmsg(db));
	snprintf(sql, sizeof(sql), "SELECT id FROM calls WHERE thread = %lld "
	    "ORDER BY entry_seq, id LIMIT 1", t);
	ATF_REQUIRE_EQ_MSG(one(db, sql), 9999999, "ORDER BY entry_seq with a "
	    "row of calls_rows first by entry_seq");
	snprintf(sql, sizeof(sql), "SELECT id FROM calls WHERE thread = %lld "
	    "ORDER BY entry_seq DESC, id DESC LIMIT 1 OFFSET (SELECT count(*) "
	    "- 1 FROM calls WHERE thread = %lld)", t, t);
	ATF_REQUIRE_EQ(one(db, sql), 9999999);
	sqlite3_close(db);
	free(g.rows);
}

/*
 * The fixes of dd1d25f as plain cases: the SQL with which the fuzzer
 * (make fuzz-sql) found each wrong answer, run on the calls table and on
 * "ref", an ordinary STRICT table of calls_rows' columns that make_ref()
 * fills with the generated rows.  SQLite's answers on ref are the
 * expected ones.
 */
static void
make_ref(sqlite3 *db, const struct gen *g)
{
	sqlite3_stmt *st;
	char *err = NULL;
	int64_t k;
	int c;

	if (sqlite3_exec(db, "CREATE TABLE ref (id INTEGER PRIMARY KEY, "
	    HWTR_CS_ROW_COLS ") STRICT; BEGIN", NULL, NULL, &err) != SQLITE_OK)
		atf_tc_fail("ref: %s", err);
	ATF_REQUIRE_EQ(sqlite3_prepare_v2(db, "INSERT INTO ref VALUES (?1, ?2, "
	    "?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, "
	    "?17, ?18, ?19, ?20)", -1, &st, NULL), SQLITE_OK);
	for (k = 0; k < g->nrows; k++) {
		const struct hwtr_cs_row *r = &g->rows[k];

		for (c = 0; c < CS_NCOLS; c++)
			if (c == CS_ENTRY_KIND || c == CS_EXIT_KIND)
				sqlite3_bind_text(st, c + 1,
				    (c == CS_ENTRY_KIND ? hwtr_cs_entry_kinds :
				    hwtr_cs_exit_kinds)[r->v[c]], -1,
				    SQLITE_STATIC);
			else if (r->nul & NUL(c))
				sqlite3_bind_null(st, c + 1);
			else
				sqlite3_bind_int64(st, c + 1, r->v[c]);
		ATF_REQUIRE_MSG(sqlite3_step(st) == SQLITE_DONE, "ref row "
		    "%lld: %s", (long long)k + 1, sqlite3_errmsg(db));
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	ATF_REQUIRE_EQ(sqlite3_exec(db, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
}

/* @tmpl with each '@' replaced by @table, into @buf. */
static void
on_table(char *buf, size_t size, const char *tmpl, const char *table)
{
	size_t n = 0, t = strlen(table);

	for (; *tmpl != '\0'; tmpl++) {
		ATF_REQUIRE(n + t + 1 < size);
		if (*tmpl == '@') {
			memcpy(buf + n, table, t);
			n += t;
		} else
			buf[n++] = *tmpl;
	}
	buf[n] = '\0';
}

/* The rows of @a and of @b (in @db): the same, value for value. */
static void
same_answer(sqlite3 *db, const char *a, const char *b)
{
	sqlite3_stmt *x, *y;
	int64_t n = 0;
	int rx, ry, c;

	if (sqlite3_prepare_v2(db, a, -1, &x, NULL) != SQLITE_OK)
		atf_tc_fail("%s: %s", a, sqlite3_errmsg(db));
	if (sqlite3_prepare_v2(db, b, -1, &y, NULL) != SQLITE_OK)
		atf_tc_fail("%s: %s", b, sqlite3_errmsg(db));
	for (;;) {
		rx = sqlite3_step(x);
		ry = sqlite3_step(y);
		ATF_REQUIRE_MSG(rx == ry, "%s: row %lld: calls %s, an ordinary "
		    "table %s", a, (long long)n, rx == SQLITE_ROW ? "has one" :
		    rx == SQLITE_DONE ? "has none" : sqlite3_errmsg(db),
		    ry == SQLITE_ROW ? "has one" : ry == SQLITE_DONE ?
		    "has none" : "fails");
		if (rx != SQLITE_ROW)
			break;
		for (c = 0; c < sqlite3_column_count(x); c++)
			ATF_REQUIRE_MSG(same_value(x, y, c), "%s: row %lld "
			    "column %d: calls says %s, an ordinary table %s", a,
			    (long long)n, c, sqlite3_column_text(x, c) ?
			    (const char *)sqlite3_column_text(x, c) : "NULL",
			    sqlite3_column_text(y, c) ?
			    (const char *)sqlite3_column_text(y, c) : "NULL");
		n++;
	}
	ATF_REQUIRE_EQ(rx, SQLITE_DONE);
	sqlite3_finalize(x);
	sqlite3_finalize(y);
}

/* Query @tmpl ('@' the table) on calls and on ref: the same rows. */
static void
same_as_ref(sqlite3 *db, const char *tmpl)
{
	char a[1024], b[1024];

	on_table(a, sizeof(a), tmpl, "calls");
	on_table(b, sizeof(b), tmpl, "ref");
	same_answer(db, a, b);
}

/*
 * Write @tmpl ('@' the table) to calls and to ref: both succeed or both
 * fail, as @ok (1: succeeds) says an ordinary table does.
 */
static void
write_both(sqlite3 *db, const char *tmpl, int ok)
{
	char a[1024], b[1024], *ea = NULL, *eb = NULL;
	int ra, rb;

	on_table(a, sizeof(a), tmpl, "calls");
	on_table(b, sizeof(b), tmpl, "ref");
	rb = sqlite3_exec(db, b, NULL, NULL, &eb);
	ra = sqlite3_exec(db, a, NULL, NULL, &ea);
	ATF_REQUIRE_MSG((rb == SQLITE_OK) == ok, "%s: expected %s, got %s",
	    b, ok ? "success" : "an error", eb ? eb : "success");
	ATF_REQUIRE_MSG((ra == SQLITE_OK) == ok, "%s: an ordinary table %s, "
	    "calls %s", a, eb ? eb : "succeeds", ea ? ea : "succeeds");
	sqlite3_free(ea);
	sqlite3_free(eb);
}

static void
exec_ok(sqlite3 *db, const char *sql)
{
	ATF_REQUIRE_MSG(sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK,
	    "%s: %s", sql, sqlite3_errmsg(db));
}

/* Reads that decode the pages of ids 4321 and 4322 into the cache. */
static const char *const around_4321[] = {
	"SELECT count(*), sum(depth) FROM @ WHERE id BETWEEN 4000 AND 4600",
	"SELECT * FROM @ WHERE id BETWEEN 4300 AND 4340 ORDER BY id",
	"SELECT count(*) FROM @ WHERE id = 4321",
};

/*
 * Writes, the pages read after them, then @undo: the rows as they were
 * before the writes, not as the cache held them.  With @write_first,
 * writes right after the undo (a read between would drop the cache) that
 * must find the rows it brought back: an id that exists again is refused.
 */
static void
undone_writes(const char *begin, const char *undo, const char *end,
    int write_first)
{
	struct gen g;
	sqlite3 *db = make_db(&g);
	size_t i;

	make_ref(db, &g);
	exec_ok(db, begin);
	write_both(db, "DELETE FROM @ WHERE id = 4321", 1);
	write_both(db, "UPDATE @ SET depth = 77 WHERE id = 4322", 1);
	for (i = 0; i < sizeof(around_4321) / sizeof(around_4321[0]); i++)
		same_as_ref(db, around_4321[i]);
	exec_ok(db, undo);
	if (write_first) {
		write_both(db, "INSERT INTO @ (id, thread, depth, func_ip, "
		    "entry_kind, exit_kind, entry_seq, exit_seq, entry_insn, "
		    "exit_insn, insns, self_insns, blocks) VALUES (4321, 1, 0, "
		    "0, 'call', 'return', 0, 0, 0, 0, 0, 0, 0)", 0);
		write_both(db, "UPDATE @ SET id = 4321 WHERE id = 4330", 0);
	}
	for (i = 0; i < sizeof(around_4321) / sizeof(around_4321[0]); i++)
		same_as_ref(db, around_4321[i]);
	ATF_REQUIRE_EQ(one(db, "SELECT count(*) FROM calls WHERE id = 4321"),
	    1);
	if (end != NULL)
		exec_ok(db, end);
	check_all(db, &g, -1);
	sqlite3_close(db);
	free(g.rows);
}

ATF_TC_WITHOUT_HEAD(sql_rollback_forgets_its_writes);
ATF_TC_BODY(sql_rollback_forgets_its_writes, tc)
{
	undone_writes("BEGIN", "ROLLBACK", NULL, 0);
}

ATF_TC_WITHOUT_HEAD(sql_rollback_to_forgets_its_writes);
ATF_TC_BODY(sql_rollback_to_forgets_its_writes, tc)
{
	undone_writes("SAVEPOINT s", "ROLLBACK TO s", "RELEASE s", 0);
}

ATF_TC_WITHOUT_HEAD(sql_write_after_rollback_sees_its_rows);
ATF_TC_BODY(sql_write_after_rollback_sees_its_rows, tc)
{
	undone_writes("BEGIN", "ROLLBACK", NULL, 1);
}

ATF_TC_WITHOUT_HEAD(sql_write_after_rollback_to_sees_its_rows);
ATF_TC_BODY(sql_write_after_rollback_to_sees_its_rows, tc)
{
	undone_writes("SAVEPOINT s", "ROLLBACK TO s", "RELEASE s", 1);
}

/*
 * Values written with SQL: what a STRICT table of calls_rows' types
 * takes (integers, and text or reals that are one exactly), read back as
 * it holds them; the rest refused, an id of NULL too.
 */
ATF_TC_WITHOUT_HEAD(sql_writes_take_strict_types);
ATF_TC_BODY(sql_writes_take_strict_types, tc)
{
	static const struct {
		const char	*sql;
		int		ok;
	} w[] = {
		{ "UPDATE @ SET depth = 'x' WHERE id = 4321", 0 },
		{ "UPDATE @ SET depth = 2.5 WHERE id = 4321", 0 },
		{ "UPDATE @ SET depth = x'07' WHERE id = 4321", 0 },
		{ "UPDATE @ SET entry_tsc = '' WHERE id = 4321", 0 },
		{ "UPDATE @ SET exit_kind = x'00' WHERE id = 4321", 0 },
		{ "UPDATE @ SET id = 'x' WHERE id = 4321", 0 },
		{ "UPDATE @ SET id = NULL WHERE id = 4321", 0 },
		{ "UPDATE @ SET symbol = '7' WHERE id = 4321", 1 },
		{ "UPDATE @ SET depth = 9.0 WHERE id = 4321", 1 },
		{ "UPDATE @ SET entry_tsc = NULL WHERE id = 4321", 1 },
		{ "UPDATE @ SET id = '99999' WHERE id = 4321", 1 },
		{ "INSERT INTO @ (id, thread, depth, func_ip, entry_kind, "
		  "exit_kind, entry_seq, exit_seq, entry_insn, exit_insn, "
		  "insns, self_insns, blocks) VALUES ('x', 1, 0, 0, 'call', "
		  "'return', 0, 0, 0, 0, 0, 0, 0)", 0 },
		{ "INSERT INTO @ (id, thread, depth, func_ip, entry_kind, "
		  "exit_kind, entry_seq, exit_seq, entry_insn, exit_insn, "
		  "insns, self_insns, blocks) VALUES (100001, 1, 0, 0, 'call', "
		  "'return', 0.5, 0, 0, 0, 0, 0, 0)", 0 },
		{ "INSERT INTO @ (id, thread, depth, func_ip, entry_kind, "
		  "exit_kind, entry_seq, exit_seq, entry_insn, exit_insn, "
		  "insns, self_insns, blocks) VALUES (100002, '1', 0, 0, "
		  "'call', 'return', 4.0, 0, 0, 0, 0, 0, 0)", 1 },
	};
	struct gen g;
	sqlite3 *db = make_db(&g);
	size_t i;

	make_ref(db, &g);
	for (i = 0; i < sizeof(w) / sizeof(w[0]); i++) {
		write_both(db, w[i].sql, w[i].ok);
		same_as_ref(db, "SELECT *, typeof(symbol), typeof(depth) FROM "
		    "@ WHERE id IN (4321, 99999) OR id > 100000 ORDER BY id");
	}
	same_as_ref(db, "SELECT count(*), sum(depth), sum(symbol) FROM @");
	sqlite3_close(db);
	free(g.rows);
}

/*
 * An UPDATE whose new row an ordinary table refuses (its id taken, NULL
 * in a NOT NULL column) leaves the old row, of a page or of calls_rows.
 * Inside a transaction: SQLite undoes only the failed statement there,
 * and that statement's writes to the storage tables are not undone (in
 * autocommit it rolls the whole transaction back, hiding a lost row).
 */
ATF_TC_WITHOUT_HEAD(sql_failed_update_keeps_its_row);
ATF_TC_BODY(sql_failed_update_keeps_its_row, tc)
{
	static const char *const q = "SELECT * FROM @ WHERE id IN (4321, "
	    "4400) ORDER BY id";
	struct gen g;
	sqlite3 *db = make_db(&g);
	int pass;

	make_ref(db, &g);
	exec_ok(db, "BEGIN");
	for (pass = 0; pass < 2; pass++) {
		write_both(db, "UPDATE @ SET id = 4400 WHERE id = 4321", 0);
		same_as_ref(db, q);
		write_both(db, "UPDATE @ SET thread = NULL WHERE id = 4321", 0);
		same_as_ref(db, q);
		ATF_REQUIRE_EQ(one(db, "SELECT count(*) FROM calls WHERE id = "
		    "4321"), 1);
		/* Now a row of calls_rows. */
		write_both(db, "UPDATE @ SET depth = depth + 1 WHERE id = 4321",
		    1);
		ATF_REQUIRE_EQ(one(db, "SELECT count(*) FROM calls_rows"), 1);
	}
	exec_ok(db, "COMMIT");
	same_as_ref(db, q);
	same_as_ref(db, "SELECT count(*), sum(depth) FROM @");
	sqlite3_close(db);
	free(g.rows);
}

/* The rows of ids above @n - 20, as the ordinary table has them. */
static void
last_rows_as_ref(sqlite3 *db, int64_t n)
{
	char sql[128];

	snprintf(sql, sizeof(sql), "SELECT * FROM @ WHERE id > %lld ORDER BY "
	    "id", (long long)(n - 20));
	same_as_ref(db, sql);
}

/* A row of thread 3 inserted without an id. */
static const char *const ins = "INSERT INTO @ (thread, depth, func_ip, "
    "entry_kind, exit_kind, entry_seq, exit_seq, entry_insn, exit_insn, "
    "insns, self_insns, blocks) VALUES (3, 0, 0, 'call', 'return', 0, 0, 0, "
    "0, 0, 0, 0)";

/*
 * A row inserted without an id takes one above the largest, as an
 * INTEGER PRIMARY KEY does: after a row of the last page was deleted
 * too, and after the last row was.
 */
ATF_TC_WITHOUT_HEAD(sql_insert_without_id_takes_the_next);
ATF_TC_BODY(sql_insert_without_id_takes_the_next, tc)
{
	struct gen g;
	sqlite3 *db = make_db(&g);
	char sql[256];
	int64_t n;

	make_ref(db, &g);
	n = g.nrows;
	/* The last page holds the last ids: n - 5 is one of them. */
	ATF_REQUIRE_EQ(one(db, "SELECT max(id0) FROM calls_pages") <= n - 5,
	    1);
	snprintf(sql, sizeof(sql), "DELETE FROM @ WHERE id = %lld",
	    (long long)(n - 5));
	write_both(db, sql, 1);
	write_both(db, ins, 1);
	ATF_REQUIRE_EQ(one(db, "SELECT max(id) FROM calls"), n + 1);
	snprintf(sql, sizeof(sql), "DELETE FROM @ WHERE id = %lld",
	    (long long)(n + 1));
	write_both(db, sql, 1);
	snprintf(sql, sizeof(sql), "DELETE FROM @ WHERE id = %lld",
	    (long long)n);
	write_both(db, sql, 1);
	write_both(db, ins, 1);
	write_both(db, ins, 1);
	ATF_REQUIRE_EQ(one(db, "SELECT max(id) FROM calls"), n + 1);
	last_rows_as_ref(db, n);
	sqlite3_close(db);
	free(g.rows);
}

/*
 * Rows inserted without an id one after another, the last page's last
 * rows deleted between them, inside a transaction rolled back and
 * after it: each
 * takes one above the largest id there is then (the last page's last id
 * is kept between inserts, and must follow every rewrite of the page).
 */
ATF_TC_WITHOUT_HEAD(sql_inserts_without_id_follow_the_last_page);
ATF_TC_BODY(sql_inserts_without_id_follow_the_last_page, tc)
{
	struct gen g;
	sqlite3 *db = make_db(&g);
	char sql[256];
	int64_t n, k;

	make_ref(db, &g);
	n = g.nrows;
	for (k = 0; k < 3; k++)
		write_both(db, ins, 1);
	ATF_REQUIRE_EQ(one(db, "SELECT max(id) FROM calls"), n + 3);
	/* The inserted rows and the page's last row go: n is taken again. */
	write_both(db, "DELETE FROM @ WHERE id > 0 AND id IN (SELECT id FROM "
	    "@ ORDER BY id DESC LIMIT 4)", 1);
	write_both(db, ins, 1);
	ATF_REQUIRE_EQ(one(db, "SELECT max(id) FROM calls"), n);
	/* Undone: the page's rewrite and the rows after it. */
	exec_ok(db, "BEGIN");
	snprintf(sql, sizeof(sql), "DELETE FROM @ WHERE id BETWEEN %lld AND "
	    "%lld", (long long)(n - 3), (long long)n);
	write_both(db, sql, 1);
	write_both(db, ins, 1);
	ATF_REQUIRE_EQ(one(db, "SELECT max(id) FROM calls"), n - 3);
	exec_ok(db, "ROLLBACK");
	write_both(db, ins, 1);
	ATF_REQUIRE_EQ(one(db, "SELECT max(id) FROM calls"), n + 1);
	last_rows_as_ref(db, n);
	sqlite3_close(db);
	free(g.rows);
}

/*
 * The caller columns of a symbol's calls (read from the symbol copy)
 * after a parent was deleted, and after one changed: what a join of an
 * ordinary table on parent = id gives.
 */
ATF_TC_WITHOUT_HEAD(sql_symbol_callers_follow_writes);
ATF_TC_BODY(sql_symbol_callers_follow_writes, tc)
{
	struct gen g;
	sqlite3 *db = make_db(&g);
	char a[512], b[512], sql[256];
	int64_t k, sym = -1, p[2] = { -1, -1 };
	int i;

	make_ref(db, &g);
	/* Two calls of a symbol of thread 3 with parents of their own. */
	for (k = 8001; k < g.nrows && p[1] < 0; k++) {
		const struct hwtr_cs_row *r = &g.rows[k];

		if (r->nul & (NUL(CS_SYMBOL) | NUL(CS_PARENT)) ||
		    g.rows[r->v[CS_PARENT] - 1].nul & NUL(CS_SYMBOL) ||
		    g.rows[r->v[CS_PARENT] - 1].v[CS_SYMBOL] == r->v[CS_SYMBOL])
			continue;
		if (sym < 0) {
			sym = r->v[CS_SYMBOL];
			p[0] = r->v[CS_PARENT];
		} else if (r->v[CS_SYMBOL] == sym && r->v[CS_PARENT] != p[0])
			p[1] = r->v[CS_PARENT];
	}
	ATF_REQUIRE(p[1] > 0);
	snprintf(a, sizeof(a), "SELECT id, caller_symbol, caller_ip FROM calls "
	    "WHERE symbol = %lld ORDER BY id", (long long)sym);
	snprintf(b, sizeof(b), "SELECT c.id, p.symbol, p.func_ip FROM ref c "
	    "LEFT JOIN ref p ON p.id = c.parent WHERE c.symbol = %lld ORDER "
	    "BY c.id", (long long)sym);
	same_answer(db, a, b);
	for (i = 0; i < 2; i++) {
		if (i == 0)
			snprintf(sql, sizeof(sql), "DELETE FROM @ WHERE id = "
			    "%lld", (long long)p[0]);
		else
			snprintf(sql, sizeof(sql), "UPDATE @ SET symbol = "
			    "4242, func_ip = 4343 WHERE id = %lld",
			    (long long)p[1]);
		write_both(db, sql, 1);
		same_answer(db, a, b);
	}
	sqlite3_close(db);
	free(g.rows);
}

ATF_TC_WITHOUT_HEAD(exec_chunks_pack);
ATF_TC_BODY(exec_chunks_pack, tc)
{
	uint8_t data[8192], *z, *raw;
	size_t i, zlen, rlen;

	/* 8192 one-byte varints (a loop): packed, and back. */
	for (i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i % 7 == 0 ? 3 : 0);
	ATF_REQUIRE_EQ(hwtr_xo_pack(data, sizeof(data), 8192, &z, &zlen), 0);
	ATF_REQUIRE(z != NULL && zlen < 8192);
	ATF_REQUIRE_EQ(hwtr_xo_unpack(z, zlen, 8192, &raw, &rlen), 0);
	ATF_REQUIRE(raw != NULL && rlen == sizeof(data) &&
	    memcmp(raw, data, rlen) == 0);
	free(raw);
	/* Damaged, or said to hold more blocks than it does: refused. */
	z[zlen / 2] ^= 0xff;
	ATF_REQUIRE(hwtr_xo_unpack(z, zlen, 8192, &raw, &rlen) < 0 ||
	    (rlen == sizeof(data) && (free(raw), 1)));
	z[zlen / 2] ^= 0xff;
	ATF_REQUIRE(hwtr_xo_unpack(z, zlen, 9000, &raw, &rlen) < 0);
	ATF_REQUIRE(hwtr_xo_unpack(z, zlen / 2, 8192, &raw, &rlen) < 0);
	free(z);
	/* Varints that do not compress below one byte a block stay raw. */
	for (i = 0; i < 100; i++)
		data[i] = (uint8_t)((i * 2654435761u) >> 25);
	ATF_REQUIRE_EQ(hwtr_xo_pack(data, 100, 100, &z, &zlen), 0);
	ATF_REQUIRE(z == NULL);
	ATF_REQUIRE_EQ(hwtr_xo_unpack(data, 100, 100, &raw, &rlen), 0);
	ATF_REQUIRE(raw == NULL);
}

/*
 * A page predicts each call's parent from the calls before it in the
 * page (colstore.c, cs_open_parent()): chains deeper than the 64 depths
 * it keeps, siblings whose parent came before the page, depths 64 apart
 * (the same slot), and rows whose parent is not the one their depth
 * says (anything an SQL write or a damaged indexer could give) all read
 * back as they were written.
 */
ATF_TC_WITHOUT_HEAD(page_parents_predicted);
ATF_TC_BODY(page_parents_predicted, tc)
{
	static struct hwtr_cs_row rows[2][HWTR_CS_PAGE], back[HWTR_CS_PAGE];
	struct gen g = { .s = 7 };
	const char *why;
	uint8_t *blob;
	size_t len;
	int64_t i, id, pg, depth;
	int c;

	memset(rows, 0, sizeof(rows));
	for (pg = 0; pg < 2; pg++)
		for (i = 0; i < HWTR_CS_PAGE; i++) {
			struct hwtr_cs_row *r = &rows[pg][i];

			id = pg * HWTR_CS_PAGE + i + 1;
			r->v[CS_ID] = id;
			r->v[CS_THREAD] = 1;
			r->v[CS_ENTRY_SEQ] = id * 3;
			r->v[CS_EXIT_SEQ] = id * 3 + 2;
			r->v[CS_BLOCKS] = 2;
			r->v[CS_FUNC_IP] = pg ? 0x401000 : 0x401000 +
			    (int64_t)(rnd(&g) % 64) * 16;
			r->v[CS_CALL_IP] = pg ? 0x400800 : 0x400800 + id;
			r->nul = NUL(CS_SYMBOL) | NUL(CS_ENTRY_TSC) |
			    NUL(CS_EXIT_TSC) | NUL(CS_ENTRY_NS) | NUL(CS_EXIT_NS);
			if (pg == 0 && i < 200) {
				/* A chain: call id at depth id - 1. */
				depth = i;
				r->v[CS_PARENT] = id - 1;
				if (i == 0)
					r->nul |= NUL(CS_PARENT);
			} else if (pg == 0 && i < 500) {
				/* Calls at depth 150 with their leaves. */
				depth = i % 2 ? 151 : 150;
				r->v[CS_PARENT] = i % 2 ? id - 1 : 150;
			} else if (pg == 0 && i < 600) {
				/* Depth 86: slot 22, as 150's; parent 86. */
				depth = 86;
				r->v[CS_PARENT] = 86;
			} else if (pg == 0) {
				/* Anything. */
				depth = rnd(&g) % 300;
				switch (rnd(&g) % 5) {
				case 0:
					r->nul |= NUL(CS_PARENT);
					break;
				case 1:
					r->v[CS_PARENT] = INT64_MAX -
					    (int64_t)(rnd(&g) % 3);
					break;
				case 2:
					r->v[CS_PARENT] = -(int64_t)(rnd(&g) % 9);
					break;
				default:
					r->v[CS_PARENT] = 1 + (int64_t)(rnd(&g) %
					    (uint32_t)(id - 1));
					break;
				}
			} else {
				/*
				 * The next page: siblings whose parent (150)
				 * came before it, a few calls into them.
				 */
				depth = i % 8 == 7 ? 152 : 151;
				r->v[CS_PARENT] = i % 8 == 7 ? id - 1 : 150;
			}
			r->v[CS_DEPTH] = depth;
		}
	for (pg = 0; pg < 2; pg++) {
		ATF_REQUIRE_EQ(hwtr_cs_encode(rows[pg], HWTR_CS_PAGE,
		    pg * HWTR_CS_PAGE + 1, pg * HWTR_CS_PAGE * 3, &blob, &len),
		    0);
		memset(back, 0, sizeof(back));
		ATF_REQUIRE_MSG(hwtr_cs_decode(blob, len, pg * HWTR_CS_PAGE + 1,
		    1, HWTR_CS_PAGE, pg * HWTR_CS_PAGE * 3, back, &why) == 0,
		    "page %d: %s", (int)pg, why);
		for (i = 0; i < HWTR_CS_PAGE; i++) {
			ATF_REQUIRE_EQ_MSG(back[i].nul, rows[pg][i].nul,
			    "page %d row %d: NULLs %#x, expected %#x", (int)pg,
			    (int)i, back[i].nul, rows[pg][i].nul);
			for (c = 0; c < CS_NCOLS; c++)
				ATF_REQUIRE_MSG((rows[pg][i].nul & NUL(c)) ||
				    back[i].v[c] == rows[pg][i].v[c],
				    "page %d row %d column %d: %lld, expected "
				    "%lld", (int)pg, (int)i, c,
				    (long long)back[i].v[c],
				    (long long)rows[pg][i].v[c]);
		}
		/*
		 * The siblings' page: all its columns but parent alike on
		 * every row, and parent predicted on all but its first, so
		 * the page is a few bytes a row at most (its parents as
		 * differences from the call's id, version 6's way: 1,573 bytes).
		 */
		if (pg == 1)
			ATF_REQUIRE_MSG(len < 200, "the siblings' page took "
			    "%zu bytes, expected fewer than 200", len);
		free(blob);
	}
}

/*
 * calls of an attached database reads and writes that database's pages
 * and rows, not those of main (whose calls is empty here), and dropping
 * it drops its own storage tables.
 */
ATF_TC_WITHOUT_HEAD(attached_database_reads_its_own);
ATF_TC_BODY(attached_database_reads_its_own, tc)
{
	struct gen g;
	sqlite3 *db = make_db(&g), *ref;
	char sql[256], *err = NULL;
	int64_t sym;

	ATF_REQUIRE_EQ(sqlite3_exec(db, "VACUUM INTO 'b.db'", NULL, NULL,
	    NULL), SQLITE_OK);
	sqlite3_close(db);
	ATF_REQUIRE_EQ(sqlite3_open("b.db", &ref), SQLITE_OK);
	ATF_REQUIRE_EQ(hwtr_ix_sqlite_register(ref), 0);
	ATF_REQUIRE_EQ(sqlite3_open(":memory:", &db), SQLITE_OK);
	ATF_REQUIRE_EQ(hwtr_ix_sqlite_register(db), 0);
	if (sqlite3_exec(db, HWTR_IX_SCHEMA_SQL HWTR_IX_INDEX_SQL
	    "ATTACH 'b.db' AS b", NULL, NULL, &err) != SQLITE_OK)
		atf_tc_fail("schema, attach: %s", err);
	ATF_CHECK_EQ(one(db, "SELECT count(*) FROM main.calls"), 0);
	ATF_CHECK_EQ(one(db, "SELECT count(*) FROM b.calls"),
	    (int64_t)g.nrows);
	/* The ways a scan goes: ids, a thread's sequence, a symbol. */
	sym = g.rows[4320].v[CS_SYMBOL];
#define SAME_IN_B(fmt) do {						\
		char q1[256];						\
									\
		snprintf(sql, sizeof(sql), fmt, "b.", (long long)sym);	\
		snprintf(q1, sizeof(q1), fmt, "", (long long)sym);	\
		ATF_CHECK_EQ_MSG(one(db, sql), one(ref, q1), "%s", sql); \
	} while (0)
	SAME_IN_B("SELECT sum(insns) FROM %scalls WHERE id BETWEEN 100 AND "
	    "7000 AND %lld NOT NULL");
	SAME_IN_B("SELECT sum(exit_seq) FROM %scalls WHERE thread = 2 AND "
	    "entry_seq > 50 AND %lld NOT NULL");
	SAME_IN_B("SELECT count(*) * 1000 + sum(depth) FROM %scalls WHERE "
	    "symbol = %lld");
	SAME_IN_B("SELECT max(id) FROM %scalls WHERE thread = 3 AND %lld "
	    "NOT NULL");
#undef SAME_IN_B
	/* A write goes to b's rows. */
	ATF_REQUIRE_MSG(sqlite3_exec(db, "INSERT INTO b.calls (thread, depth, "
	    "func_ip, entry_kind, exit_kind, entry_seq, exit_seq, entry_insn, "
	    "exit_insn, insns, self_insns, blocks) VALUES (1, 0, 0, 'call', "
	    "'return', 0, 0, 0, 0, 0, 0, 0)", NULL, NULL, &err) == SQLITE_OK,
	    "insert: %s", err);
	ATF_CHECK_EQ(one(db, "SELECT count(*) FROM b.calls_rows"), 1);
	ATF_CHECK_EQ(one(db, "SELECT count(*) FROM main.calls_rows"), 0);
	ATF_CHECK_EQ(one(db, "SELECT count(*) FROM b.calls"),
	    (int64_t)g.nrows + 1);
	ATF_CHECK_EQ(one(db, "SELECT count(*) FROM main.calls"), 0);
	/* Dropping b's table drops b's storage tables, not main's. */
	ATF_REQUIRE_MSG(sqlite3_exec(db, "DROP TABLE b.calls", NULL, NULL,
	    &err) == SQLITE_OK, "drop: %s", err);
	ATF_CHECK_EQ(one(db, "SELECT count(*) FROM b.sqlite_master WHERE "
	    "name LIKE 'calls%'"), 0);
	ATF_CHECK_EQ(one(db, "SELECT count(*) FROM main.sqlite_master WHERE "
	    "name IN ('calls_pages', 'calls_bysym', 'calls_rows')"), 3);
	sqlite3_close(ref);
	sqlite3_close(db);
	free(g.rows);
}

/*
 * calls_write.c stores the stitcher's kind numbers as they are: the two
 * lists must name the same kinds in the same order.
 */
ATF_TC_WITHOUT_HEAD(call_kinds_agree);
ATF_TC_BODY(call_kinds_agree, tc)
{
	int i;

	for (i = 0; i < CS_NENTRY_KINDS; i++)
		ATF_REQUIRE_MSG(hwtr_cs_entry_kinds[i] != NULL &&
		    strcmp(hwtr_cs_entry_kinds[i], ix_call_entry_kinds[i]) == 0,
		    "entry kind %d: stitcher says '%s', column store '%s'", i,
		    ix_call_entry_kinds[i], hwtr_cs_entry_kinds[i] ?
		    hwtr_cs_entry_kinds[i] : "(end of list)");
	ATF_REQUIRE_MSG(hwtr_cs_entry_kinds[CS_NENTRY_KINDS] == NULL,
	    "expected %d entry kinds, the list has more", CS_NENTRY_KINDS);
	for (i = 0; i < CS_NEXIT_KINDS; i++)
		ATF_REQUIRE_MSG(hwtr_cs_exit_kinds[i] != NULL &&
		    strcmp(hwtr_cs_exit_kinds[i], ix_call_exit_kinds[i]) == 0,
		    "exit kind %d: stitcher says '%s', column store '%s'", i,
		    ix_call_exit_kinds[i], hwtr_cs_exit_kinds[i] ?
		    hwtr_cs_exit_kinds[i] : "(end of list)");
	ATF_REQUIRE_MSG(hwtr_cs_exit_kinds[CS_NEXIT_KINDS] == NULL,
	    "expected %d exit kinds, the list has more", CS_NEXIT_KINDS);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, rows_read_back);
	ATF_TP_ADD_TC(tp, ranges_read_only_their_pages);
	ATF_TP_ADD_TC(tp, damaged_pages_give_errors);
	ATF_TP_ADD_TC(tp, page_parents_predicted);
	ATF_TP_ADD_TC(tp, symbol_copy);
	ATF_TP_ADD_TC(tp, symbol_copy_streamed);
	ATF_TP_ADD_TC(tp, sql_writes_merge);
	ATF_TP_ADD_TC(tp, sql_rows_break_seq_order);
	ATF_TP_ADD_TC(tp, sql_rollback_forgets_its_writes);
	ATF_TP_ADD_TC(tp, sql_rollback_to_forgets_its_writes);
	ATF_TP_ADD_TC(tp, sql_write_after_rollback_sees_its_rows);
	ATF_TP_ADD_TC(tp, sql_write_after_rollback_to_sees_its_rows);
	ATF_TP_ADD_TC(tp, sql_writes_take_strict_types);
	ATF_TP_ADD_TC(tp, sql_failed_update_keeps_its_row);
	ATF_TP_ADD_TC(tp, sql_insert_without_id_takes_the_next);
	ATF_TP_ADD_TC(tp, sql_inserts_without_id_follow_the_last_page);
	ATF_TP_ADD_TC(tp, sql_symbol_callers_follow_writes);
	ATF_TP_ADD_TC(tp, exec_chunks_pack);
	ATF_TP_ADD_TC(tp, attached_database_reads_its_own);
	ATF_TP_ADD_TC(tp, call_kinds_agree);
	return (atf_no_error());
}
