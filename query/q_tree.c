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

int
q_tree(struct hwtr_q *q, const struct hwtr_q_req *req,
    struct hwtr_q_res **resp)
{
	static const char *const cols[] = { "thread", "depth", "function",
	    "calls", "insns", "self_insns", "duration_ns", "path" };
	struct tree t = { 0 };
	struct hwtr_q_res *res = NULL;
	sqlite3_stmt *st = NULL;
	size_t *map = NULL, node, parent, c, root = 0;
	int64_t lo, hi, id, pid, thread, cur = -1, depth;
	int64_t maxd = req->depth >= 0 ? req->depth : INT64_MAX;
	size_t *roots = NULL, nroots = 0, len;
	struct q_names names = { 0 };
	const struct q_name *nm;
	const char *name;
	char hex[24];
	uint64_t hash;
	struct q_rng r;
	int64_t rthread = req->thread;
	int rc;

	*resp = NULL;
	if (req->thread >= 0 && (rc = q_check_thread(q, req->thread)) < 0)
		return (rc);
	if ((rc = q_range(q, req, "tree", &r)) < 0)
		return (rc);
	if (r.on) {
		/*
		 * A range: the calls entered in its blocks, a range of ids of
		 * the thread (ids follow entry order); a call whose caller is
		 * outside is a root of the tree.
		 */
		rthread = r.thread;
		if ((rc = q_int(q, &lo, INT64_MAX, Q_CALL_FIRST_FROM, "ii",
		    r.thread, r.seq_lo)) < 0 ||
		    (rc = q_int(q, &hi, -1, Q_CALL_LAST_UPTO, "ii", r.thread,
		    r.seq_hi)) < 0)
			return (rc);
		if (r.seq_hi < r.seq_lo)
			hi = lo - 1;
		goto ranged;
	}
	/* Ids follow (thread, entry position): the ends come from calls_thread. */
	if (req->thread >= 0)
		rc = q_int(q, &lo, 0, "SELECT id FROM calls WHERE thread = ?1 "
		    "ORDER BY entry_seq, id LIMIT 1", "i", req->thread);
	else
		rc = q_int(q, &lo, 0, "SELECT min(id) FROM calls", NULL);
	if (rc < 0)
		return (rc);
	if (req->thread >= 0)
		rc = q_int(q, &hi, -1, "SELECT id FROM calls WHERE thread = ?1 "
		    "ORDER BY entry_seq DESC, id DESC LIMIT 1", "i",
		    req->thread);
	else
		rc = q_int(q, &hi, -1, "SELECT max(id) FROM calls", NULL);
	if (rc < 0)
		return (rc);
ranged:
	if ((rc = q_res_new(&res, HWTR_NELEM(cols), cols)) < 0)
		return (q_fail(q, rc, "out of memory"));
	q_res_stream(q, res);
	if (hi < lo) {
		*resp = res;
		return (0);
	}
	map = calloc((size_t)(hi - lo + 1), sizeof(*map));
	roots = calloc((size_t)(hi - lo + 2), sizeof(*roots));
	/* Node 0 stands for "none" in first/next: a placeholder. */
	if (map == NULL || roots == NULL || tree_child(&t, (size_t)-1, -1,
	    "", 0, 0, -1) == SIZE_MAX) {
		rc = q_fail(q, -HWTR_E_NOMEM, "out of memory");
		goto out;
	}
/* Names come from a cache of symbols by id, not a join per call. */
#define Q_TREE_COLS							\
	"SELECT c.id, c.thread, c.parent, c.depth, c.symbol, "		\
	"c.func_ip, c.insns, c.self_insns, c.exit_ns - c.entry_ns "	\
	"FROM calls c "
	/*
	 * Parents come before their children in id order.  The roots alone
	 * come a lookup each (Q_CALLS_ROOTS, as in q_calls); deeper trees
	 * scan, for one thread only the range of its ids.
	 */
	if (req->depth == 0 && !r.on)
		rc = q_prepare(q, &st, Q_CALLS_ROOTS Q_TREE_COLS
		    "WHERE c.id IN (SELECT id FROM sel) AND c.depth <= ?2 "
		    "ORDER BY c.id");
	else if (r.on)
		rc = q_prepare(q, &st, Q_TREE_COLS Q_TREE_RANGE_WHERE);
	else if (rthread >= 0)
		rc = q_prepare(q, &st, Q_TREE_COLS "WHERE c.id BETWEEN ?3 "
		    "AND ?4 AND c.thread = ?1 AND c.depth <= ?2 ORDER BY c.id");
	else
		rc = q_prepare(q, &st, Q_TREE_COLS "WHERE ?1 < 0 AND "
		    "c.depth <= ?2 ORDER BY c.id");
	if (rc < 0)
		goto out;
	sqlite3_bind_int64(st, 1, rthread);
	sqlite3_bind_int64(st, 2, maxd);
	if (sqlite3_bind_parameter_count(st) >= 4) {
		/* One thread's ids, a range of the table (see above). */
		sqlite3_bind_int64(st, 3, lo);
		sqlite3_bind_int64(st, 4, hi);
	}
	if (r.on) {
		sqlite3_bind_int64(st, 5, r.insn_lo);
		sqlite3_bind_int64(st, 6, r.insn_hi);
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		id = sqlite3_column_int64(st, 0);
		thread = sqlite3_column_int64(st, 1);
		nm = NULL;
		if (sqlite3_column_type(st, 4) != SQLITE_NULL &&
		    (nm = q_name_get(q, &names, sqlite3_column_int64(st,
		    4))) == NULL) {
			rc = -HWTR_E_DB;
			goto out;
		}
		if (nm != NULL && nm->name != NULL) {
			name = nm->name;
			len = nm->len;
			hash = nm->hash;
		} else {
			len = q_fmt_hex(hex, (uint64_t)sqlite3_column_int64(st,
			    5));
			name = hex;
			hash = q_hash(hex, len);
		}
		if (thread != cur) {
			/* A pseudo root per thread holds its roots. */
			root = tree_child(&t, (size_t)-1, thread, "", 0, 0, -1);
			if (root == SIZE_MAX)
				goto nomem;
			roots[nroots++] = root;
			cur = thread;
		}
		parent = root;
		if (sqlite3_column_type(st, 2) != SQLITE_NULL) {
			pid = sqlite3_column_int64(st, 2);
			if (pid >= lo && pid <= hi && map[pid - lo] != 0)
				parent = map[pid - lo];
		}
		depth = t.n[parent].depth + 1;
		if ((node = tree_child(&t, parent, thread, name, len, hash,
		    depth)) == SIZE_MAX)
			goto nomem;
		if (id >= lo && id <= hi)
			map[id - lo] = node;
		t.n[node].count++;
		t.n[node].insns += sqlite3_column_int64(st, 6);
		t.n[node].self += sqlite3_column_int64(st, 7);
		if (sqlite3_column_type(st, 8) != SQLITE_NULL) {
			t.n[node].dur += sqlite3_column_int64(st, 8);
			t.n[node].dur_known = 1;
		}
	}
	if (rc != SQLITE_DONE) {
		rc = q_dbfail(q, "tree: cannot read calls");
		goto out;
	}
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
	sqlite3_finalize(st);
	q_names_free(&names);
	hwtr_q_res_free(res);
	tree_free(&t);
	free(map);
	free(roots);
	return (rc);
}

/* Microseconds with nanosecond decimals, as the trace event format wants. */
static void
ex_us(struct q_str *o, int64_t ns)
{
	if (ns < 0) {
		q_str_puts(o, "-");
		ns = -ns;
	}
	q_str_printf(o, "%lld.%03lld", (long long)(ns / 1000),
	    (long long)(ns % 1000));
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

/*
 * The Chrome/Perfetto trace-event JSON of the calls, written as it is made
 * (a block at a time, through "OUT.partial"), a thread at a time: memory
 * holds one thread's timestamps and a block of text, not the answer.
 * Times: the calls' stored entry and exit times are those of the last
 * timestamp before them (timestamps are sparse), which made most slices
 * last 0 ns; here each end is placed by instruction count between the
 * clock readings around it (hwtr_time_at(), indexer/exec_vtab.c, which
 * plain SQL has too), and the slice says whether an end is estimated.
 * A trace without timing gets an instruction clock, said in otherData.
 */
int
q_export(struct hwtr_q *q, const struct hwtr_q_req *req,
    struct hwtr_q_res **resp)
{
	static const char *const cols[] = { "file", "threads", "events",
	    "time_axis" };
	struct q_str o = { 0 };
	struct q_wfile wf = { NULL, NULL, -1 };
	struct q_names names;
	struct hwtr_q_res *res = NULL;
	sqlite3_stmt *st = NULL, *th = NULL;
	int64_t untimed, t0, nthreads = 0, nev = 0;
	int64_t from, to, mindur, maxdepth;
	int use_ns, rc;

	*resp = NULL;
	if (req->folded != NULL)
		return (q_folded(q, req, resp));
	memset(&names, 0, sizeof(names));
	if (req->perfetto == NULL)
		return (q_fail(q, -HWTR_E_INVAL, "export: no output file"));
	if (req->t_from >= 0 && req->t_to >= 0 && req->t_from > req->t_to)
		return (q_fail(q, -HWTR_E_INVAL, "export: --from is after "
		    "--to"));
	if (req->thread >= 0 && (rc = q_check_thread(q, req->thread)) < 0)
		return (rc);
	/* A thread with calls but no time: the axis is instructions. */
	if ((rc = q_int(q, &untimed, 0, "SELECT count(*) FROM threads t "
	    "WHERE EXISTS (SELECT 1 FROM calls c WHERE c.thread = t.id) AND "
	    "NOT EXISTS (SELECT 1 FROM timestamps s WHERE s.thread = t.id AND "
	    "s.ns IS NOT NULL)", NULL)) < 0 ||
	    (rc = q_int(q, &t0, 0, Q_T0_SQL, NULL)) < 0)
		return (rc);
	use_ns = untimed == 0;
	from = req->t_from >= 0 ? req->t_from : INT64_MIN;
	to = req->t_to >= 0 ? req->t_to : INT64_MAX;
	mindur = req->min_dur >= 0 ? req->min_dur : 0;
	maxdepth = req->max_depth >= 0 ? req->max_depth : INT64_MAX;
	if ((rc = q_wf_open(q, &wf, req->perfetto)) < 0)
		return (rc);
	q_str_puts(&o, "{\"displayTimeUnit\": \"ns\", \"otherData\": "
	    "{\"producer\": \"hwtrace " HWTRACE_VERSION "\", \"time_axis\": ");
	q_str_puts(&o, use_ns ? "\"ns\", \"timing\": \"call entry and exit "
	    "times are the trace's timestamps where one was taken at that "
	    "instruction, else estimated by instruction count between the "
	    "timestamps around it (linear interpolation); args.estimated is "
	    "true for a slice with an estimated end\"" : "\"instructions\", "
	    "\"timing\": \"the trace has no timing: ts and dur count "
	    "instructions executed, shown as 1 ns each (an instruction "
	    "clock, not time)\"");
	q_str_puts(&o, "},\n\"traceEvents\": [\n");
	rc = q_prepare(q, &st, "SELECT p.pid, coalesce(p.comm, p.path) FROM "
	    "processes p WHERE p.pid IN (SELECT pid FROM threads WHERE ?1 < 0 "
	    "OR id = ?1) ORDER BY p.pid");
	if (rc < 0)
		goto out;
	sqlite3_bind_int64(st, 1, req->thread);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		q_str_printf(&o, "%s{\"name\": \"process_name\", \"ph\": \"M\", "
		    "\"pid\": %lld, \"args\": {\"name\": ", nev++ ? ",\n" : "",
		    (long long)sqlite3_column_int64(st, 0));
		q_str_json(&o, sqlite3_column_type(st, 1) == SQLITE_NULL ? "" :
		    (const char *)sqlite3_column_text(st, 1));
		q_str_puts(&o, "}}");
	}
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
	if (rc == 0)
		rc = q_prepare(q, &st, "SELECT id, depth, symbol, func_ip, "
		    "entry_insn, exit_insn, insns, self_insns, hwtr_time_at("
		    "thread, entry_insn), hwtr_time_at(thread, exit_insn), "
		    "hwtr_time_estimated(thread, entry_insn) OR "
		    "hwtr_time_estimated(thread, exit_insn) FROM calls WHERE "
		    "thread = ?1 AND depth <= ?2 ORDER BY entry_seq, id");
	if (rc < 0)
		goto out;
	sqlite3_bind_int64(th, 1, req->thread);
	while ((rc = sqlite3_step(th)) == SQLITE_ROW) {
		int64_t pid = sqlite3_column_int64(th, 0);
		int64_t tid = sqlite3_column_int64(th, 1);
		int64_t thread = sqlite3_column_int64(th, 3);

		q_str_printf(&o, "%s{\"name\": \"thread_name\", \"ph\": \"M\", "
		    "\"pid\": %lld, \"tid\": %lld, \"args\": {\"name\": ",
		    nev++ ? ",\n" : "", (long long)pid, (long long)tid);
		q_str_json(&o, (const char *)sqlite3_column_text(th, 2));
		q_str_puts(&o, "}}");
		nthreads++;
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, thread);
		sqlite3_bind_int64(st, 2, maxdepth);
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			int64_t tb, te, ei = sqlite3_column_int64(st, 4);
			int64_t xi = sqlite3_column_int64(st, 5);
			const struct q_name *nm = NULL;
			int est = 0;

			if (use_ns && sqlite3_column_type(st, 8) !=
			    SQLITE_NULL) {
				tb = sqlite3_column_int64(st, 8) - t0;
				te = sqlite3_column_int64(st, 9) - t0;
				est = sqlite3_column_int(st, 10);
			} else {
				tb = ei;
				te = xi;
			}
			if (tb > to)
				break;		/* entries only come later */
			if (te < from || te - tb < mindur)
				continue;
			if (sqlite3_column_type(st, 2) != SQLITE_NULL &&
			    (nm = q_name_get(q, &names,
			    sqlite3_column_int64(st, 2))) == NULL) {
				rc = -HWTR_E_NOMEM;
				goto out;
			}
			q_str_printf(&o, "%s{\"name\": ", nev++ ? ",\n" : "");
			if (nm != NULL && nm->name != NULL)
				q_str_json(&o, nm->name);
			else
				q_str_printf(&o, "\"%#llx\"", (unsigned long long)
				    sqlite3_column_int64(st, 3));
			q_str_printf(&o, ", \"cat\": \"call\", \"ph\": \"X\", "
			    "\"pid\": %lld, \"tid\": %lld, \"ts\": ",
			    (long long)pid, (long long)tid);
			ex_us(&o, tb);
			q_str_puts(&o, ", \"dur\": ");
			ex_us(&o, te - tb);
			q_str_printf(&o, ", \"args\": {\"call\": %lld, "
			    "\"depth\": %lld, \"insns\": %lld, \"self_insns\": "
			    "%lld, \"entry_insn\": %lld, \"exit_insn\": %lld%s}}",
			    (long long)sqlite3_column_int64(st, 0),
			    (long long)sqlite3_column_int64(st, 1),
			    (long long)sqlite3_column_int64(st, 6),
			    (long long)sqlite3_column_int64(st, 7),
			    (long long)ei, (long long)xi, !use_ns ? "" : est ?
			    ", \"estimated\": true" : ", \"estimated\": false");
			if ((rc = ex_flush(q, &wf, &o, 0)) < 0)
				goto out;
		}
		if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
			rc = q_dbfail(q, "export: cannot read calls");
			goto out;
		}
	}
	if (rc != SQLITE_DONE) {
		rc = q_dbfail(q, "export: cannot read threads");
		goto out;
	}
	q_str_puts(&o, "\n]}\n");
	if ((rc = ex_flush(q, &wf, &o, 1)) < 0 ||
	    (rc = q_wf_commit(q, &wf)) < 0)
		goto out;
	if ((rc = q_res_new(&res, HWTR_NELEM(cols), cols)) < 0) {
		q_fail(q, rc, "out of memory");
		goto out;
	}
	rc = q_res_push(res, HWTR_Q_TEXT, req->perfetto);
	rc |= q_res_push_int(res, nthreads);
	rc |= q_res_push_int(res, nev);
	rc |= q_res_push(res, HWTR_Q_TEXT, use_ns ? "ns" : "instructions");
	if (rc != 0) {
		rc = q_fail(q, -HWTR_E_NOMEM, "out of memory");
		goto out;
	}
	*resp = res;
	res = NULL;
out:
	if (wf.tmp != NULL)
		q_wf_abort(&wf);
	sqlite3_finalize(st);
	sqlite3_finalize(th);
	q_names_free(&names);
	hwtr_q_res_free(res);
	free(o.p);
	return (rc);
}
