/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/* Private to kernel/: the ops tables of the trace sources (kernel/sources.c). */

#ifndef HWTR_SOURCES_H
#define HWTR_SOURCES_H

#include "hwtr_kernel.h"

extern const struct hwtr_src_ops hwtr_step_ops;
extern const struct hwtr_src_ops hwtr_valgrind_ops;	/* kernel/valgrind.c */
extern const struct hwtr_src_ops hwtr_perf_ops;		/* kernel/perf.c */
extern const struct hwtr_src_ops hwtr_hwt_ops;		/* kernel/hwt.c */

/*
 * 1 when the perf source can trace here (the intel_pt PMU,
 * permission, a kernel with AUX areas); else 0 and @why says what is
 * missing.
 */
int hwtr_perf_usable(char *why, size_t len);

/*
 * 1 when the hwt source can trace here (FreeBSD, /dev/hwt there and
 * usable); else 0 and @why says what is missing.
 */
int hwtr_hwt_usable(char *why, size_t len);

/* 1 when the valgrind source can run here; else 0 and @why says why. */
int hwtr_vg_available(char *why, size_t len);

#endif /* !HWTR_SOURCES_H */
