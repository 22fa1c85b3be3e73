#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# run.sh BUILD-DIR: run every tests/bench/bench_*.sh in turn and print one
# table of side-by-side ratios (`make bench`).
#
# The protocol between this runner and a benchmark script:
# - the script runs with these variables set: HWTRACE (the binary),
#   HWTRACE_BUILD, HWTRACE_SRC, BENCH_PROGS (where bench programs are
#   built, $HWTRACE_BUILD/bench), BENCH_DIR (a scratch directory of its
#   own, kept between runs so that big inputs can be cached there) and
#   BENCH_RUNS (how many times to repeat each measurement; report the best
#   or the median);
# - it prints its progress and details on stderr and one line per
#   measurement on stdout, tab-separated:
#     result CASE UNIT OURS REFERENCE REF-VALUE BETTER GOAL
#   CASE says what was measured ("write 256 MiB PT"), UNIT the unit of both
#   values ("MB/s"), OURS hwtrace's value, REFERENCE what it is compared
#   with ("zstd -T2 -3"), BETTER "higher" or "lower", GOAL the smallest
#   acceptable ratio or "-"; the ratio is OURS/REF for "higher" and
#   REF/OURS for "lower", so that above 1 always means hwtrace does better;
# - it exits 0, or non-zero when it could not measure (a failure).
# A ratio under its goal is reported ("BELOW") but does not fail the run:
# benchmarks are not tests.  The table is also written to
# BUILD-DIR/bench/results.txt.

set -u
[ $# -eq 1 ] || { echo "usage: run.sh build-dir" >&2; exit 2; }
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$1" && pwd) || exit 1
export HWTRACE="$build/hwtrace" HWTRACE_BUILD="$build" HWTRACE_SRC="$src"
export BENCH_PROGS="$build/bench" BENCH_RUNS="${BENCH_RUNS:-3}"
results="$build/bench/results.txt"
raw="$build/bench/results.raw"
mkdir -p "$build/bench" || exit 1
: > "$raw"

rc=0
for script in "$src"/tests/bench/bench_*.sh; do
	[ -e "$script" ] || continue
	name=$(basename "$script" .sh)
	name=${name#bench_}
	case "$name" in
	*${BENCH_ONLY:-}*) ;;
	*) continue ;;
	esac
	export BENCH_DIR="$build/bench/work/$name"
	mkdir -p "$BENCH_DIR" || exit 1
	echo "bench: $name (best of $BENCH_RUNS)" >&2
	if ! sh "$script" > "$BENCH_DIR/stdout"; then
		echo "bench: $name: FAILED (exit status $?)" >&2
		rc=1
	fi
	grep '^result	' "$BENCH_DIR/stdout" | sed "s/^result	/$name	/" >> "$raw"
done

{
	echo "hwtrace $(git -C "$src" describe --always --dirty 2>/dev/null)" \
	    "on $(uname -n), $(nproc) CPUs, $(date -u '+%Y-%m-%d %H:%M UTC')," \
	    "best of $BENCH_RUNS"
	awk -F '\t' '
	BEGIN {
		printf "%-10s %-34s %10s  %-24s %8s  %s\n", "BENCHMARK", "CASE",
		    "HWTRACE", "REFERENCE", "RATIO", "GOAL"
	}
	NF == 8 {
		ours = $4 + 0; ref = $6 + 0
		if ($7 == "lower")
			ratio = ours > 0 ? ref / ours : 0
		else
			ratio = ref > 0 ? ours / ref : 0
		if ($8 == "-")
			goal = "-"
		else
			goal = sprintf(">= %.2f %s", $8, ratio >= $8 ? "ok" : "BELOW")
		printf "%-10s %-34s %10s  %-24s %8.3f  %s\n", $1,
		    $2 " (" $3 ")", $4, $5 " " $6, ratio, goal
		next
	}
	{ printf "bench: malformed result line: %s\n", $0 > "/dev/stderr" }
	' "$raw"
} | tee "$results"
exit $rc
