/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The symbol copy of the calls column store (colstore.h, hwtrace-db(5)
 * CALLS STORAGE): every call that has a symbol once more, in calls_bysym,
 * in pages of up to HWTR_CS_PAGE calls of one symbol and one thread, with
 * the symbol and func_ip of its caller.  "symbol = ?" (func) then reads
 * the pages of that function only, instead of a page of all calls per
 * call, and needs no lookup of each call's parent for its caller.
 *
 * Made as the rows come when the writer knows the calls still open
 * (hwtr_cs_sym_stream_*(), at the end of this file), else once the pages
 * are written (hwtr_cs_sym_build()), the same either way: calls are taken
 * in id order (entry order per thread), so that a call's parent is met
 * before it; callers come
 * from a stack of the last call met at each depth, or else from the
 * parent's page.  Calls wait in a buffer per symbol until a page is full;
 * when more than SY_BUFFERED wait, the fullest buffers are written as
 * they are, so that memory stays bounded whatever the number of symbols.
 */

#include <assert.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colstore.h"
#include "hwtr_common.h"
#include "ix_jobs.h"

/*
 * The steps each call goes through as it comes (sy_buf_of() to
 * ss_take()) are inlined into the callers: as functions, their entries
 * and exits were a fifth of the symbol copy's cost a call.
 */
#if defined(__GNUC__)
#define SY_HOT	inline __attribute__((always_inline))
#else
#define SY_HOT	inline
#endif

#define SY_BUFFERED	(64 * 1024)	/* calls waiting, at most */
/*
 * A symbol that filled a page gets its next page's rows at once (no
 * growth by doubling, which copied about a row a call), from a pool of
 * the pages written: at most SY_BIG such buffers, SY_POOL pages kept.
 */
#define SY_BIG		64
#define SY_POOL		SY_WR

struct sy_buf {
	int64_t		symbol;
	int		used;
	int		hot;		/* it filled a page */
	size_t		n, cap;
	size_t		holes;		/* rows of calls still open */
	struct hwtr_cs_row *rows;
};

/* A page written with calls still open (streaming): it waits for them. */
struct sy_wait {
	int64_t		symbol;
	size_t		n, holes;
	struct hwtr_cs_row *rows;	/* owned */
};

struct sy_frame {
	int64_t		id, symbol, func_ip;
	int		has_sym;
};

/*
 * With the indexer's jobs (ix_jobs.h), pages are decoded SY_AHEAD ahead
 * of the scan and the symbol pages encoded while it goes on, written in
 * the order they were made (SY_WR later): the file is the same.  A symbol
 * page's rows go back to the pool once its job ran.
 */
#define SY_AHEAD	8
#define SY_WR		IX_JOBS_LAG

struct sy_rd {				/* a page of calls being decoded */
	struct ix_job	job;
	uint8_t		*blob;
	size_t		len, cap;
	int64_t		id0, thread, n, seq0;
	struct hwtr_cs_row *rows;
	const char	*why;
	int		rc;
};

struct sy_wr {				/* a symbol page being encoded */
	struct ix_job	job;
	int64_t		symbol;
	int64_t		id0, thread;	/* its first row's */
	struct hwtr_cs_row *rows;	/* owned; NULL once the job ran */
	size_t		n;
	uint8_t		*blob;
	size_t		len;
	int		rc;
};

struct sy {
	sqlite3		*db;
	struct ix_jobq	*jq;
	struct sy_wr	wr[SY_WR];	/* a ring */
	size_t		wr_head, wr_n;
	sqlite3_stmt	*put, *find;
	struct sy_buf	*tab;		/* by symbol, open addressing */
	size_t		ntab, nused, buffered;
	struct sy_frame	*stk;		/* by depth: the last call met */
	size_t		nstk;
	struct hwtr_cs_row *prow;	/* a parent's page */
	int64_t		pid0, pn;
	char		*err;
	size_t		errlen;
	int		stream;		/* rows as they come: no pages to read */
	int		broken;		/* the stream cannot go on */
	struct sy_wait	*wait;
	size_t		nwait, cwait, nwaiting;
	size_t		nbig;		/* buffers of HWTR_CS_PAGE rows */
	struct hwtr_cs_row *pool[SY_POOL];	/* rows of pages written */
	size_t		npool;
};

static int
sy_fail(struct sy *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int
sy_fail(struct sy *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->err, s->errlen, fmt, ap);
	va_end(ap);
	return (-1);
}

static int
sy_dbfail(struct sy *s, const char *what)
{
	return (sy_fail(s, "calls: %s: %s", what, sqlite3_errmsg(s->db)));
}

static size_t
sy_hash(int64_t symbol, size_t ntab)
{
	return ((size_t)(((uint64_t)symbol * 0x9e3779b97f4a7c15ULL) >> 17) &
	    (ntab - 1));
}

/* The table of buffers twice as large (or made): 0, or -1. */
static int
sy_tab_grow(struct sy *s)
{
	size_t n = s->ntab ? 2 * s->ntab : 1024, i, j;
	struct sy_buf *t = calloc(n, sizeof(*t));

	if (t == NULL)
		return (-1);
	for (j = 0; j < s->ntab; j++) {
		if (!s->tab[j].used)
			continue;
		for (i = sy_hash(s->tab[j].symbol, n); t[i].used;
		    i = (i + 1) & (n - 1))
			;
		t[i] = s->tab[j];
	}
	free(s->tab);
	s->tab = t;
	s->ntab = n;
	return (0);
}

/* The buffer of @symbol, made when new; NULL when memory ran out. */
static SY_HOT struct sy_buf *
sy_buf_of(struct sy *s, int64_t symbol)
{
	struct sy_buf *b;
	size_t i;

	if (2 * (s->nused + 1) > s->ntab && sy_tab_grow(s) < 0)
		return (NULL);
	for (i = sy_hash(symbol, s->ntab); s->tab[i].used;
	    i = (i + 1) & (s->ntab - 1))
		if (s->tab[i].symbol == symbol)
			return (&s->tab[i]);
	b = &s->tab[i];
	b->used = 1;
	b->symbol = symbol;
	s->nused++;
	return (b);
}

/* The rows of a page, from the pool when it has some. */
static struct hwtr_cs_row *
sy_page_rows(struct sy *s)
{
	if (s->npool > 0)
		return (s->pool[--s->npool]);
	return (malloc(HWTR_CS_PAGE * sizeof(struct hwtr_cs_row)));
}

/* The @n rows of a page written: a full page's back to the pool. */
static void
sy_recycle(struct sy *s, struct hwtr_cs_row *rows, size_t n)
{
	if (rows != NULL && n == HWTR_CS_PAGE && s->npool < SY_POOL)
		s->pool[s->npool++] = rows;
	else
		free(rows);
}

static void
sy_pool_free(struct sy *s)
{
	while (s->npool > 0)
		free(s->pool[--s->npool]);
}

/* The job of a symbol page: its blob. */
static void
sy_wr_job(struct ix_job *j)
{
	struct sy_wr *w = (struct sy_wr *)j;

	w->blob = NULL;
	w->rc = hwtr_cs_sym_encode(w->rows, w->n, &w->blob, &w->len);
}

/* The oldest symbol page being encoded: into calls_bysym. */
static int
sy_wr_complete(struct sy *s)
{
	struct sy_wr *w = &s->wr[s->wr_head];
	int rc = 0;

	/* The oldest of the ring's pages, each of one symbol and thread. */
	assert(s->wr_n > 0 && s->wr_n <= SY_WR && s->wr_head < SY_WR);
	assert(w->n > 0 && w->n <= HWTR_CS_PAGE);
	ix_jobq_wait(s->jq, &w->job);
	s->wr_head = (s->wr_head + 1) % SY_WR;
	s->wr_n--;
	if (w->rc < 0)
		rc = sy_fail(s, "calls: cannot encode the calls of symbol "
		    "%lld from id %lld", (long long)w->symbol,
		    (long long)w->id0);
	else {
		sqlite3_bind_int64(s->put, 1, w->symbol);
		sqlite3_bind_int64(s->put, 2, w->id0);
		sqlite3_bind_int64(s->put, 3, w->thread);
		sqlite3_bind_int64(s->put, 4, (sqlite3_int64)w->n);
		sqlite3_bind_blob(s->put, 5, w->blob, (int)w->len, free);
		w->blob = NULL;
		rc = sqlite3_step(s->put);
		sqlite3_reset(s->put);
		sqlite3_clear_bindings(s->put);
		rc = rc != SQLITE_DONE ? sy_dbfail(s, "cannot write the "
		    "symbol copy") : 0;
	}
	free(w->blob);
	w->blob = NULL;
	sy_recycle(s, w->rows, w->n);
	w->rows = NULL;
	return (rc);
}

/* The page of @n @rows (owned) of @symbol to encode (a job). */
static int
sy_submit(struct sy *s, int64_t symbol, struct hwtr_cs_row *rows, size_t n)
{
	struct sy_wr *w;
	int rc;

	if (s->wr_n == SY_WR && (rc = sy_wr_complete(s)) < 0) {
		free(rows);
		return (rc);
	}
	w = &s->wr[(s->wr_head + s->wr_n) % SY_WR];
	w->symbol = symbol;
	w->id0 = rows[0].v[CS_ID];
	w->thread = rows[0].v[CS_THREAD];
	w->rows = rows;
	w->n = n;
	w->job.fn = sy_wr_job;
	s->wr_n++;
	if (ix_jobq_submit(s->jq, &w->job)) {
		sy_recycle(s, w->rows, w->n);
		w->rows = NULL;
	}
	return (0);
}

/*
 * Write the calls waiting in @b as one page (a job), or, when some of
 * them are still open, leave it to wait for them; its memory goes.
 */
static int
sy_flush(struct sy *s, struct sy_buf *b)
{
	struct sy_wait *wt;
	int rc = 0;

	if (b->n == 0)
		return (0);
	/* A buffer is one page: of one thread, written when full. */
	assert(b->n <= HWTR_CS_PAGE && b->n <= s->buffered &&
	    b->rows[0].v[CS_THREAD] == b->rows[b->n - 1].v[CS_THREAD]);
	if (b->holes > 0) {
		if (hwtr_grow((void **)&s->wait, &s->cwait, s->nwait + 1,
		    sizeof(*s->wait)) < 0)
			return (sy_fail(s, "calls: out of memory"));
		wt = &s->wait[s->nwait++];
		wt->symbol = b->symbol;
		wt->rows = b->rows;
		wt->n = b->n;
		wt->holes = b->holes;
		s->nwaiting += b->n;
	} else
		rc = sy_submit(s, b->symbol, b->rows, b->n);
	s->buffered -= b->n;
	if (b->n == HWTR_CS_PAGE)
		b->hot = 1;
	if (b->cap == HWTR_CS_PAGE)
		s->nbig--;
	b->rows = NULL;
	b->n = b->cap = b->holes = 0;
	return (rc);
}

static int
sy_cmp_fullest(const void *a, const void *b)
{
	const struct sy_buf *x = *(struct sy_buf *const *)a;
	const struct sy_buf *y = *(struct sy_buf *const *)b;

	return (x->n > y->n ? -1 : x->n < y->n);
}

/* Too many calls wait: write the fullest buffers until half do. */
static int
sy_flush_fullest(struct sy *s)
{
	struct sy_buf **v;
	size_t i, n = 0;
	int rc = 0;

	if ((v = malloc(s->nused * sizeof(*v))) == NULL)
		return (sy_fail(s, "calls: out of memory"));
	for (i = 0; i < s->ntab; i++)
		if (s->tab[i].used && s->tab[i].n > 0)
			v[n++] = &s->tab[i];
	qsort(v, n, sizeof(*v), sy_cmp_fullest);
	for (i = 0; i < n && s->buffered > SY_BUFFERED / 2 && rc == 0; i++)
		rc = sy_flush(s, v[i]);
	free(v);
	return (rc);
}

/*
 * Room in the buffer of @r's symbol for @r (a call of @r's thread): the
 * buffer, or NULL (s->err says why).
 */
static SY_HOT struct sy_buf *
sy_room(struct sy *s, const struct hwtr_cs_row *r)
{
	struct sy_buf *b;
	struct hwtr_cs_row *p;
	size_t cap;

	if ((b = sy_buf_of(s, r->v[CS_SYMBOL])) == NULL) {
		sy_fail(s, "calls: out of memory");
		return (NULL);
	}
	if (b->n > 0 && b->rows[0].v[CS_THREAD] != r->v[CS_THREAD] &&
	    sy_flush(s, b) < 0)
		return (NULL);
	if (b->n == b->cap) {
		if (b->cap == 0 && b->hot && s->nbig < SY_BIG) {
			cap = HWTR_CS_PAGE;
			p = sy_page_rows(s);
		} else {
			cap = b->cap ? 2 * b->cap : 16;
			if (cap > HWTR_CS_PAGE)
				cap = HWTR_CS_PAGE;
			p = realloc(b->rows, cap * sizeof(*p));
		}
		if (p == NULL) {
			sy_fail(s, "calls: out of memory");
			return (NULL);
		}
		b->rows = p;
		b->cap = cap;
		if (cap == HWTR_CS_PAGE)
			s->nbig++;
	}
	/* Full buffers were written: room for this call, ids ascending. */
	assert(b->n < b->cap && b->cap <= HWTR_CS_PAGE);
	assert(b->n == 0 || b->rows[b->n - 1].v[CS_ID] < r->v[CS_ID]);
	return (b);
}

/*
 * The row put in @b's next slot is in; @hole: it stands for a call still
 * open.
 */
static SY_HOT int
sy_added(struct sy *s, struct sy_buf *b, int hole)
{
	int rc;

	b->n++;
	b->holes += hole != 0;
	s->buffered++;
	if (b->n == HWTR_CS_PAGE && (rc = sy_flush(s, b)) < 0)
		return (rc);
	if (s->buffered >= SY_BUFFERED)
		return (sy_flush_fullest(s));
	return (0);
}

/* @r into its symbol's buffer; @hole: it stands for a call still open. */
static int
sy_add(struct sy *s, const struct hwtr_cs_row *r, int hole)
{
	struct sy_buf *b;

	if ((b = sy_room(s, r)) == NULL)
		return (-1);
	b->rows[b->n] = *r;
	return (sy_added(s, b, hole));
}

static int
sy_below(const void *id, const void *rows, size_t i)
{
	return (((const struct hwtr_cs_row *)rows)[i].v[CS_ID] <
	    *(const int64_t *)id);
}

/* Row @id in @rows (@n, ascending ids), or NULL. */
static const struct hwtr_cs_row *
sy_search(const struct hwtr_cs_row *rows, int64_t n, int64_t id)
{
	int64_t lo;

	assert(n >= 0);
	lo = (int64_t)hwtr_bsearch(&id, rows, (size_t)n, sy_below);
	return (lo < n && rows[lo].v[CS_ID] == id ? &rows[lo] : NULL);
}

/* The row of call @id, from its page (read into s->prow), or NULL. */
static int
sy_lookup(struct sy *s, int64_t id, const struct hwtr_cs_row **rp)
{
	const char *why;
	int rc;

	*rp = NULL;
	if (s->pn > 0 && id >= s->pid0 && id < s->pid0 + HWTR_CS_PAGE) {
		*rp = sy_search(s->prow, s->pn, id);
		return (0);
	}
	sqlite3_bind_int64(s->find, 1, id);
	rc = sqlite3_step(s->find);
	if (rc == SQLITE_ROW) {
		s->pid0 = sqlite3_column_int64(s->find, 0);
		s->pn = sqlite3_column_int64(s->find, 2);
		if (hwtr_cs_decode(sqlite3_column_blob(s->find, 4),
		    (size_t)sqlite3_column_bytes(s->find, 4), s->pid0,
		    sqlite3_column_int64(s->find, 1), s->pn,
		    sqlite3_column_int64(s->find, 3), s->prow, &why) < 0) {
			s->pn = 0;
			sqlite3_reset(s->find);
			return (sy_fail(s, "calls: page %lld: %s",
			    (long long)s->pid0, why));
		}
		*rp = sy_search(s->prow, s->pn, id);
	} else if (rc != SQLITE_DONE) {
		sqlite3_reset(s->find);
		return (sy_dbfail(s, "cannot read a page"));
	}
	sqlite3_reset(s->find);
	return (0);
}

/*
 * The caller columns of @r (in the page @rows, @n of them) into @out
 * (may be @r; NULL: none wanted): from the stack, else from the page,
 * else from the parent's page; then @r is the last call met at its
 * depth.
 */
static SY_HOT int
sy_caller(struct sy *s, const struct hwtr_cs_row *r, struct hwtr_cs_row *out,
    const struct hwtr_cs_row *rows, int64_t n)
{
	const struct hwtr_cs_row *p = NULL;
	int64_t pid = r->v[CS_PARENT], depth = r->v[CS_DEPTH];
	int64_t csym = 0, cip = 0;
	uint32_t cnul = (1u << CS_CALLER_SYMBOL) | (1u << CS_CALLER_IP);
	struct sy_frame *f;
	int rc;

	if (!(r->nul & (1u << CS_PARENT))) {
		if (depth >= 1 && (uint64_t)depth - 1 < s->nstk &&
		    s->stk[depth - 1].id == pid) {
			f = &s->stk[depth - 1];
			cnul &= ~(1u << CS_CALLER_IP);
			cip = f->func_ip;
			if (f->has_sym) {
				cnul &= ~(1u << CS_CALLER_SYMBOL);
				csym = f->symbol;
			}
		} else if (s->stream) {
			/* Its parent is not where the stream keeps it. */
			s->broken = 1;
		} else {
			if (pid >= rows[0].v[CS_ID] && pid <= rows[n - 1].v[CS_ID])
				p = sy_search(rows, n, pid);
			else if ((rc = sy_lookup(s, pid, &p)) < 0)
				return (rc);
			if (p != NULL) {
				cnul &= ~(1u << CS_CALLER_IP);
				cip = p->v[CS_FUNC_IP];
				if (!(p->nul & (1u << CS_SYMBOL))) {
					cnul &= ~(1u << CS_CALLER_SYMBOL);
					csym = p->v[CS_SYMBOL];
				}
			}
		}
	}
	if (out != NULL) {
		/* A NULL column's value is never stored: left as it was. */
		out->nul = (out->nul & ~((1u << CS_CALLER_SYMBOL) |
		    (1u << CS_CALLER_IP))) | cnul;
		if (!(cnul & (1u << CS_CALLER_IP)))
			out->v[CS_CALLER_IP] = cip;
		if (!(cnul & (1u << CS_CALLER_SYMBOL)))
			out->v[CS_CALLER_SYMBOL] = csym;
	}
	if (depth < 0 || depth >= (1 << 24))
		return (0);
	if ((size_t)depth >= s->nstk) {
		size_t ncap = (size_t)depth * 2 + 16, i;
		struct sy_frame *ns;

		if ((ns = realloc(s->stk, ncap * sizeof(*ns))) == NULL)
			return (sy_fail(s, "calls: out of memory"));
		for (i = s->nstk; i < ncap; i++) {
			memset(&ns[i], 0, sizeof(ns[i]));
			ns[i].id = INT64_MIN;
		}
		s->stk = ns;
		s->nstk = ncap;
	}
	/* The stack covers every depth met; calls come in id order. */
	assert((size_t)depth < s->nstk);
	assert(s->stk[depth].id == INT64_MIN || s->stk[depth].id < r->v[CS_ID]);
	f = &s->stk[depth];
	f->id = r->v[CS_ID];
	f->func_ip = r->v[CS_FUNC_IP];
	f->has_sym = !(r->nul & (1u << CS_SYMBOL));
	f->symbol = r->v[CS_SYMBOL];
	return (0);
}

/* The job of a page of calls: its rows. */
static void
sy_rd_job(struct ix_job *j)
{
	struct sy_rd *d = (struct sy_rd *)j;

	d->rc = hwtr_cs_decode(d->blob, d->len, d->id0, d->thread, d->n,
	    d->seq0, d->rows, &d->why);
}

/*
 * The next page of @scan into @d, its decoding queued: 1, or 0 at the
 * end, or -1.
 */
static int
sy_rd_next(struct sy *s, sqlite3_stmt *scan, struct sy_rd *d)
{
	const void *p;
	size_t len;
	int rc;

	if ((rc = sqlite3_step(scan)) != SQLITE_ROW)
		return (rc == SQLITE_DONE ? 0 :
		    sy_dbfail(s, "cannot read the pages"));
	d->id0 = sqlite3_column_int64(scan, 0);
	d->thread = sqlite3_column_int64(scan, 1);
	d->n = sqlite3_column_int64(scan, 2);
	d->seq0 = sqlite3_column_int64(scan, 3);
	p = sqlite3_column_blob(scan, 4);
	len = (size_t)sqlite3_column_bytes(scan, 4);
	if (len > d->cap) {
		uint8_t *q = realloc(d->blob, len);

		if (q == NULL)
			return (sy_fail(s, "calls: out of memory"));
		d->blob = q;
		d->cap = len;
	}
	if (len > 0)
		memcpy(d->blob, p, len);
	d->len = len;
	d->job.fn = sy_rd_job;
	ix_jobq_submit(s->jq, &d->job);
	return (1);
}

int
hwtr_cs_sym_build(sqlite3 *db, struct ix_jobq *jq, char *err, size_t errlen)
{
	struct sy s;
	sqlite3_stmt *scan = NULL;
	struct sy_rd rd[SY_AHEAD], *d;
	struct hwtr_cs_row *rows;
	struct hwtr_cs_paths *paths = NULL;
	int64_t i, n;
	size_t k, rd_head = 0, rd_n = 0;
	int rc, more = 1;

	memset(&s, 0, sizeof(s));
	memset(rd, 0, sizeof(rd));
	s.db = db;
	s.jq = jq;
	s.err = err;
	s.errlen = errlen;
	s.prow = malloc(HWTR_CS_PAGE * sizeof(*s.prow));
	for (k = 0; k < SY_AHEAD; k++)
		rd[k].rows = malloc(HWTR_CS_PAGE * sizeof(*rd[k].rows));
	for (k = 0; k < SY_AHEAD && rd[k].rows != NULL; k++)
		;
	if (k < SY_AHEAD || s.prow == NULL || hwtr_cs_paths_new(&paths) < 0) {
		rc = sy_fail(&s, "calls: out of memory");
		goto out;
	}
	if (sqlite3_prepare_v2(db, "INSERT INTO calls_bysym (symbol, id0, "
	    "thread, n, data) VALUES (?1, ?2, ?3, ?4, ?5)", -1, &s.put,
	    NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "SELECT id0, thread, n, seq0, data FROM "
	    "calls_pages WHERE id0 <= ?1 ORDER BY id0 DESC LIMIT 1", -1,
	    &s.find, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "SELECT id0, thread, n, seq0, data FROM "
	    "calls_pages ORDER BY id0", -1, &scan, NULL) != SQLITE_OK) {
		rc = sy_dbfail(&s, "cannot prepare the symbol copy");
		goto out;
	}
	/* Pages in id order, SY_AHEAD of them decoding ahead. */
	for (;;) {
		while (more && rd_n < SY_AHEAD) {
			d = &rd[(rd_head + rd_n) % SY_AHEAD];
			if ((rc = sy_rd_next(&s, scan, d)) < 0)
				goto out;
			if (rc == 0)
				more = 0;
			else
				rd_n++;
		}
		if (rd_n == 0)
			break;
		d = &rd[rd_head];
		ix_jobq_wait(jq, &d->job);
		rd_head = (rd_head + 1) % SY_AHEAD;
		rd_n--;
		if (d->rc < 0) {
			rc = sy_fail(&s, "calls: page %lld: %s",
			    (long long)d->id0, d->why);
			goto out;
		}
		rows = d->rows;
		n = d->n;
		/* A page decoded: its rows in id order, from its id0. */
		assert(n > 0 && n <= HWTR_CS_PAGE && rows[0].v[CS_ID] >= d->id0 &&
		    rows[n - 1].v[CS_ID] < d->id0 + HWTR_CS_PAGE);
		for (i = 0; i < n; i++) {
			if (hwtr_cs_paths_add(paths, &rows[i]) < 0) {
				rc = sy_fail(&s, "calls: out of memory");
				goto out;
			}
			if ((rc = sy_caller(&s, &rows[i], &rows[i], rows,
			    n)) < 0 ||
			    (!(rows[i].nul & (1u << CS_SYMBOL)) &&
			    (rc = sy_add(&s, &rows[i], 0)) < 0))
				goto out;
		}
	}
	rc = 0;
	for (k = 0; k < s.ntab && rc == 0; k++)
		if (s.tab[k].used)
			rc = sy_flush(&s, &s.tab[k]);
	while (s.wr_n > 0 && rc == 0)
		rc = sy_wr_complete(&s);
	/* The call paths, from the same pages (colpath.c). */
	if (rc == 0)
		rc = hwtr_cs_paths_write(paths, db, err, errlen);
out:
	hwtr_cs_paths_free(paths);
	/* Jobs still queued or running use the slots. */
	for (; rd_n > 0; rd_n--, rd_head = (rd_head + 1) % SY_AHEAD)
		ix_jobq_wait(jq, &rd[rd_head].job);
	for (; s.wr_n > 0; s.wr_n--, s.wr_head = (s.wr_head + 1) % SY_WR) {
		ix_jobq_wait(jq, &s.wr[s.wr_head].job);
		free(s.wr[s.wr_head].blob);
		free(s.wr[s.wr_head].rows);
	}
	for (k = 0; k < SY_AHEAD; k++) {
		free(rd[k].blob);
		free(rd[k].rows);
	}
	sqlite3_finalize(scan);
	sqlite3_finalize(s.put);
	sqlite3_finalize(s.find);
	for (k = 0; k < s.ntab; k++)
		free(s.tab[k].rows);
	free(s.tab);
	free(s.stk);
	free(s.prow);
	sy_pool_free(&s);
	return (rc);
}

/*
 * The same copy made as the rows come (hwtr_cs_sym_stream_*(), colstore.h),
 * so that no page is read back: rows are taken in id order as above, from
 * a heap of those that came before their turn; a call still open when its
 * turn comes (the open-calls callback says what its row will hold) stands
 * in its buffer and on the stack as a hole, filled when its row comes,
 * its page written once its holes are.  The rows that come are checked
 * against what the callback said; when they differ, or more than
 * SY_STREAM_MAX rows would wait, the stream stops and the copy is made
 * from the pages at the end (hwtr_cs_sym_build()): the result is the same.
 */
#define SY_STREAM_MAX	(256 * 1024)

struct sy_hole {
	int64_t		id, symbol;
	int		has_sym;
	size_t		node;			/* its call path, + 1 */
	struct hwtr_cs_row key;			/* what the callback said */
};

/* A row of the heap: its id, and its slot in the slab. */
struct ss_hent {
	int64_t		id;
	uint32_t	slot;
};

struct hwtr_cs_sym_stream {
	struct sy	s;
	hwtr_cs_open_fn	*fn;
	void		*arg;
	struct hwtr_cs_paths *paths;
	int64_t		next;			/* the id whose turn it is */
	struct ss_hent	*heap;			/* rows before their turn */
	size_t		nheap, cheap;
	struct hwtr_cs_row *slab;		/* their rows, by slot */
	uint32_t	*freed;			/* slots free (nslab - nheap) */
	size_t		nslab, cslab, nfreed, cfreed;
	struct sy_hole	*holes;			/* ids ascending */
	size_t		nholes, choles;
	int		fell_back;
};

/*
 * The heap orders ids and slots; the rows (184 bytes) stay in the slab,
 * where a sift does not move them (ss_heap_pop() swapping whole rows was
 * 6% of indexing the CoreSight corpus's bugfix-exact-match).
 */
static int
ss_heap_push(struct hwtr_cs_sym_stream *ss, const struct hwtr_cs_row *r)
{
	size_t i, p;
	uint32_t slot;

	if (hwtr_grow((void **)&ss->heap, &ss->cheap, ss->nheap + 1,
	    sizeof(*ss->heap)) < 0)
		return (-1);
	if (ss->nfreed > 0)
		slot = ss->freed[--ss->nfreed];
	else {
		if (ss->nslab >= UINT32_MAX ||
		    hwtr_grow((void **)&ss->slab, &ss->cslab, ss->nslab + 1,
		    sizeof(*ss->slab)) < 0)
			return (-1);
		slot = (uint32_t)ss->nslab++;
	}
	ss->slab[slot] = *r;
	i = ss->nheap++;
	while (i > 0) {
		p = (i - 1) / 2;
		if (ss->heap[p].id <= r->v[CS_ID])
			break;
		ss->heap[i] = ss->heap[p];
		i = p;
	}
	ss->heap[i].id = r->v[CS_ID];
	ss->heap[i].slot = slot;
	return (0);
}

static int
ss_heap_pop(struct hwtr_cs_sym_stream *ss, struct hwtr_cs_row *r)
{
	struct ss_hent last;
	size_t i = 0, c, n;

	assert(ss->nheap > 0);
	if (hwtr_grow((void **)&ss->freed, &ss->cfreed, ss->nfreed + 1,
	    sizeof(*ss->freed)) < 0)
		return (-1);
	*r = ss->slab[ss->heap[0].slot];
	ss->freed[ss->nfreed++] = ss->heap[0].slot;
	n = --ss->nheap;
	last = ss->heap[n];
	for (;;) {
		c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && ss->heap[c + 1].id < ss->heap[c].id)
			c++;
		if (last.id <= ss->heap[c].id)
			break;
		ss->heap[i] = ss->heap[c];
		i = c;
	}
	ss->heap[i] = last;
	return (0);
}

/*
 * Row @r (a whole one, or a hole's stand-in) in its turn: put in its
 * symbol's buffer as it is, its caller columns set there.
 */
static SY_HOT int
ss_take(struct hwtr_cs_sym_stream *ss, const struct hwtr_cs_row *r,
    size_t *nodep, int hole)
{
	struct sy *s = &ss->s;
	struct sy_buf *b;
	struct hwtr_cs_row *slot;
	int rc;

	if (hwtr_cs_paths_key(ss->paths, r, nodep) < 0)
		return (sy_fail(s, "calls: out of memory"));
	if (r->nul & (1u << CS_SYMBOL)) {
		if ((rc = sy_caller(s, r, NULL, r, 1)) < 0)
			return (rc);
	} else {
		if ((b = sy_room(s, r)) == NULL)
			return (-1);
		slot = &b->rows[b->n];
		*slot = *r;
		if ((rc = sy_caller(s, r, slot, r, 1)) < 0 ||
		    (rc = sy_added(s, b, hole)) < 0)
			return (rc);
	}
	ss->next = r->v[CS_ID] + 1;
	return (0);
}

/* Call @key (open) in its turn: a hole. */
static int
ss_take_open(struct hwtr_cs_sym_stream *ss, const struct hwtr_cs_row *key)
{
	struct sy_hole *h;
	struct hwtr_cs_row r = *key;
	size_t node;
	int rc;

	if (hwtr_grow((void **)&ss->holes, &ss->choles, ss->nholes + 1,
	    sizeof(*ss->holes)) < 0)
		return (sy_fail(&ss->s, "calls: out of memory"));
	if ((rc = ss_take(ss, &r, &node, 1)) < 0)
		return (rc);
	h = &ss->holes[ss->nholes++];
	h->id = key->v[CS_ID];
	h->has_sym = !(key->nul & (1u << CS_SYMBOL));
	h->symbol = key->v[CS_SYMBOL];
	h->node = node;
	h->key = *key;
	return (0);
}

/* The columns the callback gives, the same in @a and @b. */
static int
ss_same_key(const struct hwtr_cs_row *a, const struct hwtr_cs_row *b)
{
	static const int col[] = { CS_ID, CS_THREAD, CS_PARENT, CS_DEPTH,
	    CS_SYMBOL, CS_FUNC_IP, CS_CALL_IP };
	size_t i;
	int c;

	for (i = 0; i < sizeof(col) / sizeof(col[0]); i++) {
		c = col[i];
		if (((a->nul ^ b->nul) >> c) & 1)
			return (0);
		if (!((a->nul >> c) & 1) && a->v[c] != b->v[c])
			return (0);
	}
	return (1);
}

/* Put @r over its stand-in @ph, whose caller columns stay. */
static void
ss_fill(struct hwtr_cs_row *ph, const struct hwtr_cs_row *r)
{
	uint32_t m = (1u << CS_CALLER_SYMBOL) | (1u << CS_CALLER_IP);
	int64_t cs = ph->v[CS_CALLER_SYMBOL], ci = ph->v[CS_CALLER_IP];
	uint32_t nul = ph->nul & m;

	*ph = *r;
	ph->nul = (r->nul & ~m) | nul;
	ph->v[CS_CALLER_SYMBOL] = cs;
	ph->v[CS_CALLER_IP] = ci;
}

/* The row of hole @h (the last one with its id) has come. */
static int
ss_fill_hole(struct hwtr_cs_sym_stream *ss, size_t hi,
    const struct hwtr_cs_row *r)
{
	struct sy *s = &ss->s;
	struct sy_hole h = ss->holes[hi];
	struct hwtr_cs_row *ph;
	struct sy_buf *b;
	size_t i;
	int64_t id = h.id;

	if (!ss_same_key(&h.key, r)) {
		s->broken = 1;
		return (0);
	}
	memmove(&ss->holes[hi], &ss->holes[hi + 1],
	    (ss->nholes - hi - 1) * sizeof(*ss->holes));
	ss->nholes--;
	hwtr_cs_paths_sum(ss->paths, h.node, r);
	if (!h.has_sym)
		return (0);
	b = sy_buf_of(s, h.symbol);
	if (b == NULL)
		return (sy_fail(s, "calls: out of memory"));
	if (b->n > 0 && id >= b->rows[0].v[CS_ID] &&
	    id <= b->rows[b->n - 1].v[CS_ID] &&
	    (ph = (struct hwtr_cs_row *)sy_search(b->rows, (int64_t)b->n,
	    id)) != NULL) {
		assert(b->holes > 0);
		ss_fill(ph, r);
		b->holes--;
		return (0);
	}
	for (i = s->nwait; i > 0; i--) {
		struct sy_wait *wt = &s->wait[i - 1];

		if (wt->symbol != h.symbol || id < wt->rows[0].v[CS_ID] ||
		    id > wt->rows[wt->n - 1].v[CS_ID] ||
		    (ph = (struct hwtr_cs_row *)sy_search(wt->rows,
		    (int64_t)wt->n, id)) == NULL)
			continue;
		ss_fill(ph, r);
		if (--wt->holes > 0)
			return (0);
		/* Its last hole: the page goes to be written. */
		{
			struct sy_wait done = *wt;

			s->nwaiting -= done.n;
			memmove(wt, wt + 1, (s->nwait - i) * sizeof(*wt));
			s->nwait--;
			return (sy_submit(s, done.symbol, done.rows, done.n));
		}
	}
	s->broken = 1;
	return (0);
}

/* Take every row whose turn has come. */
static int
ss_advance(struct hwtr_cs_sym_stream *ss)
{
	struct hwtr_cs_row r;
	size_t node;
	int rc;

	while (!ss->s.broken) {
		if (ss->nheap > 0 && ss->heap[0].id < ss->next) {
			/* Given twice, or a hole's row given twice. */
			ss->s.broken = 1;
			break;
		}
		if (ss->nheap > 0 && ss->heap[0].id == ss->next) {
			if (ss_heap_pop(ss, &r) < 0)
				return (sy_fail(&ss->s, "calls: out of memory"));
			if ((rc = ss_take(ss, &r, &node, 0)) < 0)
				return (rc);
			hwtr_cs_paths_sum(ss->paths, node, &r);
			continue;
		}
		memset(&r, 0, sizeof(r));
		if (ss->fn(ss->arg, ss->next, &r) != 1)
			break;
		if (r.v[CS_ID] != ss->next) {
			ss->s.broken = 1;
			break;
		}
		if ((rc = ss_take_open(ss, &r)) < 0)
			return (rc);
	}
	if (ss->nheap + ss->s.nwaiting > SY_STREAM_MAX)
		ss->s.broken = 1;
	return (0);
}

/* Take what is left, in id order (ids never given are skipped). */
static int
ss_drain(struct hwtr_cs_sym_stream *ss)
{
	struct hwtr_cs_row r;
	size_t node;
	int rc;

	if (ss->nholes > 0)
		ss->s.broken = 1;
	while (!ss->s.broken && ss->nheap > 0) {
		if (ss_heap_pop(ss, &r) < 0)
			return (sy_fail(&ss->s, "calls: out of memory"));
		if (r.v[CS_ID] < ss->next) {
			ss->s.broken = 1;
			break;
		}
		if ((rc = ss_take(ss, &r, &node, 0)) < 0)
			return (rc);
		hwtr_cs_paths_sum(ss->paths, node, &r);
	}
	return (0);
}

/* Stop streaming: what it holds goes, the copy is made at the end. */
static void
ss_stop(struct hwtr_cs_sym_stream *ss)
{
	struct sy *s = &ss->s;
	size_t k;

	if (ss->fell_back)
		return;
	ss->fell_back = 1;
	s->broken = 1;
	for (; s->wr_n > 0; s->wr_n--, s->wr_head = (s->wr_head + 1) %
	    SY_WR) {
		ix_jobq_wait(s->jq, &s->wr[s->wr_head].job);
		free(s->wr[s->wr_head].blob);
		s->wr[s->wr_head].blob = NULL;
		free(s->wr[s->wr_head].rows);
		s->wr[s->wr_head].rows = NULL;
	}
	for (k = 0; k < s->nwait; k++)
		free(s->wait[k].rows);
	s->nwait = s->nwaiting = 0;
	for (k = 0; k < s->ntab; k++)
		free(s->tab[k].rows);
	free(s->tab);
	s->tab = NULL;
	s->ntab = s->nused = s->buffered = s->nbig = 0;
	sy_pool_free(s);
	free(ss->heap);
	free(ss->slab);
	free(ss->freed);
	ss->heap = NULL;
	ss->slab = NULL;
	ss->freed = NULL;
	ss->nheap = ss->cheap = ss->nslab = ss->cslab = 0;
	ss->nfreed = ss->cfreed = 0;
	ss->nholes = 0;
	hwtr_cs_paths_free(ss->paths);
	ss->paths = NULL;
}

int
hwtr_cs_sym_stream_new(sqlite3 *db, struct ix_jobq *jq, hwtr_cs_open_fn *fn,
    void *arg, char *err, size_t errlen, struct hwtr_cs_sym_stream **sp)
{
	struct hwtr_cs_sym_stream *ss;

	if ((*sp = ss = calloc(1, sizeof(*ss))) == NULL) {
		snprintf(err, errlen, "calls: out of memory");
		return (-1);
	}
	ss->s.db = db;
	ss->s.jq = jq;
	ss->s.err = err;
	ss->s.errlen = errlen;
	ss->s.stream = 1;
	ss->fn = fn;
	ss->arg = arg;
	ss->next = INT64_MIN;
	if (hwtr_cs_paths_new(&ss->paths) < 0)
		return (sy_fail(&ss->s, "calls: out of memory"));
	if (sqlite3_prepare_v2(db, "INSERT INTO calls_bysym (symbol, id0, "
	    "thread, n, data) VALUES (?1, ?2, ?3, ?4, ?5)", -1, &ss->s.put,
	    NULL) != SQLITE_OK)
		return (sy_dbfail(&ss->s, "cannot prepare the symbol copy"));
	return (0);
}

int
hwtr_cs_sym_stream_fell_back(const struct hwtr_cs_sym_stream *ss)
{
	return (ss->fell_back);
}

int
hwtr_cs_sym_stream_thread(struct hwtr_cs_sym_stream *ss, int64_t id_base)
{
	int rc;

	if (ss->fell_back)
		return (0);
	if ((rc = ss_drain(ss)) < 0)
		return (rc);
	/* Ids ascend from thread to thread, as the pages' scan takes them. */
	if (id_base < ss->next)
		ss->s.broken = 1;
	else
		ss->next = id_base;
	if (ss->s.broken)
		ss_stop(ss);
	return (0);
}

int
hwtr_cs_sym_stream_put(struct hwtr_cs_sym_stream *ss,
    const struct hwtr_cs_row *r)
{
	size_t i;
	int rc;

	if (ss->fell_back)
		return (0);
	if (r->v[CS_ID] < ss->next) {
		/* A hole's row; holes close in about the reverse order. */
		for (i = ss->nholes; i > 0; i--)
			if (ss->holes[i - 1].id == r->v[CS_ID])
				break;
		if (i == 0)
			ss->s.broken = 1;
		else if ((rc = ss_fill_hole(ss, i - 1, r)) < 0)
			return (rc);
	} else if (r->v[CS_ID] == ss->next && ss->nheap == 0) {
		/*
		 * Its turn, nothing before it waiting (most calls, leaves
		 * after their first sibling): taken at once.  No call began
		 * since it ended, so no later one can be taken yet.
		 */
		size_t node;

		if ((rc = ss_take(ss, r, &node, 0)) < 0)
			return (rc);
		hwtr_cs_paths_sum(ss->paths, node, r);
	} else {
		if (ss_heap_push(ss, r) < 0)
			return (sy_fail(&ss->s, "calls: out of memory"));
		if ((rc = ss_advance(ss)) < 0)
			return (rc);
	}
	if (ss->s.broken)
		ss_stop(ss);
	return (0);
}

int
hwtr_cs_sym_stream_finish(struct hwtr_cs_sym_stream *ss)
{
	struct sy *s = &ss->s;
	size_t k;
	int rc = 0;

	if (!ss->fell_back && (rc = ss_drain(ss)) < 0)
		return (rc);
	if (!ss->fell_back && (s->broken || s->nwait > 0))
		ss_stop(ss);
	if (ss->fell_back) {
		if (sqlite3_exec(s->db, "DELETE FROM calls_bysym", NULL, NULL,
		    NULL) != SQLITE_OK)
			return (sy_dbfail(s, "cannot clear the symbol copy"));
		return (hwtr_cs_sym_build(s->db, s->jq, s->err, s->errlen));
	}
	for (k = 0; k < s->ntab && rc == 0; k++)
		if (s->tab[k].used)
			rc = sy_flush(s, &s->tab[k]);
	while (s->wr_n > 0 && rc == 0)
		rc = sy_wr_complete(s);
	/* No call is open at the end: nothing waits. */
	assert(rc < 0 || s->nwait == 0);
	if (rc == 0)
		rc = hwtr_cs_paths_write(ss->paths, s->db, s->err, s->errlen);
	return (rc);
}

void
hwtr_cs_sym_stream_free(struct hwtr_cs_sym_stream *ss)
{
	struct sy *s;
	size_t k;

	if (ss == NULL)
		return;
	s = &ss->s;
	for (; s->wr_n > 0; s->wr_n--, s->wr_head = (s->wr_head + 1) %
	    SY_WR) {
		ix_jobq_wait(s->jq, &s->wr[s->wr_head].job);
		free(s->wr[s->wr_head].blob);
		free(s->wr[s->wr_head].rows);
	}
	for (k = 0; k < s->nwait; k++)
		free(s->wait[k].rows);
	free(s->wait);
	for (k = 0; k < s->ntab; k++)
		free(s->tab[k].rows);
	free(s->tab);
	free(s->stk);
	free(s->prow);
	sy_pool_free(s);
	sqlite3_finalize(s->put);
	sqlite3_finalize(s->find);
	free(ss->heap);
	free(ss->slab);
	free(ss->freed);
	free(ss->holes);
	hwtr_cs_paths_free(ss->paths);
	free(ss);
}
