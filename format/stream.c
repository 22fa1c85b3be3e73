/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The stream view (hwtr_stream.h): pieces and segments of an archive's
 * streams, found by one scan with read-ahead, and byte ranges read across
 * chunks through a shared chunk cache.
 */

#include <assert.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwtrace.h"
#include "hwtr_common.h"
#include "hwtr_stream.h"

/*
 * A stream chunk as the readers share it: decompressed once by the first
 * segment that reads it, kept while segments that read it are still to
 * come (@users, counted by count_users()), freed after the last one.  The
 * indexer takes segments in stream order and at most a window ahead of
 * its writer, so only the few chunks under the segments being decoded
 * are held.
 */
struct sv_cchunk {
	uint8_t		*buf;
	size_t		len;
	size_t		users;		/* segments yet to release it */
	int		loading;	/* a thread is decompressing it */
};

/* An archive stream: its pieces, segments and cached chunks. */
struct sv_stream {
	struct hwtr_sv_piece *pieces;
	size_t		npieces, cap_pieces;
	uint64_t	bytes, gaps;
	uint64_t	unread;		/* bytes of chunks that cannot be read */
	size_t		nunread;
	size_t		seg0, nseg;
	int		tail_cut;	/* opts.tail: planned from tail_from */
	uint64_t	tail_from;
	struct sv_cchunk *cc;		/* per chunk, under cclock */
	size_t		ncc;
};

struct hwtr_sv {
	struct hwtr_ar	*ar;
	struct hwtr_sv_opts opts;
	size_t		nstreams;
	struct sv_stream *res;
	struct hwtr_sv_seg *segs;
	size_t		nsegs, csegs;
	uint64_t	seg_size, seg_max;
	pthread_mutex_t	cclock;		/* the shared chunks (sv_cchunk) */
	pthread_cond_t	cc_cv;
};

static const uint8_t psb_pattern[16] = {
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82
};

static struct hwtr_sv_seg *
new_seg(struct hwtr_sv *r, size_t s, size_t p, uint64_t start)
{
	struct hwtr_sv_seg *g;

	if (hwtr_grow(&r->segs, &r->csegs, r->nsegs + 1,
	    sizeof(*g)) < 0)
		return (NULL);
	g = &r->segs[r->nsegs++];
	memset(g, 0, sizeof(*g));
	g->stream = s;
	g->piece = p;
	g->start = start;
	r->res[s].nseg++;
	return (g);
}

/*
 * Chunks decompressed ahead of the PSB scan.  The scan reads every chunk
 * of every stream in order before any worker can start, and zstd is most
 * of its time: helper threads decompress the next chunks while the scan
 * goes through the current one, at most @ahead chunks ahead of it, so
 * that the wait before decoding shrinks with -j and memory stays bounded.
 */
struct sv_ra_slot {
	size_t		s, c;
	void		*buf;
	size_t		len;
	int		state;		/* 0 to do, 1 read, -1 failed */
};

struct sv_ra {
	struct hwtr_sv	*r;
	struct sv_ra_slot *slot;	/* every chunk, streams in order */
	size_t		n, next, taken, ahead;
	size_t		*first;		/* stream -> its first slot */
	int		stop;
	pthread_mutex_t	lock;
	pthread_cond_t	cv;
	pthread_t	*tids;
	size_t		nthreads;
};

static void *
ra_helper(void *arg)
{
	struct sv_ra *ra = arg;
	struct sv_ra_slot *sl;
	void *buf;
	size_t k, len;
	int rc;

	pthread_mutex_lock(&ra->lock);
	for (;;) {
		while (!ra->stop && ra->next < ra->n &&
		    ra->next >= ra->taken + ra->ahead)
			pthread_cond_wait(&ra->cv, &ra->lock);
		if (ra->stop || ra->next >= ra->n)
			break;
		k = ra->next++;
		sl = &ra->slot[k];
		pthread_mutex_unlock(&ra->lock);
		rc = hwtr_ar_read_chunk(ra->r->ar, sl->s, sl->c, &buf, &len);
		pthread_mutex_lock(&ra->lock);
		sl->buf = rc < 0 ? NULL : buf;
		sl->len = rc < 0 ? 0 : len;
		sl->state = rc < 0 ? -1 : 1;
		pthread_cond_broadcast(&ra->cv);
	}
	pthread_mutex_unlock(&ra->lock);
	return (NULL);
}

/* Start @nthreads helpers (none: ra_read() reads itself). */
static int
ra_start(struct sv_ra *ra, struct hwtr_sv *r, size_t nthreads)
{
	size_t s, c, k = 0;

	memset(ra, 0, sizeof(*ra));
	ra->r = r;
	pthread_mutex_init(&ra->lock, NULL);
	pthread_cond_init(&ra->cv, NULL);
	if (nthreads < 2)
		return (0);
	for (s = 0; s < r->nstreams; s++)
		ra->n += hwtr_ar_nchunks(r->ar, s);
	ra->slot = calloc(ra->n + 1, sizeof(*ra->slot));
	ra->first = calloc(r->nstreams + 1, sizeof(*ra->first));
	ra->tids = calloc(nthreads, sizeof(*ra->tids));
	if (ra->slot == NULL || ra->first == NULL || ra->tids == NULL)
		return (-HWTR_E_NOMEM);
	for (s = 0; s < r->nstreams; s++) {
		ra->first[s] = k;
		for (c = 0; c < hwtr_ar_nchunks(r->ar, s); c++, k++) {
			ra->slot[k].s = s;
			ra->slot[k].c = c;
		}
	}
	ra->ahead = nthreads + 1;
	for (; ra->nthreads < nthreads; ra->nthreads++)
		if (pthread_create(&ra->tids[ra->nthreads], NULL, ra_helper,
		    ra) != 0)
			break;
	return (0);
}

static void
ra_stop(struct sv_ra *ra)
{
	size_t k;

	pthread_mutex_lock(&ra->lock);
	ra->stop = 1;
	pthread_cond_broadcast(&ra->cv);
	pthread_mutex_unlock(&ra->lock);
	for (k = 0; k < ra->nthreads; k++)
		pthread_join(ra->tids[k], NULL);
	for (k = 0; k < ra->n; k++)
		free(ra->slot[k].buf);
	free(ra->slot);
	free(ra->first);
	free(ra->tids);
	pthread_mutex_destroy(&ra->lock);
	pthread_cond_destroy(&ra->cv);
}

/*
 * Chunk @c of stream @s as hwtr_ar_read_chunk() gives it (malloc'd), in
 * order.  A chunk a helper could not read is read again here, so that
 * the archive's message is this thread's.
 */
static int
ra_read(struct sv_ra *ra, size_t s, size_t c, void **bufp, size_t *lenp)
{
	struct sv_ra_slot *sl;
	size_t k;
	int ok;

	if (ra->nthreads == 0 || s >= ra->r->nstreams ||
	    (k = ra->first[s] + c) >= ra->n)
		return (hwtr_ar_read_chunk(ra->r->ar, s, c, bufp, lenp));
	sl = &ra->slot[k];
	pthread_mutex_lock(&ra->lock);
	while (sl->state == 0)
		pthread_cond_wait(&ra->cv, &ra->lock);
	ok = sl->state > 0;
	*bufp = sl->buf;
	*lenp = sl->len;
	sl->buf = NULL;
	if (ra->taken < k + 1)
		ra->taken = k + 1;
	pthread_cond_broadcast(&ra->cv);
	pthread_mutex_unlock(&ra->lock);
	return (ok ? 0 : hwtr_ar_read_chunk(ra->r->ar, s, c, bufp, lenp));
}

/*
 * Cut the stream into pieces (contiguous readable chunks; the bytes
 * between them were lost) and the pieces into segments: a segment starts
 * at the piece's start or at the first PSB at least seg_size bytes after
 * the previous segment's start (and HWTR_SV_PSB_GAP after the PSB before it).
 * Every chunk is read once here (its checksum checked, the PSBs found)
 * and once more when the first segment in it is decoded (cc_get()).
 */
/* The state of a stream's PSB scan (plan_stream()). */
struct sv_scan {
	struct hwtr_sv_seg	*g;		/* the segment being cut */
	uint64_t	cut, last_psb, mingap;
	int		have_psb;
	int		tail_wait;	/* opts.tail: no PSB at tail_from yet */
	uint64_t	tail_from;
	uint64_t	first_psb;	/* the first PSB seen, when tail_wait */
};

/*
 * A PSB at stream offset @at: it starts the next segment when it is
 * seg_size or more after the current one's start and mingap after the
 * PSB before it.
 */
static int
psb_found(struct hwtr_sv *r, size_t s, struct sv_scan *sc, uint64_t at)
{
	/* opts.tail: the first segment starts at the first PSB there. */
	if (sc->tail_wait) {
		if (!sc->have_psb)
			sc->first_psb = at;
		sc->have_psb = 1;
		sc->last_psb = at;
		if (at < sc->tail_from || sc->g == NULL)
			return (0);
		sc->tail_wait = 0;
		sc->g->start = sc->cut = at;
		/* Found in a later piece: the segments before it go. */
		if (sc->g != &r->segs[r->res[s].seg0]) {
			r->segs[r->res[s].seg0] = *sc->g;
			r->nsegs = r->res[s].seg0 + 1;
			r->res[s].nseg = 1;
			sc->g = &r->segs[r->res[s].seg0];
		}
		return (0);
	}
	if (sc->g != NULL && at >= sc->cut + r->seg_size && sc->have_psb &&
	    at - sc->last_psb >= sc->mingap) {
		sc->g->end = at;
		sc->g->has_limit = 1;
		if ((sc->g = new_seg(r, s, r->res[s].npieces - 1, at)) == NULL)
			return (-HWTR_E_NOMEM);
		sc->cut = at;
	}
	sc->have_psb = 1;
	sc->last_psb = at;
	return (0);
}

/*
 * opts.tail: the first chunk of stream @s holding a byte of its last
 * @want bytes; @sc then waits for the first PSB from there.  0 (and the
 * stream whole) when it is no longer than that.
 */
static size_t
tail_chunk(struct hwtr_sv *r, size_t s, uint64_t want, struct sv_scan *sc)
{
	size_t c, nc = hwtr_ar_nchunks(r->ar, s);
	const struct hwtr_chunk_info *last = hwtr_ar_chunk(r->ar, s, nc - 1);
	uint64_t end = last->offset + last->len;

	if (end - hwtr_ar_chunk(r->ar, s, 0)->offset <= want)
		return (0);
	sc->tail_from = end - want;
	sc->tail_wait = 1;
	r->res[s].tail_cut = 1;
	for (c = nc - 1; c > 0; c--)
		if (hwtr_ar_chunk(r->ar, s, c)->offset <= sc->tail_from)
			break;
	return (c);
}

/*
 * The segments of CoreSight stream @s: the whole stream in one when it
 * holds at most seg_max bytes (its decoder goes from piece to piece).  A
 * longer one is cut so that no decoder holds more: each piece in
 * segments of at most seg_max bytes, cut blind (a decoder finds no
 * synchronisation point in formatted bytes without decoding them) at a
 * multiple of HWTR_SV_CS_CUT from the piece's start, so that formatter
 * frames and DSTREAM blocks stay whole.  A segment after a blind cut
 * starts over: each source waits for its next A-Sync.
 */
static int
cs_segs(struct hwtr_sv *r, size_t s)
{
	struct sv_stream *res = &r->res[s];
	struct hwtr_sv_seg *g;
	uint64_t max, at, end;
	size_t k;

	if (res->bytes <= r->seg_max)
		return (new_seg(r, s, 0, res->pieces[0].off) == NULL ?
		    -HWTR_E_NOMEM : 0);
	max = r->seg_max - r->seg_max % HWTR_SV_CS_CUT;
	if (max == 0)
		max = HWTR_SV_CS_CUT;
	for (k = 0; k < res->npieces; k++) {
		end = res->pieces[k].off + res->pieces[k].len;
		for (at = res->pieces[k].off; at == res->pieces[k].off ||
		    at < end; at += max) {
			if ((g = new_seg(r, s, k, at)) == NULL)
				return (-HWTR_E_NOMEM);
			g->end = end - at > max ? at + max : end;
			g->has_limit = 1;
			g->first_of_stream = k == 0 && at == res->pieces[0].off;
			g->blind_start = at != res->pieces[k].off;
			g->blind_end = g->end != end;
			if (k > 0 && !g->blind_start) {
				g->lost_before = 1;
				g->lost_bytes = res->pieces[k].off -
				    (res->pieces[k - 1].off +
				    res->pieces[k - 1].len);
			}
		}
	}
	return (0);
}

static int
plan_stream_tail(struct hwtr_sv *r, struct sv_ra *ra, size_t s, uint64_t want,
    int *nopsb)
{
	const struct hwtr_stream_desc *sd = hwtr_ar_stream(r->ar, s);
	struct sv_stream *res = &r->res[s];
	size_t c, c0, nc = hwtr_ar_nchunks(r->ar, s);
	const size_t plen = sizeof(psb_pattern);
	uint64_t end = 0;
	struct sv_scan sc;
	/* The stream's last plen - 1 bytes so far, and plen of the next. */
	uint8_t tb[2 * sizeof(psb_pattern)];
	size_t tail = 0;
	int pt = sd->format == HWTR_TF_INTEL_PT;

	memset(&sc, 0, sizeof(sc));
	sc.mingap = r->seg_size < HWTR_SV_PSB_GAP ? r->seg_size :
	    HWTR_SV_PSB_GAP;
	res->seg0 = r->nsegs;
	c = 0;
	if (pt && want > 0 && nc > 0)
		c = tail_chunk(r, s, want, &sc);
	c0 = c;
	for (; c < nc; c++) {
		const struct hwtr_chunk_info *ci = hwtr_ar_chunk(r->ar, s, c);
		struct hwtr_sv_piece *p;
		uint8_t *buf, *q;
		size_t len, i, jl, bi;
		int rc;

		/* A chunk takes some 20 ms: a signal acts at once. */
		if (r->opts.cancel != NULL && *r->opts.cancel)
			return (-HWTR_E_INTR);
		rc = ra_read(ra, s, c, (void **)&buf, &len);
		if (rc < 0) {
			/* A chunk that cannot be read is lost data. */
			res->unread += ci->len;
			res->nunread++;
			if (r->opts.problem != NULL)
				r->opts.problem(r->opts.problem_arg, s,
				    ci->offset, hwtr_ar_errmsg(r->ar));
			continue;
		}
		if (res->npieces == 0 || ci->offset != end) {
			if (res->npieces > 0 && ci->offset > end)
				res->gaps += ci->offset - end;
			if (hwtr_grow(&res->pieces, &res->cap_pieces,
			    res->npieces + 1, sizeof(*p)) < 0) {
				free(buf);
				return (-HWTR_E_NOMEM);
			}
			p = &res->pieces[res->npieces++];
			p->off = ci->offset;
			p->len = 0;
			p->c0 = c;
			tail = 0;
			sc.have_psb = 0;
			if (pt) {
				sc.g = new_seg(r, s, res->npieces - 1, p->off);
				if (sc.g == NULL) {
					free(buf);
					return (-HWTR_E_NOMEM);
				}
				sc.g->first_of_stream = res->npieces == 1;
				if (res->npieces > 1) {
					sc.g->lost_before = 1;
					sc.g->lost_bytes = p->off - (p[-1].off +
					    p[-1].len);
				}
				sc.cut = p->off;
			}
		}
		p = &res->pieces[res->npieces - 1];
		if (pt) {
			/*
			 * The PSBs a scan of the piece finds, each at least
			 * plen bytes after the one before: first one that
			 * starts in the last bytes of the chunk before (from
			 * those and this chunk's first plen), then this
			 * chunk's, without copying it.
			 */
			rc = 0;
			jl = tail + (len < plen ? len : plen);
			memcpy(tb + tail, buf, jl - tail);
			bi = 0;
			q = memmem(tb, jl, psb_pattern, plen);
			if (q != NULL && (size_t)(q - tb) < tail) {
				rc = psb_found(r, s, &sc, ci->offset - tail +
				    (uint64_t)(q - tb));
				bi = (size_t)(q - tb) + plen - tail;
			}
			while (rc == 0 && bi + plen <= len && (q = memmem(buf +
			    bi, len - bi, psb_pattern, plen)) != NULL) {
				rc = psb_found(r, s, &sc, ci->offset +
				    (uint64_t)(q - buf));
				bi = (size_t)(q - buf) + plen;
			}
			if (rc < 0) {
				free(buf);
				return (rc);
			}
			if (len >= plen - 1) {
				memcpy(tb, buf + len - (plen - 1), plen - 1);
				tail = plen - 1;
			} else {
				i = tail + len < plen - 1 ? tail + len :
				    plen - 1;
				memmove(tb, tb + tail + len - i, i);
				tail = i;
			}
		}
		free(buf);
		p->len += len;
		p->c1 = c + 1;
		end = ci->offset + len;
		res->bytes += len;
		if (pt && sc.g != NULL)
			sc.g->end = end;
	}
	/* No PSB after tail_from: from the last one before it. */
	if (sc.tail_wait && sc.have_psb && sc.g != NULL &&
	    sc.g->start < sc.last_psb)
		sc.g->start = sc.last_psb;
	*nopsb = sc.tail_wait && !sc.have_psb;
	/* Back to the stream's first PSB: whole after all. */
	if (sc.tail_wait && sc.have_psb && c0 == 0 && res->npieces == 1 &&
	    sc.g != NULL && sc.g->start <= sc.first_psb)
		res->tail_cut = 0;
	if (res->tail_cut && res->nseg > 0)
		res->tail_from = r->segs[res->seg0].start;
	if (sd->format == HWTR_TF_CORESIGHT && res->npieces > 0)
		return (cs_segs(r, s));
	return (0);
}

/*
 * Cut the Intel PT segments of stream @s (the last ones planned) that are
 * longer than seg_max into pieces of seg_max without a PSB at their
 * cuts, so that a decoder never holds more: bytes without a PSB for that
 * long are nothing libipt could decode but from their first PSB on.
 */
static int
split_long(struct hwtr_sv *r, size_t s)
{
	struct sv_stream *res = &r->res[s];
	struct hwtr_sv_seg g, h;
	size_t i, j, k, n, extra = 0;
	uint64_t len;

	if (hwtr_ar_stream(r->ar, s)->format != HWTR_TF_INTEL_PT)
		return (0);
	assert(res->seg0 + res->nseg == r->nsegs);
	for (i = res->seg0; i < r->nsegs; i++) {
		len = r->segs[i].end - r->segs[i].start;
		if (len > r->seg_max)
			extra += (size_t)((len - 1) / r->seg_max);
	}
	if (extra == 0)
		return (0);
	if (hwtr_grow(&r->segs, &r->csegs, r->nsegs + extra,
	    sizeof(*r->segs)) < 0)
		return (-HWTR_E_NOMEM);
	/* From the back, each segment in its n parts. */
	j = r->nsegs + extra;
	for (i = r->nsegs; i-- > res->seg0;) {
		g = r->segs[i];
		assert(g.end >= g.start);
		len = g.end - g.start;
		n = len > r->seg_max ? (size_t)((len - 1) / r->seg_max) + 1 : 1;
		for (k = n; k-- > 0;) {
			h = g;
			h.start = g.start + k * r->seg_max;
			if (k + 1 < n) {
				h.end = h.start + r->seg_max;
				h.has_limit = 1;
				h.blind_end = 1;
			}
			if (k > 0) {
				h.blind_start = 1;
				h.first_of_stream = 0;
				h.lost_before = 0;
				h.lost_bytes = 0;
			}
			assert(j > i);
			r->segs[--j] = h;
		}
	}
	assert(j == res->seg0);
	r->nsegs += extra;
	res->nseg += extra;
	return (0);
}

/*
 * A stream planned whole, or from its last opts.tail bytes; when those
 * hold no PSB, the state there is not known: planned again from twice as
 * far back, until a PSB is found or the stream is whole.
 */
static int
plan_stream(struct hwtr_sv *r, struct sv_ra *ra, size_t s)
{
	struct sv_stream *res = &r->res[s];
	uint64_t want = r->opts.tail;
	int rc, nopsb = 0;

	for (;;) {
		rc = plan_stream_tail(r, ra, s, want, &nopsb);
		if (rc == 0 && !nopsb)
			rc = split_long(r, s);
		if (rc < 0 || !nopsb)
			return (rc);
		r->nsegs = res->seg0;
		res->nseg = 0;
		res->npieces = 0;
		res->bytes = 0;
		res->gaps = 0;
		res->unread = 0;
		res->nunread = 0;
		res->tail_cut = 0;
		want = want > UINT64_MAX / 2 ? UINT64_MAX : want * 2;
	}
}

/*
 * The bytes segment @g reads: [start, *@top) of its piece, the margin
 * past its end included (Intel PT; a CoreSight segment cut by cs_segs()
 * has none), or every piece of the stream (CoreSight: -1).
 */
static int
seg_range(const struct hwtr_sv *r, const struct hwtr_sv_seg *g,
    uint64_t *top)
{
	const struct hwtr_sv_piece *p = &r->res[g->stream].pieces[g->piece];

	*top = g->end;
	if (hwtr_ar_stream(r->ar, g->stream)->format == HWTR_TF_CORESIGHT)
		return (g->has_limit ? 0 : -1);
	if (g->has_limit)
		*top = p->off + p->len - g->end > HWTR_SV_SEG_MARGIN ?
		    g->end + HWTR_SV_SEG_MARGIN : p->off + p->len;
	return (0);
}

/*
 * Call @fn for every chunk of piece @p of stream @s that holds a byte of
 * [@from, @to).  read_range() reads exactly these chunks.
 */
static void
range_chunks(struct hwtr_sv *r, size_t s, const struct hwtr_sv_piece *p,
    uint64_t from, uint64_t to, void (*fn)(struct hwtr_sv *,
    struct sv_cchunk *))
{
	size_t c;

	for (c = p->c0; c < p->c1 && c < r->res[s].ncc; c++) {
		const struct hwtr_chunk_info *ci = hwtr_ar_chunk(r->ar, s, c);

		if (ci->offset >= to)
			break;
		if (ci->offset + ci->len > from)
			fn(r, &r->res[s].cc[c]);
	}
}

/* Every chunk a segment reads, for each of its segments. */
static void
seg_chunks(struct hwtr_sv *r, const struct hwtr_sv_seg *g,
    void (*fn)(struct hwtr_sv *, struct sv_cchunk *))
{
	const struct sv_stream *res = &r->res[g->stream];
	uint64_t to;
	size_t k;

	if (seg_range(r, g, &to) == 0)
		range_chunks(r, g->stream, &res->pieces[g->piece], g->start,
		    to, fn);
	else
		for (k = 0; k < res->npieces; k++)
			range_chunks(r, g->stream, &res->pieces[k],
			    res->pieces[k].off, res->pieces[k].off +
			    res->pieces[k].len, fn);
}

static void
cc_use(struct hwtr_sv *r, struct sv_cchunk *cc)
{
	(void)r;
	cc->users++;
}

/* A segment is done with a chunk: the last one frees it. */
static void
cc_release(struct hwtr_sv *r, struct sv_cchunk *cc)
{
	pthread_mutex_lock(&r->cclock);
	if (cc->users > 0 && --cc->users == 0) {
		free(cc->buf);
		cc->buf = NULL;
		cc->len = 0;
	}
	pthread_mutex_unlock(&r->cclock);
}

static int
count_users(struct hwtr_sv *r)
{
	size_t s, i;

	for (s = 0; s < r->nstreams; s++) {
		r->res[s].ncc = hwtr_ar_nchunks(r->ar, s);
		r->res[s].cc = calloc(r->res[s].ncc + 1,
		    sizeof(*r->res[s].cc));
		if (r->res[s].cc == NULL)
			return (-HWTR_E_NOMEM);
	}
	for (i = 0; i < r->nsegs; i++)
		seg_chunks(r, &r->segs[i], cc_use);
	return (0);
}

/*
 * Chunk @c of stream @s, decompressed by the first worker that asks for
 * it while the others wait; valid until the caller's segment releases
 * it (seg_chunks(..., cc_release)).  A chunk that cannot be read is not
 * kept: the next segment tries again and says so too.
 */
static int
cc_get(struct hwtr_sv *r, size_t s, size_t c, const uint8_t **bufp,
    size_t *lenp)
{
	struct sv_cchunk *cc = &r->res[s].cc[c];
	void *buf;
	size_t len;
	int rc;

	pthread_mutex_lock(&r->cclock);
	while (cc->loading)
		pthread_cond_wait(&r->cc_cv, &r->cclock);
	if (cc->buf != NULL) {
		*bufp = cc->buf;
		*lenp = cc->len;
		pthread_mutex_unlock(&r->cclock);
		return (0);
	}
	cc->loading = 1;
	pthread_mutex_unlock(&r->cclock);
	rc = hwtr_ar_read_chunk(r->ar, s, c, &buf, &len);
	pthread_mutex_lock(&r->cclock);
	cc->loading = 0;
	if (rc >= 0) {
		cc->buf = buf;
		cc->len = len;
	}
	pthread_cond_broadcast(&r->cc_cv);
	pthread_mutex_unlock(&r->cclock);
	*bufp = buf;
	*lenp = len;
	return (rc < 0 ? rc : 0);
}


/*
 * Bytes [@from, @to) of piece @p of stream @s from the chunks that hold
 * them (the shared chunks: cc_get()): a pointer into the chunk when one
 * holds them all, else a copy in *@copyp (caller frees).  Valid until
 * the segment releases its chunks.
 */
static int
read_range(struct hwtr_sv *r, size_t s, const struct hwtr_sv_piece *p,
    uint64_t from, uint64_t to, const uint8_t **dstp, uint8_t **copyp,
    char *err, size_t errlen)
{
	uint8_t *dst = NULL;
	size_t c;

	*dstp = NULL;
	*copyp = NULL;
	for (c = p->c0; c < p->c1 && c < r->res[s].ncc && from < to; c++) {
		const struct hwtr_chunk_info *ci = hwtr_ar_chunk(r->ar, s, c);
		const uint8_t *buf;
		uint64_t a, b;
		size_t len;

		if (ci->offset + ci->len <= from)
			continue;
		if (ci->offset >= to)
			break;
		if (cc_get(r, s, c, &buf, &len) < 0) {
			snprintf(err, errlen, "offset %#" PRIx64 ": chunk "
			    "cannot be read: %s", ci->offset,
			    hwtr_ar_errmsg(r->ar));
			return (-HWTR_E_IO);
		}
		a = from > ci->offset ? from : ci->offset;
		b = to < ci->offset + len ? to : ci->offset + len;
		if (dst == NULL && a == from && b == to) {
			/* All in this chunk: no copy. */
			*dstp = buf + (a - ci->offset);
			return (0);
		}
		if (dst == NULL) {
			if ((dst = malloc((size_t)(to - from) + 1)) == NULL)
				return (-HWTR_E_NOMEM);
			*copyp = dst;
			*dstp = dst;
		}
		if (b > a) {
			memcpy(dst, buf + (a - ci->offset), (size_t)(b - a));
			dst += b - a;
			from = b;
		}
	}
	if (from < to) {
		snprintf(err, errlen, "offset %#" PRIx64 ": bytes missing",
		    from);
		return (-HWTR_E_FORMAT);
	}
	if (*dstp == NULL) {
		/* Nothing to read: still a buffer, as decoders want one. */
		if ((*copyp = malloc(1)) == NULL)
			return (-HWTR_E_NOMEM);
		*dstp = *copyp;
	}
	return (0);
}


/* ----------------------------------------------------------------- */
/* The view                                                           */

int
hwtr_sv_open(struct hwtr_sv **svp, struct hwtr_ar *ar,
    const struct hwtr_sv_opts *opts)
{
	struct hwtr_sv *r;
	struct sv_ra ra;
	size_t s;
	int rc;

	*svp = NULL;
	if ((r = calloc(1, sizeof(*r))) == NULL)
		return (-HWTR_E_NOMEM);
	r->ar = ar;
	r->opts = *opts;
	r->seg_max = opts->seg_max == 0 ? HWTR_SV_SEG_MAX :
	    opts->seg_max >= 32 ? opts->seg_max : 32;
	r->seg_size = opts->seg_size >= 16 ? opts->seg_size : 16;
	/* Cut at PSBs well before seg_max, where there are PSBs. */
	if (r->seg_size > r->seg_max / 2)
		r->seg_size = r->seg_max / 2;
	r->nstreams = hwtr_ar_nstreams(ar);
	pthread_mutex_init(&r->cclock, NULL);
	pthread_cond_init(&r->cc_cv, NULL);
	if ((r->res = calloc(r->nstreams + 1, sizeof(*r->res))) == NULL) {
		hwtr_sv_free(r);
		return (-HWTR_E_NOMEM);
	}
	/* opts.tail skips chunks: the scan reads them itself, as it goes. */
	rc = ra_start(&ra, r, opts->tail > 0 ? 0 : opts->readahead);
	for (s = 0; s < r->nstreams && rc == 0; s++)
		rc = plan_stream(r, &ra, s);
	ra_stop(&ra);
	if (rc == 0)
		rc = count_users(r);
	if (rc < 0) {
		hwtr_sv_free(r);
		return (rc);
	}
	*svp = r;
	return (0);
}

void
hwtr_sv_free(struct hwtr_sv *r)
{
	size_t s, k;

	if (r == NULL)
		return;
	for (s = 0; r->res != NULL && s < r->nstreams; s++) {
		for (k = 0; r->res[s].cc != NULL && k < r->res[s].ncc; k++)
			free(r->res[s].cc[k].buf);
		free(r->res[s].cc);
		free(r->res[s].pieces);
	}
	free(r->res);
	free(r->segs);
	pthread_mutex_destroy(&r->cclock);
	pthread_cond_destroy(&r->cc_cv);
	free(r);
}

size_t
hwtr_sv_nstreams(const struct hwtr_sv *r)
{
	return (r->nstreams);
}

size_t
hwtr_sv_npieces(const struct hwtr_sv *r, size_t s)
{
	return (s < r->nstreams ? r->res[s].npieces : 0);
}

const struct hwtr_sv_piece *
hwtr_sv_piece(const struct hwtr_sv *r, size_t s, size_t k)
{
	if (s >= r->nstreams || k >= r->res[s].npieces)
		return (NULL);
	return (&r->res[s].pieces[k]);
}

uint64_t
hwtr_sv_bytes(const struct hwtr_sv *r, size_t s)
{
	return (s < r->nstreams ? r->res[s].bytes : 0);
}

int
hwtr_sv_tail_from(const struct hwtr_sv *r, size_t s, uint64_t *offp)
{
	if (s >= r->nstreams || !r->res[s].tail_cut)
		return (0);
	*offp = r->res[s].tail_from;
	return (1);
}

uint64_t
hwtr_sv_gaps(const struct hwtr_sv *r, size_t s)
{
	return (s < r->nstreams ? r->res[s].gaps : 0);
}

size_t
hwtr_sv_unreadable(const struct hwtr_sv *r, size_t s, uint64_t *bytesp)
{
	*bytesp = s < r->nstreams ? r->res[s].unread : 0;
	return (s < r->nstreams ? r->res[s].nunread : 0);
}

size_t
hwtr_sv_nsegs(const struct hwtr_sv *r)
{
	return (r->nsegs);
}

const struct hwtr_sv_seg *
hwtr_sv_seg(const struct hwtr_sv *r, size_t i)
{
	return (i < r->nsegs ? &r->segs[i] : NULL);
}

void
hwtr_sv_stream_segs(const struct hwtr_sv *r, size_t s, size_t *first,
    size_t *n)
{
	*first = s < r->nstreams ? r->res[s].seg0 : r->nsegs;
	*n = s < r->nstreams ? r->res[s].nseg : 0;
}

int
hwtr_sv_seg_top(const struct hwtr_sv *r, size_t i, uint64_t *top)
{
	*top = r->segs[i].end;
	return (seg_range(r, &r->segs[i], top));
}

static int
piece_starts_by(const void *from, const void *pieces, size_t i)
{
	return (((const struct hwtr_sv_piece *)pieces)[i].off <=
	    *(const uint64_t *)from);
}

int
hwtr_sv_read(struct hwtr_sv *r, size_t s, uint64_t from, uint64_t to,
    const uint8_t **dstp, uint8_t **copyp, char *err, size_t errlen)
{
	static const struct hwtr_sv_piece none;
	const struct hwtr_sv_piece *p = &none;
	size_t lo;

	*dstp = NULL;
	*copyp = NULL;
	if (s >= r->nstreams || to < from) {
		snprintf(err, errlen, "no range [%#" PRIx64 ", %#" PRIx64
		    ") in stream %zu", from, to, s);
		return (-HWTR_E_INVAL);
	}
	/* The piece that holds @from: the last one starting at or before. */
	lo = hwtr_bsearch(&from, r->res[s].pieces, r->res[s].npieces,
	    piece_starts_by);
	if (lo > 0 && from < r->res[s].pieces[lo - 1].off +
	    r->res[s].pieces[lo - 1].len)
		p = &r->res[s].pieces[lo - 1];
	else if (from < to) {
		snprintf(err, errlen, "offset %#" PRIx64 ": bytes missing",
		    from);
		return (-HWTR_E_FORMAT);
	}
	return (read_range(r, s, p, from, to, dstp, copyp, err, errlen));
}

void
hwtr_sv_seg_done(struct hwtr_sv *r, size_t i)
{
	if (i < r->nsegs)
		seg_chunks(r, &r->segs[i], cc_release);
}
