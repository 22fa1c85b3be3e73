#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Copyright (c) 2026 The hwtrace authors
#
# hwtrace import of perf.data files recorded on real hardware (the shared
# corpus): Linux perf's Intel PT per-CPU recording and simpleperf's ETM
# recordings.  Stream bytes are checked against an independent reader
# in python3 (tests/lib/perf_aux.py) and against perf report -D;
# configuration and record counts against perf report -D, perf evlist and
# perf script; images against readelf.  Broken files are made here from
# the real ones.

. "$(atf_get_srcdir)/../env.sh"
. "$HWTRACE_SRC/tests/lib/hwtr_test.sh"

require_perf()
{
	require_tools perf python3
}

# perf_aux FILE DIR: write each CPU's AUXTRACE payloads, concatenated in
# file order, to DIR/cpuN (an independent reader of PERFILE2: the file
# header's data section, then header.size steps, AUXTRACE payloads after
# their 48-byte record).
perf_aux()
{
	python3 "$HWTRACE_SRC/tests/lib/perf_aux.py" "$1" "$2" ||
	    atf_fail "perf_aux.py could not read $1"
}

# import_perf NAME FILE [OPTIONS]: import_x, and the import says
# nothing on stderr.
import_perf()
{
	import_x "$@"
	! [ -s err ] || atf_fail "import of $2 wrote to stderr: $(oneline err)"
}

# stream_bytes DIR I: stream I's chunks, in offset order.
stream_bytes()
{
	cat $(ls "$1/streams/$2/"*.chunk | sort)
}

# perf_count FILE TYPE: how many TYPE records perf report -D lists.
perf_count()
{
	perf report -D -i "$1" 2>/dev/null |
	    awk -v t="$2" '$1 == t && $2 == "events:" { print $3 }'
}

atf_test_case intel_pt_streams
intel_pt_streams_head()
{
	atf_set descr "Intel PT per-CPU AUX buffers become streams byte for byte (12,240 and 137,728 bytes), as an independent reader and perf report -D see them"
}
intel_pt_streams_body()
{
	require_corpus $PT
	require_perf
	import_perf pt "$HWTRACE_CORPUS/$PT"
	perf_aux "$HWTRACE_CORPUS/$PT" ref
	expect_line pt.info "  stream 0 'cpu 0': intel-pt, pid -1, tid -1, cpu 0, 1 chunk, 12240 bytes"
	expect_line pt.info "  stream 1 'cpu 3': intel-pt, pid -1, tid -1, cpu 3, 1 chunk, 137728 bytes"
	stream_bytes pt.x 0 >s0
	stream_bytes pt.x 1 >s1
	cmp s0 ref/cpu0 || atf_fail "stream 0 differs from CPU 0's AUX data"
	cmp s1 ref/cpu3 || atf_fail "stream 1 differs from CPU 3's AUX data"
	# perf's own view of the sizes.
	perf report -D -i "$HWTRACE_CORPUS/$PT" 2>/dev/null |
	    sed -n 's/.*PERF_RECORD_AUXTRACE size: \(0x[0-9a-f]*\) .* cpu: \([0-9]*\)$/\2 \1/p' >sizes
	while read -r cpu size; do
		[ "$(wc -c <ref/cpu$cpu)" -eq $((size)) ] ||
		    atf_fail "perf says CPU $cpu has $size bytes"
	done <sizes
	[ "$(wc -l <sizes)" -eq 2 ] || atf_fail "perf lists $(wc -l <sizes) AUXTRACE records"
	[ -d pt.x/streams/2 ] && atf_fail "more than the two CPUs' streams"
	true
}

atf_test_case intel_pt_config
intel_pt_config_head()
{
	atf_set descr "AUXTRACE_INFO and HEADER_CPUID give the decoder configuration perf report -D and perf evlist show"
}
intel_pt_config_body()
{
	require_corpus $PT
	require_perf
	f=$HWTRACE_CORPUS/$PT
	import_perf pt "$f"
	perf report -D -i "$f" >dump 2>/dev/null
	num=$(awk '/TSC:CTC numerator/ { print $3 }' dump)
	den=$(awk '/TSC:CTC denominator/ { print $3 }' dump)
	ratio=$(awk '/Max non-turbo ratio/ { print $4 }' dump)
	mtcmask=$(awk '/MTC freq bits/ { print $4 }' dump)
	config=$(perf evlist -v -i "$f" 2>/dev/null | sed -n 's/^intel_pt.*config: \(0x[0-9a-f]*\),.*/\1/p')
	[ -n "$num" ] && [ -n "$config" ] || atf_fail "perf did not show the configuration"
	mtc=$(( (config & mtcmask) >> 14 ))
	psb=$(( (config >> 24) & 0xf ))
	expect_line pt.info "    pt: cpuid-0x15.eax $den, cpuid-0x15.ebx $num, nom-freq $ratio, mtc-freq $mtc, cyc-thresh 0, psb-freq $psb, options 0x1c3"
	cpuid=$(perf report --header-only -i "$f" 2>/dev/null | sed -n 's/^# cpuid : //p')
	fam=$(echo "$cpuid" | cut -d, -f2)
	mod=$(echo "$cpuid" | cut -d, -f3)
	step=$(echo "$cpuid" | cut -d, -f4)
	expect_match pt.info "^cpu: intel family $fam model $mod stepping $step " \
	    "perf's cpuid $cpuid"
	# perf -D prints each twice, "... Time Shift  31" and "Time Shift  31":
	# the first number.
	shift=$(awk '/Time Shift/ && $NF ~ /^[0-9]+$/ { print $NF; exit }' dump)
	mult=$(awk '/Time Muliplier/ && $NF ~ /^[0-9]+$/ { print $NF; exit }' dump)
	expect_match pt.info "^time conversion: tsc-zero 0, ns-zero .*, mult $mult, shift $shift$" \
	    "perf's time conversion"
	expect_match pt.info "^  kernel code is not in the archive" \
	    "the missing kernel image as a caveat"
}

atf_test_case intel_pt_sideband
intel_pt_sideband_head()
{
	atf_set descr "context switches, itrace starts, mmaps, comms and exits: as many as perf report -D counts"
}
intel_pt_sideband_body()
{
	require_corpus $PT
	require_perf
	f=$HWTRACE_CORPUS/$PT
	import_perf pt "$f"
	sw=$(perf script -i "$f" --show-switch-events --itrace= 2>/dev/null | grep -c PERF_RECORD_SWITCH_CPU_WIDE)
	[ "$sw" -eq 152 ] || atf_fail "perf script shows $sw switches, the corpus says 152"
	its=$(perf_count "$f" ITRACE_START)
	expect_line pt.info "  switch: $((sw + its))"
	expect_line pt.info "  comm: $(perf_count "$f" COMM)"
	expect_line pt.info "  proc-exit: $(perf_count "$f" EXIT)"
	expect_line pt.info "  mmap: $(( $(perf_count "$f" MMAP) + $(perf_count "$f" MMAP2) ))"
	expect_line pt.info "  bufpos: $(perf_count "$f" AUX)"
	expect_line pt.info "lost: 0 trace bytes, 0 sideband records"
}

atf_test_case etm
etm_head()
{
	atf_set descr "simpleperf's ETM recording: the 384-byte buffer of CPU 7, each CPU's ETMv4 trace ID, etm_test_loop found by build-id under --symfs, decoded without errors"
}
etm_body()
{
	require_corpus $ETM
	require_perf
	f=$HWTRACE_CORPUS/$ETM
	mkdir -p sym/data/local/tmp
	cp "$HWTRACE_CORPUS/$PD/cs_etm/etm_test_loop" sym/data/local/tmp/
	import_perf etm "$f" --symfs sym
	perf_aux "$f" ref
	expect_line etm.info "  stream 0 'cpu 7': coresight, pid -1, tid -1, cpu 7, 1 chunk, 384 bytes"
	stream_bytes etm.x 0 >s0
	cmp s0 ref/cpu7 || atf_fail "stream 0 differs from CPU 7's AUX data"
	perf report -D -i "$f" 2>/dev/null | awk '/TRCTRACEIDR/ { print $2 }' >ids
	[ "$(wc -l <ids)" -eq 8 ] || atf_fail "perf shows $(wc -l <ids) ETMs"
	expect_line etm.info "    coresight: frame coresight, 8 sources"
	i=0
	while read -r id; do
		expect_line etm.info "    source $i: etmv4, trace id $(printf '0x%02x' $((0x$id))), core unknown"
		i=$((i + 1))
	done <ids
	bid=$(readelf_build_id sym/data/local/tmp/etm_test_loop)
	grep -q "^  bid-$bid sym/*/data/local/tmp/etm_test_loop (file, " etm.info ||
	    atf_fail "etm_test_loop ($bid) not stored: $(grep -A3 ^images etm.info)"
	grep -q "r-x /data/local/tmp/etm_test_loop \[bid-$bid\]$\|--x /data/local/tmp/etm_test_loop \[bid-$bid\]$" etm.info ||
	    atf_fail "etm_test_loop's code mapping does not use it"
	"$HWTRACE" index -o etm.db etm.hwtrace >out 2>err ||
	    atf_fail "index failed: $(cat err)"
	grep -q ", 0 decode errors (0 of 384 bytes not decoded)" err out ||
	    atf_fail "decode errors: $(cat err out)"
}

atf_test_case etm_unformatted
etm_unformatted_head()
{
	atf_set descr "unformatted ETE trace (AUX flag 0x100) is one raw source with its TRCDEVARCH, as perf report -D shows"
}
etm_unformatted_body()
{
	require_corpus $RAW
	require_perf
	f=$HWTRACE_CORPUS/$RAW
	import_perf raw "$f"
	perf_aux "$f" ref
	stream_bytes raw.x 0 >s0
	cmp s0 ref/cpu0 || atf_fail "stream 0 differs from CPU 0's AUX data"
	perf report -D -i "$f" 2>/dev/null | grep -q 'PERF_RECORD_AUX .*flags: 0x100' ||
	    atf_fail "perf does not see the raw flag"
	expect_line raw.info "    coresight: frame none, 1 source"
	da=$(perf report -D -i "$f" 2>/dev/null | awk '/TRCDEVARCH/ { print $2; exit }')
	expect_line raw.info "      TRCDEVARCH = 0x$da"
	grep -q "^    source 0: ete, trace id 0x10, " raw.info ||
	    atf_fail "not ETE with ID 0x10: $(grep source raw.info)"
}

atf_test_case missing_aux
missing_aux_head()
{
	atf_set descr "AUX records announcing data the file does not hold are stated as loss, byte for byte what perf report -D announces"
}
missing_aux_body()
{
	require_corpus $MISS
	require_perf
	f=$HWTRACE_CORPUS/$MISS
	import_perf miss "$f"
	[ "$(perf_count "$f" AUXTRACE)" = "" ] || atf_fail "perf sees AUXTRACE data"
	perf report -D -i "$f" 2>/dev/null |
	    sed -n 's/^\([0-9]*\) .*PERF_RECORD_AUX offset: .* size: \(0x[0-9a-f]*\) flags.*/\1 \2/p' >aux
	total=0
	for cpu in $(cut -d' ' -f1 aux | sort -u); do
		sum=0
		for s in $(awk -v c="$cpu" '$1 == c { print $2 }' aux); do
			sum=$((sum + s))
		done
		grep -q "^  CPU $cpu: AUX records announce $sum bytes of trace, the file holds 0; $sum bytes are lost$" miss.info ||
		    atf_fail "CPU $cpu: $sum bytes not stated lost: $(cat miss.info)"
		total=$((total + sum))
	done
	[ $total -gt 0 ] || atf_fail "no AUX records read from perf"
	expect_line miss.info "lost: $total trace bytes, 0 sideband records"
}


# mutate IN OUT WHAT: a broken copy of perf.data IN (see the cases below).
mutate()
{
	python3 - "$@" <<'EOF2'
import struct, sys
src, dst, what = sys.argv[1], sys.argv[2], sys.argv[3]
b = bytearray(open(src, 'rb').read())
doff, dsize = struct.unpack_from('<QQ', b, 40)
def records():
    off = doff
    while off < doff + dsize:
        typ, misc, size = struct.unpack_from('<IHH', b, off)
        yield off, typ, size
        off += size
        if typ == 71:
            off += struct.unpack_from('<Q', b, off - size + 8)[0]
def first(t):
    return next(o for o, typ, size in records() if typ == t)
if what == 'unknown':		# FINISHED_ROUND records become type 99
    for o, typ, size in list(records()):
        if typ == 68:
            struct.pack_into('<I', b, o, 99)
elif what == 'short-comm':	# a COMM record says 16 bytes
    o = first(3)
    struct.pack_into('<H', b, o + 6, 16)
elif what == 'zero-size':	# a record of size 0
    o = first(3)
    struct.pack_into('<H', b, o + 6, 0)
elif what == 'past-end':	# the data section's last record runs past it
    last = [o for o, typ, size in records()][-1]
    struct.pack_into('<H', b, last + 6, 0xfff8)
elif what == 'attr-size':	# entries of 40 bytes
    struct.pack_into('<Q', b, 16, 40)
elif what == 'attr-ids':	# the first attr's ids lie past the end
    asz, aoff = struct.unpack_from('<QQ', b, 16)
    struct.pack_into('<Q', b, aoff + asz - 16, len(b) + 8)
elif what == 'attr-big':	# the first attr claims 4096 bytes
    aoff = struct.unpack_from('<Q', b, 24)[0]
    struct.pack_into('<I', b, aoff + 4, 4096)
elif what == 'aux-size':	# the first AUXTRACE announces 1 GiB
    o = first(71)
    struct.pack_into('<Q', b, o + 8, 1 << 30)
elif what == 'noname':		# an MMAP2 file name without its NUL
    o = first(10)
    size = struct.unpack_from('<H', b, o + 6)[0]
    for i in range(o + 72, o + size):
        b[i] = 0x41
elif what == 'magic':
    b[0:8] = b'PERFILE3'
else:
    sys.exit('unknown mutation ' + what)
open(dst, 'wb').write(b)
EOF2
}

# import_bad FILE: import FILE; it must fail with status 1 naming the
# file and leave nothing behind, or succeed; never crash.
import_bad()
{
	"$HWTRACE" import "$1" -o bad.hwtrace >out 2>err
	st=$?
	case $st in
	0)	;;
	1)	grep -q "^hwtrace import: '$1': " err ||
		    atf_fail "$1: the error does not name the file: $(cat err)"
		expect_no_output bad.hwtrace ;;
	*)	atf_fail "$1: import exited $st: $(cat err)" ;;
	esac
	return $st
}

# refused HOW WHAT PATTERN: the perf.data $pf mutated by HOW (mutate) is
# refused with an error matching PATTERN (grep); WHAT says what it holds.
refused()
{
	mutate "$pf" m.data "$1"
	import_bad m.data && atf_fail "$2 imported"
	grep -q "$3" err || atf_fail "$2: expected an error matching '$3', got: $(oneline err)"
}

atf_test_case bad_input
bad_input_head()
{
	atf_set descr "truncated files, unknown record types, sizes past the end, records of the wrong length and lying attr sections give a clear error or stated loss"
}
bad_input_body()
{
	require_corpus $PT
	require_tools python3
	pf=$HWTRACE_CORPUS/$PT
	size=$(wc -c <"$pf")

	# Cut anywhere: never a crash; a cut in the header or attrs is an
	# error, a cut in the data section a stated loss.
	for n in 0 7 50 103 200 700 760 5000 11000 30000 100000 170000 $((size - 1)); do
		head -c $n "$pf" >cut.data
		import_bad cut.data && {
			grep -q "^  the data section is [0-9]* bytes longer than the file: the file was cut short$" bad.info 2>/dev/null ||
			    "$HWTRACE" info bad.hwtrace | grep -q "cut short\|feature sections missing" ||
			    atf_fail "cut at $n: imported without a caveat"
			rm -f bad.hwtrace
		}
	done
	head -c 50 "$pf" >cut.data
	import_bad cut.data && atf_fail "a 50-byte file imported"
	expect_first err "hwtrace import: 'cut.data': header size 104 is neither 16 (pipe mode) nor 104 within the 50-byte file"
	head -c 100000 "$pf" >cut.data
	import_bad cut.data || atf_fail "a file cut in its data section is refused: $(cat err)"
	"$HWTRACE" info bad.hwtrace >bad.info
	grep -q "^  AUXTRACE buffer 1 (CPU 3) announces 137728 bytes; the file ends after " bad.info ||
	    atf_fail "the cut AUX buffer is not stated: $(cat bad.info)"
	grep -q "^lost: [1-9][0-9]* trace bytes" bad.info || atf_fail "no lost bytes: $(cat bad.info)"
	rm -f bad.hwtrace

	mutate "$pf" m.data unknown
	import_bad m.data || atf_fail "unknown record types refused: $(cat err)"
	"$HWTRACE" info bad.hwtrace | grep -q "^  4 records of unknown types skipped$" ||
	    atf_fail "the 4 unknown records are not counted"
	rm -f bad.hwtrace

	refused short-comm "a 16-byte COMM record" "COMM record of size 16 is shorter than its fields"
	refused zero-size "a record of size 0" "has size 0, below its 8-byte header"
	refused past-end "a record past the data section" "past the [0-9]* bytes left"
	refused attr-size "40-byte attr entries" "attr section of 512 bytes does not hold whole entries of 40 bytes"
	refused attr-ids "ids past the end" "attr 0: its ids .* lie past the end of the file"
	refused attr-big "an attr larger than its entry" "attr 0 says it has 4096 bytes, more than its 112-byte entry"
	mutate "$pf" m.data aux-size
	import_bad m.data || atf_fail "a lying AUXTRACE size refused: $(cat err)"
	"$HWTRACE" info bad.hwtrace | grep -q "^  AUXTRACE buffer 0 (CPU 0) announces 1073741824 bytes; the file ends after " ||
	    atf_fail "the AUXTRACE size is not stated as loss"
	rm -f bad.hwtrace
	refused noname "an unterminated file name" "MMAP2 file name is not terminated within its record"
	mutate "$pf" m.data magic
	"$HWTRACE" import m.data -o bad.hwtrace >out 2>err && atf_fail "a wrong magic imported"
	expect_no_output bad.hwtrace
}

atf_test_case pipe_mode
pipe_mode_head()
{
	atf_set descr "a pipe-mode perf.data (perf inject -o -) imports like the file it came from"
}
pipe_mode_body()
{
	require_corpus $PT
	require_perf
	f=$HWTRACE_CORPUS/$PT
	timeout 60 perf inject -i "$f" -o - </dev/null >pipe.data 2>inj.err ||
	    atf_skip "perf inject cannot write pipe mode: $(cat inj.err)"
	[ "$(head -c 16 pipe.data | od -An -tx1 | tr -d ' \n')" = 50455246494c45321000000000000000 ] ||
	    atf_fail "perf inject did not write a pipe-mode header"
	import_perf pipe pipe.data
	perf_aux "$f" ref
	stream_bytes pipe.x 0 >s0
	stream_bytes pipe.x 1 >s1
	cmp s0 ref/cpu0 || atf_fail "stream 0 differs from CPU 0's AUX data"
	cmp s1 ref/cpu3 || atf_fail "stream 1 differs from CPU 3's AUX data"
	sw=$(perf script -i "$f" --show-switch-events --itrace= 2>/dev/null | grep -c PERF_RECORD_SWITCH_CPU_WIDE)
	expect_line pipe.info "  switch: $((sw + $(perf_count "$f" ITRACE_START)))"
	expect_line pipe.info "    pt: cpuid-0x15.eax 2, cpuid-0x15.ebx 100, nom-freq 12, mtc-freq 3, cyc-thresh 0, psb-freq 3, options 0x1c3"
}

atf_test_case images
images_head()
{
	atf_set descr "images are found by build-id in a build-id cache made by perf buildid-cache, in a tarball of it as perf archive packs one, and under --symfs; a file with another build-id is not taken"
}
images_body()
{
	require_corpus $ETM
	require_perf
	f=$HWTRACE_CORPUS/$ETM
	bin=$HWTRACE_CORPUS/$PD/cs_etm/etm_test_loop
	bid=$(readelf_build_id "$bin")
	[ -n "$bid" ] || atf_fail "readelf finds no build-id in etm_test_loop"
	mkdir home
	HOME=$PWD/home perf buildid-cache -a "$bin" ||
	    atf_skip "perf buildid-cache cannot add a file"
	import_perf cache "$f" --buildid-dir home/.debug
	grep -q "^  bid-$bid home/.debug/.build-id/" cache.info ||
	    atf_fail "not found in the build-id cache: $(grep -A2 ^images cache.info)"
	# HOME's cache is the default.
	HOME=$PWD/home "$HWTRACE" import "$f" -o home.hwtrace >out 2>err ||
	    atf_fail "$(cat err)"
	"$HWTRACE" info home.hwtrace | grep -q "^  bid-$bid " ||
	    atf_fail "~/.debug is not searched"
	# perf archive: tar cjf of the cache's files, relative to it.
	(cd home/.debug && find . -mindepth 1 \( -type f -o -type l \) |
	    sed 's|^\./||' >../manifest && tar cjf ../../pa.tar.bz2 -T ../manifest) ||
	    atf_fail "cannot make the tarball"
	import_perf tarball "$f" --perf-archive pa.tar.bz2
	grep -q "^  bid-$bid .*/.build-id/0c/" tarball.info ||
	    atf_fail "not found in the tarball: $(grep -A2 ^images tarball.info)"
	ls -d /tmp/hwtrace-perf-archive.* 2>/dev/null | while read -r d; do
		[ -e "$d/.build-id/0c" ] && [ "$(stat -c %Y "$d")" -ge "$(stat -c %Y pa.tar.bz2)" ] &&
		    atf_fail "the unpacked tarball $d was left behind"
	done
	# A file under --symfs with another build-id is not the image.
	mkdir -p other/data/local/tmp
	cp "$HWTRACE_CORPUS/$PD/cs_etm/perf_etm.data" other/data/local/tmp/etm_test_loop
	cp /bin/true other/data/local/tmp/etm_test_loop
	import_perf other "$f" --symfs other
	expect_line other.info "images: 0"
	grep -q "^  8 executable images were not found with their recorded build-id" other.info ||
	    atf_fail "the missing images are not counted: $(grep -A4 ^caveats other.info)"
}

atf_init_test_cases()
{
	atf_add_test_case images
	atf_add_test_case pipe_mode
	atf_add_test_case bad_input
	atf_add_test_case intel_pt_streams
	atf_add_test_case intel_pt_config
	atf_add_test_case intel_pt_sideband
	atf_add_test_case etm
	atf_add_test_case etm_unformatted
	atf_add_test_case missing_aux
}
