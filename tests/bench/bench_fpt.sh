#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# fpt alone against libipt alone (issue 29 item 4, row P1 of
# docs/PERFORMANCE.md): instructions per CPU-second of the indexer's own
# Intel PT decoder against libipt's block decoder (ixbare's loop), both
# run by fptbare over the same streams and images, alternating, best of
# $BENCH_RUNS each (fptbare -r).  CPU time of the decode loops alone
# (CLOCK_PROCESS_CPUTIME_ID; reading the archive and the images is setup,
# not timed).  fpt runs two ways in each round, two rows per input:
# through its run API as `index` drives it (segfast.c: a memoized run's
# blocks taken at once, run after run from the TNT bits at hand), P1's
# row, goal 8 times libipt's rate; and one fpt_next() item per block,
# for comparison (no goal).  Two inputs:
# - ixgen's walk of progs/calls, one thread of 200 M instructions, seed 7
#   (about 0.8 s of fpt a round: 20 M decoded in 60-100 ms, a time the
#   host moved more than any change did; made once, then kept);
# - the valgrind capture of gzip -6 -c of 8 MiB of /usr/bin (about 67 MB
#   of PT, 1.9 G instructions), the capture issue 29 measured; skipped
#   with the reason when valgrind is absent or the capture fails.
# Before a row is printed, each loop's instruction count must be
# libipt's: they must have decoded the same trace (fptbare fails too when
# a stream fpt decoded to its end counts otherwise).  Protocol:
# tests/bench/run.sh.

set -eu
. "$HWTRACE_SRC/tests/bench/lib.sh"
fptbare="$BENCH_PROGS/fptbare"
gen="$BENCH_PROGS/ixgen"
prog="$HWTRACE_BUILD/progs/calls"
for f in "$fptbare" "$gen" "$prog"; do
	[ -x "$f" ] || { echo "bench_fpt: $f not built" >&2; exit 1; }
done

# fpt_row ARCHIVE WHAT: fptbare over ARCHIVE, then its result lines.
fpt_row() {
	out="$BENCH_DIR/fptbare.out"
	echo "  fptbare -r $BENCH_RUNS -a $1 (load $(cut -d ' ' -f 1-3 /proc/loadavg))" >&2
	st=0
	"$fptbare" -r "$BENCH_RUNS" -a "$1" > "$out" || st=$?
	sed 's/^/  /' "$out" >&2
	if [ "$st" != 0 ]; then
		echo "bench_fpt: fptbare -a $1 failed (exit $st)" >&2
		exit 1
	fi
	if grep -q 'unsupported:' "$out"; then
		echo "bench_fpt: $2: fpt handed streams back as unsupported" \
		    "(above); the rates below cover what it decoded" >&2
	fi
	for loop in runs items; do
		tot="^total $loop: [0-9]* bytes, \([0-9]*\) instructions, libipt \([0-9]*\) ns, fpt \([0-9]*\) instructions \([0-9]*\) ns, .*"
		li=$(sed -n "s/$tot/\1/p" "$out")
		lns=$(sed -n "s/$tot/\2/p" "$out")
		fi_=$(sed -n "s/$tot/\3/p" "$out")
		fns=$(sed -n "s/$tot/\4/p" "$out")
		if [ -z "$li" ] || [ -z "$fns" ]; then
			echo "bench_fpt: $2: no total $loop line in fptbare's" \
			    "output" >&2
			exit 1
		fi
		if [ "$li" != "$fi_" ] || [ "$li" = 0 ]; then
			echo "bench_fpt: $2: libipt decoded $li instructions," \
			    "fpt ($loop) $fi_: expected the same non-zero" \
			    "count" >&2
			exit 1
		fi
		if [ "$loop" = runs ]; then
			what="fpt alone (run API), $2"
			goal=8
		else
			what="fpt alone (fpt_next), $2"
			goal=-
		fi
		result "$what" "M insns/CPU-s" \
		    "$(awk -v n="$fi_" -v ns="$fns" 'BEGIN { printf "%.1f", n * 1000 / ns }')" \
		    "libipt block decoder (fptbare)" \
		    "$(awk -v n="$li" -v ns="$lns" 'BEGIN { printf "%.1f", n * 1000 / ns }')" \
		    higher "$goal"
	done
}

ix="$BENCH_DIR/ixgen-200m.hwtrace"
if [ ! -s "$ix" ] || [ "$gen" -nt "$ix" ]; then
	echo "  generating $ix: ixgen -n 200000000 -t 1 -s 7" >&2
	"$gen" -n 200000000 -t 1 -s 7 "$prog" "$ix.part" >&2
	mv "$ix.part" "$ix"
fi
fpt_row "$ix" "ixgen 200 M insns of progs/calls"

if ! command -v valgrind > /dev/null 2>&1; then
	echo "bench_fpt: gzip row skipped: valgrind is not installed" >&2
	exit 0
fi
input="$BENCH_DIR/input-8m"
if [ ! -s "$input" ]; then
	# 8 MiB of executables, as bench_valgrind.sh and bench_index.sh use.
	cat /usr/bin/* 2>/dev/null | head -c 8388608 > "$input" || true
fi
if [ "$(stat -c %s "$input")" -ne 8388608 ]; then
	echo "bench_fpt: gzip row skipped: could not make 8 MiB of input" \
	    "from /usr/bin" >&2
	exit 0
fi
if ! capture gzip8m gzip -6 -c "$input"; then
	echo "bench_fpt: gzip row skipped (the capture failed, above)" >&2
	exit 0
fi
fpt_row "$BENCH_DIR/gzip8m.hwtrace" "gzip -6 8 MiB valgrind capture"
