#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Copyright (c) 2026 The hwtrace authors
#
# index -j N: N threads in all, the writer's included (hwtrace-index(1)),
# and the writer's jobs (chunks of the execution order and pages of calls
# compressed on the pipeline's threads) leaving the database the same
# whatever -j says.  Threads are counted by strace(1); calls are counted
# by construction (tests/progs/manycalls.c).

. "$(atf_get_srcdir)/../env.sh"

GEN="$HWTRACE_BUILD/bench/ixgen"

# clones LOG: how many clone(2) or clone3(2) calls strace logged.
clones()
{
	grep -c '^[0-9]* *clone3\{0,1\}(' "$1"
}

# traced_index J: index t.hwtrace in 4 KiB segments at -j J into jJ.db
# under strace, which logs its clones in stJ; their count in $n.
traced_index()
{
	HWTRACE_IX_SEGMENT=4096 strace -f -qq -e trace=clone,clone3 -o st$1 \
	    "$HWTRACE" index -q -j $1 -o j$1.db t.hwtrace > /dev/null 2> err ||
	    atf_fail "index -j $1 failed: $(cat err)"
	n=$(clones st$1)
}

atf_test_case one_thread_at_j1
one_thread_at_j1_head()
{
	atf_set descr "index -j 1 runs on one thread (no clone), -j 2 starts one decoding thread besides the chunk readers of the scan, -j 16 five (6 threads at most)"
	atf_set require.progs "strace"
}
one_thread_at_j1_body()
{
	[ -x "$GEN" ] || atf_skip "ixgen not built"
	"$GEN" -n 300000 -t 3 "$HWTRACE_PROGS/calls" t.hwtrace > /dev/null 2>&1 ||
	    atf_fail "ixgen failed"
	# LeakSanitizer cannot run under ptrace (make sanitize): no leak
	# check in the runs strace follows.
	export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
	# Small segments: many of them, so that every thread has work.
	traced_index 1
	[ "$n" = 0 ] || atf_fail "index -j 1 started $n threads: $(cat st1)"
	# -j 2: the scan's 2 chunk readers, then 1 worker (and no more).
	traced_index 2
	[ "$n" = 3 ] || atf_fail "index -j 2 started $n threads, expected 3: $(cat st2)"
	cmp -s j1.db j2.db || atf_fail "-j 1 and -j 2 database files differ"
	# -j 16: 6 threads at most (hwtrace-index(1)), so the scan's 4 chunk
	# readers and 5 workers.
	traced_index 16
	[ "$n" = 9 ] || atf_fail "index -j 16 started $n threads, expected 9: $(cat st16)"
	cmp -s j1.db j16.db || atf_fail "-j 1 and -j 16 database files differ"
}

atf_test_case jobs_same_database
jobs_same_database_head()
{
	atf_set descr "manycalls (90000 calls in 90 pages, main open throughout) at -j 1, 2 and 3, in 2 MiB and in 4 KiB segments: the same database file, with its 30000 calls of mid and 60000 of leaf, by thread range and by symbol"
	atf_set require.progs "sqlite3"
}
jobs_same_database_body()
{
	[ -x "$HWTRACE_PROGS/manycalls" ] || atf_skip "fixture programs not built"
	command -v valgrind.bin > /dev/null 2>&1 ||
	    atf_skip "valgrind is not installed"
	"$HWTRACE" capture --source valgrind -o mc.hwtrace -- \
	    "$HWTRACE_PROGS/manycalls" > capture.out 2> capture.err ||
	    atf_fail "capture failed: $(cat capture.err)"
	for seg in 0 4096; do
		for j in 1 2 3; do
			if [ "$seg" = 0 ]; then
				"$HWTRACE" index -q -j $j -o s$seg-j$j.db \
				    mc.hwtrace > /dev/null 2> err
			else
				HWTRACE_IX_SEGMENT=$seg "$HWTRACE" index -q \
				    -j $j -o s$seg-j$j.db mc.hwtrace > /dev/null \
				    2> err
			fi || atf_fail "index -j $j (segments $seg) failed: $(cat err)"
		done
		cmp -s s$seg-j1.db s$seg-j2.db ||
		    atf_fail "segments $seg: -j 1 and -j 2 database files differ"
		cmp -s s$seg-j1.db s$seg-j3.db ||
		    atf_fail "segments $seg: -j 1 and -j 3 database files differ"
	done
	# More pages than are in flight at once (CS_PW).
	[ "$(sqlite3 s4096-j1.db 'SELECT count(*) > 32 FROM calls_pages')" = 1 ] ||
	    atf_fail "expected more than 32 pages of calls"
	sq() { sqlite3 -batch -cmd ".load $HWTRACE_BUILD/hwtrace_sqlite" "$1" "$2"; }
	for db in s0-j3.db s4096-j3.db; do
		# By the thread's range (the pages), then by symbol (the index).
		n=$(sq $db "SELECT s.name || ' ' || count(*) FROM calls c JOIN symbols s ON s.id = c.symbol WHERE c.thread >= 1 AND s.name IN ('mid', 'leaf') GROUP BY s.name ORDER BY s.name")
		[ "$n" = "$(printf 'leaf 60000\nmid 30000')" ] ||
		    atf_fail "$db: expected leaf 60000 and mid 30000 calls, got '$(echo $n)'"
		for f in leaf:60000 mid:30000 main:1; do
			n=$(sq $db "SELECT count(*) FROM calls WHERE symbol = (SELECT id FROM symbols WHERE name = '${f%:*}')")
			[ "$n" = "${f#*:}" ] ||
			    atf_fail "$db: calls of ${f%:*} by symbol: expected ${f#*:}, got $n"
		done
	done
}

atf_test_case jobs_same_chunks
jobs_same_chunks_head()
{
	atf_set descr "ixgen's 1.4 M blocks, more exec_chunks rows than are in flight at once (IX_XQ, 8), at -j 1, 2 and 3 in 4 KiB segments: the same database file"
	atf_set require.progs "sqlite3"
}
jobs_same_chunks_body()
{
	[ -x "$GEN" ] || atf_skip "ixgen not built"
	"$GEN" -n 3500000 -t 1 "$HWTRACE_PROGS/calls" t.hwtrace > /dev/null 2>&1 ||
	    atf_fail "ixgen failed"
	for j in 1 2 3; do
		HWTRACE_IX_SEGMENT=4096 "$HWTRACE" index -q -j $j -o j$j.db \
		    t.hwtrace > /dev/null 2> err ||
		    atf_fail "index -j $j failed: $(cat err)"
	done
	cmp -s j1.db j2.db || atf_fail "-j 1 and -j 2 database files differ"
	cmp -s j1.db j3.db || atf_fail "-j 1 and -j 3 database files differ"
	n=$(sqlite3 j1.db 'SELECT count(*) FROM exec_chunks')
	[ "$n" -gt 8 ] || atf_fail "expected more than 8 chunks, got $n"
}

atf_init_test_cases()
{
	atf_add_test_case one_thread_at_j1
	atf_add_test_case jobs_same_database
	atf_add_test_case jobs_same_chunks
}
