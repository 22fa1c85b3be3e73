#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Copyright (c) 2026 The hwtrace authors
#
# Processes' and threads' metadata in the database agree with what the
# kernel says: the exit status the shell sees, the program's name and
# path, a forked child's inherited name; and one name for a system call
# in every table.

. "$(atf_get_srcdir)/../env.sh"
. "$HWTRACE_SRC/tests/lib/hwtr_test.sh"

atf_test_case killed_thread_exit
killed_thread_exit_head() { atf_set descr "a thread killed by SIGSEGV has exit 'signal 11' in threads, as in summary and as the shell's status 139 says"; }
killed_thread_exit_body()
{
	"$HWTRACE_PROGS/segv" > /dev/null 2>&1
	native=$?
	[ $native -gt 128 ] || atf_fail "segv exited $native natively"
	want="signal $((native - 128))"
	vgcapture_status segv s.hwtrace
	"$HWTRACE" query s.hwtrace threads --format tsv > th.tsv || atf_fail "threads failed"
	col=$(head -1 th.tsv | tr '\t' '\n' | grep -nx exit | cut -d: -f1)
	got=$(sed -n 2p th.tsv | cut -f"$col")
	[ "$got" = "$want" ] || atf_fail "threads: exit '$got', the shell says '$want'"
	atf_check -s exit:0 -o match:"^exit +$want\$" "$HWTRACE" query s.hwtrace summary
}

atf_test_case launched_process_named
launched_process_named_head() { atf_set descr "the valgrind source names the process it launched: its path and comm (the path's last 15 bytes, as the kernel's comm)"; }
launched_process_named_body()
{
	vgcapture_status segv s.hwtrace
	expect_row s.hwtrace "SELECT path, comm FROM processes" \
	    "$(printf '%s\tsegv' "$(readlink -f "$HWTRACE_PROGS/segv")")" \
	    "processes: path and comm"
	atf_check -s exit:0 -o match:"	segv	" "$HWTRACE" query s.hwtrace threads --format tsv
}

atf_test_case fork_inherits_comm
fork_inherits_comm_head() { atf_set descr "children forked by manyfork that never exec have their parent's name and path, as the kernel gives them"; }
fork_inherits_comm_body()
{
	vgcapture_status manyfork m.hwtrace
	path=$(readlink -f "$HWTRACE_PROGS/manyfork")
	# 20 children; 19 never exec (one execs a missing file: it fails).
	expect_row m.hwtrace "SELECT count(*) FROM processes WHERE ppid = (SELECT pid FROM processes WHERE ppid NOT IN (SELECT pid FROM processes)) AND comm = 'manyfork' AND path = '$path'" \
	    20 "children named manyfork"
	expect_row m.hwtrace "SELECT count(*) FROM threads WHERE name IS NULL" \
	    0 "threads without a name"
}

atf_test_case syscall_one_name
syscall_one_name_head() { atf_set descr "a block ending in a syscall instruction (objdump) is 'syscall' in last, blocks.last_class and branches alike"; }
syscall_one_name_body()
{
	require_tools objdump
	vgcapture_status calls c.hwtrace
	"$HWTRACE" query c.hwtrace last -n 1 --format tsv > last.tsv || atf_fail "last failed"
	[ "$(sed -n 2p last.tsv | awk -F '\t' '{print $NF}')" = syscall ] ||
	    atf_fail "last: expected ends_with syscall, got $(cat last.tsv)"
	# The instruction is a syscall by objdump.
	ip=$("$HWTRACE" query c.hwtrace sql "SELECT printf('%x', last_ip) FROM blocks WHERE last_class = 'syscall' ORDER BY id LIMIT 1" --format tsv | sed -n 2p)
	[ -n "$ip" ] || atf_fail "no block has last_class syscall"
	objdump -d --start-address=0x$ip --stop-address=$((0x$ip + 2)) "$HWTRACE_PROGS/calls" |
	    grep -q "	syscall" || atf_fail "objdump: no syscall at 0x$ip"
	# branches knows the kind by the same name (a user-only trace has
	# no syscall edge: the trace stops at the kernel).
	atf_check -s exit:0 -o ignore "$HWTRACE" query c.hwtrace branches --kind syscall
	atf_check -s exit:0 -o inline:"n\n0\n" "$HWTRACE" query c.hwtrace sql "SELECT count(*) AS n FROM blocks WHERE last_class GLOB 'far-*' AND last_class <> 'far-jump'" --format tsv
}

atf_init_test_cases()
{
	atf_add_test_case killed_thread_exit
	atf_add_test_case launched_process_named
	atf_add_test_case fork_inherits_comm
	atf_add_test_case syscall_one_name
}
