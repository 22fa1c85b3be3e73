/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Fixture: vfork, twice.  The first child execs "hello" (the parent is
 * suspended until then, sharing its memory); the second calls _exit(5) at
 * once.  The parent reports both statuses.
 */

#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "progdir.h"

int
main(void)
{
	char path[PATH_MAX];
	char *const args[] = { "hello", "from vfork", NULL };
	char *const env[] = { NULL };
	pid_t pid;
	int st1, st2;

	if (sibling_path(path, sizeof(path), "hello") != 0) {
		fprintf(stderr, "vfork: cannot find hello\n");
		return (1);
	}
	fflush(stdout);
	pid = vfork();
	if (pid == 0) {
		execve(path, args, env);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st1, 0) != pid) {
		perror("vfork: first child");
		return (1);
	}
	pid = vfork();
	if (pid == 0)
		_exit(5);
	if (pid < 0 || waitpid(pid, &st2, 0) != pid) {
		perror("vfork: second child");
		return (1);
	}
	printf("vfork: children exited %d %d\n",
	    WIFEXITED(st1) ? WEXITSTATUS(st1) : -1,
	    WIFEXITED(st2) ? WEXITSTATUS(st2) : -1);
	return (0);
}
