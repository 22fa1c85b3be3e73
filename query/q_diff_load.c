/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * What both answers of hwtrace diff read from each database (q_diff.h):
 * the blocks by identity, a block's place, the threads.  Below the
 * alignment (q_diff.c) and the first divergence (q_diff_first.c).
 */

#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "q_diff.h"

void
qd_blocks_free(struct d_blocks *db)
{
	free(db->key);
	free(db->ninsns);
	free(db->line);
	free(db->sym);
	free(db->file);
	memset(db, 0, sizeof(*db));
}

int
qd_blocks_load(struct hwtr_q *q, struct d_blocks *db)
{
	sqlite3_stmt *st;
	int64_t id;
	const char *ik;
	int rc;

	/* The blocks are kept in arrays by id. */
	if ((rc = q_blocks_span(q, "diff", &db->n)) < 0)
		return (rc);
	if (db->n > 0) {
		db->key = calloc((size_t)db->n, sizeof(*db->key));
		db->ninsns = calloc((size_t)db->n, sizeof(*db->ninsns));
		db->line = calloc((size_t)db->n, sizeof(*db->line));
		db->sym = calloc((size_t)db->n, sizeof(*db->sym));
		db->file = calloc((size_t)db->n, sizeof(*db->file));
		if (db->key == NULL || db->ninsns == NULL || db->line == NULL ||
		    db->sym == NULL || db->file == NULL)
			return (q_fail(q, -HWTR_E_NOMEM, "out of memory"));
	}
	if ((rc = q_prepare(q, &st, "SELECT b.id, coalesce(i.build_id, "
	    "i.path, i.key), b.image_addr, b.start_ip, b.ninsns, "
	    "coalesce(b.symbol, -1), coalesce(b.file, -1), coalesce(b.line, "
	    "0) FROM blocks b LEFT JOIN images i ON i.id = b.image")) < 0)
		return (rc);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		id = sqlite3_column_int64(st, 0);
		if (id < 0 || id >= db->n)
			continue;
		ik = (const char *)sqlite3_column_text(st, 1);
		if (ik != NULL && sqlite3_column_type(st, 2) != SQLITE_NULL)
			db->key[id] = q_hash(ik, strlen(ik)) * 31 +
			    (uint64_t)sqlite3_column_int64(st, 2);
		else
			db->key[id] = (uint64_t)sqlite3_column_int64(st, 3) ^
			    0x5bd1e995ULL;
		db->ninsns[id] = (int32_t)sqlite3_column_int64(st, 4);
		db->sym[id] = sqlite3_column_int64(st, 5);
		db->file[id] = sqlite3_column_int64(st, 6);
		db->line[id] = (int32_t)sqlite3_column_int64(st, 7);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return (q_dbfail(q, "diff: cannot read blocks"));
	return (0);
}

/* "function+0x1a" and "file:line" of address start_ip + ?2 of block ?1. */
#define D_PLACE_SQL							\
	"SELECT coalesce(" Q_FUNC("b", "s", "?2") ", printf('%#x', "	\
	"b.start_ip + ?2)), (SELECT f.path || ':' || l.line FROM (SELECT "	\
	"* FROM lines WHERE image = b.image AND addr <= b.image_addr + ?2 "	\
	"ORDER BY addr DESC LIMIT 1) l JOIN files f ON f.id = l.file WHERE "	\
	"b.image_addr + ?2 < l.end_addr), b.last_ip - b.start_ip FROM "	\
	"blocks b LEFT JOIN symbols s ON s.id = b.symbol WHERE b.id = ?1"

/*
 * Block @block of @q named at its start or its last instruction (@at_last):
 * *whatp "function+0x1a" and *linep "file:line", each NULL when unknown.
 */
int
qd_place(struct hwtr_q *q, sqlite3_stmt **cache, int64_t block, int at_last,
    char **whatp, char **linep)
{
	sqlite3_stmt *st = cache != NULL ? *cache : NULL;
	int64_t off = 0;
	int rc;

	*whatp = *linep = NULL;
	if (st == NULL && (rc = q_prepare(q, &st, D_PLACE_SQL)) < 0)
		return (rc);
	if (cache != NULL)
		*cache = st;
	sqlite3_reset(st);
	if (at_last) {
		sqlite3_bind_int64(st, 1, block);
		sqlite3_bind_int64(st, 2, 0);
		if (sqlite3_step(st) == SQLITE_ROW)
			off = sqlite3_column_int64(st, 2);
		sqlite3_reset(st);
	}
	sqlite3_bind_int64(st, 1, block);
	sqlite3_bind_int64(st, 2, off);
	if (sqlite3_step(st) == SQLITE_ROW) {
		if (sqlite3_column_text(st, 0) != NULL)
			*whatp = strdup((const char *)sqlite3_column_text(st,
			    0));
		if (sqlite3_column_text(st, 1) != NULL)
			*linep = strdup((const char *)sqlite3_column_text(st,
			    1));
	}
	if (cache == NULL)
		sqlite3_finalize(st);
	else
		sqlite3_reset(st);
	return (0);
}

/* The ids of the threads of @q with blocks, in id order. */
int
qd_threads(struct hwtr_q *q, int64_t **idsp, size_t *np)
{
	sqlite3_stmt *st;
	int64_t *ids = NULL, *ni;
	size_t n = 0;
	int rc;

	*idsp = NULL;
	*np = 0;
	if ((rc = q_prepare(q, &st, "SELECT id FROM threads WHERE blocks > 0 "
	    "ORDER BY id")) < 0)
		return (rc);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if ((ni = realloc(ids, (n + 1) * sizeof(*ids))) == NULL) {
			free(ids);
			sqlite3_finalize(st);
			return (q_fail(q, -HWTR_E_NOMEM, "out of memory"));
		}
		ids = ni;
		ids[n++] = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		free(ids);
		return (q_dbfail(q, "diff: cannot read threads"));
	}
	*idsp = ids;
	*np = n;
	return (0);
}
