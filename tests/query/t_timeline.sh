#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# timeline streams (issue 22 item 6): its rows are a merge of each
# thread's calls (in index order) and events, so they must equal what
# SQLite computes with one ORDER BY over everything (hwtrace-db(5)), for
# the whole history and for any window; and on a large history the first
# rows come long before the whole answer, and a narrow window costs index
# lookups, not a scan.

. "$(atf_get_srcdir)/../env.sh"

# The timeline by SQL alone: calls and events with a time, relative to
# the first decoded time, ordered by time, thread, seq, then call id.
# ?F and ?T (relative ns) and ?H (thread, -1: all) are substituted.
TL_SQL="WITH t0(v) AS (SELECT coalesce((SELECT min(first_ns) FROM threads),
 (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'start_ns'), 0))
SELECT time_ns, thread, seq, kind, what, depth, duration_ns FROM (
 SELECT c.entry_ns - t0.v AS time_ns, c.thread, c.entry_seq AS seq,
  'call' AS kind, coalesce(s.name, printf('%#x', c.func_ip)) AS what,
  c.depth, c.exit_ns - c.entry_ns AS duration_ns, c.id AS o
 FROM calls c JOIN t0 LEFT JOIN symbols s ON s.id = c.symbol
 WHERE c.entry_ns IS NOT NULL AND c.entry_ns - t0.v BETWEEN ?F AND ?T
  AND (?H < 0 OR c.thread = ?H)
 UNION ALL SELECT e.ns - t0.v, e.thread, e.seq, e.kind, e.detail, NULL,
  NULL, e.id - 4611686018427387904 FROM events e JOIN t0
 WHERE e.ns IS NOT NULL AND e.ns - t0.v BETWEEN ?F AND ?T
  AND (?H < 0 OR e.thread = ?H))
ORDER BY time_ns, thread, seq, o"

# same DB FROM TO THREAD [ARGS...]: timeline ARGS equals TL_SQL's rows.
same()
{
	db=$1 f=$2 t=$3 h=$4
	shift 4
	sql=$(printf '%s' "$TL_SQL" | sed "s/?F/$f/g; s/?T/$t/g; s/?H/$h/g")
	"$HWTRACE" query "$db" timeline "$@" --format tsv > got ||
	    atf_fail "timeline $* failed"
	"$HWTRACE" query "$db" sql --format tsv "$sql" | tail -n +2 > rows ||
	    atf_fail "the SQL reference failed"
	{ printf 'time_ns\tthread\tseq\tkind\twhat\tdepth\tduration_ns\n'
	  cat rows; } > exp
	cmp -s exp got || atf_fail "timeline $*: differs from SQLite's" \
	    "answer ($(wc -l < rows) rows); first difference:" \
	    "$(diff exp got | head -n 3 | tr "\n" " ")"
	n=$(wc -l < rows)
}

atf_test_case timeline_matches_sql
timeline_matches_sql_head() { atf_set descr "timeline, whole and in windows, equals one ORDER BY time over calls and events computed by SQLite"; }
timeline_matches_sql_body()
{
	M=9223372036854775807
	# The hand fixture: two threads, events of threads and of none.
	"$HWTRACE_BUILD/bench/qmkdb" fix.db "$HWTRACE_SRC/tests/query/fixture.sql" ||
	    atf_fail "cannot make the fixture database"
	same fix.db -$M $M -1
	same fix.db 100 500 -1 --from 100ns --to 0.5us
	same fix.db 0 $M 2 --thread 2
	same fix.db 150 150 -1 --from 150ns --to 150ns
	# A long synthetic history: more rows than a streamed block.
	"$HWTRACE_BUILD/bench/qmkdb" -s 20000 big.db >/dev/null 2>&1 ||
	    atf_fail "cannot make the synthetic database"
	same big.db -$M $M -1
	[ "$n" -gt 1024 ] || atf_fail "only $n rows, not a long answer"
	# Windows whose ends fall on call times and between them.
	for w in "0 0" "1000 20000" "5000 5000" "12345 67890" "0 99999999"; do
		set -- $w
		same big.db "$1" "$2" -1 --from "${1}ns" --to "${2}ns"
	done
	same big.db 7000 $M 1 --thread 1 --from 7us
	atf_check -s exit:2 -o empty -e match:"--from .*is after --to" \
	    "$HWTRACE" query big.db timeline --from 2us --to 1us
}

# best N CMD...: the least wall time of N runs of CMD (stdout discarded),
# in ms.
best()
{
	runs=$1
	shift
	b=
	for i in $(seq "$runs"); do
		s=$(date +%s%N)
		"$@" > /dev/null 2>&1
		e=$(date +%s%N)
		ms=$(( (e - s) / 1000000 ))
		if [ -z "$b" ] || [ "$ms" -lt "$b" ]; then b=$ms; fi
	done
	echo "$b"
}

head3() { "$HWTRACE" query huge.db timeline | head -n 3; }

atf_test_case timeline_streams_and_seeks
timeline_streams_and_seeks_head()
{
	atf_set descr "on a large history timeline | head -3 ends long before the whole answer, and a narrow --from/--to window costs far less than one scan of the calls"
	atf_set timeout 300
}
timeline_streams_and_seeks_body()
{
	"$HWTRACE_BUILD/bench/qmkdb" -s 6000000 huge.db >/dev/null 2>&1 ||
	    atf_fail "cannot make the synthetic database"
	# What starting hwtrace and opening the database costs (more under
	# a sanitizer): subtracted from each time below.
	base=$(best 3 "$HWTRACE" query huge.db sql "SELECT 1")
	full=$(( $(best 3 "$HWTRACE" query huge.db timeline) - base ))
	first=$(( $(best 3 head3) - base ))
	# A sort of every call before the first row took over half of the
	# whole answer's time; streamed, the first rows cost next to nothing.
	[ $((first * 4)) -lt "$full" ] ||
	    atf_fail "timeline | head -3 took $first ms, the whole answer $full ms (beyond $base ms to start)"
	scan=$(( $(best 3 "$HWTRACE" query huge.db sql \
	    "SELECT count(*) FROM calls WHERE exit_ns - entry_ns = -1") - base ))
	win=$(( $(best 3 "$HWTRACE" query huge.db timeline --from 20ms --to 20.01ms) - base ))
	[ $((win * 3)) -lt "$scan" ] ||
	    atf_fail "a 10 us window took $win ms, one scan of the calls $scan ms (beyond $base ms to start)"
	"$HWTRACE" query huge.db timeline --from 20ms --to 20.01ms > w
	[ "$(wc -l < w)" -gt 1 ] || atf_fail "the window has no rows: $(cat w)"
}

atf_init_test_cases()
{
	atf_add_test_case timeline_matches_sql
	atf_add_test_case timeline_streams_and_seeks
}
