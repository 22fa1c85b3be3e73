/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * A known capture for the format tests: every field of the meta, streams
 * of each configuration kind, images, every sideband record type, aux and
 * end, written through the public writer; and the checks that compare a
 * reader's view with it field by field.
 */

#ifndef FIXTURE_H
#define FIXTURE_H

#include <atf-c.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hwtrace.h"

static const char *const fx_argv[] = { "/bin/prog", "--flag", "a b" };
static const char *const fx_caveats[] = { "threads serialized" };

static void
fx_meta(struct hwtr_capture_meta *m)
{
	memset(m, 0, sizeof(*m));
	m->host = "testhost";
	m->source = "step";
	m->source_version = "1.2";
	m->sideband_origin = "proc";
	m->caveats = fx_caveats;
	m->ncaveats = 1;
	m->cpu.vendor = HWTR_CPU_INTEL;
	m->cpu.family = 6;
	m->cpu.model = 0x55;
	m->cpu.stepping = 4;
	strcpy(m->cpu.brand, "Test CPU @ 2.0GHz");
	m->argv = fx_argv;
	m->argc = 3;
	m->start_ns = 1700000000123456789LL;
	m->tconv.valid = 1;
	m->tconv.tsc_zero = 0xfedcba9876543210ULL;
	m->tconv.ns_zero = 1700000000000000000LL;
	m->tconv.mult = 0x80000000u;
	m->tconv.shift = 32;
}

static const struct hwtr_reg fx_regs[] = {
	{ "TRCCONFIGR", 0x000000c1 }, { "TRCTRACEIDR", 0x10 },
	{ "TRCIDR0", 0xffffffff28000ea1ULL }
};

static void
fx_streams(struct hwtr_stream_desc *pt, struct hwtr_stream_desc *cs,
    struct hwtr_cs_source *src)
{
	memset(pt, 0, sizeof(*pt));
	pt->format = HWTR_TF_INTEL_PT;
	pt->pid = 100;
	pt->tid = 101;
	pt->cpu = -1;
	pt->name = NULL;	/* the writer names it "tid 101" */
	pt->pt.cpuid_15_eax = 2;
	pt->pt.cpuid_15_ebx = 200;
	pt->pt.nom_freq = 24;
	pt->pt.mtc_freq = 3;
	pt->pt.cyc_thresh = 1;
	pt->pt.psb_freq = 2;
	pt->pt.options = HWTR_PT_OPT_TSC | HWTR_PT_OPT_MTC | HWTR_PT_OPT_USER |
	    HWTR_PT_OPT_BRANCH;
	pt->pt.nfilters = 2;
	pt->pt.filter[0].cfg = 1;
	pt->pt.filter[0].a = 0x400000;
	pt->pt.filter[0].b = 0x401000;
	pt->pt.filter[1].cfg = 2;
	pt->pt.filter[1].a = 0xffffffff81000000ULL;
	pt->pt.filter[1].b = 0xffffffffffffffffULL;

	memset(src, 0, sizeof(*src));
	src->protocol = HWTR_TF_ETMV4;
	src->trace_id = 0x10;
	src->core = "Cortex-A57";
	src->regs = fx_regs;
	src->nregs = 3;
	memset(cs, 0, sizeof(*cs));
	cs->format = HWTR_TF_CORESIGHT;
	cs->pid = -1;
	cs->tid = -1;
	cs->cpu = 2;
	cs->name = "etb 0";
	cs->cs.frame = HWTR_CS_FRAME_CORESIGHT;
	cs->cs.sources = src;
	cs->cs.nsources = 1;
}

/* Deterministic, mildly compressible bytes like a trace. */
static void
fx_fill(uint8_t *p, size_t n, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 1;
	size_t i;

	for (i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		p[i] = (uint8_t)((x >> 16) & 0x1f) | (i % 7 == 0 ? 0x80 : 0);
	}
}

/* One record of every type; the mmap one names image @key. */
static size_t
fx_records(struct hwtr_sb_rec *r, const char *key)
{
	size_t n = 0;

	memset(r, 0, 12 * sizeof(*r));
	r[n].type = HWTR_SB_PROC_START; r[n].time = 10; r[n].pid = 100;
	r[n].tid = 100; r[n].u.proc_start.ppid = 1; n++;
	r[n].type = HWTR_SB_THREAD_START; r[n].time = 11; r[n].pid = 100;
	r[n].tid = 101; r[n].u.thread_start.ptid = 100; n++;
	r[n].type = HWTR_SB_EXEC; r[n].time = 12; r[n].pid = 100;
	r[n].tid = 100; r[n].u.exec.path = "/bin/prog"; n++;
	r[n].type = HWTR_SB_COMM; r[n].time = 13; r[n].pid = 100;
	r[n].tid = 101; r[n].u.comm.comm = "worker"; r[n].u.comm.exec = 1; n++;
	r[n].type = HWTR_SB_MMAP; r[n].time = 14; r[n].pid = -1; r[n].tid = -1;
	r[n].u.mmap.addr = 0x7f0000001000ULL; r[n].u.mmap.len = 0x2000;
	r[n].u.mmap.pgoff = 0x1000; r[n].u.mmap.prot = 5;
	r[n].u.mmap.flags = 2; r[n].u.mmap.path = "/lib/libx.so";
	r[n].u.mmap.image = key; r[n].u.mmap.build_id_len = 3;
	r[n].u.mmap.build_id[0] = 0xab; r[n].u.mmap.build_id[1] = 0xcd;
	r[n].u.mmap.build_id[2] = 0xef; n++;
	r[n].type = HWTR_SB_MUNMAP; r[n].time = 15; r[n].pid = 100;
	r[n].tid = 100; r[n].u.munmap.addr = 0x7f0000001000ULL;
	r[n].u.munmap.len = 0x1000; n++;
	r[n].type = HWTR_SB_SWITCH; r[n].time = 16; r[n].pid = 100;
	r[n].tid = 101; r[n].u.sw.cpu = 3; r[n].u.sw.out = 1;
	r[n].u.sw.preempt = 1; n++;
	r[n].type = HWTR_SB_LOST; r[n].time = 17; r[n].pid = 100;
	r[n].tid = 101; r[n].u.lost.stream = 0;
	r[n].u.lost.reason = HWTR_LOST_WRAP; r[n].u.lost.bytes = 4096;
	r[n].u.lost.records = 7; n++;
	r[n].type = HWTR_SB_BUFPOS; r[n].time = 0xffffffffffffff00ULL;
	r[n].pid = 100; r[n].tid = 101; r[n].u.bufpos.stream = 1;
	r[n].u.bufpos.offset = 0x123456789aULL; n++;
	r[n].type = HWTR_SB_THREAD_EXIT; r[n].time = 18; r[n].pid = 100;
	r[n].tid = 101; r[n].u.exit.kind = HWTR_EXIT_CODE;
	r[n].u.exit.value = 0; n++;
	r[n].type = HWTR_SB_PROC_EXIT; r[n].time = 19; r[n].pid = 100;
	r[n].tid = 100; r[n].u.exit.kind = HWTR_EXIT_SIGNAL;
	r[n].u.exit.value = 9; n++;
	return (n);
}

static void
fx_check_rec(const struct hwtr_sb_rec *a, const struct hwtr_sb_rec *b,
    size_t i)
{
#define RQ(f) ATF_CHECK_MSG(a->f == b->f, "record %zu (%s): " #f \
	" expected 0x%jx, got 0x%jx", i, hwtr_sb_type_name(a->type), \
	(uintmax_t)a->f, (uintmax_t)b->f)
#define RS(f) ATF_CHECK_MSG((a->f == NULL && b->f == NULL) || \
	(a->f != NULL && b->f != NULL && strcmp(a->f, b->f) == 0), \
	"record %zu: " #f " expected '%s', got '%s'", i, \
	a->f ? a->f : "(null)", b->f ? b->f : "(null)")
	RQ(type); RQ(time); RQ(pid); RQ(tid);
	switch (a->type) {
	case HWTR_SB_PROC_START: RQ(u.proc_start.ppid); break;
	case HWTR_SB_THREAD_START: RQ(u.thread_start.ptid); break;
	case HWTR_SB_PROC_EXIT:
	case HWTR_SB_THREAD_EXIT: RQ(u.exit.kind); RQ(u.exit.value); break;
	case HWTR_SB_EXEC: RS(u.exec.path); break;
	case HWTR_SB_COMM: RS(u.comm.comm); RQ(u.comm.exec); break;
	case HWTR_SB_MMAP:
		RQ(u.mmap.addr); RQ(u.mmap.len); RQ(u.mmap.pgoff);
		RQ(u.mmap.prot); RQ(u.mmap.flags); RS(u.mmap.path);
		RS(u.mmap.image); RQ(u.mmap.build_id_len);
		ATF_CHECK(memcmp(a->u.mmap.build_id, b->u.mmap.build_id,
		    a->u.mmap.build_id_len) == 0);
		break;
	case HWTR_SB_MUNMAP: RQ(u.munmap.addr); RQ(u.munmap.len); break;
	case HWTR_SB_SWITCH: RQ(u.sw.cpu); RQ(u.sw.out); RQ(u.sw.preempt);
		break;
	case HWTR_SB_LOST: RQ(u.lost.stream); RQ(u.lost.reason);
		RQ(u.lost.bytes); RQ(u.lost.records); break;
	case HWTR_SB_BUFPOS: RQ(u.bufpos.stream); RQ(u.bufpos.offset); break;
	default: ATF_CHECK_MSG(0, "record %zu: type %d", i, (int)a->type);
	}
#undef RQ
#undef RS
}

#endif /* !FIXTURE_H */
