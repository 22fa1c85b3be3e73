#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# The step trace source (issue 3), side by side in one run:
# - instructions traced per second by `hwtrace capture` (step source,
#   stream mode, archive written) against a bare PTRACE_SINGLESTEP loop
#   (stepbare) over the same program, goal >= 0.80: once by wall time and
#   once by CPU time (user + system of the tracer and the traced program),
#   which a loaded machine disturbs much less;
# - PT bytes written per instruction over the fixture programs (goal:
#   <= 0.15).
# Protocol: see run.sh.

set -u
: "${HWTRACE:?}" "${HWTRACE_BUILD:?}" "${BENCH_DIR:?}" "${BENCH_RUNS:=3}"
progs=$HWTRACE_BUILD/progs
bare=$BENCH_PROGS/stepbare
[ -x "$bare" ] || { echo "bench_step: $bare not built" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "bench_step: /usr/bin/time is missing" >&2; exit 1; }

# The capture summary line: "... N instructions, M bytes of trace".
insns() {
	sed -n 's/.* \([0-9][0-9]*\) instructions, \([0-9][0-9]*\) bytes of trace.*/\1 \2/p' "$1"
}

# rate N FILE: N divided by the wall ("w") and CPU ("c") seconds that
# /usr/bin/time wrote to FILE as "T wall U user S sys".
rate() {
	awk -v n="$1" -v k="$3" '/ wall / { w = $1; c = $3 + $5 }
	END { t = (k == "w") ? w : c; if (t <= 0) t = 0.001; printf "%.0f", n / t }' "$2"
}

max() { [ "$1" -gt "$2" ] && echo "$1" || echo "$2"; }

for prog in loop recurse; do
	hw=0 hc=0 bw=0 bc=0
	i=0
	while [ "$i" -lt "$BENCH_RUNS" ]; do
		# Alternate the two sides so that noise hits both.
		/usr/bin/time -o "$BENCH_DIR/t" -f "%e wall %U user %S sys" \
		    "$bare" "$progs/$prog" >"$BENCH_DIR/bare.out" 2>/dev/null
		steps=$(sed -n 's/^steps \([0-9]*\) seconds .*$/\1/p' "$BENCH_DIR/bare.out")
		[ -n "$steps" ] || { echo "bench_step: stepbare failed" >&2; exit 1; }
		bw=$(max "$bw" "$(rate "$steps" "$BENCH_DIR/t" w)")
		bc=$(max "$bc" "$(rate "$steps" "$BENCH_DIR/t" c)")
		/usr/bin/time -o "$BENCH_DIR/t" -f "%e wall %U user %S sys" \
		    "$HWTRACE" capture --force --source step -o "$BENCH_DIR/$prog.hwtrace" -- \
		    "$progs/$prog" >/dev/null 2>"$BENCH_DIR/$prog.err" ||
		    { echo "bench_step: capture failed: $(cat "$BENCH_DIR/$prog.err")" >&2; exit 1; }
		n=$(insns "$BENCH_DIR/$prog.err" | cut -d' ' -f1)
		hw=$(max "$hw" "$(rate "$n" "$BENCH_DIR/t" w)")
		hc=$(max "$hc" "$(rate "$n" "$BENCH_DIR/t" c)")
		i=$((i + 1))
	done
	echo "bench_step: $prog: hwtrace $hw insn/s wall, $hc insn/s CPU;" \
	    "bare single-step $bw steps/s wall, $bc steps/s CPU" >&2
	printf 'result\tstep %s, wall\tinsn/s\t%s\tbare PTRACE_SINGLESTEP\t%s\thigher\t0.80\n' \
	    "$prog" "$hw" "$bw"
	printf 'result\tstep %s, CPU time\tinsn/s\t%s\tbare PTRACE_SINGLESTEP\t%s\thigher\t0.80\n' \
	    "$prog" "$hc" "$bc"
done

# Bytes of PT per instruction, all fixtures that run in a few seconds.
tot_i=0 tot_b=0
for prog in loop recurse calls tailcall switch setjmp signal timer threads \
    forkexec vfork rep syscalls exit3; do
	"$HWTRACE" capture --force --source step -o "$BENCH_DIR/bpi.hwtrace" -- "$progs/$prog" \
	    >/dev/null 2>"$BENCH_DIR/bpi.err"
	set -- $(insns "$BENCH_DIR/bpi.err")
	[ $# -eq 2 ] || { echo "bench_step: $prog: no summary: $(cat "$BENCH_DIR/bpi.err")" >&2; exit 1; }
	echo "bench_step: $prog: $1 instructions, $2 bytes" >&2
	tot_i=$((tot_i + $1))
	tot_b=$((tot_b + $2))
done
bpi=$(echo "$tot_b $tot_i" | awk '{ printf "%.4f", $1 / $2 }')
printf 'result\tstep PT size, 14 fixtures\tB/insn\t%s\tissue 3 limit\t0.15\tlower\t1.00\n' "$bpi"
