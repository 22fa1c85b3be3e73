/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * fpt's time: the estimate libipt's query decoder (2.0.5) makes from the
 * timing packets, which its block decoder hands on as pt_blk_time() and
 * as each event's time.  A TSC gives the time whole; a TMA after it says
 * where in the crystal clock (CTC) and fast counter (FC) periods the TSC
 * was taken; each MTC then adds the CTC periods since the last one,
 * converted with CPUID leaf 0x15's ratio; each CYC adds core cycles
 * since the last CYC or MTC, converted with a cycles-to-fast-counter
 * ratio (FCR) calibrated from the nominal frequency and the CBR, from
 * the cycles between two MTCs or, lacking MTCs, between two TSCs in PSB+.
 * The integer arithmetic is libipt's, wrap-arounds and all, so that the
 * numbers are the same to the last tick; where libipt's update fails
 * (its query then fails) fpt hands the segment to libipt.
 *
 * The time libipt reports for the flow is that of the last packet a
 * query decoded; the timing packets its read-ahead passes after that
 * count only from the packet the read-ahead stopped at on.  fpt reads
 * as far ahead, and keeps the time before each of the last runs of such
 * packets (struct fpt_trun), so that fpt_time_at() gives the time at any
 * offset the caller knows libipt to have decoded to.
 */

#include <string.h>

#include "hwtrace.h"
#include "fpt_int.h"

#define MTC_BITS	8	/* the CTC bits an MTC gives */
#define TMA_CTC_BITS	16	/* the CTC bits a TMA gives */
#define TSC_BITS	56
#define FCR_SHIFT	8	/* the FCR's fraction bits */

static int	unsupported(struct fpt *, const char *);
static int	ctc_delta(const struct fpt *, uint32_t, uint32_t, uint32_t *);
static int	ctc_fc(const struct fpt *, uint64_t, uint64_t *);
static void	cal_reset(struct fpt_clock *);
static void	cal_set_fcr(struct fpt_clock *, uint64_t);
static int	cal_have_fcr(const struct fpt_clock *);
static int	on_tsc(struct fpt *, uint64_t, int);
static int	on_cbr(struct fpt *, uint64_t, int);
static int	on_tma(struct fpt *, uint32_t, uint64_t);
static int	cal_mtc(struct fpt *, uint32_t);
static int	on_mtc(struct fpt *, uint8_t);
static int	on_cyc(struct fpt *, uint64_t);
static int	skd007_cyc(const struct fpt *, const uint8_t *,
		    const struct fpt_pkt *);

int
fpt_time(const struct fpt *d, uint64_t *tsc)
{
	return (fpt_time_at(d, (uint64_t)(d->pos - d->cfg.begin), tsc, NULL));
}

int
fpt_time_at(const struct fpt *d, uint64_t off, uint64_t *tsc, int *ahead)
{
	const uint8_t *at = d->cfg.begin + off;
	const struct fpt_trun *r;
	unsigned n = d->tm.n;
	uint64_t t = d->tsc;
	int has = d->has_tsc;

	if (ahead != NULL)
		*ahead = n > 0 && at <= d->tm.run[(d->tm.head + n - 1) &
		    (FPT_TRUN_MAX - 1)].stop;
	/* The runs libipt has not decoded a packet after, the last first. */
	for (; n > 0; n--) {
		r = &d->tm.run[(d->tm.head + n - 1) & (FPT_TRUN_MAX - 1)];
		if (at > r->stop)
			break;
		t = r->tsc;
		has = r->has_tsc;
	}
	if (!has)
		return (-1);
	*tsc = t;
	return (0);
}

/* libipt's sync resets its time and its calibration: no time. */
void
fpti_time_reset(struct fpt *d)
{
	d->tsc = 0;
	d->has_tsc = 0;
	memset(&d->tm, 0, sizeof(d->tm));
	cal_reset(&d->tm.clk);
}

/* An OVF: libipt keeps the time but calibrates again. */
void
fpti_time_ovf(struct fpt *d)
{
	cal_reset(&d->tm.clk);
}

/*
 * A PSB (libipt's pt_tcal_update_psb): with SKL168, the first MTC after
 * it may follow lost CYCs.  Its PSB+ is decoded at once, the time it
 * says the flow's from here (fpti_read_psb_plus()).
 */
void
fpti_time_psb(struct fpt *d)
{
	if (d->skl168)
		d->tm.clk.cal_skl168 = 1;
}

/*
 * The timing packet @pkt at @p, in a PSB+ (@header) or not: the
 * time and its calibration updated as libipt updates them.  0, or
 * unsupported where libipt's update fails (a TMA without TSC ...) or
 * where it works around SKD007 or skips a corrupt TMA (SKZ84: its
 * parse failed, fpti_time_skip()).
 */
int
fpti_time_packet(struct fpt *d, const uint8_t *p, const struct fpt_pkt *pkt,
    int header)
{
	switch (pkt->kind) {
	case FPT_PKT_TSC:
		return (on_tsc(d, pkt->payload, header));
	case FPT_PKT_CBR:
		return (on_cbr(d, pkt->payload, header));
	case FPT_PKT_TMA:
		return (on_tma(d, (uint32_t)pkt->payload, pkt->payload2));
	case FPT_PKT_MTC:
		return (on_mtc(d, (uint8_t)pkt->payload));
	case FPT_PKT_CYC:
		if (skd007_cyc(d, p, pkt))
			return (unsupported(d, "SKD007: a CYC that may hide "
			    "an OVF"));
		return (on_cyc(d, pkt->payload));
	default:
		return (0);
	}
}

/*
 * The timing packet @pkt at d->pos, read ahead (not in a PSB+): its
 * update; when the time changes, the time before the run of timing
 * packets it is in is kept until libipt decodes the packet after them
 * (fpti_time_pass()).
 */
int
fpti_time_ahead(struct fpt *d, const struct fpt_pkt *pkt)
{
	struct fpt_trun *r;
	uint64_t tsc = d->tsc;
	int has = d->has_tsc, rc;

	if ((rc = fpti_time_packet(d, d->pos, pkt, 0)) < 0)
		return (rc);
	if (d->tsc == tsc && d->has_tsc == has)
		return (0);
	if (d->tm.n > 0 && d->pos <= d->tm.run[(d->tm.head + d->tm.n - 1) &
	    (FPT_TRUN_MAX - 1)].stop)
		return (0);
	/* The oldest run goes: libipt decoded past it long ago. */
	if (d->tm.n == FPT_TRUN_MAX) {
		d->tm.head = (d->tm.head + 1) & (FPT_TRUN_MAX - 1);
		d->tm.n--;
	}
	r = &d->tm.run[(d->tm.head + d->tm.n) & (FPT_TRUN_MAX - 1)];
	r->stop = d->pos;
	r->tsc = tsc;
	r->has_tsc = has;
	d->tm.n++;
	return (0);
}

/*
 * A timing packet at @p that a dry run of libipt's read passes over
 * (@pkt; NULL when it failed to parse): unsupported where libipt's
 * decode of it would not be a plain timing update (the errata SKD007
 * and SKZ84), 0 otherwise.
 */
int
fpti_time_skip(struct fpt *d, const uint8_t *p, const struct fpt_pkt *pkt)
{
	if (pkt == NULL)
		return (d->skz84 && d->cfg.end - p >= 2 && p[0] == 0x02 &&
		    p[1] == 0x73 ? unsupported(d, "SKZ84: a TMA with "
		    "reserved bits set") : 0);
	if (pkt->kind == FPT_PKT_CYC && skd007_cyc(d, p, pkt))
		return (unsupported(d, "SKD007: a CYC that may hide an OVF"));
	return (0);
}

int
fpti_cyc_skd007(const struct fpt *d, const uint8_t *p,
    const struct fpt_pkt *pkt)
{
	return (skd007_cyc(d, p, pkt));
}

static int
unsupported(struct fpt *d, const char *why)
{
	d->unsup = why;
	return (-HWTR_E_UNSUPPORTED);
}

/*
 * SKD007: a 2-byte CYC whose second byte reads as an extended opcode,
 * followed by an OVF's second byte, is the first byte of an OVF that
 * the CYC overlaps; libipt skips the CYC's first byte only.
 */
static int
skd007_cyc(const struct fpt *d, const uint8_t *p,
    const struct fpt_pkt *pkt)
{
	return (d->skd007 && pkt->size == 2 &&
	    (pkt->payload & ~0x1full) == 0x20 && d->cfg.end - p > 2 &&
	    p[2] == 0xf3);
}

/*
 * The CTC periods from @last to @ctc, with one wrap-around of the bits
 * MTC gives: -1 when more (libipt's bad packet).
 */
static int
ctc_delta(const struct fpt *d, uint32_t ctc, uint32_t last, uint32_t *delta)
{
	if (ctc < last) {
		ctc += 1u << (d->cfg.mtc_freq + MTC_BITS);
		if (ctc < last)
			return (-1);
	}
	*delta = ctc - last;
	return (0);
}

/* CTC periods in fast counter ticks: -1 without the ratio. */
static int
ctc_fc(const struct fpt *d, uint64_t ctc, uint64_t *fc)
{
	if (d->cfg.cpuid_15_eax == 0 || d->cfg.cpuid_15_ebx == 0)
		return (-1);
	*fc = (ctc * d->cfg.cpuid_15_ebx) / d->cfg.cpuid_15_eax;
	return (0);
}

static void
cal_reset(struct fpt_clock *c)
{
	c->fcr = c->max_fcr = 0;
	c->min_fcr = UINT64_MAX;
	c->cal_tsc = c->cyc_tsc = c->cyc_mtc = 0;
	c->cal_ctc = 0;
	c->cal_have_mtc = c->cal_skl168 = 0;
}

static void
cal_set_fcr(struct fpt_clock *c, uint64_t fcr)
{
	c->fcr = fcr;
	if (fcr < c->min_fcr)
		c->min_fcr = fcr;
	if (fcr > c->max_fcr)
		c->max_fcr = fcr;
}

static int
cal_have_fcr(const struct fpt_clock *c)
{
	return (c->min_fcr <= c->max_fcr);
}

/*
 * A TSC: the time whole.  In a PSB+ it calibrates from the cycles since
 * the last TSC, unless MTCs do; elsewhere it may follow lost time and
 * only starts the count.
 */
static int
on_tsc(struct fpt *d, uint64_t tsc, int header)
{
	struct fpt_clock *c = &d->tm.clk;
	uint64_t last = c->cal_tsc, cyc = c->cyc_tsc, t = tsc;

	c->cal_tsc = tsc;
	c->cyc_tsc = 0;
	if (header && last != 0 && cyc != 0 && !c->cal_have_mtc) {
		if (t < last) {
			t += 1ull << TSC_BITS;
			if (t < last)
				return (unsupported(d, "a TSC in PSB+ before "
				    "the last (libipt's calibration fails)"));
		}
		t -= last;
		if (t & ~(~0ull >> FCR_SHIFT))
			return (unsupported(d, "TSCs in PSB+ too far apart "
			    "(libipt's calibration fails)"));
		cal_set_fcr(c, (t << FCR_SHIFT) / cyc);
	}
	d->tsc = c->base = tsc;
	d->has_tsc = 1;
	c->have_tma = c->have_mtc = 0;
	c->ctc = 0;
	c->fc = 0;
	c->lost_cyc = 0;
	return (0);
}

/*
 * A CBR: with the nominal frequency known, the FCR.  Outside a PSB+ the
 * frequency changed: the calibration starts over.
 */
static int
on_cbr(struct fpt *d, uint64_t cbr, int header)
{
	struct fpt_clock *c = &d->tm.clk;

	if (!header)
		cal_reset(c);
	/* fpt_pkt_parse() fails a ratio of 0, as libipt's update does. */
	if (d->cfg.nom_freq != 0 && cbr != 0)
		cal_set_fcr(c, ((uint64_t)d->cfg.nom_freq << FCR_SHIFT) / cbr);
	return (0);
}

/*
 * A TMA: the CTC and FC at the last TSC.  The CTC bits are kept until
 * the next MTC, which they count from (when they are all the bits an MTC
 * gives, the TMA is as good as an MTC).
 */
static int
on_tma(struct fpt *d, uint32_t ctc, uint64_t fc)
{
	struct fpt_clock *c = &d->tm.clk;
	unsigned hi = d->cfg.mtc_freq + MTC_BITS;

	if (!d->has_tsc || c->have_tma)
		return (unsupported(d, "a TMA without a TSC before it "
		    "(libipt fails it)"));
	if (c->have_mtc)
		return (unsupported(d, "a TMA after an MTC (libipt fails "
		    "it)"));
	if (hi > 31)
		return (unsupported(d, "an MTC period over 2^23 CTC "
		    "periods"));
	c->have_tma = 1;
	c->base -= fc;
	c->fc += fc;
	if (hi <= TMA_CTC_BITS)
		c->have_mtc = 1;
	c->ctc = c->ctc_cyc = ctc & ((1u << hi) - 1);
	return (0);
}

/*
 * An MTC's calibration: the FCR from the cycles counted since the last
 * MTC.  0, 1 when the CTC ratio is unknown (no FCR then), or
 * unsupported where libipt's fails.
 */
static int
cal_mtc(struct fpt *d, uint32_t ctc)
{
	struct fpt_clock *c = &d->tm.clk;
	uint32_t last = c->cal_ctc, delta;
	uint64_t cyc = c->cyc_mtc, fc, fcr, dfc;
	int skl168 = c->cal_skl168;

	c->cal_skl168 = 0;
	if (!c->cal_have_mtc) {
		c->cyc_mtc = 0;
		c->cal_ctc = ctc;
		c->cal_have_mtc = 1;
		return (0);
	}
	/* Without cycles, the next MTC calibrates over both periods. */
	if (cyc == 0)
		return (0);
	c->cyc_mtc = 0;
	c->cal_ctc = ctc;
	if (ctc_delta(d, ctc, last, &delta) < 0)
		return (unsupported(d, "MTCs more than one CTC wrap apart "
		    "(libipt fails them)"));
	if (ctc_fc(d, delta, &fc) < 0)
		return (1);
	if (fc & ~(~0ull >> FCR_SHIFT))
		return (unsupported(d, "MTCs too far apart to calibrate "
		    "(libipt fails them)"));
	fcr = (fc << FCR_SHIFT) / cyc;
	/*
	 * SKL168: CYCs may be lost right before a PSB.  The first MTC
	 * after it does not calibrate when MTCs were lost, or, at a high
	 * MTC frequency, when the cycles look a wrap CYC short.
	 */
	if (skl168) {
		if ((1u << d->cfg.mtc_freq) < delta)
			return (0);
		if (d->cfg.mtc_freq < 10 && cal_have_fcr(c)) {
			dfc = (c->fcr * (cyc + 0xf00)) >> FCR_SHIFT;
			if (dfc < fc)
				return (0);
		}
	}
	cal_set_fcr(c, fcr);
	return (0);
}

/*
 * An MTC: the CTC periods since the last MTC (or the TMA's CTC) added to
 * the base, the fast counter cleared.  MTCs between a TSC and its TMA
 * are passed over, as is the first MTC without a TMA before it.
 */
static int
on_mtc(struct fpt *d, uint8_t payload)
{
	struct fpt_clock *c = &d->tm.clk;
	uint32_t ctc, last, lo, hi, delta;
	uint64_t fc;
	int have_mtc = c->have_mtc, rc;

	if (d->cfg.mtc_freq + MTC_BITS > 31)
		return (unsupported(d, "an MTC period over 2^23 CTC "
		    "periods"));
	ctc = (uint32_t)payload << d->cfg.mtc_freq;
	if ((rc = cal_mtc(d, ctc)) < 0)
		return (rc);
	if (d->has_tsc && !c->have_tma)
		return (0);
	last = c->ctc;
	if (c->fc != 0 || c->lost_cyc != 0 || !have_mtc)
		c->ctc_cyc = ctc;
	c->have_mtc = 1;
	c->fc = 0;
	c->ctc = ctc;
	c->lost_cyc = 0;
	if (!have_mtc) {
		if (!c->have_tma)
			return (0);
		if (last & ~((1u << TMA_CTC_BITS) - 1))
			return (unsupported(d, "an MTC after a TMA with more "
			    "CTC bits than it has (libipt fails it)"));
		/*
		 * The TMA gave the low CTC bits only: the high ones are
		 * this MTC's, one less when its low bits wrapped since.
		 */
		lo = ctc & ((1u << TMA_CTC_BITS) - 1);
		hi = ctc & ~((1u << TMA_CTC_BITS) - 1);
		if (lo < last) {
			hi -= 1u << TMA_CTC_BITS;
			hi &= 0xffu << d->cfg.mtc_freq;
		}
		last |= hi;
	}
	if (ctc_delta(d, ctc, last, &delta) < 0)
		return (unsupported(d, "an MTC more than one CTC wrap after "
		    "the last (libipt fails it)"));
	if (ctc_fc(d, delta, &fc) < 0)
		return (0);
	c->base += fc;
	d->tsc = c->base;
	return (0);
}

/*
 * A CYC: @cyc core cycles, as fast counter ticks with the FCR, added to
 * the time since the last MTC.  A CYC whose count began in an earlier
 * MTC period gives that period's share up first.  Without an FCR the
 * CYC is lost.
 */
static int
on_cyc(struct fpt *d, uint64_t cyc)
{
	struct fpt_clock *c = &d->tm.clk;
	uint64_t fcr, fc, old;
	uint32_t delta;

	c->cyc_mtc += cyc;
	c->cyc_tsc += cyc;
	fcr = cal_have_fcr(c) ? c->fcr : 0;
	if (fcr == 0) {
		c->lost_cyc++;
		return (0);
	}
	if (c->fc == 0 && c->ctc != c->ctc_cyc) {
		if (ctc_delta(d, c->ctc, c->ctc_cyc, &delta) < 0)
			return (unsupported(d, "a CYC over more than one CTC "
			    "wrap (libipt fails it)"));
		if (ctc_fc(d, delta, &fc) < 0)
			return (0);
		old = (fc << FCR_SHIFT) / fcr;
		cyc = cyc < old ? 0 : cyc - old;
	}
	c->fc += (cyc * fcr) >> FCR_SHIFT;
	d->tsc = c->base + c->fc;
	return (0);
}
