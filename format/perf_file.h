/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * What the perf.data reader (format/import_perf.c) keeps of a file, and
 * the writer that turns it into an archive (format/import_perf_write.c).
 * Private to libhwtrace; the fuzzer runs hwtr_perf_scan() on its own.
 */

#ifndef HWTR_PERF_FILE_H
#define HWTR_PERF_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "hwtrace.h"
#include "perf_record.h"

#define HWTR_PERF_MAX_CPUS	4096

struct hwtr_perf_attr {
	uint32_t	type;
	uint64_t	config;
	uint64_t	sample_type;
	uint64_t	flags;		/* the attr's bit fields */
	int		sample_id_all;
	uint64_t	*ids;
	size_t		nids;
};

/* One AUXTRACE record: its payload in the file. */
struct hwtr_perf_aux {
	size_t		data_off;
	uint64_t	want;		/* the size the record announces */
	uint64_t	have;		/* what the file holds of it */
	uint64_t	offset;		/* position in the AUX area */
	uint32_t	idx;
	int32_t		tid;
	int32_t		cpu;
};

/* One AUX record (the kernel's note that AUX data was written). */
struct hwtr_perf_auxrec {
	size_t		file_off;
	uint64_t	offset, size, flags;
	int32_t		cpu, tid;
	uint64_t	time;
};

/* A sideband record to convert, by file offset. */
struct hwtr_perf_sbrec {
	size_t		file_off;
	uint64_t	time;
	int		has_time;
	size_t		seq;
};

/* An entry of the BUILD_ID feature. */
struct hwtr_perf_bid {
	int32_t		pid;
	int		kernel;
	uint8_t		id[20];
	size_t		len;
	char		*name;
};

enum { LAY_NONE, LAY_SAME, LAY_IDENT };

struct hwtr_perf_data {
	const char	*path;
	const uint8_t	*buf;
	size_t		len;
	char		*errbuf;
	size_t		errlen;

	int		pipe;
	size_t		data_off, data_end;
	uint64_t	data_short;	/* data section bytes past the end */
	int		no_data_size;	/* header's data size was 0 */
	int		cut;		/* last record cut by the end */
	size_t		cut_at;
	int		cut_aux;	/* an AUXTRACE payload cut */
	int		feat_missing;
	uint64_t	feat_bad;
	uint64_t	bad_bids;

	struct hwtr_perf_attr *attr;
	size_t		nattr, attrcap;
	int		lay_mode;
	struct hwtr_perf_idlayout lay;

	uint32_t	info_type;
	uint64_t	*info_priv;
	size_t		info_npriv;
	uint64_t	extra_info;

	int		has_tc;
	uint64_t	tc_shift, tc_mult, tc_zero;
	/* TIME_CONV's second half (Linux 5.12): a counter of fewer bits. */
	int		tc_ext, tc_zero_cap, tc_short;
	uint64_t	tc_cycles, tc_mask;

	struct hwtr_perf_aux *aux;
	size_t		naux, auxcap;
	struct hwtr_perf_auxrec *auxrec;
	size_t		nauxrec, auxreccap;
	struct hwtr_perf_sbrec *sb;
	size_t		nsb, sbcap;
	struct hwtr_perf_bid *bid;
	size_t		nbid, bidcap;

	uint64_t	hw_id[HWTR_PERF_MAX_CPUS];
	uint8_t		has_hw_id[HWTR_PERF_MAX_CPUS];

	char		*hostname, *osrelease, *version, *arch, *cpuid;
	char		*cpudesc;
	char		**cmdline;
	size_t		ncmdline;

	uint64_t	count[128];	/* records by type */
	uint64_t	nrec;
	uint64_t	unknown;	/* records of types not known */
	uint64_t	compressed;

	char		**caveat;
	size_t		ncaveat;
};

/*
 * Read the header, attrs, features and records of pd->buf (pd->len bytes)
 * into @pd.  Returns 0, or -HWTR_E_* with pd->errbuf naming the part and
 * the byte.  Never writes.
 */
int hwtr_perf_scan(struct hwtr_perf_data *pd);

/* The sample_id layout of the kernel record @rec, or NULL. */
const struct hwtr_perf_idlayout *hwtr_perf_layout(struct hwtr_perf_data *pd,
    const uint8_t *rec, size_t len);

/*
 * Say what is wrong with the file in pd->errbuf, after its name
 * (printf-like), and return @rc.
 */
int hwtr_perf_fail(const struct hwtr_perf_data *pd, int rc, const char *fmt,
    ...) __attribute__((format(printf, 3, 4)));

/* Add a caveat (printf-like). */
int hwtr_perf_caveat(struct hwtr_perf_data *pd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Write the archive of a scanned file through @sk. */
int hwtr_perf_write(struct hwtr_perf_data *pd,
    const struct hwtr_import_opts *o, struct hwtr_import_sink *sk);

void hwtr_perf_data_free(struct hwtr_perf_data *pd);

/*
 * The JIT code of a recording (import_perf_jit.c): the jitdump files its
 * MMAP records name (a JIT agent's marker mapping of jit-PID.dump, or the
 * jitted-PID-N.so files perf inject --jit writes beside it), found and
 * read by hwtr_perf_jit_find() before the archive is begun, written by
 * hwtr_perf_jit_write() as jit/jit-PID.dump and jit/code-PID.bin.
 */
struct hwtr_perf_jit;

/* How the archive keeps time: perf clock ns through @ns, or the TSC. */
struct hwtr_perf_jit_clock {
	uint64_t	(*ns)(const void *arg, uint64_t ns);
	const void	*arg;
	int		tsc;		/* the archive's times are TSC values */
	uint64_t	tsc_mask;	/* 0, or the counter bits kept */
};

/* 0 and *@jp (free it), or -HWTR_E_* with pd->errbuf. */
int hwtr_perf_jit_find(struct hwtr_perf_data *pd,
    const struct hwtr_import_opts *o, const struct hwtr_perf_jit_clock *clk,
    struct hwtr_perf_jit **jp);
/* 1 when @path is a jitted-PID-N.so whose process's dump was read. */
int hwtr_perf_jit_skip(const struct hwtr_perf_jit *j, const char *path);
int hwtr_perf_jit_write(struct hwtr_perf_jit *j, struct hwtr_aw *aw,
    const struct hwtr_perf_jit_clock *clk);
/* The code regions found. */
size_t hwtr_perf_jit_regions(const struct hwtr_perf_jit *j);
void hwtr_perf_jit_free(struct hwtr_perf_jit *j);

#endif /* !HWTR_PERF_FILE_H */
