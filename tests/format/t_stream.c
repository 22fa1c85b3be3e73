/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The stream view (format/hwtr_stream.h) over archives written here, with
 * chunk boundaries, lost bytes and PSB positions known by construction:
 * ranges read across chunks give the bytes written, and the segments are
 * cut where hwtr_stream.h says.
 */

#include <atf-c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwtrace.h"
#include "hwtr_test.h"
#include "../../format/hwtr_stream.h"

#define CH	4096u		/* bytes per chunk */
#define NCH	6u		/* chunks of the first piece */
#define GAP	1000u		/* bytes lost before the second piece */
#define NCH2	2u		/* chunks of the second piece */
#define P2	(NCH * CH + GAP)	/* the second piece's offset */

static const uint8_t psb[16] = {
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82
};

/*
 * Where the PSBs are: 4090 and 20470 straddle a chunk boundary, 4200 is
 * closer than HWTR_SV_PSB_GAP to the one before it.
 */
static const uint64_t psbs[] = {
	0, 2000, 4090, 4200, 8500, 9000, 13000, 20470,
	P2 + 100, P2 + 5000
};

/* The byte at stream offset @off, between PSBs: never 0x02 or 0x82. */
static uint8_t
byte_at(uint64_t off)
{
	return ((uint8_t)(0x10 + (off * 7 + (off >> 9)) % 0x60));
}

/* The stream as written, lost bytes included: [0, END). */
#define END	(P2 + NCH2 * CH)

static uint8_t *
stream_bytes(void)
{
	uint8_t *b = malloc(END);
	uint64_t i;
	size_t k;

	ATF_REQUIRE(b != NULL);
	for (i = 0; i < END; i++)
		b[i] = byte_at(i);
	for (k = 0; k < sizeof(psbs) / sizeof(psbs[0]); k++)
		memcpy(b + psbs[k], psb, sizeof(psb));
	return (b);
}

/*
 * Stream 0 (Intel PT): NCH chunks from 0, GAP bytes lost, NCH2 chunks.
 * Stream 1 (CoreSight): the same bytes, so that the PSBs it holds are
 * seen not to cut it.
 */
static void
write_archive(const char *path)
{
	struct hwtr_capture_meta m;
	struct hwtr_stream_desc d[2];
	struct hwtr_cs_source src;
	struct hwtr_aw *aw;
	uint8_t *b1, *b2;
	char err[256];
	uint32_t id;
	size_t s, c;

	memset(&m, 0, sizeof(m));
	memset(d, 0, sizeof(d));
	d[0].format = HWTR_TF_INTEL_PT;
	d[0].pid = d[0].tid = d[0].cpu = -1;
	memset(&src, 0, sizeof(src));
	src.protocol = HWTR_TF_ETMV4;
	src.trace_id = 0x10;
	d[1].format = HWTR_TF_CORESIGHT;
	d[1].pid = d[1].tid = -1;
	d[1].cpu = 0;
	d[1].name = "etb 0";
	d[1].cs.frame = HWTR_CS_FRAME_NONE;
	d[1].cs.sources = &src;
	d[1].cs.nsources = 1;
	b1 = stream_bytes();
	b2 = b1 + P2;
	ATF_REQUIRE_EQ_MSG(hwtr_aw_open(&aw, path, &m, NULL, err,
	    sizeof(err)), 0, "%s", err);
	for (s = 0; s < 2; s++) {
		ATF_REQUIRE_EQ_MSG(hwtr_aw_add_stream(aw, &d[s], &id), 0, "%s",
		    hwtr_aw_errmsg(aw));
		for (c = 0; c < NCH; c++)
			ATF_REQUIRE_EQ(hwtr_aw_chunk(aw, id, HWTR_AW_APPEND,
			    b1 + c * CH, CH), 0);
		for (c = 0; c < NCH2; c++)
			ATF_REQUIRE_EQ(hwtr_aw_chunk(aw, id, P2 + c * CH,
			    b2 + c * CH, CH), 0);
	}
	ATF_REQUIRE_EQ_MSG(hwtr_aw_close(aw, err, sizeof(err)), 0, "%s", err);
	free(b1);
}

static void
open_view_max(struct hwtr_ar **arp, struct hwtr_sv **svp, uint64_t seg_size,
    size_t readahead, uint64_t tail, uint64_t seg_max)
{
	struct hwtr_sv_opts o;

	write_archive("s.hwtrace");
	ATF_REQUIRE_EQ_MSG(hwtr_ar_open(arp, "s.hwtrace", NULL), 0, "%s",
	    hwtr_ar_errmsg(*arp));
	ATF_REQUIRE_EQ(hwtr_ar_nstreams(*arp), 2);
	ATF_REQUIRE_EQ(hwtr_ar_nchunks(*arp, 0), NCH + NCH2);
	memset(&o, 0, sizeof(o));
	o.seg_size = seg_size;
	o.readahead = readahead;
	o.tail = tail;
	o.seg_max = seg_max;
	ATF_REQUIRE_EQ(hwtr_sv_open(svp, *arp, &o), 0);
}

static void
open_view_tail(struct hwtr_ar **arp, struct hwtr_sv **svp, uint64_t seg_size,
    size_t readahead, uint64_t tail)
{
	open_view_max(arp, svp, seg_size, readahead, tail, 0);
}

static void
open_view(struct hwtr_ar **arp, struct hwtr_sv **svp, uint64_t seg_size,
    size_t readahead)
{
	open_view_tail(arp, svp, seg_size, readahead, 0);
}

/* Read [from, to) of stream @s and compare it with what was written. */
static void
check_range(struct hwtr_sv *sv, size_t s, uint64_t from, uint64_t to)
{
	const uint8_t *p;
	uint8_t *copy, *want;
	uint64_t base = from >= P2 ? P2 : 0;
	char err[256];
	int rc;

	rc = hwtr_sv_read(sv, s, from, to, &p, &copy, err, sizeof(err));
	ATF_REQUIRE_EQ_MSG(rc, 0, "[%#jx, %#jx): %s", (uintmax_t)from,
	    (uintmax_t)to, err);
	ATF_REQUIRE(p != NULL);
	/* A copy exactly when the range is in more than one chunk. */
	if (to > from && (from - base) / CH == (to - 1 - base) / CH)
		ATF_CHECK_MSG(copy == NULL, "[%#jx, %#jx) copied",
		    (uintmax_t)from, (uintmax_t)to);
	if (to > from && (from - base) / CH != (to - 1 - base) / CH)
		ATF_CHECK_MSG(copy != NULL, "[%#jx, %#jx) not copied",
		    (uintmax_t)from, (uintmax_t)to);
	want = stream_bytes();
	ATF_CHECK_MSG(memcmp(p, want + from, (size_t)(to - from)) == 0,
	    "[%#jx, %#jx): other bytes", (uintmax_t)from, (uintmax_t)to);
	free(want);
	free(copy);
}

/*
 * Segment @i of a view, @g, is @w: piece, range, limit, first of its
 * stream, and the loss before it.
 */
static void
check_seg(const struct hwtr_sv_seg *g, const struct hwtr_sv_seg *w, size_t i)
{
	ATF_CHECK_EQ_MSG(g->piece, w->piece, "segment %zu", i);
	ATF_CHECK_EQ_MSG(g->start, w->start, "segment %zu: start %ju", i,
	    (uintmax_t)g->start);
	ATF_CHECK_EQ_MSG(g->end, w->end, "segment %zu: end %ju", i,
	    (uintmax_t)g->end);
	ATF_CHECK_EQ_MSG(g->has_limit, w->has_limit, "segment %zu", i);
	ATF_CHECK_EQ_MSG(g->first_of_stream, w->first_of_stream,
	    "segment %zu", i);
	ATF_CHECK_EQ_MSG(g->lost_before, w->lost_before, "segment %zu", i);
	ATF_CHECK_EQ_MSG(g->lost_bytes, w->lost_bytes, "segment %zu", i);
}

ATF_TC_WITHOUT_HEAD(range_reads_across_chunks);
ATF_TC_BODY(range_reads_across_chunks, tc)
{
	/* Offsets around every chunk boundary of the first piece. */
	uint64_t pt[3 * (NCH + 1)];
	struct hwtr_ar *ar;
	struct hwtr_sv *sv;
	const struct hwtr_sv_piece *pc;
	const uint8_t *p;
	uint8_t *copy;
	char err[256];
	size_t n = 0, i, j, s;

	open_view(&ar, &sv, 1u << 20, 0);
	for (s = 0; s < 2; s++) {
		ATF_REQUIRE_EQ(hwtr_sv_npieces(sv, s), 2);
		pc = hwtr_sv_piece(sv, s, 0);
		ATF_CHECK_EQ(pc->off, 0);
		ATF_CHECK_EQ(pc->len, NCH * CH);
		ATF_CHECK_EQ(pc->c0, 0);
		ATF_CHECK_EQ(pc->c1, NCH);
		pc = hwtr_sv_piece(sv, s, 1);
		ATF_CHECK_EQ(pc->off, P2);
		ATF_CHECK_EQ(pc->len, NCH2 * CH);
		ATF_CHECK_EQ(pc->c0, NCH);
		ATF_CHECK_EQ(pc->c1, NCH + NCH2);
		ATF_CHECK_EQ(hwtr_sv_bytes(sv, s), (NCH + NCH2) * CH);
		ATF_CHECK_EQ(hwtr_sv_gaps(sv, s), GAP);
	}
	for (i = 0; i <= NCH; i++) {
		pt[n++] = i * CH;
		if (i > 0)
			pt[n++] = i * CH - 1;
		if (i < NCH)
			pt[n++] = i * CH + 1;
	}
	for (s = 0; s < 2; s++)
		for (i = 0; i < n; i++)
			for (j = 0; j < n; j++)
				if (pt[i] <= pt[j])
					check_range(sv, s, pt[i], pt[j]);
	/* The second piece, and the whole of it. */
	check_range(sv, 0, P2 + 10, P2 + CH + 10);
	check_range(sv, 0, P2, P2 + NCH2 * CH);
	/* Lost bytes are missing, whichever end of the range they are. */
	ATF_CHECK_EQ(hwtr_sv_read(sv, 0, NCH * CH - 10, P2 + 10, &p, &copy,
	    err, sizeof(err)), -HWTR_E_FORMAT);
	ATF_CHECK_MSG(strstr(err, "bytes missing") != NULL, "%s", err);
	free(copy);
	ATF_CHECK_EQ(hwtr_sv_read(sv, 0, NCH * CH + 10, P2 + 10, &p, &copy,
	    err, sizeof(err)), -HWTR_E_FORMAT);
	free(copy);
	ATF_CHECK_EQ(hwtr_sv_read(sv, 0, P2 + 10, P2 + NCH2 * CH + 1, &p,
	    &copy, err, sizeof(err)), -HWTR_E_FORMAT);
	free(copy);
	ATF_CHECK_EQ(hwtr_sv_read(sv, 2, 0, 1, &p, &copy, err, sizeof(err)),
	    -HWTR_E_INVAL);
	hwtr_sv_free(sv);
	hwtr_ar_close(ar);
}

/* What hwtr_stream.h says the segments of stream 0 are for 4 KiB. */
static const struct hwtr_sv_seg want_segs[] = {
	/* stream, piece, start, end, limit, first, lost, lost bytes, blind */
	{ 0, 0, 0, 8500, 1, 1, 0, 0, 0, 0 },		/* 4200: too close to 4090 */
	{ 0, 0, 8500, 13000, 1, 0, 0, 0, 0, 0 },	/* 9000: too soon */
	{ 0, 0, 13000, 20470, 1, 0, 0, 0, 0, 0 },	/* across a boundary */
	{ 0, 0, 20470, NCH * CH, 0, 0, 0, 0, 0, 0 },	/* the piece's end */
	{ 0, 1, P2, P2 + 5000, 1, 0, 1, GAP, 0, 0 },	/* P2 + 100: too soon */
	{ 0, 1, P2 + 5000, P2 + NCH2 * CH, 0, 0, 0, 0, 0, 0 },
	/* CoreSight: one segment over every piece, no end. */
	{ 1, 0, 0, 0, 0, 0, 0, 0, 0, 0 },
};

static void
check_segments(size_t readahead)
{
	const size_t nw = sizeof(want_segs) / sizeof(want_segs[0]);
	struct hwtr_ar *ar;
	struct hwtr_sv *sv;
	uint64_t top;
	size_t i, first, n;

	open_view(&ar, &sv, 4096, readahead);
	ATF_REQUIRE_EQ(hwtr_sv_nsegs(sv), nw);
	for (i = 0; i < nw; i++) {
		const struct hwtr_sv_seg *g = hwtr_sv_seg(sv, i);
		const struct hwtr_sv_seg *w = &want_segs[i];

		ATF_CHECK_EQ_MSG(g->stream, w->stream, "segment %zu", i);
		check_seg(g, w, i);
	}
	hwtr_sv_stream_segs(sv, 0, &first, &n);
	ATF_CHECK_EQ(first, 0);
	ATF_CHECK_EQ(n, nw - 1);
	hwtr_sv_stream_segs(sv, 1, &first, &n);
	ATF_CHECK_EQ(first, nw - 1);
	ATF_CHECK_EQ(n, 1);
	/* A limited segment reads into the next one, up to its piece. */
	ATF_CHECK_EQ(hwtr_sv_seg_top(sv, 0, &top), 0);
	ATF_CHECK_EQ(top, NCH * CH);
	ATF_CHECK_EQ(hwtr_sv_seg_top(sv, 3, &top), 0);
	ATF_CHECK_EQ(top, NCH * CH);
	ATF_CHECK_EQ(hwtr_sv_seg_top(sv, nw - 1, &top), -1);
	/* Every segment's bytes, released as a decoder would. */
	for (i = 0; i + 1 < nw; i++) {
		ATF_REQUIRE_EQ(hwtr_sv_seg_top(sv, i, &top), 0);
		check_range(sv, 0, hwtr_sv_seg(sv, i)->start, top);
		hwtr_sv_seg_done(sv, i);
	}
	hwtr_sv_free(sv);
	hwtr_ar_close(ar);
}

ATF_TC_WITHOUT_HEAD(psb_segments);
ATF_TC_BODY(psb_segments, tc)
{
	check_segments(0);
}

/* Helper threads decompressing ahead change nothing. */
ATF_TC_WITHOUT_HEAD(psb_segments_readahead);
ATF_TC_BODY(psb_segments_readahead, tc)
{
	check_segments(3);
}

/*
 * opts.tail: stream 0 planned from the PSB its last @tail bytes start
 * with, or the last PSB before them, as one segment (1 MiB segments) from
 * @start to the end, in the view's piece @piece (the pieces before the
 * window are not read); the CoreSight stream stays whole.
 */
static void
check_tail(uint64_t tail, size_t readahead, uint64_t start, size_t piece)
{
	struct hwtr_ar *ar;
	struct hwtr_sv *sv;
	uint64_t from = 0, top;
	size_t first, n;

	open_view_tail(&ar, &sv, 1 << 20, readahead, tail);
	hwtr_sv_stream_segs(sv, 0, &first, &n);
	ATF_CHECK_EQ_MSG(n, 1, "tail %ju: %zu segments", (uintmax_t)tail, n);
	ATF_CHECK_EQ_MSG(hwtr_sv_seg(sv, first)->start, start,
	    "tail %ju: from %ju, expected %ju", (uintmax_t)tail,
	    (uintmax_t)hwtr_sv_seg(sv, first)->start, (uintmax_t)start);
	ATF_CHECK_EQ(hwtr_sv_seg(sv, first)->piece, piece);
	ATF_CHECK_EQ(hwtr_sv_seg(sv, first)->end, END);
	ATF_CHECK_EQ(hwtr_sv_tail_from(sv, 0, &from), 1);
	ATF_CHECK_EQ(from, start);
	ATF_CHECK_EQ(hwtr_sv_tail_from(sv, 1, &from), 0);
	hwtr_sv_stream_segs(sv, 1, &first, &n);
	ATF_CHECK_EQ(n, 1);
	ATF_CHECK_EQ(hwtr_sv_seg(sv, first)->start, 0);
	/* Its bytes read back as written. */
	hwtr_sv_stream_segs(sv, 0, &first, &n);
	ATF_REQUIRE_EQ(hwtr_sv_seg_top(sv, first, &top), 0);
	check_range(sv, 0, start, top);
	hwtr_sv_free(sv);
	hwtr_ar_close(ar);
}

ATF_TC_WITHOUT_HEAD(tail_from_a_psb);
ATF_TC_BODY(tail_from_a_psb, tc)
{
	/* The first PSB in the last 4000 bytes. */
	check_tail(4000, 0, P2 + 5000, 0);
	/* None in the last 1000: the one before them. */
	check_tail(1000, 0, P2 + 5000, 0);
	/*
	 * From the first piece's last chunk, which holds no PSB: the second
	 * piece's first, and no segment before it.
	 */
	check_tail(END - 21000, 0, P2 + 100, 1);
	check_tail(END - 21000, 3, P2 + 100, 1);
}

ATF_TC_WITHOUT_HEAD(tail_whole_when_short);
ATF_TC_BODY(tail_whole_when_short, tc)
{
	struct hwtr_ar *ar;
	struct hwtr_sv *sv;
	uint64_t from;

	open_view_tail(&ar, &sv, 4096, 0, END);
	ATF_CHECK_EQ(hwtr_sv_nsegs(sv), sizeof(want_segs) /
	    sizeof(want_segs[0]));
	ATF_CHECK_EQ(hwtr_sv_tail_from(sv, 0, &from), 0);
	hwtr_sv_free(sv);
	hwtr_ar_close(ar);
}

/*
 * Segments of at most 4096 bytes (seg_max; seg_size is then 2048): cut at
 * the first PSB 2048 bytes or more after their start, as in want_segs,
 * and those still longer than 4096 cut every 4096 bytes without a PSB.
 */
static const struct hwtr_sv_seg want_blind[] = {
	/* stream, piece, start, end, limit, first, lost, lost bytes, blind */
	{ 0, 0, 0, 4090, 1, 1, 0, 0, 0, 0 },		/* 2000: too soon */
	{ 0, 0, 4090, 8186, 1, 0, 0, 0, 0, 1 },		/* 4410 bytes */
	{ 0, 0, 8186, 8500, 1, 0, 0, 0, 1, 0 },
	{ 0, 0, 8500, 12596, 1, 0, 0, 0, 0, 1 },	/* 4500 bytes */
	{ 0, 0, 12596, 13000, 1, 0, 0, 0, 1, 0 },
	{ 0, 0, 13000, 17096, 1, 0, 0, 0, 0, 1 },	/* 7470 bytes */
	{ 0, 0, 17096, 20470, 1, 0, 0, 0, 1, 0 },
	{ 0, 0, 20470, 24566, 1, 0, 0, 0, 0, 1 },	/* 4106 bytes */
	{ 0, 0, 24566, NCH * CH, 0, 0, 0, 0, 1, 0 },
	{ 0, 1, P2, P2 + 4096, 1, 0, 1, GAP, 0, 1 },	/* 5000 bytes */
	{ 0, 1, P2 + 4096, P2 + 5000, 1, 0, 0, 0, 1, 0 },
	{ 0, 1, P2 + 5000, P2 + NCH2 * CH, 0, 0, 0, 0, 0, 0 },
	/* CoreSight: check_cs_cut() */
};

/*
 * The CoreSight stream (stream 1), longer than seg_max: each piece in
 * segments of @cut bytes from its start (the last one shorter), cut
 * without a sync point, each reading exactly its bytes; every chunk is
 * released after them.
 */
static void
check_cs_cut(struct hwtr_sv *sv, uint64_t cut)
{
	static const uint64_t poff[2] = { 0, P2 }, plen[2] = { NCH * CH,
	    NCH2 * CH };
	uint64_t at, end, top;
	size_t first, n, i, k;

	hwtr_sv_stream_segs(sv, 1, &first, &n);
	i = 0;
	for (k = 0; k < 2; k++) {
		for (at = poff[k]; at < poff[k] + plen[k]; at += cut, i++) {
			const struct hwtr_sv_seg *g;

			ATF_REQUIRE_MSG(i < n, "CoreSight, cut %ju: %zu "
			    "segments, expected more", (uintmax_t)cut, n);
			g = hwtr_sv_seg(sv, first + i);
			end = at + cut < poff[k] + plen[k] ? at + cut :
			    poff[k] + plen[k];
			ATF_CHECK_EQ_MSG(g->piece, k, "CoreSight segment %zu",
			    i);
			ATF_CHECK_EQ_MSG(g->start, at, "CoreSight segment %zu: "
			    "start %ju, expected %ju", i, (uintmax_t)g->start,
			    (uintmax_t)at);
			ATF_CHECK_EQ_MSG(g->end, end, "CoreSight segment %zu: "
			    "end %ju, expected %ju", i, (uintmax_t)g->end,
			    (uintmax_t)end);
			ATF_CHECK_EQ_MSG(g->has_limit, 1, "segment %zu", i);
			ATF_CHECK_EQ_MSG(g->first_of_stream, i == 0,
			    "CoreSight segment %zu", i);
			ATF_CHECK_EQ_MSG(g->blind_start, at != poff[k],
			    "CoreSight segment %zu", i);
			ATF_CHECK_EQ_MSG(g->blind_end, end != poff[k] +
			    plen[k], "CoreSight segment %zu", i);
			ATF_CHECK_EQ_MSG(g->lost_before, k == 1 && at == P2,
			    "CoreSight segment %zu", i);
			ATF_CHECK_EQ_MSG(g->lost_bytes, k == 1 && at == P2 ?
			    GAP : 0, "CoreSight segment %zu", i);
			/* Its own bytes, no margin. */
			ATF_REQUIRE_EQ(hwtr_sv_seg_top(sv, first + i, &top),
			    0);
			ATF_CHECK_EQ(top, end);
			check_range(sv, 1, at, end);
			hwtr_sv_seg_done(sv, first + i);
		}
	}
	ATF_CHECK_EQ_MSG(n, i, "CoreSight, cut %ju: %zu segments, expected "
	    "%zu", (uintmax_t)cut, n, i);
}

ATF_TC_WITHOUT_HEAD(long_segments_cut_blind);
ATF_TC_BODY(long_segments_cut_blind, tc)
{
	const size_t nw = sizeof(want_blind) / sizeof(want_blind[0]);
	struct hwtr_ar *ar;
	struct hwtr_sv *sv;
	uint64_t top;
	size_t i, first, n;

	open_view_max(&ar, &sv, 4096, 2, 0, 4096);
	hwtr_sv_stream_segs(sv, 0, &first, &n);
	ATF_REQUIRE_EQ_MSG(n, nw, "%zu segments, expected %zu", n, nw);
	for (i = 0; i < nw; i++) {
		const struct hwtr_sv_seg *g = hwtr_sv_seg(sv, i);
		const struct hwtr_sv_seg *w = &want_blind[i];

		check_seg(g, w, i);
		ATF_CHECK_EQ_MSG(g->blind_start, w->blind_start, "segment %zu: "
		    "blind_start %d", i, g->blind_start);
		ATF_CHECK_EQ_MSG(g->blind_end, w->blind_end, "segment %zu: "
		    "blind_end %d", i, g->blind_end);
		if (g->stream == 0) {
			/* At most seg_max, and its margin within its piece. */
			ATF_CHECK(g->end - g->start <= 4096);
			ATF_REQUIRE_EQ(hwtr_sv_seg_top(sv, i, &top), 0);
			check_range(sv, 0, g->start, top);
			hwtr_sv_seg_done(sv, i);
		}
	}
	hwtr_sv_stream_segs(sv, 1, &first, &n);
	ATF_CHECK_EQ(first, nw);
	check_cs_cut(sv, 4096);
	hwtr_sv_free(sv);
	hwtr_ar_close(ar);

	/* 3000: CoreSight is cut at the multiple of 512 below, 2560. */
	open_view_max(&ar, &sv, 4096, 0, 0, 3000);
	check_cs_cut(sv, 2560);
	hwtr_sv_free(sv);
	hwtr_ar_close(ar);

	/* opts.tail: the one segment from the last PSB, cut too. */
	open_view_max(&ar, &sv, 1 << 20, 0, 1000, 1024);
	hwtr_sv_stream_segs(sv, 0, &first, &n);
	ATF_REQUIRE_EQ_MSG(n, 4, "tail 1000, at most 1024: %zu segments", n);
	for (i = 0; i < n; i++) {
		const struct hwtr_sv_seg *g = hwtr_sv_seg(sv, first + i);

		ATF_CHECK_EQ(g->start, P2 + 5000 + 1024 * i);
		ATF_CHECK_EQ(g->end, i + 1 < n ? P2 + 5000 + 1024 * (i + 1) :
		    END);
		ATF_CHECK_EQ(g->blind_start, i > 0);
		ATF_CHECK_EQ(g->blind_end, i + 1 < n);
	}
	hwtr_sv_free(sv);
	hwtr_ar_close(ar);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, long_segments_cut_blind);
	ATF_TP_ADD_TC(tp, tail_from_a_psb);
	ATF_TP_ADD_TC(tp, tail_whole_when_short);
	ATF_TP_ADD_TC(tp, range_reads_across_chunks);
	ATF_TP_ADD_TC(tp, psb_segments);
	ATF_TP_ADD_TC(tp, psb_segments_readahead);
	return (atf_no_error());
}
