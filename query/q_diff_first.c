/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * hwtrace diff --first: the sets of functions, lines and branches one run
 * executed and the other did not (compared by name, as in q_diff.c), and
 * per pair of threads the first block that differs.  The divergence walks
 * the execution order of the two threads side by side and stops there.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "q_diff.h"

static const char *const d_cols[] = { "kind", "run", "thread", "seq",
    "what", "line", "count" };

/* A sorted set of names with a count each. */
struct d_set {
	char		**key;
	int64_t		*count;
	char		**line;
	size_t		n, cap;
};

static void
d_set_free(struct d_set *s)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		free(s->key[i]);
		free(s->line[i]);
	}
	free(s->key);
	free(s->count);
	free(s->line);
	memset(s, 0, sizeof(*s));
}

/* The rows of @sql (key, count[, line]) into @s, in the order given. */
static int
d_set_load(struct hwtr_q *q, struct d_set *s, const char *sql)
{
	sqlite3_stmt *st;
	const char *k, *l;
	int rc;

	if ((rc = q_prepare(q, &st, sql)) < 0)
		return (rc);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (s->n == s->cap) {
			size_t nc = s->cap ? s->cap * 2 : 256;
			char **nk = realloc(s->key, nc * sizeof(*nk));
			char **nl;
			int64_t *ncnt;

			if (nk != NULL)
				s->key = nk;
			nl = realloc(s->line, nc * sizeof(*nl));
			if (nl != NULL)
				s->line = nl;
			ncnt = realloc(s->count, nc * sizeof(*ncnt));
			if (ncnt != NULL)
				s->count = ncnt;
			if (nk == NULL || nl == NULL || ncnt == NULL)
				goto nomem;
			s->cap = nc;
		}
		k = (const char *)sqlite3_column_text(st, 0);
		l = sqlite3_column_count(st) > 2 ?
		    (const char *)sqlite3_column_text(st, 2) : NULL;
		if ((s->key[s->n] = strdup(k != NULL ? k : "?")) == NULL)
			goto nomem;
		s->line[s->n] = l != NULL ? strdup(l) : NULL;
		s->count[s->n] = sqlite3_column_int64(st, 1);
		s->n++;
	}
	sqlite3_finalize(st);
	/* A sum past 2^63 (a corrupt database): which count, where. */
	if (rc != SQLITE_DONE && strcmp(sqlite3_errmsg(q->db),
	    "integer overflow") == 0)
		return (q_sum_explain(q, "diff"));
	if (rc != SQLITE_DONE)
		return (q_dbfail(q, "diff: cannot read the database"));
	return (0);
nomem:
	sqlite3_finalize(st);
	return (q_fail(q, -HWTR_E_NOMEM, "out of memory"));
}

static int
d_row(struct hwtr_q *q, struct hwtr_q_res *res, const char *kind,
    const char *run, int64_t thread, int64_t seq, const char *what,
    const char *line, int64_t count)
{
	int rc;

	rc = q_res_push(res, HWTR_Q_TEXT, kind);
	rc |= q_res_push(res, HWTR_Q_TEXT, run);
	if (thread >= 0)
		rc |= q_res_push_int(res, thread);
	else
		rc |= q_res_push(res, HWTR_Q_NULL, NULL);
	if (seq >= 0)
		rc |= q_res_push_int(res, seq);
	else
		rc |= q_res_push(res, HWTR_Q_NULL, NULL);
	rc |= q_res_push(res, what ? HWTR_Q_TEXT : HWTR_Q_NULL, what);
	rc |= q_res_push(res, line ? HWTR_Q_TEXT : HWTR_Q_NULL, line);
	if (count >= 0)
		rc |= q_res_push_int(res, count);
	else
		rc |= q_res_push(res, HWTR_Q_NULL, NULL);
	if (rc != 0)
		return (q_fail(q, -HWTR_E_NOMEM, "out of memory"));
	return (q_res_row_end(q, res));
}

/* The lines a run executed (q_prof_lines) as a set. */
static int
d_set_lines(struct hwtr_q *q, struct d_set *s)
{
	struct q_pline *pl;
	size_t n, i;
	int rc;

	if ((rc = q_prof_lines(q, -1, &pl, &n)) < 0)
		return (rc);
	s->key = calloc(n + 1, sizeof(*s->key));
	s->line = calloc(n + 1, sizeof(*s->line));
	s->count = calloc(n + 1, sizeof(*s->count));
	if (s->key == NULL || s->line == NULL || s->count == NULL) {
		q_plines_free(pl, n);
		return (q_fail(q, -HWTR_E_NOMEM, "out of memory"));
	}
	for (i = 0; i < n; i++) {
		/* "what" is the line, "line" the function it is in. */
		s->key[i] = pl[i].place;
		s->line[i] = pl[i].func;
		s->count[i] = pl[i].insns;
		pl[i].place = pl[i].func = NULL;
	}
	s->n = s->cap = n;
	q_plines_free(pl, n);
	return (0);
}

/* Rows for the keys of @sql (NULL: lines) in one run only. */
static int
d_sets(struct hwtr_q *qa, struct hwtr_q *qb, struct hwtr_q_res *res,
    const char *kind, const char *sql)
{
	struct d_set a = { 0 }, b = { 0 };
	size_t i = 0, j = 0;
	int c, rc;

	if ((rc = sql != NULL ? d_set_load(qa, &a, sql) :
	    d_set_lines(qa, &a)) < 0)
		goto out;
	if ((rc = sql != NULL ? d_set_load(qb, &b, sql) :
	    d_set_lines(qb, &b)) < 0) {
		q_fail(qa, rc, "B: %s", hwtr_q_errmsg(qb));
		goto out;
	}
	while (i < a.n || j < b.n) {
		c = i == a.n ? 1 : j == b.n ? -1 : strcmp(a.key[i], b.key[j]);
		if (c < 0) {
			rc = d_row(qa, res, kind, "A", -1, -1, a.key[i],
			    a.line[i], a.count[i]);
			i++;
		} else if (c > 0) {
			rc = d_row(qa, res, kind, "B", -1, -1, b.key[j],
			    b.line[j], b.count[j]);
			j++;
		} else {
			i++;
			j++;
		}
		if (rc < 0)
			goto out;
	}
	rc = 0;
out:
	d_set_free(&a);
	d_set_free(&b);
	return (rc);
}

/*
 * Functions: name and the instructions executed in it.  Branches: both
 * ends as function+offset, the kind, and the line of the branch's block.
 * Lines come from q_prof_lines: the instructions executed at each.
 */
#define D_FUNCS_SQL							\
	"SELECT s.name, sum(b.exec_count * b.ninsns) FROM blocks b JOIN "	\
	"symbols s ON s.id = b.symbol WHERE b.exec_count > 0 GROUP BY "	\
	"s.name ORDER BY s.name"
#define D_BRANCHES_SQL							\
	"SELECT coalesce(" Q_FUNC("fb", "fs", "br.from_ip - fb.start_ip")	\
	", printf('%#x', br.from_ip)) || ' -> ' || coalesce("		\
	Q_FUNC("tb", "ts", "br.to_ip - tb.start_ip") ", printf('%#x', "	\
	"br.to_ip)) || ' ' || br.kind AS k, sum(br.count), min(CASE WHEN "	\
	"ff.path IS NULL THEN NULL ELSE ff.path || ':' || fb.line END) "	\
	"FROM branches br JOIN blocks fb ON fb.id = br.from_block JOIN "	\
	"blocks tb ON tb.id = br.to_block LEFT JOIN symbols fs ON fs.id = "	\
	"fb.symbol LEFT JOIN symbols ts ON ts.id = tb.symbol LEFT JOIN "	\
	"files ff ON ff.id = fb.file GROUP BY k ORDER BY k"

/* A row naming block @block of @q (at its start, or its last instruction). */
static int
d_block_row(struct hwtr_q *q, struct hwtr_q *qres, struct hwtr_q_res *res,
    const char *kind, const char *run, int64_t thread, int64_t seq,
    int64_t block, int at_last)
{
	char *what, *line;
	int rc;

	if ((rc = qd_place(q, NULL, block, at_last, &what, &line)) < 0)
		return (rc);
	rc = d_row(qres, res, kind, run, thread, seq, what, line, -1);
	free(what);
	free(line);
	return (rc);
}

/* The execution order of a thread, block by block. */
struct d_cur {
	sqlite3_stmt	*st;
	int64_t		seq, block;
	int		end;
};

static int
d_cur_open(struct hwtr_q *q, struct d_cur *c, int64_t thread, int64_t from)
{
	int rc;

	memset(c, 0, sizeof(*c));
	if ((rc = q_prepare(q, &c->st, "SELECT seq, block FROM exec_order "
	    "WHERE thread = ?1 AND seq >= ?2 ORDER BY seq")) < 0)
		return (rc);
	sqlite3_bind_int64(c->st, 1, thread);
	sqlite3_bind_int64(c->st, 2, from);
	return (0);
}

static int
d_cur_next(struct hwtr_q *q, struct d_cur *c)
{
	int rc;

	if (c->end)
		return (0);
	rc = sqlite3_step(c->st);
	if (rc == SQLITE_ROW) {
		c->seq = sqlite3_column_int64(c->st, 0);
		c->block = sqlite3_column_int64(c->st, 1);
		return (1);
	}
	c->end = 1;
	if (rc != SQLITE_DONE)
		return (q_dbfail(q, "diff: cannot read the execution order"));
	return (0);
}

/*
 * The fast part of the walk: the chunks of the two threads decoded here
 * and compared block by block, without a row per block through SQLite.
 * *seqp is where it stopped (the first block that differs, or where the
 * chunks stop lining up: the rest is for the cursors), *prevp the block of
 * A just before it (-1 at the start).
 */
static int
d_fast(struct hwtr_q *qa, struct hwtr_q *qb, const struct d_blocks *ba,
    const struct d_blocks *bb, int64_t ta, int64_t tb, int64_t *seqp,
    int64_t *prevp)
{
	static const char sql[] = "SELECT seq, nblocks, data FROM exec_chunks "
	    "WHERE thread = ?1 ORDER BY seq";
	sqlite3_stmt *sa = NULL, *sb = NULL;
	int64_t *ia = NULL, *ib = NULL, na, nb, j, cap = 0;
	int rc;

	*seqp = 0;
	*prevp = -1;
	if ((rc = q_prepare(qa, &sa, sql)) < 0)
		return (rc);
	if ((rc = q_prepare(qb, &sb, sql)) < 0) {
		sqlite3_finalize(sa);
		return (q_fail(qa, rc, "B: %s", hwtr_q_errmsg(qb)));
	}
	sqlite3_bind_int64(sa, 1, ta);
	sqlite3_bind_int64(sb, 1, tb);
	rc = 0;
	while (sqlite3_step(sa) == SQLITE_ROW && sqlite3_step(sb) == SQLITE_ROW) {
		na = sqlite3_column_int64(sa, 1);
		nb = sqlite3_column_int64(sb, 1);
		if (sqlite3_column_int64(sa, 0) != *seqp ||
		    sqlite3_column_int64(sb, 0) != *seqp || na != nb ||
		    na <= 0 || na > (1 << 24))
			break;
		if (na > cap) {
			int64_t *x = realloc(ia, (size_t)na * sizeof(*ia));
			int64_t *y = x != NULL ? realloc(ib, (size_t)na *
			    sizeof(*ib)) : NULL;

			if (x != NULL)
				ia = x;
			if (y == NULL) {
				rc = q_fail(qa, -HWTR_E_NOMEM, "out of memory");
				break;
			}
			ib = y;
			cap = na;
		}
		if (hwtr_ix_chunk_blocks(sqlite3_column_blob(sa, 2), (size_t)
		    sqlite3_column_bytes(sa, 2), na, ia) < 0 ||
		    hwtr_ix_chunk_blocks(sqlite3_column_blob(sb, 2), (size_t)
		    sqlite3_column_bytes(sb, 2), nb, ib) < 0)
			break;
		for (j = 0; j < na; j++) {
			if (ia[j] < 0 || ib[j] < 0 || ia[j] >= ba->n ||
			    ib[j] >= bb->n || ba->key[ia[j]] != bb->key[ib[j]])
				goto out;
			*prevp = ia[j];
			(*seqp)++;
		}
	}
out:
	sqlite3_finalize(sa);
	sqlite3_finalize(sb);
	free(ia);
	free(ib);
	return (rc);
}

/*
 * The next @nnext blocks of one side (@side, query @q, thread @t) from its
 * first that differs (at @seq; cursor @c on it when @r is 1, past the end
 * when 0), as rows of @res through @qa.
 */
static int
d_next_rows(struct hwtr_q *qa, struct hwtr_q *q, struct hwtr_q_res *res,
    const char *side, int64_t t, struct d_cur *c, int r, int64_t seq,
    int64_t nnext)
{
	int64_t k;
	int rc = 0;

	for (k = 0; k < nnext; k++) {
		if (k > 0 && r && (r = d_cur_next(q, c)) < 0)
			return (q == qa ? r : q_fail(qa, r, "%s: %s", side,
			    hwtr_q_errmsg(q)));
		if (r)
			rc = d_block_row(q, qa, res, "next", side, t, c->seq,
			    c->block, 0);
		else
			rc = d_row(qa, res, "next", side, t, seq + k,
			    "(end of thread)", NULL, -1);
		if (rc < 0 || !r)
			break;
	}
	return (rc);
}

/*
 * Thread @ta of A against @tb of B: the first block that differs, the
 * block both ran just before it (where the paths split), and the next
 * @nnext blocks of each side.
 */
static int
d_diverge(struct hwtr_q *qa, struct hwtr_q *qb, struct hwtr_q_res *res,
    const struct d_blocks *ba, const struct d_blocks *bb, int64_t ta,
    int64_t tb, int64_t nnext)
{
	struct d_cur ca, cb;
	int64_t prev, seq, split;
	int ra, rb, rc;
	char msg[96];

	if ((rc = d_fast(qa, qb, ba, bb, ta, tb, &seq, &prev)) < 0)
		return (rc);
	if ((rc = d_cur_open(qa, &ca, ta, seq)) < 0)
		return (rc);
	if ((rc = d_cur_open(qb, &cb, tb, seq)) < 0) {
		sqlite3_finalize(ca.st);
		return (q_fail(qa, rc, "B: %s", hwtr_q_errmsg(qb)));
	}
	for (;;) {
		if ((ra = d_cur_next(qa, &ca)) < 0) {
			rc = ra;
			goto out;
		}
		if ((rb = d_cur_next(qb, &cb)) < 0) {
			rc = q_fail(qa, rb, "B: %s", hwtr_q_errmsg(qb));
			goto out;
		}
		if (!ra && !rb) {
			snprintf(msg, sizeof(msg), "(the same %lld blocks)",
			    (long long)seq);
			rc = d_row(qa, res, "same", "both", ta, seq, msg, NULL,
			    -1);
			goto out;
		}
		if (!ra || !rb || ca.block < 0 || cb.block < 0 ||
		    ca.block >= ba->n || cb.block >= bb->n ||
		    ba->key[ca.block] != bb->key[cb.block])
			break;
		prev = ca.block;
		seq++;
	}
	split = seq - 1;
	if (prev >= 0 && (rc = d_block_row(qa, qa, res, "split", "both", ta,
	    split, prev, 1)) < 0)
		goto out;
	/* The next blocks of each side, from the first that differs. */
	if ((rc = d_next_rows(qa, qa, res, "A", ta, &ca, ra, seq,
	    nnext)) < 0)
		goto out;
	rc = d_next_rows(qa, qb, res, "B", tb, &cb, rb, seq, nnext);
out:
	sqlite3_finalize(ca.st);
	sqlite3_finalize(cb.st);
	return (rc);
}

/* The first-divergence answer (hwtrace diff --first). */
int
qd_first(struct hwtr_q *qa, struct hwtr_q *qb,
    const struct hwtr_q_diff_opts *opts, struct hwtr_q_res **resp)
{
	struct d_blocks ba = { 0 }, bb = { 0 };
	int64_t *ta = NULL, *tb = NULL;
	int64_t nnext = opts != NULL && opts->next > 0 ? opts->next : 4;
	size_t na = 0, nb = 0, i;
	int rc;

	*resp = NULL;
	qa->msg[0] = '\0';
	qb->msg[0] = '\0';
	if ((rc = q_res_new(resp, HWTR_NELEM(d_cols), d_cols)) < 0)
		return (q_fail(qa, rc, "out of memory"));
	if ((rc = d_sets(qa, qb, *resp, "function", D_FUNCS_SQL)) < 0 ||
	    (rc = d_sets(qa, qb, *resp, "line", NULL)) < 0 ||
	    (rc = d_sets(qa, qb, *resp, "branch", D_BRANCHES_SQL)) < 0)
		goto out;
	if ((rc = qd_blocks_load(qa, &ba)) < 0)
		goto out;
	if ((rc = qd_blocks_load(qb, &bb)) < 0 ||
	    (rc = qd_threads(qb, &tb, &nb)) < 0) {
		rc = q_fail(qa, rc, "B: %s", hwtr_q_errmsg(qb));
		goto out;
	}
	if ((rc = qd_threads(qa, &ta, &na)) < 0)
		goto out;
	for (i = 0; i < na || i < nb; i++) {
		if (i >= nb)
			rc = d_row(qa, *resp, "thread", "A", ta[i], -1,
			    "(no such thread in B)", NULL, -1);
		else if (i >= na)
			rc = d_row(qa, *resp, "thread", "B", tb[i], -1,
			    "(no such thread in A)", NULL, -1);
		else
			rc = d_diverge(qa, qb, *resp, &ba, &bb, ta[i], tb[i],
			    nnext);
		if (rc < 0)
			goto out;
	}
	rc = 0;
out:
	qd_blocks_free(&ba);
	qd_blocks_free(&bb);
	free(ta);
	free(tb);
	if (rc < 0) {
		hwtr_q_res_free(*resp);
		*resp = NULL;
	}
	return (rc);
}

