/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * A simulated perf_event kernel for the perf source, preloaded into
 * hwtrace (LD_PRELOAD) by tests/capture/t_perfcap.sh: it answers
 * syscall(SYS_perf_event_open), mmap of the event's ring and AUX area,
 * ioctl and close on its events, and plays the kernel's part of the ring
 * protocol (struct perf_event_mmap_page of <linux/perf_event.h>) from a
 * producer thread, as tests/kernel/t_perfring.c does in-process.  Nothing
 * of hwtrace knows it is there: the source makes its real calls.
 *
 * The producer waits for the traced program (HWTRACE_FAKEPERF_EXE) to
 * exist after its exec, then writes what the kernel would: a COMM (exec)
 * record, an MMAP2 record per executable mapping of /proc/PID/maps, an
 * ITRACE_START record (thread mode) or a SWITCH_CPU_WIDE record (CPU
 * mode), and real Intel PT made by the project's encoder: tracing enabled at HWTRACE_FAKEPERF_FROM and
 * disabled at HWTRACE_FAKEPERF_TO (hex addresses), PERF_RECORD_AUX
 * records for each span.  HWTRACE_FAKEPERF_FLAGS (a number) sets the AUX
 * flags of a second span; HWTRACE_FAKEPERF_LOST writes a LOST record of
 * that many records; HWTRACE_FAKEPERF_SPANS writes that many spans in all
 * (ring mode tests overwrite with them); HWTRACE_FAKEPERF_SPLIT publishes
 * each span in two parts, the first ending inside a packet, as the
 * kernel's head may; HWTRACE_FAKEPERF_PACE=MS waits that many
 * milliseconds after each span; HWTRACE_FAKEPERF_PIE makes FROM and TO
 * relative to where the program's executable is loaded (a PIE).  A
 * program being ptraced (the perf source stops a PIE at its exec to set
 * its --trigger breakpoint) runs nothing: the producer waits until it is
 * let go.  No span is written while the event is
 * disabled (PERF_EVENT_IOC_DISABLE).  Then it creates
 * HWTRACE_FAKEPERF_DONE, which the fixture waits for.
 *
 * Breakpoint events (PERF_TYPE_BREAKPOINT, HW_BREAKPOINT_X, as --trigger
 * opens them) are the simulated program's: when a span's range
 * [FROM, TO] holds a breakpoint's bp_addr, the program "reaches" it as
 * the span starts: a PERF_RECORD_SAMPLE of the breakpoint (its id first)
 * goes into the data area its output was redirected to
 * (PERF_EVENT_IOC_SET_OUTPUT), and the producer waits (3 s at most) for
 * the reader to disable and enable the trace again (a snapshot), logging
 * whether it did.
 *
 * HWTRACE_FAKEPERF_AUXFILE=PATH: each span's trace is that file's bytes
 * (a real recording's AUX data, as CoreSight ETM) instead of encoded PT,
 * written once the program has mapped HWTRACE_FAKEPERF_MAPPED (a path, if
 * set) so that its MMAP2 record is there.
 *
 * HWTRACE_FAKEPERF_LAG=MS: an ENABLE of a trace event returns MS
 * milliseconds after it took effect, as a tracer preempted between its
 * ioctls while the program runs on.
 *
 * HWTRACE_FAKEPERF_BUSY=N refuses the event of CPU N (EOPNOTSUPP, as a PMU
 * another tracer holds).
 *
 * HWTRACE_FAKEPERF_LOG receives one line per call: the attr's type,
 * config and bits, pid and cpu, the AUX mapping, every ioctl with its
 * filter string.
 */

#include <linux/perf_event.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hwtrace.h"
#include "hwtr_kernel.h"

#define MAXEV		64
#define PAGE		4096
#define TIME_ZERO	5000000000ull
#define TIME_SHIFT	10
#define TIME_MULT	512		/* ns = TIME_ZERO + tsc / 2 */

struct fev {
	int		fd;
	pid_t		pid;
	int		cpu;
	uint64_t	id;
	struct perf_event_attr attr;
	uint8_t		*base;
	size_t		base_len;
	uint8_t		*aux;
	size_t		aux_len;
	int		overwrite;
	int		enabled;
	int		nenable;	/* ENABLE ioctls so far */
	struct fev	*out;		/* PERF_EVENT_IOC_SET_OUTPUT */
	pthread_t	thr;
	int		started;
};

static struct fev evs[MAXEV];
static int nev;
static pthread_mutex_t mtx = PTHREAD_MUTEX_INITIALIZER;
static int producing;

static void flog(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void
flog(const char *fmt, ...)
{
	const char *p = getenv("HWTRACE_FAKEPERF_LOG");
	va_list ap;
	FILE *fp;

	if (p == NULL || (fp = fopen(p, "a")) == NULL)
		return;
	va_start(ap, fmt);
	vfprintf(fp, fmt, ap);
	va_end(ap);
	fputc('\n', fp);
	fclose(fp);
}

static struct fev *
find_fd(int fd)
{
	int i;

	for (i = 0; i < nev; i++)
		if (evs[i].fd == fd)
			return (&evs[i]);
	return (NULL);
}

static uint64_t
ns_of(uint64_t tsc)
{
	return (TIME_ZERO + ((tsc * TIME_MULT) >> TIME_SHIFT));
}

/* ------------------------------------------------------------------ */
/* The kernel's side of the data area.                                 */

static void
data_put(struct fev *e, const void *rec, size_t len)
{
	struct perf_event_mmap_page *pg = (void *)e->base;
	uint64_t size = e->base_len - PAGE, head, tail, i;
	const uint8_t *p = rec;

	head = pg->data_head;
	tail = __atomic_load_n(&pg->data_tail, __ATOMIC_ACQUIRE);
	if (head - tail + len > size)
		return;		/* full: a real kernel counts it LOST */
	for (i = 0; i < len; i++)
		e->base[PAGE + ((head + i) & (size - 1))] = p[i];
	__atomic_store_n(&pg->data_head, head + len, __ATOMIC_RELEASE);
}

/* A record: header, @body, the sample_id of TID|TIME|CPU|IDENTIFIER. */
static void
record(struct fev *e, uint32_t type, uint16_t misc, const void *body,
    size_t blen, pid_t pid, uint64_t tsc)
{
	uint8_t buf[4096];
	struct perf_event_header h;
	uint32_t u[2];
	uint64_t v;
	size_t n = sizeof(h);

	if (blen + 8 + 32 > sizeof(buf))
		return;
	memcpy(buf + n, body, blen);
	n += blen;
	u[0] = (uint32_t)pid;
	u[1] = (uint32_t)pid;
	memcpy(buf + n, u, 8);
	n += 8;
	v = ns_of(tsc);
	memcpy(buf + n, &v, 8);
	n += 8;
	u[0] = (uint32_t)e->cpu;
	u[1] = 0;
	memcpy(buf + n, u, 8);
	n += 8;
	memcpy(buf + n, &e->id, 8);
	n += 8;
	h.type = type;
	h.misc = misc;
	h.size = (uint16_t)n;
	memcpy(buf, &h, sizeof(h));
	data_put(e, buf, n);
}

/* ------------------------------------------------------------------ */
/* The kernel's side of the AUX area.                                  */

struct pt {
	uint8_t		buf[1 << 16];
	size_t		len;
};

static int
pt_out(void *arg, const void *b, size_t len)
{
	struct pt *pt = arg;

	if (pt->len + len > sizeof(pt->buf))
		return (-HWTR_E_LIMIT);
	memcpy(pt->buf + pt->len, b, len);
	pt->len += len;
	return (0);
}

/*
 * One span of trace: PSB+, TIP.PGE at @from, TIP.PGD at @to; into the
 * AUX area (stream mode: what does not fit before aux_tail is lost and
 * the record says TRUNCATED), then its AUX record with @flags.
 */
static void
aux_span(struct fev *e, uint64_t from, uint64_t to, uint64_t tsc,
    uint64_t flags, pid_t pid)
{
	struct perf_event_mmap_page *pg = (void *)e->base;
	struct hwtr_ptenc_opts o = { .psb_period = 4096 };
	struct pt pt;
	struct hwtr_ptenc_out out = { pt_out, NULL, &pt };
	struct hwtr_ptenc *enc;
	const char *file;
	uint64_t head, tail, n, i;
	struct {
		uint64_t offset, size, flags;
	} ar;

	pt.len = 0;
	if ((file = getenv("HWTRACE_FAKEPERF_AUXFILE")) != NULL) {
		FILE *fp = fopen(file, "re");

		if (fp == NULL) {
			flog("aux file '%s': %s", file, strerror(errno));
			return;
		}
		pt.len = fread(pt.buf, 1, sizeof(pt.buf), fp);
		fclose(fp);
	} else {
		if (hwtr_ptenc_new(&enc, &o, &out) < 0)
			return;
		hwtr_ptenc_enable(enc, from, 1, tsc);
		hwtr_ptenc_disable(enc, to, tsc + 100);
		hwtr_ptenc_flush(enc);
		hwtr_ptenc_free(enc);
	}
	head = pg->aux_head;
	n = pt.len;
	if (!e->overwrite) {
		tail = __atomic_load_n(&pg->aux_tail, __ATOMIC_ACQUIRE);
		if (head - tail + n > e->aux_len) {
			n = e->aux_len - (head - tail);
			flags |= PERF_AUX_FLAG_TRUNCATED;
		}
	} else
		flags |= PERF_AUX_FLAG_OVERWRITE;
	for (i = 0; i < n; i++) {
		e->aux[(head + i) & (e->aux_len - 1)] = pt.buf[i];
		/*
		 * HWTRACE_FAKEPERF_SPLIT: publish the first 13 bytes (inside
		 * the PSB) and wait, so that the reader takes them alone.
		 */
		if (i == 12 && getenv("HWTRACE_FAKEPERF_SPLIT") != NULL) {
			struct timespec ts = { 0, 300000000 };

			__atomic_store_n(&pg->aux_head, head + 13,
			    __ATOMIC_RELEASE);
			nanosleep(&ts, NULL);
		}
	}
	__atomic_store_n(&pg->aux_head, head + n, __ATOMIC_RELEASE);
	flog("aux span %" PRIu64 " bytes at %" PRIu64, n, head);
	ar.offset = head;
	ar.size = n;
	ar.flags = flags;
	record(e, PERF_RECORD_AUX, 0, &ar, sizeof(ar), pid, tsc);
}

/* ------------------------------------------------------------------ */
/* The producer.                                                       */

/* /proc/@pid/@file, open for reading, or NULL. */
static FILE *
proc_open(pid_t pid, const char *file)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	return (fopen(path, "re"));
}

/* 1 when /proc/@pid/maps maps @path. */
static int
has_map(pid_t pid, const char *path)
{
	char line[1024];
	FILE *fp;
	int found = 0;

	if ((fp = proc_open(pid, "maps")) == NULL)
		return (0);
	while (!found && fgets(line, sizeof(line), fp) != NULL)
		found = strstr(line, path) != NULL;
	fclose(fp);
	return (found);
}

/*
 * 1 when /proc/@pid/maps maps @path executable.  /proc/PID/exe names the
 * new program as soon as exec has replaced the mm, before the ELF loader
 * has mapped its segments: a reader that comes in between sees none.
 */
static int
has_xmap(pid_t pid, const char *path)
{
	char line[PATH_MAX + 256], perm[8], file[PATH_MAX];
	FILE *fp;
	int found = 0;

	if ((fp = proc_open(pid, "maps")) == NULL)
		return (0);
	while (!found && fgets(line, sizeof(line), fp) != NULL)
		found = sscanf(line, "%*x-%*x %7s %*x %*x:%*x %*u %4095s",
		    perm, file) == 2 && perm[2] == 'x' &&
		    strcmp(file, path) == 0;
	fclose(fp);
	return (found);
}

static uint64_t
env_u64(const char *name, int base)
{
	const char *v = getenv(name);

	return (v != NULL ? strtoull(v, NULL, base) : 0);
}

/*
 * The process running @exe (after its exec) in our working directory, or
 * -1: tests run in parallel, each in its own directory, and may run the
 * same fixture at the same time.
 */
static pid_t
find_exe(const char *exe)
{
	char path[300], got[PATH_MAX], cwd[PATH_MAX], pcwd[PATH_MAX];
	struct dirent *d;
	pid_t pid = -1;
	ssize_t n;
	DIR *dir;

	if (getcwd(cwd, sizeof(cwd)) == NULL ||
	    (dir = opendir("/proc")) == NULL)
		return (-1);
	while ((d = readdir(dir)) != NULL) {
		if (d->d_name[0] < '0' || d->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/exe", d->d_name);
		n = readlink(path, got, sizeof(got) - 1);
		if (n <= 0)
			continue;
		got[n] = '\0';
		snprintf(path, sizeof(path), "/proc/%s/cwd", d->d_name);
		n = readlink(path, pcwd, sizeof(pcwd) - 1);
		if (n <= 0)
			continue;
		pcwd[n] = '\0';
		if (strcmp(got, exe) == 0 && strcmp(pcwd, cwd) == 0) {
			pid = (pid_t)atoi(d->d_name);
			break;
		}
	}
	closedir(dir);
	return (pid);
}

/*
 * Whether process @pid is ptraced (TracerPid in /proc/PID/status): the
 * perf source stops a PIE at its exec until its --trigger breakpoint is
 * set, and the program runs nothing until it is let go.
 */
static int
traced(pid_t pid)
{
	char line[256];
	FILE *fp;
	int tr = 0;

	if ((fp = proc_open(pid, "status")) == NULL)
		return (0);
	while (fgets(line, sizeof(line), fp) != NULL)
		if (sscanf(line, "TracerPid: %d", &tr) == 1)
			break;
	fclose(fp);
	return (tr != 0);
}

/* Where process @pid loaded @exe (its mapping at file offset 0). */
static uint64_t
exe_base(pid_t pid, const char *exe)
{
	char line[PATH_MAX + 256], file[PATH_MAX];
	unsigned long long lo, hi, off;
	uint64_t base = 0;
	FILE *fp;

	if ((fp = proc_open(pid, "maps")) == NULL)
		return (0);
	while (base == 0 && fgets(line, sizeof(line), fp) != NULL)
		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %4095s", &lo, &hi,
		    &off, file) == 4 && off == 0 && strcmp(file, exe) == 0)
			base = lo;
	fclose(fp);
	return (base);
}

static void
mmap2_records(struct fev *e, pid_t pid, uint64_t tsc)
{
	char line[PATH_MAX + 256], perm[8], file[PATH_MAX];
	unsigned long long lo, hi, off, ino;
	unsigned maj, mnr;
	uint8_t body[PATH_MAX + 128];
	FILE *fp;

	if ((fp = proc_open(pid, "maps")) == NULL)
		return;
	while (fgets(line, sizeof(line), fp) != NULL) {
		struct {
			uint32_t pid, tid;
			uint64_t addr, len, pgoff;
			uint32_t maj, min;
			uint64_t ino, ino_generation;
			uint32_t prot, flags;
		} m;
		size_t fl;

		file[0] = '\0';
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %4095s", &lo,
		    &hi, perm, &off, &maj, &mnr, &ino, file) < 7 ||
		    perm[2] != 'x' || file[0] != '/')
			continue;
		memset(&m, 0, sizeof(m));
		m.pid = m.tid = (uint32_t)pid;
		m.addr = lo;
		m.len = hi - lo;
		m.pgoff = off;
		m.maj = maj;
		m.min = mnr;
		m.ino = ino;
		m.prot = PROT_READ | PROT_EXEC;
		m.flags = MAP_PRIVATE;
		memcpy(body, &m, sizeof(m));
		fl = strlen(file) + 1;
		memset(body + sizeof(m), 0, (fl + 7) & ~(size_t)7);
		memcpy(body + sizeof(m), file, fl);
		record(e, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, body,
		    sizeof(m) + ((fl + 7) & ~(size_t)7), pid, tsc);
	}
	fclose(fp);
}

/*
 * The program reaches [@from, @to] on @e's CPU: a sample of every enabled
 * breakpoint there whose output is @e's ring, then wait for a snapshot.
 */
static void
bp_reach(struct fev *e, uint64_t from, uint64_t to, pid_t pid, uint64_t tsc)
{
	struct timespec ts = { 0, 2000000 };
	uint8_t buf[48];
	struct perf_event_header h;
	uint32_t u[2];
	uint64_t v;
	int i, n0, tries;

	for (i = 0; i < nev; i++) {
		struct fev *b = &evs[i];

		if (b->attr.type != PERF_TYPE_BREAKPOINT || b->out != e ||
		    !(b->enabled || b->attr.enable_on_exec) ||
		    b->attr.bp_addr < from || b->attr.bp_addr > to)
			continue;
		/* IDENTIFIER, TID, TIME, CPU: the sample_type asked. */
		h.type = PERF_RECORD_SAMPLE;
		h.misc = PERF_RECORD_MISC_USER;
		h.size = 8 + 32;
		memcpy(buf, &h, 8);
		memcpy(buf + 8, &b->id, 8);
		u[0] = u[1] = (uint32_t)pid;
		memcpy(buf + 16, u, 8);
		v = ns_of(tsc);
		memcpy(buf + 24, &v, 8);
		u[0] = (uint32_t)e->cpu;
		u[1] = 0;
		memcpy(buf + 32, u, 8);
		n0 = __atomic_load_n(&e->nenable, __ATOMIC_ACQUIRE);
		data_put(e, buf, 40);
		flog("bp hit %#llx cpu=%d id=%llu",
		    (unsigned long long)b->attr.bp_addr, e->cpu,
		    (unsigned long long)b->id);
		for (tries = 0; tries < 1500 &&
		    __atomic_load_n(&e->nenable, __ATOMIC_ACQUIRE) == n0;
		    tries++)
			nanosleep(&ts, NULL);
		flog("%s after bp hit", __atomic_load_n(&e->nenable,
		    __ATOMIC_ACQUIRE) != n0 ? "snapshot" : "no snapshot");
	}
}

static void *
producer(void *arg)
{
	struct fev *e = arg;
	const char *exe = getenv("HWTRACE_FAKEPERF_EXE");
	const char *done = getenv("HWTRACE_FAKEPERF_DONE");
	uint64_t from = env_u64("HWTRACE_FAKEPERF_FROM", 16);
	uint64_t to = env_u64("HWTRACE_FAKEPERF_TO", 16);
	uint64_t flags = env_u64("HWTRACE_FAKEPERF_FLAGS", 0);
	uint64_t lost = env_u64("HWTRACE_FAKEPERF_LOST", 0);
	uint64_t spans = env_u64("HWTRACE_FAKEPERF_SPANS", 0), i;
	uint64_t tsc = 2000000;
	struct timespec ts = { 0, 2000000 };
	struct timespec pace = { 0, 0 };
	const char *mapped;
	pid_t pid = -1;
	int tries, fd;

	for (tries = 0; exe != NULL && tries < 5000 && pid < 0; tries++) {
		pid = find_exe(exe);
		if (pid < 0)
			nanosleep(&ts, NULL);
	}
	if (pid < 0) {
		flog("producer: '%s' never ran", exe ? exe : "(none)");
		return (NULL);
	}
	/* A program stopped by ptrace (at its exec) runs nothing. */
	for (tries = 0; tries < 5000 && traced(pid); tries++)
		nanosleep(&ts, NULL);
	if (getenv("HWTRACE_FAKEPERF_PIE") != NULL) {
		uint64_t base = exe_base(pid, exe);

		from += base;
		to += base;
		flog("pie: loaded at %#llx", (unsigned long long)base);
	}
	/* Thread mode: enabled by the exec (enable_on_exec). */
	if (e->attr.enable_on_exec)
		e->enabled = 1;
	for (tries = 0; !e->enabled && tries < 5000; tries++)
		nanosleep(&ts, NULL);
	{
		struct {
			uint32_t pid, tid;
			char comm[16];
		} c;
		const char *b = strrchr(exe, '/');

		memset(&c, 0, sizeof(c));
		c.pid = c.tid = (uint32_t)pid;
		snprintf(c.comm, sizeof(c.comm), "%s", b ? b + 1 : exe);
		record(e, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC, &c,
		    sizeof(c), pid, tsc);
	}
	if ((mapped = getenv("HWTRACE_FAKEPERF_MAPPED")) != NULL)
		for (tries = 0; tries < 2500 && !has_map(pid, mapped); tries++)
			nanosleep(&ts, NULL);
	for (tries = 0; tries < 2500 && !has_xmap(pid, exe); tries++)
		nanosleep(&ts, NULL);
	mmap2_records(e, pid, tsc + 10);
	if (e->pid != -1) {
		/* Tracing starts on this CPU with the task running. */
		uint32_t it[2] = { (uint32_t)pid, (uint32_t)pid };

		record(e, PERF_RECORD_ITRACE_START, 0, it, sizeof(it), pid,
		    tsc + 20);
	}
	if (e->attr.context_switch && e->pid == -1) {
		uint32_t np[2] = { (uint32_t)pid, (uint32_t)pid };

		record(e, PERF_RECORD_SWITCH_CPU_WIDE, 0, np, sizeof(np), pid,
		    tsc + 20);
	}
	if (spans == 0)
		spans = flags != 0 ? 2 : 1;
	pace.tv_nsec = (long)(env_u64("HWTRACE_FAKEPERF_PACE", 0) % 1000) *
	    1000000;
	for (i = 0; i < spans; i++) {
		bp_reach(e, from, to, pid, tsc + 1000 * (i + 1));
		/* A disabled event traces nothing. */
		if (!__atomic_load_n(&e->enabled, __ATOMIC_ACQUIRE))
			flog("span %" PRIu64 " while disabled", i);
		else
			aux_span(e, from, to, tsc + 1000 * (i + 1),
			    i == 1 ? flags : 0, pid);
		if (pace.tv_nsec > 0)
			nanosleep(&pace, NULL);
	}
	if (lost > 0) {
		uint64_t l[2] = { e->id, lost };

		record(e, PERF_RECORD_LOST, 0, l, sizeof(l), pid, tsc + 5000);
	}
	flog("produced %" PRIu64 " spans for pid %d on cpu %d", spans,
	    (int)pid, e->cpu);
	if (done != NULL && (fd = open(done, O_WRONLY | O_CREAT | O_CLOEXEC,
	    0644)) >= 0)
		close(fd);
	return (NULL);
}

/* ------------------------------------------------------------------ */
/* The calls.                                                          */

static long
fake_open(struct perf_event_attr *a, pid_t pid, int cpu, int group,
    unsigned long flags)
{
	const char *busy;
	struct fev *e;
	int fd;

	if (a->type == PERF_TYPE_BREAKPOINT)
		flog("open breakpoint bp_type=%u bp_addr=%#llx bp_len=%llu "
		    "pid=%d cpu=%d inherit=%u enable_on_exec=%u "
		    "sample_period=%llu", a->bp_type,
		    (unsigned long long)a->bp_addr,
		    (unsigned long long)a->bp_len, (int)pid, cpu, a->inherit,
		    a->enable_on_exec, (unsigned long long)a->sample_period);
	else
		flog("open type=%u config=%#llx config1=%#llx pid=%d cpu=%d "
		    "inherit=%u enable_on_exec=%u context_switch=%u "
		    "exclude_kernel=%u disabled=%u sample_id_all=%u "
		    "sample_type=%#llx mmap2=%u comm_exec=%u config2=%#llx",
		    a->type, (unsigned long long)a->config,
		    (unsigned long long)a->config1, (int)pid, cpu, a->inherit,
		    a->enable_on_exec, a->context_switch, a->exclude_kernel,
		    a->disabled, a->sample_id_all,
		    (unsigned long long)a->sample_type, a->mmap2, a->comm_exec,
		    (unsigned long long)a->config2);
	/* HWTRACE_FAKEPERF_BUSY=N: CPU N's PMU is taken (EOPNOTSUPP). */
	if ((busy = getenv("HWTRACE_FAKEPERF_BUSY")) != NULL &&
	    atoi(busy) == cpu) {
		errno = EOPNOTSUPP;
		return (-1);
	}
	if (a->sample_type != (PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
	    PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)) {
		errno = EINVAL;
		return (-1);
	}
	pthread_mutex_lock(&mtx);
	if (nev == MAXEV || (fd = eventfd(0, EFD_CLOEXEC)) < 0) {
		pthread_mutex_unlock(&mtx);
		errno = EMFILE;
		return (-1);
	}
	e = &evs[nev];
	memset(e, 0, sizeof(*e));
	e->fd = fd;
	e->pid = pid;
	e->cpu = cpu;
	e->id = 1000 + (uint64_t)nev;
	e->attr = *a;
	nev++;
	pthread_mutex_unlock(&mtx);
	return (fd);
}

long
syscall(long n, ...)
{
	static long (*real)(long, ...);
	va_list ap;
	long a[6];
	int i;

	va_start(ap, n);
	for (i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (n == SYS_perf_event_open)
		return (fake_open((struct perf_event_attr *)a[0], (pid_t)a[1],
		    (int)a[2], (int)a[3], (unsigned long)a[4]));
	if (real == NULL)
		real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	return (real(n, a[0], a[1], a[2], a[3], a[4], a[5]));
}

void *
mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	static void *(*real)(void *, size_t, int, int, int, off_t);
	struct perf_event_mmap_page *pg;
	struct fev *e;
	void *p;

	if (real == NULL)
		real = (void *(*)(void *, size_t, int, int, int, off_t))
		    dlsym(RTLD_NEXT, "mmap");
	if (fd < 0 || (e = find_fd(fd)) == NULL)
		return (real(addr, len, prot, flags, fd, off));
	if (off == 0) {
		p = real(NULL, len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return (p);
		e->base = p;
		e->base_len = len;
		pg = p;
		pg->version = 0;
		pg->compat_version = 0;
		pg->cap_user_time = 1;
		pg->cap_user_time_zero = 1;
		pg->time_shift = TIME_SHIFT;
		pg->time_mult = TIME_MULT;
		pg->time_zero = TIME_ZERO;
		pg->data_offset = PAGE;
		pg->data_size = len - PAGE;
		flog("mmap data cpu=%d len=%zu", e->cpu, len);
		return (p);
	}
	pg = (void *)e->base;
	if (pg == NULL || (uint64_t)off != pg->aux_offset ||
	    len != pg->aux_size) {
		errno = EINVAL;
		return (MAP_FAILED);
	}
	p = real(NULL, len, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return (p);
	e->aux = p;
	e->aux_len = len;
	e->overwrite = !(prot & PROT_WRITE);
	flog("mmap aux cpu=%d len=%zu overwrite=%d", e->cpu, len,
	    e->overwrite);
	/* The first event's CPU runs the program. */
	pthread_mutex_lock(&mtx);
	if (!producing) {
		producing = 1;
		e->started = pthread_create(&e->thr, NULL, producer, e) == 0;
	}
	pthread_mutex_unlock(&mtx);
	return (p);
}

int
ioctl(int fd, unsigned long req, ...)
{
	static int (*real)(int, unsigned long, ...);
	struct fev *e;
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (real == NULL)
		real = (int (*)(int, unsigned long, ...))dlsym(RTLD_NEXT,
		    "ioctl");
	if ((e = find_fd(fd)) == NULL)
		return (real(fd, req, arg));
	if (req == PERF_EVENT_IOC_SET_FILTER)
		flog("ioctl SET_FILTER cpu=%d '%s'", e->cpu,
		    (const char *)arg);
	else if (req == PERF_EVENT_IOC_ENABLE) {
		uint64_t lag = env_u64("HWTRACE_FAKEPERF_LAG", 0);

		flog("ioctl ENABLE cpu=%d", e->cpu);
		e->enabled = 1;
		__atomic_add_fetch(&e->nenable, 1, __ATOMIC_RELEASE);
		if (lag > 0 && e->attr.type != PERF_TYPE_BREAKPOINT) {
			struct timespec ts = { (time_t)(lag / 1000),
			    (long)(lag % 1000) * 1000000 };

			nanosleep(&ts, NULL);
		}
	} else if (req == PERF_EVENT_IOC_SET_OUTPUT) {
		struct fev *o = find_fd((int)(intptr_t)arg);

		/* As the kernel: same CPU, and not into itself. */
		if (o == NULL || o == e || o->cpu != e->cpu) {
			errno = EINVAL;
			return (-1);
		}
		e->out = o;
		flog("ioctl SET_OUTPUT pid=%d cpu=%d type=%u -> pid=%d",
		    (int)e->pid, e->cpu, e->attr.type, (int)o->pid);
	} else if (req == PERF_EVENT_IOC_DISABLE) {
		flog("ioctl DISABLE cpu=%d", e->cpu);
		e->enabled = 0;
	} else if (req == PERF_EVENT_IOC_ID)
		memcpy(arg, &e->id, 8);
	else {
		errno = ENOTTY;
		return (-1);
	}
	return (0);
}

int
munmap(void *addr, size_t len)
{
	static int (*real)(void *, size_t);
	int i;

	if (real == NULL)
		real = (int (*)(void *, size_t))dlsym(RTLD_NEXT, "munmap");
	for (i = 0; i < nev; i++) {
		if (evs[i].started && (addr == evs[i].base ||
		    addr == evs[i].aux)) {
			pthread_join(evs[i].thr, NULL);
			evs[i].started = 0;
		}
		if (addr == evs[i].base)
			evs[i].base = NULL;
		if (addr == evs[i].aux)
			evs[i].aux = NULL;
	}
	return (real(addr, len));
}

__attribute__((constructor)) static void
fake_init(void)
{
	/* The traced program is not to be faked. */
	unsetenv("LD_PRELOAD");
}
