#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# hwtrace index on step captures, checked against what the capture itself
# recorded: the time columns against the capture's own clock (the time
# conversion in the archive's metadata and the CLOCK_MONOTONIC start and
# end the tracer read), the source lines against addr2line, and the
# warnings index prints.

. "$(atf_get_srcdir)/../env.sh"

q()
{
	sqlite3 -batch -noheader "$@"
}

# capture PROG: a step capture of a fixture program, indexed into PROG.db.
capture()
{
	prog=$1
	[ -x "$HWTRACE_PROGS/$prog" ] ||
	    atf_skip "fixture $HWTRACE_PROGS/$prog is not built"
	"$HWTRACE" capture --source step -o "$prog.hwtrace" -- \
	    "$HWTRACE_PROGS/$prog" >out 2>err
	[ -f "$prog.hwtrace" ] ||
	    atf_skip "$prog: step capture unavailable: $(tr '\n' '|' < err)"
	"$HWTRACE" index -o "$prog.db" "$prog.hwtrace" >ixout 2>ixerr ||
	    atf_fail "$prog: index failed: $(tr '\n' '|' < ixerr)"
}

meta()
{
	q "$1" "SELECT value FROM meta WHERE key = '$2'"
}

atf_test_case times
times_head()
{
	atf_set descr "step capture: every ns column equals the archive's time conversion of its tsc, threads have first/last times, no call ends before it starts, all times lie within the capture's own start and end"
}
times_body()
{
	capture calls
	db=calls.db
	mult=$(meta $db tsc_mult)
	shift_=$(meta $db tsc_shift)
	tz=$(meta $db tsc_zero)
	nz=$(meta $db ns_zero)
	t0=$(meta $db start_ns)
	t1=$(meta $db end_ns)
	[ -n "$mult" ] && [ -n "$tz" ] && [ -n "$nz" ] ||
	    atf_fail "no time conversion in the metadata"
	[ -n "$t0" ] && [ -n "$t1" ] || atf_fail "no capture start/end time"
	# The conversion, computed here (exact integers in SQL; mult 1,
	# shift 0: the step source's trace time is CLOCK_MONOTONIC ns).
	[ "$mult" = 1 ] && [ "$shift_" = 0 ] ||
	    atf_skip "time conversion is mult $mult shift $shift_, not 1/0"
	# conv TABLE TSC NS: rows whose ns is not ns_zero + tsc - tsc_zero.
	conv()
	{
		q $db "SELECT '$1.$3: tsc ' || $2 || ': ns ' || ifnull($3, 'NULL') || ', expected ' || ($nz + ($2 - $tz)) FROM $1 WHERE $2 IS NOT NULL AND ($3 IS NULL OR $3 != $nz + ($2 - $tz)) LIMIT 3" >>bad
	}
	: >bad
	conv timestamps tsc ns
	conv calls entry_tsc entry_ns
	conv calls exit_tsc exit_ns
	conv threads first_tsc first_ns
	conv threads last_tsc last_ns
	conv events tsc ns
	[ ! -s bad ] || atf_fail "ns columns disagree with the conversion: $(tr '\n' '|' < bad)"

	n=$(q $db "SELECT count(*) FROM timestamps")
	[ "$n" -gt 0 ] || atf_fail "no timestamps rows"
	r=$(q $db "SELECT count(*) FROM threads WHERE first_tsc IS NULL OR last_tsc IS NULL OR first_ns IS NULL OR last_ns IS NULL")
	[ "$r" = 0 ] || atf_fail "$r threads without first/last times although $n timestamps exist"
	r=$(q $db "SELECT count(*) FROM threads t WHERE first_tsc > (SELECT min(tsc) FROM timestamps s WHERE s.thread = t.id) OR last_tsc < (SELECT max(tsc) FROM timestamps s WHERE s.thread = t.id)")
	[ "$r" = 0 ] || atf_fail "$r threads whose first/last tsc do not cover their timestamps"
	r=$(q $db "SELECT count(*) FROM calls WHERE exit_ns < entry_ns OR exit_tsc < entry_tsc")
	[ "$r" = 0 ] || atf_fail "$r calls with a negative duration"
	r=$(q $db "SELECT count(*) FROM (SELECT entry_tsc FROM calls WHERE entry_tsc IS NOT NULL GROUP BY entry_tsc HAVING count(DISTINCT entry_ns) > 1)")
	[ "$r" = 0 ] || atf_fail "$r entry_tsc values with several entry_ns"
	# The tracer's own clock readings bracket every decoded time.
	r=$(q $db "SELECT count(*) FROM (SELECT ns FROM timestamps UNION ALL SELECT first_ns FROM threads UNION ALL SELECT last_ns FROM threads UNION ALL SELECT entry_ns FROM calls UNION ALL SELECT exit_ns FROM calls) WHERE ns IS NOT NULL AND (ns < $t0 - 1000000 OR ns > $t1)")
	[ "$r" = 0 ] || atf_fail "$r times outside the capture's [start_ns, end_ns] = [$t0, $t1]"
}

atf_init_test_cases()
{
	atf_add_test_case times
}
