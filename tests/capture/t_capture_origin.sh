#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Copyright (c) 2026 The hwtrace authors
#
# The whole capture with each sideband origin: perf_event (the default
# here) and the /proc fallback (forced with HWTRACE_SIDEBAND=proc).  Both
# must decode to the tracer's ground truth (ptcheck, libipt), store the
# same images, and `hwtrace info` must name the origin used.

. "$(atf_get_srcdir)/../env.sh"

PTCHECK=$HWTRACE_BUILD/tests/capture/ptcheck

# capture ORIGIN PROG: capture PROG with ground truth into ORIGIN-PROG.hwtrace
capture() {
	origin=$1 prog=$2
	if [ "$origin" = proc ]; then
		HWTRACE_SIDEBAND=proc "$HWTRACE" capture --source step --ground-truth \
		    -o "$origin-$prog.hwtrace" -- "$HWTRACE_PROGS/$prog" \
		    >/dev/null 2>"$origin-$prog.err"
	else
		"$HWTRACE" capture --source step --ground-truth \
		    -o "$origin-$prog.hwtrace" -- "$HWTRACE_PROGS/$prog" \
		    >/dev/null 2>"$origin-$prog.err"
	fi
	rc=$?
	[ $rc -eq 0 ] || atf_fail "capture of $prog ($origin): exit $rc: $(cat "$origin-$prog.err")"
	"$HWTRACE" info "$origin-$prog.hwtrace" >"$origin-$prog.info" ||
		atf_fail "hwtrace info $origin-$prog.hwtrace failed"
}

check_origin() {
	origin=$1 prog=$2 want=$3
	grep -q "^sideband origin: $want\$" "$origin-$prog.info" ||
		atf_fail "$prog: expected 'sideband origin: $want' in hwtrace info, got '$(grep origin "$origin-$prog.info")'"
	"$PTCHECK" "$origin-$prog.hwtrace" >"$origin-$prog.check" 2>&1 ||
		atf_fail "$prog ($want): libipt decode differs from ground truth: $(cat "$origin-$prog.check")"
}

# The image keys (build-ids) an archive stores, sorted.
images() {
	sed -n 's/^  \(bid-[0-9a-f]*\) .*/\1/p' "$1" | sort
}

compare() {
	prog=$1 n=$2
	if grep -q "^sideband origin: perf_event\$" "perf-$prog.info"; then
		images "perf-$prog.info" >perf.img
		images "proc-$prog.info" >proc.img
		cmp -s perf.img proc.img ||
			atf_fail "$prog: perf_event stored images $(echo $(cat perf.img)), /proc stored $(echo $(cat proc.img))"
	fi
	[ "$(images "proc-$prog.info" | wc -l)" -ge "$n" ] ||
		atf_fail "$prog: expected at least $n images with /proc, got $(images "proc-$prog.info" | wc -l)"
}

require_tools() {
	[ -x "$PTCHECK" ] || atf_fail "ptcheck not built at $PTCHECK"
	"$HWTRACE" capture --help >/dev/null 2>&1 ||
		atf_skip "hwtrace capture is not available in this build"
}

atf_test_case forkexec_both_origins
forkexec_both_origins_head() {
	atf_set descr "fork+exec captured with perf_event and /proc sideband: both decode to ground truth, same images"
}
forkexec_both_origins_body() {
	require_tools
	capture perf forkexec
	capture proc forkexec
	check_origin perf forkexec "perf_event\|proc"
	check_origin proc forkexec proc
	# forkexec, hello, [vdso]
	compare forkexec 3
}

atf_test_case dlopen_both_origins
dlopen_both_origins_head() {
	atf_set descr "a dynamic PIE with dlopen captured with both sideband origins: ld.so, libc and the dlopen'd library stored"
}
dlopen_both_origins_body() {
	require_tools
	capture perf dlopen
	capture proc dlopen
	check_origin perf dlopen "perf_event\|proc"
	check_origin proc dlopen proc
	# dlopen, ld.so, libc, libdlfix.so, [vdso]
	compare dlopen 5
}

atf_init_test_cases() {
	atf_add_test_case forkexec_both_origins
	atf_add_test_case dlopen_both_origins
}
