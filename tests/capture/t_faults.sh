#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Copyright (c) 2026 The hwtrace authors
#
# Faults around a capture or an index: hwtrace killed with SIGKILL (what
# the .partial archive holds, what happens to the traced processes), a
# full disk, and the temporary files a killed run leaves behind.  The
# programs these cases trace are built by the cases themselves.

. "$(atf_get_srcdir)/../env.sh"
. "$HWTRACE_SRC/tests/lib/hwtr_test.sh"

# churn.c: a program that runs data-dependent branches in churn() for
# two seconds, then loads libchurn2.so (a mapping made long after the
# start) and runs the same loop in its churn2() for ever.  Under Valgrind
# it makes events faster than the converter takes them.
write_churn() {
	cat >loop.h <<'EOF'
static volatile unsigned long sink;

unsigned long
NAME(unsigned long x)
{
	int i;

	for (i = 0; i < 4096; i++) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		if (x & (1UL << 40))
			sink += x >> 3;
		else if (x & (1UL << 41))
			sink ^= x;
		else
			sink -= (unsigned long)i;
	}
	return (x);
}
EOF
	cat >churn2.c <<'EOF'
#define NAME churn2
#include "loop.h"
EOF
	cat >churn.c <<'EOF'
#include <dlfcn.h>
#include <stdio.h>
#include <time.h>

#define NAME churn
__attribute__((noinline)) unsigned long churn(unsigned long);
#include "loop.h"

int
main(void)
{
	unsigned long (*f)(unsigned long);
	unsigned long x = 1;
	time_t t0 = time(NULL);
	void *h;

	printf("churn: running\n");
	fflush(stdout);
	while (time(NULL) < t0 + 2)
		x = churn(x);
	if ((h = dlopen("./libchurn2.so", RTLD_NOW)) == NULL ||
	    (f = (unsigned long (*)(unsigned long))dlsym(h, "churn2")) == NULL)
		return (1);
	printf("churn: loaded\n");
	fflush(stdout);
	for (;;)
		x = f(x);
}
EOF
	cc -O1 -g -fPIC -shared -o libchurn2.so churn2.c &&
	    cc -O1 -g -o churn churn.c -ldl ||
		atf_fail "cannot compile churn.c"
}

# churn_capture ARCHIVE: capture churn (write_churn) under valgrind into
# ARCHIVE in the background (hwtrace's pid in $hp) until the library is
# loaded.
churn_capture() {
	need_valgrind
	require_tools cc
	write_churn
	"$HWTRACE" capture --source valgrind -o "$1" -- ./churn >out 2>err &
	hp=$!
	wait_for out 'churn: loaded'
}

# nchunks ARCHIVE: how many trace chunks it holds.
nchunks() {
	members "$1" | grep -c '^streams/0/.*\.chunk$'
}

atf_test_case vg_sigkill_partial_decodes
vg_sigkill_partial_decodes_head() {
	atf_set descr "a valgrind capture killed with SIGKILL leaves a .partial whose sideband (process, mappings) reached the file with its trace, so that it decodes up to the cut, with names"
	atf_set timeout 120
}
vg_sigkill_partial_decodes_body() {
	churn_capture k.hwtrace
	# Two trace chunks more in the file, then the kill.
	n0=$(nchunks k.hwtrace.partial)
	i=0
	while [ "$(nchunks k.hwtrace.partial)" -lt $((n0 + 2)) ]; do
		i=$((i + 1))
		[ $i -lt 300 ] || atf_fail "no trace chunk in k.hwtrace.partial after 30 s"
		sleep 0.1
	done
	kill -KILL $hp
	wait $hp
	members k.hwtrace.partial | grep -q '^sideband/' ||
		atf_fail "the .partial has trace chunks but no sideband member: $(members k.hwtrace.partial | tr '\n' ' ')"
	"$HWTRACE" index -o k.db k.hwtrace.partial >ix 2>&1 ||
		atf_fail "hwtrace index of the .partial failed: $(oneline ix)"
	"$HWTRACE" query k.db threads --format csv >threads 2>&1 ||
		atf_fail "query threads failed: $(oneline threads)"
	n=$(awk -F, 'NR > 1 { n += $7 } END { printf "%.0f\n", n }' threads)
	[ "$n" -gt 0 ] ||
		atf_fail "expected instructions decoded from the .partial, got $n: $(oneline ix)"
	"$HWTRACE" query k.db hot --format csv >hot 2>&1 ||
		atf_fail "query hot failed: $(oneline hot)"
	# Compared with nm: the function is the library's own symbol.
	nm -D libchurn2.so | grep -q ' T churn2$' ||
		atf_fail "nm does not list churn2 in libchurn2.so"
	c=$(awk -F, '$1 == "churn2" { print $3 }' hot)
	[ -n "$c" ] && [ "$c" -gt 0 ] ||
		atf_fail "expected instructions in churn2() (in the library loaded late), got '$c': $(oneline hot) (index: $(oneline ix); archive: $(members k.hwtrace.partial | tr "\n" " "))"
}

atf_test_case step_full_disk_removes_partial
step_full_disk_removes_partial_head() {
	atf_set descr "a step capture that cannot write its archive (the file size limit, as a full disk) after trace chunks were written removes its .partial, as the valgrind source does"
	atf_set timeout 120
}
step_full_disk_removes_partial_body() {
	need_prog spin
	# The unit of ulimit -f in this shell (512 or 1024 bytes).
	(ulimit -f 2; dd if=/dev/zero of=probe bs=256 count=16) 2>/dev/null
	unit=$(($(wc -c <probe) / 2))
	[ "$unit" -gt 0 ] || atf_skip "ulimit -f does not limit the file size here"
	# The archive of a one-second run: images, a little trace, the end.
	"$HWTRACE" capture --source step -o a.hwtrace -- "$HWTRACE_PROGS/spin" \
	    >outa 2>erra &
	hp=$!
	wait_for outa 'spin: running'
	sleep 1
	kill -INT $hp
	wait $hp
	[ -f a.hwtrace ] || atf_fail "the first capture wrote no archive: $(oneline erra)"
	lim=$((($(wc -c <a.hwtrace) + 8192) / unit))
	# Room for the same images and some trace; not for the ground truth
	# (8 bytes per instruction) written at the end.  SIGXFSZ ignored:
	# write(2) fails with EFBIG, as with ENOSPC on a full disk.
	(trap '' XFSZ; ulimit -f $lim; exec "$HWTRACE" capture --source step \
	    --ground-truth -o b.hwtrace -- "$HWTRACE_PROGS/spin" >outb 2>errb) &
	hp=$!
	wait_for outb 'spin: running'
	sleep 2.5
	kill -INT $hp
	wait $hp
	rc=$?
	[ $rc -ne 0 ] || atf_fail "expected the capture to fail at the size limit of $lim blocks, it exited 0: $(oneline errb)"
	grep -q 'File too large' errb ||
		atf_fail "expected an error naming the failed write (File too large), got: $(oneline errb)"
	expect_no_archive b.hwtrace "the write failed"
}

atf_test_case attach_sigkill_leaves_process_alive
attach_sigkill_leaves_process_alive_head() {
	atf_set descr "capture -p PID killed with SIGKILL while single-stepping: the process survives, untraced, and exits normally later (5 of 5 runs)"
	atf_set timeout 120
}
attach_sigkill_leaves_process_alive_body() {
	need_prog spin
	for run in 1 2 3 4 5; do
		rm -f stop out.$run
		"$HWTRACE_PROGS/spin" stop >out.$run &
		sp=$!
		wait_for out.$run 'spin: running'
		"$HWTRACE" capture --source step -p $sp -o a.$run.hwtrace \
		    >/dev/null 2>err.$run &
		hp=$!
		# Attached (the kernel names its tracer), then stepped a while.
		i=0
		while grep -q '^TracerPid:[[:space:]]*0$' /proc/$sp/status 2>/dev/null; do
			i=$((i + 1))
			[ $i -lt 300 ] || atf_fail "run $run: capture -p never attached: $(oneline err.$run)"
			sleep 0.1
		done
		sleep 0.5
		kill -KILL $hp
		wait $hp
		sleep 0.5
		kill -0 $sp 2>/dev/null || {
			wait $sp
			atf_fail "run $run: the attached process died with its capture (exit status $?, 133 is SIGTRAP)"
		}
		: >stop
		wait $sp
		rc=$?
		[ $rc -eq 0 ] ||
			atf_fail "run $run: expected the process to exit 0 on its own, got $rc"
	done
}

atf_test_case vg_sigkill_forked_tree_goes
vg_sigkill_forked_tree_goes_head() {
	atf_set descr "a valgrind capture killed with SIGKILL while the program has forked: within 2 s no process of the traced tree (each a Valgrind) is left running under PID 1"
	atf_set timeout 120
}
vg_sigkill_forked_tree_goes_body() {
	need_valgrind
	require_tools cc
	cat >forker.c <<'EOF'
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static void
idle(const char *who)
{
	struct timespec ts = { 0, 20000000 };

	printf("%s %d\n", who, (int)getpid());
	fflush(stdout);
	for (;;)
		nanosleep(&ts, NULL);
}

int
main(void)
{
	pid_t c;

	if ((c = fork()) == 0) {
		if (fork() == 0)
			idle("grandchild");
		idle("child");
	}
	idle("parent");
}
EOF
	cc -O1 -o forker forker.c || atf_fail "cannot compile forker.c"
	"$HWTRACE" capture --source valgrind -o f.hwtrace -- ./forker \
	    >out 2>err &
	hp=$!
	wait_for out '^parent '
	wait_for out '^child '
	wait_for out '^grandchild '
	pids=$(awk '{ print $2 }' out)
	kill -KILL $hp
	wait $hp
	i=0
	while :; do
		left=
		for p in $pids; do
			# A zombie has no command line: it is gone, not running.
			[ -n "$(tr -d '\0' </proc/$p/cmdline 2>/dev/null)" ] &&
			    left="$left $p"
		done
		[ -z "$left" ] && break
		i=$((i + 1))
		if [ $i -ge 20 ]; then
			for p in $left; do
				ps -o pid=,ppid=,args= -p $p | cut -c1-160
			done >left
			kill -KILL $left 2>/dev/null
			atf_fail "2 s after the kill, processes of the traced tree still run: $(oneline left)"
		fi
		sleep 0.1
	done
}

atf_test_case index_sweeps_stale_temp_files
index_sweeps_stale_temp_files_head() {
	atf_set descr "the temporary files of an index run killed with SIGKILL (hwtrace-ix.XXXXXX in TMPDIR, DB.partial.XXXXXX beside DB) are removed by the next run; those another run holds, and one just made, stay"
	atf_set timeout 120
	atf_set require.progs flock
}
index_sweeps_stale_temp_files_body() {
	need_prog hello
	"$HWTRACE" capture --source step -o a.hwtrace -- "$HWTRACE_PROGS/hello" \
	    >/dev/null 2>err || atf_fail "capture failed: $(oneline err)"
	mkdir t
	export TMPDIR=$PWD/t
	# Left by runs that died: each was locked by a process now killed.
	mkdir t/hwtrace-ix.DEAD01
	: >t/hwtrace-ix.DEAD01/0
	: >a.db.partial.DEAD01
	for f in t/hwtrace-ix.DEAD01 a.db.partial.DEAD01; do
		sh -c 'exec 9<"$1"; flock -n 9 && kill -KILL $$' sh "$f"
		[ $? -eq 137 ] || atf_fail "could not lock $f and die holding it"
	done
	# Held by a run that goes on, and one just made (not locked yet).
	mkdir t/hwtrace-ix.LIVE01 t/hwtrace-ix.YOUNG1
	: >t/hwtrace-ix.LIVE01/0
	: >a.db.partial.LIVE01
	: >a.db.partial.YOUNG1
	flock t/hwtrace-ix.LIVE01 flock a.db.partial.LIVE01 sleep 60 &
	holder=$!
	touch -d '1 hour ago' t/hwtrace-ix.DEAD01 a.db.partial.DEAD01 \
	    t/hwtrace-ix.LIVE01 a.db.partial.LIVE01
	sleep 0.3
	"$HWTRACE" index -o a.db a.hwtrace >ix 2>&1
	rc=$?
	kill $holder 2>/dev/null
	[ $rc -eq 0 ] || atf_fail "index failed: $(oneline ix)"
	for f in t/hwtrace-ix.DEAD01 a.db.partial.DEAD01; do
		[ ! -e "$f" ] ||
			atf_fail "$f, left by a killed run, is still there"
	done
	for f in t/hwtrace-ix.LIVE01/0 a.db.partial.LIVE01 \
	    t/hwtrace-ix.YOUNG1 a.db.partial.YOUNG1; do
		[ -e "$f" ] || atf_fail "$f, of a run that goes on, was removed"
	done
	left=$(ls t | grep -v -x -e hwtrace-ix.LIVE01 -e hwtrace-ix.YOUNG1)
	[ -z "$left" ] || atf_fail "left in TMPDIR by the run: $left"
	[ -f a.db ] || atf_fail "no a.db written"
}

atf_test_case vg_sigint_stops_cpu_bound
vg_sigint_stops_cpu_bound_head() {
	atf_set descr "SIGINT to hwtrace (not to the program) ends a valgrind capture of a program that never stops making events within 10 s, with a complete archive"
	atf_set timeout 120
}
vg_sigint_stops_cpu_bound_body() {
	churn_capture i.hwtrace
	sleep 1
	kill -INT $hp
	i=0
	while kill -0 $hp 2>/dev/null; do
		i=$((i + 1))
		if [ $i -ge 100 ]; then
			kill -KILL $hp
			atf_fail "hwtrace still runs 10 s after SIGINT: $(oneline err)"
		fi
		sleep 0.1
	done
	wait $hp
	members i.hwtrace | grep -q '^end.json$' ||
		atf_fail "the archive after SIGINT is not complete: $(oneline err)"
}

atf_init_test_cases() {
	atf_add_test_case vg_sigint_stops_cpu_bound
	atf_add_test_case index_sweeps_stale_temp_files
	atf_add_test_case vg_sigkill_forked_tree_goes
	atf_add_test_case attach_sigkill_leaves_process_alive
	atf_add_test_case step_full_disk_removes_partial
	atf_add_test_case vg_sigkill_partial_decodes
}
