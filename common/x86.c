/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The x86 helper over Zydis (hwtr_x86.h): every module that looks at x86
 * instructions comes here, so that one decoder says what an instruction
 * is everywhere.
 */

#include <stdio.h>
#include <string.h>

#include <Zydis/Zydis.h>

#include "hwtr_common.h"
#include "hwtr_x86.h"

static int
machine(int mode, ZydisMachineMode *mm, ZydisStackWidth *sw)
{
	switch (mode) {
	case 16:
		*mm = ZYDIS_MACHINE_MODE_LEGACY_16;
		*sw = ZYDIS_STACK_WIDTH_16;
		return (0);
	case 32:
		*mm = ZYDIS_MACHINE_MODE_LONG_COMPAT_32;
		*sw = ZYDIS_STACK_WIDTH_32;
		return (0);
	case 64:
		*mm = ZYDIS_MACHINE_MODE_LONG_64;
		*sw = ZYDIS_STACK_WIDTH_64;
		return (0);
	default:
		return (-HWTR_E_INVAL);
	}
}

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

static int
is_iret(ZydisMnemonic m)
{
	return (m == ZYDIS_MNEMONIC_IRET || m == ZYDIS_MNEMONIC_IRETD ||
	    m == ZYDIS_MNEMONIC_IRETQ);
}

int
hwtr_x86_decode(const uint8_t *buf, size_t len, uint64_t ip, int mode,
    struct hwtr_x86_insn *insn)
{
	ZydisDecoder dec;
	ZydisDecodedInstruction zi;
	ZydisMachineMode mm;
	ZydisStackWidth sw;
	int far, rel;

	memset(insn, 0, sizeof(*insn));
	if (machine(mode, &mm, &sw) < 0) {
		insn->kind = HWTR_X86_BAD;
		return (-HWTR_E_INVAL);
	}
	if (!ZYAN_SUCCESS(ZydisDecoderInit(&dec, mm, sw)) ||
	    !ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&dec, NULL, buf, len,
	    &zi))) {
		insn->kind = HWTR_X86_BAD;
		return (-HWTR_E_DECODE);
	}
	insn->len = zi.length;
	insn->vmexit = vmexit_class(zi.mnemonic);
	far = zi.meta.branch_type == ZYDIS_BRANCH_TYPE_FAR;
	rel = zi.raw.imm[0].is_relative;
	switch (zi.meta.category) {
	case ZYDIS_CATEGORY_COND_BR:
		insn->kind = HWTR_X86_JCC;
		break;
	case ZYDIS_CATEGORY_UNCOND_BR:
		insn->kind = far ? HWTR_X86_FAR :
		    rel ? HWTR_X86_JMP : HWTR_X86_JMP_IND;
		insn->far = far ? HWTR_X86_FAR_JUMP : HWTR_X86_FAR_NONE;
		break;
	case ZYDIS_CATEGORY_CALL:
		insn->kind = far ? HWTR_X86_FAR :
		    rel ? HWTR_X86_CALL : HWTR_X86_CALL_IND;
		insn->far = far ? HWTR_X86_FAR_CALL : HWTR_X86_FAR_NONE;
		break;
	case ZYDIS_CATEGORY_RET:
		if (is_iret(zi.mnemonic) || far) {
			insn->kind = HWTR_X86_FAR;
			insn->far = HWTR_X86_FAR_RET;
		} else
			insn->kind = HWTR_X86_RET;
		break;
	case ZYDIS_CATEGORY_SYSCALL:
		insn->kind = HWTR_X86_SYSCALL;
		insn->far = HWTR_X86_FAR_CALL;
		break;
	case ZYDIS_CATEGORY_SYSRET:
		insn->kind = HWTR_X86_FAR;
		insn->far = HWTR_X86_FAR_RET;
		break;
	case ZYDIS_CATEGORY_INTERRUPT:
		if (is_iret(zi.mnemonic)) {
			insn->kind = HWTR_X86_FAR;
			insn->far = HWTR_X86_FAR_RET;
			break;
		}
		insn->kind = HWTR_X86_SYSCALL;
		insn->far = HWTR_X86_FAR_CALL;
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
	if (rel && (insn->kind == HWTR_X86_JCC || insn->kind == HWTR_X86_JMP ||
	    insn->kind == HWTR_X86_CALL)) {
		insn->has_target = 1;
		insn->target = ip + zi.length +
		    (uint64_t)zi.raw.imm[0].value.s;
		if (mode == 32)
			insn->target &= 0xffffffffu;
		else if (mode == 16)
			insn->target &= 0xffffu;
	}
	return (0);
}

int
hwtr_x86_disasm(const uint8_t *code, size_t len, uint64_t ip, int mode,
    char *buf, size_t buflen)
{
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	ZydisDecodedInstruction insn;
	ZydisDecoder dec;
	ZydisFormatter fmt;
	ZydisMachineMode mm;
	ZydisStackWidth sw;
	char text[128];

	if (machine(mode, &mm, &sw) < 0)
		return (-HWTR_E_INVAL);
	if (code == NULL || len == 0)
		return (-HWTR_E_DECODE);
	/*
	 * Memory operands always carry their size ("dword ptr"), as objdump,
	 * gdb and libipt's ptxed print them; Zydis leaves it out where the
	 * other operand implies it.  Branch targets and other absolute
	 * addresses are short lowercase hex ("jle 0x109182"), as gdb prints
	 * them, not padded to 16 digits; immediates lowercase too.
	 */
	if (!ZYAN_SUCCESS(ZydisDecoderInit(&dec, mm, sw)) ||
	    !ZYAN_SUCCESS(ZydisFormatterInit(&fmt, ZYDIS_FORMATTER_STYLE_INTEL)) ||
	    !ZYAN_SUCCESS(ZydisFormatterSetProperty(&fmt,
	    ZYDIS_FORMATTER_PROP_FORCE_SIZE, ZYAN_TRUE)) ||
	    !ZYAN_SUCCESS(ZydisFormatterSetProperty(&fmt,
	    ZYDIS_FORMATTER_PROP_ADDR_PADDING_ABSOLUTE, ZYDIS_PADDING_DISABLED)) ||
	    !ZYAN_SUCCESS(ZydisFormatterSetProperty(&fmt,
	    ZYDIS_FORMATTER_PROP_HEX_UPPERCASE, ZYAN_FALSE)))
		return (-HWTR_E_UNSUPPORTED);
	if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, code, len, &insn, ops)))
		return (-HWTR_E_DECODE);
	if (!ZYAN_SUCCESS(ZydisFormatterFormatInstruction(&fmt, &insn, ops,
	    insn.operand_count_visible, text, sizeof(text), ip, NULL)))
		return (-HWTR_E_DECODE);
	if (buf != NULL && buflen > 0)
		snprintf(buf, buflen, "%s", text);
	return (insn.length);
}

/* The flag bits of rflags that conditions read. */
#define FL_CF	(1u << 0)
#define FL_PF	(1u << 2)
#define FL_ZF	(1u << 6)
#define FL_SF	(1u << 7)
#define FL_OF	(1u << 11)

/*
 * Whether the conditional branch @m is taken with flags @f and count
 * register @c (already masked to the address size; loop* decremented it
 * before testing, so @c is the value after).  -1: not a condition known.
 */
static int
cond_taken(ZydisMnemonic m, uint64_t f, uint64_t c)
{
	int cf = !!(f & FL_CF), pf = !!(f & FL_PF), zf = !!(f & FL_ZF);
	int sf = !!(f & FL_SF), of = !!(f & FL_OF);

	switch (m) {
	case ZYDIS_MNEMONIC_JO:		return (of);
	case ZYDIS_MNEMONIC_JNO:	return (!of);
	case ZYDIS_MNEMONIC_JB:		return (cf);
	case ZYDIS_MNEMONIC_JNB:	return (!cf);
	case ZYDIS_MNEMONIC_JZ:		return (zf);
	case ZYDIS_MNEMONIC_JNZ:	return (!zf);
	case ZYDIS_MNEMONIC_JBE:	return (cf || zf);
	case ZYDIS_MNEMONIC_JNBE:	return (!cf && !zf);
	case ZYDIS_MNEMONIC_JS:		return (sf);
	case ZYDIS_MNEMONIC_JNS:	return (!sf);
	case ZYDIS_MNEMONIC_JP:		return (pf);
	case ZYDIS_MNEMONIC_JNP:	return (!pf);
	case ZYDIS_MNEMONIC_JL:		return (sf != of);
	case ZYDIS_MNEMONIC_JNL:	return (sf == of);
	case ZYDIS_MNEMONIC_JLE:	return (zf || sf != of);
	case ZYDIS_MNEMONIC_JNLE:	return (!zf && sf == of);
	case ZYDIS_MNEMONIC_JCXZ:
	case ZYDIS_MNEMONIC_JECXZ:
	case ZYDIS_MNEMONIC_JRCXZ:	return (c == 0);
	case ZYDIS_MNEMONIC_LOOP:	return (c != 0);
	case ZYDIS_MNEMONIC_LOOPE:	return (c != 0 && zf);
	case ZYDIS_MNEMONIC_LOOPNE:	return (c != 0 && !zf);
	default:			return (-1);
	}
}

/* @v masked to @bits (16, 32 or 64). */
static uint64_t
width(uint64_t v, unsigned bits)
{
	return (bits >= 64 ? v : v & ((UINT64_C(1) << bits) - 1));
}

/*
 * The value of a near branch's operand @op: a general register from @s
 * (rsp as @rsp, its value before the branch), or the memory it names
 * (@ctx the registers, segments fs and gs by their bases).  0, or -1
 * when it cannot be had.
 */
static int
operand_value(const ZydisDecodedInstruction *zi, const ZydisDecodedOperand *op,
    uint64_t ip, const struct hwtr_x86_state *s, uint64_t rsp,
    const ZydisRegisterContext *ctx, uint64_t clob, unsigned nclob,
    hwtr_x86_read_fn rd, void *arg, uint64_t *v)
{
	ZyanU64 addr;
	uint64_t w = 0;
	unsigned n = op->size / 8;
	int id;

	if (op->type == ZYDIS_OPERAND_TYPE_REGISTER) {
		if (ZydisRegisterGetClass(op->reg.value) != ZYDIS_REGCLASS_GPR64 &&
		    ZydisRegisterGetClass(op->reg.value) != ZYDIS_REGCLASS_GPR32 &&
		    ZydisRegisterGetClass(op->reg.value) != ZYDIS_REGCLASS_GPR16)
			return (-1);
		if ((id = ZydisRegisterGetId(op->reg.value)) < 0 || id > 15)
			return (-1);
		*v = width(id == 4 ? rsp : s->gpr[id], op->size);
		return (0);
	}
	if (op->type != ZYDIS_OPERAND_TYPE_MEMORY || rd == NULL ||
	    (n != 2 && n != 4 && n != 8) ||
	    !ZYAN_SUCCESS(ZydisCalcAbsoluteAddressEx(zi, op, ip, ctx, &addr)))
		return (-1);
	if (op->mem.segment == ZYDIS_REGISTER_FS)
		addr += s->fs_base;
	else if (op->mem.segment == ZYDIS_REGISTER_GS)
		addr += s->gs_base;
	addr = width(addr, zi->address_width);
	/* What the instruction itself wrote there is not what it read. */
	if (nclob > 0 && addr < clob + nclob && clob < addr + n)
		return (-1);
	if (rd(arg, addr, &w, n) < 0)
		return (-1);
	*v = width(w, op->size);
	return (0);
}

int
hwtr_x86_went(const uint8_t *code, size_t len, uint64_t ip, int mode,
    const struct hwtr_x86_state *s, hwtr_x86_read_fn rd, void *arg,
    uint64_t *to)
{
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	ZydisDecodedInstruction zi;
	ZydisRegisterContext ctx;
	ZydisDecoder dec;
	ZydisMachineMode mm;
	ZydisStackWidth sw;
	uint64_t next, target, rsp, v, slot;
	unsigned sbytes = mode == 64 ? 8 : mode == 32 ? 4 : 2;
	int taken, id;

	if (machine(mode, &mm, &sw) < 0)
		return (-HWTR_E_INVAL);
	if (code == NULL || len == 0 ||
	    !ZYAN_SUCCESS(ZydisDecoderInit(&dec, mm, sw)) ||
	    !ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, code, len, &zi, ops)))
		return (-HWTR_E_DECODE);
	next = width(ip + zi.length, (unsigned)mode);
	if (zi.meta.branch_type == ZYDIS_BRANCH_TYPE_FAR)
		return (0);
	switch (zi.meta.category) {
	case ZYDIS_CATEGORY_COND_BR:
		if (ops[0].type != ZYDIS_OPERAND_TYPE_IMMEDIATE ||
		    !ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&zi, &ops[0], ip,
		    &target)))
			return (0);
		taken = cond_taken(zi.mnemonic, s->rflags,
		    width(s->gpr[1], zi.address_width));
		if (taken < 0)
			return (0);
		*to = taken ? target : next;
		return (1);
	case ZYDIS_CATEGORY_UNCOND_BR:
	case ZYDIS_CATEGORY_CALL:
		/* A call pushed its return address: rsp before it. */
		rsp = s->gpr[4];
		if (zi.meta.category == ZYDIS_CATEGORY_CALL)
			rsp = width(rsp + sbytes, (unsigned)mode);
		if (ops[0].type == ZYDIS_OPERAND_TYPE_IMMEDIATE) {
			if (!ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&zi,
			    &ops[0], ip, &target)))
				return (0);
			*to = target;
			return (1);
		}
		memset(&ctx, 0, sizeof(ctx));
		for (id = 0; id < 16; id++) {
			v = id == 4 ? rsp : s->gpr[id];
			ctx.values[ZydisRegisterEncode(ZYDIS_REGCLASS_GPR64,
			    (ZyanU8)id)] = v;
			ctx.values[ZydisRegisterEncode(ZYDIS_REGCLASS_GPR32,
			    (ZyanU8)id)] = v & 0xffffffffu;
			ctx.values[ZydisRegisterEncode(ZYDIS_REGCLASS_GPR16,
			    (ZyanU8)id)] = v & 0xffffu;
		}
		/*
		 * A call's push wrote its return address at rsp now: an
		 * operand read from there (call [rsp - 8]) is gone.
		 */
		if (operand_value(&zi, &ops[0], ip, s, rsp, &ctx,
		    width(s->gpr[4], (unsigned)mode),
		    zi.meta.category == ZYDIS_CATEGORY_CALL ? sbytes : 0,
		    rd, arg, &target) < 0)
			return (0);
		*to = target;
		return (1);
	case ZYDIS_CATEGORY_RET:
		/* ret [imm16]: the address popped lies below rsp now. */
		v = ops[0].type == ZYDIS_OPERAND_TYPE_IMMEDIATE ?
		    ops[0].imm.value.u : 0;
		slot = width(s->gpr[4] - v - sbytes, (unsigned)mode);
		target = 0;
		if (zi.operand_width / 8 > sizeof(target) || rd == NULL ||
		    rd(arg, slot, &target, zi.operand_width / 8) < 0)
			return (0);
		*to = target;
		return (1);
	default:
		return (0);
	}
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
