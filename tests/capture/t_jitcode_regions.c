/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The session's code-region versions (hwtr_jitc_code, issue 32): what a
 * sequence of reports leaves in jit/code-PID.bin, read back from a real
 * archive with the format's parser.  The expected regions follow from
 * the reports by construction, and so does each report's result (1: a
 * new version, 0: known).
 */

#include <atf-c.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwtrace.h"
#include "hwtr_common.h"
#include "hwtr_jit.h"
#include "hwtr_jitc.h"

static const uint8_t A[] = { 0x89, 0xf8, 0x83, 0xc0, 0x07, 0xc3 };
static const uint8_t B[] = { 0x6b, 0xc7, 0x05, 0x90, 0x90, 0x90, 0xc3 };

struct got {
	struct hwtr_code_list l;
	void		*buf;
	int		present;
};

/* Store @jc into a new archive @path and parse jit/code-@pid.bin back. */
static void
store_and_read(struct hwtr_jitc *jc, const char *path, int pid,
    struct got *g)
{
	struct hwtr_capture_meta meta;
	struct hwtr_aw *aw;
	struct hwtr_ar *ar;
	struct hwtr_log log;
	char err[256], name[64];
	size_t i, len;

	memset(&meta, 0, sizeof(meta));
	meta.source = "step";
	meta.sideband_origin = "perf_event";
	memset(&log, 0, sizeof(log));
	ATF_REQUIRE_MSG(hwtr_aw_open(&aw, path, &meta, NULL, err,
	    sizeof(err)) == 0, "hwtr_aw_open: %s", err);
	ATF_REQUIRE(hwtr_jitc_store(jc, aw, &log) == 0);
	ATF_REQUIRE_MSG(hwtr_aw_close(aw, err, sizeof(err)) == 0, "%s", err);
	ATF_REQUIRE_MSG(hwtr_ar_open(&ar, path, NULL) == 0, "open %s: %s",
	    path, ar != NULL ? hwtr_ar_errmsg(ar) : "no memory");
	memset(g, 0, sizeof(*g));
	snprintf(name, sizeof(name), "jit/code-%d.bin", pid);
	if (hwtr_ar_find_member(ar, name, &i) == 0) {
		g->present = 1;
		ATF_REQUIRE(hwtr_ar_read_member(ar, i, &g->buf, &len) == 0);
		ATF_REQUIRE_MSG(hwtr_code_parse(&g->l, name, g->buf, len, err,
		    sizeof(err)) == 0, "expected %s to parse: %s", name, err);
	}
	hwtr_ar_close(ar);
}

static void
got_free(struct got *g)
{
	hwtr_code_list_free(&g->l);
	free(g->buf);
}

static void
check(const struct got *g, size_t i, uint64_t addr, uint64_t from,
    uint64_t until, const uint8_t *bytes, uint32_t len)
{
	const struct hwtr_code_region *r;

	ATF_REQUIRE_MSG(i < g->l.n, "expected region %zu, got %zu regions",
	    i, g->l.n);
	r = &g->l.v[i];
	ATF_CHECK_MSG(r->addr == addr && r->from == from &&
	    r->until == until && r->len == len,
	    "region %zu: expected addr %#" PRIx64 " from %" PRIu64 " until %"
	    PRIu64 " len %u, got %#" PRIx64 " %" PRIu64 " %" PRIu64 " %u", i,
	    addr, from, until, len, r->addr, r->from, r->until, r->len);
	ATF_CHECK_MSG(r->len == len && memcmp(r->bytes, bytes, len) == 0,
	    "region %zu: bytes differ from those reported", i);
}

ATF_TC_WITHOUT_HEAD(versions);
ATF_TC_BODY(versions, tc)
{
	struct hwtr_jitc *jc;
	struct hwtr_log log;
	struct got g;

	memset(&log, 0, sizeof(log));
	ATF_REQUIRE(hwtr_jitc_new(&jc) == 0);
	/* v1, then the same again and a part of it: one region. */
	ATF_REQUIRE_EQ(hwtr_jitc_code(jc, &log, 7, 0x1000, A, sizeof(A), 10), 1);
	ATF_REQUIRE_EQ(hwtr_jitc_code(jc, &log, 7, 0x1000, A, sizeof(A), 11), 0);
	ATF_REQUIRE_EQ(hwtr_jitc_code(jc, &log, 7, 0x1002, A + 2, 3, 12), 0);
	/* Code elsewhere, beside it: a region of its own, v1 stays. */
	ATF_REQUIRE_EQ(hwtr_jitc_code(jc, &log, 7, 0x1006, B, sizeof(B), 13), 1);
	/* The rewrite: v1 ends at 20, where v2 starts. */
	ATF_REQUIRE_EQ(hwtr_jitc_code(jc, &log, 7, 0x1000, B, sizeof(B), 20), 1);
	/* Another process's code at the same address is its own. */
	ATF_REQUIRE_EQ(hwtr_jitc_code(jc, &log, 8, 0x1000, A, sizeof(A), 21), 1);
	store_and_read(jc, "v.hwtrace", 7, &g);
	ATF_REQUIRE_MSG(g.present, "expected jit/code-7.bin");
	ATF_CHECK_EQ_MSG(g.l.n, 3, "expected 3 regions, got %zu", g.l.n);
	check(&g, 0, 0x1000, 10, 20, A, sizeof(A));
	/* 0x1006.. overlaps v2 [0x1000, 0x1007) where the bytes differ. */
	check(&g, 1, 0x1006, 13, 20, B, sizeof(B));
	check(&g, 2, 0x1000, 20, UINT64_MAX, B, sizeof(B));
	got_free(&g);
	store_and_read(jc, "w.hwtrace", 8, &g);
	ATF_REQUIRE_MSG(g.present, "expected jit/code-8.bin");
	ATF_CHECK_EQ(g.l.n, 1);
	check(&g, 0, 0x1000, 21, UINT64_MAX, A, sizeof(A));
	got_free(&g);
	hwtr_jitc_free(jc);
}

ATF_TC_WITHOUT_HEAD(consistent_overlap);
ATF_TC_BODY(consistent_overlap, tc)
{
	struct hwtr_jitc *jc;
	struct hwtr_log log;
	uint8_t page[32];
	struct got g;
	size_t i;

	for (i = 0; i < sizeof(page); i++)
		page[i] = (uint8_t)(0x40 + i);
	memset(&log, 0, sizeof(log));
	ATF_REQUIRE(hwtr_jitc_new(&jc) == 0);
	/* Bytes that agree where they overlap: both stay valid. */
	ATF_REQUIRE_EQ(hwtr_jitc_code(jc, &log, 5, 0x2000, page, 16, 1), 1);
	ATF_REQUIRE_EQ(hwtr_jitc_code(jc, &log, 5, 0x2008, page + 8, 24, 2), 1);
	/* Inside the two together but in neither alone: a third. */
	ATF_REQUIRE_EQ(hwtr_jitc_code(jc, &log, 5, 0x2004, page + 4, 16, 3), 1);
	/* Inside the second: nothing. */
	ATF_REQUIRE_EQ(hwtr_jitc_code(jc, &log, 5, 0x2010, page + 16, 16, 4), 0);
	store_and_read(jc, "c.hwtrace", 5, &g);
	ATF_REQUIRE(g.present);
	ATF_CHECK_EQ_MSG(g.l.n, 3, "expected 3 regions, got %zu", g.l.n);
	check(&g, 0, 0x2000, 1, UINT64_MAX, page, 16);
	check(&g, 1, 0x2008, 2, UINT64_MAX, page + 8, 24);
	check(&g, 2, 0x2004, 3, UINT64_MAX, page + 4, 16);
	got_free(&g);
	hwtr_jitc_free(jc);
}

ATF_TC_WITHOUT_HEAD(none_no_member);
ATF_TC_BODY(none_no_member, tc)
{
	struct hwtr_jitc *jc;
	struct got g;

	ATF_REQUIRE(hwtr_jitc_new(&jc) == 0);
	store_and_read(jc, "n.hwtrace", 1, &g);
	ATF_CHECK_MSG(!g.present, "expected no jit/code member");
	got_free(&g);
	hwtr_jitc_free(jc);
}

ATF_TC_WITHOUT_HEAD(too_long);
ATF_TC_BODY(too_long, tc)
{
	struct hwtr_jitc *jc;
	struct hwtr_log log;
	uint32_t x = 1;
	uint8_t *big;
	struct got g;
	size_t i;

	/* Not all alike: the reader refuses members that compress 4096:1. */
	ATF_REQUIRE((big = malloc(HWTR_CODE_MAX_LEN + 100)) != NULL);
	for (i = 0; i < HWTR_CODE_MAX_LEN + 100; i++) {
		x = x * 1103515245u + 12345u;
		big[i] = (uint8_t)(x >> 24);
	}
	memset(&log, 0, sizeof(log));
	ATF_REQUIRE(hwtr_jitc_new(&jc) == 0);
	ATF_REQUIRE_EQ(hwtr_jitc_code(jc, &log, 3, 0x10000, big,
	    HWTR_CODE_MAX_LEN + 100, 1), 1);
	store_and_read(jc, "t.hwtrace", 3, &g);
	ATF_REQUIRE(g.present);
	ATF_REQUIRE_EQ(g.l.n, 1);
	check(&g, 0, 0x10000, 1, UINT64_MAX, big, HWTR_CODE_MAX_LEN);
	got_free(&g);
	hwtr_jitc_free(jc);
	free(big);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, versions);
	ATF_TP_ADD_TC(tp, consistent_overlap);
	ATF_TP_ADD_TC(tp, none_no_member);
	ATF_TP_ADD_TC(tp, too_long);
	return (atf_no_error());
}
