#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Copyright (c) 2026 The hwtrace authors
#
# hwtrace import of ARM CoreSight trace snapshots (OpenCSD's own test
# snapshots in the shared corpus): the archive's streams are byte for byte
# the trace buffers trace.ini names, the sources' trace IDs and protocols
# are those of the device files (read here with awk, not with hwtrace's
# parser), the memory dumps are the images and mappings the device files
# describe; broken snapshots are refused naming the file and key.

. "$(atf_get_srcdir)/../env.sh"
. "$HWTRACE_SRC/tests/lib/hwtr_test.sh"

SNAPS=opencsd/snapshots

# ini_get FILE SECTION KEY: the value, as a reader of the format sees it.
ini_get()
{
	awk -v s="[$2]" -v k="$3" '
	    { sub(/\r$/, "") }
	    /^\[/ { cur = $0; next }
	    cur == s && index($0, k "=") == 1 { print substr($0, length(k) + 2); exit }
	' "$1"
}

# import_snap NAME: import snapshot NAME as NAME.hwtrace and unpack it in
# NAME.x (the archive is a tar of zstd frames).
import_snap()
{
	"$HWTRACE" import "$HWTRACE_CORPUS/$SNAPS/$1" -o "$1.hwtrace" >out 2>err ||
	    atf_fail "import of $1 failed: $(cat err)"
	! [ -s err ] || atf_fail "import of $1 wrote to stderr: $(cat err)"
	mkdir "$1.x" && tar -xf "$1.hwtrace" -C "$1.x" ||
	    atf_fail "$1.hwtrace does not unpack with tar"
	"$HWTRACE" info "$1.hwtrace" >"$1.info" 2>&1 ||
	    atf_fail "hwtrace info $1.hwtrace failed: $(cat "$1.info")"
}

atf_test_case corpus
corpus_head()
{
	atf_set descr "every snapshot of the corpus imports, ETE ones included; streams equal trace.ini's buffers byte for byte, in order, an empty buffer an empty stream"
}
corpus_body()
{
	require_corpus $SNAPS
	n=0 empty=0
	for d in "$HWTRACE_CORPUS/$SNAPS"/*/; do
		name=$(basename "$d")
		import_snap "$name"
		ti=$d/$(ini_get "$d/snapshot.ini" trace metadata)
		bufs=$(ini_get "$ti" trace_buffers buffers | tr ',' ' ')
		i=0
		for b in $bufs; do
			f=$(ini_get "$ti" "$b" file)
			bn=$(ini_get "$ti" "$b" name)
			# An empty buffer (ete-wfet's second) is an empty
			# stream, as trc_pkt_lister decodes it.
			if [ -s "$d/$f" ]; then
				cat "$name.x/streams/$i/"*.chunk | cmp - "$d/$f" ||
				    atf_fail "$name: stream $i differs from buffer $b ($f)"
			else
				! ls "$name.x/streams/$i/"*.chunk >/dev/null 2>&1 ||
				    atf_fail "$name: stream $i has chunks, buffer $b ($f) is empty"
				grep -q "^  stream $i 'buffer $bn': .* 0 bytes$" "$name.info" ||
				    atf_fail "$name: stream $i is not empty: $(grep "stream $i" "$name.info")"
				"$HWTRACE" verify "$name.hwtrace" >/dev/null 2>err ||
				    atf_fail "$name: verify refuses the empty stream: $(cat err)"
				empty=$((empty + 1))
			fi
			grep -q "^  stream $i 'buffer $bn': coresight," "$name.info" ||
			    atf_fail "$name: stream $i is not 'buffer $bn': $(grep stream "$name.info")"
			i=$((i + 1))
		done
		[ -d "$name.x/streams/$i" ] &&
		    atf_fail "$name: more streams than the $i buffers of trace.ini"
		echo "$name: $i stream(s) ok"
		n=$((n + 1))
	done
	[ "$n" -ge 10 ] || atf_fail "expected the corpus's 21 snapshots, found $n"
	if [ -d "$HWTRACE_CORPUS/$SNAPS/ete-wfet" ]; then
		[ "$empty" -ge 1 ] || atf_fail "ete-wfet's empty buffer was not seen"
	fi
}

atf_test_case sources
sources_head()
{
	atf_set descr "protocols, trace IDs, cores and frame formats are those of the snapshot files"
}
sources_body()
{
	require_corpus $SNAPS/juno_r1_1
	import_snap juno_r1_1
	for i in 0 1 2 3 4 5; do
		dev=$HWTRACE_CORPUS/$SNAPS/juno_r1_1/device_$((i + 6)).ini
		id=$(ini_get "$dev" regs 'TRCTRACEIDR(0x010)')
		id=$(printf '0x%02x' "$id")
		core=$(ini_get "$HWTRACE_CORPUS/$SNAPS/juno_r1_1/cpu_$i.ini" device type)
		expect_line juno_r1_1.info "    source $i: etmv4, trace id $id, core $core"
	done
	expect_line juno_r1_1.info "    coresight: frame coresight, 6 sources"
	# STM: the trace ID is STMTCSR bits 22:16.
	v=$(ini_get "$HWTRACE_CORPUS/$SNAPS/juno_r1_1/device_12.ini" regs 'STMTCSR(0x3A0)')
	expect_line juno_r1_1.info "    source 0: stm, trace id $(printf '0x%02x' $(( (v >> 16) & 0x7f ))), core unknown"
	expect_line juno_r1_1.info "      TRCIDR0 = 0x28000ea1"

	import_snap TC2
	expect_line TC2.info "    source 0: etmv3, trace id 0x10, core Cortex-A7"
	expect_line TC2.info "    source 3: ptm, trace id 0x13, core Cortex-A15"
	expect_line TC2.info "  trace source 'ITM_0' (ITM) not imported: no decoder for it"

	import_snap a55-test-tpiu
	expect_line a55-test-tpiu.info "    coresight: frame dstream, 1 source"
	grep -q "^  .*mem_Cortex-A57_0.bin': missing: memory at 0xfffeb448 not imported" a55-test-tpiu.info ||
	    atf_fail "a55-test-tpiu: the missing dump is not a caveat: $(cat a55-test-tpiu.info)"

	# source_data: unformatted, and trace ID 0 is allowed there.
	import_snap init-short-addr
	expect_line init-short-addr.info "    coresight: frame none, 1 source"
	expect_line init-short-addr.info "    source 0: etmv4, trace id 0x00, core Cortex-A57"
}

atf_test_case dumps
dumps_head()
{
	atf_set descr "memory dumps become images mapped (pid -1) at their address, length and offset, spaces kept in aux/coresight-dumps"
}
dumps_body()
{
	require_corpus $SNAPS/test-file-mem-offsets
	s=$HWTRACE_CORPUS/$SNAPS/test-file-mem-offsets
	import_snap test-file-mem-offsets
	grep -q "^  pid -1: 0x7f8e5a0000-0x7f8e5adb40 pgoff 0x11000 r-x $s/ld-2.21.bin " test-file-mem-offsets.info ||
	    atf_fail "expected ld-2.21.bin mapped at 0x7f8e5a0000 with offset 0x11000: $(grep pid test-file-mem-offsets.info)"
	grep -q "^  pid -1: 0x400000-0x4069f8 pgoff 0x0 r-x $s/uname.bin " test-file-mem-offsets.info ||
	    atf_fail "expected uname.bin at 0x400000, length 0x69f8"
	for f in uname ld-2.21 libc-2.21 vdso; do
		h=$(sha256sum "$s/$f.bin" | cut -d' ' -f1)
		found=0
		for img in test-file-mem-offsets.x/images/*; do
			case $img in *.json) continue ;; esac
			[ "$(sha256sum "$img" | cut -d' ' -f1)" = "$h" ] && found=1
		done
		[ $found = 1 ] || atf_fail "$f.bin is not among the images"
	done
	import_snap juno_r1_1
	expect_line juno_r1_1.x/aux/coresight-dumps "0xffffffc000081000 0x50000 - $HWTRACE_CORPUS/$SNAPS/juno_r1_1/kernel_dump.bin"
	import_snap a57_single_step
	grep -q "^0x[0-9a-f]* 0x[0-9a-f]* EL2 " a57_single_step.x/aux/coresight-dumps ||
	    atf_fail "the EL2 space is not recorded: $(cat a57_single_step.x/aux/coresight-dumps)"
}

# refuse DIR MESSAGE: importing DIR fails with MESSAGE (the whole first
# line) and leaves nothing behind.
refuse()
{
	run_status 1 "$HWTRACE" import "$1" -o o.hwtrace
	expect_first err "hwtrace import: $2"
	expect_no_output o.hwtrace
}

atf_test_case broken
broken_head()
{
	atf_set descr "missing keys or files, unknown protocols, nonsense registers and truncated buffers are refused naming the file and key"
}
broken_body()
{
	require_corpus $SNAPS/TC2
	src=$HWTRACE_CORPUS/$SNAPS/TC2
	fresh() { rm -rf s; cp -r "$src" s; }

	fresh; sed -i '/^metadata=/d' s/snapshot.ini
	refuse s "'s/snapshot.ini': [trace] metadata: missing"
	fresh; rm s/cstrace.bin
	refuse s "'s/trace.ini': [buffer0] file: cannot open 's/cstrace.bin': No such file or directory"
	fresh; rm s/device_8.ini
	refuse s "'s/snapshot.ini': [device_list] device8: cannot open 's/device_8.ini': No such file or directory"
	fresh; sed -i 's/^type=PTM1.1/type=XTM9/' s/device_8.ini
	refuse s "'s/device_8.ini': [device] type: unknown trace protocol 'XTM9' (ETM3.x, PTM1.x, PFT1.x, ETM4.x, ETE, STM)"
	fresh; sed -i '/^ETMIDR/d' s/device_8.ini
	refuse s "'s/device_8.ini': [regs] ETMIDR: missing (a PTM1.1 source needs it)"
	fresh; sed -i 's/^\(ETMTRACEIDR(0x080)\)=.*/\1=0x0/' s/device_8.ini
	refuse s "'s/device_8.ini': [regs] ETMTRACEIDR: trace ID 0x0 is reserved or out of range (0x01-0x6f)"
	fresh; sed -i 's/^\(ETMTRACEIDR(0x080)\)=.*/\1=0x10/' s/device_8.ini
	refuse s "'s/device_8.ini': [regs]: trace ID 0x10 is also the ID of 'ETM_0' in buffer 'ETB_0'"
	fresh; sed -i 's/^\(ETMCR(0x000)\)=.*/\1=0x1000000000/' s/device_8.ini
	refuse s "'s/device_8.ini': [regs] ETMCR: 0x1000000000 does not fit the 32-bit register"
	fresh; sed -i 's/^\(ETMCR(0x000)\)=.*/\1=banana/' s/device_8.ini
	refuse s "'s/device_8.ini' line 7: [regs] ETMCR: malformed value 'banana'"
	fresh; truncate -s 32760 s/cstrace.bin
	refuse s "'s/trace.ini': [buffer0] file 's/cstrace.bin': 32760 bytes: truncated (not a whole number of 16-byte frames)"
	fresh; sed -i 's/^format=coresight/format=mystery/' s/trace.ini
	refuse s "'s/trace.ini': [buffer0] format: unknown 'mystery' (coresight, source_data, dstream_coresight, tpiu)"
	fresh; sed -i 's/^address=.*/address=0xfffffffffffff000/' s/cpu_0.ini
	refuse s "'s/cpu_0.ini': [dump] address 0xfffffffffffff000 plus length wraps around"
	fresh; sed -i 's/^\[regs\]/regs]/' s/device_8.ini
	refuse s "'s/device_8.ini' line 6: not 'key=value' or '[section]': 'regs]'"
	fresh; sed -i 's/^PTM_0=ETB_0/PTM_0=ETB_9/' s/trace.ini
	refuse s "'s/trace.ini': [source_buffers] PTM_0: no buffer named 'ETB_9'"
}

atf_test_case ete_arch
ete_arch_head()
{
	atf_set descr "ETE is taken by TRCDEVARCH (TRCIDR1 says architecture 15, as real ETE does); a TRCIDR1 or TRCDEVARCH that says another architecture is refused"
}
ete_arch_body()
{
	require_corpus $SNAPS/ete_ip
	src=$HWTRACE_CORPUS/$SNAPS/ete_ip
	# Real ETE, as the corpus has it: TRCIDR1 bits 11:8 are 0xf.
	idr1=$(ini_get "$src/ETE_0_s1.ini" regs TRCIDR1)
	[ $(( (idr1 >> 8) & 0xf )) = 15 ] ||
	    atf_fail "ete_ip's TRCIDR1 $idr1 does not say 15: not the real ETE case"
	import_snap ete_ip
	id=$(printf '0x%02x' "$(ini_get "$src/ETE_0_s1.ini" regs TRCTRACEIDR)")
	expect_line ete_ip.info "    source 0: ete, trace id $id, core $(ini_get "$src/cpu_0.ini" device type)"
	expect_line ete_ip.info "      TRCDEVARCH = $(ini_get "$src/ETE_0_s1.ini" regs TRCDEVARCH)"

	fresh() { rm -rf s; cp -r "$src" s; chmod -R u+w s; }
	fresh; sed -i 's/^TRCDEVARCH=.*/TRCDEVARCH=0x47704a13/' s/ETE_0_s1.ini
	refuse s "'s/ETE_0_s1.ini': [regs] TRCDEVARCH: 0x47704a13 says architecture version 4, not 5 (ETE, as type 'ETE' says)"
	fresh; sed -i 's/^TRCDEVARCH=.*/TRCDEVARCH=0x47705a14/' s/ETE_0_s1.ini
	refuse s "'s/ETE_0_s1.ini': [regs] TRCDEVARCH: 0x47705a14 does not describe an Arm trace unit (architect 0x23b, present 1, part 0xa14; expected 0x23b, 1, 0xa13)"
	fresh; sed -i 's/^TRCDEVARCH=.*/TRCDEVARCH=0x47605a13/' s/ETE_0_s1.ini
	refuse s "'s/ETE_0_s1.ini': [regs] TRCDEVARCH: 0x47605a13 does not describe an Arm trace unit (architect 0x23b, present 0, part 0xa13; expected 0x23b, 1, 0xa13)"
	fresh; sed -i 's/^TRCIDR1=.*/TRCIDR1=0x4100f3f0/' s/ETE_0_s1.ini
	refuse s "'s/ETE_0_s1.ini': [regs] TRCIDR1: 0x4100f3f0 says architecture 3, not ETE (5, or 15 and TRCDEVARCH)"
	fresh; sed -i '/^TRCDEVARCH=/d' s/ETE_0_s1.ini
	refuse s "'s/ETE_0_s1.ini': [regs] TRCDEVARCH: missing (a ETE source needs it)"
	# TRCIDR1 may say ETE's version itself, as long as TRCDEVARCH agrees.
	fresh; sed -i 's/^TRCIDR1=.*/TRCIDR1=0x4100f5f0/' s/ETE_0_s1.ini
	run_status 0 "$HWTRACE" import s -o s.hwtrace

	# ETMv4: architecture 4 in TRCIDR1, or 15 with a TRCDEVARCH of ETMv4.
	require_corpus $SNAPS/juno_r1_1
	rm -rf j; cp -r "$HWTRACE_CORPUS/$SNAPS/juno_r1_1" j; chmod -R u+w j
	sed -i 's/^\(TRCIDR1(0x079)\)=0x4100F403$/\1=0x4100FF03/' j/device_6.ini
	grep -q '^TRCIDR1(0x079)=0x4100FF03$' j/device_6.ini ||
	    atf_fail "cannot make the ETMv4 copy that says 15"
	refuse j "'j/device_6.ini': [regs] TRCIDR1: 0x4100ff03 says architecture 15 (see TRCDEVARCH) but TRCDEVARCH is missing"
	sed -i 's/^\[regs\]$/[regs]\nTRCDEVARCH(0xFBC)=0x47704A13/' j/device_6.ini
	run_status 0 "$HWTRACE" import j -o j.hwtrace
	sed -i 's/^TRCDEVARCH(0xFBC)=.*/TRCDEVARCH(0xFBC)=0x47705A13/' j/device_6.ini
	refuse j "'j/device_6.ini': [regs] TRCDEVARCH: 0x47705a13 says architecture version 5, not 4 (ETMv4, as type 'ETM4' says)"
}

atf_init_test_cases()
{
	atf_add_test_case ete_arch
	atf_add_test_case corpus
	atf_add_test_case sources
	atf_add_test_case dumps
	atf_add_test_case broken
}
