/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Issue 16: the sideband replay costs O(log n) per record, and a signal
 * stops hwtrace index and an auto-indexing hwtrace query within a second,
 * leaving neither a partial database nor the indexer's temporary
 * directory.  The archives are written here with the public writer; the
 * counts expected follow from what was written.
 */

#include <atf-c.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hwtrace.h"
#include "hwtr_test.h"
#include "../lib/hwtr_test_tool.h"

static double
now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return ((double)t.tv_sec + (double)t.tv_nsec / 1e9);
}

static struct hwtr_aw *
writer(const char *path)
{
	static const char *const argv[] = { "/bin/many" };
	struct hwtr_capture_meta m;
	struct hwtr_aw *aw;
	char err[512];

	tool_intel_meta(&m, "h", "step", 0);
	m.argv = argv;
	m.argc = 1;
	m.start_ns = 1;
	ATF_REQUIRE_EQ_MSG(hwtr_aw_open(&aw, path, &m, NULL, err,
	    sizeof(err)), 0, "%s", err);
	return (aw);
}

static void
finish(struct hwtr_aw *aw)
{
	struct hwtr_capture_end end;
	char err[512];

	memset(&end, 0, sizeof(end));
	hwtr_aw_set_end(aw, &end);
	ATF_REQUIRE_EQ_MSG(hwtr_aw_close(aw, err, sizeof(err)), 0, "%s", err);
}

static void
put(struct hwtr_aw *aw, const struct hwtr_sb_rec *r)
{
	ATF_REQUIRE_EQ_MSG(hwtr_aw_sideband(aw, r), 0, "%s",
	    hwtr_aw_errmsg(aw));
}

/* @nmaps mappings of process 1, none ever closed. */
static void
many_maps(const char *path, size_t nmaps)
{
	struct hwtr_aw *aw = writer(path);
	struct hwtr_sb_rec r;
	size_t i;

	memset(&r, 0, sizeof(r));
	r.type = HWTR_SB_PROC_START;
	r.pid = r.tid = 1;
	r.u.proc_start.ppid = -1;
	put(aw, &r);
	for (i = 0; i < nmaps; i++) {
		memset(&r, 0, sizeof(r));
		r.type = HWTR_SB_MMAP;
		r.time = i + 1;
		r.pid = r.tid = 1;
		r.u.mmap.addr = 0x10000000ULL + 0x2000ULL * i;
		r.u.mmap.len = 0x1000;
		r.u.mmap.prot = 5;
		r.u.mmap.path = "/lib/m.so";
		put(aw, &r);
	}
	finish(aw);
}

/*
 * Start hwtrace with @argv[1..], its stderr to the file err, TMPDIR
 * @tmpdir when not NULL; its pid.
 */
static pid_t
start(char *const *argv, const char *tmpdir)
{
	pid_t pid;

	pid = fork();
	ATF_REQUIRE(pid >= 0);
	if (pid == 0) {
		int fd = open("err", O_WRONLY | O_CREAT | O_TRUNC, 0644);

		dup2(fd, 2);
		if (tmpdir != NULL)
			setenv("TMPDIR", tmpdir, 1);
		execv(HWTR_TEST_HWTRACE, argv);
		_exit(127);
	}
	return (pid);
}

/* Run hwtrace with @argv[1..]; the exit status and the wall time. */
static int
run(char *const *argv, double *secs)
{
	double t0 = now();
	pid_t pid = start(argv, NULL);
	int st;

	ATF_REQUIRE(waitpid(pid, &st, 0) == pid);
	*secs = now() - t0;
	return (WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
}

/* The rows of @table in the database @db, read with SQLite itself. */
static long
count_rows(const char *db, const char *table)
{
	char sql[128];
	sqlite3 *d;
	sqlite3_stmt *st;
	long n = -1;

	snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s", table);
	ATF_REQUIRE_MSG(sqlite3_open_v2(db, &d, SQLITE_OPEN_READONLY, NULL) ==
	    SQLITE_OK, "cannot open %s", db);
	ATF_REQUIRE_MSG(sqlite3_prepare_v2(d, sql, -1, &st, NULL) == SQLITE_OK,
	    "%s: %s: %s", db, sql, sqlite3_errmsg(d));
	if (sqlite3_step(st) == SQLITE_ROW)
		n = (long)sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(d);
	return (n);
}

/*
 * hwtrace index -q of @archive into @db, saying how long it took to index
 * @what: exit 0 within 30 s.
 */
static void
index_in_seconds(const char *archive, const char *db, const char *what)
{
	char *argv[] = { "hwtrace", "index", "-q", "-o", (char *)db,
	    (char *)archive, NULL };
	double secs;
	int rc;

	rc = run(argv, &secs);
	printf("index of %s: exit %d, %.2f s\n", what, rc, secs);
	ATF_REQUIRE_EQ_MSG(rc, 0, "exit status %d", rc);
	ATF_CHECK_MSG(secs < 30, "indexing took %.1f s", secs);
}

ATF_TC(many_mappings_in_seconds);
ATF_TC_HEAD(many_mappings_in_seconds, tc)
{
	atf_tc_set_md_var(tc, "descr", "200,000 mappings of one process "
	    "index in seconds (430 s before), every one in the database");
	atf_tc_set_md_var(tc, "timeout", "300");
}
ATF_TC_BODY(many_mappings_in_seconds, tc)
{
	many_maps("m.hwtrace", 200000);
	index_in_seconds("m.hwtrace", "m.db", "200,000 mappings");
	ATF_CHECK_EQ(count_rows("m.db", "mappings"), 200000);
}

ATF_TC(many_processes_in_seconds);
ATF_TC_HEAD(many_processes_in_seconds, tc)
{
	atf_tc_set_md_var(tc, "descr", "50,000 processes, each forked from "
	    "the one before with its two mappings, index in seconds");
	atf_tc_set_md_var(tc, "timeout", "300");
}
ATF_TC_BODY(many_processes_in_seconds, tc)
{
	struct hwtr_aw *aw = writer("p.hwtrace");
	struct hwtr_sb_rec r;
	int32_t pid;
	int k;

	for (pid = 1; pid <= 50000; pid++) {
		memset(&r, 0, sizeof(r));
		r.type = HWTR_SB_PROC_START;
		r.time = (uint64_t)pid * 10;
		r.pid = r.tid = pid;
		r.u.proc_start.ppid = pid - 1 > 0 ? pid - 1 : -1;
		put(aw, &r);
		for (k = 0; pid == 1 && k < 2; k++) {
			memset(&r, 0, sizeof(r));
			r.type = HWTR_SB_MMAP;
			r.time = 1;
			r.pid = r.tid = 1;
			r.u.mmap.addr = 0x400000ULL + 0x10000ULL * (uint64_t)k;
			r.u.mmap.len = 0x1000;
			r.u.mmap.prot = 5;
			r.u.mmap.path = "/bin/p";
			put(aw, &r);
		}
	}
	finish(aw);
	index_in_seconds("p.hwtrace", "p.db", "50,000 processes");
	ATF_CHECK_EQ(count_rows("p.db", "processes"), 50000);
	/* Two of process 1, inherited by each of the 49,999 others. */
	ATF_CHECK_EQ(count_rows("p.db", "mappings"), 100000);
}

/* Nothing named like a temporary in the directory @dir. */
static void
no_leftovers(const char *dir)
{
	struct dirent *e;
	DIR *d;

	ATF_REQUIRE((d = opendir(dir)) != NULL);
	while ((e = readdir(d)) != NULL) {
		ATF_CHECK_MSG(strstr(e->d_name, ".partial") == NULL &&
		    strncmp(e->d_name, "hwtrace-ix.", 11) != 0,
		    "'%s/%s' was left behind", dir, e->d_name);
	}
	closedir(d);
}

/*
 * Start @argv, send @sig after @delay seconds; the exit status and how
 * long it took to stop.
 */
static int
interrupt(char *const *argv, int sig, double delay, double *stop_secs)
{
	struct timespec ts;
	double t0;
	pid_t pid = start(argv, "tmp");
	int st;

	ts.tv_sec = (time_t)delay;
	ts.tv_nsec = (long)((delay - (double)ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL);
	t0 = now();
	kill(pid, sig);
	ATF_REQUIRE(waitpid(pid, &st, 0) == pid);
	*stop_secs = now() - t0;
	return (WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
}

/*
 * hwtrace @argv, sent @sig (named @signame) half a second in, exits 1
 * within a second and leaves no temporary here or in ./tmp.
 */
static void
stops(char *const *argv, int sig, const char *signame)
{
	double secs;
	int rc;

	rc = interrupt(argv, sig, 0.5, &secs);
	printf("%s, %s: exit %d after %.2f s\n", argv[1], signame, rc, secs);
	ATF_CHECK_EQ_MSG(rc, 1, "%s: exit status %d", argv[1], rc);
	ATF_CHECK_MSG(secs < 1.0, "%s took %.2f s to stop", argv[1], secs);
	no_leftovers(".");
	no_leftovers("tmp");
}

ATF_TC(signals_stop_indexing);
ATF_TC_HEAD(signals_stop_indexing, tc)
{
	atf_tc_set_md_var(tc, "descr", "SIGTERM and SIGINT stop hwtrace "
	    "index and an auto-indexing hwtrace query within a second, "
	    "leaving no .partial file and no hwtrace-ix.* directory");
	atf_tc_set_md_var(tc, "timeout", "600");
}
ATF_TC_BODY(signals_stop_indexing, tc)
{
	char *ix[] = { "hwtrace", "index", "-q", "-o", "s.db", "s.hwtrace",
	    NULL };
	char *q[] = { "hwtrace", "query", "s.hwtrace", "summary", NULL };
	const size_t len = 1024u << 20;
	struct hwtr_aw *aw;
	char key[HWTR_IMAGE_KEY_MAX];
	uint8_t *b;
	size_t i;

	/*
	 * Indexing this takes seconds: a 1 GiB image to write out (it
	 * compresses to some 0.4 MB).
	 */
	aw = writer("s.hwtrace");
	ATF_REQUIRE((b = calloc(1, len)) != NULL);
	for (i = 0; i < len; i += 16384)
		b[i] = (uint8_t)(i >> 14 | 1);
	ATF_REQUIRE_EQ_MSG(tool_memory_image(aw, "/big", b, len, key), 0,
	    "%s", hwtr_aw_errmsg(aw));
	free(b);
	finish(aw);
	ATF_REQUIRE(mkdir("tmp", 0700) == 0);

	stops(ix, SIGTERM, "SIGTERM");
	ATF_CHECK(atf_utils_grep_file("interrupted", "err"));
	ATF_CHECK(access("s.db", F_OK) != 0);
	stops(q, SIGINT, "SIGINT");
	ATF_CHECK(access("s.hwtrace.db", F_OK) != 0);
	stops(q, SIGTERM, "SIGTERM");
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, many_mappings_in_seconds);
	ATF_TP_ADD_TC(tp, many_processes_in_seconds);
	ATF_TP_ADD_TC(tp, signals_stop_indexing);
	return (atf_no_error());
}
