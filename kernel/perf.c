/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The "perf" trace source: Linux perf_event_open(2) with the intel_pt or
 * cs_etm PMU and an AUX area, read with kernel/perf_aux.c.  The source's
 * files, and which calls which, are listed in kernel/perf_int.h.
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
#include <sys/wait.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hwtr_common.h"
#include "perf_int.h"

#ifdef __linux__
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#endif

#ifdef __linux__

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

	if (perf_read_line("/sys/devices/system/cpu/online", line,
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
	char why[HWTR_ERRMSG_MAX];
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
	if ((rc = perf_make_attr(ps)) < 0)
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

/*
 * -p: the attached process's events (or, with -a or --cpu, its CPUs'),
 * the recording's first lines, and every event enabled at once.
 */
static int
enable_attached(struct perf_src *ps)
{
	size_t i;
	int rc;

	ps->src->first_pid = ps->attach;
	if (ps->cpu_mode) {
		for (i = 0; i < ps->ncpu; i++) {
			rc = open_event(ps, &ps->ev[i], -1, ps->cpus[i]);
			ps->nev++;
			if (rc < 0)
				return (rc);
		}
		if (ps->trig_addr != 0 &&
		    (rc = open_trigger(ps, ps->attach)) < 0)
			return (rc);
	} else if ((rc = attach_events(ps)) < 0)
		return (rc);
	time_conv(ps);
	perf_rec_start(ps);
	if (perf_ev_ioctl(ps, SIZE_MAX, PERF_EVENT_IOC_ENABLE) != 0) {
		perf_err(ps, "enabling the events: %s", strerror(errno));
		return (-HWTR_E_IO);
	}
	ps->running = 1;
	return (0);
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
	if (ps->attach > 0)
		return (enable_attached(ps));
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
		hwtr_sig_restore_ignored();
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
	perf_rec_start(ps);
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
	if ((rc = perf_drain(ps)) < 0)
		return (rc);
	if (ps->ring && src->cfg.snapshot != NULL &&
	    *src->cfg.snapshot != ps->snap_seen) {
		ps->snap_seen = *src->cfg.snapshot;
		hwtr_logf(&src->cfg.log, HWTR_LOG_INFO, "SIGUSR2: snapshot of "
		    "%zu AUX areas", ps->nev);
		if ((rc = perf_snapshot(ps, 0)) < 0)
			return (rc);
	}
	/* Hits seen in one read make one snapshot: nothing new between. */
	if (ps->trig_hits > 0 && !ps->finished) {
		hwtr_logf(&src->cfg.log, HWTR_LOG_INFO, "trigger '%s' reached "
		    "(%d hits): snapshot of %zu AUX areas",
		    src->cfg.trigger_name, ps->trig_hits, ps->nev);
		ps->trig_hits = 0;
		if (ps->ring && (rc = perf_snapshot(ps, 0)) < 0)
			return (rc);
	}
	if (ps->attach > 0) {
		/* Its end: gone, or a zombie its parent has not reaped. */
		if (!proc_alive(ps->attach)) {
			hwtr_logf(&src->cfg.log, HWTR_LOG_INFO, "process %d "
			    "ended", (int)ps->attach);
			if ((rc = perf_finish(ps)) < 0)
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
		if ((rc = perf_finish(ps)) < 0)
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
	return (perf_finish(ps));
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

static void
perf_backend_deinit(struct hwtr_src *src)
{
}

#endif /* __linux__ */

/* Threads need nothing of their own on either side. */
static int
perf_backend_thread_alloc(struct hwtr_src *src, struct hwtr_src_thread *thr)
{
	return (0);
}

static void
perf_backend_thread_free(struct hwtr_src *src, struct hwtr_src_thread *thr)
{
}

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
