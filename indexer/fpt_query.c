/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * fpt's trace queries, as libipt's query decoder answers them for its
 * block decoder (fpt_dec.c's trace_step()): the next TNT bit, the next
 * TIP's IP, each with the read-ahead after it that can fail it.
 */

#include <assert.h>
#include <stdint.h>

#include "hwtrace.h"
#include "fpt_int.h"

static int	tnt_read_ahead(struct fpt *);

/*
 * After a TNT packet libipt reads ahead over the status packets that
 * follow, and a bad packet there fails the query that took the TNT, its
 * bits unused; the end of the trace does not.  A TNT-8 or a TIP next (the
 * common case) needs no look.
 */
static int
tnt_read_ahead(struct fpt *d)
{
	int rc;

	if (d->pos >= d->cfg.end || fpti_is_tnt8(*d->pos) ||
	    (*d->pos & 0x1f) == 0x0d)
		return (0);
	/* A PSB+ next is read whole: a bad one fails the query too. */
	if ((rc = fpti_check_ahead(d)) < 0)
		return (rc);
	rc = fpti_read_ahead(d);
	return (rc == -HWTR_E_TRUNCATED ? 0 : rc);
}

/*
 * The next TNT bit.  -HWTR_E_NOENT when the next packet is not a TNT (a
 * TIP or an event: libipt's "bad query"), -HWTR_E_TRUNCATED at the end.
 */
int
fpti_query_cond(struct fpt *d, int *taken)
{
	struct fpt_pkt pkt;
	int rc;

	if (d->ntnt == 0 && d->pos < d->cfg.end && fpti_is_tnt8(*d->pos)) {
		/* The hot path: a TNT-8 next, parsed here. */
		uint8_t b = *d->pos++;

		d->ntnt = 31u - (unsigned)__builtin_clz(b) - 1;
		d->tnt = (b >> 1) & ((1u << d->ntnt) - 1);
		assert(d->ntnt > 0);
		if ((rc = tnt_read_ahead(d)) < 0)
			return (rc);
	} else if (d->ntnt == 0) {
		if ((rc = fpti_read_ahead(d)) < 0 ||
		    (rc = fpti_peek(d, &pkt)) < 0)
			return (rc == -HWTR_E_TRUNCATED ? fpti_cut_query(d, 1) :
			    rc);
		if (pkt.kind != FPT_PKT_TNT)
			return (-HWTR_E_NOENT);
		d->pos += pkt.size;
		d->tnt = pkt.payload;
		d->ntnt = pkt.ntnt;
		assert(d->ntnt > 0);
		if ((rc = tnt_read_ahead(d)) < 0)
			return (rc);
	}
	d->ntnt--;
	*taken = (int)((d->tnt >> d->ntnt) & 1);
	return (0);
}

/*
 * The target of an indirect transfer: its TIP.  An event packet before
 * it is libipt's "bad query" (-HWTR_E_NOENT): events are fetched before
 * a block starts, once the TNT bits before them are used up.
 */
int
fpti_query_indirect(struct fpt *d, uint64_t *to)
{
	struct fpt_pkt pkt;
	struct fpt_event ev;
	int rc;

	for (;;) {
		if (d->pos < d->cfg.end && (*d->pos & 0x1f) == 0x0d &&
		    !d->mode_pending && fpti_tip_fast(d, to))
			return (d->ntnt > 0 ? fpti_check_ahead(d) : 0);
		if ((rc = fpti_read_ahead(d)) < 0 ||
		    (rc = fpti_peek(d, &pkt)) < 0)
			return (rc == -HWTR_E_TRUNCATED ? fpti_cut_query(d, 0) :
			    rc);
		switch (pkt.kind) {
		case FPT_PKT_TNT:
			if (d->ntnt > 0)
				return (-HWTR_E_NOENT);
			d->pos += pkt.size;
			d->tnt = pkt.payload;
			d->ntnt = pkt.ntnt;
			continue;
		case FPT_PKT_FUP:
			/*
			 * libipt's read-ahead took a FUP no event waits for
			 * as an asynchronous branch, whose TIP is its own:
			 * a bad query, or the end if the trace ends first.
			 */
			return (d->nfupq == 0 && fpti_fup_then_end(d, &pkt) ?
			    -HWTR_E_TRUNCATED : -HWTR_E_NOENT);
		case FPT_PKT_TIP:
			/*
			 * The TIP a MODE.exec waits for is the mode's event,
			 * which libipt fetches once the TNT bits are used
			 * up: before that, its query meets an event.
			 */
			if (d->mode_pending && d->ntnt > 0)
				return (-HWTR_E_NOENT);
			d->pos += pkt.size;
			/*
			 * No IP: libipt's query reads ahead after the TIP
			 * before it says so, and an error there comes first.
			 */
			if (fpti_ip_update(d, &pkt, to) < 0)
				return ((rc = fpti_check_ahead(d)) < 0 ? rc :
				    -HWTR_E_DECODE);
			if (d->mode_pending) {
				/*
				 * libipt's fetch of the mode's event reads on
				 * past the TIP: a bad packet there fails it.
				 */
				if ((rc = fpti_check_ahead(d)) < 0)
					return (rc);
				fpti_ev_init(d, &ev, FPT_EV_EXEC_MODE, d->pos);
				ev.tsc = d->mode_tsc;
				ev.has_tsc = (uint8_t)d->mode_has_tsc;
				ev.ip = *to;
				ev.mode = d->next_mode;
				d->mode = d->next_mode;
				d->mode_pending = 0;
				fpti_ev_push(d, &ev);
			}
			return (d->ntnt > 0 ? fpti_check_ahead(d) : 0);
		case FPT_PKT_PSB:
			/* A PSB+ without events: libipt reads on past it. */
			if ((rc = fpti_psb_pass(d, &pkt)) < 0)
				return (rc);
			if (rc == 0)
				return (-HWTR_E_NOENT);
			continue;
		default:
			return (-HWTR_E_NOENT);
		}
	}
}
