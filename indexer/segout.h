/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * A segment's input and output (struct ix_seg_in, struct ix_seg_out) and
 * writing it: what every segment decoder shares, below all of them
 * (segout.c); the pipeline fills the input, the stitcher replays the
 * output.  Segments are decoded into @out[@in->nouts] by the decoder of
 * their stream's format (segdec.h).  A decoder keeps
 * a struct ix_segw per output it fills and writes through it the
 * operations (IX_OP_*), the events and the segment-local blocks that the
 * stitcher (stitch.c) replays; the first failure is kept in the output.
 * The decoders themselves (segdec.h) know nothing of each other.
 */

#ifndef HWTR_IX_SEGOUT_H
#define HWTR_IX_SEGOUT_H

#include <stddef.h>
#include <stdint.h>

#include "hwtr_ix.h"

/*
 * One segment of a stream, what a worker decodes (read-only while it
 * runs).  An Intel PT stream is cut at PSBs into segments of a few MiB
 * (format/stream.c); a worker decodes its segment from its first PSB and
 * stops where the decoder has read the PSB+ that starts the next one
 * (@limit), so that every block, event and time of the stream comes
 * from exactly one segment.  A CoreSight stream of at most
 * HWTR_SV_SEG_MAX bytes is one segment (its pieces in @piece); a longer
 * one is cut without a sync point (@blind_start).
 */
struct ix_seg_in {
	size_t		stream;		/* archive stream index */
	const struct hwtr_stream_desc *desc;
	const struct hwtr_cpu *cpu;
	/* Intel PT: the bytes from the segment's start, margin included. */
	const uint8_t	*buf;
	size_t		len;
	uint64_t	base;		/* stream offset of buf[0] */
	int		has_limit;	/* 0: decode to the end of buf */
	uint64_t	limit;		/* stream offset of the next segment */
	int		first_of_stream; /* says configuration errors */
	int		lost_before;	/* a piece after lost bytes */
	uint64_t	lost_bytes;
	/*
	 * Cut where the stream had no PSB for HWTR_SV_SEG_MAX bytes
	 * (hwtr_stream.h): stop at @limit; start at the first PSB, the
	 * bytes before it not decoded.
	 */
	int		blind_end, blind_start;
	/* CoreSight: contiguous pieces of the stream. */
	size_t		npieces;
	const uint8_t	**piece;
	const size_t	*piece_len;
	const uint64_t	*piece_off;
	/* Mappings visible to this stream's process, global ones included. */
	const struct ix_map *const *maps;
	size_t		nmaps;
	/*
	 * CPU mode: who owns the CPU over time, in time order (cpusplit.c);
	 * the image at a time holds the owner's mappings and the global
	 * ones.  None: every mapping of @maps.
	 */
	const struct ix_owner *owners;
	size_t		nowners;
	void		*iscache;	/* struct pt_image_section_cache * */
	/*
	 * The images' bytes, indexed like the archive's images (NULL when
	 * absent): code is read from here rather than through the section
	 * cache, whose reads from several threads at once were seen to come
	 * back short now and then, which made -j change the database.
	 */
	const uint8_t *const *img;
	const size_t	*img_len;
	volatile int	*cancel;
	volatile uint64_t *progress;	/* bytes done, updated now and then */
	/*
	 * Outputs to fill: 1, or for a CoreSight stream one per unit
	 * (ix_cs_units()), each a thread and stream of its own.
	 */
	size_t		nouts;
	/*
	 * CoreSight batches (0: none).  A CoreSight buffer is one segment
	 * that OpenCSD decodes in one pass; so that the writer need not wait
	 * for its end, every @cs_batch elements of a unit the unit's
	 * operations so far go to @cs_publish as a segment of their own
	 * (blocks renumbered from 0, their lens and code borrowed from the
	 * unit's out), which the writer stitches while decoding goes on.
	 * The unit's out then ends with no operations and owns the blocks.
	 * @cs_publish takes the batch, also when it fails (-HWTR_E_*).
	 */
	size_t		cs_batch;
	int		(*cs_publish)(void *, size_t unit, struct ix_seg_out *);
	void		*cs_publish_arg;
	/* Set (atomic) when an element or event comes for a unit. */
	int		*cs_touched;
};

/*
 * A segment's failure in a line ("what: detail", a decoder's message and
 * an offset).  Not HWTR_ERRMSG_MAX: every CoreSight batch is one of
 * these, and 8 KiB each made batches of one element (t_cs_batch) take
 * 16 GB and 97 s on bugfix-exact-match.
 */
#define IX_SEG_ERRMAX	512

/*
 * What a worker gives back: its static blocks (segment-local ids) and the
 * decoder's output as a list of operations (varints, IX_OP_*) that the
 * stitcher replays in stream order.  Everything that depends on what came
 * before the segment (positions, call stack, previous block, time, chunk
 * and timestamp rows) is the stitcher's.
 */
struct ix_seg_out {
	int		rc;		/* 0, or -HWTR_E_* for a failure */
	char		err[IX_SEG_ERRMAX];
	struct ix_sblock *blocks;
	size_t		nblocks, cblocks;
	struct ix_buf	ops;
	char		*problem;	/* CoreSight: one line for the summary */
	/* CoreSight units: "trace ID 0x10 ETMv4 Cortex-A57 A64". */
	char		*name;		/* or NULL */
	int		trace_id;
	enum hwtr_trace_format format;
	unsigned	isa_seen;	/* 1 A64, 2 A32, 4 T32 */
	uint64_t	nocode;		/* blocks whose bytes are not known */
	int		borrowed;	/* a batch: blocks' lens, code not ours */
	/*
	 * The fast Intel PT decoder handed this segment to libipt
	 * (1: unsupported packets, 2: a decode error), @fb_bytes of trace,
	 * @fb_why saying why (static).
	 */
	int		fallback;
	uint64_t	fb_bytes;
	const char	*fb_why;
};

/*
 * Operations: a varint v; v even is "block (v >> 1) ran"; v odd is
 * operation v >> 1 followed by its arguments (varints).
 */
enum ix_op {
	IX_OP_TIME = 1,		/* tsc: the decoder's time (pt_blk_time) */
	IX_OP_TSC,		/* tsc: a time learnt from an event */
	IX_OP_SETTSC,		/* tsc: CoreSight timestamp */
	IX_OP_EVENT,		/* kind, flags (1 ip, 2 offset, 4 detail,
				   8 "enabled": the stitcher says whether it
				   resumed), [ip], [offset], [len, bytes] */
	IX_OP_NOPREV,		/* no branch into the next block */
	IX_OP_GAP,		/* same, and a gap in the thread's trace */
	IX_OP_ERROR,		/* a decode error (counted) */
	IX_OP_ASYNC,		/* an asynchronous branch into the next block */
	IX_OP_UNDECODED,	/* n: bytes that could not be decoded */
	IX_OP_RESET,		/* CoreSight trace ID: close frames, no time */
	IX_OP_CYCLES		/* count, flags (element << 1 | cumulative):
				   a CoreSight cycle count (a row of cycles
				   at the current position) */
};

#define IX_NEVENT_KINDS 33
extern const char *const ix_event_kinds[IX_NEVENT_KINDS + 1];

struct pt_config;

/*
 * Set up @cfg (after pt_config_init()) to decode Intel PT stream @sd over
 * [@buf, @buf + @len) as the indexer does: the CPU's identity and errata
 * when @cpu is an Intel CPU, the stream's timing values and address
 * filters.  Returns pt_cpu_errata()'s status: < 0 when the errata are not
 * known (the rest is set).  Also used by tests/bench/ixbare.c, so that
 * the reference loop is configured exactly as the indexer is.
 */
int ix_pt_config(struct pt_config *cfg, const struct hwtr_stream_desc *sd,
    const struct hwtr_cpu *cpu, const uint8_t *buf, size_t len);

/*
 * The units of CoreSight stream @sd: its sources by trace ID (a trace ID
 * named twice counts once), their indexes in sd->cs.sources stored in
 * @order (room for sd->cs.nsources).  Returns how many.
 */
size_t ix_cs_units(const struct hwtr_stream_desc *sd, size_t *order);
void ix_seg_out_free(struct ix_seg_out *out);

/* A decoder's writer of one output. */
struct ix_segw {
	const struct ix_seg_in *in;
	struct ix_seg_out *out;
	/* Static block lookup: (isid, ip, ninsn, mode) -> local id + 1. */
	uint32_t	*htab;
	size_t		hcap;
	size_t		flags_at;	/* of the last event in out->ops */
};

/* Frees what @w holds (not its output). */
void	ix_segw_free(struct ix_segw *w);
/* A failure of the segment (the first one is kept); returns @rc. */
int	ix_segw_fail(struct ix_segw *w, int rc, const char *what,
	    const char *detail);
/* A varint into w->out->ops (no room: ix_segw_put_slow()). */
int	ix_segw_put_slow(struct ix_segw *w, uint64_t v);
/* An event at stream offset @off (when @has_off); flags at w->flags_at. */
int	ix_segw_event_at(struct ix_segw *w, const char *kind, int has_ip,
	    uint64_t ip, const char *detail, int has_off, uint64_t off);
/* The local id of the contiguous run (isid, ip, ninsn, mode); adds it. */
int64_t	ix_segw_run_id(struct ix_segw *w, const struct ix_sblock *proto);

/* The hot path stays inline in each decoder: a varint with room for it. */
static inline int
ix_segw_put(struct ix_segw *w, uint64_t v)
{
	struct ix_buf *b = &w->out->ops;

	if (b->cap - b->len >= 10) {
		while (v >= 0x80) {
			b->p[b->len++] = (uint8_t)(v | 0x80);
			v >>= 7;
		}
		b->p[b->len++] = (uint8_t)v;
		return (0);
	}
	return (ix_segw_put_slow(w, v));
}

static inline int
ix_segw_op(struct ix_segw *w, enum ix_op o)
{
	return (ix_segw_put(w, ((uint64_t)o << 1) | 1));
}

static inline int
ix_segw_op1(struct ix_segw *w, enum ix_op o, uint64_t a)
{
	int rc = ix_segw_op(w, o);

	return (rc < 0 ? rc : ix_segw_put(w, a));
}

#endif /* !HWTR_IX_SEGOUT_H */
