/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The writes through the calls table (xUpdate) and its transaction
 * hooks, for calls_vtab.c's module.  Rows SQL inserts go to calls_rows,
 * holding what a STRICT table of its types would take; a row of a page
 * that is updated or deleted leaves its page, which is written again
 * without it, and the symbol copy's page with it: once for all the rows
 * deleted from it in turn (struct cv_wpage), before anything reads.  An
 * UPDATE checks whatever would make its insert fail before it deletes
 * the old row.
 * A rollback of what was written through the table makes the cache of
 * decoded pages stale: the next filter drops it (cv_reset()).
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "calls_vtab_int.h"
#include "colstore.h"
#include "hwtr_common.h"

/* Prepare @sql (table name substituted) on @vt's database into *@stp. */
static int
cv_prep_vt(struct cv_vtab *vt, sqlite3_stmt **stp, const char *sql)
{
	char *s;
	int rc;

	if ((s = hwtr_cv_subst(sql, vt->schema, vt->name)) == NULL)
		return (SQLITE_NOMEM);
	rc = sqlite3_prepare_v2(vt->db, s, -1, stp, NULL);
	sqlite3_free(s);
	return (rc);
}

/* Run @st to its end: SQLITE_OK, or its error. */
static int
cv_step_done(sqlite3_stmt *st)
{
	int rc;

	rc = sqlite3_step(st);
	return (rc == SQLITE_DONE ? SQLITE_OK : rc);
}

/* Run @sql (table name substituted) with ?1 = @id; 1 when it gave a row. */
static int
cv_exec_id(struct cv_vtab *vt, const char *sql, int64_t id, int *rowp)
{
	sqlite3_stmt *st;
	int rc;

	if ((rc = cv_prep_vt(vt, &st, sql)) != SQLITE_OK)
		return (rc);
	sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	if (rowp != NULL)
		*rowp = rc == SQLITE_ROW;
	sqlite3_finalize(st);
	return (rc == SQLITE_ROW || rc == SQLITE_DONE ? SQLITE_OK : rc);
}

/*
 * A row deleted from a pending page is marked (a bit of its NULL mask
 * no column has), not moved: rows stay in id order for the bisection,
 * and the page is packed once, when written.
 */
#define CV_GONE		(1u << 31)

/* Pack @w's rows left after its deletes. */
static void
cv_wpack(struct cv_wpage *w)
{
	int64_t i, j;

	for (i = j = 0; i < w->n; i++)
		if (!(w->rows[i].nul & CV_GONE))
			w->rows[j++] = w->rows[i];
	w->n = j;
}

static int
cv_wid_below(const void *id, const void *rows, size_t i)
{
	const struct hwtr_cs_row *r = rows;

	return (r[i].v[CS_ID] < *(const int64_t *)id);
}

/* Index of id @id among @w's rows not deleted, or -1. */
static int64_t
cv_windex(const struct cv_wpage *w, int64_t id)
{
	int64_t k;

	k = (int64_t)hwtr_bsearch(&id, w->rows, (size_t)w->n, cv_wid_below);
	return (k < w->n && w->rows[k].v[CS_ID] == id &&
	    !(w->rows[k].nul & CV_GONE) ? k : -1);
}

/* A page's rows: the page's own array, allocated once. */
static int
cv_wrows(struct cv_wpage *w)
{
	if (w->rows == NULL && (w->rows = sqlite3_malloc64(HWTR_CS_PAGE *
	    sizeof(*w->rows))) == NULL)
		return (SQLITE_NOMEM);
	return (SQLITE_OK);
}

/*
 * Write pending page @w when a delete changed it: of the symbol copy if
 * @sym (@w's key its rowid), else of calls_pages (its key its id0).
 */
static int
cv_wflush_one(struct cv_vtab *vt, struct cv_wpage *w, int sym)
{
	sqlite3_stmt *st = NULL;
	uint8_t *blob = NULL;
	size_t len;
	int rc;

	if (w->key < 0 || !w->dirty)
		return (SQLITE_OK);
	cv_wpack(w);
	if (w->n == 0)
		rc = cv_prep_vt(vt, &st, sym ? "DELETE FROM "
		    "\"%2$s\".\"%1$s_bysym\" WHERE rowid = ?1" : "DELETE FROM "
		    "\"%2$s\".\"%1$s_pages\" WHERE id0 = ?1");
	else if ((sym ? hwtr_cs_sym_encode(w->rows, (size_t)w->n, &blob,
	    &len) : hwtr_cs_encode(w->rows, (size_t)w->n, w->id0,
	    w->rows[0].v[CS_ENTRY_SEQ], &blob, &len)) < 0)
		rc = SQLITE_NOMEM;
	else
		rc = cv_prep_vt(vt, &st, sym ? "UPDATE \"%2$s\".\"%1$s_bysym\" "
		    "SET id0 = ?2, n = ?3, data = ?4 WHERE rowid = ?1" :
		    "UPDATE \"%2$s\".\"%1$s_pages\" SET n = ?3, data = ?4, "
		    "seq0 = ?5, seq1 = ?6 WHERE id0 = ?1");
	if (rc == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, w->key);
		if (w->n > 0 && sym)
			sqlite3_bind_int64(st, 2, w->rows[0].v[CS_ID]);
		if (w->n > 0) {
			sqlite3_bind_int64(st, 3, w->n);
			sqlite3_bind_blob(st, 4, blob, (int)len, SQLITE_STATIC);
		}
		if (w->n > 0 && !sym) {
			sqlite3_bind_int64(st, 5, w->rows[0].v[CS_ENTRY_SEQ]);
			sqlite3_bind_int64(st, 6,
			    w->rows[w->n - 1].v[CS_ENTRY_SEQ]);
		}
		rc = cv_step_done(st);
	}
	sqlite3_finalize(st);
	free(blob);
	if (rc == SQLITE_OK)
		w->dirty = 0;
	return (rc);
}

/* Forget the pending pages (written, or undone by a rollback). */
static void
cv_wdrop(struct cv_vtab *vt)
{
	int i;

	vt->wp.key = -1;
	vt->wp.dirty = 0;
	for (i = 0; i < CV_NWSYM; i++) {
		vt->ws[i].key = -1;
		vt->ws[i].dirty = 0;
	}
}

void
hwtr_cv_winit(struct cv_vtab *vt)
{
	cv_wdrop(vt);
}

/*
 * Write every pending page, then forget them: the storage changed, and
 * so does what the table's cache of decoded pages may hold (gen).
 */
int
hwtr_cv_wflush(struct cv_vtab *vt)
{
	int i, rc, any = vt->wp.dirty;

	for (i = 0; i < CV_NWSYM; i++)
		any |= vt->ws[i].dirty;
	if (!any) {
		cv_wdrop(vt);
		return (SQLITE_OK);
	}
	vt->gen++;
	if ((rc = cv_wflush_one(vt, &vt->wp, 0)) != SQLITE_OK)
		return (rc);
	for (i = 0; i < CV_NWSYM; i++)
		if ((rc = cv_wflush_one(vt, &vt->ws[i], 1)) != SQLITE_OK)
			return (rc);
	cv_wdrop(vt);
	return (SQLITE_OK);
}

void
hwtr_cv_wfree(struct cv_vtab *vt)
{
	int i;

	cv_wdrop(vt);
	sqlite3_free(vt->wp.rows);
	vt->wp.rows = NULL;
	for (i = 0; i < CV_NWSYM; i++) {
		sqlite3_free(vt->ws[i].rows);
		vt->ws[i].rows = NULL;
	}
	sqlite3_finalize(vt->s_wrows);
	sqlite3_finalize(vt->s_wsym);
	sqlite3_finalize(vt->s_wins);
	vt->s_wrows = vt->s_wsym = vt->s_wins = NULL;
	sqlite3_finalize(vt->s_nrows);
	sqlite3_finalize(vt->s_npage);
	vt->s_nrows = vt->s_npage = NULL;
	sqlite3_free(vt->lp_data);
	vt->lp_data = NULL;
}

/*
 * Delete call @r (of a page) from the symbol copy: from its page there,
 * kept until written (CV_NWSYM of them, the least recently used written
 * to make room).  The page is found by its stored id0, which a pending
 * delete of its first rows leaves as it was: the ids between are gone.
 */
static int
cv_wdelete_sym(struct cv_vtab *vt, const struct hwtr_cs_row *r)
{
	sqlite3_stmt *st;
	struct cv_wpage *w = NULL;
	const char *why;
	int64_t rowid, k;
	int i, rc;

	if (r->nul & (1u << CS_SYMBOL))
		return (SQLITE_OK);
	if (vt->s_wsym == NULL && (rc = cv_prep_vt(vt, &vt->s_wsym,
	    "SELECT rowid, id0, thread, n, data FROM \"%2$s\".\"%1$s_bysym\" "
	    "WHERE symbol = ?1 AND id0 <= ?2 ORDER BY symbol DESC, id0 DESC "
	    "LIMIT 1")) != SQLITE_OK)
		return (rc);
	st = vt->s_wsym;
	sqlite3_bind_int64(st, 1, r->v[CS_SYMBOL]);
	sqlite3_bind_int64(st, 2, r->v[CS_ID]);
	if ((rc = sqlite3_step(st)) != SQLITE_ROW) {
		rc = rc == SQLITE_DONE ? SQLITE_OK : rc;
		goto out;
	}
	rowid = sqlite3_column_int64(st, 0);
	for (i = 0; i < CV_NWSYM; i++)
		if (vt->ws[i].key == rowid) {
			w = &vt->ws[i];
			break;
		}
	if (w == NULL) {
		for (i = 0; i < CV_NWSYM; i++)
			if (w == NULL || vt->ws[i].key < 0 ||
			    (w->key >= 0 && vt->ws[i].used < w->used))
				w = &vt->ws[i];
		if ((rc = cv_wflush_one(vt, w, 1)) != SQLITE_OK ||
		    (rc = cv_wrows(w)) != SQLITE_OK)
			goto out;
		w->key = -1;
		w->symbol = r->v[CS_SYMBOL];
		w->id0 = sqlite3_column_int64(st, 1);
		w->thread = sqlite3_column_int64(st, 2);
		w->n = sqlite3_column_int64(st, 3);
		if (w->n < 0 || w->n > HWTR_CS_PAGE || hwtr_cs_sym_decode(
		    sqlite3_column_blob(st, 4), (size_t)sqlite3_column_bytes(st,
		    4), w->symbol, w->id0, w->thread, w->n, w->rows, &why) < 0) {
			rc = SQLITE_CORRUPT_VTAB;
			goto out;
		}
		w->key = rowid;
	}
	w->used = ++vt->wtick;
	rc = SQLITE_OK;
	if ((k = cv_windex(w, r->v[CS_ID])) < 0)
		goto out;
	w->rows[k].nul |= CV_GONE;
	w->dirty = 1;
out:
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return (rc);
}

/*
 * The pending page of calls_pages for id @id: the one held when it holds
 * @id's range, else the page holding @id, read (the held one written
 * first); *@have 0 when no page holds it.
 */
static int
cv_wpage_of(struct cv_vtab *vt, int64_t id, int *have)
{
	struct cv_wpage *w = &vt->wp;
	struct cv_cursor *c;
	struct cv_page *pg;
	int rc, wrote;

	*have = 0;
	if (w->key >= 0 && w->id0 <= id && id <= w->hi) {
		*have = 1;
		return (SQLITE_OK);
	}
	wrote = w->key >= 0 && w->dirty;
	if ((rc = cv_wflush_one(vt, &vt->wp, 0)) != SQLITE_OK)
		return (rc);
	w->key = -1;
	/* The table's decoded pages may hold the one just written. */
	if (wrote) {
		vt->gen++;
		(void)hwtr_cv_fresh(vt);
	}
	if ((rc = hwtr_cv_open(&vt->base, (sqlite3_vtab_cursor **)&c)) !=
	    SQLITE_OK)
		return (rc);
	if ((rc = hwtr_cv_find(c, id, &pg)) == SQLITE_OK && pg != NULL &&
	    pg->n > 0 && (rc = cv_wrows(w)) == SQLITE_OK) {
		memcpy(w->rows, pg->rows, (size_t)pg->n * sizeof(*pg->rows));
		w->n = pg->n;
		w->id0 = pg->id0;
		w->thread = pg->thread;
		w->hi = pg->rows[pg->n - 1].v[CS_ID];
		w->key = pg->id0;
		w->dirty = 0;
		*have = 1;
	}
	hwtr_cv_close(&c->base);
	return (rc);
}

/*
 * Delete id @id: from calls_rows, or from its page and the symbol copy,
 * in the pending pages (written when something reads, or at commit).
 */
static int
cv_delete(struct cv_vtab *vt, int64_t id)
{
	struct cv_wpage *w = &vt->wp;
	int64_t k;
	int rc, had, have;

	if (vt->s_wrows == NULL && (rc = cv_prep_vt(vt, &vt->s_wrows,
	    "DELETE FROM \"%2$s\".\"%1$s_rows\" WHERE id = ?1 RETURNING id")) !=
	    SQLITE_OK)
		return (rc);
	sqlite3_bind_int64(vt->s_wrows, 1, id);
	rc = sqlite3_step(vt->s_wrows);
	had = rc == SQLITE_ROW;
	while (rc == SQLITE_ROW)
		rc = sqlite3_step(vt->s_wrows);
	sqlite3_reset(vt->s_wrows);
	if (rc != SQLITE_DONE)
		return (rc);
	if (had)
		return (SQLITE_OK);
	if ((rc = cv_wpage_of(vt, id, &have)) != SQLITE_OK || !have)
		return (rc);
	if ((k = cv_windex(w, id)) < 0)
		return (SQLITE_OK);
	if ((rc = cv_wdelete_sym(vt, &w->rows[k])) != SQLITE_OK)
		return (rc);
	w->rows[k].nul |= CV_GONE;
	w->dirty = 1;
	return (SQLITE_OK);
}

/*
 * Does id @id exist (in calls_rows or a page)?  The pending page answers
 * for its own ids (its deletes not written yet); any other page is as
 * stored.
 */
static int
cv_exists(struct cv_vtab *vt, int64_t id, int *yes)
{
	const struct cv_wpage *w = &vt->wp;
	struct cv_cursor *c;
	struct cv_page *pg;
	int rc;

	if ((rc = cv_exec_id(vt, "SELECT 1 FROM \"%2$s\".\"%1$s_rows\" WHERE id = ?1",
	    id, yes)) != SQLITE_OK || *yes)
		return (rc);
	if (w->key >= 0 && w->id0 <= id && id <= w->hi) {
		*yes = cv_windex(w, id) >= 0;
		return (SQLITE_OK);
	}
	if ((rc = hwtr_cv_open(&vt->base, (sqlite3_vtab_cursor **)&c)) !=
	    SQLITE_OK)
		return (rc);
	if ((rc = hwtr_cv_find(c, id, &pg)) == SQLITE_OK)
		*yes = pg != NULL && hwtr_cv_index(pg, id) >= 0;
	hwtr_cv_close(&c->base);
	return (rc);
}

/*
 * The id of the last row of the last page (the calls_pages row @st is
 * on) into *@lastp, INT64_MIN if it has none: from the page as it was
 * last read when its row is the same, blob byte for byte, else from the
 * page decoded.
 */
static int
cv_last_page_id(struct cv_vtab *vt, sqlite3_stmt *st, int64_t *lastp)
{
	struct cv_cursor *c;
	struct cv_page *pg;
	const void *data = sqlite3_column_blob(st, 4);
	int64_t id0 = sqlite3_column_int64(st, 0);
	int len = sqlite3_column_bytes(st, 4), rc;

	if (vt->lp_data != NULL && vt->lp_id0 == id0 &&
	    vt->lp_thread == sqlite3_column_int64(st, 1) &&
	    vt->lp_n == sqlite3_column_int64(st, 2) &&
	    vt->lp_seq0 == sqlite3_column_int64(st, 3) && vt->lp_len == len &&
	    (len == 0 || memcmp(vt->lp_data, data, (size_t)len) == 0)) {
		*lastp = vt->lp_last;
		return (SQLITE_OK);
	}
	/*
	 * The row copied before the page is read through other statements
	 * (kept when there is memory for it, else read again next time).
	 */
	sqlite3_free(vt->lp_data);
	if ((vt->lp_data = sqlite3_malloc(len > 0 ? len : 1)) != NULL) {
		if (len > 0)
			memcpy(vt->lp_data, data, (size_t)len);
		vt->lp_len = len;
		vt->lp_id0 = id0;
		vt->lp_thread = sqlite3_column_int64(st, 1);
		vt->lp_n = sqlite3_column_int64(st, 2);
		vt->lp_seq0 = sqlite3_column_int64(st, 3);
	}
	*lastp = INT64_MIN;
	if ((rc = hwtr_cv_open(&vt->base, (sqlite3_vtab_cursor **)&c)) ==
	    SQLITE_OK) {
		rc = hwtr_cv_find(c, id0, &pg);
		if (rc == SQLITE_OK && pg != NULL && pg->n > 0)
			*lastp = pg->rows[pg->n - 1].v[CS_ID];
		hwtr_cv_close(&c->base);
	}
	if (rc != SQLITE_OK) {
		sqlite3_free(vt->lp_data);
		vt->lp_data = NULL;
		return (rc);
	}
	vt->lp_last = *lastp;
	return (SQLITE_OK);
}

/*
 * The id of a row inserted without one: one above the largest, as a
 * table's INTEGER PRIMARY KEY takes (the last page's last row: after a
 * delete, not its id0 + n - 1).  SQLITE_FULL above INT64_MAX, where a
 * table would pick an unused id at random.
 */
static int
cv_next_id(struct cv_vtab *vt, int64_t *idp)
{
	sqlite3_stmt *st;
	int64_t last;
	int rc;

	if (vt->s_nrows == NULL && (rc = cv_prep_vt(vt, &vt->s_nrows,
	    "SELECT coalesce(max(id), 0) FROM \"%2$s\".\"%1$s_rows\"")) !=
	    SQLITE_OK)
		return (rc);
	if (vt->s_npage == NULL && (rc = cv_prep_vt(vt, &vt->s_npage,
	    "SELECT id0, thread, n, seq0, data FROM \"%2$s\".\"%1$s_pages\" "
	    "ORDER BY id0 DESC LIMIT 1")) != SQLITE_OK)
		return (rc);
	st = vt->s_nrows;
	rc = sqlite3_step(st);
	*idp = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	if (rc != SQLITE_ROW)
		return (SQLITE_ERROR);
	st = vt->s_npage;
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		rc = cv_last_page_id(vt, st, &last);
		if (rc == SQLITE_OK && last > *idp)
			*idp = last;
	} else if (rc == SQLITE_DONE)
		rc = SQLITE_OK;
	sqlite3_reset(st);
	if (rc != SQLITE_OK)
		return (rc);
	if (*idp == INT64_MAX) {
		sqlite3_free(vt->base.zErrMsg);
		vt->base.zErrMsg = sqlite3_mprintf("%s: no id left above %lld: "
		    "give the row's id", vt->name, (long long)*idp);
		return (SQLITE_FULL);
	}
	(*idp)++;
	return (SQLITE_OK);
}

static const char *const cv_colname[CS_NCOLS] = { "id", "thread", "parent",
	"depth", "symbol", "func_ip", "call_ip", "entry_kind", "exit_kind",
	"entry_seq", "exit_seq", "entry_insn", "exit_insn", "entry_tsc",
	"exit_tsc", "entry_ns", "exit_ns", "insns", "self_insns", "blocks" };
/* The columns calls_rows holds NOT NULL (HWTR_CS_SHADOW_SQL). */
#define CV_NOTNULL	((1u << CS_THREAD) | (1u << CS_DEPTH) |		\
	(1u << CS_FUNC_IP) | (1u << CS_ENTRY_KIND) | (1u << CS_EXIT_KIND) | \
	(1u << CS_ENTRY_SEQ) | (1u << CS_EXIT_SEQ) | (1u << CS_ENTRY_INSN) | \
	(1u << CS_EXIT_INSN) | (1u << CS_INSNS) | (1u << CS_SELF_INSNS) |	\
	(1u << CS_BLOCKS))

/*
 * Can column @col hold @v?  What a STRICT table with calls_rows' types
 * takes: integers (text or reals that are one, exactly) or NULL in the
 * integer columns, anything but a blob in the two kinds (NOT NULL is
 * calls_rows' to check).  A row of calls_rows is read back as a page's
 * is, in integers, so that text or a real kept there would come back
 * changed ('x' as 0, 2.5 as 2).  0, or SQLITE_MISMATCH with the message.
 */
static int
cv_value_ok(struct cv_vtab *vt, int col, sqlite3_value *v)
{
	static const char *const what[] = { "", "an integer", "a real",
	    "text", "a blob", "NULL" };
	int t = sqlite3_value_numeric_type(v);
	double d;

	if (col == CS_ENTRY_KIND || col == CS_EXIT_KIND ? t != SQLITE_BLOB :
	    t == SQLITE_INTEGER || t == SQLITE_NULL)
		return (SQLITE_OK);
	if (t == SQLITE_FLOAT) {
		d = sqlite3_value_double(v);
		if (d >= -9223372036854775808.0 && d < 9223372036854775808.0 &&
		    (double)(int64_t)d == d)
			return (SQLITE_OK);
	}
	sqlite3_free(vt->base.zErrMsg);
	vt->base.zErrMsg = sqlite3_mprintf("%s: column %s takes %s, not %s",
	    vt->name, cv_colname[col], col == CS_ENTRY_KIND || col == CS_EXIT_KIND ?
	    "text" : "integers", what[t]);
	return (SQLITE_MISMATCH);
}

/*
 * INSERT, UPDATE and DELETE: rows SQL writes go to calls_rows (values of
 * the columns' types, cv_value_ok()); a row of a page that is updated or
 * deleted leaves its page.
 */
int
hwtr_cv_update(sqlite3_vtab *vtab, int argc, sqlite3_value **argv,
    sqlite3_int64 *rowidp)
{
	struct cv_vtab *vt = (struct cv_vtab *)vtab;
	sqlite3_stmt *st;
	int64_t id, old = 0;
	int rc, i, yes, has_old, auto_id = 0;

	if ((has_old = sqlite3_value_type(argv[0]) != SQLITE_NULL))
		old = sqlite3_value_int64(argv[0]);
	/* The pages as they are now (a delete changes them in memory). */
	(void)hwtr_cv_fresh(vt);
	if (argc == 1)
		return (cv_delete(vt, old));
	vt->gen++;
	/*
	 * An UPDATE deletes its row, then inserts the new one: whatever
	 * would make the insert fail is checked before the delete, which
	 * SQLite does not undo when the statement fails.
	 */
	for (i = 0; i < CS_NCOLS; i++) {
		if ((rc = cv_value_ok(vt, i, argv[2 + i])) != SQLITE_OK)
			return (rc);
		if ((CV_NOTNULL >> i & 1) &&
		    sqlite3_value_type(argv[2 + i]) == SQLITE_NULL) {
			sqlite3_free(vt->base.zErrMsg);
			vt->base.zErrMsg = sqlite3_mprintf("NOT NULL constraint "
			    "failed: %s.%s", vt->name, cv_colname[i]);
			return (SQLITE_CONSTRAINT);
		}
	}
	/* As a table's INTEGER PRIMARY KEY: NULL picks one when inserting. */
	if (argc > 1 && sqlite3_value_type(argv[0]) != SQLITE_NULL &&
	    sqlite3_value_type(argv[2 + CS_ID]) == SQLITE_NULL) {
		sqlite3_free(vt->base.zErrMsg);
		vt->base.zErrMsg = sqlite3_mprintf("%s: id cannot be set to NULL",
		    vt->name);
		return (SQLITE_MISMATCH);
	}
	/* The id: the id column, else the rowid given, else the next one. */
	if (sqlite3_value_type(argv[2 + CS_ID]) != SQLITE_NULL)
		id = sqlite3_value_int64(argv[2 + CS_ID]);
	else if (sqlite3_value_type(argv[1]) != SQLITE_NULL)
		id = sqlite3_value_int64(argv[1]);
	/*
	 * The next id reads the last page: the deletes before it are
	 * written first (a deleted last row's id is taken again).
	 */
	else if ((rc = hwtr_cv_wflush(vt)) != SQLITE_OK ||
	    (rc = cv_next_id(vt, &id)) != SQLITE_OK)
		return (rc);
	else
		auto_id = 1;
	/*
	 * An UPDATE that keeps its id looks nothing up, nor does an id
	 * above every id (cv_next_id()'s).
	 */
	if ((has_old && id == old) || auto_id)
		yes = 0;
	else if ((rc = cv_exists(vt, id, &yes)) != SQLITE_OK)
		return (rc);
	if (yes) {
		sqlite3_free(vt->base.zErrMsg);
		vt->base.zErrMsg = sqlite3_mprintf("%s: id %lld exists",
		    vt->name, (long long)id);
		return (SQLITE_CONSTRAINT);
	}
	if (has_old && (rc = cv_delete(vt, old)) != SQLITE_OK)
		return (rc);
	if (vt->s_wins == NULL && (rc = cv_prep_vt(vt, &vt->s_wins,
	    "INSERT INTO \"%2$s\".\"%1$s_rows\" VALUES (?1, ?2, ?3, ?4, ?5, "
	    "?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, "
	    "?20)")) != SQLITE_OK)
		return (rc);
	st = vt->s_wins;
	sqlite3_bind_int64(st, 1, id);
	for (i = 1; i < CS_NCOLS; i++)
		sqlite3_bind_value(st, i + 1, argv[2 + i]);
	rc = sqlite3_step(st);
	if (rc != SQLITE_DONE) {
		sqlite3_free(vt->base.zErrMsg);
		vt->base.zErrMsg = sqlite3_mprintf("%s: %s", vt->name,
		    sqlite3_errmsg(vt->db));
	}
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	*rowidp = id;
	return (rc == SQLITE_DONE ? SQLITE_OK : SQLITE_CONSTRAINT);
}

/*
 * A transaction or a savepoint that wrote through the table rolled back:
 * what the cache holds may be what it undid, and the pending deletes are
 * undone with it.  (SQLite calls these only on tables that xBegin joined
 * to the transaction, those written; the storage tables' own data
 * version and change count do not move back.)  The pending deletes are
 * written at commit (xSync) and at each savepoint, so that all of them
 * come after the newest savepoint: a rollback to any undoes them all.
 */
int
hwtr_cv_begin(sqlite3_vtab *vtab)
{
	(void)vtab;
	return (SQLITE_OK);
}

int
hwtr_cv_sync(sqlite3_vtab *vtab)
{
	return (hwtr_cv_wflush((struct cv_vtab *)vtab));
}

int
hwtr_cv_rollback(sqlite3_vtab *vtab)
{
	struct cv_vtab *vt = (struct cv_vtab *)vtab;

	cv_wdrop(vt);
	vt->gen++;
	return (SQLITE_OK);
}

int
hwtr_cv_savepoint(sqlite3_vtab *vtab, int n)
{
	(void)n;
	return (hwtr_cv_wflush((struct cv_vtab *)vtab));
}

int
hwtr_cv_release(sqlite3_vtab *vtab, int n)
{
	(void)vtab;
	(void)n;
	return (SQLITE_OK);
}

int
hwtr_cv_rollback_to(sqlite3_vtab *vtab, int n)
{
	(void)n;
	return (hwtr_cv_rollback(vtab));
}
