/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * CPU mode: a per-CPU stream holds whatever ran on its CPU, one thread
 * after another.  The context-switch sideband says when: a switch out at
 * time t hands the CPU to the thread that the next switch in on that CPU
 * names (perf's own rule for CPU-wide switch records: the outgoing
 * record's next pid/tid owns the CPU from its time on).  cpusplit.c turns
 * the switch records into parts, [start, end) of one CPU's time owned by
 * one pid/tid, and attributes the stream's packets to them by time:
 * each packet takes the time of the last TSC packet before it, a PSB the
 * time of the TSC in its PSB+.
 *
 * How to use this:
 *   1) ix_cpusplit_build(&cs, ar, err, errlen) after the archive is open;
 *      it reads the switch records and scans each CPU stream's packets.
 *   2) The indexer gives every part its thread row (part->thread), the
 *      stream's database id and the stream's own thread row; while it
 *      stitches a CPU stream it reports the decoder's time changes
 *      (ix_cpusplit_time()) and the stream's end (ix_cpusplit_end()),
 *      which give each part its blocks.
 *   3) ix_cpusplit_write(&cs, db, tc, ...) fills cpu_parts and moves each decode
 *      event of a CPU stream to the thread that owned the CPU then.
 *   4) ix_cpusplit_free(&cs).
 */

#ifndef HWTR_CPUSPLIT_H
#define HWTR_CPUSPLIT_H

#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>

#include "hwtrace.h"
#include "hwtr_ix.h"

struct ix_cpart {
	size_t		stream;		/* archive stream index */
	int32_t		cpu, pid, tid;	/* pid, tid -1: not known */
	int		has_start, has_end;
	uint64_t	start_tsc, end_tsc;	/* [start, end) */
	/* The packets attributed: [off0, off1) of the stream. */
	int		has_bytes;
	uint64_t	off0, off1;
	uint64_t	psbs, tscs, mtcs, cycs;
	/*
	 * The decoded blocks in the part's time: [first_seq, end_seq) and
	 * [first_insn, end_insn) of the stream's own execution order.
	 */
	int		has_seq;
	int64_t		first_seq, end_seq, first_insn, end_insn;
	/* Set by the indexer. */
	int64_t		thread;		/* threads.id of pid/tid */
	int64_t		db_stream;	/* streams.id */
	int64_t		stream_thread;	/* threads.id of the stream's row */
};

/* A stream's parts [p0, p1) and the one its decoder's time is in. */
struct ix_csplit {
	size_t		stream;
	size_t		p0, p1;
	size_t		cur;		/* SIZE_MAX: none */
	int64_t		open_seq, open_insn;
	struct ix_owner	*owners;	/* the parts' processes */
};

struct ix_cpusplit {
	struct ix_cpart	*parts;		/* by stream, then time */
	size_t		nparts, cparts;
	struct ix_csplit *streams;
	size_t		nstreams;
};

int ix_cpusplit_build(struct ix_cpusplit *cs, struct hwtr_ar *ar,
    char *err, size_t errlen);
int ix_cpusplit_write(const struct ix_cpusplit *cs, sqlite3 *db,
    const struct hwtr_timeconv *tc, char *err, size_t errlen);
/*
 * The decoder's time of archive stream @stream became @tsc before block
 * @seq and instruction @insn of the stream's execution order; the end of
 * the stream's blocks.  The positions of each part come from these.
 */
void ix_cpusplit_time(struct ix_cpusplit *cs, size_t stream, int64_t seq,
    int64_t insn, uint64_t tsc);
void ix_cpusplit_end(struct ix_cpusplit *cs, size_t stream, int64_t seq,
    int64_t insn);
/*
 * Who owns the CPU of archive stream @stream over time, for the decoder
 * (struct ix_seg_in): borrowed, valid until ix_cpusplit_free(); none
 * (*np 0) for a stream that is not split.
 */
void ix_cpusplit_owners(const struct ix_cpusplit *cs, size_t stream,
    const struct ix_owner **op, size_t *np);
void ix_cpusplit_free(struct ix_cpusplit *cs);

#endif /* !HWTR_CPUSPLIT_H */
