/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * fpt against libipt on hand-built traces over a few bytes of code, for
 * the differences the differential fuzzer found once t_fpt.c was full
 * (the inputs it found are tests/fuzz/corpus-fpt/reg-*, over the calls
 * fixture; these do not depend on its layout).  Each trace goes through
 * both decoders (hwtr_test_fptreg.h's both()): fpt must give libipt's
 * items, its errors at libipt's offsets, and both the items known by
 * construction.
 */

#include <atf-c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwtrace.h"
#include "hwtr_test.h"
#include "../lib/hwtr_test_fptreg.h"

/*
 * An MWAIT before the TIP.PGE waits for the FUP after it, which has a
 * reserved IP size: libipt's read-ahead after the enabled event stops at
 * that FUP by its header, so the PSB+'s mode event is handed over and
 * the enabled event's fetch of the next fails at the FUP (seeds 505 and
 * 606).  By construction: the mode event and the error at 0x25: 2 items.
 */
ATF_TC_WITHOUT_HEAD(bad_fup_after_mwait_pge);
ATF_TC_BODY(bad_fup_after_mwait_pge, tc)
{
	static const uint8_t pt[] = {
		PSB_PLUS_OFF,
		MWAIT,
		PGE_1000,
		0xfd, 0, 0, 0, 0, 0, 0, 0, 0,		/* FUP, IP size 7 */
	};
	/* ret */
	static const uint8_t code[] = { 0xc3 };

	both("bad_fup_after_mwait_pge", pt, sizeof(pt), code, sizeof(code),
	    2, 0x25, 0);
}

/*
 * A MODE.exec after the TNT bits waits for a TIP with a reserved IP size:
 * libipt's fetch of the mode event decodes that TIP and fails before the
 * block to the indirect jump (seed 808).  By construction: the mode
 * event, the enabled event, the block to the jz (the bit), the error at
 * 0x1e: 4 items.
 */
ATF_TC_WITHOUT_HEAD(bad_tip_after_mode_after_tnt);
ATF_TC_BODY(bad_tip_after_mode_after_tnt, tc)
{
	static const uint8_t pt[] = {
		PSB_PLUS_OFF,
		PGE_1000,
		0x04,					/* TNT: N */
		0x99, 0x01,				/* MODE 64 */
		0xed, 0, 0, 0, 0, 0, 0, 0, 0,		/* TIP, IP size 7 */
	};
	/* jz +0; jmp *%rax */
	static const uint8_t code[] = { 0x74, 0x00, 0xff, 0xe0 };

	both("bad_tip_after_mode_after_tnt", pt, sizeof(pt), code,
	    sizeof(code), 4, 0x1e, 0);
}

/*
 * A MODE.TSX while tracing waits for its FUP, which the end of the trace
 * cuts: libipt's fetch meets the end there and the trace ends before the
 * next block.  By construction: the mode event, the enabled event, the
 * block to the jz (the bit): 3 items, no error.
 */
ATF_TC_WITHOUT_HEAD(cut_fup_after_tsx_mode);
ATF_TC_BODY(cut_fup_after_tsx_mode, tc)
{
	static const uint8_t pt[] = {
		PSB_PLUS_OFF,
		PGE_1000,
		0x04,					/* TNT: N */
		0x99, 0x21,				/* MODE.TSX: InTX */
		0x3d,					/* FUP, cut */
	};
	/* jz +0; jz +0; ret */
	static const uint8_t code[] = { 0x74, 0x00, 0x74, 0x00, 0xc3 };

	both("cut_fup_after_tsx_mode", pt, sizeof(pt), code, sizeof(code),
	    3, 0, 0);
}

/*
 * The FUP after an MWAIT completes it; libipt's read-ahead after that
 * event takes each further FUP for an asynchronous branch and fails on
 * the seventh (-pte_nomem, its event queue), which fails the PSB+'s mode
 * event handed over before.  fpt must not give that event: it hands the
 * trace over first.  By construction: the error at 0x33, the eighth
 * FUP: 1 item.
 */
ATF_TC_WITHOUT_HEAD(async_fups_after_mwait_fup);
ATF_TC_BODY(async_fups_after_mwait_fup, tc)
{
	static const uint8_t pt[] = {
		PSB_PLUS_OFF,
		MWAIT,
		0x3d, 0x00, 0x10, 0x3d, 0x00, 0x10,	/* 8 FUPs to 0x1000 */
		0x3d, 0x00, 0x10, 0x3d, 0x00, 0x10,
		0x3d, 0x00, 0x10, 0x3d, 0x00, 0x10,
		0x3d, 0x00, 0x10, 0x3d, 0x00, 0x10,
	};
	/* ret */
	static const uint8_t code[] = { 0xc3 };

	both("async_fups_after_mwait_fup", pt, sizeof(pt), code,
	    sizeof(code), 1, 0x33, 1);
}

/*
 * A PIP after the TIP.PGE is a paging event for the next MOV CR3, but a
 * TNT comes after two PADs while the flow is at a ret: the ret's query
 * for a TIP fails (a bad query).  libipt's read-ahead had passed the
 * PADs: its error is at the TNT, 0x25 (fpt named the first PAD).  By
 * construction: the mode event, the enabled event, the paging event,
 * the error: 4 items.
 */
ATF_TC_WITHOUT_HEAD(bad_query_offset_after_pads);
ATF_TC_BODY(bad_query_offset_after_pads, tc)
{
	static const uint8_t pt[] = {
		PSB_PLUS_OFF,
		PGE_1000,
		0x02, 0x43, 0x00, 0x20, 0, 0, 0, 0,	/* PIP */
		0x00, 0x00,				/* PAD, PAD */
		0x04,					/* TNT: N */
	};
	/* ret */
	static const uint8_t code[] = { 0xc3 };

	both("bad_query_offset_after_pads", pt, sizeof(pt), code,
	    sizeof(code), 4, 0x25, 0);
}

/*
 * A MODE.TSX while tracing waits for its FUP, but a TIP with a reserved
 * IP size comes: libipt's fetch refuses it by its header (a bad query)
 * before the next block (seed 1010).  By construction: the mode event,
 * the enabled event, the block to the second jz (the bit), the error at
 * the TIP, 0x1f: 4 items.
 */
ATF_TC_WITHOUT_HEAD(bad_tip_after_tsx_mode);
ATF_TC_BODY(bad_tip_after_tsx_mode, tc)
{
	static const uint8_t pt[] = {
		PSB_PLUS_OFF,
		PGE_1000,
		0x04,					/* TNT: N */
		0x99, 0x21,				/* MODE.TSX: InTX */
		0x00,					/* PAD */
		0xad, 0, 0, 0, 0, 0, 0, 0, 0,		/* TIP, IP size 5 */
	};
	/* jz +0; jz +0; ret */
	static const uint8_t code[] = { 0x74, 0x00, 0x74, 0x00, 0xc3 };

	both("bad_tip_after_tsx_mode", pt, sizeof(pt), code, sizeof(code),
	    4, 0x1f, 0);
}

/*
 * c5 xx 84 rel32 is VEX-encoded, an ordinary instruction to libipt's
 * length decoder (it classifies nothing VEX or EVEX encoded); Zydis
 * makes it Knights Corner's JKZD, a conditional branch, so fpt took a
 * TNT bit for it and ended the block there (seed 1010).  By
 * construction: the mode event, the enabled event, the block over jkzd
 * and jz (the bit), the block of the ret, the disabled event: 5 items.
 */
ATF_TC_WITHOUT_HEAD(vex_jkzd_no_branch);
ATF_TC_BODY(vex_jkzd_no_branch, tc)
{
	static const uint8_t pt[] = {
		PSB_PLUS_OFF,
		PGE_1000,
		0x04,					/* TNT: N */
		0x01,					/* TIP.PGD */
	};
	/* jkzd k5, +0 (VEX); jz +0; ret */
	static const uint8_t code[] = {
		0xc5, 0xe8, 0x84, 0, 0, 0, 0, 0x74, 0x00, 0xc3
	};

	both("vex_jkzd_no_branch", pt, sizeof(pt), code, sizeof(code), 5,
	    0, 0);
}

/*
 * The trace ends in an escape byte (0x02) alone after the TNT whose bit
 * a ret takes with nothing to return to: libipt's read-ahead after the
 * TNT fails to fetch that header and stays before it, so its error (an
 * empty return stack) is at the byte, 0x1d (fpt read on to the end,
 * 0x1e).  By construction: the mode event, the enabled event, the block
 * to the jz (N), the block of the ret (T), the error at 0x1d: 5 items.
 */
ATF_TC_WITHOUT_HEAD(cut_escape_after_tnt_ret);
ATF_TC_BODY(cut_escape_after_tnt_ret, tc)
{
	static const uint8_t pt[] = {
		PSB_PLUS_OFF,
		PGE_1000,
		0x0a,					/* TNT: N T */
		0x00,					/* PAD */
		0x02,					/* escape, cut */
	};
	/* jz +0; ret */
	static const uint8_t code[] = { 0x74, 0x00, 0xc3 };

	both("cut_escape_after_tnt_ret", pt, sizeof(pt), code, sizeof(code),
	    5, 0x1d, 0);
}

/*
 * TIP.PGE to 0x2000, where nothing is mapped, then TIP.PGD, then a PSB
 * the end of the trace cuts before its PSBEND: libipt's fetch of the
 * disable reads ahead into that PSB+, meets the end there and goes to
 * it, so the error of the flow that cannot reach the disable (no code
 * mapped) is at the end, 0x2c (fpt named the PSB, 0x1c).  By
 * construction: the mode event, the enabled event, the error at 0x2c:
 * 3 items.
 */
ATF_TC_WITHOUT_HEAD(cut_psb_plus_after_pgd);
ATF_TC_BODY(cut_psb_plus_after_pgd, tc)
{
	static const uint8_t pt[] = {
		PSB_PLUS_OFF,
		0x71, 0x00, 0x20, 0, 0, 0, 0,		/* TIP.PGE 0x2000 */
		0x01,					/* TIP.PGD */
		PSB_BYTES,				/* cut PSB+ */
	};
	/* ret */
	static const uint8_t code[] = { 0xc3 };

	both("cut_psb_plus_after_pgd", pt, sizeof(pt), code, sizeof(code),
	    3, 0x2c, 0);
}

/*
 * TIP.PGE to 0x2000, where nothing is mapped, then an escape byte (0x02)
 * alone at the end: libipt's fetch fails on it, so no packet is left
 * (pts_eos) and its flow ends without a block, where fpt, its position
 * kept before the byte, tried the flow and failed without code (seed
 * 2101).  By construction: the mode event and the enabled event, no
 * error: 2 items.
 */
ATF_TC_WITHOUT_HEAD(cut_escape_after_pge);
ATF_TC_BODY(cut_escape_after_pge, tc)
{
	static const uint8_t pt[] = {
		PSB_PLUS_OFF,
		0x71, 0x00, 0x20, 0, 0, 0, 0,		/* TIP.PGE 0x2000 */
		0x02,					/* escape, cut */
	};
	/* ret */
	static const uint8_t code[] = { 0xc3 };

	both("cut_escape_after_pge", pt, sizeof(pt), code, sizeof(code), 2,
	    0, 0);
}

/*
 * BDM70 (a Kaby Lake's erratum): while tracing is off, libipt's PSB+
 * reader looks past a FUP for a TIP.PGE, and a bad packet there fails
 * the PSB+, its position back at the PSB.  Tracing is off to the
 * read-ahead after a TIP.PGD: here the fetch of the disable that
 * follows the enabled event (seed 2103), and the fetch before the block
 * after the jz.  fpt looked on with tracing on and named the bad packet
 * past the PSBEND; it must hand the trace over, as it does for BDM70's
 * bad packets.  By construction, libipt: the mode event, then the error
 * at the PSB, 0x1c, the enabled event lost with it: 2 items; after the
 * jz: the mode event, the enabled event, the block to the jz, the error
 * at the PSB, 0x1d: 4 items.
 */
ATF_TC_WITHOUT_HEAD(bdm70_bad_after_pgd);
ATF_TC_BODY(bdm70_bad_after_pgd, tc)
{
	static const uint8_t pt[] = {
		PSB_PLUS_OFF,
		PGE_1000,
		0x01,					/* TIP.PGD */
		PSB_BYTES,
		0x3d, 0x00, 0x10,			/* FUP 0x1000 */
		0x02, 0x23,				/* PSBEND */
		0x02, 0x80,				/* bad opcode */
	};
	static const uint8_t pt_tnt[] = {
		PSB_PLUS_OFF,
		PGE_1000,
		0x04,					/* TNT: N */
		0x01,					/* TIP.PGD */
		PSB_BYTES,
		0x3d, 0x00, 0x10,			/* FUP 0x1000 */
		0x02, 0x23,				/* PSBEND */
		0x02, 0x80,				/* bad opcode */
	};
	/* jz +0; jmp *%rax */
	static const uint8_t code[] = { 0x74, 0x00, 0xff, 0xe0 };

	both_cpu("bdm70_bad_after_pgd", pt, sizeof(pt), code, sizeof(code),
	    2, 0x1c, 1, 1, NULL);
	both_cpu("bdm70_bad_after_tnt_pgd", pt_tnt, sizeof(pt_tnt), code,
	    sizeof(code), 4, 0x1d, 1, 1, NULL);
}

/*
 * Tracing from a PSB+ at 0x2000, where nothing is mapped, and a second
 * PSB+ with two status updates: libipt hands them over one at a time at
 * their PSBEND and its position stays there until the last, so the
 * error of the flow that cannot go to the first (no code) is at the
 * PSBEND, 0x2e (fpt named the TNT after it, 0x30; seed 2103).  By
 * construction: the first PSB+'s mode event, the error at 0x2e: 2 items.
 */
ATF_TC_WITHOUT_HEAD(error_at_psbend_of_updates);
ATF_TC_BODY(error_at_psbend_of_updates, tc)
{
	static const uint8_t pt[] = {
		PSB_BYTES,
		0x3d, 0x00, 0x20,			/* FUP 0x2000 */
		0x99, 0x01,				/* MODE 64 */
		0x02, 0x23,				/* PSBEND */
		PSB_BYTES,
		0x3d, 0x00, 0x10,			/* FUP 0x1000 */
		0x99, 0x01,				/* MODE 64 */
		0x99, 0x01,				/* MODE 64 */
		0x02, 0x23,				/* PSBEND */
		0x04,					/* TNT: N */
	};
	/* ret */
	static const uint8_t code[] = { 0xc3 };

	both("error_at_psbend_of_updates", pt, sizeof(pt), code,
	    sizeof(code), 2, 0x2e, 0);
}

/*
 * A TIP without IP for the indirect jump, then a PSB+ with a TIP in it:
 * libipt's query reads ahead after the TIP before it says there is no
 * IP, and that read fails in the PSB+ (bad context, its position back
 * at the PSB, 0x1d).  fpt gave its own error first, before the PSB
 * (0x1c; seed 2103); it must hand the trace over, as for any bad PSB+.
 * By construction, libipt: the mode event, the enabled event, the block
 * of the jmp, the error at 0x1d: 4 items.
 */
ATF_TC_WITHOUT_HEAD(bad_psb_plus_after_noip_tip);
ATF_TC_BODY(bad_psb_plus_after_noip_tip, tc)
{
	static const uint8_t pt[] = {
		PSB_PLUS_OFF,
		PGE_1000,
		0x0d,					/* TIP, no IP */
		0x00,					/* PAD */
		PSB_BYTES,
		0x2d, 0x00, 0x10,			/* TIP 0x1000 */
		0x02, 0x23,				/* PSBEND */
	};
	/* jmp *%rax */
	static const uint8_t code[] = { 0xff, 0xe0 };

	both("bad_psb_plus_after_noip_tip", pt, sizeof(pt), code,
	    sizeof(code), 4, 0x1d, 1);
}

/*
 * The jmp's TIP query meets a FUP no event waits for and then a PSB the
 * end of the trace cuts before its PSBEND: libipt's read-ahead after the
 * TNT took the FUP for an asynchronous branch and decoded the PSB+ up to
 * the end, so nothing is left for the query and the trace ends there
 * (seed 2103); fpt took the query for a bad one and gave an error.  A
 * TNT bit left over keeps the FUP from the event fetch before the jmp's
 * block.  By construction: the mode event, the enabled event, the block
 * to the jz (N), the block of the jmp, whose TIP never comes, no error:
 * 4 items.  The same with the PSB+ whole, a FUP and a TSC in it and no
 * status update: libipt's read-ahead decodes it and its PSBEND, which
 * nothing waits for, and meets the end after (a 25-minute make fuzz-fpt
 * run); fpt passed a whole PSB+ only in the read-ahead, not where the
 * FUP's end is looked for, and gave an error at the end.  By
 * construction: the same 4 items, no error.
 */
ATF_TC_WITHOUT_HEAD(fup_then_cut_psb_plus_at_tip);
ATF_TC_BODY(fup_then_cut_psb_plus_at_tip, tc)
{
	static const uint8_t pt[] = {
		PSB_PLUS_OFF,
		PGE_1000,
		0x08,					/* TNT: N N */
		0x3d, 0x00, 0x10,			/* FUP 0x1000 */
		PSB_BYTES,				/* cut PSB+ */
	};
	static const uint8_t whole[] = {
		PSB_PLUS_OFF,
		PGE_1000,
		0x08,					/* TNT: N N */
		0x3d, 0x00, 0x10,			/* FUP 0x1000 */
		PSB_BYTES,
		0x19, 1, 0, 0, 0, 0, 0, 0,		/* TSC */
		0x3d, 0x02, 0x10,			/* FUP 0x1002 */
		0x02, 0x23,				/* PSBEND */
	};
	/* jz +0; jmp *%rax */
	static const uint8_t code[] = { 0x74, 0x00, 0xff, 0xe0 };

	both("fup_then_cut_psb_plus_at_tip", pt, sizeof(pt), code,
	    sizeof(code), 4, 0, 0);
	both("fup_then_psb_plus_at_tip", whole, sizeof(whole), code,
	    sizeof(code), 4, 0, 0);
}

/*
 * The same MWAIT before the TIP.PGE, its FUP cut by the end (seed 3131):
 * libipt's fetch after the PSB+'s mode event decodes the MWAIT and the
 * TIP.PGE; the enabled event's fetch of the next decodes the FUP the
 * MWAIT waits for, which the end cuts (-pte_eos): the enabled event is
 * lost and the trace ends there.  fpt's dry run took the cut FUP for a
 * status packet and gave the enabled event.  By construction: the mode
 * event, no error: 1 item; the same with the FUP's header alone.
 */
ATF_TC_WITHOUT_HEAD(cut_fup_after_mwait_pge);
ATF_TC_BODY(cut_fup_after_mwait_pge, tc)
{
	static const uint8_t pt[] = {
		PSB_PLUS_OFF,
		MWAIT,
		PGE_1000,
		0xdd, 0, 0,				/* FUP, IP size 8, cut */
	};
	/* ret */
	static const uint8_t code[] = { 0xc3 };

	both("cut_fup_after_mwait_pge", pt, sizeof(pt), code, sizeof(code),
	    1, 0, 0);
	both("fup_header_after_mwait_pge", pt, sizeof(pt) - 2, code,
	    sizeof(code), 1, 0, 0);
}

/*
 * Two MWAITs wait for one FUP and seven FUPs follow it: libipt's fetch
 * after the mode event gives the first MWAIT's event at that FUP; the
 * next gives the second's, and its read-ahead takes each FUP after for
 * an asynchronous branch, failing on the seventh (-pte_nomem, its event
 * queue), which loses the first MWAIT's event (seed 3131).  fpt gave it:
 * it now hands the trace over before.  By construction: the mode event
 * and the error at 0x3d, the seventh FUP after the MWAITs': 2 items.
 */
ATF_TC_WITHOUT_HEAD(fups_after_fup_of_two_mwaits);
ATF_TC_BODY(fups_after_fup_of_two_mwaits, tc)
{
	static const uint8_t pt[] = {
		PSB_PLUS_OFF,
		MWAIT,
		MWAIT,
		0x3d, 0x00, 0x10,			/* FUP 0x1000, theirs */
		0x3d, 0x00, 0x10, 0x3d, 0x00, 0x10,	/* 8 FUPs to 0x1000 */
		0x3d, 0x00, 0x10, 0x3d, 0x00, 0x10,
		0x3d, 0x00, 0x10, 0x3d, 0x00, 0x10,
		0x3d, 0x00, 0x10, 0x3d, 0x00, 0x10,
	};
	/* ret */
	static const uint8_t code[] = { 0xc3 };

	both("fups_after_fup_of_two_mwaits", pt, sizeof(pt), code,
	    sizeof(code), 2, 0x3d, 1);
}

/*
 * Two MWAITs before the TIP.PGE wait for one FUP, to 0x2000, where no
 * code is: libipt's fetch after the enabled event gives the first
 * MWAIT's event at that FUP and stays there for the second
 * (pt_qry_decode_fup()); its flow from 0x1000 to 0x2000 fails past the
 * nop, and its error is at that FUP, 0x2f, where fpt's was after it.
 * By construction: the mode and enabled events, the nop's block, the
 * error: 4 items; with one MWAIT the FUP is consumed, the error after
 * it (0x28); with EXSTOPs (IP bit set) as with MWAITs; with two MODE.TSX
 * aborts after the TIP.PGE, which leave the FUP, at it too (0x1f).
 */
ATF_TC_WITHOUT_HEAD(error_at_fup_of_two_mwaits);
ATF_TC_BODY(error_at_fup_of_two_mwaits, tc)
{
	static const uint8_t pt[] = {
		PSB_PLUS_OFF,
		MWAIT,					/* 0x14 */
		MWAIT,					/* 0x1e */
		PGE_1000,				/* 0x28 */
		0x3d, 0x00, 0x20,			/* 0x2f: FUP 0x2000 */
	};
	static const uint8_t one[] = {
		PSB_PLUS_OFF,
		MWAIT,
		PGE_1000,				/* 0x1e */
		0x3d, 0x00, 0x20,			/* 0x25: FUP 0x2000 */
	};
	static const uint8_t ex[] = {
		PSB_PLUS_OFF,
		0x02, 0xe2, 0x02, 0xe2,			/* EXSTOP, EXSTOP */
		PGE_1000,				/* 0x18 */
		0x3d, 0x00, 0x20,			/* 0x1f: FUP 0x2000 */
	};
	static const uint8_t tsx[] = {
		PSB_PLUS_OFF,
		PGE_1000,				/* 0x14 */
		0x99, 0x22, 0x99, 0x22,			/* MODE.TSX abort x 2 */
		0x3d, 0x00, 0x20,			/* 0x1f: FUP 0x2000 */
	};
	/* nop */
	static const uint8_t code[] = { 0x90 };

	both("error_at_fup_of_two_tsx_aborts", tsx, sizeof(tsx), code,
	    sizeof(code), 4, 0x1f, 0);
	both("error_at_fup_of_two_mwaits", pt, sizeof(pt), code,
	    sizeof(code), 4, 0x2f, 0);
	both("error_after_fup_of_one_mwait", one, sizeof(one), code,
	    sizeof(code), 4, 0x28, 0);
	both("error_at_fup_of_two_exstops", ex, sizeof(ex), code,
	    sizeof(code), 4, 0x1f, 0);
}

/*
 * Two MWAITs wait for one FUP while tracing is off, and a bad packet
 * follows it: libipt's fetch after the PSB+'s mode event gives the first
 * MWAIT's event at the FUP; handing it over, it fetches the second,
 * which consumes the FUP and reads ahead after it: the bad packet fails
 * that fetch, and the first MWAIT's event with it (issue 29's
 * fpt-crash-817580f76033...; fpt gave it).  By construction: the mode
 * event and the error at 0x2b: 2 items; the same with the FUP's IP whole
 * (0x2b + 6), two EXSTOPs or two PTWRITEs (with IP) in place of the
 * MWAITs; three MWAITs give the first (3 items); one MWAIT is the mode
 * event's own fetch, which fails it (1 item).
 */
ATF_TC_WITHOUT_HEAD(bad_after_fup_of_two_mwaits_off);
ATF_TC_BODY(bad_after_fup_of_two_mwaits_off, tc)
{
	static const uint8_t pt[] = {
		PSB_PLUS_OFF,
		MWAIT,					/* 0x14 */
		MWAIT,					/* 0x1e */
		0x3d, 0x00, 0x10,			/* 0x28: FUP 0x1000 */
		0x02, 0x00,				/* 0x2b: bad opcode */
	};
	static const uint8_t whole[] = {
		PSB_PLUS_OFF,
		MWAIT,
		MWAIT,
		0xdd, 0x00, 0x10, 0, 0, 0, 0, 0, 0,	/* FUP 0x1000, 8 bytes */
		0x02, 0x00,				/* 0x31 */
	};
	static const uint8_t ex[] = {
		PSB_PLUS_OFF,
		0x02, 0xe2, 0x02, 0xe2,			/* EXSTOP, EXSTOP */
		0x3d, 0x00, 0x10,			/* 0x18: FUP 0x1000 */
		0x02, 0x00,				/* 0x1b */
	};
	static const uint8_t ptw[] = {
		PSB_PLUS_OFF,
		0x02, 0x92, 1, 2, 3, 4,			/* PTWRITE, IP, 4 bytes */
		0x02, 0x92, 1, 2, 3, 4,
		0x3d, 0x00, 0x10,			/* 0x20: FUP 0x1000 */
		0x02, 0x00,				/* 0x23 */
	};
	static const uint8_t three[] = {
		PSB_PLUS_OFF,
		MWAIT,
		MWAIT,
		MWAIT,
		0x3d, 0x00, 0x10,			/* 0x32: FUP 0x1000 */
		0x02, 0x00,				/* 0x35 */
	};
	static const uint8_t one[] = {
		PSB_PLUS_OFF,
		MWAIT,
		0x3d, 0x00, 0x10,			/* 0x1e: FUP 0x1000 */
		0x02, 0x00,				/* 0x21 */
	};
	/* ret */
	static const uint8_t code[] = { 0xc3 };

	both("bad_after_fup_of_two_mwaits_off", pt, sizeof(pt), code,
	    sizeof(code), 2, 0x2b, 0);
	both("bad_after_whole_fup_of_two_mwaits_off", whole, sizeof(whole),
	    code, sizeof(code), 2, 0x31, 0);
	both("bad_after_fup_of_two_exstops_off", ex, sizeof(ex), code,
	    sizeof(code), 2, 0x1b, 0);
	both("bad_after_fup_of_two_ptwrites_off", ptw, sizeof(ptw), code,
	    sizeof(code), 2, 0x23, 0);
	both("bad_after_fup_of_three_mwaits_off", three, sizeof(three),
	    code, sizeof(code), 3, 0x35, 0);
	both("bad_after_fup_of_one_mwait_off", one, sizeof(one), code,
	    sizeof(code), 1, 0x21, 0);
}

/*
 * The same while tracing: the first MWAIT's event happens when the flow
 * reaches the FUP's IP, and the fetch of the second as it is handed over
 * fails it.  By construction: the mode and enabled events and the error
 * at 0x32: 3 items; with the FUP at the nop's end, the nop's block
 * before the error: 4 items; three MWAITs give the first (4 items); one
 * MWAIT is the enabled event's own fetch, which fails it: 2 items.  Two
 * MODE.TSX aborts leave the FUP to the read-ahead, which takes it for an
 * asynchronous branch's, and fail the same (3 items, the error at 0x22),
 * and so do an abort and a commit, which consumes the FUP.
 */
ATF_TC_WITHOUT_HEAD(bad_after_fup_of_two_mwaits_on);
ATF_TC_BODY(bad_after_fup_of_two_mwaits_on, tc)
{
	static const uint8_t pt[] = {
		PSB_PLUS_OFF,
		PGE_1000,				/* 0x14 */
		MWAIT,					/* 0x1b */
		MWAIT,					/* 0x25 */
		0x3d, 0x00, 0x10,			/* 0x2f: FUP 0x1000 */
		0x02, 0x00,				/* 0x32: bad opcode */
	};
	static const uint8_t past[] = {
		PSB_PLUS_OFF,
		PGE_1000,
		MWAIT,
		MWAIT,
		0x3d, 0x01, 0x10,			/* FUP 0x1001 */
		0x02, 0x00,				/* 0x32 */
	};
	static const uint8_t one[] = {
		PSB_PLUS_OFF,
		PGE_1000,
		MWAIT,					/* 0x1b */
		0x3d, 0x00, 0x10,			/* 0x25: FUP 0x1000 */
		0x02, 0x00,				/* 0x28 */
	};
	static const uint8_t tsx[] = {
		PSB_PLUS_OFF,
		PGE_1000,
		0x99, 0x22, 0x99, 0x22,			/* MODE.TSX abort x 2 */
		0x3d, 0x00, 0x10,			/* 0x1f: FUP 0x1000 */
		0x02, 0x00,				/* 0x22 */
	};
	/* nop; ret */
	static const uint8_t code[] = { 0x90, 0xc3 };
	static const uint8_t three[] = {
		PSB_PLUS_OFF,
		PGE_1000,
		MWAIT,
		MWAIT,
		MWAIT,
		0x3d, 0x00, 0x10,			/* 0x39: FUP 0x1000 */
		0x02, 0x00,				/* 0x3c */
	};
	uint8_t mixed[sizeof(tsx)];

	both("bad_after_fup_of_two_mwaits_on", pt, sizeof(pt), code,
	    sizeof(code), 3, 0x32, 0);
	both("bad_after_fup_of_two_mwaits_past_nop", past, sizeof(past),
	    code, sizeof(code), 4, 0x32, 0);
	both("bad_after_fup_of_one_mwait_on", one, sizeof(one), code,
	    sizeof(code), 2, 0x28, 0);
	both("bad_after_fup_of_three_mwaits_on", three, sizeof(three), code,
	    sizeof(code), 4, 0x3c, 0);
	both("bad_after_fup_of_two_tsx_aborts", tsx, sizeof(tsx), code,
	    sizeof(code), 3, 0x22, 0);
	/* The second one commits (InTX), consuming the FUP. */
	memcpy(mixed, tsx, sizeof(tsx));
	mixed[0x1e] = 0x21;
	both("bad_after_fup_of_tsx_abort_and_commit", mixed, sizeof(mixed),
	    code, sizeof(code), 3, 0x22, 0);
}

/*
 * An MWAIT, then a MODE.exec and its TIP, after the TIP.PGE: libipt's
 * fetch after the enabled event queues the MWAIT for a FUP and the mode
 * for the TIP, which it decodes, giving the mode's event at the TIP's IP
 * without consuming it (the MWAIT still waits).  Its flow to that IP
 * with trace then meets the TIP at the jz's query: a bad query.  fpt
 * took the TIP for one before the MWAIT's FUP, a bad query at once,
 * without the block (issue 29's fpt-crash-9367af5a55c0...).  By
 * construction: the mode and enabled events, the jz's block, the error
 * at the TIP, 0x27: 4 items; the same with two EXSTOPs (IP bit set) in
 * place of the MWAIT (the TIP at 0x21), and with the MWAIT before the
 * TIP.PGE (another fetch's).
 */
ATF_TC_WITHOUT_HEAD(mode_tip_after_mwait);
ATF_TC_BODY(mode_tip_after_mwait, tc)
{
	static const uint8_t pt[] = {
		PSB_PLUS_OFF,
		PGE_1000,				/* 0x14 */
		MWAIT,					/* 0x1b */
		0x99, 0x01,				/* 0x25: MODE.exec 64 */
		0x2d, 0x00, 0x20,			/* 0x27: TIP 0x2000 */
		0x3d, 0x00, 0x20,			/* FUP 0x2000 */
	};
	static const uint8_t ex[] = {
		PSB_PLUS_OFF,
		PGE_1000,
		0x02, 0xe2, 0x02, 0xe2,			/* EXSTOP, EXSTOP */
		0x99, 0x01,
		0x2d, 0x00, 0x20,			/* 0x21: TIP 0x2000 */
		0x3d, 0x00, 0x20,
	};
	static const uint8_t before[] = {
		PSB_PLUS_OFF,
		MWAIT,					/* 0x14 */
		PGE_1000,				/* 0x1e */
		0x99, 0x01,				/* 0x25 */
		0x2d, 0x00, 0x20,			/* 0x27: TIP 0x2000 */
		0x3d, 0x00, 0x20,
	};
	/* jz +0 */
	static const uint8_t code[] = { 0x74, 0x00 };

	both("mode_tip_after_mwait", pt, sizeof(pt), code, sizeof(code), 4,
	    0x27, 0);
	both("mode_tip_after_exstops", ex, sizeof(ex), code, sizeof(code), 4,
	    0x21, 0);
	both("mode_tip_after_mwait_before_pge", before, sizeof(before), code,
	    sizeof(code), 4, 0x27, 0);
}

/*
 * A PSB+ with seven status updates after the sync's: libipt queues them
 * for its PSBEND, six at most (evb_psbend), and fails that PSB+ on the
 * seventh; its fetch of it, as the sync's mode event is handed over,
 * fails the sync, and so does the next sync at it: no item (seed 4444).
 * fpt gave the mode event, its dry run passing the PSB+ its reader then
 * handed over (four at most): it hands the trace over before now.  By
 * construction: no item; with four updates, the five events whole.
 */
ATF_TC_WITHOUT_HEAD(long_psb_plus_after_sync);
ATF_TC_BODY(long_psb_plus_after_sync, tc)
{
	static const uint8_t pt[] = {
		PSB_PLUS_OFF,
		PSB_BYTES,
		0x99, 0x20, 0x99, 0x20, 0x99, 0x20,	/* MODE.TSX x 7 */
		0x99, 0x20, 0x99, 0x20, 0x99, 0x20,
		0x99, 0x20,
		0x02, 0x23,				/* PSBEND */
	};
	static const uint8_t four[] = {
		PSB_PLUS_OFF,
		PSB_BYTES,
		0x99, 0x20, 0x99, 0x20, 0x99, 0x20,	/* MODE.TSX x 4 */
		0x99, 0x20,
		0x02, 0x23,
	};
	/* ret */
	static const uint8_t code[] = { 0xc3 };

	both("long_psb_plus_after_sync", pt, sizeof(pt), code, sizeof(code),
	    0, 0, 1);
	both("four_updates_after_sync", four, sizeof(four), code,
	    sizeof(code), 5, 0, 0);
}

/*
 * A PIP while tracing with a CR3 other than libipt's asid's binds to the
 * syscall at 0x1005: as the paging event happens (pt_blk_process_paging())
 * libipt unmaps its section and, without an image section cache, frees
 * that section's block cache, so the next pass from 0x1000 fills a new
 * one and stops again at the backward jmp at 0x1003.  fpt kept its cache
 * and went on through that jmp.  The same where the bad packet after the
 * TIP.PGD loses the paging event (libipt processes it before the fetch
 * that fails) and a resync follows, which keeps the section mapped
 * (seeds 4242, 4444).  By construction, the first: the mode and enabled
 * events, the blocks 0x1000-0x1003, 0x1002, 0x1005, the paging event,
 * the blocks 0x1007, 0x1000-0x1003 (2 instructions again), 0x1002, 0x1009
 * and the disabled event: 11 items; the second: the 2 events, the 3
 * blocks up to 0x1005, the error at 0x2d, the 2 events, the blocks
 * 0x1000-0x1003 (2 again), 0x1002, 0x1009 and the disabled event: 12.
 * A PIP of the CR3 the PSB+ gave changes nothing: the second pass from
 * 0x1000 follows the cache to the ret, one block; with the PSB+'s paging
 * event first, 11 items.  A VMCS of a new base in the PIP's place
 * (pt_blk_process_vmcs()) does what the first PIP does: 11 items.
 *
 * The PIP lost in a PSB+ read while tracing: its status updates (the PIP,
 * then MODE.exec) bound to the FUP's IP where the flow already is, a bad
 * packet after its PSBEND.  libipt processes the PIP as it hands it over
 * and the fetch of the MODE.exec fails that hand-over; fpt lost the PIP
 * without its effect and, after the resync, followed its cache through
 * the jmp at 0x1003.  By construction: the mode and enabled events, the
 * blocks 0x1000-0x1003 and 0x1002, the error at 0x3d; after the resync
 * the mode and enabled events, the blocks 0x1000-0x1003 (2 instructions
 * again), 0x1002, 0x1009 and the disabled event: 11 items.
 */
ATF_TC_WITHOUT_HEAD(pip_new_cr3_flushes_cache);
ATF_TC_BODY(pip_new_cr3_flushes_cache, tc)
{
	static const uint8_t pt[] = {
		PSB_PLUS_OFF,
		PGE_1000,				/* 0x14 */
		0x2d, 0x05, 0x10,			/* 0x1b: TIP 0x1005 */
		0x02, 0x43, 0x00, 0x10, 0, 0, 0, 0,	/* PIP 0x10000 */
		0x2d, 0x07, 0x10,			/* TIP 0x1007 */
		0x2d, 0x09, 0x10,			/* TIP 0x1009 */
		0x01,					/* TIP.PGD, no IP */
	};
	static const uint8_t resync[] = {
		PSB_PLUS_OFF,
		PGE_1000,				/* 0x14 */
		0x2d, 0x05, 0x10,			/* 0x1b: TIP 0x1005 */
		0x02, 0x43, 0x00, 0x10, 0, 0, 0, 0,	/* 0x1e: PIP */
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00,	/* 0x26: PAD */
		0x01,					/* 0x2c: TIP.PGD */
		0x02, 0x82, 0x02, 0x82, 0x00,		/* 0x2d: cut PSB */
		PSB_PLUS_OFF,				/* 0x32 */
		PGE_1000,
		0x2d, 0x09, 0x10,			/* TIP 0x1009 */
		0x01,					/* TIP.PGD */
	};
	static const uint8_t same[] = {
		PSB_BYTES,
		0x99, 0x01,				/* 0x10: MODE.exec */
		0x02, 0x43, 0x00, 0x10, 0, 0, 0, 0,	/* 0x12: PIP 0x10000 */
		0x02, 0x23,				/* 0x1a: PSBEND */
		PGE_1000,				/* 0x1c */
		0x2d, 0x05, 0x10,			/* 0x23: TIP 0x1005 */
		0x02, 0x43, 0x00, 0x10, 0, 0, 0, 0,	/* PIP 0x10000 */
		0x2d, 0x07, 0x10,			/* TIP 0x1007 */
		0x2d, 0x09, 0x10,			/* TIP 0x1009 */
		0x01,					/* TIP.PGD, no IP */
	};
	static const uint8_t vmcs[] = {
		PSB_PLUS_OFF,
		PGE_1000,				/* 0x14 */
		0x2d, 0x05, 0x10,			/* 0x1b: TIP 0x1005 */
		0x02, 0xc8, 0x00, 0x10, 0, 0, 0,	/* VMCS 0x10000000 */
		0x2d, 0x07, 0x10,			/* TIP 0x1007 */
		0x2d, 0x09, 0x10,			/* TIP 0x1009 */
		0x01,					/* TIP.PGD, no IP */
	};
	static const uint8_t on[] = {
		PSB_PLUS_OFF,
		PGE_1000,				/* 0x14 */
		0x2d, 0x05, 0x10,			/* 0x1b: TIP 0x1005 */
		PSB_BYTES,				/* 0x1e */
		0x3d, 0x05, 0x10,			/* 0x2e: FUP 0x1005 */
		0x02, 0x43, 0x00, 0x10, 0, 0, 0, 0,	/* 0x31: PIP 0x10000 */
		0x99, 0x01,				/* 0x39: MODE 64 */
		0x02, 0x23,				/* 0x3b: PSBEND */
		0x02, 0xff,				/* 0x3d: bad opcode */
		PSB_PLUS_OFF,				/* 0x3f */
		PGE_1000,
		0x2d, 0x09, 0x10,			/* TIP 0x1009 */
		0x01,					/* TIP.PGD */
	};
	static const uint8_t code[] = {
		0xeb, 0x01,			/* 0x1000: jmp 0x1003 */
		0xc3,				/* 0x1002: ret */
		0xeb, 0xfd,			/* 0x1003: jmp 0x1002 */
		0x0f, 0x05,			/* 0x1005: syscall */
		0xeb, 0xf7,			/* 0x1007: jmp 0x1000 */
		0xc3,				/* 0x1009: ret */
	};
	static const struct want_block on_b[] = {
		{ 0x1000, 0x1003, 2 },
		{ 0x1002, 0x1002, 1 },
		{ 0x1000, 0x1003, 2 },
		{ 0x1002, 0x1002, 1 },
		{ 0x1009, 0x1009, 1 },
	};

	both("pip_new_cr3_flushes_cache", pt, sizeof(pt), code,
	    sizeof(code), 11, 0, 0);
	both("pip_lost_then_resync", resync, sizeof(resync), code,
	    sizeof(code), 12, 0, 0);
	both("pip_same_cr3_keeps_cache", same, sizeof(same), code,
	    sizeof(code), 11, 0, 0);
	both("vmcs_new_base_flushes_cache", vmcs, sizeof(vmcs), code,
	    sizeof(code), 11, 0, 0);
	both_blocks("pip_lost_in_psb_plus_on", on, sizeof(on), code,
	    sizeof(code), 11, 0, on_b, 5);
}

/*
 * A MODE.TSX while tracing waits for a FUP; a TIP.PGD without IP at the
 * ret comes first, and libipt's guess of where tracing resumes is 0 (not
 * a call: pt_blk_set_disable_resume_ip()).  The FUP after it gives the
 * TSX event an IP, and libipt's block decoder goes there from 0 without
 * trace although tracing is off (pt_blk_proceed_event() does not ask, as
 * it does for MWAIT): no code at 0, its nomap error at the end (the
 * input the fuzzer found).  fpt gave the TSX event.  Neither the MODE
 * byte's reserved bits nor the FUP's IP in the code change that.  By
 * construction: the mode and enabled events, the block of the ret, the
 * disabled event, the error at 0x21: 5 items.  After an indirect call
 * tracing resumes after it, at 0x1002: a FUP there gives the TSX event
 * (5 items, no error); a FUP elsewhere is a walk through the code, which
 * fpt hands over.
 */
ATF_TC_WITHOUT_HEAD(tsx_fup_after_pgd);
ATF_TC_BODY(tsx_fup_after_pgd, tc)
{
	static const uint8_t pt[] = {
		PSB_PLUS_OFF,
		PGE_1000,				/* 0x14 */
		0x99, 0x21,				/* 0x1b: MODE.TSX */
		0x01,					/* 0x1d: TIP.PGD */
		0x3d, 0x00, 0x20,			/* 0x1e: FUP 0x2000 */
	};
	static const uint8_t rsvd[] = {
		PSB_PLUS_OFF,
		PGE_1000,
		0x99, 0x2d,				/* reserved bits */
		0x01,
		0x3d, 0x00, 0x20,
	};
	static const uint8_t incode[] = {
		PSB_PLUS_OFF,
		PGE_1000,
		0x99, 0x21,
		0x01,
		0x3d, 0x00, 0x10,			/* FUP 0x1000 */
	};
	static const uint8_t after_call[] = {
		PSB_PLUS_OFF,
		PGE_1000,
		0x99, 0x21,
		0x01,
		0x3d, 0x02, 0x10,			/* FUP 0x1002 */
	};
	/* ret */
	static const uint8_t code[] = { 0xc3 };
	/* call *%rax; ret */
	static const uint8_t call[] = { 0xff, 0xd0, 0xc3 };

	both("tsx_fup_after_pgd", pt, sizeof(pt), code, sizeof(code), 5,
	    0x21, 0);
	both("tsx_rsvd_fup_after_pgd", rsvd, sizeof(rsvd), code,
	    sizeof(code), 5, 0x21, 0);
	both("tsx_fup_in_code_after_pgd", incode, sizeof(incode), code,
	    sizeof(code), 5, 0x21, 0);
	both("tsx_fup_at_resume_after_pgd", after_call, sizeof(after_call),
	    call, sizeof(call), 5, 0, 0);
	both("tsx_fup_past_resume_after_pgd", pt, sizeof(pt), call,
	    sizeof(call), 6, 0, 1);
}

/*
 * A MODE.exec waits for its TIP (libipt's evb_tip), and libipt's block
 * decoder fetches the mode's event as soon as that TIP is next; when the
 * TIP goes to the flow's IP, or has no IP, the event is there
 * (pt_blk_proceed_to_exec_mode()) and is handed over before any code is
 * decoded, the TIP left for the branch that takes it.  fpt went to the
 * code first: with none at the IP it gave the error libipt gives after
 * the event, with some it handed the trace over.  By construction: the
 * sync's status update, the mode event, then no code at 0x2000: the
 * error at the TIP, 0x19 (3 items); the same for a TIP without IP; at
 * 0x1000 (a ret): the two events and the ret's block, then no trace is
 * left (3 items).
 */
ATF_TC_WITHOUT_HEAD(mode_tip_to_here);
ATF_TC_BODY(mode_tip_to_here, tc)
{
	static const uint8_t pt[] = {
		PSB_BYTES,
		0x3d, 0x00, 0x20,			/* FUP 0x2000 */
		0x99, 0x01,				/* MODE 64 */
		0x02, 0x23,				/* PSBEND */
		0x99, 0x01,				/* MODE 64 */
		0x2d, 0x00, 0x20,			/* TIP 0x2000 */
	};
	static const uint8_t noip[] = {
		PSB_BYTES,
		0x3d, 0x00, 0x20,			/* FUP 0x2000 */
		0x99, 0x01,				/* MODE 64 */
		0x02, 0x23,				/* PSBEND */
		0x99, 0x01,				/* MODE 64 */
		0x0d,					/* TIP, no IP */
	};
	static const uint8_t code_pt[] = {
		PSB_BYTES,
		0x3d, 0x00, 0x10,			/* FUP 0x1000 */
		0x99, 0x01,				/* MODE 64 */
		0x02, 0x23,				/* PSBEND */
		0x99, 0x01,				/* MODE 64 */
		0x2d, 0x00, 0x10,			/* TIP 0x1000 */
	};
	/* ret */
	static const uint8_t code[] = { 0xc3 };

	both("mode_tip_to_here", pt, sizeof(pt), code, sizeof(code), 3,
	    0x19, 0);
	both("mode_tip_without_ip", noip, sizeof(noip), code, sizeof(code),
	    3, 0x19, 0);
	both("mode_tip_to_here_code", code_pt, sizeof(code_pt), code,
	    sizeof(code), 3, 0, 0);
}

/*
 * A MODE.exec waits for its TIP over a PSB+ with status updates (seed
 * 5151): libipt's event queue keeps it for the TIP (evb_tip) while the
 * PSB+'s updates go out at their PSBEND, and gives it only when that TIP
 * comes.  fpt gave it as soon as the flow reached the updates' IP.  By
 * construction: the sync's update and the PSB+'s, then no TIP: 2 items;
 * with a TIP to the flow's IP, the mode event there and the ret's block:
 * 4; with a bad TIP (IP size 7), libipt's fetch of the mode event after
 * the PSB+'s update fails it: the sync's update and the error at 0x30.
 */
ATF_TC_WITHOUT_HEAD(mode_waits_over_psb_plus);
ATF_TC_BODY(mode_waits_over_psb_plus, tc)
{
	static const uint8_t pt[] = { MODE_PSB_MODE };
	static const uint8_t tip[] = {
		MODE_PSB_MODE,
		0x2d, 0x00, 0x10,			/* TIP 0x1000 */
	};
	static const uint8_t bad[] = {
		MODE_PSB_MODE,
		0xed, 0, 0, 0, 0, 0, 0, 0, 0,		/* TIP, IP size 7 */
	};
	/* ret */
	static const uint8_t code[] = { 0xc3 };

	both("mode_waits_over_psb_plus", pt, sizeof(pt), code, sizeof(code),
	    2, 0, 0);
	both("mode_over_psb_plus_tip", tip, sizeof(tip), code, sizeof(code),
	    4, 0, 0);
	both("mode_over_psb_plus_bad_tip", bad, sizeof(bad), code,
	    sizeof(code), 2, 0x30, 0);
}

/*
 * XEND (0f 01 d5) and RSM (0f aa) are no branches to libipt's length
 * decoder (ptic_other), while Zydis's categories make XEND a conditional
 * branch and RSM a return (seed 6161: an XEND in glibc's lock elision
 * took a TNT bit).  By construction: the mode event, the enabled event,
 * the block through the jz that takes the one bit (3 instructions), and
 * the ret has no trace: 3 items; each alone before the jz too.
 */
ATF_TC_WITHOUT_HEAD(xend_rsm_no_branch);
ATF_TC_BODY(xend_rsm_no_branch, tc)
{
	static const uint8_t pt[] = {
		PSB_PLUS_OFF,
		PGE_1000,
		0x06,					/* TNT: T */
	};
	/* xend; rsm; jz +0; ret */
	static const uint8_t both_code[] = {
		0x0f, 0x01, 0xd5, 0x0f, 0xaa, 0x74, 0x00, 0xc3,
	};
	/* xend; jz +0; ret */
	static const uint8_t xend[] = { 0x0f, 0x01, 0xd5, 0x74, 0x00, 0xc3 };
	/* rsm; jz +0; ret */
	static const uint8_t rsm[] = { 0x0f, 0xaa, 0x74, 0x00, 0xc3 };

	both("xend_rsm_no_branch", pt, sizeof(pt), both_code,
	    sizeof(both_code), 3, 0, 0);
	both("xend_no_branch", pt, sizeof(pt), xend, sizeof(xend), 3, 0, 0);
	both("rsm_no_branch", pt, sizeof(pt), rsm, sizeof(rsm), 3, 0, 0);
}

/*
 * A MODE.exec after a TIP waits for the next TIP, and then a TNT the end
 * of the trace cuts (seed 6262): libipt's fetch of the mode's event stops
 * at the TNT by its header alone (pt_df_fetch() does not read on), which
 * is its bad query there; fpt's fetch took the cut TNT for the end and
 * the flow went on.  The same for the events an MWAIT begins, before a
 * cut TNT or TIP.  By construction: the mode event, the enabled event,
 * the jmp's block, the error at the cut packet, 0x20 after the MODE.exec
 * and 0x28 after the MWAIT: 4 items.
 */
ATF_TC_WITHOUT_HEAD(cut_tnt_after_mode);
ATF_TC_BODY(cut_tnt_after_mode, tc)
{
	static const uint8_t mode[] = {
		PSB_PLUS_OFF,
		PGE_1000,
		0x2d, 0x00, 0x10,			/* TIP 0x1000 */
		0x99, 0x01,				/* MODE 64 */
		0x02, 0xa3, 0x00, 0x00,			/* TNT-64, cut */
	};
	static const uint8_t mwait[] = {
		PSB_PLUS_OFF,
		PGE_1000,
		0x2d, 0x00, 0x10,			/* TIP 0x1000 */
		MWAIT,
		0x02, 0xa3, 0x00, 0x00,			/* TNT-64, cut */
	};
	static const uint8_t tip[] = {
		PSB_PLUS_OFF,
		PGE_1000,
		0x2d, 0x00, 0x10,			/* TIP 0x1000 */
		MWAIT,
		0x4d, 0x00, 0x10,			/* TIP 32 bits, cut */
	};
	/* jmp *%rax */
	static const uint8_t code[] = { 0xff, 0xe0 };

	both("cut_tnt_after_mode", mode, sizeof(mode), code, sizeof(code),
	    4, 0x20, 0);
	both("cut_tnt_after_mwait", mwait, sizeof(mwait), code, sizeof(code),
	    4, 0x28, 0);
	both("cut_tip_after_mwait", tip, sizeof(tip), code, sizeof(code),
	    4, 0x28, 0);
}

/*
 * MODE.TSX while tracing waits for a FUP, and libipt's queue of such
 * events holds six: the fetch that meets a seventh fails (-pte_nomem),
 * losing the enabled event handed over before it (seed 6363).  fpt's
 * dry run of that fetch counted none and took the end of the trace for
 * where it fails; its reader takes four.  By construction: seven, the
 * mode event and the error at the seventh, 0x27, fpt handing the trace
 * over after the mode event; four, the fetch meets the end, which loses
 * the enabled event: the mode event alone, whole.
 */
ATF_TC_WITHOUT_HEAD(tsx_modes_past_queue);
ATF_TC_BODY(tsx_modes_past_queue, tc)
{
	static const uint8_t seven[] = {
		PSB_PLUS_OFF,
		PGE_1000,
		0x99, 0x20, 0x99, 0x20, 0x99, 0x20,	/* MODE.TSX x 7 */
		0x99, 0x20, 0x99, 0x20, 0x99, 0x20,
		0x99, 0x20,
	};
	static const uint8_t four[] = {
		PSB_PLUS_OFF,
		PGE_1000,
		0x99, 0x20, 0x99, 0x20, 0x99, 0x20,	/* MODE.TSX x 4 */
		0x99, 0x20,
	};
	/* ret */
	static const uint8_t code[] = { 0xc3 };

	both("tsx_modes_past_queue", seven, sizeof(seven), code,
	    sizeof(code), 2, 0x27, 1);
	both("four_tsx_modes", four, sizeof(four), code, sizeof(code), 1, 0,
	    0);
}

/*
 * A PSB+ read while tracing, with two or more status updates, then a bad
 * packet (seed 6464): libipt hands the updates over at the PSBEND one at
 * a time, each as it fetches the next, and the fetch of the last reads
 * on past the PSBEND and fails there, which loses the one before too:
 * the first n - 2 go out, then the error.  fpt lost the last alone.  By
 * construction, after the sync's mode event: with three updates (two
 * MODE.TSX, MODE.exec) the first and the error at 0x32, 3 items; with
 * two, the error at 0x30, 2 items; with four, two and the error at 0x34,
 * 4 items.  With a CBR first, which fpt gives at once, it hands the
 * trace over (2 items from libipt, the error at 0x32).
 */
ATF_TC_WITHOUT_HEAD(bad_after_psb_updates_on);
ATF_TC_BODY(bad_after_psb_updates_on, tc)
{
	static const uint8_t three[] = {
		SYNC_ON_1000,				/* ..., FUP 0x1000 */
		0x99, 0x20, 0x99, 0x20,			/* MODE.TSX x 2 */
		0x99, 0x01,				/* MODE 64 */
		0x02, 0x23,				/* PSBEND */
		0x02, 0xff,				/* bad opcode */
	};
	static const uint8_t two[] = {
		SYNC_ON_1000,
		0x99, 0x20,				/* MODE.TSX */
		0x99, 0x01,				/* MODE 64 */
		0x02, 0x23,				/* PSBEND */
		0x02, 0xff,				/* bad opcode */
	};
	static const uint8_t four[] = {
		SYNC_ON_1000,
		0x99, 0x20, 0x99, 0x20, 0x99, 0x20,	/* MODE.TSX x 3 */
		0x99, 0x01,				/* MODE 64 */
		0x02, 0x23,				/* PSBEND */
		0x02, 0xff,				/* bad opcode */
	};
	static const uint8_t cbr[] = {
		SYNC_ON_1000,
		0x02, 0x03, 0x10, 0x00,			/* CBR */
		0x99, 0x01,				/* MODE 64 */
		0x02, 0x23,				/* PSBEND */
		0x02, 0xff,				/* bad opcode */
	};
	/* ret */
	static const uint8_t code[] = { 0xc3 };

	both("bad_after_three_psb_updates", three, sizeof(three), code,
	    sizeof(code), 3, 0x32, 0);
	both("bad_after_two_psb_updates", two, sizeof(two), code,
	    sizeof(code), 2, 0x30, 0);
	both("bad_after_four_psb_updates", four, sizeof(four), code,
	    sizeof(code), 4, 0x34, 0);
	both("bad_after_psb_cbr_update", cbr, sizeof(cbr), code,
	    sizeof(code), 2, 0x32, 1);
}

/*
 * An MWAIT before the TIP.PGE waits for the next FUP, which the end of
 * the trace cuts after a TNT (seed 6666): a TNT bit left keeps libipt
 * from fetching the events first, and the jmp's TIP query meets that FUP
 * as an event by its header (pt_qry_will_event(), evb_fup): a bad query.
 * fpt's query took the cut FUP for the end.  By construction: the mode
 * event, the enabled event, the jz's block (a bit), the jmp's, the error
 * at the FUP, 0x26: 5 items.
 */
ATF_TC_WITHOUT_HEAD(cut_fup_query_after_mwait);
ATF_TC_BODY(cut_fup_query_after_mwait, tc)
{
	static const uint8_t pt[] = {
		PSB_PLUS_OFF,
		MWAIT,
		PGE_1000,
		0x0e,					/* TNT: T T */
		0x3d, 0x00,				/* FUP, cut */
	};
	/* jz +0; jmp *%rax */
	static const uint8_t code[] = { 0x74, 0x00, 0xff, 0xe0 };

	both("cut_fup_query_after_mwait", pt, sizeof(pt), code, sizeof(code),
	    5, 0x26, 0);
}

/*
 * A MODE.TSX abort read before the TIP.PGD (ip suppressed) that ends the
 * block waits for the FUP after it (seed 8484): the fetch libipt makes
 * once it hands the disabled event over (pt_blk_event's trailing event)
 * decodes that FUP for the abort, which leaves it, and its read-ahead
 * takes it again for an asynchronous branch and reads on: a bad PSB+ (a
 * TNT in it) or a bad opcode there fails that fetch and loses the
 * disabled event.  fpt's dry run kept the FUP for the abort queued before
 * and stopped at it.  By construction: the mode event, the enabled event,
 * the ret's block, the error at 0x21 (fpt hands the bad PSB+ over) or at
 * the opcode, 0x21 too: 4 items.
 */
ATF_TC_WITHOUT_HEAD(bad_after_tsx_abort_pgd);
ATF_TC_BODY(bad_after_tsx_abort_pgd, tc)
{
	static const uint8_t psb[] = {
		PSB_PLUS_OFF,
		PGE_1000,
		0x99, 0x22,				/* MODE.TSX abort */
		0x01,					/* TIP.PGD, no IP */
		0x3d, 0x00, 0x10,			/* FUP 0x1000 */
		PSB_BYTES,
		0x06,					/* TNT: T */
		0x02, 0x23,				/* PSBEND */
	};
	static const uint8_t opc[] = {
		PSB_PLUS_OFF,
		PGE_1000,
		0x99, 0x22,				/* MODE.TSX abort */
		0x01,					/* TIP.PGD, no IP */
		0x3d, 0x00, 0x10,			/* FUP 0x1000 */
		0x02, 0xff,				/* bad opcode */
	};
	/* nop; ret */
	static const uint8_t code[] = { 0x90, 0xc3 };

	both("bad_psb_after_tsx_abort_pgd", psb, sizeof(psb), code,
	    sizeof(code), 4, 0x21, 1);
	both("bad_opc_after_tsx_abort_pgd", opc, sizeof(opc), code,
	    sizeof(code), 4, 0x21, 0);
}

/*
 * The ret's TIP goes to 0x2000, where no code is; after it a MODE.exec
 * waits for the next TIP (libipt's evb_tip queue), an MWAIT for the FUP
 * after it, and more FUPs follow (fpt-crash-841f...).  libipt fetches
 * them as the ret's trailing event: the FUP gives the MWAIT its IP and
 * is consumed, and as the MWAIT's is the only event on it, that same
 * fetch reads on and takes each further FUP for an asynchronous branch,
 * queued with the mode's for a TIP: the seventh there fails the fetch
 * (-pte_nomem) before the flow moves.  fpt's fetch stopped after the FUP
 * and its flow failed at 0x2000, its error elsewhere.  By construction:
 * the mode and enabled events, the nop and ret's block, the error at
 * 0x3c (the mode's and six FUPs after the MWAIT's), or without the
 * MODE.exec at 0x3d (seven): 4 items, fpt handing over first (three FUPs
 * in a row).  A bad opcode after the one FUP fails that fetch there,
 * 0x2d.
 */
ATF_TC_WITHOUT_HEAD(fups_after_mwait_fup_on);
ATF_TC_BODY(fups_after_mwait_fup_on, tc)
{
	static const uint8_t mode[] = {
		PSB_PLUS_OFF,
		PGE_1000,
		0x2d, 0x00, 0x20,			/* TIP 0x2000 */
		0x99, 0x01,				/* MODE 64 */
		MWAIT,
		0x3d, 0x00, 0x10,			/* FUP 0x1000, its */
		0x3d, 0x00, 0x10, 0x3d, 0x00, 0x10,	/* 6 more FUPs */
		0x3d, 0x00, 0x10, 0x3d, 0x00, 0x10,
		0x3d, 0x00, 0x10, 0x3d, 0x00, 0x10,
	};
	static const uint8_t nomode[] = {
		PSB_PLUS_OFF,
		PGE_1000,
		0x2d, 0x00, 0x20,			/* TIP 0x2000 */
		MWAIT,
		0x3d, 0x00, 0x10,			/* FUP 0x1000, its */
		0x3d, 0x00, 0x10, 0x3d, 0x00, 0x10,	/* 7 more FUPs */
		0x3d, 0x00, 0x10, 0x3d, 0x00, 0x10,
		0x3d, 0x00, 0x10, 0x3d, 0x00, 0x10,
		0x3d, 0x00, 0x10,
	};
	static const uint8_t bad[] = {
		PSB_PLUS_OFF,
		PGE_1000,
		0x2d, 0x00, 0x20,			/* TIP 0x2000 */
		0x99, 0x01,				/* MODE 64 */
		MWAIT,
		0x3d, 0x00, 0x10,			/* FUP 0x1000, its */
		0x02, 0xff,				/* bad opcode */
	};
	/* nop; ret */
	static const uint8_t code[] = { 0x90, 0xc3 };

	both("fups_after_mode_mwait_fup_on", mode, sizeof(mode), code,
	    sizeof(code), 4, 0x3c, 1);
	both("fups_after_mwait_fup_on", nomode, sizeof(nomode), code,
	    sizeof(code), 4, 0x3d, 1);
	both("bad_after_mode_mwait_fup_on", bad, sizeof(bad), code,
	    sizeof(code), 4, 0x2d, 0);
}

/*
 * A TIP.PGE to 0x2000, where no code is, and a TIP.PGD without IP: the
 * flow's error comes once libipt has fetched the disabled event, whose
 * read-ahead passes a PSB+ without status updates and then, as it does
 * before one, a FUP (an asynchronous branch's, nothing waits for it)
 * and the status packets after it, to the end of the trace, a FUP it
 * cuts (seed 9494).  fpt's error stopped at that FUP.  By construction:
 * the mode and enabled events and the error at the end, 0x32; at the
 * TIP after the FUP, 0x31; past a second such PSB+ and the FUP, at the
 * end, 0x44: 3 items.
 */
ATF_TC_WITHOUT_HEAD(error_past_psb_plus_fup);
ATF_TC_BODY(error_past_psb_plus_fup, tc)
{
	static const uint8_t cut[] = {
		PSB_PLUS_OFF,
		0x71, 0x00, 0x20, 0, 0, 0, 0,		/* TIP.PGE 0x2000 */
		0x01,					/* TIP.PGD, no IP */
		PSB_BYTES, 0x02, 0x23,			/* PSB, PSBEND */
		0x3d, 0x00, 0x10,			/* FUP 0x1000 */
		0x3d,					/* FUP, cut */
	};
	static const uint8_t tip[] = {
		PSB_PLUS_OFF,
		0x71, 0x00, 0x20, 0, 0, 0, 0,		/* TIP.PGE 0x2000 */
		0x01,					/* TIP.PGD, no IP */
		PSB_BYTES, 0x02, 0x23,			/* PSB, PSBEND */
		0x3d, 0x00, 0x10,			/* FUP 0x1000 */
		0x2d, 0x00, 0x10,			/* TIP 0x1000 */
	};
	static const uint8_t two[] = {
		PSB_PLUS_OFF,
		0x71, 0x00, 0x20, 0, 0, 0, 0,		/* TIP.PGE 0x2000 */
		0x01,					/* TIP.PGD, no IP */
		PSB_BYTES, 0x02, 0x23,			/* PSB, PSBEND */
		PSB_BYTES, 0x02, 0x23,			/* PSB, PSBEND */
		0x3d, 0x00, 0x10,			/* FUP 0x1000 */
		0x3d,					/* FUP, cut */
	};
	/* ret */
	static const uint8_t code[] = { 0xc3 };

	both("error_past_psb_plus_fup", cut, sizeof(cut), code,
	    sizeof(code), 3, 0x32, 0);
	both("error_past_psb_plus_fup_at_tip", tip, sizeof(tip), code,
	    sizeof(code), 3, 0x31, 0);
	both("error_past_two_psb_plus_fup", two, sizeof(two), code,
	    sizeof(code), 3, 0x44, 0);
}

/*
 * The code of the MODE.exec cases below: 0x1000 test %edi,%edi; jz
 * 0x1010; call 0x1010; ret; 6 nops; 0x1010 nop; jz 0x1013; jmp *%rax.
 */
static const uint8_t mode_code[] = {
	0x85, 0xff, 0x74, 0x0c, 0xe8, 0x07, 0x00, 0x00, 0x00, 0xc3,
	0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
	0x90, 0x74, 0x00, 0xff, 0xe0,
};

/*
 * A MODE.exec waits for its TIP (libipt's evb_tip), a PWRX after it:
 * libipt's fetch of the PWRX decodes the MODE.exec, and the TNT bits
 * after them go on with the TIP next.  libipt says its event is pending
 * only once the TNT bits are used up (pt_qry_status_flags()); until then
 * its blocks come from the block cache, whose fill ends a block after a
 * direct call (pt_blk_proceed_no_event_fill_cache()).  fpt took the TIP
 * next for the mode's event fetched and stepped without the cache, over
 * the call, to the next conditional branch (seed 10101).  By
 * construction, over "test; jz; call; .. nop; jz; jmp *%rax": the mode,
 * enabled and PWRX events; the blocks to the jz (N), of the call (a
 * fill), to the second jz (N), of the jmp (the TIP, 0x1000); the mode's
 * event; the block to the first jz and the disabled event: 10 items.
 */
ATF_TC_WITHOUT_HEAD(mode_tip_after_tnt_call_fill);
ATF_TC_BODY(mode_tip_after_tnt_call_fill, tc)
{
	static const uint8_t pt[] = {
		PSB_PLUS_OFF,
		PGE_1000,
		0x99, 0x01,				/* MODE 64 */
		0x02, 0xa2, 0, 0, 0, 0, 0,		/* PWRX */
		0x08,					/* TNT: N N */
		0x2d, 0x00, 0x10,			/* TIP 0x1000 */
		0x01,					/* TIP.PGD, no IP */
	};
	static const struct want_block wb[] = {
		{ 0x1000, 0x1002, 2 }, { 0x1004, 0x1004, 1 },
		{ 0x1010, 0x1011, 2 }, { 0x1013, 0x1013, 1 },
		{ 0x1000, 0x1002, 2 },
	};

	both_blocks("mode_tip_after_tnt_call_fill", pt, sizeof(pt), mode_code,
	    sizeof(mode_code), 10, 0, wb, sizeof(wb) / sizeof(wb[0]));
}

/*
 * The same with a TNT bit left when the flow needs the TIP (at the jmp):
 * libipt's query for it meets the mode's event, not fetched yet, and
 * fails (pt_qry_indirect_branch(): a bad query at the TIP).  fpt took
 * the TIP and gave the event.  By construction: the three events, the
 * four blocks to the jmp, the error at the TIP, 0x25: 8 items.
 */
ATF_TC_WITHOUT_HEAD(mode_tip_with_tnt_left);
ATF_TC_BODY(mode_tip_with_tnt_left, tc)
{
	static const uint8_t pt[] = {
		PSB_PLUS_OFF,
		PGE_1000,
		0x99, 0x01,				/* MODE 64 */
		0x02, 0xa2, 0, 0, 0, 0, 0,		/* PWRX */
		0x10,					/* TNT: N N N */
		0x2d, 0x00, 0x10,			/* TIP 0x1000 */
		0x01,					/* TIP.PGD, no IP */
	};
	static const struct want_block wb[] = {
		{ 0x1000, 0x1002, 2 }, { 0x1004, 0x1004, 1 },
		{ 0x1010, 0x1011, 2 }, { 0x1013, 0x1013, 1 },
	};

	both_blocks("mode_tip_with_tnt_left", pt, sizeof(pt), mode_code,
	    sizeof(mode_code), 8, 0x25, wb, sizeof(wb) / sizeof(wb[0]));
}

/*
 * A MODE.exec read in an event's fetch (the PSB+'s, here) waits for its
 * TIP, which the end of the trace cuts; the next event (a PWRX, a second
 * PSB+'s status update) comes first.  With it handed over libipt fetches
 * the one after (pt_blk_event()'s trailing event): the TIP, which the
 * MODE.exec makes an event packet (pt_qry_will_event(), evb_tip); its
 * decode meets the end (-pte_eos), the event handed over is lost and the
 * trace ends.  fpt's dry run of that fetch (fpti_trail_error()) took the
 * cut TIP for one only an asynchronous branch read in it waits for, and
 * gave the event (seed 11212).  By construction: the PSB+'s mode event
 * alone, no error: 1 item, both ways.
 */
ATF_TC_WITHOUT_HEAD(mode_tip_cut_after_event);
ATF_TC_BODY(mode_tip_cut_after_event, tc)
{
	static const uint8_t pwrx[] = {
		PSB_BYTES,
		0x3d, 0x00, 0x10,			/* FUP 0x1000 */
		0x99, 0x01,				/* MODE 64 */
		0x02, 0x23,				/* PSBEND */
		0x99, 0x01,				/* MODE 64, for a TIP */
		0x02, 0xa2, 0, 0, 0, 0, 0,		/* PWRX */
		0x2d,					/* TIP, cut */
	};
	static const uint8_t psb[] = {
		PSB_BYTES,
		0x3d, 0x00, 0x10,			/* FUP 0x1000 */
		0x99, 0x01,				/* MODE 64 */
		0x02, 0x23,				/* PSBEND */
		0x99, 0x01,				/* MODE 64, for a TIP */
		PSB_BYTES,
		0x3d, 0x00, 0x10,			/* FUP 0x1000 */
		0x99, 0x01,				/* MODE 64 */
		0x02, 0x23,				/* PSBEND */
		0x2d,					/* TIP, cut */
	};
	/* ret */
	static const uint8_t code[] = { 0xc3 };

	both("mode_tip_cut_after_pwrx", pwrx, sizeof(pwrx), code,
	    sizeof(code), 1, 0, 0);
	both("mode_tip_cut_after_psb_plus", psb, sizeof(psb), code,
	    sizeof(code), 1, 0, 0);
}

/*
 * libipt drops a section's block cache only where its block decode looks
 * a section up (pt_blk_msec_fill(), pt_msec_cache_invalidate()); the way
 * to a MODE.exec's IP reads the image directly
 * (pt_blk_proceed_to_exec_mode()), so an unmapped IP there fails without
 * touching the cache.  fpt dropped its cache there, and the next block
 * over the cached direct call at 0x1001 ended at it (fuzz seed 12424's
 * second find).
 */
ATF_TC_WITHOUT_HEAD(mode_nomap_keeps_cache);
ATF_TC_BODY(mode_nomap_keeps_cache, tc)
{
	static const uint8_t pt[] = {
		PSB_BYTES,				/* sync at 0x1013 */
		0x3d, 0x13, 0x10,			/* FUP 0x1013 */
		0x99, 0x01,				/* MODE 64 */
		0x02, 0x23,				/* PSBEND */
		0x2d, 0x00, 0x10,			/* TIP 0x1000 */
		0x2d, 0x13, 0x10,			/* TIP 0x1013 */
		0x01,					/* TIP.PGD */
		0x71, 0x00, 0x20, 0, 0, 0, 0,		/* TIP.PGE 0x2000 */
		0x99, 0x01,				/* MODE 64 */
		0x2d, 0x00, 0x30,			/* TIP 0x3000 */
		PSB_BYTES,				/* sync again */
		0x3d, 0x13, 0x10,			/* FUP 0x1013 */
		0x99, 0x01,				/* MODE 64 */
		0x02, 0x23,				/* PSBEND */
		0x2d, 0x00, 0x10,			/* TIP 0x1000 */
		0x2d, 0x13, 0x10,			/* TIP 0x1013 */
		0x01,					/* TIP.PGD */
	};
	/*
	 * nop; call 0x1010; nop x 10; 0x1010: nop; jmp *%rax;
	 * 0x1013: jmp *%rax
	 */
	static const uint8_t code[] = {
		0x90, 0xe8, 0x0a, 0, 0, 0, 0x90, 0x90,
		0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
		0x90, 0xff, 0xe0, 0xff, 0xe0,
	};
	/*
	 * A pass from 0x1013 when the cache is new: the fill from 0x1000
	 * stops at the call.  The second pass goes on over it.
	 */
	static const struct want_block fill[] = {
		{ 0x1013, 0x1013, 1 },
		{ 0x1000, 0x1001, 2 },
		{ 0x1010, 0x1011, 2 },
		{ 0x1013, 0x1013, 1 },
	};
	static const struct want_block cached[] = {
		{ 0x1013, 0x1013, 1 },
		{ 0x1000, 0x1011, 4 },
		{ 0x1013, 0x1013, 1 },
	};
	struct want_block wb[8];

	memcpy(wb, fill, sizeof(fill));
	memcpy(wb + 4, cached, sizeof(cached));
	both_blocks("mode_nomap_keeps_cache", pt, sizeof(pt), code,
	    sizeof(code), 13, 0, wb, 7);
	/*
	 * With no MODE.exec waiting, libipt's no-event flow looks the
	 * section up for the block at 0x2000 and drops the cache: the
	 * second pass fills it again.
	 */
	{
		/* pt less the MODE.exec after its TIP.PGE. */
		uint8_t pt2[sizeof(pt) - 2];
		size_t at = 16 + 3 + 2 + 2 + 3 + 3 + 1 + 7;

		ATF_REQUIRE(pt[at] == 0x99 && pt[at + 2] == 0x2d);
		memcpy(pt2, pt, at);
		memcpy(pt2 + at, pt + at + 2, sizeof(pt) - at - 2);
		memcpy(wb + 4, fill, sizeof(fill));
		both_blocks("no_mode_nomap_drops_cache", pt2, sizeof(pt2),
		    code, sizeof(code), 14, 0, wb, 8);
	}
}

/*
 * Tracing on at 0x1000 after a PSB+, then a MODE.exec waiting for the next
 * TIP and a PWRX, an event of its own: the TNT after it is no bad query
 * to the event fetch that passes the MODE.exec (mode_tip_cut_with_tnt_left).
 */
#define MODE_WAITS_ON_1000 \
	PSB_PLUS_OFF, PGE_1000, \
	0x99, 0x01,				/* MODE 64, for a TIP */ \
	0x02, 0xa2, 0, 0, 0, 0, 0		/* PWRX */

/*
 * A TIP cut by the end, a MODE.exec waiting for it, TNT bits left: libipt
 * looks at the TIP's header only, and its indirect query meets the mode's
 * event there (pt_qry_will_event()'s evb_tip): a bad query at the TIP.
 * fpt took the cut TIP for the end of the trace (fuzz seed 12626).
 */
ATF_TC_WITHOUT_HEAD(mode_tip_cut_with_tnt_left);
ATF_TC_BODY(mode_tip_cut_with_tnt_left, tc)
{
	static const uint8_t pt[] = {
		MODE_WAITS_ON_1000,
		0x08,					/* TNT N N */
		0x2d, 0x00,				/* TIP, cut */
	};
	/* jz 0x1002; jmp *%rax */
	static const uint8_t code[] = { 0x74, 0x00, 0xff, 0xe0 };
	static const struct want_block wb[] = {
		{ 0x1000, 0x1000, 1 },
		{ 0x1002, 0x1002, 1 },
	};

	/*
	 * The PSB+'s mode, enabled, PWRX (an event of its own: the TNT is
	 * no bad query to the event fetch that passes the MODE.exec), the
	 * two blocks, the error at the TIP.
	 */
	both_blocks("mode_tip_cut_with_tnt_left", pt, sizeof(pt), code,
	    sizeof(code), 6, 20 + 7 + 2 + 7 + 1, wb, 2);
}

/*
 * A MODE.exec waits for its TIP, a TNT bit is left, and the syscall's TIP
 * query meets a whole PSB+ without status updates, then the end:
 * libipt's read-ahead after the TNT decoded that PSB+ and met the end, so
 * the mode's event never comes and the query finds nothing: the trace
 * ends (a make fuzz-fpt run).  fpt passed such a PSB+ only where no
 * event waits, and gave an error at the end.  By construction: the
 * PSB+'s mode, enabled, PWRX (as in mode_tip_cut_with_tnt_left), the
 * blocks of the jz (N) and of the syscall, no error: 5 items.  The same
 * with an MWAIT waiting for a FUP (the PSB+'s FUP is not the one it
 * waits for): the mode, enabled, the two blocks: 4 items.  The first
 * with PADs, a TSC, an MTC and a PSBEND between the PSB+ and the end
 * (the next make fuzz-fpt run): 5 items again.  With a PSBEND before the
 * PSB+ and CYCs after it, or a TSC or a CYC the end cuts there, whose
 * decode meets the end in libipt's read-ahead (the run after that): 5
 * items each; fpt gave an error at the end.  The same with a FUP after
 * that PSB+ (the next run): no event waits for it, so the read-ahead
 * queues an asynchronous branch for the next TIP and goes on, to a TSC
 * the end cuts: 5 items again.
 */
/* The mode waiting, a TNT bit left, a PSBEND, a PSB+ (its PSB at 0x27). */
#define MODE_WAITS_PSB_PLUS_AFTER \
	MODE_WAITS_ON_1000, \
	0x0a,					/* TNT N T */ \
	0x02, 0x23,				/* PSBEND */ \
	PSB_BYTES, \
	0x3d, 0x00, 0x10,			/* FUP 0x1000 */ \
	0x02, 0x23				/* PSBEND */

ATF_TC_WITHOUT_HEAD(event_waits_psb_plus_then_end);
ATF_TC_BODY(event_waits_psb_plus_then_end, tc)
{
	static const uint8_t pt[] = {
		MODE_WAITS_ON_1000,
		0x0a,					/* TNT N T */
		0x00, 0x00,				/* PADs */
		PSB_BYTES,
		0x19, 1, 0, 0, 0, 0, 0, 0,		/* TSC */
		0x3d, 0x00, 0x10,			/* FUP 0x1000 */
		0x02, 0x23,				/* PSBEND */
	};
	/* The same with an MWAIT waiting for a FUP instead. */
	static const uint8_t fup[] = {
		PSB_PLUS_OFF,
		MWAIT,
		PGE_1000,
		0x0a,					/* TNT N T */
		PSB_BYTES,
		0x3d, 0x00, 0x10,			/* FUP 0x1000 */
		0x02, 0x23,				/* PSBEND */
	};
	static const uint8_t timed[] = {
		MODE_WAITS_ON_1000,
		0x0a,					/* TNT N T */
		PSB_BYTES,
		0x3d, 0x00, 0x10,			/* FUP 0x1000 */
		0x02, 0x23,				/* PSBEND */
		0x00, 0x00,				/* PADs */
		0x19, 1, 0, 0, 0, 0, 0, 0,		/* TSC */
		0x59, 0x01,				/* MTC */
		0x02, 0x23,				/* PSBEND */
	};
	static const uint8_t cyc[] = {
		MODE_WAITS_PSB_PLUS_AFTER,
		0x0b,					/* CYC 1 */
		0x07, 0x04,				/* CYC 0x40 */
	};
	static const uint8_t tsc_cut[] = {
		MODE_WAITS_PSB_PLUS_AFTER,
		0x19, 1, 0, 0,				/* TSC, cut */
	};
	static const uint8_t cyc_cut[] = {
		MODE_WAITS_PSB_PLUS_AFTER,
		0x00,					/* PAD */
		0x07,					/* CYC, cut */
	};
	static const uint8_t fup_end[] = {
		MODE_WAITS_PSB_PLUS_AFTER,
		0x0b,					/* CYC 1 */
		0x3d, 0x02, 0x10,			/* FUP 0x1002 */
		0x02, 0x23,				/* PSBEND */
		0x19, 1, 0, 0,				/* TSC, cut */
	};
	/* jz +0; syscall */
	static const uint8_t code[] = { 0x74, 0x00, 0x0f, 0x05 };
	static const struct want_block wb[] = {
		{ 0x1000, 0x1000, 1 },
		{ 0x1002, 0x1002, 1 },
	};

	both_blocks("mode_waits_psb_plus_cyc_end", cyc, sizeof(cyc), code,
	    sizeof(code), 5, 0, wb, 2);
	both_blocks("mode_waits_psb_plus_tsc_cut", tsc_cut, sizeof(tsc_cut),
	    code, sizeof(code), 5, 0, wb, 2);
	both_blocks("mode_waits_psb_plus_cyc_cut", cyc_cut, sizeof(cyc_cut),
	    code, sizeof(code), 5, 0, wb, 2);
	both_blocks("mode_waits_psb_plus_fup_then_end", fup_end,
	    sizeof(fup_end), code, sizeof(code), 5, 0, wb, 2);
	both_blocks("mode_waits_psb_plus_then_end", pt, sizeof(pt), code,
	    sizeof(code), 5, 0, wb, 2);
	both_blocks("mode_waits_psb_plus_timing_end", timed, sizeof(timed),
	    code, sizeof(code), 5, 0, wb, 2);
	both_blocks("mwait_waits_psb_plus_then_end", fup, sizeof(fup), code,
	    sizeof(code), 4, 0, wb, 2);
}

/*
 * A PIP binds to the syscall; libipt hands its event over and, in the same
 * call, passes the syscall (pt_blk_event()'s trailing proceed): its query
 * takes the TIP and reads ahead, and a bad packet there fails that call.
 * The event is lost, the error is libipt's next item; fpt gave the event
 * and the error after it (fuzz seed 12828).  fpt hands the trace over
 * before the event, as it does where no TIP follows.
 */
ATF_TC_WITHOUT_HEAD(pip_post_error_ahead);
ATF_TC_BODY(pip_post_error_ahead, tc)
{
	static const uint8_t pt[] = {
		SYNC_ON_1000, 0x99, 0x01, 0x02, 0x23,	/* PSB+ at 0x1000 */
		0x02, 0x43, 0, 0, 0, 0, 0, 0,		/* PIP */
		0x2d, 0x00, 0x10,			/* TIP 0x1000 */
		0x02, 0xff,				/* a bad opcode */
	};
	/* syscall */
	static const uint8_t code[] = { 0x0f, 0x05 };

	/* The two PSB+s' modes, the syscall's block, the error (no PIP). */
	both_cpu("pip_post_error_ahead", pt, sizeof(pt), code, sizeof(code),
	    4, 42 + 4 + 8 + 3, 1, 1, NULL);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, bad_fup_after_mwait_pge);
	ATF_TP_ADD_TC(tp, bad_tip_after_mode_after_tnt);
	ATF_TP_ADD_TC(tp, cut_fup_after_tsx_mode);
	ATF_TP_ADD_TC(tp, async_fups_after_mwait_fup);
	ATF_TP_ADD_TC(tp, bad_query_offset_after_pads);
	ATF_TP_ADD_TC(tp, bad_tip_after_tsx_mode);
	ATF_TP_ADD_TC(tp, vex_jkzd_no_branch);
	ATF_TP_ADD_TC(tp, cut_escape_after_tnt_ret);
	ATF_TP_ADD_TC(tp, cut_psb_plus_after_pgd);
	ATF_TP_ADD_TC(tp, cut_escape_after_pge);
	ATF_TP_ADD_TC(tp, bdm70_bad_after_pgd);
	ATF_TP_ADD_TC(tp, error_at_psbend_of_updates);
	ATF_TP_ADD_TC(tp, bad_psb_plus_after_noip_tip);
	ATF_TP_ADD_TC(tp, fup_then_cut_psb_plus_at_tip);
	ATF_TP_ADD_TC(tp, cut_fup_after_mwait_pge);
	ATF_TP_ADD_TC(tp, fups_after_fup_of_two_mwaits);
	ATF_TP_ADD_TC(tp, error_at_fup_of_two_mwaits);
	ATF_TP_ADD_TC(tp, bad_after_fup_of_two_mwaits_off);
	ATF_TP_ADD_TC(tp, bad_after_fup_of_two_mwaits_on);
	ATF_TP_ADD_TC(tp, mode_tip_after_mwait);
	ATF_TP_ADD_TC(tp, long_psb_plus_after_sync);
	ATF_TP_ADD_TC(tp, pip_new_cr3_flushes_cache);
	ATF_TP_ADD_TC(tp, tsx_fup_after_pgd);
	ATF_TP_ADD_TC(tp, mode_tip_to_here);
	ATF_TP_ADD_TC(tp, mode_waits_over_psb_plus);
	ATF_TP_ADD_TC(tp, xend_rsm_no_branch);
	ATF_TP_ADD_TC(tp, cut_tnt_after_mode);
	ATF_TP_ADD_TC(tp, tsx_modes_past_queue);
	ATF_TP_ADD_TC(tp, bad_after_psb_updates_on);
	ATF_TP_ADD_TC(tp, cut_fup_query_after_mwait);
	ATF_TP_ADD_TC(tp, bad_after_tsx_abort_pgd);
	ATF_TP_ADD_TC(tp, fups_after_mwait_fup_on);
	ATF_TP_ADD_TC(tp, error_past_psb_plus_fup);
	ATF_TP_ADD_TC(tp, mode_tip_after_tnt_call_fill);
	ATF_TP_ADD_TC(tp, mode_tip_with_tnt_left);
	ATF_TP_ADD_TC(tp, mode_tip_cut_after_event);
	ATF_TP_ADD_TC(tp, mode_nomap_keeps_cache);
	ATF_TP_ADD_TC(tp, mode_tip_cut_with_tnt_left);
	ATF_TP_ADD_TC(tp, pip_post_error_ahead);
	ATF_TP_ADD_TC(tp, event_waits_psb_plus_then_end);
	return (atf_no_error());
}
