/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Fixture: several threads created and joined; each runs its own loop, so
 * each stream has its own control flow.  Results are printed after the
 * joins, in a fixed order.
 */

#include <pthread.h>
#include <stdio.h>

#define NTHREADS	3

struct work {
	unsigned int	seed;
	unsigned int	result;
};

static void *
worker(void *arg)
{
	struct work *w = arg;
	unsigned int i, x = w->seed;

	for (i = 0; i < 20 + w->seed; i++)
		x = (x & 1) ? 3 * x + 1 : x / 2;
	w->result = x;
	return (NULL);
}

int
main(void)
{
	pthread_t t[NTHREADS];
	struct work w[NTHREADS];
	int i;

	for (i = 0; i < NTHREADS; i++) {
		w[i].seed = 7 + 4 * (unsigned int)i;
		if (pthread_create(&t[i], NULL, worker, &w[i]) != 0) {
			fprintf(stderr, "threads: pthread_create failed\n");
			return (1);
		}
	}
	for (i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	for (i = 0; i < NTHREADS; i++)
		printf("threads: %d -> %u\n", i, w[i].result);
	return (0);
}
