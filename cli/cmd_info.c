/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * hwtrace info: describe an archive, for people (key: value lines) or for
 * programs (--json, one object whose keys hwtrace-info(1) documents); the
 * description is the library's (hwtr_q_info(), query/q_info.c).  A
 * truncated archive is described as far as it goes and says where it was
 * cut; only an archive the reader refuses is an error.
 */

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "hwtrace.h"
#include "hwtr_common.h"
#include "cli.h"

enum {
	OPT_JSON = 'j'
};

static const struct cli_opt info_opts[] = {
	{ "json", OPT_JSON, NULL, "print one JSON object instead of text" },
	{ NULL, 0, NULL, NULL }
};

static const struct cli_cmd info_cmd = {
	.verb = "info",
	.usage = "[-j] FILE",
	.summary = "Describe a hwtrace archive: capture identity, streams, "
	    "images, sideband, loss, exit status.",
	.opts = info_opts,
};

int
cmd_info(int argc, char **argv)
{
	struct hwtr_ar *ar = NULL;
	const char *arg, *path;
	char *buf;
	size_t len;
	int c, json = 0, rc;

	while ((c = cli_getopt(&info_cmd, argc, argv, &arg)) != -1) {
		switch (c) {
		case OPT_JSON:
			json = 1;
			break;
		default:
			return (cli_usage_error(&info_cmd,
			    "unhandled option '%s'", argv[optind - 1]));
		}
	}
	if (argc - optind != 1)
		return (cli_usage_error(&info_cmd, argc - optind == 0 ?
		    "no archive given" : "more than one archive given"));

	path = argv[optind];
	rc = hwtr_ar_open(&ar, path, NULL);
	if (rc < 0 || ar == NULL) {
		char m[HWTR_ERRMSG_MAX];

		cli_warnx("info", "%s", hwtr_open_failed(path, ar != NULL ?
		    hwtr_ar_errmsg(ar) : hwtr_errstr(rc), m, sizeof(m)));
		hwtr_ar_close(ar);
		return (1);
	}
	rc = hwtr_q_info(ar, path, json ? HWTR_Q_FMT_JSON : HWTR_Q_FMT_TABLE,
	    &buf, &len);
	hwtr_ar_close(ar);
	if (rc < 0) {
		cli_warnx("info", "cannot describe '%s': %s", path,
		    hwtr_errstr(rc));
		return (1);
	}
	fwrite(buf, 1, len, stdout);
	free(buf);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		cli_warnx("info", "cannot write the output");
		return (1);
	}
	return (0);
}
