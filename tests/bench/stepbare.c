/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * stepbare COMMAND [ARG...]: the reference for the step source's speed.
 * The barest tracer: PTRACE_TRACEME, exec, then PTRACE_SINGLESTEP and
 * waitpid until the process ends, nothing looked at.  Prints the number of
 * steps and the seconds they took, as "steps N seconds S".
 *
 * Its limit: it counts stops, not instructions.  A rep-prefixed string
 * instruction stops once per iteration, and where the hypervisor delivers
 * the single-step trap late (after CPUID on some VMs) one stop covers two
 * instructions.  Both are a handful of stops in the fixtures it is run on
 * (a dozen CPUIDs in the C start-up), far below the rate's noise; it is a
 * reference for speed, never for counts (hwtrace capture's count is exact:
 * see kernel/step.c, settle()).
 */

#include <sys/ptrace.h>
#include <sys/wait.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	struct timespec t0, t1;
	unsigned long long steps = 0;
	int status, sig;
	pid_t pid;

	if (argc < 2) {
		fprintf(stderr, "usage: stepbare COMMAND [ARG...]\n");
		return (2);
	}
	if ((pid = fork()) < 0) {
		perror("stepbare: fork");
		return (1);
	}
	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, 0, 0);
		execvp(argv[1], argv + 1);
		perror("stepbare: exec");
		_exit(127);
	}
	/* The SIGTRAP of the exec. */
	if (waitpid(pid, &status, 0) < 0 || !WIFSTOPPED(status)) {
		fprintf(stderr, "stepbare: the command did not start\n");
		return (1);
	}
	ptrace(PTRACE_SETOPTIONS, pid, 0, (void *)PTRACE_O_EXITKILL);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	sig = 0;
	for (;;) {
		if (ptrace(PTRACE_SINGLESTEP, pid, 0, (void *)(long)sig) < 0)
			break;
		if (waitpid(pid, &status, 0) < 0 || !WIFSTOPPED(status))
			break;
		sig = WSTOPSIG(status) == SIGTRAP ? 0 : WSTOPSIG(status);
		steps++;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("steps %llu seconds %.6f\n", steps, (double)(t1.tv_sec -
	    t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	return (0);
}
