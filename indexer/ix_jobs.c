/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/* The writer's jobs (ix_jobs.h). */

#include <stddef.h>
#include <time.h>

#include "ix_jobs.h"

void
ix_jobq_init(struct ix_jobq *q, pthread_mutex_t *lock,
    pthread_cond_t *work_cv)
{
	q->lock = lock;
	q->work_cv = work_cv;
	pthread_cond_init(&q->done_cv, NULL);
	q->head = q->tail = NULL;
	q->nq = 0;
	q->other_ns = 0;
	q->shared = 0;
}

void
ix_jobq_share(struct ix_jobq *q)
{
	q->shared = 1;
}

void
ix_jobq_destroy(struct ix_jobq *q)
{
	if (q->lock != NULL)
		pthread_cond_destroy(&q->done_cv);
	q->lock = NULL;
}

int
ix_jobq_submit(struct ix_jobq *q, struct ix_job *j)
{
	j->next = NULL;
	if (q == NULL || q->lock == NULL || !q->shared) {
		j->fn(j);
		j->state = IX_JOB_DONE;
		return (1);
	}
	pthread_mutex_lock(q->lock);
	if (q->nq >= IX_JOBS_QMAX) {
		pthread_mutex_unlock(q->lock);
		j->fn(j);
		j->state = IX_JOB_DONE;
		return (1);
	}
	q->nq++;
	j->state = IX_JOB_QUEUED;
	if (q->tail != NULL)
		q->tail->next = j;
	else
		q->head = j;
	q->tail = j;
	pthread_cond_broadcast(q->work_cv);
	pthread_mutex_unlock(q->lock);
	return (0);
}

/* Unlink @j from the queue (under the lock). */
static void
unqueue(struct ix_jobq *q, struct ix_job *j)
{
	struct ix_job **pp, *prev = NULL;

	for (pp = &q->head; *pp != NULL; prev = *pp, pp = &(*pp)->next)
		if (*pp == j) {
			q->nq--;
			*pp = j->next;
			if (q->tail == j)
				q->tail = prev;
			j->next = NULL;
			return;
		}
}

struct ix_job *
ix_jobq_take(struct ix_jobq *q)
{
	struct ix_job *j;

	if (q->lock == NULL || (j = q->head) == NULL)
		return (NULL);
	unqueue(q, j);
	j->state = IX_JOB_RUNNING;
	return (j);
}

void
ix_jobq_run(struct ix_jobq *q, struct ix_job *j, int other)
{
	struct timespec t0, t1;

	pthread_mutex_unlock(q->lock);
	if (other)
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	j->fn(j);
	if (other)
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
	pthread_mutex_lock(q->lock);
	if (other)
		q->other_ns += (uint64_t)((t1.tv_sec - t0.tv_sec) *
		    1000000000LL + (t1.tv_nsec - t0.tv_nsec));
	j->state = IX_JOB_DONE;
	pthread_cond_broadcast(&q->done_cv);
}

void
ix_jobq_wait(struct ix_jobq *q, struct ix_job *j)
{
	struct ix_job *o;

	if (q == NULL || q->lock == NULL) {
		if (j->state != IX_JOB_DONE) {
			j->fn(j);
			j->state = IX_JOB_DONE;
		}
		return;
	}
	pthread_mutex_lock(q->lock);
	if (j->state == IX_JOB_QUEUED) {
		unqueue(q, j);
		j->state = IX_JOB_RUNNING;
		ix_jobq_run(q, j, 0);
	}
	/* Another thread runs it: the jobs queued meanwhile, not sleep. */
	while (j->state != IX_JOB_DONE) {
		if ((o = ix_jobq_take(q)) != NULL)
			ix_jobq_run(q, o, 0);
		else
			pthread_cond_wait(&q->done_cv, q->lock);
	}
	pthread_mutex_unlock(q->lock);
}
