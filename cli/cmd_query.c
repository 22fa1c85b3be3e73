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
 * option table; the SYNOPSIS of its --help is generated from that table so
 * that help, getopt and hwtrace-query(1) say the same thing.
 */

#include <sys/ioctl.h>

#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hwtrace.h"
#include "cli.h"

enum {
	O_DB = 0x100, O_FORMAT, O_THREAD, O_INSNS, O_DEPTH, O_IMAGE, O_LCOV,
	O_BY, O_FROM, O_TO, O_KIND, O_COUNT, O_FILE, O_PERFETTO, O_MIN_DUR,
	O_MAX_DEPTH, O_AT, O_FOLDED, O_WEIGHT, O_TIMEOUT, O_MAXLEN
};

#define OPT_DB	{ "db", O_DB, "PATH", "database to use for an archive (default: ARCHIVE.db)" }
#define OPT_FMT	{ "format", O_FORMAT, "FMT", "table, csv, tsv or json (default: table)" }
#define OPT_THR	{ "thread", O_THREAD, "T", "only thread T (see 'threads')" }
#define OPT_FROM	{ "from", O_FROM, "N", "only from instruction N of the thread (--thread, default the first), or time N with ns, us, ms or s" }
#define OPT_TO	{ "to", O_TO, "N", "only up to instruction or time N (included)" }
#define OPT_TMO	{ "timeout", O_TIMEOUT, "SECONDS", "stop after SECONDS of CPU time (default 60 and 1 per MiB of database; 0: no limit)" }
#define OPT_END	{ NULL, 0, NULL, NULL }

static const struct cli_opt o_plain[] = { OPT_DB, OPT_FMT, OPT_TMO, OPT_END };
static const struct cli_opt o_last[] = { OPT_DB, OPT_FMT,
	{ "insns", O_INSNS, NULL, "instructions with disassembly, not blocks" },
	{ "count", 'n', "N", "how many per thread (default: 10)" },
	OPT_THR, OPT_TMO, OPT_END };
static const struct cli_opt o_calls[] = { OPT_DB,
	{ "depth", O_DEPTH, "D", "only calls nested at most D deep (0: roots)" },
	OPT_FMT, OPT_FROM,
	{ "count", 'n', "N", "only the first N calls (default: all)" },
	OPT_THR, OPT_TMO, OPT_TO, OPT_END };
static const struct cli_opt o_tree[] = { OPT_DB,
	{ "depth", O_DEPTH, "D", "only calls nested at most D deep (0: roots)" },
	OPT_FMT, OPT_FROM, OPT_THR, OPT_TMO, OPT_TO, OPT_END };
static const struct cli_opt o_func[] = { OPT_DB, OPT_FMT, OPT_THR, OPT_TMO, OPT_END };
static const struct cli_opt o_cov[] = { OPT_DB,
	{ "depth", O_DEPTH, "D", "only code run at most D calls deep, not in deeper callees (0: the roots' own)" },
	OPT_FMT, OPT_FROM,
	{ "image", O_IMAGE, "I", "only image I (id, path or file name)" },
	{ "lcov", O_LCOV, "FILE", "also write an lcov tracefile (for genhtml)" },
	OPT_THR, OPT_TMO, OPT_TO, OPT_END };
static const struct cli_opt o_hot[] = {
	{ "by", O_BY, "WHAT", "function (or func), inline, line, image, block or edge (default: function)" },
	OPT_DB,
	{ "depth", O_DEPTH, "D", "only code run at most D calls deep, not in deeper callees (0: the roots' own)" },
	OPT_FMT, OPT_FROM,
	{ "count", 'n', "N", "how many (default: 20)" },
	OPT_THR, OPT_TMO, OPT_TO, OPT_END };
static const struct cli_opt o_branches[] = { OPT_DB, OPT_FMT,
	{ "from", O_FROM, "SYM", "only branches from function SYM (a glob)" },
	{ "kind", O_KIND, "K", "only branches of kind K (see hwtrace-db(5))" },
	OPT_THR, OPT_TMO,
	{ "to", O_TO, "SYM", "only branches to function SYM (a glob)" },
	OPT_END };
static const struct cli_opt o_timeline[] = { OPT_DB,
	{ "depth", O_DEPTH, "D", "only calls nested at most D deep (0: roots)" },
	OPT_FMT,
	{ "from", O_FROM, "X", "from time X after the trace start (with ns, us, ms or s), or from instruction X of the thread (--thread, default the first)" },
	OPT_THR, OPT_TMO,
	{ "to", O_TO, "X", "up to time or instruction X (included), as --from" },
	OPT_END };
static const struct cli_opt o_insns[] = {
	OPT_DB, OPT_FMT,
	{ "from", O_FROM, "N", "from instruction N (default: the last ones)" },
	{ "count", 'n', "N", "how many instructions (default: 20)" },
	{ "thread", O_THREAD, "T", "thread T (default: the first)" },
	OPT_TMO, OPT_END };
static const struct cli_opt o_bt[] = {
	{ "at", O_AT, "INSN", "the stack at instruction INSN of the thread (default: its end)" },
	OPT_DB, OPT_FMT,
	{ "thread", O_THREAD, "T", "only thread T (with --at: default the first)" },
	OPT_TMO, OPT_END };
static const struct cli_opt o_annotate[] = {
	{ "by", O_BY, "WHAT", "insn or line (default: insn)" },
	OPT_DB, OPT_FMT, OPT_FROM, OPT_THR, OPT_TMO, OPT_TO, OPT_END };
static const struct cli_opt o_sql[] = { OPT_DB,
	{ "file", O_FILE, "F", "read the statements from file F" },
	OPT_FMT,
	{ "max-length", O_MAXLEN, "SIZE", "longest string or blob a statement may make (K, M, G; default 64M)" },
	{ "timeout", O_TIMEOUT, "SECONDS", "stop after SECONDS of CPU time (default 10; 0: no limit)" },
	OPT_END };
static const struct cli_opt o_export[] = { OPT_DB,
	{ "depth", O_DEPTH, "D", "--folded: only frames nested at most D deep" },
	{ "folded", O_FOLDED, "OUT", "write folded stacks (flame graphs) to OUT" },
	OPT_FMT,
	{ "from", O_FROM, "X", "only from X: instruction X of the thread (--thread, default the first), or time X with ns, us, ms or s" },
	{ "max-depth", O_MAX_DEPTH, "D", "--perfetto: only calls nested at most D deep (0: roots)" },
	{ "min-dur", O_MIN_DUR, "T", "--perfetto: only calls that last at least T" },
	{ "perfetto", O_PERFETTO, "OUT", "write the call trees as Chrome/Perfetto trace JSON to OUT" },
	OPT_THR, OPT_TMO,
	{ "to", O_TO, "X", "only up to X, as --from" },
	{ "weight", O_WEIGHT, "W", "--folded: weigh frames by insns (default) or time" },
	OPT_END };

struct qverb {
	const char		*name;
	enum hwtr_q_verb	verb;
	const char		*operand;	/* NULL: none */
	const struct cli_opt	*opts;
	const char		*summary;
	const char		*required;	/* an option that must be given */
};

static const struct qverb qverbs[] = {
	{ "summary", HWTR_Q_SUMMARY, NULL, o_plain,
	  "Streams, processes, threads, images, instructions, blocks, time span, decode errors and lost data.", NULL },
	{ "threads", HWTR_Q_THREADS, NULL, o_plain,
	  "One line per thread of the trace.", NULL },
	{ "last", HWTR_Q_LAST, NULL, o_last,
	  "The last blocks (or instructions) each thread ran: what ran just before the end or the crash.", NULL },
	{ "calls", HWTR_Q_CALLS, NULL, o_calls,
	  "Every function invocation, in order, with caller, duration and instruction counts.", NULL },
	{ "tree", HWTR_Q_TREE, NULL, o_tree,
	  "The call tree of each thread, invocations of one call path merged.", NULL },
	{ "func", HWTR_Q_FUNC, "PATTERN", o_func,
	  "Every invocation of the functions matching PATTERN (a name in any "
	  "scope, as gdb matches it, or a glob).", NULL },
	{ "coverage", HWTR_Q_COVERAGE, NULL, o_cov,
	  "Functions and source lines executed.", NULL },
	{ "hot", HWTR_Q_HOT, NULL, o_hot,
	  "Where the instructions went: by function, block or branch edge.", NULL },
	{ "branches", HWTR_Q_BRANCHES, NULL, o_branches,
	  "Branch edges with their kinds and counts.", NULL },
	{ "timeline", HWTR_Q_TIMELINE, NULL, o_timeline,
	  "What ran when: calls and events by time.", NULL },
	{ "insns", HWTR_Q_INSNS, NULL, o_insns,
	  "Instruction history with disassembly, like gdb's record instruction-history.", NULL },
	{ "sql", HWTR_Q_SQL, "[QUERY]", o_sql,
	  "Any read-only SQL over the database (hwtrace-db(5)); one of QUERY and --file.", NULL },
	{ "bt", HWTR_Q_BT, NULL, o_bt,
	  "The call stack of each thread at its end (the crash) or at an instruction, innermost frame first.", NULL },
	{ "annotate", HWTR_Q_ANNOTATE, "FUNC", o_annotate,
	  "Execution counts per instruction or source line of the functions matching FUNC, with the source text.", NULL },
	{ "export", HWTR_Q_EXPORT, NULL, o_export,
	  "Export the call trees as a Chrome/Perfetto trace (ui.perfetto.dev, chrome://tracing), or as folded stacks for flame graphs.",
	  NULL },
	{ NULL, 0, NULL, NULL, NULL, NULL }
};

static const struct cli_cmd top_cmd = {
	"query", "[--db PATH] [--format FMT] DB|ARCHIVE VERB [options]",
	"Answer questions over an execution history.  VERB is one of: summary, "
	"threads, last, calls, tree,\nfunc, coverage, hot, branches, timeline, "
	"insns, sql, export, bt, annotate;\n'hwtrace query DB VERB --help' "
	"describes one.",
	o_plain
};

/* "DB|ARCHIVE last [--db PATH] [--format FMT] [--insns] [-n N] ..." */
static char *
verb_usage(const struct qverb *v)
{
	const struct cli_opt *o;
	size_t len = 0, cap = 512;
	char *s;

	if ((s = malloc(cap)) == NULL)
		return (NULL);
	len = (size_t)snprintf(s, cap, "DB|ARCHIVE %s", v->name);
	if (v->operand != NULL)
		len += (size_t)snprintf(s + len, cap - len, " %s", v->operand);
	for (o = v->opts; o->lname != NULL && len < cap; o++) {
		if (v->required != NULL && strcmp(o->lname, v->required) == 0)
			len += (size_t)snprintf(s + len, cap - len, " --%s %s",
			    o->lname, o->arg);
		else if (o->sname > 0 && o->sname < 256)
			len += (size_t)snprintf(s + len, cap - len, " [-%c%s%s]",
			    o->sname, o->arg ? " " : "", o->arg ? o->arg : "");
		else
			len += (size_t)snprintf(s + len, cap - len,
			    " [--%s%s%s]", o->lname, o->arg ? " " : "",
			    o->arg ? o->arg : "");
	}
	return (s);
}

static int
parse_id(const struct cli_cmd *cmd, const char *opt, const char *s,
    int64_t *vp)
{
	long v;

	if (cli_parse_int(s, 0, INT32_MAX, &v) != 0)
		return (cli_usage_error(cmd, "%s: '%s' is not a number", opt,
		    s));
	*vp = v;
	return (0);
}

/* An instruction number: 0 up to INT64_MAX. */
static int
parse_pos(const struct cli_cmd *cmd, const char *opt, const char *s,
    int64_t *vp)
{
	unsigned long long v;
	char *end;

	errno = 0;
	if (*s >= '0' && *s <= '9') {
		v = strtoull(s, &end, 10);
		if (errno == 0 && *end == '\0' && v <= INT64_MAX) {
			*vp = (int64_t)v;
			return (0);
		}
	}
	return (cli_usage_error(cmd, "%s: '%s' is not an instruction number",
	    opt, s));
}

/* A time: a number of ns, or with a unit ns, us, ms, s. */
static int
parse_time(const struct cli_cmd *cmd, const char *opt, const char *s,
    int64_t *vp)
{
	static const struct { const char *u; double m; } units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
		{ "", 1 } };
	char *end;
	double v;
	size_t i;

	errno = 0;
	v = strtod(s, &end);
	if (end != s && errno == 0 && v >= 0)
		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (strcmp(end, units[i].u) == 0 &&
			    v * units[i].m < 9e18) {
				*vp = (int64_t)(v * units[i].m + 0.5);
				return (0);
			}
	return (cli_usage_error(cmd, "%s: '%s' is not a time (a number with "
	    "ns, us, ms or s)", opt, s));
}

/*
 * A bound of a range: an instruction number, or a time when it ends in a
 * unit (ns, us, ms, s).
 */
static int
parse_range(const struct cli_cmd *cmd, const char *opt, const char *s,
    int64_t *posp, int64_t *timep)
{
	size_t n = strlen(s);

	if (n > 0 && s[n - 1] == 's')
		return (parse_time(cmd, opt, s, timep));
	return (parse_pos(cmd, opt, s, posp));
}

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

/* The command line of one query, after "DB VERB". */
struct qline {
	const struct qverb *v;
	struct cli_cmd	vcmd;
	struct hwtr_q_req req;
	const char	*dbopt, *fmtname, *file;
	enum hwtr_q_format fmt;
};

/*
 * The options that only fill a field of the request: a string, a flag, or
 * a number parsed as an id, an instruction number or a time.
 */
enum qkind { QK_STR, QK_FLAG, QK_ID, QK_TIME };

static const struct qfield {
	int		c;
	const char	*word;		/* in messages */
	enum qkind	kind;
	size_t		off;		/* in struct hwtr_q_req */
} qfields[] = {
	{ O_INSNS, "--insns", QK_FLAG, offsetof(struct hwtr_q_req, insns) },
	{ O_DEPTH, "--depth", QK_ID, offsetof(struct hwtr_q_req, depth) },
	{ O_IMAGE, "--image", QK_STR, offsetof(struct hwtr_q_req, image) },
	{ O_LCOV, "--lcov", QK_STR, offsetof(struct hwtr_q_req, lcov) },
	{ O_BY, "--by", QK_STR, offsetof(struct hwtr_q_req, by) },
	{ O_WEIGHT, "--weight", QK_STR, offsetof(struct hwtr_q_req, weight) },
	{ O_KIND, "--kind", QK_STR, offsetof(struct hwtr_q_req, kind) },
	{ O_COUNT, "--count", QK_ID, offsetof(struct hwtr_q_req, count) },
	{ O_PERFETTO, "--perfetto", QK_STR,
	    offsetof(struct hwtr_q_req, perfetto) },
	{ O_MIN_DUR, "--min-dur", QK_TIME,
	    offsetof(struct hwtr_q_req, min_dur) },
	{ O_MAX_DEPTH, "--max-depth", QK_ID,
	    offsetof(struct hwtr_q_req, max_depth) },
	{ O_FOLDED, "--folded", QK_STR, offsetof(struct hwtr_q_req, folded) },
	{ 0, NULL, QK_STR, 0 }
};

/* Option @c of the table into its field; 1 when @c is not there. */
static int
verb_opt_field(struct qline *ql, int c, const char *arg, int *rcp)
{
	const struct qfield *f;
	char *p;

	for (f = qfields; f->word != NULL && f->c != c; f++)
		;
	if (f->word == NULL)
		return (1);
	p = (char *)&ql->req + f->off;
	*rcp = 0;
	switch (f->kind) {
	case QK_STR:
		memcpy(p, &arg, sizeof(arg));
		break;
	case QK_FLAG:
		*(int *)(void *)p = 1;
		break;
	case QK_ID:
		*rcp = parse_id(&ql->vcmd, f->word, arg, (int64_t *)(void *)p);
		break;
	default:
		assert(f->kind == QK_TIME);
		*rcp = parse_time(&ql->vcmd, f->word, arg,
		    (int64_t *)(void *)p);
		break;
	}
	return (0);
}

/* --at, --from and --to: positions, instruction numbers or times. */
static int
verb_opt_pos(struct qline *ql, int c, const char *arg)
{
	struct hwtr_q_req *req = &ql->req;
	enum hwtr_q_verb verb = ql->v->verb;

	if (c == O_AT)
		return (parse_pos(&ql->vcmd, "--at", arg, &req->at));
	if (c == O_FROM) {
		if (verb == HWTR_Q_BRANCHES) {
			req->from_sym = arg;
			return (0);
		}
		if (verb == HWTR_Q_INSNS)
			return (parse_id(&ql->vcmd, "--from", arg,
			    &req->from));
		return (parse_range(&ql->vcmd, "--from", arg, &req->from,
		    &req->t_from));
	}
	if (verb == HWTR_Q_BRANCHES) {
		req->to_sym = arg;
		return (0);
	}
	return (parse_range(&ql->vcmd, "--to", arg, &req->to, &req->t_to));
}

/* One option of the verb; 0 or a usage error's exit status. */
static int
verb_opt(struct qline *ql, int c, const char *arg)
{
	struct hwtr_q_req *req = &ql->req;
	const struct cli_cmd *vcmd = &ql->vcmd;
	uint64_t len;
	long sec;
	int rc;

	if (verb_opt_field(ql, c, arg, &rc) == 0)
		return (rc);
	switch (c) {
	case O_DB:
		ql->dbopt = arg;
		break;
	case O_FORMAT:
		ql->fmtname = arg;
		break;
	case O_FILE:
		ql->file = arg;
		break;
	case O_THREAD:
		/* A thread's number, or tid:N (the thread whose tid is N). */
		if (strncmp(arg, "tid:", 4) == 0)
			return (parse_id(vcmd, "--thread", arg + 4,
			    &req->tid));
		return (parse_id(vcmd, "--thread", arg, &req->thread));
	case 'n':
		/* insns keeps its count apart from --from. */
		return (parse_id(vcmd, "-n", arg, ql->v->verb == HWTR_Q_INSNS ?
		    &req->count : &req->n));
	case O_AT:
	case O_FROM:
	case O_TO:
		return (verb_opt_pos(ql, c, arg));
	case O_TIMEOUT:
		if (cli_parse_int(arg, 0, 1000000, &sec) < 0)
			return (cli_usage_error(vcmd, "--timeout: '%s' is "
			    "not a number of seconds (0 to 1000000)", arg));
		req->sql_timeout_ms = (int64_t)sec * 1000;
		break;
	case O_MAXLEN:
		if (cli_parse_size(arg, &len) < 0 || len == 0 ||
		    len > 0x7fffffff)
			return (cli_usage_error(vcmd, "--max-length: '%s' "
			    "is not a size from 1 to 2G-1", arg));
		req->sql_max_length = (int64_t)len;
		break;
	default:
		return (cli_usage_error(vcmd, "unexpected option"));
	}
	return (0);
}

/* The options together (hwtr_q_req_check()), and the format. */
static int
check_opts(struct qline *ql)
{
	char errbuf[256];

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
	char errbuf[1024];
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
	if (!qo.lazy || orc < 0) {
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
	if (qo.lazy) {
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
	const char *arg, *path;
	char *usage = NULL, *sqlbuf = NULL, **verbv;
	int c, rc, vargc;

	memset(&ql, 0, sizeof(ql));
	ql.fmt = HWTR_Q_FMT_TABLE;
	while ((c = cli_getopt(&top_cmd, argc, argv, &arg)) != -1) {
		switch (c) {
		case O_DB:
			ql.dbopt = arg;
			break;
		case O_FORMAT:
			ql.fmtname = arg;
			break;
		default:
			return (cli_usage_error(&top_cmd, "unexpected option"));
		}
	}
	if (argc - optind < 2)
		return (cli_usage_error(&top_cmd, argc - optind == 0 ?
		    "no database or archive given" : "no verb given"));
	path = argv[optind];
	for (ql.v = qverbs; ql.v->name != NULL; ql.v++)
		if (strcmp(ql.v->name, argv[optind + 1]) == 0)
			break;
	if (ql.v->name == NULL)
		return (cli_usage_error(&top_cmd, "unknown verb '%s'",
		    argv[optind + 1]));
	if ((usage = verb_usage(ql.v)) == NULL) {
		cli_warnx("query", "out of memory");
		return (1);
	}
	ql.vcmd.verb = "query";
	ql.vcmd.usage = usage;
	ql.vcmd.summary = ql.v->summary;
	ql.vcmd.opts = ql.v->opts;
	hwtr_q_req_init(&ql.req, ql.v->verb);

	/* The verb's own options, after "DB VERB". */
	vargc = argc - optind - 1;
	verbv = argv + optind + 1;
	optind = 0;
	/* Options may follow the verb's operand: collect operands apart. */
	rc = 0;
	while (rc == 0 && (c = cli_getopt_ops(&ql.vcmd, vargc, verbv, &arg,
	    &ops)) != -1)
		rc = verb_opt(&ql, c, arg);
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
