/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Fixture: a non-zero exit status (3) through exit(3) after some work, so a
 * capture can check status passthrough and --keep-on-failure.
 */

#include <stdio.h>
#include <stdlib.h>

int
main(void)
{
	volatile int n = 5;
	int i, s = 0;

	for (i = 0; i < n; i++)
		s += i;
	printf("exit3: sum %d, exiting with 3\n", s);
	fflush(stdout);
	exit(3);
}
