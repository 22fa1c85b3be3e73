/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Decoding one segment of an Intel PT stream with libipt's block decoder
 * (or a whole CoreSight stream with OpenCSD).
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

#include <errno.h>
#include <intel-pt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwtr_common.h"
#include "hwtr_ix.h"

const char *const ix_class_names[] = {
	"other", "cond", "jump", "jump-indirect", "call", "call-indirect",
	"return", "syscall", "sysret", "far-jump", "unknown"
};

/*
 * A libipt block, as split into contiguous runs (split_block()): the
 * operations that say its runs ran, encoded once (IX_LB_INLINE bytes or
 * fewer in @inl, more at @first in dec.runs), so that a block seen again
 * costs a copy of a few bytes.
 */
#define IX_LB_INLINE	8
struct ix_lblock {
	uint64_t	ip, end_ip;
	int		isid;
	uint16_t	ninsn;
	uint8_t		mode;
	uint32_t	first, nenc;	/* bytes in dec.runs */
	/*
	 * The last two successors' indexes + 1, the latest first: a
	 * conditional branch has two, and most blocks follow one of them.
	 */
	uint32_t	next[2];
	uint8_t		inl[IX_LB_INLINE];
};

/* Event kinds, as IX_OP_EVENT gives them (an index into this table). */
const char *const ix_event_kinds[IX_NEVENT_KINDS + 1] = {
	"unknown", "resumed", "enabled", "disabled", "async-disabled",
	"async-branch", "paging", "overflow", "exec-mode", "tsx", "stop",
	"vmcs", "exstop", "mwait", "pwre", "pwrx", "ptwrite", "tick", "cbr",
	"mnt", "decode-error", "lost", "exception", "exception-return",
	"memory-not-accessible", "no-sync", "trace-on", "not-decoded",
	"trace-id", "transaction-start", "transaction-commit",
	"transaction-fail", "timestamp-marker", NULL
};

/* A worker's decoder. */
struct dec {
	const struct ix_seg_in *in;
	struct ix_seg_out *out;
	struct pt_image_section_cache *isc;
	struct pt_block_decoder *blk;
	struct pt_image	*img;
	uint64_t	base;		/* stream offset of the current buffer */
	/* Static block lookup: (isid, ip, ninsn, mode) -> local id + 1. */
	uint32_t	*htab;
	size_t		hcap;
	/* libipt blocks seen, and their runs' operations (encoded). */
	struct ix_lblock *lb;
	size_t		nlb, clb;
	uint32_t	*ltab;
	size_t		lcap;
	uint8_t		*runs;
	size_t		nruns, cruns;
	uint32_t	prev_lb;	/* index + 1 of the last libipt block */
	uint32_t	pnext[2];	/* a copy of its next[] */
	size_t		cs_map;		/* CoreSight: last mapping + 1 */
	uint32_t	cs_prev;	/* CoreSight: last block + 1 */
	/*
	 * CoreSight batches (in->cs_batch): the batch's blocks (copies),
	 * the unit's id of each, and per unit block its batch id + 1.
	 */
	struct ix_sblock *bb;
	size_t		nbb, cbb;
	uint32_t	*blid;
	size_t		cblid;
	uint32_t	*bmap;
	size_t		cbmap;
	size_t		nelem;		/* elements in the batch */
	size_t		unit;		/* index in in->cs_touched */
	int		touched;
	/*
	 * The time as this segment knows it: a time is written when it
	 * differs from this (the stitcher checks again against the stream's).
	 */
	int		have_tsc;
	uint64_t	tsc;
	/* Which mapping state the image reflects. */
	int		img_known;	/* built for a known time */
	int		have_next;
	uint64_t	next_change;
	/* Where the next segment starts, relative to the buffer. */
	int		has_limit;
	uint64_t	limit;
	int		own_psb;	/* draining the synced PSB+'s events */
	int		seen_disable;	/* libipt knows where it stopped */
	size_t		flags_at;	/* of the last event in out->ops */
};


int
ix_buf_put(struct ix_buf *b, const void *p, size_t n)
{
	if (ix_grow((void **)&b->p, &b->cap, b->len + n, 1) < 0)
		return (-HWTR_E_NOMEM);
	memcpy(b->p + b->len, p, n);
	b->len += n;
	return (0);
}

int
ix_buf_varint(struct ix_buf *b, uint64_t v)
{
	uint8_t tmp[10];
	size_t n = 0;

	while (v >= 0x80) {
		tmp[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	tmp[n++] = (uint8_t)v;
	if (b->len + n <= b->cap) {
		memcpy(b->p + b->len, tmp, n);
		b->len += n;
		return (0);
	}
	return (ix_buf_put(b, tmp, n));
}

static int
fail(struct dec *d, int rc, const char *what, const char *detail)
{
	if (d->out->rc == 0) {
		d->out->rc = rc;
		snprintf(d->out->err, sizeof(d->out->err), "%s%s%s", what,
		    detail != NULL ? ": " : "", detail != NULL ? detail : "");
	}
	return (rc);
}

static int
put(struct dec *d, uint64_t v)
{
	if (ix_buf_varint(&d->out->ops, v) < 0)
		return (fail(d, -HWTR_E_NOMEM, "out of memory", NULL));
	return (0);
}

static int
op(struct dec *d, enum ix_op o)
{
	return (put(d, ((uint64_t)o << 1) | 1));
}

static int
op1(struct dec *d, enum ix_op o, uint64_t a)
{
	int rc = op(d, o);

	return (rc < 0 ? rc : put(d, a));
}

static uint64_t
kind_index(const char *kind)
{
	uint64_t i;

	for (i = 1; ix_event_kinds[i] != NULL; i++)
		if (strcmp(ix_event_kinds[i], kind) == 0)
			return (i);
	return (0);
}

/* An event at stream offset @off (when @has_off). */
static int
add_event_at(struct dec *d, const char *kind, int has_ip, uint64_t ip,
    const char *detail, int has_off, uint64_t off)
{
	size_t n = detail != NULL ? strlen(detail) : 0;
	int rc;

	if ((rc = op(d, IX_OP_EVENT)) < 0 || (rc = put(d, kind_index(kind))) < 0)
		return (rc);
	/* One byte (flags < 0x80), which drain_events() may amend. */
	d->flags_at = d->out->ops.len;
	if ((rc = put(d, (has_ip ? 1 : 0) | (has_off ? 2 : 0) |
	    (detail != NULL ? 4 : 0))) < 0)
		return (rc);
	if (has_ip && (rc = put(d, ip)) < 0)
		return (rc);
	if (has_off && (rc = put(d, off)) < 0)
		return (rc);
	if (detail != NULL && ((rc = put(d, n)) < 0 ||
	    ix_buf_put(&d->out->ops, detail, n) < 0))
		return (rc < 0 ? rc : fail(d, -HWTR_E_NOMEM, "out of memory",
		    NULL));
	return (0);
}

/* An event where the decoder is. */
static int
add_event(struct dec *d, const char *kind, int has_ip, uint64_t ip,
    const char *detail)
{
	uint64_t off;

	if (d->blk != NULL && pt_blk_get_offset(d->blk, &off) >= 0)
		return (add_event_at(d, kind, has_ip, ip, detail, 1,
		    d->base + off));
	return (add_event_at(d, kind, has_ip, ip, detail, 0, 0));
}

/*
 * Build the memory image for time @t (@known: the decoder knows the time;
 * otherwise the state at the end of the capture is used) and tell when it
 * changes next.
 */
static int
set_image(struct dec *d, int known, uint64_t t)
{
	struct pt_image *img;
	size_t i;
	int rc;

	img = pt_image_alloc(NULL);
	if (img == NULL)
		return (fail(d, -HWTR_E_NOMEM, "out of memory", NULL));
	d->have_next = 0;
	for (i = 0; i < d->in->nmaps; i++) {
		const struct ix_map *m = d->in->maps[i];
		int active;

		if (known) {
			active = (!m->has_from || m->from_tsc <= t) &&
			    (!m->has_to || t < m->to_tsc);
			if (m->has_from && m->from_tsc > t && (!d->have_next ||
			    m->from_tsc < d->next_change)) {
				d->have_next = 1;
				d->next_change = m->from_tsc;
			}
			if (m->has_to && m->to_tsc > t && (!d->have_next ||
			    m->to_tsc < d->next_change)) {
				d->have_next = 1;
				d->next_change = m->to_tsc;
			}
		} else
			active = !m->has_to;
		if (!active || m->isid <= 0)
			continue;
		rc = pt_image_add_cached(img, d->isc, m->isid, NULL);
		if (rc < 0) {
			pt_image_free(img);
			return (fail(d, -HWTR_E_DECODE, "adding a section",
			    pt_errstr(pt_errcode(rc))));
		}
	}
	if (d->blk != NULL)
		pt_blk_set_image(d->blk, img);
	pt_image_free(d->img);
	d->img = img;
	d->img_known = known;
	return (0);
}

/*
 * Every TSC the decoder learns goes through here, from pt_blk_time() and
 * from events alike, so that the stream's first and last time cover all
 * of them (a step capture's times all arrive with events).
 */
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

/* Read the time; switch images when the mapping state changed. */
static int
update_time(struct dec *d)
{
	uint64_t tsc;
	uint32_t lost_mtc, lost_cyc;
	int rc;

	if (pt_blk_time(d->blk, &tsc, &lost_mtc, &lost_cyc) < 0)
		return (0);
	if (!d->have_tsc || tsc != d->tsc) {
		d->have_tsc = 1;
		d->tsc = tsc;
		if ((rc = op1(d, IX_OP_TIME, tsc)) < 0)
			return (rc);
	}
	if (!d->img_known || (d->have_next && d->tsc >= d->next_change))
		return (set_image(d, 1, d->tsc));
	return (0);
}


static int
map_iclass(enum pt_insn_class c, int ild_cls)
{
	switch (c) {
	case ptic_cond_jump:
		return (HWTR_IC_COND);
	case ptic_call:
		return (ild_cls == HWTR_IC_CALL_IND ? HWTR_IC_CALL_IND :
		    HWTR_IC_CALL);
	case ptic_return:
		return (HWTR_IC_RET);
	case ptic_jump:
		return (ild_cls == HWTR_IC_JUMP_IND ? HWTR_IC_JUMP_IND :
		    HWTR_IC_JUMP);
	case ptic_far_call:
		return (HWTR_IC_FAR_CALL);
	case ptic_far_return:
		return (HWTR_IC_FAR_RET);
	case ptic_far_jump:
		return (HWTR_IC_FAR_JUMP);
	case ptic_other:
	case ptic_ptwrite:
		return (HWTR_IC_OTHER);
	default:
		return (ild_cls >= 0 ? ild_cls : HWTR_IC_UNKNOWN);
	}
}

static int
mode_bits(enum pt_exec_mode m)
{
	switch (m) {
	case ptem_16bit:
		return (16);
	case ptem_32bit:
		return (32);
	default:
		return (64);
	}
}

/* The local id of the contiguous run (isid, ip, ninsn, mode); adds it. */
static int64_t
run_id(struct dec *d, const struct ix_sblock *proto)
{
	struct ix_seg_out *o = d->out;
	struct ix_sblock *sb;
	uint64_t h;
	size_t i;

	if (o->nblocks * 2 >= d->hcap) {
		size_t n = d->hcap ? d->hcap * 2 : 4096;
		uint32_t *t = calloc(n, sizeof(*t));

		if (t == NULL)
			return (fail(d, -HWTR_E_NOMEM, "out of memory", NULL));
		for (i = 0; i < o->nblocks; i++) {
			sb = &o->blocks[i];
			h = ix_hash64(sb->ip ^ ((uint64_t)sb->ninsn << 48) ^
			    ((uint64_t)(uint32_t)sb->isid << 32) ^ sb->mode);
			while (t[h & (n - 1)] != 0)
				h++;
			t[h & (n - 1)] = (uint32_t)i + 1;
		}
		free(d->htab);
		d->htab = t;
		d->hcap = n;
	}
	h = ix_hash64(proto->ip ^ ((uint64_t)proto->ninsn << 48) ^
	    ((uint64_t)(uint32_t)proto->isid << 32) ^ proto->mode);
	for (;; h++) {
		uint32_t v = d->htab[h & (d->hcap - 1)];

		if (v == 0)
			break;
		sb = &o->blocks[v - 1];
		if (sb->ip == proto->ip && sb->ninsn == proto->ninsn &&
		    sb->isid == proto->isid && sb->mode == proto->mode)
			return (v - 1);
	}
	if (o->nblocks >= UINT32_MAX - 1)
		return (fail(d, -HWTR_E_LIMIT, "too many blocks", NULL));
	if (ix_grow((void **)&o->blocks, &o->cblocks, o->nblocks + 1,
	    sizeof(*sb)) < 0)
		return (fail(d, -HWTR_E_NOMEM, "out of memory", NULL));
	sb = &o->blocks[o->nblocks];
	*sb = *proto;
	sb->count = 0;
	if (proto->lens != NULL) {
		sb->lens = malloc(proto->ninsn);
		sb->code = malloc(proto->size ? proto->size : 1);
		if (sb->lens == NULL || sb->code == NULL) {
			free(sb->lens);
			free(sb->code);
			return (fail(d, -HWTR_E_NOMEM, "out of memory", NULL));
		}
		memcpy(sb->lens, proto->lens, proto->ninsn);
		memcpy(sb->code, proto->code, proto->size);
	}
	d->htab[h & (d->hcap - 1)] = (uint32_t)o->nblocks + 1;
	return ((int64_t)o->nblocks++);
}

/* Append "run @id ran" to @lb's operations. */
static int
add_run_id(struct dec *d, struct ix_lblock *lb, int64_t id)
{
	uint64_t v = (uint64_t)id << 1;

	if (id < 0)
		return ((int)id);
	if (ix_grow((void **)&d->runs, &d->cruns, d->nruns + 10, 1) < 0)
		return (fail(d, -HWTR_E_NOMEM, "out of memory", NULL));
	while (v >= 0x80) {
		d->runs[d->nruns++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	d->runs[d->nruns++] = (uint8_t)v;
	lb->nenc = (uint32_t)(d->nruns - lb->first);
	return (0);
}

/* Up to @n code bytes at @vaddr in section @isid; how many were read. */
static size_t
read_code(struct dec *d, int isid, uint64_t vaddr, uint8_t *buf, size_t n)
{
	size_t i;

	for (i = 0; i < d->in->nmaps; i++) {
		const struct ix_map *m = d->in->maps[i];
		const uint8_t *img;
		uint64_t size, off, avail;

		if (m->isid != isid || m->image < 0 ||
		    (img = d->in->img[m->image]) == NULL)
			continue;
		if (m->pgoff >= d->in->img_len[m->image])
			continue;
		size = m->end - m->start;
		if (size > d->in->img_len[m->image] - m->pgoff)
			size = d->in->img_len[m->image] - m->pgoff;
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
 * Split a libipt block into contiguous runs.  libipt's block decoder
 * follows direct jumps and calls inside a block ("users are expected to
 * follow direct branches"); the database wants blocks whose instructions
 * are contiguous (so that lengths give addresses) and calls that show up
 * as transitions, so each direct jump or call ends a run here.  When the
 * bytes cannot be read or decoded, the block stays one run whose layout
 * is unknown (insn_lens NULL).
 */
static int
split_block(struct dec *d, struct ix_lblock *lb, const struct pt_block *b)
{
	uint8_t lens[4096], code[4096 * 2], buf[16];
	struct ix_sblock run;
	struct hwtr_x86_insn x;
	int cls;
	uint64_t cur = b->ip;
	size_t ncode = 0, nlens = 0;
	uint16_t k;
	int mode = mode_bits(b->mode), rc, n;

	lb->first = (uint32_t)d->nruns;
	lb->nenc = 0;
	memset(&run, 0, sizeof(run));
	run.ip = cur;
	run.isid = b->isid;
	run.mode = (uint8_t)mode;
	if (b->isid <= 0 || b->ninsn > sizeof(lens))
		goto fallback;
	for (k = 0; k < b->ninsn; k++) {
		int last = k + 1 == b->ninsn;

		n = (int)read_code(d, b->isid, cur, buf, 15);
		if (last && b->truncated && cur == b->end_ip) {
			memcpy(buf, b->raw, b->size);
			n = b->size;
		}
		if (n <= 0 || hwtr_x86_decode(buf, (size_t)n, cur, mode,
		    &x) < 0 || ncode + (size_t)x.len > sizeof(code))
			goto fallback;
		if (last && cur != b->end_ip)
			goto fallback;
		cls = hwtr_ic_of_x86(&x);
		lens[nlens++] = x.len;
		memcpy(code + ncode, buf, (size_t)x.len);
		ncode += (size_t)x.len;
		if (last || ((cls == HWTR_IC_JUMP || cls == HWTR_IC_CALL) &&
		    x.has_target)) {
			run.end_ip = cur;
			run.ninsn = (uint16_t)nlens;
			run.size = (uint32_t)ncode;
			run.lens = lens;
			run.code = code;
			run.cls = (uint8_t)(last ? map_iclass(b->iclass, cls) :
			    cls);
			if ((rc = add_run_id(d, lb, run_id(d, &run))) < 0)
				return (rc);
			cur = x.has_target && !last ? x.target :
			    cur + (uint64_t)x.len;
			nlens = ncode = 0;
			run.ip = cur;
		} else
			cur += (uint64_t)x.len;
	}
	return (0);
fallback:
	/* Forget runs made so far: the whole block is one unknown run. */
	d->nruns = lb->first;
	lb->nenc = 0;
	memset(&run, 0, sizeof(run));
	run.ip = b->ip;
	run.end_ip = b->end_ip;
	run.isid = b->isid;
	run.ninsn = b->ninsn;
	run.mode = (uint8_t)mode;
	run.cls = (uint8_t)map_iclass(b->iclass, -1);
	return (add_run_id(d, lb, run_id(d, &run)));
}

/* The runs of libipt block @b, split once and cached. */
static struct ix_lblock *
lblock_get(struct dec *d, const struct pt_block *b)
{
	struct ix_lblock *lb;
	uint64_t h;
	size_t i;
	uint8_t mode = (uint8_t)mode_bits(b->mode);

	/*
	 * Most blocks follow the block before them as one of the last two
	 * times: no hashing.
	 */
	if (d->pnext[0] != 0) {
		struct ix_lblock *c0 = &d->lb[d->pnext[0] - 1];

		/* The candidate chosen without a branch to mispredict. */
		lb = d->pnext[1] != 0 && c0->ip != b->ip ?
		    &d->lb[d->pnext[1] - 1] : c0;
		if (lb->ip == b->ip && lb->end_ip == b->end_ip &&
		    lb->ninsn == b->ninsn && lb->isid == b->isid &&
		    lb->mode == mode)
			return (lb);
	}
	if (d->nlb * 2 >= d->lcap) {
		size_t n = d->lcap ? d->lcap * 2 : 4096;
		uint32_t *t = calloc(n, sizeof(*t));

		if (t == NULL) {
			fail(d, -HWTR_E_NOMEM, "out of memory", NULL);
			return (NULL);
		}
		for (i = 0; i < d->nlb; i++) {
			lb = &d->lb[i];
			h = ix_hash64(ix_hash64(lb->ip) ^ lb->end_ip ^
			    ((uint64_t)lb->ninsn << 48) ^
			    ((uint64_t)(uint32_t)lb->isid << 32));
			while (t[h & (n - 1)] != 0)
				h++;
			t[h & (n - 1)] = (uint32_t)i + 1;
		}
		free(d->ltab);
		d->ltab = t;
		d->lcap = n;
	}
	/* ip ^ end_ip alone would collide for every block of a size. */
	h = ix_hash64(ix_hash64(b->ip) ^ b->end_ip ^ ((uint64_t)b->ninsn << 48) ^
	    ((uint64_t)(uint32_t)b->isid << 32));
	for (;; h++) {
		uint32_t v = d->ltab[h & (d->lcap - 1)];

		if (v == 0 || d->lb == NULL)
			break;
		lb = &d->lb[v - 1];
		if (lb->ip == b->ip && lb->end_ip == b->end_ip &&
		    lb->ninsn == b->ninsn && lb->isid == b->isid &&
		    lb->mode == mode)
			return (lb);
	}
	if (ix_grow((void **)&d->lb, &d->clb, d->nlb + 1, sizeof(*lb)) < 0) {
		fail(d, -HWTR_E_NOMEM, "out of memory", NULL);
		return (NULL);
	}
	lb = &d->lb[d->nlb];
	memset(lb, 0, sizeof(*lb));
	lb->ip = b->ip;
	lb->end_ip = b->end_ip;
	lb->isid = b->isid;
	lb->ninsn = b->ninsn;
	lb->mode = mode;
	if (split_block(d, lb, b) < 0)
		return (NULL);
	if (lb->nenc <= IX_LB_INLINE)
		memcpy(lb->inl, d->runs + lb->first, lb->nenc);
	d->ltab[h & (d->lcap - 1)] = (uint32_t)d->nlb + 1;
	d->nlb++;
	return (lb);
}

static int
add_block(struct dec *d, const struct pt_block *b)
{
	struct ix_lblock *lb;
	struct ix_buf *ops = &d->out->ops;
	uint32_t id;

	lb = lblock_get(d, b);
	if (lb == NULL)
		return (d->out->rc < 0 ? d->out->rc : -HWTR_E_NOMEM);
	id = (uint32_t)(lb - d->lb) + 1;
	if (d->prev_lb != 0 && d->pnext[0] != id) {
		uint32_t *nx = d->lb[d->prev_lb - 1].next;

		nx[1] = d->pnext[0];
		nx[0] = id;
	}
	d->prev_lb = id;
	d->pnext[0] = lb->next[0];
	d->pnext[1] = lb->next[1];
	/*
	 * The next block is most likely one of these: fetch them while
	 * libipt decodes it, rather than wait for them after.
	 */
	if (lb->next[0] != 0)
		__builtin_prefetch(&d->lb[lb->next[0] - 1]);
	if (lb->next[1] != 0)
		__builtin_prefetch(&d->lb[lb->next[1] - 1]);
	/* Room for IX_LB_INLINE bytes more, so that a copy is one store. */
	if (ops->cap - ops->len < lb->nenc + IX_LB_INLINE &&
	    ix_grow((void **)&ops->p, &ops->cap, ops->len + lb->nenc +
	    IX_LB_INLINE, 1) < 0)
		return (fail(d, -HWTR_E_NOMEM, "out of memory", NULL));
	if (lb->nenc <= IX_LB_INLINE)
		memcpy(ops->p + ops->len, lb->inl, IX_LB_INLINE);
	else
		memcpy(ops->p + ops->len, d->runs + lb->first, lb->nenc);
	ops->len += lb->nenc;
	return (0);
}

static const char *
event_kind(const struct pt_event *ev)
{
	switch (ev->type) {
	case ptev_enabled:
		return (ev->variant.enabled.resumed ? "resumed" : "enabled");
	case ptev_disabled:
		return ("disabled");
	case ptev_async_disabled:
		return ("async-disabled");
	case ptev_async_branch:
		return ("async-branch");
	case ptev_paging:
	case ptev_async_paging:
		return ("paging");
	case ptev_overflow:
		return ("overflow");
	case ptev_exec_mode:
		return ("exec-mode");
	case ptev_tsx:
		return ("tsx");
	case ptev_stop:
		return ("stop");
	case ptev_vmcs:
	case ptev_async_vmcs:
		return ("vmcs");
	case ptev_exstop:
		return ("exstop");
	case ptev_mwait:
		return ("mwait");
	case ptev_pwre:
		return ("pwre");
	case ptev_pwrx:
		return ("pwrx");
	case ptev_ptwrite:
		return ("ptwrite");
	case ptev_tick:
		return ("tick");
	case ptev_cbr:
		return ("cbr");
	case ptev_mnt:
		return ("mnt");
	default:
		return ("unknown");
	}
}

/* The decoder has read past the start of the next segment. */
static int
past_limit(struct dec *d)
{
	uint64_t off;

	return (d->has_limit && pt_blk_get_offset(d->blk, &off) >= 0 &&
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
	int has_ip, resume;
	uint64_t ip;
	int rc;

	while (status & pts_event_pending) {
		status = pt_blk_event(d->blk, &ev, sizeof(ev));
		if (status < 0)
			return (status);
		/*
		 * The status updates of the PSB+ that starts the next
		 * segment: what follows is that segment's.  Events read
		 * before them are this segment's, even when libipt read
		 * ahead past the PSB to deliver them.
		 */
		if (ev.status_update && !d->own_psb && past_limit(d))
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
			rc = op(d, IX_OP_GAP);
			d->seen_disable = 1;
			break;
		case ptev_async_disabled:
			has_ip = 1;
			ip = ev.variant.async_disabled.at;
			rc = op(d, IX_OP_GAP);
			d->seen_disable = 1;
			break;
		case ptev_async_branch:
			has_ip = 1;
			ip = ev.variant.async_branch.from;
			rc = op(d, IX_OP_ASYNC);
			break;
		case ptev_overflow:
			has_ip = !ev.ip_suppressed;
			ip = ev.variant.overflow.ip;
			rc = op(d, IX_OP_GAP);
			d->seen_disable = 1;
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
		if (rc < 0 || (rc = add_event(d, kind, has_ip, ip, det)) < 0)
			return (rc);
		if (resume)
			/* The flags of the event just written: 8, decide. */
			d->out->ops.p[d->flags_at] |= 8;
	}
	return (status);
}

static void
progress(struct dec *d)
{
	uint64_t off;

	if (d->in->progress != NULL && pt_blk_get_offset(d->blk, &off) >= 0)
		__atomic_store_n(d->in->progress, off, __ATOMIC_RELAXED);
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
 * Decode a buffer of the stream, as ptxed's block loop does, up to the
 * next segment's PSB+ when there is a limit.
 */
static int
decode_buf(struct dec *d, const uint8_t *buf, size_t len)
{
	const struct hwtr_stream_desc *sd = d->in->desc;
	struct pt_config cfg;
	struct pt_block b;
	uint64_t sync = 0, newsync, erroff = 0, stuck_off = UINT64_MAX, end;
	int status, rc, in_error = 0, stuck = 0, stuck_msg = 0;
	uint32_t n = 0;

	end = d->has_limit && d->limit < len ? d->limit : len;
	pt_config_init(&cfg);
	rc = ix_pt_config(&cfg, sd, d->in->cpu, buf, len);
	if (rc < 0 && d->in->first_of_stream) {
		char msg[96];

		snprintf(msg, sizeof(msg), "config error: %s",
		    pt_errstr(pt_errcode(rc)));
		if ((rc = op(d, IX_OP_ERROR)) < 0 ||
		    (rc = add_event_at(d, "decode-error", 0, 0, msg, 1,
		    d->base)) < 0)
			return (rc);
	}

	d->blk = pt_blk_alloc_decoder(&cfg);
	if (d->blk == NULL)
		return (fail(d, -HWTR_E_NOMEM, "cannot allocate a decoder", NULL));
	pt_blk_set_image(d->blk, d->img);
	for (;;) {
		if (d->in->cancel != NULL && *d->in->cancel)
			return (fail(d, -HWTR_E_INTR, "interrupted", NULL));
		memset(&b, 0, sizeof(b));
		status = pt_blk_sync_forward(d->blk);
		if (status < 0) {
			if (status == -pte_eos) {
				if (in_error && end > erroff &&
				    (rc = op1(d, IX_OP_UNDECODED,
				    end - erroff)) < 0)
					return (rc);
				break;
			}
			/* Failing at the next segment's PSB: its error. */
			if (d->has_limit && pt_blk_get_offset(d->blk,
			    &newsync) >= 0 && newsync >= d->limit)
				break;
			if ((rc = op(d, IX_OP_ERROR)) < 0 ||
			    (rc = op(d, IX_OP_NOPREV)) < 0 ||
			    (rc = add_event(d, "decode-error", 0, 0,
			    pt_errstr(pt_errcode(status)))) < 0)
				return (rc);
			if (pt_blk_get_offset(d->blk, &newsync) < 0 ||
			    newsync <= sync)
				break;
			sync = newsync;
			continue;
		}
		if (pt_blk_get_sync_offset(d->blk, &newsync) >= 0 &&
		    d->has_limit && newsync >= d->limit) {
			/* Resynchronized at or past the next segment. */
			if (in_error && d->limit > erroff &&
			    (rc = op1(d, IX_OP_UNDECODED,
			    d->limit - erroff)) < 0)
				return (rc);
			break;
		}
		if (in_error && pt_blk_get_sync_offset(d->blk, &newsync) >= 0 &&
		    newsync > erroff && (rc = op1(d, IX_OP_UNDECODED,
		    newsync - erroff)) < 0)
			return (rc);
		/*
		 * The status updates right after a sync are those of the
		 * PSB+ synchronized to, even when libipt read ahead past the
		 * next segment's start (PSBs a few bytes apart).
		 */
		d->own_psb = 1;
		for (;;) {
			status = drain_events(d, status);
			d->own_psb = 0;
			if (status < 0 || status == IX_STOP)
				break;
			rc = update_time(d);
			if (rc < 0)
				return (rc);
			if (status & pts_eos) {
				status = -pte_eos;
				break;
			}
			b.ninsn = 0;
			status = pt_blk_next(d->blk, &b, sizeof(b));
			if (b.ninsn > 0) {
				rc = add_block(d, &b);
				if (rc < 0)
					return (rc);
			}
			if (status < 0)
				break;
			if ((++n & 4095) == 0) {
				uint64_t off = 0;

				progress(d);
				if (d->in->cancel != NULL && *d->in->cancel)
					return (fail(d, -HWTR_E_INTR, "interrupted", NULL));
				/*
				 * libipt follows a loop of direct jumps that
				 * needs no packet forever (a corrupted stream
				 * can lead there): a million blocks without
				 * reading a byte of trace is a decode error.
				 */
				(void)pt_blk_get_offset(d->blk, &off);
				if (off != stuck_off) {
					stuck_off = off;
					stuck = 0;
				} else if (++stuck >= 256) {
					status = -pte_internal;
					stuck_msg = 1;
					break;
				}
			}
		}
		if (status == -pte_eos || status == IX_STOP)
			break;
		if (d->out->rc < 0)
			return (d->out->rc);
		if (status >= 0)
			status = -pte_internal;
		/* A decode error: record it and resume at the next PSB. */
		rc = op(d, IX_OP_ERROR);
		if (rc == 0)
			rc = op(d, IX_OP_GAP);
		if (rc == 0)
			rc = add_event(d, "decode-error", b.ninsn > 0 ||
			    b.ip != 0, b.ninsn > 0 ? b.end_ip : b.ip, stuck_msg ?
			    "no progress: a loop that reads no trace" :
			    pt_errstr(pt_errcode(status)));
		stuck_msg = 0;
		stuck = 0;
		if (rc < 0)
			return (rc);
		if (pt_blk_get_offset(d->blk, &erroff) < 0)
			erroff = 0;
		in_error = 1;
		if (pt_blk_get_offset(d->blk, &newsync) >= 0)
			sync = newsync;
	}
	progress(d);
	pt_blk_free_decoder(d->blk);
	d->blk = NULL;
	return (0);
}

/*
 * CoreSight.  OpenCSD (cs_decode.c) gives the generic elements of a buffer
 * with the trace IDs (one per core) interleaved.  Each trace ID is a unit
 * of its own (ix_cs_units(): its own output, thread and stream in the
 * database), so every element goes straight to its trace ID's decoder
 * state as it comes: its own blocks, call stack and time, and no branch
 * from one core's block to another's.  Blocks are the instruction ranges,
 * their mode the ISA (64 A64, 32 A32, 16 T32).  A64 and A32 instructions
 * are 4 bytes; a T32 instruction is 4 bytes when the top five bits of its
 * first halfword are 0b11101, 0b11110 or 0b11111 and 2 otherwise, so T32
 * lengths come from the memory image; a block whose bytes are not in the
 * archive keeps its code NULL (and T32 its lengths).
 */
size_t
ix_cs_units(const struct hwtr_stream_desc *sd, size_t *order)
{
	size_t i, j, n = sd->cs.nsources, k;

	/* Sources by trace ID (insertion sort: a few sources). */
	for (i = 0; i < n; i++) {
		for (j = i; j > 0 && sd->cs.sources[order[j - 1]].trace_id >
		    sd->cs.sources[i].trace_id; j--)
			order[j] = order[j - 1];
		order[j] = i;
	}
	/* A trace ID named twice is decoded once: drop the later ones. */
	for (i = k = 0; i < n; i++)
		if (k == 0 || sd->cs.sources[order[k - 1]].trace_id !=
		    sd->cs.sources[order[i]].trace_id)
			order[k++] = order[i];
	return (k);
}

struct cs_run {
	struct dec	*decs;		/* one per unit */
	size_t		ndecs;
	int16_t		route[256];	/* trace ID -> unit, -1 */
	uint64_t	base;		/* stream offset of the piece */
	const struct ix_cs_mem *mem;
	size_t		nmem;
	size_t		batch;		/* in->cs_batch */
	int		rc;
};

/*
 * The section (ix.c's image section id) of the mapping holding @ip, 0 for
 * none: blocks in an ELF image get its symbols and lines.  @d remembers
 * the last mapping found; ranges mostly stay in one.
 */
static int
cs_isid(struct dec *d, uint64_t ip)
{
	const struct ix_seg_in *in = d->in;
	const struct ix_map *m;
	size_t i;

	if (d->cs_map > 0 && d->cs_map <= in->nmaps) {
		m = in->maps[d->cs_map - 1];
		if (ip >= m->start && ip < m->end)
			return (m->isid);
	}
	for (i = 0; i < in->nmaps; i++) {
		m = in->maps[i];
		if (m->isid > 0 && ip >= m->start && ip < m->end) {
			d->cs_map = i + 1;
			return (m->isid);
		}
	}
	return (0);
}

/* Something came for unit @d (the writer may have left it for later). */
static void
cs_touch(struct dec *d)
{
	if (!d->touched && d->in->cs_touched != NULL)
		__atomic_store_n(&d->in->cs_touched[d->unit], 1,
		    __ATOMIC_RELAXED);
	d->touched = 1;
}

static int
cs_event(struct dec *d, const char *kind, int has_ip, uint64_t ip,
    const char *detail, uint64_t off)
{
	cs_touch(d);
	return (add_event_at(d, kind, has_ip, ip, detail, 1, off));
}

/* The archive's bytes at [@addr, @addr + @len), or NULL. */
static const uint8_t *
cs_mem(const struct cs_run *cr, uint64_t addr, uint64_t len)
{
	size_t i;

	for (i = 0; i < cr->nmem; i++)
		if (addr >= cr->mem[i].addr && addr - cr->mem[i].addr <=
		    cr->mem[i].len && len <= cr->mem[i].len -
		    (addr - cr->mem[i].addr))
			return (cr->mem[i].p + (addr - cr->mem[i].addr));
	return (NULL);
}

/*
 * The archive's bytes at [@addr, @addr + @len) into @dst, gathered from
 * the dumps that hold them in turn: a range may run from one dump into
 * the next (trace_file_vmid's code_44_0 and code_44_1), and OpenCSD reads
 * memory instruction by instruction, from whichever dump has each.
 * Returns 0, or -1 when some byte is in no dump.
 */
static int
cs_mem_gather(const struct cs_run *cr, uint64_t addr, uint64_t len,
    uint8_t *dst)
{
	uint64_t done = 0, n;
	size_t i;

	while (done < len) {
		for (i = 0; i < cr->nmem; i++)
			if (cr->mem[i].p != NULL &&
			    addr + done >= cr->mem[i].addr &&
			    addr + done - cr->mem[i].addr < cr->mem[i].len)
				break;
		if (i == cr->nmem)
			return (-1);
		n = cr->mem[i].len - (addr + done - cr->mem[i].addr);
		if (n > len - done)
			n = len - done;
		memcpy(dst + done, cr->mem[i].p + (addr + done -
		    cr->mem[i].addr), n);
		done += n;
	}
	return (0);
}

/*
 * Give a new block its instruction lengths and code.  Returns 0, or
 * -HWTR_E_NOMEM.  Lengths that do not add up to the range (a T32 walk
 * over bytes that are not the traced code) are left out, never guessed.
 */
static int
cs_block_code(const struct cs_run *cr, struct ix_sblock *b, uint32_t ninsn)
{
	const uint8_t *p;
	uint64_t off = 0;
	uint32_t i;

	if ((p = cs_mem(cr, b->ip, b->size)) != NULL) {
		if ((b->code = malloc(b->size)) == NULL)
			return (-HWTR_E_NOMEM);
		memcpy(b->code, p, b->size);
	} else {
		if ((b->code = malloc(b->size)) == NULL)
			return (-HWTR_E_NOMEM);
		if (cs_mem_gather(cr, b->ip, b->size, b->code) < 0) {
			free(b->code);
			b->code = NULL;
		}
		p = b->code;
	}
	if (b->code == NULL && b->mode == IX_CS_T32)
		return (0);
	if ((b->lens = malloc(ninsn ? ninsn : 1)) == NULL)
		return (-HWTR_E_NOMEM);
	for (i = 0; i < ninsn; i++) {
		if (b->mode != IX_CS_T32)
			b->lens[i] = 4;
		else if (off + 2 <= b->size)
			b->lens[i] = (p[off + 1] >> 3) >= 0x1d ? 4 : 2;
		else
			break;
		off += b->lens[i];
	}
	if (i < ninsn || off != b->size) {
		free(b->lens);
		b->lens = NULL;
		return (0);
	}
	b->end_ip = b->ip + b->size - b->lens[ninsn - 1];
	return (0);
}

/*
 * Block @id ran.  With batches, the operation names the block's id in the
 * batch being filled, which gets a copy of the block the first time (the
 * stitcher reads nothing the decoder changes later: the copy's lens and
 * code are final once the block exists).
 */
static int
cs_put_block(struct dec *d, int64_t id)
{
	struct ix_sblock *b;

	if (d->in->cs_batch == 0 || d->in->cs_publish == NULL)
		return (put(d, (uint64_t)id << 1));
	if ((size_t)id >= d->cbmap) {
		size_t n = d->cbmap ? d->cbmap : 4096;
		uint32_t *t;

		while (n <= (size_t)id)
			n *= 2;
		if ((t = realloc(d->bmap, n * sizeof(*t))) == NULL)
			return (fail(d, -HWTR_E_NOMEM, "out of memory", NULL));
		memset(t + d->cbmap, 0, (n - d->cbmap) * sizeof(*t));
		d->bmap = t;
		d->cbmap = n;
	}
	if (d->bmap[id] == 0) {
		if (ix_grow((void **)&d->bb, &d->cbb, d->nbb + 1,
		    sizeof(*d->bb)) < 0 || ix_grow((void **)&d->blid,
		    &d->cblid, d->nbb + 1, sizeof(*d->blid)) < 0)
			return (fail(d, -HWTR_E_NOMEM, "out of memory", NULL));
		b = &d->bb[d->nbb];
		*b = d->out->blocks[id];
		b->count = 0;
		b->last_to = b->last_br = 0;
		d->blid[d->nbb] = (uint32_t)id;
		d->bmap[id] = (uint32_t)++d->nbb;
	}
	return (put(d, (uint64_t)(d->bmap[id] - 1) << 1));
}

/* Hand unit @u's batch (its operations so far) to the writer. */
static int
cs_publish(struct dec *d, size_t u)
{
	struct ix_seg_out *b;
	size_t i;
	int rc;

	d->nelem = 0;
	if (d->out == NULL || d->out->ops.len == 0)
		return (0);
	if ((b = calloc(1, sizeof(*b))) == NULL) {
		/* The operations cannot be stitched with the unit's ids. */
		d->out->ops.len = 0;
		return (fail(d, -HWTR_E_NOMEM, "out of memory", NULL));
	}
	b->borrowed = 1;
	b->trace_id = d->out->trace_id;
	b->format = d->out->format;
	b->blocks = d->bb;
	b->nblocks = d->nbb;
	b->cblocks = d->cbb;
	b->ops = d->out->ops;
	memset(&d->out->ops, 0, sizeof(d->out->ops));
	for (i = 0; i < d->nbb; i++)
		d->bmap[d->blid[i]] = 0;
	d->bb = NULL;
	d->nbb = d->cbb = 0;
	if ((rc = d->in->cs_publish(d->in->cs_publish_arg, u, b)) < 0)
		return (fail(d, rc, rc == -HWTR_E_INTR ? "interrupted" :
		    "cannot hand a batch to the writer", NULL));
	return (0);
}

/*
 * The cycle count that came with @e, at the position of @e: before its
 * range's block, or before the next block for any other element.  Every
 * count adds to the running count of the trace but an ETMv4 or ETE
 * timestamp's, which OpenCSD documents as the cycles since the previous
 * count, counted again by the next one.
 */
static int
cs_cycles(struct dec *d, const struct ix_cs_elem *e)
{
	int cum = !(e->cc_elem == IX_CC_TIMESTAMP &&
	    (d->out->format == HWTR_TF_ETMV4 || d->out->format == HWTR_TF_ETE));
	int rc;

	if ((rc = op1(d, IX_OP_CYCLES, e->cc)) < 0)
		return (rc);
	return (put(d, (uint64_t)e->cc_elem << 1 | (uint64_t)cum));
}

static int
cs_emit(struct cs_run *cr, struct dec *d, const struct ix_cs_elem *e)
{
	struct ix_sblock proto, *b;
	char det[64];
	int64_t id;
	uint64_t last, off = cr->base + e->index;
	size_t before;
	int rc;

	if (e->has_cc && (rc = cs_cycles(d, e)) < 0)
		return (rc);
	switch (e->kind) {
	case IX_CS_RANGE:
		if (e->en <= e->st || e->ninsn == 0 ||
		    e->en - e->st > UINT32_MAX)
			return (0);
		last = e->last_sz ? (uint64_t)e->last_sz :
		    e->isa == IX_CS_T32 ? 2 : 4;
		memset(&proto, 0, sizeof(proto));
		proto.ip = e->st;
		proto.end_ip = e->en - last;
		proto.ninsn = e->ninsn > UINT16_MAX ? UINT16_MAX :
		    (uint16_t)e->ninsn;
		proto.mode = (uint8_t)(e->isa ? e->isa : 64);
		proto.cls = (uint8_t)e->last_class;
		proto.size = (uint32_t)(e->en - e->st);
		proto.isid = cs_isid(d, e->st);
		d->out->isa_seen |= proto.mode == IX_CS_T32 ? 4 :
		    proto.mode == IX_CS_A32 ? 2 : 1;
		before = d->out->nblocks;
		/*
		 * Most ranges follow the one before as they did last time:
		 * the previous block's last successor spares the hash lookup.
		 */
		b = d->cs_prev != 0 &&
		    d->out->blocks[d->cs_prev - 1].last_to != 0 ?
		    &d->out->blocks[d->out->blocks[d->cs_prev - 1].last_to -
		    1] : NULL;
		if (b != NULL && b->ip == proto.ip && b->ninsn == proto.ninsn &&
		    b->isid == proto.isid && b->mode == proto.mode)
			id = b - d->out->blocks;
		else if ((id = run_id(d, &proto)) < 0)
			return ((int)id);
		if (d->cs_prev != 0)
			d->out->blocks[d->cs_prev - 1].last_to = (uint32_t)id + 1;
		d->cs_prev = (uint32_t)id + 1;
		if (d->out->nblocks > before) {
			b = &d->out->blocks[id];
			if (proto.ninsn == e->ninsn &&
			    cs_block_code(cr, b, e->ninsn) < 0)
				return (fail(d, -HWTR_E_NOMEM, "out of memory",
				    NULL));
			if (b->code == NULL)
				d->out->nocode++;
		}
		return (cs_put_block(d, id));
	case IX_CS_EXCEPTION:
		if ((rc = op(d, IX_OP_ASYNC)) < 0)
			return (rc);
		snprintf(det, sizeof(det), "exception 0x%x", e->excnum);
		return (cs_event(d, "exception", e->en != 0, e->en, det, off));
	case IX_CS_EXC_RET:
		if ((rc = op(d, IX_OP_ASYNC)) < 0)
			return (rc);
		return (cs_event(d, "exception-return", 0, 0, NULL, off));
	case IX_CS_NACC:
		if ((rc = op(d, IX_OP_NOPREV)) < 0)
			return (rc);
		return (cs_event(d, "memory-not-accessible", 1, e->st, NULL,
		    off));
	case IX_CS_TIMESTAMP:
		return (op1(d, IX_OP_SETTSC, e->ts));
	case IX_CS_MEMTRANS:
		/*
		 * ETE transactional memory (TME).  A failed transaction is
		 * unwound: execution goes on after its TSTART, not from the
		 * block before, so no branch leads into the next block.
		 * Trace that starts inside a transaction is a start.
		 */
		if (e->memtrans == IX_CS_TRANS_FAIL &&
		    (rc = op(d, IX_OP_ASYNC)) < 0)
			return (rc);
		return (cs_event(d, e->memtrans == IX_CS_TRANS_COMMIT ?
		    "transaction-commit" : e->memtrans == IX_CS_TRANS_FAIL ?
		    "transaction-fail" : "transaction-start", 0, 0,
		    e->memtrans == IX_CS_TRANS_INIT ? "trace began inside "
		    "the transaction" : NULL, off));
	case IX_CS_MARKER:
		/* Where the timestamp that follows was taken. */
		snprintf(det, sizeof(det), "marker 0x%x", e->marker);
		return (cs_event(d, "timestamp-marker", 0, 0, det, off));
	case IX_CS_NO_SYNC:
	case IX_CS_TRACE_ON:
		if ((rc = op(d, IX_OP_NOPREV)) < 0)
			return (rc);
		return (cs_event(d, e->kind == IX_CS_NO_SYNC ? "no-sync" :
		    "trace-on", 0, 0, NULL, off));
	default:
		return (0);
	}
}

/* OpenCSD's callback: the element goes to its trace ID's unit. */
static int
cs_elem(void *arg, const struct ix_cs_elem *e)
{
	struct cs_run *cr = arg;
	int u = cr->route[e->trace_id];

	if (u < 0)
		return (0);
	/* End of trace and the like write nothing; a cycle count a row. */
	if ((e->kind != IX_CS_EOT && e->kind != IX_CS_CYCLES &&
	    e->kind != IX_CS_OTHER) || e->has_cc)
		cs_touch(&cr->decs[u]);
	if ((cr->rc = cs_emit(cr, &cr->decs[u], e)) < 0)
		return (cr->rc);
	if (cr->batch != 0 && ++cr->decs[u].nelem >= cr->batch &&
	    (cr->rc = cs_publish(&cr->decs[u], (size_t)u)) < 0)
		return (cr->rc);
	return (0);
}

static const char *
cs_proto_name(enum hwtr_trace_format f)
{
	switch (f) {
	case HWTR_TF_ETMV3:
		return ("ETMv3");
	case HWTR_TF_PTM:
		return ("PTM");
	case HWTR_TF_ETMV4:
		return ("ETMv4");
	case HWTR_TF_ETE:
		return ("ETE");
	default:
		return ("STM");
	}
}

static void
cs_decode_stream(const struct ix_seg_in *in, struct ix_seg_out *outs)
{
	const struct hwtr_cs_config *cs = &in->desc->cs;
	struct ix_cs_mem *mem;
	struct cs_run cr;
	size_t *order;
	char err[256], det[160], prob[256];
	size_t i, k, u, nmem = 0, nu = 0;
	int rc = 0;

	memset(&cr, 0, sizeof(cr));
	memset(cr.route, 0xff, sizeof(cr.route));
	mem = calloc(in->nmaps + 1, sizeof(*mem));
	order = calloc(cs->nsources + 1, sizeof(*order));
	cr.decs = calloc(in->nouts + 1, sizeof(*cr.decs));
	for (u = 0; u < in->nouts; u++)
		memset(&outs[u], 0, sizeof(outs[u]));
	if (mem == NULL || order == NULL || cr.decs == NULL) {
		outs[0].rc = -HWTR_E_NOMEM;
		snprintf(outs[0].err, sizeof(outs[0].err), "out of memory");
		goto out;
	}
	nu = ix_cs_units(in->desc, order);
	if (nu > in->nouts)
		nu = in->nouts;
	cr.ndecs = in->nouts;
	cr.batch = in->cs_publish != NULL ? in->cs_batch : 0;
	for (u = 0; u < in->nouts; u++) {
		struct dec *d = &cr.decs[u];

		d->in = in;
		d->out = &outs[u];
		d->unit = u;
		d->isc = in->iscache;
		if (u < nu && cs->sources[order[u]].protocol != HWTR_TF_STM)
			cr.route[cs->sources[order[u]].trace_id] = (int16_t)u;
		/* Known now: batches tell the writer which unit they are. */
		if (u < nu) {
			d->out->trace_id = cs->sources[order[u]].trace_id;
			d->out->format = cs->sources[order[u]].protocol;
		}
	}
	for (i = 0; i < in->nmaps; i++) {
		const struct ix_map *m = in->maps[i];
		uint64_t size;

		if (m->image < 0 || in->img[m->image] == NULL ||
		    m->pgoff >= in->img_len[m->image])
			continue;
		size = m->end - m->start;
		if (size > in->img_len[m->image] - m->pgoff)
			size = in->img_len[m->image] - m->pgoff;
		mem[nmem].addr = m->start;
		mem[nmem].p = in->img[m->image] + m->pgoff;
		mem[nmem].len = (size_t)size;
		nmem++;
	}
	cr.mem = mem;
	cr.nmem = nmem;
	prob[0] = '\0';
	for (u = 0; u < nu; u++)
		if (cs->sources[order[u]].protocol == HWTR_TF_STM) {
			/* Reported, never silently dropped. */
			snprintf(det, sizeof(det), "trace ID 0x%02x: STM "
			    "source not decoded",
			    cs->sources[order[u]].trace_id);
			if (cs_event(&cr.decs[u], "not-decoded", 0, 0, det,
			    0) < 0)
				goto out;
			snprintf(prob, sizeof(prob), "%s", det);
		}
	for (k = 0; k < in->npieces && rc >= 0; k++) {
		/* A new piece: each core starts over. */
		for (u = 0; u < nu && rc >= 0; u++)
			rc = op(&cr.decs[u], IX_OP_RESET);
		if (rc < 0)
			break;
		cr.base = in->piece_off[k];
		cr.rc = 0;
		rc = ix_cs_decode(in->desc, in->piece[k], in->piece_len[k],
		    mem, nmem, cs_elem, &cr, err, sizeof(err));
		if (cr.rc < 0)
			break;		/* out of memory: in the unit's out */
		if (rc < 0) {
			/* The buffer's own errors go to its first unit. */
			cs_touch(&cr.decs[0]);
			if (op(&cr.decs[0], IX_OP_ERROR) < 0 ||
			    op1(&cr.decs[0], IX_OP_UNDECODED,
			    in->piece_len[k]) < 0 ||
			    cs_event(&cr.decs[0], "decode-error", 0, 0, err,
			    in->piece_off[k]) < 0)
				break;
			snprintf(prob, sizeof(prob), "%s", err);
			rc = 0;
		}
		if (in->progress != NULL)
			__atomic_store_n(in->progress, in->piece_off[k] +
			    in->piece_len[k], __ATOMIC_RELAXED);
	}
	for (u = 0; u < nu; u++) {
		const struct hwtr_cs_source *src = &cs->sources[order[u]];
		struct ix_seg_out *o = &outs[u];
		unsigned isa = o->isa_seen;

		snprintf(det, sizeof(det), "trace ID 0x%02x %s%s%s%s%s%s%s",
		    src->trace_id, cs_proto_name(src->protocol),
		    src->core != NULL ? " " : "",
		    src->core != NULL ? src->core : "",
		    isa & 1 ? " A64" : "", isa & 2 ? " A32" : "",
		    isa & 4 ? " T32" : "",
		    src->protocol == HWTR_TF_STM ? " (not decoded)" : "");
		o->name = strdup(det);
		o->trace_id = src->trace_id;
		o->format = src->protocol;
		if (o->nocode > 0 && o->problem == NULL) {
			snprintf(det, sizeof(det), "trace ID 0x%02x: %llu "
			    "block%s without code in the archive (memory not "
			    "accessible)%s", src->trace_id,
			    (unsigned long long)o->nocode,
			    o->nocode == 1 ? "" : "s", isa & 4 ?
			    ": T32 instruction lengths unknown there" : "");
			o->problem = strdup(det);
		}
	}
	if (prob[0] != '\0' && outs[0].problem == NULL)
		outs[0].problem = strdup(prob);
out:
	for (u = 0; cr.decs != NULL && u < cr.ndecs; u++) {
		/*
		 * The last batch: the out keeps the blocks and no operation
		 * (on a failure too, whose operations so far are kept).
		 */
		if (cr.batch != 0)
			(void)cs_publish(&cr.decs[u], u);
		free(cr.decs[u].bb);
		free(cr.decs[u].blid);
		free(cr.decs[u].bmap);
		free(cr.decs[u].htab);
		free(cr.decs[u].lb);
		free(cr.decs[u].ltab);
		free(cr.decs[u].runs);
	}
	free(cr.decs);
	free(order);
	free(mem);
}

void
ix_decode_segment(const struct ix_seg_in *in, struct ix_seg_out *out)
{
	struct dec d;
	char det[64];

	memset(out, 0, sizeof(*out));
	memset(&d, 0, sizeof(d));
	d.in = in;
	d.out = out;
	d.isc = in->iscache;
	if (in->desc->format == HWTR_TF_CORESIGHT) {
		cs_decode_stream(in, out);
		return;
	}
	if (in->desc->format != HWTR_TF_INTEL_PT)
		return;
	if (set_image(&d, 0, 0) < 0)
		goto done;
	d.base = in->base;
	if (in->lost_before) {
		/* Bytes before this piece were lost by the capture. */
		snprintf(det, sizeof(det), "%llu bytes",
		    (unsigned long long)in->lost_bytes);
		if (op(&d, IX_OP_GAP) < 0 || add_event_at(&d, "lost", 0, 0,
		    det, 1, in->base) < 0)
			goto done;
	}
	d.has_limit = in->has_limit;
	d.limit = in->has_limit ? in->limit - in->base : 0;
	(void)decode_buf(&d, in->buf, in->len);
done:
	if (d.blk != NULL)
		pt_blk_free_decoder(d.blk);
	pt_image_free(d.img);
	free(d.htab);
	free(d.lb);
	free(d.ltab);
	free(d.runs);
}

void
ix_seg_out_free(struct ix_seg_out *o)
{
	size_t i;

	if (o == NULL)
		return;
	for (i = 0; !o->borrowed && i < o->nblocks; i++) {
		free(o->blocks[i].lens);
		free(o->blocks[i].code);
	}
	free(o->blocks);
	free(o->ops.p);
	free(o->problem);
	free(o->name);
	memset(o, 0, sizeof(*o));
}
