/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The "step" trace source: an emulated Intel PT unit for x86-64 Linux.
 *
 * Every thread of every traced process is single-stepped with ptrace.  At
 * each stop the thread is about to execute the instruction at RIP; it is
 * decoded (Zydis, through common/x86.c) and remembered as "pending".  At the
 * next stop the new RIP tells what the pending instruction did (taken or
 * not, where an indirect branch or return went), and the thread's PT
 * encoder is told.  Syscalls and signal delivery disable packet generation
 * (the kernel is not traced) and the next user instruction re-enables it,
 * exactly as a PT unit filtering on CPL > 0 would.
 *
 * Deciding whether the pending instruction ran at a stop:
 *  - a single-step trap: it ran, unless it is a rep-prefixed string
 *    instruction still at the same RIP (one iteration done, not finished);
 *  - a ptrace event (clone, fork, exec, exit) or a signal stop: it ran iff
 *    RIP moved (a faulting instruction, or one interrupted by a signal,
 *    leaves RIP where it was).
 * A signal with a handler is delivered as FUP (the next instruction, not
 * executed) + TIP.PGD, and tracing resumes (TIP.PGE) at the handler's first
 * instruction, where the kernel reports a single-step trap.
 *
 * Time: CLOCK_MONOTONIC nanoseconds, written as TSC packets, so the
 * perf_event sideband (clockid CLOCK_MONOTONIC) shares the time domain.
 */

#include <stdio.h>

#include "hwtr_common.h"
#include "sources.h"

#if !defined(__linux__) || !defined(__x86_64__)
/*
 * Elsewhere the step source exists only to say so: it needs Linux's
 * ptrace and the x86-64 register set.
 */
static int
step_backend_init(struct hwtr_src *src)
{
	(void)src;
	return (0);
}

static int
step_backend_configure(struct hwtr_src *src, const struct hwtr_src_config *cfg)
{
	(void)cfg;
	snprintf(src->errmsg, sizeof(src->errmsg), "the step source needs "
	    "x86-64 Linux: this system is not supported");
	return (-HWTR_E_UNSUPPORTED);
}

static int
step_backend_fail(struct hwtr_src *src)
{
	(void)src;
	return (-HWTR_E_UNSUPPORTED);
}

static int
step_backend_thread_alloc(struct hwtr_src *src, struct hwtr_src_thread *thr)
{
	(void)src;
	(void)thr;
	return (-HWTR_E_UNSUPPORTED);
}

static void
step_backend_thread_free(struct hwtr_src *src, struct hwtr_src_thread *thr)
{
	(void)src;
	(void)thr;
}

static void
step_backend_deinit(struct hwtr_src *src)
{
	(void)src;
}

const struct hwtr_src_ops hwtr_step_ops = {
	.name = "step",
	.init = step_backend_init,
	.configure = step_backend_configure,
	.enable = step_backend_fail,
	.read = step_backend_fail,
	.disable = step_backend_fail,
	.thread_alloc = step_backend_thread_alloc,
	.thread_free = step_backend_thread_free,
	.deinit = step_backend_deinit,
};

#else /* Linux on x86-64 */

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

struct step_proc {
	pid_t		pid;
	int		memfd;
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
	int		simlost;	/* traps it loses each time (1-3) */
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

/* ------------------------------------------------------------------ */

static struct step_thread *
thread_find(struct step *st, pid_t tid)
{
	struct step_thread *t;

	for (t = st->threads[(unsigned)tid % STEP_HASH]; t != NULL;
	    t = t->next)
		if (t->tid == tid)
			return (t);
	return (NULL);
}

static void
thread_unlink(struct step *st, struct step_thread *t)
{
	struct step_thread **pp;

	for (pp = &st->threads[(unsigned)t->tid % STEP_HASH]; *pp != NULL;
	    pp = &(*pp)->next)
		if (*pp == t) {
			*pp = t->next;
			return;
		}
}

static struct step_proc *
proc_find(struct step *st, pid_t pid)
{
	struct step_proc *p;

	for (p = st->procs; p != NULL; p = p->next)
		if (p->pid == pid)
			return (p);
	return (NULL);
}

static void
proc_invalidate(struct step_proc *p)
{
	size_t i;

	for (i = 0; i < STEP_PAGES; i++)
		p->pages[i].addr = UINT64_MAX;
	memset(p->icache, 0, STEP_ICACHE * sizeof(*p->icache));
}

static int
proc_open_mem(struct step_proc *p)
{
	char path[64];

	if (p->memfd >= 0)
		close(p->memfd);
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)p->pid);
	p->memfd = open(path, O_RDONLY | O_CLOEXEC);
	return (p->memfd >= 0 ? 0 : -HWTR_E_IO);
}

static struct step_proc *
proc_new(struct step *st, pid_t pid)
{
	struct step_proc *p;

	if ((p = calloc(1, sizeof(*p))) == NULL)
		return (NULL);
	p->pid = pid;
	p->memfd = -1;
	p->pages = malloc(STEP_PAGES * sizeof(*p->pages));
	p->icache = calloc(STEP_ICACHE, sizeof(*p->icache));
	if (p->pages == NULL || p->icache == NULL) {
		free(p->pages);
		free(p->icache);
		free(p);
		return (NULL);
	}
	proc_invalidate(p);
	(void)proc_open_mem(p);
	p->next = st->procs;
	st->procs = p;
	return (p);
}

static void
proc_free(struct step *st, struct step_proc *p)
{
	struct step_proc **pp;

	for (pp = &st->procs; *pp != NULL; pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	if (p->memfd >= 0)
		close(p->memfd);
	free(p->pages);
	free(p->icache);
	free(p);
}

static const struct step_page *
proc_page(struct step_proc *p, uint64_t addr)
{
	struct step_page *pg = &p->pages[(addr >> 12) % STEP_PAGES];
	ssize_t n;

	if (pg->addr == addr)
		return (pg);
	pg->addr = UINT64_MAX;
	if (p->memfd < 0)
		return (NULL);
	n = pread(p->memfd, pg->data, sizeof(pg->data), (off_t)addr);
	if (n <= 0)
		return (NULL);
	pg->len = (size_t)n;
	pg->addr = addr;
	return (pg);
}

/* Decode the instruction at @ip of process @p, through its caches. */
static int
proc_decode(struct step_proc *p, uint64_t ip, int mode64,
    struct hwtr_x86_insn *insn)
{
	struct step_icache *ic = &p->icache[(ip ^ (ip >> 13)) % STEP_ICACHE];
	const struct step_page *pg;
	uint8_t buf[32];
	uint64_t page = ip & ~(uint64_t)4095;
	size_t off = ip & 4095, n;
	int rc;

	if (ic->valid && ic->ip == ip && ic->mode64 == mode64) {
		*insn = ic->insn;
		return (0);
	}
	if ((pg = proc_page(p, page)) == NULL || off >= pg->len) {
		insn->kind = HWTR_X86_BAD;
		return (-HWTR_E_IO);
	}
	n = pg->len - off;
	if (n > 15)
		n = 15;
	memcpy(buf, pg->data + off, n);
	if (n < 15 && pg->len == 4096 &&
	    (pg = proc_page(p, page + 4096)) != NULL) {
		size_t m = 15 - n < pg->len ? 15 - n : pg->len;

		memcpy(buf + n, pg->data, m);
		n += m;
	}
	rc = hwtr_x86_decode(buf, n, ip, mode64 ? 64 : 32, insn);
	if (rc == 0) {
		ic->ip = ip;
		ic->mode64 = (uint8_t)mode64;
		ic->insn = *insn;
		ic->valid = 1;
	}
	return (rc);
}

/* ------------------------------------------------------------------ */

static void
step_err(struct step *st, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
step_err(struct step *st, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(st->src->errmsg, sizeof(st->src->errmsg), fmt, ap);
	va_end(ap);
	hwtr_logf(&st->src->cfg.log, HWTR_LOG_DEBUG, "step: %s",
	    st->src->errmsg);
}

static int
gt_flush(struct step *st, struct step_thread *t)
{
	int rc = 0;

	if (t->ngt > 0 && t->thr != NULL && st->src->sink->groundtruth)
		rc = st->src->sink->groundtruth(st->src->sink->arg, t->thr,
		    t->gt, t->ngt);
	t->ngt = 0;
	return (rc);
}

static int
gt_push(struct step *st, struct step_thread *t, uint64_t ip)
{
	if (t->gt == NULL)
		return (0);
	t->gt[t->ngt++] = ip;
	if (t->ngt == STEP_GT_BATCH)
		return (gt_flush(st, t));
	return (0);
}

static struct hwtr_ptenc *
tenc(struct step_thread *t)
{
	if (t->thr == NULL || t->stopped_trace)
		return (NULL);
	return (t->thr->enc);
}

/* The pid (thread group) of @tid, from /proc. */
static pid_t
tgid_of(pid_t tid)
{
	char path[64], line[256];
	FILE *fp;
	pid_t tg = tid;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	if ((fp = fopen(path, "re")) == NULL)
		return (tid);
	while (fgets(line, sizeof(line), fp) != NULL)
		if (strncmp(line, "Tgid:", 5) == 0) {
			tg = (pid_t)strtol(line + 5, NULL, 10);
			break;
		}
	fclose(fp);
	return (tg);
}

static pid_t
ppid_of(pid_t pid)
{
	char path[64], line[256];
	FILE *fp;
	pid_t pp = -1;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((fp = fopen(path, "re")) == NULL)
		return (-1);
	while (fgets(line, sizeof(line), fp) != NULL)
		if (strncmp(line, "PPid:", 5) == 0) {
			pp = (pid_t)strtol(line + 5, NULL, 10);
			break;
		}
	fclose(fp);
	return (pp);
}

/* 1 when the thread group of @tid has a handler for @sig. */
static int
sig_caught(pid_t tid, int sig)
{
	char path[64], line[256];
	FILE *fp;
	uint64_t mask = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	if ((fp = fopen(path, "re")) == NULL)
		return (0);
	while (fgets(line, sizeof(line), fp) != NULL)
		if (strncmp(line, "SigCgt:", 7) == 0) {
			mask = strtoull(line + 7, NULL, 16);
			break;
		}
	fclose(fp);
	return (sig >= 1 && sig <= 64 && (mask >> (sig - 1)) & 1);
}

static int
proc_start(struct step *st, pid_t pid, pid_t ppid, struct step_proc **pp)
{
	struct hwtr_src_proc ev;
	struct step_proc *p;

	if ((p = proc_find(st, pid)) == NULL) {
		if ((p = proc_new(st, pid)) == NULL)
			return (-HWTR_E_NOMEM);
		memset(&ev, 0, sizeof(ev));
		ev.what = HWTR_PROC_START;
		ev.pid = pid;
		ev.ppid = ppid;
		ev.time = hwtr_src_now();
		if (st->src->sink->proc != NULL)
			(void)st->src->sink->proc(st->src->sink->arg, &ev);
	}
	*pp = p;
	return (0);
}

/* A thread we trace from now on (its first stop is still to come). */
static int
thread_new(struct step *st, pid_t tid, pid_t ptid, struct step_thread **tp)
{
	struct step_thread *t;
	struct step_proc *p;
	pid_t pid;
	int rc;

	if ((t = thread_find(st, tid)) != NULL) {
		*tp = t;
		return (0);
	}
	pid = tgid_of(tid);
	if ((rc = proc_start(st, pid, ptid > 0 && pid == tid ?
	    tgid_of(ptid) : ppid_of(pid), &p)) < 0)
		return (rc);
	if ((t = calloc(1, sizeof(*t))) == NULL)
		return (-HWTR_E_NOMEM);
	t->tid = tid;
	t->proc = p;
	if (st->src->cfg.ground_truth &&
	    (t->gt = malloc(STEP_GT_BATCH * sizeof(*t->gt))) == NULL) {
		free(t);
		return (-HWTR_E_NOMEM);
	}
	rc = st->src->sink->thread_start(st->src->sink->arg, pid, tid, ptid,
	    hwtr_src_now(), &t->thr);
	if (rc < 0) {
		free(t->gt);
		free(t);
		return (rc);
	}
	p->nthreads++;
	t->next = st->threads[(unsigned)tid % STEP_HASH];
	st->threads[(unsigned)tid % STEP_HASH] = t;
	st->nthreads++;
	*tp = t;
	return (0);
}

/*
 * The thread's trace ends here (exit, detach): before its pending
 * instruction when it has one, else before @at, where it stands when
 * that is known (an async disable at that address).  0: not known, or
 * after a syscall, whose disable (in complete()) has no address.  An
 * enabled trace that ends without an address lets a decoder run on to
 * the next branch.
 */
static void
thread_end(struct step *st, struct step_thread *t, enum hwtr_exit_kind kind,
    int32_t value, uint64_t at)
{
	struct hwtr_ptenc *enc = tenc(t);

	if (t->state == STEP_T_DONE || t->thr == NULL)
		return;
	if (enc != NULL && hwtr_ptenc_enabled(enc))
		(void)hwtr_ptenc_disable(enc, t->have_pending ? t->pip : at,
		    hwtr_src_now());
	(void)gt_flush(st, t);
	t->have_pending = 0;
	(void)st->src->sink->thread_exit(st->src->sink->arg, t->thr, kind,
	    value, hwtr_src_now());
	t->thr = NULL;
	t->state = STEP_T_DONE;
}

static void
thread_reap(struct step *st, struct step_thread *t)
{
	thread_end(st, t, HWTR_EXIT_NONE, 0, 0);
	thread_unlink(st, t);
	st->nthreads--;
	if (t->proc != NULL)
		t->proc->nthreads--;
	free(t->gt);
	free(t);
}

static int
is_mm_syscall(uint64_t nr)
{
	/* mmap, mprotect, munmap, mremap, shmat, remap_file_pages */
	return (nr == 9 || nr == 10 || nr == 11 || nr == 25 || nr == 30 ||
	    nr == 216);
}

/*
 * The pending instruction ran and the thread now stands at @r: tell the
 * encoder what it did.
 */
static int
complete(struct step *st, struct step_thread *t, uint64_t r, int mode64)
{
	struct hwtr_ptenc *enc = tenc(t);
	const struct hwtr_x86_insn *in = &t->pinsn;
	uint64_t next = t->pip + in->len;
	int rc = 0;

	t->have_pending = 0;
	if (t->thr != NULL)
		t->thr->ninsn++;
	if (enc == NULL)
		return (0);
	if ((rc = gt_push(st, t, t->pip)) < 0)
		return (rc);
	switch (in->kind) {
	case HWTR_X86_JCC:
		rc = hwtr_ptenc_cond(enc, r != next);
		break;
	case HWTR_X86_CALL:
		rc = hwtr_ptenc_call(enc, next, in->target, 0);
		break;
	case HWTR_X86_CALL_IND:
		rc = hwtr_ptenc_call(enc, next, r, 1);
		break;
	case HWTR_X86_RET:
		rc = hwtr_ptenc_ret(enc, r);
		break;
	case HWTR_X86_JMP_IND:
		rc = hwtr_ptenc_indirect(enc, r);
		break;
	case HWTR_X86_SYSCALL:
		rc = hwtr_ptenc_disable(enc, 0, hwtr_src_now());
		if (!in->is_int && is_mm_syscall(t->psysno) &&
		    t->proc != NULL) {
			struct hwtr_src_proc ev;

			proc_invalidate(t->proc);
			memset(&ev, 0, sizeof(ev));
			ev.what = HWTR_PROC_MMAP;
			ev.pid = t->proc->pid;
			ev.time = hwtr_src_now();
			if (st->src->sink->proc != NULL)
				(void)st->src->sink->proc(st->src->sink->arg,
				    &ev);
		}
		break;
	case HWTR_X86_FAR:
		rc = hwtr_ptenc_far(enc, r, mode64);
		break;
	default:
		break;
	}
	return (rc);
}

/*
 * The paths of at most STEP_MAXHIDDEN instructions from @x that end at
 * the stop @r: walk() counts them in @nsol and keeps the first in @sol.
 */
struct step_walk {
	struct step_proc *p;
	uint64_t	r;
	int		mode64;
	int		nsol;
	int		nsol_insn;
	struct step_hidden cur[STEP_MAXHIDDEN];
	struct step_hidden sol[STEP_MAXHIDDEN];
};

static void
walk(struct step_walk *w, uint64_t x, int depth)
{
	struct hwtr_x86_insn in;
	uint64_t succ[2];
	int n = 0, i;

	if (depth >= STEP_MAXHIDDEN || w->nsol > 1)
		return;
	if (proc_decode(w->p, x, w->mode64, &in) < 0 || in.is_int)
		return;
	switch (in.kind) {
	case HWTR_X86_OTHER:
	case HWTR_X86_SYSCALL:
		succ[n++] = x + in.len;
		break;
	case HWTR_X86_JMP:
	case HWTR_X86_CALL:
		succ[n++] = in.target;
		break;
	case HWTR_X86_JCC:
		succ[n++] = x + in.len;
		if (in.target != x + in.len)
			succ[n++] = in.target;
		break;
	case HWTR_X86_JMP_IND:
	case HWTR_X86_CALL_IND:
	case HWTR_X86_RET:
	case HWTR_X86_FAR:
		/* Only the stop can say where it went: it must be the last. */
		succ[n++] = w->r;
		break;
	default:
		return;
	}
	for (i = 0; i < n; i++) {
		w->cur[depth].ip = x;
		w->cur[depth].next = succ[i];
		w->cur[depth].insn = in;
		if (succ[i] == w->r) {
			if (w->nsol++ == 0) {
				memcpy(w->sol, w->cur,
				    (size_t)(depth + 1) * sizeof(w->sol[0]));
				w->nsol_insn = depth + 1;
			}
			continue;
		}
		/*
		 * The trap after this one was lost too only if it is an
		 * instruction a hypervisor emulates.
		 */
		if (in.kind == HWTR_X86_OTHER && in.vmexit != HWTR_X86_VMX_NONE)
			walk(w, succ[i], depth + 1);
	}
}

/*
 * The thread's trace has a gap before @at: instructions ran between two
 * stops that cannot be told exactly.  Tracing stops there (TIP.PGD) and
 * the next begin() resumes it where the thread stands (TIP.PGE); the
 * session records the gap as lost (untraced).  Never a guess.
 */
static int
gap(struct step *st, struct step_thread *t, uint64_t at, uint64_t r)
{
	struct hwtr_ptenc *enc = tenc(t);
	int rc;

	t->have_pending = 0;
	if (st->ngaps++ == 0)
		hwtr_logf(&st->src->cfg.log, HWTR_LOG_WARN,
		    "step: tid %d: stopped at %#" PRIx64 " after the "
		    "instruction at %#" PRIx64 ", and what ran in between "
		    "cannot be told exactly: the trace has a gap there (this "
		    "and any later such gap is recorded as lost, untraced)",
		    (int)t->tid, r, t->pip);
	if (enc != NULL && hwtr_ptenc_enabled(enc) &&
	    (rc = hwtr_ptenc_disable(enc, at, hwtr_src_now())) < 0)
		return (rc);
	if (t->thr != NULL && st->src->sink->lost != NULL)
		return (st->src->sink->lost(st->src->sink->arg, t->thr,
		    HWTR_LOST_UNTRACED, 0, hwtr_src_now()));
	return (0);
}

/*
 * 1 when @r, where the pending instruction of @t leads, holds a branch
 * back to itself: after an instruction whose trap comes late here, a stop
 * at @r cannot tell whether that branch ran once unseen.
 */
static int
self_loop(struct step *st, struct step_thread *t, uint64_t r, int mode64)
{
	struct hwtr_x86_insn in;

	if (t->pinsn.vmexit == HWTR_X86_VMX_NONE ||
	    !(st->late & (1u << t->pinsn.vmexit)))
		return (0);
	if (proc_decode(t->proc, r, mode64, &in) < 0)
		return (0);
	return ((in.kind == HWTR_X86_JCC || in.kind == HWTR_X86_JMP) &&
	    in.target == r);
}

/*
 * The pending instruction ran and the thread stopped at @r.  Where the
 * hypervisor delivers the single-step trap late (after CPUID on some VMs,
 * the next instruction runs with no stop of its own), @r is not where the
 * pending instruction leads: decode forward from there to @r and tell the
 * encoder about every instruction on the way, when exactly one path of
 * at most STEP_MAXHIDDEN instructions gets there; else the trace gets a
 * gap.  Indirect branches, returns, far transfers and syscalls lead
 * anywhere, so only the others are checked.
 */
static int
settle(struct step *st, struct step_thread *t, uint64_t r, int mode64)
{
	const struct hwtr_x86_insn *in = &t->pinsn;
	struct step_walk w;
	uint64_t e[2], first = 0;
	int ne = 0, i, rc, before;

	switch (in->kind) {
	case HWTR_X86_OTHER:
		e[ne++] = t->pip + in->len;
		break;
	case HWTR_X86_JMP:
	case HWTR_X86_CALL:
		e[ne++] = in->target;
		break;
	case HWTR_X86_JCC:
		e[ne++] = t->pip + in->len;
		e[ne++] = in->target;
		break;
	default:
		return (complete(st, t, r, mode64));
	}
	for (i = 0; i < ne; i++)
		if (r == e[i]) {
			if (self_loop(st, t, r, mode64)) {
				if ((rc = complete(st, t, r, mode64)) < 0)
					return (rc);
				t->pip = r;
				return (gap(st, t, r, r));
			}
			return (complete(st, t, r, mode64));
		}

	memset(&w, 0, sizeof(w));
	w.p = t->proc;
	w.r = r;
	w.mode64 = mode64;
	for (i = 0; i < ne && w.nsol < 2; i++) {
		before = w.nsol;
		walk(&w, e[i], 0);
		if (before == 0 && w.nsol > 0)
			first = e[i];
	}
	if (w.nsol != 1) {
		if (in->kind == HWTR_X86_JCC)
			return (gap(st, t, t->pip, r));
		if ((rc = complete(st, t, e[0], mode64)) < 0)
			return (rc);
		return (gap(st, t, e[0], r));
	}
	st->nresolved++;
	if ((rc = complete(st, t, first, mode64)) < 0)
		return (rc);
	for (i = 0; i < w.nsol_insn; i++) {
		t->pip = w.sol[i].ip;
		t->pinsn = w.sol[i].insn;
		/* Its rax is gone: assume a syscall may have mapped code. */
		t->psysno = 9;
		t->have_pending = 1;
		if ((rc = complete(st, t, w.sol[i].next, mode64)) < 0)
			return (rc);
	}
	return (0);
}

/*
 * The thread stands at @r, about to execute it: (re)enable tracing,
 * decode the instruction, check the trigger.
 */
static int
begin(struct step *st, struct step_thread *t, const struct user_regs_struct *regs)
{
	struct hwtr_ptenc *enc = tenc(t);
	uint64_t r = regs->rip, now;
	int mode64 = regs->cs == USER_CS64, rc;

	if (enc == NULL)
		return (0);
	if (t->thr->full || (t->thr->limit != 0 &&
	    hwtr_ptenc_bytes(enc) >= t->thr->limit)) {
		t->thr->full = 1;
		/* stop-on-full: the trace ends before this instruction. */
		if (hwtr_ptenc_enabled(enc))
			(void)hwtr_ptenc_disable(enc, r, hwtr_src_now());
		(void)gt_flush(st, t);
		t->stopped_trace = 1;
		return (0);
	}
	now = hwtr_src_now();
	if (!hwtr_ptenc_enabled(enc)) {
		if ((rc = hwtr_ptenc_enable(enc, r, mode64, now)) < 0)
			return (rc);
	} else if ((rc = hwtr_ptenc_at(enc, r, now)) < 0)
		return (rc);
	if (proc_decode(t->proc, r, mode64, &t->pinsn) < 0)
		hwtr_logf(&st->src->cfg.log, HWTR_LOG_WARN,
		    "step: tid %d: cannot decode the instruction at %#" PRIx64,
		    (int)t->tid, r);
	t->pip = r;
	t->pmode64 = mode64;
	t->psysno = regs->rax;
	t->have_pending = 1;
	t->sim_skipped = 0;
	if (t->proc->trigger != 0 && r == t->proc->trigger &&
	    st->src->sink->trigger != NULL)
		(void)st->src->sink->trigger(st->src->sink->arg, t->thr,
		    st->src->cfg.trigger_name);
	return (0);
}

static void
resume(struct step *st, struct step_thread *t, int sig)
{
	int req = PTRACE_SINGLESTEP;

	if (t->state == STEP_T_DONE || t->stopped_trace || t->thr == NULL)
		req = PTRACE_CONT;
	(void)st;
	(void)ptrace(req, t->tid, 0, (void *)(uintptr_t)sig);
}

/* The runtime address of the trigger in process @p (after its exec). */
static void
trigger_resolve(struct step *st, struct step_proc *p)
{
	char path[64], exe[4096], line[4096 + 128];
	uint64_t lo, hi, off;
	FILE *fp;
	ssize_t n;

	p->trigger = 0;
	if (!p->first || st->src->cfg.trigger_vaddr == 0)
		return;
	if (!st->src->cfg.trigger_pie) {
		p->trigger = st->src->cfg.trigger_vaddr;
		return;
	}
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)p->pid);
	if ((n = readlink(path, exe, sizeof(exe) - 1)) <= 0)
		return;
	exe[n] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)p->pid);
	if ((fp = fopen(path, "re")) == NULL)
		return;
	while (fgets(line, sizeof(line), fp) != NULL) {
		char *name = strchr(line, '/');

		if (name == NULL)
			continue;
		name[strcspn(name, "\n")] = '\0';
		if (strcmp(name, exe) != 0)
			continue;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64,
		    &lo, &hi, &off) == 3 && off == 0) {
			p->trigger = lo + st->src->cfg.trigger_vaddr;
			break;
		}
	}
	fclose(fp);
}

static int
on_exec(struct step *st, struct step_thread *t)
{
	struct hwtr_src_proc ev;
	char path[64], exe[4096];
	ssize_t n;
	struct hwtr_ptenc *enc = tenc(t);

	proc_invalidate(t->proc);
	(void)proc_open_mem(t->proc);
	trigger_resolve(st, t->proc);
	if (enc != NULL)
		hwtr_ptenc_want_psb(enc);
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)t->proc->pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	memset(&ev, 0, sizeof(ev));
	ev.what = HWTR_PROC_EXEC;
	ev.pid = t->proc->pid;
	ev.ppid = -1;
	ev.path = exe;
	ev.time = hwtr_src_now();
	if (st->src->sink->proc != NULL)
		return (st->src->sink->proc(st->src->sink->arg, &ev));
	return (0);
}

static void
proc_exit(struct step *st, struct step_proc *p, int status)
{
	struct hwtr_src_proc ev;

	memset(&ev, 0, sizeof(ev));
	ev.what = HWTR_PROC_EXIT;
	ev.pid = p->pid;
	ev.ppid = -1;
	if (WIFEXITED(status)) {
		ev.kind = HWTR_EXIT_CODE;
		ev.value = WEXITSTATUS(status);
	} else {
		ev.kind = HWTR_EXIT_SIGNAL;
		ev.value = WTERMSIG(status);
	}
	ev.time = hwtr_src_now();
	p->exited = 1;
	if (p->pid == st->first) {
		st->first_exited = 1;
		st->src->exit_kind = ev.kind;
		st->src->exit_value = ev.value;
	}
	if (st->src->sink->proc != NULL)
		(void)st->src->sink->proc(st->src->sink->arg, &ev);
}

/*
 * A single-step trap may already be queued for a thread we are about to
 * let go (a syscall interrupted by PTRACE_INTERRUPT reports its step at
 * syscall exit); delivered after the detach it would kill the program.
 * Take it while still attached.
 */
static void
drain_sigtrap(pid_t tid)
{
	char path[64], line[256];
	uint64_t pend;
	FILE *fp;
	int status, tries;

	for (tries = 0; tries < 4; tries++) {
		pend = 0;
		snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
		if ((fp = fopen(path, "re")) == NULL)
			return;
		while (fgets(line, sizeof(line), fp) != NULL)
			if (strncmp(line, "SigPnd:", 7) == 0) {
				pend = strtoull(line + 7, NULL, 16);
				break;
			}
		fclose(fp);
		if (!(pend & (1u << (SIGTRAP - 1))))
			return;
		if (ptrace(PTRACE_CONT, tid, 0, 0) < 0)
			return;
		if (waitpid(tid, &status, __WALL) < 0 || !WIFSTOPPED(status))
			return;
	}
}

/* One waitpid() result. */
static int
handle(struct step *st, pid_t tid, int status)
{
	struct user_regs_struct regs;
	struct step_thread *t, *nt;
	unsigned long msg;
	int sig, event, rc, mode64;
	uint64_t r;

	t = thread_find(st, tid);
	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		struct step_proc *p = t != NULL ? t->proc : proc_find(st, tid);

		if (t != NULL) {
			thread_end(st, t, WIFEXITED(status) ? HWTR_EXIT_CODE :
			    HWTR_EXIT_SIGNAL, WIFEXITED(status) ?
			    WEXITSTATUS(status) : WTERMSIG(status), 0);
			thread_reap(st, t);
		}
		if (p != NULL && tid == p->pid)
			proc_exit(st, p, status);
		if (p != NULL && p->exited && p->nthreads == 0)
			proc_free(st, p);
		return (0);
	}
	if (!WIFSTOPPED(status))
		return (0);
	if ((status >> 16) == PTRACE_EVENT_EXEC &&
	    ptrace(PTRACE_GETEVENTMSG, tid, 0, &msg) == 0 &&
	    (pid_t)msg != tid && (nt = thread_find(st, (pid_t)msg)) != NULL) {
		/*
		 * A thread other than the leader exec'd: the kernel gave it
		 * the leader's tid (the leader is gone).  Its history goes
		 * on in its own stream.
		 */
		if (t != NULL) {
			thread_end(st, t, HWTR_EXIT_NONE, 0, 0);
			thread_reap(st, t);
		}
		thread_unlink(st, nt);
		nt->tid = tid;
		nt->next = st->threads[(unsigned)tid % STEP_HASH];
		st->threads[(unsigned)tid % STEP_HASH] = nt;
		t = nt;
	}
	if (t == NULL) {
		/* A new thread whose creator's event we did not see yet. */
		if ((rc = thread_new(st, tid, -1, &t)) < 0)
			return (rc);
	}
	sig = WSTOPSIG(status);
	event = status >> 16;
	if (ptrace(PTRACE_GETREGS, tid, 0, &regs) < 0) {
		/* It died under us; its exit will be reported. */
		return (0);
	}
	r = regs.rip;
	mode64 = regs.cs == USER_CS64;

	if (t->state == STEP_T_NEW) {
		/* Its first stop (SIGSTOP, or PTRACE_EVENT_STOP when seized). */
		t->state = STEP_T_RUN;
		if (st->detaching)
			goto detach;
		if ((rc = begin(st, t, &regs)) < 0)
			return (rc);
		resume(st, t, 0);
		return (0);
	}
	if (t->state == STEP_T_DONE) {
		resume(st, t, event == 0 && sig != SIGTRAP && sig != SIGSTOP ?
		    sig : 0);
		return (0);
	}

	if (event != 0) {
		if (t->have_pending && r != t->pip &&
		    (rc = settle(st, t, r, mode64)) < 0)
			return (rc);
		switch (event) {
		case PTRACE_EVENT_CLONE:
		case PTRACE_EVENT_FORK:
		case PTRACE_EVENT_VFORK:
			if (ptrace(PTRACE_GETEVENTMSG, tid, 0, &msg) == 0 &&
			    (rc = thread_new(st, (pid_t)msg, tid, &nt)) < 0)
				return (rc);
			break;
		case PTRACE_EVENT_EXEC:
			if ((rc = on_exec(st, t)) < 0)
				return (rc);
			break;
		case PTRACE_EVENT_EXIT:
			/*
			 * The thread stands at r and will not run it.  Killed
			 * between two steps (another thread's exec), it may
			 * have completed an instruction above with none begun:
			 * its trace ends at r (threxec ended with one
			 * instruction more than the ground truth, once in
			 * some 80 runs under load, when it ended without an
			 * address).
			 */
			if (ptrace(PTRACE_GETEVENTMSG, tid, 0, &msg) < 0)
				msg = 0;
			thread_end(st, t, WIFSIGNALED((int)msg) ?
			    HWTR_EXIT_SIGNAL : HWTR_EXIT_CODE,
			    WIFSIGNALED((int)msg) ? WTERMSIG((int)msg) :
			    WEXITSTATUS((int)msg), r);
			break;
		default:
			/* PTRACE_EVENT_STOP: a group-stop or our interrupt. */
			if (st->detaching)
				goto detach;
			break;
		}
		resume(st, t, 0);
		return (0);
	}

	if (sig == SIGTRAP && !(t->have_pending && t->pinsn.is_int)) {
		/* The single-step trap. */
		if (t->have_pending) {
			if (t->pinsn.rep && r == t->pip) {
				resume(st, t, 0);
				return (0);
			}
			if ((st->sim & (1u << t->pinsn.vmexit)) &&
			    t->pinsn.vmexit != HWTR_X86_VMX_NONE &&
			    t->sim_skipped < st->simlost) {
				/*
				 * Test aid: lose this trap, as a hypervisor
				 * that delivers it late does.
				 */
				t->sim_skipped++;
				resume(st, t, 0);
				return (0);
			}
			if ((rc = settle(st, t, r, mode64)) < 0)
				return (rc);
		}
		if (st->detaching)
			goto detach;
		if ((rc = begin(st, t, &regs)) < 0)
			return (rc);
		resume(st, t, 0);
		return (0);
	}

	/* A signal for the program. */
	if (t->have_pending && r != t->pip &&
	    (rc = settle(st, t, r, mode64)) < 0)
		return (rc);
	if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN ||
	    sig == SIGTTOU) {
		/* Job control stops are not passed on (see the man page). */
		if (st->detaching)
			goto detach;
		if (!t->have_pending && (rc = begin(st, t, &regs)) < 0)
			return (rc);
		resume(st, t, 0);
		return (0);
	}
	if (st->detaching)
		goto detach;
	if (sig_caught(tid, sig)) {
		struct hwtr_ptenc *enc = tenc(t);

		if (enc != NULL && hwtr_ptenc_enabled(enc) &&
		    (rc = hwtr_ptenc_disable(enc, r, hwtr_src_now())) < 0)
			return (rc);
		t->have_pending = 0;
	} else if (!t->have_pending && (rc = begin(st, t, &regs)) < 0)
		return (rc);
	resume(st, t, sig);
	return (0);

detach:
	/* Let the thread go: its trace ends before the instruction at RIP. */
	if (t->have_pending && r != t->pip)
		(void)settle(st, t, r, mode64);
	thread_end(st, t, HWTR_EXIT_NONE, 0, r);
	drain_sigtrap(tid);
	(void)ptrace(PTRACE_DETACH, tid, 0,
	    (void *)(uintptr_t)(event == 0 && sig != SIGTRAP &&
	    sig != SIGSTOP ? sig : 0));
	thread_reap(st, t);
	return (0);
}

/* ------------------------------------------------------------------ */
/* Probing for late single-step traps.                                 */

/*
 * Each probe is "INSN; nop; nop; int3": a child of ours is stepped over
 * INSN, and a trap one byte past INSN's end (after the first nop) means
 * the trap after INSN was lost.
 */
__asm__(
	"	.pushsection .text\n"
	"	.globl hwtr_step_probe_cpuid\n"
	"	.hidden hwtr_step_probe_cpuid\n"
	"hwtr_step_probe_cpuid:\n"
	"	cpuid\n nop\n nop\n int3\n"
	"	.globl hwtr_step_probe_xgetbv\n"
	"	.hidden hwtr_step_probe_xgetbv\n"
	"hwtr_step_probe_xgetbv:\n"
	"	xgetbv\n nop\n nop\n int3\n"
	"	.globl hwtr_step_probe_rdtsc\n"
	"	.hidden hwtr_step_probe_rdtsc\n"
	"hwtr_step_probe_rdtsc:\n"
	"	rdtsc\n nop\n nop\n int3\n"
	"	.globl hwtr_step_probe_rdtscp\n"
	"	.hidden hwtr_step_probe_rdtscp\n"
	"hwtr_step_probe_rdtscp:\n"
	"	rdtscp\n nop\n nop\n int3\n"
	"	.popsection\n");

extern const unsigned char hwtr_step_probe_cpuid[];
extern const unsigned char hwtr_step_probe_xgetbv[];
extern const unsigned char hwtr_step_probe_rdtsc[];
extern const unsigned char hwtr_step_probe_rdtscp[];

static const struct step_probe {
	enum hwtr_x86_vmexit vmexit;
	const unsigned char *code;
	unsigned	len;
} step_probes[] = {
	{ HWTR_X86_VMX_CPUID, hwtr_step_probe_cpuid, 2 },
	{ HWTR_X86_VMX_XGETBV, hwtr_step_probe_xgetbv, 3 },
	{ HWTR_X86_VMX_RDTSC, hwtr_step_probe_rdtsc, 2 },
	{ HWTR_X86_VMX_RDTSCP, hwtr_step_probe_rdtscp, 3 },
};

#define STEP_PROBE_TRIALS	3

/* Where one single-step over @pr leaves the stopped child @pid, or 0. */
static uint64_t
probe_step(struct step *st, pid_t pid, const struct user_regs_struct *r0,
    const struct step_probe *pr)
{
	struct user_regs_struct r = *r0;
	int status;

	r.rip = (uintptr_t)pr->code;
	r.rax = 0;
	r.rcx = 0;
	if (ptrace(PTRACE_SETREGS, pid, 0, &r) < 0 ||
	    ptrace(PTRACE_SINGLESTEP, pid, 0, 0) < 0 ||
	    waitpid(pid, &status, __WALL) != pid || !WIFSTOPPED(status) ||
	    WSTOPSIG(status) != SIGTRAP ||
	    ptrace(PTRACE_GETREGS, pid, 0, &r) < 0)
		return (0);
	if ((st->sim & (1u << pr->vmexit)) &&
	    r.rip == (uintptr_t)pr->code + pr->len) {
		if (ptrace(PTRACE_SINGLESTEP, pid, 0, 0) < 0 ||
		    waitpid(pid, &status, __WALL) != pid ||
		    !WIFSTOPPED(status) || WSTOPSIG(status) != SIGTRAP ||
		    ptrace(PTRACE_GETREGS, pid, 0, &r) < 0)
			return (0);
	}
	return (r.rip);
}

/*
 * Find out after which instructions this machine's single-step trap
 * comes late (st->late) or on time (st->exact), stepping a child of ours
 * over each probe a few times.  An instruction that faults here (xgetbv
 * without OSXSAVE) is in neither set.  Costs a fork and a few dozen
 * ptrace calls.
 */
static void
step_probe(struct step *st)
{
	struct user_regs_struct r0;
	uint64_t at;
	size_t i;
	int status, k;
	pid_t pid;

	if ((pid = fork()) < 0)
		return;
	if (pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, 0, 0) == 0)
			raise(SIGSTOP);
		_exit(0);
	}
	if (waitpid(pid, &status, __WALL) != pid || !WIFSTOPPED(status) ||
	    ptrace(PTRACE_GETREGS, pid, 0, &r0) < 0)
		goto out;
	for (i = 0; i < HWTR_NELEM(step_probes); i++) {
		const struct step_probe *pr = &step_probes[i];
		unsigned bit = 1u << pr->vmexit;

		for (k = 0; k < STEP_PROBE_TRIALS; k++) {
			at = probe_step(st, pid, &r0, pr);
			if (at == (uintptr_t)pr->code + pr->len)
				st->exact |= bit;
			else if (at == (uintptr_t)pr->code + pr->len + 1)
				st->late |= bit;
			else
				break;
		}
	}
	st->exact &= ~st->late;
out:
	kill(pid, SIGKILL);
	(void)waitpid(pid, &status, __WALL);
}

/* "cpuid, rdtsc" for the vmexit classes in @mask, or "none". */
static void
vmexit_list(unsigned mask, char *buf, size_t len)
{
	size_t off = 0;
	int c, n;

	buf[0] = '\0';
	for (c = 1; c < HWTR_X86_VMX_MAX; c++) {
		if (!(mask & (1u << c)))
			continue;
		n = snprintf(buf + off, len - off, "%s%s", off ? ", " : "",
		    hwtr_x86_vmexit_name(c));
		if (n < 0 || (size_t)n >= len - off)
			break;
		off += (size_t)n;
	}
	if (off == 0)
		snprintf(buf, len, "none");
}

/*
 * HWTRACE_TEST_LATE_TRAP=cpuid,xgetbv,...[:N]: a test aid that makes the
 * source behave as a hypervisor delivering those traps late would (the
 * probe too), so that the recovery is tested on machines that do not.
 * N (1-3, default 1) traps are lost each time; more than one leaves paths
 * the source must not guess, which tests its gaps.
 */
static int
sim_parse(struct step *st, const char *v)
{
	char buf[256], *tok, *save = NULL, *colon;
	int c;

	st->simlost = 1;
	if (v == NULL || *v == '\0')
		return (0);
	snprintf(buf, sizeof(buf), "%s", v);
	if ((colon = strchr(buf, ':')) != NULL) {
		*colon++ = '\0';
		if (colon[0] < '1' || colon[0] > '3' || colon[1] != '\0') {
			step_err(st, "HWTRACE_TEST_LATE_TRAP: '%s' is not a "
			    "count of lost traps from 1 to 3", colon);
			return (-HWTR_E_INVAL);
		}
		st->simlost = colon[0] - '0';
	}
	for (tok = strtok_r(buf, ",", &save); tok != NULL;
	    tok = strtok_r(NULL, ",", &save)) {
		for (c = 1; c < HWTR_X86_VMX_MAX; c++)
			if (strcmp(tok, hwtr_x86_vmexit_name(c)) == 0)
				break;
		if (c == HWTR_X86_VMX_MAX) {
			step_err(st, "HWTRACE_TEST_LATE_TRAP: unknown "
			    "instruction class '%s'", tok);
			return (-HWTR_E_INVAL);
		}
		st->sim |= 1u << c;
	}
	return (0);
}

/* The probe's finding, as the archive's note and, when late, a caveat. */
static void
probe_report(struct step *st)
{
	struct hwtr_src *src = st->src;
	char late[128], exact[128], sim[128];

	vmexit_list(st->late, late, sizeof(late));
	vmexit_list(st->exact, exact, sizeof(exact));
	vmexit_list(st->sim, sim, sizeof(sim));
	snprintf(st->note, sizeof(st->note), "step: single-step trap probe: "
	    "late after %s; on time after %s%s%s%s", late, exact,
	    st->sim ? " (late traps simulated after " : "",
	    st->sim ? sim : "", st->sim ? ")" : "");
	st->notes[0] = st->note;
	src->notes = st->notes;
	src->nnotes = 1;
	if (st->late == 0)
		return;
	snprintf(st->caveat, sizeof(st->caveat), "step: this machine "
	    "delivers the single-step trap one instruction late after %s; "
	    "the instructions that ran between two stops are recovered by "
	    "decoding forward, and any that cannot be told exactly are "
	    "recorded as gaps (lost, untraced)", late);
	st->caveats[0] = st->caveat;
	src->caveats = st->caveats;
	src->ncaveats = 1;
}

/* ------------------------------------------------------------------ */
/* The ops.                                                            */

static int
step_backend_init(struct hwtr_src *src)
{
	struct step *st;

	if ((st = calloc(1, sizeof(*st))) == NULL)
		return (-HWTR_E_NOMEM);
	st->src = src;
	src->priv = st;
	return (0);
}

static int
step_backend_configure(struct hwtr_src *src, const struct hwtr_src_config *cfg)
{
	struct step *st = src->priv;
	struct timespec mono, real;
	int rc;

	if ((cfg->argv == NULL || cfg->argv[0] == NULL) && cfg->pid <= 0) {
		snprintf(src->errmsg, sizeof(src->errmsg),
		    "no command and no process to trace");
		return (-HWTR_E_INVAL);
	}
	src->cfg = *cfg;
	st->ptrace_opts = PTRACE_O_TRACEEXEC | PTRACE_O_TRACEEXIT |
	    PTRACE_O_TRACECLONE;
	if (!cfg->no_follow)
		st->ptrace_opts |= PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK;
	/* One paired reading: trace time is CLOCK_MONOTONIC ns. */
	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &real);
	src->tconv.valid = 1;
	src->tconv.tsc_zero = (uint64_t)mono.tv_sec * 1000000000u +
	    (uint64_t)mono.tv_nsec;
	src->tconv.ns_zero = (int64_t)real.tv_sec * 1000000000 +
	    real.tv_nsec;
	src->tconv.mult = 1;
	src->tconv.shift = 0;
	memset(&src->pt, 0, sizeof(src->pt));
	src->pt.options = HWTR_PT_OPT_TSC | HWTR_PT_OPT_BRANCH |
	    HWTR_PT_OPT_USER;
	src->version = HWTRACE_VERSION;
	if ((rc = sim_parse(st, getenv("HWTRACE_TEST_LATE_TRAP"))) < 0)
		return (rc);
	step_probe(st);
	st->late |= st->sim;
	st->exact &= ~st->sim;
	probe_report(st);
	return (0);
}

static const char *
yama_note(char *buf, size_t len)
{
	FILE *fp = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
	int v = -1;

	buf[0] = '\0';
	if (fp != NULL) {
		if (fscanf(fp, "%d", &v) != 1)
			v = -1;
		fclose(fp);
	}
	if (v > 0)
		snprintf(buf, len, " (kernel.yama.ptrace_scope is %d%s)", v,
		    v >= 3 ? ": ptrace is disabled for everyone" :
		    v == 2 ? ": only root may attach" :
		    ": only a parent may trace its children");
	return (buf);
}

static int
launch(struct step *st)
{
	struct hwtr_src *src = st->src;
	struct step_thread *t;
	struct step_proc *p;
	int fds[2], status, err[2], rc;
	pid_t pid, w;
	ssize_t n;

	if (pipe2(fds, O_CLOEXEC) < 0) {
		step_err(st, "pipe: %s", strerror(errno));
		return (-HWTR_E_IO);
	}
	if ((pid = fork()) < 0) {
		step_err(st, "fork: %s", strerror(errno));
		close(fds[0]);
		close(fds[1]);
		return (-HWTR_E_IO);
	}
	if (pid == 0) {
		/* The child: err[0] says which step failed. */
		close(fds[0]);
		if (ptrace(PTRACE_TRACEME, 0, 0, 0) < 0) {
			err[0] = 1;
			err[1] = errno;
			(void)!write(fds[1], err, sizeof(err));
			_exit(127);
		}
		raise(SIGSTOP);
		execvp(src->cfg.argv[0], src->cfg.argv);
		err[0] = 2;
		err[1] = errno;
		(void)!write(fds[1], err, sizeof(err));
		_exit(127);
	}
	close(fds[1]);
	st->launched = 1;
	st->first = pid;
	src->first_pid = pid;
	while ((w = waitpid(pid, &status, __WALL)) < 0 && errno == EINTR)
		;
	if (w < 0 || !WIFSTOPPED(status)) {
		n = read(fds[0], err, sizeof(err));
		close(fds[0]);
		if (n == (ssize_t)sizeof(err) && err[0] == 1) {
			char note[160];

			step_err(st, "ptrace refused: %s%s", strerror(err[1]),
			    yama_note(note, sizeof(note)));
			return (-HWTR_E_PERM);
		}
		step_err(st, "the child process ended before it could run "
		    "'%s'", src->cfg.argv[0]);
		return (-HWTR_E_IO);
	}
	if (ptrace(PTRACE_SETOPTIONS, pid, 0,
	    (void *)(uintptr_t)(st->ptrace_opts | PTRACE_O_EXITKILL)) < 0) {
		step_err(st, "ptrace(PTRACE_SETOPTIONS): %s", strerror(errno));
		kill(pid, SIGKILL);
		return (-HWTR_E_PERM);
	}
	/*
	 * Report the process while it is stopped before its exec, so that a
	 * sideband collector sees the exec.
	 */
	if ((rc = proc_start(st, pid, getpid(), &p)) < 0) {
		kill(pid, SIGKILL);
		close(fds[0]);
		return (rc);
	}
	p->first = 1;
	(void)ptrace(PTRACE_CONT, pid, 0, 0);
	for (;;) {
		while ((w = waitpid(pid, &status, __WALL)) < 0 &&
		    errno == EINTR)
			;
		if (w < 0) {
			step_err(st, "waitpid: %s", strerror(errno));
			close(fds[0]);
			return (-HWTR_E_IO);
		}
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			n = read(fds[0], err, sizeof(err));
			close(fds[0]);
			if (n == (ssize_t)sizeof(err) && err[0] == 2) {
				step_err(st, "cannot run '%s': %s",
				    src->cfg.argv[0], err[1] == ENOENT ?
				    "command not found" : strerror(err[1]));
				src->exec_errno = err[1];
				return (err[1] == ENOENT ? -HWTR_E_NOENT :
				    err[1] == EACCES ? -HWTR_E_PERM :
				    -HWTR_E_IO);
			}
			step_err(st, "'%s' ended before exec",
			    src->cfg.argv[0]);
			return (-HWTR_E_IO);
		}
		if (WIFSTOPPED(status) && (status >> 16) == PTRACE_EVENT_EXEC)
			break;
		/* Anything else before the exec (a signal): pass it on. */
		(void)ptrace(PTRACE_CONT, pid, 0, (void *)(uintptr_t)
		    (WSTOPSIG(status) == SIGTRAP || WSTOPSIG(status) ==
		    SIGSTOP ? 0 : WSTOPSIG(status)));
	}
	close(fds[0]);
	if ((rc = thread_new(st, pid, -1, &t)) < 0)
		return (rc);
	t->proc->first = 1;
	t->state = STEP_T_RUN;
	if ((rc = on_exec(st, t)) < 0)
		return (rc);
	/* The next stop is the trap before the new image's first insn. */
	(void)ptrace(PTRACE_SINGLESTEP, pid, 0, 0);
	return (0);
}

static int
attach(struct step *st)
{
	struct hwtr_src *src = st->src;
	struct step_thread *t;
	char path[64], note[160];
	struct dirent *de;
	int found, rc;
	DIR *d;
	pid_t tid;

	st->first = src->cfg.pid;
	src->first_pid = src->cfg.pid;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)src->cfg.pid);
	do {
		found = 0;
		if ((d = opendir(path)) == NULL) {
			step_err(st, "no process %d", (int)src->cfg.pid);
			return (-HWTR_E_NOENT);
		}
		while ((de = readdir(d)) != NULL) {
			if (de->d_name[0] == '.')
				continue;
			tid = (pid_t)strtol(de->d_name, NULL, 10);
			if (thread_find(st, tid) != NULL)
				continue;
			if (ptrace(PTRACE_SEIZE, tid, 0,
			    (void *)(uintptr_t)st->ptrace_opts) < 0) {
				if (errno == ESRCH)
					continue;
				rc = errno;
				closedir(d);
				step_err(st, "cannot attach to process %d: "
				    "ptrace refused: %s%s", (int)src->cfg.pid,
				    strerror(rc), yama_note(note,
				    sizeof(note)));
				return (-HWTR_E_PERM);
			}
			(void)ptrace(PTRACE_INTERRUPT, tid, 0, 0);
			if ((rc = thread_new(st, tid, -1, &t)) < 0) {
				closedir(d);
				return (rc);
			}
			t->proc->first = 1;
			found = 1;
		}
		closedir(d);
	} while (found);
	if ((t = thread_find(st, src->cfg.pid)) != NULL)
		trigger_resolve(st, t->proc);
	return (0);
}

static int
step_backend_enable(struct hwtr_src *src)
{
	struct step *st = src->priv;

	if (src->cfg.pid > 0)
		return (attach(st));
	return (launch(st));
}

static int
step_backend_read(struct hwtr_src *src)
{
	struct step *st = src->priv;
	int status, rc, n;
	pid_t w;

	for (n = 0; n < STEP_BATCH; n++) {
		if (st->nthreads == 0 && (st->first_exited || st->detaching ||
		    st->procs == NULL))
			return (1);
		if (src->cfg.stop != NULL && *src->cfg.stop && !st->detaching)
			return (0);
		w = waitpid(-1, &status, __WALL);
		if (w < 0) {
			if (errno == EINTR)
				return (0);
			if (errno == ECHILD)
				return (1);
			step_err(st, "waitpid: %s", strerror(errno));
			return (-HWTR_E_IO);
		}
		if ((rc = handle(st, w, status)) < 0) {
			step_err(st, "tid %d: %s", (int)w, hwtr_errstr(rc));
			return (rc);
		}
	}
	return (0);
}

/*
 * Stop tracing.  Launched processes are killed (PTRACE_O_EXITKILL would do
 * it anyway when hwtrace exits); attached ones are interrupted, their
 * traces ended and the threads detached, so they keep running.
 */
static int
step_backend_disable(struct hwtr_src *src)
{
	struct step *st = src->priv;
	struct step_thread *t;
	struct step_proc *p;
	struct timespec ts = { 0, 2000000 };
	int status, i, tries;
	pid_t w;

	if (st->nthreads == 0)
		return (0);
	st->detaching = 1;
	if (!st->launched) {
		for (i = 0; i < STEP_HASH; i++)
			for (t = st->threads[i]; t != NULL; t = t->next)
				(void)ptrace(PTRACE_INTERRUPT, t->tid, 0, 0);
		for (tries = 0; st->nthreads > 0 && tries < 2000; tries++) {
			w = waitpid(-1, &status, __WALL | WNOHANG);
			if (w > 0)
				(void)handle(st, w, status);
			else if (w < 0 && errno != EINTR)
				break;
			else
				nanosleep(&ts, NULL);
		}
		return (0);
	}
	/*
	 * Give a program that got the terminal's SIGINT too a moment to die
	 * of it, so its own status is the one reported; then kill the rest.
	 */
	st->detaching = 0;
	for (tries = 0; st->nthreads > 0 && tries < 100; tries++) {
		w = waitpid(-1, &status, __WALL | WNOHANG);
		if (w > 0)
			(void)handle(st, w, status);
		else if (w < 0 && errno != EINTR)
			break;
		else
			nanosleep(&ts, NULL);
	}
	for (p = st->procs; p != NULL; p = p->next)
		kill(p->pid, SIGKILL);
	while (st->nthreads > 0) {
		w = waitpid(-1, &status, __WALL);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		(void)handle(st, w, status);
	}
	return (0);
}

static int
step_backend_thread_alloc(struct hwtr_src *src, struct hwtr_src_thread *thr)
{
	(void)src;
	(void)thr;
	return (0);
}

static void
step_backend_thread_free(struct hwtr_src *src, struct hwtr_src_thread *thr)
{
	(void)src;
	(void)thr;
}

static void
step_backend_deinit(struct hwtr_src *src)
{
	struct step *st = src->priv;
	struct step_thread *t;
	int i;

	if (st == NULL)
		return;
	for (i = 0; i < STEP_HASH; i++)
		while ((t = st->threads[i]) != NULL) {
			st->threads[i] = t->next;
			free(t->gt);
			free(t);
		}
	while (st->procs != NULL)
		proc_free(st, st->procs);
	free(st);
	src->priv = NULL;
}

const struct hwtr_src_ops hwtr_step_ops = {
	.name = "step",
	.init = step_backend_init,
	.configure = step_backend_configure,
	.enable = step_backend_enable,
	.read = step_backend_read,
	.disable = step_backend_disable,
	.thread_alloc = step_backend_thread_alloc,
	.thread_free = step_backend_thread_free,
	.deinit = step_backend_deinit,
};

#endif /* Linux on x86-64 */
