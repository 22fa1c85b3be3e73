/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Fixture: a dense switch that -O2 compiles into a jump table (an indirect
 * jmp through a table in .rodata), visited with every case and the default.
 */

#include <stdio.h>

/*
 * Every case computes something different from @v and @w, so that the
 * compiler cannot turn the switch into a table of values (switch
 * conversion) and must jump.
 */
static __attribute__((noinline)) unsigned int
classify(unsigned int v, unsigned int w)
{
	switch (v) {
	case 0: return (w + 11);
	case 1: return (w * 23);
	case 2: return (w ^ 37);
	case 3: return (w - 41);
	case 4: return (w << 3);
	case 5: return (w >> 2);
	case 6: return (w * w);
	case 7: return (w | 89);
	case 8: return (w & 97);
	case 9: return (~w);
	default: return (1);
	}
}

int
main(void)
{
	volatile unsigned int n = 13;
	unsigned int i, s = 0;

	for (i = 0; i < n; i++)
		s = s * 3 + classify((i * 7) % 11, i);
	printf("switch: %u\n", s);
	return (0);
}
