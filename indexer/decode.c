/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Decoding one segment of an Intel PT stream with libipt's block decoder:
 * the segment decoder ix_segdec_libipt (segdec.h), writing through
 * segout.h.
 *
 * A worker owns everything it writes (struct ix_seg_out) and reads only
 * shared, read-only state (the segment's bytes, the mapping timeline, the
 * images), with a section cache of its own, so segments decode on any
 * number of threads and give the same result.  Block ids here are local
 * to the segment; what the decoder does is written as a list of
 * operations (IX_OP_*) that the stitcher (stitch.c) replays in stream
 * order, because the position, the call stack and the branch into the
 * segment's first block depend on the segments before it.
 *
 * A segment starts at a PSB: libipt starts there with the state the PSB+
 * gives (IP, mode, time; return compression does not cross a PSB), the
 * state a decoder that came from the start of the stream has after that
 * PSB+.  A segment's decoder is given bytes beyond its end and stops at
 * the status updates of the PSB+ that starts the next segment (every PSB+
 * gives at least one: MODE.Exec), where the next segment's decoder
 * starts producing anything itself.
 *
 * Decode faults are data: an error becomes an event with its stream offset
 * and decoding resumes at the next PSB, as ptxed does.  The memory image
 * follows the process over time: the sections mapped at the decoder's
 * current time are the ones libipt sees.
 */

#include <assert.h>
#include <sys/mman.h>

#include <errno.h>
#include <intel-pt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include "hwtr_common.h"
#include "hwtr_ix.h"
#include "hwtr_stream.h"
#include "fpt.h"
#include "segdec.h"
#include "segout.h"

#include "decode_int.h"


/* Shorthands for this decoder's writer (segout.h). */
static inline int
fail(struct dec *d, int rc, const char *what, const char *detail)
{
	return (ix_segw_fail(&d->w, rc, what, detail));
}

static inline int
op(struct dec *d, enum ix_op o)
{
	return (ix_segw_op(&d->w, o));
}

static inline int
op1(struct dec *d, enum ix_op o, uint64_t a)
{
	return (ix_segw_op1(&d->w, o, a));
}

static inline int
add_event_at(struct dec *d, const char *kind, int has_ip, uint64_t ip,
    const char *detail, int has_off, uint64_t off)
{
	return (ix_segw_event_at(&d->w, kind, has_ip, ip, detail, has_off,
	    off));
}














/* An event where the decoder is. */
static int
add_event(struct dec *d, const char *kind, int has_ip, uint64_t ip,
    const char *detail)
{
	uint64_t off;

	if (ix_src_offset(d, &off) >= 0)
		return (add_event_at(d, kind, has_ip, ip, detail, 1,
		    d->base + off));
	return (add_event_at(d, kind, has_ip, ip, detail, 0, 0));
}

/*
 * Every TSC the decoder learns from an event goes through here, so that
 * the stream's first and last time cover all of them (a step capture's
 * times all arrive with events).
 */
static int
note_tsc(struct dec *d, uint64_t tsc)
{
	d->have_tsc = 1;
	d->tsc = tsc;
	return (op1(d, IX_OP_TSC, tsc));
}

static int
add_block(struct dec *d, const struct pt_block *b)
{
	struct ix_lblock *lb;

	lb = ix_dec_lblock_find(d, b->ip, b->end_ip, b->ninsn, b->isid,
	    (uint8_t)ix_dec_mode_bits(b->mode));
	if (lb == NULL && (lb = ix_dec_lblock_new(d, b)) == NULL)
		return (d->w.out->rc < 0 ? d->w.out->rc : -HWTR_E_NOMEM);
	return (ix_dec_lblock_ran(d, lb));
}

/* The events table's kinds by libipt's event types ("enabled": below). */
static const char *const event_kinds[] = {
	[ptev_disabled] = "disabled",
	[ptev_async_disabled] = "async-disabled",
	[ptev_async_branch] = "async-branch",
	[ptev_paging] = "paging",
	[ptev_async_paging] = "paging",
	[ptev_overflow] = "overflow",
	[ptev_exec_mode] = "exec-mode",
	[ptev_tsx] = "tsx",
	[ptev_stop] = "stop",
	[ptev_vmcs] = "vmcs",
	[ptev_async_vmcs] = "vmcs",
	[ptev_exstop] = "exstop",
	[ptev_mwait] = "mwait",
	[ptev_pwre] = "pwre",
	[ptev_pwrx] = "pwrx",
	[ptev_ptwrite] = "ptwrite",
	[ptev_tick] = "tick",
	[ptev_cbr] = "cbr",
	[ptev_mnt] = "mnt",
};

static const char *
event_kind(const struct pt_event *ev)
{
	size_t t = (size_t)ev->type;

	if (ev->type == ptev_enabled)
		return (ev->variant.enabled.resumed ? "resumed" : "enabled");
	if (t < sizeof(event_kinds) / sizeof(event_kinds[0]) &&
	    event_kinds[t] != NULL)
		return (event_kinds[t]);
	return ("unknown");
}

/* The decoder has read past the start of the next segment. */
static int
past_limit(struct dec *d)
{
	uint64_t off;

	return (d->has_limit && ix_src_offset(d, &off) >= 0 &&
	    off > d->limit);
}

/* Returns the status, < 0 on errors, and 1 << 30 to stop at the limit. */
#define IX_STOP	(1 << 30)

static int
drain_events(struct dec *d, int status)
{
	struct pt_event ev;
	char detail[64];
	const char *kind, *det;
	int has_ip, resume, gap;
	uint64_t ip;
	int rc;

	while (status & pts_event_pending) {
		status = ix_src_event(d, &ev);
		if (status < 0)
			return (status);
		/* The trace said something: a walk starts again. */
		d->loop.armed = 0;
		/*
		 * The status updates of the PSB+ that starts the next
		 * segment: what follows is that segment's.  Events read
		 * before them are this segment's, even when libipt read
		 * ahead past the PSB to deliver them.
		 */
		if (ev.status_update && !d->own_psb && (d->fp != NULL ?
		    d->has_limit && d->evoff >= d->limit :
		    past_limit(d)))
			return (IX_STOP);
		if (ev.has_tsc && (rc = note_tsc(d, ev.tsc)) < 0)
			return (rc);
		if (ev.status_update)
			continue;
		kind = event_kind(&ev);
		has_ip = 0;
		ip = 0;
		det = NULL;
		rc = 0;
		resume = 0;
		gap = 0;
		switch (ev.type) {
		case ptev_enabled:
			has_ip = 1;
			ip = ev.variant.enabled.ip;
			/*
			 * libipt says "resumed" when tracing resumes where
			 * it was disabled; a disable in an earlier segment
			 * is the stitcher's to compare.
			 */
			if (!d->seen_disable)
				resume = 1;
			break;
		case ptev_disabled:
			has_ip = !ev.ip_suppressed;
			ip = ev.variant.disabled.ip;
			gap = 1;
			break;
		case ptev_async_disabled:
			has_ip = 1;
			ip = ev.variant.async_disabled.at;
			gap = 1;
			break;
		case ptev_async_branch:
			has_ip = 1;
			ip = ev.variant.async_branch.from;
			rc = op(d, IX_OP_ASYNC);
			break;
		case ptev_overflow:
			has_ip = !ev.ip_suppressed;
			ip = ev.variant.overflow.ip;
			gap = 1;
			break;
		case ptev_exec_mode:
			has_ip = !ev.ip_suppressed;
			ip = ev.variant.exec_mode.ip;
			det = ev.variant.exec_mode.mode == ptem_16bit ?
			    "16-bit" : ev.variant.exec_mode.mode ==
			    ptem_32bit ? "32-bit" : "64-bit";
			break;
		case ptev_paging:
			snprintf(detail, sizeof(detail), "cr3 %#llx",
			    (unsigned long long)ev.variant.paging.cr3);
			det = detail;
			break;
		case ptev_ptwrite:
			snprintf(detail, sizeof(detail), "%#llx",
			    (unsigned long long)ev.variant.ptwrite.payload);
			det = detail;
			break;
		case ptev_tick:
		case ptev_cbr:
			/* Frequent and not interesting by themselves. */
			continue;
		default:
			break;
		}
		/* Tracing stopped (disabled or overflow): the flow has a gap. */
		if (gap) {
			rc = op(d, IX_OP_GAP);
			d->seen_disable = 1;
		}
		if (rc < 0 || (rc = add_event(d, kind, has_ip, ip, det)) < 0)
			return (rc);
		if (resume)
			/* The flags of the event just written: 8, decide. */
			d->w.out->ops.p[d->w.flags_at] |= 8;
	}
	return (status);
}

static void
progress(struct dec *d)
{
	uint64_t off;

	if (d->w.in->progress != NULL && ix_src_offset(d, &off) >= 0)
		__atomic_store_n(d->w.in->progress, off, __ATOMIC_RELAXED);
}

int
ix_pt_config(struct pt_config *cfg, const struct hwtr_stream_desc *sd,
    const struct hwtr_cpu *cpu, const uint8_t *buf, size_t len)
{
	unsigned i;
	int rc = 0;

	cfg->begin = (uint8_t *)(uintptr_t)buf;
	cfg->end = (uint8_t *)(uintptr_t)buf + len;
	if (cpu != NULL && cpu->vendor == HWTR_CPU_INTEL) {
		cfg->cpu.vendor = pcv_intel;
		cfg->cpu.family = cpu->family;
		cfg->cpu.model = cpu->model;
		cfg->cpu.stepping = cpu->stepping;
		rc = pt_cpu_errata(&cfg->errata, &cfg->cpu);
	}
	cfg->cpuid_0x15_eax = sd->pt.cpuid_15_eax;
	cfg->cpuid_0x15_ebx = sd->pt.cpuid_15_ebx;
	cfg->nom_freq = sd->pt.nom_freq;
	cfg->mtc_freq = sd->pt.mtc_freq;
	for (i = 0; i < sd->pt.nfilters && i < 4; i++) {
		cfg->addr_filter.config.addr_cfg |=
		    (uint64_t)(sd->pt.filter[i].cfg & 0xf) << (4 * i);
	}
	cfg->addr_filter.addr0_a = sd->pt.filter[0].a;
	cfg->addr_filter.addr0_b = sd->pt.filter[0].b;
	cfg->addr_filter.addr1_a = sd->pt.filter[1].a;
	cfg->addr_filter.addr1_b = sd->pt.filter[1].b;
	cfg->addr_filter.addr2_a = sd->pt.filter[2].a;
	cfg->addr_filter.addr2_b = sd->pt.filter[2].b;
	cfg->addr_filter.addr3_a = sd->pt.filter[3].a;
	cfg->addr_filter.addr3_b = sd->pt.filter[3].b;
	return (rc);
}

/*
 * The decode errors a segment has before its first PSB: the stream's
 * configuration refused (@cfg_rc < 0; said by the stream's first segment
 * only), a segment cut without a PSB.
 */
static int
start_errors(struct dec *d, int cfg_rc)
{
	char msg[96];
	int rc;

	if (cfg_rc < 0 && d->w.in->first_of_stream) {
		snprintf(msg, sizeof(msg), "config error: %s",
		    pt_errstr(pt_errcode(cfg_rc)));
		if ((rc = op(d, IX_OP_ERROR)) < 0 ||
		    (rc = add_event_at(d, "decode-error", 0, 0, msg, 1,
		    d->base)) < 0)
			return (rc);
	}
	if (d->w.in->blind_start) {
		snprintf(msg, sizeof(msg), "cut without a PSB (a segment "
		    "holds %u MiB at most): not decoded up to the next PSB",
		    HWTR_SV_SEG_MAX >> 20);
		if ((rc = op(d, IX_OP_ERROR)) < 0 ||
		    (rc = op(d, IX_OP_GAP)) < 0 ||
		    (rc = add_event_at(d, "decode-error", 0, 0, msg, 1,
		    d->base)) < 0)
			return (rc);
	}
	return (0);
}

/*
 * Whether the decoder makes no progress: besides ix_dec_loop_check()'s
 * loops, a loop of direct jumps across images gives blocks of a few
 * instructions (a block ends where the code is another image's); 65,536
 * blocks without reading a byte of trace (IX_COUNT_MAX checks, one each
 * 4096 blocks) is a decode error too.  Real code does not come near: a
 * block that reads no trace ends where the code is another image's, and
 * what goes there by a direct call comes back by a return, which reads
 * trace.
 */
struct stuck {
	uint32_t	n;		/* blocks so far */
	uint64_t	off;		/* the trace offset last seen */
	int		count;		/* checks at that offset */
	int		said;		/* the error is this */
	uint64_t	still_off;	/* full blocks: their trace offset */
	uint64_t	still;		/* and their instructions there */
	uint64_t	still_max;	/* the most there (IX_STILL_MAX ...) */
	int		count_max;	/* the most checks at one offset */
	int		slow;		/* times either rule ended a sync */
};

/*
 * A segment in which IX_SLOW_MAX syncs ended so is not decoded further:
 * its image is not the code that ran, and a hostile trace could sync to
 * it at every PSB+.
 */
#define IX_SLOW_MAX	32

/* Checks at one trace offset, one each 4096 blocks: 65,536 blocks. */
#define IX_COUNT_MAX	16

/*
 * Full blocks' instructions at one trace offset, at most: 16 blocks of
 * IX_BLK_FULL.  A loop that reads no trace, which ix_dec_loop_check()
 * does not see (a hostile image's code, on which libipt's block cache
 * gives full blocks its walk does not agree with), would otherwise run
 * to the blocks above: hours of 65,535-instruction blocks.  No real code
 * runs a million instructions in one function without a branch that
 * reads trace (4 MiB of code or more without a conditional branch or a
 * return).  2^26 until 2026-12-02: 0.7 s a sync, which a hostile archive
 * paid per thread (1,000 threads of a 257-byte trace: 14 minutes).
 */
#define IX_STILL_MAX	((uint64_t)1 << 20)

/*
 * ... once.  A segment that had such a loop, or one of the blocks above,
 * has an image that makes them, and a hostile trace can sync to it again
 * and again (a PSB+ of a few bytes each time: a 1 MiB segment of them
 * took hours with the limits of before).  After the first, two full
 * blocks at one offset are enough, or 16,384 blocks: no real trace comes
 * there.
 */
#define IX_STILL_AGAIN	((uint64_t)2 * IX_BLK_FULL_MIN)
#define IX_COUNT_AGAIN	4

static void
slow_again(struct stuck *sk)
{
	sk->still_max = IX_STILL_AGAIN;
	sk->count_max = IX_COUNT_AGAIN;
	sk->slow++;
}

/* Count @ninsn of a full block; 1 when sk->still_max read no trace. */
static int
still_long(struct dec *d, struct stuck *sk, unsigned ninsn)
{
	uint64_t off = 0;

	(void)ix_src_offset(d, &off);
	if (off != sk->still_off) {
		sk->still_off = off;
		sk->still = 0;
	}
	sk->still += ninsn;
	if (sk->still < sk->still_max)
		return (0);
	slow_again(sk);
	return (1);
}

/*
 * From a sync point: its events, then blocks and their events, until an
 * error, the end or the next segment (IX_STOP); that status in *@statusp.
 * Returns 0, or < 0 when the segment fails (out of memory, a signal).
 */
static int
decode_blocks(struct dec *d, int *statusp, struct pt_block *b,
    struct stuck *sk)
{
	int status = *statusp, rc;
	uint64_t off;

	/*
	 * The status updates right after a sync are those of the PSB+
	 * synchronized to, even when libipt read ahead past the next
	 * segment's start (PSBs a few bytes apart).
	 */
	d->own_psb = 1;
	for (;;) {
		/* The call only when there is an event: most blocks have none. */
		if (status & pts_event_pending)
			status = drain_events(d, status);
		d->own_psb = 0;
		if (status < 0 || status == IX_STOP)
			break;
		if ((rc = ix_dec_update_time(d)) < 0)
			return (rc);
		if (status & pts_eos) {
			status = -pte_eos;
			break;
		}
		if (d->fp != NULL) {
			/* fpt: its blocks up to an event (fpt_ops.c). */
			if ((rc = ix_fast_blocks(d, &status, &sk->n)) < 0)
				return (rc);
			if (d->loop.stuck) {
				/* ix_fast_blocks() stopped at the loop. */
				sk->said = 1;
				status = -pte_internal;
				break;
			}
		} else {
			b->ninsn = 0;
			status = ix_src_next(d, b);
			if (b->ninsn > 0 && (rc = add_block(d, b)) < 0)
				return (rc);
			sk->n++;
			if (b->ninsn >= IX_BLK_FULL_MIN && (still_long(d, sk,
			    b->ninsn) || ix_dec_loop_check(d, b->ip, b->end_ip,
			    b->ninsn, b->isid, ix_dec_mode_bits(b->mode),
			    sk->n))) {
				status = -pte_internal;
				sk->said = 1;
				break;
			}
		}
		if (status < 0)
			break;
		/* Cut without a PSB: the next segment's bytes. */
		if (d->w.in->blind_end && past_limit(d)) {
			status = IX_STOP;
			break;
		}
		if ((sk->n & 4095) != 0)
			continue;
		progress(d);
		if (d->w.in->cancel != NULL && *d->w.in->cancel)
			return (fail(d, -HWTR_E_INTR, "interrupted", NULL));
		off = 0;
		(void)ix_src_offset(d, &off);
		if (off != sk->off) {
			sk->off = off;
			sk->count = 0;
		} else if (++sk->count >= sk->count_max) {
			status = -pte_internal;
			sk->said = 1;
			slow_again(sk);
			break;
		}
	}
	*statusp = status;
	return (0);
}

/*
 * Decode a buffer of the stream, as ptxed's block loop does, up to the
 * next segment's PSB+ when there is a limit.
 */
static int
decode_buf(struct dec *d, const uint8_t *buf, size_t len)
{
	struct pt_config cfg;
	struct pt_block b;
	struct stuck sk = { 0, UINT64_MAX, 0, 0, UINT64_MAX, 0,
	    IX_STILL_MAX, IX_COUNT_MAX, 0 };
	uint64_t sync = 0, newsync, erroff = 0, end;
	int status, rc, in_error = 0, first = 1;

	end = d->has_limit && d->limit < len ? d->limit : len;
	pt_config_init(&cfg);
	rc = ix_pt_config(&cfg, d->w.in->desc, d->w.in->cpu, buf, len);
	if ((rc = start_errors(d, rc)) < 0)
		return (rc);
	if (d->fast) {
		if ((rc = ix_fast_new(d, buf, len)) < 0)
			return (rc);
	} else {
		d->blk = pt_blk_alloc_decoder(&cfg);
		if (d->blk == NULL)
			return (fail(d, -HWTR_E_NOMEM,
			    "cannot allocate a decoder", NULL));
		pt_blk_set_image(d->blk, d->img);
	}
	for (;;) {
		if (d->w.in->cancel != NULL && *d->w.in->cancel)
			return (fail(d, -HWTR_E_INTR, "interrupted", NULL));
		memset(&b, 0, sizeof(b));
		status = ix_src_sync_forward(d);
		/*
		 * The bytes before the first PSB are not decoded: none when
		 * the segment starts at one, as all but a piece's first do;
		 * all of them when there is none.
		 */
		if (first) {
			first = 0;
			if (ix_src_sync_offset(d, &newsync) < 0 ||
			    newsync > end)
				newsync = end;
			if (newsync > 0 && (rc = op1(d, IX_OP_UNDECODED,
			    newsync)) < 0)
				return (rc);
		}
		if (status < 0) {
			if (status == -pte_eos) {
				if (in_error && end > erroff &&
				    (rc = op1(d, IX_OP_UNDECODED,
				    end - erroff)) < 0)
					return (rc);
				break;
			}
			/* Failing at the next segment's PSB: its error. */
			if (d->has_limit && ix_src_offset(d,
			    &newsync) >= 0 && newsync >= d->limit)
				break;
			if ((rc = op(d, IX_OP_ERROR)) < 0 ||
			    (rc = op(d, IX_OP_NOPREV)) < 0 ||
			    (rc = add_event(d, "decode-error", 0, 0,
			    pt_errstr(pt_errcode(status)))) < 0)
				return (rc);
			if (ix_src_offset(d, &newsync) < 0 ||
			    newsync <= sync)
				break;
			sync = newsync;
			continue;
		}
		if (ix_src_sync_offset(d, &newsync) >= 0 &&
		    d->has_limit && newsync >= d->limit) {
			/* Resynchronized at or past the next segment. */
			if (in_error && d->limit > erroff &&
			    (rc = op1(d, IX_OP_UNDECODED,
			    d->limit - erroff)) < 0)
				return (rc);
			break;
		}
		if (in_error && ix_src_sync_offset(d, &newsync) >= 0 &&
		    newsync > erroff && (rc = op1(d, IX_OP_UNDECODED,
		    newsync - erroff)) < 0)
			return (rc);
		if ((rc = decode_blocks(d, &status, &b, &sk)) < 0)
			return (rc);
		if (status == -pte_eos || status == IX_STOP)
			break;
		if (d->w.out->rc < 0)
			return (d->w.out->rc);
		if (status >= 0)
			status = -pte_internal;
		/* A decode error: record it and resume at the next PSB. */
		rc = op(d, IX_OP_ERROR);
		if (rc == 0)
			rc = op(d, IX_OP_GAP);
		if (rc == 0 && d->loop.stuck)
			/* Both decoders' last block: the same event. */
			rc = add_event(d, "decode-error", 1, d->loop.at,
			    "no progress: a loop that reads no trace");
		else if (rc == 0)
			rc = add_event(d, "decode-error", b.ninsn > 0 ||
			    b.ip != 0, b.ninsn > 0 ? b.end_ip : b.ip, sk.said ?
			    "no progress: a loop that reads no trace" :
			    pt_errstr(pt_errcode(status)));
		sk.said = 0;
		sk.count = 0;
		sk.still = 0;
		memset(&d->loop, 0, sizeof(d->loop));
		if (rc < 0)
			return (rc);
		if (ix_src_offset(d, &erroff) < 0)
			erroff = 0;
		in_error = 1;
		if (sk.slow >= IX_SLOW_MAX) {
			char why[96];

			snprintf(why, sizeof(why), "no progress at %d syncs: "
			    "the rest of the segment is not decoded",
			    IX_SLOW_MAX);
			if ((rc = add_event(d, "decode-error", 0, 0,
			    why)) < 0 ||
			    (end > erroff && (rc = op1(d, IX_OP_UNDECODED,
			    end - erroff)) < 0))
				return (rc);
			break;
		}
		if (ix_src_offset(d, &newsync) >= 0)
			sync = newsync;
	}
	progress(d);
	pt_blk_free_decoder(d->blk);
	d->blk = NULL;
	fpt_free(d->fp);
	d->fp = NULL;
	return (0);
}


/*
 * A segment whose decoding failed (no memory, libipt refusing its
 * image): one more decode error, and the bytes from where the decoder
 * was to the segment's end are not decoded, so that the totals never
 * say that everything was decoded when nothing was.
 */
static void
failed_bytes(struct dec *d)
{
	const struct ix_seg_in *in = d->w.in;
	uint64_t off = 0, end;
	int rc = d->w.out->rc;

	if (rc >= 0 || rc == -HWTR_E_INTR)
		return;
	end = in->has_limit && in->limit - in->base < in->len ?
	    in->limit - in->base : in->len;
	if (ix_src_offset(d, &off) < 0)
		off = 0;
	/* The writer keeps the first failure: only memory can fail these. */
	(void)op(d, IX_OP_ERROR);
	if (end > off)
		(void)op1(d, IX_OP_UNDECODED, end - off);
}

/* Frees what @d holds and clears it for the next segment. */
static void
dec_clear(struct dec *d)
{
	void *stk;

	if (d->blk != NULL)
		pt_blk_free_decoder(d->blk);
	fpt_free(d->fp);
	free(d->act);
	pt_image_free(d->img);
	ix_segw_free(&d->w);
	free(d->lb);
	free(d->ltab);
	free(d->runs);
	free(d->sp_lens);
	free(d->sp_code);
	stk = d->stk;
	memset(d, 0, sizeof(*d));
	d->stk = stk;
}

static int
pt_fmt_ok(enum hwtr_trace_format f)
{
	return (f == HWTR_TF_INTEL_PT);
}

static void *
pt_new(void)
{
	return (calloc(1, sizeof(struct dec)));
}

static void
pt_free(void *state)
{
	struct dec *d = state;

	if (d == NULL)
		return;
	dec_clear(d);
	if (d->stk != NULL)
		(void)munmap(d->stk, IX_DEC_STACK);
	free(d);
}

/* Decode @in into @out: with fpt when d->fast (it may bail). */
static void
seg_decode(struct dec *d, const struct ix_seg_in *in, struct ix_seg_out *out,
    int fast)
{
	char det[64];

	memset(out, 0, sizeof(*out));
	dec_clear(d);
	d->fast = fast;
	d->w.in = in;
	d->w.out = out;
	d->isc = in->iscache;
	if (ix_dec_set_image(d, 0, 0) < 0)
		goto done;
	d->base = in->base;
	if (in->lost_before) {
		/* Bytes before this piece were lost by the capture. */
		snprintf(det, sizeof(det), "%llu bytes",
		    (unsigned long long)in->lost_bytes);
		if (op(d, IX_OP_GAP) < 0 ||
		    add_event_at(d, "lost", 0, 0, det, 1, in->base) < 0)
			goto done;
	}
	d->has_limit = in->has_limit;
	d->limit = in->has_limit ? in->limit - in->base : 0;
	(void)decode_buf(d, in->buf, in->len);
done:
	failed_bytes(d);
}

/*
 * libipt's block decoder follows a loop of direct jumps by recursion,
 * a frame (about 200 bytes) per entry of its block cache, up to 65,535
 * of them in a block for a loop of one instruction (jmp .): 13 MiB, more
 * than a thread's 8 MiB.  Its decoding runs on a stack of this size of
 * the decoder's own (IX_DEC_STACK in decode_int.h: reserved, a page
 * taken when touched, a guard page under it), on the same thread: a
 * context switched to and back once per segment.  Not with
 * AddressSanitizer, which warns of any context switch: there the
 * thread's stack, as before.
 */
struct seg_call {
	struct dec	*d;
	const struct ix_seg_in *in;
	struct ix_seg_out *out;
};

/* makecontext() passes ints: @hi and @lo are a struct seg_call's address. */
static void
seg_ctx(unsigned hi, unsigned lo)
{
	struct seg_call *c = (struct seg_call *)(uintptr_t)
	    (((uint64_t)hi << 32) | lo);

	seg_decode(c->d, c->in, c->out, 0);
}

/* seg_decode() with libipt, on a stack that its recursion fits in. */
static void
seg_decode_ipt(struct dec *d, const struct ix_seg_in *in,
    struct ix_seg_out *out)
{
#if defined(__SANITIZE_ADDRESS__)
	seg_decode(d, in, out, 0);
#else
	struct seg_call c = { d, in, out };
	ucontext_t uc, back;
	uintptr_t a = (uintptr_t)&c;
	void *p;

	if (d->stk == NULL) {
		p = mmap(NULL, IX_DEC_STACK, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK,
		    -1, 0);
		if (p != MAP_FAILED && mprotect(p, 4096, PROT_NONE) < 0) {
			(void)munmap(p, IX_DEC_STACK);
			p = MAP_FAILED;
		}
		d->stk = p == MAP_FAILED ? NULL : p;
	}
	if (d->stk == NULL || getcontext(&uc) < 0) {
		/* No stack of its own: the thread's, as before. */
		seg_decode(d, in, out, 0);
		return;
	}
	uc.uc_stack.ss_sp = d->stk;
	uc.uc_stack.ss_size = IX_DEC_STACK;
	uc.uc_link = &back;
	makecontext(&uc, (void (*)(void))seg_ctx, 2,
	    (unsigned)((uint64_t)a >> 32), (unsigned)a);
	if (swapcontext(&back, &uc) < 0)
		seg_decode(d, in, out, 0);
#endif
}

static void
pt_decode(void *state, const struct ix_seg_in *in, struct ix_seg_out *out)
{
	struct dec *d = state;

	assert(d != NULL && in->desc->format == HWTR_TF_INTEL_PT);
	seg_decode_ipt(d, in, out);
	dec_clear(d);
}

/*
 * ix_segdec_fast: fpt, and libipt from the segment's start when fpt gave
 * up, the output saying so (the index's fallback statistics).
 */
static void
fast_decode(void *state, const struct ix_seg_in *in, struct ix_seg_out *out)
{
	struct dec *d = state;
	const char *why;
	int bail;

	assert(d != NULL && in->desc->format == HWTR_TF_INTEL_PT);
	seg_decode(d, in, out, 1);
	bail = d->bail;
	why = d->bail_why;
	if (bail != 0 && out->rc != -HWTR_E_INTR) {
		ix_seg_out_free(out);
		seg_decode_ipt(d, in, out);
		out->fallback = bail;
		out->fb_why = why;
		out->fb_bytes = in->has_limit && in->limit - in->base <
		    in->len ? in->limit - in->base : in->len;
	}
	dec_clear(d);
}

const struct ix_segdec_ops ix_segdec_libipt = {
	.name = "libipt",
	.fmt_ok = pt_fmt_ok,
	.new = pt_new,
	.decode = pt_decode,
	.free = pt_free,
};

const struct ix_segdec_ops ix_segdec_fast = {
	.name = "fast",
	.fmt_ok = pt_fmt_ok,
	.new = pt_new,
	.decode = fast_decode,
	.free = pt_free,
};
