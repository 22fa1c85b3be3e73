/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * hwtrace report: one HTML page of a run.  The data are the answers of the
 * verbs (summary, threads, bt, last, hot by function and by line,
 * coverage), each rendered as the JSON hwtrace query --format json writes,
 * plus what the database records of the losses (events) and of the
 * images' debug information, the flame graph and the timelines
 * (q_report_graph.c), and the source text of the lines bt and last name.
 * They go into the page as one JSON object in a <script
 * type="application/json"> element, after which the page's script (the
 * drawing libraries and the page's own code, q_report_asset.c) draws it.
 */

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "q_int.h"
#include "q_report.h"

/* The most rows of a table with no bound of its own (threads, images). */
#define RP_MAX_ROWS	1000

struct rp {
	struct hwtr_q	*q;
	const struct hwtr_q_report_opts *o;
	struct q_str	*out;		/* the data object */
	int64_t		timeout;
};

/* ,"key": */
static void
rp_key(struct rp *rp, const char *key)
{
	if (rp->out->len > 0 && rp->out->p[rp->out->len - 1] != '{')
		q_str_add(rp->out, ",", 1);
	hwtr_json_quote(q_str_put, rp->out, key);
	q_str_add(rp->out, ":", 1);
}

/* A section that could not be made: null, and "KEY_error": the reason. */
static void
rp_failed(struct rp *rp, const char *key, const char *why)
{
	char ek[64];

	rp_key(rp, key);
	q_str_puts(rp->out, "null");
	snprintf(ek, sizeof(ek), "%s_error", key);
	rp_key(rp, ek);
	hwtr_json_quote(q_str_put, rp->out, why);
}

/* @res as the JSON array of objects query --format json writes. */
static int
rp_res(struct rp *rp, const char *key, const struct hwtr_q_res *res)
{
	char *buf;
	size_t len;
	int rc;

	if ((rc = hwtr_q_res_format(res, HWTR_Q_FMT_JSON, 0, &buf, &len)) < 0)
		return (q_fail(rp->q, rc, "report: out of memory"));
	rp_key(rp, key);
	/* The formatter ends its output with a newline. */
	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
		len--;
	q_str_add(rp->out, buf, len);
	free(buf);
	return (0);
}

/*
 * Keep the first @max rows of @res (the page's bound on a table), and say
 * under "KEY_rows" how many there were.
 */
static void
rp_cut(struct rp *rp, const char *key, struct hwtr_q_res *res, size_t max)
{
	char ck[64];
	size_t n = hwtr_q_res_nrows(res);

	if (n <= max)
		return;
	res->ncells = max * res->ncols;
	snprintf(ck, sizeof(ck), "%s_rows", key);
	rp_key(rp, ck);
	q_str_printf(rp->out, "%zu", n);
}

/*
 * The answer of @req under KEY, at most @max rows; kept in *@keep when
 * not NULL.  A verb that fails leaves its reason on the page, unless
 * memory ran out.
 */
static int
rp_verb(struct rp *rp, const char *key, struct hwtr_q_req *req,
    struct hwtr_q_res **keep, size_t max)
{
	struct hwtr_q_res *res = NULL;
	int rc;

	req->sql_timeout_ms = rp->timeout;
	if ((rc = hwtr_q_run(rp->q, req, &res)) < 0) {
		if (rc == -HWTR_E_NOMEM)
			return (rc);
		rp_failed(rp, key, hwtr_q_errmsg(rp->q));
		return (0);
	}
	rp_cut(rp, key, res, max);
	rc = rp_res(rp, key, res);
	if (keep != NULL && rc == 0)
		*keep = res;
	else
		hwtr_q_res_free(res);
	return (rc);
}

/*
 * bt or last (@req) of the threads a reader looks at first, at most
 * @rp->o->threads of them: those killed by a signal, then the last to
 * run; their rows in one table under KEY, kept in *@keep.
 */
static int
rp_threads_verb(struct rp *rp, const char *key, struct hwtr_q_req *req,
    struct hwtr_q_res **keep)
{
	struct hwtr_q_res *ids = NULL, *one = NULL, *all = NULL;
	enum hwtr_q_type t;
	const char *cell;
	size_t i, r, c;
	int rc = 0;

	*keep = NULL;
	if ((rc = q_select(rp->q, &ids, "SELECT id FROM threads WHERE blocks > "
	    "0 ORDER BY exit_kind = 'signal' DESC, last_ns DESC, id LIMIT ?1",
	    "i", rp->o->threads)) < 0)
		return (rc);
	req->sql_timeout_ms = rp->timeout;
	for (i = 0; i < hwtr_q_res_nrows(ids); i++) {
		req->thread = strtoll(hwtr_q_res_cell(ids, i, 0, NULL), NULL, 10);
		if ((rc = hwtr_q_run(rp->q, req, &one)) < 0)
			break;
		if (all == NULL && (rc = q_res_new(&all, one->ncols,
		    (const char *const *)one->names)) < 0)
			break;
		for (r = 0; rc == 0 && r < hwtr_q_res_nrows(one); r++)
			for (c = 0; rc == 0 && c < one->ncols; c++) {
				cell = hwtr_q_res_cell(one, r, c, &t);
				rc = q_res_push(all, t, cell);
			}
		hwtr_q_res_free(one);
		one = NULL;
	}
	hwtr_q_res_free(ids);
	if (rc == -HWTR_E_NOMEM)
		goto out;
	if (rc < 0) {
		rp_failed(rp, key, hwtr_q_errmsg(rp->q));
		rc = 0;
		goto out;
	}
	if (all != NULL && (rc = rp_res(rp, key, all)) == 0) {
		*keep = all;
		all = NULL;
	}
out:
	hwtr_q_res_free(all);
	return (rc);
}

/* The rows of @sql (no parameters) under KEY. */
static int
rp_sql(struct rp *rp, const char *key, const char *sql)
{
	struct hwtr_q_res *res = NULL;
	int rc;

	if ((rc = q_select(rp->q, &res, sql, NULL)) < 0) {
		if (rc == -HWTR_E_NOMEM)
			return (rc);
		rp_failed(rp, key, hwtr_q_errmsg(rp->q));
		return (0);
	}
	rc = rp_res(rp, key, res);
	hwtr_q_res_free(res);
	return (rc);
}

/*
 * The source text of the "file:line" cells in column @col of @res, as
 * "place": "text" pairs of the object being written; only files that
 * exist here (a relative path from the current directory, as DWARF
 * recorded it), read once each.
 */
static void
rp_sources(struct rp *rp, const struct hwtr_q_res *res, size_t col,
    struct q_str *seen)
{
	char path[4096], ebuf[HWTR_ERRMSG_MAX], *buf, *p, *nl;
	const char *place, *colon;
	struct stat st;
	size_t r, len;
	long line, n;
	FILE *fp;
	int fd;

	for (r = 0; res != NULL && r < hwtr_q_res_nrows(res); r++) {
		place = hwtr_q_res_cell(res, r, col, NULL);
		if (place == NULL || (colon = strrchr(place, ':')) == NULL ||
		    (size_t)(colon - place) >= sizeof(path) ||
		    (line = strtol(colon + 1, NULL, 10)) <= 0)
			continue;
		/* Each place once: "\nPLACE\n" in @seen. */
		snprintf(path, sizeof(path), "\n%s\n", place);
		if (seen->p != NULL && strstr(seen->p, path) != NULL)
			continue;
		q_str_puts(seen, path + (seen->len > 0));
		q_str_add(seen, "", 0);
		if (seen->err)
			return;
		seen->p[seen->len] = '\0';
		memcpy(path, place, (size_t)(colon - place));
		path[colon - place] = '\0';
		if ((fd = hwtr_in_open(path, &st, ebuf, sizeof(ebuf))) < 0)
			continue;
		if ((fp = fdopen(fd, "r")) == NULL) {
			close(fd);
			continue;
		}
		buf = NULL;
		len = 0;
		for (n = 1; getline(&buf, &len, fp) > 0; n++)
			if (n == line) {
				if ((nl = strchr(buf, '\n')) != NULL)
					*nl = '\0';
				for (p = buf; *p != '\0'; p++)
					if ((unsigned char)*p < 0x20)
						*p = ' ';
				rp_key(rp, place);
				hwtr_json_quote(q_str_put, rp->out, buf);
				break;
			}
		free(buf);
		fclose(fp);
	}
}

/*
 * Coverage of the program's own files (hwtr_path_system() says which are
 * the system's): coverage's rows of functions whose line is in such a
 * file, and per file the functions entered and the lines run.
 */
static int
rp_coverage(struct rp *rp)
{
	static const char *const fcols[] = { "file", "functions", "entered",
	    "lines_hit", "lines_total" };
	struct hwtr_q_res *cov = NULL, *own = NULL, *files = NULL;
	struct hwtr_q_req req;
	const char *line, *colon, *cell;
	size_t r, c, nf = 0, i;
	struct { char *file; int64_t n, ent, hit, tot; } *f = NULL, *nfp;
	int rc;

	hwtr_q_req_init(&req, HWTR_Q_COVERAGE);
	req.sql_timeout_ms = rp->timeout;
	if ((rc = hwtr_q_run(rp->q, &req, &cov)) < 0) {
		if (rc == -HWTR_E_NOMEM)
			return (rc);
		rp_failed(rp, "coverage", hwtr_q_errmsg(rp->q));
		return (0);
	}
	if ((rc = q_res_new(&own, cov->ncols, (const char *const *)
	    cov->names)) < 0 || (rc = q_res_new(&files, HWTR_NELEM(fcols),
	    fcols)) < 0)
		goto out;
	for (r = 0; r < hwtr_q_res_nrows(cov); r++) {
		line = hwtr_q_res_cell(cov, r, 3, NULL);
		if (line == NULL || (colon = strrchr(line, ':')) == NULL)
			continue;
		for (i = 0; i < nf; i++)
			if (strncmp(f[i].file, line, (size_t)(colon - line)) ==
			    0 && f[i].file[colon - line] == '\0')
				break;
		if (i == nf) {
			if ((nfp = realloc(f, (nf + 1) * sizeof(*f))) == NULL)
				goto nomem;
			f = nfp;
			memset(&f[nf], 0, sizeof(*f));
			if ((f[nf].file = strndup(line, (size_t)(colon -
			    line))) == NULL)
				goto nomem;
			nf++;
		}
		if (hwtr_path_system(f[i].file))
			continue;
		f[i].n++;
		f[i].ent += strtoll(hwtr_q_res_cell(cov, r, 4, NULL), NULL,
		    10) > 0;
		f[i].hit += strtoll(hwtr_q_res_cell(cov, r, 6, NULL), NULL, 10);
		f[i].tot += strtoll(hwtr_q_res_cell(cov, r, 7, NULL), NULL, 10);
		if (hwtr_q_res_nrows(own) >= (size_t)rp->o->top * 25)
			continue;
		for (c = 0; c < cov->ncols; c++) {
			enum hwtr_q_type t;

			cell = hwtr_q_res_cell(cov, r, c, &t);
			if ((rc = q_res_push(own, t, cell)) < 0)
				goto out;
		}
	}
	for (i = 0; i < nf; i++) {
		if (f[i].n == 0)
			continue;
		rc = q_res_push(files, HWTR_Q_TEXT, f[i].file);
		rc |= q_res_push_int(files, f[i].n);
		rc |= q_res_push_int(files, f[i].ent);
		rc |= q_res_push_int(files, f[i].hit);
		rc |= q_res_push_int(files, f[i].tot);
		if (rc != 0)
			goto nomem;
	}
	rp_cut(rp, "coverage_files", files, RP_MAX_ROWS);
	if ((rc = rp_res(rp, "coverage_files", files)) == 0)
		rc = rp_res(rp, "coverage", own);
	goto out;
nomem:
	rc = q_fail(rp->q, -HWTR_E_NOMEM, "out of memory");
out:
	for (i = 0; i < nf; i++)
		free(f[i].file);
	free(f);
	hwtr_q_res_free(cov);
	hwtr_q_res_free(own);
	hwtr_q_res_free(files);
	return (rc);
}

/* What the trace lost, and the images' debug information. */
#define RP_LOSS_SQL							\
	"SELECT e.thread, t.tid, e.kind, e.seq, e.insn, e.offset, e.detail "	\
	"FROM events e LEFT JOIN threads t ON t.id = e.thread WHERE e.kind "	\
	"IN ('lost', 'overflow', 'decode-error') ORDER BY e.id LIMIT 200"
/* The two totals of bytes summed by q_sum_int(), put in as numbers. */
#define RP_LOSS_COUNT_SQL						\
	"SELECT kind, count(*) AS count FROM events WHERE kind IN ('lost', "	\
	"'overflow', 'decode-error', 'disabled', 'async-disabled') GROUP BY "	\
	"kind UNION ALL SELECT 'lost_bytes', %lld UNION ALL SELECT "	\
	"'undecoded_bytes', %lld UNION ALL SELECT 'streams_not_ok', "	\
	"count(*) FROM streams WHERE status <> 'ok'"
#define RP_IMAGES_SQL							\
	"SELECT i.path, i.kind, i.size, i.present, i.has_symbols, "	\
	"i.has_lines, (SELECT count(*) FROM symbols s WHERE s.image = i.id "	\
	"AND s.origin = 'debug') AS debug_symbols, (SELECT count(*) FROM "	\
	"blocks b WHERE b.image = i.id) AS blocks FROM images i ORDER BY i.id " \
	"LIMIT 1000"
#define RP_META_SQL							\
	"SELECT key, value FROM meta WHERE key IN ('argv', 'exit_kind', "	\
	"'exit_value', 'capture_source', 'start_ns', 'end_ns', "	\
	"'archive_complete', 'cpu', 'source_archive', 'hwtrace_version')"

/* What the trace lost: events by kind, bytes lost and not decoded. */
static int
rp_losses(struct rp *rp)
{
	int64_t lost, undec;
	char *sql;
	int rc;

	if ((rc = q_sum_int(rp->q, "report", "streams", "lost_bytes",
	    Q_WHO_STREAM, NULL, 0, &lost)) < 0 ||
	    (rc = q_sum_int(rp->q, "report", "streams", "undecoded_bytes",
	    Q_WHO_STREAM, NULL, 0, &undec)) < 0)
		return (rc);
	if (asprintf(&sql, RP_LOSS_COUNT_SQL, (long long)lost,
	    (long long)undec) < 0)
		return (q_fail(rp->q, -HWTR_E_NOMEM, "out of memory"));
	rc = rp_sql(rp, "losses", sql);
	free(sql);
	return (rc);
}

/* The verbs' sections: summary, threads, bt, last, hot, coverage. */
static int
rp_verbs(struct rp *rp)
{
	struct hwtr_q_res *bt = NULL, *last = NULL;
	struct q_str seen = { 0 };
	struct hwtr_q_req req;
	int rc;

	hwtr_q_req_init(&req, HWTR_Q_SUMMARY);
	if ((rc = rp_verb(rp, "summary", &req, NULL, SIZE_MAX)) < 0)
		return (rc);
	hwtr_q_req_init(&req, HWTR_Q_THREADS);
	if ((rc = rp_verb(rp, "threads", &req, NULL, RP_MAX_ROWS)) < 0)
		return (rc);
	hwtr_q_req_init(&req, HWTR_Q_BT);
	if ((rc = rp_threads_verb(rp, "bt", &req, &bt)) < 0)
		return (rc);
	hwtr_q_req_init(&req, HWTR_Q_LAST);
	req.n = 24;
	if ((rc = rp_threads_verb(rp, "last", &req, &last)) < 0)
		goto out;
	hwtr_q_req_init(&req, HWTR_Q_HOT);
	req.n = rp->o->top;
	if ((rc = rp_verb(rp, "hot", &req, NULL, SIZE_MAX)) < 0)
		goto out;
	hwtr_q_req_init(&req, HWTR_Q_HOT);
	req.n = rp->o->top;
	req.by = "line";
	if ((rc = rp_verb(rp, "hot_lines", &req, NULL, SIZE_MAX)) < 0)
		goto out;
	if ((rc = rp_coverage(rp)) < 0)
		goto out;
	/* bt's and last's line column: their source text. */
	rp_key(rp, "sources");
	q_str_add(rp->out, "{", 1);
	rp_sources(rp, bt, 4, &seen);
	rp_sources(rp, last, 4, &seen);
	q_str_add(rp->out, "}", 1);
	rc = seen.err ? q_fail(rp->q, -HWTR_E_NOMEM, "out of memory") : 0;
out:
	free(seen.p);
	hwtr_q_res_free(bt);
	hwtr_q_res_free(last);
	return (rc);
}

/* The drawings, each under the time limit the verbs have. */
static int
rp_graphs(struct rp *rp)
{
	int64_t pruned = 0;
	size_t mark;
	int rc;

	rp_key(rp, "flame");
	mark = rp->out->len;
	q_limit_begin(rp->q, rp->timeout, 0);
	rc = q_rp_flame(rp->q, rp->out, rp->o->max_nodes, &pruned);
	if (q_limit_end(rp->q))
		rc = q_fail(rp->q, -HWTR_E_LIMIT, "the flame graph: stopped "
		    "at the time limit");
	if (rc < 0) {
		if (rc == -HWTR_E_NOMEM)
			return (rc);
		rp->out->len = mark;
		q_str_puts(rp->out, "null");
		rp_key(rp, "flame_error");
		hwtr_json_quote(q_str_put, rp->out, hwtr_q_errmsg(rp->q));
	}
	rp_key(rp, "flame_gaps");
	mark = rp->out->len;
	if ((rc = q_rp_flame_gaps(rp->q, rp->out)) < 0) {
		if (rc == -HWTR_E_NOMEM)
			return (rc);
		rp->out->len = mark;
		q_str_puts(rp->out, "[]");
	}
	rp_key(rp, "flame_min_insns");
	q_str_printf(rp->out, "%lld", (long long)pruned);
	rp_key(rp, "timeline");
	mark = rp->out->len;
	q_limit_begin(rp->q, rp->timeout, 0);
	rc = q_rp_timeline(rp->q, rp->out, rp->o->columns, rp->o->depth,
	    rp->o->threads);
	if (q_limit_end(rp->q))
		rc = q_fail(rp->q, -HWTR_E_LIMIT, "the timeline: stopped at "
		    "the time limit");
	if (rc < 0) {
		if (rc == -HWTR_E_NOMEM)
			return (rc);
		rp->out->len = mark;
		q_str_puts(rp->out, "null");
		rp_key(rp, "timeline_error");
		hwtr_json_quote(q_str_put, rp->out, hwtr_q_errmsg(rp->q));
	}
	return (0);
}

/*
 * The page: the data (every '<' written \u003c, so that no text in it can
 * end its element), then the script.  The script must not hold
 * "</script" itself (the build's libraries do not).
 */
static int
rp_page(struct hwtr_q *q, const struct q_str *data, struct q_str *page)
{
	const char *js, *p;
	size_t jslen, i;

	js = q_rp_asset(&jslen);
	if (jslen == 0)
		return (q_fail(q, -HWTR_E_INVAL, "report: this hwtrace was "
		    "built without the report's script (build/report/"
		    "report.js)"));
	for (p = js; (p = memchr(p, '<', jslen - (size_t)(p - js))) != NULL;
	    p++)
		if ((size_t)(js + jslen - p) >= 8 &&
		    strncasecmp(p, "</script", 8) == 0)
			return (q_fail(q, -HWTR_E_INVAL, "report: the page's "
			    "script holds \"</script\""));
	q_str_puts(page, "<!DOCTYPE html>\n<html lang=\"en\"><head>"
	    "<meta charset=\"utf-8\">\n<meta name=\"viewport\" "
	    "content=\"width=device-width\">\n<title>hwtrace report</title>\n"
	    "</head><body>\n<div id=\"app\">hwtrace report: this page needs "
	    "JavaScript.</div>\n<script type=\"application/json\" "
	    "id=\"hwtrace-data\">");
	for (i = 0; i < data->len; i++)
		if (data->p[i] == '<')
			q_str_puts(page, "\\u003c");
		else
			q_str_add(page, &data->p[i], 1);
	q_str_puts(page, "</script>\n<script>\n");
	q_str_add(page, js, jslen);
	q_str_puts(page, "\n</script>\n</body></html>\n");
	return (page->err ? q_fail(q, -HWTR_E_NOMEM, "out of memory") : 0);
}

int
hwtr_q_report(struct hwtr_q *q, const struct hwtr_q_report_opts *opts,
    const char *path, size_t *sizep)
{
	struct hwtr_q_report_opts o = { 0 };
	struct q_str data = { 0 }, page = { 0 };
	struct hwtr_q_res *res = NULL;
	struct hwtr_q_req req;
	struct rp rp;
	int rc;

	if (opts != NULL)
		o = *opts;
	o.columns = o.columns > 0 ? o.columns : 600;
	o.depth = o.depth > 0 ? o.depth : 8;
	o.threads = o.threads > 0 ? o.threads : 16;
	o.top = o.top > 0 ? o.top : 40;
	o.max_nodes = o.max_nodes > 0 ? o.max_nodes : 20000;
	memset(&rp, 0, sizeof(rp));
	rp.q = q;
	rp.o = &o;
	rp.out = &data;
	rp.timeout = o.timeout_ms == 0 ? -1 : o.timeout_ms < 0 ? 0 :
	    o.timeout_ms;
	q->msg[0] = '\0';
	/* A partial database is indexed whole first, as any verb needs. */
	hwtr_q_req_init(&req, HWTR_Q_SUMMARY);
	req.sql_timeout_ms = rp.timeout;
	if ((rc = hwtr_q_run(q, &req, &res)) < 0)
		return (rc);
	hwtr_q_res_free(res);
	q_str_add(&data, "{", 1);
	if ((rc = rp_sql(&rp, "meta", RP_META_SQL)) < 0 ||
	    (rc = rp_losses(&rp)) < 0 ||
	    (rc = rp_sql(&rp, "loss_events", RP_LOSS_SQL)) < 0 ||
	    (rc = rp_sql(&rp, "images", RP_IMAGES_SQL)) < 0 ||
	    (rc = rp_verbs(&rp)) < 0 || (rc = rp_graphs(&rp)) < 0)
		goto out;
	rp_key(&rp, "limits");
	q_str_printf(&data, "{\"columns\":%lld,\"depth\":%lld,\"threads\":"
	    "%lld,\"top\":%lld,\"max_nodes\":%lld}", (long long)o.columns,
	    (long long)o.depth, (long long)o.threads, (long long)o.top,
	    (long long)o.max_nodes);
	q_str_add(&data, "}", 1);
	if (data.err) {
		rc = q_fail(q, -HWTR_E_NOMEM, "out of memory");
		goto out;
	}
	if ((rc = rp_page(q, &data, &page)) < 0)
		goto out;
	if ((rc = q_write_file(q, path, page.p, page.len)) < 0)
		goto out;
	if (sizep != NULL)
		*sizep = page.len;
out:
	free(data.p);
	free(page.p);
	return (rc);
}
