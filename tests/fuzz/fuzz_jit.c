/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * fuzz_jit: the libFuzzer target for the perf map and jitdump readers
 * (format/jitmap.c, `make fuzz-jit`).  Each input is parsed as a
 * jitdump, as a map and as a code-region file; every symbol's name and
 * every code byte is touched so that ASan sees any read past the input.
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
	struct hwtr_code_list cl;
	volatile uint8_t sink = 0;
	char err[256];
	size_t i, k;

	memset(&l, 0, sizeof(l));
	if (hwtr_jit_parse_dump(&l, "jit-1.dump", data, size, err,
	    sizeof(err)) == 0)
		touch(&l);
	hwtr_jit_list_free(&l);
	if (hwtr_jit_parse_map(&l, "perf-1.map", data, size, err,
	    sizeof(err)) == 0)
		touch(&l);
	hwtr_jit_list_free(&l);
	memset(&cl, 0, sizeof(cl));
	if (hwtr_code_parse(&cl, "code-1.bin", data, size, err,
	    sizeof(err)) == 0)
		for (i = 0; i < cl.n; i++)
			for (k = 0; k < cl.v[i].len; k++)
				sink ^= cl.v[i].bytes[k];
	hwtr_code_list_free(&cl);
	(void)sink;
	return (0);
}
