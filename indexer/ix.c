/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * hwtr_ix_run(): archive in, hwtrace-db(5) database out.
 *
 * 1. Read the archive: streams, images (extracted to a private temporary
 *    directory because libipt's image section cache maps files), sideband.
 * 2. Replay the sideband into processes, threads and mappings over time;
 *    a forked child inherits its parent's mappings, exec drops them.
 * 3. Decode every stream on a pool of threads (decode.c).
 * 4. Merge the results in stream order (global block ids), symbolize the
 *    blocks and write every table in one transaction to "DB.partial",
 *    renamed to DB when complete.
 * The output depends only on the archive: -j changes nothing but speed.
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "hwtr_common.h"
#include "hwtr_ix.h"
#include "hwtr_stream.h"
#include "ix_run.h"
#include "ix_image.h"
#include "ix_jit.h"
#include "ix_pipeline.h"
#include "ix_write.h"
#include "segdec.h"
#include "ix_cputhread.h"

int
hwtr_ix_new(struct hwtr_ix **ixp, const struct hwtr_ix_opts *opts)
{
	struct hwtr_ix *ix;

	*ixp = NULL;
	ix = calloc(1, sizeof(*ix));
	if (ix == NULL)
		return (-HWTR_E_NOMEM);
	if (opts != NULL)
		ix->opts = *opts;
	if (ix->opts.decoder != NULL && !ix_segdec_known(ix->opts.decoder)) {
		free(ix);
		return (-HWTR_E_INVAL);
	}
	*ixp = ix;
	return (0);
}

static void
clear_problems(struct hwtr_ix *ix)
{
	size_t i;

	for (i = 0; i < ix->nproblems; i++)
		free(ix->problems[i]);
	free(ix->problems);
	ix->problems = NULL;
	ix->nproblems = 0;
}

void
hwtr_ix_free(struct hwtr_ix *ix)
{
	if (ix == NULL)
		return;
	clear_problems(ix);
	free(ix);
}

const char *
hwtr_ix_errmsg(const struct hwtr_ix *ix)
{
	return (ix != NULL ? ix->err : "no indexer");
}

const struct hwtr_ix_stats *
hwtr_ix_stats(const struct hwtr_ix *ix)
{
	return (&ix->stats);
}

size_t
hwtr_ix_nproblems(const struct hwtr_ix *ix)
{
	return (ix->nproblems);
}

const char *
hwtr_ix_problem(const struct hwtr_ix *ix, size_t i)
{
	return (i < ix->nproblems ? ix->problems[i] : NULL);
}

/*
 * CPU mode: the parts of each CPU stream (cpusplit.c), each with the
 * thread row of its pid/tid, made here when the sideband named it only
 * in switch records.
 */
static int
cpu_split(struct run *r)
{
	struct ix_cpart *p;
	struct ix_thread *t;
	size_t i;
	int rc;

	if ((rc = ix_cpusplit_build(&r->cs, r->ar, r->ix->opts.cancel,
	    r->ix->err, sizeof(r->ix->err))) < 0)
		return (rc);
	for (i = 0; i < r->cs.nparts; i++) {
		p = &r->cs.parts[i];
		p->db_stream = hwtr_ar_stream(r->ar, p->stream)->id;
		p->stream_thread = (int64_t)r->ufirst[p->stream] + 1;
		if (p->tid < 0)
			continue;
		if ((t = ix_thread_get(r->im, p->pid, p->tid, 1)) == NULL)
			return (-HWTR_E_NOMEM);
		p->thread = t->id;
	}
	return (0);
}

static void
run_free(struct run *r)
{
	size_t i;

	/* The workers first: they read the layers freed below. */
	if (r->pl != NULL)
		ix_end_pipeline(r);
	ix_cpusplit_free(&r->cs);
	ix_pipe_free(r->pl);
	for (i = 0; r->ures != NULL && i < r->nunits; i++) {
		free(r->ures[i].err);
		free(r->ures[i].problem);
		free(r->ures[i].name);
	}
	free(r->ures);
	free(r->ustream);
	free(r->ufirst);
	ix_stitch_free(&r->st);
	ix_writer_free(r->wr);
	/* The images' copies first, then their directory. */
	ix_images_free(r->im);
	if (r->tmpdir[0] != '\0')
		rmdir(r->tmpdir);
	if (r->ar != NULL)
		hwtr_ar_close(r->ar);
}

/*
 * Temporary files of runs that were killed (SIGKILL, a CI job's time
 * limit, the OOM killer): a directory "hwtrace-ix.XXXXXX" in TMPDIR with
 * a copy of every image, and "DB.partial.XXXXXX" beside the database.  A
 * run holds a flock(2) on each, from right after creating it until it
 * removes or renames it, and the kernel drops the lock when the process
 * dies however it dies; so one of ours that nobody holds and that is older
 * than IX_STALE_S (the moments between creating and locking it) is left
 * over, and the next run removes it.  Another run's live files are locked
 * and stay.
 */
#define IX_TMP_PREFIX	"hwtrace-ix."
#define IX_PARTIAL	".partial."
#define IX_STALE_S	10

/* Remove stale "hwtrace-ix.XXXXXX" directories from @parent. */
static void
sweep_tmpdirs(struct hwtr_ix *ix, const char *parent)
{
	struct dirent *de;
	DIR *d;

	if ((d = opendir(parent)) == NULL)
		return;
	while ((de = readdir(d)) != NULL)
		if (strncmp(de->d_name, IX_TMP_PREFIX,
		    sizeof(IX_TMP_PREFIX) - 1) == 0 &&
		    strlen(de->d_name) == sizeof(IX_TMP_PREFIX) - 1 + 6 &&
		    hwtr_stale_rmdir(dirfd(d), de->d_name, IX_STALE_S))
			hwtr_logf(&ix->opts.log, HWTR_LOG_INFO, "removed "
			    "'%s/%s', left by an index run that did not end",
			    parent, de->d_name);
	closedir(d);
}

/* Remove stale "DB.partial.XXXXXX" files beside @db. */
static void
sweep_partials(struct hwtr_ix *ix, const char *db)
{
	char dir[PATH_MAX];
	const char *base, *slash;
	struct dirent *de;
	size_t blen;
	DIR *d;
	int fd;

	slash = strrchr(db, '/');
	base = slash != NULL ? slash + 1 : db;
	if (slash == NULL)
		snprintf(dir, sizeof(dir), ".");
	else if ((size_t)(slash - db) >= sizeof(dir))
		return;
	else
		snprintf(dir, sizeof(dir), "%.*s", slash == db ? 1 :
		    (int)(slash - db), db);
	blen = strlen(base);
	if (blen == 0 || (d = opendir(dir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, base, blen) != 0 ||
		    strncmp(de->d_name + blen, IX_PARTIAL,
		    sizeof(IX_PARTIAL) - 1) != 0 ||
		    strlen(de->d_name) != blen + sizeof(IX_PARTIAL) - 1 + 6 ||
		    !hwtr_stale_open(dirfd(d), de->d_name, 0, IX_STALE_S, &fd))
			continue;
		if (unlinkat(dirfd(d), de->d_name, 0) == 0)
			hwtr_logf(&ix->opts.log, HWTR_LOG_INFO, "removed "
			    "'%s/%s', left by an index run that did not end",
			    dir, de->d_name);
		close(fd);
	}
	closedir(d);
}

/* One index run; *@again when a unit left for later was not empty. */
/*
 * The database, in one transaction: the static tables (the workers
 * decoding the first segments meanwhile), then the dynamic ones as they
 * are stitched, then what is known only at the end
 * (blocks with their counts, streams, threads, meta) and the indexes.
 */
static int
write_db(struct run *r, const char *tmp, int fd)
{
	int rc;

	if ((rc = ix_db_open(r, tmp, fd)) < 0)
		return (rc);
	rc = ix_db_prepare(r);
	if (rc == 0)
		rc = ix_run_pipeline(r);
	if (rc == 0)
		rc = ix_cpu_threads(r);
	rc = ix_db_finish(r, tmp, rc);
	ix_end_pipeline(r);
	return (rc);
}

static int
run_once(struct hwtr_ix *ix, const char *archive, const char *db,
    int nospec, int *again)
{
	struct run r;
	struct hwtr_ar_opts ao;
	char *tmp = NULL;
	const char *td;
	int rc, fd = -1, tmpfd = -1;

	clear_problems(ix);
	memset(&ix->stats, 0, sizeof(ix->stats));
	ix->err[0] = '\0';
	memset(&r, 0, sizeof(r));
	r.ix = ix;
	r.archive = archive;
	if ((r.pl = ix_pipe_new()) == NULL ||
	    (r.wr = ix_writer_new()) == NULL) {
		ix_err(ix, "%s", hwtr_errstr(-HWTR_E_NOMEM));
		run_free(&r);
		return (-HWTR_E_NOMEM);
	}
	r.pl->nospec = nospec;
	memset(&ao, 0, sizeof(ao));
	ao.cancel = ix->opts.cancel;
	rc = hwtr_ar_open(&r.ar, archive, &ao);
	if (rc < 0) {
		const char *why = r.ar ? hwtr_ar_errmsg(r.ar) :
		    hwtr_errstr(rc);

		/*
		 * The reader's message names the file when the failure is
		 * the file's own (cannot open it, not a regular file): say
		 * it once, not "cannot open 'x': cannot open 'x': ...".
		 */
		hwtr_open_failed(archive, why, ix->err, sizeof(ix->err));
		goto out;
	}
	/* For caches (hwtrace-db(5) meta archive_id). */
	if ((rc = hwtr_ar_identity(archive, r.archive_id, ix->err,
	    sizeof(ix->err))) < 0)
		goto out;
	if (!hwtr_ar_status(r.ar)->complete)
		ix_problem(ix, "archive '%s' is truncated (%s): indexing what "
		    "it holds", archive, hwtr_ar_status(r.ar)->why ?
		    hwtr_ar_status(r.ar)->why : "no end member");
	td = getenv("TMPDIR");
	if (td == NULL || *td == '\0' || strlen(td) >= 40)
		td = "/tmp";
	sweep_tmpdirs(ix, td);
	sweep_partials(ix, db);
	snprintf(r.tmpdir, sizeof(r.tmpdir), "%s/" IX_TMP_PREFIX "XXXXXX",
	    td);
	if (mkdtemp(r.tmpdir) == NULL) {
		ix_err(ix, "cannot create a directory '%s': %s", r.tmpdir,
		    strerror(errno));
		r.tmpdir[0] = '\0';
		rc = -HWTR_E_IO;
		goto out;
	}
	/* In use until run_free() removes it (see sweep_tmpdirs()). */
	if ((tmpfd = open(r.tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 ||
	    flock(tmpfd, LOCK_EX | LOCK_NB) != 0) {
		ix_err(ix, "cannot lock '%s': %s", r.tmpdir, strerror(errno));
		rc = -HWTR_E_IO;
		goto out;
	}
	r.nstreams = hwtr_ar_nstreams(r.ar);
	ix->stats.streams = r.nstreams;
	if ((r.im = ix_images_new(ix, r.ar, r.nstreams)) == NULL) {
		rc = -HWTR_E_NOMEM;
		goto out;
	}
	if ((rc = ix_make_units(&r)) < 0 ||
	    (rc = ix_load_images(r.im, r.tmpdir)) < 0 ||
	    (rc = ix_replay_sideband(r.im, r.nunits, r.ustream)) < 0 ||
	    (rc = ix_jit_load(r.im, r.tmpdir)) < 0 ||
	    (rc = cpu_split(&r)) < 0 ||
	    (rc = ix_add_sections(r.im)) < 0 || (rc = ix_plan(&r)) < 0)
		goto out;
	if (ix->opts.cancel != NULL && *ix->opts.cancel) {
		rc = -HWTR_E_INTR;
		goto out;
	}
	/*
	 * The decoders have what they need: the workers start on the first
	 * segments while this thread loads the images' symbols and lines,
	 * makes the database and writes its static tables.  From here on,
	 * whatever fails, run_free() stops them before freeing what they
	 * read.
	 */
	if ((rc = ix_start_pipeline(&r)) < 0 ||
	    (rc = ix_load_symbols(r.im)) < 0)
		goto out;
	if ((fd = hwtr_out_create(db, HWTR_OUT_RANDOM | HWTR_OUT_SEEKABLE,
	    &tmp)) < 0) {
		/*
		 * Its temporary name's template would only puzzle: what
		 * fails is the database's directory (missing, not
		 * writable, full), or TMPDIR for a device or a FIFO.
		 */
		int e = errno;
		const char *tdir = getenv("TMPDIR");

		if (tdir == NULL || *tdir == '\0')
			tdir = "/tmp";
		if (hwtr_out_is_stream(db))
			ix_err(ix, "cannot create a temporary file in '%s' "
			    "for '%s': %s", tdir, db, strerror(e));
		else
			ix_err(ix, "cannot create '%s': %s", db, strerror(e));
		rc = -HWTR_E_IO;
		goto out;
	}
	/* Locked until renamed or removed (see sweep_partials()). */
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		ix_err(ix, "cannot lock '%s': %s", tmp, strerror(errno));
		rc = -HWTR_E_IO;
		goto out;
	}
	rc = write_db(&r, tmp, fd);
	if (rc == 0 && ix->opts.cancel != NULL && *ix->opts.cancel)
		rc = -HWTR_E_INTR;
	if (rc == 0 &&
	    hwtr_out_commit_cancel(tmp, db, ix->opts.cancel) != 0) {
		ix_err(ix, "cannot move '%s' to '%s': %s", tmp, db,
		    strerror(errno));
		rc = -HWTR_E_IO;
	}
out:
	/* Whatever step a cancel request stopped, it is an interruption. */
	if (rc < 0 && ix->opts.cancel != NULL && *ix->opts.cancel)
		rc = -HWTR_E_INTR;
	if (rc < 0 && tmp != NULL)
		unlink(tmp);
	if (fd >= 0)
		close(fd);	/* and its lock, once renamed or removed */
	if (rc < 0 && ix->err[0] == '\0')
		ix_err(ix, "%s", hwtr_errstr(rc));
	free(tmp);
	*again = r.pl->spec_failed;
	run_free(&r);
	if (tmpfd >= 0)
		close(tmpfd);
	return (rc);
}

int
hwtr_ix_run(struct hwtr_ix *ix, const char *archive, const char *db)
{
	int rc, again = 0;

	if (ix == NULL || archive == NULL || db == NULL)
		return (-HWTR_E_INVAL);
	rc = run_once(ix, archive, db, 0, &again);
	if (again)
		rc = run_once(ix, archive, db, 1, &again);
	/* A database that could not be written is named ("disk is full"). */
	if (rc == -HWTR_E_DB && strstr(ix->err, db) == NULL) {
		char *m = strdup(ix->err);

		if (m != NULL)
			snprintf(ix->err, sizeof(ix->err), "'%s': %s", db, m);
		free(m);
	}
	return (rc);
}

