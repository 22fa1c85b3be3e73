/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The software sources' trace clock, at the bottom of kernel/: the step
 * and valgrind sources stamp their records with it, and the list of
 * sources (sources.c) sits above them.
 */

#include <time.h>

#include "hwtr_common.h"
#include "hwtr_kernel.h"

uint64_t
hwtr_src_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
}
