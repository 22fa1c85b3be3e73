/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The stitcher's files (stitch.c and stitch_time.c), private to them:
 * stitch.c replays the segments and calls down into stitch_time.c for
 * the stream's clock (its readings and the timestamp rows made of them),
 * which calls nothing of stitch.c.
 */

#ifndef HWTR_STITCH_INT_H
#define HWTR_STITCH_INT_H

#include <stdint.h>

struct ix_stitch;

/* A timestamp row at the current position (@replace: see ts_put()). */
int ix_stitch_ts_row(struct ix_stitch *st, int replace);
/* Time operation @op (IX_OP_TIME, _TSC, _SETTSC) of value @a. */
int ix_stitch_apply_time(struct ix_stitch *st, int op, uint64_t a);
/* The end of a stream: its last reading gets a row if it has none. */
int ix_stitch_last_reading(struct ix_stitch *st);

#endif
