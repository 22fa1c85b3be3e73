/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * fpt's packet parser: one Intel PT packet at a time, from its bytes
 * (Intel SDM vol. 3, chapter "Intel Processor Trace", packet formats).
 * It only splits the bytes into fields; what an IP payload means given
 * the last IP, and what the packets do, is the decoder's (fpt_dec.c).
 */

#include <assert.h>
#include <string.h>

#include "hwtrace.h"
#include "fpt.h"

#define PSB_LEN	16

/* The highest set bit's position of @v (!= 0). */
static unsigned
top_bit(uint64_t v)
{
	assert(v != 0);
	return (63u - (unsigned)__builtin_clzll(v));
}

/* TIP, TIP.PGE, TIP.PGD, FUP: the header's IPBytes say the size. */
static int
parse_ip(const uint8_t *p, const uint8_t *end, struct fpt_pkt *pkt,
    uint8_t kind)
{
	static const int8_t bytes[8] = { 0, 2, 4, 6, 6, -1, 8, -1 };
	unsigned ipc = p[0] >> 5;
	int n = bytes[ipc];

	if (n < 0)
		return (-HWTR_E_FORMAT);
	if (end - p < 1 + n)
		return (-HWTR_E_TRUNCATED);
	pkt->kind = kind;
	pkt->ipc = (uint8_t)ipc;
	pkt->payload = fpt_pkt_le(p + 1, (unsigned)n);
	pkt->size = (uint8_t)(1 + n);
	return (pkt->size);
}

/* Packets after the 0x02 escape byte. */
static int
parse_ext(const uint8_t *p, const uint8_t *end, struct fpt_pkt *pkt)
{
	ptrdiff_t left = end - p;
	unsigned n;
	uint8_t b;

	if (left < 2)
		return (-HWTR_E_TRUNCATED);
	b = p[1];
#define NEED(k) do {							\
	if (left < (k))							\
		return (-HWTR_E_TRUNCATED);				\
	pkt->size = (k);						\
} while (0)
	if ((b & 0x1f) == 0x12) {		/* PTWRITE */
		n = (b >> 5) & 3;
		if (n > 1)
			return (-HWTR_E_FORMAT);
		n = n == 0 ? 4 : 8;
		NEED((int)(2 + n));
		pkt->kind = FPT_PKT_PTW;
		pkt->flags = b >> 7;
		pkt->payload = fpt_pkt_le(p + 2, n);
		return (pkt->size);
	}
	switch (b) {
	case 0x82:
		NEED(PSB_LEN);
		for (n = 2; n < PSB_LEN; n += 2)
			if (p[n] != 0x02 || p[n + 1] != 0x82)
				return (-HWTR_E_FORMAT);
		pkt->kind = FPT_PKT_PSB;
		break;
	case 0x23:
		NEED(2);
		pkt->kind = FPT_PKT_PSBEND;
		break;
	case 0xa3:
		NEED(8);
		pkt->payload = fpt_pkt_le(p + 2, 6);
		/* No bit but the stop bit is a bad packet to libipt too. */
		if (pkt->payload <= 1)
			return (-HWTR_E_FORMAT);
		pkt->kind = FPT_PKT_TNT;
		pkt->ntnt = (uint8_t)top_bit(pkt->payload);
		pkt->payload &= (1ull << pkt->ntnt) - 1;
		break;
	case 0x43:
		NEED(8);
		pkt->kind = FPT_PKT_PIP;
		pkt->payload = fpt_pkt_le(p + 2, 6);
		pkt->flags = pkt->payload & 1;		/* NR */
		pkt->payload = (pkt->payload & ~1ull) << 4;
		break;
	case 0xf3:
		NEED(2);
		pkt->kind = FPT_PKT_OVF;
		break;
	case 0x03:
		NEED(4);
		pkt->kind = FPT_PKT_CBR;
		pkt->payload = p[2];
		/* libipt's query fails a ratio of 0 (pt_time_update_cbr). */
		if (pkt->payload == 0)
			return (-HWTR_E_FORMAT);
		break;
	case 0xc8:
		NEED(7);
		pkt->kind = FPT_PKT_VMCS;
		pkt->payload = fpt_pkt_le(p + 2, 5) << 12;
		break;
	case 0x73:
		NEED(7);
		pkt->kind = FPT_PKT_TMA;
		pkt->payload = fpt_pkt_le(p + 2, 2);		/* CTC */
		pkt->payload2 = fpt_pkt_le(p + 5, 2);		/* FC */
		/* Reserved bits set: a bad packet to libipt. */
		if (p[4] != 0 || pkt->payload2 > 0x1ff)
			return (-HWTR_E_FORMAT);
		break;
	case 0x83:
		NEED(2);
		pkt->kind = FPT_PKT_STOP;
		break;
	case 0xc3:
		/*
		 * The third byte says MNT (libipt's pt_df_fetch() looks at it
		 * first): any other is a bad packet, however short.
		 */
		NEED(3);
		if (p[2] != 0x88)
			return (-HWTR_E_FORMAT);
		NEED(11);
		pkt->kind = FPT_PKT_MNT;
		pkt->payload = fpt_pkt_le(p + 3, 8);
		break;
	case 0x62:
	case 0xe2:
		NEED(2);
		pkt->kind = FPT_PKT_EXSTOP;
		pkt->flags = b >> 7;
		break;
	case 0xc2:
		NEED(10);
		pkt->kind = FPT_PKT_MWAIT;
		pkt->payload = fpt_pkt_le(p + 2, 4);		/* hints */
		pkt->payload2 = fpt_pkt_le(p + 6, 4);		/* extensions */
		break;
	case 0x22:
		NEED(4);
		pkt->kind = FPT_PKT_PWRE;
		pkt->payload = fpt_pkt_le(p + 2, 2);
		break;
	case 0xa2:
		NEED(7);
		pkt->kind = FPT_PKT_PWRX;
		pkt->payload = fpt_pkt_le(p + 2, 5);
		break;
	case 0x63:				/* BBP */
	case 0x33:				/* BEP */
	case 0xb3:
	case 0x13:				/* CFE */
	case 0x53:				/* EVD */
		NEED(2);
		pkt->kind = FPT_PKT_UNKNOWN;
		break;
	default:
		return (-HWTR_E_FORMAT);
	}
#undef NEED
	return (pkt->size);
}

int
fpt_pkt_parse(const uint8_t *p, const uint8_t *end, struct fpt_pkt *pkt)
{
	uint8_t b;
	unsigned shift;
	const uint8_t *q;

	assert(p != NULL && end != NULL);
	if (p >= end)
		return (-HWTR_E_TRUNCATED);
	memset(pkt, 0, sizeof(*pkt));
	b = p[0];
	if (b == 0x00) {
		pkt->kind = FPT_PKT_PAD;
		pkt->size = 1;
		return (1);
	}
	if (b == 0x02)
		return (parse_ext(p, end, pkt));
	if ((b & 1) == 0) {			/* TNT-8 */
		pkt->kind = FPT_PKT_TNT;
		pkt->ntnt = (uint8_t)(top_bit(b) - 1);
		pkt->payload = (b >> 1) & ((1u << pkt->ntnt) - 1);
		pkt->size = 1;
		return (1);
	}
	if ((b & 3) == 3) {			/* CYC */
		pkt->kind = FPT_PKT_CYC;
		pkt->payload = b >> 3;
		q = p + 1;
		shift = 5;
		if (b & 4) {
			do {
				if (q >= end)
					return (-HWTR_E_TRUNCATED);
				if (shift < 64)
					pkt->payload |= (uint64_t)(*q >> 1) <<
					    shift;
				shift += 7;
				/* libipt's limit: a 64-bit payload. */
				if (shift > 64)
					return (-HWTR_E_FORMAT);
			} while (*q++ & 1);
		}
		if (q - p > 255)
			return (-HWTR_E_FORMAT);
		pkt->size = (uint8_t)(q - p);
		return (pkt->size);
	}
	switch (b & 0x1f) {
	case 0x0d:
		return (parse_ip(p, end, pkt, FPT_PKT_TIP));
	case 0x11:
		return (parse_ip(p, end, pkt, FPT_PKT_TIP_PGE));
	case 0x01:
		return (parse_ip(p, end, pkt, FPT_PKT_TIP_PGD));
	case 0x1d:
		return (parse_ip(p, end, pkt, FPT_PKT_FUP));
	}
	switch (b) {
	case 0x19:
		if (end - p < 8)
			return (-HWTR_E_TRUNCATED);
		pkt->kind = FPT_PKT_TSC;
		pkt->payload = fpt_pkt_le(p + 1, 7);
		pkt->size = 8;
		return (8);
	case 0x59:
		if (end - p < 2)
			return (-HWTR_E_TRUNCATED);
		pkt->kind = FPT_PKT_MTC;
		pkt->payload = p[1];
		pkt->size = 2;
		return (2);
	case 0x99:
		if (end - p < 2)
			return (-HWTR_E_TRUNCATED);
		switch (p[1] >> 5) {
		case 0:
			pkt->kind = FPT_PKT_MODE_EXEC;
			break;
		case 1:
			pkt->kind = FPT_PKT_MODE_TSX;
			break;
		default:
			return (-HWTR_E_FORMAT);
		}
		pkt->flags = p[1] & 0x1f;
		pkt->size = 2;
		return (2);
	}
	return (-HWTR_E_FORMAT);
}

ptrdiff_t
fpt_pkt_find_psb(const uint8_t *begin, const uint8_t *from,
    const uint8_t *end)
{
	static const uint8_t psb[PSB_LEN] = {
		0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
		0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82
	};
	const uint8_t *p;

	assert(begin <= from);
	for (p = from; end - p >= PSB_LEN; p++) {
		p = memchr(p, 0x02, (size_t)(end - p - (PSB_LEN - 1)));
		if (p == NULL)
			break;
		if (memcmp(p, psb, PSB_LEN) == 0) {
			/*
			 * libipt's pt_find_psb() goes to the end of a run of
			 * PSB payload and syncs at the last 16 bytes of it.
			 */
			for (p += PSB_LEN; end - p >= 2 && p[0] == 0x02 &&
			    p[1] == 0x82; p += 2)
				;
			return (p - PSB_LEN - begin);
		}
	}
	return (-1);
}
