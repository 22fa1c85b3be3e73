/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Opening one database file: read-only, SQLite's defensive settings, the
 * checks that it is a hwtrace database of this schema version with no
 * view or trigger hwtrace did not write, and the SQL function
 * hwtr_disasm().  Below q_lazy.c (which opens its partial database here)
 * and q_core.c (which picks the file).
 */

#include <sqlite3.h>

#include <stdio.h>
#include <string.h>

#include "q_int.h"
#include "hwtr_x86.h"

/* --- the SQL function hwtr_disasm(code, offset, ip, mode) ----------------- */

static void
q_sql_disasm(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const uint8_t *code;
	int64_t off;
	char text[128];
	int len, mode;

	(void)argc;
	code = sqlite3_value_blob(argv[0]);
	len = sqlite3_value_bytes(argv[0]);
	off = sqlite3_value_int64(argv[1]);
	mode = sqlite3_value_type(argv[3]) == SQLITE_NULL ? 64 :
	    sqlite3_value_int(argv[3]);
	if (code == NULL || off < 0 || off >= len) {
		sqlite3_result_null(ctx);
		return;
	}
	if (hwtr_x86_disasm(code + off, (size_t)(len - off),
	    (uint64_t)sqlite3_value_int64(argv[2]), mode, text,
	    sizeof(text)) < 0)
		snprintf(text, sizeof(text), "(bad)");
	sqlite3_result_text(ctx, text, -1, SQLITE_TRANSIENT);
}

/*
 * hwtr_disasm() on a CoreSight database: Zydis decodes x86 only, so an ARM
 * instruction is shown as its encoding, as objdump prints it beside the
 * mnemonic: an A64 or A32 word ("d503201f"; mode 64, 32), a T32 halfword
 * ("bf00") or halfword pair ("f000 b800"; mode 16).
 */
static void
q_sql_armenc(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const uint8_t *c;
	char text[32];
	int64_t off;
	int len, mode;
	unsigned h0, h1;

	(void)argc;
	c = sqlite3_value_blob(argv[0]);
	len = sqlite3_value_bytes(argv[0]);
	off = sqlite3_value_int64(argv[1]);
	mode = sqlite3_value_int(argv[3]);
	if (c == NULL || off < 0 || off + 2 > len) {
		sqlite3_result_null(ctx);
		return;
	}
	c += off;
	h0 = (unsigned)c[0] | (unsigned)c[1] << 8;
	if (mode == 16 && (h0 >> 11) < 0x1d)
		snprintf(text, sizeof(text), "%04x", h0);
	else if (off + 4 > len)
		snprintf(text, sizeof(text), "(bad)");
	else {
		h1 = (unsigned)c[2] | (unsigned)c[3] << 8;
		if (mode == 16)
			snprintf(text, sizeof(text), "%04x %04x", h0, h1);
		else
			snprintf(text, sizeof(text), "%08x", h1 << 16 | h0);
	}
	sqlite3_result_text(ctx, text, -1, SQLITE_TRANSIENT);
}

/* --- opening -------------------------------------------------------------- */

/*
 * Views and triggers hwtrace did not write: a view in place of one of its
 * tables (a recursive one never ends) or a trigger is refused, naming it.
 * The one view hwtrace writes must be its own text (today's or the one
 * before).
 */
/* Is @sql the statement @want, which has ";\n" after it? */
static int
q_same_stmt(const char *sql, const char *want)
{
	size_t n = strlen(want) - 2;

	return (strlen(sql) == n && strncmp(sql, want, n) == 0);
}

static int
q_db_schema_check(struct hwtr_q *q, const char *path)
{
	const char *type, *name, *sql;
	sqlite3_stmt *st;
	int rc, ok;

	if (sqlite3_prepare_v2(q->db, "SELECT type, name, sql FROM "
	    "sqlite_master WHERE type IN ('view', 'trigger')", -1, &st,
	    NULL) != SQLITE_OK)
		return (q_dbfail(q, "cannot read the schema"));
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		type = (const char *)sqlite3_column_text(st, 0);
		name = (const char *)sqlite3_column_text(st, 1);
		sql = (const char *)sqlite3_column_text(st, 2);
		ok = type != NULL && strcmp(type, "view") == 0 && name != NULL &&
		    strcmp(name, "call_times") == 0 && sql != NULL &&
		    (q_same_stmt(sql, hwtr_ix_view_sql(0)) ||
		    q_same_stmt(sql, hwtr_ix_view_sql(1)));
		if (!ok) {
			rc = q_fail(q, -HWTR_E_FORMAT, "'%s': %s '%s' was not "
			    "written by hwtrace: refused", path,
			    type ? type : "object", name ? name : "?");
			sqlite3_finalize(st);
			return (rc);
		}
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return (q_dbfail(q, "cannot read the schema"));
	return (0);
}

/* Open @path read-only and check that it is a database this code reads. */
int
q_db_open(struct hwtr_q *q, const char *path)
{
	int64_t appid, ver, arm;
	int rc;

	rc = sqlite3_open_v2(path, &q->db, SQLITE_OPEN_READONLY |
	    SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		char why[HWTR_ERRMSG_MAX];

		return (q_fail(q, -HWTR_E_DB, "cannot open '%s': %s", path,
		    hwtr_ix_sqlite_open_why(q->db, rc, path, why,
		    sizeof(why))));
	}
	/*
	 * A database may come from anywhere, and query sql runs what the
	 * user types: SQLite's defensive settings before anything is read.
	 * No two-argument fts3_tokenizer() (it calls through a pointer the
	 * SQL supplies), no extension loading, no writes to the schema,
	 * and no functions with side effects called from the schema's views
	 * or triggers (trusted_schema off).
	 */
	if (sqlite3_db_config(q->db, SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER, 0,
	    NULL) != SQLITE_OK ||
	    sqlite3_db_config(q->db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0,
	    NULL) != SQLITE_OK ||
	    sqlite3_db_config(q->db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL) !=
	    SQLITE_OK ||
	    sqlite3_db_config(q->db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL) !=
	    SQLITE_OK)
		return (q_dbfail(q, "cannot set up the connection"));
	rc = q_int(q, &appid, 0, "PRAGMA application_id", NULL);
	if (rc < 0)
		return (q_fail(q, -HWTR_E_FORMAT,
		    "'%s' is not a hwtrace database (%s)", path,
		    sqlite3_errmsg(q->db)));
	if (appid != HWTR_DB_APPLICATION_ID)
		return (q_fail(q, -HWTR_E_FORMAT, "'%s' is not a hwtrace "
		    "database (SQLite application_id %#llx, hwtrace writes "
		    "%#x)", path, (unsigned long long)appid,
		    HWTR_DB_APPLICATION_ID));
	if ((rc = q_int(q, &ver, 0, "PRAGMA user_version", NULL)) < 0)
		return (rc);
	if (ver > HWTR_DB_SCHEMA_VERSION)
		return (q_fail(q, -HWTR_E_VERSION, "'%s' has database schema "
		    "version %lld, newer than this hwtrace reads (%d); use a "
		    "newer hwtrace", path, (long long)ver,
		    HWTR_DB_SCHEMA_VERSION));
	if (ver < 1)
		return (q_fail(q, -HWTR_E_FORMAT, "'%s' is not a complete "
		    "hwtrace database (schema version %lld)", path,
		    (long long)ver));
	if (ver < HWTR_DB_SCHEMA_VERSION)
		return (q_fail(q, -HWTR_E_VERSION, "'%s' has database schema "
		    "version %lld, older than this hwtrace reads (%d); index "
		    "its archive again", path, (long long)ver,
		    HWTR_DB_SCHEMA_VERSION));
	if ((rc = q_db_schema_check(q, path)) < 0)
		return (rc);
	/* CoreSight streams: ARM code (see q_sql_armenc()). */
	if ((rc = q_int(q, &arm, 0, "SELECT count(*) FROM streams WHERE "
	    "format IN ('coresight', 'etmv3', 'ptm', 'etmv4', 'ete')",
	    NULL)) < 0)
		return (rc);
	/*
	 * Memory-mapped reads: a verb that visits rows spread over the file
	 * (func: one calls row per invocation, each on its own page) costs a
	 * page-cache copy per page through read(2), and SQLite's own cache
	 * (2 MB) holds little of a large history.  Read-only, so a mapping is
	 * safe; past 1 GiB SQLite reads the rest as before.
	 */
	if (sqlite3_exec(q->db, "PRAGMA query_only = 1; "
	    "PRAGMA mmap_size = 1073741824", NULL, NULL, NULL) != SQLITE_OK ||
	    hwtr_ix_sqlite_register(q->db) < 0 ||
	    sqlite3_create_function(q->db, "hwtr_disasm", 4, SQLITE_UTF8 |
	    SQLITE_DETERMINISTIC, NULL, arm > 0 ? q_sql_armenc : q_sql_disasm,
	    NULL, NULL) != SQLITE_OK)
		return (q_dbfail(q, "cannot set up the connection"));
	return (0);
}
