/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * hwtrace query DB|ARCHIVE VERB [options]: parse, ask libhwtrace
 * (hwtr_q_*), write the answer as it comes (hwtr_q_stream: a long answer
 * in blocks, a short one at once).  When the reader goes away (| head) the
 * command ends quietly as other filters do, by SIGPIPE.  Each verb has its own
 * option table (cli/cmd_query_verbs.c).
 */

#include <sys/ioctl.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hwtrace.h"
#include "cli.h"
#include "cmd_query.h"

static char *
slurp(const char *path)
{
	FILE *fp;
	char *buf = NULL;
	size_t len = 0, cap = 0, n;

	if ((fp = fopen(path, "r")) == NULL)
		return (NULL);
	for (;;) {
		if (len + 4096 + 1 > cap) {
			char *nb;

			cap = cap ? cap * 2 : 8192;
			if ((nb = realloc(buf, cap)) == NULL) {
				free(buf);
				fclose(fp);
				errno = ENOMEM;
				return (NULL);
			}
			buf = nb;
		}
		n = fread(buf + len, 1, 4096, fp);
		len += n;
		if (n < 4096)
			break;
	}
	if (ferror(fp)) {
		free(buf);
		fclose(fp);
		errno = EIO;
		return (NULL);
	}
	fclose(fp);
	buf[len] = '\0';
	return (buf);
}

static void
q_log(void *arg, enum hwtr_log_level level, const char *msg)
{
	(void)arg;
	(void)level;
	cli_warnx("query", "%s", msg);
}

static int
term_width(void)
{
	struct winsize ws;

	if (!isatty(STDOUT_FILENO))
		return (0);
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return (ws.ws_col);
	return (80);
}

struct out_sink {
	int	err;		/* errno of a failed write */
};

/*
 * SIGINT and SIGTERM while an archive is being indexed on first use: the
 * indexer stops within a second and removes its temporary database and
 * directory (the default action would leave them behind).
 */
static volatile int index_cancel;

static void
on_cancel(int sig)
{
	(void)sig;
	index_cancel = 1;
}

/*
 * Write a block of the answer to standard output.  A reader that has gone
 * away ends the command as it ends cat(1) or git-log(1): by SIGPIPE, with
 * no message; where SIGPIPE was ignored by whoever started us, the same is
 * done by hand (git's check_pipe()).
 */
static int
out_write(void *arg, const char *buf, size_t len)
{
	struct out_sink *o = arg;
	ssize_t w;

	while (len > 0) {
		w = write(STDOUT_FILENO, buf, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EPIPE) {
			signal(SIGPIPE, SIG_DFL);
			raise(SIGPIPE);
			o->err = EPIPE;
			return (-1);
		}
		if (w <= 0) {
			o->err = w < 0 ? errno : EIO;
			return (-1);
		}
		buf += w;
		len -= (size_t)w;
	}
	return (0);
}

/* The options together (hwtr_q_req_check()), and the format. */
static int
check_opts(struct qline *ql)
{
	char errbuf[HWTR_ERRMSG_MAX];

	if (hwtr_q_req_check(&ql->req, errbuf, sizeof(errbuf)) != 0)
		return (cli_usage_error(&ql->vcmd, "%s", errbuf));
	if (ql->fmtname != NULL &&
	    hwtr_q_format_parse(ql->fmtname, &ql->fmt) < 0)
		return (cli_usage_error(&ql->vcmd, "--format: '%s' is not "
		    "table, csv, tsv or json", ql->fmtname));
	return (0);
}

/*
 * The verb's operands (PATTERN, QUERY).  0, a usage error's exit status,
 * or -1 when --file cannot be read (said here; *sqlbufp holds what was
 * read).
 */
static int
take_operands(struct qline *ql, const struct cli_operands *ops,
    char **sqlbufp)
{
	struct hwtr_q_req *req = &ql->req;
	const struct cli_cmd *vcmd = &ql->vcmd;
	enum hwtr_q_verb verb = ql->v->verb;
	int i = 0;

	if (verb == HWTR_Q_FUNC || verb == HWTR_Q_ANNOTATE) {
		if (ops->n < 1)
			return (cli_usage_error(vcmd, "no %s given",
			    ql->v->operand));
		req->pattern = ops->v[i++];
	} else if (verb == HWTR_Q_SQL) {
		if ((ops->n > 0) == (ql->file != NULL))
			return (cli_usage_error(vcmd, "give a QUERY or --file, "
			    "not %s", ql->file != NULL ? "both" : "neither"));
		if (ql->file == NULL)
			req->sql = ops->v[i++];
		else if ((*sqlbufp = slurp(ql->file)) == NULL) {
			cli_warnx("query", "cannot read '%s': %s", ql->file,
			    strerror(errno));
			return (-1);
		} else
			req->sql = *sqlbufp;
	}
	if (i < ops->n)
		return (cli_usage_error(vcmd, "unexpected argument '%s'",
		    ops->v[i]));
	return (0);
}

/* Open @path (indexing an archive, which ^C cancels) and answer. */
static int
run_query(const char *path, const struct qline *ql)
{
	enum hwtr_q_verb verb = ql->v->verb;
	struct hwtr_q_opts qo;
	struct sigaction sa, oldint, oldterm;
	struct cli_progress prog;
	struct out_sink sink = { 0 };
	struct hwtr_q *q = NULL;
	char errbuf[HWTR_ERRMSG_MAX];
	int orc, ex = 1;

	memset(&qo, 0, sizeof(qo));
	qo.cache = ql->dbopt;
	qo.log.fn = q_log;
	qo.log.level = HWTR_LOG_WARN;
	qo.cancel = &index_cancel;
	/*
	 * last and bt at the end are answered from the end of the trace
	 * (hwtrace-query(1): lazy verbs); one that turns out to need the
	 * whole history indexes it while it runs.
	 */
	qo.lazy = verb == HWTR_Q_LAST || (verb == HWTR_Q_BT &&
	    ql->req.at < 0);
	memset(&prog, 0, sizeof(prog));
	if (isatty(STDERR_FILENO)) {
		prog.what = "query: indexing";
		clock_gettime(CLOCK_MONOTONIC, &prog.start);
		qo.progress = cli_progress_show;
		qo.progress_arg = &prog;
	}
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_cancel;
	sigaction(SIGINT, &sa, &oldint);
	sigaction(SIGTERM, &sa, &oldterm);
	orc = hwtr_q_open(&q, path, &qo, errbuf, sizeof(errbuf));
	/*
	 * Interrupted, it only says so and exits 1: a second signal (timeout(1)
	 * sends one to the command and one to its group) changes nothing.
	 */
	if ((!qo.lazy || orc < 0) && !index_cancel) {
		sigaction(SIGINT, &oldint, NULL);
		sigaction(SIGTERM, &oldterm, NULL);
	}
	if (prog.shown)
		fprintf(stderr, "\r%78s\r", "");
	prog.shown = 0;
	if (orc < 0) {
		cli_warnx("query", "%s", index_cancel ? "interrupted while "
		    "indexing; nothing written" : errbuf);
		goto out;
	}
	orc = hwtr_q_stream(q, &ql->req, ql->fmt, ql->fmt == HWTR_Q_FMT_TABLE ?
	    term_width() : 0, out_write, &sink);
	if (qo.lazy && !index_cancel) {
		sigaction(SIGINT, &oldint, NULL);
		sigaction(SIGTERM, &oldterm, NULL);
	}
	if (prog.shown)
		fprintf(stderr, "\r%78s\r", "");
	if (orc < 0) {
		if (sink.err == EPIPE)
			;	/* the reader went away: nothing to say */
		else if (index_cancel)
			cli_warnx("query", "interrupted while indexing; "
			    "nothing written");
		else if (sink.err != 0)
			cli_warnx("query", "cannot write the answer: %s",
			    strerror(sink.err));
		else
			cli_warnx("query", "%s", hwtr_q_errmsg(q));
		goto out;
	}
	/* A table ends with it; CSV, TSV and JSON readers get it here. */
	if (ql->fmt != HWTR_Q_FMT_TABLE && hwtr_q_lost(q) != NULL)
		cli_warnx("query", "%s", hwtr_q_lost(q));
	ex = 0;
out:
	hwtr_q_close(q);
	return (ex);
}

int
cmd_query(int argc, char **argv)
{
	struct qline ql;
	struct cli_operands ops = { { NULL }, 0 };
	const char *arg, *path, *tmo = NULL;
	char *usage = NULL, *sqlbuf = NULL, **verbv;
	const struct cli_cmd *top = query_top_cmd();
	int c, rc, vargc;

	memset(&ql, 0, sizeof(ql));
	ql.fmt = HWTR_Q_FMT_TABLE;
	while ((c = cli_getopt(top, argc, argv, &arg)) != -1) {
		switch (c) {
		case O_DB:
			ql.dbopt = arg;
			break;
		case O_FORMAT:
			ql.fmtname = arg;
			break;
		case O_TIMEOUT:
			/* Checked with the verb's; one after it wins. */
			tmo = arg;
			break;
		default:
			return (cli_usage_error(top, "unexpected option"));
		}
	}
	if (argc - optind < 2)
		return (cli_usage_error(top, argc - optind == 0 ?
		    "no database or archive given" : "no verb given"));
	path = argv[optind];
	if ((ql.v = query_verb(argv[optind + 1])) == NULL)
		return (cli_usage_error(top, "unknown verb '%s'",
		    argv[optind + 1]));
	if ((usage = query_verb_usage(ql.v)) == NULL) {
		cli_warnx("query", "out of memory");
		return (1);
	}
	ql.vcmd.verb = "query";
	ql.vcmd.usage = usage;
	ql.vcmd.summary = ql.v->summary;
	ql.vcmd.opts = ql.v->opts;
	ql.vcmd.sub = ql.v->name;
	ql.vcmd.arg = "DB";
	hwtr_q_req_init(&ql.req, ql.v->verb);
	if (tmo != NULL && (rc = query_verb_opt(&ql, O_TIMEOUT, tmo)) != 0) {
		free(usage);
		return (rc);
	}

	/* The verb's own options, after "DB VERB". */
	vargc = argc - optind - 1;
	verbv = argv + optind + 1;
	optind = 0;
	/* Options may follow the verb's operand: collect operands apart. */
	rc = 0;
	while (rc == 0 && (c = cli_getopt_ops(&ql.vcmd, vargc, verbv, &arg,
	    &ops)) != -1)
		rc = query_verb_opt(&ql, c, arg);
	if (rc == 0 && ops.n > 2)
		rc = cli_usage_error(&ql.vcmd, "unexpected argument '%s'",
		    ops.v[2]);
	if (rc == 0 && (rc = check_opts(&ql)) == 0 &&
	    (rc = take_operands(&ql, &ops, &sqlbuf)) == 0)
		rc = run_query(path, &ql);
	else if (rc < 0)
		rc = 1;
	free(sqlbuf);
	free(usage);
	return (rc);
}
