/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Fixture for inlined frames (hwtrace-query(1) bt and func, inlines in
 * hwtrace-db(5)).  measure() is always inlined into main, at two call
 * sites: in a loop run ROUNDS times, then, with the argument "crash", on
 * NULL, so that the program dies of SIGSEGV inside the C library's strlen
 * called from the inlined measure.  Known by construction: measure is
 * entered ROUNDS times (ROUNDS + 1 with "crash"); gdb's bt at the crash
 * shows strlen, measure, main.  twice() is inlined where the return from
 * the call of bump() lands: it is entered ROUNDS times, each by a return.
 */

#include <stdio.h>
#include <string.h>

#define ROUNDS	40

/* Read through volatiles so that the compiler cannot fold them. */
const char *volatile nothing;
const char *volatile word = "inlined";

__attribute__((noinline)) size_t
bump(size_t n)
{
	__asm__ volatile("" : "+r"(n));
	return (n + 1);
}

static inline __attribute__((always_inline)) size_t
twice(size_t n)
{
	n = n * 2 + 7;
	__asm__ volatile("" : "+r"(n));
	return (n ^ (n >> 3));
}

static inline __attribute__((always_inline)) size_t
measure(const char *s)
{
	size_t n = strlen(s);

	return (n * 3 + 1);
}

int
main(int argc, char **argv)
{
	size_t t = 0;
	int i;

	for (i = 0; i < ROUNDS; i++)
		t += measure(word);
	for (i = 0; i < ROUNDS; i++)
		t += twice(bump((size_t)i));
	printf("inline: %zu\n", t);
	if (argc > 1 && strcmp(argv[1], "crash") == 0) {
		fflush(stdout);
		t += measure(nothing);
	}
	return ((int)(t & 1));
}
