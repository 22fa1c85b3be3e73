/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Inlined frames (the inlines table, hwtrace-db(5)): the chain of inlined
 * instances at an address, for bt, and the entries into the instances of
 * a function, for func.  An entry is an execution of an instance's entry
 * instruction (DW_AT_entry_pc, where gdb breaks on an inlined function)
 * whose predecessor in its frame was outside the instance (a loop back
 * to the entry from inside is not a new entry; leaving an interleaved
 * range for a caller's instruction and coming back is not either; a
 * jump into the instance past its entry is not counted): after a return
 * the predecessor is the call instruction before the return address, so
 * that coming back from a function the instance calls is not entering it
 * again, and returning from a call made just before it is (gdb stops once
 * per entry at a breakpoint on an inlined function).  Entries are found
 * at query time from the blocks and the execution order; nothing is
 * stored per entry.  hot --by inline splits blocks by the innermost
 * inlined range of each instruction.
 */

#include <sys/types.h>

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "q_int.h"

int
q_inl_on(struct hwtr_q *q)
{
	int64_t n = 0;

	if (q_int(q, &n, 0, "SELECT count(*) FROM sqlite_master WHERE "
	    "type = 'table' AND name = 'inlines'", NULL) < 0 || n == 0)
		return (0);
	if (q_int(q, &n, 0, "SELECT EXISTS (SELECT 1 FROM inlines)",
	    NULL) < 0)
		return (0);
	return (n != 0);
}

/* The instances at run-time address ?1, innermost first. */
/*
 * The image address of @addr: by the block that holds it or, for an
 * instruction no block holds (the one that faulted never completed, so
 * no block ends with it), by the mapping it lies in.
 */
#define Q_INL_CHAIN_SQL							\
	"SELECT i.name, f.path || ':' || i.call_line, i.lo = b.a FROM "	\
	"(SELECT image, a "							\
	"FROM (SELECT * FROM (SELECT image, image_addr + (?1 - start_ip) AS "	\
	"a, 0 AS pri FROM blocks WHERE start_ip <= ?1 AND ?1 <= last_ip AND "	\
	"image IS NOT NULL ORDER BY start_ip DESC LIMIT 1) UNION ALL "	\
	"SELECT * FROM (SELECT image, ?1 - bias AS a, 1 AS pri FROM "		\
	"mappings WHERE start_ip <= ?1 AND ?1 < end_ip AND image IS NOT "	\
	"NULL ORDER BY id DESC LIMIT 1)) ORDER BY pri LIMIT 1) b JOIN "	\
	"inlines i ON i.image = b.image AND i.lo <= b.a AND b.a < i.hi "	\
	"LEFT JOIN files f ON f.id = i.call_file ORDER BY i.depth DESC, "	\
	"i.inst"

int
q_inl_chain(struct hwtr_q *q, sqlite3_stmt **stp, uint64_t addr,
    struct q_inl_frame *out, size_t max, size_t *np)
{
	const char *s;
	size_t n = 0;
	int rc;

	*np = 0;
	if (*stp == NULL && (rc = q_prepare(q, stp, Q_INL_CHAIN_SQL)) < 0)
		return (rc);
	sqlite3_reset(*stp);
	sqlite3_bind_int64(*stp, 1, (int64_t)addr);
	while (n < max && (rc = sqlite3_step(*stp)) == SQLITE_ROW) {
		s = (const char *)sqlite3_column_text(*stp, 0);
		out[n].name = strdup(s != NULL ? s : "??");
		s = (const char *)sqlite3_column_text(*stp, 1);
		out[n].site = s != NULL ? strdup(s) : NULL;
		out[n].at_start = sqlite3_column_int(*stp, 2);
		n++;
		if (out[n - 1].name == NULL || (s != NULL &&
		    out[n - 1].site == NULL)) {
			*np = n;
			return (q_fail(q, -HWTR_E_NOMEM, "out of memory"));
		}
	}
	*np = n;
	if (n < max && rc != SQLITE_DONE)
		return (q_dbfail(q, "cannot read inlines"));
	sqlite3_reset(*stp);
	return (0);
}

void
q_inl_chain_free(struct q_inl_frame *f, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(f[i].name);
		free(f[i].site);
	}
}

/* ----------------------------------------------------------------- */
/* bt's rows (q_bt.c)                                                 */

/* One row of bt (q_bt.c: q_bt_cols). */
int
q_bt_row(struct hwtr_q *q, struct hwtr_q_res *res, int64_t thread,
    int64_t frame, const char *func, int has_addr, uint64_t addr,
    const char *line, int64_t call, int64_t insn, int inlined)
{
	int rc;

	rc = q_res_push_int(res, thread);
	rc |= q_res_push_int(res, frame);
	rc |= q_res_push(res, func ? HWTR_Q_TEXT : HWTR_Q_NULL, func);
	if (has_addr)
		rc |= q_res_pushf(res, HWTR_Q_TEXT, "%#llx",
		    (unsigned long long)addr);
	else
		rc |= q_res_push(res, HWTR_Q_NULL, NULL);
	rc |= q_res_push(res, line ? HWTR_Q_TEXT : HWTR_Q_NULL, line);
	if (call >= 0)
		rc |= q_res_push_int(res, call);
	else
		rc |= q_res_push(res, HWTR_Q_NULL, NULL);
	if (insn >= 0)
		rc |= q_res_push_int(res, insn);
	else
		rc |= q_res_push(res, HWTR_Q_NULL, NULL);
	rc |= q_res_push_int(res, inlined);
	if (rc != 0)
		return (q_fail(q, -HWTR_E_NOMEM, "out of memory"));
	return (q_res_row_end(q, res));
}

/*
 * A frame at @addr, after the frames of the functions inlined there
 * (innermost first, as gdb shows them): the innermost is at @line, each
 * one outside at the call site of the one inside it.  Every frame of the
 * chain has the same address; the call is the real frame's.  Frame 0 is
 * where the thread stopped, and there gdb leaves out the instances that
 * begin at that very address (it shows a stop at an inlined function's
 * first instruction at its call site, as it shows a breakpoint there);
 * bt does the same.
 */
int
q_bt_frame(struct hwtr_q *q, sqlite3_stmt **chain, int inl,
    struct hwtr_q_res *res, int64_t thread, int64_t *frame, const char *func,
    int has_addr, uint64_t addr, const char *line, int64_t call, int64_t insn)
{
	struct q_inl_frame ch[HWTR_DB_INLINE_DEPTH];
	size_t n = 0, i, k = 0;
	int rc = 0;

	if (has_addr && inl)
		rc = q_inl_chain(q, chain, addr, ch, HWTR_NELEM(ch), &n);
	if (*frame == 0)
		while (k < n && ch[k].at_start)
			k++;
	for (i = k; i < n && rc == 0; i++)
		rc = q_bt_row(q, res, thread, (*frame)++, ch[i].name, 1, addr,
		    i == 0 ? line : ch[i - 1].site, -1, insn, 1);
	if (rc == 0)
		rc = q_bt_row(q, res, thread, (*frame)++, func, has_addr, addr,
		    n > 0 ? ch[n - 1].site : line, call, insn, 0);
	q_inl_chain_free(ch, n);
	return (rc);
}

/* ----------------------------------------------------------------- */
/* Entries (func)                                                     */

/* Where a block meets instances of the function: from instruction k on. */
struct q_inl_hit {
	int32_t		k;		/* instruction of the block */
	int64_t		inst;		/* 0: outside */
	int64_t		site;		/* index into q_inl_ent.sites */
};

struct q_inl_blk {
	int64_t		id;
	int64_t		first;		/* instance entered at its first insn */
	int64_t		last;		/* instance of its last insn */
	struct q_inl_hit *hits;		/* entries inside it (k > 0) */
	size_t		nhits;
	int64_t		site0;		/* the first instruction's site */
	int64_t		before;		/* instance of the byte before it */
	char		*caller;
};

struct q_inl_ent {
	struct q_inl_blk *blk;		/* sorted by id */
	size_t		nblk;
	uint8_t		*ret;		/* by block id: ends in a return */
	int64_t		nret;
	char		**sites;	/* call site, by instance */
	char		**inames;	/* the function, by instance */
	int64_t		*site_inst, *site_img;
	size_t		nsites;
};

static void
q_inl_ent_free(struct q_inl_ent *e)
{
	size_t i;

	for (i = 0; i < e->nblk; i++) {
		free(e->blk[i].hits);
		free(e->blk[i].caller);
	}
	free(e->blk);
	free(e->ret);
	for (i = 0; i < e->nsites; i++) {
		free(e->sites[i]);
		free(e->inames[i]);
	}
	free(e->sites);
	free(e->inames);
	free(e->site_inst);
	free(e->site_img);
}

/* The index of instance @inst of image @img in @e's sites, added if new. */
static int64_t
q_inl_site(struct q_inl_ent *e, int64_t img, int64_t inst, const char *site,
    const char *name)
{
	size_t i, n = e->nsites + 1;
	void *p;

	for (i = 0; i < e->nsites; i++)
		if (e->site_inst[i] == inst && e->site_img[i] == img)
			return ((int64_t)i);
	if ((p = realloc(e->sites, n * sizeof(*e->sites))) == NULL)
		return (-1);
	e->sites = p;
	if ((p = realloc(e->inames, n * sizeof(*e->inames))) == NULL)
		return (-1);
	e->inames = p;
	if ((p = realloc(e->site_inst, n * sizeof(*e->site_inst))) == NULL)
		return (-1);
	e->site_inst = p;
	if ((p = realloc(e->site_img, n * sizeof(*e->site_img))) == NULL)
		return (-1);
	e->site_img = p;
	e->sites[e->nsites] = site != NULL ? strdup(site) : NULL;
	e->inames[e->nsites] = strdup(name != NULL ? name : "??");
	e->site_inst[e->nsites] = inst;
	e->site_img[e->nsites] = img;
	if ((site != NULL && e->sites[e->nsites] == NULL) ||
	    e->inames[e->nsites] == NULL) {
		free(e->sites[e->nsites]);
		free(e->inames[e->nsites]);
		return (-1);
	}
	return ((int64_t)e->nsites++);
}

/*
 * The blocks that overlap an instance of the function, one row per
 * (block, instance range), blocks in id order: the instance of each of
 * their instructions.  Nested instances of the same name count as the
 * outermost one.
 */
#define Q_INL_BLK_SQL							\
	"WITH m AS MATERIALIZED (SELECT * FROM inlines WHERE name IN %s), "	\
	"o AS MATERIALIZED (SELECT * FROM m WHERE NOT EXISTS (SELECT 1 FROM "	\
	"m x WHERE x.image = m.image AND x.name = m.name AND x.depth < "	\
	"m.depth AND x.lo <= m.lo AND m.hi <= x.hi)) "			\
	"SELECT b.id, b.image_addr, b.size, b.ninsns, b.insn_lens, i.lo, "	\
	"i.hi, i.inst, f.path || ':' || i.call_line, s.name, i.entry, "	\
	"i.name, i.image "						\
	"FROM o i "							\
	"JOIN blocks b ON b.image = i.image AND b.image_addr < i.hi AND "	\
	"b.image_addr + b.size > i.lo LEFT JOIN files f ON f.id = "	\
	"i.call_file LEFT JOIN symbols s ON s.id = b.symbol ORDER BY b.id"

/* Mark the instructions of block @b in [lo, hi) as instance @inst. */
static int
q_inl_mark(struct q_inl_blk *b, int64_t *insts, int64_t *ents,
    sqlite3_stmt *st)
{
	uint64_t entry = (uint64_t)sqlite3_column_int64(st, 10);
	const uint8_t *lens = sqlite3_column_blob(st, 4);
	int64_t ninsns = sqlite3_column_int64(st, 3);
	uint64_t a = (uint64_t)sqlite3_column_int64(st, 1);
	uint64_t lo = (uint64_t)sqlite3_column_int64(st, 5);
	uint64_t hi = (uint64_t)sqlite3_column_int64(st, 6);
	int64_t inst = sqlite3_column_int64(st, 7), k;

	/* A return to the block comes back from a call just before it. */
	if (a > lo && a - 1 < hi)
		b->before = inst;
	if (lens == NULL || sqlite3_column_bytes(st, 4) < ninsns) {
		/* Lengths unknown: the first instruction alone. */
		if (a >= lo && a < hi)
			insts[0] = inst;
		if (a == entry)
			ents[0] = inst;
		return (0);
	}
	for (k = 0; k < ninsns; k++) {
		if (a >= lo && a < hi)
			insts[k] = inst;
		if (a == entry)
			ents[k] = inst;
		a += lens[k];
	}
	return (0);
}

/* The most instructions a block may have (a straight run of code). */
#define IR_MAXINSNS	(1 << 20)

/*
 * One candidate block's entries: the instance entered at its first
 * instruction (when it is the instance's entry), its last instruction's
 * instance, and the entries inside it (an entry instruction after one
 * outside its instance).
 */
static int
q_inl_close(struct q_inl_ent *e, struct q_inl_blk *b, const int64_t *insts,
    const int64_t *ents, int64_t ninsns, int64_t *sitebyk)
{
	int64_t k;

	b->first = ents[0];
	b->last = insts[ninsns - 1];
	b->site0 = sitebyk[0];
	for (k = 1; k < ninsns; k++) {
		struct q_inl_hit *h;

		if (ents[k] == 0 || ents[k] == insts[k - 1])
			continue;
		h = realloc(b->hits, (b->nhits + 1) * sizeof(*h));
		if (h == NULL)
			return (-1);
		b->hits = h;
		h[b->nhits].k = (int32_t)k;
		h[b->nhits].inst = ents[k];
		h[b->nhits].site = sitebyk[k];
		b->nhits++;
	}
	(void)e;
	return (0);
}

static int
q_inl_blocks(struct hwtr_q *q, struct q_inl_ent *e, const char *names)
{
	sqlite3_stmt *st = NULL;
	int64_t *insts = NULL, *ents = NULL, *sitebyk = NULL, ninsns = 0;
	int64_t cur = 0, k;
	struct q_str sql = { 0 };
	size_t cap = 0;
	int rc;

	q_str_printf(&sql, Q_INL_BLK_SQL, names);
	if ((rc = q_sql_ready(q, &sql, -1)) < 0)
		return (rc);
	rc = q_prepare(q, &st, sql.p);
	free(sql.p);
	if (rc < 0)
		return (rc);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0), site;
		const char *cs = (const char *)sqlite3_column_text(st, 8);
		const char *caller = (const char *)sqlite3_column_text(st, 9);
		struct q_inl_blk *b;

		if (e->nblk == 0 || id != cur) {
			if (e->nblk > 0 && q_inl_close(e, &e->blk[e->nblk - 1],
			    insts, ents, ninsns, sitebyk) < 0)
				goto nomem;
			ninsns = sqlite3_column_int64(st, 3);
			if (ninsns <= 0)
				ninsns = 1;
			/* Arrays of its instructions: a damaged count. */
			if (ninsns > IR_MAXINSNS) {
				rc = q_fail(q, -HWTR_E_FORMAT, "blocks: block "
				    "%lld has %lld instructions: out of range "
				    "(a damaged database?)", (long long)id,
				    (long long)ninsns);
				goto out;
			}
			free(insts);
			free(ents);
			free(sitebyk);
			insts = calloc((size_t)ninsns, sizeof(*insts));
			ents = calloc((size_t)ninsns, sizeof(*ents));
			sitebyk = calloc((size_t)ninsns, sizeof(*sitebyk));
			if (insts == NULL || ents == NULL || sitebyk == NULL)
				goto nomem;
			if (e->nblk == cap) {
				size_t n = cap ? cap * 2 : 64;
				void *p = realloc(e->blk, n * sizeof(*e->blk));

				if (p == NULL)
					goto nomem;
				e->blk = p;
				cap = n;
			}
			b = &e->blk[e->nblk++];
			memset(b, 0, sizeof(*b));
			b->id = id;
			if (caller != NULL && (b->caller = strdup(caller)) ==
			    NULL)
				goto nomem;
			cur = id;
		}
		if ((site = q_inl_site(e, sqlite3_column_int64(st, 12),
		    sqlite3_column_int64(st, 7), cs, (const char *)
		    sqlite3_column_text(st, 11))) < 0)
			goto nomem;
		q_inl_mark(&e->blk[e->nblk - 1], insts, ents, st);
		for (k = 0; k < ninsns; k++)
			if (insts[k] == sqlite3_column_int64(st, 7))
				sitebyk[k] = site;
	}
	if (rc != SQLITE_DONE) {
		rc = q_dbfail(q, "cannot read inlines");
		goto out;
	}
	rc = 0;
	if (e->nblk > 0 && q_inl_close(e, &e->blk[e->nblk - 1], insts, ents,
	    ninsns, sitebyk) < 0)
		goto nomem;
	goto out;
nomem:
	rc = q_fail(q, -HWTR_E_NOMEM, "out of memory");
out:
	free(insts);
	free(ents);
	free(sitebyk);
	sqlite3_finalize(st);
	return (rc);
}

/* Which blocks end in a return (a bitmap by block id). */
static int
q_inl_returns(struct hwtr_q *q, struct q_inl_ent *e)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if ((rc = q_blocks_span(q, NULL, &e->nret)) < 0)
		return (rc);
	if ((e->ret = calloc((size_t)e->nret / 8 + 1, 1)) == NULL)
		return (q_fail(q, -HWTR_E_NOMEM, "out of memory"));
	if ((rc = q_prepare(q, &st, "SELECT id FROM blocks WHERE "
	    "last_class IN ('return', 'sysret')")) < 0)
		return (rc);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0);

		if (id >= 0 && id < e->nret)
			e->ret[id / 8] |= (uint8_t)(1u << (id % 8));
	}
	sqlite3_finalize(st);
	return (rc == SQLITE_DONE ? 0 : q_dbfail(q, "cannot read blocks"));
}

static const struct q_inl_blk *
q_inl_find(const struct q_inl_ent *e, int64_t id)
{
	size_t lo = 0, hi = e->nblk;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (e->blk[mid].id < id)
			lo = mid + 1;
		else if (e->blk[mid].id > id)
			hi = mid;
		else
			return (&e->blk[mid]);
	}
	return (NULL);
}

/* One func row for an entry into an inlined instance. */
static int
q_inl_row(struct hwtr_q *q, struct hwtr_q_res *res, const char *name,
    int64_t thread, const char *caller, const char *site, int64_t seq,
    int64_t insn)
{
	int rc, i;

	rc = q_res_push(res, HWTR_Q_NULL, NULL);
	rc |= q_res_push_int(res, thread);
	rc |= q_res_push(res, HWTR_Q_NULL, NULL);
	rc |= q_res_push(res, HWTR_Q_TEXT, name);
	rc |= q_res_push(res, caller ? HWTR_Q_TEXT : HWTR_Q_NULL, caller);
	rc |= q_res_push(res, site ? HWTR_Q_TEXT : HWTR_Q_NULL, site);
	rc |= q_res_push_int(res, seq);
	rc |= q_res_push_int(res, insn);
	for (i = 0; i < 5; i++)
		rc |= q_res_push(res, HWTR_Q_NULL, NULL);
	rc |= q_res_push(res, HWTR_Q_TEXT, "inlined");
	rc |= q_res_push(res, HWTR_Q_NULL, NULL);
	if (rc != 0)
		return (q_fail(q, -HWTR_E_NOMEM, "out of memory"));
	return (q_res_row_end(q, res));
}

/* The entries of one thread, in order. */
static int
q_inl_thread(struct hwtr_q *q, const struct q_inl_ent *e, sqlite3_stmt *ex,
    struct hwtr_q_res *res, int64_t thread)
{
	int64_t prev = -1, prev_inst = 0;
	size_t i;
	int rc;

	sqlite3_reset(ex);
	sqlite3_bind_int64(ex, 1, thread);
	while ((rc = sqlite3_step(ex)) == SQLITE_ROW) {
		int64_t seq = sqlite3_column_int64(ex, 0);
		int64_t blk = sqlite3_column_int64(ex, 1);
		int64_t insn = sqlite3_column_int64(ex, 2);
		const struct q_inl_blk *b = q_inl_find(e, blk);
		int ret = prev >= 0 && prev < e->nret &&
		    (e->ret[prev / 8] >> (prev % 8)) & 1;

		prev = blk;
		if (b == NULL) {
			prev_inst = 0;
			continue;
		}
		/*
		 * After a return the instruction before in this frame is the
		 * call just before the block, not the callee's return.
		 */
		if (b->first != 0 && b->first != (ret ? b->before :
		    prev_inst) &&
		    (rc = q_inl_row(q, res, e->inames[b->site0], thread,
		    b->caller, e->sites[b->site0], seq, insn)) < 0)
			return (rc);
		for (i = 0; i < b->nhits; i++)
			if ((rc = q_inl_row(q, res, e->inames[b->hits[i].site],
			    thread, b->caller, e->sites[b->hits[i].site], seq,
			    insn + b->hits[i].k)) < 0)
				return (rc);
		prev_inst = b->last;
	}
	sqlite3_reset(ex);
	return (rc == SQLITE_DONE ? 0 : q_dbfail(q, "cannot read exec_order"));
}

int
q_inl_entries(struct hwtr_q *q, struct hwtr_q_res *res, const char *pattern,
    int64_t thread)
{
	struct q_inl_ent e;
	sqlite3_stmt *th = NULL, *ex = NULL;
	char *names = NULL;
	int rc;

	memset(&e, 0, sizeof(e));
	if ((rc = q_inl_names(q, pattern, &names)) < 0 || names == NULL)
		return (rc);
	if ((rc = q_inl_blocks(q, &e, names)) < 0 || e.nblk == 0)
		goto out;
	if ((rc = q_inl_returns(q, &e)) < 0 ||
	    (rc = q_prepare(q, &th, "SELECT id FROM threads WHERE "
	    "(?1 < 0 OR id = ?1) AND blocks > 0 ORDER BY id")) < 0 ||
	    (rc = q_prepare(q, &ex, "SELECT seq, block, insn FROM exec_order "
	    "WHERE thread = ?1")) < 0)
		goto out;
	sqlite3_bind_int64(th, 1, thread);
	while ((rc = sqlite3_step(th)) == SQLITE_ROW)
		if ((rc = q_inl_thread(q, &e, ex, res,
		    sqlite3_column_int64(th, 0))) < 0)
			goto out;
	rc = rc == SQLITE_DONE ? 0 : q_dbfail(q, "cannot read threads");
out:
	sqlite3_finalize(th);
	sqlite3_finalize(ex);
	q_inl_ent_free(&e);
	free(names);
	return (rc);
}

/*
 * The names of inlined functions @pattern names, as an SQL list
 * "('a', 'b')" in *@listp (malloc'd; NULL: none): a glob by GLOB, else
 * as func names symbols (q_names.c, gdb's linespecs: "f" names
 * "ns::f(int)"), among the names holding the pattern's last component.
 */
int
q_inl_names(struct hwtr_q *q, const char *pattern, char **listp)
{
	sqlite3_stmt *st = NULL;
	struct q_pat *pat = NULL;
	struct q_str l = { 0 };
	char *key = NULL, *qs;
	const char *nm;
	int rc, glob, m = 0, n = 0;

	*listp = NULL;
	if (!q_inl_on(q))
		return (0);
	glob = strpbrk(pattern, "*?[") != NULL;
	if (!glob && ((key = q_name_key(pattern)) == NULL ||
	    (pat = q_pat_new(pattern)) == NULL)) {
		rc = q_fail(q, -HWTR_E_NOMEM, "out of memory");
		goto out;
	}
	if ((rc = q_prepare(q, &st, glob ? "SELECT DISTINCT name FROM "
	    "inlines WHERE name GLOB ?1" : "SELECT DISTINCT name FROM inlines "
	    "WHERE instr(name, ?1) > 0")) < 0)
		goto out;
	sqlite3_bind_text(st, 1, glob ? pattern : key, -1, SQLITE_TRANSIENT);
	q_str_puts(&l, "(");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		nm = (const char *)sqlite3_column_text(st, 0);
		if (nm == NULL || (!glob && (m = q_pat_match(pat, nm)) == 0))
			continue;
		if (m < 0)
			break;
		if ((qs = sqlite3_mprintf("%s%Q", n++ ? ", " : "", nm)) ==
		    NULL) {
			l.err = 1;
			break;
		}
		q_str_puts(&l, qs);
		sqlite3_free(qs);
	}
	q_str_puts(&l, ")");
	if (l.err || m < 0)
		rc = q_fail(q, -HWTR_E_NOMEM, "out of memory");
	else if (rc != SQLITE_DONE)
		rc = q_dbfail(q, "cannot read inlines");
	else {
		rc = 0;
		if (n > 0) {
			*listp = l.p;
			l.p = NULL;
		}
	}
out:
	free(l.p);
	free(key);
	q_pat_free(pat);
	sqlite3_finalize(st);
	return (rc);
}

/* Whether an instance of a function named @pattern was inlined anywhere. */
int
q_inl_named(struct hwtr_q *q, const char *pattern)
{
	char *l = NULL;
	int n;

	n = q_inl_names(q, pattern, &l) == 0 && l != NULL;
	free(l);
	return (n);
}

/* ----------------------------------------------------------------- */
/* hot --by inline                                                    */

/* The inlined ranges of one image, sorted by lo. */
struct q_inl_img {
	int64_t		image;
	struct {
		uint64_t	lo, hi;
		uint64_t	entry;	/* the instance's */
		int64_t		depth, inst;
		size_t		name;	/* offset in q_inl_hot.names */
		size_t		site;	/* the same; SIZE_MAX: none */
	}		*r;
	size_t		n, cap;
	uint64_t	maxlen;
};

struct q_inl_hot {
	struct q_inl_img *img;
	size_t		nimg;
	struct q_str	names;
};

static void
q_inl_hot_free(struct q_inl_hot *h)
{
	size_t i;

	for (i = 0; i < h->nimg; i++)
		free(h->img[i].r);
	free(h->img);
	free(h->names.p);
}

static int
q_inl_hot_load(struct hwtr_q *q, struct q_inl_hot *h)
{
	sqlite3_stmt *st = NULL;
	struct q_inl_img *im = NULL;
	int rc;

	if ((rc = q_prepare(q, &st, "SELECT i.image, i.lo, i.hi, i.depth, "
	    "i.name, i.inst, i.entry, f.path || ':' || i.call_line FROM "
	    "inlines i LEFT JOIN files f ON f.id = i.call_file ORDER BY "
	    "i.image, i.lo")) < 0)
		return (rc);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t image = sqlite3_column_int64(st, 0);
		const char *nm = (const char *)sqlite3_column_text(st, 4);
		void *p;

		if (im == NULL || im->image != image) {
			p = realloc(h->img, (h->nimg + 1) * sizeof(*h->img));
			if (p == NULL)
				goto nomem;
			h->img = p;
			im = &h->img[h->nimg++];
			memset(im, 0, sizeof(*im));
			im->image = image;
		}
		if (im->n == im->cap) {
			size_t c = im->cap ? im->cap * 2 : 64;

			if ((p = realloc(im->r, c * sizeof(*im->r))) == NULL)
				goto nomem;
			im->r = p;
			im->cap = c;
		}
		im->r[im->n].lo = (uint64_t)sqlite3_column_int64(st, 1);
		im->r[im->n].hi = (uint64_t)sqlite3_column_int64(st, 2);
		im->r[im->n].depth = sqlite3_column_int64(st, 3);
		im->r[im->n].inst = sqlite3_column_int64(st, 5);
		im->r[im->n].entry = (uint64_t)sqlite3_column_int64(st, 6);
		im->r[im->n].name = h->names.len;
		q_str_puts(&h->names, nm != NULL ? nm : "??");
		q_str_add(&h->names, "", 1);
		im->r[im->n].site = SIZE_MAX;
		if (sqlite3_column_type(st, 7) != SQLITE_NULL) {
			im->r[im->n].site = h->names.len;
			q_str_puts(&h->names, (const char *)
			    sqlite3_column_text(st, 7));
			q_str_add(&h->names, "", 1);
		}
		if (h->names.err)
			goto nomem;
		if (im->r[im->n].hi - im->r[im->n].lo > im->maxlen)
			im->maxlen = im->r[im->n].hi - im->r[im->n].lo;
		im->n++;
	}
	sqlite3_finalize(st);
	return (rc == SQLITE_DONE ? 0 : q_dbfail(q, "cannot read inlines"));
nomem:
	sqlite3_finalize(st);
	return (q_fail(q, -HWTR_E_NOMEM, "out of memory"));
}

/* The innermost inlined range of @im at @a: its index, or -1. */
static ssize_t
q_inl_at(const struct q_inl_img *im, uint64_t a)
{
	size_t lo = 0, hi = im->n, k;
	ssize_t best = -1;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (im->r[mid].lo <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (k = lo; k > 0; k--) {
		/* No range starting this far back reaches @a. */
		if (a - im->r[k - 1].lo >= im->maxlen)
			break;
		if (a < im->r[k - 1].hi && (best < 0 ||
		    im->r[k - 1].depth > im->r[best].depth))
			best = (ssize_t)(k - 1);
	}
	return (best);
}

/* One part of a block: @insns of its instructions run @name's code. */
struct q_inl_part {
	int64_t		block;
	size_t		name;		/* offset in names; SIZE_MAX: its own */
	int64_t		insns;
};

/* One row of the answer, keyed by (name, inlined, image). */
struct q_inl_row {
	char		*name;
	int		inlined;
	int64_t		image;
	char		*path;
	int64_t		insns;
	uint64_t	hash;
};

struct q_inl_agg {
	struct q_inl_part *p;
	size_t		np, capp;
	struct q_inl_row *r;		/* open addressing */
	size_t		nr, capr;
};

static int
q_inl_addpart(struct q_inl_agg *g, int64_t block, size_t name, int64_t n)
{
	if (g->np == g->capp) {
		size_t c = g->capp ? g->capp * 2 : 256;
		void *p = realloc(g->p, c * sizeof(*g->p));

		if (p == NULL)
			return (-1);
		g->p = p;
		g->capp = c;
	}
	g->p[g->np].block = block;
	g->p[g->np].name = name;
	g->p[g->np].insns = n;
	g->np++;
	return (0);
}

static int
q_inl_partcmp(const void *a, const void *b)
{
	const struct q_inl_part *x = a, *y = b;

	return (x->block < y->block ? -1 : x->block > y->block);
}

/*
 * The parts of the blocks that run inlined code: a block's instructions
 * in no inlined range are its function's, the others the innermost
 * inlined function's, runs of one function one part.  Sorted by block.
 */
static int
q_inl_parts(struct hwtr_q *q, struct q_inl_hot *h, struct q_inl_agg *g)
{
	sqlite3_stmt *st = NULL;
	size_t ii = 0;
	int rc;

	if ((rc = q_prepare(q, &st, "SELECT id, image, image_addr, ninsns, "
	    "insn_lens FROM blocks WHERE image IS NOT NULL ORDER BY "
	    "image")) < 0)
		return (rc);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0);
		int64_t image = sqlite3_column_int64(st, 1), k, n, own = 0;
		uint64_t a = (uint64_t)sqlite3_column_int64(st, 2);
		const uint8_t *lens = sqlite3_column_blob(st, 4);
		const struct q_inl_img *im;
		int64_t run = 0;
		size_t rname = SIZE_MAX;

		n = sqlite3_column_int64(st, 3);
		while (ii < h->nimg && h->img[ii].image < image)
			ii++;
		if (ii == h->nimg || h->img[ii].image != image)
			continue;
		im = &h->img[ii];
		if (lens == NULL || sqlite3_column_bytes(st, 4) < n)
			n = 1;
		for (k = 0; k <= n; k++) {
			ssize_t r = k < n ? q_inl_at(im, a) : -1;
			size_t nm = r < 0 ? SIZE_MAX : im->r[r].name;

			if (r < 0 && k < n)
				own++;
			if (nm != rname && run > 0 &&
			    q_inl_addpart(g, id, rname, run) < 0)
				goto nomem;
			if (nm != rname)
				run = 0;
			rname = nm;
			run += r >= 0;
			if (lens != NULL && k < n)
				a += lens[k];
		}
		if (own < n && own > 0 &&
		    q_inl_addpart(g, id, SIZE_MAX, own) < 0)
			goto nomem;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return (q_dbfail(q, "cannot read blocks"));
	if (g->np > 1)
		qsort(g->p, g->np, sizeof(*g->p), q_inl_partcmp);
	return (0);
nomem:
	sqlite3_finalize(st);
	return (q_fail(q, -HWTR_E_NOMEM, "out of memory"));
}

/*
 * Add @insns to the row of (@name, @inlined, @image), made when new: 0, -1
 * out of memory, -2 when the sum leaves int64.
 */
static int
q_inl_count(struct q_inl_agg *g, const char *name, int inlined,
    int64_t image, const char *path, int64_t insns)
{
	uint64_t hv = q_hash(name, strlen(name)) ^ (uint64_t)image * 31 ^
	    (uint64_t)inlined;
	struct q_inl_row *r;
	size_t k, i;

	if ((g->nr + 1) * 2 > g->capr) {
		size_t c = g->capr ? g->capr * 2 : 256;
		struct q_inl_row *n = calloc(c, sizeof(*n));

		if (n == NULL)
			return (-1);
		for (i = 0; i < g->capr; i++) {
			if (g->r[i].name == NULL)
				continue;
			for (k = g->r[i].hash & (c - 1); n[k].name != NULL;
			    k = (k + 1) & (c - 1))
				;
			n[k] = g->r[i];
		}
		free(g->r);
		g->r = n;
		g->capr = c;
	}
	for (k = hv & (g->capr - 1); g->r[k].name != NULL;
	    k = (k + 1) & (g->capr - 1)) {
		r = &g->r[k];
		if (r->hash == hv && r->inlined == inlined &&
		    r->image == image && strcmp(r->name, name) == 0) {
			if (__builtin_add_overflow(r->insns, insns, &r->insns))
				return (-2);
			return (0);
		}
	}
	r = &g->r[k];
	r->name = strdup(name);
	r->path = path != NULL ? strdup(path) : NULL;
	if (r->name == NULL || (path != NULL && r->path == NULL)) {
		free(r->name);
		free(r->path);
		r->name = NULL;
		return (-1);
	}
	r->inlined = inlined;
	r->image = image;
	r->insns = insns;
	r->hash = hv;
	g->nr++;
	return (0);
}

static int
q_inl_rowcmp(const void *a, const void *b)
{
	const struct q_inl_row *x = a, *y = b;

	if ((x->name == NULL) != (y->name == NULL))
		return (x->name == NULL ? 1 : -1);
	if (x->name == NULL)
		return (0);
	if (x->insns != y->insns)
		return (x->insns > y->insns ? -1 : 1);
	return (strcmp(x->name, y->name));
}

static void
q_inl_agg_free(struct q_inl_agg *g)
{
	size_t i;

	for (i = 0; i < g->capr; i++) {
		free(g->r[i].name);
		free(g->r[i].path);
	}
	free(g->r);
	free(g->p);
}

/* Every block's count, by its parts or whole, into @g's rows. */
static int
q_inl_sum(struct hwtr_q *q, const struct q_inl_hot *h, struct q_inl_agg *g,
    int64_t thread)
{
	sqlite3_stmt *st = NULL;
	size_t pi = 0;
	int rc;

	if ((rc = q_prepare(q, &st, "SELECT c.block, sum(c.count), b.ninsns, "
	    "coalesce(s.name, '[unknown]'), b.image, i.path FROM block_counts "
	    "c JOIN blocks b ON b.id = c.block LEFT JOIN symbols s ON s.id = "
	    "b.symbol LEFT JOIN images i ON i.id = b.image WHERE ?1 < 0 OR "
	    "c.thread = ?1 GROUP BY c.block ORDER BY c.block")) < 0)
		return (rc);
	sqlite3_bind_int64(st, 1, thread);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t blk = sqlite3_column_int64(st, 0);
		int64_t cnt = sqlite3_column_int64(st, 1);
		const char *fn = (const char *)sqlite3_column_text(st, 3);
		int64_t image = sqlite3_column_int64(st, 4);
		const char *path = (const char *)sqlite3_column_text(st, 5);
		int64_t v;
		int e = 0;

		while (pi < g->np && g->p[pi].block < blk)
			pi++;
		if (pi == g->np || g->p[pi].block != blk)
			e = __builtin_mul_overflow(cnt,
			    sqlite3_column_int64(st, 2), &v) ? -2 :
			    q_inl_count(g, fn, 0, image, path, v);
		for (; e == 0 && pi < g->np && g->p[pi].block == blk; pi++)
			e = __builtin_mul_overflow(cnt, g->p[pi].insns, &v) ?
			    -2 : q_inl_count(g, g->p[pi].name == SIZE_MAX ?
			    fn : h->names.p + g->p[pi].name, g->p[pi].name !=
			    SIZE_MAX, image, path, v);
		if (e < 0) {
			sqlite3_finalize(st);
			if (e == -2)
				return (q_fail(q, -HWTR_E_FORMAT, "block_counts: "
				    "block %lld: its count %lld is out of range "
				    "(a damaged database?)", (long long)blk,
				    (long long)cnt));
			return (q_fail(q, -HWTR_E_NOMEM, "out of memory"));
		}
	}
	sqlite3_finalize(st);
	return (rc == SQLITE_DONE ? 0 : q_dbfail(q, "cannot read blocks"));
}

int
q_inl_hot(struct hwtr_q *q, struct hwtr_q_res **resp, int64_t thread,
    int64_t n)
{
	static const char *const cols[] = { "function", "inlined", "image",
	    "insns", "percent" };
	struct q_inl_hot h;
	struct q_inl_agg g;
	int64_t total = 0;
	size_t i;
	int rc;

	memset(&h, 0, sizeof(h));
	memset(&g, 0, sizeof(g));
	*resp = NULL;
	if ((rc = q_sum_int(q, "hot", "threads", "insns", Q_WHO_THREAD,
	    "?1 < 0 OR id = ?1", thread, &total)) < 0)
		return (rc);
	if (q_inl_on(q) && ((rc = q_inl_hot_load(q, &h)) < 0 ||
	    (rc = q_inl_parts(q, &h, &g)) < 0))
		goto out;
	if ((rc = q_inl_sum(q, &h, &g, thread)) < 0)
		goto out;
	if (g.capr > 0)
		qsort(g.r, g.capr, sizeof(*g.r), q_inl_rowcmp);
	if ((rc = q_res_new(resp, HWTR_NELEM(cols), cols)) < 0) {
		rc = q_fail(q, rc, "out of memory");
		goto out;
	}
	for (i = 0; i < g.nr && (n < 0 || (int64_t)i < n); i++) {
		const struct q_inl_row *r = &g.r[i];

		rc = q_res_push(*resp, HWTR_Q_TEXT, r->name);
		rc |= q_res_push_int(*resp, r->inlined);
		rc |= q_res_push(*resp, r->path ? HWTR_Q_TEXT : HWTR_Q_NULL,
		    r->path);
		rc |= q_res_push_int(*resp, r->insns);
		rc |= q_res_pushf(*resp, HWTR_Q_REAL, "%.2f", total > 0 ?
		    100.0 * (double)r->insns / (double)total : 0.0);
		if ((rc = q_res_row_done(q, *resp, rc)) < 0)
			goto out;
	}
	rc = 0;
out:
	if (rc < 0) {
		hwtr_q_res_free(*resp);
		*resp = NULL;
	}
	q_inl_agg_free(&g);
	q_inl_hot_free(&h);
	return (rc);
}

/* ----------------------------------------------------------------- */
/* Runs of instances (export --perfetto)                              */

/*
 * A run of an inlined instance is one entry into it (as func counts
 * them: its entry instruction after an instruction of its frame outside
 * it) until its frame next runs an instruction outside it, or returns:
 * the calls the frame makes meanwhile are inside the run, as tree puts
 * them under the inlined frame.  Frames are the calls of the thread
 * (a walk in entry order beside the execution order), so that code run
 * in callees is no instruction of the frame.  What each block's
 * instructions are inside is worked out once per block.
 */

#define IR_CHAIN	HWTR_DB_INLINE_DEPTH	/* nesting followed */

/* An instance: image (index in q_inl_hot.img) and instance number. */
struct ir_key {
	size_t		img;
	int64_t		inst;
};

/* An instance containing an instruction: which range, at its entry? */
struct ir_ch {
	size_t		img, range;
	int		entry;
};

/* A block's instructions: instances around each, outermost first. */
struct ir_blk {
	int64_t		ninsns;
	/*
	 * Instructions with chains of their own: ninsns when the lengths
	 * are known, else 1 (those after have none).  Their cost is the
	 * database's bytes, not a count it claims.
	 */
	int64_t		nfill;
	uint32_t	*off;		/* nfill + 1 offsets into ch; NULL */
	struct ir_ch	*ch;
};

struct ir_open {
	struct ir_key	k;
	size_t		range;
	int64_t		start;
};

/*
 * A frame: its instances (those of the last instruction it ran) and its
 * open runs live at the ends of ir.prev and ir.open while it is the top.
 */
struct ir_frame {
	int64_t		id, depth, exit_seq;
	size_t		poff, ooff;
};

struct ir {
	struct hwtr_q	*q;
	struct q_inl_hot h;
	struct ir_blk	**bk;		/* by block id */
	int64_t		nbk;
	sqlite3_stmt	*bst;
	struct ir_frame	*fr;
	size_t		nfr, capfr;
	struct ir_key	*prev;
	size_t		nprev, capprev;
	struct ir_open	*open;
	size_t		nopen, capopen;
	int		(*fn)(void *, const struct q_inl_run *);
	void		*arg;
};

static void
ir_free(struct ir *ir)
{
	int64_t i;

	for (i = 0; ir->bk != NULL && i < ir->nbk; i++) {
		if (ir->bk[i] == NULL)
			continue;
		free(ir->bk[i]->off);
		free(ir->bk[i]->ch);
		free(ir->bk[i]);
	}
	free(ir->bk);
	sqlite3_finalize(ir->bst);
	free(ir->fr);
	free(ir->prev);
	free(ir->open);
	q_inl_hot_free(&ir->h);
}

static int
ir_chcmp(const void *a, const void *b, void *arg)
{
	const struct ir_ch *x = a, *y = b;
	const struct q_inl_hot *h = arg;
	int64_t dx = h->img[x->img].r[x->range].depth;
	int64_t dy = h->img[y->img].r[y->range].depth;

	return (dx < dy ? -1 : dx > dy);
}

/* The image of id @image in @h: its index, or SIZE_MAX. */
static size_t
ir_img(const struct q_inl_hot *h, int64_t image)
{
	size_t lo = 0, hi = h->nimg;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (h->img[mid].image < image)
			lo = mid + 1;
		else if (h->img[mid].image > image)
			hi = mid;
		else
			return (mid);
	}
	return (SIZE_MAX);
}

/* The instances around each instruction of a block at @a of image @ii. */
static int
ir_blk_fill(struct ir *ir, struct ir_blk *b, size_t ii, uint64_t a,
    const uint8_t *lens)
{
	const struct q_inl_img *im = &ir->h.img[ii];
	size_t nch = 0, cap = 0, lo, hi, k;
	struct ir_ch *c;
	int64_t i;

	if ((b->off = calloc((size_t)b->nfill + 1, sizeof(*b->off))) == NULL)
		return (-1);
	for (i = 0; i < b->nfill; i++) {
		size_t first = nch;

		b->off[i] = (uint32_t)nch;
		/* The ranges starting at or before @a, back to maxlen. */
		for (lo = 0, hi = im->n; lo < hi; ) {
			size_t mid = (lo + hi) / 2;

			if (im->r[mid].lo <= a)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (k = lo; k > 0 && a - im->r[k - 1].lo < im->maxlen; k--) {
			if (a >= im->r[k - 1].hi || nch - first >= IR_CHAIN)
				continue;
			if (nch == cap) {
				cap = cap ? cap * 2 : 16;
				if ((c = realloc(b->ch, cap * sizeof(*c))) ==
				    NULL)
					return (-1);
				b->ch = c;
			}
			b->ch[nch].img = ii;
			b->ch[nch].range = k - 1;
			b->ch[nch].entry = im->r[k - 1].entry == a;
			nch++;
		}
		if (nch - first > 1)
			qsort_r(b->ch + first, nch - first, sizeof(*b->ch),
			    ir_chcmp, &ir->h);
		a += lens != NULL ? lens[i] : 0;
	}
	b->off[b->nfill] = (uint32_t)nch;
	if (nch == 0) {
		free(b->off);
		b->off = NULL;
	}
	return (0);
}

/* Block @id's facts, read on first use (NULL: an error, in q->msg). */
static const struct ir_blk *
ir_blk(struct ir *ir, int64_t id)
{
	struct ir_blk *b;
	const uint8_t *lens;
	size_t ii;

	if (id < 0 || id >= ir->nbk) {
		q_fail(ir->q, -HWTR_E_DB, "export: block %lld is not in the "
		    "blocks table", (long long)id);
		return (NULL);
	}
	if (ir->bk[id] != NULL)
		return (ir->bk[id]);
	if ((b = calloc(1, sizeof(*b))) == NULL)
		goto nomem;
	ir->bk[id] = b;
	b->ninsns = 1;
	sqlite3_reset(ir->bst);
	sqlite3_bind_int64(ir->bst, 1, id);
	if (sqlite3_step(ir->bst) != SQLITE_ROW) {
		q_dbfail(ir->q, "export: cannot read blocks");
		return (NULL);
	}
	/* A block of more than IR_MAXINSNS: a damaged database. */
	if (sqlite3_column_int64(ir->bst, 2) > IR_MAXINSNS) {
		q_fail(ir->q, -HWTR_E_FORMAT, "blocks: block %lld has %lld "
		    "instructions: out of range (a damaged database?)",
		    (long long)id, (long long)sqlite3_column_int64(ir->bst, 2));
		return (NULL);
	}
	if (sqlite3_column_int64(ir->bst, 2) > 0)
		b->ninsns = sqlite3_column_int64(ir->bst, 2);
	lens = sqlite3_column_blob(ir->bst, 3);
	if (lens == NULL || sqlite3_column_bytes(ir->bst, 3) < b->ninsns)
		lens = NULL;
	b->nfill = lens != NULL ? b->ninsns : 1;
	if (sqlite3_column_type(ir->bst, 0) == SQLITE_NULL ||
	    sqlite3_column_type(ir->bst, 1) == SQLITE_NULL ||
	    (ii = ir_img(&ir->h, sqlite3_column_int64(ir->bst, 0))) ==
	    SIZE_MAX)
		return (b);
	/* Lengths unknown: the first instruction alone is placed. */
	if (ir_blk_fill(ir, b, ii, (uint64_t)sqlite3_column_int64(ir->bst, 1),
	    lens) < 0)
		goto nomem;
	return (b);
nomem:
	q_fail(ir->q, -HWTR_E_NOMEM, "out of memory");
	return (NULL);
}

/*
 * Close the top frame's open runs at instruction position @at, those
 * not in @keep (@nkeep instances; NULL: all), outermost first (two runs
 * with the same ends then nest as they do).
 */
static int
ir_close(struct ir *ir, int64_t at, const struct ir_key *keep, size_t nkeep)
{
	struct ir_frame *f = &ir->fr[ir->nfr - 1];
	struct q_inl_run run;
	size_t i, j, best;
	int rc;

	assert(ir->nfr > 0 && f->ooff <= ir->nopen);
	for (;;) {
		best = SIZE_MAX;
		for (i = f->ooff; i < ir->nopen; i++) {
			const struct ir_open *o = &ir->open[i];

			for (j = 0; j < nkeep; j++)
				if (keep[j].img == o->k.img &&
				    keep[j].inst == o->k.inst)
					break;
			if (j < nkeep)
				continue;
			if (best == SIZE_MAX || ir->h.img[o->k.img].r[o->range].
			    depth < ir->h.img[ir->open[best].k.img].
			    r[ir->open[best].range].depth)
				best = i;
		}
		if (best == SIZE_MAX)
			break;
		{
			const struct ir_open *o = &ir->open[best];
			const struct q_inl_img *im = &ir->h.img[o->k.img];

			run.name = ir->h.names.p + im->r[o->range].name;
			run.site = im->r[o->range].site == SIZE_MAX ? NULL :
			    ir->h.names.p + im->r[o->range].site;
			run.call = f->id;
			run.depth = f->depth;
			run.level = im->r[o->range].depth;
			run.entry_insn = o->start;
			run.exit_insn = at;
		}
		memmove(&ir->open[best], &ir->open[best + 1],
		    (ir->nopen - best - 1) * sizeof(*ir->open));
		ir->nopen--;
		if ((rc = ir->fn(ir->arg, &run)) < 0)
			return (rc);
	}
	return (0);
}

/* Push a frame. */
static int
ir_push(struct ir *ir, int64_t id, int64_t depth, int64_t exit_seq)
{
	struct ir_frame *f;

	if (hwtr_grow(&ir->fr, &ir->capfr, ir->nfr + 1,
	    sizeof(*ir->fr)) < 0)
		return (q_fail(ir->q, -HWTR_E_NOMEM, "out of memory"));
	f = &ir->fr[ir->nfr++];
	f->id = id;
	f->depth = depth;
	f->exit_seq = exit_seq;
	f->poff = ir->nprev;
	f->ooff = ir->nopen;
	return (0);
}

/* Pop the top frame, its runs ending at @at. */
static int
ir_pop(struct ir *ir, int64_t at)
{
	int rc;

	assert(ir->nfr > 1);
	if ((rc = ir_close(ir, at, NULL, 0)) < 0)
		return (rc);
	ir->nprev = ir->fr[ir->nfr - 1].poff;
	ir->nfr--;
	return (0);
}

/* Instruction @k of block @b at position @at, in the top frame. */
static int
ir_insn(struct ir *ir, const struct ir_blk *b, int64_t k, int64_t at,
    int can_open)
{
	struct ir_frame *f = &ir->fr[ir->nfr - 1];
	struct ir_key ks[IR_CHAIN];
	size_t n = 0, i, j, lo, hi;
	int rc;

	lo = b->off == NULL ? 0 : b->off[k < b->nfill ? k : b->nfill];
	hi = b->off == NULL ? 0 : b->off[k < b->nfill ? k + 1 : b->nfill];
	assert(hi - lo <= IR_CHAIN && f->poff <= ir->nprev);
	for (i = lo; i < hi && n < IR_CHAIN; i++) {
		ks[n].img = b->ch[i].img;
		ks[n].inst = ir->h.img[b->ch[i].img].r[b->ch[i].range].inst;
		n++;
	}
	if (ir->nopen > f->ooff && (rc = ir_close(ir, at, ks, n)) < 0)
		return (rc);
	for (i = lo; i < hi && can_open; i++) {
		if (!b->ch[i].entry)
			continue;
		for (j = f->poff; j < ir->nprev; j++)
			if (ir->prev[j].img == ks[i - lo].img &&
			    ir->prev[j].inst == ks[i - lo].inst)
				break;
		if (j < ir->nprev)
			continue;
		if (hwtr_grow(&ir->open, &ir->capopen, ir->nopen + 1,
		    sizeof(*ir->open)) < 0)
			return (q_fail(ir->q, -HWTR_E_NOMEM, "out of memory"));
		ir->open[ir->nopen].k = ks[i - lo];
		ir->open[ir->nopen].range = b->ch[i].range;
		ir->open[ir->nopen].start = at;
		ir->nopen++;
	}
	if (hwtr_grow(&ir->prev, &ir->capprev, f->poff + n,
	    sizeof(*ir->prev)) < 0)
		return (q_fail(ir->q, -HWTR_E_NOMEM, "out of memory"));
	if (n > 0)
		memcpy(ir->prev + f->poff, ks, n * sizeof(*ks));
	ir->nprev = f->poff + n;
	return (0);
}

/* The next call of the walk: 1, 0 at the end, < 0 an error. */
static int
ir_next_call(struct q_walk *w, struct q_span *c)
{
	int rc;

	if ((rc = q_walk_step(w)) != 1)
		return (rc);
	c->id = sqlite3_column_int64(w->st, 0);
	c->depth = sqlite3_column_int64(w->st, 1);
	c->entry_seq = sqlite3_column_int64(w->st, 2);
	c->exit_seq = sqlite3_column_type(w->st, 3) == SQLITE_NULL ?
	    INT64_MAX : sqlite3_column_int64(w->st, 3);
	return (1);
}

/*
 * A window that starts at a later block (export --from) finds the runs
 * open there as a walk from the thread's start would have: for each frame
 * open at its first block, the instances around the frame's last
 * instruction before it (its call into the next frame, or the block
 * before the window), each followed back through the frame's own
 * instructions (not its callees') to where the frame entered it; the run
 * is open when that instruction is the instance's entry (ir_insn()'s
 * rule).  A frame whose last block is its own for sure (no call entered
 * after its last callee returned) and whose runs all start in it costs
 * that block; else its blocks are read backwards in stretches of doubling
 * size, its callees' left out, so that the cost is that of the runs
 * followed.  The frames' last blocks come in the thread's order: the
 * execution order is read on from one to the next when they are close (a
 * search of it decodes a whole chunk).
 */
struct ir_want {
	struct ir_key	k;
	size_t		range;
	int64_t		start;
	int		entry, done;
};
struct ir_back {
	struct ir	*ir;
	int64_t		thread;
	sqlite3_stmt	*ex, *inner, *up;
	struct q_walk	cw;		/* callees in a stretch */
	/* ex's row read and not yet used (cur_ok), at cur_seq. */
	int64_t		cur_seq, cur_blk, cur_insn;
	int		cur_ok;
	int64_t		*blk, *insn;
	char		*own;
	size_t		cap;
	struct ir_want	w[IR_CHAIN];
	size_t		nw;
	int		found;		/* the frame's last instruction */
};

#define IR_BACK_MIN	16		/* blocks in the first stretch */
#define IR_BACK_MAX	65536		/* and at most */
#define IR_BACK_GAP	4096		/* blocks read on rather than sought */

/*
 * The last call entered at or before block @t (Q_WALK_INNER), into @c
 * and *@parent (-1: none): 1, or 0 when there is none.
 */
static int
ir_back_inner(struct ir_back *bk, sqlite3_stmt *st, int64_t key,
    struct q_span *c, int64_t *parent)
{
	int rc;

	sqlite3_reset(st);
	if (st == bk->inner) {
		sqlite3_bind_int64(st, 1, bk->thread);
		sqlite3_bind_int64(st, 2, key);
	} else
		sqlite3_bind_int64(st, 1, key);
	if ((rc = sqlite3_step(st)) == SQLITE_DONE)
		return (0);
	if (rc != SQLITE_ROW)
		return (q_dbfail(bk->ir->q, "export: cannot read calls"));
	c->id = sqlite3_column_int64(st, 0);
	c->depth = sqlite3_column_int64(st, 1);
	c->entry_seq = sqlite3_column_int64(st, 2);
	c->exit_seq = sqlite3_column_type(st, 3) == SQLITE_NULL ? INT64_MAX :
	    sqlite3_column_int64(st, 3);
	*parent = sqlite3_column_type(st, 4) == SQLITE_NULL ? -1 :
	    sqlite3_column_int64(st, 4);
	return (1);
}

/*
 * The call at depth @depth entered before block @lo and still open there
 * (it holds the blocks of the stretch from @lo on): from the last call
 * entered before @lo up through its callers.  *@xp: its exit_seq, or -1.
 */
static int
ir_back_straddle(struct ir_back *bk, int64_t lo, int64_t depth, int64_t *ep,
    int64_t *xp)
{
	struct q_span c;
	int64_t parent, d;
	uint64_t n;
	int rc;

	*ep = *xp = -1;
	if ((rc = ir_back_inner(bk, bk->inner, lo - 1, &c, &parent)) <= 0)
		return (rc);
	/* Each caller is shallower (else a damaged table: stop). */
	for (n = 1; c.depth > depth && parent >= 0; n++) {
		if ((n & 4095) == 0 && q_limit_poll(bk->ir->q))
			return (q_fail(bk->ir->q, -HWTR_E_LIMIT, "export: the "
			    "time limit"));
		d = c.depth;
		if ((rc = ir_back_inner(bk, bk->up, parent, &c, &parent)) <= 0)
			return (rc);
		if (c.depth >= d)
			return (0);
	}
	if (c.depth == depth && c.entry_seq < lo && c.exit_seq > lo) {
		*ep = c.entry_seq;
		*xp = c.exit_seq;
	}
	return (0);
}

/*
 * Whether block @t is frame @id's (at depth @depth) for sure: 1 when the
 * last call entered at or before it is the frame, or one of its callees
 * that returned before it; 0 when that takes a search.
 */
static int
ir_back_own(struct ir_back *bk, int64_t id, int64_t depth, int64_t t)
{
	struct q_span c;
	int64_t parent;
	int rc;

	if ((rc = ir_back_inner(bk, bk->inner, t, &c, &parent)) <= 0)
		return (rc < 0 ? rc : id < 0);
	if (c.id == id)
		return (1);
	return (c.depth == depth + 1 && c.exit_seq <= t && (id < 0 ?
	    parent < 0 : parent == id));
}

/*
 * The blocks @lo to @lo + @n - 1 of the thread into bk->blk, bk->insn
 * (bk->own: 1 where a row was read), reading on from the last read when
 * they are a little after it.
 */
static int
ir_back_read(struct ir_back *bk, int64_t lo, size_t n)
{
	struct ir *ir = bk->ir;
	int64_t i, prev;
	int rc;

	if (n > bk->cap) {
		free(bk->blk);
		free(bk->insn);
		free(bk->own);
		bk->insn = malloc(n * sizeof(*bk->insn));
		bk->blk = malloc(n * sizeof(*bk->blk));
		bk->own = malloc(n);
		bk->cap = n;
		if (bk->insn == NULL || bk->blk == NULL || bk->own == NULL) {
			bk->cap = 0;
			return (q_fail(ir->q, -HWTR_E_NOMEM, "out of memory"));
		}
	}
	memset(bk->own, 0, n);
	if (!bk->cur_ok || bk->cur_seq > lo || bk->cur_seq < lo - IR_BACK_GAP) {
		sqlite3_reset(bk->ex);
		sqlite3_bind_int64(bk->ex, 1, bk->thread);
		sqlite3_bind_int64(bk->ex, 2, lo);
		bk->cur_ok = 0;
		goto next;
	}
	for (;;) {
		if (bk->cur_seq >= lo + (int64_t)n)
			return (0);		/* kept for the next read */
		i = bk->cur_seq - lo;
		if (i >= 0) {
			bk->blk[i] = bk->cur_blk;
			bk->insn[i] = bk->cur_insn;
			bk->own[i] = 1;
		}
next:
		prev = bk->cur_ok ? bk->cur_seq : INT64_MIN;
		if ((rc = sqlite3_step(bk->ex)) == SQLITE_DONE) {
			bk->cur_ok = 0;
			return (0);
		}
		if (rc != SQLITE_ROW) {
			bk->cur_ok = 0;
			return (q_dbfail(ir->q, "export: cannot read "
			    "exec_order"));
		}
		bk->cur_seq = sqlite3_column_int64(bk->ex, 0);
		bk->cur_blk = sqlite3_column_int64(bk->ex, 1);
		bk->cur_insn = sqlite3_column_int64(bk->ex, 2);
		/* Seqs go up; one that does not is a damaged table. */
		if (bk->cur_seq <= prev) {
			bk->cur_ok = 0;
			return (q_fail(ir->q, -HWTR_E_DB, "exec_order: seq %lld "
			    "out of order (a damaged database?)",
			    (long long)bk->cur_seq));
		}
		bk->cur_ok = 1;
	}
}

/*
 * Instruction @k of block @b at position @at, the frame's next going
 * back: 1 when nothing is left to follow.
 */
static int
ir_back_insn(struct ir_back *bk, const struct ir_blk *b, int64_t k,
    int64_t at)
{
	const struct ir *ir = bk->ir;
	size_t lo, hi, i, j, left = 0;

	lo = b->off == NULL ? 0 : b->off[k < b->nfill ? k : b->nfill];
	hi = b->off == NULL ? 0 : b->off[k < b->nfill ? k + 1 : b->nfill];
	if (!bk->found) {
		bk->found = 1;
		for (i = lo; i < hi && bk->nw < IR_CHAIN; i++) {
			struct ir_want *w = &bk->w[bk->nw++];

			w->k.img = b->ch[i].img;
			w->k.inst = ir->h.img[w->k.img].r[b->ch[i].range].inst;
			w->range = b->ch[i].range;
			w->start = at;
			w->entry = b->ch[i].entry;
			w->done = 0;
		}
		return (bk->nw == 0);
	}
	for (j = 0; j < bk->nw; j++) {
		struct ir_want *w = &bk->w[j];

		if (w->done)
			continue;
		for (i = lo; i < hi; i++)
			if (b->ch[i].img == w->k.img && ir->h.img[b->ch[i].
			    img].r[b->ch[i].range].inst == w->k.inst)
				break;
		if (i == hi) {
			w->done = 1;
			continue;
		}
		w->range = b->ch[i].range;
		w->start = at;
		w->entry = b->ch[i].entry;
		left++;
	}
	return (left == 0);
}

/* Block @id at position @at, going back: 1 when nothing is left. */
static int
ir_back_block(struct ir_back *bk, int64_t id, int64_t at)
{
	const struct ir_blk *b;
	int64_t k;
	int stop = 0;

	if ((b = ir_blk(bk->ir, id)) == NULL)
		return (-HWTR_E_DB);
	if (b->off == NULL)
		return (ir_back_insn(bk, b, 0, at));
	k = b->ninsns - 1 < b->nfill ? b->ninsns - 1 : b->nfill;
	for (; !stop && k >= 0; k--)
		stop = ir_back_insn(bk, b, k, at + k);
	return (stop);
}

/*
 * Frame @id at depth @depth entered at block @entry: what ir_insn() would
 * have left of it before block @s (bk->w, bk->nw).
 */
static int
ir_back_frame(struct ir_back *bk, int64_t id, int64_t entry, int64_t depth,
    int64_t s)
{
	struct ir *ir = bk->ir;
	int64_t win = IR_BACK_MIN, s0 = s, lo, e, x, a, z, i;
	size_t n, last;
	int rc, stop = 0;

	bk->nw = 0;
	bk->found = 0;
	if (entry < 0)
		entry = 0;
	/* A depth with no depth below it: a damaged table; no runs. */
	if (depth < -1 || depth > INT64_MAX - 2)
		return (0);
	while (!stop && s > entry) {
		lo = s - entry > win ? s - win : entry;
		n = (size_t)(s - lo);
		if (win < IR_BACK_MAX)
			win *= 2;
		if (q_limit_poll(ir->q))
			return (q_fail(ir->q, -HWTR_E_LIMIT, "export: the "
			    "time limit"));
		if ((rc = ir_back_read(bk, lo, n)) < 0)
			return (rc);
		/*
		 * First its last block, when that is its own for sure: often
		 * the runs start there, and its callees need no search.
		 */
		last = n;
		if (s == s0 && bk->own[n - 1]) {
			if ((rc = ir_back_own(bk, id, depth, s - 1)) < 0)
				return (rc);
			if (rc == 1) {
				if ((stop = ir_back_block(bk, bk->blk[n - 1],
				    bk->insn[n - 1])) != 0)
					return (stop < 0 ? stop : 0);
				last = n - 1;
			}
		}
		/* The stretch less its callees': one entered before it, */
		e = x = -1;
		if (lo > entry && (rc = ir_back_straddle(bk, lo, depth + 1, &e,
		    &x)) < 0)
			return (rc);
		if (e >= 0)
			memset(bk->own, 0, (size_t)((x < s ? x : s) - lo));
		/* and those entered in it. */
		q_walk_rewind(&bk->cw, depth + 1, lo, s - 1);
		while ((rc = q_walk_step(&bk->cw)) == 1) {
			if (sqlite3_column_int64(bk->cw.st, 1) != depth + 1)
				continue;
			a = sqlite3_column_int64(bk->cw.st, 2);
			z = sqlite3_column_type(bk->cw.st, 3) == SQLITE_NULL ?
			    s : sqlite3_column_int64(bk->cw.st, 3);
			for (i = a < lo ? lo : a; i < z && i < s; i++)
				bk->own[i - lo] = 0;
		}
		if (rc < 0)
			return (rc);
		/* Its own instructions, last first. */
		for (i = (int64_t)last; !stop && i-- > 0; )
			if (bk->own[i] && (stop = ir_back_block(bk, bk->blk[i],
			    bk->insn[i])) < 0)
				return (stop);
		s = e >= 0 ? e : lo;
	}
	return (0);
}

/* The frames open at block @seq_lo, as a walk from block 0 leaves them. */
static int
ir_stack(struct ir *ir, int64_t thread, int64_t seq_lo)
{
	struct ir_back bk = { .ir = ir, .thread = thread };
	struct q_span *fr = NULL, bot = { -1, -1, 0, INT64_MAX };
	const struct q_span *f;
	size_t n = 0, i, j;
	int64_t s;
	int rc;

	if (seq_lo <= 0)
		return (ir_push(ir, -1, -1, INT64_MAX));
	if ((rc = q_walk_stack(ir->q, thread, seq_lo, INT64_MAX, &fr,
	    &n)) < 0 ||
	    (rc = q_prepare(ir->q, &bk.ex, "SELECT seq, block, insn FROM "
	    "exec_order WHERE thread = ?1 AND seq >= ?2 ORDER BY seq")) < 0 ||
	    (rc = q_prepare(ir->q, &bk.inner, Q_WALK_INNER)) < 0 ||
	    (rc = q_prepare(ir->q, &bk.up, "SELECT id, depth, entry_seq, "
	    "exit_seq, parent FROM calls WHERE id = ?1")) < 0 ||
	    (rc = q_walk_open(ir->q, &bk.cw, NULL, thread, 0, 0, -1)) < 0)
		goto out;
	/* Those the walk enters itself at @seq_lo are not its. */
	for (i = j = 0; i < n; i++)
		if (fr[i].entry_seq < seq_lo)
			fr[j++] = fr[i];
	n = j;
	/* Outermost (the thread's code outside calls) first. */
	for (i = n + 1; i-- > 0; ) {
		f = i == n ? &bot : &fr[i];
		s = i > 0 ? fr[i - 1].entry_seq : seq_lo;
		if ((rc = ir_back_frame(&bk, f->id, f->entry_seq, f->depth,
		    s)) < 0 ||
		    (rc = ir_push(ir, f->id, f->depth, f->exit_seq)) < 0)
			goto out;
		if (hwtr_grow(&ir->prev, &ir->capprev, ir->nprev + bk.nw,
		    sizeof(*ir->prev)) < 0 ||
		    hwtr_grow(&ir->open, &ir->capopen, ir->nopen + bk.nw,
		    sizeof(*ir->open)) < 0) {
			rc = q_fail(ir->q, -HWTR_E_NOMEM, "out of memory");
			goto out;
		}
		for (j = 0; j < bk.nw; j++) {
			ir->prev[ir->nprev++] = bk.w[j].k;
			if (!bk.w[j].entry)
				continue;
			ir->open[ir->nopen].k = bk.w[j].k;
			ir->open[ir->nopen].range = bk.w[j].range;
			ir->open[ir->nopen].start = bk.w[j].start;
			ir->nopen++;
		}
	}
out:
	q_walk_close(&bk.cw);
	sqlite3_finalize(bk.ex);
	sqlite3_finalize(bk.inner);
	sqlite3_finalize(bk.up);
	free(bk.blk);
	free(bk.insn);
	free(bk.own);
	free(fr);
	return (rc);
}

/* The walk over the execution order of q_inl_runs(). */
static int
ir_run(struct ir *ir, int64_t thread, int64_t seq_lo, int64_t seq_hi)
{
	struct q_walk w;
	struct q_span c;
	sqlite3_stmt *ex = NULL;
	const struct ir_blk *b = NULL;
	int64_t seq = 0, insn = 0, k;
	uint64_t work = 0;
	int have, rc;

	memset(&w, 0, sizeof(w));
	if ((rc = ir_stack(ir, thread, seq_lo)) < 0 ||
	    (rc = q_walk_open(ir->q, &w, NULL, thread, -1, seq_lo,
	    INT64_MAX)) < 0 ||
	    (rc = q_prepare(ir->q, &ex, "SELECT seq, block, insn FROM "
	    "exec_order WHERE thread = ?1 AND seq >= ?2")) < 0)
		goto out;
	sqlite3_bind_int64(ex, 1, thread);
	sqlite3_bind_int64(ex, 2, seq_lo);
	if ((have = ir_next_call(&w, &c)) < 0) {
		rc = have;
		goto out;
	}
	while ((rc = sqlite3_step(ex)) == SQLITE_ROW) {
		seq = sqlite3_column_int64(ex, 0);
		insn = sqlite3_column_int64(ex, 2);
		/* Past the end asked for, only to close what is open. */
		if (seq > seq_hi && ir->nopen == 0)
			break;
		while (ir->nfr > 1 && ir->fr[ir->nfr - 1].exit_seq <= seq)
			if ((rc = ir_pop(ir, insn)) < 0)
				goto out;
		while (have == 1 && c.entry_seq <= seq) {
			if (c.exit_seq > seq && (rc = ir_push(ir, c.id,
			    c.depth, c.exit_seq)) < 0)
				goto out;
			if ((have = ir_next_call(&w, &c)) < 0) {
				rc = have;
				goto out;
			}
		}
		if ((b = ir_blk(ir, sqlite3_column_int64(ex, 1))) == NULL) {
			rc = -HWTR_E_DB;
			goto out;
		}
		if (b->off == NULL) {
			/* No instance: all the frame's are left. */
			if ((rc = ir_insn(ir, b, 0, insn, 0)) < 0)
				goto out;
			continue;
		}
		/*
		 * An instruction past nfill has no chain: the first such
		 * closes what is open, the others would change nothing.
		 */
		for (k = 0; k < b->ninsns && k <= b->nfill; k++)
			if ((rc = ir_insn(ir, b, k, insn + k, seq <= seq_hi)) <
			    0)
				goto out;
		/* A walk of millions of blocks: the verb's time limit. */
		if (((work += (uint64_t)k) >> 16) != 0) {
			work = 0;
			if (q_limit_poll(ir->q)) {
				rc = q_fail(ir->q, -HWTR_E_LIMIT, "export: "
				    "the time limit");
				goto out;
			}
		}
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		rc = q_dbfail(ir->q, "export: cannot read exec_order");
		goto out;
	}
	/* The trace ended inside them: runs end after its last instruction. */
	if (rc == SQLITE_DONE && b != NULL)
		insn += b->ninsns;
	rc = 0;
	while (rc == 0 && ir->nfr > 1)
		rc = ir_pop(ir, insn);
	if (rc == 0)
		rc = ir_close(ir, insn, NULL, 0);
out:
	q_walk_close(&w);
	sqlite3_finalize(ex);
	return (rc);
}

int
q_inl_runs(struct hwtr_q *q, int64_t thread, int64_t seq_lo, int64_t seq_hi,
    int (*fn)(void *, const struct q_inl_run *), void *arg)
{
	struct ir ir = { .q = q, .fn = fn, .arg = arg };
	int rc;

	if (!q_inl_on(q))
		return (0);
	/* The blocks are kept in an array by id. */
	if ((rc = q_inl_hot_load(q, &ir.h)) < 0 ||
	    (rc = q_blocks_span(q, NULL, &ir.nbk)) < 0 ||
	    (rc = q_prepare(q, &ir.bst, "SELECT image, image_addr, ninsns, "
	    "insn_lens FROM blocks WHERE id = ?1")) < 0)
		goto out;
	if (ir.nbk < 1)
		ir.nbk = 1;
	if ((ir.bk = calloc((size_t)ir.nbk, sizeof(*ir.bk))) == NULL) {
		rc = q_fail(q, -HWTR_E_NOMEM, "out of memory");
		goto out;
	}
	rc = ir_run(&ir, thread, seq_lo, seq_hi);
out:
	ir_free(&ir);
	return (rc);
}
