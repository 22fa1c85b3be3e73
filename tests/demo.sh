#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# make demo: show hwtrace end to end.  It records a bundled program that
# crashes (capture, the step source), describes the archive (info), decodes
# it (index) and shows the last blocks before the crash (query); then packs
# a foreign capture (import) and checks archives (verify), whole and cut.
# Usage: tests/demo.sh BUILD_DIR
set -eu

B=${1:-build}
HWTRACE=$(cd "$B" && pwd)/hwtrace
SRC=$(cd "$(dirname "$0")/.." && pwd)
CORPUS=${HWTRACE_CORPUS:-$SRC/../shared/corpus}/lldb-intelpt/intelpt-trace
WORK=$(cd "$B" && pwd)/demo
rm -rf "$WORK"
mkdir -p "$WORK"

step() { printf '\n==> %s\n' "$*"; }
run() { printf '$ %s\n' "$*"; "$@"; }

step "Record a program that crashes: tests/progs/demo.c looks up an item that is not there and uses the NULL it got"
printf '$ %s\n' "$HWTRACE capture --source step -o $WORK/demo.hwtrace -- $B/progs/demo"
rc=0
"$HWTRACE" capture --source step -o "$WORK/demo.hwtrace" -- "$(cd "$B" && pwd)/progs/demo" || rc=$?
echo "(hwtrace exited $rc: 128 + SIGSEGV, the program's own fate)"
[ "$rc" -eq 139 ] || { echo "demo: expected exit status 139, got $rc" >&2; exit 1; }

step "What the archive holds"
run "$HWTRACE" info "$WORK/demo.hwtrace"

step "Decode it into a database"
run "$HWTRACE" index -o "$WORK/demo.db" "$WORK/demo.hwtrace"

step "The last blocks before the crash"
run "$HWTRACE" query "$WORK/demo.db" last -n 12

step "... and the last instructions"
run "$HWTRACE" query "$WORK/demo.db" last --insns -n 12

step "One page for the bug report: open $WORK/demo.html in a browser (offline)"
run "$HWTRACE" report -o "$WORK/demo.html" "$WORK/demo.db"

if [ -r "$CORPUS/trace.json" ]; then
	step "Import a real Intel PT capture: LLDB's test bundle (one thread of a.out, traced on a Broadwell CPU)"
	run "$HWTRACE" import "$CORPUS/trace.json" -o "$WORK/lldb.hwtrace"
	ARCHIVE=$WORK/lldb.hwtrace
else
	step "The shared corpus is absent: make a tiny raw Intel PT trace here"
	# A PSB+ (PSB, PSBEND), TIP.PGE to 0x1000, TNT (taken, not taken),
	# TIP.PGD:
	# packet bytes as the Intel SDM defines them.
	printf '\002\202\002\202\002\202\002\202\002\202\002\202\002\202\002\202\002\043' > "$WORK/tiny.pt"
	printf '\161\000\020\000\000\000\000\014\001' >> "$WORK/tiny.pt"
	# The code it runs: cmp; jne back; ret.
	printf '\110\071\310\165\373\303' > "$WORK/tiny.bin"
	run "$HWTRACE" import --cpu 6/79/1 --raw "$WORK/tiny.bin:0x1000" \
	    --pt "$WORK/tiny.pt" -o "$WORK/tiny.hwtrace"
	ARCHIVE=$WORK/tiny.hwtrace
fi

step "Describe the archive: capture identity, streams, images, mappings"
run "$HWTRACE" info "$ARCHIVE"

step "Check every checksum and cross-reference"
run "$HWTRACE" verify "$ARCHIVE"

step "It is a POSIX tar of zstd frames: any tar lists it"
run tar --zstd -tvf "$ARCHIVE"

step "A capture cut short still reads: cut the last fifth off the archive"
size=$(wc -c < "$ARCHIVE")
head -c $((size * 4 / 5)) "$ARCHIVE" > "$WORK/cut.hwtrace"
printf '$ %s\n' "$HWTRACE info $WORK/cut.hwtrace | grep -E '^(status|streams|  stream|images|sideband:|exit)'"
"$HWTRACE" info "$WORK/cut.hwtrace" | grep -E '^(status|streams|  stream|images|sideband:|exit)'
printf '$ %s\n' "$HWTRACE verify $WORK/cut.hwtrace"
if "$HWTRACE" verify "$WORK/cut.hwtrace"; then
	echo "demo: verify accepted a truncated archive" >&2
	exit 1
fi

step "Done: the archives are in $WORK"
