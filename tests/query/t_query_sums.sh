#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Copyright (c) 2026 The hwtrace authors
#
# Totals over a forged database.  The hand-written fixture (fixture.sql)
# is copied and one count set near 2^63 with the sqlite3 shell: where the
# total still fits, summary prints it exactly (the expected number is the
# shell's arithmetic on what sqlite3 reads back); where it does not, each
# verb that sums the column fails with exit 1 and a message that names
# the column and its largest row (thread or stream, as sqlite3 reads
# them), never SQLite's bare "integer overflow".

. "$(atf_get_srcdir)/../env.sh"

# forge SQL: fix.db made from the fixture, then SQL run on it.
forge()
{
	command -v sqlite3 >/dev/null 2>&1 || atf_skip "sqlite3 is not installed"
	"$HWTRACE_BUILD/bench/qmkdb" fix.db "$HWTRACE_SRC/tests/query/fixture.sql" ||
	    atf_fail "cannot make the fixture database"
	sqlite3 fix.db "$1" || atf_fail "sqlite3 could not forge: $1"
}

# fails WANT CMD...: CMD exits 1, says WANT (a fixed string) on stderr and
# not SQLite's bare message.
fails()
{
	f_want=$1
	shift
	"$@" > out 2> err
	rc=$?
	[ $rc -eq 1 ] || atf_fail "$*: expected exit 1, got $rc: $(cat err)"
	grep -qF -- "$f_want" err ||
	    atf_fail "$*: expected '$f_want' on stderr, got '$(cat err)'"
	grep -q "query failed: integer overflow" err &&
	    atf_fail "$*: SQLite's bare message: '$(cat err)'"
	return 0
}

# item NAME: summary's value of item NAME (tsv).
item()
{
	"$HWTRACE" query fix.db summary --format tsv > s.tsv 2> s.err ||
	    atf_fail "summary failed: $(cat s.err)"
	awk -F'\t' -v k="$1" '$1 == k { print $2 }' s.tsv
}

# Two threads of 2^62 instructions each: 2^63, one past the range.
BIG=4611686018427387904

atf_test_case summary_exact_near_limit
summary_exact_near_limit_head() { atf_set descr "summary totals the threads' instructions and the streams' bytes exactly up to 2^63-1"; }
summary_exact_near_limit_body()
{
	forge "UPDATE threads SET insns = 9223372036854775000 WHERE id = 1;
	    UPDATE streams SET bytes = 9223372036854775000 WHERE id = 2"
	rest=$(sqlite3 fix.db "SELECT insns FROM threads WHERE id <> 1")
	want=$((9223372036854775000 + rest))
	got=$(item instructions)
	[ "$got" = "$want" ] || atf_fail "instructions: expected $want, got '$got'"
	rest=$(sqlite3 fix.db "SELECT bytes FROM streams WHERE id <> 2")
	want=$((9223372036854775000 + rest))
	got=$(item trace_bytes)
	[ "$got" = "$want" ] || atf_fail "trace_bytes: expected $want, got '$got'"
}

atf_test_case summary_report_name_thread
summary_report_name_thread_head() { atf_set descr "threads.insns past 2^63: summary and report exit 1 naming the column and the thread (number and tid)"; }
summary_report_name_thread_body()
{
	forge "UPDATE threads SET insns = $BIG"
	tid=$(sqlite3 fix.db "SELECT tid FROM threads WHERE id = 1")
	want="the sum of threads.insns is out of the 64-bit range (largest: $BIG in thread 1, tid $tid)"
	fails "hwtrace query: summary: $want" "$HWTRACE" query fix.db summary
	[ -s out ] && atf_fail "summary: expected no rows, got $(cat out)"
	fails "$want" "$HWTRACE" report -o r.html fix.db
	[ -e r.html ] && atf_fail "report: wrote r.html from a corrupt database"
	return 0
}

atf_test_case summary_report_name_stream
summary_report_name_stream_head() { atf_set descr "streams' bytes past 2^63: summary and report exit 1 naming the column and the stream"; }
summary_report_name_stream_body()
{
	forge "UPDATE streams SET lost_bytes = $BIG"
	name=$(sqlite3 fix.db "SELECT name FROM streams WHERE id = 1")
	want="the sum of streams.lost_bytes is out of the 64-bit range (largest: $BIG in stream 1 '$name')"
	fails "summary: $want" "$HWTRACE" query fix.db summary
	fails "$want" "$HWTRACE" report -o r.html fix.db
	forge "UPDATE streams SET bytes = $BIG + 1 WHERE id = 2;
	    UPDATE streams SET bytes = $BIG WHERE id = 1"
	name=$(sqlite3 fix.db "SELECT name FROM streams WHERE id = 2")
	fails "summary: the sum of streams.bytes is out of the 64-bit range (largest: $((BIG + 1)) in stream 2 '$name')" \
	    "$HWTRACE" query fix.db summary
}

atf_test_case hot_names_thread
hot_names_thread_head() { atf_set descr "threads.insns past 2^63: hot by function, image, block, line and inline exit 1 naming the column and the thread; one thread alone, and edges, still answer"; }
hot_names_thread_body()
{
	forge "UPDATE threads SET insns = $BIG"
	tid=$(sqlite3 fix.db "SELECT tid FROM threads WHERE id = 1")
	want="hot: the sum of threads.insns is out of the 64-bit range (largest: $BIG in thread 1, tid $tid)"
	for by in function image block line inline; do
		fails "$want" "$HWTRACE" query fix.db hot --by $by
	done
	"$HWTRACE" query fix.db hot --thread 2 > out 2> err ||
	    atf_fail "hot --thread 2: expected an answer (its total fits), got $(cat err)"
	"$HWTRACE" query fix.db hot --by edge > out 2> err ||
	    atf_fail "hot --by edge: expected an answer (it needs no total), got $(cat err)"
}

atf_test_case hot_names_block
hot_names_block_head() { atf_set descr "block_counts past 2^63 in one function's sum, or one count times its block's instructions past 2^63: hot by function, image and block exit 1 naming block_counts.count and the thread and block of the largest count"; }
hot_names_block_body()
{
	# fixture.sql: block 2 runs in threads 1 and 2.
	forge "UPDATE block_counts SET count = $BIG WHERE block = 2 AND thread = 1;
	    UPDATE block_counts SET count = $BIG + 1 WHERE block = 2 AND thread = 2"
	n=$(sqlite3 fix.db "SELECT ninsns FROM blocks WHERE id = 2")
	want="hot: a sum over block_counts.count x blocks.ninsns is out of the 64-bit range (largest count: $((BIG + 1)) in thread 2, block 2 ($n instructions))"
	for by in function image; do
		fails "$want" "$HWTRACE" query fix.db hot --by $by
	done
	# One count whose instructions (count x 3) alone pass 2^63: SQLite
	# would make the product a real and answer on, silently.
	forge "UPDATE block_counts SET count = $BIG WHERE block = 2 AND thread = 1"
	want="hot: a sum over block_counts.count x blocks.ninsns is out of the 64-bit range (largest count: $BIG in thread 1, block 2 ($n instructions))"
	for by in function image block; do
		fails "$want" "$HWTRACE" query fix.db hot --by $by
	done
}

atf_test_case coverage_names_block
coverage_names_block_head() { atf_set descr "one thread's block count times its block's instructions past 2^63: coverage --thread exits 1 naming block_counts.count, the thread and the block"; }
coverage_names_block_body()
{
	forge "UPDATE block_counts SET count = $BIG WHERE block = 2 AND thread = 1"
	n=$(sqlite3 fix.db "SELECT ninsns FROM blocks WHERE id = 2")
	fails "coverage: a sum over block_counts.count x blocks.ninsns is out of the 64-bit range (largest count: $BIG in thread 1, block 2 ($n instructions))" \
	    "$HWTRACE" query fix.db coverage --thread 1
}

atf_test_case branches_diff_name_branch
branches_diff_name_branch_head() { atf_set descr "branches.count past 2^63 in one edge's sum: branches, hot --by edge and diff --first exit 1 naming branches.count, the thread and the branch"; }
branches_diff_name_branch_body()
{
	# fixture.sql: blocks 1 and 4 both end in the call at the same
	# address to block 2, one edge for branches.
	forge "UPDATE branches SET count = $BIG WHERE from_block = 1 AND to_block = 2;
	    UPDATE branches SET count = $BIG + 1 WHERE from_block = 4 AND to_block = 2"
	ips=$(sqlite3 fix.db "SELECT printf('%#x -> %#x', from_ip, to_ip) FROM branches WHERE from_block = 4 AND to_block = 2")
	want="a sum over branches.count is out of the 64-bit range (largest count: $((BIG + 1)) in thread 1, branch $ips)"
	fails "branches: $want" "$HWTRACE" query fix.db branches
	fails "hot: $want" "$HWTRACE" query fix.db hot --by edge
	mv fix.db forged.db
	forge ""
	fails "B: diff: $want" "$HWTRACE" diff --first fix.db forged.db
}

atf_init_test_cases()
{
	atf_add_test_case summary_exact_near_limit
	atf_add_test_case summary_report_name_thread
	atf_add_test_case summary_report_name_stream
	atf_add_test_case hot_names_thread
	atf_add_test_case hot_names_block
	atf_add_test_case coverage_names_block
	atf_add_test_case branches_diff_name_branch
}
