/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The call paths of the calls column store (call_paths, hwtrace-db(5)):
 * the calls merged by the path of calls that leads to them, with their
 * number, instructions and time, so that the call tree (tree,
 * export --folded) reads a row per path instead of one per call: 8.9 M
 * calls of gzip are a few thousand paths.
 *
 * Made while the symbol copy (colsym.c) reads the pages in id order:
 * the calls of a thread in entry order, so that a call's caller, when it
 * was read, is among the calls still open (a stack, popped by depth),
 * exactly as the query's tree finds it (query/q_tree.c): a path is the
 * path of that caller (none: a root of its thread) and the call's own
 * symbol, func_ip, call_ip and depth.  The query merges the paths it
 * shows by name and drops the call sites it does not show, so the rows
 * split finer than any answer; ids follow each path's first call, the
 * order the query's tree gives its children.
 *
 * Memory is the paths, not the calls.  A trace with more than CP_MAX
 * paths (deep recursion from several call sites) gets no rows: the query
 * reads the calls then, as for a database written before the table.
 */

#include <assert.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwtr_common.h"
#include "colstore.h"

#define CP_MAX		(512 * 1024)

/*
 * A path: its key (parent is the caller's node + 1, 0 at a root; nul has
 * the CS_SYMBOL and CS_CALL_IP bits of the key, CP_NODUR when no call had
 * a time) and its sums.
 */
struct cp_node {
	int64_t		thread, parent, depth;
	int64_t		symbol, func_ip, call_ip;
	int64_t		calls, insns, self, dur;
	uint32_t	nul;
	uint64_t	hash;
};

#define CP_NODUR	(1u << CS_NCOLS)

/* A call still open: its id, depth and path. */
struct cp_open {
	int64_t		id, depth;
	size_t		node;
};

/*
 * The paths met last, by the caller's path, func_ip and call_ip (node +
 * 1, 0: none): calls from a loop or from each call of a function go the
 * same way, and this skips the hash of the whole key and the table.
 */
#define CP_MEMO_BITS	12

struct hwtr_cs_paths {
	uint32_t	memo[1u << CP_MEMO_BITS];
	struct cp_node	*n;
	size_t		len, cap;
	size_t		*ht;		/* node + 1; 0: empty */
	size_t		htcap;
	struct cp_open	*o;
	size_t		no, ocap;
	int64_t		thread;
	int		started, over;
};

int
hwtr_cs_paths_new(struct hwtr_cs_paths **pp)
{
	*pp = calloc(1, sizeof(**pp));
	return (*pp != NULL ? 0 : -1);
}

void
hwtr_cs_paths_free(struct hwtr_cs_paths *p)
{
	if (p == NULL)
		return;
	free(p->n);
	free(p->ht);
	free(p->o);
	free(p);
}

static uint64_t
cp_mix(uint64_t h, int64_t v)
{
	h ^= (uint64_t)v;
	h *= 0x100000001b3ULL;
	return (h ^ (h >> 29));
}

static uint64_t
cp_hash(const struct cp_node *k)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	h = cp_mix(h, k->thread);
	h = cp_mix(h, k->parent);
	h = cp_mix(h, k->depth);
	h = cp_mix(h, k->nul & (1u << CS_SYMBOL) ? -1 : k->symbol);
	h = cp_mix(h, k->func_ip);
	h = cp_mix(h, k->nul & (1u << CS_CALL_IP) ? -1 : k->call_ip);
	return (h * 0x9e3779b97f4a7c15ULL);
}

/* Whether @a and @b are the same path (their hashes aside). */
static inline int
cp_same_key(const struct cp_node *a, const struct cp_node *b)
{
	uint32_t m = (1u << CS_SYMBOL) | (1u << CS_CALL_IP);

	return (a->thread == b->thread &&
	    a->parent == b->parent && a->depth == b->depth &&
	    (a->nul & m) == (b->nul & m) && a->func_ip == b->func_ip &&
	    ((a->nul & (1u << CS_SYMBOL)) || a->symbol == b->symbol) &&
	    ((a->nul & (1u << CS_CALL_IP)) || a->call_ip == b->call_ip));
}

static int
cp_same(const struct cp_node *a, const struct cp_node *b)
{
	return (a->hash == b->hash && cp_same_key(a, b));
}

static int
cp_rehash(struct hwtr_cs_paths *p)
{
	size_t ncap = p->htcap ? p->htcap * 2 : 4096, i, k;
	size_t *nh;

	if ((nh = calloc(ncap, sizeof(*nh))) == NULL)
		return (-1);
	for (i = 0; i < p->len; i++) {
		k = (size_t)(p->n[i].hash >> 17) & (ncap - 1);
		while (nh[k] != 0)
			k = (k + 1) & (ncap - 1);
		nh[k] = i + 1;
	}
	free(p->ht);
	p->ht = nh;
	p->htcap = ncap;
	return (0);
}

/* The node of key @k, made if new; SIZE_MAX: out of memory. */
static size_t
cp_node_of(struct hwtr_cs_paths *p, struct cp_node *k)
{
	size_t i, s;

	k->hash = cp_hash(k);
	if ((p->len + 1) * 2 > p->htcap && cp_rehash(p) < 0)
		return (SIZE_MAX);
	for (s = (size_t)(k->hash >> 17) & (p->htcap - 1); p->ht[s] != 0;
	    s = (s + 1) & (p->htcap - 1))
		if (cp_same(&p->n[p->ht[s] - 1], k))
			return (p->ht[s] - 1);
	if (hwtr_grow(&p->n, &p->cap, p->len + 1, sizeof(*p->n)) < 0)
		return (SIZE_MAX);
	i = p->len++;
	p->n[i] = *k;
	p->ht[s] = i + 1;
	return (i);
}

/* Give up the paths: too many (the query reads the calls instead). */
static void
cp_drop(struct hwtr_cs_paths *p)
{
	p->over = 1;
	free(p->n);
	free(p->ht);
	free(p->o);
	p->n = NULL;
	p->ht = NULL;
	p->o = NULL;
	p->len = p->cap = p->htcap = p->no = p->ocap = 0;
}

/* Whether node @n is the path of @r under the path @caller (node + 1). */
static inline int
cp_is(const struct cp_node *n, const struct hwtr_cs_row *r, int64_t thread,
    size_t caller)
{
	uint32_t m = (1u << CS_SYMBOL) | (1u << CS_CALL_IP);

	return (n->parent == (int64_t)caller && n->func_ip == r->v[CS_FUNC_IP] &&
	    n->depth == r->v[CS_DEPTH] && n->thread == thread &&
	    (n->nul & m) == (r->nul & m) &&
	    ((r->nul & (1u << CS_SYMBOL)) || n->symbol == r->v[CS_SYMBOL]) &&
	    ((r->nul & (1u << CS_CALL_IP)) || n->call_ip == r->v[CS_CALL_IP]));
}

int
hwtr_cs_paths_key(struct hwtr_cs_paths *p, const struct hwtr_cs_row *r,
    size_t *nodep)
{
	struct cp_node k;
	size_t i, no, node, caller = 0;
	int64_t depth = r->v[CS_DEPTH];
	uint32_t *memo, m;

	*nodep = 0;
	if (p->over)
		return (0);
	if (!p->started || r->v[CS_THREAD] != p->thread) {
		p->started = 1;
		p->thread = r->v[CS_THREAD];
		p->no = 0;
	}
	/* The caller: among the calls still open, as q_tree.c finds it. */
	for (no = p->no; no > 0 && p->o[no - 1].depth >= depth; no--)
		;
	p->no = no;
	for (i = no; !(r->nul & (1u << CS_PARENT)) && i > 0; i--)
		if (p->o[i - 1].id == r->v[CS_PARENT]) {
			caller = p->o[i - 1].node + 1;
			break;
		}
	memo = &p->memo[(((uint64_t)caller * 0x9e3779b97f4a7c15ULL) ^
	    (uint64_t)r->v[CS_FUNC_IP] ^ ((r->nul & (1u << CS_CALL_IP)) ? 0 :
	    (uint64_t)r->v[CS_CALL_IP] << 17)) * 0xff51afd7ed558ccdULL >>
	    (64 - CP_MEMO_BITS)];
	m = *memo;
	if (m != 0 && cp_is(&p->n[m - 1], r, p->thread, caller))
		node = m - 1;
	else {
		k.thread = p->thread;
		k.parent = (int64_t)caller;
		k.depth = depth;
		k.nul = r->nul & ((1u << CS_SYMBOL) | (1u << CS_CALL_IP));
		k.symbol = k.nul & (1u << CS_SYMBOL) ? 0 : r->v[CS_SYMBOL];
		k.call_ip = k.nul & (1u << CS_CALL_IP) ? 0 : r->v[CS_CALL_IP];
		k.func_ip = r->v[CS_FUNC_IP];
		k.nul |= CP_NODUR;
		k.calls = k.insns = k.self = k.dur = 0;
		k.hash = 0;
		if ((node = cp_node_of(p, &k)) == SIZE_MAX)
			return (-1);
		if (p->len > CP_MAX) {
			cp_drop(p);
			return (0);
		}
		*memo = (uint32_t)node + 1;
	}
	if (no == p->ocap &&
	    hwtr_grow(&p->o, &p->ocap, no + 1, sizeof(*p->o)) < 0)
		return (-1);
	assert(no == 0 || p->o[no - 1].depth < depth);
	p->o[no].id = r->v[CS_ID];
	p->o[no].depth = depth;
	p->o[no].node = node;
	p->no = no + 1;
	*nodep = node + 1;
	return (0);
}

void
hwtr_cs_paths_sum(struct hwtr_cs_paths *p, size_t node,
    const struct hwtr_cs_row *r)
{
	struct cp_node *n;

	if (p->over || node == 0)
		return;
	/* A node given by hwtr_cs_paths_key() since the paths were dropped. */
	assert(node <= p->len);
	n = &p->n[node - 1];
	n->calls++;
	n->insns += r->v[CS_INSNS];
	n->self += r->v[CS_SELF_INSNS];
	if (!(r->nul & ((1u << CS_ENTRY_NS) | (1u << CS_EXIT_NS)))) {
		n->dur += r->v[CS_EXIT_NS] - r->v[CS_ENTRY_NS];
		n->nul &= ~CP_NODUR;
	}
}

int
hwtr_cs_paths_add(struct hwtr_cs_paths *p, const struct hwtr_cs_row *r)
{
	size_t node;

	if (hwtr_cs_paths_key(p, r, &node) < 0)
		return (-1);
	hwtr_cs_paths_sum(p, node, r);
	return (0);
}

static void
cp_bind_opt(sqlite3_stmt *st, int col, int null, int64_t v)
{
	if (null)
		sqlite3_bind_null(st, col);
	else
		sqlite3_bind_int64(st, col, v);
}

int
hwtr_cs_paths_write(struct hwtr_cs_paths *p, sqlite3 *db, char *err,
    size_t errlen)
{
	sqlite3_stmt *st = NULL;
	const struct cp_node *n;
	size_t i;
	int rc = SQLITE_DONE;

	if (p->over || p->len == 0)
		return (0);
	if (sqlite3_prepare_v2(db, "INSERT INTO call_paths (id, thread, "
	    "parent, depth, symbol, func_ip, call_ip, calls, insns, "
	    "self_insns, duration_ns) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, "
	    "?9, ?10, ?11)", -1, &st, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "call_paths: cannot prepare: %s",
		    sqlite3_errmsg(db));
		return (-1);
	}
	for (i = 0; i < p->len && rc == SQLITE_DONE; i++) {
		n = &p->n[i];
		assert(n->parent >= 0 && (size_t)n->parent <= i);
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, (int64_t)i + 1);
		sqlite3_bind_int64(st, 2, n->thread);
		cp_bind_opt(st, 3, n->parent == 0, n->parent);
		sqlite3_bind_int64(st, 4, n->depth);
		cp_bind_opt(st, 5, n->nul & (1u << CS_SYMBOL), n->symbol);
		sqlite3_bind_int64(st, 6, n->func_ip);
		cp_bind_opt(st, 7, n->nul & (1u << CS_CALL_IP), n->call_ip);
		sqlite3_bind_int64(st, 8, n->calls);
		sqlite3_bind_int64(st, 9, n->insns);
		sqlite3_bind_int64(st, 10, n->self);
		cp_bind_opt(st, 11, n->nul & CP_NODUR, n->dur);
		rc = sqlite3_step(st);
	}
	if (rc != SQLITE_DONE)
		snprintf(err, errlen, "call_paths: cannot write: %s",
		    sqlite3_errmsg(db));
	sqlite3_finalize(st);
	return (rc == SQLITE_DONE ? 0 : -1);
}
