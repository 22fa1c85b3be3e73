/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The stitcher's per-block fast path (stitch_fast.c), apart from the
 * rest of the stitcher (stitch.c): what both read of a global block
 * (struct ix_hot) and of a segment's memos (struct ix_smemo).
 */

#ifndef HWTR_IX_STITCH_INT_H
#define HWTR_IX_STITCH_INT_H

#include <stddef.h>
#include <stdint.h>

#include "hwtr_ix.h"
#include "segout.h"

/*
 * The per-block path (add_run() and what it calls) is inlined where it
 * is used: a call per executed block was a tenth of the stitcher.
 */
#if defined(__GNUC__)
#define IX_HOT	inline __attribute__((always_inline))
#define IX_APART __attribute__((noinline))
#else
#define IX_HOT	inline
#define IX_APART
#endif

/*
 * What the per-block path needs of a global block, in one place (two to a
 * cache line) rather than in the block and three arrays: its two latest
 * successors (id + 1, 0: none) and their branches' indexes, its count in
 * the current stream, its length, what a branch out of it does (flow) and
 * which of those a branch into it makes work on the call stack (emask).
 */
struct ix_hot {
	uint32_t	to[2];
	uint32_t	br[2];
	uint64_t	count;
	uint16_t	ninsn;
	uint8_t		flow;
	uint8_t		emask;
};

/*
 * What a branch out of a block does beyond its count, by the block's
 * class (flow): a conditional branch or a direct jump works on the call
 * stack only into a function's entry (IX_BF_FSTART or IX_BF_PLT, which
 * func_start may set later: emask has both then), or for a jump, in a
 * frame inside a PLT stub; the rest always do.  Blocks of other classes
 * have none.
 */
enum { HF_COND = 1, HF_JUMP = 2, HF_STACK = 4 };

/*
 * A memo of the segment (IX_OP_MEMO): its k blocks b0..b(k-1), whose
 * global ids are known and none of which may be continued, such that
 * the branches b0 -> b1 ... b(k-3) -> b(k-2) exist and do nothing to
 * the call stack (as of hot_gen @gen), and b1..b(k-2) ran before in the
 * stream.  run_fast() then counts b0 and the block before it as any,
 * and b1..b(k-2) at once: their exec bytes copied (@xlen of them), their
 * instructions added (@insn), their counts and those of the branches
 * into them left to ix_stitch_memo_sum() (@uses times; the ids at
 * mpool + @pool, then the branches').  b(k-1) is held back.  One cache
 * line each (st->memo is aligned): the memo's first load is most of
 * what applying it costs.
 */
enum { IX_SM_UNKNOWN, IX_SM_OK, IX_SM_NEVER };
#define IX_SMEMO_X	20
struct ix_smemo {
	uint32_t	g0, g1, gpre, glast;	/* b0, b1, b(k-2), b(k-1) */
	uint32_t	insn, gen, pool, uses;
	uint16_t	k;
	uint16_t	l0, llast;	/* local ids of b0, b(k-1) */
	uint8_t		state, tries, filled;
	uint8_t		xlen, off1;	/* b1's offset in the bytes */
	uint8_t		len;		/* of its operations; 0: none */
	/* The exec bytes, or past IX_SMEMO_X their offset in st->mx. */
	uint8_t		x[IX_SMEMO_X];
};

/*
 * The blocks from *@posp on, while each is the common case (stitch.c's
 * fast_ok() held when called), chunks of @cblocks blocks; *@posp: the
 * first operation left to the general path.
 */
void	ix_stitch_run_fast(struct ix_stitch *st, const struct ix_seg_out *seg,
	    size_t *posp, int64_t cblocks);
/* The segment's memos start unknown (room for seg->nmemo). */
int	ix_stitch_memo_begin(struct ix_stitch *st, const struct ix_seg_out *seg);
/*
 * IX_OP_MEMO's arguments at *@posp, the memo's bytes after them: 0 with
 * *@posp at its blocks, or -HWTR_E_FORMAT.
 */
int	ix_stitch_memo_op(struct ix_stitch *st, const struct ix_seg_out *seg,
	    size_t *posp);
/* The counts the memos applied at once left to add. */
void	ix_stitch_memo_sum(struct ix_stitch *st, const struct ix_seg_out *seg);

#endif /* !HWTR_IX_STITCH_INT_H */
