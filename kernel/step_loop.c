/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The step source's stepping loop: at each stop, what the pending
 * instruction did, told to the thread's PT encoder; signals, exec, exit.
 */

#if defined(__linux__) && defined(__x86_64__)

#include "step_int.h"

/*
 * The pending instruction ran and the thread now stands at @r: tell the
 * encoder what it did.
 */
int
step_complete(struct step *st, struct step_thread *t, uint64_t r, int mode64)
{
	struct hwtr_ptenc *enc = step_tenc(t);
	const struct hwtr_x86_insn *in = &t->pinsn;
	uint64_t next = t->pip + in->len;
	int rc = 0;

	t->have_pending = 0;
	if (t->thr != NULL)
		t->thr->ninsn++;
	if (enc == NULL)
		return (0);
	if ((rc = step_gt_push(st, t, t->pip)) < 0)
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
		if (!in->is_int && step_is_mm_syscall(t->psysno) &&
		    t->proc != NULL) {
			struct hwtr_src_proc ev;

			step_proc_invalidate(t->proc);
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
	struct hwtr_x86_state regs;	/* at the stop */
	int		nsol;
	int		nsol_insn;
	struct step_hidden cur[STEP_MAXHIDDEN];
	struct step_hidden sol[STEP_MAXHIDDEN];
};

/* hwtr_x86_went()'s reader: the memory of the process @arg. */
static int
mem_read(void *arg, uint64_t addr, void *buf, size_t n)
{
	struct step_proc *p = arg;

	if (p->memfd < 0 || addr > (uint64_t)INT64_MAX - n)
		return (-1);
	return (pread(p->memfd, buf, n, (off_t)addr) == (ssize_t)n ? 0 : -1);
}

/*
 * 1 when the branch @in at @x, taken as the last instruction before the
 * stop, says from the registers and memory there that it went elsewhere
 * than the stop: then a trap after it was lost too (more than the model
 * of one lost trap after an emulated instruction allows), and this path
 * is not what ran.  0 when it went to the stop or cannot say.
 */
static int
went_elsewhere(struct step_walk *w, uint64_t x, const struct hwtr_x86_insn *in)
{
	uint8_t code[16];
	uint64_t to;

	if (in->kind != HWTR_X86_JCC && in->kind != HWTR_X86_JMP_IND &&
	    in->kind != HWTR_X86_CALL_IND && in->kind != HWTR_X86_RET)
		return (0);
	if (in->len == 0 || in->len > sizeof(code) ||
	    mem_read(w->p, x, code, in->len) < 0)
		return (0);
	return (hwtr_x86_went(code, in->len, x, w->mode64 ? 64 : 32,
	    &w->regs, mem_read, w->p, &to) == 1 && to != w->r);
}

static void
walk(struct step_walk *w, uint64_t x, int depth)
{
	struct hwtr_x86_insn in;
	uint64_t succ[2];
	int n = 0, i;

	if (depth >= STEP_MAXHIDDEN || w->nsol > 1)
		return;
	if (step_proc_decode(w->p, x, w->mode64, &in) < 0 || in.is_int)
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
			if (went_elsewhere(w, x, &in))
				continue;
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
	struct hwtr_ptenc *enc = step_tenc(t);
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
	if (step_proc_decode(t->proc, r, mode64, &in) < 0)
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
settle(struct step *st, struct step_thread *t, uint64_t r, int mode64,
    const struct user_regs_struct *regs)
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
		return (step_complete(st, t, r, mode64));
	}
	for (i = 0; i < ne; i++)
		if (r == e[i]) {
			if (self_loop(st, t, r, mode64)) {
				if ((rc = step_complete(st, t, r, mode64)) < 0)
					return (rc);
				t->pip = r;
				return (gap(st, t, r, r));
			}
			return (step_complete(st, t, r, mode64));
		}

	memset(&w, 0, sizeof(w));
	w.p = t->proc;
	w.r = r;
	w.mode64 = mode64;
	w.regs = (struct hwtr_x86_state){
		.gpr = { regs->rax, regs->rcx, regs->rdx, regs->rbx,
		    regs->rsp, regs->rbp, regs->rsi, regs->rdi, regs->r8,
		    regs->r9, regs->r10, regs->r11, regs->r12, regs->r13,
		    regs->r14, regs->r15 },
		.rflags = regs->eflags,
		.fs_base = regs->fs_base,
		.gs_base = regs->gs_base
	};
	for (i = 0; i < ne && w.nsol < 2; i++) {
		before = w.nsol;
		walk(&w, e[i], 0);
		if (before == 0 && w.nsol > 0)
			first = e[i];
	}
	if (w.nsol != 1) {
		if (in->kind == HWTR_X86_JCC)
			return (gap(st, t, t->pip, r));
		if ((rc = step_complete(st, t, e[0], mode64)) < 0)
			return (rc);
		return (gap(st, t, e[0], r));
	}
	st->nresolved++;
	if ((rc = step_complete(st, t, first, mode64)) < 0)
		return (rc);
	for (i = 0; i < w.nsol_insn; i++) {
		t->pip = w.sol[i].ip;
		t->pinsn = w.sol[i].insn;
		/* Its rax is gone: assume a syscall may have mapped code. */
		t->psysno = 9;
		t->have_pending = 1;
		if ((rc = step_complete(st, t, w.sol[i].next, mode64)) < 0)
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
	struct hwtr_ptenc *enc = step_tenc(t);
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
		(void)step_gt_flush(st, t);
		t->stopped_trace = 1;
		return (0);
	}
	now = hwtr_src_now();
	if (step_proc_decode(t->proc, r, mode64, &t->pinsn) < 0)
		hwtr_logf(&st->src->cfg.log, HWTR_LOG_WARN,
		    "step: tid %d: cannot decode the instruction at %#" PRIx64,
		    (int)t->tid, r);
	/*
	 * Code in no file: its bytes, valid from now (the session dedups);
	 * a new version gets a PSB with this time before it runs.
	 */
	if (t->proc->anon && st->src->sink->code != NULL) {
		if ((rc = st->src->sink->code(st->src->sink->arg,
		    t->proc->pid, r, t->proc->abuf, (uint32_t)t->proc->alen,
		    now)) < 0)
			return (rc);
		if (rc > 0)
			hwtr_ptenc_want_psb(enc);
	}
	if (!hwtr_ptenc_enabled(enc)) {
		if ((rc = hwtr_ptenc_enable(enc, r, mode64, now)) < 0)
			return (rc);
	} else if ((rc = hwtr_ptenc_at(enc, r, now)) < 0)
		return (rc);
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

/* Begin at @regs (see begin()) and let @t execute that instruction. */
static int
begin_resume(struct step *st, struct step_thread *t,
    const struct user_regs_struct *regs)
{
	int rc;

	if ((rc = begin(st, t, regs)) < 0)
		return (rc);
	resume(st, t, 0);
	return (0);
}

/* The runtime address of the trigger in process @p (after its exec). */
void
step_trigger_resolve(struct step *st, struct step_proc *p)
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

int
step_on_exec(struct step *st, struct step_thread *t)
{
	struct hwtr_src_proc ev;
	char path[64], exe[4096];
	ssize_t n;
	struct hwtr_ptenc *enc = step_tenc(t);

	step_proc_invalidate(t->proc);
	(void)step_proc_open_mem(t->proc);
	step_trigger_resolve(st, t->proc);
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

/* Thread @tid (@t, NULL if unknown) exited or was killed. */
static void
handle_gone(struct step *st, struct step_thread *t, pid_t tid, int status)
{
	struct step_proc *p = t != NULL ? t->proc : step_proc_find(st, tid);

	if (t != NULL) {
		step_thread_end(st, t, WIFEXITED(status) ? HWTR_EXIT_CODE :
		    HWTR_EXIT_SIGNAL, WIFEXITED(status) ?
		    WEXITSTATUS(status) : WTERMSIG(status), 0);
		step_thread_reap(st, t);
	}
	if (p != NULL && tid == p->pid)
		proc_exit(st, p, status);
	if (p != NULL && p->exited && p->nthreads == 0)
		step_proc_free(st, p);
}

/*
 * A thread other than the leader exec'd: the kernel gave it the leader's
 * tid (the leader is gone).  Its history goes on in its own stream.  The
 * thread that now stands for @tid.
 */
static struct step_thread *
exec_takeover(struct step *st, struct step_thread *t, pid_t tid, int status)
{
	struct step_thread *nt;
	unsigned long msg;

	if ((status >> 16) != PTRACE_EVENT_EXEC ||
	    ptrace(PTRACE_GETEVENTMSG, tid, 0, &msg) != 0 ||
	    (pid_t)msg == tid || (nt = step_thread_find(st, (pid_t)msg)) == NULL)
		return (t);
	if (t != NULL) {
		step_thread_end(st, t, HWTR_EXIT_NONE, 0, 0);
		step_thread_reap(st, t);
	}
	step_thread_unlink(st, nt);
	nt->tid = tid;
	nt->next = st->threads[(unsigned)tid % STEP_HASH];
	st->threads[(unsigned)tid % STEP_HASH] = nt;
	return (nt);
}

/*
 * A ptrace event stop of @t, standing at @r: 1 when the thread is to be let
 * go (detaching), 0 when it goes on, an error.
 */
static int
handle_event(struct step *st, struct step_thread *t, pid_t tid, int event,
    uint64_t r)
{
	struct step_thread *nt;
	unsigned long msg;
	int rc;

	switch (event) {
	case PTRACE_EVENT_CLONE:
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
		if (ptrace(PTRACE_GETEVENTMSG, tid, 0, &msg) == 0 &&
		    (rc = step_thread_new(st, (pid_t)msg, tid, &nt)) < 0)
			return (rc);
		break;
	case PTRACE_EVENT_EXEC:
		if ((rc = step_on_exec(st, t)) < 0)
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
		step_thread_end(st, t, WIFSIGNALED((int)msg) ?
		    HWTR_EXIT_SIGNAL : HWTR_EXIT_CODE,
		    WIFSIGNALED((int)msg) ? WTERMSIG((int)msg) :
		    WEXITSTATUS((int)msg), r);
		break;
	default:
		/* PTRACE_EVENT_STOP: a group-stop or our interrupt. */
		if (st->detaching)
			return (1);
		break;
	}
	return (0);
}

/* One waitpid() result. */
int
step_handle(struct step *st, pid_t tid, int status)
{
	struct user_regs_struct regs;
	struct step_thread *t;
	int sig, event, rc, mode64;
	uint64_t r;

	t = step_thread_find(st, tid);
	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		handle_gone(st, t, tid, status);
		return (0);
	}
	if (!WIFSTOPPED(status))
		return (0);
	t = exec_takeover(st, t, tid, status);
	if (t == NULL) {
		/* A new thread whose creator's event we did not see yet. */
		if ((rc = step_thread_new(st, tid, -1, &t)) < 0)
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
		return (begin_resume(st, t, &regs));
	}
	if (t->state == STEP_T_DONE) {
		resume(st, t, event == 0 && sig != SIGTRAP && sig != SIGSTOP ?
		    sig : 0);
		return (0);
	}

	if (event != 0) {
		if (t->have_pending && r != t->pip &&
		    (rc = settle(st, t, r, mode64, &regs)) < 0)
			return (rc);
		if ((rc = handle_event(st, t, tid, event, r)) < 0)
			return (rc);
		if (rc > 0)
			goto detach;
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
			    t->sim_skipped < st->simlost -
			    !!(st->hwlate & (1u << t->pinsn.vmexit))) {
				/*
				 * Test aid: lose this trap, as a hypervisor
				 * that delivers it late does (where this
				 * machine does, it lost one already).
				 */
				t->sim_skipped++;
				resume(st, t, 0);
				return (0);
			}
			if ((rc = settle(st, t, r, mode64, &regs)) < 0)
				return (rc);
		}
		if (st->detaching)
			goto detach;
		return (begin_resume(st, t, &regs));
	}

	/* A signal for the program. */
	if (t->have_pending && r != t->pip &&
	    (rc = settle(st, t, r, mode64, &regs)) < 0)
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
	if (step_sig_caught(tid, sig)) {
		struct hwtr_ptenc *enc = step_tenc(t);

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
		(void)settle(st, t, r, mode64, &regs);
	step_thread_end(st, t, HWTR_EXIT_NONE, 0, r);
	drain_sigtrap(tid);
	(void)ptrace(PTRACE_DETACH, tid, 0,
	    (void *)(uintptr_t)(event == 0 && sig != SIGTRAP &&
	    sig != SIGSTOP ? sig : 0));
	step_thread_reap(st, t);
	return (0);
}


#endif /* Linux on x86-64 */
