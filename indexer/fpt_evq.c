/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The bottom of fpt's packet layer, below its events (fpt_ev.c) and its
 * PSB+ (fpt_psb.c): the packet at the position, parsed once; the IP an
 * IP packet gives over the last IP; the event queue; unsupported.
 */

#include <assert.h>
#include <string.h>

#include "hwtrace.h"
#include "fpt_int.h"

/* The packet at d->pos, parsed once however often it is looked at. */
int
fpti_peek(struct fpt *d, struct fpt_pkt *pkt)
{
	int rc;

	if (d->pk_pos == d->pos && d->pos != NULL) {
		*pkt = d->pk;
		return (pkt->size);
	}
	rc = fpt_pkt_parse(d->pos, d->cfg.end, pkt);
	/*
	 * libipt 2.0 knows no BBP, BEP, CFE or EVD: without a decode
	 * callback they are bad opcodes to it.
	 */
	if (rc > 0 && pkt->kind == FPT_PKT_UNKNOWN)
		return (-HWTR_E_FORMAT);
	if (rc > 0) {
		d->pk = *pkt;
		d->pk_pos = d->pos;
	}
	return (rc);
}

/*
 * The IP of an IP packet, from its compressed payload and the last IP.
 * -HWTR_E_NOENT when it is suppressed.
 */
int
fpti_ip_update(struct fpt *d, const struct fpt_pkt *pkt, uint64_t *ip)
{
	uint64_t v = pkt->payload;

	switch (pkt->ipc) {
	case FPT_IPC_SUPPRESSED:
		return (-HWTR_E_NOENT);
	case FPT_IPC_UPD16:
		v = (d->last_ip & ~0xffffull) | (v & 0xffff);
		break;
	case FPT_IPC_UPD32:
		v = (d->last_ip & ~0xffffffffull) | (v & 0xffffffff);
		break;
	case FPT_IPC_SEXT48:
		v &= 0xffffffffffffull;
		if (v & (1ull << 47))
			v |= 0xffff000000000000ull;
		break;
	case FPT_IPC_UPD48:
		v = (d->last_ip & ~0xffffffffffffull) |
		    (v & 0xffffffffffffull);
		break;
	case FPT_IPC_FULL:
		break;
	default:
		return (-HWTR_E_DECODE);
	}
	d->last_ip = v;
	d->have_ip = 1;
	*ip = v;
	return (0);
}

void
fpti_ev_init(struct fpt *d, struct fpt_event *ev, int kind, const uint8_t *at)
{
	memset(ev, 0, sizeof(*ev));
	ev->kind = (uint8_t)kind;
	/* Without a TSC since the sync libipt's event time is 0. */
	ev->tsc = d->has_tsc ? d->tsc : 0;
	ev->has_tsc = (uint8_t)d->has_tsc;
	ev->offset = (uint64_t)(at - d->cfg.begin);
}

void
fpti_ev_push(struct fpt *d, const struct fpt_event *ev)
{
	assert(d->evq_n < FPT_EVQ_MAX);
	d->evq[(d->evq_head + d->evq_n) % FPT_EVQ_MAX] = *ev;
	d->evq_n++;
}

int
fpti_unsupported(struct fpt *d, const char *why)
{
	d->unsup = why;
	return (-HWTR_E_UNSUPPORTED);
}
