/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The perf source's recording (perf_int.h lists the source's files): a
 * perf.data file in perf's pipe format, which the perf.data importer
 * turns into the archive.  Its first records (HEADER_ATTR, the CPUID
 * feature, AUXTRACE_INFO, TIME_CONV), the primitives perf_read.c writes
 * the kernel's records and the AUX data with, and at the end a
 * HEADER_BUILD_ID record per image mapped.
 */

#include <sys/mman.h>

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hwtr_common.h"
#include "perf_bid.h"
#include "perf_int.h"
#include "perf_record.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#define FEAT_CPUID	9		/* perf's HEADER_CPUID feature bit */

#ifdef __linux__

void
perf_rec_put(struct perf_src *ps, const void *buf, size_t len)
{
	if (ps->rec == NULL || ps->rec_err != 0)
		return;
	if (len > 0 && fwrite(buf, 1, len, ps->rec) != len)
		ps->rec_err = errno != 0 ? errno : EIO;
}

/* A record header: @type, @misc, @size (the header included). */
void
perf_rec_hdr(struct perf_src *ps, uint32_t type, uint16_t misc, size_t size)
{
	uint8_t h[8];
	uint16_t sz = (uint16_t)size;

	memcpy(h, &type, 4);
	memcpy(h + 4, &misc, 2);
	memcpy(h + 6, &sz, 2);
	perf_rec_put(ps, h, sizeof(h));
}

void
perf_rec_u64(struct perf_src *ps, uint64_t v)
{
	perf_rec_put(ps, &v, 8);
}

/* A HEADER_FEATURE record holding one perf_header_string. */
static void
rec_feature_str(struct perf_src *ps, uint64_t feat, const char *s)
{
	static const uint8_t zero[8];
	uint32_t n = (uint32_t)strlen(s) + 1;
	uint32_t padded = (n + 7) & ~7u;

	perf_rec_hdr(ps, HWTR_PERF_HEADER_FEATURE, 0, 8 + 8 + 4 + padded);
	perf_rec_u64(ps, feat);
	perf_rec_put(ps, &padded, 4);
	perf_rec_put(ps, s, n);
	perf_rec_put(ps, zero, padded - n);
}

/* "GenuineIntel,6,142,10", as perf's HEADER_CPUID on x86. */
static int
cpuid_string(char *buf, size_t len)
{
	unsigned fam, model, step;
	char vendor[13];

	if (hwtr_cpu_host_id(vendor, &fam, &model, &step) < 0)
		return (-1);
	snprintf(buf, len, "%s,%u,%u,%u", vendor, fam, model, step);
	return (0);
}

/* CPUID leaf 0x15: the TSC:crystal (CTC) ratio; 0s when unknown. */
static void
tsc_ctc(uint32_t *num, uint32_t *den)
{
	*num = *den = 0;
#if defined(__x86_64__) || defined(__i386__)
	{
		unsigned a, b, c, d;

		if (__get_cpuid_max(0, NULL) >= 0x15) {
			__cpuid_count(0x15, 0, a, b, c, d);
			*den = a;
			*num = b;
		}
	}
#endif
}


/* The first lines of the recording, once the events are open. */
void
perf_rec_start(struct perf_src *ps)
{
	static const char magic[8] = { 'P', 'E', 'R', 'F', 'I', 'L', 'E', '2' };
	uint64_t priv[PT_PRIV_MAX + PERF_FILTER_MAX / 8 + 1];
	uint32_t num, den, type = 1;	/* PERF_AUXTRACE_INTEL_PT */
	size_t i, n, flen;
	char cpuid[128];

	perf_rec_put(ps, magic, sizeof(magic));
	perf_rec_u64(ps, 16);
	/* HEADER_ATTR: the attr, then the ids of its events. */
	perf_rec_hdr(ps, HWTR_PERF_HEADER_ATTR, 0, 8 + ps->attr.size +
	    8 * ps->nev);
	perf_rec_put(ps, &ps->attr, ps->attr.size);
	for (i = 0; i < ps->nev; i++)
		perf_rec_u64(ps, ps->ev[i].id);
	if (cpuid_string(cpuid, sizeof(cpuid)) == 0)
		rec_feature_str(ps, FEAT_CPUID, cpuid);
	/* AUXTRACE_INFO: what the decoder needs to know. */
	memset(priv, 0, sizeof(priv));
	priv[PT_PMU_TYPE] = (uint64_t)ps->pmu.type;
	priv[PT_TIME_SHIFT] = ps->time_shift;
	priv[PT_TIME_MULT] = ps->time_mult;
	priv[PT_TIME_ZERO] = ps->time_zero;
	priv[PT_CAP_USER_TIME_ZERO] = (uint64_t)ps->cap_time_zero;
	priv[PT_TSC_BIT] = perf_fmt_mask(&ps->pmu, "tsc", NULL);
	priv[PT_NORETCOMP_BIT] = perf_fmt_mask(&ps->pmu, "noretcomp", NULL);
	priv[PT_HAVE_SCHED_SWITCH] = 2;		/* context_switch records */
	priv[PT_SNAPSHOT_MODE] = (uint64_t)ps->ring;
	priv[PT_PER_CPU_MMAPS] = 1;
	priv[PT_MTC_BIT] = perf_fmt_mask(&ps->pmu, "mtc", NULL);
	priv[PT_MTC_FREQ_BITS] = perf_fmt_mask(&ps->pmu, "mtc_period", NULL);
	tsc_ctc(&num, &den);
	priv[PT_TSC_CTC_N] = num;
	priv[PT_TSC_CTC_D] = den;
	priv[PT_CYC_BIT] = perf_fmt_mask(&ps->pmu, "cyc", NULL);
	priv[PT_MAX_NONTURBO_RATIO] = (uint64_t)ps->pmu.caps.max_nonturbo_ratio;
	flen = strlen(ps->filter);
	priv[PT_FILTER_STR_LEN] = flen;
	n = PT_PRIV_MAX;
	if (flen > 0) {
		memcpy(priv + PT_PRIV_MAX, ps->filter, flen);
		n += (flen + 8) / 8;
	}
	if (ps->cs) {
		/* CoreSight: the header, then each CPU's ETM. */
		type = 3;	/* PERF_AUXTRACE_CS_ETM */
		for (i = 0, n = 3; i < ps->ncpu; i++)
			n += 3 + ps->etm[i][2];
		priv[0] = 2;
		priv[1] = (uint64_t)ps->pmu.type << 32 | ps->ncpu;
		priv[2] = (uint64_t)ps->ring;
		perf_rec_hdr(ps, HWTR_PERF_AUXTRACE_INFO, 0, 16 + 8 * n);
		perf_rec_put(ps, &type, 4);
		perf_rec_put(ps, "\0\0\0\0", 4);
		perf_rec_put(ps, priv, 8 * 3);
		for (i = 0; i < ps->ncpu; i++)
			perf_rec_put(ps, ps->etm[i], 8 * (3 + ps->etm[i][2]));
	} else {
		perf_rec_hdr(ps, HWTR_PERF_AUXTRACE_INFO, 0, 16 + 8 * n);
		perf_rec_put(ps, &type, 4);
		perf_rec_put(ps, "\0\0\0\0", 4);
		perf_rec_put(ps, priv, 8 * n);
	}
	/* TIME_CONV, as perf writes it for the non-Intel PT readers. */
	perf_rec_hdr(ps, HWTR_PERF_TIME_CONV, 0, 32);
	perf_rec_u64(ps, ps->time_shift);
	perf_rec_u64(ps, ps->time_mult);
	perf_rec_u64(ps, ps->time_zero);
}

/* Keep the executable file mappings' paths (for their build-ids). */
void
perf_note_path(struct perf_src *ps, uint32_t type, uint16_t misc,
    const uint8_t *body, size_t len)
{
	struct hwtr_perf_rec r;
	struct perf_path *np;
	uint8_t *whole;
	size_t i;

	if ((whole = malloc(len + 8)) == NULL)
		return;
	memcpy(whole, &type, 4);
	memcpy(whole + 4, &misc, 2);
	whole[6] = (uint8_t)((len + 8) & 0xff);
	whole[7] = (uint8_t)((len + 8) >> 8);
	memcpy(whole + 8, body, len);
	if (hwtr_perf_rec_parse(whole, len + 8, NULL, &r, NULL, 0) < 0 ||
	    r.u.mmap.filename[0] != '/' ||
	    (type == HWTR_PERF_MMAP2 && !(r.u.mmap.prot & PROT_EXEC))) {
		free(whole);
		return;
	}
	for (i = 0; i < ps->npaths; i++)
		if (strcmp(ps->paths[i].path, r.u.mmap.filename) == 0) {
			free(whole);
			return;
		}
	if (ps->npaths == ps->pathcap) {
		size_t nc = ps->pathcap ? ps->pathcap * 2 : 16;

		if ((np = realloc(ps->paths, nc * sizeof(*np))) == NULL) {
			free(whole);
			return;
		}
		ps->paths = np;
		ps->pathcap = nc;
	}
	if ((ps->paths[ps->npaths].path = strdup(r.u.mmap.filename)) != NULL) {
		ps->paths[ps->npaths].pid = (int32_t)r.u.mmap.pid;
		ps->npaths++;
	}
	free(whole);
}


/* The build-id of every image mapped, as perf's HEADER_BUILD_ID. */
void
perf_rec_build_ids(struct perf_src *ps)
{
	uint8_t rec[HWTR_PERF_BID_REC_MAX];
	size_t i, n;

	for (i = 0; i < ps->npaths; i++) {
		n = hwtr_perf_build_id_rec(ps->paths[i].path, ps->paths[i].pid,
		    0, rec, sizeof(rec));
		perf_rec_put(ps, rec, n);
	}
}

#endif /* __linux__ */

/*
 * The HEADER_BUILD_ID record of the image at @path mapped by @pid
 * (@kernel: a kernel image), built into @out (@cap bytes): its size, or 0
 * when the image cannot be read, has no build-id perf can carry (at most
 * 20 bytes) or the record would not fit.
 */
size_t
hwtr_perf_build_id_rec(const char *path, int32_t pid, int kernel,
    uint8_t *out, size_t cap)
{
	uint8_t id[HWTR_BUILD_ID_MAX], bid[24];
	uint32_t type = HWTR_PERF_HEADER_BUILD_ID;
	uint16_t misc, size;
	size_t idlen, n, pad;
	int fd, rc;

	assert(path != NULL && out != NULL);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return (0);
	idlen = 0;
	rc = hwtr_elf_build_id_fd(fd, id, &idlen);
	close(fd);
	if (rc < 0 || idlen == 0 || idlen > 20)
		return (0);
	n = strlen(path) + 1;
	pad = (n + 7) & ~(size_t)7;
	if (36 + pad > 65528 || 36 + pad > cap)
		return (0);
	memset(bid, 0, sizeof(bid));
	memcpy(bid, id, idlen);
	bid[20] = (uint8_t)idlen;
	/* MISC_BUILD_ID_SIZE | MISC_KERNEL or MISC_USER */
	misc = (uint16_t)(0x8000 | (kernel ? 1 : 2));
	size = (uint16_t)(36 + pad);
	memcpy(out, &type, 4);
	memcpy(out + 4, &misc, 2);
	memcpy(out + 6, &size, 2);
	memcpy(out + 8, &pid, 4);
	memcpy(out + 12, bid, sizeof(bid));
	memset(out + 36, 0, pad);
	memcpy(out + 36, path, n);
	return (36 + pad);
}
