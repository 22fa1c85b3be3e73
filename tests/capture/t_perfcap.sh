#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Copyright (c) 2026 The hwtrace authors
#
# The perf source end to end without trace hardware: hwtrace runs with a
# simulated perf_event kernel preloaded (tests/kernel/fakeperf.c: it
# answers perf_event_open, mmap and ioctl, and a producer thread writes the
# kernel's records and real Intel PT into the rings) and a made-up
# intel_pt PMU under HWTRACE_SYSFS.  The fixture (tests/progs/perfline.c)
# runs ten NOPs; the simulated trace enables tracing at perfline_code and
# disables it at perfline_end, so each span decodes to the instructions
# objdump counts between the two symbols nm gives.

. "$(atf_get_srcdir)/../env.sh"
. "$HWTRACE_SRC/tests/lib/hwtr_test.sh"

FAKE=$HWTRACE_BUILD/tests/kernel/fakeperf.so
PROG=$HWTRACE_PROGS/perfline

# The made-up PMU: its type, config fields and caps as a Skylake's.
make_pmu() {
	s=$PWD/sys/intel_pt
	mkdir -p "$s/format" "$s/caps"
	echo 8 >"$s/type"
	echo 2 >"$s/nr_addr_filters"
	for f in "pt config:0" "cyc config:1" "pwr_evt config:4" \
	    "mtc config:9" "tsc config:10" "noretcomp config:11" \
	    "ptw config:12" "branch config:13" "mtc_period config:14-17" \
	    "cyc_thresh config:19-22" "psb_period config:24-27"; do
		set -- $f
		echo "$2" >"$s/format/$1"
	done
	for c in "mtc 1" "psb_cyc 1" "ptwrite 0" "power_event_trace 0" \
	    "mtc_periods 249" "cyc_thresholds 3fff" "psb_periods 3f" \
	    "num_address_ranges 2"; do
		set -- $c
		echo "$2" >"$s/caps/$1"
	done
	HWTRACE_SYSFS=$PWD/sys
	export HWTRACE_SYSFS
}

setup() {
	[ -x "$PROG" ] || atf_skip "fixture perfline not built"
	[ -f "$FAKE" ] || atf_skip "fakeperf.so not built"
	make_pmu
	FROM=$(nm "$PROG" | awk '/ perfline_code$/ { print $1 }')
	TO=$(nm "$PROG" | awk '/ perfline_end$/ { print $1 }')
	[ -n "$FROM" ] && [ -n "$TO" ] || atf_fail "nm found no perfline symbols"
	# Instructions per span, as objdump disassembles them.
	NINSN=$(objdump -d --start-address=0x$FROM --stop-address=0x$TO \
	    "$PROG" | grep -cE '^ +[0-9a-f]+:')
	[ "$NINSN" -gt 0 ] || atf_fail "objdump found no instructions"
	HWTRACE_FAKEPERF_LOG=$PWD/log
	HWTRACE_FAKEPERF_EXE=$PROG
	HWTRACE_FAKEPERF_DONE=$PWD/done
	HWTRACE_FAKEPERF_FROM=$FROM
	HWTRACE_FAKEPERF_TO=$TO
	TMPDIR=$PWD
	export HWTRACE_FAKEPERF_LOG HWTRACE_FAKEPERF_EXE HWTRACE_FAKEPERF_DONE
	export HWTRACE_FAKEPERF_FROM HWTRACE_FAKEPERF_TO TMPDIR
	# An AddressSanitizer build tolerates the preloaded library.
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
	export ASAN_OPTIONS
}

# capture ARGS...: hwtrace capture with the simulated kernel; rc in $rc.
capture() {
	rm -f done
	env LD_PRELOAD="$FAKE" "$HWTRACE" capture "$@" -- "$PROG" "$PWD/done" \
	    >out 2>err
	rc=$?
}

# The number of instructions the index of ARCHIVE holds.
indexed() {
	"$HWTRACE" index -o "$1.db" "$1" >/dev/null 2>ierr ||
		atf_fail "index failed: $(oneline ierr)"
	sqlite3 "$1.db" "select count(*) from blocks" >/dev/null ||
		atf_fail "no blocks table"
	"$HWTRACE" index -o "$1.db2" "$1" 2>&1 |
	    sed -n 's/.* \([0-9][0-9]*\) instructions.*/\1/p'
}

# indexed_is ARCHIVE N [WHAT]: the index of ARCHIVE holds N instructions;
# else fail, naming WHAT.
indexed_is() {
	ii_got=$(indexed "$1")
	[ "$ii_got" = "$2" ] ||
		atf_fail "${3:-$1}: expected $2 instructions in the index, got '$ii_got'"
}

# The AUX bytes the fake perf produced, by its log.
aux_made() {
	awk '/^aux span / { n += $3 } END { print n }' log
}

no_recording_left() {
	[ "$(ls | grep -c '^hwtrace-perf-')" -eq 0 ] ||
		atf_fail "the recording was left behind: $(ls | tr '\n' ' ')"
}

atf_test_case thread_mode
thread_mode_head() {
	atf_set descr "capture --source perf: the event is opened as the sysfs format and caps say, follows the command, and the archive indexes to the instructions objdump counts"
	atf_set timeout 120
}
thread_mode_body() {
	setup
	HWTRACE_FAKEPERF_SPANS=2 capture --source perf -o p.hwtrace
	[ "$rc" -eq 3 ] || atf_fail "expected the fixture's status 3, got $rc: $(oneline err)"
	# config: pt (0), tsc (10), branch (13), mtc (9) with mtc_period 3
	# (bits 14-17: caps/mtc_periods 0x249 has bit 3), psb_period 3
	# (bits 24-27); not cyc, ptw (caps/ptwrite 0), pwr_evt.
	want=$(printf '%#x' $(( (1 << 0) | (1 << 10) | (1 << 13) | (1 << 9) |
	    (3 << 14) | (3 << 24) )))
	n=$(grep -c "^open type=8 config=$want config1=0 pid=[1-9][0-9]* cpu=[0-9]* inherit=1 enable_on_exec=1 context_switch=1 exclude_kernel=1 disabled=1 sample_id_all=1" log)
	cpus=$(grep -c '^mmap aux .*overwrite=0' log)
	[ "$n" -ge 1 ] && [ "$n" -eq "$cpus" ] ||
		atf_fail "expected one event per CPU with config $want for the command: $(oneline log)"
	"$HWTRACE" info p.hwtrace >info || atf_fail "info failed"
	grep -q '^source: perf' info || atf_fail "not source perf: $(oneline info)"
	grep -q '^exit: status 3' info || atf_fail "exit status not kept: $(oneline info)"
	grep -q "intel-pt, pid -1, tid -1, cpu 0" info ||
		atf_fail "no per-CPU stream: $(oneline info)"
	grep -q "mtc-freq 3, cyc-thresh 0, psb-freq 3" info ||
		atf_fail "decoder configuration not recorded: $(oneline info)"
	bid=$(readelf -n "$PROG" | sed -n 's/.*Build ID: //p')
	grep -q "bid-$bid $PROG" info ||
		atf_fail "image $PROG (build-id $bid) not stored: $(oneline info)"
	grep -q "time conversion: tsc-zero 0, ns-zero 5000000000, mult 512, shift 10" info ||
		atf_fail "the mmap page's time conversion is not recorded: $(oneline info)"
	indexed_is p.hwtrace "$((2 * NINSN))" "2 spans of $NINSN instructions"
	# Sideband times are perf clock ns; converted back with the mmap
	# page's time_zero/mult/shift they are the simulated TSC (2000010).
	t=$(sqlite3 p.hwtrace.db "select tsc from events where kind = 'mmap'")
	[ "$t" = 2000010 ] || atf_fail "mmap record at TSC '$t', expected 2000010"
	no_recording_left
}

atf_test_case split_packets
split_packets_head() {
	atf_set descr "AUX data published in parts that end inside a packet is read back as one contiguous stream that decodes whole"
	atf_set timeout 120
}
split_packets_body() {
	setup
	HWTRACE_FAKEPERF_SPANS=2 HWTRACE_FAKEPERF_SPLIT=1 capture --source perf \
	    -o s.hwtrace
	[ "$rc" -eq 3 ] || atf_fail "capture: $rc: $(oneline err)"
	made=$(aux_made)
	"$HWTRACE" info s.hwtrace | grep -q "cpu 0, [0-9]* chunks*, $made bytes" ||
		atf_fail "the stream is not the $made bytes produced: $("$HWTRACE" info s.hwtrace | grep stream | tr "\n" "|")"
	"$HWTRACE" index -o s.db s.hwtrace 2>ierr >/dev/null ||
		atf_fail "index failed: $(oneline ierr)"
	grep -q " $((2 * NINSN)) instructions, 0 decode errors" ierr ||
		atf_fail "expected $((2 * NINSN)) instructions and no decode error: $(oneline ierr)"
}

atf_test_case loss_stated
loss_stated_head() {
	atf_set descr "AUX records flagged TRUNCATED and COLLISION and a LOST record are loss in the archive, as the perf.data importer records them"
	atf_set timeout 120
}
loss_stated_body() {
	setup
	capture --source perf -o clean.hwtrace
	[ "$rc" -eq 3 ] || atf_fail "clean capture: $rc: $(oneline err)"
	"$HWTRACE" info -j clean.hwtrace | grep -q '"lost":{"bytes":0,"records":0}' ||
	    "$HWTRACE" info clean.hwtrace | grep -q '^lost: 0 trace bytes, 0 sideband records' ||
		atf_fail "a clean capture states loss: $("$HWTRACE" info clean.hwtrace | grep lost)"
	indexed clean.hwtrace >/dev/null
	n=$(sqlite3 clean.hwtrace.db "select count(*) from events where kind = 'lost'")
	[ "$n" -eq 0 ] || atf_fail "clean capture has $n lost events"
	# 9: PERF_AUX_FLAG_TRUNCATED | PERF_AUX_FLAG_COLLISION on the second span.
	HWTRACE_FAKEPERF_FLAGS=9 HWTRACE_FAKEPERF_LOST=3 capture --source perf \
	    -o lossy.hwtrace
	[ "$rc" -eq 3 ] || atf_fail "lossy capture: $rc: $(oneline err)"
	"$HWTRACE" info lossy.hwtrace | grep -q '^lost: 0 trace bytes, 3 sideband records' ||
		atf_fail "the LOST record's 3 records are not stated: $("$HWTRACE" info lossy.hwtrace | grep lost)"
	indexed lossy.hwtrace >/dev/null
	n=$(sqlite3 lossy.hwtrace.db "select count(*) from events where kind = 'lost' and stream = 0")
	[ "$n" -eq 2 ] || atf_fail "expected 2 stream losses (truncated, collision), got $n"
	n=$(sqlite3 lossy.hwtrace.db "select detail from events where kind = 'lost' and stream is null")
	# The kernel's PERF_RECORD_LOST: sideband records dropped (the reason
	# follows the counts, hwtrace-db(5)).
	[ "$n" = "0 bytes, 3 records: sideband dropped" ] || atf_fail "the LOST record is '$n'"
	no_recording_left
}

atf_test_case filter
filter_head() {
	atf_set descr "--filter reaches PERF_EVENT_IOC_SET_FILTER on every event as given; malformed or too many filters are refused with nothing written"
	atf_set timeout 120
}
filter_body() {
	setup
	f="filter 0x$FROM/0x20@$PROG"
	capture --source perf --filter "$f" -o f.hwtrace
	[ "$rc" -eq 3 ] || atf_fail "capture: $rc: $(oneline err)"
	n=$(grep -cF "ioctl SET_FILTER cpu=" log)
	m=$(grep -cF "'$f'" log)
	cpus=$(grep -c '^open ' log)
	[ "$n" -eq "$cpus" ] && [ "$m" -eq "$cpus" ] ||
		atf_fail "expected '$f' on each of $cpus events: $(oneline log)"
	"$HWTRACE" info f.hwtrace | grep -qF "address filter '$f' was recorded" ||
		atf_fail "the filter is not in the archive's decoder configuration"
	for bad in "filter 0x$FROM" "jump 0x10/0x10" "start 0x10@/no/such/file" \
	    "filter 0x10/0x10,filter 0x20/0x10,filter 0x30/0x10"; do
		rm -f log
		capture --source perf --filter "$bad" -o bad.hwtrace
		[ "$rc" -eq 1 ] || atf_fail "'$bad': expected exit 1, got $rc"
		grep -q -- "--filter" err || atf_fail "'$bad': no reason: $(oneline err)"
		! [ -e bad.hwtrace ] || atf_fail "'$bad': archive written"
		! grep -q '^open' log 2>/dev/null || atf_fail "'$bad': events opened"
	done
	grep -q "3 address filters, the intel_pt PMU has 2 (nr_addr_filters)" err ||
		atf_fail "nr_addr_filters not enforced: $(oneline err)"
	no_recording_left
}

atf_test_case cpu_mode
cpu_mode_head() {
	atf_set descr "--cpu 0: a CPU-wide event (pid -1) enabled by ioctl, with context-switch sideband"
	atf_set timeout 120
}
cpu_mode_body() {
	setup
	HWTRACE_FAKEPERF_SPANS=2 capture --source perf --cpu 0 -o c.hwtrace
	[ "$rc" -eq 3 ] || atf_fail "capture: $rc: $(oneline err)"
	[ "$(grep -c '^open ' log)" -eq 1 ] || atf_fail "expected one event: $(oneline log)"
	grep -q '^open .* pid=-1 cpu=0 inherit=0 enable_on_exec=0 context_switch=1' log ||
		atf_fail "not a CPU-wide event: $(oneline log)"
	grep -q '^ioctl ENABLE cpu=0' log || atf_fail "never enabled: $(oneline log)"
	"$HWTRACE" info c.hwtrace | grep -q '^  switch: 1' ||
		atf_fail "no context switch sideband: $("$HWTRACE" info c.hwtrace | tr '\n' '|')"
	indexed_is c.hwtrace "$((2 * NINSN))"
	# Usage errors.
	"$HWTRACE" capture -a --cpu 0 --source perf -o x.hwtrace -- /bin/true 2>err
	[ $? -eq 2 ] || atf_fail "-a with --cpu accepted"
	"$HWTRACE" capture -a -o x.hwtrace -- /bin/true 2>err
	[ $? -eq 2 ] || atf_fail "-a without --source perf accepted"
	capture --source perf --cpu 3-1 -o x.hwtrace
	[ "$rc" -eq 1 ] && grep -q "malformed CPU list '3-1'" err ||
		atf_fail "bad CPU list: $rc $(oneline err)"
}

atf_test_case ring_mode
ring_mode_head() {
	atf_set descr "--mode ring maps the AUX area read-only (overwrite); the snapshot at the end keeps the last --buffer bytes and states the rest as lost"
	atf_set timeout 120
}
ring_mode_body() {
	setup
	HWTRACE_FAKEPERF_SPANS=400 capture --source perf --mode ring -b 4K \
	    -o r.hwtrace
	[ "$rc" -eq 3 ] || atf_fail "ring capture: $rc: $(oneline err)"
	grep -q '^mmap aux cpu=[0-9]* len=4096 overwrite=1' log ||
		atf_fail "AUX area not mapped read-only: $(oneline log)"
	grep -q '^ioctl DISABLE' log || atf_fail "no disable before the snapshot"
	"$HWTRACE" info -j r.hwtrace >j
	kept=$(python3 -c 'import json,sys; d=json.load(open("j")); print(sum(s["bytes"] for s in d["streams"]))')
	lost=$(python3 -c 'import json,sys; d=json.load(open("j")); print(d["lost"]["bytes"])')
	[ "$kept" -le 4096 ] && [ "$kept" -ge 4000 ] ||
		atf_fail "kept $kept bytes of a 4096-byte ring"
	# What the simulated kernel wrote into the AUX area (its log); what
	# was not kept is lost, counted once.
	made=$(aux_made)
	[ "$(grep -c '^aux span ' log)" -eq 400 ] || atf_fail "the producer did not write 400 spans"
	[ $((kept + lost)) -eq "$made" ] ||
		atf_fail "kept $kept + lost $lost is not the $made bytes produced"
	got=$(indexed r.hwtrace)
	[ "$got" -gt 0 ] || atf_fail "the snapshot does not decode: '$got'"
	[ $((got % NINSN)) -eq 0 ] || atf_fail "$got instructions is not whole spans of $NINSN"
	no_recording_left
}

atf_test_case ring_sigusr2
ring_sigusr2_head() {
	atf_set descr "--mode ring: SIGUSR2 disables the events, saves the AUX areas and enables them again; the snapshot at the end adds nothing twice"
	atf_set timeout 120
}
ring_sigusr2_body() {
	setup
	HWTRACE_FAKEPERF_SPANS=2
	HWTRACE_FAKEPERF_DONE=$PWD/produced
	export HWTRACE_FAKEPERF_SPANS HWTRACE_FAKEPERF_DONE
	env LD_PRELOAD="$FAKE" "$HWTRACE" capture --source perf --mode ring \
	    -o u.hwtrace -- "$PROG" "$PWD/go" >out 2>err &
	pid=$!
	i=0
	while ! [ -e produced ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
	[ -e produced ] || atf_fail "the simulated kernel produced nothing"
	sleep 0.3
	kill -USR2 $pid
	i=0
	while ! grep -q '^ioctl ENABLE' log && [ $i -lt 200 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	touch go
	wait $pid
	rc=$?
	[ "$rc" -eq 3 ] || atf_fail "capture: $rc: $(oneline err)"
	# DISABLE on every event, ENABLE on every event, then the final DISABLE.
	seq=$(grep '^ioctl' log | awk '{ print $2 }' | uniq | tr '\n' ' ')
	[ "$seq" = "DISABLE ENABLE DISABLE " ] ||
		atf_fail "expected a snapshot at SIGUSR2, then the final one: $seq"
	made=$(aux_made)
	"$HWTRACE" info u.hwtrace | grep -q "cpu 0, 1 chunk, $made bytes" ||
		atf_fail "not the $made bytes produced, once: $("$HWTRACE" info u.hwtrace | grep stream | tr '\n' '|')"
	indexed_is u.hwtrace "$((2 * NINSN))"
	no_recording_left
}

atf_test_case no_trace_and_failures
no_trace_and_failures_head() {
	atf_set descr "a command that made no trace still gets its archive and status; --keep-on-failure keeps only failures; a missing command exits 127 with nothing left"
	atf_set timeout 120
}
no_trace_and_failures_body() {
	setup
	unset HWTRACE_FAKEPERF_EXE
	env LD_PRELOAD="$FAKE" "$HWTRACE" capture --source perf -o t.hwtrace \
	    -- /bin/true >out 2>err
	[ $? -eq 0 ] || atf_fail "capture of /bin/true: $(oneline err)"
	"$HWTRACE" info t.hwtrace >info
	grep -q 'the trace hardware wrote no trace' info &&
	    grep -q '^exit: status 0' info && grep -q '^streams: 0' info ||
		atf_fail "no-trace archive: $(oneline info)"
	env LD_PRELOAD="$FAKE" "$HWTRACE" capture --source perf \
	    --keep-on-failure -o k.hwtrace -- /bin/true >out 2>err
	[ $? -eq 0 ] && ! [ -e k.hwtrace ] || atf_fail "kept a success"
	env LD_PRELOAD="$FAKE" "$HWTRACE" capture --source perf \
	    --keep-on-failure -o k.hwtrace -- /bin/false >out 2>err
	[ $? -eq 1 ] && "$HWTRACE" verify k.hwtrace >/dev/null 2>&1 ||
		atf_fail "did not keep a failure: $(oneline err)"
	env LD_PRELOAD="$FAKE" "$HWTRACE" capture --source perf -o m.hwtrace \
	    -- "$PWD/no-such-program" >out 2>err
	[ $? -eq 127 ] || atf_fail "a missing command does not exit 127"
	grep -q "cannot run '$PWD/no-such-program'" err ||
		atf_fail "no reason: $(oneline err)"
	! [ -e m.hwtrace ] || atf_fail "archive written"
	# The second CPU's event refused after the first was mapped.
	HWTRACE_FAKEPERF_BUSY=1 capture --source perf --cpu 0-1 -o b.hwtrace
	[ "$rc" -eq 1 ] || atf_fail "a refused event: exit $rc: $(oneline err)"
	grep -q "perf_event_open (the intel_pt PMU, type 8, CPU 1): Operation not supported (is the PMU busy with another tracer?)" err ||
		atf_fail "the refusal is not explained: $(oneline err)"
	! [ -e b.hwtrace ] || atf_fail "archive written"
	no_recording_left
}

atf_test_case caps_parsed
caps_parsed_head() {
	atf_set descr "the config follows the sysfs format and caps files: other bit positions, MTC and PTWRITE by caps; a malformed caps file is refused naming it"
	atf_set timeout 120
}
caps_parsed_body() {
	setup
	# tsc moved to bit 20, MTC not supported, PTWRITE supported.
	echo 'config:20' >sys/intel_pt/format/tsc
	echo 0 >sys/intel_pt/caps/mtc
	echo 1 >sys/intel_pt/caps/ptwrite
	capture --source perf -o c.hwtrace
	[ "$rc" -eq 3 ] || atf_fail "capture: $rc: $(oneline err)"
	want=$(printf '%#x' $(( (1 << 0) | (1 << 20) | (1 << 13) | (1 << 12) |
	    (3 << 24) )))
	grep -q "^open type=8 config=$want " log ||
		atf_fail "expected config $want: $(oneline log)"
	echo zz >sys/intel_pt/caps/mtc_periods
	capture --source perf -o d.hwtrace
	[ "$rc" -eq 1 ] || atf_fail "malformed caps accepted: $rc"
	grep -q "'$PWD/sys/intel_pt/caps/mtc_periods' holds 'zz', not a hexadecimal mask" err ||
		atf_fail "the caps file is not named: $(oneline err)"
	! [ -e d.hwtrace ] || atf_fail "archive written"
}

atf_test_case auto_picks_perf
auto_picks_perf_head() {
	atf_set descr "without --source (and with --source auto), a usable intel_pt PMU is chosen, said once on stderr with the reason"
	atf_set timeout 120
}
auto_picks_perf_body() {
	setup
	[ "$(id -u)" -eq 0 ] || [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -le 1 ] ||
		atf_skip "perf_event_paranoid forbids tracing here"
	for s in "" "--source auto"; do
		capture $s -o a.hwtrace
		[ "$rc" -eq 3 ] || atf_fail "'$s': $rc: $(oneline err)"
		n=$(grep -c 'trace source: perf (the intel_pt PMU (type 8) is there and usable' err)
		[ "$n" -eq 1 ] || atf_fail "'$s': expected one line naming perf: $(oneline err)"
		"$HWTRACE" info a.hwtrace | grep -q '^source: perf' ||
			atf_fail "'$s': the archive is not from perf"
		rm -f a.hwtrace
	done
}

atf_test_case ring_trigger
ring_trigger_head() {
	atf_set descr "--mode ring --trigger SYMBOL: a breakpoint event (HW_BREAKPOINT_X at the symbol nm gives) per CPU, redirected into the CPU's ring; each hit the simulated program makes is a snapshot taken before it goes on; a symbol never reached makes none; a missing symbol is refused naming it"
	atf_set timeout 120
}
ring_trigger_body() {
	setup
	HWTRACE_FAKEPERF_SPANS=3 capture --source perf --mode ring -v \
	    --trigger perfline_code -o t.hwtrace
	[ "$rc" -eq 3 ] || atf_fail "capture: $rc: $(oneline err)"
	cpus=$(grep -c '^mmap aux ' log)
	n=$(grep -c "^open breakpoint bp_type=4 bp_addr=0x${FROM#"${FROM%%[!0]*}"} bp_len=8 pid=[1-9][0-9]* cpu=[0-9]* inherit=1 enable_on_exec=1 sample_period=1" log)
	[ "$n" -eq "$cpus" ] ||
		atf_fail "expected an execution breakpoint at 0x$FROM on each of $cpus CPUs: $(oneline log)"
	[ "$(grep -c '^ioctl SET_OUTPUT .* type=5 ' log)" -eq "$cpus" ] ||
		atf_fail "the breakpoints are not redirected into the rings: $(oneline log)"
	# Three spans start at perfline_code: three hits, each saved before
	# the program went on (the simulated kernel waits for it).
	[ "$(grep -c '^bp hit ' log)" -eq 3 ] || atf_fail "expected 3 hits: $(oneline log)"
	[ "$(grep -c '^snapshot after bp hit' log)" -eq 3 ] ||
		atf_fail "a hit was not followed by a snapshot: $(oneline log)"
	seq=$(grep '^ioctl [ED]' log | awk '{ print $2 }' | uniq | tr '\n' ' ')
	[ "$seq" = "DISABLE ENABLE DISABLE ENABLE DISABLE ENABLE DISABLE " ] ||
		atf_fail "expected 3 trigger snapshots, then the final one: $seq"
	[ "$(grep -c "trigger 'perfline_code' reached" err)" -eq 3 ] ||
		atf_fail "the snapshots are not said: $(oneline err)"
	made=$(aux_made)
	"$HWTRACE" info t.hwtrace | grep -q "cpu 0, [0-9]* chunks*, $made bytes" ||
		atf_fail "not the $made bytes produced, once: $("$HWTRACE" info t.hwtrace | grep stream | tr '\n' '|')"
	indexed_is t.hwtrace "$((3 * NINSN))"
	# CPU mode: the breakpoint follows the command, into the CPU's ring.
	rm -f log
	HWTRACE_FAKEPERF_SPANS=2 capture --source perf --cpu 0 --mode ring \
	    --trigger perfline_code -o c.hwtrace
	[ "$rc" -eq 3 ] || atf_fail "CPU mode: $rc: $(oneline err)"
	grep -q '^open breakpoint .* pid=[1-9][0-9]* cpu=0 ' log ||
		atf_fail "CPU mode: no breakpoint for the command: $(oneline log)"
	[ "$(grep -c '^snapshot after bp hit' log)" -eq 2 ] ||
		atf_fail "CPU mode: expected 2 snapshots at hits: $(oneline log)"
	indexed_is c.hwtrace "$((2 * NINSN))" "CPU mode"
	# A PIE: the command stops at its exec (ptrace) until the breakpoint
	# is set where the executable was loaded.
	pie=$HWTRACE_PROGS/perfline-pie
	if [ -x "$pie" ]; then
		pf=$(nm "$pie" | awk '/ perfline_code$/ { print $1 }')
		pt=$(nm "$pie" | awk '/ perfline_end$/ { print $1 }')
		pn=$(objdump -d --start-address=0x$pf --stop-address=0x$pt \
		    "$pie" | grep -cE '^ +[0-9a-f]+:')
		rm -f log done
		env LD_PRELOAD="$FAKE" HWTRACE_FAKEPERF_EXE="$pie" \
		    HWTRACE_FAKEPERF_FROM=$pf HWTRACE_FAKEPERF_TO=$pt \
		    HWTRACE_FAKEPERF_PIE=1 HWTRACE_FAKEPERF_SPANS=2 \
		    "$HWTRACE" capture --source perf --mode ring \
		    --trigger perfline_code -o p.hwtrace -- "$pie" "$PWD/done" \
		    >out 2>err
		rc=$?
		[ "$rc" -eq 3 ] || atf_fail "PIE: $rc: $(oneline err)"
		base=$(sed -n 's/^pie: loaded at //p' log)
		want=$(printf '%#x' $((base + 0x$pf)))
		[ "$(grep -c "^open breakpoint bp_type=4 bp_addr=$want .*enable_on_exec=0" log)" -eq "$cpus" ] ||
			atf_fail "PIE: no breakpoint at $want (loaded at $base): $(oneline log)"
		[ "$(grep -c '^snapshot after bp hit' log)" -eq 2 ] ||
			atf_fail "PIE: expected 2 snapshots at hits: $(oneline log)"
		indexed_is p.hwtrace "$((2 * pn))" "PIE"
	fi
	# main is not in the traced range: never reached, no snapshot.
	rm -f log
	HWTRACE_FAKEPERF_SPANS=3 capture --source perf --mode ring \
	    --trigger main -o m.hwtrace
	[ "$rc" -eq 3 ] || atf_fail "capture: $rc: $(oneline err)"
	! grep -q '^bp hit' log || atf_fail "main was hit: $(oneline log)"
	seq=$(grep '^ioctl [ED]' log | awk '{ print $2 }' | uniq | tr '\n' ' ')
	[ "$seq" = "DISABLE " ] || atf_fail "snapshots without a hit: $seq"
	# A symbol that does not exist.
	rm -f log
	capture --source perf --mode ring --trigger no_such_function -o x.hwtrace
	[ "$rc" -eq 1 ] || atf_fail "a missing symbol: exit $rc"
	grep -q "no function 'no_such_function' in the symbol tables of '$PROG'" err ||
		atf_fail "the symbol is not named: $(oneline err)"
	expect_no_archive x.hwtrace "the trigger's symbol is missing"
	! grep -q '^open' log 2>/dev/null || atf_fail "events opened"
	no_recording_left
}

atf_test_case ring_fatal_signal
ring_fatal_signal_head() {
	atf_set descr "--mode ring: a traced program killed by SIGSEGV: its ring is saved, the exit status is 139 and the archive says signal 11"
	atf_set timeout 120
}
ring_fatal_signal_body() {
	setup
	rm -f done
	env LD_PRELOAD="$FAKE" HWTRACE_FAKEPERF_SPANS=2 "$HWTRACE" capture \
	    --source perf --mode ring -o s.hwtrace -- "$PROG" "$PWD/done" segv \
	    >out 2>err
	rc=$?
	[ "$rc" -eq 139 ] || atf_fail "expected 139, got $rc: $(oneline err)"
	"$HWTRACE" info s.hwtrace >info || atf_fail "info failed"
	grep -q '^exit: signal 11' info || grep -q '^exit: .*SIGSEGV' info ||
		atf_fail "the signal is not recorded: $(oneline info)"
	made=$(aux_made)
	grep -q "cpu 0, 1 chunk, $made bytes" info ||
		atf_fail "the ring ($made bytes) is not saved: $(oneline info)"
	indexed_is s.hwtrace "$((2 * NINSN))"
	no_recording_left
}

atf_test_case stop_mode
stop_mode_head() {
	atf_set descr "--mode stop: the AUX area is written, not overwritten; when a CPU's --buffer bytes are saved its events are disabled, the rest is lost and the stream says it was cut"
	atf_set timeout 120
}
stop_mode_body() {
	setup
	HWTRACE_FAKEPERF_SPANS=300 HWTRACE_FAKEPERF_PACE=2 capture \
	    --source perf --mode stop -b 4K -o st.hwtrace
	[ "$rc" -eq 3 ] || atf_fail "capture: $rc: $(oneline err)"
	grep -q '^mmap aux cpu=[0-9]* len=4096 overwrite=0' log ||
		atf_fail "the AUX area is not mapped for writing: $(oneline log)"
	made=$(aux_made)
	[ "$made" -gt 4096 ] || atf_fail "the producer wrote only $made bytes"
	"$HWTRACE" info -j st.hwtrace >j
	kept=$(python3 -c 'import json; d=json.load(open("j")); print(sum(s["bytes"] for s in d["streams"]))')
	lost=$(python3 -c 'import json; d=json.load(open("j")); print(d["lost"]["bytes"])')
	[ "$kept" -eq 4096 ] || atf_fail "kept $kept bytes, not the 4096 of --buffer"
	[ $((kept + lost)) -eq "$made" ] ||
		atf_fail "kept $kept + lost $lost is not the $made bytes produced"
	grep -q '^span [0-9]* while disabled' log ||
		atf_fail "the trace went on after the buffer was full: $(oneline log)"
	# Disabled when full, before the simulated program ended.
	awk '/^ioctl DISABLE/ && !d { d = NR } /^produced / { p = NR } END { exit !(d && d < p) }' log ||
		atf_fail "not disabled when full: $(oneline log)"
	indexed st.hwtrace >/dev/null
	n=$(sqlite3 st.hwtrace.db "select count(*) from events where kind = 'lost' and stream = 0")
	[ "$n" -ge 1 ] || atf_fail "the cut is not stated as loss"
	no_recording_left
}

# attach_fresh ARG...: the fixture started anew (its pid in $fp, waiting
# for ./go), then capture --source perf -p with ARGs attached to it in the
# background (its pid in $hp, output in ./out and ./err), until the fake
# perf says it is done (./done, 10 s at most).
attach_fresh() {
	rm -f done go log
	"$PROG" "$PWD/go" &
	fp=$!
	sleep 0.1
	env LD_PRELOAD="$FAKE" "$HWTRACE" capture --source perf -p $fp "$@" \
	    >out 2>err &
	hp=$!
	i=0
	while ! [ -e done ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
}

atf_test_case attach
attach_head() {
	atf_set descr "-p PID: an event per thread of /proc/PID/task and CPU, enabled at the attach (not on exec), inherited, the other threads' redirected into the CPU's ring; SIGINT detaches leaving it running; its exit ends the capture"
	atf_set timeout 120
}
attach_body() {
	setup
	HWTRACE_FAKEPERF_SPANS=2
	export HWTRACE_FAKEPERF_SPANS
	"$PROG" "$PWD/go" thread &
	fp=$!
	i=0
	while [ "$(ls /proc/$fp/task 2>/dev/null | wc -l)" -lt 2 ] && [ $i -lt 100 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	tids=$(ls /proc/$fp/task | sort -n | tr '\n' ' ')
	[ "$(echo $tids | wc -w)" -eq 2 ] || atf_fail "the fixture has threads '$tids'"
	# No --source: auto picks perf for an attach too, and says so once.
	env LD_PRELOAD="$FAKE" "$HWTRACE" capture -p $fp -v \
	    -o a.hwtrace >out 2>err &
	hp=$!
	i=0
	while ! [ -e done ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
	[ -e done ] || { kill $fp; atf_fail "the simulated kernel produced nothing: $(oneline err)"; }
	sleep 0.2
	kill -INT $hp
	wait $hp
	rc=$?
	alive=0
	kill -0 $fp 2>/dev/null && alive=1
	touch go
	wait $fp
	frc=$?
	[ "$rc" -eq 0 ] || atf_fail "capture: $rc: $(oneline err)"
	[ "$(grep -c 'trace source: perf (the intel_pt PMU (type 8) is there and usable' err)" -eq 1 ] ||
		atf_fail "auto did not pick perf for -p, once: $(oneline err)"
	[ $alive -eq 1 ] && [ $frc -eq 3 ] ||
		atf_fail "the attached process did not run on to its exit 3 ($alive, $frc)"
	cpus=$(grep -c '^mmap aux ' log)
	for t in $tids; do
		n=$(grep -c "^open type=8 .* pid=$t cpu=[0-9]* inherit=1 enable_on_exec=0 .*disabled=1" log)
		[ "$n" -eq "$cpus" ] || atf_fail "thread $t: $n events for $cpus CPUs: $(oneline log)"
	done
	[ "$(grep -c '^ioctl SET_OUTPUT .* type=8 ' log)" -eq "$cpus" ] ||
		atf_fail "the second thread's events are not redirected: $(oneline log)"
	[ "$(grep -c '^ioctl ENABLE' log)" -eq $((2 * cpus)) ] ||
		atf_fail "not every event enabled at the attach: $(oneline log)"
	[ "$(grep -c '^ioctl DISABLE' log)" -eq $((2 * cpus)) ] ||
		atf_fail "not every event disabled at the detach: $(oneline log)"
	grep -q "attached to 2 threads of process $fp" err ||
		atf_fail "not said: $(oneline err)"
	indexed_is a.hwtrace "$((2 * NINSN))"
	# The process's exit ends the capture by itself.
	attach_fresh -o b.hwtrace
	touch go
	wait $fp
	i=0
	while kill -0 $hp 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	kill -0 $hp 2>/dev/null && { kill -INT $hp; atf_fail "the capture did not end with the process"; }
	wait $hp
	rc=$?
	[ "$rc" -eq 0 ] || atf_fail "capture: $rc: $(oneline err)"
	indexed_is b.hwtrace "$((2 * NINSN))"
	# Attached, in ring mode with --trigger: a breakpoint per thread and
	# CPU, enabled at the attach; each hit a snapshot.  The program runs
	# on while the capture enables its events (a lag after each trace
	# event's): the breakpoints must be enabled first, or the first span
	# passes them.
	HWTRACE_FAKEPERF_LAG=50 attach_fresh --mode ring --trigger perfline_code -o c.hwtrace
	touch go
	wait $fp
	wait $hp
	rc=$?
	[ "$rc" -eq 0 ] || atf_fail "ring, trigger: $rc: $(oneline err)"
	[ "$(grep -c "^open breakpoint .* pid=$fp cpu=[0-9]* inherit=1 enable_on_exec=0 " log)" -eq "$cpus" ] ||
		atf_fail "ring, trigger: no breakpoint per CPU for $fp: $(oneline log)"
	[ "$(grep -c '^snapshot after bp hit' log)" -eq 2 ] ||
		atf_fail "ring, trigger: expected 2 snapshots at hits: $(oneline log)"
	indexed_is c.hwtrace "$((2 * NINSN))" "ring, trigger"
	# A process that is not there.
	capture_missing=$("$HWTRACE" capture --source perf -p 999999999 -o n.hwtrace 2>&1)
	[ $? -eq 1 ] || atf_fail "a missing process: $capture_missing"
	! [ -e n.hwtrace ] || atf_fail "archive written"
	no_recording_left
}

atf_test_case cs_etm
cs_etm_head() {
	atf_set descr "cs_etm: a CoreSight ETMv4 PMU with CPU 7's registers of perf_etm.data (as perf report -D prints them) and that recording's AUX bytes; the capture indexes to the ranges of hwtrace import --symfs of perf_etm.data (208 blocks, 944 instructions)"
	atf_set timeout 120
}
cs_etm_body() {
	setup
	ETM=$HWTRACE_CORPUS/perf-data/cs_etm/perf_etm.data
	BIN=$HWTRACE_CORPUS/perf-data/cs_etm/etm_test_loop
	[ -e "$ETM" ] && [ -e "$BIN" ] ||
		atf_skip "shared corpus not found at $HWTRACE_CORPUS/perf-data/cs_etm"
	require_tools perf
	perf report -D -i "$ETM" >dump 2>/dev/null
	awk '/PERF_RECORD_AUXTRACE_INFO/ { on = 1 } on && NF == 0 { exit }
	    on && $1 == "CPU" { c = $2 }
	    on && c == "7" && $1 ~ /^TRC/ { print $1, $2 }' dump >regs
	[ "$(wc -l <regs)" -eq 7 ] || atf_fail "perf report -D: no CPU 7 ETMv4 registers: $(oneline regs)"
	# What perf recorded for CPU 7 but hwtrace does not read: TRCCONFIGR
	# (contextid only) and the legacy trace ID 0x10 + 2 * 7.
	grep -qx 'TRCCONFIGR 40' regs && grep -qx 'TRCTRACEIDR 1e' regs ||
		atf_fail "unexpected TRCCONFIGR/TRCTRACEIDR: $(oneline regs)"
	# The PMU: perf's cs_etm format, two sinks, CPU 7's ETM.
	rm -rf sys
	s=$PWD/sys/cs_etm
	mkdir -p "$s/format" "$s/sinks" "$s/cpu7/trcidr" "$s/cpu7/mgmt"
	echo 9 >"$s/type"
	for f in "cycacc config:12" "contextid config:14" \
	    "timestamp config:28" "retstack config:29" "sinkid config2:0-31"; do
		set -- $f
		echo "$2" >"$s/format/$1"
	done
	echo 0x1f2a3b4c >"$s/sinks/tmc_etr0"
	echo 0x00c0ffee >"$s/sinks/tmc_etf0"
	while read -r r v; do
		case $r in
		TRCIDR*) echo "0x$v" >"$s/cpu7/trcidr/$(echo "$r" | tr A-Z a-z)" ;;
		TRCAUTHSTATUS) echo "0x$v" >"$s/cpu7/mgmt/trcauthstatus" ;;
		esac
	done <regs
	# The AUX bytes of CPU 7, cut at the offset perf report -D prints.
	set -- $(sed -n 's/^0 0 \(0x[0-9a-f]*\) \[\(0x[0-9a-f]*\)\]: PERF_RECORD_AUXTRACE size: \(0x[0-9a-f]*\) .* cpu: 7$/\1 \2 \3/p' dump)
	[ $# -eq 3 ] || atf_fail "no AUXTRACE record of CPU 7 in perf report -D"
	dd if="$ETM" of=aux bs=1 skip=$(($1 + $2)) count=$(($3)) status=none ||
		atf_fail "dd failed"
	HWTRACE_FAKEPERF_AUXFILE=$PWD/aux
	HWTRACE_FAKEPERF_MAPPED=etm_test_loop
	export HWTRACE_FAKEPERF_AUXFILE HWTRACE_FAKEPERF_MAPPED
	# The program maps etm_test_loop where the recording had it.
	rm -f done
	env LD_PRELOAD="$FAKE" "$HWTRACE" capture --source perf --cpu 7 \
	    -o c.hwtrace -- "$PROG" "$PWD/done" map "$BIN" 582b2b0000 \
	    >out 2>err
	rc=$?
	[ "$rc" -eq 3 ] || atf_fail "capture: $rc: $(oneline err)"
	grep -q '^open type=9 config=0x4000 .* pid=-1 cpu=7 .* config2=0xc0ffee$' log ||
		atf_fail "not cs_etm with contextid and the first sink: $(oneline log)"
	no_recording_left
	# The reference: perf_etm.data imported with etm_test_loop.
	mkdir -p sym/data/local/tmp
	cp "$BIN" sym/data/local/tmp/
	"$HWTRACE" import --symfs sym "$ETM" -o e.hwtrace >/dev/null 2>ierr ||
		atf_fail "import failed: $(oneline ierr)"
	for a in c e; do
		"$HWTRACE" index -o $a.db $a.hwtrace >/dev/null 2>$a.ix ||
			atf_fail "index of $a failed: $(oneline $a.ix)"
		sqlite3 $a.db "SELECT printf('%x %x %d', start_ip, last_ip, size) FROM blocks ORDER BY id" >$a.blocks
	done
	grep -q ' 208 blocks, 944 instructions, 0 decode errors' c.ix ||
		atf_fail "the capture indexes to: $(oneline c.ix)"
	grep -q ' 208 blocks, 944 instructions, 0 decode errors' e.ix ||
		atf_fail "the import indexes to: $(oneline e.ix)"
	[ -s c.blocks ] && cmp -s c.blocks e.blocks ||
		atf_fail "the blocks differ (capture, import): $(diff c.blocks e.blocks | head -10 | tr '\n' '|')"
	# A CPU without ETMv4/ETE registers is named.
	rm -rf "$s/cpu7/trcidr"
	rm -f done
	env LD_PRELOAD="$FAKE" "$HWTRACE" capture --source perf --cpu 7 \
	    -o x.hwtrace -- "$PROG" "$PWD/done" >out 2>err
	[ $? -eq 1 ] && grep -q 'CPU 7 has no ETMv4 or ETE' err ||
		atf_fail "missing ETM registers: $(oneline err)"
	! [ -e x.hwtrace ] || atf_fail "archive written"
	no_recording_left
}

atf_init_test_cases() {
	atf_add_test_case thread_mode
	atf_add_test_case split_packets
	atf_add_test_case loss_stated
	atf_add_test_case filter
	atf_add_test_case cpu_mode
	atf_add_test_case ring_mode
	atf_add_test_case ring_sigusr2
	atf_add_test_case no_trace_and_failures
	atf_add_test_case caps_parsed
	atf_add_test_case auto_picks_perf
	atf_add_test_case ring_trigger
	atf_add_test_case ring_fatal_signal
	atf_add_test_case stop_mode
	atf_add_test_case attach
	atf_add_test_case cs_etm
}
