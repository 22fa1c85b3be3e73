/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The calls column store: the page codec (also in the loadable extension)
 * and the writer hwtrace index uses (colstore.h).
 *
 * A page blob is
 *   byte 0     1 (columns stored raw) or 2 (zstd frame of them)
 *   varint     number of rows, the calls_pages row's n
 *   varint     length of the raw columns
 *   the raw columns, or their zstd frame.
 * The raw columns are, one column after the other, one LEB128 varint per
 * row, each the zigzag of a difference from what the row's other columns
 * or the row before predict (see cs_pred): consecutive ids cost 0,
 * entry positions a small delta, a call's exit the sum of its entry and
 * its length, so that most values are one byte and the same few bytes
 * repeat, which zstd then folds.  Measured on the valgrind captures of
 * gzip and python3: pages of 3 to 6 bytes per call (docs/PERFORMANCE.md).
 *
 * The symbol copy's pages (calls_bysym, colsym.c) are coded the same way
 * with another layout (struct cs_layout): the calls of one function,
 * each column predicted from that function's call before.
 */

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "hwtr_common.h"
#include "colstore.h"
#include "hwtr_ix_sqlite.h"
#include "hwtr_zbuf.h"

const char *const hwtr_cs_entry_kinds[] = { "call", "start", "return",
    "signal", "tail", NULL };
const char *const hwtr_cs_exit_kinds[] = { "return", "unwind", "end", "tail",
    NULL };
/* How many of each (the lists above less their NULL). */
#define CS_NENTRY_KINDS	5
#define CS_NEXIT_KINDS	4
_Static_assert(sizeof(hwtr_cs_entry_kinds) / sizeof(hwtr_cs_entry_kinds[0]) ==
    CS_NENTRY_KINDS + 1, "CS_NENTRY_KINDS");
_Static_assert(sizeof(hwtr_cs_exit_kinds) / sizeof(hwtr_cs_exit_kinds[0]) ==
    CS_NEXIT_KINDS + 1, "CS_NEXIT_KINDS");

#define CS_RAW		1
#define CS_ZSTD		2
#define CS_ZLEVEL	3
/* The nullable columns, in the bits of hwtr_cs_row.nul. */
#define CS_NULLABLE	((1u << CS_PARENT) | (1u << CS_SYMBOL) |	\
			 (1u << CS_CALL_IP) | (1u << CS_ENTRY_TSC) |	\
			 (1u << CS_EXIT_TSC) | (1u << CS_ENTRY_NS) |	\
			 (1u << CS_EXIT_NS))

int
hwtr_cs_kind(const char *const *kinds, const char *name)
{
	int i;

	for (i = 0; name != NULL && kinds[i] != NULL; i++)
		if (strcmp(kinds[i], name) == 0)
			return (i);
	return (-1);
}

static inline uint64_t
cs_zz(uint64_t d)
{
	return ((d << 1) ^ (uint64_t)((int64_t)d >> 63));
}

static inline uint64_t
cs_unzz(uint64_t u)
{
	return ((u >> 1) ^ (uint64_t)-(int64_t)(u & 1));
}

static inline uint8_t *
cs_put(uint8_t *p, uint64_t u)
{
	while (u >= 0x80) {
		*p++ = (uint8_t)(u | 0x80);
		u >>= 7;
	}
	*p++ = (uint8_t)u;
	return (p);
}

/* A varint from [*pp, end); -1 when it runs past the end or is too long. */
static inline int
cs_get(const uint8_t **pp, const uint8_t *end, uint64_t *up)
{
	const uint8_t *p = *pp;
	uint64_t u = 0;
	int shift;

	for (shift = 0; p < end && shift < 64; shift += 7) {
		uint8_t b = *p++;

		u |= (uint64_t)(b & 0x7f) << shift;
		if ((b & 0x80) == 0) {
			*pp = p;
			*up = u;
			return (0);
		}
	}
	return (-1);
}

#define U(r, c)		((uint64_t)(r)->v[c])
#define ISNUL(r, c)	(((r)->nul >> (c)) & 1)

struct cs_state {
	uint64_t	id, seq, insn, depth, tsc, xtsc, noff, xnoff;
	/* The symbol copy's: the same function's call before. */
	uint64_t	iseq, dins, dseq, fip, cip, csym, cip2, par;
	int		has_par;
};

/*
 * A layout: which columns a blob stores, in what order, and whether they
 * are predicted as in a page (rows of one thread in id order) or as in
 * the symbol copy (calls of one function: like the call before).
 */
struct cs_layout {
	int		ncols, sym;
	const int	*order;
	uint32_t	nullable;
};

static const int cs_order[] = {
	CS_ID, CS_ENTRY_SEQ, CS_BLOCKS, CS_EXIT_SEQ, CS_ENTRY_INSN, CS_INSNS,
	CS_EXIT_INSN, CS_SELF_INSNS, CS_DEPTH, CS_PARENT, CS_SYMBOL,
	CS_FUNC_IP, CS_CALL_IP, CS_ENTRY_KIND, CS_ENTRY_TSC, CS_EXIT_TSC,
	CS_ENTRY_NS, CS_EXIT_NS, CS_EXIT_KIND
};

/* The symbol copy: no thread nor symbol (its row's), the callers. */
static const int cs_sym_order[] = {
	CS_ID, CS_ENTRY_SEQ, CS_BLOCKS, CS_EXIT_SEQ, CS_ENTRY_INSN, CS_INSNS,
	CS_EXIT_INSN, CS_SELF_INSNS, CS_DEPTH, CS_PARENT, CS_FUNC_IP,
	CS_CALL_IP, CS_CALLER_SYMBOL, CS_CALLER_IP, CS_ENTRY_KIND,
	CS_ENTRY_TSC, CS_EXIT_TSC, CS_ENTRY_NS, CS_EXIT_NS, CS_EXIT_KIND
};

static const struct cs_layout cs_page_layout = {
	(int)(sizeof(cs_order) / sizeof(cs_order[0])), 0, cs_order,
	CS_NULLABLE
};
static const struct cs_layout cs_sym_layout = {
	(int)(sizeof(cs_sym_order) / sizeof(cs_sym_order[0])), 1,
	cs_sym_order,
	CS_NULLABLE | (1u << CS_CALLER_SYMBOL) | (1u << CS_CALLER_IP)
};

static void
cs_state_init(struct cs_state *st, int64_t id0, int64_t seq0)
{
	memset(st, 0, sizeof(*st));
	st->id = (uint64_t)id0 - 1;
	st->seq = (uint64_t)seq0;
}

/* The prediction for column @c of @r (from @r's earlier columns, @st). */
static uint64_t
cs_pred(int c, const struct hwtr_cs_row *r, const struct cs_state *st,
    int sym)
{
	switch (c) {
	case CS_ID:
		return (st->id + 1);
	case CS_ENTRY_SEQ:
		return (st->seq);
	case CS_EXIT_SEQ:
		return (U(r, CS_ENTRY_SEQ) + U(r, CS_BLOCKS));
	case CS_ENTRY_INSN:
		/*
		 * The symbol copy: as many instructions a block as between
		 * the two calls before.
		 */
		if (sym && st->dseq > 0 && U(r, CS_ENTRY_SEQ) > st->iseq &&
		    st->dins < (1ULL << 40))
			return (st->insn + (uint64_t)((unsigned __int128)
			    (U(r, CS_ENTRY_SEQ) - st->iseq) * st->dins /
			    st->dseq));
		return (st->insn);
	case CS_EXIT_INSN:
		return (U(r, CS_ENTRY_INSN) + U(r, CS_INSNS));
	case CS_SELF_INSNS:
		return (U(r, CS_INSNS));
	case CS_DEPTH:
		return (st->depth);
	case CS_PARENT:
		return (U(r, CS_ID));
	case CS_FUNC_IP:
		return (sym ? st->fip : 0);
	case CS_CALL_IP:
		return (sym ? st->cip : U(r, CS_FUNC_IP));
	case CS_CALLER_SYMBOL:
		return (st->csym);
	case CS_CALLER_IP:
		return (st->cip2);
	case CS_ENTRY_TSC:
		return (st->tsc);
	case CS_EXIT_TSC:
		return (ISNUL(r, CS_ENTRY_TSC) ? st->xtsc : U(r, CS_ENTRY_TSC));
	case CS_ENTRY_NS:
		return ((ISNUL(r, CS_ENTRY_TSC) ? 0 : U(r, CS_ENTRY_TSC)) +
		    st->noff);
	case CS_EXIT_NS:
		return ((ISNUL(r, CS_EXIT_TSC) ? 0 : U(r, CS_EXIT_TSC)) +
		    st->xnoff);
	default:
		return (0);
	}
}

/* After column @c of @r is known: the state for the next row. */
static void
cs_advance(int c, const struct hwtr_cs_row *r, struct cs_state *st)
{
	switch (c) {
	case CS_ID:
		st->id = U(r, CS_ID);
		break;
	case CS_ENTRY_SEQ:
		st->seq = U(r, CS_ENTRY_SEQ);
		break;
	case CS_ENTRY_INSN:
		st->dins = U(r, CS_ENTRY_INSN) - st->insn;
		st->dseq = U(r, CS_ENTRY_SEQ) - st->iseq;
		st->insn = U(r, CS_ENTRY_INSN);
		st->iseq = U(r, CS_ENTRY_SEQ);
		break;
	case CS_DEPTH:
		st->depth = U(r, CS_DEPTH);
		break;
	case CS_FUNC_IP:
		st->fip = U(r, CS_FUNC_IP);
		break;
	case CS_CALL_IP:
		if (!ISNUL(r, CS_CALL_IP))
			st->cip = U(r, CS_CALL_IP);
		break;
	case CS_CALLER_SYMBOL:
		if (!ISNUL(r, CS_CALLER_SYMBOL))
			st->csym = U(r, CS_CALLER_SYMBOL);
		break;
	case CS_CALLER_IP:
		if (!ISNUL(r, CS_CALLER_IP))
			st->cip2 = U(r, CS_CALLER_IP);
		break;
	case CS_PARENT:
		st->has_par = !ISNUL(r, CS_PARENT);
		st->par = U(r, CS_PARENT);
		break;
	case CS_ENTRY_TSC:
		if (!ISNUL(r, CS_ENTRY_TSC))
			st->tsc = U(r, CS_ENTRY_TSC);
		break;
	case CS_EXIT_TSC:
		if (!ISNUL(r, CS_EXIT_TSC))
			st->xtsc = U(r, CS_EXIT_TSC);
		break;
	case CS_ENTRY_NS:
		if (!ISNUL(r, CS_ENTRY_NS))
			st->noff = U(r, CS_ENTRY_NS) - (ISNUL(r, CS_ENTRY_TSC) ?
			    0 : U(r, CS_ENTRY_TSC));
		break;
	case CS_EXIT_NS:
		if (!ISNUL(r, CS_EXIT_NS))
			st->xnoff = U(r, CS_EXIT_NS) - (ISNUL(r, CS_EXIT_TSC) ?
			    0 : U(r, CS_EXIT_TSC));
		break;
	default:
		break;
	}
}

/*
 * Column @c's stored value: kinds as they are (and in a page func_ip),
 * the others the zigzag of the difference from the prediction, plus 1 in
 * a nullable column (0: NULL).
 */
static uint64_t
cs_stored(int c, const struct hwtr_cs_row *r, const struct cs_state *st,
    const struct cs_layout *lo)
{
	if (c == CS_ENTRY_KIND || c == CS_EXIT_KIND ||
	    (c == CS_FUNC_IP && !lo->sym))
		return (U(r, c));
	/*
	 * The symbol copy's parent: 1 for the same as the call before's
	 * (calls from one loop), else as in a page but from 2.
	 */
	if (c == CS_PARENT && lo->sym) {
		if (ISNUL(r, c))
			return (0);
		if (st->has_par && U(r, c) == st->par)
			return (1);
		return (cs_zz(U(r, c) - cs_pred(c, r, st, 1)) + 2);
	}
	if ((lo->nullable >> c) & 1) {
		if (ISNUL(r, c))
			return (0);
		return (cs_zz(U(r, c) - cs_pred(c, r, st, lo->sym)) + 1);
	}
	return (cs_zz(U(r, c) - cs_pred(c, r, st, lo->sym)));
}

/* Rows that a blob cannot hold: kinds out of range, NULL where not. */
static int
cs_row_bad(const struct hwtr_cs_row *r, const struct cs_layout *lo)
{
	return ((r->nul & ~lo->nullable) != 0 ||
	    r->v[CS_ENTRY_KIND] < 0 || r->v[CS_ENTRY_KIND] >= CS_NENTRY_KINDS ||
	    r->v[CS_EXIT_KIND] < 0 || r->v[CS_EXIT_KIND] >= CS_NEXIT_KINDS);
}

/* The columns of @n rows, then the blob (raw or zstd) into *@outp. */
static int
cs_encode(const struct hwtr_cs_row *rows, size_t n, int64_t id0,
    int64_t seq0, const struct cs_layout *lo, uint8_t **outp, size_t *lenp)
{
	uint8_t *raw, *out, *p;
	size_t i, rawlen, zlen, hdr;
	int k;

	assert(n > 0 && n <= HWTR_CS_PAGE);
	if ((raw = malloc(n * (size_t)lo->ncols * 10 + 1)) == NULL)
		return (-1);
	/* Column-major: each column's state runs down the rows. */
	p = raw;
	for (k = 0; k < lo->ncols; k++) {
		int c = lo->order[k];
		struct cs_state run;

		cs_state_init(&run, id0, seq0);
		for (i = 0; i < n; i++) {
			p = cs_put(p, cs_stored(c, &rows[i], &run, lo));
			cs_advance(c, &rows[i], &run);
		}
	}
	rawlen = (size_t)(p - raw);
	/* A varint is at most 10 bytes: the columns fit what was allocated. */
	assert(rawlen <= n * (size_t)lo->ncols * 10);
	out = malloc(1 + 20 + hwtr_zbuf_bound(rawlen));
	if (out == NULL) {
		free(raw);
		return (-1);
	}
	p = cs_put(out + 1, n);
	p = cs_put(p, rawlen);
	hdr = (size_t)(p - out);
	assert(hdr <= 1 + 20);
	zlen = hwtr_zbuf_compress(p, hwtr_zbuf_bound(rawlen), raw, rawlen,
	    CS_ZLEVEL);
	if (zlen > 0 && zlen < rawlen) {
		out[0] = CS_ZSTD;
		*lenp = hdr + zlen;
	} else {
		out[0] = CS_RAW;
		memcpy(p, raw, rawlen);
		*lenp = hdr + rawlen;
	}
	free(raw);
	*outp = out;
	return (0);
}

int
hwtr_cs_encode(const struct hwtr_cs_row *rows, size_t n, int64_t id0,
    int64_t seq0, uint8_t **outp, size_t *lenp)
{
	size_t i;

	*outp = NULL;
	if (n == 0 || n > HWTR_CS_PAGE)
		return (-1);
	for (i = 0; i < n; i++) {
		if (rows[i].v[CS_ID] < id0 || rows[i].v[CS_ID] - id0 >=
		    HWTR_CS_PAGE || (i > 0 && rows[i].v[CS_ID] <=
		    rows[i - 1].v[CS_ID]) || rows[i].v[CS_THREAD] !=
		    rows[0].v[CS_THREAD] || cs_row_bad(&rows[i],
		    &cs_page_layout))
			return (-1);
	}
	return (cs_encode(rows, n, id0, seq0, &cs_page_layout, outp, lenp));
}

int
hwtr_cs_sym_encode(const struct hwtr_cs_row *rows, size_t n,
    uint8_t **outp, size_t *lenp)
{
	size_t i;

	*outp = NULL;
	if (n == 0 || n > HWTR_CS_PAGE)
		return (-1);
	for (i = 0; i < n; i++) {
		if ((i > 0 && rows[i].v[CS_ID] <= rows[i - 1].v[CS_ID]) ||
		    rows[i].v[CS_THREAD] != rows[0].v[CS_THREAD] ||
		    (rows[i].nul & (1u << CS_SYMBOL)) ||
		    rows[i].v[CS_SYMBOL] != rows[0].v[CS_SYMBOL] ||
		    cs_row_bad(&rows[i], &cs_sym_layout))
			return (-1);
	}
	return (cs_encode(rows, n, rows[0].v[CS_ID], 0, &cs_sym_layout, outp,
	    lenp));
}

/*
 * The columns of a blob into @rows (@n of them, ids from @id0: in a page
 * below id0 + HWTR_CS_PAGE, in the symbol copy the first is id0).
 */
static int
cs_decode(const uint8_t *blob, size_t len, int64_t id0, int64_t seq0,
    int64_t n, const struct cs_layout *lo, struct hwtr_cs_row *rows,
    const char **whyp)
{
	const uint8_t *p = blob, *end = blob + len, *q, *qend;
	uint8_t *raw = NULL;
	uint64_t u, nrows, rawlen;
	int64_t i;
	int k, rc = -1;

	*whyp = "truncated header";
	if (len < 3 || n <= 0 || n > HWTR_CS_PAGE)
		goto bad;
	p++;
	if (cs_get(&p, end, &nrows) < 0 || cs_get(&p, end, &rawlen) < 0)
		goto bad;
	*whyp = "row count differs from its table row";
	if (nrows != (uint64_t)n)
		goto bad;
	*whyp = "impossible column length";
	if (rawlen < (uint64_t)n * (uint64_t)lo->ncols ||
	    rawlen > (uint64_t)n * (uint64_t)lo->ncols * 10)
		goto bad;
	if (blob[0] == CS_ZSTD) {
		*whyp = "out of memory";
		if ((raw = malloc(rawlen)) == NULL)
			goto bad;
		*whyp = "compressed columns do not decompress";
		if (hwtr_zbuf_decompress(raw, rawlen, p, (size_t)(end - p)) < 0)
			goto bad;
		q = raw;
		qend = raw + rawlen;
	} else if (blob[0] == CS_RAW) {
		*whyp = "column length differs from the blob";
		if ((uint64_t)(end - p) != rawlen)
			goto bad;
		q = p;
		qend = end;
	} else {
		*whyp = "unknown page format";
		goto bad;
	}
	for (k = 0; k < lo->ncols; k++) {
		int c = lo->order[k];
		struct cs_state run;

		cs_state_init(&run, id0, seq0);
		for (i = 0; i < n; i++) {
			struct hwtr_cs_row *r = &rows[i];

			*whyp = "truncated columns";
			if (cs_get(&q, qend, &u) < 0)
				goto bad;
			if (c == CS_ENTRY_KIND || c == CS_EXIT_KIND) {
				*whyp = "unknown call kind";
				if (u >= (c == CS_ENTRY_KIND ?
				    (uint64_t)CS_NENTRY_KINDS :
				    (uint64_t)CS_NEXIT_KINDS))
					goto bad;
				r->v[c] = (int64_t)u;
			} else if (c == CS_FUNC_IP && !lo->sym)
				r->v[c] = (int64_t)u;
			else if (c == CS_PARENT && lo->sym) {
				*whyp = "no parent before";
				if (u == 0)
					r->nul |= 1u << c;
				else if (u == 1 && !run.has_par)
					goto bad;
				else if (u == 1)
					r->v[c] = (int64_t)run.par;
				else
					r->v[c] = (int64_t)(cs_unzz(u - 2) +
					    cs_pred(c, r, &run, 1));
			} else if ((lo->nullable >> c) & 1) {
				if (u == 0)
					r->nul |= 1u << c;
				else
					r->v[c] = (int64_t)(cs_unzz(u - 1) +
					    cs_pred(c, r, &run, lo->sym));
			} else
				r->v[c] = (int64_t)(cs_unzz(u) +
				    cs_pred(c, r, &run, lo->sym));
			if (c == CS_ID) {
				*whyp = "ids out of order or outside the page";
				if (r->v[CS_ID] < id0 || (!lo->sym &&
				    r->v[CS_ID] - id0 >= HWTR_CS_PAGE) ||
				    (i > 0 && r->v[CS_ID] <=
				    rows[i - 1].v[CS_ID]) ||
				    (lo->sym && i == 0 && r->v[CS_ID] != id0))
					goto bad;
			}
			cs_advance(c, r, &run);
		}
	}
	*whyp = "bytes after the last column";
	if (q != qend)
		goto bad;
	*whyp = NULL;
	rc = 0;
bad:
	free(raw);
	return (rc);
}

int
hwtr_cs_decode(const uint8_t *blob, size_t len, int64_t id0, int64_t thread,
    int64_t n, int64_t seq0, struct hwtr_cs_row *rows, const char **whyp)
{
	int64_t i;

	if (n > 0 && n <= HWTR_CS_PAGE) {
		memset(rows, 0, (size_t)n * sizeof(*rows));
		for (i = 0; i < n; i++)
			rows[i].v[CS_THREAD] = thread;
	}
	return (cs_decode(blob, len, id0, seq0, n, &cs_page_layout, rows,
	    whyp));
}

int
hwtr_cs_sym_decode(const uint8_t *blob, size_t len, int64_t symbol,
    int64_t id0, int64_t thread, int64_t n, struct hwtr_cs_row *rows,
    const char **whyp)
{
	int64_t i;

	if (n > 0 && n <= HWTR_CS_PAGE) {
		memset(rows, 0, (size_t)n * sizeof(*rows));
		for (i = 0; i < n; i++) {
			rows[i].v[CS_THREAD] = thread;
			rows[i].v[CS_SYMBOL] = symbol;
		}
	}
	return (cs_decode(blob, len, id0, 0, n, &cs_sym_layout, rows, whyp));
}

int
hwtr_xo_pack(const uint8_t *p, size_t len, int64_t nblocks, uint8_t **outp,
    size_t *lenp)
{
	size_t cap = hwtr_zbuf_bound(len), n;
	uint8_t *out;

	*outp = NULL;
	if (nblocks <= 0 || len < (size_t)nblocks)
		return (0);
	if ((out = malloc(cap)) == NULL)
		return (-1);
	n = hwtr_zbuf_compress(out, cap, p, len, CS_ZLEVEL);
	if (n == 0 || n >= (size_t)nblocks) {
		free(out);
		return (0);
	}
	*outp = out;
	*lenp = n;
	return (0);
}

int
hwtr_xo_unpack(const uint8_t *p, size_t len, int64_t nblocks, uint8_t **outp,
    size_t *lenp)
{
	long long sz;
	uint8_t *out;

	*outp = NULL;
	if (nblocks <= 0 || len >= (size_t)nblocks)
		return (0);
	sz = hwtr_zbuf_size(p, len);
	if (sz < nblocks || sz > nblocks * 10)
		return (-1);
	if ((out = malloc((size_t)sz)) == NULL)
		return (-1);
	if (hwtr_zbuf_decompress(out, (size_t)sz, p, len) < 0) {
		free(out);
		return (-1);
	}
	*outp = out;
	*lenp = (size_t)sz;
	return (0);
}

int
hwtr_ix_chunk_blocks(const void *data, size_t len, int64_t nblocks,
    int64_t *ids)
{
	const uint8_t *p = data;
	int64_t prev = -1, k;
	uint64_t v;
	uint8_t *raw;
	size_t i = 0;
	int shift, rc = 0;

	/* A chunk shorter than its blocks is a zstd frame of them. */
	if (hwtr_xo_unpack(p, len, nblocks, &raw, &len) < 0)
		return (-1);
	if (raw != NULL)
		p = raw;
	for (k = 0; k < nblocks && rc == 0; k++) {
		v = 0;
		for (shift = 0;; shift += 7) {
			if (i >= len || shift >= 64) {
				rc = -1;
				break;
			}
			v |= (uint64_t)(p[i] & 0x7f) << shift;
			if ((p[i++] & 0x80) == 0)
				break;
		}
		prev = prev + 1 + ((int64_t)(v >> 1) ^ -(int64_t)(v & 1));
		ids[k] = prev;
	}
	free(raw);
	return (rc);
}

#ifndef HWTR_SQLITE_EXTENSION
/* The writer. */
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>

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
 */
#define CS_PW		8
struct cs_pw {
	struct ix_job	job;
	int64_t		id0, thread;
	struct hwtr_cs_row *rows;	/* HWTR_CS_PAGE slots */
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
	sqlite3_stmt	*put, *get;
	int64_t		thread, base;
	int		in_thread;
	struct cs_pend	pend[CS_WINDOW];
	uint8_t		*written;	/* bitmap by page number */
	size_t		cwritten;
	struct hwtr_cs_row *late;
	size_t		nlate;
	struct hwtr_cs_row *tmp;	/* a page's rows, for merging */
	char		err[256];
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
	for (i = 0; i < CS_PW; i++)
		if ((w->pw[i].rows = malloc(HWTR_CS_PAGE *
		    sizeof(struct hwtr_cs_row))) == NULL)
			return (cs_fail(w, "calls: out of memory"));
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
hwtr_cs_writer_close(struct hwtr_cs_writer *w)
{
	int i;

	if (w == NULL)
		return;
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
	pw->rc = hwtr_cs_encode(pw->rows, pw->n, pw->id0,
	    pw->rows[0].v[CS_ENTRY_SEQ], &pw->blob, &pw->len);
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
	assert(pw->rows[0].v[CS_ENTRY_SEQ] <=
	    pw->rows[pw->n - 1].v[CS_ENTRY_SEQ]);
	sqlite3_bind_int64(w->put, 4, pw->rows[0].v[CS_ENTRY_SEQ]);
	sqlite3_bind_int64(w->put, 5, pw->rows[pw->n - 1].v[CS_ENTRY_SEQ]);
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

/* A free slot for a page to encode (the oldest one written if none). */
static struct cs_pw *
cs_pw_slot(struct hwtr_cs_writer *w)
{
	if (w->pw_n == CS_PW && cs_pw_complete(w) < 0)
		return (NULL);
	return (&w->pw[(w->pw_head + w->pw_n) % CS_PW]);
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
	pw->n = n;
	pw->job.fn = cs_page_job;
	w->pw_n++;
	ix_jobq_submit(w->jq, &pw->job);
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
	for (i = 0; pw != NULL && i < HWTR_CS_PAGE; i++)
		if (pe->have[i])
			pw->rows[n++] = pe->rows[i];
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
	w->thread = thread;
	w->base = id_base;
	w->in_thread = 1;
	return (0);
}

int
hwtr_cs_writer_put(struct hwtr_cs_writer *w, const struct hwtr_cs_row *r)
{
	struct cs_pend *pe = NULL, *lo = NULL, *fr = NULL;
	int64_t idx = r->v[CS_ID] - w->base, pno;
	int i, rc;

	if (!w->in_thread || idx < 0 || r->v[CS_THREAD] != w->thread)
		return (cs_fail(w, "calls: row %lld is not one of thread %lld",
		    (long long)r->v[CS_ID], (long long)w->thread));
	pno = idx / HWTR_CS_PAGE;
	/* Late rows are merged as soon as CS_LATE_MAX wait. */
	assert(w->nlate < CS_LATE_MAX);
	if (cs_is_written(w, pno)) {
		w->late[w->nlate++] = *r;
		return (w->nlate == CS_LATE_MAX ? cs_flush_late(w) : 0);
	}
	for (i = 0; i < CS_WINDOW; i++) {
		if (w->pend[i].pno == pno) {
			pe = &w->pend[i];
			break;
		}
		if (w->pend[i].pno < 0)
			fr = &w->pend[i];
		else if (lo == NULL || w->pend[i].pno < lo->pno)
			lo = &w->pend[i];
	}
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
	return (hwtr_cs_sym_build(w->db, w->jq, w->err, sizeof(w->err)));
}
#endif /* !HWTR_SQLITE_EXTENSION */
