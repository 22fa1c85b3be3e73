/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The calls table's pages and statements (calls_vtab_int.h), which its
 * cursors (calls_vtab.c) and its writes (calls_vtab_write.c) share: a
 * cursor's statements, prepared once or taken from the table's pool and
 * given back when it closes; the table's cache of decoded pages, with
 * two pages of the cursor's own when every page of the cache is pinned;
 * the page holding an id, and an id's row in it.
 */

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "calls_vtab_int.h"
#include "colstore.h"
#include "hwtr_common.h"

char *
hwtr_cv_subst(const char *tmpl, const char *schema, const char *name)
{
	sqlite3_str *s = sqlite3_str_new(NULL);
	const char *p, *n;

	for (p = tmpl; *p != '\0'; p++) {
		if (strncmp(p, "%1$s", 4) == 0 || strncmp(p, "%2$s", 4) == 0) {
			for (n = p[1] == '1' ? name : schema; *n != '\0'; n++) {
				if (*n == '"')
					sqlite3_str_appendchar(s, 1, '"');
				sqlite3_str_appendchar(s, 1, *n);
			}
			p += 3;
		} else
			sqlite3_str_appendchar(s, 1, *p);
	}
	return (sqlite3_str_finish(s));
}

int
hwtr_cv_open(sqlite3_vtab *vtab, sqlite3_vtab_cursor **curp)
{
	struct cv_cursor *c;
	int i;

	if ((c = sqlite3_malloc(sizeof(*c))) == NULL)
		return (SQLITE_NOMEM);
	memset(c, 0, sizeof(*c));
	c->vt = (struct cv_vtab *)vtab;
	c->eof = 1;
	c->cl_id = INT64_MIN;
	for (i = 0; i < 2; i++)
		c->own[i].id0 = -1;
	*curp = &c->base;
	return (SQLITE_OK);
}

/* Pin page @pg (NULL: none) for cursor @c, instead of the one before. */
void
hwtr_cv_pin(struct cv_cursor *c, struct cv_page *pg)
{
	if (c->pin == pg)
		return;
	if (c->pin != NULL)
		c->pin->pins--;
	if ((c->pin = pg) != NULL)
		pg->pins++;
}

int
hwtr_cv_close(sqlite3_vtab_cursor *cur)
{
	struct cv_cursor *c = (struct cv_cursor *)cur;
	struct cv_vtab *vt = c->vt;
	int i, j;

	hwtr_cv_pin(c, NULL);
	/* Its statements go back to the table's pool, or go. */
	for (i = 0; i < c->nheld; i++) {
		sqlite3_stmt *st = *c->held[i].stp;

		if (st == NULL)
			continue;
		sqlite3_reset(st);
		sqlite3_clear_bindings(st);
		for (j = 0; j < CV_NPOOL && vt->pool[j].st != NULL; j++)
			;
		if (j < CV_NPOOL) {
			vt->pool[j].tmpl = c->held[i].tmpl;
			vt->pool[j].st = st;
		} else
			sqlite3_finalize(st);
	}
	for (i = 0; i < 2; i++)
		sqlite3_free(c->own[i].rows);
	sqlite3_free(c->spg.rows);
	sqlite3_free(c->r_ek);
	sqlite3_free(c->r_xk);
	sqlite3_free(c);
	return (SQLITE_OK);
}

int
hwtr_cv_err(struct cv_cursor *c, const char *fmt, const char *what)
{
	sqlite3_free(c->vt->base.zErrMsg);
	c->vt->base.zErrMsg = sqlite3_mprintf(fmt, c->vt->name, what);
	return (SQLITE_ERROR);
}

int
hwtr_cv_dberr(struct cv_cursor *c)
{
	return (hwtr_cv_err(c, "%s: %s", sqlite3_errmsg(c->vt->db)));
}

/*
 * Prepare @sql (a literal, "%1$s" for the table name, "%2$s" for its
 * schema: hwtr_cv_subst()) into *@stp (a statement field of @c) once:
 * from the table's pool when one is idle.
 */
int
hwtr_cv_prep(struct cv_cursor *c, sqlite3_stmt **stp, const char *sql)
{
	struct cv_vtab *vt = c->vt;
	char *s;
	int rc, i;

	if (*stp != NULL) {
		sqlite3_reset(*stp);
		sqlite3_clear_bindings(*stp);
		return (SQLITE_OK);
	}
	if (c->nheld == CV_NHELD)
		return (hwtr_cv_err(c, "%s: %s", "too many statements"));
	for (i = 0; i < CV_NPOOL; i++)
		if (vt->pool[i].st != NULL && vt->pool[i].tmpl == sql) {
			*stp = vt->pool[i].st;
			vt->pool[i].st = NULL;
			break;
		}
	if (*stp == NULL) {
		if ((s = hwtr_cv_subst(sql, vt->schema, vt->name)) == NULL)
			return (SQLITE_NOMEM);
		rc = sqlite3_prepare_v2(vt->db, s, -1, stp, NULL);
		sqlite3_free(s);
		if (rc != SQLITE_OK)
			return (hwtr_cv_dberr(c));
	}
	c->held[c->nheld].stp = stp;
	c->held[c->nheld++].tmpl = sql;
	return (SQLITE_OK);
}

/*
 * A slot for a page to decode: the table's least recently used one that
 * no cursor reads, else one of @c's own (not the one it reads).  NULL when
 * memory ran out.
 */
static struct cv_page *
cv_slot(struct cv_cursor *c)
{
	struct cv_vtab *vt = c->vt;
	struct cv_page *pg = NULL;
	int i;

	for (i = 0; i < CV_NCACHE; i++)
		if (vt->cache[i].pins == 0 && (pg == NULL ||
		    vt->cache[i].used < pg->used))
			pg = &vt->cache[i];
	if (pg == NULL)
		pg = c->pin == &c->own[0] ? &c->own[1] : &c->own[0];
	if (pg->rows == NULL && (pg->rows = sqlite3_malloc64(HWTR_CS_PAGE *
	    sizeof(struct hwtr_cs_row))) == NULL)
		return (NULL);
	return (pg);
}

/* The page of first id @id0 among the decoded ones, or NULL. */
static struct cv_page *
cv_cached(struct cv_cursor *c, int64_t id0)
{
	int i;

	for (i = 0; i < CV_NCACHE; i++)
		if (c->vt->cache[i].id0 == id0)
			return (&c->vt->cache[i]);
	for (i = 0; i < 2; i++)
		if (c->own[i].id0 == id0)
			return (&c->own[i]);
	return (NULL);
}

/* Decode the page row at @st's columns 0-4 into a cache slot. */
int
hwtr_cv_load(struct cv_cursor *c, sqlite3_stmt *st, struct cv_page **pgp)
{
	struct cv_page *pg;
	const char *why;
	int64_t id0 = sqlite3_column_int64(st, 0);

	if ((pg = cv_cached(c, id0)) != NULL)
		goto out;
	if ((pg = cv_slot(c)) == NULL)
		return (SQLITE_NOMEM);
	pg->id0 = -1;
	pg->thread = sqlite3_column_int64(st, 1);
	pg->n = sqlite3_column_int64(st, 2);
	if (hwtr_cs_decode(sqlite3_column_blob(st, 4),
	    (size_t)sqlite3_column_bytes(st, 4), id0, pg->thread, pg->n,
	    sqlite3_column_int64(st, 3), pg->rows, &why) < 0) {
		char where[64];

		snprintf(where, sizeof(where), "%lld", (long long)id0);
		sqlite3_free(c->vt->base.zErrMsg);
		c->vt->base.zErrMsg = sqlite3_mprintf("%s: corrupt page of ids "
		    "from %s in %s_pages: %s", c->vt->name, where, c->vt->name,
		    why);
		return (SQLITE_CORRUPT_VTAB);
	}
	pg->id0 = id0;
out:
	pg->used = ++c->vt->tick;
	*pgp = pg;
	return (SQLITE_OK);
}


/*
 * Forget the table's pages if they may be stale: decoded before a change
 * through this table (@vt's gen, which a rollback moves too), by another
 * connection, or by SQL on the storage tables (the data version and this
 * connection's change count).  Before a scan's filter and before a
 * write looks for the rows it needs: a write after a ROLLBACK, with no
 * read between them, found the rows as the cache held them.  Returns the
 * data version the cache is now valid for.
 */
unsigned int
hwtr_cv_fresh(struct cv_vtab *vt)
{
	unsigned int dver = 0;
	int i;

	(void)sqlite3_file_control(vt->db, vt->schema, SQLITE_FCNTL_DATA_VERSION,
	    &dver);
	dver += (unsigned int)sqlite3_total_changes64(vt->db);
	if (vt->cgen != vt->gen || vt->cdver != dver) {
		for (i = 0; i < CV_NCACHE; i++)
			vt->cache[i].id0 = -1;
		vt->pristine = vt->rows_empty = -1;
		vt->cgen = vt->gen;
		vt->cdver = dver;
	}
	return (dver);
}

/* The page holding id @id into *@pgp (NULL: none). */
int
hwtr_cv_find(struct cv_cursor *c, int64_t id, struct cv_page **pgp)
{
	struct cv_page *pg;
	int i, rc;

	*pgp = NULL;
	/*
	 * A page holds ids from its id0 to its last row's (the next thread's
	 * ids may start before id0 + HWTR_CS_PAGE).
	 */
	for (i = 0; i < CV_NCACHE + 2; i++) {
		pg = i < CV_NCACHE ? &c->vt->cache[i] : &c->own[i - CV_NCACHE];
		if (pg->id0 >= 0 && pg->id0 <= id &&
		    id <= pg->rows[pg->n - 1].v[CS_ID]) {
			pg->used = ++c->vt->tick;
			*pgp = pg;
			return (SQLITE_OK);
		}
	}
	if ((rc = hwtr_cv_prep(c, &c->s_find, "SELECT id0, thread, n, seq0, "
	    "data FROM \"%2$s\".\"%1$s_pages\" WHERE id0 <= ?1 ORDER BY id0 DESC "
	    "LIMIT 1")) != SQLITE_OK)
		return (rc);
	sqlite3_bind_int64(c->s_find, 1, id);
	rc = sqlite3_step(c->s_find);
	if (rc == SQLITE_ROW) {
		int64_t id0 = sqlite3_column_int64(c->s_find, 0);

		/*
		 * No page starts below 0 (a damaged database's may: id less
		 * such an id0 would overflow); id0 <= id, so id - id0 >= 0.
		 */
		if (id0 < 0 || id - id0 >= HWTR_CS_PAGE)
			rc = SQLITE_OK;
		else
			rc = hwtr_cv_load(c, c->s_find, pgp);
	} else
		rc = rc == SQLITE_DONE ? SQLITE_OK : hwtr_cv_dberr(c);
	sqlite3_reset(c->s_find);
	return (rc);
}

static int
cv_id_below(const void *id, const void *rows, size_t i)
{
	const struct hwtr_cs_row *r = rows;

	return (r[i].v[CS_ID] < *(const int64_t *)id);
}

/* Index of id @id in page @pg, or -1. */
int64_t
hwtr_cv_index(const struct cv_page *pg, int64_t id)
{
	int64_t lo;

	lo = (int64_t)hwtr_bsearch(&id, pg->rows, (size_t)pg->n, cv_id_below);
	return (lo < pg->n && pg->rows[lo].v[CS_ID] == id ? lo : -1);
}
