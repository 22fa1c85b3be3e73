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
 * same instructions again.
 *
 * Invalidation: an entry is only found again under the same isid, and
 * the read_code callback gives a new isid whenever the code at an address
 * may have changed (a new image mapped over it, an exec); entries of the
 * old isid are then never hit and are overwritten as their slots are
 * reused.  The table is direct-mapped: a collision replaces the older
 * entry, which costs a decode again, never a wrong answer, since the whole
 * key is compared.
 */

#include <assert.h>
#include <stdlib.h>

#include "hwtrace.h"
#include "fpt.h"

struct fpt_cache {
	struct fpt_cache_entry *slot;
	uint64_t	mask;
};

static uint64_t
slot_of(const struct fpt_cache *c, uint64_t ip, int isid, uint8_t mode)
{
	uint64_t h = ip ^ ((uint64_t)(unsigned)isid << 40) ^
	    ((uint64_t)mode << 56);

	h *= 0x9e3779b97f4a7c15ull;
	return ((h >> 20) & c->mask);
}

int
fpt_cache_new(struct fpt_cache **cp, unsigned bits)
{
	struct fpt_cache *c;

	assert(bits > 0 && bits < 30);
	*cp = NULL;
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return (-HWTR_E_NOMEM);
	c->mask = (1ull << bits) - 1;
	/* isid 0 is never a valid one: an empty slot never matches. */
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
	const struct fpt_cache_entry *e = &c->slot[slot_of(c, ip, isid, mode)];

	if (e->ip == ip && e->isid == isid && e->mode == mode)
		return (e);
	return (NULL);
}

void
fpt_cache_insert(struct fpt_cache *c, const struct fpt_cache_entry *e)
{
	assert(e->isid > 0 && e->ninsn > 0);
	c->slot[slot_of(c, e->ip, e->isid, e->mode)] = *e;
}

void
fpt_cache_free(struct fpt_cache *c)
{
	if (c == NULL)
		return;
	free(c->slot);
	free(c);
}
