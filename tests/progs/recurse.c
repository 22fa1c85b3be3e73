/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Fixture: recursion deeper than the 64-entry return-compression stack of a
 * PT unit (fib's call tree, and a 100-deep chain), plus mutual recursion.
 */

#include <stdio.h>

static unsigned int is_odd(unsigned int);

static __attribute__((noinline)) unsigned int
fib(unsigned int n)
{
	if (n < 2)
		return (n);
	return (fib(n - 1) + fib(n - 2));
}

static __attribute__((noinline)) unsigned int
depth(unsigned int n)
{
	unsigned int r;

	if (n == 0)
		return (0);
	r = depth(n - 1) + 1;
	__asm__ volatile("" : "+r"(r));	/* not a tail call */
	return (r);
}

static __attribute__((noinline)) unsigned int
is_even(unsigned int n)
{
	return (n == 0 ? 1 : is_odd(n - 1));
}

static __attribute__((noinline)) unsigned int
is_odd(unsigned int n)
{
	return (n == 0 ? 0 : is_even(n - 1));
}

int
main(void)
{
	volatile unsigned int n = 10, d = 100, e = 9;

	printf("recurse: fib(%u) %u depth %u even(%u) %u\n", n, fib(n),
	    depth(d), e, is_even(e));
	return (0);
}
