/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Fixture for inlined instances without code (hwtrace-db(5) inlines).
 * With gcc -O2, vanish() inlined into main keeps a
 * DW_TAG_inlined_subroutine whose DW_AT_high_pc is 0 (low_pc == high_pc:
 * its body is an asm that emits nothing), and keep() one whose
 * DW_AT_ranges list holds an empty entry beside its real one.  gdb builds
 * no block for an empty instance ("Function "vanish" not defined") and
 * stops in keep() once per round.  Known by construction: keep is entered
 * ROUNDS times.
 */

#include <stdio.h>

#define ROUNDS	25

int volatile sink;

static inline __attribute__((always_inline)) int
vanish(int x)
{
	__asm__ volatile("" : : "r"(x));
	return (x);
}

static inline __attribute__((always_inline)) int
keep(int x)
{
	__asm__("" : "+r"(x));
	return (x);
}

int
main(int argc, char **argv)
{
	int t = 0, i;

	(void)argv;
	for (i = 0; i < ROUNDS; i++)
		t += vanish(argc + i) + keep(i);
	sink = t;
	printf("inlempty: %d\n", t);
	return (0);
}
