/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The SQL differential fuzzer's check (sql_one.h) in make check, built
 * with the normal compiler: the fixture fuzz-sql.mk makes (an ixgen walk
 * over the recurse program, indexed by hwtrace index), and every input of
 * tests/fuzz/corpus-sql/ (one per constraint shape, and reg-* for each
 * input that once found the virtual tables differing from SQLite) gets
 * the same answers from the virtual tables as from the reference.
 */

#include <sys/stat.h>
#include <sys/types.h>

#include <atf-c.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwtrace.h"
#include "hwtr_test.h"
#include "sql_one.h"

#define SQL_CORPUS	HWTR_TEST_SRC "/tests/fuzz/corpus-sql"
#define SQL_PROG	HWTR_TEST_PROGS "/recurse"
#define IXGEN		HWTR_TEST_BUILD "/bench/ixgen"

/* The fuzzer's fixture (as fuzz-sql.mk makes it), here, and the base. */
static void
load_base(struct fuzz_sql_base *b)
{
	struct stat st;
	char cmd[2048], err[512];

	ATF_REQUIRE_MSG(stat(IXGEN, &st) == 0, "ixgen is not built: %s",
	    IXGEN);
	snprintf(cmd, sizeof(cmd), "%s -n 120000 -t 2 -s 14 %s fix.hwtrace && "
	    "%s index -q -o fix.db fix.hwtrace", IXGEN, SQL_PROG,
	    HWTR_TEST_HWTRACE);
	ATF_REQUIRE_MSG(system(cmd) == 0, "making the fixture failed: %s",
	    cmd);
	ATF_REQUIRE_MSG(fuzz_sql_base_init(b, "fix.db", err, sizeof(err)) ==
	    0, "%s", err);
}

/* Each file of the corpus whose name starts with @prefix; how many. */
static int
replay(struct fuzz_sql_base *b, const char *prefix)
{
	struct dirent *de;
	char path[4096], *report;
	uint8_t *data;
	size_t len;
	long n;
	FILE *fp;
	DIR *d;
	int count = 0;

	d = opendir(SQL_CORPUS);
	ATF_REQUIRE_MSG(d != NULL, "cannot open %s", SQL_CORPUS);
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' ||
		    strncmp(de->d_name, prefix, strlen(prefix)) != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", SQL_CORPUS, de->d_name);
		fp = fopen(path, "rb");
		ATF_REQUIRE_MSG(fp != NULL, "cannot open %s", path);
		ATF_REQUIRE(fseek(fp, 0, SEEK_END) == 0 && (n = ftell(fp)) >= 0);
		rewind(fp);
		data = malloc((size_t)n + 1);
		ATF_REQUIRE(data != NULL);
		len = fread(data, 1, (size_t)n, fp);
		fclose(fp);
		ATF_REQUIRE_MSG(len == (size_t)n, "cannot read %s", path);
		if (fuzz_sql_one(b, data, len, &report) < 0) {
			fprintf(stderr, "%s:\n%s", de->d_name, report);
			ATF_CHECK_MSG(0, "%s: expected the virtual tables to "
			    "answer as SQLite's tables do, they differ (see "
			    "stderr)", de->d_name);
			sqlite3_free(report);
		}
		free(data);
		count++;
	}
	closedir(d);
	return (count);
}

ATF_TC(shapes_same_answers);
ATF_TC_HEAD(shapes_same_answers, tc)
{
	atf_tc_set_md_var(tc, "timeout", "300");
}
ATF_TC_BODY(shapes_same_answers, tc)
{
	struct fuzz_sql_base b;
	int n;

	load_base(&b);
	n = replay(&b, "shape-");
	fuzz_sql_base_free(&b);
	ATF_CHECK_MSG(n >= 10, "expected the hand-made inputs in %s, got %d",
	    SQL_CORPUS, n);
}

ATF_TC(found_inputs_same_answers);
ATF_TC_HEAD(found_inputs_same_answers, tc)
{
	atf_tc_set_md_var(tc, "timeout", "300");
}
ATF_TC_BODY(found_inputs_same_answers, tc)
{
	struct fuzz_sql_base b;
	int n;

	load_base(&b);
	n = replay(&b, "reg-");
	fuzz_sql_base_free(&b);
	ATF_CHECK_MSG(n >= 5, "expected the found inputs in %s, got %d",
	    SQL_CORPUS, n);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, shapes_same_answers);
	ATF_TP_ADD_TC(tp, found_inputs_same_answers);
	return (atf_no_error());
}
