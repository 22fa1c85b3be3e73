/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Import a perf.data file of Linux perf or Android's simpleperf (PERFILE2,
 * file or pipe mode) holding Intel PT or CoreSight ETM trace.
 *
 * Two passes.  perf_scan() walks the header, the attr section, the feature
 * sections and every record of the data section (format/perf_record.c
 * parses each one) and keeps what the archive needs: the attrs (for the
 * sample_id of kernel records), AUXTRACE_INFO, the AUXTRACE payloads by
 * file offset, the AUX records, and the offsets of the sideband records.
 * It never writes; a file it cannot read is refused before the archive
 * exists.  perf_write() then makes one stream per CPU (or per thread) of
 * AUX data, copies every payload byte for byte, stores the images it can
 * find by build-id, and writes the sideband in time order with the losses
 * perf recorded or the file betrays (AUX flags, LOST records, AUX data
 * announced but absent, a file cut short).  This file is the first pass;
 * the second and the importer that runs both are in import_perf_write.c.
 */

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hwtrace.h"
#include "hwtr_common.h"
#include "hwtr_elf.h"
#include "hwtr_import.h"
#include "perf_record.h"
#include "perf_file.h"

#define PF_MAGIC	0x32454c4946524550ULL	/* "PERFILE2" */
#define PF_MAGIC_SWAP	0x50455246494c4532ULL
#define PF_HDR_SIZE	104
#define PF_PIPE_HDR	16
#define PF_MAX_ATTRS	4096
#define PF_MAX_IDS	(1u << 20)

/* Feature bits of the header bitmap. */
enum {
	FEAT_BUILD_ID = 2,
	FEAT_HOSTNAME = 3,
	FEAT_OSRELEASE = 4,
	FEAT_VERSION = 5,
	FEAT_ARCH = 6,
	FEAT_NRCPUS = 7,
	FEAT_CPUDESC = 8,
	FEAT_CPUID = 9,
	FEAT_CMDLINE = 11,
	FEAT_BITS = 256
};

/* AUXTRACE_INFO types. */
enum {
	AUXT_INTEL_PT = 1,
	AUXT_INTEL_BTS = 2,
	AUXT_CS_ETM = 3,
	AUXT_ARM_SPE = 4
};

/* Intel PT's AUXTRACE_INFO private words. */


void
hwtr_perf_data_free(struct hwtr_perf_data *pd)
{
	size_t i;

	if (pd == NULL)
		return;
	for (i = 0; i < pd->nattr; i++)
		free(pd->attr[i].ids);
	free(pd->attr);
	free(pd->aux);
	free(pd->auxrec);
	free(pd->sb);
	for (i = 0; i < pd->nbid; i++)
		free(pd->bid[i].name);
	free(pd->bid);
	free(pd->info_priv);
	free(pd->hostname);
	free(pd->version);
	free(pd->arch);
	free(pd->cpuid);
	free(pd->cpudesc);
	free(pd->osrelease);
	for (i = 0; i < pd->ncmdline; i++)
		free(pd->cmdline[i]);
	free(pd->cmdline);
	for (i = 0; i < pd->ncaveat; i++)
		free(pd->caveat[i]);
	free(pd->caveat);
	memset(pd, 0, sizeof(*pd));
}

/* hwtr_perf_fail, shared with import_perf_jit.c; fail() in this file. */
#define fail	hwtr_perf_fail

int
hwtr_perf_fail(const struct hwtr_perf_data *pd, int rc, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (pd->errbuf == NULL || pd->errlen == 0)
		return (rc);
	n = snprintf(pd->errbuf, pd->errlen, "'%s': ", pd->path);
	if (n < 0 || (size_t)n >= pd->errlen)
		return (rc);
	va_start(ap, fmt);
	vsnprintf(pd->errbuf + n, pd->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return (rc);
}

int
hwtr_perf_caveat(struct hwtr_perf_data *pd, const char *fmt, ...)
{
	va_list ap;
	char *s, **nv;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		return (-HWTR_E_NOMEM);
	nv = realloc(pd->caveat, (pd->ncaveat + 1) * sizeof(*nv));
	if (nv == NULL) {
		free(s);
		return (-HWTR_E_NOMEM);
	}
	pd->caveat = nv;
	pd->caveat[pd->ncaveat++] = s;
	return (0);
}

/* 1 when [@off, @off + @len) lies within the file. */
static int
in_file(const struct hwtr_perf_data *pd, uint64_t off, uint64_t len)
{
	return (off <= pd->len && len <= pd->len - off);
}

static int
add_attr(struct hwtr_perf_data *pd, const uint8_t *a, size_t asz,
    const uint8_t *ids, size_t nids, const char *where)
{
	struct hwtr_perf_attr *at;
	uint64_t flags;

	if (pd->nattr >= PF_MAX_ATTRS)
		return (fail(pd, -HWTR_E_LIMIT, "%s: more than %d attrs",
		    where, PF_MAX_ATTRS));
	if (asz < 48)
		return (fail(pd, -HWTR_E_FORMAT, "%s: attr of %zu bytes, "
		    "too short for its sample_type and flags", where, asz));
	if (nids > PF_MAX_IDS)
		return (fail(pd, -HWTR_E_LIMIT, "%s: %zu ids", where, nids));
	if (hwtr_grow(&pd->attr, &pd->attrcap, pd->nattr + 1, sizeof(*at)) < 0)
		return (fail(pd, -HWTR_E_NOMEM, "out of memory"));
	at = &pd->attr[pd->nattr];
	memset(at, 0, sizeof(*at));
	at->type = hwtr_perf_u32(a);
	at->config = hwtr_perf_u64(a + 8);
	at->sample_type = hwtr_perf_u64(a + 24);
	flags = hwtr_perf_u64(a + 40);
	at->flags = flags;
	at->sample_id_all = (flags >> 18) & 1;
	if (nids > 0) {
		if ((at->ids = malloc(nids * 8)) == NULL)
			return (fail(pd, -HWTR_E_NOMEM, "out of memory"));
		memcpy(at->ids, ids, nids * 8);
		at->nids = nids;
	}
	pd->nattr++;
	return (0);
}

/*
 * Decide how kernel records carry their sample_id: one layout when all
 * attrs agree, else by SAMPLE_IDENTIFIER when every attr has it.
 */
static void
settle_layout(struct hwtr_perf_data *pd)
{
	size_t i;
	int same = 1, ident = 1;

	pd->lay_mode = LAY_NONE;
	if (pd->nattr == 0)
		return;
	for (i = 0; i < pd->nattr; i++) {
		if (pd->attr[i].sample_type != pd->attr[0].sample_type ||
		    pd->attr[i].sample_id_all != pd->attr[0].sample_id_all)
			same = 0;
		if (!(pd->attr[i].sample_type & HWTR_PERF_SAMPLE_IDENTIFIER))
			ident = 0;
	}
	if (same) {
		pd->lay_mode = LAY_SAME;
		pd->lay.sample_type = pd->attr[0].sample_type;
		pd->lay.sample_id_all = pd->attr[0].sample_id_all;
	} else if (ident)
		pd->lay_mode = LAY_IDENT;
}

const struct hwtr_perf_idlayout *
hwtr_perf_layout(struct hwtr_perf_data *pd, const uint8_t *rec, size_t len)
{
	uint64_t id;
	size_t i, j;

	if (pd->lay_mode == LAY_SAME)
		return (&pd->lay);
	if (pd->lay_mode != LAY_IDENT ||
	    hwtr_perf_rec_identifier(rec, len, &id) != 0)
		return (NULL);
	for (i = 0; i < pd->nattr; i++)
		for (j = 0; j < pd->attr[i].nids; j++)
			if (hwtr_perf_u64((const uint8_t *)(pd->attr[i].ids +
			    j)) == id) {
				pd->lay.sample_type = pd->attr[i].sample_type;
				pd->lay.sample_id_all =
				    pd->attr[i].sample_id_all;
				return (&pd->lay);
			}
	return (NULL);
}

/* A feature string: u32 length, then that many bytes (NUL-padded). */
static char *
feat_str(const uint8_t *p, size_t len, size_t *usedp)
{
	uint32_t n;

	if (len < 4)
		return (NULL);
	n = hwtr_perf_u32(p);
	if (n > len - 4)
		return (NULL);
	if (usedp != NULL)
		*usedp = 4 + (size_t)n;
	return (strndup((const char *)p + 4, n));
}

static int
feat_build_ids(struct hwtr_perf_data *pd, const uint8_t *p, size_t len)
{
	struct hwtr_perf_bid *b;
	uint16_t sz, misc;
	size_t off = 0, n;

	/*
	 * struct build_id_event: header, pid, build_id[24] (20 bytes, or
	 * with PERF_RECORD_MISC_BUILD_ID_SIZE the size in byte 20), file
	 * name.
	 */
	while (off + 8 <= len) {
		memcpy(&misc, p + off + 4, 2);
		memcpy(&sz, p + off + 6, 2);
		if (sz < 8 + 4 + 24 + 1 || sz > len - off) {
			pd->bad_bids++;
			break;
		}
		if (hwtr_grow(&pd->bid, &pd->bidcap, pd->nbid + 1,
		    sizeof(*b)) < 0)
			return (fail(pd, -HWTR_E_NOMEM, "out of memory"));
		b = &pd->bid[pd->nbid];
		memset(b, 0, sizeof(*b));
		b->pid = (int32_t)hwtr_perf_u32(p + off + 8);
		b->kernel = (misc & HWTR_PERF_MISC_CPUMODE) ==
		    HWTR_PERF_MISC_KERNEL;
		memcpy(b->id, p + off + 12, 20);
		b->len = 20;
		if ((misc & 0x8000) && p[off + 32] > 0 && p[off + 32] <= 20)
			b->len = p[off + 32];
		else {
			/* Old perf pads short ids with zeros. */
			while (b->len > 0 && b->id[b->len - 1] == 0)
				b->len--;
		}
		n = sz - 36;
		b->name = strndup((const char *)p + off + 36, n);
		if (b->name == NULL)
			return (fail(pd, -HWTR_E_NOMEM, "out of memory"));
		pd->nbid++;
		off += sz;
	}
	return (0);
}

static int
feature(struct hwtr_perf_data *pd, unsigned bit, const uint8_t *p, size_t len)
{
	char **dst = NULL;
	uint32_t n, i;
	size_t off, used = 0;

	switch (bit) {
	case FEAT_BUILD_ID:
		return (feat_build_ids(pd, p, len));
	case FEAT_HOSTNAME:	dst = &pd->hostname; break;
	case FEAT_OSRELEASE:	dst = &pd->osrelease; break;
	case FEAT_VERSION:	dst = &pd->version; break;
	case FEAT_ARCH:		dst = &pd->arch; break;
	case FEAT_CPUDESC:	dst = &pd->cpudesc; break;
	case FEAT_CPUID:	dst = &pd->cpuid; break;
	case FEAT_CMDLINE:
		if (len < 4 || pd->cmdline != NULL)
			return (0);
		n = hwtr_perf_u32(p);
		if (n > 4096 || (pd->cmdline = calloc(n + 1,
		    sizeof(char *))) == NULL)
			return (0);
		for (i = 0, off = 4; i < n; i++, off += used) {
			pd->cmdline[i] = feat_str(p + off, len - off, &used);
			if (pd->cmdline[i] == NULL)
				break;
			pd->ncmdline++;
		}
		return (0);
	default:
		return (0);
	}
	if (*dst == NULL)
		*dst = feat_str(p, len, NULL);
	return (0);
}

static int
note_aux(struct hwtr_perf_data *pd, const struct hwtr_perf_rec *r,
    size_t off)
{
	struct hwtr_perf_auxrec *a;

	if (hwtr_grow(&pd->auxrec, &pd->auxreccap, pd->nauxrec + 1,
	    sizeof(*a)) < 0)
		return (fail(pd, -HWTR_E_NOMEM, "out of memory"));
	a = &pd->auxrec[pd->nauxrec];
	a->file_off = off;
	a->offset = r->u.aux.offset;
	a->size = r->u.aux.size;
	a->flags = r->u.aux.flags;
	a->cpu = r->sid.has_cpu ? (int32_t)r->sid.cpu : -1;
	a->tid = r->sid.has_tid ? (int32_t)r->sid.tid : -1;
	a->time = r->sid.has_time ? r->sid.time : 0;
	pd->nauxrec++;
	return (0);
}

static int
note_sb(struct hwtr_perf_data *pd, const struct hwtr_perf_rec *r, size_t off)
{
	struct hwtr_perf_sbrec *s;

	if (hwtr_grow(&pd->sb, &pd->sbcap, pd->nsb + 1, sizeof(*s)) < 0)
		return (fail(pd, -HWTR_E_NOMEM, "out of memory"));
	s = &pd->sb[pd->nsb];
	s->file_off = off;
	s->has_time = r->sid.has_time || r->type == HWTR_PERF_FORK ||
	    r->type == HWTR_PERF_EXIT;
	s->time = r->type == HWTR_PERF_FORK || r->type == HWTR_PERF_EXIT ?
	    r->u.fork.time : r->sid.time;
	s->seq = pd->nsb;
	pd->nsb++;
	return (0);
}

/* One record of the data section at file offset @off. */
static int
record(struct hwtr_perf_data *pd, const struct hwtr_perf_rec *r, size_t off,
    size_t *skip)
{
	struct hwtr_perf_aux *ax;
	uint64_t avail;
	int rc;

	*skip = 0;
	if (r->type < 128)
		pd->count[r->type]++;
	switch (r->type) {
	case HWTR_PERF_MMAP:
	case HWTR_PERF_MMAP2:
	case HWTR_PERF_COMM:
	case HWTR_PERF_FORK:
	case HWTR_PERF_EXIT:
	case HWTR_PERF_ITRACE_START:
	case HWTR_PERF_SWITCH:
	case HWTR_PERF_SWITCH_CPU_WIDE:
	case HWTR_PERF_LOST:
	case HWTR_PERF_LOST_SAMPLES:
		return (note_sb(pd, r, off));
	case HWTR_PERF_AUX:
		if ((rc = note_aux(pd, r, off)) < 0)
			return (rc);
		return (note_sb(pd, r, off));
	case HWTR_PERF_AUX_OUTPUT_HW_ID:
		if (r->sid.has_cpu && r->sid.cpu < HWTR_PERF_MAX_CPUS) {
			pd->hw_id[r->sid.cpu] = r->u.hw_id.hw_id;
			pd->has_hw_id[r->sid.cpu] = 1;
		}
		return (0);
	case HWTR_PERF_HEADER_ATTR:
		if ((rc = add_attr(pd, r->u.attr.attr, r->u.attr.attr_size,
		    r->u.attr.ids, r->u.attr.nids, "HEADER_ATTR")) < 0)
			return (rc);
		settle_layout(pd);
		return (0);
	case HWTR_PERF_HEADER_BUILD_ID:
		/* Pipe mode: one build_id_event per record. */
		return (feat_build_ids(pd, r->raw, r->size));
	case HWTR_PERF_HEADER_FEATURE:
		if (r->u.feature.feat_id < FEAT_BITS)
			return (feature(pd, (unsigned)r->u.feature.feat_id,
			    r->u.feature.data, r->u.feature.len));
		return (0);
	case HWTR_PERF_AUXTRACE_INFO:
		if (pd->info_priv != NULL) {
			pd->extra_info++;
			return (0);
		}
		pd->info_type = r->u.auxtrace_info.type;
		pd->info_npriv = r->u.auxtrace_info.npriv;
		if ((pd->info_priv = calloc(pd->info_npriv + 1, 8)) == NULL)
			return (fail(pd, -HWTR_E_NOMEM, "out of memory"));
		memcpy(pd->info_priv, r->u.auxtrace_info.priv,
		    pd->info_npriv * 8);
		return (0);
	case HWTR_PERF_AUXTRACE:
		if (hwtr_grow(&pd->aux, &pd->auxcap, pd->naux + 1,
		    sizeof(*ax)) < 0)
			return (fail(pd, -HWTR_E_NOMEM, "out of memory"));
		ax = &pd->aux[pd->naux];
		memset(ax, 0, sizeof(*ax));
		ax->data_off = off + r->size;
		ax->want = r->u.auxtrace.size;
		ax->offset = r->u.auxtrace.offset;
		ax->idx = r->u.auxtrace.idx;
		ax->tid = (int32_t)r->u.auxtrace.tid;
		ax->cpu = (int32_t)r->u.auxtrace.cpu;
		avail = pd->data_end - ax->data_off;
		ax->have = ax->want < avail ? ax->want : avail;
		pd->naux++;
		*skip = ax->have;
		if (ax->have < ax->want)
			pd->cut_aux = 1;
		return (0);
	case HWTR_PERF_TIME_CONV:
		pd->has_tc = 1;
		pd->tc_shift = r->u.time_conv.time_shift;
		pd->tc_mult = r->u.time_conv.time_mult;
		pd->tc_zero = r->u.time_conv.time_zero;
		pd->tc_ext = r->u.time_conv.has_ext;
		pd->tc_cycles = r->u.time_conv.time_cycles;
		pd->tc_mask = r->u.time_conv.time_mask;
		pd->tc_zero_cap = r->u.time_conv.cap_user_time_zero;
		pd->tc_short = r->u.time_conv.cap_user_time_short;
		return (0);
	case HWTR_PERF_COMPRESSED:
		pd->compressed++;
		return (0);
	default:
		if (hwtr_perf_rec_name(r->type) == NULL)
			pd->unknown++;
		return (0);
	}
}

/* Walk the records from @off to pd->data_end. */
static int
walk(struct hwtr_perf_data *pd, size_t off)
{
	struct hwtr_perf_rec r;
	const struct hwtr_perf_idlayout *lay;
	char ebuf[HWTR_ERRMSG_MAX];
	size_t skip;
	uint64_t nrec = 0;
	int rc;

	while (off < pd->data_end) {
		lay = hwtr_perf_layout(pd, pd->buf + off, pd->data_end - off);
		rc = hwtr_perf_rec_parse(pd->buf + off, pd->data_end - off,
		    lay, &r, ebuf, sizeof(ebuf));
		if (rc < 0) {
			/*
			 * A record cut by the end of the file is loss; a
			 * record that lies about its own fields inside the
			 * file is an error.
			 */
			if (pd->data_end == pd->len && (r.size == 0 ||
			    r.size > pd->data_end - off)) {
				pd->cut_at = off;
				pd->cut = 1;
				return (0);
			}
			return (fail(pd, -HWTR_E_FORMAT, "record %" PRIu64
			    " at byte %zu: %s", nrec, off, ebuf));
		}
		if ((rc = record(pd, &r, off, &skip)) < 0)
			return (rc);
		off += r.size + skip;
		nrec++;
	}
	pd->nrec = nrec;
	return (0);
}

int
hwtr_perf_scan(struct hwtr_perf_data *pd)
{
	const uint8_t *p = pd->buf;
	uint64_t magic, hsz, asz, aoff, alen, doff, dlen, foff, n, i;
	uint64_t ioff, ilen;
	size_t k, nf;
	unsigned bit;
	int rc;

	if (pd->len < 16)
		return (fail(pd, -HWTR_E_FORMAT, "%zu bytes, too short for "
		    "a perf.data header", pd->len));
	magic = hwtr_perf_u64(p);
	if (magic == PF_MAGIC_SWAP)
		return (fail(pd, -HWTR_E_FORMAT, "a big-endian perf.data "
		    "file; only little-endian files are read"));
	if (magic != PF_MAGIC)
		return (fail(pd, -HWTR_E_FORMAT, "not a perf.data file (no "
		    "PERFILE2 magic)"));
	hsz = hwtr_perf_u64(p + 8);
	if (hsz == PF_PIPE_HDR) {
		pd->pipe = 1;
		pd->data_end = pd->len;
		return (walk(pd, PF_PIPE_HDR));
	}
	if (hsz < PF_HDR_SIZE || hsz > pd->len)
		return (fail(pd, -HWTR_E_FORMAT, "header size %" PRIu64
		    " is neither 16 (pipe mode) nor 104 within the %zu-byte "
		    "file", hsz, pd->len));
	asz = hwtr_perf_u64(p + 16);
	aoff = hwtr_perf_u64(p + 24);
	alen = hwtr_perf_u64(p + 32);
	doff = hwtr_perf_u64(p + 40);
	dlen = hwtr_perf_u64(p + 48);

	/* The attr section: each entry an attr, then its ids' section. */
	if (alen > 0) {
		if (asz < 48 + 16 || alen % asz != 0)
			return (fail(pd, -HWTR_E_FORMAT, "attr section of "
			    "%" PRIu64 " bytes does not hold whole entries of "
			    "%" PRIu64 " bytes", alen, asz));
		if (!in_file(pd, aoff, alen))
			return (fail(pd, -HWTR_E_FORMAT, "attr section "
			    "(%" PRIu64 " bytes at %" PRIu64 ") lies past the "
			    "end of the %zu-byte file", alen, aoff, pd->len));
	}
	for (i = 0; alen > 0 && i < alen / asz; i++) {
		const uint8_t *a = p + aoff + i * asz;
		uint32_t sz = hwtr_perf_u32(a + 4);
		char where[64];

		snprintf(where, sizeof(where), "attr %" PRIu64, i);
		if (sz == 0)
			sz = 64;	/* PERF_ATTR_SIZE_VER0 */
		if (sz > asz - 16)
			return (fail(pd, -HWTR_E_FORMAT, "%s says it has %u "
			    "bytes, more than its %" PRIu64 "-byte entry",
			    where, sz, asz - 16));
		ioff = hwtr_perf_u64(a + asz - 16);
		ilen = hwtr_perf_u64(a + asz - 8);
		if (ilen % 8 != 0 || !in_file(pd, ioff, ilen))
			return (fail(pd, -HWTR_E_FORMAT, "%s: its ids "
			    "(%" PRIu64 " bytes at %" PRIu64 ") lie past the "
			    "end of the file or are not whole u64s", where,
			    ilen, ioff));
		if ((rc = add_attr(pd, a, sz, p + ioff, ilen / 8, where)) < 0)
			return (rc);
	}
	settle_layout(pd);

	/* The data section; a file cut short is read as far as it goes. */
	if (doff < hsz || doff > pd->len)
		return (fail(pd, -HWTR_E_FORMAT, "data section at byte "
		    "%" PRIu64 " lies outside the %zu-byte file", doff,
		    pd->len));
	pd->data_off = doff;
	if (dlen == 0) {
		/* perf was stopped before it wrote the header back. */
		pd->data_end = pd->len;
		pd->no_data_size = 1;
	} else if (dlen > pd->len - doff) {
		pd->data_end = pd->len;
		pd->data_short = dlen - (pd->len - doff);
	} else
		pd->data_end = doff + dlen;

	/* Feature sections follow the data section. */
	foff = doff + dlen;
	for (bit = 0, nf = 0; bit < FEAT_BITS; bit++)
		if (p[72 + bit / 8] & (1u << (bit % 8)))
			nf++;
	if (dlen != 0 && nf > 0) {
		if (!in_file(pd, foff, nf * 16))
			pd->feat_missing = 1;
		else {
			for (bit = 0, k = 0; bit < FEAT_BITS; bit++) {
				if (!(p[72 + bit / 8] & (1u << (bit % 8))))
					continue;
				ioff = hwtr_perf_u64(p + foff + k * 16);
				n = hwtr_perf_u64(p + foff + k * 16 + 8);
				k++;
				if (!in_file(pd, ioff, n)) {
					pd->feat_bad++;
					continue;
				}
				if ((rc = feature(pd, bit, p + ioff,
				    (size_t)n)) < 0)
					return (rc);
			}
		}
	}
	return (walk(pd, doff));
}
