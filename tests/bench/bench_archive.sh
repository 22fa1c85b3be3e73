#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Archive benchmark (issue 2 item 15): a 256 MiB Intel PT stream written
# into an archive (hwtr_aw_chunk, 8 MiB chunks) against `zstd -T2 -3` on the
# same bytes, and read back (hwtr_ar_read_chunk of every chunk) against
# `zstd -d`; wall time, MB/s and compression ratio, best of $BENCH_RUNS,
# the two sides alternating within each run.  Protocol: tests/bench/run.sh.
#
# BENCH_PT_SIZE (bytes, K/M/G suffixes; default 256M) and BENCH_CHUNK
# (default 8M) change the input size and the chunk size.

set -eu
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

now() { date +%s%N; }

# best VAR NS: keep the smallest time in VAR.
best() {
	eval "cur=\${$1:-}"
	if [ -z "$cur" ] || [ "$2" -lt "$cur" ]; then
		eval "$1=$2"
	fi
}

run=1
while [ "$run" -le "$BENCH_RUNS" ]; do
	rm -f "$arch" "$zst"
	t0=$(now); zstd -q -f --check -T2 -3 -o "$zst" "$in"; t1=$(now)
	best zw $((t1 - t0)); d_zw=$((t1 - t0))
	t0=$(now); "$prog" write -c "$chunk" "$in" "$arch"; t1=$(now)
	best hw $((t1 - t0)); d_hw=$((t1 - t0))
	t0=$(now); zstd -q -d -c "$zst" > /dev/null; t1=$(now)
	best zr $((t1 - t0)); d_zr=$((t1 - t0))
	t0=$(now); "$prog" read "$arch" > /dev/null; t1=$(now)
	best hr $((t1 - t0)); d_hr=$((t1 - t0))
	echo "  run $run: write hwtrace $((d_hw / 1000000)) ms," \
	    "zstd $((d_zw / 1000000)) ms; read hwtrace $((d_hr / 1000000)) ms," \
	    "zstd $((d_zr / 1000000)) ms" >&2
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

mbs() { awk -v b="$bytes" -v ns="$1" 'BEGIN { printf "%.1f", b * 1000 / ns }'; }
ratio() { awk -v b="$bytes" -v s="$1" 'BEGIN { printf "%.3f", b / s }'; }
mib=$((bytes / 1048576))
printf 'result\twrite %s MiB PT\tMB/s\t%s\tzstd -T2 -3\t%s\thigher\t0.90\n' \
    "$mib" "$(mbs "$hw")" "$(mbs "$zw")"
printf 'result\tcompression %s MiB PT\tratio\t%s\tzstd -T2 -3\t%s\thigher\t0.95\n' \
    "$mib" "$(ratio "$asize")" "$(ratio "$zsize")"
printf 'result\tread %s MiB PT\tMB/s\t%s\tzstd -d\t%s\thigher\t0.90\n' \
    "$mib" "$(mbs "$hr")" "$(mbs "$zr")"
rm -f "$arch" "$zst"
