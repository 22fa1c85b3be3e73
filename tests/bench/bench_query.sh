#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# bench_query.sh: hwtrace query on a database of >= 10M executed blocks
# (issue 5: summary, last -n 100, func X and calls for one thread under
# 100 ms each, coverage under 1 s; issue 18 item 5: func under 100 ms, bt
# and a narrow timeline too).  The database is synthesized by
# tests/query/mkdb.c following hwtrace-db(5) (64 functions called in turn,
# 1.4M calls, 10M blocks, 30M instructions; calls written through the
# column store as hwtrace index writes them) and cached in BENCH_DIR.
#
# Then a real one (issue 18 item 5): the valgrind capture of gzip -6 of
# 32 MiB of executables (cat /usr/bin/*), about 26M calls, indexed once
# into BENCH_DIR: func of its busiest function (the first 100 rows: the
# whole is millions), of the busiest with at most 10,000 calls (a
# function of gzip's own, as fill_window or deflate), bt and a 10 us
# timeline.
#
# Each case is run BENCH_RUNS times; the best wall-clock time and the best
# CPU time (user + system, from getrusage) are reported against the goal.
# On this shared 2-CPU machine the wall clock includes waiting for a CPU;
# the CPU time is what the query itself costs.
#
# `calls` of a whole thread is 1.4M rows (200 MB of table): no tool prints
# that in 100 ms, so what is measured against the goal is how soon it
# answers, the first 100 rows through `| head -n 100` (the command streams
# and ends by SIGPIPE when head exits); the whole output is reported as
# rows per second and as the peak of the process's anonymous (heap) memory,
# which streaming keeps constant; -n and --depth are the bounded forms.

set -u
: "${HWTRACE:?}" "${BENCH_PROGS:?}" "${BENCH_DIR:?}" "${BENCH_RUNS:=3}"

. "$HWTRACE_SRC/tests/bench/lib.sh"
q10m_db bench_query

cat > "$BENCH_DIR/measure.py" <<'X'
# measure.py RUNS HEAD ARGS...: best wall and CPU time of ARGS over RUNS
# runs, its output read through a pipe and counted.  HEAD > 0: the time to
# the first HEAD lines, after which the pipe is closed (as head(1) does);
# the command may then end by SIGPIPE.  Prints "wall-ms cpu-ms lines
# peak-anon-kB".
import os, resource, subprocess, sys, threading, time
runs, head, args = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
best_wall = best_cpu = None
peak = 0
def watch(p, box):
    # Peak RssAnon: the heap, not the database pages mapped from the cache.
    path = "/proc/%d/status" % p.pid
    while p.poll() is None:
        try:
            for l in open(path):
                if l.startswith("RssAnon:"):
                    box[0] = max(box[0], int(l.split()[1]))
        except OSError:
            break
        time.sleep(0.005)
for _ in range(runs):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    box = [0]
    w = threading.Thread(target=watch, args=(p, box))
    w.start()
    lines = 0
    t1 = None
    while True:
        buf = p.stdout.read1(1 << 20) if head == 0 else p.stdout.readline()
        if not buf:
            break
        lines += buf.count(b"\n")
        if head > 0 and lines >= head:
            t1 = time.monotonic()
            break
    p.stdout.close()
    err = p.stderr.read()
    rc = p.wait()
    if t1 is None:
        t1 = time.monotonic()
    w.join()
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if rc != 0 and not (head > 0 and rc == -13):
        sys.stderr.write(err.decode())
        sys.exit(1)
    wall = (t1 - t0) * 1000
    cpu = (r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime) * 1000
    best_wall = wall if best_wall is None else min(best_wall, wall)
    best_cpu = cpu if best_cpu is None else min(best_cpu, cpu)
    peak = max(peak, box[0])
print("%.1f %.1f %d %d" % (best_wall, best_cpu, lines, peak))
X

# run HEAD ARGS...: sets wall cpu lines peak
run()
{
	head=$1
	shift
	set -- $(python3 "$BENCH_DIR/measure.py" "$BENCH_RUNS" "$head" \
	    "$HWTRACE" query "$db" "$@") || exit 1
	wall=$1 cpu=$2 lines=$3 peak=$4
}

# case NAME GOAL-MS ARGS...
case_()
{
	name=$1 goal=$2
	shift 2
	run 0 "$@"
	echo "bench_query: $name: $wall ms wall, $cpu ms CPU, $lines lines," \
	    "peak heap $peak kB" >&2
	if [ "$goal" = "-" ]; then
		printf 'result\t%s (wall)\tms\t%s\t-\t-\tlower\t-\n' "$name" "$wall"
		printf 'result\t%s (CPU)\tms\t%s\t-\t-\tlower\t-\n' "$name" "$cpu"
	else
		printf 'result\t%s (wall)\tms\t%s\tgoal\t%s\tlower\t1\n' "$name" \
		    "$wall" "$goal"
		printf 'result\t%s (CPU)\tms\t%s\tgoal\t%s\tlower\t1\n' "$name" \
		    "$cpu" "$goal"
	fi
}

case_ "summary, 10M blocks" 100 summary
case_ "last -n 100" 100 last -n 100
case_ "func w3 (19842 calls)" 100 func w3
case_ "bt, 10M blocks" 100 bt
case_ "timeline, 10 us window" 100 timeline --from 50000000ns --to 50010000ns

# calls --thread 1: the first 100 rows through a pipe closed after them.
run 100 calls --thread 1
echo "bench_query: calls --thread 1 | head -n 100: $wall ms wall," \
    "$cpu ms CPU" >&2
printf 'result\t%s (wall)\tms\t%s\tgoal\t100\tlower\t1\n' \
    "calls --thread 1 | head -n 100" "$wall"
printf 'result\t%s (CPU)\tms\t%s\tgoal\t100\tlower\t1\n' \
    "calls --thread 1 | head -n 100" "$cpu"
case_ "calls --thread 1 -n 100" 100 calls --thread 1 -n 100
case_ "calls --thread 1 --depth 0" 100 calls --thread 1 --depth 0

# The whole thread: rows per second, against the 2.5 us a row (400,000
# rows/s) of the first version, and the peak heap.
run 0 calls --thread 1
rows=$((lines - 1))
echo "bench_query: calls --thread 1 (all): $rows rows, $wall ms wall," \
    "$cpu ms CPU, peak heap $peak kB" >&2
awk -v r="$rows" -v w="$wall" -v c="$cpu" -v p="$peak" 'BEGIN {
	printf "result\tcalls --thread 1, all %d rows (wall)\trows/s\t%.0f\tv1 2.5us/row\t400000\thigher\t-\n", r, r / (w / 1000)
	printf "result\tcalls --thread 1, all %d rows (CPU)\trows/s\t%.0f\tv1 2.5us/row\t400000\thigher\t-\n", r, r / (c / 1000)
	printf "result\tcalls --thread 1, all (peak heap)\tMB\t%.1f\t-\t-\tlower\t-\n", p / 1024
}'

case_ "coverage" 1000 coverage
case_ "hot" - hot
case_ "tree --depth 1" - tree --depth 1
case_ "insns --from 5000000 --count 100" - insns --thread 1 --from 5000000 --count 100

# The gzip -6 32 MiB capture, indexed once (again when hwtrace is newer).
gz=$BENCH_DIR/gz32
if [ ! -s "$gz.hwtrace" ] || [ "$HWTRACE" -nt "$gz.hwtrace" ]; then
	echo "bench_query: capturing gzip -6 of 32 MiB (valgrind)" >&2
	cat /usr/bin/* 2>/dev/null | head -c 33554432 > "$gz.in" || true
	rm -f "$gz.hwtrace" "$gz.db"
	"$HWTRACE" capture --force --source valgrind -o "$gz.hwtrace" -- \
	    gzip -6 -c "$gz.in" > /dev/null 2> "$gz.err" ||
	    { echo "bench_query: capture failed: $(head -3 "$gz.err")" >&2; exit 1; }
	rm -f "$gz.in"
fi
if [ ! -s "$gz.db" ] || [ "$HWTRACE" -nt "$gz.db" ]; then
	echo "bench_query: indexing gzip -6 of 32 MiB" >&2
	rm -f "$gz.db"
	"$HWTRACE" index -q -o "$gz.db" "$gz.hwtrace" 2> "$gz.err" ||
	    { echo "bench_query: index failed: $(tail -2 "$gz.err")" >&2; exit 1; }
fi
db=$gz.db
# Calls per function, from the symbol copy's page sizes (hwtrace-db(5)).
set -- $(sqlite3 -separator ' ' "$db" "SELECT s.name, c.n FROM (SELECT \
    symbol, sum(n) AS n FROM calls_bysym GROUP BY symbol) c JOIN symbols s \
    ON s.id = c.symbol ORDER BY c.n DESC, s.name LIMIT 1; SELECT s.name, \
    c.n FROM (SELECT symbol, sum(n) AS n FROM calls_bysym GROUP BY symbol) \
    c JOIN symbols s ON s.id = c.symbol WHERE c.n <= 10000 ORDER BY c.n \
    DESC, s.name LIMIT 1")
busy=$1 nbusy=$2 typ=$3 ntyp=$4
run 100 func "$busy"
echo "bench_query: gzip 32 MiB: func $busy ($nbusy calls) | head -n 100:" \
    "$wall ms wall, $cpu ms CPU" >&2
printf 'result\t%s (wall)\tms\t%s\tgoal\t100\tlower\t1\n' \
    "gzip 32 MiB: func busiest ($nbusy calls) | head -n 100" "$wall"
printf 'result\t%s (CPU)\tms\t%s\tgoal\t100\tlower\t1\n' \
    "gzip 32 MiB: func busiest ($nbusy calls) | head -n 100" "$cpu"
case_ "gzip 32 MiB: func $typ ($ntyp calls)" 100 func "$typ"
case_ "gzip 32 MiB: bt" 100 bt
case_ "gzip 32 MiB: timeline, 10 us window" 100 timeline --from 5000000000ns \
    --to 5000010000ns
