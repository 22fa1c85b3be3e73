#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# The valgrind trace source (issue 7), side by side in one run:
# - capture wall time of `hwtrace capture --source valgrind` against
#   `valgrind --tool=none` (goal: <= 1.5x) and against the program run
#   natively (goal: <= 5x on the CPU-bound workload), on gzip -6 of 8 MiB
#   and on ls -l /usr/bin;
# - PT bytes written per instruction (goal: <= 0.15);
# - instructions traced per second against the step source (on the
#   fixture program `loop`, which the step source traces in seconds);
# - CPU time (user + sys, children included) of the best run of each, so
#   that the ratios can be judged on a loaded machine, where wall times
#   include waiting for the CPU.
# Protocol: see run.sh.

set -u
: "${HWTRACE:?}" "${HWTRACE_BUILD:?}" "${BENCH_DIR:?}" "${BENCH_RUNS:=3}"

if [ ! -x /usr/bin/time ]; then
	echo "bench_valgrind: /usr/bin/time (Debian's time package) is missing" >&2
	exit 1
fi
if ! command -v valgrind.bin >/dev/null 2>&1; then
	echo "bench_valgrind: valgrind is not installed" >&2
	exit 1
fi
if ! "$HWTRACE" capture --force --source valgrind -o "$BENCH_DIR/probe.hwtrace" \
    -- /bin/true >/dev/null 2>"$BENCH_DIR/probe.err"; then
	echo "bench_valgrind: skipped: hwtrace capture --source valgrind" \
	    "does not run here: $(cat "$BENCH_DIR/probe.err")" >&2
	exit 0
fi
input="$BENCH_DIR/input-8m"
if [ ! -s "$input" ]; then
	# 8 MiB of executables: compressible like real data, not like zeros.
	cat /usr/bin/* 2>/dev/null | head -c 8388608 > "$input"
fi

now() { date +%s.%N; }

# best CMD...: run CMD BENCH_RUNS times, print the best wall time and the
# CPU time (user + sys, waited-for children included) of that run.
best() {
	b=""
	i=0
	while [ "$i" -lt "$BENCH_RUNS" ]; do
		t0=$(now)
		/usr/bin/time -f '%U %S' -o "$BENCH_DIR/time" \
		    "$@" > /dev/null 2>"$BENCH_DIR/stderr" || {
			echo "bench_valgrind: failed: $*" >&2
			cat "$BENCH_DIR/stderr" >&2
			return 1
		}
		t1=$(now)
		t=$(echo "$t1 - $t0" | bc -l)
		if [ -z "$b" ] || [ "$(echo "$t < $b" | bc -l)" = 1 ]; then
			b=$t
			c=$(awk '{ print $1 + $2 }' "$BENCH_DIR/time")
		fi
		i=$((i + 1))
	done
	printf '%.3f %.2f\n' "$b" "$c"
}

gzip_cmd() { gzip -6 -c "$input"; }
ls_cmd() { ls -l /usr/bin; }


# CASE NAME CMD...: the three timings and the ratios.
bench_case() {
	name=$1
	shift
	native=$(best "$@") || return 1
	none=$(best valgrind.bin --tool=none -q --run-libc-freeres=no "$@") ||
	    return 1
	ours=$(best "$HWTRACE" capture --force --source valgrind \
	    -o "$BENCH_DIR/vg.hwtrace" -- "$@") || return 1
	native_cpu=${native#* } native=${native% *}
	none_cpu=${none#* } none=${none% *}
	ours_cpu=${ours#* } ours=${ours% *}
	# The message of the last capture: instructions and trace bytes.
	msg=$(grep 'instructions' "$BENCH_DIR/stderr" | tail -n 1)
	insn=$(echo "$msg" | sed -n 's/.* \([0-9][0-9]*\) instructions.*/\1/p')
	bytes=$(echo "$msg" | sed -n 's/.* \([0-9][0-9]*\) bytes of trace.*/\1/p')
	echo "bench_valgrind: $name: native ${native}s (CPU ${native_cpu}s)," \
	    "valgrind none ${none}s (CPU ${none_cpu}s), capture ${ours}s" \
	    "(CPU ${ours_cpu}s); $msg; load: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
	printf 'result\t%s vs tool=none\ts\t%s\tvalgrind --tool=none\t%s\tlower\t0.667\n' \
	    "$name" "$ours" "$none"
	# The issue's <= 5x native is for the CPU-bound workload only.
	printf 'result\t%s vs native\ts\t%s\tnative\t%s\tlower\t%s\n' \
	    "$name" "$ours" "$native" "$native_goal"
	printf 'result\t%s CPU vs tool=none\ts\t%s\ttool=none CPU\t%s\tlower\t-\n' \
	    "$name" "$ours_cpu" "$none_cpu"
	printf 'result\t%s CPU vs native\ts\t%s\tnative CPU\t%s\tlower\t-\n' \
	    "$name" "$ours_cpu" "$native_cpu"
	if [ -n "$insn" ] && [ -n "$bytes" ] && [ "$insn" -gt 0 ]; then
		printf 'result\t%s PT size\tB/insn\t%s\tissue goal\t0.15\tlower\t1\n' \
		    "$name" "$(echo "scale=4; $bytes / $insn" | bc -l)"
	fi
}

native_goal=0.2
bench_case "gzip -6 8MiB" gzip -6 -c "$input" || exit 1
native_goal=-
bench_case "ls -l /usr/bin" ls -l /usr/bin || exit 1

# Instructions per second against the step source, both on `loop`.
loop="$HWTRACE_BUILD/progs/loop"
if [ -x "$loop" ] && "$HWTRACE" capture --help 2>&1 | grep -q -- --source; then
	rate() {
		t0=$(now)
		"$HWTRACE" capture --force --source "$1" -o "$BENCH_DIR/r.hwtrace" -- \
		    "$loop" > /dev/null 2>"$BENCH_DIR/stderr-$1" || return 1
		t1=$(now)
		n=$(sed -n 's/.* \([0-9][0-9]*\) instructions.*/\1/p' \
		    "$BENCH_DIR/stderr-$1" | tail -n 1)
		[ -n "$n" ] || return 1
		echo "scale=0; $n / ($t1 - $t0)" | bc -l
	}
	vg=$(rate valgrind) && st=$(rate step) &&
	    printf 'result\tinsn/s on loop\tinsn/s\t%s\tstep source\t%s\thigher\t-\n' \
	    "$vg" "$st"
fi
exit 0
