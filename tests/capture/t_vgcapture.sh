#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Copyright (c) 2026 The hwtrace authors
#
# hwtrace capture with the valgrind source, end to end: ground truth in the
# archive and libipt's decode of it (the checker, ptcheck, when built), exit
# status passthrough, --keep-on-failure, ^C, what hwtrace info says,
# every instruction and branch direction against callgrind, the
# automatic choice of the source, and the errors: Valgrind missing, a tool
# built for another Valgrind, a program Valgrind cannot run.

. "$(atf_get_srcdir)/../env.sh"
. "$HWTRACE_SRC/tests/lib/hwtr_test.sh"

PTCHECK=$HWTRACE_BUILD/tests/capture/ptcheck

# gzip_traced MIN: gzip under capture wrote got.gz equal to want.gz, and
# the capture's summary in err counts more than MIN instructions.
gzip_traced() {
	cmp -s want.gz got.gz || atf_fail "gzip's output under valgrind differs"
	n=$(sed -n 's/.* \([0-9][0-9]*\) instructions.*/\1/p' err | tail -n 1)
	[ -n "$n" ] && [ "$n" -gt "$1" ] ||
		atf_fail "expected more than $1 instructions traced, got '$n': $(oneline err)"
}

# vg_indexed PROG NAME [WHY]: the fixture PROG captured with the valgrind
# source into NAME.hwtrace (its output in ./out) and indexed into NAME.db;
# fails naming the step that failed (the capture's with WHY).  Skips
# without Valgrind.
vg_indexed() {
	need_valgrind
	need_prog "$1"
	"$HWTRACE" capture --source valgrind -o "$2.hwtrace" \
	    -- "$HWTRACE_PROGS/$1" >out 2>err ||
		atf_fail "capture of $1 failed$3: $(oneline err)"
	"$HWTRACE" index -o "$2.db" "$2.hwtrace" >/dev/null 2>err ||
		atf_fail "index of $2.hwtrace failed: $(oneline err)"
}

# gzip_input BYTES: ./input, the first BYTES of /usr/bin's programs, and
# want.gz, gzip -1 of it; skips without Valgrind or gzip.
gzip_input() {
	need_valgrind
	require_tools gzip
	cat /usr/bin/* 2>/dev/null | head -c "$1" >input
	gzip -1 -c input >want.gz
}

# small_tmpfs SIZE: ./small, a tmpfs of SIZE (mount -o size=); skips where
# none can be mounted.  The test case's cleanup unmounts it.
small_tmpfs() {
	mkdir small
	mount -t tmpfs -o size="$1" hwtrace-vgtest small 2>err ||
		atf_skip "cannot mount a tmpfs here: $(oneline err)"
}

# small_capture SIZE ARG...: capture (with ARGs) by the valgrind source
# of gzip -1 of ./input into z.hwtrace (its output in got.gz, stderr in
# err), TMPDIR on ./small (small_tmpfs), a tmpfs of SIZE.
small_capture() {
	sc_size=$1
	shift
	TMPDIR=$PWD/small "$HWTRACE" capture "$@" --source valgrind \
	    -o z.hwtrace -- gzip -1 -c input >got.gz 2>err ||
		atf_fail "capture with a $sc_size TMPDIR failed: $(oneline err)"
}

# small_umount: the cleanup of a test case that mounted ./small.
small_umount() {
	umount small 2>/dev/null
	return 0
}

# gt PROG STATUS: capture PROG under valgrind with ground truth, expect its
# exit status, a ground-truth member, and the checker's agreement.
gt() {
	prog=$1
	need_valgrind
	# Chased superblocks from the start, not only after 5 M of them.
	HWTRACE_VALGRIND_CHASE_AFTER=0
	export HWTRACE_VALGRIND_CHASE_AFTER
	gt_capture valgrind "$prog" "$2"
	"$HWTRACE" info "$prog.hwtrace" >info 2>&1 ||
		atf_fail "$prog: hwtrace info failed: $(oneline info)"
	grep -q '^source: valgrind' info ||
		atf_fail "$prog: info does not name the valgrind source: $(oneline info)"
	if [ -x "$PTCHECK" ]; then
		"$PTCHECK" "$prog.hwtrace" >check 2>&1 ||
			atf_fail "$prog: libipt's decode differs from the ground truth: $(oneline check)"
	fi
	gt_by_index "$prog.hwtrace"
}

GT_CASES="loop:0 recurse:0 calls:0 tailcall:0 switch:0 setjmp:0 signal:0
timer:0 threads:0 forkexec:0 vfork:0 rep:0 syscalls:0 segv:139 exit3:3
demo:139 dlopen:0 dynpie:0 except:0 midfault:0 longblock:0"

gt_cases " under valgrind: exit status, ground truth, libipt's decode" $GT_CASES

atf_test_case tool_image_is_the_page_run
tool_image_is_the_page_run_head() {
	atf_set descr "Valgrind maps executable pages of the tool itself into every program (its signal return trampoline): the archive holds the bytes of those mappings, equal to the tool's file where its program headers put them, not the tool's whole 2.7 MB"
	atf_set timeout 120
	atf_set require.progs readelf
}
tool_image_is_the_page_run_body() {
	need_valgrind
	need_prog signal
	tool=$HWTRACE_BUILD/valgrind-lib/hwtrace-amd64-linux
	"$HWTRACE" capture --source valgrind --ground-truth -o s.hwtrace \
	    -- "$HWTRACE_PROGS/signal" >out 2>err ||
		atf_fail "capture failed: $(oneline err)"
	"$HWTRACE" info s.hwtrace >info 2>&1 || atf_fail "info: $(oneline info)"
	grep 'hwtrace-amd64-linux (' info | grep -v '(memory, ' >whole
	[ ! -s whole ] || atf_fail "the tool is stored whole: $(oneline whole)"
	grep 'r-x .*hwtrace-amd64-linux \[\|--x .*hwtrace-amd64-linux \[' info |
	    sed 's/.*: \(0x[0-9a-f]*\)-\(0x[0-9a-f]*\) .*\[\(.*\)\]$/\1 \2 \3/' \
	    >maps
	[ -s maps ] || atf_fail "no mapping of the tool in: $(oneline info)"
	readelf -lW "$tool" | awk '$1 == "LOAD" { print $2, $3, $6 }' >loads
	while read -r lo hi key; do
		lo=$((lo)) hi=$((hi))
		off=$(while read -r o va sz; do
			o=$((o)) va=$((va)) sz=$((sz))
			[ "$lo" -ge "$va" ] && [ "$hi" -le $((va + sz)) ] &&
			    echo $((lo - va + o))
		done <loads | head -n 1)
		[ -n "$off" ] || atf_fail "$lo-$hi is in no LOAD segment of $tool"
		tar -xOf s.hwtrace "images/$key" >img ||
			atf_fail "image $key missing"
		n=$(stat -c %s img)
		[ "$n" -eq $((hi - lo)) ] ||
			atf_fail "image $key holds $n bytes, the mapping $((hi - lo))"
		tail -c +$((off + 1)) "$tool" | head -c "$n" >want
		cmp -s want img ||
			atf_fail "image $key differs from $tool at offset $off"
	done <maps
	gt_by_index s.hwtrace
}

atf_test_case info_names_source_and_caveats
info_names_source_and_caveats_head() {
	atf_set descr "hwtrace info says the source was valgrind, its version and caveats"
}
info_names_source_and_caveats_body() {
	need_valgrind
	need_prog threads
	"$HWTRACE" capture --source valgrind -o t.hwtrace -- \
	    "$HWTRACE_PROGS/threads" >out 2>err ||
		atf_fail "capture failed: $(oneline err)"
	"$HWTRACE" info t.hwtrace >info 2>&1 || atf_fail "info: $(oneline info)"
	v=$(valgrind.bin --version)
	grep -q "^source: valgrind $v" info ||
		atf_fail "expected 'source: valgrind $v', got: $(grep '^source' info)"
	grep -q 'simulated CPU' info || atf_fail "no simulated-CPU caveat"
	grep -q 'serialized threads' info || atf_fail "no serialized-threads caveat"
	grep -q '^sideband origin: valgrind' info ||
		atf_fail "sideband origin: $(grep '^sideband origin' info)"
	n=$(grep -c "^  stream [0-9]* 'tid" info)
	[ "$n" -ge 2 ] || atf_fail "expected a stream per thread, got $n"
	grep -q "progs/threads (file" info ||
		atf_fail "the executable's image is not in the archive"
}

atf_test_case auto_picks_valgrind
auto_picks_valgrind_head() {
	atf_set descr "without --source, valgrind is chosen when it can run the program; step when attaching"
}
auto_picks_valgrind_body() {
	need_valgrind
	need_prog hello
	"$HWTRACE" capture -v -o a.hwtrace -- "$HWTRACE_PROGS/hello" \
	    >out 2>err || atf_fail "capture failed: $(oneline err)"
	grep -q 'trace source: valgrind' err ||
		atf_fail "expected 'trace source: valgrind', got: $(oneline err)"
	"$HWTRACE" info a.hwtrace | grep -q '^source: valgrind' ||
		atf_fail "the archive does not say valgrind"
	# A tool built for another Valgrind: step is chosen, and why is said.
	mkdir lib
	ln -s "$HWTRACE_BUILD/valgrind-lib/"* lib/
	rm lib/hwtrace-built-for
	echo valgrind-0.0.1 >lib/hwtrace-built-for
	HWTRACE_VALGRIND_LIB=$PWD/lib "$HWTRACE" capture -v -o b.hwtrace -- \
	    "$HWTRACE_PROGS/hello" >out 2>err ||
		atf_fail "capture failed: $(oneline err)"
	grep -q 'trace source: step (not valgrind: .*built for valgrind-0.0.1' err ||
		atf_fail "expected step and the reason, got: $(oneline err)"
}

atf_test_case exit_status_and_keep_on_failure
exit_status_and_keep_on_failure_head() {
	atf_set descr "the command's status passes through; --keep-on-failure keeps only failures"
	atf_set timeout 60
}
exit_status_and_keep_on_failure_body() {
	need_valgrind
	need_prog exit3
	need_prog hello
	"$HWTRACE" capture --source valgrind --keep-on-failure -o ok.hwtrace \
	    -- "$HWTRACE_PROGS/hello" >out 2>err
	[ $? -eq 0 ] || atf_fail "hello: expected 0 ($(oneline err))"
	[ ! -e ok.hwtrace ] || atf_fail "kept the archive of a success"
	"$HWTRACE" capture --source valgrind --keep-on-failure -o bad.hwtrace \
	    -- "$HWTRACE_PROGS/exit3" >out 2>err
	[ $? -eq 3 ] || atf_fail "exit3: expected 3 ($(oneline err))"
	[ -f bad.hwtrace ] || atf_fail "no archive of the failure"
	"$HWTRACE" info bad.hwtrace | grep -q '^exit: status 3' ||
		atf_fail "the archive does not record status 3"
}

atf_test_case chased_branches_counted
chased_branches_counted_head() {
	atf_set descr "both branches of a pair VEX chases are counted as they ran (tests/progs/chase.c)"
	atf_set timeout 120
}
chased_branches_counted_body() {
	vg_indexed chase c
	[ "$(cat out)" = 1000 ] || atf_fail "chase printed '$(cat out)'"
	"$HWTRACE" query --format csv c.db branches --from pair >br 2>err ||
		atf_fail "branches failed: $(oneline err)"
	# from,to,kind,count: the counts chase.c's comment derives.
	for want in "pair+0xf,pair+0x18,cond-taken,2000" \
	    "pair+0xf,pair+0x11,cond-not-taken,2000" \
	    "pair+0x14,pair+0x18,cond-taken,1000" \
	    "pair+0x14,pair+0x16,cond-not-taken,1000" \
	    "pair+0x1a,pair+0x2,cond-taken,3999"; do
		grep -q "^$want," br ||
			atf_fail "expected the edge $want; got: $(tr '\n' ' ' <br)"
	done
}

# nm_range PROG SYM: $range is "LO:HI", function SYM of PROG by nm(1)
# (its address and its address plus its size); fails without it.
nm_range() {
	lo=$(nm "$1" | awk -v s="$2" '$3 == s { print "0x" $1 }')
	sz=$(nm -S "$1" | awk -v s="$2" '$4 == s { print "0x" $2 }')
	[ -n "$lo" ] && [ -n "$sz" ] || atf_fail "no symbol '$2' in $1"
	range="$lo:$((lo + sz))"
}

# vgexact MININSNS MINBRANCHES [-r LO:HI] OBJECT COMMAND...:
# tests/tools/vgexact.sh (callgrind and the valgrind source on the same
# run, per instruction and per conditional branch in OBJECT) finds no
# difference, and compared at least that many of each.
vgexact() {
	mi=$1 mb=$2
	shift 2
	require_tools python3
	[ -x /usr/libexec/valgrind/callgrind-amd64-linux ] ||
		atf_skip "callgrind is not installed"
	HWTRACE="$HWTRACE" sh "$HWTRACE_SRC/tests/tools/vgexact.sh" -k vx.d \
	    -e HWTRACE_VALGRIND_CHASE_AFTER=0 "$@" >vx 2>vx.err
	rc=$?
	[ $rc -ne 2 ] || atf_fail "vgexact.sh failed: $(oneline vx.err)"
	[ $rc -eq 0 ] || atf_fail "expected every instruction and branch" \
	    "as callgrind counts them; got: $(oneline vx)"
	ni=$(sed -n 's/^instructions: \([0-9]*\) addresses.*/\1/p' vx)
	nb=$(sed -n 's/^conditional branches: \([0-9]*\),.*/\1/p' vx)
	[ "${ni:-0}" -ge "$mi" ] && [ "${nb:-0}" -ge "$mb" ] ||
		atf_fail "expected at least $mi instructions and $mb branches" \
		    "compared; got: $(oneline vx)"
}

atf_test_case exact_against_callgrind
exact_against_callgrind_head() {
	atf_set descr "gzip's own code: every instruction's count and every conditional branch's directions equal callgrind's (tests/tools/vgexact.sh)"
	atf_set timeout 180
}
exact_against_callgrind_body() {
	need_valgrind
	gz=$(readlink -f "$(command -v gzip)") || atf_skip "gzip is not installed"
	awk 'BEGIN { for (i = 0; i < 400; i++) printf "line %d: %d %s\n", i, i * i % 97, (i % 3 ? "abc" : "xyz") }' >in
	# gzip -6 of these 8 KiB runs 2,317 of its instructions and 243 of
	# its conditional branches (Debian 12's gzip 1.12); with plain
	# chasing 6 branches went the wrong way.
	vgexact 2000 200 "$gz" gzip -6 -c "$PWD/in"
}

atf_test_case chased_pair_exact_against_callgrind
chased_pair_exact_against_callgrind_head() {
	atf_set descr "the pair VEX chases (tests/progs/chase.c): its instructions and branch directions equal callgrind's"
	atf_set timeout 120
}
chased_pair_exact_against_callgrind_body() {
	need_valgrind
	need_prog chase
	nm_range "$HWTRACE_PROGS/chase" pair
	vgexact 12 3 -r "$range" "$HWTRACE_PROGS/chase" \
	    "$HWTRACE_PROGS/chase"
}

# vg_stats AFTER COMMAND...: COMMAND run by the hwtrace Valgrind tool
# itself (event files into ./ev) with --hw-stats=yes, chasing after
# AFTER superblocks; $nchase and $nredo, the superblocks it recorded
# with a chase and made again unchased.
vg_stats() {
	mkdir -p ev
	after=$1
	shift
	VALGRIND_LIB=$HWTRACE_BUILD/valgrind-lib valgrind.bin --tool=hwtrace \
	    --out-dir="$PWD/ev" --ring=no --hw-stats=yes \
	    --chase-after="$after" "$@" >stats.out \
	    2>stats.err || atf_fail "the tool failed on $1: $(oneline stats.err)"
	nchase=$(sed -n 's/.* \([0-9]*\) with a chase recorded.*/\1/p' \
	    stats.err)
	nredo=$(sed -n 's/.* \([0-9]*\) made again unchased$/\1/p' stats.err)
	[ -n "$nchase" ] && [ -n "$nredo" ] ||
		atf_fail "expected the tool's counts; got: $(oneline stats.err)"
	rm -rf ev
}

atf_test_case chase_recorded
chase_recorded_head() {
	atf_set descr "Valgrind chases (VEX's &&-idiom) under the tool: the pair of tests/progs/chase.c is one superblock whose record says whether its second block ran, and the trace equals the ground truth"
	atf_set timeout 120
}
chase_recorded_body() {
	need_valgrind
	need_prog chase
	vg_stats 0 "$HWTRACE_PROGS/chase"
	[ "$nchase" -ge 1 ] ||
		atf_fail "expected at least 1 superblock with a chase; got $nchase"
	gt chase 0
}

atf_test_case unchased_again_exact
unchased_again_exact_head() {
	atf_set descr "a superblock whose record cannot say which way its chased branches went (a loop iropt unrolled, a chase in each copy) is made again without chasing; ls -l of itself, which has such loops in Debian 12, equals the ground truth"
	atf_set timeout 300
}
unchased_again_exact_body() {
	need_valgrind
	ls=$(command -v ls) || atf_skip "ls is not installed"
	vg_stats 0 "$ls" -l "$ls"
	[ "$nredo" -ge 1 ] ||
		atf_skip "this ls has no superblock made again unchased"
	HWTRACE_VALGRIND_CHASE_AFTER=0 "$HWTRACE" capture --source valgrind \
	    --ground-truth -o ls.hwtrace -- "$ls" -l "$ls" >out 2>err ||
		atf_fail "capture of ls failed: $(oneline err)"
	if [ -x "$PTCHECK" ]; then
		"$PTCHECK" ls.hwtrace >check 2>&1 ||
			atf_fail "libipt's decode differs from the ground truth: $(oneline check)"
	fi
	gt_by_index ls.hwtrace
}

atf_test_case chasing_switched_on_exact
chasing_switched_on_exact_head() {
	atf_set descr "the tool starts unchased and, after a number of superblocks, discards every translation to make them again chased: gzip -6 of 16 KiB switched after 50,000 superblocks chases, and its trace equals the ground truth; an unusable HWTRACE_VALGRIND_CHASE_AFTER is refused"
	atf_set timeout 300
}
chasing_switched_on_exact_body() {
	need_valgrind
	require_tools gzip
	cat /usr/bin/* 2>/dev/null | head -c 16384 >in
	vg_stats 5000000 gzip -6 -c in
	[ "$nchase" -eq 0 ] ||
		atf_fail "expected no chase before 5 M superblocks; got $nchase"
	vg_stats 50000 gzip -6 -c in
	[ "$nchase" -ge 1 ] ||
		atf_fail "expected chases after 50,000 superblocks; got $nchase"
	HWTRACE_VALGRIND_CHASE_AFTER=50000 "$HWTRACE" capture \
	    --source valgrind --ground-truth -o gz.hwtrace -- gzip -6 -c in \
	    >got.gz 2>err || atf_fail "capture of gzip failed: $(oneline err)"
	gzip -6 -c in | cmp -s - got.gz ||
		atf_fail "gzip's output under the capture differs"
	if [ -x "$PTCHECK" ]; then
		"$PTCHECK" gz.hwtrace >check 2>&1 ||
			atf_fail "libipt's decode differs from the ground truth: $(oneline check)"
	fi
	gt_by_index gz.hwtrace
	HWTRACE_VALGRIND_CHASE_AFTER=soon "$HWTRACE" capture \
	    --source valgrind -o bad.hwtrace -- true >out 2>err
	[ $? -eq 1 ] || atf_fail "expected exit status 1 for a bad" \
	    "HWTRACE_VALGRIND_CHASE_AFTER, got $?: $(oneline err)"
	grep -q "HWTRACE_VALGRIND_CHASE_AFTER: expected a number" err ||
		atf_fail "expected the variable named; got: $(oneline err)"
}

atf_test_case retranslated_while_asleep
retranslated_while_asleep_head() {
	atf_set descr "a thread asleep in read(2) while chasing is switched on (every translation made again) runs on after another thread described read's superblock anew (tests/progs/wakeup.c): the capture ends well and its trace equals the ground truth.  The converter used to keep the sleeper's last superblock after freeing it (zstd -19 crashed hwtrace; make sanitize reports the use after free)"
	atf_set timeout 300
}
retranslated_while_asleep_body() {
	need_valgrind
	need_prog wakeup
	# The switch comes inside the main thread's loop of a million.
	HWTRACE_VALGRIND_CHASE_AFTER=100000 "$HWTRACE" capture \
	    --source valgrind --ground-truth -o w.hwtrace -- \
	    "$HWTRACE_PROGS/wakeup" >out 2>err ||
		atf_fail "capture of wakeup failed: $(oneline err)"
	grep -qx "wakeup: 499999500000" out ||
		atf_fail "wakeup's output under the capture: $(oneline out)"
	if [ -x "$PTCHECK" ]; then
		"$PTCHECK" w.hwtrace >check 2>&1 ||
			atf_fail "libipt's decode differs from the ground truth: $(oneline check)"
	fi
	gt_by_index w.hwtrace
}

atf_test_case rep_exact_against_callgrind
rep_exact_against_callgrind_head() {
	atf_set descr "main of tests/progs/rep.c: a rep-prefixed instruction counts once per execution, as callgrind's passes less its jumps back to itself say"
	atf_set timeout 120
}
rep_exact_against_callgrind_body() {
	need_valgrind
	need_prog rep
	nm_range "$HWTRACE_PROGS/rep" main
	# 72 instructions, 6 of them rep-prefixed (callgrind: 33, 17, 17,
	# 5, 1 and 17 passes, each run once).
	vgexact 60 1 -r "$range" "$HWTRACE_PROGS/rep" \
	    "$HWTRACE_PROGS/rep"
	grep -q "(6 rep-prefixed" vx ||
		atf_fail "expected 6 rep-prefixed instructions compared; got: $(oneline vx)"
}

atf_test_case long_block_exact_against_callgrind
long_block_exact_against_callgrind_head() {
	atf_set descr "tests/progs/longblock.S: a loop body of 70,000 instructions in 280,000 bytes (unrolled code) has its instructions laid out by both decoders, each counted 3 times as callgrind counts them, and each block's last_ip is its last instruction (blocks past 8 KiB of code had no layout; libipt ends a block of 65,534 with end_ip one instruction on)"
	atf_set timeout 120
}
long_block_exact_against_callgrind_body() {
	need_valgrind
	need_prog longblock
	require_tools sqlite3
	lo=$(nm "$HWTRACE_PROGS/longblock" | awk '$3 == "_start" { print "0x" $1 }')
	hi=$(nm "$HWTRACE_PROGS/longblock" |
	    awk '$3 == "longblock_exit" { print "0x" $1 }')
	[ -n "$lo" ] && [ -n "$hi" ] ||
		atf_fail "no _start or longblock_exit in longblock"
	vgexact 70004 1 -r "$lo:$hi" "$HWTRACE_PROGS/longblock" \
	    "$HWTRACE_PROGS/longblock"
	# The same capture by libipt's decoder.  In both: every block laid
	# out, its last_ip at its last instruction (start + size less the
	# last length), and 2 + 3 x 70,002 instructions up to the exit.
	"$HWTRACE" index --decoder libipt -o ipt.db vx.d/valgrind.hwtrace \
	    >out 2>err || atf_fail "index --decoder libipt failed: $(oneline err)"
	for db in vx.d/valgrind.db ipt.db; do
		got=$(sqlite3 "$db" "SELECT (SELECT count(*) FROM blocks WHERE insn_lens IS NULL OR length(insn_lens) != ninsns OR last_ip != start_ip + size - unicode(substr(CAST(insn_lens AS TEXT), -1))), (SELECT sum(exec_count * ninsns) FROM blocks WHERE start_ip >= $lo AND start_ip < $hi)")
		[ "$got" = "0|210008" ] ||
			atf_fail "$db: expected every block laid out and 210008 instructions; got '$got'"
	done
}

atf_test_case calls_against_callgrind
calls_against_callgrind_head() {
	atf_set descr "recursion, tail calls, indirect calls, signal handlers, longjmp and C++ exceptions (recurse, tailcall, calls, signal, setjmp, except; their static libc included): each function's calls and tail calls as many as callgrind's calls= lines into it (tests/tools/cgcalls.py)"
	atf_set timeout 300
}
calls_against_callgrind_body() {
	need_valgrind
	require_tools python3 nm readelf
	[ -x /usr/libexec/valgrind/callgrind-amd64-linux ] ||
		atf_skip "callgrind is not installed"
	for p in recurse tailcall calls signal setjmp except; do
		need_prog $p
		# Its exit status: 1 for the instructions callgrind does
		# not count (the block that ends the process), 2 on error.
		HWTRACE="$HWTRACE" sh "$HWTRACE_SRC/tests/tools/vgexact.sh" \
		    -k $p.d -e HWTRACE_VALGRIND_CHASE_AFTER=0 \
		    "$HWTRACE_PROGS/$p" "$HWTRACE_PROGS/$p" >vx 2>vx.err
		[ $? -ne 2 ] || atf_fail "vgexact.sh on $p failed: $(oneline vx.err)"
		python3 "$HWTRACE_SRC/tests/tools/cgcalls.py" "$HWTRACE" \
		    $p.d/cg.out $p.d/valgrind.db "$HWTRACE_PROGS/$p" >cc 2>cc.err
		rc=$?
		[ $rc -ne 2 ] || atf_fail "cgcalls.py on $p failed: $(oneline cc.err)"
		[ $rc -eq 0 ] ||
			atf_fail "$p: calls differ from callgrind's: $(oneline cc)"
		n=$(sed -n 's/^functions called: \([0-9]*\),.*/\1/p' cc)
		[ "${n:-0}" -ge 100 ] ||
			atf_fail "$p: expected at least 100 functions compared: $(oneline cc)"
	done
}

atf_test_case child_exit_status_recorded
child_exit_status_recorded_head() {
	atf_set descr "a forked child's _exit(5) is recorded as 5 (tests/progs/forkexit.c)"
	atf_set timeout 60
}
child_exit_status_recorded_body() {
	vg_indexed forkexit f " (the parent saw no 5)"
	"$HWTRACE" query --format csv f.db threads >th 2>err ||
		atf_fail "threads failed: $(oneline err)"
	# thread,pid,...,exit: the parent ends with 0, the child with 5.
	[ "$(sed 1d th | awk -F, '{ print $NF }' | sort | tr '\n' ' ')" = \
	    "code 0 code 5 " ] ||
		atf_fail "expected exits 'code 0' and 'code 5'; got: $(tr '\n' ' ' <th)"
}

atf_test_case crash_report_only_with_verbose
crash_report_only_with_verbose_head() {
	atf_set descr "a crash under valgrind is named as a shell names it; Valgrind's report only with --verbose"
	atf_set timeout 60
}
crash_report_only_with_verbose_body() {
	need_valgrind
	need_prog segv
	"$HWTRACE" capture --source valgrind -o s.hwtrace \
	    -- "$HWTRACE_PROGS/segv" >out 2>err
	[ $? -eq 139 ] || atf_fail "expected 139 ($(oneline err))"
	grep -q "killed: Segmentation fault" err ||
		atf_fail "the signal is not named: $(oneline err)"
	! grep -q "Process terminating" err ||
		atf_fail "Valgrind's report without --verbose: $(oneline err)"
	"$HWTRACE" capture --verbose --source valgrind --force -o s.hwtrace \
	    -- "$HWTRACE_PROGS/segv" >out 2>err
	grep -q "Process terminating with default action of signal 11" err ||
		atf_fail "no Valgrind report with --verbose: $(oneline err)"
	# The file that holds Valgrind's messages is no low descriptor of
	# the program's: its own open()s still start at 3.
	mkdir tmp
	TMPDIR=$PWD/tmp "$HWTRACE" capture --source valgrind --force \
	    -o f.hwtrace -- /bin/sh -c 'for f in /proc/$$/fd/*; do
	    n=${f##*/}; [ "$n" -lt 256 ] && readlink "$f"; done; exit 0' >fds 2>err ||
		atf_fail "capture of sh failed: $(oneline err)"
	! grep -q "$PWD/tmp" fds ||
		atf_fail "the program has the log file open below 256: $(oneline fds)"
}

atf_test_case sigint_writes_valid_archive
sigint_writes_valid_archive_head() {
	atf_set descr "SIGINT stops tracing under valgrind; the archive is complete, nothing is left running"
	atf_set timeout 60
}
sigint_writes_valid_archive_body() {
	need_valgrind
	spin_capture int.hwtrace --source valgrind
	stop_complete int.hwtrace
	sleep 0.3
	# Only this build's spin: other worktrees run this test at the same time.
	pgrep -f "tool=hwtrace.* $HWTRACE_PROGS/spin" >/dev/null &&
		atf_fail "valgrind is still running spin"
	return 0
}

atf_test_case ring_trigger_snapshots
ring_trigger_snapshots_head() {
	atf_set descr "--mode ring --trigger FUNCTION snapshots each time the program reaches it, under valgrind too"
	atf_set timeout 60
}
ring_trigger_snapshots_body() {
	need_valgrind
	need_prog calls
	"$HWTRACE" capture --source valgrind --mode ring --buffer 64K \
	    --trigger add -o ring.hwtrace -- "$HWTRACE_PROGS/calls" >out 2>err ||
		atf_fail "capture failed: $(oneline err)"
	n=$(members ring.hwtrace | grep -c '^streams/0/.*\.chunk$')
	[ "$n" -ge 2 ] ||
		atf_fail "expected a snapshot per call of add() and one at exit, got $n chunks"
}

atf_test_case stop_mode_stops_and_records_it
stop_mode_stops_and_records_it_head() {
	atf_set descr "--mode stop under valgrind: the trace ends when the buffer is full, exactly (ground truth up to there), it is recorded, and the program runs to its end"
	atf_set timeout 120
}
stop_mode_stops_and_records_it_body() {
	need_valgrind
	need_prog loop
	"$HWTRACE" capture --source valgrind --ground-truth -o full.hwtrace \
	    -- "$HWTRACE_PROGS/loop" >out 2>err ||
		atf_fail "capture failed: $(oneline err)"
	"$HWTRACE" info full.hwtrace >info.full
	whole=$(sed -n "s/^  stream 0 .* \([0-9][0-9]*\) bytes$/\1/p" info.full)
	[ -n "$whole" ] && [ "$whole" -gt 2048 ] ||
		atf_fail "expected more than 2K of trace without a limit, got '$whole'"
	"$HWTRACE" capture --source valgrind --mode stop --buffer 1K \
	    --ground-truth -o s.hwtrace -- "$HWTRACE_PROGS/loop" >out 2>err ||
		atf_fail "capture failed: $(oneline err)"
	grep -q 'loop: sum 6090 odd 14' out ||
		atf_fail "the program did not finish: $(oneline out)"
	stream0_bytes s.hwtrace
	# The limit is checked every 16th superblock: a little overrun.
	[ -n "$bytes" ] && [ "$bytes" -ge 1024 ] && [ "$bytes" -lt 1536 ] ||
		atf_fail "expected 1K to 1.5K of trace, got '$bytes' (without a limit: $whole)"
	grep -q '^  lost: 1$' info || atf_fail "no lost record: $(oneline info)"
	# What was traced is exact: libipt's decode is the ground truth,
	# which ends where the trace stopped.
	if [ -x "$PTCHECK" ]; then
		"$PTCHECK" s.hwtrace >check 2>&1 ||
			atf_fail "libipt's decode differs from the ground truth: $(oneline check)"
	fi
	gt_by_index s.hwtrace
}

atf_test_case event_files_use_bounded_disk cleanup
event_files_use_bounded_disk_head() {
	atf_set descr "the tool's event files take bounded room (a ring, or a stream given back as it is converted): gzip of 1 MiB (about 45 MB of events) is captured with TMPDIR on a 16 MiB tmpfs"
	atf_set timeout 300
	atf_set require.user root
}
event_files_use_bounded_disk_body() {
	gzip_input 1048576
	small_tmpfs 16m
	small_capture "16 MiB"
	gzip_traced 100000000
	[ -z "$(ls small)" ] || atf_fail "event files left behind: $(ls small)"
}
event_files_use_bounded_disk_cleanup() {
	small_umount
}

atf_test_case ring_fork_child_while_parent_waits
ring_fork_child_while_parent_waits_head() {
	atf_set descr "event files are rings shared with hwtrace; a fork child that execs gzip (about 45 MB of events, 5 times the ring) while its parent waits for it is converted"
	atf_set timeout 300
}
ring_fork_child_while_parent_waits_body() {
	gzip_input 1048576
	"$HWTRACE" capture -v --source valgrind -o f.hwtrace -- \
	    /bin/sh -c 'gzip -1 -c input >got.gz; echo done' >out 2>err ||
		atf_fail "capture failed: $(oneline err)"
	gzip_traced 100000000
	grep -q "^done" out || atf_fail "the shell did not go on after gzip"
	grep -q "is a ring of" err ||
		atf_fail "no event file was a ring: $(oneline err)"
}

atf_test_case ring_falls_back_to_stream cleanup
ring_falls_back_to_stream_head() {
	atf_set descr "where the disk has no room for the tool's ring (TMPDIR on a 4 MiB tmpfs, the ring is 8 MiB) the event file is a stream, punched as it is converted: gzip of 256 KiB (about 11 MB of events) is captured all the same"
	atf_set timeout 300
	atf_set require.user root
}
ring_falls_back_to_stream_body() {
	gzip_input 262144
	small_tmpfs 4m
	small_capture "4 MiB" -v
	gzip_traced 20000000
	grep -q "is a stream" err ||
		atf_fail "the event file was not a stream: $(oneline err)"
	[ -z "$(ls small)" ] || atf_fail "event files left behind: $(ls small)"
}
ring_falls_back_to_stream_cleanup() {
	small_umount
}

atf_test_case event_files_read_fallback
event_files_read_fallback_head() {
	atf_set descr "where an event file cannot be mapped hwtrace read()s it (forced by HWTRACE_VALGRIND_READ): a fork, an exec and threads still give the ground truth"
	atf_set timeout 120
}
event_files_read_fallback_body() {
	HWTRACE_VALGRIND_READ=1
	export HWTRACE_VALGRIND_READ
	gt forkexec 0
	gt threads 0
}

atf_test_case event_files_default_dir
event_files_default_dir_head() {
	atf_set descr "without TMPDIR the tool's event files go to /dev/shm when it is a tmpfs (cheaper to write than a disk's page cache), else /tmp, and nothing is left there"
}
event_files_default_dir_body() {
	need_valgrind
	need_prog hello
	if [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] &&
	    [ -w /dev/shm ]; then
		want=/dev/shm
	else
		want=/tmp
	fi
	env -u TMPDIR "$HWTRACE" capture -v --source valgrind -o d.hwtrace \
	    -- "$HWTRACE_PROGS/hello" >out 2>err ||
		atf_fail "capture failed: $(oneline err)"
	dir=$(sed -n "s/.*valgrind: event files in '\(.*\)'$/\1/p" err)
	case $dir in
	"$want"/hwtrace-vg.*) ;;
	*)	atf_fail "expected the event files in $want/hwtrace-vg.*, the log says '$dir': $(oneline err)" ;;
	esac
	[ ! -e "$dir" ] || atf_fail "$dir was left behind"
}

atf_test_case stale_event_dirs_removed
stale_event_dirs_removed_head() {
	atf_set descr "the event directory of a capture killed with SIGKILL is removed by the next capture; a directory another capture holds, one just made, and a kept one stay"
	atf_set timeout 120
}
stale_event_dirs_removed_body() {
	need_valgrind
	need_prog hello
	mkdir t
	export TMPDIR=$PWD/t
	"$HWTRACE" capture -v --source valgrind -o k.hwtrace -- sleep 30 \
	    >/dev/null 2>kerr &
	cap=$!
	i=0
	while ! grep -q 'event files in' kerr && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	killed=$(sed -n "s/.*valgrind: event files in '\(.*\)'$/\1/p" kerr)
	kill -9 $cap
	wait $cap
	[ -n "$killed" ] && [ -d "$killed" ] ||
		atf_fail "expected the killed capture's event directory to stay behind, got '$killed': $(oneline kerr)"
	# Its Valgrind dies with it (PR_SET_PDEATHSIG).
	i=0
	while pgrep -f "out-dir=$killed" >/dev/null && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	mkdir t/hwtrace-vg.LIVE01 t/hwtrace-vg.YOUNG1 t/hwtrace-vg-kept.OLD001
	: >t/hwtrace-vg-kept.OLD001/vg.1.0.evt
	flock t/hwtrace-vg.LIVE01 sleep 60 &
	holder=$!
	touch -d '1 hour ago' "$killed" t/hwtrace-vg.LIVE01 \
	    t/hwtrace-vg-kept.OLD001
	"$HWTRACE" capture -v --source valgrind -o d.hwtrace \
	    -- "$HWTRACE_PROGS/hello" >out 2>err ||
		atf_fail "capture failed: $(oneline err)"
	kill $holder 2>/dev/null
	[ ! -e "$killed" ] ||
		atf_fail "$killed, left by the killed capture, is still there: $(ls -A "$killed" | head -3)"
	grep -q "removed '$killed', left by a capture that did not end" err ||
		atf_fail "expected the capture to say it removed $killed: $(oneline err)"
	for d in hwtrace-vg.LIVE01 hwtrace-vg.YOUNG1 hwtrace-vg-kept.OLD001; do
		[ -d "t/$d" ] || atf_fail "t/$d was removed"
	done
	[ -e t/hwtrace-vg-kept.OLD001/vg.1.0.evt ] ||
		atf_fail "the kept directory lost its file"
	left=$(ls t | grep -v -x -e hwtrace-vg.LIVE01 -e hwtrace-vg.YOUNG1 \
	    -e hwtrace-vg-kept.OLD001)
	[ -z "$left" ] || atf_fail "left in TMPDIR: $left"
}

atf_test_case error_valgrind_missing
error_valgrind_missing_head() {
	atf_set descr "--source valgrind without valgrind.bin on PATH is a clear error"
}
error_valgrind_missing_body() {
	need_prog hello
	atf_check -s exit:1 -o ignore \
	    -e match:"^hwtrace capture: valgrind is not installed \(no valgrind.bin on PATH\)" \
	    env PATH=/nonexistent "$HWTRACE" capture --source valgrind \
	    -o x.hwtrace -- "$HWTRACE_PROGS/hello"
	[ ! -e x.hwtrace ] || atf_fail "an archive was left"
}

atf_test_case error_version_mismatch
error_version_mismatch_head() {
	atf_set descr "a tool built for another valgrind version is refused, naming both"
}
error_version_mismatch_body() {
	need_valgrind
	need_prog hello
	mkdir lib
	ln -s "$HWTRACE_BUILD/valgrind-lib/"* lib/
	rm lib/hwtrace-built-for
	echo valgrind-0.0.1 >lib/hwtrace-built-for
	v=$(valgrind.bin --version)
	atf_check -s exit:1 -o ignore \
	    -e match:"^hwtrace capture: $v is installed but the hwtrace Valgrind tool was built for valgrind-0.0.1: rebuild hwtrace" \
	    env HWTRACE_VALGRIND_LIB=$PWD/lib "$HWTRACE" capture \
	    --source valgrind -o x.hwtrace -- "$HWTRACE_PROGS/hello"
	atf_check -s exit:1 -o ignore \
	    -e match:"^hwtrace capture: the hwtrace Valgrind tool is not built" \
	    env HWTRACE_VALGRIND_LIB=/nonexistent "$HWTRACE" capture \
	    --source valgrind -o x.hwtrace -- "$HWTRACE_PROGS/hello"
}

atf_test_case error_sigill_unsupported_insn
error_sigill_unsupported_insn_head() {
	atf_set descr "a program using an instruction Valgrind lacks (AVX-512) dies of SIGILL, reported as such"
	atf_set require.progs "cc"
	atf_set timeout 60
}
error_sigill_unsupported_insn_body() {
	need_valgrind
	cat >avx512.c <<'EOF'
int
main(void)
{
	/* vpxord %zmm0, %zmm0, %zmm0: EVEX, not in Valgrind's CPU. */
	__asm__ volatile(".byte 0x62, 0xf1, 0x7d, 0x48, 0xef, 0xc0");
	return (0);
}
EOF
	cc -o avx512 avx512.c || atf_fail "cannot compile the test program"
	"$HWTRACE" capture --source valgrind -o ill.hwtrace -- ./avx512 \
	    >out 2>err
	rc=$?
	[ $rc -eq 132 ] || atf_fail "expected 132 (SIGILL), got $rc ($(oneline err))"
	grep -q "valgrind: the program died of SIGILL: it may use an instruction Valgrind's simulated CPU does not have" err ||
		atf_fail "SIGILL not explained: $(oneline err)"
}

atf_test_case cpuid_rdtscp_as_host
cpuid_rdtscp_as_host_head() {
	atf_set descr "the traced program's CPUID lists RDTSCP as the host's does, and RDTSCP runs where it is listed"
	atf_set require.progs "cc"
	atf_set timeout 60
}
cpuid_rdtscp_as_host_body() {
	need_valgrind
	# Valgrind's own CPUID table lists RDTSCP, which its decoder knows
	# only where the host has it: a program believing the table (Go's
	# runtime) died of SIGILL on hosts without it.
	cat >rdtscp.c <<'EOF'
#include <cpuid.h>
#include <stdio.h>
#include <x86intrin.h>

int
main(void)
{
	unsigned a, b, c, d, aux;
	int has;

	has = __get_cpuid(0x80000001, &a, &b, &c, &d) && (d >> 27 & 1);
	if (has)
		(void)__rdtscp(&aux);
	printf("rdtscp %d\n", has);
	return (0);
}
EOF
	cc -O2 -o rdtscp rdtscp.c || atf_fail "cannot compile the test program"
	./rdtscp >host || atf_fail "the program fails natively"
	"$HWTRACE" capture --source valgrind -o r.hwtrace -- ./rdtscp \
	    >guest 2>err || atf_fail "capture failed: $(oneline err)"
	cmp -s host guest || atf_fail "natively '$(oneline host)', traced '$(oneline guest)'"
}

atf_init_test_cases() {
	gt_add_cases $GT_CASES
	atf_add_test_case info_names_source_and_caveats
	atf_add_test_case tool_image_is_the_page_run
	atf_add_test_case auto_picks_valgrind
	atf_add_test_case exit_status_and_keep_on_failure
	atf_add_test_case chased_branches_counted
	atf_add_test_case chased_pair_exact_against_callgrind
	atf_add_test_case chase_recorded
	atf_add_test_case unchased_again_exact
	atf_add_test_case chasing_switched_on_exact
	atf_add_test_case retranslated_while_asleep
	atf_add_test_case exact_against_callgrind
	atf_add_test_case rep_exact_against_callgrind
	atf_add_test_case long_block_exact_against_callgrind
	atf_add_test_case calls_against_callgrind
	atf_add_test_case child_exit_status_recorded
	atf_add_test_case crash_report_only_with_verbose
	atf_add_test_case sigint_writes_valid_archive
	atf_add_test_case ring_trigger_snapshots
	atf_add_test_case stop_mode_stops_and_records_it
	atf_add_test_case event_files_use_bounded_disk
	atf_add_test_case ring_fork_child_while_parent_waits
	atf_add_test_case ring_falls_back_to_stream
	atf_add_test_case event_files_read_fallback
	atf_add_test_case event_files_default_dir
	atf_add_test_case stale_event_dirs_removed
	atf_add_test_case error_valgrind_missing
	atf_add_test_case error_version_mismatch
	atf_add_test_case error_sigill_unsupported_insn
	atf_add_test_case cpuid_rdtscp_as_host
}
