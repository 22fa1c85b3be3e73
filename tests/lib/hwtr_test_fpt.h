/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Helpers shared by the fpt decoder's differential test (t_fpt.c) and its
 * bench (fptbare.c): a set of code sections seen the same way by libipt
 * (files added with pt_image_add_file(), in order: a later section
 * replaces what it overlaps) and by fpt (the read_code callback over the
 * same bytes, the section's index + 1 as its isid); the items (blocks and
 * events) each decoder gives on one trace, in the ptxed loop (sync, drain
 * events, next block, resync after an error); their comparison.
 */

#ifndef HWTR_TEST_FPT_H
#define HWTR_TEST_FPT_H

#include <sys/mman.h>

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <intel-pt.h>

#include "hwtrace.h"
#include "../../indexer/fpt.h"
#include "../../indexer/hwtr_ix.h"
#include "../../indexer/segout.h"

struct tf_sec {
	uint64_t	addr, size;
	const uint8_t	*bytes;		/* borrowed from @file's buffer */
	const char	*path;		/* the file, for libipt */
	uint64_t	off;
};

struct tf_img {
	struct tf_sec	sec[256];
	size_t		n;
};

/*
 * The whole of @path in a buffer of at least one byte (to free), its
 * length in *@lenp; NULL (errno set) if it cannot be read.
 */
static inline uint8_t *
tf_slurp(const char *path, size_t *lenp)
{
	FILE *fp = fopen(path, "rb");
	uint8_t *buf;
	long n;

	if (fp == NULL)
		return (NULL);
	fseek(fp, 0, SEEK_END);
	n = ftell(fp);
	rewind(fp);
	buf = malloc(n > 0 ? (size_t)n : 1);
	if (buf != NULL && n > 0 && fread(buf, 1, (size_t)n, fp) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(fp);
	*lenp = n > 0 ? (size_t)n : 0;
	return (buf);
}

/* Add @size bytes of @buf at file offset @off of @path, at @addr. */
static inline int
tf_img_add(struct tf_img *im, const char *path, const uint8_t *buf,
    uint64_t off, uint64_t size, uint64_t addr)
{
	struct tf_sec *s;

	if (im->n == sizeof(im->sec) / sizeof(im->sec[0]))
		return (-1);
	s = &im->sec[im->n++];
	s->addr = addr;
	s->size = size;
	s->bytes = buf + off;
	s->path = path;
	s->off = off;
	return (0);
}

/* fpt's read_code over @ctx, a struct tf_img: the newest section wins. */
static inline int
tf_read_code(void *ctx, uint64_t ip, uint8_t *buf, size_t n, int *isid)
{
	const struct tf_img *im = ctx;
	size_t i = im->n, k;

	while (i-- > 0) {
		const struct tf_sec *s = &im->sec[i];
		uint64_t end = s->addr + s->size;

		if (ip < s->addr || ip >= end)
			continue;
		*isid = (int)i + 1;
		if (n == 0)
			return (0);
		k = n;
		if (k > end - ip)
			k = (size_t)(end - ip);
		/* Not past the start of a newer section above @ip. */
		for (size_t j = i + 1; j < im->n; j++)
			if (im->sec[j].addr > ip && im->sec[j].addr < ip + k)
				k = (size_t)(im->sec[j].addr - ip);
		memcpy(buf, s->bytes + (ip - s->addr), k);
		*isid = (int)i + 1;
		return ((int)k);
	}
	return (-1);
}

/*
 * fpt's map over @ctx, a struct tf_img: the span of the newest section
 * at @ip, up to the next newer section that starts inside it.
 */
static inline int
tf_map(void *ctx, uint64_t ip, uint64_t *lo, uint64_t *hi, int *isid)
{
	const struct tf_img *im = ctx;
	size_t i = im->n, j;

	while (i-- > 0) {
		const struct tf_sec *s = &im->sec[i];

		if (ip < s->addr || ip >= s->addr + s->size)
			continue;
		*lo = s->addr;
		*hi = s->addr + s->size;
		for (j = i + 1; j < im->n; j++) {
			const struct tf_sec *o = &im->sec[j];

			/* Newer sections overlapping: cut around them. */
			if (o->addr <= ip)
				*lo = *lo > o->addr + o->size ? *lo :
				    o->addr + o->size;
			else if (o->addr < *hi)
				*hi = o->addr;
		}
		*isid = (int)i + 1;
		return (0);
	}
	return (-1);
}

/* libipt's image of the same sections. */
static inline struct pt_image *
tf_pt_image(const struct tf_img *im)
{
	struct pt_image *img = pt_image_alloc(NULL);
	size_t i;

	if (img == NULL)
		return (NULL);
	for (i = 0; i < im->n; i++)
		if (pt_image_add_file(img, im->sec[i].path, im->sec[i].off,
		    im->sec[i].size, NULL, im->sec[i].addr) < 0) {
			pt_image_free(img);
			return (NULL);
		}
	return (img);
}

struct tf_items {
	struct fpt_item	*v;
	size_t		n, cap;
	size_t		max;		/* stop after that many; 0: no limit */
	uint64_t	max_insns;	/* ... or instructions; 0: no limit */
	int		capped;		/* ... stopped there */
	const char	*unsup;		/* fpt said unsupported: why */
	uint64_t	unsup_off;
	uint64_t	insns;
};

static inline void
tf_add(struct tf_items *l, const struct fpt_item *it)
{
	if ((l->max != 0 && l->n >= l->max) ||
	    (l->max_insns != 0 && l->insns >= l->max_insns)) {
		l->capped = 1;
		return;
	}
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 1024;
		l->v = realloc(l->v, l->cap * sizeof(*l->v));
		if (l->v == NULL)
			abort();
	}
	l->v[l->n++] = *it;
	if (it->kind == FPT_ITEM_BLOCK)
		l->insns += it->block.ninsn;
}

/* libipt's event @ev as an fpt item; 0 for events fpt does not report. */
static inline int
tf_from_pt_event(const struct pt_event *ev, struct fpt_item *it)
{
	struct fpt_event *e = &it->event;

	memset(it, 0, sizeof(*it));
	it->kind = FPT_ITEM_EVENT;
	e->ip_suppressed = ev->ip_suppressed;
	e->status_update = ev->status_update;
	e->has_tsc = ev->has_tsc;
	e->tsc = ev->has_tsc ? ev->tsc : 0;
	switch (ev->type) {
	case ptev_enabled:
		e->kind = FPT_EV_ENABLED;
		e->ip = ev->variant.enabled.ip;
		break;
	case ptev_disabled:
		e->kind = FPT_EV_DISABLED;
		e->ip = ev->variant.disabled.ip;
		break;
	case ptev_async_disabled:
		e->kind = FPT_EV_ASYNC_DISABLED;
		e->ip = ev->variant.async_disabled.at;
		if (!ev->ip_suppressed)
			e->to = ev->variant.async_disabled.ip;
		return (1);
	case ptev_async_branch:
		e->kind = FPT_EV_ASYNC_BRANCH;
		e->ip = ev->variant.async_branch.from;
		if (!ev->ip_suppressed)
			e->to = ev->variant.async_branch.to;
		return (1);
	case ptev_exec_mode:
		e->kind = FPT_EV_EXEC_MODE;
		e->ip = ev->variant.exec_mode.ip;
		e->mode = ev->variant.exec_mode.mode == ptem_64bit ? 64 :
		    ev->variant.exec_mode.mode == ptem_32bit ? 32 :
		    ev->variant.exec_mode.mode == ptem_16bit ? 16 : 0;
		break;
	case ptev_overflow:
		e->kind = FPT_EV_OVERFLOW;
		e->ip = ev->variant.overflow.ip;
		break;
	case ptev_tsx:
		e->kind = FPT_EV_TSX;
		e->ip = ev->variant.tsx.ip;
		break;
	case ptev_paging:
		e->kind = FPT_EV_PAGING;
		break;
	case ptev_async_paging:
		e->kind = FPT_EV_PAGING;
		e->ip = ev->variant.async_paging.ip;
		break;
	case ptev_vmcs:
		e->kind = FPT_EV_VMCS;
		break;
	case ptev_async_vmcs:
		e->kind = FPT_EV_VMCS;
		e->ip = ev->variant.async_vmcs.ip;
		break;
	case ptev_stop:
		e->kind = FPT_EV_STOP;
		break;
	case ptev_exstop:
		e->kind = FPT_EV_EXSTOP;
		e->ip = ev->variant.exstop.ip;
		break;
	case ptev_mwait:
		e->kind = FPT_EV_MWAIT;
		e->ip = ev->variant.mwait.ip;
		break;
	case ptev_pwre:
		e->kind = FPT_EV_PWRE;
		break;
	case ptev_pwrx:
		e->kind = FPT_EV_PWRX;
		break;
	case ptev_cbr:
		e->kind = FPT_EV_CBR;
		break;
	case ptev_mnt:
		e->kind = FPT_EV_MNT;
		break;
	case ptev_ptwrite:
		e->kind = FPT_EV_PTWRITE;
		e->ip = ev->variant.ptwrite.ip;
		break;
	default:
		return (0);
	}
	if (e->ip_suppressed)
		e->ip = 0;
	return (1);
}

static inline void
tf_error(struct tf_items *l, uint64_t off, int code)
{
	struct fpt_item it;

	memset(&it, 0, sizeof(it));
	it.kind = FPT_ITEM_EVENT;
	it.event.kind = FPT_EV_ERROR;
	it.event.offset = off;
	it.event.error = code;
	tf_add(l, &it);
}

/*
 * What tf_libipt_loop() does with what libipt gives; each may be NULL.
 * @block sees every block, empty ones too, and stops the run by returning
 * non-zero; @error sees each error (libipt's status, the offset, the
 * block that was being decoded).
 */
struct tf_libipt_cb {
	int	(*block)(void *, const struct pt_block *);
	void	(*event)(void *, const struct pt_event *);
	void	(*error)(void *, int, uint64_t, const struct pt_block *);
	void	*ctx;
};

/*
 * libipt's block decoder run as ptxed runs it, the reference ixbare,
 * fptbare and t_fpt all use: sync, events drained, pt_blk_next() to the
 * end of the trace, after an error on at the next PSB.
 */
static inline void
tf_libipt_loop(struct pt_block_decoder *d, const struct tf_libipt_cb *cb)
{
	struct pt_block b;
	struct pt_event ev;
	int st;

	memset(&b, 0, sizeof(b));
	for (;;) {
		st = pt_blk_sync_forward(d);
		if (st < 0)
			break;
		for (;;) {
			while (st & pts_event_pending) {
				st = pt_blk_event(d, &ev, sizeof(ev));
				if (st < 0)
					break;
				if (cb->event != NULL)
					cb->event(cb->ctx, &ev);
			}
			if (st < 0 || (st & pts_eos))
				break;
			b.ninsn = 0;
			st = pt_blk_next(d, &b, sizeof(b));
			if (cb->block != NULL && cb->block(cb->ctx, &b) != 0)
				return;
			if (st < 0)
				break;
		}
		if (st < 0 && st != -pte_eos && cb->error != NULL) {
			uint64_t off = 0;

			pt_blk_get_offset(d, &off);
			cb->error(cb->ctx, st, off, &b);
		}
		if (st == -pte_eos)
			break;
	}
}

static inline int
tf_rec_block(void *ctx, const struct pt_block *b)
{
	struct tf_items *l = ctx;
	struct fpt_item it;

	if (l->capped)
		return (1);
	if (b->ninsn > 0) {
		memset(&it, 0, sizeof(it));
		it.kind = FPT_ITEM_BLOCK;
		it.block.ip = b->ip;
		it.block.end_ip = b->end_ip;
		it.block.ninsn = b->ninsn;
		/* Not compared; fpt_one.h looks for libipt's stale modes. */
		it.block.mode = b->mode == ptem_64bit ? 64 :
		    b->mode == ptem_32bit ? 32 : b->mode == ptem_16bit ? 16 : 0;
		tf_add(l, &it);
	}
	return (0);
}

static inline void
tf_rec_event(void *ctx, const struct pt_event *ev)
{
	struct fpt_item it;

	if (tf_from_pt_event(ev, &it))
		tf_add(ctx, &it);
}

static inline void
tf_rec_error(void *ctx, int st, uint64_t off, const struct pt_block *b)
{
	(void)b;
	tf_error(ctx, off, pt_errcode(st));
}

/* libipt's items: ptxed's loop (ixbare's), recorded. */
static inline void
tf_run_libipt(struct pt_block_decoder *d, struct tf_items *l)
{
	struct tf_libipt_cb cb = { tf_rec_block, tf_rec_event, tf_rec_error,
	    l };

	tf_libipt_loop(d, &cb);
}

/*
 * fpt's items, the same loop; stops at the first unsupported segment.
 * @after, when not NULL, is called after each item is added (t_fpt takes
 * a block's run from there) and stops the loop by returning nonzero.
 */
static inline void
tf_run_fpt_with(struct fpt *d, struct tf_items *l,
    int (*after)(struct fpt *, struct tf_items *, const struct fpt_item *,
    void *), void *arg)
{
	struct fpt_item it;
	int rc;

	rc = fpt_sync_forward(d);
	while (rc == 0 || rc == -HWTR_E_UNSUPPORTED) {
		if (rc == 0)
			rc = fpt_next(d, &it);
		if (rc == -HWTR_E_UNSUPPORTED) {
			l->unsup = fpt_unsupported(d);
			l->unsup_off = fpt_offset(d);
			return;
		}
		if (rc != 0)
			break;
		if (it.kind == FPT_ITEM_BLOCK && it.block.ninsn == 0)
			continue;
		tf_add(l, &it);
		if (l->capped)
			return;
		if (it.kind == FPT_ITEM_EVENT && it.event.kind == FPT_EV_ERROR)
			rc = fpt_sync_forward(d);
		if (after != NULL && after(d, l, &it, arg) != 0)
			return;
	}
}

static inline void
tf_run_fpt(struct fpt *d, struct tf_items *l)
{
	tf_run_fpt_with(d, l, NULL, NULL);
}

/* Block @b as fpt_next() gives it, unless empty (tf_run_fpt_with()). */
static inline void
tf_add_block(struct tf_items *l, const struct fpt_block *b)
{
	struct fpt_item it;

	if (b->ninsn == 0)
		return;
	memset(&it, 0, sizeof(it));
	it.kind = FPT_ITEM_BLOCK;
	it.block = *b;
	tf_add(l, &it);
}

/*
 * After each item of tf_run_fpt_with(): the blocks fpt's run API gives
 * where the indexer takes them (segfast.c), each added as the fpt_next()
 * call it stands for: a memoized run's rest (fpt_run_rest(),
 * fpt_run_take()); then, after a block that says no run follows,
 * fpt_walk()'s blocks, else run after run from the TNT bits at hand
 * (fpt_run_next()).  How many are asked for at a time goes round with
 * *@arg (a step count), so that runs and walks are also cut short.
 * The list must be fpt_next()'s alone (fpt.h says so of each call).
 */
static inline int
tf_take_runs(struct fpt *d, struct tf_items *l, const struct fpt_item *it,
    void *arg)
{
	const struct fpt_block *rb;
	struct fpt_block wb[8];
	struct fpt_memo *m;
	size_t *step = arg, n, k, i;

	if (it->kind != FPT_ITEM_BLOCK)
		return (0);
	for (;;) {
		if ((n = fpt_run_rest(d, &rb, &m)) > 0) {
			k = 1 + (*step)++ % n;
			for (i = 0; i < k; i++)
				tf_add_block(l, &rb[i]);
			fpt_run_take(d, k);
		} else if (!it->runs) {
			k = 1 + (*step)++ % 8;
			if ((n = fpt_walk(d, wb, k)) == 0)
				break;
			for (i = 0; i < n; i++)
				tf_add_block(l, &wb[i]);
		} else {
			k = 1 + (*step)++ % 5;
			if ((n = fpt_run_next(d, k, &rb, &m)) == 0)
				break;
			for (i = 0; i < n; i++)
				tf_add_block(l, &rb[i]);
		}
		if (l->capped)
			return (1);
	}
	return (0);
}

/* fpt's items with its run API as tf_take_runs() takes it. */
static inline void
tf_run_fpt_runs(struct fpt *d, struct tf_items *l)
{
	size_t step = 0;

	tf_run_fpt_with(d, l, tf_take_runs, &step);
}

static inline void
tf_fmt(const struct fpt_item *it, char *buf, size_t len)
{
	if (it == NULL)
		snprintf(buf, len, "(nothing)");
	else if (it->kind == FPT_ITEM_BLOCK)
		snprintf(buf, len, "block %#" PRIx64 "-%#" PRIx64 " %u insns",
		    it->block.ip, it->block.end_ip, it->block.ninsn);
	else if (it->event.kind == FPT_EV_ERROR)
		snprintf(buf, len, "error at offset %#" PRIx64 " (%d)",
		    it->event.offset, it->event.error);
	else
		snprintf(buf, len, "event %u ip %#" PRIx64 "%s%s tsc %s%#"
		    PRIx64 " mode %u", it->event.kind, it->event.ip,
		    it->event.ip_suppressed ? " (suppressed)" : "",
		    it->event.status_update ? " (status)" : "",
		    it->event.has_tsc ? "" : "none ", it->event.tsc,
		    it->event.mode);
}

static inline int
tf_same(const struct fpt_item *a, const struct fpt_item *b)
{
	if (a->kind != b->kind)
		return (0);
	if (a->kind == FPT_ITEM_BLOCK)
		return (a->block.ip == b->block.ip &&
		    a->block.end_ip == b->block.end_ip &&
		    a->block.ninsn == b->block.ninsn);
	if (a->event.kind != b->event.kind)
		return (0);
	if (a->event.kind == FPT_EV_ERROR)
		return (1);
	return (a->event.ip_suppressed == b->event.ip_suppressed &&
	    a->event.ip == b->event.ip &&
	    a->event.status_update == b->event.status_update &&
	    a->event.has_tsc == b->event.has_tsc &&
	    a->event.tsc == b->event.tsc &&
	    (a->event.kind != FPT_EV_EXEC_MODE ||
	    a->event.mode == b->event.mode) &&
	    a->event.to == b->event.to);
}

/*
 * Compare libipt's items @want with fpt's @got: equal, or fpt's a prefix
 * of libipt's when fpt said unsupported.  0, or 1 with @msg saying where.
 */
static inline int
tf_compare(const struct tf_items *want, const struct tf_items *got,
    char *msg, size_t len)
{
	char a[160], b[160];
	size_t i;

	for (i = 0; i < want->n && i < got->n; i++)
		if (!tf_same(&want->v[i], &got->v[i]))
			break;
	if (i == got->n && (i == want->n || got->unsup != NULL))
		return (0);
	/* Both stopped at the limit (code that loops without trace). */
	if ((i == got->n && got->capped) || (i == want->n && want->capped))
		return (0);
	tf_fmt(i < want->n ? &want->v[i] : NULL, a, sizeof(a));
	tf_fmt(i < got->n ? &got->v[i] : NULL, b, sizeof(b));
	snprintf(msg, len, "item %zu of %zu/%zu: libipt %s, fpt %s", i,
	    want->n, got->n, a, b);
	return (1);
}

static inline void
tf_items_free(struct tf_items *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/*
 * Stream @s of archive @ar as ixbare -a and the indexer set it up: its
 * chunks in one buffer (*@bufp, *@lenp), the images its sideband maps into
 * the stream's process in sideband order (an exec starts over) into @im,
 * each image read once into @bytes[idx] and written to the file
 * "@dir/img.idx" (@files[idx]) for libipt; the libipt configuration
 * ix_pt_config() makes and fpt's from the same CPU and filters.
 * 0, or -1 with @err set.
 */
static inline int
tf_archive_stream(struct hwtr_ar *ar, size_t s, const char *dir,
    void **bytes, uint64_t *sizes, char **files, uint8_t **bufp,
    size_t *lenp, struct tf_img *im, struct pt_config *cfg,
    struct fpt_config *fc, char *err, size_t errlen)
{
	const struct hwtr_stream_desc *sd = hwtr_ar_stream(ar, s);
	const struct hwtr_cpu *cpu = &hwtr_ar_meta(ar)->cpu;
	uint8_t *buf = NULL, *nb;
	size_t len = 0, c, i, k;
	void *p;

	for (c = 0; c < hwtr_ar_nchunks(ar, s); c++) {
		if (hwtr_ar_read_chunk(ar, s, c, &p, &k) < 0 ||
		    (nb = realloc(buf, len + k + 1)) == NULL) {
			snprintf(err, errlen, "stream %zu chunk %zu: %s", s, c,
			    hwtr_ar_errmsg(ar));
			free(buf);
			return (-1);
		}
		buf = nb;
		memcpy(buf + len, p, k);
		len += k;
		free(p);
	}
	im->n = 0;
	for (i = 0; i < hwtr_ar_nsideband(ar); i++) {
		const struct hwtr_sb_rec *r = hwtr_ar_sideband_rec(ar, i);
		uint64_t size;
		FILE *fp;
		int idx;

		if (sd->pid >= 0 && r->pid != sd->pid)
			continue;
		if (r->type == HWTR_SB_EXEC) {
			im->n = 0;
			continue;
		}
		if (r->type != HWTR_SB_MMAP || r->u.mmap.image == NULL ||
		    (r->u.mmap.prot != 0 && !(r->u.mmap.prot & PROT_EXEC)) ||
		    (idx = hwtr_ar_find_image(ar, r->u.mmap.image)) < 0)
			continue;
		if (bytes[idx] == NULL) {
			if (hwtr_ar_read_image(ar, (size_t)idx, &bytes[idx],
			    &k) < 0 || asprintf(&files[idx], "%s/img.%d", dir,
			    idx) < 0 || (fp = fopen(files[idx], "wb")) ==
			    NULL) {
				snprintf(err, errlen, "image %d", idx);
				free(buf);
				return (-1);
			}
			sizes[idx] = k;
			if (fwrite(bytes[idx], 1, k, fp) != k) {
				fclose(fp);
				snprintf(err, errlen, "%s", files[idx]);
				free(buf);
				return (-1);
			}
			if (fclose(fp) != 0) {
				snprintf(err, errlen, "%s", files[idx]);
				free(buf);
				return (-1);
			}
		}
		if (r->u.mmap.pgoff >= sizes[idx] || r->u.mmap.len == 0)
			continue;
		size = r->u.mmap.len;
		if (size > sizes[idx] - r->u.mmap.pgoff)
			size = sizes[idx] - r->u.mmap.pgoff;
		if (tf_img_add(im, files[idx], bytes[idx], r->u.mmap.pgoff,
		    size, r->u.mmap.addr) < 0) {
			snprintf(err, errlen, "too many mappings");
			free(buf);
			return (-1);
		}
	}
	pt_config_init(cfg);
	(void)ix_pt_config(cfg, sd, cpu, buf, len);
	memset(fc, 0, sizeof(*fc));
	fc->begin = buf;
	fc->end = buf + len;
	fc->read_code = tf_read_code;
	fc->map = tf_map;
	fc->ctx = im;
	fc->intel = cpu->vendor == HWTR_CPU_INTEL;
	fc->family = cpu->family;
	fc->model = cpu->model;
	fc->stepping = cpu->stepping;
	for (i = 0; i < sd->pt.nfilters && i < 4; i++) {
		if (sd->pt.filter[i].cfg != 0)
			fc->filtering = 1;
		fc->filter_cfg[i] = (uint8_t)sd->pt.filter[i].cfg;
		fc->filter_a[i] = sd->pt.filter[i].a;
		fc->filter_b[i] = sd->pt.filter[i].b;
	}
	*bufp = buf;
	*lenp = len;
	return (0);
}

/* What tf_archive_each() gives for stream @s of the archive. */
typedef void (*tf_stream_fn)(void *ctx, size_t s, const uint8_t *buf,
    size_t len, struct tf_img *im, struct pt_config *cfg,
    struct fpt_config *fc);

/*
 * Every Intel PT stream of archive @path set up as tf_archive_stream()
 * sets it up (the images written to files under @dir, removed at the
 * end), given to @fn: the setup ixbare, fptbare and t_fpt share.  0, or
 * -1 with @err set.
 */
static inline int
tf_archive_each(const char *path, const char *dir, tf_stream_fn fn,
    void *ctx, char *err, size_t errlen)
{
	struct hwtr_ar *ar;
	struct tf_img *im = NULL;
	size_t s, i, nimg;
	void **bytes;
	uint64_t *sizes;
	char **files;
	int rc = 0;

	if (hwtr_ar_open(&ar, path, NULL) < 0) {
		snprintf(err, errlen, "%s: cannot open the archive", path);
		return (-1);
	}
	nimg = hwtr_ar_nimages(ar);
	bytes = calloc(nimg + 1, sizeof(*bytes));
	sizes = calloc(nimg + 1, sizeof(*sizes));
	files = calloc(nimg + 1, sizeof(*files));
	im = calloc(1, sizeof(*im));
	if (bytes == NULL || sizes == NULL || files == NULL || im == NULL) {
		snprintf(err, errlen, "out of memory");
		rc = -1;
	}
	for (s = 0; rc == 0 && s < hwtr_ar_nstreams(ar); s++) {
		struct pt_config cfg;
		struct fpt_config fc;
		uint8_t *buf;
		size_t len;

		if (hwtr_ar_stream(ar, s)->format != HWTR_TF_INTEL_PT)
			continue;
		if (tf_archive_stream(ar, s, dir, bytes, sizes, files, &buf,
		    &len, im, &cfg, &fc, err, errlen) < 0) {
			rc = -1;
			break;
		}
		fn(ctx, s, buf, len, im, &cfg, &fc);
		free(buf);
	}
	for (i = 0; files != NULL && bytes != NULL && i < nimg; i++) {
		free(bytes[i]);
		if (files[i] != NULL)
			unlink(files[i]);
		free(files[i]);
	}
	free(im);
	free(bytes);
	free(sizes);
	free(files);
	hwtr_ar_close(ar);
	return (rc);
}

#endif /* !HWTR_TEST_FPT_H */
