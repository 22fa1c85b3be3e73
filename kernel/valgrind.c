/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The "valgrind" trace source: runs the command under the hwtrace Valgrind
 * tool (kernel/vgtool/, a separate GPL program that hwtrace only
 * launches) and turns the event files the tool writes into PT streams with
 * vgconv.c, while the program runs.
 *
 * The tool is started as `valgrind.bin --tool=hwtrace` with VALGRIND_LIB
 * set to the private directory the build prepares ($(B)/valgrind-lib, next
 * to the hwtrace binary), or the installed one (PREFIX/lib/hwtrace/
 * valgrind-lib, from PREFIX/bin/hwtrace); HWTRACE_VALGRIND_LIB overrides
 * both.  Never through
 * Debian's `valgrind` wrapper script, which changes the environment of the
 * traced program.  The tool writes one event file per process image into a
 * temporary directory, as a ring both sides map (hwtr_vgevents.h), or
 * where it cannot set one up as a stream, which hwtrace follows as it
 * grows through a shared mapping (read() where it cannot be mapped).
 */

#include <sys/file.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hwtr_common.h"
#include "hwtr_vgevents.h"
#include "sources.h"
#include "vgconv.h"
#include "vgfind.h"
#include "vgguard.h"

#define VG_READ_BUF	(4u << 20)
/* The window of an event file mapped at a time (at least). */
#define VG_MAP_WIN	(8u << 20)
/* Give back the disk space of what was converted every this many bytes. */
#define VG_PUNCH_STEP	(1u << 20)
/*
 * A ring's bytes are converted in slices of this many, each given back
 * to the tool (the tail) as soon as it is converted: the tool, which
 * waits while the ring is full, gets room every fraction of a
 * millisecond instead of once the whole ring (8 MiB, 25 ms of
 * conversion) is converted.
 */
#define VG_RING_SLICE	(256u << 10)
/*
 * Bytes of events one file converts per pump() at most, and the time one
 * read() op takes at most: the capture loop gets the control back every
 * few tens of milliseconds (its flushes, SIGINT) even while the tool
 * writes events as fast as they are converted, which it does for as
 * long as a CPU-bound program runs.
 */
#define VG_PUMP_BUDGET	(16u << 20)
#define VG_READ_NS	50000000ull
#define VG_MAX_FILES	4096

struct vg_evfile {
	char		*name;
	int32_t		pid;
	int		seq;
	int		fd;
	int		ended;
	struct vgconv_file *f;
	uint8_t		*buf;		/* read(): bytes at @rd - @have */
	size_t		have;		/* unconsumed bytes known */
	uint64_t	rd;		/* bytes of the file known */
	uint64_t	punched;	/* bytes from 0 given back */
	uint64_t	fed;		/* converted in this pump() */
	int		nopunch;	/* the file system cannot */
	int		kind;		/* VGF_* */
	int		nomap;		/* read() it: it cannot be mapped */
	uint8_t		*rhdr;		/* a ring's header page, mapped */
	uint8_t		*rdata;		/* its data, mapped twice in a row */
	uint64_t	rsize;
	uint8_t		*map;		/* file bytes from @mapoff */
	uint64_t	mapoff;
	size_t		maplen;
};

enum { VGF_UNKNOWN = 0, VGF_STREAM, VGF_RING };

struct vgsrc {
	struct hwtr_src	*src;
	struct vgconv	*cv;
	struct vg_paths	p;		/* valgrind.bin, the tool, version */
	char		dir[PATH_MAX];
	int		dirfd;		/* open on dir, flock()ed: in use */
	pid_t		guard_pid;	/* kills the tree if we die (vgguard.c) */
	int		guard_fd;
	int		logfd;		/* Valgrind's messages; -1: stderr */
	pid_t		pid;		/* valgrind.bin, which is the program */
	int		exited;
	int		we_killed;	/* disable() sent it SIGKILL */
	int		started;	/* the first process was reported */
	int		exit_reported;
	int		trigger_pending;	/* a PIE's --trigger address */
	uint64_t	exit_time;
	struct vg_evfile *files[VG_MAX_FILES];
	size_t		nfiles;
	uint64_t	gt_lost;
	int		keep;		/* HWTRACE_VALGRIND_KEEP: debugging */
	int		readonly;	/* HWTRACE_VALGRIND_READ: no mmap */
	char		chasearg[40];	/* HWTRACE_VALGRIND_CHASE_AFTER */
};

static const char *const vg_caveats[] = {
	("simulated CPU: the program ran on Valgrind's synthetic x86-64 CPU "
	    "(its own CPUID, no AVX-512); libraries may choose other code "
	    "paths than on the real CPU"),
	"serialized threads: Valgrind runs one thread at a time",
	"vfork runs as fork under Valgrind",
	("time stamps are taken at scheduler points (syscalls, signals, "
	    "thread switches) only"),
};

static void vg_err(struct vgsrc *vs, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
vg_err(struct vgsrc *vs, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(vs->src->errmsg, sizeof(vs->src->errmsg), fmt, ap);
	va_end(ap);
}

/* ---- the converter's callbacks ---------------------------------------- */

/*
 * The session's sideband collector is off for this source (it would see
 * Valgrind's process, not the program): the records come from here.
 */
static int
sb_send(struct vgsrc *vs, struct hwtr_sb_rec *rec)
{
	/* Nothing before the first process was reported (no archive yet). */
	if (vs->src->sink->sideband == NULL || !vs->started)
		return (0);
	return (vs->src->sink->sideband(vs->src->sink->arg, rec));
}

static int
cb_thread_start(void *arg, int32_t pid, int32_t tid, int32_t ptid,
    uint64_t time, struct hwtr_ptenc ***encpp, void **tokp)
{
	struct vgsrc *vs = arg;
	struct hwtr_src_thread *thr = NULL;
	int rc;

	rc = vs->src->sink->thread_start(vs->src->sink->arg, pid, tid, ptid,
	    time, &thr);
	if (rc < 0)
		return (rc);
	if (tid != pid) {
		struct hwtr_sb_rec rec;

		memset(&rec, 0, sizeof(rec));
		rec.type = HWTR_SB_THREAD_START;
		rec.time = time;
		rec.pid = pid;
		rec.tid = tid;
		rec.u.thread_start.ptid = ptid;
		if ((rc = sb_send(vs, &rec)) < 0)
			return (rc);
	}
	*encpp = thr != NULL ? &thr->enc : NULL;
	*tokp = thr;
	return (0);
}

static int
cb_thread_exit(void *arg, void *tok, uint64_t ninsn, uint64_t time)
{
	struct vgsrc *vs = arg;
	struct hwtr_src_thread *thr = tok;

	struct hwtr_sb_rec rec;
	int rc;

	if (thr == NULL)
		return (0);
	thr->ninsn += ninsn;
	if (thr->tid != thr->pid) {
		memset(&rec, 0, sizeof(rec));
		rec.type = HWTR_SB_THREAD_EXIT;
		rec.time = time;
		rec.pid = thr->pid;
		rec.tid = thr->tid;
		rec.u.exit.kind = HWTR_EXIT_NONE;
		if ((rc = sb_send(vs, &rec)) < 0)
			return (rc);
	}
	return (vs->src->sink->thread_exit(vs->src->sink->arg, thr,
	    HWTR_EXIT_NONE, 0, time));
}

static int
cb_proc_start(void *arg, int32_t pid, int32_t ppid, int exec,
    const char *path, uint64_t time)
{
	struct vgsrc *vs = arg;
	struct hwtr_src_proc ev;
	struct hwtr_sb_rec rec;
	const char *base;
	char comm[16];
	int rc;

	if (vs->src->sink->proc == NULL)
		return (0);
	memset(&ev, 0, sizeof(ev));
	ev.what = exec ? HWTR_PROC_EXEC : HWTR_PROC_START;
	ev.pid = pid;
	ev.ppid = exec ? -1 : ppid;
	ev.path = path;
	ev.time = time;
	if ((rc = vs->src->sink->proc(vs->src->sink->arg, &ev)) < 0)
		return (rc);
	vs->started = 1;
	memset(&rec, 0, sizeof(rec));
	rec.time = time;
	rec.pid = pid;
	rec.tid = pid;
	if (!exec) {
		rec.type = HWTR_SB_PROC_START;
		rec.u.proc_start.ppid = ppid;
		/*
		 * A forked child runs its parent's image under its parent's
		 * name (the indexer gives it both); the process hwtrace
		 * launched was exec'd by it, and is named here.
		 */
		if (pid != vs->pid || path == NULL)
			return (sb_send(vs, &rec));
		if ((rc = sb_send(vs, &rec)) < 0)
			return (rc);
		memset(&rec, 0, sizeof(rec));
		rec.time = time;
		rec.pid = pid;
		rec.tid = pid;
	}
	rec.type = HWTR_SB_COMM;
	base = strrchr(path, '/');
	snprintf(comm, sizeof(comm), "%s", base ? base + 1 : path);
	rec.u.comm.comm = comm;
	rec.u.comm.exec = 1;
	if ((rc = sb_send(vs, &rec)) < 0)
		return (rc);
	rec.type = HWTR_SB_EXEC;
	rec.u.exec.path = path;
	return (sb_send(vs, &rec));
}

/*
 * An unnamed file in TMPDIR for Valgrind's messages, or -1.  Valgrind
 * leaves its log descriptor where it was given, so it is put at 256 or
 * above: the program's own descriptors still start at 3.
 */
static int
vg_log_open(void)
{
	const char *d = getenv("TMPDIR");
	int fd, hi;

	if (d == NULL || *d == '\0')
		d = "/tmp";
	if ((fd = open(d, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600)) < 0)
		return (-1);
	hi = fcntl(fd, F_DUPFD_CLOEXEC, 256);
	close(fd);
	return (hi);
}

/*
 * What matters of what Valgrind wrote, as warnings.  A program killed by
 * a signal is named as a shell names it (Valgrind's report of the crash
 * is for --verbose); otherwise Valgrind's own errors ("valgrind: ...")
 * and, when the tool failed, everything.  Its notes about the program
 * ("==PID==", "--PID--": unhandled system calls and the like) are for
 * --verbose too.  The file is kept for children still running.
 */
static void
vg_log_replay(struct vgsrc *vs, int status)
{
	struct hwtr_src *src = vs->src;
	char buf[8192], *line, *nl;
	ssize_t r;
	int all;

	if (vs->logfd < 0)
		return;
	all = WIFEXITED(status) && WEXITSTATUS(status) == HWVG_EXIT_TOOL_ERROR;
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL &&
	    vs->we_killed) {
		hwtr_logf(&src->cfg.log, HWTR_LOG_WARN, "the program was "
		    "killed, as the capture stopped before it ended");
		return;
	}
	if (WIFSIGNALED(status)) {
		hwtr_logf(&src->cfg.log, HWTR_LOG_WARN, "the program was "
		    "killed: %s (Valgrind's report: --verbose)",
		    strsignal(WTERMSIG(status)));
		return;
	}
	if ((r = pread(vs->logfd, buf, sizeof(buf) - 1, 0)) <= 0)
		return;
	buf[r] = '\0';
	for (line = buf; *line != '\0'; line = nl + 1) {
		if ((nl = strchr(line, '\n')) == NULL)
			nl = line + strlen(line) - 1;
		else
			*nl = '\0';
		if (*line != '\0' && (all || strncmp(line, "valgrind:",
		    9) == 0))
			hwtr_logf(&src->cfg.log, HWTR_LOG_WARN, "%s", line);
	}
}

static int
proc_exit(struct vgsrc *vs, const struct hwtr_src_proc *ev)
{
	struct hwtr_sb_rec rec;
	int rc;

	if (!vs->started)
		return (0);
	if ((rc = vs->src->sink->proc(vs->src->sink->arg, ev)) < 0)
		return (rc);
	memset(&rec, 0, sizeof(rec));
	rec.type = HWTR_SB_PROC_EXIT;
	rec.time = ev->time;
	rec.pid = ev->pid;
	rec.tid = ev->pid;
	rec.u.exit.kind = ev->kind;
	rec.u.exit.value = ev->value;
	return (sb_send(vs, &rec));
}

static int
cb_proc_exit(void *arg, int32_t pid, int exitcode, uint64_t time)
{
	struct vgsrc *vs = arg;
	struct hwtr_src_proc ev;

	/* The first process's status comes from waitpid (signals too). */
	if (vs->src->sink->proc == NULL || pid == vs->pid)
		return (0);
	memset(&ev, 0, sizeof(ev));
	ev.what = HWTR_PROC_EXIT;
	ev.pid = pid;
	ev.ppid = -1;
	ev.kind = HWTR_EXIT_CODE;
	ev.value = exitcode;
	ev.time = time;
	return (proc_exit(vs, &ev));
}

/*
 * Is @path the tool itself?  The program runs a page of it, Valgrind's
 * signal return trampoline: the archive gets that page (mmap.slice), not
 * the tool's 2.7 MB.
 */
static int
is_tool(struct vgsrc *vs, const char *path)
{
	static const char name[] = "/hwtrace-amd64-linux";
	char tool[PATH_MAX + 32];
	struct stat a, b;
	size_t n;

	if (path == NULL || (n = strlen(path)) < sizeof(name) - 1 ||
	    strcmp(path + n - (sizeof(name) - 1), name) != 0)
		return (0);
	snprintf(tool, sizeof(tool), "%s%s", vs->p.lib, name);
	return (stat(path, &a) == 0 && stat(tool, &b) == 0 &&
	    a.st_dev == b.st_dev && a.st_ino == b.st_ino);
}

static int
cb_mmap(void *arg, int32_t pid, uint64_t addr, uint64_t len, uint64_t pgoff,
    uint32_t prot, const char *path, uint64_t time)
{
	struct vgsrc *vs = arg;
	struct hwtr_sb_rec rec;

	if (vs->trigger_pending && pid == vs->pid && pgoff <= addr) {
		/* The first file mapping of the program: its executable. */
		vs->trigger_pending = 0;
		vgconv_set_trigger(vs->cv, pid, addr - pgoff +
		    vs->src->cfg.trigger_vaddr);
	}
	if (vs->src->sink->sideband == NULL)
		return (0);
	memset(&rec, 0, sizeof(rec));
	rec.type = HWTR_SB_MMAP;
	rec.time = time;
	rec.pid = pid;
	rec.tid = pid;
	rec.u.mmap.addr = addr;
	rec.u.mmap.len = len;
	rec.u.mmap.pgoff = pgoff;
	rec.u.mmap.prot = prot;
	rec.u.mmap.path = path;
	rec.u.mmap.slice = is_tool(vs, path);
	return (vs->src->sink->sideband(vs->src->sink->arg, &rec));
}

/* Code outside the files mapped (issue 32): the session keeps it. */
static int
cb_anon(void *arg, int32_t pid, uint64_t addr, const uint8_t *bytes,
    uint32_t len, uint64_t time)
{
	struct vgsrc *vs = arg;
	const struct hwtr_src_sink *sk = vs->src->sink;

	return (sk->code(sk->arg, pid, addr, bytes, len, time));
}

static int
cb_munmap(void *arg, int32_t pid, uint64_t addr, uint64_t len, uint64_t time)
{
	struct vgsrc *vs = arg;
	struct hwtr_sb_rec rec;

	if (vs->src->sink->sideband == NULL)
		return (0);
	memset(&rec, 0, sizeof(rec));
	rec.type = HWTR_SB_MUNMAP;
	rec.time = time;
	rec.pid = pid;
	rec.tid = pid;
	rec.u.munmap.addr = addr;
	rec.u.munmap.len = len;
	return (vs->src->sink->sideband(vs->src->sink->arg, &rec));
}

static int
cb_trigger(void *arg, void *tok)
{
	struct vgsrc *vs = arg;

	if (tok == NULL || vs->src->sink->trigger == NULL)
		return (0);
	return (vs->src->sink->trigger(vs->src->sink->arg, tok,
	    vs->src->cfg.trigger_name));
}

/* --mode stop: the session's limit and flag for the thread. */
static void
cb_stop_limit(void *arg, void *tok, uint64_t *limitp, int **fullp)
{
	struct hwtr_src_thread *thr = tok;

	(void)arg;
	if (thr == NULL)
		return;
	*limitp = thr->limit;
	*fullp = &thr->full;
}

static int
cb_groundtruth(void *arg, void *tok, const uint64_t *ip, size_t n)
{
	struct vgsrc *vs = arg;

	if (tok == NULL || vs->src->sink->groundtruth == NULL)
		return (0);
	return (vs->src->sink->groundtruth(vs->src->sink->arg, tok, ip, n));
}

/* ---- the event files -------------------------------------------------- */

static int
evfile_cmp(const void *a, const void *b)
{
	const struct vg_evfile *x = *(struct vg_evfile *const *)a;
	const struct vg_evfile *y = *(struct vg_evfile *const *)b;

	if (x->pid != y->pid)
		return (x->pid < y->pid ? -1 : 1);
	return (x->seq < y->seq ? -1 : x->seq > y->seq);
}

/* Pick up event files that appeared since the last look. */
static int
scan_dir(struct vgsrc *vs)
{
	struct vg_evfile *ef;
	struct dirent *de;
	char path[PATH_MAX + 300];
	DIR *d;
	size_t i;
	int pid, seq, rc, added = 0;

	if ((d = opendir(vs->dir)) == NULL) {
		vg_err(vs, "cannot read '%s': %s", vs->dir, strerror(errno));
		return (-HWTR_E_IO);
	}
	while ((de = readdir(d)) != NULL) {
		if (sscanf(de->d_name, "vg.%d.%d.evt", &pid, &seq) != 2)
			continue;
		for (i = 0; i < vs->nfiles; i++)
			if (strcmp(vs->files[i]->name, de->d_name) == 0)
				break;
		if (i < vs->nfiles)
			continue;
		if (vs->nfiles == VG_MAX_FILES) {
			closedir(d);
			vg_err(vs, "more than %d processes", VG_MAX_FILES);
			return (-HWTR_E_LIMIT);
		}
		if ((ef = calloc(1, sizeof(*ef))) == NULL ||
		    (ef->name = strdup(de->d_name)) == NULL) {
			if (ef != NULL) {
				free(ef->name);
				free(ef);
			}
			closedir(d);
			return (-HWTR_E_NOMEM);
		}
		ef->pid = pid;
		ef->seq = seq;
		ef->nomap = vs->readonly;
		snprintf(path, sizeof(path), "%s/%s", vs->dir, de->d_name);
		/* Read-write: converted parts are punched out (punch()). */
		if ((ef->fd = open(path, O_RDWR | O_CLOEXEC)) < 0) {
			free(ef->name);
			free(ef);
			continue;
		}
		if ((rc = vgconv_file_new(vs->cv, ef->name, &ef->f)) < 0) {
			close(ef->fd);
			free(ef->name);
			free(ef);
			closedir(d);
			return (rc);
		}
		vs->files[vs->nfiles++] = ef;
		added = 1;
	}
	closedir(d);
	if (added)
		qsort(vs->files, vs->nfiles, sizeof(vs->files[0]), evfile_cmp);
	return (0);
}

/* The process image of @ef is over: a later file of its pid, or gone. */
static int
evfile_over(struct vgsrc *vs, size_t i)
{
	struct vg_evfile *ef = vs->files[i];

	if (vgconv_file_complete(ef->f))
		return (1);
	if (i + 1 < vs->nfiles && vs->files[i + 1]->pid == ef->pid)
		return (1);
	if (ef->pid == vs->pid)
		return (vs->exited);
	return (kill(ef->pid, 0) < 0 && errno == ESRCH);
}

/*
 * The event files are read as the tool writes them, and what was
 * converted is of no further use: its blocks go back to the file system
 * (a hole punched from the start), so that the disk use stays bounded by
 * how far the converter lags behind the tool, not by the length of the
 * run (gzip of 8 MiB writes 358 MB of events).  The tool waits when the
 * disk is full (hw_flush()), so a small TMPDIR only slows it down.
 */
static void
punch(struct vgsrc *vs, struct vg_evfile *ef)
{
	uint64_t done = ef->rd - ef->have, to;

	to = done & ~(uint64_t)4095;
	if (ef->nopunch || vs->keep || to < ef->punched + VG_PUNCH_STEP)
		return;
	if (fallocate(ef->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
	    (off_t)ef->punched, (off_t)(to - ef->punched)) < 0) {
		hwtr_logf(&vs->src->cfg.log, HWTR_LOG_WARN, "valgrind: cannot "
		    "free the converted part of '%s/%s' (%s): it keeps its "
		    "disk space until the capture ends", vs->dir, ef->name,
		    strerror(errno));
		ef->nopunch = 1;
		return;
	}
	ef->punched = to;
}

/*
 * A converted file gives its space back at once.  Its name stays until
 * the end: the tool numbers a process's files by the first free name.
 */
static void
evfile_unmap(struct vg_evfile *ef)
{
	if (ef->map != NULL)
		(void)munmap(ef->map, ef->maplen);
	ef->map = NULL;
	if (ef->rhdr != NULL)
		(void)munmap(ef->rhdr, HWVG_RING_HDR);
	ef->rhdr = NULL;
	if (ef->rdata != NULL)
		(void)munmap(ef->rdata, 2 * ef->rsize);
	ef->rdata = NULL;
}

static void
evfile_close(struct vgsrc *vs, struct vg_evfile *ef)
{
	evfile_unmap(ef);
	if (!vs->keep)
		(void)ftruncate(ef->fd, 0);
	close(ef->fd);
	ef->fd = -1;
	free(ef->buf);
	ef->buf = NULL;
}

/* Feed @len of @ef's unconsumed bytes, at @p, to the converter. */
static int
evfile_feed_n(struct vgsrc *vs, struct vg_evfile *ef, const uint8_t *p,
    size_t len, long *usedp)
{
	long used;

	used = vgconv_feed(ef->f, p, len);
	if (used < 0) {
		vg_err(vs, "'%s': %s", ef->name, vgconv_errmsg(vs->cv));
		return ((int)used);
	}
	ef->have -= (size_t)used;
	ef->fed += (uint64_t)used;
	*usedp = used;
	punch(vs, ef);
	return (0);
}

/* All of them. */
static int
evfile_feed(struct vgsrc *vs, struct vg_evfile *ef, const uint8_t *p,
    long *usedp)
{
	return (evfile_feed_n(vs, ef, p, ef->have, usedp));
}

/* An I/O error on event file @ef, named with errno's reason. */
static int
evfile_errno(struct vgsrc *vs, const struct vg_evfile *ef)
{
	vg_err(vs, "'%s/%s': %s", vs->dir, ef->name, strerror(errno));
	return (-HWTR_E_IO);
}

/*
 * Whether a pump of @ef stops here: nothing came (@idle), the file waits
 * for its parent's, or this turn's budget is spent.
 */
static int
evfile_pause(const struct vg_evfile *ef, int idle)
{
	return (idle || vgconv_file_waiting(ef->f) ||
	    ef->fed >= VG_PUMP_BUDGET);
}

/*
 * Convert what @ef gained, through read(): 1 when something was read or
 * converted, 0 when nothing new came, or an error.
 */
static int
evfile_read(struct vgsrc *vs, struct vg_evfile *ef)
{
	ssize_t n;
	long used;
	int rc, progress = 0;

	if (ef->buf == NULL && (ef->buf = malloc(VG_READ_BUF)) == NULL)
		return (-HWTR_E_NOMEM);
	for (;;) {
		n = read(ef->fd, ef->buf + ef->have, VG_READ_BUF - ef->have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return (evfile_errno(vs, ef));
		ef->have += (size_t)n;
		ef->rd += (uint64_t)n;
		if ((rc = evfile_feed(vs, ef, ef->buf, &used)) < 0)
			return (rc);
		memmove(ef->buf, ef->buf + used, ef->have);
		if (n > 0 || used > 0)
			progress = 1;
		if (evfile_pause(ef, n == 0))
			break;
	}
	return (progress);
}

/*
 * The same through a shared mapping of the file: the 358 MB of events of
 * gzip of 8 MiB cost 0.2 s of system time to read() (a copy out of the
 * page cache), and far less to map (the kernel maps 16 pages per fault
 * of a tmpfs or ext4 file).  The window is remapped when the file grows
 * past it; the pages before what was converted are punched out (their
 * mapping goes with them) and never touched again.  Bytes are only read
 * below the file size seen, so a mapping beyond the end is never touched
 * there either.
 */
static int
evfile_map(struct vgsrc *vs, struct vg_evfile *ef)
{
	struct stat st;
	uint64_t size, cons, off;
	size_t len;
	long used;
	void *m;
	int rc, progress = 0;

	for (;;) {
		if (fstat(ef->fd, &st) < 0)
			return (evfile_errno(vs, ef));
		size = (uint64_t)st.st_size;
		if (size <= ef->rd && ef->have == 0)
			break;
		if (size > ef->rd) {
			ef->have += (size_t)(size - ef->rd);
			ef->rd = size;
			progress = 1;
		}
		cons = ef->rd - ef->have;
		if (ef->map == NULL || cons < ef->mapoff ||
		    size > ef->mapoff + ef->maplen) {
			off = cons & ~(uint64_t)4095;
			len = size - off > VG_MAP_WIN ? (size_t)(size - off) :
			    VG_MAP_WIN;
			if (ef->map != NULL)
				(void)munmap(ef->map, ef->maplen);
			ef->map = NULL;
			m = mmap(NULL, len, PROT_READ, MAP_SHARED, ef->fd,
			    (off_t)off);
			if (m == MAP_FAILED) {
				/* read() from where the conversion is. */
				hwtr_logf(&vs->src->cfg.log, HWTR_LOG_INFO,
				    "valgrind: cannot map '%s/%s' (%s): "
				    "reading it", vs->dir, ef->name,
				    strerror(errno));
				ef->nomap = 1;
				ef->rd = cons;
				ef->have = 0;
				if (lseek(ef->fd, (off_t)cons, SEEK_SET) < 0)
					return (evfile_errno(vs, ef));
				rc = evfile_read(vs, ef);
				return (rc < 0 ? rc : 1);
			}
			ef->map = m;
			ef->mapoff = off;
			ef->maplen = len;
		}
		if ((rc = evfile_feed(vs, ef, ef->map + (cons - ef->mapoff),
		    &used)) < 0)
			return (rc);
		if (used > 0)
			progress = 1;
		/* Nothing more to take until the file grows (or the parent). */
		if (evfile_pause(ef, used == 0))
			break;
	}
	return (progress);
}

/*
 * What kind of file @ef is: a stream starts with the event magic, a ring
 * with its own once set up (zeros before).  0: not known yet, 1: known.
 */
static int
evfile_kind(struct vgsrc *vs, struct vg_evfile *ef)
{
	uint8_t m[HWVG_RING_SIZE_OFF + 8];
	ssize_t n;
	uint64_t r;
	void *a;

	n = pread(ef->fd, m, sizeof(m), 0);
	if (n < 0)
		return (evfile_errno(vs, ef));
	if (n < 8 || memcmp(m, "\0\0\0\0\0\0\0\0", 8) == 0)
		return (0);
	if (memcmp(m, HWVG_RING_MAGIC, 8) != 0) {
		ef->kind = VGF_STREAM;
		hwtr_logf(&vs->src->cfg.log, HWTR_LOG_INFO, "valgrind: '%s' is "
		    "a stream", ef->name);
		return (1);
	}
	r = n == (ssize_t)sizeof(m) ? (uint64_t)m[8] | (uint64_t)m[9] << 8 |
	    (uint64_t)m[10] << 16 | (uint64_t)m[11] << 24 |
	    (uint64_t)m[12] << 32 | (uint64_t)m[13] << 40 |
	    (uint64_t)m[14] << 48 | (uint64_t)m[15] << 56 : 0;
	if (r == 0)
		return (0);	/* the size seen before the magic: again */
	if (r < (1u << 20) || r > (1ull << 30) || (r & (r - 1)) != 0) {
		vg_err(vs, "'%s/%s': ring of %llu bytes", vs->dir, ef->name,
		    (unsigned long long)r);
		return (-HWTR_E_FORMAT);
	}
	/*
	 * The data twice in a row: a record that wraps round the end of
	 * the ring is contiguous in memory all the same.
	 */
	ef->rsize = r;
	ef->rhdr = mmap(NULL, HWVG_RING_HDR, PROT_READ | PROT_WRITE,
	    MAP_SHARED, ef->fd, 0);
	a = mmap(NULL, 2 * r, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ef->rhdr == MAP_FAILED || a == MAP_FAILED ||
	    mmap(a, r, PROT_READ, MAP_SHARED | MAP_FIXED, ef->fd,
	    HWVG_RING_HDR) == MAP_FAILED ||
	    mmap((uint8_t *)a + r, r, PROT_READ, MAP_SHARED | MAP_FIXED,
	    ef->fd, HWVG_RING_HDR) == MAP_FAILED) {
		vg_err(vs, "cannot map the ring of '%s/%s': %s", vs->dir,
		    ef->name, strerror(errno));
		if (ef->rhdr == MAP_FAILED)
			ef->rhdr = NULL;
		if (a != MAP_FAILED)
			(void)munmap(a, 2 * r);
		return (-HWTR_E_IO);
	}
	ef->rdata = a;
	ef->kind = VGF_RING;
	ef->nopunch = 1;
	hwtr_logf(&vs->src->cfg.log, HWTR_LOG_INFO, "valgrind: '%s' is a "
	    "ring of %llu bytes", ef->name, (unsigned long long)r);
	return (1);
}

/*
 * Convert what a ring gained: the stream's bytes from what was taken up
 * to the head, then the tail moved on for the tool.  @rd is the head
 * seen, @rd - @have what was taken.
 */
static int
evfile_ring(struct vgsrc *vs, struct vg_evfile *ef)
{
	uint64_t head, cons;
	size_t n;
	long used;
	int rc, progress = 0;

	for (;;) {
		head = __atomic_load_n((uint64_t *)(ef->rhdr +
		    HWVG_RING_HEAD_OFF), __ATOMIC_ACQUIRE);
		cons = ef->rd - ef->have;
		if (head < ef->rd || head - cons > ef->rsize) {
			vg_err(vs, "'%s/%s': ring head %llu, %llu bytes taken",
			    vs->dir, ef->name, (unsigned long long)head,
			    (unsigned long long)cons);
			return (-HWTR_E_FORMAT);
		}
		if (head > ef->rd) {
			ef->have += (size_t)(head - ef->rd);
			ef->rd = head;
			progress = 1;
		}
		if (ef->have == 0)
			break;
		n = ef->have < VG_RING_SLICE ? ef->have : VG_RING_SLICE;
		if ((rc = evfile_feed_n(vs, ef, ef->rdata +
		    (cons & (ef->rsize - 1)), n, &used)) < 0)
			return (rc);
		/* A record longer than the slice: the whole of it. */
		if (used == 0 && n < ef->have && (rc = evfile_feed(vs, ef,
		    ef->rdata + (cons & (ef->rsize - 1)), &used)) < 0)
			return (rc);
		__atomic_store_n((uint64_t *)(ef->rhdr + HWVG_RING_TAIL_OFF),
		    cons + (uint64_t)used, __ATOMIC_RELEASE);
		if (used > 0)
			progress = 1;
		if (evfile_pause(ef, used == 0))
			break;
	}
	return (progress);
}

/*
 * Convert what the files gained.  Returns 1 when something was read, 0
 * when nothing new came, or an error.
 */
static int
pump(struct vgsrc *vs)
{
	struct vg_evfile *ef;
	size_t i;
	int rc, progress = 0, over;

	for (i = 0; i < vs->nfiles; i++) {
		ef = vs->files[i];
		if (ef->ended)
			continue;
		/* A later image of a process waits for the earlier one. */
		if (i > 0 && vs->files[i - 1]->pid == ef->pid &&
		    !vs->files[i - 1]->ended)
			continue;
		over = evfile_over(vs, i);
		rc = 0;
		ef->fed = 0;
		if (ef->kind == VGF_UNKNOWN && (rc = evfile_kind(vs, ef)) < 0)
			return (rc);
		if (ef->kind == VGF_RING)
			rc = evfile_ring(vs, ef);
		else if (ef->kind == VGF_STREAM)
			rc = ef->nomap ? evfile_read(vs, ef) :
			    evfile_map(vs, ef);
		if (rc < 0)
			return (rc);
		if (rc > 0)
			progress = 1;
		/* Stopped at the budget: more to convert before its end. */
		if (ef->fed >= VG_PUMP_BUDGET)
			continue;
		if (over && !vgconv_file_waiting(ef->f)) {
			rc = vgconv_file_end(ef->f, ef->have);
			ef->f = NULL;
			ef->ended = 1;
			evfile_close(vs, ef);
			progress = 1;
			if (rc < 0) {
				vg_err(vs, "'%s': %s", ef->name,
				    vgconv_errmsg(vs->cv));
				return (rc);
			}
		}
	}
	return (progress);
}

static int
all_ended(const struct vgsrc *vs)
{
	size_t i;

	for (i = 0; i < vs->nfiles; i++)
		if (!vs->files[i]->ended)
			return (0);
	return (1);
}

static void
rm_dir(struct vgsrc *vs)
{
	struct dirent *de;
	char path[PATH_MAX + 300];
	DIR *d;

	if (vs->dir[0] == '\0' || vs->keep)
		return;
	if ((d = opendir(vs->dir)) != NULL) {
		while ((de = readdir(d)) != NULL) {
			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", vs->dir,
			    de->d_name);
			(void)unlink(path);
		}
		closedir(d);
	}
	(void)rmdir(vs->dir);
	vs->dir[0] = '\0';
}

/*
 * Event directories of captures that were killed (SIGKILL, a CI job's
 * time limit, a crash) stay behind with up to a ring's worth of events
 * each, in /dev/shm: memory.  A capture holds a flock(2) on its directory
 * from right after creating it until it removes it, and the kernel drops
 * the lock when the process dies however it dies; so a directory of ours
 * in @parent that nobody holds and that is older than VG_STALE_S (the
 * moments between mkdtemp() and flock() of a capture starting) is left
 * over, and goes.  Kept directories (HWTRACE_VALGRIND_KEEP) have another
 * name and stay.
 */
#define VG_DIR_PREFIX	"hwtrace-vg."
#define VG_KEEP_PREFIX	"hwtrace-vg-kept."
#define VG_STALE_S	10

static void
sweep_stale(struct vgsrc *vs, const char *parent)
{
	struct dirent *de;
	DIR *d;

	if ((d = opendir(parent)) == NULL)
		return;
	while ((de = readdir(d)) != NULL)
		if (strncmp(de->d_name, VG_DIR_PREFIX,
		    sizeof(VG_DIR_PREFIX) - 1) == 0 &&
		    strlen(de->d_name) == sizeof(VG_DIR_PREFIX) - 1 + 6 &&
		    hwtr_stale_rmdir(dirfd(d), de->d_name, VG_STALE_S))
			hwtr_logf(&vs->src->cfg.log, HWTR_LOG_INFO,
			    "valgrind: removed '%s/%s', left by a capture that "
			    "did not end", parent, de->d_name);
	closedir(d);
}

/* ---- the ops ---------------------------------------------------------- */

static int
valgrind_backend_init(struct hwtr_src *src)
{
	struct vgsrc *vs;

	if ((vs = calloc(1, sizeof(*vs))) == NULL)
		return (-HWTR_E_NOMEM);
	vs->src = src;
	vs->pid = -1;
	vs->dirfd = -1;
	vs->logfd = -1;
	vs->guard_pid = -1;
	vs->guard_fd = -1;
	vs->keep = getenv("HWTRACE_VALGRIND_KEEP") != NULL;
	vs->readonly = getenv("HWTRACE_VALGRIND_READ") != NULL;
	src->priv = vs;
	return (0);
}

static int
valgrind_backend_configure(struct hwtr_src *src,
    const struct hwtr_src_config *cfg)
{
	struct vgsrc *vs = src->priv;
	struct timespec mono, real;
	static char version[128];
	int rc;

	if (cfg->pid > 0) {
		snprintf(src->errmsg, sizeof(src->errmsg), "the valgrind "
		    "source cannot attach to a running process (use --source "
		    "step)");
		return (-HWTR_E_UNSUPPORTED);
	}
	if (cfg->argv == NULL || cfg->argv[0] == NULL) {
		snprintf(src->errmsg, sizeof(src->errmsg),
		    "no command to trace");
		return (-HWTR_E_INVAL);
	}
	if ((rc = vg_find(&vs->p, src->errmsg, sizeof(src->errmsg))) < 0)
		return (rc);
	src->cfg = *cfg;
	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &real);
	src->tconv.valid = 1;
	src->tconv.tsc_zero = (uint64_t)mono.tv_sec * 1000000000u +
	    (uint64_t)mono.tv_nsec;
	src->tconv.ns_zero = (int64_t)real.tv_sec * 1000000000 + real.tv_nsec;
	src->tconv.mult = 1;
	src->tconv.shift = 0;
	memset(&src->pt, 0, sizeof(src->pt));
	src->pt.options = HWTR_PT_OPT_TSC | HWTR_PT_OPT_BRANCH |
	    HWTR_PT_OPT_USER;
	snprintf(version, sizeof(version), "%s, hwtrace tool %s",
	    vs->p.version, HWVG_TOOL_VERSION);
	src->version = version;
	src->sideband_origin = "valgrind";
	src->caveats = vg_caveats;
	src->ncaveats = sizeof(vg_caveats) / sizeof(vg_caveats[0]);
	return (0);
}

/*
 * Where the event files go without TMPDIR: /dev/shm when it is a tmpfs
 * we may write, else /tmp.  Writing 358 MB of events (gzip of 8 MiB)
 * costs the Valgrind thread 0.5 s of system time into an ext4 page cache
 * against 0.2 s into tmpfs, and the files take memory either way (page
 * cache), only as much as the conversion lags behind (see punch()).
 */
static const char *
default_dir(void)
{
	struct statfs sf;

	if (statfs("/dev/shm", &sf) == 0 && sf.f_type == TMPFS_MAGIC &&
	    access("/dev/shm", W_OK | X_OK) == 0)
		return ("/dev/shm");
	return ("/tmp");
}

/*
 * The directory of the tool's event files, locked while in use (see
 * sweep_stale()), and the guardian that ends the program's Valgrinds with
 * it.
 */
static int
vg_event_dir(struct vgsrc *vs, struct hwtr_src *src)
{
	const char *tmp = getenv("TMPDIR");

	if (tmp == NULL || *tmp == '\0')
		tmp = default_dir();
	sweep_stale(vs, tmp);
	snprintf(vs->dir, sizeof(vs->dir), "%s/%sXXXXXX", tmp, vs->keep ?
	    VG_KEEP_PREFIX : VG_DIR_PREFIX);
	if (mkdtemp(vs->dir) == NULL) {
		vg_err(vs, "cannot create a directory for the tool's events "
		    "('%s'): %s", vs->dir, strerror(errno));
		vs->dir[0] = '\0';
		return (-HWTR_E_IO);
	}
	/* In use until rm_dir() (see sweep_stale()); not by the children. */
	if ((vs->dirfd = open(vs->dir, O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC)) < 0 || flock(vs->dirfd, LOCK_EX | LOCK_NB) != 0) {
		vg_err(vs, "cannot lock '%s': %s", vs->dir, strerror(errno));
		if (vs->dirfd >= 0)
			close(vs->dirfd);
		vs->dirfd = -1;
		(void)rmdir(vs->dir);
		vs->dir[0] = '\0';
		return (-HWTR_E_IO);
	}
	hwtr_logf(&src->cfg.log, HWTR_LOG_INFO, "valgrind: event files in "
	    "'%s'", vs->dir);
	/* The program's children are Valgrinds that outlive a SIGKILL. */
	if (vg_guard_start(vs->dir, &vs->guard_pid, &vs->guard_fd) < 0)
		hwtr_logf(&src->cfg.log, HWTR_LOG_WARN, "valgrind: cannot start "
		    "the guardian of the process tree (%s): if hwtrace is "
		    "killed, the program's children keep running",
		    strerror(errno));
	return (0);
}

/*
 * HWTRACE_VALGRIND_CHASE_AFTER=N: the tool's --chase-after (when its
 * translator starts to chase branches, in superblocks run; 0 from the
 * start), for tests that need chased superblocks in short programs.
 */
static int
vg_chase_after(struct vgsrc *vs)
{
	const char *v = getenv("HWTRACE_VALGRIND_CHASE_AFTER");
	size_t n;

	vs->chasearg[0] = '\0';
	if (v == NULL)
		return (0);
	n = strspn(v, "0123456789");
	if (n == 0 || n > 15 || v[n] != '\0') {
		vg_err(vs, "HWTRACE_VALGRIND_CHASE_AFTER: expected a number of "
		    "superblocks (at most 15 digits), got '%s'", v);
		return (-HWTR_E_INVAL);
	}
	snprintf(vs->chasearg, sizeof(vs->chasearg), "--chase-after=%s", v);
	return (0);
}

/*
 * valgrind.bin's arguments: the tool's options, then the program's
 * (@outdir and @logarg: buffers for two of them).  NULL: out of memory.
 */
static char **
vg_args(struct vgsrc *vs, struct hwtr_src *src, char *outdir, size_t outlen,
    char *logarg, size_t loglen)
{
	char **args;
	size_t n = 0, i, argc = 0;

	while (src->cfg.argv[argc] != NULL)
		argc++;
	if ((args = calloc(argc + 16, sizeof(*args))) == NULL)
		return (NULL);
	snprintf(outdir, outlen, "--out-dir=%s", vs->dir);
	args[n++] = "valgrind.bin";
	args[n++] = "--tool=hwtrace";
	args[n++] = "-q";
	args[n++] = outdir;
	args[n++] = src->cfg.no_follow ? "--trace-children=no" :
	    "--trace-children=yes";
	args[n++] = "--run-libc-freeres=no";
	args[n++] = "--run-cxx-freeres=no";
	/*
	 * No gdbserver: its FIFOs in TMPDIR would outlive a Valgrind that
	 * is killed (it dies with us: PR_SET_PDEATHSIG below).
	 */
	args[n++] = "--vgdb=no";
	/*
	 * Chasing is the tool's to set (kernel/vgtool/hw_main.c): where VEX
	 * joins "jcc X; B; jcc X" into one superblock (its &&-idiom), the
	 * tool's record says whether B ran, and a superblock it cannot
	 * describe so is made again without chasing (hw_unchased()); it
	 * turns chasing on once the program has run a while
	 * (hw_stop_client_code()).
	 */
	/*
	 * Valgrind's own messages (its ten-line report of a crash) go to a
	 * file unless --verbose; vg_log_replay() says what matters.
	 */
	if (src->cfg.log.level < HWTR_LOG_INFO &&
	    (vs->logfd = vg_log_open()) >= 0) {
		snprintf(logarg, loglen, "--log-fd=%d", vs->logfd);
		args[n++] = logarg;
	}
	if (src->cfg.ground_truth)
		args[n++] = "--ground-truth=yes";
	if (vs->chasearg[0] != '\0')
		args[n++] = vs->chasearg;
	/* Kept event files are for tests/bench/vgconv: streams. */
	if (vs->keep || vs->readonly)
		args[n++] = "--ring=no";
	for (i = 0; i < argc; i++)
		args[n++] = src->cfg.argv[i];
	args[n] = NULL;
	return (args);
}

static int
valgrind_backend_enable(struct hwtr_src *src)
{
	struct vgsrc *vs = src->priv;
	const char *cmd;
	struct vgconv_cb cb;
	char outdir[PATH_MAX + 16], logarg[32];
	char **args;
	int rc, fds[2], err;
	ssize_t r;
	pid_t pid;

	if (src->cfg.argv == NULL || (cmd = src->cfg.argv[0]) == NULL)
		return (-HWTR_E_INVAL);
	if ((rc = vg_chase_after(vs)) < 0)
		return (rc);
	memset(&cb, 0, sizeof(cb));
	cb.arg = vs;
	cb.thread_start = cb_thread_start;
	cb.thread_exit = cb_thread_exit;
	cb.proc_start = cb_proc_start;
	cb.proc_exit = cb_proc_exit;
	cb.mmap = cb_mmap;
	cb.munmap = cb_munmap;
	cb.groundtruth = cb_groundtruth;
	cb.trigger = cb_trigger;
	cb.stop_limit = cb_stop_limit;
	if (src->sink->code != NULL)
		cb.anon = cb_anon;
	if ((rc = vgconv_new(&vs->cv, &cb, &src->cfg.log)) < 0)
		return (rc);
	/* --trigger: its address (a PIE's is known at its first mapping). */
	vs->trigger_pending = src->cfg.trigger_vaddr != 0 &&
	    src->cfg.trigger_pie;
	if ((rc = vg_event_dir(vs, src)) < 0)
		return (rc);
	if ((args = vg_args(vs, src, outdir, sizeof(outdir), logarg,
	    sizeof(logarg))) == NULL)
		return (-HWTR_E_NOMEM);
	/* Resolve the command first: valgrind's own message is obscure. */
	if (strchr(cmd, '/') == NULL) {
		char p[PATH_MAX];

		if (vg_find_in_path(cmd, p, sizeof(p)) < 0) {
			vg_err(vs, "cannot run '%s': command not found",
			    cmd);
			vs->src->exec_errno = ENOENT;
			free(args);
			return (-HWTR_E_NOENT);
		}
	} else if (access(cmd, X_OK) != 0) {
		int e = errno;

		vg_err(vs, "cannot run '%s': %s", cmd, strerror(e));
		vs->src->exec_errno = e;
		free(args);
		return (e == ENOENT ? -HWTR_E_NOENT : -HWTR_E_PERM);
	}
	if (pipe2(fds, O_CLOEXEC) < 0) {
		free(args);
		return (-HWTR_E_IO);
	}
	if ((pid = fork()) < 0) {
		vg_err(vs, "fork: %s", strerror(errno));
		close(fds[0]);
		close(fds[1]);
		free(args);
		return (-HWTR_E_IO);
	}
	if (pid == 0) {
		close(fds[0]);
		/* The program goes when hwtrace goes, even by SIGKILL. */
		(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (vs->logfd >= 0)
			(void)fcntl(vs->logfd, F_SETFD, 0);
		setenv("VALGRIND_LIB", vs->p.lib, 1);
		/* Valgrind gives the program what it was given. */
		hwtr_sig_restore_ignored();
		execv(vs->p.valgrind, args);
		err = errno;
		(void)!write(fds[1], &err, sizeof(err));
		_exit(127);
	}
	close(fds[1]);
	free(args);
	r = read(fds[0], &err, sizeof(err));
	close(fds[0]);
	if (r == (ssize_t)sizeof(err)) {
		(void)waitpid(pid, NULL, 0);
		vg_err(vs, "cannot run '%s': %s", vs->p.valgrind, strerror(err));
		return (-HWTR_E_IO);
	}
	vs->pid = pid;
	src->first_pid = pid;
	if (src->cfg.trigger_vaddr != 0 && !src->cfg.trigger_pie)
		vgconv_set_trigger(vs->cv, pid, src->cfg.trigger_vaddr);
	return (0);
}

/*
 * Valgrind's own exit statuses that mean it could not run the program as
 * asked; the tool's stderr has said why.
 */
static void
note_status(struct vgsrc *vs, int status)
{
	struct hwtr_src *src = vs->src;

	vg_log_replay(vs, status);
	if (WIFEXITED(status)) {
		src->exit_kind = HWTR_EXIT_CODE;
		src->exit_value = WEXITSTATUS(status);
		if (WEXITSTATUS(status) == HWVG_EXIT_TOOL_ERROR)
			hwtr_logf(&src->cfg.log, HWTR_LOG_ERROR, "valgrind: "
			    "the hwtrace tool failed (see its message above)");
	} else if (WIFSIGNALED(status)) {
		src->exit_kind = HWTR_EXIT_SIGNAL;
		src->exit_value = WTERMSIG(status);
		if (WTERMSIG(status) == SIGILL)
			hwtr_logf(&src->cfg.log, HWTR_LOG_WARN, "valgrind: "
			    "the program died of SIGILL: it may use an "
			    "instruction Valgrind's simulated CPU does not "
			    "have (AVX-512, for example); try --source step");
	}
	vs->exit_time = hwtr_src_now();
}

/*
 * The first process's end, reported once everything it recorded was
 * converted: its sideband must come after that of its children.
 */
static int
report_first_exit(struct vgsrc *vs)
{
	struct hwtr_src *src = vs->src;
	struct hwtr_src_proc ev;

	if (vs->exit_reported || src->sink->proc == NULL)
		return (0);
	vs->exit_reported = 1;
	memset(&ev, 0, sizeof(ev));
	ev.what = HWTR_PROC_EXIT;
	ev.pid = vs->pid;
	ev.ppid = -1;
	ev.kind = src->exit_kind;
	ev.value = src->exit_value;
	ev.time = vs->exit_time;
	return (proc_exit(vs, &ev));
}

static int
valgrind_backend_read(struct hwtr_src *src)
{
	struct vgsrc *vs = src->priv;
	struct timespec ts = { 0, 2000000 };
	uint64_t t0 = hwtr_src_now();
	int rc, status, i;
	pid_t w;

	for (i = 0; i < 50 && hwtr_src_now() - t0 < VG_READ_NS; i++) {
		if (!vs->exited) {
			w = waitpid(vs->pid, &status, WNOHANG);
			if (w == vs->pid) {
				vs->exited = 1;
				note_status(vs, status);
			}
		}
		if ((rc = scan_dir(vs)) < 0)
			return (rc);
		if ((rc = pump(vs)) < 0)
			return (rc);
		if (vs->exited && all_ended(vs)) {
			/* Once more: files of the last children. */
			if ((rc = scan_dir(vs)) < 0)
				return (rc);
			if (!all_ended(vs))
				continue;
			if ((rc = vgconv_finish(vs->cv, hwtr_src_now())) < 0) {
				vg_err(vs, "%s", vgconv_errmsg(vs->cv));
				return (rc);
			}
			if ((rc = report_first_exit(vs)) < 0)
				return (rc);
			return (1);
		}
		if (src->cfg.stop != NULL && *src->cfg.stop)
			return (0);
		if (rc == 0)
			nanosleep(&ts, NULL);
	}
	return (0);
}

/* Stop: the program is killed; what it recorded so far is converted. */
static int
valgrind_backend_disable(struct hwtr_src *src)
{
	struct vgsrc *vs = src->priv;
	struct timespec ts = { 0, 2000000 };
	int status, tries, rc;
	size_t i;

	if (vs->pid <= 0 || vs->cv == NULL)
		return (0);
	/* A program that got the terminal's SIGINT too: let it end. */
	for (tries = 0; !vs->exited && tries < 100; tries++) {
		if (waitpid(vs->pid, &status, WNOHANG) == vs->pid) {
			vs->exited = 1;
			note_status(vs, status);
			break;
		}
		nanosleep(&ts, NULL);
	}
	if (!vs->exited) {
		vs->we_killed = 1;
		(void)kill(vs->pid, SIGKILL);
		while (waitpid(vs->pid, &status, 0) < 0 && errno == EINTR)
			;
		vs->exited = 1;
		note_status(vs, status);
	}
	for (i = 0; i < vs->nfiles; i++)
		if (!vs->files[i]->ended && vs->files[i]->pid != vs->pid)
			(void)kill(vs->files[i]->pid, SIGKILL);
	for (tries = 0; tries < 1000; tries++) {
		if (scan_dir(vs) < 0 || (rc = pump(vs)) < 0)
			break;
		if (all_ended(vs))
			break;
		if (rc == 0)
			nanosleep(&ts, NULL);
	}
	if ((rc = vgconv_finish(vs->cv, hwtr_src_now())) < 0)
		return (rc);
	return (report_first_exit(vs));
}

static int
valgrind_backend_thread_alloc(struct hwtr_src *src,
    struct hwtr_src_thread *thr)
{
	(void)src;
	(void)thr;
	return (0);
}

static void
valgrind_backend_thread_free(struct hwtr_src *src,
    struct hwtr_src_thread *thr)
{
	(void)src;
	(void)thr;
}

static void
valgrind_backend_deinit(struct hwtr_src *src)
{
	struct vgsrc *vs = src->priv;
	size_t i;

	if (vs == NULL)
		return;
	if (vs->pid > 0 && !vs->exited) {
		(void)kill(vs->pid, SIGKILL);
		(void)waitpid(vs->pid, NULL, 0);
	}
	for (i = 0; i < vs->nfiles; i++) {
		if (vs->files[i]->f != NULL)
			vgconv_file_abandon(vs->files[i]->f);
		evfile_unmap(vs->files[i]);
		if (vs->files[i]->fd >= 0)
			close(vs->files[i]->fd);
		free(vs->files[i]->buf);
		free(vs->files[i]->name);
		free(vs->files[i]);
	}
	vgconv_free(vs->cv);
	vg_guard_end(vs->guard_pid, vs->guard_fd);
	rm_dir(vs);
	if (vs->dirfd >= 0)
		close(vs->dirfd);
	if (vs->logfd >= 0)
		close(vs->logfd);
	free(vs);
	src->priv = NULL;
}

const struct hwtr_src_ops hwtr_valgrind_ops = {
	.name = "valgrind",
	.init = valgrind_backend_init,
	.configure = valgrind_backend_configure,
	.enable = valgrind_backend_enable,
	.read = valgrind_backend_read,
	.disable = valgrind_backend_disable,
	.thread_alloc = valgrind_backend_thread_alloc,
	.thread_free = valgrind_backend_thread_free,
	.deinit = valgrind_backend_deinit,
};
