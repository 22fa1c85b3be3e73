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

# calls is a virtual table: plain sqlite3 reads it with the extension.
q()
{
	sqlite3 -batch -noheader -cmd ".load $HWTRACE_BUILD/hwtrace_sqlite" "$@"
}

# gt SOURCE PROG [ARCHIVE]: capture (or take ARCHIVE), index, compare every
# thread.
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
	if [ $# -ge 3 ]; then
		cp "$3" "$prog.hwtrace"
	else
		"$HWTRACE" capture --source "$src" --ground-truth \
		    -o "$prog.hwtrace" -- "$HWTRACE_PROGS/$prog" >out 2>err
	fi
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

# own_seq PROG ARCHIVE: the ground truth of ARCHIVE's one thread, kept to
# the addresses of PROG's own functions (those nm -l places in
# tests/progs/PROG.c), one hex address a line.
own_seq()
{
	nm -t d -S -l --defined-only "$HWTRACE_PROGS/$1" |
	    awk -v f="/tests/progs/$1.c:" '($3 == "T" || $3 == "t") && index($0, f) {
		print $1 + 0, $1 + $2 }' \
	    > ranges
	[ -s ranges ] || atf_fail "nm -l finds no function of $1.c in $1"
	m=$(tar -tf "$2" | grep '^aux/groundtruth/tid-.*\.u64$')
	[ "$(echo "$m" | wc -l)" = 1 ] || atf_fail "$2: expected one thread's ground truth: $m"
	tar -xOf "$2" "$m" | od -An -v -tu8 -w8 | tr -d ' ' | grep -v '^$' |
	    awk 'NR == FNR { lo[NR] = $1; hi[NR] = $2; n = NR; next }
		{ for (i = 1; i <= n; i++) if ($1 >= lo[i] && $1 < hi[i]) {
			printf "%x\n", $1; break } }' ranges -
}

# Independent of single-stepping: the step source's history of a
# deterministic program's own code must be the one the Valgrind source
# records (a simulated CPU, no ptrace).  The C library is left out: its
# start-up asks CPUID, which Valgrind answers with values of its own.
# HWTRACE_TEST_LATE_TRAP makes the step source lose the trap after every
# CPUID, XGETBV and RDTSC, as a hypervisor that delivers it late does.
own_vs_valgrind()
{
	prog=$1
	[ -x "$HWTRACE_PROGS/$prog" ] ||
	    atf_skip "fixture $HWTRACE_PROGS/$prog is not built"
	command -v valgrind >/dev/null 2>&1 || atf_skip "valgrind is not installed"
	"$HWTRACE" capture --source valgrind --ground-truth -o vg.hwtrace -- \
	    "$HWTRACE_PROGS/$prog" >vg.out 2>err ||
	    atf_fail "$prog: valgrind capture failed: $(tr '\n' '|' < err)"
	HWTRACE_TEST_LATE_TRAP=cpuid,xgetbv,rdtsc "$HWTRACE" capture \
	    --source step --ground-truth -o st.hwtrace -- \
	    "$HWTRACE_PROGS/$prog" >st.out 2>err ||
	    atf_fail "$prog: step capture failed: $(tr '\n' '|' < err)"
	cmp -s vg.out st.out || atf_fail "$prog: the two runs printed different output"
	own_seq "$prog" vg.hwtrace > want
	own_seq "$prog" st.hwtrace > got
	[ "$(wc -l < want)" -gt 50 ] ||
	    atf_fail "$prog: only $(wc -l < want) instructions of its own code under valgrind"
	cmp -s want got ||
	    atf_fail "$prog: own code: $(wc -l < want) instructions under valgrind, $(wc -l < got) stepped; first difference: $(diff want got | head -4 | tr '\n' ' ')"
	gt step "$prog" st.hwtrace
}

OWN="loop calls recurse tailcall switch setjmp rep syscalls"

for p in $OWN; do
	eval "
atf_test_case own_$p
own_${p}_head() {
	atf_set descr \"$p: the step source, with late CPUID traps, records the program's own code exactly as the Valgrind source does\"
	atf_set timeout 120
}
own_${p}_body() {
	own_vs_valgrind $p
}"
done

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
	for p in $OWN; do
		atf_add_test_case own_$p
	done
}
