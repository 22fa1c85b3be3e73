/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Profiles by source line and by instruction (hot --by line, annotate),
 * by image (hot --by image), and folded stacks for flame graphs (export
 * --folded).
 *
 * The count of an instruction is the sum of the counts of the blocks that
 * hold it (block_counts for one thread, blocks.exec_count for all), so a
 * walk over the static blocks, each through its insn_lens, gives every
 * executed instruction its count without expanding the execution order.
 * An instruction's line follows hwtrace-db(5): the line-table row with the
 * greatest address at or before it, when the instruction is before that
 * row's end_addr; a row covers [addr, end_addr), so one lookup serves all
 * the instructions of a block that fall in it.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "q_int.h"
#include "hwtr_x86.h"

/* The blocks to walk and how often each ran (?1: thread or -1). */
#define P_BLOCKS_COLS							\
	"b.id, b.start_ip, b.image, b.image_addr, b.insn_lens, b.code, "	\
	"b.mode, b.symbol, b.ninsns"
#define P_BLOCKS_ALL							\
	"SELECT " P_BLOCKS_COLS ", b.exec_count FROM blocks b WHERE ?1 < 0 " \
	"AND b.exec_count > 0"
#define P_BLOCKS_THREAD							\
	"SELECT " P_BLOCKS_COLS ", c.count FROM block_counts c JOIN blocks b " \
	"ON b.id = c.block WHERE c.thread = ?1"
/*
 * The blocks that thread ?1 (-1: all) ran in a range or at most --depth
 * deep (q_range_count()).
 */
#define P_BLOCKS_DEPTH							\
	"SELECT " P_BLOCKS_COLS ", c.count FROM " Q_DEPTH_BLOCKS " c JOIN "	\
	"blocks b ON b.id = c.block WHERE 1"

/* A cached line-table row: [lo, hi) of image @image is @file:@line. */
struct p_linec {
	int64_t		image, lo, hi;
	int64_t		file, line;	/* file -1: no line */
	sqlite3_stmt	*st;
};

/*
 * The line of link-time address @a of @image into *filep, *linep (file -1
 * when the address has none).
 */
static int
p_line(struct hwtr_q *q, struct p_linec *lc, int has_image, int64_t image,
    int64_t a, int64_t *filep, int64_t *linep)
{
	int rc;

	*filep = -1;
	*linep = 0;
	if (!has_image)
		return (0);
	if (lc->image == image && a >= lc->lo && a < lc->hi) {
		*filep = lc->file;
		*linep = lc->line;
		return (0);
	}
	if (lc->st == NULL && (rc = q_prepare(q, &lc->st, "SELECT addr, "
	    "end_addr, file, line FROM lines WHERE image = ?1 AND addr <= ?2 "
	    "ORDER BY addr DESC LIMIT 1")) < 0)
		return (rc);
	sqlite3_reset(lc->st);
	sqlite3_bind_int64(lc->st, 1, image);
	sqlite3_bind_int64(lc->st, 2, a);
	rc = sqlite3_step(lc->st);
	if (rc == SQLITE_DONE)
		return (0);
	if (rc != SQLITE_ROW)
		return (q_dbfail(q, "cannot read lines"));
	lc->image = image;
	lc->lo = sqlite3_column_int64(lc->st, 0);
	lc->hi = sqlite3_column_int64(lc->st, 1);
	lc->file = sqlite3_column_int64(lc->st, 2);
	lc->line = sqlite3_column_int64(lc->st, 3);
	if (a >= lc->hi) {
		/* Past the end of its sequence: no line. */
		lc->lo = lc->hi = 0;
		return (0);
	}
	*filep = lc->file;
	*linep = lc->line;
	return (0);
}

/* One executed instruction, or one source line, and its counts. */
struct p_ent {
	int		used;
	int64_t		k1, k2;		/* key */
	int64_t		count;		/* executions (the most, for a line) */
	int64_t		insns;		/* instructions executed there */
	int64_t		ip, image, iaddr, symbol;
	int		has_image, has_sym, mode, len;
	uint8_t		code[16];
	int		has_code;
	int64_t		file, line;
};

struct p_tab {
	struct p_ent	*e;
	size_t		cap, n;
};

static uint64_t
p_mix(int64_t a, int64_t b)
{
	uint64_t h = (uint64_t)a * 0x9e3779b97f4a7c15ULL;

	h ^= (uint64_t)b + 0x632be59bd9b4e019ULL + (h << 6) + (h >> 2);
	return (h ^ (h >> 31));
}

/* The entry of key (@k1, @k2), made if new; NULL when out of memory. */
static struct p_ent *
p_get(struct p_tab *t, int64_t k1, int64_t k2)
{
	size_t i, j;

	if (t->n * 2 >= t->cap) {
		struct p_ent *ne, *oe = t->e;
		size_t ncap = t->cap ? t->cap * 2 : 1024, ocap = t->cap;

		if ((ne = calloc(ncap, sizeof(*ne))) == NULL)
			return (NULL);
		for (i = 0; i < ocap; i++) {
			if (!oe[i].used)
				continue;
			j = p_mix(oe[i].k1, oe[i].k2) & (ncap - 1);
			while (ne[j].used)
				j = (j + 1) & (ncap - 1);
			ne[j] = oe[i];
		}
		free(oe);
		t->e = ne;
		t->cap = ncap;
	}
	j = p_mix(k1, k2) & (t->cap - 1);
	while (t->e[j].used) {
		if (t->e[j].k1 == k1 && t->e[j].k2 == k2)
			return (&t->e[j]);
		j = (j + 1) & (t->cap - 1);
	}
	t->e[j].used = 1;
	t->e[j].k1 = k1;
	t->e[j].k2 = k2;
	t->n++;
	return (&t->e[j]);
}

/* The used entries, packed at the front of t->e (the table is spent). */
static size_t
p_pack(struct p_tab *t)
{
	size_t i, n = 0;

	for (i = 0; i < t->cap; i++)
		if (t->e[i].used)
			t->e[n++] = t->e[i];
	return (n);
}

/*
 * Walk the blocks of @st (P_BLOCKS_*, bound): each executed instruction
 * goes into @insns keyed by image and link-time address (or by address
 * without an image), with its count, line and code.
 */
static int
p_walk(struct hwtr_q *q, sqlite3_stmt *st, struct p_linec *lc,
    struct p_tab *insns, int64_t *totalp)
{
	struct p_ent *e;
	const uint8_t *lens, *code;
	int64_t ip, start, image, iaddr, sym, count, file, line, ninsns, n;
	int64_t ia;
	int has_image, has_sym, nlens, ncode, k, rc;
	size_t off;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		start = sqlite3_column_int64(st, 1);
		has_image = sqlite3_column_type(st, 2) != SQLITE_NULL &&
		    sqlite3_column_type(st, 3) != SQLITE_NULL;
		image = sqlite3_column_int64(st, 2);
		iaddr = sqlite3_column_int64(st, 3);
		lens = sqlite3_column_blob(st, 4);
		nlens = sqlite3_column_bytes(st, 4);
		code = sqlite3_column_blob(st, 5);
		ncode = sqlite3_column_bytes(st, 5);
		has_sym = sqlite3_column_type(st, 7) != SQLITE_NULL;
		sym = sqlite3_column_int64(st, 7);
		ninsns = sqlite3_column_int64(st, 8);
		count = sqlite3_column_int64(st, 9);
		if (count <= 0)
			continue;
		/*
		 * A damaged or hostile database may hold any count: one that
		 * makes more than 2^63 instructions is refused, not wrapped.
		 * Then every sum below stays under the total.
		 */
		if (ninsns < 0 || __builtin_mul_overflow(count, ninsns, &n) ||
		    __builtin_add_overflow(*totalp, n, totalp))
			return (q_fail(q, -HWTR_E_FORMAT, "blocks: block %lld "
			    "ran %lld times with %lld instructions: out of "
			    "range (a damaged database?)",
			    (long long)sqlite3_column_int64(st, 0),
			    (long long)count, (long long)ninsns));
		/* Without lengths only the first instruction has an address. */
		if (lens == NULL)
			nlens = 0;
		off = 0;
		for (k = 0; k < (nlens > 0 ? nlens : 1); k++) {
			int64_t n1 = k < (int)ninsns ? 1 : 0;

			/* Lengths unknown: the block's count, at its start. */
			if (nlens == 0)
				n1 = ninsns;
			/* Addresses wrap as unsigned ones (a hostile start). */
			ip = (int64_t)((uint64_t)start + off);
			ia = (int64_t)((uint64_t)iaddr + off);
			if ((rc = p_line(q, lc, has_image, image, ia, &file,
			    &line)) < 0)
				return (rc);
			{
				e = has_image ? p_get(insns, image, ia) :
				    p_get(insns, -1, ip);
				if (e == NULL)
					goto nomem;
				/* The counts of blocks sharing it (ninsns 0). */
				if (__builtin_add_overflow(e->count, count,
				    &e->count))
					return (q_fail(q, -HWTR_E_FORMAT,
					    "blocks: block %lld: its count %lld "
					    "is out of range (a damaged "
					    "database?)", (long long)
					    sqlite3_column_int64(st, 0),
					    (long long)count));
				e->insns += count * n1;
				e->ip = ip;
				e->has_image = has_image;
				e->image = image;
				e->iaddr = ia;
				e->has_sym = has_sym;
				e->symbol = sym;
				e->mode = sqlite3_column_int(st, 6);
				e->file = file;
				e->line = line;
				e->len = nlens > 0 ? lens[k] : 0;
				if (code != NULL && nlens > 0 &&
				    off + lens[k] <= (size_t)ncode &&
				    lens[k] <= sizeof(e->code)) {
					memcpy(e->code, code + off, lens[k]);
					e->has_code = 1;
				}
			}
			if (nlens > 0)
				off += lens[k];
		}
	}
	if (rc != SQLITE_DONE)
		return (q_dbfail(q, "cannot read blocks"));
	return (0);
nomem:
	return (q_fail(q, -HWTR_E_NOMEM, "out of memory"));
}

/*
 * The instructions of @insns (packed, @n) by source line into @lines,
 * keyed by (file, line), or by (-1, symbol) for code without a line: the
 * instructions executed there, and the count of the most executed one.
 */
static int
p_by_line(struct hwtr_q *q, const struct p_ent *ins, size_t n,
    struct p_tab *lines)
{
	struct p_ent *e;
	size_t i;

	for (i = 0; i < n; i++) {
		e = ins[i].file >= 0 ? p_get(lines, ins[i].file, ins[i].line) :
		    p_get(lines, -1, ins[i].has_sym ? ins[i].symbol : -1);
		if (e == NULL)
			return (q_fail(q, -HWTR_E_NOMEM, "out of memory"));
		e->insns += ins[i].insns;
		if (ins[i].count > e->count)
			e->count = ins[i].count;
		e->file = ins[i].file;
		e->line = ins[i].line;
		if (!e->has_sym && ins[i].has_sym) {
			e->has_sym = 1;
			e->symbol = ins[i].symbol;
		}
	}
	return (0);
}

/* Source text: the lines of the last file read (a function has one). */
struct p_src {
	int64_t		file;		/* -2: none read yet */
	char		*buf;
	char		**line;
	size_t		nlines;
	sqlite3_stmt	*st;
};

static void
p_src_free(struct p_src *s)
{
	free(s->buf);
	free(s->line);
	s->buf = NULL;
	s->line = NULL;
	s->nlines = 0;
	sqlite3_finalize(s->st);
	s->st = NULL;
}

/*
 * The text of @line of file @file when the file exists here (its path as
 * DWARF recorded it, relative to the current directory when relative);
 * NULL otherwise.  Tabs become spaces up to the next multiple of 8, and
 * control characters are dropped, so a table stays aligned.
 */
static const char *
p_src_line(struct hwtr_q *q, struct p_src *s, int64_t file, int64_t line)
{
	FILE *fp;
	struct stat sst;
	const char *path;
	size_t len = 0, cap = 0, i, n;
	char *p, ebuf[HWTR_ERRMSG_MAX];
	int fd;

	if (file < 0 || line <= 0)
		return (NULL);
	if (s->file != file) {
		free(s->buf);
		free(s->line);
		s->buf = NULL;
		s->line = NULL;
		s->nlines = 0;
		s->file = file;
		if (s->st == NULL && q_prepare(q, &s->st, "SELECT path FROM "
		    "files WHERE id = ?1") < 0)
			return (NULL);
		sqlite3_reset(s->st);
		sqlite3_bind_int64(s->st, 1, file);
		if (sqlite3_step(s->st) != SQLITE_ROW)
			return (NULL);
		path = (const char *)sqlite3_column_text(s->st, 0);
		/* A FIFO named by the database is not waited for. */
		if (path == NULL || (fd = hwtr_in_open(path, &sst, ebuf,
		    sizeof(ebuf))) < 0)
			return (NULL);
		if ((fp = fdopen(fd, "r")) == NULL) {
			close(fd);
			return (NULL);
		}
		for (;;) {
			if (len + 4097 > cap) {
				char *nb;

				cap = cap ? cap * 2 : 65536;
				if (cap > (64u << 20) ||
				    (nb = realloc(s->buf, cap)) == NULL)
					break;
				s->buf = nb;
			}
			n = fread(s->buf + len, 1, 4096, fp);
			len += n;
			if (n < 4096)
				break;
		}
		fclose(fp);
		if (s->buf == NULL)
			return (NULL);
		s->buf[len] = '\0';
		for (i = 0, n = 1; i < len; i++)
			if (s->buf[i] == '\n')
				n++;
		if ((s->line = calloc(n, sizeof(*s->line))) == NULL)
			return (NULL);
		s->line[s->nlines++] = s->buf;
		for (p = s->buf; *p != '\0'; p++)
			if (*p == '\n') {
				*p = '\0';
				s->line[s->nlines++] = p + 1;
			}
	}
	if ((size_t)line > s->nlines)
		return (NULL);
	return (s->line[line - 1]);
}

/* @text with tabs expanded and control characters dropped, into @o. */
static void
p_detab(struct q_str *o, const char *text)
{
	size_t col = 0;

	o->len = 0;
	for (; *text != '\0'; text++) {
		if (*text == '\t') {
			do
				q_str_add(o, " ", 1);
			while (++col % 8 != 0);
		} else if ((unsigned char)*text < 0x20 || *text == 0x7f)
			continue;
		else {
			q_str_add(o, text, 1);
			if (((unsigned char)*text & 0xc0) != 0x80)
				col++;
		}
	}
	q_str_add(o, "", 0);
	if (o->p != NULL)
		o->p[o->len] = '\0';
}

/* "path:line" of @file into @o (NULL when @file < 0). */
static const char *
p_place(struct hwtr_q *q, sqlite3_stmt **stp, struct q_str *o, int64_t file,
    int64_t line)
{
	if (file < 0)
		return (NULL);
	if (*stp == NULL && q_prepare(q, stp, "SELECT path FROM files WHERE "
	    "id = ?1") < 0)
		return (NULL);
	sqlite3_reset(*stp);
	sqlite3_bind_int64(*stp, 1, file);
	if (sqlite3_step(*stp) != SQLITE_ROW)
		return (NULL);
	o->len = 0;
	q_str_printf(o, "%s:%lld", (const char *)sqlite3_column_text(*stp, 0),
	    (long long)line);
	return (o->err ? NULL : o->p);
}

/* (@a1, @a2) against (@b1, @b2), the first key first: -1, 0 or 1. */
static int
p_cmp2(int64_t a1, int64_t b1, int64_t a2, int64_t b2)
{
	if (a1 != b1)
		return (a1 < b1 ? -1 : 1);
	return (a2 < b2 ? -1 : a2 > b2);
}

static int
p_ent_by_addr(const void *a, const void *b)
{
	const struct p_ent *x = a, *y = b;

	return (p_cmp2(x->ip, y->ip, x->image, y->image));
}

static int
p_ent_by_line(const void *a, const void *b)
{
	const struct p_ent *x = a, *y = b;

	return (p_cmp2(x->k1, y->k1, x->k2, y->k2));
}

/* The most instructions first, then by line. */
static int
p_ent_by_insns(const void *a, const void *b)
{
	const struct p_ent *x = a, *y = b;

	if (x->insns != y->insns)
		return (p_cmp2(y->insns, x->insns, 0, 0));
	return (p_ent_by_line(a, b));
}

/* The statement over the blocks to walk (of range @r when on), bound. */
static int
p_blocks(struct hwtr_q *q, sqlite3_stmt **stp, int64_t thread,
    const char *ids, const struct q_rng *r)
{
	struct q_str sql = { 0 };
	int rc;

	q_str_puts(&sql, r != NULL && r->cnt ? P_BLOCKS_DEPTH : thread >= 0 ?
	    P_BLOCKS_THREAD : P_BLOCKS_ALL);
	if (ids != NULL)
		q_str_printf(&sql, " AND b.symbol IN %s", ids);
	if ((rc = q_sql_ready(q, &sql, -1)) < 0)
		return (rc);
	rc = q_prepare(q, stp, sql.p);
	free(sql.p);
	if (rc < 0)
		return (rc);
	if (r != NULL && r->on) {
		sqlite3_bind_int64(*stp, 1, r->thread);
		sqlite3_bind_int64(*stp, 3, r->seq_lo);
		sqlite3_bind_int64(*stp, 4, r->seq_hi);
	} else
		sqlite3_bind_int64(*stp, 1, thread);
	return (0);
}

static double
p_pct(int64_t part, int64_t total)
{
	return (total > 0 ? 100.0 * (double)part / (double)total : 0.0);
}

/*
 * What hot --by line, annotate and the report's lines share: the blocks
 * walked into their instructions (ins) and, by line, into lines; the
 * caches that name a line (fst, place) and a function (names).
 */
struct p_prof {
	struct p_linec	lc;
	struct p_tab	ins, lines;
	size_t		nins, nlines;	/* packed */
	int64_t		total;		/* instructions walked */
	struct q_names	names;
	struct q_str	place;
	sqlite3_stmt	*st, *fst;
};

#define P_PROF_INIT	{ .lc = { .image = -1 } }

/*
 * Walk the blocks of @thread (-1: all; of functions @ids and range @r when
 * not NULL) into pp->ins, and with @by_line into pp->lines: 0 or an error.
 */
static int
p_prof_walk(struct hwtr_q *q, struct p_prof *pp, int64_t thread,
    const char *ids, const struct q_rng *r, int by_line)
{
	int rc;

	if ((rc = p_blocks(q, &pp->st, thread, ids, r)) < 0 ||
	    (rc = p_walk(q, pp->st, &pp->lc, &pp->ins, &pp->total)) < 0)
		return (rc);
	pp->nins = pp->ins.cap > 0 ? p_pack(&pp->ins) : 0;
	if (!by_line)
		return (0);
	if ((rc = p_by_line(q, pp->ins.e, pp->nins, &pp->lines)) < 0)
		return (rc);
	pp->nlines = pp->lines.cap > 0 ? p_pack(&pp->lines) : 0;
	return (0);
}

static void
p_prof_free(struct p_prof *pp)
{
	sqlite3_finalize(pp->st);
	sqlite3_finalize(pp->fst);
	sqlite3_finalize(pp->lc.st);
	q_names_free(&pp->names);
	free(pp->lines.e);
	free(pp->ins.e);
	free(pp->place.p);
}

/*
 * hot --by line: where the instructions went, by source line, the most
 * first.  Code without a line is one row per function.
 */
int
q_hot_lines(struct hwtr_q *q, const struct hwtr_q_req *req,
    struct hwtr_q_res **resp)
{
	static const char *const cols[] = { "line", "function", "insns",
	    "count", "percent" };
	struct p_prof pp = P_PROF_INIT;
	int64_t n = req->n >= 0 ? req->n : 20, all;
	size_t i;
	struct q_rng r;
	int rc;

	*resp = NULL;
	if (req->thread >= 0 && (rc = q_check_thread(q, req->thread)) < 0)
		return (rc);
	if ((rc = q_range_depth(q, req, "hot", &r, 1)) < 0)
		return (rc);
	if ((rc = p_prof_walk(q, &pp, req->thread, NULL, &r, 1)) < 0)
		goto out;
	if (r.on)
		all = pp.total;
	else if ((rc = q_sum_int(q, "hot", "threads", "insns", Q_WHO_THREAD,
	    "?1 < 0 OR id = ?1", req->thread, &all)) < 0)
		goto out;
	if (pp.nlines > 0)
		qsort(pp.lines.e, pp.nlines, sizeof(*pp.lines.e),
		    p_ent_by_insns);
	if ((rc = q_res_new(resp, HWTR_NELEM(cols), cols)) < 0) {
		rc = q_fail(q, rc, "out of memory");
		goto out;
	}
	for (i = 0; i < pp.nlines && (int64_t)i < n; i++) {
		struct p_ent *e = &pp.lines.e[i];
		const struct q_name *nm = NULL;
		const char *pl;

		pl = p_place(q, &pp.fst, &pp.place, e->file, e->line);
		rc = q_res_push(*resp, pl ? HWTR_Q_TEXT : HWTR_Q_NULL, pl);
		if (e->has_sym && (nm = q_name_get(q, &pp.names, e->symbol)) ==
		    NULL) {
			rc = -HWTR_E_DB;
			goto out;
		}
		rc |= q_res_push(*resp, nm && nm->name ? HWTR_Q_TEXT :
		    HWTR_Q_NULL, nm ? nm->name : NULL);
		rc |= q_res_push_int(*resp, e->insns);
		rc |= q_res_push_int(*resp, e->count);
		rc |= q_res_pushf(*resp, HWTR_Q_REAL, "%.2f",
		    p_pct(e->insns, all));
		if ((rc = q_res_row_done(q, *resp, rc)) < 0)
			goto out;
	}
	rc = 0;
out:
	p_prof_free(&pp);
	if (rc < 0) {
		hwtr_q_res_free(*resp);
		*resp = NULL;
	}
	return (rc);
}

/*
 * annotate's inlined column: the functions inlined at @ip, innermost
 * first, joined by " <- " (NULL: none).  0, or an error (q->msg).
 */
static int
p_inlined(struct hwtr_q *q, sqlite3_stmt **ist, struct hwtr_q_res *res,
    int on, uint64_t ip)
{
	struct q_inl_frame ch[HWTR_DB_INLINE_DEPTH];
	struct q_str s = { 0 };
	size_t n = 0, i;
	int rc;

	if (on && (rc = q_inl_chain(q, ist, ip, ch, HWTR_NELEM(ch), &n)) < 0) {
		q_inl_chain_free(ch, n);
		return (rc);
	}
	for (i = 0; i < n; i++)
		q_str_printf(&s, "%s%s", i > 0 ? " <- " : "", ch[i].name);
	q_inl_chain_free(ch, n);
	rc = q_res_push(res, n > 0 ? HWTR_Q_TEXT : HWTR_Q_NULL, s.p);
	if (rc != 0 || s.err)
		rc = q_fail(q, -HWTR_E_NOMEM, "out of memory");
	free(s.p);
	return (rc);
}

/*
 * annotate FUNC: each executed instruction of the functions matching
 * @pattern with its count and line (--by insn, the default; the source
 * text on the first instruction of each run of one line), or each source
 * line of them with the instructions executed there (--by line).
 */
int
q_annotate(struct hwtr_q *q, const struct hwtr_q_req *req,
    struct hwtr_q_res **resp)
{
	static const char *const icols[] = { "address", "function", "count",
	    "percent", "line", "instruction", "source", "inlined" };
	static const char *const lcols[] = { "line", "insns", "count",
	    "percent", "source" };
	struct p_prof pp = P_PROF_INIT;
	struct p_src src = { .file = -2 };
	struct q_str text = { 0 };
	const struct p_tab *tab;
	sqlite3_stmt *ist = NULL;
	int64_t pfile = -2, pline = -1;
	int by_line = req->by != NULL && strcmp(req->by, "line") == 0;
	int inl = !by_line && q_inl_on(q);
	char *ids = NULL, dis[160];
	size_t i, ne;
	struct q_rng r;
	int rc;

	*resp = NULL;
	if (req->by != NULL && !by_line && strcmp(req->by, "insn") != 0)
		return (q_fail(q, -HWTR_E_INVAL, "annotate: unknown --by '%s' "
		    "(insn or line)", req->by));
	if (req->pattern == NULL || req->pattern[0] == '\0')
		return (q_fail(q, -HWTR_E_INVAL, "annotate: no function"));
	if (req->thread >= 0 && (rc = q_check_thread(q, req->thread)) < 0)
		return (rc);
	if ((rc = q_range(q, req, "annotate", &r)) < 0)
		return (rc);
	if ((rc = q_sym_ids(q, "annotate", req->pattern, &ids)) < 0)
		return (rc);
	/*
	 * A range's blocks counted once into temp.q_cnt, as hot and
	 * coverage count them (grouped in SQL: 4.2 CPU-s for 49 M
	 * instructions of python3), once the names matched.
	 */
	if ((rc = q_range_count(q, req, "annotate", &r, 1)) < 0)
		goto out;
	if ((rc = p_prof_walk(q, &pp, req->thread, ids, &r, by_line)) < 0)
		goto out;
	tab = by_line ? &pp.lines : &pp.ins;
	ne = by_line ? pp.nlines : pp.nins;
	if (ne > 0)
		qsort(tab->e, ne, sizeof(*tab->e), by_line ? p_ent_by_line :
		    p_ent_by_addr);
	if ((rc = q_res_new(resp, by_line ? HWTR_NELEM(lcols) :
	    HWTR_NELEM(icols), by_line ? lcols : icols)) < 0) {
		rc = q_fail(q, rc, "out of memory");
		goto out;
	}
	for (i = 0; i < ne; i++) {
		struct p_ent *e = &tab->e[i];
		const char *pl, *s = NULL;

		rc = 0;
		pl = p_place(q, &pp.fst, &pp.place, e->file, e->line);
		if (by_line || e->file != pfile || e->line != pline)
			s = p_src_line(q, &src, e->file, e->line);
		pfile = e->file;
		pline = e->line;
		if (s != NULL)
			p_detab(&text, s);
		if (by_line) {
			rc |= q_res_push(*resp, pl ? HWTR_Q_TEXT : HWTR_Q_NULL,
			    pl);
			rc |= q_res_push_int(*resp, e->insns);
			rc |= q_res_push_int(*resp, e->count);
			rc |= q_res_pushf(*resp, HWTR_Q_REAL, "%.2f",
			    p_pct(e->insns, pp.total));
		} else {
			const struct q_name *nm = NULL;
			int64_t saddr;

			rc |= q_res_pushf(*resp, HWTR_Q_TEXT, "%#llx",
			    (unsigned long long)e->ip);
			if (e->has_sym && (nm = q_name_get(q, &pp.names,
			    e->symbol)) == NULL) {
				rc = -HWTR_E_DB;
				goto out;
			}
			if (nm != NULL && nm->name != NULL && q_int(q, &saddr,
			    0, "SELECT addr FROM symbols WHERE id = ?1", "i",
			    e->symbol) == 0 && e->has_image &&
			    e->iaddr != saddr)
				rc |= q_res_pushf(*resp, HWTR_Q_TEXT,
				    "%s+%#llx", nm->name,
				    (unsigned long long)(e->iaddr - saddr));
			else
				rc |= q_res_push(*resp, nm && nm->name ?
				    HWTR_Q_TEXT : HWTR_Q_NULL, nm ? nm->name :
				    NULL);
			rc |= q_res_push_int(*resp, e->count);
			rc |= q_res_pushf(*resp, HWTR_Q_REAL, "%.2f",
			    p_pct(e->insns, pp.total));
			rc |= q_res_push(*resp, pl ? HWTR_Q_TEXT : HWTR_Q_NULL,
			    pl);
			if (e->has_code && hwtr_x86_disasm(e->code,
			    (size_t)e->len, (uint64_t)e->ip, e->mode, dis,
			    sizeof(dis)) > 0)
				rc |= q_res_push(*resp, HWTR_Q_TEXT, dis);
			else
				rc |= q_res_push(*resp, HWTR_Q_NULL, NULL);
		}
		rc |= q_res_push(*resp, s && text.p ? HWTR_Q_TEXT : HWTR_Q_NULL,
		    s ? text.p : NULL);
		if (rc == 0 && !by_line &&
		    (rc = p_inlined(q, &ist, *resp, inl, e->ip)) < 0)
			goto out;
		if ((rc = q_res_row_done(q, *resp, (rc != 0 || text.err ||
		    pp.place.err))) < 0)
			goto out;
	}
	rc = 0;
out:
	free(ids);
	p_prof_free(&pp);
	sqlite3_finalize(ist);
	p_src_free(&src);
	free(text.p);
	if (rc < 0) {
		hwtr_q_res_free(*resp);
		*resp = NULL;
	}
	return (rc);
}

/* A frame name in a folded stack: ';' separates frames, a newline lines. */
static void
p_folded_name(struct q_str *o, const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		q_str_add(o, name[i] == ';' || name[i] == '\n' ||
		    name[i] == '\r' ? "_" : &name[i], 1);
}

/*
 * export --folded: one line per call path, "main;parse;lex 7950", the
 * frames from the root and the instructions executed in the last frame
 * itself (not in its callees; or with --weight time its nanoseconds, the
 * durations of tree less those of the callees), as the stackcollapse scripts of
 * FlameGraph write them for flamegraph.pl (inferno and speedscope read
 * the same).  The paths are those of tree (q_tree: the invocations of
 * one path merged), so the weights add up to the instructions of the
 * calls; with several threads each path starts with its thread
 * ("thread 2;main;...").  --thread, --depth and a range (--from, --to)
 * apply as for tree; a frame whose callees the tree leaves out weighs
 * their instructions too, so the total stays that of the calls shown.
 */
int
q_folded(struct hwtr_q *q, const struct hwtr_q_req *req,
    struct hwtr_q_res **resp)
{
	static const char *const cols[] = { "file", "stacks", "total",
	    "weight" };
	struct hwtr_q_req treq = *req;
	struct hwtr_q_res *tree = NULL;
	struct q_out *saved = q->out;
	struct q_str o = { 0 }, path = { 0 };
	size_t *plen = NULL, *up = NULL, cap = 0, r, nrows;
	int64_t nstacks = 0, total = 0, nthreads, self, depth, thread;
	int64_t *kids = NULL, ngap;
	size_t wcol = 4;	/* tree's insns */
	const char *fn;
	int rc;

	*resp = NULL;
	if (req->folded == NULL)
		return (q_fail(q, -HWTR_E_INVAL, "export: no output file"));
	if (req->weight != NULL && strcmp(req->weight, "time") == 0)
		wcol = 6;	/* tree's duration_ns */
	else if (req->weight != NULL && strcmp(req->weight, "insns") != 0)
		return (q_fail(q, -HWTR_E_INVAL, "export: unknown --weight "
		    "'%s' (insns or time)", req->weight));
	if ((rc = q_int(q, &nthreads, 0, "SELECT count(*) FROM threads WHERE "
	    "calls > 0 AND (?1 < 0 OR id = ?1)", "i", req->thread)) < 0)
		return (rc);
	/* A range is of one thread. */
	if (req->from >= 0 || req->to >= 0 || req->t_from >= 0 ||
	    req->t_to >= 0)
		nthreads = 1;
	if (wcol == 6) {
		int64_t ntimed;

		if ((rc = q_int(q, &ntimed, 0, "SELECT count(*) FROM threads "
		    "WHERE first_ns IS NOT NULL AND (?1 < 0 OR id = ?1)", "i",
		    req->thread)) < 0)
			return (rc);
		if (ntimed == 0)
			return (q_fail(q, -HWTR_E_INVAL, "export --folded "
			    "--weight time: %s no time (the trace has no "
			    "timestamps); weigh by instructions",
			    req->thread < 0 ? "the database has" :
			    "the thread has"));
	}
	treq.verb = HWTR_Q_TREE;
	/* The tree whole, not streamed to the output. */
	q->out = NULL;
	rc = q_tree(q, &treq, &tree);
	q->out = saved;
	if (rc < 0)
		return (rc);
	nrows = hwtr_q_res_nrows(tree);
	/*
	 * A frame weighs its instructions less those of the callees the tree
	 * shows: its own, or with theirs where --depth cut them off.  The
	 * rows are depth first, so a row's parent is the last row one level
	 * up (its index kept by depth in @up).
	 */
	if (nrows > 0 && ((kids = calloc(nrows, sizeof(*kids))) == NULL ||
	    (up = calloc(nrows + 1, sizeof(*up))) == NULL))
		goto nomem;
	for (r = 0; r < nrows; r++) {
		depth = strtoll(hwtr_q_res_cell(tree, r, 1, NULL), NULL, 10);
		if (hwtr_q_res_cell(tree, r, wcol, NULL) == NULL) {
			rc = q_fail(q, -HWTR_E_INVAL, "export --folded --weight "
			    "time: %s has no time (the trace has no timestamps "
			    "there); weigh by instructions", hwtr_q_res_cell(tree,
			    r, 7, NULL));
			goto out;
		}
		if (depth < 0 || (size_t)depth > r) {
			rc = q_fail(q, -HWTR_E_INVAL, "export: unexpected "
			    "tree row %zu", r);
			goto out;
		}
		up[depth] = r;
		/* Sums past 2^63 (a damaged database) are refused below. */
		if (depth > 0 && __builtin_add_overflow(kids[up[depth - 1]],
		    strtoll(hwtr_q_res_cell(tree, r, wcol, NULL), NULL, 10),
		    &kids[up[depth - 1]]))
			goto range;
	}
	for (r = 0; r < nrows; r++) {
		thread = strtoll(hwtr_q_res_cell(tree, r, 0, NULL), NULL, 10);
		depth = strtoll(hwtr_q_res_cell(tree, r, 1, NULL), NULL, 10);
		fn = hwtr_q_res_cell(tree, r, 2, NULL);
		if (__builtin_sub_overflow(strtoll(hwtr_q_res_cell(tree, r,
		    wcol, NULL), NULL, 10), kids[r], &self))
			goto range;
		if (depth < 0 || fn == NULL || (size_t)depth > r) {
			rc = q_fail(q, -HWTR_E_INVAL, "export: unexpected "
			    "tree row %zu", r);
			goto out;
		}
		if (hwtr_grow(&plen, &cap, (size_t)depth + 2,
		    sizeof(*plen)) < 0)
			goto nomem;
		/* tree's function column is indented by its depth. */
		while (*fn == ' ')
			fn++;
		/* The path: the parent's (its length kept by depth), then fn. */
		if (depth == 0) {
			path.len = 0;
			if (nthreads > 1)
				q_str_printf(&path, "thread %lld;",
				    (long long)thread);
		} else {
			path.len = plen[depth - 1];
			q_str_add(&path, ";", 1);
		}
		p_folded_name(&path, fn, strlen(fn));
		plen[depth] = path.len;
		if (self > 0) {
			q_str_add(&o, path.p, path.len);
			q_str_printf(&o, " %lld\n", (long long)self);
			nstacks++;
			if (__builtin_add_overflow(total, self, &total))
				goto range;
		}
		if (o.err || path.err)
			goto nomem;
	}
	/* Where the trace lost data: "[gap]" frames (q_gaps.c). */
	if ((rc = q_lost_folded(q, &o, nthreads > 1, &ngap)) < 0)
		goto out;
	nstacks += ngap;
	if ((rc = q_write_file(q, req->folded, o.p != NULL ? o.p : "",
	    o.len)) < 0)
		goto out;
	if ((rc = q_res_new(resp, HWTR_NELEM(cols), cols)) < 0) {
		rc = q_fail(q, rc, "out of memory");
		goto out;
	}
	rc = q_res_push(*resp, HWTR_Q_TEXT, req->folded);
	rc |= q_res_push_int(*resp, nstacks);
	rc |= q_res_push_int(*resp, total);
	rc |= q_res_push(*resp, HWTR_Q_TEXT, wcol == 6 ? "ns" : "instructions");
	if (rc != 0)
		goto nomem;
	goto out;
range:
	rc = q_fail(q, -HWTR_E_FORMAT, "export: the call tree's weights are "
	    "out of range (a damaged database?)");
	goto out;
nomem:
	rc = q_fail(q, -HWTR_E_NOMEM, "out of memory");
out:
	hwtr_q_res_free(tree);
	free(plen);
	free(kids);
	free(up);
	free(o.p);
	free(path.p);
	if (rc < 0) {
		hwtr_q_res_free(*resp);
		*resp = NULL;
	}
	return (rc);
}

static int
p_pline_cmp(const void *a, const void *b)
{
	return (strcmp(((const struct q_pline *)a)->place,
	    ((const struct q_pline *)b)->place));
}

void
q_plines_free(struct q_pline *pl, size_t n)
{
	size_t i;

	for (i = 0; pl != NULL && i < n; i++) {
		free(pl[i].place);
		free(pl[i].func);
	}
	free(pl);
}

int
q_prof_lines(struct hwtr_q *q, int64_t thread, struct q_pline **plp,
    size_t *np)
{
	struct p_prof pp = P_PROF_INIT;
	struct q_pline *pl = NULL;
	size_t i, n = 0;
	int rc;

	*plp = NULL;
	*np = 0;
	if ((rc = p_prof_walk(q, &pp, thread, NULL, NULL, 1)) < 0)
		goto out;
	if (pp.nlines > 0 && (pl = calloc(pp.nlines, sizeof(*pl))) == NULL)
		goto nomem;
	for (i = 0; i < pp.nlines; i++) {
		const struct p_ent *e = &pp.lines.e[i];
		const struct q_name *nm = NULL;
		const char *s;

		if ((s = p_place(q, &pp.fst, &pp.place, e->file, e->line)) ==
		    NULL)
			continue;
		if (e->has_sym && (nm = q_name_get(q, &pp.names, e->symbol)) ==
		    NULL) {
			rc = -HWTR_E_DB;
			goto out;
		}
		pl[n].insns = e->insns;
		pl[n].place = strdup(s);
		pl[n].func = nm != NULL && nm->name != NULL ? strdup(nm->name) :
		    NULL;
		if (pl[n++].place == NULL)
			goto nomem;
	}
	if (n > 0)
		qsort(pl, n, sizeof(*pl), p_pline_cmp);
	*plp = pl;
	*np = n;
	pl = NULL;
	rc = 0;
	goto out;
nomem:
	rc = q_fail(q, -HWTR_E_NOMEM, "out of memory");
out:
	q_plines_free(pl, n);
	p_prof_free(&pp);
	return (rc);
}
