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

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, lens_without_code);
	ATF_TP_ADD_TC(tp, merged_code_less_part);
	ATF_TP_ADD_TC(tp, code_without_lens_across_segments);
	ATF_TP_ADD_TC(tp, walk_counts_as_built);
	ATF_TP_ADD_TC(tp, walk_wide_counts_as_built);
	return (atf_no_error());
}
