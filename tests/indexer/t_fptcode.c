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
 * the callbacks name image 1, then image 2 after the change.
 */

#include <atf-c.h>
#include <stdint.h>
#include <string.h>

#include "hwtrace.h"
#include "fpt.h"

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
	static const uint8_t pt[] = {
		0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,	/* PSB */
		0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
		0x99, 0x01,					/* MODE 64 */
		0x7d, 0x00, 0x10, 0, 0, 0, 0,			/* FUP */
		0x02, 0x23,					/* PSBEND */
		0xfe,				/* TNT-8: 6 taken */
	};
	struct fpt_config fc;
	struct image im = { 1, 0, 0 };
	struct fpt *d;

	memset(&fc, 0, sizeof(fc));
	fc.begin = pt;
	fc.end = pt + sizeof(pt);
	fc.read_code = read_code;
	fc.map = map;
	fc.ctx = &im;
	fc.keep_cache = 1;
	ATF_REQUIRE_EQ(fpt_new(&d, &fc), 0);
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

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, image_change);
	return (atf_no_error());
}
