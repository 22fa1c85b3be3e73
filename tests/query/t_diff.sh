#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# hwtrace diff on step captures of a program written here whose runs part
# ways in places known by construction: bit 1 of its argument calls
# only_one from place1, bit 2 runs one more statement in place2, bit 4
# turns main's loop of 2 calls of step into 4, bit 8 crashes in main, bit
# 16 makes the loop 6000 rounds (more than diff's window of 4096).
# The places are checked against the source (marker comments), addr2line
# and objdump, never against hwtrace's own output.

. "$(atf_get_srcdir)/../env.sh"

# The fixture: div.c built into ./div.
build_div()
{
	cat > div.c <<'EOF'
static volatile int sink;

__attribute__((noinline)) static void
only_one(void)
{
	sink += 11;
	sink ^= 5;
}

__attribute__((noinline)) static void
step(void)
{
	sink += 2;
}

__attribute__((noinline)) static void
place1(int bit)
{
	if (bit) /* IF1 */
		only_one();
	sink += 1; /* JOIN1 */
}

__attribute__((noinline)) static void
place2(int bit)
{
	if (bit) /* IF2 */
		sink += 3; /* PLACE2 */
	sink += 1; /* JOIN2 */
}

int
main(int argc, char **argv)
{
	const char *p;
	int bits = 0, i, n;

	if (argc > 1)
		for (p = argv[1]; *p >= '0' && *p <= '9'; p++)
			bits = bits * 10 + (*p - '0');
	place1(bits & 1); /* CALL1 */
	if (bits & 8) /* IFC */
		*(volatile int *)0 = 1; /* CRASH */
	place2(bits & 2); /* CALL2 */
	/* No branch here: 2, 4 with bit 4, 6000 with bit 16. */
	n = 2 + ((bits >> 1) & 2) + ((bits >> 4) & 1) * 5998;
	for (i = 0; i < n; i++) /* LOOP */
		step();
	return (0); /* RET */
}
EOF
	cc -O1 -g -o div div.c 2> cc.err || atf_fail "cc failed: $(cat cc.err)"
}

# The line of div.c with the marker comment /* $1 */.
mark()
{
	grep -n "/\\* $1 \\*/" div.c | cut -d: -f1
}

# run NAME ARG [ENV...]: a step capture of ./div ARG (under env ENV... when
# given) indexed into NAME.db; its exit status in NAME.rc.
run()
{
	name=$1
	arg=$2
	shift 2
	env "$@" "$HWTRACE" capture --source step -o "$name.hwtrace" -- \
	    ./div "$arg" > "$name.out" 2> "$name.err"
	echo $? > "$name.rc"
	if [ ! -f "$name.hwtrace" ]; then
		grep -qi "ptrace\|permission\|not permitted\|step" "$name.err" &&
		    atf_skip "cannot trace here: $(tr '\n' ' ' < "$name.err")"
		atf_fail "capture of div $arg failed: $(cat "$name.err")"
	fi
	"$HWTRACE" index -q -o "$name.db" "$name.hwtrace" 2> "$name.ixerr" ||
	    atf_fail "index of $name failed: $(cat "$name.ixerr")"
}

# Instructions of function $1 of ./div up to its first ret (objdump).
ninsns()
{
	objdump -d --no-show-raw-insn div | awk -v f="<$1>:" '
	    $2 == f { on = 1; next }
	    on && /^ *[0-9a-f]+:/ { n++; if ($2 ~ /^ret/) { print n; exit } }
	    on && /^$/ { exit }'
}

# file:line (basename) of function+0xoff of ./div, as addr2line says.
a2l()
{
	fn=${1%%+*}
	off=0
	case $1 in *+*) off=${1#*+} ;; esac
	base=$(nm div | awk -v f="$fn" '$3 == f { print $1 }')
	[ -n "$base" ] || atf_fail "nm: no symbol $fn in div"
	addr=$(printf '0x%x' $((0x$base + off)))
	addr2line -e div "$addr" | sed 's/ (discriminator.*//; s|.*/||'
}

# Field $2 (a column name) of the rows of TSV file $1.
col()
{
	awk -F'\t' -v c="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) k = i; next } { print $k }' "$1"
}

# diff_tsv A B [ARG...]: hwtrace diff of A.db and B.db (with ARGs) as
# TSV in d.tsv, its rows of the program group in prog.tsv.
diff_tsv()
{
	diff_a=$1
	diff_b=$2
	shift 2
	"$HWTRACE" diff "$diff_a.db" "$diff_b.db" "$@" --format tsv > d.tsv 2> d.err ||
	    atf_fail "diff failed: $(tr '\n' ' ' < d.err)"
	awk -F'\t' 'NR > 1 && $2 == "program"' d.tsv > prog.tsv
}

atf_test_case three_regions
three_regions_head()
{
	atf_set descr "two runs that part ways in three places (an extra call, an extra statement, two more loop iterations) give three program regions: each starts at the branch of the source's if or for (addr2line), meets again at the join or the return, and the one-sided calls have objdump's instruction counts"
	atf_set require.progs "cc nm objdump addr2line python3"
}
three_regions_body()
{
	build_div
	run a 0
	run b 7
	diff_tsv a b
	[ "$(wc -l < prog.tsv)" -eq 3 ] ||
	    atf_fail "expected 3 program regions, got $(wc -l < prog.tsv): $(cut -f1-10 prog.tsv | tr '\n' '|')"
	# Ordered by size, largest first, numbered from 1.
	awk -F'\t' 'NR > 1 && $4 + 0 > p + 0 { bad = 1 } { p = $4 } END { exit bad }' prog.tsv ||
	    atf_fail "regions not in decreasing size: $(cut -f1-4 prog.tsv | tr '\n' '|')"
	awk -F'\t' '$4 != $15 + $16 { exit 1 }' prog.tsv ||
	    atf_fail "insns is not insns_a + insns_b: $(cut -f1-4,15,16 prog.tsv | tr '\n' '|')"
	n1=$(ninsns only_one)
	n2=$(ninsns step)
	[ -n "$n1" ] && [ -n "$n2" ] || atf_fail "objdump: no only_one or step in div"
	for fn in place1 place2 main; do
		awk -F'\t' -v f="$fn" '$5 == f || index($5, f "+") == 1' prog.tsv > r.tsv
		[ "$(wc -l < r.tsv)" -eq 1 ] ||
		    atf_fail "expected one region starting in $fn, got: $(cut -f1-6 prog.tsv | tr '\n' '|')"
		branch=$(cut -f5 r.tsv)
		line=$(cut -f6 r.tsv | sed 's|.*/||')
		rj=$(cut -f10 r.tsv | sed 's|.*:||')
		case $fn in
		place1) want=$(mark IF1) join=$(mark JOIN1) lo=$(mark CALL1) hi=$(mark IFC) ;;
		place2) want=$(mark IF2) join=$(mark JOIN2) lo=$(mark CALL2) hi=$(mark LOOP) ;;
		main) want=$(mark LOOP) join=$(mark RET) lo=$(mark LOOP) hi=$(($(mark RET) + 1)) ;;
		esac
		[ "$line" = "div.c:$want" ] ||
		    atf_fail "region in $fn: expected its branch at div.c:$want, got $line"
		[ "$(a2l "$branch")" = "$line" ] ||
		    atf_fail "region in $fn: branch $branch is at $(a2l "$branch") by addr2line, the answer says $line"
		# It meets again at the join, or back in main after the call (for
	# main: at the return, whose last line is the closing brace).
		[ -n "$rj" ] && { [ "$rj" = "$join" ] ||
		    { [ "$rj" -ge "$lo" ] && [ "$rj" -le "$hi" ]; }; } ||
		    atf_fail "region in $fn: expected to meet again at div.c:$join or div.c:$lo-$hi, got '$(cut -f9,10 r.tsv)'"
		rjf=$(cut -f9 r.tsv)
		[ "$(a2l "$rjf")" = "div.c:$rj" ] ||
		    atf_fail "region in $fn: rejoin $rjf is at $(a2l "$rjf") by addr2line, the answer says div.c:$rj"
		case $fn in
		place1)
			cut -f12 r.tsv | grep -q "\\(^\\|, \\)only_one $n1\\(,\\|\$\\)" ||
			    atf_fail "place1's region: B should have run only_one's $n1 instructions (objdump), got '$(cut -f12 r.tsv)'"
			cut -f11 r.tsv | grep -q only_one &&
			    atf_fail "place1's region: A did not call only_one: '$(cut -f11 r.tsv)'" ;;
		place2)
			p2=$(mark PLACE2)
			cut -f14 r.tsv | grep -q "div.c:$p2 " ||
			    atf_fail "place2's region: B's lines should have div.c:$p2, got '$(cut -f14 r.tsv)'"
			cut -f13 r.tsv | grep -q "div.c:$p2 " &&
			    atf_fail "place2's region: A did not run div.c:$p2: '$(cut -f13 r.tsv)'" ;;
		main)
			cut -f12 r.tsv | grep -q "\\(^\\|, \\)step $((2 * n2))\\(,\\|\$\\)" ||
			    atf_fail "the loop's region: B should have run step twice more, $((2 * n2)) instructions (objdump), got '$(cut -f12 r.tsv)'"
			[ "$(cut -f15 r.tsv)" = 0 ] ||
			    atf_fail "the loop's region: A ran nothing of its own, got $(cut -f15 r.tsv) instructions: '$(cut -f11,13 r.tsv)'" ;;
		esac
	done
	# The same in JSON.
	"$HWTRACE" diff a.db b.db --format json > d.json || atf_fail "diff --format json failed"
	python3 -c 'import json, sys
r = [x for x in json.load(open("d.json")) if x["group"] == "program"]
sys.exit(0 if len(r) == 3 and all(x["insns"] == x["insns_a"] + x["insns_b"] for x in r) else 1)' ||
	    atf_fail "JSON: expected 3 program regions: $(cat d.json)"
}

atf_test_case identical_runs
identical_runs_head()
{
	atf_set descr "the same run under two environments differs only before main (the environment group), with no env -i; a run against itself has no region"
	atf_set require.progs "cc"
}
identical_runs_body()
{
	build_div
	run a 0
	run e 0 HWTRACE_DIFF_PADDING="$(printf '%0300d' 0)" LC_ALL=C TZ=UTC
	diff_tsv a e
	awk -F'\t' 'NR > 1 && $2 != "environment"' d.tsv > other.tsv
	[ ! -s other.tsv ] ||
	    atf_fail "expected no region outside the environment group, got: $(cut -f1-10 other.tsv | tr '\n' '|')"
	# The loader reads the environment: more variables, more rounds.
	[ "$(awk -F'\t' 'NR > 1' d.tsv | wc -l)" -ge 1 ] ||
	    atf_fail "expected the environment's start-up differences as a group, got none"
	"$HWTRACE" diff a.db a.db --format csv > same.csv 2> same.err ||
	    atf_fail "diff a a failed: $(tr '\n' ' ' < same.err)"
	[ "$(wc -l < same.csv)" -eq 1 ] || atf_fail "a against itself: $(cat same.csv)"
	atf_check -s exit:2 -e match:"-n: only with --first" "$HWTRACE" diff -n 3 a.db a.db
}

atf_test_case crash_open_region
crash_open_region_head()
{
	atf_set descr "a run that crashes half-way against one that does not: one open-ended region from the if before the crash, the rest of the other run on its side only"
	atf_set require.progs "cc"
}
crash_open_region_body()
{
	build_div
	run a 0
	run c 8
	[ "$(cat c.rc)" = 139 ] || atf_fail "div 8 should die of SIGSEGV (139), got $(cat c.rc)"
	diff_tsv a c --list 0
	[ "$(wc -l < prog.tsv)" -eq 1 ] ||
	    atf_fail "expected one program region, got: $(cut -f1-10 prog.tsv | tr '\n' '|')"
	line=$(cut -f6 prog.tsv | sed 's|.*/||')
	[ "$line" = "div.c:$(mark IFC)" ] ||
	    atf_fail "expected the region to start at div.c:$(mark IFC), got $line"
	[ "$(cut -f9 prog.tsv)" = "(none: B ended)" ] ||
	    atf_fail "expected an open end, B having ended, got '$(cut -f9,10 prog.tsv)'"
	for fn in place2 step; do
		cut -f11 prog.tsv | grep -q "\\(^\\|, \\)$fn " ||
		    atf_fail "A's side should have $fn, which ran after the crash point: '$(cut -f11 prog.tsv)'"
	done
	# The other way round, A ended.
	"$HWTRACE" diff c.db a.db --format tsv > r.tsv || atf_fail "diff c a failed"
	[ "$(awk -F'\t' 'NR > 1 && $2 == "program" { print $9 }' r.tsv)" = "(none: A ended)" ] ||
	    atf_fail "c against a: expected one region, A having ended: $(cut -f1-10 r.tsv | tr '\n' '|')"
}

atf_test_case long_loop
long_loop_head()
{
	atf_set descr "a loop that ran 5998 more rounds on one side, past diff's window of 4096 tokens: one region, which meets again at main's return statement, with step's instructions (objdump) times 5998 on that side"
	atf_set require.progs "cc objdump addr2line nm"
}
long_loop_body()
{
	build_div
	# 00 and 16: the same number of digits to parse.
	run a 00
	run l 16
	diff_tsv a l
	[ "$(wc -l < prog.tsv)" -eq 1 ] ||
	    atf_fail "expected one program region, got: $(cut -f1-10 prog.tsv | tr '\n' '|')"
	[ "$(cut -f6 prog.tsv | sed 's|.*/||')" = "div.c:$(mark LOOP)" ] ||
	    atf_fail "expected the region to start at the loop, div.c:$(mark LOOP), got '$(cut -f5,6 prog.tsv)'"
	rj=$(cut -f10 prog.tsv | sed 's|.*/||')
	[ "$rj" = "div.c:$(mark RET)" ] || [ "$rj" = "div.c:$(($(mark RET) + 1))" ] ||
	    atf_fail "expected to meet again at main's return, div.c:$(mark RET), got '$(cut -f9,10 prog.tsv)'"
	rjf=$(cut -f9 prog.tsv)
	[ "$(a2l "$rjf")" = "$rj" ] ||
	    atf_fail "rejoin $rjf is at $(a2l "$rjf") by addr2line, the answer says $rj"
	n2=$(ninsns step)
	cut -f12 prog.tsv | grep -q "\\(^\\|, \\)step $((5998 * n2))\\(,\\|\$\\)" ||
	    atf_fail "expected step's $n2 instructions (objdump) 5998 more times, $((5998 * n2)), on B's side, got '$(cut -f12 prog.tsv)'"
	[ "$(cut -f15 prog.tsv)" = 0 ] ||
	    atf_fail "A ran nothing of its own, got $(cut -f15 prog.tsv) instructions: '$(cut -f11 prog.tsv)'"
}

atf_test_case many_regions
many_regions_head()
{
	atf_set descr "gzip -6 of two different 64 KiB inputs part ways some 77,000 times: the answer within 20 s of CPU (it took 40 s, past the default limit on slower inputs: a statement prepared for each place named, and 4,096 tokens of each side read for a region whose sides meet a few blocks on)"
	atf_set require.progs "gzip"
	atf_set timeout 300
}
many_regions_body()
{
	need_valgrind
	head -c 65536 "$HWTRACE" > a.in
	tail -c 65536 "$HWTRACE" > b.in
	for x in a b; do
		env -i "$HWTRACE" capture --source valgrind -o $x.hwtrace -- \
		    /bin/gzip -6 -c $x.in > /dev/null 2> $x.err ||
		    atf_fail "capture failed: $(cat $x.err)"
		"$HWTRACE" index -q -o $x.db $x.hwtrace ||
		    atf_fail "index of $x failed"
	done
	"$HWTRACE" diff --timeout 20 --format csv a.db b.db > d.csv 2> d.err ||
	    atf_fail "diff failed: $(cat d.err)"
	n=$(grep -c ',program,' d.csv)
	[ "$n" -gt 10000 ] || atf_fail "expected over 10,000 program regions, got $n"
}

# A damaged copy of the hand-written database (fixture.sql, made by
# qmkdb): fix.db, and bad.db, which $1 (SQL) changes.
damaged_pair()
{
	"$HWTRACE_BUILD/bench/qmkdb" fix.db "$HWTRACE_SRC/tests/query/fixture.sql" ||
	    atf_fail "cannot make the fixture database"
	cp fix.db bad.db
	sqlite3 bad.db "$1" || atf_fail "sqlite3 cannot change the database"
}

atf_test_case chunk_seq_far
chunk_seq_far_head()
{
	atf_set descr "diff of a database whose last thread's chunk starts at seq 2^63 - 1 (a damaged or hostile one), as A and as B: exit 1 naming the chunk, not seqs counted past 2^63 (found by make fuzz-db)"
	atf_set require.progs "sqlite3"
}
chunk_seq_far_body()
{
	damaged_pair "UPDATE exec_chunks SET seq = 9223372036854775807 WHERE thread = (SELECT max(thread) FROM exec_chunks)"
	atf_check -s exit:1 -e match:"diff: chunk at seq 9223372036854775807 of [0-9]+ blocks: its seq is out of range" \
	    "$HWTRACE" diff bad.db fix.db
	atf_check -s exit:1 -e match:"B: diff: chunk at seq 9223372036854775807 of [0-9]+ blocks: its seq is out of range" \
	    "$HWTRACE" diff fix.db bad.db
}

atf_test_case block_id_far
block_id_far_head()
{
	atf_set descr "diff of a database whose last block's id is moved up by 2^31 (a damaged or hostile one), as A and as B, plain and --first: exit 1 naming the ids, not arrays of 2^31 blocks (found by make fuzz-db)"
	atf_set require.progs "sqlite3"
}
block_id_far_body()
{
	damaged_pair "UPDATE blocks SET id = id + 2147483648 WHERE id = (SELECT max(id) FROM blocks)"
	for first in "" --first; do
		atf_check -s exit:1 -e match:"^hwtrace diff: diff: blocks: ids reach [0-9]+ for [0-9]+ rows" \
		    "$HWTRACE" diff $first bad.db fix.db
		atf_check -s exit:1 -e match:"^hwtrace diff: B: diff: blocks: ids reach [0-9]+ for [0-9]+ rows" \
		    "$HWTRACE" diff $first fix.db bad.db
	done
}

atf_init_test_cases()
{
	atf_add_test_case three_regions
	atf_add_test_case identical_runs
	atf_add_test_case crash_open_region
	atf_add_test_case long_loop
	atf_add_test_case many_regions
	atf_add_test_case chunk_seq_far
	atf_add_test_case block_id_far
}
