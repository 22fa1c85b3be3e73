/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Libc-free fixtures for single-step traps that a hypervisor delivers one
 * instruction late after CPUID (tests/capture/t_latetrap).  Built once per
 * case, -DCASE_x; each runs a 100-round loop whose instruction after
 * CPUID is, at the label "hidden":
 *   a  a non-branch (mov)
 *   b  a conditional branch, taken in 50 rounds and not taken in 50
 *   c  an indirect jump
 *   d  a syscall (number 0x8000000x from CPUID leaf 0x80000000: ENOSYS)
 *   e  another CPUID
 * The instructions each executes are counted by construction below, the
 * exit syscall included: 1 before the loop, 100 rounds, 3 to exit.
 *   a  1 + 100 * 6 + 3          = 604
 *   b  1 + 100 * 6 + 50 + 3     = 654
 *   c  1 + 100 * 6 + 3          = 604
 *   d  1 + 100 * 5 + 3          = 504
 *   e  1 + 100 * 6 + 3          = 604
 * CPUID changes no flags and leaves r12-r14 alone.
 */

	.text
	.globl	_start
_start:
	mov	$100, %r12d
round:
#if defined(CASE_a)
	xor	%eax, %eax
	cpuid
	.globl	hidden
hidden:
	mov	%ebx, %r13d
	nop
#elif defined(CASE_b)
	xor	%eax, %eax
	test	$1, %r12b
	cpuid
	.globl	hidden
hidden:
	jz	1f
	.globl	odd
odd:
	nop
1:
#elif defined(CASE_c)
	xor	%eax, %eax
	lea	1f(%rip), %r14
	cpuid
	.globl	hidden
hidden:
	jmp	*%r14
	ud2
1:
#elif defined(CASE_d)
	mov	$0x80000000, %eax
	cpuid
	.globl	hidden
hidden:
	syscall
#elif defined(CASE_e)
	xor	%eax, %eax
	cpuid
	.globl	hidden
hidden:
	cpuid
	nop
#else
#error "build with -DCASE_a ... -DCASE_e"
#endif
	dec	%r12d
	jnz	round
	mov	$60, %eax
	xor	%edi, %edi
	syscall

	.section .note.GNU-stack,"",@progbits
