/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Fixture: direct calls and indirect calls through a table of function
 * pointers (TIP packets with their targets), and an indirect jump through a
 * computed goto.
 */

#include <stdio.h>

typedef unsigned int (*op_fn)(unsigned int, unsigned int);

static __attribute__((noinline)) unsigned int
add(unsigned int a, unsigned int b)
{
	return (a + b);
}

static __attribute__((noinline)) unsigned int
sub(unsigned int a, unsigned int b)
{
	return (a - b);
}

static __attribute__((noinline)) unsigned int
mul(unsigned int a, unsigned int b)
{
	return (a * b);
}

static __attribute__((noinline)) unsigned int
xor(unsigned int a, unsigned int b)
{
	return (a ^ b);
}

static op_fn const ops[] = { add, sub, mul, xor };

static __attribute__((noinline)) unsigned int
computed_goto(unsigned int k)
{
	static void *const lbl[] = { &&l0, &&l1, &&l2 };
	unsigned int r = 0;

	goto *lbl[k % 3];
l0:	r += 1;
l1:	r += 10;
l2:	r += 100;
	return (r);
}

int
main(void)
{
	volatile unsigned int n = 12;
	op_fn volatile f;
	unsigned int i, acc = 1, g = 0;

	for (i = 0; i < n; i++) {
		f = ops[i % 4];
		acc = f(acc, i + 3);		/* indirect call */
		acc = add(acc, 1);		/* direct call */
		g += computed_goto(i);
	}
	printf("calls: acc %u goto %u\n", acc, g);
	return (0);
}
