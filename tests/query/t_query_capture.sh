#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# hwtrace query on a real capture: the step source traces the calls
# fixture (tests/progs/calls.c), the archive is indexed on first use, and
# the answers agree with what the program does by its source: in 12 loop
# rounds, ops[i % 4] is called indirectly (add, sub, mul, xor 3 times
# each), add directly 12 times more, computed_goto 12 times, and the
# program ends in _exit's syscall.

. "$(atf_get_srcdir)/../env.sh"

capture_calls()
{
	[ -x "$HWTRACE_PROGS/calls" ] || atf_skip "fixture programs not built"
	if ! "$HWTRACE" capture --source step -o c.hwtrace -- "$HWTRACE_PROGS/calls" \
	    > capture.out 2> capture.err; then
		grep -qi "ptrace\|permission\|not permitted" capture.err &&
		    atf_skip "cannot trace here: $(cat capture.err)"
		atf_fail "hwtrace capture failed: $(cat capture.err)"
	fi
}

atf_test_case calls_fixture_answers
calls_fixture_answers_head() { atf_set descr "func, coverage, tree and last on a step capture of the calls fixture agree with its source"; }
calls_fixture_answers_body()
{
	capture_calls
	atf_check -s exit:0 -o match:"^decode_errors +0\$" -o match:"^exit +code 0\$" \
	    "$HWTRACE" query c.hwtrace summary
	test -f c.hwtrace.db || atf_fail "no cache c.hwtrace.db"
	for f in add:15 sub:3 mul:3 xor:3 computed_goto:12 main:1; do
		name=${f%:*} n=${f#*:}
		got=$("$HWTRACE" query c.hwtrace func "$name" --format csv | tail -n +2 | wc -l)
		[ "$got" -eq "$n" ] || atf_fail "func $name: expected $n invocations, got $got"
	done
	# Every add is called by main (directly or through the table).
	atf_check -s exit:0 -o inline:"main 15\n" sh -c \
	    "'$HWTRACE' query c.hwtrace func add --format tsv | cut -f5 | tail -n +2 | sort | uniq -c | awk '{print \$2, \$1}'"
	# Coverage of the program's own functions; the lcov file too.
	"$HWTRACE" query c.hwtrace coverage --image calls --lcov cov.info \
	    --format csv > cov.csv || atf_fail "coverage failed"
	for f in add,15 sub,3 mul,3 xor,3 computed_goto,12 main,1; do
		grep -q "^[^,]*/calls,${f%,*},0x[0-9a-f]*,tests/progs/calls.c:[0-9]*,${f#*,}," cov.csv ||
		    atf_fail "coverage: no row for ${f%,*} with ${f#*,} entries: $(grep ",${f%,*}," cov.csv | tr '\n' ' ')"
	done
	for f in 15,add 3,sub 12,computed_goto 1,main; do
		grep -qx "FNDA:$f" cov.info || atf_fail "lcov: no FNDA:$f"
	done
	(cd "$HWTRACE_SRC" && genhtml -q -o "$OLDPWD/html" "$OLDPWD/cov.info") ||
	    atf_fail "genhtml rejected the tracefile"
	# The merged call tree: main's callees, with their call counts.
	"$HWTRACE" query c.hwtrace tree --format csv > tree.csv || atf_fail "tree failed"
	grep -q "^1,[0-9]*, *add,15,.*/main/add\$" tree.csv ||
	    atf_fail "tree: no main/add with 15 calls: $(grep '/main/add$' tree.csv | tr '\n' ' ')"
	# What ran last: the exit system call.
	atf_check -s exit:0 -o match:"_exit\+0x[0-9a-f]+		syscall\$" \
	    "$HWTRACE" query c.hwtrace last -n 1 --insns --format tsv
	# A program that ends by a system call has no "stopped" row.
	atf_check -s exit:0 -o not-match:"stopped" \
	    "$HWTRACE" query c.hwtrace last -n 3
}

# stop_row DB FORMAT...: the last row of `last -n 2` on DB.
stop_row()
{
	db=$1
	shift
	"$HWTRACE" query "$db" last -n 2 --format tsv "$@" > last.tsv ||
	    atf_fail "query last failed on $db"
	tail -n 1 last.tsv
}

atf_test_case crash_stop_row
crash_stop_row_head() { atf_set descr "last ends a crashed thread with the instruction that faulted: the address nm gives for segv's store (step) and the one Valgrind reports (valgrind)"; }
crash_stop_row_body()
{
	[ -x "$HWTRACE_PROGS/segv" ] || atf_skip "fixture programs not built"
	command -v nm >/dev/null || atf_skip "nm (binutils) is not installed"
	# store() is `*p = v` with p NULL: its first instruction faults.
	addr=$(nm "$HWTRACE_PROGS/segv" | awk '$3 == "store" { print $1 }')
	addr=0x$(echo "$addr" | sed 's/^0*//')
	[ "$addr" != 0x ] || atf_fail "nm found no store in segv"
	"$HWTRACE" capture --source step -o s.hwtrace -- "$HWTRACE_PROGS/segv" \
	    > out 2> err
	rc=$?
	[ $rc -eq 139 ] || atf_fail "step capture of segv: expected 139, got $rc: $(cat err)"
	"$HWTRACE" index -q -o s.db s.hwtrace || atf_fail "index failed"
	n=$(sqlite3 s.db "SELECT blocks FROM threads")
	got=$(stop_row s.db)
	exp=$(printf '1\t%s\t%s\tstore\ttests/progs/segv.c:17\t0\tstopped' "$n" "$addr")
	[ "$got" = "$exp" ] || atf_fail "last: expected the stop row '$exp', got '$got'"
	# The row before it is main's call of store.
	tail -n 2 last.tsv | head -n 1 | grep -q "	main+0x[0-9a-f]*	.*	call\$" ||
	    atf_fail "last: the row before the stop is not main's call: $(tr '\n' ' ' < last.tsv)"
	n=$(sqlite3 s.db "SELECT insns FROM threads")
	got=$(stop_row s.db --insns)
	exp=$(printf '1\t%s\t%s\tstore\ttests/progs/segv.c:17\t(stopped here: the process ended by signal 11)' "$n" "$addr")
	[ "$got" = "$exp" ] || atf_fail "last --insns: expected '$exp', got '$got'"

	command -v valgrind.bin >/dev/null 2>&1 || {
		echo "valgrind is not installed: the valgrind half is not run" >&2
		return 0
	}
	# Valgrind's report of the fault reaches stderr with --verbose.
	"$HWTRACE" capture --verbose --source valgrind -o v.hwtrace \
	    -- "$HWTRACE_PROGS/segv" > out 2> err
	rc=$?
	[ $rc -eq 139 ] || atf_fail "valgrind capture of segv: expected 139, got $rc: $(cat err)"
	# Valgrind's own report: "==N==    at 0x4016C0: store (segv.c:17)".
	vaddr=$(sed -n 's/^==[0-9]*== *at \(0x[0-9A-Fa-f]*\): store .*/\1/p' err |
	    head -n 1 | tr 'A-F' 'a-f' | sed 's/^0x0*/0x/')
	[ "$vaddr" = "$addr" ] ||
	    atf_fail "valgrind reported the fault at '$vaddr', nm gives store at $addr: $(cat err)"
	"$HWTRACE" index -q -o v.db v.hwtrace || atf_fail "index failed"
	got=$(stop_row v.db | cut -f 3-7)
	exp=$(printf '%s\tstore\ttests/progs/segv.c:17\t0\tstopped' "$vaddr")
	[ "$got" = "$exp" ] || atf_fail "last (valgrind): expected '$exp', got '$got'"
}

atf_init_test_cases()
{
	atf_add_test_case calls_fixture_answers
	atf_add_test_case crash_stop_row
}
