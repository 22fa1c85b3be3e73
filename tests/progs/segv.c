/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Fixture: a crash.  After some work it stores through a null pointer and
 * dies of SIGSEGV (no handler): the trace must end at the faulting store.
 */

#include <stdio.h>

static __attribute__((noinline)) void
store(volatile int *p, int v)
{
	*p = v;
}

int
main(void)
{
	int *volatile p = NULL;
	volatile int x = 0;

	store(&x, 1);
	printf("segv: about to crash\n");
	fflush(stdout);
	store(p, 2);
	printf("segv: not reached\n");
	return (0);
}
