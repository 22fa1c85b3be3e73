/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/* The table of segment decoders (segdec.h says how one plugs in). */

#include <stddef.h>
#include <string.h>

#include "hwtr_ix.h"
#include "segdec.h"

/*
 * The first entry that takes a format is its default: for Intel PT the
 * indexer's own decoder, which hands to libipt whatever it cannot decode
 * as libipt does (issue 29 item 1); libipt by name (`index -D libipt`).
 */
static const struct ix_segdec_ops *const segdecs[] = {
	&ix_segdec_fast,
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

const struct ix_segdec_ops *
ix_segdec_named(const char *name, enum hwtr_trace_format f)
{
	size_t i;

	if (name != NULL)
		for (i = 0; i < sizeof(segdecs) / sizeof(segdecs[0]); i++)
			if (strcmp(segdecs[i]->name, name) == 0 &&
			    segdecs[i]->fmt_ok(f))
				return (segdecs[i]);
	return (ix_segdec_pick(f));
}

int
ix_segdec_known(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(segdecs) / sizeof(segdecs[0]); i++)
		if (strcmp(segdecs[i]->name, name) == 0)
			return (1);
	return (0);
}
