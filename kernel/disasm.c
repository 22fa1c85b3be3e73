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
	ZydisDisassembledInstruction insn;
	ZydisMachineMode mm;

	switch (mode) {
	case 16:
		mm = ZYDIS_MACHINE_MODE_LEGACY_16;
		break;
	case 32:
		mm = ZYDIS_MACHINE_MODE_LEGACY_32;
		break;
	case 64:
		mm = ZYDIS_MACHINE_MODE_LONG_64;
		break;
	default:
		return (-HWTR_E_INVAL);
	}
	if (code == NULL || len == 0)
		return (-HWTR_E_DECODE);
	if (!ZYAN_SUCCESS(ZydisDisassembleIntel(mm, ip, code, len, &insn)))
		return (-HWTR_E_DECODE);
	if (buf != NULL && buflen > 0)
		snprintf(buf, buflen, "%s", insn.text);
	return (insn.info.length);
}
