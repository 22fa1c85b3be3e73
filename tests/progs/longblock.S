/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Fixture: a libc-free program whose loop body is one straight run of
 * 70,000 four-byte instructions (280,000 bytes: longer than unrolled code
 * such as a SHA-256 block function, and than the 65,535 instructions a
 * libipt block holds) and a conditional branch back, taken twice: every
 * add runs 3 times.  Exit status 0.
 */

	.text
	.globl	_start
_start:
	xorl	%eax, %eax
	movl	$3, %ecx
1:
	.rept	70000
	addq	$1, %rax
	.endr
	decl	%ecx
	jnz	1b
/* The exit: callgrind does not count the block that ends the process. */
	.globl	longblock_exit
longblock_exit:
	xorl	%edi, %edi
	movl	$60, %eax
	syscall

/*
 * A writable segment: without one Valgrind 3.19 reads no symbols of the
 * executable and callgrind names its code "???".
 */
	.data
	.globl	longblock_data
longblock_data:
	.quad	1

	.section .note.GNU-stack,"",@progbits
