/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/* The indexer's diagnostics (ix_diag.c), which every layer uses. */

#ifndef HWTR_IX_DIAG_H
#define HWTR_IX_DIAG_H

#include <stddef.h>

#include "hwtr_ix.h"

struct hwtr_stream_desc;

struct hwtr_ix {
	struct hwtr_ix_opts opts;
	char		err[HWTR_ERRMSG_MAX];
	struct hwtr_ix_stats stats;
	char		**problems;
	size_t		nproblems;
};

/* The run's error message (hwtr_ix_errmsg()). */
void	ix_err(struct hwtr_ix *ix, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
/* A problem of the archive, kept and logged; 0 or -HWTR_E_NOMEM. */
int	ix_problem(struct hwtr_ix *ix, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
/* A stream's name for messages: its own, or "stream ID" in @buf. */
const char *ix_stream_name(const struct hwtr_stream_desc *sd, char *buf,
	    size_t len);

#endif /* !HWTR_IX_DIAG_H */
