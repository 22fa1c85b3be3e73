/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The Intel PT segment decoder's state (decode.c), shared with the code
 * that puts fpt in the place of libipt's block decoder (fpt_seg.c): the
 * ix_src_* calls are libipt's pt_blk_* ones when @blk is set, fpt's
 * otherwise.
 */

#ifndef HWTR_IX_DECODE_INT_H
#define HWTR_IX_DECODE_INT_H

#include <intel-pt.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hwtr_common.h"
#include "fpt.h"
#include "segout.h"

/*
 * A libipt block, as split into contiguous runs (split_block()): the
 * operations that say its runs ran, encoded once (IX_LB_INLINE bytes or
 * fewer in @inl, more at @first in dec.runs), so that a block seen again
 * costs a copy of a few bytes.
 */
#define IX_LB_INLINE	8
struct ix_lblock {
	uint64_t	ip, end_ip;
	int		isid;
	uint16_t	ninsn;
	uint8_t		mode;
	uint32_t	first, nenc;	/* bytes in dec.runs */
	/*
	 * The last two successors' indexes + 1, the latest first: a
	 * conditional branch has two, and most blocks follow one of them.
	 */
	uint32_t	next[2];
	uint8_t		inl[IX_LB_INLINE];
};

/*
 * The walk over full blocks that read no trace (segloop.c,
 * ix_dec_loop_check()): the instructions of consecutive full blocks,
 * followed from the image, as Brent's cycle search goes over them.  A
 * block is full when it holds IX_BLK_FULL instructions (pt_block.ninsn's
 * largest) or nearly: libipt ends a block where the next entry of its
 * block cache, up to 255 instructions, would not fit.
 */
#define IX_BLK_FULL	0xffff
#define IX_BLK_FULL_MIN	(IX_BLK_FULL - 254)
struct ix_loop {
	int		armed;		/* the next full block may continue */
	int		stuck;		/* an instruction came again */
	int		isid, mode;
	uint32_t	nblk;		/* the last walked block's number */
	uint64_t	off;		/* the trace offset over the walk */
	uint64_t	next_ip;	/* where the walk goes on */
	uint64_t	tort;		/* Brent's: the instruction kept */
	uint64_t	power, lam;	/* ... the steps till the next, done */
	uint64_t	at;		/* stuck: the last block's end */
};

/* A worker's decoder of one segment (ix_segdec_libipt). */
struct dec {
	struct ix_segw	w;		/* its output */
	struct pt_image_section_cache *isc;
	struct pt_block_decoder *blk;
	struct pt_image	*img;
	uint64_t	base;		/* stream offset of the current buffer */
	/* libipt blocks seen, and their runs' operations (encoded). */
	struct ix_lblock *lb;
	size_t		nlb, clb;
	uint32_t	*ltab;
	size_t		lcap;
	uint8_t		*runs;
	size_t		nruns, cruns;
	/*
	 * Where split_block() (lblock.c) lays out a new block's lengths
	 * and bytes: as large as the largest block seen (unrolled code
	 * has blocks of thousands of instructions).
	 */
	uint8_t		*sp_lens, *sp_code;
	size_t		sp_clens, sp_ccode;
	uint32_t	prev_lb;	/* index + 1 of the last libipt block */
	uint32_t	pnext[2];	/* a copy of its next[] */
	/*
	 * The time as this segment knows it: a time is written when it
	 * differs from this (the stitcher checks again against the stream's).
	 */
	int		have_tsc;
	uint64_t	tsc;
	/* Which mapping state the image reflects. */
	int		img_known;	/* built for a known time */
	int		have_next;
	uint64_t	next_change;
	/* Where the next segment starts, relative to the buffer. */
	int		has_limit;
	uint64_t	limit;
	int		own_psb;	/* draining the synced PSB+'s events */
	int		seen_disable;	/* libipt knows where it stopped */
	/*
	 * ix_segdec_fast: fpt instead of libipt's block decoder (@blk
	 * NULL), its next item read ahead (@pk_state 1; 2: the end) to say
	 * what libipt's status flags say; the maps of the current image for
	 * its code reads; @bail: why it gave up (1 unsupported, 2 a decode
	 * error), the segment going to libipt.
	 */
	int		fast;
	struct fpt	*fp;
	struct fpt_item	pk;
	int		pk_state;
	int		bail;
	const char	*bail_why;
	int		have_dis_ip;	/* libipt's decoder->ip, for "resumed" */
	uint64_t	dis_ip;
	struct fpt_block last;		/* the last block given */
	uint64_t	evoff;		/* the last event's packet */
	/* fpt's offset after the item read ahead, and the last taken. */
	uint64_t	pk_off, cur_off;
	const uint8_t	*fbuf;		/* fpt's trace */
	size_t		flen;
	size_t		*act;
	size_t		nact, cact;
	int		act_known;
	uint64_t	act_t;
	struct ix_loop	loop;
	void		*stk;		/* libipt's stack (decode.c), or NULL */
};

/* The size of libipt's stack (decode.c, seg_decode_ipt()). */
#define IX_DEC_STACK	((size_t)32 << 20)

/*
 * segimage.c: the image for time @t (@known; otherwise the state at the
 * end of the capture), and the time read (switching images when the
 * mapping state changed).
 */
int ix_dec_set_image(struct dec *d, int known, uint64_t t);
int ix_dec_update_time(struct dec *d);

/* lblock.c: the blocks seen (struct ix_lblock). */
struct ix_lblock *ix_dec_lblock_probe(struct dec *d, uint64_t ip,
    uint64_t end_ip, uint16_t ninsn, int isid, uint8_t mode);
/* Block @b, not seen before: split into runs and added to the table. */
struct ix_lblock *ix_dec_lblock_new(struct dec *d, const struct pt_block *b);

static inline int
ix_dec_mode_bits(enum pt_exec_mode m)
{
	switch (m) {
	case ptem_16bit:
		return (16);
	case ptem_32bit:
		return (32);
	default:
		return (64);
	}
}

/*
 * The block seen before with this key, or NULL.  Inline, for both
 * decoders' loops: most blocks follow the block before them as one of
 * the last two times, which needs no hashing.
 */
static inline struct ix_lblock *
ix_dec_lblock_find(struct dec *d, uint64_t ip, uint64_t end_ip,
    uint16_t ninsn, int isid, uint8_t mode)
{
	struct ix_lblock *lb, *c0;

	if (d->pnext[0] != 0) {
		c0 = &d->lb[d->pnext[0] - 1];
		/* The candidate chosen without a branch to mispredict. */
		lb = d->pnext[1] != 0 && c0->ip != ip ?
		    &d->lb[d->pnext[1] - 1] : c0;
		if (lb->ip == ip && lb->end_ip == end_ip &&
		    lb->ninsn == ninsn && lb->isid == isid &&
		    lb->mode == mode)
			return (lb);
	}
	return (ix_dec_lblock_probe(d, ip, end_ip, ninsn, isid, mode));
}

/* Block @lb ran: its operations, and it is the one before the next. */
static inline int
ix_dec_lblock_ran(struct dec *d, struct ix_lblock *lb)
{
	struct ix_buf *ops = &d->w.out->ops;
	uint32_t id;

	id = (uint32_t)(lb - d->lb) + 1;
	if (d->prev_lb != 0 && d->pnext[0] != id) {
		uint32_t *nx = d->lb[d->prev_lb - 1].next;

		nx[1] = d->pnext[0];
		nx[0] = id;
	}
	d->prev_lb = id;
	d->pnext[0] = lb->next[0];
	d->pnext[1] = lb->next[1];
	/*
	 * The next block is most likely one of these: fetch them while
	 * the decoder decodes it, rather than wait for them after.
	 */
	if (lb->next[0] != 0)
		__builtin_prefetch(&d->lb[lb->next[0] - 1]);
	if (lb->next[1] != 0)
		__builtin_prefetch(&d->lb[lb->next[1] - 1]);
	/* Room for IX_LB_INLINE bytes more, so that a copy is one store. */
	if (ops->cap - ops->len < lb->nenc + IX_LB_INLINE &&
	    hwtr_grow((void **)&ops->p, &ops->cap, ops->len + lb->nenc +
	    IX_LB_INLINE, 1) < 0)
		return (ix_segw_fail(&d->w, -HWTR_E_NOMEM, "out of memory",
		    NULL));
	if (lb->nenc <= IX_LB_INLINE)
		memcpy(ops->p + ops->len, lb->inl, IX_LB_INLINE);
	else
		memcpy(ops->p + ops->len, d->runs + lb->first, lb->nenc);
	ops->len += lb->nenc;
	return (0);
}

/*
 * segloop.c: block number @nblk, full (@ninsn IX_BLK_FULL_MIN or more
 * instructions from @ip to @end_ip), ran: 1 when its instructions and
 * those of the full blocks right before it, with no trace read, pass an
 * instruction twice (the decoder would follow them for ever), 0
 * otherwise.
 */
int ix_dec_loop_check(struct dec *d, uint64_t ip, uint64_t end_ip,
    unsigned ninsn, int isid, int mode, uint32_t nblk);

/* fpt_seg.c: helpers of both. */
size_t ix_dec_owner_idx(const struct dec *d, uint64_t t);
size_t ix_dec_read_code(struct dec *d, int isid, uint64_t vaddr,
    uint8_t *buf, size_t n);

/* libipt's calls, or fpt's in their place. */
int ix_src_next(struct dec *d, struct pt_block *b);
int ix_src_event(struct dec *d, struct pt_event *ev);
int ix_src_sync_forward(struct dec *d);
int ix_src_offset(struct dec *d, uint64_t *off);
int ix_src_sync_offset(struct dec *d, uint64_t *off);
int ix_fast_new(struct dec *d, const uint8_t *buf, size_t len);
/* fpt_seg.c: fpt's next item read ahead; its block as libipt's. */
int ix_fast_peek(struct dec *d);
int ix_fast_time_ahead(struct dec *d, uint64_t *t);

/*
 * fpt's time as libipt's pt_blk_time() gives it before fpt's next item;
 * -1 before any.  Inline for segfast.c's loop: the usual case is that
 * no TSC was read ahead after the last item.
 */
static inline int
ix_fast_time(struct dec *d, uint64_t *t)
{
	int rc, ahead;

	rc = fpt_time_at(d->fp, d->cur_off, t, &ahead);
	return (ahead ? ix_fast_time_ahead(d, t) : rc);
}
void ix_fast_pt_block(struct dec *d, const struct fpt_block *fb,
    struct pt_block *b);

/*
 * segfast.c: fpt's blocks from the one read ahead (d->pk) while no event
 * comes, as operations; *@statusp as libipt's after the last, *@nblocks
 * counted up to the next multiple of 4096 at most.
 */
int ix_fast_blocks(struct dec *d, int *statusp, uint32_t *nblocks);

#endif /* !HWTR_IX_DECODE_INT_H */
