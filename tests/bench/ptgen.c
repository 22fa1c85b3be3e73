/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * ptgen: write a synthetic but realistic Intel PT stream for benchmarks.
 *
 * Compressors behave very differently on random bytes, on zeros and on
 * real trace, so the benchmark input must look like what a PT unit writes.
 * Every packet is encoded by libipt's own encoder (pt_enc_next), and the
 * stream is shaped like a user-space trace of an ordinary program:
 *   - PSB+ (PSB, TSC, TMA, CBR, MODE.exec, FUP, PSBEND) every PSB period
 *     (4 KiB by default, the smallest period hardware offers), with the
 *     last IP reset after it as the decoder expects;
 *   - a simulated call graph over a few thousand functions in an
 *     executable and two shared libraries: loops give long, biased runs of
 *     TNT bits, calls and returns give TIPs whose IP compression
 *     (16/32/48 bits) follows from the address locality, returns are
 *     mostly compressed into TNT bits as with return compression on;
 *     TNT bits go out in short TNT packets (6 bits at most), as most
 *     Intel cores write them;
 *   - timing as with MTC, CYC (with a high threshold) and TSC enabled: a
 *     CYC after some blocks and before TIPs, an MTC every 1024 cycles, a
 *     TSC now and then.
 * The output is deterministic for a given seed and exactly @size bytes
 * long (PAD packets fill the last few bytes).
 */

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <intel-pt.h>

#include "../lib/hwtr_test_tool.h"

#define NFUNC		4096
#define MAXDEPTH	16
#define BUFSZ		(1u << 20)

struct rng {
	uint64_t s;
};

struct func {
	uint64_t	entry;
	uint32_t	len;		/* bytes of code */
	uint8_t		loopy;		/* has a hot loop */
	uint64_t	seed;		/* its control flow */
};

struct gen {
	struct rng	rng;
	struct pt_encoder *enc;
	uint8_t		*buf;
	int		fd;
	uint64_t	written;	/* bytes flushed to fd */
	uint64_t	size;		/* bytes wanted */
	uint64_t	stop;		/* no new blocks from here on */
	uint32_t	psb_period;
	uint64_t	last_psb;	/* stream offset of the last PSB */
	uint64_t	last_ip;	/* IP compression state */
	uint64_t	ip;
	uint64_t	tsc;
	uint32_t	ctc;		/* crystal clock ticks */
	uint32_t	cyc_acc;
	uint64_t	tnt;		/* pending TNT bits */
	int		ntnt;
	struct func	func[NFUNC];
	uint64_t	stack[MAXDEPTH];
	int		depth;
};

static uint64_t
rnd(struct rng *r)
{
	/* xorshift64*: fast, deterministic, good enough for a workload. */
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return (r->s * 0x2545f4914f6cdd1dULL);
}

static uint32_t
rnd_below(struct rng *r, uint32_t n)
{
	return ((uint32_t)((rnd(r) >> 32) % n));
}

static uint64_t
offset(const struct gen *g)
{
	uint64_t off;

	(void)pt_enc_get_offset(g->enc, &off);
	return (g->written + off);
}

static void
flush_buf(struct gen *g)
{
	uint64_t off;
	size_t done;
	ssize_t n;

	(void)pt_enc_get_offset(g->enc, &off);
	for (done = 0; done < off; done += (size_t)n) {
		n = write(g->fd, g->buf + done, off - done);
		if (n < 0) {
			if (errno == EINTR) {
				n = 0;
				continue;
			}
			err(1, "write");
		}
	}
	g->written += off;
	if (pt_enc_sync_set(g->enc, 0) < 0)
		errx(1, "pt_enc_sync_set failed");
}

static void
emit(struct gen *g, const struct pt_packet *p)
{
	uint64_t off;
	int rc;

	(void)pt_enc_get_offset(g->enc, &off);
	if (off + 64 > BUFSZ)
		flush_buf(g);
	rc = pt_enc_next(g->enc, p);
	if (rc < 0)
		errx(1, "pt_enc_next: packet type %d: %s", p->type,
		    pt_errstr(pt_errcode(rc)));
}

/* The cheapest IP compression that reproduces @ip from the last IP. */
static enum pt_ip_compression
ipc_for(uint64_t last, uint64_t ip)
{
	uint64_t sext;

	if (((last ^ ip) >> 16) == 0)
		return (pt_ipc_update_16);
	if (((last ^ ip) >> 32) == 0)
		return (pt_ipc_update_32);
	sext = (ip & (1ULL << 47)) ? (ip | 0xffff000000000000ULL) :
	    (ip & 0x0000ffffffffffffULL);
	if (sext == ip)
		return (pt_ipc_sext_48);
	return (pt_ipc_full);
}

static void
emit_ip(struct gen *g, enum pt_packet_type type, uint64_t ip)
{
	struct pt_packet p;

	memset(&p, 0, sizeof(p));
	p.type = type;
	p.payload.ip.ipc = ipc_for(g->last_ip, ip);
	switch (p.payload.ip.ipc) {
	case pt_ipc_update_16:
		p.payload.ip.ip = ip & 0xffff;
		break;
	case pt_ipc_update_32:
		p.payload.ip.ip = ip & 0xffffffff;
		break;
	case pt_ipc_sext_48:
		p.payload.ip.ip = ip & 0x0000ffffffffffffULL;
		break;
	default:
		p.payload.ip.ip = ip;
		break;
	}
	emit(g, &p);
	g->last_ip = ip;
}

static void
emit_simple(struct gen *g, enum pt_packet_type type)
{
	struct pt_packet p;

	memset(&p, 0, sizeof(p));
	p.type = type;
	emit(g, &p);
}

static void
emit_tsc(struct gen *g)
{
	struct pt_packet p;

	memset(&p, 0, sizeof(p));
	p.type = ppt_tsc;
	p.payload.tsc.tsc = g->tsc & ((1ULL << 56) - 1);
	emit(g, &p);
}

static void
flush_tnt(struct gen *g)
{
	struct pt_packet p;

	if (g->ntnt == 0)
		return;
	memset(&p, 0, sizeof(p));
	p.type = ppt_tnt_8;
	p.payload.tnt.bit_size = (uint8_t)g->ntnt;
	p.payload.tnt.payload = g->tnt;
	emit(g, &p);
	g->tnt = 0;
	g->ntnt = 0;
}

/*
 * Time passes: cycles accumulate for the next CYC and an MTC goes out
 * every 1024 core cycles (a 3.6 GHz core, a 24 MHz crystal clock and an
 * MTC period of 8 ticks, as with mtc_freq 3).
 */
static void
spend(struct gen *g, uint32_t cycles)
{
	struct pt_packet p;
	uint32_t ticks;

	g->tsc += cycles;
	g->cyc_acc += cycles;
	ticks = (uint32_t)((g->tsc >> 10) - g->ctc);
	if (ticks > 0) {
		flush_tnt(g);
		g->ctc += ticks;
		memset(&p, 0, sizeof(p));
		p.type = ppt_mtc;
		p.payload.mtc.ctc = (uint8_t)g->ctc;
		emit(g, &p);
	}
}

static void
emit_cyc(struct gen *g)
{
	struct pt_packet p;

	if (g->cyc_acc == 0)
		return;
	memset(&p, 0, sizeof(p));
	p.type = ppt_cyc;
	p.payload.cyc.value = g->cyc_acc;
	emit(g, &p);
	g->cyc_acc = 0;
}

static void
tnt_bit(struct gen *g, int taken)
{
	g->tnt = (g->tnt << 1) | (taken ? 1 : 0);
	if (++g->ntnt == 6)
		flush_tnt(g);
}

static void
psb_plus(struct gen *g)
{
	struct pt_packet p;

	flush_tnt(g);
	g->last_psb = offset(g);
	emit_simple(g, ppt_psb);
	emit_tsc(g);
	memset(&p, 0, sizeof(p));
	p.type = ppt_tma;
	p.payload.tma.ctc = (uint16_t)g->ctc;
	p.payload.tma.fc = (uint16_t)(g->tsc & 0x1ff);
	emit(g, &p);
	memset(&p, 0, sizeof(p));
	p.type = ppt_cbr;
	p.payload.cbr.ratio = 36;
	emit(g, &p);
	memset(&p, 0, sizeof(p));
	p.type = ppt_mode;
	p.payload.mode.leaf = pt_mol_exec;
	p.payload.mode.bits.exec = pt_set_exec_mode(ptem_64bit);
	emit(g, &p);
	g->last_ip = 0;
	emit_ip(g, ppt_fup, g->ip);
	emit_simple(g, ppt_psbend);
	g->cyc_acc = 0;
}

static void
init_funcs(struct gen *g)
{
	static const uint64_t base[3] = {
		0x0000000000401000ULL,		/* the executable */
		0x00007f3a1c200000ULL,		/* libc-like */
		0x00007f3a1ca00000ULL		/* another library */
	};
	uint64_t at[3];
	int i, region;

	memcpy(at, base, sizeof(at));
	for (i = 0; i < NFUNC; i++) {
		region = i < NFUNC / 2 ? 0 : (i < NFUNC * 7 / 8 ? 1 : 2);
		g->func[i].entry = at[region];
		g->func[i].len = 32 + rnd_below(&g->rng, 2000);
		g->func[i].loopy = rnd_below(&g->rng, 4) == 0;
		g->func[i].seed = rnd(&g->rng) | 1;
		at[region] += (g->func[i].len + 15) & ~15ULL;
	}
}

/*
 * Pick a callee: mostly a function near the caller (same image, close
 * by), sometimes one of a few hot library functions, rarely anything.
 */
static int
pick_callee(struct rng *shape, int caller)
{
	uint32_t r = rnd_below(shape, 100);
	int f;

	if (r < 60) {
		f = caller + (int)rnd_below(shape, 64) - 32;
		if (f < 0)
			f = -f;
		if (f >= NFUNC)
			f = NFUNC - 1 - (f - NFUNC);
		return (f);
	}
	if (r < 90)
		return (NFUNC / 2 + (int)rnd_below(shape, 48));
	return ((int)rnd_below(shape, NFUNC));
}

/*
 * Run function @f: a body of conditional branches, loops and calls, then
 * return.  Each iteration of the main loop is one basic block.  The shape
 * of a function (its blocks, branch directions, call sites and callees)
 * comes from its own seed, so running it again takes mostly the same
 * path, as code does; data makes a branch flip or a loop run longer now
 * and then (the global generator), and timing varies every time.
 */
static void
run(struct gen *g, int f, int depth)
{
	const struct func *fn = &g->func[f];
	struct rng shape = { fn->seed };
	uint32_t blocks, iters, i, k;
	int callee, taken;
	uint64_t ret;

	g->ip = fn->entry;
	blocks = 2 + rnd_below(&shape, 12);
	for (i = 0; i < blocks && offset(g) < g->stop; i++) {
		if (offset(g) - g->last_psb >= g->psb_period)
			psb_plus(g);
		spend(g, 2 + rnd_below(&g->rng, 20));
		g->ip = fn->entry + rnd_below(&shape, fn->len);
		if (fn->loopy && rnd_below(&shape, 3) == 0) {
			/* A hot loop: taken, taken, ..., not taken. */
			iters = 1 + rnd_below(&shape, 40);
			if (rnd_below(&g->rng, 4) == 0)
				iters += rnd_below(&g->rng, 8);
			for (k = 0; k < iters; k++) {
				tnt_bit(g, 1);
				spend(g, 3 + rnd_below(&g->rng, 4));
			}
			tnt_bit(g, 0);
		} else {
			taken = rnd_below(&shape, 3) != 0;
			if (rnd_below(&g->rng, 10) == 0)
				taken = !taken;
			tnt_bit(g, taken);
		}
		if (rnd_below(&g->rng, 32) == 0)
			emit_cyc(g);
		/*
		 * A call site; below a depth of 12 functions act as leaves
		 * so that the call tree stays finite.
		 */
		if (rnd_below(&shape, 6) == 0 && depth < 12) {
			callee = pick_callee(&shape, f);
			ret = g->ip + 5;
			/* One in four call sites is indirect: a TIP. */
			if (rnd_below(&shape, 4) == 0) {
				flush_tnt(g);
				emit_cyc(g);
				emit_ip(g, ppt_tip, g->func[callee].entry);
			}
			g->stack[depth] = ret;
			run(g, callee, depth + 1);
			g->ip = ret;
		}
	}
	/* Return: compressed (one TNT bit) unless the stack was deep. */
	if (depth > 0 && rnd_below(&g->rng, 16) != 0)
		tnt_bit(g, 1);
	else if (depth > 0) {
		flush_tnt(g);
		emit_cyc(g);
		emit_ip(g, ppt_tip, g->stack[depth - 1]);
	}
	if (rnd_below(&g->rng, 64) == 0) {
		flush_tnt(g);
		emit_tsc(g);
	}
}

static void
usage(void)
{
	fprintf(stderr, "usage: ptgen [-p psb-period] [-S seed] -s size "
	    "-o file\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	struct gen *g;
	struct pt_config cfg;
	struct pt_packet pad;
	const char *out = NULL;
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	int c;

	g = calloc(1, sizeof(*g));
	if (g == NULL)
		err(1, "calloc");
	g->psb_period = 4096;
	while ((c = getopt(argc, argv, "o:p:s:S:")) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'p':
			g->psb_period = (uint32_t)tool_number("ptgen", optarg,
			    "psb period", UINT32_MAX);
			break;
		case 's':
			g->size = tool_number("ptgen", optarg, "size",
			    UINT64_MAX);
			break;
		case 'S':
			seed = tool_number("ptgen", optarg, "seed", UINT64_MAX);
			break;
		default:
			usage();
		}
	}
	if (optind != argc || out == NULL || g->size == 0 ||
	    g->psb_period < 256)
		usage();
	g->rng.s = seed | 1;
	g->buf = malloc(BUFSZ);
	if (g->buf == NULL)
		err(1, "malloc");
	pt_config_init(&cfg);
	cfg.begin = g->buf;
	cfg.end = g->buf + BUFSZ;
	g->enc = pt_alloc_encoder(&cfg);
	if (g->enc == NULL)
		errx(1, "pt_alloc_encoder failed");
	g->fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (g->fd < 0)
		err(1, "%s", out);

	g->tsc = 0x123456789aULL;
	g->ctc = (uint32_t)(g->tsc >> 10);
	init_funcs(g);
	g->ip = g->func[0].entry;
	psb_plus(g);
	/*
	 * Unwinding a deep call stack still writes a few bytes per frame, so
	 * new blocks stop 4 KiB short of the end.
	 */
	g->stop = g->size > 4096 ? g->size - 4096 : 0;
	while (offset(g) < g->stop)
		run(g, (int)rnd_below(&g->rng, NFUNC / 2), 0);
	flush_tnt(g);
	/* Fill up to exactly @size with PAD packets (one byte each). */
	memset(&pad, 0, sizeof(pad));
	pad.type = ppt_pad;
	if (offset(g) > g->size)
		errx(1, "overshot the size by %" PRIu64 " bytes",
		    offset(g) - g->size);
	while (offset(g) < g->size)
		emit(g, &pad);
	flush_buf(g);
	if (close(g->fd) != 0)
		err(1, "%s", out);
	pt_free_encoder(g->enc);
	free(g->buf);
	free(g);
	return (0);
}
