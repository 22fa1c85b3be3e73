#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Options before, between and after operands, and "--" ending options, on
# every verb that takes both (cli_getopt_ops()): query, index, import, diff
# and fleet.  The archive is LLVM's LLDB test bundle from the shared
# corpus; nm(1) says which symbols its program has.

. "$(atf_get_srcdir)/../env.sh"
. "$HWTRACE_SRC/tests/lib/hwtr_test.sh"

BUNDLE=lldb-intelpt/intelpt-trace
# A server that cannot exist: a Unix socket in a missing directory.
NOPG='postgresql:///x?host=/nonexistent-hwtrace-test'

# a.hwtrace and a.db of the bundle, after nm has shown main and no -main.
setup()
{
	require_corpus $BUNDLE
	nm "$HWTRACE_CORPUS/$BUNDLE/a.out" | awk '{ print $NF }' > syms
	grep -qx main syms || atf_fail "nm finds no main in a.out"
	! grep -qx -- -main syms || atf_fail "nm finds a symbol -main"
	( cd "$HWTRACE_CORPUS/$BUNDLE" &&
	    "$HWTRACE" import trace.json -o "$OLDPWD/a.hwtrace" ) ||
	    atf_fail "import failed"
	run_status 0 "$HWTRACE" index -q a.hwtrace -o a.db
}

atf_test_case query
query_head()
{
	atf_set descr "query DB func: -- ends options (-- main, -- -main), options after the pattern"
	atf_set require.progs "nm"
}
query_body()
{
	setup
	run_status 0 "$HWTRACE" query a.db func --format csv -- main
	grep -q '^1,1,0,main,' out || atf_fail "func -- main: no call of main: $(cat out)"
	run_status 0 "$HWTRACE" query a.db func main --format csv
	grep -q '^1,1,0,main,' out || atf_fail "func main --format csv: no call of main: $(cat out)"
	# -main after -- is a pattern (no such symbol, status 1), not an option.
	run_status 1 "$HWTRACE" query a.db func -- -main
	grep -q "no symbol matches '-main'" err || atf_fail "func -- -main: $(cat err)"
	run_status 2 "$HWTRACE" query a.db func -main
	run_status 2 "$HWTRACE" query a.db func main extra
	expect_first err "hwtrace query: unexpected argument 'extra'"
}

atf_test_case index
index_head()
{
	atf_set descr "index FILE -o DB -q (options after the operand); after --, -o is an operand"
	atf_set require.progs "nm"
}
index_body()
{
	setup
	run_status 0 "$HWTRACE" index a.hwtrace -o b.db -q
	[ -s b.db ] || atf_fail "index a.hwtrace -o b.db -q wrote no b.db"
	run_status 2 "$HWTRACE" index -q -- a.hwtrace -o c.db
	expect_first err "hwtrace index: too many operands"
	[ ! -e c.db ] || atf_fail "c.db written though -o came after --"
}

atf_test_case import
import_head()
{
	atf_set descr "import TRACE.JSON -o OUT and import -o OUT -- TRACE.JSON"
}
import_body()
{
	require_corpus $BUNDLE
	w=$(pwd)
	cd "$HWTRACE_CORPUS/$BUNDLE"
	run_status 0 "$HWTRACE" import trace.json -o "$w/x.hwtrace" --no-debug-info
	run_status 0 "$HWTRACE" import -o "$w/y.hwtrace" -- trace.json
	run_status 2 "$HWTRACE" import -- trace.json -o "$w/z.hwtrace"
	cd "$w"
	[ -s x.hwtrace ] && [ -s y.hwtrace ] || atf_fail "no archive written"
	[ ! -e z.hwtrace ] || atf_fail "z.hwtrace written though -o came after --"
}

atf_test_case diff
diff_head()
{
	atf_set descr "diff A -n N B --first and diff -- A B"
	atf_set require.progs "nm"
}
diff_body()
{
	setup
	run_status 0 "$HWTRACE" diff a.db -n 3 a.db --first --format csv
	grep -q '^same,' out || atf_fail "diff a.db -n 3 a.db: $(cat out)"
	run_status 0 "$HWTRACE" diff -- a.db a.db
	run_status 2 "$HWTRACE" diff a.db a.db a.db
	expect_first err "hwtrace diff: unexpected argument 'a.db'"
}

atf_test_case fleet
fleet_head()
{
	atf_set descr "fleet URL func: options after NAME, and -- -x taken as NAME (the command line is accepted; the connection then fails)"
}
fleet_body()
{
	run_status 1 "$HWTRACE" fleet "$NOPG" func main --format csv
	grep -q "cannot connect" err || atf_fail "func main --format csv: $(cat err)"
	run_status 1 "$HWTRACE" fleet "$NOPG" func -- -x
	grep -q "cannot connect" err || atf_fail "func -- -x: $(cat err)"
	run_status 2 "$HWTRACE" fleet "$NOPG" func a b
	expect_first err "hwtrace fleet: unexpected argument 'b'"
}

atf_init_test_cases()
{
	atf_add_test_case query
	atf_add_test_case index
	atf_add_test_case import
	atf_add_test_case diff
	atf_add_test_case fleet
}
