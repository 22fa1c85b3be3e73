/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Sideband for software trace sources (hwtrace.h section 6c): which
 * processes and threads exist, what they are called and which executable
 * images are mapped where, over time.
 *
 * The kernel knows this best: a dummy software perf event with mmap2,
 * comm, task and inherit set reports every executable mapping (with the
 * build-id of the mapped file), every exec, fork, clone and exit of the
 * traced tree, stamped with CLOCK_MONOTONIC like the step source's trace.
 * An inherited per-task event cannot be mmap'd with cpu == -1 (the kernel
 * refuses: all children would write into one buffer), so, as perf record
 * does, there is one event per CPU, and per thread when attaching to a
 * process whose threads already exist; the events of a CPU share one ring.
 * The rings are merged by time.
 *
 * When perf_event_open is refused (perf_event_paranoid, seccomp, no
 * CONFIG_PERF_EVENTS) the records are made from /proc when the tracer
 * reports that something happened: /proc/<pid>/maps is read again and
 * compared with what was seen before.
 */

#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hwtrace.h"
#include "hwtr_kernel.h"
#include "hwtr_common.h"

#define SBC_REORDER_NS	1000000ull	/* merge window of the per-CPU rings */
#define SBC_EXIT_WAIT_NS 2000000000ull	/* an exit waits this long for its status */
#define SBC_MAX_RECORD	65536		/* perf_event_header.size is a u16 */

/* A queued record; strings are owned. */
struct sbc_ent {
	struct hwtr_sb_rec rec;
	char		*str;		/* path or comm */
	uint64_t	seq;		/* arrival order, for a stable sort */
	int		need_exec_path;	/* EXEC waiting for its MMAP's path */
	int		need_status;	/* PROC_EXIT waiting for the status */
};

/* An executable mapping as /proc/<pid>/maps shows it. */
struct sbc_map {
	uint64_t	start, end, pgoff;
	uint32_t	prot, flags;
	uint64_t	dev, ino;
	char		*path;
};

struct sbc_proc {
	int32_t		pid;
	struct sbc_map	*maps;
	size_t		nmaps;
};

struct sbc_status {
	int32_t		pid;
	enum hwtr_exit_kind kind;
	int		value;
};

struct sbc_ring {
	int		fd;
	void		*base;
	size_t		mmap_len;
	uint64_t	data_off, data_size;
	uint64_t	lost_seen;	/* records PERF_RECORD_LOSTs counted */
};

struct hwtr_sbc {
	struct hwtr_sbc_opts opts;
	const struct hwtr_log *log;
	int		use_perf;

	int		*fds;
	size_t		*fd_ring;	/* the ring each of fds writes into */
	size_t		nfds;
	struct sbc_ring	*rings;
	size_t		nrings;
	uint8_t		*recbuf;	/* one record, unwrapped */

	struct sbc_ent	*q;
	size_t		nq, capq;
	uint64_t	seq;

	struct sbc_proc	*procs;		/* /proc mode: mappings seen */
	size_t		nprocs;
	struct sbc_status *status;	/* exits noted, not yet matched */
	size_t		nstatus;
	int		vdso_seen_perf;	/* the kernel reports [vdso] itself */
	int		no_build_id;	/* the kernel has no attr.build_id */
	int		no_lost_count;	/* nor PERF_FORMAT_LOST (Linux 6.0) */

	struct hwtr_sbc_stats st;
	char		errmsg[HWTR_ERRMSG_MAX];
};

static void sbc_err(struct hwtr_sbc *, const char *, ...)
    __attribute__((format(printf, 2, 3)));

static void
sbc_err(struct hwtr_sbc *sbc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(sbc->errmsg, sizeof(sbc->errmsg), fmt, ap);
	va_end(ap);
}

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec);
}

/* ------------------------------------------------------------------ */
/* The queue                                                           */
/* ------------------------------------------------------------------ */

static struct sbc_ent *
q_add(struct hwtr_sbc *sbc, enum hwtr_sb_type type, uint64_t time,
    int32_t pid, int32_t tid, const char *str)
{
	struct sbc_ent *e, *nq;
	size_t ncap;

	if (sbc->nq == sbc->capq) {
		ncap = sbc->capq ? 2 * sbc->capq : 256;
		if ((nq = realloc(sbc->q, ncap * sizeof(*nq))) == NULL)
			return (NULL);
		sbc->q = nq;
		sbc->capq = ncap;
	}
	e = &sbc->q[sbc->nq];
	memset(e, 0, sizeof(*e));
	if (str != NULL && (e->str = strdup(str)) == NULL)
		return (NULL);
	e->rec.type = type;
	e->rec.time = time;
	e->rec.pid = pid;
	e->rec.tid = tid;
	e->seq = sbc->seq++;
	sbc->nq++;
	return (e);
}

static int
ent_cmp(const void *a, const void *b)
{
	const struct sbc_ent *x = a, *y = b;

	if (x->rec.time != y->rec.time)
		return (x->rec.time < y->rec.time ? -1 : 1);
	return (x->seq < y->seq ? -1 : x->seq > y->seq);
}

/* ------------------------------------------------------------------ */
/* /proc                                                               */
/* ------------------------------------------------------------------ */

static int
read_small_file(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return (-1);
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return (-1);
	buf[n] = '\0';
	return ((int)n);
}

static int
proc_comm(int32_t pid, int32_t tid, char *buf, size_t len)
{
	char path[64];
	int n;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid,
	    (int)tid);
	if ((n = read_small_file(path, buf, len)) <= 0)
		return (-1);
	if (buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return (0);
}

static int32_t
proc_ppid(int32_t pid)
{
	char path[64], buf[512], *p;
	int ppid;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (read_small_file(path, buf, sizeof(buf)) <= 0)
		return (-1);
	/* "pid (comm) state ppid": comm may contain anything but ')'. */
	if ((p = strrchr(buf, ')')) == NULL || sscanf(p + 1, " %*c %d",
	    &ppid) != 1)
		return (-1);
	return (ppid);
}

static void
maps_free(struct sbc_map *m, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(m[i].path);
	free(m);
}

/*
 * The executable mappings of @pid, in address order.  Returns 0, or -1
 * with errno when /proc/<pid>/maps cannot be read.
 */
static int
proc_maps(int32_t pid, struct sbc_map **mapsp, size_t *np)
{
	char path[64], *line = NULL, perms[8], *p;
	unsigned long long start, end, off, ino;
	unsigned int maj, min;
	struct sbc_map *m = NULL, *nm;
	size_t n = 0, cap = 0, linecap = 0;
	int pos, serr;
	FILE *f;

	*mapsp = NULL;
	*np = 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if ((f = fopen(path, "re")) == NULL)
		return (-1);
	while (getline(&line, &linecap, f) > 0) {
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start,
		    &end, perms, &off, &maj, &min, &ino, &pos) < 7)
			continue;
		if (strlen(perms) < 4 || perms[2] != 'x')
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			if ((nm = realloc(m, cap * sizeof(*m))) == NULL)
				goto nomem;
			m = nm;
		}
		p = line + pos;
		p[strcspn(p, "\n")] = '\0';
		/*
		 * The legacy vsyscall page is the same fixed page everywhere,
		 * executed by no current libc, and perf does not report it:
		 * leave it out so both origins agree.
		 */
		if (strcmp(p, "[vsyscall]") == 0)
			continue;
		memset(&m[n], 0, sizeof(m[n]));
		m[n].start = start;
		m[n].end = end;
		m[n].pgoff = off;
		m[n].prot = (perms[0] == 'r' ? PROT_READ : 0) |
		    (perms[1] == 'w' ? PROT_WRITE : 0) | PROT_EXEC;
		m[n].flags = perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
		m[n].dev = ((uint64_t)maj << 32) | min;
		m[n].ino = ino;
		/* Anonymous executable memory (a JIT) has no name. */
		if ((m[n].path = strdup(*p != '\0' ? p : "//anon")) == NULL)
			goto nomem;
		n++;
	}
	free(line);
	fclose(f);
	*mapsp = m;
	*np = n;
	return (0);
nomem:
	serr = ENOMEM;
	free(line);
	fclose(f);
	maps_free(m, n);
	errno = serr;
	return (-1);
}

static struct sbc_proc *
proc_find(struct hwtr_sbc *sbc, int32_t pid, int create)
{
	struct sbc_proc *np;
	size_t i;

	for (i = 0; i < sbc->nprocs; i++)
		if (sbc->procs[i].pid == pid)
			return (&sbc->procs[i]);
	if (!create)
		return (NULL);
	np = realloc(sbc->procs, (sbc->nprocs + 1) * sizeof(*np));
	if (np == NULL)
		return (NULL);
	sbc->procs = np;
	np = &sbc->procs[sbc->nprocs++];
	memset(np, 0, sizeof(*np));
	np->pid = pid;
	return (np);
}

/*
 * The build-id of what @pid maps at [start, end): through map_files (the
 * very file mapped, even when replaced or deleted since), else the path.
 */
static void
mapping_build_id(int32_t pid, const struct sbc_map *m, uint8_t *id,
    uint8_t *idlen)
{
	char path[96];
	size_t len = 0;
	int fd;

	*idlen = 0;
	if (m->path[0] != '/')
		return;
	snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64,
	    (int)pid, m->start, m->end);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0 &&
	    (fd = open(m->path, O_RDONLY | O_CLOEXEC)) < 0)
		return;
	if (hwtr_elf_build_id_fd(fd, id, &len) == 1)
		*idlen = (uint8_t)len;
	close(fd);
}

static int
q_mmap_from_map(struct hwtr_sbc *sbc, int32_t pid, uint64_t time,
    const struct sbc_map *m)
{
	struct sbc_ent *e;

	if ((e = q_add(sbc, HWTR_SB_MMAP, time, pid, pid, m->path)) == NULL)
		return (-HWTR_E_NOMEM);
	e->rec.u.mmap.addr = m->start;
	e->rec.u.mmap.len = m->end - m->start;
	e->rec.u.mmap.pgoff = m->pgoff;
	e->rec.u.mmap.prot = m->prot;
	e->rec.u.mmap.flags = m->flags;
	mapping_build_id(pid, m, e->rec.u.mmap.build_id,
	    &e->rec.u.mmap.build_id_len);
	return (0);
}

static int
same_map(const struct sbc_map *a, const struct sbc_map *b)
{
	return (a->start == b->start && a->end == b->end &&
	    a->pgoff == b->pgoff && a->prot == b->prot && a->dev == b->dev &&
	    a->ino == b->ino && strcmp(a->path, b->path) == 0);
}

enum rescan_mode {
	RESCAN_ALL,		/* report every change */
	RESCAN_VDSO,		/* perf mode: the kernel reports files */
	RESCAN_SILENT		/* remember only */
};

/*
 * Read @pid's executable mappings again and queue MUNMAP for those gone
 * and MMAP for those new or changed (as @mode says).
 */
static int
proc_rescan(struct hwtr_sbc *sbc, int32_t pid, uint64_t time,
    enum rescan_mode mode)
{
	int only_vdso = mode == RESCAN_VDSO;
	struct sbc_proc *pr;
	struct sbc_map *m;
	struct sbc_ent *e;
	size_t n, i, j;
	int rc;

	if ((pr = proc_find(sbc, pid, 1)) == NULL)
		return (-HWTR_E_NOMEM);
	if (proc_maps(pid, &m, &n) != 0) {
		if (errno == ENOMEM)
			return (-HWTR_E_NOMEM);
		hwtr_logf(sbc->log, HWTR_LOG_INFO,
		    "sideband: cannot read /proc/%d/maps: %s", (int)pid,
		    strerror(errno));
		return (0);
	}
	for (i = 0; i < pr->nmaps && mode == RESCAN_ALL; i++) {
		for (j = 0; j < n; j++)
			if (same_map(&pr->maps[i], &m[j]))
				break;
		if (j < n)
			continue;
		e = q_add(sbc, HWTR_SB_MUNMAP, time, pid, pid, NULL);
		if (e == NULL)
			goto nomem;
		e->rec.u.munmap.addr = pr->maps[i].start;
		e->rec.u.munmap.len = pr->maps[i].end - pr->maps[i].start;
	}
	for (j = 0; j < n && mode != RESCAN_SILENT; j++) {
		if (only_vdso && strcmp(m[j].path, "[vdso]") != 0)
			continue;
		for (i = 0; i < pr->nmaps; i++)
			if (same_map(&pr->maps[i], &m[j]))
				break;
		if (i < pr->nmaps)
			continue;
		if ((rc = q_mmap_from_map(sbc, pid, time, &m[j])) < 0) {
			maps_free(m, n);
			return (rc);
		}
	}
	maps_free(pr->maps, pr->nmaps);
	pr->maps = m;
	pr->nmaps = n;
	return (0);
nomem:
	maps_free(m, n);
	return (-HWTR_E_NOMEM);
}

/* Forget what was seen of @pid (it exec'd or exited). */
static void
proc_forget(struct hwtr_sbc *sbc, int32_t pid)
{
	struct sbc_proc *pr;

	if ((pr = proc_find(sbc, pid, 0)) == NULL)
		return;
	maps_free(pr->maps, pr->nmaps);
	*pr = sbc->procs[--sbc->nprocs];
}

/* ------------------------------------------------------------------ */
/* perf_event                                                          */
/* ------------------------------------------------------------------ */

static int
sbc_perf_open_attr(int32_t tid, int cpu, int build_id, int lost, int *fdp)
{
	struct perf_event_attr attr;
	long fd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.sample_period = 1;
	attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	attr.inherit = 1;
	attr.mmap = 1;
	attr.mmap2 = 1;
	attr.comm = 1;
	attr.comm_exec = 1;
	attr.task = 1;
	attr.sample_id_all = 1;
	attr.build_id = build_id ? 1 : 0;
	/* read() tells how many records the ring had no room for. */
	attr.read_format = lost ? PERF_FORMAT_LOST : 0;
	attr.use_clockid = 1;
	attr.clockid = CLOCK_MONOTONIC;
	/* Kernel and hypervisor are not traced; asking less is allowed more. */
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	fd = syscall(SYS_perf_event_open, &attr, (pid_t)tid, cpu, -1,
	    PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return (-errno);
	*fdp = (int)fd;
	return (0);
}

static int
sbc_perf_open_one(struct hwtr_sbc *sbc, int32_t tid, int cpu, int *fdp)
{
	int rc;

	for (;;) {
		rc = sbc_perf_open_attr(tid, cpu, !sbc->no_build_id,
		    !sbc->no_lost_count, fdp);
		if (rc != -EINVAL)
			return (rc);
		if (!sbc->no_lost_count) {
			/*
			 * Linux before 6.0: records lost at the very end go
			 * unreported (see sbc_perf_unreported()).
			 */
			sbc->no_lost_count = 1;
			hwtr_logf(sbc->log, HWTR_LOG_INFO, "sideband: this "
			    "kernel does not count lost records "
			    "(PERF_FORMAT_LOST)");
			continue;
		}
		if (sbc->no_build_id)
			return (rc);
		/* Linux before 5.12 has no build_id: read files instead. */
		sbc->no_build_id = 1;
		hwtr_logf(sbc->log, HWTR_LOG_INFO, "sideband: this kernel does "
		    "not report build-ids; reading them from the files");
	}
}

/* The thread ids of @pid (just @pid unless attaching). */
static int
sbc_tids(struct hwtr_sbc *sbc, int32_t **tidsp, size_t *np)
{
	char path[64];
	struct dirent *de;
	int32_t *t = NULL, *nt;
	size_t n = 0;
	DIR *d;

	*tidsp = NULL;
	*np = 0;
	if (sbc->opts.attach) {
		snprintf(path, sizeof(path), "/proc/%d/task",
		    (int)sbc->opts.pid);
		if ((d = opendir(path)) != NULL) {
			while ((de = readdir(d)) != NULL) {
				if (de->d_name[0] < '0' || de->d_name[0] > '9')
					continue;
				if ((nt = realloc(t, (n + 1) *
				    sizeof(*t))) == NULL) {
					closedir(d);
					free(t);
					return (-HWTR_E_NOMEM);
				}
				t = nt;
				t[n++] = (int32_t)atoi(de->d_name);
			}
			closedir(d);
		}
	}
	if (n == 0) {
		if ((t = malloc(sizeof(*t))) == NULL)
			return (-HWTR_E_NOMEM);
		t[n++] = sbc->opts.pid;
	}
	*tidsp = t;
	*np = n;
	return (0);
}

static void
sbc_perf_close(struct hwtr_sbc *sbc)
{
	size_t i;

	for (i = 0; i < sbc->nrings; i++)
		if (sbc->rings[i].base != NULL)
			munmap(sbc->rings[i].base, sbc->rings[i].mmap_len);
	for (i = 0; i < sbc->nfds; i++)
		close(sbc->fds[i]);
	free(sbc->rings);
	free(sbc->fds);
	free(sbc->fd_ring);
	free(sbc->recbuf);
	sbc->rings = NULL;
	sbc->fds = NULL;
	sbc->fd_ring = NULL;
	sbc->recbuf = NULL;
	sbc->nrings = sbc->nfds = 0;
}

/*
 * Open the events: one per (thread, CPU), the first of each CPU with a
 * ring, the others writing into it.  Returns 0 or a negative errno of
 * perf_event_open (the caller falls back to /proc) or -HWTR_E_*.
 */
static int
sbc_perf_open(struct hwtr_sbc *sbc)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	size_t pagesz = (size_t)sysconf(_SC_PAGESIZE), ntids, i;
	uint32_t pages = sbc->opts.ring_pages ? sbc->opts.ring_pages : 128;
	struct perf_event_mmap_page *mp;
	struct sbc_ring *r;
	int32_t *tids;
	int cpu, fd = -1, rc, first;

	if (ncpu < 1)
		ncpu = 1;
	if ((pages & (pages - 1)) != 0) {
		sbc_err(sbc, "sideband: ring of %u pages is not a power of 2",
		    pages);
		return (-HWTR_E_INVAL);
	}
	if ((rc = sbc_tids(sbc, &tids, &ntids)) < 0)
		return (rc);
	sbc->fds = calloc((size_t)ncpu * ntids, sizeof(*sbc->fds));
	sbc->fd_ring = calloc((size_t)ncpu * ntids, sizeof(*sbc->fd_ring));
	sbc->rings = calloc((size_t)ncpu, sizeof(*sbc->rings));
	sbc->recbuf = malloc(SBC_MAX_RECORD);
	if (sbc->fds == NULL || sbc->fd_ring == NULL || sbc->rings == NULL ||
	    sbc->recbuf == NULL) {
		free(tids);
		return (-HWTR_E_NOMEM);
	}
	for (cpu = 0; cpu < ncpu; cpu++) {
		first = -1;
		for (i = 0; i < ntids; i++) {
			rc = sbc_perf_open_one(sbc, tids[i], cpu, &fd);
			if (rc == -ENODEV && i == 0)
				break;		/* CPU offline */
			if (rc == -ESRCH && i > 0)
				continue;	/* thread exited meanwhile */
			if (rc < 0) {
				sbc_err(sbc, "sideband: perf_event_open(pid %d,"
				    " cpu %d): %s", (int)tids[i], cpu,
				    strerror(-rc));
				free(tids);
				return (rc);
			}
			sbc->fd_ring[sbc->nfds] = sbc->nrings;
			sbc->fds[sbc->nfds++] = fd;
			if (first >= 0) {
				if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT,
				    first) != 0) {
					rc = -errno;
					sbc_err(sbc, "sideband: PERF_EVENT_IOC_"
					    "SET_OUTPUT (cpu %d): %s", cpu,
					    strerror(errno));
					free(tids);
					return (rc);
				}
				continue;
			}
			first = fd;
			r = &sbc->rings[sbc->nrings];
			r->fd = fd;
			r->mmap_len = (1 + (size_t)pages) * pagesz;
			r->base = mmap(NULL, r->mmap_len, PROT_READ |
			    PROT_WRITE, MAP_SHARED, fd, 0);
			if (r->base == MAP_FAILED) {
				rc = -errno;
				r->base = NULL;
				sbc_err(sbc, "sideband: mmap of the perf ring "
				    "(cpu %d, %zu bytes): %s", cpu, r->mmap_len,
				    strerror(errno));
				free(tids);
				return (rc);
			}
			mp = r->base;
			r->data_off = mp->data_offset ? mp->data_offset : pagesz;
			r->data_size = mp->data_size ? mp->data_size :
			    (uint64_t)pages * pagesz;
			sbc->nrings++;
		}
	}
	free(tids);
	if (sbc->nrings == 0) {
		sbc_err(sbc, "sideband: no CPU accepted a perf event");
		return (-ENODEV);
	}
	return (0);
}

/* The sample_id trailer: pid, tid, time (PERF_SAMPLE_TID | TIME). */
struct sbc_sample_id {
	uint32_t	pid, tid;
	uint64_t	time;
};

static int
trailer(const uint8_t *rec, size_t size, size_t body, struct sbc_sample_id *id)
{
	if (size < body + sizeof(*id))
		return (-1);
	memcpy(id, rec + size - sizeof(*id), sizeof(*id));
	return (0);
}

/* A NUL-terminated string at @off, within the record body. */
static const char *
rec_str(uint8_t *rec, size_t off, size_t end)
{
	if (off >= end)
		return (NULL);
	if (memchr(rec + off, '\0', end - off) == NULL)
		return (NULL);
	return ((const char *)rec + off);
}

static struct sbc_ent *
find_pending_exec(struct hwtr_sbc *sbc, int32_t pid)
{
	size_t i;

	for (i = sbc->nq; i-- > 0;)
		if (sbc->q[i].need_exec_path && sbc->q[i].rec.pid == pid)
			return (&sbc->q[i]);
	return (NULL);
}

static int
take_status(struct hwtr_sbc *sbc, struct sbc_ent *e)
{
	size_t i;

	for (i = 0; i < sbc->nstatus; i++) {
		if (sbc->status[i].pid != e->rec.pid)
			continue;
		e->rec.u.exit.kind = sbc->status[i].kind;
		e->rec.u.exit.value = sbc->status[i].value;
		sbc->status[i] = sbc->status[--sbc->nstatus];
		return (1);
	}
	return (0);
}

/* Convert one perf record, read from ring @r, into queued records. */
static int
sbc_perf_record(struct hwtr_sbc *sbc, struct sbc_ring *r, uint8_t *rec,
    size_t size)
{
	struct perf_event_header hdr;
	struct sbc_sample_id sid;
	struct sbc_ent *e, *x;
	const char *s;
	uint32_t u32[4];
	uint64_t u64[3], t;
	size_t body;

	memcpy(&hdr, rec, sizeof(hdr));
	body = size - sizeof(struct sbc_sample_id);
	switch (hdr.type) {
	case PERF_RECORD_MMAP2: {
		uint32_t pid, tid, prot, flags;
		uint8_t bidlen;

		/* header, pid, tid, addr, len, pgoff, 24 bytes, prot, flags */
		if (trailer(rec, size, 8 + 8 + 24 + 24 + 8, &sid) != 0)
			return (0);
		memcpy(&pid, rec + 8, 4);
		memcpy(&tid, rec + 12, 4);
		memcpy(u64, rec + 16, 24);
		memcpy(&prot, rec + 64, 4);
		memcpy(&flags, rec + 68, 4);
		if ((s = rec_str(rec, 72, body)) == NULL)
			return (0);
		if ((x = find_pending_exec(sbc, (int32_t)pid)) != NULL) {
			if ((x->str = strdup(s)) == NULL)
				return (-HWTR_E_NOMEM);
			x->rec.u.exec.path = x->str;
			x->need_exec_path = 0;
		}
		e = q_add(sbc, HWTR_SB_MMAP, sid.time, (int32_t)pid,
		    (int32_t)tid, s);
		if (e == NULL)
			return (-HWTR_E_NOMEM);
		e->rec.u.mmap.addr = u64[0];
		e->rec.u.mmap.len = u64[1];
		e->rec.u.mmap.pgoff = u64[2];
		e->rec.u.mmap.prot = prot;
		e->rec.u.mmap.flags = flags;
		if (hdr.misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
			bidlen = rec[40];
			if (bidlen > 20)
				bidlen = 20;
			memcpy(e->rec.u.mmap.build_id, rec + 44, bidlen);
			e->rec.u.mmap.build_id_len = bidlen;
		} else if (s[0] == '/') {
			/*
			 * A kernel without build_id support (before 5.12),
			 * or one that could not read it: read it ourselves.
			 */
			struct sbc_map m;

			memset(&m, 0, sizeof(m));
			m.start = u64[0];
			m.end = u64[0] + u64[1];
			m.path = (char *)(uintptr_t)s;
			mapping_build_id((int32_t)pid, &m,
			    e->rec.u.mmap.build_id,
			    &e->rec.u.mmap.build_id_len);
		}
		if (strcmp(s, "[vdso]") == 0)
			sbc->vdso_seen_perf = 1;
		return (0);
	}
	case PERF_RECORD_COMM:
		if (trailer(rec, size, 16, &sid) != 0)
			return (0);
		memcpy(u32, rec + 8, 8);
		if ((s = rec_str(rec, 16, body)) == NULL)
			return (0);
		e = q_add(sbc, HWTR_SB_COMM, sid.time, (int32_t)u32[0],
		    (int32_t)u32[1], s);
		if (e == NULL)
			return (-HWTR_E_NOMEM);
		e->rec.u.comm.exec = (hdr.misc & PERF_RECORD_MISC_COMM_EXEC) ?
		    1 : 0;
		if (!e->rec.u.comm.exec)
			return (0);
		/* Its path comes with the executable's MMAP, next. */
		e = q_add(sbc, HWTR_SB_EXEC, sid.time, (int32_t)u32[0],
		    (int32_t)u32[1], NULL);
		if (e == NULL)
			return (-HWTR_E_NOMEM);
		e->need_exec_path = 1;
		return (0);
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		if (size < 8 + 16 + 8)
			return (0);
		memcpy(u32, rec + 8, 16);	/* pid, ppid, tid, ptid */
		memcpy(&t, rec + 24, 8);
		if (hdr.type == PERF_RECORD_FORK && u32[0] != u32[1]) {
			e = q_add(sbc, HWTR_SB_PROC_START, t, (int32_t)u32[0],
			    (int32_t)u32[2], NULL);
			if (e == NULL)
				return (-HWTR_E_NOMEM);
			e->rec.u.proc_start.ppid = (int32_t)u32[1];
		} else if (hdr.type == PERF_RECORD_FORK) {
			e = q_add(sbc, HWTR_SB_THREAD_START, t, (int32_t)u32[0],
			    (int32_t)u32[2], NULL);
			if (e == NULL)
				return (-HWTR_E_NOMEM);
			e->rec.u.thread_start.ptid = (int32_t)u32[3];
		} else if (u32[0] == u32[2]) {
			e = q_add(sbc, HWTR_SB_PROC_EXIT, t, (int32_t)u32[0],
			    (int32_t)u32[2], NULL);
			if (e == NULL)
				return (-HWTR_E_NOMEM);
			e->rec.u.exit.kind = HWTR_EXIT_NONE;
			e->need_status = !take_status(sbc, e);
		} else {
			e = q_add(sbc, HWTR_SB_THREAD_EXIT, t, (int32_t)u32[0],
			    (int32_t)u32[2], NULL);
			if (e == NULL)
				return (-HWTR_E_NOMEM);
			e->rec.u.exit.kind = HWTR_EXIT_NONE;
		}
		return (0);
	case PERF_RECORD_LOST:
		if (trailer(rec, size, 8 + 16, &sid) != 0)
			return (0);
		memcpy(u64, rec + 8, 16);	/* id, lost */
		e = q_add(sbc, HWTR_SB_LOST, sid.time, (int32_t)sid.pid,
		    (int32_t)sid.tid, NULL);
		if (e == NULL)
			return (-HWTR_E_NOMEM);
		e->rec.u.lost.stream = UINT32_MAX;
		e->rec.u.lost.reason = HWTR_LOST_SIDEBAND;
		e->rec.u.lost.records = u64[1];
		sbc->st.lost += u64[1];
		r->lost_seen += u64[1];
		hwtr_logf(sbc->log, HWTR_LOG_WARN, "sideband: the kernel dropped"
		    " %" PRIu64 " records (ring full)", u64[1]);
		return (0);
	default:
		return (0);	/* other record types are not needed */
	}
}

/* Move every complete record out of the rings into the queue. */
static int
sbc_perf_drain(struct hwtr_sbc *sbc)
{
	struct perf_event_mmap_page *mp;
	struct perf_event_header hdr;
	struct sbc_ring *r;
	uint64_t head, tail, pos, first;
	const uint8_t *data;
	size_t i;
	int rc = 0;

	for (i = 0; i < sbc->nrings; i++) {
		r = &sbc->rings[i];
		mp = r->base;
		data = (const uint8_t *)r->base + r->data_off;
		head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
		tail = mp->data_tail;
		while (tail < head && rc == 0) {
			if (head - tail < sizeof(hdr))
				break;
			/* A record may wrap around the end of the ring. */
			pos = tail % r->data_size;
			first = r->data_size - pos;
			if (first >= sizeof(hdr)) {
				memcpy(&hdr, data + pos, sizeof(hdr));
			} else {
				memcpy(sbc->recbuf, data + pos, first);
				memcpy(sbc->recbuf + first, data,
				    sizeof(hdr) - first);
				memcpy(&hdr, sbc->recbuf, sizeof(hdr));
			}
			if (hdr.size < sizeof(hdr) || hdr.size > head - tail) {
				sbc_err(sbc, "sideband: perf ring of cpu %zu: "
				    "bad record size %u at %" PRIu64, i,
				    hdr.size, tail);
				rc = -HWTR_E_FORMAT;
				break;
			}
			if (first >= hdr.size) {
				memcpy(sbc->recbuf, data + pos, hdr.size);
			} else {
				memcpy(sbc->recbuf, data + pos, first);
				memcpy(sbc->recbuf + first, data,
				    hdr.size - first);
			}
			rc = sbc_perf_record(sbc, r, sbc->recbuf, hdr.size);
			tail += hdr.size;
		}
		__atomic_store_n(&mp->data_tail, tail, __ATOMIC_RELEASE);
		if (rc < 0)
			return (rc);
	}
	return (0);
}

/*
 * The kernel writes a ring's PERF_RECORD_LOST before the next record that
 * fits, so what a full ring lost at the very end is never written.  Each
 * event counts what it lost (read() with PERF_FORMAT_LOST; the events of
 * a CPU share its ring): at the last read, report what the records did
 * not.
 */
static int
sbc_perf_unreported(struct hwtr_sbc *sbc)
{
	uint64_t v[2], total;
	struct sbc_ent *e;
	size_t i, k;

	if (sbc->no_lost_count)
		return (0);
	for (i = 0; i < sbc->nrings; i++) {
		total = 0;
		for (k = 0; k < sbc->nfds; k++)
			if (sbc->fd_ring[k] == i &&
			    read(sbc->fds[k], v, sizeof(v)) == sizeof(v))
				total += v[1];
		if (total <= sbc->rings[i].lost_seen)
			continue;
		e = q_add(sbc, HWTR_SB_LOST, now_ns(), sbc->opts.pid,
		    sbc->opts.pid, NULL);
		if (e == NULL)
			return (-HWTR_E_NOMEM);
		e->rec.u.lost.stream = UINT32_MAX;
		e->rec.u.lost.reason = HWTR_LOST_SIDEBAND;
		e->rec.u.lost.records = total - sbc->rings[i].lost_seen;
		sbc->st.lost += e->rec.u.lost.records;
		hwtr_logf(sbc->log, HWTR_LOG_WARN, "sideband: the kernel dropped"
		    " %" PRIu64 " records at the end (ring full)",
		    e->rec.u.lost.records);
		sbc->rings[i].lost_seen = total;
	}
	return (0);
}

/* ------------------------------------------------------------------ */
/* The interface                                                       */
/* ------------------------------------------------------------------ */

/* The state of the first process (all of it when attaching). */
static int
sbc_initial(struct hwtr_sbc *sbc)
{
	char comm[64];
	int32_t *tids = NULL, pid = sbc->opts.pid;
	struct sbc_ent *e;
	uint64_t t = now_ns();
	size_t ntids, i;
	int rc, saved;

	if ((e = q_add(sbc, HWTR_SB_PROC_START, t, pid, pid, NULL)) == NULL)
		return (-HWTR_E_NOMEM);
	e->rec.u.proc_start.ppid = proc_ppid(pid);
	saved = sbc->opts.attach;
	sbc->opts.attach = 1;		/* list the threads in every case */
	rc = sbc_tids(sbc, &tids, &ntids);
	sbc->opts.attach = saved;
	if (rc < 0)
		return (rc);
	for (i = 0; i < ntids; i++) {
		if (tids[i] != pid) {
			e = q_add(sbc, HWTR_SB_THREAD_START, t, pid, tids[i],
			    NULL);
			if (e == NULL)
				goto nomem;
			e->rec.u.thread_start.ptid = -1;
		}
		if (proc_comm(pid, tids[i], comm, sizeof(comm)) == 0 &&
		    q_add(sbc, HWTR_SB_COMM, t, pid, tids[i], comm) == NULL)
			goto nomem;
	}
	free(tids);
	/*
	 * Mappings: all of them when attaching.  A launched command has not
	 * exec'd yet (its mappings are ours and about to go), so only /proc
	 * mode remembers them, to compare after the exec.
	 */
	if (sbc->opts.attach)
		return (proc_rescan(sbc, pid, t, RESCAN_ALL));
	if (!sbc->use_perf)
		return (proc_rescan(sbc, pid, t, RESCAN_SILENT));
	return (0);
nomem:
	free(tids);
	return (-HWTR_E_NOMEM);
}

int
hwtr_sbc_open(struct hwtr_sbc **sbcp, const struct hwtr_sbc_opts *opts,
    char *errbuf, size_t errlen)
{
	struct hwtr_sbc *sbc;
	const char *env;
	char path[64];
	int rc;

	*sbcp = NULL;
	if (opts == NULL || opts->pid <= 0) {
		if (errbuf != NULL)
			snprintf(errbuf, errlen, "sideband: no process given");
		return (-HWTR_E_INVAL);
	}
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)opts->pid);
	if (access(path, R_OK) != 0) {
		if (errbuf != NULL)
			snprintf(errbuf, errlen, "sideband: cannot read '%s': "
			    "%s", path, strerror(errno));
		return (errno == ENOENT || errno == ESRCH ? -HWTR_E_NOENT :
		    -HWTR_E_IO);
	}
	if ((sbc = calloc(1, sizeof(*sbc))) == NULL)
		return (-HWTR_E_NOMEM);
	sbc->opts = *opts;
	sbc->log = opts->log;
	/*
	 * HWTRACE_SIDEBAND=proc forces the fallback from outside (tests of
	 * the whole capture, systems whose perf events misbehave).
	 */
	env = getenv("HWTRACE_SIDEBAND");
	if (env != NULL && strcmp(env, "proc") == 0)
		sbc->opts.force_proc = 1;
	/* As on a kernel before 5.12 (tests of the build-id fallback). */
	if (env != NULL && strcmp(env, "perf-no-build-id") == 0)
		sbc->no_build_id = 1;
	if (!sbc->opts.force_proc) {
		rc = sbc_perf_open(sbc);
		if (rc == 0) {
			sbc->use_perf = 1;
		} else if (rc == -HWTR_E_NOMEM || rc == -HWTR_E_INVAL) {
			if (errbuf != NULL)
				snprintf(errbuf, errlen, "%s", sbc->errmsg[0] ?
				    sbc->errmsg : hwtr_errstr(rc));
			sbc_perf_close(sbc);
			free(sbc);
			return (rc);
		} else {
			/* Refused or unsupported: say why, use /proc. */
			hwtr_logf(sbc->log, HWTR_LOG_INFO, "%s; sideband from "
			    "/proc instead", sbc->errmsg);
			sbc_perf_close(sbc);
		}
	}
	sbc->st.nrings = (uint32_t)sbc->nrings;
	if ((rc = sbc_initial(sbc)) < 0) {
		if (errbuf != NULL)
			snprintf(errbuf, errlen, "sideband: %s", hwtr_errstr(rc));
		hwtr_sbc_close(sbc);
		return (rc);
	}
	*sbcp = sbc;
	return (0);
}

const char *
hwtr_sbc_origin(const struct hwtr_sbc *sbc)
{
	return (sbc->use_perf ? "perf_event" : "proc");
}

const char *
hwtr_sbc_errmsg(const struct hwtr_sbc *sbc)
{
	return (sbc->errmsg);
}

int
hwtr_sbc_note_fork(struct hwtr_sbc *sbc, int32_t pid, int32_t ppid,
    uint64_t time)
{
	struct sbc_proc *parent, *child;
	struct sbc_ent *e;
	size_t i;

	if (sbc->use_perf)
		return (0);
	if (time == 0)
		time = now_ns();
	if ((e = q_add(sbc, HWTR_SB_PROC_START, time, pid, pid, NULL)) == NULL)
		return (-HWTR_E_NOMEM);
	e->rec.u.proc_start.ppid = ppid;
	/* The child starts with its parent's mappings: remember them. */
	if ((child = proc_find(sbc, pid, 1)) == NULL)
		return (-HWTR_E_NOMEM);
	if ((parent = proc_find(sbc, ppid, 0)) == NULL || parent->nmaps == 0)
		return (0);
	maps_free(child->maps, child->nmaps);
	child->nmaps = 0;
	if ((child->maps = calloc(parent->nmaps, sizeof(*child->maps))) == NULL)
		return (-HWTR_E_NOMEM);
	for (i = 0; i < parent->nmaps; i++) {
		child->maps[i] = parent->maps[i];
		if ((child->maps[i].path = strdup(parent->maps[i].path)) ==
		    NULL)
			return (-HWTR_E_NOMEM);
		child->nmaps++;
	}
	return (0);
}

int
hwtr_sbc_note_clone(struct hwtr_sbc *sbc, int32_t pid, int32_t tid,
    int32_t ptid, uint64_t time)
{
	struct sbc_ent *e;

	if (sbc->use_perf)
		return (0);
	if ((e = q_add(sbc, HWTR_SB_THREAD_START, time ? time : now_ns(), pid,
	    tid, NULL)) == NULL)
		return (-HWTR_E_NOMEM);
	e->rec.u.thread_start.ptid = ptid;
	return (0);
}

int
hwtr_sbc_note_exec(struct hwtr_sbc *sbc, int32_t pid, uint64_t time)
{
	char comm[64], path[64], exe[4096];
	struct sbc_ent *e;
	ssize_t n;
	int rc;

	if (time == 0)
		time = now_ns();
	if (sbc->use_perf) {
		/*
		 * The kernel reports [vdso] with the file mappings of the new
		 * image (Linux 6.x does); should it not, read it from /proc
		 * while the process sits at its exec stop.
		 */
		if ((rc = sbc_perf_drain(sbc)) < 0)
			return (rc);
		if (sbc->vdso_seen_perf)
			return (0);
		proc_forget(sbc, pid);
		return (proc_rescan(sbc, pid, time, RESCAN_VDSO));
	}
	if (proc_comm(pid, pid, comm, sizeof(comm)) != 0)
		snprintf(comm, sizeof(comm), "?");
	if ((e = q_add(sbc, HWTR_SB_COMM, time, pid, pid, comm)) == NULL)
		return (-HWTR_E_NOMEM);
	e->rec.u.comm.exec = 1;
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	if (q_add(sbc, HWTR_SB_EXEC, time, pid, pid, n > 0 ? exe : NULL) ==
	    NULL)
		return (-HWTR_E_NOMEM);
	proc_forget(sbc, pid);
	return (proc_rescan(sbc, pid, time, RESCAN_ALL));
}

int
hwtr_sbc_note_mmap(struct hwtr_sbc *sbc, int32_t pid, uint64_t time)
{
	if (sbc->use_perf)
		return (0);
	return (proc_rescan(sbc, pid, time ? time : now_ns(), RESCAN_ALL));
}

int
hwtr_sbc_note_exit(struct hwtr_sbc *sbc, int32_t pid, int32_t tid,
    enum hwtr_exit_kind kind, int value, uint64_t time)
{
	struct sbc_status *ns;
	struct sbc_ent *e;
	size_t i;

	if (!sbc->use_perf) {
		e = q_add(sbc, pid == tid ? HWTR_SB_PROC_EXIT :
		    HWTR_SB_THREAD_EXIT, time ? time : now_ns(), pid, tid, NULL);
		if (e == NULL)
			return (-HWTR_E_NOMEM);
		e->rec.u.exit.kind = kind;
		e->rec.u.exit.value = value;
		if (pid == tid)
			proc_forget(sbc, pid);
		return (0);
	}
	if (pid != tid)
		return (0);		/* perf reports threads' ends */
	/* The kernel's record gets the status: queued already, or later. */
	for (i = 0; i < sbc->nq; i++) {
		e = &sbc->q[i];
		if (e->need_status && e->rec.pid == pid) {
			e->rec.u.exit.kind = kind;
			e->rec.u.exit.value = value;
			e->need_status = 0;
			return (0);
		}
	}
	ns = realloc(sbc->status, (sbc->nstatus + 1) * sizeof(*ns));
	if (ns == NULL)
		return (-HWTR_E_NOMEM);
	sbc->status = ns;
	ns[sbc->nstatus].pid = pid;
	ns[sbc->nstatus].kind = kind;
	ns[sbc->nstatus].value = value;
	sbc->nstatus++;
	return (0);
}

int
hwtr_sbc_read(struct hwtr_sbc *sbc, int flush, hwtr_sbc_fn fn, void *arg)
{
	char path[64], exe[4096];
	uint64_t now = now_ns(), limit;
	size_t i, n = 0, k;
	struct sbc_ent *e;
	ssize_t len;
	int rc = 0;

	if (sbc->use_perf && (rc = sbc_perf_drain(sbc)) < 0)
		return (rc);
	if (sbc->use_perf && flush && (rc = sbc_perf_unreported(sbc)) < 0)
		return (rc);
	if (sbc->nq == 0)
		return (0);
	qsort(sbc->q, sbc->nq, sizeof(*sbc->q), ent_cmp);
	limit = flush ? UINT64_MAX : (sbc->use_perf && now > SBC_REORDER_NS ?
	    now - SBC_REORDER_NS : now);
	for (i = 0; i < sbc->nq; i++) {
		e = &sbc->q[i];
		if (e->rec.time > limit)
			break;
		/* An exit waits (and what follows) for its status, a while. */
		if (e->need_status && !flush &&
		    e->rec.time + SBC_EXIT_WAIT_NS > now)
			break;
		if (e->need_exec_path) {
			/* Its MMAP never came: ask /proc, if it is still there. */
			snprintf(path, sizeof(path), "/proc/%d/exe",
			    (int)e->rec.pid);
			len = readlink(path, exe, sizeof(exe) - 1);
			if (len > 0) {
				exe[len] = '\0';
				e->str = strdup(exe);
			}
			e->need_exec_path = 0;
		}
		switch (e->rec.type) {
		case HWTR_SB_EXEC:
			e->rec.u.exec.path = e->str;
			break;
		case HWTR_SB_COMM:
			e->rec.u.comm.comm = e->str;
			break;
		case HWTR_SB_MMAP:
			e->rec.u.mmap.path = e->str;
			e->rec.u.mmap.image = NULL;
			break;
		default:
			break;
		}
		rc = fn(arg, &e->rec);
		free(e->str);
		e->str = NULL;
		n++;
		sbc->st.records++;
		if (rc < 0) {
			i++;
			break;
		}
	}
	/* Keep the rest for the next call. */
	for (k = 0; k < i; k++)
		free(sbc->q[k].str);
	memmove(sbc->q, sbc->q + i, (sbc->nq - i) * sizeof(*sbc->q));
	sbc->nq -= i;
	return (rc < 0 ? rc : (int)n);
}

void
hwtr_sbc_stats(const struct hwtr_sbc *sbc, struct hwtr_sbc_stats *st)
{
	*st = sbc->st;
}

void
hwtr_sbc_close(struct hwtr_sbc *sbc)
{
	size_t i;

	if (sbc == NULL)
		return;
	sbc_perf_close(sbc);
	for (i = 0; i < sbc->nq; i++)
		free(sbc->q[i].str);
	free(sbc->q);
	for (i = 0; i < sbc->nprocs; i++)
		maps_free(sbc->procs[i].maps, sbc->procs[i].nmaps);
	free(sbc->procs);
	free(sbc->status);
	free(sbc);
}
