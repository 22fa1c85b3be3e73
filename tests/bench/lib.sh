# SPDX-License-Identifier: BSD-2-Clause
#
# The helpers the benchmark scripts share, sourced after `set -eu`:
#
#	. "$HWTRACE_SRC/tests/bench/lib.sh"
#
# Only functions (run.sh runs bench_*.sh alone: this file is not one).

# bench_text: "$BENCH_DIR/text-8m", 8 MiB of C headers (the same bytes on
# a given system), made once.
bench_text()
{
	if [ ! -s "$BENCH_DIR/text-8m" ]; then
		cat /usr/include/*.h /usr/include/*/*.h /usr/include/*/*/*.h \
		    2>/dev/null | head -c 8388608 > "$BENCH_DIR/text-8m" || true
	fi
}

# capture NAME CMD...: a valgrind capture into NAME.hwtrace, again when
# hwtrace is newer; 1 when the capture failed (said on stderr).
capture() {
	cn=$1
	shift
	if [ ! -s "$BENCH_DIR/$cn.hwtrace" ] ||
	    [ "$HWTRACE" -nt "$BENCH_DIR/$cn.hwtrace" ]; then
		echo "  capturing $cn: $*" >&2
		rm -f "$BENCH_DIR/$cn.hwtrace"
		"$HWTRACE" capture --force --source valgrind \
		    -o "$BENCH_DIR/$cn.hwtrace" -- "$@" > /dev/null \
		    2> "$BENCH_DIR/$cn.err" || true
	fi
	if [ ! -s "$BENCH_DIR/$cn.hwtrace" ]; then
		echo "$(basename "$0" .sh): capture of $cn failed:" \
		    "$(head -3 "$BENCH_DIR/$cn.err" 2>/dev/null)" >&2
		return 1
	fi
}

# now: the wall clock in ns.
now() { date +%s%N; }

# best VAR VALUE: keep the smallest value in VAR.
best() {
	eval "cur=\${$1:-}"
	if [ -z "$cur" ] || [ "$2" -lt "$cur" ]; then
		eval "$1=$2"
	fi
}

# result CASE UNIT OURS REFERENCE REF-VALUE BETTER GOAL: one measurement,
# the line run.sh reads (its protocol is described there).
result() {
	printf 'result\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$@"
}

# mbs NS: MB/s of $bytes bytes in NS nanoseconds.
mbs() { awk -v b="$bytes" -v ns="$1" 'BEGIN { printf "%.1f", b * 1000 / ns }'; }

# bench_python: capture and measure (the script's measure NAME WHAT) a
# python3 loop of 200000 rounds; 1 when measure fails.
bench_python() {
	# The interpreter itself, not a wrapper script (pyenv's shims run bash).
	py=/usr/bin/python3
	if [ ! -x "$py" ]; then
		echo "$(basename "$0" .sh): no $py: the python3 rows are skipped" >&2
		return 0
	fi
	if capture python3 "$py" -c 's = 0
for i in range(200000): s += i * i
print(s)'; then
		measure python3 "python3 loop of 200000" || return 1
	fi
}

# q10m_db NAME: "$BENCH_DIR/q10m.db", the 10 M-block database qmkdb makes,
# made again when qmkdb is newer; NAME says who asks.  Sets $db.
q10m_db()
{
	db=$BENCH_DIR/q10m.db
	if [ ! -f "$db" ] || [ "$BENCH_PROGS/qmkdb" -nt "$db" ]; then
		echo "$1: synthesizing $db (10M blocks)" >&2
		rm -f "$db.tmp"
		"$BENCH_PROGS/qmkdb" -s 10000000 "$db.tmp" >&2 &&
		    mv "$db.tmp" "$db" || exit 1
	fi
}
