/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * fuzz_perf: the libFuzzer target for the perf.data reader (`make fuzz`).
 *
 * Each input is a perf.data file in memory.  hwtr_perf_scan() reads its
 * header, attrs, features and records; when that succeeds the writer runs
 * too (streams, Intel PT and CoreSight configuration, sideband
 * conversion) into an archive in /dev/shm that is then removed, so the
 * whole importer but the image search (no --symfs, no build-id cache: HOME
 * is pointed at an empty place) sees the input.  libFuzzer fails on any
 * crash, sanitizer report, leak, timeout or excess memory.  Seeds: the
 * real recordings of ../shared/corpus/perf-data when present.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hwtrace.h"
#include "hwtr_import.h"
#include "perf_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char out[64];
	struct hwtr_perf_data pd;
	struct hwtr_import_opts o;
	struct hwtr_import_sink sk;
	struct hwtr_aw_opts ao;
	char errbuf[512];

	if (out[0] == '\0') {
		snprintf(out, sizeof(out), "/dev/shm/fuzz_perf.%ld.hwtrace",
		    (long)getpid());
		setenv("HOME", "/nonexistent", 1);
	}
	memset(&pd, 0, sizeof(pd));
	pd.path = "input";
	pd.buf = data;
	pd.len = size;
	pd.errbuf = errbuf;
	pd.errlen = sizeof(errbuf);
	if (hwtr_perf_scan(&pd) == 0) {
		memset(&o, 0, sizeof(o));
		memset(&ao, 0, sizeof(ao));
		ao.threads = -1;
		ao.level = 1;
		ao.no_partial = 1;
		o.aw_opts = &ao;
		memset(&sk, 0, sizeof(sk));
		sk.out = out;
		sk.aw_opts = &ao;
		sk.errbuf = errbuf;
		sk.errlen = sizeof(errbuf);
		(void)hwtr_perf_write(&pd, &o, &sk);
		if (sk.aw != NULL)
			hwtr_aw_abort(sk.aw, 0);
		unlink(out);
	}
	hwtr_perf_data_free(&pd);
	return (0);
}
