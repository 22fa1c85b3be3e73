/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Unit tests of the PT encoder (kernel/ptenc.c).  Each case assembles a
 * small x86-64 code image, "runs" it in a tiny simulator that reports
 * every control transfer to the encoder as a tracer would, and decodes the
 * packets with libipt's instruction flow decoder.  The decoded instruction
 * sequence must be exactly the one the simulator executed, with no decode
 * error: the reference is libipt, not this project's code.
 */

#include <atf-c.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwtrace.h"
#include "hwtr_kernel.h"
#include "hwtr_test.h"
#include "ptdec.h"

/* ------------------------------------------------------------------ */
/* A tiny assembler and simulator.                                     */

enum kind {
	K_NONE = 0, K_OTHER, K_JCC, K_JMP, K_CALL, K_ICALL, K_IJMP, K_RET,
	K_SYSCALL, K_FAR, K_END
};

#define CODE_MAX	8192

struct prog {
	uint64_t	base;
	uint8_t		code[CODE_MAX];
	uint8_t		kind[CODE_MAX];
	uint8_t		len[CODE_MAX];
	size_t		size;
};

static uint64_t
here(const struct prog *p)
{
	return (p->base + p->size);
}

static uint64_t
emit(struct prog *p, enum kind k, const uint8_t *bytes, size_t n)
{
	uint64_t at = here(p);

	ATF_REQUIRE(p->size + n <= CODE_MAX);
	memcpy(p->code + p->size, bytes, n);
	p->kind[p->size] = (uint8_t)k;
	p->len[p->size] = (uint8_t)n;
	p->size += n;
	return (at);
}

static void
put32(uint8_t *b, int64_t v)
{
	uint32_t u = (uint32_t)(int32_t)v;

	b[0] = u & 0xff;
	b[1] = (u >> 8) & 0xff;
	b[2] = (u >> 16) & 0xff;
	b[3] = (u >> 24) & 0xff;
}

static uint64_t
a_nop(struct prog *p)
{
	static const uint8_t b[] = { 0x90 };

	return (emit(p, K_OTHER, b, 1));
}

/* mov $imm32, %eax: a 5-byte non-branch. */
static uint64_t
a_mov(struct prog *p)
{
	static const uint8_t b[] = { 0xb8, 1, 2, 3, 4 };

	return (emit(p, K_OTHER, b, 5));
}

/* je rel32 / jmp rel32 / call rel32 to @target (patchable later). */
static uint64_t
a_rel(struct prog *p, enum kind k, uint64_t target)
{
	uint8_t b[6];
	size_t n;

	if (k == K_JCC) {
		b[0] = 0x0f;
		b[1] = 0x84;
		n = 6;
	} else {
		b[0] = k == K_JMP ? 0xe9 : 0xe8;
		n = 5;
	}
	put32(b + n - 4, (int64_t)(target - (here(p) + n)));
	return (emit(p, k, b, n));
}

static void
patch_rel(struct prog *p, uint64_t at, uint64_t target)
{
	size_t off = at - p->base, n = p->len[off];

	put32(p->code + off + n - 4, (int64_t)(target - (at + n)));
}

/*
 * One instruction of kind @k in its fixed encoding: call *%rax, jmp *%rax,
 * ret, syscall, ljmp *(%rax) (a far jump through memory, to 32- or 64-bit
 * code) and hlt, the K_END byte where the simulation stops (never
 * decoded).
 */
static uint64_t
a_fixed(struct prog *p, enum kind k)
{
	static const struct {
		uint8_t	n;
		uint8_t	b[2];
	} enc[] = {
		[K_ICALL] = { 2, { 0xff, 0xd0 } },
		[K_IJMP] = { 2, { 0xff, 0xe0 } },
		[K_RET] = { 1, { 0xc3 } },
		[K_SYSCALL] = { 2, { 0x0f, 0x05 } },
		[K_FAR] = { 2, { 0xff, 0x28 } },
		[K_END] = { 1, { 0xf4 } },
	};

	ATF_REQUIRE((size_t)k < sizeof(enc) / sizeof(enc[0]) &&
	    enc[k].n != 0);
	return (emit(p, k, enc[k].b, enc[k].n));
}

/*
 * The loop the cases share: mov (the entry, returned), then nop; mov; je
 * back to the nop, its conditional branch.
 */
static uint64_t
a_loop(struct prog *p)
{
	uint64_t entry, top;

	entry = a_mov(p);
	top = a_nop(p);
	a_mov(p);
	a_rel(p, K_JCC, top);
	return (entry);
}

static int
readmem(uint8_t *buf, size_t size, const struct pt_asid *asid, uint64_t ip,
    void *arg)
{
	const struct prog *p = arg;
	size_t n;

	(void)asid;
	if (ip < p->base || ip >= p->base + p->size)
		return (-pte_nomap);
	n = p->base + p->size - ip;
	if (n > size)
		n = size;
	memcpy(buf, p->code + (ip - p->base), n);
	return ((int)n);
}

/* What the simulated program decides at conditional and indirect branches. */
struct script {
	int	(*cond)(struct script *s, uint64_t ip);
	uint64_t (*target)(struct script *s, uint64_t ip);
	/* Return somewhere else than the call site (longjmp-like), or 0. */
	uint64_t (*ret_override)(struct script *s, uint64_t ip, uint64_t top);
	/* Interrupt before @ip: return the handler address, or 0. */
	uint64_t (*interrupt)(struct script *s, uint64_t ip);
	/* Far jumps: 1 when @target is 64-bit code. */
	int	(*mode64)(struct script *s, uint64_t target);
	long	 counter[8];
	uint64_t addr[8];
};

struct sink {
	uint8_t	*buf;
	size_t	len, cap;
	uint64_t psb[4096];
	size_t	npsb;
};

static int
sink_write(void *arg, const void *buf, size_t len)
{
	struct sink *s = arg;

	if (s->len + len > s->cap) {
		s->cap = (s->len + len) * 2;
		s->buf = realloc(s->buf, s->cap);
		ATF_REQUIRE(s->buf != NULL);
	}
	memcpy(s->buf + s->len, buf, len);
	s->len += len;
	return (0);
}

static void
sink_psb(void *arg, uint64_t off)
{
	struct sink *s = arg;

	if (s->npsb < sizeof(s->psb) / sizeof(s->psb[0]))
		s->psb[s->npsb++] = off;
}

struct run {
	uint64_t	*ip;
	size_t		n, cap;
	struct sink	sink;
	uint64_t	ninsn;
};

static void
run_push(struct run *r, uint64_t ip)
{
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 1024;
		r->ip = realloc(r->ip, r->cap * sizeof(*r->ip));
		ATF_REQUIRE(r->ip != NULL);
	}
	r->ip[r->n++] = ip;
}

#define SIMSTACK	4096

/*
 * Execute @p from @entry: every instruction executed is recorded, every
 * control transfer reported to a fresh encoder.
 */
static void
simulate(struct prog *p, uint64_t entry, struct script *sc,
    const struct hwtr_ptenc_opts *opts, struct run *r)
{
	struct hwtr_ptenc_out out = { sink_write, sink_psb, &r->sink };
	struct hwtr_ptenc *enc;
	uint64_t stack[SIMSTACK], ip = entry, next, t, h;
	size_t sp = 0, off;
	uint64_t tsc = 1000;
	long guard = 0;

	memset(r, 0, sizeof(*r));
	ATF_REQUIRE_EQ(hwtr_ptenc_new(&enc, opts, &out), 0);
	ATF_REQUIRE_EQ(hwtr_ptenc_enable(enc, ip, 1, tsc), 0);
	for (;;) {
		ATF_REQUIRE_MSG(ip >= p->base && ip < p->base + p->size,
		    "simulation left the image at %#" PRIx64, ip);
		off = ip - p->base;
		ATF_REQUIRE_MSG(p->kind[off] != K_NONE,
		    "no instruction at %#" PRIx64, ip);
		if (p->kind[off] == K_END)
			break;
		ATF_REQUIRE(++guard < 10000000);
		if (sc->interrupt != NULL && (h = sc->interrupt(sc, ip)) != 0) {
			/* A signal: the instruction at ip has not run. */
			ATF_REQUIRE_EQ(hwtr_ptenc_disable(enc, ip, tsc), 0);
			ATF_REQUIRE_EQ(hwtr_ptenc_enable(enc, h, 1, ++tsc), 0);
			ATF_REQUIRE(sp < SIMSTACK);
			stack[sp++] = ip;	/* the "sigreturn" target */
			ip = h;
			continue;
		}
		ATF_REQUIRE_EQ(hwtr_ptenc_at(enc, ip, tsc), 0);
		run_push(r, ip);
		next = ip + p->len[off];
		switch (p->kind[off]) {
		case K_OTHER:
			ip = next;
			break;
		case K_JCC:
		case K_JMP:
		case K_CALL:
			t = next + (uint64_t)(int64_t)(int32_t)(
			    (uint32_t)p->code[off + p->len[off] - 4] |
			    (uint32_t)p->code[off + p->len[off] - 3] << 8 |
			    (uint32_t)p->code[off + p->len[off] - 2] << 16 |
			    (uint32_t)p->code[off + p->len[off] - 1] << 24);
			if (p->kind[off] == K_JCC) {
				int taken = sc->cond(sc, ip);

				ATF_REQUIRE_EQ(hwtr_ptenc_cond(enc, taken), 0);
				ip = taken ? t : next;
			} else if (p->kind[off] == K_CALL) {
				ATF_REQUIRE(sp < SIMSTACK);
				stack[sp++] = next;
				ATF_REQUIRE_EQ(hwtr_ptenc_call(enc, next, t, 0),
				    0);
				ip = t;
			} else
				ip = t;
			break;
		case K_ICALL:
			t = sc->target(sc, ip);
			ATF_REQUIRE(sp < SIMSTACK);
			stack[sp++] = next;
			ATF_REQUIRE_EQ(hwtr_ptenc_call(enc, next, t, 1), 0);
			ip = t;
			break;
		case K_IJMP:
			t = sc->target(sc, ip);
			ATF_REQUIRE_EQ(hwtr_ptenc_indirect(enc, t), 0);
			ip = t;
			break;
		case K_RET:
			ATF_REQUIRE(sp > 0);
			t = stack[--sp];
			if (sc->ret_override != NULL &&
			    (h = sc->ret_override(sc, ip, t)) != 0)
				t = h;
			ATF_REQUIRE_EQ(hwtr_ptenc_ret(enc, t), 0);
			ip = t;
			break;
		case K_FAR:
			t = sc->target(sc, ip);
			ATF_REQUIRE_EQ(hwtr_ptenc_far(enc, t, sc->mode64(sc, t)),
			    0);
			ip = t;
			break;
		case K_SYSCALL:
			ATF_REQUIRE_EQ(hwtr_ptenc_disable(enc, 0, tsc), 0);
			tsc += 10;
			ATF_REQUIRE_EQ(hwtr_ptenc_enable(enc, next, 1, tsc), 0);
			ip = next;
			break;
		default:
			atf_tc_fail("bad kind at %#" PRIx64, ip);
		}
		tsc++;
	}
	ATF_REQUIRE_EQ(hwtr_ptenc_disable(enc, ip, tsc), 0);
	ATF_REQUIRE_EQ(hwtr_ptenc_flush(enc), 0);
	ATF_CHECK_EQ(hwtr_ptenc_bytes(enc), r->sink.len);
	hwtr_ptenc_free(enc);
	r->ninsn = r->n;
}

/* Decode what simulate() encoded and compare with what it executed. */
static void
check_decode(struct prog *p, struct run *r)
{
	struct ptdec_result d;
	size_t i;

	ATF_REQUIRE_EQ(ptdec_run(r->sink.buf, r->sink.len, readmem, p, &d), 0);
	ATF_CHECK_MSG(d.nerrors == 0,
	    "%d decode errors; first: %s at trace offset %#" PRIx64
	    " after %zu instructions", d.nerrors,
	    d.nerrors ? pt_errstr(pt_errcode(d.first_error)) : "",
	    d.first_error_offset, d.first_error_index);
	for (i = 0; i < d.n && i < r->n; i++)
		if (d.ip[i] != r->ip[i])
			break;
	ATF_CHECK_MSG(i == r->n && i == d.n,
	    "decoded flow diverges at instruction %zu: expected %#" PRIx64
	    ", decoded %#" PRIx64 " (%zu executed, %zu decoded)", i,
	    i < r->n ? r->ip[i] : 0, i < d.n ? d.ip[i] : 0, r->n, d.n);
	free(d.ip);
	free(d.mode);
}

static void
run_free(struct run *r)
{
	free(r->ip);
	free(r->sink.buf);
}

static void
prog_init(struct prog *p)
{
	memset(p, 0, sizeof(*p));
	p->base = 0x7f1234560000ull;
}

/* ------------------------------------------------------------------ */
/* Scripts.                                                            */

/* Conditional: taken while counter[0] < counter[1] (a loop), per ip. */
static int
cond_loop(struct script *s, uint64_t ip)
{
	(void)ip;
	return (s->counter[0]++ < s->counter[1]);
}

/* Conditional: not taken counter[1] times, then taken (recursion). */
static int
cond_until(struct script *s, uint64_t ip)
{
	(void)ip;
	return (s->counter[0]++ >= s->counter[1]);
}

static int
cond_pattern(struct script *s, uint64_t ip)
{
	(void)ip;
	s->counter[0]++;
	return ((s->counter[0] * 7919) % 3 == 0);
}

static uint64_t
target_table(struct script *s, uint64_t ip)
{
	(void)ip;
	return (s->addr[s->counter[2]++ % 3]);
}

/* ------------------------------------------------------------------ */

/*
 * A loop of conditional branches, long enough for long TNT packets and,
 * with a small PSB period, many PSB+ in the middle of the flow.
 */
static void
loop_case(uint32_t psb_period, long iters)
{
	struct hwtr_ptenc_opts o = { .psb_period = psb_period };
	struct script sc = { .cond = cond_loop };
	struct prog p;
	struct run r;
	uint64_t entry;

	prog_init(&p);
	entry = a_loop(&p);
	a_nop(&p);
	a_fixed(&p, K_END);
	sc.counter[1] = iters;
	simulate(&p, entry, &sc, &o, &r);
	check_decode(&p, &r);
	if (psb_period <= 64)
		ATF_CHECK_MSG(r.sink.npsb > 10, "expected many PSBs, got %zu",
		    r.sink.npsb);
	run_free(&r);
}

ATF_TC_WITHOUT_HEAD(loop_decodes_exactly);
ATF_TC_BODY(loop_decodes_exactly, tc)
{
	loop_case(4096, 1000);
}

ATF_TC_WITHOUT_HEAD(psb_every_few_bytes_decodes_exactly);
ATF_TC_BODY(psb_every_few_bytes_decodes_exactly, tc)
{
	loop_case(32, 3000);
}

/*
 * Recursion deeper than the 64-entry return stack, direct and indirect
 * calls, a jump table, and a return to somewhere else than the caller.
 */
static void
calls_case(int noretcomp, long depth, uint32_t psb_period)
{
	struct hwtr_ptenc_opts o = { .no_ret_compression = noretcomp,
	    .psb_period = psb_period };
	struct script sc = { .cond = cond_until, .target = target_table };
	struct prog p;
	struct run r;
	uint64_t entry, f, f_base, call_f, c1, t[3], ij, pic;

	prog_init(&p);
	entry = a_mov(&p);
	call_f = a_rel(&p, K_CALL, 0);
	c1 = a_fixed(&p, K_ICALL);	/* call *%rax through the table */
	(void)c1;
	a_fixed(&p, K_ICALL);
	a_fixed(&p, K_ICALL);
	pic = a_rel(&p, K_CALL, 0);	/* call next: the PIC idiom */
	patch_rel(&p, pic, here(&p));
	a_mov(&p);
	a_fixed(&p, K_SYSCALL);
	a_nop(&p);
	a_fixed(&p, K_END);

	/* f: recurse while counter[0] < depth, then return. */
	f = a_mov(&p);
	f_base = a_rel(&p, K_JCC, 0);
	a_rel(&p, K_CALL, f);
	patch_rel(&p, f_base, here(&p));
	a_fixed(&p, K_RET);
	patch_rel(&p, call_f, f);

	/* Three targets of the indirect calls, one jumps through a table. */
	t[0] = a_nop(&p);
	a_fixed(&p, K_RET);
	t[1] = a_mov(&p);
	a_fixed(&p, K_RET);
	t[2] = a_nop(&p);
	ij = a_fixed(&p, K_IJMP);
	(void)ij;
	sc.addr[0] = t[0];
	sc.addr[1] = t[1];
	sc.addr[2] = t[2];
	/* jmp *%rax from t[2] goes to t[0] (its ret returns to the caller). */
	sc.target = target_table;
	sc.counter[1] = depth;
	sc.counter[2] = 0;
	simulate(&p, entry, &sc, &o, &r);
	check_decode(&p, &r);
	run_free(&r);
}

ATF_TC_WITHOUT_HEAD(deep_recursion_ret_compression);
ATF_TC_BODY(deep_recursion_ret_compression, tc)
{
	calls_case(0, 200, 4096);
}

ATF_TC_WITHOUT_HEAD(deep_recursion_no_ret_compression);
ATF_TC_BODY(deep_recursion_no_ret_compression, tc)
{
	calls_case(1, 200, 4096);
}

ATF_TC_WITHOUT_HEAD(calls_with_frequent_psb);
ATF_TC_BODY(calls_with_frequent_psb, tc)
{
	calls_case(0, 150, 48);
}

/* ret_override: every third return "longjmps" to an outer frame's site. */
static uint64_t
ret_elsewhere(struct script *s, uint64_t ip, uint64_t top)
{
	(void)ip;
	(void)top;
	if (s->counter[3]++ == 2)
		return (s->addr[4]);
	return (0);
}

ATF_TC_WITHOUT_HEAD(return_to_unexpected_address);
ATF_TC_BODY(return_to_unexpected_address, tc)
{
	struct hwtr_ptenc_opts o = { 0 };
	struct script sc = { .cond = cond_pattern,
	    .ret_override = ret_elsewhere };
	struct prog p;
	struct run r;
	uint64_t entry, g, h, c;

	prog_init(&p);
	entry = a_mov(&p);
	c = a_rel(&p, K_CALL, 0);
	sc.addr[4] = a_nop(&p);		/* the longjmp lands here */
	a_rel(&p, K_CALL, 0);
	a_nop(&p);
	a_fixed(&p, K_END);
	g = a_nop(&p);
	a_rel(&p, K_CALL, 0);
	a_fixed(&p, K_RET);
	h = a_mov(&p);
	a_fixed(&p, K_RET);
	patch_rel(&p, c, g);
	patch_rel(&p, sc.addr[4] + 1, g);
	patch_rel(&p, g + 1, h);
	simulate(&p, entry, &sc, &o, &r);
	check_decode(&p, &r);
	run_free(&r);
}

/* An interrupt (signal) every few instructions, handled and resumed. */
static uint64_t
interrupt_every(struct script *s, uint64_t ip)
{
	if (ip >= s->addr[5] && ip < s->addr[6])
		return (0);	/* not inside the handler */
	if (++s->counter[4] % 5 == 0)
		return (s->addr[5]);
	return (0);
}

ATF_TC_WITHOUT_HEAD(async_interrupts_decode_exactly);
ATF_TC_BODY(async_interrupts_decode_exactly, tc)
{
	struct hwtr_ptenc_opts o = { .psb_period = 256 };
	struct script sc = { .cond = cond_loop, .interrupt = interrupt_every };
	struct prog p;
	struct run r;
	uint64_t entry;

	prog_init(&p);
	entry = a_loop(&p);
	a_fixed(&p, K_SYSCALL);
	a_fixed(&p, K_END);
	/* The handler ends in a "sigreturn": a ret to the interrupted ip. */
	sc.addr[5] = a_nop(&p);
	a_mov(&p);
	a_fixed(&p, K_RET);
	sc.addr[6] = here(&p);
	sc.counter[1] = 300;
	simulate(&p, entry, &sc, &o, &r);
	check_decode(&p, &r);
	run_free(&r);
}

/* Far jumps into 32-bit code and back: MODE.exec tells the decoder. */
/* 32-bit code, back to 64-bit, 32-bit again, then the end marker. */
static uint64_t
far_targets(struct script *s, uint64_t ip)
{
	static const int order[] = { 0, 1, 0, 3 };

	(void)ip;
	return (s->addr[order[s->counter[2]++ % 4]]);
}

static int
far_mode64(struct script *s, uint64_t target)
{
	return (!(target >= s->addr[6] && target < s->addr[7]));
}

ATF_TC_WITHOUT_HEAD(far_jumps_switch_modes);
ATF_TC_BODY(far_jumps_switch_modes, tc)
{
	struct hwtr_ptenc_opts o = { .psb_period = 96 };
	struct script sc = { .cond = cond_loop, .target = far_targets,
	    .mode64 = far_mode64 };
	struct pt_packet_decoder *pd;
	struct pt_config cfg;
	struct pt_packet pkt;
	struct prog p;
	struct run r;
	struct ptdec_result d;
	uint64_t entry, top, back;
	int modes = 0, bad;
	size_t i;

	prog_init(&p);
	p.base = 0x400000;	/* 32-bit code lives below 4 GiB */
	entry = a_mov(&p);
	back = a_nop(&p);	/* 64-bit: loop, far jump to 32-bit */
	a_mov(&p);
	a_fixed(&p, K_FAR);
	/* 32-bit code: a loop, then back to 64-bit */
	sc.addr[6] = here(&p);
	sc.addr[0] = a_nop(&p);
	top = a_mov(&p);
	a_rel(&p, K_JCC, top);
	a_fixed(&p, K_FAR);
	sc.addr[7] = here(&p);
	sc.addr[1] = back + 1;	/* after the nop: mov, far */
	sc.addr[3] = a_fixed(&p, K_END);	/* 64-bit code */
	sc.counter[1] = 20;
	simulate(&p, entry, &sc, &o, &r);
	check_decode(&p, &r);
	/* Every instruction decoded in the mode it ran in. */
	ATF_REQUIRE_EQ(ptdec_run(r.sink.buf, r.sink.len, readmem, &p, &d), 0);
	for (i = 0, bad = 0; i < d.n; i++) {
		int want = far_mode64(&sc, d.ip[i]) ? ptem_64bit : ptem_32bit;

		if (d.mode[i] != want && bad++ == 0)
			ATF_CHECK_MSG(0, "instruction %zu at %#" PRIx64 ": "
			    "decoded in mode %d, expected %d", i, d.ip[i],
			    d.mode[i], want);
	}
	free(d.ip);
	free(d.mode);
	pt_config_init(&cfg);
	cfg.begin = r.sink.buf;
	cfg.end = r.sink.buf + r.sink.len;
	ATF_REQUIRE((pd = pt_pkt_alloc_decoder(&cfg)) != NULL);
	ATF_REQUIRE_EQ(pt_pkt_sync_set(pd, 0), 0);
	while (pt_pkt_next(pd, &pkt, sizeof(pkt)) >= 0)
		if (pkt.type == ppt_mode &&
		    pt_get_exec_mode(&pkt.payload.mode.bits.exec) == ptem_32bit)
			modes++;
	pt_pkt_free_decoder(pd);
	ATF_CHECK_MSG(modes >= 2, "expected MODE.exec 32-bit packets, got %d",
	    modes);
	run_free(&r);
}

/* Packet-level checks with libipt's packet decoder. */
ATF_TC_WITHOUT_HEAD(psb_plus_contents);
ATF_TC_BODY(psb_plus_contents, tc)
{
	struct hwtr_ptenc_opts o = { .psb_period = 64, .cbr = 30 };
	struct script sc = { .cond = cond_loop };
	struct pt_packet_decoder *pd;
	struct pt_config cfg;
	struct pt_packet pkt;
	struct prog p;
	struct run r;
	uint64_t entry, top, off;
	int rc, n_psb = 0, n_tsc = 0, n_cbr = 0, n_mode = 0, n_pge = 0;
	int in_psb = 0, fup_in_psb = 0, n_long = 0;
	size_t psb_i = 0;

	prog_init(&p);
	entry = a_mov(&p);
	top = a_nop(&p);
	a_rel(&p, K_JCC, top);
	a_fixed(&p, K_END);
	sc.counter[1] = 2000;
	simulate(&p, entry, &sc, &o, &r);

	pt_config_init(&cfg);
	cfg.begin = r.sink.buf;
	cfg.end = r.sink.buf + r.sink.len;
	ATF_REQUIRE((pd = pt_pkt_alloc_decoder(&cfg)) != NULL);
	ATF_REQUIRE_EQ(pt_pkt_sync_set(pd, 0), 0);
	for (;;) {
		ATF_REQUIRE_EQ(pt_pkt_get_offset(pd, &off), 0);
		rc = pt_pkt_next(pd, &pkt, sizeof(pkt));
		if (rc == -pte_eos)
			break;
		ATF_REQUIRE_MSG(rc >= 0, "packet decode error %s at %#" PRIx64,
		    pt_errstr(pt_errcode(rc)), off);
		switch (pkt.type) {
		case ppt_psb:
			n_psb++;
			in_psb = 1;
			ATF_CHECK_MSG(psb_i < r.sink.npsb &&
			    r.sink.psb[psb_i] == off,
			    "PSB at %#" PRIx64 " was not reported", off);
			psb_i++;
			break;
		case ppt_psbend:
			in_psb = 0;
			break;
		case ppt_tsc:
			n_tsc++;
			break;
		case ppt_cbr:
			n_cbr++;
			ATF_CHECK_EQ(pkt.payload.cbr.ratio, 30);
			break;
		case ppt_mode:
			n_mode++;
			break;
		case ppt_fup:
			fup_in_psb += in_psb;
			break;
		case ppt_tip_pge:
			n_pge++;
			break;
		case ppt_tnt_64:
			n_long++;
			break;
		default:
			break;
		}
	}
	pt_pkt_free_decoder(pd);
	ATF_CHECK_MSG(n_psb > 5, "expected PSBs every 64 bytes, got %d", n_psb);
	ATF_CHECK_EQ(n_psb, (int)r.sink.npsb);
	ATF_CHECK_MSG(n_tsc >= n_psb, "%d TSC for %d PSB", n_tsc, n_psb);
	ATF_CHECK_EQ(n_cbr, n_psb);
	ATF_CHECK_MSG(n_mode >= n_psb, "%d MODE for %d PSB", n_mode, n_psb);
	/* The first PSB+ comes before TIP.PGE: tracing is off, no FUP. */
	ATF_CHECK_EQ(fup_in_psb, n_psb - 1);
	ATF_CHECK_EQ(n_pge, 1);
	ATF_CHECK_MSG(n_long > 0, "no long TNT in a 2000-branch loop");
	check_decode(&p, &r);
	run_free(&r);
}

/* Every PSB is a place where decoding can start. */
ATF_TC_WITHOUT_HEAD(decode_from_any_psb);
ATF_TC_BODY(decode_from_any_psb, tc)
{
	struct hwtr_ptenc_opts o = { .psb_period = 128 };
	struct script sc = { .cond = cond_until, .target = target_table };
	struct ptdec_result d;
	struct prog p;
	struct run r;
	uint64_t entry, f, c, tail;
	size_t k, i, j;

	prog_init(&p);
	entry = a_mov(&p);
	c = a_rel(&p, K_CALL, 0);
	a_fixed(&p, K_END);
	/* f: a loop calling itself */
	f = a_nop(&p);
	tail = a_rel(&p, K_JCC, 0);
	a_rel(&p, K_CALL, f);
	patch_rel(&p, tail, here(&p));
	a_fixed(&p, K_RET);
	patch_rel(&p, c, f);
	sc.counter[1] = 500;
	simulate(&p, entry, &sc, &o, &r);
	ATF_REQUIRE(r.sink.npsb > 3);
	for (k = 1; k < r.sink.npsb; k++) {
		size_t off = r.sink.psb[k];

		ATF_REQUIRE_EQ(ptdec_run(r.sink.buf + off, r.sink.len - off,
		    readmem, &p, &d), 0);
		ATF_CHECK_MSG(d.nerrors == 0,
		    "from PSB %zu at %#zx: %d decode errors (%s)", k, off,
		    d.nerrors, pt_errstr(pt_errcode(d.first_error)));
		/* The decoded tail must be a suffix of what ran. */
		ATF_REQUIRE(d.n > 0 && d.n <= r.n);
		j = r.n - d.n;
		for (i = 0; i < d.n; i++)
			if (d.ip[i] != r.ip[j + i])
				break;
		ATF_CHECK_MSG(i == d.n, "from PSB %zu: diverges at %zu", k, i);
		free(d.ip);
		free(d.mode);
	}
	run_free(&r);
}

/* A failing output stops the encoder with -HWTR_E_IO. */
static int
fail_write(void *arg, const void *buf, size_t len)
{
	(void)arg;
	(void)buf;
	(void)len;
	return (-1);
}

ATF_TC_WITHOUT_HEAD(write_error_is_sticky);
ATF_TC_BODY(write_error_is_sticky, tc)
{
	struct hwtr_ptenc_out out = { fail_write, NULL, NULL };
	struct hwtr_ptenc *enc;

	ATF_REQUIRE_EQ(hwtr_ptenc_new(&enc, NULL, &out), 0);
	ATF_CHECK_EQ(hwtr_ptenc_enable(enc, 0x401000, 1, 1), 0);
	ATF_CHECK_EQ(hwtr_ptenc_flush(enc), -HWTR_E_IO);
	ATF_CHECK_EQ(hwtr_ptenc_cond(enc, 1), -HWTR_E_IO);
	ATF_CHECK_EQ(hwtr_ptenc_enable(NULL, 0, 1, 1), -HWTR_E_INVAL);
	hwtr_ptenc_free(enc);
	hwtr_ptenc_free(NULL);
}

/*
 * hwtr_ptenc_tnt() must write exactly the packets of one hwtr_ptenc_cond()
 * per bit (which the cases above check against libipt), whatever the
 * batch sizes, across long-TNT boundaries, returns compressed into TNT
 * and PSB+ in between.
 */
ATF_TC_WITHOUT_HEAD(tnt_batches_same_packets);
ATF_TC_BODY(tnt_batches_same_packets, tc)
{
	struct hwtr_ptenc_opts o = { .psb_period = 256 };
	struct sink s1, s2;
	struct hwtr_ptenc_out out1 = { sink_write, NULL, &s1 };
	struct hwtr_ptenc_out out2 = { sink_write, NULL, &s2 };
	struct hwtr_ptenc *e1, *e2;
	uint64_t x = 88172645463325252ull, bits;
	unsigned n, i, round;
	size_t k;

	memset(&s1, 0, sizeof(s1));
	memset(&s2, 0, sizeof(s2));
	ATF_REQUIRE_EQ(hwtr_ptenc_new(&e1, &o, &out1), 0);
	ATF_REQUIRE_EQ(hwtr_ptenc_new(&e2, &o, &out2), 0);
	ATF_REQUIRE_EQ(hwtr_ptenc_enable(e1, 0x401000, 1, 1), 0);
	ATF_REQUIRE_EQ(hwtr_ptenc_enable(e2, 0x401000, 1, 1), 0);
	for (round = 0; round < 20000; round++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		n = (unsigned)(x % 65);
		bits = x * 0x9e3779b97f4a7c15ull;
		ATF_REQUIRE_EQ(hwtr_ptenc_tnt(e2, bits, n), 0);
		for (i = n; i > 0; i--)
			ATF_REQUIRE_EQ(hwtr_ptenc_cond(e1,
			    (bits >> (i - 1)) & 1), 0);
		if (round % 7 == 0) {
			/* A call and its return: one more TNT bit. */
			ATF_REQUIRE_EQ(hwtr_ptenc_call(e1, 0x401005, 0x402000,
			    0), 0);
			ATF_REQUIRE_EQ(hwtr_ptenc_call(e2, 0x401005, 0x402000,
			    0), 0);
			ATF_REQUIRE_EQ(hwtr_ptenc_ret(e1, 0x401005), 0);
			ATF_REQUIRE_EQ(hwtr_ptenc_ret(e2, 0x401005), 0);
		}
		if (round % 11 == 0) {
			ATF_REQUIRE_EQ(hwtr_ptenc_indirect(e1, 0x401000 +
			    round), 0);
			ATF_REQUIRE_EQ(hwtr_ptenc_indirect(e2, 0x401000 +
			    round), 0);
		}
		ATF_REQUIRE_EQ(hwtr_ptenc_at(e1, 0x401000, round), 0);
		ATF_REQUIRE_EQ(hwtr_ptenc_at(e2, 0x401000, round), 0);
	}
	ATF_REQUIRE_EQ(hwtr_ptenc_flush(e1), 0);
	ATF_REQUIRE_EQ(hwtr_ptenc_flush(e2), 0);
	ATF_CHECK_EQ(hwtr_ptenc_tnt(e2, 0, 65), -HWTR_E_INVAL);
	ATF_REQUIRE_MSG(s1.len > 100000, "expected a long stream, got %zu "
	    "bytes", s1.len);
	for (k = 0; k < s1.len && k < s2.len; k++)
		if (s1.buf[k] != s2.buf[k])
			break;
	ATF_CHECK_MSG(k == s1.len && k == s2.len, "batched TNT differs at "
	    "byte %zu: %zu bytes bit by bit, %zu batched", k, s1.len, s2.len);
	hwtr_ptenc_free(e1);
	hwtr_ptenc_free(e2);
	free(s1.buf);
	free(s2.buf);
}

/*
 * The encoder writes TNT packets itself, not through libipt's
 * pt_enc_next(): each of 1 to 47 bits, in several patterns, must come out
 * as the bytes libipt's packet encoder makes of the same packet, and a
 * packet libipt writes after them (a TIP) where it belongs.
 */
ATF_TC_WITHOUT_HEAD(tnt_packets_as_libipt);
ATF_TC_BODY(tnt_packets_as_libipt, tc)
{
	static const uint64_t pat[] = { 0, ~0ull, 0x5555555555555555ull,
	    0x123456789abcdef1ull, 1 };
	struct hwtr_ptenc_opts o = { .no_tsc = 1 };
	struct hwtr_ptenc_out out;
	struct hwtr_ptenc *e;
	struct pt_encoder *pe;
	struct pt_config cfg;
	struct pt_packet pkt;
	struct sink s;
	uint8_t ref[64];
	uint64_t bits;
	unsigned n, k;
	size_t before;
	int len;

	for (n = 1; n <= 47; n++) {
		for (k = 0; k < sizeof(pat) / sizeof(pat[0]); k++) {
			bits = pat[k] & ((1ull << n) - 1);
			memset(&s, 0, sizeof(s));
			out.write = sink_write;
			out.psb = NULL;
			out.arg = &s;
			ATF_REQUIRE_EQ(hwtr_ptenc_new(&e, &o, &out), 0);
			ATF_REQUIRE_EQ(hwtr_ptenc_enable(e, 0x401000, 1, 1),
			    0);
			ATF_REQUIRE_EQ(hwtr_ptenc_flush(e), 0);
			before = s.len;
			ATF_REQUIRE_EQ(hwtr_ptenc_tnt(e, bits, n), 0);
			ATF_REQUIRE_EQ(hwtr_ptenc_indirect(e, 0x402345), 0);
			ATF_REQUIRE_EQ(hwtr_ptenc_flush(e), 0);

			/* libipt's bytes: the TNT packet, then the TIP. */
			memset(&cfg, 0, sizeof(cfg));
			cfg.size = sizeof(cfg);
			cfg.begin = ref;
			cfg.end = ref + sizeof(ref);
			ATF_REQUIRE((pe = pt_alloc_encoder(&cfg)) != NULL);
			memset(&pkt, 0, sizeof(pkt));
			pkt.type = n <= 6 ? ppt_tnt_8 : ppt_tnt_64;
			pkt.payload.tnt.bit_size = (uint8_t)n;
			pkt.payload.tnt.payload = bits;
			len = pt_enc_next(pe, &pkt);
			ATF_REQUIRE_MSG(len > 0, "libipt refused %u bits: %d",
			    n, len);
			ATF_REQUIRE_MSG(s.len - before > (size_t)len &&
			    memcmp(s.buf + before, ref, (size_t)len) == 0,
			    "%u bits %#jx: %zu bytes, libipt's TNT has %d, "
			    "first byte %#x against %#x", n, (uintmax_t)bits,
			    s.len - before, len, s.buf[before], ref[0]);
			/* The TIP after it: libipt's offset was moved on. */
			ATF_CHECK_MSG((s.buf[before + len] & 0x1f) == 0x0d,
			    "%u bits: %#x after the TNT, not a TIP", n,
			    s.buf[before + len]);
			pt_free_encoder(pe);
			hwtr_ptenc_free(e);
			free(s.buf);
		}
	}
}

/*
 * hwtr_ptenc_tnt_room(): while no more TNT bits than it said came since,
 * hwtr_ptenc_at() writes nothing; the reference is what hwtr_ptenc_at()
 * itself does (bytes before and after it).  It must also say something
 * useful: most checks between two PSBs fall within it.
 */
ATF_TC_WITHOUT_HEAD(tnt_room_holds_off_psb);
ATF_TC_BODY(tnt_room_holds_off_psb, tc)
{
	struct hwtr_ptenc_opts o = { .psb_period = 512 };
	struct sink s;
	struct hwtr_ptenc_out out = { sink_write, NULL, &s };
	struct hwtr_ptenc *e;
	uint64_t x = 88172645463325252ull, before;
	unsigned n, round, within = 0, psbs = 0;
	long room, since = 0;

	memset(&s, 0, sizeof(s));
	ATF_REQUIRE_EQ(hwtr_ptenc_new(&e, &o, &out), 0);
	ATF_REQUIRE_EQ(hwtr_ptenc_tnt_room(e), -1);
	ATF_REQUIRE_EQ(hwtr_ptenc_enable(e, 0x401000, 1, 1), 0);
	room = hwtr_ptenc_tnt_room(e);
	for (round = 0; round < 200000; round++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		n = (unsigned)(x % 41);
		ATF_REQUIRE_EQ(hwtr_ptenc_tnt(e, x * 0x9e3779b97f4a7c15ull,
		    n), 0);
		since += n;
		before = hwtr_ptenc_bytes(e);
		ATF_REQUIRE_EQ(hwtr_ptenc_at(e, 0x401000 + round, round), 0);
		if (hwtr_ptenc_bytes(e) != before) {
			ATF_REQUIRE_MSG(since > room, "round %u: a PSB+ after "
			    "%ld bits, within the room of %ld", round, since,
			    room);
			psbs++;
		} else if (since <= room)
			within++;
		if (since > room || hwtr_ptenc_bytes(e) != before) {
			room = hwtr_ptenc_tnt_room(e);
			since = 0;
		}
		if (round % 997 == 0) {
			/* Other packets: the room is taken again after. */
			ATF_REQUIRE_EQ(hwtr_ptenc_indirect(e, 0x402000), 0);
			room = hwtr_ptenc_tnt_room(e);
			since = 0;
		}
	}
	ATF_CHECK_MSG(psbs > 1000, "expected PSBs every 512 bytes, got %u",
	    psbs);
	ATF_CHECK_MSG(within > round / 2, "the room covered %u of %u checks",
	    within, round);
	hwtr_ptenc_want_psb(e);
	ATF_CHECK_EQ(hwtr_ptenc_tnt_room(e), -1);
	hwtr_ptenc_free(e);
	free(s.buf);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, tnt_room_holds_off_psb);
	ATF_TP_ADD_TC(tp, tnt_batches_same_packets);
	ATF_TP_ADD_TC(tp, tnt_packets_as_libipt);
	ATF_TP_ADD_TC(tp, loop_decodes_exactly);
	ATF_TP_ADD_TC(tp, psb_every_few_bytes_decodes_exactly);
	ATF_TP_ADD_TC(tp, deep_recursion_ret_compression);
	ATF_TP_ADD_TC(tp, deep_recursion_no_ret_compression);
	ATF_TP_ADD_TC(tp, calls_with_frequent_psb);
	ATF_TP_ADD_TC(tp, return_to_unexpected_address);
	ATF_TP_ADD_TC(tp, async_interrupts_decode_exactly);
	ATF_TP_ADD_TC(tp, psb_plus_contents);
	ATF_TP_ADD_TC(tp, decode_from_any_psb);
	ATF_TP_ADD_TC(tp, write_error_is_sticky);
	ATF_TP_ADD_TC(tp, far_jumps_switch_modes);
	return (atf_no_error());
}
