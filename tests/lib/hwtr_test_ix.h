/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Helpers the atf-c programs of the indexer and of the queries over its
 * databases share (static inline: a program takes what it uses):
 *
 *	#include "../lib/hwtr_test_ix.h"
 */

#ifndef HWTR_TEST_IX_H
#define HWTR_TEST_IX_H

#include <atf-c.h>
#include <sqlite3.h>
#include <stdint.h>
#include <string.h>

#include "hwtrace.h"
#include "hwtr_ix.h"
#include "hwtr_ix_sqlite.h"
#include "schema.sql.h"

/*
 * An in-memory database with the indexer's schema and indexes, its SQL
 * functions and modules registered first (calls is a table of the
 * module); fails the test case when the schema does not create.
 */
static inline sqlite3 *
ixt_schema_db(void)
{
	sqlite3 *db;
	char *err = NULL;

	ATF_REQUIRE_EQ(sqlite3_open(":memory:", &db), SQLITE_OK);
	ATF_REQUIRE_EQ(hwtr_ix_sqlite_register(db), 0);
	if (sqlite3_exec(db, HWTR_IX_SCHEMA_SQL HWTR_IX_INDEX_SQL, NULL, NULL,
	    &err) != SQLITE_OK)
		atf_tc_fail("schema does not create: %s", err);
	return (db);
}

/*
 * A stitcher's block of @ninsn 4-byte instructions (A64) at @ip, ending
 * with an instruction of class @cls; @lens and @code (borrowed, either
 * may be NULL) its instructions' lengths and bytes.
 */
static inline struct ix_sblock
ixt_blk(uint64_t ip, uint16_t ninsn, int cls, uint8_t *lens, uint8_t *code)
{
	struct ix_sblock b;

	memset(&b, 0, sizeof(b));
	b.ip = ip;
	b.ninsn = ninsn;
	b.size = 4u * ninsn;
	b.end_ip = ip + b.size - 4;
	b.isid = 1;
	b.mode = 64;
	b.cls = (uint8_t)cls;
	b.lens = lens;
	b.code = code;
	return (b);
}

#endif /* !HWTR_TEST_IX_H */
