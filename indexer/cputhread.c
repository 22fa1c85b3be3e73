/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * CPU mode: per-thread histories out of per-CPU streams (ix_cputhread.h).
 *
 * A CPU stream's decoder runs through whatever ran on the CPU, one thread
 * after another; the switch records say from when to when each thread
 * owned it (cpusplit.c's parts).  The decoder's output is a list of
 * operations (hwtr_ix.h: blocks, times, events) in which the times are
 * the decoder's own; each operation belongs to the part whose time it
 * comes in.  So the writer sorts a CPU stream's operations before the
 * stitcher sees them:
 *
 *   - what no thread owns (before the first time, a part whose owner
 *     the sideband does not name) is stitched at once as the stream's
 *     own history, as any stream is;
 *   - what a thread owns goes, with the blocks it names, to a spill file
 *     (unlinked at once, in the run's private directory): a fragment per
 *     part and segment.
 *
 * A thread's parts are in time order on each CPU but interleave across
 * CPUs, which are decoded one after another; only once every stream is
 * decoded is a thread's history complete.  Then each thread's fragments
 * are replayed through the stitcher, its parts in time order across
 * CPUs, as the stitcher replays a stream's segments: the thread gets its
 * own positions (seq, insn from 0), its call stack (a call made before a
 * switch returns after it, on this or another CPU), its branches, block
 * counts, timestamps and events, in rows of its own.  Between two parts
 * the stitcher is told that no branch leads from the last block into the
 * next (the thread was not running: what happened in between is the
 * kernel's switch, traced or not, and where exactly the switch fell is
 * known only to the precision of the trace's timing packets); the call
 * stack is kept.  Whether tracing resumed where it was disabled is the
 * thread's question, not the CPU's (a CPU's decoder sees another thread
 * enable tracing elsewhere): those events are decided by the stitcher
 * against the thread's own last disable.
 *
 * The alternative, a stitcher state per thread switched at each part
 * boundary while a CPU stream is stitched, would number a thread's blocks
 * in the order the CPUs are decoded, not in time order: a thread that ran
 * on CPU 0, then 3, then 0 would get CPU 0's two parts first.  Sorting
 * first and stitching each thread once keeps one stitcher, gives the
 * numbering by time, and holds in memory no more than one fragment.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hwtr_common.h"
#include "hwtr_ix.h"
#include "ix_run.h"
#include "ix_image.h"
#include "ix_write.h"
#include "ix_cputhread.h"
#include "segout.h"

/* A fragment being built: the operations of one part in one segment. */
struct frag {
	const struct ix_seg_out *seg;
	int64_t		*fmap;		/* segment-local id -> fragment's, -1 */
	uint32_t	*lids;		/* the fragment's blocks, in order */
	size_t		nlids, clids;
	struct ix_buf	ops;
	struct ix_buf	out;		/* serialized */
};

static int
getv(const uint8_t *p, size_t len, size_t *pos, uint64_t *v)
{
	uint64_t x = 0;
	int shift = 0;

	while (*pos < len && shift < 64) {
		uint8_t b = p[(*pos)++];

		x |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80)) {
			*v = x;
			return (0);
		}
	}
	return (-HWTR_E_FORMAT);
}

/* Whether part @k is a thread's history (rather than the stream's). */
static int
owned(const struct run *r, size_t k)
{
	return (k != SIZE_MAX && r->cs.parts[k].owned);
}

/*
 * The first segment of a split stream: sorted when the stream is one unit
 * (an Intel PT buffer; a CoreSight buffer of one trace ID), its parts
 * owned by the threads the sideband names, unless such a thread has a
 * stream of its own (its history is that stream's).
 */
static void
demux_init(struct run *r, struct ix_csplit *sp)
{
	struct ix_cpart *p;
	size_t i;

	sp->demux = ix_stream_units(r, sp->stream) == 1 ? 1 : -1;
	for (i = sp->p0; i < sp->p1; i++) {
		p = &r->cs.parts[i];
		p->owned = sp->demux > 0 && p->thread > 0 &&
		    (size_t)p->thread <= r->im->nthreads &&
		    r->im->threads[p->thread - 1].stream < 0;
	}
}

/* The fragment's id of segment block @lid. */
static int
frag_block(struct frag *f, uint64_t lid, uint64_t *fid)
{
	if (f->fmap[lid] < 0) {
		if (hwtr_grow((void **)&f->lids, &f->clids, f->nlids + 1,
		    sizeof(*f->lids)) < 0)
			return (-HWTR_E_NOMEM);
		f->fmap[lid] = (int64_t)f->nlids;
		f->lids[f->nlids++] = (uint32_t)lid;
	}
	*fid = (uint64_t)f->fmap[lid];
	return (0);
}

static void
frag_reset(struct frag *f)
{
	size_t i;

	for (i = 0; i < f->nlids; i++)
		f->fmap[f->lids[i]] = -1;
	f->nlids = 0;
	f->ops.len = 0;
}

/* Stitch operations @ops over blocks @b (@nb) into the current history. */
static int
stitch_ops(struct run *r, const struct ix_sblock *b, size_t nb,
    const uint8_t *ops, size_t len)
{
	struct ix_seg_out seg;

	memset(&seg, 0, sizeof(seg));
	seg.blocks = (struct ix_sblock *)(uintptr_t)b;
	seg.nblocks = nb;
	seg.ops.p = (uint8_t *)(uintptr_t)ops;
	seg.ops.len = len;
	return (ix_stitch_segment(&r->st, &seg));
}

/* No branch into the next block: the block held back is counted. */
static int
stitch_break(struct run *r)
{
	uint8_t op = (uint8_t)(IX_OP_NOPREV << 1 | 1);

	return (stitch_ops(r, NULL, 0, &op, 1));
}

static void
part_pos(struct ix_cpart *p, int first, const struct ix_stitch *st)
{
	if (first) {
		p->has_seq = 1;
		p->first_seq = st->seq;
		p->first_insn = st->insn;
	}
	p->end_seq = st->seq;
	p->end_insn = st->insn;
}

/* The stream's own history: part @k's fragment, stitched now. */
static int
own_frag(struct run *r, struct ix_csplit *sp, struct frag *f, size_t k)
{
	struct ix_sblock *bl;
	size_t i;
	int rc;

	if (sp->broken || k != sp->last_own) {
		if ((rc = stitch_break(r)) < 0)
			return (rc);
		if (sp->last_own != SIZE_MAX && sp->last_own != k)
			part_pos(&r->cs.parts[sp->last_own], 0, &r->st);
		if (k != SIZE_MAX && k != sp->last_own)
			part_pos(&r->cs.parts[k], 1, &r->st);
	}
	sp->broken = 0;
	sp->last_own = k;
	if ((bl = calloc(f->nlids + 1, sizeof(*bl))) == NULL)
		return (-HWTR_E_NOMEM);
	for (i = 0; i < f->nlids; i++)
		bl[i] = f->seg->blocks[f->lids[i]];
	rc = stitch_ops(r, bl, f->nlids, f->ops.p, f->ops.len);
	free(bl);
	return (rc);
}

static int
put_v(struct ix_buf *b, uint64_t v)
{
	return (ix_buf_varint(b, v));
}

/*
 * A thread's fragment into the spill file: its blocks (what the stitcher
 * reads of them) and its operations.
 */
static int
spill_frag(struct run *r, struct frag *f, size_t k)
{
	struct ix_cpusplit *cs = &r->cs;
	struct ix_cpart *p = &cs->parts[k];
	struct ix_buf *o = &f->out;
	struct ix_cfrag *fr;
	char path[sizeof(r->tmpdir) + 16];
	const uint8_t *w;
	size_t i, left;
	ssize_t n;
	uint64_t off;
	int rc = 0;

	if (cs->spill < 0) {
		snprintf(path, sizeof(path), "%s/cpu.XXXXXX", r->tmpdir);
		if ((cs->spill = mkstemp(path)) < 0) {
			ix_err(r->ix, "cannot create '%s': %s", path,
			    strerror(errno));
			return (-HWTR_E_IO);
		}
		unlink(path);
	}
	o->len = 0;
	rc = put_v(o, f->nlids);
	for (i = 0; i < f->nlids && rc == 0; i++) {
		const struct ix_sblock *b = &f->seg->blocks[f->lids[i]];
		uint8_t fl = (b->lens != NULL ? 1 : 0) |
		    (b->code != NULL ? 2 : 0);

		if ((rc = put_v(o, b->ip)) < 0 ||
		    (rc = put_v(o, b->end_ip)) < 0 ||
		    (rc = put_v(o, (uint64_t)(uint32_t)b->isid)) < 0 ||
		    (rc = put_v(o, b->ninsn)) < 0 ||
		    (rc = put_v(o, b->size)) < 0 ||
		    (rc = ix_buf_put(o, &b->mode, 1)) < 0 ||
		    (rc = ix_buf_put(o, &b->cls, 1)) < 0 ||
		    (rc = ix_buf_put(o, &fl, 1)) < 0)
			break;
		if (b->lens != NULL && (rc = ix_buf_put(o, b->lens,
		    b->ninsn)) < 0)
			break;
		if (b->code != NULL && (rc = ix_buf_put(o, b->code,
		    b->size)) < 0)
			break;
	}
	if (rc < 0 || put_v(o, f->ops.len) < 0 ||
	    ix_buf_put(o, f->ops.p, f->ops.len) < 0)
		return (-HWTR_E_NOMEM);
	off = cs->spill_len;
	for (w = o->p, left = o->len; left > 0; w += n, left -= (size_t)n) {
		n = pwrite(cs->spill, w, left, (off_t)(off + (uint64_t)(w -
		    o->p)));
		if (n <= 0) {
			ix_err(r->ix, "CPU mode: cannot write the spill file: "
			    "%s", n < 0 ? strerror(errno) : "short write");
			return (-HWTR_E_IO);
		}
	}
	cs->spill_len += o->len;
	if (hwtr_grow((void **)&cs->frags, &cs->cfrags, cs->nfrags + 1,
	    sizeof(*fr)) < 0)
		return (-HWTR_E_NOMEM);
	fr = &cs->frags[cs->nfrags];
	fr->off = off;
	fr->len = o->len;
	fr->next = SIZE_MAX;
	if (p->fragn != SIZE_MAX)
		cs->frags[p->fragn].next = cs->nfrags;
	else
		p->frag0 = cs->nfrags;
	p->fragn = cs->nfrags++;
	return (0);
}

/* The fragment so far is part @k's. */
static int
frag_close(struct run *r, struct ix_csplit *sp, struct frag *f, size_t k)
{
	int rc;

	if (f->ops.len == 0)
		return (0);
	if (owned(r, k)) {
		rc = spill_frag(r, f, k);
		sp->broken = 1;
	} else
		rc = own_frag(r, sp, f, k);
	frag_reset(f);
	return (rc);
}

/*
 * An event of the decoder: copied, but for a start of tracing, whose
 * "resumed" or "enabled" the stitcher decides against the history's own
 * last disable (flag 8).
 */
static int
copy_event(struct frag *f, const uint8_t *p, size_t len, size_t *pos)
{
	size_t at = *pos;
	uint64_t kind, flags, v, n;

	if (getv(p, len, pos, &kind) < 0 || getv(p, len, pos, &flags) < 0 ||
	    ((flags & 1) && getv(p, len, pos, &v) < 0) ||
	    ((flags & 2) && getv(p, len, pos, &v) < 0))
		return (-HWTR_E_FORMAT);
	if (flags & 4) {
		if (getv(p, len, pos, &n) < 0 || n > len - *pos)
			return (-HWTR_E_FORMAT);
		*pos += n;
	}
	if ((kind == 1 || kind == 2) && (flags & 1) && !(flags & 8)) {
		/* kind, flags | 8, then the rest as it was. */
		size_t rest = at;

		(void)getv(p, len, &rest, &v);
		(void)getv(p, len, &rest, &v);
		if (put_v(&f->ops, 2) < 0 || put_v(&f->ops, flags | 8) < 0 ||
		    ix_buf_put(&f->ops, p + rest, *pos - rest) < 0)
			return (-HWTR_E_NOMEM);
		return (0);
	}
	if (ix_buf_put(&f->ops, p + at, *pos - at) < 0)
		return (-HWTR_E_NOMEM);
	return (0);
}

/* Sort the operations of @seg, a segment of split stream @sp. */
static int
demux(struct run *r, struct ix_csplit *sp, const struct ix_seg_out *seg)
{
	const uint8_t *p = seg->ops.p;
	size_t len = seg->ops.len, pos = 0, at, i;
	struct ix_cpart *np;
	struct frag f;
	uint64_t v, a, fid;
	size_t k;
	int rc = 0;

	memset(&f, 0, sizeof(f));
	f.seg = seg;
	if ((f.fmap = malloc((seg->nblocks + 1) * sizeof(*f.fmap))) == NULL)
		return (-HWTR_E_NOMEM);
	for (i = 0; i < seg->nblocks; i++)
		f.fmap[i] = -1;
	while (pos < len && rc == 0) {
		at = pos;
		if ((rc = getv(p, len, &pos, &v)) < 0)
			break;
		if (!(v & 1)) {
			if ((v >> 1) >= seg->nblocks) {
				rc = -HWTR_E_FORMAT;
				break;
			}
			if ((rc = frag_block(&f, v >> 1, &fid)) == 0 &&
			    put_v(&f.ops, fid << 1) < 0)
				rc = -HWTR_E_NOMEM;
			continue;
		}
		switch (v >> 1) {
		case IX_OP_TIME:
		case IX_OP_TSC:
		case IX_OP_SETTSC:
			if ((rc = getv(p, len, &pos, &a)) < 0)
				break;
			np = ix_cpusplit_part_at(&r->cs, sp->p0, sp->p1, a);
			k = np == NULL ? SIZE_MAX : (size_t)(np - r->cs.parts);
			if (k != sp->cur) {
				if ((rc = frag_close(r, sp, &f, sp->cur)) < 0)
					break;
				sp->cur = k;
			}
			if (np != NULL && !np->has_time) {
				np->has_time = 1;
				np->first_time = a;
			}
			break;
		case IX_OP_EVENT:
			if (ix_buf_put(&f.ops, p + at, pos - at) < 0)
				rc = -HWTR_E_NOMEM;
			else
				rc = copy_event(&f, p, len, &pos);
			continue;
		case IX_OP_ERROR:
			sp->errors++;
			if (owned(r, sp->cur))
				sp->errors_owned++;
			break;
		case IX_OP_UNDECODED:
			if ((rc = getv(p, len, &pos, &a)) == 0)
				sp->undecoded += a;
			break;
		case IX_OP_CYCLES:
			if ((rc = getv(p, len, &pos, &a)) == 0)
				rc = getv(p, len, &pos, &a);
			break;
		case IX_OP_NOPREV:
		case IX_OP_GAP:
		case IX_OP_ASYNC:
		case IX_OP_RESET:
			break;
		default:
			rc = -HWTR_E_FORMAT;
			break;
		}
		if (rc == 0 && ix_buf_put(&f.ops, p + at, pos - at) < 0)
			rc = -HWTR_E_NOMEM;
	}
	if (rc == 0)
		rc = frag_close(r, sp, &f, sp->cur);
	free(f.fmap);
	free(f.lids);
	free(f.ops.p);
	free(f.out.p);
	if (rc == -HWTR_E_FORMAT)
		ix_err(r->ix, "CPU mode: a decoded segment of stream %zu is "
		    "malformed", sp->stream);
	return (rc);
}

int
ix_cpu_segment(struct run *r, struct ix_seg_out *seg)
{
	struct ix_csplit *sp;

	sp = ix_cpusplit_stream(&r->cs, r->ustream[r->wr->cur]);
	if (sp != NULL && sp->demux == 0)
		demux_init(r, sp);
	if (sp == NULL || sp->demux < 0)
		return (ix_stitch_segment(&r->st, seg));
	return (demux(r, sp, seg));
}

/* ----------------------------------------------------------------- */
/* The threads' histories                                             */

/* Read fragment @fr and stitch it. */
static int
replay_frag(struct run *r, const struct ix_cfrag *fr, uint8_t **bufp,
    size_t *capp, struct ix_sblock **blp, size_t *cblp)
{
	struct ix_sblock *b;
	uint8_t *p;
	size_t pos = 0, done = 0, i, nb;
	uint64_t v, n;
	ssize_t got;
	int rc;

	if (hwtr_grow((void **)bufp, capp, fr->len + 1, 1) < 0)
		return (-HWTR_E_NOMEM);
	p = *bufp;
	while (done < fr->len) {
		got = pread(r->cs.spill, p + done, fr->len - done,
		    (off_t)(fr->off + done));
		if (got <= 0) {
			ix_err(r->ix, "CPU mode: cannot read the spill file: "
			    "%s", got < 0 ? strerror(errno) : "short read");
			return (-HWTR_E_IO);
		}
		done += (size_t)got;
	}
	if (getv(p, fr->len, &pos, &v) < 0 || v > fr->len)
		return (-HWTR_E_FORMAT);
	nb = (size_t)v;
	if (hwtr_grow((void **)blp, cblp, nb + 1, sizeof(**blp)) < 0)
		return (-HWTR_E_NOMEM);
	for (i = 0; i < nb; i++) {
		uint64_t ip, end, isid, ninsn, size;
		uint8_t fl;

		b = &(*blp)[i];
		memset(b, 0, sizeof(*b));
		if (getv(p, fr->len, &pos, &ip) < 0 ||
		    getv(p, fr->len, &pos, &end) < 0 ||
		    getv(p, fr->len, &pos, &isid) < 0 ||
		    getv(p, fr->len, &pos, &ninsn) < 0 ||
		    getv(p, fr->len, &pos, &size) < 0 ||
		    fr->len - pos < 3 || ninsn > UINT16_MAX)
			return (-HWTR_E_FORMAT);
		b->ip = ip;
		b->end_ip = end;
		b->isid = (int)(uint32_t)isid;
		b->ninsn = (uint16_t)ninsn;
		b->size = (uint32_t)size;
		b->mode = p[pos++];
		b->cls = p[pos++];
		fl = p[pos++];
		if (fl & 1) {
			if (fr->len - pos < ninsn)
				return (-HWTR_E_FORMAT);
			b->lens = p + pos;
			pos += ninsn;
		}
		if (fl & 2) {
			if (fr->len - pos < size)
				return (-HWTR_E_FORMAT);
			b->code = p + pos;
			pos += size;
		}
	}
	if (getv(p, fr->len, &pos, &n) < 0 || n != fr->len - pos)
		return (-HWTR_E_FORMAT);
	rc = stitch_ops(r, *blp, nb, p + pos, (size_t)n);
	return (rc);
}

/*
 * Owned parts by thread, then by the time their trace begins: the
 * decoder's first time in the part, else its start (none first).  Not by
 * the start alone: a part starts when the thread before it was switched
 * out, which need not be when this one was switched in (a CPU whose
 * switch records were lost, or that no record says went idle), and the
 * thread may have run on another CPU in between.
 */
static int
part_cmp(const void *a, const void *b, void *arg)
{
	const struct ix_cpusplit *cs = arg;
	const struct ix_cpart *x = &cs->parts[*(const size_t *)a];
	const struct ix_cpart *y = &cs->parts[*(const size_t *)b];
	int hx = x->has_time || x->has_start, hy = y->has_time || y->has_start;
	uint64_t tx = x->has_time ? x->first_time : x->start_tsc;
	uint64_t ty = y->has_time ? y->first_time : y->start_tsc;

	if (x->thread != y->thread)
		return (x->thread < y->thread ? -1 : 1);
	if (hx != hy)
		return (hx ? 1 : -1);
	if (hx && tx != ty)
		return (tx < ty ? -1 : 1);
	if (x->stream != y->stream)
		return (x->stream < y->stream ? -1 : 1);
	return (x < y ? -1 : x > y);
}

/* A thread's branches and block counts, as ix_end_stream() writes them. */
static int
thread_rows(struct run *r, int64_t thread)
{
	struct ix_stitch *st = &r->st;
	sqlite3_stmt *br = r->wr->s_br.st, *bc = r->wr->s_bc.st;
	size_t i;

	for (i = 0; i < st->nbranches; i++) {
		const struct ix_branch *b = &st->branches[i];

		sqlite3_bind_int64(br, 1, thread);
		sqlite3_bind_int64(br, 2, b->from);
		sqlite3_bind_int64(br, 3, b->to);
		sqlite3_bind_int64(br, 4, (int64_t)b->from_ip);
		sqlite3_bind_int64(br, 5, (int64_t)b->to_ip);
		sqlite3_bind_text(br, 6, ix_branch_kinds[b->kind], -1,
		    SQLITE_STATIC);
		sqlite3_bind_int64(br, 7, (int64_t)b->count);
		if (sqlite3_step(br) != SQLITE_DONE)
			goto fail;
		sqlite3_reset(br);
	}
	for (i = 0; i < st->ntouched; i++) {
		sqlite3_bind_int64(bc, 1, thread);
		sqlite3_bind_int64(bc, 2, st->touched[i]);
		sqlite3_bind_int64(bc, 3, (int64_t)st->scount[st->touched[i]]);
		if (sqlite3_step(bc) != SQLITE_DONE)
			goto fail;
		sqlite3_reset(bc);
	}
	return (0);
fail:
	ix_err(r->ix, "database: CPU mode thread %lld: %s", (long long)thread,
	    sqlite3_errmsg(r->wr->db));
	sqlite3_reset(br);
	sqlite3_reset(bc);
	return (-HWTR_E_DB);
}

/* Thread @list[0] (@n parts of it): its history, its rows. */
static int
stitch_thread(struct run *r, const size_t *list, size_t n, uint8_t **bufp,
    size_t *capp, struct ix_sblock **blp, size_t *cblp)
{
	struct ix_cpusplit *cs = &r->cs;
	struct ix_stitch *st = &r->st;
	struct ix_cpart *p, *prev = NULL;
	struct ix_cthread *t;
	size_t i, f;
	int rc = 0;

	r->wr->ct_thread = cs->parts[list[0]].thread;
	ix_stitch_begin(st);
	st->merge = hwtr_ar_stream(r->ar, cs->parts[list[0]].stream)->format ==
	    HWTR_TF_INTEL_PT;
	for (i = 0; i < n && rc == 0; i++) {
		p = &cs->parts[list[i]];
		if (p->db_stream != r->wr->ct_stream) {
			if ((rc = ix_flush_pending(r)) < 0)
				break;
			r->wr->ct_stream = p->db_stream;
		}
		if ((rc = stitch_break(r)) < 0)
			break;
		if (prev != NULL)
			part_pos(prev, 0, st);
		part_pos(p, 1, st);
		for (f = p->frag0; f != SIZE_MAX && rc == 0;
		    f = cs->frags[f].next)
			rc = replay_frag(r, &cs->frags[f], bufp, capp, blp,
			    cblp);
		prev = p;
		if (r->ix->opts.cancel != NULL && *r->ix->opts.cancel)
			rc = -HWTR_E_INTR;
	}
	if (rc == 0)
		rc = ix_stitch_end(st);
	if (rc == 0 && prev != NULL)
		part_pos(prev, 0, st);
	if (rc == 0)
		rc = ix_flush_pending(r);
	if (rc == 0)
		rc = thread_rows(r, r->wr->ct_thread);
	if (rc < 0)
		return (rc == -HWTR_E_FORMAT ? (ix_err(r->ix, "CPU mode: the "
		    "spill file is damaged"), rc) : rc);
	t = &cs->threads[cs->nthreads++];
	memset(t, 0, sizeof(*t));
	t->thread = r->wr->ct_thread;
	t->blocks = st->exec_blocks;
	t->insns = st->exec_insns;
	t->errors = st->errors;
	t->gaps = st->gaps;
	t->calls = st->ncalls;
	t->max_depth = st->max_depth;
	t->has_first = st->has_first;
	t->has_last = st->has_last;
	t->first_tsc = st->first_tsc;
	t->last_tsc = st->last_tsc;
	ix_count_history(r, st);
	return (0);
}

int
ix_cpu_threads(struct run *r)
{
	struct ix_cpusplit *cs = &r->cs;
	struct ix_sblock *bl = NULL;
	uint8_t *buf = NULL;
	size_t *list = NULL, n = 0, i, j, cap = 0, cbl = 0;
	void (*time_cb)(void *, int64_t, int64_t, uint64_t);
	int rc = 0;

	/* Each sorted stream: its totals, its own history's last part. */
	for (i = 0; i < cs->nstreams; i++) {
		struct ix_csplit *sp = &cs->streams[i];
		struct ix_ures *o = &r->ures[r->ufirst[sp->stream]];

		if (sp->demux <= 0)
			continue;
		if (sp->last_own != SIZE_MAX) {
			cs->parts[sp->last_own].end_seq = o->exec_blocks;
			cs->parts[sp->last_own].end_insn = o->exec_insns;
		}
		o->errors = sp->errors;
		o->undecoded = sp->undecoded;
	}
	if (cs->nfrags == 0)
		return (0);
	if ((list = calloc(cs->nparts + 1, sizeof(*list))) == NULL ||
	    (cs->threads = calloc(cs->nparts + 1,
	    sizeof(*cs->threads))) == NULL) {
		free(list);
		return (-HWTR_E_NOMEM);
	}
	for (i = 0; i < cs->nparts; i++)
		if (cs->parts[i].owned)
			list[n++] = i;
	qsort_r(list, n, sizeof(*list), part_cmp, cs);
	if ((rc = ix_flush_pending(r)) < 0)
		goto out;
	/* Positions are the thread's now: cpusplit.c's own, not a unit's. */
	time_cb = r->st.sink.time;
	r->st.sink.time = NULL;
	for (i = 0; i < n && rc == 0; i = j) {
		for (j = i + 1; j < n && cs->parts[list[j]].thread ==
		    cs->parts[list[i]].thread; j++)
			;
		rc = stitch_thread(r, list + i, j - i, &buf, &cap, &bl, &cbl);
	}
	r->st.sink.time = time_cb;
	r->wr->ct_thread = 0;
	r->wr->ct_stream = 0;
out:
	free(list);
	free(buf);
	free(bl);
	return (rc);
}
