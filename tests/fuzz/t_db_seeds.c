/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The damaged-database fuzzer's check (db_one.h) in make check, built
 * with the normal compiler, over the fixtures make builds with the tests
 * (fuzz-db.mk: build/fuzz/db-fix/) and every input of
 * tests/fuzz/corpus-db/: the hand-made shape-* (each mutation kind, each
 * table of each fixture, each verb) and reg-* (each input that once found
 * a crash, a hang or a failure without a message).  Each input runs in a
 * child process of its own with an alarm, so that a crash or a hang is
 * told as a failure of that input, with its mutations.
 */

#include <sys/types.h>
#include <sys/wait.h>

#include <atf-c.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hwtrace.h"
#include "hwtr_test.h"
#include "db_one.h"

#define DB_CORPUS	HWTR_TEST_SRC "/tests/fuzz/corpus-db"
#define DB_FIX		HWTR_TEST_BUILD "/fuzz/db-fix"
/* Seconds an input may take before it is a hang (its verb has 3 s CPU). */
#define DB_ALARM	30

static void
load_base(struct fuzz_db_base *b)
{
	static const char *const fix[] = { DB_FIX "/ixgen2.db",
	    DB_FIX "/inline.db" };
	char err[512];

	ATF_REQUIRE_MSG(access(fix[0], R_OK) == 0 && access(fix[1], R_OK) == 0,
	    "the fixtures are not built (make builds them with the tests): "
	    "%s, %s", fix[0], fix[1]);
	ATF_REQUIRE_MSG(fuzz_db_base_init(b, fix, 2, err, sizeof(err)) == 0,
	    "%s", err);
}

/* Read @path whole (an empty input, all zeros, is a valid one). */
static uint8_t *
read_input(const char *path, size_t *lenp)
{
	char err[256] = "out of memory";
	void *data;

	ATF_REQUIRE_MSG(hwtr_read_file(path, 1 << 20, &data, lenp, err,
	    sizeof(err)) == 0, "%s", err);
	return (data);
}

/*
 * Run one input in a child; 0 when it answered or failed with a message,
 * else ATF fails saying how, with the mutations (made again here without
 * the verb).
 */
static int
run_one(struct fuzz_db_base *b, const char *name, const uint8_t *data,
    size_t len)
{
	char *report = NULL;
	const char *how;
	char buf[64];
	pid_t pid;
	int st, rc;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	ATF_REQUIRE(pid >= 0);
	if (pid == 0) {
		alarm(DB_ALARM);
		rc = fuzz_db_one(b, data, len, &report);
		if (rc < 0)
			fprintf(stderr, "%s: %s", name, report);
		sqlite3_free(report);
		_exit(rc < 0 ? 2 : rc);
	}
	ATF_REQUIRE(waitpid(pid, &st, 0) == pid);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return (0);
	if (WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM)
		how = "hung (no end in 30 s)";
	else if (WIFSIGNALED(st)) {
		snprintf(buf, sizeof(buf), "died of signal %d", WTERMSIG(st));
		how = buf;
	} else if (WEXITSTATUS(st) == 1)
		how = "failed without a message";
	else {
		snprintf(buf, sizeof(buf), "exited %d (the harness failed, "
		    "or a sanitizer's report)", WEXITSTATUS(st));
		how = buf;
	}
	b->dry = 1;
	(void)fuzz_db_one(b, data, len, &report);
	b->dry = 0;
	fprintf(stderr, "%s:\n%s", name, report ? report : "");
	sqlite3_free(report);
	ATF_CHECK_MSG(0, "%s: expected an answer or a failure with a "
	    "message, the verb %s (see stderr)", name, how);
	return (-1);
}

/* Each input of the corpus whose name starts with @prefix; how many. */
static int
replay(struct fuzz_db_base *b, const char *prefix)
{
	struct dirent *de;
	char path[4096];
	uint8_t *data;
	size_t len;
	DIR *d;
	int count = 0;

	d = opendir(DB_CORPUS);
	ATF_REQUIRE_MSG(d != NULL, "cannot open %s", DB_CORPUS);
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' ||
		    strncmp(de->d_name, prefix, strlen(prefix)) != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", DB_CORPUS, de->d_name);
		data = read_input(path, &len);
		(void)run_one(b, de->d_name, data, len);
		free(data);
		count++;
	}
	closedir(d);
	return (count);
}

ATF_TC(shapes_answer);
ATF_TC_HEAD(shapes_answer, tc)
{
	atf_tc_set_md_var(tc, "descr", "each hand-made input (a mutation "
	    "kind, a table, a verb) answers or fails with a message, no "
	    "crash or hang");
	atf_tc_set_md_var(tc, "timeout", "600");
}
ATF_TC_BODY(shapes_answer, tc)
{
	struct fuzz_db_base b;
	int n;

	load_base(&b);
	n = replay(&b, "shape-");
	fuzz_db_base_free(&b);
	ATF_CHECK_MSG(n >= 10, "expected the hand-made inputs in %s, got %d",
	    DB_CORPUS, n);
}

ATF_TC(found_inputs_answer);
ATF_TC_HEAD(found_inputs_answer, tc)
{
	atf_tc_set_md_var(tc, "descr", "each input that once found a crash, "
	    "a hang or a failure without a message now answers or fails "
	    "with one");
	atf_tc_set_md_var(tc, "timeout", "600");
}
ATF_TC_BODY(found_inputs_answer, tc)
{
	struct fuzz_db_base b;
	int n;

	load_base(&b);
	n = replay(&b, "reg-");
	fuzz_db_base_free(&b);
	ATF_CHECK_MSG(n >= 2, "expected the found inputs in %s, got %d",
	    DB_CORPUS, n);
}

/*
 * The shape-* inputs, decoded without their verbs, mutate every table of
 * both fixtures with each kind of mutation: a schema or fixture that
 * moved the choices away from what the names say shows here.
 */
ATF_TC(shapes_cover_tables_and_kinds);
ATF_TC_HEAD(shapes_cover_tables_and_kinds, tc)
{
	atf_tc_set_md_var(tc, "descr", "the shape-* inputs change at least "
	    "one row of every non-empty table of each fixture and make "
	    "every kind of mutation");
}
ATF_TC_BODY(shapes_cover_tables_and_kinds, tc)
{
	struct fuzz_db_base b;
	struct dirent *de;
	char path[4096], *report;
	uint8_t *data;
	size_t len;
	sqlite3 *db;
	DIR *d;
	int f, t, k;

	load_base(&b);
	b.dry = 1;
	d = opendir(DB_CORPUS);
	ATF_REQUIRE_MSG(d != NULL, "cannot open %s", DB_CORPUS);
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, "shape-", 6) != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", DB_CORPUS, de->d_name);
		data = read_input(path, &len);
		(void)fuzz_db_one(&b, data, len, &report);
		sqlite3_free(report);
		free(data);
	}
	closedir(d);
	for (k = 0; k < FZ_DB_NKIND; k++)
		ATF_CHECK_MSG(b.applied[k] > 0, "expected a shape-* input "
		    "whose %s mutation changes a row, got none",
		    fz_db_kindname[k]);
	for (f = 0; f < b.nfix; f++) {
		db = fz_db_mem(b.fix[f].img, b.fix[f].len);
		ATF_REQUIRE(db != NULL);
		for (t = 0; t < b.fix[f].nt; t++) {
			struct fz_db_table *tb = &b.fix[f].t[t];
			sqlite3_value *key[8] = { NULL };
			int rows = fz_db_row(db, tb, 0, key);

			for (k = 0; k < 8; k++)
				sqlite3_value_free(key[k]);
			ATF_CHECK_MSG(rows == 0 || tb->touched > 0,
			    "expected a shape-* input that changes a row of "
			    "%s (table %d of fixture %d), got none", tb->name,
			    t, f);
		}
		sqlite3_close(db);
	}
	fuzz_db_base_free(&b);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, shapes_answer);
	ATF_TP_ADD_TC(tp, found_inputs_answer);
	ATF_TP_ADD_TC(tp, shapes_cover_tables_and_kinds);
	return (atf_no_error());
}
