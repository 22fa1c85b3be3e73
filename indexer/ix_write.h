/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The indexer's database writer (ix_write.c), hwtrace-db(5) in one
 * transaction on the file the driver created:
 *
 *   ix_db_open()     SQLite on the file, the schema (schema.sql.h)
 *   ix_db_prepare()  the static tables: meta's start, images, symbols,
 *                    files, lines, processes, mappings; the statements
 *                    of the rows that follow
 *   (the pipeline)   per unit, through the stitcher's sink: exec_chunks,
 *                    timestamps, calls, events, cycles, symbols of call
 *                    targets; at each unit's end (ix_end_stream()):
 *                    branches, block_counts
 *   ix_db_finish()   sideband events, blocks, streams, threads, meta,
 *                    then the indexes and COMMIT; the file closed
 */

#ifndef HWTR_IX_WRITE_H
#define HWTR_IX_WRITE_H

#include "ix_run.h"

/* The layer's state, freed once the database is closed. */
struct ix_writer *ix_writer_new(void);
void	ix_writer_free(struct ix_writer *wr);

int	ix_db_open(struct run *r, const char *tmp, int fd);
int	ix_db_prepare(struct run *r);
/* The rest after @rc (the pipeline's result); returns the final one. */
int	ix_db_finish(struct run *r, const char *tmp, int rc);
/* Rows batched and not yet written (before another unit's). */
int	ix_flush_pending(struct run *r);
/* The unit being stitched (r->cur) is done: its aggregated rows. */
int	ix_end_stream(struct run *r);
/* A history's calls and totals counted (its stitcher @st is done). */
void	ix_count_history(struct run *r, const struct ix_stitch *st);

/*
 * ix_lines.c: the files and lines tables (ix_db_prepare()); the files.id
 * of @path, interned (< 0 on a failure).
 */
int	ix_write_files_lines(struct run *r);
int64_t	ix_file_id(struct run *r, const char *path);

#endif /* !HWTR_IX_WRITE_H */
