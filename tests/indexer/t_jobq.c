/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The writer's job queue (indexer/ix_jobs.h) and a worker busy with
 * something else.  At index -j 2 the worker decoded a segment (a tenth of
 * a second) while the writer queued its jobs and, a few chunks later,
 * found them still queued and ran them itself: about half of them on
 * gz8, 1.3 CPU-s of the writer's.  A worker now runs the jobs queued
 * while it decodes (ix_jobq_help()); here a thread stands for it, calling
 * ix_jobq_help() in a loop, and a job submitted and not waited for must
 * run on that thread.
 */

#include <atf-c.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "../../indexer/ix_jobs.h"

struct tjob {
	struct ix_job	job;
	pthread_t	ran_on;
	int		runs;
};

static pthread_mutex_t	lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t	work_cv = PTHREAD_COND_INITIALIZER;
static int		stop;

static void
tjob_fn(struct ix_job *j)
{
	struct tjob *t = (struct tjob *)j;

	t->ran_on = pthread_self();
	t->runs++;
}

/* The worker: "decoding", and between blocks, the jobs queued. */
static void *
busy_worker(void *arg)
{
	struct ix_jobq *q = arg;
	struct timespec ts = { 0, 100 * 1000 };

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		ix_jobq_help(q);
		nanosleep(&ts, NULL);
	}
	return (NULL);
}

/* Whether @j is done within about 10 s (under the lock, read). */
static int
done_soon(struct ix_job *j)
{
	struct timespec ts = { 0, 1000 * 1000 };
	int i, st;

	for (i = 0; i < 10000; i++) {
		pthread_mutex_lock(&lock);
		st = j->state;
		pthread_mutex_unlock(&lock);
		if (st == IX_JOB_DONE)
			return (1);
		nanosleep(&ts, NULL);
	}
	return (0);
}

ATF_TC_WITHOUT_HEAD(busy_worker_runs_jobs);
ATF_TC_BODY(busy_worker_runs_jobs, tc)
{
	struct ix_jobq q;
	struct tjob t[3];
	pthread_t w;
	int i;

	ix_jobq_init(&q, &lock, &work_cv);
	memset(t, 0, sizeof(t));
	ATF_REQUIRE(pthread_create(&w, NULL, busy_worker, &q) == 0);
	for (i = 0; i < 3; i++) {
		t[i].job.fn = tjob_fn;
		ix_jobq_submit(&q, &t[i].job);
	}
	/* Not waited for: only the busy worker may run them. */
	for (i = 0; i < 3; i++)
		ATF_CHECK_MSG(done_soon(&t[i].job), "job %d still %s after "
		    "10 s", i, t[i].job.state == IX_JOB_QUEUED ? "queued" :
		    "running");
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	ATF_REQUIRE(pthread_join(w, NULL) == 0);
	for (i = 0; i < 3; i++) {
		ATF_CHECK_EQ(t[i].runs, 1);
		ATF_CHECK(t[i].runs == 0 || pthread_equal(t[i].ran_on, w));
		/* Waiting for a job done returns at once. */
		ix_jobq_wait(&q, &t[i].job);
		ATF_CHECK_EQ(t[i].runs, 1);
	}
	ATF_CHECK(q.head == NULL && q.tail == NULL);
	ix_jobq_destroy(&q);
}

ATF_TC_WITHOUT_HEAD(help_without_queue);
ATF_TC_BODY(help_without_queue, tc)
{
	struct ix_jobq q;

	/* No queue, an empty one: nothing to do, nothing locked. */
	ix_jobq_help(NULL);
	ix_jobq_init(&q, &lock, &work_cv);
	ATF_REQUIRE(pthread_mutex_lock(&lock) == 0);
	ix_jobq_help(&q);
	ATF_REQUIRE(pthread_mutex_unlock(&lock) == 0);
	ix_jobq_destroy(&q);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, busy_worker_runs_jobs);
	ATF_TP_ADD_TC(tp, help_without_queue);
	return (atf_no_error());
}
