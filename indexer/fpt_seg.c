/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

#include <assert.h>
#include <intel-pt.h>
#include <stdlib.h>
#include <string.h>

#include "hwtr_common.h"
#include "hwtr_ix.h"
#include "hwtr_x86.h"
#include "decode_int.h"
#include "fpt.h"

static int
owner_started(const void *t, const void *owners, size_t i)
{
	const struct ix_owner *o = (const struct ix_owner *)owners + i;

	return (!o->has_start || o->start_tsc <= *(const uint64_t *)t);
}

/* The owner of the CPU at @t: index + 1 in in->owners, 0: none. */
size_t
ix_dec_owner_idx(const struct dec *d, uint64_t t)
{
	return (hwtr_bsearch(&t, d->w.in->owners, d->w.in->nowners,
	    owner_started));
}

/* Up to @n code bytes at @vaddr in section @isid; how many were read. */
size_t
ix_dec_read_code(struct dec *d, int isid, uint64_t vaddr, uint8_t *buf,
    size_t n)
{
	size_t i;

	for (i = 0; i < d->w.in->nmaps; i++) {
		const struct ix_map *m = d->w.in->maps[i];
		const uint8_t *img;
		uint64_t size, off, avail;

		if (m->isid != isid || m->image < 0 ||
		    (img = d->w.in->img[m->image]) == NULL)
			continue;
		if (m->pgoff >= d->w.in->img_len[m->image])
			continue;
		size = m->end - m->start;
		if (size > d->w.in->img_len[m->image] - m->pgoff)
			size = d->w.in->img_len[m->image] - m->pgoff;
		if (vaddr < m->start || vaddr >= m->start + size)
			continue;
		off = m->pgoff + (vaddr - m->start);
		avail = m->start + size - vaddr;
		if (avail < n)
			n = (size_t)avail;
		memcpy(buf, img + off, n);
		return (n);
	}
	return (0);
}

/*
 * ix_segdec_fast: fpt in place of libipt's block decoder.  What libipt
 * says in its status flags (an event pending, the end) fpt says by its
 * next item, read ahead here.  A decode error or a trace fpt does not
 * decode exactly as libipt does ends the decoding (@bail) and the segment
 * goes to libipt from its start (fast_decode()), so that every output is
 * libipt's, decode errors' wording included.
 */
/*
 * The maps of the image libipt has for time @t (@known; otherwise the
 * end of the capture), as set_image() chooses them, for fast_read() and
 * fast_map().  When they are not those of before, fpt forgets the spans
 * of code it kept, and 1 is returned.
 */
/* Whether an active map hides part of one mapped before it. */
static int
fast_cut(const struct dec *d)
{
	const struct ix_map *a, *b;
	size_t i, j;

	for (i = 0; i < d->nact; i++) {
		a = d->w.in->maps[d->act[i]];
		for (j = i + 1; j < d->nact; j++) {
			b = d->w.in->maps[d->act[j]];
			if (b->start < a->end && b->end > a->start)
				return (1);
		}
	}
	return (0);
}

static int
fast_maps(struct dec *d, int known, uint64_t t)
{
	const struct ix_owner *o = d->w.in->owners;
	size_t i, k, n = 0;
	int32_t owner = -1;
	int changed = 0;

	if (hwtr_grow((void **)&d->act, &d->cact, d->w.in->nmaps + 1,
	    sizeof(*d->act)) < 0)
		return (-1);
	if (known && (k = ix_dec_owner_idx(d, t)) > 0)
		owner = o[k - 1].pid;
	for (i = 0; i < d->w.in->nmaps; i++) {
		const struct ix_map *m = d->w.in->maps[i];
		int active;

		if (owner >= 0 && m->pid >= 0 && m->pid != owner)
			continue;
		if (known)
			active = (!m->has_from || m->from_tsc <= t) &&
			    (!m->has_to || t < m->to_tsc);
		else
			active = !m->has_to;
		if (!active || m->isid <= 0)
			continue;
		/* In place: entry n of the old list is not read after. */
		if (n >= d->nact || d->act[n] != i)
			changed = 1;
		d->act[n++] = i;
	}
	if (n != d->nact)
		changed = 1;
	d->nact = n;
	d->act_known = known;
	d->act_t = t;
	if (changed && d->fp != NULL) {
		if (fast_cut(d))
			fpt_code_cut(d->fp);
		else
			fpt_code_changed(d->fp);
	}
	return (changed);
}

/*
 * The image libipt has when it decodes at fpt's time (the last one when
 * fpt has none since its sync): 1 when it is another one than before.
 */
static int
fast_now(struct dec *d)
{
	uint64_t t;

	if (fpt_time(d->fp, &t) == 0 && (!d->act_known || t != d->act_t))
		return (fast_maps(d, 1, t));
	return (0);
}

static int
fast_read(void *ctx, uint64_t ip, uint8_t *buf, size_t n, int *isid)
{
	struct dec *d = ctx;
	size_t i;

	if (fast_now(d) < 0)
		return (-1);
	/* A section added later hides those before it, as in libipt. */
	for (i = d->nact; i-- > 0;) {
		const struct ix_map *m = d->w.in->maps[d->act[i]];
		int rc;

		if (ip < m->start || ip >= m->end)
			continue;
		*isid = m->isid;
		if (n == 0)
			return (0);
		/* The section libipt reads, from the same cache. */
		if (n > m->end - ip)
			n = (size_t)(m->end - ip);
		rc = pt_iscache_read(d->isc, buf, n, m->isid, ip);
		return (rc > 0 ? rc : -1);
	}
	return (-1);
}

/*
 * fpt's map callback: the span around @ip that the section fast_read()
 * reads there covers, the sections added after it cut off.
 */
static int
fast_map(void *ctx, uint64_t ip, uint64_t *lo, uint64_t *hi, int *isid)
{
	struct dec *d = ctx;
	const struct ix_map *m = NULL, *h;
	size_t i, j;

	if (fast_now(d) < 0)
		return (-1);
	for (i = d->nact; i-- > 0;) {
		m = d->w.in->maps[d->act[i]];
		if (ip >= m->start && ip < m->end)
			break;
	}
	if (i == (size_t)-1)
		return (-1);
	assert(m != NULL);
	*lo = m->start;
	*hi = m->end;
	for (j = i + 1; j < d->nact; j++) {
		h = d->w.in->maps[d->act[j]];
		if (h->end <= ip && h->end > *lo)
			*lo = h->end;
		else if (h->start > ip && h->start < *hi)
			*hi = h->start;
	}
	*isid = m->isid;
	return (0);
}

static void
fast_bail(struct dec *d, int why, const char *what)
{
	if (d->bail == 0) {
		d->bail = why;
		d->bail_why = what;
	}
}

/*
 * Why an event fpt gives is not yet one the referee (t_fastdec) holds
 * equal to libipt's in the database, NULL when it is.  fpt decodes more
 * (power, TSX, paging, VMCS, overflow, PTWRITE, TraceStop, a PSB+ that
 * turns tracing on), but where libipt records these events, at which
 * offset, is not yet what libipt says: such a segment goes to libipt.
 */
static const char *
fast_unproved(const struct fpt_event *ev)
{
	switch (ev->kind) {
	case FPT_EV_ENABLED:
		return (ev->status_update ? "tracing enabled by a PSB+" :
		    NULL);
	case FPT_EV_DISABLED:
	case FPT_EV_ASYNC_DISABLED:
	case FPT_EV_ASYNC_BRANCH:
	case FPT_EV_EXEC_MODE:
		return (NULL);
	case FPT_EV_CBR:
		/* Left out of the database on both paths (decode.c). */
		return (NULL);
	case FPT_EV_TSX:
	case FPT_EV_PAGING:
	case FPT_EV_VMCS:
		/*
		 * A PSB+'s status updates: only their time goes into the
		 * database (decode.c), as the MODE.exec's does.
		 */
		return (ev->status_update ? NULL : "an event whose offset "
		    "fast does not yet give as libipt does");
	default:
		return ("an event whose offset fast does not yet give as "
		    "libipt does");
	}
}

/*
 * fpt read a time that changed the image while it read block @b, which
 * may have started in a span of code kept from before: whether the block
 * does not start in the image it names.
 */
static int
fast_moved(struct dec *d, const struct fpt_block *b)
{
	int isid;

	return (fast_read(d, b->ip, NULL, 0, &isid) < 0 || isid != b->isid);
}

/* libipt's status flags for fpt's next item. */
static int
fast_peek(struct dec *d)
{
	const char *why;
	int rc, ch;

	if (d->bail != 0)
		return (-pte_eos);
	if (d->pk_state == 0) {
		rc = fpt_next(d->fp, &d->pk);
		d->pk_off = fpt_offset(d->fp);
		if ((ch = fast_now(d)) != 0 && (ch < 0 || (rc == 0 &&
		    d->pk.kind == FPT_ITEM_BLOCK && fast_moved(d,
		    &d->pk.block)))) {
			fast_bail(d, 1, "an image change within a block fast "
			    "reads ahead");
			return (-pte_eos);
		}
		if (rc == FPT_EOS)
			d->pk_state = 2;
		else if (rc == -HWTR_E_UNSUPPORTED) {
			fast_bail(d, 1, fpt_unsupported(d->fp));
			return (-pte_eos);
		} else if (rc < 0) {
			fast_bail(d, 2, "fpt failed");
			return (-pte_eos);
		} else if (d->pk.kind == FPT_ITEM_EVENT &&
		    d->pk.event.kind == FPT_EV_ERROR) {
			fast_bail(d, 2, hwtr_errstr(d->pk.event.error));
			return (-pte_eos);
		} else if (fpt_mnt_count(d->fp) != 0) {
			fast_bail(d, 1, "an MNT packet (libipt reports an "
			    "event fast does not give)");
			return (-pte_eos);
		} else if (d->pk.kind == FPT_ITEM_EVENT &&
		    (why = fast_unproved(&d->pk.event)) != NULL) {
			fast_bail(d, 1, why);
			return (-pte_eos);
		} else
			d->pk_state = 1;
	}
	if (d->pk_state == 2)
		return (pts_eos);
	return (d->pk.kind == FPT_ITEM_EVENT ? pts_event_pending : 0);
}

static enum pt_exec_mode
fast_mode(uint8_t bits)
{
	return (bits == 16 ? ptem_16bit : bits == 32 ? ptem_32bit :
	    ptem_64bit);
}

/* libipt's class of a block's last instruction that needed no trace. */
static enum pt_insn_class
fast_iclass(struct dec *d, const struct fpt_block *fb)
{
	struct hwtr_x86_insn x;
	uint8_t buf[16];
	int n, isid;

	n = fast_read(d, fb->end_ip, buf, 15, &isid);
	if (n <= 0 || hwtr_x86_decode(buf, (size_t)n, fb->end_ip, fb->mode,
	    &x) < 0)
		return (ptic_error);
	/* VMX far transfers, XBEGIN: libipt's classes, not Zydis's. */
	fpt_x86_libipt(buf, (size_t)n, fb->mode, &x);
	switch (x.kind) {
	case HWTR_X86_OTHER:
		return (ptic_other);
	case HWTR_X86_JCC:
		return (ptic_cond_jump);
	case HWTR_X86_JMP:
		return (ptic_jump);
	case HWTR_X86_CALL:
		return (ptic_call);
	case HWTR_X86_SYSCALL:
	case HWTR_X86_FAR:
		return (x.far == HWTR_X86_FAR_RET ? ptic_far_return :
		    x.far == HWTR_X86_FAR_JUMP ? ptic_far_jump :
		    ptic_far_call);
	default:
		return (ptic_error);
	}
}

/* fpt's block @fb as libipt gives it. */
void
ix_fast_pt_block(struct dec *d, const struct fpt_block *fb,
    struct pt_block *b)
{
	memset(b, 0, sizeof(*b));
	b->ip = fb->ip;
	b->end_ip = fb->end_ip;
	b->ninsn = (uint16_t)fb->ninsn;
	b->isid = fb->isid;
	b->mode = fast_mode(fb->mode);
	switch (fb->end) {
	case FPT_END_COND_TAKEN:
	case FPT_END_COND_NOT_TAKEN:
		b->iclass = ptic_cond_jump;
		break;
	case FPT_END_INDIRECT:
		b->iclass = ptic_jump;
		break;
	case FPT_END_CALL_IND:
		b->iclass = ptic_call;
		break;
	case FPT_END_RET:
		b->iclass = ptic_return;
		break;
	default:
		b->iclass = fast_iclass(d, fb);
		break;
	}
}

int
ix_fast_peek(struct dec *d)
{
	return (fast_peek(d));
}

int
ix_src_next(struct dec *d, struct pt_block *b)
{
	int status;

	if (d->fp == NULL)
		return (pt_blk_next(d->blk, b, sizeof(*b)));
	status = fast_peek(d);
	if (status < 0 || (status & pts_event_pending))
		return (status < 0 ? status : -pte_event_ignored);
	if (status & pts_eos)
		return (-pte_eos);
	ix_fast_pt_block(d, &d->pk.block, b);
	d->last = d->pk.block;
	d->pk_state = 0;
	d->cur_off = d->pk_off;
	return (fast_peek(d));
}

/*
 * Where libipt's decoder expects tracing to resume after a TIP.PGD
 * without an IP: the instruction after the last block's, or the target
 * of its conditional branch taken; 0 when not known.
 */
static int
fast_next_ip(struct dec *d, uint64_t *ip)
{
	const struct fpt_block *b = &d->last;
	struct hwtr_x86_insn x;
	uint8_t buf[16];
	int n, isid;

	if (b->ninsn == 0 || (b->end != FPT_END_NONE &&
	    b->end != FPT_END_COND_TAKEN && b->end != FPT_END_COND_NOT_TAKEN))
		return (0);
	n = fast_read(d, b->end_ip, buf, 15, &isid);
	if (n <= 0 || hwtr_x86_decode(buf, (size_t)n, b->end_ip, b->mode,
	    &x) < 0)
		return (0);
	if (b->end == FPT_END_COND_TAKEN || (b->end == FPT_END_NONE &&
	    x.has_target && (x.kind == HWTR_X86_JMP ||
	    x.kind == HWTR_X86_CALL)))
		*ip = x.target;
	else
		*ip = b->end_ip + x.len;
	return (1);
}

/* libipt's event types by fpt's kinds (FPT_EV_ERROR never gets here). */
static const enum pt_event_type fast_evtypes[] = {
	[FPT_EV_ENABLED] = ptev_enabled,
	[FPT_EV_DISABLED] = ptev_disabled,
	[FPT_EV_ASYNC_DISABLED] = ptev_async_disabled,
	[FPT_EV_ASYNC_BRANCH] = ptev_async_branch,
	[FPT_EV_EXEC_MODE] = ptev_exec_mode,
	[FPT_EV_OVERFLOW] = ptev_overflow,
	[FPT_EV_TSX] = ptev_tsx,
	[FPT_EV_PAGING] = ptev_paging,
	[FPT_EV_VMCS] = ptev_vmcs,
	[FPT_EV_PTWRITE] = ptev_ptwrite,
	[FPT_EV_PWRE] = ptev_pwre,
	[FPT_EV_PWRX] = ptev_pwrx,
	[FPT_EV_EXSTOP] = ptev_exstop,
	[FPT_EV_MWAIT] = ptev_mwait,
	[FPT_EV_STOP] = ptev_stop,
	[FPT_EV_CBR] = ptev_cbr,
	[FPT_EV_MNT] = ptev_mnt,
};

static void
fast_event(struct dec *d, const struct fpt_event *fe, struct pt_event *ev)
{
	memset(ev, 0, sizeof(*ev));
	assert(fe->kind < sizeof(fast_evtypes) / sizeof(fast_evtypes[0]));
	ev->type = fast_evtypes[fe->kind];
	ev->ip_suppressed = fe->ip_suppressed;
	ev->status_update = fe->status_update;
	ev->has_tsc = fe->has_tsc;
	ev->tsc = fe->tsc;
	switch (fe->kind) {
	case FPT_EV_ENABLED:
		ev->variant.enabled.ip = fe->ip;
		ev->variant.enabled.resumed = d->have_dis_ip &&
		    d->dis_ip == fe->ip;
		d->have_dis_ip = 0;
		break;
	case FPT_EV_DISABLED:
		ev->variant.disabled.ip = fe->ip;
		d->have_dis_ip = !fe->ip_suppressed;
		d->dis_ip = fe->ip;
		if (fe->ip_suppressed)
			d->have_dis_ip = fast_next_ip(d, &d->dis_ip);
		break;
	case FPT_EV_ASYNC_DISABLED:
		ev->variant.async_disabled.at = fe->ip;
		ev->variant.async_disabled.ip = fe->to;
		d->have_dis_ip = 1;
		d->dis_ip = fe->ip;
		break;
	case FPT_EV_ASYNC_BRANCH:
		ev->variant.async_branch.from = fe->ip;
		ev->variant.async_branch.to = fe->to;
		d->have_dis_ip = 0;
		break;
	case FPT_EV_EXEC_MODE:
		ev->variant.exec_mode.ip = fe->ip;
		ev->variant.exec_mode.mode = fast_mode(fe->mode);
		break;
	case FPT_EV_OVERFLOW:
		ev->variant.overflow.ip = fe->ip;
		d->have_dis_ip = 0;
		break;
	case FPT_EV_PAGING:
		ev->variant.paging.cr3 = fe->payload;
		break;
	case FPT_EV_VMCS:
		ev->variant.vmcs.base = fe->payload;
		break;
	case FPT_EV_PTWRITE:
		ev->variant.ptwrite.payload = fe->payload;
		break;
	case FPT_EV_CBR:
		ev->variant.cbr.ratio = (uint16_t)fe->payload;
		break;
	case FPT_EV_MNT:
		ev->variant.mnt.payload = fe->payload;
		break;
	default:
		break;
	}
}

int
ix_src_event(struct dec *d, struct pt_event *ev)
{
	int status;

	if (d->fp == NULL)
		return (pt_blk_event(d->blk, ev, sizeof(*ev)));
	status = fast_peek(d);
	if (status < 0 || !(status & pts_event_pending))
		return (status < 0 ? status : -pte_bad_query);
	fast_event(d, &d->pk.event, ev);
	d->evoff = d->pk.event.offset;
	d->pk_state = 0;
	d->cur_off = d->pk_off;
	return (fast_peek(d));
}

int
ix_src_sync_forward(struct dec *d)
{
	int rc;

	if (d->fp == NULL)
		return (pt_blk_sync_forward(d->blk));
	if (d->bail != 0)
		return (-pte_eos);
	d->pk_state = 0;
	d->have_dis_ip = 0;
	rc = fpt_sync_forward(d->fp);
	d->cur_off = fpt_offset(d->fp);
	if (rc == FPT_EOS)
		return (-pte_eos);
	if (rc < 0) {
		fast_bail(d, rc == -HWTR_E_UNSUPPORTED ? 1 : 2,
		    rc == -HWTR_E_UNSUPPORTED ? fpt_unsupported(d->fp) :
		    "no sync");
		return (-pte_eos);
	}
	/*
	 * libipt's sync reads ahead past the PSB+ to the next packet that
	 * decides anything; when the trace ends first it fails at the end
	 * and gives no time: nothing after the PSB+ is nothing decoded.
	 */
	rc = fast_peek(d);
	return (rc == pts_eos ? -pte_eos : rc);
}

/*
 * The PSBEND of the PSB+ at @from, or @dflt when no PSB+ is there; *@nev
 * the status events libipt queues for that PSBEND.
 */
static uint64_t
fast_psbend(struct dec *d, uint64_t from, uint64_t dflt, int *nev)
{
	struct fpt_pkt pkt;
	const uint8_t *p = d->fbuf + from, *end = d->fbuf + d->flen;
	int n;

	*nev = 0;
	if (from >= d->flen || fpt_pkt_parse(p, end, &pkt) <= 0 ||
	    pkt.kind != FPT_PKT_PSB)
		return (dflt);
	while ((n = fpt_pkt_parse(p, end, &pkt)) > 0) {
		if (pkt.kind == FPT_PKT_PSBEND)
			return ((uint64_t)(p - d->fbuf));
		*nev += fpt_pkt_psb_status(pkt.kind);
		p += n;
	}
	*nev = 0;
	return (dflt);
}

/*
 * libipt's read-ahead (pt_qry_read_ahead) from @from: it decodes timing
 * packets, and a FUP no event waits for (the asynchronous branch it
 * starts then waits for a TIP: ++*@ntip), up to a packet of a branch or
 * of an event, where it stops.  A PSB+ it reads to its PSBEND, whose
 * status events are then pending (*@npsb of them, when not NULL; 0
 * where it stops elsewhere).  Where it stops.
 */
static uint64_t
fast_ahead(struct dec *d, uint64_t from, int *ntip, int *npsb)
{
	struct fpt_pkt pkt;
	const uint8_t *p = d->fbuf + from, *end = d->fbuf + d->flen;
	uint64_t at;
	int n, nev;

	if (npsb != NULL)
		*npsb = 0;
	while (p < end && (n = fpt_pkt_parse(p, end, &pkt)) > 0) {
		at = (uint64_t)(p - d->fbuf);
		switch (pkt.kind) {
		case FPT_PKT_PSB:
			at = fast_psbend(d, at, at, &nev);
			if (npsb != NULL)
				*npsb = nev;
			return (at);
		case FPT_PKT_FUP:
			++*ntip;
			break;
		case FPT_PKT_PAD:
		case FPT_PKT_TSC:
		case FPT_PKT_MTC:
		case FPT_PKT_CYC:
		case FPT_PKT_TMA:
			break;
		default:
			/* CBR is an event's packet to libipt. */
			return (at);
		}
		p += n;
	}
	return ((uint64_t)(p - d->fbuf));
}

/*
 * libipt's fetch of the event whose first packet it read ahead to at @at
 * (its pt_qry_event), @ntip events waiting for a TIP: where the packets
 * it decodes end, the one that completes the event included, before it
 * reads ahead again.  A TIP, TIP.PGE or TIP.PGD that more events wait
 * for is not passed yet.  @at itself when no event is there.
 */
static uint64_t
fast_fetched(struct dec *d, uint64_t at, int ntip, int npsb)
{
	struct fpt_pkt pkt;
	const uint8_t *end = d->fbuf + d->flen;
	uint64_t p = at;
	int n;

	while (p < d->flen &&
	    (n = fpt_pkt_parse(d->fbuf + p, end, &pkt)) > 0) {
		switch (pkt.kind) {
		case FPT_PKT_MODE_EXEC:
			/* Its event waits for the TIP after it. */
			ntip++;
			p = fast_ahead(d, p + (uint64_t)n, &ntip, NULL);
			continue;
		case FPT_PKT_TIP:
			if (ntip == 0)
				return (at);
			/* FALLTHROUGH */
		case FPT_PKT_TIP_PGD:
			if (ntip > 1)
				return (p);
			break;
		case FPT_PKT_TIP_PGE:
			/* The enabled event first, then those waiting. */
			if (ntip > 0)
				return (p);
			break;
		case FPT_PKT_PSBEND:
			/*
			 * Its fetch dequeues the first status event of the
			 * PSB+: the last one, and the read-ahead after it
			 * passes the PSBEND; more, and it stays there.
			 */
			if (p == at && npsb == 1)
				break;
			return (at);
		case FPT_PKT_TNT:
		case FPT_PKT_PSB:
			return (at);
		default:
			break;
		}
		return (p + (uint64_t)n);
	}
	return (p);
}

/*
 * Where libipt's query decoder has decoded the trace to when it gives
 * what fpt gave last (*@dec; what it read ahead after is not decoded) and
 * where it stands (*@at).  It has fetched the event after the one it
 * gave last when that one's packets come next, even when the event waits
 * for a block to complete first; after it and after the branch that ends
 * a block it reads ahead.
 */
static void
fast_lib_pos(struct dec *d, uint64_t *dec, uint64_t *at)
{
	uint64_t ra, e;
	int ntip = 0, npsb;

	if (d->pk_state == 1 && d->pk.kind == FPT_ITEM_EVENT) {
		*dec = d->pk_off;
		/*
		 * A PSB+'s event that more of its events follow: libipt's
		 * fetch of it stays at the PSBEND.
		 */
		if (d->pk.event.psb_left > 0)
			*at = fast_psbend(d, d->pk.event.offset, d->pk_off,
			    &npsb);
		else
			*at = fast_ahead(d, d->pk_off, &ntip, NULL);
	} else if (d->pk_state == 1) {
		ra = fast_ahead(d, d->cur_off, &ntip, &npsb);
		/*
		 * A block that takes a TNT bit fpt had at hand (it read no
		 * packet for it): libipt too had bits left after the last
		 * item, and fetches no event before they are used up.
		 */
		e = d->pk_off == d->cur_off &&
		    (d->pk.block.end == FPT_END_COND_TAKEN ||
		    d->pk.block.end == FPT_END_COND_NOT_TAKEN ||
		    d->pk.block.end == FPT_END_RET) ? ra :
		    fast_fetched(d, ra, ntip, npsb);
		*dec = e == ra ? d->cur_off : e;
		ntip = 0;
		*at = e == ra ? ra : fast_ahead(d, e, &ntip, NULL);
	} else
		*dec = *at = d->pk_state == 2 ? d->pk_off : d->cur_off;
}

/*
 * ix_fast_time() when a TSC fpt read ahead is after where fpt's last
 * item ended: the time libipt gives before fpt's next block or event is
 * that of the packets it has decoded by then, not of those fpt read for
 * that block.
 */
int
ix_fast_time_ahead(struct dec *d, uint64_t *t)
{
	uint64_t dec, at;

	fast_lib_pos(d, &dec, &at);
	return (fpt_time_at(d->fp, dec, t, NULL));
}

int
ix_src_offset(struct dec *d, uint64_t *off)
{
	uint64_t dec;

	if (d->fp != NULL) {
		fast_lib_pos(d, &dec, off);
		return (0);
	}
	if (d->blk == NULL)
		return (-1);
	return (pt_blk_get_offset(d->blk, off));
}

int
ix_src_sync_offset(struct dec *d, uint64_t *off)
{
	if (d->fp != NULL)
		return (fpt_sync_offset(d->fp, off));
	return (pt_blk_get_sync_offset(d->blk, off));
}

int
ix_fast_new(struct dec *d, const uint8_t *buf, size_t len)
{
	const struct hwtr_cpu *cpu = d->w.in->cpu;
	const struct hwtr_stream_desc *sd = d->w.in->desc;
	struct fpt_config fc;
	unsigned i;
	int rc;

	memset(&fc, 0, sizeof(fc));
	d->fbuf = buf;
	d->flen = len;
	fc.begin = buf;
	fc.end = buf + len;
	fc.read_code = fast_read;
	fc.map = fast_map;
	fc.ctx = d;
	if (cpu != NULL && cpu->vendor == HWTR_CPU_INTEL) {
		fc.intel = 1;
		fc.family = cpu->family;
		fc.model = cpu->model;
		fc.stepping = cpu->stepping;
	}
	for (i = 0; i < sd->pt.nfilters && i < 4; i++)
		if ((sd->pt.filter[i].cfg & 0xf) != 0)
			fc.filtering = 1;
	fc.mtc_freq = sd->pt.mtc_freq;
	fc.nom_freq = sd->pt.nom_freq;
	fc.cpuid_15_eax = sd->pt.cpuid_15_eax;
	fc.cpuid_15_ebx = sd->pt.cpuid_15_ebx;
	fc.keep_cache = 1;
	if ((rc = fpt_new(&d->fp, &fc)) < 0)
		return (ix_segw_fail(&d->w, rc, "cannot allocate a decoder",
		    NULL));
	/* Before any time, the image of the capture's end. */
	return (fast_maps(d, 0, 0) < 0 ? ix_segw_fail(&d->w, -HWTR_E_NOMEM,
	    "out of memory", NULL) : 0);
}

