/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The calls column store (hwtrace-db(5) CALLS STORAGE).
 *
 * The calls table of a database is a virtual table (calls_vtab.c) over
 * three ordinary tables:
 *   calls_pages  the rows hwtrace index wrote, in pages of up to
 *                HWTR_CS_PAGE consecutive ids of one thread, each page a
 *                blob of delta- and varint-coded columns, zstd-compressed;
 *   calls_bysym  per symbol, a copy of its calls in pages of one thread
 *                (with their callers' symbol and func_ip), so that
 *                "symbol = ?" (func) reads only that function's calls;
 *   calls_rows   rows written with SQL (INSERT INTO calls), kept as plain
 *                rows with the old indexes: fixtures, hand-made databases.
 * Ids follow (thread, entry_seq) order in both, so that every reader
 * gets rows in id order and the planner can use it.
 *
 * The writer takes rows in any order of ids within one thread at a time
 * (the stitcher gives them in exit order), keeps a window of pages in
 * memory and writes a page when it is full or the oldest when the window
 * is; a row that comes after its page was written (a call that lasted
 * longer than the window) is merged into the page later, in batches.  So
 * memory stays bounded whatever the length of the trace.
 *
 * Built into libhwtrace and into the loadable extension (with
 * HWTR_SQLITE_EXTENSION, through hwtr_cs_sqlite.h).
 */

#ifndef HWTR_COLSTORE_H
#define HWTR_COLSTORE_H

#include <stddef.h>
#include <stdint.h>

/* The columns of calls, in the order hwtrace-db(5) documents them. */
enum {
	CS_ID, CS_THREAD, CS_PARENT, CS_DEPTH, CS_SYMBOL, CS_FUNC_IP,
	CS_CALL_IP, CS_ENTRY_KIND, CS_EXIT_KIND, CS_ENTRY_SEQ, CS_EXIT_SEQ,
	CS_ENTRY_INSN, CS_EXIT_INSN, CS_ENTRY_TSC, CS_EXIT_TSC, CS_ENTRY_NS,
	CS_EXIT_NS, CS_INSNS, CS_SELF_INSNS, CS_BLOCKS, CS_NCOLS,
	/*
	 * Hidden columns (not in SELECT *): the symbol and func_ip of the
	 * call's parent, NULL when it has none or it is not in the table.
	 * Stored in the symbol copy (calls_bysym), looked up otherwise.
	 */
	CS_CALLER_SYMBOL = CS_NCOLS, CS_CALLER_IP, CS_XNCOLS
};

#define HWTR_CS_COLUMNS							\
	"id INTEGER, thread INTEGER, parent INTEGER, depth INTEGER, "	\
	"symbol INTEGER, func_ip INTEGER, call_ip INTEGER, "		\
	"entry_kind TEXT, exit_kind TEXT, entry_seq INTEGER, "		\
	"exit_seq INTEGER, entry_insn INTEGER, exit_insn INTEGER, "	\
	"entry_tsc INTEGER, exit_tsc INTEGER, entry_ns INTEGER, "	\
	"exit_ns INTEGER, insns INTEGER, self_insns INTEGER, "		\
	"blocks INTEGER, caller_symbol INTEGER HIDDEN, "			\
	"caller_ip INTEGER HIDDEN"

/* Rows per page (ids per page: a page covers [id0, id0 + HWTR_CS_PAGE)). */
#define HWTR_CS_PAGE		1024

/*
 * One row.  v[CS_ENTRY_KIND] and v[CS_EXIT_KIND] index
 * hwtr_cs_entry_kinds[] and hwtr_cs_exit_kinds[]; bit c of @nul says
 * column c is NULL.
 */
struct hwtr_cs_row {
	int64_t		v[CS_XNCOLS];
	uint32_t	nul;
};

extern const char *const hwtr_cs_entry_kinds[];	/* NULL-terminated */
extern const char *const hwtr_cs_exit_kinds[];
/* How many of each (the lists above less their NULL). */
#define CS_NENTRY_KINDS	5
#define CS_NEXIT_KINDS	4

/* Index of @name in @kinds (NULL-terminated), or -1. */
int hwtr_cs_kind(const char *const *kinds, const char *name);

/*
 * Encode @n rows (ascending ids, all of one thread, ids in
 * [id0, id0 + HWTR_CS_PAGE)) into a page blob, malloc'd in *@outp.
 * 0, or -1 when the rows cannot be a page or memory ran out.
 */
int hwtr_cs_encode(const struct hwtr_cs_row *rows, size_t n, int64_t id0,
    int64_t seq0, uint8_t **outp, size_t *lenp);

/*
 * Decode the page blob @p (@len bytes) of the calls_pages row (@id0,
 * @thread, @n, @seq0) into @rows (room for @n).  0, or -1 with *@whyp
 * saying what is wrong with it (a static string).
 */
int hwtr_cs_decode(const uint8_t *p, size_t len, int64_t id0, int64_t thread,
    int64_t n, int64_t seq0, struct hwtr_cs_row *rows, const char **whyp);

/*
 * The symbol copy's pages (calls_bysym): up to HWTR_CS_PAGE rows of one
 * symbol and one thread, ids ascending (any gaps), with the hidden caller
 * columns, coded like a page but each column predicted from the same
 * function's call before (colstore.c).  hwtr_cs_sym_decode() takes the
 * calls_bysym row's symbol, id0 (the first id), thread and n; 0, or -1
 * (*@whyp says why).
 */
int hwtr_cs_sym_encode(const struct hwtr_cs_row *rows, size_t n,
    uint8_t **outp, size_t *lenp);
int hwtr_cs_sym_decode(const uint8_t *p, size_t len, int64_t symbol,
    int64_t id0, int64_t thread, int64_t n, struct hwtr_cs_row *rows,
    const char **whyp);

/*
 * exec_chunks data (hwtrace-db(5) EXECUTION ORDER): the varints of a
 * chunk of @nblocks blocks are stored as they are, or as a zstd frame of
 * them when that is shorter than @nblocks bytes (the varints take at least
 * one byte per block, so the length tells which).  hwtr_xo_pack() sets
 * *@outp to the frame (malloc'd) or to NULL (store @p as it is);
 * hwtr_xo_unpack() sets *@outp to the varints (malloc'd) or to NULL (@p
 * is them).  0, or -1: out of memory, or a frame that does not decode
 * into at least @nblocks and at most 10 @nblocks bytes.
 */
int hwtr_xo_pack(const uint8_t *p, size_t len, int64_t nblocks,
    uint8_t **outp, size_t *lenp);
int hwtr_xo_unpack(const uint8_t *p, size_t len, int64_t nblocks,
    uint8_t **outp, size_t *lenp);

/* The columns of calls_rows after its id, as SQL declares them. */
#define HWTR_CS_ROW_COLS						\
	"thread INTEGER NOT NULL, parent INTEGER, depth INTEGER NOT NULL, " \
	"symbol INTEGER, func_ip INTEGER NOT NULL, call_ip INTEGER, "	\
	"entry_kind TEXT NOT NULL, exit_kind TEXT NOT NULL, "		\
	"entry_seq INTEGER NOT NULL, exit_seq INTEGER NOT NULL, "	\
	"entry_insn INTEGER NOT NULL, exit_insn INTEGER NOT NULL, "	\
	"entry_tsc INTEGER, exit_tsc INTEGER, entry_ns INTEGER, "	\
	"exit_ns INTEGER, insns INTEGER NOT NULL, "			\
	"self_insns INTEGER NOT NULL, blocks INTEGER NOT NULL"

/* The storage tables of a calls table named @name ("%1$s"). */
#define HWTR_CS_SHADOW_SQL						\
	"CREATE TABLE \"%2$s\".\"%1$s_pages\" (id0 INTEGER PRIMARY KEY, "	\
	"thread INTEGER NOT NULL, n INTEGER NOT NULL, seq0 INTEGER NOT NULL, " \
	"seq1 INTEGER NOT NULL, data BLOB NOT NULL);"			\
	"CREATE INDEX \"%2$s\".\"%1$s_pages_seq\" ON \"%1$s_pages\" (thread, seq1);" \
	"CREATE INDEX \"%2$s\".\"%1$s_pages_seq0\" ON \"%1$s_pages\" (thread, seq0);" \
	"CREATE TABLE \"%2$s\".\"%1$s_bysym\" (symbol INTEGER NOT NULL, "	\
	"id0 INTEGER NOT NULL, thread INTEGER NOT NULL, n INTEGER NOT NULL, " \
	"data BLOB NOT NULL, PRIMARY KEY (symbol, id0));"		\
	"CREATE TABLE \"%2$s\".\"%1$s_rows\" (id INTEGER PRIMARY KEY, "		\
	HWTR_CS_ROW_COLS ");"						\
	"CREATE INDEX \"%2$s\".\"%1$s_rows_thread\" ON \"%1$s_rows\" (thread, entry_seq);" \
	"CREATE INDEX \"%2$s\".\"%1$s_rows_symbol\" ON \"%1$s_rows\" (symbol);"

struct sqlite3;

/* The module "hwtr_calls" on @db (calls_vtab.c); an SQLite result code. */
int hwtr_calls_vtab_register(struct sqlite3 *db);

/* The writer (libhwtrace only: the extension reads). */
struct hwtr_cs_writer;

/*
 * A writer of the calls table's pages on @db (borrowed; the calls table
 * must exist).  0, or -1 (out of memory, or statements that do not
 * prepare: hwtr_cs_writer_error() of a NULL writer is not available, so
 * *@wp is set whenever memory allowed and says why).
 */
int hwtr_cs_writer_open(struct sqlite3 *db, struct hwtr_cs_writer **wp);
/*
 * Encode pages in jobs on @q (ix_jobs.h; NULL: on the calling thread):
 * they go in, in order, a few pages later, so that the file is the same.
 */
struct ix_jobq;
void hwtr_cs_writer_jobs(struct hwtr_cs_writer *w, struct ix_jobq *q);
/*
 * The calls still open, for the symbol copy made as the rows come
 * (colsym.c): @fn(@arg, @id, @r) fills @r's id, thread, parent, depth,
 * symbol, func_ip and call_ip (and their bits of nul) of call @id, still
 * open, and returns 1 when they are those its row will have; else 0 (not
 * begun, or its symbol may change).  Without it, or when the calls do not
 * allow it (hwtr_cs_sym_stream_put()), the copy is made from the pages at
 * the end.
 */
typedef int hwtr_cs_open_fn(void *arg, int64_t id, struct hwtr_cs_row *r);
void hwtr_cs_writer_open_calls(struct hwtr_cs_writer *w, hwtr_cs_open_fn *fn,
    void *arg);
/* After finish: 1 when the symbol copy was made as the rows came. */
int hwtr_cs_writer_streamed(const struct hwtr_cs_writer *w);
/* Rows of thread @thread follow, ids from @id_base (the thread's first). */
int hwtr_cs_writer_thread(struct hwtr_cs_writer *w, int64_t thread,
    int64_t id_base);
/* One row of the current thread, in any order of ids. */
int hwtr_cs_writer_put(struct hwtr_cs_writer *w, const struct hwtr_cs_row *r);
/*
 * The same in place: hwtr_cs_writer_slot() gives where row @id goes,
 * the caller fills all of its columns (id @id) and nul, then
 * hwtr_cs_writer_commit() takes it as hwtr_cs_writer_put() would (0 or
 * -1), with no copy of the row on the way.
 */
struct hwtr_cs_row *hwtr_cs_writer_slot(struct hwtr_cs_writer *w,
    int64_t id);
int hwtr_cs_writer_commit(struct hwtr_cs_writer *w);
/* Write what is left and the symbol index. */
int hwtr_cs_writer_finish(struct hwtr_cs_writer *w);
const char *hwtr_cs_writer_error(const struct hwtr_cs_writer *w);
void hwtr_cs_writer_close(struct hwtr_cs_writer *w);

/*
 * colsym.c: the symbol copy (calls_bysym) of every page of calls_pages,
 * made once they are all written, pages decoded and encoded by jobs on
 * @jq (ix_jobs.h; NULL: here).  0, or -1 with what failed in @err.
 */
int hwtr_cs_sym_build(struct sqlite3 *db, struct ix_jobq *jq, char *err,
    size_t errlen);

/*
 * colsym.c: the same symbol copy and call paths made as the rows come,
 * in any order (exit order): rows are taken in id order, a call still
 * open (@fn, as hwtr_cs_writer_open_calls()) standing for its row until
 * it comes.  hwtr_cs_sym_stream_put() and _thread() (rows of a thread
 * whose ids start at @id_base follow): 0, or -1 with what failed in @err;
 * when the calls come in a way the stream cannot follow within its
 * memory, it stops and _finish() makes the copy as hwtr_cs_sym_build()
 * does (0, or -1).
 */
struct hwtr_cs_sym_stream;
int hwtr_cs_sym_stream_new(struct sqlite3 *db, struct ix_jobq *jq,
    hwtr_cs_open_fn *fn, void *arg, char *err, size_t errlen,
    struct hwtr_cs_sym_stream **sp);
int hwtr_cs_sym_stream_thread(struct hwtr_cs_sym_stream *s, int64_t id_base);
int hwtr_cs_sym_stream_put(struct hwtr_cs_sym_stream *s,
    const struct hwtr_cs_row *r);
int hwtr_cs_sym_stream_finish(struct hwtr_cs_sym_stream *s);
/* Whether the stream gave up (the copy made at the end; for tests). */
int hwtr_cs_sym_stream_fell_back(const struct hwtr_cs_sym_stream *s);
void hwtr_cs_sym_stream_free(struct hwtr_cs_sym_stream *s);

/*
 * colpath.c: the call paths (call_paths, hwtrace-db(5)) of the calls
 * given in id order, made by hwtr_cs_sym_build() as it reads them.
 * hwtr_cs_paths_add(): 0, or -1 (out of memory); hwtr_cs_paths_write():
 * the rows into @db's call_paths (none when there were too many paths),
 * 0, or -1 with what failed in @err.
 */
struct hwtr_cs_paths;
int hwtr_cs_paths_new(struct hwtr_cs_paths **pp);
int hwtr_cs_paths_add(struct hwtr_cs_paths *p, const struct hwtr_cs_row *r);
/*
 * hwtr_cs_paths_add() in two steps, for a call still open when it is
 * met: its path from @r's key columns (id, thread, parent, depth, symbol,
 * func_ip, call_ip), *@nodep set for hwtr_cs_paths_sum() (0: none), 0 or
 * -1 (out of memory); then its sums, once its row is final.
 */
int hwtr_cs_paths_key(struct hwtr_cs_paths *p, const struct hwtr_cs_row *r,
    size_t *nodep);
void hwtr_cs_paths_sum(struct hwtr_cs_paths *p, size_t node,
    const struct hwtr_cs_row *r);
int hwtr_cs_paths_write(struct hwtr_cs_paths *p, struct sqlite3 *db,
    char *err, size_t errlen);
void hwtr_cs_paths_free(struct hwtr_cs_paths *p);

/*
 * calls_write.c: the stitcher's call number @idx of thread @thread (ids
 * from @id_base) into @w; @symbol 0 when none, @tc NULL without a time
 * conversion.  0 or -HWTR_E_*.
 */
struct ix_call;
struct hwtr_timeconv;
int ix_calls_put(struct hwtr_cs_writer *w, int64_t thread, int64_t id_base,
    int64_t idx, const struct ix_call *c, int64_t symbol,
    const struct hwtr_timeconv *tc);

#endif /* !HWTR_COLSTORE_H */
