/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * hwtrace fleet: questions across the runs exported to PostgreSQL, each
 * one statement over the schema of hwtrace-db(5)'s POSTGRESQL section
 * (so that what a verb answers, plain SQL can answer too), its rows put
 * into a query result and rendered by the query module's formatter.
 *
 * Functions are compared across runs by name (two builds of one program
 * have different symbols but the same function names), branches by the
 * functions and offsets of both ends and their kind.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "q_pg.h"

/* PostgreSQL's type oids of the integers (pg_type.h). */
#define PG_INT8OID	20
#define PG_INT2OID	21
#define PG_INT4OID	23

/* Parameters of a statement, and the text of its label conditions. */
struct fl_sql {
	struct q_str	s;
	const char	*p[64];
	int		n;
};

static void
fl_param(struct fl_sql *f, const char *v)
{
	if (f->n < (int)(sizeof(f->p) / sizeof(f->p[0])))
		f->p[f->n++] = v;
	else
		f->s.err = 1;
}

/* " AND <run has all the labels>" for the run column @col. */
static void
fl_labels(struct fl_sql *f, const char *col, const struct hwtr_pg_req *req)
{
	size_t i;

	for (i = 0; i < req->nlabels; i++) {
		fl_param(f, req->labels[i].key);
		fl_param(f, req->labels[i].value);
		q_str_printf(&f->s, " AND EXISTS (SELECT 1 FROM hwtrace.labels "
		    "l WHERE l.run = %s AND l.key = $%d AND l.value = $%d)", col,
		    f->n - 1, f->n);
	}
}

/*
 * A glob (* ? and [...] as in query's func) to a LIKE pattern: '*' '%',
 * '?' '_', and LIKE's own '%' '_' '\' escaped.  Brackets are not
 * supported by LIKE: a pattern with '[' is matched with SIMILAR TO.
 */
static char *
fl_like(const char *glob, int *similar)
{
	struct q_str s = { 0 };
	const char *g;

	*similar = strchr(glob, '[') != NULL;
	for (g = glob; *g != '\0'; g++) {
		switch (*g) {
		case '*':
			q_str_puts(&s, "%");
			break;
		case '?':
			q_str_puts(&s, "_");
			break;
		case '%': case '_': case '\\':
			q_str_add(&s, "\\", 1);
			q_str_add(&s, g, 1);
			break;
		case '(': case ')': case '|': case '+': case '{': case '}':
			if (*similar)
				q_str_add(&s, "\\", 1);
			q_str_add(&s, g, 1);
			break;
		default:
			q_str_add(&s, g, 1);
			break;
		}
	}
	q_str_add(&s, "", 0);
	if (s.p == NULL)
		q_str_puts(&s, "");
	if (s.err) {
		free(s.p);
		return (NULL);
	}
	return (s.p);
}

/* A query result from @r's rows, integers typed as integers. */
static int
fl_res(struct hwtr_pg *pg, PGresult *r, struct hwtr_q_res **resp)
{
	const char *names[32];
	struct hwtr_q_res *res;
	enum hwtr_q_type *types;
	int nc = PQnfields(r), nr = PQntuples(r), i, j, rc = 0;
	Oid t;

	if (nc > 32)
		return (pg_fail(pg, -HWTR_E_INVAL, "too many columns"));
	if ((types = calloc((size_t)nc + 1, sizeof(*types))) == NULL)
		return (pg_fail(pg, -HWTR_E_NOMEM, "out of memory"));
	for (j = 0; j < nc; j++) {
		names[j] = PQfname(r, j);
		t = PQftype(r, j);
		types[j] = t == PG_INT8OID || t == PG_INT4OID ||
		    t == PG_INT2OID ? HWTR_Q_INT : HWTR_Q_TEXT;
	}
	if (q_res_new(&res, (size_t)nc, names) < 0) {
		free(types);
		return (pg_fail(pg, -HWTR_E_NOMEM, "out of memory"));
	}
	for (i = 0; i < nr && rc == 0; i++)
		for (j = 0; j < nc && rc == 0; j++)
			rc = PQgetisnull(r, i, j) ? q_res_push(res, HWTR_Q_NULL,
			    NULL) : q_res_push_n(res, types[j], PQgetvalue(r, i,
			    j), (size_t)PQgetlength(r, i, j),
			    q_dwidth(PQgetvalue(r, i, j),
			    (size_t)PQgetlength(r, i, j)));
	free(types);
	if (rc < 0) {
		hwtr_q_res_free(res);
		return (pg_fail(pg, -HWTR_E_NOMEM, "out of memory"));
	}
	*resp = res;
	return (0);
}

/* Run the statement of @f and make the result. */
static int
fl_run(struct hwtr_pg *pg, struct fl_sql *f, const char *what,
    struct hwtr_q_res **resp, PGresult **keep)
{
	PGresult *r;
	int rc;

	if (f->s.err)
		return (pg_fail(pg, -HWTR_E_NOMEM, "out of memory"));
	if ((r = PQexecParams(pg->conn, f->s.p, f->n, NULL, f->p, NULL, NULL,
	    0)) == NULL || PQresultStatus(r) != PGRES_TUPLES_OK)
		return (pg_resfail(pg, r, what));
	rc = resp != NULL ? fl_res(pg, r, resp) : 0;
	if (keep != NULL && rc == 0)
		*keep = r;
	else
		PQclear(r);
	return (rc);
}

#define FL_LABELS_COL(run)						\
	"(SELECT coalesce(json_object_agg(l.key, l.value ORDER BY l.key)"	\
	"::text, '{}') FROM hwtrace.labels l WHERE l.run = " run ")"

static int
fl_runs(struct hwtr_pg *pg, const struct hwtr_pg_req *req,
    struct hwtr_q_res **resp)
{
	struct fl_sql f = { 0 };
	int rc;

	q_str_puts(&f.s, "SELECT r.id AS run, r.sha256, r.command, "
	    "r.exit_kind || ' ' || r.exit_value AS exit, r.host, "
	    "to_char(r.captured AT TIME ZONE 'UTC', "
	    "'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') AS captured, r.source, "
	    FL_LABELS_COL("r.id") " AS labels FROM hwtrace.runs r WHERE true");
	fl_labels(&f, "r.id", req);
	q_str_puts(&f.s, " ORDER BY r.id");
	rc = fl_run(pg, &f, "runs", resp, NULL);
	free(f.s.p);
	return (rc);
}

/*
 * The names @pattern matches as query's func matches them (q_names.c, as
 * gdb's linespecs): of the functions some run called and of the inlined
 * functions, as a text[] literal "{...}" in *@arrp (malloc'd; NULL: none
 * matches).  The server gives the names that hold the pattern's last
 * component, this side keeps those the pattern names.
 */
static int
fl_names(struct hwtr_pg *pg, const char *pattern, int inl, char **arrp)
{
	struct q_str a = { 0 };
	struct q_pat *pat;
	const char *p[1], *nm, *c;
	char *key;
	PGresult *r;
	int i, m, n = 0;

	*arrp = NULL;
	if ((key = q_name_key(pattern)) == NULL ||
	    (pat = q_pat_new(pattern)) == NULL) {
		free(key);
		return (pg_fail(pg, -HWTR_E_NOMEM, "out of memory"));
	}
	p[0] = key;
	r = pg_exec(pg, "cannot read the names", inl ? "SELECT s.name FROM "
	    "hwtrace.symbols s WHERE strpos(s.name, $1) > 0 AND EXISTS (SELECT "
	    "1 FROM hwtrace.func_counts f WHERE f.symbol = s.id) UNION SELECT "
	    "name FROM hwtrace.inlines WHERE strpos(name, $1) > 0" : "SELECT "
	    "s.name FROM hwtrace.symbols s WHERE strpos(s.name, $1) > 0 AND "
	    "EXISTS (SELECT 1 FROM hwtrace.func_counts f WHERE f.symbol = "
	    "s.id)", 1, p);
	free(key);
	if (r == NULL) {
		q_pat_free(pat);
		return (-HWTR_E_DB);
	}
	q_str_puts(&a, "{");
	for (i = 0; i < PQntuples(r); i++) {
		nm = PQgetvalue(r, i, 0);
		if ((m = q_pat_match(pat, nm)) < 0)
			a.err = 1;
		if (m <= 0)
			continue;
		/* An element in double quotes, '"' and '\\' escaped. */
		q_str_puts(&a, n++ ? ",\"" : "\"");
		for (c = nm; *c != '\0'; c++) {
			if (*c == '"' || *c == '\\')
				q_str_add(&a, "\\", 1);
			q_str_add(&a, c, 1);
		}
		q_str_puts(&a, "\"");
	}
	q_str_puts(&a, "}");
	PQclear(r);
	q_pat_free(pat);
	if (a.err) {
		free(a.p);
		return (pg_fail(pg, -HWTR_E_NOMEM, "out of memory"));
	}
	if (n == 0)
		free(a.p);
	else
		*arrp = a.p;
	return (0);
}

/*
 * func's statement: per run, the calls of the functions whose names meet
 * @cond (on $1), and with @inl the entries into their inlined instances
 * (marked inlined): how often the instance's entry instruction ran (a
 * breakpoint's hits in gdb), from the counts of the blocks that hold it.
 */
static void
fl_func_sql(struct fl_sql *f, const char *cond, int inl,
    const struct hwtr_pg_req *req)
{
	q_str_printf(&f->s, "SELECT x.run, x.function, x.image, x.calls, "
	    "x.self_insns, " FL_LABELS_COL("x.run") " AS labels, x.inlined "
	    "FROM (SELECT f.run, s.name AS function, i.path AS image, "
	    "sum(f.calls)::bigint AS calls, sum(f.self_insns)::bigint AS "
	    "self_insns, 0 AS inlined FROM hwtrace.func_counts f JOIN "
	    "hwtrace.symbols s ON s.id = f.symbol JOIN hwtrace.images i ON "
	    "i.id = s.image WHERE s.name %s", cond);
	fl_labels(f, "f.run", req);
	q_str_puts(&f->s, " GROUP BY f.run, s.name, i.path");
	if (inl) {
		/* An instance has a row per range: its entry once. */
		q_str_printf(&f->s, " UNION ALL SELECT c.run, n.name, i.path, "
		    "sum(c.count)::bigint, NULL::bigint, 1 FROM (SELECT "
		    "DISTINCT image, inst, entry, name FROM hwtrace.inlines "
		    "WHERE name %s) n JOIN hwtrace.blocks b ON b.image = "
		    "n.image AND b.run IS NULL AND b.addr <= n.entry AND "
		    "n.entry < b.addr + b.size JOIN hwtrace.block_counts c ON "
		    "c.block = b.id JOIN hwtrace.images i ON i.id = n.image "
		    "WHERE true", cond);
		fl_labels(f, "c.run", req);
		q_str_puts(&f->s, " GROUP BY c.run, n.name, i.path");
	}
	q_str_puts(&f->s, ") x ORDER BY x.run, x.function, x.image, "
	    "x.inlined");
}

/*
 * func: names matched as query's func matches them (a glob with LIKE, or
 * SIMILAR TO for brackets; else fl_names()), of called and of inlined
 * functions (a schema from before the inlines table has none).
 */
static int
fl_func(struct hwtr_pg *pg, const struct hwtr_pg_req *req,
    struct hwtr_q_res **resp)
{
	struct fl_sql f = { 0 };
	char *like = NULL, *names = NULL;
	PGresult *r;
	int similar = 0, rc = 0, glob, inl;

	*resp = NULL;
	if ((r = pg_exec(pg, "cannot read the schema", "SELECT "
	    "to_regclass('hwtrace.inlines') IS NOT NULL", 0, NULL)) == NULL)
		return (-HWTR_E_DB);
	inl = strcmp(PQgetvalue(r, 0, 0), "t") == 0;
	PQclear(r);
	glob = strpbrk(req->pattern, "*?[") != NULL;
	if (glob && (like = fl_like(req->pattern, &similar)) == NULL)
		return (pg_fail(pg, -HWTR_E_NOMEM, "out of memory"));
	if (!glob && (rc = fl_names(pg, req->pattern, inl, &names)) < 0)
		return (rc);
	if (glob || names != NULL) {
		fl_param(&f, glob ? like : names);
		fl_func_sql(&f, !glob ? "= ANY ($1::text[])" : similar ?
		    "SIMILAR TO $1" : "LIKE $1", inl, req);
		rc = fl_run(pg, &f, "func", resp, NULL);
	}
	if (rc == 0 && (*resp == NULL || hwtr_q_res_nrows(*resp) == 0)) {
		hwtr_q_res_free(*resp);
		*resp = NULL;
		rc = pg_fail(pg, -HWTR_E_NOENT, "no run called a function "
		    "matching '%s'%s", req->pattern, req->nlabels ? " (among "
		    "the runs with those labels)" : "");
	}
	free(like);
	free(names);
	free(f.s.p);
	return (rc);
}

/*
 * The runs selected (by labels), the blocks each ran and how often, the
 * images those blocks belong to, and the line-table rows inside their
 * functions: the common part of coverage and its lcov tracefile.
 */
static void
fl_cov_with(struct fl_sql *f, const struct hwtr_pg_req *req)
{
	q_str_puts(&f->s, "WITH sel AS (SELECT r.id FROM hwtrace.runs r "
	    "WHERE true");
	fl_labels(f, "r.id", req);
	q_str_puts(&f->s, "), rb AS (SELECT bc.run, bc.block, sum(bc.count) "
	    "AS count FROM hwtrace.block_counts bc WHERE bc.run IN (SELECT id "
	    "FROM sel) GROUP BY bc.run, bc.block) ");
}

static int
fl_coverage_rows(struct hwtr_pg *pg, const struct hwtr_pg_req *req,
    struct hwtr_q_res **resp)
{
	struct fl_sql f = { 0 };
	int rc;

	fl_cov_with(&f, req);
	q_str_puts(&f.s, ", fr AS (SELECT rb.run, b.symbol, sum(rb.count * "
	    "b.ninsns) AS insns FROM rb JOIN hwtrace.blocks b ON b.id = "
	    "rb.block WHERE b.symbol IS NOT NULL GROUP BY rb.run, b.symbol), "
	    "fx AS (SELECT s.image, s.name, count(DISTINCT fr.run) AS runs, "
	    "sum(fr.insns) AS insns FROM fr JOIN hwtrace.symbols s ON s.id = "
	    "fr.symbol GROUP BY s.image, s.name), "
	    "fc AS (SELECT s.image, s.name, sum(fc.calls) AS calls FROM "
	    "hwtrace.func_counts fc JOIN hwtrace.symbols s ON s.id = fc.symbol "
	    "WHERE fc.run IN (SELECT id FROM sel) GROUP BY s.image, s.name) "
	    "SELECT i.path AS image, fx.name AS function, fx.runs::bigint AS "
	    "runs, coalesce(fc.calls, 0)::bigint AS calls, fx.insns::bigint AS "
	    "insns FROM fx JOIN hwtrace.images i ON i.id = fx.image LEFT JOIN "
	    "fc ON fc.image = fx.image AND fc.name = fx.name ORDER BY i.path, "
	    "fx.name");
	rc = fl_run(pg, &f, "coverage", resp, NULL);
	free(f.s.p);
	return (rc);
}

/*
 * The lcov tracefile, the sum of those hwtrace query coverage --lcov
 * writes for each run (as lcov -a would add them): a line ran in a run as
 * often as its best line-table row; a function was entered as often as
 * its first instruction ran.
 */
static int
fl_lcov(struct hwtr_pg *pg, const struct hwtr_pg_req *req)
{
	struct fl_sql f = { 0 };
	struct q_str o = { 0 };
	struct hwtr_q tq;
	PGresult *lr = NULL, *fr = NULL;
	const char *path;
	int i, j, k, nl, nf, rc;
	long fnf, fnh, lf, lh;

	fl_cov_with(&f, req);
	q_str_puts(&f.s, ", imgs AS (SELECT DISTINCT b.image FROM rb JOIN "
	    "hwtrace.blocks b ON b.id = rb.block WHERE b.image IS NOT NULL), "
	    "fl AS (SELECT DISTINCT l.image, l.addr, fi.path, l.line FROM imgs "
	    "JOIN hwtrace.symbols s ON s.image = imgs.image AND s.kind IN "
	    "('func', 'ifunc') JOIN hwtrace.lines l ON l.image = s.image AND "
	    "l.addr >= s.addr AND l.addr < s.addr + greatest(s.size, 1) JOIN "
	    "hwtrace.files fi ON fi.image = l.image AND fi.id = l.file), "
	    "hits AS (SELECT rb.run, fl.image, fl.addr, sum(rb.count) AS count "
	    "FROM rb JOIN hwtrace.blocks b ON b.id = rb.block JOIN (SELECT "
	    "DISTINCT image, addr FROM fl) fl ON fl.image = b.image AND "
	    "fl.addr >= b.addr AND fl.addr < b.addr + b.size GROUP BY rb.run, "
	    "fl.image, fl.addr), "
	    "per_run AS (SELECT h.run, fl.path, fl.line, max(h.count) AS count "
	    "FROM hits h JOIN fl ON fl.image = h.image AND fl.addr = h.addr "
	    "GROUP BY h.run, fl.path, fl.line) "
	    "SELECT a.path, a.line, coalesce(sum(p.count), 0)::bigint FROM "
	    "(SELECT DISTINCT path, line FROM fl) a LEFT JOIN per_run p ON "
	    "p.path = a.path AND p.line = a.line GROUP BY a.path, a.line "
	    "ORDER BY a.path COLLATE \"C\", a.line");
	if ((rc = fl_run(pg, &f, "coverage --lcov: lines", NULL, &lr)) < 0)
		goto out;
	free(f.s.p);
	memset(&f, 0, sizeof(f));
	fl_cov_with(&f, req);
	q_str_puts(&f.s, ", imgs AS (SELECT DISTINCT b.image FROM rb JOIN "
	    "hwtrace.blocks b ON b.id = rb.block WHERE b.image IS NOT NULL), "
	    "fn AS (SELECT s.image, s.name, s.addr, (SELECT fi.path FROM "
	    "hwtrace.lines l JOIN hwtrace.files fi ON fi.image = l.image AND "
	    "fi.id = l.file WHERE l.image = s.image AND l.addr >= s.addr AND "
	    "l.addr < s.addr + greatest(s.size, 1) ORDER BY l.addr LIMIT 1) AS "
	    "path, (SELECT l.line FROM hwtrace.lines l WHERE l.image = s.image "
	    "AND l.addr >= s.addr AND l.addr < s.addr + greatest(s.size, 1) "
	    "ORDER BY l.addr LIMIT 1) AS line FROM imgs JOIN hwtrace.symbols s "
	    "ON s.image = imgs.image AND s.kind IN ('func', 'ifunc')) "
	    "SELECT fn.path, min(fn.line)::bigint AS line, fn.name, coalesce((SELECT "
	    "sum(rb.count) FROM hwtrace.blocks b JOIN rb ON rb.block = b.id "
	    "WHERE b.image = fn.image AND b.addr <= fn.addr AND fn.addr < "
	    "b.addr + b.size), 0)::bigint AS entries FROM fn WHERE fn.path IS "
	    "NOT NULL GROUP BY fn.path, fn.name, fn.image, fn.addr");
	/* Functions of one name in one file (two builds) are added up. */
	{
		char *inner = f.s.p;

		f.s.p = NULL;
		f.s.len = f.s.cap = 0;
		q_str_printf(&f.s, "SELECT path, min(line)::bigint AS line, "
		    "name, sum(entries)::bigint FROM (%s) x GROUP BY path, name "
		    "ORDER BY path COLLATE \"C\", line, name COLLATE \"C\"",
		    inner ? inner : "");
		free(inner);
	}
	if ((rc = fl_run(pg, &f, "coverage --lcov: functions", NULL,
	    &fr)) < 0)
		goto out;
	nl = PQntuples(lr);
	nf = PQntuples(fr);
	if (nl == 0) {
		rc = pg_fail(pg, -HWTR_E_NOENT, "coverage: no source lines "
		    "for '%s': the images have no DWARF line table", req->lcov);
		goto out;
	}
	q_str_puts(&o, "TN:\n");
	for (i = 0, k = 0; i < nl; i = j) {
		path = PQgetvalue(lr, i, 0);
		for (j = i; j < nl && strcmp(PQgetvalue(lr, j, 0), path) == 0;
		    j++)
			;
		q_str_printf(&o, "SF:%s\n", path);
		while (k < nf && strcmp(PQgetvalue(fr, k, 0), path) < 0)
			k++;
		fnf = fnh = 0;
		for (int m = k; m < nf && strcmp(PQgetvalue(fr, m, 0),
		    path) == 0; m++)
			q_str_printf(&o, "FN:%s,%s\n", PQgetvalue(fr, m, 1),
			    PQgetvalue(fr, m, 2));
		for (; k < nf && strcmp(PQgetvalue(fr, k, 0), path) == 0;
		    k++) {
			q_str_printf(&o, "FNDA:%s,%s\n", PQgetvalue(fr, k, 3),
			    PQgetvalue(fr, k, 2));
			fnf++;
			fnh += strcmp(PQgetvalue(fr, k, 3), "0") != 0;
		}
		q_str_printf(&o, "FNF:%ld\nFNH:%ld\n", fnf, fnh);
		lf = lh = 0;
		for (int m = i; m < j; m++) {
			q_str_printf(&o, "DA:%s,%s\n", PQgetvalue(lr, m, 1),
			    PQgetvalue(lr, m, 2));
			lf++;
			lh += strcmp(PQgetvalue(lr, m, 2), "0") != 0;
		}
		q_str_printf(&o, "LF:%ld\nLH:%ld\nend_of_record\n", lf, lh);
	}
	if (o.err) {
		rc = pg_fail(pg, -HWTR_E_NOMEM, "out of memory");
		goto out;
	}
	memset(&tq, 0, sizeof(tq));
	if ((rc = q_write_file(&tq, req->lcov, o.p, o.len)) < 0)
		pg_fail(pg, rc, "%s", tq.msg);
out:
	PQclear(lr);
	PQclear(fr);
	free(o.p);
	free(f.s.p);
	return (rc);
}

/*
 * What the failing runs executed and no passing run did: functions by
 * name, branches by their ends (function+offset of the blocks) and kind.
 */
static int
fl_diff(struct hwtr_pg *pg, const struct hwtr_pg_req *req,
    struct hwtr_q_res **resp)
{
	struct fl_sql f = { 0 };
	PGresult *r = NULL;
	int rc;

	fl_param(&f, req->pass.key);
	fl_param(&f, req->pass.value);
	fl_param(&f, req->fail.key);
	fl_param(&f, req->fail.value);
	if ((r = pg_exec(pg, "diff", "SELECT (SELECT count(*) FROM "
	    "hwtrace.labels WHERE key = $1 AND value = $2), (SELECT count(*) "
	    "FROM hwtrace.labels WHERE key = $3 AND value = $4)", 4,
	    f.p)) == NULL)
		return (-HWTR_E_DB);
	if (strcmp(PQgetvalue(r, 0, 0), "0") == 0 ||
	    strcmp(PQgetvalue(r, 0, 1), "0") == 0) {
		rc = pg_fail(pg, -HWTR_E_NOENT, "diff: no run is labelled "
		    "'%s=%s'", strcmp(PQgetvalue(r, 0, 0), "0") == 0 ?
		    req->pass.key : req->fail.key, strcmp(PQgetvalue(r, 0, 0),
		    "0") == 0 ? req->pass.value : req->fail.value);
		PQclear(r);
		return (rc);
	}
	PQclear(r);
	q_str_puts(&f.s,
	    "WITH pass AS (SELECT run FROM hwtrace.labels WHERE key = $1 AND "
	    "value = $2), fail AS (SELECT run FROM hwtrace.labels WHERE key = "
	    "$3 AND value = $4 EXCEPT SELECT run FROM pass), "
	    "sel AS (SELECT run, run IN (SELECT run FROM pass) AS p FROM (SELECT "
	    "run FROM pass UNION SELECT run FROM fail) x), "
	    /* Functions: the symbols each run executed, then their names. */
	    "rs AS (SELECT DISTINCT bc.run, b.symbol FROM hwtrace.block_counts "
	    "bc JOIN hwtrace.blocks b ON b.id = bc.block WHERE bc.run IN (SELECT "
	    "run FROM sel) AND b.symbol IS NOT NULL), "
	    "fn AS (SELECT s.name AS what, rs.run FROM rs JOIN hwtrace.symbols s "
	    "ON s.id = rs.symbol), "
	    /* Branches: named once per distinct pair of blocks and kind. */
	    "rb AS (SELECT br.run, br.from_block, br.to_block, br.kind FROM "
	    "hwtrace.branches br WHERE br.run IN (SELECT run FROM sel)), "
	    "pairs AS (SELECT rb.from_block, rb.to_block, rb.kind, bool_or(sel.p) "
	    "AS p, array_agg(DISTINCT rb.run) FILTER (WHERE NOT sel.p) AS runs "
	    "FROM rb "
	    "JOIN sel ON sel.run = rb.run GROUP BY rb.from_block, rb.to_block, "
	    "rb.kind), "
	    "named AS MATERIALIZED (SELECT pr.p, pr.runs, pr.kind, "
	    "coalesce(fs.name || '+0x' || to_hex(fb.sym_offset), '0x' || "
	    "to_hex(fb.addr)) || ' -> ' || coalesce(ts.name || '+0x' || "
	    "to_hex(tb.sym_offset), '0x' || to_hex(tb.addr)) AS what FROM pairs "
	    "pr JOIN hwtrace.blocks fb ON fb.id = pr.from_block JOIN "
	    "hwtrace.blocks tb ON tb.id = pr.to_block LEFT JOIN hwtrace.symbols "
	    "fs ON fs.id = fb.symbol LEFT JOIN hwtrace.symbols ts ON ts.id = "
	    "tb.symbol), "
	    "br AS (SELECT n.what, n.kind, unnest(n.runs) AS run FROM named n "
	    "WHERE (n.what, n.kind) IN (SELECT what, kind FROM named GROUP BY "
	    "what, kind HAVING NOT bool_or(p))) "
	    "SELECT * FROM (SELECT 'function' AS kind, fn.what, NULL AS branch, "
	    "count(DISTINCT fn.run)::bigint AS fail_runs, "
	    "array_to_string(array_agg(DISTINCT fn.run ORDER BY fn.run), ',') "
	    "AS runs FROM fn JOIN sel ON sel.run = fn.run GROUP BY fn.what "
	    "HAVING NOT bool_or(sel.p) "
	    "UNION ALL SELECT 'branch', br.what, br.kind, count(DISTINCT "
	    "br.run)::bigint, array_to_string(array_agg(DISTINCT br.run ORDER BY "
	    "br.run), ',') FROM br GROUP BY br.what, br.kind) u "
	    "ORDER BY kind DESC, what COLLATE \"C\", branch COLLATE \"C\" "
	    "NULLS FIRST");
	rc = fl_run(pg, &f, "diff", resp, NULL);
	free(f.s.p);
	return (rc);
}

int
hwtr_pg_fleet(struct hwtr_pg *pg, const struct hwtr_pg_req *req,
    struct hwtr_q_res **resp)
{
	int rc;

	*resp = NULL;
	pg->msg[0] = '\0';
	if ((rc = pg_schema(pg, 0)) < 0)
		return (rc);
	/* Room for the hash tables of questions across many runs. */
	if ((rc = pg_cmd(pg, "cannot set up the session", "SET work_mem = "
	    "'64MB'", 0, NULL)) < 0)
		return (rc);
	switch (req->verb) {
	case HWTR_PG_RUNS:
		return (fl_runs(pg, req, resp));
	case HWTR_PG_FUNC:
		if (req->pattern == NULL)
			return (pg_fail(pg, -HWTR_E_INVAL, "func: no name"));
		return (fl_func(pg, req, resp));
	case HWTR_PG_COVERAGE:
		if ((rc = fl_coverage_rows(pg, req, resp)) < 0)
			return (rc);
		if (req->lcov != NULL && (rc = fl_lcov(pg, req)) < 0) {
			hwtr_q_res_free(*resp);
			*resp = NULL;
		}
		return (rc);
	case HWTR_PG_DIFF:
		if (req->pass.key == NULL || req->fail.key == NULL)
			return (pg_fail(pg, -HWTR_E_INVAL, "diff: --pass and "
			    "--fail are needed"));
		return (fl_diff(pg, req, resp));
	}
	return (pg_fail(pg, -HWTR_E_INVAL, "unknown fleet verb"));
}
