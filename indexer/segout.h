/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Writing a segment's output (struct ix_seg_out, hwtr_ix.h): what every
 * segment decoder shares, below all of them (segout.c).  A decoder keeps
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
