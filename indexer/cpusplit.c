/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * CPU mode: per-CPU streams split into per-thread parts by the
 * context-switch sideband (hwtr_cpusplit.h says how and why).
 */

#include <assert.h>
#include <inttypes.h>
#include <intel-pt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hwtr_common.h"
#include "hwtr_cpusplit.h"

/* A switch record of one CPU, in time order. */
struct sw {
	uint64_t	time;
	int32_t		pid, tid;
	int		out;
	size_t		seq;		/* archive order, for a stable sort */
};

static int
sw_cmp(const void *a, const void *b)
{
	const struct sw *x = a, *y = b;

	if (x->time != y->time)
		return (x->time < y->time ? -1 : 1);
	return (x->seq < y->seq ? -1 : x->seq > y->seq);
}

static struct ix_cpart *
part_new(struct ix_cpusplit *cs, size_t stream, int32_t cpu, int32_t pid,
    int32_t tid)
{
	struct ix_cpart *p;

	if (cs->nparts == cs->cparts) {
		size_t n = cs->cparts ? 2 * cs->cparts : 64;

		if ((p = realloc(cs->parts, n * sizeof(*p))) == NULL)
			return (NULL);
		cs->parts = p;
		cs->cparts = n;
	}
	p = &cs->parts[cs->nparts++];
	memset(p, 0, sizeof(*p));
	p->stream = stream;
	p->cpu = cpu;
	p->pid = pid;
	p->tid = tid;
	p->frag0 = p->fragn = SIZE_MAX;
	return (p);
}

/*
 * The parts of the CPU of stream @s: a switch out at t ends its thread's
 * part and hands the CPU, from t on, to the thread the next switch in
 * names; a switch in of another thread than the owner (a switch out
 * lost) starts a part of its own.  Before the first record the CPU
 * belongs to the thread the first record switches out, if it is one.
 */
static int
cpu_parts(struct ix_cpusplit *cs, size_t s, int32_t cpu, const struct sw *v,
    size_t n)
{
	struct ix_cpart *cur = NULL;
	size_t i;
	int32_t pid, tid;

	for (i = 0; i < n; i++) {
		if (cur == NULL && v[i].out) {
			if ((cur = part_new(cs, s, cpu, v[i].pid,
			    v[i].tid)) == NULL)
				return (-HWTR_E_NOMEM);
		}
		if (v[i].out) {
			pid = tid = -1;
			if (i + 1 < n && !v[i + 1].out) {
				pid = v[i + 1].pid;
				tid = v[i + 1].tid;
			}
		} else {
			if (cur != NULL && cur->tid == v[i].tid &&
			    cur->pid == v[i].pid)
				continue;
			pid = v[i].pid;
			tid = v[i].tid;
		}
		if (cur != NULL) {
			cur->has_end = 1;
			cur->end_tsc = v[i].time;
		}
		if ((cur = part_new(cs, s, cpu, pid, tid)) == NULL)
			return (-HWTR_E_NOMEM);
		cur->has_start = 1;
		cur->start_tsc = v[i].time;
	}
	return (0);
}

/*
 * An Intel PT TSC packet (and libipt's time from it) holds the TSC's low
 * 7 bytes; the sideband's times have all 8.  Past 2^56 cycles (some 280
 * days at 3 GHz) a trace time takes its top byte from the parts' times:
 * the one that puts it nearest to them.
 */
#define TSC_PKT_BITS	56

static uint64_t
full_tsc(const struct ix_cpusplit *cs, size_t p0, size_t p1, uint64_t tsc)
{
	const uint64_t span = 1ULL << TSC_PKT_BITS;
	uint64_t ref = 0, t;
	size_t i;

	if (tsc >= span)
		return (tsc);
	for (i = p0; i < p1; i++)
		if (cs->parts[i].has_start) {
			ref = cs->parts[i].start_tsc;
			break;
		}
	if (ref < span)
		return (tsc);
	t = (ref & ~(span - 1)) | tsc;
	/* The nearer of t and t + 2^56 (a wrap of the low bytes). */
	if (t < ref && ref - t > span / 2 && t <= UINT64_MAX - span)
		t += span;
	return (t);
}

static int
part_started(const void *tsc, const void *parts, size_t i)
{
	const struct ix_cpart *p = (const struct ix_cpart *)parts + i;

	return (!p->has_start || p->start_tsc <= *(const uint64_t *)tsc);
}

/* The part of stream @s's parts [p0, p1) that owns @tsc, or NULL. */
struct ix_cpart *
ix_cpusplit_part_at(struct ix_cpusplit *cs, size_t p0, size_t p1,
    uint64_t tsc)
{
	size_t n;

	assert(p0 <= p1 && p1 <= cs->nparts);
	tsc = full_tsc(cs, p0, p1, tsc);
	/* The last part that starts at or before @tsc. */
	n = hwtr_bsearch(&tsc, cs->parts + p0, p1 - p0, part_started);
	if (n == 0)
		return (NULL);
	return (&cs->parts[p0 + n - 1]);
}

static void
attr(struct ix_cpart *p, uint64_t off, uint64_t end)
{
	if (p == NULL)
		return;
	if (!p->has_bytes || off < p->off0)
		p->off0 = off;
	if (!p->has_bytes || end > p->off1)
		p->off1 = end;
	p->has_bytes = 1;
}

/*
 * The packet scan's state, carried from chunk to chunk of a piece (the
 * bytes of a packet cut by a chunk's end wait in the buffer).
 */
struct scan {
	struct ix_cpusplit *cs;
	size_t		p0, p1;		/* the stream's parts */
	struct ix_cpart	*cur;
	uint64_t	hold0, hold1;
	int		synced, have_time, in_psb, held, held_psb;
	uint8_t		*buf;		/* carried bytes + chunk */
	size_t		len, cap;
	uint64_t	base;		/* stream offset of buf[0] */
};

/*
 * Attribute the packets in sc->buf.  Each packet takes the time of the
 * last TSC packet before it; the packets of a PSB+ before its TSC (the
 * PSB first) take that TSC's time.  Packets before any time are not
 * attributed.  With @more, a packet cut at the end stays in the buffer
 * for the next chunk; without, the piece ends there.
 */
static void
scan_buf(struct scan *sc, int more)
{
	struct pt_config cfg;
	struct pt_packet_decoder *dec;
	struct pt_packet pkt;
	struct ix_cpart *p;
	uint64_t off, at, keep = sc->len;
	int rc;

	memset(&cfg, 0, sizeof(cfg));
	cfg.size = sizeof(cfg);
	cfg.begin = sc->buf;
	cfg.end = sc->buf + sc->len;
	if (sc->len == 0 || (dec = pt_pkt_alloc_decoder(&cfg)) == NULL)
		return;
	rc = sc->synced ? pt_pkt_sync_set(dec, 0) : pt_pkt_sync_forward(dec);
	sc->synced = rc >= 0;
	if (rc < 0)	/* no PSB here: keep the last bytes, a PSB may start */
		keep = sc->len > 15 ? sc->len - 15 : 0;
	while (rc >= 0) {
		if (pt_pkt_get_offset(dec, &at) < 0)
			break;
		rc = pt_pkt_next(dec, &pkt, sizeof(pkt));
		if (rc == -pte_eos && more) {
			keep = at;
			break;
		}
		if (rc < 0) {
			/* Out of sync: the next PSB, with no time yet. */
			sc->have_time = sc->in_psb = sc->held = 0;
			sc->held_psb = 0;
			sc->cur = NULL;
			rc = pt_pkt_sync_forward(dec);
			sc->synced = rc >= 0;
			if (rc < 0)
				keep = sc->len > 15 ? sc->len - 15 : 0;
			continue;
		}
		off = sc->base + at;
		switch (pkt.type) {
		case ppt_psb:
			sc->in_psb = sc->held = sc->held_psb = 1;
			sc->hold0 = off;
			sc->hold1 = off + pkt.size;
			continue;
		case ppt_tsc:
			sc->have_time = 1;
			sc->cur = ix_cpusplit_part_at(sc->cs, sc->p0, sc->p1,
			    pkt.payload.tsc.tsc);
			if (sc->held) {
				attr(sc->cur, sc->hold0, sc->hold1);
				if (sc->held_psb && sc->cur != NULL)
					sc->cur->psbs++;
				sc->held = sc->held_psb = 0;
			}
			attr(sc->cur, off, off + pkt.size);
			if (sc->cur != NULL)
				sc->cur->tscs++;
			continue;
		case ppt_psbend:
			sc->in_psb = 0;
			if (sc->held) {
				p = sc->have_time ? sc->cur : NULL;
				attr(p, sc->hold0, off + pkt.size);
				if (sc->held_psb && p != NULL)
					p->psbs++;
				sc->held = sc->held_psb = 0;
				continue;
			}
			break;
		default:
			break;
		}
		if (sc->in_psb && sc->held) {
			sc->hold1 = off + pkt.size;
			continue;
		}
		if (!sc->have_time)
			continue;
		attr(sc->cur, off, off + pkt.size);
		if (sc->cur == NULL)
			continue;
		if (pkt.type == ppt_mtc)
			sc->cur->mtcs++;
		else if (pkt.type == ppt_cyc)
			sc->cur->cycs++;
	}
	pt_pkt_free_decoder(dec);
	if (!more)
		keep = sc->len;
	memmove(sc->buf, sc->buf + keep, sc->len - keep);
	sc->len -= keep;
	sc->base += keep;
}

/*
 * Scan stream @s chunk by chunk (memory: one chunk and a cut packet); a
 * gap between chunks (lost bytes) starts over at the next PSB.
 */
static int
scan_stream(struct ix_cpusplit *cs, struct hwtr_ar *ar, size_t s, size_t p0,
    size_t p1, const volatile int *cancel, char *err, size_t errlen)
{
	size_t c, nc = hwtr_ar_nchunks(ar, s), clen;
	const struct hwtr_chunk_info *ci;
	struct scan sc;
	uint8_t *nb;
	void *cb;
	int rc = 0;

	memset(&sc, 0, sizeof(sc));
	sc.cs = cs;
	sc.p0 = p0;
	sc.p1 = p1;
	for (c = 0; c < nc; c++) {
		/* A chunk takes some 20 ms: a signal acts at once. */
		if (cancel != NULL && *cancel) {
			snprintf(err, errlen, "interrupted");
			rc = -HWTR_E_INTR;
			break;
		}
		ci = hwtr_ar_chunk(ar, s, c);
		if (sc.len > 0 && ci->offset != sc.base + sc.len) {
			scan_buf(&sc, 0);
			sc.len = 0;
		}
		if (sc.len == 0 && ci->offset != sc.base) {
			/* After a gap: no packet, no time carries over. */
			sc.synced = sc.have_time = sc.in_psb = 0;
			sc.held = sc.held_psb = 0;
			sc.cur = NULL;
		}
		if ((rc = hwtr_ar_read_chunk(ar, s, c, &cb, &clen)) < 0) {
			snprintf(err, errlen, "stream %zu chunk %zu: %s", s, c,
			    hwtr_ar_errmsg(ar));
			break;
		}
		if (sc.len == 0)
			sc.base = ci->offset;
		if (sc.len + clen > sc.cap) {
			if ((nb = realloc(sc.buf, sc.len + clen)) == NULL) {
				free(cb);
				rc = -HWTR_E_NOMEM;
				break;
			}
			sc.buf = nb;
			sc.cap = sc.len + clen;
		}
		if (clen > 0)
			memcpy(sc.buf + sc.len, cb, clen);
		sc.len += clen;
		free(cb);
		scan_buf(&sc, c + 1 < nc);
	}
	free(sc.buf);
	return (rc);
}

/*
 * Which streams are CPU streams: those of a CPU (cpu set, tid not), and
 * also an archive's only stream that is neither per thread nor per CPU
 * when no stream is per CPU: ptxed's primary sideband (a raw import's
 * --pevent:primary) is the trace's own CPU's, and its switch records
 * carry no CPU (-1).
 */
static int
cpu_of(struct hwtr_ar *ar, size_t s, int32_t *cpu)
{
	const struct hwtr_stream_desc *sd = hwtr_ar_stream(ar, s), *o;
	size_t i, nshared = 0;

	if (sd->tid >= 0)
		return (0);
	*cpu = sd->cpu;
	if (sd->cpu >= 0)
		return (1);
	for (i = 0; i < hwtr_ar_nstreams(ar); i++) {
		o = hwtr_ar_stream(ar, i);
		if (o->cpu >= 0)
			return (0);
		if (o->tid < 0)
			nshared++;
	}
	return (nshared == 1);
}

int
ix_cpusplit_build(struct ix_cpusplit *cs, struct hwtr_ar *ar,
    const volatile int *cancel, char *err, size_t errlen)
{
	const struct hwtr_stream_desc *sd;
	const struct hwtr_sb_rec *rec;
	size_t s, i, n = hwtr_ar_nsideband(ar), nv, p0;
	struct ix_csplit *st;
	struct sw *v;
	int32_t cpu;
	int rc = 0;

	memset(cs, 0, sizeof(*cs));
	cs->spill = -1;
	if ((v = calloc(n + 1, sizeof(*v))) == NULL)
		return (-HWTR_E_NOMEM);
	cs->streams = calloc(hwtr_ar_nstreams(ar) + 1, sizeof(*cs->streams));
	if (cs->streams == NULL) {
		free(v);
		return (-HWTR_E_NOMEM);
	}
	for (s = 0; s < hwtr_ar_nstreams(ar) && rc == 0; s++) {
		sd = hwtr_ar_stream(ar, s);
		if (!cpu_of(ar, s, &cpu))
			continue;
		for (i = nv = 0; i < n; i++) {
			rec = hwtr_ar_sideband_rec(ar, i);
			if (rec->type != HWTR_SB_SWITCH ||
			    rec->u.sw.cpu != cpu)
				continue;
			v[nv].time = rec->time;
			v[nv].pid = rec->pid;
			v[nv].tid = rec->tid;
			v[nv].out = rec->u.sw.out != 0;
			v[nv].seq = i;
			nv++;
		}
		if (nv == 0)
			continue;
		qsort(v, nv, sizeof(*v), sw_cmp);
		p0 = cs->nparts;
		if ((rc = cpu_parts(cs, s, cpu, v, nv)) < 0)
			break;
		st = &cs->streams[cs->nstreams++];
		st->stream = s;
		st->p0 = p0;
		st->p1 = cs->nparts;
		st->cur = st->last_own = SIZE_MAX;
		if ((st->owners = calloc(st->p1 - st->p0 + 1,
		    sizeof(*st->owners))) == NULL) {
			rc = -HWTR_E_NOMEM;
			break;
		}
		for (i = p0; i < st->p1; i++) {
			st->owners[i - p0].has_start = cs->parts[i].has_start;
			st->owners[i - p0].start_tsc = cs->parts[i].start_tsc;
			st->owners[i - p0].pid = cs->parts[i].pid;
		}
		if (sd->format == HWTR_TF_INTEL_PT)
			rc = scan_stream(cs, ar, s, p0, cs->nparts, cancel,
			    err, errlen);
	}
	free(v);
	if (rc < 0)
		ix_cpusplit_free(cs);
	return (rc);
}

struct ix_csplit *
ix_cpusplit_stream(struct ix_cpusplit *cs, size_t stream)
{
	size_t i;

	for (i = 0; i < cs->nstreams; i++)
		if (cs->streams[i].stream == stream)
			return (&cs->streams[i]);
	return (NULL);
}

static int
sql_err(sqlite3 *db, char *err, size_t errlen)
{
	snprintf(err, errlen, "cpu_parts: %s", sqlite3_errmsg(db));
	return (-HWTR_E_DB);
}

/* The threads row of a thread history (cputhread.c): its counts. */
static int
thread_row(sqlite3_stmt *th, const struct ix_cthread *t,
    const struct hwtr_timeconv *tc)
{
	sqlite3_reset(th);
	sqlite3_bind_int64(th, 1, t->thread);
	sqlite3_bind_int64(th, 2, t->blocks);
	sqlite3_bind_int64(th, 3, t->insns);
	if (t->has_first) {
		sqlite3_bind_int64(th, 4, (int64_t)t->first_tsc);
		if (tc->valid)
			sqlite3_bind_int64(th, 6,
			    hwtr_tsc_to_ns(tc, t->first_tsc));
		else
			sqlite3_bind_null(th, 6);
	} else {
		sqlite3_bind_null(th, 4);
		sqlite3_bind_null(th, 6);
	}
	if (t->has_last) {
		sqlite3_bind_int64(th, 5, (int64_t)t->last_tsc);
		if (tc->valid)
			sqlite3_bind_int64(th, 7,
			    hwtr_tsc_to_ns(tc, t->last_tsc));
		else
			sqlite3_bind_null(th, 7);
	} else {
		sqlite3_bind_null(th, 5);
		sqlite3_bind_null(th, 7);
	}
	sqlite3_bind_int64(th, 8, t->errors);
	sqlite3_bind_int64(th, 9, t->gaps);
	sqlite3_bind_int64(th, 10, t->calls);
	sqlite3_bind_int64(th, 11, t->max_depth);
	return (sqlite3_step(th) == SQLITE_DONE ? 0 : -1);
}

/*
 * cpu_parts rows, the decode errors each part got (its thread's, in its
 * time), and the counts of each thread's history: the blocks, calls and
 * times cputhread.c stitched for it, and for a CPU stream's own row the
 * decode errors no thread owns.
 */
int
ix_cpusplit_write(const struct ix_cpusplit *cs, sqlite3 *db,
    const struct hwtr_timeconv *tc, char *err, size_t errlen)
{
	sqlite3_stmt *ins = NULL, *ne = NULL, *th = NULL, *se = NULL;
	const struct ix_cpart *p;
	size_t i, k = 0;
	int rc = 0;

	if (cs->nparts == 0)
		return (0);
	if (sqlite3_prepare_v2(db, "INSERT INTO cpu_parts VALUES (?,?,?,?,?,"
	    "?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,0)", -1, &ins, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "UPDATE cpu_parts SET errors = (SELECT "
	    "count(*) FROM events e WHERE e.thread = ifnull(cpu_parts.thread, "
	    "cpu_parts.stream_thread) AND "
	    "e.stream = cpu_parts.stream AND e.kind = 'decode-error' AND "
	    "e.tsc >= ifnull(cpu_parts.start_tsc, 0) AND "
	    "e.tsc < ifnull(cpu_parts.end_tsc, 9223372036854775807))",
	    -1, &ne, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "UPDATE threads SET blocks = ?2, "
	    "insns = ?3, first_tsc = ?4, last_tsc = ?5, first_ns = ?6, "
	    "last_ns = ?7, errors = ?8, gaps = ?9, calls = ?10, "
	    "max_depth = ?11 WHERE id = ?1", -1, &th, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "UPDATE threads SET errors = ?2 WHERE "
	    "id = ?1", -1, &se, NULL) != SQLITE_OK) {
		rc = sql_err(db, err, errlen);
		goto out;
	}
	for (i = 0; i < cs->nparts && rc == 0; i++) {
		p = &cs->parts[i];
		k = i > 0 && cs->parts[i - 1].stream == p->stream ? k + 1 : 0;
		sqlite3_reset(ins);
		sqlite3_bind_int64(ins, 1, p->db_stream);
		if (p->cpu >= 0)
			sqlite3_bind_int64(ins, 2, p->cpu);
		else
			sqlite3_bind_null(ins, 2);
		sqlite3_bind_int64(ins, 3, (int64_t)k);
		if (p->thread > 0)
			sqlite3_bind_int64(ins, 4, p->thread);
		else
			sqlite3_bind_null(ins, 4);
		if (p->pid >= 0)
			sqlite3_bind_int64(ins, 5, p->pid);
		else
			sqlite3_bind_null(ins, 5);
		if (p->tid >= 0)
			sqlite3_bind_int64(ins, 6, p->tid);
		else
			sqlite3_bind_null(ins, 6);
		if (p->has_start) {
			sqlite3_bind_int64(ins, 7, (int64_t)p->start_tsc);
			if (tc->valid)
				sqlite3_bind_int64(ins, 9,
				    hwtr_tsc_to_ns(tc, p->start_tsc));
		}
		if (p->has_end) {
			sqlite3_bind_int64(ins, 8, (int64_t)p->end_tsc);
			if (tc->valid)
				sqlite3_bind_int64(ins, 10,
				    hwtr_tsc_to_ns(tc, p->end_tsc));
		}
		if (!p->has_start || !tc->valid)
			sqlite3_bind_null(ins, 9);
		if (!p->has_end || !tc->valid)
			sqlite3_bind_null(ins, 10);
		if (!p->has_start)
			sqlite3_bind_null(ins, 7);
		if (!p->has_end)
			sqlite3_bind_null(ins, 8);
		if (p->has_bytes) {
			sqlite3_bind_int64(ins, 11, (int64_t)p->off0);
			sqlite3_bind_int64(ins, 12, (int64_t)p->off1);
		} else {
			sqlite3_bind_null(ins, 11);
			sqlite3_bind_null(ins, 12);
		}
		sqlite3_bind_int64(ins, 13, (int64_t)p->psbs);
		sqlite3_bind_int64(ins, 14, (int64_t)p->tscs);
		sqlite3_bind_int64(ins, 15, (int64_t)p->mtcs);
		sqlite3_bind_int64(ins, 16, (int64_t)p->cycs);
		sqlite3_bind_int64(ins, 17, p->stream_thread);
		if (p->has_seq) {
			sqlite3_bind_int64(ins, 18, p->first_seq);
			sqlite3_bind_int64(ins, 19, p->end_seq);
			sqlite3_bind_int64(ins, 20, p->first_insn);
			sqlite3_bind_int64(ins, 21, p->end_insn);
		} else {
			sqlite3_bind_null(ins, 18);
			sqlite3_bind_null(ins, 19);
			sqlite3_bind_null(ins, 20);
			sqlite3_bind_null(ins, 21);
		}
		if (sqlite3_step(ins) != SQLITE_DONE)
			rc = sql_err(db, err, errlen);
	}
	for (i = 0; i < cs->nthreads && rc == 0; i++)
		if (thread_row(th, &cs->threads[i], tc) < 0)
			rc = sql_err(db, err, errlen);
	for (i = 0; i < cs->nstreams && rc == 0; i++) {
		const struct ix_csplit *st = &cs->streams[i];

		if (!st->demux || st->p0 == st->p1)
			continue;
		sqlite3_reset(se);
		sqlite3_bind_int64(se, 1, cs->parts[st->p0].stream_thread);
		sqlite3_bind_int64(se, 2, st->errors - st->errors_owned);
		if (sqlite3_step(se) != SQLITE_DONE)
			rc = sql_err(db, err, errlen);
	}
	if (rc == 0 && sqlite3_step(ne) != SQLITE_DONE)
		rc = sql_err(db, err, errlen);
out:
	sqlite3_finalize(ins);
	sqlite3_finalize(ne);
	sqlite3_finalize(th);
	sqlite3_finalize(se);
	return (rc);
}

void
ix_cpusplit_owners(const struct ix_cpusplit *cs, size_t stream,
    const struct ix_owner **op, size_t *np)
{
	size_t i;

	*op = NULL;
	*np = 0;
	for (i = 0; i < cs->nstreams; i++)
		if (cs->streams[i].stream == stream) {
			*op = cs->streams[i].owners;
			*np = cs->streams[i].p1 - cs->streams[i].p0;
		}
}

void
ix_cpusplit_free(struct ix_cpusplit *cs)
{
	size_t i;

	if (cs == NULL)
		return;
	for (i = 0; i < cs->nstreams; i++)
		free(cs->streams[i].owners);
	if (cs->spill >= 0)
		close(cs->spill);
	free(cs->parts);
	free(cs->streams);
	free(cs->frags);
	free(cs->threads);
	memset(cs, 0, sizeof(*cs));
	cs->spill = -1;
}
