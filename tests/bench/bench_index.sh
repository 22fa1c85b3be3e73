#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Indexer benchmark (issue 4 items 4, 11, 12): `hwtrace index` at -j 1 and
# -j 2 against a bare libipt block-decode loop (ixbare: pt_blk_next until
# the end of each stream, nothing stored) over the same two PT streams and
# the same binary, wall time, best of $BENCH_RUNS, the three alternating
# within each run; peak RSS of -j 2 for two trace sizes 10x apart; the
# execution order's bytes per executed block.  Protocol: tests/bench/run.sh.
#
# Two kinds of input.  A synthetic one: ixgen walks the control flow of a
# real static binary and encodes the walk with the project's PT encoder
# (libipt's packet encoder), see tests/bench/ixgen.c; BENCH_INDEX_INSNS
# (default 40000000) sets the instructions walked per thread for the large
# trace, the small one is 10x smaller.  And real captures (the end of this
# file): gzip -6 of 8 MiB under the Valgrind source (68 MB of PT) and the
# LLDB captures of the corpus, compared with `ixbare -a`.

set -eu
. "$HWTRACE_SRC/tests/bench/lib.sh"
insns=${BENCH_INDEX_INSNS:-40000000}
prog="$HWTRACE_BUILD/progs/calls"
gen="$BENCH_PROGS/ixgen"
bare="$BENCH_PROGS/ixbare"
[ -x "$prog" ] || { echo "bench_index: $prog not built" >&2; exit 1; }

# rss CMD...: peak resident set of CMD in KiB.
rss() {
	/usr/bin/time -f '%M' -o "$BENCH_DIR/rss" "$@" > /dev/null 2>&1
	cat "$BENCH_DIR/rss"
}

make_input() {	# NAME INSNS
	if [ ! -s "$BENCH_DIR/$1.hwtrace" ] || [ "$gen" -nt "$BENCH_DIR/$1.hwtrace" ]; then
		echo "  generating $1: 2 threads x $2 instructions" >&2
		"$gen" -n "$2" -t 2 -p "$BENCH_DIR/$1.pt" "$prog" \
		    "$BENCH_DIR/$1.hwtrace"
	fi
}
make_input big "$insns"
make_input small $((insns / 10))
bytes=$(( $(stat -c %s "$BENCH_DIR/big.pt.0") + $(stat -c %s "$BENCH_DIR/big.pt.1") ))
cat "$BENCH_DIR"/big.* > /dev/null

# cpu CMD...: run CMD; its user+system CPU time in ns goes to $cpu_ns
# (%.0f: the %d of mawk, Debian's awk, stops at 2^31 - 1; every -j 1 run
# took more than 2.147 s, so the -j 1 CPU row always said 26.3 MB/CPU-s).
cpu() {
	/usr/bin/time -f '%U %S' -o "$BENCH_DIR/cpu" "$@"
	cpu_ns=$(awk '{ printf "%.0f", ($1 + $2) * 1e9 }' "$BENCH_DIR/cpu")
}

run=1
while [ "$run" -le "$BENCH_RUNS" ]; do
	t0=$(now); cpu "$bare" "$prog" "$BENCH_DIR/big.pt.0" "$BENCH_DIR/big.pt.1" > "$BENCH_DIR/bare.out"; t1=$(now)
	best bb $((t1 - t0)); d_b=$((t1 - t0)); best cb "$cpu_ns"
	t0=$(now); cpu "$HWTRACE" index -q -j 1 -o "$BENCH_DIR/j1.db" "$BENCH_DIR/big.hwtrace" 2>/dev/null; t1=$(now)
	best b1 $((t1 - t0)); d_1=$((t1 - t0)); best c1 "$cpu_ns"
	t0=$(now); "$HWTRACE" index -q -j 2 -o "$BENCH_DIR/j2.db" "$BENCH_DIR/big.hwtrace" 2>/dev/null; t1=$(now)
	best b2 $((t1 - t0)); d_2=$((t1 - t0))
	echo "  run $run: bare $((d_b / 1000000)) ms, index -j 1 $((d_1 / 1000000)) ms," \
	    "-j 2 $((d_2 / 1000000)) ms" >&2
	run=$((run + 1))
done

# -j must not change the database.
if ! cmp -s "$BENCH_DIR/j1.db" "$BENCH_DIR/j2.db"; then
	echo "bench_index: -j 1 and -j 2 databases differ" >&2
	exit 1
fi
echo "  bare loop: $(cat "$BENCH_DIR/bare.out")" >&2
echo "  database: $(sqlite3 "$BENCH_DIR/j1.db" "SELECT sum(blocks) || ' blocks, ' || sum(insns) || ' instructions' FROM threads")," \
    "$(stat -c %s "$BENCH_DIR/j1.db") bytes" >&2

# Where the CPU goes at -j 2: the decoding threads and the writer, then
# the index build that runs alone at the end (the summary line says),
# best of $BENCH_RUNS.  On an idle 2-CPU machine the wall time is at least
# max(write, (decode + write) / 2) + index build: the writer is one thread,
# all threads share two CPUs, and the indexes are built after the last
# row.  A bound computed from CPU times, not a measurement, so the row has
# no goal: the wall row above is the one the issue's 0.90 is about.
run=1
while [ "$run" -le "$BENCH_RUNS" ]; do
	"$HWTRACE" index -j 2 -o "$BENCH_DIR/j2.db" "$BENCH_DIR/big.hwtrace" 2> "$BENCH_DIR/sum"
	cpus='.*CPU s: decode \([0-9.]*\), write \([0-9.]*\); index build \([0-9.]*\) s$'
	dec=$(sed -n "s/$cpus/\1/p" "$BENCH_DIR/sum")
	wri=$(sed -n "s/$cpus/\2/p" "$BENCH_DIR/sum")
	ixb=$(sed -n "s/$cpus/\3/p" "$BENCH_DIR/sum")
	cp=$(awk -v d="$dec" -v w="$wri" -v x="$ixb" 'BEGIN { c = (d + w) / 2; if (w > c) c = w; printf "%.0f", (c + x) * 1e9 }')
	echo "  -j 2 CPU: decode $dec s, write $wri s; index build $ixb s" >&2
	best cpath "$cp"
	run=$((run + 1))
done

rss_small=$(rss "$HWTRACE" index -q -j 2 -o "$BENCH_DIR/s.db" "$BENCH_DIR/small.hwtrace")
rss_big=$(rss "$HWTRACE" index -q -j 2 -o "$BENCH_DIR/b.db" "$BENCH_DIR/big.hwtrace")
bpb=$(sqlite3 "$BENCH_DIR/j1.db" "SELECT value FROM meta WHERE key = 'exec_bytes_per_block'")
rm -f "$BENCH_DIR/s.db" "$BENCH_DIR/b.db" "$BENCH_DIR/j2.db"

mib=$((bytes / 1048576))
result "index -j 1, $mib MiB PT" MB/s "$(mbs "$b1")" "bare pt_blk_next loop" \
    "$(mbs "$bb")" higher 0.50
result "index -j 2, $mib MiB PT" MB/s "$(mbs "$b2")" "bare pt_blk_next loop" \
    "$(mbs "$bb")" higher 0.90
# On a shared machine wall time also measures the neighbours: CPU time too.
result "index -j 1 CPU time, $mib MiB PT" MB/CPU-s "$(mbs "$c1")" \
    "bare loop CPU time" "$(mbs "$cb")" higher 0.50
result "index -j 2 lower bound on 2 CPUs, $mib MiB PT" MB/CPU-s \
    "$(mbs "$cpath")" "bare loop CPU time" "$(mbs "$cb")" higher -
result "peak RSS -j 2, $mib MiB PT" KiB "$rss_big" "same, 10x smaller trace" \
    "$rss_small" lower -
result "exec order per block" bytes "$bpb" "issue 4 limit" 1.5 lower 1.00

# The same comparison on real captures (issue 4 item 11: "a large trace
# captured by the Valgrind source ... and the corpus traces"): `hwtrace
# index` against `ixbare -a`, the bare block-decode loop over the
# archive's own streams and images, configured as the indexer configures
# its decoder.  The reference is ixbare's decode loop alone (reading and
# decompressing the chunks, writing the images to temporary files are not
# timed), the index rows are the wall time of the whole `hwtrace index`.
# Before the rows are printed, ixbare's instruction count must be the
# database's: the two decode the same streams.
#
# ixvs NAME ARCHIVE RUNS JOBS...: index ARCHIVE at each -j of JOBS and run
# ixbare -a, alternating, RUNS times; sets bare_ns, ix_ns_J (best of),
# ix_bytes, and checks the instruction counts.
ixvs() {
	ixn=$1 ar=$2 runs=$3
	shift 3
	bare_ns= ix_bytes=
	for j in "$@"; do eval "ix_ns_$j="; done
	run=1
	while [ "$run" -le "$runs" ]; do
		"$bare" -a "$ar" > "$BENCH_DIR/$ixn.bare" ||
		    { echo "bench_index: ixbare -a $ar failed" >&2; exit 1; }
		d=$(sed -n 's/^total: .*, \([0-9]*\) ns$/\1/p' "$BENCH_DIR/$ixn.bare")
		best bare_ns "$d"
		msg="  $ixn run $run: bare decode loop $((d / 1000000)) ms"
		for j in "$@"; do
			t0=$(now)
			"$HWTRACE" index -j "$j" -o "$BENCH_DIR/$ixn.db" "$ar" 2> "$BENCH_DIR/$ixn.sum"
			t1=$(now)
			best "ix_ns_$j" $((t1 - t0))
			msg="$msg, index -j $j $(((t1 - t0) / 1000000)) ms ($(sed -n 's/.*; CPU s: //p' "$BENCH_DIR/$ixn.sum"))"
		done
		echo "$msg" >&2
		run=$((run + 1))
	done
	ix_bytes=$(sed -n 's/^total: \([0-9]*\) bytes.*/\1/p' "$BENCH_DIR/$ixn.bare")
	bi=$(sed -n 's/^total: .*, \([0-9]*\) instructions, .*/\1/p' "$BENCH_DIR/$ixn.bare")
	be=$(sed -n 's/^total: .*, \([0-9]*\) errors, .*/\1/p' "$BENCH_DIR/$ixn.bare")
	di=$(sqlite3 "$BENCH_DIR/$ixn.db" "SELECT sum(insns) FROM threads")
	de=$(sqlite3 "$BENCH_DIR/$ixn.db" "SELECT count(*) FROM events WHERE kind = 'decode-error'")
	echo "  $ixn: ixbare $(sed -n 's/^total: //p' "$BENCH_DIR/$ixn.bare");" \
	    "database $di instructions, $de decode errors" >&2
	if [ "$bi" != "$di" ]; then
		echo "bench_index: $ixn: ixbare -a decoded $bi instructions" \
		    "($be errors), the database has $di ($de decode errors):" \
		    "the bare loop and the indexer do not decode the same trace" >&2
		exit 1
	fi
	rm -f "$BENCH_DIR/$ixn.db"
}
mbs_of() { awk -v b="$1" -v ns="$2" 'BEGIN { printf "%.3f", b * 1000 / ns }'; }

# gzip -6 of 8 MiB under the Valgrind source: about 68 MB of PT, 1.9e9
# instructions, captured once per bench directory (again when hwtrace is
# newer).  Each run of the three takes about 50 s here (the bare loop
# 13 s, index 23 s at -j 1 and 13 s at -j 2): BENCH_INDEX_VG_RUNS (default 1)
# runs, not BENCH_RUNS, so that the bench stays near 2 minutes.
vgruns=${BENCH_INDEX_VG_RUNS:-1}
gz="$BENCH_DIR/gzip.hwtrace"
if [ ! -s "$gz" ] || [ "$HWTRACE" -nt "$gz" ]; then
	input="$BENCH_DIR/input-8m"
	if [ ! -s "$input" ]; then
		# 8 MiB of executables, as bench_valgrind.sh compresses.
		cat /usr/bin/* 2>/dev/null | head -c 8388608 > "$input" || true
	fi
	echo "  capturing gzip -6 -c input-8m with the valgrind source" >&2
	rm -f "$gz"
	"$HWTRACE" capture --force --source valgrind -o "$gz" -- \
	    gzip -6 -c "$input" > /dev/null 2> "$BENCH_DIR/gzip.err" || rm -f "$gz"
fi
if [ -s "$gz" ]; then
	ixvs gzip "$gz" "$vgruns" 1 2
	mib=$((ix_bytes / 1048576))
	printf 'result\tindex -j 1, gzip -6 8 MiB valgrind capture (%s MiB PT)\tMB/s\t%s\tixbare -a decode loop\t%s\thigher\t0.50\n' \
	    "$mib" "$(mbs_of "$ix_bytes" "$ix_ns_1")" "$(mbs_of "$ix_bytes" "$bare_ns")"
	printf 'result\tindex -j 2, gzip -6 8 MiB valgrind capture (%s MiB PT)\tMB/s\t%s\tixbare -a decode loop\t%s\thigher\t0.90\n' \
	    "$mib" "$(mbs_of "$ix_bytes" "$ix_ns_2")" "$(mbs_of "$ix_bytes" "$bare_ns")"
	# Scaling (issue 18 item 2): -j N is N threads in all, so -j 1 is
	# one thread and -j 2 two; the same runs as the rows above.
	printf 'result\tindex -j 2 against -j 1, gzip -6 8 MiB valgrind capture (%s MiB PT)\tMB/s\t%s\tindex -j 1\t%s\thigher\t1.60\n' \
	    "$mib" "$(mbs_of "$ix_bytes" "$ix_ns_2")" "$(mbs_of "$ix_bytes" "$ix_ns_1")"
else
	echo "bench_index: gzip rows skipped: hwtrace capture --source" \
	    "valgrind failed here: $(head -3 "$BENCH_DIR/gzip.err" 2>/dev/null)" >&2
fi

# The corpus: LLDB's Intel PT captures (4 KiB of PT, 21 and 45
# instructions).  So small that the index time is process start, schema
# and database creation; the rows are there because item 11 names the
# corpus, not because the ratio says anything about decoding speed.
lldb="$HWTRACE_SRC/../shared/corpus/lldb-intelpt"
if [ -d "$lldb" ]; then
	for c in single:intelpt-trace/trace.json \
	    multi-file:intelpt-trace-multi-file/multi-file-no-ld.json; do
		name=${c%%:*}
		"$HWTRACE" import --lldb -o "$BENCH_DIR/lldb-$name.hwtrace" \
		    "$lldb/${c#*:}" 2> "$BENCH_DIR/import.err" || {
			echo "bench_index: import of $lldb/${c#*:} failed:" \
			    "$(cat "$BENCH_DIR/import.err")" >&2
			exit 1
		}
		ixvs "lldb-$name" "$BENCH_DIR/lldb-$name.hwtrace" "$BENCH_RUNS" 1
		printf 'result\tindex -j 1, corpus LLDB %s (%s bytes PT, small)\tMB/s\t%s\tixbare -a decode loop\t%s\thigher\t0.50\n' \
		    "$name" "$ix_bytes" "$(mbs_of "$ix_bytes" "$ix_ns_1")" \
		    "$(mbs_of "$ix_bytes" "$bare_ns")"
	done
else
	echo "bench_index: corpus rows skipped: corpus not found at $lldb" >&2
fi
