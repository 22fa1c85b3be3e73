/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * fpt's differential fuzzer's inputs through the check the fuzzer makes
 * (fpt_one.h): libipt's block decoder and fpt over the calls fixture must
 * give the same blocks and events (errors at the same offsets), or fpt
 * must say unsupported with libipt's items until then.  The inputs are
 * the fuzzer's seeds (ixgen walks over the fixture, made here as
 * tests/fuzz/fuzz-fpt.mk makes them) and the inputs on which it found
 * fpt differing (tests/fuzz/corpus-fpt/reg-*; most also a hand-built
 * case in tests/indexer/t_fpt.c or t_fptreg.c, which do not depend on
 * the fixture's layout).
 */

#include <sys/mman.h>
#include <sys/stat.h>

#include <atf-c.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hwtrace.h"
#include "hwtr_test.h"
#include "fpt_one.h"

#define FPT_CORPUS	HWTR_TEST_SRC "/tests/fuzz/corpus-fpt"
#define FPT_PROG	HWTR_TEST_PROGS "/calls"
#define IXGEN		HWTR_TEST_BUILD "/bench/ixgen"

static void
load_prog(struct fpt_one_prog *p)
{
	struct stat st;
	char err[512];

	if (stat(FPT_PROG, &st) != 0)
		atf_tc_skip("the calls fixture is not built: %s", FPT_PROG);
	ATF_REQUIRE_MSG(fpt_one_load(p, FPT_PROG, err, sizeof(err)) == 0,
	    "%s", err);
}

/* @len bytes of trace at @buf through both decoders (@name in messages). */
static void
check_file_bytes(struct fpt_one_prog *p, const char *name, const void *buf,
    size_t len)
{
	char msg[512];
	int rc;

	rc = fpt_one_run(p, buf, len, getenv("T_FPT_SEEDS_DUMP") != NULL, 1,
	    msg, sizeof(msg));
	ATF_CHECK_MSG(rc == 0, "%s: expected fpt to give libipt's items "
	    "(and its run API fpt_next()'s), got %s: %s", name,
	    rc < 0 ? "no run" : "a difference", msg);
}

/* One input file through both decoders; 1 if it was there. */
static int
check_file(struct fpt_one_prog *p, const char *name, const char *path)
{
	uint8_t *buf;
	size_t len;

	buf = tf_slurp(path, &len);
	ATF_REQUIRE_MSG(buf != NULL, "%s: cannot read it", path);
	check_file_bytes(p, name, buf, len);
	free(buf);
	return (1);
}

ATF_TC_WITHOUT_HEAD(found_inputs_agree);
ATF_TC_BODY(found_inputs_agree, tc)
{
	struct fpt_one_prog p;
	struct dirent *de;
	char path[4096];
	DIR *d;
	int n = 0;

	load_prog(&p);
	d = opendir(FPT_CORPUS);
	ATF_REQUIRE_MSG(d != NULL, "cannot open %s", FPT_CORPUS);
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", FPT_CORPUS, de->d_name);
		n += check_file(&p, de->d_name, path);
	}
	closedir(d);
	fpt_one_free(&p);
	ATF_REQUIRE_MSG(n >= 5, "expected the 5 found inputs in %s, got %d",
	    FPT_CORPUS, n);
}

ATF_TC_WITHOUT_HEAD(seed_walks_agree);
ATF_TC_BODY(seed_walks_agree, tc)
{
	struct fpt_one_prog p;
	struct stat st;
	char cmd[2048], name[64];
	int s;

	load_prog(&p);
	if (stat(IXGEN, &st) != 0)
		atf_tc_skip("ixgen is not built: %s", IXGEN);
	for (s = 1; s <= 4; s++) {
		snprintf(cmd, sizeof(cmd), "%s -n 3000 -t 1 -s %d -p walk%d "
		    "%s walk%d.hwtrace", IXGEN, s, s, FPT_PROG, s);
		ATF_REQUIRE_MSG(system(cmd) == 0, "ixgen failed: %s", cmd);
		snprintf(name, sizeof(name), "walk%d.0", s);
		ATF_REQUIRE_MSG(stat(name, &st) == 0 && st.st_size > 0,
		    "ixgen wrote no trace %s", name);
		check_file(&p, name, name);
	}
	fpt_one_free(&p);
}

/*
 * A genuine trace of the fixture, from the valgrind source: TNT packets
 * of many bits, so that fpt's run API (fpt_run_rest(), fpt_run_next(),
 * which `index` takes most blocks through) gives runs, and fpt_one_run()
 * compares them with fpt_next()'s items (about a thousand runs here; the
 * ixgen walks above give almost none).
 */
ATF_TC(valgrind_trace_agrees);
ATF_TC_HEAD(valgrind_trace_agrees, tc)
{
	atf_tc_set_md_var(tc, "timeout", "300");
}
ATF_TC_BODY(valgrind_trace_agrees, tc)
{
	struct fpt_one_prog p;
	struct hwtr_ar *ar = NULL;
	char cmd[2048];
	void *buf;
	size_t len;
	int st;

	load_prog(&p);
	if (system("valgrind --version > /dev/null 2>&1") != 0)
		atf_tc_skip("valgrind is not installed");
	snprintf(cmd, sizeof(cmd), "%s capture --source valgrind -o vg.hwtrace "
	    "-- %s > /dev/null 2> capture.err", HWTR_TEST_HWTRACE, FPT_PROG);
	st = system(cmd);
	ATF_REQUIRE_MSG(st == 0, "the capture failed (see capture.err): %s",
	    cmd);
	ATF_REQUIRE_MSG(hwtr_ar_open(&ar, "vg.hwtrace", NULL) == 0,
	    "cannot open vg.hwtrace");
	ATF_REQUIRE_MSG(hwtr_ar_nchunks(ar, 0) >= 1, "no trace in vg.hwtrace");
	ATF_REQUIRE(hwtr_ar_read_chunk(ar, 0, 0, &buf, &len) == 0);
	ATF_REQUIRE_MSG(len > 1000, "expected over 1000 bytes of PT, got %zu",
	    len);
	check_file_bytes(&p, "valgrind's trace of calls", buf, len);
	free(buf);
	hwtr_ar_close(ar);
	fpt_one_free(&p);
}

/* Append a block, an exec mode event or an error to @l. */
static void
add_item(struct tf_items *l, int ev, uint64_t ip, uint32_t ninsn,
    uint8_t mode)
{
	struct fpt_item it;

	memset(&it, 0, sizeof(it));
	it.kind = ev ? FPT_ITEM_EVENT : FPT_ITEM_BLOCK;
	if (!ev) {
		it.block.ip = it.block.end_ip = ip;
		it.block.ninsn = ninsn;
		it.block.mode = mode;
	} else if (mode != 0) {
		it.event.kind = FPT_EV_EXEC_MODE;
		it.event.mode = mode;
		it.event.ip_suppressed = 1;
	} else {
		it.event.kind = FPT_EV_ERROR;
		it.event.offset = ip;
	}
	tf_add(l, &it);
}

/* A PSB, 16 bytes. */
#define PSB16 \
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, \
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82

/*
 * The two libipt bugs the comparison skips, skipped only where they
 * are: a block libipt decoded in a stale mode at or before the first
 * difference, or its -pte_internal there; fpt's error right after a
 * TIP without IP.
 */
ATF_TC_WITHOUT_HEAD(skips_are_narrow);
ATF_TC_BODY(skips_are_narrow, tc)
{
	/* TIP without IP, PAD, CYC, TNT. */
	static const uint8_t tip[] = { 0x0d, 0x00, 0x87, 0x00, 0x04, 0x00 };
	/* TIP without IP, PAD (or TNT), a CYC cut by the end. */
	static const uint8_t cut[] = { 0x0d, 0x00, 0x87 };
	static const uint8_t tntcut[] = { 0x0d, 0x04, 0x87 };
	/* TIP without IP, a PSB+ the end cuts, and one it does not. */
	static const uint8_t psbcut[] = { 0x0d, PSB16, 0x00 };
	static const uint8_t psbend[] = { 0x0d, PSB16, 0x02, 0x23 };
	/* ... a whole one with a status update (MODE.exec), PSBEND 0x13. */
	static const uint8_t psbst[] = { 0x0d, PSB16, 0x99, 0x01, 0x02, 0x23,
	    0x00 };
	/*
	 * TIP without IP, a PSB+ of a PAD alone, PAD, TIP.PGE; one with a
	 * TNT in it.
	 */
	static const uint8_t plain[] = { 0x0d, PSB16, 0x00, 0x02, 0x23, 0x00,
	    0x71, 0x00, 0x10, 0, 0, 0, 0 };
	static const uint8_t badpsb[] = { 0x0d, PSB16, 0x04, 0x02, 0x23, 0x00,
	    0x71, 0x00, 0x10, 0, 0, 0, 0 };
	/* ... one of a FUP alone, its header's (no event). */
	static const uint8_t psbfup[] = { 0x0d, PSB16, 0x3d, 0x00, 0x10, 0x02,
	    0x23, 0x00, 0x71, 0x00, 0x10, 0, 0, 0, 0 };
	/* TIP without IP, a FUP to 0x1000, PAD, TNT; a FUP without IP. */
	static const uint8_t fup[] = { 0x0d, 0x3d, 0x00, 0x10, 0x00, 0x04 };
	static const uint8_t fupnoip[] = { 0x0d, 0x1d, 0x00, 0x04 };
	struct tf_items want, got;
	uint8_t *pads;

	memset(&want, 0, sizeof(want));
	memset(&got, 0, sizeof(got));
	/* 32-bit, a block, an error, 64-bit and a block cached as 32-bit. */
	add_item(&want, 1, 0, 0, 32);
	add_item(&want, 0, 0x1000, 4, 32);
	add_item(&want, 1, 0x10, 0, 0);
	add_item(&want, 1, 0, 0, 64);
	add_item(&want, 0, 0x1000, 5, 32);
	add_item(&got, 1, 0, 0, 32);
	add_item(&got, 0, 0x1000, 4, 32);
	add_item(&got, 1, 0x10, 0, 0);
	add_item(&got, 1, 0, 0, 64);
	add_item(&got, 0, 0x1000, 3, 64);
	ATF_CHECK(fpt_one_mode_bug(&want, &got) == 1);
	/* A difference before the stale block is one. */
	got.v[1].block.ninsn = 3;
	ATF_CHECK(fpt_one_mode_bug(&want, &got) == 0);
	got.v[1].block.ninsn = 4;
	/* A block in the mode libipt was in is no stale one. */
	want.v[4].block.mode = 64;
	ATF_CHECK(fpt_one_mode_bug(&want, &got) == 0);
	/* ... nor one after an error, before the next mode. */
	want.v[3] = want.v[2];
	want.v[4].block.mode = 32;
	got.v[3] = want.v[2];
	ATF_CHECK(fpt_one_mode_bug(&want, &got) == 0);
	/* libipt's -pte_internal after the block that differs, no other. */
	add_item(&want, 1, 0x20, 0, 0);
	want.v[5].event.error = pte_internal;
	ATF_CHECK(fpt_one_mode_bug(&want, &got) == 1);
	want.v[5].event.error = pte_bad_opc;
	ATF_CHECK(fpt_one_mode_bug(&want, &got) == 0);

	/*
	 * fpt's error right after a one-byte TIP and the PADs and timing
	 * packets after it, and only there.
	 */
	got.v[4] = want.v[2];
	got.v[4].event.offset = 1;
	ATF_CHECK(fpt_one_noip_bug(&want, &got, tip, sizeof(tip)) == 1);
	got.v[4].event.offset = 2;
	ATF_CHECK(fpt_one_noip_bug(&want, &got, tip, sizeof(tip)) == 1);
	got.v[4].event.offset = 4;
	ATF_CHECK(fpt_one_noip_bug(&want, &got, tip, sizeof(tip)) == 1);
	got.v[4].event.offset = 5;
	ATF_CHECK(fpt_one_noip_bug(&want, &got, tip, sizeof(tip)) == 0);
	got.v[4].event.offset = 0;
	ATF_CHECK(fpt_one_noip_bug(&want, &got, tip, sizeof(tip)) == 0);
	/*
	 * ... past a FUP with IP, which libipt's read-ahead decodes as an
	 * asynchronous branch's (seed 6565), not past the TNT after it, nor
	 * past a FUP without IP.
	 */
	got.v[4].event.offset = 5;
	ATF_CHECK(fpt_one_noip_bug(&want, &got, fup, sizeof(fup)) == 1);
	got.v[4].event.offset = 4;
	ATF_CHECK(fpt_one_noip_bug(&want, &got, fup, sizeof(fup)) == 1);
	got.v[4].event.offset = 6;
	ATF_CHECK(fpt_one_noip_bug(&want, &got, fup, sizeof(fup)) == 0);
	got.v[4].event.offset = 2;
	ATF_CHECK(fpt_one_noip_bug(&want, &got, fupnoip,
	    sizeof(fupnoip)) == 0);
	got.v[4].event.offset = 1;
	ATF_CHECK(fpt_one_noip_bug(&want, &got, fupnoip,
	    sizeof(fupnoip)) == 1);
	/* ... and at the end, past a packet it cuts, not past a TNT. */
	got.v[4].event.offset = 3;
	ATF_CHECK(fpt_one_noip_bug(&want, &got, cut, sizeof(cut)) == 1);
	ATF_CHECK(fpt_one_noip_bug(&want, &got, tntcut, sizeof(tntcut)) == 0);
	/*
	 * ... past a PSB+ the end cuts, and past a whole one without status
	 * update (seed 6565), which libipt's read-ahead passes, to the packet
	 * after it, not past that, nor past one with a TNT in it.
	 */
	got.v[4].event.offset = sizeof(psbcut);
	ATF_CHECK(fpt_one_noip_bug(&want, &got, psbcut, sizeof(psbcut)) == 1);
	got.v[4].event.offset = sizeof(psbend);
	ATF_CHECK(fpt_one_noip_bug(&want, &got, psbend, sizeof(psbend)) == 1);
	got.v[4].event.offset = 0x14;
	ATF_CHECK(fpt_one_noip_bug(&want, &got, plain, sizeof(plain)) == 1);
	got.v[4].event.offset = 0x15;
	ATF_CHECK(fpt_one_noip_bug(&want, &got, plain, sizeof(plain)) == 1);
	got.v[4].event.offset = 0x1c;
	ATF_CHECK(fpt_one_noip_bug(&want, &got, plain, sizeof(plain)) == 0);
	got.v[4].event.offset = 0x15;
	ATF_CHECK(fpt_one_noip_bug(&want, &got, badpsb,
	    sizeof(badpsb)) == 0);
	/* ... past one with a FUP in it too (seed 9999), to the TIP.PGE. */
	got.v[4].event.offset = 0x17;
	ATF_CHECK(fpt_one_noip_bug(&want, &got, psbfup,
	    sizeof(psbfup)) == 1);
	got.v[4].event.offset = 0x18;
	ATF_CHECK(fpt_one_noip_bug(&want, &got, psbfup,
	    sizeof(psbfup)) == 0);
	/*
	 * ... at the PSBEND of a whole one with status updates, where the
	 * read-ahead stops, and not at another packet of it, nor past it, nor
	 * at the PSBEND of one without.
	 */
	got.v[4].event.offset = 0x13;
	ATF_CHECK(fpt_one_noip_bug(&want, &got, psbst, sizeof(psbst)) == 1);
	got.v[4].event.offset = 0x11;
	ATF_CHECK(fpt_one_noip_bug(&want, &got, psbst, sizeof(psbst)) == 0);
	got.v[4].event.offset = 0x15;
	ATF_CHECK(fpt_one_noip_bug(&want, &got, psbst, sizeof(psbst)) == 0);
	got.v[4].event.offset = 0x11;
	ATF_CHECK(fpt_one_noip_bug(&want, &got, psbend, sizeof(psbend)) == 0);
	/*
	 * ... with PADs in the PSB+ (seed 4242), up to FPT_ONE_NOIP_WINDOW
	 * bytes from the TIP.
	 */
	pads = calloc(1, FPT_ONE_NOIP_WINDOW + 8);
	ATF_REQUIRE(pads != NULL);
	memcpy(pads, psbst, 0x13);
	memcpy(pads + FPT_ONE_NOIP_WINDOW - 2, "\x02\x23", 2);
	got.v[4].event.offset = FPT_ONE_NOIP_WINDOW - 2;
	ATF_CHECK(fpt_one_noip_bug(&want, &got, pads,
	    FPT_ONE_NOIP_WINDOW + 8) == 1);
	memcpy(pads + FPT_ONE_NOIP_WINDOW - 2, "\x00\x00\x02\x23", 4);
	got.v[4].event.offset = FPT_ONE_NOIP_WINDOW;
	ATF_CHECK(fpt_one_noip_bug(&want, &got, pads,
	    FPT_ONE_NOIP_WINDOW + 8) == 1);
	memcpy(pads + FPT_ONE_NOIP_WINDOW, "\x00\x02\x23", 3);
	got.v[4].event.offset = FPT_ONE_NOIP_WINDOW + 1;
	ATF_CHECK(fpt_one_noip_bug(&want, &got, pads,
	    FPT_ONE_NOIP_WINDOW + 8) == 0);
	free(pads);
	tf_items_free(&want);
	tf_items_free(&got);
}

/* Errors at the same item compare their offsets, only those. */
ATF_TC_WITHOUT_HEAD(error_offsets_compared);
ATF_TC_BODY(error_offsets_compared, tc)
{
	struct tf_items want, got;
	char msg[256];

	memset(&want, 0, sizeof(want));
	memset(&got, 0, sizeof(got));
	add_item(&want, 0, 0x1000, 4, 64);
	add_item(&want, 1, 0x39, 0, 0);
	add_item(&got, 0, 0x1000, 4, 64);
	add_item(&got, 1, 0x39, 0, 0);
	ATF_CHECK(fpt_one_offsets(&want, &got, msg, sizeof(msg)) == 0);
	got.v[1].event.offset = 0x36;
	ATF_CHECK(fpt_one_offsets(&want, &got, msg, sizeof(msg)) == 1);
	ATF_CHECK_MSG(strstr(msg, "0x39") != NULL && strstr(msg, "0x36") !=
	    NULL, "%s", msg);
	/* A block's address is no error offset. */
	got.v[1].event.offset = 0x39;
	got.v[0].block.ip = 0x2000;
	ATF_CHECK(fpt_one_offsets(&want, &got, msg, sizeof(msg)) == 0);
	tf_items_free(&want);
	tf_items_free(&got);
}

/*
 * Where libipt's block cache goes on past a TIP without IP, its error
 * offset is skipped: fpt's right after that TIP, libipt's no -pte_noip;
 * only there.
 */
ATF_TC_WITHOUT_HEAD(noip_offset_skip_is_narrow);
ATF_TC_BODY(noip_offset_skip_is_narrow, tc)
{
	/* PAD, TIP without IP, TIP.PGD, a bad opcode. */
	static const uint8_t pt[] = { 0x00, 0x0d, 0x01, 0x02, 0x00 };
	struct tf_items want, got;

	memset(&want, 0, sizeof(want));
	memset(&got, 0, sizeof(got));
	add_item(&want, 0, 0x1000, 4, 64);
	add_item(&want, 1, 3, 0, 0);
	add_item(&got, 0, 0x1000, 4, 64);
	add_item(&got, 1, 2, 0, 0);
	want.v[1].event.error = pte_bad_opc;
	ATF_CHECK(fpt_one_noip_offset(&want, &got, pt, sizeof(pt)) == 1);
	/* libipt's own -pte_noip is compared. */
	want.v[1].event.error = pte_noip;
	ATF_CHECK(fpt_one_noip_offset(&want, &got, pt, sizeof(pt)) == 0);
	want.v[1].event.error = pte_bad_opc;
	/* fpt's error not right after the TIP is compared. */
	got.v[1].event.offset = 3;
	want.v[1].event.offset = 4;
	ATF_CHECK(fpt_one_noip_offset(&want, &got, pt, sizeof(pt)) == 0);
	got.v[1].event.offset = 1;
	ATF_CHECK(fpt_one_noip_offset(&want, &got, pt, sizeof(pt)) == 0);
	/* Nor is anything when the offsets agree. */
	got.v[1].event.offset = 4;
	ATF_CHECK(fpt_one_noip_offset(&want, &got, pt, sizeof(pt)) == 0);
	tf_items_free(&want);
	tf_items_free(&got);
}

/*
 * An input that ends on a page's edge with an aligned word of PSB
 * payload (fuzz_fpt, seed 6262): libipt 2.0.5's pt_sync_forward() reads
 * the byte after it (pt_find_psb()), past the page, which fpt_one_run()'s
 * copy keeps inside.  By construction no PSB is whole: neither decoder
 * gives an item.
 */
ATF_TC_WITHOUT_HEAD(input_at_page_end);
ATF_TC_BODY(input_at_page_end, tc)
{
	static const uint8_t payload[] = {
		0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	};
	struct fpt_one_prog p;
	long pg = sysconf(_SC_PAGESIZE);
	uint8_t *map, *in;
	char msg[512];

	load_prog(&p);
	ATF_REQUIRE(pg > 0);
	map = mmap(NULL, 2 * (size_t)pg, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ATF_REQUIRE(map != MAP_FAILED);
	ATF_REQUIRE(mprotect(map + pg, (size_t)pg, PROT_NONE) == 0);
	in = map + pg - sizeof(payload);
	memcpy(in, payload, sizeof(payload));
	ATF_CHECK_MSG(fpt_one_run(&p, in, sizeof(payload), 0, 1, msg,
	    sizeof(msg)) == 0, "%s", msg);
	ATF_REQUIRE(munmap(map, 2 * (size_t)pg) == 0);
	fpt_one_free(&p);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, found_inputs_agree);
	ATF_TP_ADD_TC(tp, seed_walks_agree);
	ATF_TP_ADD_TC(tp, valgrind_trace_agrees);
	ATF_TP_ADD_TC(tp, skips_are_narrow);
	ATF_TP_ADD_TC(tp, error_offsets_compared);
	ATF_TP_ADD_TC(tp, noip_offset_skip_is_narrow);
	ATF_TP_ADD_TC(tp, input_at_page_end);
	return (atf_no_error());
}
