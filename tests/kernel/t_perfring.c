/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The perf_event ring reader (kernel/perf_aux.c) against a simulated
 * kernel.  A region is laid out exactly like a mapped perf event: a
 * struct perf_event_mmap_page from <linux/perf_event.h>, the data area after
 * it, an AUX area.  A producer thread plays the kernel: it writes real
 * Intel PT, made by the project's encoder, into the AUX area and advances
 * aux_head (release), writes PERF_RECORD_AUX records (with the flags the
 * kernel sets) and MMAP2, COMM and SWITCH records into the data area, and
 * honours data_tail and aux_tail as the kernel does: in stream mode a full
 * AUX area truncates (the bytes that do not fit are lost, the record says
 * TRUNCATED); in overwrite mode it wraps over old data.  The reader must
 * hand over every produced byte that was not lost, in order, and account
 * for every one that was.
 */

#include <linux/perf_event.h>

#include <atf-c.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hwtrace.h"
#include "hwtr_kernel.h"
#include "../../kernel/perf_aux.h"

#define PAGE	4096

/* ------------------------------------------------------------------ */
/* Real PT, made by the encoder.                                       */

struct bytes {
	uint8_t		*p;
	size_t		len, cap;
};

static int
bytes_add(void *arg, const void *buf, size_t len)
{
	struct bytes *b = arg;

	if (b->len + len > b->cap) {
		size_t nc = b->cap ? b->cap * 2 : 65536;

		while (nc < b->len + len)
			nc *= 2;
		ATF_REQUIRE((b->p = realloc(b->p, nc)) != NULL);
		b->cap = nc;
	}
	memcpy(b->p + b->len, buf, len);
	b->len += len;
	return (0);
}

/*
 * At least @want bytes of PT: a loop's conditional branches, calls and
 * returns, with PSB+ every 4 KiB and time stamps.
 */
static void
make_pt(struct bytes *b, size_t want)
{
	struct hwtr_ptenc_opts o = { .psb_period = 4096 };
	struct hwtr_ptenc_out out = { bytes_add, NULL, b };
	struct hwtr_ptenc *enc;
	uint64_t tsc = 1000, ip = 0x401000;
	unsigned i = 0;

	memset(b, 0, sizeof(*b));
	ATF_REQUIRE(hwtr_ptenc_new(&enc, &o, &out) == 0);
	ATF_REQUIRE(hwtr_ptenc_enable(enc, ip, 1, tsc) == 0);
	while (b->len < want) {
		ATF_REQUIRE(hwtr_ptenc_cond(enc, (i * 7 + i / 3) & 1) == 0);
		if (i % 5 == 0) {
			ATF_REQUIRE(hwtr_ptenc_call(enc, ip + 5, 0x402000 +
			    (i % 64) * 16, i % 3 == 0) == 0);
			ATF_REQUIRE(hwtr_ptenc_ret(enc, ip + 5) == 0);
		}
		if (i % 17 == 0)
			ATF_REQUIRE(hwtr_ptenc_indirect(enc, 0x403000 +
			    (uint64_t)(i % 251) * 8) == 0);
		ATF_REQUIRE(hwtr_ptenc_at(enc, ip, tsc += 13) == 0);
		i++;
	}
	ATF_REQUIRE(hwtr_ptenc_disable(enc, ip, tsc) == 0);
	ATF_REQUIRE(hwtr_ptenc_flush(enc) == 0);
	hwtr_ptenc_free(enc);
}

/* ------------------------------------------------------------------ */
/* The simulated kernel.                                               */

enum { P_WAIT = 0, P_TRUNCATE, P_OVERWRITE };

struct sim {
	struct perf_event_mmap_page *pg;
	uint8_t		*region;
	uint64_t	data_size;
	uint8_t		*aux;
	uint64_t	aux_size;
	int		policy;
	size_t		step;		/* PT bytes per write */
	const struct bytes *pt;
	/* What the producer did: which PT ranges went into the ring. */
	uint64_t	written;	/* bytes put in the AUX area */
	uint64_t	lost;		/* bytes that did not fit */
	uint8_t		*kept;		/* per PT byte: 1 written, 0 lost */
	unsigned	nrec;		/* records written to the data area */
	unsigned	ntrunc, npartial, ncollision;
	unsigned	every_partial;	/* flag every Nth AUX record PARTIAL */
	unsigned	every_collision;
	int		side_records;	/* MMAP2/COMM/SWITCH between writes */
	volatile int	done;
	volatile int	pause;		/* overwrite mode: stopped for a snapshot */
	volatile int	paused;
};

static void
sim_init(struct sim *s, uint64_t data_size, uint64_t aux_size, int policy,
    size_t step, const struct bytes *pt)
{
	memset(s, 0, sizeof(*s));
	ATF_REQUIRE((s->region = aligned_alloc(PAGE, PAGE + data_size)) != NULL);
	memset(s->region, 0, PAGE + data_size);
	s->pg = (struct perf_event_mmap_page *)s->region;
	s->pg->data_offset = PAGE;
	s->pg->data_size = data_size;
	s->data_size = data_size;
	ATF_REQUIRE((s->aux = aligned_alloc(PAGE, aux_size)) != NULL);
	memset(s->aux, 0xcc, aux_size);
	s->pg->aux_offset = PAGE + data_size;
	s->pg->aux_size = aux_size;
	s->aux_size = aux_size;
	s->policy = policy;
	s->step = step;
	s->pt = pt;
	ATF_REQUIRE((s->kept = calloc(1, pt->len ? pt->len : 1)) != NULL);
}

static void
sim_free(struct sim *s)
{
	free(s->region);
	free(s->aux);
	free(s->kept);
}

/* Write one record into the data area, waiting for room as perf would not
 * (the data area is big enough in these cases never to lose records). */
static void
put_record(struct sim *s, uint32_t type, const void *body, uint16_t blen)
{
	struct perf_event_header h = { type, 0, (uint16_t)(sizeof(h) + blen) };
	uint8_t rec[512];
	uint64_t head, tail;
	size_t i;

	memcpy(rec, &h, sizeof(h));
	memcpy(rec + sizeof(h), body, blen);
	head = s->pg->data_head;
	for (;;) {
		tail = __atomic_load_n(&s->pg->data_tail, __ATOMIC_ACQUIRE);
		if (s->data_size - (head - tail) >= h.size)
			break;
		sched_yield();
	}
	for (i = 0; i < h.size; i++)
		s->region[PAGE + ((head + i) & (s->data_size - 1))] = rec[i];
	__atomic_store_n(&s->pg->data_head, head + h.size, __ATOMIC_RELEASE);
	s->nrec++;
}

static void
put_aux_record(struct sim *s, uint64_t off, uint64_t size, uint64_t flags)
{
	uint64_t b[3] = { off, size, flags };

	if (flags & PERF_AUX_FLAG_TRUNCATED)
		s->ntrunc++;
	if (flags & PERF_AUX_FLAG_PARTIAL)
		s->npartial++;
	if (flags & PERF_AUX_FLAG_COLLISION)
		s->ncollision++;
	put_record(s, PERF_RECORD_AUX, b, sizeof(b));
}

/* MMAP2, COMM and SWITCH records of odd sizes, so that they wrap. */
static void
put_side(struct sim *s, unsigned k)
{
	uint8_t body[200];
	char name[64];
	size_t n;

	memset(body, (int)(k & 0xff), sizeof(body));
	switch (k % 3) {
	case 0:	/* MMAP2: pid, tid, addr, len, pgoff, ..., filename */
		n = (size_t)snprintf(name, sizeof(name), "/usr/lib/lib%u.so", k);
		memcpy(body + 64, name, n + 1);
		put_record(s, PERF_RECORD_MMAP2, body,
		    (uint16_t)((64 + n + 1 + 7) & ~(size_t)7));
		break;
	case 1:	/* COMM: pid, tid, comm */
		put_record(s, PERF_RECORD_COMM, body, 8 + 16);
		break;
	default:
		put_record(s, PERF_RECORD_SWITCH, body, 8 + 8 * (k % 4));
		break;
	}
}

static void *
producer(void *arg)
{
	struct sim *s = arg;
	const struct bytes *pt = s->pt;
	uint64_t head = 0, tail, room, n, i, flags, cut;
	size_t pos = 0;
	unsigned k = 0;

	while (pos < pt->len) {
		if (s->pause) {
			s->paused = 1;
			while (s->pause)
				sched_yield();
			s->paused = 0;
		}
		n = pt->len - pos < s->step ? pt->len - pos : s->step;
		flags = 0;
		if (s->policy == P_OVERWRITE) {
			room = n;
			flags |= PERF_AUX_FLAG_OVERWRITE;
		} else {
			tail = __atomic_load_n(&s->pg->aux_tail,
			    __ATOMIC_ACQUIRE);
			room = s->aux_size - (head - tail);
			if (s->policy == P_WAIT && room < n) {
				sched_yield();
				continue;
			}
		}
		cut = n < room ? n : room;
		for (i = 0; i < cut; i++)
			s->aux[(head + i) & (s->aux_size - 1)] = pt->p[pos + i];
		memset(s->kept + pos, 1, (size_t)cut);
		if (cut < n) {
			/* Full: the rest of this write is lost, as the PMU
			 * driver stops and the kernel says TRUNCATED. */
			flags |= PERF_AUX_FLAG_TRUNCATED;
			s->lost += n - cut;
		}
		k++;
		if (s->every_partial && k % s->every_partial == 0)
			flags |= PERF_AUX_FLAG_PARTIAL;
		if (s->every_collision && k % s->every_collision == 0)
			flags |= PERF_AUX_FLAG_COLLISION;
		__atomic_store_n(&s->pg->aux_head, head + cut,
		    __ATOMIC_RELEASE);
		put_aux_record(s, head, cut, flags);
		head += cut;
		s->written += cut;
		pos += (size_t)n;
		if (s->side_records)
			put_side(s, k);
	}
	s->done = 1;
	return (NULL);
}

/* ------------------------------------------------------------------ */
/* The reader's side.                                                  */

struct got {
	struct bytes	b;
	uint64_t	next;		/* expected stream offset */
	int		gap;		/* offsets not contiguous */
	unsigned	nrec;
	unsigned	nside;
	int		side_bad;
	unsigned	k;
};

static int
got_aux(void *arg, const uint8_t *buf, size_t len, uint64_t off)
{
	struct got *g = arg;

	if (off != g->next)
		g->gap = 1;
	g->next = off + len;
	return (bytes_add(&g->b, buf, len));
}

static int
got_rec(void *arg, uint32_t type, uint16_t misc, const uint8_t *body,
    size_t len)
{
	struct got *g = arg;

	g->nrec++;
	if (type == PERF_RECORD_AUX)
		return (0);
	/* A side record's body is filled with its sequence number. */
	g->nside++;
	if (len == 0 || body[0] != body[len - 1 < 63 ? len - 1 : 63])
		g->side_bad = 1;
	return (0);
}

static void
drain(struct perf_event_mmap_page *pg, struct hwtr_perf_ring *r,
    struct got *g, struct sim *s, unsigned sleep_us)
{
	struct timespec ts = { 0, (long)sleep_us * 1000 };
	int64_t n;
	int rc, last = 0;

	for (;;) {
		int fin = s->done;

		ATF_REQUIRE_MSG((rc = hwtr_perf_ring_records(r, got_rec, g)) >= 0,
		    "records: %s", hwtr_errstr(rc));
		ATF_REQUIRE_MSG((n = hwtr_perf_ring_aux(r, got_aux, g)) >= 0,
		    "aux: %s", hwtr_errstr((int)n));
		if (fin) {
			if (last)
				break;
			last = 1;	/* one more round after done */
		}
		if (sleep_us)
			nanosleep(&ts, NULL);
	}
	(void)pg;
}

/* The bytes the producer put in the ring, in order. */
static void
expected(const struct sim *s, struct bytes *w)
{
	size_t i;

	memset(w, 0, sizeof(*w));
	for (i = 0; i < s->pt->len; i++)
		if (s->kept[i])
			bytes_add(w, s->pt->p + i, 1);
}

static void
stream_case(uint64_t data_size, uint64_t aux_size, int policy, size_t step,
    size_t ptlen, unsigned sleep_us, unsigned partial, unsigned collision,
    int side)
{
	struct bytes pt, want;
	struct hwtr_perf_ring r;
	struct got g;
	struct sim s;
	pthread_t th;

	make_pt(&pt, ptlen);
	sim_init(&s, data_size, aux_size, policy, step, &pt);
	s.every_partial = partial;
	s.every_collision = collision;
	s.side_records = side;
	memset(&g, 0, sizeof(g));
	ATF_REQUIRE(hwtr_perf_ring_init(&r, s.region, PAGE, data_size, s.aux,
	    aux_size, 0) == 0);
	ATF_REQUIRE(pthread_create(&th, NULL, producer, &s) == 0);
	drain(s.pg, &r, &g, &s, sleep_us);
	ATF_REQUIRE(pthread_join(th, NULL) == 0);

	expected(&s, &want);
	ATF_CHECK_MSG(!g.gap, "stream offsets of the AUX bytes not contiguous");
	ATF_REQUIRE_EQ_MSG(g.b.len, s.written, "read %zu AUX bytes, the "
	    "producer wrote %ju", g.b.len, (uintmax_t)s.written);
	ATF_REQUIRE_MSG(want.len == 0 || memcmp(g.b.p, want.p, want.len) == 0,
	    "the AUX bytes read differ from those written");
	ATF_CHECK_EQ_MSG(s.written + s.lost, pt.len, "produced %zu, written "
	    "%ju + lost %ju", pt.len, (uintmax_t)s.written, (uintmax_t)s.lost);
	ATF_CHECK_EQ_MSG(g.nrec, s.nrec, "%u records read, %u written",
	    g.nrec, s.nrec);
	ATF_CHECK_MSG(!g.side_bad, "a side record came back torn");
	/* Every loss the kernel stated is stated by the reader. */
	ATF_CHECK_EQ_MSG(r.ntruncated, s.ntrunc, "%ju truncated records seen, "
	    "%u written", (uintmax_t)r.ntruncated, s.ntrunc);
	ATF_CHECK_EQ(r.npartial, s.npartial);
	ATF_CHECK_EQ(r.ncollision, s.ncollision);
	ATF_CHECK_MSG((s.lost > 0) == (s.ntrunc > 0),
	    "lost %ju bytes but %u truncated records", (uintmax_t)s.lost,
	    s.ntrunc);
	if (policy == P_TRUNCATE)
		ATF_REQUIRE_MSG(s.lost > 0 && r.ntruncated > 0,
		    "the slow reader lost nothing: the case tests nothing");
	hwtr_perf_ring_fini(&r);
	sim_free(&s);
	free(pt.p);
	free(want.p);
	free(g.b.p);
}

ATF_TC_WITHOUT_HEAD(stream_no_wrap);
ATF_TC_BODY(stream_no_wrap, tc)
{
	/* 40 KB of PT into a 64 KiB AUX area: no wrap, no loss. */
	stream_case(16384, 65536, P_WAIT, 1000, 40000, 0, 0, 0, 1);
}

ATF_TC_WITHOUT_HEAD(stream_wraps);
ATF_TC_BODY(stream_wraps, tc)
{
	/* 1 MB through 8 KiB, writes of 3001 bytes that straddle the end. */
	stream_case(8192, 8192, P_WAIT, 3001, 1 << 20, 0, 0, 0, 1);
}

ATF_TC_WITHOUT_HEAD(slow_reader_truncates);
ATF_TC_BODY(slow_reader_truncates, tc)
{
	/* A reader that sleeps 2 ms a round behind a producer that never
	 * waits: the kernel's TRUNCATED records, every lost byte counted. */
	stream_case(65536, 8192, P_TRUNCATE, 1500, 1 << 20, 2000, 0, 0, 0);
}

ATF_TC_WITHOUT_HEAD(flags_partial_collision);
ATF_TC_BODY(flags_partial_collision, tc)
{
	stream_case(8192, 16384, P_WAIT, 777, 200000, 0, 3, 5, 1);
}

ATF_TC_WITHOUT_HEAD(data_area_wraps);
ATF_TC_BODY(data_area_wraps, tc)
{
	/* A 4 KiB data area and thousands of odd-sized records. */
	stream_case(4096, 65536, P_WAIT, 64, 300000, 0, 0, 0, 1);
}

/* Overwrite (snapshot) mode: several snapshots while the producer pauses. */
static int
snap_out(void *arg, const uint8_t *buf, size_t len, uint64_t off)
{
	return (got_aux(arg, buf, len, off));
}

ATF_TC_WITHOUT_HEAD(overwrite_snapshots);
ATF_TC_BODY(overwrite_snapshots, tc)
{
	struct bytes pt;
	struct hwtr_perf_ring r;
	struct got g;
	struct sim s;
	pthread_t th;
	uint64_t lost, head, total_lost = 0, total = 0, from;
	int64_t n;
	int k;

	make_pt(&pt, 1 << 20);
	sim_init(&s, 1 << 20, 16384, P_OVERWRITE, 999, &pt);
	ATF_REQUIRE(hwtr_perf_ring_init(&r, s.region, PAGE, 1 << 20, s.aux,
	    16384, 1) == 0);
	ATF_REQUIRE(hwtr_perf_ring_aux(&r, got_aux, &g) == -HWTR_E_INVAL);
	ATF_REQUIRE(pthread_create(&th, NULL, producer, &s) == 0);
	for (k = 0; k < 6; k++) {
		struct timespec ts = { 0, 300000 };

		nanosleep(&ts, NULL);
		s.pause = 1;
		while (!s.paused && !s.done)
			sched_yield();
		memset(&g, 0, sizeof(g));
		head = s.pg->aux_head;
		n = hwtr_perf_ring_snapshot(&r, snap_out, &g, &lost);
		ATF_REQUIRE(n >= 0);
		from = head - (uint64_t)n;
		/* The snapshot is the produced bytes [from, head). */
		ATF_REQUIRE_MSG(n == 0 || memcmp(g.b.p, pt.p + from,
		    (size_t)n) == 0,
		    "snapshot %d: bytes differ from the producer's [%ju, %ju)",
		    k, (uintmax_t)from, (uintmax_t)head);
		ATF_REQUIRE((uint64_t)n <= 16384);
		total_lost += lost;
		total += (uint64_t)n;
		free(g.b.p);
		s.pause = 0;
	}
	ATF_REQUIRE(pthread_join(th, NULL) == 0);
	memset(&g, 0, sizeof(g));
	n = hwtr_perf_ring_snapshot(&r, snap_out, &g, &lost);
	ATF_REQUIRE(n >= 0);
	total_lost += lost;
	total += (uint64_t)n;
	ATF_REQUIRE_MSG(n == 0 ||
	    memcmp(g.b.p, pt.p + pt.len - (size_t)n, (size_t)n) == 0,
	    "the last snapshot is not the end of the trace");
	/* Every produced byte was either handed over once or stated lost. */
	ATF_REQUIRE_EQ_MSG(total + total_lost, pt.len, "snapshots %ju + lost "
	    "%ju != produced %zu", (uintmax_t)total, (uintmax_t)total_lost,
	    pt.len);
	ATF_REQUIRE(total_lost > 0);
	free(g.b.p);
	hwtr_perf_ring_fini(&r);
	sim_free(&s);
	free(pt.p);
}

ATF_TC_WITHOUT_HEAD(corrupt_record_refused);
ATF_TC_BODY(corrupt_record_refused, tc)
{
	struct bytes pt = { 0 };
	struct hwtr_perf_ring r;
	struct sim s;
	struct perf_event_header h = { PERF_RECORD_COMM, 0, 4 };

	bytes_add(&pt, "x", 1);
	sim_init(&s, 4096, 4096, P_WAIT, 1, &pt);
	ATF_REQUIRE(hwtr_perf_ring_init(&r, s.region, PAGE, 4096, s.aux, 4096,
	    0) == 0);
	/* A header claiming 4 bytes, less than itself. */
	memcpy(s.region + PAGE, &h, sizeof(h));
	s.pg->data_head = 8;
	ATF_REQUIRE_EQ(hwtr_perf_ring_records(&r, NULL, NULL), -HWTR_E_FORMAT);
	ATF_REQUIRE_EQ(s.pg->data_tail, 0);
	/* One claiming more than the kernel published. */
	h.size = 64;
	memcpy(s.region + PAGE, &h, sizeof(h));
	ATF_REQUIRE_EQ(hwtr_perf_ring_records(&r, NULL, NULL), -HWTR_E_FORMAT);
	/* A head further than the area from the tail. */
	s.pg->data_head = 8192;
	ATF_REQUIRE_EQ(hwtr_perf_ring_records(&r, NULL, NULL), -HWTR_E_FORMAT);
	s.pg->aux_head = 8192;
	ATF_REQUIRE_EQ(hwtr_perf_ring_aux(&r, got_aux, NULL), -HWTR_E_FORMAT);
	hwtr_perf_ring_fini(&r);
	sim_free(&s);
	free(pt.p);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, stream_no_wrap);
	ATF_TP_ADD_TC(tp, stream_wraps);
	ATF_TP_ADD_TC(tp, slow_reader_truncates);
	ATF_TP_ADD_TC(tp, flags_partial_collision);
	ATF_TP_ADD_TC(tp, data_area_wraps);
	ATF_TP_ADD_TC(tp, overwrite_snapshots);
	ATF_TP_ADD_TC(tp, corrupt_record_refused);
	return (atf_no_error());
}
