#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Copyright (c) 2026 The hwtrace authors
#
# Separate debug files: found at capture (.gnu_debuglink, the build-id
# tree under /usr/lib/debug) and at import (--debug-dir), verified, stored
# in the archive (aux/debug/KEY, hwtrace(5)), listed by info and used by
# the indexer, so that a stripped program whose debug file is gone still
# has its names and lines.  Checked against binutils (objcopy, readelf,
# nm) and against the same program captured unstripped.

. "$(atf_get_srcdir)/../env.sh"
. "$HWTRACE_SRC/tests/lib/hwtr_test.sh"

need_tools()
{
	[ -x "$HWTRACE_PROGS/switch" ] || atf_skip "fixture programs not built"
	need_valgrind
	require_tools objcopy readelf nm
}

# strip_to_debuglink: ./sw, switch stripped of symbols and DWARF, with a
# .gnu_debuglink to ./sw.debug.
strip_to_debuglink()
{
	cp "$HWTRACE_PROGS/switch" sw || atf_fail "cp failed"
	debuglink_strip sw classify
}

# cov_rows ARCHIVE IMAGE: coverage rows of classify and main, without the
# image column.
cov_rows()
{
	"$HWTRACE" query "$1" coverage --image "$2" --format csv > cov.csv ||
	    atf_fail "coverage failed on $1"
	grep -E "^[^,]*,(classify|main)," cov.csv | cut -d, -f2-
}

# stripped_capture NAME [OPTION...]: the switch fixture stripped to a
# .gnu_debuglink (strip_to_debuglink), captured with the valgrind source
# and OPTIONs into NAME.hwtrace.
stripped_capture()
{
	name=$1
	shift
	need_tools
	strip_to_debuglink
	"$HWTRACE" capture "$@" --source valgrind -o "$name.hwtrace" -- ./sw \
	    > /dev/null 2> err || atf_fail "capture failed: $(cat err)"
}

atf_test_case debuglink_offline
debuglink_offline_head() { atf_set descr "a program stripped to a .gnu_debuglink, captured, then its debug file deleted, still has classify's invocations and source lines, as the unstripped program has"; }
debuglink_offline_body()
{
	need_tools
	strip_to_debuglink
	cp sw.debug keep.debug
	"$HWTRACE" capture --source valgrind -o s.hwtrace -- ./sw > /dev/null 2> err ||
	    atf_fail "capture failed: $(cat err)"
	rm sw.debug
	# info names the stored file; it is the debug file, byte for byte.
	atf_check -s exit:0 -o match:"^    debug file aux/debug/bid-$bid \\(" "$HWTRACE" info s.hwtrace
	tar --zstd -xf s.hwtrace "aux/debug/bid-$bid" || atf_fail "tar cannot extract the debug member"
	cmp -s keep.debug "aux/debug/bid-$bid" || atf_fail "the stored debug file differs from sw.debug"
	# classify runs 13 times (switch.c's loop).
	got=$("$HWTRACE" query s.hwtrace func classify --format csv | tail -n +2 | wc -l)
	[ "$got" -eq 13 ] || atf_fail "func classify: expected 13 invocations, got $got"
	# Lines: the same coverage as the unstripped program's capture.
	"$HWTRACE" capture --source valgrind -o u.hwtrace -- "$HWTRACE_PROGS/switch" \
	    > /dev/null 2> err || atf_fail "capture failed: $(cat err)"
	cov_rows u.hwtrace switch > want
	cov_rows s.hwtrace sw > got
	[ "$(wc -l < want)" -eq 2 ] && grep -q "switch.c:[0-9]" want ||
	    atf_fail "unstripped coverage has no lines: $(cat want)"
	cmp -s want got || atf_fail "coverage: unstripped '$(cat want | tr '\n' ';')', stripped '$(cat got | tr '\n' ';')'"
}

atf_test_case no_debug_info
no_debug_info_head() { atf_set descr "capture --no-debug-info stores no debug file: the stripped program's classify has no name"; }
no_debug_info_body()
{
	stripped_capture n --no-debug-info
	atf_check -s exit:0 -o not-match:"debug file" "$HWTRACE" info n.hwtrace
	atf_check -s exit:1 -o empty -e match:"no symbol matches 'classify'" \
	    "$HWTRACE" query n.hwtrace func classify
}

atf_test_case import_debug_dir
import_debug_dir_head() { atf_set descr "import --debug-dir stores a debug file found by build-id or by debuglink name, verified: a file of another build the same name is refused"; }
import_debug_dir_body()
{
	stripped_capture s --no-debug-info
	tar --zstd -xf s.hwtrace streams/0/0000000000000000.chunk ||
	    atf_fail "tar cannot extract the stream"
	pt=streams/0/0000000000000000.chunk
	# By build-id, in the layout of /usr/lib/debug.
	mkdir -p bid/.build-id/$(echo $bid | cut -c1-2)
	mv sw.debug bid/.build-id/$(echo $bid | cut -c1-2)/$(echo $bid | cut -c3-).debug
	"$HWTRACE" import --pt $pt --elf sw --debug-dir bid -o a.hwtrace ||
	    atf_fail "import failed"
	atf_check -s exit:0 -o match:"debug file aux/debug/bid-$bid" "$HWTRACE" info a.hwtrace
	got=$("$HWTRACE" query a.hwtrace func classify --format csv | tail -n +2 | wc -l)
	[ "$got" -eq 13 ] || atf_fail "func classify: expected 13 invocations, got $got"
	# By the .gnu_debuglink name.
	mkdir link
	mv bid/.build-id/*/*.debug link/sw.debug
	"$HWTRACE" import --pt $pt --elf sw --debug-dir link -o b.hwtrace ||
	    atf_fail "import failed"
	atf_check -s exit:0 -o match:"debug file aux/debug/bid-$bid" "$HWTRACE" info b.hwtrace
	# --no-debug-info wins.
	"$HWTRACE" import --pt $pt --elf sw --debug-dir link --no-debug-info -o c.hwtrace ||
	    atf_fail "import failed"
	atf_check -s exit:0 -o not-match:"debug file" "$HWTRACE" info c.hwtrace
	# A debug file of another program under that name is not stored.
	objcopy --only-keep-debug "$HWTRACE_PROGS/loop" link/sw.debug
	"$HWTRACE" import --pt $pt --elf sw --debug-dir link -o d.hwtrace ||
	    atf_fail "import failed"
	atf_check -s exit:0 -o not-match:"debug file" "$HWTRACE" info d.hwtrace
	atf_check -s exit:2 -e match:"empty --debug-dir" \
	    "$HWTRACE" import --pt $pt --elf sw --debug-dir "" -o e.hwtrace
}

atf_test_case debuginfod_file_url
debuginfod_file_url_head() { atf_set descr "with DEBUGINFOD_URLS set, capture asks debuginfod (a file:// server laid out as debuginfod serves: buildid/ID/debuginfo) for a debug file it finds nowhere else; without it, it does not"; }
debuginfod_file_url_body()
{
	need_tools
	strip_to_debuglink
	mkdir -p "srv/buildid/$bid"
	mv sw.debug "srv/buildid/$bid/debuginfo"
	DEBUGINFOD_URLS="file://$PWD/srv" DEBUGINFOD_CACHE_PATH="$PWD/cache" \
	    "$HWTRACE" capture --source valgrind -o d.hwtrace -- ./sw > /dev/null 2> err ||
	    atf_fail "capture failed: $(cat err)"
	atf_check -s exit:0 -o match:"debug file aux/debug/bid-$bid" "$HWTRACE" info d.hwtrace
	got=$("$HWTRACE" query d.hwtrace func classify --format csv | tail -n +2 | wc -l)
	[ "$got" -eq 13 ] || atf_fail "func classify: expected 13 invocations, got $got"
	env -u DEBUGINFOD_URLS "$HWTRACE" capture --source valgrind -o n.hwtrace -- ./sw \
	    > /dev/null 2> err || atf_fail "capture failed: $(cat err)"
	atf_check -s exit:0 -o not-match:"debug file" "$HWTRACE" info n.hwtrace
}

atf_test_case system_debug_files
system_debug_files_head() { atf_set descr "capture stores the debug files the system has under /usr/lib/debug/.build-id (libc6-dbg): ld.so's functions get the names nm reads there"; }
system_debug_files_body()
{
	need_tools
	[ -x "$HWTRACE_PROGS/plt" ] || atf_skip "fixture programs not built"
	ld=$(readlink -f /lib64/ld-linux-x86-64.so.2)
	lbid=$(readelf -n "$ld" | awk '/Build ID/ {print $3}')
	dbg=/usr/lib/debug/.build-id/$(echo $lbid | cut -c1-2)/$(echo $lbid | cut -c3-).debug
	[ -r "$dbg" ] || atf_skip "no debug file for ld.so ($dbg; Debian: libc6-dbg)"
	"$HWTRACE" capture --source valgrind -o p.hwtrace -- "$HWTRACE_PROGS/plt" \
	    > /dev/null 2> err || atf_fail "capture failed: $(cat err)"
	atf_check -s exit:0 -o match:"debug file aux/debug/bid-$lbid" "$HWTRACE" info p.hwtrace
	# ld.so resolves every relocation of the program in _dl_relocate_object.
	nm "$dbg" | grep -q " _dl_relocate_object$" || atf_skip "nm: no _dl_relocate_object in $dbg"
	got=$("$HWTRACE" query p.hwtrace func _dl_relocate_object --format csv | tail -n +2 | wc -l)
	[ "$got" -gt 0 ] || atf_fail "func _dl_relocate_object: no invocation"
}

atf_init_test_cases()
{
	atf_add_test_case debuglink_offline
	atf_add_test_case no_debug_info
	atf_add_test_case import_debug_dir
	atf_add_test_case debuginfod_file_url
	atf_add_test_case system_debug_files
}
