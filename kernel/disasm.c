/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * One-instruction disassembly for the query verbs.  Zydis belongs to
 * kernel/ (the step tracer classifies instructions with it), so the helper
 * lives here and query/ calls it through hwtrace.h without seeing a Zydis
 * type.
 */

#include <Zydis/Zydis.h>
#include <stdio.h>
#include <string.h>

#include "hwtrace.h"

int
hwtr_disasm(const uint8_t *code, size_t len, uint64_t ip, int mode,
    char *buf, size_t buflen)
{
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	ZydisDecodedInstruction insn;
	ZydisDecoder dec;
	ZydisFormatter fmt;
	ZydisMachineMode mm;
	ZydisStackWidth sw;
	char text[128];

	switch (mode) {
	case 16:
		mm = ZYDIS_MACHINE_MODE_LEGACY_16;
		sw = ZYDIS_STACK_WIDTH_16;
		break;
	case 32:
		mm = ZYDIS_MACHINE_MODE_LEGACY_32;
		sw = ZYDIS_STACK_WIDTH_32;
		break;
	case 64:
		mm = ZYDIS_MACHINE_MODE_LONG_64;
		sw = ZYDIS_STACK_WIDTH_64;
		break;
	default:
		return (-HWTR_E_INVAL);
	}
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
