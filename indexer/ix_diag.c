/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The indexer's diagnostics, at the bottom of the module: every layer
 * reports through these and they call no other file of indexer/.
 */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "hwtr_common.h"
#include "hwtr_ix.h"
#include "hwtr_stream.h"
#include "ix_diag.h"

void
ix_err(struct hwtr_ix *ix, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ix->err, sizeof(ix->err), fmt, ap);
	va_end(ap);
}


int
ix_problem(struct hwtr_ix *ix, const char *fmt, ...)
{
	va_list ap;
	char *s, **p;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (s == NULL)
		return (-HWTR_E_NOMEM);
	p = realloc(ix->problems, (ix->nproblems + 1) * sizeof(*p));
	if (p == NULL) {
		free(s);
		return (-HWTR_E_NOMEM);
	}
	ix->problems = p;
	p[ix->nproblems++] = s;
	hwtr_logf(&ix->opts.log, HWTR_LOG_WARN, "%s", s);
	return (0);
}


const char *
ix_stream_name(const struct hwtr_stream_desc *sd, char *buf, size_t len)
{
	if (sd->name != NULL)
		return (sd->name);
	snprintf(buf, len, "stream %u", sd->id);
	return (buf);
}
