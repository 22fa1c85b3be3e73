/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Helpers the test tools share: the benchmark programs and the fuzzers'
 * seed makers (tests/bench, tests/fuzz), which exit on an error, and the
 * atf-c programs that write archives (static inline: a program takes
 * what it uses; no atf-c here):
 *
 *	#include "../lib/hwtr_test_tool.h"
 */

#ifndef HWTR_TEST_TOOL_H
#define HWTR_TEST_TOOL_H

#include <err.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwtrace.h"

/*
 * The number @s, with an optional K, M or G suffix (powers of 1024), at
 * most @max; else @prog says that @what is malformed and exits 2.
 */
static inline uint64_t
tool_number(const char *prog, const char *s, const char *what, uint64_t max)
{
	unsigned long long v;
	uint64_t mult = 1;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (end != s && errno == 0) {
		if (*end == 'K' || *end == 'k')
			mult = 1024, end++;
		else if (*end == 'M' || *end == 'm')
			mult = 1024 * 1024, end++;
		else if (*end == 'G' || *end == 'g')
			mult = 1024 * 1024 * 1024, end++;
		if (*end == '\0' && v <= max / mult)
			return (v * mult);
	}
	fprintf(stderr, "%s: malformed %s '%s'\n", prog, what, s);
	exit(2);
}

/* @m: a capture by @source on @host of an Intel family 6 CPU @model. */
static inline void
tool_intel_meta(struct hwtr_capture_meta *m, const char *host,
    const char *source, int model)
{
	memset(m, 0, sizeof(*m));
	m->host = host;
	m->source = source;
	m->cpu.vendor = HWTR_CPU_INTEL;
	m->cpu.family = 6;
	m->cpu.model = model;
}

/*
 * @sd: an Intel PT stream of thread @tid of process @pid, on no CPU in
 * particular, with the TSC ratio 2/@ebx, nominal frequency @nom, MTC
 * frequency 3 and @options (HWTR_PT_OPT_*).
 */
static inline void
tool_pt_stream(struct hwtr_stream_desc *sd, int32_t pid, int32_t tid,
    uint32_t ebx, uint32_t nom, unsigned options)
{
	memset(sd, 0, sizeof(*sd));
	sd->format = HWTR_TF_INTEL_PT;
	sd->pid = pid;
	sd->tid = tid;
	sd->cpu = -1;
	sd->pt.cpuid_15_eax = 2;
	sd->pt.cpuid_15_ebx = ebx;
	sd->pt.nom_freq = nom;
	sd->pt.mtc_freq = 3;
	sd->pt.options = options;
}

/* @sd's one address filter: trace only in [@a, @b] (cfg 1, filter). */
static inline void
tool_pt_filter(struct hwtr_stream_desc *sd, uint64_t a, uint64_t b)
{
	sd->pt.nfilters = 1;
	sd->pt.filter[0].cfg = 1;
	sd->pt.filter[0].a = a;
	sd->pt.filter[0].b = b;
}

/* A sideband record of @type at @time for thread @tid of process @pid. */
static inline struct hwtr_sb_rec
tool_sb(enum hwtr_sb_type type, uint64_t time, int32_t pid, int32_t tid)
{
	struct hwtr_sb_rec r = { .type = type, .time = time, .pid = pid,
	    .tid = tid };

	return (r);
}

/*
 * Add to @aw a memory image (no file) named @path of the @len bytes at
 * @b, its key into @key; what hwtr_aw_add_image returns.
 */
static inline int
tool_memory_image(struct hwtr_aw *aw, const char *path, const void *b,
    size_t len, char *key)
{
	struct hwtr_image_desc d;

	memset(&d, 0, sizeof(d));
	d.path = path;
	d.kind = HWTR_IMG_MEMORY;
	return (hwtr_aw_add_image(aw, &d, b, len, key));
}

/*
 * Stream @s of @ar, its chunks decompressed into one buffer of *@lenp
 * bytes and @pad more (zero), to free; exits on an error.
 */
static inline uint8_t *
tool_stream_bytes(struct hwtr_ar *ar, size_t s, size_t pad, size_t *lenp)
{
	uint8_t *buf = NULL, *nb;
	size_t c, k, len = 0;
	void *p;

	for (c = 0; c < hwtr_ar_nchunks(ar, s); c++) {
		if (hwtr_ar_read_chunk(ar, s, c, &p, &k) < 0)
			errx(1, "stream %zu chunk %zu: %s", s, c,
			    hwtr_ar_errmsg(ar));
		if ((nb = realloc(buf, len + k + pad)) == NULL)
			errx(1, "out of memory");
		buf = nb;
		memcpy(buf + len, p, k);
		len += k;
		free(p);
	}
	if (buf == NULL && (buf = malloc(pad + 1)) == NULL)
		errx(1, "out of memory");
	memset(buf + len, 0, pad);
	*lenp = len;
	return (buf);
}

#endif /* !HWTR_TEST_TOOL_H */
