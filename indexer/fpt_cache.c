/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * fpt's block cache: for a (isid, ip, mode), what the code does from ip
 * up to and with its next branch of any kind (instruction count, the
 * branch's address, kind, length and direct target), so that a run of
 * TNT bits over a loop is followed by table look-ups, not by decoding the
 * same instructions again.  The entries are libipt's (fpt.h says how),
 * and since libipt's blocks end where its cache had no entry, no entry may
 * ever be lost: an open-addressing table that grows (linear probing, at
 * most half full), up to FPT_CACHE_MAX entries, past which inserts fail
 * and the decoder says the segment is unsupported.
 *
 * Invalidation: an entry is only found again under the same isid, and
 * the read_code callback gives a new isid whenever the code at an address
 * may have changed (a new image mapped over it, an exec); entries of the
 * old isid are then never hit again.
 */

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "hwtrace.h"
#include "fpt_int.h"
#include "hwtr_x86.h"

#define FPT_CACHE_MAX	(1u << 22)	/* entries: 128 MB of table */
#define slot_of		fpti_cache_slot

_Static_assert(sizeof(struct fpt_cache_entry) == 32,
    "a block cache entry is half a cache line");

/* An empty table of @n slots, aligned to the cache line. */
static struct fpt_cache_entry *
table_new(uint64_t n)
{
	struct fpt_cache_entry *t;

	if ((t = aligned_alloc(64, (size_t)n * sizeof(*t))) == NULL)
		return (NULL);
	memset(t, 0, (size_t)n * sizeof(*t));
	return (t);
}

int
fpt_cache_new(struct fpt_cache **cp, unsigned bits)
{
	struct fpt_cache *c;

	assert(bits > 0 && bits < 30);
	*cp = NULL;
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return (-HWTR_E_NOMEM);
	c->mask = (1ull << bits) - 1;
	/* isid 0 is never a valid one: a tag of 0 marks an empty slot. */
	if ((c->slot = table_new(c->mask + 1)) == NULL) {
		free(c);
		return (-HWTR_E_NOMEM);
	}
	*cp = c;
	return (0);
}

const struct fpt_cache_entry *
fpt_cache_lookup(const struct fpt_cache *c, uint64_t ip, int isid,
    uint8_t mode)
{
	uint64_t i = slot_of(c->mask, ip, isid, mode);
	uint64_t tag = fpt_cache_tag(isid, mode, c->gen);
	const struct fpt_cache_entry *e;

	for (;; i = (i + 1) & c->mask) {
		e = &c->slot[i];
		if (e->tag == 0)
			return (NULL);
		if (e->ip == ip && ((e->tag ^ tag) & FPT_TAG_KEY) == 0)
			return (e->tag == tag ? e : NULL);
	}
}

/* Put @e in @slot (@mask + 1 slots), over an entry of the same key. */
static void
put(struct fpt_cache_entry *slot, uint64_t mask,
    const struct fpt_cache_entry *e, size_t *n)
{
	uint64_t i = slot_of(mask, e->ip, (int)(uint32_t)e->tag,
	    (uint8_t)(e->tag >> 32));

	for (;; i = (i + 1) & mask) {
		if (slot[i].tag == 0) {
			(*n)++;
			break;
		}
		if (slot[i].ip == e->ip &&
		    ((slot[i].tag ^ e->tag) & FPT_TAG_KEY) == 0)
			break;
	}
	slot[i] = *e;
}

int
fpt_cache_insert(struct fpt_cache *c, const struct fpt_cache_entry *e)
{
	struct fpt_cache_entry *ns;
	uint64_t nmask, i;
	size_t n = 0;

	struct fpt_cache_entry ce = *e;
	uint64_t tag;

	tag = fpt_cache_tag((int)(uint32_t)e->tag, (uint8_t)(e->tag >> 32),
	    c->gen);
	assert((int)(uint32_t)e->tag > 0 && e->ninsn > 0);
	ce.tag = tag;
	if ((c->n + 1) * 2 > c->mask + 1) {
		if (c->mask + 1 >= 2 * (uint64_t)FPT_CACHE_MAX)
			return (-HWTR_E_LIMIT);
		nmask = c->mask * 2 + 1;
		if ((ns = table_new(nmask + 1)) == NULL)
			return (-HWTR_E_NOMEM);
		/* Stale entries are left behind. */
		for (i = 0; i <= c->mask; i++)
			if (c->slot[i].tag != 0 &&
			    (c->slot[i].tag ^ tag) >> 40 == 0)
				put(ns, nmask, &c->slot[i], &n);
		free(c->slot);
		c->slot = ns;
		c->mask = nmask;
		c->n = n;
	}
	put(c->slot, c->mask, &ce, &c->n);
	return (0);
}

void
fpt_cache_flush(struct fpt_cache *c)
{
	/* Entries of a generation 2^24 back would look current again. */
	if ((++c->gen & 0xffffff) == 0) {
		memset(c->slot, 0, (size_t)(c->mask + 1) * sizeof(*c->slot));
		c->n = 0;
	}
}

void
fpt_cache_free(struct fpt_cache *c)
{
	if (c == NULL)
		return;
	free(c->slot);
	free(c);
}

/*
 * Make the run of hot blocks from d->ip with the TNT state @ts
 * (fpti_run_key(): the next d->ntnt bits at hand, FPT_RUN_MAX at most)
 * over @r, a slot of another key or a stale one.  Its blocks are the ones
 * fpt_dec.c's hot_block() makes one at a time while they take a TNT bit
 * each, up to a compressed return, and pass at most FPT_RUN_PUSH calls
 * that push: cache entries only (a miss ends the run, and its tag 0 has
 * it made again), so the run stays what they say as long as the cache's
 * generation does.  Whether each block starts in the span the hot path
 * stays in is the caller's check (lo, hi).
 */
const struct fpt_run * __attribute__((noinline))
fpti_run_make(struct fpt *d, struct fpt_run *r, uint16_t ts)
{
	const struct fpt_cache_entry *e;
	struct fpt_block *b;
	uint64_t ip = d->ip, start, tnt;
	unsigned n, ninsn, np;

	assert(d->ntnt > 0 && ts > 1);
	n = 31u - (unsigned)__builtin_clz(ts);
	tnt = ts & ((1u << n) - 1);
	r->ip = ip;
	r->tstate = ts;
	r->isid = d->last.isid;
	r->mode = d->mode;
	r->tag = fpt_cache_tag(r->isid, r->mode, d->cache->gen);
	memset(&r->memo, 0, sizeof(r->memo));
	r->nb = 0;
	r->npush = 0;
	r->pop = 0;
	r->lo = UINT64_MAX;
	r->hi = 0;
	while (n > 0 && r->nb < FPT_RUN_MAX) {
		start = ip;
		ninsn = 0;
		np = r->npush;
		for (;;) {
			e = fpti_cache_find(d->cache, ip, r->isid, r->mode);
			if (e == NULL) {
				r->tag = 0;
				return (r);
			}
			if (ninsn + e->ninsn > FPT_BLK_MAX)
				return (r);
			ninsn += e->ninsn;
			if (e->q == FPT_Q_AGAIN) {
				ip = fpt_cache_dip(e);
				continue;
			}
			if (e->q != FPT_Q_DECODE)
				break;
			if (!e->dnext_in)
				return (r);
			if (e->dkind == HWTR_X86_CALL &&
			    e->dtarget != fpt_cache_dip(e) + e->dlen) {
				/* As many as hot_block()'s HOT_CALLS. */
				if (np == FPT_RUN_PUSH)
					return (r);
				r->push[np++] = fpt_cache_dip(e) + e->dlen;
			}
			ip = e->dkind == HWTR_X86_CALL ||
			    e->dkind == HWTR_X86_JMP ? e->dtarget :
			    fpt_cache_dip(e) + e->dlen;
		}
		/* A compressed return: its bit taken (else libipt errs). */
		if (e->q == FPT_Q_RETURN && ((tnt >> (n - 1)) & 1))
			r->pop = 1;
		else if (e->q != FPT_Q_COND)
			return (r);
		n--;
		b = &r->b[r->nb];
		b->ip = start;
		b->end_ip = fpt_cache_dip(e);
		b->ninsn = ninsn;
		b->mode = r->mode;
		b->isid = r->isid;
		r->npush = (uint8_t)np;
		r->pushed[r->nb] = (uint8_t)np;
		if (r->pop)
			b->end = FPT_END_RET;
		else if ((tnt >> n) & 1) {
			b->end = FPT_END_COND_TAKEN;
			ip = e->dtarget;
		} else {
			b->end = FPT_END_COND_NOT_TAKEN;
			ip = fpt_cache_dip(e) + e->dlen;
		}
		if (r->nb++ > 0) {
			r->lo = start < r->lo ? start : r->lo;
			r->hi = start > r->hi ? start : r->hi;
		}
		r->to = ip;
		if (r->pop)
			break;
	}
	return (r);
}

/*
 * Take back the blocks of the run fpt_next() has not given yet
 * (d->run_b on): hot_run() took their TNT bits, pushed their calls'
 * returns and moved d->ip past them at once.  After it, the decoder is
 * where it would be had it made them one at a time, before the first of
 * them, so that a caller's new image (fpt_code_changed()) applies to it.
 * Return addresses a push dropped off the full stack stay dropped.
 */
void
fpti_run_undo(struct fpt *d)
{
	const struct fpt_run *r = d->run;
	unsigned k, i;

	if (d->run_b == NULL)
		return;
	i = (unsigned)(d->run_b - r->b);
	assert(i > 0 && i < r->nb);
	if (r->pop) {
		/* The popped address is still in its slot. */
		d->rs_top = (d->rs_top + 1) % FPT_RS_MAX;
		if (d->rs_n < FPT_RS_MAX)
			d->rs_n++;
	}
	for (k = r->npush - r->pushed[i - 1]; k > 0; k--) {
		d->rs_top = (d->rs_top + FPT_RS_MAX - 1) % FPT_RS_MAX;
		if (d->rs_n > 0)
			d->rs_n--;
	}
	d->ntnt += r->nb - i;
	d->ip = r->b[i].ip;
	d->run_b = NULL;
}

#define TL(b)	((((b) & 1) == 0 && (b) > 2) || ((b) & 0x1f) == 0x0d ||	\
		    ((b) & 0x0f) == 0x01)
#define TL4(b)	TL(b), TL((b) + 1), TL((b) + 2), TL((b) + 3)
#define TL16(b)	TL4(b), TL4((b) + 4), TL4((b) + 8), TL4((b) + 12)
#define TL64(b)	TL16(b), TL16((b) + 16), TL16((b) + 32), TL16((b) + 48)
/* fpt_walk() makes a conditional branch's end from its bit: 0 or -1. */
_Static_assert(FPT_END_COND_TAKEN + 1 == FPT_END_COND_NOT_TAKEN,
    "enum fpt_end: taken right before not taken");

/* By the header's byte (b & 0x0f is 0x01: 0x01 or 0x11, IP compressed). */
const uint8_t fpti_tnt_last[256] = {
	TL64(0), TL64(64), TL64(128), TL64(192)
};

/*
 * Whether fpt_time_at() gives d->tsc at every offset from d->pos on:
 * no run of timing packets read ahead stops at d->pos or after it.
 */
static inline int
time_still(const struct fpt *d)
{
	return (d->tm.n == 0 || d->tm.run[(d->tm.head + d->tm.n - 1) &
	    (FPT_TRUN_MAX - 1)].stop < d->pos);
}

/*
 * next_hot()'s (fpt_dec.c) commonest blocks in a loop, the state in
 * locals: each step is next_hot()'s with its checks in the same order
 * (d->hot, the span's width, 0 when the hot path may not run), and the
 * walk stops where next_hot() would do anything else, before that block.
 * A random walk's bits are what a branch predictor cannot guess: the
 * conditional branch's successor without a branch.
 */
size_t __attribute__((noinline))
fpt_walk(struct fpt *d, struct fpt_block *b, size_t max)
{
	/* In registers: what each step reads; the rest stays in d. */
	const struct fpt_cache_entry *slot = d->hslot, *e;
	const uint8_t *p = d->pos, *lim = d->cfg.end - 3;
	struct fpt_block *bp = b, *bend = b + max;
	uint64_t ip = d->ip, mask = d->hmask, tag = d->htag, to, bit;
	unsigned ninsn;

	/* A TNT-8 and a header after it, or a TIP: 3 bytes left at least. */
	if (d->run_b != NULL || d->ntnt > 0 || !time_still(d) ||
	    d->cfg.end - p < 3)
		return (0);
	for (; bp < bend; bp++) {
		/* The span's bounds read each time: registers for the rest. */
		if (ip - d->last.lo >= d->hot || p > lim)
			break;
		e = &slot[ip & mask];
		if (e->ip != ip || e->tag != tag)
			break;
		ninsn = e->ninsn;
		if (e->q == FPT_Q_DECODE) {
			if (!e->dend)
				break;
			to = e->dtarget;
			e = &slot[to & mask];
			if (e->ip != to || e->tag != tag)
				break;
			ninsn += e->ninsn;
		}
		if (e->q == FPT_Q_COND && (p[0] & 0xfd) == 4 &&
		    fpti_tnt_last[p[1]]) {
			/* All ones when taken: the end and where it goes. */
			bit = 0 - (uint64_t)((p[0] >> 1) & 1);
			p++;
			to = fpt_cache_dip(e) + e->dlen;
			to ^= (to ^ e->dtarget) & bit;
			bp->end = (uint8_t)(FPT_END_COND_NOT_TAKEN + bit);
		} else if (e->q >= FPT_Q_IND_CALL && p[0] == FPT_TIP16) {
			to = (d->last_ip & ~0xffffull) | p[1] |
			    (uint64_t)p[2] << 8;
			d->last_ip = to;
			d->have_ip = 1;
			p += 3;
			if (e->q == FPT_Q_IND_CALL)
				fpti_rs_push(d, fpt_cache_dip(e) + e->dlen);
			bp->end = e->dend;
		} else
			break;
		bp->ip = ip;
		bp->end_ip = fpt_cache_dip(e);
		bp->ninsn = ninsn;
		bp->mode = d->mode;
		bp->isid = d->last.isid;
		ip = to;
	}
	d->ip = ip;
	d->pos = p;
	return ((size_t)(bp - b));
}

/* The entries fill() (fpt_dec.c) caches for the path it walked. */

/* A one-instruction entry @q at @p, in @b's image and the current mode. */
static void
one_insn_entry(struct fpt_cache_entry *e, const struct fpt *d,
    const struct fpt_block *b, const struct fpt_step *p, uint8_t q)
{
	memset(e, 0, sizeof(*e));
	e->ip = p->ip;
	e->tag = fpt_cache_tag(b->isid, d->mode, 0);
	e->q = q;
	e->ninsn = 1;
}

/* Insert @e in @d's cache; a full cache is only remembered. */
static void
cache_put(struct fpt *d, const struct fpt_cache_entry *e)
{
	if (fpt_cache_insert(d->cache, e) < 0)
		d->cache_full = 1;
}

/* Cache the one-instruction entry of @p, a decision point. */
void
fpti_step_entry(struct fpt *d, const struct fpt_block *b, const struct fpt_step *p,
    uint8_t q, int next_in)
{
	struct fpt_cache_entry e;

	one_insn_entry(&e, d, b, p, q);
	e.dkind = p->kind;
	e.dlen = p->len;
	e.dtarget = p->target;
	e.dnext_in = (uint8_t)next_in;
	switch (q) {
	case FPT_Q_IND_CALL:
		e.dend = FPT_END_CALL_IND;
		break;
	case FPT_Q_RETURN:
		e.dend = FPT_END_RET;
		break;
	case FPT_Q_INDIRECT:
		e.dend = p->kind == HWTR_X86_JMP_IND ? FPT_END_INDIRECT :
		    FPT_END_FAR;
		break;
	case FPT_Q_DECODE:
		/* Whether the hot path follows it to @dtarget, no push. */
		e.dend = next_in && (p->kind == HWTR_X86_JMP ||
		    (p->kind == HWTR_X86_CALL && p->target == p->ip + p->len));
		break;
	default:
		break;
	}
	cache_put(d, &e);
}

/*
 * Cache @p's entry as "one instruction, then go on at @next", or, when
 * @next is too far for libipt's 16-bit displacement, as a DECODE entry of
 * @p itself.
 */
void
fpti_trampoline(struct fpt *d, const struct fpt_block *b, const struct fpt_step *p,
    uint64_t next)
{
	struct fpt_cache_entry e;
	int64_t disp = (int64_t)(next - p->ip);

	if (disp < INT16_MIN || disp > INT16_MAX) {
		fpti_step_entry(d, b, p, FPT_Q_DECODE, 1);
		return;
	}
	one_insn_entry(&e, d, b, p, FPT_Q_AGAIN);
	e.ddisp = (int16_t)disp;
	cache_put(d, &e);
}

/*
 * Cache @p's entry from its successor's at @next: one more instruction
 * to the same decision point, or a trampoline when libipt's entry would
 * overflow (255 instructions, 16-bit displacement).  0 when the
 * successor has no entry.
 */
int
fpti_link_entry(struct fpt *d, const struct fpt_block *b, const struct fpt_step *p,
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
	disp = (int64_t)(fpt_cache_dip(nx) - p->ip);
	if (e.ninsn == 255 || disp < INT16_MIN || disp > INT16_MAX)
		fpti_trampoline(d, b, p, next);
	else {
		e.ninsn++;
		e.ddisp = (int16_t)disp;
		cache_put(d, &e);
	}
	return (1);
}
