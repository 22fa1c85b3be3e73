/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Fixture: setjmp/longjmp out of a nested call chain (a return-like jump that
 * is not a ret: the return-compression stack must not be trusted after it),
 * twice, then a normal return.
 */

#include <setjmp.h>
#include <stdio.h>

static unsigned int deep(jmp_buf, unsigned int);

/*
 * deep() recurses through this pointer: gcc 12 otherwise warns of infinite
 * recursion (a false positive caused by longjmp being noreturn).
 */
static unsigned int (*volatile deep_p)(jmp_buf, unsigned int) = deep;

static __attribute__((noinline)) unsigned int
deep(jmp_buf env, unsigned int n)
{
	unsigned int r;

	if (n == 0)
		longjmp(env, 7);
	r = deep_p(env, n - 1) + 1;
	__asm__ volatile("" : "+r"(r));	/* not a tail call */
	return (r);
}

int
main(void)
{
	jmp_buf env;
	volatile unsigned int rounds = 0, total = 0;
	int v;

	v = setjmp(env);
	total += (unsigned int)v;
	if (rounds < 2) {
		rounds++;
		deep(env, 5 + rounds);
	}
	printf("setjmp: rounds %u total %u\n", rounds, total);
	return (0);
}
