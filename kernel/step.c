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
step_backend_deinit(struct hwtr_src *src)
{
	(void)src;
}

/* Starting, reading and stopping fail as configuring does. */
#define	step_backend_enable	step_backend_fail
#define	step_backend_read	step_backend_fail
#define	step_backend_disable	step_backend_fail

#else /* Linux on x86-64 */

#include "step_int.h"

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

/*
 * Where one single-step over @pr leaves the stopped child @pid, or 0;
 * *@hw where the machine's own trap left it (before a simulated loss).
 */
static uint64_t
probe_step(struct step *st, pid_t pid, const struct user_regs_struct *r0,
    const struct step_probe *pr, uint64_t *hw)
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
	*hw = r.rip;
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
	uint64_t at, hw = 0;
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
			at = probe_step(st, pid, &r0, pr, &hw);
			if (at == (uintptr_t)pr->code + pr->len)
				st->exact |= bit;
			else if (at == (uintptr_t)pr->code + pr->len + 1)
				st->late |= bit;
			else
				break;
			if (hw == (uintptr_t)pr->code + pr->len + 1)
				st->hwlate |= bit;
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
 * N (1-3, default 1) traps are lost each time in all, the one a machine
 * that is late there loses itself included; more than one leaves paths
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
		hwtr_sig_restore_ignored();
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
	if ((rc = step_proc_start(st, pid, getpid(), &p)) < 0) {
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
	if ((rc = step_thread_new(st, pid, -1, &t)) < 0)
		return (rc);
	t->proc->first = 1;
	t->state = STEP_T_RUN;
	if ((rc = step_on_exec(st, t)) < 0)
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
			if (step_thread_find(st, tid) != NULL)
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
			if ((rc = step_thread_new(st, tid, -1, &t)) < 0) {
				closedir(d);
				return (rc);
			}
			t->proc->first = 1;
			found = 1;
		}
		closedir(d);
	} while (found);
	if ((t = step_thread_find(st, src->cfg.pid)) != NULL)
		step_trigger_resolve(st, t->proc);
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
		if ((rc = step_handle(st, w, status)) < 0) {
			step_err(st, "tid %d: %s", (int)w, hwtr_errstr(rc));
			return (rc);
		}
	}
	return (0);
}

/*
 * Handle the threads' stops without waiting for one, every 2 ms, until
 * none is left or @tries rounds have gone by.
 */
static void
step_reap(struct step *st, int tries)
{
	struct timespec ts = { 0, 2000000 };
	int status;
	pid_t w;

	for (; st->nthreads > 0 && tries > 0; tries--) {
		w = waitpid(-1, &status, __WALL | WNOHANG);
		if (w > 0)
			(void)step_handle(st, w, status);
		else if (w < 0 && errno != EINTR)
			break;
		else
			nanosleep(&ts, NULL);
	}
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
	int status, i;
	pid_t w;

	if (st->nthreads == 0)
		return (0);
	st->detaching = 1;
	if (!st->launched) {
		for (i = 0; i < STEP_HASH; i++)
			for (t = st->threads[i]; t != NULL; t = t->next)
				(void)ptrace(PTRACE_INTERRUPT, t->tid, 0, 0);
		step_reap(st, 2000);
		return (0);
	}
	/*
	 * Give a program that got the terminal's SIGINT too a moment to die
	 * of it, so its own status is the one reported; then kill the rest.
	 */
	st->detaching = 0;
	step_reap(st, 100);
	for (p = st->procs; p != NULL; p = p->next)
		kill(p->pid, SIGKILL);
	while (st->nthreads > 0) {
		w = waitpid(-1, &status, __WALL);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		(void)step_handle(st, w, status);
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
		step_proc_free(st, st->procs);
	free(st);
	src->priv = NULL;
}

#endif /* Linux on x86-64 */

/* A thread holds nothing of its own on either side. */
static void
step_backend_thread_free(struct hwtr_src *src, struct hwtr_src_thread *thr)
{
	(void)src;
	(void)thr;
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
