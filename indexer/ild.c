/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * A small x86 instruction length decoder.
 *
 * libipt's block decoder says where a block starts, where its last
 * instruction is and how many instructions it holds, but not where the
 * instructions in between begin; the database keeps their lengths so that
 * the instruction history can be expanded without a disassembler, and the
 * branch table wants to know whether a call or jump was direct.  libipt
 * does not export its own length decoder and Zydis belongs to kernel/, so
 * this one decodes just enough: prefixes, REX/VEX/EVEX/XOP, opcode maps,
 * ModRM/SIB/displacement and immediate sizes.
 */

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hwtr_ix.h"

/* Bits of the per-opcode tables. */
#define M	0x01	/* ModRM follows */
#define I8	0x02	/* imm8 */
#define IZ	0x04	/* imm16/32 by operand size */
#define IV	0x08	/* imm16/32/64 by operand size (mov r, imm) */
#define I16	0x10	/* imm16 */
#define MO	0x20	/* moffs: address size */
#define FP	0x40	/* far pointer: imm16/32 + 16 */
#define XX	0x80	/* prefix or special: handled in code */

static const uint8_t map1[256] = {
	/* 00 */ M, M, M, M, I8, IZ, 0, 0, M, M, M, M, I8, IZ, 0, XX,
	/* 10 */ M, M, M, M, I8, IZ, 0, 0, M, M, M, M, I8, IZ, 0, 0,
	/* 20 */ M, M, M, M, I8, IZ, XX, 0, M, M, M, M, I8, IZ, XX, 0,
	/* 30 */ M, M, M, M, I8, IZ, XX, 0, M, M, M, M, I8, IZ, XX, 0,
	/* 40 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	/* 50 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	/* 60 */ 0, 0, M, M, XX, XX, XX, XX, IZ, M | IZ, I8, M | I8, 0, 0, 0, 0,
	/* 70 */ I8, I8, I8, I8, I8, I8, I8, I8, I8, I8, I8, I8, I8, I8, I8, I8,
	/* 80 */ M | I8, M | IZ, M | I8, M | I8, M, M, M, M, M, M, M, M, M, M, M, M,
	/* 90 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, FP, 0, 0, 0, 0, 0,
	/* a0 */ MO, MO, MO, MO, 0, 0, 0, 0, I8, IZ, 0, 0, 0, 0, 0, 0,
	/* b0 */ I8, I8, I8, I8, I8, I8, I8, I8, IV, IV, IV, IV, IV, IV, IV, IV,
	/* c0 */ M | I8, M | I8, I16, 0, M, M, M | I8, M | IZ, I16 | I8, 0, I16, 0, 0, I8, 0, 0,
	/* d0 */ M, M, M, M, I8, I8, 0, 0, M, M, M, M, M, M, M, M,
	/* e0 */ I8, I8, I8, I8, I8, I8, I8, I8, IZ, IZ, FP, I8, 0, 0, 0, 0,
	/* f0 */ XX, 0, XX, XX, 0, 0, M, M, 0, 0, 0, 0, 0, 0, M, M,
};

/* The 0F map: everything has ModRM but the listed ones. */
static uint8_t
map2_flags(uint8_t op)
{
	switch (op) {
	case 0x05: case 0x06: case 0x07: case 0x08: case 0x09: case 0x0b:
	case 0x0e: case 0x30: case 0x31: case 0x32: case 0x33: case 0x34:
	case 0x35: case 0x36: case 0x37: case 0x77: case 0xa0: case 0xa1:
	case 0xa2: case 0xa8: case 0xa9: case 0xaa:
		return (0);
	case 0x70: case 0x71: case 0x72: case 0x73: case 0xa4: case 0xac:
	case 0xba: case 0xc2: case 0xc4: case 0xc5: case 0xc6: case 0x0f:
		return (M | I8);
	default:
		break;
	}
	if (op >= 0x80 && op <= 0x8f)
		return (IZ);
	if (op >= 0xc8 && op <= 0xcf)
		return (0);
	return (M);
}

/* Length of ModRM, SIB and displacement at @p; -1 when @n is short. */
static int
modrm_len(const uint8_t *p, size_t n, int asz)
{
	uint8_t modrm, mod, rm;
	int len = 1;

	if (n < 1)
		return (-1);
	modrm = p[0];
	mod = modrm >> 6;
	rm = modrm & 7;
	if (mod == 3)
		return (1);
	if (asz == 16) {
		if (mod == 0 && rm == 6)
			len += 2;
		else if (mod == 1)
			len += 1;
		else if (mod == 2)
			len += 2;
		return (len);
	}
	if (rm == 4) {
		if (n < 2)
			return (-1);
		len++;
		if (mod == 0 && (p[1] & 7) == 5)
			len += 4;
	} else if (mod == 0 && rm == 5)
		len += 4;
	if (mod == 1)
		len += 1;
	else if (mod == 2)
		len += 4;
	return (len);
}

int
hwtr_ild(const uint8_t *p, size_t n, int mode, struct hwtr_ild *out)
{
	size_t i = 0;
	int osz, asz, rexw = 0, flags, ml, vmap = -1;
	uint8_t op = 0, modrm = 0;
	int has_modrm, map1op = 0;

	out->len = 0;
	out->cls = HWTR_IC_OTHER;
	out->has_rel = 0;
	out->rel = 0;
	osz = mode == 16 ? 16 : 32;
	asz = mode;
	/* Legacy prefixes (and REX, which must come last). */
	for (;; i++) {
		if (i >= n || i >= 15)
			return (-1);
		switch (p[i]) {
		case 0x66:
			osz = mode == 16 ? 32 : 16;
			rexw = 0;
			continue;
		case 0x67:
			asz = mode == 64 ? 32 : (mode == 32 ? 16 : 32);
			rexw = 0;
			continue;
		case 0xf0: case 0xf2: case 0xf3: case 0x2e: case 0x36:
		case 0x3e: case 0x26: case 0x64: case 0x65:
			rexw = 0;
			continue;
		default:
			break;
		}
		if (mode == 64 && (p[i] & 0xf0) == 0x40) {
			rexw = (p[i] & 8) != 0;
			continue;
		}
		break;
	}
	if (rexw)
		osz = 64;
	op = p[i];
	/* VEX, EVEX and XOP carry their own map and have ModRM. */
	if ((op == 0xc4 || op == 0xc5 || op == 0x62 || op == 0x8f) &&
	    i + 1 < n && (mode == 64 || (p[i + 1] & 0xc0) == 0xc0 ||
	    op == 0x8f)) {
		if (op == 0xc5) {
			vmap = 1;
			i += 2;
		} else if (op == 0xc4) {
			if (i + 2 >= n)
				return (-1);
			vmap = p[i + 1] & 0x1f;
			i += 3;
		} else if (op == 0x62) {
			if (i + 3 >= n)
				return (-1);
			vmap = p[i + 1] & 0x07;
			i += 4;
		} else if ((p[i + 1] & 0x1f) >= 8) {
			/* XOP: 8F with map 8, 9 or A. */
			if (i + 2 >= n)
				return (-1);
			vmap = 0x100 | (p[i + 1] & 0x1f);
			i += 3;
		}
	}
	if (vmap >= 0) {
		if (i >= n)
			return (-1);
		op = p[i++];
		/* Every VEX instruction has ModRM but vzeroupper/vzeroall. */
		ml = vmap == 1 && op == 0x77 ? 0 : modrm_len(p + i, n - i, asz);
		if (ml < 0)
			return (-1);
		i += (size_t)ml;
		if (vmap == 3 || vmap == 0x108)
			i += 1;
		else if (vmap == 0x10a)
			i += 4;
		else if (vmap == 1 && (map2_flags(op) & I8))
			i += 1;
		if (i > n || i > 15)
			return (-1);
		out->len = (int)i;
		return (0);
	}
	i++;
	if (op == 0x0f) {
		if (i >= n)
			return (-1);
		op = p[i++];
		if (op == 0x38 || op == 0x3a) {
			if (i >= n)
				return (-1);
			flags = M | (op == 0x3a ? I8 : 0);
			i++;
		} else {
			flags = map2_flags(op);
			if (op >= 0x80 && op <= 0x8f)
				out->cls = HWTR_IC_COND;
			else if (op == 0x05 || op == 0x34)
				out->cls = HWTR_IC_FAR_CALL;
			else if (op == 0x07 || op == 0x35)
				out->cls = HWTR_IC_FAR_RET;
		}
		if ((flags & IZ) && mode == 64)
			osz = 32;	/* near branches: rel32 */
	} else {
		map1op = 1;
		flags = map1[op];
		if (flags & XX)
			return (-1);	/* prefix after prefixes: odd */
		if ((op >= 0x70 && op <= 0x7f) || (op >= 0xe0 && op <= 0xe3))
			out->cls = HWTR_IC_COND;
		else if (op == 0xe8) {
			out->cls = HWTR_IC_CALL;
			if (mode == 64)
				osz = 32;
		} else if (op == 0xe9 || op == 0xeb) {
			out->cls = HWTR_IC_JUMP;
			if (mode == 64)
				osz = 32;
		} else if (op == 0xc2 || op == 0xc3)
			out->cls = HWTR_IC_RET;
		else if (op == 0xca || op == 0xcb || op == 0xcf)
			out->cls = HWTR_IC_FAR_RET;
		else if (op == 0xcc || op == 0xcd || op == 0xce || op == 0xf1 ||
		    op == 0x9a)
			out->cls = HWTR_IC_FAR_CALL;
		else if (op == 0xea)
			out->cls = HWTR_IC_FAR_JUMP;
		if (mode != 64 && (op == 0x62 || op == 0xc4 || op == 0xc5))
			flags = M;
	}
	has_modrm = (flags & M) != 0;
	if (has_modrm) {
		if (i >= n)
			return (-1);
		modrm = p[i];
		ml = modrm_len(p + i, n - i, asz);
		if (ml < 0)
			return (-1);
		i += (size_t)ml;
		if (map1op && op == 0xff) {
			switch ((modrm >> 3) & 7) {
			case 2:
				out->cls = HWTR_IC_CALL_IND;
				break;
			case 3:
				out->cls = HWTR_IC_FAR_CALL;
				break;
			case 4:
				out->cls = HWTR_IC_JUMP_IND;
				break;
			case 5:
				out->cls = HWTR_IC_FAR_JUMP;
				break;
			default:
				break;
			}
		}
		/* TEST r/m, imm in group 3. */
		if ((op == 0xf6 || op == 0xf7) && ((modrm >> 3) & 7) < 2)
			flags |= op == 0xf6 ? I8 : IZ;
	}
	if (flags & I8)
		i += 1;
	if (flags & I16)
		i += 2;
	if (flags & IZ)
		i += osz == 16 ? 2 : 4;
	if (flags & IV)
		i += (size_t)osz / 8;
	if (flags & MO)
		i += (size_t)asz / 8;
	if (flags & FP)
		i += (osz == 16 ? 2 : 4) + 2;
	if (i > n || i > 15)
		return (-1);
	out->len = (int)i;
	/* Relative branches: the displacement is the last field. */
	if (out->cls == HWTR_IC_COND || out->cls == HWTR_IC_CALL ||
	    (out->cls == HWTR_IC_JUMP && !has_modrm)) {
		if (flags & I8)
			out->rel = (int8_t)p[i - 1];
		else if (osz == 16) {
			int16_t v;

			memcpy(&v, p + i - 2, 2);
			out->rel = v;
		} else {
			int32_t v;

			memcpy(&v, p + i - 4, 4);
			out->rel = v;
		}
		out->has_rel = 1;
	}
	return (0);
}
