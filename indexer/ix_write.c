/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The database writer (ix_write.h): symbols of blocks and call targets,
 * and every table of hwtrace-db(5).
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
#include "ix_jit.h"
#include "ix_write.h"
#include "elfinline.h"
#include "hwtr_ix_sqlite.h"
#include "schema.sql.h"

const char *
hwtr_ix_view_sql(int before)
{
	return (before ? HWTR_IX_CALL_TIMES_SQL_8 : HWTR_IX_CALL_TIMES_SQL);
}
#include "colstore.h"

/* ----------------------------------------------------------------- */
/* Symbols                                                            */

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
	size_t ji;

	memset(g, 0, sizeof(*g));
	b->bflags = 0;
	b->fkey = 0;
	if (b->isid <= 0 || (size_t)b->isid >= r->im->nisid ||
	    r->im->isid_map[b->isid] < 0)
		return;
	m = &r->im->maps[r->im->isid_map[b->isid]];
	im = &r->im->imgs[m->image];
	g->has_image = 1;
	g->image = m->image + 1;
	g->image_addr = b->ip - (uint64_t)m->bias;
	s = im->jit ? ix_jit_func(r->im, m, g->image_addr) :
	    ix_elf_func(&im->elf, g->image_addr);
	if (s == NULL && ix_jit_other(r->im, m, b->ip, &ji, &s)) {
		im = &r->im->imgs[ji];
		g->image = (int64_t)ji + 1;
		g->image_addr = b->ip;
	}
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
		if (strstr(s->name, ".cold") != NULL)
			b->bflags |= IX_BF_COLD;
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
	ix_err(r->ix, "database: %s: %s", what, sqlite3_errmsg(r->wr->db));
	return (-HWTR_E_DB);
}

static int
st_prep(struct run *r, struct stmt *s, const char *sql)
{
	s->i = 0;
	if (sqlite3_prepare_v2(r->wr->db, sql, -1, &s->st, NULL) != SQLITE_OK)
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

/*
 * The inlines table (elfinline.h): one row per range of an inlined
 * instance; its call file was interned with the files (ix_file_id()).
 */
static int
write_inlines(struct run *r)
{
	struct stmt s;
	size_t i, j;
	int rc;

	if ((rc = st_prep(r, &s, "INSERT INTO inlines VALUES "
	    "(?,?,?,?,?,?,?,?,?,?)")) < 0)
		return (rc);
	for (i = 0, rc = 0; i < r->im->nimgs && rc == 0; i++) {
		const struct ix_elf *e = &r->im->imgs[i].elf;

		for (j = 0; j < e->ninls && rc == 0; j++) {
			const struct ix_inl *n = &e->inls[j];
			int64_t f = n->call_file >= 0 ?
			    ix_file_id(r, e->ifiles[n->call_file]) : 0;

			if (f < 0)
				rc = (int)f;
			b_int(&s, (int64_t)i + 1);
			b_int(&s, (int64_t)n->lo);
			b_int(&s, (int64_t)n->hi);
			b_int(&s, (int64_t)n->entry);
			b_int(&s, n->inst);
			b_int(&s, n->depth);
			b_text(&s, n->name);
			b_opt(&s, f > 0, f);
			b_int(&s, n->call_line);
			b_opt(&s, n->parent > 0, n->parent);
			if (rc == 0)
				rc = st_exec(r, &s, "inlines");
		}
	}
	st_done(&s);
	return (rc);
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

/*
 * opts.tail: which streams were decoded from where (meta partial and
 * tail_from: "ID:OFFSET ..."), when one was cut; nothing otherwise, the
 * database then being as complete as a whole run's.
 */
static int
write_tail_meta(struct run *r, struct stmt *s)
{
	char *list = NULL, *np;
	size_t i, len = 0;
	uint64_t from;
	int rc, n;

	for (i = 0; i < r->nstreams; i++) {
		if (!hwtr_sv_tail_from(r->pl->sv, i, &from))
			continue;
		if ((np = realloc(list, len + 48)) == NULL) {
			free(list);
			return (-HWTR_E_NOMEM);
		}
		list = np;
		n = snprintf(list + len, 48, "%s%" PRIu32 ":%" PRIu64,
		    len ? " " : "", hwtr_ar_stream(r->ar, i)->id, from);
		len += (size_t)n;
	}
	if (list == NULL)
		return (0);
	rc = meta_put(r, s, "partial", "tail");
	rc = rc < 0 ? rc : meta_put(r, s, "tail_from", list);
	free(list);
	return (rc);
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
	rc = rc < 0 ? rc : write_tail_meta(r, &s);
	rc = rc < 0 ? rc : meta_int(r, &s, "chunk_blocks",
	    HWTR_DB_CHUNK_BLOCKS);
	rc = rc < 0 ? rc : meta_put(r, &s, "exec_encoding",
	    "delta-zigzag-varint-zstd");
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
		uint64_t bytes = r->pl->res[i].bytes;

		b_int(&s, sd->id);
		b_text(&s, ix_stream_name(sd, nbuf, sizeof(nbuf)));
		b_text(&s, hwtr_tf_name(sd->format));
		b_opt(&s, sd->pid >= 0, sd->pid);
		b_opt(&s, sd->tid >= 0, sd->tid);
		b_opt(&s, sd->cpu >= 0, sd->cpu);
		b_int(&s, (int64_t)bytes);
		b_int(&s, (int64_t)r->im->lost[i]);
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

		if (!ix_is_cs_unit(r, i))
			continue;
		if (asprintf(&name, "%s trace ID 0x%02x", ix_stream_name(sd, nbuf,
		    sizeof(nbuf)), o->trace_id) < 0) {
			rc = -HWTR_E_NOMEM;
			break;
		}
		b_int(&s, ix_unit_id(r, i));
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
	for (i = 0; i < r->im->nthreads && rc == 0; i++) {
		const struct ix_thread *t = &r->im->threads[i];
		const struct ix_ures *o = t->stream >= 0 ?
		    &r->ures[t->stream] : NULL;

		b_int(&s, t->id);
		b_opt(&s, t->stream >= 0, t->stream >= 0 ?
		    ix_unit_id(r, (size_t)t->stream) : 0);
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

/* The processes the sideband named. */
static int
write_processes(struct run *r)
{
	struct stmt s;
	size_t i;
	int rc;

	if ((rc = st_prep(r, &s, "INSERT INTO processes VALUES "
	    "(?,?,?,?,?,?,?,?)")) < 0)
		return (rc);
	for (i = 0; i < r->im->nprocs && rc == 0; i++) {
		const struct ix_proc *p = &r->im->procs[i];

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
	return (rc);
}

/* The archive's images, and what their ELF gave. */
static int
write_images(struct run *r)
{
	struct stmt s;
	size_t i, j;
	int rc;
	char hex[2 * HWTR_BUILD_ID_MAX + 1], sha[65];

	if ((rc = st_prep(r, &s, "INSERT INTO images VALUES "
	    "(?,?,?,?,?,?,?,?,?,?,?)")) < 0)
		return (rc);
	for (i = 0; i < r->im->nimgs && rc == 0; i++) {
		const struct hwtr_image_desc *id = ix_img_desc(r->im, r->ar,
		    i);
		const struct ix_img *im = &r->im->imgs[i];

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
	return (rc);
}

/* The mappings over time (ix_image.c's replay). */
static int
write_mappings(struct run *r)
{
	struct stmt s;
	size_t i;
	int rc;

	if ((rc = st_prep(r, &s, "INSERT INTO mappings VALUES "
	    "(?,?,?,?,?,?,?,?,?,?,?)")) < 0)
		return (rc);
	for (i = 0; i < r->im->nmaps && rc == 0; i++) {
		const struct ix_map *m = &r->im->maps[i];

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
	return (rc);
}

/* Every image's symbols, ids from 1 in image order. */
static int
write_symbols(struct run *r)
{
	struct stmt s;
	size_t i, j;
	int rc;
	int64_t sym_id = 1;

	if ((rc = st_prep(r, &s, "INSERT INTO symbols VALUES "
	    "(?,?,?,?,?,?,?,?,?)")) < 0)
		return (rc);
	for (i = 0; i < r->im->nimgs && rc == 0; i++) {
		struct ix_img *im = &r->im->imgs[i];

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
	r->wr->next_sym = sym_id;
	return (0);
}

static int
write_static(struct run *r)
{
	int rc;

	if ((rc = write_processes(r)) < 0 || (rc = write_images(r)) < 0 ||
	    (rc = write_mappings(r)) < 0 || (rc = write_symbols(r)) < 0 ||
	    (rc = ix_write_files_lines(r)) < 0)
		return (rc);
	return (write_inlines(r));
}

/* The thread row the stitcher's rows go to (ix_run.h: ct_thread). */
static inline int64_t
cur_thread(const struct run *r)
{
	struct ix_writer *wr = r->wr;
	return (wr->ct_thread > 0 ? wr->ct_thread : (int64_t)wr->cur + 1);
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
	struct ix_writer *wr = r->wr;
	const struct hwtr_capture_meta *meta = hwtr_ar_meta(r->ar);
	const struct ix_thread *t = &r->im->threads[cur_thread(r) - 1];
	size_t i = 0, n;
	int k, rc = 0;

	for (k = IX_EV_LOG - 1; k >= 0 && rc == 0; k--) {
		sqlite3_stmt *s = wr->s_evn[k].st;

		if (!((wr->nevq - i) & (1u << k)))
			continue;
		sqlite3_clear_bindings(s);
		sqlite3_bind_int64(s, 1, cur_thread(r));
		sqlite3_bind_int64(s, 2, wr->ct_thread > 0 ? wr->ct_stream :
		    ix_unit_id(r, wr->cur));
		if (t->pid >= 0)
			sqlite3_bind_int64(s, 3, t->pid);
		for (n = 0; n < (1u << k); n++) {
			const struct ix_evrow *e = &wr->evq[i++];
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
		wr->s_evn[k].i = 0;
		rc = st_exec(r, &wr->s_evn[k], "events");
	}
	for (i = 0; i < wr->nevq; i++)
		free(wr->evq[i].detail);
	wr->nevq = 0;
	return (rc);
}

/* Rows waiting in a batch go in before any other row. */
inline int
ix_flush_pending(struct run *r)
{
	int rc = 0;

	if (r->wr->nevq > 0)
		rc = flush_events(r);
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

	if (hwtr_grow((void **)&r->wr->gs, &r->wr->cgs, (size_t)gid + 1,
	    sizeof(*r->wr->gs)) < 0)
		return (-HWTR_E_NOMEM);
	symbolize(r, &r->st.g[gid], &r->wr->gs[gid]);
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
	struct ix_writer *wr = r->wr;
	struct ix_gsym *g = &wr->gs[gid];
	const struct hwtr_image_desc *id;
	const char *base;
	uint64_t key, h;
	size_t i;
	char name[512];
	int rc;

	if (!g->has_image || g->symbol != 0)
		return (0);
	key = (((uint64_t)g->image << 48) ^ g->image_addr) + 1;
	if (wr->nct * 2 >= wr->ctcap) {
		size_t n = wr->ctcap ? wr->ctcap * 2 : 256;
		uint64_t *k = calloc(n, sizeof(*k));
		int64_t *v = calloc(n, sizeof(*v));

		if (k == NULL || v == NULL) {
			free(k);
			free(v);
			return (-HWTR_E_NOMEM);
		}
		for (i = 0; i < wr->ctcap; i++) {
			if (wr->ct_key[i] == 0)
				continue;
			for (h = ix_hash64(wr->ct_key[i]);; h++)
				if (k[h & (n - 1)] == 0)
					break;
			k[h & (n - 1)] = wr->ct_key[i];
			v[h & (n - 1)] = wr->ct_id[i];
		}
		free(wr->ct_key);
		free(wr->ct_id);
		wr->ct_key = k;
		wr->ct_id = v;
		wr->ctcap = n;
	}
	for (h = ix_hash64(key);; h++) {
		i = h & (wr->ctcap - 1);
		if (wr->ct_key[i] == key) {
			g->symbol = wr->ct_id[i];
			goto named;
		}
		if (wr->ct_key[i] == 0)
			break;
	}
	id = ix_img_desc(r->im, r->ar, (size_t)(g->image - 1));
	base = id != NULL && id->path != NULL ? strrchr(id->path, '/') : NULL;
	base = base != NULL ? base + 1 : id != NULL && id->path != NULL ?
	    id->path : "image";
	if (!ix_jit_anon_name(r->im, (size_t)(g->image - 1), g->image_addr,
	    name, sizeof(name)))
		snprintf(name, sizeof(name), "%s+%#" PRIx64, base,
		    g->image_addr);
	if (wr->s_sy.st == NULL && (rc = st_prep(r, &wr->s_sy, "INSERT INTO "
	    "symbols VALUES (?,?,?,?,?,?,?,?,?)")) < 0)
		return (rc);
	b_int(&wr->s_sy, wr->next_sym);
	b_int(&wr->s_sy, g->image);
	b_text(&wr->s_sy, name);
	b_int(&wr->s_sy, (int64_t)g->image_addr);
	b_int(&wr->s_sy, 0);
	b_stext(&wr->s_sy, "func");
	b_stext(&wr->s_sy, "local");
	b_stext(&wr->s_sy, "call");
	b_text(&wr->s_sy, NULL);
	if ((rc = st_exec(r, &wr->s_sy, "symbols")) < 0)
		return (rc);
	wr->ct_key[i] = key;
	wr->ct_id[i] = wr->next_sym;
	wr->nct++;
	g->symbol = wr->next_sym++;
named:
	g->sym_offset = 0;
	r->st.g[gid].fkey = (uint32_t)g->symbol;
	r->st.g[gid].bflags |= IX_BF_FSTART;
	return (0);
}

/* The job of an exec_chunks row: its data packed. */
static void
pack_job(struct ix_job *j)
{
	struct ix_xrow *x = (struct ix_xrow *)j;

	x->z = NULL;
	x->rc = hwtr_xo_pack(x->c.data.p, x->c.data.len, x->c.nblocks, &x->z,
	    &x->zlen) < 0 ? -HWTR_E_NOMEM : 0;
}

/* The oldest exec_chunks row waiting: written when @write. */
static int
xq_complete(struct run *r, int write)
{
	struct ix_xrow *x = &r->wr->xq[r->wr->xq_head];
	const struct ix_chunk *c = &x->c;
	struct stmt *ch = &r->wr->s_ch;
	int rc;

	ix_jobq_wait(&r->pl->jq, &x->job);
	r->wr->xq_head = (r->wr->xq_head + 1) % IX_XQ;
	r->wr->xq_n--;
	if ((rc = x->rc) == 0 && write) {
		r->ix->stats.exec_bytes += x->z != NULL ? x->zlen : c->data.len;
		b_int(ch, x->thread);
		b_int(ch, c->seq);
		b_int(ch, c->nblocks);
		b_int(ch, c->insn);
		b_int(ch, c->ninsns);
		b_opt(ch, c->has_tsc, (int64_t)c->tsc);
		if (x->z != NULL)
			b_blob(ch, x->z, x->zlen);
		else
			b_blob(ch, c->data.p != NULL ? c->data.p :
			    (const uint8_t *)"", c->data.len);
		rc = st_exec(r, ch, "exec_chunks");
	}
	free(x->z);
	x->z = NULL;
	return (rc);
}

/* Every exec_chunks row waiting, written when @write. */
static int
xq_drain(struct run *r, int write)
{
	int rc = 0, rc1;

	while (r->wr->xq_n > 0)
		if ((rc1 = xq_complete(r, write && rc == 0)) < 0 && rc == 0)
			rc = rc1;
	return (rc);
}

/*
 * A chunk of the execution order: its data stored as a zstd frame when
 * shorter than its blocks (colstore.h), packed by a job; the row goes in
 * IX_XQ chunks later (or at the end of the unit), in order.
 */
static int
sink_chunk(void *arg, const struct ix_chunk *c)
{
	struct run *r = arg;
	struct ix_xrow *x;
	uint8_t *p;
	int rc;

	if ((rc = ix_flush_pending(r)) < 0)
		return (rc);
	if (r->wr->xq == NULL &&
	    (r->wr->xq = calloc(IX_XQ, sizeof(*r->wr->xq))) == NULL)
		return (-HWTR_E_NOMEM);
	if (r->wr->xq_n == IX_XQ && (rc = xq_complete(r, 1)) < 0)
		return (rc);
	x = &r->wr->xq[(r->wr->xq_head + r->wr->xq_n) % IX_XQ];
	if (x->c.data.cap < c->data.len) {
		if ((p = realloc(x->c.data.p, c->data.len)) == NULL)
			return (-HWTR_E_NOMEM);
		x->c.data.p = p;
		x->c.data.cap = c->data.len;
	}
	x->thread = cur_thread(r);
	x->c.seq = c->seq;
	x->c.insn = c->insn;
	x->c.nblocks = c->nblocks;
	x->c.ninsns = c->ninsns;
	x->c.has_tsc = c->has_tsc;
	x->c.tsc = c->tsc;
	x->c.data.len = c->data.len;
	if (c->data.len > 0)
		memcpy(x->c.data.p, c->data.p, c->data.len);
	x->job.fn = pack_job;
	r->wr->xq_n++;
	ix_jobq_submit(&r->pl->jq, &x->job);
	return (0);
}

static int
sink_ts(void *arg, const struct ix_ts *t)
{
	struct run *r = arg;
	struct stmt *ts = &r->wr->s_ts;
	int rc;

	if ((rc = ix_flush_pending(r)) < 0)
		return (rc);
	b_int(ts, cur_thread(r));
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
	struct ix_writer *wr = r->wr;
	const struct hwtr_capture_meta *meta = hwtr_ar_meta(r->ar);
	int64_t thread = cur_thread(r);
	int rc;

	if (wr->cs_thread != thread) {
		if (hwtr_cs_writer_thread(wr->csw, thread, wr->call_base) < 0)
			return (ix_err(r->ix, "%s",
			    hwtr_cs_writer_error(wr->csw)), -HWTR_E_DB);
		wr->cs_thread = thread;
	}
	rc = ix_calls_put(wr->csw, thread, wr->call_base, idx, c,
	    wr->gs[c->entry_block].symbol, meta->tconv.valid ? &meta->tconv :
	    NULL);
	if (rc < 0)
		ix_err(r->ix, "%s", hwtr_cs_writer_error(wr->csw));
	return (rc);
}

/*
 * The calls still open, for the symbol copy made as the rows come
 * (hwtr_cs_writer_open_calls()): a call's symbol and func_ip are those of
 * its row unless it is in a PLT stub (it becomes the function the stub
 * leads to) or its entry block has no symbol yet (a later call to the
 * block may name it).
 */
static int
open_call(void *arg, int64_t id, struct hwtr_cs_row *row)
{
	struct run *r = arg;
	struct ix_writer *wr = r->wr;
	const struct ix_call *c;
	int64_t symbol;
	int final;

	c = ix_stitch_open_call(&r->st, id - wr->call_base, &final);
	if (c == NULL || !final ||
	    (symbol = wr->gs[c->entry_block].symbol) == 0)
		return (0);
	row->nul = 0;
	row->v[CS_ID] = id;
	row->v[CS_THREAD] = cur_thread(r);
	if (c->parent >= 0)
		row->v[CS_PARENT] = wr->call_base + c->parent;
	else
		row->nul |= 1u << CS_PARENT;
	row->v[CS_DEPTH] = c->depth;
	row->v[CS_SYMBOL] = symbol;
	row->v[CS_FUNC_IP] = (int64_t)c->func_ip;
	if (c->has_call_ip)
		row->v[CS_CALL_IP] = (int64_t)c->call_ip;
	else
		row->nul |= 1u << CS_CALL_IP;
	return (1);
}

static int
sink_event(void *arg, const struct ix_event *e)
{
	struct run *r = arg;
	struct ix_writer *wr = r->wr;
	struct ix_evrow *q;

	if (e->has_ip && strcmp(e->kind, "decode-error") == 0) {
		if (hwtr_grow((void **)&wr->errips, &wr->cerrips,
		    wr->nerrips + 1, sizeof(*wr->errips)) < 0)
			return (-HWTR_E_NOMEM);
		wr->errips[wr->nerrips++] = e->ip;
	}
	q = &wr->evq[wr->nevq];
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
	if (++wr->nevq == IX_EV_BATCH)
		return (flush_events(r));
	return (0);
}

static int
sink_cycles(void *arg, const struct ix_cycles *c)
{
	struct run *r = arg;
	struct stmt *cy = &r->wr->s_cy;
	int rc;

	if ((rc = ix_flush_pending(r)) < 0)
		return (rc);
	b_int(cy, ++r->wr->ncycles);
	b_int(cy, cur_thread(r));
	b_int(cy, c->seq);
	b_int(cy, c->insn);
	b_int(cy, (int64_t)c->count);
	b_stext(cy, ix_cc_elems[c->elem]);
	b_int(cy, c->cumulative);
	return (st_exec(r, cy, "cycles"));
}

/* A stream is stitched: its aggregated rows and what it found. */
int
ix_end_stream(struct run *r)
{
	struct ix_stitch *st = &r->st;
	struct ix_ures *o = &r->ures[r->wr->cur];
	int64_t thread = (int64_t)r->wr->cur + 1;
	size_t i;
	int rc;

	if ((rc = ix_stitch_end(st)) < 0 || (rc = ix_flush_pending(r)) < 0 ||
	    (rc = xq_drain(r, 1)) < 0)
		return (rc);
	for (i = 0; i < st->nbranches && rc == 0; i++) {
		const struct ix_branch *b = &st->branches[i];

		b_int(&r->wr->s_br, thread);
		b_int(&r->wr->s_br, b->from);
		b_int(&r->wr->s_br, b->to);
		b_int(&r->wr->s_br, (int64_t)b->from_ip);
		b_int(&r->wr->s_br, (int64_t)b->to_ip);
		b_stext(&r->wr->s_br, ix_branch_kinds[b->kind]);
		b_int(&r->wr->s_br, (int64_t)b->count);
		rc = st_exec(r, &r->wr->s_br, "branches");
	}
	for (i = 0; i < st->ntouched && rc == 0; i++) {
		b_int(&r->wr->s_bc, thread);
		b_int(&r->wr->s_bc, st->touched[i]);
		b_int(&r->wr->s_bc, (int64_t)st->scount[st->touched[i]]);
		rc = st_exec(r, &r->wr->s_bc, "block_counts");
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
	ix_count_history(r, st);
	return (rc);
}

/* A history is stitched: its calls take their ids, the totals grow. */
void
ix_count_history(struct run *r, const struct ix_stitch *st)
{
	r->wr->call_base += st->ncalls;
	r->ix->stats.blocks += (uint64_t)st->exec_blocks;
	r->ix->stats.insns += (uint64_t)st->exec_insns;
	r->ix->stats.errors += (uint64_t)st->errors;
	r->ix->stats.undecoded_bytes += st->undecoded;
	r->ix->stats.calls += (uint64_t)st->ncalls;
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
		const struct ix_gsym *g = &r->wr->gs[i];

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
	struct stmt *ev = &r->wr->s_ev;
	size_t i;
	int rc = 0;

	for (i = 0; i < r->im->nsbev && rc == 0; i++) {
		const struct ix_sbev *e = &r->im->sbev[i];
		struct ix_thread *t = e->stream >= 0 ?
		    &r->im->threads[r->ufirst[e->stream]] :
		    ix_thread_get(r->im, e->pid, e->tid, 0);

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

	ix_warn_missing(r->ix, r->im, r->wr->errips, r->wr->nerrips);
	for (i = 0; i < r->nunits; i++) {
		const struct ix_ures *o = &r->ures[i];
		char nbuf[32], msg[160];
		const char *name = ix_stream_name(hwtr_ar_stream(r->ar,
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

/* SQLite's progress handler: stop its long steps on a cancel request. */
static int
db_cancelled(void *arg)
{
	const struct run *r = arg;

	return (r->ix->opts.cancel != NULL && *r->ix->opts.cancel);
}

/*
 * The database's page size, chosen before its first table: 64 KiB for
 * an archive of IX_BIG_ARCHIVE or more, else 4 KiB.  The execution
 * order's rows (a zstd frame of 65536 blocks, 5.8 KB on gz8) and the
 * calls pages (3.4 KB) overflow 4 KiB pages, each row's last overflow
 * page half empty on average, and SQLite's pager works page by page:
 * gz8's database was 156.4 MB at 4 KiB, 148.6 at 64 KiB (exec_chunks
 * 51.9 -> 40.6 MB), and SQLite, the kernel's writes and libc took 0.89
 * against 0.69 CPU-s of its index; every query timed (summary, hot,
 * last, bt, func, calls, timeline, tree, export --folded, coverage)
 * as fast or faster.  But each of the schema's 40 tables and indexes
 * takes a page at least: 2.6 MB at 64 KiB, too much for small traces.
 */
#define IX_BIG_ARCHIVE	(16LL << 20)

static int
db_page_size(const struct run *r)
{
	const char *e = getenv("HWTRACE_IX_PAGE_SIZE");
	unsigned long v;
	struct stat st;
	char *endp;

	/* For tests: any size SQLite takes (a power of 2, 512 to 65536). */
	if (e != NULL && *e != '\0') {
		v = strtoul(e, &endp, 10);
		if (*endp == '\0' && v >= 512 && v <= 65536 &&
		    (v & (v - 1)) == 0)
			return ((int)v);
	}
	return (r->archive != NULL && stat(r->archive, &st) == 0 &&
	    S_ISREG(st.st_mode) && st.st_size >= IX_BIG_ARCHIVE ? 65536 :
	    4096);
}

const char *
hwtr_ix_sqlite_open_why(void *sqlite3_db, int rc, const char *path,
    char *buf, size_t len)
{
	sqlite3_vfs *vfs = sqlite3_vfs_find(NULL);
	const char *why = sqlite3_db != NULL ? sqlite3_errmsg(sqlite3_db) :
	    sqlite3_errstr(rc);
	char cwd[PATH_MAX], *real = NULL;
	size_t full = strlen(path);

	/*
	 * SQLite makes the name absolute in a buffer of the VFS's
	 * mxPathname and refuses a longer one with no more than "unable to
	 * open database file".  (A directory getcwd() cannot name is left
	 * to SQLite's message.)
	 */
	if (path[0] != '/')
		full = getcwd(cwd, sizeof(cwd)) != NULL ? full + strlen(cwd) +
		    1 : 0;
	if ((rc & 0xff) == SQLITE_CANTOPEN && vfs != NULL &&
	    full > (size_t)vfs->mxPathname)
		snprintf(buf, len, "%s: the path is %zu bytes long, and "
		    "SQLite opens none longer than %d", why, full,
		    vfs->mxPathname);
	/* SQLite follows symbolic links: a short name may lead far. */
	else if ((rc & 0xff) == SQLITE_CANTOPEN && vfs != NULL &&
	    (real = realpath(path, NULL)) != NULL &&
	    strlen(real) > (size_t)vfs->mxPathname)
		snprintf(buf, len, "%s: the path is %zu bytes long once its "
		    "symbolic links are followed, and SQLite opens none longer "
		    "than %d", why, strlen(real), vfs->mxPathname);
	else
		snprintf(buf, len, "%s", why);
	free(real);
	return (buf);
}

/* SQLite on @tmp (open on @fd), the schema, and BEGIN. */
int
ix_db_open(struct run *r, const char *tmp, int fd)
{
	struct stat sf, sp;
	char *err = NULL, pragmas[256], why[HWTR_ERRMSG_MAX];
	int rc;

	/*
	 * @tmp was created by hwtr_out_create() (exclusively, under an
	 * unpredictable name, mode 0600) and @fd is open on it.  SQLite opens
	 * it by name: never through a link (SQLITE_OPEN_NOFOLLOW), never
	 * creating it, and only when the name still is the file created.
	 * One thread writes: SQLite's per-call mutexes cost 3% of an index.
	 */
	if ((rc = sqlite3_open_v2(tmp, &r->wr->db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_NOMUTEX, NULL)) != SQLITE_OK) {
		ix_err(r->ix, "cannot create '%s': %s", tmp,
		    hwtr_ix_sqlite_open_why(r->wr->db, rc, tmp, why,
		    sizeof(why)));
		sqlite3_close(r->wr->db);
		r->wr->db = NULL;
		return (-HWTR_E_DB);
	}
	if (fstat(fd, &sf) != 0 || lstat(tmp, &sp) != 0 ||
	    sf.st_dev != sp.st_dev || sf.st_ino != sp.st_ino) {
		ix_err(r->ix, "cannot create '%s': it was replaced", tmp);
		sqlite3_close(r->wr->db);
		r->wr->db = NULL;
		return (-HWTR_E_IO);
	}
	/* The index build at the end takes seconds: interruptible too. */
	sqlite3_progress_handler(r->wr->db, 100000, db_cancelled, r);
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
	(void)snprintf(pragmas, sizeof(pragmas), "PRAGMA journal_mode = OFF;"
	    "PRAGMA synchronous = OFF; PRAGMA page_size = %d;"
	    "PRAGMA locking_mode = EXCLUSIVE; PRAGMA temp_store = FILE;"
	    "PRAGMA cache_size = -16384;", db_page_size(r));
	if (hwtr_ix_sqlite_register(r->wr->db) < 0 ||
	    sqlite3_exec(r->wr->db, pragmas, NULL, NULL, &err) != SQLITE_OK ||
	    sqlite3_exec(r->wr->db, HWTR_IX_SCHEMA_SQL "BEGIN;", NULL, NULL,
	    &err) != SQLITE_OK) {
		ix_err(r->ix, "database '%s': %s", tmp, err ? err :
		    sqlite3_errmsg(r->wr->db));
		sqlite3_free(err);
		sqlite3_close(r->wr->db);
		r->wr->db = NULL;
		return (-HWTR_E_DB);
	}
	return (0);
}

int
ix_db_prepare(struct run *r)
{
	struct ix_sink sink = {
		.arg = r, .block = sink_block, .func_start = sink_func_start,
		.chunk = sink_chunk, .ts = sink_ts, .call = sink_call,
		.event = sink_event, .cycles = sink_cycles
	};
	size_t i;
	int rc;

	ix_stitch_init(&r->st, &sink);
	r->wr->call_base = 1;
	rc = write_static(r);
	if (rc == 0)
		rc = st_prep(r, &r->wr->s_ch, "INSERT INTO exec_chunks VALUES "
		    "(?,?,?,?,?,?,?)");
	if (rc == 0)
		rc = st_prep(r, &r->wr->s_ts, "INSERT INTO timestamps VALUES "
		    "(?,?,?,?,?)");
	if (rc == 0)
		rc = st_prep(r, &r->wr->s_br, "INSERT INTO branches VALUES "
		    "(?,?,?,?,?,?,?)");
	if (rc == 0)
		rc = st_prep(r, &r->wr->s_bc, "INSERT INTO block_counts VALUES "
		    "(?,?,?)");
	if (rc == 0 && hwtr_cs_writer_open(r->wr->db, &r->wr->csw) < 0) {
		ix_err(r->ix, "%s", r->wr->csw != NULL ?
		    hwtr_cs_writer_error(r->wr->csw) : "out of memory");
		rc = -HWTR_E_DB;
	}
	/* Pages are encoded on the pipeline's threads. */
	if (rc == 0) {
		hwtr_cs_writer_jobs(r->wr->csw, &r->pl->jq);
		hwtr_cs_writer_open_calls(r->wr->csw, open_call, r);
	}
	if (rc == 0)
		rc = st_prep(r, &r->wr->s_ev, "INSERT INTO events VALUES "
		    "(?,?,?,?,?,?,?,?,?,?,?,?)");
	if (rc == 0)
		rc = st_prep(r, &r->wr->s_cy, "INSERT INTO cycles VALUES "
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
		rc = st_prep(r, &r->wr->s_evn[i], sql);
	}
	return (rc);
}

int
ix_db_finish(struct run *r, const char *tmp, int rc)
{
	struct ix_writer *wr = r->wr;
	struct timespec t0, t1;
	char *err = NULL;
	size_t i;
	int rc1;

	/* Chunks still packing (after a failure: not written). */
	rc1 = xq_drain(r, rc == 0);
	if (rc == 0)
		rc = rc1;
	for (i = 0; wr->xq != NULL && i < IX_XQ; i++)
		free(wr->xq[i].c.data.p);
	free(wr->xq);
	wr->xq = NULL;
	if (rc == 0)
		rc = ix_flush_pending(r);
	if (rc == 0) {
		report_streams(r);
		r->ix->stats.threads = r->im->nthreads;
		rc = write_sbevents(r);
	}
	st_done(&wr->s_ch);
	st_done(&wr->s_ts);
	st_done(&wr->s_br);
	st_done(&wr->s_bc);
	if (rc == 0 && wr->csw != NULL && hwtr_cs_writer_finish(wr->csw) < 0) {
		ix_err(r->ix, "%s", hwtr_cs_writer_error(wr->csw));
		rc = -HWTR_E_DB;
	}
	hwtr_cs_writer_close(wr->csw);
	wr->csw = NULL;
	st_done(&wr->s_ev);
	st_done(&wr->s_cy);
	st_done(&wr->s_sy);
	for (i = 0; i < IX_EV_LOG; i++)
		st_done(&wr->s_evn[i]);
	for (i = 0; i < wr->nevq; i++)
		free(wr->evq[i].detail);
	wr->nevq = 0;
	if (rc == 0)
		rc = write_blocks(r);
	if (rc == 0)
		rc = write_streams(r);
	if (rc == 0 && (rc = ix_cpusplit_write(&r->cs, wr->db,
	    &hwtr_ar_meta(r->ar)->tconv, r->ix->err, sizeof(r->ix->err))) < 0)
		r->ix->err[sizeof(r->ix->err) - 1] = '\0';
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
		    r->pl->nworkers);
		(void)sqlite3_exec(wr->db, pr, NULL, NULL, NULL);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		if (sqlite3_exec(wr->db, HWTR_IX_INDEX_SQL "COMMIT;", NULL,
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
	if (sqlite3_close(wr->db) != SQLITE_OK && rc == 0) {
		ix_err(r->ix, "database '%s': %s", tmp, sqlite3_errmsg(wr->db));
		rc = -HWTR_E_DB;
	}
	wr->db = NULL;
	return (rc);
}

struct ix_writer *
ix_writer_new(void)
{
	return (calloc(1, sizeof(struct ix_writer)));
}

void
ix_writer_free(struct ix_writer *wr)
{
	size_t i;

	if (wr == NULL)
		return;
	assert(wr->db == NULL);
	free(wr->gs);
	free(wr->ct_key);
	free(wr->ct_id);
	free(wr->errips);
	for (i = 0; i < wr->nfiles; i++)
		free(wr->files[i]);
	free(wr->files);
	free(wr->ftab);
	free(wr);
}
