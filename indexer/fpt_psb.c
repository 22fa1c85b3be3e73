/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * fpt's PSB+, as libipt's query decoder reads it: its status updates and
 * the IP, mode and time it says (fpti_read_psb_plus()) and the dry runs
 * of libipt's read-ahead over one (whole or not, with events or not).
 * Split from fpt_ev.c, whose read-ahead and events call these.
 */

#include <assert.h>
#include <string.h>

#include "hwtrace.h"
#include "fpt_int.h"

static int	bdm70_pge(struct fpt *, const uint8_t *);
static int	psb_ev_kind(int);
static int	pge_follows(struct fpt *);
static int	psb_hdr_ok(const uint8_t *, const uint8_t *);
static int	fup_then_end_at(struct fpt *, const uint8_t *);

/*
 * Read the PSB+ at d->pos (a PSB) up to its PSBEND: the IP, the mode and
 * the time it says.  0, FPT_EOS when it is cut short, or unsupported.
 */
int
fpti_read_psb_plus(struct fpt *d)
{
	struct fpt_pkt pkt;
	struct fpt_event st[FPT_MORE_MAX + 1];
	uint64_t ip = 0;
	int rc, fup = 0, lost = 0, hmode = 0, syncing;
	unsigned i, nst = 0, cur;
	const uint8_t *at = d->pos;

	memset(st, 0, sizeof(st));
	if ((rc = fpti_peek(d, &pkt)) < 0 || pkt.kind != FPT_PKT_PSB)
		return (rc == -HWTR_E_TRUNCATED ? (d->eos = 1, FPT_EOS) :
		    -HWTR_E_DECODE);
	fpti_time_psb(d);
	d->pos += pkt.size;
	/*
	 * The last IP is zero at a PSB (the SDM's IP compression, under
	 * "Target IP (TIP) Packet"), and libipt's PSB+ reader clears it
	 * (pt_qry_read_psb_header()): a compressed FUP here, or IP packet
	 * after, takes no bytes from an IP before the PSB.
	 */
	d->last_ip = 0;
	d->have_ip = 0;
	for (;;) {
		if ((rc = fpti_peek(d, &pkt)) < 0)
			return (rc == -HWTR_E_TRUNCATED && psb_hdr_ok(d->pos,
			    d->cfg.end) ? (d->eos = 1, FPT_EOS) :
			    fpti_time_skip(d, d->pos, NULL) < 0 ?
			    -HWTR_E_UNSUPPORTED : fpti_unsupported(d, "a bad "
			    "packet in PSB+"));
		d->pos += pkt.size;
		switch (pkt.kind) {
		case FPT_PKT_PSBEND:
			goto end;
		case FPT_PKT_FUP:
			/*
			 * BDM70: while tracing is off, a FUP a TIP.PGE
			 * follows is one the PSB+ should not have.
			 */
			if (d->bdm70 && !d->enabled && !fup &&
			    (rc = bdm70_pge(d, d->pos)) != 0) {
				if (rc < 0)
					return (rc);
				break;
			}
			if ((rc = fpti_ip_update(d, &pkt, &ip)) == 0) {
				fup = 1;
				lost = 0;
			} else if (rc == -HWTR_E_NOENT)
				lost = fup;
			break;
		case FPT_PKT_MODE_EXEC:
			if ((pkt.flags & 3) == 3)
				return (fpti_unsupported(d, "MODE.exec with L "
				    "and D set"));
			hmode = (pkt.flags & 1) ? 64 : (pkt.flags & 2) ? 32 :
			    16;
			if (nst > FPT_MORE_MAX)
				return (fpti_unsupported(d, "a long PSB+"));
			st[nst].kind = FPT_EV_EXEC_MODE;
			st[nst++].mode = (uint8_t)hmode;
			break;
		case FPT_PKT_MODE_TSX:
		case FPT_PKT_PIP:
		case FPT_PKT_VMCS:
		case FPT_PKT_CBR:
		case FPT_PKT_MNT:
			if (pkt.kind == FPT_PKT_CBR && (rc = fpti_time_packet(d,
			    d->pos - pkt.size, &pkt, 1)) < 0)
				return (rc);
			if (nst > FPT_MORE_MAX)
				return (fpti_unsupported(d, "a long PSB+"));
			st[nst].kind = psb_ev_kind(pkt.kind);
			st[nst].payload = pkt.kind == FPT_PKT_MODE_TSX ?
			    pkt.flags & 3 : pkt.payload;
			st[nst++].mode = 0;
			if (pkt.kind == FPT_PKT_MNT)
				d->nmnt++;
			break;
		case FPT_PKT_TSC:
		case FPT_PKT_TMA:
		case FPT_PKT_MTC:
		case FPT_PKT_CYC:
			/* libipt's time once it fetches the PSB+'s events. */
			if ((rc = fpti_time_packet(d, d->pos - pkt.size, &pkt,
			    1)) < 0)
				return (rc);
			d->tm.n = 0;
			break;
		case FPT_PKT_PAD:
			break;
		default:
			return (fpti_unsupported(d, "a PSB+ packet this "
			    "decoder does not handle yet"));
		}
	}
end:
	/*
	 * A FUP without IP after one with: libipt's last IP is then
	 * suppressed while its header has turned tracing on
	 * (pt_qry_header_fup()), a state fpt does not follow.
	 */
	if (lost)
		return (fpti_unsupported(d, "a PSB+ whose last FUP has no IP"));
	/* The status updates, in the order of their packets. */
	for (i = 0; i < nst; i++) {
		int kind = st[i].kind;
		uint8_t mode = st[i].mode;
		uint64_t payload = st[i].payload;

		fpti_ev_init(d, &st[i], kind, at);
		st[i].mode = mode;
		st[i].payload = payload;
		/*
		 * libipt gives CBR and MNT no IP, and an MNT is no status
		 * update even in PSB+.
		 */
		st[i].status_update = kind != FPT_EV_MNT;
		st[i].psb_left = (uint8_t)(nst - 1 - i);
		if (kind == FPT_EV_CBR || kind == FPT_EV_MNT)
			continue;
		st[i].ip = fup ? ip : 0;
		st[i].ip_suppressed = !fup;
	}
	/* libipt, tracing, fails a status update that changes its mode. */
	syncing = d->in_sync || at == d->sync_ahead;
	for (i = 0, cur = d->mode; fup && (d->enabled || syncing) &&
	    i < nst; i++) {
		if (st[i].kind == FPT_EV_EXEC_MODE && cur != 0 &&
		    st[i].mode != cur)
			return (fpti_unsupported(d, "a PSB+ with a new mode"));
		if (st[i].kind == FPT_EV_EXEC_MODE)
			cur = st[i].mode;
	}
	if (d->enabled) {
		if (!fup)
			return (fpti_unsupported(d, "a PSB+ without FUP while "
			    "tracing"));
		/*
		 * CBR and MNT bind to no instruction: those before the
		 * first that does happen at once, the others when the flow
		 * reaches the FUP's IP.
		 */
		for (i = 0; i < nst && (st[i].kind == FPT_EV_CBR ||
		    st[i].kind == FPT_EV_MNT); i++)
			fpti_ev_push(d, &st[i]);
		if (i < nst) {
			d->async_ev = st[i];
			d->nmore = 0;
			for (i++; i < nst; i++)
				d->more[d->nmore++] = st[i];
			d->async = 1;
		}
		return (0);
	}
	/*
	 * A TIP.PGE after a PSB+ that turned tracing on (without BDM70,
	 * or with a FUP before the last): libipt's enabled event while
	 * enabled, which fpt does not follow.
	 */
	if (fup && pge_follows(d))
		return (fpti_unsupported(d, "a PSB+ with FUP right before a "
		    "TIP.PGE"));
	/* Past the sync, it turns on libipt's query decoder alone. */
	if (fup && !syncing)
		return (fpti_unsupported(d, "a PSB+ with FUP while off"));
	if (hmode != 0)
		d->mode = (uint8_t)hmode;
	if (fup) {
		d->enabled = 1;
		d->ip = ip;
	}
	for (i = 0; i < nst; i++)
		fpti_ev_push(d, &st[i]);
	return (0);
}

/*
 * libipt's BDM70 check of a FUP in PSB+ that ends before @p: 1 when a
 * TIP.PGE follows past the packets it skips (the PSBEND among them), 0
 * when another packet or the end of the trace comes first, unsupported
 * for a bad packet (libipt's header read fails there).
 */
static int
bdm70_pge(struct fpt *d, const uint8_t *p)
{
	struct fpt_pkt pkt;
	int rc;

	for (;; p += pkt.size) {
		if ((rc = fpt_pkt_parse(p, d->cfg.end, &pkt)) < 0)
			return (rc == -HWTR_E_TRUNCATED ? 0 :
			    fpti_time_skip(d, p, NULL) < 0 ?
			    -HWTR_E_UNSUPPORTED : fpti_unsupported(d, "a bad "
			    "packet after a FUP in PSB+"));
		switch (pkt.kind) {
		case FPT_PKT_TIP_PGE:
			return (1);
		case FPT_PKT_PAD:
		case FPT_PKT_TSC:
		case FPT_PKT_CBR:
		case FPT_PKT_PSBEND:
		case FPT_PKT_PIP:
		case FPT_PKT_MODE_EXEC:
		case FPT_PKT_MODE_TSX:
		case FPT_PKT_VMCS:
		case FPT_PKT_TMA:
		case FPT_PKT_MTC:
		case FPT_PKT_CYC:
		case FPT_PKT_MNT:
			break;
		case FPT_PKT_UNKNOWN:
			return (fpti_unsupported(d, "a bad packet after a FUP "
			    "in PSB+"));
		default:
			return (0);
		}
	}
}

/* The event of a packet in PSB+ (a status update but for MNT). */
static int
psb_ev_kind(int kind)
{
	switch (kind) {
	case FPT_PKT_MODE_TSX:
		return (FPT_EV_TSX);
	case FPT_PKT_PIP:
		return (FPT_EV_PAGING);
	case FPT_PKT_VMCS:
		return (FPT_EV_VMCS);
	case FPT_PKT_CBR:
		return (FPT_EV_CBR);
	default:
		assert(kind == FPT_PKT_MNT);
		return (FPT_EV_MNT);
	}
}

/* Whether a TIP.PGE comes next, past timing packets. */
static int
pge_follows(struct fpt *d)
{
	const uint8_t *p = d->pos;
	struct fpt_pkt pkt;

	while (fpt_pkt_parse(p, d->cfg.end, &pkt) > 0) {
		switch (pkt.kind) {
		case FPT_PKT_PAD:
		case FPT_PKT_TSC:
		case FPT_PKT_CBR:
		case FPT_PKT_MTC:
		case FPT_PKT_CYC:
		case FPT_PKT_TMA:
			p += pkt.size;
			continue;
		case FPT_PKT_MNT:
			d->nmnt++;
			p += pkt.size;
			continue;
		case FPT_PKT_TIP_PGE:
			return (1);
		default:
			return (0);
		}
	}
	return (0);
}

/*
 * The PSB+ at *@pp (whole, as fpti_psb_plus_ok() found it): how many events
 * libipt queues for its PSBEND; *@pp goes past the PSBEND.
 */
int
fpti_psb_events(struct fpt *d, const uint8_t **pp)
{
	struct fpt_pkt pkt;
	const uint8_t *p = *pp;
	int n = 0;

	for (;;) {
		if (fpt_pkt_parse(p, d->cfg.end, &pkt) <= 0) {
			assert(!"fpti_psb_events: a PSB+ fpti_psb_plus_ok() "
			    "did not pass");
			return (2);
		}
		p += pkt.size;
		if (pkt.kind == FPT_PKT_PSBEND) {
			*pp = p;
			return (n);
		}
		n += fpt_pkt_psb_status(pkt.kind);
	}
}

/*
 * Whether libipt's read-ahead meets the end of the trace at the packet
 * the end cuts at @p: it decodes that packet (not a branch's, and no
 * event's: a FUP is one where an event waits for it) and its read fails
 * there, or its opcode is cut.
 */
int
fpti_cut_ends(const struct fpt *d, const uint8_t *p)
{
	if ((*p & 0x1f) == 0x1d)
		return (d->nfupq == 0);
	return (!fpti_is_tnt8(*p) && (*p & 0x1f) != 0x0d &&
	    (*p & 0x1f) != 0x11 && (*p & 0x1f) != 0x01 && *p != 0x99 &&
	    (*p != 0x02 || d->cfg.end - p < 2 || p[1] == 0x82 ||
	    p[1] == 0x23 || p[1] == 0x73 ||
	    (p[1] == 0xc3 && d->cfg.end - p < 3)));
}

/*
 * Whether the trace ends after the FUP @pkt at d->pos, past the status
 * packets libipt's read-ahead passes over (a status packet cut by the
 * end, a PSB among them, ends it too, and so does a PSB+ the end cuts,
 * which that read-ahead decodes whole; it passes a whole one without
 * status updates) and the FUPs with IP it takes
 * for more asynchronous branches (fup_ahead() allows two in a row).
 */
int
fpti_fup_then_end(struct fpt *d, const struct fpt_pkt *pkt)
{
	return (fup_then_end_at(d, d->pos + pkt->size));
}

/* fpti_fup_then_end() from @p, just after the FUP. */
static int
fup_then_end_at(struct fpt *d, const uint8_t *p)
{
	const uint8_t *q;
	const char *unsup = d->unsup;
	struct fpt_pkt next;
	int rc;

	for (;;) {
		if (p >= d->cfg.end)
			return (1);
		rc = fpt_pkt_parse(p, d->cfg.end, &next);
		if (rc == -HWTR_E_TRUNCATED)
			return (fpti_cut_ends(d, p));
		if (rc < 0 || (next.kind == FPT_PKT_FUP &&
		    next.ipc == FPT_IPC_SUPPRESSED))
			return (0);
		if (next.kind == FPT_PKT_PSB) {
			q = p + next.size;
			rc = fpti_psb_plus_ok(d, q);
			d->unsup = unsup;
			if (rc != 0)
				return (rc == -HWTR_E_TRUNCATED);
			/*
			 * A whole PSB+ with no status update queues nothing
			 * for its PSBEND: that read-ahead goes on past it.
			 */
			if (fpti_psb_events(d, &q) > 0)
				return (0);
			p = q;
			continue;
		}
		if (next.kind != FPT_PKT_PAD && next.kind != FPT_PKT_TSC &&
		    next.kind != FPT_PKT_PSBEND && next.kind != FPT_PKT_MTC &&
		    next.kind != FPT_PKT_CYC && next.kind != FPT_PKT_TMA &&
		    next.kind != FPT_PKT_FUP)
			return (0);
		p += next.size;
	}
}

/*
 * Whether, from the PSB+ whose packets after the PSB start at @p on, the
 * trace holds only what libipt's read-ahead passes without an event and
 * cannot fail on (whole PSB+s without status updates, PADs, PSBENDs, TSC,
 * MTC and CYC, whose decode fails on no value) up to its end, or to a
 * packet the end cuts that it decodes (fpti_cut_ends()), or to a FUP no
 * event waits for that fpti_fup_then_end() would end at: that read-ahead
 * met the end.  Not a CYC that erratum SKD007 makes libipt take for the
 * start of an OVF, nor a TMA (SKZ84 skips a corrupt one, and its decode
 * fails without a TSC before it).
 */
static int
psb_then_end(struct fpt *d, const uint8_t *p)
{
	const char *unsup = d->unsup;
	struct fpt_pkt pkt;
	int rc;

	for (;;) {
		rc = fpti_psb_plus_ok(d, p);
		d->unsup = unsup;
		if (rc != 0 || fpti_psb_events(d, &p) > 0)
			return (0);
		for (;; p += pkt.size) {
			if (p == d->cfg.end)
				return (1);
			if ((rc = fpt_pkt_parse(p, d->cfg.end, &pkt)) <= 0)
				return (rc == -HWTR_E_TRUNCATED &&
				    fpti_cut_ends(d, p));
			if (pkt.kind == FPT_PKT_CYC &&
			    !fpti_cyc_skd007(d, p, &pkt))
				continue;
			/*
			 * A FUP no event waits for, an asynchronous branch
			 * that binds to a TIP: the read-ahead queues it and
			 * goes on as after any such FUP.
			 */
			if (pkt.kind == FPT_PKT_FUP && d->nfupq == 0 &&
			    pkt.ipc != FPT_IPC_SUPPRESSED)
				return (fup_then_end_at(d, p + pkt.size));
			if (pkt.kind != FPT_PKT_PAD && pkt.kind != FPT_PKT_TSC &&
			    pkt.kind != FPT_PKT_MTC &&
			    pkt.kind != FPT_PKT_PSBEND)
				break;
		}
		if (pkt.kind != FPT_PKT_PSB)
			return (0);
		p += pkt.size;
	}
}

/*
 * A query meets the PSB @pkt at d->pos: libipt's read-ahead, after the packet
 * before, decoded its PSB+ whole as a status packet.  With no status
 * update in it, nothing waits at its PSBEND and the query goes on past
 * it.  1 when it was read so, 0 when it has events (libipt's bad query)
 * or an event waits, or fpti_read_psb_plus()'s error or unsupported.
 * An event waiting for a FUP, or a MODE.exec's for its TIP, stays queued
 * over it; where only the end of the trace follows, that read-ahead met
 * the end and the query does too (1, d->pos at the end).
 */
int
fpti_psb_pass(struct fpt *d, const struct fpt_pkt *pkt)
{
	const uint8_t *p = d->pos + pkt->size;
	int rc;

	if (d->async || d->evq_n > 0)
		return (0);
	if (d->nfupq > 0 || d->mode_pending) {
		if (!psb_then_end(d, p))
			return (0);
		d->pos = d->cfg.end;
		return (1);
	}
	if ((rc = fpti_psb_plus_ok(d, p)) < 0)
		return (rc);
	if (fpti_psb_events(d, &p) > 0)
		return (0);
	/* As fpti_fetch_event() does (no FUP while tracing: unsupported). */
	rc = fpti_read_psb_plus(d);
	return (rc < 0 ? rc : 1);
}

/*
 * Whether the packet cut by the end of the trace at @p is one libipt's
 * PSB+ reader takes (it has a header function, or is the PSBEND), so
 * that the cut ends the trace; any other is its bad context, whole or
 * not.
 */
static int
psb_hdr_ok(const uint8_t *p, const uint8_t *end)
{
	if (p >= end)
		return (1);
	switch (p[0]) {
	case 0x00:	/* PAD */
	case 0x19:	/* TSC */
	case 0x59:	/* MTC */
	case 0x99:	/* MODE */
		return (1);
	case 0x02:
		if (end - p < 2)
			return (1);
		return (p[1] == 0x23 || p[1] == 0x43 || p[1] == 0x03 ||
		    p[1] == 0x73 || p[1] == 0xc8 || p[1] == 0xc3);
	default:
		/* FUP, CYC. */
		return ((p[0] & 0x1f) == 0x1d || (p[0] & 3) == 3);
	}
}

/*
 * libipt's read-ahead decodes a PSB+ whole (pt_qry_read_psb_header); a
 * packet there that is no PSB+ packet, or a bad one, fails the read.  The
 * PSB+ after the PSB that ends before @p: 0 when fpti_read_psb_plus()
 * reads it too, -HWTR_E_TRUNCATED
 * when the trace ends in it, unsupported otherwise (as fpt's own read of
 * it would be).
 */
int
fpti_psb_plus_ok(struct fpt *d, const uint8_t *p)
{
	struct fpt_pkt pkt;
	int rc, fup = 0;
	unsigned nst = 0;

	for (;; p += pkt.size) {
		if ((rc = fpt_pkt_parse(p, d->cfg.end, &pkt)) < 0)
			return (rc == -HWTR_E_TRUNCATED && psb_hdr_ok(p,
			    d->cfg.end) ? rc : fpti_unsupported(d, "a bad "
			    "packet in PSB+"));
		switch (pkt.kind) {
		case FPT_PKT_PSBEND:
			return (0);
		case FPT_PKT_FUP:
			/*
			 * libipt's BDM70 look past a FUP while tracing is off
			 * fails the read at a bad packet, as in fpt's own.
			 */
			if (d->bdm70 && !d->enabled && !fup &&
			    (rc = bdm70_pge(d, p + pkt.size)) != 0) {
				if (rc < 0)
					return (rc);
				break;
			}
			fup = pkt.ipc != FPT_IPC_SUPPRESSED;
			break;
		case FPT_PKT_PIP:
		case FPT_PKT_MODE_EXEC:
		case FPT_PKT_MODE_TSX:
		case FPT_PKT_CBR:
		case FPT_PKT_VMCS:
		case FPT_PKT_MNT:
			/*
			 * libipt's queue of them holds six, and fails the
			 * PSB+ on a seventh; fpt's reader takes four.
			 */
			if (++nst > FPT_MORE_MAX + 1)
				return (fpti_unsupported(d, "a long PSB+"));
			break;
		case FPT_PKT_PAD:
		case FPT_PKT_TSC:
			break;
		case FPT_PKT_TMA:
		case FPT_PKT_MTC:
		case FPT_PKT_CYC:
			if ((rc = fpti_time_skip(d, p, &pkt)) < 0)
				return (rc);
			break;
		default:
			return (fpti_unsupported(d, "a PSB+ packet this "
			    "decoder does not handle yet"));
		}
	}
}
