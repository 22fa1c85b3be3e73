/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Fixture: 3 threads, each calling work() 12 times; work() calls leaf(),
 * which makes a system call (getppid) between two loops.  A thread's
 * trace is disabled at each system call, where a recording of whole CPUs
 * may switch threads: every call of work() and leaf() spans such a point
 * (tests/indexer/t_cputhreads makes a per-CPU recording of it).  Counts
 * by construction: work() 12 times and leaf() 12 times per worker.
 */

#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NTHREADS	3
#define NCALLS		12

static __attribute__((noinline)) long
leaf(long x)
{
	long i, s = 0;

	for (i = 0; i < 8; i++)
		s += (i ^ x) & 7;
	s += syscall(SYS_getppid) != 0;
	for (i = 0; i < 8; i++)
		s += (i * x) & 3;
	return (s);
}

static __attribute__((noinline)) long
work(long x)
{
	long i, s = 0;

	for (i = 0; i < 6; i++)
		s += (x + i) % 5;
	s += leaf(x);
	for (i = 0; i < 6; i++)
		s += (x * i) % 3;
	return (s);
}

static void *
worker(void *arg)
{
	long *res = arg, i, s = 0;

	for (i = 0; i < NCALLS; i++)
		s += work(*res + i);
	*res = s;
	return (NULL);
}

int
main(void)
{
	pthread_t t[NTHREADS];
	long r[NTHREADS];
	int i;

	for (i = 0; i < NTHREADS; i++) {
		r[i] = i;
		if (pthread_create(&t[i], NULL, worker, &r[i]) != 0)
			return (1);
	}
	for (i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	printf("cpuswitch: %ld %ld %ld\n", r[0], r[1], r[2]);
	return (0);
}
