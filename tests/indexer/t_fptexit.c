/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * fpt's syscall exits the short way (fpt_exit.c), held to libipt on
 * hand-built traces: a loop through a syscall whose exit, a TIP.PGD
 * without IP then maybe a TSC and the TIP.PGE, comes again and again, as
 * in a user-only trace, so that the exit's block is memoized after the
 * first and the later ones take the short way; and the shapes that must
 * go the general way, in the last round, after the memo: a MODE.exec or
 * two TSCs before the TIP.PGE, a TIP.PGE without IP or cut, a 32-bit
 * TIP, a PSB+ or a bad packet after it, the end of the trace; an exit
 * whose block passes a call (never memoized), a jump (memoized), or a
 * write to CR3 (where libipt's disable binds: never memoized).
 */

#include <atf-c.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwtrace.h"
#include "../lib/hwtr_test_fptcase.h"

/*
 * 0x1000 jz +0; 0x1002 syscall; 0x1004 jmp rax; 0x1006 jz +0;
 * 0x1008 call 0x1002; 0x100d jmp 0x1002; 0x100f mov cr3, rax;
 * 0x1012 syscall; 0x1014 jmp rax; 0x1016 ret.
 */
static const uint8_t code[] = {
	0x74, 0x00, 0x0f, 0x05, 0xff, 0xe0, 0x74, 0x00,
	0xe8, 0xf5, 0xff, 0xff, 0xff, 0xeb, 0xf3, 0x0f,
	0x22, 0xd8, 0x0f, 0x05, 0xff, 0xe0, 0xc3,
};

#define PSB_PLUS_AT(lo)	\
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,		/* PSB */ \
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,			  \
	0x99, 0x01,						/* MODE 64 */ \
	0x7d, (lo), 0x10, 0, 0, 0, 0,				/* FUP */ \
	0x02, 0x23						/* PSBEND */
#define PSB_PLUS_64	PSB_PLUS_AT(0x00)
#define TNT_N		0x04				/* TNT-8: N */
#define PGD		0x01				/* TIP.PGD, no IP */
#define TSC(t)		0x19, (t), 0x27, 0, 0, 0, 0, 0	/* TSC */
#define PGE(lo)		0x31, (lo), 0x10		/* TIP.PGE, 16 bits */
#define TIP(lo)		0x2d, (lo), 0x10		/* TIP, 16 bits */
/*
 * Round the loop: the jz, the syscall and its exit back at the jmp rax,
 * to 0x1000 again.  Five items: two blocks, the disable, the enable, the
 * block of the jmp rax.
 */
#define ROUND(t)	TNT_N, PGD, TSC(t), PGE(0x04), TIP(0x00)
#define ROUNDS(t)	ROUND(t), ROUND((t) + 1), ROUND((t) + 2)

/*
 * fpt on @pt must give libipt's items, @nitems of them (by
 * construction), whole or (unless @whole) some and then unsupported.
 */
static void
exit_case(const char *what, const uint8_t *pt, size_t len, size_t nitems,
    int whole)
{
	tf_case(what, code, sizeof(code), pt, len, nitems, whole,
	    "T_FPTEXIT_DUMP");
}

/*
 * Four exits, the TSC between: the first memoized, three the short way.
 * By construction: the PSB+'s mode; 4 x 5; the last jz: 22 items.
 */
ATF_TC_WITHOUT_HEAD(exits_tsc);
ATF_TC_BODY(exits_tsc, tc)
{
	static const uint8_t pt[] = {
		PSB_PLUS_64, ROUNDS(0x10), ROUND(0x20), TNT_N,
	};

	exit_case("exits_tsc", pt, sizeof(pt), 22, 1);
}

/*
 * Four exits without a TSC: no time at all.  By construction: the
 * PSB+'s mode; 4 x 5; the last jz: 22 items.
 */
ATF_TC_WITHOUT_HEAD(exits_no_tsc);
ATF_TC_BODY(exits_no_tsc, tc)
{
	static const uint8_t pt[] = {
		PSB_PLUS_64,
		TNT_N, PGD, PGE(0x04), TIP(0x00),
		TNT_N, PGD, PGE(0x04), TIP(0x00),
		TNT_N, PGD, PGE(0x04), TIP(0x00),
		TNT_N, PGD, PGE(0x04), TIP(0x00),
		TNT_N,
	};

	exit_case("exits_no_tsc", pt, sizeof(pt), 22, 1);
}

/*
 * The TIP.PGE's other compressions: 32 bits, 48 bits sign-extended, 48
 * bits, the full IP.  By construction: the PSB+'s mode; 3 x 5; 4 x 5;
 * the last jz: 37 items.
 */
ATF_TC_WITHOUT_HEAD(exits_pge_ip);
ATF_TC_BODY(exits_pge_ip, tc)
{
	static const uint8_t pt[] = {
		PSB_PLUS_64, ROUNDS(0x10),
		TNT_N, PGD, TSC(0x30), 0x51, 0x04, 0x10, 0, 0, TIP(0x00),
		TNT_N, PGD, TSC(0x31), 0x71, 0x04, 0x10, 0, 0, 0, 0,
		TIP(0x00),
		TNT_N, PGD, TSC(0x32), 0x91, 0x04, 0x10, 0, 0, 0, 0,
		TIP(0x00),
		TNT_N, PGD, TSC(0x33), 0xd1, 0x04, 0x10, 0, 0, 0, 0, 0, 0,
		TIP(0x00),
		TNT_N,
	};

	exit_case("exits_pge_ip", pt, sizeof(pt), 37, 1);
}

/*
 * After the memo, exits the short way must not take: a MODE.exec before
 * the TIP.PGE (its event after the enable), two TSCs, a 32-bit TIP after
 * it.  By construction: the PSB+'s mode; 3 x 5; 5 and the mode's event;
 * 5; 5; the last jz: 33 items.
 */
/*
 * A TNT-8 after the TIP.PGE: the exits resume at the jz.  By
 * construction: the PSB+'s mode; 3 x 5; 3 x 4 (the jz, the syscall, the
 * disable, the enable); the last jz: 29 items.
 */
ATF_TC_WITHOUT_HEAD(exits_tnt_after);
ATF_TC_BODY(exits_tnt_after, tc)
{
	static const uint8_t pt[] = {
		PSB_PLUS_64, ROUNDS(0x10),
		TNT_N, PGD, TSC(0x30), PGE(0x00),
		TNT_N, PGD, TSC(0x31), PGE(0x00),
		TNT_N, PGD, TSC(0x32), PGE(0x00),
		TNT_N,
	};

	exit_case("exits_tnt_after", pt, sizeof(pt), 29, 1);
}

ATF_TC_WITHOUT_HEAD(exits_other);
ATF_TC_BODY(exits_other, tc)
{
	static const uint8_t pt[] = {
		PSB_PLUS_64, ROUNDS(0x10),
		TNT_N, PGD, TSC(0x30), 0x99, 0x01, PGE(0x04), TIP(0x00),
		TNT_N, PGD, TSC(0x31), TSC(0x32), PGE(0x04), TIP(0x00),
		TNT_N, PGD, TSC(0x33), PGE(0x04), 0x4d, 0x00, 0x10, 0, 0,
		TNT_N,
	};

	exit_case("exits_other", pt, sizeof(pt), 33, 1);
}

/*
 * A PSB+ after the TIP.PGE, its FUP where tracing resumed.  By
 * construction: the PSB+'s mode; 3 x 5; the jz, the syscall, the
 * disable, the enable; the PSB+'s mode; the jmp rax; 5; the last jz:
 * 28 items.
 */
ATF_TC_WITHOUT_HEAD(exit_psb);
ATF_TC_BODY(exit_psb, tc)
{
	static const uint8_t pt[] = {
		PSB_PLUS_64, ROUNDS(0x10),
		TNT_N, PGD, TSC(0x30), PGE(0x04), PSB_PLUS_AT(0x04),
		TIP(0x00), ROUND(0x31), TNT_N,
	};

	exit_case("exit_psb", pt, sizeof(pt), 28, 1);
}

/*
 * A TIP.PGE without IP after the memo: libipt's error.  By
 * construction: the PSB+'s mode; 3 x 5; the jz, the syscall, the
 * error: 19 items.
 */
ATF_TC_WITHOUT_HEAD(exit_pge_noip);
ATF_TC_BODY(exit_pge_noip, tc)
{
	static const uint8_t pt[] = {
		PSB_PLUS_64, ROUNDS(0x10),
		TNT_N, PGD, TSC(0x30), 0x11, TIP(0x00), TNT_N,
	};

	exit_case("exit_pge_noip", pt, sizeof(pt), 19, 0);
}

/*
 * A bad packet after the TIP.PGE (02 ff, no opcode).  By construction:
 * the PSB+'s mode; 3 x 5; the jz, the syscall, the error: 19 items.
 */
ATF_TC_WITHOUT_HEAD(exit_bad_after);
ATF_TC_BODY(exit_bad_after, tc)
{
	static const uint8_t pt[] = {
		PSB_PLUS_64, ROUNDS(0x10),
		TNT_N, PGD, TSC(0x30), PGE(0x04), 0x02, 0xff, TIP(0x00),
	};

	exit_case("exit_bad_after", pt, sizeof(pt), 19, 0);
}

/*
 * The end of the trace in the exit: in the TIP.PGE, right after it, in
 * the TIP after it.  By construction: the PSB+'s mode; 3 x 5; the jz,
 * the syscall (the first: libipt's fetch of the enable meets the end,
 * which loses the disable); the disable, the enable (the others); and
 * in the last the jmp rax, whose block libipt gives as its query meets
 * the end: 18, 20 and 21 items.
 */
ATF_TC_WITHOUT_HEAD(exit_cut);
ATF_TC_BODY(exit_cut, tc)
{
	static const uint8_t cut_pge[] = {
		PSB_PLUS_64, ROUNDS(0x10), TNT_N, PGD, TSC(0x30), 0x31, 0x04,
	};
	static const uint8_t cut_after[] = {
		PSB_PLUS_64, ROUNDS(0x10), TNT_N, PGD, TSC(0x30), PGE(0x04),
	};
	static const uint8_t cut_tip[] = {
		PSB_PLUS_64, ROUNDS(0x10), TNT_N, PGD, TSC(0x30), PGE(0x04),
		0x2d, 0x00,
	};

	exit_case("cut_pge", cut_pge, sizeof(cut_pge), 18, 1);
	exit_case("cut_after", cut_after, sizeof(cut_after), 20, 1);
	exit_case("cut_tip", cut_tip, sizeof(cut_tip), 21, 1);
}

/*
 * Exits whose block passes a call (0x1008 call 0x1002: never memoized,
 * its return address pushed, which a compressed return after the exit
 * takes), a jump (0x100d jmp 0x1002: memoized), or ends at a write to
 * CR3 (0x100f: the disable binds there, the syscall after it is never
 * reached), each three times.  A round: the jz at 0x1006, the call's
 * block and its exit at the ret, the ret's block (a TNT-8 after the
 * TIP.PGE) to 0x100d, the jump's block and its exit back at the jmp rax
 * to 0x100f, the CR3 write's block and its exit at 0x1014 (jmp rax), to
 * 0x1006: 4 + 1 + 4 + 4 items.  By construction: the PSB+'s mode (the FUP at 0x1000); the jz
 * at 0x1000, its syscall's 4, the jmp rax to 0x1006; 3 x 13: 45 items
 * (the jz at 0x1006 left without its bit).
 */
#define TNT_T		0x06				/* TNT-8: T */
#define ROUND_WAYS(t)							\
	TNT_N, PGD, TSC(t), PGE(0x16), TNT_T,				\
	PGD, TSC((t) + 1), PGE(0x04), TIP(0x0f),			\
	PGD, TSC((t) + 2), PGE(0x14), TIP(0x06)
ATF_TC_WITHOUT_HEAD(exit_ways);
ATF_TC_BODY(exit_ways, tc)
{
	static const uint8_t pt[] = {
		PSB_PLUS_64, TNT_N, PGD, TSC(0x10), PGE(0x04), TIP(0x06),
		ROUND_WAYS(0x20), ROUND_WAYS(0x30), ROUND_WAYS(0x40),
	};

	exit_case("exit_ways", pt, sizeof(pt), 45, 1);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, exits_tsc);
	ATF_TP_ADD_TC(tp, exits_no_tsc);
	ATF_TP_ADD_TC(tp, exits_pge_ip);
	ATF_TP_ADD_TC(tp, exits_tnt_after);
	ATF_TP_ADD_TC(tp, exits_other);
	ATF_TP_ADD_TC(tp, exit_psb);
	ATF_TP_ADD_TC(tp, exit_pge_noip);
	ATF_TP_ADD_TC(tp, exit_bad_after);
	ATF_TP_ADD_TC(tp, exit_cut);
	ATF_TP_ADD_TC(tp, exit_ways);
	return (atf_no_error());
}
