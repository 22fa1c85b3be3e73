#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# The Perfetto export's timing and filters (issue 22 item 7), on a real
# valgrind capture of gzip: slice ends between two clock readings are
# placed by instruction count and marked estimated, so far fewer slices
# last 0 ns than with the stored (last reading) times; every estimated
# time lies between the readings around it (from the timestamps table, by
# SQL) and times grow with instructions; a trace without timing gets an
# instruction clock, said so; --thread, --from/--to, --min-dur and
# --max-depth keep what they say; the heap stays far below the output's
# size (valgrind's massif).

. "$(atf_get_srcdir)/../env.sh"

gzcap()
{
	command -v valgrind.bin >/dev/null 2>&1 || atf_skip "valgrind is not installed"
	head -c 131072 "$HWTRACE" > in
	"$HWTRACE" capture --source valgrind -o g.hwtrace -- gzip -6 -c in \
	    > /dev/null 2> cap.err || atf_fail "capture failed: $(cat cap.err)"
	"$HWTRACE" index -q -o g.db g.hwtrace || atf_fail "index failed"
}

atf_test_case export_interpolates
export_interpolates_head()
{
	atf_set descr "export places call ends between clock readings by instruction count, marks them estimated, keeps them between the readings around them and in instruction order"
	atf_set require.progs "python3 gzip"
	atf_set timeout 300
}
export_interpolates_body()
{
	gzcap
	"$HWTRACE" query g.db export --perfetto g.json > out ||
	    atf_fail "export failed"
	# calls is a virtual table: read through the extension.
	sqlite3 -cmd ".load $HWTRACE_BUILD/hwtrace_sqlite" g.db \
	    "SELECT count(*), sum(exit_ns = entry_ns) FROM calls" > calls.txt ||
	    atf_fail "cannot read the calls"
	cat > check.py <<'X'
import json, sqlite3, bisect
db = sqlite3.connect("g.db")
d = json.load(open("g.json"))
assert d["otherData"]["time_axis"] == "ns", d["otherData"]
assert "estimated by instruction count" in d["otherData"]["timing"]
# The calls' slices (inlined code has slices of its own, cat "inline").
x = [e for e in d["traceEvents"] if e["ph"] == "X" and e["cat"] == "call"]
ncalls, stored0 = map(int, open("calls.txt").read().split("|"))
assert len(x) == ncalls, (len(x), ncalls)
zero = sum(1 for e in x if e["dur"] == 0)
# The stored times (the last reading before) make nearly all slices 0 ns.
assert zero * 2 < stored0, ("zero-duration slices", zero, "stored", stored0, ncalls)
assert all(isinstance(e["args"]["estimated"], bool) for e in x)
assert any(e["args"]["estimated"] for e in x)
t0 = db.execute("SELECT min(first_ns) FROM threads").fetchone()[0]
# Clock readings: where the time advances (a PSB+ repeats the last one).
rd = []
for insn, ns in db.execute("SELECT insn, ns FROM timestamps WHERE thread = 1 AND ns IS NOT NULL ORDER BY seq"):
    if not rd or (insn >= rd[-1][0] and ns > rd[-1][1]):
        rd.append((insn, ns))
ins = [r[0] for r in rd]
def ns_of(us):
    return round(us * 1000) + t0
def check(insn, t, what):
    i = bisect.bisect_right(ins, insn) - 1
    if i >= 0 and ins[i] == insn:
        assert t == rd[i][1], (what, insn, t, rd[i])
    elif 0 <= i < len(rd) - 1:
        assert rd[i][1] <= t <= rd[i + 1][1], (what, insn, t, rd[i], rd[i + 1])
prev = None
for e in sorted(x, key=lambda e: (e["args"]["entry_insn"], e["args"]["call"])):
    a = e["args"]
    tb, te = ns_of(e["ts"]), ns_of(e["ts"] + e["dur"])
    check(a["entry_insn"], tb, "entry")
    check(a["exit_insn"], te, "exit")
    assert te >= tb, e
    assert prev is None or tb >= prev, ("not monotonic", e, prev)
    prev = tb
print("ok", len(x), zero, stored0)
X
	python3 check.py > res 2>&1 || atf_fail "check.py: $(tail -3 res | tr "\n" " ")"
	grep -q '^ok' res || atf_fail "check.py: $(cat res)"
}

atf_test_case export_filters
export_filters_head()
{
	atf_set descr "export --thread, --from/--to (times, or instructions), --min-dur and --max-depth keep what they say: exactly the slices of the whole export that match"
	atf_set require.progs "python3 gzip sqlite3"
	atf_set timeout 300
}
export_filters_body()
{
	gzcap
	"$HWTRACE" query g.db export --perfetto d0.json --max-depth 0 --thread 1 >/dev/null ||
	    atf_fail "export --max-depth 0 failed"
	n=$(sqlite3 -cmd ".load $HWTRACE_BUILD/hwtrace_sqlite" g.db "SELECT count(*) FROM calls WHERE depth = 0 AND thread = 1")
	"$HWTRACE" query g.db export --perfetto w.json --from 100ms --to 101ms \
	    --min-dur 50ns >/dev/null || atf_fail "export with a window failed"
	cat > check.py <<X
import json
d = [e for e in json.load(open("d0.json"))["traceEvents"] if e["ph"] == "X" and e["cat"] == "call"]
assert len(d) == $n, (len(d), $n)
assert all(e["args"]["depth"] == 0 for e in d)
w = [e for e in json.load(open("w.json"))["traceEvents"] if e["ph"] == "X"]
assert w, "the window is empty"
for e in w:
    assert e["ts"] <= 101000 and e["ts"] + e["dur"] >= 100000, e
    assert e["dur"] >= 0.05, e
print("ok", len(d), len(w))
X
	python3 check.py > res 2>&1 || atf_fail "check.py: $(tail -3 res | tr "\n" " ")"
	# Windows and depths searched through the index keep exactly the
	# slices of the whole export that overlap them (times, or a thread's
	# instructions: entry_insn <= TO and exit_insn > FROM, exit_insn being
	# the instruction after the return).  Two start where a call returns:
	# at its return (it is in) and at the instruction after (it is not).
	"$HWTRACE" query g.db export --perfetto all.json >/dev/null ||
	    atf_fail "export failed"
	x=$(sqlite3 -cmd ".load $HWTRACE_BUILD/hwtrace_sqlite" g.db "SELECT exit_insn FROM calls WHERE thread = (SELECT min(id) FROM threads WHERE blocks > 0) AND depth >= 2 AND exit_insn > 1000 ORDER BY id LIMIT 1 OFFSET 500")
	[ -n "$x" ] || atf_fail "no call returns at depth 2"
	for w in "100ms 101ms 0" "30ms 30.2ms 3" "0ns 1us 1" "1000000 1200000 -1" \
	    "5000000 5000000 2" "0 10 -1" "$x $((x + 20)) -1" \
	    "$((x - 1)) $((x + 20)) -1"; do
		set -- $w
		k=$((${k:-0} + 1))
		d=""
		[ "$3" = -1 ] || d="--max-depth $3"
		"$HWTRACE" query g.db export --perfetto "w$k.json" --from "$1" \
		    --to "$2" $d >/dev/null || atf_fail "export --from $1 --to $2 $d failed"
		echo "w$k.json $1 $2 $3" >> windows
	done
	cat > check2.py <<'X'
import json
def xs(f):
    return [e for e in json.load(open(f))["traceEvents"] if e["ph"] == "X" and e["cat"] == "call"]
def ns(v):
    for u, m in (("ms", 1e6), ("us", 1e3), ("ns", 1)):
        if v.endswith(u):
            return float(v[:-len(u)]) * m, True
    return int(v), False
full = xs("all.json")
for line in open("windows"):
    f, lo, hi, d = line.split()
    (lo, tl), (hi, _) = ns(lo), ns(hi)
    d = int(d)
    want = set()
    for e in full:
        a = e["args"]
        if d >= 0 and a["depth"] > d:
            continue
        if tl:
            tb, te = round(e["ts"] * 1000), round((e["ts"] + e["dur"]) * 1000)
            if tb <= hi and te >= lo:
                want.add(a["call"])
        elif a["entry_insn"] <= hi and a["exit_insn"] > lo:
            want.add(a["call"])
    got = {e["args"]["call"] for e in xs(f)}
    assert want, ("empty window", line)
    assert got == want, (line, len(got), len(want), sorted(want - got)[:5], sorted(got - want)[:5])
print("ok")
X
	atf_check -s exit:0 -o inline:"ok\n" python3 check2.py
	atf_check -s exit:2 -o empty -e match:"--from .*is after --to" \
	    "$HWTRACE" query g.db export --perfetto z.json --from 2ms --to 1ms
	atf_check -s exit:2 -o empty -e match:"--from 9 is after --to 3" \
	    "$HWTRACE" query g.db export --perfetto z.json --from 9 --to 3
	atf_check -s exit:2 -o empty -e match:"--min-dur: 'x' is not a time" \
	    "$HWTRACE" query g.db export --perfetto z.json --min-dur x
	[ ! -e z.json ] || atf_fail "z.json written after an error"
}

atf_test_case export_instruction_clock
export_instruction_clock_head()
{
	atf_set descr "a trace without timing exports on an instruction clock and says so"
	atf_set require.progs "python3 sqlite3"
}
export_instruction_clock_body()
{
	"$HWTRACE_BUILD/bench/qmkdb" fix.db "$HWTRACE_SRC/tests/query/fixture.sql" ||
	    atf_fail "cannot make the fixture database"
	sqlite3 -cmd ".load $HWTRACE_BUILD/hwtrace_sqlite" fix.db "UPDATE timestamps SET ns = NULL; UPDATE calls SET entry_ns = NULL, exit_ns = NULL; UPDATE threads SET first_ns = NULL, last_ns = NULL" ||
	    atf_fail "cannot remove the timing"
	"$HWTRACE" query fix.db export --perfetto p.json --format csv > out ||
	    atf_fail "export failed"
	grep -q ',instructions$' out || atf_fail "time_axis is not instructions: $(cat out)"
	sqlite3 -cmd ".load $HWTRACE_BUILD/hwtrace_sqlite" fix.db \
	    "SELECT id, entry_insn, exit_insn FROM calls" > calls.txt ||
	    atf_fail "cannot read the calls"
	cat > check.py <<'X'
import json
d = json.load(open("p.json"))
assert d["otherData"]["time_axis"] == "instructions"
assert "no timing" in d["otherData"]["timing"], d["otherData"]
want = {}
for line in open("calls.txt"):
    i, a, b = map(int, line.split("|"))
    want[i] = (a, b)
x = [e for e in d["traceEvents"] if e["ph"] == "X" and e["cat"] == "call"]
assert len(x) == len(want)
for e in x:
    a, b = want[e["args"]["call"]]
    assert round(e["ts"] * 1000) == a and round(e["dur"] * 1000) == b - a, (e, a, b)
    assert "estimated" not in e["args"], e
print("ok")
X
	atf_check -s exit:0 -o inline:"ok\n" python3 check.py
}

atf_test_case sql_time_functions
sql_time_functions_head()
{
	atf_set descr "hwtr_time_at and hwtr_time_estimated give the hand-computed times, in hwtrace query sql and in plain sqlite3 with the extension"
	atf_set require.progs "sqlite3"
}
sql_time_functions_body()
{
	"$HWTRACE_BUILD/bench/qmkdb" fix.db "$HWTRACE_SRC/tests/query/fixture.sql" ||
	    atf_fail "cannot make the fixture database"
	# Thread 1 reads 1000, 1500, 2000 ns (+1.7e18) at instructions 0,
	# 15, 24; thread 2 1200 at 0.  Instruction 2 of thread 1: 1000 +
	# 500 * 2 / 15 = 1066 (estimated); 15: 1500 (a reading); 18: 1500 +
	# 500 * 3 / 9 = 1666; 25, after the last: 2000; thread 2's 3: 1200.
	sql="SELECT t, i, hwtr_time_at(t, i) - 1700000000000000000,
	    hwtr_time_estimated(t, i) FROM (SELECT 1 AS t, 2 AS i UNION ALL
	    SELECT 1, 15 UNION ALL SELECT 1, 18 UNION ALL SELECT 1, 25 UNION ALL
	    SELECT 2, 3 UNION ALL SELECT 3, 0)"
	printf '1|2|1066|1\n1|15|1500|0\n1|18|1666|1\n1|25|2000|1\n2|3|1200|1\n3|0||\n' > exp
	sqlite3 fix.db ".load $HWTRACE_BUILD/hwtrace_sqlite" "$sql" > got ||
	    atf_fail "sqlite3 with the extension failed"
	cmp -s exp got || atf_fail "sqlite3: expected $(cat exp), got $(cat got)"
	"$HWTRACE" query fix.db sql --format csv "$sql" | tail -n +2 | tr , '|' > got2 ||
	    atf_fail "hwtrace query sql failed"
	cmp -s exp got2 || atf_fail "hwtrace query sql: expected $(cat exp), got $(cat got2)"
}

atf_test_case time_functions_follow_attachments
time_functions_follow_attachments_head()
{
	atf_set descr "hwtr_time_at by archive id, in one sqlite3 connection: a database detached and another attached under its name gives the new one's times, and the old archive id is an error, not the old database's readings kept"
	atf_set require.progs "sqlite3"
}
time_functions_follow_attachments_body()
{
	"$HWTRACE_BUILD/bench/qmkdb" a.db "$HWTRACE_SRC/tests/query/fixture.sql" ||
	    atf_fail "cannot make the fixture database"
	cp a.db b.db
	# fixture.sql: thread 1 reads 1500 ns (+1.7e18) at instruction 15;
	# b.db is another archive whose readings are 100 ns later.
	sqlite3 a.db "INSERT OR REPLACE INTO meta VALUES ('archive_id', 'aaaa')" &&
	    sqlite3 b.db "INSERT OR REPLACE INTO meta VALUES ('archive_id', 'bbbb');
	    UPDATE timestamps SET ns = ns + 100" || atf_fail "cannot set the ids"
	q="SELECT hwtr_time_at(1, 15, 'ns', '%s') - 1700000000000000000"
	sqlite3 -cmd ".load $HWTRACE_BUILD/hwtrace_sqlite" :memory: \
	    "ATTACH 'a.db' AS x" "$(printf "$q" aaaa)" "DETACH x" \
	    "ATTACH 'b.db' AS x" "$(printf "$q" bbbb)" > got 2> err ||
	    atf_fail "sqlite3 failed: $(cat err)"
	printf '1500\n1600\n' > exp
	cmp -s exp got || atf_fail "expected $(cat exp), got $(cat got)"
	sqlite3 -cmd ".load $HWTRACE_BUILD/hwtrace_sqlite" :memory: \
	    "ATTACH 'a.db' AS x" "$(printf "$q" aaaa)" "DETACH x" \
	    "ATTACH 'b.db' AS x" "$(printf "$q" aaaa)" > got 2> err &&
	    atf_fail "the detached archive's id gave $(cat got)"
	grep -q "no database of this connection has that archive_id" err ||
	    atf_fail "expected the archive id's error, got $(cat err)"
	[ "$(cat got)" = 1500 ] || atf_fail "before the detach: $(cat got)"
}

atf_test_case call_times_view
call_times_view_head()
{
	atf_set descr "the call_times view gives each call's hand-computed entry and exit times and whether each is estimated, on the ns clock, the tsc clock, or an instruction clock for a trace without timing, in hwtrace query sql and in plain sqlite3 with the extension"
	atf_set require.progs "sqlite3"
}
call_times_view_body()
{
	"$HWTRACE_BUILD/bench/qmkdb" fix.db "$HWTRACE_SRC/tests/query/fixture.sql" ||
	    atf_fail "cannot make the fixture database"
	# fixture.sql: thread 1 reads 1000, 1500, 2000 (ns + 1.7e18, and
	# tsc) at instructions 0, 15, 24; thread 2 1200 at 0.  main 0-25:
	# 1000 (a reading), 2000 (after the last: estimated); sum 2-24:
	# 1000 + 500 * 2 / 15 = 1066 (estimated), 2000; sq 6-9: 1200, 1300
	# (both between 0 and 15); sq 15-18: 1500, 1500 + 500 * 3 / 9 =
	# 1666; thread 2's sq 0-3: 1200, 1200 (after its only reading).
	printf '%s\n' 1,1,1000,2000,0,1,ns 2,1,1066,2000,1,0,ns \
	    3,1,1200,1300,1,1,ns 4,1,1500,1666,0,1,ns 5,2,1200,1200,0,1,ns > exp
	sql="SELECT call, thread, t_entry - \$Z, t_exit - \$Z, entry_estimated,
	    exit_estimated, clock FROM call_times ORDER BY call"
	"$HWTRACE" query fix.db sql --format csv "$(echo "$sql" | sed 's/\$Z/1700000000000000000/g')" |
	    tail -n +2 > got || atf_fail "hwtrace query sql failed"
	cmp -s exp got || atf_fail "ns: expected $(cat exp), got $(cat got)"
	sqlite3 -csv fix.db ".load $HWTRACE_BUILD/hwtrace_sqlite" \
	    "$(echo "$sql" | sed 's/\$Z/1700000000000000000/g')" > got2 ||
	    atf_fail "sqlite3 with the extension failed"
	cmp -s exp got2 || atf_fail "sqlite3: expected $(cat exp), got $(cat got2)"
	# No wall clock: the trace's tsc, the same readings.
	sqlite3 fix.db "UPDATE timestamps SET ns = NULL; UPDATE threads SET first_ns = NULL" ||
	    atf_fail "cannot remove the wall clock"
	sed 's/,ns$/,tsc/' exp > exp_tsc
	"$HWTRACE" query fix.db sql --format csv "$(echo "$sql" | sed 's/\$Z/0/g')" |
	    tail -n +2 > got || atf_fail "hwtrace query sql failed"
	cmp -s exp_tsc got || atf_fail "tsc: expected $(cat exp_tsc), got $(cat got)"
	# No timing at all: an instruction clock, exact.
	sqlite3 fix.db "DELETE FROM timestamps; UPDATE threads SET first_tsc = NULL" ||
	    atf_fail "cannot remove the timing"
	printf '%s\n' 1,1,0,25,0,0,instructions 2,1,2,24,0,0,instructions \
	    3,1,6,9,0,0,instructions 4,1,15,18,0,0,instructions \
	    5,2,0,3,0,0,instructions > exp_i
	"$HWTRACE" query fix.db sql --format csv "$(echo "$sql" | sed 's/\$Z/0/g')" |
	    tail -n +2 > got || atf_fail "hwtrace query sql failed"
	cmp -s exp_i got || atf_fail "instructions: expected $(cat exp_i), got $(cat got)"
}

atf_test_case call_times_interpolates
call_times_interpolates_head()
{
	atf_set descr "on a valgrind capture of gzip (sparse timing) the call_times view leaves under 1 % of the calls at 0 ns (the stored times: nearly all), and agrees with the Perfetto export's slices"
	atf_set require.progs "python3 gzip"
	atf_set timeout 300
}
call_times_interpolates_body()
{
	gzcap
	"$HWTRACE" query g.db sql --format csv "SELECT count(*), sum(exit_ns = entry_ns) FROM calls" |
	    tail -n +2 > stored || atf_fail "sql over calls failed"
	"$HWTRACE" query g.db sql --format csv "SELECT count(*), sum(t_exit = t_entry), min(clock), max(clock) FROM call_times" |
	    tail -n +2 > view || atf_fail "sql over call_times failed"
	IFS=, read n z0 < stored
	IFS=, read n2 z1 c1 c2 < view
	[ "$n" = "$n2" ] || atf_fail "call_times has $n2 rows, calls $n"
	[ "$c1" = ns ] && [ "$c2" = ns ] || atf_fail "clock: expected ns, got $c1 $c2"
	# Before the stitcher kept a thread's last clock reading, every call
	# after the last timestamps row lasted 0 ns: 18-25 % of the calls.
	[ $((z1 * 100)) -lt "$n" ] ||
	    atf_fail "0 ns: $z1 calls in call_times, $z0 stored (of $n): expected under 1 %"
	"$HWTRACE" query g.db export --perfetto g.json > /dev/null || atf_fail "export failed"
	"$HWTRACE" query g.db sql --format csv "SELECT c.call, c.t_entry - (SELECT min(first_ns) FROM threads), c.t_exit - c.t_entry, c.entry_estimated OR c.exit_estimated FROM call_times c" |
	    tail -n +2 > ct || atf_fail "sql over call_times failed"
	cat > check.py <<'X'
import json
ct = {}
for l in open("ct"):
    c, t, d, e = map(int, l.split(","))
    ct[c] = (t, d, e)
x = [e for e in json.load(open("g.json"))["traceEvents"] if e["ph"] == "X" and e["cat"] == "call"]
assert len(x) == len(ct), (len(x), len(ct))
for e in x:
    t, d, est = ct[e["args"]["call"]]
    assert (round(e["ts"] * 1000), round(e["dur"] * 1000)) == (t, d), (e, t, d)
    assert e["args"]["estimated"] == bool(est), (e, est)
print("ok")
X
	atf_check -s exit:0 -o inline:"ok\n" python3 check.py
}

atf_test_case depth_counts_match_calls
depth_counts_match_calls_head()
{
	atf_set descr "hot --depth D, counted from the execution order less the calls deeper than D, totals the self_insns the indexer's call reconstruction gives the calls at most D deep, on a gzip capture; coverage --depth agrees"
	atf_set require.progs "gzip"
	atf_set timeout 300
}
depth_counts_match_calls_body()
{
	gzcap
	for d in 0 2 5 8; do
		a=$("$HWTRACE" query g.db hot --depth $d -n 1000000 --format csv |
		    tail -n +2 | awk -F, '{ s += $3 } END { print s + 0 }')
		b=$("$HWTRACE" query g.db sql --format csv "SELECT coalesce(sum(self_insns), 0) FROM calls WHERE depth <= $d" |
		    tail -n +2)
		[ "$a" = "$b" ] || atf_fail "--depth $d: hot totals $a, the calls' self_insns $b"
		# Aliases (one address, several names) are the same code:
		# each address counted once.
		c=$("$HWTRACE" query g.db coverage --depth $d --format csv |
		    awk -F, 'NR > 1 && $2 != "" && !seen[$1 "," $3]++ { s += $6 } END { print s + 0 }')
		[ "$c" -le "$a" ] || atf_fail "--depth $d: coverage counts $c instructions in functions, more than hot's $a"
	done
	[ "$b" -gt 0 ] || atf_fail "no instructions at depth 8"
}

atf_test_case export_bounded_heap
export_bounded_heap_head()
{
	atf_set descr "export streams: its peak heap (valgrind massif) stays far below the size of the JSON it writes, and so does its RSS beyond the mapped database and what a summary takes (/usr/bin/time -v)"
	atf_set require.progs "valgrind gzip /usr/bin/time"
	atf_set timeout 600
}
export_bounded_heap_body()
{
	if ldd "$HWTRACE" 2>/dev/null | grep -q libasan; then
		atf_skip "hwtrace is built with AddressSanitizer: massif cannot run it"
	fi
	gzcap
	# What any verb's process takes (the program, its libraries): the
	# RSS of a summary of the same database.
	/usr/bin/time -v "$HWTRACE" query g.db summary > /dev/null 2> base.out ||
	    atf_fail "summary failed: $(tail -3 base.out)"
	base=$(sed -n 's/.*Maximum resident set size (kbytes): *//p' base.out)
	/usr/bin/time -v "$HWTRACE" query g.db export --perfetto r.json \
	    > /dev/null 2> time.out || atf_fail "export failed: $(tail -3 time.out)"
	rss=$(sed -n 's/.*Maximum resident set size (kbytes): *//p' time.out)
	dbsize=$(stat -c %s g.db)
	rsize=$(stat -c %s r.json)
	# SQLite maps the database (its pages count in the RSS); the rest
	# must be far less than the output.
	[ $(((rss - base) * 1024)) -lt $((dbsize + rsize / 4)) ] ||
	    atf_fail "max RSS $rss KB ($base KB for a summary) for a $dbsize-byte database and a $rsize-byte export"
	valgrind --tool=massif --massif-out-file=ms.out "$HWTRACE" query g.db \
	    export --perfetto g.json > /dev/null 2> vg.err ||
	    atf_fail "export under massif failed: $(tail -3 vg.err)"
	size=$(stat -c %s g.json)
	peak=$(sed -n 's/^mem_heap_B=//p' ms.out | sort -n | tail -1)
	[ "$size" -gt 16000000 ] || atf_fail "the export is only $size bytes: too small to tell"
	[ $((peak * 4)) -lt "$size" ] ||
	    atf_fail "peak heap $peak bytes for a $size-byte export"
}

atf_init_test_cases()
{
	atf_add_test_case export_interpolates
	atf_add_test_case export_filters
	atf_add_test_case export_instruction_clock
	atf_add_test_case sql_time_functions
	atf_add_test_case time_functions_follow_attachments
	atf_add_test_case call_times_view
	atf_add_test_case call_times_interpolates
	atf_add_test_case depth_counts_match_calls
	atf_add_test_case export_bounded_heap
}
