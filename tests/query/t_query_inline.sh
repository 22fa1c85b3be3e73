#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Inlined frames (issue 27, item 3) on valgrind captures of the inline
# fixture (tests/progs/inline.c: measure() always inlined into main),
# checked against gdb, which builds its inline frames from the same DWARF
# entries without sharing code with hwtrace: bt's frames against gdb's bt
# at the crash, func's entries against the hits of gdb's breakpoint on
# the inlined function and the count known by construction; the same
# with the fixture built by clang and with -gsplit-dwarf.

. "$(atf_get_srcdir)/../env.sh"
. "$HWTRACE_SRC/tests/lib/hwtr_test.sh"

need()
{
	need_vg_fixture inline
	require_tools gdb
}

# build_inl CC WHAT FLAG...: ./inl, tests/progs/inline.c built by CC with
# FLAGs, static, -O2 -g (need first); skips without CC, or when CC cannot
# build it, saying it cannot WHAT.
build_inl()
{
	inl_cc=$1
	inl_what=$2
	shift 2
	need
	require_tools "$inl_cc"
	cp "$HWTRACE_SRC/tests/progs/inline.c" .
	"$inl_cc" -std=gnu11 -O2 -g "$@" -static -o inl inline.c ||
	    atf_skip "$inl_cc cannot $inl_what"
}

# capture NAME PROG ARG...: a capture of PROG ARG... into NAME.db, by
# the valgrind source unless $source says otherwise.
capture()
{
	name=$1
	shift
	env -i "$HWTRACE" capture --source "${source:-valgrind}" \
	    -o "$name.hwtrace" -- \
	    "$@" > "$name.out" 2> "$name.err"
	echo $? > "$name.rc"
	"$HWTRACE" index -q -o "$name.db" "$name.hwtrace" 2> "$name.ixerr" ||
	    atf_fail "index of $name failed: $(cat "$name.ixerr")"
}

# gdb_frames PROG ARG...: gdb's bt after the crash, frames 1 and up, as
# "N FUNCTION FILE:LINE" ("#1  0x... in measure (s=...) at f.c:29" and
# the inline caller's "#2  main (argc=2, ...) at f.c:45").
gdb_frames()
{
	gdb -nx -batch -ex run -ex bt --args "$@" > gdb.out 2>&1 < /dev/null
	sed -n 's/^#\([1-9][0-9]*\) .* in \([^ ]*\) (.*) at \([^ ]*\)$/\1 \2 \3/p; s/^#\([1-9][0-9]*\)  *\([^ 0][^ ]*\) (.*) at \([^ ]*\)$/\1 \2 \3/p' \
	    gdb.out > gdb.frames
}

# bt_frame_is FUNC WANT: FUNC's row of bt.tsv, its frame number and
# inlined flag ("1 1": frame 1, inlined), is WANT.
bt_frame_is()
{
	got=$(awk -F'\t' -v f="$1" '$3 == f { print $2, $8 }' bt.tsv)
	[ "$got" = "$2" ] ||
	    atf_fail "expected $1's frame and inlined flag '$2', got '$got': $(oneline bt.tsv)"
}

# check_bt DB [base]: bt's frames 1 and up with a line agree with
# gdb.frames (with "base", by file name alone: gdb prints a split unit's
# file as compiled, the line table has it joined to the directory), and
# measure's frame is marked inlined.
check_bt()
{
	"$HWTRACE" query "$1" bt --format tsv > bt.tsv || atf_fail "bt failed"
	head -n 1 bt.tsv | grep -q "	inlined$" ||
	    atf_fail "bt has no inlined column: $(head -n 1 bt.tsv)"
	awk -F'\t' 'NR == 2 { print $3 }' bt.tsv | grep -q strlen ||
	    atf_fail "bt's frame 0 is not in strlen: $(cat bt.tsv)"
	awk -F'\t' 'NR > 2 && $5 != "" { print $2, $3, $5 }' bt.tsv |
	    head -n "$(wc -l < gdb.frames)" > hw.frames
	if [ "$2" = base ]; then
		sed -i 's| [^ ]*/| |' gdb.frames hw.frames
	fi
	diff -u gdb.frames hw.frames > frames.diff ||
	    atf_fail "bt disagrees with gdb: $(tr '\n' ' ' < frames.diff)"
	bt_frame_is measure "1 1"
	bt_frame_is main "2 0"
}

atf_test_case bt_inlined_matches_gdb
bt_inlined_matches_gdb_head() { atf_set descr "bt at a crash in strlen called from measure() inlined into main: strlen, measure (inlined), main with gdb's function names and lines"; }
bt_inlined_matches_gdb_body()
{
	need
	capture c "$HWTRACE_PROGS/inline" crash
	[ "$(cat c.rc)" = 139 ] || atf_fail "capture of 'inline crash': expected exit 139, got $(cat c.rc)"
	gdb_frames "$HWTRACE_PROGS/inline" crash
	[ "$(wc -l < gdb.frames)" -ge 2 ] || atf_fail "gdb gave fewer than 2 frames above frame 0: $(cat gdb.out)"
	grep -q "^1 measure " gdb.frames && grep -q "^2 main " gdb.frames ||
	    atf_fail "gdb's frames 1 and 2 are not measure and main: $(cat gdb.frames)"
	check_bt c.db
}

# gdb_hits PROG ARG [FUNC]: how many times gdb's breakpoint on FUNC
# (default measure; one location per inlined instance) is hit in a run.
gdb_hits()
{
	printf '%s\n' 'set pagination off' "break ${3:-measure}" 'commands' \
	    'silent' 'continue' 'end' 'run' 'info breakpoints' > hits.gdb
	gdb -nx -batch -x hits.gdb --args "$1" "$2" > hits.out 2>&1 < /dev/null
	sed -n 's/.*breakpoint already hit \([0-9]*\) time.*/\1/p' hits.out
}

atf_test_case bt_inlined_40_deep_matches_gdb
bt_inlined_40_deep_matches_gdb_head() { atf_set descr "bt at a fault 40 inlined functions deep (f1 ... f40, each always_inline into the one before, main around them): all 40 frames and main with gdb's names and lines (queries followed 32, then put main at the 32nd's call site)"; }
bt_inlined_40_deep_matches_gdb_body()
{
	need
	# f40 reads through p, NULL when there is an argument; fK calls
	# fK+1 on a line of its own.
	{
		echo 'static int *volatile p;'
		echo 'static inline __attribute__((always_inline)) int f40(int x) { return *p + x; }'
		i=39
		while [ $i -ge 1 ]; do
			printf 'static inline __attribute__((always_inline)) int f%d(int x)\n{\n\treturn f%d(x + %d) * 3;\n}\n' \
			    $i $((i + 1)) $i
			i=$((i - 1))
		done
		echo 'int main(int argc, char **argv) { static int v = 5; (void)argv; p = argc > 1 ? 0 : &v; return f1(argc) & 1; }'
	} > deep.c
	cc -O2 -g -o deep deep.c || atf_fail "cannot build deep.c"
	capture d ./deep x
	[ "$(cat d.rc)" = 139 ] ||
	    atf_fail "capture of 'deep x': expected exit 139, got $(cat d.rc)"
	gdb_frames ./deep x
	[ "$(wc -l < gdb.frames)" -eq 40 ] &&
	    grep -q "^39 f1 deep.c:" gdb.frames &&
	    grep -q "^40 main deep.c:" gdb.frames ||
	    atf_fail "gdb's frames 1 to 40 are not f39 ... f1, main: $(cat gdb.out)"
	"$HWTRACE" query d.db bt --format tsv > bt.tsv || atf_fail "bt failed"
	awk -F'\t' 'NR > 2 && $5 != "" { print $2, $3, $5 }' bt.tsv |
	    head -n 40 | sed 's| [^ ]*/| |' > hw.frames
	diff -u gdb.frames hw.frames > frames.diff ||
	    atf_fail "bt disagrees with gdb: $(tr '\n' ' ' < frames.diff)"
	bt_frame_is f1 "39 1"
	bt_frame_is main "40 0"
}

atf_test_case bt_fault_inside_inlined
bt_fault_inside_inlined_head() { atf_set descr "bt at a fault inside an inlined body (tests/conform/inl.c: sq() inlined into outer() reads NULL): sq (inlined), outer, main as gdb shows them, though no block holds the instruction that faulted"; }
bt_fault_inside_inlined_body()
{
	need
	cc -O2 -g -o inl "$HWTRACE_SRC/tests/conform/inl.c" ||
	    atf_fail "cannot build tests/conform/inl.c"
	capture f ./inl x
	[ "$(cat f.rc)" = 139 ] || atf_fail "capture of 'inl x': expected exit 139, got $(cat f.rc)"
	gdb -nx -batch -ex run -ex bt --args ./inl x > gdb.out 2>&1 < /dev/null
	sed -n 's/^#[0-9][0-9]* .* in \([^ ]*\) (.*/\1/p; s/^#[0-9][0-9]*  *\([^ 0][^ ]*\) (.*/\1/p' \
	    gdb.out > gdb.names
	[ "$(head -n 3 gdb.names | tr '\n' ' ')" = "sq outer main " ] ||
	    atf_fail "gdb's frames are not sq, outer, main: $(cat gdb.out)"
	"$HWTRACE" query f.db bt --format tsv > bt.tsv || atf_fail "bt failed"
	awk -F'\t' 'NR > 1 && NR <= 4 { print $3, $8 }' bt.tsv > hw.names
	printf 'sq 1\nouter 0\nmain 0\n' > want
	diff -u want hw.names > names.diff ||
	    atf_fail "bt disagrees with gdb (sq inlined, outer, main): $(tr '\n' ' ' < names.diff)"
}

atf_test_case func_inlined_entries
func_inlined_entries_head() { atf_set descr "func measure, a function only ever inlined: one row per entry into its inlined instances, as many as gdb's breakpoint hits and the fixture's ROUNDS (+1 with crash)"; }
func_inlined_entries_body()
{
	need
	rounds=$(sed -n 's/^#define ROUNDS[	 ]*\([0-9]*\)$/\1/p' \
	    "$HWTRACE_SRC/tests/progs/inline.c")
	[ -n "$rounds" ] || atf_fail "no ROUNDS in tests/progs/inline.c"
	for arg in ok crash; do
		capture "$arg" "$HWTRACE_PROGS/inline" "$arg"
		want=$rounds
		[ "$arg" = crash ] && want=$((rounds + 1))
		hits=$(gdb_hits "$HWTRACE_PROGS/inline" "$arg")
		[ "$hits" = "$want" ] || atf_fail "gdb: expected $want hits of measure ($arg), got '$hits': $(cat hits.out)"
		"$HWTRACE" query "$arg.db" func measure --format tsv > f.tsv ||
		    atf_fail "func measure failed"
		got=$(awk -F'\t' 'NR > 1 && $14 == "inlined" && $4 == "measure" && $5 == "main"' f.tsv | wc -l)
		[ "$got" -eq "$hits" ] || atf_fail "func measure ($arg): expected $hits inlined entries (gdb), got $got: $(cat f.tsv)"
		got=$(awk -F'\t' 'NR > 1' f.tsv | wc -l)
		[ "$got" -eq "$hits" ] || atf_fail "func measure ($arg): expected $hits rows, got $got"
		# twice() is entered by the returns from bump(), its range
		# interleaved with main's instructions.
		twice=$(gdb_hits "$HWTRACE_PROGS/inline" "$arg" twice)
		[ "$twice" = "$rounds" ] || atf_fail "gdb: expected $rounds hits of twice ($arg), got '$twice': $(cat hits.out)"
		"$HWTRACE" query "$arg.db" func twice --format tsv > t.tsv ||
		    atf_fail "func twice failed"
		got=$(awk -F'\t' 'NR > 1 && $14 == "inlined" && $4 == "twice"' t.tsv | wc -l)
		[ "$got" -eq "$twice" ] || atf_fail "func twice ($arg): expected $twice inlined entries (gdb), got $got: $(cat t.tsv)"
		# Each row's call site is one of gdb's two locations' callers.
		awk -F'\t' 'NR > 1 { print $6 }' f.tsv | sort -u > sites
		[ "$(wc -l < sites)" -eq "$([ $arg = crash ] && echo 2 || echo 1)" ] ||
		    atf_fail "func measure ($arg): unexpected call sites $(cat sites)"
	done
}

atf_test_case tree_folded_inlined
tree_folded_inlined_head() { atf_set descr "tree and export --folded: the calls of strlen made from the inlined measure go through a 'measure (inlined)' frame under main, ROUNDS + 1 of them as gdb's breakpoint counts"; }
tree_folded_inlined_body()
{
	need
	capture c "$HWTRACE_PROGS/inline" crash
	hits=$(gdb_hits "$HWTRACE_PROGS/inline" crash)
	[ -n "$hits" ] || atf_fail "gdb gave no hit count: $(cat hits.out)"
	"$HWTRACE" query c.db tree --format tsv > tree.tsv || atf_fail "tree failed"
	got=$(awk -F'\t' '$8 ~ /\/main\/measure \(inlined\)$/ { print $4 }' tree.tsv)
	[ "$got" = "$hits" ] || atf_fail "tree: expected main/measure (inlined) with $hits calls (gdb), got '$got': $(grep -n measure tree.tsv)"
	got=$(awk -F'\t' '$8 ~ /\/main\/measure \(inlined\)\/[^\/]*strlen[^\/]*$/ { print $4 }' tree.tsv)
	[ "$got" = "$hits" ] || atf_fail "tree: expected $hits calls of strlen under measure (inlined), got '$got'"
	got=$(awk -F'\t' '$8 ~ /\/main\/[^\/]*strlen/' tree.tsv | wc -l)
	[ "$got" -eq 0 ] || atf_fail "tree: strlen still called from main directly: $(grep strlen tree.tsv)"
	"$HWTRACE" query c.db export --folded f.txt > /dev/null ||
	    atf_fail "export --folded failed"
	grep -q ';main;measure (inlined);[^;]*strlen[^;]* [0-9]*$' f.txt ||
	    atf_fail "folded: no main;measure (inlined);strlen stack: $(grep main f.txt)"
}

atf_test_case folded_time_inlined
folded_time_inlined_head() { atf_set descr "export --folded --weight time through a 'measure (inlined)' frame: tree gives the frame the duration of the calls made through it (the sum of its children's rows), the frame weighs nothing of its own, and the weights add up to the roots' durations (it failed on the frame's NULL duration before)"; }
folded_time_inlined_body()
{
	need
	capture c "$HWTRACE_PROGS/inline" crash
	"$HWTRACE" query c.db tree --format tsv > tree.tsv || atf_fail "tree failed"
	# The frame's duration against its children's (the rows one deeper
	# whose path continues it).
	awk -F'\t' '
	    $8 ~ /\/main\/measure \(inlined\)$/ { p = $8; d = $2; dur = $7; n++ }
	    p != "" && $2 == d + 1 && index($8, p "/") == 1 { sum += $7 }
	    END {
		if (n != 1 || dur == "") { print "no timed frame: " n " " dur; exit 1 }
		if (dur != sum) { print "duration " dur " against its calls " sum; exit 1 }
	    }' tree.tsv > chk || atf_fail "tree: $(cat chk)"
	roots=$(awk -F'\t' 'NR > 1 && $2 == 0 { s += $7 } END { print s + 0 }' tree.tsv)
	"$HWTRACE" query c.db export --folded f.txt --weight time --format tsv \
	    > out 2> err || atf_fail "export --folded --weight time failed: $(cat err)"
	total=$(awk -F'\t' 'NR == 2 { print $3 }' out)
	[ "$total" = "$roots" ] || atf_fail "folded: total $total ns, the roots' durations $roots"
	sum=$(grep -v '\[gap\] [0-9]*$' f.txt | awk '{ s += $NF } END { print s + 0 }')
	[ "$sum" = "$roots" ] || atf_fail "folded: the stacks weigh $sum ns, the roots $roots"
	! grep -q ';measure (inlined) [0-9]*$' f.txt ||
	    atf_fail "folded: the inlined frame weighs time of its own: $(grep 'measure (inlined) ' f.txt)"
}

atf_test_case tree_folded_range_roots
tree_folded_range_roots_head() { atf_set descr "tree and export --folded over a range inside main's first loop: its roots are the ROUNDS strlen calls made from the inlined measure, with no 'measure (inlined)' frame of main's above them (the caller is outside the range)"; }
tree_folded_range_roots_body()
{
	need
	capture c "$HWTRACE_PROGS/inline"
	rounds=$(sed -n 's/^#define ROUNDS[	 ]*\([0-9]*\)$/\1/p' \
	    "$HWTRACE_SRC/tests/progs/inline.c")
	# The window: main's first call of strlen up to its first of bump.
	"$HWTRACE" query c.db calls --format tsv > calls.tsv ||
	    atf_fail "calls failed"
	from=$(awk -F'\t' '$5 == "main" && $4 ~ /strlen/ { print $8; exit }' calls.tsv)
	to=$(awk -F'\t' '$5 == "main" && $4 == "bump" { print $8 - 1; exit }' calls.tsv)
	[ -n "$from" ] && [ -n "$to" ] ||
	    atf_fail "no strlen or bump call from main: $(grep main calls.tsv | head -n 5)"
	"$HWTRACE" query c.db tree --from "$from" --to "$to" --format tsv \
	    > tree.tsv || atf_fail "tree --from $from --to $to failed"
	awk -F'\t' 'NR > 1 && $2 == 0' tree.tsv > roots
	[ "$(wc -l < roots)" -eq 1 ] && awk -F'\t' '$3 ~ /strlen/ { f = 1 } END { exit !f }' roots ||
	    atf_fail "expected strlen as the one root, got: $(oneline tree.tsv)"
	got=$(awk -F'\t' '{ print $4 }' roots)
	[ "$got" = "$rounds" ] ||
	    atf_fail "expected $rounds calls of strlen (ROUNDS), got '$got'"
	! grep -q 'inlined' tree.tsv ||
	    atf_fail "a frame of the caller outside the range: $(oneline tree.tsv)"
	"$HWTRACE" query c.db export --folded f.txt --from "$from" --to "$to" \
	    > /dev/null || atf_fail "export --folded failed"
	[ "$(wc -l < f.txt)" -eq 1 ] && grep -q '^[^;]*strlen[^;]* [0-9]*$' f.txt ||
	    atf_fail "folded: expected one strlen stack alone, got: $(oneline f.txt)"
}

atf_test_case tree_range_depth
tree_range_depth_head() { atf_set descr "tree --depth D over a range counts from the range's roots: from printf's first callee to the end, --depth 0 is that call and exit (entered after main returned, shallower), and each --depth D is the range's whole tree cut at depth D"; }
tree_range_depth_body()
{
	need
	capture c "$HWTRACE_PROGS/inline"
	"$HWTRACE" query c.db calls --format tsv > calls.tsv ||
	    atf_fail "calls failed"
	# The first call printf makes: it and its siblings are roots, and
	# so is exit, which main's caller makes after main returned.
	first=$(awk -F'\t' '$5 ~ /printf/ { print $4; exit }' calls.tsv)
	from=$(awk -F'\t' '$5 ~ /printf/ { print $8; exit }' calls.tsv)
	[ -n "$from" ] || atf_fail "no call made by printf: $(grep printf calls.tsv)"
	"$HWTRACE" query c.db tree --from "$from" --format tsv > all.tsv ||
	    atf_fail "tree --from $from failed"
	for d in 0 1 2; do
		"$HWTRACE" query c.db tree --from "$from" --depth $d \
		    --format tsv > d$d.tsv ||
		    atf_fail "tree --from $from --depth $d failed"
		awk -F'\t' -v d=$d 'NR == 1 || $2 <= d' all.tsv > want$d.tsv
		expect_same want$d.tsv d$d.tsv "tree --from $from --depth $d"
	done
	awk -F'\t' 'NR > 1 { print $3 }' d0.tsv > roots
	[ "$(head -n 1 roots)" = "$first" ] && grep -qx exit roots ||
	    atf_fail "--depth 0: expected $first first and exit among the roots, got: $(oneline d0.tsv)"
	[ "$(wc -l < d1.tsv)" -gt "$(wc -l < d0.tsv)" ] ||
	    atf_fail "--depth 1 shows nothing below the roots: $(oneline d1.tsv)"
}

atf_test_case hot_by_inline
hot_by_inline_head() { atf_set descr "hot --by inline and annotate: measure's instructions are its inlined loop instance's instructions (readelf's DWARF range, objdump's instructions in it) times ROUNDS, and hot's rows add up to every instruction"; }
hot_by_inline_body()
{
	need
	command -v readelf >/dev/null && command -v objdump >/dev/null ||
	    atf_skip "binutils are not installed"
	prog=$HWTRACE_PROGS/inline
	rounds=$(sed -n 's/^#define ROUNDS[	 ]*\([0-9]*\)$/\1/p' \
	    "$HWTRACE_SRC/tests/progs/inline.c")
	loop=$(grep -n 't += measure(word);' "$HWTRACE_SRC/tests/progs/inline.c" |
	    cut -d: -f1)
	# The loop's instance: DW_AT_low_pc and DW_AT_high_pc (a length)
	# of the inlined subroutine called at that line.
	readelf --debug-dump=info "$prog" 2>/dev/null | awk -v line="$loop" '
	    /DW_TAG_inlined_subroutine/ { lo = ""; len = ""; inl = 1; next }
	    /Abbrev Number/ { inl = 0 }
	    inl && /DW_AT_low_pc/ { lo = $NF }
	    inl && /DW_AT_high_pc/ { len = $NF }
	    inl && /DW_AT_call_line/ && $NF == line && lo != "" && len != "" {
		print lo, len; exit }' > range
	[ -s range ] || atf_skip "no contiguous inlined instance at line $loop"
	read lo len < range
	hi=$(printf '%#x' $((lo + len)))
	objdump -d --no-show-raw-insn --start-address="$lo" \
	    --stop-address="$hi" "$prog" | grep -E '^ +[0-9a-f]+:' > insns
	grep -Eq '	j' insns && atf_skip "the instance branches inside: $(cat insns)"
	want=$(( $(wc -l < insns) * rounds ))
	[ "$want" -gt 0 ] || atf_fail "objdump gave no instructions in $lo-$hi"
	capture ok "$prog" ok
	"$HWTRACE" query ok.db hot --by inline -n 100000 --format tsv > hot.tsv ||
	    atf_fail "hot --by inline failed"
	head -n 1 hot.tsv | grep -q "^function	inlined	image	insns	percent$" ||
	    atf_fail "unexpected columns: $(head -n 1 hot.tsv)"
	got=$(awk -F'\t' '$1 == "measure" && $2 == 1 { print $4 }' hot.tsv)
	[ "$got" = "$want" ] || atf_fail "measure (inlined): expected $want instructions ($(wc -l < insns) in $lo-$hi, $rounds times), got '$got'"
	# annotate: the same instructions marked inlined from measure.
	"$HWTRACE" query ok.db annotate main --format tsv > ann.tsv ||
	    atf_fail "annotate main failed"
	got=$(awk -F'\t' 'NR > 1 && $8 == "measure" { n++; s += $3 }
	    END { print n + 0, s + 0 }' ann.tsv)
	[ "$got" = "$(wc -l < insns | tr -d ' ') $want" ] || atf_fail "annotate main: expected $(wc -l < insns | tr -d ' ') instructions inlined from measure executed $want times in all, got '$got'"
	total=$(awk -F'\t' 'NR > 1 { s += $4 } END { print s }' hot.tsv)
	insns=$("$HWTRACE" query ok.db threads --format tsv | awk -F'\t' '
	    NR == 1 { for (i = 1; i <= NF; i++) if ($i == "insns") c = i }
	    NR > 1 { s += $c } END { print s }')
	[ "$total" = "$insns" ] || atf_fail "rows add up to $total instructions, the threads ran $insns"
}

atf_test_case clang_matches_gdb
clang_matches_gdb_head() { atf_set descr "the fixture built by clang -O2 (inlined ranges without DW_AT_entry_pc): bt's frames and func's entries of measure and twice as gdb gives them"; }
clang_matches_gdb_body()
{
	build_inl clang "build a static program here"
	capture c "$PWD/inl" crash
	gdb_frames "$PWD/inl" crash
	grep -q "^1 measure " gdb.frames ||
	    atf_skip "clang did not inline measure as gdb sees it: $(cat gdb.out)"
	check_bt c.db base
	for f in measure twice; do
		hits=$(gdb_hits "$PWD/inl" crash "$f")
		[ -n "$hits" ] || atf_fail "gdb gave no hit count for $f: $(cat hits.out)"
		got=$("$HWTRACE" query c.db func "$f" --format tsv |
		    awk -F'\t' 'NR > 1 && $14 == "inlined"' | wc -l)
		[ "$got" -eq "$hits" ] || atf_fail "func $f: expected $hits inlined entries (gdb), got $got"
	done
}

atf_test_case split_dwarf
split_dwarf_head() { atf_set descr "-gsplit-dwarf: inlined frames come from the .dwo when it is there; without it index warns at most and does not crash"; }
split_dwarf_body()
{
	build_inl cc "build with -gsplit-dwarf" -gsplit-dwarf
	ls ./*.dwo > /dev/null 2>&1 || atf_skip "no .dwo written"
	# Valgrind's own DWARF reader gives up on some split-DWARF binaries
	# ("Possibly corrupted debuginfo file"): the step source reads none.
	source=step
	capture s "$PWD/inl" crash
	gdb_frames "$PWD/inl" crash
	grep -q "^1 measure " gdb.frames ||
	    atf_skip "gdb does not see measure through the .dwo: $(cat gdb.out)"
	check_bt s.db base
	rm -f ./*.dwo
	capture n "$PWD/inl" crash
	grep -q "without their .dwo" n.ixerr ||
	    atf_fail "index without the .dwo did not say so: $(cat n.ixerr)"
	"$HWTRACE" query n.db bt --format tsv > n.tsv ||
	    atf_fail "bt without the .dwo failed"
	awk -F'\t' 'NR > 1 { print $3 }' n.tsv | grep -q '^main$' ||
	    atf_fail "bt without the .dwo lost main: $(cat n.tsv)"
}

atf_test_case empty_instances
empty_instances_head() { atf_set descr "inlined instances without code (gcc: DW_AT_high_pc 0, and an empty entry in a DW_AT_ranges list, as readelf shows them): no rows and no frame for the empty one (gdb: not defined), the real range alone for the other, entered ROUNDS times as gdb counts"; }
empty_instances_body()
{
	need
	require_tools readelf sqlite3
	src=$HWTRACE_SRC/tests/progs/inlempty.c
	rounds=$(sed -n 's/^#define ROUNDS[	 ]*\([0-9]*\)$/\1/p' "$src")
	cc -std=gnu11 -O2 -g -static -o ie "$src" ||
	    atf_skip "cc cannot build a static program here"
	# What the compiler really wrote: per inlined subroutine its origin,
	# low_pc and high_pc (a length) or ranges offset.
	readelf --debug-dump=info ie > info.txt 2>/dev/null
	awk '/DW_TAG_subprogram/ { split($1, a, /[<>]/); sp = a[4]; next }
	    /Abbrev Number/ { sp = "" }
	    sp != "" && /DW_AT_name/ { name[sp] = $NF }
	    /DW_TAG_inlined_subroutine/ { n++; inl = 1; next }
	    /Abbrev Number/ { inl = 0 }
	    inl && /DW_AT_abstract_origin/ { o[n] = $NF; gsub(/[<>]|0x/, "", o[n]) }
	    inl && /DW_AT_high_pc/ { h[n] = $NF }
	    inl && /DW_AT_ranges/ { r[n] = $NF }
	    END { for (i = 1; i <= n; i++) print name[o[i]], (i in h) ? "high_pc " h[i] : "ranges " r[i] }' \
	    info.txt > inst.txt
	grep -q '^vanish high_pc 0$' inst.txt ||
	    atf_skip "cc wrote no empty instance of vanish: $(tr '\n' ' ' < inst.txt)"
	roff=$(awk '$1 == "keep" && $2 == "ranges" { print $3 }' inst.txt)
	[ -n "$roff" ] || atf_skip "cc wrote no range list for keep: $(tr '\n' ' ' < inst.txt)"
	# keep's ranges: the non-empty ones of its list; one must be empty.
	readelf --debug-dump=Ranges ie 2>/dev/null | awk -v off="$roff" '
	    { o = $1; sub(/^0+/, "", o); if (o == "") o = "0" }
	    $1 ~ /^[0-9a-f]+$/ && ("0x" o) == off { on = 1 }
	    on && /End of list/ { exit }
	    on && NF >= 3 && $2 ~ /^[0-9a-f]+$/ && $3 ~ /^[0-9a-f]+$/ {
		if ($2 == $3) print "empty"; else print "0x" $2, "0x" $3 }' \
	    > ranges.txt
	grep -q '^empty$' ranges.txt ||
	    atf_skip "keep's range list has no empty entry: $(tr '\n' ' ' < ranges.txt)"
	grep -v '^empty$' ranges.txt | while read lo hi; do
		printf '%d %d\n' "$lo" "$hi"; done | sort > want.txt
	[ -s want.txt ] || atf_fail "keep has no non-empty range: $(cat ranges.txt)"
	capture c "$PWD/ie" x
	[ "$(cat c.rc)" = 0 ] || atf_fail "capture of inlempty: expected exit 0, got $(cat c.rc)"
	[ -s c.ixerr ] && atf_fail "index warned: $(cat c.ixerr)"
	sqlite3 c.db "SELECT lo, hi FROM inlines WHERE name = 'keep' ORDER BY lo" |
	    tr '|' ' ' | sort > got.txt
	diff -u want.txt got.txt > r.diff ||
	    atf_fail "keep's rows differ from readelf's non-empty ranges: $(tr '\n' ' ' < r.diff)"
	got=$(sqlite3 c.db "SELECT count(*) FROM inlines WHERE name = 'vanish' OR hi <= lo")
	[ "$got" = 0 ] || atf_fail "expected no row for the empty instance nor an empty range, got $got"
	# gdb: no function vanish; keep hit once per round.
	hits=$(gdb_hits "$PWD/ie" x vanish)
	grep -q 'Function "vanish" not defined' hits.out ||
	    atf_skip "gdb finds vanish: $(tr '\n' ' ' < hits.out)"
	hits=$(gdb_hits "$PWD/ie" x keep)
	[ "$hits" = "$rounds" ] || atf_fail "gdb: expected $rounds hits of keep, got '$hits': $(cat hits.out)"
	"$HWTRACE" query c.db func keep --format tsv > f.tsv || atf_fail "func keep failed"
	got=$(awk -F'\t' 'NR > 1 && $14 == "inlined" && $4 == "keep"' f.tsv | wc -l)
	[ "$got" -eq "$hits" ] || atf_fail "func keep: expected $hits inlined entries (gdb), got $got: $(cat f.tsv)"
	"$HWTRACE" query c.db func vanish > v.out 2> v.err &&
	    atf_fail "func vanish: expected no function (as gdb), got $(cat v.out)"
	"$HWTRACE" query c.db hot --by inline -n 100000 --format tsv > hot.tsv ||
	    atf_fail "hot --by inline failed"
	awk -F'\t' '$1 == "vanish"' hot.tsv | grep -q . &&
	    atf_fail "hot --by inline has a row for vanish: $(cat hot.tsv)"
	return 0
}

atf_test_case perfetto_inlined
perfetto_inlined_head() { atf_set descr "export --perfetto: one 'measure (inlined)' slice per entry (gdb's breakpoint hits, ROUNDS + 1), one 'twice (inlined)' per entry (ROUNDS), each nested in a slice of main, every call of strlen from measure nested in one, all slices properly nested (python3's json)"; }
perfetto_inlined_body()
{
	need
	require_tools python3
	prog=$HWTRACE_PROGS/inline
	capture c "$prog" crash
	m=$(gdb_hits "$prog" crash measure)
	t=$(gdb_hits "$prog" crash twice)
	[ -n "$m" ] && [ -n "$t" ] || atf_fail "gdb gave no hit counts: $(cat hits.out)"
	"$HWTRACE" query c.db export --perfetto c.json > /dev/null ||
	    atf_fail "export --perfetto failed"
	cat > check.py <<'X'
import json, sys
want = {"measure": int(sys.argv[1]), "twice": int(sys.argv[2])}
x = [e for e in json.load(open("c.json"))["traceEvents"] if e["ph"] == "X"]
inl = [e for e in x if e["cat"] == "inline"]
for e in inl:
    a = e["args"]
    assert a["inlined"] is True and e["name"] == a["function"] + " (inlined)", e
for f, n in want.items():
    got = sum(1 for e in inl if e["args"]["function"] == f)
    assert got == n, ("%s (inlined): expected %d slices (gdb), got %d" % (f, n, got))
# Nesting, per thread, in instructions ([entry, exit)) and in time.
def key(e):
    return (e["tid"], e["args"]["entry_insn"], -e["args"]["exit_insn"],
            0 if e["cat"] == "call" else e["args"]["inline_depth"])
parent = {}
stack = []
for e in sorted(x, key=key):
    a = e["args"]
    while stack and (stack[-1]["tid"] != e["tid"] or
                     stack[-1]["args"]["exit_insn"] <= a["entry_insn"]):
        stack.pop()
    if stack:
        p = stack[-1]
        assert a["exit_insn"] <= p["args"]["exit_insn"], ("overlap", e, p)
        assert e["ts"] >= p["ts"] - 0.001 and \
            e["ts"] + e["dur"] <= p["ts"] + p["dur"] + 0.001, ("time", e, p)
        parent[id(e)] = p
    if a["exit_insn"] > a["entry_insn"]:
        stack.append(e)
for e in inl:
    p = parent.get(id(e))
    assert p is not None and p["cat"] == "call", ("no caller slice", e)
    assert p["name"] == "main", ("inlined into %s, not main" % p["name"], e)
under = [e for e in x if e["cat"] == "call" and "strlen" in e["name"] and
         id(e) in parent and parent[id(e)]["name"] == "measure (inlined)"]
assert len(under) == want["measure"], ("strlen under measure (inlined): expected %d, got %d" % (want["measure"], len(under)))
print("ok", len(x), len(inl))
X
	python3 check.py "$m" "$t" > res 2>&1 ||
	    atf_fail "check.py: $(tail -3 res | tr '\n' ' ')"
	# --max-depth keeps them with their frame: none above main's depth.
	d=$(python3 -c 'import json; print([e["args"]["depth"] for e in json.load(open("c.json"))["traceEvents"] if e["ph"] == "X" and e["name"] == "main"][0])')
	for k in $((d - 1)) "$d"; do
		"$HWTRACE" query c.db export --perfetto "d$k.json" --max-depth "$k" > /dev/null ||
		    atf_fail "export --max-depth $k failed"
		got=$(python3 -c 'import json, sys; print(sum(1 for e in json.load(open(sys.argv[1]))["traceEvents"] if e.get("cat") == "inline"))' "d$k.json")
		want=0
		[ "$k" = "$d" ] && want=$((m + t))
		[ "$got" = "$want" ] || atf_fail "export --max-depth $k (main at $d): expected $want inlined slices, got $got"
	done
}

atf_test_case perfetto_inlined_windows
perfetto_inlined_windows_head() { atf_set descr "export --perfetto --from/--to, of instructions or times, keeps exactly the slices of the whole export, calls and inlined runs, that overlap the window, with the same ends: windows that start or end at a run's first, last and next instruction (a run entered before the window was left out, and one entered at its first block too)"; }
perfetto_inlined_windows_body()
{
	need
	require_tools python3
	capture c "$HWTRACE_PROGS/inline" crash
	"$HWTRACE" query c.db export --perfetto all.json > /dev/null ||
	    atf_fail "export --perfetto failed"
	cat > check.py <<'X'
import json, subprocess, sys
def xs(f):
    return {(e["cat"], e["name"], e["args"]["entry_insn"], e["args"]["exit_insn"],
             round(e["ts"] * 1000), round((e["ts"] + e["dur"]) * 1000))
            for e in json.load(open(f))["traceEvents"] if e["ph"] == "X"}
full = xs("all.json")
runs = sorted(x for x in full if x[0] == "inline")
assert len(runs) > 20, len(runs)
bad, n = [], 0
for i, (_, _, a, b, ta, tb) in enumerate(runs):
    if i % 5:
        continue
    # Instructions [lo, hi]: a slice [entry, exit) overlaps when it ran one.
    for lo, hi in ((a, a), (a + 1, b - 1), (b - 1, b + 3), (b, b + 3)):
        if lo > hi:
            continue
        subprocess.run([sys.argv[1], "query", "c.db", "export", "--perfetto",
                        "w.json", "--from", str(lo), "--to", str(hi)],
                       check=True, stdout=subprocess.DEVNULL)
        want = {x for x in full if x[2] <= hi and x[3] > lo}
        n += 1
        if xs("w.json") != want:
            bad.append((lo, hi, sorted(want - xs("w.json"))[:2], sorted(xs("w.json") - want)[:2]))
    # Times (ns from the start): a slice from ts to ts + dur meets it.
    for lo, hi in ((ta, ta), (ta + 1, tb), (tb, tb + 50)):
        if lo > hi:
            continue
        subprocess.run([sys.argv[1], "query", "c.db", "export", "--perfetto",
                        "w.json", "--from", "%dns" % lo, "--to", "%dns" % hi],
                       check=True, stdout=subprocess.DEVNULL)
        want = {x for x in full if x[4] <= hi and x[5] >= lo}
        n += 1
        if xs("w.json") != want:
            bad.append(("ns", lo, hi, sorted(want - xs("w.json"))[:2], sorted(xs("w.json") - want)[:2]))
assert not bad, (len(bad), n, bad[:3])
print("ok")
X
	atf_check -s exit:0 -o inline:"ok\n" python3 check.py "$HWTRACE"
}

atf_test_case perfetto_inlined_windows_deep
perfetto_inlined_windows_deep_head() { atf_set descr "export --perfetto --from/--to inside a 3,000-deep recursion whose calls are made from inlined code: every frame's run of the inlined function is open there (3,000 slices, by construction), with the ends the whole export gives them"; }
perfetto_inlined_windows_deep_body()
{
	need_valgrind
	require_tools cc python3 sqlite3
	cat > deep.c <<'X'
#include <stdio.h>
#include <stdlib.h>
__attribute__((noinline)) int leaf(int x) { __asm__ volatile("" : "+r"(x)); return x + 1; }
int rec(int d);
static inline __attribute__((always_inline)) int
helper(int d)
{
	int a = leaf(d), b = rec(d - 1);

	__asm__ volatile("" : "+r"(b));
	return a * b;
}
__attribute__((noinline)) int
rec(int d)
{
	int r;

	__asm__ volatile("" ::: "memory");
	if (d <= 0)
		return leaf(d);
	r = helper(d) + leaf(d);
	__asm__ volatile("" : "+r"(r));
	return r;
}
int main(int argc, char **argv) { printf("%d\n", rec(argc > 1 ? atoi(argv[1]) : 3)); return 0; }
X
	cc -O2 -g -o deep deep.c || atf_fail "cannot build deep.c"
	capture d ./deep 3000
	"$HWTRACE" query d.db export --perfetto all.json > /dev/null ||
	    atf_fail "export --perfetto failed"
	# The call of leaf at depth 3,001: rec(0)'s, the deepest.
	x=$(sqlite3 -cmd ".load $HWTRACE_BUILD/hwtrace_sqlite" d.db "SELECT c.entry_insn FROM calls c JOIN symbols s ON s.id = c.symbol WHERE s.name = 'leaf' ORDER BY c.depth DESC LIMIT 1")
	[ -n "$x" ] || atf_fail "no call of leaf"
	"$HWTRACE" query d.db export --perfetto w.json --from "$x" --to "$x" > /dev/null ||
	    atf_fail "export --from $x failed"
	cat > check.py <<X
import json
def xs(f):
    return {(e["cat"], e["name"], e["args"]["entry_insn"], e["args"]["exit_insn"])
            for e in json.load(open(f))["traceEvents"] if e["ph"] == "X"}
full, got = xs("all.json"), xs("w.json")
want = {v for v in full if v[2] <= $x and v[3] > $x}
assert got == want, (len(got), len(want), sorted(want - got)[:2], sorted(got - want)[:2])
n = sum(1 for v in got if v[1] == "helper (inlined)")
assert n == 3000, n
print("ok")
X
	atf_check -s exit:0 -o inline:"ok\n" python3 check.py
}

atf_test_case func_linespec_cxx
func_linespec_cxx_head() { atf_set descr "func finds an inlined C++ function as gdb's linespec does: 'scale', 'ns::scale' and 'ns::scale(int)' name ns::scale(int) (as many entries as gdb's breakpoint hits), 'other::scale' and 'scale(double)' do not"; }
func_linespec_cxx_body()
{
	need
	require_tools g++
	cat > sc.cc <<'X'
namespace ns {
inline __attribute__((always_inline)) int
scale(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x * 3;
}
}
int volatile sink;
int
main(int argc, char **)
{
	int t = 0;
	for (int i = 0; i < 30 + argc; i++)
		t += ns::scale(i);
	sink = t;
	return 0;
}
X
	g++ -O2 -g -static -o sc sc.cc ||
	    atf_skip "g++ cannot build a static program here"
	capture c "$PWD/sc" x
	hits=$(gdb_hits "$PWD/sc" x scale)
	grep -q 'in ns::scale(int) at' hits.out ||
	    atf_skip "gdb does not see ns::scale(int) inlined: $(tr '\n' ' ' < hits.out)"
	[ "$hits" = 32 ] || atf_fail "gdb: expected 32 hits of scale (30 + argc), got '$hits'"
	for p in scale ns::scale 'ns::scale(int)'; do
		"$HWTRACE" query c.db func "$p" --format tsv > f.tsv ||
		    atf_fail "func $p failed"
		got=$(awk -F'\t' 'NR > 1 && $14 == "inlined" && $4 == "ns::scale(int)"' f.tsv | wc -l)
		[ "$got" -eq "$hits" ] || atf_fail "func $p: expected $hits inlined entries of ns::scale(int) (gdb), got $got: $(head -3 f.tsv | tr '\n' ' ')"
	done
	for p in other::scale 'scale(double)'; do
		"$HWTRACE" query c.db func "$p" > f.out 2>&1 &&
		    atf_fail "func $p: expected no function, got $(head -3 f.out | tr '\n' ' ')"
	done
	return 0
}

atf_test_case hostile_block_id
hostile_block_id_head() { atf_set descr "func on an inlined function in a database whose first block in its ranges has id -1: an answer or a clear error, never a crash (the block reader used -1 as its no-block-yet mark)"; }
hostile_block_id_body()
{
	need_vg_fixture inline
	require_tools sqlite3
	capture ok "$HWTRACE_PROGS/inline" ok
	n=$(sqlite3 ok.db "UPDATE blocks SET id = -1 WHERE id = (SELECT min(b.id) FROM blocks b JOIN inlines i ON b.image = i.image AND b.image_addr < i.hi AND b.image_addr + b.size > i.lo WHERE i.name = 'measure'); SELECT changes();") ||
	    atf_fail "sqlite3 could not change the database"
	[ "$n" = 1 ] || atf_fail "expected one block changed, got '$n'"
	rc=0
	"$HWTRACE" query ok.db func measure > f.out 2> f.err || rc=$?
	[ "$rc" -le 1 ] || atf_fail "func measure: exit $rc: $(cat f.err)"
	[ "$rc" -eq 0 ] || grep -q . f.err ||
	    atf_fail "func measure: exit 1 without a message"
}

atf_test_case hot_inline_count_out_of_range
hot_inline_count_out_of_range_head() { atf_set descr "hot --by inline on a database whose block ran 2^63-1 times (a damaged or hostile one): exit 1 naming the block, not a count wrapped past int64 (found by make fuzz-db)"; }
hot_inline_count_out_of_range_body()
{
	need_vg_fixture inline
	require_tools sqlite3
	capture ok "$HWTRACE_PROGS/inline" ok
	id=$(sqlite3 ok.db "SELECT min(c.block) FROM block_counts c JOIN blocks b ON b.id = c.block WHERE b.ninsns > 1") ||
	    atf_fail "sqlite3 cannot read the database"
	[ -n "$id" ] || atf_fail "expected a counted block of 2 or more instructions, got none"
	sqlite3 ok.db "UPDATE block_counts SET count = 9223372036854775807 WHERE block = $id" ||
	    atf_fail "sqlite3 cannot change the database"
	atf_check -s exit:1 -e match:"block_counts: block $id: its count 9223372036854775807 is out of range" \
	    "$HWTRACE" query ok.db hot --by inline
}

# block_id_far: ok.db, a capture of the inline fixture whose last block's
# id is moved up by 2^31.
block_id_far()
{
	need_vg_fixture inline
	require_tools sqlite3
	capture ok "$HWTRACE_PROGS/inline" ok
	sqlite3 ok.db "UPDATE blocks SET id = id + 2147483648 WHERE id = (SELECT max(id) FROM blocks)" ||
	    atf_fail "sqlite3 cannot change the database"
}

atf_test_case export_block_id_far
export_block_id_far_head() { atf_set descr "export --perfetto on a database whose last block's id is moved up by 2^31 (a damaged or hostile one): exit 1 naming the ids, not an array of 2^31 blocks (found by make fuzz-db)"; }
export_block_id_far_body()
{
	block_id_far
	atf_check -s exit:1 -e match:"blocks: ids reach [0-9]+ for [0-9]+ rows" \
	    "$HWTRACE" query ok.db export --perfetto p.json
}

atf_test_case depth_block_id_far
depth_block_id_far_head() { atf_set descr "hot and coverage with --depth on a database whose last block's id is moved up by 2^31: exit 1 naming the ids at once, not 16 GB of counts by block id read for 9 s"; }
depth_block_id_far_body()
{
	block_id_far
	atf_check -s exit:1 -e match:"blocks: ids reach [0-9]+ for [0-9]+ rows" \
	    "$HWTRACE" query ok.db hot --depth 1
	atf_check -s exit:1 -e match:"blocks: ids reach [0-9]+ for [0-9]+ rows" \
	    "$HWTRACE" query ok.db coverage --depth 0
}

# ninsns_far: ok.db, a capture of the inline fixture whose blocks say
# 2^31 instructions more than they hold.
ninsns_far()
{
	need_vg_fixture inline
	require_tools sqlite3
	capture ok "$HWTRACE_PROGS/inline" ok
	sqlite3 ok.db "UPDATE blocks SET ninsns = ninsns + 2147483648" ||
	    atf_fail "sqlite3 cannot change the database"
}

atf_test_case export_block_ninsns_near
export_block_ninsns_near_head() { atf_set descr "export --perfetto on a database whose blocks each say a million instructions more than their lengths hold (under the 2^20 a block may have): an answer in seconds, the work bounded by the lengths stored, not by the count claimed (found by make fuzz-db: 65,536 more took 1 s, a million 15 s)"; }
export_block_ninsns_near_body()
{
	need_vg_fixture inline
	require_tools sqlite3
	capture ok "$HWTRACE_PROGS/inline" ok
	sqlite3 ok.db "UPDATE blocks SET ninsns = ninsns + 1000000" ||
	    atf_fail "sqlite3 cannot change the database"
	atf_check -s exit:0 -o ignore -e ignore \
	    timeout 10 "$HWTRACE" query ok.db export --perfetto p.json
	[ -s p.json ] || atf_fail "no export written"
}

atf_test_case export_block_ninsns_far
export_block_ninsns_far_head() { atf_set descr "export --perfetto on a database whose blocks say 2^31 instructions more than they hold (a damaged or hostile one): exit 1 naming a block, not gigabytes of offsets (found by make fuzz-db)"; }
export_block_ninsns_far_body()
{
	ninsns_far
	atf_check -s exit:1 -e match:"blocks: block [0-9]+ has [0-9]+ instructions: out of range" \
	    timeout 60 "$HWTRACE" query ok.db export --perfetto p.json
}

atf_test_case func_block_ninsns_far
func_block_ninsns_far_head() { atf_set descr "func '*u*' on a database whose blocks say 2^31 instructions more than they hold (a damaged or hostile one): exit 1 naming a block, not three arrays of 2^31 instructions a block (found by make fuzz-db)"; }
func_block_ninsns_far_body()
{
	ninsns_far
	atf_check -s exit:1 -e match:"blocks: block [0-9]+ has [0-9]+ instructions: out of range" \
	    timeout 60 "$HWTRACE" query ok.db func '*u*'
}

atf_init_test_cases()
{
	atf_add_test_case bt_inlined_matches_gdb
	atf_add_test_case bt_fault_inside_inlined
	atf_add_test_case bt_inlined_40_deep_matches_gdb
	atf_add_test_case func_inlined_entries
	atf_add_test_case tree_folded_inlined
	atf_add_test_case folded_time_inlined
	atf_add_test_case tree_folded_range_roots
	atf_add_test_case tree_range_depth
	atf_add_test_case hot_by_inline
	atf_add_test_case clang_matches_gdb
	atf_add_test_case split_dwarf
	atf_add_test_case empty_instances
	atf_add_test_case perfetto_inlined
	atf_add_test_case perfetto_inlined_windows
	atf_add_test_case perfetto_inlined_windows_deep
	atf_add_test_case func_linespec_cxx
	atf_add_test_case hostile_block_id
	atf_add_test_case hot_inline_count_out_of_range
	atf_add_test_case export_block_id_far
	atf_add_test_case depth_block_id_far
	atf_add_test_case export_block_ninsns_near
	atf_add_test_case export_block_ninsns_far
	atf_add_test_case func_block_ninsns_far
}
