#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# ixbare -a, the bare libipt loop bench_index.sh compares `hwtrace index`
# with, must decode what the indexer decodes: on step captures of fixture
# programs (one thread, several threads, shared libraries) and on the LLDB
# corpus captures, its instruction count and error count must be the
# database's (sum(insns) of threads, decode-error events).  A bench whose
# reference decodes another trace measures nothing.  So must fptbare's
# two fpt loops (P1's bench), on step captures: ixbare's count.

. "$(atf_get_srcdir)/../env.sh"

# same ARCHIVE: index ARCHIVE and run ixbare -a on it; compare.
same()
{
	bare="$HWTRACE_BUILD/bench/ixbare"
	[ -x "$bare" ] || atf_fail "$bare is not built"
	"$HWTRACE" index -q -o c.db "$1" 2>ixerr ||
	    atf_fail "index $1 failed: $(tr '\n' '|' < ixerr)"
	"$bare" -a "$1" >bare 2>berr ||
	    atf_fail "ixbare -a $1 failed: $(tr '\n' '|' < berr)"
	bi=$(sed -n 's/^total: .*, \([0-9]*\) instructions, .*/\1/p' bare)
	be=$(sed -n 's/^total: .*, \([0-9]*\) errors, .*/\1/p' bare)
	di=$(sqlite3 -batch -noheader c.db "SELECT sum(insns) FROM threads")
	de=$(sqlite3 -batch -noheader c.db \
	    "SELECT count(*) FROM events WHERE kind = 'decode-error'")
	[ -n "$bi" ] && [ "$bi" -gt 0 ] ||
	    atf_fail "ixbare printed no instruction count: $(cat bare)"
	[ "$bi" = "$di" ] ||
	    atf_fail "$1: ixbare -a decoded $bi instructions, the database has $di"
	[ "$be" = "$de" ] ||
	    atf_fail "$1: ixbare -a had $be decode errors, the database has $de"
	rm -f c.db
}

# step PROG: a step capture of fixture PROG, compared.
step()
{
	[ -x "$HWTRACE_PROGS/$1" ] ||
	    atf_skip "fixture $HWTRACE_PROGS/$1 is not built"
	"$HWTRACE" capture --source step -o "$1.hwtrace" -- \
	    "$HWTRACE_PROGS/$1" >out 2>err
	[ -f "$1.hwtrace" ] ||
	    atf_skip "$1: step capture unavailable: $(tr '\n' '|' < err)"
	same "$1.hwtrace"
}

atf_test_case step_calls
step_calls_head()
{
	atf_set descr "ixbare -a on a step capture of calls: the database's instruction count"
}
step_calls_body()
{
	step calls
}

atf_test_case step_threads
step_threads_head()
{
	atf_set descr "ixbare -a on a step capture of threads (one stream per thread): the database's instruction count"
}
step_threads_body()
{
	step threads
}

atf_test_case step_dynpie
step_dynpie_head()
{
	atf_set descr "ixbare -a on a step capture of dynpie (PIE and shared libraries at their mapped addresses): the database's instruction count"
}
step_dynpie_body()
{
	step dynpie
}

atf_test_case lldb
lldb_head()
{
	atf_set descr "ixbare -a on the LLDB corpus captures: the database's instruction and decode-error counts"
}
lldb_body()
{
	dir="$HWTRACE_CORPUS/lldb-intelpt"
	[ -d "$dir" ] || atf_skip "corpus not found at $dir"
	for b in intelpt-trace/trace.json \
	    intelpt-trace-multi-file/multi-file-no-ld.json; do
		"$HWTRACE" import --lldb -o c.hwtrace "$dir/$b" 2>err ||
		    atf_fail "import $b failed: $(tr '\n' '|' < err)"
		same c.hwtrace
		rm -f c.hwtrace
	done
}

atf_test_case fptbare
fptbare_head()
{
	atf_set descr "fptbare -a (the P1 bench) on step captures of threads and dynpie: both fpt loops count ixbare's instructions"
}
fptbare_body()
{
	fb="$HWTRACE_BUILD/bench/fptbare"
	bare="$HWTRACE_BUILD/bench/ixbare"
	[ -x "$fb" ] && [ -x "$bare" ] || atf_fail "fptbare or ixbare not built"
	for p in threads dynpie; do
		[ -x "$HWTRACE_PROGS/$p" ] ||
		    atf_skip "fixture $HWTRACE_PROGS/$p is not built"
		"$HWTRACE" capture --source step -o "$p.hwtrace" -- \
		    "$HWTRACE_PROGS/$p" >out 2>err
		[ -f "$p.hwtrace" ] ||
		    atf_skip "$p: step capture unavailable: $(tr '\n' '|' < err)"
		"$bare" -a "$p.hwtrace" >bare 2>berr ||
		    atf_fail "ixbare -a $p failed: $(tr '\n' '|' < berr)"
		bi=$(sed -n 's/^total: .*, \([0-9]*\) instructions, .*/\1/p' bare)
		"$fb" -r 1 -a "$p.hwtrace" >fout 2>ferr ||
		    atf_fail "fptbare -a $p failed: $(tr '\n' '|' < ferr)"
		for l in runs items; do
			fi_=$(sed -n "s/^total $l: .* fpt \([0-9]*\) instructions .*/\1/p" fout)
			[ -n "$bi" ] && [ "$bi" -gt 0 ] && [ "$fi_" = "$bi" ] ||
			    atf_fail "$p: fptbare's $l loop counted '$fi_'" \
			    "instructions, ixbare '$bi': $(tr '\n' '|' < fout)"
		done
	done
}

atf_init_test_cases()
{
	atf_add_test_case step_calls
	atf_add_test_case step_threads
	atf_add_test_case step_dynpie
	atf_add_test_case lldb
	atf_add_test_case fptbare
}
