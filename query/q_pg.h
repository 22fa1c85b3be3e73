/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Private interfaces of the PostgreSQL side of the query module: q_pg.c
 * owns the connection (libpq is used here and nowhere else), the schema
 * and the binary COPY writer; q_pgexport.c loads histories; q_fleet.c
 * answers the fleet verbs.
 */

#ifndef HWTR_Q_PG_H
#define HWTR_Q_PG_H

#include <postgresql/libpq-fe.h>

#include "q_int.h"

/* The version of the schema "hwtrace" this code writes and reads. */
#define PG_SCHEMA_VERSION	1

struct hwtr_pg {
	PGconn		*conn;
	struct hwtr_log	log;
	int		in_tx;		/* an export transaction is open */
	char		name[256];	/* user@host:port/dbname */
	char		*secrets[2];	/* passwords to keep out of messages */
	char		msg[HWTR_ERRMSG_MAX];
};

/* Set pg->msg (password removed); returns @err. */
int pg_fail(struct hwtr_pg *pg, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* pg_fail with -HWTR_E_DB and the server's message. */
int pg_dbfail(struct hwtr_pg *pg, const char *what);
/* pg_fail with -HWTR_E_DB and @r's message (the result is cleared). */
int pg_resfail(struct hwtr_pg *pg, PGresult *r, const char *what);

/*
 * Run @sql with text parameters (NULL: SQL NULL).  Returns the result (a
 * command or tuples result) or NULL with pg->msg set; the caller clears it.
 */
PGresult *pg_exec(struct hwtr_pg *pg, const char *what, const char *sql,
    int nparams, const char *const *params);
/* pg_exec for statements without rows: 0 or -HWTR_E_DB. */
int pg_cmd(struct hwtr_pg *pg, const char *what, const char *sql,
    int nparams, const char *const *params);
/* Create the schema when it is missing; refuse a newer one. */
int pg_schema(struct hwtr_pg *pg, int create);

/*
 * Binary COPY ... FROM STDIN: pg_copy_begin() sends the statement and the
 * header, rows are built with pg_copy_row() and the typed field writers
 * and sent in blocks of 1 MiB, pg_copy_end() ends the COPY and returns the
 * number of rows the server took.  On any failure the COPY is ended and
 * pg->msg says why.  Field types must be the column's exactly (binary
 * COPY does not convert): i8 bigint, i4 integer, i2 smallint, bool,
 * text, bytea.
 */
struct pg_copy {
	struct hwtr_pg	*pg;
	const char	*what;
	unsigned char	*buf;
	size_t		len, cap;
	int		err;
	uint64_t	rows;
};
int pg_copy_begin(struct hwtr_pg *pg, struct pg_copy *cp, const char *what,
    const char *sql);
int pg_copy_row(struct pg_copy *cp, int nfields);
void pg_copy_i8(struct pg_copy *cp, int64_t v);
void pg_copy_i4(struct pg_copy *cp, int32_t v);
void pg_copy_i2(struct pg_copy *cp, int16_t v);
void pg_copy_bool(struct pg_copy *cp, int v);
void pg_copy_bytes(struct pg_copy *cp, const void *p, size_t len);
void pg_copy_null(struct pg_copy *cp);
int pg_copy_end(struct pg_copy *cp, int64_t *rowsp);

#endif /* !HWTR_Q_PG_H */
