#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# bench_fleet.sh: hwtrace export --postgres and hwtrace fleet against a
# throw-away PostgreSQL server (Debian's package, a Unix socket in a
# temporary directory, fsync off: tests/query/pg_helpers.sh).
#
# Export rate: a valgrind capture of sort(1) on 30000 numbers (about
# 850,000 calls), already indexed, exported into an empty database, in rows
# per second; against the same rows loaded by hand in the same run, each
# table `sqlite3 -csv ... | psql -c "\copy ... CSV"` into plain tables of
# the same columns (no partitions, no indexes, no merging of static data,
# no id mapping: the floor of what loading these rows costs).
#
# Fleet latency: 100 runs (ixgen walks of the calls fixture, seeds 1-100,
# 1M instructions each, half labelled result=pass, half result=fail),
# exported in one transaction; then the best wall time of fleet runs, func,
# coverage and diff, each against the same question asked of the 100
# SQLite databases one by one (hwtrace query, or sqlite3 for diff), what a
# team without the shared database would do.

set -u
: "${HWTRACE:?}" "${BENCH_PROGS:?}" "${BENCH_DIR:?}" "${BENCH_RUNS:=3}" \
    "${HWTRACE_SRC:?}" "${HWTRACE_BUILD:?}"

atf_skip() { echo "bench_fleet: cannot measure: $*" >&2; exit 1; }
atf_fail() { echo "bench_fleet: $*" >&2; exit 1; }
. "$HWTRACE_SRC/tests/query/pg_helpers.sh"

cd "$BENCH_DIR" || exit 1
rm -f pgdir
trap 'pg_stop' EXIT INT TERM
pg_start > /dev/null
base="postgresql://$PGUSERNAME@/%s?host=$PGDIR"
db() { printf "$base" "$1"; }
mkdb() { $PSQL "$(db postgres)" -c "CREATE DATABASE $1" > /dev/null || exit 1; }

# best-of wall time in ms of a shell command line
best()
{
	python3 - "$BENCH_RUNS" "$1" <<'X'
import subprocess, sys, time
runs, cmd = int(sys.argv[1]), sys.argv[2]
best = None
for _ in range(runs):
    t0 = time.monotonic()
    p = subprocess.run(cmd, shell=True, stdout=subprocess.DEVNULL)
    t = (time.monotonic() - t0) * 1000
    if p.returncode != 0:
        sys.exit("failed: " + cmd)
    best = t if best is None else min(best, t)
print("%.1f" % best)
X
}

# --- export rate -----------------------------------------------------------
if [ ! -f sort.hwtrace.db ]; then
	seq 1 30000 | sort -R --random-source=/dev/zero > nums
	"$HWTRACE" capture --source valgrind -o sort.hwtrace -- /usr/bin/sort \
	    -n nums > /dev/null 2> capture.err ||
	    atf_skip "valgrind capture of sort failed: $(cat capture.err)"
	"$HWTRACE" index -o sort.hwtrace.db sort.hwtrace 2> /dev/null ||
	    atf_fail "index failed"
fi
touch sort.hwtrace.db

# The rows hwtrace exports, read from SQLite, as the reference loads them.
cat > ref.sql <<'X'
CREATE TABLE images (lid bigint, key text, path text, kind text,
  build_id text, size bigint, sha256 text, present boolean, elf boolean);
CREATE TABLE symbols (lid bigint, image bigint, name text, addr bigint,
  size bigint, kind text, bind text, origin text);
CREATE TABLE files (image bigint, id bigint, path text);
CREATE TABLE lines (image bigint, addr bigint, file bigint, line bigint,
  col bigint, is_stmt boolean, end_addr bigint);
CREATE TABLE blocks (lid bigint, image bigint, addr bigint, size bigint,
  ninsns bigint, mode bigint, last_class text, symbol bigint,
  sym_offset bigint);
CREATE TABLE threads (run bigint, id bigint, stream bigint, pid bigint,
  tid bigint, name text, blocks bigint, insns bigint, calls bigint,
  errors bigint);
CREATE TABLE block_counts (run bigint, thread bigint, block bigint,
  count bigint);
CREATE TABLE branches (run bigint, thread bigint, from_block bigint,
  to_block bigint, from_ip bigint, to_ip bigint, kind text, count bigint);
CREATE TABLE calls (run bigint, id bigint, thread bigint, parent bigint,
  depth bigint, symbol bigint, func_ip bigint, call_ip bigint,
  entry_kind text, exit_kind text, entry_seq bigint, exit_seq bigint,
  entry_insn bigint, exit_insn bigint, entry_ns bigint, exit_ns bigint,
  insns bigint, self_insns bigint, blocks bigint);
X
cat > ref.sh <<'X'
# ref.sh SQLITE-DB URL: load the rows by hand, one \copy per table.
s=$1 u=$2
# calls and lines are virtual tables: sqlite3 reads them with the extension.
c() { sqlite3 -csv -cmd ".load $HWTRACE_BUILD/hwtrace_sqlite" "$s" "$2" | psql -X -q "$u" -c "\\copy $1 FROM STDIN CSV" || exit 1; }
c images "SELECT id, key, path, kind, build_id, size, sha256, CASE present WHEN 1 THEN 't' ELSE 'f' END, CASE elf WHEN 1 THEN 't' ELSE 'f' END FROM images"
c symbols "SELECT id, image, name, addr, size, kind, bind, origin FROM symbols"
c files "SELECT DISTINCT l.image, f.id, f.path FROM lines l JOIN files f ON f.id = l.file"
c lines "SELECT image, addr, file, line, col, CASE is_stmt WHEN 1 THEN 't' ELSE 'f' END, end_addr FROM lines"
c blocks "SELECT id, image, coalesce(image_addr, start_ip), size, ninsns, mode, last_class, symbol, sym_offset FROM blocks"
c threads "SELECT 1, id, stream, pid, tid, name, blocks, insns, calls, errors FROM threads"
c block_counts "SELECT 1, thread, block, count FROM block_counts"
c branches "SELECT 1, thread, from_block, to_block, from_ip, to_ip, kind, count FROM branches"
c calls "SELECT 1, id, thread, parent, depth, symbol, func_ip, call_ip, entry_kind, exit_kind, entry_seq, exit_seq, entry_insn, exit_insn, entry_ns, exit_ns, insns, self_insns, blocks FROM calls"
X
rows=$(sqlite3 -cmd ".load $HWTRACE_BUILD/hwtrace_sqlite" sort.hwtrace.db "SELECT (SELECT count(*) FROM images) + (SELECT count(*) FROM symbols) + (SELECT count(*) FROM (SELECT DISTINCT image, file FROM lines)) + (SELECT count(*) FROM lines) + (SELECT count(*) FROM blocks) + (SELECT count(*) FROM threads) + (SELECT count(*) FROM block_counts) + (SELECT count(*) FROM branches) + (SELECT count(*) FROM calls)")
ours="" ref=""
i=1
while [ $i -le "$BENCH_RUNS" ]; do
	mkdb "e$i"
	mkdb "r$i"
	$PSQL "$(db "r$i")" -f ref.sql > /dev/null || exit 1
	# Alternate which goes first, so neither always has the warm cache.
	t_ours=$(BENCH_RUNS=1 best "'$HWTRACE' export --postgres '$(db "e$i")' sort.hwtrace")
	t_ref=$(BENCH_RUNS=1 best "sh ref.sh sort.hwtrace.db '$(db "r$i")'")
	ours=$(echo "$ours $t_ours" | tr ' ' '\n' | sed '/^$/d' | sort -n | head -1)
	ref=$(echo "$ref $t_ref" | tr ' ' '\n' | sed '/^$/d' | sort -n | head -1)
	i=$((i + 1))
done
got=$($PSQL "$(db e1)" -c "SELECT count(*) FROM hwtrace.calls")
want=$(sqlite3 -cmd ".load $HWTRACE_BUILD/hwtrace_sqlite" sort.hwtrace.db "SELECT count(*) FROM calls")
[ "$got" = "$want" ] || atf_fail "export: $got calls in PostgreSQL, $want in SQLite"
printf 'bench_fleet: export of %s rows: hwtrace %s ms, sqlite3 | psql \\copy %s ms\n' "$rows" "$ours" "$ref" >&2
awk -v r="$rows" -v o="$ours" -v f="$ref" 'BEGIN {
	printf "result\texport %d rows\trows/s\t%.0f\tsqlite3|psql \\copy\t%.0f\thigher\t0.5\n", r, r / (o / 1000), r / (f / 1000)
}'

# --- 100 runs --------------------------------------------------------------
mkdir -p runs
s=1
while [ $s -le 100 ]; do
	a=runs/g$s.hwtrace
	if [ ! -f "$a.db" ]; then
		"$BENCH_PROGS/ixgen" -n 1000000 -t 2 -s $s "$HWTRACE_BUILD/progs/calls" \
		    "$a" 2> /dev/null || atf_fail "ixgen -s $s failed"
		"$HWTRACE" index -o "$a.db" "$a" 2> /dev/null || atf_fail "index of $a failed"
	fi
	touch "$a.db"
	s=$((s + 1))
done
mkdb fleet
u=$(db fleet)
set -- $(ls runs/g*.hwtrace | sort -V)
half=$(echo "$@" | tr ' ' '\n' | head -50 | tr '\n' ' ')
rest=$(echo "$@" | tr ' ' '\n' | tail -50 | tr '\n' ' ')
t0=$(date +%s%N)
"$HWTRACE" export --postgres "$u" --label result=pass $half > /dev/null || atf_fail "export failed"
"$HWTRACE" export --postgres "$u" --label result=fail $rest > /dev/null || atf_fail "export failed"
t1=$(date +%s%N)
echo "bench_fleet: 100 runs exported in $(( (t1 - t0) / 1000000 )) ms" >&2
$PSQL "$u" -c "ANALYZE" > /dev/null
fn=$($PSQL "$u" -c "SELECT s.name FROM hwtrace.func_counts f JOIN hwtrace.symbols s ON s.id = f.symbol GROUP BY s.name ORDER BY count(DISTINCT f.run) DESC, s.name LIMIT 1")
dbs=$(ls runs/g*.hwtrace.db | tr '\n' ' ')
lat()
{
	name=$1 q=$2 r=$3 rname=$4
	t_q=$(best "$q") || exit 1
	t_r=$(best "$r") || exit 1
	echo "bench_fleet: $name: fleet $t_q ms, $rname $t_r ms" >&2
	printf 'result\t%s\tms\t%s\t%s\t%s\tlower\t-\n' "$name" "$t_q" "$rname" "$t_r"
}
lat "runs, 100 runs" "'$HWTRACE' fleet '$u' runs" \
    "for d in $dbs; do '$HWTRACE' query \$d summary; done" "100x query summary"
lat "func $fn, 100 runs" "'$HWTRACE' fleet '$u' func '$fn'" \
    "for d in $dbs; do '$HWTRACE' query \$d func '$fn' 2>/dev/null || true; done" "100x query func"
lat "coverage, 100 runs" "'$HWTRACE' fleet '$u' coverage" \
    "for d in $dbs; do '$HWTRACE' query \$d coverage; done" "100x query coverage"
lat "diff pass/fail, 100 runs" "'$HWTRACE' fleet '$u' diff --pass result=pass --fail result=fail" \
    "for d in $dbs; do sqlite3 \$d 'SELECT DISTINCT s.name FROM blocks b JOIN symbols s ON s.id = b.symbol'; done" \
    "100x sqlite3 functions"
