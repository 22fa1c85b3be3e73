/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * hwtr_vgevents.h: the event file the hwtrace Valgrind tool writes and the
 * valgrind trace source (kernel/valgrind_src.c) reads.  This header is the
 * whole interface between the GPL tool (kernel/vgtool/) and hwtrace: it
 * holds constants only and is included by both.
 *
 * File: "HWTRVG01", then records.  All integers little-endian.
 *
 * Inline records (first byte < 0xf0), written by the instrumented code of
 * the thread named by the last RESUME; they say how the thread's current
 * superblock was left, and exist only when that is not known statically:
 *   k                 side exit k (0 <= k < nexits) was taken
 *   nexits            the final exit of a block with side exits, constant
 *                     next
 *   (target<<8)|0x80|nexits  8 bytes: the final exit to a computed target
 *   0x70+j            (HWVG_INLINE_FAULT + j) the block was left by a
 *                     synchronous signal after its side exit j (not
 *                     taken) and before its next exit; j > 15 is written
 *                     as 15.  The SIGNAL (or THREAD_EXIT, FINI) record
 *                     that follows gives the faulting instruction's
 *                     address, which j places where an unrolled loop has
 *                     it more than once.
 * so bit 7 of the first byte tells the length and a reader that lost a
 * thread can still skip its records.  (The tool reserves the record's
 * byte at a block's first side exit, and rewrites it where the way the
 * block would be left changes; what is left there when a fault ends the
 * block is the 0x70+j.  A fault before the first side exit leaves no
 * record.)
 *
 * Tagged records: tag (u8 >= 0xf0), payload length (u32), payload:
 *   HDR     u32 version, u32 pid, u32 ppid, u64 time, u16 n, char exe[n],
 *           u32 flags (HWVG_HDR_FORKED: a fork child's first file; it
 *           runs the superblocks its parent's file described up to the
 *           parent's FORK record for it)
 * Times ("tsc") are CLOCK_MONOTONIC nanoseconds.
 *   DEF     u64 addr, u16 ninsn, u16 nexits, u8 next_kind, u8 jumpkind,
 *           u64 next (constant next, or 0), then ninsn times
 *           { u64 addr, u8 len, u8 bytes[len] }, then nexits times
 *           { u16 insn index, u8 jumpkind, u64 dst }
 *   RESUME  u32 tid, u64 ip, u64 tsc: the thread runs client code from ip
 *   SIGNAL  u32 tid, u32 signo, u64 ip, u64 tsc: a handler is entered; the
 *           thread was at ip (a faulting instruction, which did not
 *           complete, or the next instruction to run)
 *   THREAD_EXIT u32 tid, u64 ip, u64 tsc
 *   EXEC    u32 tid, u64 tsc: an execve is attempted (the file ends if it
 *           succeeds)
 *   GT      u32 tid, u32 n, u64 ip[n]: ground truth, completed instructions
 *   FINI    u32 tid, u64 ip, u64 tsc, u32 exitcode: a thread alive at exit
 *   MMAP    u64 addr, u64 len, u64 pgoff, u32 prot, u64 tsc, u16 n,
 *           char path[n]: an executable mapping (or mprotect to exec)
 *   MUNMAP  u64 addr, u64 len, u64 tsc
 *   FORK    u32 tid, u32 child pid, u64 tsc: a process was forked
 *   END     u64 superblocks translated, u64 tsc, u32 exit code: the file
 *           is complete (the process exited)
 *
 * The bytes above are either the whole file (a stream, growing), or go
 * through a ring in the file, which both sides map (the tool's default):
 *   offset 0   "HWTRVGR1", written last when the ring is set up (zeros
 *              before: the reader waits)
 *   offset 8   u64 ring size R (a power of two, at least 1 MiB, larger
 *              than any record)
 *   offset 16  u64 head: bytes of the stream written so far (the tool's)
 *   offset 64  u64 tail: bytes of the stream taken so far (the reader's)
 *   offset 4096, R bytes: stream byte i is at 4096 + (i mod R).
 * The tool writes bytes, then publishes the head (release); the reader
 * reads up to the head (acquire), then publishes the tail; the tool
 * never has more than R bytes not taken.  A tool that cannot set a ring
 * up writes a stream.
 */

#ifndef HWTR_VGEVENTS_H
#define HWTR_VGEVENTS_H

#define HWVG_MAGIC		"HWTRVG01"
#define HWVG_VERSION		2
#define HWVG_TOOL_VERSION	"1"

#define HWVG_MAX_EXITS		0x70
#define HWVG_INLINE_WIDE	0x80
#define HWVG_INLINE_FAULT	0x70	/* to 0x7f: HWVG_MAX_EXITS and up */
#define HWVG_FAULT_MAXJ		15

#define HWVG_REC_HDR		0xf0
#define HWVG_REC_DEF		0xf1
#define HWVG_REC_RESUME		0xf2
#define HWVG_REC_SIGNAL		0xf3
#define HWVG_REC_THREAD_EXIT	0xf4
#define HWVG_REC_EXEC		0xf5
#define HWVG_REC_GT		0xf6
#define HWVG_REC_FINI		0xf7
#define HWVG_REC_END		0xf8
#define HWVG_REC_FORK		0xf9
#define HWVG_REC_MMAP		0xfa
#define HWVG_REC_MUNMAP		0xfb

#define HWVG_HDR_FORKED		0x1

#define HWVG_RING_MAGIC		"HWTRVGR1"
#define HWVG_RING_HDR		4096
#define HWVG_RING_SIZE_OFF	8
#define HWVG_RING_HEAD_OFF	16
#define HWVG_RING_TAIL_OFF	64

#define HWVG_NEXT_CONST		0
#define HWVG_NEXT_COMPUTED	1

/*
 * Jump kinds, as offsets from VEX's Ijk_INVALID (libvex_ir.h, Valgrind
 * 3.19).  hwtrace only needs to tell plain transfers from system calls and
 * synthesized signals.
 */
#define HWVG_JK_BORING		1
#define HWVG_JK_CALL		2
#define HWVG_JK_RET		3
#define HWVG_JK_CLIENTREQ	4
#define HWVG_JK_YIELD		5
#define HWVG_JK_EMWARN		6
#define HWVG_JK_EMFAIL		7
#define HWVG_JK_NODECODE	8
#define HWVG_JK_MAPFAIL		9
#define HWVG_JK_INVALICACHE	10
#define HWVG_JK_FLUSHDCACHE	11
#define HWVG_JK_NOREDIR		12
#define HWVG_JK_SIGILL		13
#define HWVG_JK_SIGTRAP		14
#define HWVG_JK_SIGSEGV		15
#define HWVG_JK_SIGBUS		16
#define HWVG_JK_SIGFPE		17
#define HWVG_JK_SIGFPE_INTDIV	18
#define HWVG_JK_SIGFPE_INTOVF	19
#define HWVG_JK_SYS_SYSCALL	20

/* Exit status of valgrind.bin when the tool itself failed. */
#define HWVG_EXIT_TOOL_ERROR	125

#endif /* !HWTR_VGEVENTS_H */
