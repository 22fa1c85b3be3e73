/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * hwtrace diff A B: the regions where two runs of one program part ways,
 * aligned by call tree and loop iteration (hwtr_q_diff()).  A and B are
 * databases or archives (an archive is indexed on first use, as by query).
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hwtrace.h"
#include "cli.h"

enum { O_FORMAT = 0x100, O_FIRST, O_LIST, O_NEXT, O_TIMEOUT };

static const struct cli_opt diff_opts[] = {
	{ "first", O_FIRST, NULL, "the old answer: what one run ran and the other did not, and per thread the first block that differs" },
	{ "format", O_FORMAT, "FMT", "table, csv, tsv or json (default: table)" },
	{ "list", O_LIST, "N", "functions and lines named per side of a region (default: 6; 0: all)" },
	{ "next", 'n', "N", "with --first: blocks of each run shown from where they part (default: 4)" },
	{ "timeout", O_TIMEOUT, "SECONDS", "stop after SECONDS of CPU time (default 60 and 1 per MiB of database; 0: no limit)" },
	{ NULL, 0, NULL, NULL }
};

static const struct cli_cmd diff_cmd = {
	.verb = "diff",
	.usage = "[--first] [--format FMT] [--list N] [-n N] [--timeout SECONDS] A B",
	.summary = "Compare two executions: align them by call tree and "
	    "loop iterations and list the regions where they differ, each "
	    "with the branch that went different ways, where the runs meet "
	    "again and what ran on one side only, largest first; start-up "
	    "differences outside main are listed apart.  A and B are databases "
	    "or archives.",
	.opts = diff_opts,
};

static void
diff_log(void *arg, enum hwtr_log_level level, const char *msg)
{
	(void)arg;
	(void)level;
	cli_warnx("diff", "%s", msg);
}

int
cmd_diff(int argc, char **argv)
{
	struct hwtr_q_diff_opts dopts = { 0 };
	struct hwtr_q_opts qo;
	struct hwtr_q *qa = NULL, *qb = NULL;
	struct hwtr_q_res *res = NULL;
	enum hwtr_q_format fmt = HWTR_Q_FMT_TABLE;
	struct cli_operands ops = { { NULL }, 0 };
	const char *arg;
	char errbuf[HWTR_ERRMSG_MAX];
	long n;
	int c, rc, ex = 1;

	/* Options may come before, between or after A and B. */
	while ((c = cli_getopt_ops(&diff_cmd, argc, argv, &arg, &ops)) != -1) {
		switch (c) {
		case O_FIRST:
			dopts.first = 1;
			break;
		case O_FORMAT:
			if (hwtr_q_format_parse(arg, &fmt) < 0)
				return (cli_usage_error(&diff_cmd, "--format: "
				    "'%s' is not table, csv, tsv or json",
				    arg));
			break;
		case O_LIST:
			if (cli_parse_int(arg, 0, 1000000, &n) != 0)
				return (cli_usage_error(&diff_cmd, "--list: "
				    "'%s' is not a number from 0 to 1000000",
				    arg));
			dopts.list = n == 0 ? -1 : n;
			break;
		case 'n':
			if (cli_parse_int(arg, 1, 1000000, &n) != 0)
				return (cli_usage_error(&diff_cmd, "-n: '%s' "
				    "is not a number from 1 to 1000000", arg));
			dopts.next = n;
			break;
		case O_TIMEOUT:
			if (cli_parse_int(arg, 0, 1000000, &n) != 0)
				return (cli_usage_error(&diff_cmd, "--timeout: "
				    "'%s' is not a number of seconds (0 to "
				    "1000000)", arg));
			dopts.timeout_ms = n == 0 ? -1 : (int64_t)n * 1000;
			break;
		default:
			return (cli_usage_error(&diff_cmd,
			    "unexpected option"));
		}
	}
	if (dopts.next != 0 && !dopts.first)
		return (cli_usage_error(&diff_cmd, "-n: only with --first"));
	if (ops.n > 2)
		return (cli_usage_error(&diff_cmd, "unexpected argument '%s'",
		    ops.v[2]));
	if (ops.n != 2)
		return (cli_usage_error(&diff_cmd, "give two databases or "
		    "archives, A and B"));
	memset(&qo, 0, sizeof(qo));
	qo.log.fn = diff_log;
	qo.log.level = HWTR_LOG_WARN;
	if (hwtr_q_open(&qa, ops.v[0], &qo, errbuf, sizeof(errbuf)) < 0 ||
	    hwtr_q_open(&qb, ops.v[1], &qo, errbuf,
	    sizeof(errbuf)) < 0) {
		cli_warnx("diff", "%s", errbuf);
		goto out;
	}
	rc = hwtr_q_diff(qa, qb, &dopts, &res);
	ex = cli_answer("diff", rc, hwtr_q_errmsg(qa), res, fmt);
out:
	hwtr_q_res_free(res);
	hwtr_q_close(qa);
	hwtr_q_close(qb);
	return (ex);
}
