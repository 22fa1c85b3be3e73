/*-
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Copyright (c) 2026 The hwtrace authors
 *
 * This program is free software; you can redistribute it and/or modify it
 * under the terms of the GNU General Public License as published by the
 * Free Software Foundation; either version 2 of the License, or (at your
 * option) any later version.  It links Valgrind's core (GPL-2.0); see
 * LICENSE in this directory.
 */

/*
 * hw_main.c: the "hwtrace" Valgrind tool.  It records the exact user-space
 * control flow of the program Valgrind runs, as compact events that hwtrace
 * (a separate program) turns into Intel PT streams.  The tool and hwtrace
 * talk only through the event files this tool writes (format in
 * hw_events.h); nothing of this GPL program is linked into hwtrace.
 *
 * How it records.  At translation time every superblock is described once
 * (a DEF record: its guest instructions with their bytes, its side exits
 * and its final exit).  At run time a superblock writes at most one inline
 * record, and only when its exit is not known statically:
 *   - a side exit k taken: one byte k (< HWVG_MAX_EXITS, 0x70);
 *   - the final exit of a block that has side exits: one byte N (the
 *     number of side exits);
 *   - a final exit to a computed target (indirect jump/call, return):
 *     eight bytes, (target << 8) | 0x80 | N;
 *   - a fault after a side exit j, before the next exit: one byte
 *     HWVG_INLINE_FAULT + j (the SIGNAL record after it says where).
 * A block without side exits and with a constant next writes nothing.
 * Inline records are written by plain IR stores into one buffer, with no
 * helper call and one cursor update per block: a block with side exits
 * reserves its byte at the first one (cursor + 1) and stores there, at
 * each point where the block can be left, what leaving there means (see
 * hw_instrument()); a block without, only the 8-byte word of a computed
 * final exit.  Nothing else may write into the buffer while a block runs
 * (hence ground truth is collected in helpers but written by the
 * scheduler hook).
 *
 * Everything else is a tagged record (first byte >= 0xf0) written by C
 * helpers at scheduler points: RESUME (a thread starts running client code
 * at an IP), SIGNAL (a signal is delivered while the thread was at an IP),
 * thread exit, final state, ground truth.  Valgrind runs one thread at a
 * time and switches only in the scheduler, where RESUME is written, so the
 * inline records that follow a RESUME belong to that thread.
 *
 * Why no buffer check per block: the scheduler runs at most
 * SCHEDULING_QUANTUM (100000) blocks between two start_client_code events
 * and each writes at most 8 bytes, so checking for 1 MiB of room at every
 * start_client_code is enough.
 *
 * Where the buffer goes (hw_flush()): into a ring in the event file,
 * shared with hwtrace (hwtr_vgevents.h), which maps the file; a copy
 * into pages that stay mapped on both sides.  write()ing the 358 MB of
 * events of gzip of 8 MiB cost 0.2 s of system time (tmpfs pages
 * allocated, filled and given back by hwtrace's hole punching).  Where the
 * ring's pages cannot be had (a full disk, a file system without
 * fallocate) or --ring=no, the file is a plain stream of the same bytes.
 *
 * Globals: a Valgrind tool is one program per process with one thread
 * running at a time; its state lives in the file-scope struct hw below.
 */

#include "pub_tool_basics.h"
#include "pub_tool_aspacemgr.h"
#include "pub_tool_clientstate.h"
#include "pub_tool_tooliface.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_machine.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_options.h"
#include "pub_tool_threadstate.h"
#include "pub_tool_transtab.h"
#include "pub_tool_vki.h"
#include "pub_tool_vkiscnums.h"
#include "libvex_guest_amd64.h"

#include "hwtr_vgevents.h"

/* VEX's control, read at each translation (hw_unchased()). */
extern VexControl vex_control;
/* Not in pub_tool_transtab.h (pub_core_transtab.h): hw_stop_client_code(). */
extern void VG_(discard_translations)(Addr start, ULong range,
    const HChar *who);
/* Not in the pub_tool headers: moves an fd above the client's range. */
extern Int VG_(safe_fd)(Int oldfd);
/* Not in the pub_tool headers either (pub_core_aspacemgr.h, _syscall.h). */
extern SysRes VG_(am_shared_mmap_file_float_valgrind)(SizeT length,
    UInt prot, Int fd, Off64T offset);
extern SysRes VG_(do_syscall)(UWord sysno, RegWord a1, RegWord a2,
    RegWord a3, RegWord a4, RegWord a5, RegWord a6, RegWord a7, RegWord a8);

#define HW_BUF_SIZE	(8u << 20)
#define HW_BUF_ROOM	(2u << 20)	/* > 100000 blocks * 8 bytes */
/*
 * The buffer is handed over at the first scheduler point past this many
 * bytes (and a quantum writes HW_BUF_ROOM at most after it): the
 * translated code's stores then stay in a few hundred KiB that the
 * caches hold.  Handed over past 6 MiB (HW_BUF_SIZE - HW_BUF_ROOM), the
 * capture of gzip -6 of 8 MiB took 2.50-2.64 CPU-s, its Valgrind thread
 * 1.60 s; past 256 KiB 2.35-2.40 and 1.38 s, the same records; 64 KiB
 * to 1 MiB alike (docs/PERFORMANCE.md, Capture).
 */
#define HW_FLUSH_AT	(256u << 10)
_Static_assert(HW_FLUSH_AT + HW_BUF_ROOM <= HW_BUF_SIZE, "HW_FLUSH_AT");
#define HW_MAX_THREADS	4096
#define HW_GT_MAX	(64u << 10)	/* ground-truth entries per flush */
#define HW_RING_SIZE	(8u << 20)	/* power of two, >= the largest record */
#define HW_CHASE_AFTER	5000000ull	/* superblocks run before chasing */

struct hw_thread {
	Int	ostid;		/* kernel thread id; 0 before it first ran */
	Addr	gt_pending;	/* instruction started, not yet completed */
	Addr	*gt;		/* completed instructions not yet written */
	UInt	ngt;
	UInt	gtcap;		/* entries allocated at gt */
};

static struct {
	UChar	*cur;		/* inline records are stored here by IR */
	UChar	*buf;
	UChar	*lim;		/* flush when cur passes this */
	Int	fd;
	Int	pid;
	Int	status;		/* the last exit/exit_group's status */
	Bool	status_known;
	ThreadId running;	/* thread of the last RESUME */
	const HChar *dir;	/* --out-dir */
	Bool	gt;		/* --ground-truth=yes */
	Bool	noring;		/* --ring=no */
	Bool	forked;		/* this process is a fork child */
	UChar	*rbase;		/* the ring file mapped; NULL: a stream */
	volatile ULong *rhead;	/* in it: bytes written, ours */
	volatile ULong *rtail;	/* bytes taken, hwtrace's */
	ULong	rh;		/* our copy of *rhead */
	ULong	nblocks_def;
	ULong	last_flush;	/* time of the last flush; 0: never */
	ULong	fork_time;	/* time of the last fork, taken before it */
	ULong	bytes;
	ULong	nchase;		/* translations with a chase recorded */
	ULong	nredo;		/* superblocks translated again unchased */
	ULong	chase_after;	/* --chase-after=N superblocks run */
	Bool	chasing;	/* VEX chases (hw_stop_client_code()) */
	Bool	stats;		/* --hw-stats=yes */
	Bool	unchased;	/* the next translation is made unchased */
	struct hw_thread th[HW_MAX_THREADS];
} hw = { .fd = -1, .chase_after = HW_CHASE_AFTER };

/*
 * Time stamps are CLOCK_MONOTONIC in ns, hwtrace's time for software
 * sources (hwtr_src_now()); they are taken at scheduler points only.
 */
static ULong
hw_tsc(void)
{
	struct vki_timespec ts;

	VG_(clock_gettime)(&ts, VKI_CLOCK_MONOTONIC);
	return ((ULong)ts.tv_sec * 1000000000ULL + (ULong)ts.tv_nsec);
}

static void
hw_die(const HChar *what)
{
	VG_(umsg)("hwtrace tool: %s\n", what);
	VG_(exit)(HWVG_EXIT_TOOL_ERROR);
}

/*
 * hwtrace gives back the disk space of what it converted (it punches the
 * file), so a full disk means that it lags behind: wait for it, up to a
 * minute without progress.  VG_(write) returns -errno.
 */
/*
 * VG_(memcpy) copies byte by byte where source and destination are not
 * aligned alike, as they mostly are not here (0.07 s of the 358 MB of
 * gzip of 8 MiB); the CPU's string copy does not care.
 */
static void
hw_copy(UChar *d, const UChar *s, ULong n)
{
	__asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : :
	    "memory");
}

/*
 * The ring: copy what fits, publish it (the bytes before the head), wait
 * for hwtrace to take more, up to a minute without progress.
 */
static void
hw_ring_put(const UChar *p, ULong n)
{
	UChar *data = hw.rbase + HWVG_RING_HDR;
	ULong tail, room, k;
	Int waited = 0;

	while (n > 0) {
		tail = __atomic_load_n(hw.rtail, __ATOMIC_ACQUIRE);
		room = HW_RING_SIZE - (hw.rh - tail);
		if (room == 0) {
			/*
			 * 100 us at a time: hwtrace gives room back every
			 * 256 KiB it converts (well under a millisecond), and
			 * every wait here is a wait of the program.
			 */
			struct vki_timespec ts = { 0, 100000 };

			if (++waited > 600000)
				hw_die("hwtrace took no events for a minute");
			(void)VG_(do_syscall)(__NR_nanosleep, (RegWord)&ts, 0,
			    0, 0, 0, 0, 0, 0);
			continue;
		}
		waited = 0;
		k = HW_RING_SIZE - (hw.rh & (HW_RING_SIZE - 1));
		if (k > room)
			k = room;
		if (k > n)
			k = n;
		hw_copy(data + (hw.rh & (HW_RING_SIZE - 1)), p, k);
		hw.rh += k;
		p += k;
		n -= k;
		__atomic_store_n(hw.rhead, hw.rh, __ATOMIC_RELEASE);
	}
}

static void
hw_flush(void)
{
	UChar *p = hw.buf;
	Int n, waited = 0;

	if (hw.rbase != NULL) {
		hw_ring_put(hw.buf, (ULong)(hw.cur - hw.buf));
		p = hw.cur;
	}
	while (p < hw.cur) {
		n = VG_(write)(hw.fd, p, (Int)(hw.cur - p));
		if (n == -VKI_EINTR)
			continue;
		if ((n == -VKI_ENOSPC || n == 0) && waited < 6000) {
			(void)VG_(poll)(NULL, 0, 10);
			waited++;
			continue;
		}
		if (n <= 0)
			hw_die(n == -VKI_ENOSPC ?
			    "cannot write the event file: no space left on "
			    "the device for a minute" :
			    "cannot write the event file");
		p += n;
		waited = 0;
	}
	hw.bytes += (ULong)(hw.cur - hw.buf);
	hw.cur = hw.buf;
}

static void
hw_room(UInt n)
{
	if (hw.cur + n > hw.buf + HW_BUF_SIZE - 16 || hw.cur > hw.lim)
		hw_flush();
	if (n > HW_BUF_SIZE - 16)
		hw_die("record too large");
}

static void
hw_put8(UChar v)
{
	*hw.cur++ = v;
}

static void
hw_put16(UShort v)
{
	VG_(memcpy)(hw.cur, &v, 2);
	hw.cur += 2;
}

static void
hw_put32(UInt v)
{
	VG_(memcpy)(hw.cur, &v, 4);
	hw.cur += 4;
}

static void
hw_put64(ULong v)
{
	VG_(memcpy)(hw.cur, &v, 8);
	hw.cur += 8;
}

/* Tagged record header: tag, payload length (u32). */
static void
hw_tag(UChar tag, UInt len)
{
	hw_room(len + 5);
	hw_put8(tag);
	hw_put32(len);
}

static Int
hw_ostid(ThreadId tid)
{
	if (tid >= HW_MAX_THREADS)
		hw_die("too many threads");
	return (hw.th[tid].ostid);
}

/*
 * Ground truth: write a thread's completed instructions, in records of at
 * most HW_GT_MAX entries.  Only from C code outside the program's
 * superblocks: a superblock's inline record is reserved at its first side
 * exit and written until its end (hw_instrument()), so nothing may be
 * written into the buffer, nor the buffer flushed, while one runs.
 */
static void
hw_gt_flush(ThreadId tid)
{
	struct hw_thread *t = &hw.th[tid];
	UInt i, n, done;

	for (done = 0; done < t->ngt; done += n) {
		n = t->ngt - done;
		if (n > HW_GT_MAX)
			n = HW_GT_MAX;
		hw_tag(HWVG_REC_GT, 4 + 4 + 8 * n);
		hw_put32((UInt)t->ostid);
		hw_put32(n);
		for (i = 0; i < n; i++)
			hw_put64(t->gt[done + i]);
	}
	t->ngt = 0;
}

/*
 * Runs inside superblocks (from hw_gt_insn(), hw_gt_exit()): it only
 * collects, hw_start_client_code() writes.  Between two scheduler points
 * a thread runs at most 100000 superblocks, so the array stays bounded.
 */
static void
hw_gt_commit(struct hw_thread *t)
{
	if (t->gt_pending == 0)
		return;
	if (t->ngt == t->gtcap) {
		t->gtcap = t->gtcap ? t->gtcap * 2 : HW_GT_MAX;
		t->gt = VG_(realloc)("hwtrace.gt", t->gt,
		    t->gtcap * sizeof(Addr));
	}
	t->gt[t->ngt++] = t->gt_pending;
	t->gt_pending = 0;
}

/* Called (dirty) at the start of every guest instruction, ground-truth mode. */
static VG_REGPARM(1) void
hw_gt_insn(Addr addr)
{
	struct hw_thread *t = &hw.th[VG_(get_running_tid)()];

	/*
	 * The same instruction again right away: VEX unrolled the loop of a
	 * rep-prefixed instruction; it completes once, at its last pass.
	 */
	if (t->gt_pending == addr)
		return;
	hw_gt_commit(t);
	t->gt_pending = addr;
}

/*
 * Called (dirty, guarded) when an exit is taken, ground-truth mode.  An
 * exit back to the start of its own instruction (a rep-prefixed string
 * instruction going round once more, a synthesized fault) means that the
 * instruction has not completed: it is dropped, and counted once when it
 * finally completes.
 */
static VG_REGPARM(1) void
hw_gt_exit(Addr dst)
{
	struct hw_thread *t = &hw.th[VG_(get_running_tid)()];

	if (t->gt_pending == dst)
		t->gt_pending = 0;
	else
		hw_gt_commit(t);
}

/*
 * Make the event file a ring (hwtr_vgevents.h): its pages allocated now
 * (fallocate: a full disk is found here, not as a SIGBUS later), mapped,
 * the header written, the magic last: hwtrace waits for it.  Otherwise
 * the file stays empty and is written as a stream.
 */
static void
hw_ring_init(void)
{
	SizeT len = HWVG_RING_HDR + HW_RING_SIZE;
	SysRes sr;
	UChar *b;

	sr = VG_(do_syscall)(__NR_fallocate, (RegWord)hw.fd, 0, 0,
	    (RegWord)len, 0, 0, 0, 0);
	if (sr_isError(sr))
		return;
	sr = VG_(am_shared_mmap_file_float_valgrind)(len,
	    VKI_PROT_READ | VKI_PROT_WRITE, hw.fd, 0);
	if (sr_isError(sr)) {
		(void)VG_(do_syscall)(__NR_ftruncate, (RegWord)hw.fd, 0, 0, 0,
		    0, 0, 0, 0);
		return;
	}
	b = (UChar *)sr_Res(sr);
	*(ULong *)(b + HWVG_RING_SIZE_OFF) = HW_RING_SIZE;
	hw.rhead = (volatile ULong *)(b + HWVG_RING_HEAD_OFF);
	hw.rtail = (volatile ULong *)(b + HWVG_RING_TAIL_OFF);
	*hw.rhead = 0;
	*hw.rtail = 0;
	hw.rh = 0;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	VG_(memcpy)(b, HWVG_RING_MAGIC, 8);
	hw.rbase = b;
}

static void
hw_open(void)
{
	HChar path[4096];
	SysRes sr;
	Int seq, fd;

	hw.pid = VG_(getpid)();
	for (seq = 0; seq < 1000; seq++) {
		VG_(snprintf)(path, sizeof(path), "%s/vg.%d.%d.evt", hw.dir,
		    hw.pid, seq);
		sr = VG_(open)(path, VKI_O_CREAT | VKI_O_EXCL | VKI_O_RDWR,
		    0600);
		if (!sr_isError(sr))
			break;
		if (sr_Err(sr) != VKI_EEXIST) {
			VG_(umsg)("hwtrace tool: cannot create '%s'\n", path);
			VG_(exit)(HWVG_EXIT_TOOL_ERROR);
		}
	}
	if (seq == 1000)
		hw_die("too many event files for one pid");
	fd = VG_(safe_fd)((Int)sr_Res(sr));
	if (fd < 0)
		hw_die("cannot move the event file descriptor");
	hw.fd = fd;
	hw.cur = hw.buf;
	if (!hw.noring)
		hw_ring_init();

	/* File header: magic, then a HDR record. */
	hw_room(64 + 4096);
	VG_(memcpy)(hw.cur, HWVG_MAGIC, 8);
	hw.cur += 8;
	{
		const HChar *exe = VG_(args_the_exename) ?
		    VG_(args_the_exename) : "";
		UInt elen = (UInt)VG_(strlen)(exe);

		if (elen > 4000)
			elen = 4000;
		hw_tag(HWVG_REC_HDR, 4 + 4 + 4 + 8 + 2 + elen + 4);
		hw_put32(HWVG_VERSION);
		hw_put32((UInt)hw.pid);
		hw_put32((UInt)VG_(getppid)());
		hw_put64(hw_tsc());
		hw_put16((UShort)elen);
		VG_(memcpy)(hw.cur, exe, elen);
		hw.cur += elen;
		hw_put32(hw.forked ? HWVG_HDR_FORKED : 0);
	}
}

/*
 * Chasing (struct hw_chase) makes larger superblocks: the program's hot
 * loops run fewer of them, and records and the converter's steps with
 * them (gzip of 8 MiB: 12-14% less CPU for the capture), but VEX takes
 * longer to make each, which a short program pays and never gets back
 * (ls -l /usr/bin: 8% more).  So the program starts unchased, and once it
 * has run --chase-after superblocks (5 M, a few hundredths of a second;
 * ls -l /usr/bin runs 2 M, gzip of 8 MiB 144 M) every
 * translation is discarded, to be made again chased as it runs.  Done
 * when a thread stops running client code: the scheduler discards
 * translations there itself (Ijk_InvalICache), and it has not yet looked
 * up the next one (it has at start_client_code).
 */
static void
hw_stop_client_code(ThreadId tid, ULong blocks)
{
	(void)tid;
	if (hw.chasing || blocks < hw.chase_after)
		return;
	hw.chasing = True;
	vex_control.guest_chase = True;
	VG_(discard_translations)((Addr)0, (ULong)1 << 47,
	    "hwtrace: chasing on");
}

/* A thread starts running client code: the resume point. */
static void
hw_start_client_code(ThreadId tid, ULong blocks)
{
	struct hw_thread *t;
	ULong now;

	(void)blocks;
	if (tid >= HW_MAX_THREADS)
		hw_die("too many threads");
	t = &hw.th[tid];
	if (t->ostid == 0)
		t->ostid = VG_(gettid)();
	if (hw.gt && hw.running != 0 && hw.th[hw.running].ngt >= HW_GT_MAX)
		hw_gt_flush(hw.running);
	now = hw_tsc();
	hw_tag(HWVG_REC_RESUME, 4 + 8 + 8);
	hw_put32((UInt)t->ostid);
	hw_put64(VG_(get_IP)(tid));
	hw_put64(now);
	hw.running = tid;
	/*
	 * hwtrace follows the file as it grows: hand over what is there at
	 * least every 100 ms (a scheduler point comes every 100000
	 * superblocks at the latest), and at once when the program starts.
	 */
	if (hw.cur > hw.lim || now - hw.last_flush > 100000000ULL) {
		hw_flush();
		hw.last_flush = now;
	}
}

static void
hw_pre_deliver_signal(ThreadId tid, Int sigNo, Bool alt_stack)
{
	(void)alt_stack;
	if (hw.gt)
		hw.th[tid].gt_pending = 0;	/* the faulting instruction */
	hw_tag(HWVG_REC_SIGNAL, 4 + 4 + 8 + 8);
	hw_put32((UInt)hw_ostid(tid));
	hw_put32((UInt)sigNo);
	hw_put64(VG_(get_IP)(tid));
	hw_put64(hw_tsc());
}

static void
hw_thread_exit(ThreadId tid)
{
	if (hw.gt) {
		hw.th[tid].gt_pending = 0;
		hw_gt_flush(tid);
	}
	hw_tag(HWVG_REC_THREAD_EXIT, 4 + 8 + 8);
	hw_put32((UInt)hw_ostid(tid));
	hw_put64(VG_(get_IP)(tid));
	hw_put64(hw_tsc());
	hw.th[tid].ostid = 0;
}

static void
hw_pre_syscall(ThreadId tid, UInt sysno, UWord *args, UInt nargs)
{
	(void)nargs;
	/*
	 * Valgrind calls the tool's fini with 0 whatever the program's
	 * status: the status is the one the last exit or exit_group asked.
	 */
	if (sysno == __NR_exit_group || sysno == __NR_exit) {
		hw.status = (Int)(args[0] & 0xff);
		hw.status_known = True;
	}
	/*
	 * exec replaces this process image and its tool: everything recorded
	 * so far must be on disk first.  A failed exec simply carries on.
	 */
	if (sysno == __NR_execve || sysno == __NR_execveat) {
		if (hw.gt)
			hw_gt_flush(tid);
		hw_tag(HWVG_REC_EXEC, 4 + 8);
		hw_put32((UInt)hw_ostid(tid));
		hw_put64(hw_tsc());
		hw_flush();
	}
}

/*
 * After fork (in the parent): the child starts with this process's
 * translations, so hwtrace gives the child's file the superblock
 * descriptions known at this point of the parent's file.
 */
static void
hw_post_syscall(ThreadId tid, UInt sysno, UWord *args, UInt nargs, SysRes res)
{
	ULong flags = 0;

	(void)nargs;
	if (sr_isError(res) || sr_Res(res) == 0)
		return;
	if (sysno == __NR_clone)
		flags = args[0];
	else if (sysno == __NR_clone3 && args[0] != 0)
		flags = *(ULong *)args[0];
	else if (sysno != __NR_fork && sysno != __NR_vfork)
		return;
	if (flags & VKI_CLONE_THREAD)
		return;
	hw_tag(HWVG_REC_FORK, 4 + 4 + 8);
	hw_put32((UInt)hw_ostid(tid));
	hw_put32((UInt)sr_Res(res));
	/* Before the fork: the child may run before the parent gets here. */
	hw_put64(hw.fork_time ? hw.fork_time : hw_tsc());
	/*
	 * hwtrace converts the child's events only after this record: the
	 * child, whose ring fills meanwhile, must not wait for the parent's
	 * next flush (the parent may be blocked in wait()).
	 */
	hw_flush();
}

/* Before fork: nothing recorded may be inherited by the child. */
static void
hw_atfork_pre(ThreadId tid)
{
	ThreadId i;

	if (hw.gt)
		for (i = 1; i < HW_MAX_THREADS; i++)
			hw_gt_flush(i);
	(void)tid;
	hw.fork_time = hw_tsc();
	hw_flush();
}

/*
 * In the child: a new event file.  The child runs the translations it
 * inherited; their descriptions are in the parent's file up to its FORK
 * record (the header says the file is a fork child's).
 */
static void
hw_atfork_child(ThreadId tid)
{
	ThreadId i;

	/* The parent's ring, inherited: not ours to write. */
	if (hw.rbase != NULL)
		(void)VG_(am_munmap_valgrind)((Addr)hw.rbase,
		    HWVG_RING_HDR + HW_RING_SIZE);
	hw.rbase = NULL;
	VG_(close)(hw.fd);
	for (i = 0; i < HW_MAX_THREADS; i++) {
		hw.th[i].ostid = 0;
		hw.th[i].ngt = 0;
		hw.th[i].gt_pending = 0;
	}
	(void)tid;
	hw.forked = True;
	hw_open();
}

/*
 * Executable mappings, as the client sees them: the sideband (and the
 * images hwtrace stores) come from here, in order with the trace, even
 * when the process is gone before hwtrace reads this file.
 */
static void
hw_mmap_rec(Addr a, SizeT len, Bool rr, Bool ww, Bool xx, Bool startup,
    ULong di)
{
	NSegment const *seg;
	const HChar *path = "";
	ULong off = 0;
	UInt n, prot;

	if (!xx || hw.buf == NULL)
		return;
	/* Anonymous memory at start-up is Valgrind's, not program code. */
	if (di == 0 && startup && ((seg = VG_(am_find_nsegment)(a)) == NULL ||
	    VG_(am_get_filename)(seg) == NULL))
		return;
	if ((seg = VG_(am_find_nsegment)(a)) != NULL) {
		const HChar *fn = VG_(am_get_filename)(seg);

		if (fn != NULL)
			path = fn;
		if (seg->kind == SkFileC)
			off = (ULong)seg->offset + (ULong)(a - seg->start);
	}
	n = (UInt)VG_(strlen)(path);
	if (n > 4000)
		n = 4000;
	prot = (rr ? VKI_PROT_READ : 0) | (ww ? VKI_PROT_WRITE : 0) |
	    VKI_PROT_EXEC;
	hw_tag(HWVG_REC_MMAP, 8 + 8 + 8 + 4 + 8 + 2 + n);
	hw_put64(a);
	hw_put64(len);
	hw_put64(off);
	hw_put32(prot);
	hw_put64(hw_tsc());
	hw_put16((UShort)n);
	VG_(memcpy)(hw.cur, path, n);
	hw.cur += n;
}

static void
hw_new_mem_startup(Addr a, SizeT len, Bool rr, Bool ww, Bool xx, ULong di)
{
	hw_mmap_rec(a, len, rr, ww, xx, True, di);
}

static void
hw_new_mem(Addr a, SizeT len, Bool rr, Bool ww, Bool xx, ULong di)
{
	hw_mmap_rec(a, len, rr, ww, xx, False, di);
}

static void
hw_mprotect(Addr a, SizeT len, Bool rr, Bool ww, Bool xx)
{
	hw_mmap_rec(a, len, rr, ww, xx, False, 0);
}

static void
hw_munmap(Addr a, SizeT len)
{
	if (hw.buf == NULL)
		return;
	hw_tag(HWVG_REC_MUNMAP, 8 + 8 + 8);
	hw_put64(a);
	hw_put64(len);
	hw_put64(hw_tsc());
}

static Bool
hw_process_cmd_line_option(const HChar *arg)
{
	if VG_STR_CLO(arg, "--out-dir", hw.dir) {}
	else if VG_BOOL_CLO(arg, "--ground-truth", hw.gt) {}
	else if VG_BOOL_CLO(arg, "--hw-stats", hw.stats) {}
	else if VG_BINT_CLO(arg, "--chase-after", hw.chase_after, 0,
	    1000000000000000LL) {}
	else if (VG_(strcmp)(arg, "--ring=no") == 0)
		hw.noring = True;
	else if (VG_(strcmp)(arg, "--ring=yes") == 0)
		hw.noring = False;
	else
		return (False);
	return (True);
}

static void
hw_print_usage(void)
{
	VG_(printf)(
	    "    --out-dir=DIR            write event files into DIR (required)\n"
	    "    --ground-truth=yes|no    also record every instruction [no]\n"
	    "    --ring=yes|no            event files are rings shared with\n"
	    "                             hwtrace, not streams [yes]\n"
	    "    --chase-after=N          chase branches once N superblocks\n"
	    "                             ran (0: from the start) [5000000]\n"
	    "    --hw-stats=yes|no        print translation counts at exit\n"
	    "                             (chased, made again unchased) [no]\n");
}

static void
hw_print_debug_usage(void)
{
}

static void
hw_post_clo_init(void)
{
	if (hw.dir == NULL)
		hw_die("--out-dir=DIR is required");
	hw.buf = VG_(malloc)("hwtrace.buf", HW_BUF_SIZE);
	hw.cur = hw.buf;
	hw.lim = hw.buf + HW_FLUSH_AT;
	/* VEX takes its control from here at its first translation. */
	hw.chasing = hw.chase_after == 0;
	VG_(clo_vex_control).guest_chase = hw.chasing;
	hw_open();
}

/*
 * A conditional branch VEX chased.  Since Valgrind 3.17, VEX recognises
 * an "A && B" condition spread over two basic blocks: where a block ends
 * with a conditional branch and one of its successors (B, up to three
 * instructions that cannot fault) ends with a conditional branch to the
 * other successor, it appends B to the superblock, guards B's statements
 * by the first branch's condition, drops the first branch's exit and
 * guards B's exit by And1(B's condition, the first branch's)
 * (guest_generic_bb_to_IR.c, its "&&-idiom").  The superblock's final
 * exit goes where the first branch goes when B does not run, so its
 * exits no longer say whether B ran.
 * The tool leaves the IR's control flow alone (iropt has already moved
 * the first block's register writes into B's guarded ones, so an exit
 * added before B would leave with stale registers) and makes the record
 * say it: the DEF lists a side exit at the first branch to the final
 * exit's destination, and at the final exit the block stores that side
 * exit's number where B did not run, the final exit's where it did.  VEX
 * makes at most one such chase per superblock, as its last extension, so
 * one record per run of the superblock says it; where iropt unrolled a
 * loop with a chase (a chase in every copy), or anything else does not
 * look as expected, the superblock is made again unchased
 * (hw_unchased()).
 */
struct hw_chase {
	Int	stmt;		/* B's first IMark in the IR; -1: no chase */
	Int	bexit;		/* B's exit */
	UInt	insn;		/* the chased branch's instruction index */
	Addr	dst;		/* where it goes when B does not run */
	IRTemp	went_on;	/* Ity_I1: it went on into B */
	Addr	at;		/* the branch (for messages) */
};

/*
 * Is the instruction at @a (@len bytes) a conditional direct branch (jcc,
 * loop, loope, loopne, jrcxz)?  Its taken destination is set.
 */
static Bool
hw_cond_branch(Addr a, UInt len, Addr *taken)
{
	const UChar *b = (const UChar *)a;
	UInt i = 0;
	Int d;

	/* Branch hints, bnd, address size (loop, jrcxz), REX. */
	while (i < len && (b[i] == 0x2e || b[i] == 0x3e || b[i] == 0xf2 ||
	    b[i] == 0x67 || (b[i] & 0xf0) == 0x40))
		i++;
	if (i + 2 == len && ((b[i] & 0xf0) == 0x70 ||
	    (b[i] >= 0xe0 && b[i] <= 0xe3))) {
		*taken = a + len + (Long)(Char)b[i + 1];
		return (True);
	}
	if (i + 6 == len && b[i] == 0x0f && (b[i + 1] & 0xf0) == 0x80) {
		VG_(memcpy)(&d, b + i + 2, 4);
		*taken = a + len + (Long)d;
		return (True);
	}
	return (False);
}

/* The expression temp @t is set to before statement @before, or NULL. */
static const IRExpr *
hw_tmp_def(const IRSB *sb, Int before, IRTemp t)
{
	Int i;

	for (i = before - 1; i >= 0; i--) {
		const IRStmt *st = sb->stmts[i];

		if (st->tag == Ist_WrTmp && st->Ist.WrTmp.tmp == t)
			return (st->Ist.WrTmp.data);
	}
	return (NULL);
}

/*
 * The condition under which B, which starts at statement @b0 and ends
 * with the exit at @x, ran: the second operand of the And1 that guards
 * that exit, set before B.  IRTemp_INVALID: not a chase.
 */
static IRTemp
hw_chase_cond(const IRSB *sb, Int b0, Int x)
{
	const IRExpr *g = sb->stmts[x]->Ist.Exit.guard;
	const IRExpr *c;

	if (g->tag != Iex_RdTmp ||
	    (g = hw_tmp_def(sb, x, g->Iex.RdTmp.tmp)) == NULL)
		return (IRTemp_INVALID);
	if (g->tag != Iex_Binop || g->Iex.Binop.op != Iop_And1)
		return (IRTemp_INVALID);
	c = g->Iex.Binop.arg2;
	if (c->tag != Iex_RdTmp || hw_tmp_def(sb, b0, c->Iex.RdTmp.tmp) == NULL)
		return (IRTemp_INVALID);
	return (c->Iex.RdTmp.tmp);
}

/*
 * Find the conditional branch VEX chased in @sb, if any (ch->stmt is -1
 * if none): a conditional branch without an exit, whose next instruction
 * in the superblock is one of its destinations, and whose B (up to three
 * instructions) ends with an exit guarded as hw_chase_cond() says; B
 * ends the superblock, whose final exit goes to the branch's other
 * destination.  Every other conditional branch has an exit of its own,
 * or ends the superblock: the tool checks that, and stops on anything
 * else rather than record a path that did not run.
 */
static const HChar *
hw_find_chase(const IRSB *sb, struct hw_chase *ch)
{
	Int i, prev = -1, b0 = -1;
	Bool prev_exit = False;
	UInt insn = 0, ninb = 0, j = 0;
	Addr a, taken, other = 0;
	IRTemp c;

	ch->stmt = ch->bexit = -1;
	ch->at = 0;
	ch->insn = 0;
	ch->dst = 0;
	ch->went_on = IRTemp_INVALID;
	for (i = 0; i < sb->stmts_used; i++) {
		const IRStmt *st = sb->stmts[i];

		if (st->tag == Ist_Exit && prev >= 0) {
			prev_exit = True;
			if (b0 < 0)
				continue;
			if ((c = hw_chase_cond(sb, b0, i)) == IRTemp_INVALID)
				return ("not VEX's &&-idiom");
			if (ch->stmt >= 0)
				return ("a second chase");
			ch->stmt = b0;
			ch->bexit = i;
			ch->insn = j;
			ch->dst = other;
			ch->went_on = c;
			b0 = -1;
			continue;
		}
		if (st->tag != Ist_IMark)
			continue;
		a = (Addr)st->Ist.IMark.addr;
		if (prev >= 0 && !prev_exit) {
			const IRStmt *pm = sb->stmts[prev];
			Addr ft = (Addr)pm->Ist.IMark.addr + pm->Ist.IMark.len;

			if (hw_cond_branch((Addr)pm->Ist.IMark.addr,
			    pm->Ist.IMark.len, &taken) && taken != ft) {
				if (b0 >= 0)
					return ("another inside");
				ch->at = (Addr)pm->Ist.IMark.addr;
				if (a != taken && a != ft)
					return ("not followed by "
					    "a destination");
				b0 = i;
				j = insn - 1;
				other = a == taken ? ft : taken;
				ninb = 0;
			}
		}
		if (b0 >= 0 && ++ninb > 3)
			return ("followed by more than three");
		prev = i;
		prev_exit = False;
		insn++;
	}
	if (b0 >= 0)
		return ("no exit after it");
	if (ch->stmt < 0)
		return (NULL);
	for (i = ch->bexit + 1; i < sb->stmts_used; i++)
		if (sb->stmts[i]->tag == Ist_Exit ||
		    sb->stmts[i]->tag == Ist_IMark)
			return ("not at the end");
	if (sb->next->tag != Iex_Const || sb->jumpkind != Ijk_Boring ||
	    sb->next->Iex.Const.con->Ico.U64 != ch->dst)
		return ("the superblock goes elsewhere");
	return (NULL);
}

/* Write the DEF record of a superblock about to be instrumented. */
static void
hw_def(IRSB *sb, Addr base, UInt ninsn, UInt nexits,
    const struct hw_chase *ch)
{
	UInt i, len, k;
	Int cur_insn = -1;
	Addr a;

	/* Size first. */
	len = 8 + 2 + 2 + 1 + 1 + 8;
	for (i = 0; i < (UInt)sb->stmts_used; i++) {
		IRStmt *st = sb->stmts[i];

		if (st->tag == Ist_IMark)
			len += 8 + 1 + st->Ist.IMark.len;
	}
	len += nexits * (2 + 1 + 8);
	hw_tag(HWVG_REC_DEF, len);
	hw_put64(base);
	hw_put16((UShort)ninsn);
	hw_put16((UShort)nexits);
	if (sb->next->tag == Iex_Const) {
		hw_put8(HWVG_NEXT_CONST);
		hw_put8((UChar)(sb->jumpkind - Ijk_INVALID));
		hw_put64(sb->next->Iex.Const.con->Ico.U64);
	} else {
		hw_put8(HWVG_NEXT_COMPUTED);
		hw_put8((UChar)(sb->jumpkind - Ijk_INVALID));
		hw_put64(0);
	}
	for (i = 0; i < (UInt)sb->stmts_used; i++) {
		IRStmt *st = sb->stmts[i];

		if (st->tag != Ist_IMark)
			continue;
		a = (Addr)st->Ist.IMark.addr;
		hw_put64(a);
		hw_put8((UChar)st->Ist.IMark.len);
		VG_(memcpy)(hw.cur, (void *)a, st->Ist.IMark.len);
		hw.cur += st->Ist.IMark.len;
	}
	k = 0;
	for (i = 0; i < (UInt)sb->stmts_used; i++) {
		IRStmt *st = sb->stmts[i];

		if ((Int)i == ch->stmt) {
			hw_put16((UShort)ch->insn);
			hw_put8((UChar)(Ijk_Boring - Ijk_INVALID));
			hw_put64(ch->dst);
			k++;
		}
		if (st->tag == Ist_IMark)
			cur_insn++;
		if (st->tag != Ist_Exit || cur_insn < 0)
			continue;
		hw_put16((UShort)cur_insn);
		hw_put8((UChar)(st->Ist.Exit.jk - Ijk_INVALID));
		hw_put64(st->Ist.Exit.dst->Ico.U64);
		k++;
	}
	tl_assert(k == nexits);
	hw.nblocks_def++;
}

static IRExpr *
hw_atom(IRSB *out, IRExpr *e)
{
	IRTemp t;

	if (e->tag == Iex_RdTmp || e->tag == Iex_Const)
		return (e);
	t = newIRTemp(out->tyenv, typeOfIRExpr(out->tyenv, e));
	addStmtToIRSB(out, IRStmt_WrTmp(t, e));
	return (IRExpr_RdTmp(t));
}

/* IR: tcur = cur. */
static IRTemp
hw_load_cur(IRSB *out)
{
	IRTemp tcur = newIRTemp(out->tyenv, Ity_I64);

	addStmtToIRSB(out, IRStmt_WrTmp(tcur,
	    IRExpr_Load(Iend_LE, Ity_I64, mkIRExpr_HWord((HWord)&hw.cur))));
	return (tcur);
}

/* IR: cur = tcur + adv (an Ity_I64 expression). */
static void
hw_set_cur(IRSB *out, IRTemp tcur, IRExpr *adv)
{
	IRTemp tnew = newIRTemp(out->tyenv, Ity_I64);

	addStmtToIRSB(out, IRStmt_WrTmp(tnew,
	    IRExpr_Binop(Iop_Add64, IRExpr_RdTmp(tcur), adv)));
	addStmtToIRSB(out, IRStmt_Store(Iend_LE,
	    mkIRExpr_HWord((HWord)&hw.cur), IRExpr_RdTmp(tnew)));
}

/* IR: *cur = val (@ty bytes); cur += adv (an Ity_I64 expression). */
static void
hw_emit_store(IRSB *out, IRExpr *val, IRExpr *adv)
{
	IRTemp tcur;

	adv = hw_atom(out, adv);
	tcur = hw_load_cur(out);
	addStmtToIRSB(out, IRStmt_Store(Iend_LE, IRExpr_RdTmp(tcur), val));
	hw_set_cur(out, tcur, adv);
}

/*
 * Can @st leave the superblock other than by an exit, i.e. raise a
 * synchronous signal (a guest memory access, an integer division, a
 * helper with side effects)?  What is not known to be harmless counts:
 * a wrong yes costs one byte store, a wrong no a lying record.  The IR
 * is flat here (expression arguments are atoms).
 */
static Bool
hw_can_fault(const IRStmt *st)
{
	const IRExpr *e;

	switch (st->tag) {
	case Ist_NoOp:
	case Ist_IMark:
	case Ist_AbiHint:
	case Ist_Put:
	case Ist_PutI:
	case Ist_MBE:
	case Ist_Exit:
		return (False);
	case Ist_WrTmp:
		e = st->Ist.WrTmp.data;
		switch (e->tag) {
		case Iex_Get:
		case Iex_GetI:
		case Iex_RdTmp:
		case Iex_Const:
		case Iex_CCall:		/* clean helpers touch no memory */
		case Iex_ITE:
		case Iex_Unop:
		case Iex_Triop:
		case Iex_Qop:
			return (False);
		case Iex_Binop:
			return (e->Iex.Binop.op >= Iop_DivU32 &&
			    e->Iex.Binop.op <= Iop_DivModU32to32);
		default:
			return (True);
		}
	default:
		return (True);
	}
}

static void
hw_store_byte(IRSB *out, IRTemp tcur, UChar v)
{
	addStmtToIRSB(out, IRStmt_Store(Iend_LE, IRExpr_RdTmp(tcur),
	    IRExpr_Const(IRConst_U8(v))));
}

/*
 * A superblock whose record could not say which way a chased branch went
 * (hw_find_chase() says why: mostly a loop that iropt unrolled, each copy
 * with a chase of its own) is made again without chasing, which is exact
 * as every conditional branch then has its exit.  VEX reads its control
 * (vex_control, its global, linked into this tool) at each translation,
 * and the tool gets the IR after iropt: so this translation does nothing
 * but ask the scheduler to discard it (Ijk_InvalICache on the guest
 * range it covers, as self-modified code does) and to go on at the same
 * address, which VEX then translates with chasing off for that one
 * translation (hw_instrument() turns it on again).  It runs no guest
 * instruction and writes nothing, so the converter never hears of it.
 */
static IRSB *
hw_unchased(VgCallbackClosure *closure, IRSB *in,
    const VexGuestExtents *vge, const struct hw_chase *ch, const HChar *why)
{
	IRSB *out;

	if (hw.stats)
		VG_(umsg)("hwtrace tool: superblock 0x%lx made again unchased: "
		    "branch at 0x%lx, %s\n", (unsigned long)closure->nraddr,
		    (unsigned long)ch->at, why);
	tl_assert(vge->n_used >= 1);
	out = deepCopyIRSBExceptStmts(in);
	addStmtToIRSB(out, IRStmt_Put(offsetof(VexGuestAMD64State,
	    guest_CMSTART), mkIRExpr_HWord((HWord)vge->base[0])));
	addStmtToIRSB(out, IRStmt_Put(offsetof(VexGuestAMD64State,
	    guest_CMLEN), mkIRExpr_HWord((HWord)(vge->len[0] > 0 ?
	    vge->len[0] : 1))));
	out->next = mkIRExpr_HWord((HWord)closure->nraddr);
	out->jumpkind = Ijk_InvalICache;
	vex_control.guest_chase = False;
	hw.unchased = True;
	hw.nredo++;
	return (out);
}

/*
 * hw_instrument()'s end: the record of the final exit into @out (@tcur
 * holds the cursor, @byte what is stored there, or -1; @kv the chase's
 * side exit, if @ch has one).
 */
static void
hw_final_exit(IRSB *out, IRTemp tcur, Int byte, UInt nexits,
    const struct hw_chase *ch, UInt kv)
{
	IRDirty *d;

	if (out->next->tag == Iex_Const && ch->stmt >= 0) {
		IRTemp t = newIRTemp(out->tyenv, Ity_I8);

		tl_assert(tcur != IRTemp_INVALID && kv < nexits);
		addStmtToIRSB(out, IRStmt_WrTmp(t, IRExpr_ITE(
		    IRExpr_RdTmp(ch->went_on), IRExpr_Const(IRConst_U8(
		    (UChar)nexits)), IRExpr_Const(IRConst_U8((UChar)kv)))));
		addStmtToIRSB(out, IRStmt_Store(Iend_LE, IRExpr_RdTmp(tcur),
		    IRExpr_RdTmp(t)));
	} else if (out->next->tag == Iex_Const && nexits > 0 &&
	    byte != (Int)nexits)
		hw_store_byte(out, tcur, (UChar)nexits);
	if (out->next->tag == Iex_Const) {
		if (hw.gt) {
			d = unsafeIRDirty_0_N(1, "hw_gt_exit",
			    VG_(fnptr_to_fnentry)(&hw_gt_exit),
			    mkIRExprVec_1(mkIRExpr_HWord(
			    (HWord)out->next->Iex.Const.con->Ico.U64)));
			addStmtToIRSB(out, IRStmt_Dirty(d));
		}
	} else {
		IRExpr *nx = hw_atom(out, out->next);
		IRExpr *w;

		out->next = nx;
		w = hw_atom(out, IRExpr_Binop(Iop_Shl64, nx,
		    IRExpr_Const(IRConst_U8(8))));
		w = hw_atom(out, IRExpr_Binop(Iop_Or64, w,
		    mkIRExpr_HWord(HWVG_INLINE_WIDE | nexits)));
		if (tcur != IRTemp_INVALID) {
			addStmtToIRSB(out, IRStmt_Store(Iend_LE,
			    IRExpr_RdTmp(tcur), w));
			hw_set_cur(out, tcur, mkIRExpr_HWord(8));
		} else
			hw_emit_store(out, w, mkIRExpr_HWord(8));
		if (hw.gt) {
			d = unsafeIRDirty_0_N(1, "hw_gt_exit",
			    VG_(fnptr_to_fnentry)(&hw_gt_exit),
			    mkIRExprVec_1(mkIRExpr_HWord(1)));
			addStmtToIRSB(out, IRStmt_Dirty(d));
		}
	}
}

/*
 * VEX answers the guest's CPUID from a table of its own (a Haswell, on
 * hosts with AVX2), which lists RDTSCP whatever the host has; but VEX
 * decodes RDTSCP only where the host's CPUID lists it.  On a host that
 * does not (some VMs), a program that believes the table (Go's runtime
 * timer) dies of SIGILL under any Valgrind tool.  So where the host lacks
 * RDTSCP, after each CPUID whose leaf (EAX before it, @leaf) is
 * 0x80000001, EDX's bit 27 is cleared: the guest then uses RDTSC, as it
 * does on the host itself.  Only CPUID's result changes, not control flow
 * that the trace records.
 */
static void
hw_cpuid_fix(IRSB *out, IRTemp leaf)
{
	Int rdx = offsetof(VexGuestAMD64State, guest_RDX);
	IRExpr *is, *v, *cleared;

	is = hw_atom(out, IRExpr_Binop(Iop_CmpEQ64, hw_atom(out,
	    IRExpr_Binop(Iop_And64, IRExpr_RdTmp(leaf),
	    mkIRExpr_HWord(0xffffffffUL))), mkIRExpr_HWord(0x80000001UL)));
	v = hw_atom(out, IRExpr_Get(rdx, Ity_I64));
	cleared = hw_atom(out, IRExpr_Binop(Iop_And64, v,
	    mkIRExpr_HWord(~(HWord)(1UL << 27))));
	addStmtToIRSB(out, IRStmt_Put(rdx, hw_atom(out, IRExpr_ITE(is,
	    cleared, v))));
}

/* @st is VEX's call of its CPUID helper. */
static Bool
hw_is_cpuid(const IRStmt *st)
{
	const HChar *n;

	if (st->tag != Ist_Dirty || st->Ist.Dirty.details->cee == NULL)
		return (False);
	n = st->Ist.Dirty.details->cee->name;
	return (VG_(strncmp)(n, "amd64g_dirtyhelper_CPUID",
	    VG_(strlen)("amd64g_dirtyhelper_CPUID")) == 0);
}

/*
 * The inline record of a superblock with side exits takes one cursor
 * update: at the first side exit the cursor is loaded into a temp and
 * advanced by one, and from there on the byte at the old cursor always
 * says how the block would be left at this point: byte k before side
 * exit k, nexits before the final exit (or the 8-byte word and a second
 * cursor update for a computed final exit), and HWVG_INLINE_FAULT + j
 * (j: the last side exit passed) before anything after it that can raise
 * a synchronous signal (Valgrind then leaves the block there, and the
 * SIGNAL record that follows says at which instruction; j says which of
 * its copies where the block is an unrolled loop).  A byte is stored only
 * where the value changes.
 * Before the first side exit nothing is written: a fault there leaves no
 * record, as before.
 */
static IRSB *
hw_instrument(VgCallbackClosure *closure, IRSB *in,
    const VexGuestLayout *layout, const VexGuestExtents *vge,
    const VexArchInfo *archinfo, IRType gWordTy, IRType hWordTy)
{
	IRSB *out;
	struct hw_chase ch;
	UInt i, ninsn = 0, nexits = 0, k = 0, kv = 0;
	Bool seen_imark = False;
	Addr cur_addr = 0;
	UInt cur_len = 0;
	IRDirty *d;
	IRTemp tcur = IRTemp_INVALID, leaf;
	Int byte = -1;			/* the value at tcur now */
	const HChar *why;
	Bool chased, no_rdtscp;

	no_rdtscp = !(archinfo->hwcaps & VEX_HWCAPS_AMD64_RDTSCP);
	if (gWordTy != Ity_I64 || hWordTy != Ity_I64)
		hw_die("only amd64 guests are supported");
	/*
	 * Chased superblocks, where the record can say whether the chased
	 * block ran, else the superblock again unchased (hw_unchased()).
	 * One made unchased must have no chase: else VEX did not read the
	 * control, and the tool stops rather than record a wrong path.
	 */
	chased = vex_control.guest_chase;	/* as this one was made */
	if (hw.unchased) {
		hw.unchased = False;
		vex_control.guest_chase = hw.chasing;
	}
	why = hw_find_chase(in, &ch);
	if (!chased && ch.stmt >= 0) {
		HChar m[200];

		VG_(snprintf)(m, sizeof(m), "superblock 0x%lx: VEX chased the "
		    "branch at 0x%lx with chasing off",
		    (unsigned long)closure->nraddr, (unsigned long)ch.at);
		hw_die(m);
	}
	if (chased && why != NULL)
		return (hw_unchased(closure, in, vge, &ch, why));

	for (i = 0; i < (UInt)in->stmts_used; i++) {
		if (in->stmts[i]->tag == Ist_IMark) {
			ninsn++;
			seen_imark = True;
		} else if (in->stmts[i]->tag == Ist_Exit && seen_imark)
			nexits++;
	}
	if (ch.stmt >= 0) {
		nexits++;
		hw.nchase++;
	}
	if (nexits >= HWVG_MAX_EXITS)
		hw_die("superblock with too many exits");
	hw_def(in, (Addr)closure->nraddr, ninsn, nexits, &ch);

	out = deepCopyIRSBExceptStmts(in);
	seen_imark = False;
	for (i = 0; i < (UInt)in->stmts_used; i++) {
		IRStmt *st = in->stmts[i];

		if ((Int)i == ch.stmt)
			kv = k++;	/* the chased branch's: no IR exit */
		if (st == NULL || st->tag == Ist_NoOp)
			continue;
		if (st->tag == Ist_IMark) {
			Addr a = (Addr)st->Ist.IMark.addr;

			addStmtToIRSB(out, st);
			/*
			 * Where VEX chased a call or jump into the same
			 * superblock it does not update the guest IP, so a
			 * fault in the code it chased into would be reported
			 * at the call: make the IP exact there.
			 */
			if (seen_imark && a != cur_addr + cur_len)
				addStmtToIRSB(out, IRStmt_Put(layout->offset_IP,
				    mkIRExpr_HWord(a)));
			seen_imark = True;
			cur_addr = a;
			cur_len = st->Ist.IMark.len;
			if (hw.gt) {
				d = unsafeIRDirty_0_N(1, "hw_gt_insn",
				    VG_(fnptr_to_fnentry)(&hw_gt_insn),
				    mkIRExprVec_1(mkIRExpr_HWord(cur_addr)));
				/* B's instructions ran only if it went on. */
				if (ch.stmt >= 0 && (Int)i >= ch.stmt &&
				    (Int)i < ch.bexit)
					d->guard = IRExpr_RdTmp(ch.went_on);
				addStmtToIRSB(out, IRStmt_Dirty(d));
			}
			continue;
		}
		if (st->tag == Ist_Exit && seen_imark) {
			IRExpr *g = st->Ist.Exit.guard;

			if (tcur == IRTemp_INVALID) {
				tcur = hw_load_cur(out);
				hw_store_byte(out, tcur, (UChar)k);
				hw_set_cur(out, tcur, mkIRExpr_HWord(1));
			} else if (byte != (Int)k)
				hw_store_byte(out, tcur, (UChar)k);
			byte = (Int)k;
			if (hw.gt) {
				d = unsafeIRDirty_0_N(1, "hw_gt_exit",
				    VG_(fnptr_to_fnentry)(&hw_gt_exit),
				    mkIRExprVec_1(mkIRExpr_HWord(
				    (HWord)st->Ist.Exit.dst->Ico.U64)));
				d->guard = g;
				addStmtToIRSB(out, IRStmt_Dirty(d));
			}
			k++;
		} else if (tcur != IRTemp_INVALID && hw_can_fault(st)) {
			Int f = HWVG_INLINE_FAULT + (Int)(k - 1 <
			    HWVG_FAULT_MAXJ ? k - 1 : HWVG_FAULT_MAXJ);

			if (byte != f)
				hw_store_byte(out, tcur, (UChar)f);
			byte = f;
		}
		if (no_rdtscp && hw_is_cpuid(st)) {
			leaf = newIRTemp(out->tyenv, Ity_I64);
			addStmtToIRSB(out, IRStmt_WrTmp(leaf, IRExpr_Get(
			    offsetof(VexGuestAMD64State, guest_RAX),
			    Ity_I64)));
			addStmtToIRSB(out, st);
			hw_cpuid_fix(out, leaf);
			continue;
		}
		addStmtToIRSB(out, st);
	}

	hw_final_exit(out, tcur, byte, nexits, &ch, kv);
	return (out);
}

static void
hw_fini(Int exitcode)
{
	ThreadId tid;

	if (hw.status_known)
		exitcode = hw.status;

	for (tid = 1; tid < HW_MAX_THREADS; tid++) {
		if (hw.th[tid].ostid == 0)
			continue;
		if (hw.gt) {
			hw.th[tid].gt_pending = 0;
			hw_gt_flush(tid);
		}
		hw_tag(HWVG_REC_FINI, 4 + 8 + 8 + 4);
		hw_put32((UInt)hw.th[tid].ostid);
		hw_put64(VG_(get_IP)(tid));
		hw_put64(hw_tsc());
		hw_put32((UInt)exitcode);
	}
	if (hw.stats)
		VG_(umsg)("hwtrace tool: %llu superblocks described, %llu with "
		    "a chase recorded, %llu made again unchased\n",
		    hw.nblocks_def, hw.nchase, hw.nredo);
	hw_tag(HWVG_REC_END, 8 + 8 + 4);
	hw_put64(hw.nblocks_def);
	hw_put64(hw_tsc());
	hw_put32((UInt)exitcode);
	hw_flush();
	VG_(close)(hw.fd);
	hw.fd = -1;
}

static void
hw_pre_clo_init(void)
{
	VG_(details_name)("hwtrace");
	VG_(details_version)(HWVG_TOOL_VERSION);
	VG_(details_description)("exact control-flow recorder for hwtrace");
	VG_(details_copyright_author)(
	    "Copyright (C) 2026 The hwtrace authors; GPL-2.0-or-later.");
	VG_(details_bug_reports_to)("the hwtrace project");
	VG_(details_avg_translation_sizeB)(300);

	VG_(basic_tool_funcs)(hw_post_clo_init, hw_instrument, hw_fini);
	VG_(needs_command_line_options)(hw_process_cmd_line_option,
	    hw_print_usage, hw_print_debug_usage);
	VG_(needs_syscall_wrapper)(hw_pre_syscall, hw_post_syscall);
	VG_(track_start_client_code)(hw_start_client_code);
	VG_(track_stop_client_code)(hw_stop_client_code);
	VG_(track_pre_deliver_signal)(hw_pre_deliver_signal);
	VG_(track_pre_thread_ll_exit)(hw_thread_exit);
	VG_(track_new_mem_startup)(hw_new_mem_startup);
	VG_(track_new_mem_mmap)(hw_new_mem);
	VG_(track_change_mem_mprotect)(hw_mprotect);
	VG_(track_die_mem_munmap)(hw_munmap);
	VG_(atfork)(hw_atfork_pre, NULL, hw_atfork_child);
}

VG_DETERMINE_INTERFACE_VERSION(hw_pre_clo_init)
