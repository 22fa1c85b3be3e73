/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * A simulated FreeBSD hwt(4) for the hwt source (kernel/hwt.c), handed to
 * it as its system call table (struct hwtr_hwt_sys) by
 * tests/kernel/t_hwt.c, which includes this file.  It models what
 * sys/dev/hwt/ and the Intel PT backend (sys/amd64/pt/pt.c) do, as far as
 * user space can see:
 *
 * - /dev/hwt takes HWT_IOC_ALLOC only (any other request: ENXIO); ALLOC
 *   checks bufsize (a page multiple), the mode, the backend's name
 *   (ENODEV), and in thread mode fails as told (fk->alloc_errno: EBUSY,
 *   EEXIST, EPERM, ENXIO); it creates /dev/hwt_<ident>_<n>, one per
 *   thread (thread 0, with a THREAD_CREATE record) or per CPU of cpu_map
 *   (with KERNEL records at the head of the queue, as
 *   hwt_record_kernel_objects() puts them).
 * - A device maps only read-only at offset 0 (else ENXIO), the whole
 *   buffer.  Its ioctls: SET_CONFIG (not while running: ENXIO), START
 *   (twice: ENXIO), STOP, RECORD_GET (1 to 1024 entries, else ENXIO;
 *   never waits here), BUFPTR_GET, WAKEUP (CPU mode: ENXIO).
 * - A producer thread plays the traced program: in thread mode it waits
 *   for the launched process to exec fk->exe, queues EXECUTABLE (and
 *   fk->mmap_path's MMAP record when set), each time sleeping until
 *   WAKEUP when pause_on_mmap is set; then, once started, it writes
 *   fk->spans spans of real Intel PT made by the project's encoder
 *   (PSB+, TIP.PGE at fk->from, FUP and TIP.PGD at fk->to: the
 *   instructions of [from, to)), each followed by fk->pad PAD bytes, into
 *   the device's ring.  The position BUFPTR_GET reports moves as the
 *   backend's: at each filled 4 KiB ToPA page (with a BUFFER record), and
 *   to the exact end only at STOP; it counts the laps (page numbers go on
 *   past the end of the ring).  An IP range (SET_CONFIG's pt_cpu_config)
 *   not covering [from, to) makes the spans write nothing, as the
 *   hardware would.
 * - fk->switch_out: after each span the thread is switched out, which
 *   publishes the exact position (mid-page) with no record.
 * - fk->pace: after each span the producer waits until the reader has
 *   seen the position; fk->burst: every span is written at once, under
 *   the lock, so the reader can only miss laps.  fk->new_thread_at: from
 *   that span on the spans go to a new thread (THREAD_CREATE, device 1).
 *   fk->gone_after: after that many spans the position is published
 *   whole, read, and the device destroyed (its ioctls: ENXIO).
 *   fk->snap_at: before that span *fk->snap_ctr is bumped (SIGUSR2 in
 *   the session) and the producer waits until the reader has read device
 *   0's position, fk->snap_pos (page-granular, as the backend's), and
 *   again after its copy.  CPU mode:
 *   span i goes to the (i mod n)-th CPU's buffer.
 * - The coresight backend (fk->backend "coresight"): the ETR's ring is
 *   the first CPU's device; a span is an ETMv4 trace made here by
 *   construction (A-Sync, an empty Trace Info, an Address with Context
 *   packet of fk->from at EL1 in AArch64, fk->cs_atoms E atoms), in
 *   16-byte formatter frames under trace ID CPU + 1, span i from the
 *   (i mod n)-th CPU.  BUFPTR_GET says the ETR's write offset in the ring
 *   (laps not counted), exact after each span.  sysctl answers
 *   dev.coresight_etm4x.N.idrM for each CPU N of the context.
 * - ptrace(2) and waitpid(2) on the process (the --trigger breakpoint):
 *   PT_ATTACH (fails with fk->tr_errno when set) stops it with SIGSTOP;
 *   the other requests want it stopped and that stop reported (else
 *   EBUSY).  Traced, it stops with SIGTRAP after its exec (its debug
 *   registers cleared, as exec does), unless it exec'd before ALLOC
 *   (-p); in CPU mode with fk->cpu_exec_wait, the spans wait for the
 *   traced command's exec and its stop.  amd64's debug registers are kept
 *   (PT_GETDBREGS, PT_SETDBREGS): after span i of fk->trig_after[] the
 *   program reaches fk->trig_pc; when DR7 enables breakpoint 0 for
 *   execution (L0, R/W0 and LEN0 00) at that address, the thread stops
 *   there (switched out: the exact position published; DR6.B0 set) and
 *   waitpid reports SIGTRAP; it goes on at PT_CONTINUE.  At the
 *   breakpoint, PT_STEP or PT_CONTINUE with it still enabled fires it
 *   again, as the fault-type breakpoint does; PT_STEP with it disabled
 *   stops after one instruction (DR6.BS).  Each hit logs whether the
 *   reader had read the stop's position (fk->hit_read[]).  waitpid
 *   reports these stops and otherwise is the system's, but for
 *   fk->external (a process of -p, whose parent reaps it).
 * When done it creates fk->done (the fixture waits for it) and logs
 * each span's start in its buffer (fk->span_at, fk->span_dev).
 */

#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hwtr_kernel.h"
#include "../../kernel/hwt_int.h"

#define FK_DEVS		8
#define FK_SPANS	256
#define FK_RECS		64
#define FK_CTL_FD	100
#define FK_DEV_FD	200
#define FK_KQ_FD	300

struct fakehwt;

struct fk_dev {
	struct fakehwt	*fk;
	int		n;
	int		exists;
	uint8_t		*ring;
	uint64_t	written;	/* bytes the "hardware" wrote */
	uint64_t	visible;	/* what BUFPTR_GET says */
	uint64_t	seen;		/* the last BUFPTR_GET answer */
	uint64_t	ngets;		/* BUFPTR_GETs answered */
	struct hwtr_ptenc *enc;
};

struct fakehwt {
	/* What to do. */
	const char	*exe;		/* thread mode: the launched program */
	const char	*mmap_path;	/* an MMAP record after the exec */
	uint64_t	mmap_addr;
	const char	*kpath;		/* CPU mode: a KERNEL record */
	uint64_t	kaddr;
	const char	*done;
	const char	*backend;	/* the backend it has: "pt" */
	uint64_t	from, to;
	int		spans, pad, pace, burst, switch_out;
	int		new_thread_at, gone_after;
	int		snap_at;	/* before that span: SIGUSR2 */
	volatile int	*snap_ctr;	/* the counter it bumps */
	uint64_t	snap_pos;	/* device 0's position then */
	int		alloc_errno;
	int		cs_atoms;	/* coresight: E atoms per span */
	int		nsysctl;
	uint64_t	exe_addr;	/* the EXECUTABLE record's address */
	int		tr_errno;	/* PT_ATTACH fails so */
	uint64_t	trig_pc;	/* the program reaches it after */
	int		trig_after[16];	/* these spans */
	int		ntrig_after;
	pid_t		external;	/* -p's process: not reaped here */
	int		cpu_exec_wait;	/* CPU mode: spans after the exec */
	/* State. */
	pthread_mutex_t	mtx;
	pthread_cond_t	cv;
	pthread_t	prod;
	int		have_prod;
	int		ctx, ident, mode, started, stopped, quit;
	pid_t		pid;
	size_t		bufsize;
	int		pause_on_mmap, sleeping, wakeups;
	struct hwtr_hwt_pt_config cfg;
	int		nset_config, start_after_config;
	struct hwtr_hwt_record_user_entry rec[FK_RECS];
	int		nrec;
	int		nbuffer_recs;
	struct fk_dev	dev[FK_DEVS];
	uint64_t	span_at[FK_SPANS];
	int		span_dev[FK_SPANS];
	int		nspans;
	uint64_t	first_seen;	/* first non-zero BUFPTR_GET of dev 0 */
	int		execd_before;	/* -p: exec'd before ALLOC */
	pid_t		tr_pid;		/* traced */
	int		tr_stopped, tr_pending, at_bp;
	struct hwtr_dbreg_amd64 dbr;
	int		nhits;
	uint64_t	hit_pos[16];	/* device 0's position at each hit */
	int		hit_read[16];	/* read before it went on */
	int		hit_dev;
	char		log[8192];
};

static void fk_log(struct fakehwt *fk, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
fk_log(struct fakehwt *fk, const char *fmt, ...)
{
	size_t n = strlen(fk->log);
	va_list ap;

	if (n + 4 >= sizeof(fk->log))
		return;
	va_start(ap, fmt);
	vsnprintf(fk->log + n, sizeof(fk->log) - n - 3, fmt, ap);
	va_end(ap);
	strcat(fk->log, " | ");
}

static void
fk_init(struct fakehwt *fk)
{
	memset(fk, 0, sizeof(*fk));
	pthread_mutex_init(&fk->mtx, NULL);
	pthread_cond_init(&fk->cv, NULL);
	fk->backend = "pt";
	fk->new_thread_at = fk->gone_after = fk->snap_at = -1;
	fk->spans = 2;
}

/* Queue a record (the lock held); @head: in front (KERNEL). */
static void
fk_queue(struct fakehwt *fk, const struct hwtr_hwt_record_user_entry *r,
    int head)
{
	if (fk->nrec == FK_RECS)
		return;
	if (head) {
		memmove(fk->rec + 1, fk->rec, fk->nrec * sizeof(*r));
		fk->rec[0] = *r;
	} else
		fk->rec[fk->nrec] = *r;
	fk->nrec++;
}

static void
fk_queue_img(struct fakehwt *fk, enum hwtr_hwt_record_type t,
    const char *path, uint64_t addr, uint64_t base, int head)
{
	struct hwtr_hwt_record_user_entry r;

	memset(&r, 0, sizeof(r));
	r.record_type = t;
	snprintf(r.u.img.fullpath, sizeof(r.u.img.fullpath), "%s", path);
	r.u.img.addr = (uintptr_t)addr;
	r.u.img.baseaddr = (uintptr_t)base;
	fk_queue(fk, &r, head);
}

static void
fk_queue_thread(struct fakehwt *fk, int id)
{
	struct hwtr_hwt_record_user_entry r;

	memset(&r, 0, sizeof(r));
	r.record_type = HWTR_HWT_RECORD_THREAD_CREATE;
	r.u.thread_id = id;
	fk_queue(fk, &r, 0);
}

static int
fk_mkdev(struct fakehwt *fk, int n)
{
	struct fk_dev *d = &fk->dev[n];

	d->ring = mmap(NULL, fk->bufsize, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (d->ring == MAP_FAILED)
		return (-1);
	d->exists = 1;
	return (0);
}

/* The encoder's output: into the ring, a BUFFER record per filled page. */
static int
fk_write(void *arg, const void *buf, size_t len)
{
	struct fk_dev *d = arg;
	struct fakehwt *fk = d->fk;
	struct hwtr_hwt_record_user_entry r;
	const uint8_t *p = buf;
	size_t i;

	for (i = 0; i < len; i++) {
		d->ring[d->written % fk->bufsize] = p[i];
		d->written++;
		if (d->written % HWTR_HWT_PAGE == 0) {
			d->visible = d->written;
			memset(&r, 0, sizeof(r));
			r.record_type = HWTR_HWT_RECORD_BUFFER;
			r.u.buf.buf_id = d->n;
			r.u.buf.curpage = (int)(d->visible / HWTR_HWT_PAGE);
			r.u.buf.offset = 0;
			fk_queue(fk, &r, 0);
			fk->nbuffer_recs++;
		}
	}
	return (0);
}

/* Wait (the lock held) until @cond or 5 s; 0 when @cond came. */
#define FK_WAIT(fk, cond) ({						\
	struct timespec ts_;						\
	int rc_ = 0;							\
	clock_gettime(CLOCK_REALTIME, &ts_);				\
	ts_.tv_sec += 5;						\
	while (!(cond) && !(fk)->quit && rc_ == 0)			\
		rc_ = pthread_cond_timedwait(&(fk)->cv, &(fk)->mtx, &ts_);\
	(cond) ? 0 : -1;						\
})

/* One span into device @n (the lock held): [from, to), then PADs. */
static void
fk_span(struct fakehwt *fk, int n)
{
	struct hwtr_ptenc_opts o = { .no_tsc = 1 };
	struct hwtr_ptenc_out out;
	struct fk_dev *d = &fk->dev[n];
	static const uint8_t pad[64];
	int k;

	if (fk->cfg.nranges > 0 && !(fk->from >= fk->cfg.ip_ranges[0].start &&
	    fk->to <= fk->cfg.ip_ranges[0].end))
		return;			/* filtered out by the IP range */
	if (d->enc == NULL) {
		out.write = fk_write;
		out.psb = NULL;
		out.arg = d;
		if (hwtr_ptenc_new(&d->enc, &o, &out) != 0)
			return;
	}
	if (fk->nspans < FK_SPANS) {
		fk->span_at[fk->nspans] = d->written;
		fk->span_dev[fk->nspans] = n;
		fk->nspans++;
	}
	hwtr_ptenc_want_psb(d->enc);
	(void)hwtr_ptenc_enable(d->enc, fk->from, 1, 0);
	(void)hwtr_ptenc_disable(d->enc, fk->to, 0);
	(void)hwtr_ptenc_flush(d->enc);
	for (k = fk->pad; k > 0; k -= (int)sizeof(pad))
		(void)fk_write(d, pad, k < (int)sizeof(pad) ? (size_t)k :
		    sizeof(pad));
}

/* The formatter's frames of @len bytes of trace ID @id into @d. */
static void
fk_frames(struct fk_dev *d, int id, const uint8_t *p, size_t len)
{
	uint8_t f[16];
	size_t k = 0;
	int e;

	while (k < len) {
		memset(f, 0, sizeof(f));
		f[0] = (uint8_t)(id << 1 | 1);	/* ID now, byte 1 is its */
		f[1] = p[k++];
		for (e = 2; e <= 14; e += 2) {
			if (k == len) {
				f[e] = 0x01;	/* ID 0: null to the end */
				break;
			}
			if (k + 1 == len && e < 14) {
				/* ID 0 after the last byte, at e + 1. */
				f[e] = 0x01;
				f[15] |= (uint8_t)(1 << (e / 2));
				f[e + 1] = p[k++];
				break;
			}
			f[e] = p[k] & 0xfe;
			f[15] |= (uint8_t)((p[k] & 1) << (e / 2));
			k++;
			if (e < 14)
				f[e + 1] = p[k++];
		}
		(void)fk_write(d, f, sizeof(f));
	}
}

/* One CoreSight span of CPU @cpu into device @n (the lock held). */
static void
fk_cs_span(struct fakehwt *fk, int n, int cpu)
{
	struct fk_dev *d = &fk->dev[n];
	uint8_t pk[64 + FK_SPANS];
	size_t len = 0;
	int i;

	assert(fk->cs_atoms > 0 && fk->cs_atoms <= FK_SPANS);
	for (i = 0; i < 11; i++)		/* A-Sync */
		pk[len++] = 0x00;
	pk[len++] = 0x80;
	pk[len++] = 0x01;			/* Trace Info, no sections */
	pk[len++] = 0x00;
	pk[len++] = 0x85;	/* Address with Context, 64-bit, IS0 */
	pk[len++] = (uint8_t)((fk->from >> 2) & 0x7f);
	pk[len++] = (uint8_t)((fk->from >> 9) & 0x7f);
	for (i = 2; i < 8; i++)
		pk[len++] = (uint8_t)(fk->from >> (8 * i));
	pk[len++] = 0x31;			/* EL1, SF (AArch64), NS */
	for (i = 0; i < fk->cs_atoms; i++)
		pk[len++] = 0xf7;		/* Atom format 1: E */
	if (fk->nspans < FK_SPANS) {
		fk->span_at[fk->nspans] = d->written;
		fk->span_dev[fk->nspans] = n;
		fk->nspans++;
	}
	fk_frames(d, cpu + 1, pk, len);
	d->visible = d->written;		/* the ETR's RWP */
}

/* 1 once /proc/@pid/exe is @exe (the launched command exec'd). */
static int
fk_execd(pid_t pid, const char *exe)
{
	char p[64], a[4096], b[4096];
	ssize_t n;

	snprintf(p, sizeof(p), "/proc/%d/exe", (int)pid);
	if ((n = readlink(p, a, sizeof(a) - 1)) < 0)
		return (0);
	a[n] = '\0';
	if (realpath(exe, b) == NULL)
		return (0);
	return (strcmp(a, b) == 0);
}

/* Sleep as a thread paused on mmap does, until WAKEUP (the lock held). */
static void
fk_pause(struct fakehwt *fk)
{
	int before = fk->wakeups;

	if (!fk->pause_on_mmap)
		return;
	fk->sleeping = 1;
	if (FK_WAIT(fk, fk->wakeups > before) != 0)
		fk_log(fk, "paused thread never woken");
	fk->sleeping = 0;
}

/* The traced process stops with @sig (the lock held). */
static void
fk_stop(struct fakehwt *fk, int sig)
{
	fk->tr_stopped = 1;
	fk->tr_pending = sig;
	pthread_cond_broadcast(&fk->cv);
}

/* The exec of a traced process (the lock held): SIGTRAP, until resumed. */
static void
fk_exec_stop(struct fakehwt *fk)
{
	memset(&fk->dbr, 0, sizeof(fk->dbr));
	fk_stop(fk, SIGTRAP);
	fk_log(fk, "exec stop");
	if (FK_WAIT(fk, !fk->tr_stopped) != 0)
		fk_log(fk, "never continued after the exec");
}

/* Breakpoint 0 set for execution at @pc (the lock held). */
static int
fk_armed(const struct fakehwt *fk, uint64_t pc)
{
	return ((fk->dbr.dr[7] & HWTR_DR7_L0) != 0 &&
	    (fk->dbr.dr[7] & HWTR_DR7_RWLEN0) == 0 && fk->dbr.dr[0] == pc);
}

/*
 * After span @i on device @n: the program reaches fk->trig_pc when @i is
 * in fk->trig_after; the breakpoint there stops it until PT_CONTINUE.
 */
static void
fk_reach(struct fakehwt *fk, int i, int n)
{
	int k, at = 0;

	for (k = 0; k < fk->ntrig_after; k++)
		at |= fk->trig_after[k] == i;
	if (!at || fk->tr_pid == 0 || !fk_armed(fk, fk->trig_pc) ||
	    fk->nhits == 16)
		return;
	/* Stopped, so switched out: the exact position. */
	fk->dev[n].visible = fk->dev[n].written;
	fk->hit_dev = n;
	fk->hit_pos[fk->nhits++] = fk->dev[n].visible;
	fk->dbr.dr[6] |= HWTR_DR6_B0;
	fk->at_bp = 1;
	fk_log(fk, "hit %d at %ju", fk->nhits, (uintmax_t)fk->dev[n].visible);
	fk_stop(fk, SIGTRAP);
	if (FK_WAIT(fk, !fk->tr_stopped) != 0)
		fk_log(fk, "never continued after hit %d", fk->nhits);
}

static void *
fk_producer(void *arg)
{
	struct fakehwt *fk = arg;
	struct timespec ms = { 0, 2000000 };
	int i, n, ncpu = 0, cpus[FK_DEVS], j;
	FILE *fp;

	if (fk->mode == HWTR_HWT_MODE_THREAD) {
		for (i = 0; i < 5000 && !fk_execd(fk->pid, fk->exe); i++) {
			pthread_mutex_lock(&fk->mtx);
			n = fk->quit;
			pthread_mutex_unlock(&fk->mtx);
			if (n)
				return (NULL);
			nanosleep(&ms, NULL);
		}
		pthread_mutex_lock(&fk->mtx);
		fk_queue_img(fk, HWTR_HWT_RECORD_EXECUTABLE, fk->exe,
		    fk->exe_addr, 0, 0);
		fk_pause(fk);
		if (fk->mmap_path != NULL) {
			fk_queue_img(fk, HWTR_HWT_RECORD_MMAP, fk->mmap_path,
			    fk->mmap_addr, 0, 0);
			fk_pause(fk);
		}
		if (fk->tr_pid == fk->pid && fk->pid > 0 &&
		    !fk->execd_before)
			fk_exec_stop(fk);
	} else if (fk->cpu_exec_wait) {
		/* CPU mode: the traced command's exec comes first. */
		for (i = 0; i < 5000; i++) {
			pthread_mutex_lock(&fk->mtx);
			n = fk->quit || (fk->tr_pid > 0 &&
			    fk_execd(fk->tr_pid, fk->exe));
			pthread_mutex_unlock(&fk->mtx);
			if (n)
				break;
			nanosleep(&ms, NULL);
		}
		pthread_mutex_lock(&fk->mtx);
		if (fk->tr_pid > 0)
			fk_exec_stop(fk);
	} else
		pthread_mutex_lock(&fk->mtx);
	for (j = 0; j < FK_DEVS; j++)
		if (fk->dev[j].exists)
			cpus[ncpu++] = j;
	if (FK_WAIT(fk, fk->started) != 0)
		fk_log(fk, "never started");
	for (i = 0; i < fk->spans && fk->started && !fk->quit; i++) {
		n = 0;
		if (fk->mode == HWTR_HWT_MODE_CPU)
			n = cpus[i % ncpu];
		else if (fk->new_thread_at >= 0 && i >= fk->new_thread_at) {
			n = 1;
			if (!fk->dev[1].exists && fk_mkdev(fk, 1) == 0)
				fk_queue_thread(fk, 1);
		}
		if (fk->gone_after >= 0 && i == fk->gone_after) {
			/* Published whole, read, then the device goes. */
			fk->dev[0].visible = fk->dev[0].written;
			if (FK_WAIT(fk, fk->dev[0].seen >= fk->dev[0].visible))
				fk_log(fk, "reader never saw %ju before the "
				    "device went", (uintmax_t)fk->dev[0].visible);
			fk->dev[0].exists = 0;
			fk_log(fk, "device 0 gone after %d spans", i);
		}
		if (i == fk->snap_at && fk->snap_ctr != NULL) {
			/*
			 * SIGUSR2 now; wait until the reader has copied the
			 * snapshot: it reads the position, copies, and reads
			 * it again to see what was written over meanwhile
			 * (the hardware's race, which a busy host would make
			 * this producer win at random).
			 */
			uint64_t g = fk->dev[0].ngets;

			fk->snap_pos = fk->dev[0].visible;
			(*fk->snap_ctr)++;
			fk_log(fk, "SIGUSR2 at %ju", (uintmax_t)fk->snap_pos);
			if (FK_WAIT(fk, fk->dev[0].seen >= fk->snap_pos &&
			    fk->dev[0].ngets >= g + 2))
				fk_log(fk, "no snapshot taken");
		}
		if (!fk->dev[n].exists)
			continue;
		if (strcmp(fk->backend, "coresight") == 0)
			fk_cs_span(fk, cpus[0], n);
		else
			fk_span(fk, n);
		/* Switched out: pt_cpu_stop() updates the offset, no record. */
		if (fk->switch_out)
			fk->dev[n].visible = fk->dev[n].written;
		fk_reach(fk, i, n);
		if (fk->pace && !fk->burst) {
			struct fk_dev *d = &fk->dev[n];

			if (FK_WAIT(fk, d->seen >= d->visible) != 0)
				fk_log(fk, "reader slow at span %d", i);
		}
		pthread_cond_broadcast(&fk->cv);
		if (!fk->burst) {
			pthread_mutex_unlock(&fk->mtx);
			nanosleep(&ms, NULL);
			pthread_mutex_lock(&fk->mtx);
		}
	}
	pthread_mutex_unlock(&fk->mtx);
	if (fk->done != NULL && (fp = fopen(fk->done, "w")) != NULL)
		fclose(fp);
	return (NULL);
}

/* ------------------------------------------------------------------ */
/* The system calls.                                                   */

static int
fk_open(void *arg, const char *path, int flags)
{
	struct fakehwt *fk = arg;
	int ident, n;
	char c;

	pthread_mutex_lock(&fk->mtx);
	fk_log(fk, "open %s", path);
	if (strcmp(path, "/dev/hwt") == 0) {
		pthread_mutex_unlock(&fk->mtx);
		return (FK_CTL_FD);
	}
	if (sscanf(path, "/dev/hwt_%d_%d%c", &ident, &n, &c) == 2 &&
	    fk->ctx && ident == fk->ident && n >= 0 && n < FK_DEVS &&
	    fk->dev[n].exists) {
		pthread_mutex_unlock(&fk->mtx);
		return (FK_DEV_FD + n);
	}
	pthread_mutex_unlock(&fk->mtx);
	errno = ENOENT;
	return (-1);
}

static int
fk_alloc(struct fakehwt *fk, struct hwtr_hwt_alloc *a)
{
	const uint64_t *map = a->cpu_map;
	int i;

	fk_log(fk, "alloc bufsize=%zu mode=%d pid=%d backend=%s kq=%d",
	    a->bufsize, a->mode, (int)a->pid, a->backend_name, a->kqueue_fd);
	if (a->bufsize == 0 || a->bufsize % HWTR_HWT_PAGE != 0 ||
	    a->backend_name == NULL)
		return (EINVAL);
	if (strcmp(a->backend_name, fk->backend) != 0)
		return (ENODEV);
	if (fk->ctx)
		return (EEXIST);
	fk->bufsize = a->bufsize;
	fk->mode = a->mode;
	if (a->mode == HWTR_HWT_MODE_THREAD) {
		if (fk->alloc_errno != 0)
			return (fk->alloc_errno);
		fk->pid = a->pid;
		fk->execd_before = fk->exe != NULL &&
		    fk_execd(a->pid, fk->exe);
		if (fk_mkdev(fk, 0) != 0)
			return (ENOMEM);
		fk_queue_thread(fk, 0);
	} else if (a->mode == HWTR_HWT_MODE_CPU) {
		if (a->cpusetsize < 8 || map == NULL)
			return (EINVAL);
		for (i = 0; i < FK_DEVS; i++)
			if ((map[0] >> i) & 1 && fk_mkdev(fk, i) != 0)
				return (ENOMEM);
		if (fk->kpath != NULL)
			fk_queue_img(fk, HWTR_HWT_RECORD_KERNEL, fk->kpath,
			    fk->kaddr, 0, 1);
	} else
		return (ENXIO);
	fk->ctx = 1;
	fk->ident = 7;
	*a->ident = fk->ident;
	for (i = 0; i < FK_DEVS; i++) {
		fk->dev[i].fk = fk;
		fk->dev[i].n = i;
	}
	if (pthread_create(&fk->prod, NULL, fk_producer, fk) != 0)
		return (ENOMEM);
	fk->have_prod = 1;
	return (0);
}

static int
fk_dev_ioctl(struct fakehwt *fk, struct fk_dev *d, unsigned long req,
    void *data)
{
	struct hwtr_hwt_set_config *sc;
	struct hwtr_hwt_record_get *rg;
	struct hwtr_hwt_bufptr_get *bg;
	uint64_t pos;
	int n;

	switch (req) {
	case HWTR_HWT_IOC_SET_CONFIG:
		if (fk->started)
			return (ENXIO);
		sc = data;
		fk->nset_config++;
		fk->pause_on_mmap = sc->pause_on_mmap;
		if (sc->config_size == sizeof(fk->cfg) && sc->config != NULL)
			memcpy(&fk->cfg, sc->config, sizeof(fk->cfg));
		fk_log(fk, "set_config pause=%d size=%zu version=%d "
		    "rtit_ctl=%#jx nranges=%d range=%#jx-%#jx",
		    sc->pause_on_mmap, sc->config_size, sc->config_version,
		    (uintmax_t)fk->cfg.rtit_ctl, fk->cfg.nranges,
		    (uintmax_t)fk->cfg.ip_ranges[0].start,
		    (uintmax_t)fk->cfg.ip_ranges[0].end);
		return (0);
	case HWTR_HWT_IOC_START:
		if (fk->started)
			return (ENXIO);
		fk->started = 1;
		fk_log(fk, "start after %d set_config", fk->nset_config);
		return (0);
	case HWTR_HWT_IOC_STOP:
		fk->stopped = 1;
		fk->started = 0;
		/* pt_cpu_stop: the offset is updated, no record. */
		for (n = 0; n < FK_DEVS; n++)
			fk->dev[n].visible = fk->dev[n].written;
		fk_log(fk, "stop");
		return (0);
	case HWTR_HWT_IOC_RECORD_GET:
		rg = data;
		n = *rg->nentries;
		if (n < 1 || n > HWTR_HWT_RECORDS_MAX)
			return (ENXIO);
		if (n > fk->nrec)
			n = fk->nrec;
		memcpy(rg->records, fk->rec, n * sizeof(fk->rec[0]));
		memmove(fk->rec, fk->rec + n, (fk->nrec - n) *
		    sizeof(fk->rec[0]));
		fk->nrec -= n;
		*rg->nentries = n;
		return (0);
	case HWTR_HWT_IOC_BUFPTR_GET:
		bg = data;
		pos = d->visible;
		if (strcmp(fk->backend, "coresight") == 0)
			pos %= fk->bufsize;	/* the ETR's offset */
		if (bg->ident != NULL)
			*bg->ident = (int)(pos / HWTR_HWT_PAGE);
		if (bg->offset != NULL)
			*bg->offset = (uintptr_t)(pos % HWTR_HWT_PAGE);
		if (bg->data != NULL)
			*bg->data = 0;
		d->seen = d->visible;
		d->ngets++;
		if (d->n == 0 && fk->first_seen == 0)
			fk->first_seen = d->visible;
		return (0);
	case HWTR_HWT_IOC_WAKEUP:
		if (fk->mode == HWTR_HWT_MODE_CPU)
			return (ENXIO);
		fk->wakeups++;
		fk_log(fk, "wakeup%s", fk->sleeping ? "" : " (not sleeping)");
		return (0);
	default:
		return (ENOTTY);
	}
}

/* A system call's result: 0, or -1 with errno @e. */
static int
fk_errno(int e)
{
	if (e != 0) {
		errno = e;
		return (-1);
	}
	return (0);
}

static int
fk_ioctl(void *arg, int fd, unsigned long req, void *data)
{
	struct fakehwt *fk = arg;
	int e;

	pthread_mutex_lock(&fk->mtx);
	if (fd == FK_CTL_FD)
		e = req == HWTR_HWT_IOC_ALLOC ? fk_alloc(fk, data) : ENXIO;
	else if (fd >= FK_DEV_FD && fd < FK_DEV_FD + FK_DEVS &&
	    fk->dev[fd - FK_DEV_FD].exists)
		e = fk_dev_ioctl(fk, &fk->dev[fd - FK_DEV_FD], req, data);
	else
		e = ENXIO;
	pthread_cond_broadcast(&fk->cv);
	pthread_mutex_unlock(&fk->mtx);
	return (fk_errno(e));
}

static void *
fk_mmap(void *arg, size_t len, int prot, int fd)
{
	struct fakehwt *fk = arg;
	void *p = MAP_FAILED;

	pthread_mutex_lock(&fk->mtx);
	if (prot == PROT_READ && len == fk->bufsize && fd >= FK_DEV_FD &&
	    fd < FK_DEV_FD + FK_DEVS && fk->dev[fd - FK_DEV_FD].exists)
		p = fk->dev[fd - FK_DEV_FD].ring;
	else
		errno = ENXIO;
	fk_log(fk, "mmap fd=%d prot=%d len=%zu%s", fd, prot, len,
	    p == MAP_FAILED ? " refused" : "");
	pthread_mutex_unlock(&fk->mtx);
	return (p);
}

static int
fk_munmap(void *arg, void *addr, size_t len)
{
	return (0);
}

static int
fk_close(void *arg, int fd)
{
	return (0);
}

static int
fk_kqueue(void *arg)
{
	return (FK_KQ_FD);
}

/* kevent(2) on hwt's kqueue: a record queued or a position moved. */
static int
fk_pending(struct fakehwt *fk)
{
	int i;

	if (fk->nrec > 0)
		return (1);
	for (i = 0; i < FK_DEVS; i++)
		if (fk->dev[i].exists && fk->dev[i].seen != fk->dev[i].visible)
			return (1);
	return (0);
}

static int
fk_kwait(void *arg, int kq, int ms)
{
	struct fakehwt *fk = arg;
	struct timespec ts;
	int rc = 0, got;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += (long)ms * 1000000;
	ts.tv_sec += ts.tv_nsec / 1000000000;
	ts.tv_nsec %= 1000000000;
	pthread_mutex_lock(&fk->mtx);
	while (!fk_pending(fk) && rc == 0)
		rc = pthread_cond_timedwait(&fk->cv, &fk->mtx, &ts);
	got = fk_pending(fk);
	pthread_mutex_unlock(&fk->mtx);
	return (got);
}

/*
 * sysctl dev.coresight_etm4x.N.idrM of the coresight backend: a
 * Cortex-A57's ETMv4.0 (the values of the OpenCSD juno_r1_1 snapshot's
 * ETM): TRCIDR0 0x28000ea1, TRCIDR1 0x4100f402, TRCIDR2 0x488 (64-bit
 * addresses, 32-bit context IDs), the others 0.
 */
static int
fk_sysctl(void *arg, const char *name, void *old, size_t *oldlen)
{
	static const uint32_t idr[3] = { 0x28000ea1, 0x4100f402, 0x488 };
	struct fakehwt *fk = arg;
	uint32_t v;
	int unit, m, e = 0;
	char c;

	pthread_mutex_lock(&fk->mtx);
	fk->nsysctl++;
	if (strcmp(fk->backend, "coresight") != 0 || sscanf(name,
	    "dev.coresight_etm4x.%d.idr%d%c", &unit, &m, &c) != 2 ||
	    unit < 0 || unit >= FK_DEVS || m < 0 || m > 13)
		e = ENOENT;
	else if (old == NULL || *oldlen < sizeof(v))
		e = ENOMEM;
	else {
		v = m < 3 ? idr[m] : 0;
		memcpy(old, &v, sizeof(v));
		*oldlen = sizeof(v);
	}
	pthread_mutex_unlock(&fk->mtx);
	return (fk_errno(e));
}

static int
fk_ptrace_req(struct fakehwt *fk, int req, pid_t pid, void *addr, int data)
{
	int k;

	if (req == HWTR_PT_ATTACH) {
		if (fk->tr_errno != 0)
			return (fk->tr_errno);
		if (fk->tr_pid != 0)
			return (EBUSY);
		fk->tr_pid = pid;
		fk_stop(fk, SIGSTOP);
		fk_log(fk, "attach");
		return (0);
	}
	if (pid != fk->tr_pid || pid == 0)
		return (ESRCH);
	if (!fk->tr_stopped || fk->tr_pending != 0)
		return (EBUSY);
	switch (req) {
	case HWTR_PT_GETDBREGS:
		memcpy(addr, &fk->dbr, sizeof(fk->dbr));
		return (0);
	case HWTR_PT_SETDBREGS:
		memcpy(&fk->dbr, addr, sizeof(fk->dbr));
		fk_log(fk, "dbregs dr0=%#jx dr7=%#jx",
		    (uintmax_t)fk->dbr.dr[0], (uintmax_t)fk->dbr.dr[7]);
		return (0);
	case HWTR_PT_STEP:
		if (fk->at_bp && fk_armed(fk, fk->trig_pc)) {
			fk->dbr.dr[6] |= HWTR_DR6_B0;
			fk_log(fk, "step onto the enabled breakpoint: again");
		} else {
			fk->at_bp = 0;
			fk->dbr.dr[6] |= 1ULL << 14;	/* BS */
			fk_log(fk, "step");
		}
		fk_stop(fk, SIGTRAP);
		return (0);
	case HWTR_PT_CONTINUE:
		if (fk->at_bp && fk_armed(fk, fk->trig_pc)) {
			fk->dbr.dr[6] |= HWTR_DR6_B0;
			fk_log(fk, "continued onto the enabled breakpoint: "
			    "again");
			fk_stop(fk, SIGTRAP);
			return (0);
		}
		fk->at_bp = 0;
		k = fk->nhits;
		if (k > 0 && !fk->hit_read[k - 1]) {
			fk->hit_read[k - 1] = fk->dev[fk->hit_dev].seen ==
			    fk->hit_pos[k - 1];
			fk_log(fk, "continue after hit %d: %s", k,
			    fk->hit_read[k - 1] ? "read" : "not read");
		}
		if (data != 0)
			fk_log(fk, "continue with signal %d", data);
		fk->tr_stopped = 0;
		return (0);
	case HWTR_PT_DETACH:
		fk->tr_pid = 0;
		fk->tr_stopped = 0;
		fk_log(fk, "detach");
		return (0);
	default:
		return (EINVAL);
	}
}

static int
fk_ptrace(void *arg, int req, pid_t pid, void *addr, int data)
{
	struct fakehwt *fk = arg;
	int e;

	pthread_mutex_lock(&fk->mtx);
	e = fk_ptrace_req(fk, req, pid, addr, data);
	pthread_cond_broadcast(&fk->cv);
	pthread_mutex_unlock(&fk->mtx);
	return (fk_errno(e));
}

/* The stop not yet reported, else the system's waitpid(2). */
static pid_t
fk_waitpid(void *arg, pid_t pid, int *status, int options)
{
	struct fakehwt *fk = arg;

	pthread_mutex_lock(&fk->mtx);
	if (pid == fk->tr_pid && fk->tr_pending != 0) {
		*status = fk->tr_pending << 8 | 0x7f;	/* W_STOPCODE */
		fk->tr_pending = 0;
		pthread_mutex_unlock(&fk->mtx);
		return (pid);
	}
	if ((pid == fk->tr_pid && fk->tr_stopped && (options & WNOHANG)) ||
	    (pid == fk->external && pid > 0)) {
		pthread_mutex_unlock(&fk->mtx);
		return (0);
	}
	pthread_mutex_unlock(&fk->mtx);
	return (waitpid(pid, status, options));
}

/* The system call table of @fk. */
static void
fk_sys(struct fakehwt *fk, struct hwtr_hwt_sys *sys)
{
	sys->arg = fk;
	sys->open = fk_open;
	sys->ioctl = fk_ioctl;
	sys->mmap = fk_mmap;
	sys->munmap = fk_munmap;
	sys->close = fk_close;
	sys->kqueue = fk_kqueue;
	sys->kwait = fk_kwait;
	sys->sysctl = fk_sysctl;
	sys->ptrace = fk_ptrace;
	sys->waitpid = fk_waitpid;
}

/* Stop the producer and free the rings. */
static void
fk_fini(struct fakehwt *fk)
{
	int i;

	pthread_mutex_lock(&fk->mtx);
	fk->quit = 1;
	pthread_cond_broadcast(&fk->cv);
	pthread_mutex_unlock(&fk->mtx);
	if (fk->have_prod)
		pthread_join(fk->prod, NULL);
	for (i = 0; i < FK_DEVS; i++) {
		if (fk->dev[i].enc != NULL)
			hwtr_ptenc_free(fk->dev[i].enc);
		if (fk->dev[i].ring != NULL)
			munmap(fk->dev[i].ring, fk->bufsize);
	}
}
