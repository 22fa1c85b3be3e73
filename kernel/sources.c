/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The list of trace sources.  A source adds its ops table here, one line,
 * as FreeBSD's hwt(4) backends register themselves.
 */

#include <string.h>

#include "hwtr_common.h"
#include "sources.h"

static const struct hwtr_src_ops *const sources[] = {
	&hwtr_step_ops,
	&hwtr_valgrind_ops,
	&hwtr_perf_ops,
	&hwtr_hwt_ops,
	NULL
};

const struct hwtr_src_ops *
hwtr_src_find(const char *name)
{
	size_t i;

	if (name == NULL)
		return (NULL);
	for (i = 0; sources[i] != NULL; i++)
		if (strcmp(sources[i]->name, name) == 0)
			return (sources[i]);
	return (NULL);
}
