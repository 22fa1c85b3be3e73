/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * hwtrace query's verbs (cli/cmd_query_verbs.c): each verb's option table,
 * help text and SYNOPSIS, and its options parsed into a request, for the
 * command (cli/cmd_query.c).
 */

#ifndef HWTR_CMD_QUERY_H
#define HWTR_CMD_QUERY_H

#include "hwtrace.h"
#include "cli.h"

enum {
	O_DB = 0x100, O_FORMAT, O_THREAD, O_INSNS, O_DEPTH, O_IMAGE, O_LCOV,
	O_BY, O_FROM, O_TO, O_KIND, O_COUNT, O_FILE, O_PERFETTO, O_MIN_DUR,
	O_MAX_DEPTH, O_AT, O_FOLDED, O_WEIGHT, O_TIMEOUT, O_MAXLEN
};

struct qverb {
	const char		*name;
	enum hwtr_q_verb	verb;
	const char		*operand;	/* NULL: none */
	const struct cli_opt	*opts;
	const char		*summary;
	const char		*required;	/* an option that must be given */
};

/* The command line of one query, after "DB VERB". */
struct qline {
	const struct qverb *v;
	struct cli_cmd	vcmd;
	struct hwtr_q_req req;
	const char	*dbopt, *fmtname, *file;
	enum hwtr_q_format fmt;
};

/* One option of the verb into @ql; 0 or a usage error's exit status. */
int query_verb_opt(struct qline *ql, int c, const char *arg);

/* The command before its verb: "query [--db PATH] [--format FMT] ...". */
const struct cli_cmd *query_top_cmd(void);
/* The verb named @name, or NULL. */
const struct qverb *query_verb(const char *name);
/* The SYNOPSIS of @v after "hwtrace query" (malloc'ed), or NULL. */
char *query_verb_usage(const struct qverb *v);

#endif /* !HWTR_CMD_QUERY_H */
