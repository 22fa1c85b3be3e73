/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/* hwtrace report: one self-contained HTML page of a run. */

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hwtrace.h"
#include "cli.h"

enum {
	O_COLUMNS = 0x100, O_DB, O_DEPTH, O_THREADS, O_TIMEOUT, O_TOP
};

/*
 * SIGINT and SIGTERM while an archive is indexed first: the indexer stops
 * within a second and removes its temporary database and directory, as
 * for query (the default action would leave them behind).
 */
static volatile int report_cancel;

static void
on_cancel(int sig)
{
	(void)sig;
	report_cancel = 1;
}

static const struct cli_opt report_opts[] = {
	{ "columns", O_COLUMNS, "N", "timeline columns per thread (default "
	    "600)" },
	{ "db", O_DB, "PATH", "database to use for an archive (default: "
	    "ARCHIVE.db)" },
	{ "depth", O_DEPTH, "N", "call levels in the timelines (default 8)" },
	{ "output", 'o', "FILE", "write the page to FILE (.html)" },
	{ "threads", O_THREADS, "N", "timelines of the N longest threads, "
	    "bt and last of N threads (default 16)" },
	{ "timeout", O_TIMEOUT, "SECONDS", "stop each part after SECONDS of "
	    "CPU time (default 60 and 1 per MiB of database; 0: no limit)" },
	{ "top", O_TOP, "N", "rows of the hot tables (default 40)" },
	{ NULL, 0, NULL, NULL }
};

static const struct cli_cmd report_cmd = {
	.verb = "report",
	.usage = "[--columns N] [--db PATH] [--depth N] [--threads N]\n"
	    "    [--timeout SECONDS] [--top N] -o FILE ARCHIVE|DB",
	.summary = "Write one self-contained HTML page of a run: what ran and "
	    "what the trace lost, the backtrace and last blocks with their "
	    "source, a flame graph, hot functions and lines, each thread's "
	    "timeline and the coverage of the program's own files.",
	.opts = report_opts,
};

static void
report_log(void *arg, enum hwtr_log_level level, const char *msg)
{
	(void)arg;
	(void)level;
	cli_warnx("report", "%s", msg);
}

/* A count option: 1 to @max. */
static int
report_count(const char *opt, const char *arg, long max, int64_t *vp)
{
	long v;

	if (cli_parse_int(arg, 1, max, &v) < 0)
		return (cli_usage_error(&report_cmd, "--%s: '%s' is not a "
		    "number from 1 to %ld", opt, arg, max));
	*vp = v;
	return (0);
}

int
cmd_report(int argc, char **argv)
{
	struct hwtr_q_report_opts ro;
	struct hwtr_q_opts qo;
	struct sigaction sa, oldint, oldterm;
	struct cli_progress prog;
	struct cli_operands ops = { { NULL }, 0 };
	struct hwtr_q *q = NULL;
	const char *arg, *out = NULL, *db = NULL;
	char errbuf[HWTR_ERRMSG_MAX];
	size_t size = 0;
	long sec;
	int c, rc;

	memset(&ro, 0, sizeof(ro));
	while ((c = cli_getopt_ops(&report_cmd, argc, argv, &arg, &ops)) !=
	    -1) {
		rc = 0;
		switch (c) {
		case 'o':
			out = arg;
			break;
		case O_DB:
			db = arg;
			break;
		case O_COLUMNS:
			rc = report_count("columns", arg, 4000, &ro.columns);
			break;
		case O_DEPTH:
			rc = report_count("depth", arg, 64, &ro.depth);
			break;
		case O_THREADS:
			rc = report_count("threads", arg, 1024, &ro.threads);
			break;
		case O_TOP:
			rc = report_count("top", arg, 10000, &ro.top);
			break;
		case O_TIMEOUT:
			if (cli_parse_int(arg, 0, 86400 * 365, &sec) < 0)
				return (cli_usage_error(&report_cmd, "--timeout: "
				    "'%s' is not a number of seconds", arg));
			/* 0: no limit, which the library spells < 0. */
			ro.timeout_ms = sec == 0 ? -1 : (int64_t)sec * 1000;
			break;
		default:
			return (cli_usage_error(&report_cmd, "unexpected "
			    "option"));
		}
		if (rc != 0)
			return (rc);
	}
	if (ops.n == 0)
		return (cli_usage_error(&report_cmd, "no archive or database "
		    "given"));
	if (ops.n > 1)
		return (cli_usage_error(&report_cmd, "unexpected argument '%s'",
		    ops.v[1]));
	if (out == NULL)
		return (cli_usage_error(&report_cmd, "no output file: -o "
		    "FILE.html"));
	memset(&qo, 0, sizeof(qo));
	qo.cache = db;
	qo.log.fn = report_log;
	qo.log.level = HWTR_LOG_WARN;
	/* An archive is indexed first: its progress on a terminal. */
	memset(&prog, 0, sizeof(prog));
	if (isatty(STDERR_FILENO)) {
		prog.what = "report: indexing";
		clock_gettime(CLOCK_MONOTONIC, &prog.start);
		qo.progress = cli_progress_show;
		qo.progress_arg = &prog;
	}
	qo.cancel = &report_cancel;
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_cancel;
	sigaction(SIGINT, &sa, &oldint);
	sigaction(SIGTERM, &sa, &oldterm);
	rc = hwtr_q_open(&q, ops.v[0], &qo, errbuf, sizeof(errbuf));
	/*
	 * Interrupted, it only says so and exits 1: a second signal (timeout(1)
	 * sends one to the command and one to its group) changes nothing.
	 */
	if (!report_cancel) {
		sigaction(SIGINT, &oldint, NULL);
		sigaction(SIGTERM, &oldterm, NULL);
	}
	if (prog.shown)
		fprintf(stderr, "\r%78s\r", "");
	if (rc < 0) {
		cli_warnx("report", "%s", report_cancel ? "interrupted while "
		    "indexing; nothing written" : errbuf);
		return (1);
	}
	if (hwtr_q_report(q, &ro, out, &size) < 0) {
		cli_warnx("report", "%s", hwtr_q_errmsg(q));
		hwtr_q_close(q);
		return (1);
	}
	hwtr_q_close(q);
	fprintf(stderr, "hwtrace report: wrote '%s': %zu bytes\n", out, size);
	return (0);
}
