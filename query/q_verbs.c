/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The verbs of hwtrace query.  Most are one SQL statement over the tables
 * of hwtrace-db(5) that the indexer keeps small: aggregated block counts,
 * branches and calls, and the execution order read through exec_order /
 * exec_insns with constraints that let them touch only the chunks needed.
 * Every statement is written so that SQLite can use the schema's indexes
 * (thread first, then position); a verb over one thread never scans the
 * others.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "q_int.h"

#define Q_SYM_JOIN(b, s, f)						\
	" LEFT JOIN symbols " s " ON " s ".id = " b ".symbol"		\
	" LEFT JOIN files " f " ON " f ".id = " b ".file"

/* Every database has these rows. */
#define Q_SUMMARY_SQL			\
	"SELECT 'source' AS item, (SELECT value FROM meta WHERE key = "	\
	"'capture_source') AS value"					\
	" UNION ALL SELECT 'command', (SELECT value FROM meta WHERE key = " \
	"'argv')"							\
	" UNION ALL SELECT 'exit', (SELECT group_concat(value, ' ') FROM " \
	"(SELECT value FROM meta WHERE key IN ('exit_kind', 'exit_value') " \
	"ORDER BY key))"						\
	" UNION ALL SELECT 'archive_complete', (SELECT CAST(value AS "	\
	"INTEGER) FROM meta WHERE key = 'archive_complete')"		\
	" UNION ALL SELECT 'streams', count(*) FROM streams"		\
	" UNION ALL SELECT 'processes', count(*) FROM processes"	\
	" UNION ALL SELECT 'threads', count(*) FROM threads"		\
	" UNION ALL SELECT 'images', count(*) FROM images"		\
	" UNION ALL SELECT 'instructions', ?1"				\
	" UNION ALL SELECT 'blocks', ?2"				\
	" UNION ALL SELECT 'static_blocks', (SELECT max(id) + 1 FROM "	\
	"blocks)"							\
	" UNION ALL SELECT 'calls', ?3"					\
	" UNION ALL SELECT 'start', strftime('%Y-%m-%dT%H:%M:%fZ', "	\
	"coalesce(min(first_ns), (SELECT CAST(value AS INTEGER) FROM meta " \
	"WHERE key = 'start_ns')) / 1000000000.0, 'unixepoch') FROM "	\
	"threads"							\
	" UNION ALL SELECT 'duration_ns', max(last_ns) - min(first_ns) FROM " \
	"threads"							\
	" UNION ALL SELECT 'trace_bytes', ?4"				\
	" UNION ALL SELECT 'decode_errors', ?5"				\
	" UNION ALL SELECT 'undecoded_bytes', ?6"			\
	" UNION ALL SELECT 'lost_bytes', ?7"				\
	" UNION ALL SELECT 'lost_events', count(*) FROM events WHERE kind " \
	"IN ('lost', 'overflow')"

/*
 * The totals of the threads' and streams' counts (?1..?7, and ?8 the
 * cycles), summed by q_sum_int(): exact, and a corrupt database whose
 * counts pass 2^63 gets a message naming the column and the row.  The
 * cycles row comes only from a database with CoreSight cycle counts:
 * older databases have no cycles table, and the others no row to sum.
 */
static int
q_summary(struct hwtr_q *q, struct hwtr_q_res **resp)
{
	static const struct {
		const char	*table, *col, *who, *where;
	} sums[] = {
		{ "threads", "insns", Q_WHO_THREAD, NULL },
		{ "threads", "blocks", Q_WHO_THREAD, NULL },
		{ "threads", "calls", Q_WHO_THREAD, NULL },
		{ "streams", "bytes", Q_WHO_STREAM, NULL },
		{ "streams", "errors", Q_WHO_STREAM, NULL },
		{ "streams", "undecoded_bytes", Q_WHO_STREAM, NULL },
		{ "streams", "lost_bytes", Q_WHO_STREAM, NULL },
		{ "cycles", "count", "'thread ' || thread || ' at ' || seq",
		    "cumulative" },
	};
	int64_t has_cycles, v[HWTR_NELEM(sums)] = { 0 };
	size_t i;
	int rc;

	if ((rc = q_int(q, &has_cycles, 0, "SELECT count(*) FROM "
	    "sqlite_master WHERE type = 'table' AND name = 'cycles'",
	    NULL)) < 0)
		return (rc);
	for (i = 0; i < HWTR_NELEM(sums) - (has_cycles ? 0 : 1); i++)
		if ((rc = q_sum_int(q, "summary", sums[i].table, sums[i].col,
		    sums[i].who, sums[i].where, 0, &v[i])) < 0)
			return (rc);
	return (q_select(q, resp, has_cycles ? Q_SUMMARY_SQL
	    " UNION ALL SELECT 'cycles', ?8 WHERE EXISTS (SELECT 1 FROM "
	    "cycles WHERE cumulative)" : Q_SUMMARY_SQL, has_cycles ?
	    "iiiiiiii" : "iiiiiii", v[0], v[1], v[2], v[3], v[4], v[5], v[6],
	    v[7]));
}

static int
q_threads(struct hwtr_q *q, struct hwtr_q_res **resp)
{
	return (q_select(q, resp,
	    "SELECT t.id AS thread, t.pid, t.tid, t.name, s.name AS stream, "
	    "t.blocks, t.insns, t.calls, t.max_depth, t.errors, t.gaps, "
	    "t.last_ns - t.first_ns AS duration_ns, "
	    "CASE WHEN t.exit_kind IS NULL THEN NULL ELSE t.exit_kind || ' ' || "
	    "t.exit_value END AS exit "
	    "FROM threads t LEFT JOIN streams s ON s.id = t.stream "
	    "ORDER BY t.id", NULL));
}

/*
 * Run @sql once per selected thread (@thread, or every thread with blocks)
 * with (thread, lo, hi) bound: rows lo..hi of the thread, where lo is
 * @from, or "length - n" clamped at 0 when @from < 0.  @tail, when not
 * NULL, runs after each thread's rows with the thread bound and adds
 * what it returns (same columns).
 */
static int
q_per_thread(struct hwtr_q *q, struct hwtr_q_res **resp, int64_t thread,
    const char *sql, const char *tail, const char *lencol, int64_t n,
    int64_t from, const char *const *names, size_t ncols)
{
	sqlite3_stmt *ts = NULL, *st = NULL, *tl = NULL;
	char tsql[160];
	int64_t id, len, lo;
	int rc;

	if (thread >= 0 && (rc = q_check_thread(q, thread)) < 0)
		return (rc);
	snprintf(tsql, sizeof(tsql), "SELECT id, %s FROM threads WHERE "
	    "(?1 < 0 OR id = ?1) AND blocks > 0 ORDER BY id", lencol);
	if ((rc = q_res_new(resp, ncols, names)) < 0)
		return (q_fail(q, rc, "out of memory"));
	q_res_stream(q, *resp);
	if ((rc = q_prepare(q, &ts, tsql)) < 0 ||
	    (rc = q_prepare(q, &st, sql)) < 0 ||
	    (tail != NULL && (rc = q_prepare(q, &tl, tail)) < 0))
		goto out;
	sqlite3_bind_int64(ts, 1, thread);
	while ((rc = sqlite3_step(ts)) == SQLITE_ROW) {
		id = sqlite3_column_int64(ts, 0);
		len = sqlite3_column_int64(ts, 1);
		lo = from >= 0 ? from : (len > n ? len - n : 0);
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_int64(st, 2, lo);
		sqlite3_bind_int64(st, 3, lo + n - 1);
		if ((rc = q_res_fill(q, *resp, st)) < 0)
			goto out;
		if (tl == NULL)
			continue;
		sqlite3_reset(tl);
		sqlite3_bind_int64(tl, 1, id);
		if ((rc = q_res_fill(q, *resp, tl)) < 0)
			goto out;
	}
	rc = rc == SQLITE_DONE ? 0 : q_dbfail(q, "cannot read threads");
out:
	sqlite3_finalize(ts);
	sqlite3_finalize(st);
	sqlite3_finalize(tl);
	if (rc < 0) {
		hwtr_q_res_free(*resp);
		*resp = NULL;
	}
	return (rc);
}


static const char *const q_insn_cols[] = { "thread", "insn", "address",
    "function", "line", "instruction" };

/* A position counted from a thread's start is not known in a window. */
static const char q_insn_sql[] =
    "SELECT e.thread, CASE WHEN hwtr_tail_cut(e.thread) THEN NULL ELSE "
    "e.insn END, printf('%#x', e.ip), "
    Q_FUNC("b", "s", "e.ip - b.start_ip") ", " Q_INSN_LINE ", "
    "hwtr_disasm(b.code, e.ip - b.start_ip, e.ip, b.mode) "
    "FROM exec_insns e JOIN blocks b ON b.id = e.block "
    "LEFT JOIN symbols s ON s.id = b.symbol "
    "WHERE e.thread = ?1 AND e.insn >= ?2 AND e.insn <= ?3 ORDER BY e.insn";

static int
q_last(struct hwtr_q *q, const struct hwtr_q_req *req,
    struct hwtr_q_res **resp)
{
	static const char *const cols[] = { "thread", "seq", "address",
	    "function", "line", "insns", "ends_with" };
	int64_t n = req->n >= 0 ? req->n : 10;

	if (n == 0)
		return (q_res_new(resp, req->insns ? 6 : 7, req->insns ?
		    q_insn_cols : cols));
	if (req->insns)
		return (q_per_thread(q, resp, req->thread, q_insn_sql,
		    Q_STOP_SQL("insn", "(SELECT CASE WHEN p.exit_kind = 'signal' "
		    "THEN '(stopped here: the process ended by signal ' || "
		    "p.exit_value || ')' ELSE '(stopped here)' END FROM "
		    "(SELECT 1) LEFT JOIN processes p ON p.pid = s.pid)"),
		    "insns", n, -1, q_insn_cols, 6));
	return (q_per_thread(q, resp, req->thread,
	    "SELECT e.thread, CASE WHEN hwtr_tail_cut(e.thread) THEN NULL "
	    "ELSE e.seq END, printf('%#x', b.start_ip), "
	    Q_FUNC("b", "s", "0") ", " Q_ADDR_LINE("0") ", b.ninsns, "
	    "b.last_class FROM exec_order e JOIN blocks b ON b.id = e.block"
	    Q_SYM_JOIN("b", "s", "f")
	    " WHERE e.thread = ?1 AND e.seq >= ?2 AND e.seq <= ?3 "
	    "ORDER BY e.seq", Q_STOP_SQL("seq", "0, 'stopped'"), "blocks", n,
	    -1, cols, 7));
}

static int
q_insns(struct hwtr_q *q, const struct hwtr_q_req *req,
    struct hwtr_q_res **resp)
{
	int64_t thread = req->thread, count = req->count >= 0 ? req->count :
	    20;
	int rc;

	if (thread < 0) {
		if ((rc = q_int(q, &thread, -1, "SELECT min(id) FROM threads "
		    "WHERE blocks > 0", NULL)) < 0)
			return (rc);
		if (thread < 0)
			return (q_res_new(resp, 6, q_insn_cols));
	}
	if (count == 0)
		return (q_res_new(resp, 6, q_insn_cols));
	return (q_per_thread(q, resp, thread, q_insn_sql, NULL, "insns",
	    count, req->from, q_insn_cols, 6));
}

static const char *const q_kinds[] = { "cond-taken", "cond-not-taken",
    "jump", "jump-indirect", "call", "call-indirect", "return", "syscall",
    "sysret", "async", "fallthrough" };

#define Q_EDGE_COLS							\
	Q_FUNC("fb", "fs", "br.from_ip - fb.start_ip") " AS \"from\", "	\
	Q_FUNC("tb", "ts", "br.to_ip - tb.start_ip") " AS \"to\", "		\
	"br.kind, sum(br.count) AS count, printf('%#x', br.from_ip) AS "	\
	"from_address, printf('%#x', br.to_ip) AS to_address "		\
	"FROM branches br JOIN blocks fb ON fb.id = br.from_block "	\
	"JOIN blocks tb ON tb.id = br.to_block "				\
	"LEFT JOIN symbols fs ON fs.id = fb.symbol "			\
	"LEFT JOIN symbols ts ON ts.id = tb.symbol "

static int
q_branches(struct hwtr_q *q, const struct hwtr_q_req *req,
    struct hwtr_q_res **resp)
{
	struct q_str sql = { 0 }, kl = { 0 };
	char *from = NULL, *to = NULL;
	size_t i;
	int rc;

	if (req->kind != NULL) {
		for (i = 0; i < HWTR_NELEM(q_kinds); i++)
			if (strcmp(req->kind, q_kinds[i]) == 0)
				break;
		if (i == HWTR_NELEM(q_kinds)) {
			for (i = 0; i < HWTR_NELEM(q_kinds); i++)
				q_str_printf(&kl, "%s%s", i ? ", " : "",
				    q_kinds[i]);
			rc = q_fail(q, -HWTR_E_INVAL, "branches: unknown kind "
			    "'%s' (kinds: %s)", req->kind, kl.p ? kl.p : "");
			free(kl.p);
			return (rc);
		}
	}
	if (req->from_sym != NULL &&
	    (rc = q_sym_ids(q, "branches --from", req->from_sym, &from)) < 0)
		return (rc);
	if (req->to_sym != NULL &&
	    (rc = q_sym_ids(q, "branches --to", req->to_sym, &to)) < 0) {
		free(from);
		return (rc);
	}
	q_str_puts(&sql, "SELECT " Q_EDGE_COLS "WHERE 1");
	if (from != NULL)
		q_str_printf(&sql, " AND fb.symbol IN %s", from);
	if (to != NULL)
		q_str_printf(&sql, " AND tb.symbol IN %s", to);
	if (req->kind != NULL)
		q_str_puts(&sql, " AND br.kind = ?1");
	if (req->thread >= 0)
		q_str_puts(&sql, " AND br.thread = ?2");
	q_str_puts(&sql, " GROUP BY br.from_ip, br.to_ip, br.kind "
	    "ORDER BY count DESC, br.from_ip, br.to_ip, br.kind");
	free(from);
	free(to);
	if ((rc = q_sql_ready(q, &sql, req->thread)) < 0)
		return (rc);
	if (req->kind != NULL && req->thread >= 0)
		rc = q_select(q, resp, sql.p, "si", req->kind, req->thread);
	else if (req->kind != NULL)
		rc = q_select(q, resp, sql.p, "s", req->kind);
	else if (req->thread >= 0)
		rc = q_select(q, resp, sql.p, "ni", req->thread);
	else
		rc = q_select(q, resp, sql.p, NULL);
	free(sql.p);
	return (rc);
}

/*
 * hot: the counts come from block_counts, or over a range (--from, --to)
 * or a depth from the blocks of exec_order counted into temp.q_cnt (whole
 * blocks: those holding a range's first and last instruction count
 * whole).  Percentages are of the instructions of the threads, or of the
 * range.
 */
static int
q_hot(struct hwtr_q *q, const struct hwtr_q_req *req,
    struct hwtr_q_res **resp)
{
	const char *by = req->by != NULL ? req->by : "func";
	int64_t n = req->n >= 0 ? req->n : 20;
	const char *src, *tot, *sel;
	struct q_str sql = { 0 };
	struct q_rng r;
	int64_t all = 0;
	int rc;

	if (req->thread >= 0 && (rc = q_check_thread(q, req->thread)) < 0)
		return (rc);
	if (strcmp(by, "line") == 0)
		return (q_hot_lines(q, req, resp));
	if ((rc = q_range_depth(q, req, "hot", &r, 1)) < 0)
		return (rc);
	if (strcmp(by, "inline") == 0) {
		if (r.on || r.cnt)
			return (q_fail(q, -HWTR_E_INVAL, "hot --by inline: "
			    "counts of whole threads only (no --from, --to or "
			    "--depth)"));
		return (q_inl_hot(q, resp, req->thread, n));
	}
	if (r.cnt) {
		/*
		 * A range or --depth: what ran there, counted once into
		 * temp.q_cnt (q_walk.c).  (A range's blocks grouped in SQL, read
		 * twice for the rows and the total, cost 1.3 CPU-s for 8 M
		 * instructions of gzip against 0.2.)
		 */
		src = Q_DEPTH_COUNTS;
		tot = "(SELECT " Q_ISUM("x.count * xb.ninsns") " FROM "
		    Q_DEPTH_COUNTS
		    " x JOIN blocks xb ON xb.id = x.block WHERE ?1 < 0 OR "
		    "x.thread = ?1)";
	} else {
		/* The threads' total, summed exactly below. */
		src = "block_counts";
		tot = NULL;
	}
	if (strcmp(by, "func") == 0 || strcmp(by, "function") == 0)
		/* Code with no symbol: one [unknown] row per image, as perf. */
		sel = "SELECT coalesce(s.name, '[unknown]') AS function, i.path AS "
		    "image, " Q_ISUM("c.count * b.ninsns") " AS insns, sum(c.count) "
		    "AS blocks, round(100.0 * sum(c.count * b.ninsns) / @T, 2) AS "
		    "percent FROM @S c JOIN blocks b ON b.id = "
		    "c.block LEFT JOIN symbols s ON s.id = b.symbol LEFT JOIN "
		    "images i ON i.id = b.image WHERE ?1 < 0 OR c.thread = ?1 "
		    "GROUP BY b.symbol, CASE WHEN b.symbol IS NULL THEN "
		    "b.image END ORDER BY insns DESC, function LIMIT ?2";
	else if (strcmp(by, "image") == 0)
		sel = "SELECT i.path AS image, " Q_ISUM("c.count * b.ninsns")
		    " AS insns, sum(c.count) AS blocks, round(100.0 * sum(c.count * "
		    "b.ninsns) / @T, 2) AS percent FROM @S c JOIN blocks b ON "
		    "b.id = c.block LEFT JOIN images i ON i.id = b.image WHERE "
		    "?1 < 0 OR c.thread = ?1 GROUP BY b.image ORDER BY insns "
		    "DESC, image LIMIT ?2";
	else if (strcmp(by, "block") == 0)
		sel = "SELECT printf('%#x', b.start_ip) AS address, "
		    Q_FUNC("b", "s", "0") " AS function, " Q_ADDR_LINE("0")
		    " AS line, sum(c.count) AS count, b.ninsns AS block_insns, "
		    Q_IMUL("sum(c.count)", "b.ninsns") " AS insns, round(100.0 * "
		    "sum(c.count) * b.ninsns / @T, 2) AS percent "
		    "FROM @S c JOIN blocks b ON b.id = c.block"
		    Q_SYM_JOIN("b", "s", "f")
		    " WHERE ?1 < 0 OR c.thread = ?1 GROUP BY b.id "
		    "ORDER BY insns DESC, b.id LIMIT ?2";
	else if (strcmp(by, "edge") == 0) {
		if (r.on)
			return (q_fail(q, -HWTR_E_INVAL, "hot --by edge: "
			    "branches are counted per thread, not by position; "
			    "--from and --to apply to --by function, line, "
			    "image and block"));
		return (q_select(q, resp, "SELECT " Q_EDGE_COLS "WHERE ?1 < 0 "
		    "OR br.thread = ?1 GROUP BY br.from_ip, br.to_ip, br.kind "
		    "ORDER BY count DESC, br.from_ip, br.to_ip, br.kind "
		    "LIMIT ?2", "ii", req->thread, n));
	} else
		return (q_fail(q, -HWTR_E_INVAL, "hot: unknown --by '%s' "
		    "(function, inline, line, image, block or edge)", by));
	if (tot == NULL && (rc = q_sum_int(q, "hot", "threads", "insns",
	    Q_WHO_THREAD, "?1 < 0 OR id = ?1", req->thread, &all)) < 0)
		return (rc);
	/* @T: the total, @S: the counts. */
	for (; *sel != '\0'; sel++)
		if (sel[0] == '@' && (sel[1] == 'T' || sel[1] == 'S')) {
			if (sel[1] == 'T' && tot == NULL)
				q_str_printf(&sql, "%lld", (long long)all);
			else
				q_str_puts(&sql, sel[1] == 'T' ? tot : src);
			sel++;
		} else
			q_str_add(&sql, sel, 1);
	if ((rc = q_sql_ready(q, &sql, -1)) < 0)
		return (rc);
	rc = r.on ? q_select(q, resp, sql.p, "iiii", r.thread, n, r.seq_lo,
	    r.seq_hi) : q_select(q, resp, sql.p, "ii", req->thread, n);
	free(sql.p);
	return (rc);
}

/* --- the time limit --------------------------------------------------- */

void
q_limit_begin(struct hwtr_q *q, int64_t ms, int sql)
{
	int64_t pages = 0, psize = 0;

	if (ms < 0 && sql)
		ms = HWTR_Q_SQL_TIMEOUT_MS;
	else if (ms < 0) {
		/*
		 * A verb's work grows with the history it reads: a minute,
		 * and a second more per MiB of database, which SQLite reads
		 * many times over in that second.
		 */
		(void)q_int(q, &pages, 0, "PRAGMA page_count", NULL);
		(void)q_int(q, &psize, 0, "PRAGMA page_size", NULL);
		ms = HWTR_Q_VERB_TIMEOUT_MS;
		if (pages > 0 && psize > 0 && pages < INT64_MAX / psize)
			ms += pages * psize / (1 << 20) * 1000;
	}
	if (ms > INT64_MAX / 1000000)
		ms = INT64_MAX / 1000000;
	q->lim_ms = ms;
	q->lim_expired = 0;
	q->lim_start_ns = q_cpu_ns();
	if (q->lim_ms > 0)
		sqlite3_progress_handler(q->db, 10000, q_limit_check, q);
}

int
q_limit_end(struct hwtr_q *q)
{
	if (q->db != NULL)
		sqlite3_progress_handler(q->db, 0, NULL, NULL);
	return (q->lim_expired);
}

static int q_verb(struct hwtr_q *q, const struct hwtr_q_req *req,
    struct hwtr_q_res **resp);

/* The answer carries what the trace lost where it looked (bt: frames). */
static int
q_lost_res(struct hwtr_q *q, const struct hwtr_q_req *req,
    struct hwtr_q_res *res)
{
	int rc;

	if (req->verb == HWTR_Q_BT && (rc = q_lost_bt(q, res)) < 0)
		return (rc);
	q_lost_clear(&res->lost);
	if (q->lost.note == NULL)
		return (0);
	res->lost.n = q->lost.n;
	res->lost.lower = q->lost.lower;
	if ((res->lost.note = strdup(q->lost.note)) == NULL)
		return (q_fail(q, -HWTR_E_NOMEM, "out of memory"));
	/* bt's rows entered before a loss: the answer is whole, not streamed. */
	if (q->lost.before != NULL) {
		if ((res->lost.before = malloc(q->lost.nbefore)) == NULL)
			return (q_fail(q, -HWTR_E_NOMEM, "out of memory"));
		memcpy(res->lost.before, q->lost.before, q->lost.nbefore);
		res->lost.nbefore = q->lost.nbefore;
	}
	return (0);
}

int
hwtr_q_run(struct hwtr_q *q, const struct hwtr_q_req *req,
    struct hwtr_q_res **resp)
{
	struct hwtr_q_req byt;
	int rc;

	*resp = NULL;
	q->msg[0] = '\0';
	if ((rc = q_lazy_need(q, req)) < 0)
		return (rc);
	/* --thread tid:N: the thread's number, then as --thread. */
	if (req->tid >= 0) {
		byt = *req;
		if ((rc = q_thread_of_tid(q, req->tid, &byt.thread)) < 0)
			return (rc);
		req = &byt;
	}
	q_limit_begin(q, req->sql_timeout_ms, req->verb == HWTR_Q_SQL);
	/* What the trace lost there, known before the first row streams. */
	if ((rc = q_lost_find(q, req)) >= 0) {
		if (q->out != NULL)
			q->out->lost = &q->lost;
		rc = q_verb(q, req, resp);
	}
	if (rc >= 0 && *resp != NULL && (rc = q_lost_res(q, req,
	    *resp)) < 0) {
		hwtr_q_res_free(*resp);
		*resp = NULL;
	}
	/* SQLite's bare message: say which count went past 2^63. */
	if (rc == -HWTR_E_DB && req->verb != HWTR_Q_SQL &&
	    strstr(q->msg, "integer overflow") != NULL)
		rc = q_sum_explain(q, q_verb_name(req->verb));
	/* A stopped statement leaves the answer short, whatever rc says. */
	if (q_limit_end(q)) {
		hwtr_q_res_free(*resp);
		*resp = NULL;
		rc = q_fail(q, -HWTR_E_LIMIT, "%s: stopped after %jd.%03jd s "
		    "of CPU time (the time limit; raise it with --timeout, 0 "
		    "for none)", q_verb_name(req->verb),
		    (intmax_t)(q->lim_ms / 1000), (intmax_t)(q->lim_ms % 1000));
	}
	return (rc);
}

/* The verb @req names. */
static int
q_verb(struct hwtr_q *q, const struct hwtr_q_req *req,
    struct hwtr_q_res **resp)
{
	switch (req->verb) {
	case HWTR_Q_SUMMARY:
		return (q_summary(q, resp));
	case HWTR_Q_THREADS:
		return (q_threads(q, resp));
	case HWTR_Q_LAST:
		return (q_last(q, req, resp));
	case HWTR_Q_CALLS:
		return (q_calls(q, req, resp));
	case HWTR_Q_TREE:
		return (q_tree(q, req, resp));
	case HWTR_Q_FUNC:
		return (q_func(q, req, resp));
	case HWTR_Q_COVERAGE:
		return (q_cov(q, req, resp));
	case HWTR_Q_HOT:
		return (q_hot(q, req, resp));
	case HWTR_Q_BRANCHES:
		return (q_branches(q, req, resp));
	case HWTR_Q_TIMELINE:
		return (q_timeline(q, req, resp));
	case HWTR_Q_INSNS:
		return (q_insns(q, req, resp));
	case HWTR_Q_SQL:
		return (q_sql(q, req, resp));
	case HWTR_Q_EXPORT:
		/* --folded (q_prof.c) is made from tree's rows. */
		if (req->folded != NULL)
			return (q_folded(q, req, resp));
		return (q_export(q, req, resp));
	case HWTR_Q_BT:
		return (q_bt(q, req, resp));
	case HWTR_Q_ANNOTATE:
		return (q_annotate(q, req, resp));
	}
	return (q_fail(q, -HWTR_E_INVAL, "unknown query verb %d",
	    (int)req->verb));
}

int
hwtr_q_stream(struct hwtr_q *q, const struct hwtr_q_req *req,
    enum hwtr_q_format fmt, int width,
    int (*sink)(void *arg, const char *buf, size_t len), void *arg)
{
	struct hwtr_q_res *res = NULL;
	struct q_out out;
	int rc;

	if (fmt > HWTR_Q_FMT_JSON)
		return (q_fail(q, -HWTR_E_INVAL, "unknown output format %d",
		    (int)fmt));
	q_out_init(&out, fmt, width, sink, arg);
	q->out = &out;
	rc = hwtr_q_run(q, req, &res);
	q->out = NULL;
	if (rc >= 0 && res != NULL) {
		res->out = NULL;
		out.lost = &res->lost;
		if ((rc = q_out_end(&out, res)) < 0)
			q_fail(q, rc, rc == -HWTR_E_IO ? "cannot write the "
			    "answer" : "out of memory");
	}
	hwtr_q_res_free(res);
	q_out_fini(&out);
	return (rc < 0 ? rc : 0);
}
