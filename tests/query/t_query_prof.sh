#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# The questions users bring (issue 22): bt, hot --by line, annotate,
# export --folded and diff, on valgrind captures of the measure fixture
# (tests/progs/measure.c), checked against tools that share no code with
# hwtrace: gdb's bt, Valgrind's own crash report, callgrind's counts per
# line and per instruction, and divergences known by construction.

. "$(atf_get_srcdir)/../env.sh"
. "$HWTRACE_SRC/tests/lib/hwtr_test.sh"

# capture NAME ARG...: a valgrind capture of measure ARG... into NAME.db,
# with an empty environment (so that two runs differ only by ARG).
capture()
{
	name=$1
	shift
	env -i "$HWTRACE" capture ${CAPFLAGS:-} --source valgrind -o "$name.hwtrace" -- \
	    "$HWTRACE_PROGS/measure" "$@" > "$name.out" 2> "$name.err"
	echo $? > "$name.rc"
	"$HWTRACE" index -q -o "$name.db" "$name.hwtrace" ||
	    atf_fail "index of $name failed: $(cat "$name.err")"
}

# The line of measure.c whose text matches PATTERN.
src_line()
{
	grep -n "$1" "$HWTRACE_SRC/tests/progs/measure.c" | head -n 1 | cut -d: -f1
}

atf_test_case bt_crash_matches_gdb
bt_crash_matches_gdb_head() { atf_set descr "bt after a crash in strlen called by measure: frame 0 as Valgrind reports the fault, the frames above it as gdb's bt (function and file:line)"; }
bt_crash_matches_gdb_body()
{
	need_vg_fixture measure
	require_tools gdb
	# Valgrind's report of the fault reaches stderr with --verbose.
	CAPFLAGS=--verbose
	capture c crash
	CAPFLAGS=
	[ "$(cat c.rc)" = 139 ] || atf_fail "capture of 'measure crash': expected exit 139, got $(cat c.rc)"
	"$HWTRACE" query c.db bt --format tsv > bt.tsv || atf_fail "bt failed"
	# Frame 0: Valgrind's "==N==    at 0x4305B9: __strlen_avx2 (in ...)".
	vat=$(sed -n 's/^==[0-9]*== *at \(0x[0-9A-Fa-f]*\): \([^ ]*\) .*/\1 \2/p' c.err | head -n 1)
	vaddr=$(echo "${vat% *}" | tr 'A-F' 'a-f' | sed 's/^0x0*/0x/')
	vfn=${vat#* }
	[ -n "$vfn" ] || atf_fail "no fault report from Valgrind: $(cat c.err)"
	got=$(awk -F'\t' 'NR == 2 { print $2, $3, $4 }' bt.tsv)
	[ "$got" = "0 $vfn $vaddr" ] || atf_fail "frame 0: expected '0 $vfn $vaddr' (Valgrind), got '$got'"
	# The frames above it: gdb's bt after the SIGSEGV, e.g.
	# "#1  0x0000000000401749 in measure (s=<optimized out>) at tests/progs/measure.c:68".
	gdb -nx -batch -ex run -ex bt --args "$HWTRACE_PROGS/measure" crash \
	    > gdb.out 2>&1 < /dev/null
	sed -n 's/^#\([1-9][0-9]*\) .* in \([^ ]*\) (.*) at \([^ ]*\)$/\1 \2 \3/p; s/^#\([1-9][0-9]*\)  *\([^ 0][^ ]*\) (.*) at \([^ ]*\)$/\1 \2 \3/p' \
	    gdb.out > gdb.frames
	[ "$(wc -l < gdb.frames)" -ge 3 ] || atf_fail "gdb gave fewer than 3 frames above frame 0: $(cat gdb.out)"
	awk -F'\t' 'NR > 2 && $5 != "" { print $2, $3, $5 }' bt.tsv |
	    head -n "$(wc -l < gdb.frames)" > hw.frames
	diff -u gdb.frames hw.frames > frames.diff ||
	    atf_fail "bt disagrees with gdb: $(cat frames.diff)"
	grep -q "^1 measure " gdb.frames || atf_fail "gdb's frame 1 is not measure: $(cat gdb.frames)"
	grep -q " report " gdb.frames && grep -q " main " gdb.frames ||
	    atf_fail "gdb's frames lack report and main: $(cat gdb.frames)"
}

atf_test_case bt_crash_matches_gdb_core
bt_crash_matches_gdb_core_head() { atf_set descr "bt after the crash in strlen called by measure gives the frames gdb's bt reads from the core file of a native run of the same program (function and file:line), frame 0 in strlen"; }
bt_crash_matches_gdb_core_body()
{
	need_vg_fixture measure
	require_tools gdb
	# A native run leaves a core file where the kernel is told to
	# (core_pattern): only a plain file name in this directory will do.
	case $(cat /proc/sys/kernel/core_pattern 2>/dev/null) in
	core|core.%p|core*) ;;
	*) atf_skip "core_pattern '$(cat /proc/sys/kernel/core_pattern)' does not write a core file here" ;;
	esac
	capture c crash
	[ "$(cat c.rc)" = 139 ] || atf_fail "capture of 'measure crash': expected exit 139, got $(cat c.rc)"
	mkdir native
	(cd native && ulimit -c unlimited 2>/dev/null && exec env -i "$HWTRACE_PROGS/measure" crash) \
	    > /dev/null 2>&1
	core=$(ls native/core* 2>/dev/null | head -n 1)
	[ -n "$core" ] || atf_skip "no core file was written (ulimit -Hc: $(ulimit -Hc))"
	gdb -nx -batch -ex bt "$HWTRACE_PROGS/measure" "$core" > gdb.out 2>&1 < /dev/null
	sed -n 's/^#\([1-9][0-9]*\) .* in \([^ ]*\) (.*) at \([^ ]*\)$/\1 \2 \3/p' \
	    gdb.out > gdb.frames
	[ "$(wc -l < gdb.frames)" -ge 3 ] || atf_fail "gdb read fewer than 3 frames above frame 0 from $core: $(cat gdb.out)"
	grep -q '^#0 .*strlen' gdb.out || atf_fail "gdb's frame 0 is not in strlen: $(cat gdb.out)"
	"$HWTRACE" query c.db bt --format tsv > bt.tsv || atf_fail "bt failed"
	awk -F'\t' 'NR == 2 { print $3 }' bt.tsv | grep -q strlen ||
	    atf_fail "bt's frame 0 is not in strlen: $(cat bt.tsv)"
	awk -F'\t' 'NR > 2 && $5 != "" { print $2, $3, $5 }' bt.tsv |
	    head -n "$(wc -l < gdb.frames)" > hw.frames
	diff -u gdb.frames hw.frames > frames.diff ||
	    atf_fail "bt disagrees with gdb on the core file: $(cat frames.diff)"
}

atf_test_case bt_first_insn_fault
bt_first_insn_fault_head() { atf_set descr "bt when the callee faults at its first instruction (segv's store): frame 0 is store, frame 1 main, as gdb says"; }
bt_first_insn_fault_body()
{
	[ -x "$HWTRACE_PROGS/segv" ] || atf_skip "fixture programs not built"
	require_tools valgrind.bin gdb
	"$HWTRACE" capture --source valgrind -o s.hwtrace -- "$HWTRACE_PROGS/segv" \
	    > out 2> err
	"$HWTRACE" index -q -o s.db s.hwtrace || atf_fail "index failed"
	gdb -nx -batch -ex run -ex bt "$HWTRACE_PROGS/segv" > gdb.out 2>&1 < /dev/null
	sed -n 's/^#\([0-9]*\) .* in \([^ ]*\) (.*) at \([^ ]*\)$/\1 \2 \3/p; s/^#\([0-9]*\)  *\([^ 0][^ ]*\) (.*) at \([^ ]*\)$/\1 \2 \3/p' \
	    gdb.out > gdb.frames
	[ "$(wc -l < gdb.frames)" -eq 2 ] || atf_fail "gdb: expected store and main: $(cat gdb.out)"
	"$HWTRACE" query s.db bt --format tsv | awk -F'\t' 'NR > 1 && NR <= 3 { print $2, $3, $5 }' > hw.frames
	diff -u gdb.frames hw.frames > frames.diff || atf_fail "bt disagrees with gdb: $(cat frames.diff)"
}

atf_test_case bt_at_matches_gdb_breakpoint
bt_at_matches_gdb_breakpoint_head() { atf_set descr "bt --at the first instruction of lex's first call is gdb's bt at a breakpoint there; --at past the end is an error"; }
bt_at_matches_gdb_breakpoint_body()
{
	need_vg_fixture measure
	require_tools gdb
	capture a a
	# The position of lex's first instruction: where the first call of lex begins.
	insn=$("$HWTRACE" query a.db func lex --format csv | awk -F, 'NR == 2 { print $8 }')
	[ -n "$insn" ] || atf_fail "no call of lex"
	addr=0x$(nm "$HWTRACE_PROGS/measure" | awk '$3 == "lex" { print $1 }' | sed 's/^0*//')
	gdb -nx -batch -ex "break *$addr" -ex run -ex bt --args "$HWTRACE_PROGS/measure" a \
	    > gdb.out 2>&1 < /dev/null
	sed -n 's/^#\([0-9]*\) .* in \([^ ]*\) (.*) at \([^ ]*\)$/\1 \2 \3/p; s/^#\([0-9]*\)  *\([^ 0][^ ]*\) (.*) at \([^ ]*\)$/\1 \2 \3/p' \
	    gdb.out > gdb.frames
	[ "$(wc -l < gdb.frames)" -eq 3 ] || atf_fail "gdb: expected lex, parse, main: $(cat gdb.out)"
	"$HWTRACE" query a.db bt --at "$insn" --format tsv > bt.tsv || atf_fail "bt --at failed"
	awk -F'\t' 'NR > 1 && NR <= 4 { print $2, $3, $5 }' bt.tsv > hw.frames
	diff -u gdb.frames hw.frames > frames.diff || atf_fail "bt --at $insn disagrees with gdb: $(cat frames.diff)"
	awk -F'\t' 'NR == 2 { print $4 }' bt.tsv | grep -qx "$addr" ||
	    atf_fail "frame 0 of bt --at $insn is not at lex ($addr): $(cat bt.tsv)"
	n=$(sqlite3 a.db "SELECT insns FROM threads WHERE id = 1")
	atf_check -s exit:1 -e match:"--at $n: thread 1 ran $n instructions" \
	    "$HWTRACE" query a.db bt --at "$n"
	atf_check -s exit:2 -e match:"not an instruction number" \
	    "$HWTRACE" query a.db bt --at x12
}

# callgrind's Ir per line (and per instruction) of measure.c, from an
# uncompressed profile: "ADDR LINE IR" cost lines; the line after calls=
# is the call's inclusive cost, not an instruction's.  --skip-plt=no: by
# default callgrind credits a PLT stub's jump to the line that called it,
# where a trace sees it in the stub.
callgrind_counts()
{
	env -i valgrind --tool=callgrind --skip-plt=no --dump-instr=yes \
	    --compress-pos=no \
	    --compress-strings=no --callgrind-out-file=cg.out \
	    "$HWTRACE_PROGS/measure" a > /dev/null 2> cg.err ||
	    atf_fail "callgrind failed: $(cat cg.err)"
	awk '/^fl=/ || /^fi=/ || /^fe=/ { f = substr($0, 4); next }
	     /^fn=/ { next }
	     /^calls=/ { skip = 1; next }
	     /^0x/ { if (skip) { skip = 0; next }
		     if (f ~ /\/tests\/progs\/measure\.c$/) { l[$2] += $3; i[$1] += $3 } }
	     END { for (k in l) print "L", k, l[k]; for (k in i) print "I", k, i[k] }' cg.out > cg.counts
	grep "^L" cg.counts | awk '{ print $2, $3 }' | sort -n > cg.lines
	grep "^I" cg.counts | awk '{ print $2, $3 }' | sort > cg.insns
	[ -s cg.lines ] || atf_fail "no measure.c lines in callgrind's profile"
}

atf_test_case hot_by_line_matches_callgrind
hot_by_line_matches_callgrind_head() { atf_set descr "hot --by line and annotate --by line give each line of measure.c the instructions callgrind counts there"; }
hot_by_line_matches_callgrind_body()
{
	need_vg_fixture measure
	require_tools callgrind_annotate
	capture a a
	callgrind_counts
	"$HWTRACE" query a.db hot --by line -n 100000 --format tsv > hot.tsv ||
	    atf_fail "hot --by line failed"
	awk -F'\t' '$1 ~ /^tests\/progs\/measure\.c:/ { sub(/.*:/, "", $1); print $1, $3 }' hot.tsv |
	    sort -n > hw.lines
	diff -u cg.lines hw.lines > lines.diff ||
	    atf_fail "hot --by line disagrees with callgrind (line, Ir): $(cat lines.diff)"
	# lex's loop lines, by construction: 19 characters, 50 calls.
	grep -qx "$(src_line 'while (\*s') 3050" hw.lines ||
	    atf_fail "lex's loop condition: expected 3050 instructions: $(cat hw.lines)"
	# annotate --by line: the lines of lex and parse alone.
	for f in lex parse; do
		"$HWTRACE" query a.db annotate "$f" --by line --format tsv > ann.tsv ||
		    atf_fail "annotate $f --by line failed"
		awk -F'\t' 'NR > 1 { sub(/.*:/, "", $1); print $1, $2 }' ann.tsv | sort -n > ann.lines
		[ -s ann.lines ] || atf_fail "annotate $f: no lines"
		while read -r line n; do
			grep -qx "$line $n" cg.lines ||
			    atf_fail "annotate $f: line $line has $n instructions; callgrind: $(grep "^$line " cg.lines)"
		done < ann.lines
	done
	# With the source at hand, the text of the line is shown.
	(cd "$HWTRACE_SRC" && "$HWTRACE" query "$OLDPWD/a.db" annotate lex --by line --format tsv) |
	    grep -q "	        while (\*s != '" ||
	    atf_fail "annotate lex: no source text of the loop line"
}

atf_test_case annotate_insns_match_callgrind
annotate_insns_match_callgrind_head() { atf_set descr "annotate FUNC gives each instruction of lex and main the execution count callgrind gives it, with its disassembly"; }
annotate_insns_match_callgrind_body()
{
	need_vg_fixture measure
	require_tools callgrind_annotate objdump
	capture a a
	callgrind_counts
	for f in lex main; do
		"$HWTRACE" query a.db annotate "$f" --format tsv > ann.tsv ||
		    atf_fail "annotate $f failed"
		awk -F'\t' 'NR > 1 { print $1, $3 }' ann.tsv | sort > hw.insns
		[ "$(wc -l < hw.insns)" -ge 5 ] || atf_fail "annotate $f: too few instructions: $(cat ann.tsv)"
		while read -r a n; do
			grep -qx "$a $n" cg.insns ||
			    atf_fail "annotate $f: $a executed $n times; callgrind: '$(grep "^$a " cg.insns)'"
		done < hw.insns
	done
	# Each instruction of lex that callgrind saw is in annotate's answer.
	"$HWTRACE" query a.db annotate lex --format tsv | awk -F'\t' 'NR > 1 { print $1 }' > lex.addrs
	lo=$(nm "$HWTRACE_PROGS/measure" | awk '$3 == "lex" { print $1 }')
	size=$(nm -S "$HWTRACE_PROGS/measure" | awk '$4 == "lex" { print $2 }')
	while read -r a n; do
		[ $((a)) -ge $((0x$lo)) ] && [ $((a)) -lt $((0x$lo + 0x$size)) ] && echo "$a"
	done < cg.insns | sort > cg.lex
	[ -s cg.lex ] || atf_fail 'callgrind saw no instruction of lex'
	sort lex.addrs | diff -u cg.lex - > lex.diff || atf_fail "annotate lex: addresses differ from callgrind's: $(cat lex.diff)"
	# The disassembly of lex's first instruction is objdump's.
	first=$(awk -F'\t' 'NR == 2 { print $6 }' ann.tsv)
	[ -n "$first" ] || atf_fail "annotate main: no disassembly"
	atf_check -s exit:2 -e match:"not insn or line" "$HWTRACE" query a.db annotate lex --by edge
	atf_check -s exit:1 -e match:"no symbol matches 'nosuchfn'" "$HWTRACE" query a.db annotate nosuchfn
}

atf_test_case folded_matches_callgrind
folded_matches_callgrind_head() { atf_set descr "export --folded writes flamegraph.pl's format, weights adding up to the trace's instructions, each of measure.c's functions weighing its callgrind self cost"; }
folded_matches_callgrind_body()
{
	need_vg_fixture measure
	require_tools callgrind_annotate
	capture a a
	env -i valgrind --tool=callgrind --skip-plt=no \
	    --callgrind-out-file=cg.out "$HWTRACE_PROGS/measure" a \
	    > /dev/null 2>&1 || atf_fail "callgrind failed"
	atf_check -s exit:0 -o match:"^a.folded" "$HWTRACE" query a.db export --folded a.folded
	# The format flamegraph.pl parses: frames joined by ';', a space, a count.
	bad=$(grep -cvE '^[^;]+(;[^;]+)* [0-9]+$' a.folded)
	[ "$bad" -eq 0 ] || atf_fail "$bad lines are not folded stacks: $(grep -vE '^[^;]+(;[^;]+)* [0-9]+$' a.folded | head -3)"
	total=$(awk '{ s += $NF } END { print s }' a.folded)
	n=$(sqlite3 a.db "SELECT sum(insns) FROM threads")
	[ "$total" -eq "$n" ] || atf_fail "folded weights add up to $total, the trace has $n instructions"
	grep -qx "_start;__libc_start_main;__libc_start_call_main;main;parse;lex 7950" a.folded ||
	    atf_fail "no main;parse;lex path weighing 7950 (50 calls of 159): $(grep lex a.folded)"
	callgrind_annotate --auto=no --threshold=100 cg.out 2>/dev/null |
	    sed -n 's/^ *\([0-9,]*\) ([ 0-9.%]*) *[^ ]*measure\.c:\([a-z]*\) \[.*/\2 \1/p' |
	    tr -d , | sort > cg.self
	[ "$(wc -l < cg.self)" -ge 3 ] || atf_fail "callgrind_annotate gave no functions of measure.c"
	while read -r f self; do
		got=$(awk -v f="$f" '{ k = $1; sub(/.*;/, "", k); if (k == f) s += $NF } END { print s + 0 }' a.folded)
		[ "$got" -eq "$self" ] || atf_fail "folded: $f weighs $got, callgrind's self cost is $self"
	done < cg.self
	# --depth 3 folds the deeper frames into main: same total.
	"$HWTRACE" query a.db export --folded d.folded --depth 3 > /dev/null || atf_fail "--depth 3 failed"
	[ "$(awk '{ s += $NF } END { print s }' d.folded)" -eq "$n" ] || atf_fail "--depth 3 changed the total"
	! grep -q ";main;" d.folded || atf_fail "--depth 3 kept frames below main"
	atf_check -s exit:2 -e match:"one of --perfetto OUT and --folded OUT" \
	    "$HWTRACE" query a.db export --folded x --perfetto y
	test ! -e x || atf_fail "a refused export wrote a file"
}

atf_test_case diff_known_divergence
diff_known_divergence_head() { atf_set descr "diff of measure a and measure b: they split at the DIVERGE line, a goes on in alpha and b in beta; alpha's and beta's functions and lines are each in one run only; a run against itself is the same"; }
diff_known_divergence_body()
{
	need_vg_fixture measure
	capture a a
	capture b b
	"$HWTRACE" diff --first a.db b.db --format tsv > d.tsv || atf_fail "diff failed"
	dl=$(src_line 'DIVERGE \*/')
	al=$(src_line 'return (n \* 3 + 1)')
	grep -q "^split	both	1	[0-9]*	main+0x[0-9a-f]*	tests/progs/measure.c:$dl	\$" d.tsv ||
	    atf_fail "no split at measure.c:$dl in main: $(grep -v '^branch\|^line' d.tsv)"
	# The next rows start at the block after the split, on both sides.
	split=$(awk -F'\t' '$1 == "split" { print $4 }' d.tsv)
	for r in A B; do
		first=$(awk -F'\t' -v r=$r '$1 == "next" && $2 == r { print $4; exit }' d.tsv)
		[ "$first" = $((split + 1)) ] ||
		    atf_fail "$r's next blocks start at seq $first, the split is at seq $split"
	done
	awk -F'\t' '$1 == "next" && $2 == "A"' d.tsv | head -n 2 | tail -n 1 | grep -q "	alpha	tests/progs/measure.c:$al	" ||
	    atf_fail "A's second block after the split is not alpha at line $al: $(grep '^next' d.tsv)"
	awk -F'\t' '$1 == "next" && $2 == "B"' d.tsv | head -n 2 | tail -n 1 | grep -q "	beta	" ||
	    atf_fail "B's second block after the split is not beta: $(grep '^next' d.tsv)"
	grep -q "^function	A			alpha		2\$" d.tsv || atf_fail "alpha is not A's only: $(grep '^function' d.tsv)"
	grep -q "^function	B			beta		" d.tsv || atf_fail "beta is not B's only: $(grep '^function' d.tsv)"
	[ "$(grep -c '^function' d.tsv)" -eq 2 ] || atf_fail "expected 2 function rows: $(grep '^function' d.tsv)"
	grep -q "^line	A			tests/progs/measure.c:$al	alpha	" d.tsv || atf_fail "alpha's line $al not A's only"
	grep -q "^branch	B			main+0x[0-9a-f]* -> beta call	tests/progs/measure.c:" d.tsv ||
	    atf_fail "the call of beta is not B's only branch"
	# The same run twice is the same.
	"$HWTRACE" diff --first a.db a.db --format csv > same.csv || atf_fail "diff a a failed"
	[ "$(tail -n +2 same.csv | cut -d, -f1)" = same ] || atf_fail "a against itself: $(cat same.csv)"
	atf_check -s exit:2 -e match:"give two databases" "$HWTRACE" diff a.db
	atf_check -s exit:1 -e match:"nonexistent" "$HWTRACE" diff a.db nonexistent.db
}

# The fixture database of tests/query/fixture.sql (its walk is written
# out there by hand: thread 1 runs main (insns 0-1), sum (2-5), sq (6-8),
# sum (9-14), sq (15-17), sum (18-23), main (24); thread 2 runs sq once).
fixture_db()
{
	"$HWTRACE_BUILD/bench/qmkdb" fix.db "$HWTRACE_SRC/tests/query/fixture.sql" ||
	    atf_fail "cannot make the fixture database"
}

# fix_rows ERR WANT FIELDS ARG...: hwtrace query fix.db ARG... --format
# csv exits 0, its rows (the header left out) cut to FIELDS are WANT (a
# printf format) and its stderr is empty (ERR "-") or matches ERR (grep
# -E).
fix_rows()
{
	fr_err=$1
	fr_want=$2
	fr_fields=$3
	shift 3
	"$HWTRACE" query fix.db "$@" --format csv > fr.csv 2> fr.err
	fr_rc=$?
	[ "$fr_rc" -eq 0 ] ||
	    atf_fail "query $*: expected exit status 0, got $fr_rc: $(oneline fr.err)"
	tail -n +2 fr.csv | cut -d, -f"$fr_fields" > fr.got
	printf "$fr_want" > fr.want
	expect_same fr.want fr.got "query $* --format csv, fields $fr_fields"
	if [ "$fr_err" = - ]; then
		[ ! -s fr.err ] ||
		    atf_fail "query $*: expected nothing on stderr, got $(oneline fr.err)"
	else
		grep -Eq -- "$fr_err" fr.err ||
		    atf_fail "query $*: expected stderr matching '$fr_err', got $(oneline fr.err)"
	fi
}

atf_test_case coverage_lines_match_gcov
coverage_lines_match_gcov_head() { atf_set descr "coverage --lcov's line counts equal gcov's for the measure, calls, switch and recurse fixtures built -O0 --coverage and run once; where the two place a function's entry (gcov: the line naming it, the line table: its opening brace) and return (the closing brace, which gcov leaves out), the counts are the entry's"; }
coverage_lines_match_gcov_body()
{
	need_valgrind
	require_tools gcc gcov
	for p in measure calls switch recurse; do
		cp "$HWTRACE_SRC/tests/progs/$p.c" . &&
		    gcc -O0 -g --coverage -o $p $p.c 2> cc.err ||
		    atf_skip "gcc -O0 -g --coverage cannot build $p.c: $(oneline cc.err)"
		rm -f $p.gcda
		"$HWTRACE" capture --source valgrind -o $p.hwtrace -- ./$p \
		    > $p.out 2> $p.err ||
		    atf_fail "capture of $p failed: $(oneline $p.err)"
		[ -s $p.gcda ] || atf_fail "$p wrote no $p.gcda under capture"
		"$HWTRACE" query $p.hwtrace coverage --lcov $p.info > /dev/null ||
		    atf_fail "coverage --lcov of $p failed"
		# gcov's "COUNT:LINE:" ("#####" never ran, "-" no code).
		gcov -t $p.c 2> /dev/null | awk -F: '{
			c = $1; gsub(/[ *]/, "", c); l = $2; gsub(/ /, "", l)
			if (c == "#####") c = 0
			if (c ~ /^[0-9]+$/) print l, c }' | sort > $p.g
		awk -v f="/$p.c" '/^SF:/ { on = substr($0, length($0) - length(f) + 1) == f }
		    /^end_of_record/ { on = 0 }
		    on && /^DA:/ { split(substr($0, 4), a, ","); print a[1], a[2] }' \
		    $p.info | sort > $p.h
		[ "$(wc -l < $p.g)" -ge 10 ] && [ "$(wc -l < $p.h)" -ge 10 ] ||
		    atf_fail "$p: too few lines (gcov $(wc -l < $p.g), lcov $(wc -l < $p.h))"
		join $p.g $p.h | awk '$2 != $3' > $p.diff
		[ ! -s $p.diff ] ||
		    atf_fail "$p: LINE GCOV LCOV differ: $(oneline $p.diff)"
		# gcov's entry line L: the line table's is L + 1, "{".
		join -v 1 $p.g $p.h | while read -r l c; do
			n=$((l + 1))
			grep -q "^$n $c\$" $p.h &&
			    sed -n "${n}p" $p.c | grep -q '^{$' ||
			    echo "gcov's line $l ($c) without its brace"
		done > $p.bad
		# Ours alone: those braces, and closing ones.
		join -v 2 $p.g $p.h | while read -r l c; do
			sed -n "${l}p" $p.c | grep -q '^[{}]$' ||
			    echo "line $l ($c) is not a brace"
		done >> $p.bad
		[ ! -s $p.bad ] || atf_fail "$p: $(oneline $p.bad)"
	done
}

atf_test_case range_filters
range_filters_head() { atf_set descr "--from/--to on calls, tree, hot, annotate, coverage and export --folded keep what the fixture's hand-written walk ran between those instructions or times, tree's --depth counted from the range's roots; --thread on coverage; --from after --to is a usage error"; }
range_filters_body()
{
	fixture_db
	# Calls entered at instructions 3 to 15: the two calls of sq (6, 15).
	fix_rows "-" "3,6\n4,15\n" 1,8 calls --from 3 --to 15 --thread 1
	# Thread 1 is the default; 7 to 14 holds no entry.
	atf_check -s exit:0 -o inline:"call\n" sh -c \
	    "'$HWTRACE' query fix.db calls --from 7 --to 14 --format csv | cut -d, -f1"
	fix_rows "-" "1,0,sq,2,6,6,0,sq\n" 1- tree --from 6 --to 15
	# --depth counts from the range's roots: sum, then sq under it.
	fix_rows "-" "1,0,sum,1\n" 1-4 tree --from 2 --to 23 --depth 0
	fix_rows "-" "1,0,sum,1\n1,1,  sq,2\n" 1-4 tree --from 2 --to 23 --depth 1
	fix_rows "-" "1,0,sq,2\n" 1-4 tree --from 6 --to 15 --depth 0
	# sq's block alone (6-8): 3 instructions, all of the range.
	atf_check -s exit:0 -o match:"^sq +/usr/local/bin/fix +3 +1 +100" \
	    "$HWTRACE" query fix.db hot --from 6 --to 8 --thread 1
	# sum+0xb (9-12) once: add on line 12, inc cmp jl on line 11.
	fix_rows "-" "fix.c:11,sum,3,1,75.00\nfix.c:12,sum,1,1,25.00\n" 1- hot --by line --from 9 --to 12
	fix_rows "-" "fix.c:11,3\nfix.c:12,1\n" 1,2 annotate sum --by line --from 9 --to 12
	# sum's invocation (2-23) as folded stacks: 16 of its own, 6 in sq.
	"$HWTRACE" query fix.db export --folded r.folded --from 2 --to 23 > /dev/null ||
	    atf_fail "export --folded with a range failed"
	atf_check -s exit:0 -o inline:"sum 16\nsum;sq 6\n" cat r.folded
	# Weighed by time (fixture.sql: main and sum 1000 ns, sq 0): sum's
	# 1000 ns are its own, main has none left.
	"$HWTRACE" query fix.db export --folded t.folded --weight time > out ||
	    atf_fail "export --folded --weight time failed"
	# Where thread 2 lost data (fixture.sql), under its open call sq.
	atf_check -s exit:0 -o inline:"thread 1;main;sum 1000\nthread 2;sq;[gap] 1\n" cat t.folded
	atf_check -s exit:0 -o match:"t.folded +2 +1000 +ns" cat out
	# Thread 2 ran sq once (3 instructions) and nothing else.
	fix_rows "counts are lower bounds" "sq,1,3\nsum,0,0\nmain,0,0\nunused,0,0\n" 2,5,6 coverage --thread 2
	# Times (fixture.sql: thread 1's tsc 1000 at block 0, 1500 at block 5,
	# 2000 at block 8; the trace starts at tsc 1000): 400 to 600 ns after
	# the start is blocks 5 to 7, sq (3 instructions) and sum (4 + 2).
	fix_rows "-" "4,sq,15\n" 1,4,8 calls --from 400ns --to 0.6us
	fix_rows "-" "sum,6\nsq,3\n" 1,3 hot --from 400ns --to 600ns
	atf_check -s exit:2 -e match:"both as instruction numbers or both as times" \
	    "$HWTRACE" query fix.db calls --from 5 --to 1ms
	atf_check -s exit:2 -e match:"--from \\(2000 ns\\) is after --to \\(1000 ns\\)" \
	    "$HWTRACE" query fix.db tree --from 2us --to 1us
	# Coverage of instructions 6 to 17 (sq twice, sum+0xb, sum+0x4) and
	# of 400 to 600 ns (sq once, sum+0xb, sum+0x14).
	fix_rows "-" "sq,2,6,2\nsum,0,6,2\nmain,0,0,0\nunused,0,0,0\n" 2,5,6,7 coverage --from 6 --to 17
	fix_rows "-" "sq,1,3,2\nsum,0,6,4\nmain,0,0,0\nunused,0,0,0\n" 2,5,6,7 coverage --from 400ns --to 600ns
	for v in calls tree hot "annotate sum" coverage "export --folded x.folded"; do
		atf_check -s exit:2 -e match:"--from 9 is after --to 3" \
		    "$HWTRACE" query fix.db $v --from 9 --to 3
	done
	test ! -e x.folded || atf_fail "a refused export wrote its file"
	atf_check -s exit:2 -e match:"not an instruction number" \
	    "$HWTRACE" query fix.db calls --from -1
	atf_check -s exit:1 -e match:"no thread 7" \
	    "$HWTRACE" query fix.db calls --from 1 --thread 7
	atf_check -s exit:1 -e match:"branches are counted per thread" \
	    "$HWTRACE" query fix.db hot --by edge --from 1
}

atf_test_case depth_filters
depth_filters_head() { atf_set descr "--depth on hot, coverage, timeline and export --perfetto, and instruction ranges on timeline and export --perfetto, keep what the fixture's hand-written walk ran at most that deep or between those instructions; --from after --to is a usage error on each"; }
depth_filters_body()
{
	fixture_db
	# Depth 0 is the roots' own code: main's blocks 0 and 8 (2 + 1
	# instructions) of thread 1, and thread 2's sq (a root, 3).
	# Thread 2 lost data (fixture.sql): CSV says so on stderr.
	fix_rows "^hwtrace query: counts are lower bounds: the trace lost data in 2 places" \
	    "main,3\nsq,3\n" 1,3 hot --depth 0
	# Depth 1 adds sum's own 16 (its blocks less sq's); depth 2 all.
	fix_rows "counts are lower bounds" "sum,16,72.73\nmain,3,13.64\nsq,3,13.64\n" 1,3,5 hot --depth 1
	fix_rows "counts are lower bounds" "sum,16\nsq,9\nmain,3\n" 1,3 hot --depth 2
	# Instructions 6 to 20 start inside sq (depth 2): from its return,
	# sum+0xb, sum+0x4, (sq skipped), sum+0xb: 4 + 2 + 4.
	fix_rows "-" "sum,10\n" 1,3 hot --depth 1 --from 6 --to 20
	fix_rows "-" "fix.c:24,main,2\nfix.c:25,main,1\n" 1-3 hot --by line --depth 0 --thread 1
	atf_check -s exit:0 -o inline:"0x401030,2\n0x40103a,1\n" sh -c \
	    "'$HWTRACE' query fix.db hot --by block --depth 0 --thread 1 --format csv | tail -n +2 | cut -d, -f1,6 | sort"
	atf_check -s exit:1 -e match:"not by depth" \
	    "$HWTRACE" query fix.db hot --by edge --depth 0
	# Coverage at depth 0 of thread 1: main alone (entered once, 3
	# instructions, lines 24 and 25).
	fix_rows "-" "sq,0,0,0\nsum,0,0,0\nmain,1,3,2\nunused,0,0,0\n" 2,5,6,7 coverage --depth 0 --thread 1
	fix_rows "counts are lower bounds" "sq,1,3,2\nsum,1,16,5\nmain,1,3,2\nunused,0,0,0\n" 2,5,6,7 coverage --depth 1
	# timeline --depth: the calls at most that deep, events kept.
	atf_check -s exit:0 -o inline:"1,main,0\n2,sq,0\n" sh -c \
	    "'$HWTRACE' query fix.db timeline --depth 0 --format csv | awk -F, '\$4 == \"call\" { print \$2 \",\" \$5 \",\" \$6 }'"
	fix_rows "-" "enabled,\ncall,main\ncall,sum\ndisabled,\n" 4,5 timeline --depth 1 --thread 1
	# timeline over instructions 3 to 15 of thread 1 (the default): the
	# calls entered there (sq at 6 and 15, seq 2 and 5), no event.
	fix_rows "-" "2,sq,2\n5,sq,2\n" 3,5,6 timeline --from 3 --to 15
	fix_rows "-" "0,enabled,\n0,call,main\n" 3-5 timeline --from 0 --to 1 --thread 1
	fix_rows "-" "5,sq\n" 3,5 timeline --from 7 --to 20 --depth 2
	# export --perfetto over instruction 7 (inside the first sq): main,
	# sum and that sq; at instruction 16 at most 1 deep: main and sum.
	"$HWTRACE" query fix.db export --perfetto a.json --from 7 --to 7 > /dev/null ||
	    atf_fail "export --from 7 --to 7 failed"
	atf_check -s exit:0 -o inline:"1\n2\n3\n" sh -c \
	    "grep -o '\"call\": [0-9]*' a.json | cut -d' ' -f2"
	"$HWTRACE" query fix.db export --perfetto b.json --from 16 --to 16 --max-depth 1 > /dev/null ||
	    atf_fail "export --from 16 --to 16 --max-depth 1 failed"
	atf_check -s exit:0 -o inline:"1\n2\n" sh -c \
	    "grep -o '\"call\": [0-9]*' b.json | cut -d' ' -f2"
	"$HWTRACE" query fix.db export --perfetto c.json --from 0 --to 2 --thread 2 > /dev/null ||
	    atf_fail "export --thread 2 failed"
	atf_check -s exit:0 -o inline:"5\n" sh -c \
	    "grep -o '\"call\": [0-9]*' c.json | cut -d' ' -f2"
	for v in timeline "export --perfetto x.json" "hot --depth 1" "coverage --depth 0"; do
		atf_check -s exit:2 -e match:"--from 9 is after --to 3" \
		    "$HWTRACE" query fix.db $v --from 9 --to 3
		atf_check -s exit:2 -e match:"both as instruction numbers or both as times" \
		    "$HWTRACE" query fix.db $v --from 1 --to 1ms
	done
	test ! -e x.json || atf_fail "a refused export wrote its file"
	atf_check -s exit:2 -e match:"--depth: 'x' is not a number" \
	    "$HWTRACE" query fix.db timeline --depth x
}

atf_test_case hot_count_out_of_range
hot_count_out_of_range_head() { atf_set descr "hot --by line on a database whose block ran 2^63-1 times (a damaged or hostile one): exit 1 naming the block, not a total wrapped past int64 (found by make fuzz-db)"; }
hot_count_out_of_range_body()
{
	require_tools sqlite3
	fixture_db
	id=$(sqlite3 fix.db "SELECT min(id) FROM blocks WHERE ninsns > 1 AND exec_count > 0") ||
	    atf_fail "sqlite3 cannot read the fixture"
	[ -n "$id" ] || atf_fail "expected a block of 2 or more instructions that ran, got none"
	sqlite3 fix.db "UPDATE blocks SET exec_count = 9223372036854775807 WHERE id = $id" ||
	    atf_fail "sqlite3 cannot change the fixture"
	atf_check -s exit:1 -e match:"blocks: block $id ran 9223372036854775807 times with [0-9]+ instructions: out of range" \
	    "$HWTRACE" query fix.db hot --by line
}

atf_init_test_cases()
{
	atf_add_test_case bt_crash_matches_gdb
	atf_add_test_case bt_crash_matches_gdb_core
	atf_add_test_case bt_first_insn_fault
	atf_add_test_case bt_at_matches_gdb_breakpoint
	atf_add_test_case hot_by_line_matches_callgrind
	atf_add_test_case annotate_insns_match_callgrind
	atf_add_test_case folded_matches_callgrind
	atf_add_test_case diff_known_divergence
	atf_add_test_case coverage_lines_match_gcov
	atf_add_test_case range_filters
	atf_add_test_case depth_filters
	atf_add_test_case hot_count_out_of_range
}
