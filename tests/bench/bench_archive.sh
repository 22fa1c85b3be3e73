#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Archive benchmark (issue 2 item 15): a 256 MiB Intel PT stream written
# into an archive (hwtr_aw_chunk, 8 MiB chunks) against `zstd -T2 -3` on the
# same bytes, and read back (hwtr_ar_read_chunk of every chunk) against
# `zstd -d`; wall time (MB/s), CPU time (MB per CPU-second, all threads) and
# compression ratio, best of $BENCH_RUNS, the two sides alternating within
# each run.  Protocol: tests/bench/run.sh.
#
# BENCH_PT_SIZE (bytes, K/M/G suffixes; default 256M) and BENCH_CHUNK
# (default 8M) change the input size and the chunk size.

set -eu
. "$HWTRACE_SRC/tests/bench/lib.sh"
size=${BENCH_PT_SIZE:-256M}
chunk=${BENCH_CHUNK:-8M}
in="$BENCH_DIR/pt-$size.bin"
arch="$BENCH_DIR/out.hwtrace"
zst="$BENCH_DIR/out.zst"
prog="$BENCH_PROGS/bench_archive"

# The input is deterministic: made once, kept until ptgen changes.
if [ ! -s "$in" ] || [ "$BENCH_PROGS/ptgen" -nt "$in" ]; then
	echo "  generating $size of Intel PT with ptgen" >&2
	"$BENCH_PROGS/ptgen" -s "$size" -o "$in.tmp"
	mv "$in.tmp" "$in"
fi
bytes=$(stat -c %s "$in")
cat "$in" > /dev/null	# into the page cache, as for every run below

[ -x /usr/bin/time ] || { echo "bench_archive: /usr/bin/time is missing" >&2; exit 1; }


# timed KEY COMMAND...: run it, keep its best wall time (ns) in KEY_w and
# its best CPU time (user + system, ms, all threads) in KEY_c; its wall
# time of this run in last_ms.
timed() {
	key=$1
	shift
	t0=$(now)
	/usr/bin/time -o "$BENCH_DIR/t" -f "%U %S" "$@"
	t1=$(now)
	best "${key}_w" $((t1 - t0))
	best "${key}_c" "$(awk '{ printf "%d", ($1 + $2) * 1000 }' "$BENCH_DIR/t")"
	last_ms=$(((t1 - t0) / 1000000))
}

run=1
while [ "$run" -le "$BENCH_RUNS" ]; do
	rm -f "$arch" "$zst"
	timed zw zstd -q -f --check -T2 -3 -o "$zst" "$in"; d_zw=$last_ms
	timed hw "$prog" write -c "$chunk" "$in" "$arch"; d_hw=$last_ms
	timed zr sh -c 'zstd -q -d -c "$1" > /dev/null' sh "$zst"; d_zr=$last_ms
	timed hr sh -c '"$1" read "$2" > /dev/null' sh "$prog" "$arch"
	d_hr=$last_ms
	echo "  run $run: write hwtrace $d_hw ms, zstd $d_zw ms;" \
	    "read hwtrace $d_hr ms, zstd $d_zr ms" >&2
	run=$((run + 1))
done

# The round trip must give back the very bytes; otherwise nothing counts.
if ! "$prog" read "$arch" | cmp -s - "$in"; then
	echo "bench_archive: reading $arch back does not give $in" >&2
	exit 1
fi

asize=$(stat -c %s "$arch")
zsize=$(stat -c %s "$zst")
echo "  input $bytes bytes; archive $asize bytes; zstd $zsize bytes" >&2

mbcpu() { awk -v b="$bytes" -v ms="$1" 'BEGIN { printf "%.1f", (ms > 0 ? b / 1000 / ms : 0) }'; }
ratio() { awk -v b="$bytes" -v s="$1" 'BEGIN { printf "%.3f", b / s }'; }
mib=$((bytes / 1048576))
result "write $mib MiB PT" MB/s "$(mbs "$hw_w")" "zstd -T2 -3" "$(mbs "$zw_w")" \
    higher 0.90
result "compression $mib MiB PT" ratio "$(ratio "$asize")" "zstd -T2 -3" \
    "$(ratio "$zsize")" higher 0.95
result "read $mib MiB PT" MB/s "$(mbs "$hr_w")" "zstd -d" "$(mbs "$zr_w")" \
    higher 0.90
# CPU time (all threads): steadier than wall time on a loaded machine.
result "write $mib MiB PT, CPU time" MB/CPU-s "$(mbcpu "$hw_c")" "zstd -T2 -3" \
    "$(mbcpu "$zw_c")" higher -
result "read $mib MiB PT, CPU time" MB/CPU-s "$(mbcpu "$hr_c")" "zstd -d" \
    "$(mbcpu "$zr_c")" higher -
rm -f "$arch" "$zst"
