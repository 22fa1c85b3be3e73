#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Copyright (c) 2026 The hwtrace authors
#
# Tail calls (a call in return position compiled to a jump) are calls:
# every verb counts them as callgrind does, a tail call through a PLT stub
# makes one frame, and bt after a tail call shows the frames gdb unwinds.
# Also: bt says when the outer frames of a stack are not in a ring's
# trace, as gdb's backtrace of the same crash shows them.  Counts are
# known by construction (tests/progs/tailplt.c) and checked against
# callgrind's calls= lines.

. "$(atf_get_srcdir)/../env.sh"
. "$HWTRACE_SRC/tests/lib/hwtr_test.sh"

# vgcapture ARCHIVE PROG [ARG...]: capture a fixture with the valgrind
# source (the program may crash).
vgcapture()
{
	a=$1
	shift
	[ -x "$HWTRACE_PROGS/$1" ] || atf_skip "fixture programs not built"
	need_valgrind
	p=$1
	shift
	"$HWTRACE" capture --source valgrind -o "$a" -- "$HWTRACE_PROGS/$p" \
	    "$@" > capture.out 2> capture.err
	[ -s "$a" ] || atf_fail "capture of $p failed: $(cat capture.err)"
}

# cg_calls PROG: "CALLER CALLEE COUNT" lines from callgrind's calls=
# lines (names compressed as "(id) name" the first time, "(id)" after).
cg_calls()
{
	command -v valgrind >/dev/null 2>&1 || atf_skip "valgrind is not installed"
	valgrind --tool=callgrind --callgrind-out-file=cg.out \
	    "$HWTRACE_PROGS/$1" > /dev/null 2> cg.err ||
	    atf_fail "callgrind failed: $(cat cg.err)"
	awk '
	    function name(s) {
		if (match(s, /^\([0-9]+\)/)) {
			id = substr(s, RSTART, RLENGTH)
			if (length(s) > RLENGTH)
				nm[id] = substr(s, RLENGTH + 2)
			return nm[id]
		}
		return s
	    }
	    /^fn=/ { s = $0; sub(/^fn=/, "", s); fn = name(s); next }
	    /^cfn=/ { s = $0; sub(/^cfn=/, "", s); cfn = name(s); next }
	    /^calls=/ { split($0, a, /[= ]/); n[fn " " cfn] += a[2] }
	    END { for (k in n) print k, n[k] }' cg.out
}

atf_test_case tail_calls_counted
tail_calls_counted_head() { atf_set descr "tail calls (jmp, jmp *%rax, jmp through a lazily bound PLT stub) are calls: func, calls, tree and both exports count leaf 150, middle 120, top 20, plen 40 and strlen 50 times, as callgrind does, every one a child of main, and no frame is a PLT stub"; }
tail_calls_counted_body()
{
	vgcapture tp.hwtrace tailplt
	cg_calls tailplt > cg.calls
	# The strlen plen reaches through its stub, as libc's ifunc chose it.
	impl=$(awk '$1 == "plen" { print $2; exit }' cg.calls)
	[ -n "$impl" ] || atf_fail "callgrind: plen calls nothing: $(cat cg.calls)"
	for fc in leaf:150 middle:120 top:20 plen:40 $impl:50; do
		f=${fc%:*}
		cg=$(awk -v f="$f" '$2 == f { n += $3 } END { print n + 0 }' cg.calls)
		[ "$cg" -eq "${fc#*:}" ] ||
		    atf_fail "callgrind counts $cg calls of $f, the fixture makes ${fc#*:}"
		"$HWTRACE" query tp.hwtrace func "$f" --format tsv > func.tsv ||
		    atf_fail "func $f failed"
		hw=$(tail -n +2 func.tsv | wc -l)
		[ "$hw" -eq "$cg" ] ||
		    atf_fail "func $f: callgrind counts $cg calls, hwtrace $hw"
		# The frame a tail call replaced was main's callee: main
		# calls each of them, none calls another.
		c=$(tail -n +2 func.tsv | cut -f5 | sort | uniq -c | awk '{print $2, $1}')
		[ "$c" = "main $cg" ] ||
		    atf_fail "func $f: expected $cg calls from main, got '$(echo $c)'"
	done
	# leaf: 100 + 20 tail calls from middle, 30 calls.
	k=$("$HWTRACE" query tp.hwtrace func leaf --format tsv | tail -n +2 |
	    cut -f14 | sort | uniq -c | awk '{print $2, $1}' | tr '\n' ' ')
	[ "$k" = "call 30 tail 120 " ] ||
	    atf_fail "func leaf: expected entry kinds 'call 30 tail 120', got '$k'"
	# calls and tree count them too, and no frame is a stub.
	"$HWTRACE" query tp.hwtrace calls --format tsv > calls.tsv ||
	    atf_fail "calls failed"
	n=$(awk -F'\t' '$4 == "leaf"' calls.tsv | wc -l)
	[ "$n" -eq 150 ] || atf_fail "calls: expected 150 rows of leaf, got $n"
	"$HWTRACE" query tp.hwtrace tree --format tsv > tree.tsv ||
	    atf_fail "tree failed"
	for fc in leaf:150 middle:120 top:20 plen:40 $impl:50; do
		got=$(awk -F'\t' -v f="${fc%:*}" '$8 ~ ("/main/" f "$") { print $4 }' tree.tsv)
		[ "$got" = "${fc#*:}" ] ||
		    atf_fail "tree: expected main/${fc%:*} ${fc#*:} calls, got '$got'"
	done
	! grep -q "strlen@plt" calls.tsv tree.tsv ||
	    atf_fail "a frame is named strlen@plt: $(grep -h strlen@plt calls.tsv tree.tsv | head -3)"
	# The exports: a slice per call, and leaf's stacks under main.
	"$HWTRACE" query tp.hwtrace export --perfetto pf.json > /dev/null ||
	    atf_fail "export --perfetto failed"
	n=$(grep -o '"name": *"leaf"' pf.json | wc -l)
	[ "$n" -eq 150 ] || atf_fail "Perfetto export: expected 150 leaf slices, got $n"
	"$HWTRACE" query tp.hwtrace export --folded fold.txt > /dev/null ||
	    atf_fail "export --folded failed"
	grep -q ";main;leaf [1-9]" fold.txt ||
	    atf_fail "folded stacks: no main;leaf: $(grep leaf fold.txt)"
	! grep -q "middle;\|top;\|plen;" fold.txt ||
	    atf_fail "folded stacks: a frame that tail-called has children: $(grep 'middle;\|top;\|plen;' fold.txt | head -3)"
}

atf_test_case plain_calls_unchanged
plain_calls_unchanged_head() { atf_set descr "programs whose own functions make no tail call keep their call counts: the own functions of calls and manycalls against callgrind, none of them entered by a tail call"; }
plain_calls_unchanged_body()
{
	for p in calls manycalls; do
		vgcapture $p.hwtrace $p
		cg_calls $p > cg.calls
		# The fixture's own functions, by their debug lines.
		nm -l --defined-only "$HWTRACE_PROGS/$p" |
		    awk -v f="/$p.c:" '$2 ~ /^[tT]$/ && index($4, f) { print $3 }' |
		    grep -vx main > own
		[ "$(wc -l < own)" -ge 2 ] || atf_fail "$p: nm -l names no function of $p.c"
		for f in $(cat own); do
			cg=$(awk -v f="$f" '$2 == f { n += $3 } END { print n + 0 }' cg.calls)
			"$HWTRACE" query $p.hwtrace func "$f" --format tsv > func.tsv ||
			    atf_fail "func $f failed"
			hw=$(tail -n +2 func.tsv | wc -l)
			[ "$hw" -eq "$cg" ] ||
			    atf_fail "$p: func $f: callgrind $cg calls, hwtrace $hw"
			t=$(tail -n +2 func.tsv | cut -f14 | grep -c tail)
			[ "$t" -eq 0 ] ||
			    atf_fail "$p: func $f: $t tail calls, the program makes none"
		done
	done
}

# gdb_frames PROG ARG: "FUNCTION FILE:LINE" of the frames gdb unwinds at
# the crash of PROG ARG, innermost first, up to main; the frames gdb
# adds from DWARF call site records (tail call frames) are left out.
gdb_frames()
{
	command -v gdb >/dev/null 2>&1 || atf_skip "gdb is not installed"
	cat > frames.gdb <<'EOF'
run
python
f = gdb.newest_frame()
while f is not None:
    if f.type() != gdb.TAILCALL_FRAME:
        sal = f.find_sal()
        fn = sal.symtab.filename.split("/")[-1] if sal.symtab else "?"
        print("FRAME %s %s:%d" % (f.name(), fn, sal.line))
    if f.name() == "main":
        break
    f = f.older()
end
EOF
	gdb -q -batch -nx -x frames.gdb --args "$HWTRACE_PROGS/$1" "$2" \
	    > gdb.out 2>&1
	grep '^FRAME ' gdb.out | cut -d' ' -f2-
}

# hw_frames ARCHIVE-OR-DB: the same from hwtrace's bt, up to main.
hw_frames()
{
	"$HWTRACE" query "$1" bt --format tsv > bt.tsv || atf_fail "bt failed"
	tail -n +2 bt.tsv | awk -F'\t' '{ l = $5; sub(/.*\//, "", l);
	    print $3, l; if ($3 == "main") exit }'
}

atf_test_case tail_call_bt
tail_call_bt_head() { atf_set descr "bt in leaf, tail-called by middle, shows leaf <- main with main at its call of middle, as the stack gdb unwinds does (lazily on the archive and from the index); frame 0's invocation is leaf's tail call"; }
tail_call_bt_body()
{
	vgcapture crash.hwtrace tailplt crash
	gdb_frames tailplt crash > want
	[ "$(cut -d' ' -f1 want | tr '\n' ' ')" = "leaf main " ] ||
	    atf_fail "gdb: expected the frames leaf, main: $(cat gdb.out)"
	hw_frames crash.hwtrace > got
	cmp -s want got ||
	    atf_fail "lazy bt: gdb has '$(cat want | tr '\n' ';')', hwtrace '$(cat got | tr '\n' ';')'"
	"$HWTRACE" index -o crash.db crash.hwtrace > /dev/null 2>&1 ||
	    atf_fail "index failed"
	hw_frames crash.db > got
	cmp -s want got ||
	    atf_fail "bt: gdb has '$(cat want | tr '\n' ';')', hwtrace '$(cat got | tr '\n' ';')'"
	! grep -q "not in the trace" bt.tsv ||
	    atf_fail "bt of a whole trace says frames are missing: $(cat bt.tsv)"
	# Frame 0's invocation is leaf's own call, not middle's.
	c=$(sed -n 2p bt.tsv | cut -f6)
	n=$("$HWTRACE" query crash.db sql "SELECT s.name || ' ' || c.entry_kind FROM calls c JOIN symbols s ON s.id = c.symbol WHERE c.id = ${c:-0}" --format tsv | tail -n +2)
	[ "$n" = "leaf tail" ] ||
	    atf_fail "bt: frame 0's call $c is '$n', not leaf's tail call"
}

atf_test_case ring_bt_says_frames_missing
ring_bt_says_frames_missing_head() { atf_set descr "bt of a ring capture whose stack reaches the start of the kept trace ends with a row saying the frames above are not in the trace, indexed or lazy; its frames are gdb's innermost ones; a whole capture has no such row"; }
ring_bt_says_frames_missing_body()
{
	vgcapture whole.hwtrace deepcrash
	[ -x "$HWTRACE_PROGS/deepcrash" ] || atf_skip "fixture programs not built"
	"$HWTRACE" capture --source valgrind --mode ring --buffer 4K \
	    -o ring.hwtrace -- "$HWTRACE_PROGS/deepcrash" > /dev/null \
	    2> capture.err
	[ -s ring.hwtrace ] || atf_fail "ring capture failed: $(cat capture.err)"
	"$HWTRACE" info ring.hwtrace | grep -q "lost: [1-9]" ||
	    atf_fail "the 4 KiB ring did not wrap: $("$HWTRACE" info ring.hwtrace | grep lost)"
	gdb_frames deepcrash "" | sed 's/\.constprop\.[0-9]*//' > want
	"$HWTRACE" index -o ring.db ring.hwtrace > /dev/null 2>&1 ||
	    atf_fail "index failed"
	for src in ring.db ring.hwtrace; do
		"$HWTRACE" query $src bt --format tsv > bt.tsv ||
		    atf_fail "bt failed"
		last=$(tail -n 1 bt.tsv | cut -f3)
		[ "$last" = "(frames above not in the trace)" ] ||
		    atf_fail "$src: bt's last row is '$last', not '(frames above not in the trace)': $(cat bt.tsv)"
		tail -n +2 bt.tsv | sed '$d' | awk -F'\t' '{ l = $5;
		    sub(/.*\//, "", l); sub(/\.constprop\.[0-9]*/, "", $3);
		    print $3, l }' > got
		[ -s got ] || atf_fail "$src: bt has no frame: $(cat bt.tsv)"
		head -n "$(wc -l < got)" want > want.part
		cmp -s want.part got ||
		    atf_fail "$src: bt's frames '$(cat got | tr '\n' ';')' are not gdb's innermost '$(cat want | tr '\n' ';')'"
	done
	"$HWTRACE" query whole.hwtrace bt --format tsv > bt.tsv ||
	    atf_fail "bt failed"
	! grep -q "not in the trace" bt.tsv ||
	    atf_fail "bt of a whole trace says frames are missing: $(cat bt.tsv)"
}

atf_init_test_cases()
{
	atf_add_test_case tail_calls_counted
	atf_add_test_case plain_calls_unchanged
	atf_add_test_case tail_call_bt
	atf_add_test_case ring_bt_says_frames_missing
}
