/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/* hwtrace index: decode an archive into an SQLite database. */

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hwtrace.h"
#include "cli.h"

static const struct cli_opt index_opts[] = {
	{ "decoder", 'D', "NAME", "Intel PT decoder: fast (default), the "
	    "indexer's own, which hands to libipt what it cannot decode as "
	    "libipt does, or libipt" },
	{ "jobs", 'j', "N", "work on N threads in all, the writer's included "
	    "(default: number of cores; 6 at most)" },
	{ "output", 'o', "DB", "write the database to DB (default: FILE "
	    "with .hwtrace replaced by .db)" },
	{ "quiet", 'q', NULL, "no progress and no summary on stderr" },
	{ NULL, 0, NULL, NULL }
};

static const struct cli_cmd index_cmd = {
	.verb = "index",
	.usage = "[-q] [-D NAME] [-j N] [-o DB] FILE",
	.summary = "Decode every trace stream of archive FILE into an SQLite "
	    "database (hwtrace-db(5)).",
	.opts = index_opts,
};

/* Set from SIGINT/SIGTERM; the library stops and removes its output. */
static volatile int index_cancel;

static void
on_signal(int sig)
{
	(void)sig;
	index_cancel = 1;
}

static void
log_stderr(void *arg, enum hwtr_log_level level, const char *msg)
{
	(void)arg;
	(void)level;
	(void)msg;
	/* Problems are listed once, in the summary at the end. */
}

int
cmd_index(int argc, char **argv)
{
	struct hwtr_ix_opts o;
	struct hwtr_ix *ix = NULL;
	struct cli_progress prog;
	const struct hwtr_ix_stats *st;
	struct cli_operands ops = { { NULL }, 0 };
	const char *arg, *file = NULL, *out = NULL, *decoder = NULL;
	char *dbname = NULL;
	long jobs = 0;
	int c, rc, quiet = 0;
	size_t i, n;

	/*
	 * Options may follow the operand (hwtrace index x.hwtrace -o x.db),
	 * as with query and import: operands are collected apart.
	 */
	while ((c = cli_getopt_ops(&index_cmd, argc, argv, &arg, &ops)) !=
	    -1) {
		switch (c) {
		case 'D':
			if (strcmp(arg, "fast") != 0 &&
			    strcmp(arg, "libipt") != 0)
				return (cli_usage_error(&index_cmd,
				    "unknown decoder '%s' (fast or libipt)",
				    arg));
			decoder = arg;
			break;
		case 'j':
			if (cli_parse_int(arg, 1, 1024, &jobs) < 0)
				return (cli_usage_error(&index_cmd,
				    "invalid number of jobs '%s'", arg));
			break;
		case 'o':
			out = arg;
			break;
		case 'q':
			quiet = 1;
			break;
		default:
			return (cli_usage_error(&index_cmd, "unknown option"));
		}
	}
	if (ops.n != 1)
		return (cli_usage_error(&index_cmd, ops.n == 0 ?
		    "missing FILE" : "too many operands"));
	file = ops.v[0];
	if (out == NULL) {
		size_t len = strlen(file);

		dbname = malloc(len + 4);
		if (dbname == NULL) {
			cli_warnx("index", "out of memory");
			return (1);
		}
		memcpy(dbname, file, len + 1);
		if (len > 8 && strcmp(file + len - 8, ".hwtrace") == 0)
			strcpy(dbname + len - 8, ".db");
		else
			strcat(dbname, ".db");
		out = dbname;
	}
	memset(&o, 0, sizeof(o));
	memset(&prog, 0, sizeof(prog));
	o.jobs = (int)jobs;
	o.decoder = decoder;
	o.log.fn = log_stderr;
	o.log.level = HWTR_LOG_WARN;
	o.cancel = &index_cancel;
	if (!quiet && isatty(STDERR_FILENO)) {
		prog.what = "index";
		prog.rate = 1;
		clock_gettime(CLOCK_MONOTONIC, &prog.start);
		o.progress = cli_progress_show;
		o.progress_arg = &prog;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (hwtr_ix_new(&ix, &o) < 0) {
		cli_warnx("index", "out of memory");
		free(dbname);
		return (1);
	}
	rc = hwtr_ix_run(ix, file, out);
	if (prog.shown)
		fprintf(stderr, "\r%78s\r", "");
	n = hwtr_ix_nproblems(ix);
	for (i = 0; i < n; i++)
		cli_warnx("index", "%s", hwtr_ix_problem(ix, i));
	if (rc < 0) {
		if (rc == -HWTR_E_INTR)
			cli_warnx("index", "interrupted; '%s' not written",
			    out);
		else
			cli_warnx("index", "%s", hwtr_ix_errmsg(ix));
		hwtr_ix_free(ix);
		free(dbname);
		return (1);
	}
	st = hwtr_ix_stats(ix);
	/* Before the summary, which stays the last line. */
	if (!quiet && st->fallback_segments > 0)
		cli_warnx("index", "fast decoder: %llu segments (%llu bytes) "
		    "decoded by libipt: %llu unsupported packets, %llu decode "
		    "errors; last: %s",
		    (unsigned long long)st->fallback_segments,
		    (unsigned long long)st->fallback_bytes,
		    (unsigned long long)st->fallback_unsupported,
		    (unsigned long long)st->fallback_errors,
		    st->fallback_why != NULL ? st->fallback_why : "?");
	if (!quiet || st->errors > 0)
		cli_warnx("index", "'%s': %llu streams, %llu blocks, %llu "
		    "instructions, %llu decode errors (%llu of %llu bytes not "
		    "decoded), %llu segments; CPU s: decode %.2f, write %.2f; "
		    "index build %.2f s",
		    out,
		    (unsigned long long)st->streams,
		    (unsigned long long)st->blocks,
		    (unsigned long long)st->insns,
		    (unsigned long long)st->errors,
		    (unsigned long long)st->undecoded_bytes,
		    (unsigned long long)st->trace_bytes,
		    (unsigned long long)st->segments,
		    (double)st->decode_cpu_ns / 1e9,
		    (double)st->write_cpu_ns / 1e9,
		    (double)st->index_ns / 1e9);
	hwtr_ix_free(ix);
	free(dbname);
	return (0);
}
