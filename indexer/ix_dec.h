/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The segment decoder's state, shared by its Intel PT (decode.c) and
 * CoreSight (cs_segment.c) halves; outside them, ix_decode_segment()
 * (hwtr_ix.h) is the whole interface.
 */

#ifndef HWTR_IX_DEC_H
#define HWTR_IX_DEC_H

#include <stdint.h>

#include "hwtr_ix.h"

struct pt_image_section_cache;
struct pt_block_decoder;
struct pt_image;

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

/* A failure of the segment (the first one is kept); returns @rc. */
int	ix_dec_fail(struct dec *d, int rc, const char *what,
	    const char *detail);
/* Operations into d->out->ops. */
int	ix_dec_put(struct dec *d, uint64_t v);
int	ix_dec_op(struct dec *d, enum ix_op o);
int	ix_dec_op1(struct dec *d, enum ix_op o, uint64_t a);
/* An event at stream offset @off (when @has_off). */
int	ix_dec_add_event_at(struct dec *d, const char *kind, int has_ip,
	    uint64_t ip, const char *detail, int has_off, uint64_t off);
/* The local id of the contiguous run (isid, ip, ninsn, mode); adds it. */
int64_t	ix_dec_run_id(struct dec *d, const struct ix_sblock *proto);
/* Every unit of a CoreSight buffer (cs_segment.c). */
void	ix_cs_decode_stream(const struct ix_seg_in *in,
	    struct ix_seg_out *outs);

#endif /* !HWTR_IX_DEC_H */
