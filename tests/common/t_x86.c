/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * hwtr_x86_went(): where a branch went, told from the registers and
 * memory after it ran.  The instructions are encoded here by hand from
 * the Intel SDM (volume 2), the conditions from its table of condition
 * codes (the low nibble of 0F 8x), the memory a table of this test's.
 */

#include <atf-c.h>
#include <stdint.h>
#include <string.h>

#include "hwtr_common.h"
#include "hwtr_x86.h"
#include "hwtr_test.h"

enum { RAX, RCX, RDX, RBX, RSP, RBP, RSI, RDI, R8, R9, R10, R11 };

#define CF	(1u << 0)
#define PF	(1u << 2)
#define ZF	(1u << 6)
#define SF	(1u << 7)
#define OF	(1u << 11)

/* The memory the reader serves: a few 8-byte cells; the last read. */
struct mem {
	uint64_t	addr[4];
	uint64_t	val[4];
	int		n;
	uint64_t	last;
	size_t		lastn;
};

static int
rd(void *arg, uint64_t addr, void *buf, size_t n)
{
	struct mem *m = arg;
	int i;

	m->last = addr;
	m->lastn = n;
	for (i = 0; i < m->n; i++)
		if (m->addr[i] == addr) {
			memcpy(buf, &m->val[i], n);
			return (0);
		}
	return (-1);
}

/* Where @code at @ip went from @s and @m, or ~0 when it cannot tell. */
static uint64_t
went(const uint8_t *code, size_t len, uint64_t ip, int mode,
    const struct hwtr_x86_state *s, struct mem *m)
{
	uint64_t to = 0;
	int rc;

	rc = hwtr_x86_went(code, len, ip, mode, s, rd, m, &to);
	ATF_REQUIRE_MSG(rc >= 0, "decode failed: %d", rc);
	return (rc == 1 ? to : ~(uint64_t)0);
}

/* The SDM's condition code @cc (0-15) with the flags @f. */
static int
sdm_cond(unsigned cc, unsigned f)
{
	int cf = !!(f & CF), pf = !!(f & PF), zf = !!(f & ZF);
	int sf = !!(f & SF), of = !!(f & OF), t;

	switch (cc >> 1) {
	case 0: t = of; break;			/* O */
	case 1: t = cf; break;			/* B */
	case 2: t = zf; break;			/* E */
	case 3: t = cf || zf; break;		/* BE */
	case 4: t = sf; break;			/* S */
	case 5: t = pf; break;			/* P */
	case 6: t = sf != of; break;		/* L */
	default: t = zf || sf != of; break;	/* LE */
	}
	return ((cc & 1) ? !t : t);
}

ATF_TC_WITHOUT_HEAD(conditions_follow_the_flags);
ATF_TC_BODY(conditions_follow_the_flags, tc)
{
	static const unsigned bits[] = { CF, PF, ZF, SF, OF };
	struct hwtr_x86_state s;
	struct mem m = { .n = 0 };
	uint8_t rel8[2], rel32[6] = { 0x0f, 0x80, 0x00, 0x01, 0x00, 0x00 };
	unsigned cc, combo, f, k;

	memset(&s, 0, sizeof(s));
	for (cc = 0; cc < 16; cc++)
		for (combo = 0; combo < 32; combo++) {
			for (f = 0, k = 0; k < 5; k++)
				if (combo & (1u << k))
					f |= bits[k];
			s.rflags = f | 0x202;
			/* jcc rel8 +0x10 at 0x1000: 0x1012 or 0x1002. */
			rel8[0] = (uint8_t)(0x70 + cc);
			rel8[1] = 0x10;
			ATF_CHECK_EQ_MSG(went(rel8, 2, 0x1000, 64, &s, &m),
			    sdm_cond(cc, f) ? 0x1012u : 0x1002u,
			    "cc %u flags %#x (rel8)", cc, f);
			/* jcc rel32 +0x100 at 0x2000: 0x2106 or 0x2006. */
			rel32[1] = (uint8_t)(0x80 + cc);
			ATF_CHECK_EQ_MSG(went(rel32, 6, 0x2000, 64, &s, &m),
			    sdm_cond(cc, f) ? 0x2106u : 0x2006u,
			    "cc %u flags %#x (rel32)", cc, f);
		}
}

ATF_TC_WITHOUT_HEAD(count_register_branches);
ATF_TC_BODY(count_register_branches, tc)
{
	static const uint8_t jrcxz[] = { 0xe3, 0x05 };
	static const uint8_t jecxz[] = { 0x67, 0xe3, 0x05 };
	static const uint8_t loop[] = { 0xe2, 0xfe };
	static const uint8_t loope[] = { 0xe1, 0xfe };
	static const uint8_t loopne[] = { 0xe0, 0xfe };
	struct hwtr_x86_state s;
	struct mem m = { .n = 0 };

	memset(&s, 0, sizeof(s));
	s.gpr[RCX] = 0;
	ATF_CHECK_EQ(went(jrcxz, 2, 0x1000, 64, &s, &m), 0x1007u);
	s.gpr[RCX] = 1;
	ATF_CHECK_EQ(went(jrcxz, 2, 0x1000, 64, &s, &m), 0x1002u);
	/* jecxz looks at ecx only. */
	s.gpr[RCX] = UINT64_C(0x100000000);
	ATF_CHECK_EQ(went(jecxz, 3, 0x1000, 64, &s, &m), 0x1008u);
	ATF_CHECK_EQ(went(jrcxz, 2, 0x1000, 64, &s, &m), 0x1002u);
	/* loop to itself: rcx is the count after the decrement. */
	s.gpr[RCX] = 0;
	ATF_CHECK_EQ(went(loop, 2, 0x1000, 64, &s, &m), 0x1002u);
	s.gpr[RCX] = 3;
	ATF_CHECK_EQ(went(loop, 2, 0x1000, 64, &s, &m), 0x1000u);
	s.rflags = ZF;
	ATF_CHECK_EQ(went(loope, 2, 0x1000, 64, &s, &m), 0x1000u);
	ATF_CHECK_EQ(went(loopne, 2, 0x1000, 64, &s, &m), 0x1002u);
	s.rflags = 0;
	ATF_CHECK_EQ(went(loope, 2, 0x1000, 64, &s, &m), 0x1002u);
	ATF_CHECK_EQ(went(loopne, 2, 0x1000, 64, &s, &m), 0x1000u);
}

ATF_TC_WITHOUT_HEAD(indirect_jumps_and_calls);
ATF_TC_BODY(indirect_jumps_and_calls, tc)
{
	static const uint8_t jmp_rax[] = { 0xff, 0xe0 };
	static const uint8_t jmp_rip[] = { 0xff, 0x25, 0x10, 0, 0, 0 };
	static const uint8_t call_rsp8[] = { 0xff, 0x54, 0x24, 0x08 };
	static const uint8_t call_rspm8[] = { 0xff, 0x54, 0x24, 0xf8 };
	static const uint8_t call_rspm4[] = { 0xff, 0x54, 0x24, 0xfc };
	static const uint8_t jmp_rspm8[] = { 0xff, 0x64, 0x24, 0xf8 };
	static const uint8_t call_r11[] = { 0x41, 0xff, 0xd3 };
	static const uint8_t jmp_fs[] = { 0x64, 0xff, 0x24, 0x25,
	    0x28, 0, 0, 0 };
	static const uint8_t jmp_idx[] = { 0xff, 0x24, 0xc5,
	    0x00, 0x30, 0, 0 };
	struct hwtr_x86_state s;
	struct mem m = { .n = 0 };

	memset(&s, 0, sizeof(s));
	s.gpr[RAX] = 0x4000;
	ATF_CHECK_EQ(went(jmp_rax, 2, 0x1000, 64, &s, &m), 0x4000u);
	s.gpr[R11] = 0x4444;
	ATF_CHECK_EQ(went(call_r11, 3, 0x1000, 64, &s, &m), 0x4444u);
	/* jmp [rip + 0x10] at 0x1000 reads 0x1016. */
	m.addr[0] = 0x1016;
	m.val[0] = 0x5555;
	m.n = 1;
	ATF_CHECK_EQ(went(jmp_rip, 6, 0x1000, 64, &s, &m), 0x5555u);
	ATF_CHECK_EQ(m.last, 0x1016u);
	ATF_CHECK_EQ(m.lastn, 8u);
	/* call [rsp + 8]: rsp was 8 more before the call pushed. */
	s.gpr[RSP] = 0x7000;
	m.addr[0] = 0x7010;
	m.val[0] = 0x6666;
	ATF_CHECK_EQ(went(call_rsp8, 4, 0x1000, 64, &s, &m), 0x6666u);
	/*
	 * call [rsp - 8] read the slot its push then wrote (rsp now): the
	 * return address is there, not the target, so it cannot tell; nor
	 * from 4 bytes of it, whatever the reader would serve.
	 */
	m.addr[0] = 0x7000;
	m.val[0] = 0x1004;
	ATF_CHECK_EQ(went(call_rspm8, 4, 0x1000, 64, &s, &m), ~(uint64_t)0);
	m.addr[0] = 0x7004;
	ATF_CHECK_EQ(went(call_rspm4, 4, 0x1000, 64, &s, &m), ~(uint64_t)0);
	/* jmp [rsp - 8] pushed nothing: the slot is what it read. */
	m.addr[0] = 0x6ff8;
	m.val[0] = 0x6767;
	ATF_CHECK_EQ(went(jmp_rspm8, 4, 0x1000, 64, &s, &m), 0x6767u);
	/* jmp fs:[0x28] adds fs's base. */
	s.fs_base = 0x9000;
	m.addr[0] = 0x9028;
	m.val[0] = 0x7777;
	ATF_CHECK_EQ(went(jmp_fs, 8, 0x1000, 64, &s, &m), 0x7777u);
	/* jmp [rax * 8 + 0x3000]: a jump table. */
	s.gpr[RAX] = 3;
	m.addr[0] = 0x3018;
	m.val[0] = 0x8888;
	ATF_CHECK_EQ(went(jmp_idx, 7, 0x1000, 64, &s, &m), 0x8888u);
	/* Memory that cannot be read: the state cannot tell. */
	m.n = 0;
	ATF_CHECK_EQ(went(jmp_idx, 7, 0x1000, 64, &s, &m), ~(uint64_t)0);
}

ATF_TC_WITHOUT_HEAD(returns_read_below_the_stack);
ATF_TC_BODY(returns_read_below_the_stack, tc)
{
	static const uint8_t ret[] = { 0xc3 };
	static const uint8_t ret16[] = { 0xc2, 0x10, 0x00 };
	struct hwtr_x86_state s;
	struct mem m = { .n = 1 };

	memset(&s, 0, sizeof(s));
	m.addr[0] = 0x7000;
	m.val[0] = UINT64_C(0x00007f0000001234);
	s.gpr[RSP] = 0x7008;
	ATF_CHECK_EQ(went(ret, 1, 0x1000, 64, &s, &m),
	    UINT64_C(0x00007f0000001234));
	/* ret 0x10 popped 8 bytes and 16 more. */
	s.gpr[RSP] = 0x7018;
	ATF_CHECK_EQ(went(ret16, 3, 0x1000, 64, &s, &m),
	    UINT64_C(0x00007f0000001234));
	/* 32-bit: 4 bytes at esp - 4. */
	m.addr[0] = 0x7004;
	m.val[0] = 0x08049000;
	s.gpr[RSP] = 0x7008;
	ATF_CHECK_EQ(went(ret, 1, 0x1000, 32, &s, &m), 0x08049000u);
	ATF_CHECK_EQ(m.lastn, 4u);
}

ATF_TC_WITHOUT_HEAD(compat_mode_registers);
ATF_TC_BODY(compat_mode_registers, tc)
{
	static const uint8_t jmp_eax[] = { 0xff, 0xe0 };
	struct hwtr_x86_state s;
	struct mem m = { .n = 0 };

	memset(&s, 0, sizeof(s));
	s.gpr[RAX] = UINT64_C(0x100004000);
	ATF_CHECK_EQ(went(jmp_eax, 2, 0x1000, 32, &s, &m), 0x4000u);
}

ATF_TC_WITHOUT_HEAD(what_the_state_cannot_tell);
ATF_TC_BODY(what_the_state_cannot_tell, tc)
{
	static const uint8_t nop[] = { 0x90 };
	static const uint8_t syscall[] = { 0x0f, 0x05 };
	static const uint8_t jmp_far[] = { 0x48, 0xff, 0x28 };
	static const uint8_t direct[] = { 0xe9, 0x00, 0x01, 0x00, 0x00 };
	static const uint8_t bad[] = { 0x0f };
	struct hwtr_x86_state s;
	struct mem m = { .n = 0 };
	uint64_t to;

	memset(&s, 0, sizeof(s));
	ATF_CHECK_EQ(went(nop, 1, 0x1000, 64, &s, &m), ~(uint64_t)0);
	ATF_CHECK_EQ(went(syscall, 2, 0x1000, 64, &s, &m), ~(uint64_t)0);
	ATF_CHECK_EQ(went(jmp_far, 3, 0x1000, 64, &s, &m), ~(uint64_t)0);
	/* A direct jump goes to its target. */
	ATF_CHECK_EQ(went(direct, 5, 0x1000, 64, &s, &m), 0x1105u);
	ATF_CHECK(hwtr_x86_went(bad, 1, 0x1000, 64, &s, rd, &m, &to) < 0);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, conditions_follow_the_flags);
	ATF_TP_ADD_TC(tp, count_register_branches);
	ATF_TP_ADD_TC(tp, indirect_jumps_and_calls);
	ATF_TP_ADD_TC(tp, returns_read_below_the_stack);
	ATF_TP_ADD_TC(tp, compat_mode_registers);
	ATF_TP_ADD_TC(tp, what_the_state_cannot_tell);
	return (atf_no_error());
}
