/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The calls column store's writer (colstore.h): rows in, pages of
 * HWTR_CS_PAGE calls encoded (colstore.c's codec) by jobs into
 * calls_pages, and the symbol copy (colsym.c): as the rows come when the
 * writer is told the calls still open (hwtr_cs_writer_open_calls()), else
 * from the pages at the end.  Not in the loadable extension, which only
 * reads.
 */

#include <assert.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwtr_common.h"
#include "colstore.h"
#include "ix_jobs.h"

#define CS_WINDOW	16	/* pages waiting for their last rows */
#define CS_LATE_MAX	4096	/* rows for written pages, before a merge */

struct cs_pend {
	int64_t		pno;		/* page number in the thread, -1: free */
	size_t		n;
	struct hwtr_cs_row *rows;	/* HWTR_CS_PAGE slots, by id - id0 */
	uint8_t		*have;
};

/*
 * A page being encoded by a job (ix_jobs.h) while the writer goes on; it
 * goes in, in order, CS_PW pages later or when something reads the pages.
 * Its rows are a spare's while the job may run, back with the spares
 * once it ran: so the buffers are as many as jobs wait, not CS_PW (with
 * -j 1, one), reused last in first out.
 */
#define CS_PW		IX_JOBS_LAG
struct cs_pw {
	struct ix_job	job;
	int64_t		id0, thread;
	int64_t		seq0, seq1;	/* the first and last rows' entries */
	struct hwtr_cs_row *rows;	/* HWTR_CS_PAGE slots, or NULL */
	size_t		n;
	uint8_t		*blob;		/* hwtr_cs_encode()'s */
	size_t		len;
	int		rc;
};

struct hwtr_cs_writer {
	sqlite3		*db;
	struct ix_jobq	*jq;		/* NULL: encode here */
	struct cs_pw	pw[CS_PW];	/* a ring */
	size_t		pw_head, pw_n;
	struct hwtr_cs_row *spare[CS_PW];
	size_t		nspare;
	sqlite3_stmt	*put, *get;
	int64_t		thread, base;
	int		in_thread;
	struct cs_pend	pend[CS_WINDOW];
	struct cs_pend	*hint;		/* where the last row went, or NULL */
	uint8_t		*written;	/* bitmap by page number */
	size_t		cwritten;
	struct hwtr_cs_row *late;
	size_t		nlate;
	struct hwtr_cs_row *tmp;	/* a page's rows, for merging */
	/*
	 * The slot hwtr_cs_writer_slot() gave: in pending page sl_pe at
	 * sl_i, or late (sl_pe NULL, sl_late), or else the scratch row.
	 */
	struct cs_pend	*sl_pe;
	size_t		sl_i;
	int		sl_late;
	struct hwtr_cs_row scratch;
	hwtr_cs_open_fn	*open_fn;
	void		*open_arg;
	struct hwtr_cs_sym_stream *sym;	/* the symbol copy, as rows come */
	char		err[HWTR_ERRMSG_MAX];
};

static int
cs_fail(struct hwtr_cs_writer *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int
cs_fail(struct hwtr_cs_writer *w, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(w->err, sizeof(w->err), fmt, ap);
	va_end(ap);
	return (-1);
}

static int
cs_dbfail(struct hwtr_cs_writer *w, const char *what)
{
	return (cs_fail(w, "calls: %s: %s", what, sqlite3_errmsg(w->db)));
}

const char *
hwtr_cs_writer_error(const struct hwtr_cs_writer *w)
{
	return (w->err[0] != '\0' ? w->err : "calls: no error");
}

int
hwtr_cs_writer_open(sqlite3 *db, struct hwtr_cs_writer **wp)
{
	struct hwtr_cs_writer *w;
	int i;

	*wp = NULL;
	if ((w = calloc(1, sizeof(*w))) == NULL)
		return (-1);
	*wp = w;
	w->db = db;
	for (i = 0; i < CS_WINDOW; i++) {
		w->pend[i].pno = -1;
		w->pend[i].rows = malloc(HWTR_CS_PAGE * sizeof(struct hwtr_cs_row));
		w->pend[i].have = calloc(HWTR_CS_PAGE, 1);
		if (w->pend[i].rows == NULL || w->pend[i].have == NULL)
			return (cs_fail(w, "calls: out of memory"));
	}
	w->late = malloc(CS_LATE_MAX * sizeof(*w->late));
	w->tmp = malloc(2 * HWTR_CS_PAGE * sizeof(*w->tmp));
	if (w->late == NULL || w->tmp == NULL)
		return (cs_fail(w, "calls: out of memory"));
	if (sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO calls_pages VALUES "
	    "(?1, ?2, ?3, ?4, ?5, ?6)", -1, &w->put, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "SELECT n, seq0, data FROM calls_pages "
	    "WHERE id0 = ?1", -1, &w->get, NULL) != SQLITE_OK)
		return (cs_dbfail(w, "cannot prepare the page statements"));
	return (0);
}

void
hwtr_cs_writer_jobs(struct hwtr_cs_writer *w, struct ix_jobq *q)
{
	w->jq = q;
}

void
hwtr_cs_writer_open_calls(struct hwtr_cs_writer *w, hwtr_cs_open_fn *fn,
    void *arg)
{
	w->open_fn = fn;
	w->open_arg = arg;
}

int
hwtr_cs_writer_streamed(const struct hwtr_cs_writer *w)
{
	return (w->sym != NULL && !hwtr_cs_sym_stream_fell_back(w->sym));
}

void
hwtr_cs_writer_close(struct hwtr_cs_writer *w)
{
	int i;

	if (w == NULL)
		return;
	hwtr_cs_sym_stream_free(w->sym);
	/* Jobs still encoding pages (after a failure) use the slots. */
	for (; w->pw_n > 0; w->pw_n--) {
		struct cs_pw *pw = &w->pw[w->pw_head];

		ix_jobq_wait(w->jq, &pw->job);
		free(pw->blob);
		pw->blob = NULL;
		w->pw_head = (w->pw_head + 1) % CS_PW;
	}
	for (i = 0; i < CS_PW; i++)
		free(w->pw[i].rows);
	while (w->nspare > 0)
		free(w->spare[--w->nspare]);
	sqlite3_finalize(w->put);
	sqlite3_finalize(w->get);
	for (i = 0; i < CS_WINDOW; i++) {
		free(w->pend[i].rows);
		free(w->pend[i].have);
	}
	free(w->written);
	free(w->late);
	free(w->tmp);
	free(w);
}

static int
cs_mark_written(struct hwtr_cs_writer *w, int64_t pno)
{
	size_t byte = (size_t)pno / 8;

	if (byte >= w->cwritten) {
		size_t old = w->cwritten;

		if (hwtr_grow((void **)&w->written, &w->cwritten, byte + 1, 1) < 0)
			return (cs_fail(w, "calls: out of memory"));
		memset(w->written + old, 0, w->cwritten - old);
	}
	w->written[byte] |= (uint8_t)(1u << (pno % 8));
	return (0);
}

static int
cs_is_written(const struct hwtr_cs_writer *w, int64_t pno)
{
	size_t byte = (size_t)pno / 8;

	return (byte < w->cwritten && (w->written[byte] >> (pno % 8)) & 1);
}

/* The job of a page: its blob. */
static void
cs_page_job(struct ix_job *j)
{
	struct cs_pw *pw = (struct cs_pw *)j;

	pw->blob = NULL;
	pw->rc = hwtr_cs_encode(pw->rows, pw->n, pw->id0, pw->seq0, &pw->blob,
	    &pw->len);
}

/* @pw's rows, its job done, back with the spares. */
static void
cs_pw_spare(struct hwtr_cs_writer *w, struct cs_pw *pw)
{
	if (pw->rows == NULL)
		return;
	/* Each buffer is a slot's or a spare: there is room. */
	assert(w->nspare < CS_PW);
	w->spare[w->nspare++] = pw->rows;
	pw->rows = NULL;
}

/* The oldest page being encoded: into calls_pages. */
static int
cs_pw_complete(struct hwtr_cs_writer *w)
{
	struct cs_pw *pw = &w->pw[w->pw_head];
	int rc;

	assert(w->pw_n > 0 && w->pw_n <= CS_PW && w->pw_head < CS_PW);
	assert(pw->n > 0 && pw->n <= HWTR_CS_PAGE);
	ix_jobq_wait(w->jq, &pw->job);
	cs_pw_spare(w, pw);
	w->pw_head = (w->pw_head + 1) % CS_PW;
	w->pw_n--;
	if (pw->rc < 0) {
		free(pw->blob);
		pw->blob = NULL;
		return (cs_fail(w, "calls: cannot encode the page of ids "
		    "%lld to %lld", (long long)pw->id0, (long long)pw->id0 +
		    HWTR_CS_PAGE - 1));
	}
	sqlite3_bind_int64(w->put, 1, pw->id0);
	sqlite3_bind_int64(w->put, 2, pw->thread);
	sqlite3_bind_int64(w->put, 3, (sqlite3_int64)pw->n);
	/* A page's ids, and so its calls' entries, ascend. */
	assert(pw->seq0 <= pw->seq1);
	sqlite3_bind_int64(w->put, 4, pw->seq0);
	sqlite3_bind_int64(w->put, 5, pw->seq1);
	sqlite3_bind_blob(w->put, 6, pw->blob, (int)pw->len, free);
	pw->blob = NULL;
	rc = sqlite3_step(w->put);
	sqlite3_reset(w->put);
	sqlite3_clear_bindings(w->put);
	if (rc != SQLITE_DONE)
		return (cs_dbfail(w, "cannot write a page"));
	return (0);
}

/* Every page being encoded, into calls_pages. */
static int
cs_pw_drain(struct hwtr_cs_writer *w)
{
	int rc = 0;

	while (w->pw_n > 0)
		if (cs_pw_complete(w) < 0)
			rc = -1;
	return (rc);
}

/*
 * A free slot for a page to encode (the oldest one written if none),
 * with rows.
 */
static struct cs_pw *
cs_pw_slot(struct hwtr_cs_writer *w)
{
	struct cs_pw *pw;

	if (w->pw_n == CS_PW && cs_pw_complete(w) < 0)
		return (NULL);
	pw = &w->pw[(w->pw_head + w->pw_n) % CS_PW];
	if (pw->rows == NULL) {
		if (w->nspare > 0)
			pw->rows = w->spare[--w->nspare];
		else if ((pw->rows = malloc(HWTR_CS_PAGE *
		    sizeof(*pw->rows))) == NULL) {
			(void)cs_fail(w, "calls: out of memory");
			return (NULL);
		}
	}
	return (pw);
}

/*
 * Page @pno of the current thread, its @n rows (ascending ids) in @pw's:
 * a job encodes them, the page goes in later (cs_pw_complete()).
 */
static int
cs_pw_submit(struct hwtr_cs_writer *w, struct cs_pw *pw, int64_t pno,
    size_t n)
{
	/* The ring's next slot, a page of the current thread. */
	assert(w->pw_n < CS_PW && pw == &w->pw[(w->pw_head + w->pw_n) % CS_PW]);
	assert(w->in_thread && pno >= 0 && n > 0 && n <= HWTR_CS_PAGE);
	assert(pw->rows[0].v[CS_ID] >= w->base + pno * HWTR_CS_PAGE &&
	    pw->rows[n - 1].v[CS_ID] < w->base + (pno + 1) * HWTR_CS_PAGE);
	pw->id0 = w->base + pno * HWTR_CS_PAGE;
	pw->thread = w->thread;
	pw->seq0 = pw->rows[0].v[CS_ENTRY_SEQ];
	pw->seq1 = pw->rows[n - 1].v[CS_ENTRY_SEQ];
	pw->n = n;
	pw->job.fn = cs_page_job;
	w->pw_n++;
	if (ix_jobq_submit(w->jq, &pw->job))
		cs_pw_spare(w, pw);
	return (cs_mark_written(w, pno));
}

/* Write @n rows (ascending ids) as page @pno of the current thread. */
static int
cs_write_page(struct hwtr_cs_writer *w, int64_t pno,
    const struct hwtr_cs_row *rows, size_t n)
{
	struct cs_pw *pw;

	assert(n > 0 && n <= HWTR_CS_PAGE);
	if ((pw = cs_pw_slot(w)) == NULL)
		return (-1);
	memcpy(pw->rows, rows, n * sizeof(*rows));
	return (cs_pw_submit(w, pw, pno, n));
}

/* Write pending page @pe (its rows present) and free its slot. */
static int
cs_flush_pend(struct hwtr_cs_writer *w, struct cs_pend *pe)
{
	struct cs_pw *pw = NULL;
	size_t i, n = 0;
	int rc = 0;

	assert(pe->pno >= 0 && pe->n <= HWTR_CS_PAGE);
	if (pe->n > 0 && (pw = cs_pw_slot(w)) == NULL)
		rc = -1;
	if (pw != NULL && pe->n == HWTR_CS_PAGE) {
		/* A full page's rows are in order: the two swap buffers. */
		struct hwtr_cs_row *t = pw->rows;

		pw->rows = pe->rows;
		pe->rows = t;
		n = HWTR_CS_PAGE;
	} else {
		for (i = 0; pw != NULL && i < HWTR_CS_PAGE; i++)
			if (pe->have[i])
				pw->rows[n++] = pe->rows[i];
	}
	/* The page's fill is the count of its present rows. */
	assert(pw == NULL || n == pe->n);
	if (n > 0)
		rc = cs_pw_submit(w, pw, pe->pno, n);
	memset(pe->have, 0, HWTR_CS_PAGE);
	pe->n = 0;
	pe->pno = -1;
	return (rc);
}

static int
cs_cmp_row(const void *a, const void *b)
{
	int64_t x = ((const struct hwtr_cs_row *)a)->v[CS_ID];
	int64_t y = ((const struct hwtr_cs_row *)b)->v[CS_ID];

	return (x < y ? -1 : x > y);
}

/* Merge the rows that came after their page was written into it. */
static int
cs_flush_late(struct hwtr_cs_writer *w)
{
	const char *why;
	size_t i = 0, j, k, a, b, n, m;
	int64_t pno, id0;
	int rc;

	/* The pages read back must be in. */
	if (cs_pw_drain(w) < 0)
		return (-1);
	qsort(w->late, w->nlate, sizeof(*w->late), cs_cmp_row);
	while (i < w->nlate) {
		pno = (w->late[i].v[CS_ID] - w->base) / HWTR_CS_PAGE;
		id0 = w->base + pno * HWTR_CS_PAGE;
		for (j = i; j < w->nlate && w->late[j].v[CS_ID] < id0 +
		    HWTR_CS_PAGE; j++)
			;
		/* The page as written, then the late rows merged in. */
		n = 0;
		sqlite3_bind_int64(w->get, 1, id0);
		rc = sqlite3_step(w->get);
		if (rc == SQLITE_ROW) {
			int64_t pn = sqlite3_column_int64(w->get, 0);

			if (hwtr_cs_decode(sqlite3_column_blob(w->get, 2),
			    (size_t)sqlite3_column_bytes(w->get, 2), id0,
			    w->thread, pn, sqlite3_column_int64(w->get, 1),
			    w->tmp + HWTR_CS_PAGE, &why) < 0) {
				sqlite3_reset(w->get);
				return (cs_fail(w, "calls: page %lld: %s",
				    (long long)id0, why));
			}
			n = (size_t)pn;
		} else if (rc != SQLITE_DONE) {
			sqlite3_reset(w->get);
			return (cs_dbfail(w, "cannot read a page back"));
		}
		sqlite3_reset(w->get);
		m = j - i;
		if (n + m > HWTR_CS_PAGE)
			return (cs_fail(w, "calls: id %lld given twice",
			    (long long)w->late[i].v[CS_ID]));
		for (a = 0, b = i, k = 0; a < n || b < j; k++) {
			if (b == j || (a < n && w->tmp[HWTR_CS_PAGE + a].v[CS_ID] <
			    w->late[b].v[CS_ID]))
				w->tmp[k] = w->tmp[HWTR_CS_PAGE + a++];
			else
				w->tmp[k] = w->late[b++];
			if (k > 0 && w->tmp[k].v[CS_ID] == w->tmp[k - 1].v[CS_ID])
				return (cs_fail(w, "calls: id %lld given twice",
				    (long long)w->tmp[k].v[CS_ID]));
		}
		/* Both sides merged, ids ascending within the page. */
		assert(k == n + m && k > 0 && w->tmp[0].v[CS_ID] >= id0 &&
		    w->tmp[k - 1].v[CS_ID] < id0 + HWTR_CS_PAGE);
		if ((rc = cs_write_page(w, pno, w->tmp, k)) < 0)
			return (rc);
		i = j;
	}
	w->nlate = 0;
	return (0);
}

static int
cs_end_thread(struct hwtr_cs_writer *w)
{
	int i, rc;

	if (!w->in_thread)
		return (0);
	/* Lowest page first: not needed for correctness, kinder to SQLite. */
	for (;;) {
		struct cs_pend *lo = NULL;

		for (i = 0; i < CS_WINDOW; i++)
			if (w->pend[i].pno >= 0 && (lo == NULL ||
			    w->pend[i].pno < lo->pno))
				lo = &w->pend[i];
		if (lo == NULL)
			break;
		if ((rc = cs_flush_pend(w, lo)) < 0)
			return (rc);
	}
	if (w->nlate > 0 && (rc = cs_flush_late(w)) < 0)
		return (rc);
	if ((rc = cs_pw_drain(w)) < 0)
		return (rc);
	if (w->written != NULL)
		memset(w->written, 0, w->cwritten);
	w->in_thread = 0;
	return (0);
}

int
hwtr_cs_writer_thread(struct hwtr_cs_writer *w, int64_t thread,
    int64_t id_base)
{
	int rc;

	if ((rc = cs_end_thread(w)) < 0)
		return (rc);
	if (w->open_fn != NULL && w->sym == NULL &&
	    hwtr_cs_sym_stream_new(w->db, w->jq, w->open_fn, w->open_arg,
	    w->err, sizeof(w->err), &w->sym) < 0)
		return (-1);
	if (w->sym != NULL && hwtr_cs_sym_stream_thread(w->sym, id_base) < 0)
		return (-1);
	w->thread = thread;
	w->base = id_base;
	w->in_thread = 1;
	return (0);
}

/*
 * The pending page of page number @pno, or NULL with @frp the last free
 * slot of the window (NULL: none) and @lop its oldest page.  Most rows
 * go to the page the row before went to: it is tried before the window
 * is searched (the search was half of hwtr_cs_writer_put()).
 */
static struct cs_pend *
cs_pend_of(struct hwtr_cs_writer *w, int64_t pno, struct cs_pend **frp,
    struct cs_pend **lop)
{
	struct cs_pend *fr = NULL, *lo = NULL;
	int i;

	*frp = *lop = NULL;
	if (w->hint != NULL && w->hint->pno == pno)
		return (w->hint);
	for (i = 0; i < CS_WINDOW; i++) {
		if (w->pend[i].pno == pno)
			return (&w->pend[i]);
		if (w->pend[i].pno < 0)
			fr = &w->pend[i];
		else if (lo == NULL || w->pend[i].pno < lo->pno)
			lo = &w->pend[i];
	}
	*frp = fr;
	*lop = lo;
	return (NULL);
}

int
hwtr_cs_writer_put(struct hwtr_cs_writer *w, const struct hwtr_cs_row *r)
{
	struct cs_pend *pe, *lo, *fr;
	int64_t idx = r->v[CS_ID] - w->base, pno;
	int i, rc;

	if (!w->in_thread || idx < 0 || r->v[CS_THREAD] != w->thread)
		return (cs_fail(w, "calls: row %lld is not one of thread %lld",
		    (long long)r->v[CS_ID], (long long)w->thread));
	if (w->sym != NULL && hwtr_cs_sym_stream_put(w->sym, r) < 0)
		return (-1);
	pno = idx / HWTR_CS_PAGE;
	/* Late rows are merged as soon as CS_LATE_MAX wait. */
	assert(w->nlate < CS_LATE_MAX);
	if (cs_is_written(w, pno)) {
		w->late[w->nlate++] = *r;
		return (w->nlate == CS_LATE_MAX ? cs_flush_late(w) : 0);
	}
	pe = cs_pend_of(w, pno, &fr, &lo);
	if (pe == NULL) {
		if (fr == NULL) {
			/*
			 * The window is full: write its oldest page as it is;
			 * its missing rows (calls still open) come late.
			 */
			if ((rc = cs_flush_pend(w, lo)) < 0)
				return (rc);
			fr = lo;
			if (cs_is_written(w, pno)) {
				w->late[w->nlate++] = *r;
				return (w->nlate == CS_LATE_MAX ?
				    cs_flush_late(w) : 0);
			}
		}
		pe = fr;
		pe->pno = pno;
	}
	i = (int)(idx % HWTR_CS_PAGE);
	/* A pending page is flushed when full: room for this row. */
	assert(pe->pno == pno && pe->n < HWTR_CS_PAGE);
	if (pe->have[i])
		return (cs_fail(w, "calls: id %lld given twice",
		    (long long)r->v[CS_ID]));
	pe->rows[i] = *r;
	pe->have[i] = 1;
	w->hint = pe;
	if (++pe->n == HWTR_CS_PAGE)
		return (cs_flush_pend(w, pe));
	return (0);
}

struct hwtr_cs_row *
hwtr_cs_writer_slot(struct hwtr_cs_writer *w, int64_t id)
{
	struct cs_pend *pe, *fr, *lo;
	int64_t idx = id - w->base, pno;

	w->sl_pe = NULL;
	w->sl_late = 0;
	/* Anything but a row of a page in the window or late: as put. */
	if (!w->in_thread || idx < 0)
		return (&w->scratch);
	pno = idx / HWTR_CS_PAGE;
	/*
	 * Most rows go to the page the row before went to: a page in the
	 * window is not written (a page written leaves it), so that one
	 * comparison is all.
	 */
	pe = w->hint;
	if (pe != NULL && pe->pno == pno) {
		w->sl_i = (size_t)(idx % HWTR_CS_PAGE);
		if (pe->have[w->sl_i])
			return (&w->scratch);
		w->sl_pe = pe;
		return (&pe->rows[w->sl_i]);
	}
	if (cs_is_written(w, pno)) {
		assert(w->nlate < CS_LATE_MAX);
		w->sl_late = 1;
		return (&w->late[w->nlate]);
	}
	pe = cs_pend_of(w, pno, &fr, &lo);
	/* A full window writes a page first: put does it in its order. */
	if (pe == NULL && fr == NULL)
		return (&w->scratch);
	if (pe == NULL) {
		pe = fr;
		pe->pno = pno;
	}
	w->sl_i = (size_t)(idx % HWTR_CS_PAGE);
	if (pe->have[w->sl_i])
		return (&w->scratch);
	w->sl_pe = pe;
	return (&pe->rows[w->sl_i]);
}

int
hwtr_cs_writer_commit(struct hwtr_cs_writer *w)
{
	struct cs_pend *pe = w->sl_pe;
	const struct hwtr_cs_row *r;

	if (pe == NULL && !w->sl_late)
		return (hwtr_cs_writer_put(w, &w->scratch));
	r = pe != NULL ? &pe->rows[w->sl_i] : &w->late[w->nlate];
	if (r->v[CS_THREAD] != w->thread) {
		/* Not taken: a page taken for it stays empty until used. */
		return (cs_fail(w, "calls: row %lld is not one of thread %lld",
		    (long long)r->v[CS_ID], (long long)w->thread));
	}
	if (w->sym != NULL && hwtr_cs_sym_stream_put(w->sym, r) < 0)
		return (-1);
	if (pe == NULL) {
		w->nlate++;
		return (w->nlate == CS_LATE_MAX ? cs_flush_late(w) : 0);
	}
	/* Where put would have put it: a pending page with room. */
	assert(pe->n < HWTR_CS_PAGE && !pe->have[w->sl_i]);
	assert(r->v[CS_ID] - w->base ==
	    pe->pno * HWTR_CS_PAGE + (int64_t)w->sl_i);
	pe->have[w->sl_i] = 1;
	w->hint = pe;
	if (++pe->n == HWTR_CS_PAGE)
		return (cs_flush_pend(w, pe));
	return (0);
}

int
hwtr_cs_writer_finish(struct hwtr_cs_writer *w)
{
	int rc;

	if ((rc = cs_end_thread(w)) < 0)
		return (rc);
	if (w->sym != NULL)
		return (hwtr_cs_sym_stream_finish(w->sym));
	return (hwtr_cs_sym_build(w->db, w->jq, w->err, sizeof(w->err)));
}
