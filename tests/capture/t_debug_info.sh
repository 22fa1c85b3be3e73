#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# capture --debug-info=all|own|none (issue 31, item 5): which separate
# debug files the archive stores.  A small dynamic program, stripped to a
# .gnu_debuglink (binutils' objcopy), is captured three times: all stores
# its debug file and the C library's and the loader's (Debian's
# libc6-dbg), own only its own, none nothing; the archives' sizes follow,
# info lists what each image costs, and with own the program's functions
# and lines still resolve after its debug file is deleted.

. "$(atf_get_srcdir)/../env.sh"
. "$HWTRACE_SRC/tests/lib/hwtr_test.sh"

need_tools()
{
	need_valgrind
	require_tools cc objcopy readelf nm
}

# prog: ./prog, a dynamic PIE whose count_to() is known by construction,
# stripped, with a .gnu_debuglink to ./prog.debug.
build_prog()
{
	cat > prog.c <<'EOF'
#include <stdio.h>

static __attribute__((noinline)) unsigned
count_to(unsigned n)
{
	unsigned i, s = 0;

	for (i = 0; i < n; i++)
		s += i * 7;		/* count_to's loop */
	return (s);
}

int
main(void)
{
	printf("%u\n", count_to(1000));
	return (0);
}
EOF
	cc -g -O1 -fPIE -pie -Wl,--build-id=sha1 -o prog prog.c ||
	    atf_fail "cannot compile prog.c"
	debuglink_strip prog count_to
}

cap()
{
	"$HWTRACE" capture --source valgrind "$@" > cap.out 2> cap.err ||
	    atf_fail "capture $* failed: $(cat cap.err)"
}

atf_test_case modes
modes_head()
{
	atf_set descr "--debug-info=all stores the program's, libc's and ld.so's debug files, own the program's only, none nothing: none < own < all in size, info lists what each image costs, and with own the program's functions and lines resolve once its debug file is gone"
	atf_set timeout 300
}
modes_body()
{
	need_tools
	build_prog
	cap --debug-info=all -o all.hwtrace -- ./prog
	cap --debug-info=own -o own.hwtrace -- ./prog
	cap --debug-info=none -o none.hwtrace -- ./prog
	cap --no-debug-info -o alias.hwtrace -- ./prog
	"$HWTRACE" info all.hwtrace > all.info || atf_fail "info all failed"
	# all: the C library's debug file too, when Debian's libc6-dbg is here.
	grep -A1 ' /.*libc\.so\.6 (file' all.info | grep -q "debug file" ||
	    atf_skip "no separate debug file for the C library here (Debian's libc6-dbg)"
	grep -q "^    debug file aux/debug/bid-$bid (" all.info ||
	    atf_fail "all: expected prog's debug file bid-$bid, got: $(oneline all.info)"
	"$HWTRACE" info own.hwtrace > own.info || atf_fail "info own failed"
	"$HWTRACE" info none.hwtrace > none.info || atf_fail "info none failed"
	"$HWTRACE" info alias.hwtrace > alias.info || atf_fail "info failed"
	# own: prog's debug file only.
	grep "^    debug file " own.info > own.debug
	[ "$(wc -l < own.debug)" -eq 1 ] && grep -q "bid-$bid " own.debug ||
	    atf_fail "own: expected prog's debug file alone, got: $(oneline own.debug)"
	! grep -q "^    debug file " none.info ||
	    atf_fail "none: expected no debug file, got: $(grep 'debug file' none.info)"
	! grep -q "^    debug file " alias.info ||
	    atf_fail "--no-debug-info: expected no debug file, got: $(grep 'debug file' alias.info)"
	# Sizes: none < own < all; own is none plus about prog's debug file.
	s_all=$(stat -c %s all.hwtrace)
	s_own=$(stat -c %s own.hwtrace)
	s_none=$(stat -c %s none.hwtrace)
	[ "$s_none" -lt "$s_own" ] && [ "$s_own" -lt "$s_all" ] ||
	    atf_fail "expected none < own < all, got none $s_none, own $s_own, all $s_all bytes"
	# info: what each image costs in the archive, a line per image, and
	# the sums; the debug files all stores are what makes it larger than
	# none (the files' sizes, by stat), within 5%.
	[ "$(grep -c '^    stored: image [0-9]* bytes, debug info [0-9]* bytes$' all.info)" -eq \
	    "$(sed -n 's/^images: //p' all.info)" ] ||
	    atf_fail "all: expected a 'stored:' line per image, got: $(oneline all.info)"
	sum=$(awk '/^    stored: image/ { s += $7 } END { print s + 0 }' all.info)
	total=$(sed -n 's/^images stored: [0-9]* bytes, debug info \([0-9]*\) bytes$/\1/p' all.info)
	[ -n "$total" ] && [ "$total" -eq "$sum" ] ||
	    atf_fail "all: expected 'images stored: N bytes, debug info $sum bytes', got '$(grep '^images stored' all.info)'"
	awk -v d="$total" -v a="$s_all" -v n="$s_none" 'BEGIN {
		x = a - n - d; if (x < 0) x = -x; exit !(x <= d / 20) }' ||
	    atf_fail "all's debug files: info says $total bytes stored, all is $((s_all - s_none)) bytes larger than none"
	# With own, prog's names and lines resolve from the archive alone.
	rm -f prog.debug
	line=$(grep -n "count_to's loop" prog.c | cut -d: -f1)
	"$HWTRACE" query own.hwtrace hot --by line --format csv > own.lines ||
	    atf_fail "hot --by line on own failed"
	grep -q "^prog.c:$line,count_to," own.lines ||
	    grep -q "/prog.c:$line,count_to," own.lines ||
	    atf_fail "own: expected prog.c:$line in count_to among the hot lines, got: $(oneline own.lines)"
	"$HWTRACE" query own.hwtrace func count_to --format csv > own.func ||
	    atf_fail "own: func count_to failed: $(cat own.func)"
	[ "$(tail -n +2 own.func | wc -l)" -eq 1 ] ||
	    atf_fail "own: expected one invocation of count_to, got: $(oneline own.func)"
	# Without it (none), the stripped program has no such name.
	if "$HWTRACE" query none.hwtrace func count_to > none.func 2>&1; then
		atf_fail "none: expected count_to not to resolve, got: $(oneline none.func)"
	fi
}

atf_test_case bad_value
bad_value_head() { atf_set descr "--debug-info with an unknown value is a usage error naming the three"; }
bad_value_body()
{
	run_status 2 "$HWTRACE" capture --debug-info=some -o x.hwtrace -- /bin/true
	grep -q "unknown 'some' (all, own, none)" err ||
	    atf_fail "expected \"unknown 'some' (all, own, none)\", got: $(cat err)"
	[ ! -e x.hwtrace ] || atf_fail "x.hwtrace was written"
}

atf_init_test_cases()
{
	atf_add_test_case modes
	atf_add_test_case bad_value
}
