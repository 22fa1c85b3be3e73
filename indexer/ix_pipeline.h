/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The indexer's pipeline (ix_pipeline.c): the streams cut into segments
 * by the stream view (format/hwtr_stream.h), decoded by a pool of workers
 * (segdec.h: the decoder of the stream's format), stitched by the
 * writer's thread in stream order (ix_stitch_*()) into the database
 * (ix_write.h).
 */

#ifndef HWTR_IX_PIPELINE_H
#define HWTR_IX_PIPELINE_H

#include "ix_run.h"

/* The layer's state (its lock and the writer's job queue), freed. */
struct ix_pipe *ix_pipe_new(void);
void	ix_pipe_free(struct ix_pipe *pl);

/* Open the stream view: r->sv, r->segs, r->res, r->jmaps. */
int	ix_plan(struct run *r);
/*
 * Start the workers on the segments (after ix_plan()): they decode the
 * first ones while the writer does the rest of its preparation.
 */
int	ix_start_pipeline(struct run *r);
/*
 * Decode every segment and stitch every unit, in order; the workers stay
 * for the writer's jobs until ix_end_pipeline() (always called once they
 * started, whatever fails meanwhile).
 */
int	ix_run_pipeline(struct run *r);
void	ix_end_pipeline(struct run *r);
/* What a segment's decoding left (after a failure). */
void	ix_free_seg(struct ix_seg *g);

#endif /* !HWTR_IX_PIPELINE_H */
