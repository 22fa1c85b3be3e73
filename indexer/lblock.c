/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The Intel PT blocks a segment's decoder has seen (struct ix_lblock,
 * decode_int.h), for both decoders' loops (decode.c for libipt's blocks,
 * segfast.c for fpt's): each block split once into the contiguous runs
 * the database wants, its operations encoded once, so that a block seen
 * again costs a lookup and a copy.
 */

#include <assert.h>
#include <intel-pt.h>
#include <stdlib.h>
#include <string.h>

#include "hwtr_common.h"
#include "hwtr_ix.h"
#include "hwtr_x86.h"
#include "segout.h"

#include "decode_int.h"

static int
map_iclass(enum pt_insn_class c, int ild_cls)
{
	switch (c) {
	case ptic_cond_jump:
		return (HWTR_IC_COND);
	case ptic_call:
		return (ild_cls == HWTR_IC_CALL_IND ? HWTR_IC_CALL_IND :
		    HWTR_IC_CALL);
	case ptic_return:
		return (HWTR_IC_RET);
	case ptic_jump:
		return (ild_cls == HWTR_IC_JUMP_IND ? HWTR_IC_JUMP_IND :
		    HWTR_IC_JUMP);
	case ptic_far_call:
		return (HWTR_IC_FAR_CALL);
	case ptic_far_return:
		return (HWTR_IC_FAR_RET);
	case ptic_far_jump:
		return (HWTR_IC_FAR_JUMP);
	case ptic_other:
	case ptic_ptwrite:
		return (HWTR_IC_OTHER);
	default:
		return (ild_cls >= 0 ? ild_cls : HWTR_IC_UNKNOWN);
	}
}



/* Append "run @id ran" to @lb's operations. */
static int
add_run_id(struct dec *d, struct ix_lblock *lb, int64_t id)
{
	uint64_t v = (uint64_t)id << 1;

	if (id < 0)
		return ((int)id);
	if (hwtr_grow((void **)&d->runs, &d->cruns, d->nruns + 10, 1) < 0)
		return (ix_segw_fail(&d->w, -HWTR_E_NOMEM, "out of memory",
		    NULL));
	while (v >= 0x80) {
		d->runs[d->nruns++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	d->runs[d->nruns++] = (uint8_t)v;
	lb->nenc = (uint32_t)(d->nruns - lb->first);
	return (0);
}

/*
 * The bytes of @b's instruction at @ip into @buf (room for 16): libipt's
 * own when it is the block's @last and libipt cut it (truncated: it
 * crosses into another section), else the image's.  Their count; 0 or
 * less when there are none.
 */
static int
insn_bytes(struct dec *d, const struct pt_block *b, uint64_t ip, int last,
    uint8_t *buf)
{
	if (last && b->truncated && ip == b->end_ip) {
		memcpy(buf, b->raw, b->size);
		return ((int)b->size);
	}
	return (b->isid > 0 ? (int)ix_dec_read_code(d, b->isid, ip, buf, 15) :
	    0);
}

/*
 * Room in @d's scratch for the lengths and bytes of a block of @ninsn
 * instructions: 0, or < 0 (the failure set) when memory runs out.
 */
static int
sp_room(struct dec *d, size_t ninsn)
{
	uint8_t *p;

	if (ninsn == 0)
		ninsn = 1;
	if (d->sp_clens < ninsn) {
		if ((p = realloc(d->sp_lens, ninsn)) == NULL)
			goto nomem;
		d->sp_lens = p;
		d->sp_clens = ninsn;
	}
	if (d->sp_ccode < ninsn * 15) {
		if ((p = realloc(d->sp_code, ninsn * 15)) == NULL)
			goto nomem;
		d->sp_code = p;
		d->sp_ccode = ninsn * 15;
	}
	return (0);
nomem:
	return (ix_segw_fail(&d->w, -HWTR_E_NOMEM, "out of memory", NULL));
}

/*
 * Split a libipt block into contiguous runs.  libipt's block decoder
 * follows direct jumps and calls inside a block ("users are expected to
 * follow direct branches"); the database wants blocks whose instructions
 * are contiguous (so that lengths give addresses) and calls that show up
 * as transitions, so each direct jump or call ends a run here.  When the
 * bytes cannot be read or decoded, the block stays one run whose layout
 * is unknown (insn_lens NULL).
 */
static int
split_block(struct dec *d, struct ix_lblock *lb, const struct pt_block *b)
{
	uint8_t *lens, *code, buf[16];
	struct ix_sblock run;
	struct hwtr_x86_insn x;
	int cls;
	uint64_t cur = b->ip;
	size_t ncode = 0, nlens = 0;
	uint16_t k;
	int mode = ix_dec_mode_bits(b->mode), rc, n;

	lb->first = (uint32_t)d->nruns;
	lb->nenc = 0;
	memset(&run, 0, sizeof(run));
	run.ip = cur;
	run.isid = b->isid;
	run.mode = (uint8_t)mode;
	if (b->isid <= 0)
		goto fallback;
	/* At most 15 bytes an instruction (insn_bytes()). */
	if ((rc = sp_room(d, b->ninsn)) < 0)
		return (rc);
	lens = d->sp_lens;
	code = d->sp_code;
	for (k = 0; k < b->ninsn; k++) {
		int last = k + 1 == b->ninsn;

		n = insn_bytes(d, b, cur, last, buf);
		if (n <= 0 || hwtr_x86_decode(buf, (size_t)n, cur, mode,
		    &x) < 0 || ncode + (size_t)x.len > d->sp_ccode)
			goto fallback;
		/*
		 * The last instruction is at end_ip, except in a block
		 * libipt ended because its 16-bit count would overflow on
		 * the next stretch of its block cache: end_ip is then where
		 * the next block starts (fpt gives the same), one instruction
		 * on.  The block's last_ip is its last instruction's.
		 */
		if (last && cur != b->end_ip && (b->end_ip < cur ||
		    b->end_ip - cur != x.len))
			goto fallback;
		cls = hwtr_ic_of_x86(&x);
		lens[nlens++] = x.len;
		memcpy(code + ncode, buf, (size_t)x.len);
		ncode += (size_t)x.len;
		if (last || ((cls == HWTR_IC_JUMP || cls == HWTR_IC_CALL) &&
		    x.has_target)) {
			run.end_ip = cur;
			run.ninsn = (uint16_t)nlens;
			run.size = (uint32_t)ncode;
			run.lens = lens;
			run.code = code;
			run.cls = (uint8_t)(last ? map_iclass(b->iclass, cls) :
			    cls);
			if ((rc = add_run_id(d, lb, ix_segw_run_id(&d->w,
			    &run))) < 0)
				return (rc);
			cur = x.has_target && !last ? x.target :
			    cur + (uint64_t)x.len;
			nlens = ncode = 0;
			run.ip = cur;
		} else
			cur += (uint64_t)x.len;
	}
	return (0);
fallback:
	/*
	 * Forget runs made so far: the whole block is one run whose layout
	 * is unknown.  Its last instruction's class as in a run above, from
	 * its bytes where libipt gives none: libipt's block cache ends a
	 * block of a long loop without it (ptic_error), fpt's class is the
	 * instruction's, and the two databases must agree.
	 */
	d->nruns = lb->first;
	lb->nenc = 0;
	cls = -1;
	n = insn_bytes(d, b, b->end_ip, 1, buf);
	if (n > 0 && hwtr_x86_decode(buf, (size_t)n, b->end_ip, mode,
	    &x) == 0)
		cls = hwtr_ic_of_x86(&x);
	memset(&run, 0, sizeof(run));
	run.ip = b->ip;
	run.end_ip = b->end_ip;
	run.isid = b->isid;
	run.ninsn = b->ninsn;
	run.mode = (uint8_t)mode;
	run.cls = (uint8_t)map_iclass(b->iclass, cls);
	return (add_run_id(d, lb, ix_segw_run_id(&d->w, &run)));
}

/* The key of the blocks' table. */
static inline uint64_t
lblock_hash(uint64_t ip, uint64_t end_ip, uint16_t ninsn, int isid)
{
	/* ip ^ end_ip alone would collide for every block of a size. */
	return (ix_hash64(ix_hash64(ip) ^ end_ip ^ ((uint64_t)ninsn << 48) ^
	    ((uint64_t)(uint32_t)isid << 32)));
}

/* ix_dec_lblock_find() past its guess: the table. */
struct ix_lblock *
ix_dec_lblock_probe(struct dec *d, uint64_t ip, uint64_t end_ip,
    uint16_t ninsn, int isid, uint8_t mode)
{
	struct ix_lblock *lb;
	uint64_t h;

	if (d->lcap == 0)
		return (NULL);
	for (h = lblock_hash(ip, end_ip, ninsn, isid);; h++) {
		uint32_t v = d->ltab[h & (d->lcap - 1)];

		if (v == 0)
			return (NULL);
		lb = &d->lb[v - 1];
		if (lb->ip == ip && lb->end_ip == end_ip &&
		    lb->ninsn == ninsn && lb->isid == isid &&
		    lb->mode == mode)
			return (lb);
	}
}

/* Block @b, not seen before: split into runs and added to the table. */
struct ix_lblock *
ix_dec_lblock_new(struct dec *d, const struct pt_block *b)
{
	struct ix_lblock *lb;
	uint64_t h;
	size_t i;
	uint8_t mode = (uint8_t)ix_dec_mode_bits(b->mode);

	assert(b->ninsn > 0);
	if (d->nlb * 2 >= d->lcap) {
		size_t n = d->lcap ? d->lcap * 2 : 4096;
		uint32_t *t = calloc(n, sizeof(*t));

		if (t == NULL) {
			ix_segw_fail(&d->w, -HWTR_E_NOMEM, "out of memory",
			    NULL);
			return (NULL);
		}
		for (i = 0; i < d->nlb; i++) {
			lb = &d->lb[i];
			h = lblock_hash(lb->ip, lb->end_ip, lb->ninsn,
			    lb->isid);
			while (t[h & (n - 1)] != 0)
				h++;
			t[h & (n - 1)] = (uint32_t)i + 1;
		}
		free(d->ltab);
		d->ltab = t;
		d->lcap = n;
	}
	if (hwtr_grow((void **)&d->lb, &d->clb, d->nlb + 1, sizeof(*lb)) < 0) {
		ix_segw_fail(&d->w, -HWTR_E_NOMEM, "out of memory", NULL);
		return (NULL);
	}
	lb = &d->lb[d->nlb];
	memset(lb, 0, sizeof(*lb));
	lb->ip = b->ip;
	lb->end_ip = b->end_ip;
	lb->isid = b->isid;
	lb->ninsn = b->ninsn;
	lb->mode = mode;
	if (split_block(d, lb, b) < 0)
		return (NULL);
	if (lb->nenc <= IX_LB_INLINE)
		memcpy(lb->inl, d->runs + lb->first, lb->nenc);
	/* The slot after the key's others: free, the table half full. */
	assert(d->nlb * 2 < d->lcap);
	for (h = lblock_hash(b->ip, b->end_ip, b->ninsn, b->isid);
	    d->ltab[h & (d->lcap - 1)] != 0; h++)
		;
	d->ltab[h & (d->lcap - 1)] = (uint32_t)d->nlb + 1;
	d->nlb++;
	return (lb);
}
