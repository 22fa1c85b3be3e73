/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Tail calls in the stitcher, over a stream built by hand: blocks whose
 * functions (fkey) and flags a fake symbolizer gives by address, run in
 * an order known by construction, and the calls rows the sink receives.
 * A jump (direct, indirect, a taken conditional branch) to a function's
 * first instruction from outside it replaces the frame; a jump into a
 * PLT stub does too and the stub's own jump to its target makes no second
 * frame; a loop to the frame's own entry and a jump into a cold part are
 * no calls.
 */

#include <atf-c.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hwtrace.h"
#include "../../indexer/hwtr_ix.h"
#include "../../indexer/segout.h"
#include "../lib/hwtr_test_ix.h"

static uint8_t lens4[4] = { 4, 4, 4, 4 };

/* The fake symbol table: [lo, hi) is function @fkey, entered at lo. */
static const struct fn {
	uint64_t	lo, hi;
	uint32_t	fkey;
	uint8_t		flags;
	const char	*name;
} fns[] = {
	{ 0x1000, 0x1100, 1, 0, "main" },
	{ 0x2000, 0x2100, 2, 0, "middle" },
	{ 0x3000, 0x3100, 3, 0, "leaf" },
	{ 0x4000, 0x4100, 4, 0, "countdown" },
	{ 0x5000, 0x5100, 5, 0, "foo" },
	{ 0x6000, 0x6100, 6, IX_BF_COLD, "foo.cold" },
	{ 0x7000, 0x7100, 7, 0, "plen" },
	{ 0x8000, 0x8010, 8, IX_BF_PLT, "strlen@plt" },
	{ 0x9000, 0x9100, 9, 0, "strlen" },
	{ 0xa000, 0xa100, 10, 0, "cmid" },
};

struct rows {
	struct ix_stitch *st;
	struct ix_call	c[32];
	uint32_t	fkey[32];
	int64_t		idx[32];
	size_t		n;
};

static int
on_block(void *arg, int64_t gid)
{
	struct rows *r = arg;
	struct ix_sblock *b = &r->st->g[gid];
	size_t i;

	for (i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
		if (b->ip >= fns[i].lo && b->ip < fns[i].hi) {
			b->fkey = fns[i].fkey;
			b->bflags = fns[i].flags;
			if (b->ip == fns[i].lo)
				b->bflags |= IX_BF_FSTART;
		}
	return (0);
}

static int
on_call(void *arg, int64_t idx, const struct ix_call *c)
{
	struct rows *r = arg;

	ATF_REQUIRE(r->n < 32);
	r->c[r->n] = *c;
	r->fkey[r->n] = r->st->g[c->entry_block].fkey;
	r->idx[r->n++] = idx;
	return (0);
}

static const char *
fname(uint32_t fkey)
{
	size_t i;

	for (i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
		if (fns[i].fkey == fkey)
			return (fns[i].name);
	return ("?");
}

/* A block of @ninsn 4-byte instructions at @ip ending with class @cls. */
static struct ix_sblock
blk(uint64_t ip, uint16_t ninsn, int cls)
{
	return (ixt_blk(ip, ninsn, cls, lens4, NULL));
}

ATF_TC_WITHOUT_HEAD(tail_calls_replace_frames);
ATF_TC_BODY(tail_calls_replace_frames, tc)
{
	struct ix_sblock b[] = {
		/* 0: main calls middle, which jumps to leaf */
		blk(0x1000, 2, HWTR_IC_CALL),
		blk(0x2000, 1, HWTR_IC_JUMP),
		blk(0x3000, 1, HWTR_IC_RET),
		/* 3: main calls countdown, a loop to its own entry */
		blk(0x1008, 1, HWTR_IC_CALL),
		blk(0x4000, 1, HWTR_IC_COND),
		blk(0x4004, 1, HWTR_IC_RET),
		/* 6: main calls foo, which runs its cold part */
		blk(0x100c, 1, HWTR_IC_CALL),
		blk(0x5000, 1, HWTR_IC_JUMP),
		blk(0x6000, 1, HWTR_IC_JUMP),
		blk(0x5008, 1, HWTR_IC_RET),
		/* 10: main calls plen, which jumps to strlen's stub */
		blk(0x1010, 1, HWTR_IC_CALL),
		blk(0x7000, 1, HWTR_IC_JUMP),
		blk(0x8000, 1, HWTR_IC_JUMP_IND),
		blk(0x9000, 1, HWTR_IC_RET),
		/* 14: main calls cmid, whose jne leaf is taken */
		blk(0x1014, 1, HWTR_IC_CALL),
		blk(0xa000, 1, HWTR_IC_COND),
		/* 16: main runs on */
		blk(0x1018, 1, HWTR_IC_OTHER),
	};
	/* The order they ran in, by index. */
	static const size_t order[] = { 0, 1, 2, 3, 4, 4, 4, 5, 6, 7, 8, 9,
	    10, 11, 12, 13, 14, 15, 2, 16 };
	static const struct {
		const char	*fn;
		uint8_t		entry, exit;
		int32_t		depth;
		uint64_t	call_ip;
	} want[] = {
		{ "middle", 0, 3, 1, 0x1004 },	/* call, tail */
		{ "leaf", 4, 0, 1, 0x1004 },	/* tail, return */
		{ "countdown", 0, 0, 1, 0x1008 },
		{ "foo", 0, 0, 1, 0x100c },
		{ "plen", 0, 3, 1, 0x1010 },
		{ "strlen", 4, 0, 1, 0x1010 },
		{ "cmid", 0, 3, 1, 0x1014 },
		{ "leaf", 4, 0, 1, 0x1014 },
		{ "main", 1, 2, 0, 0 },		/* start, end */
	};
	struct ix_stitch st;
	struct ix_sink sink;
	struct ix_seg_out seg;
	struct rows r;
	size_t i;

	memset(&r, 0, sizeof(r));
	r.st = &st;
	memset(&sink, 0, sizeof(sink));
	sink.arg = &r;
	sink.block = on_block;
	sink.call = on_call;
	ix_stitch_init(&st, &sink);
	ix_stitch_begin(&st);
	memset(&seg, 0, sizeof(seg));
	seg.blocks = b;
	seg.nblocks = seg.cblocks = sizeof(b) / sizeof(b[0]);
	seg.borrowed = 1;
	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		ATF_REQUIRE(ix_buf_varint(&seg.ops, (uint64_t)order[i] << 1) >=
		    0);
	ATF_REQUIRE_EQ(ix_stitch_segment(&st, &seg), 0);
	ATF_REQUIRE_EQ(ix_stitch_end(&st), 0);
	free(seg.ops.p);

	ATF_REQUIRE_EQ_MSG(r.n, sizeof(want) / sizeof(want[0]),
	    "expected %zu calls, got %zu", sizeof(want) / sizeof(want[0]),
	    r.n);
	for (i = 0; i < r.n; i++) {
		const struct ix_call *c = &r.c[i];

		ATF_CHECK_MSG(strcmp(fname(r.fkey[i]), want[i].fn) == 0,
		    "call %zu: expected %s, got %s", i, want[i].fn,
		    fname(r.fkey[i]));
		ATF_CHECK_MSG(c->entry_kind == want[i].entry &&
		    c->exit_kind == want[i].exit, "call %zu (%s): expected "
		    "entry %s exit %s, got %s %s", i, want[i].fn,
		    ix_call_entry_kinds[want[i].entry],
		    ix_call_exit_kinds[want[i].exit],
		    ix_call_entry_kinds[c->entry_kind],
		    ix_call_exit_kinds[c->exit_kind]);
		ATF_CHECK_MSG(c->depth == want[i].depth, "call %zu (%s): "
		    "expected depth %d, got %d", i, want[i].fn,
		    want[i].depth, c->depth);
		if (want[i].depth == 1)
			ATF_CHECK_MSG(c->parent == r.idx[r.n - 1] &&
			    c->has_call_ip && c->call_ip == want[i].call_ip,
			    "call %zu (%s): expected main's child called at "
			    "0x%jx, got parent %jd call_ip 0x%jx", i,
			    want[i].fn, (uintmax_t)want[i].call_ip,
			    (intmax_t)c->parent, (uintmax_t)c->call_ip);
	}
	/* strlen's call is the function's, not its stub's. */
	ATF_CHECK_EQ(r.c[5].func_ip, 0x9000);
	/* A tail call starts where the frame it replaced ended. */
	ATF_CHECK_EQ(r.c[1].entry_seq, r.c[0].exit_seq);
	ATF_CHECK_EQ(r.c[5].entry_seq, r.c[4].exit_seq);
	ix_stitch_free(&st);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, tail_calls_replace_frames);
	return (atf_no_error());
}
