/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The calls virtual table's files, private to them: the table, its
 * cursor and its pages, and the few functions they call across files.
 * calls_vtab.c (the module: plans, scans, columns) calls down into
 * calls_vtab_write.c (INSERT, UPDATE, DELETE, the transaction hooks),
 * and both call down into calls_vtab_page.c (the table's statement pool
 * and cache of decoded pages, which cursors and writes share); no file
 * calls one above it.
 */

#ifndef HWTR_CALLS_VTAB_INT_H
#define HWTR_CALLS_VTAB_INT_H

#ifdef HWTR_SQLITE_EXTENSION
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3
#else
#include <sqlite3.h>
#endif

#include <stdint.h>

#include "colstore.h"

#define CV_NCACHE	8	/* decoded pages a table keeps */
#define CV_NWSYM	32	/* pages of the symbol copy a delete keeps */
#define CV_NPOOL	24	/* idle statements a table keeps */
#define CV_NHELD	20	/* statements a cursor holds, at most */

struct cv_page {
	int64_t		id0, thread, n;
	struct hwtr_cs_row *rows;	/* HWTR_CS_PAGE */
	unsigned long	used;
	int		pins;		/* cursors reading it */
};

/*
 * A page a DELETE changed and has not written yet (calls_vtab_write.c):
 * of calls_pages (@key its id0, @hi its last id when read) or of the
 * symbol copy (@key its rowid).  Rows of one page are deleted in memory
 * and the page written once, not once a row.
 */
struct cv_wpage {
	int64_t		key;		/* -1: none */
	int64_t		id0, hi, thread, n, symbol;
	struct hwtr_cs_row *rows;	/* HWTR_CS_PAGE, in id order */
	int		dirty;
	unsigned long	used;
};

/*
 * The table keeps the pages it decoded and the statements its cursors
 * prepared, for the cursors after them: SQLite opens a cursor for each
 * run of a statement, and a walk or a bisection runs one statement
 * thousands of times, each wanting a page its predecessor decoded.
 */
struct cv_vtab {
	sqlite3_vtab	base;
	sqlite3		*db;
	char		*name;		/* the table's, for its storage tables */
	char		*schema;	/* the database holding them all */
	unsigned int	gen;		/* bumped by each change through it */
	struct cv_page	cache[CV_NCACHE];
	unsigned long	tick;
	unsigned int	cgen, cdver;	/* what the cache is valid for */
	int		pristine;	/* cv_pristine(): -1 not known */
	int		rows_empty;	/* cv_filter()'s, the same */
	struct {
		const char	*tmpl;	/* its SQL before substitution */
		sqlite3_stmt	*st;
	}		pool[CV_NPOOL];
	/*
	 * Deletes not written yet: written before anything reads the
	 * table or its storage through it, at a savepoint and at commit;
	 * dropped by a rollback (calls_vtab_write.c).
	 */
	struct cv_wpage	wp;
	struct cv_wpage	ws[CV_NWSYM];
	unsigned long	wtick;
	sqlite3_stmt	*s_wrows, *s_wsym, *s_wins;
	/*
	 * The last page as cv_next_id() last read it (its calls_pages row,
	 * blob copied) and the id of its last row, so that rows inserted
	 * without an id do not decode it again each.
	 */
	sqlite3_stmt	*s_nrows, *s_npage;
	int64_t		lp_id0, lp_thread, lp_n, lp_seq0, lp_last;
	void		*lp_data;	/* sqlite3_malloc'd, NULL: none */
	int		lp_len;
};

struct cv_cursor {
	sqlite3_vtab_cursor base;
	struct cv_vtab	*vt;
	int		desc, eof;
	/* Bounds (inclusive) and equalities of this scan. */
	int64_t		id_lo, id_hi, seq_lo, seq_hi, thread, symbol;
	int		has_thread, has_symbol;
	/*
	 * The table's page it reads (pinned), pages of its own when all of
	 * the table's are pinned; validity of its caches.
	 */
	struct cv_page	*pin;
	struct cv_page	own[2];
	unsigned int	gen, dver;
	/* Statements, prepared or taken from the pool once per cursor. */
	struct {
		sqlite3_stmt	**stp;
		const char	*tmpl;
	}		held[CV_NHELD];
	int		nheld;
	sqlite3_stmt	*s_find;	/* the page holding an id */
	sqlite3_stmt	*s_range[2];	/* pages by id0 range, asc / desc */
	sqlite3_stmt	*s_tlo, *s_thi;	/* a thread's page bounds */
	sqlite3_stmt	*s_sym[2];	/* postings of a symbol */
	sqlite3_stmt	*s_rows[4][2];	/* calls_rows per plan and order */
	/* The page source. */
	int		plan;
	sqlite3_stmt	*pages;		/* page rows (calls_bysym's: CV_SYM) */
	struct cv_page	*pg;		/* the page being read */
	int64_t		pi;		/* row index in it */
	struct cv_page	spg;		/* CV_SYM: a page of the symbol copy */
	int		p_has;
	const struct hwtr_cs_row *p_row;
	/* The calls_rows source. */
	sqlite3_stmt	*rows;
	int		r_has;
	struct hwtr_cs_row r_row;
	char		*r_ek, *r_xk;
	/* The current row: 1 from the pages, 2 from calls_rows. */
	int		cur;
	/* Callers of rows that do not hold them. */
	sqlite3_stmt	*s_rcaller;
	sqlite3_stmt	*s_pristine;
	int64_t		cl_id;		/* the last caller looked up */
	struct hwtr_cs_row cl_row;
	int		cl_has;
};

/* calls_vtab_page.c */

/*
 * @tmpl with each "%1$s" replaced by @name, each "%2$s" by @schema, with
 * their double quotes doubled (they go between double quotes); the
 * caller sqlite3_free()s it.
 */
char	*hwtr_cv_subst(const char *tmpl, const char *schema, const char *name);
/* xOpen and xClose; writes open a cursor of their own to find pages. */
int	hwtr_cv_open(sqlite3_vtab *vtab, sqlite3_vtab_cursor **curp);
int	hwtr_cv_close(sqlite3_vtab_cursor *cur);
void	hwtr_cv_pin(struct cv_cursor *c, struct cv_page *pg);
/* The table's message ("%s" the table's name, then @what); SQLITE_ERROR. */
int	hwtr_cv_err(struct cv_cursor *c, const char *fmt, const char *what);
int	hwtr_cv_dberr(struct cv_cursor *c);
int	hwtr_cv_prep(struct cv_cursor *c, sqlite3_stmt **stp, const char *sql);
int	hwtr_cv_load(struct cv_cursor *c, sqlite3_stmt *st,
	    struct cv_page **pgp);
/* Drop the table's pages if stale; the data version they are valid for. */
unsigned int hwtr_cv_fresh(struct cv_vtab *vt);
int	hwtr_cv_find(struct cv_cursor *c, int64_t id, struct cv_page **pgp);
int64_t	hwtr_cv_index(const struct cv_page *pg, int64_t id);

/* calls_vtab_write.c: xUpdate and the transaction hooks. */
int	hwtr_cv_update(sqlite3_vtab *vtab, int argc, sqlite3_value **argv,
	    sqlite3_int64 *rowidp);
int	hwtr_cv_begin(sqlite3_vtab *vtab);
int	hwtr_cv_sync(sqlite3_vtab *vtab);
int	hwtr_cv_rollback(sqlite3_vtab *vtab);
int	hwtr_cv_savepoint(sqlite3_vtab *vtab, int n);
int	hwtr_cv_release(sqlite3_vtab *vtab, int n);
int	hwtr_cv_rollback_to(sqlite3_vtab *vtab, int n);
/*
 * The deletes not written yet: set up (a new table), written (before a
 * read: SQLITE_OK or the error), freed with their statements.
 */
void	hwtr_cv_winit(struct cv_vtab *vt);
int	hwtr_cv_wflush(struct cv_vtab *vt);
void	hwtr_cv_wfree(struct cv_vtab *vt);

#endif
