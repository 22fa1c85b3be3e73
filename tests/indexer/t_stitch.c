/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The stitcher over blocks whose instruction lengths and code are known
 * apart.  A CoreSight A64 or A32 range has its lengths (4 bytes each)
 * whether or not a memory dump holds all of its bytes; a T32 range may
 * have its bytes and no lengths.  Real ETE (trace_file_vmid: a range
 * across two adjacent dumps) gave the stitcher a block with lengths and
 * no code, which it copied from NULL (SIGSEGV in global_block() by way of
 * pend_global/flush_pend/next_run).  Here segments are built by hand, with
 * the counts and bytes known by construction, and replayed through
 * ix_stitch_segment() as the indexer does.
 */

#include <atf-c.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hwtrace.h"
#include "../../indexer/hwtr_ix.h"
#include "../../indexer/segout.h"
#include "../lib/hwtr_test_ix.h"

static uint8_t lens4[8] = { 4, 4, 4, 4, 4, 4, 4, 4 };
static uint8_t code_a[8] = { 0x1f, 0x20, 0x03, 0xd5, 0x1f, 0x20, 0x03, 0xd5 };
static uint8_t code_b[8] = { 0x00, 0x00, 0x80, 0xd2, 0x00, 0x00, 0x00, 0x14 };

/* A segment that runs its @n blocks once each, in order. */
static void
seg_make(struct ix_seg_out *seg, struct ix_sblock *blocks, size_t n)
{
	size_t i;

	memset(seg, 0, sizeof(*seg));
	seg->blocks = blocks;
	seg->nblocks = seg->cblocks = n;
	seg->borrowed = 1;
	for (i = 0; i < n; i++)
		ATF_REQUIRE(ix_buf_varint(&seg->ops, (uint64_t)i << 1) >= 0);
}

/*
 * Stitch the blocks @b[0..@n) as one stream, cut into segments after the
 * blocks whose index is in @cuts (sorted, @ncuts of them), fall-through
 * blocks merged.
 */
static void
stitch(struct ix_stitch *st, struct ix_sblock *b, size_t n,
    const size_t *cuts, size_t ncuts)
{
	struct ix_sink sink;
	struct ix_seg_out seg;
	size_t from = 0, k;

	memset(&sink, 0, sizeof(sink));
	ix_stitch_init(st, &sink);
	st->merge = 1;
	ix_stitch_begin(st);
	for (k = 0; k <= ncuts; k++) {
		size_t to = k < ncuts ? cuts[k] + 1 : n;

		seg_make(&seg, b + from, to - from);
		ATF_REQUIRE_EQ(ix_stitch_segment(st, &seg), 0);
		free(seg.ops.p);
		from = to;
	}
	ATF_REQUIRE_EQ(ix_stitch_end(st), 0);
}

/* Global block @i is at @ip with @ninsn instructions, and @code or none. */
static void
expect_block(const struct ix_stitch *st, size_t i, uint64_t ip,
    uint16_t ninsn, const uint8_t *code)
{
	const struct ix_sblock *g;

	ATF_REQUIRE_MSG(i < st->ng, "expected a block %zu, %zu blocks", i,
	    st->ng);
	g = &st->g[i];
	ATF_CHECK_MSG(g->ip == ip && g->ninsn == ninsn, "block %zu: "
	    "expected 0x%jx, %u instructions; got 0x%jx, %u", i,
	    (uintmax_t)ip, ninsn, (uintmax_t)g->ip, g->ninsn);
	ATF_CHECK_MSG(g->lens != NULL && memcmp(g->lens, lens4, ninsn) == 0,
	    "block %zu: its instruction lengths are lost", i);
	if (code == NULL)
		ATF_CHECK_MSG(g->code == NULL, "block %zu: code where a part "
		    "had none", i);
	else
		ATF_CHECK_MSG(g->code != NULL &&
		    memcmp(g->code, code, 4u * ninsn) == 0, "block %zu: "
		    "its code is not the blocks' bytes", i);
}

ATF_TC_WITHOUT_HEAD(lens_without_code);
ATF_TC_BODY(lens_without_code, tc)
{
	struct ix_sblock b[2];
	struct ix_stitch st;

	b[0] = ixt_blk(0x1000, 2, HWTR_IC_JUMP, lens4, NULL);
	b[1] = ixt_blk(0x2000, 2, HWTR_IC_JUMP, lens4, code_b);
	stitch(&st, b, 2, NULL, 0);
	ATF_REQUIRE_EQ(st.ng, 2);
	expect_block(&st, 0, 0x1000, 2, NULL);
	expect_block(&st, 1, 0x2000, 2, code_b);
	ATF_CHECK_EQ(st.exec_blocks, 2);
	ATF_CHECK_EQ(st.exec_insns, 4);
	ix_stitch_free(&st);
}

/*
 * A block that falls through into the next is merged with it, in one
 * segment or across two; the merged block has code only if both parts
 * had.  Each order, each cut: the same blocks.
 */
ATF_TC_WITHOUT_HEAD(merged_code_less_part);
ATF_TC_BODY(merged_code_less_part, tc)
{
	static const size_t cut0 = 0;
	uint8_t both[16];
	struct ix_sblock b[3];
	struct ix_stitch st;
	int order, split;

	memcpy(both, code_a, 8);
	memcpy(both + 8, code_b, 8);
	for (order = 0; order < 3; order++)
		for (split = 0; split < 2; split++) {
			/* 0: A has code, 1: B has, 2: both have. */
			b[0] = ixt_blk(0x1000, 2, HWTR_IC_OTHER, lens4,
			    order != 1 ? code_a : NULL);
			b[1] = ixt_blk(0x1008, 2, HWTR_IC_JUMP, lens4,
			    order != 0 ? code_b : NULL);
			b[2] = ixt_blk(0x3000, 1, HWTR_IC_JUMP, lens4, code_a);
			stitch(&st, b, 3, split ? &cut0 : NULL, split);
			ATF_CHECK_EQ_MSG(st.ng, 2, "order %d, split %d: %zu "
			    "blocks, expected 2", order, split, st.ng);
			expect_block(&st, 0, 0x1000, 4, order == 2 ? both :
			    NULL);
			expect_block(&st, 1, 0x3000, 1, code_a);
			ATF_CHECK_EQ(st.exec_insns, 5);
			ix_stitch_free(&st);
		}
}

/*
 * A T32 block whose bytes are known but not its instruction lengths (a
 * walk that did not add up) keeps its bytes when it is the last of a
 * segment, as when it is not.
 */
ATF_TC_WITHOUT_HEAD(code_without_lens_across_segments);
ATF_TC_BODY(code_without_lens_across_segments, tc)
{
	static const size_t cut0 = 0;
	struct ix_sblock b[2];
	struct ix_stitch st;
	int split;

	for (split = 0; split < 2; split++) {
		b[0] = ixt_blk(0x1000, 3, HWTR_IC_OTHER, NULL, code_a);
		b[0].mode = 16;
		b[0].size = 8;
		b[1] = ixt_blk(0x1008, 2, HWTR_IC_JUMP, lens4, code_b);
		stitch(&st, b, 2, split ? &cut0 : NULL, split);
		ATF_REQUIRE_EQ(st.ng, 2);
		ATF_CHECK_MSG(st.g[0].lens == NULL, "split %d: lengths "
		    "made up", split);
		ATF_CHECK_MSG(st.g[0].code != NULL &&
		    memcmp(st.g[0].code, code_a, 8) == 0, "split %d: the "
		    "bytes of the T32 block are lost", split);
		expect_block(&st, 1, 0x1008, 2, code_b);
		ix_stitch_free(&st);
	}
}

/*
 * A long walk over many blocks, built here with every count known: the
 * order blocks ran in, each block's runs, each branch's, the calls.  Each
 * block has three usual successors and now and then goes anywhere, so
 * that branches are seen again, as one of a block's two latest successors
 * or not, and new; the walk is cut into segments at random, each with its
 * blocks numbered in its own order of first run (ids of one and two
 * bytes); operations come between blocks now and then.  Blocks of every
 * kind the per-block path tells apart: conditional branches and jumps,
 * some into a function's first block (a sink flag), calls (a frame each),
 * blocks that end without a branch (held back in case the next one
 * continues them, which none does).  The chunk rows are decoded back into
 * the walk.
 */
struct walk {
	struct ix_stitch *st;
	size_t		nb, len;		/* blocks, runs */
	struct ix_sblock *b;
	uint32_t	*seq;			/* test block of each run */
	int		*nobr;			/* no branch into run i */
	uint64_t	*runs;			/* per test block */
	uint64_t	*keys;			/* from << 32 | to per branch */
	size_t		nkeys;
	int64_t		*gids;			/* decoded from chunk rows */
	size_t		ngids;
	int64_t		insns;			/* the walk's, up to ngids */
	int		bad_chunk;
	int		fast;			/* fewer ends of the fast path */
};

static uint32_t
walk_rand(uint32_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return (*x);
}

/* The test block at @ip. */
static size_t
walk_index(uint64_t ip)
{
	return ((size_t)(ip - 0x10000) / 0x100);
}

static int
walk_block(void *arg, int64_t gid)
{
	struct walk *w = arg;
	struct ix_sblock *g = &w->st->g[gid];

	if (walk_index(g->ip) % (w->fast ? 61 : 7) == 0)
		g->bflags |= IX_BF_FSTART;
	return (0);
}

static int
walk_chunk(void *arg, const struct ix_chunk *ch)
{
	struct walk *w = arg;
	const uint8_t *p = ch->data.p, *end = p + ch->data.len;
	int64_t prev = -1, ninsns = 0;
	uint32_t k;

	if (ch->seq != (int64_t)w->ngids || ch->insn != w->insns ||
	    ch->nblocks > HWTR_DB_CHUNK_BLOCKS)
		w->bad_chunk = 1;
	for (k = 0; k < ch->nblocks; k++) {
		uint64_t v = 0;
		int shift = 0;

		do {
			if (p >= end || w->ngids >= w->len) {
				w->bad_chunk = 1;
				return (0);
			}
			v |= (uint64_t)(*p & 0x7f) << shift;
			shift += 7;
		} while (*p++ & 0x80);
		prev += 1 + (int64_t)((v >> 1) ^ (0 - (v & 1)));
		w->gids[w->ngids] = prev;
		ninsns += w->b[w->seq[w->ngids++]].ninsn;
	}
	if (p != end || ninsns != ch->ninsns)
		w->bad_chunk = 1;
	w->insns += ninsns;
	return (0);
}

static int
key_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x < y ? -1 : x > y);
}

/* How often the walk went from test block @i to @j (keys sorted). */
static uint64_t
walk_branch(const struct walk *w, uint32_t i, uint32_t j)
{
	uint64_t key = (uint64_t)i << 32 | j;
	size_t lo = 0, hi = w->nkeys, m, n = 0;

	while (lo < hi) {
		m = lo + (hi - lo) / 2;
		if (w->keys[m] < key)
			lo = m + 1;
		else
			hi = m;
	}
	while (lo + n < w->nkeys && w->keys[lo + n] == key)
		n++;
	return (n);
}

/*
 * A long walk over @nb blocks (@len runs), built here with every count
 * known: the order blocks ran in, each block's runs, each branch's, the
 * calls.  Each block has three usual successors and now and then goes
 * anywhere, so that branches are seen again, as one of a block's two
 * latest successors or not, and new; the walk is cut into segments of
 * up to @maxseg runs at random, each with its blocks numbered in its own
 * order of first run (ids of one, two and, past 8191, three bytes);
 * operations come between blocks now and then (no branch, a gap, an
 * error, a time).  Blocks of every kind the per-block path tells apart:
 * conditional branches and jumps, some into a function's first block (a
 * sink flag), calls (a frame each), blocks that end without a branch
 * (held back in case the next one continues them, which none does).
 * The chunk rows are decoded back into the walk.
 */
static void
walk_check(size_t nb, size_t len, size_t maxseg, uint32_t x, int fast)
{
	static struct walk w;
	struct ix_sblock *seg_b;
	struct ix_stitch st;
	struct ix_sink sink;
	struct ix_seg_out seg;
	uint32_t *lid, cur = 0, i, j;
	uint64_t ncall = 0, nbr = 0, errors = 0, gaps = 0;
	int64_t insns = 0;
	size_t k, at = 0;

	memset(&w, 0, sizeof(w));
	w.st = &st;
	w.nb = nb;
	w.len = len;
	ATF_REQUIRE((w.b = calloc(nb, sizeof(*w.b))) != NULL);
	ATF_REQUIRE((seg_b = calloc(nb, sizeof(*seg_b))) != NULL);
	ATF_REQUIRE((lid = calloc(nb, sizeof(*lid))) != NULL);
	ATF_REQUIRE((w.runs = calloc(nb, sizeof(*w.runs))) != NULL);
	ATF_REQUIRE((w.seq = calloc(len, sizeof(*w.seq))) != NULL);
	ATF_REQUIRE((w.nobr = calloc(len, sizeof(*w.nobr))) != NULL);
	ATF_REQUIRE((w.keys = calloc(len, sizeof(*w.keys))) != NULL);
	ATF_REQUIRE((w.gids = calloc(len, sizeof(*w.gids))) != NULL);
	w.fast = fast;
	for (i = 0; i < nb; i++) {
		static const int cls[6] = { HWTR_IC_COND, HWTR_IC_COND,
		    HWTR_IC_COND, HWTR_IC_JUMP, HWTR_IC_OTHER, HWTR_IC_CALL };
		int c = cls[i % 6];

		if (fast)
			c = i % 31 == 5 ? HWTR_IC_CALL : i % 37 == 4 ?
			    HWTR_IC_OTHER : i % 3 == 0 ? HWTR_IC_JUMP :
			    HWTR_IC_COND;
		w.b[i] = ixt_blk(0x10000 + 0x100 * (uint64_t)i,
		    (uint16_t)(1 + i % 5), c, lens4, NULL);
	}
	for (k = 0; k < len; k++) {
		uint32_t r = walk_rand(&x);

		/*
		 * Fast: a loop over 40 blocks, then as many runs anywhere,
		 * in turn (the chunk rows end in the loops).
		 */
		if (k > 0 && fast)
			cur = (k + 4096) / 8192 % 2 == 0 ? (cur + 1) % 40 :
			    (uint32_t)((r >> 8) % nb);
		else if (k > 0)
			cur = r % 50 == 0 ? (uint32_t)((r >> 8) % nb) :
			    (uint32_t)((cur * 7 + 1 + (r >> 8) % 3 * 31) % nb);
		w.seq[k] = cur;
		w.nobr[k] = k == 0 || (r >> 20) % 400 == 0;
		w.runs[cur]++;
		insns += w.b[cur].ninsn;
		if (!w.nobr[k]) {
			w.keys[w.nkeys++] = (uint64_t)w.seq[k - 1] << 32 | cur;
			if (w.b[w.seq[k - 1]].cls == HWTR_IC_CALL)
				ncall++;
		}
	}
	qsort(w.keys, w.nkeys, sizeof(*w.keys), key_cmp);
	for (k = 0; k < w.nkeys; k++)
		nbr += k == 0 || w.keys[k] != w.keys[k - 1];

	memset(&sink, 0, sizeof(sink));
	sink.arg = &w;
	sink.block = walk_block;
	sink.chunk = walk_chunk;
	ix_stitch_init(&st, &sink);
	st.merge = 1;
	ix_stitch_begin(&st);
	while (at < len) {
		size_t n = 1 + walk_rand(&x) % maxseg;

		if (n > len - at)
			n = len - at;
		memset(&seg, 0, sizeof(seg));
		memset(lid, 0, nb * sizeof(*lid));
		seg.blocks = seg_b;
		seg.borrowed = 1;
		for (k = at; k < at + n; k++) {
			uint32_t r = walk_rand(&x);
			int gap = w.nobr[k] && k > 0 && r % 2 == 0;

			if (lid[w.seq[k]] == 0) {
				seg_b[seg.nblocks] = w.b[w.seq[k]];
				lid[w.seq[k]] = (uint32_t)++seg.nblocks;
			}
			if (w.nobr[k] && k > 0)
				ATF_REQUIRE(ix_buf_varint(&seg.ops, (gap ?
				    IX_OP_GAP : IX_OP_NOPREV) << 1 | 1) >= 0);
			gaps += gap;
			if (r % 300 == 0) {
				ATF_REQUIRE(ix_buf_varint(&seg.ops,
				    IX_OP_ERROR << 1 | 1) >= 0);
				errors++;
			}
			if (r % 500 == 1)
				ATF_REQUIRE(ix_buf_varint(&seg.ops,
				    IX_OP_TIME << 1 | 1) >= 0 &&
				    ix_buf_varint(&seg.ops, k) >= 0);
			ATF_REQUIRE(ix_buf_varint(&seg.ops,
			    (uint64_t)(lid[w.seq[k]] - 1) << 1) >= 0);
		}
		seg.cblocks = seg.nblocks;
		ATF_REQUIRE_EQ(ix_stitch_segment(&st, &seg), 0);
		free(seg.ops.p);
		at += n;
	}
	ATF_REQUIRE_EQ(ix_stitch_end(&st), 0);

	ATF_CHECK_EQ(st.exec_blocks, (int64_t)len);
	ATF_CHECK_EQ(st.exec_insns, insns);
	ATF_CHECK_EQ(st.errors, (int64_t)errors);
	ATF_CHECK_EQ(st.gaps, (int64_t)gaps);
	ATF_CHECK_EQ_MSG(st.ncalls, (int64_t)ncall + 1, "%jd calls, "
	    "expected %ju (a frame per call and the first)",
	    (intmax_t)st.ncalls, (uintmax_t)ncall + 1);
	for (k = 0; k < st.ng; k++) {
		i = (uint32_t)walk_index(st.g[k].ip);
		ATF_REQUIRE(i < nb);
		ATF_CHECK_MSG(st.g[k].count == w.runs[i] &&
		    st.scount[k] == w.runs[i], "block %u ran %ju times, "
		    "counted %ju (stream %ju)", i, (uintmax_t)w.runs[i],
		    (uintmax_t)st.g[k].count, (uintmax_t)st.scount[k]);
	}
	for (i = 0, k = 0; i < nb; i++)
		k += w.runs[i] != 0;
	ATF_CHECK_EQ_MSG(st.ng, k, "%zu blocks, expected %zu", st.ng, k);
	ATF_CHECK_EQ_MSG(st.nbranches, nbr, "%zu branches, expected %ju",
	    st.nbranches, (uintmax_t)nbr);
	for (k = 0; k < st.nbranches; k++) {
		i = (uint32_t)walk_index(st.g[st.branches[k].from].ip);
		j = (uint32_t)walk_index(st.g[st.branches[k].to].ip);
		ATF_CHECK_MSG(st.branches[k].count == walk_branch(&w, i, j),
		    "branch %u -> %u taken %ju times, counted %ju", i, j,
		    (uintmax_t)walk_branch(&w, i, j),
		    (uintmax_t)st.branches[k].count);
	}
	ATF_CHECK_MSG(!w.bad_chunk, "a chunk row's position, instructions "
	    "or data do not add up");
	ATF_CHECK_EQ(w.ngids, len);
	for (k = 0; k < w.ngids; k++)
		if (w.gids[k] < 0 || (size_t)w.gids[k] >= st.ng ||
		    walk_index(st.g[w.gids[k]].ip) != w.seq[k]) {
			ATF_REQUIRE_MSG(w.gids[k] >= 0 &&
			    (size_t)w.gids[k] < st.ng, "run %zu: chunk rows "
			    "say block %jd of %zu", k, (intmax_t)w.gids[k],
			    st.ng);
			ATF_CHECK_MSG(0, "run %zu: chunk rows say block %zu, "
			    "the walk block %u", k,
			    walk_index(st.g[w.gids[k]].ip), w.seq[k]);
			break;
		}
	free(w.b);
	free(seg_b);
	free(lid);
	free(w.runs);
	free(w.seq);
	free(w.nobr);
	free(w.keys);
	free(w.gids);
	ix_stitch_free(&st);
}

ATF_TC_WITHOUT_HEAD(walk_counts_as_built);
ATF_TC_BODY(walk_counts_as_built, tc)
{
	walk_check(200, 40000, 6000, 0x2545f491, 0);
}

/*
 * The same over more blocks than ids of two bytes hold (segments of up
 * to 30,000 runs) and more runs than a chunk row holds, in turns of a
 * loop (fewer calls, one way out of a block) and runs anywhere: the
 * fast path's ends (an id of three bytes, a chunk full) come in the
 * middle of its runs.
 */
ATF_TC_WITHOUT_HEAD(walk_wide_counts_as_built);
ATF_TC_BODY(walk_wide_counts_as_built, tc)
{
	walk_check(12000, 3 * HWTR_DB_CHUNK_BLOCKS + 5000, 30000, 0x9e3779b9,
	    1);
}

/*
 * What the stitcher hands on and leaves for one stitching (octs_same()):
 * FNV-1a over the chunk rows and the calls, as they come.
 */
struct trail {
	struct ix_stitch *st;
	uint64_t	chunks, calls;
	size_t		nchunks, ncalls;
};

static void
fnv(uint64_t *hp, const uint8_t *b, size_t n)
{
	uint64_t h = *hp ? *hp : 0xcbf29ce484222325ull;

	while (n-- > 0)
		h = (h ^ *b++) * 0x100000001b3ull;
	*hp = h;
}

/* The same over @n numbers, a byte at a time from the lowest. */
static void
fnv_nums(uint64_t *hp, const int64_t *v, size_t n)
{
	uint8_t b[8];
	size_t i, k;

	for (i = 0; i < n; i++) {
		for (k = 0; k < 8; k++)
			b[k] = (uint8_t)((uint64_t)v[i] >> (8 * k));
		fnv(hp, b, sizeof(b));
	}
}

static int
trail_chunk(void *arg, const struct ix_chunk *ch)
{
	struct trail *t = arg;
	int64_t v[4] = { ch->seq, ch->insn, ch->nblocks, ch->ninsns };

	fnv_nums(&t->chunks, v, 4);
	fnv(&t->chunks, ch->data.p, ch->data.len);
	t->nchunks++;
	return (0);
}

static int
trail_call(void *arg, int64_t idx, const struct ix_call *c)
{
	struct trail *t = arg;
	int64_t v[10] = { idx, c->parent, c->depth, c->entry_block,
	    c->entry_kind, c->exit_kind, c->entry_seq, c->exit_seq,
	    c->entry_insn, c->self_insns };

	fnv_nums(&t->calls, v, 10);
	t->ncalls++;
	return (0);
}

/* A call into a block no function covers makes it one. */
static int
trail_func(void *arg, int64_t gid)
{
	struct trail *t = arg;

	t->st->g[gid].fkey = (uint32_t)gid + 1;
	t->st->g[gid].bflags |= IX_BF_FSTART;
	return (0);
}

/*
 * Stitch walk @seq (@len runs of blocks @b) as @nstreams streams, cut into
 * segments of up to @maxseg runs, with octs or without (@off); the rows in
 * @t.
 */
static void
octs_stitch(struct ix_stitch *st, struct trail *t, const struct ix_sblock *b,
    size_t nb, const uint32_t *seq, size_t len, size_t maxseg,
    size_t nstreams, uint32_t x, int off)
{
	struct ix_sblock *seg_b;
	struct ix_sink sink;
	struct ix_seg_out seg;
	uint32_t *lid;
	size_t at = 0, k, stream = 0;

	ATF_REQUIRE((seg_b = calloc(nb, sizeof(*seg_b))) != NULL);
	ATF_REQUIRE((lid = calloc(nb, sizeof(*lid))) != NULL);
	memset(t, 0, sizeof(*t));
	t->st = st;
	memset(&sink, 0, sizeof(sink));
	sink.arg = t;
	sink.chunk = trail_chunk;
	sink.call = trail_call;
	sink.func_start = trail_func;
	ix_stitch_init(st, &sink);
	st->merge = 1;
	st->octs_off = off;
	ix_stitch_begin(st);
	while (at < len) {
		/* One segment when @maxseg holds the walk. */
		size_t n = maxseg >= len ? len : 1 + walk_rand(&x) % maxseg;

		if (n > len - at)
			n = len - at;
		/* A new stream now and then, at a segment's start. */
		if (at > 0 && stream + 1 < nstreams &&
		    at >= len / nstreams * (stream + 1)) {
			ATF_REQUIRE_EQ(ix_stitch_end(st), 0);
			ix_stitch_begin(st);
			stream++;
		}
		memset(&seg, 0, sizeof(seg));
		memset(lid, 0, nb * sizeof(*lid));
		seg.blocks = seg_b;
		seg.borrowed = 1;
		for (k = at; k < at + n; k++) {
			uint32_t r = walk_rand(&x);

			if (lid[seq[k]] == 0) {
				seg_b[seg.nblocks] = b[seq[k]];
				lid[seq[k]] = (uint32_t)++seg.nblocks;
			}
			if (r % 997 == 0)
				ATF_REQUIRE(ix_buf_varint(&seg.ops,
				    IX_OP_NOPREV << 1 | 1) >= 0);
			ATF_REQUIRE(ix_buf_varint(&seg.ops,
			    (uint64_t)(lid[seq[k]] - 1) << 1) >= 0);
		}
		seg.cblocks = seg.nblocks;
		ATF_REQUIRE_EQ(ix_stitch_segment(st, &seg), 0);
		free(seg.ops.p);
		at += n;
	}
	ATF_REQUIRE_EQ(ix_stitch_end(st), 0);
	free(seg_b);
	free(lid);
}

/*
 * Stitched with octs or step by step, walk @seq gives the same rows,
 * counts and branches, and octs were made.
 */
static void
octs_same(const struct ix_sblock *b, size_t nb, const uint32_t *seq,
    size_t len, size_t maxseg, size_t nstreams)
{
	struct ix_stitch on, off;
	struct trail ton, toff;
	size_t k;

	octs_stitch(&on, &ton, b, nb, seq, len, maxseg, nstreams, 0x1234567,
	    0);
	octs_stitch(&off, &toff, b, nb, seq, len, maxseg, nstreams, 0x1234567,
	    1);
	/*
	 * Made and made again: each new segment or stream starts a
	 * generation with or without octs, and so does a block the octs
	 * cover getting a new way out (step by step, none is covered).
	 */
	ATF_REQUIRE(on.octs != NULL);
	ATF_CHECK_MSG(on.oct_gen > off.oct_gen, "octs: generation %ju, %ju "
	    "step by step", (uintmax_t)on.oct_gen, (uintmax_t)off.oct_gen);
	ATF_CHECK_EQ(off.oct_ndirty, 0);
	ATF_CHECK_EQ(ton.nchunks, toff.nchunks);
	ATF_CHECK_MSG(ton.chunks == toff.chunks, "chunk rows differ");
	ATF_CHECK_EQ(ton.ncalls, toff.ncalls);
	ATF_CHECK_MSG(ton.calls == toff.calls, "calls differ");
	ATF_CHECK_EQ(on.exec_blocks, off.exec_blocks);
	ATF_CHECK_EQ(on.exec_insns, off.exec_insns);
	ATF_REQUIRE_EQ(on.ng, off.ng);
	for (k = 0; k < on.ng; k++)
		ATF_CHECK_MSG(on.g[k].ip == off.g[k].ip &&
		    on.g[k].count == off.g[k].count, "block %zu: 0x%jx ran "
		    "%ju times with octs, 0x%jx %ju without", k,
		    (uintmax_t)on.g[k].ip, (uintmax_t)on.g[k].count,
		    (uintmax_t)off.g[k].ip, (uintmax_t)off.g[k].count);
	ATF_REQUIRE_EQ(on.nbranches, off.nbranches);
	for (k = 0; k < on.nbranches; k++)
		ATF_CHECK_MSG(on.branches[k].from == off.branches[k].from &&
		    on.branches[k].to == off.branches[k].to &&
		    on.branches[k].count == off.branches[k].count,
		    "branch %zu: %u -> %u x %ju with octs, %u -> %u x %ju "
		    "without", k, on.branches[k].from, on.branches[k].to,
		    (uintmax_t)on.branches[k].count, off.branches[k].from,
		    off.branches[k].to, (uintmax_t)off.branches[k].count);
	ix_stitch_free(&on);
	ix_stitch_free(&off);
}

/*
 * Loops that blocks share: eight loops of 3 to 40 of 300 blocks (ids of
 * one and two bytes), each step now and then by a second way (a block
 * with two successors, as a conditional branch has), run in turns, so
 * that blocks the octs cover get new successors (a slot moves) and the
 * same bytes of operations mean other blocks in another segment; calls
 * in the loops into blocks no function covers yet, which then become
 * functions (their masks change); runs anywhere now and then.
 * Segments of 40 to 200,000 runs and streams cut across them.  The octs
 * must change nothing.
 */
ATF_TC_WITHOUT_HEAD(octs_change_nothing);
ATF_TC_BODY(octs_change_nothing, tc)
{
	static const struct {
		size_t len, maxseg, nstreams;
	} runs[] = {
		{ 400000, 50000, 1 },
		{ 400000, 3000, 3 },
		{ 300000, 20000, 2 },
		{ 3 * HWTR_DB_CHUNK_BLOCKS + 77, 200000, 1 },
		{ 200000, 40, 1 },
	};
	enum { NB = 300, NLOOPS = 8, MAXLOOP = 40 };
	uint32_t loops[NLOOPS][MAXLOOP], alt[NLOOPS][MAXLOOP], len[NLOOPS];
	struct ix_sblock *b;
	uint32_t *seq, x = 0x6b43a9b5, l = 0, at = 0, y;
	size_t i, j, k, r;

	ATF_REQUIRE((b = calloc(NB, sizeof(*b))) != NULL);
	for (i = 0; i < NB; i++)
		b[i] = ixt_blk(0x10000 + 0x100 * (uint64_t)i,
		    (uint16_t)(1 + i % 5), i % 53 == 7 ? HWTR_IC_CALL :
		    i % 4 == 0 ? HWTR_IC_JUMP : i % 41 == 3 ? HWTR_IC_OTHER :
		    HWTR_IC_COND, lens4, NULL);
	for (i = 0; i < NLOOPS; i++) {
		len[i] = 3 + walk_rand(&x) % (MAXLOOP - 2);
		for (j = 0; j < len[i]; j++) {
			loops[i][j] = walk_rand(&x) % NB;
			alt[i][j] = walk_rand(&x) % NB;
		}
	}
	for (r = 0; r < sizeof(runs) / sizeof(runs[0]); r++) {
		ATF_REQUIRE((seq = calloc(runs[r].len, sizeof(*seq))) != NULL);
		for (k = 0; k < runs[r].len; k++) {
			y = walk_rand(&x);
			if (y % 4000 == 0) {
				l = (y >> 8) % NLOOPS;
				at = (y >> 16) % len[l];
			}
			if (y % 3001 == 1)
				seq[k] = (y >> 8) % NB;		/* anywhere */
			else if ((y >> 12) % 16 == 0)
				seq[k] = alt[l][at];		/* the other way */
			else {
				at = (at + 1) % len[l];
				seq[k] = loops[l][at];
			}
		}
		octs_same(b, NB, seq, runs[r].len, runs[r].maxseg,
		    runs[r].nstreams);
		free(seq);
	}
	free(b);
}

/*
 * Blocks of two instructions at 0x10000 + 0x100 i: calls where bit i of
 * @calls is set, block 3 a conditional branch, the others jumps.
 */
static void
fn_blocks(struct ix_sblock *b, size_t n, uint32_t calls)
{
	size_t i;

	for (i = 0; i < n; i++)
		b[i] = ixt_blk(0x10000 + 0x100 * (uint64_t)i, 2,
		    (calls >> i) & 1 ? HWTR_IC_CALL : i == 3 ? HWTR_IC_COND :
		    HWTR_IC_JUMP, lens4, NULL);
}

/* Append @count runs of @loop (@len blocks), from its block @from on. */
static void
fn_loop(uint32_t *seq, size_t *n, const uint32_t *loop, size_t len,
    size_t from, size_t count)
{
	size_t i;

	ATF_REQUIRE(*n + count <= 2000);
	for (i = 0; i < count; i++)
		seq[(*n)++] = loop[(from + i) % len];
}

/* Append the blocks @b0, @b1, @b2 (UINT32_MAX: none). */
static void
fn_then(uint32_t *seq, size_t *n, uint32_t b0, uint32_t b1, uint32_t b2)
{
	ATF_REQUIRE(*n + 3 <= 2000);
	seq[(*n)++] = b0;
	if (b1 != UINT32_MAX)
		seq[(*n)++] = b1;
	if (b2 != UINT32_MAX)
		seq[(*n)++] = b2;
}

/*
 * A block the octs cover becomes a function's first when it is first
 * called: a jump into it from another function is a tail call from then
 * on, which the octs made before must not hide.  Blocks 0-7 loop (block 7
 * jumps back to 0), 3 also goes to 8 (a conditional branch); once the
 * loop has run, 8 leads to a call (9) into 0, the loop runs inside that
 * function, then 8 leads to a call (10) into 11, which jumps into the
 * loop at 4: its jump from 7 back to 0 is a tail call from 11 into 0.
 * Every block's ways out are known before the octs are made, so that no
 * new one (which starts a generation too) comes in between.
 */
ATF_TC_WITHOUT_HEAD(octs_forget_new_functions);
ATF_TC_BODY(octs_forget_new_functions, tc)
{
	static const uint32_t loop[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };
	struct ix_sblock b[12];
	uint32_t seq[2000];
	size_t n = 0;

	fn_blocks(b, 12, 1u << 9 | 1u << 10);
	/* 3 -> 8 -> 4 once: 3's two ways, 8's first. */
	fn_loop(seq, &n, loop, 8, 0, 4);
	fn_then(seq, &n, 8, UINT32_MAX, UINT32_MAX);
	fn_loop(seq, &n, loop, 8, 4, 4 + 100 * 8 + 4);
	/* 3 -> 8 -> 9, a call into 0. */
	fn_then(seq, &n, 8, 9, UINT32_MAX);
	fn_loop(seq, &n, loop, 8, 0, 20 * 8 + 4);
	/* 3 -> 8 -> 10, a call into 11, which jumps to 4. */
	fn_then(seq, &n, 8, 10, 11);
	fn_loop(seq, &n, loop, 8, 4, 20 * 8);
	octs_same(b, 12, seq, n, n, 1);
}

/*
 * The same for a block the octs end at: 7 calls 12, which jumps to the
 * loop's start, so that no oct goes past 7 (a call is left to the general
 * path) and 7 is in them only as the last block counted.  Once 9 has
 * called 7, the jump from 6 into 7 is a tail call.
 */
ATF_TC_WITHOUT_HEAD(octs_forget_new_functions_at_end);
ATF_TC_BODY(octs_forget_new_functions_at_end, tc)
{
	static const uint32_t loop[9] = { 0, 1, 2, 3, 4, 5, 6, 7, 12 };
	struct ix_sblock b[13];
	uint32_t seq[2000];
	size_t n = 0;

	fn_blocks(b, 13, 1u << 7 | 1u << 9);
	fn_loop(seq, &n, loop, 9, 0, 4);
	fn_then(seq, &n, 8, UINT32_MAX, UINT32_MAX);
	fn_loop(seq, &n, loop, 9, 4, 5 + 100 * 9 + 4);
	fn_then(seq, &n, 8, 9, UINT32_MAX);
	fn_loop(seq, &n, loop, 9, 7, 20 * 9);
	octs_same(b, 13, seq, n, n, 1);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, lens_without_code);
	ATF_TP_ADD_TC(tp, merged_code_less_part);
	ATF_TP_ADD_TC(tp, code_without_lens_across_segments);
	ATF_TP_ADD_TC(tp, walk_counts_as_built);
	ATF_TP_ADD_TC(tp, walk_wide_counts_as_built);
	ATF_TP_ADD_TC(tp, octs_change_nothing);
	ATF_TP_ADD_TC(tp, octs_forget_new_functions);
	ATF_TP_ADD_TC(tp, octs_forget_new_functions_at_end);
	return (atf_no_error());
}
