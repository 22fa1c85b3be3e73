/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * bench_archive: the libhwtrace side of the archive benchmark
 * (bench_archive.sh), doing what the zstd command does on the other side.
 *
 *   bench_archive write [-c chunk] [-l level] [-t threads] IN OUT
 *	pack the raw PT file IN as one Intel PT stream into the archive OUT,
 *	@chunk bytes per hwtr_aw_chunk() call (default 8 MiB), as a capture
 *	writes its buffers;
 *   bench_archive read [-o OUT] ARCHIVE
 *	read every chunk of every stream back with hwtr_ar_read_chunk(), in
 *	order, and write the bytes to OUT (default stdout) as `zstd -d -c`
 *	does, so that the round trip can be compared with cmp(1).
 * Exit 0 ok, 1 error, 2 usage.
 */

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hwtrace.h"
#include "../lib/hwtr_test_tool.h"

static void
usage(void)
{
	fprintf(stderr, "usage: bench_archive write [-c chunk] [-l level] "
	    "[-t threads] in out\n"
	    "       bench_archive read [-o out] archive\n");
	exit(2);
}

static void
write_all(int fd, const void *buf, size_t len, const char *name)
{
	const uint8_t *p = buf;
	ssize_t n;

	while (len > 0) {
		n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err(1, "write %s", name);
		}
		p += n;
		len -= (size_t)n;
	}
}

/* Fill @buf from @fd as far as it goes; returns the bytes read. */
static size_t
read_full(int fd, void *buf, size_t len, const char *name)
{
	uint8_t *p = buf;
	size_t got = 0;
	ssize_t n;

	while (got < len) {
		n = read(fd, p + got, len - got);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err(1, "read %s", name);
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (got);
}

static int
cmd_write(int argc, char **argv)
{
	struct hwtr_capture_meta meta;
	struct hwtr_stream_desc sd;
	struct hwtr_capture_end end;
	struct hwtr_aw_opts opts;
	struct hwtr_aw *aw;
	const char *argv0[] = { "bench" };
	char errbuf[256];
	size_t chunk = 8u << 20, n;
	uint32_t id;
	void *buf;
	int c, fd, rc;

	memset(&opts, 0, sizeof(opts));
	while ((c = getopt(argc, argv, "c:l:t:")) != -1) {
		switch (c) {
		case 'c':
			chunk = (size_t)tool_number("bench_archive", optarg,
			    "chunk size", SIZE_MAX);
			break;
		case 'l':
			opts.level = (int)tool_number("bench_archive", optarg,
			    "level", INT_MAX);
			break;
		case 't':
			opts.threads = (int)tool_number("bench_archive", optarg,
			    "thread count", INT_MAX);
			break;
		default:
			usage();
		}
	}
	if (argc - optind != 2 || chunk == 0)
		usage();
	fd = open(argv[optind], O_RDONLY);
	if (fd < 0)
		err(1, "%s", argv[optind]);
	buf = malloc(chunk);
	if (buf == NULL)
		err(1, "malloc");

	tool_intel_meta(&meta, "bench", "import-raw", 0x8c);
	meta.argv = argv0;
	meta.argc = 1;
	rc = hwtr_aw_open(&aw, argv[optind + 1], &meta, &opts, errbuf,
	    sizeof(errbuf));
	if (rc < 0)
		errx(1, "%s: %s", argv[optind + 1], errbuf);
	tool_pt_stream(&sd, 1, 1, 300, 36, HWTR_PT_OPT_TSC | HWTR_PT_OPT_MTC |
	    HWTR_PT_OPT_CYC | HWTR_PT_OPT_BRANCH | HWTR_PT_OPT_USER);
	rc = hwtr_aw_add_stream(aw, &sd, &id);
	if (rc < 0)
		errx(1, "add stream: %s", hwtr_aw_errmsg(aw));
	while ((n = read_full(fd, buf, chunk, argv[optind])) > 0) {
		rc = hwtr_aw_chunk(aw, id, HWTR_AW_APPEND, buf, n);
		if (rc < 0)
			errx(1, "chunk: %s", hwtr_aw_errmsg(aw));
	}
	memset(&end, 0, sizeof(end));
	end.exit_kind = HWTR_EXIT_CODE;
	hwtr_aw_set_end(aw, &end);
	rc = hwtr_aw_close(aw, errbuf, sizeof(errbuf));
	if (rc < 0)
		errx(1, "%s: %s", argv[optind + 1], errbuf);
	free(buf);
	close(fd);
	return (0);
}

static int
cmd_read(int argc, char **argv)
{
	struct hwtr_ar *ar;
	const char *out = NULL;
	size_t s, k, len;
	void *buf;
	int c, fd, rc;

	while ((c = getopt(argc, argv, "o:")) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		default:
			usage();
		}
	}
	if (argc - optind != 1)
		usage();
	fd = STDOUT_FILENO;
	if (out != NULL && (fd = open(out, O_WRONLY | O_CREAT | O_TRUNC,
	    0644)) < 0)
		err(1, "%s", out);
	rc = hwtr_ar_open(&ar, argv[optind], NULL);
	if (rc < 0)
		errx(1, "%s: %s", argv[optind], ar != NULL ?
		    hwtr_ar_errmsg(ar) : hwtr_errstr(rc));
	for (s = 0; s < hwtr_ar_nstreams(ar); s++) {
		for (k = 0; k < hwtr_ar_nchunks(ar, s); k++) {
			rc = hwtr_ar_read_chunk(ar, s, k, &buf, &len);
			if (rc < 0)
				errx(1, "%s: stream %zu chunk %zu: %s",
				    argv[optind], s, k, hwtr_ar_errmsg(ar));
			write_all(fd, buf, len, out != NULL ? out : "stdout");
			free(buf);
		}
	}
	(void)hwtr_ar_close(ar);
	if (out != NULL && close(fd) != 0)
		err(1, "%s", out);
	return (0);
}

int
main(int argc, char **argv)
{
	if (argc < 2)
		usage();
	if (strcmp(argv[1], "write") == 0)
		return (cmd_write(argc - 1, argv + 1));
	if (strcmp(argv[1], "read") == 0)
		return (cmd_read(argc - 1, argv + 1));
	usage();
	return (2);
}
