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

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <intel-pt.h>
#include <limits.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "hwtr_common.h"
#include "hwtr_ix.h"
#include "../format/hwtr_stream.h"
#include "schema.sql.h"

struct hwtr_ix {
	struct hwtr_ix_opts opts;
	char		err[1024];
	struct hwtr_ix_stats stats;
	char		**problems;
	size_t		nproblems;
};

/* A thread as the database sees it. */
struct ix_thread {
	int64_t		id;
	int		stream;		/* index, -1: sideband only */
	int32_t		pid, tid;
	char		*name;
	int		has_start, has_end;
	uint64_t	start_tsc, end_tsc;
	const char	*exit_kind;
	int32_t		exit_value;
};

struct ix_proc {
	int32_t		pid, ppid;
	char		*path, *comm;
	int		has_start, has_end;
	uint64_t	start_tsc, end_tsc;
	const char	*exit_kind;
	int32_t		exit_value;
};

struct ix_sbev {
	const char	*kind;
	int32_t		pid, tid;
	uint64_t	tsc;
	int		stream;		/* index or -1 */
	char		*detail;
};

struct ix_img {
	char		*file;		/* extracted copy */
	uint8_t		*bytes;		/* and in memory */
	size_t		size;
	int		present;
	struct ix_elf	elf;
	int64_t		sym_base;	/* symbols.id of elf.syms[0] */
	int64_t		*file_ids;	/* files.id of elf.files[i] */
};

/* What a global block is in the images (symbolize()). */
struct ix_gsym {
	int		has_image;
	int64_t		image;		/* images.id */
	uint64_t	image_addr;
	int64_t		symbol;		/* 0: none */
	uint64_t	sym_offset;
	int64_t		file;		/* 0: none */
	int32_t		line;
};

/* CoreSight batches of a unit, published and not yet stitched. */
struct ix_batch {
	struct ix_seg_out out;
	struct ix_batch	*next;
};

struct ix_bq {
	struct ix_batch	*head, *tail;
	size_t		n;
};

/* A segment of a stream, decoded by one worker. */
struct ix_seg {
	size_t		stream, piece;
	uint64_t	start, end;	/* stream offsets */
	int		has_limit;	/* end is the next segment's PSB */
	int		first_of_stream, lost_before;
	uint64_t	lost_bytes;
	int		done;
	struct ix_seg_out *outs;	/* one per unit of the stream */
	size_t		nouts, nleft;
	struct ix_bq	*bq;		/* CoreSight: per unit, under lock */
	int		*touched;	/* per unit: something came (atomic) */
};

/* An archive stream: where its segments are, its bytes. */
struct ix_sres {
	uint64_t	bytes;
	size_t		seg0, nseg;
};

/*
 * What the database says of a unit once it is stitched.  A unit is what
 * the database calls a stream and gives a thread of its own: one per
 * archive stream, but one per trace ID for a CoreSight buffer
 * (ix_cs_units()).
 */
struct ix_ures {
	int		rc;
	char		*err, *problem;
	char		*name;		/* CoreSight trace ID, or NULL */
	int		cs_batched;	/* a batch came: a CoreSight unit */
	int		trace_id;
	enum hwtr_trace_format format;
	int64_t		exec_blocks, exec_insns, errors, gaps, ncalls;
	int64_t		max_depth;
	uint64_t	undecoded;
	int		has_first, has_last;
	uint64_t	first_tsc, last_tsc;
};

struct stmt {
	sqlite3_stmt	*st;
	int		i;
};

/*
 * An events row waiting for its batch.  A trace with many system calls
 * has two events per call (disabled, resumed: 0.42 M rows, a third of the
 * writer's time on the benchmark when each was an INSERT of its own: the
 * statement's start and end cost more than the row).  Rows wait, and go
 * in INSERTs of 2^k rows (k < IX_EV_LOG) before any other row is written,
 * so that every table's rows still reach the file in the same order: the
 * same pages, the same bytes.
 */
#define IX_EV_LOG	6
#define IX_EV_BATCH	(1u << (IX_EV_LOG - 1))
#define IX_EV_VAR	8	/* parameters of a row (seq ... detail) */

/*
 * Calls rows are batched the same way, for the same reason: a call is
 * about 200 instructions of real code (8.9 M rows on gzip of 8 MiB), and
 * one INSERT per row spent as much in the statement's start and end as
 * in the row.  Pending events and pending calls never coexist: each kind
 * flushes the other before it queues, and any other row flushes both.
 */
#define IX_CA_LOG	5
#define IX_CA_BATCH	(1u << (IX_CA_LOG - 1))
#define IX_CA_VAR	20	/* parameters of a calls row */
struct ix_carow {
	int64_t		idx;
	struct ix_call	c;
};
struct ix_evrow {
	int64_t		seq, insn;
	const char	*kind;		/* static */
	int		has_offset, has_ip, has_tsc;
	uint64_t	offset, ip, tsc;
	char		*detail;	/* malloc'd or NULL */
};

/*
 * The sideband replay's indexes, so that it costs O(log n) per record
 * whatever the archive holds: processes by pid and threads by tid (open
 * addressing; slots hold index + 1), and the mappings still open in a
 * treap ordered by (pid, start, index) (nodes parallel to run.maps;
 * links hold index + 1).  @work counts the nodes the replay visited: an
 * archive whose mappings overlap so that it would take hours is refused.
 */
struct ix_tnode {
	size_t		left, right;
	uint32_t	prio;
};

struct ix_replay {
	size_t		*ph, phcap, *th, thcap;
	struct ix_tnode	*tn;
	size_t		ctn, root;
	size_t		*hits, nhits, chits;
	uint64_t	work;
};

#define IX_REPLAY_WORK	(1ULL << 28)

struct run {
	struct hwtr_ix	*ix;
	struct hwtr_ar	*ar;
	const char	*archive;
	char		archive_id[HWTR_AR_ID_LEN];
	char		tmpdir[64];
	struct pt_image_section_cache *isc;
	struct ix_img	*imgs;
	size_t		nimgs;
	const uint8_t	**img_bytes;
	size_t		*img_len;
	struct ix_map	*maps;
	size_t		nmaps, cmaps;
	int		*isid_map;	/* isid -> index in maps, -1 */
	size_t		nisid;
	struct ix_proc	*procs;
	size_t		nprocs, cprocs;
	struct ix_thread *threads;
	size_t		nthreads, cthreads;
	struct ix_replay rp;		/* the replay's indexes */
	struct ix_sbev	*sbev;
	size_t		nsbev, csbev;
	uint64_t	*lost;		/* per stream */
	/* Streams, their segments, the workers. */
	size_t		nstreams;
	struct ix_sres	*res;
	size_t		nunits;
	size_t		*ustream;	/* unit -> archive stream index */
	size_t		*ufirst;	/* archive stream -> its first unit */
	struct ix_ures	*ures;
	const struct ix_map ***jmaps;
	struct ix_seg	*segs;
	size_t		nsegs;
	struct hwtr_sv	*sv;		/* the streams' bytes and segments */
	uint64_t	seg_size;
	size_t		next_seg;	/* the next one a worker takes */
	size_t		stitched;	/* segments replayed by the writer */
	size_t		window;		/* segments decoded ahead at most */
	size_t		cs_batch;	/* CoreSight elements per batch */
	size_t		wseg, wunit;	/* where the writer is, under lock */
	int		wbusy;		/* it is in segment wseg */
	int		nospec;		/* no unit left for later */
	int		spec_failed;	/* a unit left for later was not empty */
	int		abort;
	uint64_t	bytes_done;
	volatile uint64_t *wprogress;	/* per worker, in its segment */
	size_t		nworkers;
	pthread_mutex_t	lock;
	pthread_cond_t	work_cv, done_cv;
	/* The writer. */
	struct ix_stitch st;
	size_t		cur;		/* unit being stitched */
	int64_t		call_base;
	struct timespec	last_report;
	struct ix_gsym	*gs;
	size_t		cgs;
	uint64_t	*errips;	/* decode errors' IPs, for warn_missing() */
	size_t		nerrips, cerrips;
	struct stmt	s_ch, s_ts, s_br, s_bc;
	struct stmt	s_ev;		/* one events row (sideband's) */
	struct stmt	s_evn[IX_EV_LOG];	/* 2^k events rows */
	struct ix_evrow	evq[IX_EV_BATCH];	/* events rows not written */
	size_t		nevq;
	struct stmt	s_can[IX_CA_LOG];	/* 2^k calls rows */
	struct ix_carow	caq[IX_CA_BATCH];	/* calls rows not written */
	size_t		ncaq;
	struct stmt	s_cy;		/* cycles */
	struct stmt	s_sy;		/* symbols of call targets */
	int64_t		next_sym;	/* symbols.id of the next one */
	/* Call targets named so far: (image << 48 ^ addr) + 1, id. */
	uint64_t	*ct_key;
	int64_t		*ct_id;
	size_t		nct, ctcap;
	int64_t		ncycles;	/* cycles rows so far */
	/* Global file names. */
	char		**files;
	size_t		nfiles, cfiles;
	uint32_t	*ftab;
	size_t		fcap;
	sqlite3		*db;
};

static void
ix_err(struct hwtr_ix *ix, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
ix_err(struct hwtr_ix *ix, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ix->err, sizeof(ix->err), fmt, ap);
	va_end(ap);
}

static int
ix_problem(struct hwtr_ix *ix, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int
ix_problem(struct hwtr_ix *ix, const char *fmt, ...)
{
	va_list ap;
	char *s, **p;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (s == NULL)
		return (-HWTR_E_NOMEM);
	p = realloc(ix->problems, (ix->nproblems + 1) * sizeof(*p));
	if (p == NULL) {
		free(s);
		return (-HWTR_E_NOMEM);
	}
	ix->problems = p;
	p[ix->nproblems++] = s;
	hwtr_logf(&ix->opts.log, HWTR_LOG_WARN, "%s", s);
	return (0);
}

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

int
ix_grow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t n;
	void *q;

	if (need <= *cap)
		return (0);
	n = *cap ? *cap * 2 : 16;
	while (n < need)
		n *= 2;
	q = realloc(*p, n * elem);
	if (q == NULL)
		return (-HWTR_E_NOMEM);
	*p = q;
	*cap = n;
	return (0);
}

static const char *
stream_name(const struct hwtr_stream_desc *sd, char *buf, size_t len)
{
	if (sd->name != NULL)
		return (sd->name);
	snprintf(buf, len, "stream %u", sd->id);
	return (buf);
}

/* ----------------------------------------------------------------- */
/* Images                                                             */

static int
load_images(struct run *r)
{
	size_t i;
	char err[256];

	r->nimgs = hwtr_ar_nimages(r->ar);
	r->imgs = calloc(r->nimgs ? r->nimgs : 1, sizeof(*r->imgs));
	r->img_bytes = calloc(r->nimgs + 1, sizeof(*r->img_bytes));
	r->img_len = calloc(r->nimgs + 1, sizeof(*r->img_len));
	if (r->imgs == NULL || r->img_bytes == NULL || r->img_len == NULL)
		return (-HWTR_E_NOMEM);
	for (i = 0; i < r->nimgs; i++) {
		const struct hwtr_image_desc *id = hwtr_ar_image(r->ar, i);
		struct ix_img *im = &r->imgs[i];
		void *buf = NULL, *dbg = NULL;
		size_t len = 0, dlen = 0, mi;
		char dname[HWTR_IMAGE_KEY_MAX + 16];
		const char *base;
		int rc, fd;

		if (r->ix->opts.cancel != NULL && *r->ix->opts.cancel)
			return (-HWTR_E_INTR);

		/*
		 * Written out in bounded memory (an image may declare 4 GiB)
		 * and mapped: the pages the decoder and the symbolizer read
		 * are all that is resident.  The SHA-256 is checked on the
		 * way, as verify checks it.
		 */
		if (asprintf(&im->file, "%s/%zu", r->tmpdir, i) < 0) {
			im->file = NULL;
			return (-HWTR_E_NOMEM);
		}
		if ((fd = open(im->file, O_RDWR | O_CREAT | O_EXCL |
		    O_CLOEXEC, 0600)) < 0) {
			ix_err(r->ix, "cannot write '%s': %s", im->file,
			    strerror(errno));
			return (-HWTR_E_IO);
		}
		rc = hwtr_ar_extract_image(r->ar, i, fd);
		if (rc == -HWTR_E_INTR) {
			close(fd);
			return (rc);
		}
		if (rc == -HWTR_E_IO) {
			ix_err(r->ix, "cannot write '%s': %s", im->file,
			    hwtr_ar_errmsg(r->ar));
			close(fd);
			return (rc);
		}
		if (rc < 0) {
			ix_problem(r->ix, "image '%s' (%s): cannot be read: %s",
			    id->path ? id->path : "?", id->key,
			    hwtr_ar_errmsg(r->ar));
			close(fd);
			unlink(im->file);
			free(im->file);
			im->file = NULL;
			continue;
		}
		len = (size_t)id->size;
		if (len > 0 && (buf = mmap(NULL, len, PROT_READ, MAP_PRIVATE,
		    fd, 0)) == MAP_FAILED) {
			ix_err(r->ix, "cannot map '%s': %s", im->file,
			    strerror(errno));
			close(fd);
			return (-HWTR_E_IO);
		}
		close(fd);
		im->size = len;
		im->present = 1;
		base = id->path != NULL ? strrchr(id->path, '/') : NULL;
		base = base != NULL ? base + 1 : id->path;
		/* Its separate debug file, when the archive has one. */
		snprintf(dname, sizeof(dname), "aux/debug/%s", id->key);
		if (hwtr_ar_find_member(r->ar, dname, &mi) == 0 &&
		    hwtr_ar_read_member(r->ar, mi, &dbg, &dlen) < 0) {
			ix_problem(r->ix, "image '%s' (%s): its debug file "
			    "cannot be read: %s", id->path ? id->path : "?",
			    id->key, hwtr_ar_errmsg(r->ar));
			dbg = NULL;
			dlen = 0;
		}
		if (ix_elf_load(&im->elf, buf, len, dbg, dlen, base, err,
		    sizeof(err)) < 0)
			ix_problem(r->ix, "image '%s' (%s): %s",
			    id->path ? id->path : "?", id->key, err);
		free(dbg);
		im->bytes = buf;
		r->img_bytes[i] = buf;
		r->img_len[i] = len;
	}
	return (0);
}

/* ----------------------------------------------------------------- */
/* Sideband replay                                                    */

static size_t
id_hash(int32_t id, size_t cap)
{
	return ((size_t)(((uint32_t)id * 0x9e3779b1u) >> 7) & (cap - 1));
}

/*
 * Look @id up in the table @h (slots of index + 1) whose entries' keys
 * @key(@arg, index) gives; 0 when absent, else index + 1.
 */
static size_t
id_find(const size_t *h, size_t cap, int32_t id,
    int32_t (*key)(const struct run *, size_t), const struct run *r)
{
	size_t k;

	if (cap == 0)
		return (0);
	for (k = id_hash(id, cap); h[k] != 0; k = (k + 1) & (cap - 1))
		if (key(r, h[k] - 1) == id)
			return (h[k]);
	return (0);
}

/* Add index @idx under @id (absent); the table stays at most half full. */
static int
id_add(size_t **hp, size_t *capp, size_t n, int32_t id, size_t idx,
    int32_t (*key)(const struct run *, size_t), const struct run *r)
{
	size_t *h = *hp, cap = *capp, ncap, k, i;

	if (2 * (n + 1) > cap) {
		ncap = cap ? 2 * cap : 64;
		if ((h = calloc(ncap, sizeof(*h))) == NULL)
			return (-HWTR_E_NOMEM);
		for (i = 0; i < cap; i++) {
			if ((*hp)[i] == 0)
				continue;
			for (k = id_hash(key(r, (*hp)[i] - 1), ncap); h[k] != 0;
			    k = (k + 1) & (ncap - 1))
				;
			h[k] = (*hp)[i];
		}
		free(*hp);
		*hp = h;
		*capp = cap = ncap;
	}
	for (k = id_hash(id, cap); h[k] != 0; k = (k + 1) & (cap - 1))
		;
	h[k] = idx + 1;
	return (0);
}

static int32_t
proc_key(const struct run *r, size_t i)
{
	return (r->procs[i].pid);
}

static int32_t
thread_key(const struct run *r, size_t i)
{
	return (r->threads[i].tid);
}

/* Index a thread added to r->threads (the first of a tid wins). */
static int
thread_indexed(struct run *r, size_t i)
{
	if (r->threads[i].tid < 0 || id_find(r->rp.th, r->rp.thcap,
	    r->threads[i].tid, thread_key, r) != 0)
		return (0);
	return (id_add(&r->rp.th, &r->rp.thcap, i, r->threads[i].tid, i,
	    thread_key, r));
}

static struct ix_proc *
proc_get(struct run *r, int32_t pid)
{
	size_t i;
	struct ix_proc *p;

	if ((i = id_find(r->rp.ph, r->rp.phcap, pid, proc_key, r)) != 0)
		return (&r->procs[i - 1]);
	if (ix_grow((void **)&r->procs, &r->cprocs, r->nprocs + 1,
	    sizeof(*p)) < 0)
		return (NULL);
	p = &r->procs[r->nprocs];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->ppid = -1;
	if (id_add(&r->rp.ph, &r->rp.phcap, r->nprocs, pid, r->nprocs,
	    proc_key, r) < 0)
		return (NULL);
	r->nprocs++;
	return (p);
}

static struct ix_proc *
proc_find(struct run *r, int32_t pid)
{
	size_t i;

	if ((i = id_find(r->rp.ph, r->rp.phcap, pid, proc_key, r)) != 0)
		return (&r->procs[i - 1]);
	return (NULL);
}

static struct ix_thread *
thread_get(struct run *r, int32_t pid, int32_t tid, int create)
{
	size_t i;
	struct ix_thread *t;

	if (tid >= 0 && (i = id_find(r->rp.th, r->rp.thcap, tid, thread_key,
	    r)) != 0)
		return (&r->threads[i - 1]);
	if (!create || tid < 0)
		return (NULL);
	if (ix_grow((void **)&r->threads, &r->cthreads, r->nthreads + 1,
	    sizeof(*t)) < 0)
		return (NULL);
	t = &r->threads[r->nthreads];
	memset(t, 0, sizeof(*t));
	t->id = (int64_t)++r->nthreads;
	t->stream = -1;
	t->pid = pid;
	t->tid = tid;
	if (thread_indexed(r, r->nthreads - 1) < 0)
		return (NULL);
	return (t);
}

static int
sb_event(struct run *r, const char *kind, const struct hwtr_sb_rec *rec,
    int stream, const char *detail)
{
	struct ix_sbev *e;

	if (ix_grow((void **)&r->sbev, &r->csbev, r->nsbev + 1, sizeof(*e)) < 0)
		return (-HWTR_E_NOMEM);
	e = &r->sbev[r->nsbev++];
	e->kind = kind;
	e->pid = rec->pid;
	e->tid = rec->tid;
	e->tsc = rec->time;
	e->stream = stream;
	e->detail = detail != NULL ? strdup(detail) : NULL;
	return (0);
}

static int
find_image(struct run *r, const struct hwtr_sb_rec *rec)
{
	char key[HWTR_IMAGE_KEY_MAX];
	size_t i;
	int k;

	if (rec->u.mmap.image != NULL &&
	    (k = hwtr_ar_find_image(r->ar, rec->u.mmap.image)) >= 0)
		return (k);
	if (rec->u.mmap.build_id_len > 0 &&
	    rec->u.mmap.build_id_len <= HWTR_BUILD_ID_MAX) {
		strcpy(key, "bid-");
		for (i = 0; i < rec->u.mmap.build_id_len; i++)
			snprintf(key + 4 + 2 * i, 3, "%02x",
			    rec->u.mmap.build_id[i]);
		if ((k = hwtr_ar_find_image(r->ar, key)) >= 0)
			return (k);
	}
	if (rec->u.mmap.path != NULL) {
		for (i = 0; i < r->nimgs; i++) {
			const struct hwtr_image_desc *id = hwtr_ar_image(r->ar, i);

			if (id->path != NULL &&
			    strcmp(id->path, rec->u.mmap.path) == 0)
				return ((int)i);
		}
	}
	return (-1);
}

/* The open mappings' treap (struct ix_replay). */

static uint32_t
tn_prio(size_t i)
{
	uint64_t z = (uint64_t)i + 0x9e3779b97f4a7c15ULL;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return ((uint32_t)(z ^ (z >> 31)));
}

/* Map @a against the key (@pid, @start, @idx): < 0, 0, > 0. */
static int
tn_cmp(const struct run *r, size_t a, int32_t pid, uint64_t start, size_t idx)
{
	const struct ix_map *m = &r->maps[a];

	if (m->pid != pid)
		return (m->pid < pid ? -1 : 1);
	if (m->start != start)
		return (m->start < start ? -1 : 1);
	return (a < idx ? -1 : a > idx ? 1 : 0);
}

static size_t
tn_insert(struct run *r, size_t node, size_t i)
{
	struct ix_tnode *tn = r->rp.tn, *n;
	size_t c;

	if (node == 0) {
		tn[i].left = tn[i].right = 0;
		tn[i].prio = tn_prio(i);
		return (i + 1);
	}
	n = &tn[node - 1];
	if (tn_cmp(r, i, r->maps[node - 1].pid, r->maps[node - 1].start,
	    node - 1) < 0) {
		n->left = tn_insert(r, n->left, i);
		if (tn[n->left - 1].prio > n->prio) {
			c = n->left;
			n->left = tn[c - 1].right;
			tn[c - 1].right = node;
			return (c);
		}
	} else {
		n->right = tn_insert(r, n->right, i);
		if (tn[n->right - 1].prio > n->prio) {
			c = n->right;
			n->right = tn[c - 1].left;
			tn[c - 1].left = node;
			return (c);
		}
	}
	return (node);
}

static size_t
tn_merge(struct run *r, size_t a, size_t b)
{
	struct ix_tnode *tn = r->rp.tn;

	if (a == 0)
		return (b);
	if (b == 0)
		return (a);
	if (tn[a - 1].prio > tn[b - 1].prio) {
		tn[a - 1].right = tn_merge(r, tn[a - 1].right, b);
		return (a);
	}
	tn[b - 1].left = tn_merge(r, a, tn[b - 1].left);
	return (b);
}

static size_t
tn_erase(struct run *r, size_t node, size_t i)
{
	struct ix_tnode *tn = r->rp.tn;
	int c;

	if (node == 0)
		return (0);
	c = tn_cmp(r, i, r->maps[node - 1].pid, r->maps[node - 1].start,
	    node - 1);
	if (c == 0)
		return (tn_merge(r, tn[node - 1].left, tn[node - 1].right));
	if (c < 0)
		tn[node - 1].left = tn_erase(r, tn[node - 1].left, i);
	else
		tn[node - 1].right = tn_erase(r, tn[node - 1].right, i);
	return (node);
}

/* Collect the open mappings of @pid starting in [@lo, @hi] into rp.hits. */
static int
tn_range(struct run *r, size_t node, int32_t pid, uint64_t lo, uint64_t hi)
{
	const struct ix_map *m;
	int rc;

	if (node == 0)
		return (0);
	if (++r->rp.work > IX_REPLAY_WORK)
		return (-HWTR_E_LIMIT);
	m = &r->maps[node - 1];
	if (m->pid < pid || (m->pid == pid && m->start < lo))
		return (tn_range(r, r->rp.tn[node - 1].right, pid, lo, hi));
	if (m->pid > pid || m->start > hi)
		return (tn_range(r, r->rp.tn[node - 1].left, pid, lo, hi));
	if ((rc = tn_range(r, r->rp.tn[node - 1].left, pid, lo, hi)) < 0)
		return (rc);
	if (ix_grow((void **)&r->rp.hits, &r->rp.chits, r->rp.nhits + 1,
	    sizeof(*r->rp.hits)) < 0)
		return (-HWTR_E_NOMEM);
	r->rp.hits[r->rp.nhits++] = node - 1;
	return (tn_range(r, r->rp.tn[node - 1].right, pid, lo, hi));
}

static int
replay_limit(struct run *r)
{
	ix_err(r->ix, "sideband: the mappings overlap so much that replaying "
	    "them would visit more than %llu of them (the indexer's limit): "
	    "refused", (unsigned long long)IX_REPLAY_WORK);
	return (-HWTR_E_LIMIT);
}

/* Close the open mappings of @pid that lie inside [@lo, @hi) at @t. */
static int
close_maps(struct run *r, int32_t pid, uint64_t lo, uint64_t hi, uint64_t t)
{
	struct ix_map *m;
	size_t k;
	int rc;

	r->rp.nhits = 0;
	if ((rc = tn_range(r, r->rp.root, pid, lo, hi)) < 0)
		return (rc == -HWTR_E_LIMIT ? replay_limit(r) : rc);
	for (k = 0; k < r->rp.nhits; k++) {
		m = &r->maps[r->rp.hits[k]];
		if (m->end <= hi) {
			m->has_to = 1;
			m->to_tsc = t;
			r->rp.root = tn_erase(r, r->rp.root, r->rp.hits[k]);
		}
	}
	return (0);
}

static struct ix_map *
new_map(struct run *r)
{
	struct ix_map *m;

	if (ix_grow((void **)&r->maps, &r->cmaps, r->nmaps + 1, sizeof(*m)) < 0 ||
	    ix_grow((void **)&r->rp.tn, &r->rp.ctn, r->nmaps + 1,
	    sizeof(*r->rp.tn)) < 0)
		return (NULL);
	m = &r->maps[r->nmaps];
	memset(m, 0, sizeof(*m));
	m->id = (int64_t)++r->nmaps;
	m->image = -1;
	return (m);
}

/* Mapping @m (the last one made) is open: into the treap. */
static void
map_opened(struct run *r, struct ix_map *m)
{
	r->rp.root = tn_insert(r, r->rp.root, (size_t)(m - r->maps));
}

static int
cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return (x < y ? -1 : x > y);
}

static int
stream_of(struct run *r, uint32_t id)
{
	size_t i;

	for (i = 0; i < r->nstreams; i++)
		if (hwtr_ar_stream(r->ar, i)->id == id)
			return ((int)i);
	return (-1);
}

static int
is_cs_unit(const struct run *r, size_t u)
{
	return (hwtr_ar_stream(r->ar, r->ustream[u])->format ==
	    HWTR_TF_CORESIGHT && (r->ures[u].name != NULL ||
	    r->ures[u].cs_batched));
}

/*
 * The database's stream id of unit @u: the archive's, or for a CoreSight
 * trace ID 256 * (its buffer's id + 1) + trace ID.
 */
static int64_t
unit_id(const struct run *r, size_t u)
{
	const struct hwtr_stream_desc *sd = hwtr_ar_stream(r->ar,
	    r->ustream[u]);

	if (is_cs_unit(r, u))
		return (((int64_t)sd->id + 1) * 256 + r->ures[u].trace_id);
	return (sd->id);
}

static int
make_units(struct run *r)
{
	size_t s, n, k, *order;

	r->ufirst = calloc(r->nstreams + 1, sizeof(*r->ufirst));
	if (r->ufirst == NULL)
		return (-HWTR_E_NOMEM);
	for (s = 0; s < r->nstreams; s++) {
		const struct hwtr_stream_desc *sd = hwtr_ar_stream(r->ar, s);

		n = 1;
		if (sd->format == HWTR_TF_CORESIGHT) {
			if ((order = calloc(sd->cs.nsources + 1,
			    sizeof(*order))) == NULL)
				return (-HWTR_E_NOMEM);
			n = ix_cs_units(sd, order);
			free(order);
			if (n == 0)
				n = 1;
		}
		r->ufirst[s] = r->nunits;
		r->nunits += n;
	}
	r->ustream = calloc(r->nunits + 1, sizeof(*r->ustream));
	r->ures = calloc(r->nunits + 1, sizeof(*r->ures));
	if (r->ustream == NULL || r->ures == NULL)
		return (-HWTR_E_NOMEM);
	for (s = 0; s < r->nstreams; s++)
		for (k = r->ufirst[s]; k < (s + 1 < r->nstreams ?
		    r->ufirst[s + 1] : r->nunits); k++)
			r->ustream[k] = s;
	return (0);
}

static size_t
stream_units(const struct run *r, size_t s)
{
	return ((s + 1 < r->nstreams ? r->ufirst[s + 1] : r->nunits) -
	    r->ufirst[s]);
}

static int
replay_sideband(struct run *r)
{
	size_t i, n = hwtr_ar_nsideband(r->ar), j, nm;
	struct ix_proc *p, *pp;
	struct ix_thread *t;
	struct ix_map *m;
	char det[64];
	int rc;

	/* Threads of the units first: their ids follow the units. */
	for (i = 0; i < r->nunits; i++) {
		const struct hwtr_stream_desc *sd = hwtr_ar_stream(r->ar,
		    r->ustream[i]);

		if (ix_grow((void **)&r->threads, &r->cthreads, r->nthreads + 1,
		    sizeof(*t)) < 0)
			return (-HWTR_E_NOMEM);
		t = &r->threads[r->nthreads];
		memset(t, 0, sizeof(*t));
		t->id = (int64_t)++r->nthreads;
		t->stream = (int)i;
		t->pid = sd->pid;
		t->tid = sd->tid;
		if (thread_indexed(r, r->nthreads - 1) < 0)
			return (-HWTR_E_NOMEM);
	}
	for (i = 0; i < n; i++) {
		const struct hwtr_sb_rec *rec = hwtr_ar_sideband_rec(r->ar, i);

		if ((i & 4095) == 0 && r->ix->opts.cancel != NULL &&
		    *r->ix->opts.cancel)
			return (-HWTR_E_INTR);
		switch (rec->type) {
		case HWTR_SB_PROC_START:
			if ((p = proc_get(r, rec->pid)) == NULL)
				return (-HWTR_E_NOMEM);
			p->ppid = rec->u.proc_start.ppid;
			p->has_start = 1;
			p->start_tsc = rec->time;
			/*
			 * A forked child has its parent's name and image until
			 * it execs, as the kernel says (no record comes).
			 */
			if (p->ppid >= 0 && (p->comm == NULL ||
			    p->path == NULL) &&
			    (pp = proc_find(r, p->ppid)) != NULL) {
				if (p->comm == NULL && pp->comm != NULL &&
				    (p->comm = strdup(pp->comm)) == NULL)
					return (-HWTR_E_NOMEM);
				if (p->path == NULL && pp->path != NULL &&
				    (p->path = strdup(pp->path)) == NULL)
					return (-HWTR_E_NOMEM);
			}
			/*
			 * A forked child starts with its parent's mappings
			 * (the open ones, in the order they were made).
			 */
			if (p->ppid < 0)
				break;
			r->rp.nhits = 0;
			if ((rc = tn_range(r, r->rp.root, p->ppid, 0,
			    UINT64_MAX)) < 0)
				return (rc == -HWTR_E_LIMIT ? replay_limit(r) :
				    rc);
			if (r->rp.nhits > 1)
				qsort(r->rp.hits, r->rp.nhits,
				    sizeof(*r->rp.hits), cmp_size);
			nm = r->rp.nhits;
			for (j = 0; j < nm; j++) {
				struct ix_map old = r->maps[r->rp.hits[j]];

				if ((m = new_map(r)) == NULL)
					return (-HWTR_E_NOMEM);
				old.id = m->id;
				*m = old;
				m->pid = rec->pid;
				m->has_from = 1;
				m->from_tsc = rec->time;
				map_opened(r, m);
			}
			break;
		case HWTR_SB_PROC_EXIT:
			if ((p = proc_get(r, rec->pid)) == NULL)
				return (-HWTR_E_NOMEM);
			p->has_end = 1;
			p->end_tsc = rec->time;
			p->exit_kind = rec->u.exit.kind == HWTR_EXIT_CODE ?
			    "code" : rec->u.exit.kind == HWTR_EXIT_SIGNAL ?
			    "signal" : NULL;
			p->exit_value = rec->u.exit.value;
			if ((rc = close_maps(r, rec->pid, 0, UINT64_MAX,
			    rec->time)) < 0)
				return (rc);
			break;
		case HWTR_SB_THREAD_START:
		case HWTR_SB_THREAD_EXIT:
			if ((t = thread_get(r, rec->pid, rec->tid, 1)) == NULL)
				break;
			if (rec->type == HWTR_SB_THREAD_START) {
				t->has_start = 1;
				t->start_tsc = rec->time;
			} else {
				t->has_end = 1;
				t->end_tsc = rec->time;
				t->exit_kind = rec->u.exit.kind ==
				    HWTR_EXIT_CODE ? "code" : rec->u.exit.kind ==
				    HWTR_EXIT_SIGNAL ? "signal" : NULL;
				t->exit_value = rec->u.exit.value;
			}
			break;
		case HWTR_SB_EXEC:
			if ((p = proc_get(r, rec->pid)) == NULL)
				return (-HWTR_E_NOMEM);
			free(p->path);
			p->path = rec->u.exec.path ?
			    strdup(rec->u.exec.path) : NULL;
			if ((rc = close_maps(r, rec->pid, 0, UINT64_MAX,
			    rec->time)) < 0)
				return (rc);
			if (sb_event(r, "exec", rec, -1, rec->u.exec.path) < 0)
				return (-HWTR_E_NOMEM);
			break;
		case HWTR_SB_COMM:
			if ((t = thread_get(r, rec->pid, rec->tid, 1)) != NULL &&
			    rec->u.comm.comm != NULL) {
				free(t->name);
				t->name = strdup(rec->u.comm.comm);
			}
			if (rec->pid == rec->tid && rec->u.comm.comm != NULL &&
			    (p = proc_get(r, rec->pid)) != NULL) {
				free(p->comm);
				p->comm = strdup(rec->u.comm.comm);
			}
			break;
		case HWTR_SB_MMAP:
			if ((rc = close_maps(r, rec->pid, rec->u.mmap.addr,
			    rec->u.mmap.addr + rec->u.mmap.len, rec->time)) < 0)
				return (rc);
			if ((m = new_map(r)) == NULL)
				return (-HWTR_E_NOMEM);
			m->pid = rec->pid;
			m->image = find_image(r, rec);
			m->path = rec->u.mmap.path;
			m->start = rec->u.mmap.addr;
			m->end = rec->u.mmap.addr + rec->u.mmap.len;
			m->pgoff = rec->u.mmap.pgoff;
			m->prot = rec->u.mmap.prot;
			m->has_from = 1;
			m->from_tsc = rec->time;
			map_opened(r, m);
			if (rec->pid >= 0 && proc_get(r, rec->pid) == NULL)
				return (-HWTR_E_NOMEM);
			if (sb_event(r, "mmap", rec, -1, rec->u.mmap.path) < 0)
				return (-HWTR_E_NOMEM);
			break;
		case HWTR_SB_MUNMAP:
			if ((rc = close_maps(r, rec->pid, rec->u.munmap.addr,
			    rec->u.munmap.addr + rec->u.munmap.len,
			    rec->time)) < 0)
				return (rc);
			snprintf(det, sizeof(det), "%#" PRIx64 "-%#" PRIx64,
			    rec->u.munmap.addr,
			    rec->u.munmap.addr + rec->u.munmap.len);
			if (sb_event(r, "munmap", rec, -1, det) < 0)
				return (-HWTR_E_NOMEM);
			break;
		case HWTR_SB_LOST: {
			int s = rec->u.lost.stream == UINT32_MAX ? -1 :
			    stream_of(r, rec->u.lost.stream);

			if (s >= 0)
				r->lost[s] += rec->u.lost.bytes;
			if (rec->u.lost.reason == HWTR_LOST_UNTRACED)
				snprintf(det, sizeof(det), "untraced: "
				    "instructions ran that the source could "
				    "not record");
			else
				snprintf(det, sizeof(det), "%" PRIu64
				    " bytes, %" PRIu64 " records",
				    rec->u.lost.bytes, rec->u.lost.records);
			if (sb_event(r, "lost", rec, s, det) < 0)
				return (-HWTR_E_NOMEM);
			break;
		}
		default:
			break;
		}
	}
	/*
	 * A thread ends with its process unless it exited by itself: when
	 * a signal kills the process, or exit_group ends it, every thread
	 * left has the process's status (a thread's own exit record, where
	 * the source has one, says nothing more).  And a thread no record
	 * named has its process's name, as a thread inherits it.
	 */
	for (i = 0; i < r->nthreads; i++) {
		t = &r->threads[i];
		if ((p = proc_find(r, t->pid)) == NULL)
			continue;
		if (t->exit_kind == NULL && p->exit_kind != NULL) {
			t->exit_kind = p->exit_kind;
			t->exit_value = p->exit_value;
		}
		if (t->name == NULL && p->comm != NULL &&
		    (t->name = strdup(p->comm)) == NULL)
			return (-HWTR_E_NOMEM);
	}
	return (0);
}

/*
 * Put every executable mapping whose image the archive holds into the
 * section cache, and compute where its link-time addresses are.
 */
static int
add_sections(struct run *r)
{
	size_t i;
	int isid, full = 0;

	for (i = 0; i < r->nmaps; i++) {
		struct ix_map *m = &r->maps[i];
		struct ix_img *im;
		uint64_t size, link;

		if ((i & 1023) == 0 && r->ix->opts.cancel != NULL &&
		    *r->ix->opts.cancel)
			return (-HWTR_E_INTR);

		/* Said by warn_missing() if decoding needs its code. */
		if (m->image < 0 || !r->imgs[m->image].present)
			continue;
		im = &r->imgs[m->image];
		m->bias = (int64_t)(m->start - m->pgoff);
		if (im->elf.elf && ix_elf_off2addr(&im->elf, m->pgoff,
		    &link) == 0)
			m->bias = (int64_t)(m->start - link);
		if (m->prot != 0 && !(m->prot & PROT_EXEC))
			continue;
		if (m->pgoff >= im->size || m->end <= m->start)
			continue;
		size = m->end - m->start;
		if (size > im->size - m->pgoff)
			size = im->size - m->pgoff;
		if (full)
			continue;
		isid = pt_iscache_add_file(r->isc, im->file, m->pgoff, size,
		    m->start);
		if (isid < 0 && pt_errcode(isid) == pte_nomem) {
			/* libipt's cache holds at most 65535 sections. */
			ix_problem(r->ix, "mapping of '%s' at %#" PRIx64
			    " and every later one: libipt's section cache is "
			    "full (%s); their code is not decoded",
			    m->path ? m->path : "?", m->start,
			    pt_errstr(pt_errcode(isid)));
			full = 1;
			continue;
		}
		if (isid < 0) {
			ix_problem(r->ix, "mapping of '%s' at %#" PRIx64
			    ": %s", m->path ? m->path : "?", m->start,
			    pt_errstr(pt_errcode(isid)));
			continue;
		}
		m->isid = isid;
		if ((size_t)isid >= r->nisid) {
			size_t n = (size_t)isid + 64, k;
			int *p = realloc(r->isid_map, n * sizeof(*p));

			if (p == NULL)
				return (-HWTR_E_NOMEM);
			for (k = r->nisid; k < n; k++)
				p[k] = -1;
			r->isid_map = p;
			r->nisid = n;
		}
		if (r->isid_map[isid] < 0)
			r->isid_map[isid] = (int)i;
	}
	return (0);
}

/*
 * An executable mapping whose image the archive lacks is worth a warning
 * only when the decoder needed its code: a decode error at an address in
 * it.  Step captures map [vsyscall] in every process and never run it.
 * Once per mapping (path and range: a process and its exec'd successor
 * map the same [vsyscall]), after all streams, so -j changes nothing.
 */
static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x < y ? -1 : x > y);
}

/* How many of the @n sorted @v lie in [@lo, @hi). */
static size_t
count_in(const uint64_t *v, size_t n, uint64_t lo, uint64_t hi)
{
	size_t a = 0, b = n, m, first;

	while (a < b) {
		m = a + (b - a) / 2;
		if (v[m] < lo)
			a = m + 1;
		else
			b = m;
	}
	first = a;
	b = n;
	while (a < b) {
		m = a + (b - a) / 2;
		if (v[m] < hi)
			a = m + 1;
		else
			b = m;
	}
	return (a - first);
}

#define IX_MISSING_MAX	100	/* mappings named; the rest counted */

static void
warn_missing(struct run *r)
{
	size_t i, k, nrep = 0, more = 0, rep[IX_MISSING_MAX];
	uint64_t n;

	/*
	 * The decode errors' addresses sorted once: a binary search per
	 * mapping, not a pass over every error (200,000 mappings).
	 */
	if (r->nerrips > 1)
		qsort(r->errips, r->nerrips, sizeof(*r->errips), cmp_u64);
	for (i = 0; i < r->nmaps; i++) {
		const struct ix_map *m = &r->maps[i];

		if ((m->image >= 0 && r->imgs[m->image].present) ||
		    (m->prot != 0 && !(m->prot & PROT_EXEC)))
			continue;
		if (m->end <= m->start || (n = count_in(r->errips,
		    r->nerrips, m->start, m->end)) == 0)
			continue;
		/* An earlier mapping of the same range was named. */
		for (k = 0; k < nrep; k++) {
			const struct ix_map *o = &r->maps[rep[k]];

			if (o->start == m->start && o->end == m->end &&
			    (o->path == m->path || (o->path != NULL &&
			    m->path != NULL && strcmp(o->path, m->path) == 0)))
				break;
		}
		if (k < nrep)
			continue;
		if (nrep == IX_MISSING_MAX) {
			more++;
			continue;
		}
		rep[nrep++] = i;
		ix_problem(r->ix, "mapping of '%s' at %#" PRIx64
		    ": image not in the archive; its code cannot be "
		    "decoded (%" PRIu64 " decode errors there)",
		    m->path ? m->path : "?", m->start, n);
	}
	if (more > 0)
		ix_problem(r->ix, "and %zu more mappings whose image is not in "
		    "the archive, with decode errors", more);
}

/* ----------------------------------------------------------------- */
/* Segments                                                           */

#define IX_SEG_DEFAULT	(2u << 20)	/* bytes of PT per segment */
/*
 * CoreSight elements per batch (HWTRACE_IX_CS_BATCH), and batches a
 * worker may publish ahead of the writer for the unit it is stitching.
 */
#define IX_CS_BATCH	16384u
#define IX_CS_AHEAD	8u
/* Threads decompressing chunks ahead of the PSB scan, at most. */
#define IX_RA_MAX	4

/* A chunk the stream view could not read is lost data. */
static void
sv_problem(void *arg, size_t s, uint64_t off, const char *why)
{
	struct run *r = arg;
	char nbuf[32];

	ix_problem(r->ix, "stream '%s' offset %#" PRIx64 ": chunk cannot be "
	    "read: %s", stream_name(hwtr_ar_stream(r->ar, s), nbuf,
	    sizeof(nbuf)), off, why);
}

/*
 * Cut the streams into segments (the stream view), and give each stream
 * the mappings its segments' decoders see.
 */
static int
plan(struct run *r)
{
	struct hwtr_sv_opts so;
	size_t s, k, i, nj;
	long ncpu;
	const char *e = getenv("HWTRACE_IX_SEGMENT");
	char *endp;
	unsigned long long v;
	int rc;

	r->seg_size = IX_SEG_DEFAULT;
	/* For tests: a small size cuts small traces into many segments. */
	if (e != NULL) {
		v = strtoull(e, &endp, 0);
		if (*e != '\0' && *endp == '\0' && v >= 16)
			r->seg_size = v;
	}
	/* For tests too: 0 is no batches, 1 a batch per element. */
	r->cs_batch = IX_CS_BATCH;
	if ((e = getenv("HWTRACE_IX_CS_BATCH")) != NULL) {
		v = strtoull(e, &endp, 0);
		if (*e != '\0' && *endp == '\0' && v <= SIZE_MAX)
			r->cs_batch = (size_t)v;
	}
	r->res = calloc(r->nstreams + 1, sizeof(*r->res));
	r->jmaps = calloc(r->nstreams + 1, sizeof(*r->jmaps));
	if (r->res == NULL || r->jmaps == NULL)
		return (-HWTR_E_NOMEM);
	/*
	 * As many helpers as there will be workers (run_pipeline()), but
	 * IX_RA_MAX at most: a few keep up with the scan, and each one
	 * holds a chunk.
	 */
	nj = r->ix->opts.jobs > 0 ? (size_t)r->ix->opts.jobs : 0;
	if (nj == 0) {
		ncpu = sysconf(_SC_NPROCESSORS_ONLN);
		nj = ncpu > 0 ? (size_t)ncpu : 1;
	}
	if (nj > IX_RA_MAX)
		nj = IX_RA_MAX;
	memset(&so, 0, sizeof(so));
	so.seg_size = r->seg_size;
	so.readahead = nj;
	so.problem = sv_problem;
	so.problem_arg = r;
	if ((rc = hwtr_sv_open(&r->sv, r->ar, &so)) < 0)
		return (rc);
	r->nsegs = hwtr_sv_nsegs(r->sv);
	if ((r->segs = calloc(r->nsegs + 1, sizeof(*r->segs))) == NULL)
		return (-HWTR_E_NOMEM);
	for (i = 0; i < r->nsegs; i++) {
		const struct hwtr_sv_seg *sg = hwtr_sv_seg(r->sv, i);
		struct ix_seg *g = &r->segs[i];

		g->stream = sg->stream;
		g->piece = sg->piece;
		g->start = sg->start;
		g->end = sg->end;
		g->has_limit = sg->has_limit;
		g->first_of_stream = sg->first_of_stream;
		g->lost_before = sg->lost_before;
		g->lost_bytes = sg->lost_bytes;
	}
	for (s = 0; s < r->nstreams; s++) {
		const struct hwtr_stream_desc *sd = hwtr_ar_stream(r->ar, s);
		size_t n = 0;

		hwtr_sv_stream_segs(r->sv, s, &r->res[s].seg0,
		    &r->res[s].nseg);
		r->res[s].bytes = hwtr_sv_bytes(r->sv, s);
		r->lost[s] += hwtr_sv_gaps(r->sv, s);
		r->ix->stats.trace_bytes += r->res[s].bytes;
		r->jmaps[s] = calloc(r->nmaps + 1, sizeof(**r->jmaps));
		if (r->jmaps[s] == NULL)
			return (-HWTR_E_NOMEM);
		for (k = 0; k < r->nmaps; k++)
			if (sd->pid < 0 || r->maps[k].pid < 0 ||
			    r->maps[k].pid == sd->pid)
				r->jmaps[s][n++] = &r->maps[k];
	}
	r->ix->stats.segments = r->nsegs;
	return (0);
}

/*
 * A section cache of the segment's own, with every section added in the
 * same order as the shared one so that section ids agree.  libipt keeps
 * its block cache in the sections and cuts blocks where that cache says;
 * shared by decoders on several threads, or by the segments one worker
 * happened to decode before, the cache would make the database depend on
 * -j.  A fresh cache per segment depends on nothing but the segment.
 */
static struct pt_image_section_cache *
job_iscache(struct run *r)
{
	struct pt_image_section_cache *isc = pt_iscache_alloc(NULL);
	size_t k;

	if (isc == NULL)
		return (NULL);
	for (k = 0; k < r->nmaps; k++) {
		const struct ix_map *m = &r->maps[k];
		const struct ix_img *im;
		uint64_t size;

		if (m->isid <= 0)
			continue;
		im = &r->imgs[m->image];
		size = m->end - m->start;
		if (size > im->size - m->pgoff)
			size = im->size - m->pgoff;
		if (pt_iscache_add_file(isc, im->file, m->pgoff, size,
		    m->start) != m->isid) {
			pt_iscache_free(isc);
			return (NULL);
		}
	}
	return (isc);
}

static void
free_seg(struct ix_seg *g)
{
	struct ix_batch *b;
	size_t k;

	for (k = 0; g->bq != NULL && k < g->nouts; k++)
		while ((b = g->bq[k].head) != NULL) {
			g->bq[k].head = b->next;
			ix_seg_out_free(&b->out);
			free(b);
		}
	free(g->bq);
	g->bq = NULL;
	free(g->touched);
	g->touched = NULL;
	for (k = 0; g->outs != NULL && k < g->nouts; k++)
		ix_seg_out_free(&g->outs[k]);
	free(g->outs);
	g->outs = NULL;
}

struct pubctx {
	struct run	*r;
	size_t		seg;
};

/*
 * A worker's CoreSight batch for unit @unit of its segment: queued for
 * the writer.  While the writer is stitching that unit, the worker waits
 * when it is IX_CS_AHEAD batches ahead, so that memory stays bounded; the
 * other units' batches wait for their turn, which comes only once the
 * whole buffer is decoded (as without batches).
 */
static int
publish(void *arg, size_t unit, struct ix_seg_out *out)
{
	struct pubctx *pc = arg;
	struct run *r = pc->r;
	struct ix_seg *g = &r->segs[pc->seg];
	struct ix_batch *b;
	struct ix_bq *q;
	int rc = 0;

	if (unit >= g->nouts || (b = calloc(1, sizeof(*b))) == NULL) {
		ix_seg_out_free(out);
		free(out);
		return (-HWTR_E_NOMEM);
	}
	b->out = *out;
	free(out);
	pthread_mutex_lock(&r->lock);
	q = &g->bq[unit];
	while (!r->abort && q->n >= IX_CS_AHEAD && r->wbusy &&
	    r->wseg == pc->seg && r->wunit == unit)
		pthread_cond_wait(&r->work_cv, &r->lock);
	if (r->abort) {
		rc = -HWTR_E_INTR;
		ix_seg_out_free(&b->out);
		free(b);
	} else {
		if (q->tail != NULL)
			q->tail->next = b;
		else
			q->head = b;
		q->tail = b;
		q->n++;
		pthread_cond_broadcast(&r->done_cv);
	}
	pthread_mutex_unlock(&r->lock);
	return (rc);
}

/* Decode segment @i (worker @w). */
static void
decode_one(struct run *r, size_t w, size_t i)
{
	struct ix_seg *g = &r->segs[i];
	size_t npieces = hwtr_sv_npieces(r->sv, g->stream);
	struct ix_seg_in in;
	struct ix_seg_out *out;
	const uint8_t **bufs = NULL;
	uint8_t **copies = NULL;
	size_t *lens = NULL;
	uint64_t *offs = NULL, to;
	size_t k;
	char err[256];
	int rc = 0;

	struct pubctx pc;
	struct ix_bq *bq;
	int *touched;

	memset(&in, 0, sizeof(in));
	g->nouts = g->nleft = stream_units(r, g->stream);
	g->outs = calloc(g->nouts, sizeof(*g->outs));
	if ((out = g->outs) == NULL) {
		hwtr_sv_seg_done(r->sv, i);
		return;		/* the writer says it */
	}
	bq = calloc(g->nouts, sizeof(*bq));
	touched = calloc(g->nouts, sizeof(*touched));
	if (bq == NULL || touched == NULL) {
		free(bq);
		free(touched);
		bq = NULL;
		touched = NULL;
	}
	pthread_mutex_lock(&r->lock);
	g->bq = bq;
	g->touched = touched;
	pthread_mutex_unlock(&r->lock);
	pc.r = r;
	pc.seg = i;
	if (bq != NULL && r->cs_batch != 0) {
		in.cs_batch = r->cs_batch;
		in.cs_publish = publish;
		in.cs_publish_arg = &pc;
		in.cs_touched = touched;
	}
	in.nouts = g->nouts;
	in.stream = g->stream;
	in.desc = hwtr_ar_stream(r->ar, g->stream);
	in.cpu = &hwtr_ar_meta(r->ar)->cpu;
	in.maps = r->jmaps[g->stream];
	for (k = 0; k < r->nmaps && in.maps[k] != NULL; k++)
		in.nmaps++;
	in.img = r->img_bytes;
	in.img_len = r->img_len;
	in.cancel = r->ix->opts.cancel;
	in.progress = &r->wprogress[w];
	err[0] = '\0';
	if (in.desc->format == HWTR_TF_CORESIGHT) {
		/* Every piece of the stream. */
		bufs = calloc(npieces + 1, sizeof(*bufs));
		copies = calloc(npieces + 1, sizeof(*copies));
		lens = calloc(npieces + 1, sizeof(*lens));
		offs = calloc(npieces + 1, sizeof(*offs));
		if (bufs == NULL || copies == NULL || lens == NULL ||
		    offs == NULL)
			rc = -HWTR_E_NOMEM;
		for (k = 0; k < npieces && rc == 0; k++) {
			const struct hwtr_sv_piece *q = hwtr_sv_piece(r->sv,
			    g->stream, k);

			lens[k] = q->len;
			offs[k] = q->off;
			rc = hwtr_sv_read(r->sv, g->stream, q->off, q->off +
			    q->len, &bufs[k], &copies[k], err, sizeof(err));
		}
		in.npieces = npieces;
		in.piece = bufs;
		in.piece_len = lens;
		in.piece_off = offs;
	} else {
		(void)hwtr_sv_seg_top(r->sv, i, &to);
		bufs = calloc(1, sizeof(*bufs));
		copies = calloc(1, sizeof(*copies));
		if (bufs == NULL || copies == NULL)
			rc = -HWTR_E_NOMEM;
		else
			rc = hwtr_sv_read(r->sv, g->stream, g->start, to,
			    &bufs[0], &copies[0], err, sizeof(err));
		in.buf = bufs != NULL ? bufs[0] : NULL;
		in.len = (size_t)(to - g->start);
		in.base = g->start;
		in.has_limit = g->has_limit;
		in.limit = g->end;
		in.first_of_stream = g->first_of_stream;
		in.lost_before = g->lost_before;
		in.lost_bytes = g->lost_bytes;
	}
	if (rc == 0 && (in.iscache = job_iscache(r)) == NULL) {
		rc = -HWTR_E_NOMEM;
		snprintf(err, sizeof(err), "cannot build an image section "
		    "cache");
	}
	if (rc == 0)
		ix_decode_segment(&in, out);
	else {
		out->rc = rc;
		snprintf(out->err, sizeof(out->err), "%s", err[0] ? err :
		    hwtr_errstr(rc));
	}
	if (in.iscache != NULL)
		pt_iscache_free(in.iscache);
	/* The segment's bytes are no longer needed. */
	for (k = 0; copies != NULL && k < (in.npieces ? in.npieces : 1); k++)
		free(copies[k]);
	hwtr_sv_seg_done(r->sv, i);
	free(copies);
	free(bufs);
	free(lens);
	free(offs);
}

struct wctx {
	struct run	*r;
	size_t		w;
};

/*
 * Workers take segments in stream order, at most r->window ahead of the
 * writer: memory is bounded by the window, not by the trace.
 */
static void *
worker(void *arg)
{
	struct wctx *wc = arg;
	struct run *r = wc->r;
	size_t i;

	struct timespec t0, t1;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	pthread_mutex_lock(&r->lock);
	for (;;) {
		while (!r->abort && r->next_seg < r->nsegs &&
		    r->next_seg >= r->stitched + r->window)
			pthread_cond_wait(&r->work_cv, &r->lock);
		if (r->abort || r->next_seg >= r->nsegs)
			break;
		i = r->next_seg++;
		pthread_mutex_unlock(&r->lock);
		decode_one(r, wc->w, i);
		pthread_mutex_lock(&r->lock);
		r->segs[i].done = 1;
		r->bytes_done += r->segs[i].end - r->segs[i].start;
		__atomic_store_n(&r->wprogress[wc->w], 0, __ATOMIC_RELAXED);
		pthread_cond_broadcast(&r->done_cv);
	}
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
	r->ix->stats.decode_cpu_ns += (uint64_t)((t1.tv_sec - t0.tv_sec) *
	    1000000000LL + (t1.tv_nsec - t0.tv_nsec));
	pthread_mutex_unlock(&r->lock);
	return (NULL);
}

/* ----------------------------------------------------------------- */
/* Symbols                                                            */

static int64_t
file_id(struct run *r, const char *path)
{
	uint64_t h = 1469598103934665603ULL;
	const char *p;
	size_t i;

	if (r->nfiles * 2 >= r->fcap) {
		size_t n = r->fcap ? r->fcap * 2 : 1024;
		uint32_t *t = calloc(n, sizeof(*t));

		if (t == NULL)
			return (-HWTR_E_NOMEM);
		for (i = 0; i < r->nfiles; i++) {
			uint64_t hh = 1469598103934665603ULL;

			for (p = r->files[i]; *p; p++)
				hh = (hh ^ (uint8_t)*p) * 1099511628211ULL;
			while (t[hh & (n - 1)] != 0)
				hh++;
			t[hh & (n - 1)] = (uint32_t)i + 1;
		}
		free(r->ftab);
		r->ftab = t;
		r->fcap = n;
	}
	for (p = path; *p; p++)
		h = (h ^ (uint8_t)*p) * 1099511628211ULL;
	for (;; h++) {
		uint32_t v = r->ftab[h & (r->fcap - 1)];

		if (v == 0)
			break;
		if (strcmp(r->files[v - 1], path) == 0)
			return ((int64_t)v);
	}
	if (ix_grow((void **)&r->files, &r->cfiles, r->nfiles + 1,
	    sizeof(*r->files)) < 0)
		return (-HWTR_E_NOMEM);
	if ((r->files[r->nfiles] = strdup(path)) == NULL)
		return (-HWTR_E_NOMEM);
	r->ftab[h & (r->fcap - 1)] = (uint32_t)r->nfiles + 1;
	return ((int64_t)++r->nfiles);
}

/*
 * What global block @b is in the images: @g, and the block's bflags and
 * fkey for the stitcher.
 */
static void
symbolize(struct run *r, struct ix_sblock *b, struct ix_gsym *g)
{
	const struct ix_map *m;
	const struct ix_img *im;
	const struct ix_sym *s;
	const struct ix_line *l;

	memset(g, 0, sizeof(*g));
	b->bflags = 0;
	b->fkey = 0;
	if (b->isid <= 0 || (size_t)b->isid >= r->nisid ||
	    r->isid_map[b->isid] < 0)
		return;
	m = &r->maps[r->isid_map[b->isid]];
	im = &r->imgs[m->image];
	g->has_image = 1;
	g->image = m->image + 1;
	g->image_addr = b->ip - (uint64_t)m->bias;
	s = ix_elf_func(&im->elf, g->image_addr);
	if (s != NULL) {
		g->symbol = im->sym_base + (s - im->elf.syms);
		g->sym_offset = g->image_addr - s->addr;
	}
	if (im->elf.entry != 0 && g->image_addr == im->elf.entry)
		b->bflags |= IX_BF_ENTRY;
	switch (ix_elf_plt(&im->elf, g->image_addr)) {
	case 2:
		b->bflags |= IX_BF_PLT | IX_BF_PLT0;
		break;
	case 1:
		b->bflags |= IX_BF_PLT;
		break;
	}
	if (s != NULL) {
		b->fkey = (uint32_t)g->symbol;
		if (g->sym_offset == 0)
			b->bflags |= IX_BF_FSTART;
		if (strncmp(s->name, "_dl_runtime_resolve", 19) == 0)
			b->bflags |= IX_BF_RESOLVER;
		else if (strcmp(s->name, "_Unwind_Resume") == 0)
			b->bflags |= IX_BF_RESUME;
	}
	l = ix_elf_line(&im->elf, g->image_addr);
	if (l != NULL && im->file_ids != NULL) {
		g->file = im->file_ids[l->file];
		g->line = l->line;
	}
}

/* ----------------------------------------------------------------- */
/* Writing                                                            */

static int
db_err(struct run *r, const char *what)
{
	ix_err(r->ix, "database: %s: %s", what, sqlite3_errmsg(r->db));
	return (-HWTR_E_DB);
}

static int
st_prep(struct run *r, struct stmt *s, const char *sql)
{
	s->i = 0;
	if (sqlite3_prepare_v2(r->db, sql, -1, &s->st, NULL) != SQLITE_OK)
		return (db_err(r, sql));
	return (0);
}

static void
b_int(struct stmt *s, int64_t v)
{
	sqlite3_bind_int64(s->st, ++s->i, v);
}

static void
b_opt(struct stmt *s, int has, int64_t v)
{
	if (has)
		sqlite3_bind_int64(s->st, ++s->i, v);
	else
		sqlite3_bind_null(s->st, ++s->i);
}

static void
b_text(struct stmt *s, const char *t)
{
	if (t != NULL)
		sqlite3_bind_text(s->st, ++s->i, t, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(s->st, ++s->i);
}

/*
 * A string that outlives the statement (a name from a static table): SQLite
 * keeps the pointer instead of copying it.  A copy is a malloc and a free
 * per value, two of them on each of the millions of calls rows.
 */
static void
b_stext(struct stmt *s, const char *t)
{
	sqlite3_bind_text(s->st, ++s->i, t, -1, SQLITE_STATIC);
}

static void
b_blob(struct stmt *s, const void *p, size_t n)
{
	if (p != NULL)
		sqlite3_bind_blob64(s->st, ++s->i, p, n, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(s->st, ++s->i);
}

static int
st_exec(struct run *r, struct stmt *s, const char *what)
{
	int rc = sqlite3_step(s->st);

	sqlite3_reset(s->st);
	s->i = 0;
	if (rc != SQLITE_DONE)
		return (db_err(r, what));
	return (0);
}

static void
st_done(struct stmt *s)
{
	sqlite3_finalize(s->st);
	s->st = NULL;
}

static int
meta_put(struct run *r, struct stmt *s, const char *k, const char *v)
{
	b_text(s, k);
	b_text(s, v);
	return (st_exec(r, s, "meta"));
}

static int
meta_int(struct run *r, struct stmt *s, const char *k, int64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRId64, v);
	return (meta_put(r, s, k, buf));
}

/*
 * Bind the wall-clock time of a TSC (NULL without one or without a time
 * conversion).  The conversion is done here, before the bind, and not in an
 * argument list next to the value it produces: the order in which C
 * evaluates arguments is unspecified, and gcc read the stale value first
 * (every row got the time of the previous one).
 */
static void
b_ns(struct run *r, struct stmt *s, int has, uint64_t tsc)
{
	const struct hwtr_capture_meta *meta = hwtr_ar_meta(r->ar);

	if (!has || !meta->tconv.valid)
		b_opt(s, 0, 0);
	else
		b_opt(s, 1, hwtr_tsc_to_ns(&meta->tconv, tsc));
}

static int
write_meta(struct run *r)
{
	const struct hwtr_capture_meta *meta = hwtr_ar_meta(r->ar);
	const struct hwtr_capture_end *end = hwtr_ar_end(r->ar);
	const struct hwtr_ar_status *st = hwtr_ar_status(r->ar);
	struct stmt s;
	char buf[256];
	size_t i, n;
	char *argv = NULL;
	int rc;

	if ((rc = st_prep(r, &s, "INSERT INTO meta VALUES (?, ?)")) < 0)
		return (rc);
	snprintf(buf, sizeof(buf), "%d", HWTR_DB_SCHEMA_VERSION);
	rc = meta_put(r, &s, "schema_version", buf);
	rc = rc < 0 ? rc : meta_put(r, &s, "hwtrace_version", HWTRACE_VERSION);
	rc = rc < 0 ? rc : meta_put(r, &s, "source_archive", r->archive);
	rc = rc < 0 ? rc : meta_put(r, &s, "archive_id", r->archive_id);
	snprintf(buf, sizeof(buf), "%u.%u", st->version_major,
	    st->version_minor);
	rc = rc < 0 ? rc : meta_put(r, &s, "archive_version", buf);
	rc = rc < 0 ? rc : meta_int(r, &s, "archive_complete", st->complete);
	rc = rc < 0 ? rc : meta_put(r, &s, "capture_source", meta->source);
	snprintf(buf, sizeof(buf), "%s %u/%u/%u",
	    meta->cpu.vendor == HWTR_CPU_INTEL ? "intel" :
	    meta->cpu.vendor == HWTR_CPU_AMD ? "amd" :
	    meta->cpu.vendor == HWTR_CPU_ARM ? "arm" : "unknown",
	    meta->cpu.family, meta->cpu.model, meta->cpu.stepping);
	rc = rc < 0 ? rc : meta_put(r, &s, "cpu", buf);
	for (i = 0, n = 1; i < meta->argc; i++)
		n += strlen(meta->argv[i]) + 1;
	if ((argv = calloc(1, n)) == NULL) {
		st_done(&s);
		return (-HWTR_E_NOMEM);
	}
	for (i = 0; i < meta->argc; i++) {
		if (i > 0)
			strcat(argv, " ");
		strcat(argv, meta->argv[i]);
	}
	rc = rc < 0 ? rc : meta_put(r, &s, "argv", argv);
	free(argv);
	if (meta->start_ns != 0)
		rc = rc < 0 ? rc : meta_int(r, &s, "start_ns", meta->start_ns);
	if (end != NULL) {
		rc = rc < 0 ? rc : meta_int(r, &s, "end_ns", end->end_ns);
		if (end->exit_kind != HWTR_EXIT_NONE) {
			rc = rc < 0 ? rc : meta_put(r, &s, "exit_kind",
			    end->exit_kind == HWTR_EXIT_CODE ? "code" :
			    "signal");
			rc = rc < 0 ? rc : meta_int(r, &s, "exit_value",
			    end->exit_value);
		}
	}
	if (meta->tconv.valid) {
		rc = rc < 0 ? rc : meta_int(r, &s, "tsc_zero",
		    (int64_t)meta->tconv.tsc_zero);
		rc = rc < 0 ? rc : meta_int(r, &s, "ns_zero",
		    meta->tconv.ns_zero);
		rc = rc < 0 ? rc : meta_int(r, &s, "tsc_mult",
		    meta->tconv.mult);
		rc = rc < 0 ? rc : meta_int(r, &s, "tsc_shift",
		    meta->tconv.shift);
	}
	rc = rc < 0 ? rc : meta_int(r, &s, "chunk_blocks", 4096);
	rc = rc < 0 ? rc : meta_put(r, &s, "exec_encoding",
	    "delta-zigzag-varint");
	if (rc == 0 && r->ix->stats.blocks > 0) {
		snprintf(buf, sizeof(buf), "%.3f",
		    (double)r->ix->stats.exec_bytes /
		    (double)r->ix->stats.blocks);
		rc = meta_put(r, &s, "exec_bytes_per_block", buf);
	}
	st_done(&s);
	return (rc);
}

/* The streams and threads, with what decoding found. */
static int
write_streams(struct run *r)
{
	struct stmt s;
	size_t i;
	int rc;

	/* streams */
	if ((rc = st_prep(r, &s, "INSERT INTO streams VALUES "
	    "(?,?,?,?,?,?,?,?,?,?,?)")) < 0)
		return (rc);
	for (i = 0; i < r->nstreams && rc == 0; i++) {
		const struct hwtr_stream_desc *sd = hwtr_ar_stream(r->ar, i);
		const struct ix_ures *o = &r->ures[r->ufirst[i]];
		char nbuf[32];
		uint64_t bytes = r->res[i].bytes;

		b_int(&s, sd->id);
		b_text(&s, stream_name(sd, nbuf, sizeof(nbuf)));
		b_text(&s, hwtr_tf_name(sd->format));
		b_opt(&s, sd->pid >= 0, sd->pid);
		b_opt(&s, sd->tid >= 0, sd->tid);
		b_opt(&s, sd->cpu >= 0, sd->cpu);
		b_int(&s, (int64_t)bytes);
		b_int(&s, (int64_t)r->lost[i]);
		b_int(&s, (int64_t)o->undecoded);
		b_int(&s, o->errors);
		b_text(&s, sd->format != HWTR_TF_INTEL_PT &&
		    sd->format != HWTR_TF_CORESIGHT ? "unsupported" :
		    bytes == 0 ? "empty" : o->errors ? "errors" : "ok");
		rc = st_exec(r, &s, "streams");
	}
	/*
	 * A CoreSight buffer's trace IDs: a row each, after the buffer's
	 * (which keeps its bytes, losses and decode errors).
	 */
	for (i = 0; i < r->nunits && rc == 0; i++) {
		const struct hwtr_stream_desc *sd = hwtr_ar_stream(r->ar,
		    r->ustream[i]);
		const struct ix_ures *o = &r->ures[i];
		char nbuf[32], *name;

		if (!is_cs_unit(r, i))
			continue;
		if (asprintf(&name, "%s trace ID 0x%02x", stream_name(sd, nbuf,
		    sizeof(nbuf)), o->trace_id) < 0) {
			rc = -HWTR_E_NOMEM;
			break;
		}
		b_int(&s, unit_id(r, i));
		b_text(&s, name);
		b_text(&s, hwtr_tf_name(o->format));
		b_opt(&s, 0, 0);
		b_opt(&s, 0, 0);
		b_opt(&s, 0, 0);
		b_int(&s, 0);
		b_int(&s, 0);
		b_int(&s, 0);
		b_int(&s, 0);
		b_text(&s, o->format == HWTR_TF_STM ? "unsupported" :
		    o->exec_blocks == 0 ? "empty" : "ok");
		rc = st_exec(r, &s, "streams");
		free(name);
	}
	st_done(&s);
	if (rc < 0)
		return (rc);
	/* threads */
	if ((rc = st_prep(r, &s, "INSERT INTO threads VALUES "
	    "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)")) < 0)
		return (rc);
	for (i = 0; i < r->nthreads && rc == 0; i++) {
		const struct ix_thread *t = &r->threads[i];
		const struct ix_ures *o = t->stream >= 0 ?
		    &r->ures[t->stream] : NULL;

		b_int(&s, t->id);
		b_opt(&s, t->stream >= 0, t->stream >= 0 ?
		    unit_id(r, (size_t)t->stream) : 0);
		b_opt(&s, t->pid >= 0, t->pid);
		b_opt(&s, t->tid >= 0, t->tid);
		b_text(&s, t->name != NULL || o == NULL ? t->name : o->name);
		b_opt(&s, t->has_start, (int64_t)t->start_tsc);
		b_opt(&s, t->has_end, (int64_t)t->end_tsc);
		b_text(&s, t->exit_kind);
		b_opt(&s, t->exit_kind != NULL, t->exit_value);
		b_int(&s, o ? o->exec_blocks : 0);
		b_int(&s, o ? o->exec_insns : 0);
		b_opt(&s, o && o->has_first, o ? (int64_t)o->first_tsc : 0);
		b_opt(&s, o && o->has_last, o ? (int64_t)o->last_tsc : 0);
		b_ns(r, &s, o && o->has_first, o ? o->first_tsc : 0);
		b_ns(r, &s, o && o->has_last, o ? o->last_tsc : 0);
		b_int(&s, o ? o->errors : 0);
		b_int(&s, o ? o->gaps : 0);
		b_int(&s, o ? o->ncalls : 0);
		b_int(&s, o ? o->max_depth : 0);
		rc = st_exec(r, &s, "threads");
	}
	st_done(&s);
	if (rc < 0)
		return (rc);
	return (0);
}

static int
write_static(struct run *r)
{
	struct stmt s;
	size_t i, j;
	int rc;
	char hex[2 * HWTR_BUILD_ID_MAX + 1], sha[65];
	int64_t sym_id = 1;

	/* processes */
	if ((rc = st_prep(r, &s, "INSERT INTO processes VALUES "
	    "(?,?,?,?,?,?,?,?)")) < 0)
		return (rc);
	for (i = 0; i < r->nprocs && rc == 0; i++) {
		const struct ix_proc *p = &r->procs[i];

		if (p->pid < 0)
			continue;
		b_int(&s, p->pid);
		b_opt(&s, p->ppid >= 0, p->ppid);
		b_text(&s, p->path);
		b_text(&s, p->comm);
		b_opt(&s, p->has_start, (int64_t)p->start_tsc);
		b_opt(&s, p->has_end, (int64_t)p->end_tsc);
		b_text(&s, p->exit_kind);
		b_opt(&s, p->exit_kind != NULL, p->exit_value);
		rc = st_exec(r, &s, "processes");
	}
	st_done(&s);
	if (rc < 0)
		return (rc);
	/* images */
	if ((rc = st_prep(r, &s, "INSERT INTO images VALUES "
	    "(?,?,?,?,?,?,?,?,?,?,?)")) < 0)
		return (rc);
	for (i = 0; i < r->nimgs && rc == 0; i++) {
		const struct hwtr_image_desc *id = hwtr_ar_image(r->ar, i);
		const struct ix_img *im = &r->imgs[i];

		for (j = 0; j < id->build_id_len && j < HWTR_BUILD_ID_MAX; j++)
			snprintf(hex + 2 * j, 3, "%02x", id->build_id[j]);
		hex[2 * j] = '\0';
		for (j = 0; j < 32; j++)
			snprintf(sha + 2 * j, 3, "%02x", id->sha256[j]);
		b_int(&s, (int64_t)i + 1);
		b_text(&s, id->key);
		b_text(&s, id->path);
		b_text(&s, id->kind == HWTR_IMG_MEMORY ? "memory" : "file");
		b_text(&s, id->build_id_len ? hex : NULL);
		b_int(&s, (int64_t)id->size);
		b_text(&s, sha);
		b_int(&s, im->present);
		b_int(&s, im->elf.elf);
		b_int(&s, im->elf.nsyms > 0);
		b_int(&s, im->elf.nlines > 0);
		rc = st_exec(r, &s, "images");
	}
	st_done(&s);
	if (rc < 0)
		return (rc);
	/* mappings */
	if ((rc = st_prep(r, &s, "INSERT INTO mappings VALUES "
	    "(?,?,?,?,?,?,?,?,?,?,?)")) < 0)
		return (rc);
	for (i = 0; i < r->nmaps && rc == 0; i++) {
		const struct ix_map *m = &r->maps[i];

		b_int(&s, m->id);
		b_opt(&s, m->pid >= 0, m->pid);
		b_opt(&s, m->image >= 0, m->image + 1);
		b_text(&s, m->path);
		b_int(&s, (int64_t)m->start);
		b_int(&s, (int64_t)m->end);
		b_int(&s, (int64_t)m->pgoff);
		b_int(&s, m->bias);
		b_int(&s, m->prot);
		b_opt(&s, m->has_from, (int64_t)m->from_tsc);
		b_opt(&s, m->has_to, (int64_t)m->to_tsc);
		rc = st_exec(r, &s, "mappings");
	}
	st_done(&s);
	if (rc < 0)
		return (rc);
	/* symbols */
	if ((rc = st_prep(r, &s, "INSERT INTO symbols VALUES "
	    "(?,?,?,?,?,?,?,?,?)")) < 0)
		return (rc);
	for (i = 0; i < r->nimgs && rc == 0; i++) {
		struct ix_img *im = &r->imgs[i];

		im->sym_base = sym_id;
		for (j = 0; j < im->elf.nsyms && rc == 0; j++) {
			const struct ix_sym *sy = &im->elf.syms[j];

			b_int(&s, sym_id++);
			b_int(&s, (int64_t)i + 1);
			b_text(&s, sy->dname != NULL ? sy->dname : sy->name);
			b_int(&s, (int64_t)sy->addr);
			b_int(&s, (int64_t)sy->size);
			b_text(&s, sy->kind);
			b_text(&s, sy->bind);
			b_text(&s, sy->origin);
			b_text(&s, sy->dname != NULL ? sy->name : NULL);
			rc = st_exec(r, &s, "symbols");
		}
	}
	st_done(&s);
	if (rc < 0)
		return (rc);
	r->next_sym = sym_id;
	/* files and lines */
	for (i = 0; i < r->nimgs; i++) {
		struct ix_img *im = &r->imgs[i];

		if (im->elf.nfiles == 0)
			continue;
		im->file_ids = calloc(im->elf.nfiles, sizeof(*im->file_ids));
		if (im->file_ids == NULL)
			return (-HWTR_E_NOMEM);
		for (j = 0; j < im->elf.nfiles; j++) {
			int64_t f = file_id(r, im->elf.files[j]);

			if (f < 0)
				return ((int)f);
			im->file_ids[j] = f;
		}
	}
	if ((rc = st_prep(r, &s, "INSERT INTO files VALUES (?,?)")) < 0)
		return (rc);
	for (i = 0; i < r->nfiles && rc == 0; i++) {
		b_int(&s, (int64_t)i + 1);
		b_text(&s, r->files[i]);
		rc = st_exec(r, &s, "files");
	}
	st_done(&s);
	if (rc < 0)
		return (rc);
	if ((rc = st_prep(r, &s, "INSERT INTO lines VALUES (?,?,?,?,?,?,?)")) < 0)
		return (rc);
	for (i = 0; i < r->nimgs && rc == 0; i++) {
		const struct ix_img *im = &r->imgs[i];

		for (j = 0; j < im->elf.nlines && rc == 0; j++) {
			const struct ix_line *l = &im->elf.lines[j];

			b_int(&s, (int64_t)i + 1);
			b_int(&s, (int64_t)l->addr);
			b_int(&s, im->file_ids[l->file]);
			b_int(&s, l->line);
			b_int(&s, l->col);
			b_int(&s, l->is_stmt);
			b_int(&s, (int64_t)l->end);
			rc = st_exec(r, &s, "lines");
		}
	}
	st_done(&s);
	return (rc);
}

/*
 * The events rows waiting, in order (before any other row).  A batch is
 * of one unit: its thread, stream and pid are ?1 ?2 ?3 of every row, and
 * a row's NULLs are the parameters it leaves alone after
 * sqlite3_clear_bindings(): a row costs the binds of what it has.
 */
static int
flush_events(struct run *r)
{
	const struct hwtr_capture_meta *meta = hwtr_ar_meta(r->ar);
	const struct ix_thread *t = &r->threads[r->cur];
	size_t i = 0, n;
	int k, rc = 0;

	for (k = IX_EV_LOG - 1; k >= 0 && rc == 0; k--) {
		sqlite3_stmt *s = r->s_evn[k].st;

		if (!((r->nevq - i) & (1u << k)))
			continue;
		sqlite3_clear_bindings(s);
		sqlite3_bind_int64(s, 1, (int64_t)r->cur + 1);
		sqlite3_bind_int64(s, 2, unit_id(r, r->cur));
		if (t->pid >= 0)
			sqlite3_bind_int64(s, 3, t->pid);
		for (n = 0; n < (1u << k); n++) {
			const struct ix_evrow *e = &r->evq[i++];
			int p = 4 + IX_EV_VAR * (int)n;

			sqlite3_bind_int64(s, p, e->seq);
			sqlite3_bind_int64(s, p + 1, e->insn);
			sqlite3_bind_text(s, p + 2, e->kind, -1, SQLITE_STATIC);
			if (e->has_offset)
				sqlite3_bind_int64(s, p + 3, (int64_t)e->offset);
			if (e->has_ip)
				sqlite3_bind_int64(s, p + 4, (int64_t)e->ip);
			if (e->has_tsc) {
				sqlite3_bind_int64(s, p + 5, (int64_t)e->tsc);
				if (meta->tconv.valid)
					sqlite3_bind_int64(s, p + 6,
					    hwtr_tsc_to_ns(&meta->tconv, e->tsc));
			}
			if (e->detail != NULL)
				sqlite3_bind_text(s, p + 7, e->detail, -1,
				    SQLITE_STATIC);
		}
		r->s_evn[k].i = 0;
		rc = st_exec(r, &r->s_evn[k], "events");
	}
	for (i = 0; i < r->nevq; i++)
		free(r->evq[i].detail);
	r->nevq = 0;
	return (rc);
}

/* A calls row's parameters, from the statement's next one on. */
static void
bind_call(struct run *r, struct stmt *ca, int64_t idx, const struct ix_call *c)
{
	const struct ix_gsym *g = &r->gs[c->entry_block];

	b_int(ca, r->call_base + idx);
	b_int(ca, (int64_t)r->cur + 1);
	b_opt(ca, c->parent >= 0, r->call_base + c->parent);
	b_int(ca, c->depth);
	b_opt(ca, g->symbol != 0, g->symbol);
	b_int(ca, (int64_t)c->func_ip);
	b_opt(ca, c->has_call_ip, (int64_t)c->call_ip);
	b_stext(ca, ix_call_entry_kinds[c->entry_kind]);
	b_stext(ca, ix_call_exit_kinds[c->exit_kind]);
	b_int(ca, c->entry_seq);
	b_int(ca, c->exit_seq);
	b_int(ca, c->entry_insn);
	b_int(ca, c->exit_insn);
	b_opt(ca, c->has_entry_tsc, (int64_t)c->entry_tsc);
	b_opt(ca, c->has_exit_tsc, (int64_t)c->exit_tsc);
	b_ns(r, ca, c->has_entry_tsc, c->entry_tsc);
	b_ns(r, ca, c->has_exit_tsc, c->exit_tsc);
	b_int(ca, c->exit_insn - c->entry_insn);
	b_int(ca, c->self_insns);
	b_int(ca, c->exit_seq - c->entry_seq);
}

/* The calls rows waiting, in order, in INSERTs of 2^k rows. */
static int
flush_calls(struct run *r)
{
	size_t i = 0, n;
	int k, rc = 0;

	for (k = IX_CA_LOG - 1; k >= 0 && rc == 0; k--) {
		struct stmt *ca = &r->s_can[k];

		if (!((r->ncaq - i) & (1u << k)))
			continue;
		for (n = 0; n < (1u << k); n++, i++)
			bind_call(r, ca, r->caq[i].idx, &r->caq[i].c);
		rc = st_exec(r, ca, "calls");
	}
	r->ncaq = 0;
	return (rc);
}

/* Rows waiting in a batch go in before any other row. */
static inline int
flush_pending(struct run *r)
{
	int rc = 0;

	if (r->nevq > 0)
		rc = flush_events(r);
	if (r->ncaq > 0 && rc == 0)
		rc = flush_calls(r);
	return (rc);
}

/*
 * The sink of the stitcher: rows as they become final, into the
 * statements prepared by write_db().
 */
static int
sink_block(void *arg, int64_t gid)
{
	struct run *r = arg;

	if (ix_grow((void **)&r->gs, &r->cgs, (size_t)gid + 1,
	    sizeof(*r->gs)) < 0)
		return (-HWTR_E_NOMEM);
	symbolize(r, &r->st.g[gid], &r->gs[gid]);
	return (0);
}

/*
 * A call target no symbol or FDE covers (code without unwind tables): a
 * function "IMAGE+0xADDR" of size 0, origin "call", so that calls and
 * func name it.  Its blocks after the first keep no symbol.
 */
static int
sink_func_start(void *arg, int64_t gid)
{
	struct run *r = arg;
	struct ix_gsym *g = &r->gs[gid];
	const struct hwtr_image_desc *id;
	const char *base;
	uint64_t key, h;
	size_t i;
	char name[512];
	int rc;

	if (!g->has_image || g->symbol != 0)
		return (0);
	key = (((uint64_t)g->image << 48) ^ g->image_addr) + 1;
	if (r->nct * 2 >= r->ctcap) {
		size_t n = r->ctcap ? r->ctcap * 2 : 256;
		uint64_t *k = calloc(n, sizeof(*k));
		int64_t *v = calloc(n, sizeof(*v));

		if (k == NULL || v == NULL) {
			free(k);
			free(v);
			return (-HWTR_E_NOMEM);
		}
		for (i = 0; i < r->ctcap; i++) {
			if (r->ct_key[i] == 0)
				continue;
			for (h = ix_hash64(r->ct_key[i]);; h++)
				if (k[h & (n - 1)] == 0)
					break;
			k[h & (n - 1)] = r->ct_key[i];
			v[h & (n - 1)] = r->ct_id[i];
		}
		free(r->ct_key);
		free(r->ct_id);
		r->ct_key = k;
		r->ct_id = v;
		r->ctcap = n;
	}
	for (h = ix_hash64(key);; h++) {
		i = h & (r->ctcap - 1);
		if (r->ct_key[i] == key) {
			g->symbol = r->ct_id[i];
			goto named;
		}
		if (r->ct_key[i] == 0)
			break;
	}
	id = hwtr_ar_image(r->ar, (size_t)(g->image - 1));
	base = id != NULL && id->path != NULL ? strrchr(id->path, '/') : NULL;
	base = base != NULL ? base + 1 : id != NULL && id->path != NULL ?
	    id->path : "image";
	snprintf(name, sizeof(name), "%s+%#" PRIx64, base, g->image_addr);
	if (r->s_sy.st == NULL && (rc = st_prep(r, &r->s_sy, "INSERT INTO "
	    "symbols VALUES (?,?,?,?,?,?,?,?,?)")) < 0)
		return (rc);
	b_int(&r->s_sy, r->next_sym);
	b_int(&r->s_sy, g->image);
	b_text(&r->s_sy, name);
	b_int(&r->s_sy, (int64_t)g->image_addr);
	b_int(&r->s_sy, 0);
	b_stext(&r->s_sy, "func");
	b_stext(&r->s_sy, "local");
	b_stext(&r->s_sy, "call");
	b_text(&r->s_sy, NULL);
	if ((rc = st_exec(r, &r->s_sy, "symbols")) < 0)
		return (rc);
	r->ct_key[i] = key;
	r->ct_id[i] = r->next_sym;
	r->nct++;
	g->symbol = r->next_sym++;
named:
	g->sym_offset = 0;
	r->st.g[gid].fkey = (uint32_t)g->symbol;
	r->st.g[gid].bflags |= IX_BF_FSTART;
	return (0);
}

static int
sink_chunk(void *arg, const struct ix_chunk *c)
{
	struct run *r = arg;
	struct stmt *ch = &r->s_ch;
	int rc;

	if ((rc = flush_pending(r)) < 0)
		return (rc);
	r->ix->stats.exec_bytes += c->data.len;
	b_int(ch, (int64_t)r->cur + 1);
	b_int(ch, c->seq);
	b_int(ch, c->nblocks);
	b_int(ch, c->insn);
	b_int(ch, c->ninsns);
	b_opt(ch, c->has_tsc, (int64_t)c->tsc);
	b_blob(ch, c->data.p != NULL ? c->data.p : (const uint8_t *)"",
	    c->data.len);
	return (st_exec(r, ch, "exec_chunks"));
}

static int
sink_ts(void *arg, const struct ix_ts *t)
{
	struct run *r = arg;
	struct stmt *ts = &r->s_ts;
	int rc;

	if ((rc = flush_pending(r)) < 0)
		return (rc);
	b_int(ts, (int64_t)r->cur + 1);
	b_int(ts, t->seq);
	b_int(ts, t->insn);
	b_int(ts, (int64_t)t->tsc);
	b_ns(r, ts, 1, t->tsc);
	return (st_exec(r, ts, "timestamps"));
}

static int
sink_call(void *arg, int64_t idx, const struct ix_call *c)
{
	struct run *r = arg;
	int rc;

	if (r->nevq > 0 && (rc = flush_events(r)) < 0)
		return (rc);
	r->caq[r->ncaq].idx = idx;
	r->caq[r->ncaq].c = *c;
	if (++r->ncaq == IX_CA_BATCH)
		return (flush_calls(r));
	return (0);
}

static int
sink_event(void *arg, const struct ix_event *e)
{
	struct run *r = arg;
	struct ix_evrow *q;
	int rc;

	if (e->has_ip && strcmp(e->kind, "decode-error") == 0) {
		if (ix_grow((void **)&r->errips, &r->cerrips, r->nerrips + 1,
		    sizeof(*r->errips)) < 0)
			return (-HWTR_E_NOMEM);
		r->errips[r->nerrips++] = e->ip;
	}
	if (r->ncaq > 0 && (rc = flush_calls(r)) < 0)
		return (rc);
	q = &r->evq[r->nevq];
	q->seq = e->seq;
	q->insn = e->insn;
	q->kind = e->kind;
	q->has_offset = e->has_offset;
	q->offset = e->offset;
	q->has_ip = e->has_ip;
	q->ip = e->ip;
	q->has_tsc = e->has_tsc;
	q->tsc = e->tsc;
	q->detail = NULL;
	if (e->detail != NULL && (q->detail = strdup(e->detail)) == NULL)
		return (-HWTR_E_NOMEM);
	if (++r->nevq == IX_EV_BATCH)
		return (flush_events(r));
	return (0);
}

static int
sink_cycles(void *arg, const struct ix_cycles *c)
{
	struct run *r = arg;
	struct stmt *cy = &r->s_cy;
	int rc;

	if ((rc = flush_pending(r)) < 0)
		return (rc);
	b_int(cy, ++r->ncycles);
	b_int(cy, (int64_t)r->cur + 1);
	b_int(cy, c->seq);
	b_int(cy, c->insn);
	b_int(cy, (int64_t)c->count);
	b_stext(cy, ix_cc_elems[c->elem]);
	b_int(cy, c->cumulative);
	return (st_exec(r, cy, "cycles"));
}

/* A stream is stitched: its aggregated rows and what it found. */
static int
end_stream(struct run *r)
{
	struct ix_stitch *st = &r->st;
	struct ix_ures *o = &r->ures[r->cur];
	int64_t thread = (int64_t)r->cur + 1;
	size_t i;
	int rc;

	if ((rc = ix_stitch_end(st)) < 0 || (rc = flush_pending(r)) < 0)
		return (rc);
	for (i = 0; i < st->nbranches && rc == 0; i++) {
		const struct ix_branch *b = &st->branches[i];

		b_int(&r->s_br, thread);
		b_int(&r->s_br, b->from);
		b_int(&r->s_br, b->to);
		b_int(&r->s_br, (int64_t)b->from_ip);
		b_int(&r->s_br, (int64_t)b->to_ip);
		b_stext(&r->s_br, ix_branch_kinds[b->kind]);
		b_int(&r->s_br, (int64_t)b->count);
		rc = st_exec(r, &r->s_br, "branches");
	}
	for (i = 0; i < st->ntouched && rc == 0; i++) {
		b_int(&r->s_bc, thread);
		b_int(&r->s_bc, st->touched[i]);
		b_int(&r->s_bc, (int64_t)st->scount[st->touched[i]]);
		rc = st_exec(r, &r->s_bc, "block_counts");
	}
	o->exec_blocks = st->exec_blocks;
	o->exec_insns = st->exec_insns;
	o->errors = st->errors;
	o->gaps = st->gaps;
	o->ncalls = st->ncalls;
	o->max_depth = st->max_depth;
	o->undecoded = st->undecoded;
	o->has_first = st->has_first;
	o->has_last = st->has_last;
	o->first_tsc = st->first_tsc;
	o->last_tsc = st->last_tsc;
	r->call_base += st->ncalls;
	r->ix->stats.blocks += (uint64_t)st->exec_blocks;
	r->ix->stats.insns += (uint64_t)st->exec_insns;
	r->ix->stats.errors += (uint64_t)st->errors;
	r->ix->stats.undecoded_bytes += st->undecoded;
	r->ix->stats.calls += (uint64_t)st->ncalls;
	return (rc);
}

static void
report_progress(struct run *r)
{
	uint64_t sum;
	size_t w;

	if (r->ix->opts.progress == NULL)
		return;
	clock_gettime(CLOCK_MONOTONIC, &r->last_report);
	pthread_mutex_lock(&r->lock);
	sum = r->bytes_done;
	for (w = 0; w < r->nworkers; w++)
		/* Written by the workers as they go: a relaxed read. */
		sum += __atomic_load_n(&r->wprogress[w], __ATOMIC_RELAXED);
	pthread_mutex_unlock(&r->lock);
	if (sum > r->ix->stats.trace_bytes)
		sum = r->ix->stats.trace_bytes;
	r->ix->opts.progress(r->ix->opts.progress_arg, sum,
	    r->ix->stats.trace_bytes);
}

/*
 * Unit @ui of CoreSight segment @g may be left for later: nothing came
 * for it so far and a later unit has a batch waiting (under lock).
 */
static int
defer_unit(const struct ix_seg *g, size_t ui)
{
	size_t v;

	if (g->bq == NULL || g->touched == NULL || ui >= g->nouts ||
	    __atomic_load_n(&g->touched[ui], __ATOMIC_RELAXED))
		return (0);
	for (v = ui + 1; v < g->nouts; v++)
		if (g->bq[v].head != NULL)
			return (1);
	return (0);
}

/* Stitch unit @u (or leave it, *@deferred, when @may_defer). */
static int
stitch_unit(struct run *r, size_t u, int may_defer, int *deferred)
{
	size_t k, i, s;
	int rc = 0;

	*deferred = 0;
	{
		struct ix_ures *o = &r->ures[u];
		const struct hwtr_stream_desc *sd;

		s = r->ustream[u];
		sd = hwtr_ar_stream(r->ar, s);
		/* Rows waiting are the previous unit's. */
		if ((rc = flush_pending(r)) < 0)
			return (rc);
		r->cur = u;
		ix_stitch_begin(&r->st);
		/* CoreSight ranges are OpenCSD's: kept as they come. */
		r->st.merge = sd->format == HWTR_TF_INTEL_PT;
		o->format = sd->format;
		if (sd->format != HWTR_TF_INTEL_PT &&
		    sd->format != HWTR_TF_CORESIGHT &&
		    (o->problem = strdup("no decoder for this trace format")) ==
		    NULL)
			return (-HWTR_E_NOMEM);
		for (k = 0; k < r->res[s].nseg && rc == 0; k++) {
			struct ix_seg *g;
			struct ix_seg_out *out;

			i = r->res[s].seg0 + k;
			g = &r->segs[i];
			pthread_mutex_lock(&r->lock);
			r->wseg = i;
			r->wunit = u - r->ufirst[s];
			r->wbusy = 1;
			for (;;) {
				struct timespec ts;
				struct ix_batch *b;

				/* CoreSight batches, as they come. */
				if (g->bq != NULL && r->wunit < g->nouts &&
				    (b = g->bq[r->wunit].head) != NULL) {
					g->bq[r->wunit].head = b->next;
					if (b->next == NULL)
						g->bq[r->wunit].tail = NULL;
					g->bq[r->wunit].n--;
					pthread_cond_broadcast(&r->work_cv);
					pthread_mutex_unlock(&r->lock);
					/* Its events name the unit's stream. */
					if (o->name == NULL) {
						o->cs_batched = 1;
						o->trace_id = b->out.trace_id;
					}
					rc = ix_stitch_segment(&r->st, &b->out);
					ix_seg_out_free(&b->out);
					free(b);
					pthread_mutex_lock(&r->lock);
					if (rc < 0)
						break;
					continue;
				}
				if (g->done)
					break;
				if (may_defer && defer_unit(g, r->wunit)) {
					*deferred = 1;
					break;
				}

				clock_gettime(CLOCK_REALTIME, &ts);
				ts.tv_nsec += 200 * 1000 * 1000;
				if (ts.tv_nsec >= 1000000000) {
					ts.tv_sec++;
					ts.tv_nsec -= 1000000000;
				}
				/* Progress when nothing came for 200 ms. */
				if (pthread_cond_timedwait(&r->done_cv, &r->lock,
				    &ts) == ETIMEDOUT && !g->done) {
					pthread_mutex_unlock(&r->lock);
					report_progress(r);
					pthread_mutex_lock(&r->lock);
				}
			}
			r->wbusy = 0;
			pthread_mutex_unlock(&r->lock);
			if (rc < 0 || *deferred)
				return (rc);
			if (g->outs == NULL)
				return (-HWTR_E_NOMEM);
			out = &g->outs[u - r->ufirst[s] < g->nouts ?
			    u - r->ufirst[s] : 0];
			if (out->rc == -HWTR_E_INTR)
				rc = -HWTR_E_INTR;
			else if (out->rc < 0 && o->rc == 0) {
				o->rc = out->rc;
				o->err = strdup(out->err);
			}
			if (rc == 0 && out->problem != NULL &&
			    o->problem == NULL) {
				o->problem = out->problem;
				out->problem = NULL;
			}
			if (rc == 0 && out->name != NULL && o->name == NULL) {
				o->name = out->name;
				out->name = NULL;
				o->trace_id = out->trace_id;
				o->format = out->format;
			}
			if (rc == 0)
				rc = ix_stitch_segment(&r->st, out);
			ix_seg_out_free(out);
			if (--g->nleft > 0)
				continue;
			free(g->outs);
			g->outs = NULL;
			pthread_mutex_lock(&r->lock);
			r->stitched = i + 1;
			pthread_cond_broadcast(&r->work_cv);
			pthread_mutex_unlock(&r->lock);
			/* Every 200 ms when the writer never has to wait. */
			if (r->ix->opts.progress != NULL) {
				struct timespec now;

				clock_gettime(CLOCK_MONOTONIC, &now);
				if ((now.tv_sec - r->last_report.tv_sec) * 1000 +
				    (now.tv_nsec - r->last_report.tv_nsec) /
				    1000000 >= 200)
					report_progress(r);
			}
		}
		if (rc == 0)
			rc = end_stream(r);
	}
	return (rc);
}

/*
 * The writer: every unit's segments, in order, as the workers finish
 * them; each one is freed as soon as its last unit has replayed it.
 *
 * A CoreSight buffer's units are stitched in trace ID order, but the
 * buffer is decoded in one pass: a unit whose trace ID has no trace
 * would hold back the next ones' batches until the end.  Such a unit
 * (nothing routed to it yet, while a later unit has a batch) is left for
 * the end of its stream: with no element it writes no row and makes no
 * block, so the database is the same.  Should an element or event come
 * for it after all, the guess was wrong and the whole index is done
 * again without leaving units for later (r->spec_failed).
 */
static int
stitch_all(struct run *r)
{
	size_t u, *def, ndef = 0, j;
	int rc = 0, d;

	if ((def = calloc(r->nunits + 1, sizeof(*def))) == NULL)
		return (-HWTR_E_NOMEM);
	for (u = 0; u < r->nunits && rc == 0; u++) {
		rc = stitch_unit(r, u, r->cs_batch != 0 && !r->nospec, &d);
		if (rc == 0 && d)
			def[ndef++] = u;
		if (u + 1 < r->nunits && r->ustream[u + 1] == r->ustream[u])
			continue;
		for (j = 0; j < ndef && rc == 0; j++) {
			size_t s = r->ustream[def[j]];
			struct ix_seg *g = &r->segs[r->res[s].seg0];
			size_t ui = def[j] - r->ufirst[s];
			int touched;

			rc = stitch_unit(r, def[j], 0, &d);
			pthread_mutex_lock(&r->lock);
			touched = g->touched != NULL && ui < g->nouts &&
			    __atomic_load_n(&g->touched[ui], __ATOMIC_RELAXED);
			pthread_mutex_unlock(&r->lock);
			if (rc == 0 && touched) {
				r->spec_failed = 1;
				rc = -HWTR_E_LIMIT;
			}
		}
		ndef = 0;
	}
	free(def);
	report_progress(r);
	return (rc);
}

/* Start the workers, stitch, stop the workers. */
static int
run_pipeline(struct run *r)
{
	pthread_t *tids;
	struct wctx *wc;
	struct timespec t0, t1;
	size_t nj, i, started = 0;
	long ncpu;
	int rc;

	nj = r->ix->opts.jobs > 0 ? (size_t)r->ix->opts.jobs : 0;
	if (nj == 0) {
		ncpu = sysconf(_SC_NPROCESSORS_ONLN);
		nj = ncpu > 0 ? (size_t)ncpu : 1;
	}
	if (nj > r->nsegs)
		nj = r->nsegs > 0 ? r->nsegs : 1;
	r->window = 2 * nj + 1;
	r->nworkers = nj;
	tids = calloc(nj, sizeof(*tids));
	wc = calloc(nj, sizeof(*wc));
	r->wprogress = calloc(nj, sizeof(*r->wprogress));
	if (tids == NULL || wc == NULL || r->wprogress == NULL) {
		free(tids);
		free(wc);
		return (-HWTR_E_NOMEM);
	}
	for (i = 0; i < nj; i++) {
		wc[i].r = r;
		wc[i].w = i;
		if (pthread_create(&tids[i], NULL, worker, &wc[i]) == 0)
			started++;
		else
			break;
	}
	if (started == 0) {
		free(tids);
		free(wc);
		ix_err(r->ix, "cannot start a decoding thread");
		return (-HWTR_E_NOMEM);
	}
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	rc = stitch_all(r);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
	r->ix->stats.write_cpu_ns += (uint64_t)((t1.tv_sec - t0.tv_sec) *
	    1000000000LL + (t1.tv_nsec - t0.tv_nsec));
	pthread_mutex_lock(&r->lock);
	r->abort = 1;
	pthread_cond_broadcast(&r->work_cv);
	pthread_mutex_unlock(&r->lock);
	for (i = 0; i < started; i++)
		pthread_join(tids[i], NULL);
	/* Segments decoded but not stitched (after a failure). */
	for (i = 0; i < r->nsegs; i++)
		free_seg(&r->segs[i]);
	free(tids);
	free(wc);
	return (rc);
}

static int
write_blocks(struct run *r)
{
	struct stmt bl;
	size_t i;
	int rc;

	if ((rc = st_prep(r, &bl, "INSERT INTO blocks VALUES "
	    "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)")) < 0)
		return (rc);
	for (i = 0; i < r->st.ng && rc == 0; i++) {
		const struct ix_sblock *b = &r->st.g[i];
		const struct ix_gsym *g = &r->gs[i];

		b_int(&bl, (int64_t)i);
		b_int(&bl, (int64_t)b->ip);
		b_int(&bl, (int64_t)b->end_ip);
		b_int(&bl, b->size);
		b_int(&bl, b->ninsn);
		b_int(&bl, b->mode);
		b_stext(&bl, ix_class_names[b->cls]);
		b_opt(&bl, g->has_image, g->image);
		b_opt(&bl, g->has_image, (int64_t)g->image_addr);
		b_opt(&bl, g->symbol != 0, g->symbol);
		b_opt(&bl, g->symbol != 0, (int64_t)g->sym_offset);
		b_opt(&bl, g->file != 0, g->file);
		b_opt(&bl, g->file != 0, g->line);
		b_int(&bl, (int64_t)b->count);
		b_blob(&bl, b->lens, b->ninsn);
		b_blob(&bl, b->code, b->size);
		rc = st_exec(r, &bl, "blocks");
	}
	st_done(&bl);
	r->ix->stats.static_blocks = r->st.ng;
	return (rc);
}

/* Capture-wide events from sideband, after the threads' own. */
static int
write_sbevents(struct run *r)
{
	struct stmt *ev = &r->s_ev;
	size_t i;
	int rc = 0;

	for (i = 0; i < r->nsbev && rc == 0; i++) {
		const struct ix_sbev *e = &r->sbev[i];
		struct ix_thread *t = e->stream >= 0 ?
		    &r->threads[r->ufirst[e->stream]] :
		    thread_get(r, e->pid, e->tid, 0);

		sqlite3_bind_null(ev->st, ++ev->i);
		b_opt(ev, t != NULL, t ? t->id : 0);
		b_opt(ev, e->stream >= 0, e->stream >= 0 ?
		    hwtr_ar_stream(r->ar, (size_t)e->stream)->id : 0);
		b_opt(ev, 0, 0);
		b_opt(ev, 0, 0);
		b_text(ev, e->kind);
		b_opt(ev, 0, 0);
		b_opt(ev, 0, 0);
		b_int(ev, (int64_t)e->tsc);
		b_ns(r, ev, 1, e->tsc);
		b_opt(ev, e->pid >= 0, e->pid);
		b_text(ev, e->detail);
		rc = st_exec(r, ev, "events");
	}
	return (rc);
}

static void
report_streams(struct run *r)
{
	size_t i;

	warn_missing(r);
	for (i = 0; i < r->nunits; i++) {
		const struct ix_ures *o = &r->ures[i];
		char nbuf[32], msg[160];
		const char *name = stream_name(hwtr_ar_stream(r->ar,
		    r->ustream[i]), nbuf, sizeof(nbuf));

		if (o->rc < 0)
			ix_problem(r->ix, "stream '%s': %s", name,
			    o->err != NULL ? o->err : hwtr_errstr(o->rc));
		else if (o->errors > 0) {
			snprintf(msg, sizeof(msg), "%lld decode error%s, %llu "
			    "bytes not decoded", (long long)o->errors,
			    o->errors == 1 ? "" : "s",
			    (unsigned long long)o->undecoded);
			ix_problem(r->ix, "stream '%s': %s", name, msg);
		} else if (o->problem != NULL)
			ix_problem(r->ix, "stream '%s': %s", name, o->problem);
	}
}

/*
 * @n statements "INSERT INTO @table VALUES (?,...),...": the k-th of 2^k
 * rows of @nvar parameters each, numbered on from row to row.
 */
static int
prep_batches(struct run *r, struct stmt *st, int n, const char *table,
    int nvar)
{
	char *sql, *p;
	int k, rows, j, rc = 0;

	for (k = 0; k < n && rc == 0; k++) {
		rows = 1 << k;
		if ((sql = malloc(64 + (size_t)rows * (2 * (size_t)nvar + 4))) ==
		    NULL)
			return (-HWTR_E_NOMEM);
		p = sql + sprintf(sql, "INSERT INTO %s VALUES", table);
		for (j = 0; j < rows * nvar; j++)
			p += sprintf(p, "%s", j == 0 ? " (?" :
			    j % nvar == 0 ? "),(?" : ",?");
		(void)strcpy(p, ")");
		rc = st_prep(r, &st[k], sql);
		free(sql);
	}
	return (rc);
}

/* SQLite's progress handler: stop its long steps on a cancel request. */
static int
db_cancelled(void *arg)
{
	const struct run *r = arg;

	return (r->ix->opts.cancel != NULL && *r->ix->opts.cancel);
}

/*
 * One transaction: the static tables, then the dynamic ones while the
 * workers decode, then what is known only at the end (blocks with their
 * counts, streams, threads, meta) and the indexes.
 */
static int
write_db(struct run *r, const char *tmp, int fd)
{
	struct ix_sink sink;
	struct timespec t0, t1;
	struct stat sf, sp;
	char *err = NULL;
	size_t i;
	int rc;

	/*
	 * @tmp was created by hwtr_out_create() (exclusively, under an
	 * unpredictable name, mode 0600) and @fd is open on it.  SQLite opens
	 * it by name: never through a link (SQLITE_OPEN_NOFOLLOW), never
	 * creating it, and only when the name still is the file created.
	 * One thread writes: SQLite's per-call mutexes cost 3% of an index.
	 */
	if (sqlite3_open_v2(tmp, &r->db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		ix_err(r->ix, "cannot create '%s': %s", tmp,
		    r->db ? sqlite3_errmsg(r->db) : "out of memory");
		sqlite3_close(r->db);
		r->db = NULL;
		return (-HWTR_E_DB);
	}
	if (fstat(fd, &sf) != 0 || lstat(tmp, &sp) != 0 ||
	    sf.st_dev != sp.st_dev || sf.st_ino != sp.st_ino) {
		ix_err(r->ix, "cannot create '%s': it was replaced", tmp);
		sqlite3_close(r->db);
		r->db = NULL;
		return (-HWTR_E_IO);
	}
	/* The index build at the end takes seconds: interruptible too. */
	sqlite3_progress_handler(r->db, 100000, db_cancelled, r);
	/*
	 * The file is DB.partial, renamed to DB only once complete, and a
	 * failed run removes it: there is never anything to roll back to,
	 * so no rollback journal (journal_mode OFF: no second copy of every
	 * page written), no fsync (synchronous OFF: the rename is the
	 * commit that matters; a machine that crashes after it may leave a
	 * damaged DB, which indexing the archive again makes), one lock
	 * taken once (locking_mode EXCLUSIVE: one writer, no reader).  A
	 * 16 MiB page cache and sorts (the indexes built at the end) that
	 * spill to temporary files: SQLite's memory does not grow with the
	 * database either.
	 */
	if (sqlite3_exec(r->db, "PRAGMA journal_mode = OFF;"
	    "PRAGMA synchronous = OFF; PRAGMA page_size = 4096;"
	    "PRAGMA locking_mode = EXCLUSIVE; PRAGMA temp_store = FILE;"
	    "PRAGMA cache_size = -16384;"
	    HWTR_IX_SCHEMA_SQL "BEGIN;", NULL, NULL, &err) != SQLITE_OK) {
		ix_err(r->ix, "database '%s': %s", tmp, err ? err : "?");
		sqlite3_free(err);
		return (-HWTR_E_DB);
	}
	memset(&sink, 0, sizeof(sink));
	sink.arg = r;
	sink.block = sink_block;
	sink.func_start = sink_func_start;
	sink.chunk = sink_chunk;
	sink.ts = sink_ts;
	sink.call = sink_call;
	sink.event = sink_event;
	sink.cycles = sink_cycles;
	ix_stitch_init(&r->st, &sink);
	r->call_base = 1;
	rc = write_static(r);
	if (rc == 0)
		rc = st_prep(r, &r->s_ch, "INSERT INTO exec_chunks VALUES "
		    "(?,?,?,?,?,?,?)");
	if (rc == 0)
		rc = st_prep(r, &r->s_ts, "INSERT INTO timestamps VALUES "
		    "(?,?,?,?,?)");
	if (rc == 0)
		rc = st_prep(r, &r->s_br, "INSERT INTO branches VALUES "
		    "(?,?,?,?,?,?,?)");
	if (rc == 0)
		rc = st_prep(r, &r->s_bc, "INSERT INTO block_counts VALUES "
		    "(?,?,?)");
	if (rc == 0)
		rc = prep_batches(r, r->s_can, IX_CA_LOG, "calls", IX_CA_VAR);
	if (rc == 0)
		rc = st_prep(r, &r->s_ev, "INSERT INTO events VALUES "
		    "(?,?,?,?,?,?,?,?,?,?,?,?)");
	if (rc == 0)
		rc = st_prep(r, &r->s_cy, "INSERT INTO cycles VALUES "
		    "(?,?,?,?,?,?,?)");
	for (i = 0; i < IX_EV_LOG && rc == 0; i++) {
		char sql[64 + IX_EV_BATCH * 64], *p = sql;
		size_t k;
		int v;

		p += sprintf(p, "INSERT INTO events VALUES");
		for (k = 0; k < (1u << i); k++) {
			v = 4 + IX_EV_VAR * (int)k;
			p += sprintf(p, "%s(NULL,?1,?2,?%d,?%d,?%d,?%d,?%d,?%d,"
			    "?%d,?3,?%d)", k ? "," : " ", v, v + 1, v + 2,
			    v + 3, v + 4, v + 5, v + 6, v + 7);
		}
		rc = st_prep(r, &r->s_evn[i], sql);
	}
	if (rc == 0)
		rc = run_pipeline(r);
	if (rc == 0)
		rc = flush_pending(r);
	if (rc == 0) {
		report_streams(r);
		r->ix->stats.threads = r->nthreads;
		rc = write_sbevents(r);
	}
	st_done(&r->s_ch);
	st_done(&r->s_ts);
	st_done(&r->s_br);
	st_done(&r->s_bc);
	for (i = 0; i < IX_CA_LOG; i++)
		st_done(&r->s_can[i]);
	st_done(&r->s_ev);
	st_done(&r->s_cy);
	st_done(&r->s_sy);
	for (i = 0; i < IX_EV_LOG; i++)
		st_done(&r->s_evn[i]);
	for (i = 0; i < r->nevq; i++)
		free(r->evq[i].detail);
	r->nevq = 0;
	if (rc == 0)
		rc = write_blocks(r);
	if (rc == 0)
		rc = write_streams(r);
	if (rc == 0)
		rc = write_meta(r);
	/*
	 * The decoders are done: the index sorts may use their CPUs (SQLite's
	 * sorter merges on helper threads; it is the longest part of the
	 * run's tail on traces with millions of calls).
	 */
	if (rc == 0) {
		char pr[48];

		(void)snprintf(pr, sizeof(pr), "PRAGMA threads = %zu;",
		    r->nworkers);
		(void)sqlite3_exec(r->db, pr, NULL, NULL, NULL);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		if (sqlite3_exec(r->db, HWTR_IX_INDEX_SQL "COMMIT;", NULL,
		    NULL, &err) != SQLITE_OK) {
			ix_err(r->ix, "database '%s': %s", tmp,
			    err ? err : "?");
			sqlite3_free(err);
			rc = -HWTR_E_DB;
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		r->ix->stats.index_ns = (uint64_t)((t1.tv_sec - t0.tv_sec) *
		    1000000000LL + (t1.tv_nsec - t0.tv_nsec));
	}
	if (sqlite3_close(r->db) != SQLITE_OK && rc == 0) {
		ix_err(r->ix, "database '%s': %s", tmp, sqlite3_errmsg(r->db));
		rc = -HWTR_E_DB;
	}
	r->db = NULL;
	return (rc);
}

static void
run_free(struct run *r)
{
	size_t i;

	for (i = 0; i < r->nstreams; i++)
		if (r->jmaps != NULL)
			free(r->jmaps[i]);
	/* And the chunks of segments never decoded (a failure). */
	hwtr_sv_free(r->sv);
	free(r->res);
	free(r->jmaps);
	for (i = 0; i < r->nsegs; i++)
		free_seg(&r->segs[i]);
	free(r->segs);
	for (i = 0; r->ures != NULL && i < r->nunits; i++) {
		free(r->ures[i].err);
		free(r->ures[i].problem);
		free(r->ures[i].name);
	}
	free(r->ures);
	free(r->ustream);
	free(r->ufirst);
	free((void *)(uintptr_t)r->wprogress);
	ix_stitch_free(&r->st);
	free(r->gs);
	free(r->ct_key);
	free(r->ct_id);
	free(r->errips);
	for (i = 0; i < r->nfiles; i++)
		free(r->files[i]);
	free(r->files);
	free(r->ftab);
	for (i = 0; i < r->nimgs; i++) {
		if (r->imgs[i].file != NULL) {
			unlink(r->imgs[i].file);
			free(r->imgs[i].file);
		}
		ix_elf_free(&r->imgs[i].elf);
		if (r->imgs[i].bytes != NULL && r->imgs[i].size > 0)
			munmap(r->imgs[i].bytes, r->imgs[i].size);
		free(r->imgs[i].file_ids);
	}
	free(r->imgs);
	free(r->img_bytes);
	free(r->img_len);
	if (r->tmpdir[0] != '\0')
		rmdir(r->tmpdir);
	free(r->maps);
	free(r->rp.ph);
	free(r->rp.th);
	free(r->rp.tn);
	free(r->rp.hits);
	free(r->isid_map);
	for (i = 0; i < r->nprocs; i++) {
		free(r->procs[i].path);
		free(r->procs[i].comm);
	}
	free(r->procs);
	for (i = 0; i < r->nthreads; i++)
		free(r->threads[i].name);
	free(r->threads);
	for (i = 0; i < r->nsbev; i++)
		free(r->sbev[i].detail);
	free(r->sbev);
	free(r->lost);
	if (r->isc != NULL)
		pt_iscache_free(r->isc);
	if (r->ar != NULL)
		hwtr_ar_close(r->ar);
	pthread_mutex_destroy(&r->lock);
	pthread_cond_destroy(&r->work_cv);
	pthread_cond_destroy(&r->done_cv);
}

/* One index run; *@again when a unit left for later was not empty. */
static int
run_once(struct hwtr_ix *ix, const char *archive, const char *db,
    int nospec, int *again)
{
	struct run r;
	struct hwtr_ar_opts ao;
	char *tmp = NULL;
	const char *td;
	int rc, fd;

	clear_problems(ix);
	memset(&ix->stats, 0, sizeof(ix->stats));
	ix->err[0] = '\0';
	memset(&r, 0, sizeof(r));
	pthread_mutex_init(&r.lock, NULL);
	pthread_cond_init(&r.work_cv, NULL);
	pthread_cond_init(&r.done_cv, NULL);
	r.ix = ix;
	r.archive = archive;
	r.nospec = nospec;
	memset(&ao, 0, sizeof(ao));
	ao.cancel = ix->opts.cancel;
	rc = hwtr_ar_open(&r.ar, archive, &ao);
	if (rc < 0) {
		const char *why = r.ar ? hwtr_ar_errmsg(r.ar) :
		    hwtr_errstr(rc);
		char quoted[PATH_MAX + 3];

		/*
		 * The reader's message names the file when the failure is
		 * the file's own (cannot open it, not a regular file): say
		 * it once, not "cannot open 'x': cannot open 'x': ...".
		 */
		snprintf(quoted, sizeof(quoted), "'%s'", archive);
		if (strstr(why, quoted) != NULL)
			ix_err(ix, "%s", why);
		else
			ix_err(ix, "cannot open '%s': %s", archive, why);
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
	snprintf(r.tmpdir, sizeof(r.tmpdir), "%s/hwtrace-ix.XXXXXX",
	    td != NULL && strlen(td) < 40 ? td : "/tmp");
	if (mkdtemp(r.tmpdir) == NULL) {
		ix_err(ix, "cannot create a directory '%s': %s", r.tmpdir,
		    strerror(errno));
		r.tmpdir[0] = '\0';
		rc = -HWTR_E_IO;
		goto out;
	}
	r.nstreams = hwtr_ar_nstreams(r.ar);
	ix->stats.streams = r.nstreams;
	r.lost = calloc(r.nstreams + 1, sizeof(*r.lost));
	r.isc = pt_iscache_alloc(NULL);
	if (r.lost == NULL || r.isc == NULL) {
		rc = -HWTR_E_NOMEM;
		goto out;
	}
	if ((rc = make_units(&r)) < 0 ||
	    (rc = load_images(&r)) < 0 || (rc = replay_sideband(&r)) < 0 ||
	    (rc = add_sections(&r)) < 0 || (rc = plan(&r)) < 0)
		goto out;
	if (ix->opts.cancel != NULL && *ix->opts.cancel) {
		rc = -HWTR_E_INTR;
		goto out;
	}
	if ((fd = hwtr_out_create(db, HWTR_OUT_RANDOM, &tmp)) < 0) {
		ix_err(ix, "cannot create '%s.partial.XXXXXX': %s", db,
		    strerror(errno));
		rc = -HWTR_E_IO;
		goto out;
	}
	rc = write_db(&r, tmp, fd);
	close(fd);
	if (rc == 0 && ix->opts.cancel != NULL && *ix->opts.cancel)
		rc = -HWTR_E_INTR;
	if (rc == 0 && hwtr_out_commit(tmp, db) != 0) {
		ix_err(ix, "cannot rename '%s' to '%s': %s", tmp, db,
		    strerror(errno));
		rc = -HWTR_E_IO;
	}
out:
	/* Whatever step a cancel request stopped, it is an interruption. */
	if (rc < 0 && ix->opts.cancel != NULL && *ix->opts.cancel)
		rc = -HWTR_E_INTR;
	if (rc < 0 && tmp != NULL)
		unlink(tmp);
	if (rc < 0 && ix->err[0] == '\0')
		ix_err(ix, "%s", hwtr_errstr(rc));
	free(tmp);
	*again = r.spec_failed;
	run_free(&r);
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
	return (rc);
}
