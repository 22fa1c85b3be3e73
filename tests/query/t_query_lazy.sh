#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Lazy answers (hwtrace-query(1), LAZY VERBS): `last` and `bt` on an
# archive never indexed decode only the end of each thread's trace into a
# partial cache ARCHIVE.db.tail.  The fixture deepcrash runs for tens of
# KiB of trace, then crashes in store() called through level1, level2 and
# level3 from main; HWTRACE_QUERY_TAIL=2048 makes the window a few KiB, so
# that it starts well after main was entered.  The answers are compared
# with a full index of the same archive and with nm's addresses and the
# fixture's source.

. "$(atf_get_srcdir)/../env.sh"
. "$HWTRACE_SRC/tests/lib/hwtr_test.sh"

TAIL=2048

capture_deep()
{
	[ -x "$HWTRACE_PROGS/deepcrash" ] || atf_skip "fixture programs not built"
	src=step
	command -v valgrind.bin >/dev/null 2>&1 && src=valgrind
	"$HWTRACE" capture --source $src -o d.hwtrace -- \
	    "$HWTRACE_PROGS/deepcrash" > capture.out 2> capture.err
	rc=$?
	if [ $rc -ne 139 ]; then
		grep -qi "ptrace\|permission\|not permitted" capture.err &&
		    atf_skip "cannot trace here: $(cat capture.err)"
		atf_fail "capture of deepcrash: expected 139, got $rc: $(cat capture.err)"
	fi
}

# lazy ARGS...: hwtrace query with the small window.
lazy()
{
	HWTRACE_QUERY_TAIL=$TAIL "$HWTRACE" query "$@"
}

# nm_addr NAME: the address nm gives for function NAME in deepcrash.
nm_addr()
{
	a=$(nm "$HWTRACE_PROGS/deepcrash" | awk -v n="$1" '$3 == n { print $1 }')
	[ -n "$a" ] || atf_fail "nm found no $1 in deepcrash"
	echo "0x$(echo "$a" | sed 's/^0*//')"
}

# src_line PATTERN: the fixture's line holding PATTERN.
src_line()
{
	n=$(grep -n -F "$1" "$HWTRACE_SRC/tests/progs/deepcrash.c" | head -n 1 |
	    cut -d: -f1)
	[ -n "$n" ] || atf_fail "no '$1' in deepcrash.c"
	echo "tests/progs/deepcrash.c:$n"
}

atf_test_case last_equals_full_index
last_equals_full_index_head() { atf_set descr "last on a never-indexed archive decodes only its end into ARCHIVE.db.tail (meta partial), and its rows are the full index's, the crash at nm's address of store, seq unknown"; }
last_equals_full_index_body()
{
	capture_deep
	require_tools nm sqlite3
	lazy d.hwtrace last -n 4 --format tsv > lazy.tsv 2> lazy.err ||
	    atf_fail "lazy last failed: $(cat lazy.err)"
	[ -f d.hwtrace.db.tail ] || atf_fail "no partial cache d.hwtrace.db.tail"
	[ ! -e d.hwtrace.db ] || atf_fail "a full cache was made for last"
	atf_check -s exit:0 -o inline:"tail\n" sqlite3 d.hwtrace.db.tail \
	    "SELECT value FROM meta WHERE key = 'partial'"
	# The window is a part of the trace, not all of it.
	"$HWTRACE" index -q -o full.db d.hwtrace || atf_fail "index failed"
	nfull=$(sqlite3 full.db "SELECT blocks FROM threads")
	ntail=$(sqlite3 d.hwtrace.db.tail "SELECT blocks FROM threads")
	[ "$ntail" -gt 0 ] && [ "$ntail" -lt "$nfull" ] ||
	    atf_fail "window of $ntail blocks, expected some of the $nfull"
	"$HWTRACE" query full.db last -n 4 --format tsv > full.tsv ||
	    atf_fail "last on the full index failed"
	cut -f 1,3- lazy.tsv > lazy.cols
	cut -f 1,3- full.tsv > full.cols
	expect_same full.cols lazy.cols "lazy last differs from the full index's"
	# seq counts from the thread's start: unknown in a window.
	[ "$(tail -n +2 lazy.tsv | cut -f 2 | sort -u)" = "" ] ||
	    atf_fail "lazy last shows seq numbers: $(cut -f 2 lazy.tsv | tr '\n' ' ')"
	[ "$(tail -n 1 full.tsv | cut -f 2)" = "$nfull" ] ||
	    atf_fail "full last: the stop row is not at seq $nfull"
	# Independent facts: the fault is store's first instruction (nm),
	# at the store of the fixture's source, after level1..3's calls.
	exp=$(printf '1\t\t%s\tstore.constprop.0\t%s\t0\tstopped' \
	    "$(nm_addr store.constprop.0)" "$(src_line '*p = v;')")
	[ "$(tail -n 1 lazy.tsv)" = "$exp" ] ||
	    atf_fail "lazy last: expected the stop row '$exp', got '$(tail -n 1 lazy.tsv)'"
	for f in level1 level2 level3; do
		grep -q "	$(nm_addr $f.constprop.0)	$f.constprop.0	.*	call\$" lazy.tsv ||
		    atf_fail "lazy last: no call row at nm's $f: $(tr '\n' ' ' < lazy.tsv)"
	done
	# Instructions too.
	lazy d.hwtrace last -n 5 --insns --format tsv | cut -f 1,3- > lazy.ins ||
	    atf_fail "lazy last --insns failed"
	"$HWTRACE" query full.db last -n 5 --insns --format tsv | cut -f 1,3- \
	    > full.ins
	cmp -s lazy.ins full.ins ||
	    atf_fail "lazy last --insns differs: $(diff full.ins lazy.ins | tr '\n' ' ')"
}

atf_test_case bt_partial_stack
bt_partial_stack_head() { atf_set descr "bt from the end alone: the frames entered inside the window are the full index's (store, level3, level2, level1, main by the source), and the frames above are marked as not decoded"; }
bt_partial_stack_body()
{
	capture_deep
	lazy d.hwtrace bt --format tsv > lazy.tsv 2> lazy.err ||
	    atf_fail "lazy bt failed: $(cat lazy.err)"
	[ ! -e d.hwtrace.db ] || atf_fail "a full cache was made for bt"
	"$HWTRACE" index -q -o full.db d.hwtrace || atf_fail "index failed"
	"$HWTRACE" query full.db bt --format tsv > full.tsv ||
	    atf_fail "bt on the full index failed"
	# By the source: the stack at the fault.
	got=$(tail -n +2 lazy.tsv | cut -f 3 | tr '\n' ' ')
	exp="store.constprop.0 level3.constprop.0 level2.constprop.0 level1.constprop.0 main (frames above not decoded) "
	[ "$got" = "$exp" ] || atf_fail "lazy bt: expected '$exp', got '$got'"
	# Those frames are the full index's, address and line included.
	tail -n +2 lazy.tsv | head -n 5 | cut -f 1-5 > lazy.cols
	tail -n +2 full.tsv | head -n 5 | cut -f 1-5 > full.cols
	expect_same full.cols lazy.cols "lazy bt differs from the full index's"
	# The full stack goes on to _start (nm's entry point).
	[ "$(tail -n 1 full.tsv | cut -f 3)" = "_start" ] ||
	    atf_fail "full bt does not end at _start: $(cut -f 3 full.tsv | tr '\n' ' ')"
	# Call ids and instruction numbers count from the start: unknown.
	[ "$(tail -n +2 lazy.tsv | cut -f 6,7 | sort -u)" = "$(printf '\t')" ] ||
	    atf_fail "lazy bt shows call or insn numbers: $(cut -f 6,7 lazy.tsv | tr '\n' ' ')"
}

atf_test_case cache_reused_then_replaced
cache_reused_then_replaced_head() { atf_set descr "the partial cache answers the next lazy question without decoding again; a verb needing the whole history (or last -n past the window) indexes it, with the same answers, and the full cache replaces the partial one"; }
cache_reused_then_replaced_body()
{
	capture_deep
	require_tools sqlite3
	lazy d.hwtrace bt > /dev/null || atf_fail "lazy bt failed"
	before=$(stat -c '%i %Y %s' d.hwtrace.db.tail) ||
	    atf_fail "no partial cache"
	sleep 1
	lazy d.hwtrace last -n 3 > /dev/null || atf_fail "lazy last failed"
	lazy d.hwtrace bt > /dev/null || atf_fail "lazy bt failed"
	[ "$(stat -c '%i %Y %s' d.hwtrace.db.tail)" = "$before" ] ||
	    atf_fail "the partial cache was written again"
	# Opened as a database, it says what it cannot answer.
	atf_check -s exit:1 -e match:"partial database.*whole history.*d\.hwtrace" \
	    "$HWTRACE" query d.hwtrace.db.tail calls
	atf_check -s exit:0 -o match:"store" "$HWTRACE" query d.hwtrace.db.tail bt
	# A whole-history verb: the full index, which replaces the partial.
	"$HWTRACE" query d.hwtrace calls -n 1 > /dev/null 2> calls.err ||
	    atf_fail "calls failed: $(cat calls.err)"
	[ -f d.hwtrace.db ] || atf_fail "no full cache after calls"
	[ ! -e d.hwtrace.db.tail ] || atf_fail "the partial cache is still there"
	atf_check -s exit:0 -o empty sqlite3 d.hwtrace.db \
	    "SELECT value FROM meta WHERE key = 'partial'"
	n=$(sqlite3 d.hwtrace.db "SELECT blocks FROM threads")
	atf_check -s exit:0 -o match:"^1	$n	0x[0-9a-f]*	store" \
	    "$HWTRACE" query d.hwtrace last -n 1 --format tsv
	atf_check -s exit:0 -o match:"_start" "$HWTRACE" query d.hwtrace bt
	# last -n longer than the window indexes the whole history too.
	cp d.hwtrace e.hwtrace
	lazy e.hwtrace last -n 1000000 --format tsv > long.tsv ||
	    atf_fail "lazy last -n 1000000 failed"
	[ -f e.hwtrace.db ] && [ ! -e e.hwtrace.db.tail ] ||
	    atf_fail "last -n 1000000: expected a full cache only: $(ls e.hwtrace* | tr "\n" " ")"
	# Every block and the stop row.
	[ "$(tail -n +2 long.tsv | wc -l)" -eq $((n + 1)) ] ||
	    atf_fail "last -n 1000000: expected all $n blocks and the stop row, got $(tail -n +2 long.tsv | wc -l) rows"
	# A short trace is decoded whole: the full cache at once.
	cp d.hwtrace f.hwtrace
	HWTRACE_QUERY_TAIL=100000000 "$HWTRACE" query f.hwtrace last -n 1 \
	    > /dev/null || atf_fail "lazy last on a short trace failed"
	[ -f f.hwtrace.db ] && [ ! -e f.hwtrace.db.tail ] ||
	    atf_fail "a trace decoded whole: expected a full cache: $(ls f.hwtrace* | tr "\n" " ")"
}

atf_test_case bad_archives
bad_archives_head() { atf_set descr "lazy verbs on a hostile, truncated or replaced archive and on a damaged partial cache: a clear error or the answer from what is readable, never a crash or a stale answer"; }
bad_archives_body()
{
	capture_deep
	# Garbage behind a zstd magic.
	printf '\050\265\057\375' > junk.hwtrace
	head -c 5000 /dev/urandom >> junk.hwtrace
	atf_check -s exit:1 -e match:"cannot index 'junk\.hwtrace'" \
	    "$HWTRACE" query junk.hwtrace bt
	[ ! -e junk.hwtrace.db.tail ] && [ ! -e junk.hwtrace.db ] ||
	    atf_fail "a cache was left for junk.hwtrace"
	# Cut before its end: what it holds, said on stderr.
	sz=$(stat -c %s d.hwtrace)
	head -c $((sz - 100)) d.hwtrace > cut.hwtrace
	lazy cut.hwtrace last -n 2 --format tsv > cut.tsv 2> cut.err
	[ $? -eq 0 ] || atf_fail "last on a truncated archive: $(cat cut.err)"
	grep -q "'cut.hwtrace' is truncated" cut.err ||
	    atf_fail "no word of the truncation: $(cat cut.err)"
	"$HWTRACE" index -q -o cutfull.db cut.hwtrace 2> /dev/null
	"$HWTRACE" query cutfull.db last -n 2 --format tsv | cut -f 1,3- > exp.cols
	cut -f 1,3- cut.tsv > got.cols
	cmp -s exp.cols got.cols ||
	    atf_fail "truncated: lazy last differs from the full index: $(diff exp.cols got.cols | tr '\n' ' ')"
	# A damaged partial cache is not used: the end is decoded again.
	lazy d.hwtrace last -n 1 > good.out || atf_fail "lazy last failed"
	echo "not a database" > d.hwtrace.db.tail
	touch -d '+1 hour' d.hwtrace.db.tail
	atf_check -s exit:0 -o file:good.out env HWTRACE_QUERY_TAIL=$TAIL \
	    "$HWTRACE" query d.hwtrace last -n 1
	# A partial cache with a malformed window: a clear error.
	command -v sqlite3 >/dev/null || return 0
	sqlite3 d.hwtrace.db.tail "UPDATE meta SET value = 'x' WHERE key = 'tail_from'" ||
	    atf_fail "cannot damage the cache"
	touch -d '+1 hour' d.hwtrace.db.tail
	atf_check -s exit:1 -e match:"tail_from is malformed" env \
	    HWTRACE_QUERY_TAIL=$TAIL "$HWTRACE" query d.hwtrace last -n 1
	# Another archive under the same name: its own end, not the cache's.
	rm -f d.hwtrace.db.tail
	lazy d.hwtrace last -n 1 > /dev/null || atf_fail "lazy last failed"
	cp cut.hwtrace d.hwtrace
	lazy d.hwtrace last -n 2 --format tsv 2> /dev/null | cut -f 1,3- > repl.cols
	cmp -s exp.cols repl.cols ||
	    atf_fail "replaced archive: a stale answer: $(diff exp.cols repl.cols | tr '\n' ' ')"
}

atf_test_case cache_hint_only_for_the_cache
cache_hint_only_for_the_cache_head() { atf_set descr "a lazy verb that fails on a missing TMPDIR (the image copies) does not name --db; one that cannot write its cache beside the archive does (checked when not run as root, who writes anywhere; t_hostile has it for a path SQLite refuses)"; }
cache_hint_only_for_the_cache_body()
{
	capture_deep
	# TMPDIR missing: the indexer's image copies fail, not the cache.
	atf_check -s exit:1 -e save:tmp.err env TMPDIR="$PWD/none" \
	    "$HWTRACE" query d.hwtrace last -n 1
	grep -qF "$PWD/none/" tmp.err ||
	    atf_fail "TMPDIR not named: $(cat tmp.err)"
	grep -q -- "--db" tmp.err && atf_fail "--db offered for TMPDIR: $(cat tmp.err)"
	# A directory the cache cannot be made in: --db is the way out.
	# Root writes anywhere; t_hostile's long_paths_keep_the_reason has
	# the hint for a path SQLite refuses, which holds for root too.
	[ "$(id -u)" -ne 0 ] || return 0
	mkdir ro
	cp d.hwtrace ro/d.hwtrace
	chmod 555 ro
	"$HWTRACE" query ro/d.hwtrace last -n 1 > /dev/null 2> ro.err
	rc=$?
	chmod 755 ro
	[ $rc -eq 1 ] || atf_fail "expected exit 1 with no cache, got $rc: $(cat ro.err)"
	grep -q "ro/d.hwtrace.db.*(name another database with --db)\$" ro.err ||
	    atf_fail "--db not offered for the cache: $(cat ro.err)"
	atf_check -s exit:0 -o ignore -e ignore \
	    "$HWTRACE" query ro/d.hwtrace --db other.db last -n 1
}

atf_init_test_cases()
{
	atf_add_test_case last_equals_full_index
	atf_add_test_case bt_partial_stack
	atf_add_test_case cache_reused_then_replaced
	atf_add_test_case bad_archives
	atf_add_test_case cache_hint_only_for_the_cache
}
