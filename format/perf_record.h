/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * perf_event records, one at a time: the records the kernel writes into a
 * perf ring (MMAP, COMM, AUX, SWITCH, ...) and the ones perf and
 * simpleperf add in a perf.data file (AUXTRACE_INFO, AUXTRACE, TIME_CONV,
 * HEADER_ATTR, ...).  hwtr_perf_rec_parse() checks one record against the
 * bytes it has and returns it typed; strings and payloads point into the
 * caller's buffer.  It knows nothing of files, so a live perf_event AUX
 * source can run it over its own ring.  Host byte order (little-endian
 * files on a little-endian host; the file reader refuses the others).
 * Private to libhwtrace.
 */

#ifndef HWTR_PERF_RECORD_H
#define HWTR_PERF_RECORD_H

#include <stddef.h>
#include <stdint.h>

/* Record types: linux/perf_event.h, then perf's user types. */
enum {
	HWTR_PERF_MMAP = 1,
	HWTR_PERF_LOST = 2,
	HWTR_PERF_COMM = 3,
	HWTR_PERF_EXIT = 4,
	HWTR_PERF_THROTTLE = 5,
	HWTR_PERF_UNTHROTTLE = 6,
	HWTR_PERF_FORK = 7,
	HWTR_PERF_READ = 8,
	HWTR_PERF_SAMPLE = 9,
	HWTR_PERF_MMAP2 = 10,
	HWTR_PERF_AUX = 11,
	HWTR_PERF_ITRACE_START = 12,
	HWTR_PERF_LOST_SAMPLES = 13,
	HWTR_PERF_SWITCH = 14,
	HWTR_PERF_SWITCH_CPU_WIDE = 15,
	HWTR_PERF_NAMESPACES = 16,
	HWTR_PERF_KSYMBOL = 17,
	HWTR_PERF_BPF_EVENT = 18,
	HWTR_PERF_CGROUP = 19,
	HWTR_PERF_TEXT_POKE = 20,
	HWTR_PERF_AUX_OUTPUT_HW_ID = 21,
	HWTR_PERF_KERNEL_MAX,

	HWTR_PERF_HEADER_ATTR = 64,
	HWTR_PERF_HEADER_EVENT_TYPE = 65,
	HWTR_PERF_HEADER_TRACING_DATA = 66,
	HWTR_PERF_HEADER_BUILD_ID = 67,
	HWTR_PERF_FINISHED_ROUND = 68,
	HWTR_PERF_ID_INDEX = 69,
	HWTR_PERF_AUXTRACE_INFO = 70,
	HWTR_PERF_AUXTRACE = 71,
	HWTR_PERF_AUXTRACE_ERROR = 72,
	HWTR_PERF_THREAD_MAP = 73,
	HWTR_PERF_CPU_MAP = 74,
	HWTR_PERF_STAT_CONFIG = 75,
	HWTR_PERF_STAT = 76,
	HWTR_PERF_STAT_ROUND = 77,
	HWTR_PERF_EVENT_UPDATE = 78,
	HWTR_PERF_TIME_CONV = 79,
	HWTR_PERF_HEADER_FEATURE = 80,
	HWTR_PERF_COMPRESSED = 81,
	HWTR_PERF_FINISHED_INIT = 82
};

/* perf_event_header.misc bits. */
#define HWTR_PERF_MISC_CPUMODE		0x0007u
#define HWTR_PERF_MISC_KERNEL		0x0001u
#define HWTR_PERF_MISC_USER		0x0002u
#define HWTR_PERF_MISC_MMAP_DATA	0x2000u
#define HWTR_PERF_MISC_COMM_EXEC	0x2000u
#define HWTR_PERF_MISC_SWITCH_OUT	0x2000u
#define HWTR_PERF_MISC_SWITCH_PREEMPT	0x4000u
#define HWTR_PERF_MISC_MMAP_BUILD_ID	0x4000u

/* AUX record flags. */
#define HWTR_PERF_AUX_TRUNCATED		0x01u
#define HWTR_PERF_AUX_OVERWRITE		0x02u
#define HWTR_PERF_AUX_PARTIAL		0x04u
#define HWTR_PERF_AUX_COLLISION		0x08u
#define HWTR_PERF_AUX_FMT_MASK		0xff00u
#define HWTR_PERF_AUX_CS_RAW		0x0100u	/* unformatted CoreSight */

/* perf_event_attr.sample_type bits that shape sample_id. */
#define HWTR_PERF_SAMPLE_TID		(1u << 1)
#define HWTR_PERF_SAMPLE_TIME		(1u << 2)
#define HWTR_PERF_SAMPLE_ID		(1u << 6)
#define HWTR_PERF_SAMPLE_CPU		(1u << 7)
#define HWTR_PERF_SAMPLE_STREAM_ID	(1u << 9)
#define HWTR_PERF_SAMPLE_IDENTIFIER	(1u << 16)

#define HWTR_PERF_HDR_SIZE	8
#define HWTR_PERF_AUXTRACE_SIZE	48	/* header.size; the payload follows */

/*
 * How the attr that wrote a record lays out its trailing sample_id
 * (perf_event_attr.sample_type and .sample_id_all).
 */
struct hwtr_perf_idlayout {
	uint64_t	sample_type;
	int		sample_id_all;
};

/* A kernel record's sample_id; @has_* say which fields it had. */
struct hwtr_perf_sample_id {
	unsigned	has_tid:1, has_time:1, has_id:1, has_cpu:1;
	uint32_t	pid, tid;
	uint64_t	time;
	uint64_t	id;
	uint32_t	cpu;
};

struct hwtr_perf_rec {
	uint32_t	type;
	uint16_t	misc;
	uint16_t	size;		/* header.size */
	const uint8_t	*raw;		/* the record, @size bytes */
	union {
		struct {		/* MMAP, MMAP2 */
			uint32_t pid, tid;
			uint64_t addr, len, pgoff;
			uint32_t prot, flags;	/* MMAP2 only */
			uint8_t	build_id[20];
			uint8_t	build_id_len;	/* MMAP2 with MMAP_BUILD_ID */
			const char *filename;
		} mmap;
		struct {
			uint64_t id, lost;
		} lost;			/* LOST; LOST_SAMPLES sets lost */
		struct {
			uint32_t pid, tid;
			const char *comm;
		} comm;
		struct {		/* FORK, EXIT */
			uint32_t pid, ppid, tid, ptid;
			uint64_t time;
		} fork;
		struct {
			uint64_t offset, size, flags;
		} aux;
		struct {
			uint32_t pid, tid;
		} itrace_start;
		struct {		/* SWITCH_CPU_WIDE */
			uint32_t pid, tid;	/* next (out) or previous */
		} sw;
		struct {
			uint64_t hw_id;
		} hw_id;
		struct {
			uint32_t type;
			const uint8_t *priv;	/* npriv u64s, unaligned */
			size_t	npriv;
		} auxtrace_info;
		struct {
			uint64_t size, offset, reference;
			uint32_t idx, tid, cpu;
		} auxtrace;
		struct {
			uint64_t time_shift, time_mult, time_zero;
			uint64_t time_cycles, time_mask;
			uint8_t	cap_user_time_zero, cap_user_time_short;
			int	has_ext;
		} time_conv;
		struct {		/* HEADER_ATTR: attr, then u64 ids */
			const uint8_t *attr;
			size_t	attr_size;
			const uint8_t *ids;
			size_t	nids;
		} attr;
		struct {
			uint64_t feat_id;
			const uint8_t *data;
			size_t	len;
		} feature;
	} u;
	struct hwtr_perf_sample_id sid;
};

/*
 * Parse the record at @buf (@len bytes available).  @lay describes the
 * sample_id of kernel records (NULL: none).  Returns the record's size
 * (header.size, at least 8; an AUXTRACE payload is not included), or
 * -HWTR_E_FORMAT with @errbuf naming the field, when the record does not
 * fit in @len or its fields do not fit in its size.  Types it does not
 * know return their size with only the header filled in.
 */
int hwtr_perf_rec_parse(const void *buf, size_t len,
    const struct hwtr_perf_idlayout *lay, struct hwtr_perf_rec *r,
    char *errbuf, size_t errlen);

/*
 * The sample id of a kernel record whose attrs all have
 * SAMPLE_IDENTIFIER: its last u64.  0 and *idp set, or -1 when the record
 * is too short or not a kernel record.
 */
int hwtr_perf_rec_identifier(const void *buf, size_t len, uint64_t *idp);

/* A static name for record type @type ("MMAP2"), or NULL. */
const char *hwtr_perf_rec_name(uint32_t type);

/* Read a little-endian u64 / u32 from unaligned @p. */
static inline uint64_t
hwtr_perf_u64(const uint8_t *p)
{
	uint64_t v;

	__builtin_memcpy(&v, p, 8);
	return (v);
}

static inline uint32_t
hwtr_perf_u32(const uint8_t *p)
{
	uint32_t v;

	__builtin_memcpy(&v, p, 4);
	return (v);
}

/*
 * AUXTRACE_INFO's private words as perf writes them: Intel PT's, in
 * order, and the magic that opens each CoreSight CPU's block.  The
 * importer reads them and the perf source writes them.
 */
enum {
	PT_PMU_TYPE, PT_TIME_SHIFT, PT_TIME_MULT, PT_TIME_ZERO,
	PT_CAP_USER_TIME_ZERO, PT_TSC_BIT, PT_NORETCOMP_BIT,
	PT_HAVE_SCHED_SWITCH, PT_SNAPSHOT_MODE, PT_PER_CPU_MMAPS, PT_MTC_BIT,
	PT_MTC_FREQ_BITS, PT_TSC_CTC_N, PT_TSC_CTC_D, PT_CYC_BIT,
	PT_MAX_NONTURBO_RATIO, PT_FILTER_STR_LEN, PT_PRIV_MAX
};

#define CS_MAGIC_ETMV3	0x3030303030303030ULL
#define CS_MAGIC_ETMV4	0x4040404040404040ULL
#define CS_MAGIC_ETE	0x5050505050505050ULL

#endif /* !HWTR_PERF_RECORD_H */
