/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * fpt's instructions: decoding one at an address through the code window
 * and the memo of decoded instructions, and what libipt's length decoder
 * says of some that Zydis's categories say otherwise (far transfers,
 * XBEGIN, what binds a PIP or a VMCS), whether the address filters let a
 * branch's target be traced, and the errata libipt works around for the
 * CPU.  Split out of fpt_dec.c and fpt_ev.c.
 */

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "hwtrace.h"
#include "hwtr_x86.h"
#include "fpt_int.h"

static int	is_other(const uint8_t *, size_t, int);
static void	vmx_far(const uint8_t *, size_t, int, struct hwtr_x86_insn *);
static size_t	skip_prefixes(const uint8_t *, size_t, int);

/*
 * Decode the instruction at @ip in the current mode; @isid its image.
 * -HWTR_E_NOENT when nothing is mapped there, -HWTR_E_DECODE when it is
 * no instruction.
 */
int
fpti_decode_at(struct fpt *d, uint64_t ip, struct hwtr_x86_insn *insn,
    int *isid)
{
	struct fpt_icache *ic;
	int rc;

	/*
	 * hwtr_x86 wraps a branch target to the mode's addresses, libipt
	 * does not: 16-bit code, and 32-bit code above 4 GiB, go to libipt.
	 */
	if (d->mode == 16 || (d->mode == 32 && ip > 0xffffffffull))
		return (fpti_unsupported(d, "16-bit code, or 32-bit code "
		    "above 4 GiB"));
	if (ip < d->win_ip || ip + 15 > d->win_ip + d->win_len ||
	    d->win_len == 0) {
		rc = d->cfg.read_code(d->cfg.ctx, ip, d->win,
		    sizeof(d->win), &d->win_isid);
		if (rc <= 0) {
			d->win_len = 0;
			return (-HWTR_E_NOENT);
		}
		d->win_ip = ip;
		d->win_len = (size_t)rc;
	}
	*isid = d->win_isid;
	/* Stepping passes the same code again and again (events' IPs). */
	ic = &d->icache[ip & ((1u << FPT_ICACHE_BITS) - 1)];
	if (ic->ip == ip && ic->isid == d->win_isid && ic->mode == d->mode) {
		*insn = ic->insn;
		return (0);
	}
	rc = hwtr_x86_decode(d->win + (ip - d->win_ip), (size_t)(d->win_ip +
	    d->win_len - ip), ip, d->mode, insn);
	if (rc < 0 || insn->kind == HWTR_X86_BAD) {
		if (d->win_ip + d->win_len - ip < 15 &&
		    d->win_len < sizeof(d->win))
			return (fpti_unsupported(d, "an instruction across the "
			    "end of an image"));
		/*
		 * Zydis refuses what libipt's length decoder accepts (an
		 * opcode invalid in 64-bit mode, as on a wrong branch into
		 * the middle of an instruction): not the same error.
		 */
		return (fpti_unsupported(d, "an instruction hwtr_x86 does not "
		    "decode"));
	}
	/*
	 * XBEGIN (c7 f8) and XABORT (c6 f8) branch only on an abort, which
	 * PT reports as an event; libipt takes them for ordinary
	 * instructions, hwtr_x86 (by Zydis's category) for branches.
	 */
	fpt_x86_libipt(d->win + (ip - d->win_ip), (size_t)(d->win_ip +
	    d->win_len - ip), d->mode, insn);
	assert(d->win_isid > 0);
	ic->ip = ip;
	ic->isid = d->win_isid;
	ic->mode = d->mode;
	ic->insn = *insn;
	return (0);
}

/*
 * What the instruction at d->ip (just decoded) binds: 1 a PIP (a far
 * branch, MOV CR3, VM entry), 2 a VMCS (a far branch, VMPTRLD, VM
 * entry), as libipt's pt_insn_binds_to_pip() and _vmcs() say.
 */
unsigned
fpti_binds(struct fpt *d, const struct hwtr_x86_insn *insn)
{
	const uint8_t *p;
	size_t i, n;

	if (insn->kind == HWTR_X86_FAR || insn->kind == HWTR_X86_SYSCALL)
		return (3);
	if (fpti_writes_cr3(d, d->ip))
		return (1);
	p = d->win + (d->ip - d->win_ip);
	n = (size_t)(d->win_ip + d->win_len - d->ip);
	i = skip_prefixes(p, n, d->mode);
	/* VMPTRLD: 0f c7 /6 with a memory operand. */
	if (i + 2 < n && p[i] == 0x0f && p[i + 1] == 0xc7 &&
	    ((p[i + 2] >> 3) & 7) == 6 && (p[i + 2] >> 6) != 3)
		return (2);
	return (0);
}

/* A mov to CR3 (0f 22 /r with reg 3) at @ip. */
int
fpti_writes_cr3(struct fpt *d, uint64_t ip)
{
	const uint8_t *p;
	size_t i, n;

	assert(ip >= d->win_ip && ip < d->win_ip + d->win_len);
	p = d->win + (ip - d->win_ip);
	n = (size_t)(d->win_ip + d->win_len - ip);
	i = skip_prefixes(p, n, d->mode);
	return (i + 2 < n && p[i] == 0x0f && p[i + 1] == 0x22 &&
	    ((p[i + 2] >> 3) & 7) == 3);
}

/*
 * VMCALL (0f 01 c1), VMLAUNCH, VMRESUME (c2, c3) and UIRET (ec) are far
 * transfers to libipt's length decoder, plain instructions to Zydis's
 * categories.
 */
static void
vmx_far(const uint8_t *p, size_t n, int mode, struct hwtr_x86_insn *insn)
{
	size_t i = skip_prefixes(p, n, mode);

	if (insn->kind != HWTR_X86_OTHER || i + 2 >= n || p[i] != 0x0f ||
	    p[i + 1] != 0x01)
		return;
	switch (p[i + 2]) {
	case 0xc1:
		insn->kind = HWTR_X86_FAR;
		insn->far = HWTR_X86_FAR_CALL;
		break;
	case 0xc2:
	case 0xc3:
	case 0xec:
		insn->kind = HWTR_X86_FAR;
		insn->far = HWTR_X86_FAR_RET;
		break;
	}
}

void
fpt_x86_libipt(const uint8_t *p, size_t n, int mode,
    struct hwtr_x86_insn *insn)
{
	vmx_far(p, n, mode, insn);
	if (insn->kind != HWTR_X86_OTHER && is_other(p, n, mode)) {
		insn->kind = HWTR_X86_OTHER;
		insn->far = HWTR_X86_FAR_NONE;
		insn->is_int = 0;
		insn->has_target = 0;
	}
}

/*
 * Whether @p (@n bytes) is, after its prefixes, an instruction libipt's
 * length decoder takes for no branch that Zydis's categories make one:
 * XBEGIN or XABORT, XEND (0f 01 d5, a conditional branch to Zydis), RSM
 * (0f aa, a return from system management mode); BOUND (62 outside
 * 64-bit mode but for EVEX, whose second byte has its top two bits set),
 * an "interrupt" to Zydis; and
 * anything VEX or EVEX encoded (c4, c5, 62; outside 64-bit mode only
 * with the second byte's top two bits set, else LES, LDS, BOUND), which
 * libipt never classifies, while Zydis makes c5 xx 84 rel32 (Knights
 * Corner's JKZD) a conditional branch.
 */
static int
is_other(const uint8_t *p, size_t n, int mode)
{
	size_t i = skip_prefixes(p, n, mode);

	if (mode != 64 && i + 1 < n && p[i] == 0x62 &&
	    (p[i + 1] & 0xc0) != 0xc0)
		return (1);
	if (i + 1 < n && (p[i] == 0xc4 || p[i] == 0xc5 || p[i] == 0x62) &&
	    (mode == 64 || (p[i + 1] & 0xc0) == 0xc0))
		return (1);
	if (i + 2 < n && p[i] == 0x0f && p[i + 1] == 0x01 && p[i + 2] == 0xd5)
		return (1);
	if (i + 1 < n && p[i] == 0x0f && p[i + 1] == 0xaa)
		return (1);
	return (i + 1 < n && (p[i] == 0xc7 || p[i] == 0xc6) &&
	    p[i + 1] == 0xf8);
}

/* The length of the legacy and REX prefixes at @p. */
static size_t
skip_prefixes(const uint8_t *p, size_t n, int mode)
{
	size_t i = 0;

	while (i < n && i < 14 && (p[i] == 0x66 || p[i] == 0x67 ||
	    p[i] == 0xf0 || p[i] == 0xf2 || p[i] == 0xf3 || p[i] == 0x2e ||
	    p[i] == 0x36 || p[i] == 0x3e || p[i] == 0x26 || p[i] == 0x64 ||
	    p[i] == 0x65 || (mode == 64 && (p[i] & 0xf0) == 0x40)))
		i++;
	return (i);
}

/*
 * Whether tracing is on at @ip by the address ranges, as libipt's
 * pt_filter_addr_check() says: off in a TraceStop region; with filter
 * ranges only inside one.
 */
int
fpti_filter_on(const struct fpt *d, uint64_t ip)
{
	unsigned i;
	int filters = 0;

	for (i = 0; i < 4; i++)
		if (d->cfg.filter_cfg[i] == 2 && d->cfg.filter_a[i] <= ip &&
		    ip <= d->cfg.filter_b[i])
			return (0);
	for (i = 0; i < 4; i++) {
		if (d->cfg.filter_cfg[i] != 1)
			continue;
		if (d->cfg.filter_a[i] <= ip && ip <= d->cfg.filter_b[i])
			return (1);
		filters = 1;
	}
	return (!filters);
}

/*
 * The errata libipt's pt_cpu_errata() selects for a CPU (from libipt's
 * documentation of struct pt_errata and its model list).
 */
void
fpti_set_errata(struct fpt *d)
{
	if (!d->cfg.intel || d->cfg.family != 6)
		return;
	switch (d->cfg.model) {
	case 0x3d: case 0x47: case 0x4f: case 0x56:
		d->bdm70 = d->bdm64 = 1;
		break;
	case 0x4e: case 0x5e: case 0x8e: case 0x9e: case 0xa5: case 0xa6:
		d->bdm70 = d->skd007 = d->skd022 = d->skd010 = d->skl014 = 1;
		d->skl168 = 1;
		break;
	case 0x55: case 0x6a: case 0x6c: case 0x8f:
		d->bdm70 = d->skl014 = d->skd022 = d->skz84 = 1;
		break;
	case 0x66: case 0x7d: case 0x7e: case 0x8c: case 0x8d: case 0xa7:
	case 0xa8:
		d->bdm70 = d->skl014 = d->skd022 = 1;
		break;
	case 0x97: case 0x9a: case 0xbf:
		d->bdm70 = d->skl014 = d->skd022 = d->apl11 = 1;
		break;
	case 0x5c: case 0x5f:
		d->apl12 = d->apl11 = 1;
		break;
	case 0x7a: case 0x86: case 0x96: case 0x9c:
		d->apl11 = 1;
		break;
	}
}
