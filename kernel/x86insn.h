/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * x86 instruction classification for the software trace sources (private
 * to kernel/; Zydis is included by kernel/x86insn.c only).  The classes are
 * the ones libipt's decoder distinguishes, so a source knows which PT
 * encoder call an instruction needs.
 */

#ifndef HWTR_X86INSN_H
#define HWTR_X86INSN_H

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
	HWTR_X86_FAR,		/* far jmp/call/ret, iret */
	HWTR_X86_BAD		/* could not be decoded */
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
	uint8_t		rep;		/* a rep-prefixed string instruction */
	uint8_t		is_int;		/* int n / int3 / into / int1 */
	uint8_t		vmexit;		/* enum hwtr_x86_vmexit */
	uint64_t	target;		/* direct branches: the target */
};

/*
 * Decode the instruction at @ip from @buf[0..@len) in 64-bit (@mode64) or
 * 32-bit mode.  Returns 0, or -HWTR_E_DECODE with @insn->kind
 * HWTR_X86_BAD.
 */
int hwtr_x86_decode(const uint8_t *buf, size_t len, uint64_t ip, int mode64,
    struct hwtr_x86_insn *insn);

/* A static name for @kind ("jcc", "call", ...). */
const char *hwtr_x86_kind_name(int kind);

/* A static name for @vmexit ("cpuid", "io", ...). */
const char *hwtr_x86_vmexit_name(int vmexit);

#endif /* !HWTR_X86INSN_H */
