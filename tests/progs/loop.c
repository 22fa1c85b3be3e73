/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Fixture: counted loops, nested, with conditional branches taken and not
 * taken in a pattern a tracer has to get exactly right (TNT bits).
 */

#include <stdio.h>

int
main(void)
{
	volatile unsigned int n = 40;
	unsigned int i, j, sum = 0, odd = 0;

	for (i = 0; i < n; i++) {
		for (j = 0; j < (i & 7); j++)
			sum += i * j;
		if (i % 3 == 0)
			odd++;
	}
	printf("loop: sum %u odd %u\n", sum, odd);
	return (0);
}
