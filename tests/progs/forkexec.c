/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Fixture: fork, then exec in the child (a new image in a new process, which
 * a tracer follows), with the parent waiting.  The child execs the sibling
 * program "hello".
 */

#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "progdir.h"

int
main(void)
{
	char path[PATH_MAX];
	char *const args[] = { "hello", "from forkexec", NULL };
	char *const env[] = { NULL };
	pid_t pid;
	int st;

	if (sibling_path(path, sizeof(path), "hello") != 0) {
		fprintf(stderr, "forkexec: cannot find hello\n");
		return (1);
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		perror("forkexec: fork");
		return (1);
	}
	if (pid == 0) {
		execve(path, args, env);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) != pid) {
		perror("forkexec: waitpid");
		return (1);
	}
	printf("forkexec: child exited %d\n", WIFEXITED(st) ?
	    WEXITSTATUS(st) : -1);
	return (0);
}
