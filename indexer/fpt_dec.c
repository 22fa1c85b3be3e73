/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * fpt's decoder: IP reconstruction, TNT following over the block cache,
 * events.  Its blocks and events are the ones libipt's block decoder
 * gives on the same trace (tests/indexer/t_fpt.c holds it to that): a
 * block runs without trace through direct jumps and calls and ends at the
 * first instruction that needs trace (a conditional branch, a return, an
 * indirect or far transfer), at a change of image, or where an event
 * binds.  Packets are consumed the way libipt's query decoder consumes
 * them: after each query the timing packets up to the next branch or
 * event packet are read ahead, and an event packet is only acted on once
 * the TNT bits before it are used up.
 *
 * What this first version does not decode as libipt does, it reports as
 * -HWTR_E_UNSUPPORTED rather than guess: OVF, MODE.TSX outside a PSB+,
 * PIP and VMCS, PTWRITE, power events, TraceStop, MTC/CYC/TMA timing
 * (libipt's time estimate), BBP/BIP/BEP, packets other than TIP.PGE and
 * MODE.exec while tracing is off, a PSB+ with FUP while tracing is off
 * (but BDM70's: a PSB+ FUP right before a TIP.PGE, dropped), SKL014 (a
 * TIP.PGD without IP while filtering), SKD022 (a FUP on VMLAUNCH), an
 * event IP not reached without trace, bytes Zydis does not decode as an
 * instruction (libipt's length decoder may), an instruction across the
 * end of an image.
 */

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "hwtrace.h"
#include "hwtr_x86.h"
#include "fpt.h"

#define FPT_RS_MAX	64	/* libipt's return stack depth */
#define FPT_EVQ_MAX	16
#define FPT_MORE_MAX	3	/* status updates after the first */
#define FPT_BLK_MAX	0xffff	/* libipt's pt_block.ninsn is 16 bits */
#define FPT_CACHE_BITS	16
#define FPT_FILL_STEPS	1024	/* libipt's bcache_fill_steps */

/* A span of code in one image. */
#define FPT_SPANS	4
struct fpt_span {
	uint64_t	lo, hi;
	int		isid;
};

/* An instruction on a cache fill's way. */
struct fpt_step {
	uint64_t	ip, target;
	uint8_t		kind, len;
};

struct fpt {
	struct fpt_config cfg;
	struct fpt_cache *cache;
	const uint8_t	*pos;		/* the next packet */
	const uint8_t	*sync;		/* the last PSB, NULL before one */
	const char	*unsup;		/* why unsupported, NULL otherwise */
	int		synced, eos, in_sync, cache_full;
	int		cur_isid;	/* libipt's mapped section */

	/* The packet layer. */
	uint64_t	last_ip;
	int		have_ip;
	uint64_t	tnt;		/* the next bit is bit ntnt - 1 */
	unsigned	ntnt;
	uint64_t	tsc;
	int		has_tsc;

	/* The flow. */
	int		enabled;
	uint64_t	ip;
	uint8_t		mode;		/* 16, 32, 64; 0 unknown */
	int		mode_pending;	/* a MODE.exec waits for its TIP */
	uint8_t		next_mode;
	uint64_t	rs[FPT_RS_MAX];
	unsigned	rs_top, rs_n;

	/* The errata libipt works around for this CPU. */
	unsigned	bdm70:1, bdm64:1, skd007:1, skd010:1, skd022:1,
			skl014:1, apl11:1, apl12:1;

	/* An event waiting for the flow to reach its IP (a FUP's). */
	int		async;
	struct fpt_event async_ev;
	struct fpt_event more[FPT_MORE_MAX];	/* ... and those after it */
	unsigned	nmore;

	struct fpt_event evq[FPT_EVQ_MAX];
	unsigned	evq_head, evq_n;

	/* The last spans of code the map callback gave. */
	struct fpt_span	span[FPT_SPANS];
	unsigned	span_next;

	/* The last packet parsed, at pk_pos. */
	struct fpt_pkt	pk;
	const uint8_t	*pk_pos;

	/* The code window the last read_code gave. */
	uint8_t		win[256];
	uint64_t	win_ip;
	size_t		win_len;
	int		win_isid;

	struct fpt_step	path[FPT_FILL_STEPS];
};

static int	unsupported(struct fpt *, const char *);
static void	ev_push(struct fpt *, const struct fpt_event *);
static void	ev_init(struct fpt *, struct fpt_event *, int, const uint8_t *);
static int	read_psb_plus(struct fpt *);
static int	pge_follows(struct fpt *);
static int	is_status_hdr(const uint8_t *, const uint8_t *);
static int	read_ahead(struct fpt *);
static int	peek(struct fpt *, struct fpt_pkt *);
static int	ip_update(struct fpt *, const struct fpt_pkt *, uint64_t *);
static void	set_errata(struct fpt *);
static int	query_cond(struct fpt *, int *);
static int	query_indirect(struct fpt *, uint64_t *);
struct fpt_step;
static int	proceed_to_async(struct fpt *, struct fpt_block *);
static int	proceed_cached(struct fpt *, struct fpt_block *);
static int	trace_step(struct fpt *, struct fpt_block *, int, uint64_t,
		    uint8_t, uint64_t);
static int	needs_trace(int);
static uint8_t	q_of(int);
static int	fill(struct fpt *, struct fpt_block *);
static void	step_entry(struct fpt *, const struct fpt_block *,
		    const struct fpt_step *, uint8_t, int);
static void	trampoline(struct fpt *, const struct fpt_block *,
		    const struct fpt_step *, uint64_t);
static int	link_entry(struct fpt *, const struct fpt_block *,
		    const struct fpt_step *, uint64_t);
static int	decode_at(struct fpt *, uint64_t, struct hwtr_x86_insn *,
		    int *);
static int	code_at(struct fpt *, uint64_t, int *);
static void	rs_push(struct fpt *, uint64_t);
static void	call_push(struct fpt *, uint64_t, const struct hwtr_x86_insn *);
static int	writes_cr3(struct fpt *, uint64_t);
static int	is_xbegin(const uint8_t *, size_t, int);
static size_t	skip_prefixes(const uint8_t *, size_t, int);
static int	fetch_event(struct fpt *);
static int	error_item(struct fpt *, struct fpt_item *, int);
static int	disabled_next(struct fpt *, struct fpt_item *);
static int	block_next(struct fpt *, struct fpt_item *);
static int	async_reached(struct fpt *);

int
fpt_new(struct fpt **dp, const struct fpt_config *cfg)
{
	struct fpt *d;
	int rc;

	*dp = NULL;
	if (cfg == NULL || cfg->begin == NULL || cfg->end < cfg->begin ||
	    cfg->read_code == NULL)
		return (-HWTR_E_INVAL);
	if ((d = calloc(1, sizeof(*d))) == NULL)
		return (-HWTR_E_NOMEM);
	d->cfg = *cfg;
	if ((rc = fpt_cache_new(&d->cache, FPT_CACHE_BITS)) < 0) {
		free(d);
		return (rc);
	}
	d->pos = cfg->begin;
	set_errata(d);
	*dp = d;
	return (0);
}

void
fpt_free(struct fpt *d)
{
	if (d == NULL)
		return;
	fpt_cache_free(d->cache);
	free(d);
}

uint64_t
fpt_offset(const struct fpt *d)
{
	return ((uint64_t)(d->pos - d->cfg.begin));
}

int
fpt_time(const struct fpt *d, uint64_t *tsc)
{
	if (!d->has_tsc)
		return (-1);
	*tsc = d->tsc;
	return (0);
}

uint64_t
fpt_sync_offset(const struct fpt *d)
{
	return (d->sync != NULL ? (uint64_t)(d->sync - d->cfg.begin) : 0);
}

const char *
fpt_unsupported(const struct fpt *d)
{
	return (d->unsup != NULL ? d->unsup : "");
}

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
	d->evq_n = d->evq_head = 0;
	d->async = 0;
	d->nmore = 0;
	d->synced = 0;
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
	d->has_tsc = 0;
	d->synced = 1;
	d->in_sync = 1;
	rc = read_psb_plus(d);
	d->in_sync = 0;
	if (rc != 0)
		return (rc);
	/*
	 * libipt reads on to the first packet that matters when it syncs: a
	 * bad packet there fails the sync, status updates and all.
	 */
	if ((rc = read_ahead(d)) < 0 && rc != -HWTR_E_TRUNCATED) {
		struct fpt_event ev;

		if (rc == -HWTR_E_UNSUPPORTED)
			return (rc);
		d->evq_n = d->evq_head = 0;
		d->enabled = 0;
		ev_init(d, &ev, FPT_EV_ERROR, d->pos);
		ev.error = rc;
		ev_push(d, &ev);
		d->synced = 0;
	}
	return (0);
}

int
fpt_next(struct fpt *d, struct fpt_item *it)
{
	it->kind = 0;
	if (d->unsup != NULL)
		return (-HWTR_E_UNSUPPORTED);
	if (d->evq_n > 0) {
		it->kind = FPT_ITEM_EVENT;
		it->event = d->evq[d->evq_head];
		d->evq_head = (d->evq_head + 1) % FPT_EVQ_MAX;
		d->evq_n--;
		return (0);
	}
	if (!d->synced)
		return (d->eos ? FPT_EOS : -HWTR_E_INVAL);
	if (d->eos)
		return (FPT_EOS);
	if (!d->enabled)
		return (disabled_next(d, it));
	return (block_next(d, it));
}

/*
 * Tracing is off: packets up to the TIP.PGE that turns it on.  Returns
 * with an item, FPT_EOS, or unsupported.
 */
static int
disabled_next(struct fpt *d, struct fpt_item *it)
{
	struct fpt_pkt pkt;
	struct fpt_event ev;
	uint64_t ip;
	int rc;

	for (;;) {
		if ((rc = read_ahead(d)) < 0)
			return (rc == -HWTR_E_TRUNCATED ? (d->eos = 1,
			    FPT_EOS) : error_item(d, it, rc));
		if (d->evq_n > 0)
			return (fpt_next(d, it));
		if ((rc = peek(d, &pkt)) < 0)
			return (rc == -HWTR_E_TRUNCATED ? (d->eos = 1,
			    FPT_EOS) : error_item(d, it, rc));
		switch (pkt.kind) {
		case FPT_PKT_TIP_PGE:
			ev_init(d, &ev, FPT_EV_ENABLED, d->pos);
			if ((rc = ip_update(d, &pkt, &ip)) < 0) {
				d->pos += pkt.size;
				return (error_item(d, it, rc));
			}
			d->pos += pkt.size;
			ev.ip = ip;
			d->ip = ip;
			d->enabled = 1;
			ev_push(d, &ev);
			if (d->mode_pending) {
				ev_init(d, &ev, FPT_EV_EXEC_MODE, d->pos);
				ev.ip = ip;
				ev.mode = d->next_mode;
				d->mode = d->next_mode;
				d->mode_pending = 0;
				ev_push(d, &ev);
			}
			return (fpt_next(d, it));
		case FPT_PKT_MODE_EXEC:
			d->pos += pkt.size;
			d->mode_pending = 1;
			d->next_mode = (pkt.flags & 1) ? 64 :
			    (pkt.flags & 2) ? 32 : 16;
			if ((pkt.flags & 3) == 3)
				return (unsupported(d, "MODE.exec with L and "
				    "D set"));
			break;
		case FPT_PKT_PSB:
			if ((rc = read_psb_plus(d)) != 0)
				return (rc < 0 ? rc : FPT_EOS);
			if (d->evq_n > 0 || d->enabled)
				return (fpt_next(d, it));
			break;
		default:
			return (unsupported(d, "a packet other than TIP.PGE "
			    "while tracing is disabled"));
		}
	}
}

/*
 * One block from d->ip.  An event waiting for the flow to reach its IP
 * (a FUP's) is approached instruction by instruction, as libipt does;
 * otherwise the block cache is followed (proceed_cached()).
 */
static int
block_next(struct fpt *d, struct fpt_item *it)
{
	struct fpt_block *b = &it->block;
	int rc, isid;

	if (d->ntnt == 0 && !d->async) {
		/* At the end of the trace the flow goes on without it. */
		if ((rc = fetch_event(d)) < 0)
			return (rc == -HWTR_E_UNSUPPORTED ? rc :
			    error_item(d, it, rc));
		if (d->evq_n > 0 || !d->enabled)
			return (fpt_next(d, it));
		/* No trace left at all: libipt's pts_eos, no block. */
		if (rc == FPT_EOS && d->pos == d->cfg.end) {
			d->eos = 1;
			return (FPT_EOS);
		}
	}
	it->kind = FPT_ITEM_BLOCK;
	b->ip = d->ip;
	b->end_ip = d->ip;
	b->ninsn = 0;
	b->end = FPT_END_NONE;
	b->mode = d->mode;
	if (d->mode == 0)
		return (unsupported(d, "an unknown execution mode"));
	rc = code_at(d, d->ip, &isid);
	/*
	 * libipt maps one section at a time where a block starts, and
	 * unless an image section cache keeps them mapped, leaving one
	 * drops its block cache.
	 */
	if (!d->async && !d->cfg.keep_cache &&
	    (rc < 0 || isid != d->cur_isid)) {
		fpt_cache_flush(d->cache);
		d->cur_isid = rc < 0 ? 0 : isid;
	}
	if (rc < 0)
		return (error_item(d, it, -HWTR_E_NOENT));
	b->isid = isid;
	if (d->async)
		rc = proceed_to_async(d, b);
	else
		rc = proceed_cached(d, b);
	if (rc == -HWTR_E_UNSUPPORTED)
		return (rc);
	if (rc == -HWTR_E_TRUNCATED) {
		d->eos = 1;
		rc = 0;
	}
	if (rc < 0) {
		struct fpt_event ev;

		ev_init(d, &ev, FPT_EV_ERROR, d->pos);
		ev.error = rc;
		ev.ip = d->ip;
		ev_push(d, &ev);
		d->synced = 0;
	}
	if (b->ninsn == 0)
		return (fpt_next(d, it));
	return (0);
}

/*
 * Step to where the pending event binds, one instruction at a time and
 * without trace, as libipt's event flow does (pt_blk_proceed_to_ip(),
 * pt_blk_proceed_to_disabled()): its IP; for a TIP.PGD without IP the
 * first instruction that needs trace or writes CR3.  The block ends
 * there, or earlier at a change of image.
 */
static int
proceed_to_async(struct fpt *d, struct fpt_block *b)
{
	struct fpt_event *ev = &d->async_ev;
	struct hwtr_x86_insn insn;
	int rc, isid, dis = ev->kind == FPT_EV_DISABLED;

	assert(d->async);
	for (;;) {
		if (d->ip == ev->ip && !(dis && ev->ip_suppressed))
			return (async_reached(d));
		if (b->ninsn == FPT_BLK_MAX)
			return (0);
		if ((rc = decode_at(d, d->ip, &insn, &isid)) < 0)
			return (rc);
		if (isid != b->isid)
			return (0);
		b->ninsn++;
		b->end_ip = d->ip;
		if (needs_trace(insn.kind)) {
			if (!dis)
				return (unsupported(d, "an event IP not "
				    "reached without trace"));
			/* Where tracing resumes (libipt's guess). */
			d->ip = insn.kind == HWTR_X86_CALL_IND ||
			    insn.far == HWTR_X86_FAR_CALL ? d->ip + insn.len :
			    0;
			ev->ip = ev->ip_suppressed ? 0 : ev->ip;
			return (async_reached(d));
		}
		if (dis && ev->ip_suppressed && writes_cr3(d, d->ip))
			return (async_reached(d));
		switch (insn.kind) {
		case HWTR_X86_CALL:
			call_push(d, d->ip, &insn);
			/* FALLTHROUGH */
		case HWTR_X86_JMP:
			d->ip = insn.target;
			break;
		default:
			d->ip += insn.len;
			break;
		}
	}
}

/*
 * Follow the block cache from d->ip, as libipt's cached block decode
 * does: entries chained without trace, the block ending at the first
 * decision point that needs trace or at a direct call or jump whose
 * entry says so; a miss fills the cache (fill()) and ends the block.
 */
static int
proceed_cached(struct fpt *d, struct fpt_block *b)
{
	const struct fpt_cache_entry *e;

	for (;;) {
		e = fpt_cache_lookup(d->cache, d->ip, b->isid, d->mode);
		if (e == NULL)
			return (fill(d, b));
		if (b->ninsn + e->ninsn > FPT_BLK_MAX)
			return (0);
		b->ninsn += e->ninsn;
		b->end_ip = e->dip;
		d->ip = e->dip;
		switch (e->q) {
		case FPT_Q_AGAIN:
			continue;
		case FPT_Q_DECODE:
			if (e->dkind == HWTR_X86_CALL &&
			    e->dtarget != e->dip + e->dlen)
				rs_push(d, e->dip + e->dlen);
			d->ip = e->dkind == HWTR_X86_CALL ||
			    e->dkind == HWTR_X86_JMP ? e->dtarget :
			    e->dip + e->dlen;
			if (!e->dnext_in)
				return (0);
			continue;
		default:
			return (trace_step(d, b, e->dkind, e->dip, e->dlen,
			    e->dtarget));
		}
	}
}

/*
 * Proceed past the instruction at @ip (of @kind, @len bytes, @target)
 * that needs trace: a TNT bit, a compressed return, a TIP or a TIP.PGD.
 */
static int
trace_step(struct fpt *d, struct fpt_block *b, int kind, uint64_t ip,
    uint8_t len, uint64_t target)
{
	uint64_t to;
	int rc, taken;

	switch (kind) {
	case HWTR_X86_JCC:
		if ((rc = query_cond(d, &taken)) < 0)
			return (rc == -HWTR_E_NOENT ? -HWTR_E_DECODE : rc);
		d->ip = taken ? target : ip + len;
		b->end = taken ? FPT_END_COND_TAKEN : FPT_END_COND_NOT_TAKEN;
		return (0);
	case HWTR_X86_RET:
		b->end = FPT_END_RET;
		rc = query_cond(d, &taken);
		if (rc == 0) {
			if (!taken || d->rs_n == 0)
				return (-HWTR_E_DECODE);
			d->ip = d->rs[d->rs_top];
			d->rs_top = (d->rs_top + FPT_RS_MAX - 1) % FPT_RS_MAX;
			d->rs_n--;
			return (0);
		}
		if (rc != -HWTR_E_NOENT)
			return (rc);
		break;
	case HWTR_X86_CALL_IND:
		rs_push(d, ip + len);
		b->end = FPT_END_CALL_IND;
		break;
	case HWTR_X86_JMP_IND:
		b->end = FPT_END_INDIRECT;
		break;
	default:
		b->end = FPT_END_FAR;
		break;
	}
	rc = query_indirect(d, &to);
	if (rc < 0)
		return (rc == -HWTR_E_NOENT ? -HWTR_E_DECODE : rc);
	if (rc == 0)
		d->ip = to;
	return (0);
}

/* Whether an instruction of @kind needs trace to go on. */
static int
needs_trace(int kind)
{
	return (kind != HWTR_X86_OTHER && kind != HWTR_X86_JMP &&
	    kind != HWTR_X86_CALL);
}

static uint8_t
q_of(int kind)
{
	switch (kind) {
	case HWTR_X86_JCC:
		return (FPT_Q_COND);
	case HWTR_X86_RET:
		return (FPT_Q_RETURN);
	case HWTR_X86_CALL_IND:
		return (FPT_Q_IND_CALL);
	default:
		return (FPT_Q_INDIRECT);
	}
}

/*
 * A cache miss at d->ip: decode forward, one instruction at a time, as
 * libipt's cache fill does (at most 1024 instructions, then a trampoline
 * entry), stopping at an instruction that needs trace (its entry, then
 * the trace step), at a direct call or a backward direct jump or on
 * leaving the image (a DECODE entry), or where an entry exists already;
 * then give every instruction on the way its entry, from the last back.
 * The block ends here, as libipt's does after a fill.
 */
static int
fill(struct fpt *d, struct fpt_block *b)
{
	struct fpt_step *path = d->path, *p;
	struct hwtr_x86_insn insn;
	uint64_t ip = d->ip, nip;
	size_t n = 0, j;
	int rc, isid, in;

	for (;;) {
		if (b->ninsn == FPT_BLK_MAX)
			return (0);
		if ((rc = decode_at(d, ip, &insn, &isid)) < 0)
			return (rc);
		if (isid != b->isid)
			return (0);
		b->ninsn++;
		b->end_ip = ip;
		p = &path[n++];
		p->ip = ip;
		p->kind = insn.kind;
		p->len = insn.len;
		p->target = insn.target;
		if (needs_trace(insn.kind)) {
			step_entry(d, b, p, q_of(insn.kind), 0);
			d->ip = ip;
			if ((rc = trace_step(d, b, insn.kind, ip, insn.len,
			    insn.target)) < 0)
				return (rc);
			break;
		}
		if (insn.kind == HWTR_X86_CALL)
			call_push(d, ip, &insn);
		nip = insn.kind == HWTR_X86_OTHER ? ip + insn.len :
		    insn.target;
		d->ip = nip;
		in = code_at(d, nip, &isid) >= 0 && isid == b->isid;
		if (insn.kind == HWTR_X86_CALL || !in ||
		    (insn.kind == HWTR_X86_JMP && nip < ip + insn.len)) {
			step_entry(d, b, p, FPT_Q_DECODE, in);
			break;
		}
		if (fpt_cache_lookup(d->cache, nip, b->isid, d->mode) !=
		    NULL) {
			link_entry(d, b, p, nip);
			break;
		}
		if (n == FPT_FILL_STEPS) {
			trampoline(d, b, p, nip);
			break;
		}
		ip = nip;
	}
	/* Each instruction's entry from its successor's, back to the first. */
	for (j = n - 1; j-- > 0;)
		if (!link_entry(d, b, &path[j], path[j + 1].ip))
			break;
	if (d->cache_full)
		return (unsupported(d, "the block cache is full"));
	return (0);
}

/* Cache the one-instruction entry of @p, a decision point. */
static void
step_entry(struct fpt *d, const struct fpt_block *b, const struct fpt_step *p,
    uint8_t q, int next_in)
{
	struct fpt_cache_entry e;

	memset(&e, 0, sizeof(e));
	e.ip = p->ip;
	e.isid = b->isid;
	e.mode = d->mode;
	e.q = q;
	e.ninsn = 1;
	e.dip = p->ip;
	e.dkind = p->kind;
	e.dlen = p->len;
	e.dtarget = p->target;
	e.dnext_in = (uint8_t)next_in;
	if (fpt_cache_insert(d->cache, &e) < 0)
		d->cache_full = 1;
}

/*
 * Cache @p's entry as "one instruction, then go on at @next", or, when
 * @next is too far for libipt's 16-bit displacement, as a DECODE entry of
 * @p itself.
 */
static void
trampoline(struct fpt *d, const struct fpt_block *b, const struct fpt_step *p,
    uint64_t next)
{
	struct fpt_cache_entry e;
	int64_t disp = (int64_t)(next - p->ip);

	if (disp < INT16_MIN || disp > INT16_MAX) {
		step_entry(d, b, p, FPT_Q_DECODE, 1);
		return;
	}
	memset(&e, 0, sizeof(e));
	e.ip = p->ip;
	e.isid = b->isid;
	e.mode = d->mode;
	e.q = FPT_Q_AGAIN;
	e.ninsn = 1;
	e.dip = next;
	if (fpt_cache_insert(d->cache, &e) < 0)
		d->cache_full = 1;
}

/*
 * Cache @p's entry from its successor's at @next: one more instruction
 * to the same decision point, or a trampoline when libipt's entry would
 * overflow (255 instructions, 16-bit displacement).  0 when the
 * successor has no entry.
 */
static int
link_entry(struct fpt *d, const struct fpt_block *b, const struct fpt_step *p,
    uint64_t next)
{
	const struct fpt_cache_entry *nx;
	struct fpt_cache_entry e;
	int64_t disp;

	nx = fpt_cache_lookup(d->cache, next, b->isid, d->mode);
	if (nx == NULL)
		return (0);
	e = *nx;
	e.ip = p->ip;
	e.ninsn++;
	disp = (int64_t)(e.dip - p->ip);
	if (e.ninsn > 255 || disp < INT16_MIN || disp > INT16_MAX)
		trampoline(d, b, p, next);
	else
		if (fpt_cache_insert(d->cache, &e) < 0)
		d->cache_full = 1;
	return (1);
}

/*
 * Decode the instruction at @ip in the current mode; @isid its image.
 * -HWTR_E_NOENT when nothing is mapped there, -HWTR_E_DECODE when it is
 * no instruction.
 */
static int
decode_at(struct fpt *d, uint64_t ip, struct hwtr_x86_insn *insn, int *isid)
{
	int rc;

	if (ip < d->win_ip || ip + 15 > d->win_ip + d->win_len ||
	    d->win_len == 0) {
		rc = d->cfg.read_code(d->cfg.ctx, ip, d->win,
		    sizeof(d->win), &d->win_isid);
		if (rc <= 0) {
			d->win_len = 0;
			return (-HWTR_E_NOENT);
		}
		d->win_ip = ip;
		d->win_len = (size_t)rc;
	}
	*isid = d->win_isid;
	rc = hwtr_x86_decode(d->win + (ip - d->win_ip), (size_t)(d->win_ip +
	    d->win_len - ip), ip, d->mode, insn);
	if (rc < 0 || insn->kind == HWTR_X86_BAD) {
		if (d->win_ip + d->win_len - ip < 15 &&
		    d->win_len < sizeof(d->win))
			return (unsupported(d, "an instruction across the "
			    "end of an image"));
		/*
		 * Zydis refuses what libipt's length decoder accepts (an
		 * opcode invalid in 64-bit mode, as on a wrong branch into
		 * the middle of an instruction): not the same error.
		 */
		return (unsupported(d, "an instruction hwtr_x86 does not "
		    "decode"));
	}
	/*
	 * XBEGIN (c7 f8) and XABORT (c6 f8) branch only on an abort, which
	 * PT reports as an event; libipt takes them for ordinary
	 * instructions, hwtr_x86 (by Zydis's category) for branches.
	 */
	if (insn->kind != HWTR_X86_OTHER && is_xbegin(d->win + (ip - d->win_ip),
	    (size_t)(d->win_ip + d->win_len - ip), d->mode)) {
		insn->kind = HWTR_X86_OTHER;
		insn->has_target = 0;
	}
	return (0);
}

/* Whether @p (@n bytes) is an XBEGIN or XABORT, after its prefixes. */
static int
is_xbegin(const uint8_t *p, size_t n, int mode)
{
	size_t i = skip_prefixes(p, n, mode);

	return (i + 1 < n && (p[i] == 0xc7 || p[i] == 0xc6) &&
	    p[i + 1] == 0xf8);
}

/* The length of the legacy and REX prefixes at @p. */
static size_t
skip_prefixes(const uint8_t *p, size_t n, int mode)
{
	size_t i = 0;

	while (i < n && i < 14 && (p[i] == 0x66 || p[i] == 0x67 ||
	    p[i] == 0xf0 || p[i] == 0xf2 || p[i] == 0xf3 || p[i] == 0x2e ||
	    p[i] == 0x36 || p[i] == 0x3e || p[i] == 0x26 || p[i] == 0x64 ||
	    p[i] == 0x65 || (mode == 64 && (p[i] & 0xf0) == 0x40)))
		i++;
	return (i);
}

/* The image of @ip, or -HWTR_E_NOENT. */
static int
code_at(struct fpt *d, uint64_t ip, int *isid)
{
	unsigned i;
	int rc;

	if (d->win_len > 0 && ip >= d->win_ip &&
	    ip < d->win_ip + d->win_len) {
		*isid = d->win_isid;
		return (0);
	}
	for (i = 0; i < FPT_SPANS; i++)
		if (ip >= d->span[i].lo && ip < d->span[i].hi) {
			*isid = d->span[i].isid;
			return (0);
		}
	if (d->cfg.map != NULL) {
		struct fpt_span *sp = &d->span[d->span_next];

		if (d->cfg.map(d->cfg.ctx, ip, &sp->lo, &sp->hi, isid) < 0)
			return (-HWTR_E_NOENT);
		assert(sp->lo <= ip && ip < sp->hi);
		sp->isid = *isid;
		d->span_next = (d->span_next + 1) % FPT_SPANS;
		return (0);
	}
	/* Only the image: no bytes. */
	rc = d->cfg.read_code(d->cfg.ctx, ip, d->win, 0, isid);
	return (rc < 0 ? -HWTR_E_NOENT : 0);
}

/*
 * A direct call's return address, except for a call to the next
 * instruction (position-independent code reading its IP), which libipt
 * does not take for a call.
 */
static void
call_push(struct fpt *d, uint64_t ip, const struct hwtr_x86_insn *insn)
{
	if (insn->target != ip + insn->len)
		rs_push(d, ip + insn->len);
}

/* A mov to CR3 (0f 22 /r with reg 3) at @ip. */
static int
writes_cr3(struct fpt *d, uint64_t ip)
{
	const uint8_t *p;
	size_t i, n;

	assert(ip >= d->win_ip && ip < d->win_ip + d->win_len);
	p = d->win + (ip - d->win_ip);
	n = (size_t)(d->win_ip + d->win_len - ip);
	i = skip_prefixes(p, n, d->mode);
	return (i + 2 < n && p[i] == 0x0f && p[i + 1] == 0x22 &&
	    ((p[i + 2] >> 3) & 7) == 3);
}

static void
rs_push(struct fpt *d, uint64_t ret)
{
	d->rs_top = (d->rs_top + 1) % FPT_RS_MAX;
	d->rs[d->rs_top] = ret;
	if (d->rs_n < FPT_RS_MAX)
		d->rs_n++;
}

/*
 * Events the flow must act on before it proceeds, once the TNT bits
 * before them are used up: a FUP (an asynchronous branch or disable at
 * its IP), a MODE.exec (for the next TIP), a PSB+.  TIP.PGD, TIP and TNT
 * are left to the block that needs them.  Returns 0, FPT_EOS or an error.
 */
static int
fetch_event(struct fpt *d)
{
	struct fpt_pkt pkt;
	struct fpt_event *ev = &d->async_ev;
	uint64_t ip;
	int rc;

	assert(d->ntnt == 0 && !d->async);
	for (;;) {
		if ((rc = read_ahead(d)) < 0 || (rc = peek(d, &pkt)) < 0)
			return (rc == -HWTR_E_TRUNCATED ? FPT_EOS : rc);
		switch (pkt.kind) {
		case FPT_PKT_FUP:
			ev_init(d, ev, FPT_EV_ASYNC_BRANCH, d->pos);
			d->pos += pkt.size;
			if ((rc = ip_update(d, &pkt, &ip)) < 0)
				return (unsupported(d, "a FUP without IP"));
			ev->ip = ip;
			if ((rc = read_ahead(d)) < 0 ||
			    (rc = peek(d, &pkt)) < 0)
				return (rc == -HWTR_E_TRUNCATED ? FPT_EOS : rc);
			if (pkt.kind == FPT_PKT_TIP) {
				d->pos += pkt.size;
				if (ip_update(d, &pkt, &ip) < 0)
					return (unsupported(d, "an "
					    "asynchronous branch to a "
					    "suppressed IP"));
				ev->to = ip;
			} else if (pkt.kind == FPT_PKT_TIP_PGD) {
				uint8_t c[3];
				int id;

				if (d->skd022 && d->cfg.read_code(d->cfg.ctx,
				    ev->ip, c, 3, &id) == 3 && c[0] == 0x0f &&
				    c[1] == 0x01 && (c[2] == 0xc2 || c[2] == 0xc3))
					return (unsupported(d, "SKD022: a FUP "
					    "on VMLAUNCH or VMRESUME"));
				ev->kind = FPT_EV_ASYNC_DISABLED;
				d->pos += pkt.size;
				if (ip_update(d, &pkt, &ip) == 0)
					ev->to = ip;
				else
					ev->ip_suppressed = 1;
			} else
				return (unsupported(d, "a FUP followed by "
				    "neither TIP nor TIP.PGD"));
			d->async = 1;
			return (0);
		case FPT_PKT_MODE_EXEC:
			d->pos += pkt.size;
			if ((pkt.flags & 3) == 3)
				return (unsupported(d, "MODE.exec with L and "
				    "D set"));
			d->mode_pending = 1;
			d->next_mode = (pkt.flags & 1) ? 64 :
			    (pkt.flags & 2) ? 32 : 16;
			break;
		case FPT_PKT_PSB:
			if ((rc = read_psb_plus(d)) != 0 || d->async ||
			    d->evq_n > 0)
				return (rc);
			break;
		case FPT_PKT_TIP_PGD:
			/* Tracing stops at the branch that needs trace. */
			ev_init(d, ev, FPT_EV_DISABLED, d->pos);
			d->pos += pkt.size;
			if (ip_update(d, &pkt, &ip) == 0)
				ev->ip = ip;
			else
				ev->ip_suppressed = 1;
			if (ev->ip_suppressed && d->cfg.filtering && d->skl014)
				return (unsupported(d, "SKL014: a TIP.PGD "
				    "without IP while filtering"));
			d->async = 1;
			return (0);
		case FPT_PKT_TNT:
		case FPT_PKT_TIP:
			return (0);
		default:
			return (unsupported(d, "an event packet this decoder "
			    "does not handle yet"));
		}
	}
}

/* The flow reached the pending event's IP: the event happens. */
static int
async_reached(struct fpt *d)
{
	struct fpt_event ev;
	unsigned i;

	assert(d->async);
	d->async = 0;
	ev_push(d, &d->async_ev);
	for (i = 0; i < d->nmore; i++)
		ev_push(d, &d->more[i]);
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
	if (d->mode_pending && d->enabled) {
		ev_init(d, &ev, FPT_EV_EXEC_MODE, d->pos);
		ev.ip = d->ip;
		ev.mode = d->next_mode;
		d->mode = d->next_mode;
		d->mode_pending = 0;
		ev_push(d, &ev);
	}
	return (0);
}

/*
 * Read the PSB+ at d->pos (a PSB) up to its PSBEND: the IP, the mode and
 * the time it says.  0, FPT_EOS when it is cut short, or unsupported.
 */
static int
read_psb_plus(struct fpt *d)
{
	struct fpt_pkt pkt;
	struct fpt_event st[FPT_MORE_MAX + 1];
	uint64_t ip = 0;
	int rc, fup = 0, hmode = 0;
	unsigned i, nst = 0;
	const uint8_t *at = d->pos;

	if ((rc = peek(d, &pkt)) < 0 || pkt.kind != FPT_PKT_PSB)
		return (rc == -HWTR_E_TRUNCATED ? (d->eos = 1, FPT_EOS) :
		    -HWTR_E_DECODE);
	d->pos += pkt.size;
	for (;;) {
		if ((rc = peek(d, &pkt)) < 0)
			return (rc == -HWTR_E_TRUNCATED ? (d->eos = 1,
			    FPT_EOS) : unsupported(d, "a bad packet in PSB+"));
		d->pos += pkt.size;
		switch (pkt.kind) {
		case FPT_PKT_PSBEND:
			goto end;
		case FPT_PKT_FUP:
			if (ip_update(d, &pkt, &ip) == 0)
				fup = 1;
			break;
		case FPT_PKT_MODE_EXEC:
			if ((pkt.flags & 3) == 3)
				return (unsupported(d, "MODE.exec with L and "
				    "D set"));
			hmode = (pkt.flags & 1) ? 64 : (pkt.flags & 2) ? 32 :
			    16;
			if (nst > FPT_MORE_MAX)
				return (unsupported(d, "a long PSB+"));
			st[nst].kind = FPT_EV_EXEC_MODE;
			st[nst++].mode = (uint8_t)hmode;
			break;
		case FPT_PKT_MODE_TSX:
			if (nst > FPT_MORE_MAX)
				return (unsupported(d, "a long PSB+"));
			st[nst].kind = FPT_EV_TSX;
			st[nst++].mode = 0;
			break;
		case FPT_PKT_TSC:
			d->tsc = pkt.payload;
			d->has_tsc = 1;
			break;
		case FPT_PKT_CBR:
		case FPT_PKT_PAD:
			break;
		default:
			return (unsupported(d, "a PSB+ packet this decoder "
			    "does not handle yet"));
		}
	}
end:
	/* The status updates, in the order of their packets. */
	for (i = 0; i < nst; i++) {
		int kind = st[i].kind;
		uint8_t mode = st[i].mode;

		ev_init(d, &st[i], kind, at);
		st[i].status_update = 1;
		st[i].mode = mode;
		st[i].ip = fup ? ip : 0;
		st[i].ip_suppressed = !fup;
	}
	if (d->enabled) {
		if (!fup)
			return (unsupported(d, "a PSB+ without FUP while "
			    "tracing"));
		if (nst > 0) {
			/* They happen when the flow reaches the FUP's IP. */
			d->async_ev = st[0];
			for (i = 1; i < nst; i++)
				d->more[i - 1] = st[i];
			d->nmore = nst - 1;
			d->async = 1;
		}
		return (0);
	}
	if (!d->in_sync && fup)
		return (unsupported(d, "a PSB+ with FUP while tracing is "
		    "disabled"));
	if (fup && pge_follows(d)) {
		/* BDM70: the PSB+ before a TIP.PGE has a FUP it should not. */
		if (!d->bdm70)
			return (unsupported(d, "a PSB+ with FUP right before "
			    "a TIP.PGE"));
		fup = 0;
		for (i = 0; i < nst; i++) {
			st[i].ip = 0;
			st[i].ip_suppressed = 1;
		}
	}
	if (hmode != 0)
		d->mode = (uint8_t)hmode;
	if (fup) {
		d->enabled = 1;
		d->ip = ip;
	}
	for (i = 0; i < nst; i++)
		ev_push(d, &st[i]);
	return (0);
}

/*
 * Whether the (cut) packet at @p is a status packet: not an IP packet,
 * not MODE, not TNT-64, PIP, VMCS, OVF, PTWRITE or a power event.
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
		if (b == 0x03 || b == 0x73 || b == 0xc3 || b == 0x23)
			return (1);
		return (0);
	}
	return (1);
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
		case FPT_PKT_MNT:
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
 * Status packets up to the next packet that matters to the flow (a TNT,
 * an IP packet, an event packet): what libipt's read-ahead decodes.
 */
static int
read_ahead(struct fpt *d)
{
	struct fpt_pkt pkt;
	int rc;

	for (;;) {
		if ((rc = peek(d, &pkt)) < 0) {
			/*
			 * A status packet cut by the end of the trace is
			 * dropped, as libipt drops it; a cut branch or event
			 * packet stays for the query that needs it.
			 */
			if (rc == -HWTR_E_TRUNCATED && is_status_hdr(d->pos,
			    d->cfg.end))
				d->pos = d->cfg.end;
			return (rc);
		}
		switch (pkt.kind) {
		case FPT_PKT_PAD:
		case FPT_PKT_CBR:
		case FPT_PKT_MNT:
			break;
		case FPT_PKT_TSC:
			d->tsc = pkt.payload;
			d->has_tsc = 1;
			break;
		case FPT_PKT_MTC:
		case FPT_PKT_CYC:
		case FPT_PKT_TMA:
			return (unsupported(d, "MTC, CYC or TMA timing (not "
			    "yet estimated as libipt does)"));
		default:
			return (0);
		}
		d->pos += pkt.size;
	}
}

/* The packet at d->pos, parsed once however often it is looked at. */
static int
peek(struct fpt *d, struct fpt_pkt *pkt)
{
	int rc;

	if (d->pk_pos == d->pos && d->pos != NULL) {
		*pkt = d->pk;
		return (pkt->size);
	}
	rc = fpt_pkt_parse(d->pos, d->cfg.end, pkt);
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
static int
ip_update(struct fpt *d, const struct fpt_pkt *pkt, uint64_t *ip)
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

/*
 * The next TNT bit.  -HWTR_E_NOENT when the next packet is not a TNT (a
 * TIP or an event: libipt's "bad query"), -HWTR_E_TRUNCATED at the end.
 */
static int
query_cond(struct fpt *d, int *taken)
{
	struct fpt_pkt pkt;
	int rc;

	if (d->ntnt == 0) {
		if ((rc = read_ahead(d)) < 0 || (rc = peek(d, &pkt)) < 0)
			return (rc);
		if (pkt.kind != FPT_PKT_TNT)
			return (-HWTR_E_NOENT);
		d->pos += pkt.size;
		d->tnt = pkt.payload;
		d->ntnt = pkt.ntnt;
		assert(d->ntnt > 0);
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
static int
query_indirect(struct fpt *d, uint64_t *to)
{
	struct fpt_pkt pkt;
	struct fpt_event ev;
	int rc;

	for (;;) {
		if ((rc = read_ahead(d)) < 0 || (rc = peek(d, &pkt)) < 0)
			return (rc);
		switch (pkt.kind) {
		case FPT_PKT_TNT:
			if (d->ntnt > 0)
				return (-HWTR_E_NOENT);
			d->pos += pkt.size;
			d->tnt = pkt.payload;
			d->ntnt = pkt.ntnt;
			continue;
		case FPT_PKT_TIP:
			d->pos += pkt.size;
			if (ip_update(d, &pkt, to) < 0)
				return (-HWTR_E_DECODE);
			if (d->mode_pending) {
				ev_init(d, &ev, FPT_EV_EXEC_MODE, d->pos);
				ev.ip = *to;
				ev.mode = d->next_mode;
				d->mode = d->next_mode;
				d->mode_pending = 0;
				ev_push(d, &ev);
			}
			return (0);
		default:
			return (-HWTR_E_NOENT);
		}
	}
}

static int
error_item(struct fpt *d, struct fpt_item *it, int rc)
{
	memset(it, 0, sizeof(*it));
	it->kind = FPT_ITEM_EVENT;
	ev_init(d, &it->event, FPT_EV_ERROR, d->pos);
	it->event.error = rc;
	it->event.ip = d->ip;
	d->synced = 0;
	return (0);
}

static void
ev_init(struct fpt *d, struct fpt_event *ev, int kind, const uint8_t *at)
{
	memset(ev, 0, sizeof(*ev));
	ev->kind = (uint8_t)kind;
	ev->tsc = d->tsc;
	ev->has_tsc = (uint8_t)d->has_tsc;
	ev->offset = (uint64_t)(at - d->cfg.begin);
}

static void
ev_push(struct fpt *d, const struct fpt_event *ev)
{
	assert(d->evq_n < FPT_EVQ_MAX);
	d->evq[(d->evq_head + d->evq_n) % FPT_EVQ_MAX] = *ev;
	d->evq_n++;
}

static int
unsupported(struct fpt *d, const char *why)
{
	d->unsup = why;
	return (-HWTR_E_UNSUPPORTED);
}

/*
 * The errata libipt's pt_cpu_errata() selects for a CPU (from libipt's
 * documentation of struct pt_errata and its model list).
 */
static void
set_errata(struct fpt *d)
{
	if (!d->cfg.intel || d->cfg.family != 6)
		return;
	switch (d->cfg.model) {
	case 0x3d: case 0x47: case 0x4f: case 0x56:
		d->bdm70 = d->bdm64 = 1;
		break;
	case 0x4e: case 0x5e: case 0x8e: case 0x9e: case 0xa5: case 0xa6:
		d->bdm70 = d->skd007 = d->skd022 = d->skd010 = d->skl014 = 1;
		break;
	case 0x55: case 0x6a: case 0x6c: case 0x8f:
	case 0x66: case 0x7d: case 0x7e: case 0x8c: case 0x8d: case 0xa7:
	case 0xa8:
		d->bdm70 = d->skl014 = d->skd022 = 1;
		break;
	case 0x97: case 0x9a: case 0xbf:
		d->bdm70 = d->skl014 = d->skd022 = d->apl11 = 1;
		break;
	case 0x5c: case 0x5f:
		d->apl12 = d->apl11 = 1;
		break;
	case 0x7a: case 0x86: case 0x96: case 0x9c:
		d->apl11 = 1;
		break;
	}
}
