#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Copyright (c) 2026 The hwtrace authors
#
# JIT symbol files collected at capture (issue 32): node, run under the
# valgrind source with --perf-basic-prof, writes /tmp/perf-PID.map; the
# archive must hold it byte for byte as member jit/perf-PID.map (read back
# with tar, not hwtrace), and hwtrace info must count its lines as symbols.
# End to end (issue 32 item 4): a hot JS function is named by that map in
# func, with as many calls as the script counts.

. "$(atf_get_srcdir)/../env.sh"
. "$HWTRACE_SRC/tests/lib/hwtr_test.sh"

need_node()
{
	command -v node >/dev/null 2>&1 ||
	    atf_skip "node is not installed (Debian package nodejs)"
}

# node_capture NODEOPT... <SCRIPT: hot.js, the function hotAdd(a, b) then
# the lines SCRIPT, run by node --perf-basic-prof --single-threaded
# NODEOPT... under capture --source valgrind into j.hwtrace; node's
# output in ./out.  Skips without Valgrind or node.
node_capture()
{
	need_valgrind
	need_node
	{
		echo 'function hotAdd(a, b) { return (a * 31 + b) | 0; }'
		cat
	} >hot.js
	"$HWTRACE" capture --source valgrind -o j.hwtrace -- node \
	    --perf-basic-prof --single-threaded "$@" hot.js >out 2>err ||
		atf_fail "capture: expected exit 0, got $? ($(oneline err))"
}

atf_test_case perf_map_stored
perf_map_stored_head()
{
	atf_set descr "node's perf map is stored in the archive and counted"
	atf_set timeout 300
}
perf_map_stored_body()
{
	node_capture <<'JS'
let s = 0;
for (let i = 0; i < 2000; i++) s = hotAdd(s, i);
console.log(s);
JS
	grep -qx 765768680 out ||
		atf_fail "node printed '$(oneline out)', expected 765768680"
	m=$(members j.hwtrace | grep '^jit/perf-[0-9]*\.map$')
	[ -n "$m" ] || atf_fail "expected a member jit/perf-PID.map, got: $(members j.hwtrace | grep -v "^streams/" | tr "\n" " " | head -c 400)"
	map=/tmp/${m#jit/}
	[ -f "$map" ] || atf_fail "expected $map, which node wrote, to exist"
	tar -xOf j.hwtrace "$m" >stored 2>/dev/null ||
		atf_fail "tar cannot extract $m"
	cmp -s stored "$map" ||
		atf_fail "$m differs from $map ($(wc -c <stored) vs $(wc -c <"$map") bytes)"
	grep -q ' JS:[~^*]*hotAdd ' stored ||
		atf_fail "expected hotAdd in the stored map"
	lines=$(wc -l <"$map")
	rm -f "$map"
	"$HWTRACE" info j.hwtrace >info 2>&1 ||
		atf_fail "info: expected exit 0 ($(oneline info))"
	grep -qx "  $m: $lines symbols" info ||
		atf_fail "info: expected '  $m: $lines symbols', got: $(grep -A2 '^jit' info | tr '\n' '|')"
	grep -qx 'jit files: 1' info ||
		atf_fail "info: expected 'jit files: 1', got: $(grep '^jit' info)"
}

atf_test_case node_func_count
node_func_count_head()
{
	atf_set descr "a hot JS function under node: named by its perf map in func, one call per call the script counts"
	atf_set timeout 900
}
node_func_count_body()
{
	# V8 keeps hotAdd in its interpreter (--no-opt --no-sparkplug), and
	# --interpreted-frames-native-stack gives it its own copy of the
	# interpreter's entry in anonymous memory, named in the perf map:
	# each call of hotAdd enters that code once.
	node_capture --no-opt --no-sparkplug \
	    --interpreted-frames-native-stack <<'JS'
let s = 0, n = 0;
for (let i = 0; i < 2000; i++) { s = hotAdd(s, i); n++; }
console.log(s, n);
JS
	n=$(awk '{print $2}' out)
	[ "$n" = 2000 ] || atf_fail "node printed '$(oneline out)', expected a count of 2000"
	m=$(members j.hwtrace | grep '^jit/perf-[0-9]*\.map$')
	[ -n "$m" ] && rm -f "/tmp/${m#jit/}"
	"$HWTRACE" index -q -o j.db j.hwtrace 2>err ||
		atf_fail "index: expected exit 0, got $? ($(oneline err))"
	"$HWTRACE" query --format tsv j.db func '*hotAdd*' >func 2>err ||
		atf_fail "func: expected exit 0 ($(oneline err))"
	got=$(tail -n +2 func | awk -F '\t' '$4 ~ /^JS:~hotAdd / {c++} END {print c + 0}')
	[ "$got" = "$n" ] || atf_fail "func: expected $n calls of JS:~hotAdd (the count node printed), got $got; names: $(tail -n +2 func | awk -F '\t' '{print $4}' | sort | uniq -c | head -5 | tr '\n' '|')"
	errs=$(sqlite3 j.db 'SELECT sum(errors) FROM streams' 2>&1)
	[ "$errs" = 0 ] || atf_fail "index: expected 0 decode errors with the code regions, got $errs"
}

atf_init_test_cases()
{
	atf_add_test_case perf_map_stored
	atf_add_test_case node_func_count
}
