/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * fpt's dry run of libipt's trailing event: once the block decoder hands
 * an event over it fetches the next when an event packet is next
 * (pt_blk_event()), and a bad packet in that fetch, or in the read after
 * it, fails the event already handed over (fpti_trail_error()).  Split
 * from fpt_ev.c, whose read-ahead and reader's marks it uses.
 */

#include "hwtrace.h"
#include "fpt_int.h"

static int	trail_error(struct fpt *);
static int	trail_step(const struct fpt *, const struct fpt_pkt *, int,
		    int *, int *);

/*
 * What the next event's packets do when libipt fetches them (a dry run
 * of its pt_qry_event from d->pos): 1 the event is complete, 0 it waits
 * for a TIP (@tip) or a FUP (@fup) that follows, -1 this is no event
 * packet there, -2 libipt fails it (a bad packet).
 */
static int
trail_step(const struct fpt *d, const struct fpt_pkt *pkt, int asy, int *tip,
    int *fup)
{
	switch (pkt->kind) {
	case FPT_PKT_TIP_PGE:
		/* libipt's enabled event cannot do without its IP. */
		return (pkt->ipc == FPT_IPC_SUPPRESSED ? -2 : 1);
	case FPT_PKT_TIP_PGD:
	case FPT_PKT_OVF:
	case FPT_PKT_STOP:
	case FPT_PKT_PWRE:
	case FPT_PKT_PWRX:
	case FPT_PKT_CBR:
	case FPT_PKT_MNT:
		return (1);
	case FPT_PKT_TIP:
		return (*tip ? 1 : -1);
	case FPT_PKT_FUP:
		return (*fup ? 1 : -1);
	case FPT_PKT_MODE_EXEC:
		*tip = 1;
		return (0);
	case FPT_PKT_MODE_TSX:
		/* Standalone while tracing is off. */
		if (!d->enabled)
			return (1);
		*fup = 1;
		return (0);
	case FPT_PKT_MWAIT:
		*fup = 1;
		return (0);
	case FPT_PKT_PTW:
	case FPT_PKT_EXSTOP:
		if (pkt->flags == 0)
			return (1);
		*fup = 1;
		return (0);
	case FPT_PKT_PIP:
	case FPT_PKT_VMCS:
		/*
		 * They wait for the TIP of an asynchronous branch begun in
		 * this fetch (@asy, its FUPs), tracing or not; without one
		 * they are events of their own (pt_qry_decode_pip).
		 */
		if (asy == 0)
			return (1);
		*tip = 1;
		return (0);
	default:
		return (-1);
	}
}

/*
 * libipt hands over an event and then fetches the one after it, when an
 * event packet is next (pt_blk_event's trailing event); a bad packet
 * while it decodes that one, or while it reads on after it, fails the
 * event already handed over.  Returns that error with d->pos at the bad
 * packet, or 0 with the decoder as it was (the next event's packets are
 * decoded for real when the flow reaches them), or FPT_EOS when the
 * trace ends in the next event's packets, or unsupported.
 */
int
fpti_trail_error(struct fpt *d)
{
	int rc, en = d->enabled;

	rc = trail_error(d);
	d->enabled = en;
	return (rc);
}

/*
 * fpti_trail_error()'s dry run, which leaves d->enabled as a TIP.PGE or
 * TIP.PGD it passes sets it for what it reads after (BDM70).
 */
static int
trail_error(struct fpt *d)
{
	const char *unsup = d->unsup;
	struct fpt_mark m;
	struct fpt_pkt pkt;
	/* A MODE.exec read before waits in libipt's queue for its TIP. */
	int tip = d->mode_pending, fup = 0, rc, done = 0, step, cls;
	int begun = 0, asy = 0, modew = d->mode_pending, eaten = 0;
	unsigned nfupq, nfw = 0, nfc = 0;

	if (d->ntnt > 0 || d->async)
		return (0);
	/*
	 * Events a fetch before queued for a FUP (a MWAIT before the
	 * TIP.PGE) are this fetch's: their FUP completes it.
	 */
	if (d->nfupq > 0) {
		fup = 1;
		nfw = d->nfupq;
		nfc = fpti_fup_consumed(d);
	}
	fpti_mark_save(d, &m);
	for (;;) {
		/*
		 * With an event waiting for a FUP (@fup), libipt's read-ahead
		 * stops at the FUP, as fpt's does for those in d->fupq.
		 */
		nfupq = d->nfupq;
		if (fup && nfupq == 0)
			d->nfupq = 1;
		else if (!fup && eaten)
			d->nfupq = 0;
		rc = fpti_read_ahead(d);
		d->nfupq = nfupq;
		if (rc < 0)
			break;
		rc = fpti_peek(d, &pkt);
		if (rc > 0 && pkt.kind == FPT_PKT_PSB)
			rc = fpti_psb_plus_ok(d, d->pos + pkt.size);
		if (rc < 0)
			break;
		/*
		 * A PSB+'s status events are the next: with one, its fetch
		 * reads on past the PSBEND; with more, it stays there;
		 * with none, libipt's read-ahead passes over the PSB+, also
		 * after the event is complete.
		 */
		if (pkt.kind == FPT_PKT_PSB) {
			if ((step = fpti_psb_events(d, &d->pos)) > 1 ||
			    (done && step > 0))
				goto restore;
			done = done || step;
			continue;
		}
		if (done)
			goto restore;
		/*
		 * An event begun waits for its TIP or FUP: a TNT, or a TIP
		 * no event waits for, is libipt's bad query in that fetch.
		 */
		if (begun && (pkt.kind == FPT_PKT_TNT ||
		    (pkt.kind == FPT_PKT_TIP && !tip))) {
			rc = -HWTR_E_NOENT;
			break;
		}
		/*
		 * A FUP no event waits for: libipt's read-ahead takes it
		 * for an asynchronous branch that its TIP completes (and
		 * consumes); the next event is that one.
		 */
		if (pkt.kind == FPT_PKT_FUP && !fup) {
			tip = 1;
			asy++;
			d->pos += pkt.size;
			continue;
		}
		/* An OVF libipt cannot bind fails that fetch. */
		if (pkt.kind == FPT_PKT_OVF && (rc = fpti_ovf_check(d)) != 0)
			break;
		/*
		 * A TIP is consumed by the fetch only when it is the one
		 * branch's that alone waits for it: count the others.
		 */
		if (pkt.kind == FPT_PKT_MODE_EXEC || ((pkt.kind ==
		    FPT_PKT_PIP || pkt.kind == FPT_PKT_VMCS) && asy > 0))
			modew++;
		/* Read on to a packet that is no part of it: done. */
		if ((step = trail_step(d, &pkt, asy, &tip, &fup)) == -1)
			goto restore;
		if (step < 0) {
			rc = -HWTR_E_FORMAT;
			break;
		}
		/*
		 * A TIP or TIP.PGE a MODE.exec (PIP, VMCS) waits for stays
		 * for the flow, a TIP.PGE whatever waits: libipt reads
		 * nothing past it.  A TIP.PGD stays while another event
		 * waits for it after the first.
		 */
		if (step == 1 && tip && (pkt.kind == FPT_PKT_TIP_PGE ||
		    (pkt.kind == FPT_PKT_TIP && (asy != 1 || modew)) ||
		    (pkt.kind == FPT_PKT_TIP_PGD && asy + modew > 1)))
			goto restore;
		/*
		 * A FUP more than one event waits for stays for the others
		 * (pt_qry_decode_fup), and the read-ahead stops at it.
		 */
		if (step == 1 && pkt.kind == FPT_PKT_FUP && nfw > 1) {
			/*
			 * With two, the next fetch gives the second event
			 * and its read-ahead takes the same FUP and those
			 * after it for asynchronous branches, failing on
			 * the seventh (-pte_nomem), which loses the event
			 * handed over: fpt hands the trace over before.
			 */
			if (nfw == 2 && fpti_fups_after(d, &pkt, 2) >= 2) {
				rc = fpti_unsupported(d, "FUPs after the "
				    "FUP of two events");
				break;
			}
			goto restore;
		}
		/*
		 * A TSX abort's FUP stays for the asynchronous branch it
		 * begins: libipt's read-ahead after the event decodes it as
		 * one (a dry run, fup_ahead) and fails the fetch on a bad
		 * packet after it; so also for an abort queued before this
		 * fetch (d->nfupq), whose FUP nothing waits for now.
		 */
		if (step == 1 && pkt.kind == FPT_PKT_FUP && nfc == 0) {
			fup = 0;
			eaten = 1;
			done = 1;
			continue;
		}
		if (step == 0 && pkt.kind != FPT_PKT_MODE_EXEC &&
		    pkt.kind != FPT_PKT_PIP && pkt.kind != FPT_PKT_VMCS) {
			/*
			 * libipt's queue of them holds six and fails the
			 * fetch on the seventh (-pte_nomem); fpt's reader
			 * takes four (fpti_power_event()): it hands the
			 * trace over before the event libipt loses.
			 */
			if (++nfw > FPT_MORE_MAX + 1) {
				rc = fpti_unsupported(d, "too many events for "
				    "one FUP");
				break;
			}
			/* Only an aborted MODE.TSX leaves its FUP. */
			if (pkt.kind != FPT_PKT_MODE_TSX || !(pkt.flags & 2))
				nfc++;
		}
		d->pos += pkt.size;
		if (pkt.kind == FPT_PKT_TIP_PGD || pkt.kind == FPT_PKT_TIP_PGE)
			d->enabled = pkt.kind == FPT_PKT_TIP_PGE;
		/*
		 * What waits in libipt's queue (a PIP or VMCS behind an
		 * asynchronous branch too) has begun the next event; what
		 * it gives at once is that event.
		 */
		if (step == 0)
			begun = 1;
		done = step;
		/*
		 * The FUP the events waited for is consumed: nothing waits
		 * for a FUP, and libipt's read-ahead after the event takes
		 * the next for an asynchronous branch's (fup_ahead()).
		 */
		if (step == 1 && pkt.kind == FPT_PKT_FUP) {
			fup = 0;
			eaten = 1;
		}
	}
	/*
	 * The end of the trace: once the next event's packets have begun,
	 * libipt's fetch of it fails there (pt_qry_event's -pte_eos), which
	 * loses the event handed over and ends the trace; before, not here.
	 * A TIP something waits for (an asynchronous branch, a MODE.exec
	 * read in this fetch or before it) is such a packet.
	 */
	if (rc == -HWTR_E_TRUNCATED) {
		/*
		 * A FUP the events wait for (a MWAIT queued before the
		 * TIP.PGE too) is an event packet to libipt, which decodes
		 * it in the next fetch: cut, it fails that fetch.
		 */
		cls = fup && fpti_is_fup_hdr(d->pos, d->cfg.end) ?
		    FPT_HDR_EVENT : fpti_hdr_class(d->pos, d->cfg.end);
		/* libipt's query looks at the header first, as above. */
		if (!done && begun && (cls == FPT_HDR_TNT ||
		    (cls == FPT_HDR_TIP && !tip)))
			return (-HWTR_E_NOENT);
		if (!done && (begun || cls == FPT_HDR_EVENT || (tip &&
		    cls == FPT_HDR_TIP)))
			return (FPT_EOS);
		goto restore;
	}
	/*
	 * libipt's read-ahead stops before a TNT, a TIP or an event packet
	 * (a FUP an event waits for too) without decoding it: a bad one
	 * fails the event only when it is that event's, and otherwise waits
	 * for the flow.
	 */
	if (rc == -HWTR_E_FORMAT && (cls = fup && fpti_is_fup_hdr(d->pos,
	    d->cfg.end) ? FPT_HDR_EVENT : fpti_hdr_class(d->pos, d->cfg.end)) !=
	    FPT_HDR_STATUS && (done || cls == FPT_HDR_TNT ||
	    (cls == FPT_HDR_TIP && !tip))) {
		/* ... but an event begun meets it as a bad query. */
		if (!done && begun && cls != FPT_HDR_EVENT)
			return (-HWTR_E_NOENT);
		goto restore;
	}
	/*
	 * What fpt leaves to libipt (MTC, CYC ...) may hide a bad packet
	 * that fails the event: the segment goes to libipt before it.
	 */
	if (rc == -HWTR_E_UNSUPPORTED)
		return (rc);
	d->unsup = unsup;
	return (rc);
restore:
	fpti_mark_back(d, &m);
	d->unsup = unsup;
	return (0);
}
