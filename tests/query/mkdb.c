/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * mkdb: make hwtrace databases for the query tests and benchmarks, with the
 * indexer's own schema text (indexer/schema.sql.h, hwtrace-db(5)).
 *
 *   mkdb DB SQLFILE     the schema, then the statements of SQLFILE (a
 *                       hand-written fixture whose every row is known;
 *                       its rows of lines go into line_pages, packed)
 *   mkdb -s N DB        a synthetic execution history of at least N
 *                       executed blocks in thread 1 (for make bench)
 *
 * The synthetic program: main calls w0..w63 in turn, forever; wJ runs its
 * entry block, its loop block 1 to 7 times, calls w(J+1) when J is a
 * multiple of 8, and returns.  Every derived table (calls, block_counts,
 * branches, timestamps, threads) is computed from that walk, so that the
 * database is consistent the way an indexed one is.
 */

#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwtrace.h"
#include "hwtr_ix_sqlite.h"
#include "../../indexer/schema.sql.h"
#include "../../indexer/colstore.h"
#include "../../indexer/linestore.h"

#define NF	64		/* worker functions */
#define BASE	0x401000LL
#define CHUNK	HWTR_DB_CHUNK_BLOCKS
#define STR_(x)	#x
#define STR(x)	STR_(x)

static sqlite3 *db;

static void
die(const char *what)
{
	fprintf(stderr, "mkdb: %s: %s\n", what, db ? sqlite3_errmsg(db) : "");
	exit(1);
}

static void
exec(const char *sql)
{
	char *err = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
		fprintf(stderr, "mkdb: %s\n", err);
		exit(1);
	}
}

static sqlite3_stmt *
prep(const char *sql)
{
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		die(sql);
	return (st);
}

static void
step(sqlite3_stmt *st)
{
	if (sqlite3_step(st) != SQLITE_DONE)
		die("insert");
	sqlite3_reset(st);
}

/* --- the synthetic walk ---------------------------------------------------- */

/* Static blocks: per worker E (4 insns), L (3), C (2), R (2); main M0..M2. */
enum { BE, BL, BC, BR };
#define WB(f, k)	((f) * 4 + (k))
#define M0		(NF * 4)
#define M1		(NF * 4 + 1)
#define M2		(NF * 4 + 2)
#define NBLK		(NF * 4 + 3)

static const int ninsns[4] = { 4, 3, 2, 2 };

struct walk {
	int64_t		seq, insn, target;
	int64_t		prev;		/* previous block in the chunk */
	int64_t		last;		/* previous block executed */
	uint8_t		data[CHUNK * 10];
	int		dlen, nblk;
	int64_t		cseq, cinsn;
	int64_t		count[NBLK];
	sqlite3_stmt	*chunk, *ts, *br;
	struct hwtr_cs_writer *csw;	/* calls, as hwtrace index writes them */
	int64_t		ncalls, maxdepth;
	/* Aggregated branches: from -> to counts (sparse, tiny). */
	int64_t		bfrom[4096], bto[4096], bcnt[4096];
	int		nbr;
};

static int64_t
blk_ip(int64_t b)
{
	if (b >= M0)
		return (BASE + NF * 64 + (b - M0) * 16);
	return (BASE + (b / 4) * 64 + (b % 4) * 16);
}

static int
blk_ninsns(int64_t b)
{
	return (b >= M0 ? 3 : ninsns[b % 4]);
}

static void
flush_chunk(struct walk *w)
{
	if (w->nblk == 0)
		return;
	sqlite3_bind_int64(w->chunk, 1, 1);
	sqlite3_bind_int64(w->chunk, 2, w->cseq);
	sqlite3_bind_int64(w->chunk, 3, w->nblk);
	sqlite3_bind_int64(w->chunk, 4, w->cinsn);
	sqlite3_bind_int64(w->chunk, 5, w->insn - w->cinsn);
	sqlite3_bind_int64(w->chunk, 6, 1000 + w->cseq * 10);
	sqlite3_bind_blob(w->chunk, 7, w->data, w->dlen, SQLITE_STATIC);
	step(w->chunk);
	w->nblk = 0;
	w->dlen = 0;
	w->prev = -1;
}

static void
branch(struct walk *w, int64_t from, int64_t to)
{
	int i;

	for (i = 0; i < w->nbr; i++)
		if (w->bfrom[i] == from && w->bto[i] == to) {
			w->bcnt[i]++;
			return;
		}
	w->bfrom[w->nbr] = from;
	w->bto[w->nbr] = to;
	w->bcnt[w->nbr++] = 1;
}

static void
emit(struct walk *w, int64_t b)
{
	int64_t d;
	uint64_t z;

	if (w->nblk == 0) {
		w->cseq = w->seq;
		w->cinsn = w->insn;
	}
	if (w->nblk == 0 || w->seq % 64 == 0) {
		sqlite3_bind_int64(w->ts, 1, 1);
		sqlite3_bind_int64(w->ts, 2, w->seq);
		sqlite3_bind_int64(w->ts, 3, w->insn);
		sqlite3_bind_int64(w->ts, 4, 1000 + w->seq * 10);
		sqlite3_bind_int64(w->ts, 5,
		    1700000000000000000LL + 1000 + w->seq * 10);
		step(w->ts);
	}
	d = b - (w->prev + 1);
	z = d >= 0 ? (uint64_t)d * 2 : (uint64_t)(-d) * 2 - 1;
	do {
		w->data[w->dlen++] = (uint8_t)((z & 0x7f) | (z > 0x7f ?
		    0x80 : 0));
		z >>= 7;
	} while (z != 0);
	if (w->last >= 0)
		branch(w, w->last, b);
	w->last = b;
	w->prev = b;
	w->count[b]++;
	w->seq++;
	w->insn += blk_ninsns(b);
	if (++w->nblk == CHUNK)
		flush_chunk(w);
}

/*
 * A call that ends at the walk's position, into the column store (its
 * parent NULL when @parent is 0, symbols: main 1, w0 3; @sub the
 * instructions of its callees).
 */
static void
put_call(struct walk *w, int64_t id, int64_t parent, int64_t depth,
    int64_t symbol, int64_t func_ip, int64_t call_ip, int64_t s0, int64_t i0,
    int64_t sub)
{
	struct hwtr_cs_row r;

	memset(&r, 0, sizeof(r));
	r.v[CS_ID] = id;
	r.v[CS_THREAD] = 1;
	if (parent != 0)
		r.v[CS_PARENT] = parent;
	else
		r.nul |= 1u << CS_PARENT;
	r.v[CS_DEPTH] = depth;
	r.v[CS_SYMBOL] = symbol;
	r.v[CS_FUNC_IP] = func_ip;
	if (call_ip != 0)
		r.v[CS_CALL_IP] = call_ip;
	else
		r.nul |= 1u << CS_CALL_IP;
	r.v[CS_ENTRY_KIND] = hwtr_cs_kind(hwtr_cs_entry_kinds, "call");
	r.v[CS_EXIT_KIND] = hwtr_cs_kind(hwtr_cs_exit_kinds, "return");
	r.v[CS_ENTRY_SEQ] = s0;
	r.v[CS_EXIT_SEQ] = w->seq;
	r.v[CS_ENTRY_INSN] = i0;
	r.v[CS_EXIT_INSN] = w->insn;
	r.v[CS_ENTRY_TSC] = 1000 + s0 * 10;
	r.v[CS_EXIT_TSC] = 1000 + w->seq * 10;
	r.v[CS_ENTRY_NS] = 1700000000000000000LL + 1000 + s0 * 10;
	r.v[CS_EXIT_NS] = 1700000000000000000LL + 1000 + w->seq * 10;
	r.v[CS_INSNS] = w->insn - i0;
	r.v[CS_SELF_INSNS] = w->insn - i0 - sub;
	r.v[CS_BLOCKS] = w->seq - s0;
	if (hwtr_cs_writer_put(w->csw, &r) < 0) {
		fprintf(stderr, "mkdb: %s\n", hwtr_cs_writer_error(w->csw));
		exit(1);
	}
}

/* Invoke worker @f at @depth under call @parent; returns the call id. */
static void
invoke(struct walk *w, int f, int64_t parent, int depth, int64_t call_ip,
    int64_t *insnsp)
{
	int64_t id = ++w->ncalls, s0 = w->seq, i0 = w->insn, sub = 0, r, k;

	if (depth > w->maxdepth)
		w->maxdepth = depth;
	emit(w, WB(f, BE));
	r = 1 + (id % 7);
	for (k = 0; k < r; k++)
		emit(w, WB(f, BL));
	if (f % 8 == 0 && f + 1 < NF) {
		emit(w, WB(f, BC));
		invoke(w, f + 1, id, depth + 1, blk_ip(WB(f, BC)) + 4, &sub);
	}
	emit(w, WB(f, BR));
	put_call(w, id, parent, depth, 3 + f, blk_ip(WB(f, BE)), call_ip, s0,
	    i0, sub);
	*insnsp += w->insn - i0;
}

static const char *
class_of(int64_t b)
{
	static const char *const c[4] = { "cond", "cond", "call", "return" };

	if (b == M0 || b == M1)
		return ("call");
	if (b == M2)
		return ("return");
	return (c[b % 4]);
}

static void
synth(int64_t target)
{
	struct walk *w;
	sqlite3_stmt *st;
	int64_t b, main_id, sub = 0, k;
	uint8_t code[64], lens[16];
	char name[32];
	int i, f;

	if ((w = calloc(1, sizeof(*w))) == NULL)
		exit(1);
	w->target = target;
	w->prev = -1;
	w->last = -1;
	exec("BEGIN");
	exec("INSERT INTO meta VALUES ('schema_version', '1'), "
	    "('hwtrace_version', '" HWTRACE_VERSION "'), "
	    "('capture_source', 'synthetic'), ('argv', 'synth'), "
	    "('archive_complete', '1'), "
	    "('chunk_blocks', '" STR(HWTR_DB_CHUNK_BLOCKS) "'), "
	    "('exec_encoding', 'delta-zigzag-varint');"
	    "INSERT INTO streams VALUES (1, 'tid 1000', 'intel-pt', 1000, "
	    "1000, NULL, 0, 0, 0, 0, 'ok');"
	    "INSERT INTO processes VALUES (1000, 1, '/synth', 'synth', NULL, "
	    "NULL, 'code', 0);"
	    "INSERT INTO images VALUES (1, 'bid-5e', '/synth', 'file', '5e', "
	    "65536, NULL, 1, 1, 1, 1);"
	    "INSERT INTO files VALUES (1, '/synth.c');"
	    "INSERT INTO symbols VALUES (1, 1, 'main', 0x402000, 48, 'func', "
	    "'global', 'symtab', NULL);"
	    "INSERT INTO symbols VALUES (2, 1, 'mainly', 0x403000, 4, 'func', "
	    "'global', 'symtab', NULL);");
	st = prep("INSERT INTO symbols VALUES (?1, 1, ?2, ?3, 64, 'func', "
	    "'global', 'symtab', NULL)");
	for (f = 0; f < NF; f++) {
		snprintf(name, sizeof(name), "w%d", f);
		sqlite3_bind_int64(st, 1, 3 + f);
		sqlite3_bind_text(st, 2, name, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 3, blk_ip(WB(f, BE)));
		step(st);
	}
	sqlite3_finalize(st);
	/* Each row covers its 16-byte block (end_addr: hwtrace-db(5)). */
	st = prep("INSERT INTO lines VALUES (1, ?1, 1, ?2, 0, 1, ?1 + 16)");
	for (b = 0; b < NBLK; b++) {
		sqlite3_bind_int64(st, 1, blk_ip(b));
		sqlite3_bind_int64(st, 2, 10 + b);
		step(st);
	}
	sqlite3_finalize(st);

	w->chunk = prep("INSERT INTO exec_chunks VALUES (?1, ?2, ?3, ?4, ?5, "
	    "?6, ?7)");
	w->ts = prep("INSERT INTO timestamps VALUES (?1, ?2, ?3, ?4, ?5)");
	if (hwtr_cs_writer_open(db, &w->csw) < 0 ||
	    hwtr_cs_writer_thread(w->csw, 1, 1) < 0) {
		fprintf(stderr, "mkdb: %s\n", w->csw != NULL ?
		    hwtr_cs_writer_error(w->csw) : "out of memory");
		exit(1);
	}
	/* main: a root call that holds everything. */
	main_id = ++w->ncalls;
	emit(w, M0);
	invoke(w, 0, main_id, 1, blk_ip(M0) + 12, &sub);
	for (k = 1; w->seq < target; k++) {
		emit(w, M1);
		invoke(w, (int)(k % NF), main_id, 1, blk_ip(M1) + 12, &sub);
	}
	emit(w, M2);
	flush_chunk(w);
	put_call(w, main_id, 0, 0, 1, blk_ip(M0), 0, 0, 0, sub);
	if (hwtr_cs_writer_finish(w->csw) < 0) {
		fprintf(stderr, "mkdb: %s\n", hwtr_cs_writer_error(w->csw));
		exit(1);
	}
	hwtr_cs_writer_close(w->csw);

	/* Static blocks: 4-byte NOPs, so that disassembly has bytes. */
	st = prep("INSERT INTO blocks VALUES (?1, ?2, ?3, ?4, ?5, 64, ?6, 1, "
	    "?2, ?7, ?8, 1, ?9, ?10, ?11, ?12)");
	for (b = 0; b < NBLK; b++) {
		int n = blk_ninsns(b);

		for (i = 0; i < n; i++) {
			memcpy(code + 4 * i, "\x0f\x1f\x40\x00", 4);
			lens[i] = 4;
		}
		sqlite3_bind_int64(st, 1, b);
		sqlite3_bind_int64(st, 2, blk_ip(b));
		sqlite3_bind_int64(st, 3, blk_ip(b) + 4 * (n - 1));
		sqlite3_bind_int64(st, 4, 4 * n);
		sqlite3_bind_int64(st, 5, n);
		sqlite3_bind_text(st, 6, class_of(b), -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 7, b >= M0 ? 1 : 3 + b / 4);
		sqlite3_bind_int64(st, 8, b >= M0 ? (b - M0) * 16 :
		    (b % 4) * 16);
		sqlite3_bind_int64(st, 9, 10 + b);
		sqlite3_bind_int64(st, 10, w->count[b]);
		sqlite3_bind_blob(st, 11, lens, n, SQLITE_TRANSIENT);
		sqlite3_bind_blob(st, 12, code, 4 * n, SQLITE_TRANSIENT);
		step(st);
	}
	sqlite3_finalize(st);
	st = prep("INSERT INTO block_counts VALUES (1, ?1, ?2)");
	for (b = 0; b < NBLK; b++) {
		if (w->count[b] == 0)
			continue;
		sqlite3_bind_int64(st, 1, b);
		sqlite3_bind_int64(st, 2, w->count[b]);
		step(st);
	}
	sqlite3_finalize(st);
	st = prep("INSERT INTO branches VALUES (1, ?1, ?2, ?3, ?4, ?5, ?6)");
	for (i = 0; i < w->nbr; i++) {
		b = w->bfrom[i];
		sqlite3_bind_int64(st, 1, b);
		sqlite3_bind_int64(st, 2, w->bto[i]);
		sqlite3_bind_int64(st, 3, blk_ip(b) + 4 * (blk_ninsns(b) - 1));
		sqlite3_bind_int64(st, 4, blk_ip(w->bto[i]));
		sqlite3_bind_text(st, 5, strcmp(class_of(b), "cond") == 0 ?
		    (w->bto[i] == b + 1 ? "cond-not-taken" : "cond-taken") :
		    class_of(b), -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 6, w->bcnt[i]);
		step(st);
	}
	sqlite3_finalize(st);
	st = prep("INSERT INTO threads VALUES (1, 1, 1000, 1000, 'synth', "
	    "NULL, NULL, 'code', 0, ?1, ?2, 1000, ?3, 1700000000000001000, "
	    "1700000000000000000 + ?3, 0, 0, ?4, ?5)");
	sqlite3_bind_int64(st, 1, w->seq);
	sqlite3_bind_int64(st, 2, w->insn);
	sqlite3_bind_int64(st, 3, 1000 + w->seq * 10);
	sqlite3_bind_int64(st, 4, w->ncalls);
	sqlite3_bind_int64(st, 5, w->maxdepth);
	step(st);
	sqlite3_finalize(st);
	sqlite3_finalize(w->chunk);
	sqlite3_finalize(w->ts);
	exec("COMMIT");
	fprintf(stderr, "mkdb: %lld blocks, %lld instructions, %lld calls\n",
	    (long long)w->seq, (long long)w->insn, (long long)w->ncalls);
	free(w);
}

static char *
slurp(const char *path)
{
	FILE *fp;
	char *buf;
	long n;

	if ((fp = fopen(path, "r")) == NULL) {
		perror(path);
		exit(1);
	}
	fseek(fp, 0, SEEK_END);
	n = ftell(fp);
	rewind(fp);
	if ((buf = malloc((size_t)n + 1)) == NULL ||
	    fread(buf, 1, (size_t)n, fp) != (size_t)n)
		exit(1);
	buf[n] = '\0';
	fclose(fp);
	return (buf);
}

/*
 * The rows the fixture or the synthetic walk wrote into "lines" (a TEMP
 * table of that name, which hides the read-only virtual table) into
 * line_pages, each image's rows in pages as hwtrace index writes them.
 */
static void
pack_lines(void)
{
	static struct hwtr_ls_row r[HWTR_LS_PAGE];
	sqlite3_stmt *q, *ins;
	int64_t img = 0, nimg;
	size_t n = 0, len;
	uint8_t *blob;
	int rc;

	q = prep("SELECT image, addr, file, line, col, is_stmt, end_addr FROM "
	    "temp.lines ORDER BY image, addr");
	ins = prep("INSERT INTO main.line_pages VALUES (?1, ?2, ?3, ?4, ?5)");
	for (;;) {
		rc = sqlite3_step(q);
		if (rc != SQLITE_ROW && rc != SQLITE_DONE)
			die("temp.lines");
		nimg = rc == SQLITE_ROW ? sqlite3_column_int64(q, 0) : 0;
		if (n > 0 && (rc == SQLITE_DONE || nimg != img ||
		    n == HWTR_LS_PAGE)) {
			if (hwtr_ls_encode(r, n, &blob, &len) < 0)
				die("encode lines");
			sqlite3_bind_int64(ins, 1, img);
			sqlite3_bind_int64(ins, 2, r[0].addr);
			sqlite3_bind_int64(ins, 3, r[n - 1].addr);
			sqlite3_bind_int64(ins, 4, (int64_t)n);
			sqlite3_bind_blob(ins, 5, blob, (int)len,
			    SQLITE_TRANSIENT);
			step(ins);
			free(blob);
			n = 0;
		}
		if (rc == SQLITE_DONE)
			break;
		img = nimg;
		r[n].addr = sqlite3_column_int64(q, 1);
		r[n].file = sqlite3_column_int64(q, 2);
		r[n].line = sqlite3_column_int64(q, 3);
		r[n].col = sqlite3_column_int64(q, 4);
		r[n].is_stmt = sqlite3_column_int64(q, 5);
		r[n].end = sqlite3_column_int64(q, 6);
		n++;
	}
	sqlite3_finalize(q);
	sqlite3_finalize(ins);
	exec("DROP TABLE temp.lines");
}

int
main(int argc, char **argv)
{
	const char *path;
	char *sql;
	long long n = 0;

	if (argc == 4 && strcmp(argv[1], "-s") == 0) {
		n = atoll(argv[2]);
		path = argv[3];
	} else if (argc == 3)
		path = argv[1];
	else {
		fprintf(stderr, "usage: mkdb DB SQLFILE | mkdb -s NBLOCKS DB\n");
		return (2);
	}
	remove(path);
	if (sqlite3_open(path, &db) != SQLITE_OK ||
	    hwtr_ix_sqlite_register(db) < 0)
		die(path);
	exec("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;");
	exec(HWTR_IX_SCHEMA_SQL);
	exec("CREATE TEMP TABLE lines (image INTEGER NOT NULL, addr INTEGER "
	    "NOT NULL, file INTEGER NOT NULL, line INTEGER NOT NULL, col "
	    "INTEGER NOT NULL, is_stmt INTEGER NOT NULL, end_addr INTEGER NOT "
	    "NULL, PRIMARY KEY (image, addr)) WITHOUT ROWID");
	if (n > 0)
		synth(n);
	else {
		sql = slurp(argv[2]);
		exec("BEGIN");
		exec(sql);
		exec("COMMIT");
		free(sql);
	}
	pack_lines();
	exec(HWTR_IX_INDEX_SQL);
	exec("ANALYZE");
	if (sqlite3_close(db) != SQLITE_OK)
		die("close");
	return (0);
}
