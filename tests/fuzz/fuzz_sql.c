/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The SQL differential fuzzer (make fuzz-sql): each input is a short
 * sequence of queries and writes, decoded from its bytes by a grammar
 * over calls, exec_order and exec_insns, run on an in-memory copy of a
 * database hwtrace index wrote (FUZZ_SQL_DB: the virtual tables of
 * calls_vtab.c and exec_vtab.c) and on a reference where those are
 * ordinary tables with the same rows (sql_one.h, which the seed-corpus
 * test t_sql_seeds.c shares).  A difference in the answers aborts with
 * the steps and both answers.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "sql_one.h"

#ifndef FUZZ_SQL_DB
#define FUZZ_SQL_DB	"build-fuzz/sql-fix/fix.db"
#endif

int LLVMFuzzerInitialize(int *, char ***);
int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* The two connections and the fixture's facts; a test program's one static. */
static struct fuzz_sql_base base;

static void
cleanup(void)
{
	fuzz_sql_base_free(&base);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *db = getenv("FUZZ_SQL_DB");
	const char *verbose = getenv("FUZZ_SQL_VERBOSE");
	char err[512];

	(void)argc;
	(void)argv;
	if (fuzz_sql_base_init(&base, db != NULL ? db : FUZZ_SQL_DB, err,
	    sizeof(err)) < 0) {
		fprintf(stderr, "fuzz_sql: %s\n", err);
		exit(1);
	}
	base.verbose = verbose != NULL ? atoi(verbose) : 0;
	atexit(cleanup);
	return (0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *report;

	if (fuzz_sql_one(&base, data, size, &report) < 0) {
		fprintf(stderr, "fuzz_sql: the virtual tables and the "
		    "reference differ\n%s", report);
		sqlite3_free(report);
		abort();
	}
	return (0);
}
