/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The perf_event ring reader (perf_aux.h): the data area's records and the
 * AUX area's trace bytes, with the ABI's head/tail protocol.  Nothing here
 * asks the kernel for anything: the same code reads the kernel's rings and
 * the tests' simulated ones.
 */

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "hwtr_common.h"
#include "perf_aux.h"

#ifdef __linux__
#include <linux/perf_event.h>

#define RD_HEAD(p, f)	__atomic_load_n(&(p)->f, __ATOMIC_ACQUIRE)
#define RD(p, f)	__atomic_load_n(&(p)->f, __ATOMIC_RELAXED)
#define WR_TAIL(p, f, v) __atomic_store_n(&(p)->f, (v), __ATOMIC_RELEASE)


static int
pow2(uint64_t v)
{
	return (v != 0 && (v & (v - 1)) == 0);
}

int
hwtr_perf_ring_init(struct hwtr_perf_ring *r, void *page, size_t pagesz,
    uint64_t data_size, void *aux, uint64_t aux_size, int overwrite)
{
	memset(r, 0, sizeof(*r));
	if (page == NULL || pagesz < sizeof(struct perf_event_mmap_page) ||
	    !pow2(data_size) || (aux != NULL && !pow2(aux_size)))
		return (-HWTR_E_INVAL);
	r->page = page;
	r->data = (uint8_t *)page + pagesz;
	r->data_size = data_size;
	r->aux = aux;
	r->aux_size = aux != NULL ? aux_size : 0;
	r->overwrite = overwrite;
	return (0);
}

void
hwtr_perf_ring_fini(struct hwtr_perf_ring *r)
{
	if (r == NULL)
		return;
	free(r->scratch);
	r->scratch = NULL;
	r->scratch_len = 0;
}

/* Copy @len bytes at ring offset @off of @ring (@size) out, wrapping. */
static void
ring_copy(uint8_t *dst, const uint8_t *ring, uint64_t size, uint64_t off,
    size_t len)
{
	size_t at = (size_t)(off & (size - 1)), first = len;

	assert(pow2(size) && len <= size);
	if (first > size - at)
		first = (size_t)(size - at);
	memcpy(dst, ring + at, first);
	if (first < len)
		memcpy(dst + first, ring, len - first);
}

/* Keep the loss an AUX or LOST record (the whole record, @rec) tells of. */
static void
note_loss(struct hwtr_perf_ring *r, const uint8_t *rec, size_t size)
{
	struct hwtr_perf_rec pr;

	if (hwtr_perf_rec_parse(rec, size, NULL, &pr, NULL, 0) < 0)
		return;
	if (pr.type == HWTR_PERF_AUX) {
		r->naux++;
		if (pr.u.aux.flags & HWTR_PERF_AUX_TRUNCATED)
			r->ntruncated++;
		if (pr.u.aux.flags & HWTR_PERF_AUX_PARTIAL)
			r->npartial++;
		if (pr.u.aux.flags & HWTR_PERF_AUX_COLLISION)
			r->ncollision++;
	} else if (pr.type == HWTR_PERF_LOST)
		r->lost_records += pr.u.lost.lost;
}

int
hwtr_perf_ring_records(struct hwtr_perf_ring *r, hwtr_perf_rec_fn fn,
    void *arg)
{
	struct perf_event_mmap_page *pg = r->page;
	uint64_t head, tail;
	uint8_t hdr[8];
	uint32_t type;
	uint16_t misc, size;
	int n = 0, rc;

	head = RD_HEAD(pg, data_head);
	tail = RD(pg, data_tail);
	if (head - tail > r->data_size)
		return (-HWTR_E_FORMAT);
	while (head - tail >= sizeof(hdr)) {
		ring_copy(hdr, r->data, r->data_size, tail, sizeof(hdr));
		memcpy(&type, hdr, 4);
		memcpy(&misc, hdr + 4, 2);
		memcpy(&size, hdr + 6, 2);
		if (size < sizeof(hdr) || size > head - tail)
			return (-HWTR_E_FORMAT);
		if (r->scratch_len < size) {
			uint8_t *s = realloc(r->scratch, 65536);

			if (s == NULL)
				return (-HWTR_E_NOMEM);
			r->scratch = s;
			r->scratch_len = 65536;
		}
		/* A record is at most 64 KiB, and within [tail, head). */
		assert(r->scratch_len >= size && size <= head - tail);
		ring_copy(r->scratch, r->data, r->data_size, tail, size);
		note_loss(r, r->scratch, size);
		if (fn != NULL && (rc = fn(arg, type, misc,
		    r->scratch + sizeof(hdr), size - sizeof(hdr))) < 0) {
			WR_TAIL(pg, data_tail, tail);
			return (rc);
		}
		tail += size;
		n++;
		/* The tail only moves towards the head, never past it. */
		assert(head - tail <= r->data_size);
	}
	WR_TAIL(pg, data_tail, tail);
	return (n);
}

/* Hand [@from, @to) of the AUX area to @fn, in two pieces where it wraps. */
static int
aux_out(struct hwtr_perf_ring *r, uint64_t from, uint64_t to,
    hwtr_perf_aux_fn fn, void *arg)
{
	uint64_t at = from & (r->aux_size - 1), len = to - from, first;
	int rc;

	/*
	 * What is handed out is in the ring once: no more than its size
	 * (positions count bytes modulo 2^64, so @to may have wrapped).
	 */
	assert(pow2(r->aux_size) && len <= r->aux_size);
	first = len < r->aux_size - at ? len : r->aux_size - at;
	if (first > 0 && (rc = fn(arg, r->aux + at, (size_t)first, from)) < 0)
		return (rc);
	if (first < len && (rc = fn(arg, r->aux, (size_t)(len - first),
	    from + first)) < 0)
		return (rc);
	return (0);
}

int64_t
hwtr_perf_ring_aux(struct hwtr_perf_ring *r, hwtr_perf_aux_fn fn, void *arg)
{
	struct perf_event_mmap_page *pg = r->page;
	uint64_t head, tail;
	int rc;

	if (r->aux == NULL || r->overwrite)
		return (-HWTR_E_INVAL);
	head = RD_HEAD(pg, aux_head);
	tail = RD(pg, aux_tail);
	if (head == tail)
		return (0);
	if (head - tail > r->aux_size)
		return (-HWTR_E_FORMAT);
	if ((rc = aux_out(r, tail, head, fn, arg)) < 0)
		return (rc);
	WR_TAIL(pg, aux_tail, head);
	return ((int64_t)(head - tail));
}

int64_t
hwtr_perf_ring_snapshot(struct hwtr_perf_ring *r, hwtr_perf_aux_fn fn,
    void *arg, uint64_t *lost)
{
	struct perf_event_mmap_page *pg = r->page;
	uint64_t head, from;
	int rc;

	*lost = 0;
	if (r->aux == NULL || !r->overwrite)
		return (-HWTR_E_INVAL);
	head = RD_HEAD(pg, aux_head);
	if (head < r->aux_snap)
		return (-HWTR_E_FORMAT);
	from = head > r->aux_size ? head - r->aux_size : 0;
	if (from < r->aux_snap)
		from = r->aux_snap;
	assert(r->aux_snap <= from && from <= head &&
	    head - from <= r->aux_size);
	*lost = from - r->aux_snap;
	if ((rc = aux_out(r, from, head, fn, arg)) < 0)
		return (rc);
	r->aux_snap = head;
	return ((int64_t)(head - from));
}

#else /* !__linux__ */

int
hwtr_perf_ring_init(struct hwtr_perf_ring *r, void *page, size_t pagesz,
    uint64_t data_size, void *aux, uint64_t aux_size, int overwrite)
{
	memset(r, 0, sizeof(*r));
	return (-HWTR_E_UNSUPPORTED);
}

void
hwtr_perf_ring_fini(struct hwtr_perf_ring *r)
{
}

int
hwtr_perf_ring_records(struct hwtr_perf_ring *r, hwtr_perf_rec_fn fn,
    void *arg)
{
	return (-HWTR_E_UNSUPPORTED);
}

int64_t
hwtr_perf_ring_aux(struct hwtr_perf_ring *r, hwtr_perf_aux_fn fn, void *arg)
{
	return (-HWTR_E_UNSUPPORTED);
}

int64_t
hwtr_perf_ring_snapshot(struct hwtr_perf_ring *r, hwtr_perf_aux_fn fn,
    void *arg, uint64_t *lost)
{
	*lost = 0;
	return (-HWTR_E_UNSUPPORTED);
}

#endif /* __linux__ */
