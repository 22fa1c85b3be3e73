/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/* hwtrace capture: record a run of a program (hwtrace-capture(1)). */

#include <sys/prctl.h>
#include <sys/wait.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hwtrace.h"
#include "hwtr_common.h"
#include "cli.h"

enum {
	OPT_CPU = 256,
	OPT_DEBUG_INFO,
	OPT_FILTER,
	OPT_CHECK_PORTABLE,
	OPT_FORCE,
	OPT_GROUND_TRUTH,
	OPT_KEEP_ON_FAILURE,
	OPT_NO_DEBUG_INFO,
	OPT_NO_FOLLOW,
	OPT_NO_RET_COMPRESSION,
	OPT_PSB_PERIOD,
	OPT_REDACT_ARGS,
	OPT_TRIGGER
};

static const struct cli_opt capture_opts[] = {
	{ "all-cpus", 'a', NULL, "perf, hwt: trace every CPU, not only the "
	    "command" },
	{ "buffer", 'b', "SIZE", "trace buffer per thread (perf: per CPU; K, "
	    "M, G suffixes; default 4M)" },
	{ "check-portable", OPT_CHECK_PORTABLE, NULL, "check that the "
	    "archive kept decodes with nothing from this machine "
	    "(hwtrace verify --decode)" },
	{ "cpu", OPT_CPU, "LIST", "perf, hwt: trace these CPUs (0-3,6)" },
	{ "debug-info", OPT_DEBUG_INFO, "WHICH", "the images' separate debug "
	    "files to store: all (default), own (not the system's) or none" },
	{ "filter", OPT_FILTER, "FILTERS", "perf: address filters "
	    "(filter ADDR/SIZE@FILE, start, stop; comma separated); hwt: "
	    "FUNC or START-END ranges" },
	{ "force", OPT_FORCE, NULL, "replace the output archive if it "
	    "exists" },
	{ "ground-truth", OPT_GROUND_TRUTH, NULL, "also record every "
	    "instruction address (for tests)" },
	{ "keep-on-failure", OPT_KEEP_ON_FAILURE, NULL, "keep the archive "
	    "only when the command fails" },
	{ "mode", 'm', "MODE", "buffer policy: stream (default), ring or "
	    "stop" },
	{ "no-debug-info", OPT_NO_DEBUG_INFO, NULL, "the same as "
	    "--debug-info=none" },
	{ "no-follow", OPT_NO_FOLLOW, NULL, "do not trace child processes" },
	{ "no-ret-compression", OPT_NO_RET_COMPRESSION, NULL, "write a TIP "
	    "for every return" },
	{ "output", 'o', "FILE", "archive to write (default capture.hwtrace)" },
	{ "pid", 'p', "PID", "attach to a running process" },
	{ "psb-period", OPT_PSB_PERIOD, "BYTES", "bytes between PSB+ "
	    "(default 4K)" },
	{ "redact-args", OPT_REDACT_ARGS, NULL, "record the command's "
	    "name (argv[0]) only, not its arguments" },
	{ "source", 's', "NAME", "trace source: step, valgrind, perf, hwt "
	    "or auto (default: auto, the best available)" },
	{ "trigger", OPT_TRIGGER, "SYMBOL", "ring mode: snapshot when the "
	    "program reaches SYMBOL" },
	{ "verbose", 'v', NULL, "say more on stderr" },
	{ NULL, 0, NULL, NULL }
};

static const struct cli_cmd capture_cmd = {
	.verb = "capture",
	.usage = "[-o FILE] [options] -- COMMAND [ARG...]\n"
	    "       hwtrace capture -p PID [-o FILE] [options]",
	.summary = "Record how a program runs: an Intel PT stream per thread, "
	    "sideband and images, in one archive.",
	.opts = capture_opts,
};

/* The flags the signal handlers set; the session polls them. */
static volatile int stop_flag;
static volatile int snapshot_count;

static void
on_stop(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static void
on_snapshot(int sig)
{
	(void)sig;
	snapshot_count++;
}

/* A write to a closed pipe fails with EPIPE; the signal itself does nothing. */
static void
on_pipe(int sig)
{
	(void)sig;
}

/*
 * capture -p PID: the tracer is a child of the process the user sees.
 * The step source single-steps the process it attaches to, so the
 * trap flag (TF) is set in its registers whenever it waits in a trace
 * stop, and a tracer killed with SIGKILL is detached by the kernel
 * without clearing it (ptrace's exit path, unlike PTRACE_DETACH, does
 * not undo single-stepping): the process runs one instruction and dies
 * of SIGTRAP.  A tracer cannot outlive SIGKILL, so the process the user
 * may kill is not the tracer: it waits for the worker, forwards the
 * signals the capture answers to, and exits as the worker does.  The
 * worker asks the kernel for SIGTERM when this process dies
 * (PR_SET_PDEATHSIG), which ends the capture as SIGTERM always does:
 * the process is detached with its trap flag cleared and left running,
 * and the archive is written complete.
 *
 * Returns -1 in the worker, which goes on to capture; in this process,
 * the exit status to return.
 */
static int
attach_split(void)
{
	sigset_t set, old;
	siginfo_t si;
	pid_t parent = getpid(), w;
	int status, sig;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGUSR2);
	sigaddset(&set, SIGCHLD);
	/* Blocked before the fork: none is lost before sigwaitinfo(). */
	sigprocmask(SIG_BLOCK, &set, &old);
	fflush(NULL);
	if ((w = fork()) < 0) {
		cli_warnx("capture", "warning: fork: %s: the attached process "
		    "dies of SIGTRAP if hwtrace is killed with SIGKILL",
		    strerror(errno));
		sigprocmask(SIG_SETMASK, &old, NULL);
		return (-1);
	}
	if (w == 0) {
		(void)prctl(PR_SET_PDEATHSIG, SIGTERM);
		sigprocmask(SIG_SETMASK, &old, NULL);
		/* Killed between the fork and the prctl: the same end. */
		if (getppid() != parent)
			(void)kill(getpid(), SIGTERM);
		return (-1);
	}
	for (;;) {
		if ((sig = sigwaitinfo(&set, &si)) < 0)
			continue;	/* EINTR: a stop and continue */
		if (sig != SIGCHLD) {
			(void)kill(w, sig);
			continue;
		}
		if (waitpid(w, &status, WNOHANG) != w)
			continue;
		if (WIFEXITED(status))
			return (WEXITSTATUS(status));
		return (128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0));
	}
}

static void
log_stderr(void *arg, enum hwtr_log_level level, const char *msg)
{
	(void)arg;
	cli_warnx("capture", "%s%s", level == HWTR_LOG_ERROR ? "error: " :
	    level == HWTR_LOG_WARN ? "warning: " : "", msg);
}

/*
 * The options into @cfg (initialized here), *verbose and *check_portable:
 * 0, or the exit status of a usage error.  The command starts at argv[optind].
 */
static int
capture_parse(int argc, char **argv, struct hwtr_cap_config *cfg,
    int *verbose, int *check_portable)
{
	const char *arg;
	uint64_t v;
	long pid;
	int c;

	hwtr_cap_config_init(cfg);
	cfg->output = "capture.hwtrace";
	while ((c = cli_getopt(&capture_cmd, argc, argv, &arg)) != -1) {
		switch (c) {
		case 'a':
			cfg->all_cpus = 1;
			break;
		case OPT_CPU:
			cfg->cpus = arg;
			break;
		case OPT_FILTER:
			cfg->filter = arg;
			break;
		case 'b':
			if (cli_parse_size(arg, &v) < 0 || v == 0)
				return (cli_usage_error(&capture_cmd,
				    "malformed buffer size '%s'", arg));
			cfg->buffer_size = v;
			break;
		case OPT_FORCE:
			cfg->force = 1;
			break;
		case OPT_GROUND_TRUTH:
			cfg->ground_truth = 1;
			break;
		case OPT_CHECK_PORTABLE:
			*check_portable = 1;
			break;
		case OPT_KEEP_ON_FAILURE:
			cfg->keep_on_failure = 1;
			break;
		case 'm':
			if (strcmp(arg, "stream") == 0)
				cfg->mode = HWTR_CAP_STREAM;
			else if (strcmp(arg, "ring") == 0)
				cfg->mode = HWTR_CAP_RING;
			else if (strcmp(arg, "stop") == 0)
				cfg->mode = HWTR_CAP_STOP;
			else
				return (cli_usage_error(&capture_cmd,
				    "unknown mode '%s' (stream, ring, stop)",
				    arg));
			break;
		case OPT_DEBUG_INFO:
			if (strcmp(arg, "all") == 0)
				cfg->debug_info = HWTR_CAP_DEBUG_ALL;
			else if (strcmp(arg, "own") == 0)
				cfg->debug_info = HWTR_CAP_DEBUG_OWN;
			else if (strcmp(arg, "none") == 0)
				cfg->debug_info = HWTR_CAP_DEBUG_NONE;
			else
				return (cli_usage_error(&capture_cmd,
				    "--debug-info: unknown '%s' (all, own, "
				    "none)", arg));
			break;
		case OPT_NO_DEBUG_INFO:
			cfg->no_debug_info = 1;
			break;
		case OPT_NO_FOLLOW:
			cfg->no_follow = 1;
			break;
		case OPT_NO_RET_COMPRESSION:
			cfg->no_ret_compression = 1;
			break;
		case 'o':
			cfg->output = arg;
			break;
		case 'p':
			if (cli_parse_int(arg, 1, 0x7fffffff, &pid) < 0)
				return (cli_usage_error(&capture_cmd,
				    "malformed process id '%s'", arg));
			cfg->pid = (int32_t)pid;
			break;
		case OPT_PSB_PERIOD:
			if (cli_parse_size(arg, &v) < 0 || v < 64 ||
			    v > (1u << 30))
				return (cli_usage_error(&capture_cmd,
				    "malformed PSB period '%s' (64 to 1G)",
				    arg));
			cfg->psb_period = (uint32_t)v;
			break;
		case OPT_REDACT_ARGS:
			cfg->redact_args = 1;
			break;
		case 's':
			if (strcmp(arg, "auto") == 0) {
				cfg->source = NULL;
				break;
			}
			if (!hwtr_cap_source_known(arg))
				return (cli_usage_error(&capture_cmd,
				    "unknown source '%s'", arg));
			cfg->source = arg;
			break;
		case OPT_TRIGGER:
			cfg->trigger = arg;
			break;
		case 'v':
			*verbose = 1;
			break;
		default:
			return (cli_usage_error(&capture_cmd,
			    "unexpected option"));
		}
	}
	argc -= optind;
	if (cfg->pid > 0 && argc > 0)
		return (cli_usage_error(&capture_cmd,
		    "give a command or -p PID, not both"));
	if (cfg->pid == 0 && argc == 0)
		return (cli_usage_error(&capture_cmd, "no command to run"));
	if (cfg->trigger != NULL && cfg->mode != HWTR_CAP_RING)
		return (cli_usage_error(&capture_cmd,
		    "--trigger needs --mode ring"));
	/* hwt: FreeBSD's hwt(4) takes them too (kernel/hwt.c). */
	if ((cfg->all_cpus || cfg->cpus != NULL || cfg->filter != NULL) &&
	    (cfg->source == NULL || (strcmp(cfg->source, "perf") != 0 &&
	    strcmp(cfg->source, "hwt") != 0)))
		return (cli_usage_error(&capture_cmd,
		    "-a, --cpu and --filter need --source perf or hwt"));
	if (cfg->all_cpus && cfg->cpus != NULL)
		return (cli_usage_error(&capture_cmd,
		    "give -a or --cpu, not both"));
	return (0);
}

/* Catch @sig with @fn; no SA_RESTART: it must interrupt waitpid(). */
static void
catch_signal(int sig, void (*fn)(int))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = fn;
	sigaction(sig, &sa, NULL);
}

/*
 * The handlers of the signals that stop a capture or take a snapshot.
 * A signal the caller ignored is given back ignored to the program
 * (hwtr_sig_restore_ignored() in the sources' children): a caught one
 * is reset to the default at exec, and under nohup(1) or in a script's
 * background job (SIGINT ignored) the program would run as it does not
 * outside hwtrace (xz looks: found against callgrind).  hwtrace itself
 * still stops at SIGINT, SIGTERM and takes snapshots at SIGUSR2 however
 * it was started, as perf record does: a script stops a capture it runs
 * in the background with kill -INT.  An ignored SIGHUP stays ignored by
 * hwtrace too (nohup: a hangup must not end the capture), and an
 * ignored SIGPIPE likewise.
 */
static void
capture_signals(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGUSR2,
	    SIGPIPE };
	struct sigaction sa;

	hwtr_sig_note_ignored(sigs, sizeof(sigs) / sizeof(sigs[0]));
	catch_signal(SIGINT, on_stop);
	catch_signal(SIGTERM, on_stop);
	if (sigaction(SIGHUP, NULL, &sa) == 0 && sa.sa_handler != SIG_IGN)
		catch_signal(SIGHUP, on_stop);
	catch_signal(SIGUSR2, on_snapshot);
	/*
	 * A closed output pipe must be an error, not our death; but an
	 * ignored SIGPIPE is inherited across exec, and the program would
	 * then run as it does not run outside hwtrace (gzip and yes take
	 * their EPIPE paths).  A handler is reset to the default at exec;
	 * a SIGPIPE the user's shell ignored stays ignored for both.
	 */
	if (sigaction(SIGPIPE, NULL, &sa) == 0 && sa.sa_handler != SIG_IGN) {
		memset(&sa, 0, sizeof(sa));
		sigemptyset(&sa.sa_mask);
		sa.sa_handler = on_pipe;
		sa.sa_flags = SA_RESTART;
		sigaction(SIGPIPE, &sa, NULL);
	}
}

/* What a successful capture wrote, on stderr. */
static void
capture_report(const struct hwtr_cap_config *cfg,
    const struct hwtr_cap_result *res, int verbose)
{
	if (res->kept && res->nthreads == 0)
		/* A hardware recording: the index counts what ran. */
		cli_warnx("capture", "wrote '%s': %llu bytes of hardware "
		    "trace%s", cfg->output,
		    (unsigned long long)res->trace_bytes,
		    res->lost_bytes || res->lost_records ? " (some lost, "
		    "see hwtrace info)" : "");
	else if (res->kept)
		cli_warnx("capture", "wrote '%s': %u threads in %u processes, "
		    "%llu instructions, %llu bytes of trace%s", cfg->output,
		    res->nthreads, res->nprocs,
		    (unsigned long long)res->instructions,
		    (unsigned long long)res->trace_bytes,
		    res->lost_bytes ? " (some lost, see hwtrace info)" : "");
	else if (verbose)
		cli_warnx("capture", "the command succeeded: no archive kept "
		    "(--keep-on-failure)");
}

int
cmd_capture(int argc, char **argv)
{
	struct hwtr_cap_config cfg;
	struct hwtr_cap_result res;
	int rc, verbose = 0, check_portable = 0;

	if ((rc = capture_parse(argc, argv, &cfg, &verbose,
	    &check_portable)) != 0)
		return (rc);
	argc -= optind;
	argv += optind;
	if (argc > 0)
		cfg.argv = argv;
	cfg.stop = &stop_flag;
	cfg.snapshot = &snapshot_count;
	cfg.log.fn = log_stderr;
	cfg.log.level = verbose ? HWTR_LOG_INFO : HWTR_LOG_WARN;

	/* The worker (attach_split()) installs the same handlers. */
	if (cfg.pid > 0 && (rc = attach_split()) >= 0)
		return (rc);
	capture_signals();

	rc = hwtr_cap_run(&cfg, &res);
	if (rc < 0) {
		cli_warnx("capture", "%s", res.errmsg[0] ? res.errmsg :
		    hwtr_errstr(rc));
		/* As sh(1): 127 not found, 126 found but not executable. */
		if (res.exec_errno != 0)
			return (res.exec_errno == ENOENT ? 127 : 126);
		return (1);
	}
	capture_report(&cfg, &res, verbose);
	/*
	 * The archive kept is checked the way another machine would decode
	 * it; the findings go to stderr (stdout is the program's).  An
	 * archive that does not decode fully elsewhere fails a command that
	 * succeeded; a failed command keeps its status.
	 */
	if (res.kept && check_portable &&
	    cli_portable("capture", cfg.output, stderr) != 0 &&
	    hwtr_cap_exit_status(&res) == 0)
		return (1);
	return (hwtr_cap_exit_status(&res));
}
