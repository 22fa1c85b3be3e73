#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Copyright (c) 2026 The hwtrace authors
#
# hwtrace index on CoreSight archives (OpenCSD's snapshots, imported): the
# database's executed blocks and instructions equal the instruction ranges
# and the sum of their instruction counts that trc_pkt_lister printed
# (expected/<name>.ppl[.xz] in the corpus), and its exception, exception
# return and not-accessible events the same elements there; STM sources
# are reported as not decoded.

. "$(atf_get_srcdir)/../env.sh"

SNAPS=$HWTRACE_CORPUS/opencsd/snapshots
EXP=$HWTRACE_CORPUS/opencsd/expected

# ppl NAME: trc_pkt_lister's output for snapshot NAME.
ppl()
{
	if [ -f "$EXP/$1.ppl" ]; then cat "$EXP/$1.ppl"; else xz -dc "$EXP/$1.ppl.xz"; fi
}

# summary DB ITEM: the value of ITEM in 'hwtrace query DB summary'.
summary()
{
	"$HWTRACE" query "$1" summary | awk -v k="$2" '$1 == k { print $2 }'
}

# check NAME: index snapshot NAME and compare with trc_pkt_lister.
check()
{
	name=$1
	[ -d "$SNAPS/$name" ] || atf_skip "shared corpus not found at $SNAPS/$name"
	"$HWTRACE" import "$SNAPS/$name" -o "$name.hwtrace" 2>err ||
	    atf_fail "$name: import failed: $(cat err)"
	"$HWTRACE" index -q -o "$name.db" "$name.hwtrace" 2>err ||
	    atf_fail "$name: index failed: $(cat err)"
	ppl "$name" > "$name.ppl"
	want=$(grep -o 'OCSD_GEN_TRC_ELEM_INSTR_RANGE(.*num_i([0-9]*)' "$name.ppl" |
	    sed 's/.*num_i(\([0-9]*\))/\1/' | awk '{ n++; s += $1 } END { print n + 0, s + 0 }')
	got="$(summary "$name.db" blocks) $(summary "$name.db" instructions)"
	[ "$want" = "$got" ] ||
	    atf_fail "$name: expected 'ranges instructions' $want (trc_pkt_lister), got $got"
	for k in "EXCEPTION(:exception" "EXCEPTION_RET(:exception-return" \
	    "ADDR_NACC(:memory-not-accessible"; do
		w=$(grep -c "OCSD_GEN_TRC_ELEM_${k%%:*}" "$name.ppl")
		g=$("$HWTRACE" query "$name.db" sql \
		    "SELECT count(*) FROM events WHERE kind = '${k#*:}'" | tail -n 1 | tr -d ' ')
		[ "$w" = "$g" ] ||
		    atf_fail "$name: expected $w ${k#*:} events, got $g"
	done
	echo "$name: $got ranges and instructions, as trc_pkt_lister"
}

atf_test_case etmv4
etmv4_head()
{
	atf_set descr "ETMv4 (juno_r1_1): blocks, instructions and events equal trc_pkt_lister's; the STM source is reported as not decoded"
}
etmv4_body()
{
	check juno_r1_1
	n=$("$HWTRACE" query juno_r1_1.db sql \
	    "SELECT count(*) FROM events WHERE kind = 'not-decoded' AND detail LIKE '%STM%'" | tail -n 1 | tr -d ' ')
	[ "$n" = 1 ] || atf_fail "expected one 'not-decoded' STM event, got $n"
	n=$("$HWTRACE" query juno_r1_1.db sql \
	    "SELECT count(DISTINCT detail) FROM events WHERE kind = 'trace-id'" | tail -n 1 | tr -d ' ')
	[ "$n" -ge 1 ] || atf_fail "expected trace-id events, got $n"
}

atf_test_case etmv3_ptm
etmv3_ptm_head()
{
	atf_set descr "ETMv3 and PTM (TC2, tc2-ptm-rstk-t32, Snowball): blocks, instructions and events equal trc_pkt_lister's"
}
etmv3_ptm_body()
{
	check TC2
	check tc2-ptm-rstk-t32
	check Snowball
}

atf_test_case queries
queries_head()
{
	atf_set descr "query verbs on a CoreSight database without ELF images show plain addresses: the first call and the last block are trc_pkt_lister's first range of the lowest trace ID and last range of the highest"
}
queries_body()
{
	check juno_r1_1
	ranges=$(grep 'OCSD_GEN_TRC_ELEM_INSTR_RANGE' juno_r1_1.ppl)
	lo=$(echo "$ranges" | sed 's/.*; ID:\([0-9a-f]*\);.*/\1/' | sort -u | head -n 1)
	hi=$(echo "$ranges" | sed 's/.*; ID:\([0-9a-f]*\);.*/\1/' | sort -u | tail -n 1)
	first=$(echo "$ranges" | grep "; ID:$lo;" | head -n 1 | sed 's/.*range=\(0x[0-9a-f]*\):.*/\1/')
	last=$(echo "$ranges" | grep "; ID:$hi;" | tail -n 1 | sed 's/.*range=\(0x[0-9a-f]*\):.*/\1/')
	"$HWTRACE" query juno_r1_1.db calls > calls || atf_fail "query calls failed"
	got=$(awk 'NR == 2 { print $4 }' calls)
	[ "$got" = "$first" ] ||
	    atf_fail "expected the first call at $first (trace ID 0x$lo's first range), got '$got'"
	"$HWTRACE" query juno_r1_1.db last > last || atf_fail "query last failed"
	got=$(tail -n 1 last | awk '{ print $3 }')
	[ "$got" = "$last" ] ||
	    atf_fail "expected the last block at $last (trace ID 0x$hi's last range), got '$got'"
	"$HWTRACE" query juno_r1_1.db hot --by block > hot || atf_fail "query hot failed"
	awk 'NR > 1 && $1 !~ /^0x[0-9a-f]+$/ { exit 1 }' hot ||
	    atf_fail "hot --by block shows something other than addresses: $(head -n 3 hot)"
}

atf_init_test_cases()
{
	atf_add_test_case queries
	atf_add_test_case etmv4
	atf_add_test_case etmv3_ptm
}
