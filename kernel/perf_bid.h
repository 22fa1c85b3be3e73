/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * perf's HEADER_BUILD_ID record, built once (kernel/perf_data.c) for the
 * two sources that write a perf.data recording: perf and hwt.
 */

#ifndef HWTR_PERF_BID_H
#define HWTR_PERF_BID_H

#include <stddef.h>
#include <stdint.h>

/* Large enough for the record of any path shorter than 4 KiB. */
#define HWTR_PERF_BID_REC_MAX	(8 + 4 + 24 + 4096)

size_t hwtr_perf_build_id_rec(const char *path, int32_t pid, int kernel,
    uint8_t *out, size_t cap);

#endif /* HWTR_PERF_BID_H */
