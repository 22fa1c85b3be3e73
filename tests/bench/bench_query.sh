#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# bench_query.sh: hwtrace query on a database of >= 10M executed blocks
# (issue 5: summary, last -n 100, func X and calls for one thread under
# 100 ms each, coverage under 1 s).  The database is synthesized by
# tests/query/mkdb.c following hwtrace-db(5) (64 functions called in turn,
# 1.4M calls, 10M blocks, 30M instructions) and cached in BENCH_DIR.
#
# Each case is run BENCH_RUNS times; the best wall-clock time and the best
# CPU time (user + system, from getrusage) are reported against the goal.
# On this shared 2-CPU machine the wall clock includes waiting for a CPU;
# the CPU time is what the query itself costs.

set -u
: "${HWTRACE:?}" "${BENCH_PROGS:?}" "${BENCH_DIR:?}" "${BENCH_RUNS:=3}"

db=$BENCH_DIR/q10m.db
if [ ! -f "$db" ]; then
	echo "bench_query: synthesizing $db (10M blocks)" >&2
	rm -f "$db.tmp"
	"$BENCH_PROGS/qmkdb" -s 10000000 "$db.tmp" >&2 &&
	    mv "$db.tmp" "$db" || exit 1
fi

cat > "$BENCH_DIR/measure.py" <<'X'
import os, resource, subprocess, sys, time
runs, args = int(sys.argv[1]), sys.argv[2:]
best_wall = best_cpu = None
for _ in range(runs):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    t1 = time.monotonic()
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        sys.stderr.write(p.stderr.decode())
        sys.exit(1)
    wall = (t1 - t0) * 1000
    cpu = (r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime) * 1000
    best_wall = wall if best_wall is None else min(best_wall, wall)
    best_cpu = cpu if best_cpu is None else min(best_cpu, cpu)
print("%.1f %.1f %d" % (best_wall, best_cpu, p.stdout.count(b"\n")))
X

# case NAME GOAL-MS ARGS...
case_()
{
	name=$1 goal=$2
	shift 2
	set -- $(python3 "$BENCH_DIR/measure.py" "$BENCH_RUNS" "$HWTRACE" \
	    query "$db" "$@") || exit 1
	echo "bench_query: $name: $1 ms wall, $2 ms CPU, $3 lines" >&2
	if [ "$goal" = "-" ]; then
		printf 'result\t%s (wall)\tms\t%s\t-\t-\tlower\t-\n' "$name" "$1"
		printf 'result\t%s (CPU)\tms\t%s\t-\t-\tlower\t-\n' "$name" "$2"
	else
		printf 'result\t%s (wall)\tms\t%s\tgoal\t%s\tlower\t1\n' "$name" \
		    "$1" "$goal"
		printf 'result\t%s (CPU)\tms\t%s\tgoal\t%s\tlower\t1\n' "$name" \
		    "$2" "$goal"
	fi
}

case_ "summary, 10M blocks" 100 summary
case_ "last -n 100" 100 last -n 100
case_ "func w3 (19842 calls)" 100 func w3
case_ "calls --thread 1 -n 100" 100 calls --thread 1 -n 100
case_ "calls --thread 1 --depth 0" 100 calls --thread 1 --depth 0
case_ "calls --thread 1 (all 1.4M)" - calls --thread 1
case_ "coverage" 1000 coverage
case_ "hot" - hot
case_ "tree --depth 1" - tree --depth 1
case_ "insns --from 5000000 --count 100" - insns --thread 1 --from 5000000 --count 100
