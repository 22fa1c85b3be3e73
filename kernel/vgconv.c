/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * vgconv.c: the hwtrace Valgrind tool's event files to PT encoder calls.
 *
 * Each thread keeps the address of the next superblock it runs (@pos).
 * Superblocks whose exit is static (no side exit, constant next) leave no
 * record, so they are walked lazily: when the next record of the thread
 * arrives, every such block from @pos on is replayed first.  A record then
 * says which exit of the block at @pos was taken.  Within a superblock the
 * path to an exit is a straight line, so the PT events of the instructions
 * before the exit are static; they are found once per superblock (the x86
 * helper classifies every instruction) and replayed per execution.
 *
 * PT semantics: a syscall (or int) disables tracing synchronously; a signal
 * delivered at an instruction disables it asynchronously there (FUP ip,
 * TIP.PGD: the faulting instruction did not complete); tracing is enabled
 * again where the thread resumes (RESUME records).
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwtrace.h"
#include "hwtr_kernel.h"
#include "hwtr_x86.h"
#include "hwtr_vgevents.h"
#include "vgconv_int.h"

int
vgconv_new(struct vgconv **cvp, const struct vgconv_cb *cb,
    const struct hwtr_log *log)
{
	struct vgconv *cv;

	*cvp = NULL;
	if ((cv = calloc(1, sizeof(*cv))) == NULL)
		return (-HWTR_E_NOMEM);
	cv->cb = *cb;
	if (log != NULL)
		cv->log = *log;
	*cvp = cv;
	return (0);
}

const char *
vgconv_errmsg(const struct vgconv *cv)
{
	return (cv->errmsg);
}

void
vgconv_stats(const struct vgconv *cv, struct vgconv_stats *st)
{
	*st = cv->st;
}


static int
pid_seen(struct vgconv *cv, int32_t pid)
{
	size_t i;
	int32_t *np;

	for (i = 0; i < cv->npids; i++)
		if (cv->pids[i] == pid)
			return (1);
	if (cv->npids == cv->pidcap) {
		np = realloc(cv->pids, (cv->pidcap * 2 + 16) * sizeof(*np));
		if (np == NULL)
			return (-HWTR_E_NOMEM);
		cv->pids = np;
		cv->pidcap = cv->pidcap * 2 + 16;
	}
	cv->pids[cv->npids++] = pid;
	return (0);
}

#define VG_WAIT	0x7a17	/* tagged(): record not consumed, come back later */

/* Keep the parent's superblocks for child @pid. */
static int
snap_take(struct vgconv_file *f, int32_t pid)
{
	struct vgconv *cv = f->cv;
	struct vg_snap *s;
	size_t i;

	s = realloc(cv->snap, (cv->nsnap + 1) * sizeof(*s));
	if (s == NULL)
		return (-HWTR_E_NOMEM);
	cv->snap = s;
	s = &cv->snap[cv->nsnap];
	s->pid = pid;
	s->cap = f->cap;
	s->ndefs = f->ndefs;
	s->defs = NULL;
	if (f->cap > 0) {
		if ((s->defs = malloc(f->cap * sizeof(*s->defs))) == NULL)
			return (-HWTR_E_NOMEM);
		memcpy(s->defs, f->defs, f->cap * sizeof(*s->defs));
		for (i = 0; i < f->cap; i++)
			if (s->defs[i] != NULL)
				s->defs[i]->refs++;
	}
	s->fmaps = NULL;
	s->nfmaps = f->nfmaps;
	if (f->nfmaps > 0) {
		if ((s->fmaps = malloc(f->nfmaps * sizeof(*s->fmaps))) ==
		    NULL) {
			for (i = 0; i < s->cap; i++)
				vgc_def_unref(s->defs[i]);
			free(s->defs);
			return (-HWTR_E_NOMEM);
		}
		memcpy(s->fmaps, f->fmaps, f->nfmaps * sizeof(*s->fmaps));
	}
	cv->nsnap++;
	return (0);
}

/* A fork child's file starts with its parent's superblocks: 1, or 0 wait. */
static int
snap_adopt(struct vgconv_file *f)
{
	struct vgconv *cv = f->cv;
	size_t i;

	for (i = 0; i < cv->nsnap; i++)
		if (cv->snap[i].pid == f->pid)
			break;
	if (i == cv->nsnap) {
		f->waiting = 1;
		return (0);
	}
	f->waiting = 0;
	f->gen = ++cv->gen;
	f->defs = cv->snap[i].defs;
	f->cap = cv->snap[i].cap;
	f->ndefs = cv->snap[i].ndefs;
	free(f->fmaps);
	f->fmaps = cv->snap[i].fmaps;
	f->nfmaps = f->fmcap = cv->snap[i].nfmaps;
	cv->snap[i] = cv->snap[--cv->nsnap];
	return (1);
}

/*
 * A record's path of @n bytes at @p as a string in @buf (of @size bytes);
 * an error naming @what when it does not fit.
 */
static int
rec_path(struct vgconv *cv, const uint8_t *p, uint32_t n, char *buf,
    size_t size, const char *what)
{
	if (n >= size)
		return (vgc_err(cv, HWTR_E_FORMAT, "%s of %u bytes (at most "
		    "%zu)", what, n, size - 1));
	memcpy(buf, p, n);
	buf[n] = '\0';
	return (0);
}

/* The header record: the process image the file is about. */
static int
rec_hdr(struct vgconv_file *f, const uint8_t *p, uint32_t len)
{
	struct vgconv *cv = f->cv;
	char exe[4097];
	uint32_t n;
	int rc, seen;

	if (len < 22 || len < 22u + rd16(p + 20))
		return (vgc_err(cv, HWTR_E_FORMAT, "short header"));
	if (rd32(p) != HWVG_VERSION)
		return (vgc_err(cv, HWTR_E_VERSION,
		    "event file version %u, this hwtrace reads %u",
		    rd32(p), HWVG_VERSION));
	f->pid = (int32_t)rd32(p + 4);
	f->ppid = (int32_t)rd32(p + 8);
	f->time = rd64(p + 12);
	n = rd16(p + 20);
	if ((rc = rec_path(cv, p + 22, n, exe, sizeof(exe),
	    "header: executable path")) < 0)
		return (rc);
	free(f->exe);
	if ((f->exe = strdup(exe)) == NULL)
		return (-HWTR_E_NOMEM);
	if (len >= 26u + n && (rd32(p + 22 + n) & HWVG_HDR_FORKED)) {
		if ((rc = snap_adopt(f)) <= 0)
			return (rc < 0 ? rc : VG_WAIT);
		/* Announced at the parent's FORK record already. */
		f->hdr = 1;
		return (0);
	}
	f->hdr = 1;
	if ((seen = pid_seen(cv, f->pid)) < 0)
		return (seen);
	/*
	 * An exec: the threads going on in the new image start it with
	 * a PSB, where a decoder switches images.
	 */
	if (seen) {
		size_t i;

		for (i = 0; i < cv->nthr; i++)
			if (cv->thr[i]->pid == f->pid &&
			    ENC(cv->thr[i]) != NULL)
				hwtr_ptenc_want_psb(ENC(cv->thr[i]));
	}
	if (cv->cb.proc_start != NULL)
		return (cv->cb.proc_start(cv->cb.arg, f->pid, f->ppid,
		    seen, exe, f->time));
	return (0);
}

/* Ground truth: the @n instruction addresses at @p thread @t ran. */
static int
rec_gt(struct vgconv *cv, struct vg_thr *t, const uint8_t *p, uint32_t n)
{
	uint64_t *ip;
	uint32_t i;
	int rc;

	if ((ip = malloc((n ? n : 1) * sizeof(*ip))) == NULL)
		return (-HWTR_E_NOMEM);
	for (i = 0; i < n; i++)
		ip[i] = rd64(p + 8 * i);
	/* After stop-on-full: up to where the trace ended. */
	if (t->stopped)
		n = t->ngt >= t->ninsn_stop ? 0 :
		    (uint32_t)(t->ninsn_stop - t->ngt < n ?
		    t->ninsn_stop - t->ngt : n);
	t->ngt += n;
	rc = cv->cb.groundtruth(cv->cb.arg, t->tok, ip, n);
	free(ip);
	return (rc);
}

static int
tagged(struct vgconv_file *f, uint8_t tag, const uint8_t *p, uint32_t len)
{
	struct vgconv *cv = f->cv;
	struct vg_thr *t;
	char exe[4097];
	uint32_t n;
	int rc;

	if (tag != HWVG_REC_HDR && !f->hdr)
		return (vgc_err(cv, HWTR_E_FORMAT, "record before the header"));
	switch (tag) {
	case HWVG_REC_HDR:
		return (rec_hdr(f, p, len));
	case HWVG_REC_DEF:
		return (vgc_parse_def(f, p, len));
	case HWVG_REC_RESUME:
		if (len < 20)
			break;
		f->time = rd64(p + 12);
		if ((rc = vgc_thr_get(f, (int32_t)rd32(p), f->time, &t)) < 0)
			return (rc);
		t->time = f->time;
		f->cur = t;
		return (vgc_resume(cv, t, rd64(p + 4)));
	case HWVG_REC_SIGNAL:
		if (len < 24)
			break;
		f->time = rd64(p + 16);
		if ((t = vgc_thr_find(cv, (int32_t)rd32(p))) == NULL)
			return (0);
		t->time = f->time;
		return (vgc_stop_at(cv, t, rd64(p + 8)));
	case HWVG_REC_THREAD_EXIT:
	case HWVG_REC_FINI:
		if (len < 20)
			break;
		f->time = rd64(p + 12);
		if (tag == HWVG_REC_FINI && len >= 24) {
			f->fini = 1;
			f->exitcode = (int)rd32(p + 20);
		}
		if ((t = vgc_thr_find(cv, (int32_t)rd32(p))) == NULL)
			return (0);
		t->time = f->time;
		if ((rc = vgc_stop_at(cv, t, rd64(p + 4))) < 0)
			return (rc);
		return (vgc_thr_close(cv, t, f->time));
	case HWVG_REC_EXEC:
		if (len < 12)
			break;
		f->exec_tid = (int32_t)rd32(p);
		f->time = rd64(p + 4);
		return (0);
	case HWVG_REC_GT:
		if (len < 8 || (n = rd32(p + 4)) > (len - 8) / 8)
			break;
		if ((t = vgc_thr_find(cv, (int32_t)rd32(p))) == NULL ||
		    cv->cb.groundtruth == NULL)
			return (0);
		return (rec_gt(cv, t, p + 8, n));
	case HWVG_REC_MMAP:
		if (len < 38 || len < 38u + rd16(p + 36))
			break;
		f->time = rd64(p + 28);
		n = rd16(p + 36);
		if (cv->cb.anon != NULL && (rc = vgc_fmap_set(f, rd64(p),
		    rd64(p + 8), n > 0)) < 0)
			return (rc);
		if (cv->cb.mmap == NULL)
			return (0);
		if ((rc = rec_path(cv, p + 38, n, exe, sizeof(exe),
		    "mapping: path")) < 0)
			return (rc);
		return (cv->cb.mmap(cv->cb.arg, f->pid, rd64(p), rd64(p + 8),
		    rd64(p + 16), rd32(p + 24), exe, f->time));
	case HWVG_REC_MUNMAP:
		if (len < 24)
			break;
		f->time = rd64(p + 16);
		if (cv->cb.anon != NULL && (rc = vgc_fmap_set(f, rd64(p),
		    rd64(p + 8), 0)) < 0)
			return (rc);
		if (cv->cb.munmap == NULL)
			return (0);
		return (cv->cb.munmap(cv->cb.arg, f->pid, rd64(p), rd64(p + 8),
		    f->time));
	case HWVG_REC_FORK:
		if (len < 16)
			break;
		if ((rc = snap_take(f, (int32_t)rd32(p + 4))) < 0)
			return (rc);
		/*
		 * The child starts here, in the parent's order of things (its
		 * own file may be read much later).
		 */
		f->time = rd64(p + 8);
		if ((rc = pid_seen(cv, (int32_t)rd32(p + 4))) < 0)
			return (rc);
		if (cv->cb.proc_start != NULL)
			return (cv->cb.proc_start(cv->cb.arg,
			    (int32_t)rd32(p + 4), f->pid, 0, f->exe, f->time));
		return (0);
	case HWVG_REC_END:
		if (len >= 16)
			f->time = rd64(p + 8);
		if (len >= 20) {
			f->fini = 1;
			f->exitcode = (int)rd32(p + 16);
		}
		f->complete = 1;
		return (0);
	default:
		return (0);		/* unknown tagged record: skipped */
	}
	return (vgc_err(cv, HWTR_E_FORMAT, "short record 0x%02x", tag));
}

int
vgconv_file_new(struct vgconv *cv, const char *name, struct vgconv_file **fp)
{
	struct vgconv_file *f;

	*fp = NULL;
	if ((f = calloc(1, sizeof(*f))) == NULL)
		return (-HWTR_E_NOMEM);
	if ((f->name = strdup(name)) == NULL) {
		free(f);
		return (-HWTR_E_NOMEM);
	}
	f->cv = cv;
	f->gen = ++cv->gen;
	*fp = f;
	return (0);
}

int
vgconv_file_waiting(const struct vgconv_file *f)
{
	return (f->waiting);
}

int
vgconv_file_complete(const struct vgconv_file *f)
{
	return (f->complete);
}

int32_t
vgconv_file_pid(const struct vgconv_file *f)
{
	return (f->pid);
}

/*
 * An error from below (the encoder, a callback) that left no message: say
 * where in which file it came.
 */
static long
feed_err(struct vgconv_file *f, size_t off, long rc)
{
	if (f->cv->errmsg[0] == '\0')
		(void)vgc_err(f->cv, (int)-rc, "'%s' offset %zu: %s", f->name,
		    f->cv->st.event_bytes + off, hwtr_errstr((int)rc));
	return (rc);
}

long
vgconv_feed(struct vgconv_file *f, const uint8_t *buf, size_t len)
{
	struct vgconv *cv = f->cv;
	size_t off = 0;
	uint32_t rlen;
	int rc;

	if (!f->magic) {
		if (len < 8)
			return (0);
		if (memcmp(buf, HWVG_MAGIC, 8) != 0)
			return (vgc_err(cv, HWTR_E_FORMAT, "'%s': not an event "
			    "file of the hwtrace Valgrind tool", f->name));
		f->magic = 1;
		off = 8;
	}
	while (off < len) {
		uint8_t b = buf[off];

		if (b >= 0xf0) {
			if (len - off < 5)
				break;
			rlen = rd32(buf + off + 1);
			if (rlen > (64u << 20))
				return (vgc_err(cv, HWTR_E_FORMAT,
				    "'%s' offset %zu: record of %u bytes",
				    f->name, off, rlen));
			if (len - off - 5 < rlen)
				break;
			rc = tagged(f, b, buf + off + 5, rlen);
			if (rc < 0)
				return (feed_err(f, off, rc));
			if (rc == VG_WAIT)
				break;
			off += 5 + (size_t)rlen;
		} else {
			long n = vgc_fast_run(f, buf + off, len - off);

			if (n < 0)
				return (feed_err(f, off, n));
			if (n > 0) {
				off += (size_t)n;
				continue;
			}
			if (b & HWVG_INLINE_WIDE) {
				if (len - off < 8)
					break;
				if ((rc = vgc_inline_rec(f, b,
				    rd64(buf + off))) < 0)
					return (feed_err(f, off, rc));
				off += 8;
			} else {
				if ((rc = vgc_inline_rec(f, b, 0)) < 0)
					return (feed_err(f, off, rc));
				off++;
			}
		}
	}
	cv->st.event_bytes += off;
	return ((long)off);
}

/* @f's own memory, its definitions' references dropped. */
static void
file_free(struct vgconv_file *f)
{
	size_t i;

	for (i = 0; i < f->cap; i++)
		vgc_def_unref(f->defs[i]);
	free(f->defs);
	free(f->fmaps);
	free(f->octs);
	free(f->exe);
	free(f->name);
	free(f);
}

int
vgconv_file_end(struct vgconv_file *f, size_t leftover)
{
	struct vgconv *cv = f->cv;
	struct vg_thr *t;
	size_t i;
	int rc = 0, r2;

	if (leftover > 0)
		vgc_log(cv, HWTR_LOG_WARN, "valgrind: '%s' ends in a partial "
		    "record (%zu bytes)", f->name, leftover);
	/*
	 * Walk what the threads ran after their last record (up to a
	 * syscall, typically exit or execve), then close them, except a
	 * thread whose execve replaced the image: it goes on in the next
	 * file of the process.
	 */
	for (i = 0; i < cv->nthr;) {
		t = cv->thr[i];
		if (t->file != f) {
			i++;
			continue;
		}
		r2 = vgc_advance(cv, t, MODE_RECORD, 0);
		if (r2 < 0 && rc == 0)
			rc = r2;
		if (t->tid == f->exec_tid && !f->complete) {
			t->file = NULL;
			i++;
			continue;
		}
		r2 = vgc_thr_close(cv, t, f->time);
		if (r2 < 0 && rc == 0)
			rc = r2;
	}
	if (f->fini && cv->cb.proc_exit != NULL) {
		r2 = cv->cb.proc_exit(cv->cb.arg, f->pid, f->exitcode, f->time);
		if (r2 < 0 && rc == 0)
			rc = r2;
	}
	file_free(f);
	return (rc);
}

int
vgconv_finish(struct vgconv *cv, uint64_t time)
{
	int rc = 0, r2;

	while (cv->nthr > 0) {
		r2 = vgc_thr_close(cv, cv->thr[cv->nthr - 1], time);
		if (r2 < 0 && rc == 0)
			rc = r2;
	}
	return (rc);
}

void
vgconv_set_trigger(struct vgconv *cv, int32_t pid, uint64_t ip)
{
	cv->trigger_pid = pid;
	cv->trigger_ip = ip;
}

void
vgconv_file_abandon(struct vgconv_file *f)
{
	size_t i;

	for (i = 0; i < f->cv->nthr; i++)
		if (f->cv->thr[i]->file == f)
			f->cv->thr[i]->file = NULL;
	file_free(f);
}

void
vgconv_free(struct vgconv *cv)
{
	if (cv == NULL)
		return;
	while (cv->nthr > 0)
		free(cv->thr[--cv->nthr]);
	while (cv->nsnap > 0) {
		struct vg_snap *sn = &cv->snap[--cv->nsnap];
		size_t i;

		for (i = 0; i < sn->cap; i++)
			vgc_def_unref(sn->defs[i]);
		free(sn->defs);
		free(sn->fmaps);
	}
	free(cv->snap);
	free(cv->thr);
	free(cv->pids);
	free(cv->walk);
	free(cv);
}
