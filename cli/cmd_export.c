/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * hwtrace export --postgres URL DB|ARCHIVE...: load execution histories
 * into one PostgreSQL database shared by many runs (hwtr_pg_export_*).
 * Every operand goes in one transaction: what is printed is printed after
 * the commit, so a line on standard output means a run is there.
 */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hwtrace.h"
#include "cli.h"

enum { O_LABEL = 0x100, O_POSTGRES };

static const struct cli_opt export_opts[] = {
	{ "label", O_LABEL, "KEY=VALUE", "label the runs (repeatable)" },
	{ "postgres", O_POSTGRES, "URL", "libpq connection string or URL of the database" },
	{ NULL, 0, NULL, NULL }
};

static const struct cli_cmd export_cmd = {
	.verb = "export",
	.usage = "--postgres URL [--label KEY=VALUE]... DB|ARCHIVE...",
	.summary = "Load execution histories into a PostgreSQL database "
	    "shared by many runs (an archive is indexed first); 'hwtrace "
	    "fleet' asks questions across them.",
	.opts = export_opts,
};

static void
ex_log(void *arg, enum hwtr_log_level level, const char *msg)
{
	(void)arg;
	(void)level;
	cli_warnx("export", "%s", msg);
}

/* "key=value" into @l (pointing into @s); -1 when there is no key. */
int
cli_parse_label(char *s, struct hwtr_pg_label *l)
{
	char *eq = strchr(s, '=');

	if (eq == NULL || eq == s)
		return (-1);
	*eq = '\0';
	l->key = s;
	l->value = eq + 1;
	return (0);
}

int
cmd_export(int argc, char **argv)
{
	struct hwtr_pg_export_opts eo;
	struct hwtr_pg_label *labels;
	struct hwtr_pg_run *runs = NULL;
	struct hwtr_pg *pg = NULL;
	struct hwtr_log log = { ex_log, NULL, HWTR_LOG_WARN };
	const char *arg, *url = NULL;
	char errbuf[HWTR_ERRMSG_MAX];
	size_t nlabels = 0;
	int c, i, n, ex = 1;

	if ((labels = calloc((size_t)argc + 1, sizeof(*labels))) == NULL) {
		cli_warnx("export", "out of memory");
		return (1);
	}
	while ((c = cli_getopt(&export_cmd, argc, argv, &arg)) != -1) {
		switch (c) {
		case O_LABEL:
			if (cli_parse_label((char *)arg, &labels[nlabels]) < 0) {
				free(labels);
				return (cli_usage_error(&export_cmd, "--label: "
				    "'%s' is not KEY=VALUE", arg));
			}
			nlabels++;
			break;
		case O_POSTGRES:
			url = arg;
			break;
		default:
			free(labels);
			return (cli_usage_error(&export_cmd, "unexpected "
			    "option"));
		}
	}
	if (url == NULL || optind >= argc) {
		free(labels);
		return (cli_usage_error(&export_cmd, url == NULL ? "no "
		    "--postgres URL given" : "no database or archive given"));
	}
	n = argc - optind;
	if ((runs = calloc((size_t)n, sizeof(*runs))) == NULL) {
		cli_warnx("export", "out of memory");
		goto out;
	}
	memset(&eo, 0, sizeof(eo));
	eo.labels = labels;
	eo.nlabels = nlabels;
	eo.qopts.log = log;
	if (hwtr_pg_open(&pg, url, &log, errbuf, sizeof(errbuf)) < 0) {
		cli_warnx("export", "%s", errbuf);
		goto out;
	}
	if (hwtr_pg_export_begin(pg) < 0) {
		cli_warnx("export", "'%s': %s", hwtr_pg_name(pg),
		    hwtr_pg_errmsg(pg));
		goto out;
	}
	for (i = 0; i < n; i++)
		if (hwtr_pg_export_add(pg, argv[optind + i], &eo,
		    &runs[i]) < 0) {
			cli_warnx("export", "cannot export '%s': %s; nothing "
			    "was exported", argv[optind + i],
			    hwtr_pg_errmsg(pg));
			goto out;
		}
	if (hwtr_pg_export_commit(pg) < 0) {
		cli_warnx("export", "%s; nothing was exported",
		    hwtr_pg_errmsg(pg));
		goto out;
	}
	for (i = 0; i < n; i++) {
		if (runs[i].existed)
			printf("run %" PRId64 ": '%s' was exported before "
			    "(sha256 %.16s...): nothing changed\n", runs[i].id,
			    argv[optind + i], runs[i].sha256);
		else
			printf("run %" PRId64 ": '%s' exported (sha256 "
			    "%.16s...): %" PRIu64 " calls, %" PRIu64
			    " branches, %" PRIu64 " blocks (%" PRIu64 " new), %"
			    PRIu64 " images loaded\n", runs[i].id,
			    argv[optind + i], runs[i].sha256, runs[i].calls,
			    runs[i].branches, runs[i].blocks,
			    runs[i].new_blocks, runs[i].new_images);
	}
	ex = fflush(stdout) == 0 ? 0 : 1;
out:
	hwtr_pg_close(pg);
	free(runs);
	free(labels);
	return (ex);
}
