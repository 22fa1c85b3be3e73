/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Images and sideband replay (ix_image.h).  Images are extracted to the
 * run's private temporary directory because libipt's image section cache
 * maps files; the sideband is replayed into processes, threads and
 * mappings over time: a forked child inherits its parent's mappings,
 * exec drops them.
 */

#include <assert.h>
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
#include "hwtr_stream.h"
#include "ix_run.h"
#include "ix_image.h"

/* ----------------------------------------------------------------- */
/* Images                                                             */

/*
 * Why a LOST record lost data, after its counts in the event's detail:
 * where the loss lies follows from it (a ring's overwritten bytes come
 * before what it kept, a stopped trace loses its end), and the query
 * verbs place the gap by it (hwtrace-db(5), events).
 */
static const char *
lost_why(int reason)
{
	switch (reason) {
	case HWTR_LOST_OVERFLOW:
		return (": overflow");
	case HWTR_LOST_WRAP:
		return (": ring overwritten");
	case HWTR_LOST_STOPPED:
		return (": stopped when full");
	case HWTR_LOST_SIDEBAND:
		return (": sideband dropped");
	default:
		return ("");
	}
}

int
ix_load_images(struct ix_images *im, const char *tmpdir)
{
	size_t i;

	im->nimgs = hwtr_ar_nimages(im->ar);
	im->imgs = calloc(im->nimgs ? im->nimgs : 1,
	    sizeof(*im->imgs));
	im->img_bytes = calloc(im->nimgs + 1, sizeof(*im->img_bytes));
	im->img_len = calloc(im->nimgs + 1, sizeof(*im->img_len));
	if (im->imgs == NULL || im->img_bytes == NULL ||
	    im->img_len == NULL)
		return (-HWTR_E_NOMEM);
	for (i = 0; i < im->nimgs; i++) {
		const struct hwtr_image_desc *id = hwtr_ar_image(im->ar,
		    i);
		struct ix_img *ig = &im->imgs[i];
		void *buf = NULL, *dbg = NULL;
		size_t len = 0, dlen = 0, mi;
		char dname[HWTR_IMAGE_KEY_MAX + 16];
		int rc, fd;

		if (im->ix->opts.cancel != NULL && *im->ix->opts.cancel)
			return (-HWTR_E_INTR);

		/*
		 * Written out in bounded memory (an image may declare 4 GiB)
		 * and mapped: the pages the decoder and the symbolizer read
		 * are all that is resident.  The SHA-256 is checked on the
		 * way, as verify checks it.
		 */
		if (asprintf(&ig->file, "%s/%zu", tmpdir, i) < 0) {
			ig->file = NULL;
			return (-HWTR_E_NOMEM);
		}
		if ((fd = open(ig->file, O_RDWR | O_CREAT | O_EXCL |
		    O_CLOEXEC, 0600)) < 0) {
			ix_err(im->ix, "cannot write '%s': %s", ig->file,
			    strerror(errno));
			return (-HWTR_E_IO);
		}
		rc = hwtr_ar_extract_image(im->ar, i, fd);
		if (rc == -HWTR_E_INTR) {
			close(fd);
			return (rc);
		}
		if (rc == -HWTR_E_IO) {
			ix_err(im->ix, "cannot write '%s': %s", ig->file,
			    hwtr_ar_errmsg(im->ar));
			close(fd);
			return (rc);
		}
		if (rc < 0) {
			ix_problem(im->ix, "image '%s' (%s): cannot be read: "
			    "%s", id->path ? id->path : "?", id->key,
			    hwtr_ar_errmsg(im->ar));
			close(fd);
			unlink(ig->file);
			free(ig->file);
			ig->file = NULL;
			continue;
		}
		len = (size_t)id->size;
		if (len > 0 && (buf = mmap(NULL, len, PROT_READ, MAP_PRIVATE,
		    fd, 0)) == MAP_FAILED) {
			ix_err(im->ix, "cannot map '%s': %s", ig->file,
			    strerror(errno));
			close(fd);
			return (-HWTR_E_IO);
		}
		close(fd);
		ig->size = len;
		ig->present = 1;
		ig->bytes = buf;
		im->img_bytes[i] = buf;
		im->img_len[i] = len;
		/*
		 * Its separate debug file, when the archive has one: read now,
		 * while this thread is the archive's only reader, and kept
		 * for ix_load_symbols().
		 */
		snprintf(dname, sizeof(dname), "aux/debug/%s", id->key);
		if (hwtr_ar_find_member(im->ar, dname, &mi) == 0 &&
		    hwtr_ar_read_member(im->ar, mi, &dbg, &dlen) < 0) {
			ix_problem(im->ix, "image '%s' (%s): its debug file "
			    "cannot be read: %s", id->path ? id->path : "?",
			    id->key, hwtr_ar_errmsg(im->ar));
			dbg = NULL;
			dlen = 0;
		}
		ig->dbg = dbg;
		ig->dbglen = dlen;
		/* Where the problems of its ELF go (ix_load_symbols()). */
		ig->pat = im->ix->nproblems;
		/* What the decoders need (ix_add_sections()). */
		ig->elf.no_host = im->ix->opts.archive_only;
		if (ix_elf_load_hdr(&ig->elf, buf, len) < 0)
			return (-HWTR_E_NOMEM);
	}
	im->nelf = im->nimgs;
	return (0);
}

/* Problems [@from, end) moved to @at, the ones between after them. */
static void
problems_to(struct hwtr_ix *ix, size_t at, size_t from)
{
	char *p;
	size_t k;

	for (; from < ix->nproblems; from++, at++) {
		p = ix->problems[from];
		for (k = from; k > at; k--)
			ix->problems[k] = ix->problems[k - 1];
		ix->problems[at] = p;
	}
}

/*
 * The images' symbols, lines and inlined frames, which the decoders do
 * not read (ix_elf_load(): DWARF, the longest part of the run's start):
 * loaded once the workers decode.  The problems found go where they went
 * when ix_load_images() loaded them, each after its image's other ones,
 * before those of the sideband and the plan: the list is the same.
 */
int
ix_load_symbols(struct ix_images *im)
{
	struct hwtr_ix *ix = im->ix;
	size_t i, n0, moved = 0;
	char err[HWTR_ERRMSG_MAX];

	for (i = 0; i < im->nelf; i++) {
		const struct hwtr_image_desc *id = hwtr_ar_image(im->ar, i);
		struct ix_img *ig = &im->imgs[i];
		const char *base, *what = id->path ? id->path : "?";
		int no_host = ig->elf.no_host, rc;

		if (ix->opts.cancel != NULL && *ix->opts.cancel)
			return (-HWTR_E_INTR);
		if (!ig->present)
			continue;
		base = id->path != NULL ? strrchr(id->path, '/') : NULL;
		base = base != NULL ? base + 1 : id->path;
		ix_elf_free(&ig->elf);
		ig->elf.no_host = no_host;
		rc = ix_elf_load(&ig->elf, ig->bytes, ig->size, ig->dbg,
		    ig->dbglen, base, err, sizeof(err));
		free(ig->dbg);
		ig->dbg = NULL;
		n0 = ix->nproblems;
		if (rc != 0)
			ix_problem(ix, "image '%s' (%s): %s", what, id->key,
			    err);
		else if (ig->elf.inl_nodwo > 0)
			ix_problem(ix, "image '%s' (%s): %zu split DWARF "
			    "units without their .dwo file: no inlined frames "
			    "there", what, id->key, ig->elf.inl_nodwo);
		problems_to(ix, ig->pat + moved, n0);
		moved += ix->nproblems - n0;
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
    int32_t (*key)(const struct ix_images *, size_t),
    const struct ix_images *im)
{
	size_t k;

	if (cap == 0)
		return (0);
	for (k = id_hash(id, cap); h[k] != 0; k = (k + 1) & (cap - 1))
		if (key(im, h[k] - 1) == id)
			return (h[k]);
	return (0);
}

/* Add index @idx under @id (absent); the table stays at most half full. */
static int
id_add(size_t **hp, size_t *capp, size_t n, int32_t id, size_t idx,
    int32_t (*key)(const struct ix_images *, size_t),
    const struct ix_images *im)
{
	size_t *h = *hp, cap = *capp, ncap, k, i;

	if (2 * (n + 1) > cap) {
		ncap = cap ? 2 * cap : 64;
		if ((h = calloc(ncap, sizeof(*h))) == NULL)
			return (-HWTR_E_NOMEM);
		for (i = 0; i < cap; i++) {
			if ((*hp)[i] == 0)
				continue;
			for (k = id_hash(key(im, (*hp)[i] - 1), ncap);
			    h[k] != 0; k = (k + 1) & (ncap - 1))
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
proc_key(const struct ix_images *im, size_t i)
{
	return (im->procs[i].pid);
}

static int32_t
thread_key(const struct ix_images *im, size_t i)
{
	return (im->threads[i].tid);
}

/* Index a thread added to im->threads (the first of a tid wins). */
static int
thread_indexed(struct ix_images *im, size_t i)
{
	if (im->threads[i].tid < 0 || id_find(im->rp.th, im->rp.thcap,
	    im->threads[i].tid, thread_key, im) != 0)
		return (0);
	return (id_add(&im->rp.th, &im->rp.thcap, i, im->threads[i].tid, i,
	    thread_key, im));
}

static struct ix_proc *
proc_get(struct ix_images *im, int32_t pid)
{
	size_t i;
	struct ix_proc *p;

	if ((i = id_find(im->rp.ph, im->rp.phcap, pid, proc_key, im)) != 0)
		return (&im->procs[i - 1]);
	if (hwtr_grow((void **)&im->procs, &im->cprocs, im->nprocs + 1,
	    sizeof(*p)) < 0)
		return (NULL);
	p = &im->procs[im->nprocs];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->ppid = -1;
	if (id_add(&im->rp.ph, &im->rp.phcap, im->nprocs, pid, im->nprocs,
	    proc_key, im) < 0)
		return (NULL);
	im->nprocs++;
	return (p);
}

static struct ix_proc *
proc_find(struct ix_images *im, int32_t pid)
{
	size_t i;

	if ((i = id_find(im->rp.ph, im->rp.phcap, pid, proc_key, im)) != 0)
		return (&im->procs[i - 1]);
	return (NULL);
}

struct ix_thread *
ix_thread_get(struct ix_images *im, int32_t pid, int32_t tid, int create)
{
	size_t i;
	struct ix_thread *t;

	if (tid >= 0 && (i = id_find(im->rp.th, im->rp.thcap, tid, thread_key,
	    im)) != 0)
		return (&im->threads[i - 1]);
	if (!create || tid < 0)
		return (NULL);
	if (hwtr_grow((void **)&im->threads, &im->cthreads, im->nthreads + 1,
	    sizeof(*t)) < 0)
		return (NULL);
	t = &im->threads[im->nthreads];
	memset(t, 0, sizeof(*t));
	t->id = (int64_t)++im->nthreads;
	t->stream = -1;
	t->pid = pid;
	t->tid = tid;
	if (thread_indexed(im, im->nthreads - 1) < 0)
		return (NULL);
	return (t);
}

static int
sb_event(struct ix_images *im, const char *kind, const struct hwtr_sb_rec *rec,
    int stream, const char *detail)
{
	struct ix_sbev *e;

	if (hwtr_grow((void **)&im->sbev, &im->csbev, im->nsbev + 1,
	    sizeof(*e)) < 0)
		return (-HWTR_E_NOMEM);
	e = &im->sbev[im->nsbev++];
	e->kind = kind;
	e->pid = rec->pid;
	e->tid = rec->tid;
	e->tsc = rec->time;
	e->stream = stream;
	e->detail = detail != NULL ? strdup(detail) : NULL;
	return (0);
}

static int
find_image(struct ix_images *im, const struct hwtr_sb_rec *rec)
{
	char key[HWTR_IMAGE_KEY_MAX];
	size_t i;
	int k;

	if (rec->u.mmap.image != NULL &&
	    (k = hwtr_ar_find_image(im->ar, rec->u.mmap.image)) >= 0)
		return (k);
	if (rec->u.mmap.build_id_len > 0 &&
	    rec->u.mmap.build_id_len <= HWTR_BUILD_ID_MAX) {
		strcpy(key, "bid-");
		for (i = 0; i < rec->u.mmap.build_id_len; i++)
			snprintf(key + 4 + 2 * i, 3, "%02x",
			    rec->u.mmap.build_id[i]);
		if ((k = hwtr_ar_find_image(im->ar, key)) >= 0)
			return (k);
	}
	if (rec->u.mmap.path != NULL) {
		for (i = 0; i < im->nimgs; i++) {
			const struct hwtr_image_desc *id =
			    hwtr_ar_image(im->ar, i);

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
tn_cmp(const struct ix_images *im, size_t a, int32_t pid, uint64_t start,
    size_t idx)
{
	const struct ix_map *m = &im->maps[a];

	if (m->pid != pid)
		return (m->pid < pid ? -1 : 1);
	if (m->start != start)
		return (m->start < start ? -1 : 1);
	return (a < idx ? -1 : a > idx ? 1 : 0);
}

static size_t
tn_insert(struct ix_images *im, size_t node, size_t i)
{
	struct ix_tnode *tn = im->rp.tn, *n;
	size_t c;

	if (node == 0) {
		tn[i].left = tn[i].right = 0;
		tn[i].prio = tn_prio(i);
		return (i + 1);
	}
	n = &tn[node - 1];
	if (tn_cmp(im, i, im->maps[node - 1].pid, im->maps[node - 1].start,
	    node - 1) < 0) {
		n->left = tn_insert(im, n->left, i);
		if (tn[n->left - 1].prio > n->prio) {
			c = n->left;
			n->left = tn[c - 1].right;
			tn[c - 1].right = node;
			return (c);
		}
	} else {
		n->right = tn_insert(im, n->right, i);
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
tn_merge(struct ix_images *im, size_t a, size_t b)
{
	struct ix_tnode *tn = im->rp.tn;

	if (a == 0)
		return (b);
	if (b == 0)
		return (a);
	if (tn[a - 1].prio > tn[b - 1].prio) {
		tn[a - 1].right = tn_merge(im, tn[a - 1].right, b);
		return (a);
	}
	tn[b - 1].left = tn_merge(im, a, tn[b - 1].left);
	return (b);
}

static size_t
tn_erase(struct ix_images *im, size_t node, size_t i)
{
	struct ix_tnode *tn = im->rp.tn;
	int c;

	if (node == 0)
		return (0);
	c = tn_cmp(im, i, im->maps[node - 1].pid, im->maps[node - 1].start,
	    node - 1);
	if (c == 0)
		return (tn_merge(im, tn[node - 1].left, tn[node - 1].right));
	if (c < 0)
		tn[node - 1].left = tn_erase(im, tn[node - 1].left, i);
	else
		tn[node - 1].right = tn_erase(im, tn[node - 1].right, i);
	return (node);
}

/* Collect the open mappings of @pid starting in [@lo, @hi] into rp.hits. */
static int
tn_range(struct ix_images *im, size_t node, int32_t pid, uint64_t lo,
    uint64_t hi)
{
	const struct ix_map *m;
	int rc;

	if (node == 0)
		return (0);
	if (++im->rp.work > IX_REPLAY_WORK)
		return (-HWTR_E_LIMIT);
	m = &im->maps[node - 1];
	if (m->pid < pid || (m->pid == pid && m->start < lo))
		return (tn_range(im, im->rp.tn[node - 1].right, pid, lo, hi));
	if (m->pid > pid || m->start > hi)
		return (tn_range(im, im->rp.tn[node - 1].left, pid, lo, hi));
	if ((rc = tn_range(im, im->rp.tn[node - 1].left, pid, lo, hi)) < 0)
		return (rc);
	if (hwtr_grow((void **)&im->rp.hits, &im->rp.chits, im->rp.nhits + 1,
	    sizeof(*im->rp.hits)) < 0)
		return (-HWTR_E_NOMEM);
	im->rp.hits[im->rp.nhits++] = node - 1;
	return (tn_range(im, im->rp.tn[node - 1].right, pid, lo, hi));
}

static int
replay_limit(struct ix_images *im)
{
	ix_err(im->ix, "sideband: the mappings overlap so much that replaying "
	    "them would visit more than %llu of them (the indexer's limit): "
	    "refused", (unsigned long long)IX_REPLAY_WORK);
	return (-HWTR_E_LIMIT);
}

/* Close the open mappings of @pid that lie inside [@lo, @hi) at @t. */
static int
close_maps(struct ix_images *im, int32_t pid, uint64_t lo, uint64_t hi,
    uint64_t t)
{
	struct ix_map *m;
	size_t k;
	int rc;

	im->rp.nhits = 0;
	if ((rc = tn_range(im, im->rp.root, pid, lo, hi)) < 0)
		return (rc == -HWTR_E_LIMIT ? replay_limit(im) : rc);
	for (k = 0; k < im->rp.nhits; k++) {
		m = &im->maps[im->rp.hits[k]];
		if (m->end <= hi) {
			m->has_to = 1;
			m->to_tsc = t;
			im->rp.root = tn_erase(im, im->rp.root, im->rp.hits[k]);
		}
	}
	return (0);
}

static struct ix_map *
new_map(struct ix_images *im)
{
	struct ix_map *m;

	if (hwtr_grow((void **)&im->maps, &im->cmaps, im->nmaps + 1,
	    sizeof(*m)) < 0 || hwtr_grow((void **)&im->rp.tn, &im->rp.ctn,
	    im->nmaps + 1, sizeof(*im->rp.tn)) < 0)
		return (NULL);
	m = &im->maps[im->nmaps];
	memset(m, 0, sizeof(*m));
	m->id = (int64_t)++im->nmaps;
	m->image = -1;
	return (m);
}

/* Mapping @m (the last one made) is open: into the treap. */
static void
map_opened(struct ix_images *im, struct ix_map *m)
{
	im->rp.root = tn_insert(im, im->rp.root, (size_t)(m - im->maps));
}

static int
cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return (x < y ? -1 : x > y);
}

static int
stream_of(struct ix_images *im, uint32_t id)
{
	size_t i;

	for (i = 0; i < im->nstreams; i++)
		if (hwtr_ar_stream(im->ar, i)->id == id)
			return ((int)i);
	return (-1);
}

int
ix_is_cs_unit(const struct run *r, size_t u)
{
	return (hwtr_ar_stream(r->ar, r->ustream[u])->format ==
	    HWTR_TF_CORESIGHT && (r->ures[u].name != NULL ||
	    r->ures[u].cs_batched));
}

/*
 * The database's stream id of unit @u: the archive's, or for a CoreSight
 * trace ID 256 * (its buffer's id + 1) + trace ID.
 */
int64_t
ix_unit_id(const struct run *r, size_t u)
{
	const struct hwtr_stream_desc *sd = hwtr_ar_stream(r->ar,
	    r->ustream[u]);

	if (ix_is_cs_unit(r, u))
		return (((int64_t)sd->id + 1) * 256 + r->ures[u].trace_id);
	return (sd->id);
}

int
ix_make_units(struct run *r)
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

size_t
ix_stream_units(const struct run *r, size_t s)
{
	return ((s + 1 < r->nstreams ? r->ufirst[s + 1] : r->nunits) -
	    r->ufirst[s]);
}

/* The sideband's units: a thread each, first, so that their ids follow. */
static int
unit_threads(struct ix_images *im, size_t nunits, const size_t *ustream)
{
	struct ix_thread *t;
	size_t i;

	for (i = 0; i < nunits; i++) {
		const struct hwtr_stream_desc *sd = hwtr_ar_stream(im->ar,
		    ustream[i]);

		if (hwtr_grow((void **)&im->threads, &im->cthreads,
		    im->nthreads + 1, sizeof(*t)) < 0)
			return (-HWTR_E_NOMEM);
		t = &im->threads[im->nthreads];
		memset(t, 0, sizeof(*t));
		t->id = (int64_t)++im->nthreads;
		t->stream = (int)i;
		t->pid = sd->pid;
		t->tid = sd->tid;
		if (thread_indexed(im, im->nthreads - 1) < 0)
			return (-HWTR_E_NOMEM);
	}
	return (0);
}

/*
 * A process starts: a forked child has its parent's name and image until
 * it execs, and the parent's open mappings.
 */
static int
replay_start(struct ix_images *im, const struct hwtr_sb_rec *rec)
{
	struct ix_proc *p, *pp;
	struct ix_map *m;
	size_t j, nm;
	int rc;

	if ((p = proc_get(im, rec->pid)) == NULL)
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
	    (pp = proc_find(im, p->ppid)) != NULL) {
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
		return (0);
	im->rp.nhits = 0;
	if ((rc = tn_range(im, im->rp.root, p->ppid, 0,
	    UINT64_MAX)) < 0)
		return (rc == -HWTR_E_LIMIT ? replay_limit(im) :
		    rc);
	if (im->rp.nhits > 1)
		qsort(im->rp.hits, im->rp.nhits,
		    sizeof(*im->rp.hits), cmp_size);
	nm = im->rp.nhits;
	for (j = 0; j < nm; j++) {
		struct ix_map old = im->maps[im->rp.hits[j]];

		if ((m = new_map(im)) == NULL)
			return (-HWTR_E_NOMEM);
		old.id = m->id;
		*m = old;
		m->pid = rec->pid;
		m->has_from = 1;
		m->from_tsc = rec->time;
		map_opened(im, m);
	}
	return (0);
}

/* One sideband record but a process start. */
static int
replay_rec(struct ix_images *im, const struct hwtr_sb_rec *rec)
{
	struct ix_proc *p;
	struct ix_thread *t;
	struct ix_map *m;
	char det[96];
	int rc;

	switch (rec->type) {
	case HWTR_SB_PROC_EXIT:
		if ((p = proc_get(im, rec->pid)) == NULL)
			return (-HWTR_E_NOMEM);
		p->has_end = 1;
		p->end_tsc = rec->time;
		p->exit_kind = rec->u.exit.kind == HWTR_EXIT_CODE ?
		    "code" : rec->u.exit.kind == HWTR_EXIT_SIGNAL ?
		    "signal" : NULL;
		p->exit_value = rec->u.exit.value;
		if ((rc = close_maps(im, rec->pid, 0, UINT64_MAX,
		    rec->time)) < 0)
			return (rc);
		break;
	case HWTR_SB_THREAD_START:
	case HWTR_SB_THREAD_EXIT:
		if ((t = ix_thread_get(im, rec->pid, rec->tid, 1)) == NULL)
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
		if ((p = proc_get(im, rec->pid)) == NULL)
			return (-HWTR_E_NOMEM);
		free(p->path);
		p->path = rec->u.exec.path ?
		    strdup(rec->u.exec.path) : NULL;
		if ((rc = close_maps(im, rec->pid, 0, UINT64_MAX,
		    rec->time)) < 0)
			return (rc);
		if (sb_event(im, "exec", rec, -1, rec->u.exec.path) < 0)
			return (-HWTR_E_NOMEM);
		break;
	case HWTR_SB_COMM:
		if ((t = ix_thread_get(im, rec->pid, rec->tid, 1)) != NULL &&
		    rec->u.comm.comm != NULL) {
			free(t->name);
			t->name = strdup(rec->u.comm.comm);
		}
		if (rec->pid == rec->tid && rec->u.comm.comm != NULL &&
		    (p = proc_get(im, rec->pid)) != NULL) {
			free(p->comm);
			p->comm = strdup(rec->u.comm.comm);
		}
		break;
	case HWTR_SB_MMAP:
		if ((rc = close_maps(im, rec->pid, rec->u.mmap.addr,
		    rec->u.mmap.addr + rec->u.mmap.len, rec->time)) < 0)
			return (rc);
		if ((m = new_map(im)) == NULL)
			return (-HWTR_E_NOMEM);
		m->pid = rec->pid;
		m->image = find_image(im, rec);
		m->path = rec->u.mmap.path;
		m->start = rec->u.mmap.addr;
		m->end = rec->u.mmap.addr + rec->u.mmap.len;
		m->pgoff = rec->u.mmap.pgoff;
		m->prot = rec->u.mmap.prot;
		m->has_from = 1;
		m->from_tsc = rec->time;
		map_opened(im, m);
		if (rec->pid >= 0 && proc_get(im, rec->pid) == NULL)
			return (-HWTR_E_NOMEM);
		if (sb_event(im, "mmap", rec, -1, rec->u.mmap.path) < 0)
			return (-HWTR_E_NOMEM);
		break;
	case HWTR_SB_MUNMAP:
		if ((rc = close_maps(im, rec->pid, rec->u.munmap.addr,
		    rec->u.munmap.addr + rec->u.munmap.len,
		    rec->time)) < 0)
			return (rc);
		snprintf(det, sizeof(det), "%#" PRIx64 "-%#" PRIx64,
		    rec->u.munmap.addr,
		    rec->u.munmap.addr + rec->u.munmap.len);
		if (sb_event(im, "munmap", rec, -1, det) < 0)
			return (-HWTR_E_NOMEM);
		break;
	case HWTR_SB_LOST: {
		int s = rec->u.lost.stream == UINT32_MAX ? -1 :
		    stream_of(im, rec->u.lost.stream);

		if (s >= 0)
			im->lost[s] += rec->u.lost.bytes;
		if (rec->u.lost.reason == HWTR_LOST_UNTRACED)
			snprintf(det, sizeof(det), "untraced: "
			    "instructions ran that the source could "
			    "not record");
		else
			snprintf(det, sizeof(det), "%" PRIu64
			    " bytes, %" PRIu64 " records%s",
			    rec->u.lost.bytes, rec->u.lost.records,
			    lost_why(rec->u.lost.reason));
		if (sb_event(im, "lost", rec, s, det) < 0)
			return (-HWTR_E_NOMEM);
		break;
	}
	default:
		break;
	}
	return (0);
}

/*
 * A thread ends with its process unless it exited by itself: when a
 * signal kills the process, or exit_group ends it, every thread left has
 * the process's status (a thread's own exit record, where the source has
 * one, says nothing more).  And a thread no record named has its
 * process's name, as a thread inherits it.
 */
static int
inherit_from_procs(struct ix_images *im)
{
	struct ix_proc *p;
	struct ix_thread *t;
	size_t i;

	for (i = 0; i < im->nthreads; i++) {
		t = &im->threads[i];
		if ((p = proc_find(im, t->pid)) == NULL)
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

int
ix_replay_sideband(struct ix_images *im, size_t nunits,
    const size_t *ustream)
{
	size_t i, n = hwtr_ar_nsideband(im->ar);
	int rc;

	if ((rc = unit_threads(im, nunits, ustream)) < 0)
		return (rc);
	for (i = 0; i < n; i++) {
		const struct hwtr_sb_rec *rec = hwtr_ar_sideband_rec(im->ar, i);

		if ((i & 4095) == 0 && im->ix->opts.cancel != NULL &&
		    *im->ix->opts.cancel)
			return (-HWTR_E_INTR);
		rc = rec->type == HWTR_SB_PROC_START ? replay_start(im, rec) :
		    replay_rec(im, rec);
		if (rc < 0)
			return (rc);
	}
	return (inherit_from_procs(im));
}

/*
 * libipt counts a section cache's entries and a section's users in 16
 * bits: more than 65528 entries is -pte_nomem, and a section shared by
 * more mappings than that (the same file, offset and size at other
 * addresses) overflows its count once the images of a segment take
 * their references too.  Each segment's decoder holds a cache and an
 * image of its own with a reference per mapping, so a run keeps well
 * under both: IX_SECTIONS_MAX executable mappings (a Linux process has
 * at most vm.max_map_count, 65530 by default, of any kind); those after
 * it are said, and their code not decoded (decode errors).  The cost of
 * adding a section grows with the entries before it, too.
 */
#define IX_SECTIONS_MAX	16384

/*
 * Put every executable mapping whose image the archive holds into the
 * section cache, and compute where its link-time addresses are.
 */
int
ix_add_sections(struct ix_images *im)
{
	size_t i, nsec = 0, over = 0;
	int isid, full = 0;
	const char *fpath = NULL;
	uint64_t fstart = 0;

	for (i = 0; i < im->nmaps; i++) {
		struct ix_map *m = &im->maps[i];
		struct ix_img *ig;
		uint64_t size;

		if ((i & 1023) == 0 && im->ix->opts.cancel != NULL &&
		    *im->ix->opts.cancel)
			return (-HWTR_E_INTR);

		/* Said by ix_warn_missing() if decoding needs its code. */
		if (m->image < 0 || !im->imgs[m->image].present)
			continue;
		ig = &im->imgs[m->image];
		if (ig->jit)
			m->bias = 0;	/* run-time addresses (ix_jit.c) */
		else if (!ig->elf.elf || m->end <= m->start ||
		    ix_elf_map_bias(&ig->elf, m->start, m->end - m->start,
		    m->pgoff, m->prot, &m->bias) < 0)
			m->bias = (int64_t)(m->start - m->pgoff);
		if (m->prot != 0 && !(m->prot & PROT_EXEC))
			continue;
		if (m->pgoff >= ig->size || m->end <= m->start)
			continue;
		size = m->end - m->start;
		if (size > ig->size - m->pgoff)
			size = ig->size - m->pgoff;
		if (!full && nsec >= IX_SECTIONS_MAX)
			full = 1;
		isid = full ? -pte_nomem : pt_iscache_add_file(im->isc,
		    ig->file, m->pgoff, size, m->start);
		if (isid < 0 && pt_errcode(isid) == pte_nomem) {
			if (!full) {
				full = 1;
				assert(over == 0);
			}
			if (over++ == 0) {
				fpath = m->path ? m->path : "?";
				fstart = m->start;
			}
			continue;
		}
		if (isid < 0) {
			ix_problem(im->ix, "mapping of '%s' at %#" PRIx64
			    ": %s", m->path ? m->path : "?", m->start,
			    pt_errstr(pt_errcode(isid)));
			continue;
		}
		m->isid = isid;
		nsec++;
		if ((size_t)isid >= im->nisid) {
			size_t n = (size_t)isid + 64, k;
			int *p = realloc(im->isid_map, n * sizeof(*p));

			if (p == NULL)
				return (-HWTR_E_NOMEM);
			for (k = im->nisid; k < n; k++)
				p[k] = -1;
			im->isid_map = p;
			im->nisid = n;
		}
		if (im->isid_map[isid] < 0)
			im->isid_map[isid] = (int)i;
	}
	if (over > 0)
		ix_problem(im->ix, "%zu executable mappings from the one of "
		    "'%s' at %#" PRIx64 " on are not loaded: the decoder holds "
		    "%d (libipt's section cache); their code is not decoded",
		    over, fpath, fstart, IX_SECTIONS_MAX);
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

void
ix_warn_missing(struct hwtr_ix *ix, const struct ix_images *im,
    uint64_t *errips, size_t nerrips)
{
	size_t i, k, nrep = 0, more = 0, rep[IX_MISSING_MAX];
	uint64_t n;

	/*
	 * The decode errors' addresses sorted once: a binary search per
	 * mapping, not a pass over every error (200,000 mappings).
	 */
	if (nerrips > 1)
		qsort(errips, nerrips, sizeof(*errips), cmp_u64);
	for (i = 0; i < im->nmaps; i++) {
		const struct ix_map *m = &im->maps[i];

		if ((m->image >= 0 && im->imgs[m->image].present) ||
		    (m->prot != 0 && !(m->prot & PROT_EXEC)))
			continue;
		if (m->end <= m->start || (n = count_in(errips, nerrips,
		    m->start, m->end)) == 0)
			continue;
		/* An earlier mapping of the same range was named. */
		for (k = 0; k < nrep; k++) {
			const struct ix_map *o = &im->maps[rep[k]];

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
		ix_problem(ix, "mapping of '%s' at %#" PRIx64
		    ": image not in the archive; its code cannot be "
		    "decoded (%" PRIu64 " decode errors there)",
		    m->path ? m->path : "?", m->start, n);
	}
	if (more > 0)
		ix_problem(ix, "and %zu more mappings whose image is not in "
		    "the archive, with decode errors", more);
}


/*
 * A section cache of the segment's own, with every section added in the
 * same order as the shared one so that section ids agree.  libipt keeps
 * its block cache in the sections and cuts blocks where that cache says;
 * shared by decoders on several threads, or by the segments one worker
 * happened to decode before, the cache would make the database depend on
 * -j.  A fresh cache per segment depends on nothing but the segment.
 */
struct pt_image_section_cache *
ix_job_iscache(struct ix_images *im)
{
	struct pt_image_section_cache *isc = pt_iscache_alloc(NULL);
	size_t k;

	if (isc == NULL)
		return (NULL);
	for (k = 0; k < im->nmaps; k++) {
		const struct ix_map *m = &im->maps[k];
		const struct ix_img *ig;
		uint64_t size;

		if (m->isid <= 0)
			continue;
		ig = &im->imgs[m->image];
		size = m->end - m->start;
		if (size > ig->size - m->pgoff)
			size = ig->size - m->pgoff;
		if (pt_iscache_add_file(isc, ig->file, m->pgoff, size,
		    m->start) != m->isid) {
			pt_iscache_free(isc);
			return (NULL);
		}
	}
	return (isc);
}

struct ix_images *
ix_images_new(struct hwtr_ix *ix, struct hwtr_ar *ar, size_t nstreams)
{
	struct ix_images *im;

	if ((im = calloc(1, sizeof(*im))) == NULL)
		return (NULL);
	im->ix = ix;
	im->ar = ar;
	im->nstreams = nstreams;
	im->lost = calloc(nstreams + 1, sizeof(*im->lost));
	im->isc = pt_iscache_alloc(NULL);
	if (im->lost == NULL || im->isc == NULL) {
		ix_images_free(im);
		return (NULL);
	}
	return (im);
}

void
ix_images_free(struct ix_images *im)
{
	size_t i;

	if (im == NULL)
		return;
	for (i = 0; i < im->nimgs; i++) {
		if (im->imgs[i].file != NULL) {
			unlink(im->imgs[i].file);
			free(im->imgs[i].file);
		}
		ix_elf_free(&im->imgs[i].elf);
		if (im->imgs[i].bytes != NULL && im->imgs[i].size > 0)
			munmap(im->imgs[i].bytes, im->imgs[i].size);
		free(im->imgs[i].file_ids);
		free(im->imgs[i].jit_t);
		free(im->imgs[i].dbg);
	}
	free(im->imgs);
	free(im->img_bytes);
	free(im->img_len);
	free(im->maps);
	free(im->rp.ph);
	free(im->rp.th);
	free(im->rp.tn);
	free(im->rp.hits);
	free(im->isid_map);
	for (i = 0; i < im->nprocs; i++) {
		free(im->procs[i].path);
		free(im->procs[i].comm);
	}
	free(im->procs);
	for (i = 0; i < im->nthreads; i++)
		free(im->threads[i].name);
	free(im->threads);
	for (i = 0; i < im->nsbev; i++)
		free(im->sbev[i].detail);
	free(im->sbev);
	free(im->lost);
	if (im->isc != NULL)
		pt_iscache_free(im->isc);
	free(im);
}
