#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# hwtrace import of LLDB Intel PT trace bundles (LLVM's own test bundles in
# the shared corpus): what the archive holds is checked against the bundle's
# JSON, the files' sizes and readelf(1); every malformed bundle is refused
# with its message.

. "$(atf_get_srcdir)/../env.sh"
. "$HWTRACE_SRC/tests/lib/hwtr_test.sh"

LLDB=lldb-intelpt

# Import bundle $2 of directory $1 (relative to the corpus) as $3.
import_bundle()
{
	w=$(pwd)
	( cd "$HWTRACE_CORPUS/$LLDB/$1" && "$HWTRACE" import "$2" -o "$w/$3" ) > out 2> err ||
	    atf_fail "import of $1/$2 failed: $(cat err)"
	! [ -s err ] || atf_fail "import of $1/$2 wrote to stderr: $(cat err)"
	run_status 0 "$HWTRACE" info "$3"
	mv out info
	run_status 0 "$HWTRACE" verify "$3"
}

atf_test_case single_thread
single_thread_head()
{
	atf_set descr "intelpt-trace/trace.json: CPU, the thread's stream, a.out keyed by its build-id and mapped at 0x400000"
	atf_set require.progs "readelf python3"
}
single_thread_body()
{
	require_corpus $LLDB/intelpt-trace
	dir=$HWTRACE_CORPUS/$LLDB/intelpt-trace
	import_bundle intelpt-trace trace.json s.hwtrace
	expect_line info "source: lldb"
	expect_line info "cpu: intel family 6 model 79 stepping 1"
	expect_line info "streams: 1"
	bytes=$(wc -c < "$dir/3842849.trace")
	grep -Eq "^  stream [0-9]+ 'tid 3842849': intel-pt, pid 1234, tid 3842849, cpu -1, [0-9]+ chunks?, $bytes bytes$" info ||
	    atf_fail "expected stream 'tid 3842849' of pid 1234 with $bytes bytes; got: $(cat info)"
	# The uuid of the bundle is the build-id readelf finds.
	key=bid-$(readelf_build_id "$dir/a.out")
	[ "$key" = bid-6aa9a4e26f282f33377d59fece874c715b41261a ] ||
	    atf_fail "readelf gives build-id $key, the bundle's uuid says 6aa9a4e2...261a"
	expect_line info "images: 1"
	expect_line info "  $key a.out (file, $(wc -c < "$dir/a.out") bytes)"
	expected_mappings "$dir/a.out" a.out 4194304 1234 "$key" > want
	n=0
	while IFS= read -r line; do
		expect_line info "$line"
		n=$((n + 1))
	done < want
	expect_line info "mappings: $n"
	expect_line info "  proc-start: 1"
	expect_line info "  thread-start: 1"
}

atf_test_case two_threads
two_threads_head()
{
	atf_set descr "trace_2threads.json: one stream per thread, with their tids"
}
two_threads_body()
{
	require_corpus $LLDB/intelpt-trace
	import_bundle intelpt-trace trace_2threads.json t.hwtrace
	expect_line info "streams: 2"
	for tid in 3842849 3842850; do
		grep -Eq "^  stream [0-9]+ 'tid $tid': intel-pt, pid 1234, tid $tid, cpu -1, [0-9]+ chunks?, 4096 bytes$" info ||
		    atf_fail "expected a stream for tid $tid; got: $(cat info)"
	done
	expect_line info "  thread-start: 2"
}

atf_test_case multi_file
multi_file_head()
{
	atf_set descr "multi-file-no-ld.json: three images keyed by build-id, mapped at their loadAddress as ptxed's --elf FILE:BASE would"
	atf_set require.progs "readelf python3"
}
multi_file_body()
{
	require_corpus $LLDB/intelpt-trace-multi-file
	dir=$HWTRACE_CORPUS/$LLDB/intelpt-trace-multi-file
	import_bundle intelpt-trace-multi-file multi-file-no-ld.json m.hwtrace
	expect_line info "images: 3"
	n=0
	# Load addresses as in expected/multifile.ptxed.cmd (0x7ffff7bd9000 is
	# the bundle's 140737349783552).
	for spec in a.out:0x400000 libfoo.so:0x7ffff7bd9000 libbar.so:0x7ffff79d7000; do
		f=${spec%%:*}
		key=bid-$(readelf_build_id "$dir/$f")
		expect_line info "  $key $f (file, $(wc -c < "$dir/$f") bytes)"
		expected_mappings "$dir/$f" "$f" "${spec#*:}" 815455 "$key" > want
		expect_lines info want
		n=$((n + $(wc -l < want)))
	done
	expect_line info "mappings: $n"
	grep -Eq "^  stream [0-9]+ 'tid 815455': intel-pt, pid 815455, tid 815455, cpu -1, [0-9]+ chunks?, $(wc -c < "$dir/multi-file.trace") bytes$" info ||
	    atf_fail "expected stream 'tid 815455'; got: $(cat info)"
}

# refuse BUNDLE "message after 'hwtrace import: '"
refuse()
{
	w=$(pwd)
	( cd "$HWTRACE_CORPUS/$LLDB/intelpt-trace" && "$HWTRACE" import "$1" -o "$w/o.hwtrace" ) > out 2> err
	rc=$?
	[ $rc -eq 1 ] || atf_fail "$1: expected exit status 1, got $rc; stderr: $(cat err)"
	expect_first err "hwtrace import: $2"
	[ "$(wc -l < err)" -eq 1 ] || atf_fail "$1: expected one line on stderr, got: $(cat err)"
	expect_no_output o.hwtrace
}

atf_test_case malformed_bundles
malformed_bundles_head()
{
	atf_set descr "each malformed bundle of LLDB's tests is refused with a message naming the bad field or file, and nothing is written"
}
malformed_bundles_body()
{
	require_corpus $LLDB/intelpt-trace
	refuse trace_bad.json "'trace_bad.json': processes[0]: expected an object, got an integer"
	refuse trace_bad2.json "'trace_bad2.json': cpuInfo.family: expected an integer, got a string"
	refuse trace_bad3.json "'trace_bad3.json': processes[1].pid: missing"
	refuse trace_bad4.json "'trace_bad4.json': cpuInfo.family: missing"
	refuse trace_bad5.json "'trace_bad5.json': processes[1].pid: missing"
	refuse trace_wrong_cpu.json "'trace_wrong_cpu.json': cpuInfo.family: 2123123 is out of range (0 to 270)"
	refuse trace_bad_image.json "'trace_bad_image.json': processes[0].modules[0].loadAddress: 0xfffff0, but './a.out' is not relocatable (ET_EXEC linked at 0x400000)"
}

atf_test_case bad_files
bad_files_head()
{
	atf_set descr "bundles naming missing or wrong files, or not JSON at all, are refused naming the file; nothing is written"
}
bad_files_body()
{
	require_corpus $LLDB/intelpt-trace
	dir=$HWTRACE_CORPUS/$LLDB/intelpt-trace
	sed 's/"3842849.trace"/"missing.trace"/' "$dir/trace.json" | sed "s|\"a.out\"|\"$dir/a.out\"|g" > b1.json
	run_status 1 "$HWTRACE" import b1.json -o o.hwtrace
	expect_first err "hwtrace import: 'b1.json': processes[0].threads[0].iptTrace: cannot open './missing.trace': No such file or directory"
	expect_no_output o.hwtrace
	sed "s|\"3842849.trace\"|\"$dir/3842849.trace\"|; s|\"a.out\"|\"missing.out\"|g" "$dir/trace.json" > b2.json
	# The corpus lies outside this directory: --allow-outside reads it.
	run_status 1 "$HWTRACE" import --allow-outside b2.json -o o.hwtrace
	grep -q "^hwtrace import: 'b2.json': processes\[0\].modules\[0\]: cannot open './missing.out': .*No such file or directory" err ||
	    atf_fail "expected the missing module named, got: $(cat err)"
	expect_no_output o.hwtrace
	sed "s|\"3842849.trace\"|\"$dir/3842849.trace\"|; s|\"a.out\"|\"$dir/a.out\"|g; s/6AA9A4E2-/6AA9A4E3-/" "$dir/trace.json" > b3.json
	run_status 1 "$HWTRACE" import --allow-outside b3.json -o o.hwtrace
	expect_first err "hwtrace import: 'b3.json': processes[0].modules[0].uuid: 6aa9a4e36f282f33377d59fece874c715b41261a does not match the build-id of '$dir/a.out' (6aa9a4e26f282f33377d59fece874c715b41261a)"
	expect_no_output o.hwtrace
	printf '{ "type": "intel-pt", ' > b4.json
	run_status 1 "$HWTRACE" import b4.json -o o.hwtrace
	grep -q "^hwtrace import: 'b4.json': line 1 column [0-9]*: ." err ||
	    atf_fail "expected a JSON syntax error with line and column, got: $(cat err)"
	expect_no_output o.hwtrace
	run_status 1 "$HWTRACE" import missing.json -o o.hwtrace
	expect_first err "hwtrace import: cannot open 'missing.json': No such file or directory"
	expect_no_output o.hwtrace
	sed 's/"intel-pt"/"perf"/' "$dir/trace.json" > b5.json
	run_status 1 "$HWTRACE" import b5.json -o o.hwtrace
	expect_first err "hwtrace import: 'b5.json': type: 'perf' is not an Intel PT bundle (\"intel-pt\")"
}

atf_init_test_cases()
{
	atf_add_test_case single_thread
	atf_add_test_case two_threads
	atf_add_test_case multi_file
	atf_add_test_case malformed_bundles
	atf_add_test_case bad_files
}
