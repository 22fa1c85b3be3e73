/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Fixture: a thread other than the main one execve()s hello (next to this
 * program) while the main thread waits in pause().  The kernel ends the
 * main thread and gives the exec'ing thread the process's id: a tracer
 * must keep following it.
 */

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "progdir.h"

static char path[PATH_MAX];

static void *
run(void *arg)
{
	(void)arg;
	execl(path, "hello", (char *)NULL);
	perror("threxec: execl");
	_exit(1);
}

int
main(void)
{
	pthread_t t;

	if (sibling_path(path, sizeof(path), "hello") < 0) {
		fprintf(stderr, "threxec: cannot find hello\n");
		return (1);
	}
	if (pthread_create(&t, NULL, run, NULL) != 0) {
		fprintf(stderr, "threxec: pthread_create failed\n");
		return (1);
	}
	for (;;)
		pause();
}
