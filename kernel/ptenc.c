/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The PT encoder: control-flow events of one thread in, Intel PT packets
 * out, written with libipt's packet encoder (pt_enc_next).  kernel/ is the
 * one module besides indexer/ that includes intel-pt.h, by agreement: the
 * software trace sources must emit exactly the packets libipt decodes.
 *
 * The encoder keeps the state a real PT unit keeps for one logical
 * processor: the last IP (for IP compression), pending TNT bits, the
 * compressed-return stack, the execution mode, whether packet generation is
 * enabled, and the bytes written since the last PSB.  Everything it decides
 * mirrors what libipt's instruction decoder will assume, so the decoded
 * instruction flow is exactly the flow the caller reported.
 */

#include <stdlib.h>
#include <string.h>

#include <intel-pt.h>

#include "hwtr_common.h"
#include "hwtr_kernel.h"

#define PTENC_BUFSZ	(64 * 1024)
/* Room for the longest packet sequence one call writes (PSB+ and a TIP). */
#define PTENC_SLACK	128
#define PTENC_RETSTACK	64	/* as libipt's pt_retstack and hardware */
#define PTENC_TNT_SHORT	6
#define PTENC_TNT_LONG	47
#define PTENC_TNT_LONG_SIZE 8	/* bytes of a long TNT packet */

struct hwtr_ptenc {
	struct hwtr_ptenc_opts opts;
	struct hwtr_ptenc_out out;
	struct pt_encoder *pte;
	uint8_t		*buf;
	/*
	 * Bytes in @buf: libipt's encoder offset, kept here from what
	 * pt_enc_next() returns (the valgrind source asks for it every 16
	 * superblocks, through hwtr_ptenc_at(); pt_enc_get_offset() is a
	 * call into libipt each time).
	 */
	uint64_t	off;
	uint64_t	written;	/* bytes handed to out.write */
	uint64_t	last_psb;	/* stream offset of the last PSB */
	int		error;		/* sticky: a write failed */
	int		pte_stale;	/* bytes written past libipt's offset */

	int		enabled;	/* packet generation on */
	int		started;	/* a PSB+ was written */
	int		want_psb;
	int		mode64;
	int		mode_written;	/* mode64 as last written in a packet */
	int		mode_known;

	uint64_t	last_ip;
	int		last_ip_valid;

	uint64_t	tnt;		/* pending bits, oldest most significant */
	unsigned	ntnt;

	uint64_t	ret[PTENC_RETSTACK];
	unsigned	ret_top;	/* index of the next free slot */
	unsigned	ret_depth;

	uint64_t	last_tsc;
	int		tsc_written;
};

static inline uint64_t
enc_offset(const struct hwtr_ptenc *enc)
{
	return (enc->off);
}

static int
drain(struct hwtr_ptenc *enc)
{
	uint64_t len;
	int rc;

	if (enc->error)
		return (-HWTR_E_IO);
	len = enc_offset(enc);
	if (len == 0)
		return (0);
	rc = enc->out.write(enc->out.arg, enc->buf, (size_t)len);
	if (rc < 0) {
		enc->error = 1;
		return (-HWTR_E_IO);
	}
	enc->written += len;
	enc->off = 0;
	enc->pte_stale = 0;
	if (pt_enc_sync_set(enc->pte, 0) < 0) {
		enc->error = 1;
		return (-HWTR_E_IO);
	}
	return (0);
}

/* Make sure the next packet sequence fits in the buffer. */
static int
reserve(struct hwtr_ptenc *enc)
{
	if (enc->error)
		return (-HWTR_E_IO);
	if (enc_offset(enc) + PTENC_SLACK > PTENC_BUFSZ)
		return (drain(enc));
	return (0);
}

static int
put(struct hwtr_ptenc *enc, const struct pt_packet *pkt)
{
	int rc;

	/* TNT packets are written here directly (flush_tnt()). */
	if (enc->pte_stale) {
		if (pt_enc_sync_set(enc->pte, enc->off) < 0) {
			enc->error = 1;
			return (-HWTR_E_IO);
		}
		enc->pte_stale = 0;
	}
	rc = pt_enc_next(enc->pte, pkt);
	if (rc == -pte_eos) {
		if ((rc = drain(enc)) < 0)
			return (rc);
		rc = pt_enc_next(enc->pte, pkt);
	}
	if (rc < 0) {
		/* A packet libipt refuses is a bug of ours. */
		enc->error = 1;
		return (-HWTR_E_INVAL);
	}
	enc->off += (unsigned)rc;
	return (0);
}

static int
put_simple(struct hwtr_ptenc *enc, enum pt_packet_type type)
{
	struct pt_packet pkt;

	memset(&pkt, 0, sizeof(pkt));
	pkt.type = type;
	return (put(enc, &pkt));
}

static int
sext48(uint64_t ip)
{
	uint64_t hi = ip >> 47;

	return (hi == 0 || hi == (UINT64_MAX >> 47));
}

/*
 * Write a packet carrying @ip with the smallest compression the decoder
 * can expand against its last IP, and update that last IP the way it will.
 */
static int
put_ip(struct hwtr_ptenc *enc, enum pt_packet_type type, uint64_t ip)
{
	struct pt_packet pkt;
	uint64_t diff = ip ^ enc->last_ip;

	memset(&pkt, 0, sizeof(pkt));
	pkt.type = type;
	if (enc->last_ip_valid && (diff >> 16) == 0) {
		pkt.payload.ip.ipc = pt_ipc_update_16;
		pkt.payload.ip.ip = ip & 0xffffu;
	} else if (enc->last_ip_valid && (diff >> 32) == 0) {
		pkt.payload.ip.ipc = pt_ipc_update_32;
		pkt.payload.ip.ip = ip & 0xffffffffu;
	} else if (sext48(ip)) {
		pkt.payload.ip.ipc = pt_ipc_sext_48;
		pkt.payload.ip.ip = ip & 0xffffffffffffull;
	} else if (enc->last_ip_valid && (diff >> 48) == 0) {
		pkt.payload.ip.ipc = pt_ipc_update_48;
		pkt.payload.ip.ip = ip & 0xffffffffffffull;
	} else {
		pkt.payload.ip.ipc = pt_ipc_full;
		pkt.payload.ip.ip = ip;
	}
	enc->last_ip = ip;
	enc->last_ip_valid = 1;
	return (put(enc, &pkt));
}

static int
put_suppressed(struct hwtr_ptenc *enc, enum pt_packet_type type)
{
	struct pt_packet pkt;

	memset(&pkt, 0, sizeof(pkt));
	pkt.type = type;
	pkt.payload.ip.ipc = pt_ipc_suppressed;
	return (put(enc, &pkt));
}

static int
put_mode(struct hwtr_ptenc *enc)
{
	struct pt_packet pkt;

	memset(&pkt, 0, sizeof(pkt));
	pkt.type = ppt_mode;
	pkt.payload.mode.leaf = pt_mol_exec;
	pkt.payload.mode.bits.exec = pt_set_exec_mode(enc->mode64 ?
	    ptem_64bit : ptem_32bit);
	enc->mode_written = enc->mode64;
	enc->mode_known = 1;
	return (put(enc, &pkt));
}

static int
put_tsc(struct hwtr_ptenc *enc, uint64_t tsc)
{
	struct pt_packet pkt;

	memset(&pkt, 0, sizeof(pkt));
	pkt.type = ppt_tsc;
	pkt.payload.tsc.tsc = tsc & ((1ull << 56) - 1);
	enc->last_tsc = tsc;
	enc->tsc_written = 1;
	return (put(enc, &pkt));
}

/*
 * Write the pending TNT bits: short TNT when they fit, else long TNT.
 * The commonest packet of the software sources, so written here as
 * libipt's pt_enc_next() writes it (the bits under a stop bit, the oldest
 * highest; short: shifted over the opcode's 0 bit; long: ext, 0xa3 and
 * 6 bytes little-endian), without a struct pt_packet to fill and the
 * call; put() moves libipt's offset on before its next packet.
 * t_ptenc's tnt_packets_as_libipt compares the two for every bit count.
 */
static int
flush_tnt(struct hwtr_ptenc *enc)
{
	uint64_t v;
	uint8_t *p;
	unsigned i;
	int rc;

	if (enc->ntnt == 0)
		return (0);
	if (enc->error)
		return (-HWTR_E_IO);
	if (enc_offset(enc) + PTENC_TNT_LONG_SIZE > PTENC_BUFSZ &&
	    (rc = drain(enc)) < 0)
		return (rc);
	p = enc->buf + enc->off;
	v = enc->tnt | (UINT64_C(1) << enc->ntnt);
	if (enc->ntnt <= PTENC_TNT_SHORT) {
		p[0] = (uint8_t)(v << 1);
		enc->off += 1;
	} else {
		p[0] = 0x02;
		p[1] = 0xa3;
		for (i = 0; i < PTENC_TNT_LONG_SIZE - 2; i++)
			p[2 + i] = (uint8_t)(v >> (8 * i));
		enc->off += PTENC_TNT_LONG_SIZE;
	}
	enc->pte_stale = 1;
	enc->tnt = 0;
	enc->ntnt = 0;
	return (0);
}

static int
add_tnt(struct hwtr_ptenc *enc, int bit)
{
	int rc;

	if (enc->ntnt == PTENC_TNT_LONG) {
		if ((rc = reserve(enc)) < 0 || (rc = flush_tnt(enc)) < 0)
			return (rc);
	}
	enc->tnt = (enc->tnt << 1) | (bit ? 1u : 0u);
	enc->ntnt++;
	return (0);
}

/*
 * PSB+: a synchronization point.  The last IP and the return stack start
 * afresh after it, so a decoder starting here needs nothing from before.
 * The FUP says where execution is when packet generation is on.
 */
static int
put_psb(struct hwtr_ptenc *enc, uint64_t ip, uint64_t tsc)
{
	struct pt_packet pkt;
	int rc;

	if ((rc = flush_tnt(enc)) < 0)
		return (rc);
	if (enc->out.psb != NULL)
		enc->out.psb(enc->out.arg, enc->written + enc_offset(enc));
	enc->last_psb = enc->written + enc_offset(enc);
	enc->last_ip = 0;
	enc->last_ip_valid = 0;
	enc->ret_depth = 0;
	enc->started = 1;
	enc->want_psb = 0;
	if ((rc = put_simple(enc, ppt_psb)) < 0)
		return (rc);
	if (!enc->opts.no_tsc && (rc = put_tsc(enc, tsc)) < 0)
		return (rc);
	if (enc->opts.cbr != 0) {
		memset(&pkt, 0, sizeof(pkt));
		pkt.type = ppt_cbr;
		pkt.payload.cbr.ratio = enc->opts.cbr;
		if ((rc = put(enc, &pkt)) < 0)
			return (rc);
	}
	if ((rc = put_mode(enc)) < 0)
		return (rc);
	if (enc->enabled && (rc = put_ip(enc, ppt_fup, ip)) < 0)
		return (rc);
	return (put_simple(enc, ppt_psbend));
}

int
hwtr_ptenc_new(struct hwtr_ptenc **encp, const struct hwtr_ptenc_opts *opts,
    const struct hwtr_ptenc_out *out)
{
	struct hwtr_ptenc *enc;
	struct pt_config cfg;

	if (encp == NULL)
		return (-HWTR_E_INVAL);
	*encp = NULL;
	if (out == NULL || out->write == NULL)
		return (-HWTR_E_INVAL);
	if ((enc = calloc(1, sizeof(*enc))) == NULL)
		return (-HWTR_E_NOMEM);
	if (opts != NULL)
		enc->opts = *opts;
	if (enc->opts.psb_period == 0)
		enc->opts.psb_period = 4096;
	enc->out = *out;
	enc->mode64 = 1;
	if ((enc->buf = malloc(PTENC_BUFSZ)) == NULL) {
		free(enc);
		return (-HWTR_E_NOMEM);
	}
	pt_config_init(&cfg);
	cfg.begin = enc->buf;
	cfg.end = enc->buf + PTENC_BUFSZ;
	if ((enc->pte = pt_alloc_encoder(&cfg)) == NULL) {
		free(enc->buf);
		free(enc);
		return (-HWTR_E_NOMEM);
	}
	*encp = enc;
	return (0);
}

void
hwtr_ptenc_free(struct hwtr_ptenc *enc)
{
	if (enc == NULL)
		return;
	pt_free_encoder(enc->pte);
	free(enc->buf);
	free(enc);
}

int
hwtr_ptenc_enable(struct hwtr_ptenc *enc, uint64_t ip, int mode64,
    uint64_t tsc)
{
	int rc;

	if (enc == NULL)
		return (-HWTR_E_INVAL);
	if ((rc = reserve(enc)) < 0)
		return (rc);
	if (enc->enabled)
		return (-HWTR_E_INVAL);
	enc->mode64 = mode64 ? 1 : 0;
	if (!enc->started || enc->want_psb ||
	    enc->written + enc_offset(enc) - enc->last_psb >=
	    enc->opts.psb_period) {
		/* PSB+ while disabled: no FUP; it carries the mode. */
		if ((rc = put_psb(enc, ip, tsc)) < 0)
			return (rc);
	} else {
		if (!enc->mode_known || enc->mode_written != enc->mode64)
			if ((rc = put_mode(enc)) < 0)
				return (rc);
		if (!enc->opts.no_tsc && (rc = hwtr_ptenc_tsc(enc, tsc)) < 0)
			return (rc);
	}
	enc->enabled = 1;
	return (put_ip(enc, ppt_tip_pge, ip));
}

int
hwtr_ptenc_disable(struct hwtr_ptenc *enc, uint64_t ip, uint64_t tsc)
{
	int rc;

	if (enc == NULL || !enc->enabled)
		return (-HWTR_E_INVAL);
	if ((rc = reserve(enc)) < 0 || (rc = flush_tnt(enc)) < 0)
		return (rc);
	if (ip != 0 && (rc = put_ip(enc, ppt_fup, ip)) < 0)
		return (rc);
	enc->enabled = 0;
	return (put_suppressed(enc, ppt_tip_pgd));
}

int
hwtr_ptenc_cond(struct hwtr_ptenc *enc, int taken)
{
	if (enc == NULL || !enc->enabled)
		return (-HWTR_E_INVAL);
	if (enc->error)
		return (-HWTR_E_IO);
	return (add_tnt(enc, taken));
}

/*
 * Batched conditional branches (the valgrind source knows whole paths of
 * them at once): the same packet boundaries as bit-at-a-time add_tnt(),
 * since a full packet is written only when a further bit comes.
 */
int
hwtr_ptenc_tnt(struct hwtr_ptenc *enc, uint64_t bits, unsigned n)
{
	unsigned k;
	int rc;

	if (enc == NULL || !enc->enabled || n > 64)
		return (-HWTR_E_INVAL);
	if (enc->error)
		return (-HWTR_E_IO);
	while (n > 0) {
		if (enc->ntnt == PTENC_TNT_LONG) {
			if ((rc = reserve(enc)) < 0 ||
			    (rc = flush_tnt(enc)) < 0)
				return (rc);
		}
		k = PTENC_TNT_LONG - enc->ntnt;
		if (k > n)
			k = n;
		/* k <= 47 < 64: the shifts below are defined. */
		enc->tnt = (enc->tnt << k) |
		    ((bits >> (n - k)) & ((UINT64_C(1) << k) - 1));
		enc->ntnt += k;
		n -= k;
	}
	return (0);
}

int
hwtr_ptenc_call(struct hwtr_ptenc *enc, uint64_t ret_ip, uint64_t target,
    int indirect)
{
	int rc;

	if (enc == NULL || !enc->enabled)
		return (-HWTR_E_INVAL);
	if (enc->error)
		return (-HWTR_E_IO);
	/* libipt does not push for "call next", the PIC idiom. */
	if (indirect || target != ret_ip) {
		enc->ret[enc->ret_top] = ret_ip;
		enc->ret_top = (enc->ret_top + 1) % PTENC_RETSTACK;
		if (enc->ret_depth < PTENC_RETSTACK)
			enc->ret_depth++;
	}
	if (!indirect)
		return (0);
	if ((rc = reserve(enc)) < 0 || (rc = flush_tnt(enc)) < 0)
		return (rc);
	return (put_ip(enc, ppt_tip, target));
}

int
hwtr_ptenc_ret(struct hwtr_ptenc *enc, uint64_t target)
{
	unsigned top;
	int rc;

	if (enc == NULL || !enc->enabled)
		return (-HWTR_E_INVAL);
	if (enc->error)
		return (-HWTR_E_IO);
	top = (enc->ret_top + PTENC_RETSTACK - 1) % PTENC_RETSTACK;
	if (!enc->opts.no_ret_compression && enc->ret_depth > 0 &&
	    enc->ret[top] == target) {
		enc->ret_top = top;
		enc->ret_depth--;
		return (add_tnt(enc, 1));
	}
	if ((rc = reserve(enc)) < 0 || (rc = flush_tnt(enc)) < 0)
		return (rc);
	return (put_ip(enc, ppt_tip, target));
}

int
hwtr_ptenc_indirect(struct hwtr_ptenc *enc, uint64_t target)
{
	int rc;

	if (enc == NULL || !enc->enabled)
		return (-HWTR_E_INVAL);
	if ((rc = reserve(enc)) < 0 || (rc = flush_tnt(enc)) < 0)
		return (rc);
	return (put_ip(enc, ppt_tip, target));
}

int
hwtr_ptenc_far(struct hwtr_ptenc *enc, uint64_t target, int mode64)
{
	int rc;

	if (enc == NULL || !enc->enabled)
		return (-HWTR_E_INVAL);
	if ((rc = reserve(enc)) < 0 || (rc = flush_tnt(enc)) < 0)
		return (rc);
	enc->mode64 = mode64 ? 1 : 0;
	if (enc->mode_written != enc->mode64 && (rc = put_mode(enc)) < 0)
		return (rc);
	return (put_ip(enc, ppt_tip, target));
}

int
hwtr_ptenc_at(struct hwtr_ptenc *enc, uint64_t ip, uint64_t tsc)
{
	int rc;

	if (enc == NULL)
		return (-HWTR_E_INVAL);
	if (enc->error)
		return (-HWTR_E_IO);
	if (!enc->enabled)
		return (0);
	if (!enc->want_psb && enc->written + enc_offset(enc) - enc->last_psb <
	    enc->opts.psb_period)
		return (0);
	if ((rc = reserve(enc)) < 0)
		return (rc);
	return (put_psb(enc, ip, tsc));
}

/*
 * Only full long TNT packets (8 bytes) are written while nothing but TNT
 * bits come: the first when bit 48 - ntnt arrives, then one per 47 bits
 * (hwtr_ptenc_tnt()).  hwtr_ptenc_at() writes nothing while the bytes
 * since the last PSB stay below the period: up to k - 1 more packets,
 * k = ceil((period - bytes since) / 8).
 */
int
hwtr_ptenc_tnt_room(const struct hwtr_ptenc *enc)
{
	uint64_t since, k;

	if (enc == NULL || !enc->enabled || enc->error || enc->want_psb)
		return (-1);
	since = enc->written + enc_offset(enc) - enc->last_psb;
	if (since >= enc->opts.psb_period)
		return (-1);
	k = (enc->opts.psb_period - since + PTENC_TNT_LONG_SIZE - 1) /
	    PTENC_TNT_LONG_SIZE;
	if (k > 1u << 20)
		k = 1u << 20;
	return ((int)((PTENC_TNT_LONG - enc->ntnt) + PTENC_TNT_LONG * (k - 1)));
}

void
hwtr_ptenc_want_psb(struct hwtr_ptenc *enc)
{
	if (enc != NULL)
		enc->want_psb = 1;
}

int
hwtr_ptenc_tsc(struct hwtr_ptenc *enc, uint64_t tsc)
{
	int rc;

	if (enc == NULL)
		return (-HWTR_E_INVAL);
	if (enc->opts.no_tsc || (enc->tsc_written && enc->last_tsc == tsc))
		return (0);
	if ((rc = reserve(enc)) < 0)
		return (rc);
	return (put_tsc(enc, tsc));
}

int
hwtr_ptenc_flush(struct hwtr_ptenc *enc)
{
	int rc;

	if (enc == NULL)
		return (-HWTR_E_INVAL);
	if ((rc = reserve(enc)) < 0 || (rc = flush_tnt(enc)) < 0)
		return (rc);
	return (drain(enc));
}

uint64_t
hwtr_ptenc_bytes(const struct hwtr_ptenc *enc)
{
	if (enc == NULL)
		return (0);
	return (enc->written + enc_offset(enc));
}

int
hwtr_ptenc_enabled(const struct hwtr_ptenc *enc)
{
	return (enc != NULL && enc->enabled);
}
