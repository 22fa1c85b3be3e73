#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# From capture to answer (issue 29 item 4, rows E1-E5 of
# docs/PERFORMANCE.md), on gzip -6 -c of 8 MiB of /usr/bin, every
# measurement and its reference in the same run, alternating, best of
# $BENCH_RUNS rounds.  Each round:
#   1. hwtrace capture --source valgrind of the command;
#   2. ixbare -a on that archive: libipt's block decoder alone;
#   3. hwtrace index --decoder fast -j 1, then -j 2, of that archive;
#   4. hwtrace query DB hot (the -j 1 database);
#   5. valgrind --tool=callgrind --callgrind-out-file=/dev/null of the
#      same command.
# Rows: index -j 1 against ixbare (goal 2x; wall against ixbare's decode
# loop, and CPU against ixbare's whole process, whose setup, reading and
# decompressing the archive, is a few per cent of it), -j 2 against -j 1
# (goal 1.8x, wall), peak RSS of the index runs, the capture and hot
# against issue 29's 512 MB (500,000 KiB), and capture + index -j 1 + hot
# against callgrind in CPU seconds (user + sys of each process tree, as
# /usr/bin/time reports it: waited-for children and all threads
# included; goal: fewer).  The decoder is passed explicitly, whatever
# the default.  A last row, without a goal, says how many of hot's top
# 10 functions are among callgrind_annotate's top 10 by Ir (one more
# callgrind run, not timed): what a user comparing the two looks at.
# Checks before the rows: ixbare and the database decoded as many
# instructions, and -j 1 and -j 2 wrote the same database.  A round
# takes about 3 minutes here (100 CPU-s).
# Protocol: tests/bench/run.sh.

set -eu
. "$HWTRACE_SRC/tests/bench/lib.sh"
bare="$BENCH_PROGS/ixbare"
[ -x "$bare" ] || { echo "bench_e2e: $bare not built" >&2; exit 1; }

skip() { echo "bench_e2e: skipped: $*" >&2; exit 0; }
[ -x /usr/bin/time ] ||
    skip "/usr/bin/time (Debian's time package) is not installed"
for t in valgrind callgrind_annotate gzip sqlite3; do
	command -v "$t" > /dev/null 2>&1 || skip "$t is not installed"
done
input="$BENCH_DIR/input-8m"
if [ ! -s "$input" ]; then
	# 8 MiB of executables, as bench_valgrind.sh and bench_index.sh use.
	cat /usr/bin/* 2>/dev/null | head -c 8388608 > "$input" || true
fi
[ "$(stat -c %s "$input")" -eq 8388608 ] ||
    skip "could not make 8 MiB of input from /usr/bin"
"$HWTRACE" capture --force --source valgrind -o "$BENCH_DIR/probe.hwtrace" \
    -- /bin/true > /dev/null 2> "$BENCH_DIR/probe.err" ||
    skip "hwtrace capture --source valgrind does not run here:" \
    "$(head -3 "$BENCH_DIR/probe.err")"
rm -f "$BENCH_DIR/probe.hwtrace"
ar="$BENCH_DIR/gzip8m.hwtrace"
j1="$BENCH_DIR/j1.db"
j2="$BENCH_DIR/j2.db"

# tm TAG OUT CMD...: run CMD, stdout to OUT, stderr to TAG.err; sets
# t_wall (s), t_cpu (user + sys, s) and t_rss (peak RSS, KiB).
tm() {
	tag=$1 out=$2
	shift 2
	/usr/bin/time -f '%e %U %S %M' -o "$BENCH_DIR/$tag.time" "$@" \
	    > "$out" 2> "$BENCH_DIR/$tag.err" || {
		echo "bench_e2e: failed: $*: $(tail -3 "$BENCH_DIR/$tag.err")" >&2
		exit 1
	}
	read -r t_wall t_u t_s t_rss < "$BENCH_DIR/$tag.time"
	t_cpu=$(awk -v u="$t_u" -v s="$t_s" 'BEGIN { printf "%.2f", u + s }')
}

# low VAR VALUE: keep the smaller of VAR and VALUE (decimals) in VAR.
low() {
	eval "cur=\${$1:-}"
	if [ -z "$cur" ] || awk -v a="$2" -v b="$cur" 'BEGIN { exit !(a < b) }'
	then
		eval "$1=$2"
	fi
}

# high VAR VALUE: keep the larger (for peak RSS).
high() {
	eval "cur=\${$1:-}"
	if [ -z "$cur" ] || [ "$2" -gt "$cur" ]; then
		eval "$1=$2"
	fi
}

# check_same: ixbare's instructions are the -j 1 database's, and -j 1
# and -j 2 wrote the same database; exit 1 otherwise.
check_same() {
	bi=$(sed -n 's/^total: .*, \([0-9]*\) instructions, .*/\1/p' "$BENCH_DIR/bare.out")
	di=$(sqlite3 "$j1" "SELECT sum(insns) FROM threads")
	if [ -z "$bi" ] || [ "$bi" != "$di" ]; then
		echo "bench_e2e: ixbare -a decoded '$bi' instructions, the" \
		    "-j 1 database has '$di': expected the same count" >&2
		exit 1
	fi
	if ! cmp -s "$j1" "$j2"; then
		echo "bench_e2e: index -j 1 and -j 2 wrote different" \
		    "databases (expected byte for byte the same)" >&2
		exit 1
	fi
}

rm -f "$BENCH_DIR"/*.time
run=1
while [ "$run" -le "$BENCH_RUNS" ]; do
	ld=$(cut -d ' ' -f 1-3 /proc/loadavg)
	tm cap /dev/null "$HWTRACE" capture --force --source valgrind \
	    -o "$ar" -- gzip -6 -c "$input"
	cap=$t_cpu
	high rss_cap "$t_rss"
	tm bare "$BENCH_DIR/bare.out" "$bare" -a "$ar"
	d=$(sed -n 's/^total: .*, \([0-9]*\) ns$/\1/p' "$BENCH_DIR/bare.out")
	bare_s=$(awk -v ns="$d" 'BEGIN { printf "%.2f", ns / 1e9 }')
	low bare_wall "$bare_s"
	low bare_cpu "$t_cpu"
	bare_c=$t_cpu
	high rss_bare "$t_rss"
	# A database left by the round before would cost each index its
	# replacement (about 0.1-0.2 s of wall at the rename, serial).
	rm -f "$j1" "$j2"
	tm j1 /dev/null "$HWTRACE" index --decoder fast -j 1 -o "$j1" "$ar"
	low j1_wall "$t_wall"
	low j1_cpu "$t_cpu"
	high rss_j1 "$t_rss"
	ix=$t_cpu
	tm j2 /dev/null "$HWTRACE" index --decoder fast -j 2 -o "$j2" "$ar"
	low j2_wall "$t_wall"
	low j2_cpu "$t_cpu"
	j2c=$t_cpu
	high rss_j2 "$t_rss"
	tm hot "$BENCH_DIR/hot.out" "$HWTRACE" query "$j1" hot -n 10 \
	    --format tsv
	hot=$t_cpu
	high rss_hot "$t_rss"
	tm cg /dev/null valgrind --tool=callgrind \
	    --callgrind-out-file=/dev/null gzip -6 -c "$input"
	low cg_cpu "$t_cpu"
	cgc=$t_cpu
	high rss_cg "$t_rss"
	check_same
	sum=$(awk -v a="$cap" -v b="$ix" -v c="$hot" 'BEGIN { printf "%.2f", a + b + c }')
	low e2e_cpu "$sum"
	echo "  run $run (load $ld), CPU s: capture $cap, ixbare $bare_c" \
	    "(decode loop $bare_s s wall), index -j 1 $ix, -j 2 $j2c," \
	    "hot $hot; sum $sum against callgrind $cgc" >&2
	for t in j1 j2; do
		echo "    $t: $(cat "$BENCH_DIR/$t.time") (wall user sys KiB);" \
		    "$(grep -v '^$' "$BENCH_DIR/$t.err" | tail -2 | tr '\n' ' ')" >&2
	done
	run=$((run + 1))
done
echo "  capture: $(tail -1 "$BENCH_DIR/cap.err")" >&2
echo "  callgrind: $(grep 'refs:' "$BENCH_DIR/cg.err")" >&2
echo "  ixbare: $(sed -n 's/^total: //p' "$BENCH_DIR/bare.out")" >&2
echo "  peak RSS KiB: capture $rss_cap, ixbare $rss_bare, index -j 1" \
    "$rss_j1, -j 2 $rss_j2, hot $rss_hot, callgrind $rss_cg" >&2

bytes=$(sed -n 's/^total: \([0-9]*\) bytes.*/\1/p' "$BENCH_DIR/bare.out")
mib=$((bytes / 1048576))
rate() { awk -v b="$bytes" -v s="$1" 'BEGIN { printf "%.2f", b / s / 1e6 }'; }
what="gzip -6 8 MiB valgrind capture ($mib MiB PT)"
result "index -j 1 --decoder fast, $what, wall" MB/s "$(rate "$j1_wall")" \
    "ixbare -a decode loop, wall" "$(rate "$bare_wall")" higher 2.0
result "index -j 1 --decoder fast, $what, CPU" MB/CPU-s "$(rate "$j1_cpu")" \
    "ixbare -a whole process, CPU" "$(rate "$bare_cpu")" higher 2.0
result "index -j 2 against -j 1, --decoder fast, $what, wall" MB/s \
    "$(rate "$j2_wall")" "index -j 1 --decoder fast" "$(rate "$j1_wall")" \
    higher 1.8
result "index -j 2 against -j 1, --decoder fast, $what, CPU" MB/CPU-s \
    "$(rate "$j2_cpu")" "index -j 1 --decoder fast" "$(rate "$j1_cpu")" \
    higher -
for t in j1:"index -j 1" j2:"index -j 2" cap:"capture" hot:"hot"; do
	eval "v=\$rss_${t%%:*}"
	result "peak RSS ${t#*:}, $what" KiB "$v" "issue 29 limit 512 MB" \
	    500000 lower 1.00
done
result "capture + index -j 1 + hot, gzip -6 8 MiB, CPU user+sys of each process tree" \
    CPU-s "$e2e_cpu" "valgrind --tool=callgrind, same command" "$cg_cpu" \
    lower 1.00

# Whether hot's top 10 functions are callgrind's (no goal): one more
# callgrind run with a profile, callgrind_annotate's top 10 by Ir (self
# cost) against the last round's `hot -n 10`, names in both counted.
# callgrind_annotate's lines are "IR (PCT%)  FILE:FUNCTION [OBJECT]"; a
# function whose lines span several source files is summed; one without
# a symbol (FUNCTION 0x...) is named as hot names it, OBJECT's base name
# + 0x offset.
valgrind --tool=callgrind --callgrind-out-file="$BENCH_DIR/cg.prof" \
    gzip -6 -c "$input" > /dev/null 2> "$BENCH_DIR/cgprof.err" || {
	echo "bench_e2e: callgrind with a profile failed:" \
	    "$(tail -3 "$BENCH_DIR/cgprof.err")" >&2
	exit 1
}
callgrind_annotate --auto=no --threshold=100 "$BENCH_DIR/cg.prof" |
    awk '
/file:function/ { on = 1; next }
on && /^ *[0-9,]+ +\( *[0-9.]+%\) / {
	ir = $1
	gsub(",", "", ir)
	line = $0
	sub(/^ *[0-9,]+ +\( *[0-9.]+%\) +/, "", line)
	obj = ""
	if (match(line, / \[[^ ]*\]$/)) {
		obj = substr(line, RSTART + 2, RLENGTH - 3)
		line = substr(line, 1, RSTART - 1)
	}
	fn = substr(line, index(line, ":") + 1)
	if (obj == "")
		obj = objof[fn]
	else
		objof[fn] = obj
	if (fn ~ /^0x[0-9a-fA-F]+$/) {
		base = obj
		sub(/.*\//, "", base)
		h = tolower(substr(fn, 3))
		sub(/^0+/, "", h)
		fn = base "+0x" (h == "" ? "0" : h)
	}
	sum[fn] += ir
}
END { for (f in sum) printf "%.0f\t%s\n", sum[f], f }' |
    sort -t "$(printf '\t')" -k1,1nr | head -n 10 > "$BENCH_DIR/cg.top"
tail -n +2 "$BENCH_DIR/hot.out" | cut -f 1,3 | head -n 10 > "$BENCH_DIR/hot.top"
ncg=$(wc -l < "$BENCH_DIR/cg.top")
nhot=$(wc -l < "$BENCH_DIR/hot.top")
if [ "$ncg" -ne 10 ] || [ "$nhot" -ne 10 ]; then
	echo "bench_e2e: expected 10 functions from callgrind_annotate and" \
	    "from hot, got $ncg and $nhot" >&2
	exit 1
fi
cut -f 2 "$BENCH_DIR/cg.top" > "$BENCH_DIR/cg.names"
both=$(cut -f 1 "$BENCH_DIR/hot.top" | grep -c -F -x -f "$BENCH_DIR/cg.names" || true)
echo "  top 10, callgrind (Ir) | hot (instructions):" >&2
paste "$BENCH_DIR/cg.top" "$BENCH_DIR/hot.top" | sed 's/^/    /' >&2
result "hot's top 10 functions in callgrind_annotate's top 10, gzip -6 8 MiB" \
    functions "$both" "callgrind_annotate top 10 by Ir" 10 higher -
# The databases (about 160 MB each) and the profile are not kept.
rm -f "$j1" "$j2" "$BENCH_DIR/cg.prof"
