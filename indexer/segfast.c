/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The fast Intel PT decoder's block loop (ix_segdec_fast): fpt's blocks
 * written as the indexer's operations directly, between the events that
 * decode.c's loop handles for both decoders.
 *
 * decode.c's loop, made for libipt, does per block what libipt's API
 * asks: the time read and compared, libipt's status flags emulated (an
 * event pending, the end), a struct pt_block filled in, whose last
 * instruction's class fpt_seg.c decodes again from the image when fpt's
 * end kind does not give it, then the block looked up in the blocks seen
 * (struct ix_lblock, lblock.c) and its operations copied.  Here a block
 * seen before costs the lookup (most blocks follow one of the last two
 * successors of the block before them: no hashing) and the copy; the
 * time is compared only; a struct pt_block, and with it the class of the
 * last instruction, is made only for a block not seen before, which
 * lblock.c splits into runs once.  Most blocks come from fpt's memoized
 * runs (fpt_run_rest()): those after a run's first are taken without
 * a peek each, and the operations of a run's blocks are copied at once
 * from the memo fpt keeps beside the run (fast_run()); so are the runs
 * after it that fpt makes from the TNT bits at hand (fpt_run_next(),
 * fast_runs()), their first blocks too.  Where no run follows, a random
 * walk's blocks come many at a time (fpt_walk(), fast_walk()).
 *
 * The operations are those decode.c's loop writes for the same blocks, in
 * the same order: a time (IX_OP_TIME) read after fpt read the block ahead,
 * then the block's runs; the database is the same byte for byte.
 */

#include <assert.h>
#include <intel-pt.h>
#include <stdint.h>
#include <string.h>

#include "hwtr_common.h"
#include "hwtr_ix.h"
#include "fpt.h"
#include "segout.h"

#include "decode_int.h"

/* Block @fb ran: its operations. */
static int
fast_block(struct dec *d, const struct fpt_block *fb)
{
	struct ix_lblock *lb;
	struct pt_block b;

	assert(fb->ninsn > 0 && fb->ninsn <= UINT16_MAX);
	lb = ix_dec_lblock_find(d, fb->ip, fb->end_ip, (uint16_t)fb->ninsn,
	    fb->isid, fb->mode);
	if (lb == NULL) {
		ix_fast_pt_block(d, fb, &b);
		if ((lb = ix_dec_lblock_new(d, &b)) == NULL)
			return (d->w.out->rc < 0 ? d->w.out->rc :
			    -HWTR_E_NOMEM);
	}
	return (ix_dec_lblock_ran(d, lb));
}

/*
 * Whether ix_dec_update_time() would do nothing: fpt's time is the one
 * written last and the image is that time's.
 */
static inline int
fast_time_same(struct dec *d)
{
	uint64_t t;

	if (ix_fast_time(d, &t) < 0)
		return (1);
	return (d->have_tsc && t == d->tsc && d->img_known &&
	    !(d->have_next && t >= d->next_change));
}

/* ix_dec_update_time() when it would do anything. */
static inline int
fast_time(struct dec *d)
{
	return (fast_time_same(d) ? 0 : ix_dec_update_time(d));
}

/*
 * fast_rest() when the memo does not hold these blocks: each block's
 * operations, and the memo kept when they fit.
 */
static int __attribute__((noinline))
fast_fill(struct dec *d, const struct fpt_block *fb,
    const struct fpt_block *rb, size_t n, struct fpt_memo *m, int same)
{
	struct ix_buf *ops = &d->w.out->ops;
	size_t i, at = ops->len;
	int rc;

	if ((rc = fast_block(d, fb)) < 0 ||
	    (!same && (rc = ix_dec_update_time(d)) < 0))
		return (rc);
	for (i = 0; i < n; i++)
		if ((rc = fast_block(d, &rb[i])) < 0)
			return (rc);
	if (same && ops->len - at <= FPT_MEMO_BYTES && n <= UINT8_MAX) {
		m->rb = rb;
		m->n = (uint8_t)n;
		m->len = (uint8_t)(ops->len - at);
		m->tag = d->prev_lb;
		m->aux[0] = d->pnext[0];
		m->aux[1] = d->pnext[1];
		memcpy(m->bytes, ops->p + at, m->len);
	}
	return (0);
}

/*
 * Block @fb, then @n blocks of a memoized run's rest from @rb (n > 0):
 * fpt's position, time, image and events do not move over them, so that
 * fast_peek() would give each with no event, and the time before each
 * but the first is the one compared already (@same: the one written
 * last).  Then the operations of these blocks are those of the same
 * blocks the last time: a copy from the run's memo @m (struct fpt_memo:
 * @tag the last block's index + 1, @aux its successors then, which only
 * guide the next lookup, @bytes the operations), kept the first time
 * (fast_fill()).  0, or < 0 on a failure.
 */
static inline __attribute__((always_inline)) int
fast_rest(struct dec *d, const struct fpt_block *fb,
    const struct fpt_block *rb, size_t n, struct fpt_memo *m, int same,
    uint32_t *nblocks)
{
	struct ix_buf *ops = &d->w.out->ops;
	int rc;

	if (same && m->rb == rb && m->n == n) {
		/* Room for the whole memo: the copy is two stores. */
		if (ops->cap - ops->len < FPT_MEMO_BYTES &&
		    hwtr_grow((void **)&ops->p, &ops->cap, ops->len +
		    FPT_MEMO_BYTES, 1) < 0)
			return (ix_segw_fail(&d->w, -HWTR_E_NOMEM,
			    "out of memory", NULL));
		memcpy(ops->p + ops->len, m->bytes, FPT_MEMO_BYTES);
		ops->len += m->len;
		/*
		 * As ix_dec_lblock_ran() leaves it after the last, but for
		 * the last block's successors, those it had then (rather
		 * than a load from the blocks, likely a cache miss).
		 */
		d->prev_lb = m->tag;
		d->pnext[0] = m->aux[0];
		d->pnext[1] = m->aux[1];
	} else if ((rc = fast_fill(d, fb, rb, n, m, same)) < 0)
		return (rc);
	d->last = rb[n - 1];
	*nblocks += (uint32_t)n + 1;
	return (0);
}

/*
 * Block d->pk, taken, and when fpt gave it from a memoized run, the
 * run's rest (fpt_run_rest()), at most up to the next multiple of 4096
 * blocks (fast_rest()).  0, or < 0 on a failure.
 */
static int
fast_run(struct dec *d, uint32_t *nblocks)
{
	const struct fpt_block *rb = NULL, *rb2 = NULL;
	struct fpt_memo *m = NULL, *m2 = NULL;
	size_t n, lim;
	int rc;

	n = d->w.in->blind_end || !d->pk.runs ? 0 :
	    fpt_run_rest(d->fp, &rb, &m);
	/* The blocks after d->pk up to decode.c's next check. */
	lim = 4095 - (*nblocks & 4095);
	if (n > lim)
		n = lim;
	if (n == 0) {
		++*nblocks;
		d->last = d->pk.block;
		return (fast_block(d, &d->pk.block));
	}
	if ((rc = fast_rest(d, &d->pk.block, rb, n, m, fast_time_same(d),
	    nblocks)) < 0)
		return (rc);
	/* Nothing the blocks did took the run back. */
	assert(fpt_run_rest(d->fp, &rb2, &m2) >= n && rb2 == rb && m2 == m);
	fpt_run_take(d->fp, n);
	return (0);
}

/*
 * After fast_run(), the runs fpt makes next from the TNT bits at hand
 * (fpt_run_next()), taken up to the next multiple of 4096 blocks: fpt
 * reads no trace for them, so that what fast_peek() and fast_time()
 * check before each block stays as they left it (the position, the time
 * and the image the same, no MNT, no event): each run's blocks as
 * fast_run() takes them, after the time before the first run
 * (fast_time(), which fast_run() did not check when it took one block),
 * the one written last from there.  Then fpt's next item is
 * fast_peek()'s to read as before.  0, or < 0 on a failure.
 */
static int
fast_runs(struct dec *d, uint32_t *nblocks)
{
	const struct fpt_block *rb;
	struct fpt_memo *m;
	size_t n;
	/* The count in a register, *@nblocks set once. */
	uint32_t nb = *nblocks;
	int rc = 0, first = 1;

	while ((nb & 4095) != 0 && (n = fpt_run_next(d->fp,
	    4096 - (nb & 4095), &rb, &m)) > 0) {
		if (first && (rc = fast_time(d)) < 0)
			break;
		first = 0;
		if (n > 1)
			rc = fast_rest(d, rb, rb + 1, n - 1, m, 1, &nb);
		else {
			++nb;
			d->last = rb[0];
			rc = fast_block(d, rb);
		}
		if (rc < 0)
			break;
	}
	*nblocks = nb;
	return (rc < 0 ? rc : 0);
}

#define WALK_MAX	256	/* fpt_walk()'s blocks a call */

/*
 * After a block after which fpt says no run follows (d->pk.runs 0), the
 * random walk's blocks fpt gives next (fpt_walk()), taken up to the next
 * multiple of 4096 blocks: fpt reads only TNT and TIP packets for them,
 * so that what fast_peek() checks before each block holds (no event, no
 * MNT, the image the same) and the time fast_time() compares before
 * each is the same, at the first as after the last: compared once.
 * d->cur_off is then where fpt stopped, as fast_peek() would have left
 * it after the last.  Out of line, its buffer with it: ix_fast_blocks()
 * stays as it was where no walk comes.  0, or < 0 on a failure.
 */
static int __attribute__((noinline))
fast_walk(struct dec *d, uint32_t *nblocks)
{
	struct fpt_block b[WALK_MAX];
	size_t n, i, max;
	uint32_t nb = *nblocks;
	int rc = 0, first = 1;

	while ((nb & 4095) != 0) {
		max = 4096 - (nb & 4095);
		if ((n = fpt_walk(d->fp, b, max < WALK_MAX ? max :
		    WALK_MAX)) == 0)
			break;
		if (first && (rc = fast_time(d)) < 0)
			break;
		first = 0;
		for (i = 0; i < n && rc >= 0; i++)
			rc = fast_block(d, &b[i]);
		if (rc < 0)
			break;
		nb += (uint32_t)n;
		d->last = b[n - 1];
		if (n < WALK_MAX)
			break;
	}
	if (!first)
		d->cur_off = fpt_offset(d->fp);
	*nblocks = nb;
	return (rc < 0 ? rc : 0);
}

int
ix_fast_blocks(struct dec *d, int *statusp, uint32_t *nblocks)
{
	int status, rc;
	uint32_t nb;

	/* decode.c's loop comes here when fpt read a block ahead. */
	assert(d->fp != NULL && d->pk_state == 1 &&
	    d->pk.kind == FPT_ITEM_BLOCK);
	for (;;) {
		d->pk_state = 0;
		d->cur_off = d->pk_off;
		nb = *nblocks + 1;
		if ((rc = fast_run(d, nblocks)) < 0)
			return (rc);
		/*
		 * A full block: segloop.c's check for a loop that reads no
		 * trace, as for libipt's (a run's blocks take a TNT bit
		 * each, a walk's a TNT bit or a TIP: never such a loop's).
		 */
		if (__builtin_expect(d->pk.block.ninsn >= IX_BLK_FULL_MIN,
		    0) && ix_dec_loop_check(d, d->pk.block.ip,
		    d->pk.block.end_ip, d->pk.block.ninsn, d->pk.block.isid,
		    d->pk.block.mode, nb)) {
			*statusp = 0;
			return (0);
		}
		/* No run follows a block fpt says none does (runs 0). */
		if (!d->w.in->blind_end && (rc = d->pk.runs ?
		    fast_runs(d, nblocks) : fast_walk(d, nblocks)) < 0)
			return (rc);
		status = ix_fast_peek(d);
		/*
		 * An event, the end, fpt giving up; a segment cut without a
		 * PSB, whose limit decode.c checks after each block; the
		 * progress and cancel checks every 4096 blocks: decode.c's.
		 */
		if (status != 0 || d->w.in->blind_end ||
		    (*nblocks & 4095) == 0)
			break;
		assert(d->pk_state == 1 && d->pk.kind == FPT_ITEM_BLOCK);
		/* As decode.c's loop before each block. */
		if ((rc = fast_time(d)) < 0)
			return (rc);
	}
	*statusp = status;
	return (0);
}
