/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Fixture: a thread cancelled while three calls deep in a loop of
 * cancellation points; its cleanup handler runs during the forced unwind
 * (glibc longjmps into the function that pushed it, then to start_thread).
 */

#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>

static sem_t ready;
static volatile int cleanups, spins, never;

static void
cleanup(void *arg)
{
	(void)arg;
	cleanups++;
}

static __attribute__((noinline)) void
spin(int n)
{
	if (n > 0) {
		spin(n - 1);
		__asm__ volatile("");	/* not a tail call */
		return;
	}
	sem_post(&ready);
	while (!never) {
		spins++;
		pthread_testcancel();
	}
}

static void *
worker(void *arg)
{
	pthread_cleanup_push(cleanup, arg);
	spin(2);
	pthread_cleanup_pop(0);
	return (NULL);
}

int
main(void)
{
	pthread_t t;
	void *res;

	sem_init(&ready, 0, 0);
	pthread_create(&t, NULL, worker, NULL);
	sem_wait(&ready);
	pthread_cancel(t);
	pthread_join(t, &res);
	printf("cancel: %s cleanups %d\n", res == PTHREAD_CANCELED ?
	    "cancelled" : "returned", cleanups);
	return (0);
}
