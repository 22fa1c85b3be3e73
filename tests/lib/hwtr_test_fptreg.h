/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The hand-built traces of t_fptreg.c (tests/indexer): their common
 * packets, and one trace over a few bytes of code at 0x1000 through
 * libipt and fpt (both(), both_cpu(), both_blocks()), fpt's items
 * compared with libipt's and libipt's with what is known by
 * construction.
 */

#ifndef HWTR_TEST_FPTREG_H
#define HWTR_TEST_FPTREG_H

#include <atf-c.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "hwtrace.h"
#include "../fuzz/fpt_one.h"

#define PSB_BYTES \
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, \
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82

/* A PSB+ saying 64-bit mode and no IP (tracing is off), 20 bytes. */
#define PSB_PLUS_OFF	PSB_BYTES, 0x99, 0x01, 0x02, 0x23

/* TIP.PGE to 0x1000, 7 bytes. */
#define PGE_1000	0x71, 0x00, 0x10, 0, 0, 0, 0

/* MWAIT, 10 bytes: it waits for the next FUP. */
#define MWAIT		0x02, 0xc2, 0, 0, 0, 0, 0, 0, 0, 0

/*
 * The sync's PSB+ at 0x1000 in 64-bit mode, a MODE.exec that waits for
 * its TIP, and a PSB+ with a status update at 0x1000, 48 bytes.
 */
#define MODE_PSB_MODE \
	PSB_BYTES, \
	0x3d, 0x00, 0x10,	/* FUP 0x1000 */ \
	0x99, 0x01,		/* MODE 64 */ \
	0x02, 0x23,		/* PSBEND */ \
	0x99, 0x01,		/* MODE 64, for a TIP */ \
	PSB_BYTES, \
	0x3d, 0x00, 0x10,	/* FUP 0x1000 */ \
	0x99, 0x01,		/* MODE 64 */ \
	0x02, 0x23		/* PSBEND */

/*
 * The sync's PSB+ at 0x1000 in 64-bit mode and a PSB+ up to its FUP to
 * 0x1000, 42 bytes.
 */
#define SYNC_ON_1000 \
	PSB_BYTES, 0x3d, 0x00, 0x10, 0x99, 0x01, 0x02, 0x23, \
	PSB_BYTES, 0x3d, 0x00, 0x10

/*
 * @pt over @code at 0x1000 through both decoders: fpt must give what
 * libipt gives (@unsup: a prefix of it, then hand the trace over), with
 * the errors at the same offsets; libipt must give @n items, the last
 * an error at @err_off when @err_off is not 0.  With @kbl both decode as
 * for a Kaby Lake (6/158/10) and its errata, as the fuzzer does.  With
 * @keep, libipt's items are left there for the caller to check and free.
 */
static inline void
both_cpu(const char *what, const uint8_t *pt, size_t len,
    const uint8_t *code, size_t clen, size_t n, uint64_t err_off, int unsup,
    int kbl, struct tf_items *keep)
{
	struct tf_items want, got;
	struct pt_config cfg;
	struct fpt_config fc;
	struct tf_img im;
	const char *why;
	char msg[512];
	FILE *fp;

	ATF_REQUIRE((fp = fopen("code.bin", "wb")) != NULL);
	ATF_REQUIRE(fwrite(code, 1, clen, fp) == clen && fclose(fp) == 0);
	memset(&im, 0, sizeof(im));
	ATF_REQUIRE(tf_img_add(&im, "code.bin", code, 0, clen, 0x1000) == 0);
	pt_config_init(&cfg);
	memset(&fc, 0, sizeof(fc));
	fc.read_code = tf_read_code;
	fc.ctx = &im;
	if (kbl) {
		cfg.cpu.vendor = pcv_intel;
		cfg.cpu.family = 6;
		cfg.cpu.model = 158;
		cfg.cpu.stepping = 10;
		pt_cpu_errata(&cfg.errata, &cfg.cpu);
		fc.intel = 1;
		fc.family = 6;
		fc.model = 158;
		fc.stepping = 10;
	}
	ATF_REQUIRE_MSG(tf_run_both(pt, len, &im, &cfg, &fc, 1000, 10000,
	    &want, &got, &why) == 0, "%s: %s failed", what, why);
	ATF_CHECK_MSG(tf_compare(&want, &got, msg, sizeof(msg)) == 0,
	    "%s: %s", what, msg);
	ATF_CHECK_MSG(fpt_one_offsets(&want, &got, msg, sizeof(msg)) == 0,
	    "%s: %s", what, msg);
	ATF_CHECK_MSG(want.n == n, "%s: expected %zu items from libipt, "
	    "got %zu", what, n, want.n);
	if (err_off != 0 && want.n > 0) {
		const struct fpt_item *it = &want.v[want.n - 1];

		ATF_CHECK_MSG(it->kind == FPT_ITEM_EVENT &&
		    it->event.kind == FPT_EV_ERROR &&
		    it->event.offset == err_off, "%s: expected libipt's "
		    "error at %#" PRIx64 " last", what, err_off);
	}
	if (unsup)
		ATF_CHECK_MSG(got.unsup != NULL, "%s: expected fpt to hand "
		    "the trace over", what);
	else
		ATF_CHECK_MSG(got.unsup == NULL && got.n == want.n,
		    "%s: expected fpt's %zu items whole, got %zu (%s)", what,
		    want.n, got.n, got.unsup != NULL ? got.unsup : "whole");
	if (keep != NULL)
		*keep = want;
	else
		tf_items_free(&want);
	tf_items_free(&got);
}

static inline void
both(const char *what, const uint8_t *pt, size_t len, const uint8_t *code,
    size_t clen, size_t n, uint64_t err_off, int unsup)
{
	both_cpu(what, pt, len, code, clen, n, err_off, unsup, 0, NULL);
}

/* A block libipt must give: its first and last instruction, how many. */
struct want_block {
	uint64_t	ip, end_ip;
	unsigned	ninsn;
};

/*
 * both() with libipt's blocks, in order, those of @wb (@nwb), known by
 * construction (fpt's are libipt's: both() compares them).
 */
static inline void
both_blocks(const char *what, const uint8_t *pt, size_t len,
    const uint8_t *code, size_t clen, size_t n, uint64_t err_off,
    const struct want_block *wb, size_t nwb)
{
	struct tf_items want;
	size_t i, k = 0;

	both_cpu(what, pt, len, code, clen, n, err_off, 0, 0, &want);
	for (i = 0; i < want.n; i++) {
		const struct fpt_block *b = &want.v[i].block;

		if (want.v[i].kind != FPT_ITEM_BLOCK)
			continue;
		ATF_CHECK_MSG(k < nwb, "%s: block %zu more than the %zu "
		    "expected", what, k, nwb);
		if (k < nwb)
			ATF_CHECK_MSG(b->ip == wb[k].ip &&
			    b->end_ip == wb[k].end_ip &&
			    b->ninsn == wb[k].ninsn, "%s: block %zu: expected "
			    "%#" PRIx64 "-%#" PRIx64 ", %u instructions, got "
			    "%#" PRIx64 "-%#" PRIx64 ", %u", what, k, wb[k].ip,
			    wb[k].end_ip, wb[k].ninsn, b->ip, b->end_ip,
			    (unsigned)b->ninsn);
		k++;
	}
	ATF_CHECK_MSG(k == nwb, "%s: expected %zu blocks, got %zu", what,
	    nwb, k);
	tf_items_free(&want);
}

#endif /* !HWTR_TEST_FPTREG_H */
