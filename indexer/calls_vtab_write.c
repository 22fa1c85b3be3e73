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
 * without it, and the symbol copy's page with it.  An UPDATE checks
 * whatever would make its insert fail before it deletes the old row.
 * A rollback of what was written through the table makes the cache of
 * decoded pages stale: the next filter drops it (cv_reset()).
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "calls_vtab_int.h"
#include "colstore.h"

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
 * Delete call @r (of a page) from the symbol copy: its page there is
 * written again without it, or goes.
 */
static int
cv_delete_sym(struct cv_vtab *vt, const struct hwtr_cs_row *r)
{
	sqlite3_stmt *st = NULL, *up = NULL;
	struct hwtr_cs_row *rows = NULL;
	uint8_t *blob = NULL;
	const char *why;
	int64_t n, k, rowid;
	size_t len;
	int rc;

	if (r->nul & (1u << CS_SYMBOL))
		return (SQLITE_OK);
	if ((rc = cv_prep_vt(vt, &st, "SELECT rowid, id0, thread, n, data "
	    "FROM \"%2$s\".\"%1$s_bysym\" WHERE symbol = ?1 AND id0 <= ?2 ORDER BY "
	    "symbol DESC, id0 DESC LIMIT 1")) != SQLITE_OK)
		return (rc);
	sqlite3_bind_int64(st, 1, r->v[CS_SYMBOL]);
	sqlite3_bind_int64(st, 2, r->v[CS_ID]);
	if ((rc = sqlite3_step(st)) != SQLITE_ROW) {
		rc = rc == SQLITE_DONE ? SQLITE_OK : rc;
		goto out;
	}
	rowid = sqlite3_column_int64(st, 0);
	n = sqlite3_column_int64(st, 3);
	if ((rows = sqlite3_malloc64(HWTR_CS_PAGE * sizeof(*rows))) == NULL) {
		rc = SQLITE_NOMEM;
		goto out;
	}
	if (hwtr_cs_sym_decode(sqlite3_column_blob(st, 4),
	    (size_t)sqlite3_column_bytes(st, 4), r->v[CS_SYMBOL],
	    sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2), n, rows,
	    &why) < 0) {
		rc = SQLITE_CORRUPT_VTAB;
		goto out;
	}
	for (k = 0; k < n && rows[k].v[CS_ID] != r->v[CS_ID]; k++)
		;
	rc = SQLITE_OK;
	if (k == n)
		goto out;
	memmove(&rows[k], &rows[k + 1], (size_t)(n - k - 1) * sizeof(*rows));
	if (--n == 0)
		rc = cv_prep_vt(vt, &up, "DELETE FROM \"%2$s\".\"%1$s_bysym\" WHERE "
		    "rowid = ?1");
	else if (hwtr_cs_sym_encode(rows, (size_t)n, &blob, &len) < 0)
		rc = SQLITE_NOMEM;
	else
		rc = cv_prep_vt(vt, &up, "UPDATE \"%2$s\".\"%1$s_bysym\" SET id0 = ?2, "
		    "n = ?3, data = ?4 WHERE rowid = ?1");
	if (rc != SQLITE_OK)
		goto out;
	sqlite3_bind_int64(up, 1, rowid);
	if (n > 0) {
		sqlite3_bind_int64(up, 2, rows[0].v[CS_ID]);
		sqlite3_bind_int64(up, 3, n);
		sqlite3_bind_blob(up, 4, blob, (int)len, SQLITE_STATIC);
	}
	rc = cv_step_done(up);
out:
	sqlite3_finalize(st);
	sqlite3_finalize(up);
	sqlite3_free(rows);
	free(blob);
	return (rc);
}

/*
 * Delete id @id: from calls_rows, or from its page, which is written again
 * without it, and from the symbol copy.
 */
static int
cv_delete(struct cv_vtab *vt, int64_t id)
{
	struct cv_cursor *c;
	struct cv_page *pg;
	sqlite3_stmt *st = NULL;
	uint8_t *blob = NULL;
	size_t len;
	int64_t k;
	int rc, had;

	if ((rc = cv_exec_id(vt, "DELETE FROM \"%2$s\".\"%1$s_rows\" WHERE id = ?1 "
	    "RETURNING id", id, &had)) != SQLITE_OK || had)
		return (rc);
	if ((rc = hwtr_cv_open(&vt->base, (sqlite3_vtab_cursor **)&c)) !=
	    SQLITE_OK)
		return (rc);
	if ((rc = hwtr_cv_find(c, id, &pg)) != SQLITE_OK || pg == NULL ||
	    (k = hwtr_cv_index(pg, id)) < 0)
		goto out;
	/* A copy: other cursors may be reading the table's. */
	if (pg != &c->own[0]) {
		if (c->own[0].rows == NULL && (c->own[0].rows =
		    sqlite3_malloc64(HWTR_CS_PAGE * sizeof(*pg->rows))) == NULL) {
			rc = SQLITE_NOMEM;
			goto out;
		}
		memcpy(c->own[0].rows, pg->rows, (size_t)pg->n *
		    sizeof(*pg->rows));
		c->own[0].n = pg->n;
		c->own[0].id0 = pg->id0;
		pg->id0 = -1;
		pg = &c->own[0];
	}
	if ((rc = cv_delete_sym(vt, &pg->rows[k])) != SQLITE_OK)
		goto out;
	memmove(&pg->rows[k], &pg->rows[k + 1], (size_t)(pg->n - k - 1) *
	    sizeof(*pg->rows));
	pg->n--;
	if (pg->n == 0) {
		rc = cv_exec_id(vt, "DELETE FROM \"%2$s\".\"%1$s_pages\" WHERE id0 = ?1",
		    pg->id0, NULL);
		goto out;
	}
	if (hwtr_cs_encode(pg->rows, (size_t)pg->n, pg->id0,
	    pg->rows[0].v[CS_ENTRY_SEQ], &blob, &len) < 0) {
		rc = SQLITE_NOMEM;
		goto out;
	}
	if ((rc = cv_prep_vt(vt, &st, "UPDATE \"%2$s\".\"%1$s_pages\" SET n = ?2, "
	    "seq0 = ?3, seq1 = ?4, data = ?5 WHERE id0 = ?1")) != SQLITE_OK)
		goto out;
	sqlite3_bind_int64(st, 1, pg->id0);
	sqlite3_bind_int64(st, 2, pg->n);
	sqlite3_bind_int64(st, 3, pg->rows[0].v[CS_ENTRY_SEQ]);
	sqlite3_bind_int64(st, 4, pg->rows[pg->n - 1].v[CS_ENTRY_SEQ]);
	sqlite3_bind_blob(st, 5, blob, (int)len, SQLITE_STATIC);
	rc = cv_step_done(st);
out:
	sqlite3_finalize(st);
	free(blob);
	hwtr_cv_close(&c->base);
	return (rc);
}

/* Does id @id exist (in calls_rows or a page)? */
static int
cv_exists(struct cv_vtab *vt, int64_t id, int *yes)
{
	struct cv_cursor *c;
	struct cv_page *pg;
	int rc;

	if ((rc = cv_exec_id(vt, "SELECT 1 FROM \"%2$s\".\"%1$s_rows\" WHERE id = ?1",
	    id, yes)) != SQLITE_OK || *yes)
		return (rc);
	if ((rc = hwtr_cv_open(&vt->base, (sqlite3_vtab_cursor **)&c)) !=
	    SQLITE_OK)
		return (rc);
	if ((rc = hwtr_cv_find(c, id, &pg)) == SQLITE_OK)
		*yes = pg != NULL && hwtr_cv_index(pg, id) >= 0;
	hwtr_cv_close(&c->base);
	return (rc);
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
	struct cv_cursor *c;
	struct cv_page *pg;
	sqlite3_stmt *st;
	int64_t id0 = -1;
	int rc;

	if ((rc = cv_prep_vt(vt, &st, "SELECT coalesce((SELECT max(id) FROM "
	    "\"%2$s\".\"%1$s_rows\"), 0), (SELECT max(id0) FROM \"%2$s\".\"%1$s_pages\")")) !=
	    SQLITE_OK)
		return (rc);
	rc = sqlite3_step(st);
	*idp = sqlite3_column_int64(st, 0);
	if (sqlite3_column_type(st, 1) != SQLITE_NULL)
		id0 = sqlite3_column_int64(st, 1);
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW)
		return (SQLITE_ERROR);
	if (id0 >= 0) {
		if ((rc = hwtr_cv_open(&vt->base,
		    (sqlite3_vtab_cursor **)&c)) != SQLITE_OK)
			return (rc);
		rc = hwtr_cv_find(c, id0, &pg);
		if (rc == SQLITE_OK && pg != NULL && pg->n > 0 &&
		    pg->rows[pg->n - 1].v[CS_ID] > *idp)
			*idp = pg->rows[pg->n - 1].v[CS_ID];
		hwtr_cv_close(&c->base);
		if (rc != SQLITE_OK)
			return (rc);
	}
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
	sqlite3_stmt *st = NULL;
	int64_t id, old = 0;
	int rc, i, yes, has_old;

	/* The rows it looks for as they are now, then changed. */
	(void)hwtr_cv_fresh(vt);
	vt->gen++;
	if ((has_old = sqlite3_value_type(argv[0]) != SQLITE_NULL))
		old = sqlite3_value_int64(argv[0]);
	if (argc == 1)
		return (cv_delete(vt, old));
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
	else if ((rc = cv_next_id(vt, &id)) != SQLITE_OK)
		return (rc);
	if (has_old && id == old)
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
	if ((rc = cv_prep_vt(vt, &st, "INSERT INTO \"%2$s\".\"%1$s_rows\" VALUES (?1, "
	    "?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, "
	    "?16, ?17, ?18, ?19, ?20)")) != SQLITE_OK)
		return (rc);
	sqlite3_bind_int64(st, 1, id);
	for (i = 1; i < CS_NCOLS; i++)
		sqlite3_bind_value(st, i + 1, argv[2 + i]);
	rc = sqlite3_step(st);
	if (rc != SQLITE_DONE) {
		sqlite3_free(vt->base.zErrMsg);
		vt->base.zErrMsg = sqlite3_mprintf("%s: %s", vt->name,
		    sqlite3_errmsg(vt->db));
	}
	sqlite3_finalize(st);
	*rowidp = id;
	return (rc == SQLITE_DONE ? SQLITE_OK : SQLITE_CONSTRAINT);
}

/*
 * A transaction or a savepoint that wrote through the table rolled back:
 * what the cache holds may be what it undid.  (SQLite calls these only
 * on tables that xBegin joined to the transaction, those written; the
 * storage tables' own data version and change count do not move back.)
 */
int
hwtr_cv_begin(sqlite3_vtab *vtab)
{
	(void)vtab;
	return (SQLITE_OK);
}

int
hwtr_cv_rollback(sqlite3_vtab *vtab)
{
	((struct cv_vtab *)vtab)->gen++;
	return (SQLITE_OK);
}

int
hwtr_cv_savepoint(sqlite3_vtab *vtab, int n)
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
