/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * fuzz_jit: the libFuzzer target for the perf map and jitdump readers
 * (format/jitmap.c, `make fuzz-jit`).  Each input is parsed both as a
 * jitdump and as a map; every symbol's name and code bytes are touched so
 * that ASan sees any read past the input.
 */

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "hwtrace.h"
#include "hwtr_jit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
touch(const struct hwtr_jit_list *l)
{
	volatile uint8_t sink = 0;
	size_t i, k;

	for (i = 0; i < l->n; i++) {
		sink ^= (uint8_t)strlen(l->v[i].name);
		for (k = 0; l->v[i].code != NULL && k < l->v[i].size; k++)
			sink ^= l->v[i].code[k];
	}
	(void)sink;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hwtr_jit_list l;
	char err[256];

	memset(&l, 0, sizeof(l));
	if (hwtr_jit_parse_dump(&l, "jit-1.dump", data, size, err,
	    sizeof(err)) == 0)
		touch(&l);
	hwtr_jit_list_free(&l);
	if (hwtr_jit_parse_map(&l, "perf-1.map", data, size, err,
	    sizeof(err)) == 0)
		touch(&l);
	hwtr_jit_list_free(&l);
	return (0);
}
