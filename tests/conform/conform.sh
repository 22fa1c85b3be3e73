#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Conformance matrix: build fixtures per cell, check hwtrace against
# callgrind and the counts known by construction.  Usage: conform.sh BUILD
set -u
B=${1:-build}
H=$(cd "$B" && pwd)/hwtrace
SRC=$(cd "$(dirname "$0")" && pwd)
W=$(mktemp -d /tmp/conform.XXXXXX)
trap 'rm -rf "$W"' EXIT
npass=0
nfail=0

report() {	# cell checker ok reason
	if [ "$3" = 1 ]; then
		echo "PASS $1 $2: $4"; npass=$((npass + 1))
	else
		echo "FAIL $1 $2: $4"; nfail=$((nfail + 1))
	fi
}

# Self instructions of FN from a callgrind file (cost lines after fn=,
# excluding the inclusive line that follows each calls=).
cg_self() {
	awk -v want="$2" '
	/^c?fn=/ { s = $0; isc = (s ~ /^cfn=/); sub(/^c?fn=/, "", s)
		if (match(s, /^\([0-9]+\)/)) { id = substr(s, 1, RLENGTH)
			rest = substr(s, RLENGTH + 2); if (rest != "") nm[id] = rest
			s = nm[id] }
		if (!isc) cur = s
		next }
	/^calls=/ { skip = 1; next }
	/^[0-9+*-]/ { if (skip) { skip = 0; next }
		if (cur == want) tot += $2 }
	END { print tot + 0 }' "$1"
}

# Calls to FN in a callgrind file (sum of calls= after cfn=FN).
cg_calls() {
	awk -v want="$2" '
	/^c?fn=/ { s = $0; isc = (s ~ /^cfn=/); sub(/^c?fn=/, "", s)
		if (match(s, /^\([0-9]+\)/)) { id = substr(s, 1, RLENGTH)
			rest = substr(s, RLENGTH + 2); if (rest != "") nm[id] = rest
			s = nm[id] }
		if (isc) cfn = s
		next }
	/^calls=/ { split(substr($0, 7), a, " "); if (cfn == want) n += a[1] }
	END { print n + 0 }' "$1"
}

cell() {	# name cc flags source(valgrind|step)
	name=$1; cc=$2; flags=$3; src=$4
	d=$W/$name; mkdir -p "$d"
	if ! $cc $flags -o "$d/loop" "$SRC/loop.c" 2>"$d/cc.err"; then
		report "$name" build 0 "$(head -1 "$d/cc.err")"; return
	fi
	if ! "$H" capture --source "$src" -o "$d/t.hwt" -- "$d/loop" \
	    >/dev/null 2>"$d/cap.err" || ! "$H" index "$d/t.hwt" \
	    >/dev/null 2>"$d/ix.err"; then
		report "$name" capture 0 "$(cat "$d/cap.err" "$d/ix.err" |
		    tail -1)"; return
	fi
	hc=$("$H" query --format csv "$d/t.hwt.db" calls -n 100000000 |
	    awk -F, '$4 == "work"' | wc -l)
	report "$name" calls-known $([ "$hc" -eq 100 ] && echo 1 || echo 0) \
	    "work: hwtrace $hc, by construction 100"
	if command -v valgrind >/dev/null 2>&1; then
		valgrind --tool=callgrind --callgrind-out-file="$d/cg" \
		    "$d/loop" >/dev/null 2>&1
		cc_=$(cg_calls "$d/cg" work)
		report "$name" calls-callgrind \
		    $([ "$hc" -eq "$cc_" ] && echo 1 || echo 0) \
		    "work: hwtrace $hc, callgrind $cc_"
		hi=$("$H" query --format csv "$d/t.hwt.db" hot -n 100000 |
		    awk -F, '$1 == "work" { print $3 }')
		ci=$(cg_self "$d/cg" work)
		report "$name" insns-callgrind \
		    $([ "${hi:-0}" -eq "$ci" ] && echo 1 || echo 0) \
		    "work self insns: hwtrace ${hi:-0}, callgrind $ci"
	else
		echo "SKIP $name callgrind: valgrind absent"
	fi
}

# crash cell: hwtrace bt's function names against gdb's, innermost first.
crash() {	# name cc flags source
	name=$1; d=$W/$name; mkdir -p "$d"
	$2 $3 -o "$d/crash" "$SRC/crash.c" || { report "$name" build 0 cc; return; }
	if ! command -v gdb >/dev/null 2>&1; then
		echo "SKIP $name bt-gdb: gdb absent"; return
	fi
	"$H" capture --source "$4" -o "$d/t.hwt" -- "$d/crash" x \
	    >/dev/null 2>&1
	"$H" index "$d/t.hwt" >/dev/null 2>&1
	gb=$(gdb -batch -ex run -ex bt --args "$d/crash" x 2>/dev/null |
	    awk '/^#/ { print ($3 == "in") ? $4 : $2 }' | tr '\n' ' ')
	# gdb stops at main; compare as many frames as it shows.
	n=$(echo "$gb" | wc -w)
	hb=$("$H" query --format csv "$d/t.hwt.db" bt |
	    awk -F, 'NR > 1 { print $3 }' | head -"$n" | tr '\n' ' ')
	report "$name" bt-gdb $([ -n "$gb" ] && [ "$hb" = "$gb" ] &&
	    echo 1 || echo 0) "hwtrace '$hb', gdb '$gb'"
}

crash crash-gcc-O1-pie-vg gcc "-O1 -g" valgrind
crash crash-clang-O2-nopie-step clang "-O2 -g -fno-pie -no-pie" step
cell gcc-O2-bfd-pie-vg gcc "-O2 -g" valgrind
cell clang-O0-nopie-vg clang "-O0 -g -fno-pie -no-pie" valgrind
cell gcc-O2-lld-pie-vg gcc "-O2 -g -fuse-ld=lld" valgrind
cell gcc-O3-gz-static-step gcc "-O3 -g -gz=zlib -static" step

echo "$npass passed, $nfail failed"
[ "$nfail" -eq 0 ]
