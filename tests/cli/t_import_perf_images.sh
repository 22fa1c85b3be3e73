#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Copyright (c) 2026 The hwtrace authors
#
# hwtrace import of a perf.data (the shared corpus's Skylake Intel PT
# recording, user and kernel) given --vmlinux, --kcore or --perf-archive.
# The images are made here: a vmlinux-like ELF assembled and linked with
# as(1) and ld(1) (with the build-id the recording gives its kernel), a
# kcore-like ELF core file written by python3, and a stand-in for the
# recorded /usr/bin/coreutils (its recorded build-id) that perf
# buildid-cache and perf archive themselves pack.  Where the vmlinux goes
# is what perf script --vmlinux makes of the recording's kernel samples
# (perf moves it as KASLR moved the kernel); the segments are readelf's.

. "$(atf_get_srcdir)/../env.sh"
. "$HWTRACE_SRC/tests/lib/hwtr_test.sh"


# make_vmlinux OUT BUILDID [NOSYM]: an x86-64 ELF linked at the usual
# kernel address 0xffffffff81000000 with _text at its start (none with
# NOSYM) and a function fake_fn of 0x1000 bytes at _text + 0x7000.
make_vmlinux()
{
	{
		printf '\t.text\n'
		[ -n "$3" ] || printf '\t.globl _text\n_text:\n'
		printf '\t.skip 0x7000\n\t.globl fake_fn\n\t.type fake_fn, @function\n'
		printf 'fake_fn:\n\t.skip 0x1000\n\t.size fake_fn, 0x1000\n'
	} >k.s
	as -o k.o k.s || atf_fail "as failed"
	ld -static -nostdlib --build-id=0x$2 -Ttext=0xffffffff81000000 \
	    -e fake_fn -o "$1" k.o || atf_fail "ld failed"
}

# kernel_bid: the build-id perf recorded for the kernel.
kernel_bid()
{
	perf buildid-list -i "$HWTRACE_CORPUS/$PT" 2>/dev/null |
	    awk '$2 == "[kernel.kallsyms]" { print $1 }'
}

atf_test_case vmlinux
vmlinux_head()
{
	atf_set descr "--vmlinux: the image is stored byte for byte and mapped segment by segment where perf script --vmlinux puts it (moved by KASLR, 0x38600000 here); the kernel caveat goes"
}
vmlinux_body()
{
	require_corpus $PT
	require_tools perf as ld readelf nm zstd
	pf=$HWTRACE_CORPUS/$PT
	bid=$(kernel_bid)
	[ -n "$bid" ] || atf_fail "perf shows no kernel build-id"
	make_vmlinux vmlinux "$bid"
	# perf's placement: a kernel sample in fake_fn at run-time address
	# IP, symbolized as fake_fn+OFF, puts fake_fn at IP - OFF.
	perf script -i "$pf" --no-itrace --vmlinux vmlinux -F ip,sym,symoff \
	    2>/dev/null | awk '$2 ~ /^fake_fn\+0x/ { print $1, substr($2, 9); exit }' >sample
	[ -s sample ] || atf_skip "perf script does not symbolize the kernel samples with the vmlinux"
	read -r ip off <sample
	fn=$(nm vmlinux | awk '$3 == "fake_fn" { print $1 }')
	slide=$(( 0x$ip - off - 0x$fn ))
	[ "$(printf '%x' $slide)" = 38600000 ] ||
	    atf_fail "perf moved the kernel by $(printf '%x' $slide), the recording's MMAP says 38600000"
	"$HWTRACE" import --vmlinux vmlinux "$pf" -o v.hwtrace >out 2>err ||
	    atf_fail "import failed: $(cat err)"
	"$HWTRACE" info v.hwtrace >info 2>&1 || atf_fail "info failed: $(cat info)"
	grep -q "^  bid-$bid vmlinux (file, $(wc -c <vmlinux) bytes)$" info ||
	    atf_fail "vmlinux is not stored: $(grep -A3 ^images info)"
	mkdir x && zstd -dcq v.hwtrace | tar -xf - -C x || atf_fail "cannot unpack"
	cmp vmlinux "x/images/bid-$bid" || atf_fail "the stored vmlinux differs from the file"
	readelf_loads vmlinux >loads
	[ "$(wc -l <loads)" -ge 1 ] || atf_fail "readelf shows no PT_LOAD"
	while read -r vaddr off filesz flags; do
		case $flags in *R*) r=r ;; *) r=- ;; esac
		case $flags in *W*) w=w ;; *) w=- ;; esac
		case $flags in *E*) x=x ;; *) x=- ;; esac
		s=$(( vaddr + slide ))
		expect_line info "$(printf '  pid -1: 0x%x-0x%x pgoff 0x%x %s%s%s vmlinux [bid-%s]' \
		    $s $((s + filesz)) $((off)) $r $w $x "$bid")"
	done <loads
	grep -q "kernel code is not in the archive" info &&
	    atf_fail "the kernel caveat stayed"
	true
}

atf_test_case vmlinux_wrong
vmlinux_wrong_head()
{
	atf_set descr "--vmlinux with another build-id than the recorded kernel's is refused, naming both; a vmlinux without _text is mapped where linked, with a caveat"
}
vmlinux_wrong_body()
{
	require_corpus $PT
	require_tools perf as ld
	pf=$HWTRACE_CORPUS/$PT
	bid=$(kernel_bid)
	make_vmlinux other 0123456789abcdef0123456789abcdef01234567
	"$HWTRACE" import --vmlinux other "$pf" -o o.hwtrace >out 2>err &&
	    atf_fail "a vmlinux of another kernel was taken"
	expect_first err "hwtrace import: '$pf': --vmlinux 'other' has build-id 0123456789abcdef0123456789abcdef01234567, the recorded kernel $bid"
	expect_no_output o.hwtrace
	make_vmlinux nosym "$bid" nosym
	"$HWTRACE" import --vmlinux nosym "$pf" -o n.hwtrace >out 2>err ||
	    atf_fail "import failed: $(cat err)"
	"$HWTRACE" info n.hwtrace >info 2>&1
	grep -q "^  --vmlinux 'nosym' has no symbol '_text': it is mapped where it was linked" info ||
	    atf_fail "no caveat: $(grep -A5 ^caveats info)"
	grep -q "^  pid -1: 0xffffffff81000000-0xffffffff81008000 pgoff 0x1000 r-x nosym " info ||
	    atf_fail "not mapped where linked: $(grep nosym info)"
}

# make_kcore OUT: an ELF64 core file (ET_CORE) as /proc/kcore is, with
# two PT_LOAD segments at run-time kernel addresses.
make_kcore()
{
	python3 - "$1" <<'EOF'
import struct, sys
segs = [(0xffffffffb9600000, 0x3000, 5), (0xffffffffc02f0000, 0x1000, 7)]
phoff, phentsize = 64, 56
off = phoff + phentsize * len(segs)
off = (off + 0xfff) & ~0xfff
ph, data, at = b'', b'', off
for vaddr, size, flags in segs:
    ph += struct.pack('<IIQQQQQQ', 1, flags, at, vaddr, 0, size, size, 0x1000)
    data += bytes((i * 7 + vaddr) & 0xff for i in range(size))
    at += size
eh = b'\x7fELF' + bytes([2, 1, 1, 0]) + bytes(8)
eh += struct.pack('<HHIQQQIHHHHHH', 4, 62, 1, 0, phoff, 0, 0, 64, phentsize,
                  len(segs), 64, 0, 0)
b = eh + ph
b += bytes(off - len(b)) + data
open(sys.argv[1], 'wb').write(b)
EOF
}

atf_test_case kcore
kcore_head()
{
	atf_set descr "--kcore FILE and --kcore DIR (perf's kcore_dir): the core file is stored byte for byte and its PT_LOAD segments mapped where readelf says, unmoved; a kcore cut inside a segment is refused"
}
kcore_body()
{
	require_corpus $PT
	require_tools python3 readelf zstd sha256sum
	pf=$HWTRACE_CORPUS/$PT
	mkdir kd
	make_kcore kd/kcore
	readelf -hW kd/kcore | grep -q 'CORE (Core file)' || atf_fail "readelf does not see a core file"
	readelf_loads kd/kcore >loads
	[ "$(wc -l <loads)" -eq 2 ] || atf_fail "readelf shows $(wc -l <loads) PT_LOAD segments, not 2"
	key=sha256-$(sha256sum kd/kcore | cut -d' ' -f1)
	for arg in kd/kcore kd; do
		rm -rf k.hwtrace x
		"$HWTRACE" import --kcore "$arg" "$pf" -o k.hwtrace >out 2>err ||
		    atf_fail "import --kcore $arg failed: $(cat err)"
		"$HWTRACE" info k.hwtrace >info 2>&1
		grep -q "^  $key kd/kcore (file, $(wc -c <kd/kcore) bytes)$" info ||
		    atf_fail "--kcore $arg: kcore is not stored as $key: $(grep -A3 ^images info)"
		mkdir x && zstd -dcq k.hwtrace | tar -xf - -C x || atf_fail "cannot unpack"
		cmp kd/kcore "x/images/$key" || atf_fail "the stored kcore differs from the file"
		while read -r vaddr off filesz flags; do
			case $flags in *R*) r=r ;; *) r=- ;; esac
			case $flags in *W*) w=w ;; *) w=- ;; esac
			case $flags in *E*) x=x ;; *) x=- ;; esac
			expect_line info "$(printf '  pid -1: 0x%x-0x%x pgoff 0x%x %s%s%s kd/kcore [%s]' \
			    $((vaddr)) $((vaddr + filesz)) $((off)) $r $w $x "$key")"
		done <loads
		grep -q "kernel code is not in the archive" info &&
		    atf_fail "--kcore $arg: the kernel caveat stayed"
	done
	# Cut inside the second segment: refused, naming it, nothing written.
	head -c $(($(wc -c <kd/kcore) - 16)) kd/kcore >cut
	"$HWTRACE" import --kcore cut "$pf" -o c.hwtrace >out 2>err &&
	    atf_fail "a truncated kcore was imported"
	grep -q "kernel image 'cut': segment 1 (offset 0x$(awk 'NR == 2 { sub(/^0x0*/, "", $2); print $2 }' loads), 4096 bytes) ends past the end of the file ($(wc -c <cut) bytes): truncated?" err ||
	    atf_fail "unclear error: $(cat err)"
	expect_no_output c.hwtrace
}

atf_test_case perf_archive
perf_archive_head()
{
	atf_set descr "--perf-archive with the tarball perf archive makes from a build-id cache perf buildid-cache filled: the recorded /usr/bin/coreutils is found in it by build-id, stored byte for byte and used by its mapping"
}
perf_archive_body()
{
	require_corpus $PT
	require_tools perf as ld zstd bzip2
	bid=$(perf buildid-list -i "$HWTRACE_CORPUS/$PT" 2>/dev/null |
	    awk '$2 == "/usr/bin/coreutils" { print $1 }')
	[ -n "$bid" ] || atf_fail "perf shows no build-id for /usr/bin/coreutils"
	mkdir home fake
	printf '\t.globl _start\n\t.text\n_start:\n\tret\n' >c.s
	as -o c.o c.s && ld -static -nostdlib --build-id=0x$bid -o fake/coreutils c.o ||
	    atf_fail "cannot link the stand-in"
	HOME=$PWD/home perf buildid-cache -a fake/coreutils ||
	    atf_skip "perf buildid-cache cannot add a file"
	cp "$HWTRACE_CORPUS/$PT" pt.data && chmod u+w pt.data
	HOME=$PWD/home perf archive pt.data >pa.out 2>&1 ||
	    atf_fail "perf archive failed: $(cat pa.out)"
	tar -tjf pt.data.tar.bz2 | grep -q "^.build-id/$(echo "$bid" | cut -c1-2)/" ||
	    atf_fail "perf archive did not pack the stand-in: $(tar -tjf pt.data.tar.bz2)"
	"$HWTRACE" import --perf-archive pt.data.tar.bz2 pt.data -o pa.hwtrace \
	    >out 2>err || atf_fail "import failed: $(cat err)"
	"$HWTRACE" info pa.hwtrace >info 2>&1
	grep -q "^  bid-$bid .* (file, $(wc -c <fake/coreutils) bytes)$" info ||
	    atf_fail "not found in the tarball: $(grep -A3 ^images info)"
	grep -q "^  pid 3174: 0x[0-9a-f]*-0x[0-9a-f]* pgoff 0x0 r-x /usr/bin/coreutils \[bid-$bid\]$" info ||
	    atf_fail "the mapping does not use it: $(grep coreutils info)"
	mkdir x && zstd -dcq pa.hwtrace | tar -xf - -C x || atf_fail "cannot unpack"
	cmp fake/coreutils "x/images/bid-$bid" || atf_fail "the stored image differs from the file"
	# Without the tarball it is not found.
	"$HWTRACE" import pt.data -o no.hwtrace >out 2>err || atf_fail "$(cat err)"
	"$HWTRACE" info no.hwtrace | grep -q "/usr/bin/coreutils \[no image\]$" ||
	    atf_fail "found without the tarball"
}

atf_init_test_cases()
{
	atf_add_test_case perf_archive
	atf_add_test_case vmlinux
	atf_add_test_case vmlinux_wrong
	atf_add_test_case kcore
}
