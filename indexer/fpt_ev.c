/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * fpt's events, as libipt's query and block decoders make them (the
 * PSB+'s status updates are fpt_psb.c's): the events fetched once the
 * TNT bits before them are used up (a FUP's asynchronous branch or
 * disable, TIP.PGD, MODE), the events that bind to the next FUP's IP
 * (MWAIT, EXSTOP, PTWRITE, MODE.TSX while tracing) or to nothing
 * (TraceStop, PWRE, PWRX, PIP and VMCS while tracing is off), OVF, and
 * libipt's workarounds of the CPU's errata (fpti_set_errata() says which
 * apply).
 */

#include <assert.h>
#include <string.h>

#include "hwtrace.h"
#include "fpt_int.h"

static int	ovf_fup(const struct fpt *, const uint8_t *, const uint8_t **);
static int	standalone_ahead(struct fpt *, struct fpt_pkt *);
static void	mode_at_once(struct fpt *, const struct fpt_pkt *);
static int	psb_shared(const struct fpt *);
static int	psb_lead_ahead(struct fpt *, unsigned);
static int	check_ahead_off(struct fpt *);
static const uint8_t *psbend_of(const struct fpt *, uint64_t);
static int	fup_shared(const struct fpt *);
static int	fup_kind(int);
static int	fup_last_ahead(struct fpt *);
static const uint8_t *fup_of(const struct fpt *, uint64_t);
static int	is_status_hdr(const uint8_t *, const uint8_t *);
static int	hdr_cut(const uint8_t *, const uint8_t *);
static int	fup_ahead(struct fpt *, const struct fpt_pkt *);
static int	tsx_off_walk(struct fpt *);

/*
 * Events the flow must act on before it proceeds, once the TNT bits
 * before them are used up: a FUP (an asynchronous branch or disable at
 * its IP), a MODE.exec (for the next TIP), a PSB+.  TIP.PGD, TIP and TNT
 * are left to the block that needs them.  Returns 0, FPT_EOS or an error.
 */
int
fpti_fetch_event(struct fpt *d)
{
	struct fpt_pkt pkt;
	struct fpt_event *ev = &d->async_ev;
	uint64_t ip;
	unsigned i, nfupq = d->nfupq;
	int rc, cls, mode_here = 0;

	assert(d->ntnt == 0 && !d->async);
	/* The usual case: a TNT-8 or a TIP is next, no event. */
	if (d->nfupq == 0 && !d->mode_pending && d->pos < d->cfg.end &&
	    (fpti_is_tnt8(*d->pos) || (*d->pos & 0x1f) == 0x0d))
		return (0);
	for (;;) {
		if ((rc = fpti_read_ahead(d)) < 0 ||
		    (rc = fpti_peek(d, &pkt)) < 0) {
			/*
			 * A bad TNT or TIP is the query's to meet; but the
			 * TIP a MODE.exec waits for is this fetch's to
			 * decode (pt_qry_will_event(), evb_tip), and fails
			 * it before the flow goes on.  Its header alone is
			 * libipt's bad query where a whole one is (below),
			 * one the end of the trace cuts too: libipt's fetch
			 * (pt_df_fetch()) stops at the header.
			 */
			cls = fpti_hdr_class(d->pos, d->cfg.end);
			if ((rc == -HWTR_E_FORMAT || rc == -HWTR_E_TRUNCATED) &&
			    (cls == FPT_HDR_TNT || (!d->mode_pending &&
			    cls == FPT_HDR_TIP))) {
				if (d->nfupq > nfupq || (mode_here &&
				    cls == FPT_HDR_TNT))
					return (-HWTR_E_NOENT);
				if (rc == -HWTR_E_FORMAT)
					return (0);
			}
			/*
			 * An event packet cut by the end, or the TIP a
			 * MODE.exec waits for, or the FUP events wait for:
			 * libipt's fetch of it meets the end, and so does
			 * the flow.  A header its fetch cannot tell is no
			 * packet to it: no trace is left (pts_eos).
			 */
			if (rc == -HWTR_E_TRUNCATED && (fpti_hdr_class(d->pos,
			    d->cfg.end) == FPT_HDR_EVENT ||
			    hdr_cut(d->pos, d->cfg.end) || (d->mode_pending &&
			    fpti_hdr_class(d->pos, d->cfg.end) ==
			    FPT_HDR_TIP) || (d->nfupq > 0 &&
			    fpti_is_fup_hdr(d->pos, d->cfg.end))))
				d->pos = d->cfg.end;
			return (rc == -HWTR_E_TRUNCATED ? FPT_EOS : rc);
		}
		switch (pkt.kind) {
		case FPT_PKT_FUP:
			if (d->nfupq > 0) {
				/* The events before bind to its IP. */
				const uint8_t *at = d->pos;

				if ((rc = fpti_fup_bound(d, &pkt)) < 0)
					return (rc);
				/*
				 * A TSX abort leaves the FUP for the
				 * asynchronous branch that follows.
				 */
				if (!fpti_fup_consumed(d))
					d->pos = at;
				if (d->fupq[0].ip_suppressed)
					return (fpti_unsupported(d, "an event "
					    "bound to a FUP without IP"));
				d->async_ev = d->fupq[0];
				for (i = 1; i < d->nfupq; i++)
					d->more[i - 1] = d->fupq[i];
				d->nmore = d->nfupq - 1;
				d->nfupq = 0;
				d->async = 1;
				/*
				 * The FUP's only event: libipt's fetch of it
				 * reads on past the FUP (an abort's stays, an
				 * asynchronous branch's to that read), and a
				 * bad packet or a seventh event queued for a
				 * TIP there fails it.  With more, the fetch
				 * of the last does (fup_last_ahead()).
				 */
				if (d->nmore == 0 &&
				    (rc = fpti_check_ahead(d)) < 0) {
					d->async = 0;
					return (rc);
				}
				return (0);
			}
			fpti_ev_init(d, ev, FPT_EV_ASYNC_BRANCH, d->pos);
			d->pos += pkt.size;
			if (fpti_ip_update(d, &pkt, &ip) < 0)
				return (fpti_unsupported(d,
				    "a FUP without IP"));
			ev->ip = ip;
			/*
			 * The end of the trace in the TIP or event packet
			 * after it fails libipt's fetch of the event, and the
			 * flow with it; a cut TNT is no event's, and the flow
			 * goes on to it.
			 */
			rc = standalone_ahead(d, &pkt);
			if (rc == -HWTR_E_TRUNCATED &&
			    fpti_hdr_class(d->pos, d->cfg.end) != FPT_HDR_TNT)
				d->pos = d->cfg.end;
			/*
			 * A bad TNT after it: libipt's read-ahead stops at
			 * its header with the branch waiting for a TIP, and
			 * the flow goes on to the query that decodes it.
			 */
			if (rc == -HWTR_E_FORMAT &&
			    fpti_hdr_class(d->pos, d->cfg.end) == FPT_HDR_TNT)
				return (0);
			if (rc < 0)
				return (rc == -HWTR_E_TRUNCATED ? FPT_EOS : rc);
			if (pkt.kind == FPT_PKT_TIP) {
				/*
				 * A MODE.exec before the FUP: libipt gives
				 * the mode's event first, at the TIP's IP,
				 * and the flow goes there before the branch.
				 */
				if (d->mode_pending)
					return (fpti_unsupported(d, "a "
					    "MODE.exec before a FUP and TIP"));
				d->pos += pkt.size;
				if (fpti_ip_update(d, &pkt, &ip) < 0)
					return (fpti_unsupported(d, "an "
					    "asynchronous branch to a "
					    "suppressed IP"));
				ev->to = ip;
			} else if (pkt.kind == FPT_PKT_TIP_PGD) {
				/* libipt gives the mode's event first. */
				if (d->mode_pending)
					return (fpti_unsupported(d, "a "
					    "MODE.exec before TIP.PGD"));
				ev->kind = FPT_EV_ASYNC_DISABLED;
				d->pos += pkt.size;
				if (fpti_ip_update(d, &pkt, &ip) == 0)
					ev->to = ip;
				else
					ev->ip_suppressed = 1;
			} else
				return (fpti_unsupported(d, "a FUP followed by "
				    "neither TIP nor TIP.PGD"));
			d->async = 1;
			return (pkt.kind == FPT_PKT_TIP_PGD ?
			    check_ahead_off(d) : fpti_check_ahead(d));
		case FPT_PKT_MODE_EXEC:
			d->pos += pkt.size;
			if ((pkt.flags & 3) == 3)
				return (fpti_unsupported(d, "MODE.exec with L "
				    "and D set"));
			/* libipt gives an event for each: fpt keeps one. */
			if (d->mode_pending)
				return (fpti_unsupported(d, "two MODE.exec "
				    "for one TIP"));
			d->mode_pending = 1;
			d->next_mode = (pkt.flags & 1) ? 64 :
			    (pkt.flags & 2) ? 32 : 16;
			d->mode_has_tsc = d->has_tsc;
			d->mode_tsc = d->has_tsc ? d->tsc : 0;
			mode_here = 1;
			break;
		case FPT_PKT_PSB:
			i = d->evq_n;
			if ((rc = fpti_read_psb_plus(d)) != 0 ||
			    (rc = psb_lead_ahead(d, d->evq_n - i)) != 0 ||
			    d->async || d->evq_n > 0)
				return (rc);
			break;
		case FPT_PKT_TIP_PGD:
			/*
			 * libipt binds a MODE.exec to the TIP.PGD after it and
			 * gives its event alone (IP suppressed, at once):
			 * tracing goes on, with no disabled event.
			 */
			if (d->mode_pending)
				return (fpti_unsupported(d, "a MODE.exec "
				    "before TIP.PGD"));
			/* Tracing stops at the branch that needs trace. */
			fpti_ev_init(d, ev, FPT_EV_DISABLED, d->pos);
			d->pos += pkt.size;
			if (fpti_ip_update(d, &pkt, &ip) == 0)
				ev->ip = ip;
			else
				ev->ip_suppressed = 1;
			d->async = 1;
			return (check_ahead_off(d));
		case FPT_PKT_TNT:
		case FPT_PKT_TIP:
			/*
			 * libipt's event fetch goes on to the FUP that events
			 * it queued wait for, or from a MODE.exec to its TIP:
			 * a TNT (or a TIP before the FUP) is a bad query.
			 * But a TIP a MODE.exec waits for is the mode's
			 * event, those queued for the FUP waiting on.
			 * Events queued by a fetch before wait for their FUP
			 * while the flow takes TNT and TIP.
			 */
			if (pkt.kind == FPT_PKT_TIP && d->mode_pending) {
				mode_at_once(d, &pkt);
				return (0);
			}
			return (d->nfupq > nfupq || (mode_here &&
			    pkt.kind == FPT_PKT_TNT) ? -HWTR_E_NOENT : 0);
		case FPT_PKT_OVF:
			return (fpti_overflow(d));
		default:
			if (pkt.kind == FPT_PKT_STOP)
				return (fpti_unsupported(d, "TraceStop while "
				    "tracing"));
			if (pkt.kind == FPT_PKT_PTW)
				return (fpti_unsupported(d, "PTWRITE while "
				    "tracing"));
			if ((rc = fpti_power_event(d, &pkt)) < 0)
				return (rc);
			/*
			 * A PIP or VMCS while tracing is libipt's event at
			 * once, and its read-ahead after it can fail it.
			 */
			if (rc == 1 && d->async && (pkt.kind == FPT_PKT_PIP ||
			    pkt.kind == FPT_PKT_VMCS))
				return (fpti_check_ahead(d));
			if (rc == 0)
				return (fpti_unsupported(d,
				    pkt.kind == FPT_PKT_TIP_PGE ?
				    "a TIP.PGE while tracing" :
				    pkt.kind == FPT_PKT_PSBEND ?
				    "a PSBEND outside PSB+" :
				    pkt.kind == FPT_PKT_UNKNOWN ?
				    "a packet fpt_pkt does not know (BBP, BIP, "
				    "BEP ...)" : "an event packet this decoder "
				    "does not handle yet"));
			if (d->evq_n > 0 || d->async)
				return (0);
			break;
		}
	}
}

/*
 * A MODE.exec waits for the TIP @pkt at d->pos (libipt's evb_tip): libipt
 * fetches its event as the TIP is next, and hands it over at once, before
 * any code, when the TIP goes to the flow's IP or has none
 * (pt_blk_proceed_to_exec_mode()); the TIP stays for the branch that
 * takes it.  To another IP the flow goes on to that branch first
 * (fpt_dec.c's proceed_to_mode()).
 */
static void
mode_at_once(struct fpt *d, const struct fpt_pkt *pkt)
{
	struct fpt_event ev;
	uint64_t to = 0, last = d->last_ip;
	int rc, have = d->have_ip;

	rc = fpti_ip_update(d, pkt, &to);
	d->last_ip = last;
	d->have_ip = have;
	if (rc == 0 ? to != d->ip : rc != -HWTR_E_NOENT)
		return;
	fpti_ev_init(d, &ev, FPT_EV_EXEC_MODE, d->pos);
	ev.tsc = d->mode_tsc;
	ev.has_tsc = (uint8_t)d->mode_has_tsc;
	ev.ip = to;
	ev.ip_suppressed = rc != 0;
	ev.mode = d->next_mode;
	d->mode = d->next_mode;
	d->mode_pending = 0;
	fpti_ev_push(d, &ev);
}

/*
 * Whether the pending event is the first of two or more status updates
 * of a PSB+ read while tracing, the others in d->more: libipt hands them
 * over one at a time at the PSBEND, each as it fetches the next.
 */
static int
psb_shared(const struct fpt *d)
{
	return (d->nmore > 0 && d->async_ev.status_update);
}

/*
 * The PSB+ fpti_read_psb_plus() just read gave @lead events at once (its
 * CBR and MNT while tracing, all while not) and maybe d->async, status
 * updates bound to its IP.  libipt's fetch of the last of them all reads
 * on past the PSBEND, and a bad packet there fails the hand-over of the
 * one before: with two or more, that one queued already, fpt hands the
 * trace over (fpti_async_reached() takes the others).  0, or
 * unsupported.
 */
static int
psb_lead_ahead(struct fpt *d, unsigned lead)
{
	unsigned n = lead + (d->async ? 1 + d->nmore : 0);
	int rc;

	if (lead == 0 || n < 2 || n - lead > 1 ||
	    (rc = fpti_check_ahead(d)) == 0)
		return (0);
	return (rc == -HWTR_E_UNSUPPORTED ? rc : fpti_unsupported(d, "a bad "
	    "packet after a PSB+ whose events went out"));
}

/*
 * Read ahead to the next packet that matters, as fpti_read_ahead(), with
 * the CBR and MNT packets on the way as their events (libipt gives them
 * while an event waits for its TIP or FUP); that packet into @pkt.  Its
 * size, or fpti_read_ahead()'s or fpti_peek()'s error.
 */
static int
standalone_ahead(struct fpt *d, struct fpt_pkt *pkt)
{
	int rc;

	for (;;) {
		if ((rc = fpti_read_ahead(d)) < 0 ||
		    (rc = fpti_peek(d, pkt)) < 0)
			return (rc);
		if (pkt->kind != FPT_PKT_CBR && pkt->kind != FPT_PKT_MNT)
			return (rc);
		rc = fpti_power_event(d, pkt);
		assert(rc == 1);
	}
}

void
fpti_mark_save(const struct fpt *d, struct fpt_mark *m)
{
	m->pos = d->pos;
	m->pk_pos = d->pk_pos;
	m->pk = d->pk;
	m->tsc = d->tsc;
	m->nmnt = d->nmnt;
	m->has_tsc = d->has_tsc;
	m->tm = d->tm;
}

void
fpti_mark_back(struct fpt *d, const struct fpt_mark *m)
{
	d->pos = m->pos;
	d->pk_pos = m->pk_pos;
	d->pk = m->pk;
	d->tsc = m->tsc;
	d->nmnt = m->nmnt;
	d->has_tsc = m->has_tsc;
	d->tm = m->tm;
}

/*
 * libipt's query reads ahead after the packet that completes an event
 * (when the block decoder fetches it, before the flow goes to the
 * event's IP) and after a TIP: a bad status packet there, or a PSB+
 * libipt fails in, fails that fetch or query.  A dry run of that read:
 * 0 with the decoder as it was (what it reads is read for real later, so
 * that the time stays the event's, as libipt's last_time does), or the
 * error with d->pos at the bad packet, or unsupported; the end of the
 * trace is no error here.
 */
int
fpti_check_ahead(struct fpt *d)
{
	struct fpt_mark m;
	struct fpt_pkt pkt;
	const uint8_t *p;
	int rc;

	/* The common case: a TNT-8 or a TIP next, nothing to read. */
	if (d->pos < d->cfg.end && (fpti_is_tnt8(*d->pos) ||
	    (*d->pos & 0x1f) == 0x0d))
		return (0);
	fpti_mark_save(d, &m);
	/* It reads on past a PSB+ without status events (fpti_psb_pass()). */
	while ((rc = fpti_read_ahead(d)) == 0 && fpti_peek(d, &pkt) > 0 &&
	    pkt.kind == FPT_PKT_PSB) {
		p = d->pos + pkt.size;
		if ((rc = fpti_psb_plus_ok(d, p)) < 0 ||
		    fpti_psb_events(d, &p) > 0)
			break;
		d->pos = p;
	}
	if (rc < 0 && rc != -HWTR_E_TRUNCATED)
		return (rc);
	fpti_mark_back(d, &m);
	return (0);
}

/*
 * fpti_check_ahead() after a TIP.PGD libipt's query consumed: tracing is
 * off to the read-ahead after it, whose PSB+ reader then looks past a
 * FUP for BDM70 (fpti_psb_plus_ok()).
 */
static int
check_ahead_off(struct fpt *d)
{
	int rc, en = d->enabled;

	d->enabled = 0;
	rc = fpti_check_ahead(d);
	d->enabled = en;
	return (rc);
}

/*
 * The events that bind to no instruction or to the next FUP's IP:
 * TraceStop, PWRE, PWRX, EXSTOP, MWAIT and PTWRITE, as libipt's query
 * decoder makes them (only TraceStop carries the time).  The standalone
 * ones go to the event queue, the others wait for their FUP (d->fupq).
 * 1 when @pkt was one (and is consumed), 0 when not, or unsupported.
 */
int
fpti_power_event(struct fpt *d, const struct fpt_pkt *pkt)
{
	struct fpt_event ev;
	int kind, fup = 0, rc;
	unsigned bind = 0;

	switch (pkt->kind) {
	case FPT_PKT_STOP:
		kind = FPT_EV_STOP;
		break;
	case FPT_PKT_PWRE:
		kind = FPT_EV_PWRE;
		break;
	case FPT_PKT_PWRX:
		kind = FPT_EV_PWRX;
		break;
	case FPT_PKT_CBR:
		/* libipt's time calibrates again: the frequency changed. */
		if ((rc = fpti_time_packet(d, d->pos, pkt, 0)) < 0)
			return (rc);
		kind = FPT_EV_CBR;
		break;
	case FPT_PKT_MNT:
		kind = FPT_EV_MNT;
		d->nmnt++;
		break;
	case FPT_PKT_EXSTOP:
		kind = FPT_EV_EXSTOP;
		fup = pkt->flags & 1;
		break;
	case FPT_PKT_MWAIT:
		kind = FPT_EV_MWAIT;
		fup = 1;
		break;
	case FPT_PKT_PTW:
		kind = FPT_EV_PTWRITE;
		fup = pkt->flags & 1;
		break;
	case FPT_PKT_MODE_TSX:
		/* Standalone while tracing is off, else bound to a FUP. */
		kind = FPT_EV_TSX;
		fup = d->enabled;
		break;
	case FPT_PKT_PIP:
	case FPT_PKT_VMCS:
		/*
		 * While tracing they bind to the next far branch, MOV CR3
		 * (PIP), VMPTRLD (VMCS) or VM entry: the one waiting to be
		 * passed (d->post) or the next (d->bind).
		 */
		kind = pkt->kind == FPT_PKT_PIP ? FPT_EV_PAGING : FPT_EV_VMCS;
		bind = d->enabled ? (kind == FPT_EV_PAGING ? 1 : 2) : 0;
		break;
	default:
		return (0);
	}
	fpti_ev_init(d, &ev, kind, d->pos);
	d->pos += pkt->size;
	if (kind != FPT_EV_STOP && kind != FPT_EV_TSX &&
	    kind != FPT_EV_PAGING && kind != FPT_EV_VMCS &&
	    kind != FPT_EV_CBR && kind != FPT_EV_MNT) {
		ev.has_tsc = 0;
		ev.tsc = 0;
	}
	/* MODE.TSX: InTX and TXAbort. */
	ev.payload = kind == FPT_EV_TSX ? pkt->flags & 3 : pkt->payload;
	if (bind != 0 && d->post) {
		assert((d->post_binds & bind) && !(d->post_bound & bind));
		d->post_bound |= bind;
		fpti_ev_push(d, &ev);
		return (1);
	}
	if (bind != 0) {
		if (d->async)
			return (fpti_unsupported(d, "a PIP or VMCS while an "
			    "event is pending"));
		d->async_ev = ev;
		d->nmore = 0;
		d->async = 1;
		d->bind = bind;
		return (1);
	}
	if (!fup) {
		ev.ip_suppressed = kind == FPT_EV_EXSTOP ||
		    kind == FPT_EV_PTWRITE || kind == FPT_EV_TSX;
		fpti_ev_push(d, &ev);
		return (1);
	}
	if (d->nfupq == FPT_MORE_MAX + 1)
		return (fpti_unsupported(d, "too many events for one FUP"));
	d->fupq[d->nfupq++] = ev;
	return (1);
}

/*
 * The OVF at d->pos, as libipt's query decoder takes it: the packet
 * state is reset (the last IP, TNT bits, events waiting for a TIP or
 * FUP) but for the time; if a FUP follows past timing packets, tracing
 * resumes at its IP (an overflow event there), otherwise it is off (an
 * overflow event without IP).  0, an error, or unsupported.
 */
int
fpti_overflow(struct fpt *d)
{
	struct fpt_event ev;
	struct fpt_pkt pkt;
	const uint8_t *fup;
	uint64_t ip;
	int rc;

	assert(d->ntnt == 0 && !d->async);
	fpti_ev_init(d, &ev, FPT_EV_OVERFLOW, d->pos);
	d->pos += 2;
	fpti_time_ovf(d);
	d->last_ip = 0;
	d->have_ip = 0;
	d->tnt = 0;
	d->mode_pending = 0;
	d->nfupq = 0;
	d->enabled = 0;
	rc = ovf_fup(d, d->pos, &fup);
	if (rc <= 0 && d->skd010)
		return (fpti_unsupported(d, "SKD010: an OVF whose FUP may be "
		    "lost"));
	if (rc < 0 && rc != -HWTR_E_TRUNCATED)
		return (d->apl11 && rc == -HWTR_E_NOENT ? fpti_unsupported(d,
		    "APL11: an OVF before a TIP.PGD") : -HWTR_E_DECODE);
	if (rc <= 0) {
		ev.ip_suppressed = 1;
		d->ip = 0;
		fpti_ev_push(d, &ev);
		return (0);
	}
	if (d->apl12)
		return (fpti_unsupported(d, "APL12: an OVF whose FUP may be "
		    "wrong"));
	/*
	 * The timing packets up to the FUP (CBR and MNT events before the
	 * overflow, as libipt's fetch gives them), then the FUP.
	 */
	if ((rc = standalone_ahead(d, &pkt)) < 0)
		return (rc);
	assert(d->pos == fup);
	d->pos += pkt.size;
	if (fpti_ip_update(d, &pkt, &ip) < 0)
		return (-HWTR_E_DECODE);
	ev.ip = ip;
	d->ip = ip;
	d->enabled = 1;
	fpti_ev_push(d, &ev);
	return (0);
}

/*
 * libipt's search for the FUP an OVF binds to, from @p: 1 with @fup at
 * it, 0 when another packet says tracing is off, -HWTR_E_TRUNCATED at the
 * end, -HWTR_E_NOENT for a packet that cannot follow an OVF (libipt's bad
 * context), -HWTR_E_FORMAT for bytes that are no packet.
 */
static int
ovf_fup(const struct fpt *d, const uint8_t *p, const uint8_t **fup)
{
	struct fpt_pkt pkt;
	int rc;

	for (;;) {
		if ((rc = fpt_pkt_parse(p, d->cfg.end, &pkt)) < 0)
			return (rc);
		switch (pkt.kind) {
		case FPT_PKT_FUP:
			*fup = p;
			return (1);
		case FPT_PKT_UNKNOWN:
			/* A bad opcode to libipt 2.0 (fpti_peek()). */
			return (-HWTR_E_FORMAT);
		case FPT_PKT_PAD:
		case FPT_PKT_MNT:
		case FPT_PKT_CBR:
		case FPT_PKT_TSC:
		case FPT_PKT_TMA:
		case FPT_PKT_MTC:
		case FPT_PKT_CYC:
			p += pkt.size;
			continue;
		case FPT_PKT_PSBEND:
		case FPT_PKT_TIP:
		case FPT_PKT_TIP_PGD:
		case FPT_PKT_TNT:
			return (-HWTR_E_NOENT);
		default:
			return (0);
		}
	}
}

/*
 * What libipt's decode of the OVF at d->pos says, as fpti_overflow()
 * takes it, without decoding it: 0 fine, unsupported where fpt hands
 * the OVF over, or -HWTR_E_DECODE with d->pos past the OVF (where libipt
 * fails: its search for the FUP meets a packet that cannot follow).
 */
int
fpti_ovf_check(struct fpt *d)
{
	const uint8_t *fup;
	int rc;

	rc = ovf_fup(d, d->pos + 2, &fup);
	if (rc <= 0 && d->skd010)
		return (fpti_unsupported(d, "SKD010: an OVF whose FUP may be "
		    "lost"));
	if (rc > 0 && d->apl12)
		return (fpti_unsupported(d, "APL12: an OVF whose FUP may be "
		    "wrong"));
	if (rc >= 0 || rc == -HWTR_E_TRUNCATED)
		return (0);
	if (d->apl11 && rc == -HWTR_E_NOENT)
		return (fpti_unsupported(d, "APL11: an OVF before a TIP.PGD"));
	d->pos += 2;
	return (-HWTR_E_DECODE);
}

/* Whether the events waiting in d->fupq consume their FUP. */
int
fpti_fup_consumed(const struct fpt *d)
{
	unsigned i;

	for (i = 0; i < d->nfupq; i++)
		if (d->fupq[i].kind != FPT_EV_TSX ||
		    !(d->fupq[i].payload & 2))
			return (1);
	return (0);
}

/*
 * The FUP @pkt at d->pos gives the events waiting in d->fupq their IP
 * (or says it is suppressed); it is consumed.
 */
int
fpti_fup_bound(struct fpt *d, const struct fpt_pkt *pkt)
{
	uint64_t ip = 0;
	unsigned i, n;
	int sup, rc;

	assert(d->nfupq > 0);
	sup = fpti_ip_update(d, pkt, &ip) < 0;
	d->pos += pkt->size;
	for (i = 0; i < d->nfupq; i++) {
		d->fupq[i].ip = sup ? 0 : ip;
		d->fupq[i].ip_suppressed = (uint8_t)sup;
	}
	if (!d->enabled && tsx_off_walk(d))
		return (0);
	/*
	 * Tracing is off: the events happen at once, each handed over as
	 * libipt fetches the next, and the fetch of the last can fail
	 * the one before (fup_last_ahead()): the first n - 2 go out, then
	 * the error, and the flow resyncs.  Unsupported, none goes out
	 * (d->unsup stops fpt_next()).
	 */
	if (d->enabled || d->nfupq < 2 || (rc = fup_last_ahead(d)) >= 0)
		return (0);
	n = d->nfupq;
	d->nfupq = 0;
	if (rc == -HWTR_E_UNSUPPORTED)
		return (0);
	for (i = 0; i + 2 < n; i++)
		fpti_ev_push(d, &d->fupq[i]);
	fpti_error_here(d, rc);
	return (0);
}

/*
 * Tracing is off, and the FUP gives a MODE.TSX (queued while it was on)
 * an IP other than d->ip, libipt's guess of where tracing resumes:
 * libipt's block decoder goes there from d->ip without trace all the
 * same (pt_blk_proceed_event() asks whether tracing is on for MWAIT and
 * EXSTOP, not for TSX).  With no code at d->ip (0 after a disable at a
 * return or jump), that is its error where the flow is, and the flow
 * resyncs; a walk through code, or more events on the FUP, fpt leaves
 * to libipt.  1 when so (d->fupq emptied), else 0.
 */
static int
tsx_off_walk(struct fpt *d)
{
	struct hwtr_x86_insn insn;
	unsigned i;
	int isid;

	for (i = 0; i < d->nfupq; i++)
		if (d->fupq[i].kind == FPT_EV_TSX &&
		    !d->fupq[i].ip_suppressed && d->fupq[i].ip != d->ip)
			break;
	if (i == d->nfupq)
		return (0);
	if (d->nfupq > 1 ||
	    fpti_decode_at(d, d->ip, &insn, &isid) != -HWTR_E_NOENT) {
		d->nfupq = 0;
		if (d->unsup == NULL)
			(void)fpti_unsupported(d, "a MODE.TSX's IP reached "
			    "without trace while tracing is off");
		return (1);
	}
	d->nfupq = 0;
	fpti_error_here(d, -HWTR_E_NOENT);
	return (1);
}

/*
 * libipt hands over the events a FUP binds one at a time, each as it
 * fetches the next (pt_blk_event()'s trailing event); the fetch of the
 * last consumes the FUP (unless no event does: a TSX abort leaves it for
 * an asynchronous branch) and reads ahead after it, and a bad packet
 * there fails the hand-over of the one before.  A dry run of that read
 * from d->pos, after the FUP or at it, with no event waiting for one
 * (fpti_check_ahead()): its error with d->pos at the bad packet, or 0.
 */
static int
fup_last_ahead(struct fpt *d)
{
	unsigned n = d->nfupq;
	int rc;

	d->nfupq = 0;
	rc = fpti_check_ahead(d);
	d->nfupq = n;
	return (rc);
}

/* The flow reached the pending event's IP: the event happens. */
int
fpti_async_reached(struct fpt *d)
{
	unsigned i;
	int rc;

	assert(d->async);
	d->async = 0;
	/*
	 * The first of the events a FUP binds: libipt's fetch of the last
	 * reads on after the FUP (fup_last_ahead()) and can fail the one
	 * before; the first n - 2 go out, then the flow's error.  So for a
	 * PSB+'s status updates, whose last one's fetch reads on past the
	 * PSBEND (psb_shared()).
	 */
	if ((fup_shared(d) && (rc = fup_last_ahead(d)) < 0) ||
	    (psb_shared(d) && (rc = fpti_check_ahead(d)) < 0)) {
		if (rc == -HWTR_E_UNSUPPORTED)
			return (rc);
		if (d->nmore >= 2)
			fpti_ev_push(d, &d->async_ev);
		for (i = 0; i + 2 < d->nmore; i++)
			fpti_ev_push(d, &d->more[i]);
		/*
		 * The one before the last is processed all the same (a
		 * PIP's new asid drops libipt's block cache): it takes
		 * effect with the error item (fpt_dec.c's next_item()).
		 */
		d->quiet_ev = d->nmore >= 2 ? d->more[d->nmore - 2] :
		    d->async_ev;
		d->have_quiet = 1;
		d->nmore = 0;
		return (rc);
	}
	fpti_ev_push(d, &d->async_ev);
	for (i = 0; i < d->nmore; i++)
		fpti_ev_push(d, &d->more[i]);
	d->nmore = 0;
	switch (d->async_ev.kind) {
	case FPT_EV_ASYNC_BRANCH:
		d->ip = d->async_ev.to;
		break;
	case FPT_EV_DISABLED:
	case FPT_EV_ASYNC_DISABLED:
		d->enabled = 0;
		break;
	default:
		break;
	}
	/*
	 * A MODE.exec (d->mode_pending) waits on: libipt keeps it for its
	 * TIP (evb_tip) over the events before, a PSB+'s updates too.
	 */
	return (0);
}

/*
 * Whether the (cut) packet at @p is a status packet: not an IP packet,
 * not MODE, not TNT-64, PIP, VMCS, OVF, PTWRITE or a power event.  A PSB
 * is one too: libipt's read-ahead decodes it (its PSB+ is no event), so
 * a PSB cut by the end of the trace ends the trace there.
 */
static int
is_status_hdr(const uint8_t *p, const uint8_t *end)
{
	uint8_t b;

	if (p >= end)
		return (1);
	b = p[0];
	if ((b & 3) == 1 && ((b & 0x1f) == 0x0d || (b & 0x1f) == 0x11 ||
	    (b & 0x1f) == 0x01 || (b & 0x1f) == 0x1d))
		return (0);
	if (b == 0x99)
		return (0);
	if (b == 0x02 && end - p >= 2) {
		b = p[1];
		/* libipt's fetch needs MNT's third byte too. */
		if (b == 0x73 || b == 0x23 || b == 0x82 ||
		    (b == 0xc3 && end - p < 3))
			return (1);
		return (0);
	}
	return (1);
}

/*
 * Whether the end of the trace cuts the header at @p before libipt's
 * fetch (pt_df_fetch()) knows the packet: an escape byte (0x02) alone, or
 * 02 c3 without the byte that says MNT.  Its fetch fails there and its
 * position stays before the packet, where a packet it knows and cannot
 * decode moves it to the end.
 */
static int
hdr_cut(const uint8_t *p, const uint8_t *end)
{
	return (p < end && p[0] == 0x02 &&
	    (end - p < 2 || (p[1] == 0xc3 && end - p < 3)));
}

/*
 * Status packets up to the next packet that matters to the flow (a TNT,
 * an IP packet, an event packet): what libipt's read-ahead decodes.  0,
 * or a negative error.
 */
int
fpti_read_ahead(struct fpt *d)
{
	struct fpt_pkt pkt;
	const char *unsup;
	int rc;

	for (;;) {
		if ((rc = fpti_peek(d, &pkt)) < 0) {
			/*
			 * A status packet cut by the end of the trace is
			 * dropped, as libipt drops it (a FUP no event waits
			 * for is one to its read-ahead); a cut branch or
			 * event packet stays for the query that needs it,
			 * and a header libipt's fetch cannot tell stays
			 * where that fetch fails, at its error's offset.
			 */
			if (rc == -HWTR_E_TRUNCATED &&
			    !hdr_cut(d->pos, d->cfg.end) &&
			    (is_status_hdr(d->pos, d->cfg.end) ||
			    (d->nfupq == 0 && (*d->pos & 0x1f) == 0x1d)))
				d->pos = d->cfg.end;
			/*
			 * libipt stops before a TNT, a TIP or an event
			 * packet on its header alone: a bad one fails
			 * whoever decodes it next, not the read-ahead.
			 */
			if (rc == -HWTR_E_FORMAT && (fpti_hdr_class(d->pos,
			    d->cfg.end) != FPT_HDR_STATUS || (d->nfupq > 0 &&
			    fpti_is_fup_hdr(d->pos, d->cfg.end))))
				return (0);
			/* A corrupt TMA that SKZ84 has libipt skip. */
			if (rc == -HWTR_E_FORMAT &&
			    fpti_time_skip(d, d->pos, NULL) < 0)
				return (-HWTR_E_UNSUPPORTED);
			return (rc);
		}
		switch (pkt.kind) {
		case FPT_PKT_PAD:
		/*
		 * fpti_read_psb_plus() takes a PSB+'s PSBEND: one met here
		 * stands alone, and libipt passes over it.
		 */
		case FPT_PKT_PSBEND:
			break;
		case FPT_PKT_TSC:
		case FPT_PKT_MTC:
		case FPT_PKT_CYC:
		case FPT_PKT_TMA:
			/* The time before them stays libipt's to their stop. */
			if ((rc = fpti_time_ahead(d, &pkt)) < 0)
				return (rc);
			break;
		case FPT_PKT_FUP:
			return (d->nfupq == 0 ? fup_ahead(d, &pkt) : 0);
		case FPT_PKT_PSB:
			/*
			 * libipt's read-ahead decodes a PSB+ whole: cut by
			 * the end, it is a status packet cut there.  What
			 * else is wrong with it is for its reader to say.
			 */
			unsup = d->unsup;
			rc = fpti_psb_plus_ok(d, d->pos + pkt.size);
			d->unsup = unsup;
			if (rc == -HWTR_E_TRUNCATED)
				d->pos = d->cfg.end;
			return (rc == -HWTR_E_TRUNCATED ? rc : 0);
		default:
			return (0);
		}
		/* The stop of timing packets read in this read-ahead moves on. */
		fpti_time_pass(d, pkt.size);
		d->pos += pkt.size;
	}
}

/*
 * A FUP no event waits for is an asynchronous branch's first half, which
 * libipt's read-ahead decodes (it needs the IP) and reads on after, over
 * the status packets to the TIP.  A dry run of that from @pkt at d->pos:
 * 0, or the error libipt's read-ahead fails with (d->pos at the packet
 * it fails at), or unsupported.
 */
static int
fup_ahead(struct fpt *d, const struct fpt_pkt *pkt)
{
	struct fpt_pkt next;
	const uint8_t *p, *q;
	int rc, nfup = 0;

	if (pkt->ipc == FPT_IPC_SUPPRESSED)
		return (-HWTR_E_FORMAT);
	for (p = d->pos + pkt->size;;) {
		if ((rc = fpt_pkt_parse(p, d->cfg.end, &next)) < 0) {
			if (rc == -HWTR_E_FORMAT &&
			    fpti_time_skip(d, p, NULL) < 0)
				return (-HWTR_E_UNSUPPORTED);
			if (rc == -HWTR_E_FORMAT && fpti_hdr_class(p,
			    d->cfg.end) == FPT_HDR_STATUS)
				goto bad;
			return (0);
		}
		switch (next.kind) {
		case FPT_PKT_PAD:
		case FPT_PKT_PSBEND:
			break;
		case FPT_PKT_TSC:
		case FPT_PKT_MTC:
		case FPT_PKT_CYC:
		case FPT_PKT_TMA:
			if ((rc = fpti_time_skip(d, p, &next)) < 0)
				return (rc);
			break;
		case FPT_PKT_PSB:
			/* Read past when it has no status update. */
			q = p + next.size;
			if ((rc = fpti_psb_plus_ok(d, q)) != 0 ||
			    fpti_psb_events(d, &q))
				return (rc == -HWTR_E_TRUNCATED ? 0 : rc);
			p = q;
			continue;
		case FPT_PKT_UNKNOWN:
			goto bad;
		case FPT_PKT_FUP:
			/*
			 * libipt queues an asynchronous branch per FUP, six
			 * at most, and fails the read on the seventh, or on
			 * one without IP (no event waits for it).  Two FUPs
			 * in a row come of a dry run that took an event's
			 * FUP for none's; three are no hardware's.
			 */
			if (next.ipc == FPT_IPC_SUPPRESSED)
				goto bad;
			if (++nfup == 2)
				return (fpti_unsupported(d, "three FUPs in a "
				    "row"));
			break;
		default:
			return (0);
		}
		p += next.size;
	}
bad:
	/* libipt's read-ahead fails there, its offset that packet's. */
	d->pos = p;
	return (-HWTR_E_FORMAT);
}

/*
 * How many FUPs with IP follow the FUP @pkt at d->pos, past PADs, up to
 * @max: a long run of them is not read to its end each time.
 */
int
fpti_fups_after(const struct fpt *d, const struct fpt_pkt *pkt, int max)
{
	struct fpt_pkt next;
	const uint8_t *p;
	int n = 0;

	for (p = d->pos + pkt->size; n < max &&
	    fpt_pkt_parse(p, d->cfg.end, &next) > 0; p += next.size) {
		if (next.kind == FPT_PKT_FUP &&
		    next.ipc != FPT_IPC_SUPPRESSED)
			n++;
		else if (next.kind != FPT_PKT_PAD)
			break;
	}
	return (n);
}

int
fpti_hdr_class(const uint8_t *p, const uint8_t *end)
{
	uint8_t b;

	if (p >= end)
		return (FPT_HDR_STATUS);
	b = p[0];
	if (b == 0x02) {
		if (end - p < 2)
			return (FPT_HDR_STATUS);
		b = p[1];
		if (b == 0xa3)
			return (FPT_HDR_TNT);
		/*
		 * 02 c3 is MNT, an event, by its third byte (88); with any
		 * other it is a bad opcode, and cut before it the end.
		 */
		if (b == 0xc3)
			return (end - p >= 3 && p[2] == 0x88 ? FPT_HDR_EVENT :
			    FPT_HDR_STATUS);
		if ((b & 0x1f) == 0x12 || b == 0x43 || b == 0xf3 ||
		    b == 0x83 || b == 0xc8 || b == 0x62 ||
		    b == 0xe2 || b == 0xc2 || b == 0x22 || b == 0xa2 ||
		    b == 0x03)
			return (FPT_HDR_EVENT);
		return (FPT_HDR_STATUS);
	}
	if (b == 0x99)
		return (FPT_HDR_EVENT);
	if (fpti_is_tnt8(b))
		return (FPT_HDR_TNT);
	if ((b & 3) != 1)
		return (FPT_HDR_STATUS);
	if ((b & 0x1f) == 0x0d)
		return (FPT_HDR_TIP);
	if ((b & 0x1f) == 0x11 || (b & 0x1f) == 0x01)
		return (FPT_HDR_EVENT);
	return (FPT_HDR_STATUS);
}

/*
 * Whether the pending event is the first of two or more that a FUP
 * binds (MWAIT, EXSTOP, PTWRITE, MODE.TSX while tracing), the others in
 * d->more.
 */
static int
fup_shared(const struct fpt *d)
{
	return (d->nmore > 0 && !d->async_ev.status_update &&
	    fup_kind(d->async_ev.kind));
}

/* Whether events of @kind can wait for a FUP. */
static int
fup_kind(int kind)
{
	return (kind == FPT_EV_MWAIT || kind == FPT_EV_EXSTOP ||
	    kind == FPT_EV_PTWRITE || kind == FPT_EV_TSX);
}

/*
 * The first packet of kind @kind from offset @off, when d->pos is right
 * after it, else NULL.
 */
static const uint8_t *
first_of_kind(const struct fpt *d, uint64_t off, int kind)
{
	struct fpt_pkt pkt;
	const uint8_t *p;

	if (off >= (uint64_t)(d->pos - d->cfg.begin))
		return (NULL);
	for (p = d->cfg.begin + off; p < d->pos; p += pkt.size) {
		if (fpt_pkt_parse(p, d->cfg.end, &pkt) <= 0)
			return (NULL);
		if (pkt.kind == kind)
			return (p + pkt.size == d->pos ? p : NULL);
	}
	return (NULL);
}

/*
 * The FUP that the event at offset @off waits for, when d->pos is right
 * after it, else NULL (d->pos is at it when no event consumed it).
 */
static const uint8_t *
fup_of(const struct fpt *d, uint64_t off)
{
	return (first_of_kind(d, off, FPT_PKT_FUP));
}

/*
 * The PSBEND of the PSB+ at offset @off when d->pos is right after it,
 * else NULL.
 */
static const uint8_t *
psbend_of(const struct fpt *d, uint64_t off)
{
	return (first_of_kind(d, off, FPT_PKT_PSBEND));
}

/*
 * libipt's read-ahead takes a PSB+ whole, up to the PSBEND its status
 * events wait at (past it, to the next packet that matters, without
 * any): an error met with d->pos at such a PSB, or at the PADs, TSCs,
 * FUPs and stray PSBENDs it reads over before one, is there to libipt,
 * its offset and where its sync goes on from.  Moves d->pos there, or
 * leaves it.
 */
void
fpti_error_at(struct fpt *d)
{
	struct fpt_pkt pkt;
	const uint8_t *p = d->pos;
	int st = 0, rc;

	if (p == NULL)
		return;
	/*
	 * The flow goes to a PSB+'s status update with more after it:
	 * libipt hands them over one at a time at their PSBEND
	 * (pt_qry_decode_psbend()) and stays there until the last, where
	 * fpt has read the PSB+ whole.
	 */
	if (d->async && d->async_ev.status_update &&
	    d->async_ev.psb_left > 0 &&
	    (p = psbend_of(d, d->async_ev.offset)) != NULL) {
		d->pos = p;
		return;
	}
	/*
	 * The flow goes to the first of the events a FUP binds with more
	 * after it: libipt gives that one at the FUP and stays there for
	 * the others (pt_qry_decode_fup()), where fpt took the FUP for all
	 * (or left it, TSX aborts all: no read-ahead passes it then).
	 */
	if (d->async && fup_shared(d) &&
	    ((p = fup_of(d, d->more[d->nmore - 1].offset)) != NULL ||
	    fpti_is_fup_hdr(d->pos, d->cfg.end))) {
		d->pos = p != NULL ? p : d->pos;
		return;
	}
	p = d->pos;
again:
	while (fpt_pkt_parse(p, d->cfg.end, &pkt) > 0 &&
	    (pkt.kind == FPT_PKT_PAD || pkt.kind == FPT_PKT_TSC ||
	    pkt.kind == FPT_PKT_MTC || pkt.kind == FPT_PKT_CYC ||
	    pkt.kind == FPT_PKT_TMA || pkt.kind == FPT_PKT_PSBEND ||
	    (pkt.kind == FPT_PKT_FUP && pkt.ipc != FPT_IPC_SUPPRESSED &&
	    d->nfupq == 0)))
		p += pkt.size;
	/*
	 * Another packet: libipt's read-ahead had passed those before it,
	 * and its offset is there; past a status packet the end of the
	 * trace cuts, as fpti_read_ahead() goes, when its header is whole
	 * (libipt's fetch of a cut header stays before it).
	 */
	if ((rc = fpt_pkt_parse(p, d->cfg.end, &pkt)) <= 0 ||
	    pkt.kind != FPT_PKT_PSB) {
		if (rc == -HWTR_E_TRUNCATED && p < d->cfg.end &&
		    (is_status_hdr(p, d->cfg.end) || (d->nfupq == 0 &&
		    fpti_is_fup_hdr(p, d->cfg.end))) && !hdr_cut(p, d->cfg.end))
			p = d->cfg.end;
		d->pos = p;
		return;
	}
	for (p += pkt.size; (rc = fpt_pkt_parse(p, d->cfg.end, &pkt)) > 0;
	    p += pkt.size) {
		switch (pkt.kind) {
		case FPT_PKT_PSBEND:
			if (st) {
				d->pos = p;
				return;
			}
			/*
			 * Without them, libipt reads on past the PSBEND as
			 * before the PSB: over FUPs too, and more PSB+.
			 */
			p += pkt.size;
			goto again;
		case FPT_PKT_PAD:
		case FPT_PKT_FUP:
		case FPT_PKT_TSC:
		case FPT_PKT_TMA:
		case FPT_PKT_MTC:
		case FPT_PKT_CYC:
			break;
		default:
			/* A status update libipt hands over at the PSBEND. */
			if (!fpt_pkt_psb_status(pkt.kind))
				return;
			st = 1;
			break;
		}
	}
	/*
	 * The end of the trace inside the PSB+ (a header cut short too):
	 * libipt's read-ahead, which decodes the PSB+ whole, meets it there
	 * and goes to the end.
	 */
	if (rc == -HWTR_E_TRUNCATED)
		d->pos = d->cfg.end;
}

/*
 * A decode error @err where the flow is (fpti_error_at()), at d->ip; the
 * flow resyncs after it.
 */
void
fpti_error_here(struct fpt *d, int err)
{
	struct fpt_event ev;

	fpti_error_at(d);
	fpti_ev_init(d, &ev, FPT_EV_ERROR, d->pos);
	ev.error = err;
	ev.ip = d->ip;
	fpti_ev_push(d, &ev);
	d->synced = 0;
}

/*
 * A query (@cond: a TNT bit, else a TIP) meets a packet cut by the end of
 * the trace at d->pos.  libipt looks at its header first: an event (a FUP
 * events wait for too, pt_qry_will_event()'s evb_fup) or, for a TNT bit,
 * a TIP (or for a TIP a TNT while bits are left, or the TIP a MODE.exec
 * waits for, its evb_tip, while bits are left) is a bad query
 * (-HWTR_E_NOENT); what it decodes is the end of the trace
 * (-HWTR_E_TRUNCATED).
 */
int
fpti_cut_query(const struct fpt *d, int cond)
{
	int cls = d->nfupq > 0 && fpti_is_fup_hdr(d->pos, d->cfg.end) ?
	    FPT_HDR_EVENT : fpti_hdr_class(d->pos, d->cfg.end);

	if (cls == FPT_HDR_EVENT || (cond && cls == FPT_HDR_TIP) ||
	    (!cond && cls == FPT_HDR_TIP && d->mode_pending &&
	    d->ntnt > 0) ||
	    (!cond && cls == FPT_HDR_TNT && d->ntnt > 0))
		return (-HWTR_E_NOENT);
	return (-HWTR_E_TRUNCATED);
}
