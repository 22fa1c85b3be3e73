#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# hwtrace query over a hand-written database (fixture.sql: one run of fix.c
# whose every block, call and branch is listed there).  The expected
# outputs below follow from that walk, not from an earlier run of ours; the
# lcov tracefile is checked by genhtml, the Perfetto export by python3's
# json module, the disassembly is that of the bytes written in fixture.sql.

. "$(atf_get_srcdir)/../env.sh"

mkfix()
{
	"$HWTRACE_BUILD/bench/qmkdb" fix.db "$HWTRACE_SRC/tests/query/fixture.sql" ||
	    atf_fail "cannot make the fixture database"
}

# q EXPECTED-FILE ARGS...: the command succeeds, prints exactly that.
# The note of an answer over the whole fixture: fixture.sql puts a decode
# error after thread 2's only block and a lost record of its stream after
# its last time (hwtrace-query(1), "Lost data"); "last" for last's.
fixnote()
{
	if [ "${1:-}" = last ]; then
		lead="these blocks may not follow each other or be the last"
	else
		lead="counts are lower bounds"
	fi
	echo "note: $lead: the trace lost data in 2 places (thread 2 after its last block: lost 128 bytes; thread 2 after its last block: decode error: unexpected packet)"
}

q()
{
	exp=$1
	shift
	atf_check -s exit:0 -o file:"$exp" -e empty "$HWTRACE" query fix.db "$@"
}

# qn ARG...: q with the expected output on stdin and the loss note after.
qn()
{
	cat > exp
	fixnote >> exp
	q exp "$@"
}

atf_test_case summary_counts
summary_counts_head() { atf_set descr "summary counts streams, threads, instructions, errors and loss of the fixture"; }
summary_counts_body()
{
	mkfix
	qn summary <<'X'
item              value
source            step
command           /usr/local/bin/fix
exit              code 1
archive_complete  1
streams           2
processes         1
threads           2
images            1
instructions      28
blocks            10
static_blocks     7
calls             5
start             2023-11-14T22:13:20.000Z
duration_ns       1000
trace_bytes       576
decode_errors     1
undecoded_bytes   16
lost_bytes        128
lost_events       1
X
}

atf_test_case threads_formats
threads_formats_head() { atf_set descr "threads in table, csv, tsv and json"; }
threads_formats_body()
{
	mkfix
	cat > exp <<'X'
thread  pid  tid  name    stream   blocks  insns  calls  max_depth  errors  gaps  duration_ns  exit
     1  100  100  fix     tid 100       9     25      4          2       0     0         1000  code 1
     2  100  101  worker  tid 101       1      3      1          0       1     1            0  code 0
X
	q exp threads
	cat > exp <<'X'
thread,pid,tid,name,stream,blocks,insns,calls,max_depth,errors,gaps,duration_ns,exit
1,100,100,fix,tid 100,9,25,4,2,0,0,1000,code 1
2,100,101,worker,tid 101,1,3,1,0,1,1,0,code 0
X
	q exp threads --format csv
	printf 'thread\tpid\ttid\tname\tstream\tblocks\tinsns\tcalls\tmax_depth\terrors\tgaps\tduration_ns\texit\n1\t100\t100\tfix\ttid 100\t9\t25\t4\t2\t0\t0\t1000\tcode 1\n2\t100\t101\tworker\ttid 101\t1\t3\t1\t0\t1\t1\t0\tcode 0\n' > exp
	q exp threads --format tsv
	# The format may also come before the database.
	atf_check -s exit:0 -o file:exp "$HWTRACE" query --format tsv fix.db threads
	"$HWTRACE" query fix.db threads --format json > out.json ||
	    atf_fail "threads --format json failed"
	atf_check -s exit:0 -o inline:"2 worker 101 None\n" python3 -c '
import json, sys
rows = json.load(open("out.json"))
print(len(rows), rows[1]["name"], rows[1]["tid"], rows[0].get("missing"))'
}

atf_test_case last_blocks
last_blocks_head() { atf_set descr "last -n shows each thread's final blocks with function+offset and file:line"; }
last_blocks_body()
{
	mkfix
	cat > exp <<'X'
thread  seq  address   function  line      insns  ends_with
     1    6  0x40101b  sum+0xb   fix.c:12      4  cond
     1    7  0x401024  sum+0x14  fix.c:13      2  return
     1    8  0x40103a  main+0xa  fix.c:25      1  return
     2    0  0x401000  sq        fix.c:5       3  return
X
	fixnote last >> exp
	q exp last -n 3
	cat > exp <<'X'
[
  {"thread": 1, "seq": 8, "address": "0x40103a", "function": "main+0xa", "line": "fix.c:25", "insns": 1, "ends_with": "return"}
]
X
	q exp last -n 1 --thread 1 --format json
}

atf_test_case last_insns
last_insns_head() { atf_set descr "last --insns disassembles the final instructions"; }
last_insns_body()
{
	mkfix
	cat > exp <<'X'
thread  insn  address   function  line      instruction
     1    21  0x401022  sum+0x12  fix.c:11  jl 0x401014
     1    22  0x401024  sum+0x14  fix.c:13  mov eax, ebx
     1    23  0x401026  sum+0x16  fix.c:15  ret
     1    24  0x40103a  main+0xa  fix.c:25  ret
X
	q exp last --thread 1 -n 4 --insns
}

atf_test_case calls_and_tree
calls_and_tree_head() { atf_set descr "calls lists invocations with caller and durations; tree merges call paths"; }
calls_and_tree_body()
{
	mkfix
	qn calls <<'X'
call  thread  depth  function  caller  call_site  seq  insn  start_ns  duration_ns  insns  self_insns  blocks  entry_kind  exit_kind
   1       1      0  main      -       -            0     0         0         1000     25           3       9  start       return
   2       1      1  sum       main    0x401035     1     2         0         1000     22          16       7  call        return
   3       1      2  sq        sum     0x401016     2     6         0            0      3           3       1  call        return
   4       1      2  sq        sum     0x401016     5    15       500            0      3           3       1  call        return
   5       2      0  sq        -       -            0     0       200            0      3           3       1  start       end
X
	head -3 exp > exp1
	q exp1 calls --thread 1 --depth 1
	head -2 exp > exp2
	fixnote >> exp2
	q exp2 calls -n 1
	qn tree <<'X'
thread  depth  function  calls  insns  self_insns  duration_ns  path
     1      0  main          1     25           3         1000  main
     1      1    sum         1     22          16         1000  main/sum
     1      2      sq        2      6           6            0  main/sum/sq
     2      0  sq            1      3           3            0  sq
X
	head -3 exp > exp1
	q exp1 tree --thread 1 --depth 1
}

atf_test_case func_invocations
func_invocations_head() { atf_set descr "func lists every invocation of a name or glob; an unknown name suggests close ones"; }
func_invocations_body()
{
	mkfix
	qn func sq <<'X'
call  thread  depth  function  caller  call_site  seq  insn  start_ns  duration_ns  insns  self_insns  blocks  entry_kind  exit_kind
   3       1      2  sq        sum     0x401016     2     6         0            0      3           3       1  call        return
   4       1      2  sq        sum     0x401016     5    15       500            0      3           3       1  call        return
   5       2      0  sq        -       -            0     0       200            0      3           3       1  start       end
X
	cat > exp <<'X'
call,thread,depth,function,caller,call_site,seq,insn,start_ns,duration_ns,insns,self_insns,blocks,entry_kind,exit_kind
2,1,1,sum,main,0x401035,1,2,0,1000,22,16,7,call,return
3,1,2,sq,sum,0x401016,2,6,0,0,3,3,1,call,return
4,1,2,sq,sum,0x401016,5,15,500,0,3,3,1,call,return
X
	q exp func 's*' --thread 1 --format csv
	# A function that never ran: a header and no rows.
	echo "call  thread  depth  function  caller  call_site  seq  insn  start_ns  duration_ns  insns  self_insns  blocks  entry_kind  exit_kind" > exp
	fixnote >> exp
	q exp func unused
	atf_check -s exit:1 -o empty -e inline:"hwtrace query: func: no symbol matches 'squ'; did you mean 'sq' or 'sum'?\n" \
	    "$HWTRACE" query fix.db func squ
	atf_check -s exit:1 -o empty -e match:"no symbol matches 'zzzz'\$" \
	    "$HWTRACE" query fix.db func zzzz
}

atf_test_case coverage_lcov_genhtml
coverage_lcov_genhtml_head() { atf_set descr "coverage counts functions and lines; the lcov file matches the walk and genhtml accepts it"; }
coverage_lcov_genhtml_body()
{
	mkfix
	qn coverage --image fix --lcov cov.info <<'X'
image               function  address   line      entries  insns  lines_hit  lines_total
/usr/local/bin/fix  sq        0x401000  fix.c:5         3      9          2            2
/usr/local/bin/fix  sum       0x401010  fix.c:10        1     16          5            5
/usr/local/bin/fix  main      0x401030  fix.c:24        1      3          2            2
/usr/local/bin/fix  unused    0x401040  fix.c:19        0      0          0            2
X
	test ! -e cov.info.partial || atf_fail "cov.info.partial left behind"
	cat > exp <<'X'
TN:
SF:fix.c
FN:5,sq
FN:10,sum
FN:19,unused
FN:24,main
FNDA:3,sq
FNDA:1,sum
FNDA:0,unused
FNDA:1,main
FNF:4
FNH:3
DA:5,3
DA:6,3
DA:10,1
DA:11,2
DA:12,2
DA:13,1
DA:15,1
DA:19,0
DA:20,0
DA:24,1
DA:25,1
LF:11
LH:9
end_of_record
X
	atf_check -s exit:0 -o empty diff -u exp cov.info
	cp "$HWTRACE_SRC/tests/query/fix.c" .
	atf_check -s exit:0 -o ignore -e ignore genhtml -o html cov.info
	test -f html/index.html || atf_fail "genhtml wrote no html/index.html"
	# genhtml's own summary agrees: 9 of 11 lines, 3 of 4 functions.
	atf_check -s exit:0 -o match:"lines\.*: 81\.8% \(9 of 11 lines\)" \
	    -o match:"functions\.*: 75\.0% \(3 of 4 functions\)" -e ignore \
	    genhtml -o html2 cov.info
	atf_check -s exit:1 -o empty -e match:"no image 'nosuch' \(images: '/usr/local/bin/fix'\)" \
	    "$HWTRACE" query fix.db coverage --image nosuch
}

atf_test_case hot_by
hot_by_head() { atf_set descr "hot by function, block and edge"; }
hot_by_body()
{
	mkfix
	qn hot <<'X'
function  image               insns  blocks  percent
sum       /usr/local/bin/fix     16       5    57.14
sq        /usr/local/bin/fix      9       3    32.14
main      /usr/local/bin/fix      3       2    10.71
X
	qn hot --by block -n 2 <<'X'
address   function  line      count  block_insns  insns  percent
0x401000  sq        fix.c:5       3            3      9    32.14
0x40101b  sum+0xb   fix.c:12      2            4      8    28.57
X
	qn hot --by edge -n 1 <<'X'
from    to       kind    count  from_address  to_address
sq+0x5  sum+0xb  return      2  0x401005      0x40101b
X
	# By line, from the walk in fixture.sql: sum's loop (line 11: 1 + 3
	# twice), sq's body (line 5: 2 instructions, 3 runs), and so on.
	qn hot --by line <<'X'
line      function  insns  count  percent
fix.c:11  sum           7      2    25.00
fix.c:5   sq            6      3    21.43
fix.c:12  sum           6      2    21.43
fix.c:6   sq            3      3    10.71
fix.c:24  main          2      1     7.14
fix.c:10  sum           1      1     3.57
fix.c:13  sum           1      1     3.57
fix.c:15  sum           1      1     3.57
fix.c:25  main          1      1     3.57
X
	qn hot --by image <<'X'
image               insns  blocks  percent
/usr/local/bin/fix     28      10    100.0
X
	atf_check -s exit:2 -o empty -e match:"not function, inline, line, image, block or edge" \
	    "$HWTRACE" query fix.db hot --by source
}

atf_test_case branches_filters
branches_filters_head() { atf_set descr "branches with counts, filtered by source, target and kind"; }
branches_filters_body()
{
	mkfix
	qn branches <<'X'
from      to        kind            count  from_address  to_address
sq+0x5    sum+0xb   return              2  0x401005      0x40101b
sum+0x6   sq        call                2  0x401016      0x401000
sum+0x12  sum+0x4   cond-taken          1  0x401022      0x401014
sum+0x12  sum+0x14  cond-not-taken      1  0x401022      0x401024
sum+0x16  main+0xa  return              1  0x401026      0x40103a
main+0x5  sum       call                1  0x401035      0x401010
X
	qn branches --to sq --kind call <<'X'
from     to  kind  count  from_address  to_address
sum+0x6  sq  call      2  0x401016      0x401000
X
	qn branches --from sum --to sum --kind cond-taken <<'X'
from      to       kind        count  from_address  to_address
sum+0x12  sum+0x4  cond-taken      1  0x401022      0x401014
X
	atf_check -s exit:1 -o empty -e match:"unknown kind 'taken' \(kinds: cond-taken, cond-not-taken," \
	    "$HWTRACE" query fix.db branches --kind taken
	atf_check -s exit:1 -o empty -e match:"branches --from: no symbol matches 'man'; did you mean 'main'" \
	    "$HWTRACE" query fix.db branches --from man
}

atf_test_case timeline_event_id_extreme
timeline_event_id_extreme_head() { atf_set descr "timeline: an event keeps its place before the calls of its seq whatever its id, even one near -2^63 (found by make fuzz-db: the order key was the id less 2^62, which wrapped)"; }
timeline_event_id_extreme_body()
{
	mkfix
	# Thread 1's "enabled" (event 1) shares time 0 and seq 0 with the
	# call of main: events come first (hwtrace-query(1), timeline).
	cat > exp <<-'EOF'
	time_ns,thread,seq,kind,what,depth,duration_ns
	0,1,0,enabled,,,
	0,1,0,call,main,0,1000
	0,1,1,call,sum,1,1000
	0,1,2,call,sq,2,0
	EOF
	for id in -9223372036854775808 -9223372036854775807 \
	    9223372036854775807; do
		sqlite3 fix.db "UPDATE events SET id = $id WHERE seq = 0 AND thread = 1" ||
		    atf_fail "sqlite3 cannot change the fixture"
		atf_check -s exit:0 -o file:exp -e empty "$HWTRACE" query \
		    fix.db timeline --format csv --thread 1 --to 0ns
	done
}

atf_test_case timeline_window
timeline_window_head() { atf_set descr "timeline orders calls and events by time and honours --from/--to"; }
timeline_window_body()
{
	mkfix
	cat > exp <<'X'
time_ns  thread  seq  kind          what                depth  duration_ns
   -100       -    -  exec          /usr/local/bin/fix      -            -
      0       1    0  enabled       -                       -            -
      0       1    0  call          main                    0         1000
      0       1    1  call          sum                     1         1000
      0       1    2  call          sq                      2            0
    200       2    0  enabled       -                       -            -
    200       2    0  call          sq                      0            0
    200       2    1  decode-error  unexpected packet       -            -
    250       -    -  lost          128 bytes               -            -
    500       1    5  call          sq                      2            0
   1000       1    9  disabled      -                       -            -
X
	q exp timeline
	cat > exp <<'X'
time_ns  thread  seq  kind          what               depth  duration_ns
    200       2    0  enabled       -                      -            -
    200       2    0  call          sq                     0            0
    200       2    1  decode-error  unexpected packet      -            -
    250       -    -  lost          128 bytes              -            -
    500       1    5  call          sq                     2            0
X
	q exp timeline --from 100ns --to 0.5us
	atf_check -s exit:2 -o empty -e match:"'5 apples' is not a time" \
	    "$HWTRACE" query fix.db timeline --from '5 apples'
}

atf_test_case insns_history
insns_history_head() { atf_set descr "insns shows an instruction window with disassembly of the stored code bytes"; }
insns_history_body()
{
	mkfix
	cat > exp <<'X'
thread  insn  address   function  line      instruction
     1    13  0x401014  sum+0x4   fix.c:12  mov edi, ebp
     1    14  0x401016  sum+0x6   fix.c:12  call 0x401000
     1    15  0x401000  sq        fix.c:5   mov eax, edi
     1    16  0x401002  sq+0x2    fix.c:5   imul eax, edi
     1    17  0x401005  sq+0x5    fix.c:6   ret
X
	q exp insns --thread 1 --from 13 --count 5
	cat > exp <<'X'
thread  insn  address   function  line     instruction
     2     0  0x401000  sq        fix.c:5  mov eax, edi
     2     1  0x401002  sq+0x2    fix.c:5  imul eax, edi
     2     2  0x401005  sq+0x5    fix.c:6  ret
X
	q exp insns --thread 2
	atf_check -s exit:1 -o empty -e match:"no thread 7 \(threads are numbered 1 to 2" \
	    "$HWTRACE" query fix.db insns --thread 7
}

atf_test_case sql_read_only
sql_read_only_head() { atf_set descr "sql answers any read-only SQL, refuses writes and passes SQLite's errors on"; }
sql_read_only_body()
{
	mkfix
	cat > exp <<'X'
name  n
sq    3
X
	q exp sql "SELECT s.name, count(*) AS n FROM calls c JOIN symbols s ON s.id = c.symbol GROUP BY s.name HAVING n > 1"
	# The execution order and disassembly are reachable from SQL.
	cat > exp <<'X'
seq  block  d
  5      2  mov eax, edi
X
	q exp sql "SELECT e.seq, e.block, hwtr_disasm(b.code, 0, b.start_ip, b.mode) AS d FROM exec_order e JOIN blocks b ON b.id = e.block WHERE e.thread = 1 AND e.seq = 5"
	printf -- '-- a comment\nSELECT count(*) AS n FROM blocks;\n' > q.sql
	printf 'n\n7\n' > exp
	q exp sql --file q.sql
	atf_check -s exit:1 -o empty -e inline:"hwtrace query: sql: the database is opened read-only; refusing a statement that writes: 'DELETE FROM meta'\n" \
	    "$HWTRACE" query fix.db sql "SELECT 1; DELETE FROM meta; SELECT 2"
	atf_check -s exit:1 -o empty -e inline:"hwtrace query: sql: near \"SELEC\": syntax error\n" \
	    "$HWTRACE" query fix.db sql "SELEC 1"
	atf_check -s exit:1 -o empty -e inline:"hwtrace query: sql: no such table: nosuch\n" \
	    "$HWTRACE" query fix.db sql "SELECT * FROM nosuch"
	atf_check -s exit:2 -o empty -e match:"give a QUERY or --file, not both" \
	    "$HWTRACE" query fix.db sql --file q.sql "SELECT 1"
	atf_check -s exit:0 -o inline:"1\n" sqlite3 fix.db "SELECT count(*) FROM meta WHERE key = 'schema_version'"
}

atf_test_case tree_sums_out_of_range
tree_sums_out_of_range_head() { atf_set descr "tree on a database whose two root calls of one function claim 2^63-1 instructions each (a damaged or hostile one): exit 1 naming a call, not a sum wrapped past int64 (found by make fuzz-db)"; }
tree_sums_out_of_range_body()
{
	mkfix
	# Two calls written with SQL (calls_rows), roots of thread 1, of the
	# same function: the tree adds them into one node.
	sqlite3 fix.db "INSERT INTO calls_rows (id, thread, parent, depth, symbol, func_ip, call_ip, entry_kind, exit_kind, entry_seq, exit_seq, entry_insn, exit_insn, insns, self_insns, blocks) SELECT (SELECT coalesce(max(id0), 0) FROM calls_pages) + 1000000 + x, 1, NULL, 0, NULL, 4096, NULL, 'call', 'return', 0, 0, 0, 0, 9223372036854775807, 0, 1 FROM (SELECT 1 AS x UNION ALL SELECT 2)" ||
	    atf_fail "sqlite3 cannot change the fixture"
	atf_check -s exit:1 -o empty \
	    -e match:"calls: call [0-9]+: its count, instructions or duration are out of range" \
	    "$HWTRACE" query fix.db tree --depth 3
}

atf_test_case verbs_time_limit
verbs_time_limit_head() { atf_set descr "every verb, not only sql, stops at --timeout seconds of CPU time with an error naming the limit, given before the database or after the verb, and --timeout 0 lifts it"; }
verbs_time_limit_body()
{
	mkfix
	# Six million blocks more: coverage reads each, about 3 s of CPU
	# here, so a limit of 1 s stops it on a machine up to 3 times
	# faster (two million took 0.97 s on one host: too near the limit).
	sqlite3 fix.db "WITH RECURSIVE c(x) AS (SELECT 7 UNION ALL SELECT x + 1 FROM c WHERE x < 6000000) INSERT INTO blocks SELECT x, 0x401000 + x, 0x401000 + x, 1, 1, 64, 'return', 1, 0x401000, 1, 0, 1, 5, x, X'01', X'c3' FROM c" ||
	    atf_fail "cannot grow the fixture database"
	atf_check -s exit:1 -o ignore \
	    -e inline:"hwtrace query: coverage: stopped after 1.000 s of CPU time (the time limit; raise it with --timeout, 0 for none)\n" \
	    /usr/bin/time -o cpu -f "%U %S" "$HWTRACE" query fix.db coverage \
	    --timeout 1
	awk 'END { s = $1 + $2; exit !(s >= 0.9 && s < 3) }' cpu ||
	    atf_fail "--timeout 1 used $(tail -1 cpu) s of CPU (user, system)"
	atf_check -s exit:0 -o match:"sum" -e empty \
	    "$HWTRACE" query fix.db coverage --timeout 0
	# Before the database too (hwtrace-query(1)); one after the verb wins.
	atf_check -s exit:1 -o ignore \
	    -e inline:"hwtrace query: coverage: stopped after 1.000 s of CPU time (the time limit; raise it with --timeout, 0 for none)\n" \
	    "$HWTRACE" query --timeout 1 fix.db coverage
	atf_check -s exit:0 -o match:"sum" -e empty \
	    "$HWTRACE" query --timeout 1 fix.db coverage --timeout 0
	# Time spent waiting on a slow reader is not the verb's: insns
	# streams 50,000 rows (2.3 MB, far more than a pipe holds; about
	# 0.3 s of CPU here, 1.1 s under make sanitize, where 100,000 rows
	# took 1.2-1.7 s and sometimes passed the limit) to a reader that
	# sleeps 3 s before it reads, under a 2 s limit.
	"$HWTRACE_BUILD/bench/ixgen" -n 300000 -t 1 -s 1 \
	    "$HWTRACE_BUILD/progs/calls" g.hwtrace 2>/dev/null ||
	    atf_fail "ixgen failed"
	atf_check -s exit:0 -o ignore -e ignore "$HWTRACE" index -o g.db g.hwtrace
	atf_check -s exit:0 -o inline:"50001\n" -e empty sh -c \
	    "'$HWTRACE' query g.db insns --from 0 -n 50000 --format csv --timeout 2 | { sleep 3; wc -l | tr -d ' '; }"
	# The same option and message in diff.
	cp fix.db fix2.db
	atf_check -s exit:1 -o empty \
	    -e match:"^hwtrace diff: diff: stopped after 1.000 s of CPU time on [AB] \\(the time limit" \
	    "$HWTRACE" diff --timeout 1 fix.db fix2.db
}

atf_test_case sql_hardened
sql_hardened_head() { atf_set descr "query sql: no fts3_tokenizer, ATTACH, pragmas that write or functions outside SQLite's and hwtrace's; runaway statements stopped by --timeout and --max-length"; }
sql_hardened_body()
{
	mkfix
	# The one-argument form would print a libsqlite3 address, the
	# two-argument one makes a later MATCH call through the given pointer.
	for s in "SELECT fts3_tokenizer('simple')" \
	    "SELECT fts3_tokenizer('simple', x'4141414141414141')" \
	    "SELECT load_extension('/nonexistent')"; do
		atf_check -s exit:1 -o empty -e match:"not authorized to use function" \
		    "$HWTRACE" query fix.db sql "$s"
	done
	atf_check -s exit:1 -o empty -e match:"refused ATTACH" \
	    "$HWTRACE" query fix.db sql "ATTACH '$PWD/made.db' AS m"
	[ ! -e made.db ] || atf_fail "ATTACH created made.db"
	atf_check -s exit:1 -o empty -e match:"refused PRAGMA writable_schema" \
	    "$HWTRACE" query fix.db sql "PRAGMA writable_schema = 1"
	atf_check -s exit:1 -o empty -e match:"refused reading 'temp" \
	    "$HWTRACE" query fix.db sql "SELECT * FROM temp.sqlite_master"
	# What stays allowed: built-in and table-valued functions, pragmas
	# describing the schema, hwtrace's own.
	printf 'n\n3\n' > exp
	q exp sql "SELECT count(*) AS n FROM json_each('[1,2,3]')"
	atf_check -s exit:0 -o match:"^ +0 +id +INTEGER" -e empty \
	    "$HWTRACE" query fix.db sql "PRAGMA table_info(blocks)"
	# A statement that never ends is stopped after --timeout seconds of
	# CPU time.
	atf_check -s exit:1 -o empty \
	    -e inline:"hwtrace query: sql: stopped after 1.000 s of CPU time (the time limit; raise it with --timeout, 0 for none)\n" \
	    /usr/bin/time -o cpu -f "%U %S" "$HWTRACE" query fix.db sql \
	    --timeout 1 "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
	awk 'END { s = $1 + $2; exit !(s >= 0.9 && s < 3) }' cpu ||
	    atf_fail "--timeout 1 used $(tail -1 cpu) s of CPU (user, system)"
	# Without --timeout the default (10 s of CPU time) stops it: about
	# 10 s of the process's CPU time (on an idle machine, as long on the
	# clock; a busy one only stretches the wait).
	atf_check -s exit:1 -o empty \
	    -e inline:"hwtrace query: sql: stopped after 10.000 s of CPU time (the time limit; raise it with --timeout, 0 for none)\n" \
	    /usr/bin/time -o cpu -f "%U %S" "$HWTRACE" query fix.db sql \
	    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
	awk 'END { s = $1 + $2; exit !(s >= 9.5 && s < 13) }' cpu ||
	    atf_fail "the default limit used $(tail -1 cpu) s of CPU (user, system), expected about 10 s"
	printf 'n\n100000\n' > exp
	q exp sql --timeout 0 "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 100000) SELECT count(*) AS n FROM c"
	# A blob of 1e9 bytes is refused at once (the default limit, 64M).
	atf_check -s exit:1 -o empty -e match:"longer than 67108864 bytes" \
	    "$HWTRACE" query fix.db sql "SELECT length(randomblob(1e9))"
	atf_check -s exit:1 -o empty -e match:"longer than 1024 bytes" \
	    "$HWTRACE" query fix.db sql --max-length 1K "SELECT length(zeroblob(2000))"
	printf 'n\n2000\n' > exp
	q exp sql --max-length 2K "SELECT length(zeroblob(2000)) AS n"
	atf_check -s exit:2 -o empty -e match:"--timeout: 'x' is not a number" \
	    "$HWTRACE" query fix.db sql --timeout x "SELECT 1"
	atf_check -s exit:2 -o empty -e match:"--max-length: '0' is not a size" \
	    "$HWTRACE" query fix.db sql --max-length 0 "SELECT 1"
}

atf_test_case export_perfetto
export_perfetto_head() { atf_set descr "export --perfetto writes trace-event JSON whose events nest like the call tree"; }
export_perfetto_body()
{
	mkfix
	qn export --perfetto p.json <<'X'
file    threads  events  time_axis
p.json        2       8  ns
X
	test ! -e p.json.partial || atf_fail "p.json.partial left behind"
	cat > check.py <<'X'
import json
d = json.load(open("p.json"))
ev = d["traceEvents"]
meta = [e for e in ev if e["ph"] == "M"]
calls = [e for e in ev if e["ph"] == "X"]
assert d["displayTimeUnit"] == "ns"
assert sorted((e["name"], e["args"]["name"]) for e in meta) == [
    ("process_name", "fix"), ("thread_name", "fix"), ("thread_name", "worker")], meta
for e in calls:
    for k in ("name", "ph", "ts", "dur", "pid", "tid"):
        assert k in e, (k, e)
# Thread 100 (timestamps at instructions 0, 15, 24: 0, 0.5, 1 us): each
# end between two is placed by instruction count, one after the last is
# at the last.  main [0,25] holds sum [2,24] holds sq [6,9] and [15,18].
t = [(e["name"], e["ts"], e["dur"], e["args"]["depth"]) for e in calls if e["tid"] == 100]
assert t == [("main", 0, 1, 0), ("sum", 0.066, 0.934, 1), ("sq", 0.2, 0.1, 2), ("sq", 0.5, 0.166, 2)], t
assert [e["args"]["estimated"] for e in calls if e["tid"] == 100] == [True] * 4
assert "estimated by instruction count" in d["otherData"]["timing"], d["otherData"]
w = [(e["name"], e["ts"], e["args"]["insns"]) for e in calls if e["tid"] == 101]
assert w == [("sq", 0.2, 3)], w
print("ok")
X
	atf_check -s exit:0 -o inline:"ok\n" python3 check.py
	atf_check -s exit:2 -o empty -e match:"no --perfetto OUT given" \
	    "$HWTRACE" query fix.db export
}

atf_test_case bad_databases
bad_databases_head() { atf_set descr "a file that is not a hwtrace database, or has a newer or older schema, gets a clear error and no output"; }
bad_databases_body()
{
	mkfix
	echo hello > text.txt
	atf_check -s exit:1 -o empty -e inline:"hwtrace query: 'text.txt' is neither a hwtrace database nor a hwtrace archive\n" \
	    "$HWTRACE" query text.txt summary
	sqlite3 other.db "CREATE TABLE t(x)" || atf_fail "sqlite3 failed"
	atf_check -s exit:1 -o empty -e inline:"hwtrace query: 'other.db' is not a hwtrace database (SQLite application_id 0, hwtrace writes 0x68777472)\n" \
	    "$HWTRACE" query other.db summary
	cp fix.db new.db
	sqlite3 new.db "PRAGMA user_version = 9" || atf_fail "sqlite3 failed"
	atf_check -s exit:1 -o empty -e inline:"hwtrace query: 'new.db' has database schema version 9, newer than this hwtrace reads (8); use a newer hwtrace\n" \
	    "$HWTRACE" query new.db summary
	# Version 7 kept lines as a plain table.
	cp fix.db old.db
	sqlite3 old.db "PRAGMA user_version = 7" || atf_fail "sqlite3 failed"
	atf_check -s exit:1 -o empty -e inline:"hwtrace query: 'old.db' has database schema version 7, older than this hwtrace reads (8); index its archive again\n" \
	    "$HWTRACE" query old.db summary
	atf_check -s exit:1 -o empty -e inline:"hwtrace query: cannot open 'nosuch.db': No such file or directory\n" \
	    "$HWTRACE" query nosuch.db summary
}

atf_test_case chunk_short_of_its_row
chunk_short_of_its_row_head() { atf_set descr "a chunk whose blocks hold fewer instructions than its row says (block 2 cut to 2 of its 3): insns -n 1 answers at once instead of entering the chunk's last block for ever"; }
chunk_short_of_its_row_body()
{
	mkfix
	sqlite3 fix.db "UPDATE blocks SET ninsns = 2, insn_lens = x'0203' WHERE id = 2" ||
	    atf_fail "sqlite3 failed"
	rc=0
	timeout 30 "$HWTRACE" query fix.db insns -n 1 --thread 2 > i.out 2> i.err ||
	    rc=$?
	[ "$rc" -le 1 ] || atf_fail "insns -n 1: exit $rc (124: it did not end): $(cat i.err)"
}

atf_test_case coverage_file_id_far
coverage_file_id_far_head() { atf_set descr "coverage on a database whose file has id 2^63-1 (a damaged or hostile one) answers, lines without a file shown as '-', instead of an array indexed by that id (out of memory; found by make fuzz-db)"; }
coverage_file_id_far_body()
{
	mkfix
	sqlite3 fix.db "UPDATE files SET id = 9223372036854775807 WHERE id = 1" ||
	    atf_fail "sqlite3 failed"
	atf_check -s exit:0 -o match:"sum +0x401010 +- +1 +16 +5 +5" \
	    -o match:"unused +0x401040 +- +0 +0 +0 +2" -e ignore \
	    "$HWTRACE" query fix.db coverage
}

atf_test_case coverage_count_negative
coverage_count_negative_head() { atf_set descr "coverage on a database whose block of main's entry ran -2^63 times (a damaged or hostile one) takes it as not run: main entered 0 times, 1 of its 2 lines hit (the count was negated past int64; found by make fuzz-db)"; }
coverage_count_negative_body()
{
	mkfix
	sqlite3 fix.db "UPDATE blocks SET exec_count = -9223372036854775808 WHERE image_addr = 4198448" ||
	    atf_fail "sqlite3 failed"
	atf_check -s exit:0 -o match:"main +0x401030 +fix.c:24 +0 +[-0-9]+ +1 +2" \
	    -o match:"sum +0x401010 +fix.c:10 +1 +16 +5 +5" -e ignore \
	    "$HWTRACE" query fix.db coverage
}

atf_test_case coverage_counts_overflow
coverage_counts_overflow_head() { atf_set descr "coverage on a database where two overlapping blocks ran 2^63-1 times each (a damaged or hostile one): exit 1 naming where their counts add up past 2^63"; }
coverage_counts_overflow_body()
{
	mkfix
	# Blocks 1 (0x401010, 11 bytes) and 4 (0x401014, 7 bytes) overlap.
	sqlite3 fix.db "UPDATE blocks SET exec_count = 9223372036854775807 WHERE id IN (1, 4)" ||
	    atf_fail "sqlite3 failed"
	atf_check -s exit:1 -o empty \
	    -e inline:"hwtrace query: blocks: the counts of blocks at 0x401014 add up past 2^63 (a damaged database?)\n" \
	    "$HWTRACE" query fix.db coverage
}

atf_test_case usage_errors
usage_errors_head() { atf_set descr "unknown verbs and options and malformed numbers are usage errors (exit 2)"; }
usage_errors_body()
{
	mkfix
	atf_check -s exit:2 -o empty -e match:"unknown verb 'nope'" "$HWTRACE" query fix.db nope
	atf_check -s exit:2 -o empty -e match:"no verb given" "$HWTRACE" query fix.db
	atf_check -s exit:2 -o empty -e match:"unknown option '--bogus'" "$HWTRACE" query fix.db last --bogus
	atf_check -s exit:2 -o empty -e match:"-n: '1x' is not a number" "$HWTRACE" query fix.db last -n 1x
	atf_check -s exit:2 -o empty -e match:"--thread: '-1' is not a number" "$HWTRACE" query fix.db calls --thread -1
	atf_check -s exit:2 -o empty -e match:"--format: 'xml' is not table, csv, tsv or json" "$HWTRACE" query fix.db summary --format xml
	atf_check -s exit:2 -o empty -e match:"no PATTERN given" "$HWTRACE" query fix.db func
	atf_check -s exit:2 -o empty -e match:"unexpected argument 'extra'" "$HWTRACE" query fix.db summary extra
}

atf_test_case help_every_verb
help_every_verb_head() { atf_set descr "every verb has --help whose usage line is the SYNOPSIS of hwtrace-query(1)"; }
help_every_verb_body()
{
	man=$HWTRACE_SRC/docs/hwtrace-query.1
	# The SYNOPSIS rendered as text: one "hwtrace query ..." per verb.
	MANWIDTH=400 mandoc -T ascii -O width=400 "$man" | col -b |
	    sed -n '/^SYNOPSIS/,/^DESCRIPTION/p' | sed 's/^ *//' |
	    tr -s ' ' > synopsis
	for v in summary threads last calls tree func coverage hot branches \
	    timeline insns sql export bt annotate; do
		"$HWTRACE" query x.db $v --help > help ||
		    atf_fail "'$v --help' failed"
		# The usage, wrapped within 79 columns, as one line.
		line=$(sed -n '1,/^$/p' help | sed 's/^usage: //' |
		    tr -s ' \n' '  ' | sed 's/^ //; s/ $//')
		grep -qxF "$line" synopsis ||
		    atf_fail "SYNOPSIS of hwtrace-query(1) lacks '$line'; it has: $(cat synopsis)"
	done
	atf_check -s exit:0 -o match:"^usage: hwtrace query \[--db PATH\]" "$HWTRACE" query --help
}

atf_test_case archive_cache
archive_cache_head() { atf_set descr "an archive is indexed once into ARCHIVE.db (or --db) and the cache is reused"; }
archive_cache_body()
{
	mkfix
	# A zstd frame that is not a real archive: with a fresh cache beside
	# it, the cache answers and the archive is not read.
	printf '\050\265\057\375junk' > run.hwtrace
	sleep 0.01
	# A cache answers only for the archive it was made from: its meta
	# archive_id is the archive's identity (hwtrace-query(1)), for a file
	# without a trailer the SHA-256 of its size (8 bytes, little-endian)
	# and all its bytes, computed here with python3's hashlib.
	id=$(python3 -c 'import hashlib, struct, sys
d = open(sys.argv[1], "rb").read()
print("sha256:" + hashlib.sha256(struct.pack("<Q", len(d)) + d).hexdigest())' run.hwtrace)
	cp fix.db run.hwtrace.db
	sqlite3 run.hwtrace.db "INSERT OR REPLACE INTO meta VALUES ('archive_id', '$id')"
	atf_check -s exit:0 -o match:"^threads +2\$" "$HWTRACE" query run.hwtrace summary
	cp run.hwtrace.db other.db
	atf_check -s exit:0 -o match:"^threads +2\$" "$HWTRACE" query --db other.db run.hwtrace summary
	# The fixture itself, without the identity, is not trusted.
	cp fix.db run.hwtrace.db
	atf_check -s exit:1 -o empty -e match:"cannot index 'run.hwtrace'" \
	    "$HWTRACE" query run.hwtrace summary
	cp other.db run.hwtrace.db
	# A stale cache (older than the archive) is not trusted.
	touch -d '2000-01-01' run.hwtrace.db
	atf_check -s exit:1 -o empty -e match:"cannot index 'run.hwtrace'" \
	    "$HWTRACE" query run.hwtrace summary
}

atf_test_case table_shortens_only_on_terminal
table_shortens_only_on_terminal_head() { atf_set descr "long table cells are shortened to the terminal width on a terminal, never in a pipe"; }
table_shortens_only_on_terminal_body()
{
	mkfix
	long="SELECT 'abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz' AS text, 12345 AS n"
	printf 'text                                                            n\nabcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz  12345\n' > exp
	q exp sql "$long"
	# On a 40-column pseudo-terminal: rows fit, the cut is marked.
	cat > onpty.py <<'X'
import fcntl, os, pty, struct, sys, termios
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 40, 0, 0))
out = b""
while True:
    try:
        b = os.read(fd, 4096)
    except OSError:
        break
    if not b:
        break
    out += b
os.waitpid(pid, 0)
sys.stdout.write(out.decode().replace("\r\n", "\n"))
X
	printf 'text%31sn\nabcdefghijklmnopqrstuvwxyz0123...  12345\n' '' > exp
	atf_check -s exit:0 -o file:exp python3 onpty.py "$HWTRACE" query fix.db sql "$long"
}

atf_test_case foreign_views_triggers_refused
foreign_views_triggers_refused_head()
{
	atf_set descr "a view or trigger hwtrace did not write is refused, named, by every verb"
	atf_set require.progs sqlite3
	atf_set timeout 60
}
foreign_views_triggers_refused_body()
{
	mkfix
	# An endless recursive view in place of threads.
	cp fix.db view.db
	sqlite3 view.db "PRAGMA legacy_alter_table = ON;
	    ALTER TABLE threads RENAME TO t0;
	    CREATE VIEW threads AS WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL
	    SELECT x + 1 FROM r) SELECT x AS id FROM r;" ||
		atf_fail "cannot make the view"
	for v in summary threads; do
		atf_check -s exit:1 -o empty \
		    -e match:"view 'threads' was not written by hwtrace: refused" \
		    timeout 20 "$HWTRACE" query view.db $v
	done
	cp fix.db trig.db
	sqlite3 trig.db "CREATE TRIGGER tr AFTER INSERT ON meta BEGIN
	    SELECT 1; END;" || atf_fail "cannot make the trigger"
	atf_check -s exit:1 -o empty \
	    -e match:"trigger 'tr' was not written by hwtrace: refused" \
	    "$HWTRACE" query trig.db summary
	# Its own view, call_times, is read as before.
	atf_check -s exit:0 -o ignore -e empty \
	    "$HWTRACE" query fix.db sql "SELECT count(*) FROM call_times"
	# So is the view as hwtrace wrote it before it passed its archive
	# id (indexer/schema.sql.h), with the same times; one changed
	# otherwise is refused.
	"$HWTRACE" query fix.db sql --format csv "SELECT * FROM call_times" \
	    > want || atf_fail "call_times cannot be read"
	for v in before changed; do
		cp fix.db $v.db
		case $v in
		before)	edit="replace(replace(sql, ', a.id', ''), char(10) || '  CROSS JOIN (SELECT max(value) AS id FROM meta' || char(10) || '    WHERE key = ''archive_id'') a', '')" ;;
		changed) edit="replace(sql, 'k.clock AS clock', 'k.clock || '''' AS clock')" ;;
		esac
		sqlite3 $v.db "SELECT $edit || ';' FROM sqlite_master WHERE name = 'call_times'" > $v.sql &&
		    grep -q "^CREATE VIEW" $v.sql &&
		    sqlite3 $v.db "DROP VIEW call_times; $(cat $v.sql)" ||
		    atf_fail "cannot make the $v view"
	done
	! grep -q "a\.id\|CROSS JOIN (SELECT max" before.sql ||
	    atf_fail "the earlier view still has the archive id"
	grep -q "k.clock || '' AS clock" changed.sql ||
	    atf_fail "the changed view is not changed"
	atf_check -s exit:0 -o file:want -e empty \
	    "$HWTRACE" query before.db sql --format csv "SELECT * FROM call_times"
	atf_check -s exit:1 -o empty \
	    -e match:"view 'call_times' was not written by hwtrace: refused" \
	    "$HWTRACE" query changed.db summary
}

atf_test_case bt_thread_insns_negative
bt_thread_insns_negative_head()
{
	atf_set descr "bt on a database whose thread 1 ran -2^63 instructions (a damaged or hostile one): exit 1 naming the thread, not positions counted back past -2^63 (found by make fuzz-db through report)"
	atf_set require.progs "sqlite3"
}
bt_thread_insns_negative_body()
{
	mkfix
	sqlite3 fix.db "UPDATE threads SET insns = -9223372036854775808 WHERE id = 1" ||
	    atf_fail "sqlite3 cannot change the database"
	atf_check -s exit:1 -e match:"bt: thread 1: its instructions -9223372036854775808 are out of range" \
	    "$HWTRACE" query fix.db bt
}

atf_test_case range_thread_insns_negative
range_thread_insns_negative_head()
{
	atf_set descr "--from/--to on a database whose thread 1 ran -2^63 instructions, or has -5 blocks (a damaged or hostile one): exit 1 naming the thread, for every verb that takes a range, not an end counted back past -2^63 (found by make fuzz-db through timeline)"
	atf_set require.progs "sqlite3"
}
range_thread_insns_negative_body()
{
	mkfix
	cp fix.db blk.db
	sqlite3 fix.db "UPDATE threads SET insns = -9223372036854775808 WHERE id = 1" &&
	    sqlite3 blk.db "UPDATE threads SET blocks = -5 WHERE id = 1" ||
	    atf_fail "sqlite3 cannot change the database"
	for v in calls tree timeline hot annotate\ main coverage \
	    "export --perfetto p.json" "export --folded f.txt"; do
		atf_check -s exit:1 -e match:"thread 1 has -9223372036854775808 instructions in [0-9]+ blocks: out of range" \
		    "$HWTRACE" query fix.db $v --from 1 --to 5
	done
	[ ! -e p.json ] && [ ! -e f.txt ] || atf_fail "a refused export wrote its file"
	# A time range: the verbs that map it to blocks by the thread's
	# count refuse; timeline and export --perfetto search the clock
	# readings alone.
	for v in calls tree hot annotate\ main coverage "export --folded f.txt"; do
		atf_check -s exit:1 -e match:"thread 1 has [0-9]+ instructions in -5 blocks: out of range" \
		    "$HWTRACE" query blk.db $v --from 1ms --to 2ms --thread 1
	done
	for v in timeline "export --perfetto p.json"; do
		atf_check -s exit:0 -o ignore \
		    "$HWTRACE" query blk.db $v --from 1ms --to 2ms --thread 1
	done
}

atf_test_case bt_last_class_null
bt_last_class_null_head()
{
	atf_set descr "bt on a database whose blocks have no last_class (a hostile one, NOT NULL taken out of its schema): the same two frames as the fixture's, no crash (found by make fuzz-db)"
	atf_set require.progs "sqlite3"
}
bt_last_class_null_body()
{
	mkfix
	sqlite3 fix.db "PRAGMA writable_schema = ON; UPDATE sqlite_master SET sql = replace(sql, ' NOT NULL', '') WHERE name = 'blocks'; PRAGMA writable_schema = OFF" &&
	    sqlite3 fix.db "UPDATE blocks SET last_class = NULL" ||
	    atf_fail "sqlite3 cannot change the database"
	"$HWTRACE" query fix.db bt --format csv > bt.csv 2> bt.err ||
	    atf_fail "bt failed: $(cat bt.err)"
	# fixture.sql: thread 1 ends in main at fix.c:25, thread 2 in sq at
	# fix.c:6; neither last block is a call.
	cut -d, -f1-3,5 bt.csv > got
	printf 'thread,frame,function,line\n1,0,main,fix.c:25\n2,0,sq,fix.c:6\n' > want
	cmp -s want got || atf_fail "expected $(cat want | tr '\n' '|'), got $(cat got | tr '\n' '|')"
}

atf_test_case attached_database_answers_alone
attached_database_answers_alone_head()
{
	atf_set descr "with the extension, the virtual tables and the call_times view of an attached database (b.calls, b.lines, b.exec_order, b.exec_insns, b.call_times) give that database's rows, as it gives them opened alone, not the main one's"
	atf_set require.progs "sqlite3"
}
attached_database_answers_alone_body()
{
	mkfix
	ext="$HWTRACE_BUILD/hwtrace_sqlite"
	sqlite3 fix.db "INSERT INTO meta VALUES ('archive_id', 'fix')" ||
	    atf_fail "sqlite3 cannot change the fixture"
	cp fix.db other.db
	# other.db: another archive's, with thread 2's order and calls, one
	# image's lines gone and thread 1's clock readings after its first
	# moved (call_times reads them for thread 1's calls), so that each
	# answer differs from fix.db's.
	sqlite3 -cmd ".load $ext" other.db "UPDATE meta SET value = 'other' WHERE key = 'archive_id'; DELETE FROM exec_chunks WHERE thread = 2; DELETE FROM calls WHERE thread = 2; DELETE FROM line_pages WHERE image = (SELECT min(image) FROM line_pages); UPDATE timestamps SET ns = ns + 7 * seq" ||
	    atf_fail "sqlite3 cannot change the copy"
	for t in calls:count lines:count exec_order:count exec_insns:count \
	    call_times:times; do
		case ${t#*:} in
		count)	what="count(*)" ;;
		times)	what="(sum(t_entry) % 1000000) || ' ' || (sum(t_exit) % 1000000) || ' ' || sum(entry_estimated + exit_estimated)" ;;
		esac
		t=${t%:*}
		alone=$(sqlite3 -cmd ".load $ext" other.db "SELECT $what FROM $t") &&
		main=$(sqlite3 -cmd ".load $ext" fix.db "SELECT $what FROM $t") &&
		both=$(sqlite3 -cmd ".load $ext" fix.db "ATTACH 'other.db' AS b; SELECT $what FROM b.$t; SELECT $what FROM main.$t" | tr '\n' '/') ||
		    atf_fail "$t: sqlite3 failed"
		[ "$alone" != "$main" ] ||
		    atf_fail "$t: the copy was not changed ($alone)"
		[ "$both" = "$alone/$main/" ] ||
		    atf_fail "$t: b.$t and main.$t gave $both, expected $alone/$main/"
	done
	# Two databases of one archive: the same timestamps read alike, and
	# different ones (which of the two calls cannot be told) are an
	# error, not a guess.
	cp fix.db same.db
	sqlite3 other.db "UPDATE meta SET value = 'fix' WHERE key = 'archive_id'" ||
	    atf_fail "sqlite3 cannot change the copy"
	what="(sum(t_entry) % 1000000) || ' ' || (sum(t_exit) % 1000000)"
	main=$(sqlite3 -cmd ".load $ext" fix.db "SELECT $what FROM call_times")
	atf_check -s exit:0 -o inline:"$main\n$main\n" -e empty \
	    sqlite3 -cmd ".load $ext" fix.db "ATTACH 'same.db' AS b; SELECT $what FROM b.call_times; SELECT $what FROM main.call_times"
	atf_check -s not-exit:0 -o ignore \
	    -e match:"two databases of this connection have that archive_id and different timestamps" \
	    sqlite3 -bail -cmd ".load $ext" fix.db "ATTACH 'other.db' AS b; SELECT $what FROM b.call_times"
}

atf_init_test_cases()
{
	atf_add_test_case foreign_views_triggers_refused
	atf_add_test_case summary_counts
	atf_add_test_case threads_formats
	atf_add_test_case last_blocks
	atf_add_test_case last_insns
	atf_add_test_case calls_and_tree
	atf_add_test_case func_invocations
	atf_add_test_case coverage_lcov_genhtml
	atf_add_test_case hot_by
	atf_add_test_case branches_filters
	atf_add_test_case timeline_window
	atf_add_test_case timeline_event_id_extreme
	atf_add_test_case insns_history
	atf_add_test_case sql_read_only
	atf_add_test_case sql_hardened
	atf_add_test_case verbs_time_limit
	atf_add_test_case tree_sums_out_of_range
	atf_add_test_case export_perfetto
	atf_add_test_case bad_databases
	atf_add_test_case chunk_short_of_its_row
	atf_add_test_case coverage_file_id_far
	atf_add_test_case coverage_count_negative
	atf_add_test_case coverage_counts_overflow
	atf_add_test_case usage_errors
	atf_add_test_case help_every_verb
	atf_add_test_case archive_cache
	atf_add_test_case table_shortens_only_on_terminal
	atf_add_test_case bt_thread_insns_negative
	atf_add_test_case range_thread_insns_negative
	atf_add_test_case bt_last_class_null
	atf_add_test_case attached_database_answers_alone
}
