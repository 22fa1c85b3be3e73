#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# hwtrace report (issue 31): the time to write the page of a run already
# indexed, and the page's size, on valgrind captures of gzip -6 of 8 MiB
# of text and of a python3 loop (the captures bench_dbsize makes).  The
# time is compared with indexing the same archive (-j 2), the page's size
# with the "few MB" hwtrace-report(1) promises (5 MB).  Protocol:
# tests/bench/run.sh.

set -eu

. "$HWTRACE_SRC/tests/bench/lib.sh"

# The text: C headers, the same bytes on a given system.
bench_text
text="$BENCH_DIR/text-8m"

# secs FILE CMD...: run CMD, its wall seconds into FILE.
secs() {
	f=$1
	shift
	/usr/bin/time -f '%e' -o "$f" "$@"
}

# measure NAME WHAT: index NAME.hwtrace (timed), write its page best of
# BENCH_RUNS times; print the rows.
measure() {
	mn=$1 what=$2
	db="$BENCH_DIR/$mn.db"
	page="$BENCH_DIR/$mn.html"
	rm -f "$db"
	secs "$BENCH_DIR/$mn.ixt" "$HWTRACE" index -q -j 2 -o "$db" \
	    "$BENCH_DIR/$mn.hwtrace" 2> "$BENCH_DIR/$mn.ixerr" ||
	    { echo "bench_report: index of $mn failed: $(tail -2 "$BENCH_DIR/$mn.ixerr")" >&2; return 1; }
	best=
	i=0
	while [ "$i" -lt "$BENCH_RUNS" ]; do
		secs "$BENCH_DIR/$mn.rpt" "$HWTRACE" report -o "$page" "$db" \
		    2> "$BENCH_DIR/$mn.rperr" ||
		    { echo "bench_report: report of $mn failed: $(tail -2 "$BENCH_DIR/$mn.rperr")" >&2; return 1; }
		t=$(tail -n 1 "$BENCH_DIR/$mn.rpt")
		best=$(awk -v a="${best:-$t}" -v b="$t" 'BEGIN { print (b < a ? b : a) }')
		i=$((i + 1))
	done
	size=$(stat -c %s "$page")
	echo "  $mn: index $(tail -n 1 "$BENCH_DIR/$mn.ixt") s, report $best s," \
	    "page $size bytes" >&2
	printf 'result\treport time, %s\ts\t%s\tindex -j 2\t%s\tlower\t-\n' \
	    "$what" "$best" "$(tail -n 1 "$BENCH_DIR/$mn.ixt")"
	awk -v s="$size" -v w="$what" 'BEGIN {
		printf "result\treport size, %s\tMB\t%.3f\thwtrace-report(1) few MB\t5\tlower\t1.00\n",
		    w, s / 1e6 }'
	rm -f "$db"
}

rc=0
if capture gzip8m gzip -6 -c "$text"; then
	measure gzip8m "gzip -6 8 MiB text" || rc=1
fi
bench_python || rc=1
exit $rc
