/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The stitcher's common block (stitch.c), and the memos of fpt's runs:
 * most of a trace's blocks go through here.
 *
 * run_fast() counts a block for as long as it is the common case: a
 * block of the segment whose global id is known, after the previous one
 * as it ran before, into a branch that does nothing to the call stack.
 * The fast decoder names the blocks of a run of fpt's it saw before by
 * the run's memo (IX_OP_MEMO, segfast.c), whose operations come once,
 * when the memo is new, and are kept here (st->mbytes).  Once their ids
 * and branches are known (memo_check()), the blocks inside a memo are
 * counted at once rather than one by one: their exec-order bytes are
 * fixed (each id's distance from the one before it), and so are their
 * branches; their counts are added once per segment
 * (ix_stitch_memo_sum()), which nothing reads before: a block inside a
 * memo ran before, so that no count goes from 0 to 1 there.  Where that
 * does not hold, the memo's blocks are replayed one by one from the
 * bytes kept, here or by the general path (st->mq).
 */

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "hwtr_common.h"
#include "hwtr_ix.h"
#include "segout.h"

#include "stitch_int.h"

#define IX_MEMO_MAX	48	/* bytes of a memo's operations, at most */
#define IX_MEMO_STRIDE	64	/* bytes kept per memo */
#define IX_MEMO_TRIES	4	/* checks before a memo is given up */

int
ix_stitch_memo_begin(struct ix_stitch *st, const struct ix_seg_out *seg)
{
	st->mqn = 0;
	if (seg->nmemo == 0)
		return (0);
	if (seg->nmemo > st->cmemo) {
		/* A cache line each, from a line's start. */
		free(st->memo);
		st->cmemo = 0;
		st->memo = aligned_alloc(64, (size_t)seg->nmemo *
		    sizeof(*st->memo));
		if (st->memo == NULL)
			return (-HWTR_E_NOMEM);
		st->cmemo = seg->nmemo;
	}
	if (hwtr_grow((void **)&st->mbytes, &st->cmbytes,
	    (size_t)seg->nmemo * IX_MEMO_STRIDE, 1) < 0)
		return (-HWTR_E_NOMEM);
	memset(st->memo, 0, seg->nmemo * sizeof(*st->memo));
	st->nmpool = st->nmx = 0;
	return (0);
}

/* Where memo @m's exec bytes are in st->mx (more than IX_SMEMO_X). */
static uint32_t
memo_xoff(const struct ix_smemo *m)
{
	uint32_t xoff;

	memcpy(&xoff, m->x, sizeof(xoff));
	return (xoff);
}

/* The counts memo @m left to add. */
static IX_APART void
memo_sum(struct ix_stitch *st, struct ix_smemo *m)
{
	const uint32_t *g = st->mpool + m->pool;
	size_t j;

	for (j = 1; j + 1 < m->k; j++) {
		st->hot[g[j]].count += m->uses;
		st->branches[g[m->k + j - 1]].count += m->uses;
	}
	m->uses = 0;
}

void
ix_stitch_memo_sum(struct ix_stitch *st, const struct ix_seg_out *seg)
{
	size_t i;

	for (i = 0; i < seg->nmemo; i++)
		if (st->memo[i].uses != 0)
			memo_sum(st, &st->memo[i]);
}

/* Memo @m is new, its operations @len bytes: what was known goes. */
static IX_APART void
memo_new(struct ix_stitch *st, struct ix_smemo *m, uint8_t len)
{
	if (m->uses != 0)
		memo_sum(st, m);
	memset(m, 0, sizeof(*m));
	m->len = len;
}

/*
 * A new memo's len and bytes at *@qp, kept (block operations only, of
 * blocks of the segment): 0 with *@qp past them, or -HWTR_E_FORMAT.
 */
static IX_APART int
memo_take(struct ix_stitch *st, const struct ix_seg_out *seg,
    const uint8_t **qp, struct ix_smemo *m)
{
	const uint8_t *q = *qp, *end = seg->ops.p + seg->ops.len;
	uint8_t *mb = st->mbytes + (size_t)(m - st->memo) * IX_MEMO_STRIDE;
	size_t len, pos = 0;
	uint64_t v;
	int sh;

	if (q >= end || *q == 0 || *q > IX_MEMO_MAX || *q > end - q - 1)
		return (-HWTR_E_FORMAT);
	len = *q++;
	while (pos < len) {
		for (v = 0, sh = 0; pos < len && q[pos] >= 0x80 && sh < 28;
		    pos++, sh += 7)
			v |= (uint64_t)(q[pos] & 0x7f) << sh;
		if (pos >= len || q[pos] >= 0x80)
			return (-HWTR_E_FORMAT);
		v |= (uint64_t)q[pos++] << sh;
		if ((v & 1) || (v >> 1) >= seg->nblocks)
			return (-HWTR_E_FORMAT);
	}
	memo_new(st, m, (uint8_t)len);
	memcpy(mb, q, len);
	*qp = q + len;
	return (0);
}

int
ix_stitch_memo_op(struct ix_stitch *st, const struct ix_seg_out *seg,
    size_t *posp)
{
	const uint8_t *p = seg->ops.p + *posp, *end = seg->ops.p + seg->ops.len;
	struct ix_smemo *m;
	uint64_t v = 0;
	int sh, rc;

	for (sh = 0; p < end && *p >= 0x80 && sh < 28; p++, sh += 7)
		v |= (uint64_t)(*p & 0x7f) << sh;
	if (p >= end || *p >= 0x80)
		return (-HWTR_E_FORMAT);
	v |= (uint64_t)*p++ << sh;
	if ((v >> 1) >= seg->nmemo)
		return (-HWTR_E_FORMAT);
	m = &st->memo[v >> 1];
	if ((v & 1) && (rc = memo_take(st, seg, &p, m)) < 0)
		return (rc);
	if (m->len == 0)
		return (-HWTR_E_FORMAT);
	/* Its blocks, for the general path to replay one by one. */
	st->mq = st->mbytes + (size_t)(v >> 1) * IX_MEMO_STRIDE;
	st->mqn = m->len;
	*posp = (size_t)(p - seg->ops.p);
	return (0);
}

/* The index of branch @from -> @to, or -1 when it never ran. */
static int64_t
branch_find(const struct ix_stitch *st, uint32_t from, uint32_t to)
{
	const struct ix_hot *h = &st->hot[from];
	const struct ix_branch *br;
	uint64_t hash;

	if (h->to[0] == to + 1)
		return (h->br[0]);
	if (h->to[1] == to + 1)
		return (h->br[1]);
	if (st->bcap == 0)
		return (-1);
	for (hash = ix_hash64(((uint64_t)from << 32) | to);; hash++) {
		uint32_t v = st->btab[hash & (st->bcap - 1)];

		if (v == 0)
			return (-1);
		br = &st->branches[v - 1];
		if (br->from == from && br->to == to)
			return ((int64_t)v - 1);
	}
}

/*
 * The ids of memo @m's blocks (its @len bytes at @q) into st->mpool, its
 * exec bytes into st->mx: 1; 0 when not yet, -1 never.
 */
static int
memo_fill(struct ix_stitch *st, const struct ix_seg_out *seg,
    const uint8_t *q, size_t len, struct ix_smemo *m)
{
	uint32_t g[IX_MEMO_MAX], bi[IX_MEMO_MAX];
	uint8_t x[IX_MEMO_MAX * 5];
	size_t pos = 0, k = 0, nx = 0, i;
	uint32_t xoff;
	int64_t id, b, insn = 0;
	uint64_t v;

	while (pos < len) {
		/* Blocks only, of ids run_fast() reads (two bytes). */
		if (q[pos] & 1)
			return (-1);
		if (q[pos] < 0x80)
			v = q[pos++];
		else if (pos + 1 < len && q[pos + 1] < 0x80) {
			v = (q[pos] & 0x7f) | (uint64_t)q[pos + 1] << 7;
			pos += 2;
		} else
			return (-1);
		if ((v >> 1) >= seg->nblocks)
			return (-1);
		if ((id = st->lmap[v >> 1]) == -1)
			return (0);
		/* A block that may be continued (stitch.c's may_cont()). */
		if (id < 0)
			return (-1);
		if (k == 0)
			m->l0 = (uint16_t)(v >> 1);
		if (k == 1)
			m->off1 = (uint8_t)(pos - (v >= 0x80 ? 2 : 1));
		m->llast = (uint16_t)(v >> 1);
		g[k++] = (uint32_t)id;
	}
	if (k < 3)
		return (-1);
	for (i = 1; i + 1 < k; i++) {
		if (st->hot[g[i]].count == 0 ||
		    (b = branch_find(st, g[i - 1], g[i])) < 0)
			return (0);
		bi[i - 1] = (uint32_t)b;
		insn += st->hot[g[i]].ninsn;
		/* As add_run() writes it. */
		v = (uint64_t)((int64_t)g[i] - g[i - 1] - 1);
		v = (v << 1) ^ (uint64_t)((int64_t)v >> 63);
		while (v >= 0x80) {
			x[nx++] = (uint8_t)(v | 0x80);
			v >>= 7;
		}
		x[nx++] = (uint8_t)v;
	}
	if (hwtr_grow((void **)&st->mpool, &st->cmpool, st->nmpool + 2 * k,
	    sizeof(*st->mpool)) < 0 || (nx > IX_SMEMO_X &&
	    hwtr_grow((void **)&st->mx, &st->cmx, st->nmx + nx, 1) < 0))
		return (-1);
	m->pool = (uint32_t)st->nmpool;
	memcpy(st->mpool + st->nmpool, g, k * sizeof(*g));
	memcpy(st->mpool + st->nmpool + k, bi, (k - 2) * sizeof(*bi));
	st->nmpool += 2 * k;
	memset(m->x, 0, sizeof(m->x));
	if (nx <= IX_SMEMO_X)
		memcpy(m->x, x, nx);
	else {
		xoff = (uint32_t)st->nmx;
		memcpy(m->x, &xoff, sizeof(xoff));
		memcpy(st->mx + st->nmx, x, nx);
		st->nmx += nx;
	}
	m->xlen = (uint8_t)nx;
	m->insn = (uint32_t)insn;
	m->k = (uint16_t)k;
	m->g0 = g[0];
	m->g1 = g[1];
	m->gpre = g[k - 2];
	m->glast = g[k - 1];
	m->filled = 1;
	return (1);
}

/*
 * Whether memo @m (its bytes at @q) may be applied at once: its state,
 * worked out when unknown or when a block's emask changed since.
 */
static IX_APART int
memo_check(struct ix_stitch *st, const struct ix_seg_out *seg,
    const uint8_t *q, struct ix_smemo *m)
{
	const uint32_t *g;
	int rc;
	uint16_t i;

	if (m->state == IX_SM_NEVER)
		return (0);
	if (!m->filled) {
		if ((rc = memo_fill(st, seg, q, m->len, m)) <= 0) {
			if (rc < 0 || ++m->tries >= IX_MEMO_TRIES)
				m->state = IX_SM_NEVER;
			return (0);
		}
	}
	/* Nothing on the way works on the call stack. */
	g = st->mpool + m->pool;
	for (i = 1; i + 1 < m->k; i++)
		if ((st->hot[g[i - 1]].flow & (HF_STACK |
		    st->hot[g[i]].emask)) != 0) {
			m->state = IX_SM_NEVER;
			return (0);
		}
	m->state = IX_SM_OK;
	m->gen = st->hot_gen;
	return (1);
}

/*
 * The common case of stitch.c's next_run(), flush_pend() and add_run(),
 * for as long as it lasts (fast_ok() holds when it starts): the next
 * operation is a block of the segment whose global id is known and which
 * nothing may continue, the block held back runs after the previous one
 * as it did before (a successor remembered), into a branch that does
 * nothing to the call stack, not for the first time in the stream, and
 * its chunk has room.  It is counted and the new one held back in its
 * place.  Returns before anything else, at *@posp, for the general path
 * to do: so that nothing here calls a function and every variable stays
 * in a register.  A chunk starts at the position it is made at: its
 * blocks and instructions are the position less its start.
 */
struct fast {
	uint8_t		*out;
	int64_t		insn, room;
	uint32_t	prev, cur;
	const struct ix_hot *h;
	struct ix_hot	*hc;
};

/* Block f->cur counted, block @g held back in its place: 0; or -1. */
static IX_HOT int
fast_step(struct fast *f, struct ix_hot *hot, struct ix_branch *br,
    uint32_t g)
{
	const struct ix_hot *h = f->h;
	struct ix_hot *hc = f->hc;
	uint64_t v;
	int64_t d;

	if ((h->flow & (HF_STACK | hc->emask)) != 0 || f->room == 0 ||
	    hc->count == 0)
		return (-1);
	if (h->to[0] == f->cur + 1)
		br[h->br[0]].count++;
	else if (h->to[1] == f->cur + 1)
		br[h->br[1]].count++;
	else
		return (-1);
	d = (int64_t)f->cur - f->prev - 1;
	v = ((uint64_t)d << 1) ^ (uint64_t)(d >> 63);
	while (v >= 0x80) {
		*f->out++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*f->out++ = (uint8_t)v;
	f->room--;
	f->insn += hc->ninsn;
	hc->count++;
	f->prev = f->cur;
	f->cur = g;
	f->h = hc;
	f->hc = &hot[g];
	return (0);
}

void
ix_stitch_run_fast(struct ix_stitch *st, const struct ix_seg_out *seg,
    size_t *posp, int64_t cblocks)
{
	const uint8_t *p = seg->ops.p + *posp, *q;
	const uint8_t *end = seg->ops.p + seg->ops.len, *lim = end - 1;
	const uint8_t *sp = NULL, *mb;
	const int64_t *lmap = st->lmap;
	struct ix_hot *hot = st->hot;
	struct ix_branch *br = st->branches;
	struct ix_chunk *ch = &st->chunk;
	struct ix_smemo *m;
	struct fast f;
	uint32_t gen = st->hot_gen;
	size_t held = SIZE_MAX;		/* the local id now held back */

	f.out = ch->data.p + ch->data.len;
	f.insn = st->insn;
	f.room = ch->seq + cblocks - st->seq;
	f.prev = (uint32_t)st->prev;
	f.cur = (uint32_t)lmap[st->pend_lid];
	f.h = &hot[f.prev];
	f.hc = &hot[f.cur];
	/* A memo's blocks left by the general path: them first. */
	if (st->mqn != 0) {
		sp = p;
		p = st->mq;
		lim = end = p + st->mqn;
	}
	/*
	 * The segment's last byte goes to the general path: an id's two
	 * bytes read.  A memo's bytes (@sp: where the segment's go on) are
	 * whole blocks.
	 */
	for (;;) {
		uint64_t id;
		int64_t g;
		size_t nl;

		if (p >= lim) {
			if (sp == NULL)
				break;
			p = sp;
			sp = NULL;
			end = seg->ops.p + seg->ops.len;
			lim = end - 1;
			continue;
		}
		if (p[0] == IX_MEMO_BYTE) {
			/* id << 1 | new, [len, bytes]: ids of two bytes. */
			if (p[1] < 0x80) {
				id = p[1];
				q = p + 2;
			} else if (p + 2 < end && p[2] < 0x80) {
				id = (p[1] & 0x7f) | (uint64_t)p[2] << 7;
				q = p + 3;
			} else
				break;
			if ((id >> 1) >= seg->nmemo)
				break;
			m = &st->memo[id >> 1];
			/* The next memo's line, while this one is applied. */
			if (q + 2 < end && q[0] == IX_MEMO_BYTE) {
				nl = q[1] < 0x80 ? q[1] :
				    (q[1] & 0x7f) | (size_t)q[2] << 7;
				if ((nl >> 1) < seg->nmemo)
					__builtin_prefetch(&st->memo[nl >> 1]);
			}
			if ((id & 1) && memo_take(st, seg, &q, m) < 0)
				break;
			if (m->len == 0)
				break;
			/* The memo's bytes; the segment's go on at q. */
			mb = st->mbytes + (size_t)(id >> 1) * IX_MEMO_STRIDE;
			if ((m->state != IX_SM_OK || m->gen != gen) &&
			    (m->state == IX_SM_NEVER ||
			    !memo_check(st, seg, mb, m))) {
				/* Its blocks one by one. */
				sp = q;
				p = mb;
				lim = end = mb + m->len;
				continue;
			}
			if (f.room < m->k) {
				/* Its blocks one by one. */
				sp = q;
				p = mb;
				lim = end = mb + m->len;
				continue;
			}
			if (fast_step(&f, hot, br, m->g0) < 0) {
				sp = q;
				p = mb;
				end = mb + m->len;
				break;
			}
			/* b0 and b1 as any, then the rest at once. */
			if (fast_step(&f, hot, br, m->g1) < 0) {
				sp = q;
				p = mb + m->off1;
				end = mb + m->len;
				held = m->l0;
				break;
			}
			assert(f.out + IX_SMEMO_X <= ch->data.p +
			    ch->data.cap);
			if (m->xlen <= IX_SMEMO_X)
				memcpy(f.out, m->x, IX_SMEMO_X);
			else
				memcpy(f.out, st->mx + memo_xoff(m), m->xlen);
			f.out += m->xlen;
			f.room -= m->k - 2;
			f.insn += m->insn;
			if (++m->uses == UINT32_MAX)
				memo_sum(st, m);
			f.prev = m->gpre;
			f.cur = m->glast;
			f.h = &hot[f.prev];
			f.hc = &hot[f.cur];
			held = m->llast;
			p = q;
			continue;
		}
		/*
		 * The next operation: a block of one or two bytes (lmap has
		 * -1 past the segment's blocks for the ids of two bytes).
		 */
		if (p[0] & 1)
			break;
		if (p[0] < 0x80)
			nl = p[0] >> 1;
		else if (p[1] < 0x80)
			nl = ((p[0] & 0x7f) | (size_t)p[1] << 7) >> 1;
		else
			break;
		if ((g = lmap[nl]) < 0)
			break;
		/* Block cur: what add_run() would do, or leave it. */
		if (fast_step(&f, hot, br, (uint32_t)g) < 0)
			break;
		p += 1 + (p[0] >> 7);
		held = nl;
	}
	st->seq = ch->seq + cblocks - f.room;
	st->insn = f.insn;
	st->chunk_prev = st->prev = f.prev;
	ch->data.len = (size_t)(f.out - ch->data.p);
	ch->nblocks = (uint32_t)(st->seq - ch->seq);
	ch->ninsns = f.insn - ch->insn;
	/* The block now held back is the last one read. */
	if (held != SIZE_MAX) {
		st->pend_lid = (int64_t)held;
		st->pend = &seg->blocks[held];
	}
	/* In a memo: the rest of it for the general path first. */
	if (sp != NULL) {
		st->mq = p;
		st->mqn = (size_t)(end - p);
		p = sp;
	} else
		st->mqn = 0;
	*posp = (size_t)(p - seg->ops.p);
}
