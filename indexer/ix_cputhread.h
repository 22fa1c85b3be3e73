/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * CPU mode, the threads' histories (cputhread.c): the output of a
 * per-CPU stream's decoder, sorted by the part of the CPU's time it is
 * in (cpusplit.c), becomes the history of the thread that owned the CPU
 * then, with its own positions, call stack, branches and counts.
 *
 * How to use this (the writer, ix_pipeline.c and ix.c):
 *   1) ix_cpu_segment(r, seg) for each decoded segment of the unit being
 *      stitched, in place of ix_stitch_segment(): a segment of a split
 *      CPU stream is sorted, any other is stitched.
 *   2) ix_cpu_threads(r) once every unit is stitched (ix_end_stream()),
 *      before ix_db_finish(): each thread's parts, in time order across
 *      CPUs, stitched as the thread's own rows.
 */

#ifndef HWTR_IX_CPUTHREAD_H
#define HWTR_IX_CPUTHREAD_H

#include "ix_run.h"

int	ix_cpu_segment(struct run *r, struct ix_seg_out *seg);
int	ix_cpu_threads(struct run *r);

#endif /* !HWTR_IX_CPUTHREAD_H */
