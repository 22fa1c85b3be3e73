/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The database writer's files and lines tables (ix_write.h): every
 * source file name once, then every image's line table, many rows a
 * statement.
 */

#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwtr_common.h"
#include "hwtr_ix.h"
#include "ix_run.h"
#include "ix_image.h"
#include "ix_write.h"

/*
 * Rows of lines a statement: one step, bind and reset per row cost more
 * than the row (gz8's 203,066 rows: 0.5 CPU-s one a statement; a
 * synthetic table of as many rows, 0.26-0.39 s one a statement, 0.11-0.12
 * s 32 a statement).
 */
#define IX_LINES_BATCH	32
#define IX_LINES_COLS	7

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

/* An INSERT INTO @table of @rows rows of @cols columns into *@stp. */
static int
rows_prep(struct run *r, const char *table, size_t rows, size_t cols,
    sqlite3_stmt **stp)
{
	char sql[64 + IX_LINES_BATCH * (IX_LINES_COLS * 2 + 3)], *p = sql;
	size_t k, c;

	p += snprintf(p, 64, "INSERT INTO %s VALUES", table);
	for (k = 0; k < rows; k++) {
		*p++ = k > 0 ? ',' : ' ';
		*p++ = '(';
		for (c = 0; c < cols; c++) {
			*p++ = '?';
			*p++ = c + 1 < cols ? ',' : ')';
		}
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

/* Every image's line table, IX_LINES_BATCH rows a statement. */
static int
write_lines(struct run *r)
{
	sqlite3_stmt *st = NULL;
	size_t i, j, n = 0, cap = 0, left = 0;
	int rc = 0, c;

	for (i = 0; i < r->im->nimgs; i++)
		left += r->im->imgs[i].elf.nlines;
	for (i = 0; i < r->im->nimgs && rc == 0; i++) {
		const struct ix_img *im = &r->im->imgs[i];

		for (j = 0; j < im->elf.nlines && rc == 0; j++) {
			const struct ix_line *l = &im->elf.lines[j];

			/* A full statement, then one for the rows left. */
			if (st == NULL) {
				cap = left < IX_LINES_BATCH ? left :
				    IX_LINES_BATCH;
				if ((rc = rows_prep(r, "lines", cap,
				    IX_LINES_COLS, &st)) < 0)
					break;
			}
			c = (int)n * IX_LINES_COLS;
			sqlite3_bind_int64(st, c + 1, (int64_t)i + 1);
			sqlite3_bind_int64(st, c + 2, (int64_t)l->addr);
			sqlite3_bind_int64(st, c + 3, im->file_ids[l->file]);
			sqlite3_bind_int64(st, c + 4, l->line);
			sqlite3_bind_int64(st, c + 5, l->col);
			sqlite3_bind_int64(st, c + 6, l->is_stmt);
			sqlite3_bind_int64(st, c + 7, (int64_t)l->end);
			left--;
			if (++n < cap)
				continue;
			rc = rows_step(r, st, "lines");
			n = 0;
			if (left < cap) {
				sqlite3_finalize(st);
				st = NULL;
			}
		}
	}
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
	if ((rc = rows_prep(r, "files", 1, 2, &st)) < 0)
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
