#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# A trace that leads the decoder into a loop that needs no trace (direct
# jumps only) must not hang index: the loop is a decode error, "no
# progress: a loop that reads no trace", at the trace offset where the
# decoder stands, and decoding resumes at the next PSB, the same with
# both decoders and with -j 1 and 2.  Straight-line code and loops that
# take TNT bits, however long, are not cut: their instruction counts are
# known by construction.  Each index run has 30 seconds: a loop of
# direct jumps used to take hours (a million blocks of 65,535
# instructions), and a one-instruction loop killed libipt (SIGSEGV).

. "$(atf_get_srcdir)/../env.sh"
. "$HWTRACE_SRC/tests/lib/hwtr_test.sh"

GEN="$HWTRACE_BUILD/bench/ixgen"
PROG="$HWTRACE_PROGS/calls"
MSG='no progress: a loop that reads no trace'

q()
{
	sqlite3 -batch -noheader -cmd ".load $HWTRACE_BUILD/hwtrace_sqlite" "$@"
}

# rows DB OUT: every table's rows as SQL literals, sorted.  A block of
# more than 4,096 instructions that libipt's block cache ended has no
# class from libipt: the indexer takes its last instruction's (lblock.c),
# so that its last class is fpt's ('other' here) with either decoder.
rows()
{
	sqlite3 -batch -noheader "$1" "SELECT 'SELECT ' || quote(name) || \
	    ', * FROM \"' || name || '\";' FROM sqlite_master WHERE \
	    type = 'table' ORDER BY name" >"$2.sql" ||
	    atf_fail "$1: cannot read its tables"
	q -bail -cmd ".mode quote" "$1" <"$2.sql" >"$2.all" ||
	    atf_fail "$1: cannot read its rows"
	LC_ALL=C sort "$2.all" >"$2"
}

# same_rows A B: databases A and B hold the same rows.
same_rows()
{
	cmp -s "$1" "$2" && return
	rows "$1" "$1.rows"
	rows "$2" "$2.rows"
	cmp -s "$1.rows" "$2.rows" ||
	    atf_fail "$1 and $2 differ (< $1, > $2): $(diff "$1.rows" "$2.rows" | head -6 | tr '\n' '|')"
}

# index_ok ARCHIVE DB ARG...: index within 30 seconds, exit status 0.
index_ok()
{
	a=$1
	db=$2
	shift 2
	timeout 30 "$HWTRACE" index -q "$@" -o "$db" "$a" >out 2>err
	rc=$?
	[ "$rc" -ne 124 ] || atf_fail "index $* $a: still running after 30 s"
	[ "$rc" -eq 0 ] ||
	    atf_fail "index $* $a: exit status $rc: $(tr '\n' '|' <err)"
}

# every ARCHIVE: indexed with the decoders $DECODERS (both unless set),
# -j 1 and 2, into ARCHIVE.{fast,libipt}.{1,2}.db, all with the same
# rows.
every()
{
	for dec in ${DECODERS:-fast libipt}; do
		for j in 1 2; do
			index_ok "$1" "$1.$dec.$j.db" -D "$dec" -j "$j"
		done
	done
	for db in "$1".*.db; do
		same_rows "$1.fast.1.db" "$db"
	done
}

PSB='\002\202\002\202\002\202\002\202\002\202\002\202\002\202\002\202'
# PSB+: MODE.Exec 64-bit, PSBEND.
HDR="$PSB\231\001\002\043"
# TIP.PGE to 0x400000 (IP bytes 010: the low 4), TIP.PGD without an IP.
PGE='\121\000\000\100\000'
PGD='\001'

# raw NAME PT CODE...: NAME.hwtrace of trace PT (printf format) and the
# code from the printf formats or files CODE at 0x400000.
raw()
{
	n=$1
	printf "$2" >"$n.pt"
	shift 2
	: >"$n.bin"
	for c in "$@"; do
		if [ -f "$c" ]; then
			cat "$c" >>"$n.bin"
		else
			printf "$c" >>"$n.bin"
		fi
	done
	"$HWTRACE" import --raw "$n.bin:0x400000" --pt "$n.pt" \
	    -o "$n.hwtrace" >/dev/null 2>&1 || atf_fail "import $n failed"
}

# nops N FILE: N one-byte nops.
nops()
{
	head -c "$1" /dev/zero | tr '\000' '\220' >"$2"
}

atf_test_case ixgen_seeds
ixgen_seeds_head()
{
	atf_set descr "ixgen traces whose damage leads into abort()'s tail (hlt; jmp back): a decode error with an offset, the same database from both decoders, -j 1 and 2"
	atf_set timeout 600
}
ixgen_seeds_body()
{
	need_gen
	for s in 23 31 68 120; do
		"$GEN" -n 100000 -t 1 -s "$s" "$PROG" "s$s.hwtrace" ||
		    atf_fail "ixgen -s $s failed"
		every "s$s.hwtrace"
		n=$(q "s$s.hwtrace.fast.1.db" "SELECT count(*) FROM events WHERE kind = 'decode-error' AND detail = '$MSG' AND offset IS NOT NULL AND ip IS NOT NULL")
		[ "$n" -ge 1 ] ||
		    atf_fail "seed $s: expected a decode error '$MSG', got: $(q "s$s.hwtrace.fast.1.db" "SELECT group_concat(detail, '|') FROM events WHERE kind = 'decode-error'")"
		rm -f "s$s".hwtrace.*.db
	done
}

# loop_then_psb NAME CODE IP: tracing enabled into CODE at 0x400000, a
# loop of direct jumps ending at IP, then a TNT-8 never reached; the
# next PSB+ (FUP 0x400010) resumes at nop; nop; nop; jmp *%rax, which
# the TIP.PGD ends.
loop_then_psb()
{
	printf "$2" >code.bin
	while [ "$(wc -c <code.bin)" -lt 16 ]; do
		printf '\314' >>code.bin
	done
	printf '\220\220\220\377\340' >>code.bin
	raw "$1" "$HDR$PGE\006$PSB\231\001\135\020\000\100\000\002\043$PGD" \
	    code.bin
	every "$1.hwtrace"
	db="$1.hwtrace.fast.1.db"
	got=$(q "$db" "SELECT offset || ' ' || printf('%x', ip) FROM events WHERE kind = 'decode-error' AND detail = '$MSG'")
	[ "$got" = "25 $3" ] ||
	    atf_fail "$1: expected the decode error at offset 25 (the TNT), ip $3, got '$got': $(q "$db" "SELECT group_concat(kind || ' ' || ifnull(detail, ''), '|') FROM events")"
	got=$(q "$db" "SELECT group_concat(printf('%x', ip), ' ') FROM exec_insns WHERE thread = 1 AND insn >= (SELECT insn FROM events WHERE kind = 'decode-error')")
	[ "$got" = "400010 400011 400012 400013" ] ||
	    atf_fail "$1: expected the 4 instructions from the next PSB after the error, got '$got'"
}

atf_test_case jmp_self
jmp_self_head()
{
	atf_set descr "a PSB+ and a TIP.PGE into jmp . (one instruction: libipt's recursion), then a packet: a decode error at the TNT's offset, decoding resumes at the next PSB, both decoders, -j 1 and 2"
	atf_set timeout 300
}
jmp_self_body()
{
	# With AddressSanitizer libipt decodes on the thread's stack, which
	# its recursion over jmp . overflows (decode.c, seg_decode_ipt()).
	if nm -D "$HWTRACE" 2>/dev/null | grep -q __asan_init; then
		echo "AddressSanitizer: -D libipt not run" >&2
		DECODERS=fast
	fi
	loop_then_psb jmp '\353\376' 400000
}

atf_test_case hlt_jmp
hlt_jmp_head()
{
	atf_set descr "as jmp_self, into abort()'s tail: hlt; jmp back"
	atf_set timeout 300
}
hlt_jmp_body()
{
	loop_then_psb hlt '\364\353\375' 400001
}

atf_test_case long_loop
long_loop_head()
{
	atf_set descr "a loop of 100,000 nops and jmp back (several full blocks a round): a decode error after one round at least, decoding resumes at the next PSB, both decoders, -j 1 and 2"
	atf_set timeout 300
}
long_loop_body()
{
	nops 100000 n.bin
	# jmp 0x400000 from 0x4186a0 (rel32 -100005); at 0x4186a5, where
	# the second PSB+'s FUP resumes: nop; nop; nop; jmp *%rax.
	raw long "$HDR$PGE\006$PSB\231\001\135\245\206\101\000\002\043$PGD" \
	    n.bin '\351\143\171\376\377\220\220\220\377\340'
	every long.hwtrace
	# libipt's full blocks: their last instruction's class (a nop's, or
	# the jmp's), none unknown.
	got=$(q long.hwtrace.libipt.1.db "SELECT count(*) || ' ' || sum(last_class = 'unknown') FROM blocks WHERE ninsns > 4096")
	[ "$got" != "0 " ] && [ "${got#* }" = 0 ] ||
	    atf_fail "expected full blocks from libipt, none of class 'unknown', got (count, unknown) '$got'"
	db=long.hwtrace.fast.1.db
	got=$(q "$db" "SELECT offset || ' ' || (insn > 100001) FROM events WHERE kind = 'decode-error' AND detail = '$MSG'")
	[ "$got" = "25 1" ] ||
	    atf_fail "expected the decode error at offset 25 after a round (100,001 instructions), got '$got': $(q "$db" "SELECT group_concat(kind || ' ' || ifnull(insn, '') || ' ' || ifnull(detail, ''), '|') FROM events")"
	got=$(q "$db" "SELECT group_concat(printf('%x', ip), ' ') FROM exec_insns WHERE thread = 1 AND insn >= (SELECT insn FROM events WHERE kind = 'decode-error')")
	[ "$got" = "4186a5 4186a6 4186a7 4186a8" ] ||
	    atf_fail "expected the 4 instructions from the next PSB after the error, got '$got'"
}

# not_cut NAME N: NAME.hwtrace indexed with either decoder holds all N
# instructions and no decode error: nothing was taken for a loop.
not_cut()
{
	for dec in fast libipt; do
		index_ok "$1.hwtrace" "$1.$dec.db" -D "$dec" -j 1
		got=$(q "$1.$dec.db" "SELECT insns FROM threads WHERE id = 1")
		[ "$got" = "$2" ] ||
		    atf_fail "-D $dec: expected $2 instructions, got '$got'"
		got=$(q "$1.$dec.db" "SELECT count(*) FROM events WHERE kind = 'decode-error'")
		[ "$got" = 0 ] || atf_fail "-D $dec: $got decode errors"
	done
}

atf_test_case straight_line
straight_line_head()
{
	atf_set descr "200,000 nops then jmp *%rax (full blocks, no branch): all 200,001 instructions, no decode error, both decoders"
	atf_set timeout 300
}
straight_line_body()
{
	nops 200000 n.bin
	raw line "$HDR$PGE$PGD" n.bin '\377\340'
	not_cut line 200001
}

atf_test_case tnt_loop
tnt_loop_head()
{
	atf_set descr "a loop of 70,000 nops and jnz, taken three times from one TNT-8 packet (a full block starting at the same place, the trace offset still): all 280,005 instructions, no decode error, both decoders"
	atf_set timeout 300
}
tnt_loop_body()
{
	nops 70000 n.bin
	# jnz 0x400000 from 0x411170 (rel32 -70006); TNT-8 taken x3, not
	# taken; then jmp *%rax and the TIP.PGD.
	raw tnt "$HDR$PGE\074$PGD" n.bin '\017\205\212\356\376\377\377\340'
	not_cut tnt 280005
}

atf_init_test_cases()
{
	atf_add_test_case ixgen_seeds
	atf_add_test_case jmp_self
	atf_add_test_case hlt_jmp
	atf_add_test_case long_loop
	atf_add_test_case straight_line
	atf_add_test_case tnt_loop
}
