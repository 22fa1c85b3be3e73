/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * fpt's decoder state, shared by its parts: fpt_dec.c (the flow:
 * blocks over the block cache; fpt_query.c its trace queries,
 * fpt_exit.c a syscall's exit the short way, fpt_trail.c the dry run
 * of libipt's trailing event) above fpt_ev.c (the packet layer's
 * read-ahead and the events: FUP-bound and standalone events, OVF)
 * above fpt_psb.c (PSB+) above fpt_evq.c (the packet at the position,
 * the IP, the event queue).  Not for use outside fpt.
 */

#ifndef HWTR_FPT_INT_H
#define HWTR_FPT_INT_H

#include <stddef.h>
#include <stdint.h>

#include "fpt.h"
#include "hwtr_x86.h"

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

/*
 * A decoded instruction, remembered by (ip, isid, mode): decode_at()'s
 * answer, which depends on nothing else (an isid names the code).
 */
#define FPT_ICACHE_BITS	12
struct fpt_icache {
	uint64_t	ip;
	int		isid;		/* 0: empty */
	uint8_t		mode;
	struct hwtr_x86_insn insn;
};

/*
 * A run of hot blocks memoized (fpt_cache.c): from @ip with the TNT bits
 * @tstate ((1 << ntnt) | the bits, ntnt <= FPT_RUN_MAX), the blocks the
 * hot path makes while they end at a conditional branch, each taking one
 * bit, the last maybe at a compressed return: so that a TNT packet's bits
 * over a loop are one look-up.  The calls on the way push @push, in order,
 * before the return pops.
 */
#define FPT_RUN_MAX	8
#define FPT_RUN_PUSH	4
#define FPT_RUN_BITS	14	/* about 400 bytes a slot */
struct fpt_run {
	uint64_t	ip;		/* key */
	/*
	 * Key: the tag of the block cache's entries it was made from
	 * (d->htag: the isid, the mode, the generation); 0 when a block
	 * cache miss cut it, to make it again.
	 */
	uint64_t	tag;
	int		isid;
	uint16_t	tstate;		/* key; 0: an empty slot */
	uint8_t		mode;
	uint8_t		nb;		/* blocks; 0 when the first is none */
	uint8_t		npush;		/* return addresses the calls push */
	uint8_t		pushed[FPT_RUN_MAX];	/* of them, by b[0..i] */
	uint8_t		pop;		/* the last is a compressed return */
	uint64_t	lo, hi;		/* the least, greatest start of b[1..] */
	struct fpt_memo	memo;		/* the caller's: fpt_run_rest() */
	uint64_t	to;		/* where the last goes, but for @pop */
	uint64_t	push[FPT_RUN_PUSH];
	struct fpt_block b[FPT_RUN_MAX];
};

/*
 * A syscall's exit from a user-only trace (fpt_exit.c): from @ip, with no
 * TNT bit left and a TIP.PGD without IP next, the block libipt's
 * proceed to the disable makes (proceed_to_async()), one instruction at a
 * time, to the first that needs trace; memoized by the key of the code
 * it steps over (an isid names the code; @tag, fpt_cache_tag() of
 * generation 0, 0 when empty): @ninsn up to @end_ip, the flow on at
 * @resume, no return address pushed.
 */
#define FPT_EXIT_BITS	6
struct fpt_exit {
	uint64_t	ip, tag;	/* key */
	uint64_t	end_ip, resume;
	uint32_t	ninsn;
};

/*
 * libipt's time estimate (fpt_time.c): its struct pt_time but for the
 * estimate itself (struct fpt's @tsc, @has_tsc), and its calibration,
 * struct pt_time_cal (the cal_ fields).
 */
struct fpt_clock {
	uint64_t	base;		/* from TSC, TMA, MTC */
	uint64_t	fc;		/* the fast counter, from CYC */
	uint32_t	ctc;		/* the last CTC (MTC, TMA) */
	uint32_t	ctc_cyc;	/* the CTC when @fc was cleared */
	uint32_t	lost_cyc;
	uint8_t		have_tma, have_mtc;
	uint8_t		cal_have_mtc, cal_skl168;
	uint32_t	cal_ctc;
	uint64_t	fcr, min_fcr, max_fcr;	/* cycles to fast counter */
	uint64_t	cal_tsc, cyc_tsc, cyc_mtc;
};

/*
 * A run of timing packets libipt's read-ahead decodes at once, whose
 * time is libipt's only once a query decodes the packet after it (at
 * @stop, the packet the read-ahead stopped at): the time before them.
 */
#define FPT_TRUN_MAX	8	/* a power of 2 */
struct fpt_trun {
	const uint8_t	*stop;
	uint64_t	tsc;
	int		has_tsc;
};

/* The time's state, as a dry run saves it. */
struct fpt_timing {
	struct fpt_clock clk;
	struct fpt_trun	run[FPT_TRUN_MAX];	/* the last first */
	unsigned	head, n;
};

/* An instruction on a cache fill's way. */
struct fpt_step {
	uint64_t	ip, target;
	uint8_t		kind, len;
};

/* libipt's asid field not set (pt_asid_no_cr3, pt_asid_no_vmcs). */
#define FPT_NO_ASID	UINT64_MAX

struct fpt {
	/*
	 * A run being given (@run_b next, up to @run_end; NULL when none);
	 * the state is as after its last block.  The runs only take TNT
	 * bits at hand: the position, the time, the events do not move
	 * during one.
	 */
	const struct fpt_block *run_b, *run_end;
	const struct fpt_run *run;
	struct fpt_run	*runs;		/* 2^FPT_RUN_BITS slots */
	struct fpt_config cfg;
	struct fpt_cache *cache;
	const uint8_t	*pos;		/* the next packet */
	const uint8_t	*sync;		/* the last PSB, NULL before one */
	const uint8_t	*sync_ahead;	/* a PSB+ there is the sync's too */
	const char	*unsup;		/* why unsupported, NULL otherwise */
	uint64_t	nmnt;		/* MNT packets passed over */
	int		synced, eos, in_sync, cache_full;
	/*
	 * fpt_next()'s hot path may run: fast_ready() held, or a block
	 * ended on a TNT bit at hand, and since then only TNT-8 and TIP
	 * packets were read, so that of its checks only hot_ready()'s
	 * need doing again.  Cleared whenever anything else runs.  Set
	 * only while no MODE.exec waits and the block cache is the last
	 * span's (fpti_hot_start()), with @htag the tag its entries
	 * have, and the table (@hslot, @hmask), which grows only on a miss:
	 * none changes before it is cleared.  When set, the width of the
	 * last span.
	 */
	uint64_t	hot;
	uint64_t	htag;
	const struct fpt_cache_entry *hslot;
	uint64_t	hmask;
	int		cur_isid;	/* libipt's mapped section */

	/* The packet layer. */
	uint64_t	last_ip;
	int		have_ip;
	uint64_t	tnt;		/* the next bit is bit ntnt - 1 */
	unsigned	ntnt;
	uint64_t	tsc;		/* libipt's time estimate */
	int		has_tsc;
	/*
	 * libipt's time for the flow (its last_time) is that of the last
	 * packet a query decoded: timing packets read ahead count from
	 * the packet the read-ahead stopped at on (@tm.run, the last runs
	 * of them read ahead).
	 */
	struct fpt_timing tm;

	/* The flow. */
	int		enabled;
	uint64_t	ip;
	uint8_t		mode;		/* 16, 32, 64; 0 unknown */
	int		mode_pending;	/* a MODE.exec waits for its TIP */
	uint8_t		next_mode;
	int		mode_has_tsc;	/* the time at the MODE.exec, its */
	uint64_t	mode_tsc;	/* event's in libipt */
	uint64_t	rs[FPT_RS_MAX];
	unsigned	rs_top, rs_n;

	/* The errata libipt works around for this CPU. */
	unsigned	bdm70:1, bdm64:1, skd007:1, skd010:1, skd022:1,
			skl014:1, apl11:1, apl12:1, skl168:1, skz84:1;

	/* An event waiting for the flow to reach its IP (a FUP's). */
	int		async;
	/*
	 * A PIP or VMCS while tracing binds to an instruction (@bind: 1
	 * PIP, 2 VMCS); that instruction is then passed only after the
	 * events bound to it (@post, libipt's postponed instruction).
	 */
	unsigned	bind, post, post_binds, post_bound;
	uint64_t	post_ip, post_target;
	uint8_t		post_kind, post_len;
	struct fpt_event async_ev;
	struct fpt_event more[FPT_MORE_MAX];	/* ... and those after it */
	unsigned	nmore;

	/* MWAIT, EXSTOP, PTWRITE waiting for the FUP that gives their IP. */
	struct fpt_event fupq[FPT_MORE_MAX + 1];
	unsigned	nfupq;

	struct fpt_event evq[FPT_EVQ_MAX];
	unsigned	evq_head, evq_n;

	/* The last spans of code the map callback gave. */
	struct fpt_span	span[FPT_SPANS];
	unsigned	span_next;
	struct fpt_span	last;		/* the span the last lookup hit */

	/* The last packet parsed, at pk_pos. */
	struct fpt_pkt	pk;
	const uint8_t	*pk_pos;

	/* The code window the last read_code gave. */
	uint8_t		win[256];
	uint64_t	win_ip;
	size_t		win_len;
	int		win_isid;

	struct fpt_step	path[FPT_FILL_STEPS];
	struct fpt_icache *icache;	/* 2^FPT_ICACHE_BITS slots */

	/*
	 * The exits memoized, and where fpti_trail_error() is known to
	 * find nothing (fpti_exit()), while no TNT bit, FUP, MODE.exec or
	 * event waits.
	 */
	struct fpt_exit	exit[1u << FPT_EXIT_BITS];
	const uint8_t	*trail_ok[2];

	/*
	 * libipt's address space (its asid: the last PIP's CR3, the last
	 * VMCS base; FPT_NO_ASID after a sync): a new one unmaps its
	 * section (cur_isid), and with it, unless cfg.keep_cache, the
	 * block cache.
	 */
	uint64_t	asid_cr3, asid_vmcs;
	/*
	 * A PSB+'s status update that libipt processes but does not hand
	 * over, as the fetch of the next one fails (fpt_sync_forward(),
	 * and fpti_async_reached() for one read while tracing): its asid
	 * takes effect with the error item, after the updates handed over
	 * before it.
	 */
	struct fpt_event quiet_ev;
	int		have_quiet;
};

/* The block cache's table (fpt_cache.c), open for its inline lookup. */
struct fpt_cache {
	struct fpt_cache_entry *slot;
	uint64_t	mask;
	size_t		n;
	uint32_t	gen;		/* entries of another one are stale */
};

/*
 * Where the probe for a key starts in a table of @mask + 1 slots: the
 * address's low bits, which the hot path has at once (a hash on the
 * critical path of every block costs more than the rare collisions of
 * code 2^n bytes apart; isid and mode seldom differ at one address).
 */
static inline uint64_t
fpti_cache_slot(uint64_t mask, uint64_t ip, int isid, uint8_t mode)
{
	(void)isid;
	(void)mode;
	return (ip & mask);
}

/* The entry for a key at its first probe, or NULL. */
static inline const struct fpt_cache_entry *
fpti_cache_first(const struct fpt_cache *c, uint64_t ip, int isid,
    uint8_t mode)
{
	const struct fpt_cache_entry *e;

	e = &c->slot[fpti_cache_slot(c->mask, ip, isid, mode)];
	if (e->ip == ip && e->tag == fpt_cache_tag(isid, mode, c->gen))
		return (e);
	return (NULL);
}

/*
 * fpt_cache_lookup(), its first probe inline: most lookups hit there.
 */
static inline const struct fpt_cache_entry *
fpti_cache_find(const struct fpt_cache *c, uint64_t ip, int isid,
    uint8_t mode)
{
	const struct fpt_cache_entry *e = fpti_cache_first(c, ip, isid, mode);

	return (e != NULL ? e : fpt_cache_lookup(c, ip, isid, mode));
}

/*
 * The slot of the run from @ip with the TNT state @ts (fpti_run_key()):
 * the low bits of both, so that the runs of nearby code are in nearby
 * slots (a multiplicative hash spread them: more of run_start()'s time
 * in perf, and 31 K runs made again).  The TNT state, 9 bits, shifted
 * by 5 needs FPT_RUN_BITS >= 14: at 13 its top bit was lost and g256
 * made 72 K of 1.8 M runs again, at 14 28 K.
 */
static inline struct fpt_run *
fpti_run_slot(const struct fpt *d, uint64_t ip, uint16_t ts)
{
	return (&d->runs[(ip ^ ((uint64_t)ts << 5)) &
	    ((1u << FPT_RUN_BITS) - 1)]);
}

/*
 * The TNT state of a run from the next bits at hand: (1 << n) | the next
 * n bits, n = d->ntnt but at most FPT_RUN_MAX; 0 when none is at hand.
 */
static inline uint16_t
fpti_run_key(const struct fpt *d)
{
	unsigned n = d->ntnt < FPT_RUN_MAX ? d->ntnt : FPT_RUN_MAX;

	return ((uint16_t)((1u << n) |
	    ((d->tnt >> (d->ntnt - n)) & ((1u << n) - 1))));
}

const struct fpt_run *fpti_run_make(struct fpt *, struct fpt_run *,
		    uint16_t);

/*
 * The run of hot blocks from d->ip with the next bits at hand (d->ntnt
 * > 0, d->hot set): found, or made over its slot (fpti_run_make()).  A
 * run a cache miss cut short is made again: the miss is filled by now,
 * most likely.
 */
static inline const struct fpt_run *
fpti_run(struct fpt *d)
{
	uint16_t ts = fpti_run_key(d);
	struct fpt_run *r = fpti_run_slot(d, d->ip, ts);

	if (r->ip == d->ip && r->tstate == ts && r->tag == d->htag)
		return (r);
	return (fpti_run_make(d, r, ts));
}

void		fpti_run_undo(struct fpt *);
void		fpti_step_entry(struct fpt *, const struct fpt_block *,
		    const struct fpt_step *, uint8_t, int);
void		fpti_trampoline(struct fpt *, const struct fpt_block *,
		    const struct fpt_step *, uint64_t);
int		fpti_link_entry(struct fpt *, const struct fpt_block *,
		    const struct fpt_step *, uint64_t);
/* fpt_insn.c */
int		fpti_decode_at(struct fpt *, uint64_t, struct hwtr_x86_insn *,
		    int *);
unsigned	fpti_binds(struct fpt *, const struct hwtr_x86_insn *);
int		fpti_writes_cr3(struct fpt *, uint64_t);
int		fpti_filter_on(const struct fpt *, uint64_t);
void		fpti_set_errata(struct fpt *);

/* A TIP with a 16-bit IP update: its header. */
#define FPT_TIP16	(FPT_IPC_UPD16 << 5 | 0x0d)

/*
 * Whether a TNT-8 of one bit followed by a packet whose header is the
 * index is taken at once by the hot path (fpt_dec.c's next_hot(),
 * fpt_walk()): a TNT-8, a TIP, a TIP.PGD or a TIP.PGE next (fpt_cache.c).
 */
extern const uint8_t fpti_tnt_last[256];

/* Push a return address on the return stack, the oldest lost when full. */
static inline void
fpti_rs_push(struct fpt *d, uint64_t ret)
{
	d->rs_top = (d->rs_top + 1) % FPT_RS_MAX;
	d->rs[d->rs_top] = ret;
	if (d->rs_n < FPT_RS_MAX)
		d->rs_n++;
}

/* Whether @b is a TNT-8 packet's header. */
static inline int
fpti_is_tnt8(uint8_t b)
{
	return ((b & 1) == 0 && b > 2);
}

/*
 * Whether the long TNT at @p (before @end) is whole and has bits: 1 with
 * them in @tnt (the next one at bit *@n - 1) and *@n.
 */
static inline int
fpti_long_tnt(const uint8_t *p, const uint8_t *end, uint64_t *tnt,
    unsigned *n)
{
	uint64_t v;

	if (end - p < 8 || p[0] != 0x02 || p[1] != 0xa3)
		return (0);
	/* One expression, which the compiler makes a load or two. */
	v = (uint64_t)p[2] | (uint64_t)p[3] << 8 | (uint64_t)p[4] << 16 |
	    (uint64_t)p[5] << 24 | (uint64_t)p[6] << 32 |
	    (uint64_t)p[7] << 40;
	if (v <= 1)
		return (0);
	*n = 63u - (unsigned)__builtin_clzll(v);
	*tnt = v & ((1ull << *n) - 1);
	return (1);
}

/*
 * Whether a TNT-8, a TIP or a good long TNT is at @p: the packets after
 * which the packet layer reads nothing ahead and finds no event
 * (fpti_fetch_event(), tnt_read_ahead()).
 */
static inline int
fpti_tnt_or_tip(const uint8_t *p, const uint8_t *end)
{
	uint64_t tnt;
	unsigned n;

	return (p < end && (fpti_is_tnt8(*p) || (*p & 0x1f) == 0x0d ||
	    fpti_long_tnt(p, end, &tnt, &n)));
}

/*
 * @it, the block from d->ip to @e's last instruction, @ninsn long and
 * ending as @end; the flow goes on at @to.  @runs: its runs field
 * (struct fpt_item), 0 only where no run's rest and no TNT bit is left.
 */
static inline void
fpti_block_out(struct fpt *d, struct fpt_item *it,
    const struct fpt_cache_entry *e, unsigned ninsn, uint8_t end, int isid,
    uint64_t to, int runs)
{
	struct fpt_block *b = &it->block;

	it->kind = FPT_ITEM_BLOCK;
	it->runs = (uint8_t)runs;
	b->ip = d->ip;
	b->end_ip = fpt_cache_dip(e);
	b->ninsn = ninsn;
	b->mode = d->mode;
	b->end = end;
	b->isid = isid;
	d->ip = to;
}

/*
 * Set d->hot where the hot path may run, with what it takes for granted
 * until it is cleared (struct fpt): no MODE.exec waiting for its TIP, the
 * block cache the last span's, and d->htag.  It is the span's width,
 * never 0 (fpt_dec.c's code_at()), so that one compare checks it and
 * the span.
 */
static inline int
fpti_hot_start(struct fpt *d)
{
	d->htag = fpt_cache_tag(d->last.isid, d->mode, d->cache->gen);
	d->hslot = d->cache->slot;
	d->hmask = d->cache->mask;
	d->hot = !d->mode_pending &&
	    (d->cfg.keep_cache || d->last.isid == d->cur_isid) ?
	    d->last.hi - d->last.lo : 0;
	return (d->hot != 0);
}

/*
 * The entry for @ip: unless @full, only at its first probe, its key
 * compared as one tag (d->hot's), without a call.
 */
static inline __attribute__((always_inline)) const struct fpt_cache_entry *
fpti_hot_find(const struct fpt *d, uint64_t ip, int full)
{
	const struct fpt_cache_entry *e;

	if (full)
		return (fpti_cache_find(d->cache, ip, d->last.isid, d->mode));
	e = &d->hslot[ip & d->hmask];
	return (e->ip == ip && e->tag == d->htag ? e : NULL);
}

/*
 * The TIP at d->pos parsed in fpt_dec.c's hot path: 1 with @to when it
 * has an IP and fits, 0 to leave it to the packet parser.
 */
static inline int
fpti_tip_fast(struct fpt *d, uint64_t *to)
{
	const uint8_t *p = d->pos;
	ptrdiff_t left = d->cfg.end - p;
	uint64_t v, m;
	unsigned n;

	/*
	 * Each as one expression, which the compiler makes a load or two;
	 * a 16-bit update, the commonest, tested first.
	 */
	if (__builtin_expect(p[0] >> 5 == FPT_IPC_UPD16, 1) && left >= 3) {
		v = (uint64_t)p[1] | (uint64_t)p[2] << 8;
		v = (d->last_ip & ~0xffffull) | v;
		d->last_ip = v;
		d->have_ip = 1;
		d->pos = p + 3;
		*to = v;
		return (1);
	}
	switch (p[0] >> 5) {
	case FPT_IPC_UPD16:
		if (left < 3)
			return (0);
		n = 2;
		m = 0xffffull;
		v = (uint64_t)p[1] | (uint64_t)p[2] << 8;
		break;
	case FPT_IPC_UPD32:
		if (left < 5)
			return (0);
		n = 4;
		m = 0xffffffffull;
		v = (uint64_t)p[1] | (uint64_t)p[2] << 8 |
		    (uint64_t)p[3] << 16 | (uint64_t)p[4] << 24;
		break;
	case FPT_IPC_UPD48:
		if (left < 7)
			return (0);
		n = 6;
		m = 0xffffffffffffull;
		v = (uint64_t)p[1] | (uint64_t)p[2] << 8 |
		    (uint64_t)p[3] << 16 | (uint64_t)p[4] << 24 |
		    (uint64_t)p[5] << 32 | (uint64_t)p[6] << 40;
		break;
	default:
		return (0);
	}
	v = (d->last_ip & ~m) | v;
	d->last_ip = v;
	d->have_ip = 1;
	d->pos = p + 1 + n;
	*to = v;
	return (1);
}

/* fpt_time.c: libipt's time estimate. */
void	fpti_time_reset(struct fpt *);
void	fpti_time_ovf(struct fpt *);
void	fpti_time_psb(struct fpt *);
int	fpti_time_packet(struct fpt *, const uint8_t *, const struct fpt_pkt *,
	    int);
int	fpti_time_ahead(struct fpt *, const struct fpt_pkt *);
int	fpti_time_skip(struct fpt *, const uint8_t *, const struct fpt_pkt *);
/* Whether the CYC @pkt at @p is one libipt takes for SKD007's. */
int	fpti_cyc_skd007(const struct fpt *, const uint8_t *,
	    const struct fpt_pkt *);

/*
 * A packet of @size at d->pos passed in a read-ahead: the run of timing
 * packets being read, if any, stops after it.
 */
static inline void
fpti_time_pass(struct fpt *d, unsigned size)
{
	struct fpt_trun *r;

	if (d->tm.n == 0)
		return;
	r = &d->tm.run[(d->tm.head + d->tm.n - 1) & (FPT_TRUN_MAX - 1)];
	if (r->stop == d->pos)
		r->stop += size;
}

/* fpt_query.c: the trace queries. */
int	fpti_query_cond(struct fpt *, int *);
int	fpti_query_indirect(struct fpt *, uint64_t *);

/* fpt_exit.c: a syscall's exit, the short way. */
int	fpti_exit(struct fpt *, struct fpt_item *);
int	fpti_enter(struct fpt *, struct fpt_item *);
void	fpti_exit_put(struct fpt *, const struct fpt_block *);

/*
 * Whether fpti_trail_error() at d->pos is known to find nothing, the
 * trail there read already (fpti_exit()).
 */
static inline int
fpti_trail_known(const struct fpt *d)
{
	return ((d->pos == d->trail_ok[0] || d->pos == d->trail_ok[1]) &&
	    d->ntnt == 0 && !d->async && d->nfupq == 0 && !d->mode_pending);
}

/* fpt_evq.c: the packet at the position, the IP, the event queue. */
int	fpti_peek(struct fpt *, struct fpt_pkt *);
int	fpti_ip_update(struct fpt *, const struct fpt_pkt *, uint64_t *);
void	fpti_ev_init(struct fpt *, struct fpt_event *, int, const uint8_t *);
void	fpti_ev_push(struct fpt *, const struct fpt_event *);
int	fpti_unsupported(struct fpt *, const char *);

/* What a packet's header is to libipt's read-ahead (its pt_df_fetch). */
enum { FPT_HDR_STATUS, FPT_HDR_TNT, FPT_HDR_TIP, FPT_HDR_EVENT };

/*
 * Whether the packet at @p is a FUP by its header: an event packet to
 * libipt's read-ahead while an event waits for one (pt_qry_will_event(),
 * evb_fup), which stops there without decoding it, a bad IP size too.
 */
static inline int
fpti_is_fup_hdr(const uint8_t *p, const uint8_t *end)
{
	return (p < end && (p[0] & 0x1f) == 0x1d);
}

/* The reader's state a dry run changes, to put it back after. */
struct fpt_mark {
	const uint8_t	*pos, *pk_pos;
	struct fpt_pkt	pk;
	uint64_t	tsc, nmnt;
	int		has_tsc;
	struct fpt_timing tm;
};

/* fpt_ev.c: the packet layer's read-ahead. */
int	fpti_read_ahead(struct fpt *);
int	fpti_cut_query(const struct fpt *, int);
int	fpti_check_ahead(struct fpt *);
void	fpti_error_at(struct fpt *);
void	fpti_error_here(struct fpt *, int);
int	fpti_cut_ends(const struct fpt *, const uint8_t *);
int	fpti_fup_then_end(struct fpt *, const struct fpt_pkt *);
int	fpti_hdr_class(const uint8_t *, const uint8_t *);
int	fpti_fup_consumed(const struct fpt *);
int	fpti_fups_after(const struct fpt *, const struct fpt_pkt *, int);
int	fpti_ovf_check(struct fpt *);
void	fpti_mark_save(const struct fpt *, struct fpt_mark *);
void	fpti_mark_back(struct fpt *, const struct fpt_mark *);

/* fpt_trail.c: the trailing event's dry run (above fpt_ev.c). */
int	fpti_trail_error(struct fpt *);

/* fpt_ev.c: events. */
int	fpti_fetch_event(struct fpt *);
int	fpti_async_reached(struct fpt *);
int	fpti_power_event(struct fpt *, const struct fpt_pkt *);
int	fpti_fup_bound(struct fpt *, const struct fpt_pkt *);
int	fpti_overflow(struct fpt *);

/* fpt_psb.c: PSB+ (below fpt_ev.c, which reads over them). */
int	fpti_read_psb_plus(struct fpt *);
int	fpti_psb_pass(struct fpt *, const struct fpt_pkt *);
int	fpti_psb_plus_ok(struct fpt *, const uint8_t *);
int	fpti_psb_events(struct fpt *, const uint8_t **);

#endif /* !HWTR_FPT_INT_H */
