#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# The indexer against ground truth: a fixture program is captured with the
# step source and with the Valgrind source (hwtrace capture --source S
# --ground-truth), which store the exact instruction addresses each thread
# executed as aux/groundtruth/tid-N.u64;
# the instruction history expanded from the database (exec_insns) must be
# exactly that sequence for every thread, with no decode error.

. "$(atf_get_srcdir)/../env.sh"

EXT="$HWTRACE_BUILD/hwtrace_sqlite"

q()
{
	sqlite3 -batch -noheader "$@"
}

# gt SOURCE PROG: capture, index, compare every thread.
gt()
{
	src=$1
	prog=$2
	[ -x "$HWTRACE_PROGS/$prog" ] ||
	    atf_skip "fixture $HWTRACE_PROGS/$prog is not built"
	"$HWTRACE" capture --help >/dev/null 2>&1 ||
	    atf_skip "hwtrace capture is not available"
	if [ "$src" = valgrind ]; then
		command -v valgrind >/dev/null 2>&1 ||
		    atf_skip "valgrind is not installed"
	fi
	"$HWTRACE" capture --source "$src" --ground-truth -o "$prog.hwtrace" -- \
	    "$HWTRACE_PROGS/$prog" >out 2>err
	[ -f "$prog.hwtrace" ] ||
	    atf_fail "$prog: capture wrote no archive: $(tr '\n' '|' < err)"
	"$HWTRACE" index -q -o "$prog.db" "$prog.hwtrace" 2>err ||
	    atf_fail "$prog: index failed: $(tr '\n' '|' < err)"
	n=$(q "$prog.db" "SELECT count(*) FROM events WHERE kind = 'decode-error'")
	[ "$n" = 0 ] || atf_fail "$prog: $n decode errors: $(q "$prog.db" "SELECT detail FROM events WHERE kind = 'decode-error' LIMIT 3" | tr '\n' '|')"
	members=$(tar -tf "$prog.hwtrace" 2>/dev/null | grep '^aux/groundtruth/tid-.*\.u64$')
	[ -n "$members" ] || atf_fail "$prog ($src): no ground truth in the archive"
	for m in $members; do
		tid=${m#aux/groundtruth/tid-}
		tid=${tid%.u64}
		tar -xOf "$prog.hwtrace" "$m" | od -An -v -tx8 -w8 |
		    tr -d ' ' | grep -v '^$' > "want.$tid"
		q "$prog.db" ".load $EXT" "SELECT printf('%016x', ip) FROM exec_insns WHERE thread = (SELECT id FROM threads WHERE tid = $tid AND stream IS NOT NULL)" > "got.$tid"
		if ! cmp -s "want.$tid" "got.$tid"; then
			line=$(cmp "want.$tid" "got.$tid" 2>&1 | head -1)
			atf_fail "$prog tid $tid: $(wc -l < "want.$tid") instructions in the ground truth, $(wc -l < "got.$tid") in the database; $line; first difference: $(diff "want.$tid" "got.$tid" | head -4 | tr '\n' ' ')"
		fi
	done
}

CASES="loop calls recurse tailcall switch setjmp threads forkexec signal
dynpie except"

for p in $CASES; do
	for s in step valgrind; do
		eval "
atf_test_case ${s}_$p
${s}_${p}_head() {
	atf_set descr \"$p captured by the $s source: the database's instruction history of every thread equals the tracer's ground truth\"
	atf_set timeout 120
}
${s}_${p}_body() {
	gt $s $p
}"
	done
done

atf_init_test_cases()
{
	for p in $CASES; do
		atf_add_test_case step_$p
		atf_add_test_case valgrind_$p
	done
}
