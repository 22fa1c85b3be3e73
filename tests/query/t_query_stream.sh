#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Long answers of hwtrace query: calls, func and tree over a synthetic
# history (tests/query/mkdb.c -s: 2,859 calls, longer than one streamed
# block of 1024 rows).  calls and func format raw calls rows in C with
# cached names and callers, tree merges by hashed names: each is compared
# with the same answer computed by SQLite alone from hwtrace-db(5) (the
# joins that page gives), not with an earlier run of ours.  A reader that
# goes away (| head) ends the command quietly, as it ends cat(1).

. "$(atf_get_srcdir)/../env.sh"
. "$HWTRACE_SRC/tests/lib/hwtr_test.sh"

mkbig()
{
	"$HWTRACE_BUILD/bench/qmkdb" -s 20000 big.db >/dev/null 2>&1 ||
	    atf_fail "cannot make the synthetic database"
}

# The calls columns, by SQL only (hwtrace-db(5), "Use parent to name the
# caller"); start_ns is relative to the first decoded time.
CALLS_SQL="SELECT c.id, c.thread, c.depth,
 coalesce(s.name, printf('%#x', c.func_ip)),
 CASE WHEN pc.id IS NULL THEN NULL ELSE coalesce(ps.name,
  printf('%#x', pc.func_ip)) END,
 CASE WHEN c.call_ip IS NULL THEN NULL ELSE printf('%#x', c.call_ip) END,
 c.entry_seq, c.entry_insn,
 c.entry_ns - (SELECT coalesce((SELECT min(first_ns) FROM threads),
  (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'start_ns'), 0)),
 c.exit_ns - c.entry_ns, c.insns, c.self_insns, c.blocks, c.entry_kind,
 c.exit_kind
 FROM calls c LEFT JOIN symbols s ON s.id = c.symbol
 LEFT JOIN calls pc ON pc.id = c.parent
 LEFT JOIN symbols ps ON ps.id = pc.symbol"

HDR="call	thread	depth	function	caller	call_site	seq	insn	start_ns	duration_ns	insns	self_insns	blocks	entry_kind	exit_kind"

# same WHAT ARGS -- SQL: the verb's TSV is the header plus SQL's rows.
same()
{
	what=$1
	shift
	args=
	while [ "$1" != "--" ]; do
		args="$args $1"
		shift
	done
	shift
	"$HWTRACE" query big.db $args --format tsv > got ||
	    atf_fail "$what: hwtrace query$args failed"
	"$HWTRACE" query big.db sql --format tsv "$1" | tail -n +2 > rows ||
	    atf_fail "$what: the SQL reference failed"
	{ echo "$HDR"; cat rows; } > exp
	n=$(wc -l < rows)
	[ "$n" -gt 1024 ] || atf_fail "$what: only $n rows, not a long answer"
	expect_same exp got "$what: differs from SQLite's answer ($n rows expected)"
}

atf_test_case calls_long_matches_sql
calls_long_matches_sql_head() { atf_set descr "calls of a whole thread, streamed in blocks, equals the answer SQLite computes by joins, in every format"; }
calls_long_matches_sql_body()
{
	mkbig
	same "calls --thread 1" calls --thread 1 -- \
	    "$CALLS_SQL WHERE c.thread = 1 ORDER BY c.entry_seq, c.id"
	same "calls --depth 1" calls --depth 1 -- \
	    "$CALLS_SQL WHERE c.depth <= 1 ORDER BY c.id"
	same "calls -n 1500" calls --thread 1 -n 1500 -- \
	    "$CALLS_SQL WHERE c.thread = 1 ORDER BY c.entry_seq, c.id LIMIT 1500"
	# The same rows as a table: one header, every row's fields.
	"$HWTRACE" query big.db calls --thread 1 > table ||
	    atf_fail "calls as a table failed"
	"$HWTRACE" query big.db calls --thread 1 --format tsv |
	    sed 's/\t\t/\t-\t/g; s/\t\t/\t-\t/g' | tr '\t' ' ' > exp
	awk '{ $1 = $1; print }' table > got
	expect_same exp got "the table's cells differ from the TSV's"
	[ "$(grep -c '^call ' table)" = 1 ] ||
	    atf_fail "expected one header line in the streamed table"
	# Aligned throughout: the numeric columns are as wide as their bounds
	# from the threads table, so every row (but its last, unpadded
	# column) has the same length, across blocks too.
	n=$(tail -n +2 table | sed 's/ *[^ ]*$//' | awk '{ print length($0) }' |
	    sort -u | wc -l)
	[ "$n" = 1 ] || atf_fail "expected rows of one width in the streamed" \
	    "table, got $n widths"
	# JSON across blocks: one array, every row.
	"$HWTRACE" query big.db calls --thread 1 --format json > out.json ||
	    atf_fail "calls --format json failed"
	atf_check -s exit:0 -o inline:"2859 1 main w0 None\n" python3 -c '
import json
r = json.load(open("out.json"))
print(len(r), r[0]["call"], r[0]["function"], r[1]["function"], r[0]["caller"])'
}

atf_test_case func_long_matches_sql
func_long_matches_sql_head() { atf_set descr "func over many invocations (a glob) equals SQLite's answer by joins"; }
func_long_matches_sql_body()
{
	mkbig
	same "func 'w[0-3]*'" func 'w[0-3]*' -- \
	    "$CALLS_SQL WHERE s.name GLOB 'w[0-3]*' ORDER BY c.id"
}

atf_test_case tree_matches_sql
tree_matches_sql_head() { atf_set descr "tree --depth 1 merges main's callees as SQLite's GROUP BY does"; }
tree_matches_sql_body()
{
	mkbig
	"$HWTRACE" query big.db tree --depth 1 --format tsv | tail -n +3 |
	    cut -f 4-8 > got || atf_fail "tree failed"
	"$HWTRACE" query big.db sql --format tsv "SELECT count(*), sum(c.insns),
	    sum(c.self_insns), sum(c.exit_ns - c.entry_ns), 'main/' || s.name
	    FROM calls c JOIN symbols s ON s.id = c.symbol WHERE c.depth = 1
	    GROUP BY s.name ORDER BY min(c.id)" | tail -n +2 > exp ||
	    atf_fail "the SQL reference failed"
	[ "$(wc -l < exp)" = 64 ] || atf_fail "expected 64 callees of main," \
	    "SQL gives $(wc -l < exp)"
	expect_same exp got "tree differs from SQL"
}

atf_test_case roots_match_sql
roots_match_sql_head() { atf_set descr "calls --depth 0 and tree --depth 0 find the roots through calls_thread, a lookup each: the same as SQLite's parent IS NULL on a history of many roots per thread (a trace that starts inside functions and returns past them)"; }
roots_match_sql_body()
{
	"$HWTRACE_BUILD/bench/qmkdb" fix.db \
	    "$HWTRACE_SRC/tests/query/fixture.sql" ||
	    atf_fail "cannot make the fixture database"
	# Per thread T (1, 2), 600 roots one after the other, each returning
	# where the next starts (exit_seq = next entry_seq), root J holding
	# J mod 3 children and each child one grandchild; ids in (thread,
	# entry position) order, as the indexer numbers them.
	awk 'BEGIN {
		id = 0
		print "BEGIN; DELETE FROM calls;"
		for (t = 1; t <= 2; t++) {
			seq = 0
			for (j = 0; j < 600; j++) {
				n = j % 3
				len = 1 + 2 * n
				root = ++id
				ek = j == 0 ? "start" : "return"
				xk = j == 599 ? "end" : "return"
				row(root, t, "NULL", 0, 1 + j % 2, ek, xk, seq,
				    seq + len + 1)
				s = seq + 1
				for (k = 0; k < n; k++) {
					c = ++id
					row(c, t, root, 1, 3, "call", "return", s,
					    s + 2)
					row(++id, t, c, 2, 1, "call", "return",
					    s + 1, s + 2)
					s += 2
				}
				seq += len + 1
			}
		}
		print "COMMIT;"
	}
	function row(i, t, p, d, sym, ek, xk, a, b) {
		printf "INSERT INTO calls VALUES (%d, %d, %s, %d, %d, %d, " \
		    "%s, \x27%s\x27, \x27%s\x27, %d, %d, %d, %d, %d, %d, " \
		    "%d, %d, %d, %d, %d);\n", i, t, p, d, sym,
		    4198400 + 16 * sym, p == "NULL" ? "NULL" : "4198453", ek,
		    xk, a, b, 3 * a, 3 * b, 1000 + a, 1000 + b,
		    1700000000000001000 + a, 1700000000000001000 + b,
		    3 * (b - a), 3, b - a
	}' > gen.sql
	sqlite3 -cmd ".load $HWTRACE_BUILD/hwtrace_sqlite" fix.db < gen.sql ||
	    atf_fail "cannot write the calls"
	[ "$(sqlite3 -cmd ".load $HWTRACE_BUILD/hwtrace_sqlite" fix.db 'SELECT count(*) FROM calls WHERE parent IS NULL')" = 1200 ] ||
		atf_fail "the generated history does not have 1200 roots"
	for th in "" "--thread 2"; do
		w=${th:+AND c.thread = 2}
		"$HWTRACE" query fix.db calls $th --depth 0 --format tsv |
		    tail -n +2 > got || atf_fail "calls $th --depth 0 failed"
		"$HWTRACE" query fix.db sql --format tsv "$CALLS_SQL
		    WHERE c.parent IS NULL $w ORDER BY c.thread, c.entry_seq,
		    c.id" | tail -n +2 > exp ||
			atf_fail "the SQL reference failed"
		[ "$(wc -l < exp)" -ge 600 ] || atf_fail "few roots: $(wc -l < exp)"
		expect_same exp got "calls $th --depth 0 differs from parent IS NULL"
	done
	"$HWTRACE" query fix.db tree --depth 0 --format tsv | tail -n +2 |
	    cut -f 1,4 > got || atf_fail "tree --depth 0 failed"
	"$HWTRACE" query fix.db sql --format tsv "SELECT c.thread, count(*)
	    FROM calls c WHERE c.parent IS NULL GROUP BY c.thread, c.symbol
	    ORDER BY c.thread, min(c.id)" | tail -n +2 > exp ||
		atf_fail "the SQL reference failed"
	expect_same exp got "tree --depth 0 differs from parent IS NULL"
}

atf_test_case windows_across_chunks
windows_across_chunks_head() { atf_set descr "insns --from and last windows across an exec_chunks boundary equal the whole expansion filtered by SQLite"; }
windows_across_chunks_body()
{
	# More blocks than a chunk holds (chunk_blocks, hwtrace-db(5)).
	"$HWTRACE_BUILD/bench/qmkdb" -s 150000 big.db >/dev/null 2>&1 ||
	    atf_fail "cannot make the synthetic database"
	c=$("$HWTRACE" query big.db sql --format csv "SELECT value FROM meta
	    WHERE key = 'chunk_blocks'" | tail -n 1)
	[ "$c" = 65536 ] || atf_fail "chunk_blocks is $c, not 65536"
	# Where the second chunk starts (blocks $c on).
	b=$("$HWTRACE" query big.db sql --format csv "SELECT insn FROM
	    exec_chunks WHERE thread = 1 AND seq = $c" | tail -n 1)
	[ -n "$b" ] && [ "$b" -gt 10 ] || atf_fail "no second chunk ($b)"
	"$HWTRACE" query big.db insns --thread 1 --from $((b - 3)) --count 7 \
	    --format csv | cut -d, -f2,3 > got || atf_fail "insns failed"
	# "+ 0" hides the constraints from exec_insns: it expands everything.
	"$HWTRACE" query big.db sql --format csv "SELECT e.insn AS insn,
	    printf('%#x', e.ip) AS address FROM exec_insns e WHERE
	    e.thread + 0 = 1 AND e.insn + 0 >= $((b - 3)) AND
	    e.insn + 0 < $((b + 4)) ORDER BY e.insn" > exp
	[ "$(wc -l < exp)" = 8 ] || atf_fail "expected 7 instructions from SQL"
	expect_same exp got "insns across a chunk boundary"
	"$HWTRACE" query big.db sql --format csv "SELECT e.seq, e.block FROM
	    exec_order e WHERE e.thread = 1 AND e.seq >= $((c - 6)) AND
	    e.seq < $((c + 4)) ORDER BY e.seq" > got ||
		atf_fail "exec_order window failed"
	"$HWTRACE" query big.db sql --format csv "SELECT e.seq, e.block FROM
	    exec_order e WHERE e.thread + 0 = 1 AND e.seq + 0 >= $((c - 6)) AND
	    e.seq + 0 < $((c + 4)) ORDER BY e.seq" > exp
	[ "$(wc -l < exp)" = 11 ] || atf_fail "expected 10 blocks from SQL"
	expect_same exp got "exec_order across a chunk boundary"
	# Inside the second chunk, by seq and by instruction: the blocks
	# before the bound are passed without a row (exec_vtab.c xo_skip()).
	# exec_order by instruction gives the blocks holding one in the range.
	lo=$((b + 99997)) hi=$((b + 100003))
	for w in "exec_order seq 100000 100004" "exec_insns seq 100000 100001" \
	    "exec_insns insn $lo $hi" "exec_order insn $lo $hi"; do
		set -- $w
		"$HWTRACE" query big.db sql --format csv "SELECT e.seq, e.block,
		    e.insn FROM $1 e WHERE e.thread = 1 AND e.$2 >= $3 AND
		    e.$2 <= $4 ORDER BY e.seq, e.insn" > got ||
			atf_fail "$1 window by $2 failed"
		if [ "$1 $2" = "exec_order insn" ]; then
			cond="e.insn + 0 + b.ninsns > $3 AND e.insn + 0 <= $4"
		else
			cond="e.$2 + 0 >= $3 AND e.$2 + 0 <= $4"
		fi
		"$HWTRACE" query big.db sql --format csv "SELECT e.seq, e.block,
		    e.insn FROM $1 e JOIN blocks b ON b.id = e.block WHERE
		    e.thread + 0 = 1 AND $cond ORDER BY e.seq, e.insn" > exp
		[ "$(wc -l < exp)" -gt 2 ] ||
		    atf_fail "$1 by $2: expected rows from SQL"
		expect_same exp got "$1 by $2 inside a chunk"
	done
}

atf_test_case insns_first_rows_at_once
insns_first_rows_at_once_head() { atf_set descr "insns -n N | head prints its first rows at once whatever N (6 M instructions: within 5 s where sorting them first took 13 s), and its rows are SQLite's sorted expansion"; }
insns_first_rows_at_once_body()
{
	"$HWTRACE_BUILD/bench/qmkdb" -s 2000000 huge.db >/dev/null 2>&1 ||
	    atf_fail "cannot make the synthetic database"
	n=$("$HWTRACE" query huge.db sql --format csv "SELECT insns FROM
	    threads WHERE id = 1" | tail -n 1)
	[ "$n" -gt 5000000 ] || atf_fail "expected over 5 M instructions, got $n"
	t0=$(date +%s%N)
	"$HWTRACE" query huge.db insns -n "$n" --format csv | head -n 3 > got
	ms=$((($(date +%s%N) - t0) / 1000000))
	[ "$(wc -l < got)" = 3 ] || atf_fail "insns printed no rows: $(cat got)"
	[ "$ms" -lt 5000 ] ||
	    atf_fail "insns -n $n: the first rows took $ms ms, expected under 5000"
	# "+ 0" hides the constraints and the order from exec_insns: SQLite
	# sorts the whole expansion itself.
	"$HWTRACE" query huge.db insns --from 1000 --count 5000 --format csv |
	    cut -d, -f2,3 > got || atf_fail "insns failed"
	"$HWTRACE" query huge.db sql --format csv "SELECT e.insn AS insn,
	    printf('%#x', e.ip) AS address FROM exec_insns e WHERE
	    e.thread + 0 = 1 AND e.insn + 0 >= 1000 AND e.insn + 0 < 6000
	    ORDER BY e.insn + 0" > exp
	[ "$(wc -l < exp)" = 5001 ] || atf_fail "expected 5000 instructions from SQL"
	expect_same exp got "insns differs from SQLite's order"
}

atf_test_case reader_gone_quiet
reader_gone_quiet_head() { atf_set descr "| head ends a long answer quietly, by SIGPIPE (status 141), also where SIGPIPE was ignored"; }
reader_gone_quiet_body()
{
	mkbig
	( "$HWTRACE" query big.db calls --thread 1 2> err; echo $? > status ) |
	    head -n 5 > out
	[ "$(cat status)" = 141 ] || atf_fail "expected status 141 (SIGPIPE)," \
	    "got $(cat status)"
	[ "$(wc -l < out)" = 5 ] || atf_fail "expected 5 lines through head"
	[ -s err ] && atf_fail "expected nothing on stderr, got: $(cat err)"
	# SIGPIPE ignored by the parent: EPIPE is handled the same way.
	( trap '' PIPE; "$HWTRACE" query big.db calls --thread 1 --format csv \
	    2> err; echo $? > status ) | head -n 5 > out
	[ "$(cat status)" = 141 ] || atf_fail "SIGPIPE ignored: expected" \
	    "status 141, got $(cat status)"
	[ -s err ] && atf_fail "SIGPIPE ignored: expected nothing on" \
	    "stderr, got: $(cat err)"
	# A write error that is not the reader going away is an error.
	if [ -w /dev/full ]; then
		"$HWTRACE" query big.db calls --thread 1 > /dev/full 2> err
		st=$?
		[ "$st" = 1 ] || atf_fail "/dev/full: expected exit 1, got $st"
		grep -q '^hwtrace query: cannot write the answer: No space' err ||
		    atf_fail "/dev/full: expected 'cannot write the answer'," \
		    "got: $(cat err)"
	fi
	true
}

atf_test_case writes_match_a_plain_table
writes_match_a_plain_table_head()
{
	atf_set descr "DELETE, UPDATE (of ids too) and INSERT through calls, in and out of transactions, savepoints and rollbacks, leave the rows the same statements leave in a plain SQLite table, scanned whole and by symbol (the symbol copy), read by another connection: deletes are written a page at a time, before anything reads"
	atf_set require.progs "sqlite3"
}
writes_match_a_plain_table_body()
{
	# 28,573 calls in 28 pages, 65 symbols: more symbol pages than a
	# delete keeps pending (32).
	"$HWTRACE_BUILD/bench/qmkdb" -s 200000 w.db >/dev/null 2>&1 ||
	    atf_fail "cannot make the synthetic database"
	ext="$HWTRACE_BUILD/hwtrace_sqlite"
	sqlite3 -cmd ".load $ext" w.db "CREATE TABLE plain AS SELECT * FROM calls; CREATE TABLE keep AS SELECT * FROM calls" ||
	    atf_fail "cannot copy the calls"
	cat > ops.sql <<'EOF'
DELETE FROM T WHERE id % 3 = 0 AND id < 20000;
BEGIN;
DELETE FROM T WHERE symbol = 5;
SAVEPOINT a;
DELETE FROM T WHERE id % 7 = 1;
ROLLBACK TO a;
DELETE FROM T WHERE id BETWEEN 21000 AND 21500;
RELEASE a;
COMMIT;
BEGIN;
DELETE FROM T WHERE id % 2 = 0;
ROLLBACK;
BEGIN;
DELETE FROM T WHERE id IN (25001, 25002, 25003);
INSERT INTO T SELECT * FROM keep WHERE id = 25002;
COMMIT;
UPDATE T SET insns = insns + 1, symbol = 40 WHERE id BETWEEN 26000 AND 26100;
BEGIN;
DELETE FROM T WHERE id BETWEEN 27000 AND 27100;
SELECT count(*), sum(id) FROM T WHERE id BETWEEN 26900 AND 27200;
DELETE FROM T WHERE symbol IN (7, 9) AND id > 1000;
COMMIT;
DELETE FROM T WHERE id > 28000 AND symbol = 11;
UPDATE T SET id = id + 100000 WHERE id BETWEEN 24000 AND 24300;
BEGIN;
DELETE FROM T WHERE id = 23001;
UPDATE T SET id = id - 1 WHERE id BETWEEN 23002 AND 23050;
UPDATE T SET id = id + 200000 WHERE id BETWEEN 23100 AND 23200;
COMMIT;
SELECT count(*), sum(id), sum(insns) FROM T;
EOF
	for t in calls plain; do
		sed "s/\bT\b/$t/g" ops.sql | sqlite3 -bail -cmd ".load $ext" w.db > "ops.$t" ||
		    atf_fail "the statements on $t failed: $(cat "ops.$t")"
	done
	cmp -s ops.calls ops.plain ||
	    atf_fail "the statements' answers differ: calls $(tr '\n' ' ' < ops.calls), plain $(tr '\n' ' ' < ops.plain)"
	[ "$(sed -n 2p ops.plain | cut -d'|' -f1)" -lt 28573 ] ||
	    atf_fail "nothing was deleted: $(cat ops.plain)"
	# Another connection: whole, in id order, and by symbol.
	for t in calls plain; do
		sqlite3 -cmd ".load $ext" w.db "SELECT * FROM $t ORDER BY id" > "all.$t" &&
		sqlite3 -cmd ".load $ext" w.db "WITH RECURSIVE s(v) AS (SELECT 0 UNION ALL SELECT v + 1 FROM s WHERE v < 70) SELECT v, (SELECT group_concat(id) FROM (SELECT id FROM $t WHERE symbol = s.v ORDER BY id)) FROM s" > "sym.$t" ||
		    atf_fail "cannot read $t"
	done
	cmp -s all.calls all.plain ||
	    atf_fail "rows differ: $(diff all.plain all.calls | head -5 | tr '\n' ' ')"
	cmp -s sym.calls sym.plain ||
	    atf_fail "rows by symbol differ: $(diff sym.plain sym.calls | head -3 | cut -c1-200 | tr '\n' ' ')"
	# The storage agrees with itself: the pages' counts are their rows'.
	n=$(sqlite3 -cmd ".load $ext" w.db "SELECT (SELECT sum(n) FROM calls_pages) + (SELECT count(*) FROM calls_rows) = (SELECT count(*) FROM calls)")
	[ "$n" = 1 ] || atf_fail "calls_pages' counts do not add up to the rows"
	# An id taken by a row of a page with deletes pending is still taken:
	# 22501 moves away (a pending delete in 22503's page), then 22502
	# onto 22503.
	n=$(sqlite3 -cmd ".load $ext" w.db "SELECT count(*) FROM calls WHERE id IN (22501, 22502, 22503)")
	[ "$n" = 3 ] || atf_fail "expected ids 22501 to 22503, got $n of them"
	sqlite3 -bail -cmd ".load $ext" w.db "DELETE FROM calls WHERE id = 22401" \
	    "UPDATE calls SET id = CASE id WHEN 22501 THEN 22401 ELSE 22503 END WHERE id IN (22501, 22502)" > upd.out 2>&1 &&
	    atf_fail "an UPDATE onto id 22503, which exists, succeeded"
	grep -q "id 22503 exists" upd.out || atf_fail "expected 'id 22503 exists', got $(cat upd.out)"
}

atf_init_test_cases()
{
	atf_add_test_case calls_long_matches_sql
	atf_add_test_case func_long_matches_sql
	atf_add_test_case tree_matches_sql
	atf_add_test_case roots_match_sql
	atf_add_test_case windows_across_chunks
	atf_add_test_case insns_first_rows_at_once
	atf_add_test_case reader_gone_quiet
	atf_add_test_case writes_match_a_plain_table
}
