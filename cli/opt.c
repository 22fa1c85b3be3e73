/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Option parsing shared by the verbs.  One table per verb drives
 * getopt_long, --help and the usage messages, so they cannot drift apart.
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hwtrace.h"
#include "hwtr_common.h"
#include "cli.h"

#define CLI_MAXOPTS	64
#define CLI_HELP	0x1000

/*
 * The length of the word of @s (up to a space or the end); with
 * @groups, a bracketed group ("[--to N]", "[--cpu F/M[/S]]") is one word.
 */
static size_t
wrap_word(const char *s, int groups)
{
	size_t n = 0;
	int depth = 0;

	for (; s[n] != '\0' && s[n] != '\n'; n++) {
		if (s[n] == ' ' && depth == 0)
			break;
		if (groups && s[n] == '[')
			depth++;
		else if (groups && s[n] == ']' && depth > 0)
			depth--;
	}
	return (n);
}

void
cli_wrap(FILE *fp, const char *text, int col, int indent, int groups)
{
	const char *p = text;
	size_t w;
	int at = col, first = 1, gap = 1;

	while (*p != '\0') {
		if (*p == '\n') {
			/* The text's own line: as it is (its leading blanks). */
			fputc('\n', fp);
			p++;
			at = 0;
			first = 1;
			while (*p == ' ') {
				fputc(' ', fp);
				p++;
				at++;
			}
			continue;
		}
		if (*p == ' ') {
			/* Two spaces after a sentence stay two. */
			gap = p[1] == ' ' && p > text && p[-1] == '.' ? 2 : 1;
			while (*p == ' ')
				p++;
			continue;
		}
		w = wrap_word(p, groups);
		if (!first && at + gap + (int)w > CLI_WRAP_WIDTH) {
			fprintf(fp, "\n%*s", indent, "");
			at = indent;
		} else if (!first) {
			fprintf(fp, "%*s", gap, "");
			at += gap;
		}
		fwrite(p, 1, w, fp);
		at += (int)w;
		p += w;
		first = 0;
		gap = 1;
	}
	fputc('\n', fp);
}

/* "usage: hwtrace VERB USAGE", continued under USAGE's start. */
static void
usage_line(const struct cli_cmd *cmd, FILE *fp)
{
	int col;

	col = fprintf(fp, "usage: hwtrace %s ", cmd->verb);
	cli_wrap(fp, cmd->usage, col, col, 1);
}

void
cli_help(const struct cli_cmd *cmd, FILE *fp)
{
	const struct cli_opt *o;
	char left[64];
	int col;

	usage_line(cmd, fp);
	if (cmd->summary != NULL) {
		fputc('\n', fp);
		cli_wrap(fp, cmd->summary, 0, 0, 0);
	}
	fprintf(fp, "\noptions:\n");
	for (o = cmd->opts; o != NULL && o->lname != NULL; o++) {
		if (o->sname > 0 && o->sname < 256)
			snprintf(left, sizeof(left), "-%c, --%s%s%s", o->sname,
			    o->lname, o->arg ? " " : "", o->arg ? o->arg : "");
		else
			snprintf(left, sizeof(left), "    --%s%s%s", o->lname,
			    o->arg ? " " : "", o->arg ? o->arg : "");
		col = fprintf(fp, "  %-*s ", CLI_HELP_LEFT, left);
		cli_wrap(fp, o->help, col, CLI_HELP_LEFT + 3, 0);
	}
	fprintf(fp, "  %-*s %s\n", CLI_HELP_LEFT, "-h, --help",
	    "show this help and exit");
	fprintf(fp, "\nSee hwtrace-%s(1).\n", cmd->verb);
}

void
cli_warnx(const char *verb, const char *fmt, ...)
{
	va_list ap;
	char *msg, *safe;
	int n;

	if (verb != NULL)
		fprintf(stderr, "hwtrace %s: ", verb);
	else
		fprintf(stderr, "hwtrace: ");
	va_start(ap, fmt);
	n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (n < 0) {
		fputs("out of memory\n", stderr);
		return;
	}
	/* Messages quote names from archives: no terminal escapes. */
	safe = hwtr_esc_dup(msg, HWTR_ESC_KEEP_NL);
	fputs(safe != NULL ? safe : msg, stderr);
	fputc('\n', stderr);
	free(safe);
	free(msg);
}

int
cli_usage_error(const struct cli_cmd *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "hwtrace %s: ", cmd->verb);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	usage_line(cmd, stderr);
	if (cmd->sub != NULL)
		fprintf(stderr, "Try 'hwtrace %s %s %s --help' for more "
		    "information.\n", cmd->verb, cmd->arg, cmd->sub);
	else
		fprintf(stderr, "Try 'hwtrace %s --help' for more "
		    "information.\n", cmd->verb);
	return (EXIT_USAGE);
}

int
cli_getopt(const struct cli_cmd *cmd, int argc, char **argv,
    const char **optargp)
{
	struct option lopts[CLI_MAXOPTS + 2];
	char sopts[3 * CLI_MAXOPTS + 4];
	const struct cli_opt *o;
	size_t n = 0, s = 0;
	int c, prev;

	sopts[s++] = '+';	/* stop at the first operand */
	sopts[s++] = ':';	/* report missing arguments as ':' */
	for (o = cmd->opts; o != NULL && o->lname != NULL && n < CLI_MAXOPTS;
	    o++, n++) {
		lopts[n].name = o->lname;
		lopts[n].has_arg = o->arg ? required_argument : no_argument;
		lopts[n].flag = NULL;
		lopts[n].val = o->sname;
		if (o->sname > 0 && o->sname < 256) {
			sopts[s++] = (char)o->sname;
			if (o->arg)
				sopts[s++] = ':';
		}
	}
	lopts[n++] = (struct option){ "help", no_argument, NULL, 'h' };
	lopts[n] = (struct option){ NULL, 0, NULL, 0 };
	sopts[s++] = 'h';
	sopts[s] = '\0';

	opterr = 0;
	prev = optind;
	c = getopt_long(argc, argv, sopts, lopts, NULL);
	if (optargp != NULL)
		*optargp = optarg;
	switch (c) {
	case -1:
		return (-1);
	case 'h':
		cli_help(cmd, stdout);
		exit(0);
	case ':':
		exit(cli_usage_error(cmd, "option '%s' needs an argument",
		    argv[prev < argc ? prev : argc - 1]));
	case '?':
		if (optopt != 0 && optopt < 256)
			exit(cli_usage_error(cmd, "unknown option '-%c'",
			    optopt));
		exit(cli_usage_error(cmd, "unknown option '%s'",
		    argv[optind - 1]));
	default:
		return (c);
	}
}

void
cli_progress_show(void *arg, uint64_t done, uint64_t total)
{
	struct cli_progress *p = arg;
	struct timespec now;
	double t, rate;

	clock_gettime(CLOCK_MONOTONIC, &now);
	t = (double)(now.tv_sec - p->start.tv_sec) +
	    (double)(now.tv_nsec - p->start.tv_nsec) / 1e9;
	rate = t > 0 ? (double)done / t : 0;
	fprintf(stderr, "\rhwtrace %s: %.1f of %.1f MiB decoded", p->what,
	    (double)done / 1048576.0, (double)total / 1048576.0);
	if (p->rate)
		fprintf(stderr, ", %.1f MiB/s", rate / 1048576.0);
	if (rate > 0 && total > done)
		fprintf(stderr, ", %.0f s left   ",
		    (double)(total - done) / rate);
	else
		fprintf(stderr, "            ");
	p->shown = 1;
}

static void
operand(struct cli_operands *ops, const char *w)
{
	if (ops->n < CLI_MAXOPS + 1)
		ops->v[ops->n] = w;
	ops->n++;
}

int
cli_getopt_ops(const struct cli_cmd *cmd, int argc, char **argv,
    const char **optargp, struct cli_operands *ops)
{
	int c, at;

	for (;;) {
		/* getopt starts again at 1 when optind is 0. */
		at = optind == 0 ? 1 : optind;
		if ((c = cli_getopt(cmd, argc, argv, optargp)) != -1)
			return (c);
		if (optind >= argc)
			return (-1);
		if (optind == at + 1 && strcmp(argv[at], "--") == 0) {
			/* getopt stepped over "--": the rest are operands. */
			while (optind < argc)
				operand(ops, argv[optind++]);
			return (-1);
		}
		operand(ops, argv[optind++]);
	}
}

int
cli_parse_int(const char *s, long min, long max, long *vp)
{
	return (hwtr_parse_long(s, min, max, vp) == 0 ? 0 : -1);
}

int
cli_parse_size(const char *s, uint64_t *vp)
{
	unsigned long long v;
	unsigned shift = 0;
	char *end;

	if (s == NULL || *s == '\0' || *s == '-' || *s == '+')
		return (-1);
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || end == s)
		return (-1);
	switch (*end) {
	case '\0':
		break;
	case 'k': case 'K':
		shift = 10;
		end++;
		break;
	case 'm': case 'M':
		shift = 20;
		end++;
		break;
	case 'g': case 'G':
		shift = 30;
		end++;
		break;
	default:
		return (-1);
	}
	if (*end == 'i' && shift != 0)
		end++;
	if ((*end == 'B' || *end == 'b') && shift != 0)
		end++;
	if (*end != '\0')
		return (-1);
	if (v > (UINT64_MAX >> shift))
		return (-1);
	*vp = (uint64_t)v << shift;
	return (0);
}

int
cli_print_res(const char *verb, const struct hwtr_q_res *res,
    enum hwtr_q_format fmt)
{
	char *buf = NULL;
	size_t len = 0;
	int rc = 0;

	if (hwtr_q_res_format(res, fmt, 0, &buf, &len) < 0) {
		cli_warnx(verb, "out of memory");
		return (-1);
	}
	if (fwrite(buf, 1, len, stdout) != len || fflush(stdout) != 0) {
		if (errno != EPIPE)
			cli_warnx(verb, "cannot write the answer: %s",
			    strerror(errno));
		rc = -1;
	}
	free(buf);
	return (rc);
}

int
cli_answer(const char *verb, int rc, const char *errmsg,
    const struct hwtr_q_res *res, enum hwtr_q_format fmt)
{
	if (rc < 0) {
		cli_warnx(verb, "%s", errmsg);
		return (1);
	}
	return (cli_print_res(verb, res, fmt) < 0 ? 1 : 0);
}
