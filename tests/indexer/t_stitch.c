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

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, lens_without_code);
	ATF_TP_ADD_TC(tp, merged_code_less_part);
	ATF_TP_ADD_TC(tp, code_without_lens_across_segments);
	return (atf_no_error());
}
