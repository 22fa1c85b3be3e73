/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Segment decoders: what turns a segment's trace bytes (struct ix_seg_in,
 * hwtr_ix.h) into its outputs (struct ix_seg_out), written through
 * segout.h.  The pipeline (ix_pipeline.c) picks one by the stream's
 * format (ix_segdec_pick(), segdec.c) and sees nothing else of it; the
 * stitcher and the writer only read the outputs.
 *
 *   libipt   Intel PT, libipt's block decoder (decode.c)
 *   fast     Intel PT, fpt (fpt.h) in decode.c's segment loop (fpt_seg.c),
 *            its blocks written by a loop of their own (segfast.c); a
 *            segment fpt cannot decode exactly as libipt does is decoded
 *            again by libipt (ix_seg_out's fallback)
 *   opencsd  ARM CoreSight ETM/PTM/ETE, OpenCSD (cs_segment.c over
 *            cs_decode.c); one output per trace ID of the buffer
 *
 * A second Intel PT decoder plugs in as one more entry: a file of its own
 * defining a const struct ix_segdec_ops (its state created by @new, used
 * by one worker thread at a time for any number of segments, freed by
 * @free; @decode fills in->nouts outputs from @in alone, the same ones
 * whatever the number of threads), declared below and listed in
 * segdec.c's table.  ix_segdec_pick() takes the first entry whose @fmt_ok
 * accepts the format, so the default stays first; choosing another by
 * its @name (an `index --decoder` option, issue 29) is a lookup in the
 * same table, with no change in the stitcher or the writer.
 */

#ifndef HWTR_IX_SEGDEC_H
#define HWTR_IX_SEGDEC_H

#include "hwtr_ix.h"
#include "segout.h"

struct ix_segdec_ops {
	const char	*name;
	/* Whether this decoder reads streams of format @f. */
	int		(*fmt_ok)(enum hwtr_trace_format f);
	/* A decoder's state, NULL when out of memory. */
	void		*(*new)(void);
	/*
	 * Decode @in into @out[0 .. in->nouts - 1], which it clears first;
	 * failures are in out[i].rc and out[i].err.
	 */
	void		(*decode)(void *state, const struct ix_seg_in *in,
			    struct ix_seg_out *out);
	void		(*free)(void *state);
};

extern const struct ix_segdec_ops ix_segdec_libipt;	/* decode.c */
extern const struct ix_segdec_ops ix_segdec_opencsd;	/* cs_segment.c */
extern const struct ix_segdec_ops ix_segdec_fast;	/* decode.c */

/* The decoder of streams of format @f, NULL: none. */
const struct ix_segdec_ops *ix_segdec_pick(enum hwtr_trace_format f);

/*
 * The decoder named @name (NULL: the default) for format @f: the default
 * one of @f when the one named does not read @f.
 */
const struct ix_segdec_ops *ix_segdec_named(const char *name,
    enum hwtr_trace_format f);

/* Whether a decoder is named @name. */
int ix_segdec_known(const char *name);

#endif /* !HWTR_IX_SEGDEC_H */
