/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * hwtrace verify: decompress every member of an archive and check every
 * checksum and cross-reference (hwtr_ar_verify()).  A truncated archive
 * fails, saying where it was cut, even when what it holds is sound: a
 * capture that did not finish is not one to trust blindly.
 */

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "hwtrace.h"
#include "cli.h"

static const struct cli_opt verify_opts[] = {
	{ NULL, 0, NULL, NULL }
};

static const struct cli_cmd verify_cmd = {
	.verb = "verify",
	.usage = "FILE",
	.summary = "Check every checksum and cross-reference of a hwtrace "
	    "archive.",
	.opts = verify_opts,
};

static const char *
armsg(const struct hwtr_ar *ar, int rc)
{
	const char *m;

	m = ar != NULL ? hwtr_ar_errmsg(ar) : NULL;
	return (m != NULL && *m != '\0' ? m : hwtr_errstr(rc));
}

int
cmd_verify(int argc, char **argv)
{
	const struct hwtr_ar_status *st;
	struct hwtr_ar *ar = NULL;
	const char *path, *arg;
	size_t i, n, nchunks = 0;
	uint64_t bytes = 0;
	int rc;

	/* No options but --help, which cli_getopt() handles. */
	if (cli_getopt(&verify_cmd, argc, argv, &arg) != -1)
		return (cli_usage_error(&verify_cmd, "unhandled option '%s'",
		    argv[optind - 1]));
	if (argc - optind != 1)
		return (cli_usage_error(&verify_cmd, argc - optind == 0 ?
		    "no archive given" : "more than one archive given"));
	path = argv[optind];

	rc = hwtr_ar_open(&ar, path, NULL);
	if (rc < 0 || ar == NULL) {
		cli_warnx("verify", "cannot open '%s': %s", path,
		    armsg(ar, rc));
		hwtr_ar_close(ar);
		return (1);
	}
	rc = hwtr_ar_verify(ar);
	if (rc < 0) {
		cli_warnx("verify", "'%s': %s", path, armsg(ar, rc));
		hwtr_ar_close(ar);
		return (1);
	}
	st = hwtr_ar_status(ar);
	if (!st->complete) {
		cli_warnx("verify", "'%s': truncated at byte %" PRIu64 " of %"
		    PRIu64 ": %s", path, st->valid_end, st->file_size,
		    st->why != NULL ? st->why : "no final member");
		hwtr_ar_close(ar);
		return (1);
	}
	n = hwtr_ar_nstreams(ar);
	for (i = 0; i < n; i++) {
		size_t j, k = hwtr_ar_nchunks(ar, i);
		const struct hwtr_chunk_info *ci;

		nchunks += k;
		for (j = 0; j < k; j++)
			if ((ci = hwtr_ar_chunk(ar, i, j)) != NULL)
				bytes += ci->len;
	}
	printf("ok: '%s': format %" PRIu32 ".%" PRIu32 ", %zu members, %zu "
	    "streams, %zu chunks, %" PRIu64 " trace bytes, %zu images, %zu "
	    "sideband records\n", path, st->version_major, st->version_minor,
	    hwtr_ar_nmembers(ar), n, nchunks, bytes, hwtr_ar_nimages(ar),
	    hwtr_ar_nsideband(ar));
	hwtr_ar_close(ar);
	if (fflush(stdout) != 0) {
		cli_warnx("verify", "cannot write the output");
		return (1);
	}
	return (0);
}
