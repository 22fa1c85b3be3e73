/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * fpt's hot path (fpt_dec.c's next_hot()) and its block cache, held to
 * libipt on hand-built traces of a loop whose blocks come from the
 * cache once it is filled: "jz +0; jmp rax" at 0x1000, a TNT-8 of one
 * bit then a TIP back each time, as a random walk's trace goes; after
 * the last bit, what a syscall's exit leaves in a user-only trace
 * (TIP.PGD, TIP.PGE) and damaged forms of it.  And the cache's
 * generations: an entry of a flushed generation is never found again,
 * not even 2^24 flushes later, when the tag's generation bits wrap.
 */

#include <atf-c.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwtrace.h"
#include "../lib/hwtr_test_fptcase.h"

#define PSB_PLUS_64	\
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,		/* PSB */ \
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,			  \
	0x99, 0x01,						/* MODE 64 */ \
	0x7d, 0x00, 0x10, 0, 0, 0, 0,				/* FUP */ \
	0x02, 0x23						/* PSBEND */
#define LOOP_ONCE	0x04, 0x2d, 0x00, 0x10	/* TNT-8: N; TIP 0x1000 */
#define LOOP_FOUR	LOOP_ONCE, LOOP_ONCE, LOOP_ONCE, LOOP_ONCE

/* jz +0; jmp rax */
static const uint8_t code[] = { 0x74, 0x00, 0xff, 0xe0 };

/*
 * fpt on @pt over the loop, with the map callback its hot path needs,
 * must give libipt's items, @nitems of them (by construction), whole or
 * (unless @whole) some and then unsupported.
 */
static void
loop_case(const char *what, const uint8_t *pt, size_t len, size_t nitems,
    int whole)
{
	tf_case(what, code, sizeof(code), pt, len, nitems, whole,
	    "T_FPTHOT_DUMP");
}

/*
 * The exit: TIP.PGD, IP suppressed, right after the last bit; it binds
 * to the jmp rax.  Then the TIP.PGE back at 0x1000 and twice round the
 * loop.  By construction: the PSB+'s mode; 4 x 2 blocks; the jz; the jmp
 * rax and the disable; the enable; 2 x 2 blocks; the last jz: 18 items.
 */
ATF_TC_WITHOUT_HEAD(pgd_after_bit);
ATF_TC_BODY(pgd_after_bit, tc)
{
	static const uint8_t pt[] = {
		PSB_PLUS_64, LOOP_FOUR,
		0x04,						/* TNT-8: N */
		0x01,						/* TIP.PGD */
		0x31, 0x00, 0x10,				/* TIP.PGE */
		LOOP_ONCE, LOOP_ONCE,
		0x04,						/* TNT-8: N */
	};

	loop_case("pgd_after_bit", pt, sizeof(pt), 18, 1);
}

/*
 * A TIP.PGE right after the bit, tracing on: libipt's error there, fpt
 * hands the rest to it.  By construction: the PSB+'s mode; 4 x 2
 * blocks; the jz; the error: 11 items.
 */
ATF_TC_WITHOUT_HEAD(pge_after_bit);
ATF_TC_BODY(pge_after_bit, tc)
{
	static const uint8_t pt[] = {
		PSB_PLUS_64, LOOP_FOUR,
		0x04,						/* TNT-8: N */
		0x31, 0x00, 0x10,				/* TIP.PGE */
		LOOP_ONCE,
	};

	loop_case("pge_after_bit", pt, sizeof(pt), 11, 0);
}

/*
 * A TIP.PGD with a reserved IP compression (5) after the bit.  By
 * construction: the PSB+'s mode; 4 x 2 blocks; the jz; the error at the
 * bad packet: 11 items.
 */
ATF_TC_WITHOUT_HEAD(bad_pgd_after_bit);
ATF_TC_BODY(bad_pgd_after_bit, tc)
{
	static const uint8_t pt[] = {
		PSB_PLUS_64, LOOP_FOUR,
		0x04,						/* TNT-8: N */
		0xa1, 0x00, 0x10,				/* TIP.PGD */
		LOOP_ONCE,
	};

	loop_case("bad_pgd_after_bit", pt, sizeof(pt), 11, 1);
}

/*
 * A TIP.PGD cut by the end of the trace after the bit: the end.  By
 * construction: the PSB+'s mode; 4 x 2 blocks; the jz: 10 items.
 */
ATF_TC_WITHOUT_HEAD(cut_pgd_after_bit);
ATF_TC_BODY(cut_pgd_after_bit, tc)
{
	static const uint8_t pt[] = {
		PSB_PLUS_64, LOOP_FOUR,
		0x04,						/* TNT-8: N */
		0x21, 0x00,					/* TIP.PGD */
	};

	loop_case("cut_pgd_after_bit", pt, sizeof(pt), 10, 1);
}

/*
 * An entry inserted, then 2^24 flushes: the low 24 bits of the
 * generation, which its tag keeps, are those it was inserted under
 * again, and still it must not be found.
 */
ATF_TC_WITHOUT_HEAD(generation_wrap);
ATF_TC_BODY(generation_wrap, tc)
{
	struct fpt_cache_entry e;
	struct fpt_cache *c;
	uint32_t i;

	ATF_REQUIRE(fpt_cache_new(&c, 4) == 0);
	memset(&e, 0, sizeof(e));
	e.ip = 0x1000;
	e.tag = fpt_cache_tag(7, 64, 0);
	e.ninsn = 1;
	e.q = FPT_Q_COND;
	ATF_REQUIRE(fpt_cache_insert(c, &e) == 0);
	ATF_REQUIRE_MSG(fpt_cache_lookup(c, 0x1000, 7, 64) != NULL,
	    "expected the entry found before any flush");
	fpt_cache_flush(c);
	ATF_CHECK_MSG(fpt_cache_lookup(c, 0x1000, 7, 64) == NULL,
	    "expected no entry after one flush");
	for (i = 1; i < (1u << 24); i++)
		fpt_cache_flush(c);
	ATF_CHECK_MSG(fpt_cache_lookup(c, 0x1000, 7, 64) == NULL,
	    "expected no entry after 2^24 flushes, found the stale one");
	/* And the table works on. */
	e.tag = fpt_cache_tag(7, 64, 0);
	ATF_REQUIRE(fpt_cache_insert(c, &e) == 0);
	ATF_CHECK_MSG(fpt_cache_lookup(c, 0x1000, 7, 64) != NULL,
	    "expected the entry inserted after the wrap found");
	fpt_cache_free(c);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, pgd_after_bit);
	ATF_TP_ADD_TC(tp, pge_after_bit);
	ATF_TP_ADD_TC(tp, bad_pgd_after_bit);
	ATF_TP_ADD_TC(tp, cut_pgd_after_bit);
	ATF_TP_ADD_TC(tp, generation_wrap);
	return (atf_no_error());
}
