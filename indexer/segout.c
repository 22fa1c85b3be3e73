/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * A segment's output as every segment decoder writes it (segout.h): the
 * growable buffers, the operations and events, the table of segment-local
 * blocks.  Nothing here knows which decoder writes.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwtr_common.h"
#include "hwtr_ix.h"
#include "segout.h"

const char *const ix_class_names[] = {
	"other", "cond", "jump", "jump-indirect", "call", "call-indirect",
	"return", "syscall", "sysret", "far-jump", "unknown"
};

/* Event kinds, as IX_OP_EVENT gives them (an index into this table). */
const char *const ix_event_kinds[IX_NEVENT_KINDS + 1] = {
	"unknown", "resumed", "enabled", "disabled", "async-disabled",
	"async-branch", "paging", "overflow", "exec-mode", "tsx", "stop",
	"vmcs", "exstop", "mwait", "pwre", "pwrx", "ptwrite", "tick", "cbr",
	"mnt", "decode-error", "lost", "exception", "exception-return",
	"memory-not-accessible", "no-sync", "trace-on", "not-decoded",
	"trace-id", "transaction-start", "transaction-commit",
	"transaction-fail", "timestamp-marker", NULL
};

int
ix_buf_put(struct ix_buf *b, const void *p, size_t n)
{
	if (hwtr_grow((void **)&b->p, &b->cap, b->len + n, 1) < 0)
		return (-HWTR_E_NOMEM);
	memcpy(b->p + b->len, p, n);
	b->len += n;
	return (0);
}

int
ix_buf_varint(struct ix_buf *b, uint64_t v)
{
	uint8_t tmp[10];
	size_t n = 0;

	while (v >= 0x80) {
		tmp[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	tmp[n++] = (uint8_t)v;
	if (b->len + n <= b->cap) {
		memcpy(b->p + b->len, tmp, n);
		b->len += n;
		return (0);
	}
	return (ix_buf_put(b, tmp, n));
}

void
ix_seg_out_free(struct ix_seg_out *o)
{
	size_t i;

	if (o == NULL)
		return;
	for (i = 0; !o->borrowed && i < o->nblocks; i++) {
		free(o->blocks[i].lens);
		free(o->blocks[i].code);
	}
	free(o->blocks);
	free(o->ops.p);
	free(o->problem);
	free(o->name);
	memset(o, 0, sizeof(*o));
}

void
ix_segw_free(struct ix_segw *w)
{
	free(w->htab);
	w->htab = NULL;
	w->hcap = 0;
}

int
ix_segw_fail(struct ix_segw *w, int rc, const char *what, const char *detail)
{
	if (w->out->rc == 0) {
		w->out->rc = rc;
		snprintf(w->out->err, sizeof(w->out->err), "%s%s%s", what,
		    detail != NULL ? ": " : "", detail != NULL ? detail : "");
	}
	return (rc);
}

int
ix_segw_put_slow(struct ix_segw *w, uint64_t v)
{
	if (ix_buf_varint(&w->out->ops, v) < 0)
		return (ix_segw_fail(w, -HWTR_E_NOMEM, "out of memory", NULL));
	return (0);
}

static uint64_t
kind_index(const char *kind)
{
	uint64_t i;

	for (i = 1; ix_event_kinds[i] != NULL; i++)
		if (strcmp(ix_event_kinds[i], kind) == 0)
			return (i);
	return (0);
}

int
ix_segw_event_at(struct ix_segw *w, const char *kind, int has_ip,
    uint64_t ip, const char *detail, int has_off, uint64_t off)
{
	size_t n = detail != NULL ? strlen(detail) : 0;
	int rc;

	if ((rc = ix_segw_op(w, IX_OP_EVENT)) < 0 ||
	    (rc = ix_segw_put(w, kind_index(kind))) < 0)
		return (rc);
	/* One byte (flags < 0x80), which drain_events() may amend. */
	w->flags_at = w->out->ops.len;
	if ((rc = ix_segw_put(w, (has_ip ? 1 : 0) | (has_off ? 2 : 0) |
	    (detail != NULL ? 4 : 0))) < 0)
		return (rc);
	if (has_ip && (rc = ix_segw_put(w, ip)) < 0)
		return (rc);
	if (has_off && (rc = ix_segw_put(w, off)) < 0)
		return (rc);
	if (detail != NULL && ((rc = ix_segw_put(w, n)) < 0 ||
	    ix_buf_put(&w->out->ops, detail, n) < 0))
		return (rc < 0 ? rc : ix_segw_fail(w, -HWTR_E_NOMEM,
		    "out of memory", NULL));
	return (0);
}

int64_t
ix_segw_run_id(struct ix_segw *w, const struct ix_sblock *proto)
{
	struct ix_seg_out *o = w->out;
	struct ix_sblock *sb;
	uint64_t h;
	size_t i;

	if (o->nblocks * 2 >= w->hcap) {
		size_t n = w->hcap ? w->hcap * 2 : 4096;
		uint32_t *t = calloc(n, sizeof(*t));

		if (t == NULL)
			return (ix_segw_fail(w, -HWTR_E_NOMEM,
			    "out of memory", NULL));
		for (i = 0; i < o->nblocks; i++) {
			sb = &o->blocks[i];
			h = ix_hash64(sb->ip ^ ((uint64_t)sb->ninsn << 48) ^
			    ((uint64_t)(uint32_t)sb->isid << 32) ^ sb->mode);
			while (t[h & (n - 1)] != 0)
				h++;
			t[h & (n - 1)] = (uint32_t)i + 1;
		}
		free(w->htab);
		w->htab = t;
		w->hcap = n;
	}
	h = ix_hash64(proto->ip ^ ((uint64_t)proto->ninsn << 48) ^
	    ((uint64_t)(uint32_t)proto->isid << 32) ^ proto->mode);
	for (;; h++) {
		uint32_t v = w->htab[h & (w->hcap - 1)];

		if (v == 0)
			break;
		sb = &o->blocks[v - 1];
		if (sb->ip == proto->ip && sb->ninsn == proto->ninsn &&
		    sb->isid == proto->isid && sb->mode == proto->mode)
			return (v - 1);
	}
	if (o->nblocks >= UINT32_MAX - 1)
		return (ix_segw_fail(w, -HWTR_E_LIMIT, "too many blocks",
		    NULL));
	if (hwtr_grow((void **)&o->blocks, &o->cblocks, o->nblocks + 1,
	    sizeof(*sb)) < 0)
		return (ix_segw_fail(w, -HWTR_E_NOMEM, "out of memory", NULL));
	sb = &o->blocks[o->nblocks];
	*sb = *proto;
	sb->count = 0;
	if (proto->lens != NULL) {
		sb->lens = malloc(proto->ninsn);
		sb->code = malloc(proto->size ? proto->size : 1);
		if (sb->lens == NULL || sb->code == NULL) {
			free(sb->lens);
			free(sb->code);
			return (ix_segw_fail(w, -HWTR_E_NOMEM,
			    "out of memory", NULL));
		}
		memcpy(sb->lens, proto->lens, proto->ninsn);
		memcpy(sb->code, proto->code, proto->size);
	}
	w->htab[h & (w->hcap - 1)] = (uint32_t)o->nblocks + 1;
	return ((int64_t)o->nblocks++);
}
