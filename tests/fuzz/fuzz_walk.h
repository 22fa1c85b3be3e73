/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * fuzz_walk.h: open an archive and touch everything the reader hands out,
 * the way hwtrace info, verify and the indexer will.  Shared by the
 * libFuzzer target (fuzz_reader.c) and the seed-corpus regression test
 * (t_corpus.c), so that what the fuzzer exercised is what the suite
 * replays.
 *
 * Every string is read to its end and every buffer to its last byte, so
 * that AddressSanitizer sees a dangling pointer or a short buffer the
 * moment the reader returns one.
 */

#ifndef HWTR_FUZZ_WALK_H
#define HWTR_FUZZ_WALK_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hwtrace.h"

struct fuzz_walk {
	int		open_rc;	/* hwtr_ar_open() */
	int		verify_rc;	/* hwtr_ar_verify(), when it opened */
	int		complete;	/* hwtr_ar_status()->complete */
	int		read_errors;	/* chunk/image/member reads that failed */
	size_t		nstreams, nchunks, nimages, nsideband, nwarnings;
	uint64_t	chunk_bytes;	/* stream bytes read back */
	uint64_t	sum;		/* of every byte touched, against dead code */
	char		errmsg[256];	/* hwtr_ar_errmsg() after open or verify */
};

static inline void
fuzz_touch_str(struct fuzz_walk *w, const char *s)
{
	if (s == NULL)
		return;
	while (*s != '\0')
		w->sum += (unsigned char)*s++;
}

static inline void
fuzz_touch_buf(struct fuzz_walk *w, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		w->sum += p[i];
}

static inline void
fuzz_touch_meta(struct fuzz_walk *w, const struct hwtr_capture_meta *m)
{
	size_t i;

	if (m == NULL)
		return;
	fuzz_touch_str(w, m->host);
	fuzz_touch_str(w, m->source);
	fuzz_touch_str(w, m->source_version);
	fuzz_touch_str(w, m->sideband_origin);
	fuzz_touch_str(w, m->writer);
	for (i = 0; i < m->ncaveats; i++)
		fuzz_touch_str(w, m->caveats[i]);
	for (i = 0; i < m->argc; i++)
		fuzz_touch_str(w, m->argv[i]);
	w->sum += strnlen(m->cpu.brand, sizeof(m->cpu.brand));
	w->sum += (uint64_t)hwtr_tsc_to_ns(&m->tconv, m->tconv.tsc_zero + 12345);
	w->sum += (uint64_t)m->start_ns + m->cpu.family + m->cpu.model;
}

static inline void
fuzz_touch_stream(struct fuzz_walk *w, const struct hwtr_stream_desc *d)
{
	size_t i, k;

	if (d == NULL)
		return;
	fuzz_touch_str(w, d->name);
	w->sum += d->id + (uint64_t)d->format + (uint64_t)d->pid +
	    (uint64_t)d->tid + (uint64_t)d->cpu + d->pt.options +
	    d->pt.nfilters;
	for (i = 0; i < d->pt.nfilters && i < HWTR_PT_MAX_FILTERS; i++)
		w->sum += d->pt.filter[i].a + d->pt.filter[i].b;
	for (i = 0; i < d->cs.nsources; i++) {
		fuzz_touch_str(w, d->cs.sources[i].core);
		w->sum += d->cs.sources[i].trace_id;
		for (k = 0; k < d->cs.sources[i].nregs; k++) {
			fuzz_touch_str(w, d->cs.sources[i].regs[k].name);
			w->sum += d->cs.sources[i].regs[k].value;
		}
	}
}

static inline void
fuzz_touch_sb(struct fuzz_walk *w, const struct hwtr_sb_rec *r)
{
	if (r == NULL)
		return;
	fuzz_touch_str(w, hwtr_sb_type_name(r->type));
	w->sum += r->time + (uint64_t)r->pid + (uint64_t)r->tid;
	switch (r->type) {
	case HWTR_SB_EXEC:
		fuzz_touch_str(w, r->u.exec.path);
		break;
	case HWTR_SB_COMM:
		fuzz_touch_str(w, r->u.comm.comm);
		break;
	case HWTR_SB_MMAP:
		fuzz_touch_str(w, r->u.mmap.path);
		fuzz_touch_str(w, r->u.mmap.image);
		fuzz_touch_buf(w, r->u.mmap.build_id, r->u.mmap.build_id_len <=
		    HWTR_BUILD_ID_MAX ? r->u.mmap.build_id_len :
		    HWTR_BUILD_ID_MAX);
		w->sum += r->u.mmap.addr + r->u.mmap.len;
		break;
	case HWTR_SB_LOST:
		w->sum += r->u.lost.bytes + r->u.lost.records;
		break;
	default:
		break;
	}
}

/*
 * Open @path with @opts (may be NULL), walk it, verify it, close it.  The
 * outcome is in @w; nothing here fails on a refused archive, which is a
 * fine answer: the walk is about what the reader does, not what it says.
 */
static inline void
fuzz_walk(const char *path, const struct hwtr_ar_opts *opts,
    struct fuzz_walk *w)
{
	const struct hwtr_ar_status *st;
	const struct hwtr_member_info *mi;
	const struct hwtr_chunk_info *ci;
	const struct hwtr_image_desc *id;
	const struct hwtr_capture_end *end;
	struct hwtr_ar *ar = NULL;
	size_t i, k, len, ix;
	void *buf;
	int rc;

	memset(w, 0, sizeof(*w));
	w->open_rc = hwtr_ar_open(&ar, path, opts);
	if (ar == NULL)
		return;
	if (w->open_rc < 0) {
		fuzz_touch_str(w, hwtr_ar_errmsg(ar));
		strncpy(w->errmsg, hwtr_ar_errmsg(ar) != NULL ?
		    hwtr_ar_errmsg(ar) : "", sizeof(w->errmsg) - 1);
		(void)hwtr_ar_close(ar);
		return;
	}

	st = hwtr_ar_status(ar);
	if (st != NULL) {
		w->complete = st->complete;
		fuzz_touch_str(w, st->why);
		w->sum += st->valid_end + st->version_major;
	}
	fuzz_touch_meta(w, hwtr_ar_meta(ar));
	end = hwtr_ar_end(ar);
	if (end != NULL)
		w->sum += end->lost_bytes + (uint64_t)end->exit_value;

	for (i = 0; i < hwtr_ar_nmembers(ar); i++) {
		mi = hwtr_ar_member(ar, i);
		if (mi == NULL)
			continue;
		fuzz_touch_str(w, mi->name);
		w->sum += mi->offset + mi->csize + mi->usize;
		if (hwtr_ar_find_member(ar, mi->name, &ix) == 0)
			w->sum += ix;
		/* Chunks and images are read below, through their own calls. */
		if (mi->kind == HWTR_M_CHUNK || mi->kind == HWTR_M_IMAGE)
			continue;
		if (hwtr_ar_read_member(ar, i, &buf, &len) == 0) {
			fuzz_touch_buf(w, buf, len);
			free(buf);
		} else
			w->read_errors++;
	}

	w->nstreams = hwtr_ar_nstreams(ar);
	for (i = 0; i < w->nstreams; i++) {
		fuzz_touch_stream(w, hwtr_ar_stream(ar, i));
		for (k = 0; k < hwtr_ar_nchunks(ar, i); k++) {
			ci = hwtr_ar_chunk(ar, i, k);
			if (ci != NULL)
				w->sum += ci->offset + ci->len + ci->member;
			w->nchunks++;
			if (hwtr_ar_read_chunk(ar, i, k, &buf, &len) == 0) {
				fuzz_touch_buf(w, buf, len);
				w->chunk_bytes += len;
				free(buf);
			} else
				w->read_errors++;
		}
	}

	w->nimages = hwtr_ar_nimages(ar);
	for (i = 0; i < w->nimages; i++) {
		id = hwtr_ar_image(ar, i);
		if (id != NULL) {
			w->sum += strnlen(id->key, sizeof(id->key));
			fuzz_touch_str(w, id->path);
			if (hwtr_ar_find_image(ar, id->key) >= 0)
				w->sum++;
		}
		if (hwtr_ar_read_image(ar, i, &buf, &len) == 0) {
			fuzz_touch_buf(w, buf, len);
			free(buf);
		} else
			w->read_errors++;
	}

	w->nsideband = hwtr_ar_nsideband(ar);
	for (i = 0; i < w->nsideband; i++)
		fuzz_touch_sb(w, hwtr_ar_sideband_rec(ar, i));
	w->nwarnings = hwtr_ar_nwarnings(ar);
	for (i = 0; i < w->nwarnings; i++)
		fuzz_touch_str(w, hwtr_ar_warning(ar, i));

	/* Out-of-range queries must be refused, not read. */
	(void)hwtr_ar_member(ar, hwtr_ar_nmembers(ar));
	(void)hwtr_ar_stream(ar, w->nstreams);
	(void)hwtr_ar_chunk(ar, w->nstreams, 0);
	(void)hwtr_ar_image(ar, w->nimages);
	(void)hwtr_ar_sideband_rec(ar, w->nsideband);
	(void)hwtr_ar_warning(ar, w->nwarnings);
	if (hwtr_ar_read_chunk(ar, w->nstreams, 0, &buf, &len) == 0)
		free(buf);

	rc = hwtr_ar_verify(ar);
	w->verify_rc = rc;
	if (rc < 0) {
		fuzz_touch_str(w, hwtr_ar_errmsg(ar));
		strncpy(w->errmsg, hwtr_ar_errmsg(ar) != NULL ?
		    hwtr_ar_errmsg(ar) : "", sizeof(w->errmsg) - 1);
	}
	(void)hwtr_ar_close(ar);
}

#endif /* !HWTR_FUZZ_WALK_H */
