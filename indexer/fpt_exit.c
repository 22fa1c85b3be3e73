/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * A syscall's exit from a user-only trace, the short way: a TIP.PGD
 * without IP after the last TNT bit, maybe a TSC, the TIP.PGE that
 * resumes tracing, then a TNT-8 or a TIP.  The general way (fpt_dec.c's
 * next_item()) fetches the disable (fpti_fetch_event()), dry-runs
 * libipt's read-ahead after it (fpti_check_ahead()), steps to the
 * instruction it binds to one at a time (proceed_to_async()), and
 * dry-runs the fetch after each of the two events it hands over
 * (fpti_trail_error()): some 3,000 instructions an exit.  For the shape
 * above every dry run finds nothing, by reading the packets' headers,
 * and the stepping is memoized per start address: fpti_exit() makes
 * the block and queues the disable as that way does, and the two
 * handovers skip their dry runs (fpti_trail_known()).  Anything else
 * goes the general way.
 */

#include <assert.h>
#include <stddef.h>
#include <stdint.h>

#include "hwtrace.h"
#include "fpt_int.h"

/* A TIP.PGD without IP, a TSC. */
#define FPT_PGD_NOIP	0x01
#define FPT_TSC_HDR	0x19
#define FPT_TSC_SIZE	8

static struct fpt_exit *
exit_slot(struct fpt *d, uint64_t ip)
{
	return (&d->exit[(ip ^ (ip >> FPT_EXIT_BITS) ^
	    (ip >> (2 * FPT_EXIT_BITS))) & ((1u << FPT_EXIT_BITS) - 1)]);
}

_Static_assert(sizeof(struct fpt_event) == 56,
    "exit_event() sets every field of an event");

/*
 * fpti_ev_init() field by field: its memset of the whole event is a
 * slow string instruction to gcc, twice an exit.
 */
static void
exit_event(const struct fpt *d, struct fpt_event *ev, uint8_t kind,
    const uint8_t *at)
{
	ev->kind = kind;
	ev->ip_suppressed = 0;
	ev->status_update = 0;
	ev->psb_left = 0;
	ev->has_tsc = (uint8_t)d->has_tsc;
	ev->mode = 0;
	ev->error = 0;
	ev->ip = 0;
	ev->to = 0;
	ev->tsc = d->has_tsc ? d->tsc : 0;
	ev->offset = (uint64_t)(at - d->cfg.begin);
	ev->payload = 0;
}

/*
 * The size of the TIP.PGE at @p (before @end) when it is whole and has
 * an IP (a 16-, 32- or 48-bit update, a sign-extended 48-bit or a full
 * IP, the compressions libipt takes), or 0.
 */
static unsigned
pge_size(const uint8_t *p, const uint8_t *end)
{
	static const uint8_t size[8] = { 0, 3, 5, 7, 7, 0, 9, 0 };
	unsigned n;

	if (p >= end || (*p & 0x1f) != 0x11)
		return (0);
	n = size[*p >> 5];
	return (n != 0 && end - p >= (ptrdiff_t)n ? n : 0);
}

/*
 * The syscall's exit at d->pos, the short way: 1 with the block before
 * the disable in @it, the disable queued, as next_item() leaves them; 0,
 * nothing changed, for the general way.  Called where the hot path
 * gives up (d->hot), with a TIP.PGD without IP at d->pos.
 */
int
fpti_exit(struct fpt *d, struct fpt_item *it)
{
	const uint8_t *p = d->pos, *end = d->cfg.end, *q;
	const struct fpt_exit *x;
	struct fpt_block *b = &it->block;
	struct fpt_event *ev;
	unsigned n;

	assert(d->hot && p < end && *p == FPT_PGD_NOIP);
	/*
	 * d->hot: no event waits, tracing is on, no MODE.exec waits, the
	 * block cache is the last span's; the rest is checked here: no TNT
	 * bit left, d->ip in the span (whose isid the memo is keyed by,
	 * as block_next()'s code_at() finds it), no FUP or event bound.
	 */
	if (d->ntnt > 0 || d->ip - d->last.lo >= d->hot || d->nfupq > 0 ||
	    d->nmore > 0 || d->bind)
		return (0);
	/*
	 * The trail: a TSC (a status packet, whose update cannot fail
	 * outside a PSB+), a TIP.PGE with an IP, then a TNT-8 or a whole
	 * TIP of 16 bits.  libipt's read-ahead after the disable stops at
	 * the TIP.PGE, the fetch after it at the TNT or TIP: both find
	 * nothing, and so does the fetch after the enable.
	 */
	q = p + 1;
	if (end - q >= FPT_TSC_SIZE && *q == FPT_TSC_HDR)
		q += FPT_TSC_SIZE;
	if ((n = pge_size(q, end)) == 0)
		return (0);
	q += n;
	if (!(end - q >= 1 && fpti_is_tnt8(*q)) &&
	    !(end - q >= 3 && *q == FPT_TIP16))
		return (0);
	x = exit_slot(d, d->ip);
	if (x->ip != d->ip || x->tag != fpt_cache_tag(d->last.isid, d->mode, 0))
		return (0);
	/*
	 * fpti_fetch_event()'s TIP.PGD: the disable waits for the flow
	 * (d->async_ev, read only while d->async, which is left unset:
	 * the event goes to the queue at once).
	 */
	assert(d->evq_n == 0);
	ev = &d->evq[d->evq_head];
	exit_event(d, ev, FPT_EV_DISABLED, p);
	ev->ip_suppressed = 1;
	d->pos = p + 1;
	/* block_run() and proceed_to_async(), memoized. */
	it->kind = FPT_ITEM_BLOCK;
	b->ip = d->ip;
	b->end_ip = x->end_ip;
	b->ninsn = x->ninsn;
	b->mode = d->mode;
	b->end = FPT_END_NONE;
	b->isid = d->last.isid;
	d->ip = x->resume;
	/* fpti_async_reached(): the disable happens. */
	d->evq_n = 1;
	d->enabled = 0;
	/* next_item()'s, which the next calls go to. */
	d->hot = 0;
	d->trail_ok[0] = p + 1;
	d->trail_ok[1] = q;
	return (1);
}

/*
 * The enable after an exit fpti_exit() took, once its disable is handed
 * over: 1 with it in @it, as disabled_next() and next_item() give it
 * (libipt's read-ahead over the TSC, the TIP.PGE); 0, nothing changed,
 * for them.  Called by next_item() with tracing off and no event queued.
 */
int
fpti_enter(struct fpt *d, struct fpt_item *it)
{
	const uint8_t *p = d->pos;
	struct fpt_event *ev = &it->event;
	struct fpt_pkt pkt;
	uint64_t ip;
	int rc;

	if (p != d->trail_ok[0] || d->mode_pending || d->nfupq > 0 ||
	    d->evq_n > 0)
		return (0);
	/*
	 * fpti_read_ahead(): a TSC, then it stops at the TIP.PGE; the
	 * packets parsed here as fpt_pkt_parse() does, fpti_exit() having
	 * seen them whole.
	 */
	pkt.flags = pkt.ntnt = pkt.ipc = 0;
	pkt.payload2 = 0;
	if (*p == FPT_TSC_HDR) {
		pkt.kind = FPT_PKT_TSC;
		pkt.size = FPT_TSC_SIZE;
		pkt.payload = fpt_pkt_le(p + 1, FPT_TSC_SIZE - 1);
		rc = fpti_time_ahead(d, &pkt);
		/* A TSC's update fails only in a PSB+. */
		assert(rc == 0);
		(void)rc;
		fpti_time_pass(d, pkt.size);
		d->pos = p += FPT_TSC_SIZE;
	}
	/* disabled_next()'s TIP.PGE, handed over at once. */
	pkt.kind = FPT_PKT_TIP_PGE;
	pkt.size = (uint8_t)pge_size(p, d->cfg.end);
	pkt.ipc = *p >> 5;
	pkt.payload = fpt_pkt_le(p + 1, pkt.size - 1u);
	assert(pkt.size > 0 && p + pkt.size == d->trail_ok[1]);
	it->kind = FPT_ITEM_EVENT;
	exit_event(d, ev, FPT_EV_ENABLED, p);
	rc = fpti_ip_update(d, &pkt, &ip);
	assert(rc == 0);
	d->pos = p + pkt.size;
	ev->ip = ip;
	d->ip = ip;
	d->enabled = 1;
	return (1);
}

/*
 * proceed_to_async() stepped from @b's start to a TIP.PGD without IP
 * that binds to @b's last instruction, pushing nothing: memoize it.
 */
void
fpti_exit_put(struct fpt *d, const struct fpt_block *b)
{
	struct fpt_exit *x = exit_slot(d, b->ip);

	assert(b->ninsn > 0 && b->isid > 0);
	x->ip = b->ip;
	x->tag = fpt_cache_tag(b->isid, b->mode, 0);
	x->end_ip = b->end_ip;
	x->resume = d->ip;
	x->ninsn = b->ninsn;
}
