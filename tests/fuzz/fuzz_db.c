/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The damaged-database fuzzer (make fuzz-db): each input is a fixture
 * choice, a verb (of query, or report, or diff against the unmutated
 * fixture) and a few mutations of the fixture's rows (extreme
 * values, deltas, flipped bits in blobs and inside their zstd frames,
 * truncated blobs, deleted rows), made on an in-memory copy of a database
 * hwtrace index wrote (FUZZ_DB_FIXTURES: ixgen's two-thread walk over
 * calls, the inline fixture's valgrind capture); the verb then reads the
 * copy through the library (db_one.h, which the seed-corpus test
 * t_db_seeds.c shares).  A failure without a message aborts with the
 * mutations; sanitizers and libFuzzer's -timeout report the rest.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_one.h"

/* The fixtures, separated by ':' (fuzz-db.mk sets them). */
#ifndef FUZZ_DB_FIXTURES
#define FUZZ_DB_FIXTURES	"build/fuzz/db-fix/ixgen2.db:" \
	"build/fuzz/db-fix/inline.db"
#endif

int LLVMFuzzerInitialize(int *, char ***);
int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* The loaded fixtures and the directory; a test program's one static. */
static struct fuzz_db_base base;

static void
cleanup(void)
{
	fuzz_db_base_free(&base);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *env = getenv("FUZZ_DB_FIXTURES");
	const char *paths[FZ_DB_MAXFIX];
	char err[512], *list, *p, *save = NULL;
	int n = 0;

	(void)argc;
	(void)argv;
	if ((list = strdup(env != NULL ? env : FUZZ_DB_FIXTURES)) == NULL)
		exit(1);
	for (p = strtok_r(list, ":", &save); p != NULL && n < FZ_DB_MAXFIX;
	    p = strtok_r(NULL, ":", &save))
		paths[n++] = p;
	if (fuzz_db_base_init(&base, paths, n, err, sizeof(err)) < 0) {
		fprintf(stderr, "fuzz_db: %s\n", err);
		exit(1);
	}
	free(list);
	base.verbose = getenv("FUZZ_DB_VERBOSE") != NULL;
	atexit(cleanup);
	return (0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *report;
	int rc;

	rc = fuzz_db_one(&base, data, size, &report);
	if (rc != 0 || base.verbose)
		fprintf(stderr, "%s%s", rc < 0 ? "fuzz_db: the harness "
		    "failed\n" : rc > 0 ? "fuzz_db: a failure without a "
		    "message\n" : "", report ? report : "(no report)\n");
	sqlite3_free(report);
	if (rc != 0)
		abort();
	return (0);
}
