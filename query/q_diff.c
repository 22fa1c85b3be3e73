/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * hwtrace diff A B: where two runs of one program part ways, where they
 * meet again and what each ran in between (the alignment below), or with
 * --first the answer of q_diff_first.c.
 *
 * Runs are compared by names, not ids: a block by its image (build id,
 * else path) and link-time address, a function by its name; ids and
 * run-time addresses differ between two databases (ids follow the order
 * of first execution, addresses the load addresses of each run).  Threads
 * are paired in id order.
 */

#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "q_diff.h"

/*
 * The alignment of two threads by structure, in the manner of execution
 * indexing (Xin, Sumner and Zhang, PLDI 2008): a point of an execution is
 * its call path and its place in the frame's own sequence of blocks and
 * calls.  Both threads are walked side by side while their blocks agree
 * (same identity, same call depth).  Where they differ, the frame the last
 * common block ran in (depth d0) is the place: each side's tokens from
 * there are the blocks it runs at depth d0, a call below it counting as
 * the one block that made it (its subtree is skipped whole), up to where
 * the frame is left (returned from, or the thread ended).  The two runs
 * meet again at the first pair of equal tokens, the one with the fewest
 * tokens skipped on the two sides together (or both leaving the frame);
 * what lies before it on each side ran on that side only.  The search
 * looks at D_WINDOW tokens and D_BUFMAX blocks of each side.  When only
 * one side's tokens go past that (a loop that ran many more times there),
 * that side is read on, unbuffered, to its first token the other side
 * has; when both do, the two are taken to meet where the frame returns.
 * A side that ends with no meeting point leaves the region open to the
 * end.  The tokens are read D_LAZY first, then eight times more up to
 * D_WINDOW, until the meeting point found has fewer tokens before it
 * than were read on each side: then no pair further on can have fewer,
 * and it is the one the whole window gives (most regions are short,
 * while a window of a frame's tokens may hold a million of its callees'
 * blocks).
 */
#define D_WINDOW	4096
#define D_LAZY		64
#define D_BUFMAX	((size_t)1 << 20)
#define D_LIST		6		/* default names per side and kind */
/* A call's exit, as a position: never when the trace ended in it. */
#define D_EXIT_SQL							\
	"CASE WHEN exit_kind = 'end' OR exit_seq IS NULL THEN "		\
	"9223372036854775807 ELSE exit_seq END"

struct d_ent {
	int32_t		blk;
	int32_t		depth;
};

struct d_frame {
	int64_t		exit_seq;
	int32_t		depth;
};

/* One thread of one run: its blocks in order, with their call depth. */
struct d_side {
	struct hwtr_q		*q;
	const struct d_blocks	*bk;
	sqlite3_stmt		*chunks, *calls;
	/* Kept for each region: qd_place's, d_env_func's, d_list's. */
	sqlite3_stmt		*place, *env, *name[2];
	struct d_pl		*pl;		/* qd_place's answers */
	size_t			npl, plmask;
	int64_t			*chunk;		/* the chunk being read */
	int64_t			cn, cpos, ccap;
	int64_t			rseq;		/* seq of the next block read */
	int			reof;
	struct d_frame		*stk;		/* calls open at rseq */
	size_t			sn, scap;
	int64_t			c_entry, c_exit;	/* the next call */
	int32_t			c_depth;
	int			c_end;
	struct d_ent		*buf;		/* read ahead, from pos */
	size_t			bh, bn, bcap;
	int64_t			pos;
	int64_t			*cnt;		/* per block, in the region */
	int64_t			*touched;
	size_t			ntouched;
	int64_t			insns;		/* in the region */
	int64_t			last;		/* last block passed */
	size_t			list;		/* names per list, 0 all */
};

/* A block's place (qd_place()) by key block * 2 + at_last; -1: free. */
struct d_pl {
	int64_t		key;
	char		*what, *line;
};

static void
d_pl_free(struct d_side *s)
{
	size_t i;

	for (i = 0; s->pl != NULL && i <= s->plmask; i++)
		if (s->pl[i].key >= 0) {
			free(s->pl[i].what);
			free(s->pl[i].line);
		}
	free(s->pl);
	s->pl = NULL;
	s->npl = s->plmask = 0;
}

/*
 * The place of block @blk (qd_place(), asked once per block: the regions
 * of a loop name the same few again and again), into @whatp and @linep,
 * both copies; a slot of the table for it first.
 */
static int
d_pl_get(struct d_side *s, int64_t blk, int at_last, char **whatp,
    char **linep)
{
	struct d_pl *t, *e;
	int64_t key = blk * 2 + (at_last != 0);
	size_t i, h, size;
	int rc;

	*whatp = *linep = NULL;
	if (s->pl == NULL || s->npl * 2 >= s->plmask) {
		size = s->pl == NULL ? 256 : (s->plmask + 1) * 2;
		if ((t = malloc(size * sizeof(*t))) == NULL)
			return (q_fail(s->q, -HWTR_E_NOMEM, "out of memory"));
		for (i = 0; i < size; i++)
			t[i].key = -1;
		for (i = 0; s->pl != NULL && i <= s->plmask; i++) {
			if (s->pl[i].key < 0)
				continue;
			for (h = (size_t)s->pl[i].key * 0x9e3779b97f4a7c15ULL &
			    (size - 1); t[h].key >= 0; h = (h + 1) & (size - 1))
				;
			t[h] = s->pl[i];
		}
		free(s->pl);
		s->pl = t;
		s->plmask = size - 1;
	}
	for (h = (size_t)key * 0x9e3779b97f4a7c15ULL & s->plmask;
	    s->pl[h].key >= 0 && s->pl[h].key != key; h = (h + 1) & s->plmask)
		;
	e = &s->pl[h];
	if (e->key < 0) {
		if ((rc = qd_place(s->q, &s->place, blk, at_last, &e->what,
		    &e->line)) < 0)
			return (rc);
		e->key = key;
		s->npl++;
	}
	if ((e->what != NULL && (*whatp = strdup(e->what)) == NULL) ||
	    (e->line != NULL && (*linep = strdup(e->line)) == NULL)) {
		free(*whatp);
		*whatp = NULL;
		return (q_fail(s->q, -HWTR_E_NOMEM, "out of memory"));
	}
	return (0);
}

/* A divergence region, as shown. */
struct d_region {
	int64_t		thread, seq, insns_a, insns_b;
	int		group;		/* 0 program, 1 environment, 2 thread */
	char		*s[10];		/* branch ... lines_b, as r_cols */
};

static const char *const r_cols[] = { "region", "group", "thread", "insns",
    "branch", "line", "next_a", "next_b", "rejoin", "rejoin_line",
    "only_a", "only_b", "lines_a", "lines_b", "insns_a", "insns_b" };
enum { R_BRANCH, R_LINE, R_NEXT_A, R_NEXT_B, R_REJOIN, R_REJOIN_LINE,
    R_ONLY_A, R_ONLY_B, R_LINES_A, R_LINES_B };

static int
d_call_next(struct d_side *s)
{
	int rc;

	rc = sqlite3_step(s->calls);
	if (rc == SQLITE_ROW) {
		s->c_entry = sqlite3_column_int64(s->calls, 0);
		s->c_exit = sqlite3_column_int64(s->calls, 1);
		s->c_depth = (int32_t)sqlite3_column_int64(s->calls, 2);
		return (0);
	}
	s->c_end = 1;
	if (rc != SQLITE_DONE)
		return (q_dbfail(s->q, "diff: cannot read the calls"));
	return (0);
}

static int
d_side_open(struct hwtr_q *q, const struct d_blocks *bk, int64_t thread,
    size_t list, struct d_side *s)
{
	int rc;

	memset(s, 0, sizeof(*s));
	s->q = q;
	s->list = list;
	s->bk = bk;
	s->last = -1;
	if (bk->n > 0 && ((s->cnt = calloc((size_t)bk->n,
	    sizeof(*s->cnt))) == NULL || (s->touched = calloc((size_t)bk->n,
	    sizeof(*s->touched))) == NULL))
		return (q_fail(q, -HWTR_E_NOMEM, "out of memory"));
	if ((rc = q_prepare(q, &s->chunks, "SELECT seq, nblocks, data FROM "
	    "exec_chunks WHERE thread = ?1 ORDER BY seq")) < 0 ||
	    (rc = q_prepare(q, &s->calls, "SELECT entry_seq, coalesce("
	    "exit_seq, 9223372036854775807), depth FROM calls WHERE thread = "
	    "?1 ORDER BY id")) < 0)
		return (rc);
	sqlite3_bind_int64(s->chunks, 1, thread);
	sqlite3_bind_int64(s->calls, 1, thread);
	return (d_call_next(s));
}

static void
d_side_close(struct d_side *s)
{
	sqlite3_finalize(s->chunks);
	sqlite3_finalize(s->calls);
	sqlite3_finalize(s->place);
	sqlite3_finalize(s->env);
	sqlite3_finalize(s->name[0]);
	sqlite3_finalize(s->name[1]);
	d_pl_free(s);
	free(s->chunk);
	free(s->stk);
	free(s->buf);
	free(s->cnt);
	free(s->touched);
	memset(s, 0, sizeof(*s));
}

/* The next chunk of the thread into s->chunk: 1, 0 at the end, < 0. */
static int
d_chunk(struct d_side *s)
{
	const void *data;
	int64_t n, seq, *nc;
	int rc;

	rc = sqlite3_step(s->chunks);
	if (rc != SQLITE_ROW) {
		s->reof = 1;
		return (rc == SQLITE_DONE ? 0 :
		    q_dbfail(s->q, "diff: cannot read the execution order"));
	}
	n = sqlite3_column_int64(s->chunks, 1);
	if (n <= 0 || n > (1 << 24))
		return (q_fail(s->q, -HWTR_E_FORMAT, "diff: chunk at seq "
		    "%jd has %jd blocks", (intmax_t)sqlite3_column_int64(
		    s->chunks, 0), (intmax_t)n));
	if (n > s->ccap) {
		if ((nc = realloc(s->chunk, (size_t)n * sizeof(*nc))) == NULL)
			return (q_fail(s->q, -HWTR_E_NOMEM, "out of memory"));
		s->chunk = nc;
		s->ccap = n;
	}
	/* Each block's seq is counted on from the chunk's: none past 2^63. */
	seq = sqlite3_column_int64(s->chunks, 0);
	if (seq < 0 || seq > INT64_MAX - n)
		return (q_fail(s->q, -HWTR_E_FORMAT, "diff: chunk at seq %jd "
		    "of %jd blocks: its seq is out of range (a damaged "
		    "database?)", (intmax_t)seq, (intmax_t)n));
	data = sqlite3_column_blob(s->chunks, 2);
	if (hwtr_ix_chunk_blocks(data, (size_t)sqlite3_column_bytes(
	    s->chunks, 2), n, s->chunk) < 0)
		return (q_fail(s->q, -HWTR_E_FORMAT, "diff: chunk at seq %jd "
		    "does not decode", (intmax_t)seq));
	s->rseq = seq;
	s->cn = n;
	s->cpos = 0;
	return (1);
}

/* The next block of the thread and its call depth: 1, 0 at the end, < 0. */
static int
d_raw(struct d_side *s, struct d_ent *e)
{
	struct d_frame *ns;
	int64_t seq, b;
	size_t nc;
	int rc;

	while (s->cpos == s->cn) {
		if (s->reof)
			return (0);
		if ((rc = d_chunk(s)) <= 0)
			return (rc);
	}
	b = s->chunk[s->cpos++];
	seq = s->rseq++;
	while (!s->c_end && s->c_entry <= seq) {
		if (s->sn == s->scap) {
			nc = s->scap ? s->scap * 2 : 64;
			if ((ns = realloc(s->stk, nc * sizeof(*ns))) == NULL)
				return (q_fail(s->q, -HWTR_E_NOMEM,
				    "out of memory"));
			s->stk = ns;
			s->scap = nc;
		}
		while (s->sn > 0 && s->stk[s->sn - 1].exit_seq <= s->c_entry)
			s->sn--;
		s->stk[s->sn].exit_seq = s->c_exit;
		s->stk[s->sn++].depth = s->c_depth;
		if ((rc = d_call_next(s)) < 0)
			return (rc);
	}
	while (s->sn > 0 && s->stk[s->sn - 1].exit_seq <= seq)
		s->sn--;
	e->blk = b >= 0 && b < s->bk->n ? (int32_t)b : -1;
	e->depth = s->sn > 0 ? s->stk[s->sn - 1].depth : -1;
	return (1);
}

/*
 * The block @k places ahead of s->pos into *e: 1, 0 past the end, 2 past
 * what may be read ahead (D_BUFMAX), < 0.
 */
static int
d_peek(struct d_side *s, size_t k, struct d_ent *e)
{
	struct d_ent *nb;
	size_t nc;
	int rc;

	while (s->bn <= k) {
		if (k >= D_BUFMAX)
			return (2);
		if (s->bh + s->bn == s->bcap) {
			if (s->bh > 0) {
				memmove(s->buf, s->buf + s->bh, s->bn *
				    sizeof(*s->buf));
				s->bh = 0;
			} else {
				nc = s->bcap ? s->bcap * 2 : 4096;
				if ((nb = realloc(s->buf, nc *
				    sizeof(*nb))) == NULL)
					return (q_fail(s->q, -HWTR_E_NOMEM,
					    "out of memory"));
				s->buf = nb;
				s->bcap = nc;
			}
		}
		if ((rc = d_raw(s, &s->buf[s->bh + s->bn])) <= 0)
			return (rc);
		s->bn++;
	}
	*e = s->buf[s->bh + k];
	return (1);
}

/*
 * Pass @n blocks (-1: to the end; with @d0 >= 0, while deeper than d0 - 1:
 * to where the frame is left), counting them in the region if @count.
 */
static int
d_adv(struct d_side *s, int64_t n, int32_t d0, int count)
{
	struct d_ent e;
	int64_t i;
	int rc;

	for (i = 0; n < 0 || i < n; i++) {
		if ((i & 0xffff) == 0xffff && q_limit_poll(s->q))
			return (q_fail(s->q, -HWTR_E_LIMIT, "diff: the time "
			    "limit"));
		if ((rc = d_peek(s, 0, &e)) < 0)
			return (rc);
		if (rc == 0 || (n < 0 && d0 >= 0 && e.depth < d0))
			break;
		if (count && e.blk >= 0) {
			if (s->cnt[e.blk]++ == 0)
				s->touched[s->ntouched++] = e.blk;
			s->insns += s->bk->ninsns[e.blk];
		}
		s->last = e.blk;
		s->bh++;
		s->bn--;
		s->pos++;
	}
	return (0);
}

/* A token of a frame: a block at its depth, or how the frame was left. */
enum { T_BLOCK, T_EXIT, T_END, T_WINDOW };
struct d_tok {
	uint64_t	key;
	int64_t		off;		/* blocks ahead of pos */
	int		kind;
};

/*
 * The tokens of frame depth @d0 of @s from s->pos, the last not a block;
 * at most @lim blocks (*@cutp 1 when fewer than D_WINDOW were for that).
 */
static int
d_tokens(struct d_side *s, int32_t d0, struct d_tok *t, size_t *np,
    size_t lim, int *cutp)
{
	struct d_ent e;
	size_t n = 0, k;
	int rc;

	*cutp = 0;
	for (k = 0;; k++) {
		if ((rc = d_peek(s, k, &e)) < 0)
			return (rc);
		t[n].off = (int64_t)k;
		t[n].key = 0;
		if (rc == 0 || rc == 2) {
			t[n++].kind = rc == 0 ? T_END : T_WINDOW;
			break;
		}
		if (e.depth < d0) {
			t[n++].kind = T_EXIT;
			break;
		}
		if (e.depth != d0)
			continue;
		if (n == lim) {
			*cutp = lim < D_WINDOW;
			t[n++].kind = T_WINDOW;
			break;
		}
		t[n].kind = T_BLOCK;
		t[n++].key = e.blk >= 0 ? s->bk->key[e.blk] : 0;
	}
	*np = n;
	return (0);
}

static uint64_t
d_tok_hash(const struct d_tok *t)
{
	return ((t->key ^ (uint64_t)t->kind) * 0x9e3779b97f4a7c15ULL);
}

static int
d_tok_eq(const struct d_tok *a, const struct d_tok *b)
{
	return (a->kind == b->kind && a->kind != T_WINDOW &&
	    (a->kind != T_BLOCK || (a->key == b->key && a->key != 0)));
}

/* A table of the first place of each token of @t, *maskp its size - 1. */
static int
d_tab_new(struct hwtr_q *q, const struct d_tok *t, size_t n, int32_t **tabp,
    size_t *maskp)
{
	int32_t *tab;
	size_t size = 16, mask, i, h;

	while (size < n * 2)
		size *= 2;
	mask = size - 1;
	if ((tab = malloc(size * sizeof(*tab))) == NULL)
		return (q_fail(q, -HWTR_E_NOMEM, "out of memory"));
	memset(tab, 0xff, size * sizeof(*tab));
	for (i = 0; i < n; i++) {
		for (h = d_tok_hash(&t[i]) & mask; tab[h] >= 0 &&
		    !d_tok_eq(&t[tab[h]], &t[i]); h = (h + 1) & mask)
			;
		if (tab[h] < 0)
			tab[h] = (int32_t)i;
	}
	*tabp = tab;
	*maskp = mask;
	return (0);
}

/* The first place of token @x in @t (table @tab), -1 when none. */
static int64_t
d_tab_find(const int32_t *tab, size_t mask, const struct d_tok *t,
    const struct d_tok *x)
{
	size_t h;

	for (h = d_tok_hash(x) & mask; tab[h] >= 0; h = (h + 1) & mask)
		if (d_tok_eq(&t[tab[h]], x))
			return (tab[h]);
	return (-1);
}

/*
 * The meeting point: the pair of equal tokens of @ta and @tb with the
 * fewest tokens before them on the two sides together.  *ip, *jp -1 when
 * there is none.
 */
static int
d_meet(struct hwtr_q *q, const struct d_tok *ta, size_t na,
    const struct d_tok *tb, size_t nb, int64_t *ip, int64_t *jp)
{
	int32_t *tab = NULL;
	size_t mask = 0, i;
	int64_t best = INT64_MAX, j;
	int rc;

	*ip = *jp = -1;
	if ((rc = d_tab_new(q, tb, nb, &tab, &mask)) < 0)
		return (rc);
	for (i = 0; i < na && (int64_t)i < best; i++) {
		if ((j = d_tab_find(tab, mask, tb, &ta[i])) >= 0 &&
		    (int64_t)i + j < best) {
			best = (int64_t)i + j;
			*ip = (int64_t)i;
			*jp = j;
		}
	}
	free(tab);
	return (0);
}

/*
 * Side @s, whose tokens went past the window while those of the other
 * side (@t, @n, the last leaving the frame) did not, read on, counting
 * what it runs, up to its first token that is one of @t: *ip is that
 * token's index in @t, -1 when @s ended first.  Nothing is buffered: a
 * loop that ran many more times on one side is passed whole.
 */
static int
d_stream(struct d_side *s, int32_t d0, const struct d_tok *t, size_t n,
    int64_t *ip)
{
	struct d_tok x;
	struct d_ent e;
	int32_t *tab = NULL;
	size_t mask = 0;
	int rc;

	*ip = -1;
	assert(n > 0 && t[n - 1].kind == T_EXIT);
	if ((rc = d_tab_new(s->q, t, n, &tab, &mask)) < 0)
		return (rc);
	for (;;) {
		if ((rc = d_peek(s, 0, &e)) <= 0)
			break;
		if (e.depth <= d0) {
			x.kind = e.depth < d0 ? T_EXIT : T_BLOCK;
			x.key = e.blk >= 0 && x.kind == T_BLOCK ?
			    s->bk->key[e.blk] : 0;
			x.off = 0;
			if ((*ip = d_tab_find(tab, mask, t, &x)) >= 0)
				break;
		}
		if ((rc = d_adv(s, 1, -1, 1)) < 0)
			break;
	}
	free(tab);
	return (rc < 0 ? rc : 0);
}

/* What one side ran in the region, by function or by line. */
struct d_agg {
	int64_t		a, b, insns;
};

static int
d_agg_key(const void *x, const void *y)
{
	const struct d_agg *p = x, *r = y;

	if (p->a != r->a)
		return (p->a < r->a ? -1 : 1);
	return (p->b < r->b ? -1 : p->b > r->b);
}

static int
d_agg_size(const void *x, const void *y)
{
	const struct d_agg *p = x, *r = y;

	if (p->insns != r->insns)
		return (p->insns > r->insns ? -1 : 1);
	return (d_agg_key(x, y));
}

/*
 * The functions (@by_line 0) or source lines (1) of the blocks @s counted,
 * the largest first, "name insns, ..." into *outp (NULL when none).
 */
static int
d_list(struct d_side *s, int by_line, char **outp)
{
	struct d_agg *ag;
	struct q_str str = { 0 };
	sqlite3_stmt **st = &s->name[by_line != 0];
	const unsigned char *nm;
	size_t i, n = 0, m;
	int64_t blk;
	int rc;

	*outp = NULL;
	if (s->ntouched == 0)
		return (0);
	if ((ag = calloc(s->ntouched, sizeof(*ag))) == NULL)
		return (q_fail(s->q, -HWTR_E_NOMEM, "out of memory"));
	for (i = 0; i < s->ntouched; i++) {
		blk = s->touched[i];
		if (by_line && s->bk->file[blk] < 0)
			continue;
		ag[n].a = by_line ? s->bk->file[blk] : s->bk->sym[blk];
		ag[n].b = by_line ? s->bk->line[blk] : 0;
		ag[n++].insns = s->cnt[blk] * s->bk->ninsns[blk];
	}
	qsort(ag, n, sizeof(*ag), d_agg_key);
	for (i = m = 0; i < n; i++) {
		if (m > 0 && d_agg_key(&ag[m - 1], &ag[i]) == 0)
			ag[m - 1].insns += ag[i].insns;
		else
			ag[m++] = ag[i];
	}
	qsort(ag, m, sizeof(*ag), d_agg_size);
	if (m > 0 && *st == NULL && (rc = q_prepare(s->q, st, by_line ?
	    "SELECT path FROM files WHERE id = ?1" : "SELECT name FROM "
	    "symbols WHERE id = ?1")) < 0) {
		free(ag);
		return (rc);
	}
	for (i = 0; i < m && (s->list == 0 || i < s->list); i++) {
		sqlite3_reset(*st);
		sqlite3_bind_int64(*st, 1, ag[i].a);
		nm = sqlite3_step(*st) == SQLITE_ROW ?
		    sqlite3_column_text(*st, 0) : NULL;
		if (i > 0)
			q_str_puts(&str, ", ");
		if (by_line)
			q_str_printf(&str, "%s:%jd %jd", nm != NULL ?
			    (const char *)nm : "?", (intmax_t)ag[i].b,
			    (intmax_t)ag[i].insns);
		else
			q_str_printf(&str, "%s %jd", nm != NULL ?
			    (const char *)nm : "(no symbol)",
			    (intmax_t)ag[i].insns);
	}
	if (s->list > 0 && m > s->list)
		q_str_printf(&str, ", (%zu more)", m - s->list);
	if (*st != NULL)
		sqlite3_reset(*st);
	free(ag);
	if (str.err) {
		free(str.p);
		return (q_fail(s->q, -HWTR_E_NOMEM, "out of memory"));
	}
	*outp = str.p;
	return (0);
}

/* Forget what @s counted in the region. */
static void
d_side_reset(struct d_side *s)
{
	size_t i;

	for (i = 0; i < s->ntouched; i++)
		s->cnt[s->touched[i]] = 0;
	s->ntouched = 0;
	s->insns = 0;
}

/* "function+0x1a file:line" of a block, or @none when there is none. */
static int
d_place_str(struct d_side *s, int64_t blk, int at_last, const char *none,
    char **outp, char **linep)
{
	struct hwtr_q *q = s->q;
	char *what, *line;
	int rc;

	*outp = NULL;
	if (linep != NULL)
		*linep = NULL;
	if (blk < 0)
		return ((*outp = strdup(none)) == NULL ?
		    q_fail(q, -HWTR_E_NOMEM, "out of memory") : 0);
	if ((rc = d_pl_get(s, blk, at_last, &what, &line)) < 0)
		return (rc);
	if (linep != NULL) {
		*linep = line;
		*outp = what;
		return (0);
	}
	rc = 0;
	if (what != NULL && line != NULL) {
		if (asprintf(outp, "%s %s", what, line) < 0) {
			*outp = NULL;
			rc = q_fail(q, -HWTR_E_NOMEM, "out of memory");
		}
	} else if (line == NULL) {
		*outp = what;
		what = NULL;
	}
	free(what);
	free(line);
	return (rc);
}

/* The regions found, to be sorted and shown. */
struct d_regions {
	struct d_region	*v;
	size_t		n, cap;
};

static void
d_regions_free(struct d_regions *rs)
{
	size_t i, k;

	for (i = 0; i < rs->n; i++)
		for (k = 0; k < HWTR_NELEM(rs->v[i].s); k++)
			free(rs->v[i].s[k]);
	free(rs->v);
	memset(rs, 0, sizeof(*rs));
}

static struct d_region *
d_region_new(struct d_regions *rs)
{
	struct d_region *nv;
	size_t nc;

	if (rs->n == rs->cap) {
		nc = rs->cap ? rs->cap * 2 : 16;
		if ((nv = realloc(rs->v, nc * sizeof(*nv))) == NULL)
			return (NULL);
		rs->v = nv;
		rs->cap = nc;
	}
	memset(&rs->v[rs->n], 0, sizeof(rs->v[rs->n]));
	return (&rs->v[rs->n++]);
}

/*
 * Where thread @thread of @q entered main for the first time and the block
 * after its return ([*lop, *hip); *hip INT64_MAX when the trace ended in
 * it); *lop -1 when it has no call of main.  A program without symbols
 * has no main by name: then main is the call the C library's start-up
 * (__libc_start_call_main, or __libc_start_main before glibc 2.34) made
 * that ran the most instructions.
 */
static int
d_main_span(struct hwtr_q *q, int64_t thread, int64_t *lop, int64_t *hip)
{
	static const char *const sql[] = {
	    "SELECT entry_seq, " D_EXIT_SQL " FROM calls WHERE symbol = ?1 "
	    "AND thread = ?2 ORDER BY id LIMIT 1",
	    "SELECT entry_seq, " D_EXIT_SQL " FROM calls WHERE thread = ?2 "
	    "AND caller_symbol = ?1 ORDER BY insns DESC, id LIMIT 1" };
	static const char *const names[] = { "SELECT id FROM symbols WHERE "
	    "name = 'main'", "SELECT id FROM symbols WHERE name IN "
	    "('__libc_start_call_main', '__libc_start_main')" };
	sqlite3_stmt *ss, *sc;
	size_t k;
	int rc;

	*lop = *hip = -1;
	for (k = 0; k < HWTR_NELEM(sql) && *lop < 0; k++) {
		if ((rc = q_prepare(q, &ss, names[k])) < 0)
			return (rc);
		if ((rc = q_prepare(q, &sc, sql[k])) < 0) {
			sqlite3_finalize(ss);
			return (rc);
		}
		while (sqlite3_step(ss) == SQLITE_ROW) {
			sqlite3_reset(sc);
			sqlite3_bind_int64(sc, 1, sqlite3_column_int64(ss, 0));
			sqlite3_bind_int64(sc, 2, thread);
			if (sqlite3_step(sc) == SQLITE_ROW && (*lop < 0 ||
			    sqlite3_column_int64(sc, 0) < *lop)) {
				*lop = sqlite3_column_int64(sc, 0);
				*hip = sqlite3_column_int64(sc, 1);
			}
		}
		sqlite3_finalize(ss);
		sqlite3_finalize(sc);
	}
	return (0);
}

/*
 * Whether function @sym of @q reads the environment itself (getenv and
 * its kin): a branch there is the environment's, even inside main.
 */
static int
d_env_func(struct d_side *s, int64_t sym)
{
	int yes;

	if (sym < 0 || (s->env == NULL && q_prepare(s->q, &s->env, "SELECT "
	    "name IN ('getenv', 'secure_getenv', '__libc_secure_getenv', "
	    "'__GI_getenv', '__GI___libc_secure_getenv') FROM symbols WHERE "
	    "id = ?1") < 0))
		return (0);
	sqlite3_bind_int64(s->env, 1, sym);
	yes = sqlite3_step(s->env) == SQLITE_ROW &&
	    sqlite3_column_int64(s->env, 0) != 0;
	sqlite3_reset(s->env);
	return (yes);
}

/* The names of a region: where it starts and ends, what each side ran. */
static int
d_region_names(struct d_side *a, struct d_side *b, struct d_region *r,
    int64_t branch, int64_t next_a, int64_t next_b, int64_t rejoin,
    const char *none)
{
	int rc;

	r->insns_a = a->insns;
	r->insns_b = b->insns;
	if ((rc = d_place_str(a, branch, 1, "(the start)", &r->s[R_BRANCH],
	    &r->s[R_LINE])) < 0 ||
	    (rc = d_place_str(a, next_a, 0, "(end of thread)",
	    &r->s[R_NEXT_A], NULL)) < 0 ||
	    (rc = d_place_str(b, next_b, 0, "(end of thread)",
	    &r->s[R_NEXT_B], NULL)) < 0 ||
	    (rc = d_place_str(a, rejoin, 0, none, &r->s[R_REJOIN],
	    &r->s[R_REJOIN_LINE])) < 0 ||
	    (rc = d_list(a, 0, &r->s[R_ONLY_A])) < 0 ||
	    (rc = d_list(b, 0, &r->s[R_ONLY_B])) < 0 ||
	    (rc = d_list(a, 1, &r->s[R_LINES_A])) < 0 ||
	    (rc = d_list(b, 1, &r->s[R_LINES_B])) < 0)
		return (rc);
	d_side_reset(a);
	d_side_reset(b);
	return (0);
}

/*
 * The region that starts where @a and @b part ways (their next blocks
 * differ; the last they ran alike was at depth @pdepth): pass it on both
 * sides, counting what each ran, and add it to @rs.  @mspan is where A
 * ran main (d_main_span).
 */
static int
d_region(struct d_side *a, struct d_side *b, int32_t pdepth,
    const int64_t *mspan, struct d_tok *tka, struct d_tok *tkb,
    struct d_regions *rs)
{
	struct d_region *r;
	struct d_ent ea, eb;
	const char *none = NULL;
	int64_t branch = a->last, next_a, next_b, pa = a->pos, pb = b->pos;
	int64_t i, j;
	int32_t d0 = pdepth;
	size_t na, nb, lim;
	int ra, rb, rc, cuta, cutb;

	if ((ra = d_peek(a, 0, &ea)) < 0 || (rb = d_peek(b, 0, &eb)) < 0)
		return (ra < 0 ? ra : rb);
	if (ra == 1 && (branch < 0 || ea.depth < d0))
		d0 = ea.depth;
	if (rb == 1 && ((branch < 0 && ra != 1) || eb.depth < d0))
		d0 = eb.depth;
	next_a = ra == 1 ? ea.blk : -1;
	next_b = rb == 1 ? eb.blk : -1;
	for (lim = D_LAZY;; lim = lim * 8 < D_WINDOW ? lim * 8 : D_WINDOW) {
		if ((rc = d_tokens(a, d0, tka, &na, lim, &cuta)) < 0 ||
		    (rc = d_tokens(b, d0, tkb, &nb, lim, &cutb)) < 0 ||
		    (rc = d_meet(a->q, tka, na, tkb, nb, &i, &j)) < 0)
			return (rc);
		if ((!cuta && !cutb) || (i >= 0 && (!cuta || i + j <
		    (int64_t)na - 1) && (!cutb || i + j < (int64_t)nb - 1)))
			break;
	}
	assert(na > 0 && nb > 0);
	if (i >= 0 && tka[i].kind != T_END) {
		rc = d_adv(a, tka[i].off, -1, 1);
		if (rc == 0)
			rc = d_adv(b, tkb[j].off, -1, 1);
	} else if (i >= 0 || tka[na - 1].kind == T_END ||
	    tkb[nb - 1].kind == T_END) {
		/* Both ended, or one did with no meeting point. */
		none = i >= 0 ? "(both ended)" : tka[na - 1].kind == T_END ?
		    "(none: A ended)" : "(none: B ended)";
		if ((rc = d_adv(a, -1, -1, 1)) == 0)
			rc = d_adv(b, -1, -1, 1);
	} else if (tka[na - 1].kind == T_EXIT || tkb[nb - 1].kind == T_EXIT) {
		/* One side's tokens fit in the window: read the other on. */
		if (tka[na - 1].kind == T_EXIT) {
			rc = d_stream(b, d0, tka, na, &i);
			if (rc == 0)
				rc = d_adv(a, i >= 0 ? tka[i].off : -1, -1, 1);
			if (i < 0)
				none = "(none: B ended)";
		} else {
			rc = d_stream(a, d0, tkb, nb, &j);
			if (rc == 0)
				rc = d_adv(b, j >= 0 ? tkb[j].off : -1, -1, 1);
			if (j < 0)
				none = "(none: A ended)";
		}
	} else {
		/* Neither fits in the window: they meet where d0 returns. */
		if ((rc = d_adv(a, -1, d0, 1)) == 0)
			rc = d_adv(b, -1, d0, 1);
	}
	if (rc < 0)
		return (rc);
	if (a->pos == pa && b->pos == pb &&
	    ((rc = d_adv(a, 1, -1, 1)) < 0 || (rc = d_adv(b, 1, -1, 1)) < 0))
		return (rc);
	if ((ra = d_peek(a, 0, &ea)) < 0 || (rb = d_peek(b, 0, &eb)) < 0)
		return (ra < 0 ? ra : rb);
	if (none == NULL && (ra != 1 || rb != 1))
		none = ra == 1 ? "(none: B ended)" : rb == 1 ?
		    "(none: A ended)" : "(both ended)";
	if ((r = d_region_new(rs)) == NULL)
		return (q_fail(a->q, -HWTR_E_NOMEM, "out of memory"));
	r->seq = pa;
	/*
	 * The environment's: ended before main began, began after it
	 * returned, or branched in getenv.
	 */
	r->group = (mspan[0] >= 0 && ((pa - 1 < mspan[0] &&
	    a->pos <= mspan[0]) || pa - 1 >= mspan[1])) ||
	    (branch >= 0 && d_env_func(a, a->bk->sym[branch]));
	return (d_region_names(a, b, r, branch, next_a, next_b,
	    none == NULL ? ea.blk : -1, none != NULL ? none : "?"));
}

/* Thread @ta of A against @tb of B: their divergence regions into @rs. */
static int
d_align(struct hwtr_q *qa, struct hwtr_q *qb, const struct d_blocks *ba,
    const struct d_blocks *bb, int64_t ta, int64_t tb, size_t list,
    struct d_regions *rs)
{
	struct d_side a, b;
	struct d_tok *tka, *tkb;
	struct d_ent ea, eb;
	int64_t mspan[2];
	size_t first = rs->n, k;
	uint64_t steps = 0;
	int32_t pdepth = 0;
	int ra, rb, rc;

	tka = calloc(D_WINDOW + 1, sizeof(*tka));
	tkb = calloc(D_WINDOW + 1, sizeof(*tkb));
	if (tka == NULL || tkb == NULL) {
		rc = q_fail(qa, -HWTR_E_NOMEM, "out of memory");
		goto out0;
	}
	if ((rc = d_main_span(qa, ta, &mspan[0], &mspan[1])) < 0)
		goto out0;
	if ((rc = d_side_open(qa, ba, ta, list, &a)) < 0)
		goto out1;
	if ((rc = d_side_open(qb, bb, tb, list, &b)) < 0) {
		rc = q_fail(qa, rc, "B: %s", hwtr_q_errmsg(qb));
		goto out;
	}
	for (;;) {
		/*
		 * The time limit, which SQLite's progress handler checks
		 * only in its own steps: a region's tokens and their meeting
		 * point are C alone, and a damaged history can make
		 * thousands of regions.
		 */
		if ((++steps & 63) == 0 && (q_limit_poll(qa) ||
		    q_limit_poll(qb))) {
			rc = q_fail(qa, -HWTR_E_LIMIT, "diff: the time limit");
			goto out;
		}
		if ((ra = d_peek(&a, 0, &ea)) < 0 ||
		    (rb = d_peek(&b, 0, &eb)) < 0) {
			rc = ra < 0 ? ra : q_fail(qa, rb, "B: %s",
			    hwtr_q_errmsg(qb));
			goto out;
		}
		if (ra != 1 && rb != 1)
			break;
		if (ra == 1 && rb == 1 && ea.blk >= 0 && eb.blk >= 0 &&
		    ba->key[ea.blk] == bb->key[eb.blk] &&
		    ea.depth == eb.depth) {
			pdepth = ea.depth;
			a.last = ea.blk;
			a.bh++;
			a.bn--;
			a.pos++;
			b.bh++;
			b.bn--;
			b.pos++;
			continue;
		}
		if ((rc = d_region(&a, &b, pdepth, mspan, tka, tkb, rs)) < 0)
			goto out;
	}
	for (k = first; k < rs->n; k++)
		rs->v[k].thread = ta;
	rc = 0;
out:
	d_side_close(&b);
out1:
	d_side_close(&a);
out0:
	free(tka);
	free(tkb);
	return (rc);
}

/* Program regions first, then threads, then environment; largest first. */
static int
d_region_cmp(const void *x, const void *y)
{
	static const int rank[] = { 0, 2, 1 };
	const struct d_region *p = x, *r = y;
	int64_t sp = p->insns_a + p->insns_b, sr = r->insns_a + r->insns_b;

	if (rank[p->group] != rank[r->group])
		return (rank[p->group] - rank[r->group]);
	if (sp != sr)
		return (sp > sr ? -1 : 1);
	if (p->thread != r->thread)
		return (p->thread < r->thread ? -1 : 1);
	return (p->seq < r->seq ? -1 : p->seq > r->seq);
}

static int
d_regions_out(struct hwtr_q *q, struct d_regions *rs, struct hwtr_q_res *res)
{
	static const char *const gname[] = { "program", "environment",
	    "thread" };
	struct d_region *r;
	size_t i, k;
	int rc;

	if (rs->n > 0)
		qsort(rs->v, rs->n, sizeof(*rs->v), d_region_cmp);
	for (i = 0; i < rs->n; i++) {
		r = &rs->v[i];
		rc = q_res_push_int(res, (int64_t)i + 1);
		rc |= q_res_push(res, HWTR_Q_TEXT, gname[r->group]);
		rc |= q_res_push_int(res, r->thread);
		rc |= q_res_push_int(res, r->insns_a + r->insns_b);
		for (k = 0; k < HWTR_NELEM(r->s); k++)
			rc |= q_res_push(res, r->s[k] != NULL ? HWTR_Q_TEXT :
			    HWTR_Q_NULL, r->s[k]);
		rc |= q_res_push_int(res, r->insns_a);
		rc |= q_res_push_int(res, r->insns_b);
		if (rc != 0)
			return (q_fail(q, -HWTR_E_NOMEM, "out of memory"));
		if ((rc = q_res_row_end(q, res)) < 0)
			return (rc);
	}
	return (0);
}

/* A thread that only one run has: a region of its own. */
static int
d_thread_only(struct hwtr_q *q, int64_t thread, int in_a,
    struct d_regions *rs)
{
	struct d_region *r;
	int64_t insns;
	int rc;

	if ((rc = q_int(q, &insns, 0, "SELECT coalesce(insns, 0) FROM "
	    "threads WHERE id = ?1", "i", thread)) < 0)
		return (rc);
	if ((r = d_region_new(rs)) == NULL)
		return (q_fail(q, -HWTR_E_NOMEM, "out of memory"));
	r->group = 2;
	r->thread = thread;
	r->seq = 0;
	*(in_a ? &r->insns_a : &r->insns_b) = insns;
	if ((r->s[in_a ? R_NEXT_B : R_NEXT_A] = strdup(in_a ?
	    "(no such thread in B)" : "(no such thread in A)")) == NULL)
		return (q_fail(q, -HWTR_E_NOMEM, "out of memory"));
	return (0);
}

/* The divergence regions of all pairs of threads. */
static int
d_run_align(struct hwtr_q *qa, struct hwtr_q *qb,
    const struct hwtr_q_diff_opts *opts, struct hwtr_q_res **resp)
{
	size_t list = opts == NULL || opts->list == 0 ? D_LIST :
	    opts->list < 0 ? 0 : (size_t)opts->list;
	struct d_blocks ba = { 0 }, bb = { 0 };
	struct d_regions rs = { 0 };
	int64_t *ta = NULL, *tb = NULL;
	size_t na = 0, nb = 0, i;
	int rc;

	if ((rc = q_res_new(resp, HWTR_NELEM(r_cols), r_cols)) < 0)
		return (q_fail(qa, rc, "out of memory"));
	if ((rc = qd_blocks_load(qa, &ba)) < 0 ||
	    (rc = qd_threads(qa, &ta, &na)) < 0)
		goto out;
	if ((rc = qd_blocks_load(qb, &bb)) < 0 ||
	    (rc = qd_threads(qb, &tb, &nb)) < 0)
		goto out;
	for (i = 0; i < na || i < nb; i++) {
		if (i >= nb)
			rc = d_thread_only(qa, ta[i], 1, &rs);
		else if (i >= na)
			rc = d_thread_only(qb, tb[i], 0, &rs);
		else
			rc = d_align(qa, qb, &ba, &bb, ta[i], tb[i], list,
			    &rs);
		if (rc < 0)
			goto out;
	}
	rc = d_regions_out(qa, &rs, *resp);
out:
	if (rc < 0 && qa->msg[0] == '\0')
		rc = q_fail(qa, rc, "B: %s", hwtr_q_errmsg(qb));
	d_regions_free(&rs);
	qd_blocks_free(&ba);
	qd_blocks_free(&bb);
	free(ta);
	free(tb);
	return (rc);
}

/* Under the time limit of the verbs (q_limit_begin), on both databases. */
int
hwtr_q_diff(struct hwtr_q *qa, struct hwtr_q *qb,
    const struct hwtr_q_diff_opts *opts, struct hwtr_q_res **resp)
{
	int64_t ms = opts != NULL ? opts->timeout_ms : 0;
	int rc, sa, sb;

	ms = ms == 0 ? -1 : ms < 0 ? 0 : ms;
	q_limit_begin(qa, ms, 0);
	q_limit_begin(qb, ms, 0);
	/* One budget for the two: the larger database's. */
	if (ms < 0 && qa->lim_ms > 0 && qb->lim_ms > 0) {
		qa->lim_ms = qa->lim_ms > qb->lim_ms ? qa->lim_ms : qb->lim_ms;
		qb->lim_ms = qa->lim_ms;
	}
	*resp = NULL;
	qa->msg[0] = '\0';
	qb->msg[0] = '\0';
	if (opts != NULL && opts->first)
		rc = qd_first(qa, qb, opts, resp);
	else
		rc = d_run_align(qa, qb, opts, resp);
	if (rc < 0) {
		hwtr_q_res_free(*resp);
		*resp = NULL;
	}
	sa = q_limit_end(qa);
	sb = q_limit_end(qb);
	if (sa || sb) {
		hwtr_q_res_free(*resp);
		*resp = NULL;
		rc = q_fail(qa, -HWTR_E_LIMIT, "diff: stopped after %jd.%03jd "
		    "s of CPU time on %s (the time limit; raise it with "
		    "--timeout, 0 for none)", (intmax_t)((sa ?
		    qa : qb)->lim_ms / 1000), (intmax_t)((sa ? qa : qb)->lim_ms %
		    1000), sa ? "A" : "B");
	}
	return (rc);
}
