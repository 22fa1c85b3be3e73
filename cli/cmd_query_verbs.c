/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * hwtrace query's verbs: each one's option table, from which its --help
 * SYNOPSIS is generated so that help, getopt and hwtrace-query(1) say the
 * same thing, its summary, and the parsing of its options into the
 * request.
 */

#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_query.h"

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
	.verb = "query",
	.usage = "[--db PATH] [--format FMT] DB|ARCHIVE VERB [options]",
	.summary = "Answer questions over an execution history.  VERB is one "
	    "of: summary, threads, last, calls, tree, func, coverage, hot, "
	    "branches, timeline, insns, sql, export, bt, annotate; 'hwtrace "
	    "query DB VERB --help' describes one.",
	.opts = o_plain,
};

/* "DB|ARCHIVE last [--db PATH] [--format FMT] [--insns] [-n N] ..." */
char *
query_verb_usage(const struct qverb *v)
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

const struct cli_cmd *
query_top_cmd(void)
{
	return (&top_cmd);
}

const struct qverb *
query_verb(const char *name)
{
	const struct qverb *v;

	for (v = qverbs; v->name != NULL; v++)
		if (strcmp(v->name, name) == 0)
			return (v);
	return (NULL);
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

int
query_verb_opt(struct qline *ql, int c, const char *arg)
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

