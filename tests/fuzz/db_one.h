/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * db_one.h: one input of the damaged-database fuzzer.  A user opens
 * databases other people made; whatever their rows hold, a verb answers or
 * fails with a message, and never crashes or hangs.
 *
 * The fixtures are databases hwtrace index wrote (fuzz-db.mk makes them),
 * loaded once into memory.  Each input's bytes are choices, not data:
 *
 *   byte 0	the fixture
 *   byte 1	the verb (fz_db_verb(): every verb of hwtrace-query(1) that
 *		reads a database, some with options, for values below
 *		FZ_DB_VBOUND (200), modulo FZ_DB_NVERB (40) as before
 *		report and diff came, so that the seeds keep their verbs;
 *		but from FZ_DB_XLO (120) to FZ_DB_XHI (159), a second list
 *		of query verbs with ranges, threads and depths together,
 *		modulo FZ_DB_NXVERB; from 200 up, hwtrace report and
 *		hwtrace diff with some of their options, modulo FZ_DB_NCMD)
 *   byte 2	the output format (table, CSV, TSV, JSON)
 *   byte 3	how many mutations follow (0 to FZ_DB_MAXMUT)
 *   then	each mutation in FZ_DB_MUTLEN bytes: kind, table, column, row
 *		(two bytes, big-endian), and three bytes of argument a, b, c
 *
 * A spent input reads as zeros.  Tables are the fixture's ordinary ones
 * in name order (the virtual tables' storage included: calls_pages,
 * calls_bysym, exec_chunks), columns in PRAGMA table_info order, a row
 * the row'th modulo the count in key order (rowid, or the primary key of
 * a WITHOUT ROWID table).  The kinds (modulo FZ_DB_NKIND):
 *
 *   set	the value becomes fz_db_vals[a] (-1, 0, 1, 2, the edges of
 *		int64 and int32, 65536, 4096, 1e8, NULL, 3.5, 'x', x'00', a
 *		long blob)
 *   add	the value plus fz_db_delta[a]
 *   add-all	the same, in every row of the table
 *   flip	bit (a, b, c) of a blob (24 bits) modulo its length
 *   zflip	the same inside the blob's first zstd frame (within its
 *		first FZ_DB_ZSCAN bytes): decompressed, flipped, compressed
 *		again (pages of calls and exec_chunks)
 *   trunc	the blob cut to (b, c) bytes modulo its length
 *   ztrunc	the same inside its first zstd frame
 *   delete	the row goes
 *
 * A mutation that does not apply (a blob kind on a value that is not
 * one, an empty table) is told as such and changes nothing.  The
 * mutations are made on an in-memory copy of the fixture
 * (sqlite3_deserialize(); the fixture's file is never written), whose
 * bytes are then written to a file of the harness's own temporary
 * directory (under /dev/shm when it exists: hwtr_q_open() takes a path
 * and refuses anything but a regular file, and SQLite resolves a
 * /proc/self/fd name of a memfd to one it cannot open), which the verb
 * reads through the library: hwtr_q_open(), hwtr_q_stream() into a sink
 * that counts the bytes, hwtr_q_close().  report writes its page to a
 * file of that directory (hwtr_q_report()); diff compares the mutated
 * copy with the unmutated fixture, written there too, as A and as B
 * (hwtr_q_diff(), its answer rendered in the input's format), as
 * cmd_report.c and cmd_diff.c call them.
 *
 * Every column of the fixture's tables may hold NULL in a hostile
 * database: the in-memory copy is set up once with NOT NULL taken out of
 * the tables' declarations (writable_schema), which hwtrace does not
 * check; everything else in the schema is what index wrote.
 *
 * The check: the verb answers, or fails with a non-empty message
 * (hwtr_q_errmsg(), of A for diff, or hwtr_q_open()'s).  A failure without one is
 * reported with the mutations; crashes and sanitizer reports stop the
 * process; a hang is caught by the caller (libFuzzer's -timeout, the
 * seed test's alarm()).  Each verb has FZ_DB_TIMEOUT_MS of CPU time
 * (hwtr_q_req.sql_timeout_ms), so a merely slow one ends with a message.
 *
 * Shared by the libFuzzer target (fuzz_db.c) and the seed-corpus test
 * (t_db_seeds.c), so that what the fuzzer checks is what the suite
 * replays.
 */

#ifndef HWTR_FUZZ_DB_ONE_H
#define HWTR_FUZZ_DB_ONE_H

#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>
#include <zstd.h>

#include "hwtrace.h"
#include "hwtr_elf.h"

#define FZ_DB_MAXFIX	4
#define FZ_DB_MAXMUT	6
#define FZ_DB_MUTLEN	8
#define FZ_DB_NKIND	8
#define FZ_DB_TIMEOUT_MS 3000
/* The largest page a zstd mutation decompresses. */
#define FZ_DB_ZMAX	(8 << 20)
/* The largest fixture read. */
#define FZ_DB_FIXMAX	(256 << 20)
/* How far into a blob its zstd frame may start. */
#define FZ_DB_ZSCAN	16

enum fz_db_kind { FZ_SET, FZ_ADD, FZ_ADDALL, FZ_FLIP, FZ_ZFLIP, FZ_TRUNC,
	FZ_ZTRUNC, FZ_DELETE };

static const char *const fz_db_kindname[FZ_DB_NKIND] = {
	"set", "add", "add-all", "flip", "zflip", "trunc", "ztrunc", "delete"
};

/* One ordinary table of a fixture. */
struct fz_db_table {
	char		*name;
	char		**col;
	int		ncol;
	char		*key;		/* "rowid", or the primary key */
	int		nkey;
	unsigned	touched;	/* changes made (seed test) */
};

struct fz_db_fix {
	char		*path;
	unsigned char	*img;		/* its bytes, NOT NULL taken out */
	size_t		len;
	struct fz_db_table *t;
	int		nt;
};

struct fuzz_db_base {
	struct fz_db_fix fix[FZ_DB_MAXFIX];
	int		nfix;
	char		dir[256];	/* a temporary directory */
	char		db[300], out[300];
	/* Each fixture's unmutated copy as a file (diff's other side). */
	char		fixdb[FZ_DB_MAXFIX][300];
	unsigned	applied[FZ_DB_NKIND];	/* by kind */
	uint64_t	bytes;		/* the last answer's */
	int		verbose;	/* mutations said before the verb */
	int		dry;		/* mutate, but run no verb */
};

/* The report of an input: what was done, as text. */
struct fz_db_log {
	char		buf[4096];
	size_t		len;
};

static inline void
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
fz_db_say(struct fz_db_log *l, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (l->len >= sizeof(l->buf) - 1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(l->buf + l->len, sizeof(l->buf) - l->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		l->len += (size_t)n < sizeof(l->buf) - l->len ? (size_t)n :
		    sizeof(l->buf) - l->len - 1;
}

/*
 * A connection on an in-memory copy of @len bytes at @img (the copy is
 * SQLite's, freed with the connection); NULL on failure.
 */
static inline sqlite3 *
fz_db_mem(const unsigned char *img, size_t len)
{
	unsigned char *copy;
	sqlite3 *db = NULL;

	if (sqlite3_open(":memory:", &db) != SQLITE_OK) {
		sqlite3_close(db);
		return (NULL);
	}
	copy = sqlite3_malloc64(len);
	if (copy == NULL) {
		sqlite3_close(db);
		return (NULL);
	}
	memcpy(copy, img, len);
	if (sqlite3_deserialize(db, "main", copy, (sqlite3_int64)len,
	    (sqlite3_int64)len, SQLITE_DESERIALIZE_FREEONCLOSE |
	    SQLITE_DESERIALIZE_RESIZEABLE) != SQLITE_OK) {
		sqlite3_close(db);
		return (NULL);
	}
	return (db);
}

/* Free what fz_db_fix_load() made of @f. */
static inline void
fz_db_fix_free(struct fz_db_fix *f)
{
	int i, j;

	for (i = 0; i < f->nt; i++) {
		for (j = 0; j < f->t[i].ncol; j++)
			free(f->t[i].col[j]);
		free(f->t[i].col);
		free(f->t[i].name);
		free(f->t[i].key);
	}
	free(f->t);
	free(f->img);
	free(f->path);
	memset(f, 0, sizeof(*f));
}

/* Table @t's columns and key, from PRAGMA table_info on @db. */
static inline int
fz_db_table_load(sqlite3 *db, struct fz_db_table *t)
{
	sqlite3_stmt *st = NULL;
	char *sql, *key = NULL, **cols, *k;
	int pk, rowid;

	sql = sqlite3_mprintf("SELECT rowid FROM \"%w\" LIMIT 0", t->name);
	rowid = sql != NULL && sqlite3_prepare_v2(db, sql, -1, &st, NULL) ==
	    SQLITE_OK;
	sqlite3_finalize(st);
	sqlite3_free(sql);
	sql = sqlite3_mprintf("SELECT name, pk FROM pragma_table_info(%Q) "
	    "ORDER BY cid", t->name);
	if (sql == NULL || sqlite3_prepare_v2(db, sql, -1, &st, NULL) !=
	    SQLITE_OK) {
		sqlite3_free(sql);
		return (-1);
	}
	sqlite3_free(sql);
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);

		pk = sqlite3_column_int(st, 1);
		if (name == NULL || (cols = realloc(t->col,
		    (size_t)(t->ncol + 1) * sizeof(*cols))) == NULL)
			break;
		t->col = cols;
		if ((t->col[t->ncol] = strdup(name)) == NULL)
			break;
		t->ncol++;
		if (!rowid && pk > 0) {
			/* The key's columns, in table order. */
			k = sqlite3_mprintf("%s%s\"%w\"", key ? key : "",
			    key ? ", " : "", name);
			sqlite3_free(key);
			key = k;
			t->nkey++;
		}
	}
	sqlite3_finalize(st);
	if (rowid) {
		t->key = strdup("rowid");
		t->nkey = 1;
	} else if (key != NULL)
		t->key = strdup(key);
	sqlite3_free(key);
	return (t->ncol > 0 && t->key != NULL ? 0 : -1);
}

/*
 * Load the database @path as fixture @f (zeroed): its bytes, with NOT
 * NULL taken out of its tables' declarations, and its ordinary tables.
 * 0, or -1 with @err saying why.
 */
static inline int
fz_db_fix_load(struct fz_db_fix *f, const char *path, char *err,
    size_t errlen)
{
	sqlite3_stmt *st = NULL;
	sqlite3_int64 n;
	unsigned char *img;
	char ebuf[256];
	void *buf;
	struct fz_db_table *t;
	sqlite3 *db;
	int rc = -1;

	ebuf[0] = '\0';
	if (hwtr_read_file(path, FZ_DB_FIXMAX, &buf, &f->len, ebuf,
	    sizeof(ebuf)) < 0) {
		/* Its message names the file, but for running out of memory. */
		snprintf(err, errlen, "the fixture: %s", ebuf[0] != '\0' ?
		    ebuf : "out of memory");
		fz_db_fix_free(f);
		return (-1);
	}
	f->img = buf;
	if (f->len < 100 || (f->path = strdup(path)) == NULL) {
		snprintf(err, errlen, "%.256s: cannot read the fixture", path);
		fz_db_fix_free(f);
		return (-1);
	}
	/* A database left in WAL mode is read as a rollback one here. */
	if (f->img[18] == 2 && f->img[19] == 2)
		f->img[18] = f->img[19] = 1;
	if ((db = fz_db_mem(f->img, f->len)) == NULL) {
		snprintf(err, errlen, "%.256s: cannot load it in memory", path);
		fz_db_fix_free(f);
		return (-1);
	}
	if (sqlite3_exec(db, "PRAGMA writable_schema = ON; UPDATE "
	    "sqlite_master SET sql = replace(sql, ' NOT NULL', '') WHERE "
	    "type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%'; "
	    "PRAGMA writable_schema = OFF", NULL, NULL, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%.256s: cannot relax its schema: %s",
		    path, sqlite3_errmsg(db));
		goto out;
	}
	if (sqlite3_prepare_v2(db, "SELECT name FROM sqlite_master WHERE "
	    "type = 'table' AND name NOT LIKE 'sqlite_%' AND sql NOT LIKE "
	    "'CREATE VIRTUAL%' ORDER BY name", -1, &st, NULL) != SQLITE_OK)
		goto dberr;
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);

		if (name == NULL || (t = realloc(f->t, (size_t)(f->nt + 1) *
		    sizeof(*t))) == NULL)
			goto dberr;
		f->t = t;
		t = &f->t[f->nt];
		memset(t, 0, sizeof(*t));
		f->nt++;
		if ((t->name = strdup(name)) == NULL ||
		    fz_db_table_load(db, t) < 0) {
			snprintf(err, errlen, "%.256s: cannot read table "
			    "'%.64s'", path, name);
			goto out;
		}
	}
	sqlite3_finalize(st);
	st = NULL;
	/* Read back what the relaxed schema made (a new connection's view). */
	img = sqlite3_serialize(db, "main", &n, 0);
	if (img == NULL || n <= 0)
		goto dberr;
	free(f->img);
	f->img = malloc((size_t)n);
	if (f->img != NULL)
		memcpy(f->img, img, (size_t)n);
	f->len = (size_t)n;
	sqlite3_free(img);
	if (f->img == NULL || f->nt == 0) {
		snprintf(err, errlen, "%.256s: no tables", path);
		goto out;
	}
	rc = 0;
	goto out;
dberr:
	snprintf(err, errlen, "%.256s: %s", path, sqlite3_errmsg(db));
out:
	sqlite3_finalize(st);
	sqlite3_close(db);
	if (rc < 0)
		fz_db_fix_free(f);
	return (rc);
}

/* Write @len bytes at @p to @path, replacing it; 0 or -1. */
static inline int
fz_db_write(const char *path, const void *p, size_t len)
{
	const char *c = p;
	ssize_t n;
	int fd;

	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600)) < 0)
		return (-1);
	while (len > 0) {
		if ((n = write(fd, c, len)) <= 0) {
			close(fd);
			return (-1);
		}
		c += n;
		len -= (size_t)n;
	}
	return (close(fd));
}

/* Remove the harness's files and directory; free @b's fixtures. */
static inline void
fuzz_db_base_free(struct fuzz_db_base *b)
{
	static const char *const ext[] = { "", "-journal", "-wal", "-shm",
	    ".tail" };
	char p[400];
	size_t i;
	int k;

	for (i = 0; i < sizeof(ext) / sizeof(ext[0]) && b->db[0]; i++) {
		snprintf(p, sizeof(p), "%s%s", b->db, ext[i]);
		unlink(p);
	}
	if (b->out[0] != '\0')
		unlink(b->out);
	for (k = 0; k < FZ_DB_MAXFIX; k++) {
		for (i = 0; i < sizeof(ext) / sizeof(ext[0]) &&
		    b->fixdb[k][0]; i++) {
			snprintf(p, sizeof(p), "%s%s", b->fixdb[k], ext[i]);
			unlink(p);
		}
	}
	if (b->dir[0] != '\0')
		rmdir(b->dir);
	for (k = 0; k < b->nfix; k++)
		fz_db_fix_free(&b->fix[k]);
	memset(b, 0, sizeof(*b));
}

/*
 * Fill @b from the @n database files @paths (at most FZ_DB_MAXFIX) and
 * make its temporary directory under /dev/shm, else $TMPDIR, else /tmp.
 * 0, or -1 with @err saying why.
 */
static inline int
fuzz_db_base_init(struct fuzz_db_base *b, const char *const *paths, int n,
    char *err, size_t errlen)
{
	const char *tmp = getenv("TMPDIR");
	struct stat st;
	int i;

	memset(b, 0, sizeof(*b));
	if (n < 1 || n > FZ_DB_MAXFIX) {
		snprintf(err, errlen, "%d fixtures: 1 to %d", n, FZ_DB_MAXFIX);
		return (-1);
	}
	for (i = 0; i < n; i++) {
		if (fz_db_fix_load(&b->fix[i], paths[i], err, errlen) < 0) {
			fuzz_db_base_free(b);
			return (-1);
		}
		b->nfix++;
	}
	if (stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) &&
	    access("/dev/shm", W_OK) == 0)
		tmp = "/dev/shm";
	snprintf(b->dir, sizeof(b->dir), "%.200s/fuzz_db.XXXXXX",
	    tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
	if (mkdtemp(b->dir) == NULL) {
		snprintf(err, errlen, "%.256s: cannot make a temporary "
		    "directory", b->dir);
		b->dir[0] = '\0';
		fuzz_db_base_free(b);
		return (-1);
	}
	snprintf(b->db, sizeof(b->db), "%.256s/m.db", b->dir);
	snprintf(b->out, sizeof(b->out), "%.256s/out", b->dir);
	/* Where diff's unmutated side is written (fuzz_db_one()). */
	for (i = 0; i < b->nfix; i++)
		snprintf(b->fixdb[i], sizeof(b->fixdb[i]), "%.256s/f%d.db",
		    b->dir, i);
	return (0);
}

/* The input's choices, one byte at a time; zeros when spent. */
struct fz_db_in {
	const uint8_t	*p;
	size_t		n, i;
};

static inline unsigned
fz_db_byte(struct fz_db_in *in)
{
	return (in->i < in->n ? in->p[in->i++] : 0);
}

/* The values of a set (fz.py's): NULL is the first not an integer. */
static const int64_t fz_db_ints[] = { -1, 0, 1, 2, INT64_MIN, INT64_MAX,
	2147483648LL, -2147483648LL, 65536, 4096, 100000000 };
#define FZ_DB_NINT	(sizeof(fz_db_ints) / sizeof(fz_db_ints[0]))
#define FZ_DB_NVAL	(FZ_DB_NINT + 5)
static const int64_t fz_db_delta[] = { 1, -1, 2, -2, 4096, 65536,
	2147483648LL, -2147483648LL, 100000000, INT64_MAX, INT64_MIN };
#define FZ_DB_NDELTA	(sizeof(fz_db_delta) / sizeof(fz_db_delta[0]))

/* Bind value @k of the set (modulo FZ_DB_NVAL) to @st's @i'th; its text. */
static inline void
fz_db_bind_val(sqlite3_stmt *st, int i, unsigned k, char *what, size_t len)
{
	static unsigned char big[1024];

	k %= FZ_DB_NVAL;
	if (k < FZ_DB_NINT) {
		sqlite3_bind_int64(st, i, fz_db_ints[k]);
		snprintf(what, len, "%" PRId64, fz_db_ints[k]);
		return;
	}
	switch (k - FZ_DB_NINT) {
	case 0:
		sqlite3_bind_null(st, i);
		snprintf(what, len, "NULL");
		break;
	case 1:
		sqlite3_bind_double(st, i, 3.5);
		snprintf(what, len, "3.5");
		break;
	case 2:
		sqlite3_bind_text(st, i, "x", 1, SQLITE_STATIC);
		snprintf(what, len, "'x'");
		break;
	case 3:
		sqlite3_bind_blob(st, i, "", 1, SQLITE_STATIC);
		snprintf(what, len, "x'00'");
		break;
	default:
		memset(big, 0xff, sizeof(big));
		sqlite3_bind_blob(st, i, big, sizeof(big), SQLITE_STATIC);
		snprintf(what, len, "x'ff' x 1024");
		break;
	}
}

/*
 * The key of row @row (modulo the count) of table @t into @key (nkey
 * values, sqlite3_value_dup'd); 1 when found, 0 when the table is empty,
 * -1 on failure.
 */
static inline int
fz_db_row(sqlite3 *db, const struct fz_db_table *t, unsigned row,
    sqlite3_value **key)
{
	sqlite3_stmt *st = NULL;
	int64_t count = 0;
	char *sql;
	int i, rc = -1;

	sql = sqlite3_mprintf("SELECT count(*) FROM \"%w\"", t->name);
	if (sql != NULL && sqlite3_prepare_v2(db, sql, -1, &st, NULL) ==
	    SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		count = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_free(sql);
	st = NULL;
	if (count <= 0)
		return (0);
	sql = sqlite3_mprintf("SELECT %s FROM \"%w\" ORDER BY %s LIMIT 1 "
	    "OFFSET %lld", t->key, t->name, t->key, (long long)(row % count));
	if (sql != NULL && sqlite3_prepare_v2(db, sql, -1, &st, NULL) ==
	    SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
		for (i = 0; i < t->nkey; i++)
			key[i] = sqlite3_value_dup(sqlite3_column_value(st, i));
		rc = 1;
	}
	sqlite3_finalize(st);
	sqlite3_free(sql);
	return (rc);
}

/* "(k1, k2) = (?, ?)" with the key's parameters from @first. */
static inline char *
fz_db_where(const struct fz_db_table *t, int first)
{
	sqlite3_str *s = sqlite3_str_new(NULL);
	int i;

	sqlite3_str_appendf(s, "(%s) = (", t->key);
	for (i = 0; i < t->nkey; i++)
		sqlite3_str_appendf(s, "%s?%d", i ? ", " : "", first + i);
	sqlite3_str_appendall(s, ")");
	return (sqlite3_str_finish(s));
}

/*
 * A blob's new bytes for a blob kind (flip, zflip, trunc, ztrunc) with
 * argument @arg: malloc'd in *@outp, *@outlen; 1 when made, 0 when it does
 * not apply (not a zstd frame, empty).
 */
static inline int
fz_db_blob(enum fz_db_kind kind, uint32_t arg, const unsigned char *in,
    size_t len, unsigned char **outp, size_t *outlen)
{
	unsigned long long dlen;
	unsigned char *d, *out;
	size_t flen, clen, bound, pre;

	*outp = NULL;
	if (len == 0)
		return (0);
	if (kind == FZ_FLIP || kind == FZ_TRUNC) {
		if ((out = malloc(len)) == NULL)
			return (0);
		memcpy(out, in, len);
		if (kind == FZ_FLIP) {
			uint64_t bit = arg % ((uint64_t)len * 8);

			out[bit / 8] ^= (unsigned char)(1u << (bit % 8));
			*outlen = len;
		} else
			*outlen = (arg & 0xffff) % len;
		*outp = out;
		return (1);
	}
	/*
	 * Inside the first zstd frame, which may follow a short header (a
	 * calls page's kind and raw length: colstore.c); the bytes before
	 * and after it stay.
	 */
	for (pre = 0; pre + 4 <= len && pre < FZ_DB_ZSCAN; pre++)
		if (memcmp(in + pre, "\x28\xb5\x2f\xfd", 4) == 0)
			break;
	if (pre + 4 > len || pre >= FZ_DB_ZSCAN)
		return (0);
	in += pre;
	len -= pre;
	flen = ZSTD_findFrameCompressedSize(in, len);
	if (ZSTD_isError(flen))
		return (0);
	dlen = ZSTD_getFrameContentSize(in, flen);
	if (dlen == ZSTD_CONTENTSIZE_UNKNOWN ||
	    dlen == ZSTD_CONTENTSIZE_ERROR || dlen == 0 || dlen > FZ_DB_ZMAX)
		return (0);
	if ((d = malloc((size_t)dlen)) == NULL)
		return (0);
	if (ZSTD_decompress(d, (size_t)dlen, in, flen) != dlen) {
		free(d);
		return (0);
	}
	if (kind == FZ_ZFLIP) {
		uint64_t bit = arg % (dlen * 8);

		d[bit / 8] ^= (unsigned char)(1u << (bit % 8));
	} else
		dlen = (arg & 0xffff) % dlen;
	bound = ZSTD_compressBound((size_t)dlen);
	if ((out = malloc(pre + bound + (len - flen) + 1)) == NULL) {
		free(d);
		return (0);
	}
	memcpy(out, in - pre, pre);
	clen = ZSTD_compress(out + pre, bound, d, (size_t)dlen, 1);
	free(d);
	if (ZSTD_isError(clen)) {
		free(out);
		return (0);
	}
	memcpy(out + pre + clen, in + flen, len - flen);
	*outp = out;
	*outlen = pre + clen + (len - flen);
	return (1);
}

/*
 * Apply the mutation whose FZ_DB_MUTLEN bytes @in reads to @db (fixture
 * @f), saying what in @l; counts in @b.
 */
static inline void
fz_db_mutate(struct fuzz_db_base *b, struct fz_db_fix *f, sqlite3 *db,
    struct fz_db_in *in, struct fz_db_log *l)
{
	enum fz_db_kind kind = (enum fz_db_kind)(fz_db_byte(in) % FZ_DB_NKIND);
	struct fz_db_table *t = &f->t[fz_db_byte(in) % (unsigned)f->nt];
	unsigned ci = fz_db_byte(in) % (unsigned)t->ncol;
	unsigned row = fz_db_byte(in) << 8;
	const char *c = t->col[ci];
	sqlite3_value *key[8] = { NULL };
	sqlite3_stmt *st = NULL;
	unsigned char *nb = NULL;
	char *sql = NULL, *where = NULL, what[64];
	uint32_t arg;
	size_t nlen = 0;
	int i, rc;

	row |= fz_db_byte(in);
	arg = fz_db_byte(in) << 16;
	arg |= fz_db_byte(in) << 8;
	arg |= fz_db_byte(in);
	fz_db_say(l, "  %s %s.%s row %u arg %u: ", fz_db_kindname[kind],
	    t->name, c, row, (unsigned)arg);
	if (t->nkey > (int)(sizeof(key) / sizeof(key[0]))) {
		fz_db_say(l, "key too wide, not applied\n");
		return;
	}
	if (kind == FZ_ADDALL) {
		sql = sqlite3_mprintf("UPDATE \"%w\" SET \"%w\" = \"%w\" + ?1",
		    t->name, c, c);
		goto run;
	}
	if ((rc = fz_db_row(db, t, row, key)) <= 0) {
		fz_db_say(l, "%s, not applied\n", rc == 0 ? "empty table" :
		    sqlite3_errmsg(db));
		return;
	}
	if ((where = fz_db_where(t, 2)) == NULL)
		goto out;
	if (kind == FZ_DELETE) {
		sql = sqlite3_mprintf("DELETE FROM \"%w\" WHERE %s", t->name,
		    where);
		goto run;
	}
	if (kind == FZ_SET || kind == FZ_ADD) {
		sql = kind == FZ_SET ? sqlite3_mprintf("UPDATE \"%w\" SET "
		    "\"%w\" = ?1 WHERE %s", t->name, c, where) :
		    sqlite3_mprintf("UPDATE \"%w\" SET \"%w\" = \"%w\" + ?1 "
		    "WHERE %s", t->name, c, c, where);
		goto run;
	}
	/* The blob kinds: read the value, make its new bytes. */
	sql = sqlite3_mprintf("SELECT \"%w\" FROM \"%w\" WHERE %s", c,
	    t->name, where);
	if (sql == NULL || sqlite3_prepare_v2(db, sql, -1, &st, NULL) !=
	    SQLITE_OK)
		goto dberr;
	for (i = 0; i < t->nkey; i++)
		sqlite3_bind_value(st, i + 2, key[i]);
	sqlite3_bind_null(st, 1);
	if (sqlite3_step(st) != SQLITE_ROW ||
	    sqlite3_column_type(st, 0) != SQLITE_BLOB ||
	    !fz_db_blob(kind, arg, sqlite3_column_blob(st, 0),
	    (size_t)sqlite3_column_bytes(st, 0), &nb, &nlen)) {
		fz_db_say(l, "%s, not applied\n",
		    sqlite3_column_type(st, 0) != SQLITE_BLOB ? "not a blob" :
		    "not a zstd frame");
		goto out;
	}
	sqlite3_finalize(st);
	st = NULL;
	sqlite3_free(sql);
	sql = sqlite3_mprintf("UPDATE \"%w\" SET \"%w\" = ?1 WHERE %s",
	    t->name, c, where);
run:
	if (sql == NULL || sqlite3_exec(db, "SAVEPOINT fz", NULL, NULL,
	    NULL) != SQLITE_OK || sqlite3_prepare_v2(db, sql, -1, &st, NULL) !=
	    SQLITE_OK)
		goto dberr;
	for (i = 0; i < t->nkey && key[0] != NULL; i++)
		sqlite3_bind_value(st, i + 2, key[i]);
	what[0] = '\0';
	if (kind == FZ_SET)
		fz_db_bind_val(st, 1, arg >> 16, what, sizeof(what));
	else if (kind == FZ_ADD || kind == FZ_ADDALL) {
		sqlite3_bind_int64(st, 1, fz_db_delta[(arg >> 16) %
		    FZ_DB_NDELTA]);
		snprintf(what, sizeof(what), "%+" PRId64,
		    fz_db_delta[(arg >> 16) % FZ_DB_NDELTA]);
	} else if (nb != NULL) {
		sqlite3_bind_blob(st, 1, nb, (int)nlen, SQLITE_STATIC);
		snprintf(what, sizeof(what), "%zu bytes", nlen);
	}
	rc = sqlite3_step(st);
	if (rc != SQLITE_DONE)
		goto dberr;
	fz_db_say(l, "%s%s%d row(s)\n", what, what[0] ? ", " : "",
	    sqlite3_changes(db));
	sqlite3_finalize(st);
	st = NULL;
	if (sqlite3_changes(db) > 0) {
		t->touched++;
		b->applied[kind]++;
	}
	goto out;
dberr:
	fz_db_say(l, "%s, not applied\n", sqlite3_errmsg(db));
out:
	sqlite3_finalize(st);
	sqlite3_exec(db, "RELEASE fz", NULL, NULL, NULL);
	sqlite3_free(sql);
	sqlite3_free(where);
	free(nb);
	for (i = 0; i < (int)(sizeof(key) / sizeof(key[0])); i++)
		sqlite3_value_free(key[i]);
}

/*
 * How byte 1 picks the verb (fz_db_verb()).  Values below FZ_DB_VBOUND
 * pick a verb of hwtrace query modulo FZ_DB_NVERB, as they did before
 * report and diff were added, so that every seed of corpus-db keeps its
 * verb (their byte 1 values are below 120, but one at 184); but those
 * from FZ_DB_XLO to FZ_DB_XHI (none of the seeds' before them) pick one
 * of the FZ_DB_NXVERB verbs of fz_db_xverb(), modulo FZ_DB_NXVERB; the
 * values from FZ_DB_VBOUND up pick one of the FZ_DB_NCMD runs of
 * hwtrace report and hwtrace diff, modulo FZ_DB_NCMD (56 values, 7
 * each).
 */
#define FZ_DB_NVERB	40
#define FZ_DB_XLO	120
#define FZ_DB_XHI	159
#define FZ_DB_NXVERB	16
#define FZ_DB_VBOUND	200
#define FZ_DB_NCMD	8

/*
 * Verb @k of hwtrace query's list into @req (its files written to @out);
 * its command line as hwtrace query would take it.
 */
static inline const char *
fz_db_qverb(unsigned k, struct hwtr_q_req *req, const char *out)
{
	static const struct {
		enum hwtr_q_verb verb;
		const char	*what;
	} v[FZ_DB_NVERB] = {
		{ HWTR_Q_SUMMARY, "summary" },
		{ HWTR_Q_THREADS, "threads" },
		{ HWTR_Q_LAST, "last -n 50" },
		{ HWTR_Q_LAST, "last --insns -n 20 --thread 2" },
		{ HWTR_Q_CALLS, "calls -n 200" },
		{ HWTR_Q_CALLS, "calls --thread 2 -n 100" },
		{ HWTR_Q_CALLS, "calls --depth 1 --from 100 --to 5000" },
		{ HWTR_Q_TREE, "tree --depth 3" },
		{ HWTR_Q_TREE, "tree --depth 1 --thread 1" },
		{ HWTR_Q_FUNC, "func main" },
		{ HWTR_Q_FUNC, "func measure" },
		{ HWTR_Q_FUNC, "func twice" },
		{ HWTR_Q_FUNC, "func '*u*'" },
		{ HWTR_Q_COVERAGE, "coverage" },
		{ HWTR_Q_COVERAGE, "coverage --lcov OUT --depth 1" },
		{ HWTR_Q_HOT, "hot" },
		{ HWTR_Q_HOT, "hot --by inline" },
		{ HWTR_Q_HOT, "hot --by line" },
		{ HWTR_Q_HOT, "hot --by image" },
		{ HWTR_Q_HOT, "hot --by block --from 10 --to 2000" },
		{ HWTR_Q_HOT, "hot --by edge" },
		{ HWTR_Q_BRANCHES, "branches" },
		{ HWTR_Q_BRANCHES, "branches --from main --to '*'" },
		{ HWTR_Q_TIMELINE, "timeline" },
		{ HWTR_Q_TIMELINE, "timeline --from 0 --to 3000" },
		{ HWTR_Q_INSNS, "insns -n 50" },
		{ HWTR_Q_INSNS, "insns --from 100 -n 50 --thread 2" },
		{ HWTR_Q_EXPORT, "export --folded OUT" },
		{ HWTR_Q_EXPORT,
		    "export --folded OUT --weight time --depth 2" },
		{ HWTR_Q_EXPORT, "export --perfetto OUT" },
		{ HWTR_Q_BT, "bt" },
		{ HWTR_Q_BT, "bt --at 1000" },
		{ HWTR_Q_ANNOTATE, "annotate main" },
		{ HWTR_Q_ANNOTATE, "annotate '*u*' --by line" },
		{ HWTR_Q_SQL, "sql" },
		{ HWTR_Q_SQL, "sql" },
		{ HWTR_Q_SQL, "sql" },
		{ HWTR_Q_SQL, "sql" },
		{ HWTR_Q_SQL, "sql" },
		{ HWTR_Q_SQL, "sql" },
	};
	/* The statements of the sql verbs, in order. */
	static const char *const sqlq[] = {
		"SELECT count(*), sum(insns), max(depth), min(entry_seq) "
		    "FROM calls",
		"SELECT * FROM exec_order WHERE thread = 1 LIMIT 200",
		"SELECT * FROM exec_insns WHERE thread = 1 AND insn BETWEEN 10 "
		    "AND 60",
		"SELECT c.*, s.name FROM calls c JOIN symbols s ON s.id = "
		    "c.symbol WHERE c.depth = 1 LIMIT 50",
		"SELECT * FROM call_times LIMIT 50",
		"SELECT * FROM calls WHERE thread = 2 ORDER BY entry_seq DESC "
		    "LIMIT 20",
	};

	k %= FZ_DB_NVERB;
	hwtr_q_req_init(req, v[k].verb);
	req->sql_timeout_ms = FZ_DB_TIMEOUT_MS;
	switch (k) {
	case 2: req->n = 50; break;
	case 3: req->insns = 1; req->n = 20; req->thread = 2; break;
	case 4: req->n = 200; break;
	case 5: req->thread = 2; req->n = 100; break;
	case 6: req->depth = 1; req->from = 100; req->to = 5000; break;
	case 7: req->depth = 3; break;
	case 8: req->depth = 1; req->thread = 1; break;
	case 9: req->pattern = "main"; break;
	case 10: req->pattern = "measure"; break;
	case 11: req->pattern = "twice"; break;
	case 12: req->pattern = "*u*"; break;
	case 14: req->lcov = out; req->depth = 1; break;
	case 16: req->by = "inline"; break;
	case 17: req->by = "line"; break;
	case 18: req->by = "image"; break;
	case 19: req->by = "block"; req->from = 10; req->to = 2000; break;
	case 20: req->by = "edge"; break;
	case 22: req->from_sym = "main"; req->to_sym = "*"; break;
	case 24: req->from = 0; req->to = 3000; break;
	case 25: req->count = 50; break;
	case 26: req->from = 100; req->count = 50; req->thread = 2; break;
	case 27: req->folded = out; break;
	case 28: req->folded = out; req->weight = "time"; req->depth = 2;
		break;
	case 29: req->perfetto = out; break;
	case 31: req->at = 1000; break;
	case 32: req->pattern = "main"; break;
	case 33: req->pattern = "*u*"; req->by = "line"; break;
	default:
		if (k >= FZ_DB_NVERB - sizeof(sqlq) / sizeof(sqlq[0]))
			req->sql = sqlq[k - (FZ_DB_NVERB - sizeof(sqlq) /
			    sizeof(sqlq[0]))];
		break;
	}
	return (v[k].what);
}


/*
 * The second list (byte 1 from FZ_DB_XLO to FZ_DB_XHI): verbs whose
 * options meet, each the way hwtrace query's command line sets them:
 * ranges in instructions and in time with --depth (counted from the
 * range's roots for tree and export --folded) and --thread, and the
 * range of verbs that count blocks.  Time bounds are nanoseconds.
 */
static inline const char *
fz_db_xverb(unsigned k, struct hwtr_q_req *req, const char *out)
{
	static const struct {
		enum hwtr_q_verb verb;
		const char	*what;
	} v[FZ_DB_NXVERB] = {
		{ HWTR_Q_TREE, "tree --from 2 --to 400 --depth 1" },
		{ HWTR_Q_TREE, "tree --from 50 --depth 0 --thread 2" },
		{ HWTR_Q_TREE, "tree --from 0us --to 50us --depth 2" },
		{ HWTR_Q_TREE, "tree --from 300 --to 9000 --depth 3" },
		{ HWTR_Q_EXPORT, "export --folded OUT --from 10 --to 5000 "
		    "--depth 1" },
		{ HWTR_Q_EXPORT, "export --folded OUT --weight time "
		    "--from 100 --to 4000" },
		{ HWTR_Q_EXPORT, "export --perfetto OUT --from 10 --to 4000" },
		{ HWTR_Q_CALLS, "calls --from 1us --to 1ms" },
		{ HWTR_Q_CALLS, "calls --from 40 --to 3000 --thread 2 "
		    "--depth 2" },
		{ HWTR_Q_HOT, "hot --from 100 --to 100000" },
		{ HWTR_Q_HOT, "hot --by line --thread 2 --from 0 --to 1000" },
		{ HWTR_Q_COVERAGE, "coverage --from 10 --to 3000" },
		{ HWTR_Q_ANNOTATE, "annotate '*' --from 5 --to 500" },
		{ HWTR_Q_TIMELINE, "timeline --from 0us --to 1ms --thread 2" },
		{ HWTR_Q_FUNC, "func main --thread 2" },
		{ HWTR_Q_BT, "bt --thread 2 --at 50" },
	};

	k %= FZ_DB_NXVERB;
	hwtr_q_req_init(req, v[k].verb);
	req->sql_timeout_ms = FZ_DB_TIMEOUT_MS;
	switch (k) {
	case 0: req->from = 2; req->to = 400; req->depth = 1; break;
	case 1: req->from = 50; req->depth = 0; req->thread = 2; break;
	case 2: req->t_from = 0; req->t_to = 50000; req->depth = 2; break;
	case 3: req->from = 300; req->to = 9000; req->depth = 3; break;
	case 4: req->folded = out; req->from = 10; req->to = 5000;
		req->depth = 1; break;
	case 5: req->folded = out; req->weight = "time"; req->from = 100;
		req->to = 4000; break;
	case 6: req->perfetto = out; req->from = 10; req->to = 4000; break;
	case 7: req->t_from = 1000; req->t_to = 1000000; break;
	case 8: req->from = 40; req->to = 3000; req->thread = 2;
		req->depth = 2; break;
	case 9: req->from = 100; req->to = 100000; break;
	case 10: req->by = "line"; req->thread = 2; req->from = 0;
		req->to = 1000; break;
	case 11: req->from = 10; req->to = 3000; break;
	case 12: req->pattern = "*"; req->from = 5; req->to = 500; break;
	case 13: req->t_from = 0; req->t_to = 1000000; req->thread = 2;
		break;
	case 14: req->pattern = "main"; req->thread = 2; break;
	default: req->thread = 2; req->at = 50; break;
	}
	return (v[k].what);
}

/* What fz_db_verb() chose: a query verb, a report or a diff. */
enum fz_db_cmd { FZ_CMD_QUERY, FZ_CMD_REPORT, FZ_CMD_DIFF };

struct fz_db_run {
	enum fz_db_cmd	cmd;
	struct hwtr_q_req req;		/* FZ_CMD_QUERY */
	struct hwtr_q_report_opts ro;	/* FZ_CMD_REPORT, to the harness's out */
	struct hwtr_q_diff_opts dopts;	/* FZ_CMD_DIFF */
	int		swap;		/* diff: the fixture is A, the copy B */
	const char	*what;		/* its command line */
};

/*
 * The run byte @k picks (the comment above FZ_DB_NVERB) into @r, files
 * written to @out.  report and diff are given their options as
 * cmd_report.c and cmd_diff.c set them from the command line; each
 * variant takes another path: report's defaults, and its smallest
 * bounds (one timeline column bucket per call, one thread, short
 * tables); diff's region answer with its default and unbounded lists,
 * and --first with its default and a long -n, the copy as A and as B.
 */
static inline void
fz_db_verb(unsigned k, struct fz_db_run *r, const char *out)
{
	static const char *const what[FZ_DB_NCMD] = {
		"report -o OUT",
		"report --columns 1 --depth 1 --threads 1 --top 1 -o OUT",
		"diff COPY FIXTURE",
		"diff FIXTURE COPY",
		"diff --list 0 COPY FIXTURE",
		"diff --list 1 FIXTURE COPY",
		"diff --first COPY FIXTURE",
		"diff --first -n 1000 FIXTURE COPY",
	};

	memset(r, 0, sizeof(*r));
	if (k >= FZ_DB_XLO && k <= FZ_DB_XHI) {
		r->cmd = FZ_CMD_QUERY;
		r->what = fz_db_xverb(k - FZ_DB_XLO, &r->req, out);
		return;
	}
	if (k < FZ_DB_VBOUND) {
		r->cmd = FZ_CMD_QUERY;
		r->what = fz_db_qverb(k, &r->req, out);
		return;
	}
	k = (k - FZ_DB_VBOUND) % FZ_DB_NCMD;
	r->what = what[k];
	if (k < 2) {
		r->cmd = FZ_CMD_REPORT;
		/* Each section's limit: the whole page within the alarms. */
		r->ro.timeout_ms = FZ_DB_TIMEOUT_MS / 3;
		if (k == 1) {
			r->ro.columns = 1;
			r->ro.depth = 1;
			r->ro.threads = 1;
			r->ro.top = 1;
		}
		return;
	}
	r->cmd = FZ_CMD_DIFF;
	r->swap = k % 2;
	r->dopts.timeout_ms = FZ_DB_TIMEOUT_MS;
	switch (k) {
	case 4: r->dopts.list = -1; break;
	case 5: r->dopts.list = 1; break;
	case 6: r->dopts.first = 1; break;
	case 7: r->dopts.first = 1; r->dopts.next = 1000; break;
	default: break;
	}
}

/* The answer's sink: counts its bytes, keeps none. */
static inline int
fz_db_sink(void *arg, const char *buf, size_t len)
{
	(void)buf;
	*(uint64_t *)arg += len;
	return (0);
}

/*
 * Run @r on the mutated copy (b->db) and, for diff, the unmutated
 * fixture @fix (a file of the harness); the answer's bytes in b->bytes.
 * As fuzz_db_one(): 0 when it answered or failed with a message, 1 when
 * it failed without one; what came said in @l.
 */
static inline int
fz_db_run(struct fuzz_db_base *b, const struct fz_db_run *r,
    enum hwtr_q_format fmt, const char *fix, struct fz_db_log *l)
{
	struct hwtr_q_opts qo;
	struct hwtr_q_res *res = NULL;
	struct hwtr_q *q = NULL, *q2 = NULL, *qa, *qb;
	const char *m;
	char errbuf[1024], *buf = NULL;
	size_t size = 0;
	int rc;

	memset(&qo, 0, sizeof(qo));
	qo.jobs = 1;
	errbuf[0] = '\0';
	b->bytes = 0;
	if (hwtr_q_open(&q, b->db, &qo, errbuf, sizeof(errbuf)) < 0 ||
	    (r->cmd == FZ_CMD_DIFF && hwtr_q_open(&q2, fix, &qo, errbuf,
	    sizeof(errbuf)) < 0)) {
		rc = errbuf[0] == '\0' ? 1 : 0;
		fz_db_say(l, "not opened: %s\n", rc ? "WITHOUT A MESSAGE" :
		    errbuf);
		goto out;
	}
	qa = r->swap ? q2 : q;
	qb = r->swap ? q : q2;
	switch (r->cmd) {
	case FZ_CMD_QUERY:
		rc = hwtr_q_stream(q, &r->req, fmt, 0, fz_db_sink, &b->bytes);
		break;
	case FZ_CMD_REPORT:
		rc = hwtr_q_report(q, &r->ro, b->out, &size);
		b->bytes = size;
		break;
	default:
		rc = hwtr_q_diff(qa, qb, &r->dopts, &res);
		if (rc >= 0) {
			/* As cmd_diff.c prints it. */
			if (hwtr_q_res_format(res, fmt, 0, &buf, &size) < 0) {
				fz_db_say(l, "answered, but its formatting "
				    "failed WITHOUT A MESSAGE\n");
				rc = 1;
				goto out;
			}
			b->bytes = size;
		}
		break;
	}
	if (rc < 0) {
		m = hwtr_q_errmsg(r->cmd == FZ_CMD_DIFF ? qa : q);
		rc = m == NULL || m[0] == '\0' ? 1 : 0;
		fz_db_say(l, "failed (%d bytes before): %s\n", (int)b->bytes,
		    rc ? "WITHOUT A MESSAGE" : m);
	} else {
		rc = 0;
		fz_db_say(l, "answered, %" PRIu64 " bytes\n", b->bytes);
	}
out:
	free(buf);
	hwtr_q_res_free(res);
	hwtr_q_close(q);
	hwtr_q_close(q2);
	return (rc);
}

/*
 * The check of one input (the file's comment): 0 when the verb answered
 * or failed with a message, 1 when it failed without one, -1 when the
 * harness failed; *@reportp (sqlite3_free) says what was done and what
 * came, always.
 */
static inline int
fuzz_db_one(struct fuzz_db_base *b, const uint8_t *data, size_t size,
    char **reportp)
{
	struct fz_db_in in = { data, size, 0 };
	struct fz_db_log *l;
	struct fz_db_run r;
	struct fz_db_fix *f;
	enum hwtr_q_format fmt;
	unsigned char *img;
	sqlite3_int64 n;
	sqlite3 *db;
	unsigned k, fk, vk, nmut;
	int rc;

	*reportp = NULL;
	if ((l = calloc(1, sizeof(*l))) == NULL)
		return (-1);
	fk = fz_db_byte(&in) % (unsigned)b->nfix;
	f = &b->fix[fk];
	vk = fz_db_byte(&in);
	fmt = (enum hwtr_q_format)(fz_db_byte(&in) % 4);
	nmut = fz_db_byte(&in) % (FZ_DB_MAXMUT + 1);
	fz_db_verb(vk, &r, b->out);
	fz_db_say(l, "fixture %s, %u mutation(s):\n", f->path, nmut);
	if ((db = fz_db_mem(f->img, f->len)) == NULL) {
		fz_db_say(l, "cannot load the fixture in memory\n");
		rc = -1;
		goto out;
	}
	for (k = 0; k < nmut; k++)
		fz_db_mutate(b, f, db, &in, l);
	img = sqlite3_serialize(db, "main", &n, SQLITE_SERIALIZE_NOCOPY);
	rc = img == NULL || n <= 0 ? -1 : fz_db_write(b->db, img, (size_t)n);
	sqlite3_close(db);
	if (rc < 0) {
		fz_db_say(l, "%s: cannot write the mutated copy\n", b->db);
		goto out;
	}
	/*
	 * diff's other side: the fixture's relaxed image, written afresh
	 * so that no earlier input's run can have changed it.
	 */
	if (r.cmd == FZ_CMD_DIFF && fz_db_write(b->fixdb[fk], f->img,
	    f->len) < 0) {
		fz_db_say(l, "%s: cannot write the fixture's copy\n",
		    b->fixdb[fk]);
		rc = -1;
		goto out;
	}
	if (r.cmd == FZ_CMD_QUERY)
		fz_db_say(l, "query %s %s%s%s%s (format %d): ", b->db, r.what,
		    r.req.sql ? " '" : "", r.req.sql ? r.req.sql : "",
		    r.req.sql ? "'" : "", (int)fmt);
	else
		fz_db_say(l, "%s, COPY %s, FIXTURE %s, OUT %s (format %d): ",
		    r.what, b->db, b->fixdb[fk], b->out, (int)fmt);
	if (b->dry) {
		fz_db_say(l, "not run\n");
		goto out;
	}
	/* Said now, a crash or a hang still has it told. */
	if (b->verbose)
		fprintf(stderr, "%s\n", l->buf);
	rc = fz_db_run(b, &r, fmt, b->fixdb[fk], l);
out:
	unlink(b->out);
	*reportp = sqlite3_mprintf("%s", l->buf);
	free(l);
	return (rc);
}

#endif
