/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The command-line front end: the verb table and option parsing helpers.
 *
 * Each verb lives in cli/cmd_<verb>.c, keeps one table of its options
 * (struct cli_opt) that drives getopt_long, --help and the man page's
 * SYNOPSIS, fills a config structure, calls the library and maps the result
 * to an exit status: 0 success, 1 error, 2 usage error.
 */

#ifndef HWTR_CLI_H
#define HWTR_CLI_H

#include <stdint.h>
#include <stdio.h>
#include <time.h>

#define EXIT_USAGE	2

struct cli_opt {
	const char	*lname;		/* long name, without "--" */
	int		sname;		/* short letter, or a value > 255 */
	const char	*arg;		/* argument name, NULL for a flag */
	const char	*help;
};

struct cli_verb {
	const char	*name;
	int		(*fn)(int argc, char **argv);
	const char	*summary;
};

/*
 * One verb's interface: @usage is the SYNOPSIS line(s) after "hwtrace
 * <verb>", @opts the option table ended by an entry with lname NULL.
 */
struct cli_cmd {
	const char	*verb;
	const char	*usage;
	const char	*summary;
	const struct cli_opt *opts;
	/*
	 * The verb of a verb ("tree" of query): a usage error's hint then
	 * names its help, "hwtrace VERB ARG SUB --help", @arg the operand
	 * before it as the synopsis names it ("DB").  NULL: none.
	 */
	const char	*sub;
	const char	*arg;
};

/*
 * Parse the next option of @argv with @cmd's table.  Returns the option's
 * sname, -1 at the end of options (optind then points at the first
 * operand), or exits with status 2 after printing a usage message for an
 * unknown option or a missing argument.  --help prints the help and exits 0.
 */
int cli_getopt(const struct cli_cmd *cmd, int argc, char **argv,
    const char **optargp);

/*
 * hwtrace verify --decode (cmd_verify.c), and capture --check-portable:
 * decode archive @path with nothing from this machine, list on @out what
 * another would miss; 0 when it decodes fully elsewhere, else 1 with a
 * message naming @verb.
 */
int cli_portable(const char *verb, const char *path, FILE *out);

/*
 * The operands of a verb whose options may come before, between or after
 * them: the first CLI_MAXOPS + 1 kept in @v (so that one too many can be
 * named), all counted in @n.
 */
#define CLI_MAXOPS	2
struct cli_operands {
	const char	*v[CLI_MAXOPS + 1];
	int		n;
};

/*
 * cli_getopt() that collects operands into @ops instead of stopping at
 * the first: returns the next option's sname, or -1 when @argv is done.
 * After "--" every word is an operand ("query DB func -- -main").
 */
int cli_getopt_ops(const struct cli_cmd *cmd, int argc, char **argv,
    const char **optargp, struct cli_operands *ops);

/*
 * Indexing's progress on a terminal ("hwtrace WHAT: 1.0 of 2.0 MiB
 * decoded[, R MiB/s], N s left"), a hwtr_ix/hwtr_q progress callback
 * whose argument is a struct cli_progress with @start set.
 */
struct cli_progress {
	const char	*what;
	int		rate;		/* show MiB/s */
	struct timespec	start;
	int		shown;		/* a line is on the terminal */
};
void cli_progress_show(void *arg, uint64_t done, uint64_t total);

/*
 * Print @cmd's help (synopsis, summary, options) to @fp, within
 * CLI_WRAP_WIDTH columns where words allow: options in a column of
 * CLI_HELP_LEFT, their descriptions beside it.
 */
void cli_help(const struct cli_cmd *cmd, FILE *fp);

#define CLI_WRAP_WIDTH	79
#define CLI_HELP_LEFT	28

/*
 * Write @text and a newline to @fp, the cursor at column @col: words
 * wrapped within CLI_WRAP_WIDTH columns, a line they continue starting
 * with @indent spaces; a newline in @text starts a line of its own, its
 * leading blanks kept.  With @groups, a bracketed group is one word (a
 * synopsis breaks between options, not inside one).  A word longer than
 * the line is written whole.
 */
void cli_wrap(FILE *fp, const char *text, int col, int indent, int groups);

/* Print "hwtrace VERB: msg" and a usage hint to stderr; returns 2. */
int cli_usage_error(const struct cli_cmd *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/*
 * Strict number parsing: the whole string must be a number within range
 * (unsigned 64-bit numbers: hwtr_parse_u64()).  Returns 0 or -1.  cli_parse_size accepts K, M, G suffixes (powers of 2).
 */
int cli_parse_int(const char *s, long min, long max, long *vp);
int cli_parse_size(const char *s, uint64_t *vp);

/* "hwtrace VERB: " prefix messages on stderr (err(3) style, no exit). */
void cli_warnx(const char *verb, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/*
 * Write @res as @fmt on stdout; 0, or -1 said (out of memory, a write
 * error; nothing when the reader went away).
 */
int cli_print_res(const char *verb, const struct hwtr_q_res *res,
    enum hwtr_q_format fmt);

/*
 * A verb's answer: @rc < 0 says @errmsg (the library's message for the
 * failed call), else @res is written as @fmt.  The exit status, 0 or 1.
 */
int cli_answer(const char *verb, int rc, const char *errmsg,
    const struct hwtr_q_res *res, enum hwtr_q_format fmt);

/* The verbs. */
int cmd_info(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_capture(int argc, char **argv);
int cmd_index(int argc, char **argv);
int cmd_query(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_fleet(int argc, char **argv);

/* "KEY=VALUE" (cut at the first '=', in place); -1 without a key. */
struct hwtr_pg_label;
int cli_parse_label(char *s, struct hwtr_pg_label *l);
int cmd_diff(int argc, char **argv);
int cmd_report(int argc, char **argv);

#endif /* !HWTR_CLI_H */
