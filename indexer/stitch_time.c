/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The stitcher's clock (stitch.c replays the segments): the stream's time
 * as the time operations give it, its readings, and the timestamp rows
 * made of them (at most one per IX_TS_EVERY blocks, the last one held
 * until the next is known).
 */

#include <stdint.h>

#include "hwtr_common.h"
#include "hwtr_ix.h"
#include "segout.h"
#include "stitch_int.h"

#define IX_TS_EVERY	64	/* at most one timestamp row per so many blocks */

/*
 * Timestamp row @t; the last one stays pending (with @replace, a row at
 * the same seq replaces it).
 */
static int
ts_put(struct ix_stitch *st, const struct ix_ts *t, int replace)
{
	int rc;

	if (st->have_pend_ts && replace && st->pend_ts.seq == t->seq) {
		st->pend_ts = *t;
		goto out;
	}
	if (st->have_pend_ts && st->sink.ts != NULL &&
	    (rc = st->sink.ts(st->sink.arg, &st->pend_ts)) < 0)
		return (rc);
	st->pend_ts = *t;
	st->have_pend_ts = 1;
	st->nts++;
out:
	if (st->have_reading && st->reading.tsc == t->tsc)
		st->have_reading = 0;
	return (0);
}

/* A timestamp row at the current position. */
int
ix_stitch_ts_row(struct ix_stitch *st, int replace)
{
	struct ix_ts t = { .seq = st->seq, .insn = st->insn, .tsc = st->tsc };

	return (ts_put(st, &t, replace));
}

/*
 * A new clock reading at the current position.  Rows are at most one per
 * IX_TS_EVERY blocks, so a reading may get none; it is kept until a row
 * carries its time, and written where it was read when the stream ends
 * first (a thread's last reading, often at its exit, would otherwise be
 * lost, and every call after the last row would get that row's time).
 */
static int
reading(struct ix_stitch *st)
{
	st->reading.seq = st->seq;
	st->reading.insn = st->insn;
	st->reading.tsc = st->tsc;
	st->have_reading = 1;
	if (st->seq - st->last_ts_seq >= IX_TS_EVERY || st->last_ts_seq < 0) {
		st->last_ts_seq = st->seq;
		return (ix_stitch_ts_row(st, 1));
	}
	return (0);
}

/* The end of a stream: its last reading gets a row if it has none. */
int
ix_stitch_last_reading(struct ix_stitch *st)
{
	struct ix_ts t = st->reading;

	return (st->have_reading ? ts_put(st, &t, 1) : 0);
}

static void
note_tsc(struct ix_stitch *st, uint64_t tsc)
{
	st->have_tsc = 1;
	st->tsc = tsc;
	if (!st->has_first) {
		st->has_first = 1;
		st->first_tsc = tsc;
	}
	st->has_last = 1;
	st->last_tsc = tsc;
	if (st->sink.time != NULL)
		st->sink.time(st->sink.arg, st->seq, st->insn, tsc);
}

/*
 * Time operation @op (IX_OP_TIME, IX_OP_TSC, IX_OP_SETTSC) with its
 * value @a, at the current position.
 */
int
ix_stitch_apply_time(struct ix_stitch *st, int op, uint64_t a)
{
	int rc = 0;

	switch (op) {
	case IX_OP_TIME:
		if (st->have_tsc && a == st->tsc)
			break;
		note_tsc(st, a);
		rc = reading(st);
		break;
	case IX_OP_TSC:
		/* A time from an event is a reading when it moves on. */
		if (st->have_tsc && a > st->tsc) {
			note_tsc(st, a);
			rc = reading(st);
		} else
			note_tsc(st, a);
		break;
	default:
		st->have_tsc = 1;
		st->tsc = a;
		break;
	}
	return (rc);
}
