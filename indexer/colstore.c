/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The calls column store: the page codec (also in the loadable extension;
 * the writer hwtrace index uses is colwrite.c, colstore.h).
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

#include "colstore.h"
#include "hwtr_ix_sqlite.h"
#include "hwtr_zbuf.h"
#include "varint.h"

const char *const hwtr_cs_entry_kinds[] = { "call", "start", "return",
    "signal", "tail", NULL };
const char *const hwtr_cs_exit_kinds[] = { "return", "unwind", "end", "tail",
    NULL };
_Static_assert(sizeof(hwtr_cs_entry_kinds) / sizeof(hwtr_cs_entry_kinds[0]) ==
    CS_NENTRY_KINDS + 1, "CS_NENTRY_KINDS");
_Static_assert(sizeof(hwtr_cs_exit_kinds) / sizeof(hwtr_cs_exit_kinds[0]) ==
    CS_NEXIT_KINDS + 1, "CS_NEXIT_KINDS");

/*
 * The per-value helpers are inlined with the column a constant (the
 * encoder's passes down the rows, cs_enc_rows(); the decoder's loop per
 * column, cs_dec_cols()), so that no switch on the column is made per
 * value: a call and a switch per value were most of the codec's time.
 */
#if defined(__GNUC__)
#define CS_HOT	inline __attribute__((always_inline))
#else
#define CS_HOT	inline
#endif

#define CS_RAW		1
#define CS_ZSTD		2
/*
 * zstd levels: the calls pages 1, the execution order 1.  Measured on
 * the gz8 capture's 102,691 chunks (421.5 MB) and 17,679 pages (430 MB),
 * each compressed alone as the writer does (docs/PERFORMANCE.md, Index):
 * level 3 took 2.6 CPU-s for 133.7 MB; 1 and -1 1.9 s for 141.8 MB.
 * In chunks of 65536 blocks (6,419 frames) -5, -3 and -1 are no faster
 * than 1 (0.80-0.92 CPU-s each), and larger: 49.6, 44.1, 42.2 MB against
 * 39.1.  Any level makes the same kind of frame: readers do not know it.
 * The execution order's shortest match 7 (level 1's is 6 at this size):
 * gz8's frames 38.6 -> 37.2 MB, zstd's instructions 6% fewer.
 */
#define CS_ZLEVEL	1
#define CS_XO_ZLEVEL	1
#define CS_XO_MINMATCH	7
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

#define U(r, c)		((uint64_t)(r)->v[c])
#define ISNUL(r, c)	(((r)->nul >> (c)) & 1)

/*
 * A page's parent prediction (cs_open_parent()), from the calls of the
 * page before the row, by depth % CS_OPEN.
 */
#define CS_OPEN		64

struct cs_state {
	uint64_t	id, seq, insn, depth, tsc, xtsc, noff, xnoff;
	/* The symbol copy's: the same function's call before. */
	uint64_t	iseq, dins, dseq, fip, cip, csym, cip2, par;
	int		has_par;
	/*
	 * By depth % CS_OPEN, of the page's last call at that depth: its
	 * depth + 1 (0: none yet), its id, its parent + 1 (0: none).
	 */
	uint64_t	open_d[CS_OPEN], open[CS_OPEN], open_p[CS_OPEN];
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

/*
 * The columns of a page and of the symbol copy (no thread nor symbol:
 * its row's; the callers), in the order they are stored: X(k, column)
 * for the k-th.  The encoder goes down the rows in groups of columns, a
 * constant column in each step (cs_enc_rows()).
 */
#define CS_PAGE_COLS(X)							\
	X(0, CS_ID) X(1, CS_ENTRY_SEQ) X(2, CS_BLOCKS) X(3, CS_EXIT_SEQ)	\
	X(4, CS_ENTRY_INSN) X(5, CS_INSNS) X(6, CS_EXIT_INSN)		\
	X(7, CS_SELF_INSNS) X(8, CS_DEPTH) X(9, CS_PARENT)		\
	X(10, CS_SYMBOL) X(11, CS_FUNC_IP) X(12, CS_CALL_IP)		\
	X(13, CS_ENTRY_KIND) X(14, CS_ENTRY_TSC) X(15, CS_EXIT_TSC)	\
	X(16, CS_ENTRY_NS) X(17, CS_EXIT_NS) X(18, CS_EXIT_KIND)
#define CS_SYM_COLS(X)							\
	X(0, CS_ID) X(1, CS_ENTRY_SEQ) X(2, CS_BLOCKS) X(3, CS_EXIT_SEQ)	\
	X(4, CS_ENTRY_INSN) X(5, CS_INSNS) X(6, CS_EXIT_INSN)		\
	X(7, CS_SELF_INSNS) X(8, CS_DEPTH) X(9, CS_PARENT)		\
	X(10, CS_FUNC_IP) X(11, CS_CALL_IP) X(12, CS_CALLER_SYMBOL)	\
	X(13, CS_CALLER_IP) X(14, CS_ENTRY_KIND) X(15, CS_ENTRY_TSC)	\
	X(16, CS_EXIT_TSC) X(17, CS_ENTRY_NS) X(18, CS_EXIT_NS)		\
	X(19, CS_EXIT_KIND)
#define CS_ORDER_ENTRY(K, C)	C,
#define CS_MAXCOLS	20

static const int cs_order[] = { CS_PAGE_COLS(CS_ORDER_ENTRY) };
static const int cs_sym_order[] = { CS_SYM_COLS(CS_ORDER_ENTRY) };
_Static_assert(sizeof(cs_sym_order) / sizeof(cs_sym_order[0]) ==
    CS_MAXCOLS && sizeof(cs_order) <= sizeof(cs_sym_order), "CS_MAXCOLS");

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

/*
 * @a @b / @c (@c > 0), the quotient in 128 bits: without a 128-bit
 * division when the product fits in 64 (it nearly always does), nor any
 * when @a is @c (calls as far apart as the two before).
 */
static inline uint64_t
cs_scale(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t m;

	if (a == c)
		return (b);
	if (!__builtin_mul_overflow(a, b, &m))
		return (m / c);
	return ((uint64_t)((unsigned __int128)a * b / c));
}

/* The prediction for column @c of @r (from @r's earlier columns, @st). */
static CS_HOT uint64_t
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
			return (st->insn + cs_scale(U(r, CS_ENTRY_SEQ) -
			    st->iseq, st->dins, st->dseq));
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
static CS_HOT void
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
		st->open_d[U(r, CS_DEPTH) % CS_OPEN] = U(r, CS_DEPTH) + 1;
		st->open[U(r, CS_DEPTH) % CS_OPEN] = U(r, CS_ID);
		st->open_p[U(r, CS_DEPTH) % CS_OPEN] = ISNUL(r, CS_PARENT) ? 0 :
		    U(r, CS_PARENT) + 1;
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
 * A page's prediction of @r's parent, in *@pp: 1, or 0 when @st does not
 * know it.  Rows are in entry order, so a call's parent is the call last
 * entered one level up: that call when the page has it, else the parent
 * of the page's last call at @r's depth (none entered one level up since:
 * it would be in the page).  Only a page's first call at a depth whose
 * parent came before the page goes without.
 */
static CS_HOT int
cs_open_parent(const struct hwtr_cs_row *r, const struct cs_state *st,
    uint64_t *pp)
{
	uint64_t d = U(r, CS_DEPTH);

	if (d > 0 && st->open_d[(d - 1) % CS_OPEN] == d) {
		*pp = st->open[(d - 1) % CS_OPEN];
		return (1);
	}
	if (st->open_d[d % CS_OPEN] == d + 1 && st->open_p[d % CS_OPEN] != 0) {
		*pp = st->open_p[d % CS_OPEN] - 1;
		return (1);
	}
	return (0);
}

/*
 * Column @c's stored value: kinds as they are (and in a page func_ip),
 * the others the zigzag of the difference from the prediction, plus 1 in
 * a nullable column (0: NULL).
 */
static CS_HOT uint64_t
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
		return (ix_zz(U(r, c) - cs_pred(c, r, st, 1)) + 2);
	}
	/* A page's: 1 for the call last entered one level up. */
	if (c == CS_PARENT) {
		uint64_t p;

		if (ISNUL(r, c))
			return (0);
		if (cs_open_parent(r, st, &p) && U(r, c) == p)
			return (1);
		return (ix_zz(U(r, c) - cs_pred(c, r, st, 0)) + 2);
	}
	if ((lo->nullable >> c) & 1) {
		if (ISNUL(r, c))
			return (0);
		return (ix_zz(U(r, c) - cs_pred(c, r, st, lo->sym)) + 1);
	}
	return (ix_zz(U(r, c) - cs_pred(c, r, st, lo->sym)));
}

/* Rows that a blob cannot hold: kinds out of range, NULL where not. */
static int
cs_row_bad(const struct hwtr_cs_row *r, const struct cs_layout *lo)
{
	return ((r->nul & ~lo->nullable) != 0 ||
	    r->v[CS_ENTRY_KIND] < 0 || r->v[CS_ENTRY_KIND] >= CS_NENTRY_KINDS ||
	    r->v[CS_EXIT_KIND] < 0 || r->v[CS_EXIT_KIND] >= CS_NEXIT_KINDS);
}

/*
 * The columns of @n rows, column k into [@col[k], ...), each advanced
 * past what was written: CS_GROUP columns at a time, in one pass down
 * the rows each, every column's step inlined with the column a constant.
 * A column's prediction reads only the state its own step advances
 * (cs_pred(), cs_advance()), so any columns can share a pass and the
 * bytes are those of a pass per column.  A pass per column went down the
 * rows (184 bytes each) 19-20 times; one pass for all kept 20 column
 * pointers and the state, which the registers do not hold: spilled, 18
 * instructions a value.  Groups of 4 (5 passes): 8% fewer on g256 than
 * one pass, 5 and 3 a little more (docs/PERFORMANCE.md, Index).
 */
#define CS_GROUP	4
#define CS_NGROUPS	5
_Static_assert(CS_NGROUPS * CS_GROUP >= CS_MAXCOLS, "CS_NGROUPS");

#define CS_IN_GROUP(K)	((K) / CS_GROUP == g)
#define CS_ENC_STEP(K, C, LO)						\
	do {								\
		if (CS_IN_GROUP(K)) {					\
			p##K = ix_varint_put(p##K, cs_stored(C, r, &run, LO));	\
			cs_advance(C, r, &run);				\
		}							\
	} while (0);
#define CS_ENC_PAGE(K, C)	CS_ENC_STEP(K, C, &cs_page_layout)
#define CS_ENC_SYM(K, C)	CS_ENC_STEP(K, C, &cs_sym_layout)
#define CS_PTR_LOAD(K, C)						\
	uint8_t *p##K = CS_IN_GROUP(K) ? col[K] : NULL;
#define CS_PTR_STORE(K, C)						\
	if (CS_IN_GROUP(K))						\
		col[K] = p##K;

/*
 * The columns of group @g (a constant once inlined: columns
 * g CS_GROUP to (g + 1) CS_GROUP - 1) of @n rows, from a state of their
 * own; the others' pointers are not used.
 */
static CS_HOT void
cs_enc_group(const struct hwtr_cs_row *rows, size_t n, int64_t id0,
    int64_t seq0, int sym, uint8_t **col, int g)
{
	const struct hwtr_cs_row *r;
	struct cs_state run;
	size_t i;

	cs_state_init(&run, id0, seq0);
	if (sym) {
		CS_SYM_COLS(CS_PTR_LOAD)
		for (i = 0; i < n; i++) {
			r = &rows[i];
			CS_SYM_COLS(CS_ENC_SYM)
		}
		CS_SYM_COLS(CS_PTR_STORE)
	} else {
		CS_PAGE_COLS(CS_PTR_LOAD)
		for (i = 0; i < n; i++) {
			r = &rows[i];
			CS_PAGE_COLS(CS_ENC_PAGE)
		}
		CS_PAGE_COLS(CS_PTR_STORE)
	}
}

static void
cs_enc_rows(const struct hwtr_cs_row *rows, size_t n, int64_t id0,
    int64_t seq0, const struct cs_layout *lo, uint8_t **col)
{
	if (lo->sym) {
		cs_enc_group(rows, n, id0, seq0, 1, col, 0);
		cs_enc_group(rows, n, id0, seq0, 1, col, 1);
		cs_enc_group(rows, n, id0, seq0, 1, col, 2);
		cs_enc_group(rows, n, id0, seq0, 1, col, 3);
		cs_enc_group(rows, n, id0, seq0, 1, col, 4);
	} else {
		cs_enc_group(rows, n, id0, seq0, 0, col, 0);
		cs_enc_group(rows, n, id0, seq0, 0, col, 1);
		cs_enc_group(rows, n, id0, seq0, 0, col, 2);
		cs_enc_group(rows, n, id0, seq0, 0, col, 3);
		cs_enc_group(rows, n, id0, seq0, 0, col, 4);
	}
}

/* The same list of cases for the decoder (one loop per column). */
#define CS_COLUMN_CASES(X)						\
	X(CS_ID) X(CS_PARENT) X(CS_DEPTH) X(CS_SYMBOL) X(CS_FUNC_IP)	\
	X(CS_CALL_IP) X(CS_ENTRY_KIND) X(CS_EXIT_KIND) X(CS_ENTRY_SEQ)	\
	X(CS_EXIT_SEQ) X(CS_ENTRY_INSN) X(CS_EXIT_INSN) X(CS_ENTRY_TSC)	\
	X(CS_EXIT_TSC) X(CS_ENTRY_NS) X(CS_EXIT_NS) X(CS_INSNS)		\
	X(CS_SELF_INSNS) X(CS_BLOCKS) X(CS_CALLER_SYMBOL) X(CS_CALLER_IP)

/* The columns of @n rows, then the blob (raw or zstd) into *@outp. */
static int
cs_encode(const struct hwtr_cs_row *rows, size_t n, int64_t id0,
    int64_t seq0, const struct cs_layout *lo, uint8_t **outp, size_t *lenp)
{
	uint8_t *raw, *out, *p, *col[CS_MAXCOLS];
	size_t rawlen, zlen, hdr;
	int k;

	assert(n > 0 && n <= HWTR_CS_PAGE && lo->ncols <= CS_MAXCOLS);
	/*
	 * Column k is written from raw + k * 10 n (a varint is at most 10
	 * bytes), then the columns are moved together.
	 */
	if ((raw = malloc(n * (size_t)lo->ncols * 10 + 1)) == NULL)
		return (-1);
	for (k = 0; k < lo->ncols; k++)
		col[k] = raw + (size_t)k * n * 10;
	cs_enc_rows(rows, n, id0, seq0, lo, col);
	p = col[0];
	for (k = 1; k < lo->ncols; k++) {
		size_t clen = (size_t)(col[k] - (raw + (size_t)k * n * 10));

		/* Column k starts after the columns before it end. */
		assert(p <= raw + (size_t)k * n * 10);
		memmove(p, raw + (size_t)k * n * 10, clen);
		p += clen;
	}
	rawlen = (size_t)(p - raw);
	/* A varint is at most 10 bytes: the columns fit what was allocated. */
	assert(rawlen <= n * (size_t)lo->ncols * 10);
	out = malloc(1 + 20 + hwtr_zbuf_bound(rawlen));
	if (out == NULL) {
		free(raw);
		return (-1);
	}
	p = ix_varint_put(out + 1, n);
	p = ix_varint_put(p, rawlen);
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
 * Column @c of @n rows from [*@qp, @qend) into @rows; 0, or -1 with
 * *@whyp saying why.
 */
static CS_HOT int
cs_dec_col(int c, const uint8_t **qp, const uint8_t *qend, int64_t id0,
    int64_t seq0, int64_t n, const struct cs_layout *lo,
    struct hwtr_cs_row *rows, const char **whyp)
{
	const uint8_t *q = *qp;
	struct cs_state run;
	uint64_t u;
	int64_t i;

	cs_state_init(&run, id0, seq0);
	for (i = 0; i < n; i++) {
		struct hwtr_cs_row *r = &rows[i];

		*whyp = "truncated columns";
		if (ix_varint_get(&q, qend, &u) < 0)
			return (-1);
		if (c == CS_ENTRY_KIND || c == CS_EXIT_KIND) {
			*whyp = "unknown call kind";
			if (u >= (c == CS_ENTRY_KIND ?
			    (uint64_t)CS_NENTRY_KINDS :
			    (uint64_t)CS_NEXIT_KINDS))
				return (-1);
			r->v[c] = (int64_t)u;
		} else if (c == CS_FUNC_IP && !lo->sym)
			r->v[c] = (int64_t)u;
		else if (c == CS_PARENT && lo->sym) {
			*whyp = "no parent before";
			if (u == 0)
				r->nul |= 1u << c;
			else if (u == 1 && !run.has_par)
				return (-1);
			else if (u == 1)
				r->v[c] = (int64_t)run.par;
			else
				r->v[c] = (int64_t)(ix_unzz(u - 2) +
				    cs_pred(c, r, &run, 1));
		} else if (c == CS_PARENT) {
			uint64_t p;

			*whyp = "no call entered one level up before";
			if (u == 0)
				r->nul |= 1u << c;
			else if (u == 1 && !cs_open_parent(r, &run, &p))
				return (-1);
			else if (u == 1)
				r->v[c] = (int64_t)p;
			else
				r->v[c] = (int64_t)(ix_unzz(u - 2) +
				    cs_pred(c, r, &run, 0));
		} else if ((lo->nullable >> c) & 1) {
			if (u == 0)
				r->nul |= 1u << c;
			else
				r->v[c] = (int64_t)(ix_unzz(u - 1) +
				    cs_pred(c, r, &run, lo->sym));
		} else
			r->v[c] = (int64_t)(ix_unzz(u) +
			    cs_pred(c, r, &run, lo->sym));
		if (c == CS_ID) {
			*whyp = "ids out of order or outside the page";
			if (r->v[CS_ID] < id0 || (!lo->sym &&
			    r->v[CS_ID] - id0 >= HWTR_CS_PAGE) ||
			    (i > 0 && r->v[CS_ID] <= rows[i - 1].v[CS_ID]) ||
			    (lo->sym && i == 0 && r->v[CS_ID] != id0))
				return (-1);
		}
		cs_advance(c, r, &run);
	}
	*qp = q;
	return (0);
}

static int
cs_dec_cols(int c, const uint8_t **qp, const uint8_t *qend, int64_t id0,
    int64_t seq0, int64_t n, const struct cs_layout *lo,
    struct hwtr_cs_row *rows, const char **whyp)
{
	assert(c >= 0 && c < CS_XNCOLS && c != CS_THREAD);
	switch (c) {
#define CS_DEC_CASE(C)							\
	case C:								\
		return (cs_dec_col(C, qp, qend, id0, seq0, n, lo, rows,	\
		    whyp));
	CS_COLUMN_CASES(CS_DEC_CASE)
#undef CS_DEC_CASE
	default:
		return (cs_dec_col(c, qp, qend, id0, seq0, n, lo, rows, whyp));
	}
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
	const uint8_t *p = blob, *end, *q, *qend;
	uint8_t *raw = NULL;
	uint64_t nrows, rawlen;
	int k, rc = -1;

	/* An empty blob is NULL (sqlite3_column_blob()): no NULL + 0. */
	*whyp = "truncated header";
	if (blob == NULL || len < 3 || n <= 0 || n > HWTR_CS_PAGE)
		goto bad;
	end = blob + len;
	p++;
	if (ix_varint_get(&p, end, &nrows) < 0 || ix_varint_get(&p, end, &rawlen) < 0)
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
	for (k = 0; k < lo->ncols; k++)
		if (cs_dec_cols(lo->order[k], &q, qend, id0, seq0, n, lo, rows,
		    whyp) < 0)
			goto bad;
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
	n = hwtr_zbuf_compress_mm(out, cap, p, len, CS_XO_ZLEVEL,
	    CS_XO_MINMATCH);
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
