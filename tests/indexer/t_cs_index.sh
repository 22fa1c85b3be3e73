#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Copyright (c) 2026 The hwtrace authors
#
# hwtrace index on CoreSight archives (OpenCSD's snapshots, imported): the
# database's executed blocks and instructions equal the instruction ranges
# and the sum of their instruction counts that trc_pkt_lister printed
# (expected/<name>.ppl[.xz] in the corpus), and its exception, exception
# return and not-accessible events the same elements there (and ETE's
# transactional memory and timestamp markers); STM sources are reported
# as not decoded; summary's cycles are trc_pkt_lister's.

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

# idrow DB ID: 'blocks insns' of the thread of trace ID 0xID (hex, no 0x).
idrow()
{
	"$HWTRACE" query --format tsv "$1" sql "SELECT t.blocks || ' ' || t.insns FROM threads t JOIN streams s ON s.id = t.stream WHERE s.name LIKE '% trace ID 0x$(printf %02x 0x$2)'" | tail -n +2
}

# idthread DB ID: the thread id of trace ID 0xID.
idthread()
{
	"$HWTRACE" query --format tsv "$1" sql "SELECT t.id FROM threads t JOIN streams s ON s.id = t.stream WHERE s.name LIKE '% trace ID 0x$(printf %02x 0x$2)'" | tail -n +2
}

# per_id NAME: every trace ID of the ppl has a thread of its own with
# trc_pkt_lister's ranges and instructions of that ID.
per_id()
{
	name=$1
	ids=$(grep 'OCSD_GEN_TRC_ELEM_INSTR_RANGE' "$name.ppl" | sed 's/.*; ID:\([0-9a-f]*\);.*/\1/' | sort -u)
	[ -n "$ids" ] || atf_fail "$name: no ranges in the ppl"
	for id in $ids; do
		want=$(grep "; ID:$id; OCSD_GEN_TRC_ELEM_INSTR_RANGE" "$name.ppl" |
		    sed 's/.*num_i(\([0-9]*\))/\1/' | awk '{ n++; s += $1 } END { print n + 0, s + 0 }')
		got=$(idrow "$name.db" "$id")
		[ "$want" = "$got" ] ||
		    atf_fail "$name: trace ID 0x$id: expected its thread to have 'blocks insns' $want (trc_pkt_lister), got '$got'"
	done
	echo "$name: one thread per trace ID ($(echo $ids | wc -w)), each with trc_pkt_lister's ranges"
}

atf_test_case etmv4
etmv4_head()
{
	atf_set descr "ETMv4 (juno_r1_1): blocks, instructions and events equal trc_pkt_lister's, per trace ID in a thread and stream of its own; the STM source is reported as not decoded"
}
etmv4_body()
{
	check juno_r1_1
	per_id juno_r1_1
	n=$("$HWTRACE" query juno_r1_1.db sql \
	    "SELECT count(*) FROM events WHERE kind = 'not-decoded' AND detail LIKE '%STM%'" | tail -n 1 | tr -d ' ')
	[ "$n" = 1 ] || atf_fail "expected one 'not-decoded' STM event, got $n"
	got=$("$HWTRACE" query --format tsv juno_r1_1.db sql \
	    "SELECT s.format || ' ' || s.status || ' ' || t.blocks FROM streams s JOIN threads t ON t.stream = s.id WHERE s.name LIKE '% trace ID 0x20'" | tail -n +2)
	[ "$got" = "stm unsupported 0" ] ||
	    atf_fail "expected the STM trace ID 0x20 as a stream 'stm unsupported' with an empty thread, got '$got'"
	got=$("$HWTRACE" query --format tsv juno_r1_1.db sql "SELECT value FROM meta WHERE key = 'cpu'" | tail -n +2)
	[ "$got" = "arm 0/0/0" ] || atf_fail "expected meta cpu 'arm 0/0/0' for a CoreSight snapshot, got '$got'"
	# The buffer keeps its row, with its bytes; trace IDs have none.
	got=$("$HWTRACE" query --format tsv juno_r1_1.db sql \
	    "SELECT group_concat(id || ':' || format || ':' || bytes, ' ') FROM (SELECT * FROM streams ORDER BY id)" | tail -n +2)
	want="0:coresight:$(stat -c %s "$SNAPS/juno_r1_1/cstrace.bin") 1:coresight:$(stat -c %s "$SNAPS/juno_r1_1/cstraceitm.bin") 272:etmv4:0 273:etmv4:0 274:etmv4:0 275:etmv4:0 276:etmv4:0 277:etmv4:0 544:stm:0"
	[ "$got" = "$want" ] || atf_fail "streams: expected '$want', got '$got'"
}

atf_test_case etmv3_ptm
etmv3_ptm_head()
{
	atf_set descr "ETMv3 and PTM (TC2, tc2-ptm-rstk-t32, Snowball): blocks, instructions and events equal trc_pkt_lister's, per trace ID"
}
etmv3_ptm_body()
{
	for n in TC2 tc2-ptm-rstk-t32 Snowball; do
		check $n
		per_id $n
	done
}

atf_test_case t32_lengths
t32_lengths_head()
{
	atf_set descr "instruction lengths of A32/T32 blocks (tc2-ptm-rstk-t32): every range's block has num_i lengths adding up to the range and ending with trc_pkt_lister's last_sz; T32 blocks mix 2- and 4-byte instructions"
}
t32_lengths_body()
{
	check tc2-ptm-rstk-t32
	# start end num_i last_sz ISA for every distinct range
	grep 'OCSD_GEN_TRC_ELEM_INSTR_RANGE' tc2-ptm-rstk-t32.ppl |
	    sed 's/.*range=0x\([0-9a-f]*\):\[0x\([0-9a-f]*\)\] num_i(\([0-9]*\)) last_sz(\([0-9]\)) (ISA=\([A-Z0-9]*\)).*/\1 \2 \3 \4 \5/' |
	    sort -u > want
	[ "$(wc -l < want)" -gt 50 ] || atf_fail "expected the ppl's ranges, got $(wc -l < want)"
	grep -q ' T32$' want || atf_fail "expected T32 ranges in tc2-ptm-rstk-t32"
	"$HWTRACE" query --format tsv tc2-ptm-rstk-t32.db sql \
	    "SELECT printf('%x %x %d %d %s', start_ip, start_ip + size, ninsns, CASE WHEN insn_lens IS NULL THEN 0 ELSE unicode(substr(CAST(insn_lens AS TEXT), -1)) END, CASE mode WHEN 16 THEN 'T32' WHEN 32 THEN 'A32' ELSE 'A64' END) FROM blocks" |
	    tail -n +2 | sort -u > got
	diff want got > d || atf_fail "ranges as blocks (start end num_i last_sz ISA) differ from trc_pkt_lister's: $(head -n 6 d)"
	n=$("$HWTRACE" query --format tsv tc2-ptm-rstk-t32.db sql \
	    "SELECT count(*) FROM blocks WHERE insn_lens IS NULL OR length(insn_lens) != ninsns" | tail -n 1)
	[ "$n" = 0 ] || atf_fail "expected lengths for every block, $n without"
	n=$("$HWTRACE" query --format tsv tc2-ptm-rstk-t32.db sql \
	    "SELECT count(*) FROM blocks WHERE mode = 16 AND instr(CAST(insn_lens AS TEXT), char(2)) > 0 AND instr(CAST(insn_lens AS TEXT), char(4)) > 0" | tail -n 1)
	[ "$n" -gt 0 ] || atf_fail "expected T32 blocks mixing 2- and 4-byte instructions, got $n"
}

atf_test_case queries
queries_head()
{
	atf_set descr "query verbs on a CoreSight database without ELF images (juno_r1_1) show plain addresses: threads, last and insns per trace ID equal trc_pkt_lister's ranges and the snapshot's memory dump"
}
queries_body()
{
	check juno_r1_1
	ranges=$(grep 'OCSD_GEN_TRC_ELEM_INSTR_RANGE' juno_r1_1.ppl)
	lo=$(echo "$ranges" | sed 's/.*; ID:\([0-9a-f]*\);.*/\1/' | sort -u | head -n 1)
	first=$(echo "$ranges" | grep "; ID:$lo;" | head -n 1 | sed 's/.*range=\(0x[0-9a-f]*\):.*/\1/')
	"$HWTRACE" query juno_r1_1.db calls > calls || atf_fail "query calls failed"
	got=$(awk 'NR == 2 { print $4 }' calls)
	[ "$got" = "$first" ] ||
	    atf_fail "expected the first call at $first (trace ID 0x$lo's first range), got '$got'"
	for id in $(echo "$ranges" | sed 's/.*; ID:\([0-9a-f]*\);.*/\1/' | sort -u); do
		t=$(idthread juno_r1_1.db $id)
		# last: the last 5 ranges, address and instructions.
		echo "$ranges" | grep "; ID:$id;" | tail -n 5 |
		    sed 's/.*range=\(0x[0-9a-f]*\):.*num_i(\([0-9]*\)).*/\1 \2/' > want
		"$HWTRACE" query --format tsv juno_r1_1.db last --thread "$t" --count 5 |
		    awk -F'\t' 'NR > 1 { print $3, $6 }' > got
		diff want got > d ||
		    atf_fail "trace ID 0x$id (thread $t): last 5 blocks differ from trc_pkt_lister's last ranges: $(cat d)"
		# insns: the last 6 instructions (A64: 4 bytes each) and their
		# encodings as the memory dump holds them.
		echo "$ranges" | grep "; ID:$id;" | tail -n 6 |
		    sed 's/.*range=0x\([0-9a-f]*\):\[0x\([0-9a-f]*\)\].*/\1 \2/' |
		    while read st en; do
			a=$((0x$st))
			while [ $a -lt $((0x$en)) ]; do
				printf '0x%x %s\n' $a "$(od -A n -t x4 -j $((a - 0xffffffc000081000)) -N 4 "$SNAPS/juno_r1_1/kernel_dump.bin" | tr -d ' ')"
				a=$((a + 4))
			done
		    done | tail -n 6 > want
		"$HWTRACE" query --format tsv juno_r1_1.db insns --thread "$t" --count 6 |
		    awk -F'\t' 'NR > 1 { print $3, $6 }' > got
		diff want got > d ||
		    atf_fail "trace ID 0x$id (thread $t): last 6 instructions differ from the ranges and kernel_dump.bin: $(cat d)"
	done
	# summary: the counts the snapshot and trc_pkt_lister give.
	d=$SNAPS/juno_r1_1
	nsrc=$(sed -n '/^\[source_buffers\]/,/^\[/p' "$d/trace.ini" | grep -c '=')
	nbuf=$(sed -n 's/^buffers=//p' "$d/trace.ini" | tr ',' '\n' | grep -c .)
	bytes=$(for f in $(sed -n 's/^file=//p' "$d/trace.ini"); do stat -c %s "$d/$f"; done | awk '{ s += $1 } END { print s }')
	nimg=$(cat "$d"/cpu_*.ini | sed -n 's/^file=//p' | sort -u | wc -l)
	nstatic=$(echo "$ranges" | sed 's/.*range=\(0x[0-9a-f]*\):.*num_i(\([0-9]*\)).*ISA=\([A-Z0-9]*\).*/\1 \2 \3/' | sort -u | wc -l)
	set -- $(echo "$ranges" | sed 's/.*num_i(\([0-9]*\)).*/\1/' | awk '{ n++; s += $1 } END { print n, s }')
	printf '%s\n' "source coresight-snapshot" "archive_complete 1" \
	    "streams $((nbuf + nsrc))" "processes 0" "threads $nsrc" \
	    "images $nimg" "instructions $2" "blocks $1" \
	    "static_blocks $nstatic" "trace_bytes $bytes" "decode_errors 0" \
	    "undecoded_bytes 0" "lost_bytes 0" "lost_events 0" > want
	"$HWTRACE" query --format tsv juno_r1_1.db summary |
	    awk -F'\t' 'NR > 1 && $1 !~ /^(command|exit|start|duration_ns|calls)$/ { print $1, $2 }' > got
	diff want got > d || atf_fail "summary differs from the snapshot's and trc_pkt_lister's counts: $(cat d)"
	# hot --by block: the top 5 blocks, each a distinct range of the ppl
	# (start, instructions) with its executions over all trace IDs.
	echo "$ranges" | sed 's/.*range=\(0x[0-9a-f]*\):.*num_i(\([0-9]*\)).*/\1 \2/' |
	    awk -v total="$2" '{ k = $1 " " $2; if (!(k in c)) o[k] = n++; c[k]++ }
		END { for (k in c) { split(k, a, " "); printf "%d %d %s %d %d %d %.2f\n", c[k] * a[2], o[k], a[1], c[k], a[2], c[k] * a[2], 100 * c[k] * a[2] / total } }' |
	    sort -k1,1nr -k2,2n | head -n 5 | cut -d' ' -f3- | sed 's/\.\([0-9]\)0$/.\1/; s/\.00$/.0/' > want
	"$HWTRACE" query --format tsv juno_r1_1.db hot --by block -n 5 |
	    awk -F'\t' 'NR > 1 { print $1, $4, $5, $6, $7 }' > got
	diff want got > d || atf_fail "hot --by block (address count block_insns insns percent) differs from trc_pkt_lister's ranges: $(cat d)"
}

atf_test_case symbols
symbols_head()
{
	atf_set descr "query verbs on a CoreSight database with ELF images (test-file-mem-offsets: ld.so, libc dumped as ELF files): hot names the dynamic symbols readelf lists, with trc_pkt_lister's instruction counts in them"
	atf_set require.progs "readelf"
}
symbols_body()
{
	check test-file-mem-offsets
	ld="$SNAPS/test-file-mem-offsets/ld-2.21.bin"
	base=$((0x7f8e58f000))	# cpu_3.ini [dump3]: ld-2.21.bin's address
	"$HWTRACE" query --format tsv test-file-mem-offsets.db hot --by func -n 100000 > hot ||
	    atf_fail "query hot failed"
	named=$(awk -F'\t' 'NR > 1 && $1 != "" && $1 != "[unknown]" { print $1 }' hot)
	[ -n "$named" ] || atf_fail "expected named functions in hot, got $(cat hot)"
	echo "$named" | grep -qx malloc || atf_fail "expected malloc in hot: $(cat hot)"
	grep 'OCSD_GEN_TRC_ELEM_INSTR_RANGE' test-file-mem-offsets.ppl |
	    sed 's/.*range=0x\([0-9a-f]*\):.*num_i(\([0-9]*\)).*/\1 \2/' > ranges
	# Call targets: the ranges right after one ending in "b+link".
	grep 'OCSD_GEN_TRC_ELEM_INSTR_RANGE' test-file-mem-offsets.ppl |
	    awk '{ s = $0; sub(/.*range=0x/, "", s); sub(/:.*/, "", s)
		if (call) print s; call = ($0 ~ /b\+link/) }' | sort -u > called
	for f in $named; do
		sym=$(readelf -W --dyn-syms "$ld" | awk -v f="$f" '{ sub(/@.*/, "", $8) } $8 == f && $4 == "FUNC" { print $2, $3; exit }')
		# A function no symbol names: recovered from the FDE readelf
		# lists at its address ("ld-2.21.bin+0xADDR").
		case $f in
		ld-2.21.bin+0x*)
			fde=$(readelf -W --debug-dump=frames "$ld" 2>/dev/null |
			    awk -v a="${f#*+0x}" '/ FDE / { split($NF, r, /[=.]+/)
				s = r[2]; sub(/^0+/, "", s)
				if (s == a) { print r[2], r[3]; exit } }')
			[ -n "$fde" ] && set -- $fde &&
			    sym="$1 $((0x$2 - 0x$1))"
			# Else a function only a call names (its first
			# block): trc_pkt_lister has a call land there.
			if [ -z "$sym" ]; then
				a=$(printf '%x' $((base + 0x${f#*+0x})))
				grep -qx "$a" called ||
				    atf_fail "hot names '$f': no FDE starts there and trc_pkt_lister has no call to $a"
				continue
			fi
			;;
		esac
		[ -n "$sym" ] || atf_fail "hot names '$f', which is neither a function in ld-2.21.bin's dynamic symbols nor an FDE's start"
		set -- $sym
		lo=$((base + 0x$1))
		hi=$((lo + $2))
		want=$(while read st n; do
			a=$((0x$st))
			[ $a -ge $lo ] && [ $a -lt $hi ] && echo $n
		done < ranges | awk '{ s += $1 } END { print s + 0 }')
		got=$(awk -F'\t' -v f="$f" '$1 == f { print $3 }' hot)
		[ "$want" = "$got" ] ||
		    atf_fail "$f: expected $want instructions (trc_pkt_lister's ranges starting in [$lo, $hi)), hot says $got"
	done
	# last: every block it names malloc starts inside malloc.
	set -- $(readelf -W --dyn-syms "$ld" | awk '{ sub(/@.*/, "", $8) } $8 == "malloc" { print $2, $3; exit }')
	lo=$((base + 0x$1))
	hi=$((lo + $2))
	"$HWTRACE" query --format tsv test-file-mem-offsets.db last --count 6000 |
	    awk -F'\t' '$4 ~ /^malloc/ { print $3 }' > m
	[ -s m ] || atf_fail "expected 'last' to name malloc"
	while read a; do
		[ $((a)) -ge $lo ] && [ $((a)) -lt $hi ] ||
		    atf_fail "'last' names malloc at $a, outside [$lo, $hi)"
	done < m
}

atf_test_case summary_cycles
summary_cycles_head()
{
	atf_set descr "summary reports the cycles of TC2 (ETMv3 and PTM, cycle-accurate) as the sum of trc_pkt_lister's [CC=n] values; a database without the cycles table (written before it existed) still gives its summary, without the row"
}
summary_cycles_body()
{
	name=TC2
	[ -d "$SNAPS/$name" ] || atf_skip "shared corpus not found at $SNAPS/$name"
	"$HWTRACE" import "$SNAPS/$name" -o "$name.hwtrace" 2>err ||
	    atf_fail "$name: import failed: $(cat err)"
	"$HWTRACE" index -q -o "$name.db" "$name.hwtrace" 2>err ||
	    atf_fail "$name: index failed: $(cat err)"
	# Every count of ETMv3 and PTM adds to the running count.
	want=$(ppl "$name" | grep -o '\[CC=[0-9]*\]' | tr -dc '0-9\n' |
	    awk '{ n++; s += $1 } END { print n + 0, s + 0 }')
	[ "${want% *}" -gt 1000 ] || atf_fail "$name: expected cycle counts in its ppl, found ${want% *}"
	got="$("$HWTRACE" query "$name.db" sql "SELECT count(*) FROM cycles" | tail -n 1 | tr -d ' ') $(summary "$name.db" cycles)"
	[ "$want" = "$got" ] ||
	    atf_fail "$name: expected 'counts cycles' $want (trc_pkt_lister), got '$got'"
	echo "$name: $got counts and cycles, as trc_pkt_lister"
	"$HWTRACE" query --format tsv "$name.db" summary | grep -v '^cycles' > want
	cp "$name.db" old.db
	sqlite3 old.db "DROP TABLE cycles" || atf_fail "cannot drop the cycles table"
	"$HWTRACE" query --format tsv old.db summary > got 2>err ||
	    atf_fail "summary of a database without cycles table failed: $(cat err)"
	diff want got > d || atf_fail "without the cycles table, expected the summary without its cycles row: $(cat d)"
}

atf_test_case memcheck
memcheck_head()
{
	atf_set descr "index reads no uninitialised memory of OpenCSD's elements under Valgrind's memcheck (TC2's ETMv3 NO_SYNC elements come without an ISA or a cycle count), and makes the same database as without it"
}
memcheck_body()
{
	name=TC2
	[ -d "$SNAPS/$name" ] || atf_skip "shared corpus not found at $SNAPS/$name"
	command -v valgrind >/dev/null 2>&1 || atf_skip "valgrind is not installed"
	if ldd "$HWTRACE" 2>/dev/null | grep -q libasan; then
		atf_skip "a sanitizer build does not run under memcheck"
	fi
	"$HWTRACE" import "$SNAPS/$name" -o "$name.hwtrace" 2>err ||
	    atf_fail "$name: import failed: $(cat err)"
	"$HWTRACE" index -q -j 1 -o plain.db "$name.hwtrace" 2>err ||
	    atf_fail "$name: index failed: $(cat err)"
	valgrind -q --error-exitcode=99 --leak-check=no \
	    "$HWTRACE" index -q -j 1 -o mc.db "$name.hwtrace" 2>vg
	rc=$?
	if [ $rc -ne 0 ]; then
		cat vg >&2
		atf_fail "$name: index under memcheck exited $rc: $(grep -m 1 -o '==[0-9]*== [A-Z].*' vg)"
	fi
	sqlite3 plain.db .dump > plain.sql
	sqlite3 mc.db .dump > mc.sql
	[ -s plain.sql ] && cmp -s plain.sql mc.sql ||
	    atf_fail "$name: the database under memcheck differs from the one without it"
}

# ete_events NAME: the ETE elements trc_pkt_lister printed (memtrans,
# timestamp markers, exceptions and their returns), each with the number
# of ranges before it, as "kind seq" lines: where the database's events are.
ete_events_ppl()
{
	grep '; ID:[0-9a-f]*; OCSD_GEN_TRC_ELEM_' "$1.ppl" | awk '
	    /OCSD_GEN_TRC_ELEM_INSTR_RANGE\(/ { n++; next }
	    /OCSD_GEN_TRC_ELEM_MEMTRANS\(Start/ { print "transaction-start", n + 0 }
	    /OCSD_GEN_TRC_ELEM_MEMTRANS\(Commit/ { print "transaction-commit", n + 0 }
	    /OCSD_GEN_TRC_ELEM_MEMTRANS\(Fail/ { print "transaction-fail", n + 0 }
	    /OCSD_GEN_TRC_ELEM_SYNC_MARKER\(/ { print "timestamp-marker", n + 0 }
	    /OCSD_GEN_TRC_ELEM_EXCEPTION\(/ { print "exception", n + 0 }
	    /OCSD_GEN_TRC_ELEM_EXCEPTION_RET\(/ { print "exception-return", n + 0 }'
}

# dumps DIR: "address length file" of every [dump*] section of the
# snapshot's device files, read here with awk, not with hwtrace's parser.
dumps()
{
	for f in "$1"/*.ini; do
		awk -v d="$1" '
		    { sub(/\r$/, "") }
		    /^\[/ { if (a != "" && fl != "") print a, l, d "/" fl; a = fl = l = ""; in_d = $0 ~ /^\[dump/; next }
		    in_d && /^address=/ { a = substr($0, 9) }
		    in_d && /^length=/ { l = substr($0, 8) }
		    in_d && /^file=/ { fl = substr($0, 6) }
		    END { if (a != "" && fl != "") print a, l, d "/" fl }' "$f"
	done
}

# code_matches NAME: every block of NAME.db has code, and it is the bytes
# at its address in the snapshot's dumps, gathered across dumps when a
# block runs from one into the next.
code_matches()
{
	dumps "$SNAPS/$1" > dumps.txt
	[ -s dumps.txt ] || atf_fail "$1: no dumps found in the device files"
	"$HWTRACE" query --format tsv "$1.db" sql \
	    "SELECT start_ip, size, CASE WHEN code IS NULL THEN '-' ELSE lower(hex(code)) END FROM blocks" |
	    tail -n +2 > blocks.txt
	nb=0
	while read -r st sz hex; do
		[ "$hex" != - ] ||
		    atf_fail "$1: block at $(printf 0x%x "$st") has no code, the dumps have it"
		want= off=0
		while [ "$off" -lt "$sz" ]; do
			a=$((st + off)) got_piece=
			while read -r da dl df; do
				dl=${dl:-$(stat -c %s "$df")}
				if [ "$a" -ge $((da)) ] && [ "$a" -lt $((da + dl)) ]; then
					n=$((da + dl - a))
					[ "$n" -le $((sz - off)) ] || n=$((sz - off))
					got_piece=$(od -An -tx1 -v -j $((a - da)) -N "$n" "$df" | tr -d ' \n')
					break
				fi
			done < dumps.txt
			[ -n "$got_piece" ] ||
			    atf_fail "$1: block at $(printf 0x%x "$st"): byte $(printf 0x%x "$a") is in no dump"
			want=$want$got_piece
			off=$((off + ${#got_piece} / 2))
		done
		[ "$want" = "$hex" ] ||
		    atf_fail "$1: block at $(printf 0x%x "$st") ($sz bytes): code $hex, the dumps have $want"
		nb=$((nb + 1))
	done < blocks.txt
	echo "$1: the code of all $nb blocks is the dumps' bytes"
}

atf_test_case ete
ete_head()
{
	atf_set descr "ETE as real hardware writes it (ete_ip, trace_file_vmid, tme_simple, ts_marker, ete-wfet): blocks, instructions, A64 and A32 ranges with their last instruction's class, transactional memory, timestamp markers and exceptions at trc_pkt_lister's positions; every block's code is the dumps' bytes, across two dumps too"
	atf_set timeout 300
}
ete_body()
{
	nmemtrans=0 nmarker=0 na32=0
	for n in ete_ip trace_file_vmid tme_simple ts_marker ete-wfet; do
		check $n
		per_id $n
		# Distinct ranges as blocks: start end num_i ISA class.
		grep 'OCSD_GEN_TRC_ELEM_INSTR_RANGE' $n.ppl |
		    sed 's/.*range=0x\([0-9a-f]*\):\[0x\([0-9a-f]*\)\] num_i(\([0-9]*\)) last_sz([0-9]) (ISA=\([A-Z0-9]*\)) [EN] *\(.*\))$/\1 \2 \3 \4 \5/' |
		    awk '{ c = "other" }
			$5 == "iBR" { c = $0 ~ /b\+link/ ? "call-indirect" : $0 ~ /A64:ret|impl ret/ ? "return" : "jump-indirect" }
			$5 == "BR" { c = $0 ~ /b\+link/ ? "call" : $0 ~ /<cond>/ ? "cond" : "jump" }
			{ print $1, $2, $3, $4, c }' | sort -u > want
		[ -s want ] || atf_fail "$n: no ranges in the ppl"
		"$HWTRACE" query --format tsv $n.db sql \
		    "SELECT printf('%x %x %d %s %s', start_ip, start_ip + size, ninsns, CASE mode WHEN 16 THEN 'T32' WHEN 32 THEN 'A32' ELSE 'A64' END, last_class) FROM blocks" |
		    tail -n +2 | sort -u > got
		diff want got > d ||
		    atf_fail "$n: ranges as blocks (start end num_i ISA class) differ from trc_pkt_lister's: $(head -n 6 d | tr '\n' '|')"
		na32=$((na32 + $(grep -c ' A32 ' want)))
		ete_events_ppl $n > want
		"$HWTRACE" query --format tsv $n.db sql \
		    "SELECT kind || ' ' || seq FROM events WHERE kind IN ('transaction-start', 'transaction-commit', 'transaction-fail', 'timestamp-marker', 'exception', 'exception-return') ORDER BY seq, id" |
		    tail -n +2 > got
		diff want got > d ||
		    atf_fail "$n: ETE events (kind, blocks before) differ from trc_pkt_lister's elements: $(head -n 6 d | tr '\n' '|')"
		code_matches $n
		nmemtrans=$((nmemtrans + $(grep -c '^transaction-' want)))
		nmarker=$((nmarker + $(grep -c '^timestamp-marker' want)))
	done
	# Not vacuous: the corpus has each of them.
	[ "$nmemtrans" -ge 2 ] || atf_fail "expected tme_simple's transaction start and commit, got $nmemtrans"
	[ "$nmarker" -ge 200 ] || atf_fail "expected ts_marker's timestamp markers, got $nmarker"
	[ "$na32" -ge 10 ] || atf_fail "expected ete_ip's A32 ranges, got $na32"
	echo "ETE: $nmemtrans transaction events, $nmarker timestamp markers, $na32 distinct A32 ranges, as trc_pkt_lister"
}

atf_init_test_cases()
{
	atf_add_test_case ete
	atf_add_test_case queries
	atf_add_test_case etmv4
	atf_add_test_case etmv3_ptm
	atf_add_test_case t32_lengths
	atf_add_test_case symbols
	atf_add_test_case summary_cycles
	atf_add_test_case memcheck
}
