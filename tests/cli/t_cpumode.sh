#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Copyright (c) 2026 The hwtrace authors
#
# CPU mode end to end: the Skylake Intel PT recording of the corpus
# (per-CPU AUX data of CPUs 0 and 3, CPU-wide switch records) indexed
# into per-thread parts, checked against perf's own view of it (perf
# script's switch records and trace errors, perf report -D's TIME_CONV
# and packet dump; perf_cpu_parts.py says how), and the same recording
# as an LLDB per-CPU bundle made with perf and python3 alone
# (lldb_percpu_bundle.py), which must index into the same parts.

. "$(atf_get_srcdir)/../env.sh"
. "$HWTRACE_SRC/tests/lib/hwtr_test.sh"

require_perf()
{
	command -v perf >/dev/null 2>&1 || atf_skip "perf (linux-perf) not installed"
	command -v python3 >/dev/null 2>&1 || atf_skip "python3 not installed"
	command -v sqlite3 >/dev/null 2>&1 || atf_skip "sqlite3 not installed"
}

# perf_views: perf's switch records (sw), its dump with the header (dump)
# and the parts it implies for CPUs 0 and 3 (perf.parts).
perf_views()
{
	f="$HWTRACE_CORPUS/$PT"
	perf script -i "$f" --show-switch-events -F pid,tid,cpu,time --ns \
	    >sw 2>/dev/null || atf_fail "perf script failed"
	perf report --header-only -i "$f" >dump 2>/dev/null
	perf report -D -i "$f" >>dump 2>/dev/null ||
	    atf_fail "perf report -D failed"
	python3 "$HWTRACE_SRC/tests/cli/perf_cpu_parts.py" sw dump 0 3 \
	    >perf.parts || atf_fail "perf_cpu_parts.py failed"
	[ "$(wc -l <perf.parts)" -gt 10 ] ||
	    atf_fail "perf's view has too few parts: $(cat perf.parts)"
}

# db_parts DB: the cpu_parts rows in perf_cpu_parts.py's format.
db_parts()
{
	sqlite3 -separator ' ' "$1" "SELECT cpu, ifnull(pid, '-'),
	    ifnull(tid, '-'), ifnull(start_tsc, '-'), ifnull(end_tsc, '-'),
	    ifnull(start_offset, '-'), ifnull(end_offset, '-'), psbs, tscs,
	    mtcs, cycs FROM cpu_parts ORDER BY stream, part"
}

index_of()
{
	"$HWTRACE" index -o "$2" "$1" >/dev/null 2>err ||
	    atf_fail "index of $1 failed: $(cat err)"
}

atf_test_case perf_split
perf_split_head()
{
	atf_set descr "the per-CPU streams' parts (which tid owns which TSC range of CPUs 0 and 3, the packet ranges and the PSB, TSC, MTC and CYC counts in each) equal what perf's switch records, TIME_CONV and packet dump give"
}
perf_split_body()
{
	require_corpus $PT
	require_perf
	perf_views
	"$HWTRACE" import "$HWTRACE_CORPUS/$PT" -o pt.hwtrace 2>err ||
	    atf_fail "import failed: $(cat err)"
	index_of pt.hwtrace pt.db
	db_parts pt.db >hw.parts
	diff perf.parts hw.parts >d ||
	    { cat d >&2; atf_fail "parts differ from perf's (diff on stderr: < perf, > hwtrace)"; }
	# perf's 122 switch records of CPUs 0 and 3 make 63 parts.
	n=$(awk '($2 == "[000]" || $2 == "[003]") && /SWITCH/' sw | wc -l)
	[ "$n" -eq 122 ] || atf_fail "perf lists $n switch records on CPUs 0 and 3, expected 122"
	[ "$(wc -l <hw.parts)" -eq 63 ] || atf_fail "$(wc -l <hw.parts) parts, expected 63"
	# All ten PSBs and 24 TSC packets of perf's dump are attributed.
	set -- $(sqlite3 pt.db "SELECT sum(psbs), sum(tscs) FROM cpu_parts" | tr '|' ' ')
	[ "$1 $2" = "10 24" ] || atf_fail "attributed $1 PSBs and $2 TSCs, expected 10 and 24"
}

atf_test_case threads_and_errors
threads_and_errors_head()
{
	atf_set descr "query threads lists the echo process (tid 3174) as its own thread; the decode errors of the CPU streams go to the threads perf's own decoder blames, and each of perf's 114 trace errors (time, CPU, tid) lies in a part of that tid"
}
threads_and_errors_body()
{
	require_corpus $PT
	require_perf
	"$HWTRACE" import "$HWTRACE_CORPUS/$PT" -o pt.hwtrace 2>err ||
	    atf_fail "import failed: $(cat err)"
	index_of pt.hwtrace pt.db
	"$HWTRACE" query pt.db threads >th 2>err ||
	    atf_fail "query threads failed: $(cat err)"
	awk '$2 == 3174 && $3 == 3174 && $4 == "echo" && $5 == "-"' th >row
	[ "$(wc -l <row)" -eq 1 ] || atf_fail "no thread row of its own for echo (3174): $(cat th)"
	set -- $(cat row)
	[ "$10" -gt 0 ] || atf_fail "echo's thread has no decode errors: $(cat row)"
	# (cpu, pid, tid) of the errors: hwtrace's against perf's decoder.
	perf script -i "$HWTRACE_CORPUS/$PT" --itrace=e 2>/dev/null |
	    sed -n 's/.*instruction trace error .* cpu \([0-9]*\) pid \([0-9]*\) tid \([0-9]*\) .*/\1 \2 \3/p' |
	    sort -u >perf.err
	[ -s perf.err ] || atf_fail "perf reported no trace errors"
	sqlite3 -separator ' ' pt.db "SELECT DISTINCT s.cpu, t.pid, t.tid
	    FROM events e JOIN streams s ON s.id = e.stream
	    JOIN threads t ON t.id = e.thread WHERE e.kind = 'decode-error'" |
	    sort -u >hw.err
	diff perf.err hw.err >d ||
	    { cat d >&2; atf_fail "errors attributed differently (diff on stderr: < perf, > hwtrace)"; }
	# Each of perf's trace errors (its decoder's time, CPU and tid) lies
	# in a part of hwtrace's of that tid, time converted with perf's
	# perf_time_to_tsc() and the TIME_CONV perf report -D prints.
	perf script -i "$HWTRACE_CORPUS/$PT" --itrace=e --ns 2>/dev/null |
	    grep "instruction trace error" >perr
	perf report -D -i "$HWTRACE_CORPUS/$PT" >dump 2>/dev/null
	db_parts pt.db >hw.parts
	python3 - perr dump hw.parts >owners <<'PY' || atf_fail "the error check failed"
import re, sys
errs, dump, parts = sys.argv[1:4]
d = open(dump).read()
sh = int(re.search(r'Time Shift\s+(\d+)', d).group(1))
mu = int(re.search(r'Time Mul\w*\s+(\d+)', d).group(1))
z = int(re.search(r'Time Zero\s+(\d+)', d).group(1))
M = (1 << 64) - 1
def tsc(ns):
    q, r = divmod((ns - z) & M, mu)
    return ((q << sh) + ((r << sh) & M) // mu) & M
ps = [l.split() for l in open(parts)]
n = bad = 0
for l in open(errs):
    m = re.search(r'time (\d+)\.(\d+) cpu (\d+) pid (\d+) tid (\d+)', l)
    t = tsc(int(m.group(1)) * 10**9 + int(m.group(2).ljust(9, '0')))
    own = [p[2] for p in ps if p[0] == m.group(3) and
           (p[3] == '-' or int(p[3]) <= t) and (p[4] == '-' or t < int(p[4]))]
    n += 1
    if own != [m.group(5)]:
        bad += 1
        print('perf: %s; hwtrace: %s' % (l.strip(), own), file=sys.stderr)
print(n, bad)
PY
	[ "$(cat owners)" = "114 0" ] ||
	    atf_fail "perf's 114 trace errors against hwtrace's parts: $(cat owners) (checked, differing)"
	# Echo's own history starts where perf's decoder starts echo's
	# trace (its first branch sample on a CPU: "tr strt" to the address
	# its code could not be read at, as the images are not in the
	# corpus), on that CPU.
	perf script -i "$HWTRACE_CORPUS/$PT" --itrace=b -F tid,cpu,addr 2>/dev/null |
	    awk '$1 == 3174 && $2 != "[-01]" { print $2, $NF; exit }' |
	    sed 's/\[0*\([0-9]\)/\1/; s/\]//' >perf.first
	[ -s perf.first ] || atf_fail "perf shows no branch of echo"
	sqlite3 -separator ' ' pt.db "SELECT s.cpu, printf('%x', e.ip)
	    FROM events e JOIN streams s ON s.id = e.stream WHERE e.thread =
	    (SELECT id FROM threads WHERE tid = 3174 AND stream IS NULL)
	    ORDER BY e.seq, e.id LIMIT 1" >hw.first
	diff perf.first hw.first >d ||
	    atf_fail "echo's history starts at $(cat hw.first), perf's at $(cat perf.first)"
	# Every verb selects it by tid; it has no block (no image).
	"$HWTRACE" query pt.db last --thread tid:3174 >last 2>err ||
	    atf_fail "last --thread tid:3174 failed: $(cat err)"
	[ "$(grep -vc '^note: ' last)" -eq 1 ] || atf_fail "last of echo: $(cat last)"
	# Its code could not be decoded: the answer says the trace lost data.
	grep -q '^note: .*the trace lost data in [0-9]* place.*decode error' last ||
	    atf_fail "last of echo: no note of its decode errors: $(tr '\n' ' ' <last)"
	# The parts of a thread cross CPUs: echo ran on CPU 0 and on CPU 3.
	[ "$(sqlite3 pt.db "SELECT count(DISTINCT cpu) FROM cpu_parts WHERE tid = 3174 AND start_offset IS NOT NULL")" -eq 2 ] ||
	    atf_fail "echo's trace is not on both CPUs"
}

atf_test_case lldb_percpu
lldb_percpu_head()
{
	atf_set descr "an LLDB per-CPU bundle made from the recording with perf and python3 (AUX bytes, switch records as perf_event data, timeZero above INT64_MAX) imports and indexes into the same parts"
}
lldb_percpu_body()
{
	require_corpus $PT
	require_perf
	perf_views
	python3 "$HWTRACE_SRC/tests/cli/lldb_percpu_bundle.py" \
	    "$HWTRACE_CORPUS/$PT" sw dump b || atf_fail "bundle not made"
	grep -q '"timeZero": 18446744041015200657' b/trace.json ||
	    atf_fail "the bundle's timeZero is not perf's: $(cat b/trace.json)"
	"$HWTRACE" import b/trace.json -o b.hwtrace 2>err ||
	    atf_fail "import failed: $(cat err)"
	"$HWTRACE" info b.hwtrace >info
	expect_line info "  stream 0 'cpu 0': intel-pt, pid -1, tid -1, cpu 0, 1 chunk, 12240 bytes"
	expect_line info "  stream 1 'cpu 3': intel-pt, pid -1, tid -1, cpu 3, 1 chunk, 137728 bytes"
	expect_line info "time conversion: tsc-zero 0, ns-zero -32694350959, mult 1789569706, shift 31"
	index_of b.hwtrace b.db
	db_parts b.db >b.parts
	diff perf.parts b.parts >d ||
	    { cat d >&2; atf_fail "parts differ from perf's (diff on stderr: < perf, > hwtrace)"; }
}

# bundle ZERO: a per-CPU bundle with timeZero written as ZERO, in tz/.
tz_bundle()
{
	rm -rf tz && mkdir tz
	printf '\002\202\002\202\002\202\002\202\002\202\002\202\002\202\002\202\002\043' >tz/cpu0.ipt
	: >tz/cpu0.sw
	cat >tz/trace.json <<JSON
{"type": "intel-pt", "cpuInfo": {"vendor": "GenuineIntel", "family": 6,
 "model": 78, "stepping": 3},
 "tscPerfZeroConversion": {"timeMult": 1789569706, "timeShift": 31,
 "timeZero": $1},
 "processes": [{"pid": 1, "threads": [{"tid": 1}], "modules": []}],
 "cpus": [{"id": 0, "iptTrace": "cpu0.ipt", "contextSwitchTrace": "cpu0.sw"}]}
JSON
}

atf_test_case lldb_timezero
lldb_timezero_head()
{
	atf_set descr "timeZero is an unsigned 64-bit value: 2^63, 2^64 - 1 and a negative (two's complement) one are kept exactly, 2^64 is refused naming the field"
}
lldb_timezero_body()
{
	for z in 9223372036854775808:-9223372036854775808 \
	    18446744073709551615:-1 18446744041015200657:-32694350959 \
	    -5:-5 9223372036854775807:9223372036854775807; do
		tz_bundle "${z%%:*}"
		"$HWTRACE" import tz/trace.json -o tz.hwtrace 2>err ||
		    atf_fail "timeZero ${z%%:*} refused: $(cat err)"
		"$HWTRACE" info tz.hwtrace >info
		expect_line info "time conversion: tsc-zero 0, ns-zero ${z#*:}, mult 1789569706, shift 31"
		rm -f tz.hwtrace
	done
	tz_bundle 18446744073709551616
	atf_check -s exit:1 -o empty \
	    -e match:"timeZero: 18446744073709551616 is out of range \\(0 to 18446744073709551615\\)" \
	    "$HWTRACE" import tz/trace.json -o tz.hwtrace
	[ ! -e tz.hwtrace ] || atf_fail "a refused bundle left tz.hwtrace"
	# No string of the file may pose as the prescan's big integer.
	tz_bundle '"\u0001hwtr-bigint:5"'
	atf_check -s exit:1 -o empty -e match:"U\\+0001" \
	    "$HWTRACE" import tz/trace.json -o tz.hwtrace
}

atf_test_case lldb_percpu_bad
lldb_percpu_bad_head()
{
	atf_set descr "bad per-CPU bundles: a switch record cut short, a record size past the end, no time conversion, a duplicate CPU id: clear errors, exit 1, no archive"
}
lldb_percpu_bad_body()
{
	tz_bundle 0
	printf '\017\000\000\000\000\000\000\040' >tz/cpu0.sw
	atf_check -s exit:1 -o empty -e match:"cpus\\[0\\].contextSwitchTrace: .* offset 0: a record of 8192 bytes runs past the end" \
	    "$HWTRACE" import tz/trace.json -o tz.hwtrace
	printf '\017\000\000\000\000\000\020\000\000\000\000\000\000\000\000\000' >tz/cpu0.sw
	atf_check -s exit:1 -o empty -e match:"offset 0: a switch record of 16 bytes \\(at least 32\\)" \
	    "$HWTRACE" import tz/trace.json -o tz.hwtrace
	printf '\017\000' >tz/cpu0.sw
	atf_check -s exit:1 -o empty -e match:"a record header cut short" \
	    "$HWTRACE" import tz/trace.json -o tz.hwtrace
	tz_bundle 0
	sed 's/"tscPerfZeroConversion"/"x"/' tz/trace.json >tz/t2.json
	atf_check -s exit:1 -o empty -e match:"cpus: a per-CPU bundle needs tscPerfZeroConversion" \
	    "$HWTRACE" import tz/t2.json -o tz.hwtrace
	sed 's/"cpus": \[\(.*\)\]}/"cpus": [\1, \1]}/' tz/trace.json >tz/t3.json
	atf_check -s exit:1 -o empty -e match:"cpus\\[1\\].id: 0 appears twice" \
	    "$HWTRACE" import tz/t3.json -o tz.hwtrace
	[ ! -e tz.hwtrace ] || atf_fail "a refused bundle left tz.hwtrace"
}

# pevent_switch_files: libipt's pevent-tip_pgd-switch-tsc-tip_pge test
# files (its name in $n) copied here; skips without them or sqlite3.
pevent_switch_files()
{
	n=pevent-tip_pgd-switch-tsc-tip_pge
	require_corpus libipt-ptt/$n
	command -v sqlite3 >/dev/null 2>&1 || atf_skip "sqlite3 not installed"
	cp "$HWTRACE_CORPUS/libipt-ptt/$n"/* .
}

atf_test_case ptxed_switch
ptxed_switch_head()
{
	atf_set descr "libipt's pevent-tip_pgd-switch-tsc-tip_pge imported with ptxed's options: its switch sideband splits the stream's instructions between pid 1 and pid 2 as ptxed's expected output does ([context: pid-N])"
}
ptxed_switch_body()
{
	pevent_switch_files
	# ptxed's command line, its decoding-only options left out.
	set -- $(sed 's/^ptxed //; s/--sb:[a-z]*//g; s/--no-inst//; s/--check//' $n-ptxed.cmd)
	"$HWTRACE" import "$@" -o pev.hwtrace 2>err ||
	    atf_fail "import failed: $(cat err)"
	index_of pev.hwtrace pev.db
	# ptxed: each address under the last [context: pid-N].
	awk '/^\[context: pid-/ { sub(/.*pid-/, ""); sub(/\]/, ""); pid = $0 }
	    /^[0-9a-f]+$/ && length($0) == 16 { print pid, $0 }' $n-ptxed.exp >ptxed.ctx
	[ "$(wc -l <ptxed.ctx)" -eq 2 ] || atf_fail "ptxed's output has no 2 instructions: $(cat ptxed.ctx)"
	sqlite3 -separator ' ' -cmd ".load $HWTRACE_BUILD/hwtrace_sqlite.so" \
	    pev.db "SELECT p.pid, printf('%016x', i.ip) FROM cpu_parts p
	    JOIN exec_insns i ON i.thread = ifnull(p.thread, p.stream_thread) AND
	    i.insn >= p.first_insn AND i.insn < p.end_insn
	    ORDER BY p.part, i.insn" >hw.ctx 2>err ||
	    atf_fail "sqlite3 failed: $(cat err)"
	diff ptxed.ctx hw.ctx >d ||
	    { cat d >&2; atf_fail "instructions attributed differently (diff on stderr: < ptxed, > hwtrace)"; }
	# The threads' own rows count them.
	[ "$(sqlite3 pev.db "SELECT group_concat(tid || ':' || blocks || ':' || insns, ' ') FROM (SELECT * FROM threads WHERE stream IS NULL AND blocks > 0 ORDER BY tid)")" = "1:1:1 2:1:1" ] ||
	    atf_fail "thread rows: $(sqlite3 pev.db 'SELECT * FROM threads')"
}

atf_test_case timeconv_short
timeconv_short_head()
{
	atf_set descr "TIME_CONV of a short counter (time_cycles, time_mask, cap_user_time_short): the recording made to say its times with a 56-bit counter whose top byte is 5 (perf_timeconv.py; perf report -D reads it back) gives the same parts as perf's view of the original, part times within 1 ns of perf's switch times, and echo's trace times inside the recording"
}
timeconv_short_body()
{
	require_corpus $PT
	require_perf
	perf_views
	t0=$(sed -n 's/.* \([0-9]*\)\.\([0-9]*\): .*/\1\2/p' sw | head -1)
	python3 "$HWTRACE_SRC/tests/cli/perf_timeconv.py" \
	    "$HWTRACE_CORPUS/$PT" short.data "$t0" >tc ||
	    atf_fail "no perf.data made"
	set -- $(cat tc)
	perf report -D -i short.data >sdump 2>/dev/null
	grep -q "Time Cycles *$1\$" sdump && grep -q "Cap Time Short *1\$" sdump ||
	    atf_fail "perf does not read the TIME_CONV written: $(grep -A8 TIME_CONV sdump)"
	"$HWTRACE" import short.data -o short.hwtrace 2>err ||
	    atf_fail "import failed: $(cat err)"
	index_of short.hwtrace short.db
	db_parts short.db >short.parts
	diff perf.parts short.parts >d ||
	    { cat d >&2; atf_fail "parts differ from perf's (diff on stderr: < perf, > hwtrace)"; }
	# Times in ns: each part's start is a switch record's time (perf's,
	# to the ns it rounds to), echo's first and last trace times lie in
	# the recording.
	sqlite3 -separator ' ' short.db "SELECT cpu, start_ns FROM cpu_parts
	    WHERE start_ns IS NOT NULL" >starts
	sqlite3 -separator ' ' short.db "SELECT first_ns, last_ns FROM threads
	    WHERE tid = 3174 AND stream IS NULL" >echo.ns
	python3 - sw starts echo.ns <<'PY' || atf_fail "times in ns differ from perf's"
import re, sys
sw = {}
for l in open(sys.argv[1]):
    m = re.search(r'\[(\d+)\]\s+(\d+)\.(\d+):', l)
    if m:
        sw.setdefault(int(m.group(1)), []).append(
            int(m.group(2)) * 10**9 + int(m.group(3)))
bad = 0
n = 0
for l in open(sys.argv[2]):
    cpu, ns = map(int, l.split())
    n += 1
    if not any(abs(ns - t) <= 1 for t in sw.get(cpu, [])):
        bad += 1
        print('part of cpu %d at %d ns: no switch record of perf there' %
              (cpu, ns), file=sys.stderr)
first, last = map(int, open(sys.argv[3]).read().split())
lo = min(min(v) for v in sw.values())
hi = max(max(v) for v in sw.values())
if not (lo <= first <= last <= hi):
    bad += 1
    print('echo runs %d..%d ns, the recording %d..%d' % (first, last, lo, hi),
          file=sys.stderr)
print(n, bad)
sys.exit(1 if bad or n < 60 else 0)
PY
}

atf_test_case process_images
process_images_head()
{
	atf_set descr "CPU mode decodes with the mappings of the process that owns the CPU: pevent-tip_pgd-switch-tsc-tip_pge with pid 1 also mapping other bytes at pid 2's 0x2000; pid 2's block there has pid 2's bytes (the .bin at pgoff 0x10, per od)"
}
process_images_body()
{
	command -v python3 >/dev/null 2>&1 || atf_skip "python3 not installed"
	pevent_switch_files
	# The sideband with one more MMAP: pid 1 maps the .bin from byte 2
	# at 0x2000 (pid 1's first record, its address and pgoff changed),
	# after pid 2's mapping there.
	python3 - $n-pevent-primary*.sb ov.sb <<'PY' || atf_fail "no sideband made"
import struct, sys
b = open(sys.argv[1], 'rb').read()
t, misc, size = struct.unpack_from('<IHH', b, 0)
t2, misc2, size2 = struct.unpack_from('<IHH', b, size)
assert t == 1 and t2 == 1, 'the first two records are not MMAPs'
r = bytearray(b[:size])
struct.pack_into('<QQ', r, 16, 0x2000, 3)
struct.pack_into('<Q', r, 32, 2)
open(sys.argv[2], 'wb').write(b[:size + size2] + r + b[size + size2:])
PY
	set -- $(sed 's/^ptxed //; s/--sb:[a-z]*//g; s/--no-inst//; s/--check//; s/--pevent:primary [^ ]*/--pevent:primary ov.sb/' $n-ptxed.cmd)
	"$HWTRACE" import "$@" -o ov.hwtrace 2>err ||
	    atf_fail "import failed: $(cat err)"
	"$HWTRACE" info ov.hwtrace >info
	expect_line info "  pid 1: 0x2000-0x2003 pgoff 0x2 r-x $n.bin [sha256-$(sha256sum $n.bin | cut -c1-64)]"
	index_of ov.hwtrace ov.db
	want=$(od -A n -t x1 -j 16 -N 1 $n.bin | tr -d ' ')
	other=$(od -A n -t x1 -j 2 -N 1 $n.bin | tr -d ' ')
	[ "$want" != "$other" ] || atf_fail "the test's two mappings have the same bytes"
	got=$(sqlite3 ov.db "SELECT lower(hex(code)) FROM blocks WHERE start_ip = 8192")
	[ "$got" = "$want" ] ||
	    atf_fail "the block at 0x2000 has bytes '$got', pid 2's are '$want' (pid 1's '$other')"
}

atf_init_test_cases()
{
	atf_add_test_case process_images
	atf_add_test_case ptxed_switch
	atf_add_test_case perf_split
	atf_add_test_case threads_and_errors
	atf_add_test_case lldb_percpu
	atf_add_test_case lldb_timezero
	atf_add_test_case timeconv_short
	atf_add_test_case lldb_percpu_bad
}
