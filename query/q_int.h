/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Private interfaces of the query module (query/ only).  From the bottom:
 * q_str.c (a handle's message, growable text, display width), q_res.c
 * (results), q_fmt.c (their rendering), q_stmt.c (statements into
 * results), q_db.c (one database opened and checked), q_lazy.c (an
 * archive indexed on demand), q_core.c (opening, and the verbs' shared
 * lookups).  q_verbs.c answers the verbs, mostly as SQL over
 * hwtrace-db(5), and hands bt to q_bt.c, calls and func to q_calls.c and
 * sql to q_sql.c; q_range.c turns --from and --to into a thread's
 * positions; q_cov.c computes coverage and writes lcov; q_tree.c builds
 * call trees and the Perfetto export.  No file calls one above it (make
 * layers).
 */

#ifndef HWTR_Q_INT_H
#define HWTR_Q_INT_H

#include <sqlite3.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "hwtrace.h"
#include "hwtr_common.h"
#include "hwtr_ix_sqlite.h"

/* Growable text. */
struct q_str {
	char		*p;
	size_t		len, cap;
	int		err;
};

struct hwtr_q_res;

/*
 * What the trace lost where an answer looks (q_gaps.c): the places, the
 * first Q_LOST_KEEP of them kept, and the note shown with the answer.
 */
#define Q_GAP_WHAT	160
struct q_gap {
	int64_t		thread;		/* -1: capture-wide */
	int64_t		seq;		/* the block it comes before; -1 */
	int64_t		insn;		/* that block's first; -1: unknown */
	char		what[Q_GAP_WHAT];
};
struct q_lost {
	struct q_gap	*gaps;
	size_t		ngaps, cap;
	int64_t		n;		/* places in all */
	int		lower;		/* the counts are lower bounds */
	char		*note;		/* NULL: nothing lost there */
	/* bt: its rows entered before a loss (nrows flags; NULL: none). */
	uint8_t		*before;
	size_t		nbefore;
};

/*
 * The writer of a rendered answer (q_fmt.c): it takes rows in blocks and
 * hands the text to @sink.  For a table it keeps the widths seen so far
 * (nat) and those fitted to @width.
 */
struct q_out {
	enum hwtr_q_format fmt;
	int		width;
	int		(*sink)(void *arg, const char *buf, size_t len);
	void		*arg;
	size_t		ncols, nrows;
	size_t		*nat, *fit;
	int		*right, *textcol;
	int		header_done;
	struct q_str	buf;
	/* What the trace lost there (borrowed; NULL: nothing said). */
	const struct q_lost *lost;
	struct hwtr_jw	jw;		/* json: the writer, into @buf */
};

struct hwtr_q {
	sqlite3		*db;
	char		*dbpath;
	struct hwtr_log	log;
	int		db_given;	/* the caller named the cache (--db) */
	/*
	 * A partial database (q_lazy.c): only the end of the threads in
	 * @cut (thread ids, sorted) was decoded.  @archive (NULL when a
	 * database was opened) is indexed whole into @fullpath when a verb
	 * needs the whole history; @opts says how.
	 */
	int		tail;
	int64_t		*cut;
	size_t		ncut;
	char		*archive, *fullpath, *tailpath;
	struct hwtr_q_opts opts;
	/* Set while hwtr_q_stream runs: where streamed blocks of rows go. */
	struct q_out	*out;
	/*
	 * The time limit of the verb that runs (q_limit_begin): the
	 * process's CPU time when it started (ns), the budget (ms; 0: none),
	 * and whether SQLite's progress handler stopped a statement for it.
	 */
	int64_t		lim_start_ns;
	int64_t		lim_ms;
	int		lim_expired;
	char		msg[HWTR_ERRMSG_MAX];
	/* What the trace lost where the last verb looked (q_gaps.c). */
	struct q_lost	lost;
};

/* Rows per block of a streamed answer (and the most held before the first). */
#define Q_BLOCK_ROWS	1024

/*
 * A cell: its text at pool + off (len bytes, w code points), or SQL NULL
 * (off == Q_NULLOFF, shown as "-": w 1).
 */
#define Q_NULLOFF	SIZE_MAX
struct q_cell {
	size_t		off;
	uint32_t	len, w;
	enum hwtr_q_type type;
};

/*
 * Cells are row-major; their text lives in one pool, so that a million
 * rows cost two allocations, not a million.
 */
struct hwtr_q_res {
	size_t		ncols;
	char		**names;
	struct q_cell	*cells;
	size_t		ncells, cap;
	struct q_str	pool;
	/* Streamed (see q_res_stream): full blocks go to @out as they fill. */
	struct q_out	*out;
	/*
	 * Least widths of a table's columns once it is longer than a block
	 * (NULL: none; see q_res_hint), so that it keeps its alignment.
	 */
	size_t		*hint;
	/* What the trace lost where the answer looked (note, n, lower). */
	struct q_lost	lost;
};

#define Q_CELL_S(res, c)						\
	((c)->off == Q_NULLOFF ? NULL : (const char *)(res)->pool.p + (c)->off)

/* Set q->msg; returns @err (a negative HWTR_E_* code). */
int q_fail(struct hwtr_q *q, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/*
 * Run what follows under a limit of @ms of CPU time (0: none; -1: the
 * default for sql if @sql, else for the other verbs: see struct
 * hwtr_q_req), checked by SQLite's progress handler;
 * q_limit_end() removes it and says whether it stopped a statement (the
 * budget stays in q->lim_ms for the message).
 */
void q_limit_begin(struct hwtr_q *q, int64_t ms, int sql);
int q_limit_end(struct hwtr_q *q);
/*
 * q_stmt.c: the process's CPU time in ns; SQLite's progress handler under
 * the limit (@arg the query; non-zero stops the statement); and the same
 * for a loop of C between SQLite's steps, whose work a damaged database
 * can make as long as it likes: non-zero when the limit has passed (then
 * q_limit_end() says so too).
 */
int64_t q_cpu_ns(void);
int q_limit_check(void *arg);
int q_limit_poll(struct hwtr_q *q);
/* The name of @verb as the command line spells it. */
const char *q_verb_name(enum hwtr_q_verb verb);

/* q_fail with SQLite's message for the connection appended. */
int q_dbfail(struct hwtr_q *q, const char *what);
#ifdef __clang_analyzer__
/*
 * clang --analyze (make analyze) follows no call into another file or
 * into a variadic function: told here what these two return, it does not
 * take their failures for successes.  q_str.c defines them.
 */
static inline int
q_an_is(int got, int err)
{
	(void)got;
	return (err);
}
#define q_fail(q, err, ...)	q_an_is(q_fail((q), (err), __VA_ARGS__), (err))
#define q_dbfail(q, what)	q_an_is(q_dbfail((q), (what)), -HWTR_E_DB)
#endif

/*
 * @a - @b, held to INT64_MIN..INT64_MAX: a damaged database's times and
 * positions may be any int64, and their differences must not wrap.
 */
static inline int64_t
q_sat_sub(int64_t a, int64_t b)
{
	int64_t d;

	if (__builtin_sub_overflow(a, b, &d))
		return (b < 0 ? INT64_MAX : INT64_MIN);
	return (d);
}

/* @a + @b, held to INT64_MIN..INT64_MAX, as q_sat_sub(). */
static inline int64_t
q_sat_add(int64_t a, int64_t b)
{
	int64_t s;

	if (__builtin_add_overflow(a, b, &s))
		return (b < 0 ? INT64_MIN : INT64_MAX);
	return (s);
}

int q_res_new(struct hwtr_q_res **resp, size_t ncols,
    const char *const *names);
/* Append one cell to the last row (rows fill left to right). */
int q_res_push(struct hwtr_q_res *res, enum hwtr_q_type type, const char *s);
int q_res_pushf(struct hwtr_q_res *res, enum hwtr_q_type type,
    const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int q_res_push_int(struct hwtr_q_res *res, int64_t v);
/* Append a cell of @len bytes, @w code points wide (no NUL needed). */
int q_res_push_n(struct hwtr_q_res *res, enum hwtr_q_type type,
    const char *s, size_t len, size_t w);
/*
 * Let @res stream: when the answer is being streamed (q->out), a full block
 * of rows is rendered and written by q_res_row_end, and its memory reused.
 * Only verbs whose rows are final once pushed call it.
 */
void q_res_stream(struct hwtr_q *q, struct hwtr_q_res *res);
/*
 * Column @col of a long table is at least as wide as @v printed (an upper
 * bound of its values the verb knows cheaply, such as the largest call
 * id): applied only when the answer is longer than one block, so that
 * later blocks need not widen it; a short answer is aligned on its rows.
 */
void q_res_hint(struct hwtr_q_res *res, size_t col, int64_t v);
/* A row is complete: write the block if it is full (streamed results). */
int q_res_row_end(struct hwtr_q *q, struct hwtr_q_res *res);
/* The same after pushes whose or'ed results are @pushed (q_stmt.c). */
int q_res_row_done(struct hwtr_q *q, struct hwtr_q_res *res, int pushed);

/* Display width of @len bytes of UTF-8 text. */
size_t q_dwidth(const char *s, size_t len);
/* The writer (q_fmt.c): init, blocks of rows, the end, free. */
void q_out_init(struct q_out *out, enum hwtr_q_format fmt, int width,
    int (*sink)(void *, const char *, size_t), void *arg);
/* @more: rows will follow (a streamed block), so width hints apply. */
int q_out_rows(struct q_out *out, struct hwtr_q_res *res, int more);
int q_out_end(struct q_out *out, struct hwtr_q_res *res);
void q_out_fini(struct q_out *out);
/* Decimal and "0x" hex (as SQLite's printf('%#x'): "0" for 0) into @buf. */
size_t q_fmt_i64(char *buf, int64_t v);
size_t q_fmt_hex(char *buf, uint64_t v);

/*
 * Run @sql with the integer/text parameters in @binds (a printf-like
 * signature string: 'i' int64_t, 's' const char *, 'n' NULL) and return
 * every row as a result, with the statement's column names.
 */
int q_select(struct hwtr_q *q, struct hwtr_q_res **resp, const char *sql,
    const char *sig, ...);
/* Append the rows of @st (already bound) to @res; steps to the end. */
int q_res_fill(struct hwtr_q *q, struct hwtr_q_res *res, sqlite3_stmt *st);
int q_prepare(struct hwtr_q *q, sqlite3_stmt **stp, const char *sql);
/*
 * Reset @st, bind ?1 = @a and ?2 = @b (a thread and a position in it, as
 * the probes of a search), and step it once: sqlite3_step()'s result.
 */
int q_step2(sqlite3_stmt *st, int64_t a, int64_t b);
int q_bindv(struct hwtr_q *q, sqlite3_stmt *st, const char *sig, va_list ap);
/* One integer from @sql (first column of the first row), or @dflt. */
int q_thread_of_tid(struct hwtr_q *q, int64_t tid, int64_t *idp);
int q_int(struct hwtr_q *q, int64_t *vp, int64_t dflt, const char *sql,
    const char *sig, ...);
/*
 * One more than the largest block id into *@np (0 for none): the size of
 * an array by block id.  index numbers blocks from 0 up, so ids far past
 * the rows' count are a damaged database, which would make the array
 * gigabytes: an error, prefixed with "@what: " (NULL: none).
 */
int q_blocks_span(struct hwtr_q *q, const char *what, int64_t *np);

/*
 * Symbol ids whose name matches @pattern (glob when it has * ? [), as a
 * SQL list "(1,2,3)" in *listp (malloc'd).  No match: -HWTR_E_NOENT with
 * a message that suggests the closest names.
 */
int q_sym_ids(struct hwtr_q *q, const char *what, const char *pattern,
    char **listp);
/*
 * Whether the demangled symbol name @name is one @pattern names, as gdb's
 * linespecs match (q_names.c): in any scope, every overload and template
 * instance, a qualified pattern narrowing it.  Names and patterns of any
 * length and depth of scopes.  1 it is, 0 it is not, -HWTR_E_NOMEM out of
 * memory (a long name takes memory in proportion).
 */
int q_name_match(const char *name, const char *pattern);
/* The same with @pattern parsed once (q_pat_new(): NULL out of memory). */
struct q_pat;
struct q_pat *q_pat_new(const char *pattern);
int q_pat_match(const struct q_pat *p, const char *name);
void q_pat_free(struct q_pat *p);
/*
 * The end of the demangled name @name that a pattern shaped as @p would
 * spell to name it: as many components as @p has, joined by "::" (Go's
 * '.'), each without the template arguments or Go package path @p's does
 * not have ("Sq::area" of "int geo::Sq::area() const" for "Sq::aera"),
 * for a suggestion to name a function as people type it.  1 with it in
 * *@tailp (malloc'd), 0 when @name has no such end or @p has parameters
 * (then the whole name is), -HWTR_E_NOMEM out of memory.
 */
int q_name_tail(const char *name, const struct q_pat *p, char **tailp);
/*
 * A string every name @pattern matches contains (its last component,
 * bare), for a first cut in SQL; malloc'd, NULL out of memory.
 */
char *q_name_key(const char *pattern);
/*
 * Symbol names by id, each read once from the symbols table (a long answer
 * names the same few functions over and over).  @hash is FNV-1a of the
 * name, for callers that compare names.
 */
struct q_name {
	int		used;
	int64_t		id;
	const char	*name;		/* NULL: no such symbol */
	uint32_t	len, w;
	uint64_t	hash;
};
struct q_names {
	sqlite3_stmt	*st;
	struct q_name	*tab;		/* open addressing on id */
	size_t		cap, n;
	struct q_str	pool;		/* names, NUL-separated */
	char		**blocks;	/* full pools, kept: names point in */
	size_t		nblocks;
};
/* The entry of symbol @id (name NULL when it has none); NULL on failure. */
const struct q_name *q_name_get(struct hwtr_q *q, struct q_names *nm,
    int64_t id);
void q_names_free(struct q_names *nm);
uint64_t q_hash(const char *s, size_t len);

/* Check that thread @id exists (-HWTR_E_NOENT naming the threads). */
int q_check_thread(struct hwtr_q *q, int64_t id);
/*
 * The exact sum of integer column @col of the rows of @table that @where
 * selects (NULL: all; ?1 is @arg), into *@sump; past int64's range (a
 * corrupt database), -HWTR_E_FORMAT with a message that names @verb, the
 * column and its largest row by @who, an SQL expression ("'thread ' ||
 * id").  The arguments are SQL text of the program, never input.
 */
int q_sum_int(struct hwtr_q *q, const char *verb, const char *table,
    const char *col, const char *who, const char *where, int64_t arg,
    int64_t *sump);
/*
 * After @verb's SQL failed with SQLite's "integer overflow" (a sum of a
 * corrupt database's counts): -HWTR_E_FORMAT, with a message that names
 * the column and its largest row.
 */
int q_sum_explain(struct hwtr_q *q, const char *verb);
/*
 * sum(@x) of integers in SQL, or SQLite's "integer overflow" (then
 * q_sum_explain()) where a term is past 2^63: SQLite turns a product
 * that overflows into a real, silently, and sums on in reals.  The same
 * sum(@x) twice is computed once.
 */
#define Q_ISUM(x)							\
	"(CASE WHEN typeof(sum(" x ")) = 'real' THEN abs(-9223372036854775807 " \
	"- 1) ELSE sum(" x ") END)"
/* @a * @b, integers, the same way. */
#define Q_IMUL(a, b)							\
	"(CASE WHEN typeof(" a " * " b ") = 'real' THEN abs("		\
	"-9223372036854775807 - 1) ELSE " a " * " b " END)"
/* @who for q_sum_int() over threads and streams. */
#define Q_WHO_THREAD	"'thread ' || id || coalesce(', tid ' || tid, '')"
#define Q_WHO_STREAM	"'stream ' || id || coalesce(' ' || quote(name), '')"
int q_sql_ready(struct hwtr_q *q, struct q_str *sql, int64_t thread);

/* Write @len bytes to @path through "@path.partial" and a rename. */
int q_write_file(struct hwtr_q *q, const char *path, const char *buf,
    size_t len);
/*
 * The same in steps, for a file written as it is made (export): open
 * "@path.partial", write blocks, then commit (close, rename) or abort
 * (close, unlink).  @path is borrowed until commit or abort.
 */
struct q_wfile {
	const char	*path;
	char		*tmp;
	int		fd;
};
int q_wf_open(struct hwtr_q *q, struct q_wfile *wf, const char *path);
int q_wf_write(struct hwtr_q *q, struct q_wfile *wf, const char *buf,
    size_t len);
int q_wf_commit(struct hwtr_q *q, struct q_wfile *wf);
void q_wf_abort(struct q_wfile *wf);

void q_str_add(struct q_str *s, const char *p, size_t n);
void q_str_puts(struct q_str *s, const char *p);
void q_str_printf(struct q_str *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void q_str_put(void *arg, const char *p, size_t len);	/* hwtr_put_fn */

int q_cov(struct hwtr_q *q, const struct hwtr_q_req *req,
    struct hwtr_q_res **resp);
int q_tree(struct hwtr_q *q, const struct hwtr_q_req *req,
    struct hwtr_q_res **resp);
int q_export(struct hwtr_q *q, const struct hwtr_q_req *req,
    struct hwtr_q_res **resp);
/* bt (q_bt.c), calls and func (q_calls.c), sql (q_sql.c). */
int q_bt(struct hwtr_q *q, const struct hwtr_q_req *req,
    struct hwtr_q_res **resp);
int q_calls(struct hwtr_q *q, const struct hwtr_q_req *req,
    struct hwtr_q_res **resp);
int q_func(struct hwtr_q *q, const struct hwtr_q_req *req,
    struct hwtr_q_res **resp);
int q_sql(struct hwtr_q *q, const struct hwtr_q_req *req,
    struct hwtr_q_res **resp);
/* timeline, streamed (q_time.c). */
int q_timeline(struct hwtr_q *q, const struct hwtr_q_req *req,
    struct hwtr_q_res **resp);
/*
 * An instruction range (--from, --to) of one thread as positions of its
 * blocks: the blocks holding instructions insn_lo and insn_hi and those
 * between.  @on is 0 when neither bound was given.  Instruction numbers
 * are a thread's own, so a range is of --thread, or the first thread.
 */
struct q_rng {
	int		on;
	int64_t		thread, insn_lo, insn_hi, seq_lo, seq_hi;
	/*
	 * --depth on hot and coverage (q_range_depth): the counts are in
	 * temp.q_cnt, of r->thread (-1: every thread), and @on is set.
	 */
	int		cnt;
};
int q_range(struct hwtr_q *q, const struct hwtr_q_req *req,
    const char *what, struct q_rng *r);
/*
 * q_range, then with --depth the counts of what ran in it that deep into
 * temp.q_cnt (with @always, those of a range without --depth too).
 */
int q_range_depth(struct hwtr_q *q, const struct hwtr_q_req *req,
    const char *what, struct q_rng *r, int always);
/* Its second half, for @r as q_range() set it. */
int q_range_count(struct hwtr_q *q, const struct hwtr_q_req *req,
    const char *what, struct q_rng *r, int always);

/*
 * The calls of thread ?1 entered at instructions ?6 to ?7, at most ?2
 * deep: searched as those entered in blocks ?4 to ?5 (the blocks holding
 * ?6 and ?7), which the calls table reads by page.
 */
#define Q_CALLS_RANGE_WHERE						\
	"WHERE c.thread = ?1 AND c.entry_seq >= ?4 AND c.entry_seq <= ?5 "	\
	"AND c.entry_insn >= ?6 AND c.entry_insn <= ?7 AND c.depth <= ?2 "	\
	"ORDER BY c.entry_seq, c.id LIMIT ?3"
/*
 * tree over a range: the calls with ids ?3 to ?4 (those of thread ?1
 * entered in the range's blocks) entered at instructions ?5 to ?6, at
 * most ?2 deep.  "+c.thread": the id range is the search, not the
 * thread's pages, which SQLite would otherwise read for the whole thread.
 */
#define Q_TREE_RANGE_WHERE						\
	"WHERE c.id BETWEEN ?3 AND ?4 AND +c.thread = ?1 AND c.depth <= ?2 "	\
	"AND c.entry_insn >= ?5 AND c.entry_insn <= ?6 ORDER BY c.id"
/* The block (seq) of thread ?1 that holds its instruction ?2. */
#define Q_SEQ_OF_INSN							\
	"SELECT seq FROM exec_insns WHERE thread = ?1 AND insn = ?2"
/* The first call of thread ?1 entered at or after block ?2 ... */
#define Q_CALL_FIRST_FROM						\
	"SELECT id FROM calls WHERE thread = ?1 AND entry_seq >= ?2 ORDER "	\
	"BY entry_seq, id LIMIT 1"
/* ... and the last entered at or before it. */
#define Q_CALL_LAST_UPTO						\
	"SELECT id FROM calls WHERE thread = ?1 AND entry_seq <= ?2 ORDER "	\
	"BY entry_seq DESC, id DESC LIMIT 1"
/*
 * q_walk.c: the calls of thread ?1 in entry order, from block ?2 to ?5,
 * resuming after the call with entry_seq ?3 and id ?4 (INT64_MIN: from
 * the start), entered at instructions ?6 to ?7, through calls_thread
 * (the instructions only filter the blocks at the ends).  A walk at most D deep seeks past
 * each call at depth D (its callees are deeper): it reads the calls it
 * returns, not the thread.
 */
#define Q_WALK_WHERE							\
	"WHERE thread = ?1 AND entry_seq >= ?2 AND entry_seq <= ?5 AND "	\
	"(entry_seq > ?3 OR id > ?4) AND entry_insn >= ?6 AND entry_insn <= "	\
	"?7 ORDER BY entry_seq, id"
/* The last call of thread ?1 entered at or before block ?2. */
#define Q_WALK_INNER							\
	"SELECT id, depth, entry_seq, exit_seq, parent FROM calls WHERE "	\
	"thread = ?1 AND entry_seq <= ?2 ORDER BY entry_seq DESC, id DESC "	\
	"LIMIT 1"
/* The blocks ?2 to ?3 of thread ?1, in order. */
#define Q_WALK_BLOCKS							\
	"SELECT seq, block FROM exec_order WHERE thread = ?1 AND seq >= ?2 "	\
	"AND seq <= ?3 ORDER BY seq"
/*
 * What hot and coverage --depth count: temp.q_cnt (q_depth_counts), and
 * per function, by thread key ?2 and block (its primary key), the blocks
 * of the function first (CROSS JOIN: temp.q_cnt has no statistics, and
 * read first it is read once per function).
 */
#define Q_CNT_FN_SUM							\
	"(SELECT sum(c.count * b.ninsns) FROM " Q_FN_BLOCKS " CROSS JOIN "	\
	"temp.q_cnt c ON c.thread = ?2 AND c.block = b.id WHERE "	\
	Q_FN_ALIASES ")"
/*
 * The blocks of function s: the index names each block by one symbol,
 * the first of the aliases at its address (indexer/elfsym.c), so an
 * alias (__GI_memcpy, _IO_printf) holds the blocks of the symbols at
 * its address, not none.  The symbols first (CROSS JOIN), then their
 * blocks by index: `b.symbol IN (SELECT ...)` read every block for
 * each function.
 */
#define Q_FN_BLOCKS	"symbols a CROSS JOIN blocks b ON b.symbol = a.id"
#define Q_FN_ALIASES	"a.image = s.image AND a.addr = s.addr"
/* The same over every thread's counts, and over thread ?2's. */
#define Q_FN_SUM_ALL							\
	"(SELECT " Q_ISUM("max(b.exec_count, 0) * b.ninsns") " FROM "	\
	Q_FN_BLOCKS " WHERE " Q_FN_ALIASES ")"
#define Q_FN_SUM_THREAD							\
	"(SELECT " Q_ISUM("max(c.count, 0) * b.ninsns") " FROM "	\
	Q_FN_BLOCKS " CROSS JOIN block_counts c ON c.thread = ?2 AND "	\
	"c.block = b.id WHERE " Q_FN_ALIASES ")"
#define Q_DEPTH_COUNTS							\
	"(SELECT thread, block, count FROM temp.q_cnt WHERE ?3 = ?3 AND "	\
	"?4 = ?4)"
/* The same per block (it holds the threads asked for alone; ?1 unused). */
#define Q_DEPTH_BLOCKS							\
	"(SELECT block, sum(count) AS count FROM temp.q_cnt WHERE ?1 = ?1 "	\
	"GROUP BY block)"

struct q_walk {
	struct hwtr_q	*q;
	sqlite3_stmt	*st;	/* id, depth, entry_seq, exit_seq, cols... */
	int64_t		thread, maxdepth, seq_hi;
	int64_t		rel, base;	/* q_walk_relative(): its depth, roots' */
	int		relative;
	int		skip;	/* seek past the last row if the next is in it */
	int64_t		skip_seq, skip_es, skip_id;
	int64_t		nseek;	/* seeks made (tests, figures) */
};
/*
 * Open a walk of thread @thread's calls entered in blocks @seq_lo to
 * @seq_hi, at most @maxdepth deep (-1: any), with the extra columns
 * @cols (SQL over calls; NULL: none) from column 4 of w->st on.
 */
int q_walk_open(struct hwtr_q *q, struct q_walk *w, const char *cols,
    int64_t thread, int64_t maxdepth, int64_t seq_lo, int64_t seq_hi);
/* The same walk (its statement kept) again over other blocks and depth. */
void q_walk_rewind(struct q_walk *w, int64_t maxdepth, int64_t seq_lo,
    int64_t seq_hi);
/* Only calls entered at instructions @lo to @hi (a range's ends). */
void q_walk_insns(struct q_walk *w, int64_t lo, int64_t hi);
/*
 * At most @maxdepth (>= 0) below the walk's roots rather than the
 * thread's: the first call it reads and each later one as shallow or
 * shallower (its caller was entered before the walk's first block).
 */
void q_walk_relative(struct q_walk *w, int64_t maxdepth);
/* 1: a row in w->st (valid until the next step), 0: the end, < 0. */
int q_walk_step(struct q_walk *w);
void q_walk_close(struct q_walk *w);
struct q_span {
	int64_t		id, depth, entry_seq, exit_seq;
};
/*
 * The first call of the chain of tail calls that call @id (entered at
 * block @seq, at depth @depth, with entry_kind @kind) ends: *@headp, @id
 * itself when it is no tail call, -1 when not in the table.
 */
int q_tail_head(struct hwtr_q *q, int64_t thread, int64_t id, int64_t seq,
    int64_t depth, const char *kind, int64_t *headp);
/*
 * The call site below the tail call entered at block @seq, @depth deep:
 * that of the call its chain began with, whose call_ip it kept; sets
 * *@seqp to the block after that call instruction and *@insnp to the
 * instruction's position (left as they are when the head is not in the
 * table).
 */
int q_tail_site(struct hwtr_q *q, int64_t thread, int64_t seq, int64_t depth,
    int64_t *seqp, int64_t *insnp);
/* 1 in *@untracedp when the callers of root call @id are not traced. */
int q_root_untraced(struct hwtr_q *q, int64_t thread, int64_t id,
    int *untracedp);
/* The calls open at block @seq, at most @maxdepth deep, innermost first. */
int q_walk_stack(struct hwtr_q *q, int64_t thread, int64_t seq,
    int64_t maxdepth, struct q_span **frp, size_t *np);
/*
 * Fill temp.q_cnt (thread, block, count) with the blocks that thread
 * @thread (-1: every thread, summed under thread -1) ran at most @depth
 * deep (not in its calls at depth @depth + 1; -1: all), over the range
 * @r when it is on (of r->thread).
 */
int q_depth_counts(struct hwtr_q *q, const struct q_rng *r, int64_t thread,
    int64_t depth);

/*
 * The seq of the first clock reading of @thread at ns >= @t (absolute),
 * or -1; @st is "SELECT seq, ns FROM timestamps WHERE thread = ?1 AND
 * seq >= ?2 AND ns IS NOT NULL ORDER BY seq LIMIT 1" (a bisection).
 */
int q_ts_seq(struct hwtr_q *q, sqlite3_stmt *st, int64_t thread,
    int64_t nblocks, int64_t t, int64_t *seqp);
/* Its statement; and the time of the last reading before block ?2. */
#define Q_TS_NEXT							\
	"SELECT seq, ns FROM timestamps WHERE thread = ?1 AND seq >= ?2 AND "	\
	"ns IS NOT NULL ORDER BY seq LIMIT 1"
#define Q_TS_PREV							\
	"SELECT ns FROM timestamps WHERE thread = ?1 AND seq < ?2 AND ns IS "	\
	"NOT NULL ORDER BY seq DESC LIMIT 1"

/*
 * timeline (q_time.c): a probe of a bisection for a time (the first call
 * of thread ?1 with a time entered at or after block ?2), the events of
 * thread ?1 between times ?2 and ?3, and those of its blocks ?2 to ?3.
 */
#define Q_TL_PROBE							\
	"SELECT entry_ns, entry_seq FROM calls WHERE thread = ?1 AND "	\
	"entry_seq >= ?2 AND entry_ns IS NOT NULL ORDER BY entry_seq LIMIT 1"
#define Q_TL_EVENTS							\
	"SELECT ns, seq, id, kind, detail FROM events WHERE thread = ?1 AND "	\
	"ns IS NOT NULL AND ns >= ?2 AND ns <= ?3 ORDER BY ns, seq, id"
#define Q_TL_EVENTS_RANGE						\
	"SELECT ns, seq, id, kind, detail FROM events WHERE thread = ?1 AND "	\
	"seq >= ?2 AND seq <= ?3 ORDER BY seq, id"

/* q_prof.c: annotate, hot --by line and image, export --folded. */
int q_annotate(struct hwtr_q *q, const struct hwtr_q_req *req,
    struct hwtr_q_res **resp);
int q_hot_lines(struct hwtr_q *q, const struct hwtr_q_req *req,
    struct hwtr_q_res **resp);
int q_folded(struct hwtr_q *q, const struct hwtr_q_req *req,
    struct hwtr_q_res **resp);
/*
 * The source lines thread @thread (-1: all) executed, "path:line" with
 * the instructions executed there and a function, sorted by place (strcmp).
 */
struct q_pline {
	char		*place, *func;
	int64_t		insns;
};
int q_prof_lines(struct hwtr_q *q, int64_t thread, struct q_pline **plp,
    size_t *np);
void q_plines_free(struct q_pline *pl, size_t n);

/* SQL fragments: a function+offset and a file:line of a block alias. */
#define Q_FUNC(b, s, extra)						\
	"CASE WHEN " s ".name IS NULL THEN NULL WHEN coalesce(" b		\
	".sym_offset, 0) + (" extra ") = 0 THEN " s ".name ELSE " s ".name"	\
	" || '+' || printf('%#x', coalesce(" b ".sym_offset, 0) + (" extra	\
	")) END"
#define Q_LINE(b, f)							\
	"CASE WHEN " f ".path IS NULL THEN NULL ELSE " f ".path || ':' || "	\
	b ".line END"

/*
 * The source line of the instruction at offset @off of block b: the line
 * row at or before it, but not before the start of its function, since
 * the lines table has no end-of-sequence rows and code without line
 * information (libc in a static binary) would otherwise borrow the last
 * line of the function before it.
 */
#define Q_ADDR_LINE(off)						\
	"(SELECT lf.path || ':' || l.line FROM lines l JOIN files lf ON "	\
	"lf.id = l.file WHERE l.image = b.image AND l.addr <= b.image_addr "	\
	"+ (" off ") AND l.addr >= coalesce((SELECT addr FROM symbols WHERE "	\
	"id = b.symbol), 0) ORDER BY l.addr DESC LIMIT 1)"
#define Q_INSN_LINE	Q_ADDR_LINE("e.ip - b.start_ip")

/*
 * Where thread ?1's trace stopped for good, when the event that ended it
 * carries an address: the instruction that did not complete (a fault, a
 * signal, the thread killed), which no block row shows since it never
 * retired.  Named from the mapping live at the event's time, as a block
 * is; @pos is the event's column for the position (seq or insn), @what
 * the SQL of the columns after the line.  No row when the trace ends
 * otherwise (a system call, the end of the capture) or resumes later.
 */
#define Q_STOP_SQL(pos, what)						\
	"WITH ev AS (SELECT e.id, e.thread, e." pos " AS pos, e.ip, e.tsc, "	\
	"e.pid FROM events e JOIN threads t ON t.id = e.thread WHERE "	\
	"e.thread = ?1 AND e.ip IS NOT NULL AND e.kind IN ('disabled', "	\
	"'async-disabled') AND e.seq >= t.blocks ORDER BY e.id DESC "	\
	"LIMIT 1), m AS (SELECT ev.*, mp.image, ev.ip - mp.bias AS a FROM "	\
	"ev LEFT JOIN mappings mp ON mp.pid = ev.pid AND ev.ip >= "		\
	"mp.start_ip AND ev.ip < mp.end_ip AND (mp.from_tsc IS NULL OR "	\
	"ev.tsc IS NULL OR mp.from_tsc <= ev.tsc) AND (mp.to_tsc IS NULL "	\
	"OR ev.tsc IS NULL OR ev.tsc <= mp.to_tsc) ORDER BY mp.id DESC "	\
	"LIMIT 1), s AS (SELECT m.*, sy.name, sy.addr AS saddr FROM m "	\
	"LEFT JOIN symbols sy ON sy.image = m.image AND sy.addr <= m.a AND "	\
	"m.a < sy.addr + sy.size ORDER BY sy.addr DESC LIMIT 1) "		\
	"SELECT s.thread, CASE WHEN hwtr_tail_cut(s.thread) THEN NULL ELSE "	\
	"s.pos END, printf('%#x', s.ip), CASE WHEN s.name IS "		\
	"NULL THEN NULL WHEN s.a = s.saddr THEN s.name ELSE s.name || '+' "	\
	"|| printf('%#x', s.a - s.saddr) END, (SELECT lf.path || ':' || "	\
	"l.line FROM lines l JOIN files lf ON lf.id = l.file WHERE l.image "	\
	"= s.image AND l.addr <= s.a AND l.addr >= coalesce(s.saddr, 0) "	\
	"ORDER BY l.addr DESC LIMIT 1), " what " FROM s WHERE NOT EXISTS "	\
	"(SELECT 1 FROM events r WHERE r.thread = s.thread AND r.id > s.id "	\
	"AND r.kind IN ('enabled', 'resumed'))"

/*
 * The ids of the roots (parent NULL, depth 0) of thread ?1 (or of all
 * threads, ?1 < 0), found through the entry order alone, a lookup per root:
 * the roots of a thread follow each other, each from where the one before
 * returned, and hold every other call of the thread.  So a thread's first
 * call is a root, and the call after root R is the first one entered at
 * or after R's exit_seq.  (There is no index on parent: building it took
 * a few seconds of every large index run, for this query alone.)
 */
#define Q_CALLS_ROOTS							\
	"WITH RECURSIVE sel(id) AS (SELECT (SELECT c.id FROM calls c "	\
	"WHERE c.thread = t.id ORDER BY c.entry_seq, c.id LIMIT 1) FROM "	\
	"threads t WHERE ?1 < 0 OR t.id = ?1 UNION ALL SELECT (SELECT "	\
	"c.id FROM calls c WHERE c.thread = p.thread AND c.entry_seq >= "	\
	"p.exit_seq AND c.id > p.id ORDER BY c.entry_seq, c.id LIMIT 1) "	\
	"FROM sel JOIN calls p ON p.id = sel.id) "

/*
 * The start of the trace, the zero of every *_ns column shown relative:
 * the first decoded time of a thread, else the capture's start.
 */
#define Q_T0_SQL							\
	"SELECT coalesce((SELECT min(first_ns) FROM threads), (SELECT "	\
	"CAST(value AS INTEGER) FROM meta WHERE key = 'start_ns'), 0)"

/* q_lazy.c: partial (tail) databases and the lazy verbs. */
#define Q_TAIL_BYTES	(256u << 10)	/* decoded per thread: last, bt */
int q_db_open(struct hwtr_q *q, const char *path);
int q_lazy_open(struct hwtr_q *q);
int q_lazy_need(struct hwtr_q *q, const struct hwtr_q_req *req);
int q_lazy_cut(const struct hwtr_q *q, int64_t thread);
int q_lazy_index(struct hwtr_q *q, const char *archive, const char *db,
    uint64_t tail);

/*
 * q_gaps.c: find what the trace lost in the range @req answers over (into
 * q->lost, before the verb runs), name bt's frames entered before a gap,
 * and add export --folded's "[gap]" frames to @o (*@np lines).
 */
int q_lost_find(struct hwtr_q *q, const struct hwtr_q_req *req);
int q_lost_bt(struct hwtr_q *q, struct hwtr_q_res *res);
int q_lost_folded(struct hwtr_q *q, struct q_str *o, int multi, int64_t *np);
void q_lost_clear(struct q_lost *l);

/* Inlined frames (q_inline.c, the inlines table of hwtr-db(5)). */
struct q_inl_frame {
	char		*name;		/* the inlined function */
	char		*site;		/* "file:line" it was inlined at */
	int		at_start;	/* the address is the instance's first */
};
/* Whether the database has inlined instances (an older one has none). */
int q_inl_on(struct hwtr_q *q);
/*
 * The instances containing run-time address @addr, innermost first, at
 * most @max into @out (*@np of them; q_inl_chain_free() them, also on
 * error).  *@stp is the statement, prepared on first use.
 */
int q_inl_chain(struct hwtr_q *q, sqlite3_stmt **stp, uint64_t addr,
    struct q_inl_frame *out, size_t max, size_t *np);
void q_inl_chain_free(struct q_inl_frame *f, size_t n);
/*
 * bt: one row (columns thread, frame, function, address, line, call,
 * insn, inlined; @call, @insn -1: NULL), and a frame at @addr after one
 * row per function inlined there (@inl: the database has inlines; *@chain
 * the statement of q_inl_chain), numbered from *@frame on.
 */
int q_bt_row(struct hwtr_q *q, struct hwtr_q_res *res, int64_t thread,
    int64_t frame, const char *func, int has_addr, uint64_t addr,
    const char *line, int64_t call, int64_t insn, int inlined);
int q_bt_frame(struct hwtr_q *q, sqlite3_stmt **chain, int inl,
    struct hwtr_q_res *res, int64_t thread, int64_t *frame, const char *func,
    int has_addr, uint64_t addr, const char *line, int64_t call, int64_t insn);
/* Whether a function named @pattern was inlined somewhere. */
int q_inl_named(struct hwtr_q *q, const char *pattern);
/*
 * The names of inlined functions @pattern names (a glob, or as func names
 * symbols), as an SQL list "('a', 'b')" in *@listp (malloc'd; NULL: none).
 */
int q_inl_names(struct hwtr_q *q, const char *pattern, char **listp);
/*
 * func's rows for the entries into inlined instances of @pattern, of
 * thread @thread (-1: all), appended to @res (func's columns).
 */
int q_inl_entries(struct hwtr_q *q, struct hwtr_q_res *res,
    const char *pattern, int64_t thread);
/*
 * hot --by inline: instructions by function, those of inlined code by the
 * innermost function inlined there (columns function, inlined, image,
 * insns, percent), the @n largest, of thread @thread (-1: all).
 */
int q_inl_hot(struct hwtr_q *q, struct hwtr_q_res **resp, int64_t thread,
    int64_t n);
/*
 * One run of an inlined instance (export --perfetto): from an entry into
 * it to where its frame next runs an instruction outside it, or returns
 * (callees it makes meanwhile inside); strings valid during the callback.
 */
struct q_inl_run {
	const char	*name;		/* the inlined function */
	const char	*site;		/* "file:line" inlined at; NULL */
	int64_t		call;		/* its frame's call; -1: none */
	int64_t		depth;		/* that call's depth; -1: none */
	int64_t		level;		/* 1: inlined into the function */
	int64_t		entry_insn;	/* instruction positions [,) */
	int64_t		exit_insn;
};
/*
 * @fn(@arg, run) for each run of thread @thread entered in blocks @seq_lo
 * to @seq_hi (runs entered before @seq_lo, or at the first instruction a
 * frame runs from there, are left out), each when it ends.  < 0 from @fn
 * stops the walk and is returned.
 */
int q_inl_runs(struct hwtr_q *q, int64_t thread, int64_t seq_lo,
    int64_t seq_hi, int (*fn)(void *, const struct q_inl_run *), void *arg);

#endif /* !HWTR_Q_INT_H */
