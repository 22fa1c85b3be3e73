/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Fixture: a known number of calls, by construction.  main calls mid()
 * MANYCALLS_N times and each mid() calls leaf() twice: 30000 calls of mid,
 * 60000 of leaf, in about 90 pages of the calls store, while main (and
 * what called it) stays open from the first page to the last.
 */

#include <stdio.h>

#define MANYCALLS_N	30000

static __attribute__((noinline)) unsigned int
leaf(unsigned int x)
{
	return (x * 2654435761u);
}

static __attribute__((noinline)) unsigned int
mid(unsigned int x)
{
	return (leaf(x) ^ leaf(x + 1));
}

int
main(void)
{
	volatile unsigned int n = MANYCALLS_N;
	unsigned int i, acc = 0;

	for (i = 0; i < n; i++)
		acc += mid(i);
	printf("manycalls: %u\n", acc);
	return (0);
}
