/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * hwtrace export --postgres: load execution histories into the shared
 * schema of hwtrace-db(5)'s POSTGRESQL section.
 *
 * A run is known by the SHA-256 of its archive.  Its static data is merged
 * into tables keyed by image (an image key is its build-id, or the hash of
 * its bytes): the symbols, files and lines of an image are loaded by the
 * first run that has them, and blocks, keyed by image and link-time
 * address, are added when a run executes code no run executed before.
 * Every row streams from SQLite to the server as binary COPY; the static
 * rows go through temporary tables, so that the merge and the mapping of
 * the run's ids to the shared ones are done by the server in a few
 * statements.  The run's own rows (threads, block counts, branches, calls)
 * go into tables of their own, attached as the run's partitions.  All of
 * it is one transaction: a failure anywhere, or a connection lost,
 * leaves the database as it was.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "q_pg.h"

/* The run's tables, each partitioned by run. */
static const char *const ex_run_tables[] = {
	"threads", "block_counts", "branches", "calls", "func_counts"
};
#define EX_NRUNTABLES	(sizeof(ex_run_tables) / sizeof(ex_run_tables[0]))

/* One export: local (SQLite) ids to the shared ones (0: none). */
struct ex {
	struct hwtr_pg	*pg;
	struct hwtr_q	*q;
	int64_t		run;
	char		runs[24];	/* the run id as text */
	int64_t		*img, *sym, *blk;
	size_t		nimg, nsym, nblk;
};

int
hwtr_pg_export_begin(struct hwtr_pg *pg)
{
	int rc;

	if (pg->in_tx)
		return (pg_fail(pg, -HWTR_E_INVAL, "an export is already "
		    "open"));
	if ((rc = pg_cmd(pg, "cannot begin the export", "BEGIN", 0,
	    NULL)) < 0)
		return (rc);
	pg->in_tx = 1;
	if ((rc = pg_schema(pg, 1)) < 0)
		hwtr_pg_export_abort(pg);
	return (rc);
}

int
hwtr_pg_export_commit(struct hwtr_pg *pg)
{
	int rc;

	if (!pg->in_tx)
		return (pg_fail(pg, -HWTR_E_INVAL, "no export is open"));
	rc = pg_cmd(pg, "cannot commit the export", "COMMIT", 0, NULL);
	pg->in_tx = 0;
	return (rc);
}

/* One text value of the SQLite meta table, malloc'd, or NULL. */
static char *
ex_meta(struct hwtr_q *q, const char *key)
{
	sqlite3_stmt *st;
	char *v = NULL;

	if (sqlite3_prepare_v2(q->db, "SELECT value FROM meta WHERE key = ?1",
	    -1, &st, NULL) != SQLITE_OK)
		return (NULL);
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW &&
	    sqlite3_column_type(st, 0) != SQLITE_NULL)
		v = strdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return (v);
}

/* SHA-256 of the file @path in hex (65 bytes). */
static int
ex_sha256(const char *path, char hex[65])
{
	struct hwtr_sha256 s;
	uint8_t d[32];
	char *buf;
	ssize_t n;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return (-1);
	if ((buf = malloc(1 << 20)) == NULL) {
		close(fd);
		errno = ENOMEM;
		return (-1);
	}
	hwtr_sha256_init(&s);
	while ((n = read(fd, buf, 1 << 20)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			free(buf);
			close(fd);
			return (-1);
		}
		hwtr_sha256_update(&s, buf, (size_t)n);
	}
	free(buf);
	close(fd);
	hwtr_sha256_final(&s, d);
	hwtr_hex(hex, d, 32);
	hex[64] = '\0';
	return (0);
}

/* A map from local ids 0..max (SELECT max(id) ...) to shared ones. */
static int
ex_map_alloc(struct ex *ex, int64_t **mapp, size_t *np, const char *sql)
{
	sqlite3_stmt *st;
	int64_t max = -1;

	if (q_prepare(ex->q, &st, sql) < 0)
		return (pg_fail(ex->pg, -HWTR_E_DB, "%s",
		    hwtr_q_errmsg(ex->q)));
	if (sqlite3_step(st) == SQLITE_ROW &&
	    sqlite3_column_type(st, 0) != SQLITE_NULL)
		max = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (max < -1 || max > INT32_MAX)
		return (pg_fail(ex->pg, -HWTR_E_FORMAT, "'%s': an id out of "
		    "range (%" PRId64 ")", ex->q->dbpath, max));
	*np = (size_t)(max + 1);
	if ((*mapp = calloc(*np + 1, sizeof(**mapp))) == NULL)
		return (pg_fail(ex->pg, -HWTR_E_NOMEM, "out of memory"));
	return (0);
}

/* Fill @map from the rows (local id, shared id) of @sql. */
static int
ex_map_fill(struct ex *ex, int64_t *map, size_t n, const char *what,
    const char *sql)
{
	const char *p[1] = { ex->runs };
	PGresult *r;
	int64_t l;
	int i, nr;

	if ((r = pg_exec(ex->pg, what, sql, 1, p)) == NULL)
		return (-HWTR_E_DB);
	nr = PQntuples(r);
	for (i = 0; i < nr; i++) {
		l = strtoll(PQgetvalue(r, i, 0), NULL, 10);
		if (l >= 0 && (size_t)l < n)
			map[l] = strtoll(PQgetvalue(r, i, 1), NULL, 10);
	}
	PQclear(r);
	return (0);
}

static int64_t
ex_mapped(const int64_t *map, size_t n, sqlite3_stmt *st, int col)
{
	int64_t v;

	if (sqlite3_column_type(st, col) == SQLITE_NULL)
		return (0);
	v = sqlite3_column_int64(st, col);
	return (v >= 0 && (size_t)v < n ? map[v] : 0);
}

/*
 * Stream the rows of SQLite @sql into the server's @copy (a COPY ...
 * FROM STDIN (FORMAT binary)).  @sig gives each field: 'l' bigint, 't'
 * text, 'b' boolean, taken from the next column; 'I', 'S', 'B' a local
 * image, symbol or block id, written as the shared id (NULL when none);
 * 'r' the run id, which takes no column.
 */
static int
ex_copy(struct ex *ex, const char *what, const char *sql, const char *copy,
    const char *sig, int64_t *rowsp)
{
	struct pg_copy cp;
	sqlite3_stmt *st;
	const char *s;
	int64_t v;
	int col, nf = (int)strlen(sig), rc;

	if (q_prepare(ex->q, &st, sql) < 0)
		return (pg_fail(ex->pg, -HWTR_E_DB, "%s: %s", what,
		    hwtr_q_errmsg(ex->q)));
	if ((rc = pg_copy_begin(ex->pg, &cp, what, copy)) < 0) {
		sqlite3_finalize(st);
		free(cp.buf);
		return (rc);
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (pg_copy_row(&cp, nf) < 0)
			break;
		for (s = sig, col = 0; *s != '\0'; s++) {
			if (*s == 'r') {
				pg_copy_i8(&cp, ex->run);
				continue;
			}
			if (*s == 'I' || *s == 'S' || *s == 'B') {
				v = *s == 'I' ? ex_mapped(ex->img, ex->nimg, st,
				    col) : *s == 'S' ? ex_mapped(ex->sym,
				    ex->nsym, st, col) : ex_mapped(ex->blk,
				    ex->nblk, st, col);
				col++;
				if (v == 0)
					pg_copy_null(&cp);
				else
					pg_copy_i8(&cp, v);
				continue;
			}
			if (sqlite3_column_type(st, col) == SQLITE_NULL) {
				pg_copy_null(&cp);
				col++;
				continue;
			}
			switch (*s) {
			case 'l':
				pg_copy_i8(&cp, sqlite3_column_int64(st, col));
				break;
			case 'b':
				pg_copy_bool(&cp, sqlite3_column_int64(st,
				    col) != 0);
				break;
			default:
				pg_copy_bytes(&cp, sqlite3_column_text(st, col),
				    (size_t)sqlite3_column_bytes(st, col));
				break;
			}
			col++;
		}
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE && cp.err == 0)
		cp.err = pg_fail(ex->pg, -HWTR_E_DB, "%s: cannot read '%s': %s",
		    what, ex->q->dbpath, sqlite3_errmsg(ex->q->db));
	sqlite3_finalize(st);
	return (pg_copy_end(&cp, rowsp));
}

/*
 * The static rows of the images this run loads first, in this order: the
 * SELECT of each names the local ids of those images (%1$s) and, for the
 * files, the UNION that adds the call sites of inlines (%2$s); inlines
 * only where the database has them (inl).
 */
static const struct {
	const char	*what, *copy, *sig, *sel;
	int		inl;
} ex_static[] = {
	{ "cannot copy symbols", "COPY hwtrace.symbols (image, name, addr, "
	  "size, kind, bind, origin) FROM STDIN (FORMAT binary)", "Itllttt",
	  "SELECT image, name, addr, size, kind, bind, origin FROM symbols "
	  "WHERE image IN %1$s", 0 },
	{ "cannot copy files", "COPY hwtrace.files (image, id, path) FROM "
	  "STDIN (FORMAT binary)", "Ilt", "SELECT DISTINCT l.image, f.id, "
	  "f.path FROM (SELECT image, file FROM lines%2$s) l JOIN files f ON "
	  "f.id = l.file WHERE l.image IN %1$s", 0 },
	{ "cannot copy lines", "COPY hwtrace.lines (image, addr, file, line, "
	  "col, is_stmt, end_addr) FROM STDIN (FORMAT binary)", "Illllbl",
	  "SELECT image, addr, file, line, col, is_stmt, end_addr FROM lines "
	  "WHERE image IN %1$s", 0 },
	{ "cannot copy inlines", "COPY hwtrace.inlines (image, lo, hi, entry, "
	  "inst, depth, name, call_file, call_line, parent) FROM STDIN "
	  "(FORMAT binary)", "Illllltlll", "SELECT image, lo, hi, entry, "
	  "inst, depth, name, call_file, call_line, parent FROM inlines WHERE "
	  "image IN %1$s", 1 },
};

/*
 * ex_copy() of the SELECT @fmt makes (printf-like): the static rows of the
 * images loaded by this run (ex_static), whose list of ids it names.
 */
static int
ex_copyf(struct ex *ex, const char *what, const char *copy, const char *sig,
    const char *fmt, ...)
{
	va_list ap;
	char *sql;
	int rc;

	va_start(ap, fmt);
	rc = vasprintf(&sql, fmt, ap);
	va_end(ap);
	if (rc < 0)
		return (pg_fail(ex->pg, -HWTR_E_NOMEM, "out of memory"));
	rc = ex_copy(ex, what, sql, copy, sig, NULL);
	free(sql);
	return (rc);
}

/* "(1,2,3)" of the first column of a result; "(NULL)" when empty. */
static char *
ex_idlist(PGresult *r)
{
	struct q_str s = { 0 };
	int i, n = PQntuples(r);

	q_str_puts(&s, "(");
	for (i = 0; i < n; i++) {
		if (i > 0)
			q_str_puts(&s, ",");
		q_str_printf(&s, "%lld", strtoll(PQgetvalue(r, i, 0), NULL,
		    10));
	}
	q_str_puts(&s, n == 0 ? "NULL)" : ")");
	if (s.err) {
		free(s.p);
		return (NULL);
	}
	return (s.p);
}

/* Whether the database has the inlines table (an older one has not). */
static int
ex_has_inlines(struct ex *ex)
{
	int64_t n = 0;

	if (q_int(ex->q, &n, 0, "SELECT count(*) FROM sqlite_master WHERE "
	    "type = 'table' AND name = 'inlines'", NULL) < 0)
		return (0);
	return (n != 0);
}

/*
 * Images: merge by key, map the run's ids, and load the static data of
 * the images no run loaded before (a row lock on each, so that two
 * exports of the same new image do not both load it).
 */
static int
ex_images(struct ex *ex, struct hwtr_pg_run *run)
{
	PGresult *r;
	char *local = NULL, *shared = NULL, *sql = NULL;
	size_t k;
	int rc, inl;

	if ((rc = pg_cmd(ex->pg, "cannot create a temporary table",
	    "DROP TABLE IF EXISTS pg_temp.hwtr_images;"
	    "CREATE TEMP TABLE hwtr_images (lid bigint, key text, path text,"
	    " kind text, build_id text, size bigint, sha256 text,"
	    " present boolean, elf boolean) ON COMMIT DROP", 0, NULL)) < 0)
		return (rc);
	if ((rc = ex_copy(ex, "cannot copy images", "SELECT id, key, path, "
	    "kind, build_id, size, sha256, present, elf FROM images",
	    "COPY hwtr_images FROM STDIN (FORMAT binary)", "lttttltbb",
	    NULL)) < 0)
		return (rc);
	if ((rc = pg_cmd(ex->pg, "cannot add images", "INSERT INTO "
	    "hwtrace.images (key, path, kind, build_id, size, sha256, elf) "
	    "SELECT key, path, kind, build_id, size, sha256, elf FROM "
	    "hwtr_images ORDER BY key ON CONFLICT (key) DO NOTHING", 0,
	    NULL)) < 0)
		return (rc);
	if ((rc = ex_map_alloc(ex, &ex->img, &ex->nimg, "SELECT max(id) "
	    "FROM images")) < 0)
		return (rc);
	if ((rc = ex_map_fill(ex, ex->img, ex->nimg, "cannot map images",
	    "SELECT t.lid, i.id FROM hwtr_images t JOIN hwtrace.images i ON "
	    "i.key = t.key WHERE $1::bigint > 0")) < 0)
		return (rc);
	if ((r = pg_exec(ex->pg, "cannot lock images", "SELECT t.lid, i.id "
	    "FROM hwtr_images t JOIN hwtrace.images i ON i.key = t.key WHERE "
	    "t.present AND NOT i.loaded ORDER BY i.id FOR UPDATE OF i", 0,
	    NULL)) == NULL)
		return (-HWTR_E_DB);
	run->new_images = (uint64_t)PQntuples(r);
	if (run->new_images == 0) {
		PQclear(r);
		return (0);
	}
	local = ex_idlist(r);
	{
		/* The shared ids, from the second column. */
		struct q_str s = { 0 };
		int i;

		q_str_puts(&s, "(");
		for (i = 0; i < PQntuples(r); i++)
			q_str_printf(&s, "%s%s", i ? "," : "",
			    PQgetvalue(r, i, 1));
		q_str_puts(&s, ")");
		shared = s.err ? (free(s.p), NULL) : s.p;
	}
	PQclear(r);
	if (local == NULL || shared == NULL) {
		rc = pg_fail(ex->pg, -HWTR_E_NOMEM, "out of memory");
		goto out;
	}
	/* The files of the lines, and of the call sites of inlines. */
	inl = ex_has_inlines(ex);
	for (k = 0; k < HWTR_NELEM(ex_static); k++)
		if ((!ex_static[k].inl || inl) && (rc = ex_copyf(ex,
		    ex_static[k].what, ex_static[k].copy, ex_static[k].sig,
		    ex_static[k].sel, local, inl ? " UNION SELECT image, "
		    "call_file FROM inlines" : "")) < 0)
			goto out;
	if (asprintf(&sql, "UPDATE hwtrace.images SET loaded = true WHERE id "
	    "IN %s", shared) < 0) {
		sql = NULL;
		rc = pg_fail(ex->pg, -HWTR_E_NOMEM, "out of memory");
		goto out;
	}
	rc = pg_cmd(ex->pg, "cannot mark images loaded", sql, 0, NULL);
out:
	free(sql);
	free(local);
	free(shared);
	return (rc);
}

/* The shared ids of the symbols the run's blocks and calls name. */
static int
ex_symbols(struct ex *ex)
{
	int rc;

	if ((rc = pg_cmd(ex->pg, "cannot create a temporary table",
	    "DROP TABLE IF EXISTS pg_temp.hwtr_syms;"
	    "CREATE TEMP TABLE hwtr_syms (lid bigint, image bigint, name text,"
	    " addr bigint, origin text) ON COMMIT DROP", 0, NULL)) < 0)
		return (rc);
	if ((rc = ex_copy(ex, "cannot copy symbols", "SELECT id, image, name, "
	    "addr, origin FROM symbols WHERE id IN (SELECT symbol FROM blocks "
	    "UNION SELECT symbol FROM calls)", "COPY hwtr_syms FROM STDIN "
	    "(FORMAT binary)", "lItlt", NULL)) < 0)
		return (rc);
	if ((rc = pg_cmd(ex->pg, "cannot analyze", "ANALYZE hwtr_syms", 0,
	    NULL)) < 0)
		return (rc);
	if ((rc = ex_map_alloc(ex, &ex->sym, &ex->nsym, "SELECT max(id) FROM "
	    "symbols")) < 0)
		return (rc);
	return (ex_map_fill(ex, ex->sym, ex->nsym, "cannot map symbols",
	    "SELECT t.lid, min(s.id) FROM hwtr_syms t JOIN hwtrace.symbols s "
	    "ON s.image = t.image AND s.addr = t.addr AND s.name = t.name AND "
	    "s.origin IS NOT DISTINCT FROM t.origin WHERE $1::bigint > 0 "
	    "GROUP BY t.lid"));
}

/*
 * Blocks: a block of an image is the code at a link-time address of it,
 * the same in every run of that build; a block no image maps (JIT code, a
 * missing image) belongs to its run alone.
 */
static int
ex_blocks(struct ex *ex, struct hwtr_pg_run *run)
{
	const char *p[1] = { ex->runs };
	PGresult *r;
	int rc;

	if ((rc = pg_cmd(ex->pg, "cannot create a temporary table",
	    "DROP TABLE IF EXISTS pg_temp.hwtr_blocks;"
	    "CREATE TEMP TABLE hwtr_blocks (lid bigint, image bigint,"
	    " addr bigint, size bigint, ninsns bigint, mode bigint,"
	    " last_class text, symbol bigint, sym_offset bigint) ON COMMIT DROP",
	    0, NULL)) < 0)
		return (rc);
	if ((rc = ex_copy(ex, "cannot copy blocks", "SELECT id, CASE WHEN "
	    "image_addr IS NULL THEN NULL ELSE image END, coalesce(image_addr, "
	    "start_ip), size, ninsns, mode, last_class, symbol, sym_offset FROM "
	    "blocks", "COPY hwtr_blocks FROM STDIN (FORMAT binary)",
	    "lIlllltSl", NULL)) < 0)
		return (rc);
	if ((rc = pg_cmd(ex->pg, "cannot analyze", "ANALYZE hwtr_blocks", 0,
	    NULL)) < 0)
		return (rc);
	if ((r = pg_exec(ex->pg, "cannot add blocks", "INSERT INTO "
	    "hwtrace.blocks (image, run, addr, size, ninsns, mode, last_class, "
	    "symbol, sym_offset) SELECT image, CASE WHEN image IS NULL THEN "
	    "$1::bigint END, addr, size, ninsns, mode, last_class, symbol, "
	    "sym_offset FROM hwtr_blocks ORDER BY image, addr ON CONFLICT ON "
	    "CONSTRAINT blocks_static DO NOTHING", 1, p)) == NULL)
		return (-HWTR_E_DB);
	run->new_blocks = strtoull(PQcmdTuples(r), NULL, 10);
	PQclear(r);
	/*
	 * Blocks first exported by a run that lacked the image's symbols
	 * get their functions from the first run that has them.
	 */
	if ((rc = pg_cmd(ex->pg, "cannot name blocks", "UPDATE hwtrace.blocks "
	    "b SET symbol = t.symbol, sym_offset = t.sym_offset FROM "
	    "hwtr_blocks t WHERE b.image = t.image AND b.run IS NULL AND "
	    "b.addr = t.addr AND b.size = t.size AND b.mode = t.mode AND "
	    "b.symbol IS NULL AND t.symbol IS NOT NULL", 0, NULL)) < 0)
		return (rc);
	if ((rc = ex_map_alloc(ex, &ex->blk, &ex->nblk, "SELECT max(id) FROM "
	    "blocks")) < 0)
		return (rc);
	run->blocks = ex->nblk;
	return (ex_map_fill(ex, ex->blk, ex->nblk, "cannot map blocks",
	    "SELECT t.lid, b.id FROM hwtr_blocks t JOIN hwtrace.blocks b ON "
	    "b.image = t.image AND b.run IS NULL AND b.addr = t.addr AND "
	    "b.size = t.size AND b.mode = t.mode UNION ALL SELECT t.lid, b.id "
	    "FROM hwtr_blocks t JOIN hwtrace.blocks b ON b.image IS NULL AND "
	    "b.run = $1::bigint AND b.addr = t.addr AND b.size = t.size AND "
	    "b.mode = t.mode WHERE t.image IS NULL"));
}

/*
 * The run's own rows, each table into a new table that becomes the run's
 * partition when it is full: attaching takes a lock that lets readers
 * go on, where creating the partition at once would block every fleet
 * question until the export commits.
 */
static int
ex_run_rows(struct ex *ex, struct hwtr_pg_run *run)
{
	static const struct {
		const char *what, *sql, *sig;
	} t[] = {
		{ "cannot copy threads", "SELECT id, stream, pid, tid, name, "
		  "blocks, insns, calls, errors FROM threads", "rlllltllll" },
		{ "cannot copy block counts", "SELECT thread, block, count FROM "
		  "block_counts", "rlBl" },
		{ "cannot copy branches", "SELECT thread, from_block, to_block, "
		  "from_ip, to_ip, kind, count FROM branches", "rlBBlltl" },
		{ "cannot copy calls", "SELECT id, thread, parent, depth, "
		  "symbol, func_ip, call_ip, entry_kind, exit_kind, entry_seq, "
		  "exit_seq, entry_insn, exit_insn, entry_ns, exit_ns, insns, "
		  "self_insns, blocks FROM calls", "rllllSllttlllllllll" },
	};
	char sql[512];
	int64_t rows;
	size_t i;
	int rc;

	for (i = 0; i < EX_NRUNTABLES; i++) {
		snprintf(sql, sizeof(sql), "CREATE TABLE hwtrace.%s_r%" PRId64
		    " (LIKE hwtrace.%s INCLUDING DEFAULTS, CHECK (run = %"
		    PRId64 "))", ex_run_tables[i], ex->run, ex_run_tables[i],
		    ex->run);
		if ((rc = pg_cmd(ex->pg, "cannot create the run's tables", sql,
		    0, NULL)) < 0)
			return (rc);
	}
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		snprintf(sql, sizeof(sql), "COPY hwtrace.%s_r%" PRId64
		    " FROM STDIN (FORMAT binary)", ex_run_tables[i], ex->run);
		rows = 0;
		if ((rc = ex_copy(ex, t[i].what, t[i].sql, sql, t[i].sig,
		    &rows)) < 0)
			return (rc);
		if (i == 2)
			run->branches = (uint64_t)rows;
		if (i == 3)
			run->calls = (uint64_t)rows;
	}
	snprintf(sql, sizeof(sql), "INSERT INTO hwtrace.func_counts_r%" PRId64
	    " SELECT run, symbol, count(*), sum(self_insns) FROM "
	    "hwtrace.calls_r%" PRId64 " WHERE symbol IS NOT NULL GROUP BY run, "
	    "symbol", ex->run, ex->run);
	if ((rc = pg_cmd(ex->pg, "cannot count calls", sql, 0, NULL)) < 0)
		return (rc);
	for (i = 0; i < EX_NRUNTABLES; i++) {
		snprintf(sql, sizeof(sql), "ALTER TABLE hwtrace.%s ATTACH "
		    "PARTITION hwtrace.%s_r%" PRId64 " FOR VALUES IN (%" PRId64
		    ")", ex_run_tables[i], ex_run_tables[i], ex->run, ex->run);
		if ((rc = pg_cmd(ex->pg, "cannot attach the run's tables", sql,
		    0, NULL)) < 0)
			return (rc);
	}
	return (0);
}

/*
 * Find the archive of a database given by itself: the path it was indexed
 * from, as given then (relative to where hwtrace index ran, or to the
 * database's directory).
 */
static char *
ex_find_archive(struct ex *ex, const char *dbpath)
{
	char *src, *alt = NULL;
	const char *slash;

	if ((src = ex_meta(ex->q, "source_archive")) == NULL) {
		pg_fail(ex->pg, -HWTR_E_NOENT, "'%s' does not name the archive "
		    "it was indexed from: export the archive instead", dbpath);
		return (NULL);
	}
	if (access(src, R_OK) == 0)
		return (src);
	if (src[0] != '/' && (slash = strrchr(dbpath, '/')) != NULL &&
	    asprintf(&alt, "%.*s/%s", (int)(slash - dbpath), dbpath, src) >= 0 &&
	    access(alt, R_OK) == 0) {
		free(src);
		return (alt);
	}
	free(alt);
	pg_fail(ex->pg, -HWTR_E_NOENT, "'%s' was indexed from '%s', which "
	    "cannot be read (%s): a run is known by its archive's SHA-256, so "
	    "the archive is needed; export the archive itself", dbpath, src,
	    strerror(errno));
	free(src);
	return (NULL);
}

/* Insert the run's row; *existed when its archive is there already. */
static int
ex_run_row(struct ex *ex, const char *archive, const char *sha,
    const struct hwtr_pg_export_opts *opts, struct hwtr_pg_run *run)
{
	static const char *const keys[] = { "argv", "capture_source",
	    "start_ns", "end_ns", "exit_kind", "exit_value",
	    "archive_complete", "hwtrace_version" };
	const char *p[12];
	char *v[8] = { 0 }, *host = NULL;
	struct hwtr_ar *ar = NULL;
	PGresult *r;
	size_t i;
	int rc;

	for (i = 0; i < 8; i++)
		v[i] = ex_meta(ex->q, keys[i]);
	if (hwtr_ar_open(&ar, archive, NULL) >= 0 && hwtr_ar_meta(ar) &&
	    hwtr_ar_meta(ar)->host != NULL)
		host = strdup(hwtr_ar_meta(ar)->host);
	hwtr_ar_close(ar);
	p[0] = sha;
	p[1] = archive;
	p[2] = v[0];
	p[3] = host;
	p[4] = v[1];
	p[5] = v[2];
	p[6] = v[3];
	p[7] = v[4];
	p[8] = v[5];
	p[9] = v[6] != NULL && strcmp(v[6], "1") == 0 ? "true" : "false";
	p[10] = v[7];
	r = pg_exec(ex->pg, "cannot add the run", "INSERT INTO hwtrace.runs "
	    "(sha256, archive, command, host, source, start_ns, end_ns, "
	    "captured, exit_kind, exit_value, complete, hwtrace_version) "
	    "VALUES ($1, $2, $3, $4, $5, $6::bigint, $7::bigint, CASE WHEN "
	    "$6::bigint > 0 THEN 'epoch'::timestamptz + ($6::bigint / 1000) * "
	    "'1 microsecond'::interval END, $8, "
	    "$9::bigint, $10::boolean, $11) ON CONFLICT (sha256) DO NOTHING "
	    "RETURNING id", 11, p);
	for (i = 0; i < 8; i++)
		free(v[i]);
	free(host);
	if (r == NULL)
		return (-HWTR_E_DB);
	if (PQntuples(r) == 0) {
		PQclear(r);
		if ((r = pg_exec(ex->pg, "cannot find the run", "SELECT id FROM "
		    "hwtrace.runs WHERE sha256 = $1", 1, p)) == NULL)
			return (-HWTR_E_DB);
		run->existed = 1;
	}
	run->id = ex->run = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
	PQclear(r);
	snprintf(ex->runs, sizeof(ex->runs), "%" PRId64, ex->run);
	if (run->existed)
		return (0);
	for (i = 0; i < opts->nlabels; i++) {
		p[0] = ex->runs;
		p[1] = opts->labels[i].key;
		p[2] = opts->labels[i].value;
		if ((rc = pg_cmd(ex->pg, "cannot add a label", "INSERT INTO "
		    "hwtrace.labels VALUES ($1::bigint, $2, $3) ON CONFLICT "
		    "(run, key) DO UPDATE SET value = EXCLUDED.value", 3,
		    p)) < 0)
			return (rc);
	}
	return (0);
}

int
hwtr_pg_export_add(struct hwtr_pg *pg, const char *path,
    const struct hwtr_pg_export_opts *opts, struct hwtr_pg_run *run)
{
	struct ex ex;
	char errbuf[HWTR_ERRMSG_MAX], *archive = NULL;
	const char *p[1];
	int rc;

	memset(run, 0, sizeof(*run));
	memset(&ex, 0, sizeof(ex));
	ex.pg = pg;
	pg->msg[0] = '\0';
	if (!pg->in_tx)
		return (pg_fail(pg, -HWTR_E_INVAL, "no export is open"));
	if ((rc = hwtr_q_open(&ex.q, path, &opts->qopts, errbuf,
	    sizeof(errbuf))) < 0) {
		rc = pg_fail(pg, rc, "%s", errbuf);
		goto fail;
	}
	if (strcmp(ex.q->dbpath, path) != 0)
		archive = strdup(path);
	else
		archive = ex_find_archive(&ex, path);
	if (archive == NULL) {
		rc = pg->msg[0] ? -HWTR_E_NOENT : pg_fail(pg, -HWTR_E_NOMEM,
		    "out of memory");
		goto fail;
	}
	if (ex_sha256(archive, run->sha256) < 0) {
		rc = pg_fail(pg, -HWTR_E_IO, "cannot read '%s': %s", archive,
		    strerror(errno));
		goto fail;
	}
	if ((rc = ex_run_row(&ex, archive, run->sha256, opts, run)) < 0 ||
	    run->existed)
		goto out;
	if ((rc = ex_images(&ex, run)) < 0 || (rc = ex_symbols(&ex)) < 0 ||
	    (rc = ex_blocks(&ex, run)) < 0 || (rc = ex_run_rows(&ex, run)) < 0)
		goto fail;
	p[0] = ex.runs;
	if ((rc = pg_cmd(pg, "cannot list the run's images", "INSERT INTO "
	    "hwtrace.run_images SELECT $1::bigint, i.id, min(t.path) FROM "
	    "hwtr_images t JOIN hwtrace.images i ON i.key = t.key GROUP BY "
	    "i.id", 1, p)) < 0)
		goto fail;
	goto out;
fail:
	/* Nothing of this transaction may stay. */
	hwtr_pg_export_abort(pg);
out:
	free(archive);
	free(ex.img);
	free(ex.sym);
	free(ex.blk);
	hwtr_q_close(ex.q);
	return (rc);
}
