/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * fpt's block cache: for a (isid, ip, mode), what the code does from ip
 * up to and with its next branch of any kind (instruction count, the
 * branch's address, kind, length and direct target), so that a run of
 * TNT bits over a loop is followed by table look-ups, not by decoding the
 * same instructions again.  The entries are libipt's (fpt.h says how),
 * and since libipt's blocks end where its cache had no entry, no entry may
 * ever be lost: an open-addressing table that grows (linear probing, at
 * most half full), up to FPT_CACHE_MAX entries, past which inserts fail
 * and the decoder says the segment is unsupported.
 *
 * Invalidation: an entry is only found again under the same isid, and
 * the read_code callback gives a new isid whenever the code at an address
 * may have changed (a new image mapped over it, an exec); entries of the
 * old isid are then never hit again.
 */

#include <assert.h>
#include <stdlib.h>

#include "hwtrace.h"
#include "fpt_int.h"

#define FPT_CACHE_MAX	(1u << 22)	/* entries: 168 MB of table */
#define slot_of		fpti_cache_slot

int
fpt_cache_new(struct fpt_cache **cp, unsigned bits)
{
	struct fpt_cache *c;

	assert(bits > 0 && bits < 30);
	*cp = NULL;
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return (-HWTR_E_NOMEM);
	c->mask = (1ull << bits) - 1;
	/* isid 0 is never a valid one: it marks an empty slot. */
	if ((c->slot = calloc((size_t)c->mask + 1, sizeof(*c->slot))) ==
	    NULL) {
		free(c);
		return (-HWTR_E_NOMEM);
	}
	*cp = c;
	return (0);
}

const struct fpt_cache_entry *
fpt_cache_lookup(const struct fpt_cache *c, uint64_t ip, int isid,
    uint8_t mode)
{
	uint64_t i = slot_of(c->mask, ip, isid, mode);
	const struct fpt_cache_entry *e;

	for (;; i = (i + 1) & c->mask) {
		e = &c->slot[i];
		if (e->isid == 0)
			return (NULL);
		if (e->ip == ip && e->isid == isid && e->mode == mode)
			return (e->gen == c->gen ? e : NULL);
	}
}

/* Put @e in @slot (@mask + 1 slots), over an entry of the same key. */
static void
put(struct fpt_cache_entry *slot, uint64_t mask,
    const struct fpt_cache_entry *e, size_t *n)
{
	uint64_t i = slot_of(mask, e->ip, e->isid, e->mode);

	for (;; i = (i + 1) & mask) {
		if (slot[i].isid == 0) {
			(*n)++;
			break;
		}
		if (slot[i].ip == e->ip && slot[i].isid == e->isid &&
		    slot[i].mode == e->mode)
			break;
	}
	slot[i] = *e;
}

int
fpt_cache_insert(struct fpt_cache *c, const struct fpt_cache_entry *e)
{
	struct fpt_cache_entry *ns;
	uint64_t nmask, i;
	size_t n = 0;

	struct fpt_cache_entry ce = *e;

	assert(e->isid > 0 && e->ninsn > 0);
	ce.gen = c->gen;
	if ((c->n + 1) * 2 > c->mask + 1) {
		if (c->mask + 1 >= 2 * (uint64_t)FPT_CACHE_MAX)
			return (-HWTR_E_LIMIT);
		nmask = c->mask * 2 + 1;
		if ((ns = calloc((size_t)nmask + 1, sizeof(*ns))) == NULL)
			return (-HWTR_E_NOMEM);
		/* Stale entries are left behind. */
		for (i = 0; i <= c->mask; i++)
			if (c->slot[i].isid != 0 && c->slot[i].gen == c->gen)
				put(ns, nmask, &c->slot[i], &n);
		free(c->slot);
		c->slot = ns;
		c->mask = nmask;
		c->n = n;
	}
	put(c->slot, c->mask, &ce, &c->n);
	return (0);
}

void
fpt_cache_flush(struct fpt_cache *c)
{
	c->gen++;
}

void
fpt_cache_free(struct fpt_cache *c)
{
	if (c == NULL)
		return;
	free(c->slot);
	free(c);
}
