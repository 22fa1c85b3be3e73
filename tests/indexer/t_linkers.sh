#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Copyright (c) 2026 The hwtrace authors
#
# Names and call counts of programs linked by every linker Debian has
# (GNU ld, gold, lld, mold), PIE and not, and of a shared library: lld
# and mold put a segment's address and file offset a page apart, so a
# load bias taken as mapping start minus file offset names nothing right.
# Checked against counts known by construction and against addr2line,
# which reads the file and knows nothing of mappings.  And the dynamic
# loader's entry, an untyped label, named as nm names it.

. "$(atf_get_srcdir)/../env.sh"
. "$HWTRACE_SRC/tests/lib/hwtr_test.sh"

# The program: twice() runs 10 times, thrice() 7 and libtwice() (in
# liblk.so when built with -DWITH_LIB) 5, whatever the arguments.
write_sources()
{
	cat > lk.c <<'EOF'
#include <stdio.h>
__attribute__((noinline)) int twice(int x) { return 2 * x + (x & 3); }
__attribute__((noinline)) int thrice(int x) { return 3 * x - (x & 1); }
#ifdef WITH_LIB
int libtwice(int);
#endif
int
main(int argc, char **argv)
{
	int s = 0, i;

	for (i = 0; i < 10; i++)
		s += twice(i + argc);
	for (i = 0; i < 7; i++)
		s += thrice(i + argc);
#ifdef WITH_LIB
	for (i = 0; i < 5; i++)
		s += libtwice(i + argc);
#endif
	printf("%d\n", s);
	return (0);
}
EOF
	cat > liblk.c <<'EOF'
__attribute__((noinline)) int libhelp(int x) { return x ^ 5; }
int libtwice(int x) { return 2 * libhelp(x); }
EOF
}

need_tools()
{
	need_valgrind
	require_tools cc addr2line
	write_sources
}

# have_ld LD: the compiler links with -fuse-ld=LD here.
have_ld()
{
	echo 'int main(void) { return 0; }' > probe.c
	cc -fuse-ld="$1" -o probe probe.c > /dev/null 2>&1
}

# counts ARCHIVE FUNC: rows of func FUNC.
counts()
{
	"$HWTRACE" query "$1" func "$2" --format tsv > f.tsv ||
	    atf_fail "$1: func $2 failed: $(cat f.tsv)"
	tail -n +2 f.tsv | wc -l
}

# check_names ARCHIVE FILE: every block hwtrace placed in image FILE is in
# the function addr2line names at its link-time address ("??" aside).
check_names()
{
	"$HWTRACE" query "$1" sql "SELECT printf('0x%x', b.image_addr),
	    coalesce(s.name, '[none]') FROM blocks b JOIN images i ON
	    i.id = b.image LEFT JOIN symbols s ON s.id = b.symbol WHERE
	    i.path LIKE '%/$2' ORDER BY b.image_addr" --format tsv |
	    tail -n +2 > hw.txt || atf_fail "$1: sql failed"
	[ -s hw.txt ] || atf_fail "$1: no block of $2 in the database"
	cut -f1 hw.txt | addr2line -f -e "$2" | awk 'NR % 2 == 1' > a2l.txt
	paste hw.txt a2l.txt | awk -F '\t' '$3 != "??" && $2 != $3' > bad.txt
	[ ! -s bad.txt ] || atf_fail "$1: blocks of $2 named otherwise than addr2line names them (address, hwtrace, addr2line): $(head -5 bad.txt | tr '\t\n' ' ;')"
	grep -q "	main$" hw.txt || atf_fail "$1: no block of $2 named main"
}

# run_one LD PIE SOURCE: build lk with LD (PIE: pie or nopie), capture it
# with SOURCE, check the counts and the names.
run_one()
{
	case $2 in
	pie)	fl="-fPIE -pie" ;;
	*)	fl="-fno-pie -no-pie" ;;
	esac
	p=lk-$1-$2
	cc -O1 -g $fl -fuse-ld="$1" -o $p lk.c || atf_fail "cc -fuse-ld=$1 $fl failed"
	"$HWTRACE" capture --source "$3" -o $p.hwtrace -- ./$p > out 2> err ||
	    atf_fail "capture of $p failed: $(cat err)"
	for fc in twice:10 thrice:7; do
		got=$(counts $p.hwtrace ${fc%:*})
		[ "$got" -eq "${fc#*:}" ] ||
		    atf_fail "$p ($3): func ${fc%:*}: expected ${fc#*:} invocations, got $got"
	done
	check_names $p.hwtrace $p
}

atf_test_case linkers_names
linkers_names_head() { atf_set descr "a program linked by ld.bfd, gold, lld and mold, PIE and not: func twice and thrice give the 10 and 7 calls it makes, and every block is named as addr2line names it"; }
linkers_names_body()
{
	need_tools
	n=0
	skipped=""
	for ld in bfd gold lld mold; do
		if ! have_ld $ld; then
			skipped="$skipped $ld"
			continue
		fi
		run_one $ld pie valgrind
		run_one $ld nopie valgrind
		n=$((n + 1))
	done
	[ $n -gt 0 ] || atf_skip "no linker works with -fuse-ld here"
	[ -z "$skipped" ] || echo "not installed, not checked:$skipped" >&2
	have_ld lld || atf_skip "lld is not installed (checked:$n linkers)"
}

atf_test_case lld_step
lld_step_head() { atf_set descr "an lld-linked PIE captured by the step source: twice and thrice counted and named as addr2line names them"; }
lld_step_body()
{
	need_tools
	have_ld lld || atf_skip "lld is not installed"
	run_one lld pie step
}

atf_test_case lld_library
lld_library_head() { atf_set descr "a shared library linked by lld (its text a page from its file offset), loaded by a GNU ld program: libtwice 5 calls, libhelp 5, its blocks named as addr2line names them"; }
lld_library_body()
{
	need_tools
	have_ld lld || atf_skip "lld is not installed"
	cc -O1 -g -fPIC -shared -fuse-ld=lld -o liblk.so liblk.c ||
	    atf_fail "cc -shared -fuse-ld=lld failed"
	off=$(readelf -lW liblk.so | awk '$1 == "LOAD" && / E / {
	    print ($2 != $3) ? "apart" : "same"; exit }')
	[ "$off" = apart ] || atf_skip "this lld puts text at its file offset: nothing to check"
	cc -O1 -g -DWITH_LIB -fuse-ld=bfd -o lkl lk.c -L. -llk \
	    -Wl,-rpath,"$PWD" || atf_fail "cc of the program failed"
	"$HWTRACE" capture --source valgrind -o lkl.hwtrace -- ./lkl > out 2> err ||
	    atf_fail "capture of lkl failed: $(cat err)"
	for fc in twice:10 libtwice:5 libhelp:5; do
		got=$(counts lkl.hwtrace ${fc%:*})
		[ "$got" -eq "${fc#*:}" ] ||
		    atf_fail "func ${fc%:*}: expected ${fc#*:} invocations, got $got"
	done
	"$HWTRACE" query lkl.hwtrace sql "SELECT printf('0x%x', b.image_addr),
	    coalesce(s.name, '[none]') FROM blocks b JOIN images i ON
	    i.id = b.image LEFT JOIN symbols s ON s.id = b.symbol WHERE
	    i.path LIKE '%/liblk.so' ORDER BY b.image_addr" --format tsv |
	    tail -n +2 > hw.txt
	cut -f1 hw.txt | addr2line -f -e liblk.so | awk 'NR % 2 == 1' > a2l.txt
	paste hw.txt a2l.txt | awk -F '\t' '$3 != "??" && $2 != $3' > bad.txt
	[ ! -s bad.txt ] || atf_fail "blocks of liblk.so named otherwise than addr2line names them (address, hwtrace, addr2line): $(head -5 bad.txt | tr '\t\n' ' ;')"
}

# entry_name ELF: the name nm gives the entry point of ELF, from its own
# symbols or those of its debug file under /usr/lib/debug.
entry_name()
{
	e=$(readelf -hW "$1" | awk '/Entry point/ { print $4 }')
	bid=$(readelf -n "$1" | sed -n 's/.*Build ID: *//p')
	for f in "$1" "/usr/lib/debug/.build-id/$(echo "$bid" | cut -c1-2)/$(echo "$bid" | cut -c3-).debug"; do
		[ -r "$f" ] || continue
		nm "$f" 2>/dev/null | awk -v e="$e" '
		    { a = "0x" $1; sub(/^0x0*/, "0x", a) }
		    a == e && $2 ~ /^[tT]$/ { print $3; exit }'
	done | head -1
}

atf_test_case ldso_entry_named
ldso_entry_named_head() { atf_set descr "the root of the call tree of a dynamically linked program is the dynamic loader's entry, named as nm names it (an untyped label in ld.so's symbol table), in tree and in the folded stacks"; }
ldso_entry_named_body()
{
	need_tools
	cc -O1 -g -o lkd lk.c || atf_fail "cc failed"
	interp=$(readelf -lW lkd | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p')
	[ -n "$interp" ] || atf_fail "readelf: lkd has no interpreter"
	want=$(entry_name "$interp")
	[ -n "$want" ] || atf_skip "nm names no symbol at $interp's entry (no symbols and no debug file: install libc6-dbg)"
	"$HWTRACE" capture --source valgrind -o lkd.hwtrace -- ./lkd > out 2> err ||
	    atf_fail "capture of lkd failed: $(cat err)"
	"$HWTRACE" query lkd.hwtrace tree --format tsv > tree.tsv ||
	    atf_fail "tree failed"
	got=$(awk -F '\t' 'NR == 2 { print $3 }' tree.tsv)
	[ "$got" = "$want" ] ||
	    atf_fail "root of the tree: expected '$want' (nm, at $interp's entry), got '$got'"
	"$HWTRACE" query lkd.hwtrace export --folded folded.txt ||
	    atf_fail "export --folded failed"
	bad=$(grep -v "^$want[; ]" folded.txt | head -3)
	[ -z "$bad" ] || atf_fail "folded stacks not rooted at '$want': $bad"
}

atf_init_test_cases()
{
	atf_add_test_case linkers_names
	atf_add_test_case lld_step
	atf_add_test_case lld_library
	atf_add_test_case ldso_entry_named
}
