#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Copyright (c) 2026 The hwtrace authors
#
# Code in anonymous memory recorded at capture (issue 32): selfmod writes
# a function into an anonymous page, runs it, rewrites it and runs it
# again.  The archive must hold jit/code-PID.bin (read back with tar and
# od, not hwtrace) with both versions at the page's address: their bytes
# those selfmod wrote to $SELFMOD_DUMP (and so objdump's instructions),
# the first starting after selfmod's clock read before writing it and
# ending where the second starts, after selfmod's clock read between the
# two; the second valid to the end.  A program without such code gets no
# member.

. "$(atf_get_srcdir)/../env.sh"
. "$HWTRACE_SRC/tests/lib/hwtr_test.sh"

# regions FILE: one line per record of code-region file FILE, "ADDR FROM
# UNTIL LEN HEX" (the u64s as 16 hex digits, HEX the bytes); fails
# unless the header is HWTRCODE version 1.
regions()
{
	od -An -v -tx1 "$1" | tr -s ' \n' '\n\n' | grep . >bytes.txt
	awk '
	function u64(o,  s, i) {
		s = ""
		for (i = 7; i >= 0; i--)
			s = s b[o + i]
		return s
	}
	{ b[n++] = $1 }
	END {
		if (n < 16 || b[0] b[1] b[2] b[3] b[4] b[5] b[6] b[7] != \
		    "48575452434f4445" || b[8] != "01") {
			print "bad header" > "/dev/stderr"
			exit 1
		}
		o = 16
		while (o < n) {
			if (o + 32 > n) {
				print "short record at " o > "/dev/stderr"
				exit 1
			}
			len = 0
			for (i = 3; i >= 0; i--)
				len = len * 256 + \
				    index("0123456789abcdef", \
				    substr(b[o + 24 + i], 1, 1)) * 16 - 16 + \
				    index("0123456789abcdef", \
				    substr(b[o + 24 + i], 2, 1)) - 1
			hex = ""
			for (i = 0; i < len; i++)
				hex = hex b[o + 32 + i]
			print u64(o), u64(o + 8), u64(o + 16), len, hex
			o += 32 + len
		}
		if (o != n) {
			print "trailing bytes" > "/dev/stderr"
			exit 1
		}
	}' bytes.txt
}

# insns HEX: the instructions objdump decodes in bytes HEX, one a line.
insns()
{
	printf '%s' "$1" | xxd -r -p >insns.bin
	objdump -D -b binary -mi386:x86-64 insns.bin |
	    sed -n 's/^ *[0-9a-f]*:\t[0-9a-f ]*\t//p'
}

# check_selfmod SOURCE: capture selfmod with SOURCE and check the
# code regions as said above.  A version's bytes must start the region at
# the page's address (step reads on to the page's end).
check_selfmod()
{
	need_prog selfmod
	require_tools objdump xxd
	SELFMOD_DUMP=$PWD/sm.txt "$HWTRACE" capture --source "$1" \
	    -o s.hwtrace -- "$HWTRACE_PROGS/selfmod" >out 2>err ||
		atf_fail "capture: expected exit 0, got $? ($(oneline err))"
	grep -qx 'selfmod: v1 24 v2 15' out ||
		atf_fail "selfmod printed '$(oneline out)', expected 'selfmod: v1 24 v2 15'"
	m=$(members s.hwtrace | grep '^jit/code-[0-9]*\.bin$')
	[ "$(echo "$m" | wc -w)" -eq 1 ] ||
		atf_fail "expected one member jit/code-PID.bin, got '$m'"
	tar -xOf s.hwtrace "$m" >code.bin 2>/dev/null ||
		atf_fail "tar cannot extract $m"
	regions code.bin >regions.txt 2>rerr ||
		atf_fail "$m does not parse: $(oneline rerr)"
	[ "$(wc -l <sm.txt)" -eq 2 ] ||
		atf_fail "expected selfmod to dump 2 versions, got: $(oneline sm.txt)"
	set -- $(sed -n 1p sm.txt)
	addr=$(printf '%016x' "$1") t0=$2 v1=$4
	set -- $(sed -n 2p sm.txt)
	t1=$2 v2=$4
	# The records at the page's address, in the order recorded.
	awk -v a="$addr" '$1 == a' regions.txt >at.txt
	[ "$(wc -l <at.txt)" -eq 2 ] ||
		atf_fail "expected 2 regions at 0x$addr, got $(wc -l <at.txt): $(tr '\n' '|' <regions.txt | head -c 600)"
	r1=$(sed -n 1p at.txt)
	r2=$(sed -n 2p at.txt)
	set -- $r1
	from1=$2 until1=$3 b1=$5
	set -- $r2
	from2=$2 until2=$3 b2=$5
	case $b1 in
	"$v1"*) ;;
	*)	atf_fail "first version at 0x$addr: expected bytes $v1..., got $(echo "$b1" | head -c 64)" ;;
	esac
	case $b2 in
	"$v2"*) ;;
	*)	atf_fail "second version at 0x$addr: expected bytes $v2..., got $(echo "$b2" | head -c 64)" ;;
	esac
	insns "$v1" >want1
	insns "$(echo "$b1" | head -c ${#v1})" >got1
	[ "$(wc -l <want1)" -eq 3 ] ||
		atf_fail "objdump: expected 3 instructions in v1, got $(wc -l <want1)"
	cmp -s want1 got1 || atf_fail "v1 decodes to '$(oneline got1)', expected '$(oneline want1)'"
	insns "$v2" >want2
	insns "$(echo "$b2" | head -c ${#v2})" >got2
	[ "$(wc -l <want2)" -eq 5 ] ||
		atf_fail "objdump: expected 5 instructions in v2, got $(wc -l <want2)"
	cmp -s want2 got2 || atf_fail "v2 decodes to '$(oneline got2)', expected '$(oneline want2)'"
	[ "$until1" = "$from2" ] ||
		atf_fail "expected v1's until ($until1) to equal v2's from ($from2)"
	[ "$until2" = ffffffffffffffff ] ||
		atf_fail "expected v2's until ffffffffffffffff (valid at the end), got $until2"
	from1=$(printf '%d' "0x$from1")
	from2=$(printf '%d' "0x$from2")
	[ "$t0" -le "$from1" ] && [ "$from1" -le "$t1" ] ||
		atf_fail "expected v1's from between selfmod's clock before writing it and before v2 ($t0 <= $from1 <= $t1)"
	[ "$t1" -le "$from2" ] ||
		atf_fail "expected v2's from after selfmod's clock before writing it ($t1 <= $from2)"
}

atf_test_case valgrind_versions
valgrind_versions_head()
{
	atf_set descr "valgrind source: both versions of selfmod's code"
	atf_set timeout 300
}
valgrind_versions_body()
{
	need_vg_fixture selfmod
	check_selfmod valgrind
}

atf_test_case step_versions
step_versions_head()
{
	atf_set descr "step source: both versions of selfmod's code"
	atf_set timeout 300
}
step_versions_body()
{
	check_selfmod step
}

atf_test_case no_anon_code
no_anon_code_head()
{
	atf_set descr "a program without anonymous code: no code member"
	atf_set timeout 300
}
no_anon_code_body()
{
	need_vg_fixture loop
	for s in valgrind step; do
		"$HWTRACE" capture --source $s -o l.hwtrace -- \
		    "$HWTRACE_PROGS/loop" >out 2>err ||
			atf_fail "capture ($s): expected exit 0, got $? ($(oneline err))"
		m=$(members l.hwtrace | grep '^jit/code-' | tr '\n' ' ')
		[ -z "$m" ] || atf_fail "$s: expected no jit/code-* member, got $m"
		rm -f l.hwtrace
	done
}

atf_init_test_cases()
{
	atf_add_test_case valgrind_versions
	atf_add_test_case step_versions
	atf_add_test_case no_anon_code
}
