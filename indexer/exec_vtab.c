/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * exec_order and exec_insns: virtual tables that expand the compact
 * execution order of a hwtrace database (hwtrace-db(5)), declared in its
 * schema (each reads the tables of the database it is declared in) and
 * eponymous for databases made before they were (in main only); and
 * hwtr_time_at(), hwtr_time_estimated(): a time for every instruction.
 *
 * The same source is built twice: into libhwtrace (hwtr_ix_sqlite_register)
 * and, with HWTR_SQLITE_EXTENSION defined, into build/hwtrace_sqlite.so, a
 * loadable extension for plain sqlite3.  A cursor reads only the chunks its
 * constraints need and keeps a small cache of block facts, so that "the
 * last 100 blocks of thread 3" reads one or two chunk rows, not the table.
 */

#ifdef HWTR_SQLITE_EXTENSION
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT1
#else
#include <sqlite3.h>
#endif

#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwtrace.h"
#ifndef HWTR_SQLITE_EXTENSION
#include "hwtr_ix_sqlite.h"
#endif
#include "colstore.h"
#include "hwtr_common.h"
#include "linestore.h"

enum { XO_THREAD, XO_SEQ, XO_BLOCK, XO_INSN, XO_TSC, XO_IP };

/* Bits of idxNum: which constraint drives which argument. */
#define XF_THREAD_EQ	0x01
#define XF_SEQ_LO	0x02
#define XF_SEQ_HI	0x04
#define XF_INSN_LO	0x08
#define XF_INSN_HI	0x10

struct xo_binfo {
	int64_t		id;		/* -1: empty slot */
	int64_t		start_ip;
	uint32_t	ninsns;
	uint8_t		*lens;		/* ninsns bytes, or NULL */
};

/*
 * The block facts a closed cursor had, for the next one (a search is a
 * statement of its own: bt's sites, a call's entry block), while the
 * database is as it was then (xo_stamp()).
 */
struct xo_spare {
	struct xo_binfo	*cache;
	uint32_t	ncache, ucache;
	sqlite3_int64	changes;
	unsigned int	version;
};

struct xo_vtab {
	sqlite3_vtab	base;
	sqlite3		*db;
	char		*schema;	/* the database whose tables it reads */
	char		*qual;		/* the same as a qualifier: "x". */
	int		insns;		/* exec_insns: one row per instruction */
	struct xo_spare	spare;		/* cache NULL: none */
};

struct xo_cursor {
	sqlite3_vtab_cursor base;
	struct xo_vtab	*vt;
	sqlite3_stmt	*chunks;
	sqlite3_stmt	*binfo;
	sqlite3_stmt	*tstmt;
	int		eof;
	/* Bounds from the constraints (inclusive). */
	int64_t		seq_lo, seq_hi, insn_lo, insn_hi;
	/* The current chunk. */
	int64_t		thread;
	int64_t		seq;		/* of the current block */
	int64_t		insn;		/* of the current block's first insn */
	int64_t		end_seq;	/* seq after the chunk's last block */
	const uint8_t	*data;
	int		dlen, dpos;
	uint8_t		*dcopy;
	int64_t		block;
	int64_t		prev;
	struct xo_binfo	*bi;		/* of the current block */
	uint32_t	k;		/* instruction index inside the block */
	int64_t		ip;
	int		have_tsc;
	int64_t		tsc;
	/* Timestamps of the current chunk, ascending by seq. */
	int64_t		(*ts)[2];
	int		nts, its, cts;
	/* Block facts cache (open addressing, power of two). */
	struct xo_binfo	*cache;
	uint32_t	ncache;
	uint32_t	ucache;
};

static int
xo_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
    sqlite3_vtab **vtp, char **errp)
{
	struct xo_vtab *vt;
	int rc;

	(void)argc;
	(void)errp;
	rc = sqlite3_declare_vtab(db, aux != NULL ?
	    "CREATE TABLE x(thread, seq, block, insn, tsc, ip)" :
	    "CREATE TABLE x(thread, seq, block, insn, tsc)");
	if (rc != SQLITE_OK)
		return (rc);
	/*
	 * It only reads the database's own tables: usable from the schema
	 * when a reader runs with trusted_schema off (hwtrace query does).
	 */
	if ((rc = sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS)) != SQLITE_OK)
		return (rc);
	vt = sqlite3_malloc(sizeof(*vt));
	if (vt == NULL)
		return (SQLITE_NOMEM);
	memset(vt, 0, sizeof(*vt));
	vt->db = db;
	vt->insns = aux != NULL;
	vt->schema = sqlite3_mprintf("%s", argv[1]);
	vt->qual = sqlite3_mprintf("\"%w\".", argv[1]);
	if (vt->schema == NULL || vt->qual == NULL) {
		sqlite3_free(vt->schema);
		sqlite3_free(vt->qual);
		sqlite3_free(vt);
		return (SQLITE_NOMEM);
	}
	*vtp = &vt->base;
	return (SQLITE_OK);
}

/* A block-facts cache of @n entries, freed. */
static void
xo_binfo_free(struct xo_binfo *cache, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		sqlite3_free(cache[i].lens);
	sqlite3_free(cache);
}

static void
xo_spare_free(struct xo_spare *sp)
{
	xo_binfo_free(sp->cache, sp->ncache);
	memset(sp, 0, sizeof(*sp));
}

/*
 * What tells whether the blocks table may have changed: this
 * connection's changes and the main database's data version (another
 * connection's commits).  -1 when the version cannot be had.
 */
static int
xo_stamp(const struct xo_vtab *vt, sqlite3_int64 *changesp,
    unsigned int *versionp)
{
	*changesp = sqlite3_total_changes64(vt->db);
	*versionp = 0;
	return (sqlite3_file_control(vt->db, vt->schema,
	    SQLITE_FCNTL_DATA_VERSION, versionp) == SQLITE_OK ? 0 : -1);
}

/* Prepare @sql (made by sqlite3_mprintf(), freed here) into *@stp. */
static int
xo_prepare(struct xo_vtab *vt, char *sql, sqlite3_stmt **stp)
{
	int rc;

	if (sql == NULL)
		return (SQLITE_NOMEM);
	rc = sqlite3_prepare_v2(vt->db, sql, -1, stp, NULL);
	sqlite3_free(sql);
	return (rc);
}

static int
xo_disconnect(sqlite3_vtab *vtab)
{
	struct xo_vtab *vt = (struct xo_vtab *)vtab;

	xo_spare_free(&vt->spare);
	sqlite3_free(vt->schema);
	sqlite3_free(vt->qual);
	sqlite3_free(vt);
	return (SQLITE_OK);
}

/*
 * Use equality on thread and ranges on seq (and insn for exec_insns).  The
 * output is ordered by (thread, seq, insn), which saves the planner a sort.
 */
static int
xo_best_index(sqlite3_vtab *vtab, sqlite3_index_info *ii)
{
	int i, argn = 0, flags = 0;
	int slot[5] = { -1, -1, -1, -1, -1 };
	int eq[5] = { 0, 0, 0, 0, 0 };
	double cost = 1e9;

	(void)vtab;
	for (i = 0; i < ii->nConstraint; i++) {
		const struct sqlite3_index_constraint *c = &ii->aConstraint[i];
		int s = -1;

		if (!c->usable)
			continue;
		if (c->iColumn == XO_THREAD && c->op == SQLITE_INDEX_CONSTRAINT_EQ)
			s = 0;
		else if (c->iColumn == XO_SEQ || c->iColumn == XO_INSN) {
			int base = c->iColumn == XO_SEQ ? 1 : 3;

			switch (c->op) {
			case SQLITE_INDEX_CONSTRAINT_EQ:
				/* Both bounds from one argument. */
				if (slot[base] < 0 && slot[base + 1] < 0) {
					s = base;
					eq[base] = 1;
				}
				break;
			case SQLITE_INDEX_CONSTRAINT_GT:
			case SQLITE_INDEX_CONSTRAINT_GE:
				if (!eq[base])
					s = base;
				break;
			case SQLITE_INDEX_CONSTRAINT_LT:
			case SQLITE_INDEX_CONSTRAINT_LE:
				if (!eq[base])
					s = base + 1;
				break;
			default:
				break;
			}
		}
		if (s < 0 || slot[s] >= 0)
			continue;
		slot[s] = i;
	}
	/* Equality on seq/insn fills both bounds from the same constraint. */
	for (i = 0; i < 5; i++) {
		const struct sqlite3_index_constraint *c;

		if (slot[i] < 0)
			continue;
		c = &ii->aConstraint[slot[i]];
		flags |= 1 << i;
		ii->aConstraintUsage[slot[i]].argvIndex = ++argn;
		/* Exact for = and the closed bounds; SQLite rechecks < and >. */
		ii->aConstraintUsage[slot[i]].omit =
		    c->op == SQLITE_INDEX_CONSTRAINT_EQ ||
		    c->op == SQLITE_INDEX_CONSTRAINT_GE ||
		    c->op == SQLITE_INDEX_CONSTRAINT_LE;
		if (c->op == SQLITE_INDEX_CONSTRAINT_EQ && (i == 1 || i == 3)) {
			ii->aConstraintUsage[slot[i]].omit = 1;
			flags |= 1 << (i + 1);
		}
	}
	/* idxStr tells xFilter the op of each argument. */
	{
		char *s = sqlite3_mprintf("%d,%d,%d,%d,%d",
		    slot[0] >= 0 ? ii->aConstraint[slot[0]].op : 0,
		    slot[1] >= 0 ? ii->aConstraint[slot[1]].op : 0,
		    slot[2] >= 0 ? ii->aConstraint[slot[2]].op : 0,
		    slot[3] >= 0 ? ii->aConstraint[slot[3]].op : 0,
		    slot[4] >= 0 ? ii->aConstraint[slot[4]].op : 0);

		if (s == NULL)
			return (SQLITE_NOMEM);
		ii->idxStr = s;
		ii->needToFreeIdxStr = 1;
	}
	if (flags & XF_THREAD_EQ)
		cost /= 100;
	if (flags & (XF_SEQ_LO | XF_INSN_LO))
		cost /= 10;
	if (flags & (XF_SEQ_HI | XF_INSN_HI))
		cost /= 10;
	ii->idxNum = flags;
	ii->estimatedCost = cost;
	/*
	 * Rows come in (thread, seq) order, which is (thread, insn) order:
	 * a thread's positions grow together.  Said for insn too, so that
	 * "ORDER BY insn" (insns, last --insns) streams its first rows at
	 * once instead of sorting them all first (a temporary B-tree: 3.3 s
	 * per million rows before the first came out).
	 */
	if (ii->nOrderBy >= 1 && ii->aOrderBy[0].iColumn == XO_THREAD &&
	    !ii->aOrderBy[0].desc) {
		if (ii->nOrderBy == 1 || (ii->nOrderBy == 2 &&
		    (ii->aOrderBy[1].iColumn == XO_SEQ ||
		    ii->aOrderBy[1].iColumn == XO_INSN) &&
		    !ii->aOrderBy[1].desc))
			ii->orderByConsumed = 1;
	} else if (ii->nOrderBy == 1 && (ii->aOrderBy[0].iColumn == XO_SEQ ||
	    ii->aOrderBy[0].iColumn == XO_INSN) && !ii->aOrderBy[0].desc &&
	    (flags & XF_THREAD_EQ))
		ii->orderByConsumed = 1;
	return (SQLITE_OK);
}

static int
xo_open(sqlite3_vtab *vtab, sqlite3_vtab_cursor **curp)
{
	struct xo_cursor *c;

	c = sqlite3_malloc(sizeof(*c));
	if (c == NULL)
		return (SQLITE_NOMEM);
	memset(c, 0, sizeof(*c));
	c->vt = (struct xo_vtab *)vtab;
	c->eof = 1;
	/* The last cursor's block facts, if the database is unchanged. */
	if (c->vt->spare.cache != NULL) {
		struct xo_spare *sp = &c->vt->spare;
		sqlite3_int64 changes;
		unsigned int version;

		if (xo_stamp(c->vt, &changes, &version) == 0 &&
		    changes == sp->changes && version == sp->version) {
			c->cache = sp->cache;
			c->ncache = sp->ncache;
			c->ucache = sp->ucache;
			memset(sp, 0, sizeof(*sp));
		} else
			xo_spare_free(sp);
	}
	*curp = &c->base;
	return (SQLITE_OK);
}

static void
xo_cache_clear(struct xo_cursor *c)
{
	xo_binfo_free(c->cache, c->ncache);
	c->cache = NULL;
	c->ncache = c->ucache = 0;
}

static int
xo_close(sqlite3_vtab_cursor *cur)
{
	struct xo_cursor *c = (struct xo_cursor *)cur;

	sqlite3_finalize(c->chunks);
	sqlite3_finalize(c->binfo);
	sqlite3_finalize(c->tstmt);
	sqlite3_free(c->dcopy);
	sqlite3_free(c->ts);
	/*
	 * Its block facts go to the next cursor (xo_open()), unless read
	 * inside a transaction that wrote, which may yet be rolled back.
	 */
	if (c->cache != NULL && c->vt->spare.cache == NULL &&
	    sqlite3_txn_state(c->vt->db, NULL) != SQLITE_TXN_WRITE &&
	    xo_stamp(c->vt, &c->vt->spare.changes,
	    &c->vt->spare.version) == 0) {
		c->vt->spare.cache = c->cache;
		c->vt->spare.ncache = c->ncache;
		c->vt->spare.ucache = c->ucache;
		c->cache = NULL;
		c->ncache = c->ucache = 0;
	}
	xo_cache_clear(c);
	sqlite3_free(c);
	return (SQLITE_OK);
}

static int
xo_error(struct xo_cursor *c, const char *what)
{
	sqlite3_free(c->vt->base.zErrMsg);
	c->vt->base.zErrMsg = sqlite3_mprintf("%s: %s", what,
	    sqlite3_errmsg(c->vt->db));
	return (SQLITE_ERROR);
}

/* exec_chunks holds what no index writes: SQLITE_CORRUPT_VTAB. */
static int
xo_corrupt(struct xo_cursor *c, const char *why)
{
	sqlite3_free(c->vt->base.zErrMsg);
	c->vt->base.zErrMsg = sqlite3_mprintf("exec_order: thread %lld: "
	    "corrupt exec_chunks at seq %lld: %s", (long long)c->thread,
	    (long long)c->seq, why);
	return (SQLITE_CORRUPT_VTAB);
}

/* Facts about block @id, from the cache or the blocks table. */
static int
xo_block(struct xo_cursor *c, int64_t id, struct xo_binfo **bp)
{
	struct xo_binfo *b;
	uint32_t h, i;
	int rc;

	if (c->ucache * 2 >= c->ncache) {
		/* Grow (or start); a full reset is fine for a cache. */
		uint32_t n = c->ncache ? c->ncache * 2 : 1024;

		if (n > (1u << 20)) {
			xo_cache_clear(c);
			n = 1024;
		}
		if (c->ncache != 0 && n > c->ncache) {
			struct xo_binfo *old = c->cache;
			uint32_t on = c->ncache;

			c->cache = sqlite3_malloc64(sizeof(*b) * n);
			if (c->cache == NULL) {
				c->cache = old;
				return (SQLITE_NOMEM);
			}
			memset(c->cache, 0, sizeof(*b) * n);
			for (i = 0; i < n; i++)
				c->cache[i].id = -1;
			c->ncache = n;
			for (i = 0; i < on; i++) {
				if (old[i].id < 0)
					continue;
				h = (uint32_t)((uint64_t)old[i].id *
				    0x9e3779b97f4a7c15ULL >> 32) & (n - 1);
				while (c->cache[h].id >= 0)
					h = (h + 1) & (n - 1);
				c->cache[h] = old[i];
			}
			sqlite3_free(old);
		} else {
			c->cache = sqlite3_malloc64(sizeof(*b) * n);
			if (c->cache == NULL)
				return (SQLITE_NOMEM);
			memset(c->cache, 0, sizeof(*b) * n);
			for (i = 0; i < n; i++)
				c->cache[i].id = -1;
			c->ncache = n;
			c->ucache = 0;
		}
	}
	h = (uint32_t)((uint64_t)id * 0x9e3779b97f4a7c15ULL >> 32) &
	    (c->ncache - 1);
	while (c->cache[h].id >= 0) {
		if (c->cache[h].id == id) {
			*bp = &c->cache[h];
			return (SQLITE_OK);
		}
		h = (h + 1) & (c->ncache - 1);
	}
	if (c->binfo == NULL && xo_prepare(c->vt, sqlite3_mprintf(
	    "SELECT start_ip, ninsns, insn_lens FROM %sblocks WHERE id = ?1",
	    c->vt->qual), &c->binfo) != SQLITE_OK)
		return (xo_error(c, "exec_order: reading blocks"));
	sqlite3_bind_int64(c->binfo, 1, id);
	rc = sqlite3_step(c->binfo);
	b = &c->cache[h];
	b->id = id;
	b->lens = NULL;
	if (rc == SQLITE_ROW) {
		b->start_ip = sqlite3_column_int64(c->binfo, 0);
		b->ninsns = (uint32_t)sqlite3_column_int64(c->binfo, 1);
		if (c->vt->insns && sqlite3_column_bytes(c->binfo, 2) ==
		    (int)b->ninsns && b->ninsns > 0) {
			b->lens = sqlite3_malloc(b->ninsns);
			if (b->lens == NULL) {
				sqlite3_reset(c->binfo);
				b->id = -1;
				return (SQLITE_NOMEM);
			}
			memcpy(b->lens, sqlite3_column_blob(c->binfo, 2),
			    b->ninsns);
		}
	} else {
		/* A dangling id: expand it as an empty block. */
		b->start_ip = 0;
		b->ninsns = 0;
	}
	sqlite3_reset(c->binfo);
	c->ucache++;
	*bp = b;
	return (SQLITE_OK);
}

/* Decode the next varint of the chunk; -1 at its end or on garbage. */
static int
xo_varint(struct xo_cursor *c, uint64_t *vp)
{
	uint64_t v = 0;
	int shift = 0;

	while (c->dpos < c->dlen && shift < 64) {
		uint8_t b = c->data[c->dpos++];

		v |= (uint64_t)(b & 0x7f) << shift;
		if ((b & 0x80) == 0) {
			*vp = v;
			return (0);
		}
		shift += 7;
	}
	return (-1);
}

static int
xo_load_ts(struct xo_cursor *c, int64_t seq0, int64_t seq1)
{
	int rc;

	c->nts = c->its = 0;
	if (c->tstmt == NULL && xo_prepare(c->vt, sqlite3_mprintf(
	    "SELECT seq, tsc FROM %stimestamps WHERE thread = ?1 AND "
	    "seq >= ?2 AND seq < ?3 ORDER BY seq", c->vt->qual),
	    &c->tstmt) != SQLITE_OK)
		return (xo_error(c, "exec_order: reading timestamps"));
	sqlite3_bind_int64(c->tstmt, 1, c->thread);
	sqlite3_bind_int64(c->tstmt, 2, seq0);
	sqlite3_bind_int64(c->tstmt, 3, seq1);
	while ((rc = sqlite3_step(c->tstmt)) == SQLITE_ROW) {
		if (c->nts == c->cts) {
			int n = c->cts ? c->cts * 2 : 64;
			void *p = sqlite3_realloc64(c->ts,
			    (sqlite3_uint64)n * sizeof(*c->ts));

			if (p == NULL) {
				sqlite3_reset(c->tstmt);
				return (SQLITE_NOMEM);
			}
			c->ts = p;
			c->cts = n;
		}
		c->ts[c->nts][0] = sqlite3_column_int64(c->tstmt, 0);
		c->ts[c->nts][1] = sqlite3_column_int64(c->tstmt, 1);
		c->nts++;
	}
	sqlite3_reset(c->tstmt);
	return (rc == SQLITE_DONE ? SQLITE_OK :
	    xo_error(c, "exec_order: reading timestamps"));
}

/* Load the next chunk row; sets eof when there is none. */
static int
xo_next_chunk(struct xo_cursor *c)
{
	int64_t n;
	int rc;

	rc = sqlite3_step(c->chunks);
	if (rc == SQLITE_DONE) {
		c->eof = 1;
		return (SQLITE_OK);
	}
	if (rc != SQLITE_ROW)
		return (xo_error(c, "exec_order: reading exec_chunks"));
	if (c->thread != sqlite3_column_int64(c->chunks, 0))
		c->have_tsc = 0;
	c->thread = sqlite3_column_int64(c->chunks, 0);
	c->seq = sqlite3_column_int64(c->chunks, 1);
	n = sqlite3_column_int64(c->chunks, 2);
	c->insn = sqlite3_column_int64(c->chunks, 3);
	/* A database is input: counts that cannot be, or would overflow. */
	if (c->seq < 0 || n < 0 || n > HWTR_DB_CHUNK_BLOCKS || c->insn < 0 ||
	    c->seq > INT64_MAX - n)
		return (xo_corrupt(c, "seq, nblocks or insn out of range"));
	c->end_seq = c->seq + n;
	c->dlen = sqlite3_column_bytes(c->chunks, 4);
	sqlite3_free(c->dcopy);
	c->dcopy = NULL;
	{
		/* A chunk shorter than its blocks is a zstd frame. */
		uint8_t *raw;
		size_t rlen;

		if (hwtr_xo_unpack(sqlite3_column_blob(c->chunks, 4),
		    (size_t)c->dlen, c->end_seq - c->seq, &raw, &rlen) < 0) {
			sqlite3_free(c->vt->base.zErrMsg);
			c->vt->base.zErrMsg = sqlite3_mprintf("exec_order: "
			    "thread %lld: corrupt exec_chunks data at seq %lld",
			    (long long)c->thread, (long long)c->seq);
			return (SQLITE_CORRUPT_VTAB);
		}
		if (raw != NULL) {
			c->dcopy = sqlite3_malloc64(rlen);
			if (c->dcopy != NULL)
				memcpy(c->dcopy, raw, rlen);
			free(raw);
			c->dlen = (int)rlen;
		} else {
			c->dcopy = sqlite3_malloc(c->dlen > 0 ? c->dlen : 1);
			if (c->dcopy != NULL && c->dlen > 0)
				memcpy(c->dcopy, sqlite3_column_blob(c->chunks,
				    4), (size_t)c->dlen);
		}
	}
	if (c->dcopy == NULL)
		return (SQLITE_NOMEM);
	c->data = c->dcopy;
	c->dpos = 0;
	c->prev = -1;
	c->bi = NULL;
	rc = xo_load_ts(c, c->seq, c->end_seq);
	if (rc != SQLITE_OK)
		return (rc);
	if (c->nts == 0 || c->ts[0][0] != c->seq) {
		/* The time before this chunk: the last row before it. */
		sqlite3_stmt *st;

		if (xo_prepare(c->vt, sqlite3_mprintf("SELECT tsc FROM "
		    "%stimestamps WHERE thread = ?1 AND seq < ?2 ORDER BY seq "
		    "DESC LIMIT 1", c->vt->qual), &st) != SQLITE_OK)
			return (xo_error(c, "exec_order: reading timestamps"));
		sqlite3_bind_int64(st, 1, c->thread);
		sqlite3_bind_int64(st, 2, c->seq);
		c->have_tsc = 0;
		if (sqlite3_step(st) == SQLITE_ROW) {
			c->have_tsc = 1;
			c->tsc = sqlite3_column_int64(st, 0);
		}
		sqlite3_finalize(st);
	}
	return (SQLITE_OK);
}

/*
 * The cursor has just reached block c->seq (c->bi): the time of the
 * last timestamp at or before it, and its first instruction.
 */
static int
xo_enter(struct xo_cursor *c)
{
	while (c->its < c->nts && c->ts[c->its][0] <= c->seq) {
		c->have_tsc = 1;
		c->tsc = c->ts[c->its][1];
		c->its++;
	}
	c->k = 0;
	c->ip = c->bi->start_ip;
	return (SQLITE_OK);
}

/*
 * Step to the next block of the current chunk, or of the next chunk.
 * c->seq and c->insn then describe the block in c->block.
 */
static int
xo_step_block(struct xo_cursor *c, int first)
{
	uint64_t v;
	int64_t delta;
	int rc;

	for (;;) {
		if (!first && c->bi != NULL) {
			c->seq++;
			c->insn += c->bi->ninsns;
		}
		if (c->seq >= c->end_seq || xo_varint(c, &v) < 0) {
			rc = xo_next_chunk(c);
			if (rc != SQLITE_OK || c->eof)
				return (rc);
			first = 1;
			continue;
		}
		delta = (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
		/* Wraps (unsigned) on corrupt data: then no such block. */
		c->block = (int64_t)((uint64_t)c->prev + 1 + (uint64_t)delta);
		c->prev = c->block;
		rc = xo_block(c, c->block, &c->bi);
		if (rc != SQLITE_OK)
			return (rc);
		/*
		 * c->insn + ninsns is the next block's insn and bounds every
		 * instruction of this one (xo_in_bounds()): it must fit.
		 */
		if (c->insn > INT64_MAX - (int64_t)c->bi->ninsns)
			return (xo_corrupt(c, "instruction count overflows"));
		return (xo_enter(c));
	}
}

/*
 * The current block lies wholly before the cursor's lower bounds: pass
 * the blocks of its chunk up to the first one that does not (or to the
 * chunk's last), as xo_step_block() and xo_move() would, the time
 * looked up once after them.  A chunk holds up to HWTR_DB_CHUNK_BLOCKS
 * blocks, and a search for one position passes half of them on average.
 * Stops before what xo_step_block() would not take as a block of this
 * chunk.  Sets *@movedp when it moved.
 */
static int
xo_skip(struct xo_cursor *c, int *movedp)
{
	int64_t at = c->seq, insn = c->insn, prev = c->prev;
	struct xo_binfo *bi = c->bi, *e;
	const uint8_t *d = c->data;
	int n = c->dlen, i = c->dpos, rc = SQLITE_OK;
	uint64_t v;
	uint32_t h;

	/* On a block (xo_move() put it there), so the cache is made. */
	assert(bi != NULL && c->ncache > 0);
	*movedp = 0;
	while (at + 1 < c->end_seq) {
		int shift = 0, j = i;

		/* The next varint, or leave it to xo_step_block(). */
		v = 0;
		while (j < n && shift < 64 && (d[j] & 0x80) != 0) {
			v |= (uint64_t)(d[j++] & 0x7f) << shift;
			shift += 7;
		}
		if (j >= n || shift >= 64)
			break;
		v |= (uint64_t)d[j++] << shift;
		i = j;
		at++;
		insn += bi->ninsns;
		prev = (int64_t)((uint64_t)prev + 1 +
		    (uint64_t)((int64_t)(v >> 1) ^ -(int64_t)(v & 1)));
		/* xo_block()'s cache, its first slot; else xo_block(). */
		h = (uint32_t)((uint64_t)prev * 0x9e3779b97f4a7c15ULL >> 32) &
		    (c->ncache - 1);
		e = &c->cache[h];
		if (e->id != prev && (rc = xo_block(c, prev, &e)) != SQLITE_OK)
			break;
		bi = e;
		*movedp = 1;
		if (insn > INT64_MAX - (int64_t)bi->ninsns) {
			rc = xo_corrupt(c, "instruction count overflows");
			break;
		}
		/* exec_insns has no row for a block without instructions. */
		if (at >= c->seq_lo && insn + (int64_t)bi->ninsns > c->insn_lo &&
		    (!c->vt->insns || bi->ninsns > 0))
			break;
	}
	c->seq = at;
	c->insn = insn;
	c->block = c->prev = prev;
	c->dpos = i;
	c->bi = bi;
	/*
	 * Not moved, the cursor stays on its instruction: xo_enter() would
	 * take it back to the block's first, which xo_move() had passed,
	 * and a block that ends its chunk before the bounds (a chunk whose
	 * blocks hold fewer instructions than its row says) would be
	 * entered for ever.
	 */
	if (rc != SQLITE_OK || !*movedp)
		return (rc);
	return (xo_enter(c));
}

/* Is the current row inside the bounds?  1 yes, 0 skip, 2 past the end. */
static int
xo_in_bounds(struct xo_cursor *c)
{
	int64_t insn = c->insn + (c->vt->insns ? c->k : 0);

	if (c->seq > c->seq_hi || insn > c->insn_hi)
		return (2);
	if (c->seq < c->seq_lo)
		return (0);
	if (c->vt->insns)
		return (insn >= c->insn_lo);
	return (c->insn + (int64_t)c->bi->ninsns > c->insn_lo);
}

/* Move to the next row: the next instruction, or the next block. */
static int
xo_move(struct xo_cursor *c, int first)
{
	int rc;

	if (!first && c->vt->insns && c->bi != NULL &&
	    c->k + 1 < c->bi->ninsns) {
		/* Addresses wrap as the machine's (int64 in SQLite). */
		c->ip = (int64_t)((uint64_t)c->ip + (c->bi->lens != NULL ?
		    c->bi->lens[c->k] : 0));
		c->k++;
		return (SQLITE_OK);
	}
	do {
		rc = xo_step_block(c, first);
		first = 0;
		if (rc != SQLITE_OK || c->eof)
			return (rc);
	} while (c->vt->insns && c->bi->ninsns == 0);
	return (SQLITE_OK);
}

static int
xo_advance(struct xo_cursor *c, int first)
{
	int64_t t;
	int rc, in, moved;

	rc = xo_move(c, first);
	for (;;) {
		if (rc != SQLITE_OK || c->eof)
			return (rc);
		in = xo_in_bounds(c);
		if (in == 1)
			return (SQLITE_OK);
		if (in == 0) {
			/* A whole block before the bounds: pass its like. */
			moved = 0;
			if ((c->seq < c->seq_lo || c->insn +
			    (int64_t)c->bi->ninsns <= c->insn_lo) &&
			    (rc = xo_skip(c, &moved)) != SQLITE_OK)
				return (rc);
			/* xo_move() rests on no block without instructions. */
			if (!moved || (c->vt->insns && c->bi->ninsns == 0))
				rc = xo_move(c, 0);
			continue;
		}
		/* Past the bounds in this thread: go on with the next one. */
		t = c->thread;
		do {
			rc = xo_next_chunk(c);
			if (rc != SQLITE_OK || c->eof)
				return (rc);
		} while (c->thread == t);
		rc = xo_move(c, 1);
	}
}

/*
 * Argument @v of a constraint of operator @op (SQLITE_INDEX_CONSTRAINT_*)
 * as an inclusive integer bound in *@bp: 0, or 1 when no row can match,
 * 2 when every row does (no bound).  Exact, since xBestIndex let SQLite
 * omit its own check of =, >= and <=: the columns have no affinity, so a
 * real compares as a number (2.5: the integers above 2, or below 3) and
 * text or a blob is above every integer.  NULL matches nothing.
 */
static int
xo_bound(sqlite3_value *v, int op, int64_t *bp)
{
	int lower = op == SQLITE_INDEX_CONSTRAINT_GT ||
	    op == SQLITE_INDEX_CONSTRAINT_GE;
	double d;

	switch (sqlite3_value_type(v)) {
	case SQLITE_INTEGER:
		*bp = sqlite3_value_int64(v);
		if (op == SQLITE_INDEX_CONSTRAINT_GT) {
			if (*bp == INT64_MAX)
				return (1);
			(*bp)++;
		} else if (op == SQLITE_INDEX_CONSTRAINT_LT) {
			if (*bp == INT64_MIN)
				return (1);
			(*bp)--;
		}
		return (0);
	case SQLITE_FLOAT:
		d = sqlite3_value_double(v);
		if (d != d)
			return (1);
		/* Past the integers: a bound that keeps all or none. */
		if (d >= 9223372036854775807.0)
			return (lower || op == SQLITE_INDEX_CONSTRAINT_EQ ? 1 :
			    2);
		if (d < -9223372036854775807.0)
			return (lower ? 2 : 1);
		switch (op) {
		case SQLITE_INDEX_CONSTRAINT_EQ:
			*bp = (int64_t)d;
			return ((double)*bp == d ? 0 : 1);
		case SQLITE_INDEX_CONSTRAINT_GT:
			*bp = (int64_t)floor(d) + 1;
			return (0);
		case SQLITE_INDEX_CONSTRAINT_GE:
			*bp = (int64_t)ceil(d);
			return (0);
		case SQLITE_INDEX_CONSTRAINT_LT:
			/* Below -2^63: no integer is. */
			if (ceil(d) <= -9223372036854775807.0)
				return (1);
			*bp = (int64_t)ceil(d) - 1;
			return (0);
		default:
			*bp = (int64_t)floor(d);
			return (0);
		}
	case SQLITE_NULL:
		return (1);
	default:
		/* Text and blobs sort after every number. */
		return (lower || op == SQLITE_INDEX_CONSTRAINT_EQ ? 1 : 2);
	}
}

static int
xo_filter(sqlite3_vtab_cursor *cur, int idxnum, const char *idxstr,
    int argc, sqlite3_value **argv)
{
	struct xo_cursor *c = (struct xo_cursor *)cur;
	int ops[5] = { 0, 0, 0, 0, 0 };
	int64_t tlo = INT64_MIN, thi = INT64_MAX;
	int64_t clo, chi;
	int a = 0, i, rc;

	(void)argc;
	if (idxstr != NULL)
		sscanf(idxstr, "%d,%d,%d,%d,%d", &ops[0], &ops[1], &ops[2],
		    &ops[3], &ops[4]);
	c->seq_lo = c->insn_lo = 0;
	c->seq_hi = c->insn_hi = INT64_MAX;
	for (i = 0; i < 5; i++) {
		int64_t v = 0;

		if (!(idxnum & (1 << i)))
			continue;
		if ((i == 2 || i == 4) && ops[i] == 0) {
			/* Upper bound of an equality: same argument. */
			if (xo_bound(argv[a - 1], SQLITE_INDEX_CONSTRAINT_EQ,
			    &v) != 0)
				continue;
		} else {
			switch (xo_bound(argv[a++], i == 0 ?
			    SQLITE_INDEX_CONSTRAINT_EQ : ops[i], &v)) {
			case 1:
				c->eof = 1;
				return (SQLITE_OK);
			case 2:
				continue;
			default:
				break;
			}
		}
		switch (i) {
		case 0:
			tlo = thi = v;
			break;
		case 1:
			c->seq_lo = v > c->seq_lo ? v : c->seq_lo;
			break;
		case 3:
			c->insn_lo = v > c->insn_lo ? v : c->insn_lo;
			break;
		case 2:
			c->seq_hi = v;
			break;
		default:
			c->insn_hi = v;
			break;
		}
	}
	/* An empty range (seq and insn are never below 0). */
	if (c->seq_lo > c->seq_hi || c->insn_lo > c->insn_hi ||
	    c->seq_hi < 0 || c->insn_hi < 0) {
		c->eof = 1;
		return (SQLITE_OK);
	}
	sqlite3_finalize(c->chunks);
	c->chunks = NULL;
	/*
	 * A chunk holds at most HWTR_DB_CHUNK_BLOCKS blocks (?5), so the
	 * chunk holding block seq_lo starts after seq_lo - ?5.  For
	 * instruction bounds the insn index is searched instead.  One
	 * thread is asked for with
	 * "thread = ?1": SQLite uses the second column of a key only after an
	 * equality on the first, and a range on thread would read every chunk
	 * of the thread.  Its first chunk for instruction bounds is the last
	 * one starting at or before insn_lo (chunks follow each other; within
	 * a thread insn grows with seq), found in exec_chunks_insn.
	 */
	if (c->insn_lo > 0) {
		rc = xo_prepare(c->vt, tlo == thi ? sqlite3_mprintf(
		    "SELECT thread, seq, nblocks, insn, data FROM "
		    "%sexec_chunks WHERE thread = ?1 AND ?2 = ?1 AND insn >= "
		    "coalesce((SELECT max(insn) FROM %sexec_chunks WHERE "
		    "thread = ?1 AND insn <= ?3), 0) AND insn + ninsns > ?3 "
		    "AND insn <= ?4 ORDER BY thread, insn, seq", c->vt->qual,
		    c->vt->qual) : sqlite3_mprintf(
		    "SELECT thread, seq, nblocks, insn, data FROM "
		    "%sexec_chunks WHERE thread >= ?1 AND thread <= ?2 AND "
		    "insn + ninsns > ?3 AND insn <= ?4 ORDER BY thread, seq",
		    c->vt->qual), &c->chunks);
		clo = c->insn_lo;
		chi = c->insn_hi;
	} else {
		rc = xo_prepare(c->vt, tlo == thi ? sqlite3_mprintf(
		    "SELECT thread, seq, nblocks, insn, data FROM "
		    "%sexec_chunks WHERE thread = ?1 AND ?2 = ?1 AND "
		    "seq > ?3 - ?5 AND seq + nblocks > ?3 AND seq <= ?4 "
		    "ORDER BY thread, seq", c->vt->qual) : sqlite3_mprintf(
		    "SELECT thread, seq, nblocks, insn, data FROM "
		    "%sexec_chunks WHERE thread >= ?1 AND thread <= ?2 AND "
		    "seq > ?3 - ?5 AND seq + nblocks > ?3 AND seq <= ?4 "
		    "ORDER BY thread, seq", c->vt->qual), &c->chunks);
		clo = c->seq_lo;
		chi = c->seq_hi;
	}
	if (rc != SQLITE_OK)
		return (xo_error(c, "exec_order: reading exec_chunks"));
	sqlite3_bind_int64(c->chunks, 1, tlo);
	sqlite3_bind_int64(c->chunks, 2, thi);
	sqlite3_bind_int64(c->chunks, 3, clo);
	sqlite3_bind_int64(c->chunks, 4, chi);
	if (c->insn_lo <= 0)
		sqlite3_bind_int64(c->chunks, 5, HWTR_DB_CHUNK_BLOCKS);
	c->eof = 0;
	c->thread = INT64_MIN;
	c->end_seq = 0;
	c->seq = 0;
	c->bi = NULL;
	c->have_tsc = 0;
	return (xo_advance(c, 1));
}

static int
xo_next(sqlite3_vtab_cursor *cur)
{
	return (xo_advance((struct xo_cursor *)cur, 0));
}

static int
xo_eof(sqlite3_vtab_cursor *cur)
{
	return (((struct xo_cursor *)cur)->eof);
}

static int
xo_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col)
{
	struct xo_cursor *c = (struct xo_cursor *)cur;

	switch (col) {
	case XO_THREAD:
		sqlite3_result_int64(ctx, c->thread);
		break;
	case XO_SEQ:
		sqlite3_result_int64(ctx, c->seq);
		break;
	case XO_BLOCK:
		sqlite3_result_int64(ctx, c->block);
		break;
	case XO_INSN:
		sqlite3_result_int64(ctx, c->insn + (c->vt->insns ? c->k : 0));
		break;
	case XO_TSC:
		if (c->have_tsc)
			sqlite3_result_int64(ctx, c->tsc);
		else
			sqlite3_result_null(ctx);
		break;
	case XO_IP:
		sqlite3_result_int64(ctx, c->ip);
		break;
	default:
		break;
	}
	return (SQLITE_OK);
}

static int
xo_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid)
{
	struct xo_cursor *c = (struct xo_cursor *)cur;

	*rowid = c->vt->insns ? c->insn + c->k : c->seq;
	return (SQLITE_OK);
}

static sqlite3_module xo_module = {
	.iVersion = 0,
	.xCreate = xo_connect,	/* eponymous, and declared (the schema) */
	.xConnect = xo_connect,
	.xBestIndex = xo_best_index,
	.xDisconnect = xo_disconnect,
	.xDestroy = xo_disconnect,
	.xOpen = xo_open,
	.xClose = xo_close,
	.xFilter = xo_filter,
	.xNext = xo_next,
	.xEof = xo_eof,
	.xColumn = xo_column,
	.xRowid = xo_rowid,
};

/*
 * hwtr_time_at(thread, insn) and hwtr_time_estimated(thread, insn): the
 * time of instruction @insn of a thread, estimated by instruction count
 * between the clock readings around it.  Timestamps are sparse, and a
 * call's stored entry_ns and exit_ns are those of the last reading before
 * it, so that most calls would last 0 ns; these place each instruction on
 * a line between two readings instead.  A reading is a timestamps row
 * whose ns is later than the one before (a PSB+ repeats the last time the
 * tracer knew; the valgrind source reads its clock only where the program
 * enters Valgrind's scheduler): its instruction gets its time exactly
 * (hwtr_time_estimated 0); one between two readings is interpolated, one
 * before the first or after the last gets that reading's time (both 1).
 * NULL for a thread without a reading.  The readings of the last thread
 * asked for are kept per connection (a few thousand: each lookup is a
 * bisection), read again when the database changes or when the
 * connection's databases do (xt_dbsig(): one detached and another
 * attached under its name).
 *
 * They read the main database's timestamps, or, given a fourth argument,
 * those of the database whose meta says that archive_id: the call_times
 * view passes its own database's (a view of an attached database reads
 * that database's tables, but a function cannot know which one it is
 * called from).
 */
struct xt_clock {
	int64_t		thread;
	int		tsc;		/* the readings are tsc, not ns */
	int		valid;
	unsigned int	version;	/* SQLITE_FCNTL_DATA_VERSION */
	char		*schema;	/* the database they are of */
	int64_t		*insn, *ns;
	size_t		n, cap;
	/* The last archive id looked for, the schema found, among which. */
	char		*aid, *aschema;
	uint64_t	asig;
	uint64_t	sig;		/* xt_dbsig() the readings were read at */
};

static void
xt_free(void *p)
{
	struct xt_clock *ck = p;

	if (ck != NULL) {
		free(ck->insn);
		free(ck->ns);
		sqlite3_free(ck->schema);
		sqlite3_free(ck->aid);
		sqlite3_free(ck->aschema);
		free(ck);
	}
}

/*
 * A digest of database @name's timestamps into @fp: the row count and
 * sums of its columns, each value taken modulo a prime below 2^32 so
 * that the sums neither overflow nor round (a nanosecond matters); 0,
 * or -1 when they cannot be read.
 */
static int
xt_fingerprint(sqlite3 *db, const char *name, sqlite3_int64 fp[4])
{
	sqlite3_stmt *st;
	char *sql;
	int i, rc;

	if ((sql = sqlite3_mprintf("SELECT count(*), sum(insn %% 4294967291), "
	    "sum(tsc %% 4294967291), sum(ns %% 4294967291) FROM "
	    "\"%w\".timestamps", name)) == NULL)
		return (-1);
	rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	sqlite3_free(sql);
	if (rc != SQLITE_OK)
		return (-1);
	rc = sqlite3_step(st) == SQLITE_ROW ? 0 : -1;
	for (i = 0; rc == 0 && i < 4; i++)
		fp[i] = sqlite3_column_int64(st, i);
	sqlite3_finalize(st);
	return (rc);
}

/* String @s into hash @h (FNV-1a's constants, eight bytes a step). */
static uint64_t
xt_strhash(uint64_t h, const char *s)
{
	size_t n = strlen(s), i;
	uint64_t w;

	for (i = 0; i + 8 <= n; i += 8) {
		memcpy(&w, s + i, 8);
		h = (h ^ w) * 0x100000001b3ull;
		h ^= h >> 29;
	}
	w = n;
	for (; i < n; i++)
		w = w << 8 | (unsigned char)s[i];
	h = (h ^ w) * 0x100000001b3ull;
	return (h ^ h >> 29);
}

/*
 * Which databases connection @db has attached: 0 for none, else a hash of
 * each one's schema name and file name, in order (main and temp, 0 and 1,
 * are there for the connection's life).  A database detached and another
 * attached under its name between two statements changes it (a file of
 * another name), so that what was read of the first is not taken for the
 * second (the data version alone does not tell: a new attachment may
 * start at the old one's).  In-memory databases have no file name: one
 * attached in place of another under the same name goes unseen.  A
 * hundred instructions a call and an attached database.
 */
static uint64_t
xt_dbsig(sqlite3 *db)
{
	const char *name, *file;
	uint64_t h = 0xcbf29ce484222325ull;
	int i;

	if (sqlite3_db_name(db, 2) == NULL)
		return (0);
	for (i = 2; (name = sqlite3_db_name(db, i)) != NULL; i++) {
		file = sqlite3_db_filename(db, name);
		h = xt_strhash(h, name);
		h = xt_strhash(h, file != NULL ? file : "");
	}
	return (h);
}

/*
 * The database of @db whose meta's archive_id is @aid, main first; NULL
 * with *@rcp SQLITE_OK when none is, or with *@why set when two are whose
 * timestamps differ (the function cannot tell which one calls it: one
 * indexed in part, a copy changed), or an error in *@rcp.  The answer is
 * kept while the connection has the same databases (@sig, xt_dbsig()),
 * where a look at every database's meta would cost far more a call.
 */
static const char *
xt_schema_of(sqlite3 *db, struct xt_clock *ck, const char *aid,
    uint64_t sig, int *rcp, const char **why)
{
	sqlite3_stmt *st;
	const char *name, *v, *first = NULL;
	sqlite3_int64 fp0[4], fp[4];
	char *sql;
	int i, rc, found;

	*rcp = SQLITE_OK;
	*why = NULL;
	if (ck->aid != NULL && ck->asig == sig && strcmp(ck->aid, aid) == 0)
		return (ck->aschema);
	sqlite3_free(ck->aid);
	sqlite3_free(ck->aschema);
	ck->aid = ck->aschema = NULL;
	for (i = 0; (name = sqlite3_db_name(db, i)) != NULL; i++) {
		if ((sql = sqlite3_mprintf("SELECT value FROM \"%w\".meta "
		    "WHERE key = 'archive_id'", name)) == NULL) {
			*rcp = SQLITE_NOMEM;
			return (NULL);
		}
		rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
		sqlite3_free(sql);
		if (rc != SQLITE_OK)
			continue;	/* not a hwtrace database */
		found = sqlite3_step(st) == SQLITE_ROW &&
		    (v = (const char *)sqlite3_column_text(st, 0)) != NULL &&
		    strcmp(v, aid) == 0;
		sqlite3_finalize(st);
		if (!found)
			continue;
		if (first == NULL) {
			first = name;
			if (xt_fingerprint(db, name, fp0) < 0)
				memset(fp0, 0, sizeof(fp0));
			continue;
		}
		/* Another of the same archive: it must read the same. */
		if (xt_fingerprint(db, name, fp) < 0 ||
		    memcmp(fp, fp0, sizeof(fp)) != 0) {
			*why = "hwtr_time_at: two databases of this "
			    "connection have that archive_id and different "
			    "timestamps";
			return (NULL);
		}
	}
	if (first == NULL)
		return (NULL);
	ck->aid = sqlite3_mprintf("%s", aid);
	ck->aschema = sqlite3_mprintf("%s", first);
	ck->asig = sig;
	if (ck->aid == NULL || ck->aschema == NULL) {
		*rcp = SQLITE_NOMEM;
		return (NULL);
	}
	return (ck->aschema);
}

static int
xt_load(sqlite3 *db, struct xt_clock *ck, const char *schema,
    uint64_t sig, int64_t thread, int tsc)
{
	sqlite3_stmt *st;
	unsigned int version = 0;
	int64_t i, t;
	char *sql;
	int rc;

	(void)sqlite3_file_control(db, schema, SQLITE_FCNTL_DATA_VERSION,
	    &version);
	if (ck->valid && ck->thread == thread && ck->tsc == tsc &&
	    ck->version == version && ck->sig == sig &&
	    strcmp(ck->schema, schema) == 0)
		return (SQLITE_OK);
	ck->valid = 0;
	ck->n = 0;
	sqlite3_free(ck->schema);
	if ((ck->schema = sqlite3_mprintf("%s", schema)) == NULL)
		return (SQLITE_NOMEM);
	sql = tsc ? sqlite3_mprintf("SELECT insn, tsc FROM \"%w\".timestamps "
	    "WHERE thread = ?1 ORDER BY seq", schema) : sqlite3_mprintf(
	    "SELECT insn, ns FROM \"%w\".timestamps WHERE thread = ?1 AND "
	    "ns IS NOT NULL ORDER BY seq", schema);
	if (sql == NULL)
		return (SQLITE_NOMEM);
	rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	sqlite3_free(sql);
	if (rc != SQLITE_OK)
		return (rc);
	sqlite3_bind_int64(st, 1, thread);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		i = sqlite3_column_int64(st, 0);
		t = sqlite3_column_int64(st, 1);
		if (ck->n > 0 && (i < ck->insn[ck->n - 1] ||
		    t <= ck->ns[ck->n - 1]))
			continue;
		if (ck->n == ck->cap) {
			size_t nc = ck->cap ? 2 * ck->cap : 1024;
			int64_t *a;

			if ((a = realloc(ck->insn, nc * sizeof(*a))) == NULL)
				break;
			ck->insn = a;
			if ((a = realloc(ck->ns, nc * sizeof(*a))) == NULL)
				break;
			ck->ns = a;
			ck->cap = nc;
		}
		ck->insn[ck->n] = i;
		ck->ns[ck->n++] = t;
	}
	sqlite3_finalize(st);
	if (rc == SQLITE_ROW)
		return (SQLITE_NOMEM);
	if (rc != SQLITE_DONE)
		return (rc);
	ck->thread = thread;
	ck->tsc = tsc;
	ck->version = version;
	ck->sig = sig;
	ck->valid = 1;
	return (SQLITE_OK);
}

/*
 * Find instruction argv[1] of thread argv[0] among the readings: 0 with
 * *lop the number of readings at or before it, or -1 when the result is
 * NULL (a NULL argument, no reading) or an error was set.
 */
static int
xt_insn_by(const void *x, const void *insn, size_t i)
{
	return (((const int64_t *)insn)[i] <= *(const int64_t *)x);
}

static int
xt_find(sqlite3_context *ctx, int argc, sqlite3_value **argv,
    struct xt_clock **ckp, size_t *lop, int64_t *xp)
{
	struct xt_clock *ck = sqlite3_user_data(ctx);
	sqlite3 *db = sqlite3_context_db_handle(ctx);
	const char *clock, *schema = "main", *aid, *why;
	int64_t x;
	uint64_t sig;
	int rc, tsc = 0;

	if (sqlite3_value_type(argv[0]) == SQLITE_NULL ||
	    sqlite3_value_type(argv[1]) == SQLITE_NULL)
		return (-1);
	/* A third argument names the clock: 'ns' (the default) or 'tsc'. */
	if (argc >= 3) {
		clock = (const char *)sqlite3_value_text(argv[2]);
		if (clock != NULL && strcmp(clock, "tsc") == 0)
			tsc = 1;
		else if (clock == NULL || strcmp(clock, "ns") != 0) {
			sqlite3_result_error(ctx, "hwtr_time_at: the clock is "
			    "'ns' or 'tsc'", -1);
			return (-1);
		}
	}
	/*
	 * A fourth, the archive id of the database to read: then which
	 * databases are attached matters (main stays for the connection's
	 * life).
	 */
	sig = 0;
	if (argc == 4 && (aid = (const char *)sqlite3_value_text(argv[3])) !=
	    NULL) {
		sig = xt_dbsig(db);
		if ((schema = xt_schema_of(db, ck, aid, sig, &rc, &why)) ==
		    NULL) {
			if (rc != SQLITE_OK)
				sqlite3_result_error_code(ctx, rc);
			else
				sqlite3_result_error(ctx, why != NULL ? why :
				    "hwtr_time_at: no database of this "
				    "connection has that archive_id", -1);
			return (-1);
		}
	}
	rc = xt_load(db, ck, schema, sig, sqlite3_value_int64(argv[0]), tsc);
	if (rc != SQLITE_OK) {
		sqlite3_result_error_code(ctx, rc);
		return (-1);
	}
	if (ck->n == 0)
		return (-1);
	x = sqlite3_value_int64(argv[1]);
	*ckp = ck;
	*lop = hwtr_bsearch(&x, ck->insn, ck->n, xt_insn_by);
	*xp = x;
	return (0);
}

static void
xt_time_at(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct xt_clock *ck;
	size_t lo;
	int64_t x;
	__int128 num;

	if (xt_find(ctx, argc, argv, &ck, &lo, &x) < 0)
		return;
	if (lo > 0 && ck->insn[lo - 1] == x)
		sqlite3_result_int64(ctx, ck->ns[lo - 1]);
	else if (lo == 0)
		sqlite3_result_int64(ctx, ck->ns[0]);
	else if (lo == ck->n)
		sqlite3_result_int64(ctx, ck->ns[ck->n - 1]);
	else {
		num = (__int128)(ck->ns[lo] - ck->ns[lo - 1]) *
		    (x - ck->insn[lo - 1]);
		sqlite3_result_int64(ctx, ck->ns[lo - 1] + (int64_t)(num /
		    (ck->insn[lo] - ck->insn[lo - 1])));
	}
}

static void
xt_time_estimated(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct xt_clock *ck;
	size_t lo;
	int64_t x;

	if (xt_find(ctx, argc, argv, &ck, &lo, &x) < 0)
		return;
	sqlite3_result_int(ctx, !(lo > 0 && ck->insn[lo - 1] == x));
}

/*
 * The time functions, each with a clock cache of its own per connection.
 * (thread, insn, clock[, archive id]): the call_times view's, on 'ns' or
 * 'tsc', of the database with that archive id.  Those are innocuous (no
 * side effect; they read the timestamps table), so that the view may use
 * them where the schema is not trusted (trusted_schema off, as hwtrace
 * query runs).
 */
static const struct {
	const char	*name;
	int		nargs;
	int		innocuous;
	void		(*fn)(sqlite3_context *, int, sqlite3_value **);
} xt_funcs[] = {
	{ "hwtr_time_at", 2, 0, xt_time_at },
	{ "hwtr_time_estimated", 2, 0, xt_time_estimated },
	{ "hwtr_time_at", 3, 1, xt_time_at },
	{ "hwtr_time_estimated", 3, 1, xt_time_estimated },
	{ "hwtr_time_at", 4, 1, xt_time_at },
	{ "hwtr_time_estimated", 4, 1, xt_time_estimated },
};

static int
xo_register(sqlite3 *db)
{
	struct xt_clock *ck;
	size_t i;
	int rc;

	rc = sqlite3_create_module(db, "exec_order", &xo_module, NULL);
	if (rc == SQLITE_OK)
		rc = hwtr_calls_vtab_register(db);
	if (rc == SQLITE_OK)
		rc = hwtr_lines_vtab_register(db);
	if (rc == SQLITE_OK)
		rc = sqlite3_create_module(db, "exec_insns", &xo_module,
		    (void *)&xo_module);
	for (i = 0; rc == SQLITE_OK &&
	    i < sizeof(xt_funcs) / sizeof(xt_funcs[0]); i++) {
		/* Freed with the connection (xt_free()). */
		if ((ck = calloc(1, sizeof(*ck))) == NULL)
			return (SQLITE_NOMEM);
		rc = sqlite3_create_function_v2(db, xt_funcs[i].name,
		    xt_funcs[i].nargs, SQLITE_UTF8 | (xt_funcs[i].innocuous ?
		    SQLITE_INNOCUOUS : 0), ck, xt_funcs[i].fn, NULL, NULL,
		    xt_free);
	}
	return (rc);
}

#ifdef HWTR_SQLITE_EXTENSION
int sqlite3_hwtracesqlite_init(sqlite3 *db, char **errp,
    const sqlite3_api_routines *api);

/* Entry point for ".load hwtrace_sqlite" (named after the file). */
int
sqlite3_hwtracesqlite_init(sqlite3 *db, char **errp,
    const sqlite3_api_routines *api)
{
	SQLITE_EXTENSION_INIT2(api);
	(void)errp;
	return (xo_register(db));
}
#else
int
hwtr_ix_sqlite_register(void *sqlite3_db)
{
	if (sqlite3_db == NULL)
		return (-HWTR_E_INVAL);
	return (xo_register(sqlite3_db) == SQLITE_OK ? 0 : -HWTR_E_DB);
}
#endif
