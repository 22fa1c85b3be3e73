#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# bench_bounded.sh: export --folded and tree --depth 1, the two answers
# issue 29 item 6 found unbounded or slow (goal: under 1 s, within a
# constant heap), on the 10M-block synthetic database of bench_query.sh
# (tests/query/mkdb.c -s 10000000: 1.4 M calls) and on a valgrind capture
# of gzip -6 (8 MiB of executables by default, BENCH_BOUNDED_MIB to change:
# 8.9 M calls at 8 MiB, about 26 M at 32 MiB), both cached in BENCH_DIR.
#
# Each case: the best wall and CPU time (user + system, /usr/bin/time)
# of BENCH_RUNS runs, the peak resident set (which counts the database
# pages SQLite maps) and the peak anonymous memory, the heap, sampled from
# /proc every 10 ms.

set -u
: "${HWTRACE:?}" "${BENCH_PROGS:?}" "${BENCH_DIR:?}" "${BENCH_RUNS:=3}"
: "${BENCH_BOUNDED_MIB:=8}"

[ -x /usr/bin/time ] || { echo "bench_bounded: needs /usr/bin/time" >&2; exit 1; }
. "$HWTRACE_SRC/tests/bench/lib.sh"
q10m_db bench_bounded
gz=$BENCH_DIR/gz$BENCH_BOUNDED_MIB
if [ ! -s "$gz.hwtrace" ]; then
	echo "bench_bounded: capturing gzip -6 of $BENCH_BOUNDED_MIB MiB" >&2
	cat /usr/bin/* 2>/dev/null |
	    head -c $((BENCH_BOUNDED_MIB * 1048576)) > "$gz.in" || true
	"$HWTRACE" capture --force --source valgrind -o "$gz.hwtrace" -- \
	    gzip -6 -c "$gz.in" > /dev/null 2> "$gz.err" ||
	    { echo "bench_bounded: capture failed: $(head -3 "$gz.err")" >&2
	    exit 1; }
	rm -f "$gz.in" "$gz.db"
fi
if [ ! -s "$gz.db" ] || [ "$HWTRACE" -nt "$gz.db" ]; then
	echo "bench_bounded: indexing $gz.hwtrace" >&2
	rm -f "$gz.db"
	"$HWTRACE" index -q -o "$gz.db" "$gz.hwtrace" 2> "$gz.err" ||
	    { echo "bench_bounded: index failed: $(tail -2 "$gz.err")" >&2
	    exit 1; }
fi

# run NAME DB ARGS...: one result line each for wall, CPU, peak RSS and
# peak heap.
run()
{
	name=$1 d=$2
	shift 2
	wall= cpu= rss=0 anon=0 i=0
	while [ $i -lt "$BENCH_RUNS" ]; do
		/usr/bin/time -f '%e %U %S %M' -o "$BENCH_DIR/time" \
		    "$HWTRACE" query "$d" "$@" > /dev/null 2> "$BENCH_DIR/err" &
		p=$!
		a=0
		while kill -0 $p 2> /dev/null; do
			for c in $(pgrep -P $p); do
				v=$(awk '/^RssAnon:/ { print $2 }' \
				    /proc/$c/status 2> /dev/null)
				[ -n "$v" ] && [ "$v" -gt "$a" ] && a=$v
			done
			sleep 0.01
		done
		wait $p || { echo "bench_bounded: $name failed:" \
		    "$(cat "$BENCH_DIR/err")" >&2; return 1; }
		read -r e u s m < "$BENCH_DIR/time"
		w=$(awk -v e="$e" 'BEGIN { printf "%d", e * 1000 }')
		c=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%d", (u + s) * 1000 }')
		[ -z "$wall" ] || [ "$w" -lt "$wall" ] && wall=$w
		[ -z "$cpu" ] || [ "$c" -lt "$cpu" ] && cpu=$c
		[ "$m" -gt "$rss" ] && rss=$m
		[ "$a" -gt "$anon" ] && anon=$a
		i=$((i + 1))
	done
	echo "bench_bounded: $name: $wall ms wall, $cpu ms CPU, peak RSS" \
	    "$rss kB, peak heap $anon kB" >&2
	printf 'result\t%s (wall)\tms\t%s\tgoal\t1000\tlower\t1\n' "$name" "$wall"
	printf 'result\t%s (CPU)\tms\t%s\tgoal\t1000\tlower\t1\n' "$name" "$cpu"
	printf 'result\t%s (peak RSS)\tMB\t%s\t-\t-\tlower\t-\n' "$name" \
	    "$((rss / 1024))"
	printf 'result\t%s (peak heap)\tMB\t%s\t-\t-\tlower\t-\n' "$name" \
	    "$((anon / 1024))"
}

out=$BENCH_DIR/folded.txt
run "tree --depth 1, 10M blocks" "$db" tree --depth 1 || exit 1
run "export --folded, 10M blocks" "$db" export --folded "$out" || exit 1
run "tree --depth 1, gzip $BENCH_BOUNDED_MIB MiB" "$gz.db" tree --depth 1 ||
    exit 1
run "export --folded, gzip $BENCH_BOUNDED_MIB MiB" "$gz.db" export \
    --folded "$out" || exit 1
rm -f "$out"
