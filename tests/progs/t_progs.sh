#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Copyright (c) 2026 The hwtrace authors
#
# The fixture programs behave as tests/progs/README says when run natively:
# the trace sources' ground-truth tests rely on that.

. "$(atf_get_srcdir)/../env.sh"

# run PROG STATUS EXPECTED-STDOUT: run a fixture, compare exit status and stdout.
run() {
	prog=$1 want_rc=$2 want_out=$3
	[ -x "$HWTRACE_PROGS/$prog" ] ||
		atf_fail "fixture $HWTRACE_PROGS/$prog was not built"
	"$HWTRACE_PROGS/$prog" >out 2>err
	rc=$?
	[ "$rc" -eq "$want_rc" ] ||
		atf_fail "$prog: expected exit status $want_rc, got $rc (stderr: $(cat err))"
	printf '%s\n' "$want_out" >want
	cmp -s want out ||
		atf_fail "$prog: expected stdout '$(cat want)', got '$(cat out)'"
}

atf_test_case outputs_and_status
outputs_and_status_head() {
	atf_set descr "every fixture prints its documented output and exits with its documented status"
}
outputs_and_status_body() {
	run loop 0 "loop: sum 6090 odd 14"
	run recurse 0 "recurse: fib(10) 55 depth 100 even(9) 0"
	run calls 0 "calls: acc 1724 goto 1284"
	run tailcall 0 "tailcall: 140 528"
	run switch 0 "switch: 19514616"
	run setjmp 0 "setjmp: rounds 2 total 14"
	run except 0 "except: caught 2 dtors 8"
	run longname 0 "longname: 372"
	run plt 0 "plt: 1 1"
	run cancel 0 "cancel: cancelled cleanups 1"
	run manycalls 0 "manycalls: 1588640880"
	run tailplt 0 "tailplt: 17643 460"
	run chase 0 "1000"
	run selfmod 0 "selfmod: v1 24 v2 15"
	run noplt 0 "plt: 1 1"
	run plt-stripped 0 "plt: 1 1"
	run plt-nocfi 0 "plt: 1 1"
	run signal 0 "signal: usr1 4 usr2 1 faults 1"
	run timer 0 "timer: 3 ticks"
	run threads 0 "threads: 0 -> 2
threads: 1 -> 2
threads: 2 -> 1"
	run forkexec 0 "hello from forkexec
forkexec: child exited 0"
	run vfork 0 "hello from vfork
vfork: children exited 0 5"
	run hello 0 "hello world"
	run dlopen 0 "dlopen: c8fff215"
	run dynpie 0 "dynpie: ok"
	run rep 0 "rep: sum 1712 q 101010101010101 same 16"
	run syscalls 0 "syscalls: 21 of 21 ok"
	run exit3 3 "exit3: sum 10, exiting with 3"
	run segv 139 "segv: about to crash"
	run deepcrash 139 "deepcrash: work 14167"
	run midfault 0 "midfault: faults 4 sum 342"
	run demo 139 "demo: stock value 1095
demo: plum x20"
	# Last: the signals stay ignored for the rest of the body.
	trap '' INT HUP TERM USR2 PIPE
	run sigdisp 0 "INT=IGNORE HUP=IGNORE TERM=IGNORE USR2=IGNORE PIPE=IGNORE"
}

atf_test_case static_and_dynamic
static_and_dynamic_head() {
	atf_set descr "static fixtures have no interpreter, dynamic ones are PIEs with one, all carry a build-id"
}
static_and_dynamic_body() {
	for p in loop hello segv demo threads; do
		readelf -lW "$HWTRACE_PROGS/$p" | grep -q INTERP &&
			atf_fail "$p: expected a static binary, found a PT_INTERP"
	done
	for p in dlopen dynpie; do
		readelf -hW "$HWTRACE_PROGS/$p" | grep -q 'DYN (' ||
			atf_fail "$p: expected a PIE (ELF type DYN)"
		readelf -lW "$HWTRACE_PROGS/$p" | grep -q INTERP ||
			atf_fail "$p: expected a dynamic binary, no PT_INTERP"
	done
	for p in loop dlopen except libdlfix.so; do
		readelf -nW "$HWTRACE_PROGS/$p" | grep -q 'Build ID' ||
			atf_fail "$p: expected a GNU build-id note"
	done
}

atf_test_case jump_table_and_tail_calls
jump_table_and_tail_calls_head() {
	atf_set descr "the compiler made the indirect jumps the fixtures exist for"
}
jump_table_and_tail_calls_body() {
	dis() { objdump -d --no-show-raw-insn "$HWTRACE_PROGS/$1" |
		awk -v f="<$2>:" '$2 == f { on = 1; next } on && /^$/ { exit } on'; }
	# has PROG FUNC PATTERN WHAT: FUNC's code matches PATTERN, or fail.
	has() { dis "$1" "$2" | grep -q "$3" || atf_fail "$1: $4"; }
	has switch classify 'jmp *\*' \
	    "classify() has no indirect jmp (no jump table)"
	has tailcall middle 'jmp .*<leaf>' \
	    "middle() does not tail-call leaf() with a jmp"
	has tailcall top 'jmp *\*' "top() has no indirect tail call"
	has tailplt middle 'jmp .*<leaf>' \
	    "middle() does not tail-call leaf() with a jmp"
	has tailplt top 'jmp *\*' "top() has no indirect tail call"
	has tailplt plen 'jmp .*<strlen@plt>' \
	    "plen() does not tail-call strlen through its PLT stub"
	has rep main 'rep movsb' "main() has no rep movsb"
}

atf_init_test_cases() {
	atf_add_test_case outputs_and_status
	atf_add_test_case static_and_dynamic
	atf_add_test_case jump_table_and_tail_calls
}
