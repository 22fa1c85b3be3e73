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
 *   1) ix_cpusplit_build(&cs, ar, cancel, err, errlen) after the archive
 *      is open; it reads the switch records and scans each CPU stream's
 *      packets, chunk by chunk, until *cancel is set (-HWTR_E_INTR).
 *   2) The indexer gives every part its thread row (part->thread), the
 *      stream's database id and the stream's own thread row.  While it
 *      stitches a CPU stream, cputhread.c (ix_cputhread.h) sorts the
 *      decoder's output by the part whose time it is in: what a thread
 *      owns waits in a spill file, what no thread owns is stitched as
 *      the stream's own history.  After every stream, each thread's parts
 *      are stitched in time order, across CPUs, as the thread's history.
 *   3) ix_cpusplit_write(&cs, db, tc, ...) fills cpu_parts and the
 *      threads' counts.
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
	 * [first_insn, end_insn) of its thread's execution order (of the
	 * stream's own thread when no thread owns the part).
	 */
	int		has_seq;
	int64_t		first_seq, end_seq, first_insn, end_insn;
	/* Set by the indexer. */
	int64_t		thread;		/* threads.id of pid/tid */
	int64_t		db_stream;	/* streams.id */
	int64_t		stream_thread;	/* threads.id of the stream's row */
	int		owned;		/* a thread's history (cputhread.c) */
	/* cputhread.c: the decoder's first time in the part. */
	int		has_time;
	uint64_t	first_time;
	/* cputhread.c: its fragments in the spill file, a list. */
	size_t		frag0, fragn;	/* SIZE_MAX: none */
};

/* A piece of a part's output in the spill file (cputhread.c). */
struct ix_cfrag {
	uint64_t	off;
	size_t		len;
	size_t		next;		/* SIZE_MAX: the last */
};

/* What a thread's history came to (cputhread.c), for its threads row. */
struct ix_cthread {
	int64_t		thread;		/* threads.id */
	int64_t		blocks, insns, errors, gaps, calls, max_depth;
	int		has_first, has_last;
	uint64_t	first_tsc, last_tsc;
};

/* A stream's parts [p0, p1), and how cputhread.c sorts its output. */
struct ix_csplit {
	size_t		stream;
	size_t		p0, p1;
	struct ix_owner	*owners;	/* the parts' processes */
	int		demux;		/* cputhread.c sorts its output */
	size_t		cur;		/* the part of the decoder's time,
					   SIZE_MAX: none yet */
	size_t		last_own;	/* the last part stitched as the
					   stream's own, SIZE_MAX: none */
	int		broken;		/* a thread's output since */
	int64_t		errors, errors_owned;	/* decode errors */
	uint64_t	undecoded;
};

struct ix_cpusplit {
	struct ix_cpart	*parts;		/* by stream, then time */
	size_t		nparts, cparts;
	struct ix_csplit *streams;
	size_t		nstreams;
	/* cputhread.c: the spill file, its fragments, the threads. */
	int		spill;		/* -1: none yet */
	uint64_t	spill_len;
	struct ix_cfrag	*frags;
	size_t		nfrags, cfrags;
	struct ix_cthread *threads;
	size_t		nthreads;
};

int ix_cpusplit_build(struct ix_cpusplit *cs, struct hwtr_ar *ar,
    const volatile int *cancel, char *err, size_t errlen);
int ix_cpusplit_write(const struct ix_cpusplit *cs, sqlite3 *db,
    const struct hwtr_timeconv *tc, char *err, size_t errlen);
/*
 * The part of the parts [@p0, @p1) that owns decoder time @tsc (an
 * Intel PT TSC's 7 bytes are placed by the parts' full times), or NULL.
 */
struct ix_cpart *ix_cpusplit_part_at(struct ix_cpusplit *cs, size_t p0,
    size_t p1, uint64_t tsc);
/* The split of archive stream @stream, or NULL. */
struct ix_csplit *ix_cpusplit_stream(struct ix_cpusplit *cs, size_t stream);
/*
 * Who owns the CPU of archive stream @stream over time, for the decoder
 * (struct ix_seg_in): borrowed, valid until ix_cpusplit_free(); none
 * (*np 0) for a stream that is not split.
 */
void ix_cpusplit_owners(const struct ix_cpusplit *cs, size_t stream,
    const struct ix_owner **op, size_t *np);
void ix_cpusplit_free(struct ix_cpusplit *cs);

#endif /* !HWTR_CPUSPLIT_H */
