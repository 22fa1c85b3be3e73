/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The memory image and the time of a segment's Intel PT decoder, for
 * both loops (decode.c's, segfast.c's): the image follows the mapping
 * state at the decoder's time (the owner of the CPU in CPU mode), made
 * again when that time passes the next change; a time is written when it
 * differs from the one written last.
 */

#include <intel-pt.h>
#include <stdint.h>

#include "hwtr_common.h"
#include "hwtr_ix.h"
#include "fpt.h"
#include "segout.h"

#include "decode_int.h"

/*
 * CPU mode: the process that owns the CPU at @t (-1: not known), and the
 * next change of owner as a time at which the image is made again.
 */
static int32_t
owner_at(struct dec *d, uint64_t t)
{
	const struct ix_owner *o = d->w.in->owners;
	size_t lo = ix_dec_owner_idx(d, t);

	if (lo < d->w.in->nowners && (!d->have_next ||
	    o[lo].start_tsc < d->next_change)) {
		d->have_next = 1;
		d->next_change = o[lo].start_tsc;
	}
	return (lo == 0 ? -1 : o[lo - 1].pid);
}

/*
 * Build the memory image for time @t (@known: the decoder knows the time;
 * otherwise the state at the end of the capture is used) and tell when it
 * changes next.
 */
int
ix_dec_set_image(struct dec *d, int known, uint64_t t)
{
	struct pt_image *img;
	size_t i;
	int32_t owner;
	int rc;

	img = pt_image_alloc(NULL);
	if (img == NULL)
		return (ix_segw_fail(&d->w, -HWTR_E_NOMEM, "out of memory",
		    NULL));
	d->have_next = 0;
	owner = known ? owner_at(d, t) : -1;
	for (i = 0; i < d->w.in->nmaps; i++) {
		const struct ix_map *m = d->w.in->maps[i];
		int active;

		/* CPU mode: another process's mapping is not there. */
		if (owner >= 0 && m->pid >= 0 && m->pid != owner)
			continue;

		if (known) {
			active = (!m->has_from || m->from_tsc <= t) &&
			    (!m->has_to || t < m->to_tsc);
			if (m->has_from && m->from_tsc > t && (!d->have_next ||
			    m->from_tsc < d->next_change)) {
				d->have_next = 1;
				d->next_change = m->from_tsc;
			}
			if (m->has_to && m->to_tsc > t && (!d->have_next ||
			    m->to_tsc < d->next_change)) {
				d->have_next = 1;
				d->next_change = m->to_tsc;
			}
		} else
			active = !m->has_to;
		if (!active || m->isid <= 0)
			continue;
		rc = pt_image_add_cached(img, d->isc, m->isid, NULL);
		if (rc < 0) {
			pt_image_free(img);
			return (ix_segw_fail(&d->w, -HWTR_E_DECODE,
			    "adding a section", pt_errstr(pt_errcode(rc))));
		}
	}
	if (d->blk != NULL)
		pt_blk_set_image(d->blk, img);
	pt_image_free(d->img);
	d->img = img;
	d->img_known = known;
	return (0);
}

/* Read the time; switch images when the mapping state changed. */
int
ix_dec_update_time(struct dec *d)
{
	uint64_t tsc;
	uint32_t lost_mtc, lost_cyc;
	int rc;

	if (d->fp != NULL) {
		if (ix_fast_time(d, &tsc) < 0)
			return (0);
	} else if (pt_blk_time(d->blk, &tsc, &lost_mtc, &lost_cyc) < 0)
		return (0);
	if (!d->have_tsc || tsc != d->tsc) {
		d->have_tsc = 1;
		d->tsc = tsc;
		if ((rc = ix_segw_op1(&d->w, IX_OP_TIME, tsc)) < 0)
			return (rc);
	}
	if (!d->img_known || (d->have_next && d->tsc >= d->next_change))
		return (ix_dec_set_image(d, 1, d->tsc));
	return (0);
}
