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
 * What it does not decode as libipt does, it reports as
 * -HWTR_E_UNSUPPORTED rather than guess: timing libipt fails or works
 * around (fpt_time.c), PIP and VMCS bound to an asynchronous branch or
 * with a disable after them, PTWRITE while tracing, TraceStop while
 * tracing, the OVF errata (SKD010, APL11, APL12), BDM64, an OVF or MNT
 * inside a PSB+, a FUP without pending events while tracing is off, a
 * FUP followed by neither TIP nor TIP.PGD, a PSB+ FUP right before a
 * TIP.PGE on a CPU without BDM70, an event IP not reached without
 * trace, bytes Zydis does not decode as an instruction (libipt's length
 * decoder may), an instruction across the end of an image.
 */

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "hwtrace.h"
#include "hwtr_x86.h"
#include "fpt_int.h"

struct fpt_step;
static int	proceed_to_async(struct fpt *, struct fpt_block *);
static inline int	proceed_cached(struct fpt *, struct fpt_block *);
static int	proceed_to_bound(struct fpt *, struct fpt_block *);
static int	proceed_to_mode(struct fpt *, struct fpt_block *);
static int	post_next(struct fpt *);
static int	trace_step(struct fpt *, struct fpt_block *, int, uint64_t,
		    uint8_t, uint64_t);
static int	needs_trace(int);
static uint8_t	q_of(int);
static int	fill(struct fpt *, struct fpt_block *);
static int	code_at(struct fpt *, uint64_t, int *);
static void	call_push(struct fpt *, uint64_t, const struct hwtr_x86_insn *);
static int	error_item(struct fpt *, struct fpt_item *, int);
static int	disabled_next(struct fpt *, struct fpt_item *);
static int	block_next(struct fpt *, struct fpt_item *);
static inline int	fast_ready(const struct fpt *);
static inline int	hot_ready(const struct fpt *);
static inline int	hot_span(const struct fpt *);
static inline int	tnt_at_hand(struct fpt *);
static inline int	cond_take(struct fpt *, const struct fpt_cache_entry *,
			    uint64_t *, uint8_t *);
static int	tnt_refill(struct fpt *);
static int	tnt_next(const struct fpt *);
static int	hot_block(struct fpt *, struct fpt_item *);
static inline const struct fpt_run *run_start(struct fpt *);
static inline void	run_rest_set(struct fpt *, const struct fpt_run *,
			    const struct fpt_block *);
static inline int	hot_run(struct fpt *, struct fpt_item *);
static inline int	hot_one(struct fpt *, struct fpt_item *, int);
static inline int	hot_from(struct fpt *, struct fpt_item *,
			    const struct fpt_cache_entry *, int);
static int	next_hot1(struct fpt *, struct fpt_item *,
		    const struct fpt_cache_entry *);
static int	next_hot(struct fpt *, struct fpt_item *);
static int	next_run(struct fpt *, struct fpt_item *);
static int	next_warm(struct fpt *, struct fpt_item *);
static int	next_item(struct fpt *, struct fpt_item *);
static inline int	block_run(struct fpt *, struct fpt_item *, int);
static int	mode_event_next(struct fpt *);
static int	at_vmentry(struct fpt *, uint64_t);
static void	cache_flush(struct fpt *);
static void	asid_event(struct fpt *, const struct fpt_event *);

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
	if ((d->icache = calloc(1u << FPT_ICACHE_BITS,
	    sizeof(*d->icache))) == NULL ||
	    (d->runs = calloc(1u << FPT_RUN_BITS, sizeof(*d->runs))) == NULL) {
		fpt_cache_free(d->cache);
		free(d->icache);
		free(d);
		return (-HWTR_E_NOMEM);
	}
	d->pos = cfg->begin;
	d->asid_cr3 = d->asid_vmcs = FPT_NO_ASID;
	fpti_set_errata(d);
	*dp = d;
	return (0);
}

void
fpt_free(struct fpt *d)
{
	if (d == NULL)
		return;
	fpt_cache_free(d->cache);
	free(d->icache);
	free(d->runs);
	free(d);
}

uint64_t
fpt_mnt_count(const struct fpt *d)
{
	return (d->nmnt);
}

uint64_t
fpt_offset(const struct fpt *d)
{
	return ((uint64_t)(d->pos - d->cfg.begin));
}

void
fpt_code_changed(struct fpt *d)
{
	fpti_run_undo(d);
	memset(d->span, 0, sizeof(d->span));
	memset(&d->last, 0, sizeof(d->last));
	d->span_next = 0;
	d->win_len = 0;
	d->hot = 0;
}

void
fpt_code_cut(struct fpt *d)
{
	fpt_code_changed(d);
	cache_flush(d);
}

/*
 * A new generation of the block cache; when its tags wrap, the runs go
 * too, whose tags (struct fpt_run) would look current again.
 */
static void
cache_flush(struct fpt *d)
{
	fpt_cache_flush(d->cache);
	if ((d->cache->gen & 0xffffff) == 0)
		memset(d->runs, 0, (1u << FPT_RUN_BITS) * sizeof(*d->runs));
}

/*
 * The paging or VMCS event @ev happens, as libipt's
 * pt_blk_process_paging() and _vmcs() have it: a CR3 or VMCS base other
 * than its asid's unmaps the decoder's section, and, where no image
 * section cache keeps that mapped, its block cache goes with it.
 */
static void
asid_event(struct fpt *d, const struct fpt_event *ev)
{
	uint64_t *a;

	if (ev->kind == FPT_EV_PAGING)
		a = &d->asid_cr3;
	else if (ev->kind == FPT_EV_VMCS)
		a = &d->asid_vmcs;
	else
		return;
	if (*a == ev->payload)
		return;
	*a = ev->payload;
	if (!d->cfg.keep_cache)
		cache_flush(d);
}

int
fpt_sync_offset(const struct fpt *d, uint64_t *off)
{
	if (d->sync == NULL)
		return (-HWTR_E_NOENT);
	*off = (uint64_t)(d->sync - d->cfg.begin);
	return (0);
}

const char *
fpt_unsupported(const struct fpt *d)
{
	return (d->unsup != NULL ? d->unsup : "");
}

/*
 * Small on purpose: most calls give the next block of a memoized run
 * (hot_run()), with no register to save; the hot path (next_hot()) and
 * the rest of the decoder (next_item()) stay out of line.
 */
int
fpt_next(struct fpt *d, struct fpt_item *it)
{
	const struct fpt_block *b = d->run_b, *end = d->run_end;

	if (b != NULL) {
		it->kind = FPT_ITEM_BLOCK;
		it->runs = 1;
		it->block = *b++;
		d->run_b = b != end ? b : NULL;
		return (0);
	}
	return (next_hot(d, it));
}

size_t
fpt_run_rest(struct fpt *d, const struct fpt_block **bp,
    struct fpt_memo **memo)
{
	if (d->run_b == NULL)
		return (0);
	*bp = d->run_b;
	/* The caller's, in a run fpt holds as const: no index to compute. */
	*memo = (struct fpt_memo *)(uintptr_t)&d->run->memo;
	return ((size_t)(d->run_end - d->run_b));
}

void
fpt_run_take(struct fpt *d, size_t n)
{
	if (n == 0)
		return;
	assert(d->run_b != NULL && n <= (size_t)(d->run_end - d->run_b));
	d->run_b += n;
	if (d->run_b == d->run_end)
		d->run_b = NULL;
}

/*
 * fpt_next() but for the blocks of a run: with a TNT bit at hand the next
 * run (next_run()), with none hot_one(), without hot_ready()'s packet
 * checks, which its own imply: it takes a TNT or a TIP packet at d->pos,
 * or nothing.  Both without a call, and this function without a frame.
 * A random walk's blocks first (ixgen's), in the fewest steps and
 * registers: an entry, or a direct jump's and the next, to a conditional
 * branch and a TNT-8 of one bit, or to an indirect transfer and a TIP of
 * 16 bits; hot_one() the rest.
 */
static int __attribute__((noinline))
next_hot(struct fpt *d, struct fpt_item *it)
{
	const struct fpt_cache_entry *e, *first;
	const uint8_t *p = d->pos;
	uint64_t to, bit;
	unsigned ninsn;
	uint8_t end;

	/* d->hot is the span's width (fpti_hot_start()). */
	if (d->ip - d->last.lo >= d->hot)
		return (next_warm(d, it));
	if (d->ntnt > 0)
		return (next_run(d, it));
	if ((e = first = fpti_hot_find(d, d->ip, 0)) == NULL)
		return (next_warm(d, it));
	ninsn = e->ninsn;
	if (e->q == FPT_Q_DECODE) {
		if (!e->dend)
			return (next_hot1(d, it, first));
		if ((e = fpti_hot_find(d, e->dtarget, 0)) == NULL)
			return (next_warm(d, it));
		ninsn += e->ninsn;
	}
	if (e->q == FPT_Q_COND && d->cfg.end - p >= 2 &&
	    (p[0] & 0xfd) == 4 && fpti_tnt_last[p[1]]) {
		/*
		 * No bit left: the TNT state stays empty.  A TIP.PGD or
		 * TIP.PGE next stops libipt's read-ahead at once, as a TIP
		 * does: tnt_read_ahead() (fpt_query.c) would read nothing
		 * (a syscall's exit from a user-only trace).
		 */
		bit = (p[0] >> 1) & 1;
		d->pos = p + 1;
		/*
		 * Without a branch: a random walk's bits are what a branch
		 * predictor cannot guess.
		 */
		to = fpt_cache_dip(e) + e->dlen;
		to ^= (to ^ e->dtarget) & (0 - bit);
		end = (uint8_t)(FPT_END_COND_NOT_TAKEN - bit);
	} else if (e->q >= FPT_Q_IND_CALL && d->cfg.end - p >= 3 &&
	    p[0] == FPT_TIP16) {
		/* fpti_tip_fast()'s commonest. */
		to = (d->last_ip & ~0xffffull) | p[1] | (uint64_t)p[2] << 8;
		d->last_ip = to;
		d->have_ip = 1;
		d->pos = p + 3;
		if (e->q == FPT_Q_IND_CALL)
			fpti_rs_push(d, fpt_cache_dip(e) + e->dlen);
		end = e->dend;
	} else
		return (next_hot1(d, it, first));
	/* No TNT bit was at hand, none is: no run follows. */
	fpti_block_out(d, it, e, ninsn, end, d->last.isid, to, 0);
	return (0);
}

/* next_hot() past its commonest blocks, from the first entry @e. */
static int __attribute__((noinline))
next_hot1(struct fpt *d, struct fpt_item *it,
    const struct fpt_cache_entry *e)
{
	if (hot_from(d, it, e, 0))
		return (0);
	return (next_warm(d, it));
}

/* next_hot() with a TNT bit at hand: the run, or hot_one(). */
static int __attribute__((noinline))
next_run(struct fpt *d, struct fpt_item *it)
{
	if (hot_run(d, it) || hot_one(d, it, 1))
		return (0);
	return (next_warm(d, it));
}

/*
 * next_hot() the long way: the hot block, a syscall's exit (a TIP.PGD
 * without IP) the short way (fpti_exit()), or the rest.
 */
static int __attribute__((noinline))
next_warm(struct fpt *d, struct fpt_item *it)
{
	if (!d->hot && fast_ready(d) && fpti_hot_start(d))
		return (next_hot(d, it));
	if (d->hot && hot_ready(d) && hot_block(d, it))
		return (0);
	/* Whatever the long way gives, said to maybe leave a run. */
	it->runs = 1;
	if (d->hot && d->pos < d->cfg.end && *d->pos == 0x01 &&
	    fpti_exit(d, it))
		return (0);
	return (next_item(d, it));
}

/*
 * hot_block()'s commonest blocks, in fewer steps: one cache entry, or a
 * direct call's or jump's and the next, to a conditional branch, or with
 * no TNT bit left to an indirect branch, a far transfer, an indirect call
 * or a return, and its TIP next.  1 with the block in @it; 0, nothing
 * changed, for hot_block() to try.  Unless @full, without a call, and
 * with no TNT bit at hand (next_hot()).
 */
static inline __attribute__((always_inline)) int
hot_one(struct fpt *d, struct fpt_item *it, int full)
{
	const struct fpt_cache_entry *e = fpti_hot_find(d, d->ip, full);

	return (e != NULL && hot_from(d, it, e, full));
}

/* hot_one() from the entry @e for d->ip. */
static inline __attribute__((always_inline)) int
hot_from(struct fpt *d, struct fpt_item *it, const struct fpt_cache_entry *e,
    int full)
{
	const uint8_t *p, *pend = d->cfg.end;
	uint64_t to, ret = 0, bit, tnt, fall;
	unsigned ninsn, n;
	int call = 0;
	uint8_t end;

	ninsn = e->ninsn;
	if (e->q == FPT_Q_DECODE) {
		/* A direct call or jump to the entry that ends the block. */
		if (!e->dnext_in)
			return (0);
		fall = fpt_cache_dip(e) + e->dlen;
		if (e->dkind == HWTR_X86_CALL && e->dtarget != fall) {
			call = 1;
			ret = fall;
		}
		to = e->dkind == HWTR_X86_CALL || e->dkind == HWTR_X86_JMP ?
		    e->dtarget : fall;
		if ((e = fpti_hot_find(d, to, full)) == NULL)
			return (0);
		ninsn += e->ninsn;
	}
	p = d->pos;
	if (e->q == FPT_Q_COND) {
		if ((!full || d->ntnt == 0) && pend - p >= 2 &&
		    (p[0] & 0xfd) == 4 &&
		    (fpti_is_tnt8(p[1]) || (p[1] & 0x1f) == 0x0d)) {
			/* A TNT-8 of one bit, a random walk's: none left. */
			bit = (p[0] >> 1) & 1;
			d->pos = p + 1;
		} else {
			if (!full || d->ntnt == 0) {
				/* tnt_at_hand() but for its call. */
				if (pend - p >= 2 && fpti_is_tnt8(p[0]) &&
				    (fpti_is_tnt8(p[1]) ||
				    (p[1] & 0x1f) == 0x0d)) {
					n = 31u -
					    (unsigned)__builtin_clz(p[0]) - 1;
					tnt = (p[0] >> 1) & ((1u << n) - 1);
					p++;
				} else if (fpti_long_tnt(p, pend, &tnt, &n) &&
				    fpti_tnt_or_tip(p + 8, pend))
					p += 8;
				else
					return (0);
				d->tnt = tnt;
				d->ntnt = n;
				d->pos = p;
			}
			d->ntnt--;
			bit = (d->tnt >> d->ntnt) & 1;
		}
		/*
		 * Without a branch: a random walk's bits are what a branch
		 * predictor cannot guess.
		 */
		to = fpt_cache_dip(e) + e->dlen;
		to ^= (to ^ e->dtarget) & (0 - bit);
		end = (uint8_t)(FPT_END_COND_NOT_TAKEN - bit);
	} else if (e->q >= FPT_Q_IND_CALL) {
		/* hot_block()'s TIP, when no TNT bit is left to check. */
		if (full && d->ntnt > 0)
			return (0);
		if (pend - p >= 3 && p[0] == FPT_TIP16) {
			/* fpti_tip_fast()'s commonest, at once. */
			to = (d->last_ip & ~0xffffull) | p[1] |
			    (uint64_t)p[2] << 8;
			d->last_ip = to;
			d->have_ip = 1;
			d->pos = p + 3;
		} else if (p >= pend || (*p & 0x1f) != 0x0d ||
		    !fpti_tip_fast(d, &to))
			return (0);
		if (e->q == FPT_Q_IND_CALL) {
			if (call)
				fpti_rs_push(d, ret);
			call = 0;
			fpti_rs_push(d, fpt_cache_dip(e) + e->dlen);
		}
		end = e->dend;
	} else
		return (0);
	if (call)
		fpti_rs_push(d, ret);
	fpti_block_out(d, it, e, ninsn, end, d->last.isid, to, d->ntnt != 0);
	return (1);
}

_Static_assert(FPT_END_COND_NOT_TAKEN == FPT_END_COND_TAKEN + 1,
    "hot_one() makes a conditional branch's end from its bit");

#define HOT_CALLS	4	/* direct calls a hot block may pass */

/*
 * The hot path of fpt_next() while nothing but TNT and TIP packets comes
 * (d->hot, and hot_ready() held): a block over cache entries, as
 * proceed_cached() follows them, that ends at a TNT bit or a TIP at hand
 * (as trace_step() would take them), or where a DECODE entry ends it.
 * 1 with it in @it; 0, nothing changed, when anything else comes (a
 * miss, an error, another packet): next_item() decodes that block.
 */
static int __attribute__((noinline))
hot_block(struct fpt *d, struct fpt_item *it)
{
	const struct fpt_cache_entry *e;
	const uint8_t *tip_at;
	uint64_t ip = d->ip, to, ret[HOT_CALLS], tip_last;
	unsigned ninsn = 0, ncall = 0, i, bit, pop = 0;
	int isid = d->last.isid, tip_have;
	uint8_t end;

	assert(d->hot);
	for (;;) {
		e = fpti_cache_find(d->cache, ip, isid, d->mode);
		if (e == NULL || ninsn + e->ninsn > FPT_BLK_MAX)
			return (0);
		ninsn += e->ninsn;
		if (e->q == FPT_Q_AGAIN) {
			ip = fpt_cache_dip(e);
			continue;
		}
		if (e->q != FPT_Q_DECODE)
			break;
		if (e->dkind == HWTR_X86_CALL &&
		    e->dtarget != fpt_cache_dip(e) + e->dlen) {
			if (ncall == HOT_CALLS)
				return (0);
			ret[ncall++] = fpt_cache_dip(e) + e->dlen;
		}
		ip = e->dkind == HWTR_X86_CALL || e->dkind == HWTR_X86_JMP ?
		    e->dtarget : fpt_cache_dip(e) + e->dlen;
		if (!e->dnext_in) {
			end = FPT_END_NONE;
			to = ip;
			goto done;
		}
	}
	switch (e->q) {
	case FPT_Q_COND:
		if (!cond_take(d, e, &to, &end))
			return (0);
		break;
	case FPT_Q_RETURN:
		end = FPT_END_RET;
		if (d->ntnt > 0) {
			/* A compressed return: taken, to the stack's top. */
			bit = (unsigned)(d->tnt >> (d->ntnt - 1)) & 1;
			if (!bit || d->rs_n + ncall == 0)
				return (0);
			d->ntnt--;
			pop = 1;
			to = 0;
			break;
		}
		/* FALLTHROUGH */
	default:
		/* A TIP next is the query's answer whatever the TNT bits. */
		if ((e->q == FPT_Q_IND_CALL && ncall == HOT_CALLS) ||
		    d->pos >= d->cfg.end || (*d->pos & 0x1f) != 0x0d ||
		    d->mode_pending)
			return (0);
		tip_at = d->pos;
		tip_last = d->last_ip;
		tip_have = d->have_ip;
		if (!fpti_tip_fast(d, &to))
			return (0);
		/*
		 * With TNT bits left libipt reads ahead after the TIP, and a
		 * bad packet there fails this query (fpti_check_ahead()):
		 * here only its common case, a TNT-8 or a TIP next.
		 */
		if (d->ntnt > 0 && (d->pos >= d->cfg.end ||
		    (!fpti_is_tnt8(*d->pos) && (*d->pos & 0x1f) != 0x0d))) {
			d->pos = tip_at;
			d->last_ip = tip_last;
			d->have_ip = tip_have;
			return (0);
		}
		if (e->q == FPT_Q_IND_CALL)
			ret[ncall++] = fpt_cache_dip(e) + e->dlen;
		end = e->dend;
		break;
	}
done:
	for (i = 0; i < ncall; i++)
		fpti_rs_push(d, ret[i]);
	if (pop) {
		assert(d->rs_n > 0);
		to = d->rs[d->rs_top];
		d->rs_top = (d->rs_top + FPT_RS_MAX - 1) % FPT_RS_MAX;
		d->rs_n--;
	}
	fpti_block_out(d, it, e, ninsn, end, isid, to, d->ntnt != 0);
	return (1);
}

/*
 * hot_block() over a memoized run (fpti_run()) when its blocks all start
 * in the span hot_ready() holds d->ip to: the run, its blocks made (the
 * TNT bits taken, the returns pushed and popped, d->ip past the last),
 * for the caller to give (its rest from d->run_b, which the caller
 * sets); NULL, nothing changed, when it does not apply.
 */
static inline const struct fpt_run *
run_start(struct fpt *d)
{
	const struct fpt_run *r = fpti_run(d);
	uint64_t span = d->last.hi - d->last.lo;
	unsigned i;

	if (r->nb == 0 || (r->nb > 1 && (r->lo - d->last.lo >= span ||
	    r->hi - d->last.lo >= span)) ||
	    (r->pop && d->rs_n + r->npush == 0))
		return (NULL);
	for (i = 0; i < r->npush; i++)
		fpti_rs_push(d, r->push[i]);
	d->ip = r->to;
	if (r->pop) {
		assert(d->rs_n > 0);
		d->ip = d->rs[d->rs_top];
		d->rs_top = (d->rs_top + FPT_RS_MAX - 1) % FPT_RS_MAX;
		d->rs_n--;
	}
	d->ntnt -= r->nb;
	/* The next run's slot, while this one's blocks are given. */
	if (d->ntnt > 0)
		__builtin_prefetch(fpti_run_slot(d, d->ip, fpti_run_key(d)));
	return (r);
}

/* The blocks of @r from @b on (b[0] < @b < r->b + r->nb) to give next. */
static inline void
run_rest_set(struct fpt *d, const struct fpt_run *r,
    const struct fpt_block *b)
{
	d->run = r;
	d->run_b = b;
	d->run_end = &r->b[r->nb];
}

/* run_start() for fpt_next(): 1 with the run's first block in @it. */
static inline int
hot_run(struct fpt *d, struct fpt_item *it)
{
	const struct fpt_run *r = run_start(d);

	if (r == NULL)
		return (0);
	if (r->nb > 1)
		run_rest_set(d, r, &r->b[1]);
	it->kind = FPT_ITEM_BLOCK;
	it->runs = 1;
	it->block = r->b[0];
	return (1);
}

/*
 * fpt_next()'s way to a run from the TNT bits at hand (next_hot(),
 * next_run()), and no other: the state it checks first, then
 * run_start(), then its first @max blocks taken.
 */
size_t
fpt_run_next(struct fpt *d, size_t max, const struct fpt_block **bp,
    struct fpt_memo **memo)
{
	const struct fpt_run *r;

	if (d->run_b != NULL || d->ip - d->last.lo >= d->hot ||
	    d->ntnt == 0 || (r = run_start(d)) == NULL)
		return (0);
	*bp = r->b;
	*memo = (struct fpt_memo *)(uintptr_t)&r->memo;
	if (r->nb > max) {
		assert(max > 0);
		run_rest_set(d, r, &r->b[max]);
		return (max);
	}
	return (r->nb);
}

/* fpt_next() but for its hot path. */
static int __attribute__((noinline))
next_item(struct fpt *d, struct fpt_item *it)
{
	int rc;

	it->kind = 0;
	/* fpt_next() tried the hot path already. */
	if (d->hot) {
		d->hot = 0;
		if (hot_ready(d))
			return (block_run(d, it, d->last.isid));
	}
	if (d->unsup != NULL)
		return (-HWTR_E_UNSUPPORTED);
	if (d->evq_n > 0) {
		/* The last event waiting: does libipt's next fetch fail it? */
		if (d->evq_n == 1 && d->synced && !d->eos &&
		    !fpti_trail_known(d) && (rc = fpti_trail_error(d)) != 0) {
			if (rc == -HWTR_E_UNSUPPORTED)
				return (rc);
			/* libipt processed it before that fetch. */
			asid_event(d, &d->evq[d->evq_head]);
			d->evq_n = d->evq_head = 0;
			if (rc == FPT_EOS) {
				d->eos = 1;
				return (FPT_EOS);
			}
			return (error_item(d, it, rc));
		}
		/*
		 * libipt passes the instruction a PIP or VMCS bound to as it
		 * hands over the last event: where it cannot, that event is
		 * lost; fpt hands the segment over before it.  Its query
		 * for that instruction reads ahead after the packet it
		 * takes, and an error there loses the event too.
		 */
		if (d->evq_n == 1 && d->post && d->ntnt == 0 && d->synced &&
		    !d->eos && ((rc = post_next(d)) < 0 || (rc == 0 &&
		    needs_trace(d->post_kind) && fpti_check_ahead(d) < 0)))
			return (fpti_unsupported(d, "no trace to pass the "
			    "instruction a PIP or VMCS bound to"));
		it->kind = FPT_ITEM_EVENT;
		it->event = d->evq[d->evq_head];
		if (it->event.kind == FPT_EV_ERROR && d->have_quiet) {
			asid_event(d, &d->quiet_ev);
			d->have_quiet = 0;
		}
		asid_event(d, &it->event);
		d->evq_head = (d->evq_head + 1) % FPT_EVQ_MAX;
		d->evq_n--;
		return (0);
	}
	if (!d->synced)
		return (d->eos ? FPT_EOS : -HWTR_E_INVAL);
	if (d->eos)
		return (FPT_EOS);
	if (!d->enabled)
		return (fpti_enter(d, it) ? 0 : disabled_next(d, it));
	return (block_next(d, it));
}

/*
 * Whether the next block needs none of block_next()'s preliminaries: no
 * event waits or is due (the TNT bits go on, or a TNT-8 or TIP comes
 * next, as in fpti_fetch_event()'s usual case), and d->ip is in the span
 * of the last lookup, the image whose block cache is current.
 */
static inline int
fast_ready(const struct fpt *d)
{
	return (d->unsup == NULL && d->evq_n == 0 && d->synced &&
	    !d->eos && d->enabled && !d->post && !d->async && d->mode != 0 &&
	    hot_ready(d));
}

/* fast_ready()'s checks of what a hot block may have changed. */
static inline int
hot_ready(const struct fpt *d)
{
	return ((d->ntnt > 0 || (d->pos < d->cfg.end &&
	    (fpti_is_tnt8(*d->pos) || (*d->pos & 0x1f) == 0x0d)) ||
	    tnt_next(d)) && hot_span(d));
}

/* hot_ready()'s checks of d->ip: in the last span, its cache current. */
static inline int
hot_span(const struct fpt *d)
{
	return (d->ip - d->last.lo < d->last.hi - d->last.lo &&
	    (d->cfg.keep_cache || d->last.isid == d->cur_isid));
}

/* fpti_tnt_or_tip() at d->pos, out of the hot path's way. */
static int __attribute__((noinline))
tnt_next(const struct fpt *d)
{
	return (fpti_tnt_or_tip(d->pos, d->cfg.end));
}

/*
 * Whether a TNT bit is at hand without the packet layer: bits left, or
 * a TNT packet next (taken here) followed by one of fpti_tnt_or_tip()'s,
 * as fpti_query_cond() would take it.
 */
static inline int
tnt_at_hand(struct fpt *d)
{
	const uint8_t *p = d->pos;

	if (d->ntnt > 0)
		return (1);
	/* The usual case inline: a TNT-8 then a TNT-8 or a TIP. */
	if (d->cfg.end - p < 2 || !fpti_is_tnt8(p[0]) ||
	    !(fpti_is_tnt8(p[1]) || (p[1] & 0x1f) == 0x0d))
		return (tnt_refill(d));
	d->ntnt = 31u - (unsigned)__builtin_clz(p[0]) - 1;
	d->tnt = (p[0] >> 1) & ((1u << d->ntnt) - 1);
	d->pos = p + 1;
	assert(d->ntnt > 0);
	return (1);
}

/*
 * The conditional branch of entry @e takes the next TNT bit: where it
 * goes (*@to) and how the block ends (*@end); 0 with no bit at hand.
 */
static inline int
cond_take(struct fpt *d, const struct fpt_cache_entry *e, uint64_t *to,
    uint8_t *end)
{
	if (!tnt_at_hand(d))
		return (0);
	d->ntnt--;
	if ((d->tnt >> d->ntnt) & 1) {
		*to = e->dtarget;
		*end = FPT_END_COND_TAKEN;
	} else {
		*to = fpt_cache_dip(e) + e->dlen;
		*end = FPT_END_COND_NOT_TAKEN;
	}
	return (1);
}

/* tnt_at_hand() when the bits are used up: the next TNT packet's. */
static int __attribute__((noinline))
tnt_refill(struct fpt *d)
{
	const uint8_t *p = d->pos;
	uint64_t tnt;
	unsigned n;

	assert(d->ntnt == 0);
	if (p < d->cfg.end && fpti_is_tnt8(p[0])) {
		n = 31u - (unsigned)__builtin_clz(p[0]) - 1;
		tnt = (p[0] >> 1) & ((1u << n) - 1);
		p++;
	} else if (fpti_long_tnt(p, d->cfg.end, &tnt, &n))
		p += 8;
	else
		return (0);
	if (!fpti_tnt_or_tip(p, d->cfg.end))
		return (0);
	assert(n > 0);
	d->ntnt = n;
	d->tnt = tnt;
	d->pos = p;
	return (1);
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
	unsigned i;
	int rc;

	for (;;) {
		if ((rc = fpti_read_ahead(d)) == -HWTR_E_UNSUPPORTED)
			return (rc);
		/*
		 * A TIP or long TNT cut by the end is no end to libipt
		 * (only its header is looked at): with tracing off and no
		 * event it is libipt's "no enable" error.
		 */
		if (rc == -HWTR_E_TRUNCATED && d->pos < d->cfg.end &&
		    ((*d->pos & 0x1f) == 0x0d || (*d->pos == 0x02 &&
		    d->cfg.end - d->pos >= 2 && d->pos[1] == 0xa3)))
			return (error_item(d, it, -HWTR_E_DECODE));
		if (rc < 0)
			return (rc == -HWTR_E_TRUNCATED ? (d->eos = 1,
			    FPT_EOS) : error_item(d, it, rc));
		if (d->evq_n > 0)
			return (fpt_next(d, it));
		if ((rc = fpti_peek(d, &pkt)) < 0)
			return (rc == -HWTR_E_TRUNCATED ? (d->eos = 1,
			    FPT_EOS) : error_item(d, it, rc));
		switch (pkt.kind) {
		case FPT_PKT_TIP_PGE:
			fpti_ev_init(d, &ev, FPT_EV_ENABLED, d->pos);
			if ((rc = fpti_ip_update(d, &pkt, &ip)) < 0) {
				d->pos += pkt.size;
				return (error_item(d, it, rc));
			}
			d->pos += pkt.size;
			ev.ip = ip;
			d->ip = ip;
			d->enabled = 1;
			fpti_ev_push(d, &ev);
			if (d->mode_pending) {
				fpti_ev_init(d, &ev, FPT_EV_EXEC_MODE, d->pos);
				ev.tsc = d->mode_tsc;
				ev.has_tsc = (uint8_t)d->mode_has_tsc;
				ev.ip = ip;
				ev.mode = d->next_mode;
				d->mode = d->next_mode;
				d->mode_pending = 0;
				fpti_ev_push(d, &ev);
				/*
				 * libipt fetches the mode's event as the
				 * enabled one's trailing event, reading on
				 * past the TIP.PGE: a bad packet there loses
				 * both.
				 */
				if ((rc = fpti_check_ahead(d)) < 0) {
					if (rc == -HWTR_E_UNSUPPORTED)
						return (rc);
					d->evq_n = d->evq_head = 0;
					return (error_item(d, it, rc));
				}
			}
			return (fpt_next(d, it));
		case FPT_PKT_MODE_EXEC:
			d->pos += pkt.size;
			/* libipt gives an event for each: fpt keeps one. */
			if (d->mode_pending)
				return (fpti_unsupported(d, "two MODE.exec "
				    "for one TIP"));
			d->mode_pending = 1;
			d->next_mode = (pkt.flags & 1) ? 64 :
			    (pkt.flags & 2) ? 32 : 16;
			d->mode_has_tsc = d->has_tsc;
			d->mode_tsc = d->has_tsc ? d->tsc : 0;
			if ((pkt.flags & 3) == 3)
				return (fpti_unsupported(d, "MODE.exec with L "
				    "and D set"));
			break;
		case FPT_PKT_PSB:
			if ((rc = fpti_read_psb_plus(d)) != 0)
				return (rc < 0 ? rc : FPT_EOS);
			/*
			 * libipt reads on past the PSBEND as it fetches the
			 * last of two status updates or more (handing over
			 * the one before): a bad packet there, as in the
			 * sync, leaves the first n - 2 and an error.
			 */
			if (!d->enabled && d->evq_n >= 2 &&
			    (rc = fpti_check_ahead(d)) < 0) {
				if (rc == -HWTR_E_UNSUPPORTED)
					return (rc);
				d->evq_n -= 2;
				fpti_ev_init(d, &ev, FPT_EV_ERROR, d->pos);
				ev.error = rc;
				fpti_ev_push(d, &ev);
				d->synced = 0;
			}
			if (d->evq_n > 0 || d->enabled)
				return (fpt_next(d, it));
			break;
		case FPT_PKT_FUP:
			/* Tracing is off: the events happen where they are. */
			if (d->nfupq == 0)
				return (fpti_unsupported(d, "a FUP while "
				    "tracing is disabled"));
			if ((rc = fpti_fup_bound(d, &pkt)) < 0)
				return (error_item(d, it, rc));
			for (i = 0; i < d->nfupq; i++)
				fpti_ev_push(d, &d->fupq[i]);
			d->nfupq = 0;
			return (fpt_next(d, it));
		case FPT_PKT_OVF:
			if ((rc = fpti_overflow(d)) < 0)
				return (rc == -HWTR_E_UNSUPPORTED ? rc :
				    error_item(d, it, rc));
			return (fpt_next(d, it));
		default:
			if ((rc = fpti_power_event(d, &pkt)) < 0)
				return (rc);
			if (rc == 0)
				return (fpti_unsupported(d, "a packet other "
				    "than TIP.PGE while tracing is disabled"));
			if (d->evq_n > 0)
				return (fpt_next(d, it));
			break;
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
	int rc, isid;

	if (d->post && (rc = post_next(d)) != 0)
		return (rc < 0 ? rc : fpt_next(d, it));
	if (d->ntnt == 0 && !d->async) {
		/* At the end of the trace the flow goes on without it. */
		if ((rc = fpti_fetch_event(d)) < 0)
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
	if (d->mode == 0)
		return (fpti_unsupported(d, "an unknown execution mode"));
	/*
	 * An event at d->ip itself needs no code there: libipt's proceed to
	 * its IP ends before the first instruction.
	 */
	if (d->async && !d->bind && d->ip == d->async_ev.ip &&
	    !(d->async_ev.kind == FPT_EV_DISABLED && d->async_ev.ip_suppressed))
		return (block_run(d, it, d->cur_isid));
	rc = code_at(d, d->ip, &isid);
	/*
	 * libipt maps one section at a time where a block starts, and
	 * unless an image section cache keeps them mapped, leaving one
	 * drops its block cache.  Not on its way to an event's IP (an
	 * asynchronous one's, or a MODE.exec's: pt_blk_proceed_event()),
	 * which reads the image directly.
	 */
	if (!d->async && !mode_event_next(d) && !d->cfg.keep_cache &&
	    (rc < 0 || isid != d->cur_isid)) {
		cache_flush(d);
		d->cur_isid = rc < 0 ? 0 : isid;
	}
	if (rc < 0)
		return (error_item(d, it, -HWTR_E_NOENT));
	return (block_run(d, it, isid));
}

/*
 * Whether the next block is block_run()'s way to a MODE.exec's IP
 * (proceed_to_mode() past its first test): libipt's event flow, the TNT
 * bits used up and the mode's TIP next.
 */
static int
mode_event_next(struct fpt *d)
{
	struct fpt_pkt pkt;

	return (d->mode_pending && d->ntnt == 0 && fpti_peek(d, &pkt) > 0 &&
	    pkt.kind == FPT_PKT_TIP);
}

/*
 * The block from d->ip in image @isid, once the events before it are
 * fetched and the cache flushed if need be.
 */
static inline int
block_run(struct fpt *d, struct fpt_item *it, int isid)
{
	struct fpt_block *b = &it->block;
	int rc;

	it->kind = FPT_ITEM_BLOCK;
	b->ip = d->ip;
	b->end_ip = d->ip;
	b->ninsn = 0;
	b->end = FPT_END_NONE;
	b->mode = d->mode;
	b->isid = isid;
	if (d->async)
		rc = proceed_to_async(d, b);
	else if (__builtin_expect(d->mode_pending, 0) && d->ntnt == 0)
		rc = proceed_to_mode(d, b);
	else
		rc = proceed_cached(d, b);
	if (__builtin_expect(rc == 0 && b->ninsn > 0, 1))
		return (0);
	if (rc == -HWTR_E_UNSUPPORTED)
		return (rc);
	if (rc == -HWTR_E_TRUNCATED) {
		d->eos = 1;
		rc = 0;
	}
	if (rc < 0)
		fpti_error_here(d, rc);
	if (b->ninsn == 0)
		return (fpt_next(d, it));
	return (0);
}

/*
 * Take the instruction at d->ip into @b: 1, or 0 when @b ends before it
 * (full, or the code is another image's), or < 0 when it cannot be read.
 */
static inline int
block_take(struct fpt *d, struct fpt_block *b, struct hwtr_x86_insn *insn)
{
	int rc, isid;

	if (b->ninsn == FPT_BLK_MAX)
		return (0);
	if ((rc = fpti_decode_at(d, d->ip, insn, &isid)) < 0)
		return (rc);
	if (isid != b->isid)
		return (0);
	b->ninsn++;
	b->end_ip = d->ip;
	return (1);
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
	int rc, dis = ev->kind == FPT_EV_DISABLED;
	/* A syscall's exit pushing nothing is memoized (fpti_exit()). */
	int memo = dis && ev->ip_suppressed && b->ninsn == 0;

	assert(d->async);
	if (d->bind)
		return (proceed_to_bound(d, b));
	for (;;) {
		if (d->ip == ev->ip && !(dis && ev->ip_suppressed)) {
			if (ev->kind != FPT_EV_ASYNC_DISABLED || !d->skd022 ||
			    !at_vmentry(d, d->ip))
				return (fpti_async_reached(d));
			/*
			 * SKD022: a FUP on VMLAUNCH or VMRESUME may be wrong;
			 * libipt takes the disable for a synchronous one at
			 * the TIP.PGD's IP and goes on to it.
			 */
			ev->kind = FPT_EV_DISABLED;
			ev->ip = ev->to;
			ev->to = 0;
			dis = 1;
			continue;
		}
		if ((rc = block_take(d, b, &insn)) <= 0)
			return (rc);
		if (dis && ev->ip_suppressed && d->skl014 &&
		    d->cfg.filtering && (insn.kind == HWTR_X86_CALL ||
		    insn.kind == HWTR_X86_JMP) &&
		    !fpti_filter_on(d, insn.target)) {
			/* SKL014: a direct branch out of the filter. */
			call_push(d, d->ip, &insn);
			return (fpti_async_reached(d));
		}
		if (needs_trace(insn.kind)) {
			if (insn.kind == HWTR_X86_CALL_IND)
				fpti_rs_push(d, d->ip + insn.len);
			if (!dis)
				return (fpti_unsupported(d, "an event IP not "
				    "reached without trace"));
			/* Where tracing resumes (libipt's guess). */
			d->ip = insn.kind == HWTR_X86_CALL_IND ||
			    insn.far == HWTR_X86_FAR_CALL ? d->ip + insn.len :
			    0;
			ev->ip = ev->ip_suppressed ? 0 : ev->ip;
			if (memo && insn.kind != HWTR_X86_CALL_IND)
				fpti_exit_put(d, b);
			return (fpti_async_reached(d));
		}
		if (dis && ev->ip_suppressed && fpti_writes_cr3(d, d->ip))
			return (fpti_async_reached(d));
		switch (insn.kind) {
		case HWTR_X86_CALL:
			call_push(d, d->ip, &insn);
			memo = 0;
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
 * A MODE.exec before the TIP at hand, the TNT bits used up (libipt says
 * an event is pending only then, pt_qry_status_flags(); until then its
 * blocks come from its cache, as fpt's do): libipt fetched its event (at
 * the TIP's IP) before this block and steps to that IP without its block
 * cache (pt_blk_proceed_to_ip_with_trace()), through direct jumps and
 * calls, to the first instruction that needs trace: that one takes the
 * TIP and gives the event (fpti_query_indirect()).
 */
static int
proceed_to_mode(struct fpt *d, struct fpt_block *b)
{
	struct hwtr_x86_insn insn;
	struct fpt_pkt pkt;
	uint64_t to, last = d->last_ip;
	int rc, have = d->have_ip;

	if (fpti_peek(d, &pkt) <= 0 || pkt.kind != FPT_PKT_TIP)
		return (proceed_cached(d, b));
	rc = fpti_ip_update(d, &pkt, &to);
	d->last_ip = last;
	d->have_ip = have;
	for (;;) {
		/* libipt gives the event there, the TIP still to take. */
		if (rc < 0 || d->ip == to)
			return (fpti_unsupported(d, "a MODE.exec's TIP without "
			    "IP or reached without trace"));
		if ((rc = block_take(d, b, &insn)) <= 0)
			return (rc < 0 ? rc : fpti_unsupported(d, "a MODE.exec's "
			    "TIP past the end of a block"));
		if (needs_trace(insn.kind))
			return (trace_step(d, b, insn.kind, d->ip, insn.len,
			    insn.target));
		if (insn.kind == HWTR_X86_CALL)
			call_push(d, d->ip, &insn);
		d->ip = insn.kind == HWTR_X86_OTHER ? d->ip + insn.len :
		    insn.target;
	}
}

/*
 * A PIP or VMCS while tracing: step, as libipt's pt_blk_proceed_to_insn()
 * does, to the first instruction it binds to (fpti_binds()); the block ends
 * with it and the event happens there, the instruction is passed after
 * the events bound to it (post_next()).  An instruction that needs trace
 * on the way is libipt's "bad query", an error.
 */
static int
proceed_to_bound(struct fpt *d, struct fpt_block *b)
{
	struct hwtr_x86_insn insn;
	int rc;

	assert(d->bind && !d->post);
	for (;;) {
		if ((rc = block_take(d, b, &insn)) <= 0)
			return (rc);
		if (insn.kind == HWTR_X86_CALL_IND ||
		    insn.kind == HWTR_X86_CALL)
			call_push(d, d->ip, &insn);
		if ((fpti_binds(d, &insn) & d->bind) != 0) {
			d->post = 1;
			d->post_binds = fpti_binds(d, &insn);
			d->post_bound = d->bind;
			d->post_ip = d->ip;
			d->post_kind = insn.kind;
			d->post_len = insn.len;
			d->post_target = insn.target;
			d->bind = 0;
			return (fpti_async_reached(d));
		}
		if (needs_trace(insn.kind))
			return (-HWTR_E_DECODE);
		d->ip = insn.kind == HWTR_X86_CALL ||
		    insn.kind == HWTR_X86_JMP ? insn.target : d->ip + insn.len;
	}
}

/*
 * The instruction a PIP or VMCS bound to: first the other of the two
 * when it comes next and binds to it too (1: an event is queued), then
 * past it, with trace when it needs some (0).
 */
static int
post_next(struct fpt *d)
{
	struct fpt_block scratch;
	struct fpt_pkt pkt;
	unsigned bit;

	assert(d->post && d->ntnt == 0);
	if (fpti_read_ahead(d) == 0 && fpti_peek(d, &pkt) > 0 &&
	    (pkt.kind == FPT_PKT_PIP || pkt.kind == FPT_PKT_VMCS)) {
		bit = pkt.kind == FPT_PKT_PIP ? 1 : 2;
		if ((d->post_binds & bit) && !(d->post_bound & bit))
			return (fpti_power_event(d, &pkt) < 0 ?
			    -HWTR_E_UNSUPPORTED : 1);
	}
	d->post = 0;
	if (!needs_trace(d->post_kind)) {
		d->ip = d->post_ip + d->post_len;
		return (0);
	}
	memset(&scratch, 0, sizeof(scratch));
	if (trace_step(d, &scratch, d->post_kind, d->post_ip, d->post_len,
	    d->post_target) < 0)
		return (fpti_unsupported(d, "no TIP after an instruction a "
		    "PIP or VMCS bound to"));
	return (0);
}

/*
 * Follow the block cache from d->ip, as libipt's cached block decode
 * does: entries chained without trace, the block ending at the first
 * decision point that needs trace or at a direct call or jump whose
 * entry says so; a miss fills the cache (fill()) and ends the block.
 */
static inline int
proceed_cached(struct fpt *d, struct fpt_block *b)
{
	const struct fpt_cache_entry *e;

	for (;;) {
		e = fpti_cache_find(d->cache, d->ip, b->isid, d->mode);
		if (e == NULL)
			return (fill(d, b));
		if (b->ninsn + e->ninsn > FPT_BLK_MAX)
			return (0);
		b->ninsn += e->ninsn;
		b->end_ip = fpt_cache_dip(e);
		d->ip = fpt_cache_dip(e);
		/* The hot path: a conditional branch, its bit at hand. */
		if (e->q == FPT_Q_COND && tnt_at_hand(d)) {
			fpti_hot_start(d);
			d->ntnt--;
			if ((d->tnt >> d->ntnt) & 1) {
				d->ip = e->dtarget;
				b->end = FPT_END_COND_TAKEN;
			} else {
				d->ip = fpt_cache_dip(e) + e->dlen;
				b->end = FPT_END_COND_NOT_TAKEN;
			}
			return (0);
		}
		switch (e->q) {
		case FPT_Q_AGAIN:
			continue;
		case FPT_Q_DECODE:
			if (e->dkind == HWTR_X86_CALL &&
			    e->dtarget != fpt_cache_dip(e) + e->dlen)
				fpti_rs_push(d, fpt_cache_dip(e) + e->dlen);
			d->ip = e->dkind == HWTR_X86_CALL ||
			    e->dkind == HWTR_X86_JMP ? e->dtarget :
			    fpt_cache_dip(e) + e->dlen;
			if (!e->dnext_in)
				return (0);
			continue;
		default:
			return (trace_step(d, b, e->dkind, fpt_cache_dip(e),
			    e->dlen, e->dtarget));
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
		if ((rc = fpti_query_cond(d, &taken)) < 0)
			return (rc == -HWTR_E_NOENT ? -HWTR_E_DECODE : rc);
		d->ip = taken ? target : ip + len;
		b->end = taken ? FPT_END_COND_TAKEN : FPT_END_COND_NOT_TAKEN;
		return (0);
	case HWTR_X86_RET:
		b->end = FPT_END_RET;
		rc = fpti_query_cond(d, &taken);
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
		fpti_rs_push(d, ip + len);
		b->end = FPT_END_CALL_IND;
		break;
	case HWTR_X86_JMP_IND:
		b->end = FPT_END_INDIRECT;
		break;
	default:
		b->end = FPT_END_FAR;
		break;
	}
	rc = fpti_query_indirect(d, &to);
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

	/* The hot path's copy of the table stays right (fpti_hot_start()). */
	assert(!d->hot);
	for (;;) {
		if (b->ninsn == FPT_BLK_MAX)
			return (0);
		if ((rc = fpti_decode_at(d, ip, &insn, &isid)) < 0)
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
			fpti_step_entry(d, b, p, q_of(insn.kind), 0);
			d->ip = ip;
			/*
			 * libipt's query reads on after the TIP (and
			 * the TNT) it takes; a bad packet there fails
			 * the fill before the entries on the way.
			 */
			if ((rc = trace_step(d, b, insn.kind, ip, insn.len,
			    insn.target)) < 0 || (d->ntnt == 0 &&
			    (rc = fpti_check_ahead(d)) < 0))
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
			fpti_step_entry(d, b, p, FPT_Q_DECODE, in);
			break;
		}
		if (fpt_cache_lookup(d->cache, nip, b->isid, d->mode) !=
		    NULL) {
			fpti_link_entry(d, b, p, nip);
			break;
		}
		if (n == FPT_FILL_STEPS) {
			fpti_trampoline(d, b, p, nip);
			break;
		}
		ip = nip;
	}
	/* Each instruction's entry from its successor's, back to the first. */
	for (j = n - 1; j-- > 0;)
		if (!fpti_link_entry(d, b, &path[j], path[j + 1].ip))
			break;
	if (d->cache_full)
		return (fpti_unsupported(d, "the block cache is full"));
	return (0);
}

/* The image of @ip, or -HWTR_E_NOENT. */
static int
code_at(struct fpt *d, uint64_t ip, int *isid)
{
	unsigned i;
	int rc;

	/* Most blocks start in the span the block before started in. */
	if (ip - d->last.lo < d->last.hi - d->last.lo) {
		*isid = d->last.isid;
		return (0);
	}
	if (d->win_len > 0 && ip >= d->win_ip &&
	    ip < d->win_ip + d->win_len) {
		*isid = d->win_isid;
		return (0);
	}
	for (i = 0; i < FPT_SPANS; i++)
		if (ip >= d->span[i].lo && ip < d->span[i].hi) {
			*isid = d->span[i].isid;
			d->last = d->span[i];
			return (0);
		}
	if (d->cfg.map != NULL) {
		struct fpt_span *sp = &d->span[d->span_next];

		if (d->cfg.map(d->cfg.ctx, ip, &sp->lo, &sp->hi, isid) < 0)
			return (-HWTR_E_NOENT);
		assert(sp->lo <= ip && ip < sp->hi);
		sp->isid = *isid;
		d->last = *sp;
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
		fpti_rs_push(d, ip + insn->len);
}

/* Whether a VMLAUNCH or VMRESUME (0f 01 c2/c3) is at @ip. */
static int
at_vmentry(struct fpt *d, uint64_t ip)
{
	uint8_t c[3];
	int id;

	return (d->cfg.read_code(d->cfg.ctx, ip, c, 3, &id) == 3 &&
	    c[0] == 0x0f && c[1] == 0x01 && (c[2] == 0xc2 || c[2] == 0xc3));
}

static int
error_item(struct fpt *d, struct fpt_item *it, int rc)
{
	memset(it, 0, sizeof(*it));
	it->kind = FPT_ITEM_EVENT;
	fpti_error_at(d);
	fpti_ev_init(d, &it->event, FPT_EV_ERROR, d->pos);
	it->event.error = rc;
	it->event.ip = d->ip;
	d->synced = 0;
	return (0);
}
