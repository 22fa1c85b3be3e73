/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Fixture: synchronous faults in the middle of a superblock, after a
 * conditional branch that was not taken.  The Valgrind tool reserves a
 * superblock's record at its first side exit and marks it while a fault
 * can still come (hw_main.c, hw_instrument()); these faults are where
 * that mark is what the trace says.  The loop is written in assembly so
 * that its shape does not depend on the compiler: a counted loop of
 * loads, which Valgrind unrolls into superblocks of two iterations with a
 * side exit after each (the loop's end), run into a guard page at four
 * alignments, so that the fault comes before the first side exit of a
 * superblock (no record) or after it (the mark).  Each fault is caught
 * (SIGSEGV handler, siglongjmp).  With the argument "crash" the program
 * then runs into the guard page once more without a handler and dies of
 * SIGSEGV.
 */

#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int	probe_sum(const int *p, long n);

__asm__(
"	.text\n"
"	.globl	probe_sum\n"
"	.type	probe_sum, @function\n"
"probe_sum:\n"
"	xorl	%eax, %eax\n"
"2:	addl	(%rdi), %eax\n"
"	addq	$4, %rdi\n"
"	decq	%rsi\n"
"	jne	2b\n"
"	ret\n"
"	.size	probe_sum, .-probe_sum\n");

static sigjmp_buf env;
static volatile sig_atomic_t faults;

static void
on_segv(int sig)
{
	(void)sig;
	faults++;
	siglongjmp(env, 1);
}

int
main(int argc, char **argv)
{
	struct sigaction sa;
	long pg = sysconf(_SC_PAGESIZE);
	volatile int sum = 0;
	volatile int k;
	char *m;
	int *ints;

	m = mmap(NULL, 2 * (size_t)pg, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED || mprotect(m + pg, (size_t)pg, PROT_NONE) != 0)
		return (1);
	ints = (int *)(void *)m;
	for (k = 0; k < pg / (long)sizeof(int); k++)
		ints[k] = k & 7;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_segv;
	sa.sa_flags = SA_NODEFER;
	sigaction(SIGSEGV, &sa, NULL);

	/* Loops that run into the guard page, at four alignments. */
	for (k = 0; k < 4; k++)
		if (sigsetjmp(env, 1) == 0)
			sum += probe_sum((int *)(void *)(m + pg) - 16 - k,
			    1000);
	sum += probe_sum(ints, 100);
	printf("midfault: faults %d sum %d\n", (int)faults, (int)sum);
	fflush(stdout);
	if (argc > 1 && strcmp(argv[1], "crash") == 0) {
		signal(SIGSEGV, SIG_DFL);
		sum += probe_sum((int *)(void *)(m + pg) - 16, 1000);
	}
	return (0);
}
