#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Copyright (c) 2026 The hwtrace authors
#
# hwtrace capture with the step source, end to end: ground truth against
# libipt's decode of the archive (the checker, ptcheck), exit status, the
# archive after ^C and after SIGKILL, attaching, and the error messages.

. "$(atf_get_srcdir)/../env.sh"
. "$HWTRACE_SRC/tests/lib/hwtr_test.sh"

PTCHECK=$HWTRACE_BUILD/tests/capture/ptcheck

# gt PROG STATUS: capture PROG with ground truth, expect its exit status,
# and have the checker compare libipt's decode with the ground truth.
gt() {
	prog=$1
	gt_capture step "$prog" "$2"
	if [ -x "$PTCHECK" ]; then
		"$PTCHECK" "$prog.hwtrace" >check 2>&1 ||
			atf_fail "$prog: libipt's decode differs from the ground truth: $(oneline check)"
		# What capture reports is what libipt decodes, all threads.
		dec=$(awk '/ instructions match$/ { n += $(NF - 2) } END { print n + 0 }' check)
		rep=$(sed -n 's/.* \([0-9][0-9]*\) instructions, .* bytes of trace$/\1/p' err)
		[ "$rep" = "$dec" ] ||
			atf_fail "$prog: capture reported '$rep' instructions, libipt decodes $dec"
	else
		# Without the checker, through the indexer (libipt's block
		# decoder over the archive's images and sideband); the
		# indexer's own tests (tests/indexer/t_groundtruth) do this too.
		gt_by_index "$prog.hwtrace"
	fi
}

# spin_gone WHAT: no spin fixture is left running; else fail saying WHAT.
spin_gone() {
	! pgrep -f "^$HWTRACE_PROGS/spin" >/dev/null || atf_fail "$1"
}

# attach_spin ARG...: start the fixture spin ($sp) and, once it runs,
# hwtrace capture --source step -p $sp ARG... in the background ($hp, its
# stderr in ./err); return 1.5 s later.
attach_spin() {
	need_prog spin
	"$HWTRACE_PROGS/spin" >out &
	sp=$!
	wait_for out 'spin: running'
	"$HWTRACE" capture --source step -p $sp "$@" 2>err &
	hp=$!
	sleep 1.5
}

# spin_state: the attached spin's state ($st) and tracer ($tr) as
# /proc/PID/status gives them (empty when it is gone); then spin is
# killed.
spin_state() {
	st=$(awk '/^State:/ { print $2 }' /proc/$sp/status 2>/dev/null)
	tr=$(awk '/^TracerPid:/ { print $2 }' /proc/$sp/status 2>/dev/null)
	kill $sp 2>/dev/null
}

# One test case per fixture: name, exit status.
GT_CASES="loop:0 recurse:0 calls:0 tailcall:0 switch:0 setjmp:0 signal:0
timer:0 threads:0 forkexec:0 vfork:0 rep:0 syscalls:0 segv:139 exit3:3
demo:139 dlopen:0 dynpie:0 except:0 manyfork:0 threxec:0 bigdata:0
longblock:0"

gt_cases ": libipt decodes the archive to exactly the instructions the tracer saw" $GT_CASES

atf_test_case exit_status_passthrough
exit_status_passthrough_head() {
	atf_set descr "hwtrace exits with the command's status, 128+signal when it was killed"
}
exit_status_passthrough_body() {
	need_prog exit3
	"$HWTRACE" capture --source step -o a.hwtrace -- "$HWTRACE_PROGS/exit3" >/dev/null 2>err
	rc=$?
	[ $rc -eq 3 ] || atf_fail "exit3: expected 3, got $rc ($(oneline err))"
	"$HWTRACE" capture --source step -o b.hwtrace -- "$HWTRACE_PROGS/segv" >/dev/null 2>err
	rc=$?
	[ $rc -eq 139 ] || atf_fail "segv: expected 139 (128+SIGSEGV), got $rc"
	members b.hwtrace | grep -q '^end.json$' ||
		atf_fail "the crashed program's archive has no end member"
}

atf_test_case keep_on_failure
keep_on_failure_head() {
	atf_set descr "--keep-on-failure keeps the archive only when the command fails"
}
keep_on_failure_body() {
	need_prog hello
	"$HWTRACE" capture --source step --keep-on-failure -o ok.hwtrace -- \
	    "$HWTRACE_PROGS/hello" >/dev/null 2>err
	rc=$?
	[ $rc -eq 0 ] || atf_fail "hello: expected 0, got $rc ($(oneline err))"
	expect_no_archive ok.hwtrace "the command succeeded"
	"$HWTRACE" capture --source step --keep-on-failure -o bad.hwtrace -- \
	    "$HWTRACE_PROGS/exit3" >/dev/null 2>err
	[ $? -eq 3 ] || atf_fail "exit3: wrong exit status"
	[ -f bad.hwtrace ] || atf_fail "no archive kept for a failing command"
}

atf_test_case no_follow
no_follow_head() {
	atf_set descr "--no-follow traces the first process only; the child still runs, its image is not stored"
}
no_follow_body() {
	need_prog forkexec
	"$HWTRACE" capture --source step --no-follow -o nf.hwtrace -- \
	    "$HWTRACE_PROGS/forkexec" >out 2>err
	rc=$?
	[ $rc -eq 0 ] || atf_fail "expected 0, got $rc ($(oneline err))"
	grep -q 'hello from forkexec' out ||
		atf_fail "the untraced child did not run: $(oneline out)"
	n=$(members nf.hwtrace | grep -c '^streams/.*/stream.json')
	[ "$n" -eq 1 ] || atf_fail "expected 1 stream, got $n"
	# The child execs hello: untraced, nothing decodes it.
	"$HWTRACE" info nf.hwtrace > nfinfo || atf_fail "info failed"
	grep -q '/forkexec (file' nfinfo ||
		atf_fail "the traced program's image is missing: $(oneline nfinfo)"
	! grep -q '/hello (file' nfinfo ||
		atf_fail "the untraced child's image was stored: $(oneline nfinfo)"
	"$HWTRACE" capture --source step -o f.hwtrace -- "$HWTRACE_PROGS/forkexec" \
	    >/dev/null 2>&1
	n=$(members f.hwtrace | grep -c '^streams/.*/stream.json')
	[ "$n" -eq 2 ] || atf_fail "following children: expected 2 streams, got $n"
	"$HWTRACE" info f.hwtrace | grep -q '/hello (file' ||
		atf_fail "following children: the child's image is missing"
}

atf_test_case sigint_writes_valid_archive
sigint_writes_valid_archive_head() {
	atf_set descr "SIGINT stops tracing, the archive is complete and no process is left"
	atf_set timeout 60
}
sigint_writes_valid_archive_body() {
	spin_capture int.hwtrace --source step
	stop_complete int.hwtrace
	spin_gone "spin is still running"
}

atf_test_case sigkill_leaves_readable_partial
sigkill_leaves_readable_partial_head() {
	atf_set descr "hwtrace killed with SIGKILL leaves a .partial archive with the flushed chunks"
	atf_set timeout 60
}
sigkill_leaves_readable_partial_body() {
	spin_capture kill.hwtrace --source step
	sleep 2.5
	kill -KILL $hp
	wait $hp
	sleep 0.3
	[ -f kill.hwtrace.partial ] || atf_fail "no kill.hwtrace.partial"
	members kill.hwtrace.partial >m
	grep -q '^hwtrace.json$' m || atf_fail "the partial archive has no manifest"
	grep -q '^streams/0/.*\.chunk$' m ||
		atf_fail "no chunk flushed in 2.5 s (flushes are due every second): $(oneline m)"
	# PTRACE_O_EXITKILL took the traced program with hwtrace.
	spin_gone "spin survived its tracer"
}

atf_test_case attach_sigusr2_detaches
attach_sigusr2_detaches_head() {
	atf_set descr "capture -p PID ends at SIGUSR2 too, leaving the process running and untraced"
	atf_set timeout 60
}
attach_sigusr2_detaches_body() {
	attach_spin --mode ring -o a2.hwtrace
	kill -USR2 $hp
	i=0
	while kill -0 $hp 2>/dev/null; do
		i=$((i + 1))
		[ $i -lt 100 ] || { kill -INT $hp; atf_fail "hwtrace did not end at SIGUSR2"; }
		sleep 0.1
	done
	wait $hp
	rc=$?
	spin_state
	[ $rc -eq 0 ] || atf_fail "expected 0, got $rc ($(oneline err))"
	[ -n "$st" ] && [ "$st" != T ] && [ "$st" != t ] ||
		atf_fail "the process died or was left stopped ('$st')"
	[ "$tr" = 0 ] || atf_fail "the process is still traced by $tr"
	decodes a2.hwtrace
}

atf_test_case traced_program_sigkilled
traced_program_sigkilled_head() {
	atf_set descr "a traced program killed with SIGKILL: exit status 137, a complete archive that decodes"
	atf_set timeout 60
}
traced_program_sigkilled_body() {
	spin_capture k9.hwtrace --source step
	sp=$(pgrep -P $hp)
	[ -n "$sp" ] || atf_fail "cannot find the traced spin"
	sleep 0.5
	kill -KILL $sp
	wait $hp
	rc=$?
	[ $rc -eq 137 ] || atf_fail "expected 137, got $rc ($(oneline err))"
	members k9.hwtrace | grep -q '^end.json$' ||
		atf_fail "the archive is not complete"
	decodes k9.hwtrace
}

atf_test_case attach_leaves_process_running
attach_leaves_process_running_head() {
	atf_set descr "capture -p PID traces a running process until SIGINT and leaves it running, untraced"
	atf_set timeout 60
}
attach_leaves_process_running_body() {
	attach_spin -o att.hwtrace
	kill -INT $hp
	wait $hp
	rc=$?
	[ $rc -eq 0 ] || atf_fail "expected 0, got $rc ($(oneline err))"
	sleep 0.3
	spin_state
	[ -n "$st" ] || atf_fail "the attached process died"
	[ "$st" != T ] && [ "$st" != t ] || atf_fail "the process was left stopped ($st)"
	[ "$tr" = 0 ] || atf_fail "the process is still traced by $tr"
	members att.hwtrace | grep -q '^streams/0/.*\.chunk$' ||
		atf_fail "no trace of the attached process"
}

atf_test_case command_not_found
command_not_found_head() {
	atf_set descr "a missing command is a clear error, exits 127 as sh does, and no archive is left"
}
command_not_found_body() {
	atf_check -s exit:127 -o empty \
	    -e match:"^hwtrace capture: cannot run 'no-such-command-xyz': command not found" \
	    "$HWTRACE" capture --source step -o x.hwtrace -- no-such-command-xyz
	expect_no_archive x.hwtrace "the command never ran"
}

atf_test_case output_not_writable
output_not_writable_head() {
	atf_set descr "an output that cannot be created is a clear error before anything runs"
}
output_not_writable_body() {
	need_prog hello
	atf_check -s exit:1 -o empty \
	    -e match:"^hwtrace capture: cannot create '/nonexistent-dir/x.hwtrace'" \
	    "$HWTRACE" capture --source step -o /nonexistent-dir/x.hwtrace -- \
	    "$HWTRACE_PROGS/hello"
}

atf_test_case usage_errors
usage_errors_head() {
	atf_set descr "malformed sizes, unknown modes and options, missing commands are usage errors"
}
usage_errors_body() {
	atf_check -s exit:2 -e match:"malformed buffer size '12Q'" \
	    "$HWTRACE" capture --source step --buffer 12Q -- /bin/true
	atf_check -s exit:2 -e match:"malformed buffer size '-5'" \
	    "$HWTRACE" capture --source step -b -5 -- /bin/true
	atf_check -s exit:2 -e match:"unknown mode 'loop'" \
	    "$HWTRACE" capture --source step --mode loop -- /bin/true
	atf_check -s exit:2 -e match:"no command to run" "$HWTRACE" capture
	atf_check -s exit:2 -e match:"unknown option" \
	    "$HWTRACE" capture --source step --frobnicate -- /bin/true
	atf_check -s exit:2 -e match:"unknown source 'nope'" \
	    "$HWTRACE" capture --source step --source nope -- /bin/true
	atf_check -s exit:2 -e match:"malformed process id 'abc'" \
	    "$HWTRACE" capture --source step -p abc
	atf_check -s exit:0 -o match:"^usage: hwtrace capture" \
	    "$HWTRACE" capture --source step --help
}

atf_test_case attach_refused
attach_refused_head() {
	atf_set descr "attaching to a process ptrace may not trace says 'ptrace refused' and why"
	atf_set require.user root
	atf_set require.progs "setpriv"
	atf_set timeout 60
}
attach_refused_body() {
	need_prog spin
	"$HWTRACE_PROGS/spin" >out &
	sp=$!
	wait_for out 'spin: running'
	chmod 0777 .
	# An unprivileged user may not trace root's process.
	setpriv --reuid=65534 --regid=65534 --clear-groups \
	    "$HWTRACE" capture --source step -p $sp -o nobody.hwtrace >/dev/null 2>err
	rc=$?
	kill $sp
	[ $rc -eq 1 ] || atf_fail "expected exit status 1, got $rc ($(oneline err))"
	grep -q "^hwtrace capture: cannot attach to process $sp: ptrace refused: Operation not permitted" err ||
		atf_fail "unexpected message: $(oneline err)"
	expect_no_archive nobody.hwtrace "the attach was refused"
}

atf_test_case attach_missing_process
attach_missing_process_head() {
	atf_set descr "-p with a process that does not exist is a clear error"
}
attach_missing_process_body() {
	atf_check -s exit:1 -e match:"no process 999999" \
	    "$HWTRACE" capture --source step -p 999999 -o m.hwtrace
}


# decodes FILE: the indexer (libipt) decodes every byte with no error.
decodes() {
	"$HWTRACE" index -o "$1.db" "$1" >ix 2>&1 ||
		atf_fail "hwtrace index $1 failed: $(oneline ix)"
	grep -q ' 0 decode errors (0 of [0-9]* bytes not decoded)' ix ||
		atf_fail "$1 does not decode cleanly: $(oneline ix)"
}

atf_test_case ring_keeps_last_bytes_and_records_loss
ring_keeps_last_bytes_and_records_loss_head() {
	atf_set descr "--mode ring keeps at most SIZE bytes from a PSB, records the overwritten bytes, and decodes"
	atf_set timeout 60
}
ring_keeps_last_bytes_and_records_loss_body() {
	need_prog loop
	"$HWTRACE" capture --source step --mode ring --buffer 4K --psb-period 64 -o r.hwtrace \
	    -- "$HWTRACE_PROGS/loop" >/dev/null 2>err ||
		atf_fail "capture failed: $(oneline err)"
	stream0_bytes r.hwtrace
	[ -n "$bytes" ] && [ "$bytes" -le 4096 ] && [ "$bytes" -gt 1024 ] ||
		atf_fail "expected 1K < kept bytes <= 4096, got '$bytes': $(oneline info)"
	grep -q '^  lost: 1$' info || atf_fail "no lost record: $(oneline info)"
	lost=$(sed -n 's/^lost: \([0-9]*\) trace bytes.*/\1/p' info)
	[ "$lost" -gt 0 ] || atf_fail "expected lost trace bytes > 0, got '$lost'"
	decodes r.hwtrace
}

atf_test_case stop_mode_stops_and_records_it
stop_mode_stops_and_records_it_head() {
	atf_set descr "--mode stop ends the trace when the buffer is full, records it, and the program runs to its end"
	atf_set timeout 60
}
stop_mode_stops_and_records_it_body() {
	need_prog loop
	"$HWTRACE" capture --source step --mode stop --buffer 1K -o s.hwtrace \
	    -- "$HWTRACE_PROGS/loop" >out 2>err ||
		atf_fail "capture failed: $(oneline err)"
	grep -q 'loop: sum 6090 odd 14' out ||
		atf_fail "the program did not finish: $(oneline out)"
	stream0_bytes s.hwtrace
	[ -n "$bytes" ] && [ "$bytes" -lt 2048 ] ||
		atf_fail "expected about 1K of trace, got '$bytes' (a full trace is 2.3K)"
	grep -q '^  lost: 1$' info || atf_fail "no lost record: $(oneline info)"
	decodes s.hwtrace
}

atf_test_case image_beyond_ratio
image_beyond_ratio_head() {
	atf_set descr "an image that compresses more than 4096 times (16 MiB of .data zeros) is written, read and decoded"
	atf_set require.progs objdump
}
image_beyond_ratio_body() {
	need_prog bigdata
	"$HWTRACE" capture --source step -o big.hwtrace -- \
	    "$HWTRACE_PROGS/bigdata" >out 2>err ||
		atf_fail "capture of bigdata failed: $(oneline err)"
	"$HWTRACE" info big.hwtrace >info 2>err ||
		atf_fail "info refuses the archive capture wrote: $(oneline err)"
	"$HWTRACE" index -o big.db big.hwtrace >ix 2>&1 ||
		atf_fail "index refuses the archive capture wrote: $(oneline ix)"
	# Every instruction of _start runs once: objdump's listing of .text.
	objdump -d -j .text "$HWTRACE_PROGS/bigdata" |
	    awk -F'\t' '/^ *[0-9a-f]+:\t/ && NF >= 3 { print $3 }' |
	    sed 's/ .*//' >want
	[ "$(wc -l <want)" -eq 5 ] ||
		atf_fail "objdump lists $(wc -l <want) instructions in bigdata's .text, expected 5: $(oneline want)"
	"$HWTRACE" query big.db insns --count 100 --format csv | sed 1d >got ||
		atf_fail "query insns failed"
	[ "$(wc -l <got)" -eq 5 ] ||
		atf_fail "decoded $(wc -l <got) instructions, objdump lists 5: $(oneline got)"
}

atf_test_case trigger_snapshots
trigger_snapshots_head() {
	atf_set descr "--trigger SYMBOL writes a ring snapshot each time the program reaches it"
	atf_set timeout 60
}
trigger_snapshots_body() {
	need_prog demo
	"$HWTRACE" capture --source step -v --mode ring --buffer 4K --psb-period 64 \
	    --trigger find_item -o t.hwtrace -- "$HWTRACE_PROGS/demo" \
	    >/dev/null 2>err
	[ $? -eq 139 ] || atf_fail "expected 139: $(oneline err)"
	n=$(grep -c "trigger 'find_item' reached" err)
	[ "$n" -eq 2 ] || atf_fail "expected 2 triggers (find_item runs twice), got $n: $(oneline err)"
	"$HWTRACE" info t.hwtrace >info
	grep -q "^  stream 0 .* 3 chunks," info ||
		atf_fail "expected 3 chunks (2 triggers, the end): $(oneline info)"
	decodes t.hwtrace
	atf_check -s exit:1 -e match:"no function 'no_such_fn' in the symbol tables" \
	    "$HWTRACE" capture --source step --mode ring --trigger no_such_fn -o u.hwtrace \
	    -- "$HWTRACE_PROGS/demo"
	atf_check -s exit:2 -e match:"--trigger needs --mode ring" \
	    "$HWTRACE" capture --source step --trigger find_item -- "$HWTRACE_PROGS/demo"
}

atf_test_case sigusr2_snapshots
sigusr2_snapshots_head() {
	atf_set descr "SIGUSR2 to hwtrace writes a ring snapshot"
	atf_set timeout 60
}
sigusr2_snapshots_body() {
	spin_capture u.hwtrace --source step --mode ring --buffer 64K
	sleep 1
	kill -USR2 $hp
	sleep 1
	kill -INT $hp
	wait $hp
	"$HWTRACE" info u.hwtrace >info
	grep -q "^  stream 0 .* 2 chunks," info ||
		atf_fail "expected 2 chunks (SIGUSR2, the end): $(oneline info)"
	decodes u.hwtrace
}

atf_test_case help_matches_man
help_matches_man_head() {
	atf_set descr "--help's usage is hwtrace-capture(1)'s SYNOPSIS and the page documents every option"
	atf_set require.progs "mandoc"
}
help_matches_man_body() {
	page=$HWTRACE_SRC/docs/hwtrace-capture.1
	"$HWTRACE" capture --source step --help >help
	want=$(sed -n '1,/^$/p' help | sed 's/^usage: //' | tr -s ' \t\n' '   ' |
	    sed 's/^ //; s/ $//')
	mandoc -Tascii "$page" | sed 's/.\x08//g' >man
	got=$(sed -n '/^SYNOPSIS/,/^DESCRIPTION/p' man | sed '1d;$d' |
	    tr -s ' \t\n' '   ' | sed 's/^ //; s/ $//')
	[ "$want" = "$got" ] ||
		atf_fail "SYNOPSIS differs from --help: expected '$want', got '$got'"
	for o in $(grep -o -- '--[a-z0-9-]*' help | sort -u); do
		grep -q -- "$o" man || atf_fail "hwtrace-capture.1 does not document $o"
	done
	mandoc -Tlint -W warning "$page" >lint 2>&1 ||
		atf_fail "mandoc -Tlint: $(oneline lint)"
}

atf_test_case man_examples_run
man_examples_run_head() {
	atf_set descr "the EXAMPLES of hwtrace-capture(1) run and exit 0"
	atf_set require.progs "mandoc"
	atf_set timeout 120
}
man_examples_run_body() {
	mandoc -Tascii "$HWTRACE_SRC/docs/hwtrace-capture.1" | sed 's/.\x08//g' |
	    sed -n '/^EXAMPLES/,/^DIAGNOSTICS/p' >ex
	# "$ command" lines, with "\" continuations joined.
	awk '
	cur == "" && /^ *\$ / { sub(/^ *\$ /, ""); cur = $0 }
	cur == "" { next }
	cur != $0 { sub(/^ */, ""); cur = cur " " $0 }
	/\\$/ { sub(/\\$/, "", cur); next }
	{ print cur; cur = "" }' ex >cmds
	n=$(wc -l <cmds)
	[ "$n" -ge 3 ] || atf_fail "expected 3 examples, found $n: $(oneline ex)"
	while IFS= read -r c; do
		(PATH=$(dirname "$HWTRACE"):$PATH; eval "$c"; wait) >exout 2>&1 </dev/null ||
			atf_fail "example '$c' failed: $(oneline exout)"
	done <cmds
	[ -f true.hwtrace ] && [ -f sleep.hwtrace ] && [ ! -e failed.hwtrace ] ||
		atf_fail "the examples did not leave the archives they describe"
}

atf_test_case program_sigpipe_as_outside
program_sigpipe_as_outside_head() { atf_set descr "the traced program gets SIGPIPE as the shell gave it to hwtrace: 'yes | head -1' under capture says 'Broken pipe' exactly when it says so outside (SIGPIPE ignored by the caller), for the step and valgrind sources"; }
program_sigpipe_as_outside_body()
{
	# The reference: the shell itself, outside hwtrace.
	sh -c 'yes | head -1' > /dev/null 2> plain.err
	(trap '' PIPE; sh -c 'yes | head -1') > /dev/null 2> ign.err
	! grep -q "Broken pipe" plain.err && grep -q "Broken pipe" ign.err ||
	    atf_skip "this shell's yes(1) does not show the difference"
	sources=step
	command -v valgrind.bin >/dev/null 2>&1 && sources="step valgrind"
	for src in $sources; do
		"$HWTRACE" capture --source $src -o $src.hwtrace -- \
		    sh -c 'yes | head -1' > out 2> err ||
		    atf_fail "$src: capture failed: $(oneline err)"
		! grep -q "Broken pipe" err ||
		    atf_fail "$src: the program ran with SIGPIPE ignored: $(oneline err)"
		(trap '' PIPE; "$HWTRACE" capture --source $src \
		    -o $src-ign.hwtrace -- sh -c 'yes | head -1') > out 2> err ||
		    atf_fail "$src: capture with SIGPIPE ignored failed: $(oneline err)"
		grep -q "Broken pipe" err ||
		    atf_fail "$src: SIGPIPE ignored by the caller was not passed on: $(oneline err)"
	done
}

atf_test_case program_ignored_signals_as_outside
program_ignored_signals_as_outside_head() {
	atf_set descr "signals ignored by the caller (nohup, a script's background job) stay ignored for the traced program, and the others are as the caller gave them: the fixture sigdisp reports under capture what it reports outside hwtrace, for the step and valgrind sources"
	atf_set timeout 120
}
program_ignored_signals_as_outside_body()
{
	p=$HWTRACE_PROGS/sigdisp
	sources=step
	command -v valgrind.bin >/dev/null 2>&1 && sources="step valgrind"
	# As the test was given the signals, then with all five ignored;
	# the reference each time: the fixture outside hwtrace.
	for how in given ignored; do
		[ $how = given ] || trap '' INT HUP TERM USR2 PIPE
		"$p" > ref || atf_fail "sigdisp failed outside hwtrace"
		[ $how = given ] || grep -qx "INT=IGNORE HUP=IGNORE TERM=IGNORE USR2=IGNORE PIPE=IGNORE" ref ||
			atf_fail "trap '' did not ignore the signals: $(oneline ref)"
		for src in $sources; do
			"$HWTRACE" capture --source $src -o $src-$how.hwtrace \
			    -- "$p" > out 2> err ||
			    atf_fail "$src, signals $how: capture failed: $(oneline err)"
			cmp -s ref out || atf_fail "$src, signals $how: the" \
			    "program saw '$(oneline out)', outside hwtrace" \
			    "'$(oneline ref)'"
		done
	done
}

atf_test_case ignored_sighup_does_not_stop
ignored_sighup_does_not_stop_head() {
	atf_set descr "with SIGHUP ignored (nohup), a SIGHUP to hwtrace capture neither stops the capture nor ends the program: it runs to its end, its exit status comes back and the archive is complete"
	atf_set timeout 60
}
ignored_sighup_does_not_stop_body()
{
	trap '' HUP
	# sigdisp hup-parent sends hwtrace (its parent) SIGHUP, waits, exits 7.
	rc=0
	"$HWTRACE" capture --source step -o hup.hwtrace -- \
	    "$HWTRACE_PROGS/sigdisp" hup-parent > out 2> err || rc=$?
	[ "$rc" -eq 7 ] || atf_fail "exit status $rc, expected the" \
	    "program's 7: $(oneline err)"
	grep -q "HUP=IGNORE" out ||
	    atf_fail "the program did not run to its end: '$(oneline out)'"
	"$HWTRACE" info hup.hwtrace > info 2>&1 ||
	    atf_fail "no complete archive: $(oneline info)"
}

atf_init_test_cases() {
	gt_add_cases $GT_CASES
	atf_add_test_case exit_status_passthrough
	atf_add_test_case image_beyond_ratio
	atf_add_test_case program_sigpipe_as_outside
	atf_add_test_case program_ignored_signals_as_outside
	atf_add_test_case ignored_sighup_does_not_stop
	atf_add_test_case keep_on_failure
	atf_add_test_case no_follow
	atf_add_test_case sigint_writes_valid_archive
	atf_add_test_case sigkill_leaves_readable_partial
	atf_add_test_case attach_leaves_process_running
	atf_add_test_case traced_program_sigkilled
	atf_add_test_case attach_sigusr2_detaches
	atf_add_test_case command_not_found
	atf_add_test_case output_not_writable
	atf_add_test_case usage_errors
	atf_add_test_case attach_missing_process
	atf_add_test_case attach_refused
	atf_add_test_case ring_keeps_last_bytes_and_records_loss
	atf_add_test_case stop_mode_stops_and_records_it
	atf_add_test_case trigger_snapshots
	atf_add_test_case sigusr2_snapshots
	atf_add_test_case help_matches_man
	atf_add_test_case man_examples_run
}
