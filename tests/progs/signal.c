/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Fixture: synchronous signals delivered to handlers and left through
 * sigreturn: SIGUSR1 sent to itself with kill(2), a SA_SIGINFO handler for
 * SIGUSR2 that raises SIGUSR1 from inside (nested delivery), and a SIGSEGV
 * from a faulting load whose handler leaves with siglongjmp (a synchronous
 * fault: the faulting instruction never completes).
 */

#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t usr1, usr2, faults;
static sigjmp_buf fault_env;

static void
on_usr1(int sig)
{
	(void)sig;
	usr1++;
}

static void
on_usr2(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	if (si->si_pid == getpid())
		usr2++;
	kill(getpid(), SIGUSR1);
}

static void
on_segv(int sig)
{
	(void)sig;
	faults++;
	siglongjmp(fault_env, 1);
}

int
main(void)
{
	struct sigaction sa;
	int *volatile badp = NULL;
	volatile int *bad;
	int i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_segv;
	sigaction(SIGSEGV, &sa, NULL);
	sa.sa_handler = NULL;
	sa.sa_sigaction = on_usr2;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGUSR2, &sa, NULL);

	bad = badp;
	for (i = 0; i < 3; i++)
		kill(getpid(), SIGUSR1);
	kill(getpid(), SIGUSR2);
	if (sigsetjmp(fault_env, 1) == 0)
		(void)*bad;
	printf("signal: usr1 %d usr2 %d faults %d\n", (int)usr1, (int)usr2,
	    (int)faults);
	return (0);
}
