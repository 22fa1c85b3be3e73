/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The lines store (hwtrace-db(5) LINES STORAGE).
 *
 * The lines table of a database is a virtual table (module "hwtr_lines",
 * linestore.c) over line_pages: each image's line rows in address order
 * (SQLite's, signed), in pages of up to HWTR_LS_PAGE rows, each page a
 * blob of delta- and varint-coded rows, zstd-compressed.  A row of the
 * old table cost SQLite about 4,000 instructions to insert and 25 bytes
 * to keep; libc's debug file alone gives 182,640 of them.  The table is
 * read-only: its rows are what the image's DWARF says.
 *
 * Built into libhwtrace and into the loadable extension (with
 * HWTR_SQLITE_EXTENSION).
 */

#ifndef HWTR_LINESTORE_H
#define HWTR_LINESTORE_H

#include <stddef.h>
#include <stdint.h>

/*
 * Rows a page holds at most: so many that a page's blob fits in a 4096-byte
 * database page (gzip's and libc's rows: 945 bytes at most, 659 on
 * average; pages of 512 rows each took an overflow page, 2.4 times the
 * room).
 */
#define HWTR_LS_PAGE	256

/* One row of lines; addresses are the 64-bit patterns SQLite stores. */
struct hwtr_ls_row {
	int64_t		addr, end;	/* end_addr */
	int64_t		file, line, col;
	int64_t		is_stmt;
};

/*
 * Encode @n rows (1 to HWTR_LS_PAGE, in ascending signed order of addr)
 * as a page into *@outp (malloc'd, *@lenp bytes).  0, or -1 out of
 * memory or @n out of range.
 */
int	hwtr_ls_encode(const struct hwtr_ls_row *rows, size_t n,
	    uint8_t **outp, size_t *lenp);

/*
 * Decode the page @blob (@len bytes) of @n rows whose first row is at
 * @lo into @rows (HWTR_LS_PAGE of them).  0, or -1 with *@whyp saying
 * what is wrong with it.
 */
int	hwtr_ls_decode(const uint8_t *blob, size_t len, int64_t n, int64_t lo,
	    struct hwtr_ls_row *rows, const char **whyp);

struct sqlite3;
/* Register the hwtr_lines module on @db: an SQLite result code. */
int	hwtr_lines_vtab_register(struct sqlite3 *db);

#endif /* !HWTR_LINESTORE_H */
