/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Helpers for atf-c test programs: where the build, the sources and the
 * shared corpus are (fixed at build time by the Makefile).
 */

#ifndef HWTR_TEST_H
#define HWTR_TEST_H

#include <stdio.h>
#include <sys/stat.h>

#ifndef HWTR_TEST_BUILD
#error "HWTR_TEST_BUILD must be defined by the Makefile"
#endif

#define HWTR_TEST_HWTRACE	HWTR_TEST_BUILD "/hwtrace"
#define HWTR_TEST_PROGS		HWTR_TEST_BUILD "/progs"
#define HWTR_TEST_CORPUS	HWTR_TEST_SRC "/../shared/corpus"

/* Skip the test case with a reason unless the shared corpus is present. */
#define HWTR_REQUIRE_CORPUS(sub) do {					\
	struct stat st_;						\
	if (stat(HWTR_TEST_CORPUS "/" sub, &st_) != 0)			\
		atf_tc_skip("shared corpus not found at %s",		\
		    HWTR_TEST_CORPUS "/" sub);				\
} while (0)

#endif /* !HWTR_TEST_H */
