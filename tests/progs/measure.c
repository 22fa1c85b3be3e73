/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Fixture for the questions users bring to hwtrace query (bt, hot --by
 * line, annotate, export --folded) and hwtrace diff.  Its shape is known
 * by construction:
 *   - main -> parse -> lex: parse calls lex 50 times on one string;
 *   - main takes one of two paths at the line marked DIVERGE: through
 *     beta() when its first argument starts with 'b', else through alpha();
 *   - with the argument "crash", main -> report -> measure -> strlen(NULL):
 *     the program dies of SIGSEGV inside the C library's strlen.
 * Functions are global and noinline so that -O2 keeps every frame (a
 * static one may be inlined or cloned as name.isra.0).
 */

#include <stdio.h>
#include <string.h>

/* NULL, read through a volatile so that the compiler does not see it. */
const char *volatile nothing;

__attribute__((noinline)) int
lex(const char *s)
{
	int n = 0;

	while (*s != '\0') {
		if (*s == ' ')
			n++;
		s++;
	}
	return (n);
}

__attribute__((noinline)) int
parse(const char *s)
{
	int i, n = 0;

	for (i = 0; i < 50; i++)
		n += lex(s);
	return (n);
}

__attribute__((noinline)) int
alpha(int n)
{
	return (n * 3 + 1);
}

__attribute__((noinline)) int
beta(int n)
{
	int i, t = 0;

	for (i = 0; i < n; i++)
		t += i ^ n;
	return (t);
}

__attribute__((noinline)) size_t
measure(const char *s)
{
	size_t n = strlen(s);

	return (n * 2 + 1);
}

__attribute__((noinline)) void
report(const char *s)
{
	printf("measure: %zu\n", measure(s));
}

int
main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "a";
	int n;

	n = parse("the quick brown fox");
	if (mode[0] == 'b')	/* DIVERGE */
		n = beta(n);
	else
		n = alpha(n);
	printf("measure: %s %d\n", mode, n);
	if (strcmp(mode, "crash") == 0) {
		fflush(stdout);
		report(nothing);
	}
	return (0);
}
