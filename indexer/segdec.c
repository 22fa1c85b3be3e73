/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/* The table of segment decoders (segdec.h says how one plugs in). */

#include <stddef.h>

#include "hwtr_ix.h"
#include "segdec.h"

static const struct ix_segdec_ops *const segdecs[] = {
	&ix_segdec_libipt,
	&ix_segdec_opencsd,
};

const struct ix_segdec_ops *
ix_segdec_pick(enum hwtr_trace_format f)
{
	size_t i;

	for (i = 0; i < sizeof(segdecs) / sizeof(segdecs[0]); i++)
		if (segdecs[i]->fmt_ok(f))
			return (segdecs[i]);
	return (NULL);
}
