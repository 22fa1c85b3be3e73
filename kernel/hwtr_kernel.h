/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * kernel/'s interface to the capture session (capture/): the PT encoder
 * every software source feeds, the trace sources' ops table, and the
 * sideband collector.  Not installed: a front end uses the capture
 * session of hwtrace.h (hwtr_cap_*).
 */

#ifndef HWTR_KERNEL_H
#define HWTR_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#include "hwtrace.h"

/*
 * 6a. The PT encoder: control-flow events in, genuine Intel PT packets out
 * (written with libipt's packet encoder).  Every software trace source
 * uses it, one encoder per traced thread.  The stream it writes decodes
 * with libipt's instruction decoder (pt_insn_*) exactly as the thread ran.
 *
 * How to use this:
 *   1) hwtr_ptenc_new() with an output callback that receives packet bytes
 *      (in pieces of any size, in order).
 *   2) hwtr_ptenc_enable(ip) where tracing starts or resumes (TIP.PGE; the
 *      first one is preceded by PSB+; a MODE.exec precedes it when the
 *      mode changed).
 *   3) For every control transfer the traced thread makes, in order:
 *      hwtr_ptenc_cond() for a conditional branch (jcc, jrcxz, loop),
 *      hwtr_ptenc_call() for every near call (direct or indirect),
 *      hwtr_ptenc_ret() for a near return, hwtr_ptenc_indirect() for an
 *      indirect near jump, hwtr_ptenc_far() for a far jump, call or return
 *      that stays in traced (user) code.  Direct jumps need nothing.
 *   4) hwtr_ptenc_disable() when the thread leaves traced code: with ip 0
 *      right after a syscall/sysenter/int instruction was reported
 *      (synchronous: the kernel is not traced); with the ip of the next,
 *      not executed instruction when the thread was interrupted there
 *      (asynchronous: a signal delivered between two instructions).
 *      hwtr_ptenc_enable() when it comes back (resume ip, signal handler,
 *      sigreturn target).
 *   5) hwtr_ptenc_at(ip) before instructions (at least now and then, e.g.
 *      at every basic block): a PSB+ is inserted there once @psb_period
 *      bytes were written since the last one.
 *   6) hwtr_ptenc_flush() before a buffer is handed over; hwtr_ptenc_free().
 * Return compression follows libipt's decoder exactly: a call pushes its
 * return address on a 64-deep stack (not a direct call to the next
 * instruction, the PIC idiom), a return to the top of that stack is one
 * taken TNT bit and pops it, any other return is a TIP and pops nothing.
 * The stack is emptied at every PSB so decoding may start at any PSB.
 */
struct hwtr_ptenc;

struct hwtr_ptenc_opts {
	uint32_t	psb_period;	/* bytes between PSB+; 0: 4096 */
	int		no_ret_compression;
	int		no_tsc;		/* no TSC packets */
	uint8_t		cbr;		/* core:bus ratio for CBR; 0: none */
};

/*
 * Receives encoded bytes; a negative return stops the encoder (every later
 * call returns -HWTR_E_IO).  @psb, when not NULL, is told the stream offset
 * of every PSB before its bytes are written (ring buffers cut there).
 */
struct hwtr_ptenc_out {
	int	(*write)(void *arg, const void *buf, size_t len);
	void	(*psb)(void *arg, uint64_t offset);
	void	*arg;
};

int hwtr_ptenc_new(struct hwtr_ptenc **encp, const struct hwtr_ptenc_opts *opts,
    const struct hwtr_ptenc_out *out);
void hwtr_ptenc_free(struct hwtr_ptenc *enc);

/* Tracing (re)starts at @ip in 64-bit (@mode64) or 32-bit mode. */
int hwtr_ptenc_enable(struct hwtr_ptenc *enc, uint64_t ip, int mode64,
    uint64_t tsc);
/*
 * Tracing stops.  @ip 0: synchronously, by the far branch (syscall, int)
 * just reported (TIP.PGD).  @ip != 0: asynchronously, before the
 * instruction at @ip executed (FUP @ip, TIP.PGD).
 */
int hwtr_ptenc_disable(struct hwtr_ptenc *enc, uint64_t ip, uint64_t tsc);
int hwtr_ptenc_cond(struct hwtr_ptenc *enc, int taken);
/*
 * @n (<= 64) conditional branches at once: bit n-1 of @bits is the oldest,
 * bit 0 the newest (1: taken).  The packets are those of @n calls of
 * hwtr_ptenc_cond() in that order.
 */
int hwtr_ptenc_tnt(struct hwtr_ptenc *enc, uint64_t bits, unsigned n);
/*
 * A near call to @target whose return address is @ret_ip (the address after
 * the call instruction); @indirect: the target came from a register or
 * memory (TIP @target).
 */
int hwtr_ptenc_call(struct hwtr_ptenc *enc, uint64_t ret_ip, uint64_t target,
    int indirect);
/* A near return to @target (compressed to one TNT bit when it can be). */
int hwtr_ptenc_ret(struct hwtr_ptenc *enc, uint64_t target);
/* An indirect near jump to @target. */
int hwtr_ptenc_indirect(struct hwtr_ptenc *enc, uint64_t target);
/* A far jump, call or return (iret, lret) to @target in 64/32-bit mode. */
int hwtr_ptenc_far(struct hwtr_ptenc *enc, uint64_t target, int mode64);
/* The instruction at @ip is about to execute: a PSB+ may go here. */
int hwtr_ptenc_at(struct hwtr_ptenc *enc, uint64_t ip, uint64_t tsc);
/*
 * How many more branches hwtr_ptenc_tnt() can take, with no other call in
 * between, while hwtr_ptenc_at() would still write nothing (-1: it may
 * write a PSB+ now).  A caller that counts them may skip hwtr_ptenc_at()
 * until then.
 */
int hwtr_ptenc_tnt_room(const struct hwtr_ptenc *enc);
/* Make the next hwtr_ptenc_at() (or enable) write a PSB+. */
void hwtr_ptenc_want_psb(struct hwtr_ptenc *enc);
/* A TSC packet (when @tsc differs from the last one written). */
int hwtr_ptenc_tsc(struct hwtr_ptenc *enc, uint64_t tsc);
/* Write pending TNT bits and hand every byte to the output. */
int hwtr_ptenc_flush(struct hwtr_ptenc *enc);
/* Bytes produced so far (written or still buffered). */
uint64_t hwtr_ptenc_bytes(const struct hwtr_ptenc *enc);
/* 1 while tracing is enabled (between enable and disable). */
int hwtr_ptenc_enabled(const struct hwtr_ptenc *enc);

/*
 * 6b. Trace sources (kernel/) and capture sessions (capture/).
 *
 * A trace source is an ops table shaped like FreeBSD's struct
 * hwt_backend_ops: static <name>_backend_<op>() functions wired together
 * with designated initializers (kernel/step.c is the model).  A capture
 * session (hwtr_cap_*) drives one source:
 *   init -> configure -> enable (launch or attach) -> read ... read (until it
 *   returns 1: everything traced has ended) -> disable -> deinit,
 * and the source reports what it sees through the session's sink
 * (struct hwtr_src_sink): new threads (the session then calls
 * thread_alloc), their ends (thread_free follows), processes starting,
 * exec'ing and exiting, sideband records and ground truth.  Every traced
 * thread gets a struct hwtr_src_thread whose PT encoder @enc the source
 * feeds; the session owns the encoder, its buffer policy (stream, ring,
 * stop) and the archive stream behind it, so every source gets the same
 * buffers, images, sideband and archive writing for free.
 *
 *
 * How to add a source: write kernel/<name>.c with its ops table and add it
 * to the list in kernel/sources.c.
 */
struct hwtr_src;

/* One traced thread, as the session and the source share it. */
struct hwtr_src_thread {
	int32_t		pid;
	int32_t		tid;
	/* Feed this; NULL once the thread's trace stopped (stop-on-full). */
	struct hwtr_ptenc *enc;
	void		*priv;		/* the source's (thread_alloc) */
	void		*owner;		/* the session's */
	uint64_t	ninsn;		/* instructions seen, kept by the source */
	/*
	 * Stop-on-full: once hwtr_ptenc_bytes(@enc) reaches @limit (0: no
	 * limit), or when the session sets @full, the source ends the
	 * thread's trace at its next instruction boundary (TIP.PGD), sets
	 * @full and stops feeding @enc.
	 */
	uint64_t	limit;
	int		full;
};

/* What happened to a process (struct hwtr_src_sink.proc). */
enum hwtr_src_proc_what {
	HWTR_PROC_START = 1,		/* first process, fork or attach */
	HWTR_PROC_EXEC,			/* its image was replaced: @path */
	HWTR_PROC_MMAP,			/* its executable mappings may have changed */
	HWTR_PROC_EXIT			/* @kind/@value say how */
};

struct hwtr_src_proc {
	enum hwtr_src_proc_what what;
	int32_t		pid;
	int32_t		ppid;		/* -1 unknown */
	const char	*path;		/* EXEC: the new executable */
	enum hwtr_exit_kind kind;	/* EXIT */
	int32_t		value;
	uint64_t	time;		/* trace time */
};

/*
 * How a source reports to its session.  Every function returns >= 0 or
 * -HWTR_E_*; a negative return asks the source to stop tracing.
 */
struct hwtr_src_sink {
	void	*arg;
	/* A thread appeared (@ptid: creating thread or -1); *thrp is the session's. */
	int	(*thread_start)(void *arg, int32_t pid, int32_t tid,
		    int32_t ptid, uint64_t time, struct hwtr_src_thread **thrp);
	/* The thread ended; @thr is invalid after this returns. */
	int	(*thread_exit)(void *arg, struct hwtr_src_thread *thr,
		    enum hwtr_exit_kind kind, int32_t value, uint64_t time);
	int	(*proc)(void *arg, const struct hwtr_src_proc *ev);
	int	(*sideband)(void *arg, const struct hwtr_sb_rec *rec);
	/* Ground truth (test mode): instruction addresses @thr executed. */
	int	(*groundtruth)(void *arg, struct hwtr_src_thread *thr,
		    const uint64_t *ip, size_t n);
	/* A trigger fired in the traced program (ring mode snapshots). */
	int	(*trigger)(void *arg, struct hwtr_src_thread *thr,
		    const char *why);
	/*
	 * @thr's trace lost something here: @bytes of trace (overflow,
	 * truncated), or instructions the source could not record
	 * (HWTR_LOST_UNTRACED, @bytes 0).
	 */
	int	(*lost)(void *arg, struct hwtr_src_thread *thr,
		    enum hwtr_lost_reason why, uint64_t bytes, uint64_t time);
	/*
	 * From @time (trace time) on, @pid's code at [@addr, @addr + @len)
	 * is @bytes (borrowed): code in anonymous memory, which no file
	 * holds (issue 32).  Sources report it before the first trace time
	 * it runs at, once per version; the session keeps the versions and
	 * returns 1 when these bytes are a new one, 0 when it had them.
	 * After a 1 the source puts a timestamp (PSB, TSC >= @time) in the
	 * trace before the code runs: a decoder's time is that of the last
	 * timestamp, and must tell the versions apart.
	 */
	int	(*code)(void *arg, int32_t pid, uint64_t addr,
		    const uint8_t *bytes, uint32_t len, uint64_t time);
};

/* What a session asks of its source. */
struct hwtr_src_config {
	char *const	*argv;		/* launch this command, or */
	int32_t		pid;		/* attach to this process (> 0) */
	int		no_follow;	/* only the first process */
	int		ground_truth;	/* report every instruction address */
	/* Stop tracing and hand over when *@stop becomes non-zero. */
	const volatile int *stop;
	/* --trigger: ELF vaddr of the symbol in the main executable, 0 none */
	uint64_t	trigger_vaddr;
	int		trigger_pie;	/* the executable is ET_DYN */
	const char	*trigger_name;
	struct hwtr_log	log;
	/* What hardware sources need of the session's configuration. */
	int		mode;		/* enum hwtr_cap_mode */
	uint64_t	buffer_size;	/* 0: the source's default */
	int		no_ret_compression;
	const volatile int *snapshot;	/* SIGUSR2 counter, may be NULL */
	const char	*filter;	/* perf: address filters, or NULL */
	const char	*cpus;		/* perf: CPU list ("0-3,6"), or NULL */
	int		all_cpus;	/* perf: every CPU (-a) */
};

/*
 * The trace-source operations (FreeBSD's hwt_backend_ops).  @read runs
 * the traced program for a while (a batch of events, or until @stop) and
 * returns 0 to be called again, 1 when every traced process has ended or
 * was let go, or -HWTR_E_*.  @disable stops tracing: launched processes
 * are killed, attached ones detached and left running.
 */
struct hwtr_src_ops {
	const char	*name;
	int	(*init)(struct hwtr_src *src);
	int	(*configure)(struct hwtr_src *src,
		    const struct hwtr_src_config *cfg);
	int	(*enable)(struct hwtr_src *src);
	int	(*read)(struct hwtr_src *src);
	int	(*disable)(struct hwtr_src *src);
	int	(*thread_alloc)(struct hwtr_src *src,
		    struct hwtr_src_thread *thr);
	void	(*thread_free)(struct hwtr_src *src,
		    struct hwtr_src_thread *thr);
	void	(*deinit)(struct hwtr_src *src);
};

/*
 * A source instance: the ops, the session's sink and what the source
 * reports back.  Sources keep their own state in @priv.
 */
struct hwtr_src {
	const struct hwtr_src_ops *ops;
	const struct hwtr_src_sink *sink;
	struct hwtr_src_config cfg;
	void		*priv;
	/* Filled by the source (enable at the latest). */
	int32_t		first_pid;
	struct hwtr_timeconv tconv;
	struct hwtr_pt_config pt;	/* per-stream PT configuration */
	const char	*version;	/* may be NULL */
	/* Where its sideband comes from ("valgrind"); NULL: the session's. */
	const char	*sideband_origin;
	const char *const *caveats;
	size_t		ncaveats;
	/* What the source found out about this machine (meta notes). */
	const char *const *notes;
	size_t		nnotes;
	/* Filled by the source when the first process ends. */
	enum hwtr_exit_kind exit_kind;
	int32_t		exit_value;
	/* Why the last operation failed (the CLI prints it). */
	char		errmsg[HWTR_ERRMSG_MAX];
	/* errno of the command's failed exec (enable), 0 otherwise. */
	int		exec_errno;
	/*
	 * A hardware source's recording (perf: a perf.data file): set, the
	 * session reports no threads of its own and makes the archive of it
	 * with hwtr_import_perf_capture().
	 */
	const char	*recording;
};

/* The ops table named @name ("step"), or NULL. */
const struct hwtr_src_ops *hwtr_src_find(const char *name);

/*
 * The source to use when none is named (struct hwtr_cap_config.source
 * NULL): "perf" when its PMU is there and usable, else "valgrind" when it can run
 * @argv (valgrind installed, its hwtrace tool built for that version, an
 * x86-64 program, not attaching to @pid), else "step".  @why (may be
 * NULL) receives why perf was chosen, or else why valgrind was not.
 */
const char *hwtr_src_auto(char *const *argv, int32_t pid, char *why,
    size_t len);

/* The current trace time: CLOCK_MONOTONIC in ns (software sources). */
uint64_t hwtr_src_now(void);

/*
 * 6c. Sideband collection (kernel/sideband.c) and image collection
 * (capture/images.c), shared by every software trace source.
 *
 * How to use the sideband collector (hwtr_sbc_*):
 *   1) hwtr_sbc_open(&sbc, &opts, errbuf, errlen) on the first traced
 *      process while it is stopped: a launched command before its execve
 *      (so that the exec is seen), or a running process to attach to
 *      (opts.attach: its threads, names and executable mappings are read
 *      from /proc and reported first).  It opens a perf_event_open(2)
 *      dummy software event per CPU on the process (inherit: every process
 *      and thread it creates later is followed) with MMAP2 records carrying
 *      build-ids, COMM with the exec flag and FORK/EXIT, stamped with
 *      CLOCK_MONOTONIC.  When perf_event_open is refused (EACCES, EPERM,
 *      ENOSYS, ...), opts.force_proc is set or the environment has
 *      HWTRACE_SIDEBAND=proc, it falls back to /proc: the records are
 *      then made from /proc/<pid>/maps when the caller reports events
 *      (step 2).  A kernel without attr.build_id (before 5.12, or
 *      HWTRACE_SIDEBAND=perf-no-build-id) gets build-ids read from the
 *      mapped files instead.  hwtr_sbc_origin() names the origin used: store it
 *      as struct hwtr_capture_meta.sideband_origin.
 *   2) Report what the tracer sees, when it sees it, while the process is
 *      stopped: hwtr_sbc_note_fork(), hwtr_sbc_note_clone(),
 *      hwtr_sbc_note_exec() (at the exec stop, the new image in place),
 *      hwtr_sbc_note_mmap() (after a syscall that may have changed
 *      executable mappings returned: mmap, mprotect, munmap, mremap,
 *      shmat, ...) and hwtr_sbc_note_exit() (with the status).  With
 *      perf_event the kernel's own records cover most of these; calling
 *      them anyway is cheap and needed for the [vdso] mapping and for
 *      exit statuses.
 *   3) hwtr_sbc_read() regularly (with every trace chunk, say) and once
 *      with @flush at the end: @fn receives each new record in time order.
 *      The record and its strings are valid during the call only; @fn may
 *      change the record (hwtr_img_mmap() sets mmap.image) before writing
 *      it with hwtr_aw_sideband().
 *   4) hwtr_sbc_close().
 *
 * What the records say:
 * - Times are CLOCK_MONOTONIC nanoseconds, the step source's trace time.
 * - The first process gets a PROC_START (and, when attaching, a
 *   THREAD_START per other thread), then COMM records.
 * - A forked process starts with its parent's mappings: no MMAP records
 *   are made for it until it maps something new or execs.  A new thread
 *   (THREAD_START) shares its process's mappings.
 * - An exec is COMM (exec 1), then EXEC (path of the new executable), then
 *   an MMAP per executable mapping of the new image (executable,
 *   interpreter, [vdso]) as it is loaded; mappings before it are gone.
 * - MMAP is made for executable mappings only ([vsyscall], a fixed legacy
 *   page, is not reported; hwtr_img_mmap() handles it if a caller does).
 *   perf_event reports no munmap: a later MMAP over the same range
 *   replaces an earlier one.  /proc reports MUNMAP for executable
 *   mappings that disappeared.
 * - PROC_EXIT ends the process and its main thread; other threads get
 *   THREAD_EXIT.  The status is the one given to hwtr_sbc_note_exit()
 *   (HWTR_EXIT_NONE when the caller never said).
 * - Records the kernel dropped (ring overflow) become one HWTR_SB_LOST
 *   record with reason HWTR_LOST_SIDEBAND and the count.  The kernel says
 *   so before the next record it manages to write, so a loss in the very
 *   last moments may go unreported: read often, or use more ring_pages.
 */
struct hwtr_sbc;

struct hwtr_sbc_opts {
	int32_t		pid;		/* first traced process */
	int		attach;		/* running process: report its state */
	int		force_proc;	/* do not try perf_event_open */
	uint32_t	ring_pages;	/* per-CPU ring, power of 2; 0: 128 */
	const struct hwtr_log *log;	/* may be NULL; borrowed */
};

/*
 * Start collecting.  Fails only when neither perf_event nor /proc works
 * (no such process, /proc not mounted); @errbuf then says why.  A refused
 * perf_event_open is logged (HWTR_LOG_INFO) with its reason.
 */
int hwtr_sbc_open(struct hwtr_sbc **sbcp, const struct hwtr_sbc_opts *opts,
    char *errbuf, size_t errlen);

/* "perf_event" or "proc"; static storage. */
const char *hwtr_sbc_origin(const struct hwtr_sbc *sbc);

/* Details of the last failure; valid until the next call. */
const char *hwtr_sbc_errmsg(const struct hwtr_sbc *sbc);

/*
 * Events the tracer observed.  @time is CLOCK_MONOTONIC ns, or 0 for
 * "now".  A failure to read /proc (the process is gone) is not an error:
 * it is logged and the record is made from what is known.
 */
int hwtr_sbc_note_fork(struct hwtr_sbc *sbc, int32_t pid, int32_t ppid,
    uint64_t time);
int hwtr_sbc_note_clone(struct hwtr_sbc *sbc, int32_t pid, int32_t tid,
    int32_t ptid, uint64_t time);
int hwtr_sbc_note_exec(struct hwtr_sbc *sbc, int32_t pid, uint64_t time);
int hwtr_sbc_note_mmap(struct hwtr_sbc *sbc, int32_t pid, uint64_t time);
int hwtr_sbc_note_exit(struct hwtr_sbc *sbc, int32_t pid, int32_t tid,
    enum hwtr_exit_kind kind, int value, uint64_t time);

/*
 * Hand out new records, in time order, to @fn; a negative return from @fn
 * stops and is returned.  Without @flush, records younger than a short
 * reorder window (the per-CPU rings are merged by time) and process exits
 * still waiting for their status (at most 2 s) are kept for a later call.
 * Returns the number of records handed out.
 */
typedef int (*hwtr_sbc_fn)(void *arg, struct hwtr_sb_rec *rec);
int hwtr_sbc_read(struct hwtr_sbc *sbc, int flush, hwtr_sbc_fn fn, void *arg);

struct hwtr_sbc_stats {
	uint64_t	records;	/* handed out */
	uint64_t	lost;		/* records the kernel dropped */
	uint32_t	nrings;		/* perf rings (CPUs), 0 with /proc */
};
void hwtr_sbc_stats(const struct hwtr_sbc *sbc, struct hwtr_sbc_stats *st);

/* Stop collecting; records not read are dropped.  NULL is accepted. */
void hwtr_sbc_close(struct hwtr_sbc *sbc);

#endif /* !HWTR_KERNEL_H */
