#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# export --folded and tree --depth 1 answer in a heap that does not grow
# with the number of calls (issue 29 item 6): on the synthetic history of
# tests/query/mkdb.c -s 10000000 (1.4 M calls) they run under a data limit
# (ulimit -d, the heap and private mappings; the database file mapped
# read-only is not counted) of 12 MB, where a map of every call id to its
# tree node (16 bytes a call, 23 MB) ran out of memory.  What they answer
# is checked against the counts mkdb made by construction: main calls
# w0..w63 in turn, wJ calls w(J+1) when J is a multiple of 8; mkdb prints
# the instructions and calls it wrote.  They also answer within 1 s of CPU
# time, reading a row per call path (call_paths) instead of one per call.

. "$(atf_get_srcdir)/../env.sh"

# mkdb's counts, "mkdb: B blocks, I instructions, C calls", into $insns
# and $calls.
mkhuge()
{
	"$HWTRACE_BUILD/bench/qmkdb" -s 10000000 huge.db > /dev/null 2> mk ||
	    atf_fail "cannot make the synthetic database: $(cat mk)"
	insns=$(sed -n 's/.* \([0-9]*\) instructions.*/\1/p' mk)
	calls=$(sed -n 's/.* \([0-9]*\) calls.*/\1/p' mk)
	[ -n "$insns" ] && [ -n "$calls" ] && [ "$calls" -gt 1000000 ] ||
	    atf_fail "expected mkdb's counts (over 1 M calls), got: $(cat mk)"
}

# Run "$@" with the heap limited to 12 MB; its status in $st.  A
# sanitizer build (make sanitize) maps its shadow memory at start and
# cannot load under any such limit: there only the answers are checked.
bounded()
{
	if ldd "$HWTRACE" 2>/dev/null | grep -q libasan; then
		"$@" > out 2> err
	else
		( ulimit -d 12000 && exec "$@" ) > out 2> err
	fi
	st=$?
}

atf_test_case folded_bounded_heap
folded_bounded_heap_head() { atf_set descr "export --folded over 1.4 M calls in a 12 MB heap: 73 stacks (main, main;wJ, main;w8K;w8K+1) whose weights add up to the instructions mkdb wrote"; }
folded_bounded_heap_body()
{
	mkhuge
	bounded "$HWTRACE" query huge.db export --folded f.txt
	[ "$st" = 0 ] || atf_fail "export --folded in a 12 MB heap: expected" \
	    "exit 0, got $st: $(cat err)"
	n=$(wc -l < f.txt)
	[ "$n" = 73 ] || atf_fail "expected 73 stacks, got $n"
	sum=$(awk '{ s += $NF } END { printf "%d", s }' f.txt)
	[ "$sum" = "$insns" ] || atf_fail "expected weights adding up to" \
	    "$insns instructions (mkdb), got $sum"
	# Each stack once: main, main;wJ (J < 64), main;w8K;w(8K+1).
	awk '{ print $1 }' f.txt | sort > got
	{ echo main; k=0; while [ $k -lt 64 ]; do echo "main;w$k"
		[ $((k % 8)) = 0 ] && echo "main;w$k;w$((k + 1))"
		k=$((k + 1)); done; } | sort > exp
	cmp -s exp got || atf_fail "expected the stacks main, main;wJ and" \
	    "main;w8K;w(8K+1) once each:" \
	    "$(diff exp got | head -n 4 | tr "\n" " ")"
}

# tree_depth1 LIMIT WHAT: huge.db made, tree --depth 1 of it run by
# LIMIT (bounded: heap, cpu1: CPU time) into ./out; it exits 0.
tree_depth1()
{
	mkhuge
	"$1" "$HWTRACE" query huge.db tree --depth 1 --format csv
	[ "$st" = 0 ] || atf_fail "tree --depth 1 $2: expected exit 0, got" \
	    "$st: $(cat err)"
}

# depth1_is FILE: FILE, tree --depth 1 --format csv of huge.db, has main
# called once with mkdb's instructions and 64 functions under it.
depth1_is()
{
	main=$(awk -F, '$2 == 0 { print $4 " " $5 }' "$1")
	[ "$main" = "1 $insns" ] || atf_fail "expected main called once with" \
	    "$insns instructions (mkdb), got '$main'"
	n=$(awk -F, '$2 == 1' "$1" | wc -l)
	[ "$n" = 64 ] || atf_fail "expected 64 functions under main, got $n"
}

atf_test_case tree_depth1_bounded_heap
tree_depth1_bounded_heap_head() { atf_set descr "tree --depth 1 over 1.4 M calls in a 12 MB heap: main with all the instructions mkdb wrote, w0..w63 under it, and with tree --depth 2 every call counted once"; }
tree_depth1_bounded_heap_body()
{
	tree_depth1 bounded "in a 12 MB heap"
	mv out t1
	depth1_is t1
	d1=$(awk -F, '$2 == 1 { s += $4 } END { printf "%d", s }' t1)
	bounded "$HWTRACE" query huge.db tree --depth 2 --format csv
	[ "$st" = 0 ] || atf_fail "tree --depth 2: expected exit 0, got $st"
	mv out t2
	d2=$(awk -F, '$2 == 2 { s += $4 } END { printf "%d", s }' t2)
	[ $((1 + d1 + d2)) = "$calls" ] || atf_fail "expected main, $d1 calls" \
	    "at depth 1 and $d2 at depth 2 to make mkdb's $calls calls"
	# Depth 1 of tree --depth 2 is tree --depth 1.
	awk -F, '$2 != 2' t2 | cmp -s - t1 || atf_fail "tree --depth 1" \
	    "differs from the first two levels of tree --depth 2"
}

# Run "$@" with 1 s of CPU time (ulimit -t: SIGXCPU past it); its status
# in $st.
cpu1()
{
	( ulimit -t 1 && exec "$@" ) > out 2> err
	st=$?
	[ "$st" -gt 128 ] && echo "killed by signal $((st - 128)) (the CPU" \
	    "limit)" >> err
}

atf_test_case tree_folded_within_1s_cpu
tree_folded_within_1s_cpu_head() { atf_set descr "tree --depth 1 and export --folded over 1.4 M calls within 1 s of CPU time (issue 29 item 6: they read a row per call path, not per call), answering mkdb's counts"; }
tree_folded_within_1s_cpu_body()
{
	tree_depth1 cpu1 "within 1 s of CPU"
	depth1_is out
	cpu1 "$HWTRACE" query huge.db export --folded f.txt
	[ "$st" = 0 ] || atf_fail "export --folded within 1 s of CPU: expected" \
	    "exit 0, got $st: $(cat err)"
	sum=$(awk '{ s += $NF } END { printf "%d", s }' f.txt)
	[ "$sum" = "$insns" ] || atf_fail "expected weights adding up to" \
	    "$insns instructions (mkdb), got $sum"
}

atf_init_test_cases()
{
	atf_add_test_case folded_bounded_heap
	atf_add_test_case tree_depth1_bounded_heap
	atf_add_test_case tree_folded_within_1s_cpu
}
