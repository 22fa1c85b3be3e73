#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# bench_lazy.sh: time to the first answer on an archive never indexed
# (issue 18 item 3): `hwtrace query ARCHIVE last` and `bt` decode only the
# end of each thread (hwtrace-query(1), lazy verbs), against the goal of
# 2 s and against what the same answer cost before, the full index of the
# archive followed by the question, measured in the same run.  Inputs:
# gzip -6 of 1 MiB and of 8 MiB of executables under the Valgrind source
# (about 10 and 70 MB of PT), captured once per bench directory.  The
# full index of the 8 MiB capture takes over a minute here: it is run
# BENCH_LAZY_BIG_RUNS times (default 1), the rest BENCH_RUNS times; best
# wall clock of each.  Protocol: tests/bench/run.sh.

set -u
: "${HWTRACE:?}" "${BENCH_DIR:?}" "${BENCH_RUNS:=3}"
bigruns=${BENCH_LAZY_BIG_RUNS:-1}
. "$HWTRACE_SRC/tests/bench/lib.sh"

# timed VAR-WALL VAR-CPU CMD...: run CMD; the best wall and CPU (user +
# system) milliseconds so far into VAR-WALL and VAR-CPU.
timed() {
	w=$1 c=$2
	shift 2
	/usr/bin/time -f '%e %U %S' -o "$BENCH_DIR/time" "$@" || return 1
	best "$w" "$(awk '{ printf "%.0f", $1 * 1000 }' "$BENCH_DIR/time")"
	best "$c" "$(awk '{ printf "%.0f", ($2 + $3) * 1000 }' "$BENCH_DIR/time")"
}

# capture NAME BYTES: gzip -6 of BYTES of executables under Valgrind.
capture() {
	gz="$BENCH_DIR/$1.hwtrace"
	if [ ! -s "$gz" ] || [ "$HWTRACE" -nt "$gz" ]; then
		cat /usr/bin/* 2>/dev/null | head -c "$2" > "$BENCH_DIR/$1.in" || true
		echo "  capturing gzip -6 of $2 bytes with the valgrind source" >&2
		rm -f "$gz"
		"$HWTRACE" capture --force --source valgrind -o "$gz" -- \
		    gzip -6 -c "$BENCH_DIR/$1.in" > /dev/null \
		    2> "$BENCH_DIR/$1.err" || rm -f "$gz"
	fi
	[ -s "$gz" ]
}

# measure NAME RUNS LABEL: lazy last, lazy bt (cold), bt again (from the
# partial cache), and the full index + last, on capture NAME.
measure() {
	name=$1 runs=$2 label=$3
	gz="$BENCH_DIR/$name.hwtrace"
	unset t_last t_bt t_again t_full c_last c_bt c_again c_ix c_full
	pt=$("$HWTRACE" info "$gz" | awk '/^  stream .*intel-pt/ { s += $(NF - 1) } END { printf "%.0f", s / 1048576 }')
	i=1
	while [ "$i" -le "$runs" ]; do
		rm -f "$gz.db" "$gz.db.tail"
		timed t_last c_last sh -c '"$0" query "$1" last > "$2"' \
		    "$HWTRACE" "$gz" "$BENCH_DIR/last.out" || return 1
		timed t_again c_again sh -c '"$0" query "$1" bt > "$2"' \
		    "$HWTRACE" "$gz" "$BENCH_DIR/bt.out" || return 1
		rm -f "$gz.db.tail"
		timed t_bt c_bt sh -c '"$0" query "$1" bt > /dev/null' \
		    "$HWTRACE" "$gz" || return 1
		i=$((i + 1))
	done
	i=1
	while [ "$i" -le "$runs" ]; do
		rm -f "$gz.db" "$gz.db.tail"
		unset tw cw
		timed tw cw "$HWTRACE" index -q -o "$gz.db" "$gz" || return 1
		timed tw2 cw2 sh -c '"$0" query "$1" last > "$2"' \
		    "$HWTRACE" "$gz" "$BENCH_DIR/full.out" || return 1
		best t_full $((tw + tw2))
		best c_full $((cw + cw2))
		unset tw2 cw2
		i=$((i + 1))
	done
	rm -f "$gz.db" "$gz.db.tail"
	# The same rows but for seq (unknown in a window): checked, not timed.
	if [ "$(awk '{ $2 = ""; print }' "$BENCH_DIR/last.out")" != \
	    "$(awk '{ $2 = ""; print }' "$BENCH_DIR/full.out")" ]; then
		echo "bench_lazy: $label: lazy last differs from the full index's" >&2
		return 1
	fi
	echo "bench_lazy: $label ($pt MiB PT), wall (CPU) ms: last $t_last" \
	    "($c_last), bt $t_bt ($c_bt), bt again $t_again ($c_again)," \
	    "index + last $t_full ($c_full)" >&2
	printf 'result\tlast, never indexed, %s (%s MiB PT) (CPU)\tms\t%s\tindex + last\t%s\tlower\t-\n' \
	    "$label" "$pt" "$c_last" "$c_full"
	printf 'result\tbt, never indexed, %s (%s MiB PT) (CPU)\tms\t%s\tindex + last\t%s\tlower\t-\n' \
	    "$label" "$pt" "$c_bt" "$c_full"
	printf 'result\tlast, never indexed, %s (%s MiB PT) (wall)\tms\t%s\tgoal\t2000\tlower\t1\n' \
	    "$label" "$pt" "$t_last"
	printf 'result\tlast, never indexed, %s (%s MiB PT) (wall)\tms\t%s\tindex + last\t%s\tlower\t-\n' \
	    "$label" "$pt" "$t_last" "$t_full"
	printf 'result\tbt, never indexed, %s (%s MiB PT) (wall)\tms\t%s\tgoal\t2000\tlower\t1\n' \
	    "$label" "$pt" "$t_bt"
	printf 'result\tbt, never indexed, %s (%s MiB PT) (wall)\tms\t%s\tindex + last\t%s\tlower\t-\n' \
	    "$label" "$pt" "$t_bt" "$t_full"
	printf 'result\tbt after last (partial cache), %s (wall)\tms\t%s\tgoal\t100\tlower\t1\n' \
	    "$label" "$t_again"
}

rc=0
if capture gzip1m 1048576; then
	measure gzip1m "$BENCH_RUNS" "gzip -6 1 MiB" || rc=1
else
	echo "bench_lazy: gzip 1 MiB skipped: capture failed:" \
	    "$(head -3 "$BENCH_DIR/gzip1m.err")" >&2
fi
if capture gzip8m 8388608; then
	measure gzip8m "$bigruns" "gzip -6 8 MiB" || rc=1
else
	echo "bench_lazy: gzip 8 MiB skipped: capture failed:" \
	    "$(head -3 "$BENCH_DIR/gzip8m.err")" >&2
fi
exit $rc
