/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The perf source's rings read into its recording (perf_int.h lists the
 * source's files), over the ring reader of perf_aux.c: the data areas'
 * records as the kernel wrote them (a --trigger breakpoint's samples
 * counted as hits instead), the AUX data as AUXTRACE records as it comes
 * (stream mode) or up to each CPU's --buffer bytes (stop mode), ring
 * mode's snapshots, and the recording's end.
 */

#include <sys/ioctl.h>

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "hwtr_common.h"
#include "perf_int.h"

#ifdef __linux__

/* A record of a data area, copied as the kernel wrote it. */
static int
on_record(void *arg, uint32_t type, uint16_t misc, const uint8_t *body,
    size_t len)
{
	struct perf_src *ps = arg;
	uint64_t id;
	size_t i;

	/*
	 * A sample of a --trigger breakpoint (PERF_SAMPLE_IDENTIFIER comes
	 * first in a sample): the program reached the function.  It is not
	 * the recording's: its event is not in HEADER_ATTR.
	 */
	if (type == HWTR_PERF_SAMPLE && len >= 8 && ps->nbp > 0) {
		memcpy(&id, body, 8);
		for (i = 0; i < ps->nbp; i++)
			if (ps->bp_ids[i] == id) {
				ps->trig_hits++;
				return (0);
			}
	}
	perf_rec_hdr(ps, type, misc, len + 8);
	perf_rec_put(ps, body, len);
	if (type == HWTR_PERF_MMAP || type == HWTR_PERF_MMAP2)
		perf_note_path(ps, type, misc, body, len);
	return (ps->rec_err != 0 ? -HWTR_E_IO : 0);
}

struct aux_arg {
	struct perf_src	*ps;
	struct perf_ev	*ev;
	size_t		idx;
};

/* AUX bytes at stream offset @offset: one AUXTRACE record. */
static int
on_aux(void *arg, const uint8_t *buf, size_t len, uint64_t offset)
{
	struct aux_arg *a = arg;
	struct perf_src *ps = a->ps;
	uint32_t idx = (uint32_t)a->idx, tid = UINT32_MAX;
	uint32_t cpu = (uint32_t)a->ev->cpu, zero = 0;

	if (ps->stop) {
		/* --mode stop: the first aux_size bytes, the rest is lost. */
		if (a->ev->taken >= ps->aux_size) {
			ps->aux_lost += len;
			return (0);
		}
		if (len > ps->aux_size - a->ev->taken) {
			ps->aux_lost += len - (size_t)(ps->aux_size -
			    a->ev->taken);
			len = (size_t)(ps->aux_size - a->ev->taken);
		}
		a->ev->taken += len;
	}
	if (len == 0)
		return (0);
	/*
	 * Unlike perf, the payload is not padded to 8 bytes: the kernel's
	 * head may stop inside a packet, and zeros between two payloads
	 * would land inside it; the importer takes any size.
	 */
	perf_rec_hdr(ps, HWTR_PERF_AUXTRACE, 0, HWTR_PERF_AUXTRACE_SIZE);
	perf_rec_u64(ps, len);
	perf_rec_u64(ps, offset);
	perf_rec_u64(ps, 0);			/* reference */
	perf_rec_put(ps, &idx, 4);
	perf_rec_put(ps, &tid, 4);
	perf_rec_put(ps, &cpu, 4);
	perf_rec_put(ps, &zero, 4);
	perf_rec_put(ps, buf, len);
	ps->aux_bytes += len;
	return (ps->rec_err != 0 ? -HWTR_E_IO : 0);
}

/* @req on ring @i's --trigger breakpoints (all: SIZE_MAX). */
static int
xev_ioctl(struct perf_src *ps, size_t i, unsigned long req)
{
	size_t j;
	int rc = 0;

	for (j = 0; j < ps->nxev; j++)
		if ((i == SIZE_MAX || i == ps->xev[j].idx) &&
		    ioctl(ps->xev[j].fd, req, 0) != 0)
			rc = -1;
	return (rc);
}

/*
 * PERF_EVENT_IOC_ENABLE or _DISABLE on ring @i's events (all: SIZE_MAX).
 * The --trigger breakpoints are enabled before the trace and disabled
 * after it: an attached program runs on between the ioctls, and a hit
 * between the trace's enable and its breakpoint's would be no snapshot
 * at all, where a hit before the trace's is a snapshot of less.
 */
int
perf_ev_ioctl(struct perf_src *ps, size_t i, unsigned long req)
{
	size_t j;
	int rc = 0;

	if (req == PERF_EVENT_IOC_ENABLE)
		rc = xev_ioctl(ps, i, req);
	for (j = 0; j < ps->nev; j++)
		if ((i == SIZE_MAX || i == j) &&
		    ioctl(ps->ev[j].fd, req, 0) != 0)
			rc = -1;
	if (req != PERF_EVENT_IOC_ENABLE && xev_ioctl(ps, i, req) != 0)
		rc = -1;
	return (rc);
}

/*
 * --mode stop: ring @i has its aux_size bytes.  Its events are disabled,
 * and an AUX record flagged TRUNCATED (what the kernel writes when its
 * AUX area is full) tells the importer the trace stops there: a loss of
 * an unknown amount on that CPU's stream.  Its time is the perf clock's
 * (CLOCK_MONOTONIC, as the kernel's default local clock) now.
 */
static void
stop_ring(struct perf_src *ps, size_t i)
{
	struct perf_ev *ev = &ps->ev[i];
	struct timespec ts;
	uint64_t now = 0;
	uint32_t u[2];

	(void)perf_ev_ioctl(ps, i, PERF_EVENT_IOC_DISABLE);
	ev->stopped = 1;
	if (clock_gettime(CLOCK_MONOTONIC, &ts) == 0)
		now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	perf_rec_hdr(ps, HWTR_PERF_AUX, 0, 8 + 24 + 32);
	perf_rec_u64(ps, ev->taken);		/* aux_offset */
	perf_rec_u64(ps, 0);			/* aux_size */
	perf_rec_u64(ps, HWTR_PERF_AUX_TRUNCATED);
	u[0] = u[1] = (uint32_t)ps->src->first_pid;
	perf_rec_put(ps, u, 8);
	perf_rec_u64(ps, now);
	u[0] = (uint32_t)ev->cpu;
	u[1] = 0;
	perf_rec_put(ps, u, 8);
	perf_rec_u64(ps, ev->id);
	hwtr_logf(&ps->src->cfg.log, HWTR_LOG_INFO, "--mode stop: CPU %d's "
	    "%" PRIu64 " bytes are full: its trace stops", ev->cpu,
	    ps->aux_size);
}

/* Whatever the kernel has written so far (stream mode's AUX data too). */
int
perf_drain(struct perf_src *ps)
{
	struct aux_arg a;
	int64_t n;
	size_t i;
	int rc;

	for (i = 0; i < ps->nev; i++) {
		struct perf_ev *ev = &ps->ev[i];

		/* AUX first: its AUX records then follow the bytes. */
		if (!ps->ring) {
			a.ps = ps;
			a.ev = ev;
			a.idx = i;
			if ((n = hwtr_perf_ring_aux(&ev->ring, on_aux,
			    &a)) < 0) {
				perf_err(ps, "CPU %d: AUX area: %s", ev->cpu,
				    n == -HWTR_E_FORMAT ? "the head ran past "
				    "the tail by more than the area" :
				    hwtr_errstr((int)n));
				return ((int)n);
			}
			if (ps->stop && !ev->stopped &&
			    ev->taken >= ps->aux_size)
				stop_ring(ps, i);
		}
		if ((rc = hwtr_perf_ring_records(&ev->ring, on_record,
		    ps)) < 0) {
			perf_err(ps, "CPU %d: data area: %s", ev->cpu,
			    rc == -HWTR_E_FORMAT ? "a record whose size does "
			    "not fit what the kernel published" :
			    hwtr_errstr(rc));
			return (rc);
		}
	}
	if (ps->rec_err != 0) {
		perf_err(ps, "writing the recording '%s': %s", ps->rec_path,
		    strerror(ps->rec_err));
		return (-HWTR_E_IO);
	}
	return (0);
}

/*
 * Ring mode: stop every event, save the last aux_size bytes of each (what
 * was overwritten since the previous snapshot is the gap before them),
 * and start them again unless @final.
 */
int
perf_snapshot(struct perf_src *ps, int final)
{
	struct aux_arg a;
	uint64_t lost;
	int64_t n;
	size_t i;

	(void)perf_ev_ioctl(ps, SIZE_MAX, PERF_EVENT_IOC_DISABLE);
	for (i = 0; i < ps->nev; i++) {
		a.ps = ps;
		a.ev = &ps->ev[i];
		a.idx = i;
		lost = 0;
		if ((n = hwtr_perf_ring_snapshot(&ps->ev[i].ring, on_aux, &a,
		    &lost)) < 0) {
			perf_err(ps, "CPU %d: snapshot: %s", ps->ev[i].cpu,
			    hwtr_errstr((int)n));
			return ((int)n);
		}
		ps->aux_lost += lost;
	}
	if (!final)
		(void)perf_ev_ioctl(ps, SIZE_MAX, PERF_EVENT_IOC_ENABLE);
	return (perf_drain(ps));
}

/* Everything the kernel still holds, then the recording's end. */
int
perf_finish(struct perf_src *ps)
{
	int rc;

	if (ps->finished)
		return (0);
	ps->finished = 1;
	if (ps->ring)
		rc = perf_snapshot(ps, 1);
	else {
		(void)perf_ev_ioctl(ps, SIZE_MAX, PERF_EVENT_IOC_DISABLE);
		rc = perf_drain(ps);
	}
	if (rc < 0)
		return (rc);
	perf_rec_build_ids(ps);
	if (ps->rec != NULL && fflush(ps->rec) != 0 && ps->rec_err == 0)
		ps->rec_err = errno;
	if (ps->rec_err != 0) {
		perf_err(ps, "writing the recording '%s': %s", ps->rec_path,
		    strerror(ps->rec_err));
		return (-HWTR_E_IO);
	}
	ps->src->recording = ps->rec_path;
	return (0);
}

#endif /* __linux__ */
