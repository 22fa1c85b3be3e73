/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * sql_one.h: one input of the SQL differential fuzzer.  Two connections
 * hold the same rows: "hw", an in-memory copy of a database hwtrace index
 * made, where calls is the hwtr_calls virtual table (calls_vtab.c) and
 * exec_order, exec_insns those of exec_vtab.c; and "ref",
 * the reference, where they are ordinary tables filled from a full scan of
 * each in the set-up (calls with its hidden caller columns as ordinary
 * ones, kept by the harness to their definition, the parent's symbol and
 * func_ip, after every write).  Each input's bytes are choices (not SQL
 * text) that build a short sequence of steps from a grammar: queries over
 * calls (columns hidden ones included, WHERE trees of comparisons with
 * constants near the fixture's values, ORDER BY, LIMIT and OFFSET,
 * self-joins on parent = id, correlated subqueries, aggregates) and over
 * exec_order and exec_insns, writes (INSERT, UPDATE, DELETE on calls) and
 * savepoints.  Every step runs on both; the answers must be the same: both
 * an error or both not, the same number of changed rows, the same rows as
 * a multiset, and in the same order as far as the ORDER BY decides it.
 * Each input runs in a transaction rolled back at its end.
 *
 * Not compared: exec_order's insn constraints, which select the blocks
 * holding an instruction in the bounds (exec_vtab.c, by design).
 * What is left to SQLite: a write whose WHERE reads calls in a subquery
 * is not made (an ordinary table's DELETE ran its IN (SELECT ... FROM
 * calls) after deleting the first rows, in SQLite 3.40, where a SELECT
 * with the same WHERE finds more); a step interrupted on either side
 * (a per-statement limit of virtual-machine steps, FZ_SQL_STEPS) and an
 * "integer overflow" of sum() on either side (where it happens depends on
 * the order rows are added in) skip the input; reals are compared to 15
 * significant digits.
 *
 * Shared by the libFuzzer target (fuzz_sql.c) and the seed-corpus test
 * (t_sql_seeds.c), so that what the fuzzer checks is what the suite
 * replays.
 */

#ifndef HWTR_FUZZ_SQL_ONE_H
#define HWTR_FUZZ_SQL_ONE_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "colstore.h"
#include "hwtr_ix_sqlite.h"

/* What must hold after each input's rollback (calls as it was). */
#define FZ_SQL_AFTER	"SELECT count(*), sum(id), sum(parent), "	\
	"sum(symbol), sum(entry_seq), sum(caller_symbol), "		\
	"(SELECT count(*) FROM calls WHERE symbol = 1), "		\
	"(SELECT group_concat(id) FROM calls WHERE id IN (1, 77, 1024, "	\
	"1025, 1026, 1513, 1514, 2537, 2538, 2809)) FROM calls"

/* Progress-handler calls (each FZ_SQL_TICK VM steps) a statement may take. */
#define FZ_SQL_TICK	1000
#define FZ_SQL_STEPS	4000
/* Rows an answer may have before the input is skipped. */
#define FZ_SQL_MAXROWS	40000
#define FZ_SQL_MAXSTEPS	8

/* The calls columns (as colstore.h numbers them), hidden ones last. */
static const char *const fz_calls_col[] = {
	"id", "thread", "parent", "depth", "symbol", "func_ip", "call_ip",
	"entry_kind", "exit_kind", "entry_seq", "exit_seq", "entry_insn",
	"exit_insn", "entry_tsc", "exit_tsc", "entry_ns", "exit_ns", "insns",
	"self_insns", "blocks", "caller_symbol", "caller_ip"
};
#define FZ_NCOL		22
#define FZ_NWCOL	20	/* those a write names */
enum { FZ_ID, FZ_THREAD, FZ_PARENT, FZ_DEPTH, FZ_SYMBOL, FZ_FUNC_IP,
	FZ_CALL_IP, FZ_EKIND, FZ_XKIND, FZ_ESEQ, FZ_XSEQ };

static const char *const fz_xo_col[] = {
	"thread", "seq", "block", "insn", "tsc", "ip"
};

/* A value of the fixture: an integer or NULL (kinds are text). */
struct fz_val {
	int64_t		v;
	int		null;
};

struct fuzz_sql_base {
	sqlite3		*hw, *ref;
	unsigned int	ticks;		/* of the statement running */
	int		interrupted;
	/* Facts of the fixture, for constants near real values. */
	struct fz_val	*rows;		/* nrows x FZ_NCOL */
	char		(*kinds)[2][16];
	size_t		nrows;
	int64_t		*bounds;	/* first and last ids of pages */
	size_t		nbounds;
	int64_t		*xo;		/* exec_order rows (thread, seq, block,
					   insn), a sample */
	size_t		nxo;
	int64_t		*chunk;		/* exec_chunks' seq, seq + nblocks,
					   insn, insn + ninsns */
	size_t		nchunk;
	int64_t		maxid;
	int		verbose;
};

/* The text being built (a step's SQL), with sqlite3_str. */
struct fz_gen {
	const uint8_t	*p;
	size_t		n, i;
	const struct fuzz_sql_base *b;
	int		nosub;		/* a write's WHERE: no subquery */
};

/* The next choice among @n (0 when the input is spent). */
static inline unsigned
fz_pick(struct fz_gen *g, unsigned n)
{
	unsigned v;

	if (n <= 1)
		return (0);
	if (g->i >= g->n)
		return (0);
	v = g->p[g->i++];
	if (n > 256 && g->i < g->n)
		v = v << 8 | g->p[g->i++];
	return (v % n);
}

static inline void
fz_int(sqlite3_str *s, int64_t v)
{
	/* -2^63 has no literal: 9223372036854775808 would be a real. */
	if (v == INT64_MIN)
		sqlite3_str_appendf(s, "(-9223372036854775807-1)");
	else if (v < 0)
		sqlite3_str_appendf(s, "(%lld)", (long long)v);
	else
		sqlite3_str_appendf(s, "%lld", (long long)v);
}

/* A row of the fixture, by choice. */
static inline const struct fz_val *
fz_row(struct fz_gen *g)
{
	return (&g->b->rows[fz_pick(g, (unsigned)g->b->nrows) * FZ_NCOL]);
}

/*
 * A constant for column @col of calls (-1: any integer), near the
 * fixture's values: a row's value, one off it, a page's first or last id,
 * a thread, a symbol, the edges of int64, NULL, a real, text, a blob.
 */
static inline void
fz_const(struct fz_gen *g, sqlite3_str *s, int col)
{
	static const int64_t edge[] = { 0, -1, 1, INT64_MIN, INT64_MAX,
	    INT64_MIN + 1, INT64_MAX - 1, 1023, 1024, 1025 };
	const struct fz_val *r = fz_row(g);
	int c = col >= 0 ? col : (int)fz_pick(g, FZ_NCOL);
	struct fz_val v = r[c];
	unsigned k = fz_pick(g, 16);

	if (c == FZ_EKIND || c == FZ_XKIND) {
		if (k < 12) {
			size_t i = (size_t)(r - g->b->rows) / FZ_NCOL;

			sqlite3_str_appendf(s, "'%q'",
			    g->b->kinds[i][c == FZ_XKIND]);
			return;
		}
		v.null = 0;
		v.v = 0;
	}
	switch (k) {
	case 0: case 1: case 2: case 3: case 4: case 5:
		break;
	case 6:
		if (!v.null)
			v.v += fz_pick(g, 2) ? 1 : -1;
		break;
	case 7:
		v.null = 0;
		v.v = g->b->bounds[fz_pick(g, (unsigned)g->b->nbounds)] +
		    (int64_t)fz_pick(g, 3) - 1;
		break;
	case 8:
		v.null = 0;
		v.v = r[FZ_THREAD].v;
		break;
	case 9:
		v = r[FZ_SYMBOL];
		break;
	case 10:
		v.null = 0;
		v.v = edge[fz_pick(g, sizeof(edge) / sizeof(edge[0]))];
		break;
	case 11:
		sqlite3_str_appendf(s, "NULL");
		return;
	case 12:
		switch (fz_pick(g, 4)) {
		case 0:
			sqlite3_str_appendf(s, "%lld.5", v.null ? 0LL :
			    (long long)v.v);
			return;
		case 1:
			sqlite3_str_appendf(s, "%lld.0", v.null ? 0LL :
			    (long long)v.v);
			return;
		case 2:
			sqlite3_str_appendf(s, "1e19");
			return;
		default:
			sqlite3_str_appendf(s, "-1e19");
			return;
		}
	case 13:
		switch (fz_pick(g, 3)) {
		case 0:
			sqlite3_str_appendf(s, "'%lld'", v.null ? 0LL :
			    (long long)v.v);
			return;
		case 1:
			sqlite3_str_appendf(s, "'x'");
			return;
		default:
			sqlite3_str_appendf(s, "X'01'");
			return;
		}
	case 14:
		/* Known only when the statement runs. */
		sqlite3_str_appendf(s, "(SELECT ");
		if (v.null)
			sqlite3_str_appendf(s, "NULL");
		else
			fz_int(s, v.v);
		sqlite3_str_appendf(s, ")");
		return;
	default:
		v.null = 0;
		v.v = g->b->maxid + (int64_t)fz_pick(g, 3);
		break;
	}
	if (v.null)
		sqlite3_str_appendf(s, "NULL");
	else
		fz_int(s, v.v);
}

/* A column of calls by choice, the ones with plans weighted up. */
static inline int
fz_col(struct fz_gen *g)
{
	static const int hot[] = { FZ_ID, FZ_ID, FZ_THREAD, FZ_SYMBOL,
	    FZ_SYMBOL, FZ_ESEQ, FZ_ESEQ, FZ_PARENT, FZ_DEPTH, FZ_XSEQ };
	unsigned k = fz_pick(g, 20);

	if (k < 10)
		return (hot[k]);
	return ((int)fz_pick(g, FZ_NCOL));
}

static const char *const fz_ops[] = { "=", "<", "<=", ">", ">=", "!=",
	"IS", "IS NOT", "==", "<>" };
static const char *const fz_rops[] = { "=", ">", ">=", "<", "<=", "!=",
	"IS", "IS NOT", "==", "<>" };

static inline void fz_cond(struct fz_gen *, sqlite3_str *, const char *,
    int);

/* A comparison on one column of calls (as @a.col when @a). */
static inline void
fz_leaf(struct fz_gen *g, sqlite3_str *s, const char *a)
{
	const char *dot = a != NULL ? "." : "";
	const struct fz_val *r;
	int col = fz_col(g), n, i;
	unsigned k;

	if (a == NULL)
		a = "";
	switch (fz_pick(g, 14)) {
	case 0: case 1: case 2: case 3:
		k = fz_pick(g, 10);
		sqlite3_str_appendf(s, "%s%s%s %s ", a, dot, fz_calls_col[col],
		    fz_ops[k]);
		fz_const(g, s, col);
		break;
	case 4:
		/* The constant first. */
		k = fz_pick(g, 10);
		fz_const(g, s, col);
		sqlite3_str_appendf(s, " %s %s%s%s", fz_rops[k], a, dot,
		    fz_calls_col[col]);
		break;
	case 5:
		sqlite3_str_appendf(s, "%s%s%s %sIN (", a, dot,
		    fz_calls_col[col], fz_pick(g, 4) == 0 ? "NOT " : "");
		n = 1 + (int)fz_pick(g, 4);
		for (i = 0; i < n; i++) {
			if (i > 0)
				sqlite3_str_appendf(s, ", ");
			fz_const(g, s, col);
		}
		sqlite3_str_appendf(s, ")");
		break;
	case 6:
		sqlite3_str_appendf(s, "%s%s%s %sBETWEEN ", a, dot,
		    fz_calls_col[col], fz_pick(g, 5) == 0 ? "NOT " : "");
		fz_const(g, s, col);
		sqlite3_str_appendf(s, " AND ");
		fz_const(g, s, col);
		break;
	case 7:
		sqlite3_str_appendf(s, "%s%s%s IS %sNULL", a, dot,
		    fz_calls_col[col], fz_pick(g, 2) ? "NOT " : "");
		break;
	case 8:
		/* Two columns of the row. */
		sqlite3_str_appendf(s, "%s%s%s %s %s%s%s", a, dot,
		    fz_calls_col[col], fz_ops[fz_pick(g, 6)], a, dot,
		    fz_calls_col[fz_col(g)]);
		break;
	case 9:
		/* A thread and a range of entry_seq around a row's. */
		r = fz_row(g);
		sqlite3_str_appendf(s, "%s%sthread = %lld AND %s%sentry_seq %s ",
		    a, dot, (long long)r[FZ_THREAD].v, a, dot,
		    fz_ops[1 + fz_pick(g, 4)]);
		fz_int(s, r[FZ_ESEQ].v + (int64_t)fz_pick(g, 5) - 2);
		if (fz_pick(g, 2)) {
			sqlite3_str_appendf(s, " AND %s%sentry_seq %s ", a, dot,
			    fz_ops[1 + fz_pick(g, 4)]);
			fz_int(s, r[FZ_ESEQ].v + (int64_t)fz_pick(g, 200) -
			    100);
		}
		break;
	case 10:
		/* A symbol, maybe a thread, and an id range. */
		r = fz_row(g);
		sqlite3_str_appendf(s, "%s%ssymbol = ", a, dot);
		if (r[FZ_SYMBOL].null)
			sqlite3_str_appendf(s, "NULL");
		else
			fz_int(s, r[FZ_SYMBOL].v);
		if (fz_pick(g, 2))
			sqlite3_str_appendf(s, " AND %s%sthread = %lld", a, dot,
			    (long long)r[FZ_THREAD].v);
		if (fz_pick(g, 2)) {
			sqlite3_str_appendf(s, " AND %s%sid %s ", a, dot,
			    fz_ops[1 + fz_pick(g, 4)]);
			fz_int(s, r[FZ_ID].v + (int64_t)fz_pick(g, 5) - 2);
		}
		break;
	case 11:
		/* An id range around a row's. */
		r = fz_row(g);
		sqlite3_str_appendf(s, "%s%sid BETWEEN ", a, dot);
		fz_int(s, r[FZ_ID].v - (int64_t)fz_pick(g, 1100));
		sqlite3_str_appendf(s, " AND ");
		fz_int(s, r[FZ_ID].v + (int64_t)fz_pick(g, 1100));
		break;
	case 12:
		/* A subquery, not correlated (not in a write's WHERE). */
		if (g->nosub) {
			sqlite3_str_appendf(s, "%s%s%s IS NOT NULL", a, dot,
			    fz_calls_col[col]);
			break;
		}
		sqlite3_str_appendf(s, "%s%s%s IN (SELECT %s FROM calls WHERE ",
		    a, dot, fz_calls_col[col], fz_calls_col[fz_col(g)]);
		fz_cond(g, s, NULL, 2);
		sqlite3_str_appendf(s, ")");
		break;
	default:
		sqlite3_str_appendf(s, "%s%sid = ", a, dot);
		fz_const(g, s, FZ_ID);
		break;
	}
}

/* A WHERE tree of comparisons on @a's columns, @depth levels at most. */
static inline void
fz_cond(struct fz_gen *g, sqlite3_str *s, const char *a, int depth)
{
	unsigned k = depth > 0 ? fz_pick(g, 10) : 0;

	if (k < 6) {
		fz_leaf(g, s, a);
		return;
	}
	if (k == 9) {
		sqlite3_str_appendf(s, "NOT (");
		fz_cond(g, s, a, depth - 1);
		sqlite3_str_appendf(s, ")");
		return;
	}
	sqlite3_str_appendf(s, "(");
	fz_cond(g, s, a, depth - 1);
	sqlite3_str_appendf(s, ") %s (", k < 8 ? "AND" : "OR");
	fz_cond(g, s, a, depth - 1);
	sqlite3_str_appendf(s, ")");
}

/* What a query's answer is compared as. */
struct fz_shape {
	int		nkeys;		/* leading columns the ORDER BY sorts */
	int		total;		/* the order decides every row */
};

/*
 * ORDER BY of calls (@a's) whose keys are the first columns: sets
 * @sh, and appends the select list's keys into @sel.
 */
static inline void
fz_order(struct fz_gen *g, sqlite3_str *sel, sqlite3_str *ord,
    const char *a, int limit, struct fz_shape *sh)
{
	static const int shapes[][3] = {
		{ FZ_ID, -1, -1 }, { FZ_THREAD, FZ_ESEQ, -1 },
		{ FZ_THREAD, FZ_ESEQ, FZ_ID }, { FZ_THREAD, FZ_ID, -1 },
		{ FZ_ESEQ, -1, -1 }, { FZ_SYMBOL, FZ_ID, -1 },
		{ FZ_THREAD, -1, -1 }, { -2, -1, -1 }, { -2, -2, -1 },
	};
	const char *dot = a != NULL ? "." : "";
	unsigned k = fz_pick(g, sizeof(shapes) / sizeof(shapes[0]) + 2);
	int i, col, desc = (int)fz_pick(g, 2), has_id = 0;

	sh->nkeys = 0;
	sh->total = 0;
	if (a == NULL)
		a = "";
	if (k >= sizeof(shapes) / sizeof(shapes[0]) && !limit)
		return;
	if (k >= sizeof(shapes) / sizeof(shapes[0]))
		k = 0;
	for (i = 0; i < 4; i++) {
		if (i < 3)
			col = shapes[k][i];
		else
			col = has_id ? -1 : limit ? FZ_ID : -1;
		if (col == -1)
			continue;
		if (col == -2)
			col = (int)fz_pick(g, FZ_NCOL);
		if (col == FZ_ID)
			has_id = 1;
		/* Mostly one direction (what the vtab may take over). */
		if (fz_pick(g, 6) == 0)
			desc = !desc;
		sqlite3_str_appendf(sel, "%s%s%s%s, ", sh->nkeys > 0 ? "" : "",
		    a, dot, fz_calls_col[col]);
		sqlite3_str_appendf(ord, "%s%s%s%s%s", sh->nkeys > 0 ? ", " :
		    " ORDER BY ", a, dot, fz_calls_col[col], desc ? " DESC" :
		    fz_pick(g, 3) == 0 ? " ASC" : "");
		sh->nkeys++;
	}
	sh->total = has_id;
}

/* LIMIT and OFFSET (only under an order that decides every row). */
static inline void
fz_limit(struct fz_gen *g, sqlite3_str *s)
{
	static const int64_t lims[] = { 0, 1, 2, 3, 10, 100, 1000, -1 };

	sqlite3_str_appendf(s, " LIMIT %lld", (long long)lims[fz_pick(g, 8)]);
	if (fz_pick(g, 3) == 0)
		sqlite3_str_appendf(s, " OFFSET %lld", (long long)lims[fz_pick(g,
		    8)] + (int64_t)fz_pick(g, 3));
}

/* Some columns of calls (@a's), hidden ones too, into @s. */
static inline void
fz_cols(struct fz_gen *g, sqlite3_str *s, const char *a)
{
	int n = 1 + (int)fz_pick(g, 4), i;

	for (i = 0; i < n; i++)
		sqlite3_str_appendf(s, "%s%s%s%s", i > 0 ? ", " : "",
		    a != NULL ? a : "", a != NULL ? "." : "",
		    fz_calls_col[fz_pick(g, 3) == 0 ? FZ_NCOL - 1 -
		    (int)fz_pick(g, 2) : (int)fz_pick(g, FZ_NCOL)]);
}

/* A query over calls (one table), into @s. */
static inline void
fz_q_calls(struct fz_gen *g, sqlite3_str *s, struct fz_shape *sh)
{
	sqlite3_str *sel = sqlite3_str_new(NULL), *ord = sqlite3_str_new(NULL);
	int limit = fz_pick(g, 3) == 0;
	char *a, *b;

	fz_order(g, sel, ord, NULL, limit, sh);
	if (!sh->total)
		limit = 0;
	fz_cols(g, sel, NULL);
	a = sqlite3_str_finish(sel);
	b = sqlite3_str_finish(ord);
	sqlite3_str_appendf(s, "SELECT %s FROM calls", a != NULL ? a : "");
	if (fz_pick(g, 8) != 0) {
		sqlite3_str_appendf(s, " WHERE ");
		fz_cond(g, s, NULL, 3);
	}
	sqlite3_str_appendf(s, "%s", b != NULL ? b : "");
	if (limit)
		fz_limit(g, s);
	sqlite3_free(a);
	sqlite3_free(b);
}

/* Aggregates over calls, maybe grouped. */
static inline void
fz_q_agg(struct fz_gen *g, sqlite3_str *s, struct fz_shape *sh)
{
	static const char *const fn[] = { "count", "sum", "min", "max" };
	int n = 1 + (int)fz_pick(g, 4), i, grp = fz_pick(g, 3) == 0;

	sh->nkeys = 0;
	sh->total = !grp;
	sqlite3_str_appendf(s, "SELECT ");
	if (grp)
		sqlite3_str_appendf(s, "%s, ", fz_calls_col[fz_col(g)]);
	sqlite3_str_appendf(s, "count(*)");
	for (i = 0; i < n; i++)
		sqlite3_str_appendf(s, ", %s(%s)", fn[fz_pick(g, 4)],
		    fz_calls_col[fz_pick(g, 2) ? FZ_ID : fz_col(g)]);
	sqlite3_str_appendf(s, " FROM calls");
	if (fz_pick(g, 4) != 0) {
		sqlite3_str_appendf(s, " WHERE ");
		fz_cond(g, s, NULL, 3);
	}
	if (grp) {
		/* Reuse the first column: it is the group's. */
		sqlite3_str_appendf(s, " GROUP BY 1");
	}
}

/* A self-join on parent = id: call c and its parent p. */
static inline void
fz_q_join(struct fz_gen *g, sqlite3_str *s, struct fz_shape *sh)
{
	sqlite3_str *sel = sqlite3_str_new(NULL), *ord = sqlite3_str_new(NULL);
	int limit = fz_pick(g, 3) == 0, left = fz_pick(g, 3) == 0;
	char *a, *b;

	fz_order(g, sel, ord, "c", limit, sh);
	if (!sh->total)
		limit = 0;
	fz_cols(g, sel, "c");
	sqlite3_str_appendf(sel, ", p.id, ");
	fz_cols(g, sel, "p");
	a = sqlite3_str_finish(sel);
	b = sqlite3_str_finish(ord);
	if (fz_pick(g, 2))
		sqlite3_str_appendf(s, "SELECT %s FROM calls c %sJOIN calls p "
		    "ON p.id = c.parent", a, left ? "LEFT " : "");
	else
		sqlite3_str_appendf(s, "SELECT %s FROM calls p %sJOIN calls c "
		    "ON c.parent = p.id", a, left ? "LEFT " : "");
	sqlite3_str_appendf(s, " WHERE ");
	fz_cond(g, s, fz_pick(g, 3) == 0 ? "p" : "c", 2);
	if (fz_pick(g, 2)) {
		sqlite3_str_appendf(s, " AND ");
		fz_cond(g, s, fz_pick(g, 2) ? "p" : "c", 1);
	}
	sqlite3_str_appendf(s, "%s", b);
	if (limit)
		fz_limit(g, s);
	sqlite3_free(a);
	sqlite3_free(b);
}

/* Correlated subqueries: per call, its children, its thread before it. */
static inline void
fz_q_corr(struct fz_gen *g, sqlite3_str *s, struct fz_shape *sh)
{
	sh->nkeys = 0;
	sh->total = 0;
	sqlite3_str_appendf(s, "SELECT c.id, ");
	switch (fz_pick(g, 5)) {
	case 0:
		sqlite3_str_appendf(s, "(SELECT count(*) FROM calls k WHERE "
		    "k.parent = c.id)");
		break;
	case 1:
		sqlite3_str_appendf(s, "(SELECT max(k.id) FROM calls k WHERE "
		    "k.thread = c.thread AND k.entry_seq < c.entry_seq)");
		break;
	case 2:
		sqlite3_str_appendf(s, "(SELECT k.id FROM calls k WHERE "
		    "k.thread = c.thread AND k.entry_seq > c.entry_seq ORDER BY "
		    "k.entry_seq%s, k.id LIMIT 1)", fz_pick(g, 2) ? " DESC" : "");
		break;
	case 3:
		sqlite3_str_appendf(s, "(SELECT min(k.id) FROM calls k WHERE "
		    "k.symbol = c.symbol AND k.id > c.id)");
		break;
	default:
		sqlite3_str_appendf(s, "(SELECT count(*) FROM calls k WHERE "
		    "k.id BETWEEN c.id AND c.id + 3)");
		break;
	}
	sqlite3_str_appendf(s, " FROM calls c WHERE ");
	fz_cond(g, s, "c", 2);
	if (fz_pick(g, 2)) {
		sqlite3_str_appendf(s, " AND %sEXISTS (SELECT 1 FROM calls k "
		    "WHERE k.parent = c.id AND ", fz_pick(g, 3) == 0 ? "NOT " :
		    "");
		fz_cond(g, s, "k", 1);
		sqlite3_str_appendf(s, ")");
	}
}

/* A constant for column @col of exec_order/exec_insns. */
static inline void
fz_xconst(struct fz_gen *g, sqlite3_str *s, int col)
{
	const int64_t *x = &g->b->xo[fz_pick(g, (unsigned)g->b->nxo) * 4];
	const int64_t *ch;
	int64_t v;

	switch (fz_pick(g, 10)) {
	case 0: case 1: case 2: case 3:
		v = col < 4 ? x[col] : x[1];
		break;
	case 4:
		v = (col < 4 ? x[col] : x[1]) + (int64_t)fz_pick(g, 3) - 1;
		break;
	case 5:
		ch = &g->b->chunk[fz_pick(g, (unsigned)g->b->nchunk) * 4];
		v = ch[col == 3 ? 2 + fz_pick(g, 2) : fz_pick(g, 2)] +
		    (int64_t)fz_pick(g, 3) - 1;
		break;
	case 6:
		fz_const(g, s, -1);
		return;
	case 7:
		sqlite3_str_appendf(s, fz_pick(g, 2) ? "NULL" : "%lld.5",
		    (long long)x[1]);
		return;
	default:
		v = x[0];
		break;
	}
	fz_int(s, v);
}

/* A query over exec_order or exec_insns (or calls joined to one). */
static inline void
fz_q_exec(struct fz_gen *g, sqlite3_str *s, struct fz_shape *sh)
{
	int insns = (int)fz_pick(g, 2), ncol = insns ? 6 : 5, i, n;
	const char *t = insns ? "exec_insns" : "exec_order";
	const int64_t *x = &g->b->xo[fz_pick(g, (unsigned)g->b->nxo) * 4];
	unsigned k;

	sh->nkeys = 0;
	sh->total = 0;
	if (fz_pick(g, 4) == 0) {
		/* The blocks of calls: calls joined on thread and seq. */
		sqlite3_str_appendf(s, "SELECT c.id, e.seq, e.block, e.insn "
		    "FROM calls c JOIN %s e ON e.thread = c.thread AND e.seq "
		    "BETWEEN c.entry_seq AND c.entry_seq + %u WHERE ", t,
		    fz_pick(g, 4));
		fz_cond(g, s, "c", 1);
		return;
	}
	k = fz_pick(g, 4);
	sqlite3_str_appendf(s, "SELECT ");
	if (k > 0) {
		/* Ordered by (thread, seq[, insn]), which decides every row. */
		sqlite3_str_appendf(s, "thread, seq, insn, ");
		sh->nkeys = 3;
		sh->total = 1;
	}
	n = 1 + (int)fz_pick(g, 3);
	for (i = 0; i < n; i++)
		sqlite3_str_appendf(s, "%s%s", i > 0 ? ", " : "",
		    fz_xo_col[fz_pick(g, (unsigned)ncol)]);
	sqlite3_str_appendf(s, " FROM %s WHERE thread %s %lld", t,
	    fz_pick(g, 8) == 0 ? ">=" : "=", (long long)x[0]);
	n = (int)fz_pick(g, 4);
	for (i = 0; i < n; i++) {
		int col = fz_pick(g, 3) == 0 ? 3 : fz_pick(g, 5) == 0 ?
		    (int)fz_pick(g, (unsigned)ncol) : 1;

		/*
		 * exec_order's insn bounds give the blocks that hold an
		 * instruction in them, by design (t_query_stream's
		 * windows_across_chunks), not those whose first one is.
		 */
		if (!insns && col == 3)
			col = 1;

		if (fz_pick(g, 5) == 0) {
			sqlite3_str_appendf(s, " AND %s BETWEEN ", fz_xo_col[col]);
			fz_xconst(g, s, col);
			sqlite3_str_appendf(s, " AND ");
			fz_xconst(g, s, col);
			continue;
		}
		sqlite3_str_appendf(s, " AND %s %s ", fz_xo_col[col],
		    fz_ops[fz_pick(g, 6)]);
		fz_xconst(g, s, col);
	}
	/* Without a bound on seq or insn a thread is many rows: bound it. */
	sqlite3_str_appendf(s, " AND seq < %lld", (long long)x[1] + 300);
	if (k > 0) {
		const char *d = k == 3 ? " DESC" : "";

		if (insns)
			sqlite3_str_appendf(s, " ORDER BY thread%s, seq%s, "
			    "insn%s", d, d, d);
		else
			sqlite3_str_appendf(s, " ORDER BY thread%s, %s%s", d,
			    fz_pick(g, 2) ? "seq" : "insn", d);
		if (fz_pick(g, 3) == 0)
			fz_limit(g, s);
	}
}

/* A write on calls. */
static inline void
fz_write(struct fz_gen *g, sqlite3_str *s)
{
	const struct fz_val *r;
	size_t ri;
	int i, n;

	switch (fz_pick(g, 8)) {
	case 0: case 1:
		/* One row like a fixture row, changed. */
		r = fz_row(g);
		ri = (size_t)(r - g->b->rows) / FZ_NCOL;
		sqlite3_str_appendf(s, "INSERT INTO calls (");
		for (i = 0; i < FZ_NWCOL; i++)
			sqlite3_str_appendf(s, "%s%s", i > 0 ? ", " : "",
			    fz_calls_col[i]);
		sqlite3_str_appendf(s, ") VALUES (");
		for (i = 0; i < FZ_NWCOL; i++) {
			unsigned k = fz_pick(g, 8);

			if (i > 0)
				sqlite3_str_appendf(s, ", ");
			if (i == FZ_ID && k < 3) {
				sqlite3_str_appendf(s, k == 0 ? "NULL" : "%lld",
				    (long long)(g->b->maxid + k));
			} else if (i == FZ_ID && k < 5) {
				fz_int(s, g->b->bounds[fz_pick(g,
				    (unsigned)g->b->nbounds)] +
				    (int64_t)fz_pick(g, 3) - 1);
			} else if (k == 7 || (i == FZ_ID && k == 6))
				fz_const(g, s, i);
			else if (i == FZ_EKIND || i == FZ_XKIND)
				sqlite3_str_appendf(s, "'%q'",
				    g->b->kinds[ri][i == FZ_XKIND]);
			else if (r[i].null)
				sqlite3_str_appendf(s, "NULL");
			else
				fz_int(s, r[i].v + (k == 5 ? (int64_t)fz_pick(g,
				    7) - 3 : 0));
		}
		sqlite3_str_appendf(s, ")");
		break;
	case 2:
		/* Copies of rows under new ids, read from calls itself. */
		sqlite3_str_appendf(s, "INSERT INTO calls (");
		for (i = 0; i < FZ_NWCOL; i++)
			sqlite3_str_appendf(s, "%s%s", i > 0 ? ", " : "",
			    fz_calls_col[i]);
		sqlite3_str_appendf(s, ") SELECT id + %lld",
		    (long long)(fz_pick(g, 4) == 0 ? (int64_t)fz_pick(g, 3) :
		    g->b->maxid + (int64_t)fz_pick(g, 3000)));
		for (i = 1; i < FZ_NWCOL; i++)
			sqlite3_str_appendf(s, ", %s%s", fz_calls_col[i],
			    i == FZ_ESEQ && fz_pick(g, 2) ? " + 1" : "");
		sqlite3_str_appendf(s, " FROM calls WHERE ");
		fz_cond(g, s, NULL, 2);
		break;
	case 3: case 4: case 5:
		sqlite3_str_appendf(s, "UPDATE calls SET ");
		n = 1 + (int)fz_pick(g, 2);
		for (i = 0; i < n; i++) {
			int col = (int)fz_pick(g, FZ_NWCOL);

			if (fz_pick(g, 2))
				col = fz_col(g) % FZ_NWCOL;
			sqlite3_str_appendf(s, "%s%s = ", i > 0 ? ", " : "",
			    fz_calls_col[col]);
			if (col != FZ_EKIND && col != FZ_XKIND &&
			    fz_pick(g, 3) == 0)
				sqlite3_str_appendf(s, "%s + %u",
				    fz_calls_col[col], fz_pick(g, 3) == 0 ?
				    (unsigned)g->b->maxid : fz_pick(g, 3));
			else if (col == FZ_ID && fz_pick(g, 2))
				sqlite3_str_appendf(s, "%lld",
				    (long long)g->b->maxid + 1 + fz_pick(g,
				    3));
			else
				fz_const(g, s, col);
		}
		sqlite3_str_appendf(s, " WHERE ");
		fz_cond(g, s, NULL, 2);
		break;
	default:
		sqlite3_str_appendf(s, "DELETE FROM calls WHERE ");
		fz_cond(g, s, NULL, 2);
		break;
	}
}

/* One answer: its rows as text, or the error. */
struct fz_ans {
	int		rc;		/* SQLITE_OK or the error */
	char		*err;
	char		**row;
	size_t		nrow, cap;
	char		**key;		/* the leading key columns of each */
	int64_t		changes;
};

static inline void
fz_ans_free(struct fz_ans *a)
{
	size_t i;

	for (i = 0; i < a->nrow; i++) {
		sqlite3_free(a->row[i]);
		sqlite3_free(a->key[i]);
	}
	free(a->row);
	free(a->key);
	sqlite3_free(a->err);
	memset(a, 0, sizeof(*a));
}

static inline int
fz_progress(void *arg)
{
	struct fuzz_sql_base *b = arg;

	if (++b->ticks > FZ_SQL_STEPS) {
		b->interrupted = 1;
		return (1);
	}
	return (0);
}

/* A value as text, typed: i:, r: (15 digits), t:, b: (hex), NULL. */
static inline void
fz_value(sqlite3_str *s, sqlite3_stmt *st, int i)
{
	const unsigned char *p;
	int n, j;

	switch (sqlite3_column_type(st, i)) {
	case SQLITE_INTEGER:
		sqlite3_str_appendf(s, "i:%lld",
		    (long long)sqlite3_column_int64(st, i));
		break;
	case SQLITE_FLOAT:
		sqlite3_str_appendf(s, "r:%.15g", sqlite3_column_double(st, i));
		break;
	case SQLITE_TEXT:
		sqlite3_str_appendf(s, "t:%s", sqlite3_column_text(st, i));
		break;
	case SQLITE_BLOB:
		p = sqlite3_column_blob(st, i);
		n = sqlite3_column_bytes(st, i);
		sqlite3_str_appendf(s, "b:");
		for (j = 0; j < n; j++)
			sqlite3_str_appendf(s, "%02x", p[j]);
		break;
	default:
		sqlite3_str_appendf(s, "NULL");
		break;
	}
}

/* Run @sql on @db into @a; the first @nkeys columns are the keys. */
static inline void
fz_run(struct fuzz_sql_base *b, sqlite3 *db, const char *sql, int nkeys,
    struct fz_ans *a)
{
	sqlite3_stmt *st = NULL;
	int rc, i, n;

	memset(a, 0, sizeof(*a));
	b->ticks = 0;
	b->interrupted = 0;
	rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	if (rc == SQLITE_OK && st == NULL)
		rc = SQLITE_DONE;	/* no statement */
	while (rc != SQLITE_DONE && (rc == SQLITE_OK || rc == SQLITE_ROW) &&
	    (rc = sqlite3_step(st)) == SQLITE_ROW) {
		sqlite3_str *r = sqlite3_str_new(NULL);
		sqlite3_str *k = sqlite3_str_new(NULL);

		if (a->nrow == a->cap) {
			a->cap = a->cap ? a->cap * 2 : 64;
			a->row = realloc(a->row, a->cap * sizeof(*a->row));
			a->key = realloc(a->key, a->cap * sizeof(*a->key));
			if (a->row == NULL || a->key == NULL)
				abort();
		}
		n = sqlite3_column_count(st);
		for (i = 0; i < n; i++) {
			if (i > 0)
				sqlite3_str_appendchar(r, 1, '|');
			fz_value(r, st, i);
			if (i < nkeys) {
				if (i > 0)
					sqlite3_str_appendchar(k, 1, '|');
				fz_value(k, st, i);
			}
		}
		a->row[a->nrow] = sqlite3_str_finish(r);
		a->key[a->nrow++] = sqlite3_str_finish(k);
		if (a->nrow > FZ_SQL_MAXROWS) {
			b->interrupted = 1;
			break;
		}
	}
	a->rc = rc == SQLITE_DONE || rc == SQLITE_ROW ? SQLITE_OK : rc;
	if (a->rc != SQLITE_OK)
		a->err = sqlite3_mprintf("%s", sqlite3_errmsg(db));
	a->changes = sqlite3_changes64(db);
	sqlite3_finalize(st);
}

static inline int
fz_strcmp(const void *x, const void *y)
{
	return (strcmp(*(char *const *)x, *(char *const *)y));
}

/* Sequences of strings equal? (@sort: as multisets.) */
static inline int
fz_same(char **x, char **y, size_t n, int sort)
{
	size_t i;

	if (sort && n > 1) {
		qsort(x, n, sizeof(*x), fz_strcmp);
		qsort(y, n, sizeof(*y), fz_strcmp);
	}
	for (i = 0; i < n; i++)
		if (strcmp(x[i] != NULL ? x[i] : "", y[i] != NULL ? y[i] : "")
		    != 0)
			return (0);
	return (1);
}

static inline void
fz_print_ans(sqlite3_str *s, const char *who, const struct fz_ans *a)
{
	size_t i;

	if (a->rc != SQLITE_OK) {
		sqlite3_str_appendf(s, "  %s: error %d: %s\n", who, a->rc,
		    a->err);
		return;
	}
	sqlite3_str_appendf(s, "  %s: %llu rows, %lld changes\n", who,
	    (unsigned long long)a->nrow, (long long)a->changes);
	for (i = 0; i < a->nrow && i < 40; i++)
		sqlite3_str_appendf(s, "    %s\n", a->row[i]);
	if (i < a->nrow)
		sqlite3_str_appendf(s, "    ...\n");
}

/* The caller columns of the reference, to their definition. */
#define FZ_REF_CALLERS							\
	"UPDATE calls SET caller_symbol = (SELECT p.symbol FROM calls p "	\
	"WHERE p.id = calls.parent), caller_ip = (SELECT p.func_ip FROM "	\
	"calls p WHERE p.id = calls.parent)"

/*
 * Run input @data (@len bytes) on both connections of @b.  0: the same
 * answers (or an input skipped); -1: a difference, *@reportp (malloc'd
 * by sqlite3, sqlite3_free()) saying which step, its SQL and both
 * answers.
 */
static inline int
fuzz_sql_one(struct fuzz_sql_base *b, const uint8_t *data, size_t len,
    char **reportp)
{
	struct fz_gen g = { data, len, 0, b, 0 };
	sqlite3_str *log = sqlite3_str_new(NULL);
	int nsteps, i, rc = 0, sp = 0;

	*reportp = NULL;
	if (sqlite3_exec(b->hw, "BEGIN", NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_exec(b->ref, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
		abort();
	nsteps = 1 + (int)fz_pick(&g, FZ_SQL_MAXSTEPS);
	for (i = 0; i < nsteps && rc == 0; i++) {
		sqlite3_str *s = sqlite3_str_new(NULL);
		struct fz_shape sh = { 0, 0 };
		struct fz_ans x, y;
		unsigned k = fz_pick(&g, 16);
		int write = 0, skip = 0, ok;
		char *sql;

		if (k < 5)
			fz_q_calls(&g, s, &sh);
		else if (k < 7)
			fz_q_agg(&g, s, &sh);
		else if (k < 8)
			fz_q_join(&g, s, &sh);
		else if (k < 9)
			fz_q_corr(&g, s, &sh);
		else if (k < 11)
			fz_q_exec(&g, s, &sh);
		else if (k < 15) {
			g.nosub = 1;
			fz_write(&g, s);
			g.nosub = 0;
			write = 1;
		} else if (!sp) {
			sqlite3_str_appendf(s, "SAVEPOINT fz");
			sp = 1;
		} else {
			sqlite3_str_appendf(s, fz_pick(&g, 3) ? "ROLLBACK TO fz" :
			    "RELEASE fz");
			sp = 0;
		}
		sql = sqlite3_str_finish(s);
		if (sql == NULL)
			abort();
		sqlite3_str_appendf(log, "step %d: %s\n", i + 1, sql);
		if (b->verbose)
			fprintf(stderr, "step %d: %s\n", i + 1, sql);
		if (b->verbose > 1) {
			/* Only the steps (to look for inputs of a shape). */
			sqlite3_free(sql);
			continue;
		}
		fz_run(b, b->hw, sql, sh.nkeys, &x);
		skip = b->interrupted;
		fz_run(b, b->ref, sql, sh.nkeys, &y);
		skip |= b->interrupted;
		if (write && y.rc == SQLITE_OK &&
		    sqlite3_exec(b->ref, FZ_REF_CALLERS, NULL, NULL, NULL) !=
		    SQLITE_OK)
			abort();
		/* Not ours: where sum() overflows depends on the order. */
		if ((x.err != NULL && strstr(x.err, "integer overflow")) ||
		    (y.err != NULL && strstr(y.err, "integer overflow")))
			skip = 1;
		/* Above id INT64_MAX a table picks an id at random. */
		if (x.err != NULL && strstr(x.err, "no id left"))
			skip = 1;
		if (skip) {
			fz_ans_free(&x);
			fz_ans_free(&y);
			sqlite3_free(sql);
			break;
		}
		if ((x.rc == SQLITE_OK) != (y.rc == SQLITE_OK))
			ok = 0;
		else if (x.rc != SQLITE_OK)
			ok = 1;
		else if (x.nrow != y.nrow || (write && x.changes != y.changes))
			ok = 0;
		else {
			ok = fz_same(x.key, y.key, x.nrow, 0);
			if (ok)
				ok = fz_same(x.row, y.row, x.nrow, !sh.total);
		}
		if (!ok) {
			sqlite3_str_appendf(log, "difference at step %d (%s "
			    "compared%s):\n", i + 1, sh.total ? "in order" :
			    "as multisets", sh.nkeys > 0 ? ", keys in order" :
			    "");
			sqlite3_str_appendf(log, "  hwtrace (calls the virtual "
			    "table): %s\n", sql);
			sqlite3_str_appendf(log, "  reference (calls an ordinary "
			    "table): %s\n", sql);
			fz_print_ans(log, "hwtrace", &x);
			fz_print_ans(log, "reference", &y);
			rc = -1;
		}
		fz_ans_free(&x);
		fz_ans_free(&y);
		sqlite3_free(sql);
	}
	if (sqlite3_exec(b->hw, "ROLLBACK", NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_exec(b->ref, "ROLLBACK", NULL, NULL, NULL) != SQLITE_OK)
		abort();
	/*
	 * Rolled back, calls is the fixture again (what a cache kept from
	 * before would show here, not in the next input).
	 */
	if (rc == 0) {
		struct fz_ans x, y;

		fz_run(b, b->hw, FZ_SQL_AFTER, 0, &x);
		fz_run(b, b->ref, FZ_SQL_AFTER, 0, &y);
		if (x.rc != SQLITE_OK || y.rc != SQLITE_OK || x.nrow != 1 ||
		    y.nrow != 1 || strcmp(x.row[0], y.row[0]) != 0) {
			sqlite3_str_appendf(log, "difference after the "
			    "rollback: %s\n", FZ_SQL_AFTER);
			fz_print_ans(log, "hwtrace", &x);
			fz_print_ans(log, "reference", &y);
			rc = -1;
		}
		fz_ans_free(&x);
		fz_ans_free(&y);
	}
	if (rc < 0)
		*reportp = sqlite3_str_finish(log);
	else
		sqlite3_free(sqlite3_str_finish(log));
	return (rc);
}

/* Run @sql on @db, or say why not in @err. */
static inline int
fz_exec(sqlite3 *db, const char *sql, char *err, size_t errlen)
{
	char *msg = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &msg) == SQLITE_OK)
		return (0);
	snprintf(err, errlen, "%.60s...: %s", sql, msg != NULL ? msg : "?");
	sqlite3_free(msg);
	return (-1);
}

/* The facts of the fixture (from the reference) into @b. */
static inline int
fz_facts(struct fuzz_sql_base *b, char *err, size_t errlen)
{
	sqlite3_stmt *st = NULL;
	size_t cap = 0, n;
	int rc, i;

	if (sqlite3_prepare_v2(b->ref, "SELECT * FROM calls ORDER BY id", -1,
	    &st, NULL) != SQLITE_OK)
		goto fail;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct fz_val *r;

		if (b->nrows == cap) {
			cap = cap ? cap * 2 : 1024;
			b->rows = realloc(b->rows, cap * FZ_NCOL *
			    sizeof(*b->rows));
			b->kinds = realloc(b->kinds, cap * sizeof(*b->kinds));
			if (b->rows == NULL || b->kinds == NULL)
				abort();
		}
		r = &b->rows[b->nrows * FZ_NCOL];
		for (i = 0; i < FZ_NCOL; i++) {
			r[i].null = sqlite3_column_type(st, i) == SQLITE_NULL;
			r[i].v = sqlite3_column_int64(st, i);
		}
		snprintf(b->kinds[b->nrows][0], sizeof(b->kinds[0][0]), "%s",
		    sqlite3_column_text(st, FZ_EKIND));
		snprintf(b->kinds[b->nrows][1], sizeof(b->kinds[0][1]), "%s",
		    sqlite3_column_text(st, FZ_XKIND));
		if (r[FZ_ID].v > b->maxid)
			b->maxid = r[FZ_ID].v;
		b->nrows++;
	}
	sqlite3_finalize(st);
	st = NULL;
	if (rc != SQLITE_DONE)
		goto fail;
	/* Page bounds, from the hwtrace side's storage table. */
	if (sqlite3_prepare_v2(b->hw, "SELECT id0, id0 + n - 1 FROM "
	    "calls_pages ORDER BY id0", -1, &st, NULL) != SQLITE_OK)
		goto fail;
	cap = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (b->nbounds + 2 > cap) {
			cap = cap ? cap * 2 : 64;
			if ((b->bounds = realloc(b->bounds, cap *
			    sizeof(*b->bounds))) == NULL)
				abort();
		}
		b->bounds[b->nbounds++] = sqlite3_column_int64(st, 0);
		b->bounds[b->nbounds++] = sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	st = NULL;
	if (rc != SQLITE_DONE)
		goto fail;
	/* Every 37th block of exec_order (a few thousand), and chunks. */
	if (sqlite3_prepare_v2(b->ref, "SELECT thread, seq, block, insn FROM "
	    "exec_order WHERE rowid % 37 = 1", -1, &st, NULL) != SQLITE_OK)
		goto fail;
	cap = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (b->nxo == cap) {
			cap = cap ? cap * 2 : 1024;
			if ((b->xo = realloc(b->xo, cap * 4 *
			    sizeof(*b->xo))) == NULL)
				abort();
		}
		for (i = 0; i < 4; i++)
			b->xo[b->nxo * 4 + (size_t)i] =
			    sqlite3_column_int64(st, i);
		b->nxo++;
	}
	sqlite3_finalize(st);
	st = NULL;
	if (rc != SQLITE_DONE)
		goto fail;
	if (sqlite3_prepare_v2(b->hw, "SELECT seq, seq + nblocks, insn, insn "
	    "+ ninsns FROM exec_chunks", -1, &st, NULL) != SQLITE_OK)
		goto fail;
	cap = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (b->nchunk == cap) {
			cap = cap ? cap * 2 : 64;
			if ((b->chunk = realloc(b->chunk, cap * 4 *
			    sizeof(*b->chunk))) == NULL)
				abort();
		}
		for (i = 0; i < 4; i++)
			b->chunk[b->nchunk * 4 + (size_t)i] =
			    sqlite3_column_int64(st, i);
		b->nchunk++;
	}
	sqlite3_finalize(st);
	st = NULL;
	if (rc != SQLITE_DONE)
		goto fail;
	n = b->nrows;
	if (n < 2 * 1024 || b->nbounds < 6 || b->nxo < 100 ||
	    b->nchunk < 1) {
		snprintf(err, errlen, "the fixture is too small: %zu calls, "
		    "%zu pages, %zu sampled blocks, %zu chunks (want several "
		    "pages)", n, b->nbounds / 2, b->nxo, b->nchunk);
		return (-1);
	}
	return (0);
fail:
	snprintf(err, errlen, "reading the fixture's facts: %s",
	    sqlite3_errmsg(b->hw));
	sqlite3_finalize(st);
	return (-1);
}

/*
 * The reference's schema: calls as calls_rows declares its columns
 * (HWTR_CS_ROW_COLS: types, NOT NULL; id the row id), STRICT as the
 * virtual table's writes are (cv_value_ok()), with the hidden caller
 * columns as ordinary ones;
 * exec_order and exec_insns as their virtual tables declare theirs.
 */
#define FZ_REF_SCHEMA							\
	"CREATE TABLE r.calls (id INTEGER PRIMARY KEY, "		\
	HWTR_CS_ROW_COLS ", "						\
	"caller_symbol INTEGER, caller_ip INTEGER) STRICT;"		\
	"CREATE INDEX r.calls_parent ON calls (parent);"		\
	"INSERT INTO r.calls SELECT id, thread, parent, depth, symbol, "	\
	"func_ip, call_ip, entry_kind, exit_kind, entry_seq, exit_seq, "	\
	"entry_insn, exit_insn, entry_tsc, exit_tsc, entry_ns, exit_ns, "	\
	"insns, self_insns, blocks, NULL, NULL FROM main.calls;"	\
	"CREATE TABLE r.exec_order (thread, seq, block, insn, tsc);"	\
	"INSERT INTO r.exec_order SELECT * FROM main.exec_order;"	\
	"CREATE TABLE r.exec_insns (thread, seq, block, insn, tsc, ip);" \
	"INSERT INTO r.exec_insns SELECT thread, seq, block, insn, tsc, ip " \
	"FROM main.exec_insns;"

static inline void
fz_base_free(struct fuzz_sql_base *b)
{
	sqlite3_close(b->hw);
	sqlite3_close(b->ref);
	free(b->rows);
	free(b->kinds);
	free(b->bounds);
	free(b->xo);
	free(b->chunk);
	memset(b, 0, sizeof(*b));
}

/*
 * Set up @b from the database @path that hwtrace index wrote: an
 * in-memory copy of it with hwtrace's modules (hw), and the reference made
 * from it (ref; its caller columns computed from parent).  0, or -1 with
 * @err saying why.
 */
static inline int
fuzz_sql_base_init(struct fuzz_sql_base *b, const char *path, char *err,
    size_t errlen)
{
	sqlite3 *file = NULL;
	sqlite3_backup *bk;
	unsigned char *img;
	sqlite3_int64 size;
	int rc;

	memset(b, 0, sizeof(*b));
	if (sqlite3_open_v2(path, &file, SQLITE_OPEN_READONLY, NULL) !=
	    SQLITE_OK) {
		snprintf(err, errlen, "cannot open '%s': %s", path,
		    sqlite3_errmsg(file));
		sqlite3_close(file);
		return (-1);
	}
	if (sqlite3_open(":memory:", &b->hw) != SQLITE_OK ||
	    sqlite3_open(":memory:", &b->ref) != SQLITE_OK ||
	    hwtr_ix_sqlite_register(b->hw) != 0) {
		snprintf(err, errlen, "cannot open in-memory databases");
		goto fail;
	}
	bk = sqlite3_backup_init(b->hw, "main", file, "main");
	rc = bk != NULL ? sqlite3_backup_step(bk, -1) : SQLITE_ERROR;
	sqlite3_backup_finish(bk);
	sqlite3_close(file);
	file = NULL;
	if (rc != SQLITE_DONE) {
		snprintf(err, errlen, "cannot copy '%s': %s", path,
		    sqlite3_errmsg(b->hw));
		goto fail;
	}
	/* The reference, made on hw's side, then moved to its own. */
	if (fz_exec(b->hw, "ATTACH ':memory:' AS r", err, errlen) < 0 ||
	    fz_exec(b->hw, FZ_REF_SCHEMA, err, errlen) < 0)
		goto fail;
	if ((img = sqlite3_serialize(b->hw, "r", &size, 0)) == NULL) {
		snprintf(err, errlen, "cannot serialize the reference");
		goto fail;
	}
	if (fz_exec(b->hw, "DETACH r", err, errlen) < 0)
		goto fail;
	if (sqlite3_deserialize(b->ref, "main", img, size, size,
	    SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_RESIZEABLE) !=
	    SQLITE_OK) {
		snprintf(err, errlen, "cannot load the reference: %s",
		    sqlite3_errmsg(b->ref));
		goto fail;
	}
	if (fz_exec(b->ref, FZ_REF_CALLERS, err, errlen) < 0 ||
	    fz_facts(b, err, errlen) < 0)
		goto fail;
	sqlite3_progress_handler(b->hw, FZ_SQL_TICK, fz_progress, b);
	sqlite3_progress_handler(b->ref, FZ_SQL_TICK, fz_progress, b);
	return (0);
fail:
	sqlite3_close(file);
	fz_base_free(b);
	return (-1);
}

static inline void
fuzz_sql_base_free(struct fuzz_sql_base *b)
{
	fz_base_free(b);
}

#endif /* !HWTR_FUZZ_SQL_ONE_H */
