#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Copyright (c) 2026 The hwtrace authors
#
# The call tree on ordinary programs, captured with the valgrind source
# and checked against tools that know nothing of hwtrace: calls through
# PLT stubs against callgrind's callers, frames left by exceptions and
# longjmp against gdb's backtraces, demangled names against nm and
# c++filt.

. "$(atf_get_srcdir)/../env.sh"
. "$HWTRACE_SRC/tests/lib/hwtr_test.sh"

# vgcapture PROG ARCHIVE: capture a fixture with the valgrind source.
vgcapture()
{
	vgcapture_status "$1" "$2"
	[ "$(cat capture.rc)" -eq 0 ] ||
	    atf_fail "capture of $1 failed: $(cat capture.err)"
}

# cg_callers PROG FUNC: "CALLER COUNT" lines, sorted, of FUNC's callers
# as callgrind counts them (it credits calls through the PLT to their
# target: --skip-plt=yes).
cg_callers()
{
	command -v callgrind_annotate >/dev/null 2>&1 ||
	    atf_skip "callgrind_annotate is not installed"
	valgrind --tool=callgrind --callgrind-out-file=cg.out \
	    "$HWTRACE_PROGS/$1" > /dev/null 2> cg.err ||
	    atf_fail "callgrind failed: $(cat cg.err)"
	callgrind_annotate --tree=caller cg.out > cg.txt 2>&1 ||
	    atf_fail "callgrind_annotate failed"
	awk -v f="$2" '
	    /^ *[0-9,]+ .*  < / { c[n++] = $0; next }
	    / \* .*:/ {
		if (index($0, ":" f " [") > 0)
			for (i = 0; i < n; i++) {
				s = c[i]; sub(/.*  < [^:]*:/, "", s)
				cnt = s; sub(/^[^ ]* \(/, "", cnt); sub(/x\).*/, "", cnt)
				sub(/ .*/, "", s); print s, cnt
			}
		n = 0; next }
	    { n = 0 }' cg.txt | sort
}

# hw_callers ARCHIVE FUNC: the same from hwtrace's func verb.
hw_callers()
{
	"$HWTRACE" query "$1" func "$2" --format tsv > func.tsv ||
	    atf_fail "func $2 failed"
	tail -n +2 func.tsv | cut -f5 | sort | uniq -c | awk '{print $2, $1}'
}

atf_test_case plt_calls_credited
plt_calls_credited_head() { atf_set descr "a call through a PLT stub (lazily bound, and through the GOT with -fno-plt) is a call of its target with its real caller: func getenv agrees with callgrind's callers"; }
plt_calls_credited_body()
{
	for p in plt noplt; do
		vgcapture $p $p.hwtrace
		cg_callers $p getenv > cg.want
		[ -s cg.want ] || atf_fail "$p: callgrind gave no caller of getenv: $(cat cg.txt)"
		hw_callers $p.hwtrace getenv > hw.got
		cmp -s cg.want hw.got ||
		    atf_fail "$p: callers of getenv: callgrind says '$(cat cg.want | tr '\n' ';')', hwtrace '$(cat hw.got | tr '\n' ';')'"
		for v in calls tree; do
			"$HWTRACE" query $p.hwtrace $v --format tsv > $v.tsv ||
			    atf_fail "$v failed"
			! grep -q "getenv@plt" $v.tsv ||
			    atf_fail "$p: $v still names a frame getenv@plt: $(grep getenv@plt $v.tsv | head -3)"
		done
		"$HWTRACE" query $p.hwtrace export --perfetto pf.json ||
		    atf_fail "export failed"
		grep -q '"getenv"' pf.json || atf_fail "$p: no getenv slice in the Perfetto export"
		! grep -q 'getenv@plt' pf.json ||
		    atf_fail "$p: the Perfetto export names a slice getenv@plt"
	done
	# The stub is still there, as a symbol of the blocks that ran it.
	atf_check -s exit:0 -o match:"getenv@plt" \
	    "$HWTRACE" query plt.hwtrace sql "SELECT s.name FROM blocks b JOIN symbols s ON s.id = b.symbol WHERE s.name = 'getenv@plt'"
}

# gdb_main_frame PROG BREAK N [FUNC]: the frame number of FUNC (default
# main) in gdb's backtrace at the N-th stop at BREAK.
gdb_main_frame()
{
	require_tools gdb
	cmds="-ex 'break $2' -ex run -ex bt"
	i=1
	while [ $i -lt $3 ]; do
		cmds="$cmds -ex continue -ex bt"
		i=$((i + 1))
	done
	eval gdb -q -batch -nx $cmds "$HWTRACE_PROGS/$1" > gdb.out 2>&1
	awk -v n="$3" -v f=" ${4:-main} \\(" '/^#0 / { k++ } k == n && $0 ~ f {
	    sub(/^#/, ""); print $1 + 0; exit }' gdb.out
}

# hw_depth ARCHIVE FUNC N [BASE]: call depth of the N-th invocation of
# FUNC less that of the first of BASE (default main).
hw_depth()
{
	"$HWTRACE" query "$1" func "${4:-main}" --format tsv > m.tsv || atf_fail "func ${4:-main} failed"
	"$HWTRACE" query "$1" func "$2" --format tsv > f.tsv || atf_fail "func $2 failed"
	md=$(sed -n 2p m.tsv | cut -f3)
	fd=$(sed -n "$(($3 + 1))p" f.tsv | cut -f3)
	[ -n "$md" ] && [ -n "$fd" ] || atf_fail "no invocation $3 of $2 or of main"
	echo $((fd - md))
}

# same_depth ARCHIVE PROG FUNC BREAK N [M]: the M-th invocation of FUNC
# (default N) is as deep below main as gdb's N-th stop at BREAK says.
same_depth()
{
	want=$(gdb_main_frame "$2" "$4" "$5")
	[ -n "$want" ] || atf_fail "gdb: no main in the backtrace at stop $5 of $4: $(cat gdb.out)"
	got=$(hw_depth "$1" "$3" "${6:-$5}")
	[ "$got" -eq "$want" ] ||
	    atf_fail "$3 #${6:-$5}: gdb has main $want frames up, hwtrace's depth is main's + $got"
}

# func_kinds ARCHIVE FUNC FIELDS WANT: the invocations of FUNC (query
# func, TSV) counted by the values of their FIELDS (cut -f: 14 entry_kind,
# 15 exit_kind), "COUNT VALUE..." a line, are WANT; nothing on stderr.
func_kinds()
{
	"$HWTRACE" query "$1" func "$2" --format tsv > fk.tsv 2> fk.err ||
	    atf_fail "query $1 func $2 failed: $(oneline fk.err)"
	[ ! -s fk.err ] || atf_fail "query $1 func $2: expected nothing on stderr, got $(oneline fk.err)"
	fk_got=$(tail -n +2 fk.tsv | cut -f"$3" | sort | uniq -c | awk '{ $1 = $1; print }')
	[ "$fk_got" = "$4" ] ||
	    atf_fail "func $2 in $1: expected '$4' (invocations by fields $3), got '$fk_got'"
}

# frames_closed PROG ARCHIVE FUNC FIELDS WANT: PROG captured into ARCHIVE
# calls printf once, after leaving frames in some way: it is main's child
# as gdb's backtrace at printf says, and FUNC's invocations counted by
# their FIELDS are WANT (func_kinds).
frames_closed()
{
	vgcapture "$1" "$2"
	same_depth "$2" "$1" printf printf 1
	func_kinds "$2" "$3" "$4" "$5"
}

atf_test_case exceptions_close_frames
exceptions_close_frames_head() { atf_set descr "frames left by a C++ exception (throw, cleanup pads, _Unwind_Resume, rethrow) are closed: depths below main agree with gdb's backtraces"; }
exceptions_close_frames_body()
{
	vgcapture except ex.hwtrace
	# thrower(0) throws: stops 1 and 2 of "thrower if n == 0" are the
	# 4th and 8th invocations (thrower(3..0) from main, then again from
	# rethrower).
	same_depth ex.hwtrace except thrower "thrower if n == 0" 1 4
	same_depth ex.hwtrace except thrower "thrower if n == 0" 2 8
	# After the first catch, main calls rethrower; after the second,
	# printf.
	same_depth ex.hwtrace except rethrower rethrower 1
	same_depth ex.hwtrace except printf printf 1
	# Every frame a throw left is closed by an unwind, not at the end.
	func_kinds ex.hwtrace thrower 15 "8 unwind"
}

atf_test_case longjmp_closes_frames
longjmp_closes_frames_head() { atf_set descr "frames left by longjmp are closed: printf after two longjmps is main's child, as gdb's backtrace says"; }
longjmp_closes_frames_body()
{
	# deep(6..0) and deep(7..0): 15 invocations, every one left by longjmp.
	frames_closed setjmp sj.hwtrace deep 15 "15 unwind"
}

atf_test_case signal_handlers_framed
signal_handlers_framed_head() { atf_set descr "signal handlers get frames of their own that their return closes: on_usr1 runs 4 times, and printf after them is main's child as gdb's backtrace says"; }
signal_handlers_framed_body()
{
	# kill(SIGUSR1) three times, and once more from the SIGUSR2 handler.
	frames_closed signal sg.hwtrace on_usr1 14,15 "4 signal return"
	atf_check -s exit:0 -o inline:"return\n" sh -c \
	    "'$HWTRACE' query sg.hwtrace func main --format tsv | tail -n +2 | cut -f15"
}

atf_test_case cancellation_closes_frames
cancellation_closes_frames_head() { atf_set descr "a cancelled thread's frames are closed by the forced unwind: what start_thread calls after it is start_thread's child, as gdb's backtrace says"; }
cancellation_closes_frames_body()
{
	vgcapture cancel cn.hwtrace
	want=$(gdb_main_frame cancel __nptl_deallocate_tsd 1 start_thread)
	[ -n "$want" ] || atf_fail "gdb: no start_thread in the backtrace: $(cat gdb.out)"
	got=$(hw_depth cn.hwtrace __nptl_deallocate_tsd 1 start_thread)
	[ "$got" -eq "$want" ] ||
	    atf_fail "__nptl_deallocate_tsd: gdb has start_thread $want frames up, hwtrace's depth is start_thread's + $got"
	# spin(2), spin(1), spin(0): each left by the unwind.
	func_kinds cn.hwtrace spin 15 "3 unwind"
}

atf_test_case exec_starts_a_root
exec_starts_a_root_head() { atf_set descr "after execve the new program's _start is a root and the old program's frames end, as gdb's backtrace of hello (the exec'd program) has _start outermost"; }
exec_starts_a_root_body()
{
	vgcapture forkexec fx.hwtrace
	gdb_main_frame hello __libc_start_main 1 _start > /dev/null
	want=$(awk '/^#/ { n = $0 } END { print n }' gdb.out | awk '{ sub(/^#/, ""); print $1 + 0 }')
	last=$(awk '/^#/ { n = $0 } END { print n }' gdb.out)
	case $last in
	*" _start "*) ;;
	*) atf_fail "gdb: _start is not hello's outermost frame: $(cat gdb.out)" ;;
	esac
	# The child (the thread named hello): _start at depth 0, started.
	sql_row fx.hwtrace "SELECT c.depth, c.entry_kind FROM calls c JOIN threads t ON t.id = c.thread JOIN symbols s ON s.id = c.symbol WHERE t.name = 'hello' AND s.name = '_start'"
	[ "$row" = "$(printf '0\tstart')" ] ||
	    atf_fail "hello's _start: expected depth 0 entered at its start, got '$row'"
	sql_row fx.hwtrace "SELECT c.depth FROM calls c JOIN threads t ON t.id = c.thread JOIN symbols s ON s.id = c.symbol WHERE t.name = 'hello' AND s.name = '__libc_start_main'"
	[ "$row" = "$want" ] ||
	    atf_fail "hello's __libc_start_main: gdb has it $want frames below _start, hwtrace at depth $row"
	# The old program's frames end at the exec.
	sql_row fx.hwtrace "SELECT c.exit_kind FROM calls c JOIN threads t ON t.id = c.thread JOIN symbols s ON s.id = c.symbol WHERE t.name = 'hello' AND s.name = '__execve'"
	[ "$row" = end ] || atf_fail "__execve's frame: expected exit end, got $(oneline row.tsv)"
}

atf_test_case names_demangled
names_demangled_head() { atf_set descr "C++ names are demangled as c++filt does, the mangled name kept; func matches a name with or without its parameters"; }
names_demangled_body()
{
	command -v nm >/dev/null 2>&1 && command -v c++filt >/dev/null 2>&1 ||
	    atf_skip "binutils are not installed"
	vgcapture except ex.hwtrace
	"$HWTRACE" query ex.hwtrace summary > /dev/null || atf_fail "summary failed"
	# Every mangled function symbol of the program, as c++filt reads it.
	nm "$HWTRACE_PROGS/except" | awk '$2 ~ /^[tTwW]$/ && $3 ~ /^_Z/ {print $3}' |
	    sort -u > mangled
	[ "$(wc -l < mangled)" -gt 50 ] || atf_fail "nm found few C++ symbols"
	c++filt < mangled > demangled
	paste -d '\t' mangled demangled | sort > want
	sqlite3 -separator "$(printf '\t')" ex.hwtrace.db \
	    "SELECT DISTINCT mangled, name FROM symbols WHERE mangled GLOB '_Z*' AND kind = 'func'" |
	    sort > got
	join -t "$(printf '\t')" -v 1 want got > missing
	[ ! -s missing ] || atf_fail "mangled names without their c++filt name: $(head -5 missing)"
	# thrower(3..0) twice: 8 invocations, by any of its names.
	for n in thrower 'thrower(int)' '_ZL7throweri.isra.0' 'thrower(int) [clone .isra.0]'; do
		got=$("$HWTRACE" query ex.hwtrace func "$n" --format csv | tail -n +2 | wc -l)
		[ "$got" -eq 8 ] || atf_fail "func '$n': expected 8 invocations, got $got"
	done
	atf_check -s exit:1 -o empty -e match:"no symbol matches 'thrower\(long\)'" \
	    "$HWTRACE" query ex.hwtrace func 'thrower(long)'
	atf_check -s exit:0 -o match:" rethrower\(int\) \[clone .isra.0\]" -o not-match:"_Z" \
	    "$HWTRACE" query ex.hwtrace tree --format tsv
}

# nm_addr PROG FUNC: FUNC's address as nm prints it, without leading zeros.
nm_addr()
{
	nm "$HWTRACE_PROGS/$1" | awk -v f="$2" '$3 == f { sub(/^0+/, "", $1); print $1 }'
}

# recovered_names PROG: PROG, plt built without its symbols, names one,
# two and main PROG+0xADDR at the addresses nm gives in plt, with
# callgrind's callers of getenv.
recovered_names()
{
	command -v nm >/dev/null 2>&1 && command -v objcopy >/dev/null 2>&1 ||
	    atf_skip "binutils are not installed"
	# The two builds have the same code at the same addresses.
	for p in plt $1; do
		objcopy -O binary --only-section=.text "$HWTRACE_PROGS/$p" $p.text ||
		    atf_fail "objcopy failed"
	done
	cmp -s plt.text $1.text || atf_fail "plt and $1 differ in .text"
	vgcapture $1 s.hwtrace
	for f in one two main; do
		a=$(nm_addr plt $f)
		[ -n "$a" ] || atf_fail "nm: no $f in plt"
		eval "name_$f=$1+0x$a"
		got=$("$HWTRACE" query s.hwtrace func "$1+0x$a" --format csv | tail -n +2 | wc -l)
		[ "$got" -eq 1 ] || atf_fail "func $1+0x$a ($f): expected 1 invocation, got $got"
	done
	# getenv's callers, as callgrind names them in the unstripped build.
	cg_callers plt getenv | sed "s/^one /$name_one /; s/^two /$name_two /; s/^main /$name_main /" |
	    sort > cg.want
	hw_callers s.hwtrace getenv > hw.got
	cmp -s cg.want hw.got ||
	    atf_fail "callers of getenv: callgrind says '$(cat cg.want | tr '\n' ';')', hwtrace '$(cat hw.got | tr '\n' ';')'"
}

atf_test_case stripped_functions_named
stripped_functions_named_head() { atf_set descr "in a stripped program, functions are recovered from .eh_frame and named IMAGE+0xADDR at the addresses nm gives in the unstripped build; func and calls know them, with callgrind's callers"; }
stripped_functions_named_body()
{
	recovered_names plt-stripped
	# Nothing of the program's own functions is left without a name
	# (the C start-up files' code has no unwind table: it may be).
	sql_row s.hwtrace "SELECT count(*) FROM blocks b JOIN images i ON i.id = b.image WHERE b.symbol IS NULL AND i.path GLOB '*/plt-stripped' AND (b.image_addr BETWEEN 0x$(nm_addr plt main) AND 0x$(nm_addr plt main) + 64 OR b.image_addr BETWEEN 0x$(nm_addr plt one) AND 0x$(nm_addr plt two) + 16)"
	[ "$row" -eq 0 ] || atf_fail "expected every block of main, one, two to have a symbol, $row have none"
}

atf_test_case stripped_system_binary
stripped_system_binary_head() { atf_set descr "a stripped system binary with hundreds of unwind entries (Debian's /usr/bin/sort): every function readelf lists in .eh_frame that no exported symbol covers is named IMAGE+0xADDR at its start"; }
stripped_system_binary_body()
{
	need_valgrind
	command -v readelf >/dev/null 2>&1 && command -v nm >/dev/null 2>&1 ||
	    atf_skip "binutils are not installed"
	prog=/usr/bin/sort
	[ -x $prog ] || atf_skip "$prog is not installed"
	readelf -S -W $prog > sec
	! grep -q ' \.symtab ' sec || atf_skip "$prog has a symbol table"
	grep -q ' \.eh_frame_hdr ' sec || atf_skip "$prog has no .eh_frame_hdr"
	# .text's bounds, and each FDE's start in it (readelf's pc=LO..HI).
	set -- $(awk '$0 ~ / \.text / { for (i = 1; i < NF; i++) if ($i == ".text") print $(i + 2), $(i + 4) }' sec)
	tlo=$((0x$1))
	thi=$((0x$1 + 0x$2))
	readelf --debug-dump=frames $prog | sed -n 's/.* FDE .* pc=\([0-9a-f]*\)\.\..*/\1/p' |
	    while read -r a; do
		a=$((0x$a))
		[ $a -ge $tlo ] && [ $a -lt $thi ] && echo $a
	    done | sort -n -u > fde
	[ "$(wc -l < fde)" -ge 100 ] ||
	    atf_skip "$prog has $(wc -l < fde) unwind entries in .text (fewer than 100)"
	# Those an exported function covers are named by it.
	nm -D -S --defined-only $prog | awk '$3 ~ /^[TtWwi]$/ { print $1, $2 }' |
	    while read -r a n; do echo $((0x$a)) $((0x$n)); done > dyn
	"$HWTRACE" capture --source valgrind -o s.hwtrace -- $prog --version \
	    > capture.out 2> capture.err || atf_fail "capture of $prog failed: $(oneline capture.err)"
	sql_tsv s.hwtrace syms.tsv "SELECT DISTINCT s.addr FROM symbols s JOIN images i ON i.id = s.image WHERE i.path = '$prog' AND s.kind = 'func' ORDER BY 1"
	tail -n +2 syms.tsv | sort -n -u > have
	comm -23 fde have | while read -r a; do
		awk -v a=$a '$1 <= a && a < $1 + $2 { f = 1 } END { exit f }' dyn &&
		    printf '%#x\n' $a
	done > missing
	[ ! -s missing ] ||
	    atf_fail "$(wc -l < missing) of $(wc -l < fde) functions of $prog's .eh_frame have no symbol, e.g. $(head -n 5 missing | tr '\n' ' ')"
}

atf_test_case call_targets_named
call_targets_named_head() { atf_set descr "in a program with neither symbols nor unwind tables, called functions are named IMAGE+0xADDR at the addresses nm gives in the unstripped build, with callgrind's callers"; }
call_targets_named_body()
{
	recovered_names plt-nocfi
}

atf_test_case unknown_per_image
unknown_per_image_head() { atf_set descr "code with neither symbols nor unwind tables is an [unknown] row of its own image in hot, not merged with another image's"; }
unknown_per_image_body()
{
	vgcapture plt-nocfi n.hwtrace
	"$HWTRACE" query n.hwtrace hot -n 100000 --format tsv > hot.tsv || atf_fail "hot failed"
	grep -q "^\[unknown\]	[^	]*/plt-nocfi	[1-9]" hot.tsv ||
	    atf_fail "hot: no [unknown] row of plt-nocfi: $(grep unknown hot.tsv)"
	# One row per image, and each row's instructions are its image's.
	grep "^\[unknown\]" hot.tsv | cut -f2 | sort | uniq -d > dup
	[ ! -s dup ] || atf_fail "hot: several [unknown] rows for $(cat dup)"
	grep "^\[unknown\]" hot.tsv | cut -f2,3 | sort > got
	"$HWTRACE" query n.hwtrace sql "SELECT i.path, sum(b.exec_count * b.ninsns) FROM blocks b JOIN images i ON i.id = b.image WHERE b.symbol IS NULL GROUP BY i.path" --format tsv |
	    tail -n +2 | sort > want
	cmp -s want got || atf_fail "hot's [unknown] rows '$(cat got | tr '\n' ';')', the blocks say '$(cat want | tr '\n' ';')'"
}

atf_test_case symbol_copy_callers
symbol_copy_callers_head() { atf_set descr "the caller every call has in the symbol copy (what func shows) is its parent's row, also for calls made while their parent was a PLT stub's frame that the lazy binding resolver later turned into the function it called (_dl_fixup returns before its caller's function is known): the copy must take the parent's final values"; }
symbol_copy_callers_body()
{
	require_tools sqlite3
	vgcapture plt plt.hwtrace
	"$HWTRACE" index -q -o plt.db plt.hwtrace || atf_fail "index failed"
	sq() { sqlite3 -batch -cmd ".load $HWTRACE_BUILD/hwtrace_sqlite" plt.db "$1"; }
	# The case is there: _dl_fixup called from a frame that became the
	# function its stub leads to (getenv), not the stub nor the resolver.
	n=$(sq "SELECT count(*) FROM calls c JOIN symbols s ON s.id = c.symbol JOIN calls p ON p.id = c.parent JOIN symbols ps ON ps.id = p.symbol WHERE s.name = '_dl_fixup' AND ps.name = 'getenv'")
	[ "${n:-0}" -ge 1 ] ||
	    atf_fail "expected a call of _dl_fixup under getenv's frame, got ${n:-none}: $(sq "SELECT ps.name, count(*) FROM calls c JOIN symbols s ON s.id = c.symbol LEFT JOIN calls p ON p.id = c.parent LEFT JOIN symbols ps ON ps.id = p.symbol WHERE s.name = '_dl_fixup' GROUP BY 1" | tr '\n' ';')"
	# Each function's calls through its copy (index 2), every one.
	plan=$(sq "EXPLAIN QUERY PLAN SELECT c.id FROM symbols s CROSS JOIN calls c ON c.symbol = s.id" | tr "\n" " ")
	case $plan in
	*"VIRTUAL TABLE INDEX 2:"*) ;;
	*) atf_fail "expected the calls of each symbol from the symbol copy (INDEX 2), got: $plan" ;;
	esac
	all=$(sq "SELECT count(*) FROM calls WHERE symbol IS NOT NULL")
	n=$(sq "SELECT count(*) FROM symbols s CROSS JOIN calls c ON c.symbol = s.id")
	[ "$n" = "$all" ] ||
	    atf_fail "expected the copy to hold the $all calls that have a symbol, it has $n"
	bad=$(sq "SELECT count(*) FROM symbols s CROSS JOIN calls c ON c.symbol = s.id LEFT JOIN calls p ON p.id = c.parent WHERE c.caller_symbol IS NOT p.symbol OR c.caller_ip IS NOT p.func_ip")
	[ "$bad" = 0 ] ||
	    atf_fail "expected every caller of the copy to be its parent's symbol and func_ip; $bad of $all differ: $(sq "SELECT s.name, c.id, c.caller_symbol, p.symbol, c.caller_ip, p.func_ip FROM symbols s CROSS JOIN calls c ON c.symbol = s.id LEFT JOIN calls p ON p.id = c.parent WHERE c.caller_symbol IS NOT p.symbol OR c.caller_ip IS NOT p.func_ip LIMIT 3" | tr '\n' ';')"
}

atf_test_case calls_counted_by_construction
calls_counted_by_construction_head() { atf_set descr "the calls virtual table, read by plain sqlite3 with the extension, has the 30000 calls of mid and 60000 of leaf manycalls makes by construction, with their callers, in at most 16 bytes a call (indexes included); func and a thread's range agree, and func's rows are those of a scan of calls"; atf_set require.progs "sqlite3"; }
calls_counted_by_construction_body()
{
	vgcapture manycalls mc.hwtrace
	"$HWTRACE" index -o mc.db mc.hwtrace > /dev/null 2>&1 ||
	    atf_fail "index failed"
	sq() { sqlite3 -batch -cmd ".load $HWTRACE_BUILD/hwtrace_sqlite" mc.db "$1"; }
	n=$(sq "SELECT s.name || ' ' || count(*) FROM calls c JOIN symbols s ON s.id = c.symbol WHERE s.name IN ('mid', 'leaf') GROUP BY s.name ORDER BY s.name")
	[ "$n" = "$(printf 'leaf 60000\nmid 30000')" ] ||
	    atf_fail "expected leaf 60000 and mid 30000 calls, got '$(echo $n)'"
	# Each leaf's caller is a mid, each mid's is main.
	n=$(sq "SELECT count(*) FROM calls c JOIN calls p ON p.id = c.parent JOIN symbols s ON s.id = c.symbol JOIN symbols ps ON ps.id = p.symbol WHERE (s.name = 'leaf' AND ps.name = 'mid' AND p.depth + 1 = c.depth) OR (s.name = 'mid' AND ps.name = 'main')")
	[ "$n" = 90000 ] || atf_fail "expected 90000 calls with their callers, got $n"
	# The same through func, and through a range of the thread's blocks.
	n=$("$HWTRACE" query mc.db func leaf --format tsv | tail -n +2 | wc -l)
	[ "$n" = 60000 ] || atf_fail "func leaf: expected 60000 calls, got $n"
	n=$(sq "SELECT count(*) FROM calls c, (SELECT min(entry_seq) AS lo, max(entry_seq) AS hi FROM calls WHERE symbol = (SELECT id FROM symbols WHERE name = 'mid')) m WHERE c.thread = 1 AND c.entry_seq BETWEEN m.lo AND m.hi")
	# (every mid and leaf but the last mid's two leaves)
	[ "$n" = 89998 ] ||
	    atf_fail "calls entered from the first mid to the last: expected 89998, got $n"
	# func reads each function's own copy of its calls (calls_bysym):
	# its rows are those of a scan of every call (+symbol is no
	# constraint the table sees), with the caller by a join on parent.
	for f in leaf mid main; do
		plan=$(sq "EXPLAIN QUERY PLAN SELECT c.id FROM calls c WHERE +c.symbol = (SELECT id FROM symbols WHERE name = '$f')")
		case $plan in
		*"VIRTUAL TABLE INDEX 0:"*) ;;
		*) atf_fail "the scan is not one: $plan" ;;
		esac
		sq "SELECT c.id, c.thread, c.depth, ps.name, c.entry_seq, c.entry_insn, c.insns, c.self_insns, c.blocks, c.entry_kind, c.exit_kind FROM calls c LEFT JOIN calls p ON p.id = c.parent LEFT JOIN symbols ps ON ps.id = p.symbol WHERE +c.symbol = (SELECT id FROM symbols WHERE name = '$f') ORDER BY c.id" |
		    tr '|' '\t' > scan.$f
		"$HWTRACE" query mc.db func $f --format tsv | tail -n +2 |
		    cut -f1,2,3,5,7,8,11,12,13,14,15 > func.$f
		[ -s scan.$f ] || atf_fail "no calls of $f in the scan"
		cmp -s scan.$f func.$f ||
		    atf_fail "func $f differs from a scan of calls: $(diff scan.$f func.$f | head -5 | tr '\n' ';')"
	done
	[ "$(cut -f4 func.leaf | sort | uniq -c | awk '{print $2, $1}')" = "mid 60000" ] ||
	    atf_fail "func leaf: callers are not 60000 mid: $(cut -f4 func.leaf | sort | uniq -c | head -3)"
	# Storage: pages and the symbol copy, per call.
	b=$(sq "SELECT (SELECT sum(pgsize) FROM dbstat WHERE name LIKE 'calls%') * 1.0 / (SELECT count(*) FROM calls) <= 16")
	[ "$b" = 1 ] || atf_fail "calls take more than 16 bytes a call: $(sq "SELECT name, sum(pgsize) FROM dbstat WHERE name LIKE 'calls%' GROUP BY name")"
}

atf_init_test_cases()
{
	atf_add_test_case calls_counted_by_construction
	atf_add_test_case stripped_functions_named
	atf_add_test_case stripped_system_binary
	atf_add_test_case call_targets_named
	atf_add_test_case unknown_per_image
	atf_add_test_case plt_calls_credited
	atf_add_test_case exceptions_close_frames
	atf_add_test_case longjmp_closes_frames
	atf_add_test_case signal_handlers_framed
	atf_add_test_case cancellation_closes_frames
	atf_add_test_case exec_starts_a_root
	atf_add_test_case names_demangled
	atf_add_test_case symbol_copy_callers
}
