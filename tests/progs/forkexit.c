/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * A forked child ends with _exit(5); the parent waits for it and exits 0
 * when it saw 5, 1 otherwise.  The archive must record 5 for the child.
 */

#include <sys/wait.h>
#include <unistd.h>

int
main(void)
{
	pid_t pid;
	int st;

	if ((pid = fork()) < 0)
		return (1);
	if (pid == 0)
		_exit(5);
	if (waitpid(pid, &st, 0) != pid)
		return (1);
	return (WIFEXITED(st) && WEXITSTATUS(st) == 5 ? 0 : 1);
}
