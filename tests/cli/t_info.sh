#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# hwtrace info and hwtrace verify on good, truncated, corrupted and refused
# archives.  The archives are made here by "hwtrace import --raw" from
# files whose sizes and digests are known independently (wc, sha256sum).

. "$(atf_get_srcdir)/../env.sh"
. "$HWTRACE_SRC/tests/lib/hwtr_test.sh"

# A 64 KiB random trace (incompressible, so zstd stores it as is and a
# byte of it can be found and damaged) and a 100-byte code image.
make_archive()
{
	head -c 65536 /dev/urandom > trace.pt
	head -c 100 /dev/urandom > code.bin
	run_status 0 "$HWTRACE" import --cpu 6/79/1 --nom-freq 4 \
	    --mtc-freq 3 --cpuid-0x15.eax 2 --cpuid-0x15.ebx 168 \
	    --raw code.bin:0x1000 --pt trace.pt -o a.hwtrace
	! [ -s err ] || atf_fail "import wrote to stderr: $(cat err)"
	! [ -s out ] || atf_fail "import wrote to stdout: $(cat out)"
	[ -f a.hwtrace ] || atf_fail "import did not write a.hwtrace"
	! [ -e a.hwtrace.partial ] || atf_fail "import left a.hwtrace.partial"
	key=sha256-$(sha256sum code.bin | cut -d' ' -f1)
}

atf_test_case info_complete
info_complete_head()
{
	atf_set descr "info describes a complete archive line by line"
	atf_set require.progs "sha256sum"
}
info_complete_body()
{
	make_archive
	size=$(wc -c < a.hwtrace)
	run_status 0 "$HWTRACE" info a.hwtrace
	expect_first out "archive: a.hwtrace"
	expect_line out "format: 1.0"
	expect_line out "status: complete, $size bytes"
	expect_line out "source: import-raw"
	expect_line out "cpu: intel family 6 model 79 stepping 1"
	expect_line out "command: unknown"
	expect_line out "start: unknown"
	expect_line out "sideband origin: import"
	expect_line out "caveats: 1"
	expect_line out "streams: 1"
	expect_line out "    pt: cpuid-0x15.eax 2, cpuid-0x15.ebx 168, nom-freq 4, mtc-freq 3, cyc-thresh 0, psb-freq 0, options 0x0"
	expect_line out "images: 1"
	expect_line out "  $key code.bin (memory, 100 bytes)"
	expect_line out "mappings: 1"
	expect_line out "  pid -1: 0x1000-0x1064 pgoff 0x0 r-x code.bin [$key]"
	expect_line out "sideband: 1 record"
	expect_line out "  mmap: 1"
	expect_line out "lost: 0 trace bytes, 0 sideband records"
	expect_line out "exit: unknown"
	expect_line out "warnings: 0"
	grep -Eq "^  stream [0-9]+ 'pt trace.pt': intel-pt, pid -1, tid -1, cpu -1, [0-9]+ chunks?, 65536 bytes$" out ||
	    atf_fail "expected the stream line of trace.pt with 65536 bytes; got: $(cat out)"
}

atf_test_case info_json
info_json_head()
{
	atf_set descr "info --json is one valid JSON object with the documented keys and values"
	atf_set require.progs "python3 sha256sum"
}
info_json_body()
{
	make_archive
	run_status 0 "$HWTRACE" info --json a.hwtrace
	# Python's json module is the independent parser.
	python3 - "$key" <<'PY' > check 2>&1 || atf_fail "JSON check failed: $(cat check)"
import json, sys
key = sys.argv[1]
with open("out") as f:
    text = f.read()
d = json.loads(text)
def want(what, got, exp):
    if got != exp:
        sys.exit("%s: expected %r, got %r" % (what, exp, got))
want("lines", text.count("\n"), 1)
want("keys", sorted(d), sorted(["archive", "format", "complete", "file_size",
    "valid_end", "truncated_why", "capture", "streams", "images", "jit",
    "code", "mappings", "sideband", "lost", "exit", "warnings"]))
want("format", d["format"], "1.0")
want("complete", d["complete"], True)
want("truncated_why", d["truncated_why"], None)
want("jit and code members (an import of raw files has none)", (d["jit"], d["code"]), ([], []))
c = d["capture"]
want("source", c["source"], "import-raw")
want("cpu", c["cpu"]["vendor"] + "/%d/%d/%d" % (c["cpu"]["family"], c["cpu"]["model"], c["cpu"]["stepping"]), "intel/6/79/1")
want("argv", c["argv"], [])
want("streams", len(d["streams"]), 1)
s = d["streams"][0]
want("stream format", s["format"], "intel-pt")
want("stream bytes", s["bytes"], 65536)
want("stream pid/tid/cpu", (s["pid"], s["tid"], s["cpu"]), (-1, -1, -1))
want("pt", (s["pt"]["nom_freq"], s["pt"]["mtc_freq"], s["pt"]["cpuid_15_eax"], s["pt"]["cpuid_15_ebx"]), (4, 3, 2, 168))
want("images", [(i["key"], i["kind"], i["size"]) for i in d["images"]], [(key, "memory", 100)])
want("mappings", [(m["pid"], m["addr"], m["len"], m["pgoff"], m["prot"], m["image"]) for m in d["mappings"]], [(-1, 0x1000, 100, 0, "r-x", key)])
want("sideband", d["sideband"], {"records": 1, "types": {"mmap": 1}})
want("lost", d["lost"], {"bytes": 0, "records": 0})
want("exit kind", d["exit"]["kind"], "unknown")
want("warnings", d["warnings"], [])
PY
}

atf_test_case json_escaping
json_escaping_head()
{
	atf_set descr "info --json escapes quotes, backslashes and control characters in names"
	atf_set require.progs "python3"
}
json_escaping_body()
{
	name=$(printf 'we"ird\\na\tme.bin')
	head -c 16 /dev/urandom > "$name"
	printf 'x' > t.pt
	run_status 0 "$HWTRACE" import --raw "$name:0x1000" --pt t.pt -o e.hwtrace
	run_status 0 "$HWTRACE" info --json e.hwtrace
	python3 -c '
import json, sys
d = json.load(open("out"))
p = d["images"][0]["path"]
if p != sys.argv[1]:
    sys.exit("expected path %r, got %r" % (sys.argv[1], p))
' "$name" > check 2>&1 || atf_fail "$(cat check)"
}

atf_test_case truncated
truncated_head()
{
	atf_set descr "a truncated archive: info describes it (exit 0) and says where it was cut; verify fails (exit 1) saying so"
}
truncated_body()
{
	make_archive
	size=$(wc -c < a.hwtrace)
	# Cuts inside the trace chunk, which is most of the file; where an
	# archive cut after its final member stands is the reader's business.
	for cut in $((size / 3)) $((size / 2)) $((size * 2 / 3)); do
		head -c $cut a.hwtrace > cut.hwtrace
		run_status 0 "$HWTRACE" info cut.hwtrace
		grep -Eq "^status: truncated at byte [0-9]+ of $cut \(.+\)$" out ||
		    atf_fail "cut at $cut: expected 'status: truncated at byte N of $cut (why)', got: $(sed -n 3p out)"
		expect_line out "format: 1.0"
		run_status 1 "$HWTRACE" verify cut.hwtrace
		grep -Eq "^hwtrace verify: 'cut.hwtrace': truncated at byte [0-9]+ of $cut: .+$" err ||
		    atf_fail "cut at $cut: expected 'hwtrace verify: 'cut.hwtrace': truncated at byte N of $cut: why', got: $(cat err)"
		! [ -s out ] || atf_fail "verify printed to stdout: $(cat out)"
	done
	# Cut in the middle of the trace, the final member is gone.
	head -c $((size / 2)) a.hwtrace > cut.hwtrace
	run_status 0 "$HWTRACE" info cut.hwtrace
	expect_line out "exit: unknown (truncated)"
	expect_line out "streams: 1"
	# The JSON says the same.
	run_status 0 "$HWTRACE" info --json cut.hwtrace
	grep -q '"complete":false' out || atf_fail "expected \"complete\":false in $(cat out)"
	grep -q '"exit":null' out || atf_fail "expected \"exit\":null in $(cat out)"
}

atf_test_case verify_good
verify_good_head()
{
	atf_set descr "verify says ok with the counts of a good archive"
}
verify_good_body()
{
	make_archive
	run_status 0 "$HWTRACE" verify a.hwtrace
	grep -Eq "^ok: 'a.hwtrace': format 1.0, [0-9]+ members, 1 streams, [0-9]+ chunks, 65536 trace bytes, 1 images, 1 sideband records$" out ||
	    atf_fail "expected 'ok: 'a.hwtrace': format 1.0, N members, 1 streams, N chunks, 65536 trace bytes, 1 images, 1 sideband records', got: $(cat out)"
	! [ -s err ] || atf_fail "verify wrote to stderr: $(cat err)"
	return 0
}

atf_test_case corrupted
corrupted_head()
{
	atf_set descr "a damaged trace chunk: verify fails naming the member; info still describes the archive"
	atf_set require.progs "python3"
}
corrupted_body()
{
	make_archive
	# zstd stores random bytes verbatim: find the middle of the trace in
	# the archive and flip one byte there.
	python3 - <<'PY' || atf_fail "could not find the trace bytes in the archive"
import sys
a = bytearray(open("a.hwtrace", "rb").read())
t = open("trace.pt", "rb").read()
i = a.find(t[30000:30064])
if i < 0:
    sys.exit(1)
a[i + 10] ^= 0xff
open("bad.hwtrace", "wb").write(a)
PY
	run_status 1 "$HWTRACE" verify bad.hwtrace
	grep -Eq "^hwtrace verify: 'bad.hwtrace': .*streams/" err ||
	    atf_fail "expected verify to name the damaged stream member (streams/...), got: $(cat err)"
	run_status 0 "$HWTRACE" info bad.hwtrace
	expect_line out "streams: 1"
}

atf_test_case refused
refused_head()
{
	atf_set descr "files that are not archives, or missing, are refused with exit 1 naming the file"
}
refused_body()
{
	run_status 1 "$HWTRACE" info missing.hwtrace
	grep -q "^hwtrace info: cannot open 'missing.hwtrace': .*No such file or directory" err ||
	    atf_fail "expected 'hwtrace info: cannot open 'missing.hwtrace': ...No such file or directory', got: $(cat err)"
	! [ -s out ] || atf_fail "info printed to stdout: $(cat out)"
	run_status 1 "$HWTRACE" verify missing.hwtrace
	grep -q "^hwtrace verify: cannot open 'missing.hwtrace': .*No such file or directory" err ||
	    atf_fail "expected 'hwtrace verify: cannot open 'missing.hwtrace': ...', got: $(cat err)"
	printf 'this is not an archive\n' > text.hwtrace
	run_status 1 "$HWTRACE" info text.hwtrace
	grep -q "^hwtrace info: cannot open 'text.hwtrace': ." err ||
	    atf_fail "expected 'hwtrace info: cannot open 'text.hwtrace': why', got: $(cat err)"
	run_status 1 "$HWTRACE" verify text.hwtrace
	: > empty.hwtrace
	run_status 1 "$HWTRACE" info empty.hwtrace
	[ "$(grep -o "'empty.hwtrace'" err | wc -l)" = 1 ] && grep -q "empty\$" err ||
	    atf_fail "expected 'empty.hwtrace' named once and why, got: $(cat err)"
}

atf_test_case warnings_listed
warnings_listed_head()
{
	atf_set descr "a member this version does not know is skipped and listed among the warnings, in text and JSON"
	atf_set require.progs "python3 zstd tar"
}
warnings_listed_body()
{
	make_archive
	# Keep every member but end.json (offsets from its table of
	# contents), then add a member of a later version as its own zstd
	# frame, made by tar's and zstd's own tools.
	python3 - <<'PY' || atf_fail "could not craft the archive"
import json, subprocess, tarfile
a = open("a.hwtrace", "rb").read()
end = json.loads(subprocess.run(["tar", "--zstd", "-xOf", "a.hwtrace", "end.json"],
    check=True, capture_output=True).stdout)
last = max(end["members"], key=lambda m: m["offset"])
data = b'{"from": "a later hwtrace"}\n'
ti = tarfile.TarInfo("future/x.json")
ti.size = len(data)
open("member.tar", "wb").write(ti.tobuf(format=tarfile.PAX_FORMAT) + data +
    b"\0" * (-len(data) % 512))
frame = subprocess.run(["zstd", "-q", "--check", "-c", "member.tar"],
    check=True, capture_output=True).stdout
open("w.hwtrace", "wb").write(a[:last["offset"] + last["csize"]] + frame)
PY
	run_status 0 "$HWTRACE" info w.hwtrace
	expect_line out "warnings: 1"
	expect_line out "  unknown member 'future/x.json' skipped"
	expect_line out "streams: 1"
	run_status 0 "$HWTRACE" info --json w.hwtrace
	grep -q '"warnings":\["unknown member '"'"'future/x.json'"'"' skipped"\]}$' out ||
	    atf_fail "expected the warning in the JSON, got: $(cat out)"
}

atf_init_test_cases()
{
	atf_add_test_case warnings_listed
	atf_add_test_case info_complete
	atf_add_test_case info_json
	atf_add_test_case json_escaping
	atf_add_test_case truncated
	atf_add_test_case verify_good
	atf_add_test_case corrupted
	atf_add_test_case refused
}
