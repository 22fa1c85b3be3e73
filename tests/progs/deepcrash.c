/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Fixture: a long run, then a crash three calls deep.  work() loops long
 * enough to give tens of KiB of trace (several PSBs), so that the end of
 * the trace can be decoded without its start (hwtrace query's lazy verbs);
 * then main calls level1, level2, level3 and store, which stores through
 * a null pointer and dies of SIGSEGV.  By its source, the stack at the
 * fault is store, level3, level2, level1, main.
 */

#include <stdio.h>

static __attribute__((noinline)) unsigned
step(unsigned x)
{
	return (x & 1 ? 3 * x + 1 : x / 2);
}

static __attribute__((noinline)) unsigned
work(unsigned n)
{
	unsigned i, x, sum = 0;

	for (i = 1; i <= n; i++)
		for (x = i; x != 1; sum++)
			x = step(x);
	return (sum);
}

static __attribute__((noinline)) void
store(volatile int *p, int v)
{
	*p = v;
}

static __attribute__((noinline)) void
level3(volatile int *p, int v)
{
	store(p, v + 3);
	__asm__ volatile("");		/* not a tail call */
}

static __attribute__((noinline)) void
level2(volatile int *p, int v)
{
	level3(p, v + 2);
	__asm__ volatile("");
}

static __attribute__((noinline)) void
level1(volatile int *p, int v)
{
	level2(p, v + 1);
	__asm__ volatile("");
}

int
main(void)
{
	int *volatile p = NULL;

	printf("deepcrash: work %u\n", work(300));
	fflush(stdout);
	level1(p, 0);
	printf("deepcrash: not reached\n");
	return (0);
}
