#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Database size benchmark (issue 18 items 1, 4 and 6): the database
# `hwtrace index` writes against its archive, on valgrind captures of
# gzip -6 of 1 MiB and of 8 MiB of text and of a python3 loop; the bytes
# per call of the calls table (its pages, its symbol index and any SQL
# rows, from SQLite's dbstat); the peak RSS of indexing the largest.  Sizes
# do not vary from run to run: one run each.  Protocol: tests/bench/run.sh.
#
# Goals: the database at most 10 times the archive, calls at most 16 bytes
# a call, peak RSS under 512 MiB.  Rows: OURS against the limit, "lower is
# better", goal 1.00 (ratio = limit / ours).

set -eu
ext="$HWTRACE_BUILD/hwtrace_sqlite"

. "$HWTRACE_SRC/tests/bench/lib.sh"

# The text: C headers, the same bytes on a given system.
bench_text
text="$BENCH_DIR/text-8m"
head -c 1048576 "$text" > "$BENCH_DIR/text-1m"

# measure NAME WHAT: index NAME.hwtrace, print its rows.
measure() {
	mn=$1 what=$2
	db="$BENCH_DIR/$mn.db"
	rm -f "$db"
	/usr/bin/time -f '%M' -o "$BENCH_DIR/$mn.rss" "$HWTRACE" index -q \
	    -o "$db" "$BENCH_DIR/$mn.hwtrace" 2> "$BENCH_DIR/$mn.ixerr" ||
	    { echo "bench_dbsize: index of $mn failed: $(tail -2 "$BENCH_DIR/$mn.ixerr")" >&2; return 1; }
	ar=$(stat -c %s "$BENCH_DIR/$mn.hwtrace")
	dbb=$(stat -c %s "$db")
	set -- $(sqlite3 -batch -separator ' ' -cmd ".load $ext" "$db" \
	    "SELECT (SELECT count(*) FROM calls), (SELECT sum(pgsize) FROM \
	    dbstat WHERE name LIKE 'calls%')")
	ncalls=$1 cbytes=$2
	echo "  $mn: archive $ar bytes, database $dbb bytes," \
	    "$ncalls calls in $cbytes bytes; largest tables:" \
	    "$(sqlite3 "$db" "SELECT group_concat(name || ' ' || s, ', ') FROM \
	    (SELECT name, sum(pgsize) AS s FROM dbstat GROUP BY name ORDER BY \
	    s DESC LIMIT 5)")" >&2
	awk -v d="$dbb" -v a="$ar" -v w="$what" 'BEGIN {
		printf "result\tdatabase size, %s\tMB\t%.2f\t10 x the archive\t%.2f\tlower\t1.00\n",
		    w, d / 1e6, 10 * a / 1e6 }'
	awk -v b="$cbytes" -v n="$ncalls" -v w="$what" 'BEGIN {
		printf "result\tcalls per call, %s\tbytes\t%.2f\tissue 18 limit\t16\tlower\t1.00\n",
		    w, (n > 0 ? b / n : 0) }'
	rm -f "$db"
}

rc=0
if capture gzip1m gzip -6 -c "$BENCH_DIR/text-1m"; then
	measure gzip1m "gzip -6 1 MiB text" || rc=1
fi
if capture gzip8m gzip -6 -c "$text"; then
	measure gzip8m "gzip -6 8 MiB text" || rc=1
	printf 'result\tpeak RSS of index, gzip -6 8 MiB\tKiB\t%s\t512 MiB limit\t524288\tlower\t1.00\n' \
	    "$(cat "$BENCH_DIR/gzip8m.rss")"
fi
bench_python || rc=1
exit $rc
