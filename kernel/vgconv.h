/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * vgconv.h (private to kernel/): turns the event files of the hwtrace
 * Valgrind tool (hwtr_vgevents.h) into per-thread PT encoder calls.
 *
 * How to use this:
 *   1) vgconv_new() with callbacks for threads, processes and ground truth;
 *   2) for every event file (one per process image), vgconv_file_new(),
 *      then vgconv_feed() with its bytes as they arrive: it consumes whole
 *      records and returns how many bytes it used (keep the rest and feed
 *      it again with what follows);
 *   3) vgconv_file_end() when the file is complete (or will not grow
 *      again); vgconv_finish() when the capture ends (threads still open
 *      are closed), vgconv_free() (which reports nothing more).
 * Not thread-safe.
 */

#ifndef HWTR_VGCONV_H
#define HWTR_VGCONV_H

#include <stddef.h>
#include <stdint.h>

#include "hwtrace.h"
#include "hwtr_kernel.h"

struct vgconv;
struct vgconv_file;

struct vgconv_cb {
	void	*arg;
	/*
	 * A thread appeared: set *encpp to where the PT encoder to feed is
	 * kept (read before every use: it may become NULL when the owner
	 * stops the thread's trace; *encpp NULL: not traced) and *tokp to
	 * anything the caller wants back.
	 */
	int	(*thread_start)(void *arg, int32_t pid, int32_t tid,
		    int32_t ptid, uint64_t time, struct hwtr_ptenc ***encpp,
		    void **tokp);
	/* The thread ended; @ninsn instructions were traced. */
	int	(*thread_exit)(void *arg, void *tok, uint64_t ninsn,
		    uint64_t time);
	/* A process image started (@exec: replaced by exec), or ended. */
	int	(*proc_start)(void *arg, int32_t pid, int32_t ppid, int exec,
		    const char *path, uint64_t time);
	int	(*proc_exit)(void *arg, int32_t pid, int exitcode,
		    uint64_t time);
	/* An executable mapping appeared, went (NULL: ignored). */
	int	(*mmap)(void *arg, int32_t pid, uint64_t addr, uint64_t len,
		    uint64_t pgoff, uint32_t prot, const char *path,
		    uint64_t time);
	int	(*munmap)(void *arg, int32_t pid, uint64_t addr, uint64_t len,
		    uint64_t time);
	/* Ground truth from the tool (NULL: ignored). */
	int	(*groundtruth)(void *arg, void *tok, const uint64_t *ip,
		    size_t n);
	/* The bytes of every instruction described (NULL: none; for tests). */
	int	(*code)(void *arg, int32_t pid, uint64_t addr,
		    const uint8_t *bytes, size_t len);
	/* A thread reached the trigger address (vgconv_set_trigger). */
	int	(*trigger)(void *arg, void *tok);
	/* Every instruction the converter walks (NULL: none; for tests). */
	int	(*walked)(void *arg, void *tok, const uint64_t *ip, size_t n);
	/*
	 * Stop-on-full (NULL: none), asked once per traced thread: the bytes
	 * its encoder may write (0: no limit) and a flag its owner may set
	 * to stop it.  The converter then ends the thread's trace at the
	 * next superblock start it checks (every 16th) with TIP.PGD, sets
	 * the flag, feeds the encoder no more, and reports only the
	 * instructions (and ground truth) traced until then.
	 */
	void	(*stop_limit)(void *arg, void *tok, uint64_t *limitp,
		    int **fullp);
	/*
	 * Code outside every file mapping of @pid (NULL: not wanted): from
	 * @time, the last record's, its bytes at [@addr, @addr + @len), one
	 * call per run of adjacent instructions of each superblock
	 * translated (a retranslation reports its bytes again).  1: a new
	 * version, whose time the converter then puts in the trace (a PSB
	 * in every thread of the process) before it runs; 0: not new.
	 */
	int	(*anon)(void *arg, int32_t pid, uint64_t addr,
		    const uint8_t *bytes, uint32_t len, uint64_t time);
};

int	vgconv_new(struct vgconv **cvp, const struct vgconv_cb *cb,
	    const struct hwtr_log *log);
void	vgconv_free(struct vgconv *cv);
/* Why the last call failed. */
const char *vgconv_errmsg(const struct vgconv *cv);

int	vgconv_file_new(struct vgconv *cv, const char *name,
	    struct vgconv_file **fp);
/* Consume whole records of @buf; returns bytes used (>= 0) or -HWTR_E_*. */
long	vgconv_feed(struct vgconv_file *f, const uint8_t *buf, size_t len);
/*
 * 1 when the file belongs to a fork child whose parent's file has not yet
 * reached the fork: feed the parent first, then this one again.
 */
int	vgconv_file_waiting(const struct vgconv_file *f);
/* 1 when the file's END record was read. */
int	vgconv_file_complete(const struct vgconv_file *f);
/* The process the file belongs to (0 before its header was read). */
int32_t	vgconv_file_pid(const struct vgconv_file *f);
/* No more bytes will come; @leftover bytes were never consumed. */
int	vgconv_file_end(struct vgconv_file *f, size_t leftover);

/* Forget a file without reporting anything (error paths). */
void	vgconv_file_abandon(struct vgconv_file *f);

/* Report threads of process @pid reaching @ip (0: none) to cb.trigger. */
void	vgconv_set_trigger(struct vgconv *cv, int32_t pid, uint64_t ip);

/* Close every thread still open. */
int	vgconv_finish(struct vgconv *cv, uint64_t time);

struct vgconv_stats {
	uint64_t	instructions;
	uint64_t	blocks;
	uint64_t	defs;
	uint64_t	desyncs;	/* places the converter lost a thread */
	uint64_t	event_bytes;
};
void	vgconv_stats(const struct vgconv *cv, struct vgconv_stats *st);

#endif /* !HWTR_VGCONV_H */
