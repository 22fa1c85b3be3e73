/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Both Intel PT decoders' check for a loop that reads no trace
 * (ix_dec_loop_check(), decode_int.h): decode.c calls it for libipt's
 * blocks, segfast.c for fpt's.
 */

#include <assert.h>
#include <intel-pt.h>
#include <stdint.h>

#include "hwtr_common.h"
#include "hwtr_x86.h"
#include "fpt.h"
#include "segout.h"

#include "decode_int.h"

/*
 * Where the walk of ix_dec_loop_check() goes from the instruction at @ip
 * (@mode bits, image @isid) without reading trace: 1 with *@next, or 0
 * when the instruction needs trace (a conditional, indirect or far
 * branch, a return, ...) or cannot be read or decoded.
 */
static int
loop_step(struct dec *d, int isid, int mode, uint64_t ip, uint64_t *next)
{
	struct hwtr_x86_insn x;
	uint8_t buf[16];
	size_t n;

	n = ix_dec_read_code(d, isid, ip, buf, 15);
	if (n == 0 || hwtr_x86_decode(buf, n, ip, mode, &x) < 0)
		return (0);
	/* VMX far transfers, XBEGIN: libipt's classes, as it walks. */
	fpt_x86_libipt(buf, n, mode, &x);
	switch (x.kind) {
	case HWTR_X86_OTHER:
		*next = ip + x.len;
		return (1);
	case HWTR_X86_JMP:
	case HWTR_X86_CALL:
		if (!x.has_target)
			return (0);
		*next = x.target;
		return (1);
	default:
		return (0);
	}
}

/*
 * A decoder that reads no trace follows the code from an instruction on
 * as the code says: direct jumps and calls, other instructions, up to
 * one that needs trace.  When that path comes back to an instruction it
 * passed with no trace read, it is a loop the decoder follows for ever
 * (the return addresses that direct calls push change nothing: only a
 * return reads them, and a return needs trace).  libipt, and fpt as it,
 * then give blocks of IX_BLK_FULL instructions one after the other, the
 * trace offset standing still (a loop of direct jumps, as a corrupted
 * stream can lead to: a millisecond or more per block).
 *
 * The rule is over the blocks both decoders give, so that they cut at
 * the same block: the instructions of full blocks, walked here, with
 * Brent's cycle search (the instruction kept at steps 1, 2, 4, 8, ...
 * compared with each one after), over consecutive full blocks with no
 * event and the same trace offset.  A block of another size, an event,
 * an instruction that needs trace or a walk that does not end at the
 * block's end start it again.  It is exact: an instruction seen twice
 * with no trace read between is an endless loop, whatever its length,
 * and a real trace never meets it; straight-line code, however long
 * (full blocks of it, e.g. a generated function of 100,000 instructions
 * without a branch), ends at an instruction that needs trace, the walk
 * with it.  A loop that takes a TNT bit per round (a TNT-64 packet holds
 * 47) has a conditional branch in it: no walk passes it.  The cost is a
 * decode per instruction of full blocks, as rare as they are; a loop is
 * found in its first full block when it is 32,767 instructions or
 * shorter, in about three rounds of it otherwise.
 */
int
ix_dec_loop_check(struct dec *d, uint64_t ip, uint64_t end_ip,
    unsigned ninsn, int isid, int mode, uint32_t nblk)
{
	struct ix_loop *lp = &d->loop;
	uint64_t off = 0, cur = ip, next;
	uint32_t i;

	(void)ix_src_offset(d, &off);
	if (!lp->armed || lp->nblk + 1 != nblk || lp->off != off ||
	    lp->next_ip != ip || lp->isid != isid || lp->mode != mode) {
		lp->tort = ip;
		lp->power = 1;
		lp->lam = 0;
		lp->off = off;
		lp->isid = isid;
		lp->mode = mode;
	}
	lp->armed = 0;
	assert(ninsn >= IX_BLK_FULL_MIN && ninsn <= IX_BLK_FULL);
	for (i = 0; i < ninsn; i++) {
		if (!loop_step(d, isid, mode, cur, &next))
			return (0);
		/*
		 * The walk and the decoder agree: the block's end is its
		 * last instruction, or where the next block starts (libipt
		 * says that one when its block cache ended the block).
		 */
		if (i == ninsn - 1 && cur != end_ip && next != end_ip)
			return (0);
		cur = next;
		if (cur == lp->tort) {
			lp->stuck = 1;
			lp->at = end_ip;
			return (1);
		}
		if (++lp->lam == lp->power) {
			lp->tort = cur;
			lp->power <<= 1;
			lp->lam = 0;
		}
	}
	lp->armed = 1;
	lp->nblk = nblk;
	lp->next_ip = cur;
	return (0);
}
