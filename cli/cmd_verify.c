/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * hwtrace verify: decompress every member of an archive and check every
 * checksum and cross-reference (hwtr_ar_verify()).  A truncated archive
 * fails, saying where it was cut, even when what it holds is sound: a
 * capture that did not finish is not one to trust blindly.  --decode then
 * decodes it with nothing from this machine and lists what a machine
 * without this one's files would miss (hwtr_ix_portable()).
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hwtrace.h"
#include "hwtr_common.h"
#include "cli.h"

static const struct cli_opt verify_opts[] = {
	{ "decode", 256, NULL, "also decode it with nothing from this "
	    "machine and list what another would miss" },
	{ NULL, 0, NULL, NULL }
};

static const struct cli_cmd verify_cmd = {
	.verb = "verify",
	.usage = "[--decode] FILE",
	.summary = "Check every checksum and cross-reference of a hwtrace "
	    "archive.",
	.opts = verify_opts,
};

/* The indexer's messages: its problems are listed with the findings. */
static void
portable_log(void *arg, enum hwtr_log_level level, const char *msg)
{
	(void)arg;
	(void)level;
	(void)msg;
}

int
cli_portable(const char *verb, const char *path, FILE *out)
{
	struct hwtr_ix_opts o;
	struct hwtr_ix *ix = NULL;
	struct hwtr_ix_miss *m = NULL;
	const struct hwtr_ix_stats *st;
	const char *tmp = getenv("TMPDIR");
	char dir[4096], db[4200];
	size_t i, n = 0, ndiff = 0;
	int ex = 1;

	snprintf(dir, sizeof(dir), "%s/hwtrace-verify.XXXXXX",
	    tmp != NULL && *tmp != '\0' ? tmp : "/tmp");
	if (mkdtemp(dir) == NULL) {
		cli_warnx(verb, "cannot make a directory '%s': %s", dir,
		    strerror(errno));
		return (1);
	}
	snprintf(db, sizeof(db), "%s/decode.db", dir);
	memset(&o, 0, sizeof(o));
	o.log.fn = portable_log;
	o.log.level = HWTR_LOG_WARN;
	o.archive_only = 1;
	if (hwtr_ix_new(&ix, &o) < 0) {
		cli_warnx(verb, "out of memory");
		goto out;
	}
	if (hwtr_ix_portable(ix, path, db, &m, &n) < 0) {
		cli_warnx(verb, "'%s': cannot decode it: %s", path,
		    hwtr_ix_errmsg(ix));
		goto out;
	}
	for (i = 0; i < n; i++) {
		if (strcmp(m[i].kind, "note") == 0)
			fprintf(out, "note: %s\n", m[i].detail);
		else
			fprintf(out, "%s: %s '%s': %s\n", m[i].differs ? "missing" :
			    "note", m[i].kind, m[i].path, m[i].detail);
		ndiff += m[i].differs != 0;
	}
	st = hwtr_ix_stats(ix);
	if (ndiff > 0) {
		cli_warnx(verb, "'%s' does not decode fully elsewhere: %zu "
		    "thing%s missing", path, ndiff, ndiff == 1 ? "" : "s");
		goto out;
	}
	fprintf(out, "ok: '%s' decodes with nothing from this machine: %llu "
	    "streams, %llu instructions, %llu decode errors\n", path,
	    (unsigned long long)st->streams, (unsigned long long)st->insns,
	    (unsigned long long)st->errors);
	ex = 0;
out:
	hwtr_ix_miss_free(m, n);
	hwtr_ix_free(ix);
	unlink(db);
	rmdir(dir);
	if (fflush(out) != 0) {
		cli_warnx(verb, "cannot write the output");
		ex = 1;
	}
	return (ex);
}

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
	int c, rc, decode = 0;

	while ((c = cli_getopt(&verify_cmd, argc, argv, &arg)) != -1) {
		switch (c) {
		case 256:	/* --decode */
			decode = 1;
			break;
		default:
			return (cli_usage_error(&verify_cmd, "unhandled option "
			    "'%s'", argv[optind - 1]));
		}
	}
	if (argc - optind != 1)
		return (cli_usage_error(&verify_cmd, argc - optind == 0 ?
		    "no archive given" : "more than one archive given"));
	path = argv[optind];

	rc = hwtr_ar_open(&ar, path, NULL);
	if (rc < 0 || ar == NULL) {
		char m[HWTR_ERRMSG_MAX];

		cli_warnx("verify", "%s", hwtr_open_failed(path, armsg(ar, rc),
		    m, sizeof(m)));
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
	return (decode ? cli_portable("verify", path, stdout) : 0);
}
