/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Two conditional branches to one destination with a short block between
 * them, "jnz X; sub ecx,1; jz X", which Valgrind's VEX chases into one
 * superblock (its &&-idiom).  pair(4000) counts down from 4000 to 1: the
 * jnz is taken for the 2000 odd values and falls through for the 2000
 * even ones; of those, the jz is taken when the value is 2 modulo 4 (1000
 * times) and falls through to the increment otherwise (1000 times); the
 * loop's jnz back is taken 3999 times.  It prints 1000.
 */

#include <stdio.h>

int pair(int n);

__asm__(".text\n"
    ".globl pair\n"
    ".type pair, @function\n"
    "pair:\n"
    "	xor %eax, %eax\n"
    "1:	mov %edi, %ecx\n"
    "	shr $1, %ecx\n"
    "	and $1, %ecx\n"
    "	test $1, %edi\n"
    "	jnz 2f\n"
    "	sub $1, %ecx\n"
    "	jz 2f\n"
    "	inc %eax\n"
    "2:	dec %edi\n"
    "	jnz 1b\n"
    "	ret\n"
    ".size pair, . - pair\n");

int
main(void)
{
	printf("%d\n", pair(4000));
	return (0);
}
