/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/* hwtrace(1): dispatch to a verb, git style. */

#include <stdio.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "hwtrace.h"
#include "cli.h"

/* The verb table: add one line per verb, in the order help lists them. */
static const struct cli_verb verbs[] = {
	{ "capture", cmd_capture, "record a run of a program" },
	{ "import", cmd_import, "pack a foreign capture into an archive" },
	{ "info", cmd_info, "describe an archive" },
	{ "verify", cmd_verify, "check an archive's integrity" },
	{ "index", cmd_index, "decode an archive into an SQLite database" },
	{ "query", cmd_query, "ask questions of an execution history" },
	{ "export", cmd_export, "load histories into PostgreSQL for many runs" },
	{ "fleet", cmd_fleet, "ask questions across the runs in PostgreSQL" },
	{ "diff", cmd_diff, "compare two executions" },
	{ "report", cmd_report, "write a self-contained HTML page of a run" },
	{ NULL, NULL, NULL }
};

static void
usage(FILE *fp)
{
	size_t i;

	fprintf(fp, "usage: hwtrace [--version] [--help] VERB [ARGS...]\n\n");
	fprintf(fp, "verbs:\n");
	for (i = 0; verbs[i].name != NULL; i++)
		fprintf(fp, "  %-10s %s\n", verbs[i].name, verbs[i].summary);
	fprintf(fp, "\n'hwtrace VERB --help' describes a verb; see hwtrace(1).\n");
}

/*
 * Keep freed memory for the next allocation rather than give it back to
 * the kernel.  index allocates and frees large buffers over and over (a
 * segment's operations, growing by realloc; the line tables of each
 * image), and glibc returned them at once: chunks over its mmap
 * threshold (128 KiB, rising to 32 MiB) by munmap, the heap's top past
 * 128 KiB by trimming.  Taking the pages again cost a page fault per
 * 4 KiB, some 17 us each on the 2-CPU VM: gz8's index took 43,700
 * faults, 28,150 with this (docs/PERFORMANCE.md, Index).  The process's
 * peak memory hardly grows: it keeps what it already held.  No top pad:
 * each extension of the heap would ask for it again, past a limit such
 * as t_query_bound's 12 MB (ulimit -d).
 */
static void
keep_heap(void)
{
#ifdef __GLIBC__
	(void)mallopt(M_MMAP_THRESHOLD, 32 << 20);
	(void)mallopt(M_TRIM_THRESHOLD, 256 << 20);
#endif
}

int
main(int argc, char **argv)
{
	size_t i;

	keep_heap();

	if (argc < 2) {
		usage(stderr);
		return (EXIT_USAGE);
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return (0);
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("hwtrace %s (archive format %d.%d)\n", HWTRACE_VERSION,
		    HWTR_FORMAT_MAJOR, HWTR_FORMAT_MINOR);
		return (0);
	}
	for (i = 0; verbs[i].name != NULL; i++)
		if (strcmp(argv[1], verbs[i].name) == 0)
			return (verbs[i].fn(argc - 1, argv + 1));
	fprintf(stderr, "hwtrace: unknown verb '%s'\n", argv[1]);
	usage(stderr);
	return (EXIT_USAGE);
}
