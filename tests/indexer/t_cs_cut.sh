#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Copyright (c) 2026 The hwtrace authors
#
# A CoreSight buffer longer than the segment maximum is cut without a sync
# point (hwtr_stream.h, HWTR_SV_CS_CUT): the segment after a cut decodes
# what OpenCSD decodes of the buffer from that offset on.  With the
# maximum at half of a real buffer, the database's blocks and instructions
# are the sum of what trc_pkt_lister prints for the buffer's two halves,
# each in a snapshot of its own; one cut is one decode error.

. "$(atf_get_srcdir)/../env.sh"

SNAPS=$HWTRACE_CORPUS/opencsd/snapshots

# ranges FILE: 'ranges instructions' in trc_pkt_lister's output FILE.
ranges()
{
	grep -o 'OCSD_GEN_TRC_ELEM_INSTR_RANGE(.*num_i([0-9]*)' "$1" |
	    sed 's/.*num_i(\([0-9]*\))/\1/' |
	    awk '{ n++; s += $1 } END { print n + 0, s + 0 }'
}

# summary DB ITEM: the value of ITEM in 'hwtrace query DB summary'.
summary()
{
	"$HWTRACE" query "$1" summary | awk -v k="$2" '$1 == k { print $2 }'
}

# juno_buffer: name, buf and len (bytes) of juno_r1_1's ETMv4 buffer;
# skips without the corpus or trc_pkt_lister.
juno_buffer()
{
	name=juno_r1_1
	buf=cstrace.bin
	[ -d "$SNAPS/$name" ] || atf_skip "shared corpus not found at $SNAPS/$name"
	command -v trc_pkt_lister >/dev/null ||
	    atf_skip "trc_pkt_lister (OpenCSD) not installed"
	len=$(stat -c %s "$SNAPS/$name/$buf")
}

atf_test_case halves
halves_head()
{
	atf_set descr "ETMv4 (juno_r1_1, a 64 KiB formatted buffer) indexed with segments of at most 32 KiB: blocks and instructions equal trc_pkt_lister's for the two halves of the buffer, with one decode error at the cut"
}
halves_body()
{
	juno_buffer
	half=$((len / 2))
	[ $((half % 512)) = 0 ] ||
	    atf_fail "$buf: $len bytes, expected a multiple of 1024"
	for x in a b; do
		cp -R "$SNAPS/$name" $x && chmod -R u+w $x ||
		    atf_fail "cannot copy the snapshot"
	done
	head -c $half "$SNAPS/$name/$buf" > a/$buf
	tail -c +$((half + 1)) "$SNAPS/$name/$buf" > b/$buf
	for x in a b; do
		trc_pkt_lister -ss_dir $x -decode -logfilename $x.ppl \
		    >/dev/null 2>&1 || atf_fail "trc_pkt_lister failed on $x"
	done
	want=$(ranges a.ppl; ranges b.ppl)
	want=$(echo $want | awk '{ print $1 + $3, $2 + $4 }')
	"$HWTRACE" import "$SNAPS/$name" -o $name.hwtrace 2>err ||
	    atf_fail "import failed: $(cat err)"
	HWTRACE_IX_SEG_MAX=$half "$HWTRACE" index -o $name.db $name.hwtrace \
	    2>err || atf_fail "index failed: $(cat err)"
	got="$(summary $name.db blocks) $(summary $name.db instructions)"
	[ "$want" = "$got" ] ||
	    atf_fail "expected 'ranges instructions' $want (trc_pkt_lister, two halves), got $got"
	grep -q " 1 decode errors .*, 3 segments;" err ||
	    atf_fail "expected 3 segments (2 for the cut buffer) and 1 decode error, got: $(tail -n 1 err)"
	n=$("$HWTRACE" query $name.db sql \
	    "SELECT count(*) FROM events WHERE kind = 'decode-error' AND detail LIKE '%cut without a sync point%'" |
	    tail -n 1 | tr -d ' ')
	[ "$n" = 1 ] || atf_fail "expected one 'cut without a sync point' decode error, got $n"
	echo "$name cut at $half: $got ranges and instructions, as trc_pkt_lister's halves"
}

atf_test_case eighths
eighths_head()
{
	atf_set descr "juno_r1_1's buffer holds several trace IDs: indexed with segments of 8 KiB at -j 1 and -j 2, index ends (no wait for a segment outside the decode window) and blocks and instructions equal trc_pkt_lister's for the eight pieces"
}
eighths_body()
{
	juno_buffer
	[ $len = 65536 ] || atf_fail "$buf: $len bytes, expected 65536"
	want="0 0"
	for k in 0 1 2 3 4 5 6 7; do
		cp -R "$SNAPS/$name" p$k && chmod -R u+w p$k ||
		    atf_fail "cannot copy the snapshot"
		dd if="$SNAPS/$name/$buf" of=p$k/$buf bs=8192 skip=$k \
		    count=1 2>/dev/null || atf_fail "dd failed"
		trc_pkt_lister -ss_dir p$k -decode -logfilename p$k.ppl \
		    >/dev/null 2>&1 || atf_fail "trc_pkt_lister failed on p$k"
		want=$(echo $want $(ranges p$k.ppl) |
		    awk '{ print $1 + $3, $2 + $4 }')
	done
	"$HWTRACE" import "$SNAPS/$name" -o $name.hwtrace 2>err ||
	    atf_fail "import failed: $(cat err)"
	for j in 1 2; do
		HWTRACE_IX_SEG_MAX=8192 timeout -s KILL 60 "$HWTRACE" index \
		    -j $j -o j$j.db $name.hwtrace 2>err; rc=$?
		[ $rc = 137 ] &&
		    atf_fail "index -j $j of 8 KiB segments still running after 60 s"
		[ $rc = 0 ] || atf_fail "index -j $j failed ($rc): $(cat err)"
		got="$(summary j$j.db blocks) $(summary j$j.db instructions)"
		[ "$want" = "$got" ] ||
		    atf_fail "-j $j: expected 'ranges instructions' $want (trc_pkt_lister, eight pieces), got $got"
		echo "-j $j: $got ranges and instructions, as trc_pkt_lister's eighths"
	done
}

atf_init_test_cases()
{
	atf_add_test_case halves
	atf_add_test_case eighths
}
