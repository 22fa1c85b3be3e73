/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * cpusplit.c's packet scan does not depend on how a stream is cut into
 * chunks: the Skylake recording's CPU 3 stream (137,728 bytes, one chunk
 * when imported) is written again in chunks of odd sizes that cut
 * packets (a PSB too) in the middle, and must give the same parts.  With
 * a hole (bytes lost) the scan starts over at the next PSB: nothing is
 * attributed to bytes that are not there, and nothing past the end.
 * Parts from switch records are checked by hand on a small sideband.
 */

#include <atf-c.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hwtrace.h"
#include "hwtr_test.h"
#include "../../indexer/hwtr_cpusplit.h"

#define PT_FILE	"perf-data/intel_pt/perf.data.intel_pt-4.14"

/* Import the recording with hwtrace into "pt.hwtrace" and open it. */
static struct hwtr_ar *
open_import(void)
{
	struct hwtr_ar *ar = NULL;
	char cmd[2048];

	snprintf(cmd, sizeof(cmd), "'%s' import '%s/%s' -o pt.hwtrace",
	    HWTR_TEST_HWTRACE, HWTR_TEST_CORPUS, PT_FILE);
	ATF_REQUIRE_EQ_MSG(system(cmd), 0, "import failed: %s", cmd);
	ATF_REQUIRE_MSG(hwtr_ar_open(&ar, "pt.hwtrace", NULL) == 0,
	    "cannot open pt.hwtrace");
	return (ar);
}

/*
 * Write @ar again as @path with stream @s cut into chunks of the sizes
 * in @cuts (cycled), @hole bytes left out at @hole_at (0: none).
 */
static void
rewrite(struct hwtr_ar *ar, const char *path, size_t s, const size_t *cuts,
    size_t ncuts, uint64_t hole_at, uint64_t hole)
{
	struct hwtr_aw *aw = NULL;
	char err[512];
	void *buf;
	size_t len, off = 0, k = 0, n, i;
	uint32_t id;

	ATF_REQUIRE(hwtr_ar_nchunks(ar, s) == 1);
	ATF_REQUIRE(hwtr_ar_read_chunk(ar, s, 0, &buf, &len) == 0);
	ATF_REQUIRE_MSG(hwtr_aw_open(&aw, path, hwtr_ar_meta(ar), NULL, err,
	    sizeof(err)) == 0, "%s", err);
	ATF_REQUIRE(hwtr_aw_add_stream(aw, hwtr_ar_stream(ar, s), &id) == 0);
	/* The switch records (others name the old streams' ids). */
	for (i = 0; i < hwtr_ar_nsideband(ar); i++)
		if (hwtr_ar_sideband_rec(ar, i)->type == HWTR_SB_SWITCH)
			ATF_REQUIRE(hwtr_aw_sideband(aw,
			    hwtr_ar_sideband_rec(ar, i)) == 0);
	while (off < len) {
		n = cuts[k++ % ncuts];
		if (n > len - off)
			n = len - off;
		if (hole != 0 && off <= hole_at && hole_at < off + n)
			n = (size_t)(hole_at - off);
		if (hole != 0 && off == hole_at) {
			off += hole;
			hole = 0;
			continue;
		}
		ATF_REQUIRE(hwtr_aw_chunk(aw, id, off, (uint8_t *)buf + off,
		    n) == 0);
		off += n;
	}
	free(buf);
	ATF_REQUIRE_MSG(hwtr_aw_close(aw, err, sizeof(err)) == 0, "%s", err);
}

static void
build(const char *path, struct ix_cpusplit *cs)
{
	struct hwtr_ar *ar = NULL;
	char err[256];

	ATF_REQUIRE(hwtr_ar_open(&ar, path, NULL) == 0);
	ATF_REQUIRE_MSG(ix_cpusplit_build(cs, ar, NULL, err, sizeof(err)) == 0,
	    "%s", err);
	hwtr_ar_close(ar);
}

ATF_TC(chunks);
ATF_TC_HEAD(chunks, tc)
{
	atf_tc_set_md_var(tc, "descr", "CPU 3's parts are the same whether "
	    "its 137,728 bytes are one chunk or chunks of 1, 7, 16, 4093 and "
	    "777 bytes that cut packets");
}
ATF_TC_BODY(chunks, tc)
{
	static const size_t cuts[] = { 4093, 7, 1, 16, 777, 3, 15 };
	struct ix_cpusplit one, many;
	struct hwtr_ar *ar;
	size_t i, s = 1;

	HWTR_REQUIRE_CORPUS(PT_FILE);
	ar = open_import();
	ATF_REQUIRE_EQ(hwtr_ar_stream(ar, s)->cpu, 3);
	rewrite(ar, "cut.hwtrace", s, cuts, 7, 0, 0);
	hwtr_ar_close(ar);
	build("pt.hwtrace", &one);
	build("cut.hwtrace", &many);
	/* pt.hwtrace has CPU 0 first; cut.hwtrace only CPU 3. */
	for (i = 0; i < one.nparts && one.parts[i].cpu != 3; i++)
		;
	ATF_REQUIRE_EQ_MSG(one.nparts - i, many.nparts, "%zu parts of CPU "
	    "3 in one chunk, %zu in many", one.nparts - i, many.nparts);
	ATF_REQUIRE(many.nparts > 40);
	for (s = 0; s < many.nparts; s++, i++) {
		struct ix_cpart *a = &one.parts[i], *b = &many.parts[s];

		ATF_CHECK_MSG(a->tid == b->tid && a->start_tsc ==
		    b->start_tsc && a->has_bytes == b->has_bytes &&
		    a->off0 == b->off0 && a->off1 == b->off1 &&
		    a->psbs == b->psbs && a->tscs == b->tscs &&
		    a->mtcs == b->mtcs && a->cycs == b->cycs,
		    "part %zu: tid %d [%#jx, %#jx) %ju psb %ju tsc %ju mtc "
		    "in one chunk; tid %d [%#jx, %#jx) %ju psb %ju tsc %ju "
		    "mtc in many", s, a->tid, (uintmax_t)a->off0,
		    (uintmax_t)a->off1, (uintmax_t)a->psbs,
		    (uintmax_t)a->tscs, (uintmax_t)a->mtcs, b->tid,
		    (uintmax_t)b->off0, (uintmax_t)b->off1,
		    (uintmax_t)b->psbs, (uintmax_t)b->tscs,
		    (uintmax_t)b->mtcs);
	}
	ix_cpusplit_free(&one);
	ix_cpusplit_free(&many);
}

ATF_TC(hole);
ATF_TC_HEAD(hole, tc)
{
	atf_tc_set_md_var(tc, "descr", "bytes lost in the middle of CPU 3's "
	    "stream: no packet attributed in the hole or past the end, the "
	    "parts before the hole as without it, and the PSBs after it "
	    "found again");
}
ATF_TC_BODY(hole, tc)
{
	static const size_t cuts[] = { 8192 };
	struct ix_cpusplit one, cut;
	struct hwtr_ar *ar;
	uint64_t at = 20000, hole = 5000, psb1 = 0, psb2 = 0;
	size_t i, s = 1;

	HWTR_REQUIRE_CORPUS(PT_FILE);
	ar = open_import();
	rewrite(ar, "hole.hwtrace", s, cuts, 1, at, hole);
	hwtr_ar_close(ar);
	build("pt.hwtrace", &one);
	build("hole.hwtrace", &cut);
	for (i = 0; i < cut.nparts; i++) {
		struct ix_cpart *b = &cut.parts[i];

		if (!b->has_bytes)
			continue;
		psb2 += b->psbs;
		ATF_CHECK_MSG(b->off1 <= at || b->off0 >= at + hole,
		    "part %zu has bytes [%#jx, %#jx) across the hole", i,
		    (uintmax_t)b->off0, (uintmax_t)b->off1);
		ATF_CHECK(b->off1 <= 137728);
	}
	for (i = 0; i < one.nparts; i++)
		if (one.parts[i].cpu == 3)
			psb1 += one.parts[i].psbs;
	/* The PSB at 0x4258 (16984) and those after the hole remain. */
	ATF_CHECK_MSG(psb2 == psb1, "%ju PSBs with the hole, %ju without "
	    "(none of them is in the hole)", (uintmax_t)psb2,
	    (uintmax_t)psb1);
	ix_cpusplit_free(&one);
	ix_cpusplit_free(&cut);
}

static void switches_pt(const char *, const struct hwtr_sb_rec *, size_t,
    const uint8_t *, size_t);

/* An archive with one CPU stream (a PSB+) and the switch records. */
static void
switches(const char *path, const struct hwtr_sb_rec *r, size_t n)
{
	static const uint8_t psb[] = { 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82,
	    2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x23 };

	switches_pt(path, r, n, psb, sizeof(psb));
}

/* The same with the stream's bytes @pt. */
static void
switches_pt(const char *path, const struct hwtr_sb_rec *r, size_t n,
    const uint8_t *pt, size_t ptlen)
{
	struct hwtr_capture_meta meta;
	struct hwtr_stream_desc sd;
	struct hwtr_aw *aw = NULL;
	char err[256];
	uint32_t id;
	size_t i;

	memset(&meta, 0, sizeof(meta));
	meta.host = "test";
	meta.source = "test";
	ATF_REQUIRE(hwtr_aw_open(&aw, path, &meta, NULL, err,
	    sizeof(err)) == 0);
	memset(&sd, 0, sizeof(sd));
	sd.format = HWTR_TF_INTEL_PT;
	sd.pid = sd.tid = -1;
	sd.cpu = 2;
	ATF_REQUIRE(hwtr_aw_add_stream(aw, &sd, &id) == 0);
	ATF_REQUIRE(hwtr_aw_chunk(aw, id, HWTR_AW_APPEND, pt, ptlen) == 0);
	for (i = 0; i < n; i++)
		ATF_REQUIRE(hwtr_aw_sideband(aw, &r[i]) == 0);
	ATF_REQUIRE(hwtr_aw_close(aw, err, sizeof(err)) == 0);
}

static struct hwtr_sb_rec
sw(uint64_t t, int32_t tid, int cpu, int out)
{
	struct hwtr_sb_rec r;

	memset(&r, 0, sizeof(r));
	r.type = HWTR_SB_SWITCH;
	r.time = t;
	r.pid = r.tid = tid;
	r.u.sw.cpu = cpu;
	r.u.sw.out = (uint8_t)out;
	return (r);
}

ATF_TC_WITHOUT_HEAD(parts);
ATF_TC_BODY(parts, tc)
{
	struct hwtr_sb_rec r[8];
	struct ix_cpusplit cs;
	size_t n = 0;

	/*
	 * CPU 2: 10 runs until 100 (out), 20 in at 105 (owns from 100),
	 * 20 out at 200 and 30 in at 300 (owns from 200), 40 in at 400
	 * with no switch out before (a lost record: a part from 400), 40
	 * out at 500 with nothing after (no owner from 500); another
	 * CPU's record in between is not CPU 2's; the file's order is not
	 * time order.
	 */
	r[n++] = sw(105, 20, 2, 0);
	r[n++] = sw(100, 10, 2, 1);
	r[n++] = sw(150, 99, 1, 1);
	r[n++] = sw(200, 20, 2, 1);
	r[n++] = sw(300, 30, 2, 0);
	r[n++] = sw(400, 40, 2, 0);
	r[n++] = sw(500, 40, 2, 1);
	switches("sw.hwtrace", r, n);
	build("sw.hwtrace", &cs);
	ATF_REQUIRE_EQ(cs.nparts, 5);
	ATF_CHECK(cs.parts[0].tid == 10 && !cs.parts[0].has_start &&
	    cs.parts[0].has_end && cs.parts[0].end_tsc == 100);
	ATF_CHECK(cs.parts[1].tid == 20 && cs.parts[1].start_tsc == 100 &&
	    cs.parts[1].end_tsc == 200);
	ATF_CHECK(cs.parts[2].tid == 30 && cs.parts[2].start_tsc == 200 &&
	    cs.parts[2].end_tsc == 400);
	ATF_CHECK(cs.parts[3].tid == 40 && cs.parts[3].start_tsc == 400 &&
	    cs.parts[3].end_tsc == 500);
	ATF_CHECK(cs.parts[4].tid == -1 && cs.parts[4].start_tsc == 500 &&
	    !cs.parts[4].has_end);
	ATF_CHECK(cs.parts[0].cpu == 2 && cs.parts[4].cpu == 2);
	ix_cpusplit_free(&cs);
}

/* A PSB+ with TSC @tsc's low 7 bytes, as Intel PT writes it. */
static size_t
psb_tsc(uint8_t *p, uint64_t tsc)
{
	size_t n = 0, i;

	for (i = 0; i < 8; i++) {
		p[n++] = 2;
		p[n++] = 0x82;
	}
	p[n++] = 0x19;
	for (i = 0; i < 7; i++)
		p[n++] = (uint8_t)(tsc >> (8 * i));
	p[n++] = 2;
	p[n++] = 0x23;
	return (n);
}

ATF_TC(tsc_56);
ATF_TC_HEAD(tsc_56, tc)
{
	atf_tc_set_md_var(tc, "descr", "a TSC past 2^56: the packets' 7-byte "
	    "TSCs are placed by the switch records' full times, also across "
	    "a wrap of the low 7 bytes");
}
ATF_TC_BODY(tsc_56, tc)
{
	const uint64_t hi = 0x0500000000000000ULL;
	const uint64_t m = 0x00ffffffffffff00ULL;	/* near a wrap */
	struct hwtr_sb_rec r[4];
	struct ix_cpusplit cs;
	uint8_t pt[3 * 26];
	size_t n = 0;

	/* 10 until hi|m + 0x10, then 20; the wrap comes during 20's part. */
	r[0] = sw(hi | m, 10, 2, 0);
	r[1] = sw((hi | m) + 0x10, 10, 2, 1);
	r[2] = sw((hi | m) + 0x20, 20, 2, 0);
	n += psb_tsc(pt + n, m + 0x8);		/* 10 */
	n += psb_tsc(pt + n, m + 0x18);		/* 20 */
	n += psb_tsc(pt + n, 0x40);		/* 20, after the wrap */
	switches_pt("w.hwtrace", r, 3, pt, n);
	build("w.hwtrace", &cs);
	ATF_REQUIRE_EQ(cs.nparts, 2);
	ATF_CHECK_MSG(cs.parts[0].tid == 10 && cs.parts[0].psbs == 1 &&
	    cs.parts[0].tscs == 1, "tid %d: %ju PSBs, %ju TSCs",
	    cs.parts[0].tid, (uintmax_t)cs.parts[0].psbs,
	    (uintmax_t)cs.parts[0].tscs);
	ATF_CHECK_MSG(cs.parts[1].tid == 20 && cs.parts[1].psbs == 2 &&
	    cs.parts[1].tscs == 2, "tid %d: %ju PSBs, %ju TSCs",
	    cs.parts[1].tid, (uintmax_t)cs.parts[1].psbs,
	    (uintmax_t)cs.parts[1].tscs);
	ix_cpusplit_free(&cs);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, tsc_56);
	ATF_TP_ADD_TC(tp, chunks);
	ATF_TP_ADD_TC(tp, hole);
	ATF_TP_ADD_TC(tp, parts);
	return (atf_no_error());
}
