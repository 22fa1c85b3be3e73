/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * fpt's synchronization: the next PSB, its PSB+, and what libipt's sync
 * reads after it (the first packet that matters, the first event), so
 * that a sync fails, or holds with its status updates, where libipt's
 * does.
 */

#include <assert.h>
#include <stddef.h>

#include "hwtrace.h"
#include "fpt_int.h"

/*
 * Resynchronize at the next PSB after the current position (after the
 * last PSB when the position has not moved past it), as libipt's
 * pt_blk_sync_forward() does, and read its PSB+.
 */
int
fpt_sync_forward(struct fpt *d)
{
	const uint8_t *from = d->pos;
	ptrdiff_t off;
	int rc;

	d->run_b = NULL;
	if (d->sync != NULL && from <= d->sync)
		from = d->sync + 16;
	/* A PSB partly consumed by the packet before is still found. */
	from = from - d->cfg.begin >= 15 ? from - 15 : d->cfg.begin;
	if (d->sync != NULL && from < d->sync + 16)
		from = d->sync + 16;
	if (from > d->cfg.end)
		from = d->cfg.end;
	off = fpt_pkt_find_psb(d->cfg.begin, from, d->cfg.end);
	d->unsup = NULL;
	d->hot = 0;
	d->evq_n = d->evq_head = 0;
	d->async = 0;
	d->bind = d->post = 0;
	d->nmore = 0;
	d->nfupq = 0;
	d->synced = 0;
	d->sync_ahead = NULL;
	d->have_quiet = 0;
	/* pt_blk_reset(): a new asid; the section stays mapped. */
	d->asid_cr3 = d->asid_vmcs = FPT_NO_ASID;
	if (off < 0) {
		d->pos = d->cfg.end;
		d->eos = 1;
		return (FPT_EOS);
	}
	d->sync = d->cfg.begin + off;
	d->pos = d->sync;
	d->eos = 0;
	d->have_ip = 0;
	d->last_ip = 0;
	d->ntnt = 0;
	d->tnt = 0;
	d->rs_n = d->rs_top = 0;
	d->mode_pending = 0;
	d->enabled = 0;
	d->mode = 0;
	fpti_time_reset(d);
	d->synced = 1;
	d->in_sync = 1;
	rc = fpti_read_psb_plus(d);
	d->in_sync = 0;
	if (rc != 0)
		return (rc);
	/*
	 * libipt reads on to the first packet that matters when it syncs: a
	 * bad packet there fails the sync, status updates and all, and so
	 * does a PSB+ there that it cannot read.
	 */
	if ((rc = fpti_read_ahead(d)) == 0)
		rc = fpti_check_ahead(d);
	/* libipt's sync reads on into a PSB+ next, and takes its FUP. */
	d->sync_ahead = !d->enabled && d->evq_n == 0 ? d->pos : NULL;
	if (rc < 0 && rc != -HWTR_E_TRUNCATED) {
		/* The sync's PSB+ queues its updates (tracing is off to it). */
		unsigned nst = d->evq_n;
		struct fpt_event ev;

		if (rc == -HWTR_E_UNSUPPORTED)
			return (rc);
		assert(!d->async && d->nmore == 0);
		/*
		 * libipt fetches each event as it hands over the one before:
		 * of n status updates the first n - 2 go out, and the fetch
		 * of the last fails while the one before it is handed over.
		 */
		d->evq_n = nst > 2 ? nst - 2 : 0;
		d->enabled = 0;
		d->synced = 0;
		if (nst < 2)
			return (-HWTR_E_DECODE);
		/*
		 * With two status updates or more the sync itself holds: the
		 * failed fetch is an error item after those.  The one whose
		 * hand-over fails is processed all the same: a PIP's or a
		 * VMCS's new asid unmaps libipt's section, and without an
		 * image section cache its block cache goes (next_item()).
		 * Kept before the error's push takes its slot.
		 */
		d->quiet_ev = d->evq[(d->evq_head + nst - 2) % FPT_EVQ_MAX];
		d->have_quiet = 1;
		fpti_ev_init(d, &ev, FPT_EV_ERROR, d->pos);
		ev.error = -HWTR_E_DECODE;
		fpti_ev_push(d, &ev);
		return (0);
	}
	/*
	 * After a PSB+ without status updates libipt's sync fetches the
	 * first event itself: the end of the trace or a bad packet in that
	 * fetch fails the sync.
	 */
	if (d->evq_n == 0 && (rc = fpti_trail_error(d)) != 0) {
		if (rc == -HWTR_E_UNSUPPORTED)
			return (rc);
		d->enabled = 0;
		d->synced = 0;
		if (rc == FPT_EOS) {
			d->eos = 1;
			return (FPT_EOS);
		}
		return (-HWTR_E_DECODE);
	}
	return (0);
}
