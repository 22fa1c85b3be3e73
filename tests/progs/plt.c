/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Fixture: library calls through the PLT of a dynamic PIE linked with
 * -z lazy, so that the first call of each function goes through ld.so's
 * lazy binding resolver: getenv from three callers (one, two, main),
 * strlen (an ifunc) from main.  Built a second time with -fno-plt
 * (noplt): the same calls through the GOT, no stubs.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static __attribute__((noinline)) int
one(void)
{
	return (getenv("HWTR_FIXTURE_ONE") != NULL);
}

static __attribute__((noinline)) int
two(void)
{
	return (getenv("HWTR_FIXTURE_TWO") != NULL);
}

int
main(int argc, char **argv)
{
	int n;

	n = one() + two() + (getenv("HWTR_FIXTURE_MAIN") != NULL);
	n += strlen(argv[0]) > 0;
	printf("plt: %d %d\n", argc, n);
	return (0);
}
