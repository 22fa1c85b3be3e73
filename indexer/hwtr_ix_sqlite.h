/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The indexer's SQL functions over a hwtrace database (indexer/exec_vtab.c),
 * for query/, which opens databases itself; build/hwtrace_sqlite.so is the
 * same code as a loadable extension for plain sqlite3.
 */

#ifndef HWTR_IX_SQLITE_H
#define HWTR_IX_SQLITE_H

#include <stddef.h>
#include <stdint.h>

#include "hwtrace.h"

/*
 * Register exec_order, exec_insns and the SQL functions hwtr_time_at()
 * and hwtr_time_estimated() (hwtrace-db(5)) on @sqlite3_db (a sqlite3 *, given
 * as void * so that no SQLite type appears here).  Returns 0 or
 * -HWTR_E_DB.
 */
int hwtr_ix_sqlite_register(void *sqlite3_db);

/*
 * The statement that creates the one view hwtrace writes (call_times), as
 * the indexer runs it ("CREATE VIEW ...;\n"), or with @before as earlier
 * databases of this schema version have it: a reader refuses any other
 * view, and any trigger, in a database it did not make.
 */
const char *hwtr_ix_view_sql(int before);

/*
 * The @nblocks block ids of an exec_chunks row's data (@data, @len bytes;
 * hwtrace-db(5) EXECUTION ORDER: LEB128 varints of zigzag(block -
 * (previous + 1)), or a zstd frame of them) into @ids (room for
 * @nblocks), for a reader that walks chunks itself.  0, or -1 when the
 * data is short or malformed or memory ran out.
 */
int hwtr_ix_chunk_blocks(const void *data, size_t len, int64_t nblocks,
    int64_t *ids);

/*
 * Why sqlite3_open_v2() of @path failed (it returned @rc and @sqlite3_db,
 * which may be NULL): SQLite's message, and when the absolute path is
 * longer than SQLite opens (512 bytes in its Unix VFS, whatever the
 * system allows), that, with the length.  The text is in @buf.
 */
const char *hwtr_ix_sqlite_open_why(void *sqlite3_db, int rc,
    const char *path, char *buf, size_t len);

#endif /* !HWTR_IX_SQLITE_H */
