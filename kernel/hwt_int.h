/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Private to kernel/: what the pieces of the hwt source share.
 *   hwt.c      the source's ops: options, the context (ALLOC, devices,
 *              SET_CONFIG, START), the records, the buffers read;
 *   hwt_rec.c  the recording: a perf.data file in pipe format that the
 *              perf.data importer turns into the archive (so that the
 *              archive of a hwt capture has the streams, loss and
 *              sideband the perf source's has);
 *   hwt_trig.c --trigger: a debug register breakpoint through ptrace(2);
 *   hwt_sys.c  the system calls' table: FreeBSD's, or one that fails.
 * The table is all the source knows of the kernel: the tests hand it a
 * simulated hwt(4) (tests/kernel/fakehwt.c) through hwtr_hwt_init_sys().
 */

#ifndef HWTR_HWT_INT_H
#define HWTR_HWT_INT_H

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "hwt_abi.h"
#include "sources.h"

/*
 * The system calls the source makes, each returning what the real call
 * returns (-1 and errno on failure; @mmap MAP_FAILED).  @mmap maps @len
 * bytes of @fd at offset 0, shared, with @prot; @kwait waits at most @ms
 * milliseconds for an event on the kqueue @kq (kevent(2)): 1 when one
 * came, 0 on timeout.  @sysctl reads the value of @name into @old
 * (sysctlbyname(3) without a new value): the ETMs' ID registers.
 * @ptrace is ptrace(2) (the --trigger breakpoint, hwt_trig.c) and
 * @waitpid waitpid(2) on the traced command, stops included.
 */
struct hwtr_hwt_sys {
	void	*arg;
	int	(*open)(void *arg, const char *path, int flags);
	int	(*ioctl)(void *arg, int fd, unsigned long req, void *data);
	void	*(*mmap)(void *arg, size_t len, int prot, int fd);
	int	(*munmap)(void *arg, void *addr, size_t len);
	int	(*close)(void *arg, int fd);
	int	(*kqueue)(void *arg);
	int	(*kwait)(void *arg, int kq, int ms);
	int	(*sysctl)(void *arg, const char *name, void *old,
		    size_t *oldlen);
	int	(*ptrace)(void *arg, int req, pid_t pid, void *addr,
		    int data);
	pid_t	(*waitpid)(void *arg, pid_t pid, int *status, int options);
};

/*
 * FreeBSD's calls on FreeBSD; elsewhere calls that fail with ENOSYS.
 * @native is set to 1 when the table is the real one.
 */
const struct hwtr_hwt_sys *hwtr_hwt_sys_default(int *native);

/*
 * The source with the system calls of @sys (borrowed: must outlive the
 * source): what the ops' init does with hwtr_hwt_sys_default().  Tests
 * call it instead of ops->init to run the source against a simulated
 * kernel.
 */
int hwtr_hwt_init_sys(struct hwtr_src *src, const struct hwtr_hwt_sys *sys);

#define HWT_MAX_BUFS	256
#define HWT_MAX_CPUS	1024

/* One trace buffer: a thread's (thread mode) or a CPU's device. */
struct hwt_buf {
	int		id;		/* thread index or CPU */
	int		fd;
	const uint8_t	*base;		/* mapped read-only */
	uint64_t	last;		/* stream position consumed */
	int32_t		tid;		/* the archive's tid, -1 per CPU */
	int		cpu;		/* -1 per thread */
	int		gone;		/* the device went away */
	uint64_t	lost;
	uint64_t	cs_raw;		/* CoreSight: the last ring offset */
	uint64_t	cs_laps;	/* and the laps counted from it */
};

/* CoreSight: one ETM, its ID registers as sysctl dev.coresight_etm4x. */
#define HWT_ETM_NIDR	14
/*
 * TRCCONFIGR as hwt(8) configures the ETM (usr.sbin/hwt/hwt_coresight.c:
 * RS, TS, CID, VMID; no cycle counts, branch broadcast or conditional
 * trace), which the recording states for the decoder.  ETMv4's bits:
 * RS 12, TS 11, VMID 7, CID 6.
 */
#define HWT_CS_TRCCONFIGR	((1u << 12) | (1u << 11) | (1u << 7) | \
	(1u << 6))
struct hwt_etm {
	int		cpu;
	uint8_t		trace_id;
	uint32_t	idr[HWT_ETM_NIDR];	/* TRCIDR0 to TRCIDR13 */
};

struct hwt_path {
	char		*path;
	int32_t		pid;
	int		kernel;
};

struct hwt_src {
	struct hwtr_src	*src;
	const struct hwtr_hwt_sys *sys;
	int		native;
	/* Options. */
	int		cpu_mode;
	int		coresight;
	const char	*backend;	/* "pt", "coresight" */
	uint64_t	bufsize;
	uint8_t		cpus[HWT_MAX_CPUS];	/* CPU mode: 1 traced */
	int		ncpus;
	char		filter[256];	/* FUNC or START-END */
	uint64_t	range[2 * HWTR_HWT_PT_RANGES];
	int		nranges;
	int		filter_wait;	/* still looking for @filter */
	uint64_t	rtit_ctl;
	/* The context. */
	int		ctl_fd;		/* /dev/hwt */
	int		kq;
	int		ident;
	int		started;
	struct hwt_buf	bufs[HWT_MAX_BUFS];
	int		nbufs;
	pid_t		child;
	int		reaped;
	int		go_fd;
	int		ef_fd;		/* the child's exec errno, if any */
	/* The recording. */
	char		rec_path[PATH_MAX];
	FILE		*rec;
	int		rec_err;
	struct hwt_path	*paths;
	size_t		npaths, pathcap;
	uint64_t	bytes, lost;
	int		finished;
	int		snap_seen;	/* SIGUSR2 count at the last snapshot */
	/* CoreSight. */
	struct hwt_etm	*etm;
	int		netm;
	/* --trigger (hwt_trig.c). */
	int		trig;		/* a trigger is set */
	int		trig_state;	/* HWT_TRIG_* */
	pid_t		trig_pid;	/* the traced process */
	uint64_t	trig_addr;	/* its runtime address, 0 unknown */
	uint64_t	exec_base;	/* the EXECUTABLE record's address */
	int		have_exec;
	int		trig_hits;
	int		trig_ended;	/* it ended while waited for */
	int		trig_status;	/* its wait status then */
};

/* Where the --trigger breakpoint is (hwt_src.trig_state). */
#define HWT_TRIG_NONE		0	/* not traced */
#define HWT_TRIG_EXEC		1	/* traced, waiting for the exec stop */
#define HWT_TRIG_ARMED		2	/* the breakpoint is set */
#define HWT_TRIG_DONE		3	/* detached, or the process ended */

/* hwt_rec.c: the recording. */
int hwt_rec_open(struct hwt_src *hs);
void hwt_rec_start(struct hwt_src *hs);
void hwt_rec_comm(struct hwt_src *hs, int32_t pid, int32_t tid,
    const char *comm, int exec);
void hwt_rec_mmap(struct hwt_src *hs, int32_t pid, uint64_t addr,
    uint64_t len, uint64_t pgoff, const char *path, int kernel);
void hwt_rec_image(struct hwt_src *hs, int32_t pid, uint64_t base,
    const char *path, int kernel);
void hwt_rec_fork(struct hwt_src *hs, int32_t pid, int32_t tid,
    int32_t ptid, int exit);
void hwt_rec_data(struct hwt_src *hs, const struct hwt_buf *b,
    const uint8_t *p, size_t len, uint64_t offset);
void hwt_rec_aux(struct hwt_src *hs, const struct hwt_buf *b,
    uint64_t offset, uint64_t size, uint64_t flags);
int hwt_rec_finish(struct hwt_src *hs);
void hwt_rec_close(struct hwt_src *hs);

/*
 * hwt_trig.c: --trigger.  hwt_trig_stopped() says what a stop needs of
 * the caller: at the exec (HWT_TRIG_AT_EXEC) the records read, then
 * hwt_trig_exec(); at a hit (HWT_TRIG_AT_HIT) the snapshot, then
 * hwt_trig_step().  When the process ended while waited for, trig_ended
 * is set and trig_status holds its wait status.
 */
#define HWT_TRIG_AT_EXEC	1
#define HWT_TRIG_AT_HIT		2
int hwt_trig_check(struct hwt_src *hs);
int hwt_trig_attach(struct hwt_src *hs);
int hwt_trig_stopped(struct hwt_src *hs, int sig);
int hwt_trig_exec(struct hwt_src *hs);
int hwt_trig_step(struct hwt_src *hs);
void hwt_trig_detach(struct hwt_src *hs);

/* hwt.c: the message of a failure, into the source's errmsg. */
void hwt_err(struct hwt_src *hs, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif /* !HWTR_HWT_INT_H */
