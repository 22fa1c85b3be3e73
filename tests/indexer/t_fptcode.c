/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * fpt's map callback and fpt_code_changed(): fpt keeps the spans of code
 * the map callback gave, and its hot path follows TNT bits inside the
 * last one without asking again; once the caller says its image changed,
 * the next block must start in the image the callbacks give then.  By
 * construction: a PSB+ at 0x1000 in 64-bit mode, then six taken TNT bits
 * over "nop; jnz 0x1000" (each block 0x1000-0x1001, two instructions);
 * the callbacks name image 1, then image 2 after the change.  And
 * fpt_code_cut()'s flushes, 2^24 of them, across the wrap of the
 * generation that tags the block cache's entries and the memoized runs
 * (generation_wrap, below); a block item's runs field (runs_hint); and
 * fpt_walk()'s blocks and the time over them (walk).
 */

#include <atf-c.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "hwtrace.h"
#include "fpt.h"
#include "../lib/hwtr_test_fpt.h"

/* nop; jnz 0x1000 (75 fd: rel8 -3 from 0x1003). */
static const uint8_t code[] = { 0x90, 0x75, 0xfd };
#define CODE_AT	0x1000

struct image {
	int		isid;		/* what the callbacks say now */
	unsigned	nmap, nread;	/* how often they were asked */
};

static int
read_code(void *ctx, uint64_t ip, uint8_t *buf, size_t n, int *isid)
{
	struct image *im = ctx;

	im->nread++;
	if (ip < CODE_AT || ip >= CODE_AT + sizeof(code))
		return (-1);
	*isid = im->isid;
	if (n > CODE_AT + sizeof(code) - ip)
		n = (size_t)(CODE_AT + sizeof(code) - ip);
	if (n > 0)
		memcpy(buf, code + (ip - CODE_AT), n);
	return ((int)n);
}

static int
map(void *ctx, uint64_t ip, uint64_t *lo, uint64_t *hi, int *isid)
{
	struct image *im = ctx;

	im->nmap++;
	if (ip < CODE_AT || ip >= CODE_AT + sizeof(code))
		return (-1);
	*lo = CODE_AT;
	*hi = CODE_AT + sizeof(code);
	*isid = im->isid;
	return (0);
}

/* A decoder of @begin..@end over the code at CODE_AT in image @im. */
static void
code_fpt(struct fpt **dp, const uint8_t *begin, const uint8_t *end,
    struct image *im)
{
	struct fpt_config fc;

	memset(&fc, 0, sizeof(fc));
	fc.begin = begin;
	fc.end = end;
	fc.read_code = read_code;
	fc.map = map;
	fc.ctx = im;
	fc.keep_cache = 1;
	ATF_REQUIRE_EQ(fpt_new(dp, &fc), 0);
}

/* A PSB+ that starts the flow at CODE_AT in 64-bit mode. */
static const uint8_t psb[] = {
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,	/* PSB */
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	0x99, 0x01,					/* MODE 64 */
	0x7d, 0x00, 0x10, 0, 0, 0, 0,			/* FUP */
	0x02, 0x23,					/* PSBEND */
};

/* The next block, events before it skipped. */
static void
next_block(struct fpt *d, struct fpt_block *b, const char *what)
{
	struct fpt_item it;
	int rc, n;

	for (n = 0; n < 16; n++) {
		rc = fpt_next(d, &it);
		ATF_REQUIRE_MSG(rc == 0, "%s: expected an item, fpt_next() "
		    "returned %d", what, rc);
		ATF_REQUIRE_MSG(it.kind != FPT_ITEM_EVENT ||
		    it.event.kind != FPT_EV_ERROR, "%s: expected a block, "
		    "got a decode error (%d)", what, it.event.error);
		if (it.kind == FPT_ITEM_BLOCK) {
			*b = it.block;
			return;
		}
	}
	atf_tc_fail("%s: expected a block within 16 items, got none", what);
}

/*
 * Blocks @from to @to - 1 are "nop; jnz 0x1000" at 0x1000-0x1001, two
 * instructions each, in image @isid.
 */
static void
check_blocks(struct fpt *d, int from, int to, int isid, const char *when)
{
	struct fpt_block b;
	int i;

	for (i = from; i < to; i++) {
		next_block(d, &b, when);
		ATF_CHECK_MSG(b.ip == CODE_AT && b.end_ip == CODE_AT + 1 &&
		    b.ninsn == 2, "block %d %s: expected 0x1000-0x1001, 2 "
		    "instructions, got %#llx-%#llx, %u", i, when,
		    (unsigned long long)b.ip, (unsigned long long)b.end_ip,
		    b.ninsn);
		ATF_CHECK_MSG(b.isid == isid, "block %d %s: expected image "
		    "%d, got %d", i, when, isid, b.isid);
	}
}

ATF_TC_WITHOUT_HEAD(image_change);
ATF_TC_BODY(image_change, tc)
{
	uint8_t pt[sizeof(psb) + 1];
	struct image im = { 1, 0, 0 };
	struct fpt *d;

	memcpy(pt, psb, sizeof(psb));
	pt[sizeof(psb)] = 0xfe;			/* TNT-8: 6 taken */
	code_fpt(&d, pt, pt + sizeof(pt), &im);
	ATF_REQUIRE_MSG(fpt_sync_forward(d) == 0, "expected a sync at the "
	    "PSB");
	/* Three blocks in image 1. */
	check_blocks(d, 0, 3, 1, "before the change");
	/* The image changes: the next blocks are in image 2. */
	im.isid = 2;
	fpt_code_changed(d);
	check_blocks(d, 3, 6, 2, "after the change");
	/* The span was asked for once per image, not per block. */
	ATF_CHECK_MSG(im.nmap == 2, "expected the map callback asked 2 "
	    "times (once per image), got %u", im.nmap);
	fpt_free(d);
}

/*
 * The block cache's generations across their wrap, in the decoder.  A
 * flush (fpt_code_cut(), and without keep_cache a change of section)
 * only bumps the generation that tags the cache's entries and the
 * memoized runs; the tag keeps its low 24 bits, so that 2^24 flushes
 * after an entry was made its tag looks current again unless the wrap
 * cleared it.  An isid names the code (fpt.h), so that a stale entry
 * cannot give other code; what it gives is libipt's blocks of a warm
 * cache where libipt's cache is empty: libipt ends a block after each
 * fill, at a direct call or a backward jump, where a cached block goes
 * on through them.
 *
 * By construction, over wrap_code: "jnz 0x1010; jmp 0x1000" at 0x1000,
 * "call 0x1020" at 0x1010, "jnz 0x1000" at 0x1020.  SEG_FILL, bits N T
 * T T T T from 0x1000 with an empty cache, fills the cache on the way
 * and gives 8 blocks (wrap_fresh); SEG_RUN, bits T T T T T from 0x1000
 * over the filled cache, makes the run from 0x1010 with T T T T at
 * hand, the key SEG_FILL has at its fourth block.
 */
static const uint8_t wrap_code[] = {
	0x75, 0x0e,				/* 0x1000: jnz 0x1010 */
	0xeb, 0xfc,				/* 0x1002: jmp 0x1000 */
	0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
	0x90, 0x90, 0x90, 0x90,
	0xe8, 0x0b, 0x00, 0x00, 0x00,		/* 0x1010: call 0x1020 */
	0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
	0x90, 0x90, 0x90,
	0x75, 0xde,				/* 0x1020: jnz 0x1000 */
};

#define WRAP_PSB	\
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,		/* PSB */ \
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,			  \
	0x99, 0x01,						/* MODE 64 */ \
	0x7d, 0x00, 0x10, 0, 0, 0, 0,				/* FUP */ \
	0x02, 0x23						/* PSBEND */
#define SEG_FILL	WRAP_PSB, 0xbe		/* TNT-8: N T T T T T */
#define SEG_RUN		WRAP_PSB, 0x7e		/* TNT-8: T T T T T */

/* SEG_FILL's blocks over an empty cache: ip, end_ip, ninsn. */
static const struct fpt_block wrap_fresh[] = {
	{ .ip = 0x1000, .end_ip = 0x1000, .ninsn = 1 },	/* N (fill) */
	{ .ip = 0x1002, .end_ip = 0x1002, .ninsn = 1 },	/* jmp (fill) */
	{ .ip = 0x1000, .end_ip = 0x1000, .ninsn = 1 },	/* T */
	{ .ip = 0x1010, .end_ip = 0x1010, .ninsn = 1 },	/* call (fill) */
	{ .ip = 0x1020, .end_ip = 0x1020, .ninsn = 1 },	/* T (fill) */
	{ .ip = 0x1000, .end_ip = 0x1000, .ninsn = 1 },	/* T */
	{ .ip = 0x1010, .end_ip = 0x1020, .ninsn = 2 },	/* T */
	{ .ip = 0x1000, .end_ip = 0x1000, .ninsn = 1 },	/* T */
};
#define NFRESH	(sizeof(wrap_fresh) / sizeof(wrap_fresh[0]))

/* SEG_RUN's blocks over the filled cache. */
static const struct fpt_block wrap_warm[] = {
	{ .ip = 0x1000, .end_ip = 0x1000, .ninsn = 1 },
	{ .ip = 0x1010, .end_ip = 0x1020, .ninsn = 2 },
	{ .ip = 0x1000, .end_ip = 0x1000, .ninsn = 1 },
	{ .ip = 0x1010, .end_ip = 0x1020, .ninsn = 2 },
	{ .ip = 0x1000, .end_ip = 0x1000, .ninsn = 1 },
};
#define NWARM	(sizeof(wrap_warm) / sizeof(wrap_warm[0]))

/*
 * After each block, the rest of the run it came from (fpt_run_rest()) and
 * its memo, as segfast.c keeps one: marked with @mark when empty; a memo
 * marked otherwise was kept from before and fails the case.
 */
static void
memo_mark(struct fpt *d, uint32_t mark, const char *when)
{
	const struct fpt_block *rb;
	struct fpt_memo *m;
	size_t n;

	if ((n = fpt_run_rest(d, &rb, &m)) == 0)
		return;
	ATF_CHECK_MSG(m->tag == 0 || m->tag == mark, "%s: expected the "
	    "run's memo empty or this pass's (%u), got one kept from pass %u",
	    when, mark, m->tag);
	if (m->rb == NULL) {
		m->rb = rb;
		m->n = (uint8_t)n;
		m->tag = mark;
	}
}

/*
 * Sync at the next PSB and check the first @n blocks against @want; the
 * runs' memos marked with @mark.
 */
static void
wrap_pass(struct fpt *d, const struct fpt_block *want, size_t n,
    uint32_t mark, const char *when)
{
	struct fpt_block b;
	size_t i;

	ATF_REQUIRE_MSG(fpt_sync_forward(d) == 0, "%s: expected a sync at "
	    "the next PSB", when);
	for (i = 0; i < n; i++) {
		next_block(d, &b, when);
		ATF_CHECK_MSG(b.ip == want[i].ip &&
		    b.end_ip == want[i].end_ip && b.ninsn == want[i].ninsn,
		    "%s, block %zu: expected %#llx-%#llx, %u instructions, "
		    "got %#llx-%#llx, %u", when, i,
		    (unsigned long long)want[i].ip,
		    (unsigned long long)want[i].end_ip, want[i].ninsn,
		    (unsigned long long)b.ip, (unsigned long long)b.end_ip,
		    b.ninsn);
		memo_mark(d, mark, when);
	}
}

/*
 * libipt, the referee, on SEG_FILL alone (its cache empty): wrap_fresh's
 * blocks first.
 */
static void
wrap_libipt(struct tf_img *im)
{
	static const uint8_t pt[] = { SEG_FILL };
	struct pt_block_decoder *bd;
	struct tf_items want;
	struct pt_config cfg;
	struct pt_image *img;
	size_t i, k;

	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)(uintptr_t)pt;
	cfg.end = (uint8_t *)(uintptr_t)pt + sizeof(pt);
	ATF_REQUIRE((img = tf_pt_image(im)) != NULL);
	ATF_REQUIRE((bd = pt_blk_alloc_decoder(&cfg)) != NULL);
	ATF_REQUIRE(pt_blk_set_image(bd, img) == 0);
	memset(&want, 0, sizeof(want));
	tf_run_libipt(bd, &want);
	for (i = k = 0; i < want.n && k < NFRESH; i++) {
		const struct fpt_block *b = &want.v[i].block;

		if (want.v[i].kind != FPT_ITEM_BLOCK)
			continue;
		ATF_CHECK_MSG(b->ip == wrap_fresh[k].ip &&
		    b->end_ip == wrap_fresh[k].end_ip &&
		    b->ninsn == wrap_fresh[k].ninsn, "libipt's block %zu: "
		    "expected %#llx-%#llx, %u instructions, got %#llx-%#llx, "
		    "%u", k, (unsigned long long)wrap_fresh[k].ip,
		    (unsigned long long)wrap_fresh[k].end_ip,
		    wrap_fresh[k].ninsn, (unsigned long long)b->ip,
		    (unsigned long long)b->end_ip, b->ninsn);
		k++;
	}
	ATF_CHECK_MSG(k == NFRESH, "expected libipt to give %zu blocks, "
	    "it gave %zu", NFRESH, k);
	tf_items_free(&want);
	pt_blk_free_decoder(bd);
	pt_image_free(img);
}

/*
 * The entries and the run of generation g (SEG_FILL, SEG_RUN), then
 * 2^24 flushes through fpt_code_cut(), the wrap among them: the
 * generation is g's again modulo 2^24, and SEG_FILL must give the blocks
 * of an empty cache, libipt's, with no memo of before.  Each clearing at
 * the wrap, the table's and the runs', fails it when left out.
 */
ATF_TC_WITHOUT_HEAD(generation_wrap);
ATF_TC_BODY(generation_wrap, tc)
{
	static const uint8_t pt[] = {
		SEG_FILL, SEG_RUN, SEG_FILL
	};
	struct fpt_config fc;
	struct tf_img im;
	struct fpt *d;
	uint32_t i;
	FILE *fp;

	ATF_REQUIRE((fp = fopen("wrap.bin", "wb")) != NULL);
	ATF_REQUIRE(fwrite(wrap_code, 1, sizeof(wrap_code), fp) ==
	    sizeof(wrap_code) && fclose(fp) == 0);
	memset(&im, 0, sizeof(im));
	ATF_REQUIRE(tf_img_add(&im, "wrap.bin", wrap_code, 0,
	    sizeof(wrap_code), 0x1000) == 0);
	wrap_libipt(&im);

	memset(&fc, 0, sizeof(fc));
	fc.begin = pt;
	fc.end = pt + sizeof(pt);
	fc.read_code = tf_read_code;
	fc.map = tf_map;
	fc.ctx = &im;
	fc.keep_cache = 1;
	ATF_REQUIRE_EQ(fpt_new(&d, &fc), 0);
	/* Generation 3: the wrap comes in the middle of the flushes. */
	for (i = 0; i < 3; i++)
		fpt_code_cut(d);
	wrap_pass(d, wrap_fresh, NFRESH, 1, "the first pass, cache empty");
	wrap_pass(d, wrap_warm, NWARM, 1, "the run over the filled cache");
	for (i = 0; i < (1u << 24); i++)
		fpt_code_cut(d);
	wrap_pass(d, wrap_fresh, NFRESH, 2, "after 2^24 flushes");
	fpt_free(d);
}

/*
 * A block item's runs field (fpt.h): 0 only where fpt_run_rest() and
 * fpt_run_next() give nothing after it, so that the run API's callers
 * (segfast.c, fptbare) need not ask.  By construction over "nop; jnz
 * 0x1000" (code[]), with the callbacks of image_change: @npk TNT-8
 * packets @pk of @bits taken bits each after a PSB+: npk * bits blocks,
 * 0x1000-0x1001 of two instructions each, and the trace's end.  After
 * each block the run API is asked anyway: what it gives counts, and
 * fails the case after a block that said none follows.  Then *@nnone:
 * the blocks that said none.
 */
static unsigned
runs_walk(unsigned npk, uint8_t pk, unsigned bits, unsigned *nnone,
    unsigned *nrun)
{
	uint8_t pt[sizeof(psb) + 64];
	const struct fpt_block *rb;
	struct fpt_memo *m;
	struct fpt_item it;
	struct image im = { 1, 0, 0 };
	struct fpt *d;
	unsigned n = 0, i;
	size_t k, j, given;
	int rc;

	ATF_REQUIRE(npk <= 64);
	memcpy(pt, psb, sizeof(psb));
	memset(pt + sizeof(psb), pk, npk);
	*nnone = *nrun = 0;
	code_fpt(&d, pt, pt + sizeof(psb) + npk, &im);
	ATF_REQUIRE(fpt_sync_forward(d) == 0);
	for (i = 0; i < 4 * npk * bits; i++) {
		rc = fpt_next(d, &it);
		if (rc == FPT_EOS || (rc == 0 && it.kind == FPT_ITEM_EVENT &&
		    it.event.kind == FPT_EV_ERROR))
			break;
		ATF_REQUIRE_MSG(rc == 0, "fpt_next() returned %d", rc);
		if (it.kind != FPT_ITEM_BLOCK)
			continue;
		given = 0;
		if ((k = fpt_run_rest(d, &rb, &m)) > 0) {
			fpt_run_take(d, k);
			given += k;
		}
		while ((j = fpt_run_next(d, 3, &rb, &m)) > 0) {
			given += j;
			if ((k = fpt_run_rest(d, &rb, &m)) > 0) {
				fpt_run_take(d, k);
				given += k;
			}
		}
		ATF_CHECK_MSG(it.runs || given == 0, "block %u said no run "
		    "follows, the run API gave %zu blocks", n, given);
		ATF_CHECK_MSG(it.block.ip == CODE_AT &&
		    it.block.end_ip == CODE_AT + 1 && it.block.ninsn == 2,
		    "block %u: expected 0x1000-0x1001, 2 instructions", n);
		*nnone += !it.runs;
		*nrun += (unsigned)given;
		n += 1 + (unsigned)given;
	}
	fpt_free(d);
	return (n);
}

ATF_TC_WITHOUT_HEAD(runs_hint);
ATF_TC_BODY(runs_hint, tc)
{
	unsigned n, nnone, nrun;

	/* TNT-8 of one taken bit (06), 40 times: no bit is ever at hand. */
	n = runs_walk(40, 0x06, 1, &nnone, &nrun);
	ATF_CHECK_MSG(n == 40, "one bit a packet: expected 40 blocks, got "
	    "%u", n);
	/* All but the first (a cache fill) and the last (no packet next). */
	ATF_CHECK_MSG(nnone >= 38, "one bit a packet: expected 38 blocks "
	    "or more to say no run follows, got %u", nnone);
	/* TNT-8 of six taken bits (fe), 10 times: runs from bits at hand. */
	n = runs_walk(10, 0xfe, 6, &nnone, &nrun);
	ATF_CHECK_MSG(n == 60, "six bits a packet: expected 60 blocks, got "
	    "%u", n);
	ATF_CHECK_MSG(nrun > 0, "six bits a packet: expected blocks from "
	    "the run API, got none");
}

#define WALK_TSC	0x123456789aull	/* walk_blocks()'s TSC */

/*
 * fpt_walk() (fpt.h) by construction over code[], as runs_walk(): @npk
 * TNT-8 packets of one taken bit after a PSB+, but the @tsc_at'th (none
 * when 0) of two and a TSC after it: npk blocks 0x1000-0x1001 of two
 * instructions each, one more with the TSC.  The TSC, read ahead as the
 * packet before it is taken, stops at the packet after it, which its
 * second bit's block leaves next: the time moves there, and a walk may
 * not start.  After every block item, whatever its runs field, walks of at
 * most @max blocks while they give some: each of their blocks is one of
 * those, and fpt's time at the walk's start (fpt_time_at() there) is
 * the one at its end (fpt_time()) and still the one at its start.  The
 * blocks in all; *@nwalk: those the walks gave.
 */
static unsigned
walk_blocks(unsigned npk, unsigned tsc_at, size_t max, unsigned *nwalk)
{
	uint8_t pt[sizeof(psb) + 64 + 8], *p;
	struct fpt_block wb[8];
	struct fpt_item it;
	struct image im = { 1, 0, 0 };
	struct fpt *d;
	uint64_t off, t0, t1, t2;
	unsigned n = 0, i;
	size_t k, j;
	int rc, rc0, rc1, rc2;

	ATF_REQUIRE(npk <= 64 && tsc_at <= npk && max <= 8);
	memcpy(pt, psb, sizeof(psb));
	p = pt + sizeof(psb);
	for (i = 0; i < npk; i++) {
		*p++ = i + 1 == tsc_at ? 0x0e : 0x06;
		if (i + 1 == tsc_at) {
			*p++ = 0x19;
			for (j = 0; j < 7; j++)
				*p++ = (uint8_t)(WALK_TSC >> (8 * j));
		}
	}
	*nwalk = 0;
	code_fpt(&d, pt, p, &im);
	ATF_REQUIRE(fpt_sync_forward(d) == 0);
	for (i = 0; i < 4 * npk && n < 4 * npk; i++) {
		rc = fpt_next(d, &it);
		if (rc == FPT_EOS || (rc == 0 && it.kind == FPT_ITEM_EVENT &&
		    it.event.kind == FPT_EV_ERROR))
			break;
		ATF_REQUIRE_MSG(rc == 0, "fpt_next() returned %d", rc);
		if (it.kind != FPT_ITEM_BLOCK)
			continue;
		ATF_CHECK_MSG(it.block.ip == CODE_AT &&
		    it.block.end_ip == CODE_AT + 1 && it.block.ninsn == 2,
		    "block %u: expected 0x1000-0x1001, 2 instructions", n);
		n++;
		for (;;) {
			off = fpt_offset(d);
			rc0 = fpt_time_at(d, off, &t0, NULL);
			if ((k = fpt_walk(d, wb, max)) == 0)
				break;
			ATF_REQUIRE(k <= max);
			for (j = 0; j < k; j++)
				ATF_CHECK_MSG(wb[j].ip == CODE_AT &&
				    wb[j].end_ip == CODE_AT + 1 &&
				    wb[j].ninsn == 2 &&
				    wb[j].end == FPT_END_COND_TAKEN,
				    "block %zu: expected 0x1000-0x1001 taken, "
				    "2 instructions", n + j);
			rc1 = fpt_time(d, &t1);
			rc2 = fpt_time_at(d, off, &t2, NULL);
			ATF_CHECK_MSG(rc1 == rc0 && rc2 == rc0 && (rc0 < 0 ||
			    (t1 == t0 && t2 == t0)), "blocks %u-%zu: the "
			    "time moved over a walk (%d %#llx, then %d %#llx, "
			    "%d %#llx at its start)", n, n + k - 1, rc0,
			    (unsigned long long)t0, rc1,
			    (unsigned long long)t1, rc2,
			    (unsigned long long)t2);
			n += (unsigned)k;
			*nwalk += (unsigned)k;
		}
	}
	fpt_free(d);
	return (n);
}

ATF_TC_WITHOUT_HEAD(walk);
ATF_TC_BODY(walk, tc)
{
	static const size_t max[] = { 8, 3, 1 };
	unsigned n, nwalk, i;

	for (i = 0; i < sizeof(max) / sizeof(max[0]); i++) {
		n = walk_blocks(40, 0, max[i], &nwalk);
		ATF_CHECK_MSG(n == 40, "walks of %zu: expected 40 blocks, "
		    "got %u", max[i], n);
		/* Most: not the first (a cache fill) nor the few after it. */
		ATF_CHECK_MSG(nwalk >= 20, "walks of %zu: expected most "
		    "blocks from walks, got %u", max[i], nwalk);
		n = walk_blocks(40, 20, max[i], &nwalk);
		ATF_CHECK_MSG(n == 41, "walks of %zu, a TSC: expected 41 "
		    "blocks, got %u", max[i], n);
		ATF_CHECK_MSG(nwalk >= 20, "walks of %zu, a TSC: expected "
		    "most blocks from walks, got %u", max[i], nwalk);
	}
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, image_change);
	ATF_TP_ADD_TC(tp, generation_wrap);
	ATF_TP_ADD_TC(tp, runs_hint);
	ATF_TP_ADD_TC(tp, walk);
	return (atf_no_error());
}
