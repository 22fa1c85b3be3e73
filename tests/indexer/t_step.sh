#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# hwtrace index on step captures, checked against what the capture itself
# recorded: the time columns against the capture's own clock (the time
# conversion in the archive's metadata and the CLOCK_MONOTONIC start and
# end the tracer read), the source lines against addr2line, and the
# warnings index prints.

. "$(atf_get_srcdir)/../env.sh"
. "$HWTRACE_SRC/tests/lib/hwtr_test.sh"

# calls is a virtual table: plain sqlite3 reads it with the extension.
q()
{
	sqlite3 -batch -noheader -cmd ".load $HWTRACE_BUILD/hwtrace_sqlite" "$@"
}

# q_none DB WHAT SQL: SQL's count over DB is 0; else fail with the count
# and WHAT.
q_none()
{
	none_n=$(q "$1" "$3")
	[ "$none_n" = 0 ] || atf_fail "$none_n $2"
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

	expect_some $db "SELECT count(*) FROM timestamps" "no timestamps rows"
	q_none $db "threads without first/last times although $n timestamps exist" \
	    "SELECT count(*) FROM threads WHERE first_tsc IS NULL OR last_tsc IS NULL OR first_ns IS NULL OR last_ns IS NULL"
	q_none $db "threads whose first/last tsc do not cover their timestamps" \
	    "SELECT count(*) FROM threads t WHERE first_tsc > (SELECT min(tsc) FROM timestamps s WHERE s.thread = t.id) OR last_tsc < (SELECT max(tsc) FROM timestamps s WHERE s.thread = t.id)"
	q_none $db "calls with a negative duration" \
	    "SELECT count(*) FROM calls WHERE exit_ns < entry_ns OR exit_tsc < entry_tsc"
	q_none $db "entry_tsc values with several entry_ns" \
	    "SELECT count(*) FROM (SELECT entry_tsc FROM calls WHERE entry_tsc IS NOT NULL GROUP BY entry_tsc HAVING count(DISTINCT entry_ns) > 1)"
	# The tracer's own clock readings bracket every decoded time.
	q_none $db "times outside the capture's [start_ns, end_ns] = [$t0, $t1]" \
	    "SELECT count(*) FROM (SELECT ns FROM timestamps UNION ALL SELECT first_ns FROM threads UNION ALL SELECT last_ns FROM threads UNION ALL SELECT entry_ns FROM calls UNION ALL SELECT exit_ns FROM calls) WHERE ns IS NOT NULL AND (ns < $t0 - 1000000 OR ns > $t1)"
}

atf_test_case lines_vs_addr2line
lines_vs_addr2line_head()
{
	atf_set descr "step capture of a static fixture: every block's file:line equals addr2line's for its address, and code past a DWARF sequence (libc without line info) has no line"
}
lines_vs_addr2line_body()
{
	command -v addr2line >/dev/null 2>&1 || atf_skip "addr2line is not installed"
	capture loop
	db=loop.db
	img=$(q $db "SELECT id FROM images WHERE path LIKE '%/loop' AND elf = 1")
	[ -n "$img" ] || atf_fail "no image for the loop fixture: $(q $db 'SELECT path FROM images' | tr '\n' ' ')"
	q $db "SELECT printf('0x%x', b.image_addr), ifnull(f.path, '??'), ifnull(b.line, 0) FROM blocks b LEFT JOIN files f ON f.id = b.file WHERE b.image = $img ORDER BY b.image_addr" >db.txt
	[ -s db.txt ] || atf_fail "no blocks in the loop image"
	cut -d'|' -f1 db.txt | addr2line -e "$HWTRACE_PROGS/loop" >a2l.txt ||
	    atf_fail "addr2line failed"
	# Compare file names (basename: one side may be relative) and lines;
	# addr2line says ??:0 or ??:? where there is no line.
	paste -d'|' db.txt a2l.txt | awk -F'|' '
	    { a = $4; sub(/ \(discriminator [0-9]+\)$/, "", a)
	      n = split(a, p, ":"); al = p[n]; af = substr(a, 1, length(a) - length(al) - 1)
	      if (af == "??" || al == "?" || al == "0") { af = "??"; al = 0 }
	      df = $2; sub(/.*\//, "", df); sub(/.*\//, "", af)
	      if (af == "??") none++; else some++
	      if (df != af || $3 + 0 != al + 0) { bad++; if (bad <= 5) printf "%s: db %s:%s, addr2line %s\n", $1, $2, $3, $4 } }
	    END { printf "%d %d\n", some, none > "counts"; exit bad ? 1 : 0 }' >bad ||
	    atf_fail "blocks whose line differs from addr2line: $(tr '\n' '|' < bad)"
	read some none <counts
	[ "$some" -gt 0 ] && [ "$none" -gt 0 ] ||
	    atf_fail "expected blocks both with and without lines, got $some with and $none without"
	# The symptom: hwtrace query's last instructions show no
	# fixture line for libc code.
	q_none $db "blocks of _IO_* functions (no line info) carry a source line" \
	    "SELECT count(*) FROM blocks b JOIN symbols s ON s.id = b.symbol WHERE b.image = $img AND s.name LIKE '\_IO\_%' ESCAPE '\\' AND b.file IS NOT NULL"
}

atf_test_case no_vsyscall_warning
no_vsyscall_warning_head()
{
	atf_set descr "step capture: a mapping whose image the archive lacks ([vsyscall]) is not warned about when no code there was needed; hwtrace query stays quiet too"
}
no_vsyscall_warning_body()
{
	capture calls
	n=$(q calls.db "SELECT count(*) FROM mappings WHERE path = '[vsyscall]'")
	[ "$n" -gt 0 ] || atf_skip "the capture has no [vsyscall] mapping"
	e=$(q calls.db "SELECT count(*) FROM events WHERE kind = 'decode-error'")
	[ "$e" = 0 ] || atf_fail "$e decode errors in a step capture of calls"
	! grep -q "not in the archive" ixerr ||
	    atf_fail "index warned about a mapping never executed: $(tr '\n' '|' < ixerr)"
	"$HWTRACE" query calls.db last >qout 2>qerr ||
	    atf_fail "query failed: $(tr '\n' '|' < qerr)"
	! grep -q "not in the archive" qerr ||
	    atf_fail "query warned about a mapping never executed: $(tr '\n' '|' < qerr)"
}

atf_init_test_cases()
{
	atf_add_test_case times
	atf_add_test_case lines_vs_addr2line
	atf_add_test_case no_vsyscall_warning
}
