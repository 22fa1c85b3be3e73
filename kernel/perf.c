/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The "perf" trace source: Linux perf_event_open(2) with the intel_pt or
 * cs_etm PMU and an AUX area, read with kernel/perf_aux.c.
 *
 * The PMU is found the way perf finds it: its type from
 * /sys/bus/event_source/devices/NAME/type, its config fields from
 * .../format/NAME ("config:0-7"), what the hardware can do from
 * .../caps/NAME and .../nr_addr_filters.  When tracing cannot work, the
 * source says exactly what is missing (no PMU, perf_event_paranoid without
 * CAP_PERFMON, a kernel without AUX areas); hwtr_perf_usable() is what
 * --source auto asks.
 *
 * How it records.  One event per CPU: in thread mode (the default) for
 * the launched command, enabled at its exec and inherited by every child
 * process and thread (the kernel follows fork, clone and exec, and its
 * MMAP2, COMM, FORK/EXIT and SWITCH records say which thread ran where);
 * in CPU mode (-a, --cpu LIST) for everything on those CPUs, with
 * context_switch=1 giving PERF_RECORD_SWITCH_CPU_WIDE.  Each event's data
 * area and AUX area are mapped; what the kernel writes is copied, as it
 * comes, into a perf.data file in perf's pipe format: HEADER_ATTR, the
 * CPUID feature, AUXTRACE_INFO with the Intel PT decoder configuration
 * (PMU type, time conversion, the tsc/mtc/cyc/noretcomp config bits, the
 * MTC period field, TSC:CTC ratio, the address filter), TIME_CONV, the
 * kernel's records verbatim, each span of AUX data as an AUXTRACE record,
 * and at the end a HEADER_BUILD_ID record per image mapped.  The session
 * then writes the archive with the perf.data importer
 * (hwtr_import_perf_capture()), so a live capture and an import of the
 * same recording give the same streams (one per CPU), decoder
 * configuration, sideband and loss: AUX records flagged TRUNCATED,
 * PARTIAL or COLLISION, LOST records, and AUX bytes never saved.
 *
 * Time.  The trace's timestamps are TSC; the kernel's records carry perf
 * clock nanoseconds.  The mmap page's time_zero/time_mult/time_shift
 * (cap_user_time_zero) convert between them, exactly as perf's TIME_CONV;
 * they go into AUXTRACE_INFO and TIME_CONV, and the importer converts the
 * sideband to TSC with them.  Without cap_user_time_zero the archive says
 * there is no conversion.
 *
 * --mode ring: the AUX area is mapped read-only, which makes the kernel
 * overwrite it (snapshot mode); on SIGUSR2 and at the end (the command's
 * exit, a fatal signal, an interrupt) each event is disabled, its last
 * aux_size bytes are saved and what was overwritten since the previous
 * snapshot is recorded as loss, and the event is enabled again.
 * --trigger SYMBOL adds a snapshot whenever the program reaches SYMBOL: a
 * hardware execution breakpoint event per CPU (see open_trigger() for why
 * not ptrace's int3), its samples redirected into the CPU's data area.  A
 * launched PIE's address is known only after its exec: it stops there
 * (PTRACE_TRACEME) until the breakpoint is set, then is let go.
 *
 * --mode stop: the AUX area is read as in stream mode until a CPU's
 * --buffer bytes are saved; then that CPU's events are disabled, what the
 * kernel still wrote is dropped (the importer states it lost, as AUX data
 * announced and not saved), and an AUX record flagged TRUNCATED marks the
 * cut in the stream.
 *
 * -p PID: an event per thread of /proc/PID/task and CPU, enabled at once,
 * inherited by the threads and processes they make; each CPU's ring is the
 * first thread's, the others' output redirected into it with
 * PERF_EVENT_IOC_SET_OUTPUT.  The capture ends when the process ends (or
 * becomes a zombie), at SIGINT/SIGTERM/SIGUSR2; closing the events is the
 * detach, and the process runs on untouched.
 *
 * --filter: perf's address filter syntax ("filter 0x1000/0x200@/bin/x",
 * "start ...", "stop ...", comma separated), checked here and against the
 * PMU's nr_addr_filters, then given to PERF_EVENT_IOC_SET_FILTER.
 *
 * CoreSight (cs_etm): contextid set (timestamp too when more than one
 * CPU's trace is to be ordered), the sink the first of cs_etm/sinks/ (as
 * perf's default); each traced CPU's ETMv4 or ETE ID registers
 * (cs_etm/cpuN/trcidr/trcidr0,1,2,8, mgmt/trcauthstatus, mgmt/trcdevarch)
 * go into AUXTRACE_INFO the way perf writes them (header version 2),
 * TRCCONFIGR made from the config bits, the trace ID the legacy
 * 0x10 + 2 * CPU, which the kernel's AUX_OUTPUT_HW_ID records (Linux 6.4
 * and later, passed into the recording) override.  ETMv3/PTM is refused.
 *
 * Nothing here has run on trace hardware: it is tested against the ABI of
 * <linux/perf_event.h> with a simulated kernel (tests/kernel/fakeperf.c,
 * preloaded, answers perf_event_open, mmap and ioctl and plays the kernel's
 * part of the ring protocol).
 *
 * FreeBSD's hwt(4) would fit the same ops: HWT_IOC_ALLOC for a context
 * per process or CPU (as the events here), HWT_IOC_START at the exec,
 * HWT_IOC_RECORD_GET for its mmap/exec records (converted like the
 * kernel's MMAP2/COMM), and HWT_IOC_BUFPTR_GET for the trace buffer's
 * write position (as aux_head), writing the same recording; it is not
 * written.
 *
 * HWTRACE_SYSFS names another root for /sys/bus/event_source/devices (for
 * tests).
 */

#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hwtr_common.h"
#include "perf_aux.h"
#include "sources.h"

#ifdef __linux__
#include <linux/capability.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#endif
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
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
static const char *
sysfs_root(void)
{
	const char *r = getenv("HWTRACE_SYSFS");

	return (r != NULL && *r != '\0' ? r :
	    "/sys/bus/event_source/devices");
}

/* The first line of @path into @buf; 0, or -1 (errno kept). */
static int
read_line(const char *path, char *buf, size_t len)
{
	FILE *fp;

	if ((fp = fopen(path, "re")) == NULL)
		return (-1);
	if (fgets(buf, (int)len, fp) == NULL) {
		fclose(fp);
		errno = EIO;
		return (-1);
	}
	fclose(fp);
	buf[strcspn(buf, "\n")] = '\0';
	return (0);
}

/* "config:14-17" or "config1:0" into @f; 0, or -1 when malformed. */
static int
parse_fmt(const char *s, struct perf_fmt *f)
{
	unsigned long lo, hi;
	char *end;

	if (strncmp(s, "config2:", 8) == 0) {
		f->word = 2;
		s += 8;
	} else if (strncmp(s, "config1:", 8) == 0) {
		f->word = 1;
		s += 8;
	} else if (strncmp(s, "config:", 7) == 0) {
		f->word = 0;
		s += 7;
	} else
		return (-1);
	errno = 0;
	lo = strtoul(s, &end, 10);
	if (errno != 0 || end == s || lo > 63)
		return (-1);
	hi = lo;
	if (*end == '-') {
		s = end + 1;
		hi = strtoul(s, &end, 10);
		if (errno != 0 || end == s || hi > 63 || hi < lo)
			return (-1);
	}
	if (*end != '\0')
		return (-1);
	f->lo = (uint8_t)lo;
	f->hi = (uint8_t)hi;
	return (0);
}

/*
 * A number in the file @dir/@name: 0 and *@v set, 1 when there is no such
 * file, -HWTR_E_FORMAT (with @why) when it holds something else.  The
 * caps files are hexadecimal bit masks (mtc_periods "249") or small
 * numbers; @base says which.
 */
static int
read_num(const char *dir, const char *name, int base, unsigned long *v,
    char *why, size_t len)
{
	char path[512], line[64], *end;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (read_line(path, line, sizeof(line)) < 0)
		return (1);
	errno = 0;
	*v = strtoul(line, &end, base);
	if (errno != 0 || end == line || *end != '\0' || *v > INT32_MAX) {
		snprintf(why, len, "'%s' holds '%.40s', not a %s", path, line,
		    base == 16 ? "hexadecimal mask" : "number");
		return (-HWTR_E_FORMAT);
	}
	return (0);
}

/* The PMU's caps/ and nr_addr_filters into pmu->caps. */
static int
caps_read(struct perf_pmu *pmu, char *why, size_t len)
{
	static const struct {
		const char	*name;
		int		base;
		size_t		off;
	} caps[] = {
#define C(n, b)	{ #n, b, offsetof(struct perf_caps, n) }
		C(mtc, 10), C(psb_cyc, 10), C(ptwrite, 10),
		C(power_event_trace, 10), C(mtc_periods, 16),
		C(cyc_thresholds, 16), C(psb_periods, 16),
		C(num_address_ranges, 10),
#undef C
	};
	struct perf_caps *c = &pmu->caps;
	char dir[512];
	unsigned long v;
	size_t i;
	int rc;

	memset(c, 0, sizeof(*c));
	snprintf(dir, sizeof(dir), "%s/%s/caps", sysfs_root(), pmu->name);
	for (i = 0; i < HWTR_NELEM(caps); i++) {
		if ((rc = read_num(dir, caps[i].name, caps[i].base, &v, why,
		    len)) < 0)
			return (rc);
		if (rc > 0)
			continue;
		/* Every field is an int or a uint32_t. */
		if (caps[i].base == 16)
			*(uint32_t *)(void *)((char *)c + caps[i].off) =
			    (uint32_t)v;
		else
			*(int *)(void *)((char *)c + caps[i].off) = (int)v;
	}
	snprintf(dir, sizeof(dir), "%s/%s", sysfs_root(), pmu->name);
	c->nr_addr_filters = -1;
	if ((rc = read_num(dir, "nr_addr_filters", 10, &v, why, len)) < 0)
		return (rc);
	if (rc == 0)
		c->nr_addr_filters = (int)v;
	if ((rc = read_num(dir, "max_nonturbo_ratio", 10, &v, why,
	    len)) < 0)
		return (rc);
	if (rc == 0)
		c->max_nonturbo_ratio = (int)v;
	return (0);
}

/*
 * Read the PMU @name under the sysfs root into @pmu.  0; -HWTR_E_NOENT when
 * it does not exist; -HWTR_E_FORMAT (with @why) when its files are bad.
 */
static int
pmu_read(const char *name, struct perf_pmu *pmu, char *why, size_t len)
{
	char path[512], line[128];
	static const char *const fields[] = { "pt", "tsc", "mtc", "mtc_period",
	    "cyc", "cyc_thresh", "psb_period", "branch", "noretcomp",
	    "ptw", "fup_on_ptw", "pwr_evt", "cycacc", "timestamp",
	    "retstack", "contextid", "sinkid", "branch_broadcast", NULL };
	char *end;
	long v;
	size_t i;

	memset(pmu, 0, sizeof(*pmu));
	snprintf(pmu->name, sizeof(pmu->name), "%s", name);
	snprintf(path, sizeof(path), "%s/%s/type", sysfs_root(), name);
	if (read_line(path, line, sizeof(line)) < 0)
		return (-HWTR_E_NOENT);
	errno = 0;
	v = strtol(line, &end, 10);
	if (errno != 0 || end == line || *end != '\0' || v < 0 ||
	    v > INT32_MAX) {
		snprintf(why, len, "'%s' holds '%.40s', not a PMU type", path,
		    line);
		return (-HWTR_E_FORMAT);
	}
	pmu->type = (int)v;
	for (i = 0; fields[i] != NULL && pmu->nfmt < PERF_MAX_FORMAT; i++) {
		struct perf_fmt *f = &pmu->fmt[pmu->nfmt];

		snprintf(path, sizeof(path), "%s/%s/format/%s", sysfs_root(),
		    name, fields[i]);
		if (read_line(path, line, sizeof(line)) < 0)
			continue;
		if (parse_fmt(line, f) < 0) {
			snprintf(why, len, "'%s' holds '%.40s', not a config "
			    "field", path, line);
			return (-HWTR_E_FORMAT);
		}
		snprintf(f->name, sizeof(f->name), "%s", fields[i]);
		pmu->nfmt++;
	}
	return (caps_read(pmu, why, len));
}

/* 1 when this process has @cap in its effective set. */
static int
has_cap(int cap)
{
#ifdef __linux__
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	memset(d, 0, sizeof(d));
	if (syscall(SYS_capget, &h, d) != 0)
		return (0);
	return ((d[cap / 32].effective >> (cap % 32)) & 1);
#else
	(void)cap;
	return (0);
#endif
}

/*
 * Whether the perf source can trace here: 1 with the PMU in @pmu, or 0 with
 * @why naming what is missing.
 */
static int
perf_check(struct perf_pmu *pmu, char *why, size_t len)
{
	struct utsname u;
	char line[64];
	int rc, major = 0, minor = 0, paranoid = 2;

	if (uname(&u) == 0 && sscanf(u.release, "%d.%d", &major, &minor) == 2 &&
	    (major < 4 || (major == 4 && minor < 1))) {
		snprintf(why, len, "Linux %s is too old for perf AUX areas "
		    "(4.1 or later needed)", u.release);
		return (0);
	}
	if ((rc = pmu_read("intel_pt", pmu, why, len)) == -HWTR_E_NOENT)
		rc = pmu_read("cs_etm", pmu, why, len);
	if (rc == -HWTR_E_NOENT) {
		snprintf(why, len, "no intel_pt or cs_etm PMU in %s (no trace "
		    "hardware here, or a VM that does not pass it through)",
		    sysfs_root());
		return (0);
	}
	if (rc < 0)
		return (0);
	if (read_line("/proc/sys/kernel/perf_event_paranoid", line,
	    sizeof(line)) == 0)
		paranoid = atoi(line);
	/* CAP_PERFMON is 38; CAP_SYS_ADMIN (21) did its work before 5.8. */
	if (paranoid > 1 && !has_cap(38) && !has_cap(21)) {
		snprintf(why, len, "kernel.perf_event_paranoid is %d and this "
		    "process has neither CAP_PERFMON nor CAP_SYS_ADMIN: lower "
		    "it to 1 (sysctl kernel.perf_event_paranoid=1) or grant "
		    "CAP_PERFMON", paranoid);
		return (0);
	}
	return (1);
}

int
hwtr_perf_usable(char *why, size_t len)
{
	struct perf_pmu pmu;

	if (!perf_check(&pmu, why, len))
		return (0);
	snprintf(why, len, "%s PMU (type %d)", pmu.name, pmu.type);
	return (1);
}


/* ------------------------------------------------------------------ */
/* The recording: a perf.data file in pipe format.                     */

#define FEAT_CPUID	9		/* perf's HEADER_CPUID feature bit */

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

static void perf_err(struct perf_src *ps, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
perf_err(struct perf_src *ps, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ps->src->errmsg, sizeof(ps->src->errmsg), fmt, ap);
	va_end(ap);
}

static void
rec_put(struct perf_src *ps, const void *buf, size_t len)
{
	if (ps->rec == NULL || ps->rec_err != 0)
		return;
	if (len > 0 && fwrite(buf, 1, len, ps->rec) != len)
		ps->rec_err = errno != 0 ? errno : EIO;
}

/* A record header: @type, @misc, @size (the header included). */
static void
rec_hdr(struct perf_src *ps, uint32_t type, uint16_t misc, size_t size)
{
	uint8_t h[8];
	uint16_t sz = (uint16_t)size;

	memcpy(h, &type, 4);
	memcpy(h + 4, &misc, 2);
	memcpy(h + 6, &sz, 2);
	rec_put(ps, h, sizeof(h));
}

static void
rec_u64(struct perf_src *ps, uint64_t v)
{
	rec_put(ps, &v, 8);
}

/* A HEADER_FEATURE record holding one perf_header_string. */
static void
rec_feature_str(struct perf_src *ps, uint64_t feat, const char *s)
{
	static const uint8_t zero[8];
	uint32_t n = (uint32_t)strlen(s) + 1;
	uint32_t padded = (n + 7) & ~7u;

	rec_hdr(ps, HWTR_PERF_HEADER_FEATURE, 0, 8 + 8 + 4 + padded);
	rec_u64(ps, feat);
	rec_put(ps, &padded, 4);
	rec_put(ps, s, n);
	rec_put(ps, zero, padded - n);
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

/* The mask of the PMU's config field @name (0: none) in *@word. */
static uint64_t
fmt_mask(const struct perf_pmu *pmu, const char *name, int *word)
{
	size_t i;

	for (i = 0; i < pmu->nfmt; i++) {
		const struct perf_fmt *f = &pmu->fmt[i];

		if (strcmp(f->name, name) != 0)
			continue;
		if (word != NULL)
			*word = f->word;
		if (f->hi - f->lo == 63)
			return (UINT64_MAX);
		return (((UINT64_C(1) << (f->hi - f->lo + 1)) - 1) << f->lo);
	}
	return (0);
}

/* Set the PMU's config field @name to @v; 0, or -1 when it has none. */
static int
fmt_set(struct perf_src *ps, const char *name, uint64_t v)
{
	uint64_t m;
	int word = 0;

	if ((m = fmt_mask(&ps->pmu, name, &word)) == 0)
		return (-1);
	v <<= __builtin_ctzll(m);
	ps->config[word] = (ps->config[word] & ~m) | (v & m);
	return (0);
}

/* The first lines of the recording, once the events are open. */
static void
rec_start(struct perf_src *ps)
{
	static const char magic[8] = { 'P', 'E', 'R', 'F', 'I', 'L', 'E', '2' };
	uint64_t priv[PT_PRIV_MAX + PERF_FILTER_MAX / 8 + 1];
	uint32_t num, den, type = 1;	/* PERF_AUXTRACE_INTEL_PT */
	size_t i, n, flen;
	char cpuid[128];

	rec_put(ps, magic, sizeof(magic));
	rec_u64(ps, 16);
	/* HEADER_ATTR: the attr, then the ids of its events. */
	rec_hdr(ps, HWTR_PERF_HEADER_ATTR, 0, 8 + ps->attr.size + 8 * ps->nev);
	rec_put(ps, &ps->attr, ps->attr.size);
	for (i = 0; i < ps->nev; i++)
		rec_u64(ps, ps->ev[i].id);
	if (cpuid_string(cpuid, sizeof(cpuid)) == 0)
		rec_feature_str(ps, FEAT_CPUID, cpuid);
	/* AUXTRACE_INFO: what the decoder needs to know. */
	memset(priv, 0, sizeof(priv));
	priv[PT_PMU_TYPE] = (uint64_t)ps->pmu.type;
	priv[PT_TIME_SHIFT] = ps->time_shift;
	priv[PT_TIME_MULT] = ps->time_mult;
	priv[PT_TIME_ZERO] = ps->time_zero;
	priv[PT_CAP_USER_TIME_ZERO] = (uint64_t)ps->cap_time_zero;
	priv[PT_TSC_BIT] = fmt_mask(&ps->pmu, "tsc", NULL);
	priv[PT_NORETCOMP_BIT] = fmt_mask(&ps->pmu, "noretcomp", NULL);
	priv[PT_HAVE_SCHED_SWITCH] = 2;		/* context_switch records */
	priv[PT_SNAPSHOT_MODE] = (uint64_t)ps->ring;
	priv[PT_PER_CPU_MMAPS] = 1;
	priv[PT_MTC_BIT] = fmt_mask(&ps->pmu, "mtc", NULL);
	priv[PT_MTC_FREQ_BITS] = fmt_mask(&ps->pmu, "mtc_period", NULL);
	tsc_ctc(&num, &den);
	priv[PT_TSC_CTC_N] = num;
	priv[PT_TSC_CTC_D] = den;
	priv[PT_CYC_BIT] = fmt_mask(&ps->pmu, "cyc", NULL);
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
		rec_hdr(ps, HWTR_PERF_AUXTRACE_INFO, 0, 16 + 8 * n);
		rec_put(ps, &type, 4);
		rec_put(ps, "\0\0\0\0", 4);
		rec_put(ps, priv, 8 * 3);
		for (i = 0; i < ps->ncpu; i++)
			rec_put(ps, ps->etm[i], 8 * (3 + ps->etm[i][2]));
	} else {
		rec_hdr(ps, HWTR_PERF_AUXTRACE_INFO, 0, 16 + 8 * n);
		rec_put(ps, &type, 4);
		rec_put(ps, "\0\0\0\0", 4);
		rec_put(ps, priv, 8 * n);
	}
	/* TIME_CONV, as perf writes it for the non-Intel PT readers. */
	rec_hdr(ps, HWTR_PERF_TIME_CONV, 0, 32);
	rec_u64(ps, ps->time_shift);
	rec_u64(ps, ps->time_mult);
	rec_u64(ps, ps->time_zero);
}

/* Keep the executable file mappings' paths (for their build-ids). */
static void
note_path(struct perf_src *ps, uint32_t type, uint16_t misc,
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

/* A record of a data area, copied as the kernel wrote it. */
static int
on_record(void *arg, uint32_t type, uint16_t misc, const uint8_t *body,
    size_t len)
{
	struct perf_src *ps = arg;
	uint64_t id;
	size_t i;

	/*
	 * A sample of a --trigger breakpoint (PERF_SAMPLE_IDENTIFIER comes
	 * first in a sample): the program reached the function.  It is not
	 * the recording's: its event is not in HEADER_ATTR.
	 */
	if (type == HWTR_PERF_SAMPLE && len >= 8 && ps->nbp > 0) {
		memcpy(&id, body, 8);
		for (i = 0; i < ps->nbp; i++)
			if (ps->bp_ids[i] == id) {
				ps->trig_hits++;
				return (0);
			}
	}
	rec_hdr(ps, type, misc, len + 8);
	rec_put(ps, body, len);
	if (type == HWTR_PERF_MMAP || type == HWTR_PERF_MMAP2)
		note_path(ps, type, misc, body, len);
	return (ps->rec_err != 0 ? -HWTR_E_IO : 0);
}

struct aux_arg {
	struct perf_src	*ps;
	struct perf_ev	*ev;
	size_t		idx;
};

/* AUX bytes at stream offset @offset: one AUXTRACE record. */
static int
on_aux(void *arg, const uint8_t *buf, size_t len, uint64_t offset)
{
	struct aux_arg *a = arg;
	struct perf_src *ps = a->ps;
	uint32_t idx = (uint32_t)a->idx, tid = UINT32_MAX;
	uint32_t cpu = (uint32_t)a->ev->cpu, zero = 0;

	if (ps->stop) {
		/* --mode stop: the first aux_size bytes, the rest is lost. */
		if (a->ev->taken >= ps->aux_size) {
			ps->aux_lost += len;
			return (0);
		}
		if (len > ps->aux_size - a->ev->taken) {
			ps->aux_lost += len - (size_t)(ps->aux_size -
			    a->ev->taken);
			len = (size_t)(ps->aux_size - a->ev->taken);
		}
		a->ev->taken += len;
	}
	if (len == 0)
		return (0);
	/*
	 * Unlike perf, the payload is not padded to 8 bytes: the kernel's
	 * head may stop inside a packet, and zeros between two payloads
	 * would land inside it; the importer takes any size.
	 */
	rec_hdr(ps, HWTR_PERF_AUXTRACE, 0, HWTR_PERF_AUXTRACE_SIZE);
	rec_u64(ps, len);
	rec_u64(ps, offset);
	rec_u64(ps, 0);			/* reference */
	rec_put(ps, &idx, 4);
	rec_put(ps, &tid, 4);
	rec_put(ps, &cpu, 4);
	rec_put(ps, &zero, 4);
	rec_put(ps, buf, len);
	ps->aux_bytes += len;
	return (ps->rec_err != 0 ? -HWTR_E_IO : 0);
}

/* PERF_EVENT_IOC_ENABLE or _DISABLE on ring @i's events (all: SIZE_MAX). */
static int
ev_ioctl(struct perf_src *ps, size_t i, unsigned long req)
{
	size_t j;
	int rc = 0;

	for (j = 0; j < ps->nev; j++)
		if ((i == SIZE_MAX || i == j) &&
		    ioctl(ps->ev[j].fd, req, 0) != 0)
			rc = -1;
	for (j = 0; j < ps->nxev; j++)
		if ((i == SIZE_MAX || i == ps->xev[j].idx) &&
		    ioctl(ps->xev[j].fd, req, 0) != 0)
			rc = -1;
	return (rc);
}

/*
 * --mode stop: ring @i has its aux_size bytes.  Its events are disabled,
 * and an AUX record flagged TRUNCATED (what the kernel writes when its
 * AUX area is full) tells the importer the trace stops there: a loss of
 * an unknown amount on that CPU's stream.  Its time is the perf clock's
 * (CLOCK_MONOTONIC, as the kernel's default local clock) now.
 */
static void
stop_ring(struct perf_src *ps, size_t i)
{
	struct perf_ev *ev = &ps->ev[i];
	struct timespec ts;
	uint64_t now = 0;
	uint32_t u[2];

	(void)ev_ioctl(ps, i, PERF_EVENT_IOC_DISABLE);
	ev->stopped = 1;
	if (clock_gettime(CLOCK_MONOTONIC, &ts) == 0)
		now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	rec_hdr(ps, HWTR_PERF_AUX, 0, 8 + 24 + 32);
	rec_u64(ps, ev->taken);		/* aux_offset */
	rec_u64(ps, 0);			/* aux_size */
	rec_u64(ps, HWTR_PERF_AUX_TRUNCATED);
	u[0] = u[1] = (uint32_t)ps->src->first_pid;
	rec_put(ps, u, 8);
	rec_u64(ps, now);
	u[0] = (uint32_t)ev->cpu;
	u[1] = 0;
	rec_put(ps, u, 8);
	rec_u64(ps, ev->id);
	hwtr_logf(&ps->src->cfg.log, HWTR_LOG_INFO, "--mode stop: CPU %d's "
	    "%" PRIu64 " bytes are full: its trace stops", ev->cpu,
	    ps->aux_size);
}

/* Whatever the kernel has written so far (stream mode's AUX data too). */
static int
drain(struct perf_src *ps)
{
	struct aux_arg a;
	int64_t n;
	size_t i;
	int rc;

	for (i = 0; i < ps->nev; i++) {
		struct perf_ev *ev = &ps->ev[i];

		/* AUX first: its AUX records then follow the bytes. */
		if (!ps->ring) {
			a.ps = ps;
			a.ev = ev;
			a.idx = i;
			if ((n = hwtr_perf_ring_aux(&ev->ring, on_aux,
			    &a)) < 0) {
				perf_err(ps, "CPU %d: AUX area: %s", ev->cpu,
				    n == -HWTR_E_FORMAT ? "the head ran past "
				    "the tail by more than the area" :
				    hwtr_errstr((int)n));
				return ((int)n);
			}
			if (ps->stop && !ev->stopped &&
			    ev->taken >= ps->aux_size)
				stop_ring(ps, i);
		}
		if ((rc = hwtr_perf_ring_records(&ev->ring, on_record,
		    ps)) < 0) {
			perf_err(ps, "CPU %d: data area: %s", ev->cpu,
			    rc == -HWTR_E_FORMAT ? "a record whose size does "
			    "not fit what the kernel published" :
			    hwtr_errstr(rc));
			return (rc);
		}
	}
	if (ps->rec_err != 0) {
		perf_err(ps, "writing the recording '%s': %s", ps->rec_path,
		    strerror(ps->rec_err));
		return (-HWTR_E_IO);
	}
	return (0);
}

/*
 * Ring mode: stop every event, save the last aux_size bytes of each (what
 * was overwritten since the previous snapshot is the gap before them),
 * and start them again unless @final.
 */
static int
snapshot(struct perf_src *ps, int final)
{
	struct aux_arg a;
	uint64_t lost;
	int64_t n;
	size_t i;

	(void)ev_ioctl(ps, SIZE_MAX, PERF_EVENT_IOC_DISABLE);
	for (i = 0; i < ps->nev; i++) {
		a.ps = ps;
		a.ev = &ps->ev[i];
		a.idx = i;
		lost = 0;
		if ((n = hwtr_perf_ring_snapshot(&ps->ev[i].ring, on_aux, &a,
		    &lost)) < 0) {
			perf_err(ps, "CPU %d: snapshot: %s", ps->ev[i].cpu,
			    hwtr_errstr((int)n));
			return ((int)n);
		}
		ps->aux_lost += lost;
	}
	if (!final)
		(void)ev_ioctl(ps, SIZE_MAX, PERF_EVENT_IOC_ENABLE);
	return (drain(ps));
}

/* The build-id of every image mapped, as perf's HEADER_BUILD_ID. */
static void
rec_build_ids(struct perf_src *ps)
{
	static const uint8_t zero[8];
	uint8_t id[HWTR_BUILD_ID_MAX], bid[24];
	size_t i, idlen, n, padded;
	int fd, rc;

	for (i = 0; i < ps->npaths; i++) {
		if ((fd = open(ps->paths[i].path, O_RDONLY | O_CLOEXEC)) < 0)
			continue;
		idlen = 0;
		rc = hwtr_elf_build_id_fd(fd, id, &idlen);
		close(fd);
		if (rc < 0 || idlen == 0 || idlen > 20)
			continue;
		memset(bid, 0, sizeof(bid));
		memcpy(bid, id, idlen);
		bid[20] = (uint8_t)idlen;
		n = strlen(ps->paths[i].path) + 1;
		padded = (n + 7) & ~(size_t)7;
		if (36 + padded > 65535)
			continue;
		/* MISC_USER | MISC_BUILD_ID_SIZE */
		rec_hdr(ps, HWTR_PERF_HEADER_BUILD_ID, 0x8002,
		    8 + 4 + 24 + padded);
		rec_put(ps, &ps->paths[i].pid, 4);
		rec_put(ps, bid, sizeof(bid));
		rec_put(ps, ps->paths[i].path, n);
		rec_put(ps, zero, padded - n);
	}
}

/* Everything the kernel still holds, then the recording's end. */
static int
finish(struct perf_src *ps)
{
	int rc;

	if (ps->finished)
		return (0);
	ps->finished = 1;
	if (ps->ring)
		rc = snapshot(ps, 1);
	else {
		(void)ev_ioctl(ps, SIZE_MAX, PERF_EVENT_IOC_DISABLE);
		rc = drain(ps);
	}
	if (rc < 0)
		return (rc);
	rec_build_ids(ps);
	if (ps->rec != NULL && fflush(ps->rec) != 0 && ps->rec_err == 0)
		ps->rec_err = errno;
	if (ps->rec_err != 0) {
		perf_err(ps, "writing the recording '%s': %s", ps->rec_path,
		    strerror(ps->rec_err));
		return (-HWTR_E_IO);
	}
	ps->src->recording = ps->rec_path;
	return (0);
}

/* ------------------------------------------------------------------ */
/* Options.                                                            */

/* "0-3,6" into ps->cpus; 0, or -HWTR_E_INVAL with errmsg. */
static int
parse_cpus(struct perf_src *ps, const char *list)
{
	const char *s = list;
	unsigned long lo, hi, c;
	char *end;

	ps->ncpu = 0;
	while (*s != '\0') {
		errno = 0;
		if (!isdigit((unsigned char)*s))
			goto bad;
		lo = strtoul(s, &end, 10);
		hi = lo;
		if (*end == '-') {
			s = end + 1;
			if (!isdigit((unsigned char)*s))
				goto bad;
			hi = strtoul(s, &end, 10);
		}
		if (errno != 0 || hi < lo || hi >= PERF_MAX_CPUS)
			goto bad;
		for (c = lo; c <= hi; c++) {
			size_t i;

			for (i = 0; i < ps->ncpu; i++)
				if (ps->cpus[i] == (int)c)
					break;
			if (i == ps->ncpu)
				ps->cpus[ps->ncpu++] = (int)c;
		}
		if (*end == ',')
			end++;
		else if (*end != '\0')
			goto bad;
		s = end;
	}
	if (ps->ncpu > 0)
		return (0);
bad:
	perf_err(ps, "malformed CPU list '%s' (as 0-3,6; CPUs below %d)",
	    list, PERF_MAX_CPUS);
	return (-HWTR_E_INVAL);
}

/* The online CPUs (/sys/devices/system/cpu/online, else 0..nproc-1). */
static int
online_cpus(struct perf_src *ps)
{
	char line[512];
	long n, i;

	if (read_line("/sys/devices/system/cpu/online", line,
	    sizeof(line)) == 0 && parse_cpus(ps, line) == 0)
		return (0);
	n = sysconf(_SC_NPROCESSORS_CONF);
	if (n < 1)
		n = 1;
	if (n > PERF_MAX_CPUS)
		n = PERF_MAX_CPUS;
	for (i = 0, ps->ncpu = 0; i < n; i++)
		ps->cpus[ps->ncpu++] = (int)i;
	return (0);
}

/*
 * Check @f against perf's address filter syntax: comma-separated
 * "filter|start|stop|tracestop ADDR[/SIZE][@FILE]" ("filter" and
 * "tracestop" need a size), each FILE existing; at most the PMU's
 * nr_addr_filters.  The string goes to the kernel as given.
 */
static int
check_filter(struct perf_src *ps, const char *f)
{
	char copy[PERF_FILTER_MAX], *save = NULL, *one, *p, *end, *at;
	int n = 0, max = ps->pmu.caps.nr_addr_filters;
	struct stat st;

	if (strlen(f) >= sizeof(copy)) {
		perf_err(ps, "--filter: longer than %d bytes",
		    PERF_FILTER_MAX - 1);
		return (-HWTR_E_INVAL);
	}
	snprintf(copy, sizeof(copy), "%s", f);
	for (one = strtok_r(copy, ",", &save); one != NULL;
	    one = strtok_r(NULL, ",", &save)) {
		int need_size;

		while (isspace((unsigned char)*one))
			one++;
		if (strncmp(one, "filter ", 7) == 0)
			p = one + 7, need_size = 1;
		else if (strncmp(one, "tracestop ", 10) == 0)
			p = one + 10, need_size = 1;
		else if (strncmp(one, "start ", 6) == 0)
			p = one + 6, need_size = 0;
		else if (strncmp(one, "stop ", 5) == 0)
			p = one + 5, need_size = 0;
		else {
			perf_err(ps, "--filter: '%s' is not 'filter', "
			    "'start', 'stop' or 'tracestop' ADDR[/SIZE]"
			    "[@FILE]", one);
			return (-HWTR_E_INVAL);
		}
		while (isspace((unsigned char)*p))
			p++;
		errno = 0;
		(void)strtoull(p, &end, 0);
		if (errno != 0 || end == p) {
			perf_err(ps, "--filter: '%s': no address", one);
			return (-HWTR_E_INVAL);
		}
		if (*end == '/') {
			p = end + 1;
			(void)strtoull(p, &end, 0);
			if (errno != 0 || end == p) {
				perf_err(ps, "--filter: '%s': malformed size",
				    one);
				return (-HWTR_E_INVAL);
			}
		} else if (need_size) {
			perf_err(ps, "--filter: '%s' needs a size "
			    "(ADDR/SIZE)", one);
			return (-HWTR_E_INVAL);
		}
		at = end;
		while (isspace((unsigned char)*at))
			at++;
		if (*at == '@') {
			char *e = at + 1 + strlen(at + 1);

			while (e > at + 1 && isspace((unsigned char)e[-1]))
				*--e = '\0';
			if (stat(at + 1, &st) != 0) {
				perf_err(ps, "--filter: '%s': %s", at + 1,
				    strerror(errno));
				return (-HWTR_E_INVAL);
			}
		} else if (*at != '\0') {
			perf_err(ps, "--filter: '%s': unexpected '%s'", one,
			    at);
			return (-HWTR_E_INVAL);
		}
		n++;
	}
	if (n == 0) {
		perf_err(ps, "--filter: empty");
		return (-HWTR_E_INVAL);
	}
	if (max >= 0 && n > max) {
		perf_err(ps, "--filter: %d address filters, the %s PMU has "
		    "%d (nr_addr_filters)", n, ps->pmu.name, max);
		return (-HWTR_E_INVAL);
	}
	if (max < 0) {
		perf_err(ps, "--filter: the %s PMU has no address filters "
		    "(no nr_addr_filters)", ps->pmu.name);
		return (-HWTR_E_UNSUPPORTED);
	}
	snprintf(ps->filter, sizeof(ps->filter), "%s", f);
	return (0);
}

/*
 * A hexadecimal register value of the cs_etm PMU's file @rel (as
 * "cpu7/trcidr/trcidr0"): 0; 1 when there is no such file;
 * -HWTR_E_FORMAT (with errmsg) when it holds something else.
 */
static int
cs_reg(struct perf_src *ps, const char *rel, uint64_t *v)
{
	char path[512], line[64], *end;

	snprintf(path, sizeof(path), "%s/cs_etm/%s", sysfs_root(), rel);
	if (read_line(path, line, sizeof(line)) < 0)
		return (1);
	errno = 0;
	*v = strtoull(line, &end, 16);
	if (errno != 0 || end == line || *end != '\0') {
		perf_err(ps, "'%s' holds '%.40s', not a hexadecimal register",
		    path, line);
		return (-HWTR_E_FORMAT);
	}
	return (0);
}

/* The sink: the first of cs_etm/sinks/ by name, as perf's default. */
static int
cs_sink(struct perf_src *ps)
{
	char dir[512], rel[600], best[256];
	struct dirent *de;
	uint64_t id;
	DIR *d;
	int rc;

	snprintf(dir, sizeof(dir), "%s/cs_etm/sinks", sysfs_root());
	if ((d = opendir(dir)) == NULL)
		return (0);	/* the kernel picks one */
	best[0] = '\0';
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		if (best[0] == '\0' || strcmp(de->d_name, best) < 0)
			snprintf(best, sizeof(best), "%s", de->d_name);
	}
	closedir(d);
	if (best[0] == '\0')
		return (0);
	snprintf(rel, sizeof(rel), "sinks/%s", best);
	if ((rc = cs_reg(ps, rel, &id)) != 0)
		return (rc < 0 ? rc : 0);
	if (fmt_set(ps, "sinkid", id) < 0) {
		perf_err(ps, "the cs_etm PMU has sinks but no sinkid format "
		    "field in %s/cs_etm/format", sysfs_root());
		return (-HWTR_E_FORMAT);
	}
	return (0);
}

/*
 * cs_etm's config (contextid; timestamp when several CPUs' trace is to be
 * ordered; the sink) and each traced CPU's ETM registers into ps->etm.
 */
static int
cs_config(struct perf_src *ps)
{
	static const char *const ro[] = { "trcidr/trcidr0", "trcidr/trcidr1",
	    "trcidr/trcidr2", "trcidr/trcidr8", "mgmt/trcauthstatus" };
	char rel[128];
	uint64_t cfgr = 0, v, *w;
	size_t i, j;
	int rc;

	if (fmt_set(ps, "contextid", 1) == 0)
		cfgr |= 1u << 6;	/* TRCCONFIGR.CID */
	if (ps->ncpu > 1 && fmt_set(ps, "timestamp", 1) == 0)
		cfgr |= 1u << 11;	/* TRCCONFIGR.TS */

	if ((rc = cs_sink(ps)) < 0)
		return (rc);
	free(ps->etm);
	if ((ps->etm = calloc(ps->ncpu, sizeof(*ps->etm))) == NULL) {
		perf_err(ps, "out of memory");
		return (-HWTR_E_NOMEM);
	}
	for (i = 0; i < ps->ncpu; i++) {
		w = ps->etm[i];
		w[1] = (uint64_t)ps->cpus[i];
		w[3] = cfgr;
		w[4] = 0x10 + 2 * (uint64_t)ps->cpus[i];
		for (j = 0; j < 5; j++) {
			snprintf(rel, sizeof(rel), "cpu%d/%s", ps->cpus[i],
			    ro[j]);
			if ((rc = cs_reg(ps, rel, &w[5 + j])) == 1) {
				perf_err(ps, "CPU %d has no ETMv4 or ETE "
				    "(%s/cs_etm/%s is missing; ETMv3 and PTM "
				    "are not recorded live)", ps->cpus[i],
				    sysfs_root(), rel);
				return (-HWTR_E_UNSUPPORTED);
			}
			if (rc < 0)
				return (rc);
		}
		/* ETE: TRCDEVARCH.ARCHVER (bits 15:12) 5 or more. */
		snprintf(rel, sizeof(rel), "cpu%d/mgmt/trcdevarch",
		    ps->cpus[i]);
		if ((rc = cs_reg(ps, rel, &v)) < 0)
			return (rc);
		if (rc == 0 && ((v >> 12) & 0xf) >= 5) {
			w[0] = CS_MAGIC_ETE;
			w[2] = 8;
			w[10] = v;
		} else {
			w[0] = CS_MAGIC_ETMV4;
			w[2] = 7;
		}
	}
	return (0);
}

/*
 * The event: Intel PT with branch tracing, TSC, and what the caps allow
 * (MTC at period 3, PTWRITE, power events; CYC is left off: it multiplies
 * the trace for cycle counts hwtrace does not use).
 */
static int
make_attr(struct perf_src *ps)
{
	struct perf_event_attr *a = &ps->attr;
	const struct perf_caps *c = &ps->pmu.caps;
	int rc;

	memset(ps->config, 0, sizeof(ps->config));
	if (ps->cs && (rc = cs_config(ps)) < 0)
		return (rc);
	(void)fmt_set(ps, "pt", 1);
	(void)fmt_set(ps, "branch", 1);
	(void)fmt_set(ps, "tsc", 1);
	if (c->mtc && (c->mtc_periods & (1u << 3)) &&
	    fmt_set(ps, "mtc", 1) == 0)
		(void)fmt_set(ps, "mtc_period", 3);
	if (c->psb_cyc && (c->psb_periods & (1u << 3)))
		(void)fmt_set(ps, "psb_period", 3);
	if (c->ptwrite)
		(void)fmt_set(ps, "ptw", 1);
	if (c->power_event_trace)
		(void)fmt_set(ps, "pwr_evt", 1);
	if (ps->src->cfg.no_ret_compression)
		(void)fmt_set(ps, "noretcomp", 1);

	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = (uint32_t)ps->pmu.type;
	a->config = ps->config[0];
	a->config1 = ps->config[1];
	a->config2 = ps->config[2];
	a->sample_period = 1;
	a->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
	    PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER;
	a->sample_id_all = 1;
	a->disabled = 1;
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
	a->mmap = 1;
	a->mmap2 = 1;
	a->comm = 1;
	a->comm_exec = 1;
	a->task = 1;
	a->context_switch = 1;
	if (!ps->cpu_mode) {
		/*
		 * The command from its exec, and every child it makes; an
		 * attached process's threads from the attach (ENABLE).
		 */
		a->enable_on_exec = ps->attach == 0;
		a->inherit = !ps->src->cfg.no_follow;
	}
	return (0);
}

#endif /* __linux__ */

/* ------------------------------------------------------------------ */
/* The source.                                                         */

#ifdef __linux__

static long
sys_perf_event_open(struct perf_event_attr *a, pid_t pid, int cpu, int group,
    unsigned long flags)
{
	return (syscall(SYS_perf_event_open, a, pid, cpu, group, flags));
}

static int
perf_backend_init(struct hwtr_src *src)
{
	struct perf_src *ps;

	if ((ps = calloc(1, sizeof(*ps))) == NULL)
		return (-HWTR_E_NOMEM);
	ps->src = src;
	ps->go_fd = -1;
	ps->child = -1;
	src->priv = ps;
	return (0);
}

static int
perf_backend_configure(struct hwtr_src *src, const struct hwtr_src_config *cfg)
{
	struct perf_src *ps = src->priv;
	char why[400];
	uint64_t want;
	long pg;
	int rc;

	src->cfg = *cfg;
	if (cfg->pid > 0) {
		if (kill(cfg->pid, 0) != 0 && errno == ESRCH) {
			perf_err(ps, "no process %d to attach to",
			    (int)cfg->pid);
			return (-HWTR_E_NOENT);
		}
		ps->attach = cfg->pid;
	} else if (cfg->argv == NULL || cfg->argv[0] == NULL) {
		perf_err(ps, "no command to trace");
		return (-HWTR_E_INVAL);
	}
	/*
	 * --trigger in a launched PIE: its address is known only after its
	 * exec, so the command stops there (ptrace) until the breakpoint is
	 * set.
	 */
	ps->exec_stop = cfg->trigger_name != NULL && cfg->trigger_pie &&
	    ps->attach == 0;
	why[0] = '\0';
	if (!perf_check(&ps->pmu, why, sizeof(why))) {
		perf_err(ps, "the perf source cannot trace here: %s", why);
		return (-HWTR_E_UNSUPPORTED);
	}
	ps->cs = strcmp(ps->pmu.name, "cs_etm") == 0;
	ps->ring = cfg->mode == HWTR_CAP_RING;
	ps->stop = cfg->mode == HWTR_CAP_STOP;
	ps->cpu_mode = cfg->all_cpus || cfg->cpus != NULL;
	if (cfg->cpus != NULL)
		rc = parse_cpus(ps, cfg->cpus);
	else
		rc = online_cpus(ps);
	if (rc < 0)
		return (rc);
	if (cfg->filter != NULL && (rc = check_filter(ps, cfg->filter)) < 0)
		return (rc);
	pg = sysconf(_SC_PAGESIZE);
	ps->pagesz = pg > 0 ? (size_t)pg : 4096;
	/* The AUX area: --buffer per CPU, a power of two of pages. */
	want = cfg->buffer_size ? cfg->buffer_size : 4u << 20;
	for (ps->aux_size = ps->pagesz; ps->aux_size < want;
	    ps->aux_size <<= 1)
		if (ps->aux_size >= (UINT64_C(1) << 32)) {
			perf_err(ps, "--buffer: at most 4G per CPU");
			return (-HWTR_E_INVAL);
		}
	if ((rc = make_attr(ps)) < 0)
		return (rc);
	src->version = HWTRACE_VERSION;
	src->pt.options = HWTR_PT_OPT_TSC | HWTR_PT_OPT_USER;
	return (0);
}

/* Open, map and filter the event of CPU @cpu for @pid (-1: all). */
static int
open_event(struct perf_src *ps, struct perf_ev *ev, pid_t pid, int cpu)
{
	struct perf_event_mmap_page *pg;
	size_t data = PERF_DATA_PAGES * ps->pagesz;
	int e;

	memset(ev, 0, sizeof(*ev));
	ev->cpu = cpu;
	ev->base = ev->aux = MAP_FAILED;
	ev->fd = (int)sys_perf_event_open(&ps->attr, pid, cpu, -1,
	    PERF_FLAG_FD_CLOEXEC);
	if (ev->fd < 0) {
		e = errno;
		perf_err(ps, "perf_event_open (the %s PMU, type %d, CPU %d): "
		    "%s%s", ps->pmu.name, ps->pmu.type, cpu, strerror(e),
		    e == EACCES || e == EPERM ? " (perf_event_paranoid, or "
		    "CAP_PERFMON for -a)" : e == EOPNOTSUPP ? " (is the PMU "
		    "busy with another tracer?)" : "");
		return (e == EACCES || e == EPERM ? -HWTR_E_PERM : -HWTR_E_IO);
	}
	if (ioctl(ev->fd, PERF_EVENT_IOC_ID, &ev->id) != 0)
		ev->id = 0;
	ev->base_len = ps->pagesz + data;
	ev->base = mmap(NULL, ev->base_len, PROT_READ | PROT_WRITE,
	    MAP_SHARED, ev->fd, 0);
	if (ev->base == MAP_FAILED) {
		perf_err(ps, "CPU %d: mapping the data area (%zu bytes): %s",
		    cpu, ev->base_len, strerror(errno));
		return (-HWTR_E_IO);
	}
	pg = ev->base;
	pg->aux_offset = ev->base_len;
	pg->aux_size = ps->aux_size;
	ev->aux_len = (size_t)ps->aux_size;
	/* Read-only is what asks the kernel to overwrite (snapshot). */
	ev->aux = mmap(NULL, ev->aux_len, ps->ring ? PROT_READ :
	    PROT_READ | PROT_WRITE, MAP_SHARED, ev->fd, (off_t)pg->aux_offset);
	if (ev->aux == MAP_FAILED) {
		e = errno;
		perf_err(ps, "CPU %d: mapping the AUX area (%zu bytes): %s%s",
		    cpu, ev->aux_len, strerror(e), e == EPERM || e == ENOMEM ?
		    " (more than perf_event_mlock_kb allows: a smaller "
		    "--buffer)" : "");
		return (-HWTR_E_IO);
	}
	if (hwtr_perf_ring_init(&ev->ring, ev->base, ps->pagesz, data,
	    ev->aux, ev->aux_len, ps->ring) < 0) {
		perf_err(ps, "CPU %d: the kernel's ring is not laid out as "
		    "asked", cpu);
		return (-HWTR_E_IO);
	}
	if (ps->filter[0] != '\0' &&
	    ioctl(ev->fd, PERF_EVENT_IOC_SET_FILTER, ps->filter) != 0) {
		perf_err(ps, "CPU %d: the kernel refused the address filter "
		    "'%s': %s", cpu, ps->filter, strerror(errno));
		return (-HWTR_E_INVAL);
	}
	return (0);
}

/*
 * An event whose output goes to ring @idx's (PERF_EVENT_IOC_SET_OUTPUT:
 * same CPU, same clock), with @attr for @pid on that ring's CPU: another
 * thread's Intel PT event (-p), or a --trigger breakpoint (@bp).
 */
static void reap_status(struct perf_src *, int);

/* The time conversion of the first mmap page. */
static void
time_conv(struct perf_src *ps)
{
	struct perf_event_mmap_page *pg = ps->ev[0].base;
	struct hwtr_src *src = ps->src;

	ps->time_shift = pg->time_shift;
	ps->time_mult = pg->time_mult;
	ps->time_zero = pg->time_zero;
	ps->cap_time_zero = pg->cap_user_time_zero;
	if (ps->cap_time_zero) {
		src->tconv.valid = 1;
		src->tconv.shift = ps->time_shift;
		src->tconv.mult = ps->time_mult;
		src->tconv.ns_zero = (int64_t)ps->time_zero;
	}
}

static int
open_xev(struct perf_src *ps, struct perf_event_attr *attr, pid_t pid,
    size_t idx, int bp)
{
	struct perf_xev *nx;
	uint64_t id = 0;
	int fd, e;

	if (ps->nxev == ps->xcap) {
		size_t nc = ps->xcap ? ps->xcap * 2 : 16;

		if ((nx = realloc(ps->xev, nc * sizeof(*nx))) == NULL)
			return (-HWTR_E_NOMEM);
		ps->xev = nx;
		ps->xcap = nc;
	}
	fd = (int)sys_perf_event_open(attr, pid, ps->ev[idx].cpu, -1,
	    PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		e = errno;
		/* A thread that ended since /proc listed it. */
		if (e == ESRCH && !bp && ps->attach > 0)
			return (0);
		perf_err(ps, "perf_event_open (%s, thread %d, CPU %d): %s%s",
		    bp ? "the --trigger breakpoint" : ps->pmu.name, (int)pid,
		    ps->ev[idx].cpu, strerror(e), bp && e == ENOSPC ? " (the "
		    "CPU's debug registers are taken)" : "");
		return (e == EACCES || e == EPERM ? -HWTR_E_PERM : -HWTR_E_IO);
	}
	ps->xev[ps->nxev].fd = fd;
	ps->xev[ps->nxev].idx = idx;
	ps->nxev++;
	if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, ps->ev[idx].fd) != 0) {
		perf_err(ps, "CPU %d: redirecting thread %d's %s into the "
		    "CPU's ring: %s", ps->ev[idx].cpu, (int)pid, bp ?
		    "breakpoint" : "event", strerror(errno));
		return (-HWTR_E_IO);
	}
	if (!bp && ps->filter[0] != '\0' &&
	    ioctl(fd, PERF_EVENT_IOC_SET_FILTER, ps->filter) != 0) {
		perf_err(ps, "CPU %d: the kernel refused the address filter "
		    "'%s': %s", ps->ev[idx].cpu, ps->filter, strerror(errno));
		return (-HWTR_E_INVAL);
	}
	if (bp) {
		uint64_t *ni;

		if (ioctl(fd, PERF_EVENT_IOC_ID, &id) != 0) {
			perf_err(ps, "the --trigger breakpoint's id: %s",
			    strerror(errno));
			return (-HWTR_E_IO);
		}
		if ((ni = realloc(ps->bp_ids, (ps->nbp + 1) *
		    sizeof(*ni))) == NULL)
			return (-HWTR_E_NOMEM);
		ps->bp_ids = ni;
		ps->bp_ids[ps->nbp++] = id;
	}
	return (0);
}

/*
 * --trigger: a hardware execution breakpoint (PERF_TYPE_BREAKPOINT,
 * HW_BREAKPOINT_X) at the function's runtime address, for @pid on every
 * ring's CPU, inherited as the trace is, its samples written into the
 * CPU's data area, where the reader sees them.  Why a breakpoint event
 * and not ptrace's int3 (as the step source): the program keeps running
 * natively and untouched (no stop, no code patched, nothing a debugger
 * or the program's own checksums would see), the kernel follows it into
 * every thread and child with the trace, and the hit is a record in the
 * ring already read.  The cost: a debug register per CPU (x86 has four;
 * ENOSPC when taken), and the snapshot is taken when the reader sees the
 * sample (within its 50 ms poll), so the saved ring goes on a little past
 * the hit.
 */
static int
open_trigger(struct perf_src *ps, pid_t pid)
{
	struct perf_event_attr a;
	size_t i;
	int rc;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_BREAKPOINT;
	a.bp_type = HW_BREAKPOINT_X;
	a.bp_addr = ps->trig_addr;
	a.bp_len = sizeof(long);
	a.sample_period = 1;
	a.wakeup_events = 1;
	a.sample_type = ps->attr.sample_type;
	a.sample_id_all = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	a.disabled = 1;
	a.enable_on_exec = ps->attach == 0 && !ps->exec_stop;
	a.inherit = !ps->src->cfg.no_follow;
	for (i = 0; i < ps->nev; i++)
		if ((rc = open_xev(ps, &a, pid, i, 1)) < 0)
			return (rc);
	return (0);
}

/*
 * The runtime address of --trigger: a PIE's where process @pid (attached,
 * or stopped after its exec) loaded it.
 */
static int
trigger_addr(struct perf_src *ps, pid_t pid)
{
	char path[64], exe[PATH_MAX], line[PATH_MAX + 128];
	uint64_t lo, hi, off;
	FILE *fp;
	ssize_t n;

	if (!ps->src->cfg.trigger_pie) {
		ps->trig_addr = ps->src->cfg.trigger_vaddr;
		return (0);
	}
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	if ((n = readlink(path, exe, sizeof(exe) - 1)) <= 0)
		goto fail;
	exe[n] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if ((fp = fopen(path, "re")) == NULL)
		goto fail;
	while (fgets(line, sizeof(line), fp) != NULL) {
		char *name = strchr(line, '/');

		if (name == NULL)
			continue;
		name[strcspn(name, "\n")] = '\0';
		if (strcmp(name, exe) == 0 && sscanf(line, "%" SCNx64 "-%"
		    SCNx64 " %*s %" SCNx64, &lo, &hi, &off) == 3 && off == 0) {
			ps->trig_addr = lo + ps->src->cfg.trigger_vaddr;
			break;
		}
	}
	fclose(fp);
	if (ps->trig_addr != 0)
		return (0);
fail:
	perf_err(ps, "--trigger %s: where process %d loaded its executable "
	    "is not in /proc/%d/maps", ps->src->cfg.trigger_name,
	    (int)pid, (int)pid);
	return (-HWTR_E_IO);
}

/*
 * -p: the threads of the attached process, from /proc/PID/task, into
 * *@tids (@n of them); 0, or -HWTR_E_*.
 */
static int
list_tids(pid_t pid, pid_t **tids, size_t *n)
{
	char path[64];
	struct dirent *d;
	pid_t *nt;
	size_t cap = 0;
	DIR *dir;

	*n = 0;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if ((dir = opendir(path)) == NULL)
		return (-HWTR_E_NOENT);
	while ((d = readdir(dir)) != NULL) {
		if (d->d_name[0] < '0' || d->d_name[0] > '9')
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 16;
			if ((nt = realloc(*tids, cap * sizeof(*nt))) == NULL) {
				closedir(dir);
				return (-HWTR_E_NOMEM);
			}
			*tids = nt;
		}
		(*tids)[(*n)++] = (pid_t)atoi(d->d_name);
	}
	closedir(dir);
	return (*n > 0 ? 0 : -HWTR_E_NOENT);
}

/*
 * -p: one event per thread and CPU (the kernel maps no ring of an
 * inherited event of one thread on every CPU), the first thread's owning
 * each CPU's ring, the others' redirected into it, as perf record -p
 * does.  inherit follows the threads and processes they make from now
 * on; inherit cannot reach threads that existed before, so each has its
 * own events, and threads made while this runs are caught by listing
 * /proc again until no new one appears.
 */
static int
attach_events(struct perf_src *ps)
{
	pid_t *tids = NULL, *seen = NULL, *ns;
	size_t ntid = 0, nseen = 0, i, j, k;
	int rc, round, fresh;

	for (round = 0; round < 10; round++) {
		if ((rc = list_tids(ps->attach, &tids, &ntid)) < 0) {
			perf_err(ps, "process %d: its threads are not in "
			    "/proc/%d/task: has it ended?", (int)ps->attach,
			    (int)ps->attach);
			goto out;
		}
		fresh = 0;
		for (j = 0; j < ntid; j++) {
			for (k = 0; k < nseen; k++)
				if (seen[k] == tids[j])
					break;
			if (k < nseen)
				continue;
			fresh = 1;
			if ((ns = realloc(seen, (nseen + 1) *
			    sizeof(*ns))) == NULL) {
				rc = -HWTR_E_NOMEM;
				goto out;
			}
			seen = ns;
			seen[nseen++] = tids[j];
			for (i = 0; i < ps->ncpu; i++) {
				if (ps->nev < ps->ncpu) {
					rc = open_event(ps, &ps->ev[i],
					    tids[j], ps->cpus[i]);
					ps->nev++;
				} else
					rc = open_xev(ps, &ps->attr, tids[j],
					    i, 0);
				if (rc < 0)
					goto out;
			}
			if (ps->trig_addr != 0 &&
			    (rc = open_trigger(ps, tids[j])) < 0)
				goto out;
		}
		if (!fresh)
			break;
	}
	hwtr_logf(&ps->src->cfg.log, HWTR_LOG_INFO, "attached to %zu threads "
	    "of process %d on %zu CPUs", nseen, (int)ps->attach, ps->ncpu);
	rc = 0;
out:
	free(tids);
	free(seen);
	return (rc);
}

/*
 * A launched PIE's --trigger: the command is stopped after its exec
 * (PTRACE_TRACEME, SIGTRAP); its breakpoint is set where the executable
 * was loaded, enabled, and the command let go (PTRACE_DETACH: it is not
 * traced from then on).  Its trace was enabled by the exec already.
 */
static int
exec_trigger(struct perf_src *ps)
{
	size_t i;
	int st, rc;

	if (waitpid(ps->child, &st, 0) != ps->child) {
		perf_err(ps, "waiting for '%s' at its exec: %s",
		    ps->src->cfg.argv[0], strerror(errno));
		return (-HWTR_E_IO);
	}
	if (!WIFSTOPPED(st)) {
		reap_status(ps, st);
		perf_err(ps, "'%s' ended at its exec", ps->src->cfg.argv[0]);
		return (-HWTR_E_IO);
	}
	if ((rc = trigger_addr(ps, ps->child)) == 0 &&
	    (rc = open_trigger(ps, ps->child)) == 0)
		for (i = 0; i < ps->nxev; i++)
			if (ioctl(ps->xev[i].fd, PERF_EVENT_IOC_ENABLE,
			    0) != 0) {
				perf_err(ps, "enabling the --trigger "
				    "breakpoint: %s", strerror(errno));
				rc = -HWTR_E_IO;
				break;
			}
	if (ptrace(PTRACE_DETACH, ps->child, NULL, NULL) != 0 && rc == 0) {
		perf_err(ps, "letting '%s' go after its exec: %s",
		    ps->src->cfg.argv[0], strerror(errno));
		rc = -HWTR_E_IO;
	}
	return (rc);
}

static int
perf_backend_enable(struct hwtr_src *src)
{
	struct perf_src *ps = src->priv;
	int go[2] = { -1, -1 }, ef[2] = { -1, -1 }, err, fd, rc;
	const char *tmp;
	size_t i;
	ssize_t r;
	char c = 0;

	if ((tmp = getenv("TMPDIR")) == NULL || *tmp == '\0')
		tmp = "/tmp";
	snprintf(ps->rec_path, sizeof(ps->rec_path), "%s/hwtrace-perf-XXXXXX",
	    tmp);
	if ((fd = mkostemp(ps->rec_path, O_CLOEXEC)) < 0) {
		perf_err(ps, "cannot create the recording '%s': %s",
		    ps->rec_path, strerror(errno));
		ps->rec_path[0] = '\0';
		return (-HWTR_E_IO);
	}
	if ((ps->rec = fdopen(fd, "w")) == NULL) {
		close(fd);
		return (-HWTR_E_NOMEM);
	}
	if ((ps->ev = calloc(ps->ncpu, sizeof(*ps->ev))) == NULL) {
		rc = -HWTR_E_NOMEM;
		goto fail;
	}
	if (src->cfg.trigger_name != NULL && !ps->exec_stop &&
	    (rc = trigger_addr(ps, ps->attach)) < 0)
		goto fail;
	if (ps->attach > 0) {
		src->first_pid = ps->attach;
		if (ps->cpu_mode) {
			for (i = 0; i < ps->ncpu; i++) {
				rc = open_event(ps, &ps->ev[i], -1,
				    ps->cpus[i]);
				ps->nev++;
				if (rc < 0)
					goto fail;
			}
			if (ps->trig_addr != 0 &&
			    (rc = open_trigger(ps, ps->attach)) < 0)
				goto fail;
		} else if ((rc = attach_events(ps)) < 0)
			goto fail;
		time_conv(ps);
		rec_start(ps);
		if (ev_ioctl(ps, SIZE_MAX, PERF_EVENT_IOC_ENABLE) != 0) {
			perf_err(ps, "enabling the events: %s",
			    strerror(errno));
			rc = -HWTR_E_IO;
			goto fail;
		}
		ps->running = 1;
		return (0);
	}
	/* The command, stopped before its exec until the events exist. */
	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(ef, O_CLOEXEC) < 0) {
		perf_err(ps, "pipe: %s", strerror(errno));
		rc = -HWTR_E_IO;
		goto fail;
	}
	if ((ps->child = fork()) < 0) {
		perf_err(ps, "fork: %s", strerror(errno));
		rc = -HWTR_E_IO;
		goto fail;
	}
	if (ps->child == 0) {
		close(go[1]);
		close(ef[0]);
		(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		/* Stopped by its exec, for a PIE's --trigger address. */
		if (ps->exec_stop && ptrace(PTRACE_TRACEME, 0, NULL,
		    NULL) != 0) {
			err = -errno;
			(void)!write(ef[1], &err, sizeof(err));
			_exit(127);
		}
		execvp(src->cfg.argv[0], src->cfg.argv);
		err = errno;
		(void)!write(ef[1], &err, sizeof(err));
		_exit(127);
	}
	close(go[0]);
	go[0] = -1;
	close(ef[1]);
	ef[1] = -1;
	ps->go_fd = go[1];
	go[1] = -1;
	src->first_pid = ps->child;

	for (i = 0; i < ps->ncpu; i++) {
		rc = open_event(ps, &ps->ev[i], ps->cpu_mode ? -1 : ps->child,
		    ps->cpus[i]);
		ps->nev++;
		if (rc < 0)
			goto fail;
	}
	/* The breakpoint is enabled by the exec, as the trace. */
	if (ps->trig_addr != 0 && !ps->exec_stop &&
	    (rc = open_trigger(ps, ps->child)) < 0)
		goto fail;
	time_conv(ps);
	rec_start(ps);
	if (ps->cpu_mode)
		for (i = 0; i < ps->nev; i++)
			if (ioctl(ps->ev[i].fd, PERF_EVENT_IOC_ENABLE, 0) != 0) {
				perf_err(ps, "CPU %d: enabling the event: %s",
				    ps->ev[i].cpu, strerror(errno));
				rc = -HWTR_E_IO;
				goto fail;
			}
	/* Go: its exec enables the events (thread mode). */
	if (write(ps->go_fd, &c, 1) != 1) {
		perf_err(ps, "cannot start the command: %s", strerror(errno));
		rc = -HWTR_E_IO;
		goto fail;
	}
	close(ps->go_fd);
	ps->go_fd = -1;
	r = read(ef[0], &err, sizeof(err));
	close(ef[0]);
	ef[0] = -1;
	if (r == (ssize_t)sizeof(err) && err < 0) {
		(void)waitpid(ps->child, NULL, 0);
		ps->reaped = 1;
		perf_err(ps, "--trigger %s: stopping '%s' at its exec: ptrace "
		    "refused: %s", src->cfg.trigger_name, src->cfg.argv[0],
		    strerror(-err));
		return (-HWTR_E_PERM);
	}
	if (r == (ssize_t)sizeof(err)) {
		(void)waitpid(ps->child, NULL, 0);
		ps->reaped = 1;
		perf_err(ps, "cannot run '%s': %s", src->cfg.argv[0],
		    strerror(err));
		src->exec_errno = err;
		return (err == ENOENT ? -HWTR_E_NOENT : -HWTR_E_PERM);
	}
	if (ps->exec_stop && (rc = exec_trigger(ps)) < 0)
		return (rc);
	ps->running = 1;
	return (0);
fail:
	for (i = 0; i < 2; i++) {
		if (go[i] >= 0)
			close(go[i]);
		if (ef[i] >= 0)
			close(ef[i]);
	}
	return (rc);
}

/* The command ended (or was ended): its status into the source. */
static void
reap_status(struct perf_src *ps, int st)
{
	ps->reaped = 1;
	if (WIFEXITED(st)) {
		ps->src->exit_kind = HWTR_EXIT_CODE;
		ps->src->exit_value = WEXITSTATUS(st);
	} else if (WIFSIGNALED(st)) {
		ps->src->exit_kind = HWTR_EXIT_SIGNAL;
		ps->src->exit_value = WTERMSIG(st);
	}
}

/* Whether process @pid runs (not gone, not a zombie). */
static int
proc_alive(pid_t pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return (0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return (0);
	buf[n] = '\0';
	/* "pid (comm) S ...": the state after the last ')'. */
	if ((p = strrchr(buf, ')')) == NULL || p[1] != ' ')
		return (1);
	return (p[2] != 'Z' && p[2] != 'X');
}

static int
perf_backend_read(struct hwtr_src *src)
{
	struct perf_src *ps = src->priv;
	struct pollfd pfd[64];
	size_t i, n;
	pid_t w;
	int st, rc;

	n = ps->nev < HWTR_NELEM(pfd) ? ps->nev : HWTR_NELEM(pfd);
	for (i = 0; i < n; i++) {
		pfd[i].fd = ps->ev[i].fd;
		pfd[i].events = POLLIN;
		pfd[i].revents = 0;
	}
	(void)poll(pfd, (nfds_t)n, 50);
	if ((rc = drain(ps)) < 0)
		return (rc);
	if (ps->ring && src->cfg.snapshot != NULL &&
	    *src->cfg.snapshot != ps->snap_seen) {
		ps->snap_seen = *src->cfg.snapshot;
		hwtr_logf(&src->cfg.log, HWTR_LOG_INFO, "SIGUSR2: snapshot of "
		    "%zu AUX areas", ps->nev);
		if ((rc = snapshot(ps, 0)) < 0)
			return (rc);
	}
	/* Hits seen in one read make one snapshot: nothing new between. */
	if (ps->trig_hits > 0 && !ps->finished) {
		hwtr_logf(&src->cfg.log, HWTR_LOG_INFO, "trigger '%s' reached "
		    "(%d hits): snapshot of %zu AUX areas",
		    src->cfg.trigger_name, ps->trig_hits, ps->nev);
		ps->trig_hits = 0;
		if (ps->ring && (rc = snapshot(ps, 0)) < 0)
			return (rc);
	}
	if (ps->attach > 0) {
		/* Its end: gone, or a zombie its parent has not reaped. */
		if (!proc_alive(ps->attach)) {
			hwtr_logf(&src->cfg.log, HWTR_LOG_INFO, "process %d "
			    "ended", (int)ps->attach);
			if ((rc = finish(ps)) < 0)
				return (rc);
			return (1);
		}
		return (0);
	}
	if (ps->reaped)
		return (1);
	w = waitpid(ps->child, &st, WNOHANG);
	if (w == ps->child && (WIFEXITED(st) || WIFSIGNALED(st))) {
		reap_status(ps, st);
		if ((rc = finish(ps)) < 0)
			return (rc);
		return (1);
	}
	return (0);
}

static int
perf_backend_disable(struct hwtr_src *src)
{
	struct perf_src *ps = src->priv;
	int st;

	if (ps->child > 0 && !ps->reaped) {
		(void)kill(ps->child, SIGKILL);
		if (waitpid(ps->child, &st, 0) == ps->child)
			reap_status(ps, st);
		else
			ps->reaped = 1;
	}
	/* Nothing to save when enable failed (a ring may be half set up). */
	if (!ps->running || ps->rec == NULL)
		return (0);
	return (finish(ps));
}

static int
perf_backend_thread_alloc(struct hwtr_src *src, struct hwtr_src_thread *thr)
{
	return (0);
}

static void
perf_backend_thread_free(struct hwtr_src *src, struct hwtr_src_thread *thr)
{
}

static void
perf_backend_deinit(struct hwtr_src *src)
{
	struct perf_src *ps = src->priv;
	size_t i;

	if (ps == NULL)
		return;
	if (ps->child > 0 && !ps->reaped) {
		(void)kill(ps->child, SIGKILL);
		(void)waitpid(ps->child, NULL, 0);
	}
	if (ps->go_fd >= 0)
		close(ps->go_fd);
	for (i = 0; i < ps->nev; i++) {
		struct perf_ev *ev = &ps->ev[i];

		hwtr_perf_ring_fini(&ev->ring);
		if (ev->aux != MAP_FAILED && ev->aux != NULL)
			munmap(ev->aux, ev->aux_len);
		if (ev->base != MAP_FAILED && ev->base != NULL)
			munmap(ev->base, ev->base_len);
		if (ev->fd >= 0)
			close(ev->fd);
	}
	free(ps->ev);
	for (i = 0; i < ps->nxev; i++)
		close(ps->xev[i].fd);
	free(ps->xev);
	free(ps->bp_ids);
	free(ps->etm);
	for (i = 0; i < ps->npaths; i++)
		free(ps->paths[i].path);
	free(ps->paths);
	if (ps->rec != NULL)
		fclose(ps->rec);
	/*
	 * The session imported the recording before this (it reads
	 * src->recording first); it is a temporary either way.
	 */
	if (ps->rec_path[0] != '\0')
		unlink(ps->rec_path);
	src->recording = NULL;
	free(ps);
	src->priv = NULL;
}

#else /* !__linux__ */

static int
perf_backend_init(struct hwtr_src *src)
{
	return (0);
}

static int
perf_backend_configure(struct hwtr_src *src, const struct hwtr_src_config *cfg)
{
	snprintf(src->errmsg, sizeof(src->errmsg), "the perf source needs "
	    "Linux perf_event");
	return (-HWTR_E_UNSUPPORTED);
}

static int
perf_backend_enable(struct hwtr_src *src)
{
	return (-HWTR_E_UNSUPPORTED);
}

static int
perf_backend_read(struct hwtr_src *src)
{
	return (-HWTR_E_UNSUPPORTED);
}

static int
perf_backend_disable(struct hwtr_src *src)
{
	return (0);
}

static int
perf_backend_thread_alloc(struct hwtr_src *src, struct hwtr_src_thread *thr)
{
	return (0);
}

static void
perf_backend_thread_free(struct hwtr_src *src, struct hwtr_src_thread *thr)
{
}

static void
perf_backend_deinit(struct hwtr_src *src)
{
}

#endif /* __linux__ */

const struct hwtr_src_ops hwtr_perf_ops = {
	.name = "perf",
	.init = perf_backend_init,
	.configure = perf_backend_configure,
	.enable = perf_backend_enable,
	.read = perf_backend_read,
	.disable = perf_backend_disable,
	.thread_alloc = perf_backend_thread_alloc,
	.thread_free = perf_backend_thread_free,
	.deinit = perf_backend_deinit,
};
