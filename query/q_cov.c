/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Coverage: which functions and source lines ran, and how often.
 *
 * The database keeps each static block once with its execution count, so
 * the count of an instruction is the sum of the counts of the blocks that
 * contain it (blocks entered at different points overlap).  One sweep over
 * the blocks of an image, sorted by address, gives that count for every
 * line-table row and every function entry: no expansion of the execution
 * order is needed, whatever the length of the trace.
 */

#include <stdlib.h>
#include <string.h>

#include "q_int.h"

struct cov_ev {
	int64_t		addr;
	int64_t		delta;
};

/* Cumulative count from addr on (until the next point). */
struct cov_pt {
	int64_t		addr;
	int64_t		count;
};

struct cov_line {
	int64_t		file;
	int64_t		line;
	int64_t		count;
	const char	*path;		/* borrowed from the file table */
};

struct cov_fn {
	int64_t		file, line, entries;
	char		*name;
	const char	*path;
};

/* A row of files. */
struct cov_file {
	int64_t		id;
	char		*path;
};

struct cov {
	struct cov_pt	*pts;
	size_t		npts;
	struct cov_line	*lines;
	size_t		nlines, caplines;
	struct cov_fn	*fns;
	size_t		nfns, capfns;
	struct cov_file	*paths;		/* files, by id */
	int64_t		npaths;
};

static int
cov_ev_cmp(const void *a, const void *b)
{
	const struct cov_ev *x = a, *y = b;

	return (x->addr < y->addr ? -1 : x->addr > y->addr);
}

/* Execution count of the instruction at image address @a. */
static int64_t
cov_count(const struct cov *cv, int64_t a)
{
	size_t lo = 0, hi = cv->npts, mid;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (cv->pts[mid].addr <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (lo == 0 ? 0 : cv->pts[lo - 1].count);
}

/*
 * The counts: of every thread (blocks.exec_count), of thread ?2
 * (block_counts), or (a range, or --depth) counted once into temp.q_cnt
 * under key ?2 (q_depth_counts), read by its primary key; ?3 and ?4
 * unused.  (A range's exec_order was read twice per image in one
 * statement each: 49 CPU-s, 2 min 52 s for 100 M instructions of gzip.)
 */
#define COV_CNT_PTS							\
	"SELECT b.image_addr, b.size, c.count FROM temp.q_cnt c JOIN "	\
	"blocks b ON b.id = c.block WHERE c.thread = ?2 AND ?3 = ?3 AND "	\
	"?4 = ?4 AND b.image = ?1 AND b.image_addr IS NOT NULL"
#define COV_CNT_FNS							\
	"SELECT s.name, s.addr, s.size, " Q_CNT_FN_SUM " FROM symbols s "	\
	"WHERE ?3 = ?3 AND ?4 = ?4 AND s.image = ?1 AND s.kind IN "	\
	"('func', 'ifunc') ORDER BY s.addr, s.name"

static void
cov_bind(sqlite3_stmt *st, int64_t thread, const struct q_rng *r)
{
	if (r->on) {
		sqlite3_bind_int64(st, 2, r->thread);
		sqlite3_bind_int64(st, 3, r->seq_lo);
		sqlite3_bind_int64(st, 4, r->seq_hi);
	} else if (thread >= 0)
		sqlite3_bind_int64(st, 2, thread);
}

/* Build the count points of image @image from its blocks. */
static int
cov_points(struct hwtr_q *q, struct cov *cv, int64_t image, int64_t thread,
    const struct q_rng *r)
{
	sqlite3_stmt *st;
	struct cov_ev *ev = NULL;
	size_t nev_ = 0, cap = 0, i, k;
	int64_t cum = 0;
	int rc;

	free(cv->pts);
	cv->pts = NULL;
	cv->npts = 0;
	if ((rc = q_prepare(q, &st, r->cnt ? COV_CNT_PTS : thread < 0 ?
	    "SELECT image_addr, size, exec_count FROM blocks WHERE image = ?1 "
	    "AND image_addr IS NOT NULL" : "SELECT b.image_addr, b.size, "
	    "c.count FROM blocks b JOIN block_counts c ON c.thread = ?2 AND "
	    "c.block = b.id WHERE b.image = ?1 AND b.image_addr IS NOT NULL"))
	    < 0)
		return (rc);
	sqlite3_bind_int64(st, 1, image);
	cov_bind(st, thread, r);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t addr = sqlite3_column_int64(st, 0);
		int64_t size = sqlite3_column_int64(st, 1);
		int64_t count = sqlite3_column_int64(st, 2);
		int64_t end;

		/*
		 * A damaged database's rows: a count below 1 is a block that
		 * did not run (as hot takes it), a size below 0 or past the
		 * end of int64 covers nothing.
		 */
		if (count <= 0)
			continue;
		if (size < 0 || __builtin_add_overflow(addr, size, &end))
			end = addr;
		if (hwtr_grow(&ev, &cap, nev_ + 2, sizeof(*ev)) < 0) {
			sqlite3_finalize(st);
			free(ev);
			return (q_fail(q, -HWTR_E_NOMEM, "out of memory"));
		}
		ev[nev_].addr = addr;
		ev[nev_].delta = count;
		ev[nev_ + 1].addr = end;
		ev[nev_ + 1].delta = -count;
		nev_ += 2;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		free(ev);
		return (q_dbfail(q, "coverage: cannot read blocks"));
	}
	if (nev_ == 0)
		return (0);
	qsort(ev, nev_, sizeof(*ev), cov_ev_cmp);
	if ((cv->pts = malloc(nev_ * sizeof(*cv->pts))) == NULL) {
		free(ev);
		return (q_fail(q, -HWTR_E_NOMEM, "out of memory"));
	}
	for (i = 0, k = 0; i < nev_; i++) {
		if (__builtin_add_overflow(cum, ev[i].delta, &cum)) {
			rc = q_fail(q, -HWTR_E_FORMAT, "blocks: the counts of "
			    "blocks at %#llx add up past 2^63 (a damaged "
			    "database?)", (unsigned long long)ev[i].addr);
			free(ev);
			return (rc);
		}
		if (k > 0 && cv->pts[k - 1].addr == ev[i].addr)
			cv->pts[k - 1].count = cum;
		else {
			cv->pts[k].addr = ev[i].addr;
			cv->pts[k++].count = cum;
		}
	}
	cv->npts = k;
	free(ev);
	return (0);
}

/*
 * The files' paths, in id order: a list, not an array indexed by id, so
 * that a damaged database's id (2^31, 2^63 - 1) costs nothing; a NULL
 * path is left out.
 */
static int
cov_paths(struct hwtr_q *q, struct cov *cv)
{
	struct cov_file *f;
	sqlite3_stmt *st;
	const char *path;
	int64_t n;
	int rc;

	if ((rc = q_int(q, &n, 0, "SELECT count(*) FROM files", NULL)) < 0)
		return (rc);
	if ((cv->paths = calloc((size_t)n + 1, sizeof(*cv->paths))) == NULL)
		return (q_fail(q, -HWTR_E_NOMEM, "out of memory"));
	if ((rc = q_prepare(q, &st, "SELECT id, path FROM files WHERE path "
	    "IS NOT NULL AND typeof(id) = 'integer' ORDER BY id")) < 0)
		return (rc);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && cv->npaths < n) {
		f = &cv->paths[cv->npaths];
		f->id = sqlite3_column_int64(st, 0);
		path = (const char *)sqlite3_column_text(st, 1);
		/* The first of ids that repeat. */
		if (cv->npaths > 0 && f[-1].id == f->id)
			continue;
		if (path == NULL || (f->path = strdup(path)) == NULL) {
			sqlite3_finalize(st);
			return (q_fail(q, -HWTR_E_NOMEM, "out of memory"));
		}
		cv->npaths++;
	}
	sqlite3_finalize(st);
	return (rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 :
	    q_dbfail(q, "cannot read files"));
}

static int
cov_file_cmp(const void *key, const void *elt)
{
	int64_t id = *(const int64_t *)key;
	const struct cov_file *f = elt;

	return (id < f->id ? -1 : id > f->id);
}

static const char *
cov_path(const struct cov *cv, int64_t id)
{
	const struct cov_file *f;

	f = cv->npaths > 0 ? bsearch(&id, cv->paths, (size_t)cv->npaths,
	    sizeof(*cv->paths), cov_file_cmp) : NULL;
	return (f != NULL ? f->path : NULL);
}

/* The images @spec names (id, key, path or file name), or all that ran. */
static int
cov_images(struct hwtr_q *q, const char *spec, struct hwtr_q_res **resp)
{
	struct hwtr_q_res *res;
	int rc;

	if (spec == NULL)
		return (q_select(q, resp, "SELECT id, path FROM images WHERE id "
		    "IN (SELECT DISTINCT image FROM blocks) ORDER BY id",
		    NULL));
	rc = q_select(q, &res, "SELECT id, path FROM images WHERE "
	    "CAST(id AS TEXT) = ?1 OR key = ?1 OR path = ?1 OR "
	    "path LIKE '%/' || ?1 ORDER BY id", "s", spec);
	if (rc < 0)
		return (rc);
	if (hwtr_q_res_nrows(res) == 0) {
		struct q_str names = { 0 };
		size_t i;

		hwtr_q_res_free(res);
		if ((rc = q_select(q, &res, "SELECT coalesce(path, key) FROM "
		    "images ORDER BY id", NULL)) < 0)
			return (rc);
		for (i = 0; i < hwtr_q_res_nrows(res); i++)
			q_str_printf(&names, "%s'%s'", i ? ", " : "",
			    hwtr_q_res_cell(res, i, 0, NULL));
		hwtr_q_res_free(res);
		rc = q_fail(q, -HWTR_E_NOENT, "coverage: no image '%s' "
		    "(images: %s)", spec, names.p ? names.p : "none");
		free(names.p);
		return (rc);
	}
	*resp = res;
	return (0);
}

static int
cov_add_line(struct cov *cv, int64_t file, int64_t line, int64_t count)
{
	if (hwtr_grow(&cv->lines, &cv->caplines, cv->nlines + 1,
	    sizeof(*cv->lines)) < 0)
		return (-HWTR_E_NOMEM);
	cv->lines[cv->nlines].file = file;
	cv->lines[cv->nlines].line = line;
	cv->lines[cv->nlines].count = count;
	cv->lines[cv->nlines].path = cov_path(cv, file);
	cv->nlines++;
	return (0);
}

static int
cov_add_fn(struct cov *cv, int64_t file, int64_t line, int64_t entries,
    const char *name)
{
	struct cov_fn *nf;

	if (hwtr_grow(&cv->fns, &cv->capfns, cv->nfns + 1,
	    sizeof(*cv->fns)) < 0)
		return (-HWTR_E_NOMEM);
	nf = &cv->fns[cv->nfns];
	nf->file = file;
	nf->line = line;
	nf->entries = entries;
	nf->path = cov_path(cv, file);
	if ((nf->name = strdup(name)) == NULL)
		return (-HWTR_E_NOMEM);
	cv->nfns++;
	return (0);
}

static int
cov_line_cmp(const void *a, const void *b)
{
	const struct cov_line *x = a, *y = b;
	int c = strcmp(x->path ? x->path : "", y->path ? y->path : "");

	if (c != 0)
		return (c);
	return (x->line < y->line ? -1 : x->line > y->line);
}

static int
cov_fn_cmp(const void *a, const void *b)
{
	const struct cov_fn *x = a, *y = b;
	int c = strcmp(x->path ? x->path : "", y->path ? y->path : "");

	if (c != 0)
		return (c);
	if (x->line != y->line)
		return (x->line < y->line ? -1 : 1);
	return (strcmp(x->name, y->name));
}

/* Write the lcov tracefile: one record per source file, lines merged. */
static int
cov_lcov(struct hwtr_q *q, struct cov *cv, const char *out)
{
	struct q_str o = { 0 };
	size_t i, j, f, k, lf, lh, fnf, fnh;
	const char *path;
	int rc;

	/*
	 * Without a line table there is nothing lcov can hold (its records
	 * are per source file): the function table is still the answer;
	 * say why the tracefile is missing rather than fail the whole verb.
	 */
	if (cv->nlines == 0) {
		hwtr_logf(&q->log, HWTR_LOG_WARN, "coverage: '%s' not written: "
		    "no source lines, the images have no DWARF line table "
		    "(build with -g); the table lists functions only", out);
		return (0);
	}
	qsort(cv->lines, cv->nlines, sizeof(*cv->lines), cov_line_cmp);
	qsort(cv->fns, cv->nfns, sizeof(*cv->fns), cov_fn_cmp);
	/* Merge rows of one line: the line ran as often as its best row. */
	for (i = 0, k = 0; i < cv->nlines; i++) {
		if (k > 0 && cov_line_cmp(&cv->lines[k - 1], &cv->lines[i]) ==
		    0) {
			if (cv->lines[i].count > cv->lines[k - 1].count)
				cv->lines[k - 1].count = cv->lines[i].count;
		} else
			cv->lines[k++] = cv->lines[i];
	}
	cv->nlines = k;
	q_str_puts(&o, "TN:\n");
	for (i = 0, f = 0; i < cv->nlines; i = j) {
		path = cv->lines[i].path ? cv->lines[i].path : "";
		for (j = i; j < cv->nlines && strcmp(cv->lines[j].path ?
		    cv->lines[j].path : "", path) == 0; j++)
			;
		q_str_printf(&o, "SF:%s\n", path);
		while (f < cv->nfns && strcmp(cv->fns[f].path ?
		    cv->fns[f].path : "", path) < 0)
			f++;
		fnf = fnh = 0;
		for (k = f; k < cv->nfns && strcmp(cv->fns[k].path ?
		    cv->fns[k].path : "", path) == 0; k++)
			q_str_printf(&o, "FN:%lld,%s\n",
			    (long long)cv->fns[k].line, cv->fns[k].name);
		for (k = f; k < cv->nfns && strcmp(cv->fns[k].path ?
		    cv->fns[k].path : "", path) == 0; k++) {
			q_str_printf(&o, "FNDA:%lld,%s\n",
			    (long long)cv->fns[k].entries, cv->fns[k].name);
			fnf++;
			fnh += cv->fns[k].entries > 0;
		}
		q_str_printf(&o, "FNF:%zu\nFNH:%zu\n", fnf, fnh);
		lf = lh = 0;
		for (k = i; k < j; k++) {
			q_str_printf(&o, "DA:%lld,%lld\n",
			    (long long)cv->lines[k].line,
			    (long long)cv->lines[k].count);
			lf++;
			lh += cv->lines[k].count > 0;
		}
		q_str_printf(&o, "LF:%zu\nLH:%zu\nend_of_record\n", lf, lh);
	}
	if (o.err) {
		free(o.p);
		return (q_fail(q, -HWTR_E_NOMEM, "out of memory"));
	}
	rc = q_write_file(q, out, o.p, o.len);
	free(o.p);
	return (rc);
}

/*
 * One image: a row per function (executed or not), and the line-table
 * rows with their counts collected into @cv for lcov.
 */
static int
cov_image(struct hwtr_q *q, struct cov *cv, int64_t image, const char *ipath,
    int64_t thread, const struct q_rng *r, struct hwtr_q_res *res)
{
	sqlite3_stmt *fs = NULL, *ls = NULL;
	int64_t faddr, fsize, fend, step, a, cnt, first_line, first_file;
	int64_t hit, total, lastcnt;
	size_t l0;
	const char *fname;
	int rc;

	if ((rc = cov_points(q, cv, image, thread, r)) < 0)
		return (rc);
	/*
	 * A count below 0 (a damaged database) as none, as cov_points()
	 * takes it; instructions past 2^63 an error (q_sum_explain()).
	 */
	rc = q_prepare(q, &fs, r->cnt ? COV_CNT_FNS : thread < 0 ?
	    "SELECT s.name, s.addr, s.size, " Q_FN_SUM_ALL " FROM symbols s "
	    "WHERE s.image = ?1 AND s.kind IN ('func', 'ifunc') ORDER BY "
	    "s.addr, s.name" : "SELECT s.name, s.addr, s.size, "
	    Q_FN_SUM_THREAD " FROM symbols s WHERE s.image = ?1 AND s.kind IN "
	    "('func', 'ifunc') ORDER BY s.addr, s.name");
	if (rc == 0)
		rc = q_prepare(q, &ls, "SELECT addr, file, line FROM lines "
		    "WHERE image = ?1 AND addr >= ?2 AND addr < ?3 ORDER BY addr");
	if (rc < 0)
		goto out;
	sqlite3_bind_int64(fs, 1, image);
	cov_bind(fs, thread, r);
	while ((rc = sqlite3_step(fs)) == SQLITE_ROW) {
		fname = (const char *)sqlite3_column_text(fs, 0);
		faddr = sqlite3_column_int64(fs, 1);
		fsize = sqlite3_column_int64(fs, 2);
		/*
		 * A hostile image's symbol may claim to end past the last
		 * address: its lines are those up to there.
		 */
		step = fsize > 0 ? fsize : 1;
		fend = faddr > INT64_MAX - step ? INT64_MAX : faddr + step;
		first_line = first_file = -1;
		sqlite3_reset(ls);
		sqlite3_bind_int64(ls, 1, image);
		sqlite3_bind_int64(ls, 2, faddr);
		sqlite3_bind_int64(ls, 3, fend);
		l0 = cv->nlines;
		while ((rc = sqlite3_step(ls)) == SQLITE_ROW) {
			int64_t file = sqlite3_column_int64(ls, 1);
			int64_t line = sqlite3_column_int64(ls, 2);

			a = sqlite3_column_int64(ls, 0);
			if (first_line < 0) {
				first_line = line;
				first_file = file;
			}
			if (cov_add_line(cv, file, line, cov_count(cv, a)) < 0) {
				rc = q_fail(q, -HWTR_E_NOMEM, "out of memory");
				goto out;
			}
		}
		if (rc != SQLITE_DONE) {
			rc = q_dbfail(q, "coverage: cannot read lines");
			goto out;
		}
		/*
		 * Distinct lines of the function, hit when any of their rows
		 * ran: sort a copy of this function's rows.
		 */
		hit = total = 0;
		if (cv->nlines > l0) {
			struct cov_line *tmp;
			size_t n = cv->nlines - l0, i;

			if ((tmp = malloc(n * sizeof(*tmp))) == NULL) {
				rc = q_fail(q, -HWTR_E_NOMEM, "out of memory");
				goto out;
			}
			memcpy(tmp, cv->lines + l0, n * sizeof(*tmp));
			qsort(tmp, n, sizeof(*tmp), cov_line_cmp);
			for (i = 0; i < n; i++) {
				int same = i > 0 &&
				    cov_line_cmp(&tmp[i - 1], &tmp[i]) == 0;

				if (!same) {
					total++;
					lastcnt = 0;
				}
				if (tmp[i].count > 0 && lastcnt == 0)
					hit++;
				if (tmp[i].count > lastcnt)
					lastcnt = tmp[i].count;
			}
			free(tmp);
		}
		cnt = cov_count(cv, faddr);
		if (first_line >= 0 && cov_add_fn(cv, first_file, first_line,
		    cnt, fname) < 0) {
			rc = q_fail(q, -HWTR_E_NOMEM, "out of memory");
			goto out;
		}
		rc = q_res_push(res, HWTR_Q_TEXT, ipath);
		rc |= q_res_push(res, HWTR_Q_TEXT, fname);
		rc |= q_res_pushf(res, HWTR_Q_TEXT, "%#llx",
		    (unsigned long long)faddr);
		if (first_line >= 0 && cov_path(cv, first_file) != NULL)
			rc |= q_res_pushf(res, HWTR_Q_TEXT, "%s:%lld",
			    cov_path(cv, first_file), (long long)first_line);
		else
			rc |= q_res_push(res, HWTR_Q_NULL, NULL);
		rc |= q_res_push_int(res, cnt);
		rc |= q_res_push_int(res, sqlite3_column_int64(fs, 3));
		rc |= q_res_push_int(res, hit);
		rc |= q_res_push_int(res, total);
		if (rc != 0) {
			rc = q_fail(q, -HWTR_E_NOMEM, "out of memory");
			goto out;
		}
	}
	rc = rc == SQLITE_DONE ? 0 : q_dbfail(q, "coverage: cannot read "
	    "symbols");
out:
	sqlite3_finalize(fs);
	sqlite3_finalize(ls);
	return (rc);
}

int
q_cov(struct hwtr_q *q, const struct hwtr_q_req *req,
    struct hwtr_q_res **resp)
{
	static const char *const cols[] = { "image", "function", "address",
	    "line", "entries", "insns", "lines_hit", "lines_total" };
	struct hwtr_q_res *imgs = NULL, *res = NULL;
	struct q_rng r;
	struct cov cv;
	size_t i;
	int64_t k;
	int rc;

	*resp = NULL;
	memset(&cv, 0, sizeof(cv));
	if (req->thread >= 0 && (rc = q_check_thread(q, req->thread)) < 0)
		return (rc);
	if ((rc = q_range_depth(q, req, "coverage", &r, 1)) < 0)
		return (rc);
	if ((rc = cov_images(q, req->image, &imgs)) < 0)
		return (rc);
	if ((rc = cov_paths(q, &cv)) < 0)
		goto out;
	if ((rc = q_res_new(&res, HWTR_NELEM(cols), cols)) < 0) {
		q_fail(q, rc, "out of memory");
		goto out;
	}
	for (i = 0; i < hwtr_q_res_nrows(imgs); i++) {
		rc = cov_image(q, &cv, strtoll(hwtr_q_res_cell(imgs, i, 0,
		    NULL), NULL, 10), hwtr_q_res_cell(imgs, i, 1, NULL),
		    req->thread, &r, res);
		if (rc < 0)
			goto out;
	}
	if (req->lcov != NULL && (rc = cov_lcov(q, &cv, req->lcov)) < 0)
		goto out;
	*resp = res;
	res = NULL;
out:
	hwtr_q_res_free(res);
	hwtr_q_res_free(imgs);
	free(cv.pts);
	free(cv.lines);
	for (i = 0; i < cv.nfns; i++)
		free(cv.fns[i].name);
	free(cv.fns);
	for (k = 0; k < cv.npaths; k++)
		free(cv.paths[k].path);
	free(cv.paths);
	return (rc);
}
