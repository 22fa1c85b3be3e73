# SPDX-License-Identifier: BSD-2-Clause
#
# Copyright (c) 2026 The hwtrace authors
#
# The helpers the atf-sh programs share, sourced after env.sh:
#
#	. "$(atf_get_srcdir)/../env.sh"
#	. "$HWTRACE_SRC/tests/lib/hwtr_test.sh"
#
# Only functions: sourcing it runs nothing and sets no variable but $PD
# and its neighbours (the corpus's perf captures, below).  A helper fails
# the test case with what it expected and what came, or skips it with the
# reason when a tool or a fixture is absent.

# --- messages ---------------------------------------------------------

# oneline FILE [N]: FILE's lines joined by '|', at most N bytes (3000),
# for a failure message: atf-sh takes one line, and kyua reports a
# multi-line reason as a broken test instead of the failure it is.
oneline()
{
	tr '\n' '|' <"$1" | head -c "${2:-3000}"
}

# --- exit status and output -------------------------------------------

# Run "$@"; fail unless it exits with status $1 (shift).  Output goes to
# ./out and ./err.
run_status()
{
	want=$1
	shift
	"$@" >out 2>err
	got=$?
	if [ "$got" -ne "$want" ]; then
		atf_fail "'$*': expected exit status $want, got $got; stdout: $(oneline out 2000); stderr: $(oneline err 2000)"
	fi
}

# Fail unless file $1 has the exact line $2.
expect_line()
{
	if ! grep -qxF -- "$2" "$1"; then
		atf_fail "expected the line '$2' in $1; got: $(oneline "$1")"
	fi
}

# expect_match FILE RE WHAT: a line of FILE matches the basic regular
# expression RE (grep); else fail saying WHAT was expected, with FILE.
expect_match()
{
	grep -q -- "$2" "$1" ||
	    atf_fail "expected $3 (a line matching '$2') in $1; got: $(oneline "$1")"
}

# expect_lines FILE WANT: every line of file WANT is a line of FILE.
expect_lines()
{
	while IFS= read -r line; do
		expect_line "$1" "$line"
	done < "$2"
}

# Fail unless the first line of file $1 is exactly $2.
expect_first()
{
	first=$(head -n 1 "$1")
	if [ "$first" != "$2" ]; then
		atf_fail "expected first line '$2' in $1, got '$first'; all: $(oneline "$1" 2000)"
	fi
}

# expect_same WANT GOT WHAT: files WANT and GOT are the same; else fail
# saying WHAT differs, with the line counts and the first lines diff(1)
# gives (< what was expected, > what came).
expect_same()
{
	cmp -s "$1" "$2" ||
	    atf_fail "$3: expected $(wc -l < "$1") lines ($1), got $(wc -l < "$2") ($2); diff: $(diff "$1" "$2" | head -n 8 | tr '\n' ' ')"
}

# Fail when any file matching the output name $1 (or its .partial) exists.
expect_no_output()
{
	for f in "$1" "$1.partial"; do
		if [ -e "$f" ]; then
			atf_fail "'$f' was left behind after a failed import"
		fi
	done
}

# import_x NAME FILE [OPTIONS]: hwtrace import OPTIONS FILE into
# NAME.hwtrace (its output in ./out and ./err), extracted by tar(1) into
# NAME.x and described by hwtrace info in NAME.info; a failure says which
# step failed.
import_x()
{
	iu_n=$1
	iu_f=$2
	shift 2
	"$HWTRACE" import "$@" "$iu_f" -o "$iu_n.hwtrace" >out 2>err ||
	    atf_fail "import of $iu_f failed: $(oneline err)"
	mkdir "$iu_n.x" && tar -xf "$iu_n.hwtrace" -C "$iu_n.x" ||
	    atf_fail "$iu_n.hwtrace does not unpack with tar"
	"$HWTRACE" info "$iu_n.hwtrace" >"$iu_n.info" 2>&1 ||
	    atf_fail "hwtrace info $iu_n.hwtrace failed: $(oneline "$iu_n.info")"
}

# Skip unless the shared corpus has $1.
require_corpus()
{
	if [ ! -e "$HWTRACE_CORPUS/$1" ]; then
		atf_skip "shared corpus not found at $HWTRACE_CORPUS/$1"
	fi
}

# --- databases -------------------------------------------------------

# expect_some DB SQL WHAT: SQL's answer over the database DB (sqlite3,
# hwtrace's SQL functions loaded) is a number above 0; else fail saying
# WHAT was expected and what came.
expect_some()
{
	some_n=$(sqlite3 -batch -noheader -cmd ".load $HWTRACE_BUILD/hwtrace_sqlite" "$1" "$2" 2>&1)
	[ "$some_n" -gt 0 ] 2>/dev/null ||
	    atf_fail "$3 (expected above 0 from '$2', got '$some_n')"
}

# sql_tsv ARCHIVE OUT SQL: hwtrace query ARCHIVE sql SQL as TSV into
# file OUT (its header first, the first row on line 2); fails when the
# query does, with its message.
sql_tsv()
{
	"$HWTRACE" query "$1" sql "$3" --format tsv > "$2" 2> "$2.err" ||
	    atf_fail "sql failed: $3: $(oneline "$2.err")"
}

# sql_row ARCHIVE SQL: the first row of SQL's answer (sql_tsv into
# ./row.tsv), tab-separated, in $row.
sql_row()
{
	sql_tsv "$1" row.tsv "$2"
	row=$(sed -n 2p row.tsv)
}

# expect_row ARCHIVE SQL WANT WHAT: the first row of SQL's answer
# (sql_row, tab-separated) is exactly WANT; else fail saying WHAT was
# expected and what came.
expect_row()
{
	sql_row "$1" "$2"
	[ "$row" = "$3" ] ||
	    atf_fail "$4: expected '$3', got '$row'"
}

# term_while_locked LOCK WHAT CMD...: CMD runs in the background while
# another process holds LOCK (flock(1)); once it waits on LOCK, SIGTERM
# to it.  It must exit 1 and say 'interrupted' (stderr in err.t); a
# failure names WHAT.
term_while_locked()
{
	tl_lock=$1
	tl_what=$2
	shift 2
	flock "$tl_lock" sleep 30 &
	tl_holder=$!
	sleep 0.5
	timeout -s KILL 20 "$@" >/dev/null 2>err.t &
	tl_waiter=$!
	# Once the waiter holds the lock file open it is past its signal
	# handlers (set before it opens the database); a fixed sleep was too
	# short for a sanitizer build on a loaded machine.
	tl_n=0
	while [ $tl_n -lt 150 ]; do
		tl_c=$(pgrep -P $tl_waiter | head -n 1)
		[ -n "$tl_c" ] && ls -l /proc/$tl_c/fd 2>/dev/null |
		    grep -q "$tl_lock\$" && break
		sleep 0.1
		tl_n=$((tl_n + 1))
	done
	sleep 0.2
	kill -TERM $tl_waiter
	wait $tl_waiter
	tl_got=$?
	kill $tl_holder
	[ "$tl_got" = 1 ] || atf_fail "$tl_what: expected exit status 1 on SIGTERM, got $tl_got (137: it kept waiting; 143: killed by the signal; 0: it did not wait)"
	grep -q interrupted err.t || atf_fail "$tl_what: expected 'interrupted', got: $(cat err.t)"
}

# --- ELF files, by readelf(1) ----------------------------------------

# The GNU build-id of ELF file $1 as readelf(1) prints it.
readelf_build_id()
{
	readelf -n "$1" | sed -n 's/^ *Build ID: *\([0-9a-f]*\).*/\1/p'
}

# debuglink_strip FILE SYMBOL: ELF file FILE stripped of its symbols and
# DWARF (objcopy), which FILE.debug keeps, with a .gnu_debuglink to it;
# fails if nm(1) still finds SYMBOL.  FILE's build-id (readelf) in $bid.
debuglink_strip()
{
	objcopy --only-keep-debug "$1" "$1.debug" && objcopy --strip-all "$1" &&
	    objcopy --add-gnu-debuglink="$1.debug" "$1" || atf_fail "objcopy failed"
	! nm "$1" 2>/dev/null | grep -q "$2" || atf_fail "$1 still has symbols"
	bid=$(readelf_build_id "$1")
	[ -n "$bid" ] || atf_fail "readelf: $1 has no build-id"
}

# "vaddr offset filesz flags" of each PT_LOAD of ELF file $1, per readelf(1).
readelf_loads()
{
	readelf -lW "$1" | awk '$1 == "LOAD" { f = ""; for (i = 7; i < NF; i++) f = f $i; print $3, $2, $5, f }'
}

# The mapping lines "hwtrace info" should print for ELF file $1 (as $2 in
# the archive) mapped with its lowest segment at $3 (0: where linked), for
# process $4, image key $5 -- computed from readelf(1) alone.
expected_mappings()
{
	readelf_loads "$1" | python3 -c '
import sys
path, base, pid, key = sys.argv[1], int(sys.argv[2], 0), sys.argv[3], sys.argv[4]
segs = [l.split() for l in sys.stdin if l.strip()]
minv = min(int(s[0], 16) for s in segs)
slide = base - minv if base else 0
for vaddr, off, filesz, flags in segs:
    v, o, n = int(vaddr, 16), int(off, 16), int(filesz, 16)
    if n == 0:
        continue
    prot = ("r" if "R" in flags else "-") + ("w" if "W" in flags else "-") + ("x" if "E" in flags else "-")
    print("  pid %s: 0x%x-0x%x pgoff 0x%x %s %s [%s]" % (pid, v + slide, v + slide + n, o, prot, path, key))
' "$2" "$3" "$4" "$5"
}

# --- the shared corpus -------------------------------------------------

# perf's own test captures in the corpus (paths below $HWTRACE_CORPUS;
# require_corpus skips without them): Intel PT, CoreSight ETM formatted,
# unformatted, and with AUX data missing.
PD=perf-data
PT=$PD/intel_pt/perf.data.intel_pt-4.14
ETM=$PD/cs_etm/perf_etm.data
RAW=$PD/cs_etm/perf_with_unformatted_trace.data
MISS=$PD/cs_etm/perf_with_missing_aux_data.data

# --- tools and fixtures -----------------------------------------------

# require_tools TOOL...: skip unless every TOOL is on PATH.
require_tools()
{
	for t in "$@"; do
		command -v "$t" >/dev/null 2>&1 || atf_skip "$t is not installed"
	done
}

# need_valgrind: skip unless Valgrind (valgrind.bin, which the valgrind
# source runs) is installed.
need_valgrind()
{
	command -v valgrind.bin >/dev/null 2>&1 ||
	    atf_skip "valgrind is not installed"
}

# need_vg_fixture PROG: skip unless fixture PROG was built and Valgrind
# is installed (need_valgrind).
need_vg_fixture()
{
	[ -x "$HWTRACE_PROGS/$1" ] || atf_skip "fixture programs not built"
	need_valgrind
}

# need_go: skip unless Go's toolchain is installed.
need_go()
{
	command -v go >/dev/null 2>&1 ||
	    atf_skip "go is not installed (Debian's golang-go)"
}

# go_work OUT: tests/lib/work.go built into OUT by Go's toolchain (its
# cache here); skips without Go (need_go).
go_work()
{
	need_go
	cp "$HWTRACE_SRC/tests/lib/work.go" main.go || atf_fail "cannot copy work.go"
	HOME=$PWD GOCACHE=$PWD/gocache GO111MODULE=off go build -o "$1" main.go ||
	    atf_fail "go build failed"
}

# need_prog PROG: fail unless the fixture program PROG was built (make
# builds them all with the tests).
need_prog()
{
	[ -x "$HWTRACE_PROGS/$1" ] ||
	    atf_fail "fixture $HWTRACE_PROGS/$1 was not built"
}

# need_gen: skip unless the synthetic archive writer $GEN (bench/ixgen)
# and the binary $PROG whose control flow it follows are built.
need_gen()
{
	[ -x "$GEN" ] || atf_skip "$GEN not built"
	[ -x "$PROG" ] || atf_skip "$PROG not built"
}

# --- processes in the background ---------------------------------------

# wait_for FILE PATTERN: up to 30 s for a line of FILE to match PATTERN
# (grep); fails naming both.
wait_for()
{
	wait_i=0
	while ! grep -q "$2" "$1" 2>/dev/null; do
		wait_i=$((wait_i + 1))
		[ $wait_i -lt 300 ] || atf_fail "'$2' never came in $1: $(oneline "$1")"
		sleep 0.1
	done
}

# spin_capture ARCHIVE ARG...: capture the fixture spin into ARCHIVE with
# the options ARG... in the background (its output in ./out and ./err,
# hwtrace's pid in $hp) and wait until spin runs.
spin_capture()
{
	spin_a=$1
	shift
	need_prog spin
	"$HWTRACE" capture "$@" -o "$spin_a" -- "$HWTRACE_PROGS/spin" >out 2>err &
	hp=$!
	wait_for out 'spin: running'
}

# stop_complete ARCHIVE: a second on, SIGINT to the capture spin_capture
# started ($hp); it exits 130, or 137 when spin was killed first, and
# leaves ARCHIVE complete (end.json) with trace (a chunk of stream 0).
stop_complete()
{
	sleep 1
	kill -INT $hp
	wait $hp
	stop_rc=$?
	[ $stop_rc -eq 130 ] || [ $stop_rc -eq 137 ] ||
	    atf_fail "expected exit status 130 or 137 (spin killed), got $stop_rc ($(oneline err))"
	members "$1" | grep -q '^end.json$' ||
	    atf_fail "the archive after SIGINT is not complete: $(oneline err)"
	members "$1" | grep -q '^streams/0/.*\.chunk$' ||
	    atf_fail "the archive after SIGINT has no trace"
}

# expect_no_archive ARCHIVE WHY: fail, saying WHY, if ARCHIVE or
# ARCHIVE.partial exists.
expect_no_archive()
{
	[ ! -e "$1" ] && [ ! -e "$1.partial" ] ||
	    atf_fail "$2: expected no $1 and no $1.partial, found: $(ls -d "$1" "$1.partial" 2>/dev/null | tr '\n' ' ')"
}

# --- ground-truth test cases -------------------------------------------

# gt_cases WHAT PROG:STATUS...: defines a test case gt_PROG a pair,
# described as "PROG" then WHAT, whose body is the script's own
# "gt PROG STATUS" (fixture PROG captured, exit status STATUS expected).
gt_cases()
{
	gt_what=$1
	shift
	for c in "$@"; do
		p=${c%%:*} s=${c#*:}
		eval "
atf_test_case gt_$p
gt_${p}_head() {
	atf_set descr \"$p$gt_what\"
	atf_set timeout 120
}
gt_${p}_body() {
	gt $p $s
}"
	done
}

# gt_capture SOURCE PROG STATUS: fixture PROG captured by SOURCE with
# ground truth into PROG.hwtrace (its output in ./out and ./err): it
# exits STATUS and the archive has a ground-truth member.
gt_capture()
{
	need_prog "$2"
	"$HWTRACE" capture --source "$1" --ground-truth -o "$2.hwtrace" -- \
	    "$HWTRACE_PROGS/$2" >out 2>err
	gc_rc=$?
	[ "$gc_rc" -eq "$3" ] ||
	    atf_fail "$2: expected exit status $3, got $gc_rc ($(oneline err))"
	[ -f "$2.hwtrace" ] || atf_fail "$2: no archive written ($(oneline err))"
	members "$2.hwtrace" | grep -q '^aux/groundtruth/tid-' ||
	    atf_fail "$2: no ground truth member in the archive"
}

# gt_add_cases PROG:STATUS...: adds the test cases gt_cases defined.
gt_add_cases()
{
	for c in "$@"; do
		atf_add_test_case "gt_${c%%:*}"
	done
}

# --- archives -----------------------------------------------------------

# ixgen_archive ARCHIVE ARG...: the synthetic archive $GEN (bench/ixgen)
# writes with ARGs, following $PROG's control flow (need_gen).
ixgen_archive()
{
	a=$1
	shift
	need_gen
	"$GEN" "$@" "$PROG" "$a" || atf_fail "ixgen failed"
}

# vgcapture_status PROG ARCHIVE: capture fixture PROG with the valgrind
# source into ARCHIVE; its output in capture.out and capture.err, its exit
# status (the program's) in capture.rc.  Skips without the fixture or
# Valgrind; the caller judges the status.
vgcapture_status()
{
	[ -x "$HWTRACE_PROGS/$1" ] || atf_skip "fixture programs not built"
	need_valgrind
	"$HWTRACE" capture --source valgrind -o "$2" -- "$HWTRACE_PROGS/$1" \
	    > capture.out 2> capture.err
	echo $? > capture.rc
}

# stream0_bytes ARCHIVE: hwtrace info of ARCHIVE into ./info, and the
# bytes of its stream 0 (as info counts them) in $bytes.
stream0_bytes()
{
	"$HWTRACE" info "$1" >info || atf_fail "hwtrace info $1 failed"
	bytes=$(sed -n "s/^  stream 0 .* \([0-9][0-9]*\) bytes$/\1/p" info)
}

# members ARCHIVE: the archive's member names (tar reads the zstd frames).
members()
{
	tar -tf "$1" 2>/dev/null
}

# gt_by_index ARCHIVE: every thread's instruction history, as the indexer
# decodes it (libipt's block decoder over the archive's images and
# sideband), is the archive's ground truth aux/groundtruth/tid-TID.u64,
# with no decode error; the first difference is named.
gt_by_index()
{
	a=$1
	"$HWTRACE" index -o "$a.db" "$a" >ix 2>&1 ||
	    atf_fail "hwtrace index $a failed: $(oneline ix)"
	"$HWTRACE" query "$a.db" threads --format csv >threads ||
	    atf_fail "hwtrace query threads failed"
	n=0
	for m in $(members "$a" | sed -n 's|^aux/groundtruth/tid-\([0-9]*\)\.u64$|\1|p'); do
		tid=$m
		line=$(awk -F, -v t="$tid" 'NR > 1 && $3 == t { print $1 " " $10 }' threads)
		[ -n "$line" ] || atf_fail "tid $tid: not in the index: $(oneline threads)"
		set -- $line
		[ "$2" = 0 ] || atf_fail "tid $tid: $2 decode errors"
		tar -xOf "$a" "aux/groundtruth/tid-$tid.u64" | od -An -v -tx8 |
		    tr -s ' ' '\n' | sed '/^$/d; s/^0*//; s/^/0x/' >want.$tid
		"$HWTRACE" query "$a.db" insns --thread "$1" --from 0 \
		    --count 100000000 --format csv | sed 1d | cut -d, -f3 >got.$tid
		if ! cmp -s want.$tid got.$tid; then
			d=$(diff want.$tid got.$tid | head -n 1)
			atf_fail "tid $tid: decoded instructions differ from the ground truth ($(wc -l <want.$tid) expected, $(wc -l <got.$tid) decoded), first difference at line $d"
		fi
		n=$((n + 1))
	done
	[ "$n" -gt 0 ] || atf_fail "no ground truth in $a"
}
