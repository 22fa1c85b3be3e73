/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The archive writer.  libarchive produces a pax tar; its output goes
 * through write_cb() into zstd, one zstd frame per tar member (pax header,
 * ustar header, data, padding).  That gives the two properties hwtrace(5)
 * promises: a writer killed at any moment leaves a file whose complete
 * frames are complete members, and any member can be decompressed alone
 * from its frame offset.
 *
 * Stream chunks, the bulk of a capture, are compressed in the background
 * so that chunk N compresses while the caller produces chunk N+1 (zstd -T2
 * overlaps its reading with compressing the same way).  hwtr_aw_chunk()
 * lets libarchive copy the chunk's tar bytes into a job (so the caller may
 * reuse its buffer at once), hands the job to one of up to two worker
 * threads, each with a single-threaded zstd context compressing one whole
 * chunk into one frame, and waits only for the chunk before it.  Workers
 * write finished frames in the order the chunks were given, as soon as
 * each is compressed.  Hence the durability contract of hwtrace.h: a chunk
 * is in the file when its frame is compressed, and at the latest when the
 * next hwtr_aw_chunk(), hwtr_aw_flush() or hwtr_aw_close() returns.  Every
 * other member is written by the caller's thread once no chunk is in
 * flight, so the file's member order is the call order and the bytes do
 * not depend on timing: a chunk's frame is the same whichever thread (or,
 * without threads, the caller) compresses it.  Two jobs exist, so at most
 * two chunks are held in memory (each as its tar bytes plus a compressed
 * copy).
 *
 * Other members' tar headers are buffered first so the frame can carry
 * its exact content size (ZSTD_CCtx_setPledgedSrcSize): readers use it to
 * check ratio bombs and to size buffers without trusting anything else.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>
#include <zstd.h>

#include "hwtr_common.h"
#include "hwtr_elf.h"
#include "hwtr_format.h"
#include "hwtr_jit.h"

#define MT_MIN		(1u << 20)	/* smallest member given to workers */
#define AW_JOBS		2		/* chunks in flight, at most */

enum cb_phase {
	PH_HEADER,		/* buffer tar headers in hdr */
	PH_STREAM,		/* compress into the current frame */
	PH_COPY,		/* collect a chunk's tar bytes in aw->fill */
	PH_DISCARD		/* aborting: drop everything */
};

enum job_state {
	J_FREE,			/* the caller's to fill */
	J_QUEUED,		/* waiting for a worker */
	J_BUSY,			/* a worker compresses or writes it */
	J_DONE			/* written (or failed); the caller reaps it */
};

/*
 * One chunk on its way to the file.  The caller fills it while J_FREE and
 * reads it back once J_DONE; a worker owns it in between.  state is
 * guarded by hwtr_aw.mu.
 */
struct aw_job {
	enum job_state	state;
	uint64_t	seq;		/* order of writing */
	size_t		toc;		/* its table-of-contents entry */
	char		name[64];	/* member name */
	uint8_t		*in;		/* tar bytes: headers, data, padding */
	size_t		inlen, incap;
	uint8_t		*out;		/* its zstd frame */
	size_t		outlen, outcap;
	uint64_t	off;		/* where the frame was written */
	int		rc;
	char		errmsg[HWTR_ERRMSG_MAX];
};

struct aw_worker {
	struct hwtr_aw	*aw;
	pthread_t	thr;
	ZSTD_CCtx	*cctx;		/* single-threaded, the writer's level */
};

struct aw_stream {
	uint32_t	id;
	uint64_t	next;		/* stream offset after the last chunk */
};

struct hwtr_aw {
	int		fd;
	int		debug_system;	/* hwtr_aw_opts.debug_info */
	char		*debug_dir;
	int		(*debug_want)(void *, const char *);
	void		*debug_arg;
	char		*path;		/* final name */
	char		failed[HWTR_NAME_MAX + 1];	/* member whose write failed */
	char		*tmp;		/* name written (".partial") */
	uint64_t	off;		/* file offset of the next frame */
	struct archive	*a;
	ZSTD_CCtx	*cctx;		/* the one in use */
	ZSTD_CCtx	*cctx_mt;	/* with workers, for big members */
	ZSTD_CCtx	*cctx_st;	/* single-threaded, for small ones */
	enum cb_phase	phase;
	uint8_t		*hdr;
	size_t		hdrlen, hdrcap;
	uint8_t		*out;
	size_t		outlen, outcap;
	int		broken;		/* an earlier write failed */
	int		cb_err;		/* set by write_cb */
	char		errmsg[HWTR_ERRMSG_MAX];
	time_t		mtime;

	struct hwtr_toc_ent *toc;
	size_t		ntoc, toccap;

	struct aw_stream *streams;
	size_t		nstreams;

	char		**images;	/* keys */
	size_t		nimages;

	uint8_t		*sb;
	size_t		sblen;
	uint32_t	sbseq;
	uint64_t	nsb;

	struct hwtr_capture_end end;

	/*
	 * Background compression of chunks.  mu guards the jobs' state,
	 * wseq, afail and stop; off and fd belong to the worker whose turn
	 * it is to write (wseq == its job's seq) while jobs are in flight,
	 * to the caller otherwise.
	 */
	int		level;
	int		want_workers;	/* 0: compress chunks in the caller */
	int		nworkers;	/* started */
	struct aw_worker workers[AW_JOBS];
	int		sync_init;	/* mu and the condition variables */
	pthread_mutex_t	mu;
	pthread_cond_t	work_cv;	/* a job was queued, or stop */
	pthread_cond_t	done_cv;	/* a job was written: wseq moved */
	struct aw_job	jobs[AW_JOBS];
	struct aw_job	*fill;		/* the job write_cb fills (PH_COPY) */
	uint64_t	seq;		/* of the next job */
	uint64_t	wseq;		/* of the next job to write */
	int		afail;		/* a job failed: write no later one */
	int		stop;		/* workers: exit when idle */
	char		why[HWTR_ERRMSG_MAX];	/* the first failure, kept */
};

static void
aw_seterr(struct hwtr_aw *aw, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
aw_seterr(struct hwtr_aw *aw, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(aw->errmsg, sizeof(aw->errmsg), fmt, ap);
	va_end(ap);
	/* The failure that broke the writer is what later calls report. */
	if (aw->broken && aw->why[0] == '\0')
		snprintf(aw->why, sizeof(aw->why), "%s", aw->errmsg);
}

/* Keep the message, evaluate to the error (visibly negative). */
#define aw_err(aw, code, ...)	(aw_seterr((aw), __VA_ARGS__), -(code))

static int
write_all(struct hwtr_aw *aw, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	ssize_t n;

	while (len > 0) {
		n = write(aw->fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			aw->broken = 1;
			return (aw_err(aw, HWTR_E_IO, "%s: write at offset "
			    "0x%jx: %s", aw->tmp, (uintmax_t)aw->off,
			    strerror(errno)));
		}
		p += n;
		len -= (size_t)n;
		aw->off += (uint64_t)n;
	}
	return (0);
}

static int
flush_out(struct hwtr_aw *aw)
{
	int rc;

	if (aw->outlen == 0)
		return (0);
	rc = write_all(aw, aw->out, aw->outlen);
	aw->outlen = 0;
	return (rc);
}

/* Feed @len bytes to the current frame; @end finishes it. */
static int
zfeed(struct hwtr_aw *aw, const void *buf, size_t len, int end)
{
	ZSTD_inBuffer in = { buf, len, 0 };
	ZSTD_outBuffer out;
	size_t r;
	int rc;

	for (;;) {
		out.dst = aw->out;
		out.size = aw->outcap;
		out.pos = aw->outlen;
		r = ZSTD_compressStream2(aw->cctx, &out, &in,
		    end ? ZSTD_e_end : ZSTD_e_continue);
		aw->outlen = out.pos;
		if (ZSTD_isError(r)) {
			aw->broken = 1;
			return (aw_err(aw, HWTR_E_IO, "zstd: %s",
			    ZSTD_getErrorName(r)));
		}
		if (aw->outlen == aw->outcap && (rc = flush_out(aw)) < 0)
			return (rc);
		if (end ? r == 0 : in.pos == in.size)
			break;
	}
	return (0);
}

/* Make room for @more bytes after @len in *@bufp (capacity *@capp). */
static int
reserve(uint8_t **bufp, size_t *capp, size_t len, size_t more)
{
	uint8_t *n;
	size_t cap;

	if (*capp - len >= more)
		return (0);
	if (more > SIZE_MAX / 2 - len)
		return (-HWTR_E_NOMEM);
	cap = *capp * 2 > len + more ? *capp * 2 : len + more;
	if ((n = realloc(*bufp, cap)) == NULL)
		return (-HWTR_E_NOMEM);
	*bufp = n;
	*capp = cap;
	return (0);
}

static la_ssize_t
write_cb(struct archive *a, void *arg, const void *buf, size_t len)
{
	struct hwtr_aw *aw = arg;
	struct aw_job *j;

	switch (aw->phase) {
	case PH_DISCARD:
		return ((la_ssize_t)len);
	case PH_HEADER:
		if (reserve(&aw->hdr, &aw->hdrcap, aw->hdrlen, len) < 0) {
			aw->cb_err = -HWTR_E_NOMEM;
			archive_set_error(a, ENOMEM, "out of memory");
			return (-1);
		}
		memcpy(aw->hdr + aw->hdrlen, buf, len);
		aw->hdrlen += len;
		return ((la_ssize_t)len);
	case PH_COPY:
		j = aw->fill;
		if (reserve(&j->in, &j->incap, j->inlen, len) < 0) {
			aw->cb_err = aw_err(aw, HWTR_E_NOMEM, "out of memory "
			    "for '%s' (%zu bytes)", j->name, j->inlen + len);
			archive_set_error(a, ENOMEM, "out of memory");
			return (-1);
		}
		memcpy(j->in + j->inlen, buf, len);
		j->inlen += len;
		return ((la_ssize_t)len);
	case PH_STREAM:
		if ((aw->cb_err = zfeed(aw, buf, len, 0)) < 0) {
			archive_set_error(a, EIO, "%s", aw->errmsg);
			return (-1);
		}
		return ((la_ssize_t)len);
	}
	return (-1);
}

static int
toc_add(struct hwtr_aw *aw, const char *name, uint64_t off, uint64_t csize,
    uint64_t usize, uint64_t size, const uint8_t *sha)
{
	struct hwtr_toc_ent *n, *e;
	size_t cap;

	if (aw->ntoc == aw->toccap) {
		cap = aw->toccap ? aw->toccap * 2 : 64;
		if ((n = realloc(aw->toc, cap * sizeof(*n))) == NULL)
			return (-HWTR_E_NOMEM);
		aw->toc = n;
		aw->toccap = cap;
	}
	e = &aw->toc[aw->ntoc];
	memset(e, 0, sizeof(*e));
	if ((e->name = strdup(name)) == NULL)
		return (-HWTR_E_NOMEM);
	e->offset = off;
	e->csize = csize;
	e->usize = usize;
	e->size = size;
	if (sha != NULL) {
		memcpy(e->sha256, sha, 32);
		e->has_sha256 = 1;
	}
	aw->ntoc++;
	return (0);
}

/* Why the writer refuses to go on: the first failure, with its file. */
static int
broken_err(struct hwtr_aw *aw)
{
	if (aw->why[0] != '\0' && strstr(aw->why, aw->tmp) != NULL)
		return (aw_err(aw, HWTR_E_IO, "an earlier write failed: %s",
		    aw->why));
	if (aw->why[0] != '\0')
		return (aw_err(aw, HWTR_E_IO, "%s: an earlier write failed: %s",
		    aw->tmp, aw->why));
	/* Not through aw_seterr(): this is no reason to keep. */
	snprintf(aw->errmsg, sizeof(aw->errmsg), "%s: an earlier write failed",
	    aw->tmp);
	return (-HWTR_E_IO);
}

/*
 * Start member @name of @len data bytes: libarchive writes its tar headers
 * through write_cb() in the phase the caller set.
 */
static int
tar_header(struct hwtr_aw *aw, const char *name, size_t len)
{
	struct archive_entry *e;

	if (!hwtr_name_ok(name))
		return (aw_err(aw, HWTR_E_INVAL, "bad member name '%s'", name));
	if ((e = archive_entry_new2(aw->a)) == NULL)
		return (-HWTR_E_NOMEM);
	archive_entry_set_pathname(e, name);
	archive_entry_set_size(e, (la_int64_t)len);
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_perm(e, 0644);
	archive_entry_set_mtime(e, aw->mtime, 0);
	aw->cb_err = 0;
	if (archive_write_header(aw->a, e) != ARCHIVE_OK) {
		archive_entry_free(e);
		aw->broken = 1;
		if (aw->cb_err < 0)
			return (aw->cb_err);
		return (aw_err(aw, HWTR_E_IO, "%s: tar header of '%s': %s",
		    aw->tmp, name, archive_error_string(aw->a)));
	}
	archive_entry_free(e);
	return (0);
}

/* The member's data (@len bytes at @buf) and padding, through write_cb(). */
static int
tar_data(struct hwtr_aw *aw, const char *name, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	size_t left;
	la_ssize_t n;

	for (left = len; left > 0; left -= (size_t)n, p += n) {
		n = archive_write_data(aw->a, p, left);
		if (n <= 0) {
			aw->broken = 1;
			if (aw->cb_err < 0)
				return (aw->cb_err);
			return (aw_err(aw, HWTR_E_IO, "%s: data of '%s': %s",
			    aw->tmp, name, archive_error_string(aw->a)));
		}
	}
	if (archive_write_finish_entry(aw->a) != ARCHIVE_OK) {
		aw->broken = 1;
		if (aw->cb_err < 0)
			return (aw->cb_err);
		return (aw_err(aw, HWTR_E_IO, "%s: end of '%s': %s", aw->tmp,
		    name, archive_error_string(aw->a)));
	}
	return (0);
}

static void
cctx_params(ZSTD_CCtx *cctx, int level, size_t *r)
{
	if (!ZSTD_isError(*r))
		*r = ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel,
		    level);
	if (!ZSTD_isError(*r))
		*r = ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
	if (!ZSTD_isError(*r))
		*r = ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 1);
}

/*
 * Compress a job's tar bytes into one frame.  Runs on a worker (or on the
 * caller without workers) and touches nothing but @j and @cctx.
 */
static int
job_compress(ZSTD_CCtx *cctx, struct aw_job *j)
{
	size_t r;

	ZSTD_CCtx_reset(cctx, ZSTD_reset_session_only);
	r = ZSTD_compress2(cctx, j->out, j->outcap, j->in, j->inlen);
	if (ZSTD_isError(r)) {
		snprintf(j->errmsg, sizeof(j->errmsg), "member '%s': zstd: %s",
		    j->name, ZSTD_getErrorName(r));
		return (-HWTR_E_IO);
	}
	j->outlen = r;
	return (0);
}

/*
 * Append a job's frame to the file.  Only the worker whose turn it is (or
 * the caller when nothing is in flight) calls this: it owns fd and off.
 */
static int
job_write(struct hwtr_aw *aw, struct aw_job *j)
{
	const uint8_t *p = j->out;
	size_t len = j->outlen;
	ssize_t n;

	j->off = aw->off;
	while (len > 0) {
		n = write(aw->fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(j->errmsg, sizeof(j->errmsg), "%s: member "
			    "'%s': write at offset 0x%jx: %s", aw->tmp, j->name,
			    (uintmax_t)aw->off, strerror(errno));
			return (-HWTR_E_IO);
		}
		p += n;
		len -= (size_t)n;
		aw->off += (uint64_t)n;
	}
	return (0);
}

/*
 * Start writing a frame back to the disk without waiting for it: the
 * fsync() at close then has little left to do (on 256 MiB of trace it
 * waited ~80 ms for everything; now a few ms), and a crash of the machine
 * loses less.  Called outside the write turn, so the next frame's write
 * does not wait for it.  Advice only: its failure changes nothing.
 */
static void
start_writeback(int fd, uint64_t off, size_t len)
{
#ifdef SYNC_FILE_RANGE_WRITE
	(void)sync_file_range(fd, (off64_t)off, (off64_t)len,
	    SYNC_FILE_RANGE_WRITE);
#else
	(void)fd;
	(void)off;
	(void)len;
#endif
}

/*
 * A worker: compress queued jobs as they come, then wait for the turn of
 * each to write so that frames reach the file in the order given.  After
 * a failed job no later one is written (the file must stay a prefix of
 * what was given).
 */
static void *
worker_main(void *arg)
{
	struct aw_worker *w = arg;
	struct hwtr_aw *aw = w->aw;
	struct aw_job *j;
	uint64_t woff;
	size_t i, wlen;
	int rc, skip;

	pthread_mutex_lock(&aw->mu);
	for (;;) {
		j = NULL;
		for (i = 0; i < AW_JOBS; i++)
			if (aw->jobs[i].state == J_QUEUED &&
			    (j == NULL || aw->jobs[i].seq < j->seq))
				j = &aw->jobs[i];
		if (j == NULL) {
			if (aw->stop)
				break;
			pthread_cond_wait(&aw->work_cv, &aw->mu);
			continue;
		}
		j->state = J_BUSY;
		pthread_mutex_unlock(&aw->mu);
		rc = job_compress(w->cctx, j);
		pthread_mutex_lock(&aw->mu);
		while (aw->wseq != j->seq)
			pthread_cond_wait(&aw->done_cv, &aw->mu);
		skip = aw->afail;
		pthread_mutex_unlock(&aw->mu);
		if (skip) {
			snprintf(j->errmsg, sizeof(j->errmsg), "member '%s': "
			    "not written after an earlier failure", j->name);
			rc = -HWTR_E_IO;
		} else if (rc == 0)
			rc = job_write(aw, j);
		woff = j->off;
		wlen = rc == 0 ? j->outlen : 0;
		pthread_mutex_lock(&aw->mu);
		j->rc = rc;
		if (rc < 0)
			aw->afail = 1;
		j->state = J_DONE;
		aw->wseq++;
		pthread_cond_broadcast(&aw->done_cv);
		if (wlen > 0) {
			/* j is the caller's again: only the copies are used. */
			pthread_mutex_unlock(&aw->mu);
			start_writeback(aw->fd, woff, wlen);
			pthread_mutex_lock(&aw->mu);
		}
	}
	pthread_mutex_unlock(&aw->mu);
	return (NULL);
}

/*
 * Start the workers, the first time a chunk comes.  Workers block every
 * signal, so that signals meant for the program (SIGINT, SIGCHLD of a
 * traced child) reach its own threads.  If a thread cannot be started the
 * writer carries on with fewer, down to none (the caller compresses).
 */
static void
workers_start(struct hwtr_aw *aw)
{
	struct aw_worker *w;
	sigset_t all, old;
	size_t r;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	while (aw->nworkers < aw->want_workers) {
		w = &aw->workers[aw->nworkers];
		w->aw = aw;
		r = 0;
		if ((w->cctx = ZSTD_createCCtx()) == NULL)
			break;
		cctx_params(w->cctx, aw->level, &r);
		if (ZSTD_isError(r) ||
		    pthread_create(&w->thr, NULL, worker_main, w) != 0) {
			ZSTD_freeCCtx(w->cctx);
			w->cctx = NULL;
			break;
		}
		aw->nworkers++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	aw->want_workers = aw->nworkers;
}

/* Let the workers write what is queued, then end them. */
static void
workers_stop(struct hwtr_aw *aw)
{
	int i;

	if (aw->nworkers == 0)
		return;
	pthread_mutex_lock(&aw->mu);
	aw->stop = 1;
	pthread_cond_broadcast(&aw->work_cv);
	pthread_mutex_unlock(&aw->mu);
	for (i = 0; i < aw->nworkers; i++) {
		pthread_join(aw->workers[i].thr, NULL);
		ZSTD_freeCCtx(aw->workers[i].cctx);
	}
	aw->nworkers = 0;
}

/* Take back a written job: its place in the table of contents, its error. */
static int
job_reap(struct hwtr_aw *aw, struct aw_job *j)
{
	int rc = j->rc;

	j->state = J_FREE;
	if (rc < 0) {
		aw->broken = 1;
		if (aw->failed[0] == '\0')
			snprintf(aw->failed, sizeof(aw->failed), "%s", j->name);
		if (aw->why[0] != '\0')
			return (broken_err(aw));
		snprintf(aw->why, sizeof(aw->why), "%s", j->errmsg);
		snprintf(aw->errmsg, sizeof(aw->errmsg), "%s", j->errmsg);
		return (rc);
	}
	aw->toc[j->toc].offset = j->off;
	aw->toc[j->toc].csize = j->outlen;
	return (0);
}

/*
 * Wait until every chunk given before job number @seq is in the file and
 * reap those jobs, oldest first.  The first failure is returned.
 */
static int
jobs_wait(struct hwtr_aw *aw, uint64_t seq)
{
	struct aw_job *j;
	size_t i;
	int rc = 0, r;

	if (!aw->sync_init)
		return (0);
	pthread_mutex_lock(&aw->mu);
	for (;;) {
		j = NULL;
		for (i = 0; i < AW_JOBS; i++)
			if (aw->jobs[i].state != J_FREE &&
			    aw->jobs[i].seq < seq &&
			    (j == NULL || aw->jobs[i].seq < j->seq))
				j = &aw->jobs[i];
		if (j == NULL)
			break;
		while (j->state != J_DONE)
			pthread_cond_wait(&aw->done_cv, &aw->mu);
		r = job_reap(aw, j);
		if (rc == 0)
			rc = r;
	}
	pthread_mutex_unlock(&aw->mu);
	return (rc);
}

/*
 * Write chunk member @name: its tar bytes are copied into a free job and
 * compressed in the background; return once the chunk before it is in the
 * file.
 */
static int
put_chunk(struct hwtr_aw *aw, const char *name, const void *buf, size_t len)
{
	struct aw_job *j;
	size_t i, bound;
	int rc;

	if (aw->broken)
		return (broken_err(aw));
	/* A free job: all of them are free but the last one given. */
	for (;;) {
		j = NULL;
		pthread_mutex_lock(&aw->mu);
		for (i = 0; i < AW_JOBS && j == NULL; i++)
			if (aw->jobs[i].state == J_FREE)
				j = &aw->jobs[i];
		pthread_mutex_unlock(&aw->mu);
		if (j != NULL)
			break;
		if ((rc = jobs_wait(aw, aw->seq - AW_JOBS + 1)) < 0)
			return (rc);
	}
	snprintf(j->name, sizeof(j->name), "%s", name);
	j->inlen = 0;
	j->errmsg[0] = '\0';
	/* The headers take one or two 512-byte blocks; reserve() grows. */
	if (reserve(&j->in, &j->incap, 0, len + 2048) < 0)
		return (aw_err(aw, HWTR_E_NOMEM, "out of memory for '%s' "
		    "(%zu bytes)", name, len));
	aw->fill = j;
	aw->phase = PH_COPY;
	if ((rc = tar_header(aw, name, len)) < 0 ||
	    (rc = tar_data(aw, name, buf, len)) < 0)
		return (rc);
	bound = ZSTD_compressBound(j->inlen);
	if (bound > j->outcap) {
		free(j->out);
		j->outcap = 0;
		if ((j->out = malloc(bound)) == NULL) {
			aw->broken = 1;
			return (aw_err(aw, HWTR_E_NOMEM, "out of memory for "
			    "'%s' (%zu bytes)", name, bound));
		}
		j->outcap = bound;
	}
	/*
	 * The entry is complete in the tar stream now: from here on a
	 * failure breaks the writer (libarchive's output and the file would
	 * disagree).
	 */
	if ((rc = toc_add(aw, name, 0, 0, j->inlen, len, NULL)) < 0) {
		aw->broken = 1;
		return (aw_err(aw, -rc, "%s: out of memory for the table of "
		    "contents at '%s'", aw->tmp, name));
	}
	j->toc = aw->ntoc - 1;
	j->seq = aw->seq++;
	if (aw->want_workers > 0 && aw->nworkers == 0)
		workers_start(aw);
	if (aw->nworkers == 0) {
		/* No workers: the same frame, made here and now. */
		if ((j->rc = job_compress(aw->cctx_st, j)) == 0 &&
		    (j->rc = job_write(aw, j)) == 0)
			start_writeback(aw->fd, j->off, j->outlen);
		aw->wseq++;
		return (job_reap(aw, j));
	}
	pthread_mutex_lock(&aw->mu);
	j->state = J_QUEUED;
	pthread_cond_signal(&aw->work_cv);
	pthread_mutex_unlock(&aw->mu);
	return (jobs_wait(aw, j->seq));
}

/*
 * Write one member @name holding @len bytes at @buf as its own zstd frame,
 * from the caller's thread, after every chunk given before it.
 * @hash: record the data's SHA-256 in the table of contents (chunks skip
 * it; their frame's XXH64 checksum covers them and hashing would halve the
 * writer's speed).
 */
static int
put_member(struct hwtr_aw *aw, const char *name, const void *buf, size_t len,
    int hash, int in_toc)
{
	uint8_t sha[32];
	uint64_t start, usize;
	int rc;

	if ((rc = jobs_wait(aw, UINT64_MAX)) < 0)
		return (rc);
	if (aw->broken)
		return (broken_err(aw));
	aw->phase = PH_HEADER;
	aw->hdrlen = 0;
	if ((rc = tar_header(aw, name, len)) < 0)
		return (rc);
	start = aw->off;
	usize = aw->hdrlen + (((uint64_t)len + 511) & ~(uint64_t)511);
	/*
	 * Workers pay off on big members only; on small ones their
	 * synchronization costs more than it brings.
	 */
	aw->cctx = len >= MT_MIN ? aw->cctx_mt : aw->cctx_st;
	ZSTD_CCtx_reset(aw->cctx, ZSTD_reset_session_only);
	ZSTD_CCtx_setPledgedSrcSize(aw->cctx, usize);
	aw->phase = PH_STREAM;
	if ((rc = zfeed(aw, aw->hdr, aw->hdrlen, 0)) < 0 ||
	    (rc = tar_data(aw, name, buf, len)) < 0)
		return (rc);
	if ((rc = zfeed(aw, NULL, 0, 1)) < 0 || (rc = flush_out(aw)) < 0)
		return (rc);
	if (hash)
		hwtr_sha256(buf, len, sha);
	/* As in the jobs' path: written, so the table must say so. */
	if (in_toc && (rc = toc_add(aw, name, start, aw->off - start, usize,
	    len, hash ? sha : NULL)) < 0) {
		aw->broken = 1;
		return (aw_err(aw, -rc, "%s: out of memory for the table of "
		    "contents at '%s'", aw->tmp, name));
	}
	return (0);
}

static int
put_json(struct hwtr_aw *aw, const char *name, char *text)
{
	int rc;

	if (text == NULL)
		return (aw_err(aw, HWTR_E_NOMEM, "out of memory for '%s'", name));
	rc = put_member(aw, name, text, strlen(text), 1, 1);
	free(text);
	return (rc);
}

static void
aw_free(struct hwtr_aw *aw)
{
	size_t i;

	if (aw == NULL)
		return;
	if (aw->sync_init) {
		workers_stop(aw);
		pthread_cond_destroy(&aw->done_cv);
		pthread_cond_destroy(&aw->work_cv);
		pthread_mutex_destroy(&aw->mu);
	}
	for (i = 0; i < AW_JOBS; i++) {
		free(aw->jobs[i].in);
		free(aw->jobs[i].out);
	}
	if (aw->a != NULL) {
		aw->phase = PH_DISCARD;
		archive_write_free(aw->a);
	}
	ZSTD_freeCCtx(aw->cctx_mt);
	ZSTD_freeCCtx(aw->cctx_st);
	if (aw->fd >= 0)
		close(aw->fd);
	for (i = 0; i < aw->ntoc; i++)
		free((char *)aw->toc[i].name);
	free(aw->toc);
	for (i = 0; i < aw->nimages; i++)
		free(aw->images[i]);
	free(aw->images);
	free(aw->debug_dir);
	free(aw->streams);
	free(aw->sb);
	free(aw->hdr);
	free(aw->out);
	free(aw->path);
	free(aw->tmp);
	free(aw);
}

/*
 * Remove the output after a failure.  Only a regular file: written
 * directly (no_partial, or hwtr_out_create() found one), the name may be
 * a device or a FIFO the caller gave (even /dev/full).
 */
static void
remove_output(struct hwtr_aw *aw)
{
	struct stat st;

	if (aw->fd >= 0 && fstat(aw->fd, &st) == 0 && !S_ISREG(st.st_mode))
		return;
	if (aw->fd < 0 && (lstat(aw->tmp, &st) != 0 || !S_ISREG(st.st_mode)))
		return;
	unlink(aw->tmp);
}

int
hwtr_aw_open(struct hwtr_aw **awp, const char *path,
    const struct hwtr_capture_meta *meta, const struct hwtr_aw_opts *opts,
    char *errbuf, size_t errlen)
{
	struct hwtr_aw *aw;
	int level, threads, rc;
	size_t r;

	*awp = NULL;
	if (errbuf != NULL && errlen > 0)
		errbuf[0] = '\0';
	if (path == NULL || meta == NULL) {
		if (errbuf != NULL)
			snprintf(errbuf, errlen, "no path or no capture meta");
		return (-HWTR_E_INVAL);
	}
	level = opts != NULL && opts->level != 0 ? opts->level : 3;
	threads = opts != NULL && opts->threads != 0 ? opts->threads : 2;
	if (threads < 0)
		threads = 0;
	if ((aw = calloc(1, sizeof(*aw))) == NULL)
		return (-HWTR_E_NOMEM);
	aw->fd = -1;
	aw->level = level;
	aw->want_workers = threads < AW_JOBS ? threads : AW_JOBS;
	if (pthread_mutex_init(&aw->mu, NULL) != 0) {
		free(aw);
		return (-HWTR_E_NOMEM);
	}
	if (pthread_cond_init(&aw->work_cv, NULL) != 0) {
		pthread_mutex_destroy(&aw->mu);
		free(aw);
		return (-HWTR_E_NOMEM);
	}
	if (pthread_cond_init(&aw->done_cv, NULL) != 0) {
		pthread_cond_destroy(&aw->work_cv);
		pthread_mutex_destroy(&aw->mu);
		free(aw);
		return (-HWTR_E_NOMEM);
	}
	aw->sync_init = 1;
	aw->outcap = ZSTD_CStreamOutSize() * 4;
	if ((aw->path = strdup(path)) == NULL ||
	    (aw->out = malloc(aw->outcap)) == NULL ||
	    (aw->sb = malloc(HWTR_SB_MEMBER_MAX)) == NULL ||
	    (aw->cctx_mt = ZSTD_createCCtx()) == NULL ||
	    (aw->cctx_st = ZSTD_createCCtx()) == NULL ||
	    (aw->a = archive_write_new()) == NULL) {
		aw_free(aw);
		return (-HWTR_E_NOMEM);
	}
	if (opts != NULL && opts->debug_info > 0)
		aw->debug_system = 1;
	if (opts != NULL) {
		aw->debug_want = opts->debug_want;
		aw->debug_arg = opts->debug_arg;
	}
	if (opts != NULL && opts->debug_info >= 0 && opts->debug_dir != NULL &&
	    (aw->debug_dir = strdup(opts->debug_dir)) == NULL) {
		aw_free(aw);
		return (-HWTR_E_NOMEM);
	}
	if (opts != NULL && opts->no_partial &&
	    (aw->tmp = strdup(path)) == NULL) {
		aw_free(aw);
		return (-HWTR_E_NOMEM);
	}
	r = 0;
	cctx_params(aw->cctx_mt, level, &r);
	cctx_params(aw->cctx_st, level, &r);
	/* A libzstd built without threads refuses workers: go single. */
	if (!ZSTD_isError(r) && threads > 0 &&
	    !ZSTD_isError(ZSTD_CCtx_setParameter(aw->cctx_mt,
	    ZSTD_c_nbWorkers, threads)))
		/*
		 * For big members written by the caller (images): zstd's
		 * default job at level 3 is several MiB, as large as a typical
		 * member: one job per frame keeps one worker busy.  1 MiB jobs
		 * let every worker take part in one member.
		 */
		(void)ZSTD_CCtx_setParameter(aw->cctx_mt, ZSTD_c_jobSize,
		    1 << 20);
	if (ZSTD_isError(r)) {
		if (errbuf != NULL)
			snprintf(errbuf, errlen, "zstd level %d: %s", level,
			    ZSTD_getErrorName(r));
		aw_free(aw);
		return (-HWTR_E_INVAL);
	}
	if (archive_write_set_format_pax(aw->a) != ARCHIVE_OK ||
	    archive_write_set_bytes_per_block(aw->a, 0) != ARCHIVE_OK ||
	    archive_write_set_bytes_in_last_block(aw->a, 1) != ARCHIVE_OK ||
	    archive_write_open2(aw->a, aw, NULL, write_cb, NULL, NULL) !=
	    ARCHIVE_OK) {
		if (errbuf != NULL)
			snprintf(errbuf, errlen, "libarchive: %s",
			    archive_error_string(aw->a));
		aw_free(aw);
		return (-HWTR_E_IO);
	}
	/*
	 * "@path.partial" is created exclusively, never through a link, mode
	 * 0600 (hwtr_out_create()).  With no_partial the caller names a
	 * device or a FIFO to write to directly.
	 */
	if (aw->tmp != NULL)
		aw->fd = open(aw->tmp, O_WRONLY | O_CREAT | O_TRUNC |
		    O_CLOEXEC, 0600);
	else if ((aw->fd = hwtr_out_create(path, 0, &aw->tmp)) >= 0 &&
	    aw->tmp == NULL && (aw->tmp = strdup(path)) == NULL) {
		/* A device or a FIFO, written directly as with no_partial. */
		close(aw->fd);
		aw_free(aw);
		return (-HWTR_E_NOMEM);
	}
	if (aw->fd < 0) {
		if (errbuf != NULL)
			snprintf(errbuf, errlen, "cannot create '%s.partial': "
			    "%s", path, strerror(errno));
		aw_free(aw);
		return (-HWTR_E_IO);
	}
	aw->mtime = meta->start_ns > 0 ? (time_t)(meta->start_ns / 1000000000) :
	    time(NULL);
	if ((rc = put_json(aw, HWTR_MANIFEST_NAME, hwtr_json_meta(meta))) < 0) {
		if (errbuf != NULL)
			snprintf(errbuf, errlen, "%s", aw->errmsg);
		remove_output(aw);
		aw_free(aw);
		return (rc);
	}
	*awp = aw;
	return (0);
}

const char *
hwtr_aw_errmsg(const struct hwtr_aw *aw)
{
	return (aw != NULL ? aw->errmsg : "no writer");
}

const char *
hwtr_aw_failed_member(const struct hwtr_aw *aw)
{
	return (aw != NULL && aw->failed[0] != '\0' ? aw->failed : NULL);
}

const char *
hwtr_aw_path(const struct hwtr_aw *aw)
{
	return (aw->tmp);
}

static struct aw_stream *
find_stream(struct hwtr_aw *aw, uint32_t id)
{
	/* Ids are assigned 0, 1, 2, ...: the index is the id. */
	if (id < aw->nstreams)
		return (&aw->streams[id]);
	return (NULL);
}

int
hwtr_aw_add_stream(struct hwtr_aw *aw, const struct hwtr_stream_desc *desc,
    uint32_t *idp)
{
	struct hwtr_stream_desc d;
	struct aw_stream *ns;
	char name[64], sname[64];
	size_t i;
	int rc;

	if (desc->format == HWTR_TF_INTEL_PT &&
	    desc->pt.nfilters > HWTR_PT_MAX_FILTERS)
		return (aw_err(aw, HWTR_E_INVAL, "stream: %u address filters "
		    "(at most %d)", desc->pt.nfilters, HWTR_PT_MAX_FILTERS));
	for (i = 0; desc->format == HWTR_TF_INTEL_PT &&
	    i < desc->pt.nfilters; i++)
		if (desc->pt.filter[i].cfg > 2)
			return (aw_err(aw, HWTR_E_INVAL, "stream: address "
			    "filter %zu: cfg %u (0 off, 1 filter, 2 stop)", i,
			    desc->pt.filter[i].cfg));
	if (desc->format != HWTR_TF_INTEL_PT && desc->format != HWTR_TF_NONE) {
		if (desc->cs.nsources > 0 && desc->cs.sources == NULL)
			return (aw_err(aw, HWTR_E_INVAL, "stream: no sources"));
		for (i = 0; i < desc->cs.nsources; i++)
			if (desc->cs.sources[i].nregs > 0 &&
			    desc->cs.sources[i].regs == NULL)
				return (aw_err(aw, HWTR_E_INVAL,
				    "stream: source %zu has no registers", i));
	}
	if ((int)desc->format < 0 || desc->format > HWTR_TF_CORESIGHT)
		return (aw_err(aw, HWTR_E_INVAL, "stream: unknown format %d",
		    (int)desc->format));
	if (aw->nstreams >= UINT32_MAX - 1)
		return (aw_err(aw, HWTR_E_LIMIT, "too many streams"));
	ns = realloc(aw->streams, (aw->nstreams + 1) * sizeof(*ns));
	if (ns == NULL)
		return (-HWTR_E_NOMEM);
	aw->streams = ns;
	d = *desc;
	d.id = (uint32_t)aw->nstreams;
	if (d.name == NULL) {
		if (d.tid >= 0)
			snprintf(sname, sizeof(sname), "tid %d", (int)d.tid);
		else if (d.cpu >= 0)
			snprintf(sname, sizeof(sname), "cpu %d", (int)d.cpu);
		else
			snprintf(sname, sizeof(sname), "stream %u", d.id);
		d.name = sname;
	}
	snprintf(name, sizeof(name), "streams/%u/stream.json", d.id);
	if ((rc = put_json(aw, name, hwtr_json_stream(&d))) < 0)
		return (rc);
	ns[aw->nstreams].id = d.id;
	ns[aw->nstreams].next = 0;
	aw->nstreams++;
	if (idp != NULL)
		*idp = d.id;
	return (0);
}

int
hwtr_aw_chunk(struct hwtr_aw *aw, uint32_t id, uint64_t offset,
    const void *buf, size_t len)
{
	struct aw_stream *s;
	char name[64];
	int rc;

	if ((s = find_stream(aw, id)) == NULL)
		return (aw_err(aw, HWTR_E_NOENT, "chunk: no stream %u", id));
	if (offset == HWTR_AW_APPEND)
		offset = s->next;
	if (offset < s->next)
		return (aw_err(aw, HWTR_E_INVAL, "stream %u: chunk offset 0x%jx "
		    "goes back before 0x%jx", id, (uintmax_t)offset,
		    (uintmax_t)s->next));
	if (len > UINT64_MAX - offset)
		return (aw_err(aw, HWTR_E_INVAL, "stream %u: chunk overflows",
		    id));
	if (len == 0)
		return (0);
	/* Readers hold a chunk whole: no chunk is bigger than the limit. */
	while (len > HWTR_CHUNK_MAX) {
		if ((rc = hwtr_aw_chunk(aw, id, offset, buf,
		    HWTR_CHUNK_MAX)) < 0)
			return (rc);
		buf = (const uint8_t *)buf + HWTR_CHUNK_MAX;
		len -= HWTR_CHUNK_MAX;
		offset += HWTR_CHUNK_MAX;
	}
	/* The offset in the name keeps names unique and sorted. */
	snprintf(name, sizeof(name), "streams/%u/%016" PRIx64 ".chunk", id,
	    offset);
	if ((rc = put_chunk(aw, name, buf, len)) < 0)
		return (rc);
	s->next = offset + len;
	return (0);
}

int
hwtr_aw_has_image(const struct hwtr_aw *aw, const char *key)
{
	size_t i;

	for (i = 0; i < aw->nimages; i++)
		if (strcmp(aw->images[i], key) == 0)
			return (1);
	return (0);
}

/*
 * The separate debug file of image @d, found and verified by
 * hwtr_debug_find(), as member aux/debug/KEY (hwtrace(5)); an image
 * without one gets nothing.
 */
static int
add_debug(struct hwtr_aw *aw, const struct hwtr_image_desc *d,
    const void *buf, size_t len)
{
	char name[HWTR_IMAGE_KEY_MAX + 16], from[4096];
	void *dbg;
	size_t dlen;
	int rc;

	if (hwtr_debug_find(buf, len, d->path, aw->debug_dir,
	    aw->debug_system, &dbg, &dlen, from, sizeof(from)) != 1)
		return (0);
	snprintf(name, sizeof(name), "debug/%s", d->key);
	rc = hwtr_aw_add_aux(aw, name, dbg, dlen);
	free(dbg);
	return (rc == -HWTR_E_EXISTS ? 0 : rc);
}

int
hwtr_aw_add_image(struct hwtr_aw *aw, const struct hwtr_image_desc *desc,
    const void *buf, size_t len, char *key)
{
	struct hwtr_image_desc d;
	struct hwtr_elf_info ei;
	char name[HWTR_IMAGE_KEY_MAX + 16], hex[2 * HWTR_BUILD_ID_MAX + 1];
	char **ni;
	int rc;

	d = *desc;
	if (d.build_id_len > HWTR_BUILD_ID_MAX)
		return (aw_err(aw, HWTR_E_INVAL, "image '%s': build-id of %zu "
		    "bytes", d.path ? d.path : "?", d.build_id_len));
	if ((int)d.kind < 0 || d.kind > HWTR_IMG_MEMORY)
		return (aw_err(aw, HWTR_E_INVAL, "image: unknown kind %d",
		    (int)d.kind));
	if (d.build_id_len == 0 && hwtr_elf_is_elf(buf, len) &&
	    hwtr_elf_parse(buf, len, &ei, NULL, 0) == 0 && ei.build_id_len > 0) {
		memcpy(d.build_id, ei.build_id, ei.build_id_len);
		d.build_id_len = ei.build_id_len;
	}
	d.size = len;
	hwtr_sha256(buf, len, d.sha256);
	if (d.build_id_len > 0) {
		hwtr_hex(hex, d.build_id, d.build_id_len);
		snprintf(d.key, sizeof(d.key), "bid-%s", hex);
	} else {
		hwtr_hex(hex, d.sha256, 32);
		snprintf(d.key, sizeof(d.key), "sha256-%s", hex);
	}
	if (key != NULL)
		memcpy(key, d.key, sizeof(d.key));
	if (hwtr_aw_has_image(aw, d.key))
		return (0);
	if ((ni = realloc(aw->images, (aw->nimages + 1) * sizeof(*ni))) == NULL)
		return (-HWTR_E_NOMEM);
	aw->images = ni;
	snprintf(name, sizeof(name), "images/%s.json", d.key);
	if ((rc = put_json(aw, name, hwtr_json_image(&d))) < 0)
		return (rc);
	snprintf(name, sizeof(name), "images/%s", d.key);
	if ((rc = put_member(aw, name, buf, len, 1, 1)) < 0)
		return (rc);
	if ((aw->images[aw->nimages] = strdup(d.key)) == NULL)
		return (-HWTR_E_NOMEM);
	aw->nimages++;
	if (d.kind == HWTR_IMG_FILE && (aw->debug_system || aw->debug_dir) &&
	    (aw->debug_want == NULL || aw->debug_want(aw->debug_arg,
	    d.path != NULL ? d.path : "")))
		return (add_debug(aw, &d, buf, len));
	return (0);
}

int
hwtr_aw_add_image_file(struct hwtr_aw *aw, const char *path,
    const uint8_t *build_id, size_t build_id_len, char *key)
{
	struct hwtr_image_desc d;
	void *buf;
	size_t len;
	int rc;

	memset(&d, 0, sizeof(d));
	if (build_id_len > HWTR_BUILD_ID_MAX)
		return (aw_err(aw, HWTR_E_INVAL, "image '%s': build-id of %zu "
		    "bytes", path, build_id_len));
	if ((rc = hwtr_read_file(path, 4ULL << 30, &buf, &len, aw->errmsg,
	    sizeof(aw->errmsg))) < 0)
		return (rc);
	d.path = path;
	d.kind = HWTR_IMG_FILE;
	if (build_id != NULL && build_id_len > 0) {
		memcpy(d.build_id, build_id, build_id_len);
		d.build_id_len = build_id_len;
	}
	rc = hwtr_aw_add_image(aw, &d, buf, len, key);
	free(buf);
	return (rc);
}

int
hwtr_aw_flush(struct hwtr_aw *aw)
{
	char name[64];
	int rc;

	/* Every chunk given so far is in the file when this returns. */
	if ((rc = jobs_wait(aw, UINT64_MAX)) < 0)
		return (rc);
	if (aw->sblen == 0)
		return (0);
	snprintf(name, sizeof(name), "sideband/%08" PRIu32 ".sb", aw->sbseq);
	if ((rc = put_member(aw, name, aw->sb, aw->sblen, 1, 1)) < 0)
		return (rc);
	aw->sbseq++;
	aw->sblen = 0;
	return (0);
}

int
hwtr_aw_sideband(struct hwtr_aw *aw, const struct hwtr_sb_rec *rec)
{
	size_t len;
	int rc;

	/* References point backwards so that any prefix is consistent. */
	if ((rec->type == HWTR_SB_LOST && rec->u.lost.stream != UINT32_MAX &&
	    find_stream(aw, rec->u.lost.stream) == NULL) ||
	    (rec->type == HWTR_SB_BUFPOS &&
	    find_stream(aw, rec->u.bufpos.stream) == NULL))
		return (aw_err(aw, HWTR_E_NOENT, "%s record: no stream %u",
		    hwtr_sb_type_name(rec->type), rec->type == HWTR_SB_LOST ?
		    rec->u.lost.stream : rec->u.bufpos.stream));
	if (rec->type == HWTR_SB_MMAP && rec->u.mmap.image != NULL &&
	    !hwtr_aw_has_image(aw, rec->u.mmap.image))
		return (aw_err(aw, HWTR_E_NOENT, "mmap record: image '%s' is not "
		    "stored (add it first)", rec->u.mmap.image));
	rc = hwtr_sb_encode(rec, aw->sb + aw->sblen,
	    HWTR_SB_MEMBER_MAX - aw->sblen, &len, aw->errmsg,
	    sizeof(aw->errmsg));
	if (rc == -HWTR_E_LIMIT) {
		if ((rc = hwtr_aw_flush(aw)) < 0)
			return (rc);
		rc = hwtr_sb_encode(rec, aw->sb, HWTR_SB_MEMBER_MAX, &len,
		    aw->errmsg, sizeof(aw->errmsg));
	}
	if (rc < 0)
		return (rc);
	aw->sblen += len;
	aw->nsb++;
	return (0);
}

int
hwtr_aw_add_aux(struct hwtr_aw *aw, const char *name, const void *buf,
    size_t len)
{
	char full[HWTR_NAME_MAX + 8];
	size_t i;

	if (strlen(name) > HWTR_NAME_MAX - 4 ||
	    snprintf(full, sizeof(full), "aux/%s", name) < 0 ||
	    !hwtr_name_ok(full))
		return (aw_err(aw, HWTR_E_INVAL, "bad auxiliary member name "
		    "'%s'", name));
	for (i = 0; i < aw->ntoc; i++)
		if (strcmp(aw->toc[i].name, full) == 0)
			return (aw_err(aw, HWTR_E_EXISTS, "member '%s' exists",
			    full));
	return (put_member(aw, full, buf, len, 1, 1));
}

int
hwtr_aw_add_jit(struct hwtr_aw *aw, const char *name, const void *buf,
    size_t len)
{
	char full[64];
	size_t i;

	if (!hwtr_jit_name_ok(name) && !hwtr_code_name_ok(name, NULL))
		return (aw_err(aw, HWTR_E_INVAL, "bad JIT member name '%s' "
		    "(perf-PID.map, jit-PID.dump or code-PID.bin)", name));
	snprintf(full, sizeof(full), "%s%s", HWTR_JIT_PREFIX, name);
	for (i = 0; i < aw->ntoc; i++)
		if (strcmp(aw->toc[i].name, full) == 0)
			return (aw_err(aw, HWTR_E_EXISTS, "member '%s' exists",
			    full));
	return (put_member(aw, full, buf, len, 1, 1));
}

void
hwtr_aw_set_end(struct hwtr_aw *aw, const struct hwtr_capture_end *end)
{
	aw->end = *end;
}

static void
le64(uint8_t *p, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/*
 * The end: end.json (the table of contents of every member before it), the
 * tar end-of-archive blocks in a frame of their own, then the skippable
 * trailer frame that points at end.json.
 */
static int
finish(struct hwtr_aw *aw)
{
	uint8_t tr[HWTR_TRAILER_SIZE];
	uint64_t endoff, endcsize;
	struct stat st;
	int rc, e;

	if ((rc = hwtr_aw_flush(aw)) < 0)
		return (rc);
	endoff = aw->off;
	if ((rc = put_json(aw, HWTR_END_NAME, hwtr_json_end(&aw->end, aw->toc,
	    aw->ntoc))) < 0)
		return (rc);
	endcsize = aw->off - endoff;
	aw->cctx = aw->cctx_st;
	ZSTD_CCtx_reset(aw->cctx, ZSTD_reset_session_only);
	ZSTD_CCtx_setPledgedSrcSize(aw->cctx, 1024);
	aw->phase = PH_STREAM;
	aw->cb_err = 0;
	if (archive_write_close(aw->a) != ARCHIVE_OK) {
		aw->broken = 1;
		if (aw->cb_err < 0)
			return (aw->cb_err);
		return (aw_err(aw, HWTR_E_IO, "%s: tar end: %s", aw->tmp,
		    archive_error_string(aw->a)));
	}
	if ((rc = zfeed(aw, NULL, 0, 1)) < 0 || (rc = flush_out(aw)) < 0)
		return (rc);
	tr[0] = (uint8_t)HWTR_TRAILER_MAGIC;
	tr[1] = (uint8_t)(HWTR_TRAILER_MAGIC >> 8);
	tr[2] = (uint8_t)(HWTR_TRAILER_MAGIC >> 16);
	tr[3] = (uint8_t)(HWTR_TRAILER_MAGIC >> 24);
	tr[4] = HWTR_TRAILER_SIZE - 8;
	tr[5] = tr[6] = tr[7] = 0;
	memcpy(tr + 8, HWTR_TRAILER_TAG, 8);
	le64(tr + 16, 1);		/* trailer version */
	le64(tr + 24, endoff);
	le64(tr + 32, endcsize);
	if ((rc = write_all(aw, tr, sizeof(tr))) < 0)
		return (rc);
	/* A pipe or a character device has nothing to sync (EINVAL). */
	if (fsync(aw->fd) != 0 && ((e = errno), fstat(aw->fd, &st) != 0 ||
	    S_ISREG(st.st_mode)))
		return (aw_err(aw, HWTR_E_IO, "%s: fsync: %s", aw->tmp,
		    strerror(e)));
	return (0);
}

int
hwtr_aw_close(struct hwtr_aw *aw, char *errbuf, size_t errlen)
{
	int rc;

	if (aw == NULL)
		return (0);
	if (errbuf != NULL && errlen > 0)
		errbuf[0] = '\0';
	rc = finish(aw);
	/* A worker may still be starting a writeback on the descriptor. */
	workers_stop(aw);
	if (close(aw->fd) != 0 && rc == 0)
		rc = aw_err(aw, HWTR_E_IO, "%s: close: %s", aw->tmp,
		    strerror(errno));
	aw->fd = -1;
	if (rc == 0 && strcmp(aw->tmp, aw->path) != 0 &&
	    hwtr_out_commit(aw->tmp, aw->path) != 0)
		rc = aw_err(aw, HWTR_E_IO, "cannot rename '%s' to '%s': %s",
		    aw->tmp, aw->path, strerror(errno));
	if (rc < 0 && errbuf != NULL)
		snprintf(errbuf, errlen, "%s", aw->errmsg);
	aw_free(aw);
	return (rc);
}

void
hwtr_aw_abort(struct hwtr_aw *aw, int keep)
{
	if (aw == NULL)
		return;
	if (!keep)
		remove_output(aw);
	aw_free(aw);
}
