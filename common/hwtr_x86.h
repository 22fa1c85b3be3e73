/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The one x86 instruction helper (common/x86.c, the only file that
 * includes Zydis): length, control-flow class and direct target of an
 * instruction, and its disassembly.  The step source classifies what a
 * thread executes with it, the valgrind converter what a superblock
 * holds, the indexer lays out the instructions of a block with it, and
 * the query verbs disassemble.  The classes are the ones libipt's decoder
 * distinguishes, so a tracer knows which PT encoder call an instruction
 * needs and the indexer which kind a branch is.
 */

#ifndef HWTR_X86_H
#define HWTR_X86_H

#include <stddef.h>
#include <stdint.h>

enum hwtr_x86_kind {
	HWTR_X86_OTHER = 0,	/* no control transfer */
	HWTR_X86_JCC,		/* jcc, jrcxz, loop*: hwtr_ptenc_cond */
	HWTR_X86_JMP,		/* direct near jump: nothing */
	HWTR_X86_JMP_IND,	/* indirect near jump: hwtr_ptenc_indirect */
	HWTR_X86_CALL,		/* direct near call */
	HWTR_X86_CALL_IND,	/* indirect near call */
	HWTR_X86_RET,		/* near return */
	HWTR_X86_SYSCALL,	/* syscall, sysenter, int n, int3, into, int1 */
	HWTR_X86_FAR,		/* far jmp/call/ret, iret, sysret, sysexit */
	HWTR_X86_BAD		/* could not be decoded */
};

/* What a HWTR_X86_SYSCALL or HWTR_X86_FAR transfer is, as libipt says. */
enum hwtr_x86_far {
	HWTR_X86_FAR_NONE = 0,
	HWTR_X86_FAR_CALL,	/* far call, syscall, sysenter, int n */
	HWTR_X86_FAR_JUMP,	/* far jmp */
	HWTR_X86_FAR_RET	/* far ret, iret, sysret, sysexit */
};

/*
 * Unprivileged instructions that a hypervisor may intercept and emulate
 * (a VM exit).  Some hypervisors deliver the single-step trap of such an
 * instruction one instruction late; the step source probes for that.
 */
enum hwtr_x86_vmexit {
	HWTR_X86_VMX_NONE = 0,
	HWTR_X86_VMX_CPUID,
	HWTR_X86_VMX_XGETBV,
	HWTR_X86_VMX_RDTSC,
	HWTR_X86_VMX_RDTSCP,
	HWTR_X86_VMX_RDPMC,
	HWTR_X86_VMX_RDPID,
	HWTR_X86_VMX_IO,	/* in, out, ins, outs */
	HWTR_X86_VMX_MWAIT,	/* monitor(x), mwait(x) */
	HWTR_X86_VMX_OTHER,	/* vmcall, vmmcall, hlt, wbinvd, invd, xsetbv */
	HWTR_X86_VMX_MAX
};

struct hwtr_x86_insn {
	uint8_t		len;
	uint8_t		kind;		/* enum hwtr_x86_kind */
	uint8_t		far;		/* enum hwtr_x86_far */
	uint8_t		rep;		/* a rep-prefixed string instruction */
	uint8_t		is_int;		/* int n / int3 / into / int1 */
	uint8_t		vmexit;		/* enum hwtr_x86_vmexit */
	uint8_t		has_target;	/* a direct (relative) branch */
	uint64_t	target;		/* ... its target */
};

/*
 * Decode the instruction at @ip from @buf[0..@len) in 16, 32 or 64-bit
 * @mode.  Returns 0, or -HWTR_E_DECODE with @insn->kind HWTR_X86_BAD, or
 * -HWTR_E_INVAL for another @mode.  Only the instruction's header is
 * decoded, not its operands: it is called for every instruction a thread
 * executes.
 */
int hwtr_x86_decode(const uint8_t *buf, size_t len, uint64_t ip, int mode,
    struct hwtr_x86_insn *insn);

/*
 * Disassemble the instruction at @ip from @code[0..@len) in Intel syntax
 * into @buf (@buflen; may be NULL to learn the length only), memory
 * operands with their size and branch targets in short hex as objdump and
 * gdb print them.  Returns its length, or -HWTR_E_DECODE, -HWTR_E_INVAL
 * (@mode not 16, 32 or 64) or -HWTR_E_UNSUPPORTED.
 */
int hwtr_x86_disasm(const uint8_t *code, size_t len, uint64_t ip, int mode,
    char *buf, size_t buflen);

/* The registers of a stopped thread that hwtr_x86_went() reads. */
struct hwtr_x86_state {
	uint64_t	gpr[16];	/* rax rcx rdx rbx rsp rbp rsi rdi r8-r15 */
	uint64_t	rflags;
	uint64_t	fs_base;
	uint64_t	gs_base;
};

/* Read @n bytes at @addr of the thread's memory into @buf: 0, or < 0. */
typedef int (*hwtr_x86_read_fn)(void *arg, uint64_t addr, void *buf,
    size_t n);

/*
 * Where the near branch at @ip (@code[0..@len), @mode) went, told from
 * the thread's state @s just after it ran and its memory (@rd, @arg): a
 * conditional branch by the flags (and rcx for jrcxz and loop), an
 * indirect jump or call by its operand, a return by the address it
 * popped, a direct jump or call by its target.  1 and *@to set; 0 when
 * the state cannot tell (not a near branch, a far one, an operand
 * unread); < 0 when @code does not decode.
 */
int hwtr_x86_went(const uint8_t *code, size_t len, uint64_t ip, int mode,
    const struct hwtr_x86_state *s, hwtr_x86_read_fn rd, void *arg,
    uint64_t *to);

/* A static name for @kind ("jcc", "call", ...). */
const char *hwtr_x86_kind_name(int kind);

/* A static name for @vmexit ("cpuid", "io", ...). */
const char *hwtr_x86_vmexit_name(int vmexit);

#endif /* !HWTR_X86_H */
