/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Private to kernel/: what the pieces of the perf source share.  The
 * source is split as FreeBSD splits hwt(4) from its backends, each file
 * calling only those below it in this list:
 *   perf.c       the framework: options, the events (thread, CPU and
 *                attach modes), --trigger, the source's ops (perf.c's
 *                opening comment says how the source works);
 *   perf_read.c  the events' rings read into the recording: stream and
 *                stop modes, ring mode's snapshots, the recording's end;
 *   perf_data.c  the recording: a perf.data file in pipe format;
 *   perf_pmu.c   the PMU (Intel PT or CoreSight) from sysfs, the event's
 *                configuration, and the helpers every piece uses;
 *   perf_aux.c   the ring reader itself (perf_aux.h), under all of them.
 */

#ifndef HWTR_PERF_INT_H
#define HWTR_PERF_INT_H

#include <sys/types.h>

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "perf_aux.h"
#include "sources.h"

#ifdef __linux__
#include <linux/perf_event.h>
#endif

#define PERF_MAX_FORMAT	48
#define PERF_MAX_CPUS	1024
#define PERF_DATA_PAGES	64		/* data area: 256 KiB */
#define PERF_FILTER_MAX	4096

/* One config field of a PMU: "config:14-17" as "mtc_period". */
struct perf_fmt {
	char		name[32];
	uint8_t		word;		/* 0 config, 1 config1, 2 config2 */
	uint8_t		lo, hi;		/* bit range */
};

/* What the PMU's caps/ directory says the hardware can do. */
struct perf_caps {
	int		mtc, psb_cyc, ptwrite, power_event_trace;
	uint32_t	mtc_periods;	/* bit n: mtc_period n allowed */
	uint32_t	cyc_thresholds;
	uint32_t	psb_periods;
	int		num_address_ranges;
	int		nr_addr_filters;	/* -1: no such file */
	int		max_nonturbo_ratio;	/* 0 unknown */
};

struct perf_pmu {
	char		name[16];	/* "intel_pt" or "cs_etm" */
	int		type;
	struct perf_fmt	fmt[PERF_MAX_FORMAT];
	size_t		nfmt;
	struct perf_caps caps;
};

/*
 * cs_etm's AUXTRACE_INFO, header version 2 (trace IDs from HW_ID records
 * where there are any, else these): version, PMU type << 32 |
 * CPUs, snapshot; per CPU magic, CPU, parameter count, then TRCCONFIGR,
 * TRCTRACEIDR, TRCIDR0, TRCIDR1, TRCIDR2, TRCIDR8, TRCAUTHSTATUS (and
 * TRCDEVARCH for ETE).
 */
#define CS_WORDS	11	/* magic, CPU, count, 8 parameters */

#ifdef __linux__

/* One event: a CPU's (or, in thread mode, a CPU's share of the command's). */
struct perf_ev {
	int		fd;
	int		cpu;
	uint64_t	id;		/* PERF_EVENT_IOC_ID */
	void		*base;		/* mmap page and data area */
	size_t		base_len;
	void		*aux;
	size_t		aux_len;
	struct hwtr_perf_ring ring;
	uint64_t	taken;		/* AUX bytes saved (stop mode) */
	int		stopped;	/* --mode stop: full, disabled */
};

/* An image path seen in an MMAP/MMAP2 record (for its build-id). */
struct perf_path {
	char		*path;
	int32_t		pid;
};

struct perf_src {
	struct hwtr_src	*src;
	struct perf_pmu	pmu;
	uint64_t	config[3];
	struct perf_event_attr attr;
	int		cpu_mode;
	int		cs;		/* the cs_etm PMU */
	int		ring;		/* --mode ring: AUX overwrite */
	int		stop;		/* --mode stop */
	pid_t		attach;		/* -p PID, else 0 */
	/*
	 * Events with no ring of their own: their output goes to ev[idx]'s
	 * (PERF_EVENT_IOC_SET_OUTPUT): other threads' (-p), breakpoints.
	 */
	struct perf_xev {
		int	fd;
		size_t	idx;
	}		*xev;
	size_t		nxev, xcap;
	/* --trigger: breakpoint events, their ids, hits not yet saved. */
	uint64_t	trig_addr;	/* runtime address, 0: none */
	uint64_t	*bp_ids;
	size_t		nbp;
	int		trig_hits;
	int		exec_stop;	/* PIE --trigger: ptrace at exec */
	int		cpus[PERF_MAX_CPUS];
	size_t		ncpu;
	/* cs_etm: each CPU's ETM words for AUXTRACE_INFO (magic first). */
	uint64_t	(*etm)[CS_WORDS];
	struct perf_ev	*ev;
	size_t		nev;
	size_t		pagesz;
	uint64_t	aux_size;
	char		filter[PERF_FILTER_MAX];
	pid_t		child;
	int		reaped;
	int		go_fd;		/* releases the child to exec */
	int		snap_seen;
	int		running;	/* enable succeeded: rings to read */
	/* Time conversion from the first mmap page. */
	uint16_t	time_shift;
	uint32_t	time_mult;
	uint64_t	time_zero;
	int		cap_time_zero;
	/* The recording. */
	char		rec_path[PATH_MAX];
	FILE		*rec;
	int		rec_err;	/* errno of a failed write */
	int		finished;
	struct perf_path *paths;
	size_t		npaths, pathcap;
	uint64_t	aux_bytes, aux_lost;
};

/* perf_read.c: reading the rings (ps->ev) into the recording. */
int perf_ev_ioctl(struct perf_src *ps, size_t i, unsigned long req);
int perf_drain(struct perf_src *ps);
int perf_snapshot(struct perf_src *ps, int final);
int perf_finish(struct perf_src *ps);

/* perf_data.c: writing the recording (ps->rec). */
void perf_rec_put(struct perf_src *ps, const void *buf, size_t len);
void perf_rec_hdr(struct perf_src *ps, uint32_t type, uint16_t misc,
    size_t size);
void perf_rec_u64(struct perf_src *ps, uint64_t v);
void perf_rec_start(struct perf_src *ps);
void perf_note_path(struct perf_src *ps, uint32_t type, uint16_t misc,
    const uint8_t *body, size_t len);
void perf_rec_build_ids(struct perf_src *ps);

/* perf_pmu.c: the message of a failure, into the source's errmsg. */
void perf_err(struct perf_src *ps, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The PMU's config fields and the event's attributes. */
uint64_t perf_fmt_mask(const struct perf_pmu *pmu, const char *name,
    int *word);
int perf_make_attr(struct perf_src *ps);

#endif /* __linux__ */

/* perf_pmu.c: sysfs's files, and whether the source can trace here. */
int perf_read_line(const char *path, char *buf, size_t len);
int perf_check(struct perf_pmu *pmu, char *why, size_t len);

#endif /* !HWTR_PERF_INT_H */
