/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Lazy answers: the last moments of a trace from its end alone.
 *
 * The indexer cuts every Intel PT stream at PSBs, and a PSB resets the
 * decoder's state, so the blocks decoded from a PSB on are those a whole
 * run decodes there.  `last` and `bt` ask about the end of each thread:
 * for an archive never indexed they are answered from a partial database
 * of the last Q_TAIL_BYTES of every stream (hwtr_ix_opts.tail), written
 * beside the cache as "<cache>.tail" and kept for the next question.
 *
 * What a partial database cannot know is what came before its window: a
 * position counted from the thread's start (seq, insn, calls.id) and the
 * frames entered before the window.  The verbs show those as unknown for
 * the threads whose trace was cut (hwtr_tail_cut() in SQL), and `bt` ends
 * such a thread's stack with a row saying that the frames above were not
 * decoded.  We chose not to decode backwards until every frame's caller
 * is known: the outermost frames of a thread (main, its callers) are
 * entered at its very start, so for any useful program that search ends
 * by decoding the whole thread, at the cost of a full index without its
 * answer.  The frames entered inside the window are exact; the rest is
 * one full index away, and any verb that needs the whole history (or
 * `last -n` longer than the window) builds it, which replaces the partial
 * cache.
 */

#include <sqlite3.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "q_int.h"

/*
 * Index @archive into @db: the whole of it (@tail 0), or the last @tail
 * bytes of each stream.  Progress goes where q->opts says.
 */
int
q_lazy_index(struct hwtr_q *q, const char *archive, const char *db,
    uint64_t tail)
{
	struct hwtr_ix_opts xo;
	struct hwtr_ix *ix = NULL;
	int rc;

	memset(&xo, 0, sizeof(xo));
	xo.jobs = q->opts.jobs;
	xo.log = q->log;
	xo.cancel = q->opts.cancel;
	xo.progress = q->opts.progress;
	xo.progress_arg = q->opts.progress_arg;
	xo.tail = tail;
	hwtr_logf(&q->log, HWTR_LOG_INFO, "indexing %s'%s' into '%s'",
	    tail ? "the end of " : "", archive, db);
	if ((rc = hwtr_ix_new(&ix, &xo)) < 0)
		return (q_fail(q, rc, "cannot index '%s': %s", archive,
		    hwtr_errstr(rc)));
	/*
	 * The database beside the archive could not be made or written (a
	 * directory not the user's, a full disk, a path too long for
	 * SQLite): say how to put it elsewhere.  The indexer's messages
	 * about the database name it; one about the archive or TMPDIR
	 * gets no hint, which would not help.
	 */
	if ((rc = hwtr_ix_run(ix, archive, db)) < 0)
		q_fail(q, rc, "cannot index '%s': %s%s", archive,
		    hwtr_ix_errmsg(ix), !q->db_given && (rc == -HWTR_E_IO ||
		    rc == -HWTR_E_DB) && strstr(hwtr_ix_errmsg(ix), db) != NULL ?
		    " (name another database with --db)" : "");
	hwtr_ix_free(ix);
	return (rc < 0 ? rc : 0);
}

static int
q_cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x < y ? -1 : x > y);
}

int
q_lazy_cut(const struct hwtr_q *q, int64_t thread)
{
	return (q->ncut > 0 && bsearch(&thread, q->cut, q->ncut,
	    sizeof(*q->cut), q_cmp_i64) != NULL);
}

/* hwtr_tail_cut(thread): 1 when only the end of its trace was decoded. */
static void
q_sql_tail_cut(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const struct hwtr_q *q = sqlite3_user_data(ctx);

	(void)argc;
	sqlite3_result_int(ctx, q_lazy_cut(q, sqlite3_value_int64(argv[0])));
}

/*
 * After the database is opened: whether it is partial (meta partial), and
 * then which threads were cut (meta tail_from: "STREAM:OFFSET ...", the
 * streams decoded from OFFSET on).  Registers hwtr_tail_cut() either way.
 */
int
q_lazy_open(struct hwtr_q *q)
{
	sqlite3_stmt *st = NULL;
	const char *v, *p;
	char *end;
	unsigned long long sid;
	size_t cap = 0;
	int rc;

	free(q->cut);
	q->cut = NULL;
	q->ncut = 0;
	q->tail = 0;
	if (sqlite3_create_function(q->db, "hwtr_tail_cut", 1, SQLITE_UTF8 |
	    SQLITE_DETERMINISTIC, q, q_sql_tail_cut, NULL, NULL) != SQLITE_OK)
		return (q_dbfail(q, "cannot set up the connection"));
	if ((rc = q_prepare(q, &st, "SELECT value FROM meta WHERE key = "
	    "'tail_from' AND EXISTS (SELECT 1 FROM meta WHERE key = "
	    "'partial' AND value = 'tail')")) < 0)
		return (rc);
	if (sqlite3_step(st) != SQLITE_ROW ||
	    (v = (const char *)sqlite3_column_text(st, 0)) == NULL) {
		sqlite3_finalize(st);
		return (0);
	}
	q->tail = 1;
	/* The threads of each stream listed. */
	for (p = v; *p != '\0'; p = end) {
		sqlite3_stmt *th = NULL;

		while (*p == ' ')
			p++;
		if (*p == '\0')
			break;
		errno = 0;
		sid = strtoull(p, &end, 10);
		if (end == p || *end != ':' || errno != 0) {
			/* v belongs to st: the message first. */
			rc = q_fail(q, -HWTR_E_FORMAT, "'%s': meta tail_from "
			    "is malformed: '%s'", q->dbpath, v);
			sqlite3_finalize(st);
			return (rc);
		}
		while (*end != '\0' && *end != ' ')
			end++;
		/*
		 * And in CPU mode the threads with a part of the stream's
		 * time: their history is cut where the stream's is.
		 */
		if ((rc = q_prepare(q, &th, "SELECT id FROM threads WHERE "
		    "stream = ?1 UNION SELECT thread FROM cpu_parts WHERE "
		    "stream = ?1 AND thread IS NOT NULL")) < 0) {
			sqlite3_finalize(st);
			return (rc);
		}
		sqlite3_bind_int64(th, 1, (int64_t)sid);
		while (sqlite3_step(th) == SQLITE_ROW) {
			if (hwtr_grow(&q->cut, &cap, q->ncut + 1,
			    sizeof(*q->cut)) < 0) {
				sqlite3_finalize(th);
				sqlite3_finalize(st);
				return (q_fail(q, -HWTR_E_NOMEM,
				    "out of memory"));
			}
			q->cut[q->ncut++] = sqlite3_column_int64(th, 0);
		}
		sqlite3_finalize(th);
	}
	sqlite3_finalize(st);
	if (q->ncut > 1)
		qsort(q->cut, q->ncut, sizeof(*q->cut), q_cmp_i64);
	return (0);
}

/*
 * Whether the partial database answers @req: last (its -n blocks or
 * instructions are within every cut thread's window) and bt at the end.
 */
static int
q_lazy_answers(struct hwtr_q *q, const struct hwtr_q_req *req, int *yes)
{
	int64_t n, short_threads;
	int rc;

	*yes = 0;
	switch (req->verb) {
	case HWTR_Q_BT:
		if (req->at >= 0)
			return (0);
		/* A cut thread whose window decoded nothing has no end. */
		if ((rc = q_int(q, &short_threads, 0, "SELECT count(*) FROM "
		    "threads WHERE (?1 < 0 OR id = ?1) AND hwtr_tail_cut(id) "
		    "AND blocks = 0", "i", req->thread)) < 0)
			return (rc);
		*yes = short_threads == 0;
		return (0);
	case HWTR_Q_LAST:
		n = req->n >= 0 ? req->n : 10;
		rc = q_int(q, &short_threads, 0, req->insns ?
		    "SELECT count(*) FROM threads WHERE (?1 < 0 OR id = ?1) "
		    "AND hwtr_tail_cut(id) AND insns < ?2" :
		    "SELECT count(*) FROM threads WHERE (?1 < 0 OR id = ?1) "
		    "AND hwtr_tail_cut(id) AND blocks < ?2", "ii",
		    req->thread, n);
		if (rc < 0)
			return (rc);
		*yes = short_threads == 0;
		return (0);
	default:
		return (0);
	}
}

/*
 * Before a verb runs on a partial database: nothing when it answers
 * @req; else the archive is indexed whole into the cache, which replaces
 * the partial one, and opened in its place.  A partial database opened
 * as a database (no archive) says what it cannot answer.
 */
int
q_lazy_need(struct hwtr_q *q, const struct hwtr_q_req *req)
{
	char *np;
	int yes, rc;

	if (!q->tail)
		return (0);
	if ((rc = q_lazy_answers(q, req, &yes)) < 0)
		return (rc);
	if (yes)
		return (0);
	if (q->archive == NULL) {
		sqlite3_stmt *st = NULL;
		const char *src = NULL;

		if (q_prepare(q, &st, "SELECT value FROM meta WHERE key = "
		    "'source_archive'") == 0 && sqlite3_step(st) == SQLITE_ROW)
			src = (const char *)sqlite3_column_text(st, 0);
		q_fail(q, -HWTR_E_INVAL, "'%s' is a partial database (only the "
		    "end of each thread's trace was decoded: meta partial); "
		    "this question needs the whole history: ask it of the "
		    "archive ('%s')", q->dbpath, src ? src : "?");
		sqlite3_finalize(st);
		return (-HWTR_E_INVAL);
	}
	if ((np = strdup(q->fullpath)) == NULL)
		return (q_fail(q, -HWTR_E_NOMEM, "out of memory"));
	if ((rc = q_lazy_index(q, q->archive, np, 0)) < 0) {
		free(np);
		return (rc);
	}
	sqlite3_close(q->db);
	q->db = NULL;
	free(q->dbpath);
	q->dbpath = np;
	if ((rc = q_db_open(q, q->dbpath)) < 0 || (rc = q_lazy_open(q)) < 0)
		return (rc);
	/* The full index replaces the partial one. */
	if (q->tailpath != NULL && unlink(q->tailpath) != 0 && errno != ENOENT)
		hwtr_logf(&q->log, HWTR_LOG_WARN, "cannot remove the partial "
		    "cache '%s': %s", q->tailpath, strerror(errno));
	return (0);
}
