#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Copyright (c) 2026 The hwtrace authors
#
# Compressed DWARF: SHF_COMPRESSED sections with zlib (gcc -gz=zlib) and
# zstd (objcopy --compress-debug-sections=zstd), and GNU .zdebug sections
# (gcc -gz=zlib-gnu).  index read them through libelf, which decompresses
# by writing where the image is mapped read-only: SIGSEGV.  The lines
# must be those of the plain -g build and those addr2line gives; a
# section that does not decompress is a warning, never a crash.

. "$(atf_get_srcdir)/../env.sh"
. "$HWTRACE_SRC/tests/lib/hwtr_test.sh"

need_tools()
{
	need_valgrind
	require_tools cc addr2line objcopy readelf
	cat > zd.c <<'EOF'
#include <stdio.h>
__attribute__((noinline)) int twice(int x) { return 2 * x + (x & 3); }
int
main(int argc, char **argv)
{
	int s = 0, i;

	for (i = 0; i < 10; i++)
		s += twice(i + argc);
	printf("%d\n", s);
	return (0);
}
EOF
}

# capture_index PROG [SOURCE]: capture ./PROG with SOURCE (default
# valgrind) and index it into PROG.db; index's warnings (stderr but its
# summary line) in PROG.err.
capture_index()
{
	"$HWTRACE" capture --source ${2:-valgrind} -o $1.hwtrace -- ./$1 \
	    > out 2> err || atf_fail "capture of $1 failed: $(cat err)"
	"$HWTRACE" index -o $1.db $1.hwtrace > /dev/null 2> all.err
	rc=$?
	[ $rc -eq 0 ] || atf_fail "index of $1: expected exit 0, got $rc: $(cat all.err)"
	grep -v "^hwtrace index: '$1.db': [0-9]* streams," all.err > $1.err
}

# twice_ten PROG: PROG.db's func twice lists the 10 calls zd.c's main
# makes.
twice_ten()
{
	got=$("$HWTRACE" query $1.db func twice --format tsv | tail -n +2 | wc -l)
	[ "$got" -eq 10 ] ||
	    atf_fail "$1: func twice: expected 10 invocations, got $got"
}

# lines PROG: "ADDRESS LINE" of every line row of image PROG.
lines()
{
	"$HWTRACE" query $1.db sql "SELECT printf('0x%x', l.addr), l.line
	    FROM lines l JOIN images i ON i.id = l.image WHERE i.path LIKE
	    '%/$1' ORDER BY l.addr" --format tsv | tail -n +2
}

# section_span PROG NAME [TAIL]: "OFFSET SIZE" (hex) of PROGBITS section
# NAME (a sed pattern) of PROG, as readelf -S prints it, on a line that
# ends with TAIL (a sed pattern: " C " for a compressed one).
section_span()
{
	readelf -SW "$1" | sed -n "s/.*\] $2  *PROGBITS  *[0-9a-f]*  *\([0-9a-f]*\)  *\([0-9a-f]*\) .*$3.*/\1 \2/p"
}

# index_warns PROG WANT WHAT: PROG, captured by the step source, indexes
# with a warning matching WANT (grep) that names WHAT, and its 10 calls of
# twice are still counted.
index_warns()
{
	capture_index "$1" step
	grep -q "$2" "$1.err" ||
	    atf_fail "index did not name the unreadable $3: '$(cat "$1.err")'"
	twice_ten "$1"
}

atf_test_case compressed_lines
compressed_lines_head() { atf_set descr "a program whose DWARF is compressed with zlib (SHF_COMPRESSED and .zdebug) and zstd is indexed, with the lines of the plain -g build, each as addr2line reads it"; }
compressed_lines_body()
{
	need_tools
	cc -O1 -g -o zplain zd.c || atf_fail "cc -g failed"
	cc -O1 -g -gz=zlib -o zzlib zd.c || atf_fail "cc -gz=zlib failed"
	readelf -SW zzlib | grep -q "\.debug_line .* C " ||
	    atf_fail "cc -gz=zlib left .debug_line uncompressed: $(readelf -SW zzlib | grep debug_line)"
	progs="zzlib"
	if cc -O1 -g -gz=zlib-gnu -o zgnu zd.c 2> /dev/null &&
	    readelf -SW zgnu | grep -q "\.zdebug_line"; then
		progs="$progs zgnu"
	else
		echo "no .zdebug sections here (cc -gz=zlib-gnu): not checked" >&2
	fi
	if objcopy --compress-debug-sections=zstd zplain zzstd 2> /dev/null &&
	    readelf -t zzstd | grep -q ZSTD; then
		progs="$progs zzstd"
	else
		echo "objcopy cannot compress with zstd here: not checked" >&2
	fi
	capture_index zplain
	lines zplain > want.txt
	[ "$(wc -l < want.txt)" -ge 10 ] || atf_fail "the plain build has $(wc -l < want.txt) line rows, expected 10 or more"
	for p in $progs; do
		capture_index $p
		[ ! -s $p.err ] || atf_fail "index of $p warned: $(cat $p.err)"
		lines $p > got.txt
		cmp -s want.txt got.txt ||
		    atf_fail "$p: lines differ from the plain -g build's: $(diff want.txt got.txt | head -5 | tr '\n' ';')"
		cut -f1 got.txt | addr2line -e $p |
		    sed 's/ (discriminator.*//; s/.*://' > a2l.txt
		paste got.txt a2l.txt | awk -F '\t' '$2 != $3' > bad.txt
		[ ! -s bad.txt ] || atf_fail "$p: lines otherwise than addr2line's (address, hwtrace, addr2line): $(head -5 bad.txt | tr '\t\n' ' ;')"
		twice_ten $p
	done
}

atf_test_case corrupt_section_warns
corrupt_section_warns_head() { atf_set descr "a compressed .debug_line that does not decompress: index warns naming it and exits 0; names are kept"; }
corrupt_section_warns_body()
{
	need_tools
	# Static, for the step source: Valgrind reads the program's DWARF
	# too, and stops at the corrupt section.
	cc -O1 -g -gz=zlib -static -o zbad zd.c || atf_fail "cc -gz=zlib -static failed"
	set -- $(section_span zbad '\.debug_line' ' C ')
	[ $# -eq 2 ] || atf_fail "readelf: no compressed .debug_line in zbad"
	# Past the 24-byte compression header, into the zlib stream.
	off=$(( 0x$1 + 24 + 4 ))
	n=$(( 0x$2 - 24 - 8 ))
	[ $n -gt 0 ] || atf_fail ".debug_line too small to corrupt"
	head -c $n /dev/zero | tr '\0' '\377' |
	    dd of=zbad bs=1 seek=$off conv=notrunc 2> /dev/null || atf_fail "dd failed"
	index_warns zbad "'\.debug_line'" .debug_line
}

atf_test_case corrupt_unit_warns
corrupt_unit_warns_head() { atf_set descr "a compilation unit libdw cannot read (DWARF version 99, which readelf refuses too): index warns naming it and exits 0; names are kept"; }
corrupt_unit_warns_body()
{
	need_tools
	cc -O1 -g -static -o zcu zd.c || atf_fail "cc -static failed"
	set -- $(section_span zcu '\.debug_info')
	[ $# -eq 2 ] || atf_fail "readelf: no .debug_info in zcu"
	# The first unit's version, after its 4-byte length.
	printf '\143\000' | dd of=zcu bs=1 seek=$(( 0x$1 + 4 )) conv=notrunc \
	    2> /dev/null || atf_fail "dd failed"
	readelf --debug-dump=info zcu 2>&1 | grep -q "version number: 99" ||
	    atf_fail "readelf does not see the corrupt unit"
	index_warns zcu "compilation unit at 0 of .debug_info" unit
}

atf_test_case go_binary
go_binary_head() { atf_set descr "a Go program (its DWARF compressed by the Go linker) is indexed with its lines: main.work's as addr2line reads them"; }
go_binary_body()
{
	need_tools
	go_work gop
	readelf -SW gop | grep -q "zdebug\|debug_line .* C " ||
	    echo "this Go does not compress its DWARF" >&2
	capture_index gop
	[ ! -s gop.err ] || atf_fail "index of gop warned: $(cat gop.err)"
	lines gop > got.txt
	[ -s got.txt ] || atf_fail "no line rows for gop"
	sed -n '1~50p' got.txt > some.txt
	cut -f1 some.txt | addr2line -e gop |
	    sed 's/ (discriminator.*//; s/.*://' > a2l.txt
	paste some.txt a2l.txt | awk -F '\t' '$3 != "?" && $2 != $3' > bad.txt
	[ ! -s bad.txt ] || atf_fail "gop: lines otherwise than addr2line's (address, hwtrace, addr2line): $(head -5 bad.txt | tr '\t\n' ' ;')"
}

atf_init_test_cases()
{
	atf_add_test_case compressed_lines
	atf_add_test_case corrupt_section_warns
	atf_add_test_case corrupt_unit_warns
	atf_add_test_case go_binary
}
