/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The reader of a perf_event ring with an AUX area (private to kernel/;
 * the perf source uses it on the kernel's rings, the tests on a region laid
 * out the same way by a simulated producer).
 *
 * How to use it:
 *   1) hwtr_perf_ring_init() over the mapped event: the first page is a
 *      struct perf_event_mmap_page, the data area follows it, the AUX area
 *      is mapped at aux_offset (mapped read-only: overwrite mode);
 *   2) hwtr_perf_ring_records() hands each record of the data area to a
 *      callback, whole even where it wraps, and frees its room (data_tail);
 *      PERF_RECORD_AUX records are also kept as loss (flags);
 *   3) stream mode: hwtr_perf_ring_aux() hands the AUX bytes between
 *      aux_tail and aux_head to a callback with their stream offsets and
 *      frees their room (aux_tail); overwrite mode: hwtr_perf_ring_snapshot()
 *      hands the last aux_size bytes up to aux_head, and says how many
 *      bytes before them were overwritten since the last snapshot.
 * Barriers are the ones the ABI asks for (linux/perf_event.h): an acquire
 * load of a head before the bytes it covers are read, a release store of a
 * tail after they were.
 */

#ifndef HWTR_PERF_AUX_H
#define HWTR_PERF_AUX_H

#include <stddef.h>
#include <stdint.h>

/* Record types and AUX flags, and the parser of one record. */
#include "perf_record.h"

struct hwtr_perf_ring {
	void		*page;		/* struct perf_event_mmap_page */
	uint8_t		*data;
	uint64_t	data_size;	/* a power of two */
	uint8_t		*aux;
	uint64_t	aux_size;	/* a power of two */
	int		overwrite;
	uint64_t	aux_snap;	/* aux_head at the last snapshot */
	/* Loss the AUX records told of, since init. */
	uint64_t	naux;		/* AUX records */
	uint64_t	ntruncated;	/* ... flagged truncated */
	uint64_t	npartial;
	uint64_t	ncollision;
	uint64_t	lost_records;	/* PERF_RECORD_LOST: records lost */
	uint8_t		*scratch;	/* a wrapped record, made whole */
	size_t		scratch_len;
};

/*
 * Set @r up over a mapped event: @page (one page, then @data_size bytes of
 * data area), and @aux (@aux_size bytes, 0 for none).  @overwrite: the AUX
 * area is a snapshot ring.  The sizes must be powers of two.  Returns 0 or
 * -HWTR_E_INVAL.
 */
int hwtr_perf_ring_init(struct hwtr_perf_ring *r, void *page, size_t pagesz,
    uint64_t data_size, void *aux, uint64_t aux_size, int overwrite);
void hwtr_perf_ring_fini(struct hwtr_perf_ring *r);

/*
 * A record of the data area: @type, @misc, and @len bytes of body after
 * the 8-byte header (borrowed until the callback returns).
 */
typedef int (*hwtr_perf_rec_fn)(void *arg, uint32_t type, uint16_t misc,
    const uint8_t *body, size_t len);
/*
 * Hand every complete record between data_tail and data_head to @fn and
 * free their room.  A record whose size is below its header or past what
 * the kernel published is a corrupt ring: -HWTR_E_FORMAT, tail unmoved.
 * A negative return of @fn stops the walk (tail left after the records
 * handed over) and is returned.  Returns the number of records.
 */
int hwtr_perf_ring_records(struct hwtr_perf_ring *r, hwtr_perf_rec_fn fn,
    void *arg);

/* AUX bytes @buf[0..@len) at stream offset @offset. */
typedef int (*hwtr_perf_aux_fn)(void *arg, const uint8_t *buf, size_t len,
    uint64_t offset);
/*
 * Stream mode: hand the AUX bytes between aux_tail and aux_head to @fn (in
 * at most two pieces where they wrap) and free their room.  Returns the
 * number of bytes, or the negative return of @fn, or -HWTR_E_FORMAT when
 * the head ran more than the area's size past the tail.
 */
int64_t hwtr_perf_ring_aux(struct hwtr_perf_ring *r, hwtr_perf_aux_fn fn,
    void *arg);
/*
 * Overwrite mode: hand the last min(aux_head, aux_size) bytes up to
 * aux_head to @fn; *@lost receives the bytes written since the previous
 * snapshot that are gone.  The producer must be stopped (the kernel's
 * event disabled) while this runs.  Returns the number of bytes.
 */
int64_t hwtr_perf_ring_snapshot(struct hwtr_perf_ring *r, hwtr_perf_aux_fn fn,
    void *arg, uint64_t *lost);

#endif /* !HWTR_PERF_AUX_H */
