/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * hwtr_out_commit_cancel() into a FIFO: the cancel flag that a SIGTERM
 * handler sets ends the copy whether the signal came before the wait for
 * a reader began, or while a reader that stopped reading keeps the FIFO
 * full.  Each call runs in a child watched for 5 seconds, so a copy that
 * ignores the flag fails the case instead of hanging it.
 */

#include <atf-c.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>

#include "hwtr_common.h"

static volatile int cancel_flag;

static void
on_alarm(int sig)
{
	(void)sig;
	cancel_flag = 1;
}

/* A file @path of @len bytes, for the copy. */
static void
make_file(const char *path, size_t len)
{
	char buf[4096];
	size_t n;
	int fd;

	memset(buf, 'x', sizeof(buf));
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ATF_REQUIRE_MSG(fd >= 0, "cannot create %s: %s", path,
	    strerror(errno));
	for (; len > 0; len -= n) {
		n = len < sizeof(buf) ? len : sizeof(buf);
		ATF_REQUIRE(write(fd, buf, n) == (ssize_t)n);
	}
	ATF_REQUIRE(close(fd) == 0);
}

/*
 * In a child: the flag set before the call (@early), or by SIGALRM
 * after 300 ms from a handler installed the way cmd_index installs its
 * (signal(): system calls restarted), then hwtr_out_commit_cancel("tmp",
 * "fifo").  The child exits 0 when the call gave up with EINTR.  The
 * parent allows 5 seconds.
 */
static void
commit_stops(int early, const char *what)
{
	struct itimerval it;
	struct timespec ts = { 0, 50 * 1000 * 1000 };
	pid_t pid;
	int st, i, rc;

	pid = fork();
	ATF_REQUIRE(pid >= 0);
	if (pid == 0) {
		if (early)
			cancel_flag = 1;
		else {
			signal(SIGALRM, on_alarm);
			memset(&it, 0, sizeof(it));
			it.it_value.tv_usec = 300 * 1000;
			setitimer(ITIMER_REAL, &it, NULL);
		}
		rc = hwtr_out_commit_cancel("tmp", "fifo", &cancel_flag);
		_exit(rc == -1 && errno == EINTR ? 0 : 2);
	}
	for (i = 0; i < 100; i++) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			break;
		nanosleep(&ts, NULL);
	}
	if (i == 100) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		atf_tc_fail("%s: the copy into the FIFO still waited 5 s "
		    "after the cancel flag was set", what);
	}
	ATF_REQUIRE_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	    "%s: expected the copy to give up with EINTR (status %d)", what,
	    st);
}

ATF_TC_WITHOUT_HEAD(fifo_no_reader_cancelled_before);
ATF_TC_BODY(fifo_no_reader_cancelled_before, tc)
{
	struct stat st;

	make_file("tmp", 1000);
	ATF_REQUIRE(mkfifo("fifo", 0600) == 0);
	commit_stops(1, "no reader, flag set before the wait");
	ATF_REQUIRE(stat("fifo", &st) == 0 && S_ISFIFO(st.st_mode));
	/* The finished file is not lost: the caller decides about it. */
	ATF_REQUIRE(access("tmp", F_OK) == 0);
}

ATF_TC_WITHOUT_HEAD(fifo_full_cancelled_by_signal);
ATF_TC_BODY(fifo_full_cancelled_by_signal, tc)
{
	int rd;

	/* 1 MiB: far more than a pipe holds, and nobody reads. */
	make_file("tmp", 1 << 20);
	ATF_REQUIRE(mkfifo("fifo", 0600) == 0);
	rd = open("fifo", O_RDONLY | O_NONBLOCK);
	ATF_REQUIRE(rd >= 0);
	commit_stops(0, "a reader that never reads, SIGALRM after 300 ms");
	close(rd);
}

ATF_TC_WITHOUT_HEAD(fifo_copy_whole);
ATF_TC_BODY(fifo_copy_whole, tc)
{
	char buf[65536];
	size_t total = 0;
	ssize_t n;
	pid_t pid;
	int rd, st;

	make_file("tmp", 3 * 65536 + 17);
	ATF_REQUIRE(mkfifo("fifo", 0600) == 0);
	pid = fork();
	ATF_REQUIRE(pid >= 0);
	if (pid == 0)
		_exit(hwtr_out_commit_cancel("tmp", "fifo", &cancel_flag) == 0 ?
		    0 : 2);
	rd = open("fifo", O_RDONLY);
	ATF_REQUIRE(rd >= 0);
	while ((n = read(rd, buf, sizeof(buf))) > 0)
		total += (size_t)n;
	close(rd);
	ATF_REQUIRE(waitpid(pid, &st, 0) == pid);
	ATF_REQUIRE_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	    "the copy failed (status %d)", st);
	ATF_REQUIRE_MSG(total == 3 * 65536 + 17, "the reader got %zu bytes",
	    total);
	ATF_REQUIRE_MSG(access("tmp", F_OK) != 0,
	    "the temporary file was not removed after the copy");
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, fifo_no_reader_cancelled_before);
	ATF_TP_ADD_TC(tp, fifo_full_cancelled_by_signal);
	ATF_TP_ADD_TC(tp, fifo_copy_whole);
	return (atf_no_error());
}
