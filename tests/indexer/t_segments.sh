#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Segments: streams cut at PSBs, decoded apart and stitched in order must
# give the database a decoder that went through each stream in one piece
# gives.  HWTRACE_IX_SEGMENT=4096 cuts every trace here into many
# segments; the reference is the same archive indexed with segments larger
# than any stream (one per stream).  Compared with sqlite3 .dump, on
# synthetic traces of a real binary (ixgen), damaged ones, step and
# Valgrind captures of the fixture programs and the LLDB corpus captures.

. "$(atf_get_srcdir)/../env.sh"
. "$HWTRACE_SRC/tests/lib/hwtr_test.sh"

GEN="$HWTRACE_BUILD/bench/ixgen"
PROG="$HWTRACE_PROGS/calls"
WHOLE=1099511627776	# 1 TiB: one segment per stream

# calls is a virtual table: plain sqlite3 reads it with the extension.
q()
{
	sqlite3 -batch -noheader -cmd ".load $HWTRACE_BUILD/hwtrace_sqlite" "$@"
}

# index SEGSIZE JOBS ARCHIVE DB: index with that segment size; the number
# of segments goes to $nseg.
index()
{
	HWTRACE_IX_SEGMENT=$1 "$HWTRACE" index -j "$2" -o "$4" "$3" \
	    >out 2>err || atf_fail "index $3 (segments of $1 bytes, -j $2) failed: $(tr '\n' '|' < err)"
	nseg=$(sed -n "s/^hwtrace index: '.*, \([0-9]*\) segments; .*$/\1/p" err)
	[ -n "$nseg" ] || atf_fail "no summary line with segments: $(tr '\n' '|' < err)"
}

# same ARCHIVE [MINSEG [SIZE]]: cut into segments of SIZE bytes (4096;
# at least MINSEG of them, default 2 per stream) at -j 1 and -j 2, the
# dumps equal the unsplit one; -j 1 and -j 2 give the same file.
same()
{
	size=${3:-4096}
	index $WHOLE 1 "$1" whole.db
	nwhole=$nseg
	q whole.db .dump > whole.sql
	index "$size" 1 "$1" cut1.db
	min=${2:-$((nwhole * 2))}
	[ "$nseg" -ge "$min" ] ||
	    atf_fail "$1: expected at least $min segments of 4096 bytes, got $nseg"
	q cut1.db .dump > cut1.sql
	cmp -s whole.sql cut1.sql ||
	    atf_fail "$1: $nseg segments give another database than $nwhole: $(diff whole.sql cut1.sql | head -6 | tr '\n' '|')"
	index "$size" 2 "$1" cut2.db
	cmp -s cut1.db cut2.db ||
	    atf_fail "$1: -j 1 and -j 2 database files differ with $nseg segments"
}

atf_test_case synthetic
synthetic_head()
{
	atf_set descr "3 threads of a real binary's control flow in ~100 segments: same database as unsplit, at -j 1 and -j 2"
	atf_set timeout 180
}
synthetic_body()
{
	ixgen_archive t.hwtrace -n 300000 -t 3
	same t.hwtrace 60
	[ "$(q cut1.db 'SELECT count(*) FROM threads WHERE blocks > 0')" = 3 ] ||
	    atf_fail "expected 3 decoded threads"
}

atf_test_case call_across_segments
call_across_segments_head()
{
	atf_set descr "calls entered in one segment and left in a later one keep their rows (parent, depth, positions, times, instructions)"
	atf_set timeout 180
}
call_across_segments_body()
{
	ixgen_archive t.hwtrace -n 200000 -t 1
	same t.hwtrace 20
	# A segment of 4096 bytes holds a few thousand blocks: a call that
	# spans more than a fifth of the thread spans several segments.
	sql="SELECT c.id, c.parent, c.depth, c.symbol, c.entry_kind, c.exit_kind, c.entry_seq, c.exit_seq, c.insns, c.self_insns, c.entry_tsc, c.exit_tsc FROM calls c JOIN threads t ON t.id = c.thread WHERE c.exit_seq - c.entry_seq > t.blocks / 5 ORDER BY c.id"
	q whole.db "$sql" > whole.calls
	q cut1.db "$sql" > cut.calls
	[ "$(wc -l < whole.calls)" -ge 2 ] ||
	    atf_fail "expected calls spanning several segments, got: $(cat whole.calls)"
	cmp -s whole.calls cut.calls ||
	    atf_fail "long calls differ: $(diff whole.calls cut.calls | head -4 | tr '\n' '|')"
	# Their children too: the depth below them is carried across.
	expect_some cut1.db "SELECT count(*) FROM calls WHERE depth >= 2" "no nested call found"
}

atf_test_case decode_error_in_segment
decode_error_in_segment_head()
{
	atf_set descr "bit flips inside segments: decode errors recorded at the same offsets and decoding resumes; -j changes nothing"
	atf_set timeout 180
}
decode_error_in_segment_body()
{
	ixgen_archive d.hwtrace -n 300000 -t 2 -c flip
	index $WHOLE 1 d.hwtrace whole.db
	index 4096 1 d.hwtrace cut1.db
	[ "$nseg" -ge 40 ] || atf_fail "expected 40 segments or more, got $nseg"
	index 4096 2 d.hwtrace cut2.db
	cmp -s cut1.db cut2.db ||
	    atf_fail "-j 1 and -j 2 database files differ with $nseg segments"
	# A flip just before a segment's PSB can throw a whole-stream
	# decoder off past that PSB (libipt keeps its state across a PSB
	# it reads while decoding) where the segment's decoder, starting at
	# the PSB, decodes correctly: the errors elsewhere are the same.
	sql="SELECT thread || ' ' || offset || ' ' || detail FROM events WHERE kind = 'decode-error' ORDER BY 1"
	q whole.db "$sql" > whole.err
	q cut1.db "$sql" > cut.err
	n=$(wc -l < whole.err)
	[ "$n" -gt 4 ] || atf_fail "expected decode errors, got $n"
	same=$(comm -12 whole.err cut.err | wc -l)
	[ "$same" -ge $((n * 7 / 10)) ] ||
	    atf_fail "only $same of $n decode errors at the same offsets: $(diff whole.err cut.err | head -6 | tr '\n' '|')"
	for t in 1 2; do
		expect_some cut1.db "SELECT count(*) FROM events e WHERE thread = $t AND kind = 'decode-error' AND seq < (SELECT blocks FROM threads WHERE id = $t)" "thread $t: nothing decoded after a decode error"
	done
}

atf_test_case garbage_across_segments
garbage_across_segments_head()
{
	atf_set descr "garbage over a tenth of each stream (across segment starts): same database as unsplit"
	atf_set timeout 180
}
garbage_across_segments_body()
{
	ixgen_archive d.hwtrace -n 300000 -t 2 -c garbage
	same d.hwtrace 40
	expect_some cut1.db "SELECT count(*) FROM events WHERE kind = 'decode-error'" "no decode error recorded"
	expect_some cut1.db "SELECT sum(undecoded_bytes) FROM streams" "no undecoded bytes counted"
}

atf_test_case truncated_in_segment
truncated_in_segment_head()
{
	atf_set descr "a stream cut in the middle of a packet: same database as unsplit"
	atf_set timeout 180
}
truncated_in_segment_body()
{
	ixgen_archive d.hwtrace -n 300000 -t 2 -c truncate
	same d.hwtrace 40
}

# capture SOURCE PROG: a fixture captured by a source, cut and not.
capture()
{
	[ -x "$HWTRACE_PROGS/$2" ] || atf_skip "fixture $2 is not built"
	"$HWTRACE" capture --help >/dev/null 2>&1 ||
	    atf_skip "hwtrace capture is not available"
	if [ "$1" = valgrind ]; then
		command -v valgrind >/dev/null 2>&1 ||
		    atf_skip "valgrind is not installed"
	fi
	# A PSB+ every 256 bytes: small captures, many segments.
	"$HWTRACE" capture --source "$1" --psb-period 256 -o "$2.hwtrace" \
	    -- "$HWTRACE_PROGS/$2" >cout 2>cerr
	[ -f "$2.hwtrace" ] ||
	    atf_fail "$2: capture wrote no archive: $(tr '\n' '|' < cerr)"
	same "$2.hwtrace" "" 512
	n=$(q cut1.db "SELECT count(*) FROM events WHERE kind = 'decode-error'")
	[ "$n" = 0 ] || atf_fail "$2: $n decode errors"
}

atf_test_case step_fixtures
step_fixtures_head()
{
	atf_set descr "step captures of the calls, recurse and threads fixtures: same database cut into segments"
	atf_set timeout 300
}
step_fixtures_body()
{
	for p in calls recurse threads; do
		capture step $p
	done
}

atf_test_case valgrind_fixtures
valgrind_fixtures_head()
{
	atf_set descr "Valgrind captures of the calls and threads fixtures: same database cut into segments"
	atf_set timeout 300
}
valgrind_fixtures_body()
{
	for p in calls threads; do
		capture valgrind $p
	done
}

atf_test_case lldb_corpus
lldb_corpus_head()
{
	atf_set descr "the LLDB Intel PT corpus captures: same database cut into segments"
	atf_set timeout 180
}
lldb_corpus_body()
{
	dir="$HWTRACE_CORPUS/lldb-intelpt"
	[ -d "$dir" ] || atf_skip "corpus not found at $dir"
	for b in intelpt-trace/trace.json \
	    intelpt-trace-multi-file/multi-file-no-ld.json; do
		[ -f "$dir/$b" ] || atf_fail "$dir/$b missing"
		"$HWTRACE" import --lldb -o c.hwtrace "$dir/$b" >out 2>err ||
		    atf_fail "import $b: $(cat err)"
		# A 4 KiB ring with PSBs 32 to 64 bytes apart.
		same c.hwtrace 2 64
	done
}

atf_init_test_cases()
{
	atf_add_test_case synthetic
	atf_add_test_case call_across_segments
	atf_add_test_case decode_error_in_segment
	atf_add_test_case garbage_across_segments
	atf_add_test_case truncated_in_segment
	atf_add_test_case step_fixtures
	atf_add_test_case valgrind_fixtures
	atf_add_test_case lldb_corpus
}
