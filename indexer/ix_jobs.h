/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Jobs of the indexer's writer (ix_jobs.c): work the writer's thread
 * hands to the pipeline's threads so that it stays short, compressing a
 * chunk of the execution order or encoding a page of calls.  The writer
 * queues a job, goes on, and later waits for it in an order of its own
 * that does not depend on timing (the database is the same whatever -j
 * says); a job nobody took by then runs on the waiting thread.  With no
 * other thread (-j 1, or before the workers start) a job runs when it is
 * queued, while its data is in the writer's cache.
 */

#ifndef HWTR_IX_JOBS_H
#define HWTR_IX_JOBS_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

enum { IX_JOB_IDLE, IX_JOB_QUEUED, IX_JOB_RUNNING, IX_JOB_DONE };

struct ix_job {
	void		(*fn)(struct ix_job *);
	int		state;		/* IX_JOB_*, under the queue's lock */
	struct ix_job	*next;
};

/*
 * The queue, on the pipeline's lock: @work_cv is broadcast when a job
 * comes (the workers wait on it for segments too).
 */
struct ix_jobq {
	pthread_mutex_t	*lock;
	pthread_cond_t	*work_cv;
	pthread_cond_t	done_cv;	/* a job is done */
	struct ix_job	*head, *tail;
	size_t		nq;		/* jobs queued, not taken */
	uint64_t	other_ns;	/* CPU of jobs run by the workers */
	int		shared;		/* ix_jobq_share() */
};

/*
 * How many jobs of one kind later the writer takes a job's result, for
 * the calls pages and the symbol copy: the same for every -j, so that the
 * database's rows go in in the same order.  A worker takes jobs only when
 * it has no segment to decode, which comes in bursts, so the writer must
 * be able to leave that many waiting or it runs them itself: gz8 at -j 2
 * took 3.27-3.31 s against 3.47-3.57 at 8 (docs/PERFORMANCE.md, Index).
 */
#define IX_JOBS_LAG	32

/*
 * Jobs left waiting, at most: with that many queued the other threads are
 * busy decoding, and a job left for later is one the writer would run
 * itself when it needs the result, its data gone from its cache by then;
 * it runs at once instead.  gz8 at -j 2 (10 alternating rounds): 2.72-2.73
 * s against 2.76-2.77 with no limit, 5.27-5.30 CPU-s against 5.39-5.43
 * (docs/PERFORMANCE.md, Index).
 */
#define IX_JOBS_QMAX	8

void	ix_jobq_init(struct ix_jobq *q, pthread_mutex_t *lock,
	    pthread_cond_t *work_cv);
void	ix_jobq_destroy(struct ix_jobq *q);
/* Other threads take jobs from now on (called by the writer). */
void	ix_jobq_share(struct ix_jobq *q);
/*
 * Queue @j (its fn set); with @q NULL, nobody else to take it or
 * IX_JOBS_QMAX jobs waiting already, run it now.  1: it ran (its input
 * may go), 0: queued.
 */
int	ix_jobq_submit(struct ix_jobq *q, struct ix_job *j);
/*
 * Until @j is done; runs it here if no thread took it, and the jobs
 * queued meanwhile while another thread runs it.
 */
void	ix_jobq_wait(struct ix_jobq *q, struct ix_job *j);
/* Under the lock: the oldest job queued (taken), or NULL. */
struct ix_job *ix_jobq_take(struct ix_jobq *q);
/* Under the lock: run @j, taken, unlocked meanwhile; @other: a worker. */
void	ix_jobq_run(struct ix_jobq *q, struct ix_job *j, int other);

#endif /* !HWTR_IX_JOBS_H */
