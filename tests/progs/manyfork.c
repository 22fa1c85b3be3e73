/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Fixture: forks 20 children at once; child 7 execs a file that does not
 * exist (and exits 42 when that fails), the others exit with their index.
 * The tracer must follow them all, each with its own stream.
 */

#include <sys/wait.h>

#include <stdio.h>
#include <unistd.h>

int
main(void)
{
	int i, st, sum = 0;
	pid_t p;

	for (i = 0; i < 20; i++) {
		if ((p = fork()) < 0) {
			perror("manyfork: fork");
			return (1);
		}
		if (p == 0) {
			if (i == 7) {
				execl("/nonexistent/prog", "prog", (char *)NULL);
				_exit(42);
			}
			_exit(i);
		}
	}
	for (i = 0; i < 20; i++)
		if (wait(&st) > 0 && WIFEXITED(st))
			sum += WEXITSTATUS(st);
	printf("manyfork: sum %d\n", sum);
	return (0);
}
