#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# call_paths (hwtrace-db(5)): the calls merged by call path at index time,
# which tree and export --folded read instead of every call (issue 29
# item 6).  Checked against sqlite3 itself: a recursive query over the
# calls table, following each call's parent and grouping by the path of
# names, gives per path the number of calls and the sums of insns,
# self_insns and exit_ns - entry_ns; both call_paths (merged by name the
# same way) and tree's rows must agree with it, on the synthetic history of
# tests/query/mkdb.c and on valgrind captures of the threads fixture
# (four threads) and the recurse fixture (deep paths).

. "$(atf_get_srcdir)/../env.sh"
. "$HWTRACE_SRC/tests/lib/hwtr_test.sh"

# q DB SQL: sqlite3's answer as CSV, hwtrace's extension loaded (the
# calls virtual table).
q()
{
	sqlite3 -batch -noheader -csv -cmd ".load $HWTRACE_BUILD/hwtrace_sqlite" \
	    "$1" "$2" 2> q.err || atf_fail "sqlite3 failed on '$2': $(cat q.err)"
}

# The reference: per (thread, path of names from the root) the calls,
# insns, self_insns and duration, from the calls' parent links.  Names
# as tree writes them: the symbol's, else the address in hex.
REF_SQL="CREATE TEMP TABLE c AS SELECT c.id, c.thread, c.parent,
    coalesce(s.name, printf('0x%x', c.func_ip)) AS name, c.insns,
    c.self_insns, c.exit_ns - c.entry_ns AS dur
    FROM calls c LEFT JOIN symbols s ON s.id = c.symbol;
CREATE INDEX temp.c_parent ON c(parent);
WITH RECURSIVE p(id, thread, path) AS (
    SELECT id, thread, name FROM c WHERE parent IS NULL
    UNION ALL SELECT c.id, c.thread, p.path || '/' || c.name
    FROM c JOIN p ON c.parent = p.id)
SELECT p.thread, p.path, count(*), sum(c.insns), sum(c.self_insns),
    sum(c.dur) FROM p JOIN c USING (id) GROUP BY 1, 2 ORDER BY 1, 2;"

# The same from call_paths: its rows merged by path of names.
PATHS_SQL="WITH RECURSIVE p(id, thread, path) AS (
    SELECT cp.id, cp.thread, coalesce(s.name, printf('0x%x', cp.func_ip))
    FROM call_paths cp LEFT JOIN symbols s ON s.id = cp.symbol
    WHERE cp.parent IS NULL
    UNION ALL SELECT cp.id, cp.thread, p.path || '/' ||
    coalesce(s.name, printf('0x%x', cp.func_ip))
    FROM call_paths cp JOIN p ON cp.parent = p.id
    LEFT JOIN symbols s ON s.id = cp.symbol)
SELECT p.thread, p.path, sum(cp.calls), sum(cp.insns), sum(cp.self_insns),
    sum(cp.duration_ns) FROM p JOIN call_paths cp USING (id)
    GROUP BY 1, 2 ORDER BY 1, 2;"

# check DB WHAT: call_paths and tree of DB against the reference.
check()
{
	q "$1" "$REF_SQL" > ref
	n=$(wc -l < ref)
	[ "$n" -gt 2 ] || atf_fail "$2: expected the reference to have more" \
	    "than 2 paths, got $n"
	q "$1" "SELECT count(*) FROM sqlite_master WHERE name = 'call_paths'" \
	    > has
	[ "$(cat has)" = 1 ] || atf_fail "$2: expected a call_paths table," \
	    "got none"
	q "$1" "$PATHS_SQL" > paths
	cmp -s ref paths || atf_fail "$2: expected call_paths merged by path to" \
	    "be the calls grouped by path (sqlite3), got:" \
	    "$(diff ref paths | head -n 6 | tr "\n" " ")"
	# tree: thread,depth,function,calls,insns,self_insns,duration_ns,path
	"$HWTRACE" query "$1" tree --format csv > tree.csv 2> tree.err ||
	    atf_fail "$2: tree failed: $(cat tree.err)"
	awk -F, 'NR > 1 { print $1 "," $8 "," $4 "," $5 "," $6 "," $7 }' \
	    tree.csv | LC_ALL=C sort > tree.got
	LC_ALL=C sort ref > ref.sorted
	cmp -s ref.sorted tree.got || atf_fail "$2: expected tree's rows to be" \
	    "the calls grouped by path (sqlite3), got:" \
	    "$(diff ref.sorted tree.got | head -n 6 | tr "\n" " ")"
}

atf_test_case paths_synthetic
paths_synthetic_head() { atf_set descr "call_paths and tree of mkdb's history (28 K calls) equal sqlite3's grouping of the calls by path"; }
paths_synthetic_body()
{
	require_tools sqlite3
	"$HWTRACE_BUILD/bench/qmkdb" -s 200000 s.db > /dev/null 2> mk ||
	    atf_fail "cannot make the synthetic database: $(cat mk)"
	check s.db "synthetic"
}

# vgdb PROG: a valgrind capture of fixture PROG indexed into PROG.db.
vgdb()
{
	require_tools sqlite3
	vgcapture_status "$1" "$1.hwtrace"
	[ "$(cat capture.rc)" = 0 ] || atf_fail "capture of $1: expected" \
	    "exit 0, got $(cat capture.rc): $(head -n 3 capture.err)"
	"$HWTRACE" index -q -o "$1.db" "$1.hwtrace" 2> ix.err ||
	    atf_fail "index of $1 failed: $(cat ix.err)"
}

atf_test_case paths_threads
paths_threads_head() { atf_set descr "call_paths and tree of a capture of four threads equal sqlite3's grouping of the calls by path"; }
paths_threads_body()
{
	vgdb threads
	check threads.db "threads"
	t=$(cut -d, -f1 ref | sort -u | wc -l)
	[ "$t" = 4 ] || atf_fail "expected paths in 4 threads, got $t"
}

atf_test_case paths_recurse
paths_recurse_head() { atf_set descr "call_paths and tree of a capture of deep recursion equal sqlite3's grouping of the calls by path"; }
paths_recurse_body()
{
	vgdb recurse
	check recurse.db "recurse"
}

# same DB WHAT ARGS...: hwtrace query ARGS... on DB and on a copy without
# call_paths rows (the answer read from the calls) print the same, and
# export --folded writes the same file.
same()
{
	db=$1 what=$2
	shift 2
	( cd a && "$HWTRACE" query "../$db" "$@" > out 2>&1 )
	( cd b && "$HWTRACE" query "../nopaths.db" "$@" > out 2>&1 )
	cmp -s b/out a/out || atf_fail "$what: expected '$*' from call_paths" \
	    "to print what it prints from the calls, got:" \
	    "$(diff b/out a/out | head -n 6 | tr "\n" " ")"
	if [ -f b/f ]; then
		cmp -s b/f a/f || atf_fail "$what: expected '$*' from" \
		    "call_paths to write what it writes from the calls, got:" \
		    "$(diff b/f a/f | head -n 6 | tr "\n" " ")"
	fi
	rm -f a/f b/f
}

atf_test_case paths_same_answers
paths_same_answers_head() { atf_set descr "tree and export --folded answer the same with call_paths as from the calls (the table emptied), with inlined frames and several threads"; }
paths_same_answers_body()
{
	mkdir a b
	for p in inline cancel; do
		vgdb $p
		cp $p.db nopaths.db
		q nopaths.db "DELETE FROM call_paths" > /dev/null
		q $p.db "SELECT count(*) FROM call_paths" > n
		[ "$(cat n)" -gt 0 ] || atf_fail "$p: expected call_paths rows," \
		    "got $(cat n)"
		q $p.db "SELECT count(*) FROM inlines" > n
		[ "$p" != inline ] || [ "$(cat n)" -gt 0 ] ||
		    atf_fail "inline: expected inlines rows, got $(cat n)"
		same $p.db $p tree
		same $p.db $p tree --depth 1
		same $p.db $p tree --depth 3
		same $p.db $p tree --thread 1
		same $p.db $p export --folded f
		same $p.db $p export --folded f --depth 2
		same $p.db $p export --folded f --thread 2
	done
}

atf_test_case paths_damaged_not_read
paths_damaged_not_read_head() { atf_set descr "a call_paths table whose calls do not add up to the calls, or whose ids are not 1..N, is not read: tree answers from the calls"; }
paths_damaged_not_read_body()
{
	mkdir a b
	vgdb threads
	cp threads.db nopaths.db
	q nopaths.db "DELETE FROM call_paths" > /dev/null
	# Answers from the calls (nopaths.db), then from damaged tables.
	cp threads.db sums.db
	q sums.db "UPDATE call_paths SET calls = calls + 1 WHERE id = 2" \
	    > /dev/null
	cp threads.db ids.db
	q ids.db "UPDATE call_paths SET id = (SELECT max(id) + 5 FROM
	    call_paths) WHERE id = 2" > /dev/null
	for d in sums.db ids.db; do
		same $d "damaged $d" tree
		same $d "damaged $d" tree --depth 1
		same $d "damaged $d" export --folded f
	done
}

atf_init_test_cases()
{
	atf_add_test_case paths_damaged_not_read
	atf_add_test_case paths_synthetic
	atf_add_test_case paths_threads
	atf_add_test_case paths_recurse
	atf_add_test_case paths_same_answers
}
