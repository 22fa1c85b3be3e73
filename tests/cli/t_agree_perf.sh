#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Copyright (c) 2026 The hwtrace authors
#
# Agreement of hwtrace import and index of perf.data recordings (the
# shared corpus) with what other tools make of the same files.
#
# Streams: each AUXTRACE payload, found the way libipt's perf-read-aux
# script finds it (the offset and size perf script -D prints for each
# PERF_RECORD_AUXTRACE, cut out of the file with dd), equals the stream
# bytes of the archive, unpacked with zstd and tar alone.
#
# CoreSight decode: OpenCSD's own trc_pkt_lister decodes the ETM buffer
# of simpleperf's perf_etm.data from a snapshot directory built here from
# perf's view of the file alone (ETMv4 registers from AUXTRACE_INFO, the
# buffer cut out with dd, etm_test_loop's code where its MMAP2 records put
# it); its instruction ranges give the range counts "start-end:count",
# taken branch counts "from->to:count" and not-taken counts "addr:count",
# in link-time addresses of the binary as simpleperf inject writes them in
# its AutoFDO text; the database of hwtrace index must give the same with
# SQL.  perf's own CoreSight decoder (perf script --itrace=b) must see the
# same taken branches.  simpleperf itself is compared when it is installed.

. "$(atf_get_srcdir)/../env.sh"
. "$HWTRACE_SRC/tests/lib/hwtr_test.sh"

BIN=$PD/cs_etm/etm_test_loop

# read_aux FILE DIR: as perf-read-aux does, cut each AUXTRACE payload out
# of FILE with dd at the offset and size perf script -D prints for it,
# appending to DIR/idxN (N its buffer index); DIR/cpus gets "idx cpu
# size" per record.
read_aux()
{
	mkdir -p "$2"
	: >"$2/cpus"
	perf script --no-itrace -D -i "$1" 2>/dev/null | awk '
	{
		for (i = 3; i <= NF; i++)
			if ($i == "PERF_RECORD_AUXTRACE")
				break
		if (i > NF || $(i - 2) !~ /^0x[0-9a-f]+$/)
			next
		hs = $(i - 1)
		gsub(/[\[\]:]/, "", hs)
		for (j = i + 1; j < NF; j++) {
			if ($j == "size:") size = $(j + 1)
			if ($j == "idx:") idx = $(j + 1)
			if ($j == "cpu:") cpu = $(j + 1)
		}
		print $(i - 2), hs, size, idx, cpu
	}' | while read -r off hs size idx cpu; do
		dd if="$1" of="$2/idx$idx" conv=notrunc oflag=append \
		    iflag=skip_bytes,count_bytes bs=65536 \
		    skip=$((off + hs)) count=$((size)) status=none ||
		    atf_fail "dd failed at offset $off"
		echo "$idx $cpu $((size))" >>"$2/cpus"
	done
}

# unpack_streams ARCHIVE DIR: unpack ARCHIVE with zstd and tar, and write
# each stream's bytes (its chunks in offset order, which must join without
# gaps) to DIR/cpuN, N the cpu of its stream.json; a stream without chunks
# writes nothing.
unpack_streams()
{
	mkdir -p "$2/x"
	zstd -dcq "$1" | tar -xf - -C "$2/x" ||
	    atf_fail "$1 does not unpack with zstd and tar"
	python3 - "$2" <<'EOF' || atf_fail "the archive's streams do not join: $(cat "$2/join.err")"
import glob, json, os, sys
d = sys.argv[1]
err = open(os.path.join(d, 'join.err'), 'w')
for sj in sorted(glob.glob(os.path.join(d, 'x/streams/*/stream.json'))):
    cpu = json.load(open(sj))['cpu']
    at = 0
    for c in sorted(glob.glob(os.path.join(os.path.dirname(sj), '*.chunk'))):
        off = int(os.path.basename(c)[:-6], 16)
        if off != at:
            err.write('%s starts at %d, the stream so far has %d bytes\n' % (c, off, at))
            sys.exit(1)
        data = open(c, 'rb').read()
        open(os.path.join(d, 'cpu%d' % cpu), 'ab').write(data)
        at += len(data)
EOF
}

# same_streams NAME FILE WANT [OPTIONS]: import FILE; its streams must be
# the payloads read_aux finds, one stream per CPU, WANT ("STREAMS BYTES")
# in all.
same_streams()
{
	sn=$1
	sf=$2
	sw=$3
	shift 3
	"$HWTRACE" import "$@" "$sf" -o "$sn.hwtrace" >/dev/null 2>"$sn.err" ||
	    atf_fail "import of $sf failed: $(cat "$sn.err")"
	read_aux "$sf" "$sn.ref"
	unpack_streams "$sn.hwtrace" "$sn.got"
	n=0
	bytes=0
	for idx in $(cut -d' ' -f1 "$sn.ref/cpus" | sort -un); do
		cpu=$(awk -v i="$idx" '$1 == i { print $2 }' "$sn.ref/cpus" | sort -u)
		[ "$(echo "$cpu" | wc -l)" -eq 1 ] ||
		    atf_fail "buffer $idx holds records of several CPUs: $cpu"
		[ -f "$sn.got/cpu$cpu" ] ||
		    atf_fail "$sf: no stream of CPU $cpu (buffer $idx) in the archive"
		cmp "$sn.ref/idx$idx" "$sn.got/cpu$cpu" ||
		    atf_fail "$sf: CPU $cpu's stream differs from buffer $idx as perf-read-aux cuts it"
		n=$((n + 1))
		bytes=$((bytes + $(wc -c <"$sn.ref/idx$idx")))
	done
	got=$(ls "$sn.got" | grep -c '^cpu')
	[ "$got" -eq "$n" ] ||
	    atf_fail "$sf: the archive has $got streams with bytes, perf shows $n buffers"
	[ "$n $bytes" = "$sw" ] ||
	    atf_fail "$sf: expected '$sw' (streams, bytes in all), got '$n $bytes'"
}

atf_test_case pt_streams
pt_streams_head()
{
	atf_set descr "Intel PT: the two CPUs' streams are byte for byte the AUXTRACE payloads perf-read-aux's way (perf script -D, dd) cuts out (2 streams, 149,968 bytes)"
}
pt_streams_body()
{
	require_corpus $PT
	require_tools perf zstd python3
	same_streams pt "$HWTRACE_CORPUS/$PT" "2 149968"
}

atf_test_case etm_streams
etm_streams_head()
{
	atf_set descr "CoreSight: simpleperf's formatted and unformatted ETM buffers are the payloads perf-read-aux's way cuts out; a file without AUXTRACE payloads has no stream bytes"
}
etm_streams_body()
{
	require_corpus $ETM
	require_tools perf zstd python3
	same_streams etm "$HWTRACE_CORPUS/$ETM" "1 384"
	same_streams raw "$HWTRACE_CORPUS/$RAW" "1 80"
	same_streams miss "$HWTRACE_CORPUS/$MISS" "0 0"
	! ls miss.got/x/streams/*/*.chunk >/dev/null 2>&1 ||
	    atf_fail "stream bytes in an archive of a file without AUXTRACE payloads"
}

# etm_setup: import and index perf_etm.data with etm_test_loop under
# --symfs (etm.hwtrace, etm.db); perf report -D's output in dump.
etm_setup()
{
	require_corpus $ETM
	require_corpus $BIN
	require_tools perf
	mkdir -p sym/data/local/tmp
	cp "$HWTRACE_CORPUS/$BIN" sym/data/local/tmp/
	"$HWTRACE" import --symfs sym "$HWTRACE_CORPUS/$ETM" -o etm.hwtrace \
	    >/dev/null 2>err || atf_fail "import failed: $(cat err)"
	"$HWTRACE" index -q -o etm.db etm.hwtrace 2>err ||
	    atf_fail "index failed: $(cat err)"
	perf report -D -i "$HWTRACE_CORPUS/$ETM" >dump 2>/dev/null
	grep -q PERF_RECORD_AUXTRACE_INFO dump || atf_fail "perf report -D shows no AUXTRACE_INFO"
}

# sql QUERY: the rows of QUERY over etm.db, tab-separated, no header.
sql()
{
	"$HWTRACE" query --format tsv etm.db sql "$1" | tail -n +2
}

# db_profile: the ranges, taken and not-taken branches of etm.db in
# etm_test_loop, in link-time addresses, as "R start-end:count",
# "B from->to:count" and "N addr:count" lines, sorted.
db_profile()
{
	{
		sql "SELECT printf('R %x-%x:%d', b.image_addr, b.image_addr + b.last_ip - b.start_ip, sum(c.count)) FROM blocks b JOIN block_counts c ON c.block = b.id JOIN images i ON i.id = b.image WHERE i.path LIKE '%etm_test_loop' GROUP BY b.image_addr, b.last_ip"
		sql "SELECT printf('B %x->%x:%d', f.image_addr + r.from_ip - f.start_ip, t.image_addr, sum(r.count)) FROM branches r JOIN blocks f ON f.id = r.from_block JOIN blocks t ON t.id = r.to_block JOIN images i ON i.id = f.image WHERE i.path LIKE '%etm_test_loop' AND t.image = f.image AND r.kind NOT IN ('cond-not-taken', 'async', 'fallthrough') GROUP BY f.image_addr + r.from_ip - f.start_ip, t.image_addr"
		sql "SELECT printf('N %x:%d', f.image_addr + r.from_ip - f.start_ip, sum(r.count)) FROM branches r JOIN blocks f ON f.id = r.from_block JOIN images i ON i.id = f.image WHERE i.path LIKE '%etm_test_loop' AND r.kind = 'cond-not-taken' GROUP BY f.image_addr + r.from_ip - f.start_ip"
	} | sort
}

# code_maps BINARY: "start size pgoff" of each executable mapping of
# BINARY (by its base name) that perf report -D shows in dump.
code_maps()
{
	sed -n "s/^.*PERF_RECORD_MMAP2 [0-9]*\/[0-9]*: \[\(0x[0-9a-f]*\)(\(0x[0-9a-f]*\)) @ \(0x[0-9a-f]*\|0\) .*\]: [-r][-w]x[ps] .*\/$(basename "$1")\$/\1 \2 \3/p" dump | sort -u
}

# make_snapshot DIR: an OpenCSD snapshot directory of perf_etm.data made
# from perf's output alone: one core and one ETMv4 device per CPU of
# AUXTRACE_INFO (the registers perf prints), each CPU's AUXTRACE payloads
# as a formatted buffer CPU_N (dd, as perf-read-aux cuts them), and
# etm_test_loop's executable mappings as memory dumps of the file.  The
# CPUs with trace go to DIR.cpus.
make_snapshot()
{
	d=$1
	mkdir -p "$d"
	read_aux "$HWTRACE_CORPUS/$ETM" "$d/aux"
	awk -v d="$d" '
	/^\tCPU\t/ { cpu = $2; f = d "/device_" cpu ".ini"
		printf "[device]\nname=ETM_%s\nclass=trace_source\ntype=ETM4\n\n[regs]\n", cpu > f }
	/^\tTRC[A-Z0-9]*\t/ && cpu != "" { printf "%s=0x%s\n", $1, $2 > f }
	' dump
	ls "$d"/device_*.ini >/dev/null 2>&1 || atf_fail "no ETM registers in perf's AUXTRACE_INFO"
	cp "$HWTRACE_CORPUS/$BIN" "$d/etm_test_loop"
	code_maps "$HWTRACE_CORPUS/$BIN" >maps
	[ -s maps ] || atf_fail "perf shows no executable mapping of etm_test_loop"
	n=0
	{
		printf '[snapshot]\nversion=1.0\n\n[device_list]\n'
		for e in "$d"/device_*.ini; do
			c=$(basename "$e" .ini)
			c=${c#device_}
			printf 'device%d=cpu_%s.ini\ndevice%d=device_%s.ini\n' \
			    $n "$c" $((n + 1)) "$c"
			n=$((n + 2))
			{
				printf '[device]\nname=cpu_%s\nclass=core\n' "$c"
				printf 'type=Cortex-A53\n\n[regs]\nPC(size:64)=0\n'
				if [ "$c" = 0 ]; then
					k=0
					while read -r a l o; do
						k=$((k + 1))
						printf '\n[dump%d]\nfile=etm_test_loop\naddress=%s\nlength=%s\noffset=%s\n' \
						    $k "$a" "$l" "$o"
					done <maps
				fi
			} >"$d/cpu_$c.ini"
		done
		printf '\n[trace]\nmetadata=trace.ini\n'
	} >"$d/snapshot.ini"
	cpus=$(cut -d' ' -f2 "$d/aux/cpus" | sort -un)
	{
		printf '[trace_buffers]\nbuffers=%s\n' "$(for c in $cpus; do printf 'buffer%s\n' "$c"; done | paste -sd, -)"
		for c in $cpus; do
			idx=$(awk -v c="$c" '$2 == c { print $1; exit }' "$d/aux/cpus")
			printf '\n[buffer%s]\nname=CPU_%s\nfile=aux/idx%s\nformat=coresight\n' "$c" "$c" "$idx"
		done
		printf '\n[source_buffers]\n'
		for c in $cpus; do
			for e in "$d"/device_*.ini; do
				printf '%s=CPU_%s\n' "$(sed -n 's/^name=//p' "$e")" "$c"
			done
		done
		printf '\n[core_trace_sources]\n'
		for e in "$d"/device_*.ini; do
			c=$(basename "$e" .ini)
			printf 'cpu_%s=ETM_%s\n' "${c#device_}" "${c#device_}"
		done
	} >"$d/trace.ini"
	echo "$cpus" >"$d.cpus"
}

# ppl_profile PPL: the same lines as db_profile from trc_pkt_lister's
# elements: each OCSD_GEN_TRC_ELEM_INSTR_RANGE is a range from its first
# to its last instruction; one that ends in an executed branch (E) and is
# followed, on its trace ID, by another range with nothing between but
# context and timing elements is a taken branch to that range's start;
# one that ends in a branch not executed (N) counts not-taken.  Run-time
# addresses become link-time ones with the mappings (maps) and readelf's
# PT_LOAD segments.
ppl_profile()
{
	readelf -lW "$HWTRACE_CORPUS/$BIN" |
	    awk '$1 == "LOAD" { print $2, $3, $5 }' >loads
	awk '
	function hex(s,   i, c, v) {
		v = 0
		s = tolower(s)
		sub(/^0x/, "", s)
		for (i = 1; i <= length(s); i++) {
			c = index("0123456789abcdef", substr(s, i, 1)) - 1
			v = v * 16 + c
		}
		return v
	}
	# Link-time address of run-time address a, or -1.
	function link(a,   i, off) {
		for (i = 0; i < nm; i++)
			if (a >= ms[i] && a < ms[i] + ml[i]) {
				off = a - ms[i] + mo[i]
				for (j = 0; j < nl; j++)
					if (off >= lo[j] && off < lo[j] + lf[j])
						return off - lo[j] + lv[j]
			}
		return -1
	}
	BEGIN { nm = 0; nl = 0 }
	FILENAME == "maps" { ms[nm] = hex($1); ml[nm] = hex($2); mo[nm] = hex($3); nm++; next }
	FILENAME == "loads" { lo[nl] = hex($1); lv[nl] = hex($2); lf[nl] = hex($3); nl++; next }
	/OCSD_GEN_TRC_ELEM_/ {
		id = $2
		if ($0 !~ /OCSD_GEN_TRC_ELEM_INSTR_RANGE\(/) {
			if ($0 !~ /ELEM_(PE_CONTEXT|TIMESTAMP|CYCLE_COUNT)\(/)
				pend[id] = -1
			next
		}
		match($0, /range=0x[0-9a-f]+:\[0x[0-9a-f]+\]/)
		r = substr($0, RSTART + 6, RLENGTH - 6)
		split(r, p, ":")
		st = hex(p[1])
		en = hex(substr(p[2], 2, length(p[2]) - 2))
		match($0, /last_sz\([0-9]+\)/)
		sz = substr($0, RSTART + 8, RLENGTH - 9) + 0
		exec = $0 ~ /\) E / ? 1 : 0
		br = $0 ~ / (BR|iBR) / ? 1 : 0
		s = link(st)
		e = link(en - sz)
		if (id in pend && pend[id] >= 0 && s >= 0)
			B[sprintf("%x->%x", pend[id], s)]++
		pend[id] = -1
		if (s < 0 || e < 0)
			next
		R[sprintf("%x-%x", s, e)]++
		if (br && exec)
			pend[id] = e
		else if (br)
			N[sprintf("%x", e)]++
	}
	END {
		for (k in R) print "R " k ":" R[k]
		for (k in B) print "B " k ":" B[k]
		for (k in N) print "N " k ":" N[k]
	}' maps loads "$1" | sort
}

atf_test_case etm_ranges_opencsd
etm_ranges_opencsd_head()
{
	atf_set descr "perf_etm.data with etm_test_loop: the executed ranges and the taken and not-taken branch counts of the database equal those of OpenCSD's trc_pkt_lister on a snapshot built from perf's output (208 ranges, 944 instructions)"
}
etm_ranges_opencsd_body()
{
	require_tools trc_pkt_lister readelf
	etm_setup
	make_snapshot snap
	cpus=$(cat snap.cpus)
	: >ppl
	for c in $cpus; do
		(cd snap && trc_pkt_lister -ss_dir . -decode -src_name "CPU_$c" \
		    -logfilename "../ppl.$c" >/dev/null 2>&1) ||
		    atf_fail "trc_pkt_lister failed on CPU $c"
		cat "ppl.$c" >>ppl
	done
	n=$(grep -c 'OCSD_GEN_TRC_ELEM_INSTR_RANGE' ppl)
	i=$(grep -o 'num_i([0-9]*)' ppl | tr -dc '0-9\n' | awk '{ s += $1 } END { print s + 0 }')
	[ "$n $i" = "208 944" ] ||
	    atf_fail "trc_pkt_lister: expected 208 ranges of 944 instructions, got $n ranges of $i"
	ppl_profile ppl >want
	db_profile >got
	[ "$(grep -c '^R' want) $(grep -c '^B' want) $(grep -c '^N' want)" = "10 7 1" ] ||
	    atf_fail "expected 10 distinct ranges, 7 taken and 1 not-taken branch from trc_pkt_lister: $(tr "\n" " " <want)"
	diff want got >d || atf_fail "the database differs from trc_pkt_lister (< trc_pkt_lister, > database): $(tr "\n" " " <d)"
	# The counts add up to the ranges and the instructions.
	sum=$(sed -n 's/^R .*:\([0-9]*\)$/\1/p' got | awk '{ s += $1 } END { print s }')
	[ "$sum" -eq 208 ] || atf_fail "the range counts add up to $sum, not 208"
}

atf_test_case etm_branches_perf
etm_branches_perf_head()
{
	atf_set descr "perf_etm.data: the taken branches of the database are those perf's own CoreSight decoder reports (perf script --itrace=b), from and to, with their counts"
}
etm_branches_perf_body()
{
	etm_setup
	perf script -i "$HWTRACE_CORPUS/$ETM" --symfs sym --itrace=b \
	    -F ip,addr 2>/dev/null | awk 'NF == 3 && $1 != "0" && $3 != "0" { print $1 "->" $3 }' |
	    sort | uniq -c | awk '{ print $2 ":" $1 }' | sort >want
	[ -s want ] || atf_skip "this perf cannot decode CoreSight ETM (no OpenCSD)"
	sql "SELECT printf('%x->%x:%d', from_ip, to_ip, sum(count)) FROM branches WHERE kind NOT IN ('cond-not-taken', 'async', 'fallthrough') GROUP BY from_ip, to_ip" |
	    sort >got
	diff want got >d || atf_fail "the database differs from perf script (< perf, > database): $(tr "\n" " " <d)"
	total=$(sed 's/.*://' got | awk '{ s += $1 } END { print s }')
	[ "$total" -eq 205 ] || atf_fail "expected 205 taken branches, got $total"
}

atf_test_case etm_simpleperf
etm_simpleperf_head()
{
	atf_set descr "perf_etm.data: the ranges and branch counts simpleperf inject writes in AutoFDO text are the database's (needs simpleperf, which Debian does not package)"
}
etm_simpleperf_body()
{
	require_tools simpleperf
	etm_setup
	simpleperf inject -i "$HWTRACE_CORPUS/$ETM" --symdir sym/data/local/tmp \
	    --binary etm_test_loop --output autofdo -o sp.txt >sp.out 2>&1 ||
	    atf_fail "simpleperf inject failed: $(cat sp.out)"
	# simpleperf writes addresses less the first PT_LOAD's vaddr and an
	# indirect branch's target as 0; the database's the same way.
	base=$(readelf -lW "$HWTRACE_CORPUS/$BIN" | awk '$1 == "LOAD" { print $3; exit }')
	# The text: a count of range lines and the lines, a count of address
	# lines and the lines, a count of branch lines and the lines, then
	# "//" comments naming the binary.
	awk '/^\/\// || NF == 0 { next }
	    st == 0 || st == 2 || st == 4 { n = $1; st++; if (n == 0) st = (st + 1) % 6; next }
	    st == 1 { print "R " $0 } st == 5 { print "B " $0 }
	    { if (--n == 0) st = (st + 1) % 6 }' sp.txt | sort >want
	[ -s want ] || atf_fail "no ranges in simpleperf's output: $(cat sp.txt)"
	{
		sql "SELECT printf('R %x-%x:%d', b.image_addr - $((base)), b.image_addr + b.last_ip - b.start_ip - $((base)), sum(c.count)) FROM blocks b JOIN block_counts c ON c.block = b.id JOIN images i ON i.id = b.image WHERE i.path LIKE '%etm_test_loop' GROUP BY b.image_addr, b.last_ip"
		sql "SELECT printf('B %x->%x:%d', f.image_addr + r.from_ip - f.start_ip - $((base)), t.image_addr - $((base)), sum(r.count)) FROM branches r JOIN blocks f ON f.id = r.from_block JOIN blocks t ON t.id = r.to_block JOIN images i ON i.id = f.image WHERE i.path LIKE '%etm_test_loop' AND t.image = f.image AND r.kind IN ('cond-taken', 'jump', 'call') GROUP BY f.image_addr + r.from_ip - f.start_ip, t.image_addr"
		sql "SELECT printf('B %x->0:%d', b.image_addr + b.last_ip - b.start_ip - $((base)), sum(c.count)) FROM blocks b JOIN block_counts c ON c.block = b.id JOIN images i ON i.id = b.image WHERE i.path LIKE '%etm_test_loop' AND b.last_class IN ('jump-indirect', 'call-indirect', 'return') GROUP BY b.image_addr + b.last_ip - b.start_ip"
	} | sort >got
	diff want got >d || atf_fail "the database differs from simpleperf (< simpleperf, > database): $(tr "\n" " " <d)"
}

atf_init_test_cases()
{
	atf_add_test_case pt_streams
	atf_add_test_case etm_streams
	atf_add_test_case etm_ranges_opencsd
	atf_add_test_case etm_branches_perf
	atf_add_test_case etm_simpleperf
}
