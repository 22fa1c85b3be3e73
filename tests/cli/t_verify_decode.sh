#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Copyright (c) 2026 The hwtrace authors
#
# Issue 31, item 4: hwtrace verify --decode decodes an archive with nothing
# from this machine and lists what another would miss.  The program is
# built here, its DWARF moved to a separate debug file beside it
# (objcopy --only-keep-debug, strip --strip-debug, --add-gnu-debuglink),
# so that capture --no-debug-info leaves debug info out that this machine
# has; the program is moved away after the capture, so that nothing of it
# is where the archive says it was.  ixgen writes an archive that lacks the
# image the trace runs (-m), by construction.

. "$(atf_get_srcdir)/../env.sh"
. "$HWTRACE_SRC/tests/lib/hwtr_test.sh"

GEN="$HWTRACE_BUILD/bench/ixgen"
PROG="$HWTRACE_PROGS/calls"

# A static program with its debug info in prog.debug beside it.
build_split()
{
	require_tools cc objcopy strip readelf
	need_valgrind
	cat > prog.c <<'EOF'
static volatile int sink;

__attribute__((noinline)) static void
f(int i)
{
	sink += i;
}

int
main(int argc, char **argv)
{
	int i;

	(void)argv;
	for (i = 0; i < 100; i++)
		f(i);
	return (argc > 1 ? 3 : 0);
}
EOF
	cc -O1 -g -static -o prog prog.c 2>cc.err ||
	    atf_skip "cannot build a static program: $(head -c 300 cc.err)"
	objcopy --only-keep-debug prog prog.debug &&
	    strip --strip-debug prog &&
	    objcopy --add-gnu-debuglink=prog.debug prog ||
	    atf_fail "cannot split the debug info"
	! readelf -S prog | grep -q '\.debug_line' ||
	    atf_fail "prog still has its lines"
}

# capture ARCHIVE OPTIONS...: capture ./prog with the valgrind source.
capture()
{
	a=$1
	shift
	"$HWTRACE" capture --source valgrind --force -o "$a" "$@" -- ./prog \
	    > capture.out 2> capture.err ||
	    atf_fail "capture $a failed: $(oneline capture.err 600)"
}

atf_test_case debug_left_out_named
debug_left_out_named_head()
{
	atf_set descr "verify --decode: an archive whose program's debug file was left out (--no-debug-info) exits 1 naming the program and the file this machine has; one that holds it exits 1 neither with the program and its debug file moved away"
}
debug_left_out_named_body()
{
	build_split
	capture full.hwtrace
	capture part.hwtrace --no-debug-info
	mkdir away
	mv prog away/
	# The debug file stays where the capture found it.
	atf_check -s exit:1 -o save:out -e match:"'part.hwtrace' does not decode fully elsewhere" \
	    "$HWTRACE" verify --decode part.hwtrace
	grep -q "^missing: debug '$PWD/prog': debug info left out: this machine has its debug file '$PWD/prog.debug'" out ||
	    atf_fail "expected prog named as missing its debug info, got: $(tr "\n" " " < out)"
	# A complete archive needs nothing here.
	mv prog.debug away/
	atf_check -s exit:0 -o save:out2 -e empty "$HWTRACE" verify --decode full.hwtrace
	grep -q "^ok: 'full.hwtrace' decodes with nothing from this machine: 1 streams, [1-9][0-9]* instructions, 0 decode errors" out2 ||
	    atf_fail "expected the ok line, got: $(tr "\n" " " < out2)"
	! grep -q "^missing" out2 || atf_fail "a complete archive lists something missing: $(tr "\n" " " < out2)"
	# Its lines are the archive's: known with prog.debug moved away.
	atf_check -s exit:0 -o match:"prog\\.c:[0-9]+" "$HWTRACE" query full.hwtrace hot --by line
}

atf_test_case image_left_out_named
image_left_out_named_head()
{
	atf_set descr "verify --decode: an archive without the image the trace runs (ixgen -m) exits 1 naming it; the same with the image exits 0"
}
image_left_out_named_body()
{
	need_gen
	"$GEN" -n 30000 -V -m "$PROG" w.hwtrace || atf_fail "ixgen failed"
	"$GEN" -n 30000 -V "$PROG" v.hwtrace || atf_fail "ixgen failed"
	atf_check -s exit:1 -o save:out -e match:"does not decode fully elsewhere: 1 thing missing" \
	    "$HWTRACE" verify --decode w.hwtrace
	grep -q "^missing: image '$PROG': not in the archive; the trace ran its code ([1-9][0-9]* decode errors there)" out ||
	    atf_fail "expected the program named, got: $(tr "\n" " " < out)"
	grep -q "vsyscall" out && atf_fail "named [vsyscall], which never ran: $(tr "\n" " " < out)"
	atf_check -s exit:0 -o match:"^ok: 'v.hwtrace' decodes with nothing from this machine" \
	    "$HWTRACE" verify --decode v.hwtrace
}

atf_test_case capture_check_portable
capture_check_portable_head()
{
	atf_set descr "capture --check-portable: a failed command keeps its status and its archive, the findings on stderr; a command that succeeded fails when the archive does not decode elsewhere, passes when it does"
}
capture_check_portable_body()
{
	build_split
	"$HWTRACE" capture --source valgrind -o f.hwtrace --keep-on-failure \
	    --check-portable --no-debug-info -- ./prog fail > out 2> err
	[ $? = 3 ] || atf_fail "expected the command's status 3: $(tr "\n" " " < err)"
	[ -f f.hwtrace ] || atf_fail "the archive of a failed command was not kept"
	grep -q "^missing: debug '$PWD/prog'" err ||
	    atf_fail "expected prog named on stderr, got: $(tr "\n" " " < err)"
	grep -q "missing" out && atf_fail "findings went to stdout"
	atf_check -s exit:1 -o ignore -e match:"'s.hwtrace' does not decode fully elsewhere" \
	    "$HWTRACE" capture --source valgrind -o s.hwtrace --check-portable \
	    --no-debug-info -- ./prog
	atf_check -s exit:0 -o ignore -e match:"^ok: 'k.hwtrace' decodes with nothing" \
	    "$HWTRACE" capture --source valgrind -o k.hwtrace --check-portable -- ./prog
}

atf_init_test_cases()
{
	atf_add_test_case debug_left_out_named
	atf_add_test_case image_left_out_named
	atf_add_test_case capture_check_portable
}
