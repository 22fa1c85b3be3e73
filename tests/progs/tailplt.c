/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Fixture: tail calls with counts known by construction, in a dynamic PIE
 * linked with -z lazy.  Built with -O2, which turns a call in return
 * position into a jump (t_progs.sh checks the code with objdump):
 *   middle() ends in "jmp leaf" (direct), called 100 times from main;
 *   top() ends in "jmp *%rax" through a function pointer to middle(),
 *   called 20 times;
 *   main calls leaf() directly 30 times;
 *   plen() ends in "jmp strlen@plt" (a tail call through a lazily bound
 *   PLT stub), called 40 times; main also calls strlen through the PLT
 *   10 times.
 * So leaf runs 150 times, middle 120, top 20, plen 40 and the strlen
 * that libc's ifunc picks 50 times.  With the argument "crash", main
 * then calls middle(CRASH), whose leaf() stores through a null pointer:
 * gdb's bt in leaf shows leaf <- main (middle's frame was replaced).
 */

#include <stdio.h>
#include <string.h>

#define CRASH	0xdeadu

typedef unsigned int (*step_fn)(unsigned int);

static unsigned int *volatile nowhere;
static char word[16] = "tailcalls";
static char *volatile wordp = word;

static __attribute__((noinline)) unsigned int
leaf(unsigned int x)
{
	if (x == CRASH)
		*nowhere = x;
	return (x * 3 + 1);
}

static __attribute__((noinline)) unsigned int
middle(unsigned int x)
{
	return (leaf(x + 2));		/* jmp leaf */
}

static step_fn volatile next_fn = middle;

static __attribute__((noinline)) unsigned int
top(unsigned int x)
{
	return (next_fn(x ^ 5));	/* jmp *%rax */
}

static __attribute__((noinline)) size_t
plen(const char *s)
{
	return (strlen(s));		/* jmp strlen@plt */
}

int
main(int argc, char **argv)
{
	unsigned int i, s = 0;
	size_t n = 0;

	for (i = 0; i < 100; i++)
		s += middle(i);
	for (i = 0; i < 20; i++)
		s += top(i);
	for (i = 0; i < 30; i++)
		s += leaf(i);
	for (i = 0; i < 40; i++) {
		word[i % 8] = (char)('a' + i % 26);
		n += plen(wordp);
	}
	for (i = 0; i < 10; i++) {
		word[i % 4] = (char)('k' + i);
		n += strlen(word) + 1;
	}
	printf("tailplt: %u %zu\n", s, n);
	if (argc > 1 && strcmp(argv[1], "crash") == 0)
		s += middle(CRASH - 2);
	return ((int)(s & 0));
}
