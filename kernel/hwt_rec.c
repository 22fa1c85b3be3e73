/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The hwt source's recording (hwt_int.h lists the source's files): a
 * perf.data file in perf's pipe format, written on any system, which the
 * perf.data importer turns into the archive exactly as it does the perf
 * source's.  hwt(4)'s records become perf's: EXECUTABLE a COMM (exec)
 * and an MMAP2 per executable segment of the image and its interpreter,
 * MMAP an MMAP2 per segment, KERNEL an MMAP2 of pid -1 (kernel mode),
 * THREAD_CREATE a FORK; the buffers' bytes AUXTRACE records at their
 * stream positions (a jump is loss, which the importer states), each
 * followed by an AUX record (flagged TRUNCATED when bytes were lost: the
 * archive's overflow record).  Every record carries pid, tid, time
 * (CLOCK_MONOTONIC ns) and CPU.  The attr and AUXTRACE_INFO describe
 * Intel PT as the FreeBSD backend configures it: IA32_RTIT_CTL is perf's
 * intel_pt config word bit for bit, and the backend never sets TSCEN.
 * With the coresight backend AUXTRACE_INFO is cs_etm's: each ETM's ID
 * registers (read by sysctl, hwt.c) and trace ID, so that the importer
 * describes the formatted frames' sources as it does for perf's.
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
#include "hwtr_elf.h"
#include "perf_bid.h"
#include "perf_record.h"
#include "hwt_int.h"

#define REC_PMU_TYPE	0x48575400u	/* "HWT": the attr's made-up type */
#define REC_ATTR_SIZE	72		/* PERF_ATTR_SIZE_VER1 */
#define REC_SAMPLE	(HWTR_PERF_SAMPLE_TID | HWTR_PERF_SAMPLE_TIME | \
	HWTR_PERF_SAMPLE_CPU)
#define REC_MAX_IMAGE	(1ULL << 31)

static void
put(struct hwt_src *hs, const void *buf, size_t len)
{
	if (hs->rec == NULL || hs->rec_err != 0)
		return;
	if (len > 0 && fwrite(buf, 1, len, hs->rec) != len)
		hs->rec_err = errno != 0 ? errno : EIO;
}

static void
put64(struct hwt_src *hs, uint64_t v)
{
	put(hs, &v, 8);
}

static void
put32(struct hwt_src *hs, uint32_t v)
{
	put(hs, &v, 4);
}

static void
hdr(struct hwt_src *hs, uint32_t type, uint16_t misc, size_t size)
{
	uint16_t sz = (uint16_t)size;

	assert(size >= 8 && size < 65536);
	put32(hs, type);
	put(hs, &misc, 2);
	put(hs, &sz, 2);
}

/* A string padded with NULs to a multiple of 8 (at least one NUL). */
static size_t
padded(const char *s)
{
	return ((strlen(s) + 8) & ~(size_t)7);
}

static void
put_str(struct hwt_src *hs, const char *s)
{
	static const char zero[8];
	size_t n = strlen(s);

	put(hs, s, n);
	put(hs, zero, padded(s) - n);
}

/* The sample_id every kernel record ends with: TID, TIME, CPU. */
static void
sample_id(struct hwt_src *hs, int32_t pid, int32_t tid, int cpu)
{
	put32(hs, (uint32_t)pid);
	put32(hs, (uint32_t)tid);
	put64(hs, 0);	/* hwt(4) records carry no time */
	put32(hs, (uint32_t)cpu);
	put32(hs, 0);
}

int
hwt_rec_open(struct hwt_src *hs)
{
	const char *tmp;
	int fd;

	if ((tmp = getenv("TMPDIR")) == NULL || *tmp == '\0')
		tmp = "/tmp";
	snprintf(hs->rec_path, sizeof(hs->rec_path), "%s/hwtrace-hwt-XXXXXX",
	    tmp);
	if ((fd = mkstemp(hs->rec_path)) < 0) {
		hwt_err(hs, "cannot create the recording '%s': %s",
		    hs->rec_path, strerror(errno));
		hs->rec_path[0] = '\0';
		return (-HWTR_E_IO);
	}
	if ((hs->rec = fdopen(fd, "w")) == NULL) {
		close(fd);
		return (-HWTR_E_NOMEM);
	}
	return (0);
}

/*
 * CoreSight's AUXTRACE_INFO as perf's cs_etm writes it (header version
 * 1): version, CPU count and PMU type, snapshot mode, then per ETM its
 * magic, CPU, parameter count and the seven ETMv4 parameters:
 * TRCCONFIGR, TRCTRACEIDR, TRCIDR0, 1, 2, 8 and TRCAUTHSTATUS.
 */
static void
cs_info(struct hwt_src *hs)
{
	const struct hwt_etm *e;
	int i;

	assert(hs->netm > 0);
	hdr(hs, HWTR_PERF_AUXTRACE_INFO, 0, 16 + 8 * (3 + 10 *
	    (size_t)hs->netm));
	put32(hs, 3);			/* PERF_AUXTRACE_CS_ETM */
	put32(hs, 0);
	put64(hs, 1);			/* CS_HEADER_VERSION_1 */
	put64(hs, ((uint64_t)REC_PMU_TYPE << 32) | (uint64_t)hs->netm);
	put64(hs, 0);			/* not snapshot mode */
	for (i = 0; i < hs->netm; i++) {
		e = &hs->etm[i];
		put64(hs, CS_MAGIC_ETMV4);
		put64(hs, (uint64_t)e->cpu);
		put64(hs, 7);
		put64(hs, HWT_CS_TRCCONFIGR);
		put64(hs, e->trace_id);
		put64(hs, e->idr[0]);
		put64(hs, e->idr[1]);
		put64(hs, e->idr[2]);
		put64(hs, e->idr[8]);
		put64(hs, 0);		/* TRCAUTHSTATUS: not read */
	}
}

/* The first records: the attr, AUXTRACE_INFO, TIME_CONV. */
void
hwt_rec_start(struct hwt_src *hs)
{
	static const char magic[8] = { 'P', 'E', 'R', 'F', 'I', 'L', 'E', '2' };
	uint8_t attr[REC_ATTR_SIZE];
	uint64_t priv[PT_PRIV_MAX], v;
	uint32_t u;

	put(hs, magic, sizeof(magic));
	put64(hs, 16);
	memset(attr, 0, sizeof(attr));
	u = REC_PMU_TYPE;
	memcpy(attr, &u, 4);
	u = REC_ATTR_SIZE;
	memcpy(attr + 4, &u, 4);
	v = hs->rtit_ctl;
	memcpy(attr + 8, &v, 8);
	v = REC_SAMPLE;
	memcpy(attr + 24, &v, 8);
	/* sample_id_all; exclude_kernel (bit 5) unless OS is traced. */
	v = 1ULL << 18;
	if (!(hs->rtit_ctl & HWTR_RTIT_CTL_OS))
		v |= 1ULL << 5;
	if (!(hs->rtit_ctl & HWTR_RTIT_CTL_USER))
		v |= 1ULL << 4;
	memcpy(attr + 40, &v, 8);
	hdr(hs, HWTR_PERF_HEADER_ATTR, 0, 8 + sizeof(attr));
	put(hs, attr, sizeof(attr));
	if (hs->coresight) {
		cs_info(hs);
		goto time_conv;
	}
	memset(priv, 0, sizeof(priv));
	priv[PT_PMU_TYPE] = REC_PMU_TYPE;
	priv[PT_TSC_BIT] = 1ULL << 10;
	priv[PT_NORETCOMP_BIT] = 1ULL << 11;
	priv[PT_SNAPSHOT_MODE] = 0;
	priv[PT_PER_CPU_MMAPS] = (uint64_t)hs->cpu_mode;
	priv[PT_MTC_BIT] = HWTR_RTIT_CTL_MTCEN;
	priv[PT_MTC_FREQ_BITS] = 0xfULL << 14;
	priv[PT_CYC_BIT] = 1ULL << 1;
	hdr(hs, HWTR_PERF_AUXTRACE_INFO, 0, 16 + sizeof(priv));
	put32(hs, 1);			/* PERF_AUXTRACE_INTEL_PT */
	put32(hs, 0);
	put(hs, priv, sizeof(priv));
time_conv:
	/* No time conversion: FreeBSD's PT backend writes no TSC. */
	hdr(hs, HWTR_PERF_TIME_CONV, 0, 32);
	put64(hs, 0);
	put64(hs, 0);
	put64(hs, 0);
}

void
hwt_rec_comm(struct hwt_src *hs, int32_t pid, int32_t tid, const char *comm,
    int exec)
{
	hdr(hs, HWTR_PERF_COMM, exec ? HWTR_PERF_MISC_COMM_EXEC : 0,
	    8 + 8 + padded(comm) + 24);
	put32(hs, (uint32_t)pid);
	put32(hs, (uint32_t)tid);
	put_str(hs, comm);
	sample_id(hs, pid, tid, -1);
}

/* Remember an image's path for its build-id (HEADER_BUILD_ID). */
static void
note_path(struct hwt_src *hs, const char *path, int32_t pid, int kernel)
{
	struct hwt_path *np;
	size_t i;

	for (i = 0; i < hs->npaths; i++)
		if (strcmp(hs->paths[i].path, path) == 0)
			return;
	if (hs->npaths == hs->pathcap) {
		size_t nc = hs->pathcap ? hs->pathcap * 2 : 16;

		if ((np = realloc(hs->paths, nc * sizeof(*np))) == NULL)
			return;
		hs->paths = np;
		hs->pathcap = nc;
	}
	if ((hs->paths[hs->npaths].path = strdup(path)) != NULL) {
		hs->paths[hs->npaths].pid = pid;
		hs->paths[hs->npaths].kernel = kernel;
		hs->npaths++;
	}
}

void
hwt_rec_mmap(struct hwt_src *hs, int32_t pid, uint64_t addr, uint64_t len,
    uint64_t pgoff, const char *path, int kernel)
{
	uint16_t misc = kernel ? HWTR_PERF_MISC_KERNEL : HWTR_PERF_MISC_USER;

	hdr(hs, HWTR_PERF_MMAP2, misc, 8 + 64 + padded(path) + 24);
	put32(hs, (uint32_t)pid);
	put32(hs, (uint32_t)pid);
	put64(hs, addr);
	put64(hs, len);
	put64(hs, pgoff);
	put32(hs, 0);			/* maj */
	put32(hs, 0);			/* min */
	put64(hs, 0);			/* ino */
	put64(hs, 0);			/* ino_generation */
	put32(hs, PROT_READ | PROT_EXEC);
	put32(hs, MAP_PRIVATE);
	put_str(hs, path);
	sample_id(hs, pid, pid, -1);
	note_path(hs, path, pid, kernel);
}

/*
 * The executable segments of the ELF image @path loaded at @base (the
 * relocation base of a position-independent image; an ET_EXEC image is
 * where its headers say).  An image that cannot be read is one page at
 * @base: the importer then says it is missing.
 */
void
hwt_rec_image(struct hwt_src *hs, int32_t pid, uint64_t base,
    const char *path, int kernel)
{
	struct hwtr_elf_info *info;
	const struct hwtr_elf_seg *sg;
	uint64_t start, end, rel;
	void *buf = NULL;
	size_t len, i, n = 0;

	if ((info = calloc(1, sizeof(*info))) != NULL &&
	    hwtr_read_file(path, REC_MAX_IMAGE, &buf, &len, NULL, 0) >= 0 &&
	    hwtr_elf_parse(buf, len, info, NULL, 0) >= 0) {
		rel = info->type == 3 ? base : 0;	/* ET_DYN */
		for (i = 0; i < info->nload; i++) {
			sg = &info->load[i];
			if (!(sg->flags & HWTR_ELF_PF_X))
				continue;
			start = (rel + sg->vaddr) & ~0xfffULL;
			end = (rel + sg->vaddr + sg->memsz + 0xfff) &
			    ~0xfffULL;
			hwt_rec_mmap(hs, pid, start, end - start,
			    sg->offset & ~0xfffULL, path, kernel);
			n++;
		}
	}
	if (n == 0)
		hwt_rec_mmap(hs, pid, base, 0x1000, 0, path, kernel);
	free(buf);
	free(info);
}

void
hwt_rec_fork(struct hwt_src *hs, int32_t pid, int32_t tid, int32_t ptid,
    int exit)
{
	hdr(hs, exit ? HWTR_PERF_EXIT : HWTR_PERF_FORK, 0, 8 + 24 + 24);
	put32(hs, (uint32_t)pid);
	put32(hs, (uint32_t)pid);
	put32(hs, (uint32_t)tid);
	put32(hs, (uint32_t)ptid);
	put64(hs, 0);	/* hwt(4) records carry no time */
	sample_id(hs, pid, tid, -1);
}

/* @len bytes of buffer @b at stream position @offset. */
void
hwt_rec_data(struct hwt_src *hs, const struct hwt_buf *b, const uint8_t *p,
    size_t len, uint64_t offset)
{
	hdr(hs, HWTR_PERF_AUXTRACE, 0, HWTR_PERF_AUXTRACE_SIZE);
	put64(hs, len);
	put64(hs, offset);
	put64(hs, 0);			/* reference */
	put32(hs, (uint32_t)(b - hs->bufs));
	put32(hs, (uint32_t)b->tid);
	put32(hs, (uint32_t)b->cpu);
	put32(hs, 0);
	put(hs, p, len);
	hs->bytes += len;
}

/* The kernel's note that [@offset, +@size) of @b was written. */
void
hwt_rec_aux(struct hwt_src *hs, const struct hwt_buf *b, uint64_t offset,
    uint64_t size, uint64_t flags)
{
	hdr(hs, HWTR_PERF_AUX, 0, 8 + 24 + 24);
	put64(hs, offset);
	put64(hs, size);
	put64(hs, flags);
	sample_id(hs, b->tid >= 0 ? hs->src->first_pid : -1, b->tid, b->cpu);
}

/* The build-id of every image seen, as perf's HEADER_BUILD_ID. */
static void
build_ids(struct hwt_src *hs)
{
	uint8_t rec[HWTR_PERF_BID_REC_MAX];
	size_t i, n;

	for (i = 0; i < hs->npaths; i++) {
		n = hwtr_perf_build_id_rec(hs->paths[i].path,
		    (int32_t)hs->paths[i].pid, hs->paths[i].kernel, rec,
		    sizeof(rec));
		put(hs, rec, n);
	}
}

/* The recording's end: build-ids, flushed; 0 or -HWTR_E_IO. */
int
hwt_rec_finish(struct hwt_src *hs)
{
	build_ids(hs);
	if (hs->rec != NULL && fflush(hs->rec) != 0 && hs->rec_err == 0)
		hs->rec_err = errno;
	if (hs->rec_err != 0) {
		hwt_err(hs, "writing the recording '%s': %s", hs->rec_path,
		    strerror(hs->rec_err));
		return (-HWTR_E_IO);
	}
	return (0);
}

/* Close and remove the recording; forget the paths. */
void
hwt_rec_close(struct hwt_src *hs)
{
	size_t i;

	if (hs->rec != NULL)
		fclose(hs->rec);
	hs->rec = NULL;
	if (hs->rec_path[0] != '\0')
		(void)unlink(hs->rec_path);
	hs->rec_path[0] = '\0';
	for (i = 0; i < hs->npaths; i++)
		free(hs->paths[i].path);
	free(hs->paths);
	hs->paths = NULL;
	hs->npaths = hs->pathcap = 0;
}
