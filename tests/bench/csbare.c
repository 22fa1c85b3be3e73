/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * csbare ARCHIVE: the bare OpenCSD decode loop `hwtrace index` is compared
 * with on CoreSight archives (tests/bench/bench_cs.sh): every CoreSight
 * stream of ARCHIVE deformatted and decoded to generic elements with the
 * archive's memory images, each element counted and dropped.  It goes
 * through ix_cs_decode(), the indexer's thin layer over OpenCSD's C API
 * (the same decode tree configuration), so the difference measured is
 * what indexing adds: blocks, branches, calls, events and the database.
 * Prints the elements and the wall time of the decode alone.
 */

#include <err.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hwtrace.h"
#include "../../indexer/hwtr_ix.h"
#include "../lib/hwtr_test_tool.h"

static int
count(void *arg, const struct ix_cs_elem *e)
{
	(void)e;
	(*(uint64_t *)arg)++;
	return (0);
}

int
main(int argc, char **argv)
{
	struct hwtr_ar *ar;
	const struct hwtr_sb_rec *r;
	struct ix_cs_mem *mem = NULL, *nm;
	struct timespec t0, t1;
	uint64_t n = 0, bytes = 0;
	size_t i, s, nmem = 0;
	char err[256];
	int idx;

	if (argc != 2 || hwtr_ar_open(&ar, argv[1], NULL) < 0) {
		fprintf(stderr, "usage: csbare ARCHIVE\n");
		return (2);
	}
	for (i = 0; i < hwtr_ar_nsideband(ar); i++) {
		void *p;
		size_t len;

		r = hwtr_ar_sideband_rec(ar, i);
		if (r->type != HWTR_SB_MMAP || r->u.mmap.image == NULL ||
		    (idx = hwtr_ar_find_image(ar, r->u.mmap.image)) < 0 ||
		    hwtr_ar_read_image(ar, (size_t)idx, &p, &len) < 0 ||
		    r->u.mmap.pgoff >= len)
			continue;
		if ((nm = realloc(mem, (nmem + 1) * sizeof(*mem))) == NULL)
			errx(1, "out of memory");
		mem = nm;
		mem[nmem].addr = r->u.mmap.addr;
		mem[nmem].p = (const uint8_t *)p + r->u.mmap.pgoff;
		mem[nmem].len = r->u.mmap.len;
		nmem++;
	}
	for (s = 0; s < hwtr_ar_nstreams(ar); s++) {
		const struct hwtr_stream_desc *sd = hwtr_ar_stream(ar, s);
		uint8_t *buf;
		size_t len;

		if (sd->format != HWTR_TF_CORESIGHT)
			continue;
		buf = tool_stream_bytes(ar, s, 0, &len);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		if (ix_cs_decode(sd, buf, len, mem, nmem, count, &n, err,
		    sizeof(err)) < 0) {
			fprintf(stderr, "csbare: stream %zu: %s\n", s, err);
			free(buf);
			free(mem);
			return (1);
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		bytes += len;
		free(buf);
		printf("%" PRIu64 " %lld\n", (uint64_t)len,
		    (long long)((t1.tv_sec - t0.tv_sec) * 1000000000LL +
		    (t1.tv_nsec - t0.tv_nsec)));
	}
	fprintf(stderr, "csbare: %" PRIu64 " elements from %" PRIu64
	    " bytes\n", n, bytes);
	free(mem);
	hwtr_ar_close(ar);
	return (0);
}
