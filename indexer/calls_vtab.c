/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The calls table: a virtual table (module "hwtr_calls") over the column
 * store of colstore.h, created by the schema with
 *   CREATE VIRTUAL TABLE calls USING hwtr_calls
 * and registered by hwtr_ix_sqlite_register() and by the loadable
 * extension, like exec_order (exec_vtab.c).
 *
 * A cursor reads rows in id order, ascending or descending, merging the
 * pages hwtrace index wrote (calls_pages) with the rows SQL inserted
 * (calls_rows).  It reads only what its constraints need:
 *   id = ?                     one page, found by its first id;
 *   symbol = ?                 the pages of its copy in calls_bysym;
 *   thread = ? [entry_seq range] [id range]
 *                              the pages of that thread and range, found
 *                              by (thread, seq0) and (thread, seq1);
 *   otherwise [id range]       the pages of the range, or all.
 * Ids follow (thread, entry_seq), so that id order also serves ORDER BY
 * thread, entry_seq, id and the planner skips its sort (and LIMIT 1 reads
 * one page).  Decoded pages stay in a small cache of the table, shared
 * by its cursors, so that a join on parent = id, a lookup per root or the
 * seeks of a walk read a page once.  The hidden columns caller_symbol and
 * caller_ip come from the symbol copy's pages, or from a lookup of the
 * parent.
 *
 * This file holds the module, its plans and its cursors' scans; the
 * writes through the table (xUpdate, the transaction hooks) are
 * calls_vtab_write.c's, and the statement pool and page cache both use
 * are calls_vtab_page.c's (calls_vtab_int.h).
 */

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "calls_vtab_int.h"
#include "colstore.h"
#include "hwtr_common.h"

/* Plans (idxNum & 7), and the order bit. */
#define CV_SCAN		0
#define CV_ID		1
#define CV_SYM		2
#define CV_THREAD	3
#define CV_DESC		8
#define CV_KEYS		16	/* the order taken needs calls_rows empty */

static int
cv_init(sqlite3 *db, int create, int argc, const char *const *argv,
    sqlite3_vtab **vtp, char **errp)
{
	struct cv_vtab *vt;
	char *sql;
	int rc, i;

	if (argc != 3) {
		*errp = sqlite3_mprintf("hwtr_calls takes no arguments");
		return (SQLITE_ERROR);
	}
	if (create) {
		if ((sql = hwtr_cv_subst(HWTR_CS_SHADOW_SQL, argv[1],
		    argv[2])) == NULL)
			return (SQLITE_NOMEM);
		rc = sqlite3_exec(db, sql, NULL, NULL, errp);
		sqlite3_free(sql);
		if (rc != SQLITE_OK)
			return (rc);
	}
	rc = sqlite3_declare_vtab(db, "CREATE TABLE x(" HWTR_CS_COLUMNS ")");
	if (rc != SQLITE_OK)
		return (rc);
	/* It reads and writes only the database's own tables. */
	(void)sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
	if ((vt = sqlite3_malloc(sizeof(*vt))) == NULL)
		return (SQLITE_NOMEM);
	memset(vt, 0, sizeof(*vt));
	hwtr_cv_winit(vt);
	vt->db = db;
	vt->pristine = vt->rows_empty = -1;
	for (i = 0; i < CV_NCACHE; i++)
		vt->cache[i].id0 = -1;
	vt->name = sqlite3_mprintf("%s", argv[2]);
	vt->schema = sqlite3_mprintf("%s", argv[1]);
	if (vt->name == NULL || vt->schema == NULL) {
		sqlite3_free(vt->name);
		sqlite3_free(vt->schema);
		sqlite3_free(vt);
		return (SQLITE_NOMEM);
	}
	*vtp = &vt->base;
	return (SQLITE_OK);
}

static int
cv_create(sqlite3 *db, void *aux, int argc, const char *const *argv,
    sqlite3_vtab **vtp, char **errp)
{
	(void)aux;
	return (cv_init(db, 1, argc, argv, vtp, errp));
}

static int
cv_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
    sqlite3_vtab **vtp, char **errp)
{
	(void)aux;
	return (cv_init(db, 0, argc, argv, vtp, errp));
}

/* The pooled statements go (before the storage tables may). */
static void
cv_pool_free(struct cv_vtab *vt)
{
	int i;

	for (i = 0; i < CV_NPOOL; i++) {
		sqlite3_finalize(vt->pool[i].st);
		vt->pool[i].st = NULL;
	}
	hwtr_cv_wfree(vt);
}

static int
cv_disconnect(sqlite3_vtab *vtab)
{
	struct cv_vtab *vt = (struct cv_vtab *)vtab;
	int i;

	cv_pool_free(vt);
	for (i = 0; i < CV_NCACHE; i++)
		sqlite3_free(vt->cache[i].rows);
	sqlite3_free(vt->name);
	sqlite3_free(vt->schema);
	sqlite3_free(vt);
	return (SQLITE_OK);
}

static int
cv_destroy(sqlite3_vtab *vtab)
{
	struct cv_vtab *vt = (struct cv_vtab *)vtab;
	char *sql;
	int rc;

	sql = hwtr_cv_subst("DROP TABLE IF EXISTS \"%2$s\".\"%1$s_pages\"; "
	    "DROP TABLE IF EXISTS \"%2$s\".\"%1$s_bysym\"; DROP TABLE IF EXISTS "
	    "\"%2$s\".\"%1$s_rows\";", vt->schema, vt->name);
	if (sql == NULL)
		return (SQLITE_NOMEM);
	cv_pool_free(vt);
	rc = sqlite3_exec(vt->db, sql, NULL, NULL, NULL);
	sqlite3_free(sql);
	if (rc == SQLITE_OK)
		cv_disconnect(vtab);
	return (rc);
}

/*
 * Does an ORDER BY of these terms hold for rows in id order (ascending,
 * or all descending)?  Id order is (thread, entry_seq, id) order, and a
 * column under equality may be left out.  *@keysp: the order has thread
 * or entry_seq, which holds for the pages only: rows SQL wrote
 * (calls_rows) may have any ids.
 */
static int
cv_order_ok(const sqlite3_index_info *ii, int thread_eq, int id_eq,
    int *descp, int *keysp)
{
	static const int seq[] = { CS_THREAD, CS_ENTRY_SEQ, CS_ID };
	int i, k = 0, desc;

	*keysp = 0;
	if (ii->nOrderBy == 0)
		return (0);
	desc = ii->aOrderBy[0].desc;
	if (id_eq) {
		*descp = desc;
		return (1);
	}
	for (i = 0; i < ii->nOrderBy; i++) {
		int col = ii->aOrderBy[i].iColumn;

		if (ii->aOrderBy[i].desc != desc)
			return (0);
		if (col == CS_THREAD && thread_eq)
			continue;
		if (col != CS_ID)
			*keysp = 1;
		if (col == CS_ID) {
			/* Ids are unique: whatever follows is decided. */
			*descp = desc;
			return (1);
		}
		/* entry_seq needs one thread (by equality or before it). */
		while (k < 3 && seq[k] != col)
			k++;
		if (k == 3)
			return (0);
		if (col == CS_ENTRY_SEQ && !thread_eq && (i == 0 ||
		    ii->aOrderBy[i - 1].iColumn != CS_THREAD))
			return (0);
		k++;
	}
	*descp = desc;
	return (1);
}

/* 1 when calls_rows has no row (or cannot be read: the caller errs). */
static int
cv_rows_empty(struct cv_vtab *vt)
{
	sqlite3_stmt *st = NULL;
	char *sql;
	int rc;

	if ((sql = hwtr_cv_subst("SELECT 1 FROM \"%2$s\".\"%1$s_rows\" "
	    "LIMIT 1", vt->schema, vt->name)) == NULL)
		return (0);
	rc = sqlite3_prepare_v2(vt->db, sql, -1, &st, NULL);
	sqlite3_free(sql);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return (rc != SQLITE_ROW);
}

static int
cv_best_index(sqlite3_vtab *vtab, sqlite3_index_info *ii)
{
	int i, argn = 0, plan, desc = 0, keys;
	int id_eq = -1, thread_eq = -1, sym_eq = -1;
	char ops[64];
	size_t no = 0;
	double cost, rows;

	(void)vtab;
	for (i = 0; i < ii->nConstraint; i++) {
		const struct sqlite3_index_constraint *c = &ii->aConstraint[i];

		if (!c->usable || c->op != SQLITE_INDEX_CONSTRAINT_EQ)
			continue;
		if (c->iColumn == CS_ID && id_eq < 0)
			id_eq = i;
		else if (c->iColumn == CS_THREAD && thread_eq < 0)
			thread_eq = i;
		else if (c->iColumn == CS_SYMBOL && sym_eq < 0)
			sym_eq = i;
	}
	if (id_eq >= 0) {
		plan = CV_ID;
		cost = 10;
		rows = 1;
		ii->idxFlags |= SQLITE_INDEX_SCAN_UNIQUE;
	} else if (sym_eq >= 0) {
		plan = CV_SYM;
		cost = 2000;
		rows = 1000;
	} else if (thread_eq >= 0) {
		plan = CV_THREAD;
		cost = 1e6;
		rows = 1e5;
	} else {
		plan = CV_SCAN;
		cost = 1e8;
		rows = 1e7;
	}
	/*
	 * The arguments: the plan's equality, then bounds on id (any plan)
	 * and on entry_seq (CV_THREAD).  idxStr says, per argument, its
	 * column (I, T, Y, S) and operator (= > g < l).
	 */
	for (i = 0; i < ii->nConstraint && no + 2 < sizeof(ops); i++) {
		const struct sqlite3_index_constraint *c = &ii->aConstraint[i];
		char col, op;

		if (!c->usable)
			continue;
		if (c->op == SQLITE_INDEX_CONSTRAINT_ISNOTNULL &&
		    c->iColumn == CS_ID) {
			/*
			 * Ids are never NULL.  Taken (min(id) asks), so that
			 * the first row in id order ends the scan.
			 */
			ops[no++] = 'I';
			ops[no++] = 'n';
			ii->aConstraintUsage[i].argvIndex = ++argn;
			ii->aConstraintUsage[i].omit = 1;
			continue;
		}
		if (i == id_eq || (i == sym_eq && plan == CV_SYM) ||
		    (i == thread_eq && plan != CV_ID))
			op = '=';
		else if (c->iColumn != CS_ID && !(c->iColumn == CS_ENTRY_SEQ &&
		    plan == CV_THREAD))
			continue;
		else if (c->op == SQLITE_INDEX_CONSTRAINT_GT)
			op = '>';
		else if (c->op == SQLITE_INDEX_CONSTRAINT_GE)
			op = 'g';
		else if (c->op == SQLITE_INDEX_CONSTRAINT_LT)
			op = '<';
		else if (c->op == SQLITE_INDEX_CONSTRAINT_LE)
			op = 'l';
		else if (c->op == SQLITE_INDEX_CONSTRAINT_EQ &&
		    c->iColumn == CS_ENTRY_SEQ)
			op = '=';
		else
			continue;
		col = c->iColumn == CS_ID ? 'I' : c->iColumn == CS_THREAD ?
		    'T' : c->iColumn == CS_SYMBOL ? 'Y' : 'S';
		ops[no++] = col;
		ops[no++] = op;
		ii->aConstraintUsage[i].argvIndex = ++argn;
		/* SQLite checks again: values may be reals or text. */
		ii->aConstraintUsage[i].omit = 0;
		if (op != '=' || plan == CV_SCAN)
			cost /= 4, rows /= 4;
	}
	ops[no] = '\0';
	if ((ii->idxStr = sqlite3_mprintf("%s", ops)) == NULL)
		return (SQLITE_NOMEM);
	ii->needToFreeIdxStr = 1;
	/*
	 * An order on thread or entry_seq is id order only while no row
	 * is in calls_rows (cv_filter() checks it again).
	 */
	if (cv_order_ok(ii, thread_eq >= 0, id_eq >= 0, &desc, &keys) &&
	    (!keys || cv_rows_empty((struct cv_vtab *)vtab)))
		ii->orderByConsumed = 1;
	else
		desc = keys = 0;
	ii->idxNum = plan | (desc ? CV_DESC : 0) | (keys ? CV_KEYS : 0);
	ii->estimatedCost = cost;
	ii->estimatedRows = (sqlite3_int64)(rows < 1 ? 1 : rows);
	return (SQLITE_OK);
}

/* Decode the calls_bysym row at @st's columns 0-3 into c->spg. */
static int
cv_load_sym(struct cv_cursor *c, sqlite3_stmt *st)
{
	struct cv_page *pg = &c->spg;
	const char *why;

	if (pg->rows == NULL && (pg->rows = sqlite3_malloc64(HWTR_CS_PAGE *
	    sizeof(struct hwtr_cs_row))) == NULL)
		return (SQLITE_NOMEM);
	pg->id0 = sqlite3_column_int64(st, 0);
	pg->thread = sqlite3_column_int64(st, 1);
	pg->n = sqlite3_column_int64(st, 2);
	if (hwtr_cs_sym_decode(sqlite3_column_blob(st, 3),
	    (size_t)sqlite3_column_bytes(st, 3), c->symbol, pg->id0,
	    pg->thread, pg->n, pg->rows, &why) < 0) {
		char where[64];

		pg->n = 0;
		snprintf(where, sizeof(where), "%lld from id %lld",
		    (long long)c->symbol, (long long)pg->id0);
		sqlite3_free(c->vt->base.zErrMsg);
		c->vt->base.zErrMsg = sqlite3_mprintf("%s: corrupt page of "
		    "symbol %s in %s_bysym: %s", c->vt->name, where,
		    c->vt->name, why);
		return (SQLITE_CORRUPT_VTAB);
	}
	return (SQLITE_OK);
}


static int
cv_row_ok(const struct cv_cursor *c, const struct hwtr_cs_row *r)
{
	if (r->v[CS_ID] < c->id_lo || r->v[CS_ID] > c->id_hi)
		return (0);
	if (c->has_thread && r->v[CS_THREAD] != c->thread)
		return (0);
	if (c->plan == CV_THREAD && (r->v[CS_ENTRY_SEQ] < c->seq_lo ||
	    r->v[CS_ENTRY_SEQ] > c->seq_hi))
		return (0);
	if (c->has_symbol && ((r->nul >> CS_SYMBOL) & 1 ||
	    r->v[CS_SYMBOL] != c->symbol))
		return (0);
	return (1);
}

/*
 * Where a scan of page @pg (rows of one thread, ids and entry_seq
 * ascending) starts: the first row at or above the lower bounds, or
 * descending the last at or below the upper ones; a bisection, so that a
 * walk seeking in a thread does not test the rows before.
 */
static int
cv_start_below(const void *cursor, const void *rows, size_t i)
{
	const struct cv_cursor *c = cursor;
	const struct hwtr_cs_row *r = (const struct hwtr_cs_row *)rows + i;

	return (c->desc ? r->v[CS_ID] <= c->id_hi &&
	    r->v[CS_ENTRY_SEQ] <= c->seq_hi : r->v[CS_ID] < c->id_lo ||
	    r->v[CS_ENTRY_SEQ] < c->seq_lo);
}

static int64_t
cv_start(const struct cv_cursor *c, const struct cv_page *pg)
{
	int64_t lo;

	lo = (int64_t)hwtr_bsearch(c, pg->rows, (size_t)pg->n,
	    cv_start_below);
	return (c->desc ? lo - 1 : lo);
}

/* Next row of the pages (c->p_has, c->p_row). */
static int
cv_page_next(struct cv_cursor *c)
{
	int rc;

	c->p_has = 0;
	for (;;) {
		if (c->pg != NULL && c->pi >= 0 && c->pi < c->pg->n) {
			const struct hwtr_cs_row *r = &c->pg->rows[c->pi];

			c->pi += c->desc ? -1 : 1;
			if (!cv_row_ok(c, r))
				continue;
			c->p_row = r;
			c->p_has = 1;
			return (SQLITE_OK);
		}
		if (c->pages == NULL)
			return (SQLITE_OK);
		rc = sqlite3_step(c->pages);
		if (rc == SQLITE_DONE) {
			c->pg = NULL;
			return (SQLITE_OK);
		}
		if (rc != SQLITE_ROW)
			return (hwtr_cv_dberr(c));
		if (c->plan == CV_SYM) {
			/* A page of the copy: its thread and first id. */
			int64_t id0 = sqlite3_column_int64(c->pages, 0);

			if ((c->has_thread && sqlite3_column_int64(c->pages, 1) !=
			    c->thread) || (c->desc && id0 > c->id_hi))
				continue;
			if (!c->desc && id0 > c->id_hi) {
				c->pg = NULL;
				return (SQLITE_OK);
			}
			if ((rc = cv_load_sym(c, c->pages)) != SQLITE_OK)
				return (rc);
			c->pg = &c->spg;
			c->pi = c->desc ? c->pg->n - 1 : 0;
		} else {
			if ((rc = hwtr_cv_load(c, c->pages, &c->pg)) !=
			    SQLITE_OK)
				return (rc);
			hwtr_cv_pin(c, c->pg);
			c->pi = cv_start(c, c->pg);
		}
	}
}

/* Next row of calls_rows (c->r_has, c->r_row). */
static int
cv_rows_next(struct cv_cursor *c)
{
	struct hwtr_cs_row *r = &c->r_row;
	int rc, i;

	c->r_has = 0;
	while (c->rows != NULL) {
		rc = sqlite3_step(c->rows);
		if (rc == SQLITE_DONE)
			return (SQLITE_OK);
		if (rc != SQLITE_ROW)
			return (hwtr_cv_dberr(c));
		memset(r, 0, sizeof(*r));
		for (i = 0; i < CS_NCOLS; i++) {
			if (i == CS_ENTRY_KIND || i == CS_EXIT_KIND)
				continue;
			if (sqlite3_column_type(c->rows, i) == SQLITE_NULL)
				r->nul |= 1u << i;
			else
				r->v[i] = sqlite3_column_int64(c->rows, i);
		}
		sqlite3_free(c->r_ek);
		sqlite3_free(c->r_xk);
		c->r_ek = sqlite3_mprintf("%s",
		    sqlite3_column_text(c->rows, CS_ENTRY_KIND));
		c->r_xk = sqlite3_mprintf("%s",
		    sqlite3_column_text(c->rows, CS_EXIT_KIND));
		if (c->r_ek == NULL || c->r_xk == NULL)
			return (SQLITE_NOMEM);
		if (!cv_row_ok(c, r))
			continue;
		c->r_has = 1;
		return (SQLITE_OK);
	}
	return (SQLITE_OK);
}

/* Pick the current row: the next in id order of the two sources. */
static void
cv_pick(struct cv_cursor *c)
{
	if (!c->p_has && !c->r_has) {
		c->eof = 1;
		return;
	}
	if (!c->r_has)
		c->cur = 1;
	else if (!c->p_has)
		c->cur = 2;
	else if (c->desc)
		c->cur = c->p_row->v[CS_ID] > c->r_row.v[CS_ID] ? 1 : 2;
	else
		c->cur = c->p_row->v[CS_ID] < c->r_row.v[CS_ID] ? 1 : 2;
}

/*
 * An argument as an integer bound: 0 usable (*vp), 1 no row can match
 * (NULL), 2 not usable (text or blob: SQLite compares it itself).  Reals
 * round outwards (SQLite checks the exact comparison again).
 */
static int
cv_arg(sqlite3_value *v, char op, int64_t *vp)
{
	double d;

	switch (sqlite3_value_numeric_type(v)) {
	case SQLITE_INTEGER:
		*vp = sqlite3_value_int64(v);
		break;
	case SQLITE_FLOAT:
		d = sqlite3_value_double(v);
		if (isnan(d))
			return (1);
		if (d >= 9.2e18 || d <= -9.2e18)
			return (2);
		*vp = (int64_t)(op == '<' || op == 'l' ? ceil(d) : floor(d));
		if (op == '=' && (double)*vp != d)
			return (1);
		return (0);
	case SQLITE_NULL:
		return (1);
	default:
		return (2);
	}
	/* Strict bounds become inclusive ones. */
	if (op == '>') {
		if (*vp == INT64_MAX)
			return (1);
		(*vp)++;
	} else if (op == '<') {
		if (*vp == INT64_MIN)
			return (1);
		(*vp)--;
	}
	return (0);
}

static void
cv_lo(int64_t *lo, int64_t v)
{
	if (v > *lo)
		*lo = v;
}

static void
cv_hi(int64_t *hi, int64_t v)
{
	if (v < *hi)
		*hi = v;
}

/* The calls_rows statement of the plan (bound ?1 to ?6). */
static const char *const cv_rows_sql[4][2] = {
	{ "SELECT * FROM \"%2$s\".\"%1$s_rows\" WHERE id BETWEEN ?1 AND ?2 ORDER BY id",
	  "SELECT * FROM \"%2$s\".\"%1$s_rows\" WHERE id BETWEEN ?1 AND ?2 ORDER BY "
	  "id DESC" },
	{ "SELECT * FROM \"%2$s\".\"%1$s_rows\" WHERE id = ?1 AND ?2 = ?2",
	  "SELECT * FROM \"%2$s\".\"%1$s_rows\" WHERE id = ?1 AND ?2 = ?2" },
	{ "SELECT * FROM \"%2$s\".\"%1$s_rows\" WHERE symbol = ?3 AND id BETWEEN ?1 "
	  "AND ?2 ORDER BY symbol, id",
	  "SELECT * FROM \"%2$s\".\"%1$s_rows\" WHERE symbol = ?3 AND id BETWEEN ?1 "
	  "AND ?2 ORDER BY symbol DESC, id DESC" },
	{ "SELECT * FROM \"%2$s\".\"%1$s_rows\" WHERE thread = ?4 AND entry_seq BETWEEN "
	  "?5 AND ?6 AND id BETWEEN ?1 AND ?2 ORDER BY thread, entry_seq, id",
	  "SELECT * FROM \"%2$s\".\"%1$s_rows\" WHERE thread = ?4 AND entry_seq BETWEEN "
	  "?5 AND ?6 AND id BETWEEN ?1 AND ?2 ORDER BY thread DESC, "
	  "entry_seq DESC, id DESC" },
};

/*
 * The first and the last page of thread c->thread that may hold calls
 * entered in [seq_lo, seq_hi], as an id0 range (*lop > *hip: none).
 */
static int
cv_thread_pages(struct cv_cursor *c, int64_t *lop, int64_t *hip)
{
	int rc;

	*lop = 1;
	*hip = 0;
	if ((rc = hwtr_cv_prep(c, &c->s_tlo, "SELECT id0 FROM \"%2$s\".\"%1$s_pages\" "
	    "WHERE thread = ?1 AND seq1 >= ?2 ORDER BY thread, seq1, id0 "
	    "LIMIT 1")) != SQLITE_OK ||
	    (rc = hwtr_cv_prep(c, &c->s_thi, "SELECT id0 FROM \"%2$s\".\"%1$s_pages\" "
	    "WHERE thread = ?1 AND seq0 <= ?2 ORDER BY thread DESC, seq0 DESC, "
	    "id0 DESC LIMIT 1")) != SQLITE_OK)
		return (rc);
	sqlite3_bind_int64(c->s_tlo, 1, c->thread);
	sqlite3_bind_int64(c->s_tlo, 2, c->seq_lo);
	sqlite3_bind_int64(c->s_thi, 1, c->thread);
	sqlite3_bind_int64(c->s_thi, 2, c->seq_hi);
	rc = sqlite3_step(c->s_tlo);
	if (rc == SQLITE_ROW) {
		*lop = sqlite3_column_int64(c->s_tlo, 0);
		rc = sqlite3_step(c->s_thi);
		if (rc == SQLITE_ROW)
			*hip = sqlite3_column_int64(c->s_thi, 0);
		else
			*lop = 1;
	}
	sqlite3_reset(c->s_tlo);
	sqlite3_reset(c->s_thi);
	return (rc == SQLITE_ROW || rc == SQLITE_DONE ? SQLITE_OK :
	    hwtr_cv_dberr(c));
}

/* A new filter on cursor @c: nothing read; stale pages forgotten. */
static void
cv_reset(struct cv_cursor *c, int idxnum)
{
	struct cv_vtab *vt = c->vt;
	unsigned int dver;

	c->eof = 0;
	c->p_has = c->r_has = 0;
	c->pages = NULL;
	c->rows = NULL;
	c->pg = NULL;
	c->plan = idxnum & 7;
	c->desc = (idxnum & CV_DESC) != 0;
	c->id_lo = c->seq_lo = INT64_MIN;
	c->id_hi = c->seq_hi = INT64_MAX;
	c->has_thread = c->has_symbol = 0;
	hwtr_cv_pin(c, NULL);
	dver = hwtr_cv_fresh(vt);
	if (c->gen != vt->gen || c->dver != dver) {
		c->own[0].id0 = c->own[1].id0 = -1;
		c->gen = vt->gen;
		c->dver = dver;
		c->cl_id = INT64_MIN;
	}
}

/*
 * The constraints (xBestIndex's @idxstr, @argv) into the cursor's ranges
 * and its plan; 1 when nothing can match.
 */
static int
cv_constrain(struct cv_cursor *c, const char *idxstr, int argc,
    sqlite3_value **argv)
{
	int64_t v;
	int i, drop = 0;

	for (i = 0; i < argc && idxstr != NULL && idxstr[2 * i] != '\0'; i++) {
		char col = idxstr[2 * i], op = idxstr[2 * i + 1];

		if (op == 'n')
			continue;
		switch (cv_arg(argv[i], op, &v)) {
		case 1:
			return (1);
		case 2:
			/* Not usable: that plan reads more; SQLite filters. */
			if (col == 'I' && op == '=')
				drop = CV_ID;
			else if (col == 'Y')
				drop = CV_SYM;
			else if (col == 'T')
				drop = CV_THREAD;
			continue;
		default:
			break;
		}
		if (col == 'I') {
			if (op == '=' || op == '>' || op == 'g')
				cv_lo(&c->id_lo, v);
			if (op == '=' || op == '<' || op == 'l')
				cv_hi(&c->id_hi, v);
		} else if (col == 'S') {
			if (op == '=' || op == '>' || op == 'g')
				cv_lo(&c->seq_lo, v);
			if (op == '=' || op == '<' || op == 'l')
				cv_hi(&c->seq_hi, v);
		} else if (col == 'T') {
			c->has_thread = 1;
			c->thread = v;
		} else if (col == 'Y') {
			c->has_symbol = 1;
			c->symbol = v;
		}
	}
	if (drop == c->plan && c->plan != CV_SCAN)
		c->plan = c->has_thread ? CV_THREAD : CV_SCAN;
	if (c->plan == CV_SYM && !c->has_symbol)
		c->plan = c->has_thread ? CV_THREAD : CV_SCAN;
	if (c->plan == CV_THREAD && !c->has_thread)
		c->plan = CV_SCAN;
	if (c->plan != CV_THREAD) {
		c->seq_lo = INT64_MIN;
		c->seq_hi = INT64_MAX;
	}
	return (c->id_lo > c->id_hi || c->seq_lo > c->seq_hi);
}

/*
 * The statements over the pages, by id0 range (?1, ?2) and of a symbol's
 * copy (?1), ascending and descending.
 */
static const char *const cv_pages_sql[2][2] = {
	{ "SELECT id0, thread, n, seq0, data FROM \"%2$s\".\"%1$s_pages\" WHERE id0 "
	  "BETWEEN ?1 AND ?2 ORDER BY id0",
	  "SELECT id0, thread, n, seq0, data FROM \"%2$s\".\"%1$s_pages\" WHERE id0 "
	  "BETWEEN ?1 AND ?2 ORDER BY id0 DESC" },
	{ "SELECT id0, thread, n, data FROM \"%2$s\".\"%1$s_bysym\" WHERE symbol = ?1 "
	  "ORDER BY symbol, id0",
	  "SELECT id0, thread, n, data FROM \"%2$s\".\"%1$s_bysym\" WHERE symbol = ?1 "
	  "ORDER BY symbol DESC, id0 DESC" },
};

/*
 * Pages statement @sql (held in *@stp) bound to @a (and @b when it has a
 * ?2), on its first page.
 */
static int
cv_pages_of(struct cv_cursor *c, sqlite3_stmt **stp, const char *sql,
    int64_t a, int64_t b)
{
	int rc;

	if ((rc = hwtr_cv_prep(c, stp, sql)) != SQLITE_OK)
		return (rc);
	c->pages = *stp;
	sqlite3_bind_int64(c->pages, 1, a);
	if (sqlite3_bind_parameter_count(c->pages) >= 2)
		sqlite3_bind_int64(c->pages, 2, b);
	return (cv_page_next(c));
}

/* The pages statement of the cursor's plan, on its first page. */
static int
cv_open_pages(struct cv_cursor *c)
{
	int64_t plo, phi;
	int rc;

	switch (c->plan) {
	case CV_ID:
	case CV_SCAN:
		if (c->plan == CV_ID || c->id_lo == c->id_hi) {
			struct cv_page *pg;
			int64_t k;

			c->plan = CV_ID;
			if ((rc = hwtr_cv_find(c, c->id_lo, &pg)) != SQLITE_OK)
				return (rc);
			if (pg != NULL &&
			    (k = hwtr_cv_index(pg, c->id_lo)) >= 0 &&
			    cv_row_ok(c, &pg->rows[k])) {
				hwtr_cv_pin(c, pg);
				c->p_row = &pg->rows[k];
				c->p_has = 1;
			}
			break;
		}
		plo = c->id_lo;
		phi = c->id_hi;
		if (plo > INT64_MIN) {
			struct cv_page *pg;

			/* From the page holding id_lo, if any. */
			if ((rc = hwtr_cv_find(c, plo, &pg)) != SQLITE_OK)
				return (rc);
			if (pg != NULL)
				plo = pg->id0;
		}
		goto range;
	case CV_THREAD:
		if ((rc = cv_thread_pages(c, &plo, &phi)) != SQLITE_OK)
			return (rc);
		cv_hi(&phi, c->id_hi);
range:
		return (cv_pages_of(c, &c->s_range[c->desc],
		    cv_pages_sql[0][c->desc], plo, phi));
	case CV_SYM:
		return (cv_pages_of(c, &c->s_sym[c->desc],
		    cv_pages_sql[1][c->desc], c->symbol, 0));
	default:
		break;
	}
	return (SQLITE_OK);
}

static int
cv_filter(sqlite3_vtab_cursor *cur, int idxnum, const char *idxstr,
    int argc, sqlite3_value **argv)
{
	struct cv_cursor *c = (struct cv_cursor *)cur;
	int rc;

	/* Deletes not written yet are written before the scan reads. */
	if ((rc = hwtr_cv_wflush(c->vt)) != SQLITE_OK) {
		c->eof = 1;
		return (rc);
	}
	cv_reset(c, idxnum);
	/*
	 * The statement takes rows in id order for (thread, entry_seq)
	 * order, planned when calls_rows was empty: rows inserted since
	 * would come out of order.  Known until the cache goes (any write
	 * moves cv_reset()'s data version).
	 */
	if ((idxnum & CV_KEYS) && c->vt->rows_empty < 0)
		c->vt->rows_empty = cv_rows_empty(c->vt);
	if ((idxnum & CV_KEYS) && !c->vt->rows_empty) {
		c->eof = 1;
		return (hwtr_cv_err(c, "%s: %s", "rows were inserted since "
		    "this statement was prepared in an order only an empty "
		    "calls_rows keeps; prepare it again"));
	}
	if (cv_constrain(c, idxstr, argc, argv)) {
		c->eof = 1;
		return (SQLITE_OK);
	}
	if ((rc = cv_open_pages(c)) != SQLITE_OK)
		return (rc);
	/* The rows SQL inserted. */
	if ((rc = hwtr_cv_prep(c, &c->s_rows[c->plan][c->desc],
	    cv_rows_sql[c->plan][c->desc])) != SQLITE_OK)
		return (rc);
	c->rows = c->s_rows[c->plan][c->desc];
	sqlite3_bind_int64(c->rows, 1, c->id_lo);
	sqlite3_bind_int64(c->rows, 2, c->id_hi);
	if (c->plan == CV_SYM)
		sqlite3_bind_int64(c->rows, 3, c->symbol);
	if (c->plan == CV_THREAD) {
		sqlite3_bind_int64(c->rows, 4, c->thread);
		sqlite3_bind_int64(c->rows, 5, c->seq_lo);
		sqlite3_bind_int64(c->rows, 6, c->seq_hi);
	}
	if ((rc = cv_rows_next(c)) != SQLITE_OK)
		return (rc);
	cv_pick(c);
	return (SQLITE_OK);
}

static int
cv_next(sqlite3_vtab_cursor *cur)
{
	struct cv_cursor *c = (struct cv_cursor *)cur;
	int rc;

	if (c->cur == 1) {
		if (c->plan == CV_ID)
			c->p_has = 0;
		else if ((rc = cv_page_next(c)) != SQLITE_OK)
			return (rc);
	} else if ((rc = cv_rows_next(c)) != SQLITE_OK)
		return (rc);
	cv_pick(c);
	return (SQLITE_OK);
}

static int
cv_eof(sqlite3_vtab_cursor *cur)
{
	return (((struct cv_cursor *)cur)->eof);
}

/*
 * The parent of @r, for the caller columns of a row that does not hold
 * them (of a page, or of calls_rows): from calls_rows, else from its page
 * (read by a cursor of its own); *@pp NULL when it has none or it is not
 * there.
 */
static int
cv_caller(struct cv_cursor *c, const struct hwtr_cs_row *r,
    const struct hwtr_cs_row **pp)
{
	struct cv_page *pg;
	int64_t pid = r->v[CS_PARENT], k;
	int rc;

	*pp = NULL;
	if (r->nul & (1u << CS_PARENT))
		return (SQLITE_OK);
	if (c->cl_id == pid) {
		*pp = c->cl_has ? &c->cl_row : NULL;
		return (SQLITE_OK);
	}
	c->cl_id = pid;
	c->cl_has = 0;
	memset(&c->cl_row, 0, sizeof(c->cl_row));
	if ((rc = hwtr_cv_prep(c, &c->s_rcaller, "SELECT symbol, func_ip FROM "
	    "\"%2$s\".\"%1$s_rows\" WHERE id = ?1")) != SQLITE_OK)
		return (rc);
	sqlite3_bind_int64(c->s_rcaller, 1, pid);
	rc = sqlite3_step(c->s_rcaller);
	if (rc == SQLITE_ROW) {
		if (sqlite3_column_type(c->s_rcaller, 0) == SQLITE_NULL)
			c->cl_row.nul |= 1u << CS_SYMBOL;
		c->cl_row.v[CS_SYMBOL] = sqlite3_column_int64(c->s_rcaller, 0);
		c->cl_row.v[CS_FUNC_IP] = sqlite3_column_int64(c->s_rcaller,
		    1);
		c->cl_has = 1;
	}
	sqlite3_reset(c->s_rcaller);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		c->cl_id = INT64_MIN;
		return (hwtr_cv_dberr(c));
	}
	if (!c->cl_has) {
		/* (Not into the page being read: that one is pinned.) */
		if ((rc = hwtr_cv_find(c, pid, &pg)) != SQLITE_OK) {
			c->cl_id = INT64_MIN;
			return (rc);
		}
		if (pg != NULL && (k = hwtr_cv_index(pg, pid)) >= 0) {
			c->cl_row = pg->rows[k];
			c->cl_has = 1;
		}
	}
	*pp = c->cl_has ? &c->cl_row : NULL;
	return (SQLITE_OK);
}

/*
 * Are the caller columns of the symbol copy still right?  They are what
 * the parent was when the index wrote them: right while the table is as
 * the index wrote it, its ids 1 to the last all in the pages and none in
 * calls_rows.  A write through the table that changed or removed a
 * parent (a row of a page updated goes to calls_rows; one deleted leaves
 * a gap) makes them stale, and the parent is looked up instead.  Kept
 * until the cache goes (cv_reset()).
 */
static int
cv_pristine(struct cv_cursor *c)
{
	struct cv_vtab *vt = c->vt;
	int rc;

	if (vt->pristine >= 0)
		return (vt->pristine);
	if (hwtr_cv_prep(c, &c->s_pristine, "SELECT NOT EXISTS (SELECT 1 FROM "
	    "\"%2$s\".\"%1$s_rows\") AND (SELECT coalesce(sum(n), 0) FROM "
	    "\"%2$s\".\"%1$s_pages\") = (SELECT coalesce(max(id0 + n - 1), 0) FROM "
	    "\"%2$s\".\"%1$s_pages\")") != SQLITE_OK)
		return (0);
	rc = sqlite3_step(c->s_pristine);
	vt->pristine = rc == SQLITE_ROW && sqlite3_column_int(c->s_pristine,
	    0) == 1;
	sqlite3_reset(c->s_pristine);
	return (vt->pristine);
}

static int
cv_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col)
{
	struct cv_cursor *c = (struct cv_cursor *)cur;
	const struct hwtr_cs_row *r = c->cur == 1 ? c->p_row : &c->r_row;

	if (col < 0 || col >= CS_XNCOLS)
		return (SQLITE_OK);
	if (col == CS_CALLER_SYMBOL || col == CS_CALLER_IP) {
		const struct hwtr_cs_row *p;
		int rc;

		/* The symbol copy holds them; others look their parent up. */
		if (c->cur == 1 && c->plan == CV_SYM && cv_pristine(c)) {
			if ((r->nul >> col) & 1)
				sqlite3_result_null(ctx);
			else
				sqlite3_result_int64(ctx, r->v[col]);
			return (SQLITE_OK);
		}
		if ((rc = cv_caller(c, r, &p)) != SQLITE_OK)
			return (rc);
		if (p == NULL || (col == CS_CALLER_SYMBOL &&
		    (p->nul & (1u << CS_SYMBOL))))
			sqlite3_result_null(ctx);
		else
			sqlite3_result_int64(ctx, p->v[col == CS_CALLER_SYMBOL ?
			    CS_SYMBOL : CS_FUNC_IP]);
		return (SQLITE_OK);
	}
	if (col == CS_ENTRY_KIND || col == CS_EXIT_KIND) {
		const char *s;

		if (c->cur == 2)
			s = col == CS_ENTRY_KIND ? c->r_ek : c->r_xk;
		else
			s = (col == CS_ENTRY_KIND ? hwtr_cs_entry_kinds :
			    hwtr_cs_exit_kinds)[r->v[col]];
		sqlite3_result_text(ctx, s, -1, SQLITE_TRANSIENT);
	} else if ((r->nul >> col) & 1)
		sqlite3_result_null(ctx);
	else
		sqlite3_result_int64(ctx, r->v[col]);
	return (SQLITE_OK);
}

static int
cv_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid)
{
	struct cv_cursor *c = (struct cv_cursor *)cur;

	*rowid = c->cur == 1 ? c->p_row->v[CS_ID] : c->r_row.v[CS_ID];
	return (SQLITE_OK);
}

static sqlite3_module cv_module = {
	.iVersion = 2,
	.xCreate = cv_create,
	.xConnect = cv_connect,
	.xBestIndex = cv_best_index,
	.xDisconnect = cv_disconnect,
	.xDestroy = cv_destroy,
	.xOpen = hwtr_cv_open,
	.xClose = hwtr_cv_close,
	.xFilter = cv_filter,
	.xNext = cv_next,
	.xEof = cv_eof,
	.xColumn = cv_column,
	.xRowid = cv_rowid,
	.xUpdate = hwtr_cv_update,
	.xBegin = hwtr_cv_begin,
	.xSync = hwtr_cv_sync,
	.xRollback = hwtr_cv_rollback,
	.xSavepoint = hwtr_cv_savepoint,
	.xRelease = hwtr_cv_release,
	.xRollbackTo = hwtr_cv_rollback_to,
};

int
hwtr_calls_vtab_register(sqlite3 *db)
{
	return (sqlite3_create_module(db, "hwtr_calls", &cv_module, NULL));
}

