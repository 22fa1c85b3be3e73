#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# CoreSight indexing benchmark (issue 6 item 7): `hwtrace index -j 1` of
# the largest ETMv4 snapshot of the corpus (bugfix-exact-match, 1 MiB of
# formatted trace, 1.7 million instruction ranges) against a bare OpenCSD
# decode loop over the same buffer and memory (csbare: deformat and decode
# to generic elements, nothing stored), wall time, best of $BENCH_RUNS,
# alternating; beside it the CPU time (user + sys) of the best run of each,
# so that the ratio can be judged on a loaded machine, and the load
# average.  Protocol: tests/bench/run.sh.

set -eu
. "$HWTRACE_SRC/tests/bench/lib.sh"
snap="$HWTRACE_SRC/../shared/corpus/opencsd/snapshots/bugfix-exact-match"
[ -d "$snap" ] || { echo "bench_cs: corpus not found at $snap" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "bench_cs: /usr/bin/time is missing" >&2; exit 1; }
bare="$BENCH_PROGS/csbare"
cpu() { awk '{ printf "%d", ($1 + $2) * 1000 }' "$BENCH_DIR/time"; }
"$HWTRACE" import "$snap" -o "$BENCH_DIR/cs.hwtrace.new"
mv "$BENCH_DIR/cs.hwtrace.new" "$BENCH_DIR/cs.hwtrace"
bi= bb= ci= cb=
run=0
while [ "$run" -lt "$BENCH_RUNS" ]; do
	t=$(now)
	/usr/bin/time -f '%U %S' -o "$BENCH_DIR/time" \
	    "$HWTRACE" index -q -j 1 -o "$BENCH_DIR/cs.db" "$BENCH_DIR/cs.hwtrace"
	d=$(( $(now) - t ))
	if [ -z "$bi" ] || [ "$d" -lt "$bi" ]; then bi=$d; ci=$(cpu); fi
	/usr/bin/time -f '%U %S' -o "$BENCH_DIR/time" \
	    "$bare" "$BENCH_DIR/cs.hwtrace" > "$BENCH_DIR/bare.out" 2>"$BENCH_DIR/bare.err"
	d=$(awk '{ s += $2 } END { print s }' "$BENCH_DIR/bare.out")
	if [ -z "$bb" ] || [ "$d" -lt "$bb" ]; then bb=$d; cb=$(cpu); fi
	run=$((run + 1))
done
bytes=$(awk '{ s += $1 } END { print s }' "$BENCH_DIR/bare.out")
echo "  $(cat "$BENCH_DIR/bare.err"); index $((bi / 1000000)) ms (CPU $ci ms), bare decode $((bb / 1000000)) ms (csbare process CPU $cb ms, archive and image reads included); load: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
mbs() { awk -v b="$bytes" -v ns="$1" 'BEGIN { printf "%.2f", b * 1000 / ns }'; }
printf 'result\tindex -j 1, CoreSight ETMv4 %s bytes\tMB/s\t%s\tbare OpenCSD decode loop\t%s\thigher\t0.50\n' \
    "$bytes" "$(mbs "$bi")" "$(mbs "$bb")"
printf 'result\tindex -j 1 CPU vs csbare process CPU\tms\t%s\tcsbare CPU\t%s\tlower\t-\n' \
    "$ci" "$cb"
