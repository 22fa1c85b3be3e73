#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Command-line conventions (issue 22 item 8): options after the operand,
# -n, no silent replacement of an archive, the shell's exit statuses for a
# command that cannot be run (checked against sh(1) itself), short branch
# targets (checked against objdump(1)), coverage --lcov without DWARF, and
# one error message for a missing archive.

. "$(atf_get_srcdir)/../env.sh"
. "$HWTRACE_SRC/tests/lib/hwtr_test.sh"

# A small valgrind capture of fixture $1 into $1.hwtrace.
vg_capture()
{
	"$HWTRACE" capture --source valgrind -o "$1.hwtrace" -- \
	    "$HWTRACE_PROGS/$1" >/dev/null 2>capture.err ||
	    atf_fail "capture of $1 failed: $(cat capture.err)"
}

atf_test_case index_options_after_operand
index_options_after_operand_head()
{
	atf_set descr "index takes its options after the archive too, as query and import do"
	atf_set require.progs "valgrind.bin sqlite3"
}
index_options_after_operand_body()
{
	vg_capture hello
	run_status 0 "$HWTRACE" index hello.hwtrace -q -j 1 -o after.db
	[ -s err ] && atf_fail "index -q wrote to stderr: $(cat err)"
	[ -f after.db ] || atf_fail "index FILE -o after.db did not write after.db"
	[ ! -e hello.db ] || atf_fail "-o after the operand was ignored: hello.db written"
	n=$(sqlite3 after.db "SELECT count(*) FROM threads")
	[ "$n" = 1 ] || atf_fail "expected 1 thread in after.db, got '$n'"
	# Two operands are still an error, whatever their place.
	run_status 2 "$HWTRACE" index hello.hwtrace -q hello.hwtrace
	grep -q "too many operands" err || atf_fail "expected 'too many operands', got: $(cat err)"
	# After "--" an operand may start with a dash.
	cp hello.hwtrace ./-dash.hwtrace
	run_status 0 "$HWTRACE" index -q -o dash.db -- -dash.hwtrace
	[ -f dash.db ] || atf_fail "index -- -dash.hwtrace wrote no dash.db"
}

atf_test_case index_missing_error_once
index_missing_error_once_head()
{
	atf_set descr "index, info, verify and query of a missing archive, or of a directory, say so in one line naming it once"
}
index_missing_error_once_body()
{
	mkdir d.hwtrace
	for v in "index -q" info verify query; do
		for a in /nonexistent/x.hwtrace d.hwtrace; do
			[ "$v" = query ] && set -- last || set --
			run_status 1 "$HWTRACE" $v "$a" "$@"
			[ "$(wc -l < err)" -eq 1 ] || atf_fail "$v $a: expected one line on stderr, got: $(cat err)"
			n=$(grep -o "'$a'" err | wc -l)
			[ "$n" -eq 1 ] || atf_fail "$v $a: expected the path named once, got $n times: $(cat err)"
		done
		run_status 1 "$HWTRACE" $v /nonexistent/x.hwtrace "$@"
		grep -q "No such file or directory" err || atf_fail "$v: expected the reason, got: $(cat err)"
	done
}

atf_test_case insns_takes_n
insns_takes_n_head()
{
	atf_set descr "query insns takes -n N, as last, calls and hot do, for --count N"
	atf_set require.progs "valgrind.bin"
}
insns_takes_n_body()
{
	vg_capture loop
	run_status 0 "$HWTRACE" query loop.hwtrace insns -n 7 --format csv
	[ "$(wc -l < out)" -eq 8 ] || atf_fail "insns -n 7: expected a header and 7 rows, got: $(cat out)"
	mv out n.csv
	run_status 0 "$HWTRACE" query loop.hwtrace insns --count 7 --format csv
	cmp -s out n.csv || atf_fail "insns -n 7 and --count 7 differ: $(cat n.csv) / $(cat out)"
	run_status 2 "$HWTRACE" query loop.hwtrace insns -n seven
	grep -q "not a number" err || atf_fail "expected a usage error for -n seven, got: $(cat err)"
}

atf_test_case capture_refuses_to_replace
capture_refuses_to_replace_head()
{
	atf_set descr "capture refuses to replace an existing archive without --force, before running anything"
	atf_set require.progs "valgrind.bin"
}
capture_refuses_to_replace_body()
{
	echo precious > old.hwtrace
	run_status 1 "$HWTRACE" capture --source valgrind -o old.hwtrace -- \
	    /bin/sh -c 'touch ran'
	grep -q "'old.hwtrace' exists: give --force" err ||
	    atf_fail "expected a message naming old.hwtrace and --force, got: $(cat err)"
	[ "$(cat old.hwtrace)" = precious ] || atf_fail "old.hwtrace was changed"
	[ ! -e ran ] || atf_fail "the command ran although the capture was refused"
	[ ! -e old.hwtrace.partial ] || atf_fail "a .partial was left behind"
	run_status 0 "$HWTRACE" capture --force --source valgrind -o old.hwtrace -- \
	    /bin/sh -c 'touch ran'
	[ -e ran ] || atf_fail "capture --force did not run the command"
	tar -tf old.hwtrace > members || atf_fail "old.hwtrace is not an archive after --force"
	[ -s members ] || atf_fail "old.hwtrace has no members after --force"
}

atf_test_case exit_status_like_sh
exit_status_like_sh_head()
{
	atf_set descr "a command that is not found exits 127, one that cannot be executed 126, as sh(1) says"
	atf_set require.progs "valgrind.bin"
}
exit_status_like_sh_body()
{
	printf 'not a program\n' > noexec
	chmod 644 noexec
	for cmd in ./nosuchprog no-such-command-on-path ./noexec; do
		sh -c "exec $cmd" >/dev/null 2>&1
		want=$?
		for src in valgrind step; do
			rm -f x.hwtrace
			run_status $want "$HWTRACE" capture --source $src \
			    -o x.hwtrace -- $cmd
			grep -q "cannot run '$cmd'" err ||
			    atf_fail "$src: expected 'cannot run '$cmd'', got: $(cat err)"
			[ ! -e x.hwtrace ] || atf_fail "$src: an archive was written for $cmd"
		done
	done
}

atf_test_case disasm_short_targets
disasm_short_targets_head()
{
	atf_set descr "disassembly prints branch targets as short hex, the addresses objdump gives"
	atf_set require.progs "valgrind.bin objdump"
}
disasm_short_targets_body()
{
	vg_capture loop
	"$HWTRACE" query loop.hwtrace insns --count 100000000 --format tsv > ins.tsv ||
	    atf_fail "query insns failed"
	# "address target" of each direct jump and call in main, executed.
	awk -F'\t' '$4 ~ /^main(\+|$)/ && $6 ~ /^(j[a-z]*|call) 0x/ {
		split($6, w, " "); print $3, w[2] }' ins.tsv | sort -u > ours
	[ -s ours ] || atf_fail "no branch of main in the instruction history"
	grep -q ' 0x0' ours && atf_fail "a target is padded with zeros: $(grep ' 0x0' ours)"
	objdump -d --no-show-raw-insn "$HWTRACE_PROGS/loop" |
	    awk '/^[0-9a-f]+ <main>:$/ { on = 1; next } on && /^$/ { exit }
		on && $2 ~ /^(j[a-z]*|call)$/ && $3 ~ /^[0-9a-f]+$/ {
		sub(":", "", $1); print "0x" $1, "0x" $3 }' | sort -u > theirs
	[ -s theirs ] || atf_fail "objdump shows no direct branch in main"
	comm -23 ours theirs > extra
	[ ! -s extra ] || atf_fail "targets objdump does not give (ours: $(cat ours); objdump: $(cat theirs))"
}

atf_test_case coverage_lcov_without_dwarf
coverage_lcov_without_dwarf_head()
{
	atf_set descr "coverage --lcov on images without a line table prints the function table and says why no file was written"
	atf_set require.progs "valgrind.bin cc strip"
}
coverage_lcov_without_dwarf_body()
{
	printf 'int twice(int x) { return 2 * x; }\nint main(void) { return twice(0); }\n' > p.c
	cc -O0 -static -o p p.c || atf_fail "cannot build p.c"
	strip --strip-debug p
	readelf -S p | grep -q debug_line && atf_fail "strip left a line table in p"
	"$HWTRACE" capture --source valgrind -o p.hwtrace -- ./p >/dev/null 2>&1 ||
	    atf_fail "capture of p failed"
	run_status 0 "$HWTRACE" query p.hwtrace coverage --lcov cov.info --format csv
	grep -q '^[^,]*,twice,0x[0-9a-f]*,,1,' out ||
	    atf_fail "expected the function row of twice (1 entry, no line), got: $(grep twice out)"
	grep -q "'cov.info' not written: no source lines.*DWARF line table" err ||
	    atf_fail "expected why cov.info is missing on stderr, got: $(cat err)"
	[ ! -e cov.info ] || atf_fail "cov.info was written"
}

atf_init_test_cases()
{
	atf_add_test_case index_options_after_operand
	atf_add_test_case index_missing_error_once
	atf_add_test_case insns_takes_n
	atf_add_test_case capture_refuses_to_replace
	atf_add_test_case exit_status_like_sh
	atf_add_test_case disasm_short_targets
	atf_add_test_case coverage_lcov_without_dwarf
}
