#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# make install into a DESTDIR (issue 22 item 9): the installed hwtrace
# finds its Valgrind tool relative to itself and captures, indexes and
# answers from there; the installed SQLite extension loads into sqlite3;
# the library links through pkg-config; make uninstall removes it all; a
# copied lone binary says once that it falls back to the step source.

. "$(atf_get_srcdir)/../env.sh"
. "$HWTRACE_SRC/tests/lib/hwtr_test.sh"

# make install or uninstall of the tested build into ./root (PREFIX /usr).
mk()
{
	make -s --no-print-directory -C "$HWTRACE_SRC" B="$HWTRACE_BUILD" \
	    DESTDIR="$PWD/root" PREFIX=/usr "$1" >make.out 2>&1 ||
	    atf_fail "make $1 failed: $(cat make.out)"
}

atf_test_case install_capture_index_query
install_capture_index_query_head()
{
	atf_set descr "make install DESTDIR: the installed hwtrace captures with valgrind, indexes and queries; its extension, header, library and man pages work; make uninstall removes them"
	atf_set require.progs "make valgrind.bin sqlite3 pkg-config cc mandoc"
	atf_set timeout 300
}
install_capture_index_query_body()
{
	mk install
	R=$PWD/root/usr
	for f in bin/hwtrace lib/libhwtrace.a include/hwtrace.h \
	    lib/pkgconfig/hwtrace.pc lib/hwtrace/hwtrace_sqlite.so \
	    lib/hwtrace/valgrind-lib/hwtrace-amd64-linux \
	    lib/hwtrace/valgrind-lib/hwtrace-built-for \
	    lib/hwtrace/valgrind-lib/vgpreload_core-amd64-linux.so \
	    share/man/man1/hwtrace-capture.1 share/man/man5/hwtrace-db.5; do
		[ -e "$R/$f" ] || atf_fail "make install did not install $f"
	done
	# Nothing of the build tree is reachable: the build's tool is hidden
	# behind a path the installed binary would not look at anyway.
	run_status 0 env -u HWTRACE_VALGRIND_LIB "$R/bin/hwtrace" capture \
	    -o h.hwtrace -- "$HWTRACE_PROGS/hello"
	grep -q "warning" err && atf_fail "the installed hwtrace warned: $(cat err)"
	ninsns=$(sed -n 's/.* \([0-9]*\) instructions,.*/\1/p' err)
	"$R/bin/hwtrace" info h.hwtrace > info || atf_fail "info failed"
	grep -q '^source: valgrind' info ||
	    atf_fail "the installed hwtrace did not use valgrind: $(grep source info)"
	run_status 0 "$R/bin/hwtrace" index -q -o h.db h.hwtrace
	run_status 0 "$R/bin/hwtrace" query h.db summary --format csv
	grep -q . out || atf_fail "query summary printed nothing"
	# The instruction count the capture reported, from the installed
	# extension's exec_insns in plain sqlite3.
	got=$(sqlite3 h.db ".load $R/lib/hwtrace/hwtrace_sqlite" \
	    "SELECT count(*) FROM exec_insns WHERE thread = 1")
	[ -n "$ninsns" ] && [ "$got" = "$ninsns" ] ||
	    atf_fail "exec_insns through the installed extension: expected $ninsns rows, got '$got'"
	# The library and header through pkg-config.
	printf '#include <hwtrace.h>\n#include <stdio.h>\nint main(void) { puts(hwtr_errstr(-HWTR_E_NOENT)); return 0; }\n' > u.c
	flags=$(PKG_CONFIG_PATH=$R/lib/pkgconfig pkg-config \
	    --define-variable=prefix="$R" --cflags --libs hwtrace) ||
	    atf_fail "pkg-config does not know hwtrace"
	# A sanitizer build's library needs the sanitizer's run time too.
	san=
	if ldd "$HWTRACE" 2>/dev/null | grep -q libasan; then
		san="-fsanitize=address,undefined"
	fi
	cc $san -o u u.c $flags || atf_fail "cannot build against the installed library ($flags)"
	./u > u.out || atf_fail "the program linked with libhwtrace failed"
	[ -s u.out ] || atf_fail "hwtr_errstr gave nothing"
	MANPATH=$R/share/man man -w hwtrace-query >/dev/null 2>&1 ||
	    mandoc -Tlint "$R/share/man/man1/hwtrace-query.1" ||
	    atf_fail "the installed man page does not read"
	# Uninstall leaves no file behind.
	mk uninstall
	left=$(find root -type f -o -type l)
	[ -z "$left" ] || atf_fail "make uninstall left: $left"
}

atf_test_case lone_binary_warns_once
lone_binary_warns_once_head()
{
	atf_set descr "a copied lone hwtrace says once, on stderr, that it uses step because the Valgrind tool is not found, and why"
	atf_set require.progs "valgrind.bin"
}
lone_binary_warns_once_body()
{
	mkdir elsewhere
	cp "$HWTRACE" elsewhere/
	run_status 0 env -u HWTRACE_VALGRIND_LIB elsewhere/hwtrace capture \
	    -o l.hwtrace -- "$HWTRACE_PROGS/hello"
	n=$(grep -c "warning: trace source: step (not valgrind: " err)
	[ "$n" -eq 1 ] || atf_fail "expected one warning naming step, got $n: $(cat err)"
	grep -q "hwtrace-amd64-linux) was not found: neither '$PWD/elsewhere/valgrind-lib'" err ||
	    atf_fail "the warning does not say where the tool was looked for: $(cat err)"
	"$HWTRACE" info l.hwtrace | grep -q '^source: step' ||
	    atf_fail "the archive does not say step"
	# Asked for by name, valgrind is an error, not a fallback.
	run_status 1 env -u HWTRACE_VALGRIND_LIB elsewhere/hwtrace capture \
	    --source valgrind -o v.hwtrace -- "$HWTRACE_PROGS/hello"
	[ ! -e v.hwtrace ] || atf_fail "an archive was written without the tool"
}

atf_init_test_cases()
{
	atf_add_test_case install_capture_index_query
	atf_add_test_case lone_binary_warns_once
}
