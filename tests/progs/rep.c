/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Fixture: rep-prefixed string instructions (rep movsb, rep stosb, rep stosq,
 * repe cmpsb, and a rep movsb with a zero count), written in inline asm so
 * the compiler cannot replace them.  Each is one instruction that iterates;
 * a single-stepping tracer sees one step per iteration at the same address.
 */

#include <stdio.h>
#include <string.h>

static void
rep_movsb(void *dst, const void *src, unsigned long n)
{
	__asm__ volatile("rep movsb"
	    : "+D"(dst), "+S"(src), "+c"(n) : : "memory");
}

static void
rep_stosb(void *dst, unsigned char c, unsigned long n)
{
	__asm__ volatile("rep stosb"
	    : "+D"(dst), "+c"(n) : "a"(c) : "memory");
}

static void
rep_stosq(void *dst, unsigned long v, unsigned long n)
{
	__asm__ volatile("rep stosq"
	    : "+D"(dst), "+c"(n) : "a"(v) : "memory");
}

/* Number of leading bytes equal in @a and @b (at most @n). */
static unsigned long
repe_cmpsb(const void *a, const void *b, unsigned long n)
{
	unsigned long left = n;

	if (n == 0)
		return (0);
	__asm__ volatile("repe cmpsb"
	    : "+D"(a), "+S"(b), "+c"(left) : : "memory", "cc");
	/* Stopped after the first differing byte, or ran out equal. */
	return (n - left - (((const unsigned char *)a)[-1] !=
	    ((const unsigned char *)b)[-1]));
}

int
main(void)
{
	unsigned char a[32], b[32];
	unsigned long q[4];
	unsigned int i, sum = 0;

	rep_stosb(a, 0x5a, sizeof(a));
	rep_movsb(b, a, 16);
	rep_stosb(b + 16, 0x11, 16);
	rep_stosq(q, 0x0101010101010101ul, 4);
	rep_movsb(b, a, 0);
	for (i = 0; i < sizeof(b); i++)
		sum += b[i];
	printf("rep: sum %u q %lx same %lu\n", sum, q[3],
	    repe_cmpsb(a, b, sizeof(a)));
	return (0);
}
