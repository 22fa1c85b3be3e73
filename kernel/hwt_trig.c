/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * --trigger for the hwt source: a snapshot of every ring (--mode ring)
 * each time the traced process reaches the function.  hwt(4) has no
 * breakpoint of its own, and its PT backend leaves IA32_RTIT_CTL's
 * ADDRn_CFG at filtering (never TraceStop), so the breakpoint is the
 * debugger's: a hardware execution breakpoint in the thread's debug
 * registers, set with ptrace(2)'s PT_SETDBREGS.  The code is not
 * modified, so the trace decodes against the images as they are.
 *
 * How.  The process is attached (PT_ATTACH; a launched command while it
 * is held before its exec) and let go on.  A launched command stops with
 * SIGTRAP at its exec (ptrace's default PTRACE_EXEC event): the exec
 * cleared the debug registers, and hwt(4) has queued the EXECUTABLE
 * record, whose address is a position-independent executable's load
 * base; the breakpoint is set then, at the function's address (plus that
 * base).  With -p it is set at the attach stop (a PIE's base is not known
 * then: refused).  Each SIGTRAP stop with the breakpoint's status bit
 * (amd64: DR6.B0) is a hit: the rings are read as SIGUSR2 reads them
 * (the thread is switched out, so hwt(4)'s position is exact), then the
 * breakpoint is stepped over (disabled, PT_STEP, enabled again) and the
 * process continued.  Other stops are given their signal back.
 *
 * Threads: the registers are set on the thread that stops (ptrace on the
 * pid means the thread that stopped); a thread created later starts with
 * its creator's debug registers where the kernel copies them with the
 * thread's PCB (amd64's cpu_copy_thread()); hwtrace sets them on no
 * other thread.  Every ptrace(2) and waitpid(2) call goes through the
 * source's system call table, so the tests model them.
 */

#include <sys/types.h>
#include <sys/wait.h>

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <string.h>
#include <time.h>

#include "hwtr_common.h"
#include "hwt_int.h"

#define TRIG_WAIT_MS	10000

static int trig_arm(struct hwt_src *hs, int on);
static int trig_wait(struct hwt_src *hs, int *sig);
static int trig_ptrace(struct hwt_src *hs, int req, void *addr, int data,
    const char *what);

/*
 * At configure: where a trigger can work.  It needs the rings kept
 * (--mode ring) and a process to stop: a COMMAND or -p.
 */
int
hwt_trig_check(struct hwt_src *hs)
{
	const struct hwtr_src_config *cfg = &hs->src->cfg;
	int launched = cfg->argv != NULL && cfg->argv[0] != NULL;

	if (cfg->trigger_name == NULL)
		return (0);
	if (cfg->mode != HWTR_CAP_RING) {
		hwt_err(hs, "--trigger %s needs --mode ring (it snapshots the "
		    "rings)", cfg->trigger_name);
		return (-HWTR_E_INVAL);
	}
	if (hs->cpu_mode && !launched && cfg->pid <= 0) {
		hwt_err(hs, "--trigger %s in CPU mode: no process to watch "
		    "(give a COMMAND: the breakpoint is in its debug "
		    "registers)", cfg->trigger_name);
		return (-HWTR_E_INVAL);
	}
	if (cfg->trigger_pie && (hs->cpu_mode || cfg->pid > 0)) {
		hwt_err(hs, "--trigger %s: '%s' is position-independent and "
		    "its load address is known only from hwt(4)'s "
		    "EXECUTABLE record, which comes at the exec of a "
		    "launched command in thread mode", cfg->trigger_name,
		    launched ? cfg->argv[0] : "the process");
		return (-HWTR_E_UNSUPPORTED);
	}
	hs->trig = 1;
	return (0);
}

/*
 * At enable, the process known and held (a launched command before its
 * exec): attach it, wait for the attach stop, set the breakpoint now
 * when its address is known (-p), and let it go on.
 */
int
hwt_trig_attach(struct hwt_src *hs)
{
	const struct hwtr_src_config *cfg = &hs->src->cfg;
	int sig, rc;

	if (!hs->trig)
		return (0);
	hs->trig_pid = hs->child > 0 ? hs->child : cfg->pid;
	assert(hs->trig_pid > 0);
	if (hs->sys->ptrace(hs->sys->arg, HWTR_PT_ATTACH, hs->trig_pid, NULL,
	    0) < 0) {
		hwt_err(hs, "--trigger %s: cannot trace process %d (ptrace "
		    "PT_ATTACH): %s", cfg->trigger_name, (int)hs->trig_pid,
		    strerror(errno));
		rc = errno == EPERM || errno == EACCES ? -HWTR_E_PERM :
		    -HWTR_E_IO;
		hs->trig_pid = 0;
		return (rc);
	}
	hs->trig_state = HWT_TRIG_EXEC;
	if ((rc = trig_wait(hs, &sig)) < 0)
		return (rc);
	if (hs->child <= 0) {
		hs->trig_addr = cfg->trigger_vaddr;
		if ((rc = trig_arm(hs, 1)) < 0)
			return (rc);
		hs->trig_state = HWT_TRIG_ARMED;
	}
	/* The attach's SIGSTOP is not delivered; any other signal is. */
	return (trig_ptrace(hs, HWTR_PT_CONTINUE, (void *)1,
	    sig == SIGSTOP ? 0 : sig, "PT_CONTINUE"));
}

/* A SIGTRAP stop: 1 when breakpoint 0 fired (its status then cleared). */
static int
trig_fired(struct hwt_src *hs)
{
#if defined(__aarch64__)
	/* No status register in arm64's struct dbreg: a SIGTRAP is it. */
	return (1);
#else
	struct hwtr_dbreg_amd64 d;

	memset(&d, 0, sizeof(d));
	if (trig_ptrace(hs, HWTR_PT_GETDBREGS, &d, 0, "PT_GETDBREGS") < 0)
		return (-HWTR_E_IO);
	return ((d.dr[6] & HWTR_DR6_B0) != 0 && d.dr[0] == hs->trig_addr);
#endif
}

/*
 * The traced process stopped with @sig (waitpid(2) said so): the exec
 * stop (HWT_TRIG_AT_EXEC: the caller reads the records, then calls
 * hwt_trig_exec()), a hit (HWT_TRIG_AT_HIT: the caller takes the
 * snapshot, then calls hwt_trig_step()), or a signal given back (0).
 * -HWTR_E_* on failure.
 */
int
hwt_trig_stopped(struct hwt_src *hs, int sig)
{
	int rc;

	assert(hs->trig && hs->trig_pid > 0);
	if (hs->trig_state == HWT_TRIG_EXEC && sig == SIGTRAP)
		return (HWT_TRIG_AT_EXEC);
	if (hs->trig_state == HWT_TRIG_ARMED && sig == SIGTRAP) {
		if ((rc = trig_fired(hs)) < 0)
			return (rc);
		if (rc == 1) {
			hs->trig_hits++;
			return (HWT_TRIG_AT_HIT);
		}
	}
	return (trig_ptrace(hs, HWTR_PT_CONTINUE, (void *)1, sig,
	    "PT_CONTINUE"));
}

/*
 * At the exec stop, the records read: the breakpoint at the function's
 * runtime address (a PIE's plus the EXECUTABLE record's base), and on.
 */
int
hwt_trig_exec(struct hwt_src *hs)
{
	const struct hwtr_src_config *cfg = &hs->src->cfg;
	int rc;

	assert(hs->trig_state == HWT_TRIG_EXEC);
	if (cfg->trigger_pie && !hs->have_exec) {
		hwt_err(hs, "--trigger %s: '%s' stopped at its exec but "
		    "hwt(4) queued no EXECUTABLE record: its load address is "
		    "not known", cfg->trigger_name, cfg->argv[0]);
		return (-HWTR_E_FORMAT);
	}
	hs->trig_addr = cfg->trigger_vaddr +
	    (cfg->trigger_pie ? hs->exec_base : 0);
	if ((rc = trig_arm(hs, 1)) < 0)
		return (rc);
	hs->trig_state = HWT_TRIG_ARMED;
	hwtr_logf(&hs->src->cfg.log, HWTR_LOG_INFO, "hwt: --trigger %s: "
	    "breakpoint at 0x%" PRIx64 " in process %d", cfg->trigger_name,
	    hs->trig_addr, (int)hs->trig_pid);
	return (trig_ptrace(hs, HWTR_PT_CONTINUE, (void *)1, 0,
	    "PT_CONTINUE"));
}

/*
 * After a hit's snapshot: an execution breakpoint faults before its
 * instruction, so the instruction is stepped with the breakpoint off,
 * which is set again before the process goes on.
 */
int
hwt_trig_step(struct hwt_src *hs)
{
	int rc, sig;

	assert(hs->trig_state == HWT_TRIG_ARMED);
	if ((rc = trig_arm(hs, 0)) < 0 ||
	    (rc = trig_ptrace(hs, HWTR_PT_STEP, (void *)1, 0, "PT_STEP")) < 0 ||
	    (rc = trig_wait(hs, &sig)) < 0)
		return (rc);
	if (hs->trig_state == HWT_TRIG_DONE)
		return (0);		/* it ended during the step */
	if ((rc = trig_arm(hs, 1)) < 0)
		return (rc);
	return (trig_ptrace(hs, HWTR_PT_CONTINUE, (void *)1,
	    sig == SIGTRAP ? 0 : sig, "PT_CONTINUE"));
}

/*
 * The end of a capture: a process attached with -p and still running
 * gets its debug registers back and is detached.  A launched command is
 * killed by the caller: nothing to do.
 */
void
hwt_trig_detach(struct hwt_src *hs)
{
	int sig;

	if (!hs->trig || hs->trig_pid <= 0 || hs->child > 0 ||
	    hs->trig_state == HWT_TRIG_DONE)
		return;
	if (kill(hs->trig_pid, SIGSTOP) < 0 || trig_wait(hs, &sig) < 0 ||
	    hs->trig_state == HWT_TRIG_DONE)
		return;
	(void)trig_arm(hs, 0);
	(void)hs->sys->ptrace(hs->sys->arg, HWTR_PT_DETACH, hs->trig_pid,
	    (void *)1, 0);
	hs->trig_state = HWT_TRIG_DONE;
}

/* ------------------------------------------------------------------ */
/* Helpers.                                                            */

/* A ptrace(2) request on the traced process; -HWTR_E_IO named. */
static int
trig_ptrace(struct hwt_src *hs, int req, void *addr, int data,
    const char *what)
{
	if (hs->sys->ptrace(hs->sys->arg, req, hs->trig_pid, addr, data) == 0)
		return (0);
	hwt_err(hs, "--trigger %s: ptrace %s on process %d: %s",
	    hs->src->cfg.trigger_name, what, (int)hs->trig_pid,
	    strerror(errno));
	return (-HWTR_E_IO);
}

/*
 * The breakpoint in the stopped thread's debug registers: enabled at
 * trig_addr (@on), or disabled.  Breakpoint 0 only: a debugger of the
 * process would share the others.
 */
static int
trig_arm(struct hwt_src *hs, int on)
{
#if defined(__aarch64__)
	struct hwtr_dbreg_arm64 d;
#else
	struct hwtr_dbreg_amd64 d;
#endif

	assert(!on || hs->trig_addr != 0);
	memset(&d, 0, sizeof(d));
	if (trig_ptrace(hs, HWTR_PT_GETDBREGS, &d, 0, "PT_GETDBREGS") < 0)
		return (-HWTR_E_IO);
#if defined(__aarch64__)
	if (d.db_nbkpts == 0) {
		hwt_err(hs, "--trigger %s: the CPU has no hardware breakpoint",
		    hs->src->cfg.trigger_name);
		return (-HWTR_E_UNSUPPORTED);
	}
	d.db_breakregs[0].dbr_addr = on ? hs->trig_addr : 0;
	d.db_breakregs[0].dbr_ctrl = on ? HWTR_DBGBCR_EXEC_EL0 : 0;
#else
	d.dr[0] = on ? hs->trig_addr : 0;
	d.dr[7] &= ~(HWTR_DR7_L0 | HWTR_DR7_RWLEN0);
	if (on)
		d.dr[7] |= HWTR_DR7_L0;
	d.dr[6] = 0;
#endif
	return (trig_ptrace(hs, HWTR_PT_SETDBREGS, &d, 0, "PT_SETDBREGS"));
}

/*
 * Wait for the traced process's next stop, its signal into @sig; its end
 * instead makes trig_state DONE and sets trig_ended (the caller records
 * the status).  Polls, so that a process that never stops cannot hang the
 * capture: TRIG_WAIT_MS at most.
 */
static int
trig_wait(struct hwt_src *hs, int *sig)
{
	struct timespec ms = { 0, 1000000 };
	pid_t r;
	int st, i;

	*sig = 0;
	for (i = 0; i < TRIG_WAIT_MS; i++) {
		r = hs->sys->waitpid(hs->sys->arg, hs->trig_pid, &st, WNOHANG);
		if (r < 0 && errno != EINTR) {
			hwt_err(hs, "--trigger %s: waitpid on process %d: %s",
			    hs->src->cfg.trigger_name, (int)hs->trig_pid,
			    strerror(errno));
			return (-HWTR_E_IO);
		}
		if (r == hs->trig_pid && WIFSTOPPED(st)) {
			*sig = WSTOPSIG(st);
			return (0);
		}
		if (r == hs->trig_pid) {
			hs->trig_state = HWT_TRIG_DONE;
			hs->trig_ended = 1;
			hs->trig_status = st;
			return (0);
		}
		nanosleep(&ms, NULL);
	}
	hwt_err(hs, "--trigger %s: process %d did not stop in %d ms",
	    hs->src->cfg.trigger_name, (int)hs->trig_pid, TRIG_WAIT_MS);
	return (-HWTR_E_IO);
}
