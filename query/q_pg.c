/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The PostgreSQL connection of the export and the fleet verbs: opening it
 * the way every libpq program does (a URL or key=value pairs, the PG*
 * environment, ~/.pgpass), messages that never carry the password, the
 * schema of hwtrace-db(5)'s POSTGRESQL section, and a writer of binary
 * COPY data.
 */

#include <arpa/inet.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "q_pg.h"

/*
 * The shared schema.  Static data (images, symbols, files, lines, blocks)
 * is keyed by image, so that what a build-id brings is stored once
 * whatever the number of runs; what a run did is in tables partitioned by
 * run (one partition per run and table, attached when its export
 * commits), so that dropping a run is dropping its partitions.  Bulk
 * tables carry no foreign keys: they would check every row of a COPY.
 */
/*
 * Inlined subroutines, static per image as lines are: added to version 1
 * (readers that do not know the table never see it), so a schema made
 * before it gets it at the next export (pg_schema()).
 */
#define PG_INLINES_SQL							\
	"CREATE TABLE IF NOT EXISTS hwtrace.inlines (image bigint NOT NULL,"	\
	" lo bigint NOT NULL, hi bigint NOT NULL, entry bigint NOT NULL,"	\
	" inst bigint NOT NULL, depth bigint NOT NULL, name text NOT NULL,"	\
	" call_file bigint, call_line bigint, parent bigint);"		\
	"CREATE INDEX IF NOT EXISTS inlines_image_lo ON hwtrace.inlines"	\
	" (image, lo);"							\
	"CREATE INDEX IF NOT EXISTS inlines_name ON hwtrace.inlines (name);"

static const char pg_schema_sql[] =
	"CREATE SCHEMA IF NOT EXISTS hwtrace;"
	"CREATE TABLE IF NOT EXISTS hwtrace.meta (key text PRIMARY KEY, value text NOT NULL);"
	"CREATE TABLE IF NOT EXISTS hwtrace.runs (id bigserial PRIMARY KEY,"
	" sha256 text NOT NULL UNIQUE, archive text, command text, host text,"
	" source text, start_ns bigint, end_ns bigint, captured timestamptz,"
	" exit_kind text, exit_value bigint, complete boolean NOT NULL,"
	" hwtrace_version text, exported timestamptz NOT NULL DEFAULT now());"
	"CREATE TABLE IF NOT EXISTS hwtrace.labels (run bigint NOT NULL REFERENCES"
	" hwtrace.runs ON DELETE CASCADE, key text NOT NULL, value text NOT NULL,"
	" PRIMARY KEY (run, key));"
	"CREATE INDEX IF NOT EXISTS labels_key_value ON hwtrace.labels (key, value);"
	"CREATE TABLE IF NOT EXISTS hwtrace.images (id bigserial PRIMARY KEY,"
	" key text NOT NULL UNIQUE, path text, kind text, build_id text,"
	" size bigint, sha256 text, elf boolean,"
	" loaded boolean NOT NULL DEFAULT false);"
	"CREATE TABLE IF NOT EXISTS hwtrace.run_images (run bigint NOT NULL REFERENCES"
	" hwtrace.runs ON DELETE CASCADE, image bigint NOT NULL REFERENCES"
	" hwtrace.images, path text, PRIMARY KEY (run, image));"
	"CREATE TABLE IF NOT EXISTS hwtrace.symbols (id bigserial PRIMARY KEY,"
	" image bigint NOT NULL, name text NOT NULL, addr bigint, size bigint,"
	" kind text, bind text, origin text);"
	"CREATE INDEX IF NOT EXISTS symbols_image_addr ON hwtrace.symbols (image, addr);"
	"CREATE INDEX IF NOT EXISTS symbols_name ON hwtrace.symbols (name);"
	"CREATE TABLE IF NOT EXISTS hwtrace.files (image bigint NOT NULL, id bigint NOT NULL,"
	" path text NOT NULL, PRIMARY KEY (image, id));"
	"CREATE TABLE IF NOT EXISTS hwtrace.lines (image bigint NOT NULL, addr bigint NOT NULL,"
	" file bigint, line bigint, col bigint, is_stmt boolean,"
	" end_addr bigint);"
	"CREATE INDEX IF NOT EXISTS lines_image_addr ON hwtrace.lines (image, addr);"
	"CREATE TABLE IF NOT EXISTS hwtrace.blocks (id bigserial PRIMARY KEY, image bigint,"
	" run bigint REFERENCES hwtrace.runs ON DELETE CASCADE,"
	" addr bigint NOT NULL, size bigint NOT NULL, ninsns bigint,"
	" mode bigint NOT NULL, last_class text, symbol bigint, sym_offset bigint,"
	" file bigint, line bigint, CHECK ((image IS NULL) <> (run IS NULL)),"
	" CONSTRAINT blocks_static UNIQUE NULLS NOT DISTINCT"
	" (image, run, addr, size, mode));"
	"CREATE INDEX IF NOT EXISTS blocks_symbol ON hwtrace.blocks (symbol);"
	"CREATE TABLE IF NOT EXISTS hwtrace.threads (run bigint NOT NULL, id bigint NOT NULL,"
	" stream bigint, pid bigint, tid bigint, name text, blocks bigint,"
	" insns bigint, calls bigint, errors bigint) PARTITION BY LIST (run);"
	"CREATE TABLE IF NOT EXISTS hwtrace.block_counts (run bigint NOT NULL,"
	" thread bigint NOT NULL, block bigint NOT NULL, count bigint NOT NULL)"
	" PARTITION BY LIST (run);"
	"CREATE TABLE IF NOT EXISTS hwtrace.branches (run bigint NOT NULL,"
	" thread bigint NOT NULL, from_block bigint, to_block bigint,"
	" from_ip bigint, to_ip bigint, kind text, count bigint NOT NULL)"
	" PARTITION BY LIST (run);"
	"CREATE TABLE IF NOT EXISTS hwtrace.calls (run bigint NOT NULL, id bigint NOT NULL,"
	" thread bigint NOT NULL, parent bigint, depth bigint, symbol bigint,"
	" func_ip bigint, call_ip bigint, entry_kind text, exit_kind text,"
	" entry_seq bigint, exit_seq bigint, entry_insn bigint, exit_insn bigint,"
	" entry_ns bigint, exit_ns bigint, insns bigint, self_insns bigint,"
	" blocks bigint) PARTITION BY LIST (run);"
	"CREATE TABLE IF NOT EXISTS hwtrace.func_counts (run bigint NOT NULL,"
	" symbol bigint NOT NULL, calls bigint NOT NULL, self_insns bigint)"
	" PARTITION BY LIST (run);"
	"CREATE INDEX IF NOT EXISTS func_counts_symbol ON hwtrace.func_counts (symbol);"
	PG_INLINES_SQL
	"INSERT INTO hwtrace.meta VALUES ('schema_version', '1')"
	" ON CONFLICT (key) DO NOTHING;";

/* Replace every copy of each secret in @s by "***" (in place). */
static void
pg_scrub(const struct hwtr_pg *pg, char *s)
{
	size_t i, n;
	char *p;

	for (i = 0; i < sizeof(pg->secrets) / sizeof(pg->secrets[0]); i++) {
		if (pg->secrets[i] == NULL || (n = strlen(pg->secrets[i])) == 0)
			continue;
		while ((p = strstr(s, pg->secrets[i])) != NULL) {
			memcpy(p, "***", n < 3 ? n : 3);
			if (n > 3)
				memmove(p + 3, p + n, strlen(p + n) + 1);
		}
	}
}

/* libpq's messages end in newlines and may have several lines. */
static void
pg_oneline(char *s)
{
	size_t n = strlen(s);
	char *p;

	while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == ' '))
		s[--n] = '\0';
	for (p = s; *p != '\0'; p++)
		if (*p == '\n')
			*p = ' ';
}

int
pg_fail(struct hwtr_pg *pg, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(pg->msg, sizeof(pg->msg), fmt, ap);
	va_end(ap);
	pg_oneline(pg->msg);
	pg_scrub(pg, pg->msg);
	return (err);
}

int
pg_dbfail(struct hwtr_pg *pg, const char *what)
{
	if (pg->conn != NULL && PQstatus(pg->conn) == CONNECTION_BAD)
		return (pg_fail(pg, -HWTR_E_DB, "%s: the connection to '%s' "
		    "was lost: %s", what, pg->name,
		    PQerrorMessage(pg->conn)));
	return (pg_fail(pg, -HWTR_E_DB, "%s: %s", what,
	    pg->conn ? PQerrorMessage(pg->conn) : "not connected"));
}

int
pg_resfail(struct hwtr_pg *pg, PGresult *r, const char *what)
{
	int rc;

	if (r == NULL || PQstatus(pg->conn) == CONNECTION_BAD)
		rc = pg_dbfail(pg, what);
	else
		rc = pg_fail(pg, -HWTR_E_DB, "%s: %s", what,
		    PQresultErrorMessage(r));
	PQclear(r);
	return (rc);
}

PGresult *
pg_exec(struct hwtr_pg *pg, const char *what, const char *sql, int nparams,
    const char *const *params)
{
	PGresult *r;
	ExecStatusType st;

	/* PQexec runs several statements; PQexecParams binds parameters. */
	if (nparams == 0)
		r = PQexec(pg->conn, sql);
	else
		r = PQexecParams(pg->conn, sql, nparams, NULL, params, NULL,
		    NULL, 0);
	st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
		pg_resfail(pg, r, what);
		return (NULL);
	}
	return (r);
}

int
pg_cmd(struct hwtr_pg *pg, const char *what, const char *sql, int nparams,
    const char *const *params)
{
	PGresult *r;

	if ((r = pg_exec(pg, what, sql, nparams, params)) == NULL)
		return (-HWTR_E_DB);
	PQclear(r);
	return (0);
}

/* Server notices go to the log, never to stderr. */
static void
pg_notice(void *arg, const char *msg)
{
	struct hwtr_pg *pg = arg;
	char buf[512];

	snprintf(buf, sizeof(buf), "server: %s", msg);
	pg_oneline(buf);
	pg_scrub(pg, buf);
	hwtr_logf(&pg->log, HWTR_LOG_DEBUG, "%s", buf);
}

/* "user@host:port/dbname" from what libpq connected to. */
static void
pg_setname(struct hwtr_pg *pg)
{
	const char *u = PQuser(pg->conn), *h = PQhost(pg->conn);
	const char *p = PQport(pg->conn), *d = PQdb(pg->conn);

	snprintf(pg->name, sizeof(pg->name), "%s%s%s%s%s/%s",
	    u ? u : "", u && *u ? "@" : "", h ? h : "",
	    p && *p ? ":" : "", p ? p : "", d ? d : "");
	pg_scrub(pg, pg->name);
}

int
hwtr_pg_open(struct hwtr_pg **pgp, const char *conninfo,
    const struct hwtr_log *log, char *errbuf, size_t errlen)
{
	PQconninfoOption *opts, *o;
	struct hwtr_pg *pg;
	const char *env;
	char *perr = NULL, eb[8];
	int rc;

	*pgp = NULL;
	if (errbuf == NULL || errlen == 0) {
		errbuf = eb;
		errlen = sizeof(eb);
	}
	errbuf[0] = '\0';
	if ((pg = calloc(1, sizeof(*pg))) == NULL) {
		snprintf(errbuf, errlen, "out of memory");
		return (-HWTR_E_NOMEM);
	}
	if (log != NULL)
		pg->log = *log;
	snprintf(pg->name, sizeof(pg->name), "the server");
	/*
	 * Parse first: a malformed string is refused before any connection,
	 * and the password it holds is known, so that no message shows it.
	 */
	if ((opts = PQconninfoParse(conninfo, &perr)) == NULL) {
		if ((env = strstr(conninfo, "://")) != NULL) {
			/* A URL's password sits between ':' and '@'. */
			const char *at = strchr(env + 3, '@');
			const char *colon = strchr(env + 3, ':');

			if (at != NULL && colon != NULL && colon < at)
				pg->secrets[0] = strndup(colon + 1,
				    (size_t)(at - colon - 1));
		}
		rc = pg_fail(pg, -HWTR_E_INVAL, "not a connection string or "
		    "URL: %s", perr ? perr : "out of memory");
		goto fail;
	}
	for (o = opts; o->keyword != NULL; o++)
		if (strcmp(o->keyword, "password") == 0 && o->val != NULL &&
		    *o->val != '\0')
			pg->secrets[0] = strdup(o->val);
	PQconninfoFree(opts);
	if ((env = getenv("PGPASSWORD")) != NULL && *env != '\0')
		pg->secrets[1] = strdup(env);

	/*
	 * A server that does not answer must not hang the command: 30 s to
	 * connect, unless the string or PGCONNECT_TIMEOUT says otherwise
	 * (the string, expanded after it, overrides it).
	 */
	{
		const char *kw[3] = { "connect_timeout", "dbname", NULL };
		const char *val[3] = { "30", conninfo, NULL };
		int first = getenv("PGCONNECT_TIMEOUT") != NULL;

		pg->conn = PQconnectdbParams(kw + first, val + first, 1);
	}
	if (pg->conn == NULL) {
		rc = pg_fail(pg, -HWTR_E_NOMEM, "out of memory");
		goto fail;
	}
	if (PQstatus(pg->conn) != CONNECTION_OK) {
		rc = pg_fail(pg, -HWTR_E_DB, "cannot connect: %s",
		    PQerrorMessage(pg->conn));
		goto fail;
	}
	pg_setname(pg);
	PQsetNoticeProcessor(pg->conn, pg_notice, pg);
	if ((rc = pg_cmd(pg, "cannot set up the session", "SET "
	    "client_min_messages = warning", 0, NULL)) < 0)
		goto fail;
	*pgp = pg;
	return (0);
fail:
	PQfreemem(perr);
	snprintf(errbuf, errlen, "%s", pg->msg);
	hwtr_pg_close(pg);
	return (rc);
}

/*
 * Roll back the open export (q_pgexport.c), if any: also what closing
 * the connection in the middle of one does.
 */
void
hwtr_pg_export_abort(struct hwtr_pg *pg)
{
	PGresult *r;

	if (pg == NULL || !pg->in_tx)
		return;
	pg->in_tx = 0;
	if (PQstatus(pg->conn) == CONNECTION_OK &&
	    (r = PQexec(pg->conn, "ROLLBACK")) != NULL)
		PQclear(r);
}

int
hwtr_pg_close(struct hwtr_pg *pg)
{
	size_t i;

	if (pg == NULL)
		return (0);
	if (pg->in_tx)
		hwtr_pg_export_abort(pg);
	if (pg->conn != NULL)
		PQfinish(pg->conn);
	for (i = 0; i < sizeof(pg->secrets) / sizeof(pg->secrets[0]); i++)
		free(pg->secrets[i]);
	free(pg);
	return (0);
}

const char *
hwtr_pg_errmsg(const struct hwtr_pg *pg)
{
	return (pg == NULL ? "no connection" : pg->msg);
}

const char *
hwtr_pg_name(const struct hwtr_pg *pg)
{
	return (pg == NULL ? "" : pg->name);
}

/*
 * Check the schema's version; with @create, make the schema where it is
 * missing.  Two exports may start at once on an empty database: the
 * creation is serialized by an advisory lock held to the end of the
 * transaction, and each checks again once it holds it.
 */
int
pg_schema(struct hwtr_pg *pg, int create)
{
	PGresult *r;
	const char *v;
	long ver;
	int rc;

	if ((r = pg_exec(pg, "cannot read the schema", "SELECT "
	    "to_regclass('hwtrace.meta') IS NOT NULL", 0, NULL)) == NULL)
		return (-HWTR_E_DB);
	rc = strcmp(PQgetvalue(r, 0, 0), "t") == 0;
	PQclear(r);
	if (!rc && !create)
		return (pg_fail(pg, -HWTR_E_NOENT, "'%s' has no schema "
		    "hwtrace: nothing was exported there (see "
		    "hwtrace-export(1))", pg->name));
	/*
	 * 1752659058: "hwtr", as the SQLite application_id.  Every
	 * statement of the schema is "if not exists", so that the export
	 * that waited for the lock, whatever it saw before, changes nothing.
	 */
	if (!rc && ((rc = pg_cmd(pg, "cannot lock the schema", "SELECT "
	    "pg_advisory_xact_lock(1752659058)", 0, NULL)) < 0 ||
	    (rc = pg_cmd(pg, "cannot create the schema hwtrace",
	    pg_schema_sql, 0, NULL)) < 0))
		return (rc);
	/* A schema from before the inlines table: it is added. */
	if (create) {
		if ((r = pg_exec(pg, "cannot read the schema", "SELECT "
		    "to_regclass('hwtrace.inlines') IS NOT NULL", 0, NULL)) ==
		    NULL)
			return (-HWTR_E_DB);
		rc = strcmp(PQgetvalue(r, 0, 0), "t") == 0;
		PQclear(r);
		if (!rc && ((rc = pg_cmd(pg, "cannot lock the schema", "SELECT "
		    "pg_advisory_xact_lock(1752659058)", 0, NULL)) < 0 ||
		    (rc = pg_cmd(pg, "cannot add the inlines table",
		    PG_INLINES_SQL, 0, NULL)) < 0))
			return (rc);
	}
	if ((r = pg_exec(pg, "cannot read the schema version", "SELECT "
	    "coalesce((SELECT value FROM hwtrace.meta WHERE key = "
	    "'schema_version'), '0')", 0, NULL)) == NULL)
		return (-HWTR_E_DB);
	v = PQgetvalue(r, 0, 0);
	ver = strtol(v, NULL, 10);
	PQclear(r);
	if (ver > PG_SCHEMA_VERSION)
		return (pg_fail(pg, -HWTR_E_VERSION, "'%s': schema hwtrace is "
		    "version %ld, newer than this hwtrace (reads %d)", pg->name,
		    ver, PG_SCHEMA_VERSION));
	return (0);
}

/* --- binary COPY ------------------------------------------------------ */

#define PG_COPY_BLOCK	(1024 * 1024)

static void
pg_copy_put(struct pg_copy *cp, const void *p, size_t n)
{
	unsigned char *nb;
	size_t ncap;

	if (cp->err)
		return;
	if (cp->len + n > cp->cap) {
		ncap = cp->cap ? cp->cap : PG_COPY_BLOCK + 4096;
		while (ncap < cp->len + n)
			ncap *= 2;
		if ((nb = realloc(cp->buf, ncap)) == NULL) {
			cp->err = -HWTR_E_NOMEM;
			return;
		}
		cp->buf = nb;
		cp->cap = ncap;
	}
	memcpy(cp->buf + cp->len, p, n);
	cp->len += n;
}

static void
pg_copy_be32(struct pg_copy *cp, uint32_t v)
{
	v = htonl(v);
	pg_copy_put(cp, &v, 4);
}

static int
pg_copy_flush(struct pg_copy *cp)
{
	if (cp->err)
		return (cp->err);
	if (cp->len > 0 && PQputCopyData(cp->pg->conn, (const char *)cp->buf,
	    (int)cp->len) != 1) {
		cp->err = pg_dbfail(cp->pg, cp->what);
		return (cp->err);
	}
	cp->len = 0;
	return (0);
}

int
pg_copy_begin(struct hwtr_pg *pg, struct pg_copy *cp, const char *what,
    const char *sql)
{
	static const unsigned char hdr[] = "PGCOPY\n\377\r\n";
	PGresult *r;

	memset(cp, 0, sizeof(*cp));
	cp->pg = pg;
	cp->what = what;
	r = PQexec(pg->conn, sql);
	if (r == NULL || PQresultStatus(r) != PGRES_COPY_IN)
		return (cp->err = pg_resfail(pg, r, what));
	PQclear(r);
	pg_copy_put(cp, hdr, 11);
	pg_copy_be32(cp, 0);		/* flags */
	pg_copy_be32(cp, 0);		/* header extension */
	return (cp->err);
}

int
pg_copy_row(struct pg_copy *cp, int nfields)
{
	uint16_t n = htons((uint16_t)nfields);

	if (cp->len >= PG_COPY_BLOCK && pg_copy_flush(cp) < 0)
		return (cp->err);
	pg_copy_put(cp, &n, 2);
	cp->rows++;
	return (cp->err);
}

void
pg_copy_i8(struct pg_copy *cp, int64_t v)
{
	uint64_t u = (uint64_t)v;

	pg_copy_be32(cp, 8);
	pg_copy_be32(cp, (uint32_t)(u >> 32));
	pg_copy_be32(cp, (uint32_t)u);
}

void
pg_copy_i4(struct pg_copy *cp, int32_t v)
{
	pg_copy_be32(cp, 4);
	pg_copy_be32(cp, (uint32_t)v);
}

void
pg_copy_i2(struct pg_copy *cp, int16_t v)
{
	uint16_t u = htons((uint16_t)v);

	pg_copy_be32(cp, 2);
	pg_copy_put(cp, &u, 2);
}

void
pg_copy_bool(struct pg_copy *cp, int v)
{
	unsigned char b = v != 0;

	pg_copy_be32(cp, 1);
	pg_copy_put(cp, &b, 1);
}

void
pg_copy_bytes(struct pg_copy *cp, const void *p, size_t len)
{
	pg_copy_be32(cp, (uint32_t)len);
	pg_copy_put(cp, p, len);
}

void
pg_copy_null(struct pg_copy *cp)
{
	pg_copy_be32(cp, UINT32_MAX);
}

/*
 * End the COPY: with the trailer when all went well, with an error
 * (the server then discards every row) otherwise.
 */
int
pg_copy_end(struct pg_copy *cp, int64_t *rowsp)
{
	static const unsigned char trailer[2] = { 0xff, 0xff };
	PGresult *r;
	int rc = cp->err;

	if (rc == 0) {
		pg_copy_put(cp, trailer, 2);
		rc = pg_copy_flush(cp);
	}
	if (PQstatus(cp->pg->conn) != CONNECTION_BAD) {
		if (PQputCopyEnd(cp->pg->conn, rc == 0 ? NULL :
		    "hwtrace: export failed") != 1 && rc == 0)
			rc = pg_dbfail(cp->pg, cp->what);
		while ((r = PQgetResult(cp->pg->conn)) != NULL) {
			if (PQresultStatus(r) != PGRES_COMMAND_OK && rc == 0) {
				rc = pg_resfail(cp->pg, r, cp->what);
				continue;
			}
			if (rowsp != NULL && rc == 0)
				*rowsp = strtoll(PQcmdTuples(r), NULL, 10);
			PQclear(r);
		}
	} else if (rc == 0)
		rc = pg_dbfail(cp->pg, cp->what);
	if (rc == -HWTR_E_NOMEM)
		pg_fail(cp->pg, rc, "%s: out of memory", cp->what);
	free(cp->buf);
	cp->buf = NULL;
	cp->err = rc;
	return (rc);
}
