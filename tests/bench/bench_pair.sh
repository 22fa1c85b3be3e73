#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# What a second busy CPU costs the first on this machine (no goal; the
# reference for E2 in docs/PERFORMANCE.md: `index -j 2` spends more CPU
# than `-j 1` for the same instructions).  pairspin runs alone on CPU 0,
# then as two copies at once on CPUs 0 and 1, alternating, best of
# $BENCH_RUNS; the value is one copy's CPU time (user + system, the mean
# of the two), against the copy alone.  Three loops: registers only,
# dependent random reads over 1 MiB and over 2 MiB (about the size of
# what `index` keeps hot: fpt's cache and memos, the stitcher's tables).
# Needs two CPUs, taskset and /usr/bin/time.  Protocol: tests/bench/run.sh.

set -eu
spin="$BENCH_PROGS/pairspin"
skip() { echo "bench_pair: skipped: $*" >&2; exit 0; }
[ -x "$spin" ] || { echo "bench_pair: $spin not built" >&2; exit 1; }
[ -x /usr/bin/time ] ||
    skip "/usr/bin/time (Debian's time package) is not installed"
command -v taskset > /dev/null 2>&1 || skip "taskset is not installed"
[ "$(nproc)" -ge 2 ] || skip "fewer than two CPUs"

# cpu FILE: the CPU seconds /usr/bin/time wrote into FILE.
cpu() { awk '{ printf "%.2f", $1 + $2 }' "$1"; }

# pair MIB N CASE: one result line.
pair() {
	best1=''
	best2=''
	r=0
	while [ "$r" -lt "$BENCH_RUNS" ]; do
		/usr/bin/time -f '%U %S' -o "$BENCH_DIR/t0" \
		    taskset -c 0 "$spin" "$1" "$2" > /dev/null
		one=$(cpu "$BENCH_DIR/t0")
		/usr/bin/time -f '%U %S' -o "$BENCH_DIR/t1" \
		    taskset -c 1 "$spin" "$1" "$2" > /dev/null &
		/usr/bin/time -f '%U %S' -o "$BENCH_DIR/t0" \
		    taskset -c 0 "$spin" "$1" "$2" > /dev/null
		wait
		two=$(awk -v a="$(cpu "$BENCH_DIR/t0")" \
		    -v b="$(cpu "$BENCH_DIR/t1")" \
		    'BEGIN { printf "%.2f", (a + b) / 2 }')
		echo "  $3: alone $one s, beside another $two s" \
		    "(load $(cut -d ' ' -f 1-3 /proc/loadavg))" >&2
		best1=$(awk -v a="$one" -v b="${best1:-$one}" \
		    'BEGIN { print (a < b ? a : b) }')
		best2=$(awk -v a="$two" -v b="${best2:-$two}" \
		    'BEGIN { print (a < b ? a : b) }')
		r=$((r + 1))
	done
	printf 'result\t%s\ts\t%s\tone copy alone\t%s\tlower\t-\n' \
	    "$3" "$best2" "$best1"
}

pair 0 600000000 "CPU of one of two copies at once, registers only"
pair 1 60000000 "CPU of one of two copies at once, random reads over 1 MiB"
pair 2 60000000 "CPU of one of two copies at once, random reads over 2 MiB"
