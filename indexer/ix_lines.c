/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The database writer's files and lines (ix_write.h): every source file
 * name once, then every image's line table as pages of the lines store
 * (linestore.h).
 */

#include <sqlite3.h>

#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwtr_common.h"
#include "hwtr_ix.h"
#include "ix_run.h"
#include "ix_image.h"
#include "ix_write.h"
#include "linestore.h"

/* Columns of the widest INSERT rows_prep() makes (line_pages). */
#define IX_LINES_COLS	5

int64_t
ix_file_id(struct run *r, const char *path)
{
	uint64_t h = 1469598103934665603ULL;
	const char *p;
	size_t i;

	if (r->wr->nfiles * 2 >= r->wr->fcap) {
		size_t n = r->wr->fcap ? r->wr->fcap * 2 : 1024;
		uint32_t *t = calloc(n, sizeof(*t));

		if (t == NULL)
			return (-HWTR_E_NOMEM);
		for (i = 0; i < r->wr->nfiles; i++) {
			uint64_t hh = 1469598103934665603ULL;

			for (p = r->wr->files[i]; *p; p++)
				hh = (hh ^ (uint8_t)*p) * 1099511628211ULL;
			while (t[hh & (n - 1)] != 0)
				hh++;
			t[hh & (n - 1)] = (uint32_t)i + 1;
		}
		free(r->wr->ftab);
		r->wr->ftab = t;
		r->wr->fcap = n;
	}
	for (p = path; *p; p++)
		h = (h ^ (uint8_t)*p) * 1099511628211ULL;
	for (;; h++) {
		uint32_t v = r->wr->ftab[h & (r->wr->fcap - 1)];

		if (v == 0)
			break;
		if (strcmp(r->wr->files[v - 1], path) == 0)
			return ((int64_t)v);
	}
	if (hwtr_grow((void **)&r->wr->files, &r->wr->cfiles, r->wr->nfiles + 1,
	    sizeof(*r->wr->files)) < 0)
		return (-HWTR_E_NOMEM);
	if ((r->wr->files[r->wr->nfiles] = strdup(path)) == NULL)
		return (-HWTR_E_NOMEM);
	r->wr->ftab[h & (r->wr->fcap - 1)] = (uint32_t)r->wr->nfiles + 1;
	return ((int64_t)++r->wr->nfiles);
}

static int
lines_err(struct run *r, const char *what)
{
	ix_err(r->ix, "database: %s: %s", what, sqlite3_errmsg(r->wr->db));
	return (-HWTR_E_DB);
}

/* An INSERT INTO @table of one row of @cols columns into *@stp. */
static int
rows_prep(struct run *r, const char *table, size_t cols, sqlite3_stmt **stp)
{
	char sql[64 + IX_LINES_COLS * 2 + 3], *p = sql;
	size_t c;

	assert(cols >= 1 && cols <= IX_LINES_COLS);
	p += snprintf(p, 64, "INSERT INTO %s VALUES (", table);
	for (c = 0; c < cols; c++) {
		*p++ = '?';
		*p++ = c + 1 < cols ? ',' : ')';
	}
	*p = '\0';
	if (sqlite3_prepare_v2(r->wr->db, sql, -1, stp, NULL) != SQLITE_OK)
		return (lines_err(r, table));
	return (0);
}

/* Run @st (bound) once, for it to be bound again. */
static int
rows_step(struct run *r, sqlite3_stmt *st, const char *what)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	return (rc == SQLITE_DONE ? 0 : lines_err(r, what));
}

/*
 * One image's rows @ls (@n, in SQLite's order of addr) as line_pages
 * rows of image @img, HWTR_LS_PAGE a page.
 */
static int
write_line_pages(struct run *r, sqlite3_stmt *st, int64_t img,
    const struct hwtr_ls_row *ls, size_t n)
{
	uint8_t *blob;
	size_t k, m, len;
	int rc = 0;

	for (k = 0; k < n && rc == 0; k += m) {
		m = n - k < HWTR_LS_PAGE ? n - k : HWTR_LS_PAGE;
		if (hwtr_ls_encode(ls + k, m, &blob, &len) < 0)
			return (-HWTR_E_NOMEM);
		sqlite3_bind_int64(st, 1, img);
		sqlite3_bind_int64(st, 2, ls[k].addr);
		sqlite3_bind_int64(st, 3, ls[k + m - 1].addr);
		sqlite3_bind_int64(st, 4, (int64_t)m);
		sqlite3_bind_blob(st, 5, blob, (int)len, SQLITE_STATIC);
		rc = rows_step(r, st, "line_pages");
		sqlite3_clear_bindings(st);
		free(blob);
	}
	return (rc);
}

/*
 * Every image's line table into line_pages (linestore.h): the rows in
 * SQLite's order of addresses, which are signed (an image's rows at and
 * above 2^63, kernel addresses, come first).
 */
static int
write_lines(struct run *r)
{
	sqlite3_stmt *st = NULL;
	struct hwtr_ls_row *ls = NULL;
	size_t i, j, k, n, cap = 0;
	int rc;

	if ((rc = rows_prep(r, "line_pages", 5, &st)) < 0)
		return (rc);
	for (i = 0; i < r->im->nimgs && rc == 0; i++) {
		const struct ix_img *im = &r->im->imgs[i];

		if ((n = im->elf.nlines) == 0)
			continue;
		if (n > cap) {
			free(ls);
			if ((ls = malloc(n * sizeof(*ls))) == NULL) {
				rc = -HWTR_E_NOMEM;
				break;
			}
			cap = n;
		}
		for (k = 0; k < n && !(im->elf.lines[k].addr >> 63); k++)
			;
		for (j = 0; j < n; j++) {
			const struct ix_line *l = &im->elf.lines[(k + j) % n];

			ls[j].addr = (int64_t)l->addr;
			ls[j].end = (int64_t)l->end;
			ls[j].file = im->file_ids[l->file];
			ls[j].line = l->line;
			ls[j].col = l->col;
			ls[j].is_stmt = l->is_stmt;
		}
		rc = write_line_pages(r, st, (int64_t)i + 1, ls, n);
	}
	free(ls);
	sqlite3_finalize(st);
	return (rc);
}

int
ix_write_files_lines(struct run *r)
{
	sqlite3_stmt *st;
	size_t i, j;
	int rc;

	for (i = 0; i < r->im->nimgs; i++) {
		struct ix_img *im = &r->im->imgs[i];

		if (im->elf.nfiles == 0)
			continue;
		im->file_ids = calloc(im->elf.nfiles, sizeof(*im->file_ids));
		if (im->file_ids == NULL)
			return (-HWTR_E_NOMEM);
		for (j = 0; j < im->elf.nfiles; j++) {
			int64_t f = ix_file_id(r, im->elf.files[j]);

			if (f < 0)
				return ((int)f);
			im->file_ids[j] = f;
		}
	}
	/* The call sites' files of inlined subroutines (write_inlines()). */
	for (i = 0; i < r->im->nimgs; i++)
		for (j = 0; j < r->im->imgs[i].elf.nifiles; j++)
			if ((rc = (int)ix_file_id(r,
			    r->im->imgs[i].elf.ifiles[j])) < 0)
				return (rc);
	if ((rc = rows_prep(r, "files", 2, &st)) < 0)
		return (rc);
	for (i = 0; i < r->wr->nfiles && rc == 0; i++) {
		sqlite3_bind_int64(st, 1, (int64_t)i + 1);
		sqlite3_bind_text(st, 2, r->wr->files[i], -1, SQLITE_STATIC);
		rc = rows_step(r, st, "files");
	}
	sqlite3_finalize(st);
	if (rc < 0)
		return (rc);
	return (write_lines(r));
}
