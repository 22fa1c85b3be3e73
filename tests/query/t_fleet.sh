#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# hwtrace export --postgres and hwtrace fleet against a real PostgreSQL
# server (Debian's package, started in a temporary directory on a Unix
# socket only: tests/query/pg_helpers.sh).  Valgrind captures of the
# fixture programs are exported; every fleet answer is checked against
# each run's SQLite database (sqlite3), against lcov's own sum of the
# per-run tracefiles, against sha256sum and against psql.

. "$(atf_get_srcdir)/../env.sh"
. "$HWTRACE_SRC/tests/lib/hwtr_test.sh"
. "$HWTRACE_SRC/tests/query/pg_helpers.sh"

# capture NAME PROG [ARGS...]: a valgrind capture NAME.hwtrace, indexed
# into NAME.hwtrace.db.
capture()
{
	name=$1
	shift
	[ -x "$HWTRACE_PROGS/calls" ] || atf_skip "fixture programs not built"
	if ! "$HWTRACE" capture --source valgrind -o "$name.hwtrace" -- "$@" \
	    > "$name.out" 2> "$name.err"; then
		grep -qi "valgrind" "$name.err" &&
		    atf_skip "cannot capture with valgrind here: $(oneline "$name.err")"
		atf_fail "capture of $*: $(oneline "$name.err")"
	fi
	"$HWTRACE" index -o "$name.hwtrace.db" "$name.hwtrace" 2> "$name.ixerr" ||
	    atf_fail "index of $name: $(oneline "$name.ixerr")"
}

# Three runs: two of the calls fixture (failing, by label), one of hello
# (passing).
three_runs()
{
	capture c1 "$HWTRACE_PROGS/calls"
	capture c2 "$HWTRACE_PROGS/calls"
	capture h1 "$HWTRACE_PROGS/hello"
	atf_check -s exit:0 -o match:"^run 1: 'c1.hwtrace' exported" \
	    -o match:"^run 2: 'c2.hwtrace' exported" -e empty \
	    "$HWTRACE" export --postgres "$URL" --label result=fail \
	    --label test=t1 c1.hwtrace c2.hwtrace
	atf_check -s exit:0 -o match:"^run 3: 'h1.hwtrace' exported" -e empty \
	    "$HWTRACE" export --postgres "$URL" --label result=pass \
	    --label test=t1 h1.hwtrace
}

# fleet_func_is PATTERN FIELDS WANT: hwtrace fleet func PATTERN's rows
# (CSV, no header) cut to FIELDS (cut -f) are WANT (an atf_check inline
# text, \n between lines).
fleet_func_is()
{
	atf_check -s exit:0 -o inline:"$3" sh -c \
	    "'$HWTRACE' fleet '$URL' func '$1' --format csv | tail -n +2 | cut -d, -f$2"
}

# Row counts of every table of the schema, one line each.
table_counts()
{
	$PSQL "$URL" -c "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'hwtrace' AND c.relkind IN ('r', 'p') ORDER BY 1" |
	while read -r t; do
		echo "$t $($PSQL "$URL" -c "SELECT count(*) FROM hwtrace.$t")"
	done
}

atf_test_case runs_identity cleanup
runs_identity_head() { atf_set descr "each run keeps its archive's SHA-256 (as sha256sum), command, exit status, host, capture time and labels; bulk tables are partitioned by run"; }
runs_identity_body()
{
	pg_start
	three_runs
	"$HWTRACE" fleet --format csv "$URL" runs > runs.csv 2> err ||
	    atf_fail "fleet runs: $(oneline err)"
	[ "$(tail -n +2 runs.csv | wc -l)" -eq 3 ] || atf_fail "expected 3 runs: $(oneline runs.csv)"
	i=1
	for n in c1 c2 h1; do
		sum=$(sha256sum "$n.hwtrace" | cut -d' ' -f1)
		grep -q "^$i,$sum,$HWTRACE_PROGS/[a-z]*,code 0,$(uname -n),20[0-9-]*T[0-9:]*Z,valgrind," runs.csv ||
		    atf_fail "run $i: expected sha256 $sum, exit 0, host $(uname -n): $(oneline runs.csv)"
		i=$((i + 1))
	done
	grep -q '^3,.*/hello,.*""result"" : ""pass"", ""test"" : ""t1""' runs.csv ||
	    atf_fail "run 3's labels: $(oneline runs.csv)"
	# Filtering by label.
	atf_check -s exit:0 -o inline:"run\n1\n2\n" sh -c \
	    "'$HWTRACE' fleet --format csv '$URL' runs --label result=fail --label test=t1 | cut -d, -f1"
	atf_check -s exit:0 -o inline:"run\n" sh -c \
	    "'$HWTRACE' fleet --format csv '$URL' runs --label result=other | cut -d, -f1"
	# The capture time is the archive's start, to the microsecond.
	start=$(sqlite3 c1.hwtrace.db "SELECT value FROM meta WHERE key = 'start_ns'")
	atf_check -s exit:0 -o inline:"$((start / 1000))\n" \
	    $PSQL "$URL" -c "SELECT (extract(epoch FROM captured) * 1000000)::bigint FROM hwtrace.runs WHERE id = 1"
	# Declarative partitioning: one partition per run of each bulk table.
	for t in threads block_counts branches calls func_counts; do
		pg_is "p 3" \
		    "SELECT c.relkind::text || ' ' || (SELECT count(*) FROM pg_inherits WHERE inhparent = c.oid) FROM pg_class c WHERE c.oid = 'hwtrace.$t'::regclass"
	done
}
runs_identity_cleanup() { pg_stop; }

atf_test_case static_data_once cleanup
static_data_once_head() { atf_set descr "images, symbols, lines and blocks of a build-id are stored once however many runs have them; exporting again changes nothing; a database operand is its archive's run"; }
static_data_once_body()
{
	pg_start
	three_runs
	key=$(sqlite3 c1.hwtrace.db "SELECT key FROM images WHERE path LIKE '%/calls'")
	[ -n "$key" ] || atf_fail "no image of calls in c1's database"
	want=$(sqlite3 c1.hwtrace.db "SELECT count(*) FROM symbols s JOIN images i ON i.id = s.image WHERE i.key = '$key'")
	pg_is "1 $want" \
	    "SELECT count(*) || ' ' || (SELECT count(*) FROM hwtrace.symbols s JOIN hwtrace.images i ON i.id = s.image WHERE i.key = '$key') FROM hwtrace.images WHERE key = '$key'"
	want=$(sqlite3 -cmd ".load $HWTRACE_BUILD/hwtrace_sqlite" c1.hwtrace.db "SELECT count(*) FROM lines l JOIN images i ON i.id = l.image WHERE i.key = '$key'")
	pg_is "$want" \
	    "SELECT count(*) FROM hwtrace.lines l JOIN hwtrace.images i ON i.id = l.image WHERE i.key = '$key'"
	# Blocks: the distinct static blocks of both runs of calls.
	for n in c1 c2; do
		sqlite3 "$n.hwtrace.db" "SELECT b.image_addr || ' ' || b.size || ' ' || b.mode FROM blocks b JOIN images i ON i.id = b.image WHERE i.key = '$key' AND b.image_addr IS NOT NULL"
	done | sort -u > want.blocks
	$PSQL "$URL" -c "SELECT b.addr || ' ' || b.size || ' ' || b.mode FROM hwtrace.blocks b JOIN hwtrace.images i ON i.id = b.image WHERE i.key = '$key'" | sort > got.blocks
	[ -s want.blocks ] || atf_fail "no blocks in the calls image"
	cmp -s want.blocks got.blocks ||
	    atf_fail "blocks of calls: expected $(wc -l < want.blocks) distinct, got $(wc -l < got.blocks) ($(diff want.blocks got.blocks | head -5 | tr '\n' ' '))"
	# Again: nothing changes, whatever the labels.
	table_counts > before
	atf_check -s exit:0 -o match:"^run 1: 'c1.hwtrace' was exported before" \
	    -o match:"^run 3: 'h1.hwtrace' was exported before" \
	    "$HWTRACE" export --postgres "$URL" --label result=other c1.hwtrace h1.hwtrace
	# The database of c2 names its archive: the same run.
	atf_check -s exit:0 -o match:"^run 2: 'c2.hwtrace.db' was exported before" \
	    "$HWTRACE" export --postgres "$URL" c2.hwtrace.db
	table_counts > after
	cmp -s before after || atf_fail "a second export changed rows: $(diff before after | tr '\n' ' ')"
	pg_is "fail" "SELECT value FROM hwtrace.labels WHERE run = 1 AND key = 'result'"
	# A database whose archive is gone cannot say which run it is.
	mv c1.hwtrace gone.hwtrace
	cp c1.hwtrace.db alone.db
	atf_check -s exit:1 -o empty -e match:"alone.db' was indexed from 'c1.hwtrace', which cannot be read.*nothing was exported" \
	    "$HWTRACE" export --postgres "$URL" alone.db
}
static_data_once_cleanup() { pg_stop; }

atf_test_case func_and_coverage_match_sqlite cleanup
func_and_coverage_match_sqlite_head() { atf_set descr "fleet func and coverage (and its lcov file) agree with each run's SQLite database, with lcov -a over the per-run tracefiles, with the fixture's source and with psql"; }
func_and_coverage_match_sqlite_body()
{
	pg_start
	three_runs
	# func: calls per run, from each database.
	for f in add sub computed_goto main; do
		: > want
		i=1
		for n in c1 c2 h1; do
			k=$(sqlite3 -cmd ".load $HWTRACE_BUILD/hwtrace_sqlite" "$n.hwtrace.db" "SELECT count(*) FROM calls c JOIN symbols s ON s.id = c.symbol WHERE s.name = '$f'")
			[ "$k" -gt 0 ] && echo "$i,$f,$k" >> want
			i=$((i + 1))
		done
		"$HWTRACE" fleet "$URL" func "$f" --format csv > got.csv 2> err ||
		    atf_fail "fleet func $f: $(oneline err)"
		tail -n +2 got.csv | cut -d, -f1,2,4 > got
		cmp -s want got || atf_fail "func $f: expected $(oneline want), got $(oneline got)"
	done
	# The fixture's own counts: add 15 times per run of calls.
	fleet_func_is 'ad?' 1,2,4 "1,add,15\n2,add,15\n"
	fleet_func_is '[a]d*' 1,2,4 "1,add,15\n2,add,15\n"
	# LIKE's own wildcards are plain characters of a glob.
	atf_check -s exit:1 -e match:"no run called a function matching 'a%\\*'" "$HWTRACE" fleet "$URL" func 'a%*'
	atf_check -s exit:1 -e match:"no run called a function matching 'a_d\\*'" "$HWTRACE" fleet "$URL" func 'a_d*'
	pg_is "30" \
	    "SELECT sum(f.calls) FROM hwtrace.func_counts f JOIN hwtrace.symbols s ON s.id = f.symbol WHERE s.name = 'add'"
	atf_check -s exit:1 -o empty -e match:"no run called a function matching 'no_such_fn'" \
	    "$HWTRACE" fleet "$URL" func no_such_fn
	# coverage: runs and instructions per function, summed over runs.
	for n in c1 c2 h1; do
		sqlite3 -separator '	' "$n.hwtrace.db" "SELECT i.path, s.name, sum(b.exec_count * b.ninsns) FROM blocks b JOIN symbols s ON s.id = b.symbol JOIN images i ON i.id = s.image GROUP BY i.path, s.name"
	done | awk -F'\t' '{ k = $1 "\t" $2; r[k]++; s[k] += $3 } END { for (k in r) print k "\t" r[k] "\t" s[k] }' |
	    LC_ALL=C sort > want.cov
	"$HWTRACE" fleet "$URL" coverage --format tsv --lcov fleet.info > got.tsv 2> err ||
	    atf_fail "fleet coverage: $(oneline err)"
	tail -n +2 got.tsv | cut -f1,2,3,5 | LC_ALL=C sort > got.cov
	[ "$(wc -l < want.cov)" -gt 50 ] || atf_fail "too few functions: $(wc -l < want.cov)"
	cmp -s want.cov got.cov || atf_fail "coverage: $(diff want.cov got.cov | head -6 | tr '\n' ' ')"
	# lcov: the sum lcov itself makes of the per-run tracefiles.
	for n in c1 c2 h1; do
		"$HWTRACE" query "$n.hwtrace.db" coverage --lcov "$n.info" > /dev/null ||
		    atf_fail "query coverage of $n failed"
	done
	lcov -q -a c1.info -a c2.info -a h1.info -o sum.info > lcov.out 2>&1 ||
	    atf_fail "lcov -a failed: $(oneline lcov.out)"
	norm() { awk -F'[:,]' '/^SF:/ { sf = substr($0, 4) } /^DA:/ { print sf "|DA|" $2 "|" $3 } /^FNDA:/ { print sf "|FNDA|" $3 "|" $2 }' "$1" | LC_ALL=C sort; }
	norm sum.info > want.lcov
	norm fleet.info > got.lcov
	grep -q "calls.c|FNDA|add|30" got.lcov || atf_fail "lcov: add entered 30 times expected: $(grep add got.lcov | tr '\n' ' ')"
	cmp -s want.lcov got.lcov || atf_fail "lcov: $(diff want.lcov got.lcov | head -6 | tr '\n' ' ')"
	(cd "$HWTRACE_SRC" && genhtml -q -o "$OLDPWD/html" "$OLDPWD/fleet.info") > gen.out 2>&1 ||
	    atf_fail "genhtml rejected the tracefile: $(oneline gen.out)"
	# Only the runs with a label.
	atf_check -s exit:0 -o match:"calls	add	2	30	" "$HWTRACE" fleet "$URL" coverage --format tsv --label result=fail
	atf_check -s exit:0 -o not-match:"	add	" "$HWTRACE" fleet "$URL" coverage --format tsv --label result=pass
}
func_and_coverage_match_sqlite_cleanup() { pg_stop; }

atf_test_case diff_matches_sqlite cleanup
diff_matches_sqlite_head() { atf_set descr "fleet diff lists the functions and branches the failing runs executed and no passing run did, as the runs' SQLite databases say"; }
diff_matches_sqlite_body()
{
	pg_start
	three_runs
	fn="SELECT DISTINCT s.name FROM blocks b JOIN symbols s ON s.id = b.symbol"
	sqlite3 h1.hwtrace.db "$fn" | LC_ALL=C sort -u > pass.fn
	{ sqlite3 c1.hwtrace.db "$fn"; sqlite3 c2.hwtrace.db "$fn"; } | LC_ALL=C sort | uniq -c |
	    awk '{ print $2 "\t" $1 }' > fail.fn
	awk -F'\t' 'NR == FNR { p[$1] = 1; next } !($1 in p) { print "function\t" $1 "\t\t" $2 }' pass.fn fail.fn |
	    LC_ALL=C sort > want.fn
	br="SELECT DISTINCT coalesce(fs.name || '+0x' || printf('%x', fb.sym_offset), printf('0x%x', coalesce(fb.image_addr, fb.start_ip))) || ' -> ' || coalesce(ts.name || '+0x' || printf('%x', tb.sym_offset), printf('0x%x', coalesce(tb.image_addr, tb.start_ip))) || '	' || br.kind FROM branches br JOIN blocks fb ON fb.id = br.from_block JOIN blocks tb ON tb.id = br.to_block LEFT JOIN symbols fs ON fs.id = fb.symbol LEFT JOIN symbols ts ON ts.id = tb.symbol"
	sqlite3 h1.hwtrace.db "$br" | LC_ALL=C sort -u > pass.br
	{ sqlite3 c1.hwtrace.db "$br"; sqlite3 c2.hwtrace.db "$br"; } | LC_ALL=C sort | uniq -c |
	    sed 's/^ *\([0-9]*\) /\1	/' | awk -F'\t' '{ print $2 "\t" $3 "\t" $1 }' > fail.br
	awk -F'\t' 'NR == FNR { p[$1 "\t" $2] = 1; next } !(($1 "\t" $2) in p) { print "branch\t" $1 "\t" $2 "\t" $3 }' pass.br fail.br |
	    LC_ALL=C sort > want.br
	[ -s want.fn ] && [ -s want.br ] || atf_fail "the fixtures should differ"
	grep -q "^function	add		2\$" want.fn || atf_fail "sqlite: add should be only in the failing runs"
	"$HWTRACE" fleet "$URL" diff --pass result=pass --fail result=fail --format tsv > got.tsv 2> err ||
	    atf_fail "fleet diff: $(oneline err)"
	tail -n +2 got.tsv | cut -f1-4 | grep "^function" | LC_ALL=C sort > got.fn
	tail -n +2 got.tsv | cut -f1-4 | grep "^branch" | LC_ALL=C sort > got.br
	cmp -s want.fn got.fn || atf_fail "diff functions: $(diff want.fn got.fn | head -6 | tr '\n' ' ')"
	cmp -s want.br got.br || atf_fail "diff branches: $(diff want.br got.br | head -6 | tr '\n' ' ')"
	atf_check -s exit:1 -o empty -e match:"no run is labelled 'result=nope'" \
	    "$HWTRACE" fleet "$URL" diff --pass result=nope --fail result=fail
}
diff_matches_sqlite_cleanup() { pg_stop; }

atf_test_case hostile_labels cleanup
hostile_labels_head() { atf_set descr "labels with quotes, backslashes, newlines, tabs and UTF-8 are stored and returned byte for byte, and select runs"; }
hostile_labels_body()
{
	pg_start
	capture h1 "$HWTRACE_PROGS/hello"
	k=$(printf "it's \"k\"\\\\")
	v=$(printf "a'b\"c\\\\d\\\\\\\\n\nline2\tTAB; DROP TABLE hwtrace.runs; -- é")
	atf_check -s exit:0 -o match:"^run 1:" "$HWTRACE" export --postgres "$URL" \
	    --label "$k=$v" --label "empty=" h1.hwtrace
	hex() { od -An -tx1 | tr -d ' \n'; }
	atf_check -s exit:0 -o inline:"$(printf '%s' "$k" | hex)\n" \
	    $PSQL "$URL" -c "SELECT encode(convert_to(key, 'UTF8'), 'hex') FROM hwtrace.labels WHERE run = 1 AND key <> 'empty'"
	atf_check -s exit:0 -o inline:"$(printf '%s' "$v" | hex)\n" \
	    $PSQL "$URL" -c "SELECT encode(convert_to(value, 'UTF8'), 'hex') FROM hwtrace.labels WHERE run = 1 AND key <> 'empty'"
	pg_is "0" "SELECT length(value) FROM hwtrace.labels WHERE key = 'empty'"
	# Returned as they are (JSON of the labels, in JSON output).
	"$HWTRACE" fleet --format json "$URL" runs --label "$k=$v" > runs.json 2> err ||
	    atf_fail "fleet runs --label: $(oneline err)"
	K="$k" V="$v" python3 -c '
import json, os, sys
rows = json.load(open("runs.json"))
assert len(rows) == 1, rows
labels = json.loads(rows[0]["labels"])
assert labels == {os.environ["K"]: os.environ["V"], "empty": ""}, labels
' || atf_fail "labels not returned exactly: $(oneline runs.json)"
	atf_check -s exit:0 -o inline:"run\n" sh -c \
	    "'$HWTRACE' fleet --format csv '$URL' runs --label \"\$1\" | cut -d, -f1" sh "$k=${v}x"
	pg_is "1" "SELECT count(*) FROM hwtrace.runs"
}
hostile_labels_cleanup() { pg_stop; }

atf_test_case refusals cleanup
refusals_head() { atf_set descr "a database without the schema, a missing input (nothing of the other inputs stays), a malformed URL, an unreachable server, a wrong password (scram-sha-256) are refused with exit 1, naming the problem and never the password; ~/.pgpass and PGPASSWORD work"; }
refusals_body()
{
	pg_start
	capture h1 "$HWTRACE_PROGS/hello"
	atf_check -s exit:1 -o empty -e match:"has no schema hwtrace: nothing was exported there" \
	    "$HWTRACE" fleet "$URL" runs
	atf_check -s exit:1 -o empty -e match:"cannot export 'nothere.hwtrace': .*nothere.hwtrace.*; nothing was exported" \
	    "$HWTRACE" export --postgres "$URL" h1.hwtrace nothere.hwtrace
	atf_check -s exit:1 -o empty -e match:"hwtrace export: not a connection string or URL" \
	    "$HWTRACE" export --postgres "garbage" h1.hwtrace
	atf_check -s exit:1 -o empty -e match:"not a connection string or URL: invalid URI query parameter" \
	    -e not-match:"Sup3rSecret" \
	    "$HWTRACE" export --postgres "postgresql://pw:Sup3rSecret@/hwtr?host=$PGDIR&bogus=1" h1.hwtrace
	atf_check -s exit:1 -o empty -e match:"cannot connect" -e not-match:"Sup3rSecret" \
	    "$HWTRACE" export --postgres "postgresql://pw:Sup3rSecret@/hwtr?host=$PGDIR/nowhere" h1.hwtrace
	atf_check -s exit:1 -o empty -e match:"cannot connect" \
	    "$HWTRACE" fleet "postgresql://$PGUSERNAME@/hwtr?host=$PGDIR&port=1" runs
	# A role with a password, checked by scram-sha-256.
	$PSQL "$URL" -c "SET password_encryption = 'scram-sha-256'; CREATE ROLE pw LOGIN PASSWORD 'Right-Pa55word'; GRANT CREATE ON DATABASE hwtr TO pw" > /dev/null ||
	    atf_fail "cannot create role pw"
	{ echo "local all pw scram-sha-256"; cat "$PGDIR/data/pg_hba.conf"; } > hba
	cat hba > "$PGDIR/data/pg_hba.conf"
	pg_as "$PGBIN/pg_ctl" -D "$PGDIR/data" reload > /dev/null || atf_fail "reload failed"
	sleep 1
	atf_check -s exit:1 -o empty -e match:"password authentication failed for user \"pw\"" \
	    -e not-match:"Wrong-Pa55word" \
	    "$HWTRACE" export --postgres "postgresql://pw:Wrong-Pa55word@/hwtr?host=$PGDIR" h1.hwtrace
	atf_check -s exit:1 -o empty -e match:"password authentication failed" -e not-match:"Wrong-Pa55word" \
	    env PGPASSWORD=Wrong-Pa55word "$HWTRACE" export --postgres "user=pw dbname=hwtr host=$PGDIR" h1.hwtrace
	atf_check -s exit:1 -o empty -e match:"password authentication failed" -e not-match:"Wrong-Pa55word" \
	    "$HWTRACE" fleet "host=$PGDIR dbname=hwtr user=pw password=Wrong-Pa55word" runs
	pg_is "0" "SELECT count(*) FROM pg_namespace WHERE nspname = 'hwtrace'"
	# The right password: from the URL, from ~/.pgpass.
	atf_check -s exit:0 -o match:"^run 1:" -e empty \
	    "$HWTRACE" export --postgres "postgresql://pw:Right-Pa55word@/hwtr?host=$PGDIR" h1.hwtrace
	mkdir home
	echo "*:*:hwtr:pw:Right-Pa55word" > home/.pgpass
	chmod 600 home/.pgpass
	atf_check -s exit:0 -o match:"^  1 " -e empty \
	    env HOME="$PWD/home" PGHOST="$PGDIR" PGDATABASE=hwtr PGUSER=pw "$HWTRACE" fleet "" runs
	atf_check -s exit:1 -o empty -e match:"no password supplied|password authentication failed" \
	    env HOME=/nonexistent PGHOST="$PGDIR" PGDATABASE=hwtr PGUSER=pw "$HWTRACE" fleet "" runs
}
refusals_cleanup() { pg_stop; }

atf_test_case server_gone_mid_export cleanup
server_gone_mid_export_head()
{
	atf_set descr "the server stopped (pg_ctl stop -m immediate) while an export copies a large history: exit 1, and once it is back nothing of that export is there"
	atf_set timeout 600
}
server_gone_mid_export_body()
{
	pg_start
	capture h1 "$HWTRACE_PROGS/hello"
	atf_check -s exit:0 -o match:"^run 1:" "$HWTRACE" export --postgres "$URL" h1.hwtrace
	# sort(1) of 30000 numbers: about 850000 calls of its comparison.
	seq 1 30000 | sort -R --random-source=/dev/zero > nums
	capture big /usr/bin/sort -n nums
	calls=$(sqlite3 -cmd ".load $HWTRACE_BUILD/hwtrace_sqlite" big.hwtrace.db "SELECT count(*) FROM calls")
	[ "$calls" -gt 200000 ] || atf_fail "expected a large history, got $calls calls"
	table_counts > before
	"$HWTRACE" export --postgres "$URL" --label big=1 big.hwtrace > out 2> err &
	pid=$!
	n=0 i=0
	while [ $i -lt 1200 ]; do
		n=$($PSQL "$URL" -c "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'COPY hwtrace.calls_r%'" 2>/dev/null)
		[ "${n:-0}" -gt 0 ] && break
		kill -0 $pid 2>/dev/null || break
		sleep 0.05
		i=$((i + 1))
	done
	[ "${n:-0}" -gt 0 ] || { wait $pid; atf_fail "the export was not seen copying calls: $(oneline err)"; }
	pg_as "$PGBIN/pg_ctl" -D "$PGDIR/data" -m immediate stop > /dev/null ||
	    atf_fail "pg_ctl stop failed"
	rc=0
	wait $pid || rc=$?
	[ $rc -eq 1 ] || atf_fail "export: expected exit 1, got $rc: $(oneline err)"
	[ ! -s out ] || atf_fail "export printed a run: $(oneline out)"
	grep -q "cannot export 'big.hwtrace':.*nothing was exported" err ||
	    atf_fail "expected a message saying nothing was exported: $(oneline err)"
	pg_as "$PGBIN/pg_ctl" -D "$PGDIR/data" -l "$PGDIR/server.log" -w \
	    -o "-k $PGDIR -c listen_addresses=''" start > /dev/null ||
	    atf_fail "the server did not start again"
	table_counts > after
	cmp -s before after || atf_fail "rows left by the failed export: $(diff before after | tr '\n' ' ')"
	# And the export, done again, is whole.
	atf_check -s exit:0 -o match:"^run [0-9]*: 'big.hwtrace' exported .*: $calls calls" \
	    "$HWTRACE" export --postgres "$URL" --label big=1 big.hwtrace
	pg_is "$calls" \
	    "SELECT count(*) FROM hwtrace.calls c JOIN hwtrace.labels l ON l.run = c.run WHERE l.key = 'big'"
}
server_gone_mid_export_cleanup() { pg_stop; }

atf_test_case drop_old_runs cleanup
drop_old_runs_head() { atf_set descr "the SQL hwtrace-db(5) gives to drop old runs drops their partitions and rows and leaves the other runs whole"; }
drop_old_runs_body()
{
	pg_start
	three_runs
	awk '/drop-runs-begin/ { on = 1; next } /drop-runs-end/ { on = 0 } on && !/^\./' \
	    "$HWTRACE_SRC/docs/hwtrace-db.5" > drop.sql
	grep -q "DROP TABLE" drop.sql || atf_fail "no SQL found in hwtrace-db(5): $(oneline drop.sql)"
	$PSQL "$URL" -c "UPDATE hwtrace.runs SET exported = now() - interval '100 days' WHERE id = 1" > /dev/null
	atf_check -s exit:0 $PSQL "$URL" -f drop.sql
	atf_check -s exit:0 -o inline:"run\n2\n3\n" sh -c "'$HWTRACE' fleet --format csv '$URL' runs | cut -d, -f1"
	pg_is "0 0 5" \
	    "SELECT (SELECT count(*) FROM pg_class WHERE relname LIKE '%\\_r1') || ' ' || (SELECT count(*) FROM hwtrace.labels WHERE run = 1) || ' ' || (SELECT count(*) FROM pg_class WHERE relname LIKE '%\\_r2' AND relnamespace = 'hwtrace'::regnamespace)"
	fleet_func_is add 1,2,4 "2,add,15\n"
}
drop_old_runs_cleanup() { pg_stop; }

atf_test_case concurrent_exports cleanup
concurrent_exports_head() { atf_set descr "three exports at once into an empty database, two of them with the same image: all succeed, the schema is made once and the image's static data is stored once"; }
concurrent_exports_body()
{
	pg_start
	capture c1 "$HWTRACE_PROGS/calls"
	capture c2 "$HWTRACE_PROGS/calls"
	capture h1 "$HWTRACE_PROGS/hello"
	for n in c1 c2 h1; do
		"$HWTRACE" export --postgres "$URL" "$n.hwtrace" > "$n.exp" 2>&1 &
		eval "pid_$n=\$!"
	done
	for n in c1 c2 h1; do
		eval "wait \$pid_$n" || atf_fail "export of $n failed: $(oneline "$n.exp")"
	done
	key=$(sqlite3 c1.hwtrace.db "SELECT key FROM images WHERE path LIKE '%/calls'")
	want=$(sqlite3 c1.hwtrace.db "SELECT count(*) FROM symbols s JOIN images i ON i.id = s.image WHERE i.key = '$key'")
	pg_is "3 1 $want" \
	    "SELECT (SELECT count(*) FROM hwtrace.runs) || ' ' || (SELECT count(*) FROM hwtrace.images WHERE key = '$key') || ' ' || (SELECT count(*) FROM hwtrace.symbols s JOIN hwtrace.images i ON i.id = s.image WHERE i.key = '$key')"
	pg_is "0" \
	    "SELECT count(*) FROM (SELECT image, addr, size, mode FROM hwtrace.blocks WHERE image IS NOT NULL GROUP BY 1, 2, 3, 4 HAVING count(*) > 1) d"
	fleet_func_is add 2,4 "add,15\nadd,15\n"
}
concurrent_exports_cleanup() { pg_stop; }

atf_test_case symbols_come_later cleanup
symbols_come_later_head() { atf_set descr "blocks first exported by a run without the image's symbols are named by the first run that has them"; }
symbols_come_later_body()
{
	pg_start
	capture c1 "$HWTRACE_PROGS/calls"
	capture c2 "$HWTRACE_PROGS/calls"
	# c1's history as if its archive lacked the program's image.
	cp c1.hwtrace.db bare.db
	sqlite3 -cmd ".load $HWTRACE_BUILD/hwtrace_sqlite" bare.db "UPDATE images SET present = 0, has_symbols = 0, has_lines = 0 WHERE path LIKE '%/calls'; UPDATE blocks SET symbol = NULL, sym_offset = NULL WHERE image = (SELECT id FROM images WHERE path LIKE '%/calls'); UPDATE calls SET symbol = NULL; DELETE FROM line_pages; DELETE FROM symbols WHERE image = (SELECT id FROM images WHERE path LIKE '%/calls')" ||
	    atf_fail "cannot strip bare.db"
	atf_check -s exit:0 -o match:"^run 1: 'bare.db' exported" "$HWTRACE" export --postgres "$URL" bare.db
	pg_is "0" \
	    "SELECT count(*) FROM hwtrace.blocks b JOIN hwtrace.symbols s ON s.id = b.symbol WHERE s.name = 'add'"
	atf_check -s exit:0 -o match:"^run 2: 'c2.hwtrace' exported" "$HWTRACE" export --postgres "$URL" c2.hwtrace
	# add's blocks as c1 ran them (its own database) are now named.
	want=$(sqlite3 c1.hwtrace.db "SELECT sum(b.exec_count * b.ninsns) FROM blocks b JOIN symbols s ON s.id = b.symbol WHERE s.name = 'add'")
	pg_is "$want" \
	    "SELECT sum(c.count * b.ninsns) FROM hwtrace.block_counts c JOIN hwtrace.blocks b ON b.id = c.block JOIN hwtrace.symbols s ON s.id = b.symbol WHERE c.run = 1 AND s.name = 'add'"
}
symbols_come_later_cleanup() { pg_stop; }

atf_test_case usage_errors
usage_errors_head() { atf_set descr "export and fleet refuse malformed command lines with exit 2, and --help shows the synopsis of their man pages"; }
usage_errors_body()
{
	atf_check -s exit:2 -e match:"no --postgres URL given" "$HWTRACE" export x.hwtrace
	atf_check -s exit:2 -e match:"no database or archive given" "$HWTRACE" export --postgres x
	atf_check -s exit:2 -e match:"'novalue' is not KEY=VALUE" "$HWTRACE" export --postgres x --label novalue y
	atf_check -s exit:2 -e match:"'=v' is not KEY=VALUE" "$HWTRACE" fleet x runs --label =v
	atf_check -s exit:2 -e match:"unknown verb 'nope'" "$HWTRACE" fleet x nope
	atf_check -s exit:2 -e match:"no NAME given" "$HWTRACE" fleet x func
	atf_check -s exit:2 -e match:"no --fail given" "$HWTRACE" fleet x diff --pass a=b
	atf_check -s exit:2 -e match:"'xml' is not table" "$HWTRACE" fleet --format xml x runs
	atf_check -s exit:2 -e match:"unexpected argument 'extra'" "$HWTRACE" fleet x runs extra
	synopsis() {
		mandoc -Tascii "$HWTRACE_SRC/docs/hwtrace-$1.1" | col -b |
		    awk '/^SYNOPSIS/ { on = 1; next } /^[A-Z]/ { on = 0 } on' |
		    tr -s ' \t\n' '   ' | sed 's/^ //; s/ $//'
	}
	# The usage (wrapped within 79 columns) as one line.
	usage() { sed -n '1,/^$/p' | sed 's/^usage: //' | tr -s ' \n' '  ' |
	    sed 's/^ //; s/ $//'; }
	syn=$(synopsis export)
	use=$("$HWTRACE" export --help | usage)
	[ "$syn" = "$use" ] || atf_fail "export: SYNOPSIS '$syn' is not --help's '$use'"
	syn=" $(synopsis fleet) hwtrace "
	for v in runs func coverage diff; do
		use=$("$HWTRACE" fleet URL $v --help | usage)
		case "$syn" in
		*" $use hwtrace "*) ;;
		*) atf_fail "fleet $v: --help's '$use' is not in the SYNOPSIS '$syn'" ;;
		esac
	done
}

# fl_gdb_hits PROG ARG FUNC: how many times gdb's breakpoint on FUNC is
# hit in a run of PROG ARG (one location per inlined instance).
fl_gdb_hits()
{
	printf '%s\n' 'set pagination off' "break $3" 'commands' 'silent' \
	    'continue' 'end' 'run' 'info breakpoints' > hits.gdb
	gdb -nx -batch -x hits.gdb --args "$1" "$2" > hits.out 2>&1 < /dev/null
	sed -n 's/.*breakpoint already hit \([0-9]*\) time.*/\1/p' hits.out
}

atf_test_case inlines_across_runs cleanup
inlines_across_runs_head() { atf_set descr "export --postgres stores an image's inlined subroutines once, as its SQLite inlines rows (call files included); fleet func measure and the plain SQL of hwtrace-db(5) give per run the entries of the inlined measure, gdb's breakpoint hits (ROUNDS, ROUNDS + 1 with crash), and name a C++ inline as query's func does; a schema without the table gets it at the next export"; }
inlines_across_runs_body()
{
	pg_start
	require_tools gdb
	prog=$HWTRACE_PROGS/inline
	[ -x "$prog" ] || atf_skip "fixture programs not built"
	for a in ok crash; do
		"$HWTRACE" capture --source valgrind -o "$a.hwtrace" -- "$prog" \
		    "$a" > "$a.out" 2> "$a.err"
		[ -s "$a.hwtrace" ] || atf_fail "capture of inline $a: $(oneline "$a.err")"
		"$HWTRACE" index -q -o "$a.hwtrace.db" "$a.hwtrace" 2> "$a.ixerr" ||
		    atf_fail "index of $a: $(oneline "$a.ixerr")"
	done
	atf_check -s exit:0 -o match:"^run 1: 'ok.hwtrace' exported" \
	    -o match:"^run 2: 'crash.hwtrace' exported" -e empty \
	    "$HWTRACE" export --postgres "$URL" ok.hwtrace crash.hwtrace
	# Stored once, the rows of the SQLite table.
	sqlite3 -separator '|' ok.hwtrace.db "SELECT i.lo, i.hi, i.entry, i.inst, i.depth, i.name, coalesce(f.path, ''), i.call_line, coalesce(i.parent, '') FROM inlines i JOIN images m ON m.id = i.image LEFT JOIN files f ON f.id = i.call_file WHERE m.path LIKE '%/inline'" |
	    LC_ALL=C sort > want.inl
	$PSQL "$URL" -c "SELECT i.lo, i.hi, i.entry, i.inst, i.depth, i.name, coalesce(f.path, ''), i.call_line, coalesce(i.parent::text, '') FROM hwtrace.inlines i JOIN hwtrace.images m ON m.id = i.image LEFT JOIN hwtrace.files f ON f.image = i.image AND f.id = i.call_file WHERE m.path LIKE '%/inline'" |
	    LC_ALL=C sort > got.inl
	[ -s want.inl ] || atf_fail "the SQLite database has no inlines of the fixture"
	grep -q '|measure|.*inline.c|' want.inl || atf_fail "no measure with its call file: $(oneline want.inl)"
	cmp -s want.inl got.inl || atf_fail "inlines: expected $(oneline want.inl), got $(oneline got.inl)"
	# Entries per run: gdb's hits; fleet func and plain SQL agree.
	: > want
	i=1
	for a in ok crash; do
		h=$(fl_gdb_hits "$prog" "$a" measure)
		[ -n "$h" ] || atf_fail "gdb gave no hit count: $(oneline hits.out)"
		echo "$i measure $h 1" >> want
		i=$((i + 1))
	done
	"$HWTRACE" fleet "$URL" func measure --format tsv > f.tsv 2> err ||
	    atf_fail "fleet func measure: $(oneline err)"
	head -n 1 f.tsv | grep -q '	inlined$' || atf_fail "no inlined column: $(head -n 1 f.tsv)"
	awk -F'\t' 'NR > 1 { print $1, $2, $4, $7 }' f.tsv > got
	cmp -s want got || atf_fail "fleet func measure: expected $(oneline want), got $(oneline got)"
	awk '/inline-entries-begin/ { on = 1; next } /inline-entries-end/ { on = 0 } on && !/^\./' \
	    "$HWTRACE_SRC/docs/hwtrace-db.5" > entries.sql
	grep -q "hwtrace.inlines" entries.sql || atf_fail "no SQL found in hwtrace-db(5): $(oneline entries.sql)"
	$PSQL "$URL" -f entries.sql | tr '|' ' ' > got.sql
	awk '{ print $1, $2, $3 }' want > want.sql
	cmp -s want.sql got.sql || atf_fail "hwtrace-db(5)'s SQL: expected $(oneline want.sql), got $(oneline got.sql)"
	# A C++ inline by linespec, as query's func names it.
	if command -v g++ >/dev/null && printf '%s\n' \
	    'namespace ns { inline __attribute__((always_inline)) int' \
	    'scale(int x) { __asm__ volatile("" : "+r"(x)); return x * 3; } }' \
	    'int volatile sink;' \
	    'int main(int argc, char **) { int t = 0;' \
	    'for (int i = 0; i < 30 + argc; i++) t += ns::scale(i);' \
	    'sink = t; return 0; }' > sc.cc && g++ -O2 -g -static -o sc sc.cc; then
		"$HWTRACE" capture --source valgrind -o sc.hwtrace -- "$PWD/sc" x \
		    > sc.out 2> sc.err || atf_fail "capture of sc: $(oneline sc.err)"
		"$HWTRACE" index -q -o sc.hwtrace.db sc.hwtrace ||
		    atf_fail "index of sc failed"
		"$HWTRACE" export --postgres "$URL" sc.hwtrace > /dev/null 2> err ||
		    atf_fail "export of sc: $(oneline err)"
		n=$("$HWTRACE" query sc.hwtrace.db func scale --format tsv | awk -F'\t' 'NR > 1 && $14 == "inlined"' | wc -l)
		[ "$n" -gt 0 ] || atf_fail "query func scale found no inlined entry"
		for p in scale ns::scale 'ns::scale(int)'; do
			atf_check -s exit:0 -o inline:"3 ns::scale(int) $n 1\n" sh -c \
			    "'$HWTRACE' fleet '$URL' func '$p' --format tsv | awk -F'\t' 'NR > 1 { print \$1, \$2, \$4, \$7 }'"
		done
		atf_check -s exit:1 -e match:"no run called a function matching 'other::scale'" \
		    "$HWTRACE" fleet "$URL" func other::scale
	fi
	# A schema from before the table: fleet does without, export adds it.
	$PSQL "$URL" -c "DROP TABLE hwtrace.inlines" > /dev/null
	atf_check -s exit:1 -e match:"no run called a function matching 'measure'" \
	    "$HWTRACE" fleet "$URL" func measure
	atf_check -s exit:0 -o ignore "$HWTRACE" export --postgres "$URL" ok.hwtrace.db
	pg_is "t" \
	    "SELECT to_regclass('hwtrace.inlines') IS NOT NULL"
}
inlines_across_runs_cleanup() { pg_stop; }

atf_init_test_cases()
{
	atf_add_test_case runs_identity
	atf_add_test_case static_data_once
	atf_add_test_case func_and_coverage_match_sqlite
	atf_add_test_case diff_matches_sqlite
	atf_add_test_case hostile_labels
	atf_add_test_case refusals
	atf_add_test_case server_gone_mid_export
	atf_add_test_case drop_old_runs
	atf_add_test_case concurrent_exports
	atf_add_test_case symbols_come_later
	atf_add_test_case usage_errors
	atf_add_test_case inlines_across_runs
}
