/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * x86 instruction classification with Zydis (kernel/ is the one module
 * that includes Zydis).  Only the instruction header is decoded, not the
 * operands: the class, the length, a rep prefix and the relative
 * immediate of direct branches are all a tracer needs, and this is called
 * for every instruction a thread executes.
 */

#include <string.h>

#include <Zydis/Zydis.h>

#include "hwtr_common.h"
#include "x86insn.h"

static uint8_t
vmexit_class(ZydisMnemonic m)
{
	switch (m) {
	case ZYDIS_MNEMONIC_CPUID:
		return (HWTR_X86_VMX_CPUID);
	case ZYDIS_MNEMONIC_XGETBV:
		return (HWTR_X86_VMX_XGETBV);
	case ZYDIS_MNEMONIC_RDTSC:
		return (HWTR_X86_VMX_RDTSC);
	case ZYDIS_MNEMONIC_RDTSCP:
		return (HWTR_X86_VMX_RDTSCP);
	case ZYDIS_MNEMONIC_RDPMC:
		return (HWTR_X86_VMX_RDPMC);
	case ZYDIS_MNEMONIC_RDPID:
		return (HWTR_X86_VMX_RDPID);
	case ZYDIS_MNEMONIC_IN:
	case ZYDIS_MNEMONIC_OUT:
	case ZYDIS_MNEMONIC_INSB:
	case ZYDIS_MNEMONIC_INSW:
	case ZYDIS_MNEMONIC_INSD:
	case ZYDIS_MNEMONIC_OUTSB:
	case ZYDIS_MNEMONIC_OUTSW:
	case ZYDIS_MNEMONIC_OUTSD:
		return (HWTR_X86_VMX_IO);
	case ZYDIS_MNEMONIC_MONITOR:
	case ZYDIS_MNEMONIC_MONITORX:
	case ZYDIS_MNEMONIC_MWAIT:
	case ZYDIS_MNEMONIC_MWAITX:
		return (HWTR_X86_VMX_MWAIT);
	case ZYDIS_MNEMONIC_VMCALL:
	case ZYDIS_MNEMONIC_VMMCALL:
	case ZYDIS_MNEMONIC_HLT:
	case ZYDIS_MNEMONIC_WBINVD:
	case ZYDIS_MNEMONIC_INVD:
	case ZYDIS_MNEMONIC_XSETBV:
		return (HWTR_X86_VMX_OTHER);
	default:
		return (HWTR_X86_VMX_NONE);
	}
}

int
hwtr_x86_decode(const uint8_t *buf, size_t len, uint64_t ip, int mode64,
    struct hwtr_x86_insn *insn)
{
	ZydisDecoder dec;
	ZydisDecodedInstruction zi;
	int far, rel;

	memset(insn, 0, sizeof(*insn));
	if (mode64)
		ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64,
		    ZYDIS_STACK_WIDTH_64);
	else
		ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_COMPAT_32,
		    ZYDIS_STACK_WIDTH_32);
	if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&dec, NULL, buf, len,
	    &zi))) {
		insn->kind = HWTR_X86_BAD;
		return (-HWTR_E_DECODE);
	}
	insn->len = zi.length;
	insn->vmexit = vmexit_class(zi.mnemonic);
	far = zi.meta.branch_type == ZYDIS_BRANCH_TYPE_FAR;
	rel = zi.raw.imm[0].is_relative;
	if (rel) {
		insn->target = ip + zi.length + (uint64_t)zi.raw.imm[0].value.s;
		if (!mode64)
			insn->target &= 0xffffffffu;
	}
	switch (zi.meta.category) {
	case ZYDIS_CATEGORY_COND_BR:
		insn->kind = HWTR_X86_JCC;
		break;
	case ZYDIS_CATEGORY_UNCOND_BR:
		insn->kind = far ? HWTR_X86_FAR :
		    rel ? HWTR_X86_JMP : HWTR_X86_JMP_IND;
		break;
	case ZYDIS_CATEGORY_CALL:
		insn->kind = far ? HWTR_X86_FAR :
		    rel ? HWTR_X86_CALL : HWTR_X86_CALL_IND;
		break;
	case ZYDIS_CATEGORY_RET:
		if (zi.mnemonic == ZYDIS_MNEMONIC_IRET ||
		    zi.mnemonic == ZYDIS_MNEMONIC_IRETD ||
		    zi.mnemonic == ZYDIS_MNEMONIC_IRETQ || far)
			insn->kind = HWTR_X86_FAR;
		else
			insn->kind = HWTR_X86_RET;
		break;
	case ZYDIS_CATEGORY_SYSCALL:
		insn->kind = HWTR_X86_SYSCALL;
		break;
	case ZYDIS_CATEGORY_INTERRUPT:
		if (zi.mnemonic == ZYDIS_MNEMONIC_IRET ||
		    zi.mnemonic == ZYDIS_MNEMONIC_IRETD ||
		    zi.mnemonic == ZYDIS_MNEMONIC_IRETQ) {
			insn->kind = HWTR_X86_FAR;
			break;
		}
		insn->kind = HWTR_X86_SYSCALL;
		insn->is_int = 1;
		break;
	case ZYDIS_CATEGORY_STRINGOP:
		insn->rep = (zi.attributes & (ZYDIS_ATTRIB_HAS_REP |
		    ZYDIS_ATTRIB_HAS_REPE | ZYDIS_ATTRIB_HAS_REPNE)) != 0;
		insn->kind = HWTR_X86_OTHER;
		break;
	default:
		insn->kind = HWTR_X86_OTHER;
		break;
	}
	return (0);
}

const char *
hwtr_x86_kind_name(int kind)
{
	static const char *const names[] = {
		"other", "jcc", "jmp", "jmp-indirect", "call",
		"call-indirect", "ret", "syscall", "far", "bad"
	};

	if (kind < 0 || (size_t)kind >= HWTR_NELEM(names))
		return ("unknown");
	return (names[kind]);
}

const char *
hwtr_x86_vmexit_name(int vmexit)
{
	static const char *const names[] = {
		"none", "cpuid", "xgetbv", "rdtsc", "rdtscp", "rdpmc",
		"rdpid", "io", "mwait", "other"
	};

	if (vmexit < 0 || (size_t)vmexit >= HWTR_NELEM(names))
		return ("unknown");
	return (names[vmexit]);
}
