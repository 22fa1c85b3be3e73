/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The pipeline (ix_pipeline.h): segments decoded on a pool of threads,
 * stitched in stream order by the calling thread, which writes the rows.
 */

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <intel-pt.h>
#include <limits.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "hwtr_common.h"
#include "hwtr_ix.h"
#include "hwtr_stream.h"
#include "ix_run.h"
#include "ix_image.h"
#include "ix_pipeline.h"
#include "ix_cputhread.h"
#include "ix_write.h"
#include "segdec.h"

/* ----------------------------------------------------------------- */
/* Segments                                                           */

#define IX_SEG_DEFAULT	(2u << 20)	/* bytes of PT per segment */
/*
 * CoreSight elements per batch (HWTRACE_IX_CS_BATCH), and batches a
 * worker may publish ahead of the writer for the unit it is stitching.
 */
#define IX_CS_BATCH	16384u
#define IX_CS_AHEAD	8u
/*
 * Threads of work, at most, whatever -j or the CPU count says.  Each
 * decoder holds its images and scratch (about 20 MB) and each segment in
 * the window (IX_WINDOW_MAX) its decoded output (about 30 MB for 2 MiB of
 * a gzip capture's PT): the gzip -6 8 MiB capture peaked at 382 MB RSS at
 * -j 5, 441 MB at 6 and 559 MB at 8 with a window of 2N + 1.  Beyond a
 * few threads the one writer, not decoding, is the limit anyway.
 */
#define IX_JOBS_MAX	6u
/*
 * Segments decoded ahead, at most, whatever -j says (2N + 1 up to -j 3).
 * With more than a few threads the writer is the limit, and what more
 * workers decode only waits for it: held in memory, and glibc keeps each
 * thread's freed buffers for it (cli/main.c, keep_heap()).  gz8 at -j 6
 * peaked at 466-550 MB with 13 (18 runs), past issue 29's 512 MB, and at
 * 405-441 MB with 7 (5 runs); -j 4 and 5 at 332-378 MB against 382-444,
 * in as much time (on 2 CPUs; docs/PERFORMANCE.md, D3).
 */
#define IX_WINDOW_MAX	7u
/* Threads decompressing chunks ahead of the PSB scan, at most. */
#define IX_RA_MAX	4

/* A chunk the stream view could not read is lost data. */
static void
sv_problem(void *arg, size_t s, uint64_t off, const char *why)
{
	struct run *r = arg;
	char nbuf[32];

	ix_problem(r->ix, "stream '%s' offset %#" PRIx64 ": chunk cannot be "
	    "read: %s", ix_stream_name(hwtr_ar_stream(r->ar, s), nbuf,
	    sizeof(nbuf)), off, why);
}

/*
 * Threads for -j N: N, or one a processor online when N is 0; @max at
 * the most.
 */
static size_t
pl_jobs(const struct run *r, size_t max)
{
	size_t nj;
	long ncpu;

	nj = r->ix->opts.jobs > 0 ? (size_t)r->ix->opts.jobs : 0;
	if (nj == 0) {
		ncpu = sysconf(_SC_NPROCESSORS_ONLN);
		nj = ncpu > 0 ? (size_t)ncpu : 1;
	}
	return (nj > max ? max : nj);
}

/*
 * Cut the streams into segments (the stream view), and give each stream
 * the mappings its segments' decoders see.
 */
int
ix_plan(struct run *r)
{
	struct ix_pipe *pl = r->pl;
	struct hwtr_sv_opts so;
	size_t s, k, i, nj, nun;
	uint64_t unread;
	const char *e = getenv("HWTRACE_IX_SEGMENT");
	char *endp;
	unsigned long long v;
	int rc;

	pl->seg_size = IX_SEG_DEFAULT;
	/* For tests: a small size cuts small traces into many segments. */
	if (e != NULL) {
		v = strtoull(e, &endp, 0);
		if (*e != '\0' && *endp == '\0' && v >= 16)
			pl->seg_size = v;
	}
	/* For tests too: 0 is no batches, 1 a batch per element. */
	pl->cs_batch = IX_CS_BATCH;
	if ((e = getenv("HWTRACE_IX_CS_BATCH")) != NULL) {
		v = strtoull(e, &endp, 0);
		if (*e != '\0' && *endp == '\0' && v <= SIZE_MAX)
			pl->cs_batch = (size_t)v;
	}
	pl->res = calloc(r->nstreams + 1, sizeof(*pl->res));
	pl->jmaps = calloc(r->nstreams + 1, sizeof(*pl->jmaps));
	pl->njmaps = r->nstreams;
	if (pl->res == NULL || pl->jmaps == NULL)
		return (-HWTR_E_NOMEM);
	/*
	 * As many helpers as there will be workers (ix_run_pipeline()), but
	 * IX_RA_MAX at most: a few keep up with the scan, and each one
	 * holds a chunk.
	 */
	nj = pl_jobs(r, IX_RA_MAX);
	memset(&so, 0, sizeof(so));
	/* For tests: a small maximum cuts small CoreSight buffers. */
	if ((e = getenv("HWTRACE_IX_SEG_MAX")) != NULL) {
		v = strtoull(e, &endp, 0);
		if (*e != '\0' && *endp == '\0' && v >= 32)
			so.seg_max = v;
	}
	so.seg_size = pl->seg_size;
	so.readahead = nj;
	so.tail = r->ix->opts.tail;	/* the lazy verbs' partial database */
	so.problem = sv_problem;
	so.problem_arg = r;
	so.cancel = r->ix->opts.cancel;
	if ((rc = hwtr_sv_open(&pl->sv, r->ar, &so)) < 0)
		return (rc);
	pl->nsegs = hwtr_sv_nsegs(pl->sv);
	if ((pl->segs = calloc(pl->nsegs + 1, sizeof(*pl->segs))) == NULL)
		return (-HWTR_E_NOMEM);
	for (i = 0; i < pl->nsegs; i++) {
		const struct hwtr_sv_seg *sg = hwtr_sv_seg(pl->sv, i);
		struct ix_seg *g = &pl->segs[i];

		g->stream = sg->stream;
		g->piece = sg->piece;
		g->start = sg->start;
		g->end = sg->end;
		g->has_limit = sg->has_limit;
		g->first_of_stream = sg->first_of_stream;
		g->lost_before = sg->lost_before;
		g->lost_bytes = sg->lost_bytes;
		g->blind_start = sg->blind_start;
		g->blind_end = sg->blind_end;
	}
	for (s = 0; s < r->nstreams; s++) {
		const struct hwtr_stream_desc *sd = hwtr_ar_stream(r->ar, s);
		size_t n = 0;

		hwtr_sv_stream_segs(pl->sv, s, &pl->res[s].seg0,
		    &pl->res[s].nseg);
		pl->res[s].bytes = hwtr_sv_bytes(pl->sv, s);
		r->im->lost[s] += hwtr_sv_gaps(pl->sv, s);
		r->ix->stats.trace_bytes += pl->res[s].bytes;
		/*
		 * Chunks that cannot be read (each said by sv_problem()): a
		 * decode error each, their bytes not decoded, never a clean
		 * count of nothing.
		 */
		nun = hwtr_sv_unreadable(pl->sv, s, &unread);
		r->ix->stats.errors += nun;
		r->ix->stats.trace_bytes += unread;
		r->ix->stats.undecoded_bytes += unread;
		pl->jmaps[s] = calloc(r->im->nmaps + 1, sizeof(**pl->jmaps));
		if (pl->jmaps[s] == NULL)
			return (-HWTR_E_NOMEM);
		for (k = 0; k < r->im->nmaps; k++)
			if (sd->pid < 0 || r->im->maps[k].pid < 0 ||
			    r->im->maps[k].pid == sd->pid)
				pl->jmaps[s][n++] = &r->im->maps[k];
	}
	r->ix->stats.segments = pl->nsegs;
	return (0);
}

void
ix_free_seg(struct ix_seg *g)
{
	struct ix_batch *b;
	size_t k;

	for (k = 0; g->bq != NULL && k < g->nouts; k++)
		while ((b = g->bq[k].head) != NULL) {
			g->bq[k].head = b->next;
			ix_seg_out_free(&b->out);
			free(b);
		}
	free(g->bq);
	g->bq = NULL;
	free(g->touched);
	g->touched = NULL;
	for (k = 0; g->outs != NULL && k < g->nouts; k++)
		ix_seg_out_free(&g->outs[k]);
	free(g->outs);
	g->outs = NULL;
}

struct pubctx {
	struct run	*r;
	size_t		seg;
	int		nowait;		/* the writer decodes: never wait */
};

/*
 * A worker's CoreSight batch for unit @unit of its segment: queued for
 * the writer.  While the writer is stitching that unit, the worker waits
 * when it is IX_CS_AHEAD batches ahead, so that memory stays bounded; the
 * other units' batches wait for their turn, which comes only once the
 * whole buffer is decoded (as without batches).
 */
static int
publish(void *arg, size_t unit, struct ix_seg_out *out)
{
	struct pubctx *pc = arg;
	struct run *r = pc->r;
	struct ix_pipe *pl = r->pl;
	struct ix_seg *g = &pl->segs[pc->seg];
	struct ix_batch *b;
	struct ix_bq *q;
	int rc = 0;

	if (unit >= g->nouts || (b = calloc(1, sizeof(*b))) == NULL) {
		ix_seg_out_free(out);
		free(out);
		return (-HWTR_E_NOMEM);
	}
	b->out = *out;
	free(out);
	pthread_mutex_lock(&pl->lock);
	q = &g->bq[unit];
	while (!pc->nowait && !pl->abort && q->n >= IX_CS_AHEAD && pl->wbusy &&
	    pl->wseg == pc->seg && pl->wunit == unit)
		pthread_cond_wait(&pl->work_cv, &pl->lock);
	if (pl->abort) {
		rc = -HWTR_E_INTR;
		ix_seg_out_free(&b->out);
		free(b);
	} else {
		if (q->tail != NULL)
			q->tail->next = b;
		else
			q->head = b;
		q->tail = b;
		q->n++;
		pthread_cond_broadcast(&pl->done_cv);
	}
	pthread_mutex_unlock(&pl->lock);
	return (rc);
}

/*
 * Segment @in into @out[in->nouts] with the decoder @ops (segdec.h), the
 * one of the stream's format; none (a format no decoder reads): an empty
 * output.
 */
static void
decode_with(const struct ix_segdec_ops *ops, const struct ix_seg_in *in,
    struct ix_seg_out *out)
{
	void *st;

	if (ops == NULL) {
		memset(out, 0, sizeof(*out));
		return;
	}
	if ((st = ops->new()) == NULL) {
		memset(out, 0, sizeof(*out));
		out->rc = -HWTR_E_NOMEM;
		snprintf(out->err, sizeof(out->err), "out of memory");
		return;
	}
	ops->decode(st, in, out);
	ops->free(st);
}

/* The fast decoder handed a segment to libipt (hwtr_ix_stats). */
static void
count_fallback(struct run *r, const struct ix_seg_out *out)
{
	struct hwtr_ix_stats *st = &r->ix->stats;

	st->fallback_segments++;
	st->fallback_bytes += out->fb_bytes;
	if (out->fallback == 1)
		st->fallback_unsupported++;
	else
		st->fallback_errors++;
	st->fallback_why = out->fb_why;
}

/*
 * Decode segment @i (worker @w; @own: on the writer's thread, whose
 * CoreSight batches cannot wait for itself).
 */
static void
decode_one(struct run *r, size_t w, size_t i, int own)
{
	struct ix_seg *g = &r->pl->segs[i];
	size_t npieces = hwtr_sv_npieces(r->pl->sv, g->stream);
	struct ix_seg_in in;
	struct ix_seg_out *out;
	const uint8_t **bufs = NULL;
	uint8_t **copies = NULL;
	size_t *lens = NULL;
	uint64_t *offs = NULL, to;
	size_t k;
	char err[HWTR_ERRMSG_MAX];
	int rc = 0;

	struct pubctx pc;
	struct ix_bq *bq;
	int *touched;

	memset(&in, 0, sizeof(in));
	g->nouts = g->nleft = ix_stream_units(r, g->stream);
	g->outs = calloc(g->nouts, sizeof(*g->outs));
	if ((out = g->outs) == NULL) {
		hwtr_sv_seg_done(r->pl->sv, i);
		return;		/* the writer says it */
	}
	bq = calloc(g->nouts, sizeof(*bq));
	touched = calloc(g->nouts, sizeof(*touched));
	if (bq == NULL || touched == NULL) {
		free(bq);
		free(touched);
		bq = NULL;
		touched = NULL;
	}
	pthread_mutex_lock(&r->pl->lock);
	g->bq = bq;
	g->touched = touched;
	pthread_mutex_unlock(&r->pl->lock);
	pc.r = r;
	pc.seg = i;
	pc.nowait = own;
	if (bq != NULL && r->pl->cs_batch != 0) {
		in.cs_batch = r->pl->cs_batch;
		in.cs_publish = publish;
		in.cs_publish_arg = &pc;
		in.cs_touched = touched;
	}
	in.nouts = g->nouts;
	in.stream = g->stream;
	in.desc = hwtr_ar_stream(r->ar, g->stream);
	in.cpu = &hwtr_ar_meta(r->ar)->cpu;
	in.maps = r->pl->jmaps[g->stream];
	for (k = 0; k < r->im->nmaps && in.maps[k] != NULL; k++)
		in.nmaps++;
	ix_cpusplit_owners(&r->cs, g->stream, &in.owners, &in.nowners);
	in.img = r->im->img_bytes;
	in.img_len = r->im->img_len;
	in.cancel = r->ix->opts.cancel;
	in.progress = &r->pl->wprogress[w];
	err[0] = '\0';
	if (in.desc->format == HWTR_TF_CORESIGHT &&
	    hwtr_sv_seg_top(r->pl->sv, i, &to) == 0) {
		/* A long stream's cut: [start, end) of a piece. */
		bufs = calloc(1, sizeof(*bufs));
		copies = calloc(1, sizeof(*copies));
		lens = calloc(1, sizeof(*lens));
		offs = calloc(1, sizeof(*offs));
		if (bufs == NULL || copies == NULL || lens == NULL ||
		    offs == NULL)
			rc = -HWTR_E_NOMEM;
		else {
			lens[0] = (size_t)(to - g->start);
			offs[0] = g->start;
			rc = hwtr_sv_read(r->pl->sv, g->stream, g->start, to,
			    &bufs[0], &copies[0], err, sizeof(err));
		}
		in.npieces = 1;
		in.piece = bufs;
		in.piece_len = lens;
		in.piece_off = offs;
		in.blind_start = g->blind_start;
		in.lost_before = g->lost_before;
		in.lost_bytes = g->lost_bytes;
	} else if (in.desc->format == HWTR_TF_CORESIGHT) {
		/* Every piece of the stream. */
		bufs = calloc(npieces + 1, sizeof(*bufs));
		copies = calloc(npieces + 1, sizeof(*copies));
		lens = calloc(npieces + 1, sizeof(*lens));
		offs = calloc(npieces + 1, sizeof(*offs));
		if (bufs == NULL || copies == NULL || lens == NULL ||
		    offs == NULL)
			rc = -HWTR_E_NOMEM;
		for (k = 0; k < npieces && rc == 0; k++) {
			const struct hwtr_sv_piece *q = hwtr_sv_piece(r->pl->sv,
			    g->stream, k);

			lens[k] = q->len;
			offs[k] = q->off;
			rc = hwtr_sv_read(r->pl->sv, g->stream, q->off, q->off +
			    q->len, &bufs[k], &copies[k], err, sizeof(err));
		}
		in.npieces = npieces;
		in.piece = bufs;
		in.piece_len = lens;
		in.piece_off = offs;
	} else {
		(void)hwtr_sv_seg_top(r->pl->sv, i, &to);
		bufs = calloc(1, sizeof(*bufs));
		copies = calloc(1, sizeof(*copies));
		if (bufs == NULL || copies == NULL)
			rc = -HWTR_E_NOMEM;
		else
			rc = hwtr_sv_read(r->pl->sv, g->stream, g->start, to,
			    &bufs[0], &copies[0], err, sizeof(err));
		in.buf = bufs != NULL ? bufs[0] : NULL;
		in.len = (size_t)(to - g->start);
		in.base = g->start;
		in.has_limit = g->has_limit;
		in.limit = g->end;
		in.first_of_stream = g->first_of_stream;
		in.lost_before = g->lost_before;
		in.lost_bytes = g->lost_bytes;
		in.blind_start = g->blind_start;
		in.blind_end = g->blind_end;
	}
	if (rc == 0 && (in.iscache = ix_job_iscache(r->im)) == NULL) {
		rc = -HWTR_E_NOMEM;
		snprintf(err, sizeof(err), "cannot build an image section "
		    "cache");
	}
	if (rc == 0)
		decode_with(ix_segdec_named(r->ix->opts.decoder,
		    in.desc->format), &in, out);
	else {
		out->rc = rc;
		snprintf(out->err, sizeof(out->err), "%s", err[0] ? err :
		    hwtr_errstr(rc));
	}
	if (in.iscache != NULL)
		pt_iscache_free(in.iscache);
	/* The segment's bytes are no longer needed. */
	for (k = 0; copies != NULL && k < (in.npieces ? in.npieces : 1); k++)
		free(copies[k]);
	hwtr_sv_seg_done(r->pl->sv, i);
	free(copies);
	free(bufs);
	free(lens);
	free(offs);
}

struct wctx {
	struct run	*r;
	size_t		w;
};

/* Segment @i is decoded (by worker @w; under lock). */
static void
seg_decoded(struct run *r, size_t w, size_t i)
{
	r->pl->segs[i].done = 1;
	r->pl->bytes_done += r->pl->segs[i].end - r->pl->segs[i].start;
	__atomic_store_n(&r->pl->wprogress[w], 0, __ATOMIC_RELAXED);
	pthread_cond_broadcast(&r->pl->done_cv);
}

/*
 * Whether segment r->pl->next_seg may be decoded now (under lock): within the
 * window ahead of the oldest segment not yet stitched, or in the same
 * stream as that one when the stream has several units.  A CoreSight
 * buffer cut into segments is stitched unit by unit (trace ID order), each
 * unit through every segment of the buffer, and a segment is stitched
 * only once its last unit has been: held to the window, the first unit
 * would wait for a segment nobody may decode.  Such a buffer's decoded
 * output is held until its last unit is stitched, as when it was one
 * segment; its input is still read one segment at a time.
 */
static int
seg_may_start(const struct run *r)
{
	size_t s;

	if (r->pl->next_seg >= r->pl->nsegs)
		return (0);
	if (r->pl->next_seg < r->pl->stitched + r->pl->window)
		return (1);
	s = r->pl->segs[r->pl->stitched].stream;
	return (r->pl->segs[r->pl->next_seg].stream == s &&
	    ix_stream_units(r, s) > 1);
}

/*
 * The next segment to decode, for the writer's thread while it waits
 * (under lock): -j N is N threads in all, the writer's included, so with
 * -j 1 it decodes every segment itself, and with more it decodes rather
 * than wait when a worker is late.  Workers and writer take segments in
 * the same order within the same window, so nothing depends on who
 * decodes what.  A CoreSight buffer is left to the workers when there
 * are any: its decoding holds OpenCSD's lock (cs_decode.c) while a
 * worker decoding another one may wait for the writer to take its
 * batches.
 */
static int
writer_takes(struct run *r, size_t *ip)
{
	const struct ix_seg *g;

	if (r->pl->abort || !seg_may_start(r))
		return (0);
	g = &r->pl->segs[r->pl->next_seg];
	if (r->pl->nworkers > 0 && hwtr_ar_stream(r->ar, g->stream)->format !=
	    HWTR_TF_INTEL_PT)
		return (0);
	*ip = r->pl->next_seg++;
	return (1);
}

/* The writer decodes segment @i (taken under lock; called unlocked). */
static void
writer_decodes(struct run *r, size_t i)
{
	struct timespec t0, t1;
	uint64_t ns;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	decode_one(r, r->pl->nworkers, i, 1);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
	ns = (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000000LL +
	    (t1.tv_nsec - t0.tv_nsec));
	pthread_mutex_lock(&r->pl->lock);
	r->pl->own_decode_ns += ns;
	seg_decoded(r, r->pl->nworkers, i);
	pthread_mutex_unlock(&r->pl->lock);
}

/*
 * Workers take segments in stream order, at most r->pl->window ahead of the
 * writer: memory is bounded by the window, not by the trace.  A worker
 * runs the writer's jobs only when it has no segment to decode, and stays
 * for them until the writer is done.  Taken while it had one, a job cost
 * more CPU than it saved the writer, likely because its rows and pages
 * are in the writer's cache (gz8 -j 2: 5.6-5.8 against 6.2-6.5 user
 * CPU-s, wall as fast; docs/PERFORMANCE.md, Index).
 */
static void *
worker(void *arg)
{
	struct wctx *wc = arg;
	struct run *r = wc->r;
	struct ix_pipe *pl = r->pl;
	size_t i;

	struct timespec t0, t1;

	struct ix_job *j;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	pthread_mutex_lock(&pl->lock);
	for (;;) {
		while (!pl->abort && pl->jq.head == NULL && !seg_may_start(r))
			pthread_cond_wait(&pl->work_cv, &pl->lock);
		if (pl->abort)
			break;
		if (!seg_may_start(r)) {
			if ((j = ix_jobq_take(&pl->jq)) != NULL)
				ix_jobq_run(&pl->jq, j, 1);
			continue;
		}
		i = pl->next_seg++;
		pthread_mutex_unlock(&pl->lock);
		decode_one(r, wc->w, i, 0);
		pthread_mutex_lock(&pl->lock);
		seg_decoded(r, wc->w, i);
	}
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
	r->ix->stats.decode_cpu_ns += (uint64_t)((t1.tv_sec - t0.tv_sec) *
	    1000000000LL + (t1.tv_nsec - t0.tv_nsec));
	pthread_mutex_unlock(&pl->lock);
	return (NULL);
}

static void
report_progress(struct run *r)
{
	uint64_t sum;
	size_t w;

	if (r->ix->opts.progress == NULL)
		return;
	clock_gettime(CLOCK_MONOTONIC, &r->pl->last_report);
	pthread_mutex_lock(&r->pl->lock);
	sum = r->pl->bytes_done;
	for (w = 0; w <= r->pl->nworkers; w++)
		/* Written by the workers as they go: a relaxed read. */
		sum += __atomic_load_n(&r->pl->wprogress[w], __ATOMIC_RELAXED);
	pthread_mutex_unlock(&r->pl->lock);
	if (sum > r->ix->stats.trace_bytes)
		sum = r->ix->stats.trace_bytes;
	r->ix->opts.progress(r->ix->opts.progress_arg, sum,
	    r->ix->stats.trace_bytes);
}

/*
 * Unit @ui of CoreSight segment @g may be left for later: nothing came
 * for it so far and a later unit has a batch waiting (under lock).
 */
static int
defer_unit(const struct ix_seg *g, size_t ui)
{
	size_t v;

	if (g->bq == NULL || g->touched == NULL || ui >= g->nouts ||
	    __atomic_load_n(&g->touched[ui], __ATOMIC_RELAXED))
		return (0);
	for (v = ui + 1; v < g->nouts; v++)
		if (g->bq[v].head != NULL)
			return (1);
	return (0);
}

/*
 * Wait for segment @g of unit @o (under the lock, kept), stitching the
 * CoreSight batches that come and working rather than waiting: the
 * writer's jobs, a segment to decode.  0 when the segment is decoded or
 * left for later (*@deferred), or < 0.
 */
static int
wait_segment(struct run *r, struct ix_seg *g, struct ix_ures *o,
    int may_defer, int *deferred)
{
	int rc = 0;

	for (;;) {
		struct timespec ts;
		struct ix_batch *b;
		struct ix_job *jb;
		size_t j;

		/* CoreSight batches, as they come. */
		if (g->bq != NULL && r->pl->wunit < g->nouts &&
		    (b = g->bq[r->pl->wunit].head) != NULL) {
			g->bq[r->pl->wunit].head = b->next;
			if (b->next == NULL)
				g->bq[r->pl->wunit].tail = NULL;
			g->bq[r->pl->wunit].n--;
			pthread_cond_broadcast(&r->pl->work_cv);
			pthread_mutex_unlock(&r->pl->lock);
			/* Its events name the unit's stream. */
			if (o->name == NULL) {
				o->cs_batched = 1;
				o->trace_id = b->out.trace_id;
			}
			rc = ix_cpu_segment(r, &b->out);
			ix_seg_out_free(&b->out);
			free(b);
			pthread_mutex_lock(&r->pl->lock);
			if (rc < 0)
				break;
			continue;
		}
		if (g->done)
			break;
		if (r->ix->opts.cancel != NULL &&
		    *r->ix->opts.cancel) {
			rc = -HWTR_E_INTR;
			break;
		}
		if (may_defer && defer_unit(g, r->pl->wunit)) {
			*deferred = 1;
			break;
		}
		/* Do the jobs, or decode, rather than wait. */
		if ((jb = ix_jobq_take(&r->pl->jq)) != NULL) {
			ix_jobq_run(&r->pl->jq, jb, 0);
			continue;
		}
		if (writer_takes(r, &j)) {
			pthread_mutex_unlock(&r->pl->lock);
			writer_decodes(r, j);
			pthread_mutex_lock(&r->pl->lock);
			continue;
		}

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 200 * 1000 * 1000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		/* Progress when nothing came for 200 ms. */
		if (pthread_cond_timedwait(&r->pl->done_cv,
		    &r->pl->lock, &ts) == ETIMEDOUT && !g->done) {
			pthread_mutex_unlock(&r->pl->lock);
			report_progress(r);
			pthread_mutex_lock(&r->pl->lock);
		}
	}
	return (rc);
}

/* Stitch unit @u (or leave it, *@deferred, when @may_defer). */
static int
stitch_unit(struct run *r, size_t u, int may_defer, int *deferred)
{
	struct ix_pipe *pl = r->pl;
	size_t k, i, s;
	int rc = 0;

	*deferred = 0;
	{
		struct ix_ures *o = &r->ures[u];
		const struct hwtr_stream_desc *sd;

		s = r->ustream[u];
		sd = hwtr_ar_stream(r->ar, s);
		/* Rows waiting are the previous unit's. */
		if ((rc = ix_flush_pending(r)) < 0)
			return (rc);
		r->wr->cur = u;
		ix_stitch_begin(&r->st);
		/* CoreSight ranges are OpenCSD's: kept as they come. */
		r->st.merge = sd->format == HWTR_TF_INTEL_PT;
		o->format = sd->format;
		if (ix_segdec_pick(sd->format) == NULL &&
		    (o->problem = strdup("no decoder for this trace format")) ==
		    NULL)
			return (-HWTR_E_NOMEM);
		for (k = 0; k < pl->res[s].nseg && rc == 0; k++) {
			struct ix_seg *g;
			struct ix_seg_out *out;

			i = pl->res[s].seg0 + k;
			g = &pl->segs[i];
			pthread_mutex_lock(&pl->lock);
			pl->wseg = i;
			pl->wunit = u - r->ufirst[s];
			pl->wbusy = 1;
			rc = wait_segment(r, g, o, may_defer, deferred);
			pl->wbusy = 0;
			pthread_mutex_unlock(&pl->lock);
			if (rc < 0 || *deferred)
				return (rc);
			if (g->outs == NULL)
				return (-HWTR_E_NOMEM);
			out = &g->outs[u - r->ufirst[s] < g->nouts ?
			    u - r->ufirst[s] : 0];
			if (out->fallback != 0)
				count_fallback(r, out);
			if (out->rc == -HWTR_E_INTR)
				rc = -HWTR_E_INTR;
			else if (out->rc < 0 && o->rc == 0) {
				o->rc = out->rc;
				o->err = strdup(out->err);
			}
			if (rc == 0 && out->problem != NULL &&
			    o->problem == NULL) {
				o->problem = out->problem;
				out->problem = NULL;
			}
			if (rc == 0 && out->name != NULL && o->name == NULL) {
				o->name = out->name;
				out->name = NULL;
				o->trace_id = out->trace_id;
				o->format = out->format;
			}
			if (rc == 0)
				rc = ix_cpu_segment(r, out);
			ix_seg_out_free(out);
			if (--g->nleft > 0)
				continue;
			free(g->outs);
			g->outs = NULL;
			pthread_mutex_lock(&pl->lock);
			pl->stitched = i + 1;
			pthread_cond_broadcast(&pl->work_cv);
			pthread_mutex_unlock(&pl->lock);
			/* Every 200 ms when the writer never has to wait. */
			if (r->ix->opts.progress != NULL) {
				struct timespec now;

				clock_gettime(CLOCK_MONOTONIC, &now);
				if ((now.tv_sec - pl->last_report.tv_sec) * 1000 +
				    (now.tv_nsec - pl->last_report.tv_nsec) /
				    1000000 >= 200)
					report_progress(r);
			}
		}
		if (rc == 0)
			rc = ix_end_stream(r);
	}
	return (rc);
}

/*
 * The writer: every unit's segments, in order, as the workers finish
 * them; each one is freed as soon as its last unit has replayed it.
 *
 * A CoreSight buffer's units are stitched in trace ID order, but the
 * buffer is decoded in one pass: a unit whose trace ID has no trace
 * would hold back the next ones' batches until the end.  Such a unit
 * (nothing routed to it yet, while a later unit has a batch) is left for
 * the end of its stream: with no element it writes no row and makes no
 * block, so the database is the same.  Should an element or event come
 * for it after all, the guess was wrong and the whole index is done
 * again without leaving units for later (r->pl->spec_failed).
 */
static int
stitch_all(struct run *r)
{
	size_t u, *def, ndef = 0, j;
	int rc = 0, d;

	if ((def = calloc(r->nunits + 1, sizeof(*def))) == NULL)
		return (-HWTR_E_NOMEM);
	for (u = 0; u < r->nunits && rc == 0; u++) {
		/*
		 * Only a buffer in one segment: a unit left for later must
		 * not have consumed a segment's output already.
		 */
		rc = stitch_unit(r, u, r->pl->cs_batch != 0 && !r->pl->nospec &&
		    r->pl->res[r->ustream[u]].nseg == 1, &d);
		if (rc == 0 && d)
			def[ndef++] = u;
		if (u + 1 < r->nunits && r->ustream[u + 1] == r->ustream[u])
			continue;
		for (j = 0; j < ndef && rc == 0; j++) {
			size_t s = r->ustream[def[j]];
			struct ix_seg *g = &r->pl->segs[r->pl->res[s].seg0];
			size_t ui = def[j] - r->ufirst[s];
			int touched;

			rc = stitch_unit(r, def[j], 0, &d);
			pthread_mutex_lock(&r->pl->lock);
			touched = g->touched != NULL && ui < g->nouts &&
			    __atomic_load_n(&g->touched[ui], __ATOMIC_RELAXED);
			pthread_mutex_unlock(&r->pl->lock);
			if (rc == 0 && touched) {
				r->pl->spec_failed = 1;
				rc = -HWTR_E_LIMIT;
			}
		}
		ndef = 0;
	}
	free(def);
	report_progress(r);
	return (rc);
}

/*
 * Start the workers.  -j N is N threads in all: N - 1 workers and the
 * writer, which decodes too when it would wait.  They start as soon as
 * the plan is made, and decode the first window of segments while the
 * writer loads the images' symbols and lines and writes the static
 * tables (ix.c).
 */
int
ix_start_pipeline(struct run *r)
{
	pthread_t *tids;
	struct wctx *wc;
	size_t nj, i, started = 0;

	if (r->pl->tids != NULL)
		return (0);
	nj = pl_jobs(r, IX_JOBS_MAX);
	if (nj > r->pl->nsegs)
		nj = r->pl->nsegs > 0 ? r->pl->nsegs : 1;
	r->pl->window = 2 * nj + 1;
	if (r->pl->window > IX_WINDOW_MAX)
		r->pl->window = IX_WINDOW_MAX;
	tids = calloc(nj, sizeof(*tids));
	wc = calloc(nj, sizeof(*wc));
	/* One slot per worker, and the writer's last. */
	r->pl->wprogress = calloc(nj, sizeof(*r->pl->wprogress));
	if (tids == NULL || wc == NULL || r->pl->wprogress == NULL) {
		free(tids);
		free(wc);
		return (-HWTR_E_NOMEM);
	}
	/*
	 * Workers that do not start leave their share to the writer.  Under
	 * the lock: the writer's slot (nworkers) is set before any worker
	 * may publish.
	 */
	pthread_mutex_lock(&r->pl->lock);
	for (i = 0; i + 1 < nj; i++) {
		wc[i].r = r;
		wc[i].w = i;
		if (pthread_create(&tids[i], NULL, worker, &wc[i]) == 0)
			started++;
		else
			break;
	}
	r->pl->nworkers = started;
	/* Jobs queued from now on wait for whoever is free. */
	if (started > 0)
		ix_jobq_share(&r->pl->jq);
	r->pl->tids = tids;
	r->pl->ntids = started;
	r->pl->wctx = wc;
	pthread_mutex_unlock(&r->pl->lock);
	return (0);
}

/* Stitch every unit (the workers started if they were not). */
int
ix_run_pipeline(struct run *r)
{
	struct timespec t0, t1;
	int rc;

	if ((rc = ix_start_pipeline(r)) < 0)
		return (rc);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	rc = stitch_all(r);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
	r->pl->stitch_ns = (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000000LL +
	    (t1.tv_nsec - t0.tv_nsec));
	/* After a failure, the workers stop now: segments are freed. */
	if (rc < 0)
		ix_end_pipeline(r);
	return (rc);
}

/*
 * Stop the workers (if started).  Until then they run the writer's jobs
 * of what follows the pipeline (CPU-mode threads, the symbol copy of the
 * calls).
 */
void
ix_end_pipeline(struct run *r)
{
	size_t i;

	if (r->pl->tids == NULL)
		return;
	pthread_mutex_lock(&r->pl->lock);
	r->pl->abort = 1;
	pthread_cond_broadcast(&r->pl->work_cv);
	pthread_mutex_unlock(&r->pl->lock);
	for (i = 0; i < r->pl->ntids; i++)
		pthread_join(r->pl->tids[i], NULL);
	/*
	 * The writer's own decoding counts as decoding, the jobs the workers
	 * ran for it as writing.
	 */
	r->ix->stats.decode_cpu_ns += r->pl->own_decode_ns - r->pl->jq.other_ns;
	r->ix->stats.write_cpu_ns += r->pl->stitch_ns - r->pl->own_decode_ns +
	    r->pl->jq.other_ns;
	/* Segments decoded but not stitched (after a failure). */
	for (i = 0; i < r->pl->nsegs; i++)
		ix_free_seg(&r->pl->segs[i]);
	free(r->pl->tids);
	free(r->pl->wctx);
	r->pl->tids = NULL;
	r->pl->wctx = NULL;
	r->pl->ntids = 0;
}

struct ix_pipe *
ix_pipe_new(void)
{
	struct ix_pipe *pl;

	if ((pl = calloc(1, sizeof(*pl))) == NULL)
		return (NULL);
	pthread_mutex_init(&pl->lock, NULL);
	pthread_cond_init(&pl->work_cv, NULL);
	pthread_cond_init(&pl->done_cv, NULL);
	ix_jobq_init(&pl->jq, &pl->lock, &pl->work_cv);
	return (pl);
}

void
ix_pipe_free(struct ix_pipe *pl)
{
	size_t i;

	if (pl == NULL)
		return;
	assert(pl->tids == NULL);	/* ix_end_pipeline() joined them */
	for (i = 0; pl->jmaps != NULL && i < pl->njmaps; i++)
		free(pl->jmaps[i]);
	/* And the chunks of segments never decoded (a failure). */
	hwtr_sv_free(pl->sv);
	free(pl->res);
	free(pl->jmaps);
	for (i = 0; i < pl->nsegs; i++)
		ix_free_seg(&pl->segs[i]);
	free(pl->segs);
	free((void *)(uintptr_t)pl->wprogress);
	ix_jobq_destroy(&pl->jq);
	pthread_mutex_destroy(&pl->lock);
	pthread_cond_destroy(&pl->work_cv);
	pthread_cond_destroy(&pl->done_cv);
	free(pl);
}
