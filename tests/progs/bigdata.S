/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Fixture: a libc-free program whose file is 16 MiB of .data, nearly all
 * zeros, and five instructions.  Its image compresses more than 4096
 * times, beyond the archive reader's per-frame ratio (hwtrace(5)).
 */

	.text
	.globl	_start
_start:
	leaq	big(%rip), %rax
	movb	$2, 1(%rax)
	movl	$60, %eax
	xorl	%edi, %edi
	syscall

	.data
	.globl	big
big:
	.byte	1
	.zero	(16 << 20) - 1

	.section .note.GNU-stack,"",@progbits
