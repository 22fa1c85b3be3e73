/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/* Growing arrays: one doubling realloc for every module. */

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>

#include "hwtrace.h"
#include "hwtr_common.h"

int
hwtr_grow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t n;
	void *q;

	assert(p != NULL && cap != NULL && elem > 0);
	if (need <= *cap)
		return (0);
	n = *cap ? *cap : 16;
	while (n < need) {
		if (n > SIZE_MAX / 2)
			return (-HWTR_E_NOMEM);
		n *= 2;
	}
	if (n > SIZE_MAX / elem)
		return (-HWTR_E_NOMEM);
	q = realloc(*p, n * elem);
	if (q == NULL)
		return (-HWTR_E_NOMEM);
	*p = q;
	*cap = n;
	return (0);
}
