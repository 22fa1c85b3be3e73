/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The state of one hwtr_ix_run().  Each layer owns its state, created
 * and freed by its own file; the driver holds them in struct run:
 *
 *   ix.c           the driver: open the archive, make the layers, run them
 *                  in order, commit or remove the database, free them
 *   ix_image.c     struct ix_images: images, sideband replay (processes,
 *                  threads, mappings over time); and the units the
 *                  database calls streams (in struct run, read by all)
 *   cpusplit.c     struct ix_cpusplit: CPU streams' parts (CPU mode)
 *   ix_pipeline.c  struct ix_pipe: segments (format/hwtr_stream.h)
 *                  decoded by workers with the decoder of their format
 *                  (segdec.h), stitched in order (stitch.c)
 *   stitch.c       struct ix_stitch: segments replayed in stream order
 *   ix_write.c     struct ix_writer: the database, every table, in one
 *                  transaction
 *   cputhread.c    CPU mode's per-thread history, over the writer
 *
 * Each layer's functions are in its own header.
 */

#ifndef HWTR_IX_RUN_H
#define HWTR_IX_RUN_H

#include <pthread.h>
#include <sqlite3.h>
#include <stdint.h>
#include <time.h>

#include "hwtr_cpusplit.h"
#include "hwtr_ix.h"
#include "ix_diag.h"
#include "ix_jobs.h"
#include "segout.h"

struct pt_image_section_cache;
struct hwtr_sv;

/* A thread as the database sees it. */
struct ix_thread {
	int64_t		id;
	int		stream;		/* index, -1: sideband only */
	int32_t		pid, tid;
	char		*name;
	int		has_start, has_end;
	uint64_t	start_tsc, end_tsc;
	const char	*exit_kind;
	int32_t		exit_value;
};

struct ix_proc {
	int32_t		pid, ppid;
	char		*path, *comm;
	int		has_start, has_end;
	uint64_t	start_tsc, end_tsc;
	const char	*exit_kind;
	int32_t		exit_value;
};

struct ix_sbev {
	const char	*kind;
	int32_t		pid, tid;
	uint64_t	tsc;
	int		stream;		/* index or -1 */
	char		*detail;
};

struct ix_img {
	char		*file;		/* extracted copy */
	uint8_t		*bytes;		/* and in memory */
	size_t		size;
	int		present;
	struct ix_elf	elf;
	int64_t		sym_base;	/* symbols.id of elf.syms[0] */
	int64_t		*file_ids;	/* files.id of elf.files[i] */
	int		jit;		/* "[jit]" of process jit_pid (ix_jit.c) */
	int32_t		jit_pid;
	struct hwtr_image_desc jdesc;	/* its description */
	uint64_t	*jit_t;		/* per symbol: valid from, until */
	/* Until ix_load_symbols(): its debug file, where its problems go. */
	void		*dbg;
	size_t		dbglen;
	size_t		pat;
};

/* What a global block is in the images (symbolize()). */
struct ix_gsym {
	int		has_image;
	int64_t		image;		/* images.id */
	uint64_t	image_addr;
	int64_t		symbol;		/* 0: none */
	uint64_t	sym_offset;
	int64_t		file;		/* 0: none */
	int32_t		line;
};

/* CoreSight batches of a unit, published and not yet stitched. */
struct ix_batch {
	struct ix_seg_out out;
	struct ix_batch	*next;
};

struct ix_bq {
	struct ix_batch	*head, *tail;
	size_t		n;
};

/* A segment of a stream, decoded by one worker. */
struct ix_seg {
	size_t		stream, piece;
	uint64_t	start, end;	/* stream offsets */
	int		has_limit;	/* end is the next segment's PSB */
	int		first_of_stream, lost_before;
	uint64_t	lost_bytes;
	int		blind_start, blind_end;	/* cut without a PSB */
	int		done;
	struct ix_seg_out *outs;	/* one per unit of the stream */
	size_t		nouts, nleft;
	struct ix_bq	*bq;		/* CoreSight: per unit, under lock */
	int		*touched;	/* per unit: something came (atomic) */
};

/* An archive stream: where its segments are, its bytes. */
struct ix_sres {
	uint64_t	bytes;
	size_t		seg0, nseg;
};

/*
 * What the database says of a unit once it is stitched.  A unit is what
 * the database calls a stream and gives a thread of its own: one per
 * archive stream, but one per trace ID for a CoreSight buffer
 * (ix_cs_units()).
 */
struct ix_ures {
	int		rc;
	char		*err, *problem;
	char		*name;		/* CoreSight trace ID, or NULL */
	int		cs_batched;	/* a batch came: a CoreSight unit */
	int		trace_id;
	enum hwtr_trace_format format;
	int64_t		exec_blocks, exec_insns, errors, gaps, ncalls;
	int64_t		max_depth;
	uint64_t	undecoded;
	int		has_first, has_last;
	uint64_t	first_tsc, last_tsc;
};

struct stmt {
	sqlite3_stmt	*st;
	int		i;
};

/*
 * An exec_chunks row whose data a job packs (hwtr_xo_pack()) while the
 * writer goes on: rows go in, in order, IX_XQ chunks later (ix_write.c).
 */
#define IX_XQ		8
struct ix_xrow {
	struct ix_job	job;
	int64_t		thread;
	struct ix_chunk	c;		/* its data owned */
	uint8_t		*z;		/* the packed data, or NULL: c's */
	size_t		zlen;
	int		rc;
};

/*
 * An events row waiting for its batch.  A trace with many system calls
 * has two events per call (disabled, resumed: 0.42 M rows, a third of the
 * writer's time on the benchmark when each was an INSERT of its own: the
 * statement's start and end cost more than the row).  Rows wait, and go
 * in INSERTs of 2^k rows (k < IX_EV_LOG) before any other row is written,
 * so that every table's rows still reach the file in the same order: the
 * same pages, the same bytes.
 */
#define IX_EV_LOG	6
#define IX_EV_BATCH	(1u << (IX_EV_LOG - 1))
#define IX_EV_VAR	8	/* parameters of a row (seq ... detail) */

struct ix_evrow {
	int64_t		seq, insn;
	const char	*kind;		/* static */
	int		has_offset, has_ip, has_tsc;
	uint64_t	offset, ip, tsc;
	char		*detail;	/* malloc'd or NULL */
};

/*
 * The sideband replay's indexes, so that it costs O(log n) per record
 * whatever the archive holds: processes by pid and threads by tid (open
 * addressing; slots hold index + 1), and the mappings still open in a
 * treap ordered by (pid, start, index) (nodes parallel to run.maps;
 * links hold index + 1).  @work counts the nodes the replay visited: an
 * archive whose mappings overlap so that it would take hours is refused.
 */
struct ix_tnode {
	size_t		left, right;
	uint32_t	prio;
};

struct ix_replay {
	size_t		*ph, phcap, *th, thcap;
	struct ix_tnode	*tn;
	size_t		ctn, root;
	size_t		*hits, nhits, chits;
	uint64_t	work;
};

#define IX_REPLAY_WORK	(1ULL << 28)

/*
 * Images, mappings over time, processes, threads and sideband events
 * (ix_image.c: ix_images_new(), ix_images_free()).
 */
struct ix_images {
	struct hwtr_ix	*ix;		/* the run's, for diagnostics */
	struct hwtr_ar	*ar;
	size_t		nstreams;
	struct pt_image_section_cache *isc;
	struct ix_img	*imgs;
	size_t		nimgs;
	size_t		nelf;		/* the archive's (ix_load_symbols()) */
	const uint8_t	**img_bytes;
	size_t		*img_len;
	struct ix_map	*maps;
	size_t		nmaps, cmaps;
	int		*isid_map;	/* isid -> index in maps, -1 */
	size_t		nisid;
	struct ix_proc	*procs;
	size_t		nprocs, cprocs;
	struct ix_thread *threads;
	size_t		nthreads, cthreads;
	struct ix_replay rp;		/* the replay's indexes */
	struct ix_sbev	*sbev;
	size_t		nsbev, csbev;
	uint64_t	*lost;		/* per stream */
};

/*
 * Segments, the workers that decode them and the writer's place among
 * them (ix_pipeline.c: ix_pipe_new(), ix_pipe_free()).  @lock guards
 * what the workers share, the writer's job queue @jq too.
 */
struct ix_pipe {
	struct ix_sres	*res;		/* per archive stream */
	const struct ix_map ***jmaps;	/* per archive stream */
	size_t		njmaps;
	struct ix_seg	*segs;
	size_t		nsegs;
	struct hwtr_sv	*sv;		/* the streams' bytes and segments */
	uint64_t	seg_size;
	size_t		next_seg;	/* the next one a worker takes */
	size_t		stitched;	/* segments replayed by the writer */
	size_t		window;		/* segments decoded ahead at most */
	size_t		cs_batch;	/* CoreSight elements per batch */
	size_t		wseg, wunit;	/* where the writer is, under lock */
	int		wbusy;		/* it is in segment wseg */
	int		nospec;		/* no unit left for later */
	int		spec_failed;	/* a unit left for later was not empty */
	int		abort;
	uint64_t	bytes_done;
	volatile uint64_t *wprogress;	/* per worker, in its segment */
	size_t		nworkers;	/* threads besides the writer */
	uint64_t	own_decode_ns;	/* the writer's decoding, CPU */
	uint64_t	stitch_ns;	/* the writer's CPU in the pipeline */
	pthread_t	*tids;		/* the workers, until ix_end_pipeline() */
	size_t		ntids;
	void		*wctx;
	pthread_mutex_t	lock;
	pthread_cond_t	work_cv, done_cv;
	struct ix_jobq	jq;		/* the writer's jobs (ix_jobs.h) */
	struct timespec	last_report;
};

/* The database and its rows (ix_write.c: ix_writer_new(), ix_writer_free()). */
struct ix_writer {
	sqlite3		*db;
	size_t		cur;		/* unit being stitched */
	/*
	 * CPU mode (cputhread.c): the stitcher's rows go to thread row
	 * @ct_thread and its events name stream @ct_stream (streams.id);
	 * 0: the unit's (cur).
	 */
	int64_t		ct_thread, ct_stream;
	int64_t		call_base;
	struct ix_gsym	*gs;
	size_t		cgs;
	uint64_t	*errips;	/* decode errors' IPs, for warn_missing() */
	size_t		nerrips, cerrips;
	struct stmt	s_ch, s_ts, s_br, s_bc;
	struct ix_xrow	*xq;		/* IX_XQ exec_chunks rows, a ring */
	size_t		xq_head, xq_n;
	struct stmt	s_ev;		/* one events row (sideband's) */
	struct stmt	s_evn[IX_EV_LOG];	/* 2^k events rows */
	struct ix_evrow	evq[IX_EV_BATCH];	/* events rows not written */
	size_t		nevq;
	struct hwtr_cs_writer *csw;	/* calls (colstore.h) */
	int64_t		cs_thread;	/* the thread csw writes, 0: none */
	struct stmt	s_cy;		/* cycles */
	struct stmt	s_sy;		/* symbols of call targets */
	int64_t		next_sym;	/* symbols.id of the next one */
	/* Call targets named so far: (image << 48 ^ addr) + 1, id. */
	uint64_t	*ct_key;
	int64_t		*ct_id;
	size_t		nct, ctcap;
	int64_t		ncycles;	/* cycles rows so far */
	/* Global file names. */
	char		**files;
	size_t		nfiles, cfiles;
	uint32_t	*ftab;
	size_t		fcap;
};

/*
 * The driver's run (ix.c): the archive, the units every layer reads, and
 * the layers, each created and freed by its own file.
 */
struct run {
	struct hwtr_ix	*ix;
	struct hwtr_ar	*ar;
	const char	*archive;
	char		archive_id[HWTR_AR_ID_LEN];
	char		tmpdir[64];	/* the images' copies */
	/* Units (ix_make_units()): what the database calls streams. */
	size_t		nstreams;
	size_t		nunits;
	size_t		*ustream;	/* unit -> archive stream index */
	size_t		*ufirst;	/* archive stream -> its first unit */
	struct ix_ures	*ures;
	struct ix_images *im;
	struct ix_cpusplit cs;		/* CPU streams' parts (cpusplit.c) */
	struct ix_pipe	*pl;
	struct ix_stitch st;		/* stitch.c */
	struct ix_writer *wr;
};

#endif /* !HWTR_IX_RUN_H */
