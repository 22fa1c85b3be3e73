/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * hwtrace fleet URL VERB [options]: questions across the runs that
 * hwtrace export loaded into PostgreSQL (hwtr_pg_fleet), answered in the
 * formats of hwtrace query (hwtr_q_res_format).  As in cmd_query.c, each
 * verb has its own option table, from which its --help is made.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hwtrace.h"
#include "cli.h"

enum { O_FORMAT = 0x100, O_LABEL, O_LCOV, O_PASS, O_FAIL };

#define OPT_FMT	{ "format", O_FORMAT, "FMT", "table, csv, tsv or json (default: table)" }
#define OPT_LBL	{ "label", O_LABEL, "KEY=VALUE", "only runs with this label (repeatable)" }
#define OPT_END	{ NULL, 0, NULL, NULL }

static const struct cli_opt o_top[] = { OPT_FMT, OPT_END };
static const struct cli_opt o_runs[] = { OPT_FMT, OPT_LBL, OPT_END };
static const struct cli_opt o_cov[] = { OPT_FMT, OPT_LBL,
	{ "lcov", O_LCOV, "FILE", "also write an lcov tracefile, summed over the runs" },
	OPT_END };
static const struct cli_opt o_diff[] = {
	{ "fail", O_FAIL, "KEY=VALUE", "the label of the failing runs" },
	OPT_FMT,
	{ "pass", O_PASS, "KEY=VALUE", "the label of the passing runs" },
	OPT_END };

struct fverb {
	const char		*name;
	enum hwtr_pg_verb	verb;
	const char		*usage;
	const struct cli_opt	*opts;
	const char		*summary;
};

static const struct fverb fverbs[] = {
	{ "runs", HWTR_PG_RUNS, "URL runs [--format FMT] [--label KEY=VALUE]...",
	  o_runs, "The runs exported: archive SHA-256, command, exit, host, "
	  "capture time, labels." },
	{ "func", HWTR_PG_FUNC, "URL func NAME [--format FMT] "
	  "[--label KEY=VALUE]...", o_runs,
	  "Which runs called the functions matching NAME (a name as func "
	  "matches it, or a glob), and how often; an inlined function by the "
	  "entries into its inlined code." },
	{ "coverage", HWTR_PG_COVERAGE, "URL coverage [--format FMT] "
	  "[--label KEY=VALUE]... [--lcov FILE]", o_cov,
	  "Functions executed, summed over the runs: in how many runs, calls "
	  "and instructions." },
	{ "diff", HWTR_PG_DIFF, "URL diff --fail KEY=VALUE [--format FMT] "
	  "--pass KEY=VALUE", o_diff,
	  "Functions and branches that failing runs executed and no passing "
	  "run did." },
	{ NULL, 0, NULL, NULL, NULL }
};

static const struct cli_cmd top_cmd = {
	.verb = "fleet",
	.usage = "[--format FMT] URL VERB [options]",
	.summary = "Ask questions across the runs exported to PostgreSQL by "
	    "'hwtrace export'.  VERB is one of: runs, func, coverage, diff; "
	    "'hwtrace fleet URL VERB --help' describes one.",
	.opts = o_top,
};

int
cmd_fleet(int argc, char **argv)
{
	const struct fverb *v;
	struct cli_cmd vcmd;
	struct hwtr_pg_req req;
	struct hwtr_pg_label *labels = NULL;
	struct hwtr_q_res *res = NULL;
	struct hwtr_pg *pg = NULL;
	enum hwtr_q_format fmt = HWTR_Q_FMT_TABLE;
	struct cli_operands ops = { { NULL }, 0 };
	const char *arg, *url, *fmtname = NULL;
	char errbuf[HWTR_ERRMSG_MAX];
	size_t nlabels = 0;
	int c, rc, ex = 1, vargc;
	char **vargv;

	while ((c = cli_getopt(&top_cmd, argc, argv, &arg)) != -1) {
		if (c != O_FORMAT)
			return (cli_usage_error(&top_cmd, "unexpected option"));
		fmtname = arg;
	}
	if (argc - optind < 2)
		return (cli_usage_error(&top_cmd, argc - optind == 0 ?
		    "no URL given" : "no verb given"));
	url = argv[optind];
	for (v = fverbs; v->name != NULL; v++)
		if (strcmp(v->name, argv[optind + 1]) == 0)
			break;
	if (v->name == NULL)
		return (cli_usage_error(&top_cmd, "unknown verb '%s'",
		    argv[optind + 1]));
	memset(&vcmd, 0, sizeof(vcmd));
	vcmd.verb = "fleet";
	vcmd.usage = v->usage;
	vcmd.summary = v->summary;
	vcmd.opts = v->opts;
	vcmd.sub = v->name;
	vcmd.arg = "URL";
	memset(&req, 0, sizeof(req));
	req.verb = v->verb;
	vargc = argc - optind - 1;
	vargv = argv + optind + 1;
	if ((labels = calloc((size_t)vargc + 1, sizeof(*labels))) == NULL) {
		cli_warnx("fleet", "out of memory");
		return (1);
	}
	optind = 0;
	while ((c = cli_getopt_ops(&vcmd, vargc, vargv, &arg, &ops)) != -1) {
		switch (c) {
		case O_FORMAT:
			fmtname = arg;
			break;
		case O_LABEL:
		case O_PASS:
		case O_FAIL:
			if (cli_parse_label((char *)arg, c == O_LABEL ?
			    &labels[nlabels] : c == O_PASS ? &req.pass :
			    &req.fail) < 0) {
				rc = cli_usage_error(&vcmd, "--%s: '%s' is not "
				    "KEY=VALUE", c == O_LABEL ? "label" : c ==
				    O_PASS ? "pass" : "fail", arg);
				goto usage;
			}
			if (c == O_LABEL)
				nlabels++;
			break;
		case O_LCOV:
			req.lcov = arg;
			break;
		default:
			rc = cli_usage_error(&vcmd, "unexpected option");
			goto usage;
		}
	}
	if (ops.n > 2) {
		rc = cli_usage_error(&vcmd, "unexpected argument '%s'",
		    ops.v[2]);
		goto usage;
	}
	if (fmtname != NULL && hwtr_q_format_parse(fmtname, &fmt) < 0) {
		rc = cli_usage_error(&vcmd, "--format: '%s' is not table, csv, "
		    "tsv or json", fmtname);
		goto usage;
	}
	if (v->verb == HWTR_PG_FUNC) {
		if (ops.n < 1) {
			rc = cli_usage_error(&vcmd, "no NAME given");
			goto usage;
		}
		req.pattern = ops.v[0];
	}
	if (ops.n > (v->verb == HWTR_PG_FUNC)) {
		rc = cli_usage_error(&vcmd, "unexpected argument '%s'",
		    ops.v[ops.n - 1]);
		goto usage;
	}
	if (v->verb == HWTR_PG_DIFF && (req.pass.key == NULL ||
	    req.fail.key == NULL)) {
		rc = cli_usage_error(&vcmd, "no --%s given", req.pass.key ==
		    NULL ? "pass" : "fail");
		goto usage;
	}
	req.labels = labels;
	req.nlabels = nlabels;
	if (hwtr_pg_open(&pg, url, NULL, errbuf, sizeof(errbuf)) < 0) {
		cli_warnx("fleet", "%s", errbuf);
		goto out;
	}
	rc = hwtr_pg_fleet(pg, &req, &res);
	ex = cli_answer("fleet", rc, hwtr_pg_errmsg(pg), res, fmt);
out:
	hwtr_q_res_free(res);
	hwtr_pg_close(pg);
	free(labels);
	return (ex);
usage:
	free(labels);
	return (rc);
}
