/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The valgrind source's guardian.  Valgrind runs the program as its own
 * process: valgrind.bin is hwtrace's child and dies with it (its
 * PR_SET_PDEATHSIG), but a process the program forks is a second Valgrind,
 * the child of the first, and neither the death signal (cleared at fork)
 * nor a process group (the program may make its own; and a group of its
 * own would take the program off the terminal) follows it.  Killed with
 * SIGKILL, hwtrace left such processes running under PID 1, converting
 * nothing, forever.
 *
 * So a small process forked before Valgrind waits on a pipe that only
 * hwtrace can write to.  A byte on it means the capture ended and took
 * care of its processes: the guardian exits.  End of file means hwtrace
 * is gone without saying so: the guardian kills, with SIGKILL, every
 * process of this user whose command line holds the argument
 * "--out-dir=DIR" of this capture, a directory mkdtemp() made unique.
 * Every Valgrind of the tree has it: a fork keeps its parent's command
 * line and an exec under --trace-children=yes is a new Valgrind started
 * with the same options.  It scans /proc again until three scans in a row
 * find none, so that a process forked while the others died is found too.
 * A process that execs a program Valgrind does not follow (--no-follow)
 * is no longer a Valgrind of the tree and is left alone, as it would be
 * by a capture that ends normally.
 */

#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <assert.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hwtr_common.h"
#include "vgguard.h"

#define GUARD_QUIET_SCANS	3	/* empty scans in a row: all gone */
#define GUARD_MAX_SCANS		500	/* 10 s: give up then */

/* Whether the NUL-separated @buf of @len holds the argument @arg. */
static int
has_arg(const char *buf, size_t len, const char *arg)
{
	size_t i, n;

	for (i = 0; i < len; i += n + 1) {
		n = strnlen(buf + i, len - i);
		if (strncmp(buf + i, arg, n) == 0 && arg[n] == '\0')
			return (1);
	}
	return (0);
}

/* Kill this user's processes that have @arg; how many there were. */
static int
kill_tree(const char *arg)
{
	char path[64], buf[8192];
	struct dirent *de;
	struct stat st;
	ssize_t n;
	DIR *d;
	int fd, found = 0;
	pid_t pid;

	if ((d = opendir("/proc")) == NULL)
		return (0);
	while ((de = readdir(d)) != NULL) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid = (pid_t)strtol(de->d_name, NULL, 10);
		if (pid <= 1 || pid == getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			continue;
		if (fstat(fd, &st) != 0 || st.st_uid != geteuid()) {
			close(fd);
			continue;
		}
		n = read(fd, buf, sizeof(buf));
		close(fd);
		if (n <= 0 || !has_arg(buf, (size_t)n, arg))
			continue;
		if (kill(pid, SIGKILL) == 0)
			found++;
	}
	closedir(d);
	return (found);
}

/* The guardian itself: never returns. */
static void
guard(const char *dir, int rfd)
{
	struct timespec ts = { 0, 20000000 };
	char arg[PATH_MAX + 16], c;
	int quiet = 0, scans, fd;
	ssize_t r;

	/* Nothing of hwtrace's: not its archive, nor the event dir's lock. */
	for (fd = 3; fd < 1024; fd++)
		if (fd != rfd)
			(void)close(fd);
	if ((fd = open("/dev/null", O_RDWR)) >= 0) {
		(void)dup2(fd, 0);
		(void)dup2(fd, 1);
		(void)dup2(fd, 2);
		if (fd > 2)
			(void)close(fd);
	}
	/* The terminal's signals are for hwtrace and the program. */
	(void)signal(SIGINT, SIG_IGN);
	(void)signal(SIGQUIT, SIG_IGN);
	(void)signal(SIGHUP, SIG_IGN);
	(void)signal(SIGTERM, SIG_IGN);
	(void)signal(SIGUSR2, SIG_IGN);
	(void)signal(SIGPIPE, SIG_IGN);
	(void)prctl(PR_SET_NAME, "hwtrace-guard");
	snprintf(arg, sizeof(arg), "--out-dir=%s", dir);
	while ((r = read(rfd, &c, 1)) < 0 && errno == EINTR)
		;
	if (r == 1)
		_exit(0);
	for (scans = 0; quiet < GUARD_QUIET_SCANS && scans < GUARD_MAX_SCANS;
	    scans++) {
		quiet = kill_tree(arg) > 0 ? 0 : quiet + 1;
		nanosleep(&ts, NULL);
	}
	_exit(0);
}

/*
 * Forked while hwtrace has one thread (before the archive writer's
 * workers start): the guardian may call what allocates.
 */
int
vg_guard_start(const char *dir, pid_t *pidp, int *fdp)
{
	int p[2];
	pid_t pid;

	assert(dir != NULL && dir[0] != '\0');
	*pidp = -1;
	*fdp = -1;
	if (pipe2(p, O_CLOEXEC) < 0)
		return (-HWTR_E_IO);
	if ((pid = fork()) < 0) {
		close(p[0]);
		close(p[1]);
		return (-HWTR_E_IO);
	}
	if (pid == 0) {
		close(p[1]);
		guard(dir, p[0]);
	}
	close(p[0]);
	*pidp = pid;
	*fdp = p[1];
	return (0);
}

void
vg_guard_end(pid_t pid, int fd)
{
	char c = 'q';

	if (fd >= 0) {
		(void)!write(fd, &c, 1);
		close(fd);
	}
	if (pid > 0)
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
}
