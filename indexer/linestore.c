/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The lines store (linestore.h): the page codec the indexer writes with,
 * and the read-only virtual table "lines" over line_pages.
 *
 * A page: a byte saying how its rows are kept (LS_RAW, LS_ZSTD), the row
 * count and the rows' length as varints, then the rows, one after
 * another: the address as a zigzag delta from the row before's end (the
 * first row's from the page's lo, its key), end_addr - addr, file and
 * line as zigzag deltas from the row before's, col zigzag, is_stmt.
 * Rows run on where the code has lines, so most deltas are 0 or small.
 *
 * A cursor reads only the pages its constraints need:
 *   image = ? [addr range]     the pages of that image from the one that
 *                              holds the range's start (a seek by
 *                              (image, lo)), ascending, or down from the
 *                              range's end (ORDER BY addr DESC: "the row
 *                              at or before this address" reads one page);
 *   otherwise                  every page, skipping those outside an
 *                              address range without decoding them.
 * Rows come in (image, addr) order, so the planner skips its sort.  The
 * table keeps the last pages its cursors decoded (struct ls_vtab): the
 * lookups of a correlated subquery (one per block or function) mostly
 * land on one of them and run no SQL.
 */

#ifdef HWTR_SQLITE_EXTENSION
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3
#else
#include <sqlite3.h>
#endif

#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hwtr_zbuf.h"
#include "linestore.h"
#include "varint.h"

#define LS_RAW		0
#define LS_ZSTD		1
#define LS_ZLEVEL	1
/* The fields of a row: at least a byte each, at most ten. */
#define LS_FIELDS	6

int
hwtr_ls_encode(const struct hwtr_ls_row *rows, size_t n, uint8_t **outp,
    size_t *lenp)
{
	uint8_t *raw, *out, *p;
	uint64_t prev_end, prev_file = 0, prev_line = 0;
	size_t i, rawlen, hdr, zlen;

	*outp = NULL;
	if (n == 0 || n > HWTR_LS_PAGE)
		return (-1);
	if ((raw = malloc(n * LS_FIELDS * 10)) == NULL)
		return (-1);
	p = raw;
	prev_end = (uint64_t)rows[0].addr;
	for (i = 0; i < n; i++) {
		const struct hwtr_ls_row *r = &rows[i];

		p = ix_varint_put(p, ix_zz((uint64_t)r->addr - prev_end));
		p = ix_varint_put(p, (uint64_t)r->end - (uint64_t)r->addr);
		p = ix_varint_put(p, ix_zz((uint64_t)r->file - prev_file));
		p = ix_varint_put(p, ix_zz((uint64_t)r->line - prev_line));
		p = ix_varint_put(p, ix_zz((uint64_t)r->col));
		p = ix_varint_put(p, (uint64_t)r->is_stmt);
		prev_end = (uint64_t)r->end;
		prev_file = (uint64_t)r->file;
		prev_line = (uint64_t)r->line;
	}
	rawlen = (size_t)(p - raw);
	if ((out = malloc(1 + 20 + hwtr_zbuf_bound(rawlen))) == NULL) {
		free(raw);
		return (-1);
	}
	p = ix_varint_put(out + 1, n);
	p = ix_varint_put(p, rawlen);
	hdr = (size_t)(p - out);
	zlen = hwtr_zbuf_compress(p, hwtr_zbuf_bound(rawlen), raw, rawlen,
	    LS_ZLEVEL);
	if (zlen > 0 && zlen < rawlen) {
		out[0] = LS_ZSTD;
		*lenp = hdr + zlen;
	} else {
		out[0] = LS_RAW;
		memcpy(p, raw, rawlen);
		*lenp = hdr + rawlen;
	}
	free(raw);
	*outp = out;
	return (0);
}

int
hwtr_ls_decode(const uint8_t *blob, size_t len, int64_t n, int64_t lo,
    struct hwtr_ls_row *rows, const char **whyp)
{
	const uint8_t *p, *end, *q, *qend;
	uint8_t *raw = NULL;
	uint64_t nrows, rawlen, v[LS_FIELDS], prev_end, prev_file = 0;
	uint64_t prev_line = 0;
	int64_t i;
	int k;

	*whyp = "row count out of range";
	if (n < 1 || n > HWTR_LS_PAGE)
		return (-1);
	*whyp = "page header cut";
	if (blob == NULL || len < 3)
		return (-1);
	end = blob + len;
	p = blob + 1;
	if (ix_varint_get(&p, end, &nrows) < 0 || ix_varint_get(&p, end, &rawlen) < 0)
		return (-1);
	*whyp = "row count differs from its table row";
	if (nrows != (uint64_t)n)
		return (-1);
	*whyp = "impossible rows length";
	if (rawlen < (uint64_t)n * LS_FIELDS ||
	    rawlen > (uint64_t)n * LS_FIELDS * 10)
		return (-1);
	if (blob[0] == LS_ZSTD) {
		*whyp = "out of memory";
		if ((raw = malloc((size_t)rawlen)) == NULL)
			return (-1);
		*whyp = "compressed rows do not decompress";
		if (hwtr_zbuf_decompress(raw, (size_t)rawlen, p,
		    (size_t)(end - p)) < 0)
			goto bad;
		q = raw;
		qend = raw + rawlen;
	} else if (blob[0] == LS_RAW) {
		*whyp = "rows length differs from the blob";
		if ((uint64_t)(end - p) != rawlen)
			return (-1);
		q = p;
		qend = end;
	} else {
		*whyp = "unknown page format";
		return (-1);
	}
	*whyp = "rows cut";
	prev_end = (uint64_t)lo;
	for (i = 0; i < n; i++) {
		for (k = 0; k < LS_FIELDS; k++)
			if (ix_varint_get(&q, qend, &v[k]) < 0)
				goto bad;
		rows[i].addr = (int64_t)(prev_end + ix_unzz(v[0]));
		rows[i].end = (int64_t)((uint64_t)rows[i].addr + v[1]);
		rows[i].file = (int64_t)(prev_file + ix_unzz(v[2]));
		rows[i].line = (int64_t)(prev_line + ix_unzz(v[3]));
		rows[i].col = (int64_t)ix_unzz(v[4]);
		rows[i].is_stmt = (int64_t)v[5];
		prev_end = (uint64_t)rows[i].end;
		prev_file = (uint64_t)rows[i].file;
		prev_line = (uint64_t)rows[i].line;
	}
	*whyp = "bytes after the last row";
	if (q != qend)
		goto bad;
	free(raw);
	return (0);
bad:
	free(raw);
	return (-1);
}

/* The virtual table. */

enum { LC_IMAGE, LC_ADDR, LC_FILE, LC_LINE, LC_COL, LC_IS_STMT, LC_END };

/* idxNum bits: which constraints xFilter gets (in this order) and how. */
#define LS_IMG		0x01	/* image = ? */
#define LS_EQ		0x02	/* addr = ? */
#define LS_LO		0x04	/* addr >= ? (with LS_LO_GT: >) */
#define LS_HI		0x08	/* addr <= ? (with LS_HI_LT: <) */
#define LS_LO_GT	0x10
#define LS_HI_LT	0x20
#define LS_DESC		0x40	/* rows by addr descending (with LS_IMG) */

/* The statements a cursor reads line_pages with. */
enum { LSQ_AT, LSQ_ASC, LSQ_DESC, LSQ_ALL, LSQ_N };

static const char *const ls_sql[LSQ_N] = {
	/* The page that holds ?2, or the last before it. */
	"SELECT lo, last, n, data FROM \"%w\".line_pages WHERE image = ?1 "
	    "AND lo <= ?2 ORDER BY lo DESC LIMIT 1",
	/* The pages after ?2, up to ?3. */
	"SELECT lo, last, n, data FROM \"%w\".line_pages WHERE image = ?1 "
	    "AND lo > ?2 AND lo <= ?3 ORDER BY lo",
	/* The pages before ?2. */
	"SELECT lo, last, n, data FROM \"%w\".line_pages WHERE image = ?1 "
	    "AND lo < ?2 ORDER BY lo DESC",
	"SELECT image, lo, last, n, data FROM \"%w\".line_pages ORDER BY "
	    "image, lo",
};

#define LS_NCACHE	8	/* decoded pages a table keeps */

struct ls_page {
	int		valid;
	int		pins;		/* cursors reading it */
	int64_t		img, lo, last, n;
	unsigned long	used;
	struct hwtr_ls_row rows[HWTR_LS_PAGE];
};

/*
 * The table.  SQLite opens a cursor for each run of a statement (a
 * function's lines, the line of a block): the statements cursors
 * prepared wait in @idle for the next one, and the pages they decoded
 * stay in @cache, so that such runs neither prepare nor decode again,
 * and a run whose address lies in a page held runs no SQL at all.  A
 * change of the database (line_pages is not to be written, but SQL can,
 * on this connection or another) empties it (ls_stale()).
 */
struct ls_vtab {
	sqlite3_vtab	base;
	sqlite3		*db;
	char		*schema;	/* the database holding line_pages */
	sqlite3_stmt	*idle[LSQ_N];
	struct ls_page	cache[LS_NCACHE];
	unsigned long	tick;
	sqlite3_int64	changes;	/* the connection's, when filled */
	unsigned int	dver;		/* the database's, then (ls_stale()) */
};

struct ls_cur {
	sqlite3_vtab_cursor base;
	struct ls_vtab	*vt;
	sqlite3_stmt	*stmt[LSQ_N];
	sqlite3_stmt	*st;		/* the pages to come, or NULL */
	int		has_img, back, eof, more;
	int64_t		img, lo, hi;	/* the bounds, inclusive */
	int64_t		i;		/* the row the cursor is at */
	struct ls_page	*pg;		/* its page: pinned, or @own */
	struct ls_page	*own;		/* when every cached one is pinned */
};

static int
ls_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
    sqlite3_vtab **vtp, char **errp)
{
	struct ls_vtab *vt;
	int rc;

	(void)aux;
	if (argc < 3)
		return (SQLITE_ERROR);
	rc = sqlite3_declare_vtab(db, "CREATE TABLE x(image INTEGER, "
	    "addr INTEGER, file INTEGER, line INTEGER, col INTEGER, "
	    "is_stmt INTEGER, end_addr INTEGER, PRIMARY KEY (image, addr)) "
	    "WITHOUT ROWID");
	if (rc != SQLITE_OK)
		return (rc);
	if ((vt = sqlite3_malloc(sizeof(*vt))) == NULL)
		return (SQLITE_NOMEM);
	memset(vt, 0, sizeof(*vt));
	vt->db = db;
	if ((vt->schema = sqlite3_mprintf("%s", argv[1])) == NULL) {
		sqlite3_free(vt);
		return (SQLITE_NOMEM);
	}
	*vtp = &vt->base;
	(void)errp;
	return (SQLITE_OK);
}

static int
ls_disconnect(sqlite3_vtab *base)
{
	struct ls_vtab *vt = (struct ls_vtab *)base;
	int k;

	for (k = 0; k < LSQ_N; k++)
		sqlite3_finalize(vt->idle[k]);
	sqlite3_free(vt->schema);
	sqlite3_free(vt);
	return (SQLITE_OK);
}

static int
ls_best(sqlite3_vtab *base, sqlite3_index_info *ii)
{
	int img = -1, eq = -1, lo = -1, hi = -1, i, n = 0, bits = 0;
	int in_img = 0;

	(void)base;
	for (i = 0; i < ii->nConstraint; i++) {
		const struct sqlite3_index_constraint *c = &ii->aConstraint[i];

		if (!c->usable)
			continue;
		if (c->iColumn == LC_IMAGE && c->op == SQLITE_INDEX_CONSTRAINT_EQ &&
		    img < 0)
			img = i;
		else if (c->iColumn == LC_ADDR) {
			if (c->op == SQLITE_INDEX_CONSTRAINT_EQ && eq < 0)
				eq = i;
			else if ((c->op == SQLITE_INDEX_CONSTRAINT_GT ||
			    c->op == SQLITE_INDEX_CONSTRAINT_GE) && lo < 0)
				lo = i;
			else if ((c->op == SQLITE_INDEX_CONSTRAINT_LT ||
			    c->op == SQLITE_INDEX_CONSTRAINT_LE) && hi < 0)
				hi = i;
		}
	}
	/*
	 * SQLite checks every constraint again (omit stays 0): a bound the
	 * cursor cannot use (not an integer) only widens what it reads.
	 */
	if (img >= 0) {
		bits |= LS_IMG;
		ii->aConstraintUsage[img].argvIndex = ++n;
		in_img = sqlite3_vtab_in(ii, img, -1);
	}
	if (eq >= 0) {
		bits |= LS_EQ;
		ii->aConstraintUsage[eq].argvIndex = ++n;
	} else {
		if (lo >= 0) {
			bits |= LS_LO;
			if (ii->aConstraint[lo].op == SQLITE_INDEX_CONSTRAINT_GT)
				bits |= LS_LO_GT;
			ii->aConstraintUsage[lo].argvIndex = ++n;
		}
		if (hi >= 0) {
			bits |= LS_HI;
			if (ii->aConstraint[hi].op == SQLITE_INDEX_CONSTRAINT_LT)
				bits |= LS_HI_LT;
			ii->aConstraintUsage[hi].argvIndex = ++n;
		}
	}
	/*
	 * Rows come by (image, addr) ascending; with image = ? (not IN,
	 * which the planner feeds one value at a time), by addr either way.
	 */
	if (ii->nOrderBy == 1 && ii->aOrderBy[0].iColumn == LC_IMAGE &&
	    !ii->aOrderBy[0].desc)
		ii->orderByConsumed = 1;
	else if (ii->nOrderBy >= 1 && ii->nOrderBy <= 2 &&
	    ii->aOrderBy[ii->nOrderBy - 1].iColumn == LC_ADDR &&
	    (ii->nOrderBy == 1 || ii->aOrderBy[0].iColumn == LC_IMAGE)) {
		int d = ii->aOrderBy[ii->nOrderBy - 1].desc;

		if ((bits & LS_IMG) && !in_img) {
			ii->orderByConsumed = 1;
			if (d)
				bits |= LS_DESC;
		} else if (!d && (ii->nOrderBy == 2 ?
		    !ii->aOrderBy[0].desc : 0))
			ii->orderByConsumed = 1;
	}
	ii->idxNum = bits;
	if ((bits & LS_IMG) && (bits & LS_EQ)) {
		ii->estimatedCost = 5;
		ii->estimatedRows = 1;
		ii->idxFlags = SQLITE_INDEX_SCAN_UNIQUE;
	} else if ((bits & LS_IMG) && (bits & (LS_LO | LS_HI))) {
		ii->estimatedCost = 50;
		ii->estimatedRows = 25;
	} else if (bits & LS_IMG) {
		ii->estimatedCost = 5000;
		ii->estimatedRows = 20000;
	} else {
		ii->estimatedCost = 1e6;
		ii->estimatedRows = 200000;
	}
	return (SQLITE_OK);
}

/* Statement @k of cursor @c, ready to be bound. */
static int
ls_prep(struct ls_cur *c, int k)
{
	char *sql;
	int rc;

	if (c->stmt[k] != NULL)
		return (sqlite3_reset(c->stmt[k]) == SQLITE_OK ? SQLITE_OK :
		    SQLITE_ERROR);
	if (c->vt->idle[k] != NULL) {
		c->stmt[k] = c->vt->idle[k];
		c->vt->idle[k] = NULL;
		return (SQLITE_OK);
	}
	if ((sql = sqlite3_mprintf(ls_sql[k], c->vt->schema)) == NULL)
		return (SQLITE_NOMEM);
	rc = sqlite3_prepare_v2(c->vt->db, sql, -1, &c->stmt[k], NULL);
	sqlite3_free(sql);
	return (rc);
}

static int
ls_open(sqlite3_vtab *base, sqlite3_vtab_cursor **cp)
{
	struct ls_cur *c;

	if ((c = sqlite3_malloc(sizeof(*c))) == NULL)
		return (SQLITE_NOMEM);
	memset(c, 0, sizeof(*c));
	c->vt = (struct ls_vtab *)base;
	c->eof = 1;
	*cp = &c->base;
	return (SQLITE_OK);
}

/* The cursor lets go of its page. */
static void
ls_unpin(struct ls_cur *c)
{
	if (c->pg != NULL && c->pg != c->own) {
		assert(c->pg->pins > 0);
		c->pg->pins--;
	}
	c->pg = NULL;
}

static int
ls_close(sqlite3_vtab_cursor *cp)
{
	struct ls_cur *c = (struct ls_cur *)cp;
	int k;

	ls_unpin(c);
	for (k = 0; k < LSQ_N; k++) {
		if (c->stmt[k] == NULL)
			continue;
		sqlite3_reset(c->stmt[k]);
		sqlite3_clear_bindings(c->stmt[k]);
		if (c->vt->idle[k] == NULL)
			c->vt->idle[k] = c->stmt[k];
		else
			sqlite3_finalize(c->stmt[k]);
	}
	sqlite3_free(c->own);
	sqlite3_free(c);
	return (SQLITE_OK);
}

static int
ls_fail(struct ls_cur *c, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sqlite3_free(c->vt->base.zErrMsg);
	c->vt->base.zErrMsg = sqlite3_vmprintf(fmt, ap);
	va_end(ap);
	return (rc);
}

/* A page of image @img held by the table whose rows span @a; or NULL. */
static struct ls_page *
ls_cached(struct ls_vtab *vt, int64_t img, int64_t a)
{
	struct ls_page *e;
	int k;

	for (k = 0; k < LS_NCACHE; k++) {
		e = &vt->cache[k];
		if (e->valid && e->img == img && e->lo <= a && a <= e->last)
			return (e);
	}
	return (NULL);
}

/* The cursor reads page @e of the table's cache. */
static void
ls_use(struct ls_cur *c, struct ls_page *e)
{
	if (c->pg == e)
		return;
	ls_unpin(c);
	e->pins++;
	e->used = ++c->vt->tick;
	c->pg = e;
}

/*
 * The page of the row @st is at (its columns from @col on: lo, last, n,
 * data; image @img) for the cursor: the table's copy, or decoded into an
 * unpinned slot of its cache (the least recently used), or into the
 * cursor's own page when every slot is pinned.
 */
static int
ls_load(struct ls_cur *c, sqlite3_stmt *st, int col, int64_t img)
{
	struct ls_vtab *vt = c->vt;
	struct ls_page *e, *slot = NULL;
	int64_t lo = sqlite3_column_int64(st, col);
	int64_t last = sqlite3_column_int64(st, col + 1);
	int64_t n = sqlite3_column_int64(st, col + 2);
	const char *why;
	int k;

	for (k = 0; k < LS_NCACHE; k++) {
		e = &vt->cache[k];
		if (e->valid && e->img == img && e->lo == lo && e->n == n &&
		    e->last == last) {
			ls_use(c, e);
			return (SQLITE_OK);
		}
		if (e->pins == 0 && (slot == NULL || !e->valid ||
		    (slot->valid && e->used < slot->used)))
			slot = e;
	}
	ls_unpin(c);
	if (slot == NULL) {
		if (c->own == NULL &&
		    (c->own = sqlite3_malloc(sizeof(*c->own))) == NULL)
			return (SQLITE_NOMEM);
		slot = c->own;
	}
	slot->valid = 0;
	if (hwtr_ls_decode(sqlite3_column_blob(st, col + 3),
	    (size_t)sqlite3_column_bytes(st, col + 3), n, lo, slot->rows,
	    &why) < 0)
		return (ls_fail(c, SQLITE_CORRUPT, "lines: the line_pages row "
		    "of image %lld at %#llx: %s", (long long)img,
		    (unsigned long long)lo, why));
	slot->img = img;
	slot->lo = lo;
	slot->last = last;
	slot->n = n;
	slot->valid = 1;
	if (slot == c->own) {
		c->pg = slot;
		return (SQLITE_OK);
	}
	ls_use(c, slot);
	return (SQLITE_OK);
}

/*
 * The next page in the cursor's direction: SQLITE_ROW, SQLITE_DONE or an
 * error.  The statement of the pages to come is run when first needed:
 * a lookup that its first page answers runs none.
 */
static int
ls_next_page(struct ls_cur *c)
{
	int64_t img;
	int rc, all;

	if (!c->more)
		return (SQLITE_DONE);
	if (c->st == NULL) {
		int k = c->back ? LSQ_DESC : LSQ_ASC;

		if ((rc = ls_prep(c, k)) != SQLITE_OK)
			return (rc);
		c->st = c->stmt[k];
		sqlite3_bind_int64(c->st, 1, c->img);
		sqlite3_bind_int64(c->st, 2, c->pg != NULL ? c->pg->lo :
		    INT64_MIN);
		if (!c->back)
			sqlite3_bind_int64(c->st, 3, c->hi);
	}
	all = c->st == c->stmt[LSQ_ALL];
	for (;;) {
		if ((rc = sqlite3_step(c->st)) != SQLITE_ROW) {
			c->more = 0;
			return (rc == SQLITE_DONE ? rc : ls_fail(c, rc,
			    "lines: cannot read line_pages: %s",
			    sqlite3_errmsg(c->vt->db)));
		}
		img = all ? sqlite3_column_int64(c->st, 0) : c->img;
		/* Pages wholly outside the range are not decoded. */
		if (all && (sqlite3_column_int64(c->st, 2) < c->lo ||
		    sqlite3_column_int64(c->st, 1) > c->hi))
			continue;
		break;
	}
	rc = ls_load(c, c->st, all, img);
	return (rc == SQLITE_OK ? SQLITE_ROW : rc);
}

/*
 * Settle on a row inside the bounds, from c->i on in the cursor's
 * direction, reading pages as needed; c->eof when there is none.
 */
static int
ls_settle(struct ls_cur *c)
{
	int rc;

	for (;;) {
		if (c->pg != NULL && c->i >= 0 && c->i < c->pg->n) {
			int64_t a = c->pg->rows[c->i].addr;

			if (a >= c->lo && a <= c->hi)
				return (SQLITE_OK);
			/* Past the range: done, or the next image's pages. */
			if (c->has_img && (c->back ? a < c->lo : a > c->hi))
				break;
			c->i += c->back ? -1 : 1;
			continue;
		}
		if ((rc = ls_next_page(c)) == SQLITE_DONE)
			break;
		if (rc != SQLITE_ROW)
			return (rc);
		c->i = c->back ? c->pg->n - 1 : 0;
	}
	c->eof = 1;
	return (SQLITE_OK);
}

/*
 * The first page of an image's rows from @a on (back: down from @a): the
 * one that holds @a, from the table's cache when it is there, else the
 * one line_pages has at or before @a.  SQLITE_ROW with c->pg set and
 * c->i at the first row to look at, SQLITE_DONE when the scan starts
 * with the next page (none at or before @a), or an error.
 */
static int
ls_first_page(struct ls_cur *c, int64_t a)
{
	struct ls_page *e;
	sqlite3_stmt *st;
	int64_t l, h;
	int rc;

	if ((e = ls_cached(c->vt, c->img, a)) != NULL)
		ls_use(c, e);
	else {
		if ((rc = ls_prep(c, LSQ_AT)) != SQLITE_OK)
			return (rc);
		st = c->stmt[LSQ_AT];
		sqlite3_bind_int64(st, 1, c->img);
		sqlite3_bind_int64(st, 2, a);
		if ((rc = sqlite3_step(st)) == SQLITE_DONE)
			return (rc);
		if (rc != SQLITE_ROW)
			return (ls_fail(c, rc, "lines: cannot read line_pages: "
			    "%s", sqlite3_errmsg(c->vt->db)));
		rc = ls_load(c, st, 0, c->img);
		sqlite3_reset(st);
		if (rc != SQLITE_OK)
			return (rc);
	}
	/* The first row at or past a; back: the last at or below it. */
	l = 0;
	h = c->pg->n;
	while (l < h) {
		int64_t m = l + (h - l) / 2;

		if (c->back ? c->pg->rows[m].addr <= a :
		    c->pg->rows[m].addr < a)
			l = m + 1;
		else
			h = m;
	}
	c->i = c->back ? l - 1 : l;
	return (SQLITE_ROW);
}

/* @v as an integer in *@ip: 1, or 0 when it is none (NULL, text, 1.5). */
static int
ls_int(sqlite3_value *v, int64_t *ip)
{
	double d;

	switch (sqlite3_value_numeric_type(v)) {
	case SQLITE_INTEGER:
		*ip = sqlite3_value_int64(v);
		return (1);
	case SQLITE_FLOAT:
		d = sqlite3_value_double(v);
		if (d >= -9223372036854775808.0 && d < 9223372036854775808.0 &&
		    d == floor(d)) {
			*ip = (int64_t)d;
			return (1);
		}
		return (0);
	default:
		return (0);
	}
}

/*
 * Has the database changed since the table's pages were decoded?  Writes
 * of this connection count at once (a transaction not yet committed
 * included), another connection's once committed: SQLite's data version
 * of the schema holding line_pages says so at the start of each
 * transaction, which a statement reading lines opens (it checks the
 * schema) before the table sees it.  The two counters are kept as seen.
 */
static int
ls_stale(struct ls_vtab *vt)
{
	sqlite3_int64 ch = sqlite3_total_changes64(vt->db);
	unsigned int dv = 0;
	int stale;

	if (sqlite3_file_control(vt->db, vt->schema, SQLITE_FCNTL_DATA_VERSION,
	    &dv) != SQLITE_OK)
		dv = vt->dver + 1;	/* unknown: trust nothing held */
	stale = ch != vt->changes || dv != vt->dver;
	vt->changes = ch;
	vt->dver = dv;
	return (stale);
}

static int
ls_filter(sqlite3_vtab_cursor *cp, int bits, const char *idxs, int argc,
    sqlite3_value **argv)
{
	struct ls_cur *c = (struct ls_cur *)cp;
	int64_t v;
	int a = 0, rc;

	(void)idxs;
	(void)argc;
	if (ls_stale(c->vt)) {
		struct ls_vtab *vt = c->vt;
		int k;

		ls_unpin(c);
		for (k = 0; k < LS_NCACHE; k++)
			if (vt->cache[k].pins == 0)
				vt->cache[k].valid = 0;
	}
	if (c->st != NULL)
		sqlite3_reset(c->st);
	c->st = NULL;
	c->eof = 0;
	c->more = 1;
	c->has_img = 0;
	c->back = 0;
	c->lo = INT64_MIN;
	c->hi = INT64_MAX;
	c->i = 0;
	if (bits & LS_IMG) {
		/* No integer equals what is not one: no rows. */
		if (!ls_int(argv[a++], &c->img)) {
			c->eof = 1;
			return (SQLITE_OK);
		}
		c->has_img = 1;
		c->back = (bits & LS_DESC) != 0;
	}
	if ((bits & LS_EQ) && ls_int(argv[a++], &v))
		c->lo = c->hi = v;
	if ((bits & LS_LO) && ls_int(argv[a++], &v)) {
		if ((bits & LS_LO_GT) && v == INT64_MAX)
			c->eof = 1;
		c->lo = (bits & LS_LO_GT) && v != INT64_MAX ? v + 1 : v;
	}
	if ((bits & LS_HI) && ls_int(argv[a++], &v)) {
		if ((bits & LS_HI_LT) && v == INT64_MIN)
			c->eof = 1;
		c->hi = (bits & LS_HI_LT) && v != INT64_MIN ? v - 1 : v;
	}
	if (c->eof || c->lo > c->hi) {
		c->eof = 1;
		return (SQLITE_OK);
	}
	if (!c->has_img) {
		ls_unpin(c);
		if ((rc = ls_prep(c, LSQ_ALL)) != SQLITE_OK)
			return (rc);
		c->st = c->stmt[LSQ_ALL];
		c->i = -1;
		return (ls_settle(c));
	}
	rc = ls_first_page(c, c->back ? c->hi : c->lo);
	if (rc == SQLITE_DONE) {
		/* Nothing at or before the start: back, no rows; else on. */
		ls_unpin(c);
		if (c->back) {
			c->eof = 1;
			return (SQLITE_OK);
		}
		c->i = -1;
	} else if (rc != SQLITE_ROW)
		return (rc);
	return (ls_settle(c));
}

static int
ls_next(sqlite3_vtab_cursor *cp)
{
	struct ls_cur *c = (struct ls_cur *)cp;

	c->i += c->back ? -1 : 1;
	return (ls_settle(c));
}

static int
ls_eof(sqlite3_vtab_cursor *cp)
{
	return (((struct ls_cur *)cp)->eof);
}

static int
ls_column(sqlite3_vtab_cursor *cp, sqlite3_context *ctx, int col)
{
	const struct ls_cur *c = (const struct ls_cur *)cp;
	const struct hwtr_ls_row *r = &c->pg->rows[c->i];
	int64_t v;

	assert(c->pg != NULL && c->i >= 0 && c->i < c->pg->n);
	switch (col) {
	case LC_IMAGE:
		v = c->pg->img;
		break;
	case LC_ADDR:
		v = r->addr;
		break;
	case LC_FILE:
		v = r->file;
		break;
	case LC_LINE:
		v = r->line;
		break;
	case LC_COL:
		v = r->col;
		break;
	case LC_IS_STMT:
		v = r->is_stmt;
		break;
	default:
		v = r->end;
		break;
	}
	sqlite3_result_int64(ctx, v);
	return (SQLITE_OK);
}

static int
ls_rowid(sqlite3_vtab_cursor *cp, sqlite3_int64 *rowid)
{
	const struct ls_cur *c = (const struct ls_cur *)cp;

	*rowid = c->pg->rows[c->i].addr;
	return (SQLITE_OK);
}

static const sqlite3_module ls_module = {
	.iVersion = 0,
	.xCreate = ls_connect,
	.xConnect = ls_connect,
	.xBestIndex = ls_best,
	.xDisconnect = ls_disconnect,
	.xDestroy = ls_disconnect,
	.xOpen = ls_open,
	.xClose = ls_close,
	.xFilter = ls_filter,
	.xNext = ls_next,
	.xEof = ls_eof,
	.xColumn = ls_column,
	.xRowid = ls_rowid,
};

int
hwtr_lines_vtab_register(struct sqlite3 *db)
{
	return (sqlite3_create_module(db, "hwtr_lines", &ls_module, NULL));
}
