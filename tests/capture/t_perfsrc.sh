#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Copyright (c) 2026 The hwtrace authors
#
# The perf source where tracing cannot work: it names what is missing,
# exits 1 and leaves no file.  The PMU directory is this machine's (which
# has no trace hardware, so the case checks that first) or a made-up one
# under HWTRACE_SYSFS.

. "$(atf_get_srcdir)/../env.sh"
. "$HWTRACE_SRC/tests/lib/hwtr_test.sh"

# refused WHAT: capture --source perf must fail, say WHAT, leave nothing.
refused() {
	"$HWTRACE" capture --source perf -o p.hwtrace -- /bin/true >out 2>err
	rc=$?
	[ "$rc" -eq 1 ] || atf_fail "expected exit 1, got $rc: $(oneline err)"
	grep -q "$1" err || atf_fail "expected '$1' in: $(oneline err)"
	[ "$(ls -A | grep -c '^p\.hwtrace')" -eq 0 ] ||
		atf_fail "files left behind: $(ls -A | tr '\n' ' ')"
}

atf_test_case no_pmu_here
no_pmu_here_head() {
	atf_set descr "on a machine without intel_pt or cs_etm, --source perf says so, exits 1 and writes nothing"
}
no_pmu_here_body() {
	for p in intel_pt cs_etm; do
		[ -e "/sys/bus/event_source/devices/$p" ] &&
			atf_skip "this machine has the $p PMU"
	done
	refused "no intel_pt or cs_etm PMU in /sys/bus/event_source/devices"
}

atf_test_case no_pmu_elsewhere
no_pmu_elsewhere_head() {
	atf_set descr "a PMU directory without the trace PMUs is named in the refusal"
}
no_pmu_elsewhere_body() {
	mkdir -p sys/cpu sys/software
	echo 4 >sys/cpu/type
	HWTRACE_SYSFS=$PWD/sys
	export HWTRACE_SYSFS
	refused "no intel_pt or cs_etm PMU in $PWD/sys"
}

atf_test_case bad_type
bad_type_head() {
	atf_set descr "a PMU whose type file is not a number is refused, naming the file"
}
bad_type_body() {
	mkdir -p sys/intel_pt
	echo bogus >sys/intel_pt/type
	HWTRACE_SYSFS=$PWD/sys
	export HWTRACE_SYSFS
	refused "'$PWD/sys/intel_pt/type' holds 'bogus', not a PMU type"
}

atf_test_case bad_format
bad_format_head() {
	atf_set descr "a config field that is not config:LO-HI is refused, naming the file"
}
bad_format_body() {
	mkdir -p sys/cs_etm/format
	echo 9 >sys/cs_etm/type
	echo 'config:12-9' >sys/cs_etm/format/timestamp
	HWTRACE_SYSFS=$PWD/sys
	export HWTRACE_SYSFS
	refused "'$PWD/sys/cs_etm/format/timestamp' holds 'config:12-9', not a config field"
}

atf_test_case paranoid_without_perfmon
paranoid_without_perfmon_head() {
	atf_set descr "perf_event_paranoid above 1 without CAP_PERFMON is named"
}
paranoid_without_perfmon_body() {
	p=$(cat /proc/sys/kernel/perf_event_paranoid)
	[ "$p" -gt 1 ] || atf_skip "perf_event_paranoid is $p here"
	# As root, drop every capability and run as nobody.
	run=
	if [ "$(id -u)" -eq 0 ]; then
		command -v setpriv >/dev/null 2>&1 || atf_skip "no setpriv to drop root"
		run="setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all --bounding-set=-all"
	fi
	d=$(mktemp -d /tmp/hwtrace-perfsrc.XXXXXX)
	mkdir -p "$d/sys/intel_pt/format"
	echo 8 >"$d/sys/intel_pt/type"
	echo 'config:0' >"$d/sys/intel_pt/format/pt"
	chmod -R a+rX "$d"
	chmod a+w "$d"
	(cd "$d" && HWTRACE_SYSFS=$d/sys $run "$HWTRACE" capture --source perf \
	    -o p.hwtrace -- /bin/true) >out 2>err
	rc=$?
	left=$(ls -A "$d" | grep -c '^p\.hwtrace')
	rm -rf "$d"
	[ "$rc" -eq 1 ] || atf_fail "expected exit 1, got $rc: $(oneline err)"
	grep -q "kernel.perf_event_paranoid is $p and this process has neither CAP_PERFMON" err ||
		atf_fail "expected the paranoid setting named: $(oneline err)"
	[ "$left" -eq 0 ] || atf_fail "files left behind"
}

atf_init_test_cases() {
	atf_add_test_case no_pmu_here
	atf_add_test_case no_pmu_elsewhere
	atf_add_test_case bad_type
	atf_add_test_case bad_format
	atf_add_test_case paranoid_without_perfmon
}
