#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Copyright (c) 2026 The hwtrace authors
#
# The fast slice of the conformance matrix (docs/CONFORMANCE.md): the
# cells of conform.sh marked "fast", checked against callgrind, gdb, nm,
# addr2line and counts known by construction; make conform runs them all.

. "$(atf_get_srcdir)/../env.sh"

atf_test_case slice
slice_head() {
	atf_set descr "calls, instructions, names and bt against callgrind, gdb, nm, addr2line"
}
slice_body() {
	command -v valgrind >/dev/null 2>&1 || atf_skip "valgrind is absent"
	command -v clang >/dev/null 2>&1 || atf_skip "clang is absent"
	command -v gdb >/dev/null 2>&1 || atf_skip "gdb is absent"
	sh "$HWTRACE_SRC/tests/conform/conform.sh" "$HWTRACE_BUILD" fast \
	    >out 2>&1
	rc=$?
	cat out
	[ $rc -eq 0 ] || atf_fail "conform.sh: $(grep -E '^FAIL|failed' out |
	    tr '\n' '|')"
}

atf_init_test_cases() {
	atf_add_test_case slice
}
