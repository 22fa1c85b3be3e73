#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# The step trace source (issue 3), side by side in one run:
# - instructions traced per second by `hwtrace capture` (step source,
#   stream mode) against a bare PTRACE_SINGLESTEP loop (stepbare) over the
#   same program (goal: >= 0.80);
# - PT bytes written per instruction over the fixture programs (goal:
#   <= 0.15).
# Protocol: see run.sh.

set -u
: "${HWTRACE:?}" "${HWTRACE_BUILD:?}" "${BENCH_DIR:?}" "${BENCH_RUNS:=3}"
progs=$HWTRACE_BUILD/progs
bare=$BENCH_PROGS/stepbare
[ -x "$bare" ] || { echo "bench_step: $bare not built" >&2; exit 1; }

# The summary line: "... N instructions, M bytes of trace".
insns() { sed -n 's/.* \([0-9][0-9]*\) instructions, \([0-9][0-9]*\) bytes of trace.*/\1 \2/p' "$1"; }

now() { date +%s.%N; }

for prog in loop recurse; do
	best_h="" best_b=""
	i=0
	while [ "$i" -lt "$BENCH_RUNS" ]; do
		# Alternate the two sides so that noise hits both.
		out=$("$bare" "$progs/$prog" 2>/dev/null | tail -n 1)
		steps=$(echo "$out" | sed -n 's/^steps \([0-9]*\) seconds \([0-9.]*\)$/\1/p')
		secs=$(echo "$out" | sed -n 's/^steps \([0-9]*\) seconds \([0-9.]*\)$/\2/p')
		[ -n "$steps" ] || { echo "bench_step: stepbare failed: $out" >&2; exit 1; }
		r=$(echo "$steps $secs" | awk '{ printf "%.0f", $1 / $2 }')
		[ -z "$best_b" ] || [ "$r" -gt "$best_b" ] && best_b=$r
		t0=$(now)
		"$HWTRACE" capture -o "$BENCH_DIR/$prog.hwtrace" -- \
		    "$progs/$prog" >/dev/null 2>"$BENCH_DIR/$prog.err" ||
		    { echo "bench_step: capture failed: $(cat "$BENCH_DIR/$prog.err")" >&2; exit 1; }
		t1=$(now)
		n=$(insns "$BENCH_DIR/$prog.err" | cut -d' ' -f1)
		r=$(echo "$n $t0 $t1" | awk '{ printf "%.0f", $1 / ($3 - $2) }')
		[ -z "$best_h" ] || [ "$r" -gt "$best_h" ] && best_h=$r
		i=$((i + 1))
	done
	echo "bench_step: $prog: hwtrace $best_h insn/s, bare single-step $best_b steps/s" >&2
	printf 'result\tstep %s insn/s\tinsn/s\t%s\tbare PTRACE_SINGLESTEP\t%s\thigher\t0.80\n' \
	    "$prog" "$best_h" "$best_b"
done

# Bytes of PT per instruction, all fixtures that run in a few seconds.
tot_i=0 tot_b=0
for prog in loop recurse calls tailcall switch setjmp signal timer threads \
    forkexec vfork rep syscalls exit3; do
	"$HWTRACE" capture -o "$BENCH_DIR/bpi.hwtrace" -- "$progs/$prog" \
	    >/dev/null 2>"$BENCH_DIR/bpi.err"
	set -- $(insns "$BENCH_DIR/bpi.err")
	[ $# -eq 2 ] || { echo "bench_step: $prog: no summary: $(cat "$BENCH_DIR/bpi.err")" >&2; exit 1; }
	echo "bench_step: $prog: $1 instructions, $2 bytes" >&2
	tot_i=$((tot_i + $1))
	tot_b=$((tot_b + $2))
done
bpi=$(echo "$tot_b $tot_i" | awk '{ printf "%.4f", $1 / $2 }')
printf 'result\tstep PT size, 14 fixtures\tB/insn\t%s\tissue 3 limit\t0.15\tlower\t1.00\n' "$bpi"
