/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * One perf_event record from a buffer, bounds-checked and typed (see
 * perf_record.h).  Field offsets are those of linux/perf_event.h and of
 * perf's tools/lib/perf/include/perf/event.h; every read is checked
 * against the record's size before it is made, and the record's size
 * against the bytes the caller has.
 */

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "hwtrace.h"
#include "hwtr_import.h"
#include "perf_record.h"

static const char *const names[] = {
	[HWTR_PERF_MMAP] = "MMAP",
	[HWTR_PERF_LOST] = "LOST",
	[HWTR_PERF_COMM] = "COMM",
	[HWTR_PERF_EXIT] = "EXIT",
	[HWTR_PERF_THROTTLE] = "THROTTLE",
	[HWTR_PERF_UNTHROTTLE] = "UNTHROTTLE",
	[HWTR_PERF_FORK] = "FORK",
	[HWTR_PERF_READ] = "READ",
	[HWTR_PERF_SAMPLE] = "SAMPLE",
	[HWTR_PERF_MMAP2] = "MMAP2",
	[HWTR_PERF_AUX] = "AUX",
	[HWTR_PERF_ITRACE_START] = "ITRACE_START",
	[HWTR_PERF_LOST_SAMPLES] = "LOST_SAMPLES",
	[HWTR_PERF_SWITCH] = "SWITCH",
	[HWTR_PERF_SWITCH_CPU_WIDE] = "SWITCH_CPU_WIDE",
	[HWTR_PERF_NAMESPACES] = "NAMESPACES",
	[HWTR_PERF_KSYMBOL] = "KSYMBOL",
	[HWTR_PERF_BPF_EVENT] = "BPF_EVENT",
	[HWTR_PERF_CGROUP] = "CGROUP",
	[HWTR_PERF_TEXT_POKE] = "TEXT_POKE",
	[HWTR_PERF_AUX_OUTPUT_HW_ID] = "AUX_OUTPUT_HW_ID",
	[HWTR_PERF_HEADER_ATTR] = "HEADER_ATTR",
	[HWTR_PERF_HEADER_EVENT_TYPE] = "HEADER_EVENT_TYPE",
	[HWTR_PERF_HEADER_TRACING_DATA] = "HEADER_TRACING_DATA",
	[HWTR_PERF_HEADER_BUILD_ID] = "HEADER_BUILD_ID",
	[HWTR_PERF_FINISHED_ROUND] = "FINISHED_ROUND",
	[HWTR_PERF_ID_INDEX] = "ID_INDEX",
	[HWTR_PERF_AUXTRACE_INFO] = "AUXTRACE_INFO",
	[HWTR_PERF_AUXTRACE] = "AUXTRACE",
	[HWTR_PERF_AUXTRACE_ERROR] = "AUXTRACE_ERROR",
	[HWTR_PERF_THREAD_MAP] = "THREAD_MAP",
	[HWTR_PERF_CPU_MAP] = "CPU_MAP",
	[HWTR_PERF_STAT_CONFIG] = "STAT_CONFIG",
	[HWTR_PERF_STAT] = "STAT",
	[HWTR_PERF_STAT_ROUND] = "STAT_ROUND",
	[HWTR_PERF_EVENT_UPDATE] = "EVENT_UPDATE",
	[HWTR_PERF_TIME_CONV] = "TIME_CONV",
	[HWTR_PERF_HEADER_FEATURE] = "HEADER_FEATURE",
	[HWTR_PERF_COMPRESSED] = "COMPRESSED",
	[HWTR_PERF_FINISHED_INIT] = "FINISHED_INIT",
};

const char *
hwtr_perf_rec_name(uint32_t type)
{
	if (type >= sizeof(names) / sizeof(names[0]))
		return (NULL);
	return (names[type]);
}

/* Size of the sample_id that @lay appends to a kernel record. */
static size_t
sid_size(const struct hwtr_perf_idlayout *lay)
{
	uint64_t t;
	size_t n = 0;

	if (lay == NULL || !lay->sample_id_all)
		return (0);
	t = lay->sample_type;
	if (t & HWTR_PERF_SAMPLE_TID)
		n += 8;
	if (t & HWTR_PERF_SAMPLE_TIME)
		n += 8;
	if (t & HWTR_PERF_SAMPLE_ID)
		n += 8;
	if (t & HWTR_PERF_SAMPLE_STREAM_ID)
		n += 8;
	if (t & HWTR_PERF_SAMPLE_CPU)
		n += 8;
	if (t & HWTR_PERF_SAMPLE_IDENTIFIER)
		n += 8;
	return (n);
}

static void
parse_sid(const uint8_t *p, const struct hwtr_perf_idlayout *lay,
    struct hwtr_perf_sample_id *s)
{
	uint64_t t = lay->sample_type;

	if (t & HWTR_PERF_SAMPLE_TID) {
		s->has_tid = 1;
		s->pid = hwtr_perf_u32(p);
		s->tid = hwtr_perf_u32(p + 4);
		p += 8;
	}
	if (t & HWTR_PERF_SAMPLE_TIME) {
		s->has_time = 1;
		s->time = hwtr_perf_u64(p);
		p += 8;
	}
	if (t & HWTR_PERF_SAMPLE_ID) {
		s->has_id = 1;
		s->id = hwtr_perf_u64(p);
		p += 8;
	}
	if (t & HWTR_PERF_SAMPLE_STREAM_ID)
		p += 8;
	if (t & HWTR_PERF_SAMPLE_CPU) {
		s->has_cpu = 1;
		s->cpu = hwtr_perf_u32(p);
		p += 8;
	}
	if (t & HWTR_PERF_SAMPLE_IDENTIFIER) {
		s->has_id = 1;
		s->id = hwtr_perf_u64(p);
	}
}

/* A NUL-terminated string at @p, before @end; NULL when it is not. */
static const char *
str_at(const uint8_t *p, const uint8_t *end)
{
	if (p >= end || memchr(p, '\0', (size_t)(end - p)) == NULL)
		return (NULL);
	return ((const char *)p);
}

int
hwtr_perf_rec_identifier(const void *buf, size_t len, uint64_t *idp)
{
	const uint8_t *p = buf;
	uint16_t size;
	uint32_t type;

	if (len < HWTR_PERF_HDR_SIZE)
		return (-1);
	type = hwtr_perf_u32(p);
	memcpy(&size, p + 6, 2);
	if (size < HWTR_PERF_HDR_SIZE + 8 || size > len ||
	    type >= HWTR_PERF_HEADER_ATTR)
		return (-1);
	*idp = hwtr_perf_u64(p + size - 8);
	return (0);
}

/* The fixed part of a record of @type: what it needs, sample_id excluded. */
static size_t
rec_need(uint32_t type)
{
	switch (type) {
	case HWTR_PERF_MMAP:	return (40 + 1);
	case HWTR_PERF_MMAP2:	return (72 + 1);
	case HWTR_PERF_COMM:	return (16 + 1);
	case HWTR_PERF_FORK:
	case HWTR_PERF_EXIT:	return (32);
	case HWTR_PERF_LOST:	return (24);
	case HWTR_PERF_AUX:	return (32);
	case HWTR_PERF_ITRACE_START: return (16);
	case HWTR_PERF_LOST_SAMPLES: return (16);
	case HWTR_PERF_SWITCH_CPU_WIDE: return (16);
	case HWTR_PERF_AUX_OUTPUT_HW_ID: return (16);
	case HWTR_PERF_AUXTRACE_INFO: return (16);
	case HWTR_PERF_AUXTRACE: return (HWTR_PERF_AUXTRACE_SIZE);
	case HWTR_PERF_TIME_CONV: return (32);
	case HWTR_PERF_HEADER_ATTR: return (8 + 8);
	case HWTR_PERF_HEADER_FEATURE: return (16);
	default:		return (8);
	}
}

/* The fields of an MMAP or MMAP2 record @p whose body ends at @end. */
static int
parse_mmap(const uint8_t *p, const uint8_t *end, struct hwtr_perf_rec *r,
    const char *nm, char *errbuf, size_t errlen)
{
	r->u.mmap.pid = hwtr_perf_u32(p + 8);
	r->u.mmap.tid = hwtr_perf_u32(p + 12);
	r->u.mmap.addr = hwtr_perf_u64(p + 16);
	r->u.mmap.len = hwtr_perf_u64(p + 24);
	r->u.mmap.pgoff = hwtr_perf_u64(p + 32);
	if (r->type == HWTR_PERF_MMAP) {
		r->u.mmap.filename = str_at(p + 40, end);
	} else {
		if (r->misc & HWTR_PERF_MISC_MMAP_BUILD_ID) {
			r->u.mmap.build_id_len = p[40];
			if (r->u.mmap.build_id_len > 20) {
				hwtr_import_err(errbuf, errlen,
				    "MMAP2 build-id size %u above "
				    "20", p[40]);
				return (-HWTR_E_FORMAT);
			}
			memcpy(r->u.mmap.build_id, p + 44,
			    r->u.mmap.build_id_len);
		}
		r->u.mmap.prot = hwtr_perf_u32(p + 64);
		r->u.mmap.flags = hwtr_perf_u32(p + 68);
		r->u.mmap.filename = str_at(p + 72, end);
	}
	if (r->u.mmap.filename == NULL) {
		hwtr_import_err(errbuf, errlen, "%s file name is not "
		    "terminated within its record", nm);
		return (-HWTR_E_FORMAT);
	}
	return (0);
}

int
hwtr_perf_rec_parse(const void *buf, size_t len,
    const struct hwtr_perf_idlayout *lay, struct hwtr_perf_rec *r,
    char *errbuf, size_t errlen)
{
	const uint8_t *p = buf, *end;
	const char *nm;
	size_t need, sids, body;

	memset(r, 0, sizeof(*r));
	if (len < HWTR_PERF_HDR_SIZE) {
		hwtr_import_err(errbuf, errlen, "record header cut short: "
		    "%zu of 8 bytes", len);
		return (-HWTR_E_FORMAT);
	}
	r->type = hwtr_perf_u32(p);
	memcpy(&r->misc, p + 4, 2);
	memcpy(&r->size, p + 6, 2);
	r->raw = p;
	nm = hwtr_perf_rec_name(r->type);
	if (r->size < HWTR_PERF_HDR_SIZE) {
		hwtr_import_err(errbuf, errlen, "record of type %u has size "
		    "%u, below its 8-byte header", r->type, r->size);
		return (-HWTR_E_FORMAT);
	}
	if (r->size > len) {
		hwtr_import_err(errbuf, errlen, "record of type %u (%s) has "
		    "size %u, past the %zu bytes left", r->type,
		    nm ? nm : "unknown", r->size, len);
		return (-HWTR_E_FORMAT);
	}

	/* The fixed part each type needs, sample_id excluded. */
	need = rec_need(r->type);
	sids = 0;
	if (r->type < HWTR_PERF_HEADER_ATTR && r->type != HWTR_PERF_SAMPLE)
		sids = sid_size(lay);
	if (need + sids > r->size) {
		hwtr_import_err(errbuf, errlen, "%s record of size %u is "
		    "shorter than its fields (%zu bytes)", nm ? nm : "unknown",
		    r->size, need + sids);
		return (-HWTR_E_FORMAT);
	}
	body = r->size - sids;
	if (sids > 0)
		parse_sid(p + body, lay, &r->sid);
	end = p + body;

	switch (r->type) {
	case HWTR_PERF_MMAP:
	case HWTR_PERF_MMAP2:
		if (parse_mmap(p, end, r, nm, errbuf, errlen) < 0)
			return (-HWTR_E_FORMAT);
		break;
	case HWTR_PERF_COMM:
		r->u.comm.pid = hwtr_perf_u32(p + 8);
		r->u.comm.tid = hwtr_perf_u32(p + 12);
		if ((r->u.comm.comm = str_at(p + 16, end)) == NULL) {
			hwtr_import_err(errbuf, errlen, "COMM name is not "
			    "terminated within its record");
			return (-HWTR_E_FORMAT);
		}
		break;
	case HWTR_PERF_FORK:
	case HWTR_PERF_EXIT:
		r->u.fork.pid = hwtr_perf_u32(p + 8);
		r->u.fork.ppid = hwtr_perf_u32(p + 12);
		r->u.fork.tid = hwtr_perf_u32(p + 16);
		r->u.fork.ptid = hwtr_perf_u32(p + 20);
		r->u.fork.time = hwtr_perf_u64(p + 24);
		break;
	case HWTR_PERF_LOST:
		r->u.lost.id = hwtr_perf_u64(p + 8);
		r->u.lost.lost = hwtr_perf_u64(p + 16);
		break;
	case HWTR_PERF_LOST_SAMPLES:
		r->u.lost.lost = hwtr_perf_u64(p + 8);
		break;
	case HWTR_PERF_AUX:
		r->u.aux.offset = hwtr_perf_u64(p + 8);
		r->u.aux.size = hwtr_perf_u64(p + 16);
		r->u.aux.flags = hwtr_perf_u64(p + 24);
		break;
	case HWTR_PERF_ITRACE_START:
		r->u.itrace_start.pid = hwtr_perf_u32(p + 8);
		r->u.itrace_start.tid = hwtr_perf_u32(p + 12);
		break;
	case HWTR_PERF_SWITCH_CPU_WIDE:
		r->u.sw.pid = hwtr_perf_u32(p + 8);
		r->u.sw.tid = hwtr_perf_u32(p + 12);
		break;
	case HWTR_PERF_AUX_OUTPUT_HW_ID:
		r->u.hw_id.hw_id = hwtr_perf_u64(p + 8);
		break;
	case HWTR_PERF_AUXTRACE_INFO:
		r->u.auxtrace_info.type = hwtr_perf_u32(p + 8);
		r->u.auxtrace_info.priv = p + 16;
		r->u.auxtrace_info.npriv = (r->size - 16) / 8;
		break;
	case HWTR_PERF_AUXTRACE:
		r->u.auxtrace.size = hwtr_perf_u64(p + 8);
		r->u.auxtrace.offset = hwtr_perf_u64(p + 16);
		r->u.auxtrace.reference = hwtr_perf_u64(p + 24);
		r->u.auxtrace.idx = hwtr_perf_u32(p + 32);
		r->u.auxtrace.tid = hwtr_perf_u32(p + 36);
		r->u.auxtrace.cpu = hwtr_perf_u32(p + 40);
		break;
	case HWTR_PERF_TIME_CONV:
		r->u.time_conv.time_shift = hwtr_perf_u64(p + 8);
		r->u.time_conv.time_mult = hwtr_perf_u64(p + 16);
		r->u.time_conv.time_zero = hwtr_perf_u64(p + 24);
		if (r->size >= 56) {
			r->u.time_conv.has_ext = 1;
			r->u.time_conv.time_cycles = hwtr_perf_u64(p + 32);
			r->u.time_conv.time_mask = hwtr_perf_u64(p + 40);
			r->u.time_conv.cap_user_time_zero = p[48];
			r->u.time_conv.cap_user_time_short = p[49];
		}
		break;
	case HWTR_PERF_HEADER_ATTR: {
		uint32_t asz = hwtr_perf_u32(p + 8 + 4);

		if (asz < 8 || asz > (size_t)r->size - 8) {
			hwtr_import_err(errbuf, errlen, "HEADER_ATTR: attr "
			    "size %u does not fit its %u-byte record", asz,
			    r->size);
			return (-HWTR_E_FORMAT);
		}
		r->u.attr.attr = p + 8;
		r->u.attr.attr_size = asz;
		r->u.attr.ids = p + 8 + asz;
		r->u.attr.nids = (r->size - 8 - asz) / 8;
		break;
	}
	case HWTR_PERF_HEADER_FEATURE:
		r->u.feature.feat_id = hwtr_perf_u64(p + 8);
		r->u.feature.data = p + 16;
		r->u.feature.len = r->size - 16;
		break;
	default:
		break;
	}
	return (r->size);
}
