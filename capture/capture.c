/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The capture session: drives one trace source through its ops table,
 * gives every traced thread a PT encoder behind a buffer policy, and writes
 * the archive (streams in chunks, sideband, images, ground truth).
 *
 * Buffer policies, per thread:
 *  - stream: bytes go to the archive in chunks of @chunk_size, and at
 *    least every second, so a capture killed with SIGKILL leaves a
 *    ".partial" archive readable up to the last chunk;
 *  - ring: the last @buffer_size bytes are kept; a snapshot writes them
 *    from their first PSB on (so they decode) at their stream offset, the
 *    skipped bytes recorded as HWTR_LOST_WRAP.  Snapshots: thread or
 *    process end (exit or fatal signal), SIGUSR2 (cfg->snapshot), the
 *    --trigger function reached;
 *  - stop: like stream until @buffer_size bytes, then the source ends the
 *    thread's trace (HWTR_LOST_STOPPED records what was not traced).
 */

#include <sys/stat.h>

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hwtr_common.h"
#include "hwtr_import.h"
#include "capture.h"

#define CAP_FLUSH_NS	1000000000ull	/* flush every stream this often */
/*
 * zstd level of a capture's archive.  A capture compresses while the
 * program runs, on the CPUs the program and the source need (the valgrind
 * source converts on a second CPU): level 1 compresses 68 MB of PT in
 * about half the CPU of the writer's default (3) for 16% more bytes.
 * Other writers (import, the archive benchmark) keep the default.
 */
#define CAP_ZSTD_LEVEL	1

struct cap_thread {
	struct hwtr_src_thread st;
	struct cap	*cap;
	uint32_t	stream;
	struct hwtr_ptenc *enc;
	/* stream / stop: bytes not yet in the archive */
	uint8_t		*buf;
	size_t		len, bufcap;
	uint64_t	produced;	/* bytes the encoder wrote */
	uint64_t	written;	/* stream offset written up to */
	/* ring */
	uint8_t		*ring;
	uint64_t	*psb;		/* PSB offsets, oldest first */
	size_t		npsb, psbcap;
	/* ground truth */
	uint64_t	*gt;
	size_t		ngt, gtcap;
	int		ended;
	struct cap_thread *next;
};

static void
cap_err(struct cap *cap, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
cap_err(struct cap *cap, const char *fmt, ...)
{
	va_list ap;

	if (cap->res->errmsg[0] != '\0')
		return;
	va_start(ap, fmt);
	vsnprintf(cap->res->errmsg, sizeof(cap->res->errmsg), fmt, ap);
	va_end(ap);
}

/*
 * Chunks are written in the background: a full disk may show first in a
 * later call (writing sideband), but what failed was the trace chunk.
 */
static int
aw_fail(struct cap *cap, int rc, const char *what)
{
	const char *m = hwtr_aw_failed_member(cap->aw);

	if (m != NULL && strncmp(m, "streams/", 8) == 0)
		what = "writing a trace chunk";
	cap_err(cap, "%s: %s", what, hwtr_aw_errmsg(cap->aw));
	cap->aw_broken = 1;
	return (rc);
}

int
hwtr_cap_sideband(struct cap *cap, const struct hwtr_sb_rec *rec)
{
	int rc;

	if ((rc = hwtr_aw_sideband(cap->aw, rec)) < 0)
		return (aw_fail(cap, rc, "writing sideband"));
	cap->sb_pending = 1;
	if (cap->jit != NULL && (rc = hwtr_jitc_note(cap->jit, rec)) < 0)
		return (rc);
	return (0);
}

/*
 * Before a trace chunk goes to the file, the sideband recorded so far
 * (the mappings and threads it decodes with): a capture killed at any
 * moment leaves both up to the same point.  The time-based flush of
 * flush_all() alone is not enough: a source may hand over chunk after
 * chunk without returning to the capture loop for as long as the
 * program runs (the valgrind source converting a CPU-bound program).
 */
static int
sb_before_chunk(struct cap *cap)
{
	int rc;

	if (!cap->sb_pending)
		return (0);
	if ((rc = hwtr_aw_flush(cap->aw)) < 0)
		return (aw_fail(cap, rc, "writing sideband"));
	cap->sb_pending = 0;
	return (0);
}

static int
lost(struct cap *cap, struct cap_thread *ct, enum hwtr_lost_reason why,
    uint64_t bytes, uint64_t records)
{
	struct hwtr_sb_rec rec;

	memset(&rec, 0, sizeof(rec));
	rec.type = HWTR_SB_LOST;
	rec.time = hwtr_src_now();
	rec.pid = ct->st.pid;
	rec.tid = ct->st.tid;
	rec.u.lost.stream = ct->stream;
	rec.u.lost.reason = why;
	rec.u.lost.bytes = bytes;
	rec.u.lost.records = records;
	cap->res->lost_bytes += bytes;
	return (hwtr_cap_sideband(cap, &rec));
}

/* Write what stream/stop mode buffered as one chunk. */
static int
chunk_out(struct cap_thread *ct)
{
	struct cap *cap = ct->cap;
	int rc;

	if (ct->len == 0)
		return (0);
	if ((rc = sb_before_chunk(cap)) < 0)
		return (rc);
	rc = hwtr_aw_chunk(cap->aw, ct->stream, ct->written, ct->buf,
	    ct->len);
	if (rc < 0)
		return (aw_fail(cap, rc, "writing a trace chunk"));
	ct->written += ct->len;
	cap->res->trace_bytes += ct->len;
	ct->len = 0;
	return (0);
}

/*
 * Ring snapshot: the kept bytes from their first PSB on, at their stream
 * offset; what was overwritten since the last snapshot is recorded lost.
 */
static int
ring_snapshot(struct cap_thread *ct)
{
	struct cap *cap = ct->cap;
	uint64_t size = cap->buffer_size, lo, start, n, pos;
	uint8_t *tmp;
	size_t i;
	int rc;

	lo = ct->produced > size ? ct->produced - size : 0;
	if (lo < ct->written)
		lo = ct->written;
	start = UINT64_MAX;
	if (ct->written > 0 && lo == ct->written)
		start = lo;	/* nothing overwritten: carry on seamlessly */
	for (i = 0; start == UINT64_MAX && i < ct->npsb; i++)
		if (ct->psb[i] >= lo) {
			start = ct->psb[i];
			break;
		}
	if (start == UINT64_MAX || start >= ct->produced) {
		if (ct->produced > ct->written) {
			rc = lost(cap, ct, HWTR_LOST_WRAP,
			    ct->produced - ct->written, 0);
			ct->written = ct->produced;
			return (rc);
		}
		return (0);
	}
	n = ct->produced - start;
	if ((tmp = malloc(n)) == NULL)
		return (-HWTR_E_NOMEM);
	for (pos = 0; pos < n; ) {
		uint64_t at = (start + pos) % size;
		uint64_t m = size - at < n - pos ? size - at : n - pos;

		memcpy(tmp + pos, ct->ring + at, m);
		pos += m;
	}
	if (start > ct->written &&
	    (rc = lost(cap, ct, HWTR_LOST_WRAP, start - ct->written, 0)) < 0) {
		free(tmp);
		return (rc);
	}
	if ((rc = sb_before_chunk(cap)) < 0) {
		free(tmp);
		return (rc);
	}
	rc = hwtr_aw_chunk(cap->aw, ct->stream, start, tmp, n);
	free(tmp);
	if (rc < 0)
		return (aw_fail(cap, rc, "writing a ring snapshot"));
	cap->res->trace_bytes += n;
	ct->written = ct->produced;
	return (0);
}

static int
enc_write(void *arg, const void *buf, size_t len)
{
	struct cap_thread *ct = arg;
	struct cap *cap = ct->cap;
	const uint8_t *p = buf;
	uint8_t *nb;
	size_t at, m;
	int rc;

	if (cap->cfg->mode == HWTR_CAP_RING) {
		while (len > 0) {
			at = (size_t)(ct->produced % cap->buffer_size);
			m = cap->buffer_size - at < len ?
			    cap->buffer_size - at : len;
			memcpy(ct->ring + at, p, m);
			ct->produced += m;
			p += m;
			len -= m;
		}
		return (0);
	}
	if (ct->len + len > ct->bufcap) {
		size_t nc = ct->bufcap ? ct->bufcap : 65536;

		while (nc < ct->len + len)
			nc *= 2;
		if ((nb = realloc(ct->buf, nc)) == NULL)
			return (-HWTR_E_NOMEM);
		ct->buf = nb;
		ct->bufcap = nc;
	}
	memcpy(ct->buf + ct->len, buf, len);
	ct->len += len;
	ct->produced += len;
	if (ct->len >= cap->chunk_size && (rc = chunk_out(ct)) < 0)
		return (rc);
	return (0);
}

static void
enc_psb(void *arg, uint64_t offset)
{
	struct cap_thread *ct = arg;
	struct cap *cap = ct->cap;
	uint64_t *np;
	size_t i, keep;

	if (cap->cfg->mode != HWTR_CAP_RING)
		return;
	/* Forget PSBs that fell out of the ring. */
	if (ct->npsb > 0 && offset > cap->buffer_size) {
		for (i = 0; i < ct->npsb &&
		    ct->psb[i] < offset - cap->buffer_size; i++)
			;
		keep = ct->npsb - i;
		memmove(ct->psb, ct->psb + i, keep * sizeof(*ct->psb));
		ct->npsb = keep;
	}
	if (ct->npsb == ct->psbcap) {
		size_t nc = ct->psbcap ? ct->psbcap * 2 : 64;

		if ((np = realloc(ct->psb, nc * sizeof(*np))) == NULL)
			return;
		ct->psb = np;
		ct->psbcap = nc;
	}
	ct->psb[ct->npsb++] = offset;
}

static int
sbc_fail(struct cap *cap, int rc)
{
	cap_err(cap, "sideband: %s", cap->sbc != NULL ?
	    hwtr_sbc_errmsg(cap->sbc) : hwtr_errstr(rc));
	return (rc);
}

/*
 * Every record of the collector: images stored, then written.  The
 * collector sees the whole process tree (its perf events are inherited);
 * under --no-follow the children are not traced, so nothing decodes their
 * code and their images are not stored (their mappings are still
 * recorded).
 */
static int
sbc_record(void *arg, struct hwtr_sb_rec *rec)
{
	struct cap *cap = arg;
	int rc;

	if (rec->type == HWTR_SB_MMAP && cap->img != NULL &&
	    (!cap->cfg->no_follow || rec->pid == cap->root)) {
		char what[HWTR_ERRMSG_MAX];
		const char *m;

		rc = hwtr_img_mmap(cap->img, rec);
		/* Its messages name the image: "image 'PATH'...". */
		m = hwtr_img_errmsg(cap->img);
		if (rc < 0 && *m == '\0') {
			snprintf(what, sizeof(what), "image '%s': %s",
			    rec->u.mmap.path ? rec->u.mmap.path : "?",
			    hwtr_errstr(rc));
			m = what;
		}
		if (rc == -HWTR_E_NOENT)
			hwtr_logf(&cap->cfg->log, HWTR_LOG_WARN, "process %d: "
			    "no copy to store: %s", (int)rec->pid, m);
		else if (rc < 0) {
			cap_err(cap, "storing %s", m);
			return (rc);
		}
	}
	return (hwtr_cap_sideband(cap, rec));
}

static int
sbc_drain(struct cap *cap, int flush)
{
	int rc;

	if (cap->sbc == NULL)
		return (0);
	if ((rc = hwtr_sbc_read(cap->sbc, flush, sbc_record, cap)) < 0)
		return (cap->res->errmsg[0] ? rc : sbc_fail(cap, rc));
	return (0);
}

/*
 * The first process is there (stopped before its exec, or being attached
 * to): start the sideband collector on it, then the archive, whose first
 * member names the sideband's origin.
 */
/* capture --debug-info=own: the images outside the system's directories. */
static int
cap_debug_own(void *arg, const char *path)
{
	(void)arg;
	return (!hwtr_path_system(path));
}

/* Which separate debug files the archive stores (--debug-info). */
static void
cap_debug_opts(const struct hwtr_cap_config *cfg, struct hwtr_aw_opts *ao)
{
	assert(cfg->debug_info >= HWTR_CAP_DEBUG_ALL &&
	    cfg->debug_info <= HWTR_CAP_DEBUG_NONE);
	ao->debug_info = cfg->no_debug_info ||
	    cfg->debug_info == HWTR_CAP_DEBUG_NONE ? -1 : 1;
	if (cfg->debug_info == HWTR_CAP_DEBUG_OWN)
		ao->debug_want = cap_debug_own;
}

static int
cap_open_archive(struct cap *cap, pid_t pid)
{
	struct hwtr_sbc_opts so;
	struct hwtr_aw_opts ao;
	char errbuf[HWTR_ERRMSG_MAX];
	int rc;

	cap->root = pid;
	memset(&so, 0, sizeof(so));
	so.pid = pid;
	so.attach = cap->cfg->pid > 0;
	so.log = &cap->cfg->log;
	errbuf[0] = '\0';
	/*
	 * A source with sideband of its own (valgrind: its tool reports the
	 * program's processes, threads and mappings) sends every record
	 * through the sink; the collector would see the tool's process.
	 */
	if (cap->src.sideband_origin != NULL)
		cap->meta.sideband_origin = cap->src.sideband_origin;
	else if ((rc = hwtr_sbc_open(&cap->sbc, &so, errbuf,
	    sizeof(errbuf))) < 0) {
		cap_err(cap, "sideband: %s", errbuf[0] ? errbuf :
		    hwtr_errstr(rc));
		return (rc);
	} else
		cap->meta.sideband_origin = hwtr_sbc_origin(cap->sbc);
	errbuf[0] = '\0';
	memset(&ao, 0, sizeof(ao));
	ao.level = CAP_ZSTD_LEVEL;
	/* Each image's separate debug file, where the system keeps it. */
	cap_debug_opts(cap->cfg, &ao);
	rc = hwtr_aw_open(&cap->aw, cap->cfg->output, &cap->meta, &ao,
	    errbuf, sizeof(errbuf));
	if (rc < 0) {
		cap_err(cap, "cannot create '%s': %s", cap->cfg->output,
		    errbuf[0] ? errbuf : hwtr_errstr(rc));
		return (rc);
	}
	if ((rc = hwtr_img_new(&cap->img, cap->aw, &cap->cfg->log)) < 0) {
		cap_err(cap, "images: %s", hwtr_errstr(rc));
		return (rc);
	}
	if ((rc = hwtr_jitc_new(&cap->jit)) < 0)
		return (rc);
	return (0);
}

/* ------------------------------------------------------------------ */
/* The sink the source reports to.                                     */

static int
sink_thread_start(void *arg, int32_t pid, int32_t tid, int32_t ptid,
    uint64_t time, struct hwtr_src_thread **thrp)
{
	struct cap *cap = arg;
	struct hwtr_ptenc_opts eo;
	struct hwtr_ptenc_out out;
	struct hwtr_stream_desc sd;
	struct cap_thread *ct;
	int rc;

	if (cap->aw == NULL && (rc = cap_open_archive(cap, pid)) < 0)
		return (rc);
	if ((ct = calloc(1, sizeof(*ct))) == NULL)
		return (-HWTR_E_NOMEM);
	ct->cap = cap;
	ct->st.pid = pid;
	ct->st.tid = tid;
	ct->st.owner = ct;
	if (cap->cfg->mode == HWTR_CAP_RING &&
	    (ct->ring = malloc(cap->buffer_size)) == NULL) {
		free(ct);
		return (-HWTR_E_NOMEM);
	}
	memset(&sd, 0, sizeof(sd));
	sd.format = HWTR_TF_INTEL_PT;
	sd.pid = pid;
	sd.tid = tid;
	sd.cpu = -1;
	sd.pt = cap->src.pt;
	if (cap->cfg->no_ret_compression)
		sd.pt.options |= HWTR_PT_OPT_NORETCOMP;
	if ((rc = hwtr_aw_add_stream(cap->aw, &sd, &ct->stream)) < 0) {
		free(ct->ring);
		free(ct);
		return (aw_fail(cap, rc, "adding a stream"));
	}
	memset(&eo, 0, sizeof(eo));
	eo.psb_period = cap->psb_period;
	eo.no_ret_compression = cap->cfg->no_ret_compression;
	out.write = enc_write;
	out.psb = enc_psb;
	out.arg = ct;
	if ((rc = hwtr_ptenc_new(&ct->enc, &eo, &out)) < 0) {
		free(ct->ring);
		free(ct);
		return (rc);
	}
	ct->st.enc = ct->enc;
	if (cap->cfg->mode == HWTR_CAP_STOP)
		ct->st.limit = cap->buffer_size;
	if ((rc = cap->src.ops->thread_alloc(&cap->src, &ct->st)) < 0) {
		hwtr_ptenc_free(ct->enc);
		free(ct->ring);
		free(ct);
		return (rc);
	}
	ct->next = cap->threads;
	cap->threads = ct;
	cap->res->nthreads++;
	*thrp = &ct->st;
	/*
	 * The collector reports a process's main thread with the process,
	 * and the threads found when attaching by itself.
	 */
	if (tid != pid && !(cap->cfg->pid > 0 && cap->in_enable) &&
	    cap->sbc != NULL &&
	    (rc = hwtr_sbc_note_clone(cap->sbc, pid, tid, ptid, time)) < 0)
		return (sbc_fail(cap, rc));
	return (0);
}

static int
gt_write(struct cap_thread *ct)
{
	struct cap *cap = ct->cap;
	char name[64];
	uint8_t *le;
	size_t i;
	int rc;

	if (!cap->cfg->ground_truth)
		return (0);
	snprintf(name, sizeof(name), "groundtruth/tid-%d.u64", (int)ct->st.tid);
	if ((le = malloc(ct->ngt * 8 + 1)) == NULL)
		return (-HWTR_E_NOMEM);
	for (i = 0; i < ct->ngt; i++) {
		uint64_t v = ct->gt[i];
		int b;

		for (b = 0; b < 8; b++)
			le[i * 8 + b] = (uint8_t)(v >> (8 * b));
	}
	rc = hwtr_aw_add_aux(cap->aw, name, le, ct->ngt * 8);
	free(le);
	if (rc < 0)
		return (aw_fail(cap, rc, "writing ground truth"));
	return (0);
}

/* Everything a thread's stream still holds goes to the archive. */
static int
thread_finish(struct cap_thread *ct)
{
	struct cap *cap = ct->cap;
	int rc;

	if (ct->enc == NULL)
		return (0);
	if ((rc = hwtr_ptenc_flush(ct->enc)) < 0) {
		cap_err(cap, "stream 'tid %d': encoder: %s", (int)ct->st.tid,
		    hwtr_errstr(rc));
		return (rc);
	}
	if (cap->cfg->mode == HWTR_CAP_RING)
		rc = ring_snapshot(ct);
	else
		rc = chunk_out(ct);
	if (rc < 0)
		return (rc);
	/*
	 * Stop-on-full: the thread runs on untraced (PTRACE_CONT), so how
	 * much was not traced is unknown: the record says that it stopped,
	 * with 0 bytes.
	 */
	if (ct->st.full && (rc = lost(cap, ct, HWTR_LOST_STOPPED, 0, 0)) < 0)
		return (rc);
	if ((rc = gt_write(ct)) < 0)
		return (rc);
	cap->res->instructions += ct->st.ninsn;
	hwtr_ptenc_free(ct->enc);
	ct->enc = NULL;
	ct->st.enc = NULL;
	free(ct->buf);
	ct->buf = NULL;
	free(ct->ring);
	ct->ring = NULL;
	free(ct->gt);
	ct->gt = NULL;
	return (0);
}

static int
sink_thread_exit(void *arg, struct hwtr_src_thread *thr,
    enum hwtr_exit_kind kind, int32_t value, uint64_t time)
{
	struct cap *cap = arg;
	struct cap_thread *ct = thr->owner;
	int rc;

	if (ct->ended)
		return (0);
	ct->ended = 1;
	rc = thread_finish(ct);
	cap->src.ops->thread_free(&cap->src, &ct->st);
	if (rc >= 0 && ct->st.tid != ct->st.pid && cap->sbc != NULL &&
	    (rc = hwtr_sbc_note_exit(
	    cap->sbc, ct->st.pid, ct->st.tid, kind, value, time)) < 0)
		rc = sbc_fail(cap, rc);
	return (rc);
}

static int
sink_proc(void *arg, const struct hwtr_src_proc *ev)
{
	struct cap *cap = arg;
	struct cap_thread *ct;
	struct hwtr_sb_rec rec;
	int rc = 0;

	switch (ev->what) {
	case HWTR_PROC_START:
		cap->res->nprocs++;
		if (cap->aw == NULL)
			return (cap_open_archive(cap, ev->pid));
		if (cap->sbc != NULL)
			rc = hwtr_sbc_note_fork(cap->sbc, ev->pid, ev->ppid,
			    ev->time);
		break;
	case HWTR_PROC_EXEC:
		if (cap->aw == NULL && (rc = cap_open_archive(cap, ev->pid)) < 0)
			return (rc);
		/*
		 * Where the new image starts in each of the process's streams:
		 * the source writes a PSB there, so a decoder can switch images
		 * at that offset without guessing from timestamps.
		 */
		for (ct = cap->threads; ct != NULL; ct = ct->next) {
			if (ct->st.pid != ev->pid || ct->enc == NULL)
				continue;
			memset(&rec, 0, sizeof(rec));
			rec.type = HWTR_SB_BUFPOS;
			rec.time = ev->time;
			rec.pid = ct->st.pid;
			rec.tid = ct->st.tid;
			rec.u.bufpos.stream = ct->stream;
			rec.u.bufpos.offset = hwtr_ptenc_bytes(ct->enc);
			if ((rc = hwtr_cap_sideband(cap, &rec)) < 0)
				return (rc);
		}
		if (cap->sbc != NULL)
			rc = hwtr_sbc_note_exec(cap->sbc, ev->pid, ev->time);
		break;
	case HWTR_PROC_MMAP:
		if (cap->sbc != NULL)
			rc = hwtr_sbc_note_mmap(cap->sbc, ev->pid, ev->time);
		break;
	case HWTR_PROC_EXIT:
		if (cap->sbc != NULL)
			rc = hwtr_sbc_note_exit(cap->sbc, ev->pid, ev->pid,
			    ev->kind, ev->value, ev->time);
		break;
	}
	if (rc < 0)
		return (sbc_fail(cap, rc));
	/* Images are best copied while the process is still there. */
	return (sbc_drain(cap, 0));
}

static int
sink_sideband(void *arg, const struct hwtr_sb_rec *rec)
{
	struct hwtr_sb_rec r;

	/* A mapping a source reports itself: its image is stored too. */
	if (rec->type == HWTR_SB_MMAP && rec->u.mmap.image == NULL) {
		r = *rec;
		return (sbc_record(arg, &r));
	}
	return (hwtr_cap_sideband(arg, rec));
}

static int
sink_groundtruth(void *arg, struct hwtr_src_thread *thr, const uint64_t *ip,
    size_t n)
{
	struct cap_thread *ct = thr->owner;
	uint64_t *ng;

	(void)arg;
	if (ct->ngt + n > ct->gtcap) {
		size_t nc = ct->gtcap ? ct->gtcap : 65536;

		while (nc < ct->ngt + n)
			nc *= 2;
		if ((ng = realloc(ct->gt, nc * sizeof(*ng))) == NULL)
			return (-HWTR_E_NOMEM);
		ct->gt = ng;
		ct->gtcap = nc;
	}
	memcpy(ct->gt + ct->ngt, ip, n * sizeof(*ip));
	ct->ngt += n;
	return (0);
}

static int
sink_lost(void *arg, struct hwtr_src_thread *thr, enum hwtr_lost_reason why,
    uint64_t bytes, uint64_t time)
{
	struct cap_thread *ct = thr->owner;
	struct hwtr_sb_rec rec;

	(void)arg;
	memset(&rec, 0, sizeof(rec));
	rec.type = HWTR_SB_LOST;
	rec.time = time;
	rec.pid = ct->st.pid;
	rec.tid = ct->st.tid;
	rec.u.lost.stream = ct->stream;
	rec.u.lost.reason = why;
	rec.u.lost.bytes = bytes;
	ct->cap->res->lost_bytes += bytes;
	return (hwtr_cap_sideband(ct->cap, &rec));
}

static int
sink_code(void *arg, int32_t pid, uint64_t addr, const uint8_t *bytes,
    uint32_t len, uint64_t time)
{
	struct cap *cap = arg;

	if (cap->jit == NULL)
		return (0);
	return (hwtr_jitc_code(cap->jit, &cap->cfg->log, pid, addr, bytes,
	    len, time));
}

static int
snapshot_all(struct cap *cap)
{
	struct cap_thread *ct;
	int rc;

	if (cap->cfg->mode != HWTR_CAP_RING)
		return (0);
	for (ct = cap->threads; ct != NULL; ct = ct->next) {
		if (ct->enc == NULL)
			continue;
		if ((rc = hwtr_ptenc_flush(ct->enc)) < 0 ||
		    (rc = ring_snapshot(ct)) < 0)
			return (rc);
	}
	return (0);
}

static int
sink_trigger(void *arg, struct hwtr_src_thread *thr, const char *why)
{
	struct cap *cap = arg;

	(void)thr;
	hwtr_logf(&cap->cfg->log, HWTR_LOG_INFO, "trigger '%s' reached: "
	    "snapshot", why != NULL ? why : "?");
	return (snapshot_all(cap));
}

/* Stream and stop modes: hand buffered bytes over now and then. */
static int
flush_all(struct cap *cap)
{
	struct cap_thread *ct;
	int rc;

	if (cap->aw == NULL)
		return (0);
	for (ct = cap->threads; ct != NULL; ct = ct->next) {
		if (ct->enc == NULL || cap->cfg->mode == HWTR_CAP_RING)
			continue;
		if ((rc = hwtr_ptenc_flush(ct->enc)) < 0 ||
		    (rc = chunk_out(ct)) < 0)
			return (rc);
	}
	if ((rc = hwtr_aw_flush(cap->aw)) < 0)
		return (aw_fail(cap, rc, "writing sideband"));
	cap->sb_pending = 0;
	return (0);
}

/* ------------------------------------------------------------------ */
/* Capture identity.                                                   */

/* argv of an attached process, from /proc (NUL-separated). */
static int
read_cmdline(pid_t pid, char **bufp, char ***argvp, size_t *argcp)
{
	char path[64], *buf = NULL, **argv;
	size_t len = 0, cap = 0, n, i, argc = 0;
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	if ((fp = fopen(path, "re")) == NULL)
		return (-HWTR_E_NOENT);
	for (;;) {
		if (len == cap) {
			cap = cap ? 2 * cap : 4096;
			if ((buf = realloc(buf, cap + 1)) == NULL) {
				fclose(fp);
				return (-HWTR_E_NOMEM);
			}
		}
		if ((n = fread(buf + len, 1, cap - len, fp)) == 0)
			break;
		len += n;
	}
	fclose(fp);
	if (buf == NULL && (buf = malloc(1)) == NULL)
		return (-HWTR_E_NOMEM);
	buf[len] = '\0';
	for (i = 0; i < len; i++)
		if (buf[i] == '\0')
			argc++;
	if ((argv = calloc(argc + 1, sizeof(*argv))) == NULL) {
		free(buf);
		return (-HWTR_E_NOMEM);
	}
	for (i = 0, n = 0; n < argc; n++) {
		argv[n] = buf + i;
		i += strlen(buf + i) + 1;
	}
	*bufp = buf;
	*argvp = argv;
	*argcp = argc;
	return (0);
}

int
hwtr_cap_source_known(const char *name)
{
	return (hwtr_src_find(name) != NULL);
}

void
hwtr_cap_config_init(struct hwtr_cap_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->source = NULL;		/* hwtr_src_auto() */
	cfg->mode = HWTR_CAP_STREAM;
}

int
hwtr_cap_exit_status(const struct hwtr_cap_result *res)
{
	switch (res->exit_kind) {
	case HWTR_EXIT_CODE:
		return (res->exit_value & 0xff);
	case HWTR_EXIT_SIGNAL:
		return (128 + res->exit_value);
	default:
		return (0);
	}
}

static void
cap_cleanup(struct cap *cap)
{
	struct cap_thread *ct;

	while ((ct = cap->threads) != NULL) {
		cap->threads = ct->next;
		hwtr_ptenc_free(ct->enc);
		free(ct->buf);
		free(ct->ring);
		free(ct->psb);
		free(ct->gt);
		free(ct);
	}
	hwtr_img_free(cap->img);
	cap->img = NULL;
	hwtr_jitc_free(cap->jit);
	cap->jit = NULL;
	hwtr_sbc_close(cap->sbc);
	cap->sbc = NULL;
	free(cap->cmdargv);
	free(cap->cmdbuf);
}

/*
 * Say now, before anything runs, when the output cannot be created; the
 * archive itself is opened once the first process exists.
 */
static int
output_check(struct cap *cap)
{
	char tmp[4096];
	struct stat st;
	int fd;

	/*
	 * A device, a FIFO or "-" is written into, not replaced: no --force
	 * needed and no temporary name to try.
	 */
	if (hwtr_out_is_stream(cap->cfg->output))
		return (0);
	/* Checked before anything runs: a refused capture costs nothing. */
	if (!cap->cfg->force && lstat(cap->cfg->output, &st) == 0) {
		cap_err(cap, "'%s' exists: give --force to replace it, or "
		    "another -o", cap->cfg->output);
		return (-HWTR_E_EXISTS);
	}
	if (snprintf(tmp, sizeof(tmp), "%s.partial", cap->cfg->output) >=
	    (int)sizeof(tmp)) {
		cap_err(cap, "cannot create '%s': name too long",
		    cap->cfg->output);
		return (-HWTR_E_INVAL);
	}
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600)) < 0) {
		if (errno == EEXIST)
			return (0);	/* the writer replaces it */
		cap_err(cap, "cannot create '%s': %s", cap->cfg->output,
		    strerror(errno));
		return (-HWTR_E_IO);
	}
	close(fd);
	unlink(tmp);
	return (0);
}

/*
 * A hardware source's recording (perf.data) becomes the archive through
 * the perf.data importer, with this capture's identity and end.
 */
static int
cap_recording(struct cap *cap, int interrupted)
{
	struct hwtr_cap_result *res = cap->res;
	struct hwtr_import_opts io;
	struct hwtr_aw_opts ao;
	struct hwtr_capture_end end;
	struct timespec real;
	char errbuf[HWTR_ERRMSG_MAX];
	uint64_t bytes = 0;
	int rc, failed;

	failed = res->exit_kind == HWTR_EXIT_SIGNAL ||
	    (res->exit_kind == HWTR_EXIT_CODE && res->exit_value != 0);
	if (cap->cfg->keep_on_failure && !failed && !interrupted)
		return (0);
	memset(&ao, 0, sizeof(ao));
	ao.level = CAP_ZSTD_LEVEL;
	cap_debug_opts(cap->cfg, &ao);
	memset(&io, 0, sizeof(io));
	io.format = "perf";
	io.aw_opts = &ao;
	memset(&end, 0, sizeof(end));
	clock_gettime(CLOCK_REALTIME, &real);
	end.end_ns = (int64_t)real.tv_sec * 1000000000 + real.tv_nsec;
	end.exit_kind = res->exit_kind;
	end.exit_value = res->exit_value;
	errbuf[0] = '\0';
	rc = hwtr_import_perf_capture(cap->src.recording, &io, &cap->meta,
	    &end, cap->cfg->output, &bytes, errbuf, sizeof(errbuf));
	if (rc < 0) {
		cap_err(cap, "writing '%s' from the perf recording: %s",
		    cap->cfg->output, errbuf[0] ? errbuf : hwtr_errstr(rc));
		return (rc);
	}
	res->trace_bytes = bytes;
	res->lost_bytes = end.lost_bytes;
	res->lost_records = end.lost_records;
	res->kept = 1;
	return (0);
}

/* No source named: the best one that can run the command, said why. */
static const char *
cap_pick_source(const struct hwtr_cap_config *cfg)
{
	const char *source;
	char errbuf[HWTR_ERRMSG_MAX];

	source = hwtr_src_auto(cfg->argv, cfg->pid, errbuf, sizeof(errbuf));
	/*
	 * A launched command is expected to run under valgrind, the
	 * fast source: say once, as a warning, why it does not (a
	 * copied binary without its tool, say).  Attaching can only
	 * step, which is what was asked for.
	 */
	if (strcmp(source, "perf") == 0)
		hwtr_logf(&cfg->log, HWTR_LOG_WARN, "trace source: perf "
		    "(%s)", errbuf);
	else if (cfg->pid == 0 && errbuf[0] != '\0')
		hwtr_logf(&cfg->log, HWTR_LOG_WARN, "trace source: %s "
		    "(not valgrind: %s)", source, errbuf);
	else
		hwtr_logf(&cfg->log, HWTR_LOG_INFO, "trace source: "
		    "%s%s%s", source, errbuf[0] ? " " : "", errbuf);
	return (source);
}

/* Buffer, chunk and PSB sizes; the output can be written. */
static int
cap_sizes(struct cap *cap)
{
	const struct hwtr_cap_config *cfg = cap->cfg;

	cap->buffer_size = cfg->buffer_size ? cfg->buffer_size : 4u << 20;
	cap->chunk_size = cfg->chunk_size ? cfg->chunk_size : 1u << 20;
	cap->psb_period = cfg->psb_period ? cfg->psb_period : 4096;
	if (cfg->mode == HWTR_CAP_RING) {
		/* A ring must hold PSBs to be decodable from its start. */
		if (cap->buffer_size < 4096) {
			cap_err(cap, "a ring buffer needs at least 4K bytes");
			return (-HWTR_E_INVAL);
		}
		while (cap->psb_period > cap->buffer_size / 4)
			cap->psb_period /= 2;
	}
	return (output_check(cap));
}

/* The source's configuration from the session's; the trigger resolved. */
static int
cap_src_config(struct cap *cap, struct hwtr_src_config *scfg)
{
	const struct hwtr_cap_config *cfg = cap->cfg;
	int rc;

	memset(scfg, 0, sizeof(*scfg));
	scfg->argv = cfg->argv;
	scfg->pid = cfg->pid;
	scfg->no_follow = cfg->no_follow;
	scfg->ground_truth = cfg->ground_truth;
	scfg->stop = cfg->stop;
	scfg->log = cfg->log;
	scfg->mode = (int)cfg->mode;
	scfg->buffer_size = cfg->buffer_size;
	scfg->no_ret_compression = cfg->no_ret_compression;
	scfg->snapshot = cfg->snapshot;
	scfg->filter = cfg->filter;
	scfg->cpus = cfg->cpus;
	scfg->all_cpus = cfg->all_cpus;
	if (cfg->trigger != NULL) {
		rc = cap_trigger_resolve(cap, cfg->trigger,
		    &scfg->trigger_vaddr, &scfg->trigger_pie);
		if (rc < 0)
			return (rc);
		scfg->trigger_name = cfg->trigger;
	}
	return (0);
}

/* The archive's meta: host, source, CPU, command line, start time. */
static void
cap_meta(struct cap *cap)
{
	const struct hwtr_cap_config *cfg = cap->cfg;
	struct timespec real;
	size_t cmdargc = 0;

	if (gethostname(cap->host, sizeof(cap->host)) < 0)
		strcpy(cap->host, "unknown");
	cap->host[sizeof(cap->host) - 1] = '\0';
	cap->meta.host = cap->host;
	cap->meta.source = cap->src.ops->name;
	cap->meta.source_version = cap->src.version;
	cap->meta.caveats = cap->src.caveats;
	cap->meta.ncaveats = cap->src.ncaveats;
	cap->meta.notes = cap->src.notes;
	cap->meta.nnotes = cap->src.nnotes;
	hwtr_cpu_host(&cap->meta.cpu);
	if (cfg->argv != NULL) {
		cap->meta.argv = (const char *const *)cfg->argv;
		while (cfg->argv[cap->meta.argc] != NULL)
			cap->meta.argc++;
	} else if (read_cmdline(cfg->pid, &cap->cmdbuf, &cap->cmdargv,
	    &cmdargc) == 0) {
		cap->meta.argv = (const char *const *)cap->cmdargv;
		cap->meta.argc = cmdargc;
	}
	/* --redact-args: the program, not what it was told (passwords). */
	if (cfg->redact_args && cap->meta.argc > 1)
		cap->meta.argc = 1;
	clock_gettime(CLOCK_REALTIME, &real);
	cap->meta.start_ns = (int64_t)real.tv_sec * 1000000000 + real.tv_nsec;
	cap->meta.tconv = cap->src.tconv;
}

/*
 * Enable the source and read it until the program ends or the capture
 * is stopped (*@interrupted then 1); snapshots and flushes on the way.
 * Threads the source did not end are ended here.
 */
static int
cap_loop(struct cap *cap, int *interrupted)
{
	const struct hwtr_cap_config *cfg = cap->cfg;
	struct cap_thread *ct;
	uint64_t last_flush;
	int rc, done, snap_seen = 0, detach_now = 0;

	cap->in_enable = 1;
	rc = cap->src.ops->enable(&cap->src);
	cap->in_enable = 0;
	if (rc < 0) {
		if (cap->src.errmsg[0] != '\0')
			snprintf(cap->res->errmsg, sizeof(cap->res->errmsg),
			    "%s", cap->src.errmsg);
		cap->res->exec_errno = cap->src.exec_errno;
		/* Let go of whatever the source already held. */
		(void)cap->src.ops->disable(&cap->src);
		return (rc);
	}
	last_flush = hwtr_src_now();
	for (done = 0; !done; ) {
		rc = cap->src.ops->read(&cap->src);
		if (rc < 0) {
			cap_err(cap, "%s", cap->src.errmsg[0] ?
			    cap->src.errmsg : hwtr_errstr(rc));
			(void)cap->src.ops->disable(&cap->src);
			return (rc);
		}
		done = rc == 1;
		if (cfg->snapshot != NULL && *cfg->snapshot != snap_seen) {
			snap_seen = *cfg->snapshot;
			hwtr_logf(&cfg->log, HWTR_LOG_INFO, "SIGUSR2: snapshot%s",
			    cfg->pid > 0 ? ", then detach" : "");
			if ((rc = snapshot_all(cap)) < 0)
				return (rc);
			/* Attached: SIGUSR2 also ends the capture. */
			if (cfg->pid > 0)
				detach_now = 1;
		}
		if (!done && ((cfg->stop != NULL && *cfg->stop) || detach_now)) {
			*interrupted = 1;
			if ((rc = cap->src.ops->disable(&cap->src)) < 0) {
				cap_err(cap, "%s", cap->src.errmsg);
				return (rc);
			}
			done = 1;
		}
		if ((rc = sbc_drain(cap, 0)) < 0)
			return (rc);
		if (hwtr_src_now() - last_flush >= CAP_FLUSH_NS) {
			if ((rc = flush_all(cap)) < 0)
				return (rc);
			last_flush = hwtr_src_now();
		}
	}
	/* Threads the source did not end (it should have): end them here. */
	for (ct = cap->threads; ct != NULL; ct = ct->next)
		if (!ct->ended) {
			ct->ended = 1;
			if ((rc = thread_finish(ct)) < 0)
				return (rc);
		}
	return (0);
}

/*
 * After the source is gone: the last sideband, the end record, then the
 * archive closed, or dropped under --keep-on-failure when the program
 * did not fail.  On an error the archive is left to the caller.
 */
static int
cap_finish(struct cap *cap, int interrupted)
{
	const struct hwtr_cap_config *cfg = cap->cfg;
	struct hwtr_cap_result *res = cap->res;
	struct hwtr_capture_end end;
	struct hwtr_sbc_stats sst;
	struct timespec real;
	char errbuf[HWTR_ERRMSG_MAX], *tmp;
	int rc, failed;

	if ((rc = sbc_drain(cap, 1)) < 0)
		return (rc);
	memset(&sst, 0, sizeof(sst));
	if (cap->sbc != NULL)
		hwtr_sbc_stats(cap->sbc, &sst);
	res->lost_records = sst.lost;

	memset(&end, 0, sizeof(end));
	clock_gettime(CLOCK_REALTIME, &real);
	end.end_ns = (int64_t)real.tv_sec * 1000000000 + real.tv_nsec;
	end.exit_kind = res->exit_kind;
	end.exit_value = res->exit_value;
	end.lost_bytes = res->lost_bytes;
	end.lost_records = res->lost_records;
	hwtr_aw_set_end(cap->aw, &end);
	/* The program is done writing its JIT symbol files. */
	if (cap->jit != NULL &&
	    (rc = hwtr_jitc_store(cap->jit, cap->aw, &cfg->log)) < 0)
		return (aw_fail(cap, rc, "storing JIT symbols"));
	failed = res->exit_kind == HWTR_EXIT_SIGNAL ||
	    (res->exit_kind == HWTR_EXIT_CODE && res->exit_value != 0);
	if (cfg->keep_on_failure && !failed && !interrupted) {
		hwtr_aw_abort(cap->aw, 0);
		cap->aw = NULL;
		cap_cleanup(cap);
		return (0);
	}
	errbuf[0] = '\0';
	/*
	 * A close that fails failed to write (a full disk, a file size
	 * limit): its .partial goes, as after any failed write (see
	 * hwtr_cap_run()), and gives its space back.
	 */
	if ((tmp = strdup(hwtr_aw_path(cap->aw))) == NULL)
		return (-HWTR_E_NOMEM);
	rc = hwtr_aw_close(cap->aw, errbuf, sizeof(errbuf));
	cap->aw = NULL;
	cap_cleanup(cap);
	if (rc < 0) {
		cap_err(cap, "cannot write '%s': %s", cfg->output,
		    errbuf[0] ? errbuf : hwtr_errstr(rc));
		if (strcmp(tmp, cfg->output) != 0)
			(void)unlink(tmp);
		free(tmp);
		return (rc);
	}
	free(tmp);
	res->kept = 1;
	return (0);
}

int
hwtr_cap_run(const struct hwtr_cap_config *cfg, struct hwtr_cap_result *res)
{
	static const struct hwtr_src_sink sink_ops = {
		NULL, sink_thread_start, sink_thread_exit, sink_proc,
		sink_sideband, sink_groundtruth, sink_trigger, sink_lost,
		sink_code
	};
	struct hwtr_src_sink sink = sink_ops;
	const char *source = cfg->source;
	struct hwtr_src_config scfg;
	struct cap cap;
	int rc, interrupted = 0;

	memset(res, 0, sizeof(*res));
	memset(&cap, 0, sizeof(cap));
	cap.cfg = cfg;
	cap.res = res;
	sink.arg = &cap;
	if (source == NULL)
		source = cap_pick_source(cfg);
	if ((cap.src.ops = hwtr_src_find(source)) == NULL) {
		cap_err(&cap, "unknown trace source '%s'", source ?
		    source : "(null)");
		return (-HWTR_E_UNSUPPORTED);
	}
	cap.src.sink = &sink;
	if ((rc = cap_sizes(&cap)) < 0 ||
	    (rc = cap_src_config(&cap, &scfg)) < 0)
		return (rc);
	if ((rc = cap.src.ops->init(&cap.src)) < 0) {
		cap_err(&cap, "source '%s': %s", source, hwtr_errstr(rc));
		return (rc);
	}
	if ((rc = cap.src.ops->configure(&cap.src, &scfg)) < 0) {
		cap_err(&cap, "%s", cap.src.errmsg);
		cap.src.ops->deinit(&cap.src);
		return (rc);
	}
	cap_meta(&cap);
	if ((rc = cap_loop(&cap, &interrupted)) < 0)
		goto fail;
	res->exit_kind = cap.src.exit_kind;
	res->exit_value = cap.src.exit_value;
	if (cap.src.recording != NULL) {
		rc = cap_recording(&cap, interrupted);
		cap.src.ops->deinit(&cap.src);
		cap_cleanup(&cap);
		return (rc);
	}
	cap.src.ops->deinit(&cap.src);
	if (cap.aw == NULL) {
		cap_err(&cap, "the trace source reported no process");
		cap_cleanup(&cap);
		return (-HWTR_E_IO);
	}
	if ((rc = cap_finish(&cap, interrupted)) < 0 && cap.aw != NULL)
		goto fail_deinited;
	return (rc);

fail:
	res->exit_kind = cap.src.exit_kind;
	res->exit_value = cap.src.exit_value;
	cap.src.ops->deinit(&cap.src);
fail_deinited:
	/*
	 * Keep what was written: it is a valid partial archive.  Unless
	 * writing it is what failed (a full disk): then it goes, with the
	 * space it holds, whatever the source.
	 */
	if (cap.aw != NULL)
		hwtr_aw_abort(cap.aw, res->trace_bytes > 0 && !cap.aw_broken);
	cap_cleanup(&cap);
	return (rc < 0 ? rc : -HWTR_E_IO);
}
