/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Whether an archive decodes elsewhere (hwtrace verify --decode): it is
 * indexed with nothing from this machine (hwtr_ix_opts.archive_only: the
 * images, debug files and DWARF of the archive only; the indexer never
 * reads an image from the host, and libdw is kept from the split units'
 * .dwo files), and the database and the archive then say what a machine
 * without this one's files would miss:
 *
 *   - code the trace ran whose image the archive lacks (a file left out,
 *     a JIT region without its code): decode errors at addresses in the
 *     mapping, so elsewhere those instructions are not decoded;
 *   - debug info left out: an image the trace ran in has no lines, the
 *     archive has no debug file for it, and this machine has one (the
 *     capture's --no-debug-info): elsewhere its lines are missing;
 *   - what the index run could not do with the archive alone (its
 *     problems: split DWARF units, unreadable members), as notes.
 *
 * Decoding would differ when one of the first two is found: derived from
 * what is missing, not from a second decode with the host's files (the
 * indexer has no way to read the host's files, by design).
 */

#include <inttypes.h>
#include <stdarg.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwtr_common.h"
#include "hwtr_elf.h"
#include "hwtr_ix.h"
#include "hwtr_ix_sqlite.h"
#include "ix_run.h"

struct px {
	struct hwtr_ix_miss *v;
	size_t		n, cap;
};

static int
px_add(struct px *p, const char *kind, const char *path, int differs,
    const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static int
px_add(struct px *p, const char *kind, const char *path, int differs,
    const char *fmt, ...)
{
	struct hwtr_ix_miss *m;
	va_list ap;
	int rc;

	if (p->n == p->cap) {
		size_t ncap = p->cap ? p->cap * 2 : 8;

		if ((m = realloc(p->v, ncap * sizeof(*m))) == NULL)
			return (-HWTR_E_NOMEM);
		p->v = m;
		p->cap = ncap;
	}
	m = &p->v[p->n];
	memset(m, 0, sizeof(*m));
	m->kind = kind;
	m->differs = differs;
	va_start(ap, fmt);
	rc = vasprintf(&m->detail, fmt, ap);
	va_end(ap);
	if (rc < 0 || (m->path = strdup(path != NULL ? path : "?")) == NULL) {
		if (rc >= 0)
			free(m->detail);
		return (-HWTR_E_NOMEM);
	}
	p->n++;
	return (0);
}

/*
 * Executable mappings without an image in the archive where the trace
 * met decode errors: the decoder needed their code.
 */
#define PX_IMAGES_SQL							\
	"SELECT coalesce(m.path, printf('anonymous %#x-%#x', m.start_ip, "	\
	"m.end_ip)), sum((SELECT count(*) FROM events e WHERE e.kind = "	\
	"'decode-error' AND e.ip >= m.start_ip AND e.ip < m.end_ip AND "	\
	"(m.pid IS NULL OR e.pid IS NULL OR e.pid = m.pid))) AS n FROM "	\
	"mappings m LEFT JOIN images i ON i.id = m.image WHERE (m.image IS "	\
	"NULL OR i.present = 0) AND (m.prot = 0 OR (m.prot & 4) != 0) "	\
	"GROUP BY 1 HAVING n > 0 ORDER BY 1"

static int
px_images(sqlite3 *db, struct px *p)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (sqlite3_prepare_v2(db, PX_IMAGES_SQL, -1, &st, NULL) != SQLITE_OK)
		return (-HWTR_E_DB);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		if (px_add(p, "image", (const char *)sqlite3_column_text(st,
		    0), 1, "not in the archive; the trace ran its code "
		    "(%lld decode errors there): elsewhere those "
		    "instructions are not decoded",
		    (long long)sqlite3_column_int64(st, 1)) < 0) {
			sqlite3_finalize(st);
			return (-HWTR_E_NOMEM);
		}
	sqlite3_finalize(st);
	return (rc == SQLITE_DONE ? 0 : -HWTR_E_DB);
}

/* Images the trace ran in that have no source lines. */
#define PX_NOLINES_SQL							\
	"SELECT i.key, i.path FROM images i WHERE i.present AND i.elf AND "	\
	"NOT i.has_lines AND EXISTS (SELECT 1 FROM blocks b WHERE b.image "	\
	"= i.id) ORDER BY i.id"

/*
 * Image @key of @ar (at @path when captured) has no lines and no debug
 * file in the archive: left out when this machine has its debug file.
 */
static int
px_debug_one(struct hwtr_ar *ar, const char *key, const char *path,
    struct px *p)
{
	char name[HWTR_IMAGE_KEY_MAX + 16], from[1024], link[256];
	void *buf = NULL, *dbg = NULL;
	size_t mi, len = 0, dlen = 0;
	uint32_t crc;
	int rc;

	snprintf(name, sizeof(name), "aux/debug/%s", key);
	if (hwtr_ar_find_member(ar, name, &mi) == 0)
		return (0);
	snprintf(name, sizeof(name), "images/%s", key);
	if (hwtr_ar_find_member(ar, name, &mi) < 0 ||
	    hwtr_ar_read_member(ar, mi, &buf, &len) < 0)
		return (0);
	from[0] = '\0';
	rc = hwtr_debug_find(buf, len, path, NULL, 1, &dbg, &dlen, from,
	    sizeof(from));
	free(dbg);
	if (rc > 0)
		rc = px_add(p, "debug", path, 1, "debug info left out: this "
		    "machine has its debug file '%s', the archive does not; "
		    "elsewhere its source lines are missing", from);
	else if (hwtr_elf_debuglink(buf, len, link, sizeof(link), &crc) > 0)
		rc = px_add(p, "debug", path, 0, "no source lines: it names "
		    "the debug file '%s', which neither the archive nor this "
		    "machine has", link);
	else
		rc = 0;
	free(buf);
	return (rc < 0 ? rc : 0);
}

static int
px_debug(sqlite3 *db, const char *archive, struct px *p)
{
	sqlite3_stmt *st = NULL;
	struct hwtr_ar *ar = NULL;
	int rc;

	if ((rc = hwtr_ar_open(&ar, archive, NULL)) < 0) {
		hwtr_ar_close(ar);
		return (rc);
	}
	if (sqlite3_prepare_v2(db, PX_NOLINES_SQL, -1, &st, NULL) !=
	    SQLITE_OK) {
		hwtr_ar_close(ar);
		return (-HWTR_E_DB);
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		if ((rc = px_debug_one(ar, (const char *)sqlite3_column_text(st,
		    0), (const char *)sqlite3_column_text(st, 1), p)) < 0)
			break;
	sqlite3_finalize(st);
	hwtr_ar_close(ar);
	if (rc < 0)
		return (rc);
	return (rc == SQLITE_DONE ? 0 : -HWTR_E_DB);
}

int
hwtr_ix_portable(struct hwtr_ix *ix, const char *archive, const char *db,
    struct hwtr_ix_miss **mp, size_t *np)
{
	struct px p = { NULL, 0, 0 };
	sqlite3 *h = NULL;
	size_t i;
	int rc;

	*mp = NULL;
	*np = 0;
	ix->opts.archive_only = 1;
	if ((rc = hwtr_ix_run(ix, archive, db)) < 0)
		return (rc);
	if ((rc = sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL)) !=
	    SQLITE_OK) {
		char why[HWTR_ERRMSG_MAX];

		snprintf(ix->err, sizeof(ix->err), "cannot open '%s': %s", db,
		    hwtr_ix_sqlite_open_why(h, rc, db, why, sizeof(why)));
		sqlite3_close(h);
		return (-HWTR_E_DB);
	}
	if ((rc = px_images(h, &p)) < 0 || (rc = px_debug(h, archive,
	    &p)) < 0) {
		snprintf(ix->err, sizeof(ix->err), "'%s': cannot list what is "
		    "missing: %s", db, rc == -HWTR_E_DB ? sqlite3_errmsg(h) :
		    hwtr_errstr(rc));
		goto out;
	}
	/* What the index run could not do with the archive alone. */
	for (i = 0; i < ix->nproblems && rc >= 0; i++)
		rc = px_add(&p, "note", NULL, 0, "%s", ix->problems[i]);
out:
	sqlite3_close(h);
	if (rc < 0) {
		hwtr_ix_miss_free(p.v, p.n);
		return (rc);
	}
	*mp = p.v;
	*np = p.n;
	return (0);
}

void
hwtr_ix_miss_free(struct hwtr_ix_miss *m, size_t n)
{
	size_t i;

	for (i = 0; m != NULL && i < n; i++) {
		free(m[i].path);
		free(m[i].detail);
	}
	free(m);
}
