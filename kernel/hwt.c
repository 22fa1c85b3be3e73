/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The "hwt" trace source: FreeBSD's hardware trace framework, hwt(4),
 * with its Intel PT ("pt") or CoreSight ("coresight") backend, through
 * the kernel's own interface (kernel/hwt_abi.h).  Its system calls go
 * through one table (hwt_int.h): FreeBSD's on FreeBSD, elsewhere calls
 * that fail, so that `--source hwt` says what is missing, and in the
 * tests a simulated hwt(4) (tests/kernel/fakehwt.c).
 *
 * How it records.  Thread mode (the default): the command is forked and
 * held before its exec; HWT_IOC_ALLOC on /dev/hwt makes a context for its
 * pid, which queues a THREAD_CREATE record per thread; each thread's
 * device /dev/hwt_<ident>_<n> is opened and mapped read-only; SET_CONFIG
 * (on the first device, for the whole context) gives the backend's
 * configuration (PT: struct pt_cpu_config, IA32_RTIT_CTL with USER and
 * BRANCHEN, the IP ranges of --filter), START enables it, and the command
 * is let go.  -p PID allocates the context for a running process.  CPU
 * mode (--cpu LIST, -a for every CPU): a context over the CPUs, a device
 * per CPU, START once; the kernel's and its modules' images come as
 * KERNEL records; hwt(4) records no mappings in CPU mode, so the
 * launched command's executable is recorded from its path.
 *
 * The records (RECORD_GET, never waiting) become the recording's sideband
 * (hwt_rec.c).  A THREAD_CREATE record later in the run is a new thread:
 * its device is opened and mapped, a new stream.  hwt(4) names a thread
 * by its index only: the archive gives thread 0 the process's pid and
 * thread N > 0 the tid N (said in the archive's notes).
 *
 * The buffers.  The PT backend writes each buffer as a ring of 4 KiB
 * ToPA pages and queues a BUFFER record per filled page; BUFPTR_GET gives
 * the page and the offset in it of a position that counts the laps (the
 * backend's offset plus the wrap count times the size), so the bytes
 * written since the last read are [last, new) across the end of the ring.
 * The hardware goes on writing in the page after that position, over
 * the ring's oldest page, so only the size less one page before it is
 * sure: when new - last exceeds that, the oldest bytes were (or may have
 * been) overwritten before they were read: the framework has no overflow
 * flag, so this is the only sign; they are recorded as loss (an AUX record flagged
 * TRUNCATED, and the jump in the stream's offsets).  The bytes are copied
 * out first and the position read again, so that bytes the hardware
 * overwrote during the copy are dropped as lost too.  Every buffer is
 * read at every turn, not only the one a BUFFER record names.  STOP and
 * a thread switched out queue no record: after STOP the final position
 * is read with BUFPTR_GET and the tail read then.  A device that goes
 * away (ENXIO, ENOENT, EBADF) ends its stream with what was read; the
 * rest of its trace is recorded as lost.
 *
 * --mode stop: a buffer is read until --buffer bytes were taken, the rest
 * is recorded lost.  --mode ring: nothing is read while the command runs
 * but at a snapshot (SIGUSR2: each buffer's bytes before its position
 * that the hardware is sure not to be writing over, --buffer less a
 * page) and at the end (each buffer's last --buffer bytes, the whole
 * ring); what came before them is recorded lost.  --trigger adds a
 * snapshot at each stop on a debug register breakpoint set through
 * ptrace(2) (hwt_trig.c; hwt(4) has none): the stops are seen where the
 * command's end is, in reap(), through the system calls' table.
 *
 * --filter FUNC|START-END[,...]: at most the backend's two IP ranges.  An
 * address range goes into the first SET_CONFIG.  A function name is
 * resolved as hwt(8) does it: SET_CONFIG with pause_on_mmap, no START;
 * the command's thread sleeps after each EXECUTABLE or MMAP record; the
 * function is looked up in the image just mapped (its symbol table, the
 * record's address for a position-independent image); once found the
 * range goes into a second SET_CONFIG (without pause_on_mmap), then
 * START, and WAKEUP resumes the thread.  An image without it is woken up
 * at once.
 *
 * CoreSight (arm64), as hwt(8) records it (usr.sbin/hwt/hwt_coresight.c):
 * the funnels bring every ETM's trace to one ETR, whose buffer is the
 * first device's (the first CPU's in CPU mode; the others are not
 * opened); the buffer holds the formatter's 16-byte frames, each ETM's
 * trace under its trace ID (the CPU + 1; 1 for thread 0 in thread
 * mode).  BUFPTR_GET gives the ETR's write offset in the ring without
 * the laps: an offset below the last one is a lap, and a whole lap
 * between two reads cannot be seen (no overflow is known then).  Each
 * ETM's ID registers TRCIDR0 to 13 come from sysctl
 * dev.coresight_etm4x.<cpu>.idr<n> (unit 0's when the CPU's own are
 * absent, as hwt(8) reads unit 0's for all); the recording's cs_etm
 * AUXTRACE_INFO carries them with the trace IDs and TRCCONFIGR as
 * hwt(8) configures it (hwt_int.h), which the perf importer turns into
 * the stream's sources.  SET_CONFIG goes without the backend's struct
 * etmv4_config (the kernel's defaults), so --filter is refused with
 * coresight.  HWT_IOC_SVC_BUF is not used: hwt(8) uses it for SPE's
 * double buffer only; the CoreSight backend has nothing to service.

 * Nothing here has run on FreeBSD: it is tested against a simulated
 * kernel only.  HWTRACE_HWT_BACKEND names the backend ("pt" on amd64,
 * "coresight" on arm64, by default).
 */

#include <sys/types.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hwtr_common.h"
#include "hwtr_elf.h"
#include "perf_record.h"
#include "hwt_int.h"

#define HWT_DEFAULT_BUF	(4u << 20)
#define HWT_WAIT_MS	20
#define HWT_NREC	64

static int hwt_start_ctx(struct hwt_src *hs);
static int hwt_finish(struct hwt_src *hs);
static int hwt_records(struct hwt_src *hs);
static void hwt_ended(struct hwt_src *hs, int st);
static int hwt_drain(struct hwt_src *hs, int final, int snap);
static int hwt_ioctl(struct hwt_src *hs, int fd, unsigned long req,
    void *arg, const char *what);

static const char *const hwt_caveats[] = {
	"hwt(4) names threads by index: thread 0 is the process's pid, "
	    "thread N > 0 is tid N in this archive",
	"hwt(4)'s Intel PT backend writes no TSC: trace and sideband are "
	    "ordered by buffer position, not time"
};

static const char *const hwt_cs_caveats[] = {
	"hwt(4) names threads by index: thread 0 is the process's pid, "
	    "thread N > 0 is tid N in this archive",
	"hwt(4)'s CoreSight trace is not placed in time (its timestamps "
	    "have no conversion): trace and sideband are ordered by buffer "
	    "position; one ETR buffer holds every traced CPU's trace"
};

/* ------------------------------------------------------------------ */
/* Options.                                                            */

/* "0-3,6" into hs->cpus; 0, or -HWTR_E_INVAL with errmsg. */
static int
parse_cpus(struct hwt_src *hs, const char *list)
{
	const char *s = list;
	unsigned long lo, hi, c;
	char *end;

	memset(hs->cpus, 0, sizeof(hs->cpus));
	hs->ncpus = 0;
	while (*s != '\0') {
		errno = 0;
		if (!isdigit((unsigned char)*s))
			goto bad;
		lo = hi = strtoul(s, &end, 10);
		if (*end == '-') {
			s = end + 1;
			if (!isdigit((unsigned char)*s))
				goto bad;
			hi = strtoul(s, &end, 10);
		}
		if (errno != 0 || hi < lo || hi >= HWT_MAX_CPUS)
			goto bad;
		for (c = lo; c <= hi; c++)
			if (!hs->cpus[c]) {
				hs->cpus[c] = 1;
				hs->ncpus++;
			}
		if (*end == ',')
			end++;
		else if (*end != '\0')
			goto bad;
		s = end;
	}
	if (hs->ncpus > 0)
		return (0);
bad:
	hwt_err(hs, "malformed CPU list '%s' (as 0-3,6; CPUs below %d)",
	    list, HWT_MAX_CPUS);
	return (-HWTR_E_INVAL);
}

/*
 * --filter: comma-separated address ranges START-END (hexadecimal, END
 * excluded) or one function name, at most HWTR_HWT_PT_RANGES in all.
 */
static int
parse_filter(struct hwt_src *hs, const char *f)
{
	char buf[sizeof(hs->filter)], *tok, *save, *dash, *end;
	unsigned long long a, b;
	int n = 0, names = 0;

	if (strlen(f) >= sizeof(buf)) {
		hwt_err(hs, "--filter '%.40s...' is too long", f);
		return (-HWTR_E_INVAL);
	}
	snprintf(buf, sizeof(buf), "%s", f);
	for (tok = strtok_r(buf, ",", &save); tok != NULL;
	    tok = strtok_r(NULL, ",", &save)) {
		if (n + names >= HWTR_HWT_PT_RANGES) {
			hwt_err(hs, "--filter '%s': hwt(4)'s %s backend "
			    "takes at most %d ranges", f, hs->backend,
			    HWTR_HWT_PT_RANGES);
			return (-HWTR_E_INVAL);
		}
		dash = strchr(tok, '-');
		if (dash == NULL) {
			if (!isalpha((unsigned char)*tok) && *tok != '_')
				goto bad;
			snprintf(hs->filter, sizeof(hs->filter), "%s", tok);
			names++;
			continue;
		}
		*dash = '\0';
		errno = 0;
		a = strtoull(tok, &end, 16);
		if (errno != 0 || *end != '\0' || end == tok)
			goto bad;
		b = strtoull(dash + 1, &end, 16);
		if (errno != 0 || *end != '\0' || end == dash + 1 || b <= a)
			goto bad;
		hs->range[2 * n] = a;
		hs->range[2 * n + 1] = b;
		n++;
	}
	if (names > 1 || (names == 1 && n > 0)) {
		hwt_err(hs, "--filter '%s': one function name, or address "
		    "ranges", f);
		return (-HWTR_E_INVAL);
	}
	hs->nranges = n;
	hs->filter_wait = names;
	return (0);
bad:
	hwt_err(hs, "malformed --filter '%s' (FUNC, or START-END in "
	    "hexadecimal, comma separated)", f);
	return (-HWTR_E_INVAL);
}

int
hwtr_hwt_usable(char *why, size_t len)
{
#ifdef __FreeBSD__
	if (access("/dev/hwt", R_OK | W_OK) == 0) {
		snprintf(why, len, "hwt(4) (/dev/hwt)");
		return (1);
	}
	snprintf(why, len, "/dev/hwt: %s", strerror(errno));
#else
	snprintf(why, len, "hwt(4) is FreeBSD's; this system has no "
	    "/dev/hwt");
#endif
	return (0);
}

/* ------------------------------------------------------------------ */
/* The source's operations.                                            */

int
hwtr_hwt_init_sys(struct hwtr_src *src, const struct hwtr_hwt_sys *sys)
{
	struct hwt_src *hs;

	assert(sys != NULL);
	if ((hs = calloc(1, sizeof(*hs))) == NULL)
		return (-HWTR_E_NOMEM);
	hs->src = src;
	hs->sys = sys;
	hs->ctl_fd = hs->kq = hs->go_fd = hs->ef_fd = -1;
	src->priv = hs;
	return (0);
}

static int
hwt_backend_init(struct hwtr_src *src)
{
	const struct hwtr_hwt_sys *sys;
	int native, rc;

	sys = hwtr_hwt_sys_default(&native);
	if ((rc = hwtr_hwt_init_sys(src, sys)) < 0)
		return (rc);
	((struct hwt_src *)src->priv)->native = native;
	return (0);
}

static int
hwt_backend_configure(struct hwtr_src *src, const struct hwtr_src_config *cfg)
{
	struct hwt_src *hs = src->priv;
	const char *be;
	long n, i;
	int rc;

	if (hs->sys == hwtr_hwt_sys_default(&hs->native) && !hs->native) {
		hwt_err(hs, "hwt(4) is FreeBSD's hardware trace framework; "
		    "this system has no /dev/hwt (on Linux, use --source "
		    "perf)");
		return (-HWTR_E_UNSUPPORTED);
	}
	src->cfg = *cfg;
	be = getenv("HWTRACE_HWT_BACKEND");
#ifdef __aarch64__
	hs->backend = "coresight";
#else
	hs->backend = "pt";
#endif
	if (be != NULL && *be != '\0')
		hs->backend = be;
	if (strcmp(hs->backend, "pt") != 0 &&
	    strcmp(hs->backend, "coresight") != 0) {
		hwt_err(hs, "HWTRACE_HWT_BACKEND '%s': hwtrace knows hwt(4)'s "
		    "backends 'pt' and 'coresight'", hs->backend);
		return (-HWTR_E_INVAL);
	}
	hs->coresight = strcmp(hs->backend, "coresight") == 0;
	if (hs->coresight && cfg->filter != NULL) {
		/*
		 * The ETM's address comparators go in the backend's struct
		 * etmv4_config, whose layout this source does not declare.
		 */
		hwt_err(hs, "--filter with hwt(4)'s coresight backend: the "
		    "ETM's address ranges are not supported by the hwt "
		    "source");
		return (-HWTR_E_UNSUPPORTED);
	}
	hs->bufsize = cfg->buffer_size != 0 ? cfg->buffer_size :
	    HWT_DEFAULT_BUF;
	if (hs->bufsize % HWTR_HWT_PAGE != 0 || hs->bufsize > (1ULL << 35) ||
	    hs->bufsize < 2 * HWTR_HWT_PAGE) {
		hwt_err(hs, "--buffer %" PRIu64 ": hwt(4) wants a multiple "
		    "of %d bytes, at least two (the page being written is "
		    "never read), at most 32 GiB", hs->bufsize,
		    HWTR_HWT_PAGE);
		return (-HWTR_E_INVAL);
	}
	if (cfg->cpus != NULL) {
		if ((rc = parse_cpus(hs, cfg->cpus)) < 0)
			return (rc);
		hs->cpu_mode = 1;
	} else if (cfg->all_cpus) {
		n = sysconf(_SC_NPROCESSORS_CONF);
		for (i = 0; i < (n < 1 ? 1 : n) && i < HWT_MAX_CPUS; i++)
			hs->cpus[i] = 1;
		hs->ncpus = (int)i;
		hs->cpu_mode = 1;
	}
	if (hs->cpu_mode && cfg->pid > 0) {
		hwt_err(hs, "-p and --cpu: hwt(4)'s CPU mode traces CPUs, "
		    "not a process");
		return (-HWTR_E_INVAL);
	}
	if (cfg->filter != NULL && (rc = parse_filter(hs, cfg->filter)) < 0)
		return (rc);
	if ((rc = hwt_trig_check(hs)) < 0)
		return (rc);
	if (hs->filter_wait && (hs->cpu_mode || cfg->pid > 0)) {
		hwt_err(hs, "--filter %s: a function is found at its exec or "
		    "mmap, in thread mode on a launched command only",
		    hs->filter);
		return (-HWTR_E_INVAL);
	}
	hs->rtit_ctl = HWTR_RTIT_CTL_BRANCHEN | HWTR_RTIT_CTL_USER;
	if (hs->cpu_mode)
		hs->rtit_ctl |= HWTR_RTIT_CTL_OS;
	if ((hs->ctl_fd = hs->sys->open(hs->sys->arg, "/dev/hwt",
	    O_RDWR)) < 0) {
		hwt_err(hs, "cannot open /dev/hwt: %s%s", strerror(errno),
		    errno == ENOENT ? " (kldload hwt and its backend, "
		    "intel_pt or coresight)" : "");
		return (errno == EACCES || errno == EPERM ? -HWTR_E_PERM :
		    -HWTR_E_UNSUPPORTED);
	}
	src->caveats = hs->coresight ? hwt_cs_caveats : hwt_caveats;
	src->ncaveats = hs->cpu_mode ? 1 : 2;
	if (hs->cpu_mode)
		src->caveats = hs->coresight ? hwt_cs_caveats + 1 :
		    hwt_caveats + 1;
	src->version = hs->backend;
	return (0);
}

/* Why HWT_IOC_ALLOC failed, as hwt(4) means its errors. */
static void
alloc_err(struct hwt_src *hs, int e, pid_t pid)
{
	const char *why;

	switch (e) {
	case EBUSY:
		why = "the backend is busy (another context holds it)";
		break;
	case EEXIST:
		why = "the process is already traced";
		break;
	case EPERM:
		why = "not permitted to trace the process (its credentials "
		    "differ)";
		break;
	case ENXIO:
		why = "no such process";
		break;
	case ENODEV:
		why = hs->cpu_mode ? "no such CPU, or the backend is not "
		    "loaded" : "the backend is not loaded";
		break;
	case EINVAL:
		why = "the buffer size is refused";
		break;
	default:
		why = strerror(e);
		break;
	}
	if (hs->cpu_mode)
		hwt_err(hs, "hwt(4) refused a context (HWT_IOC_ALLOC, "
		    "backend %s, CPU mode): %s (%s)", hs->backend, why,
		    strerror(e));
	else
		hwt_err(hs, "hwt(4) refused a context for pid %d "
		    "(HWT_IOC_ALLOC, backend %s): %s (%s)", (int)pid,
		    hs->backend, why, strerror(e));
}

/* Open and map buffer @id (a thread index or a CPU) of the context. */
static int
add_buf(struct hwt_src *hs, int id)
{
	struct hwt_buf *b;
	char path[64];
	void *p;
	int i;

	for (i = 0; i < hs->nbufs; i++)
		if (hs->bufs[i].id == id)
			return (0);
	if (hs->nbufs == HWT_MAX_BUFS) {
		hwt_err(hs, "more than %d hwt(4) buffers", HWT_MAX_BUFS);
		return (-HWTR_E_LIMIT);
	}
	snprintf(path, sizeof(path), "/dev/hwt_%d_%d", hs->ident, id);
	b = &hs->bufs[hs->nbufs];
	memset(b, 0, sizeof(*b));
	b->id = id;
	if ((b->fd = hs->sys->open(hs->sys->arg, path, O_RDONLY)) < 0) {
		hwt_err(hs, "cannot open %s: %s", path, strerror(errno));
		return (-HWTR_E_IO);
	}
	p = hs->sys->mmap(hs->sys->arg, (size_t)hs->bufsize, PROT_READ, b->fd);
	if (p == MAP_FAILED) {
		hwt_err(hs, "cannot map %s (%" PRIu64 " bytes, read-only): "
		    "%s", path, hs->bufsize, strerror(errno));
		(void)hs->sys->close(hs->sys->arg, b->fd);
		return (-HWTR_E_IO);
	}
	b->base = p;
	b->cpu = hs->cpu_mode ? id : -1;
	b->tid = hs->cpu_mode ? -1 : id == 0 ? hs->src->first_pid : id;
	hs->nbufs++;
	if (!hs->cpu_mode && id != 0)
		hwt_rec_fork(hs, hs->src->first_pid, b->tid,
		    hs->src->first_pid, 0);
	return (0);
}

/* SET_CONFIG for the whole context (on its first device). */
static int
set_config(struct hwt_src *hs, int pause)
{
	struct hwtr_hwt_set_config sc;
	struct hwtr_hwt_pt_config pc;
	int i;

	assert(hs->nbufs > 0);
	memset(&sc, 0, sizeof(sc));
	memset(&pc, 0, sizeof(pc));
	sc.pause_on_mmap = pause;
	if (!hs->coresight) {
		pc.rtit_ctl = hs->rtit_ctl;
		pc.nranges = hs->nranges;
		for (i = 0; i < hs->nranges; i++) {
			pc.ip_ranges[i].start = (uintptr_t)hs->range[2 * i];
			pc.ip_ranges[i].end = (uintptr_t)hs->range[2 * i + 1];
		}
		sc.config = &pc;
		sc.config_size = sizeof(pc);
		sc.config_version = 1;
	}
	return (hwt_ioctl(hs, hs->bufs[0].fd, HWTR_HWT_IOC_SET_CONFIG, &sc,
	    "HWT_IOC_SET_CONFIG"));
}

/* The command, forked and held before its exec until @go_fd is written. */
static int
launch(struct hwt_src *hs)
{
	int go[2], ef[2], e;
	pid_t pid;
	char c;

	if (pipe(go) < 0) {
		hwt_err(hs, "pipe: %s", strerror(errno));
		return (-HWTR_E_IO);
	}
	if (pipe(ef) < 0) {
		hwt_err(hs, "pipe: %s", strerror(errno));
		close(go[0]);
		close(go[1]);
		return (-HWTR_E_IO);
	}
	(void)fcntl(ef[1], F_SETFD, FD_CLOEXEC);
	if ((pid = fork()) < 0) {
		hwt_err(hs, "fork: %s", strerror(errno));
		close(go[0]);
		close(go[1]);
		close(ef[0]);
		close(ef[1]);
		return (-HWTR_E_IO);
	}
	if (pid == 0) {
		close(go[1]);
		close(ef[0]);
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		close(go[0]);
		hwtr_sig_restore_ignored();
		execvp(hs->src->cfg.argv[0], hs->src->cfg.argv);
		e = errno;
		(void)write(ef[1], &e, sizeof(e));
		_exit(127);
	}
	close(go[0]);
	close(ef[1]);
	(void)fcntl(go[1], F_SETFD, FD_CLOEXEC);
	(void)fcntl(ef[0], F_SETFD, FD_CLOEXEC);
	hs->go_fd = go[1];
	hs->ef_fd = ef[0];
	hs->child = pid;
	hs->src->first_pid = (int32_t)pid;
	return (0);
}

static int
alloc_ctx(struct hwt_src *hs)
{
	struct hwtr_hwt_alloc a;
	uint64_t map[HWT_MAX_CPUS / 64];
	int ident = -1, i;

	memset(&a, 0, sizeof(a));
	memset(map, 0, sizeof(map));
	a.bufsize = (size_t)hs->bufsize;
	a.backend_name = hs->backend;
	a.ident = &ident;
	a.kqueue_fd = hs->kq;
	if (hs->cpu_mode) {
		for (i = 0; i < HWT_MAX_CPUS; i++)
			if (hs->cpus[i])
				map[i / 64] |= 1ULL << (i % 64);
		a.mode = HWTR_HWT_MODE_CPU;
		a.cpu_map = map;
		a.cpusetsize = sizeof(map);
	} else {
		a.mode = HWTR_HWT_MODE_THREAD;
		a.pid = (pid_t)hs->src->first_pid;
	}
	if (hs->sys->ioctl(hs->sys->arg, hs->ctl_fd, HWTR_HWT_IOC_ALLOC,
	    &a) < 0) {
		alloc_err(hs, errno, a.pid);
		return (errno == EPERM ? -HWTR_E_PERM : errno == EBUSY ||
		    errno == EEXIST ? -HWTR_E_EXISTS : -HWTR_E_IO);
	}
	hs->ident = ident;
	return (0);
}

/*
 * One ETM's ID registers, TRCIDR0 to TRCIDR13, as hwt(8) reads them:
 * sysctl dev.coresight_etm4x.<unit>.idr<n>, 32 bits each.
 */
static int
read_etm(struct hwt_src *hs, int unit, struct hwt_etm *e)
{
	char name[64];
	size_t len;
	int i;

	for (i = 0; i < HWT_ETM_NIDR; i++) {
		snprintf(name, sizeof(name), "dev.coresight_etm4x.%d.idr%d",
		    unit, i);
		len = sizeof(e->idr[i]);
		if (hs->sys->sysctl(hs->sys->arg, name, &e->idr[i],
		    &len) < 0 || len != sizeof(e->idr[i]))
			return (-1);
	}
	return (0);
}

/*
 * The ETMs the recording describes: in CPU mode one per CPU, trace ID
 * CPU + 1 (the backend's), its ID registers from its own unit or, as
 * hwt(8) does for all, unit 0's; in thread mode one, unit 0's, trace ID
 * 1 (thread 0's + 1, as hwt(8) decodes it).
 */
static int
read_etms(struct hwt_src *hs)
{
	struct hwt_etm *e;
	int i, n = hs->cpu_mode ? hs->ncpus : 1;

	assert(n > 0);
	if ((hs->etm = calloc((size_t)n, sizeof(*hs->etm))) == NULL)
		return (-HWTR_E_NOMEM);
	for (i = 0; i < HWT_MAX_CPUS && hs->netm < n; i++) {
		if (hs->cpu_mode && !hs->cpus[i])
			continue;
		e = &hs->etm[hs->netm];
		e->cpu = i;
		e->trace_id = (uint8_t)(i + 1);
		if (read_etm(hs, i, e) < 0 && (i == 0 ||
		    read_etm(hs, 0, e) < 0)) {
			hwt_err(hs, "cannot read the ETM's ID registers "
			    "(sysctl dev.coresight_etm4x.%d.idr0 to idr%d): "
			    "%s", i, HWT_ETM_NIDR - 1, strerror(errno));
			return (-HWTR_E_UNSUPPORTED);
		}
		if (e->trace_id > 0x6f) {
			hwt_err(hs, "CPU %d: its trace ID %d is beyond "
			    "CoreSight's 0x6f", i, e->trace_id);
			return (-HWTR_E_INVAL);
		}
		hs->netm++;
	}
	return (0);
}

static int
hwt_backend_enable(struct hwtr_src *src)
{
	struct hwt_src *hs = src->priv;
	int i, rc;

	if (hs->coresight && (rc = read_etms(hs)) < 0)
		return (rc);
	if ((rc = hwt_rec_open(hs)) < 0)
		return (rc);
	hwt_rec_start(hs);
	if (src->cfg.pid > 0)
		src->first_pid = src->cfg.pid;
	else if ((rc = launch(hs)) < 0)
		return (rc);
	if ((hs->kq = hs->sys->kqueue(hs->sys->arg)) < 0) {
		hwt_err(hs, "kqueue: %s", strerror(errno));
		return (-HWTR_E_IO);
	}
	if ((rc = alloc_ctx(hs)) < 0)
		return (rc);
	if (hs->cpu_mode) {
		/*
		 * CoreSight: the funnels bring every ETM's trace to the one
		 * ETR, whose buffer the first CPU's device maps (hwt(8)
		 * reads that one only); the trace IDs tell the CPUs apart.
		 */
		for (i = 0; i < HWT_MAX_CPUS; i++) {
			if (!hs->cpus[i])
				continue;
			if ((rc = add_buf(hs, i)) < 0)
				return (rc);
			if (hs->coresight)
				break;
		}
	} else {
		/* ALLOC queued a THREAD_CREATE per thread; 0 is the first. */
		if ((rc = hwt_records(hs)) < 0 || (rc = add_buf(hs, 0)) < 0)
			return (rc);
	}
	if ((rc = set_config(hs, hs->filter_wait)) < 0)
		return (rc);
	if (!hs->filter_wait && (rc = hwt_start_ctx(hs)) < 0)
		return (rc);
	if (hs->cpu_mode && hs->child > 0) {
		/* CPU mode has no EXECUTABLE record: the command's path. */
		hwt_rec_comm(hs, src->first_pid, src->first_pid,
		    src->cfg.argv[0], 1);
		hwt_rec_image(hs, src->first_pid, 0, src->cfg.argv[0], 0);
	}
	if ((rc = hwt_trig_attach(hs)) < 0)
		return (rc);
	if (hs->trig_ended) {
		hs->trig_ended = 0;
		hwt_ended(hs, hs->trig_status);
	}
	if (hs->go_fd >= 0) {
		if (write(hs->go_fd, "g", 1) != 1) {
			hwt_err(hs, "cannot release '%s': %s",
			    src->cfg.argv[0], strerror(errno));
			return (-HWTR_E_IO);
		}
		close(hs->go_fd);
		hs->go_fd = -1;
	}
	return (0);
}

static int
hwt_start_ctx(struct hwt_src *hs)
{
	struct hwtr_hwt_start st;
	int rc;

	memset(&st, 0, sizeof(st));
	if ((rc = hwt_ioctl(hs, hs->bufs[0].fd, HWTR_HWT_IOC_START, &st,
	    "HWT_IOC_START")) < 0)
		return (rc);
	hs->started = 1;
	return (0);
}

/*
 * A stop of the process --trigger traces: the records at its exec (the
 * EXECUTABLE record gives a PIE's base), the snapshot at a hit.
 */
static int
trig_stop(struct hwt_src *hs, int sig)
{
	int rc;

	rc = hwt_trig_stopped(hs, sig);
	if (rc == HWT_TRIG_AT_EXEC) {
		if ((rc = hwt_records(hs)) == 0)
			rc = hwt_trig_exec(hs);
	} else if (rc == HWT_TRIG_AT_HIT) {
		hwtr_logf(&hs->src->cfg.log, HWTR_LOG_INFO, "trigger '%s' "
		    "reached (hit %d): snapshot of %d hwt(4) buffers",
		    hs->src->cfg.trigger_name, hs->trig_hits, hs->nbufs);
		if ((rc = hwt_drain(hs, 0, 1)) == 0)
			rc = hwt_trig_step(hs);
	}
	if (hs->trig_ended) {
		hs->trig_ended = 0;
		hwt_ended(hs, hs->trig_status);
	}
	return (rc);
}

/*
 * Record the launched command's end; 1 when it ended (or the process of
 * -p did), 0 not yet, -HWTR_E_* when a --trigger stop failed.  The
 * stops of a traced process (--trigger) are handled on the way.
 */
static int
reap(struct hwt_src *hs, int block)
{
	pid_t r, pid = hs->child > 0 ? hs->child : hs->trig_pid;
	int st, rc;

	if (hs->reaped)
		return (1);
	while (pid > 0) {
		r = hs->sys->waitpid(hs->sys->arg, pid, &st,
		    block ? 0 : WNOHANG);
		if (r != pid)
			break;
		if (!WIFSTOPPED(st)) {
			hwt_ended(hs, st);
			return (1);
		}
		/* Being killed (@block): its last stops do not matter. */
		if (!block && hs->trig &&
		    (rc = trig_stop(hs, WSTOPSIG(st))) < 0)
			return (rc);
		if (hs->reaped)
			return (1);
	}
	if (hs->child <= 0)
		return (hs->src->cfg.pid > 0 && kill(hs->src->cfg.pid, 0) < 0 &&
		    errno == ESRCH);
	return (0);
}

/* The traced or launched process ended with wait status @st. */
static void
hwt_ended(struct hwt_src *hs, int st)
{
	hs->trig_state = HWT_TRIG_DONE;
	if (hs->child <= 0)
		return;		/* -p: its parent has its status */
	hs->reaped = 1;
	if (hs->ef_fd >= 0) {
		int e = 0;

		/* The child is gone: the pipe holds its errno or nothing. */
		if (read(hs->ef_fd, &e, sizeof(e)) == (ssize_t)sizeof(e) &&
		    e != 0)
			hs->src->exec_errno = e;
		close(hs->ef_fd);
		hs->ef_fd = -1;
	}
	if (WIFEXITED(st)) {
		hs->src->exit_kind = HWTR_EXIT_CODE;
		hs->src->exit_value = WEXITSTATUS(st);
	} else if (WIFSIGNALED(st)) {
		hs->src->exit_kind = HWTR_EXIT_SIGNAL;
		hs->src->exit_value = WTERMSIG(st);
	}
}

static int
hwt_backend_read(struct hwtr_src *src)
{
	struct hwt_src *hs = src->priv;
	int rc, done;

	if (hs->finished)
		return (1);
	(void)hs->sys->kwait(hs->sys->arg, hs->kq, HWT_WAIT_MS);
	if ((done = reap(hs, 0)) < 0)
		return (done);
	if ((rc = hwt_records(hs)) < 0 || (rc = hwt_drain(hs, 0, 0)) < 0)
		return (rc);
	if (src->cfg.mode == HWTR_CAP_RING && src->cfg.snapshot != NULL &&
	    *src->cfg.snapshot != hs->snap_seen) {
		hs->snap_seen = *src->cfg.snapshot;
		hwtr_logf(&src->cfg.log, HWTR_LOG_INFO, "SIGUSR2: snapshot of "
		    "%d hwt(4) buffers", hs->nbufs);
		if ((rc = hwt_drain(hs, 0, 1)) < 0)
			return (rc);
	}
	if (!done)
		return (0);
	if ((rc = hwt_finish(hs)) < 0)
		return (rc);
	return (1);
}

static int
hwt_backend_disable(struct hwtr_src *src)
{
	struct hwt_src *hs = src->priv;

	if (hs == NULL)
		return (0);
	if (hs->go_fd >= 0) {
		close(hs->go_fd);	/* the held command exits */
		hs->go_fd = -1;
	}
	if (hs->child > 0 && !hs->reaped && hs->nbufs > 0 && hs->started)
		return (hwt_finish(hs));
	if (hs->child > 0 && !hs->reaped) {
		(void)kill(hs->child, SIGKILL);
		(void)reap(hs, 1);
	}
	return (0);
}

static int
hwt_backend_thread_alloc(struct hwtr_src *src, struct hwtr_src_thread *thr)
{
	return (0);
}

static void
hwt_backend_thread_free(struct hwtr_src *src, struct hwtr_src_thread *thr)
{
}

static void
hwt_backend_deinit(struct hwtr_src *src)
{
	struct hwt_src *hs = src->priv;
	int i;

	if (hs == NULL)
		return;
	if (hs->child > 0 && !hs->reaped) {
		(void)kill(hs->child, SIGKILL);
		(void)reap(hs, 1);
	}
	if (hs->go_fd >= 0)
		close(hs->go_fd);
	if (hs->ef_fd >= 0)
		close(hs->ef_fd);
	for (i = 0; i < hs->nbufs; i++) {
		if (hs->bufs[i].base != NULL)
			(void)hs->sys->munmap(hs->sys->arg,
			    (void *)(uintptr_t)hs->bufs[i].base,
			    (size_t)hs->bufsize);
		if (hs->bufs[i].fd >= 0)
			(void)hs->sys->close(hs->sys->arg, hs->bufs[i].fd);
	}
	if (hs->kq >= 0)
		(void)hs->sys->close(hs->sys->arg, hs->kq);
	if (hs->ctl_fd >= 0)
		(void)hs->sys->close(hs->sys->arg, hs->ctl_fd);
	/* The session imported the recording before this. */
	hwt_rec_close(hs);
	src->recording = NULL;
	free(hs->etm);
	free(hs);
	src->priv = NULL;
}

const struct hwtr_src_ops hwtr_hwt_ops = {
	.name = "hwt",
	.init = hwt_backend_init,
	.configure = hwt_backend_configure,
	.enable = hwt_backend_enable,
	.read = hwt_backend_read,
	.disable = hwt_backend_disable,
	.thread_alloc = hwt_backend_thread_alloc,
	.thread_free = hwt_backend_thread_free,
	.deinit = hwt_backend_deinit,
};

/* ------------------------------------------------------------------ */
/* The end of a capture, the records and the buffers.                 */

/* STOP, the final positions, the last records, the recording's end. */
static int
hwt_finish(struct hwt_src *hs)
{
	struct hwtr_hwt_stop st;
	int rc;

	if (hs->finished)
		return (0);
	hs->finished = 1;
	hwt_trig_detach(hs);
	if (hs->started && hs->nbufs > 0 && !hs->bufs[0].gone) {
		memset(&st, 0, sizeof(st));
		if (hs->sys->ioctl(hs->sys->arg, hs->bufs[0].fd,
		    HWTR_HWT_IOC_STOP, &st) < 0 && errno != ENXIO)
			hwtr_logf(&hs->src->cfg.log, HWTR_LOG_WARN,
			    "hwt: HWT_IOC_STOP: %s", strerror(errno));
	}
	if (hs->child > 0 && !hs->reaped) {
		(void)kill(hs->child, SIGKILL);
		(void)reap(hs, 1);
	}
	/* STOP queues no record: the tails are at BUFPTR_GET's positions. */
	if ((rc = hwt_records(hs)) < 0 || (rc = hwt_drain(hs, 1, 0)) < 0)
		return (rc);
	if (hs->src->exec_errno != 0) {
		hwt_err(hs, "cannot run '%s': %s", hs->src->cfg.argv[0],
		    strerror(hs->src->exec_errno));
		return (-HWTR_E_IO);
	}
	/*
	 * No EXIT record: hwt(4)'s records carry no time, so every record is
	 * at time 0, and an exit there would end the mappings before the
	 * trace.  The exit status is the capture's.
	 */
	if (hs->filter_wait) {
		hwt_err(hs, "--filter %s: no image '%s' mapped has that "
		    "function; nothing was traced", hs->filter,
		    hs->src->cfg.argv != NULL ? hs->src->cfg.argv[0] : "?");
		return (-HWTR_E_NOENT);
	}
	if ((rc = hwt_rec_finish(hs)) < 0)
		return (rc);
	hs->src->recording = hs->rec_path;
	return (0);
}

/* An ioctl on the context; -HWTR_E_IO with the request named. */
static int
hwt_ioctl(struct hwt_src *hs, int fd, unsigned long req, void *arg,
    const char *what)
{
	if (hs->sys->ioctl(hs->sys->arg, fd, req, arg) == 0)
		return (0);
	hwt_err(hs, "hwt(4) context %d: %s: %s", hs->ident, what,
	    strerror(errno));
	return (-HWTR_E_IO);
}

/* PT_INTERP of the ELF64 file @path into @out; 1 found, else 0. */
static int
elf_interp(const char *path, char *out, size_t len)
{
	uint8_t eh[64], ph[56];
	uint64_t phoff, off, sz;
	uint16_t phnum, phentsize, i;
	int fd, found = 0;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return (0);
	if (pread(fd, eh, sizeof(eh), 0) != sizeof(eh) ||
	    memcmp(eh, "\177ELF", 4) != 0 || eh[4] != 2 || eh[5] != 1)
		goto out;
	memcpy(&phoff, eh + 32, 8);
	memcpy(&phentsize, eh + 54, 2);
	memcpy(&phnum, eh + 56, 2);
	if (phentsize < sizeof(ph))
		goto out;
	for (i = 0; i < phnum && !found; i++) {
		if (pread(fd, ph, sizeof(ph), (off_t)(phoff +
		    (uint64_t)i * phentsize)) != sizeof(ph))
			break;
		if (hwtr_perf_u32(ph) != 3)		/* PT_INTERP */
			continue;
		off = hwtr_perf_u64(ph + 8);
		sz = hwtr_perf_u64(ph + 32);
		if (sz == 0 || sz >= len ||
		    pread(fd, out, (size_t)sz, (off_t)off) != (ssize_t)sz)
			break;
		out[sz] = '\0';
		found = out[0] == '/';
	}
out:
	close(fd);
	return (found);
}

/* A little-endian ELF64 field at @p. */
static uint64_t
le(const uint8_t *p, int n)
{
	uint64_t v = 0;

	while (n-- > 0)
		v = v << 8 | p[n];
	return (v);
}

/*
 * The value and size of the symbol @name in the little-endian ELF64
 * image @buf (.symtab, else .dynsym): 1 found, 0 not.
 */
static int
elf_sym(const uint8_t *buf, size_t len, const char *name, uint64_t *value,
    uint64_t *size)
{
	uint64_t shoff, shnum, sh, off, sz, link, soff, ssz, k, nm;
	uint64_t want;
	size_t nlen = strlen(name);

	if (len < 64 || buf[4] != 2 || buf[5] != 1)
		return (0);
	shoff = le(buf + 40, 8);
	shnum = le(buf + 60, 2);
	if (le(buf + 58, 2) != 64 || shoff > len || shnum > (len - shoff) / 64)
		return (0);
	for (want = 2; want != 0; want = want == 2 ? 11 : 0)
		for (sh = 0; sh < shnum; sh++) {
			const uint8_t *h = buf + shoff + sh * 64;

			if (le(h + 4, 4) != want)
				continue;
			off = le(h + 24, 8);
			sz = le(h + 32, 8);
			link = le(h + 40, 4);
			if (off > len || sz > len - off || link >= shnum)
				return (0);
			h = buf + shoff + link * 64;
			soff = le(h + 24, 8);
			ssz = le(h + 32, 8);
			if (soff > len || ssz > len - soff)
				return (0);
			for (k = 0; k + 24 <= sz; k += 24) {
				nm = le(buf + off + k, 4);
				if (nm >= ssz || ssz - nm <= nlen ||
				    memcmp(buf + soff + nm, name, nlen + 1) != 0)
					continue;
				*value = le(buf + off + k + 8, 8);
				*size = le(buf + off + k + 16, 8);
				return (1);
			}
		}
	return (0);
}

/*
 * --filter FUNC: look for it in the image @path just mapped at @addr; once
 * found, the range goes in, the context starts.  0, or -HWTR_E_*.
 */
static int
try_filter(struct hwt_src *hs, const char *path, uint64_t addr)
{
	struct hwtr_elf_info *info;
	void *buf = NULL;
	uint64_t v = 0, size = 0;
	size_t len;
	int rc = 0;

	if ((info = calloc(1, sizeof(*info))) == NULL)
		return (-HWTR_E_NOMEM);
	if (hwtr_read_file(path, 1ULL << 31, &buf, &len, NULL, 0) < 0 ||
	    hwtr_elf_parse(buf, len, info, NULL, 0) < 0 ||
	    elf_sym(buf, len, hs->filter, &v, &size) != 1)
		goto out;
	if (size == 0)
		size = 1;	/* a label: its first instruction at least */
	if (info->type == 3)
		v += addr;
	hs->range[0] = v;
	hs->range[1] = v + size;
	hs->nranges = 1;
	hs->filter_wait = 0;
	hwtr_logf(&hs->src->cfg.log, HWTR_LOG_INFO, "hwt: --filter %s: "
	    "0x%" PRIx64 "-0x%" PRIx64 " in %s", hs->filter, hs->range[0],
	    hs->range[1], path);
	if ((rc = set_config(hs, 0)) == 0)
		rc = hwt_start_ctx(hs);
out:
	free(buf);
	free(info);
	return (rc);
}

/* One record of RECORD_GET into the recording. */
static int
one_record(struct hwt_src *hs, const struct hwtr_hwt_record_user_entry *r,
    int *wake)
{
	char path[HWTR_HWT_MAXPATHLEN + 1], interp[HWTR_HWT_MAXPATHLEN];
	const char *base;
	int32_t pid = hs->src->first_pid;
	int rc;

	memcpy(path, r->u.img.fullpath, HWTR_HWT_MAXPATHLEN);
	path[HWTR_HWT_MAXPATHLEN] = '\0';
	switch (r->record_type) {
	case HWTR_HWT_RECORD_EXECUTABLE:
		base = strrchr(path, '/');
		hwt_rec_comm(hs, pid, pid, base != NULL ? base + 1 : path, 1);
		hwt_rec_image(hs, pid, r->u.img.addr, path, 0);
		hs->exec_base = r->u.img.addr;
		hs->have_exec = 1;
		if (r->u.img.baseaddr != 0 &&
		    elf_interp(path, interp, sizeof(interp)))
			hwt_rec_image(hs, pid, r->u.img.baseaddr, interp, 0);
		*wake = 1;
		if (hs->filter_wait &&
		    (rc = try_filter(hs, path, r->u.img.addr)) < 0)
			return (rc);
		return (0);
	case HWTR_HWT_RECORD_MMAP:
		hwt_rec_image(hs, pid, r->u.img.addr, path, 0);
		*wake = 1;
		if (hs->filter_wait &&
		    (rc = try_filter(hs, path, r->u.img.addr)) < 0)
			return (rc);
		return (0);
	case HWTR_HWT_RECORD_KERNEL:
		hwt_rec_image(hs, -1, r->u.img.addr, path, 1);
		return (0);
	case HWTR_HWT_RECORD_THREAD_CREATE:
		if (hs->cpu_mode)
			return (0);
		if (r->u.thread_id < 0) {
			hwt_err(hs, "hwt(4) THREAD_CREATE record of thread "
			    "%d", r->u.thread_id);
			return (-HWTR_E_FORMAT);
		}
		return (add_buf(hs, r->u.thread_id));
	default:
		/* BUFFER (every buffer is read anyway), MUNMAP, names. */
		return (0);
	}
}

/* Every record the kernel has queued; WAKEUP after exec/mmap. */
static int
hwt_records(struct hwt_src *hs)
{
	struct hwtr_hwt_record_user_entry *recs;
	struct hwtr_hwt_record_get rg;
	struct hwtr_hwt_wakeup wk;
	int n, i, wake, rc = 0, fd;

	fd = hs->nbufs > 0 ? hs->bufs[0].fd : -1;
	if (hs->cpu_mode && fd < 0)
		return (0);
	if ((recs = calloc(HWT_NREC, sizeof(*recs))) == NULL)
		return (-HWTR_E_NOMEM);
	do {
		n = HWT_NREC;
		memset(&rg, 0, sizeof(rg));
		rg.records = recs;
		rg.nentries = &n;
		/* Before the first device is open: ask on thread 0's. */
		if (fd < 0) {
			if ((rc = add_buf(hs, 0)) < 0)
				break;
			fd = hs->bufs[0].fd;
		}
		if (hs->sys->ioctl(hs->sys->arg, fd, HWTR_HWT_IOC_RECORD_GET,
		    &rg) < 0) {
			if (errno == ENXIO || errno == ENOENT || errno == EBADF)
				n = 0;	/* the device went away */
			else {
				hwt_err(hs, "hwt(4) context %d: "
				    "HWT_IOC_RECORD_GET: %s", hs->ident,
				    strerror(errno));
				rc = -HWTR_E_IO;
			}
			break;
		}
		assert(n >= 0 && n <= HWT_NREC);
		wake = 0;
		for (i = 0; i < n && rc == 0; i++)
			rc = one_record(hs, &recs[i], &wake);
		if (rc == 0 && wake && !hs->cpu_mode) {
			memset(&wk, 0, sizeof(wk));
			rc = hwt_ioctl(hs, fd, HWTR_HWT_IOC_WAKEUP, &wk,
			    "HWT_IOC_WAKEUP");
		}
	} while (rc == 0 && n == HWT_NREC);
	free(recs);
	return (rc);
}

/* Buffer @b's write position, counting laps; 0, 1 gone, or -HWTR_E_IO. */
static int
bufpos(struct hwt_src *hs, struct hwt_buf *b, uint64_t *pos)
{
	struct hwtr_hwt_bufptr_get bg;
	uintptr_t off = 0;
	uint64_t data = 0;
	int page = 0;

	memset(&bg, 0, sizeof(bg));
	bg.ident = &page;
	bg.offset = &off;
	bg.data = &data;
	if (hs->sys->ioctl(hs->sys->arg, b->fd, HWTR_HWT_IOC_BUFPTR_GET,
	    &bg) < 0) {
		if (errno == ENXIO || errno == ENOENT || errno == EBADF)
			return (1);
		hwt_err(hs, "hwt(4) /dev/hwt_%d_%d: HWT_IOC_BUFPTR_GET: %s",
		    hs->ident, b->id, strerror(errno));
		return (-HWTR_E_IO);
	}
	if (page < 0 || off >= HWTR_HWT_PAGE) {
		hwt_err(hs, "hwt(4) /dev/hwt_%d_%d: BUFPTR_GET says page %d "
		    "offset %ju", hs->ident, b->id, page, (uintmax_t)off);
		return (-HWTR_E_FORMAT);
	}
	*pos = (uint64_t)page * HWTR_HWT_PAGE + off;
	if (hs->coresight) {
		/*
		 * The ETR's write offset in the ring, laps not counted: a
		 * lower offset than the last one is a lap (hwt(8) reads it
		 * so); a whole lap between two reads cannot be seen.
		 */
		if (*pos >= hs->bufsize) {
			hwt_err(hs, "hwt(4) /dev/hwt_%d_%d: BUFPTR_GET says "
			    "offset %" PRIu64 " in a ring of %" PRIu64,
			    hs->ident, b->id, *pos, hs->bufsize);
			return (-HWTR_E_FORMAT);
		}
		if (*pos < b->cs_raw)
			b->cs_laps++;
		b->cs_raw = *pos;
		*pos += b->cs_laps * hs->bufsize;
	}
	return (0);
}

/*
 * The bytes of @b up to @pos that are still in the ring, then loss.
 * @final: after STOP.
 */
static int
consume(struct hwt_src *hs, struct hwt_buf *b, uint64_t pos, int final)
{
	uint64_t start = b->last, lost = 0, pos2, n, i, room;
	uint8_t *tmp;
	size_t at, k;
	int rc;

	if (pos < b->last) {
		hwt_err(hs, "hwt(4) /dev/hwt_%d_%d: the write position went "
		    "back from %" PRIu64 " to %" PRIu64, hs->ident, b->id,
		    b->last, pos);
		return (-HWTR_E_FORMAT);
	}
	if (pos == b->last)
		return (0);
	/*
	 * While tracing, the hardware is already writing the page after
	 * @pos, over the oldest page of the ring: only the bufsize - 4 KiB
	 * bytes before @pos are sure to be intact.  After STOP (@final) the
	 * whole ring is.
	 */
	assert(hs->bufsize >= 2 * HWTR_HWT_PAGE);
	room = final ? hs->bufsize : hs->bufsize - HWTR_HWT_PAGE;
	if (pos - start > room)
		start = pos - room;
	n = pos - start;
	if ((tmp = malloc((size_t)n)) == NULL)
		return (-HWTR_E_NOMEM);
	for (i = 0; i < n; i += k) {
		at = (size_t)((start + i) % hs->bufsize);
		k = (size_t)(hs->bufsize - at);
		if (k > n - i)
			k = (size_t)(n - i);
		memcpy(tmp + i, b->base + at, k);
	}
	/* What the hardware wrote over during the copy is lost too. */
	if ((rc = bufpos(hs, b, &pos2)) < 0) {
		free(tmp);
		return (rc);
	}
	if (rc == 0 && pos2 > room && pos2 - room > start) {
		uint64_t over = pos2 - room - start;

		if (over > n)
			over = n;
		start += over;
		memmove(tmp, tmp + over, (size_t)(n - over));
		n -= over;
	}
	lost = start - b->last;
	if (n > 0)
		hwt_rec_data(hs, b, tmp, (size_t)n, start);
	free(tmp);
	if (lost > 0) {
		hwtr_logf(&hs->src->cfg.log, HWTR_LOG_WARN, "hwt: "
		    "/dev/hwt_%d_%d: %" PRIu64 " bytes overwritten before "
		    "they were read (--buffer is %" PRIu64 ")", hs->ident,
		    b->id, lost, hs->bufsize);
		b->lost += lost;
		hs->lost += lost;
	}
	hwt_rec_aux(hs, b, start, n, lost > 0 ? HWTR_PERF_AUX_TRUNCATED : 0);
	b->last = start + n;
	return (0);
}

/* The end of @b's stream at @pos, unread: recorded lost. */
static void
give_up(struct hwt_src *hs, struct hwt_buf *b, uint64_t pos)
{
	if (pos <= b->last)
		return;
	hwt_rec_aux(hs, b, b->last, pos - b->last, HWTR_PERF_AUX_TRUNCATED);
	b->lost += pos - b->last;
	hs->lost += pos - b->last;
	b->last = pos;
}

/*
 * Read every buffer to its write position.  @final: after STOP; @snap: a
 * ring mode snapshot (ring mode reads only then and after STOP).
 */
static int
hwt_drain(struct hwt_src *hs, int final, int snap)
{
	struct hwt_buf *b;
	uint64_t pos;
	int i, rc;

	if (hs->src->cfg.mode == HWTR_CAP_RING && !final && !snap)
		return (0);
	for (i = 0; i < hs->nbufs; i++) {
		b = &hs->bufs[i];
		if (b->gone)
			continue;
		if ((rc = bufpos(hs, b, &pos)) < 0)
			return (rc);
		if (rc == 1) {
			b->gone = 1;
			hwtr_logf(&hs->src->cfg.log, HWTR_LOG_WARN, "hwt: "
			    "/dev/hwt_%d_%d went away: its trace after byte "
			    "%" PRIu64 " is lost", hs->ident, b->id, b->last);
			hwt_rec_aux(hs, b, b->last, 0,
			    HWTR_PERF_AUX_TRUNCATED);
			continue;
		}
		if (hs->src->cfg.mode == HWTR_CAP_STOP &&
		    pos > hs->bufsize) {
			if (b->last < hs->bufsize &&
			    (rc = consume(hs, b, hs->bufsize, final)) < 0)
				return (rc);
			if (final)
				give_up(hs, b, pos);
			continue;
		}
		if ((rc = consume(hs, b, pos, final)) < 0)
			return (rc);
	}
	return (0);
}
