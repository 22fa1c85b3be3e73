/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Fixture: a thread blocks in read(2) on a pipe while the main thread
 * runs a loop of a million passes, then calls read(2) itself (on
 * /dev/zero: the same code in libc) and wakes the thread through the
 * pipe.  Under the valgrind source with chasing switched on inside that
 * loop (HWTRACE_VALGRIND_CHASE_AFTER), every translation is made again,
 * and the sleeping thread's last superblock, read's, is described anew
 * by the main thread before the sleeper runs on.
 */

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static int fds[2];

static void *
sleeper(void *arg)
{
	char c;

	(void)arg;
	return (read(fds[0], &c, 1) == 1 ? NULL : (void *)1);
}

int
main(void)
{
	struct timespec ts = { 0, 20000000 };
	volatile unsigned long x = 0;
	unsigned long i;
	pthread_t t;
	void *r;
	char b[16];
	int z;

	if (pipe(fds) != 0 || pthread_create(&t, NULL, sleeper, NULL) != 0)
		return (1);
	/* Let the sleeper reach its read first. */
	nanosleep(&ts, NULL);
	for (i = 0; i < 1000000; i++)
		x += i;
	if ((z = open("/dev/zero", O_RDONLY)) < 0 ||
	    read(z, b, sizeof(b)) != (ssize_t)sizeof(b) ||
	    write(fds[1], "w", 1) != 1 || pthread_join(t, &r) != 0 ||
	    r != NULL)
		return (1);
	printf("wakeup: %lu\n", (unsigned long)x);
	return (0);
}
