/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * hwtrace diff: what its two parts (q_diff.c, the alignment, and
 * q_diff_first.c, the first divergence) share.
 */

#ifndef HWTR_Q_DIFF_H
#define HWTR_Q_DIFF_H

#include "q_int.h"

/*
 * The blocks of one database: identity (image and link-time address),
 * instructions, function and source line (of the first instruction).
 */
struct d_blocks {
	uint64_t	*key;
	int32_t		*ninsns, *line;
	int64_t		*sym, *file;
	int64_t		n;
};

void qd_blocks_free(struct d_blocks *db);
int qd_blocks_load(struct hwtr_q *q, struct d_blocks *db);
int qd_place(struct hwtr_q *q, sqlite3_stmt **cache, int64_t block,
    int at_last, char **whatp, char **linep);
int qd_threads(struct hwtr_q *q, int64_t **idsp, size_t *np);
int qd_first(struct hwtr_q *qa, struct hwtr_q *qb,
    const struct hwtr_q_diff_opts *opts, struct hwtr_q_res **resp);

#endif /* !HWTR_Q_DIFF_H */
