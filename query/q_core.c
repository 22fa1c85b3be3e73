/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Opening a hwtrace database or archive for questions, and the verbs'
 * shared lookups (symbols, threads, names, output files).  The database is
 * opened with SQLITE_OPEN_READONLY (and query_only on, q_db.c), so that
 * nothing a user types can change it; an archive is indexed once into a
 * cache beside it (q_lazy.c).  A result (q_res.c) is kept in memory as
 * cells in one text pool; hwtr_q_run keeps it whole, so that a failure
 * half-way never shows a partial answer, and hwtr_q_stream lets the verbs
 * that can hand it over in blocks of rows (q_res_stream, q_res_row_end),
 * so that a long answer starts at once and needs no more memory than a
 * block.
 */

#include <sqlite3.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>

#include "q_int.h"

/* --- symbols and suggestions --------------------------------------------- */

static size_t
q_lev(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j, *row, prev, cur, best;

	if (la > 256 || lb > 256)
		return ((size_t)-1);
	if ((row = malloc((lb + 1) * sizeof(*row))) == NULL)
		return ((size_t)-1);
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		prev = row[0];
		row[0] = i;
		for (j = 1; j <= lb; j++) {
			cur = row[j];
			best = prev + (a[i - 1] == b[j - 1] ? 0 : 1);
			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			prev = cur;
		}
	}
	best = row[lb];
	free(row);
	return (best);
}

/*
 * How far @cand is from @plain, or more than @lim: a name that contains
 * the word is within @lim (by what it adds); else the edit distance,
 * sought only when the lengths allow it.
 */
static size_t
q_suggest_dist(const char *plain, const char *cand, size_t lim)
{
	size_t lp = strlen(plain), lc = strlen(cand);

	if (strstr(cand, plain) != NULL || strcasestr(cand, plain) != NULL)
		return (lc - lp > lim ? lim : lc - lp);
	if ((lc > lp ? lc - lp : lp - lc) > lim)
		return (lim + 1);
	return (q_lev(plain, cand));
}

/*
 * The up to 3 names of @sql's first column closest to @word, as @word
 * would spell them (q_name_tail(): "area" of "int geo::Sq::area() const",
 * "Sq::area" for "Sq::aera", "main.work" for "main.wrk"; the whole name
 * where that says nothing): one that contains the word, or is within a
 * third of its length in edit distance, each named once.  Scans the
 * names once; symbol tables are small next to the trace.  Suggestions
 * that do not fit @out whole are left out.
 */
static void
q_suggest(struct hwtr_q *q, const char *sql, const char *word, char *out,
    size_t outlen)
{
	sqlite3_stmt *st;
	struct {
		char	*name;
		size_t	d;
	} best[3], tmp;
	struct q_pat *pat = NULL;
	size_t nbest = 0, d, k, lim, i, l, need;
	char *plain, *tail, *cand;
	const char *name;
	int rc;

	out[0] = '\0';
	if ((plain = malloc(strlen(word) + 1)) == NULL)
		return;
	/* The pattern without glob characters is what is compared. */
	for (i = 0, k = 0; word[i] != '\0'; i++)
		if (strchr("*?[]", word[i]) == NULL)
			plain[k++] = word[i];
	plain[k] = '\0';
	if (k == 0 || (pat = q_pat_new(plain)) == NULL ||
	    sqlite3_prepare_v2(q->db, sql, -1, &st, NULL) != SQLITE_OK) {
		q_pat_free(pat);
		free(plain);
		return;
	}
	lim = strlen(plain) / 3 + 1;
	while (sqlite3_step(st) == SQLITE_ROW) {
		if ((name = (const char *)sqlite3_column_text(st, 0)) == NULL)
			continue;
		if ((rc = q_name_tail(name, pat, &tail)) < 0)
			break;
		cand = rc > 0 ? tail : (char *)name;
		if ((d = q_suggest_dist(plain, cand, lim)) > lim) {
			free(tail);
			continue;
		}
		for (k = 0; k < nbest; k++)
			if (strcmp(best[k].name, cand) == 0)
				break;
		/* A name seen, or one no closer than the third: passed. */
		if (k < nbest || (nbest == 3 && (best[2].d < d ||
		    (best[2].d == d && strcmp(best[2].name, cand) < 0)))) {
			free(tail);
			continue;
		}
		if ((tmp.name = rc > 0 ? tail : strdup(name)) == NULL)
			break;
		tmp.d = d;
		if (nbest == 3)
			free(best[--nbest].name);
		/* Insert sorted by distance, then name. */
		for (k = nbest; k > 0 && (best[k - 1].d > d ||
		    (best[k - 1].d == d && strcmp(best[k - 1].name,
		    tmp.name) > 0)); k--)
			best[k] = best[k - 1];
		best[k] = tmp;
		nbest++;
	}
	sqlite3_finalize(st);
	q_pat_free(pat);
	free(plain);
	/* As many as fit, each with its quotes and what comes before. */
	for (k = 0, need = 2; k < nbest; k++) {
		need += strlen(best[k].name) + 20;
		if (need >= outlen)
			break;
	}
	for (i = 0; i < k; i++) {
		l = strlen(out);
		snprintf(out + l, outlen - l, "%s'%s'", i == 0 ?
		    "; did you mean " : i + 1 == k ? " or " : ", ",
		    best[i].name);
	}
	if (k > 0)
		strcat(out, "?");
	for (i = 0; i < nbest; i++)
		free(best[i].name);
}

static int
q_is_glob(const char *p)
{
	return (strpbrk(p, "*?[") != NULL);
}

/*
 * Aliases (the same address of the same image: "printf" and "_IO_printf")
 * are one function; a block or call names one of them.
 */
#define Q_SYM_ALIASES(w)						\
	"SELECT DISTINCT a.id FROM symbols s JOIN symbols a ON a.image = "	\
	"s.image AND a.addr = s.addr AND (a.kind = s.kind OR s.kind NOT IN "	\
	"('func', 'ifunc')) WHERE " w " ORDER BY a.id"

/*
 * The symbols a plain name (no glob) names, as "(id,id)" in @in: those
 * whose name contains its last component, sifted by q_name_match(), and
 * the one whose mangled name it is.
 */
static int
q_sym_plain(struct hwtr_q *q, const char *pattern, struct q_str *in)
{
	sqlite3_stmt *st;
	struct q_pat *pat;
	char *key;
	const char *name;
	int rc, m, n = 0;

	if ((key = q_name_key(pattern)) == NULL ||
	    (pat = q_pat_new(pattern)) == NULL) {
		free(key);
		return (q_fail(q, -HWTR_E_NOMEM, "out of memory"));
	}
	rc = q_prepare(q, &st, "SELECT id, name, mangled = ?1 FROM symbols "
	    "WHERE name = ?1 OR mangled = ?1 OR instr(name, ?2) > 0");
	if (rc < 0) {
		free(key);
		q_pat_free(pat);
		return (rc);
	}
	sqlite3_bind_text(st, 1, pattern, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, key, -1, SQLITE_TRANSIENT);
	q_str_puts(in, "(");
	m = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		name = (const char *)sqlite3_column_text(st, 1);
		if (sqlite3_column_int(st, 2) != 1 && (name == NULL ||
		    (m = q_pat_match(pat, name)) == 0))
			continue;
		if (m < 0)
			break;
		q_str_printf(in, "%s%lld", n++ ? "," : "",
		    (long long)sqlite3_column_int64(st, 0));
	}
	q_str_puts(in, ")");
	sqlite3_finalize(st);
	free(key);
	q_pat_free(pat);
	if (m < 0)
		return (q_fail(q, m, "out of memory"));
	if (rc != SQLITE_DONE)
		return (q_dbfail(q, "cannot read symbols"));
	return (n);
}

/* The ids @sql gives (bound to @pattern), appended to @s as "(id,id)". */
static int
q_sym_list(struct hwtr_q *q, const char *sql, const char *pattern,
    struct q_str *s)
{
	sqlite3_stmt *st;
	int rc, n = 0;

	if ((rc = q_prepare(q, &st, sql)) < 0)
		return (rc);
	if (sqlite3_bind_parameter_count(st) > 0)
		sqlite3_bind_text(st, 1, pattern, -1, SQLITE_TRANSIENT);
	q_str_puts(s, "(");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		q_str_printf(s, "%s%lld", n++ ? "," : "",
		    (long long)sqlite3_column_int64(st, 0));
	q_str_puts(s, ")");
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return (q_dbfail(q, "cannot read symbols"));
	if (s->err)
		return (q_fail(q, -HWTR_E_NOMEM, "out of memory"));
	return (n);
}

int
q_sym_ids(struct hwtr_q *q, const char *what, const char *pattern,
    char **listp)
{
	struct q_str s = { 0 }, in = { 0 };
	char sugg[512], *sql = NULL;
	int n = 0;

	*listp = NULL;
	/*
	 * A glob matches demangled names and mangled ones whole; a plain
	 * name as gdb's linespecs do (q_names.c): "count_words" is
	 * "shapes::count_words", "f" every overload of "ns::f".  Go's
	 * "(*T).M" is a plain name when no glob matches it.
	 */
	if (q_is_glob(pattern) && (n = q_sym_list(q, Q_SYM_ALIASES("s.name "
	    "GLOB ?1 OR s.mangled GLOB ?1 OR s.name = ?1"), pattern, &s)) < 0)
		goto out;
	if (n == 0 && (!q_is_glob(pattern) || strstr(pattern, "(*") != NULL) &&
	    (n = q_sym_plain(q, pattern, &in)) > 0) {
		free(s.p);
		memset(&s, 0, sizeof(s));
		if (in.err || asprintf(&sql, Q_SYM_ALIASES("s.id IN %s"),
		    in.p) < 0) {
			n = q_fail(q, -HWTR_E_NOMEM, "out of memory");
			goto out;
		}
		n = q_sym_list(q, sql, pattern, &s);
		free(sql);
	}
	if (n == 0) {
		q_suggest(q, "SELECT DISTINCT name FROM symbols WHERE kind IN "
		    "('func', 'ifunc', 'plt', 'notype')", pattern, sugg,
		    sizeof(sugg));
		n = q_fail(q, -HWTR_E_NOENT, "%s: no symbol matches '%s'%s",
		    what, pattern, sugg);
	}
out:
	free(in.p);
	if (n > 0)
		*listp = s.p;
	else
		free(s.p);
	return (n);
}
#undef Q_SYM_ALIASES

/*
 * The thread whose tid is @tid, into *@idp: one thread row must have it
 * (a CPU-mode thread and a thread of a stream of its own, or two
 * processes' threads, may share a tid: then its number must be given).
 */
int
q_thread_of_tid(struct hwtr_q *q, int64_t tid, int64_t *idp)
{
	int64_t n, lo, hi;
	int rc;

	if ((rc = q_int(q, &n, 0, "SELECT count(*) FROM threads WHERE "
	    "tid = ?", "i", tid)) < 0 ||
	    (rc = q_int(q, &lo, 0, "SELECT min(id) FROM threads WHERE "
	    "tid = ?", "i", tid)) < 0 ||
	    (rc = q_int(q, &hi, 0, "SELECT max(id) FROM threads WHERE "
	    "tid = ?", "i", tid)) < 0)
		return (rc);
	if (n == 0)
		return (q_fail(q, -HWTR_E_NOENT, "no thread has tid %lld (see "
		    "'threads')", (long long)tid));
	if (n > 1)
		return (q_fail(q, -HWTR_E_INVAL, "tid %lld is %lld threads "
		    "(numbers %lld to %lld; see 'threads'): give its number "
		    "with --thread", (long long)tid, (long long)n,
		    (long long)lo, (long long)hi));
	*idp = lo;
	return (0);
}

int
q_wf_open(struct hwtr_q *q, struct q_wfile *wf, const char *path)
{
	int e;

	wf->path = path;
	wf->tmp = NULL;
	/* Exclusively, never through a link, mode 0600. */
	if ((wf->fd = hwtr_out_create(path, 0, &wf->tmp)) < 0) {
		e = errno;
		wf->tmp = NULL;
		return (q_fail(q, -HWTR_E_IO, "cannot create '%s.partial': %s",
		    path, strerror(e)));
	}
	return (0);
}

int
q_wf_write(struct hwtr_q *q, struct q_wfile *wf, const char *buf, size_t len)
{
	size_t off = 0;
	ssize_t w;

	while (off < len) {
		w = write(wf->fd, buf + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return (q_fail(q, -HWTR_E_IO, "cannot write '%s': %s",
			    wf->tmp != NULL ? wf->tmp : wf->path,
			    strerror(w < 0 ? errno : EIO)));
		off += (size_t)w;
	}
	return (0);
}

void
q_wf_abort(struct q_wfile *wf)
{
	if (wf->fd >= 0)
		close(wf->fd);
	wf->fd = -1;
	if (wf->tmp != NULL)
		unlink(wf->tmp);
	free(wf->tmp);
	wf->tmp = NULL;
}

int
q_wf_commit(struct hwtr_q *q, struct q_wfile *wf)
{
	int e, fd = wf->fd;

	wf->fd = -1;
	if (close(fd) != 0) {
		e = errno;
		q_fail(q, -HWTR_E_IO, "cannot write '%s': %s",
		    wf->tmp != NULL ? wf->tmp : wf->path, strerror(e));
		q_wf_abort(wf);
		return (-HWTR_E_IO);
	}
	if (hwtr_out_commit(wf->tmp, wf->path) != 0) {
		e = errno;
		q_fail(q, -HWTR_E_IO, "cannot rename '%s' to '%s': %s", wf->tmp,
		    wf->path, strerror(e));
		q_wf_abort(wf);
		return (-HWTR_E_IO);
	}
	free(wf->tmp);
	wf->tmp = NULL;
	return (0);
}

int
q_write_file(struct hwtr_q *q, const char *path, const char *buf, size_t len)
{
	struct q_wfile wf;
	int rc;

	if ((rc = q_wf_open(q, &wf, path)) < 0)
		return (rc);
	if ((rc = q_wf_write(q, &wf, buf, len)) < 0) {
		q_wf_abort(&wf);
		return (rc);
	}
	return (q_wf_commit(q, &wf));
}

/* --- opening -------------------------------------------------------------- */

enum q_kind { Q_KIND_DB, Q_KIND_ARCHIVE, Q_KIND_OTHER };

static int
q_sniff(const char *path, enum q_kind *kp, char *errbuf, size_t errlen)
{
	unsigned char h[16];
	struct stat st;
	ssize_t n;
	int fd;

	/* Never waits on a FIFO: anything but a regular file is refused. */
	if ((fd = hwtr_in_open(path, &st, errbuf, errlen)) < 0)
		return (fd);
	n = read(fd, h, sizeof(h));
	close(fd);
	if (n == 16 && memcmp(h, "SQLite format 3", 16) == 0)
		*kp = Q_KIND_DB;
	else if (n >= 4 && h[0] == 0x28 && h[1] == 0xb5 && h[2] == 0x2f &&
	    h[3] == 0xfd)
		*kp = Q_KIND_ARCHIVE;	/* zstd frame: hwtrace(5) */
	else
		*kp = Q_KIND_OTHER;
	return (0);
}

/*
 * Whether the cache @cache can answer for @archive: a database, newer than
 * the archive, made from this very archive (its meta archive_id is the
 * archive's identity: a stale cache of a replaced archive, even one given
 * the old time with cp -p, is indexed again).  A cache this user does not
 * own, or that is not a regular file, is refused: another user could have
 * planted it.  A partial database (meta partial: q_lazy.c) is usable only
 * as the partial cache (@tail).  1 usable, 0 index again, < 0 refused.
 */
static int
q_cache_usable(struct hwtr_q *q, const char *archive, const char *cache,
    int tail)
{
	struct stat sa, sc;
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	char id[HWTR_AR_ID_LEN], eb[256];
	const unsigned char *v;
	enum q_kind k;
	int ok = 0;

	if (lstat(cache, &sc) != 0)
		return (0);
	if (!S_ISREG(sc.st_mode))
		return (q_fail(q, -HWTR_E_PERM, "cache '%s' is not a regular "
		    "file: not used (remove it, or name another with "
		    "--db)", cache));
	if (sc.st_uid != geteuid())
		return (q_fail(q, -HWTR_E_PERM, "cache '%s' belongs to uid %ld, "
		    "not to this user (uid %ld): not trusted (remove it, or "
		    "name another with --db)", cache, (long)sc.st_uid,
		    (long)geteuid()));
	if (stat(archive, &sa) != 0)
		return (0);
	if (q_sniff(cache, &k, eb, sizeof(eb)) < 0 || k != Q_KIND_DB)
		return (0);
	if (sc.st_mtim.tv_sec < sa.st_mtim.tv_sec ||
	    (sc.st_mtim.tv_sec == sa.st_mtim.tv_sec &&
	    sc.st_mtim.tv_nsec < sa.st_mtim.tv_nsec))
		return (0);
	if (hwtr_ar_identity(archive, id, eb, sizeof(eb)) < 0)
		return (0);
	/* A cache written by an older hwtrace is indexed again too. */
	if (sqlite3_open_v2(cache, &db, SQLITE_OPEN_READONLY |
	    SQLITE_OPEN_NOFOLLOW, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) ==
	    SQLITE_OK && sqlite3_step(st) == SQLITE_ROW &&
	    sqlite3_column_int64(st, 0) == HWTR_DB_SCHEMA_VERSION)
		ok = 1;
	sqlite3_finalize(st);
	st = NULL;
	if (ok && !(sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE "
	    "key = 'archive_id'", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW &&
	    (v = sqlite3_column_text(st, 0)) != NULL &&
	    strcmp((const char *)v, id) == 0))
		ok = 0;
	sqlite3_finalize(st);
	st = NULL;
	if (ok && !tail && !(sqlite3_prepare_v2(db, "SELECT count(*) FROM "
	    "meta WHERE key = 'partial'", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0) == 0))
		ok = 0;
	sqlite3_finalize(st);
	sqlite3_close(db);
	if (!ok)
		hwtr_logf(&q->log, HWTR_LOG_INFO, "cache '%s' was not made from "
		    "'%s' as it is now", cache, archive);
	return (ok);
}

/*
 * One indexer per cache: "<cache>.lock" (made beside it, never through a
 * link, kept afterwards: removing it would let a later process lock
 * another file than a waiter holds) is locked with flock(2) before the
 * cache is checked again and made.  A query that finds it locked waits
 * for the other process, then uses the cache that process made.  The
 * kernel releases the lock when its holder dies, even of SIGKILL, so a
 * waiter is never left hanging; the wait polls so that a cancel request
 * stops it.  A lock file another user owns is not waited for.  *@fdp is
 * the locked descriptor, or -1 (no lock could be made: index anyway).
 */
static int
q_cache_lock(struct hwtr_q *q, int *fdp)
{
	struct timespec ts = { 0, 50 * 1000 * 1000 };
	struct stat st;
	char *lk;
	int fd, said = 0;

	*fdp = -1;
	if (asprintf(&lk, "%s.lock", q->dbpath) < 0)
		return (q_fail(q, -HWTR_E_NOMEM, "out of memory"));
	fd = open(lk, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
	    0600);
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    st.st_uid != geteuid()) {
		hwtr_logf(&q->log, HWTR_LOG_INFO, "lock '%s' not usable: "
		    "indexing without it", lk);
		if (fd >= 0)
			close(fd);
		free(lk);
		return (0);
	}
	while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		if (errno != EWOULDBLOCK && errno != EINTR) {
			close(fd);
			free(lk);
			return (0);
		}
		if (!said++)
			hwtr_logf(&q->log, HWTR_LOG_INFO, "waiting for another "
			    "hwtrace indexing into '%s'", q->dbpath);
		if (q->opts.cancel != NULL && *q->opts.cancel) {
			close(fd);
			q_fail(q, -HWTR_E_INTR, "interrupted while waiting for "
			    "'%s'", lk);
			free(lk);
			return (-HWTR_E_INTR);
		}
		nanosleep(&ts, NULL);
	}
	free(lk);
	*fdp = fd;
	return (0);
}

/* q_open_archive() once the lock is held: the caches may be ready now. */
static int
q_open_locked(struct hwtr_q *q, const char *path)
{
	const char *e = getenv("HWTRACE_QUERY_TAIL");
	unsigned long long v;
	uint64_t tail = Q_TAIL_BYTES;
	char *endp;
	int rc;

	if ((rc = q_cache_usable(q, path, q->dbpath, 0)) != 0)
		return (rc < 0 ? rc : 0);
	if (!q->opts.lazy) {
		if ((rc = q_lazy_index(q, path, q->dbpath, 0)) < 0)
			return (rc);
		if (unlink(q->tailpath) != 0 && errno != ENOENT)
			hwtr_logf(&q->log, HWTR_LOG_WARN, "cannot remove the "
			    "partial cache '%s': %s", q->tailpath,
			    strerror(errno));
		return (0);
	}
	free(q->dbpath);
	if ((q->dbpath = strdup(q->tailpath)) == NULL)
		return (q_fail(q, -HWTR_E_NOMEM, "out of memory"));
	if ((rc = q_cache_usable(q, path, q->tailpath, 1)) != 0)
		return (rc < 0 ? rc : 0);
	if (e != NULL) {
		v = strtoull(e, &endp, 0);
		if (*e != '\0' && *endp == '\0' && v > 0)
			tail = v;
	}
	if ((rc = q_lazy_index(q, path, q->tailpath, tail)) < 0)
		return (rc);
	/* Nothing was cut: the full cache after all. */
	if ((rc = q_db_open(q, q->tailpath)) < 0 || (rc = q_lazy_open(q)) < 0)
		return (rc);
	sqlite3_close(q->db);
	q->db = NULL;
	if (!q->tail && hwtr_out_commit(q->tailpath, q->fullpath) == 0) {
		free(q->dbpath);
		if ((q->dbpath = strdup(q->fullpath)) == NULL)
			return (q_fail(q, -HWTR_E_NOMEM, "out of memory"));
	}
	return (0);
}

/*
 * Archive @path: its full cache (q->dbpath) when usable; else, for a lazy
 * verb, its partial cache "<cache>.tail" (made now when missing: the end
 * of each stream, HWTRACE_QUERY_TAIL bytes for tests), which becomes the
 * full cache when the archive was short enough to be decoded whole; else
 * a full index, which replaces a partial cache.  Anything but the first
 * look is done holding the cache's lock (q_cache_lock()).
 */
static int
q_open_archive(struct hwtr_q *q, const char *path)
{
	int rc, lk;

	if ((q->archive = strdup(path)) == NULL ||
	    (q->fullpath = strdup(q->dbpath)) == NULL ||
	    asprintf(&q->tailpath, "%s.tail", q->dbpath) < 0) {
		q->tailpath = NULL;
		return (q_fail(q, -HWTR_E_NOMEM, "out of memory"));
	}
	if ((rc = q_cache_usable(q, path, q->dbpath, 0)) != 0)
		return (rc < 0 ? rc : 0);
	if ((rc = q_cache_lock(q, &lk)) < 0)
		return (rc);
	rc = q_open_locked(q, path);
	if (lk >= 0)
		close(lk);
	return (rc);
}

int
hwtr_q_open(struct hwtr_q **qp, const char *path,
    const struct hwtr_q_opts *opts, char *errbuf, size_t errlen)
{
	struct hwtr_q *q;
	enum q_kind kind;
	char eb[HWTR_ERRMSG_MAX];
	int rc;

	*qp = NULL;
	if (errbuf == NULL || errlen == 0) {
		errbuf = eb;
		errlen = sizeof(eb);
	}
	errbuf[0] = '\0';
	if ((rc = q_sniff(path, &kind, errbuf, errlen)) < 0)
		return (rc);
	if ((q = calloc(1, sizeof(*q))) == NULL) {
		snprintf(errbuf, errlen, "out of memory");
		return (-HWTR_E_NOMEM);
	}
	if (opts != NULL) {
		q->log = opts->log;
		q->opts = *opts;
		q->opts.cache = NULL;
	}
	switch (kind) {
	case Q_KIND_DB:
		q->dbpath = strdup(path);
		break;
	case Q_KIND_ARCHIVE:
		if (opts != NULL && opts->cache != NULL) {
			q->db_given = 1;
			q->dbpath = strdup(opts->cache);
		}
		else if (asprintf(&q->dbpath, "%s.db", path) < 0)
			q->dbpath = NULL;
		break;
	default:
		snprintf(errbuf, errlen, "'%s' is neither a hwtrace database "
		    "nor a hwtrace archive", path);
		free(q);
		return (-HWTR_E_FORMAT);
	}
	if (q->dbpath == NULL) {
		rc = q_fail(q, -HWTR_E_NOMEM, "out of memory");
		goto fail;
	}
	if (kind == Q_KIND_ARCHIVE && (rc = q_open_archive(q, path)) < 0)
		goto fail;
	if ((rc = q_db_open(q, q->dbpath)) < 0 || (rc = q_lazy_open(q)) < 0)
		goto fail;
	*qp = q;
	return (0);
fail:
	snprintf(errbuf, errlen, "%s", q->msg);
	hwtr_q_close(q);
	return (rc);
}

int
hwtr_q_close(struct hwtr_q *q)
{
	int rc = 0;

	if (q == NULL)
		return (0);
	if (q->db != NULL && sqlite3_close(q->db) != SQLITE_OK)
		rc = -HWTR_E_DB;
	free(q->dbpath);
	free(q->cut);
	free(q->archive);
	free(q->fullpath);
	free(q->tailpath);
	q_lost_clear(&q->lost);
	free(q);
	return (rc);
}

void
hwtr_q_req_init(struct hwtr_q_req *req, enum hwtr_q_verb verb)
{
	memset(req, 0, sizeof(*req));
	req->verb = verb;
	req->thread = -1;
	req->n = -1;
	req->depth = -1;
	req->t_from = -1;
	req->t_to = -1;
	req->from = -1;
	req->count = -1;
	req->min_dur = -1;
	req->max_depth = -1;
	req->at = -1;
	req->to = -1;
	req->tid = -1;
	req->sql_timeout_ms = -1;
	req->sql_max_length = HWTR_Q_SQL_MAX_LENGTH;
}

/* --- symbol names --------------------------------------------------------- */

static size_t
q_name_slot(const struct q_names *nm, int64_t id)
{
	uint64_t h = (uint64_t)id * 0x9e3779b97f4a7c15ULL;
	size_t i = (size_t)(h >> 20) & (nm->cap - 1);

	while (nm->tab[i].used && nm->tab[i].id != id)
		i = (i + 1) & (nm->cap - 1);
	return (i);
}

const struct q_name *
q_name_get(struct hwtr_q *q, struct q_names *nm, int64_t id)
{
	struct q_name *e, *ot;
	const char *s;
	size_t i, ocap, len;
	char **nb;

	if (nm->cap == 0 || (nm->n + 1) * 2 > nm->cap) {
		ot = nm->tab;
		ocap = nm->cap;
		nm->cap = ocap ? ocap * 2 : 256;
		if ((nm->tab = calloc(nm->cap, sizeof(*nm->tab))) == NULL) {
			nm->tab = ot;
			nm->cap = ocap;
			q_fail(q, -HWTR_E_NOMEM, "out of memory");
			return (NULL);
		}
		for (i = 0; i < ocap; i++)
			if (ot[i].used)
				nm->tab[q_name_slot(nm, ot[i].id)] = ot[i];
		free(ot);
	}
	e = &nm->tab[q_name_slot(nm, id)];
	if (e->used)
		return (e);
	if (nm->st == NULL && q_prepare(q, &nm->st, "SELECT name FROM symbols "
	    "WHERE id = ?1") < 0)
		return (NULL);
	sqlite3_reset(nm->st);
	sqlite3_bind_int64(nm->st, 1, id);
	switch (sqlite3_step(nm->st)) {
	case SQLITE_ROW:
		s = (const char *)sqlite3_column_text(nm->st, 0);
		break;
	case SQLITE_DONE:
		s = NULL;
		break;
	default:
		q_dbfail(q, "cannot read symbols");
		return (NULL);
	}
	e->used = 1;
	e->id = id;
	e->name = NULL;
	e->len = 0;
	e->w = 0;
	e->hash = 0;
	if (s != NULL) {
		len = strlen(s);
		/*
		 * Names point into the pool: a pool about to move is kept
		 * as it is and a new one started.
		 */
		if (nm->pool.p != NULL &&
		    nm->pool.len + len + 1 > nm->pool.cap) {
			nb = realloc(nm->blocks, (nm->nblocks + 1) *
			    sizeof(*nb));
			if (nb == NULL) {
				e->used = 0;
				q_fail(q, -HWTR_E_NOMEM, "out of memory");
				return (NULL);
			}
			nm->blocks = nb;
			nm->blocks[nm->nblocks++] = nm->pool.p;
			memset(&nm->pool, 0, sizeof(nm->pool));
		}
		if (nm->pool.p == NULL) {
			nm->pool.cap = len + 1 > 65536 ? len + 1 : 65536;
			if ((nm->pool.p = malloc(nm->pool.cap)) == NULL) {
				nm->pool.cap = 0;
				e->used = 0;
				q_fail(q, -HWTR_E_NOMEM, "out of memory");
				return (NULL);
			}
		}
		e->name = nm->pool.p + nm->pool.len;
		memcpy(nm->pool.p + nm->pool.len, s, len + 1);
		nm->pool.len += len + 1;
		e->len = (uint32_t)len;
		e->w = (uint32_t)q_dwidth(s, len);
		e->hash = q_hash(s, len);
	}
	nm->n++;
	return (e);
}

void
q_names_free(struct q_names *nm)
{
	size_t i;

	sqlite3_finalize(nm->st);
	free(nm->tab);
	free(nm->pool.p);
	for (i = 0; i < nm->nblocks; i++)
		free(nm->blocks[i]);
	free(nm->blocks);
	memset(nm, 0, sizeof(*nm));
}
