/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Decoding one CoreSight trace buffer with OpenCSD's C API: a decode tree
 * with the frame deformatter (unless the buffer is one unformatted
 * source), one built-in full decoder per ETMv3, PTM, ETMv4 or ETE source
 * configured from the registers the snapshot recorded, and the memory
 * images the caller gives as buffer memory accessors.  Every generic
 * element comes back through a callback, reduced to what the indexer
 * stores (struct ix_cs_elem).  STM sources get no decoder; the caller
 * reports them as not decoded.
 *
 * OpenCSD's headers are included here only (the house rule: one module
 * per third-party header).
 */

#include <assert.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <opencsd/c_api/opencsd_c_api.h>

#include "hwtr_common.h"
#include "hwtr_ix.h"

#define CS_DSTREAM_BLOCK	512	/* a DSTREAM capture's block ... */
#define CS_DSTREAM_DATA		504	/* ... of which trace, then a footer */

const char *const ix_cc_elems[IX_NCC_ELEMS] = {
	"range", "cycle-count", "timestamp", "trace-on", "pe-context",
	"exception", "address-unknown", "other"
};

struct cs_ctx {
	int		(*cb)(void *, const struct ix_cs_elem *);
	void		*arg;
	int		dstream;	/* footers skipped: map indices back */
	int		rc;		/* the first callback failure */
};

static uint64_t
reg(const struct hwtr_cs_source *s, const char *name)
{
	size_t i;

	for (i = 0; i < s->nregs; i++)
		if (s->regs[i].name != NULL &&
		    strcasecmp(s->regs[i].name, name) == 0)
			return (s->regs[i].value);
	return (0);
}

/*
 * The architecture and profile of a core named as snapshots name them
 * ("Cortex-A57"), as OpenCSD's snapshot reader maps them: Cortex-A5x and
 * later are ARMv8 (A55 and A7x from A75 on v8.2, which OpenCSD 1.3 calls
 * ARCH_V8r3), the older ones ARMv7.
 */
static void
core_arch(const char *core, ocsd_arch_version_t *arch,
    ocsd_core_profile_t *prof)
{
	long n;

	*arch = ARCH_V8;
	*prof = profile_CortexA;
	if (core == NULL || strncasecmp(core, "Cortex-", 7) != 0)
		return;
	if (core[7] == 'R' || core[7] == 'r')
		*prof = profile_CortexR;
	else if (core[7] == 'M' || core[7] == 'm')
		*prof = profile_CortexM;
	n = strtol(core + 8, NULL, 10);
	if (*prof == profile_CortexA) {
		if (n < 32)
			*arch = ARCH_V7;
		else if (n == 55 || (n >= 75 && n < 100))
			*arch = ARCH_V8r3;
	} else if (*prof == profile_CortexR)
		*arch = n >= 52 ? ARCH_V8 : ARCH_V7;
	else
		*arch = n >= 23 ? ARCH_V8 : ARCH_V7;
}

static int
isa_bits(ocsd_isa isa)
{
	switch (isa) {
	case ocsd_isa_aarch64:
		return (IX_CS_A64);
	case ocsd_isa_arm:
		return (IX_CS_A32);
	case ocsd_isa_thumb2:
		return (IX_CS_T32);
	default:
		return (IX_CS_ISA_UNKNOWN);
	}
}

static ocsd_datapath_resp_t
elem_in(const void *p_context, const ocsd_trc_index_t index_sop,
    const uint8_t trc_chan_id, const ocsd_generic_trace_elem *el)
{
	struct cs_ctx *c = (struct cs_ctx *)(uintptr_t)p_context;
	struct ix_cs_elem e;

	if (c->rc < 0)
		return (OCSD_RESP_FATAL_SYS_ERR);
	memset(&e, 0, sizeof(e));
	/* In a DSTREAM capture OpenCSD counts trace bytes, not footers. */
	e.index = c->dstream ? index_sop + index_sop / CS_DSTREAM_DATA *
	    (CS_DSTREAM_BLOCK - CS_DSTREAM_DATA) : index_sop;
	e.trace_id = trc_chan_id;
	/*
	 * Only what the element's type and flags say is set is read: OpenCSD
	 * 1.3 makes elements without init() when its list grows, and setType()
	 * clears the flags alone, so an ETMv3 NO_SYNC (TC2) has no ISA and no
	 * cycle count, and memcheck saw them read.
	 */
	e.has_cc = el->has_cc;
	if (e.has_cc)
		e.cc = el->cycle_count;
	e.cc_elem = IX_CC_OTHER;
	switch (el->elem_type) {
	case OCSD_GEN_TRC_ELEM_INSTR_RANGE:
		e.kind = IX_CS_RANGE;
		e.cc_elem = IX_CC_RANGE;
		e.isa = isa_bits(el->isa);
		e.st = el->st_addr;
		e.en = el->en_addr;
		e.ninsn = el->num_instr_range;
		e.last_exec = el->last_instr_exec;
		e.last_sz = el->last_instr_sz;
		switch (el->last_i_type) {
		case OCSD_INSTR_BR:
			e.last_class = el->last_i_subtype == OCSD_S_INSTR_BR_LINK ?
			    HWTR_IC_CALL : el->last_instr_cond ? HWTR_IC_COND :
			    HWTR_IC_JUMP;
			break;
		case OCSD_INSTR_BR_INDIRECT:
			e.last_class = el->last_i_subtype ==
			    OCSD_S_INSTR_BR_LINK ? HWTR_IC_CALL_IND :
			    el->last_i_subtype == OCSD_S_INSTR_V8_RET ||
			    el->last_i_subtype == OCSD_S_INSTR_V7_IMPLIED_RET ?
			    HWTR_IC_RET : HWTR_IC_JUMP_IND;
			break;
		default:
			e.last_class = HWTR_IC_OTHER;
			break;
		}
		break;
	case OCSD_GEN_TRC_ELEM_EXCEPTION:
		e.kind = IX_CS_EXCEPTION;
		e.cc_elem = IX_CC_EXCEPTION;
		e.en = el->en_addr;
		e.excnum = el->exception_number;
		break;
	case OCSD_GEN_TRC_ELEM_EXCEPTION_RET:
		e.kind = IX_CS_EXC_RET;
		break;
	case OCSD_GEN_TRC_ELEM_ADDR_NACC:
		e.kind = IX_CS_NACC;
		e.st = el->st_addr;
		break;
	case OCSD_GEN_TRC_ELEM_TIMESTAMP:
		e.kind = IX_CS_TIMESTAMP;
		e.cc_elem = IX_CC_TIMESTAMP;
		e.ts = el->timestamp;
		break;
	case OCSD_GEN_TRC_ELEM_CYCLE_COUNT:
		e.kind = IX_CS_CYCLES;
		e.cc_elem = IX_CC_CYCLE_COUNT;
		e.has_cc = 1;
		e.cc = el->cycle_count;
		break;
	case OCSD_GEN_TRC_ELEM_TRACE_ON:
		e.kind = IX_CS_TRACE_ON;
		e.cc_elem = IX_CC_TRACE_ON;
		break;
	case OCSD_GEN_TRC_ELEM_PE_CONTEXT:
		e.kind = IX_CS_OTHER;
		e.cc_elem = IX_CC_PE_CONTEXT;
		break;
	case OCSD_GEN_TRC_ELEM_ADDR_UNKNOWN:
		e.kind = IX_CS_OTHER;
		e.cc_elem = IX_CC_ADDR_UNKNOWN;
		break;
	case OCSD_GEN_TRC_ELEM_NO_SYNC:
		e.kind = IX_CS_NO_SYNC;
		break;
	case OCSD_GEN_TRC_ELEM_EO_TRACE:
		e.kind = IX_CS_EOT;
		break;
	case OCSD_GEN_TRC_ELEM_MEMTRANS:
		e.kind = IX_CS_MEMTRANS;
		switch (el->mem_trans) {
		case OCSD_MEM_TRANS_TRACE_INIT:
			e.memtrans = IX_CS_TRANS_INIT;
			break;
		case OCSD_MEM_TRANS_START:
			e.memtrans = IX_CS_TRANS_START;
			break;
		case OCSD_MEM_TRANS_COMMIT:
			e.memtrans = IX_CS_TRANS_COMMIT;
			break;
		default:
			e.memtrans = IX_CS_TRANS_FAIL;
			break;
		}
		break;
	case OCSD_GEN_TRC_ELEM_SYNC_MARKER:
		/* OpenCSD 1.3 has timestamp markers only (ELEM_MARKER_TS). */
		e.kind = el->sync_marker.type == ELEM_MARKER_TS ?
		    IX_CS_MARKER : IX_CS_OTHER;
		e.marker = el->sync_marker.value;
		break;
	default:
		e.kind = IX_CS_OTHER;
		break;
	}
	if (el->has_ts) {
		e.has_ts = 1;
		e.ts = el->timestamp;
	}
	if ((c->rc = c->cb(c->arg, &e)) < 0)
		return (OCSD_RESP_FATAL_SYS_ERR);
	return (OCSD_RESP_CONT);
}

/*
 * The decoders OpenCSD builds from a snapshot's registers.  Each one's
 * configuration starts with its registers as uint32_t fields, in the order
 * named here, then the trace ID register, then the architecture and the
 * core profile; ETMv3 and PTM read the same registers.
 */
static const char *const etmv4_regs[] = { "TRCIDR0", "TRCIDR1", "TRCIDR2",
    "TRCIDR8", "TRCIDR9", "TRCIDR10", "TRCIDR11", "TRCIDR12", "TRCIDR13",
    "TRCCONFIGR" };
static const char *const ete_regs[] = { "TRCIDR0", "TRCIDR1", "TRCIDR2",
    "TRCIDR8", "TRCDEVARCH", "TRCCONFIGR" };
static const char *const etmv3_regs[] = { "ETMIDR", "ETMCR", "ETMCCER" };

struct cs_proto {
	enum hwtr_trace_format	 tf;
	const char		*decoder;	/* OpenCSD's builtin name */
	const char *const	*regs;
	size_t			 nregs;
	size_t			 size, traceid, arch, prof;	/* in the cfg */
};

#define CS_PROTO(tf, dcd, T, id, regs) { HWTR_TF_ ## tf,		\
	OCSD_BUILTIN_DCD_ ## dcd, regs, HWTR_NELEM(regs), sizeof(T),	\
	offsetof(T, id), offsetof(T, arch_ver), offsetof(T, core_prof) }

static const struct cs_proto cs_protos[] = {
	CS_PROTO(ETMV4, ETMV4I, ocsd_etmv4_cfg, reg_traceidr, etmv4_regs),
	CS_PROTO(ETE, ETE, ocsd_ete_cfg, reg_traceidr, ete_regs),
	CS_PROTO(ETMV3, ETMV3, ocsd_etmv3_cfg, reg_trc_id, etmv3_regs),
	CS_PROTO(PTM, PTM, ocsd_ptm_cfg, reg_trc_id, etmv3_regs),
};

static int
add_decoder(dcd_tree_handle_t t, const struct hwtr_cs_source *s,
    char *err, size_t errlen)
{
	union {
		ocsd_etmv4_cfg v4;
		ocsd_ete_cfg ete;
		ocsd_etmv3_cfg v3;
		ocsd_ptm_cfg ptm;
	} u;
	unsigned char *cfg = (unsigned char *)&u;
	const struct cs_proto *p = NULL;
	ocsd_arch_version_t arch;
	ocsd_core_profile_t prof;
	const char *name;
	unsigned char csid;
	uint32_t v;
	ocsd_err_t oe;
	size_t i;

	for (i = 0; i < HWTR_NELEM(cs_protos); i++)
		if (cs_protos[i].tf == s->protocol)
			p = &cs_protos[i];
	if (p == NULL)
		return (0);	/* STM: not decoded, the caller says so */
	assert(p->size <= sizeof(u) && p->traceid == p->nregs * sizeof(v));
	memset(&u, 0, sizeof(u));
	for (i = 0; i < p->nregs; i++) {
		v = (uint32_t)reg(s, p->regs[i]);
		memcpy(cfg + i * sizeof(v), &v, sizeof(v));
	}
	v = s->trace_id;
	memcpy(cfg + p->traceid, &v, sizeof(v));
	core_arch(s->core, &arch, &prof);
	if (p->tf == HWTR_TF_ETE)
		arch = ARCH_AA64;
	memcpy(cfg + p->arch, &arch, sizeof(arch));
	memcpy(cfg + p->prof, &prof, sizeof(prof));
	name = p->decoder;
	oe = ocsd_dt_create_decoder(t, name, OCSD_CREATE_FLG_FULL_DECODER,
	    &u, &csid);
	if (oe != OCSD_OK) {
		snprintf(err, errlen, "trace ID 0x%02x: OpenCSD refuses the %s "
		    "decoder (error %d)", s->trace_id, name, (int)oe);
		return (-HWTR_E_DECODE);
	}
	return (1);
}

/*
 * OpenCSD's C API keeps its decode trees in a library-wide table without a
 * lock; jobs on several threads creating and destroying trees at once were
 * seen to crash the indexer.  This lock guards the library's state, not
 * ours: CoreSight buffers are decoded one at a time.
 */
static pthread_mutex_t ocsd_lock = PTHREAD_MUTEX_INITIALIZER;

/* The memory accessor of a snapshot without memory: nothing anywhere. */
static uint32_t
no_mem(const void *ctx, const ocsd_vaddr_t addr,
    const ocsd_mem_space_acc_t space, const uint32_t len, uint8_t *buf)
{
	(void)ctx;
	(void)addr;
	(void)space;
	(void)len;
	(void)buf;
	return (0);
}

static int cs_decode_locked(const struct hwtr_stream_desc *sd,
    const uint8_t *trace, size_t len, const struct ix_cs_mem *mem,
    size_t nmem, int (*cb)(void *, const struct ix_cs_elem *), void *arg,
    char *err, size_t errlen);

int
ix_cs_decode(const struct hwtr_stream_desc *sd, const uint8_t *trace,
    size_t len, const struct ix_cs_mem *mem, size_t nmem,
    int (*cb)(void *, const struct ix_cs_elem *), void *arg, char *err,
    size_t errlen)
{
	size_t i;
	int rc;

	err[0] = '\0';
	for (i = 0; i < sd->cs.nsources; i++)
		if (sd->cs.sources[i].protocol != HWTR_TF_STM)
			break;
	if (i == sd->cs.nsources)
		return (0);	/* nothing OpenCSD is asked to decode */
	pthread_mutex_lock(&ocsd_lock);
	rc = cs_decode_locked(sd, trace, len, mem, nmem, cb, arg, err, errlen);
	pthread_mutex_unlock(&ocsd_lock);
	return (rc);
}

static int
cs_decode_locked(const struct hwtr_stream_desc *sd, const uint8_t *trace,
    size_t len, const struct ix_cs_mem *mem, size_t nmem,
    int (*cb)(void *, const struct ix_cs_elem *), void *arg, char *err,
    size_t errlen)
{
	dcd_tree_handle_t t;
	ocsd_datapath_resp_t resp;
	struct cs_ctx c;
	uint32_t flags = 0, n;
	size_t i, done = 0, end, ndec = 0, nacc = 0;
	int rc = 0;

	err[0] = '\0';
	switch (sd->cs.frame) {
	case HWTR_CS_FRAME_NONE:
		break;
	case HWTR_CS_FRAME_CORESIGHT:
		flags = OCSD_DFRMTR_FRAME_MEM_ALIGN;
		break;
	default:
		/*
		 * TPIU and DSTREAM captures carry frame syncs.  A DSTREAM
		 * capture also comes in 512-byte blocks, 504 bytes of frames
		 * and an 8-byte footer that is not trace: the footers are
		 * skipped below, as OpenCSD's trc_pkt_lister -dstream_format
		 * does.
		 */
		flags = OCSD_DFRMTR_HAS_FSYNCS;
		break;
	}
	if (sd->cs.frame == HWTR_CS_FRAME_NONE && sd->cs.nsources != 1) {
		snprintf(err, errlen, "an unformatted buffer needs exactly one "
		    "source, not %zu", sd->cs.nsources);
		return (-HWTR_E_FORMAT);
	}
	t = ocsd_create_dcd_tree(sd->cs.frame == HWTR_CS_FRAME_NONE ?
	    OCSD_TRC_SRC_SINGLE : OCSD_TRC_SRC_FRAME_FORMATTED, flags);
	if (t == C_API_INVALID_TREE_HANDLE) {
		snprintf(err, errlen, "OpenCSD cannot create a decode tree");
		return (-HWTR_E_NOMEM);
	}
	for (i = 0; i < sd->cs.nsources; i++) {
		if ((rc = add_decoder(t, &sd->cs.sources[i], err, errlen)) < 0)
			goto out;
		ndec += (size_t)rc;
	}
	rc = 0;
	if (ndec == 0)
		goto out;		/* nothing OpenCSD can decode */
	for (i = 0; i < nmem; i++) {
		if (mem[i].len == 0 || mem[i].len > UINT32_MAX)
			continue;
		/* Overlapping dumps: OpenCSD keeps the first, as we do. */
		if (ocsd_dt_add_buffer_mem_acc(t, mem[i].addr,
		    OCSD_MEM_SPACE_ANY, mem[i].p, (uint32_t)mem[i].len) ==
		    OCSD_OK)
			nacc++;
	}
	/*
	 * Without any memory OpenCSD's decoders refuse to start (a fatal
	 * "not initialised" at the first packet): give them an accessor that
	 * has nothing, so that every address is reported as not accessible,
	 * as trc_pkt_lister does for a snapshot without dumps.
	 */
	if (nacc == 0)
		(void)ocsd_dt_add_callback_mem_acc(t, 0, UINT64_MAX,
		    OCSD_MEM_SPACE_ANY, no_mem, NULL);
	c.cb = cb;
	c.arg = arg;
	c.rc = 0;
	c.dstream = sd->cs.frame == HWTR_CS_FRAME_DSTREAM;
	ocsd_dt_set_gen_elem_outfn(t, elem_in, &c);
	while (done < len) {
		end = len;
		if (sd->cs.frame == HWTR_CS_FRAME_DSTREAM) {
			/* The data part of the 512-byte block @done is in. */
			end = done - done % CS_DSTREAM_BLOCK + CS_DSTREAM_DATA;
			if (done >= end) {
				done = end + CS_DSTREAM_BLOCK - CS_DSTREAM_DATA;
				continue;
			}
			if (end > len)
				end = len;
		}
		n = 0;
		/*
		 * OpenCSD wants contiguous indices: in a DSTREAM capture,
		 * the trace bytes before @done, footers left out.
		 */
		resp = ocsd_dt_process_data(t, OCSD_OP_DATA, (ocsd_trc_index_t)
		    (c.dstream ? done - done / CS_DSTREAM_BLOCK *
		    (CS_DSTREAM_BLOCK - CS_DSTREAM_DATA) : done),
		    (uint32_t)(end - done > UINT32_MAX ? UINT32_MAX : end - done),
		    trace + done, &n);
		done += n;
		if (c.rc < 0) {
			rc = c.rc;
			goto out;
		}
		if (OCSD_DATA_RESP_IS_FATAL(resp)) {
			snprintf(err, errlen, "offset 0x%zx: OpenCSD stops with "
			    "a fatal error (response %d)", done, (int)resp);
			rc = -HWTR_E_DECODE;
			goto out;
		}
		if (OCSD_DATA_RESP_IS_WAIT(resp))
			(void)ocsd_dt_process_data(t, OCSD_OP_FLUSH, 0, 0, NULL,
			    NULL);
		else if (n == 0) {
			snprintf(err, errlen, "offset 0x%zx: OpenCSD makes no "
			    "progress", done);
			rc = -HWTR_E_DECODE;
			goto out;
		}
	}
	(void)ocsd_dt_process_data(t, OCSD_OP_EOT, 0, 0, NULL, NULL);
	if (c.rc < 0)
		rc = c.rc;
out:
	ocsd_destroy_dcd_tree(t);
	return (rc < 0 ? rc : (int)ndec);
}
