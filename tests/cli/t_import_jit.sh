#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Copyright (c) 2026 The hwtrace authors
#
# hwtrace import of a perf.data whose JIT wrote perf's jitdump (issue
# 32): node --perf-prof under perf record -k 1 (software event: no trace
# hardware here), as recorded (the dump's marker mapping) and after perf
# inject --jit (jitted-PID-N.so files).  What is checked comes from
# elsewhere: the code loads are counted by a jitdump reader of this test
# (python3 struct, after perf's jitdump-specification.txt), the code
# bytes are those perf inject wrote into its .so files (readelf's .text),
# their times those perf script prints for its MMAP2 records.

. "$(atf_get_srcdir)/../env.sh"
. "$HWTRACE_SRC/tests/lib/hwtr_test.sh"

# record_node: run node on a hot function under perf record -k 1 into
# p.data, its jitdump jit-PID.dump here; PID in ./pid.
record_node()
{
	require_tools perf node python3 readelf tar
	cat >hot.js <<'EOF'
function hot(n) {
	let s = 0;
	for (let i = 0; i < n; i++)
		s = (s * 31 + i) % 1000003;
	return s;
}
let t = 0, calls = 0;
for (let k = 0; k < 300; k++) {
	t += hot(20000);
	calls++;
}
console.log(calls);
EOF
	perf record -k 1 -e cpu-clock -o p.data node --perf-prof \
	    --interpreted-frames-native-stack hot.js >node.out 2>perf.err ||
	    atf_skip "perf record failed (kernel.perf_event_paranoid $(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null)): $(oneline perf.err)"
	set -- jit-*.dump
	[ -f "$1" ] || atf_skip "node --perf-prof wrote no jit-PID.dump"
	p=${1#jit-}
	echo "${p%.dump}" >pid
}

# jd_loads DUMP: the JIT_CODE_LOAD records of DUMP, one line each:
# code_addr (hex), timestamp, code_size; to ./loads.  Its count to stdout.
jd_loads()
{
	python3 - "$1" <<'EOF' || atf_fail "the test's jitdump reader failed on $1"
import struct, sys
d = open(sys.argv[1], 'rb').read()
magic, ver, hsize = struct.unpack_from('<III', d, 0)
assert magic == 0x4A695444 and ver == 1, (hex(magic), ver)
off, n = hsize, 0
with open('loads', 'w') as out:
    while off + 16 <= len(d):
        rid, size, ts = struct.unpack_from('<IIQ', d, off)
        if size < 16 or off + size > len(d):
            break
        if rid == 0:
            pid, tid, vma, addr, csize, idx = struct.unpack_from('<IIQQQQ', d, off + 16)
            out.write('%x %d %d\n' % (addr, ts, csize))
            n += 1
        elif rid == 3:
            break
        off += size
print(n)
EOF
}

# regions FILE: the code regions of FILE (hwtrace(5) jit/code-PID.bin),
# one line each: address (hex), from, until, length, sha1 of the bytes;
# to ./regions.  Their count to stdout.
regions()
{
	python3 - "$1" <<'EOF' || atf_fail "$1 is not a code-region file as hwtrace(5) describes it"
import hashlib, struct, sys
d = open(sys.argv[1], 'rb').read()
assert d[:8] == b'HWTRCODE' and struct.unpack_from('<II', d, 8) == (1, 0)
off, n = 16, 0
with open('regions', 'w') as out:
    while off < len(d):
        addr, frm, until, ln, fl = struct.unpack_from('<QQQII', d, off)
        code = d[off + 32:off + 32 + ln]
        assert len(code) == ln and fl == 0
        out.write('%x %d %d %d %s\n' % (addr, frm, until, ln,
            hashlib.sha1(code).hexdigest()))
        off += 32 + ln
        n += 1
print(n)
EOF
}

# so_text: for every jitted-*.so perf inject wrote, as perf script
# prints its MMAP2 record of pj.data: address (hex), time (ns), .text
# size, sha1 of the .text bytes readelf locates; to ./so_text.
so_text()
{
	perf script -i pj.data --show-mmap-events --ns 2>/dev/null |
	    grep 'PERF_RECORD_MMAP2.*/jitted-[0-9]*-[0-9]*\.so$' >mmaps ||
	    atf_fail "perf script lists no MMAP2 record of a jitted .so in pj.data"
	awk '{ print $NF }' mmaps | xargs readelf -S -W >sections 2>&1 ||
	    atf_fail "readelf -S failed on the jitted .so files: $(oneline sections 500)"
	python3 - <<'EOF' || atf_fail "could not read perf script's MMAP2 lines or readelf's sections"
import hashlib, re
text, cur = {}, None
for line in open('sections'):
    m = re.match(r'^File: (\S+)', line)
    if m:
        cur = m.group(1)
    m = re.search(r'\]\s+\.text\s+PROGBITS\s+[0-9a-f]+\s+([0-9a-f]+)\s+([0-9a-f]+)', line)
    if m and cur is not None:
        text[cur] = (int(m.group(1), 16), int(m.group(2), 16))
with open('so_text', 'w') as out:
    for line in open('mmaps'):
        m = re.search(r' (\d+)\.(\d{9}): PERF_RECORD_MMAP2 \S+ \[0x([0-9a-f]+)\(0x[0-9a-f]+\) .* (\S+)$', line)
        ns = int(m.group(1)) * 10**9 + int(m.group(2))
        f = m.group(4)
        o, sz = text[f]
        b = open(f, 'rb').read()[o:o + sz]
        assert len(b) == sz
        out.write('%s %d %d %s\n' % (m.group(3), ns, sz, hashlib.sha1(b).hexdigest()))
EOF
}

# check_regions NAME: NAME.x holds jit/code-PID.bin with one region per
# code load of the dump (count, address, time, size), and info names the
# dump with that count.
check_regions()
{
	pid=$(cat pid)
	nl=$(jd_loads jit-$pid.dump)
	[ "$nl" -gt 0 ] || atf_fail "node's jitdump has no code load"
	[ -f "$1.x/jit/code-$pid.bin" ] ||
	    atf_fail "no member jit/code-$pid.bin in $1.hwtrace: $(ls -R "$1.x" | head -c 500)"
	cmp -s "$1.x/jit/jit-$pid.dump" jit-$pid.dump ||
	    atf_fail "jit/jit-$pid.dump is not node's jitdump byte for byte"
	nr=$(regions "$1.x/jit/code-$pid.bin")
	[ "$nr" -eq "$nl" ] ||
	    atf_fail "expected $nl code regions (JIT_CODE_LOAD records in the dump), got $nr"
	# Address, time and size of each load; none ended (no address reused).
	awk '{ print $1, $2, $3 }' loads | sort >want
	awk '{ print $1, $2, $4 }' regions | sort >got
	expect_same want got "code regions (address, time, size) against the dump's loads"
	awk '$3 != 18446744073709551615' regions >ended
	[ ! -s ended ] || atf_fail "expected every region valid to the end (no address loaded twice), got ended ones: $(oneline ended)"
	expect_line "$1.info" "  jit/jit-$pid.dump: $nl symbols, $nl code loads, 0 moves"
	expect_line "$1.info" "  no trace: the recording holds no AUX area trace (Intel PT, CoreSight ETM); the archive has its sideband, images and JIT code only"
	expect_line "$1.info" "streams: 0"
}

atf_test_case injected
injected_head()
{
	atf_set descr "perf record -k 1 plus perf inject --jit of node --perf-prof: one code region per JIT_CODE_LOAD, its bytes those of perf's jitted .so, at its MMAP2 time, the .so files not stored again"
	atf_set timeout 300
}
injected_body()
{
	record_node
	perf inject --jit -i p.data -o pj.data >inject.out 2>&1 ||
	    atf_fail "perf inject --jit failed: $(oneline inject.out)"
	import_x pj pj.data
	check_regions pj
	so_text
	[ "$(wc -l <so_text)" -eq "$(wc -l <loads)" ] ||
	    atf_fail "expected one jitted .so per code load ($(wc -l <loads)), perf inject mapped $(wc -l <so_text)"
	sort so_text >want
	awk '{ print $1, $2, $4, $5 }' regions | sort >got
	expect_same want got "code regions (address, time, size, sha1 of the bytes) against perf inject's jitted .so .text and MMAP2 times"
	# The jitted .so files are the regions' bytes: not mappings, not images.
	! grep jitted pj.info >jitted ||
	    atf_fail "expected no jitted .so in the archive's images or mappings, got: $(oneline jitted)"
}

atf_test_case marker
marker_head()
{
	atf_set descr "perf record -k 1 of node --perf-prof, not injected: the jitdump found by its marker mapping, also when moved beside the perf.data file"
	atf_set timeout 300
}
marker_body()
{
	record_node
	perf script -i p.data --show-mmap-events 2>/dev/null |
	    grep -q "PERF_RECORD_MMAP2.* /.*/jit-$(cat pid)\.dump$" ||
	    atf_fail "perf script shows no marker MMAP2 of jit-$(cat pid).dump in p.data"
	import_x p p.data
	check_regions p
	# Moved with its perf.data: found beside it.
	mkdir moved && mv p.data jit-$(cat pid).dump moved/ || atf_fail "mv"
	import_x m moved/p.data
	mv moved/jit-$(cat pid).dump . || atf_fail "mv back"
	check_regions m
	# Gone: a caveat names it, the import goes on.
	mv jit-$(cat pid).dump gone.dump
	import_x g moved/p.data
	grep -q "^  process $(cat pid): its jitdump '.*/jit-$(cat pid)\.dump' was not found (--symfs, the recorded path, beside the perf.data file): its JIT code is not in the archive$" g.info ||
	    atf_fail "expected a caveat naming the missing jitdump, got: $(oneline g.info)"
	[ ! -e g.x/jit ] || atf_fail "expected no jit/ members without the dump, got $(ls g.x/jit)"
}

atf_test_case reload
reload_head()
{
	atf_set descr "a code load at an address loaded before ends the older region at its time; a cut or a foreign jitdump is refused naming the file"
	atf_set timeout 300
}
reload_body()
{
	record_node
	pid=$(cat pid)
	mv jit-$pid.dump orig.dump
	# The dump's first load again, 1000 ns after the last record, with
	# its first code byte changed (known by construction).
	python3 - orig.dump jit-$pid.dump <<'EOF' || atf_fail "could not make the reloading dump"
import struct, sys
d = bytearray(open(sys.argv[1], 'rb').read())
hsize = struct.unpack_from('<I', d, 8)[0]
off, first, last = hsize, None, 0
while off + 16 <= len(d):
    rid, size, ts = struct.unpack_from('<IIQ', d, off)
    if rid == 0 and first is None:
        first = (off, size, ts)
    last = max(last, ts)
    off += size
o, s, t0 = first
rec = bytearray(d[o:o + s])
struct.pack_into('<Q', rec, 8, last + 1000)
nul = rec.index(0, 56)
rec[nul + 1] ^= 0xff
open(sys.argv[2], 'wb').write(bytes(d) + bytes(rec))
open('expect', 'w').write('%x %d %d\n' % (struct.unpack_from('<Q', rec, 32)[0], t0, last + 1000))
EOF
	import_x r p.data
	nl=$(jd_loads jit-$pid.dump)
	nr=$(regions r.x/jit/code-$pid.bin)
	[ "$nr" -eq "$nl" ] || atf_fail "expected $nl regions, got $nr"
	read addr t0 t1 <expect
	awk -v a=$addr -v t=$t1 '$1 == a && $3 == t' regions >ended
	[ "$(wc -l <ended)" -eq 1 ] ||
	    atf_fail "expected one region at 0x$addr ending at $t1 (the reload), got: $(grep "^$addr " regions | tr '\n' '|')"
	awk -v a=$addr -v t=$t1 '$1 == a && $2 == t && $3 == 18446744073709551615' regions >new
	[ "$(wc -l <new)" -eq 1 ] ||
	    atf_fail "expected the reload at 0x$addr valid from $t1 to the end, got: $(grep "^$addr " regions | tr '\n' '|')"
	[ "$(awk '{ print $5 }' ended)" != "$(awk '{ print $5 }' new)" ] ||
	    atf_fail "expected the two versions at 0x$addr to differ in their bytes"

	# Cut inside a record: refused, naming the file and the offset.
	head -c $(($(wc -c <orig.dump) - 3)) orig.dump >jit-$pid.dump
	"$HWTRACE" import p.data -o bad.hwtrace >out 2>err &&
	    atf_fail "a cut jitdump imported"
	grep -q "^hwtrace import: 'p.data': jitdump .*/jit-$pid\.dump offset 0x[0-9a-f]*: record of type [0-9]*: total_size [0-9]* is not within 16 and the [0-9]* bytes left$" err ||
	    atf_fail "expected an error naming the cut jitdump and its offset, got: $(oneline err)"
	expect_no_output bad.hwtrace
	# Another process's dump under this name: refused.
	python3 - orig.dump jit-$pid.dump <<'EOF'
import struct, sys
d = bytearray(open(sys.argv[1], 'rb').read())
struct.pack_into('<I', d, 20, struct.unpack_from('<I', d, 20)[0] + 1)
open(sys.argv[2], 'wb').write(d)
EOF
	"$HWTRACE" import p.data -o bad.hwtrace >out 2>err &&
	    atf_fail "a jitdump of another process imported"
	grep -q "^hwtrace import: 'p.data': jitdump '.*/jit-$pid\.dump' is of process $((pid + 1)), the recording maps it in process $pid$" err ||
	    atf_fail "expected an error naming the other process, got: $(oneline err)"
	# TSC timestamps and no TIME_CONV to convert them: refused.
	python3 - orig.dump jit-$pid.dump <<'EOF'
import struct, sys
d = bytearray(open(sys.argv[1], 'rb').read())
struct.pack_into('<Q', d, 32, 1)
open(sys.argv[2], 'wb').write(d)
EOF
	if perf report -D -i p.data 2>/dev/null | grep -q PERF_RECORD_TIME_CONV; then
		import_x t p.data
	else
		"$HWTRACE" import p.data -o bad.hwtrace >out 2>err &&
		    atf_fail "a TSC-stamped jitdump imported without TIME_CONV"
		grep -q "has TSC timestamps (JITDUMP_FLAGS_ARCH_TIMESTAMP) and the recording has no TIME_CONV record" err ||
		    atf_fail "expected the TSC refusal, got: $(oneline err)"
	fi
}

atf_test_case perf_map
perf_map_head()
{
	atf_set descr "perf record of node --perf-basic-prof: the perf map of the process with anonymous code is stored as jit/perf-PID.map, from /tmp or beside the perf.data file"
	atf_set timeout 300
}
perf_map_body()
{
	require_tools perf node tar
	echo 'function hot(n) { let s = 0; for (let i = 0; i < n; i++) s = (s * 31 + i) % 1000003; return s; }
let t = 0; for (let k = 0; k < 300; k++) t += hot(20000); console.log(t);' >hot.js
	perf record -k 1 -e cpu-clock -o p.data node --perf-basic-prof \
	    hot.js >node.out 2>perf.err ||
	    atf_skip "perf record failed: $(oneline perf.err)"
	# The process perf saw mapping anonymous executable memory.
	pid=$(perf script -i p.data --show-mmap-events 2>/dev/null |
	    sed -n 's|.*PERF_RECORD_MMAP2 \([0-9]*\)/[0-9]*: .* //anon$|\1|p' |
	    head -n 1)
	[ -n "$pid" ] || atf_fail "perf script shows no //anon mapping in p.data"
	map=/tmp/perf-$pid.map
	[ -s "$map" ] || atf_skip "node --perf-basic-prof wrote no $map"
	cp "$map" want.map || atf_fail "cp $map"
	import_x p p.data
	cmp -s "p.x/jit/perf-$pid.map" want.map ||
	    atf_fail "expected jit/perf-$pid.map to be node's $map, got: $(ls p.x/jit 2>&1 | tr '\n' ' ')"
	expect_line p.info "  jit/perf-$pid.map: $(grep -c . want.map) symbols"
	# Moved beside the perf.data file: found there.
	mv "$map" "perf-$pid.map" || atf_fail "mv $map"
	import_x b p.data
	cmp -s "b.x/jit/perf-$pid.map" want.map ||
	    atf_fail "expected jit/perf-$pid.map from beside p.data, got: $(ls b.x/jit 2>&1 | tr '\n' ' ')"
}

atf_init_test_cases()
{
	atf_add_test_case perf_map
	atf_add_test_case injected
	atf_add_test_case marker
	atf_add_test_case reload
}
