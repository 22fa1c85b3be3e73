/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Fixture: runs until killed, a little work then a 10 ms sleep, forever;
 * with an argument STOP, until a file STOP exists, then exits 0.  For the
 * capture tests that interrupt, kill or attach (^C, SIGKILL of hwtrace,
 * -p PID): it must still be there when they act, and must cost few
 * instructions per second under single-stepping.
 */

#include <stdio.h>
#include <time.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	struct timespec ts = { 0, 10000000 };
	volatile unsigned long x = 0;
	int i;

	printf("spin: running\n");
	fflush(stdout);
	while (argc < 2 || access(argv[1], F_OK) != 0) {
		for (i = 0; i < 50; i++)
			x += (unsigned long)i;
		(void)x;	/* read: clang -Wunused-but-set-variable */
		nanosleep(&ts, NULL);
	}
	return (0);
}
