#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Copyright (c) 2026 The hwtrace authors
#
# Issue 31, item 3: answers say what the trace lost.  A program built here
# calls f() PHASES x N times (counts known by construction); captures of
# it lose data where the test puts the loss: a ring that keeps only its
# end, an archive the test cuts inside a trace chunk, and a stream whose
# bytes the test overwrites before packing it with a valid frame (hwtrace
# import --pt).  Each answer that depends on the lost part must say so
# (the table's "note:" line, JSON's "lower_bound", a warning with CSV) and
# its counts must really be lower than the program's; a clean capture and
# a range away from the loss say nothing.

. "$(atf_get_srcdir)/../env.sh"
. "$HWTRACE_SRC/tests/lib/hwtr_test.sh"

PHASES=4
N=20000
TOTAL=80000

# The program: f() called $1 x $2 times, a sleep of $3 ms after each
# round (so that the capture flushes a chunk per round).
build_phases()
{
	require_tools cc
	cat > phases.c <<'EOF'
#include <stdlib.h>
#include <time.h>

static volatile unsigned int sink;

__attribute__((noinline)) static void
f(unsigned int i)
{
	sink += i;
}

int
main(int argc, char **argv)
{
	int rounds = atoi(argv[1]), n = atoi(argv[2]), ms = atoi(argv[3]);
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	int r, i;

	for (r = 0; r < rounds; r++) {
		for (i = 0; i < n; i++)
			f((unsigned int)i);
		if (ms > 0)
			nanosleep(&ts, NULL);
	}
	return (0);
}
EOF
	cc -O1 -g -static -o phases phases.c 2>cc.err ||
	    atf_skip "cannot build a static program: $(head -c 300 cc.err)"
}

# capture ARCHIVE OPTIONS... -- ARGS: the valgrind source.
capture()
{
	a=$1
	shift
	"$HWTRACE" capture --source valgrind --force -o "$a" "$@" \
	    > capture.out 2> capture.err ||
	    atf_fail "capture $a failed: $(oneline capture.err 600)"
}

# fcount ARCHIVE: f's invocations (func, CSV rows).
fcount()
{
	"$HWTRACE" query "$1" func f --format csv 2>/dev/null | tail -n +2 | wc -l
}

# has_note FILE WHAT: the table in FILE ends with a note holding WHAT.
has_note()
{
	tail -n 1 "$1" | grep -q "^note: .*$2" ||
	    atf_fail "$1: expected a last line 'note: ...$2...', got: $(tail -n 1 "$1")"
}

no_note()
{
	! grep -q "^note:\|lost data\|lower_bound\|\"gaps\"" "$1" ||
	    atf_fail "$1: expected nothing about lost data, got: $(grep 'note:\|lost\|gaps' "$1" | head -1)"
}

# lost_verbs ARCHIVE WHAT: the counting verbs' tables end with WHAT.
lost_verbs()
{
	for v in "func f" "calls" "coverage" "hot" "tree" "branches" \
	    "summary" "annotate f"; do
		"$HWTRACE" query "$1" $v > v.out 2> v.err ||
		    atf_fail "query $v failed: $(tr "\n" " " < v.err)"
		has_note v.out "counts are lower bounds: the trace lost data in .*$2"
		cp v.out "lost-$(echo $v | tr ' ' _).out"
	done
}

atf_test_case clean_capture_says_nothing
clean_capture_says_nothing_head()
{
	atf_set descr "a capture that lost nothing: f runs 80000 times and no verb, format or folded export mentions lost data"
}
clean_capture_says_nothing_body()
{
	need_valgrind
	build_phases
	capture clean.hwtrace -- ./phases $PHASES $N 0
	got=$(fcount clean.hwtrace)
	[ "$got" -eq $TOTAL ] || atf_fail "func f: expected $TOTAL invocations (by construction), got $got"
	for v in "func f" calls coverage hot tree branches summary bt last \
	    "annotate f"; do
		"$HWTRACE" query clean.hwtrace $v > v.out 2> v.err ||
		    atf_fail "query $v failed: $(tr "\n" " " < v.err)"
		no_note v.out
		no_note v.err
	done
	"$HWTRACE" query clean.hwtrace calls -n 3 --format json > j.out 2> j.err
	no_note j.out
	no_note j.err
	"$HWTRACE" query clean.hwtrace export --folded f.folded > e.out
	! grep -q '\[gap\]' f.folded || atf_fail "folded stacks of a clean capture have a [gap] frame"
}

atf_test_case ring_start_lost
ring_start_lost_head()
{
	atf_set descr "a ring capture lost its start: f's count is below 80000, the counting verbs end with a note naming the ring, JSON rows say lower_bound, CSV warns on stderr, folded stacks get a [gap] root; a range after the start says nothing"
}
ring_start_lost_body()
{
	need_valgrind
	build_phases
	capture ring.hwtrace --mode ring --buffer 4K -- ./phases $PHASES $N 0
	got=$(fcount ring.hwtrace)
	[ "$got" -gt 0 ] && [ "$got" -lt $TOTAL ] ||
	    atf_fail "func f: expected between 1 and $((TOTAL - 1)) invocations in a 4K ring, got $got"
	lost_verbs ring.hwtrace "1 place (thread 1 before its first block: lost [0-9]* bytes.*ring overwritten)"
	"$HWTRACE" query ring.hwtrace func f --format json > j.out 2> j.err
	n=$(grep -c '"function": "f".*"lower_bound": true, "gaps": 1}' j.out)
	[ "$n" -eq "$got" ] || atf_fail "json: expected $got rows with lower_bound, got $n: $(head -3 j.out)"
	grep -q "counts are lower bounds" j.err || atf_fail "json: no note on stderr: $(tr "\n" " " < j.err)"
	"$HWTRACE" query ring.hwtrace func f --format csv > c.out 2> c.err
	[ "$(tail -n +2 c.out | wc -l)" -eq "$got" ] || atf_fail "csv: rows other than f's: $(tail -2 c.out)"
	grep -q "^hwtrace query: counts are lower bounds" c.err ||
	    atf_fail "csv: expected the note on stderr, got: $(tr "\n" " " < c.err)"
	# Exit status unchanged.
	atf_check -s exit:0 -o ignore -e ignore "$HWTRACE" query ring.hwtrace func f --format tsv
	"$HWTRACE" query ring.hwtrace export --folded r.folded > e.out || atf_fail "export failed"
	has_note e.out "counts are lower bounds"
	grep -qx '\[gap\] 1' r.folded || atf_fail "folded: expected a root '[gap] 1' line, got: $(grep gap r.folded)"
	# A range that starts after the ring's start is whole.
	insns=$("$HWTRACE" query ring.hwtrace sql "SELECT insns FROM threads WHERE id = 1" --format csv | tail -1)
	"$HWTRACE" query ring.hwtrace calls --from $((insns / 2)) --to $((insns - 10)) > r.out
	no_note r.out
	"$HWTRACE" query ring.hwtrace calls --from 0 --to $((insns / 2)) > r0.out
	has_note r0.out "counts are lower bounds"
	# last shows contiguous blocks at the end: nothing to say.
	"$HWTRACE" query ring.hwtrace last -n 5 > l.out
	no_note l.out
}

atf_test_case truncated_archive_lost_end
truncated_archive_lost_end_head()
{
	atf_set descr "an archive cut inside its fourth trace chunk lost the end: f's count is below 80000 and the verbs say the archive is truncated; bt names its frames as entered before the loss"
}
truncated_archive_lost_end_body()
{
	need_valgrind
	require_tools jq zstd
	build_phases
	capture full.hwtrace -- ./phases $PHASES $N 1300
	# The frame offsets from the table of contents (hwtrace(5), END).
	tar --zstd -xOf full.hwtrace end.json > end.json ||
	    atf_fail "cannot read end.json"
	nchunks=$(jq '[.members[] | select(.name | endswith(".chunk"))] | length' end.json)
	[ "$nchunks" -ge 4 ] || atf_skip "the capture wrote $nchunks chunks, not one per round"
	off=$(jq '[.members[] | select(.name | endswith(".chunk"))][3].offset' end.json)
	head -c $((off + 20)) full.hwtrace > cut.hwtrace
	got=$(fcount cut.hwtrace)
	[ "$(fcount full.hwtrace)" -eq $TOTAL ] || atf_fail "func f on the whole archive: expected $TOTAL"
	[ "$got" -gt 0 ] && [ "$got" -lt $TOTAL ] ||
	    atf_fail "func f: expected fewer than $TOTAL invocations after the cut, got $got"
	lost_verbs cut.hwtrace "thread 1 after its last block: the archive is truncated"
	"$HWTRACE" query cut.hwtrace bt > bt.out
	has_note bt.out "the stack may be wrong: thread 1 frames 0, 1, .* entered before the trace lost data"
	# JSON marks the same frames, every one of them here.
	"$HWTRACE" query cut.hwtrace bt --format json > bt.json 2> bt.err
	nf=$(grep -c '"call": [0-9]' bt.json)
	nb=$(grep -c '"gaps": 1, "before_gap": true}' bt.json)
	[ "$nf" -gt 0 ] && [ "$nb" -eq "$nf" ] ||
	    atf_fail "bt json: expected all $nf frames with before_gap, got $nb: $(oneline bt.json 400)"
	"$HWTRACE" query cut.hwtrace last -n 3 > l.out
	has_note l.out "may not .* be the last"
	# The whole archive says nothing.
	"$HWTRACE" query full.hwtrace bt > fbt.out
	no_note fbt.out
}

atf_test_case corrupt_chunk_decode_error
corrupt_chunk_decode_error_head()
{
	atf_set descr "a stream whose bytes were overwritten, packed with valid frames: decode errors, f's count below the clean packing's 80000, a note at the instruction of the error, and none for a range before it"
}
corrupt_chunk_decode_error_body()
{
	need_valgrind
	build_phases
	capture clean.hwtrace -- ./phases $PHASES $N 0
	mkdir x && tar --zstd -xf clean.hwtrace -C x streams ||
	    atf_fail "cannot extract the stream"
	cat x/streams/0/*.chunk > s.pt
	cp s.pt bad.pt
	size=$(wc -c < s.pt)
	# 16 bytes of PSBEND/invalid opcodes in the second quarter.
	printf '\002\377\002\377\002\377\002\377\002\377\002\377\002\377\002\377' |
	    dd of=bad.pt bs=1 seek=$((size / 4)) conv=notrunc 2>/dev/null
	cmp -s s.pt bad.pt && atf_fail "the stream was not changed"
	"$HWTRACE" import --pt s.pt --elf ./phases -o good.hwtrace > i.out 2>&1 ||
	    atf_fail "import failed: $(tr "\n" " " < i.out)"
	"$HWTRACE" import --pt bad.pt --elf ./phases -o bad.hwtrace > i.out 2>&1 ||
	    atf_fail "import failed: $(tr "\n" " " < i.out)"
	[ "$(fcount good.hwtrace)" -eq $TOTAL ] ||
	    atf_fail "func f on the clean packing: expected $TOTAL, got $(fcount good.hwtrace)"
	"$HWTRACE" query good.hwtrace func f > g.out
	no_note g.out
	got=$(fcount bad.hwtrace)
	[ "$got" -lt $TOTAL ] || atf_fail "func f: expected fewer than $TOTAL with a damaged stream, got $got"
	errs=$("$HWTRACE" query bad.hwtrace sql "SELECT count(*) FROM events WHERE kind = 'decode-error'" --format csv | tail -1)
	[ "$errs" -ge 1 ] || atf_fail "no decode error in the damaged stream"
	lost_verbs bad.hwtrace "decode error"
	at=$("$HWTRACE" query bad.hwtrace sql "SELECT min(insn) FROM events WHERE kind = 'decode-error' AND insn > 0" --format csv | tail -1)
	[ -n "$at" ] && [ "$at" -gt 10 ] || atf_skip "the first decode error is at the start ($at)"
	grep -q "before instruction $at:" lost-calls.out ||
	    atf_fail "calls: the note does not name instruction $at: $(tail -1 lost-calls.out)"
	"$HWTRACE" query bad.hwtrace calls --from 0 --to $((at - 2)) > r.out
	no_note r.out
	"$HWTRACE" query bad.hwtrace calls --from 0 --to $((at + 2)) > r2.out
	has_note r2.out "decode error"
}

atf_init_test_cases()
{
	atf_add_test_case clean_capture_says_nothing
	atf_add_test_case ring_start_lost
	atf_add_test_case truncated_archive_lost_end
	atf_add_test_case corrupt_chunk_decode_error
}
