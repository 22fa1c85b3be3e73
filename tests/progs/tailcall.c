/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Fixture: tail calls (a call turned into a jmp, so the callee returns to its
 * caller's caller), direct and indirect.  Built with -O2, which makes
 * sibling calls; the checker compares whatever the compiler produced.
 */

#include <stdio.h>

typedef unsigned int (*step_fn)(unsigned int);

static __attribute__((noinline)) unsigned int
leaf(unsigned int x)
{
	return (x * 3 + 1);
}

static __attribute__((noinline)) unsigned int
middle(unsigned int x)
{
	return (leaf(x + 2));		/* direct tail call: jmp leaf */
}

static step_fn volatile next_fn = middle;

static __attribute__((noinline)) unsigned int
top(unsigned int x)
{
	return (next_fn(x ^ 5));	/* indirect tail call: jmp *%rax */
}

static __attribute__((noinline)) unsigned int
countdown(unsigned int x, unsigned int acc)
{
	if (x == 0)
		return (acc);
	return (countdown(x - 1, acc + x));	/* self tail call: a loop */
}

int
main(void)
{
	volatile unsigned int n = 8;
	unsigned int i, s = 0;

	for (i = 0; i < n; i++)
		s += top(i);
	printf("tailcall: %u %u\n", s, countdown(n * 4, 0));
	return (0);
}
