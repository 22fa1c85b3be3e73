/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The CoreSight segment decoder: a buffer's elements from OpenCSD
 * (cs_decode.c) into each unit's blocks and operations, as decode.c does
 * for Intel PT with libipt: the segment decoder ix_segdec_opencsd
 * (segdec.h), writing through segout.h.
 */

#include <assert.h>
#include <errno.h>
#include <intel-pt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwtr_common.h"
#include "hwtr_ix.h"
#include "hwtr_stream.h"
#include "segdec.h"
#include "segout.h"

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

/* A unit's decoder state. */
struct cs_dec {
	struct ix_segw	w;		/* its output */
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
};

/* A failure of the unit's out (the first one is kept); returns @rc. */
static int
cs_fail(struct cs_dec *d, int rc, const char *what, const char *detail)
{
	return (ix_segw_fail(&d->w, rc, what, detail));
}

struct cs_run {
	struct cs_dec	*decs;		/* one per unit */
	size_t		ndecs;
	int16_t		route[256];	/* trace ID -> unit, -1 */
	uint64_t	base;		/* stream offset of the piece */
	const struct ix_cs_mem *mem;
	size_t		nmem;
	size_t		batch;		/* in->cs_batch */
	int		rc;
	/* The buffer offset of the first element after a sync. */
	int		synced;
	uint64_t	sync;
};

/*
 * The section (ix.c's image section id) of the mapping holding @ip, 0 for
 * none: blocks in an ELF image get its symbols and lines.  @d remembers
 * the last mapping found; ranges mostly stay in one.
 */
static int
cs_isid(struct cs_dec *d, uint64_t ip)
{
	const struct ix_seg_in *in = d->w.in;
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
cs_touch(struct cs_dec *d)
{
	if (!d->touched && d->w.in->cs_touched != NULL)
		__atomic_store_n(&d->w.in->cs_touched[d->unit], 1,
		    __ATOMIC_RELAXED);
	d->touched = 1;
}

static int
cs_event(struct cs_dec *d, const char *kind, int has_ip, uint64_t ip,
    const char *detail, uint64_t off)
{
	cs_touch(d);
	return (ix_segw_event_at(&d->w, kind, has_ip, ip, detail, 1, off));
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
cs_put_block(struct cs_dec *d, int64_t id)
{
	struct ix_sblock *b;

	if (d->w.in->cs_batch == 0 || d->w.in->cs_publish == NULL)
		return (ix_segw_put(&d->w, (uint64_t)id << 1));
	if ((size_t)id >= d->cbmap) {
		size_t old = d->cbmap;

		if (hwtr_grow((void **)&d->bmap, &d->cbmap, (size_t)id + 1,
		    sizeof(*d->bmap)) < 0)
			return (cs_fail(d, -HWTR_E_NOMEM, "out of memory",
			    NULL));
		memset(d->bmap + old, 0, (d->cbmap - old) * sizeof(*d->bmap));
	}
	if (d->bmap[id] == 0) {
		if (hwtr_grow((void **)&d->bb, &d->cbb, d->nbb + 1,
		    sizeof(*d->bb)) < 0 || hwtr_grow((void **)&d->blid,
		    &d->cblid, d->nbb + 1, sizeof(*d->blid)) < 0)
			return (cs_fail(d, -HWTR_E_NOMEM, "out of memory",
			    NULL));
		b = &d->bb[d->nbb];
		*b = d->w.out->blocks[id];
		b->count = 0;
		b->last_to = b->last_br = 0;
		d->blid[d->nbb] = (uint32_t)id;
		d->bmap[id] = (uint32_t)++d->nbb;
	}
	return (ix_segw_put(&d->w, (uint64_t)(d->bmap[id] - 1) << 1));
}

/* Hand unit @u's batch (its operations so far) to the writer. */
static int
cs_publish(struct cs_dec *d, size_t u)
{
	struct ix_seg_out *b;
	size_t i;
	int rc;

	d->nelem = 0;
	if (d->w.out == NULL || d->w.out->ops.len == 0)
		return (0);
	if ((b = calloc(1, sizeof(*b))) == NULL) {
		/* The operations cannot be stitched with the unit's ids. */
		d->w.out->ops.len = 0;
		return (cs_fail(d, -HWTR_E_NOMEM, "out of memory", NULL));
	}
	b->borrowed = 1;
	b->trace_id = d->w.out->trace_id;
	b->format = d->w.out->format;
	b->blocks = d->bb;
	b->nblocks = d->nbb;
	b->cblocks = d->cbb;
	b->ops = d->w.out->ops;
	memset(&d->w.out->ops, 0, sizeof(d->w.out->ops));
	for (i = 0; i < d->nbb; i++)
		d->bmap[d->blid[i]] = 0;
	d->bb = NULL;
	d->nbb = d->cbb = 0;
	if ((rc = d->w.in->cs_publish(d->w.in->cs_publish_arg, u, b)) < 0)
		return (cs_fail(d, rc, rc == -HWTR_E_INTR ? "interrupted" :
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
cs_cycles(struct cs_dec *d, const struct ix_cs_elem *e)
{
	int cum = !(e->cc_elem == IX_CC_TIMESTAMP &&
	    (d->w.out->format == HWTR_TF_ETMV4 ||
	    d->w.out->format == HWTR_TF_ETE));
	int rc;

	if ((rc = ix_segw_op1(&d->w, IX_OP_CYCLES, e->cc)) < 0)
		return (rc);
	return (ix_segw_put(&d->w, (uint64_t)e->cc_elem << 1 | (uint64_t)cum));
}

static int
cs_emit(struct cs_run *cr, struct cs_dec *d, const struct ix_cs_elem *e)
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
		d->w.out->isa_seen |= proto.mode == IX_CS_T32 ? 4 :
		    proto.mode == IX_CS_A32 ? 2 : 1;
		before = d->w.out->nblocks;
		/*
		 * Most ranges follow the one before as they did last time:
		 * the previous block's last successor spares the hash lookup.
		 */
		b = d->cs_prev != 0 &&
		    d->w.out->blocks[d->cs_prev - 1].last_to != 0 ?
		    &d->w.out->blocks[d->w.out->blocks[d->cs_prev - 1].last_to -
		    1] : NULL;
		if (b != NULL && b->ip == proto.ip && b->ninsn == proto.ninsn &&
		    b->isid == proto.isid && b->mode == proto.mode)
			id = b - d->w.out->blocks;
		else if ((id = ix_segw_run_id(&d->w, &proto)) < 0)
			return ((int)id);
		if (d->cs_prev != 0)
			d->w.out->blocks[d->cs_prev - 1].last_to =
			    (uint32_t)id + 1;
		d->cs_prev = (uint32_t)id + 1;
		if (d->w.out->nblocks > before) {
			b = &d->w.out->blocks[id];
			if (proto.ninsn == e->ninsn &&
			    cs_block_code(cr, b, e->ninsn) < 0)
				return (cs_fail(d, -HWTR_E_NOMEM,
				    "out of memory", NULL));
			if (b->code == NULL)
				d->w.out->nocode++;
		}
		return (cs_put_block(d, id));
	case IX_CS_EXCEPTION:
		if ((rc = ix_segw_op(&d->w, IX_OP_ASYNC)) < 0)
			return (rc);
		snprintf(det, sizeof(det), "exception 0x%x", e->excnum);
		return (cs_event(d, "exception", e->en != 0, e->en, det, off));
	case IX_CS_EXC_RET:
		if ((rc = ix_segw_op(&d->w, IX_OP_ASYNC)) < 0)
			return (rc);
		return (cs_event(d, "exception-return", 0, 0, NULL, off));
	case IX_CS_NACC:
		if ((rc = ix_segw_op(&d->w, IX_OP_NOPREV)) < 0)
			return (rc);
		return (cs_event(d, "memory-not-accessible", 1, e->st, NULL,
		    off));
	case IX_CS_TIMESTAMP:
		return (ix_segw_op1(&d->w, IX_OP_SETTSC, e->ts));
	case IX_CS_MEMTRANS:
		/*
		 * ETE transactional memory (TME).  A failed transaction is
		 * unwound: execution goes on after its TSTART, not from the
		 * block before, so no branch leads into the next block.
		 * Trace that starts inside a transaction is a start.
		 */
		if (e->memtrans == IX_CS_TRANS_FAIL &&
		    (rc = ix_segw_op(&d->w, IX_OP_ASYNC)) < 0)
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
		if ((rc = ix_segw_op(&d->w, IX_OP_NOPREV)) < 0)
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
	if (!cr->synced && e->kind != IX_CS_NO_SYNC && e->kind !=
	    IX_CS_EOT && e->kind != IX_CS_OTHER) {
		cr->synced = 1;
		cr->sync = e->index;
	}
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

/*
 * A segment cut without a sync point (hwtr_stream.h, HWTR_SV_CS_CUT): a
 * decode error and a gap for each of the @nu units, which start over at
 * their next A-Sync; the first unit says so.
 */
static int
cs_blind(struct cs_run *cr, size_t nu)
{
	char msg[128];
	size_t u;
	int rc = 0;

	for (u = 0; u < nu && rc >= 0; u++)
		rc = ix_segw_op(&cr->decs[u].w, IX_OP_GAP);
	if (rc < 0 || nu == 0)
		return (rc);
	snprintf(msg, sizeof(msg), "stream longer than %u MiB cut without a "
	    "sync point: not decoded up to the next A-Sync",
	    HWTR_SV_SEG_MAX >> 20);
	cs_touch(&cr->decs[0]);
	if ((rc = ix_segw_op(&cr->decs[0].w, IX_OP_ERROR)) < 0)
		return (rc);
	return (cs_event(&cr->decs[0], "decode-error", 0, 0, msg, cr->base));
}

/* The archive's bytes OpenCSD may read: every mapping of an image here. */
static size_t
cs_mem_table(const struct ix_seg_in *in, struct ix_cs_mem *mem)
{
	size_t i, nmem = 0;

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
	return (nmem);
}

/*
 * Each unit's decoder writes its out; the first @nu are the buffer's
 * sources in trace ID order (@order), routed by trace ID but STM's.
 */
static void
cs_setup(struct cs_run *cr, const struct ix_seg_in *in,
    struct ix_seg_out *outs, const size_t *order, size_t nu)
{
	const struct hwtr_cs_config *cs = &in->desc->cs;
	size_t u;

	for (u = 0; u < in->nouts; u++) {
		struct cs_dec *d = &cr->decs[u];

		d->w.in = in;
		d->w.out = &outs[u];
		d->unit = u;
		if (u < nu && cs->sources[order[u]].protocol != HWTR_TF_STM)
			cr->route[cs->sources[order[u]].trace_id] = (int16_t)u;
		/* Known now: batches tell the writer which unit they are. */
		if (u < nu) {
			d->w.out->trace_id = cs->sources[order[u]].trace_id;
			d->w.out->format = cs->sources[order[u]].protocol;
		}
	}
}

/* STM sources are reported, never silently dropped: the last in @prob. */
static int
cs_stm(struct cs_run *cr, const struct hwtr_cs_config *cs,
    const size_t *order, size_t nu, char *prob, size_t plen)
{
	char det[160];
	size_t u;

	for (u = 0; u < nu; u++)
		if (cs->sources[order[u]].protocol == HWTR_TF_STM) {
			snprintf(det, sizeof(det), "trace ID 0x%02x: STM "
			    "source not decoded",
			    cs->sources[order[u]].trace_id);
			if (cs_event(&cr->decs[u], "not-decoded", 0, 0, det,
			    0) < 0)
				return (-1);
			snprintf(prob, plen, "%s", det);
		}
	return (0);
}

/* Every piece of the buffer through OpenCSD; its own errors in @prob. */
static void
cs_pieces(struct cs_run *cr, const struct ix_seg_in *in,
    struct ix_seg_out *outs, size_t nu, char *prob, size_t plen)
{
	char err[256];
	size_t k, u;
	int rc = 0;

	for (k = 0; k < in->npieces && rc >= 0; k++) {
		/*
		 * A signal: every unit's out says so, whichever the writer
		 * waits for.  A piece is at most HWTR_SV_SEG_MAX bytes when
		 * the stream is longer, some 50 ms of OpenCSD.
		 */
		if (in->cancel != NULL && *in->cancel) {
			for (u = 0; u < in->nouts; u++) {
				outs[u].rc = -HWTR_E_INTR;
				snprintf(outs[u].err, sizeof(outs[u].err),
				    "interrupted");
			}
			break;
		}
		/* A new piece: each core starts over. */
		for (u = 0; u < nu && rc >= 0; u++)
			rc = ix_segw_op(&cr->decs[u].w, IX_OP_RESET);
		if (rc < 0)
			break;
		cr->base = in->piece_off[k];
		cr->rc = 0;
		cr->synced = 0;
		if (in->blind_start && cs_blind(cr, nu) < 0)
			break;
		rc = ix_cs_decode(in->desc, in->piece[k], in->piece_len[k],
		    cr->mem, cr->nmem, cs_elem, cr, err, sizeof(err));
		if (cr->rc < 0)
			break;		/* out of memory: in the unit's out */
		/* After a blind cut, the bytes up to the first sync. */
		if (in->blind_start && rc >= 0 && nu > 0 &&
		    ix_segw_op1(&cr->decs[0].w, IX_OP_UNDECODED,
		    cr->synced &&
		    cr->sync < in->piece_len[k] ? cr->sync :
		    in->piece_len[k]) < 0)
			break;
		if (rc < 0) {
			/* The buffer's own errors go to its first unit. */
			cs_touch(&cr->decs[0]);
			if (ix_segw_op(&cr->decs[0].w, IX_OP_ERROR) < 0 ||
			    ix_segw_op1(&cr->decs[0].w, IX_OP_UNDECODED,
			    in->piece_len[k]) < 0 ||
			    cs_event(&cr->decs[0], "decode-error", 0, 0, err,
			    in->piece_off[k]) < 0)
				break;
			snprintf(prob, plen, "%s", err);
			rc = 0;
		}
		if (in->progress != NULL)
			__atomic_store_n(in->progress, in->piece_off[k] +
			    in->piece_len[k], __ATOMIC_RELAXED);
	}
}

/* The units' names and problems, once the buffer is decoded. */
static void
cs_name_units(const struct ix_seg_in *in, struct ix_seg_out *outs,
    const size_t *order, size_t nu)
{
	const struct hwtr_cs_config *cs = &in->desc->cs;
	char det[160];
	size_t u;

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
}

/*
 * The last batch of each unit: the out keeps the blocks and no operation
 * (on a failure too, whose operations so far are kept).
 */
static void
cs_finish(struct cs_run *cr)
{
	size_t u;

	for (u = 0; u < cr->ndecs; u++) {
		struct cs_dec *d = &cr->decs[u];

		if (cr->batch != 0)
			(void)cs_publish(d, u);
		ix_segw_free(&d->w);
		free(d->bb);
		free(d->blid);
		free(d->bmap);
		memset(d, 0, sizeof(*d));
	}
}

/*
 * The OpenCSD decoder's state (ix_segdec_opencsd): its arrays, kept from
 * one buffer to the next.
 */
struct cs_segdec {
	struct cs_dec	*decs;
	size_t		cdecs;
	struct ix_cs_mem *mem;
	size_t		cmem;
	size_t		*order;
	size_t		corder;
};

static int
cs_fmt_ok(enum hwtr_trace_format f)
{
	return (f == HWTR_TF_CORESIGHT);
}

static void *
cs_new(void)
{
	return (calloc(1, sizeof(struct cs_segdec)));
}

static void
cs_free(void *state)
{
	struct cs_segdec *sd = state;

	if (sd == NULL)
		return;
	free(sd->decs);
	free(sd->mem);
	free(sd->order);
	free(sd);
}

/* Every unit of a CoreSight buffer, one out each. */
static void
cs_decode(void *state, const struct ix_seg_in *in, struct ix_seg_out *outs)
{
	const struct hwtr_cs_config *cs = &in->desc->cs;
	struct cs_segdec *sd = state;
	struct cs_run cr;
	char prob[256];
	size_t u, nu;

	assert(sd != NULL && in->desc->format == HWTR_TF_CORESIGHT);
	memset(&cr, 0, sizeof(cr));
	memset(cr.route, 0xff, sizeof(cr.route));
	for (u = 0; u < in->nouts; u++)
		memset(&outs[u], 0, sizeof(outs[u]));
	if (hwtr_grow((void **)&sd->mem, &sd->cmem, in->nmaps + 1,
	    sizeof(*sd->mem)) < 0 || hwtr_grow((void **)&sd->order,
	    &sd->corder, cs->nsources + 1, sizeof(*sd->order)) < 0 ||
	    hwtr_grow((void **)&sd->decs, &sd->cdecs, in->nouts + 1,
	    sizeof(*sd->decs)) < 0) {
		outs[0].rc = -HWTR_E_NOMEM;
		snprintf(outs[0].err, sizeof(outs[0].err), "out of memory");
		return;
	}
	memset(sd->decs, 0, (in->nouts + 1) * sizeof(*sd->decs));
	cr.decs = sd->decs;
	nu = ix_cs_units(in->desc, sd->order);
	if (nu > in->nouts)
		nu = in->nouts;
	cr.ndecs = in->nouts;
	cr.batch = in->cs_publish != NULL ? in->cs_batch : 0;
	cs_setup(&cr, in, outs, sd->order, nu);
	cr.mem = sd->mem;
	cr.nmem = cs_mem_table(in, sd->mem);
	prob[0] = '\0';
	if (cs_stm(&cr, cs, sd->order, nu, prob, sizeof(prob)) == 0) {
		cs_pieces(&cr, in, outs, nu, prob, sizeof(prob));
		cs_name_units(in, outs, sd->order, nu);
		if (prob[0] != '\0' && outs[0].problem == NULL)
			outs[0].problem = strdup(prob);
	}
	cs_finish(&cr);
}

const struct ix_segdec_ops ix_segdec_opencsd = {
	.name = "opencsd",
	.fmt_ok = cs_fmt_ok,
	.new = cs_new,
	.decode = cs_decode,
	.free = cs_free,
};
