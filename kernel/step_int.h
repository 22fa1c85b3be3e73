/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * What the step source's files share (kernel/ only).  They build on x86-64
 * Linux alone; elsewhere step.c says the source is not supported.
 *   step.c         probing for late traps, launch and attach, the ops
 *   step_thread.c  threads and processes, their memory and decoded code,
 *                  the ground truth, the end of a thread
 *   step_loop.c    the stepping loop: what each stop says the pending
 *                  instruction did, told to the thread's PT encoder
 */

#ifndef HWTR_STEP_INT_H
#define HWTR_STEP_INT_H

#include <stdio.h>

#include "hwtr_common.h"
#include "sources.h"

#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hwtr_x86.h"

#define STEP_HASH	1024
#define STEP_PAGES	64		/* code cache pages per process */
#define STEP_ICACHE	8192		/* decoded instructions per process */
#define STEP_GT_BATCH	8192
#define STEP_BATCH	4096		/* stops handled per read() */
#define USER_CS64	0x33

struct step_page {
	uint64_t	addr;		/* page address, or UINT64_MAX */
	uint8_t		data[4096];
	size_t		len;		/* bytes readable */
};

struct step_icache {
	uint64_t	ip;
	uint8_t		mode64;
	uint8_t		valid;
	struct hwtr_x86_insn insn;
};

/* A mapping of a file, [lo, hi): its code is in an image. */
struct step_fmap {
	uint64_t	lo;
	uint64_t	hi;
};

struct step_proc {
	pid_t		pid;
	int		memfd;
	/*
	 * Code outside files (issue 32): the file mappings, read from
	 * /proc/PID/maps again after step_proc_invalidate(); and, when the
	 * last step_proc_decode() was of code outside them (@anon), the
	 * bytes read at its address, up to the page's end (at least 15).
	 */
	struct step_fmap *fmaps;
	size_t		nfmaps;
	size_t		fmcap;
	int		fmaps_stale;
	int		anon;
	size_t		alen;
	uint8_t		abuf[4096 + 16];
	int		nthreads;
	int		first;		/* the launched / attached process */
	int		exited;
	uint64_t	trigger;	/* runtime address, 0 none */
	struct step_page *pages;
	struct step_icache *icache;
	struct step_proc *next;
};

enum step_tstate {
	STEP_T_NEW = 0,		/* waiting for its first stop */
	STEP_T_RUN,
	STEP_T_DONE		/* exit reported, waiting to be reaped */
};

struct step_thread {
	pid_t		tid;
	enum step_tstate state;
	struct step_proc *proc;
	struct hwtr_src_thread *thr;
	int		have_pending;
	uint64_t	pip;
	int		pmode64;
	struct hwtr_x86_insn pinsn;
	uint64_t	psysno;		/* rax when a syscall is pending */
	int		stopped_trace;	/* trace ended (stop-on-full) */
	int		sim_skipped;	/* traps HWTRACE_TEST_LATE_TRAP took */
	uint64_t	*gt;
	size_t		ngt;
	struct step_thread *next;
};

struct step {
	struct hwtr_src	*src;
	struct step_thread *threads[STEP_HASH];
	struct step_proc *procs;
	int		nthreads;	/* not yet reaped */
	int		launched;
	pid_t		first;
	int		first_exited;
	int		ptrace_opts;
	int		detaching;
	/* Late single-step traps: bit 1 << enum hwtr_x86_vmexit. */
	unsigned	late;		/* probed (or simulated) on this machine */
	unsigned	exact;		/* probed and found exact */
	unsigned	sim;		/* simulated (HWTRACE_TEST_LATE_TRAP) */
	int		simlost;	/* traps lost each time in all (1-3) */
	unsigned	hwlate;		/* probed late, before any simulation */
	uint64_t	nresolved;	/* late stops whose path was recovered */
	uint64_t	ngaps;		/* late stops left as gaps */
	char		note[512];
	char		caveat[512];
	const char	*notes[1];
	const char	*caveats[1];
};

/*
 * At most this many instructions may run between two stops: the pending
 * one whose trap was lost and those after it, each of which but the last
 * a hypervisor-emulated instruction that lost its trap too.
 */
#define STEP_MAXHIDDEN	4

struct step_hidden {
	uint64_t	ip;
	uint64_t	next;		/* where it went */
	struct hwtr_x86_insn insn;
};


/* step_thread.c */
struct step_thread *step_thread_find(struct step *st, pid_t tid);
void	step_thread_unlink(struct step *st, struct step_thread *t);
struct step_proc *step_proc_find(struct step *st, pid_t pid);
void	step_proc_invalidate(struct step_proc *p);
int	step_proc_open_mem(struct step_proc *p);
void	step_proc_free(struct step *st, struct step_proc *p);
int	step_proc_decode(struct step_proc *p, uint64_t ip, int mode64,
	    struct hwtr_x86_insn *insn);
void	step_err(struct step *st, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
int	step_gt_flush(struct step *st, struct step_thread *t);
int	step_gt_push(struct step *st, struct step_thread *t, uint64_t ip);
struct hwtr_ptenc *step_tenc(struct step_thread *t);
int	step_sig_caught(pid_t tid, int sig);
int	step_proc_start(struct step *st, pid_t pid, pid_t ppid,
	    struct step_proc **pp);
int	step_thread_new(struct step *st, pid_t tid, pid_t ptid,
	    struct step_thread **tp);
void	step_thread_end(struct step *st, struct step_thread *t,
	    enum hwtr_exit_kind kind, int32_t value, uint64_t at);
void	step_thread_reap(struct step *st, struct step_thread *t);
int	step_is_mm_syscall(uint64_t nr);

/* step_loop.c */
int	step_complete(struct step *st, struct step_thread *t, uint64_t r,
	    int mode64);
void	step_trigger_resolve(struct step *st, struct step_proc *p);
int	step_on_exec(struct step *st, struct step_thread *t);
int	step_handle(struct step *st, pid_t tid, int status);

#endif /* !HWTR_STEP_INT_H */
