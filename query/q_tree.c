/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The call tree, aggregated (tree), and as a Chrome/Perfetto trace
 * (export --perfetto).
 *
 * tree merges the invocations that share a call path (main/sum/sq) into one
 * node with a count, so that a loop calling sq a million times is one line;
 * children keep the order of their first call.  The calls table already
 * holds every invocation with its parent, so one pass in id order (parents
 * come before their children) builds the tree.
 */

#include <assert.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "q_int.h"

struct tnode {
	int64_t		thread;
	size_t		name;		/* offset in tree.names */
	uint64_t	hash;		/* of the name */
	size_t		parent;
	int64_t		depth;
	int64_t		count, insns, self, dur;
	int		dur_known;
	size_t		first, last, next;	/* children, sibling; 0: none */
};

/*
 * The nodes, their names, and a hash table from (parent, name) to the
 * child, so that finding where an invocation goes costs one probe however
 * many children its parent has.
 */
struct tree {
	struct tnode	*n;
	size_t		len, cap;
	struct q_str	names;
	size_t		*ht;		/* node index + 1; 0: empty */
	size_t		htcap;
};

#define TNAME(t, i)	((t)->names.p + (t)->n[i].name)

static size_t
tree_slot(const struct tree *t, size_t parent, uint64_t hash)
{
	return ((size_t)((hash ^ ((uint64_t)parent * 0x9e3779b97f4a7c15ULL)) >>
	    7) & (t->htcap - 1));
}

static int
tree_rehash(struct tree *t)
{
	size_t ncap = t->htcap ? t->htcap * 2 : 1024, i, k;
	size_t *nh, *oh = t->ht, ocap = t->htcap;

	if ((nh = calloc(ncap, sizeof(*nh))) == NULL)
		return (-1);
	t->ht = nh;
	t->htcap = ncap;
	for (i = 0; i < ocap; i++) {
		if (oh[i] == 0)
			continue;
		k = tree_slot(t, t->n[oh[i] - 1].parent, t->n[oh[i] - 1].hash);
		while (nh[k] != 0)
			k = (k + 1) & (ncap - 1);
		nh[k] = oh[i];
	}
	free(oh);
	return (0);
}

/* The child of @parent named @name (@len bytes, @hash), made if new. */
static size_t
tree_child(struct tree *t, size_t parent, int64_t thread, const char *name,
    size_t len, uint64_t hash, int64_t depth)
{
	struct tnode *nn;
	size_t ncap, i, k;

	if ((t->len + 1) * 2 > t->htcap && tree_rehash(t) < 0)
		return (SIZE_MAX);
	for (k = tree_slot(t, parent, hash); t->ht[k] != 0;
	    k = (k + 1) & (t->htcap - 1)) {
		i = t->ht[k] - 1;
		if (t->n[i].parent == parent && t->n[i].hash == hash &&
		    strcmp(TNAME(t, i), name) == 0)
			return (i);
	}
	if (t->len == t->cap) {
		ncap = t->cap ? t->cap * 2 : 256;
		if ((nn = realloc(t->n, ncap * sizeof(*nn))) == NULL)
			return (SIZE_MAX);
		t->n = nn;
		t->cap = ncap;
	}
	i = t->len;
	memset(&t->n[i], 0, sizeof(t->n[i]));
	t->n[i].thread = thread;
	t->n[i].depth = depth;
	t->n[i].parent = parent;
	t->n[i].hash = hash;
	t->n[i].name = t->names.len;
	q_str_add(&t->names, name, len);
	q_str_add(&t->names, "", 1);
	if (t->names.err)
		return (SIZE_MAX);
	t->len++;
	if (parent != (size_t)-1) {
		/* Children in order of their first call. */
		if (t->n[parent].first == 0)
			t->n[parent].first = i;
		else
			t->n[t->n[parent].last].next = i;
		t->n[parent].last = i;
		t->ht[k] = i + 1;
	}
	return (i);
}

static void
tree_free(struct tree *t)
{
	free(t->n);
	free(t->names.p);
	free(t->ht);
}

static int
tree_emit(struct hwtr_q *q, struct tree *t, size_t root,
    struct hwtr_q_res *res)
{
	size_t *stack, sp = 0, cap = 64, i, k;
	struct q_str path = { 0 }, ind = { 0 };
	size_t *plen;
	int rc = 0;

	stack = malloc(cap * sizeof(*stack));
	plen = malloc(cap * sizeof(*plen));
	if (stack == NULL || plen == NULL) {
		free(stack);
		free(plen);
		return (q_fail(q, -HWTR_E_NOMEM, "out of memory"));
	}
	/* Depth-first, children in order of their first call. */
	if (t->n[root].first != 0)
		stack[sp++] = t->n[root].first;
	q_str_add(&path, "", 0);
	while (sp > 0 && rc == 0) {
		struct tnode *n;
		size_t d;

		i = stack[--sp];
		n = &t->n[i];
		d = (size_t)n->depth;
		if (n->next != 0)
			stack[sp++] = n->next;
		if (d + 1 >= cap || sp + 2 >= cap) {
			size_t *ns, *np;

			cap *= 2;
			ns = realloc(stack, cap * sizeof(*stack));
			if (ns != NULL)
				stack = ns;
			np = realloc(plen, cap * sizeof(*plen));
			if (np != NULL)
				plen = np;
			if (ns == NULL || np == NULL) {
				rc = q_fail(q, -HWTR_E_NOMEM, "out of memory");
				break;
			}
		}
		/* The path of this node: its parent's path plus its name. */
		path.len = d == 0 ? 0 : plen[d - 1];
		if (d > 0)
			q_str_add(&path, "/", 1);
		q_str_puts(&path, TNAME(t, i));
		plen[d] = path.len;
		ind.len = 0;
		for (k = 0; k < d; k++)
			q_str_add(&ind, "  ", 2);
		q_str_puts(&ind, TNAME(t, i));
		if (path.err || ind.err) {
			rc = q_fail(q, -HWTR_E_NOMEM, "out of memory");
			break;
		}
		rc = q_res_push_int(res, n->thread);
		rc |= q_res_push_int(res, n->depth);
		rc |= q_res_push(res, HWTR_Q_TEXT, ind.p);
		rc |= q_res_push_int(res, n->count);
		rc |= q_res_push_int(res, n->insns);
		rc |= q_res_push_int(res, n->self);
		if (n->dur_known)
			rc |= q_res_push_int(res, n->dur);
		else
			rc |= q_res_push(res, HWTR_Q_NULL, NULL);
		rc |= q_res_push(res, HWTR_Q_TEXT, path.p);
		if (rc != 0)
			rc = q_fail(q, -HWTR_E_NOMEM, "out of memory");
		else
			rc = q_res_row_end(q, res);
		if (n->first != 0)
			stack[sp++] = n->first;
	}
	free(stack);
	free(plen);
	free(path.p);
	free(ind.p);
	return (rc);
}

/*
 * Inlined frames on call paths: a call made from code inlined into its
 * caller passes through one node per inlined function around its call
 * instruction (q_inline.c), outermost first, named "NAME (inlined)" as
 * perf report --inline names them.  The chains are cached by call
 * address: a tree has few call sites and many calls.
 */
#define TINL_SLOTS	1024
#define TINL_MARK	" (inlined)"

struct tinl_ent {
	uint64_t	ip;
	int		used;
	size_t		n;		/* frames */
	char		*names;		/* n strings, innermost first */
};

struct tinl {
	int		on;
	sqlite3_stmt	*st;
	struct tinl_ent	*e;		/* TINL_SLOTS */
};

static void
tinl_free(struct tinl *ti)
{
	size_t i;

	if (ti->e != NULL)
		for (i = 0; i < TINL_SLOTS; i++)
			free(ti->e[i].names);
	free(ti->e);
	sqlite3_finalize(ti->st);
}

static struct tinl_ent *
tinl_get(struct hwtr_q *q, struct tinl *ti, uint64_t ip)
{
	struct q_inl_frame ch[HWTR_DB_INLINE_DEPTH];
	struct tinl_ent *e;
	struct q_str s = { 0 };
	size_t n = 0, i;

	if (ti->e == NULL &&
	    (ti->e = calloc(TINL_SLOTS, sizeof(*ti->e))) == NULL) {
		q_fail(q, -HWTR_E_NOMEM, "out of memory");
		return (NULL);
	}
	e = &ti->e[(ip * 0x9e3779b97f4a7c15ULL) >> 54];
	if (e->used && e->ip == ip)
		return (e);
	if (q_inl_chain(q, &ti->st, ip, ch, HWTR_NELEM(ch), &n) < 0) {
		q_inl_chain_free(ch, n);
		return (NULL);
	}
	for (i = 0; i < n; i++) {
		q_str_puts(&s, ch[i].name);
		q_str_puts(&s, TINL_MARK);
		q_str_add(&s, "", 1);
	}
	q_inl_chain_free(ch, n);
	if (s.err) {
		free(s.p);
		q_fail(q, -HWTR_E_NOMEM, "out of memory");
		return (NULL);
	}
	free(e->names);
	e->names = s.p;
	e->n = n;
	e->ip = ip;
	e->used = 1;
	return (e);
}

/*
 * Add @count calls to node @n with the instructions, own instructions and
 * duration (NULL: not known) in columns @col to @col + 2 of @st.  A
 * damaged or hostile database may hold any value: a sum past 2^63 is
 * refused, not wrapped, naming @what @id.  0, or an error (q->msg).
 */
static int
tnode_add(struct hwtr_q *q, struct tnode *n, int64_t count,
    sqlite3_stmt *st, int col, const char *what, int64_t id)
{
	int has_dur = sqlite3_column_type(st, col + 2) != SQLITE_NULL;

	if (__builtin_add_overflow(n->count, count, &n->count) ||
	    __builtin_add_overflow(n->insns, sqlite3_column_int64(st, col),
	    &n->insns) || __builtin_add_overflow(n->self,
	    sqlite3_column_int64(st, col + 1), &n->self) || (has_dur &&
	    __builtin_add_overflow(n->dur, sqlite3_column_int64(st, col + 2),
	    &n->dur)))
		return (q_fail(q, -HWTR_E_FORMAT, "%s %lld: its count, "
		    "instructions or duration are out of range (a damaged "
		    "database?)", what, (long long)id));
	if (has_dur)
		n->dur_known = 1;
	return (0);
}

/*
 * The node under @parent that a call made at @ip goes under: @parent, or
 * its innermost inlined frame there.  The inlined frames passed count the
 * @ncalls calls, their @insns instructions and their duration: column
 * @dcol of @st (NULL: not known).  SIZE_MAX: an error (q->msg).
 */
static size_t
tinl_path(struct hwtr_q *q, struct tinl *ti, struct tree *t, size_t parent,
    int64_t thread, uint64_t ip, int64_t ncalls, int64_t insns,
    sqlite3_stmt *st, int dcol)
{
	int has_dur = sqlite3_column_type(st, dcol) != SQLITE_NULL;
	int64_t dur = sqlite3_column_int64(st, dcol);
	const struct tinl_ent *e;
	const char *nm[32];
	const char *p;
	size_t i, len;

	if ((e = tinl_get(q, ti, ip)) == NULL)
		return (SIZE_MAX);
	assert(e->n <= HWTR_NELEM(nm));
	for (i = 0, p = e->names; i < e->n; i++, p += strlen(p) + 1)
		nm[i] = p;
	for (i = e->n; i > 0; i--) {
		len = strlen(nm[i - 1]);
		parent = tree_child(t, parent, thread, nm[i - 1], len,
		    q_hash(nm[i - 1], len), t->n[parent].depth + 1);
		if (parent == SIZE_MAX) {
			q_fail(q, -HWTR_E_NOMEM, "out of memory");
			return (SIZE_MAX);
		}
		if (__builtin_add_overflow(t->n[parent].count, ncalls,
		    &t->n[parent].count) || __builtin_add_overflow(
		    t->n[parent].insns, insns, &t->n[parent].insns) ||
		    (has_dur && __builtin_add_overflow(t->n[parent].dur, dur,
		    &t->n[parent].dur))) {
			q_fail(q, -HWTR_E_FORMAT, "calls at %#llx: their count, "
			    "instructions or duration are out of range (a "
			    "damaged database?)", (unsigned long long)ip);
			return (SIZE_MAX);
		}
		if (has_dur)
			t->n[parent].dur_known = 1;
	}
	return (parent);
}

/*
 * The open calls of the thread being read, outermost first: the rows come
 * in entry order, the call tree depth first, so a call's caller, when the
 * tree read it, is one of them.  Their depths increase, so there are at
 * most as many as the deepest nesting: the heap does not grow with the
 * number of calls (a map from every id to its node did, 8 bytes a call).
 */
struct topen {
	int64_t		id, depth;
	size_t		node;
};

struct tstack {
	struct topen	*o;
	size_t		n, cap;
};

/*
 * The node of the caller @pid (if @has_pid) of a call @depth deep, @root
 * if the tree did not read it; the calls that returned before it leave @s.
 */
static size_t
tstack_parent(struct tstack *s, int has_pid, int64_t pid, int64_t depth,
    size_t root)
{
	size_t i;

	while (s->n > 0 && s->o[s->n - 1].depth >= depth)
		s->n--;
	for (i = s->n; has_pid && i > 0; i--)
		if (s->o[i - 1].id == pid)
			return (s->o[i - 1].node);
	return (root);
}

static int
tstack_push(struct tstack *s, int64_t id, int64_t depth, size_t node)
{
	if (hwtr_grow(&s->o, &s->cap, s->n + 1, sizeof(*s->o)) < 0)
		return (-1);
	assert(s->n == 0 || s->o[s->n - 1].depth < depth);
	s->o[s->n].id = id;
	s->o[s->n].depth = depth;
	s->o[s->n].node = node;
	s->n++;
	return (0);
}

/* Names come from a cache of symbols by id, not a join per call. */
#define Q_TREE_LIST							\
	"c.id, c.thread, c.parent, c.depth, c.symbol, "			\
	"c.func_ip, c.insns, c.self_insns, c.exit_ns - c.entry_ns, "	\
	"c.call_ip "
#define Q_TREE_COLS	"SELECT " Q_TREE_LIST "FROM calls c "

/*
 * The rows tree reads: one statement, or (--depth below the roots) a
 * walk per thread of @th, the threads one after the other.
 */
struct tree_src {
	int		walk;
	sqlite3_stmt	*st, *th;
	struct q_walk	w;
	int64_t		depth, seq_lo, seq_hi, ilo, ihi;
	int		relative;	/* --depth below the range's roots */
};

static int
tree_src_step(struct hwtr_q *q, struct tree_src *ts)
{
	int rc;

	if (!ts->walk)
		return (sqlite3_step(ts->st));
	for (;;) {
		if (ts->w.st != NULL) {
			if ((rc = q_walk_step(&ts->w)) == 1) {
				ts->st = ts->w.st;
				return (SQLITE_ROW);
			}
			q_walk_close(&ts->w);
			if (rc < 0)
				return (SQLITE_ERROR);
		}
		if ((rc = sqlite3_step(ts->th)) != SQLITE_ROW)
			return (rc);
		if (q_walk_open(q, &ts->w, Q_TREE_LIST,
		    sqlite3_column_int64(ts->th, 0), ts->depth, ts->seq_lo,
		    ts->seq_hi) < 0)
			return (SQLITE_ERROR);
		q_walk_insns(&ts->w, ts->ilo, ts->ihi);
		if (ts->relative)
			q_walk_relative(&ts->w, ts->depth);
	}
}

/*
 * The ids of the calls tree reads, [*lop, *hip] (empty when *hip < *lop),
 * and *threadp, the thread they are of (-1: all).
 */
static int
tree_ids(struct hwtr_q *q, const struct hwtr_q_req *req,
    const struct q_rng *r, int64_t *lop, int64_t *hip, int64_t *threadp)
{
	int rc;

	*threadp = req->thread;
	if (r->on) {
		/*
		 * A range: the calls entered in its blocks, a range of ids of
		 * the thread (ids follow entry order); a call whose caller is
		 * outside is a root of the tree.
		 */
		*threadp = r->thread;
		if ((rc = q_int(q, lop, INT64_MAX, Q_CALL_FIRST_FROM, "ii",
		    r->thread, r->seq_lo)) < 0 ||
		    (rc = q_int(q, hip, -1, Q_CALL_LAST_UPTO, "ii", r->thread,
		    r->seq_hi)) < 0)
			return (rc);
		if (r->seq_hi < r->seq_lo)
			*hip = *lop - 1;
		return (0);
	}
	/*
	 * Ids follow (thread, entry position): the ends come from the entry
	 * order.
	 */
	if (req->thread >= 0)
		rc = q_int(q, lop, 0, "SELECT id FROM calls WHERE thread = ?1 "
		    "ORDER BY entry_seq, id LIMIT 1", "i", req->thread);
	else
		rc = q_int(q, lop, 0, "SELECT id FROM calls ORDER BY id "
		    "LIMIT 1", NULL);
	if (rc < 0)
		return (rc);
	if (req->thread >= 0)
		rc = q_int(q, hip, -1, "SELECT id FROM calls WHERE thread = ?1 "
		    "ORDER BY entry_seq DESC, id DESC LIMIT 1", "i",
		    req->thread);
	else
		rc = q_int(q, hip, -1, "SELECT max(id) FROM calls", NULL);
	return (rc < 0 ? rc : 0);
}

/*
 * The rows of calls @lo..@hi of thread @rthread (-1: all) that tree reads,
 * as @ts gives them (*stp: its statement when it is one, the caller's to
 * finalize).  Parents come before their children in id order.  The roots
 * alone come a lookup each (Q_CALLS_ROOTS, as in q_calls); deeper trees
 * scan, for one thread only the range of its ids.
 */
static int
tree_src_open(struct hwtr_q *q, const struct hwtr_q_req *req,
    const struct q_rng *r, int64_t rthread, int64_t lo, int64_t hi,
    struct tree_src *ts, sqlite3_stmt **stp)
{
	sqlite3_stmt *st = NULL;
	int rc;

	*stp = NULL;
	if (req->depth > 0 || (req->depth == 0 && r->on)) {
		/*
		 * Below the roots: each thread walked at most --depth deep
		 * (q_walk.c), never reading the calls deeper.  A range's
		 * roots are the tree's, and --depth counts from them.
		 */
		ts->walk = 1;
		ts->depth = req->depth;
		if (r->on) {
			ts->seq_lo = r->seq_lo;
			ts->seq_hi = r->seq_hi;
			ts->ilo = r->insn_lo;
			ts->ihi = r->insn_hi;
			ts->relative = 1;
		}
		rc = q_prepare(q, &ts->th, "SELECT id FROM threads WHERE "
		    "?1 < 0 OR id = ?1 ORDER BY id");
		if (rc == 0)
			sqlite3_bind_int64(ts->th, 1, rthread);
		return (rc);
	} else if (req->depth == 0 && !r->on)
		rc = q_prepare(q, &st, Q_CALLS_ROOTS Q_TREE_COLS
		    "WHERE c.id IN (SELECT id FROM sel) AND c.depth <= ?2 "
		    "ORDER BY c.id");
	else if (r->on)
		rc = q_prepare(q, &st, Q_TREE_COLS Q_TREE_RANGE_WHERE);
	else if (rthread >= 0)
		rc = q_prepare(q, &st, Q_TREE_COLS "WHERE c.id BETWEEN ?3 "
		    "AND ?4 AND c.thread = ?1 AND c.depth <= ?2 ORDER BY c.id");
	else
		rc = q_prepare(q, &st, Q_TREE_COLS "WHERE ?1 < 0 AND "
		    "c.depth <= ?2 ORDER BY c.id");
	*stp = st;
	if (rc < 0)
		return (rc);
	sqlite3_bind_int64(st, 1, rthread);
	sqlite3_bind_int64(st, 2, req->depth >= 0 ? req->depth : INT64_MAX);
	if (sqlite3_bind_parameter_count(st) >= 4) {
		/* One thread's ids, a range of the table (see above). */
		sqlite3_bind_int64(st, 3, lo);
		sqlite3_bind_int64(st, 4, hi);
	}
	if (r->on) {
		sqlite3_bind_int64(st, 5, r->insn_lo);
		sqlite3_bind_int64(st, 6, r->insn_hi);
	}
	return (0);
}

/*
 * Whether call_paths (indexer/colpath.c) holds every call (its number of
 * rows, else 0): it is absent
 * from databases written before it, and empty when the indexer found too
 * many paths; calls written with SQL (calls_rows) are not in it.  Its
 * ids are 1..N as the indexer numbers them (tree_paths() maps them in an
 * array); a table that is not so was not written by hwtrace and is not
 * read.
 */
static int
tree_paths_on(struct hwtr_q *q)
{
	int64_t n = 0;
	int rc;

	if ((rc = q_int(q, &n, 0, "SELECT count(*) FROM sqlite_master WHERE "
	    "type = 'table' AND name = 'call_paths'", NULL)) < 0 || n == 0)
		return (rc);
	if ((rc = q_int(q, &n, 0, "SELECT CASE WHEN (SELECT sum(calls) FROM "
	    "call_paths) = (SELECT sum(n) FROM calls_pages) AND (SELECT "
	    "max(id) = count(*) AND min(id) = 1 FROM call_paths) AND NOT "
	    "EXISTS (SELECT 1 FROM calls_rows) THEN (SELECT count(*) FROM "
	    "call_paths) ELSE 0 END", NULL)) < 0)
		return (rc);
	return (n > 0 && n < INT_MAX ? (int)n : 0);
}

/* Where tree puts what it reads: the tree, its roots, the names. */
struct tree_out {
	struct tree	*t;
	size_t		*roots, nroots, rcap;
	struct q_names	*names;
	struct tinl	*ti;
};

/*
 * The name of the symbol in column @col of @st, or when it has none the
 * address in column @col + 1 written in hex into @hex (24 bytes): into
 * *@namep, *@lenp and *@hashp.  -HWTR_E_DB when the name is not there.
 */
static int
row_name(struct hwtr_q *q, struct q_names *names, sqlite3_stmt *st, int col,
    char *hex, const char **namep, size_t *lenp, uint64_t *hashp)
{
	const struct q_name *nm = NULL;

	if (sqlite3_column_type(st, col) != SQLITE_NULL &&
	    (nm = q_name_get(q, names, sqlite3_column_int64(st, col))) == NULL)
		return (-HWTR_E_DB);
	if (nm != NULL && nm->name != NULL) {
		*namep = nm->name;
		*lenp = nm->len;
		*hashp = nm->hash;
	} else {
		*lenp = q_fmt_hex(hex, (uint64_t)sqlite3_column_int64(st,
		    col + 1));
		*namep = hex;
		*hashp = q_hash(hex, *lenp);
	}
	return (0);
}

/*
 * The tree of every call of thread @rthread (-1: all) at most --depth
 * deep from call_paths: each row a path's calls at once, in the order of
 * the paths' first calls, so that the nodes (the paths merged by name)
 * come in the order tree's one row per call gives them.  A path's
 * caller is an earlier row: @map takes a row id to its node.
 */
static int
tree_paths(struct hwtr_q *q, const struct hwtr_q_req *req, int64_t rthread,
    int64_t npaths, struct tree_out *to)
{
	struct tree *t = to->t;
	sqlite3_stmt *st = NULL;
	size_t *map = NULL, mcap = 0, ocap, root = 0, parent, node, len;
	int64_t id, pid, thread, cur = -1, calls;
	const char *name;
	char hex[24];
	uint64_t hash;
	int rc;

	if ((rc = q_prepare(q, &st, "SELECT id, thread, parent, symbol, "
	    "func_ip, call_ip, calls, insns, self_insns, duration_ns FROM "
	    "call_paths WHERE (?1 < 0 OR thread = ?1) AND depth <= ?2 "
	    "ORDER BY id")) < 0)
		return (rc);
	sqlite3_bind_int64(st, 1, rthread);
	sqlite3_bind_int64(st, 2, req->depth >= 0 ? req->depth : INT64_MAX);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		id = sqlite3_column_int64(st, 0);
		thread = sqlite3_column_int64(st, 1);
		if (id < 1 || id > npaths) {
			rc = q_fail(q, -HWTR_E_FORMAT, "call_paths: id %lld "
			    "is not in 1..%lld", (long long)id,
			    (long long)npaths);
			goto out;
		}
		if ((rc = row_name(q, to->names, st, 3, hex, &name, &len,
		    &hash)) < 0)
			goto out;
		if (thread != cur) {
			/* A pseudo root per thread holds its roots. */
			root = tree_child(t, (size_t)-1, thread, "", 0, 0, -1);
			if (root == SIZE_MAX || hwtr_grow(&to->roots,
			    &to->rcap, to->nroots + 1, sizeof(*to->roots)) < 0)
				goto nomem;
			to->roots[to->nroots++] = root;
			cur = thread;
		}
		/* The caller's path came before (colpath.c). */
		parent = root;
		pid = sqlite3_column_int64(st, 2);
		if (sqlite3_column_type(st, 2) != SQLITE_NULL && pid > 0 &&
		    pid < id && (size_t)pid < mcap && map[pid] != 0)
			parent = map[pid] - 1;
		calls = sqlite3_column_int64(st, 6);
		/* A root's call site is its caller's: no frames of it here. */
		if (to->ti->on && parent != root &&
		    sqlite3_column_type(st, 5) != SQLITE_NULL &&
		    (parent = tinl_path(q, to->ti, t, parent, thread,
		    (uint64_t)sqlite3_column_int64(st, 5), calls,
		    sqlite3_column_int64(st, 7), st, 9)) == SIZE_MAX) {
			rc = -HWTR_E_DB;	/* q->msg says what */
			goto out;
		}
		ocap = mcap;
		if ((node = tree_child(t, parent, thread, name, len, hash,
		    t->n[parent].depth + 1)) == SIZE_MAX ||
		    hwtr_grow(&map, &mcap, (size_t)id + 1,
		    sizeof(*map)) < 0)
			goto nomem;
		if (mcap > ocap)
			memset(map + ocap, 0, (mcap - ocap) * sizeof(*map));
		map[id] = node + 1;
		if ((rc = tnode_add(q, &t->n[node], calls, st, 7,
		    "call_paths: path", id)) < 0)
			goto out;
	}
	rc = rc == SQLITE_DONE ? 0 : q_dbfail(q, "tree: cannot read "
	    "call_paths");
	goto out;
nomem:
	rc = q_fail(q, -HWTR_E_NOMEM, "out of memory");
out:
	sqlite3_finalize(st);
	free(map);
	return (rc);
}

int
q_tree(struct hwtr_q *q, const struct hwtr_q_req *req,
    struct hwtr_q_res **resp)
{
	static const char *const cols[] = { "thread", "depth", "function",
	    "calls", "insns", "self_insns", "duration_ns", "path" };
	struct tree t = { 0 };
	struct hwtr_q_res *res = NULL;
	sqlite3_stmt *st = NULL;
	size_t node, parent, c, root = 0;
	int64_t lo, hi, id, thread, cur = -1, depth, cdepth;
	size_t *roots = NULL, nroots = 0, rcap = 0, len;
	struct tstack open = { 0 };
	struct q_names names = { 0 };
	const char *name;
	char hex[24];
	uint64_t hash;
	struct q_rng r;
	struct tree_src ts;
	struct tinl ti = { 0 };
	int64_t rthread = req->thread;
	int rc;

	*resp = NULL;
	memset(&ts, 0, sizeof(ts));
	ti.on = q_inl_on(q);
	ts.seq_hi = INT64_MAX;
	ts.ilo = INT64_MIN;
	ts.ihi = INT64_MAX;
	if (req->thread >= 0 && (rc = q_check_thread(q, req->thread)) < 0)
		return (rc);
	if ((rc = q_range(q, req, "tree", &r)) < 0)
		return (rc);
	if ((rc = tree_ids(q, req, &r, &lo, &hi, &rthread)) < 0)
		return (rc);
	if ((rc = q_res_new(&res, HWTR_NELEM(cols), cols)) < 0)
		return (q_fail(q, rc, "out of memory"));
	q_res_stream(q, res);
	if (hi < lo) {
		*resp = res;
		return (0);
	}
	/* Node 0 stands for "none" in first/next: a placeholder. */
	if (tree_child(&t, (size_t)-1, -1, "", 0, 0, -1) == SIZE_MAX) {
		rc = q_fail(q, -HWTR_E_NOMEM, "out of memory");
		goto out;
	}
	/* The whole tree, or below the roots: a row per path (colpath.c). */
	if (req->depth != 0 && !r.on && (rc = tree_paths_on(q)) != 0) {
		struct tree_out to = { &t, NULL, 0, 0, &names, &ti };

		if (rc > 0)
			rc = tree_paths(q, req, rthread, rc, &to);
		roots = to.roots;
		nroots = to.nroots;
		if (rc < 0)
			goto out;
		goto emit;
	}
	if ((rc = tree_src_open(q, req, &r, rthread, lo, hi, &ts, &st)) < 0)
		goto out;
	ts.st = st;
	while ((rc = tree_src_step(q, &ts)) == SQLITE_ROW) {
		sqlite3_stmt *rs = ts.st;
		int k = ts.walk ? 4 : 0;

		id = sqlite3_column_int64(rs, k + 0);
		thread = sqlite3_column_int64(rs, k + 1);
		if ((rc = row_name(q, &names, rs, k + 4, hex, &name, &len,
		    &hash)) < 0)
			goto out;
		if (thread != cur) {
			/* A pseudo root per thread holds its roots. */
			root = tree_child(&t, (size_t)-1, thread, "", 0, 0, -1);
			if (root == SIZE_MAX || hwtr_grow(&roots, &rcap,
			    nroots + 1, sizeof(*roots)) < 0)
				goto nomem;
			roots[nroots++] = root;
			cur = thread;
			open.n = 0;
		}
		/* The call's caller: among the calls still open. */
		cdepth = sqlite3_column_int64(rs, k + 3);
		parent = tstack_parent(&open, sqlite3_column_type(rs, k + 2) !=
		    SQLITE_NULL, sqlite3_column_int64(rs, k + 2), cdepth, root);
		if (id >= lo && id <= hi && tstack_push(&open, id, cdepth,
		    SIZE_MAX) < 0)
			goto nomem;
		/*
		 * The frames inlined around the call instruction are the
		 * caller's: a root's caller is not in the tree (it began
		 * before the range, or before the trace), nor are they.
		 */
		if (ti.on && parent != root &&
		    sqlite3_column_type(rs, k + 9) != SQLITE_NULL &&
		    (parent = tinl_path(q, &ti, &t, parent, thread,
		    (uint64_t)sqlite3_column_int64(rs, k + 9), 1,
		    sqlite3_column_int64(rs, k + 6), rs, k + 8)) == SIZE_MAX) {
			rc = -HWTR_E_DB;	/* q->msg says what */
			goto out;
		}
		depth = t.n[parent].depth + 1;
		if ((node = tree_child(&t, parent, thread, name, len, hash,
		    depth)) == SIZE_MAX)
			goto nomem;
		if (id >= lo && id <= hi)
			open.o[open.n - 1].node = node;
		if ((rc = tnode_add(q, &t.n[node], 1, rs, k + 6, "calls: call",
		    id)) < 0)
			goto out;
	}
	if (rc != SQLITE_DONE) {
		rc = q_dbfail(q, "tree: cannot read calls");
		goto out;
	}
emit:
	rc = 0;
	for (c = 0; c < nroots && rc == 0; c++)
		rc = tree_emit(q, &t, roots[c], res);
	if (rc == 0) {
		*resp = res;
		res = NULL;
	}
	goto out;
nomem:
	rc = q_fail(q, -HWTR_E_NOMEM, "out of memory");
out:
	q_walk_close(&ts.w);
	sqlite3_finalize(ts.th);
	sqlite3_finalize(st);
	q_names_free(&names);
	hwtr_q_res_free(res);
	tree_free(&t);
	tinl_free(&ti);
	free(open.o);
	free(roots);
	return (rc);
}

/*
 * Member @key: microseconds with nanosecond decimals, as the trace event
 * format wants.
 */
static void
ex_us(struct hwtr_jw *w, const char *key, int64_t ns)
{
	/* The magnitude unsigned: INT64_MIN has none as an int64_t. */
	uint64_t m = ns < 0 ? -(uint64_t)ns : (uint64_t)ns;

	hwtr_jw_key(w, key);
	hwtr_jw_numf(w, "%s%llu.%03llu", ns < 0 ? "-" : "",
	    (unsigned long long)(m / 1000), (unsigned long long)(m % 1000));
}

/* Member "estimated" when the times are the trace's (@use_ns). */
static void
ex_est(int use_ns, struct hwtr_jw *w, int est)
{
	if (!use_ns)
		return;
	hwtr_jw_key(w, "estimated");
	hwtr_jw_bool(w, est);
}

/* Hand @o's text to @wf once it holds a block's worth. */
static int
ex_flush(struct hwtr_q *q, struct q_wfile *wf, struct q_str *o, int force)
{
	int rc;

	if (o->err)
		return (q_fail(q, -HWTR_E_NOMEM, "out of memory"));
	if (!force && o->len < (1u << 20))
		return (0);
	rc = q_wf_write(q, wf, o->p, o->len);
	o->len = 0;
	return (rc);
}

/* The columns of a slice, after q_walk's four (calls c). */
#define EX_COLS								\
	"id, depth, symbol, func_ip, entry_insn, exit_insn, insns, "	\
	"self_insns, hwtr_time_at(thread, entry_insn), hwtr_time_at(thread, "	\
	"exit_insn), hwtr_time_estimated(thread, entry_insn) OR "	\
	"hwtr_time_estimated(thread, exit_insn)"

struct ex {
	struct hwtr_q	*q;
	struct q_str	o;
	struct hwtr_jw	w;		/* the JSON, into @o */
	struct q_wfile	wf;
	struct q_names	names;
	int64_t		t0, from, to, ilo, ihi, mindur, nev;
	int		use_ns;
	/* Inlined slices: the database has inlines; the thread's. */
	int		inl;
	sqlite3_stmt	*tm;
	int64_t		thread, pid, tid, maxdepth;
};

/*
 * One slice from the row of @st (EX_COLS from column @k) of thread
 * @pid/@tid, unless it ends before the window or starts after it (1: a
 * call entered after the window: the thread is done), or is shorter than
 * --min-dur.
 */
static int
ex_slice(struct ex *e, sqlite3_stmt *st, int k, int64_t pid, int64_t tid)
{
	int64_t tb, te, ei = sqlite3_column_int64(st, k + 4);
	int64_t xi = sqlite3_column_int64(st, k + 5);
	const struct q_name *nm = NULL;
	struct hwtr_jw *w = &e->w;
	char hex[24];
	int est = 0;

	if (ei > e->ihi)
		return (1);
	if (xi <= e->ilo)
		return (0);	/* exit_insn is the first instruction after */
	if (e->use_ns && sqlite3_column_type(st, k + 8) != SQLITE_NULL) {
		tb = q_sat_sub(sqlite3_column_int64(st, k + 8), e->t0);
		te = q_sat_sub(sqlite3_column_int64(st, k + 9), e->t0);
		est = sqlite3_column_int(st, k + 10);
	} else {
		tb = ei;
		te = xi;
	}
	if (tb > e->to)
		return (1);		/* entries only come later */
	if (te < e->from || q_sat_sub(te, tb) < e->mindur)
		return (0);
	if (sqlite3_column_type(st, k + 2) != SQLITE_NULL &&
	    (nm = q_name_get(e->q, &e->names, sqlite3_column_int64(st,
	    k + 2))) == NULL)
		return (-HWTR_E_NOMEM);
	e->nev++;
	hwtr_jw_ws(w, "\n");
	hwtr_jw_obj(w);
	if (nm != NULL && nm->name != NULL)
		hwtr_jw_kstr(w, "name", nm->name);
	else {
		snprintf(hex, sizeof(hex), "%#llx", (unsigned long long)
		    sqlite3_column_int64(st, k + 3));
		hwtr_jw_kstr(w, "name", hex);
	}
	hwtr_jw_kstr(w, "cat", "call");
	hwtr_jw_kstr(w, "ph", "X");
	hwtr_jw_ki64(w, "pid", pid);
	hwtr_jw_ki64(w, "tid", tid);
	ex_us(w, "ts", tb);
	ex_us(w, "dur", q_sat_sub(te, tb));
	hwtr_jw_key(w, "args");
	hwtr_jw_obj(w);
	hwtr_jw_ki64(w, "call", sqlite3_column_int64(st, k));
	hwtr_jw_ki64(w, "depth", sqlite3_column_int64(st, k + 1));
	hwtr_jw_ki64(w, "insns", sqlite3_column_int64(st, k + 6));
	hwtr_jw_ki64(w, "self_insns", sqlite3_column_int64(st, k + 7));
	hwtr_jw_ki64(w, "entry_insn", ei);
	hwtr_jw_ki64(w, "exit_insn", xi);
	ex_est(e->use_ns, w, est);
	hwtr_jw_end(w);
	hwtr_jw_end(w);
	return (ex_flush(e->q, &e->wf, &e->o, 0));
}

/*
 * A slice of a run of an inlined instance (q_inl_runs(): from an entry
 * into it to where its frame leaves it), inside its frame's call slice,
 * as perf report --inline names it: "NAME (inlined)", category "inline",
 * args.inlined true.  The same window, --min-dur and --max-depth (of its
 * frame) as the calls.
 */
static int
ex_inl_slice(void *arg, const struct q_inl_run *r)
{
	struct ex *e = arg;
	struct hwtr_jw *w = &e->w;
	int64_t tb = r->entry_insn, te = r->exit_insn;
	char *name;
	int est = 0, rc;

	if (r->depth > e->maxdepth || tb > e->ihi || te <= e->ilo)
		return (0);	/* as a call's, the end is the one after */
	if (e->use_ns) {
		if (e->tm == NULL && (rc = q_prepare(e->q, &e->tm, "SELECT "
		    "hwtr_time_at(?1, ?2), hwtr_time_at(?1, ?3), "
		    "hwtr_time_estimated(?1, ?2) OR hwtr_time_estimated(?1, "
		    "?3)")) < 0)
			return (rc);
		sqlite3_reset(e->tm);
		sqlite3_bind_int64(e->tm, 1, e->thread);
		sqlite3_bind_int64(e->tm, 2, r->entry_insn);
		sqlite3_bind_int64(e->tm, 3, r->exit_insn);
		if (sqlite3_step(e->tm) != SQLITE_ROW)
			return (q_dbfail(e->q, "export: cannot read times"));
		if (sqlite3_column_type(e->tm, 0) != SQLITE_NULL &&
		    sqlite3_column_type(e->tm, 1) != SQLITE_NULL) {
			tb = q_sat_sub(sqlite3_column_int64(e->tm, 0), e->t0);
			te = q_sat_sub(sqlite3_column_int64(e->tm, 1), e->t0);
			est = sqlite3_column_int(e->tm, 2);
		}
	}
	if (tb > e->to || te < e->from || q_sat_sub(te, tb) < e->mindur)
		return (0);
	if ((name = malloc(strlen(r->name) + sizeof(TINL_MARK))) == NULL)
		return (q_fail(e->q, -HWTR_E_NOMEM, "out of memory"));
	strcpy(name, r->name);
	strcat(name, TINL_MARK);
	e->nev++;
	hwtr_jw_ws(w, "\n");
	hwtr_jw_obj(w);
	hwtr_jw_kstr(w, "name", name);
	free(name);
	hwtr_jw_kstr(w, "cat", "inline");
	hwtr_jw_kstr(w, "ph", "X");
	hwtr_jw_ki64(w, "pid", e->pid);
	hwtr_jw_ki64(w, "tid", e->tid);
	ex_us(w, "ts", tb);
	ex_us(w, "dur", q_sat_sub(te, tb));
	hwtr_jw_key(w, "args");
	hwtr_jw_obj(w);
	hwtr_jw_key(w, "inlined");
	hwtr_jw_bool(w, 1);
	hwtr_jw_kstr(w, "function", r->name);
	hwtr_jw_kstr(w, "call_site", r->site);
	if (r->call >= 0) {
		hwtr_jw_ki64(w, "call", r->call);
		hwtr_jw_ki64(w, "depth", r->depth);
	}
	hwtr_jw_ki64(w, "inline_depth", r->level);
	hwtr_jw_ki64(w, "entry_insn", r->entry_insn);
	hwtr_jw_ki64(w, "exit_insn", r->exit_insn);
	ex_est(e->use_ns, w, est);
	hwtr_jw_end(w);
	hwtr_jw_end(w);
	return (ex_flush(e->q, &e->wf, &e->o, 0));
}

/*
 * The blocks of thread @thread a time window (e->from, e->to: ns from
 * the trace start) may hold calls of: from the last clock reading before
 * it (a call entered after that reading may be placed in the window by
 * interpolation; where that time was first read, as hwtr_time_at() takes
 * it) to the first reading after it.  Bisections over the
 * timestamps (q_ts_seq).
 */
static int
ex_time_seqs(struct ex *e, int64_t thread, int64_t *lop, int64_t *hip)
{
	sqlite3_stmt *st = NULL;
	int64_t nblocks, s, t;
	int rc;

	*lop = 0;
	*hip = INT64_MAX;
	if ((rc = q_int(e->q, &nblocks, 0, "SELECT blocks FROM threads WHERE "
	    "id = ?1", "i", thread)) < 0 ||
	    (rc = q_prepare(e->q, &st, Q_TS_NEXT)) < 0)
		return (rc);
	if (e->from > 0) {
		if ((rc = q_ts_seq(e->q, st, thread, nblocks,
		    q_sat_add(e->t0, e->from), &s)) < 0)
			goto out;
		if (s < 0)
			s = nblocks;
		/*
		 * The reading before: where its time was first read (a PSB+
		 * repeats the last time; interpolation is from the first).
		 */
		if ((rc = q_int(e->q, &t, INT64_MIN, Q_TS_PREV, "ii", thread,
		    s)) < 0)
			goto out;
		if (t != INT64_MIN && (rc = q_ts_seq(e->q, st, thread, nblocks,
		    t, &s)) < 0)
			goto out;
		*lop = t != INT64_MIN && s >= 0 ? s : 0;
	}
	if ((t = q_sat_add(e->t0, e->to)) < INT64_MAX) {
		if ((rc = q_ts_seq(e->q, st, thread, nblocks, t + 1, &s)) < 0)
			goto out;
		if (s >= 0)
			*hip = s;
	}
	rc = 0;
out:
	sqlite3_finalize(st);
	return (rc);
}

/*
 * The slices of one thread: the calls open where its window starts
 * (entered before it, outermost first: q_walk_stack), then those entered
 * in it, in entry order, at most --max-depth deep (q_walk: it seeks past
 * what is deeper).
 */
static int
ex_thread(struct ex *e, const struct hwtr_q_req *req, int64_t thread,
    int64_t pid, int64_t tid, int64_t seq_lo, int64_t seq_hi)
{
	sqlite3_stmt *one = NULL;
	struct q_span *fr = NULL;
	struct q_walk w;
	size_t n = 0, i;
	int rc;

	memset(&w, 0, sizeof(w));
	if (seq_lo > 0) {
		if ((rc = q_walk_stack(e->q, thread, seq_lo, req->max_depth >=
		    0 ? req->max_depth : INT64_MAX, &fr, &n)) < 0 ||
		    (rc = q_prepare(e->q, &one, "SELECT " EX_COLS " FROM calls "
		    "WHERE id = ?1")) < 0)
			goto out;
		for (i = n; i-- > 0; ) {
			if (fr[i].entry_seq >= seq_lo)
				continue;	/* the walk has it */
			sqlite3_reset(one);
			sqlite3_bind_int64(one, 1, fr[i].id);
			if (sqlite3_step(one) != SQLITE_ROW) {
				rc = q_dbfail(e->q, "export: cannot read calls");
				goto out;
			}
			if ((rc = ex_slice(e, one, 0, pid, tid)) < 0)
				goto out;
		}
	}
	if ((rc = q_walk_open(e->q, &w, EX_COLS, thread, req->max_depth,
	    seq_lo, seq_hi)) < 0)
		goto out;
	while ((rc = q_walk_step(&w)) == 1)
		if ((rc = ex_slice(e, w.st, 4, pid, tid)) != 0)
			break;
	if (rc == 1)
		rc = 0;
	/* Then the runs of inlined code, inside the frames just written. */
	if (rc == 0 && e->inl) {
		e->thread = thread;
		e->pid = pid;
		e->tid = tid;
		e->maxdepth = req->max_depth >= 0 ? req->max_depth : INT64_MAX;
		rc = q_inl_runs(e->q, thread, seq_lo, seq_hi, ex_inl_slice, e);
	}
out:
	q_walk_close(&w);
	sqlite3_finalize(one);
	free(fr);
	return (rc);
}

/* The trace's header, up to the opening of its events' array. */
static void
ex_head(struct ex *e)
{
	struct hwtr_jw *w = &e->w;

	hwtr_jw_init(w, q_str_put, &e->o, HWTR_JW_SPACED);
	hwtr_jw_obj(w);
	hwtr_jw_kstr(w, "displayTimeUnit", "ns");
	hwtr_jw_key(w, "otherData");
	hwtr_jw_obj(w);
	hwtr_jw_kstr(w, "producer", "hwtrace " HWTRACE_VERSION);
	hwtr_jw_kstr(w, "time_axis", e->use_ns ? "ns" : "instructions");
	hwtr_jw_kstr(w, "timing", e->use_ns ? "call entry and exit times are "
	    "the trace's timestamps where one was taken at that instruction, "
	    "else estimated by instruction count between the timestamps "
	    "around it (linear interpolation); args.estimated is true for a "
	    "slice with an estimated end" : "the trace has no timing: ts and "
	    "dur count instructions executed, shown as 1 ns each (an "
	    "instruction clock, not time)");
	hwtr_jw_end(w);
	hwtr_jw_ws(w, "\n");
	hwtr_jw_key(w, "traceEvents");
	hwtr_jw_arr(w);
}

/* A metadata event @what (process_name, thread_name: @has_tid). */
static void
ex_meta(struct ex *e, const char *what, int64_t pid, int has_tid,
    int64_t tid, const char *name)
{
	struct hwtr_jw *w = &e->w;

	e->nev++;
	hwtr_jw_ws(w, "\n");
	hwtr_jw_obj(w);
	hwtr_jw_kstr(w, "name", what);
	hwtr_jw_kstr(w, "ph", "M");
	hwtr_jw_ki64(w, "pid", pid);
	if (has_tid)
		hwtr_jw_ki64(w, "tid", tid);
	hwtr_jw_key(w, "args");
	hwtr_jw_obj(w);
	hwtr_jw_kstr(w, "name", name);
	hwtr_jw_end(w);
	hwtr_jw_end(w);
}

/*
 * The Chrome/Perfetto trace-event JSON of the calls, written as it is made
 * (a block at a time, through "OUT.partial"), a thread at a time: memory
 * holds one thread's timestamps, the stack where a window starts and a
 * block of text, not the answer.  Times: the calls' stored entry and exit
 * times are those of the last timestamp before them (timestamps are
 * sparse), which made most slices last 0 ns; here each end is placed by
 * instruction count between the clock readings around it (hwtr_time_at(),
 * indexer/exec_vtab.c, which plain SQL has too, and the call_times view),
 * and the slice says whether an end is estimated.  A trace without timing
 * gets an instruction clock, said in otherData.  A window (--from, --to:
 * instructions of one thread, or times) and --max-depth are searched
 * through calls_thread, never by reading a whole thread.
 */
int
q_export(struct hwtr_q *q, const struct hwtr_q_req *req,
    struct hwtr_q_res **resp)
{
	static const char *const cols[] = { "file", "threads", "events",
	    "time_axis" };
	struct hwtr_q_res *res = NULL;
	sqlite3_stmt *st = NULL, *th = NULL;
	int64_t untimed, nthreads = 0, lo, hi;
	struct q_rng r;
	struct ex e;
	int timed_range, rc;

	*resp = NULL;
	if (req->perfetto == NULL)
		return (q_fail(q, -HWTR_E_INVAL, "export: no output file"));
	memset(&e, 0, sizeof(e));
	e.q = q;
	e.wf.fd = -1;
	if (req->thread >= 0 && (rc = q_check_thread(q, req->thread)) < 0)
		return (rc);
	timed_range = req->t_from >= 0 || req->t_to >= 0;
	/* Instructions: one thread's (q_range checks the bounds). */
	if (timed_range) {
		if (req->from >= 0 || req->to >= 0)
			return (q_fail(q, -HWTR_E_INVAL, "export: a range is of "
			    "instructions or of times, not both"));
		if (req->t_from >= 0 && req->t_to >= 0 &&
		    req->t_from > req->t_to)
			return (q_fail(q, -HWTR_E_INVAL, "export: --from %lld "
			    "ns is after --to %lld ns", (long long)req->t_from,
			    (long long)req->t_to));
		memset(&r, 0, sizeof(r));
	} else if ((rc = q_range(q, req, "export", &r)) < 0)
		return (rc);
	/* A thread with calls but no time: the axis is instructions. */
	if ((rc = q_int(q, &untimed, 0, "SELECT count(*) FROM threads t "
	    "WHERE (?1 < 0 OR t.id = ?1) AND EXISTS (SELECT 1 FROM calls c "
	    "WHERE c.thread = t.id) AND NOT EXISTS (SELECT 1 FROM timestamps s "
	    "WHERE s.thread = t.id AND s.ns IS NOT NULL)", "i", r.on ?
	    r.thread : req->thread)) < 0 ||
	    (rc = q_int(q, &e.t0, 0, Q_T0_SQL, NULL)) < 0)
		return (rc);
	e.use_ns = untimed == 0;
	if (timed_range && !e.use_ns)
		return (q_fail(q, -HWTR_E_INVAL, "export: the trace has no "
		    "timing: give --from and --to as instruction numbers"));
	e.from = req->t_from >= 0 ? req->t_from : INT64_MIN;
	e.to = req->t_to >= 0 ? req->t_to : INT64_MAX;
	e.ilo = r.on ? r.insn_lo : INT64_MIN;
	e.ihi = r.on ? r.insn_hi : INT64_MAX;
	e.mindur = req->min_dur >= 0 ? req->min_dur : 0;
	e.inl = q_inl_on(q);
	if ((rc = q_wf_open(q, &e.wf, req->perfetto)) < 0)
		return (rc);
	ex_head(&e);
	rc = q_prepare(q, &st, "SELECT p.pid, coalesce(p.comm, p.path) FROM "
	    "processes p WHERE p.pid IN (SELECT pid FROM threads WHERE ?1 < 0 "
	    "OR id = ?1) ORDER BY p.pid");
	if (rc < 0)
		goto out;
	sqlite3_bind_int64(st, 1, r.on ? r.thread : req->thread);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		ex_meta(&e, "process_name", sqlite3_column_int64(st, 0), 0, 0,
		    sqlite3_column_type(st, 1) == SQLITE_NULL ? "" :
		    (const char *)sqlite3_column_text(st, 1));
	sqlite3_finalize(st);
	st = NULL;
	if (rc != SQLITE_DONE) {
		rc = q_dbfail(q, "export: cannot read processes");
		goto out;
	}
	rc = q_prepare(q, &th, "SELECT coalesce(t.pid, 0), coalesce(t.tid, "
	    "t.id), coalesce(t.name, s.name, 'thread ' || t.id), t.id FROM "
	    "threads t LEFT JOIN streams s ON s.id = t.stream WHERE ?1 < 0 OR "
	    "t.id = ?1 ORDER BY t.id");
	if (rc < 0)
		goto out;
	sqlite3_bind_int64(th, 1, r.on ? r.thread : req->thread);
	while ((rc = sqlite3_step(th)) == SQLITE_ROW) {
		int64_t pid = sqlite3_column_int64(th, 0);
		int64_t tid = sqlite3_column_int64(th, 1);
		int64_t thread = sqlite3_column_int64(th, 3);

		ex_meta(&e, "thread_name", pid, 1, tid,
		    (const char *)sqlite3_column_text(th, 2));
		nthreads++;
		lo = 0;
		hi = INT64_MAX;
		if (r.on) {
			lo = r.seq_lo;
			hi = r.seq_hi;
		} else if (timed_range && (rc = ex_time_seqs(&e, thread, &lo,
		    &hi)) < 0)
			goto out;
		if (lo <= hi && (rc = ex_thread(&e, req, thread, pid, tid, lo,
		    hi)) < 0)
			goto out;
	}
	if (rc != SQLITE_DONE) {
		rc = q_dbfail(q, "export: cannot read threads");
		goto out;
	}
	/* The events' array, opened with a newline, closed after one. */
	hwtr_jw_ws(&e.w, e.nev == 0 ? "\n\n" : "\n");
	hwtr_jw_end(&e.w);
	hwtr_jw_end(&e.w);
	q_str_add(&e.o, "\n", 1);
	if ((rc = ex_flush(q, &e.wf, &e.o, 1)) < 0 ||
	    (rc = q_wf_commit(q, &e.wf)) < 0)
		goto out;
	if ((rc = q_res_new(&res, HWTR_NELEM(cols), cols)) < 0) {
		q_fail(q, rc, "out of memory");
		goto out;
	}
	rc = q_res_push(res, HWTR_Q_TEXT, req->perfetto);
	rc |= q_res_push_int(res, nthreads);
	rc |= q_res_push_int(res, e.nev);
	rc |= q_res_push(res, HWTR_Q_TEXT, e.use_ns ? "ns" : "instructions");
	if (rc != 0) {
		rc = q_fail(q, -HWTR_E_NOMEM, "out of memory");
		goto out;
	}
	*resp = res;
	res = NULL;
out:
	if (e.wf.fd >= 0)
		q_wf_abort(&e.wf);
	sqlite3_finalize(st);
	sqlite3_finalize(th);
	sqlite3_finalize(e.tm);
	q_names_free(&e.names);
	hwtr_q_res_free(res);
	free(e.o.p);
	return (rc);
}
