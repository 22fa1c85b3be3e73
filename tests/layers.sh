#! /bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Copyright (c) 2026 The hwtrace authors
#
# The module arrows hold (make layers; make check runs it).  Usage:
#   tests/layers.sh BUILD CC module:used,used ...
# one argument per module, as the Makefile's USES_<module> lists them.
# Three checks, each naming what breaks the rule:
#  1. includes: every header of a module another may not use fails to
#     preprocess with that module's include paths, and every interface
#     header (hwtr_*.h) of a module it may use preprocesses (so a failure
#     is the arrow, not a broken probe; a module's other headers are its
#     own and may need more);
#  2. no module source reaches around its paths (#include "../x/y.h");
#  3. calls: every symbol an object of BUILD/obj/<module>/ needs from
#     another module's objects is defined by a module it may use.

set -u
export LC_ALL=C
B=$1 CC=$2
shift 2
rc=0
mods=
for a in "$@"; do mods="$mods ${a%%:*}"; done
probe=$B/layers
mkdir -p "$probe"

uses_of()
{
	for a in $ARROWS; do
		[ "${a%%:*}" = "$1" ] && { echo "${a#*:}" | tr ',' ' '; return; }
	done
}
ARROWS="$*"

for m in $mods; do
	uses=$(uses_of "$m")
	inc="-Iinclude"
	for u in $uses; do inc="$inc -I$u"; done
	for n in $mods; do
		[ "$n" = "$m" ] && continue
		allowed=0
		for u in $uses; do [ "$u" = "$n" ] && allowed=1; done
		for h in "$n"/*.h; do
			[ -f "$h" ] || continue
			printf '#include "%s"\n' "${h##*/}" > "$probe/probe.c"
			if $CC -E $inc -o /dev/null "$probe/probe.c" 2>/dev/null; then
				if [ $allowed -eq 0 ]; then
					echo "layers: $m/ can include $h, but $m may not use $n" >&2
					rc=1
				fi
			elif [ $allowed -eq 1 ] && case ${h##*/} in hwtr_*) true;; *) false;; esac; then
				echo "layers: $m/ may use $n but cannot include $h ($CC -E $inc)" >&2
				rc=1
			fi
		done
	done
	if grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"\.\./' \
	    "$m"/*.c "$m"/*.h 2>/dev/null; then
		echo "layers: $m/ includes around its include paths (above)" >&2
		rc=1
	fi
done

# Who defines what: "symbol module" for every global an object defines.
defs=$probe/defs
# The objects of a module's sources (not those of files since removed).
objs()
{
	for c in "$1"/*.c; do
		[ -f "$B/obj/${c%.c}.o" ] && echo "$B/obj/${c%.c}.o"
	done
}
for m in $mods; do
	o=$(objs "$m")
	[ -n "$o" ] || continue
	nm -g --defined-only $o | awk -v m="$m" 'NF == 3 { print $3, m }'
done | sort -u > "$defs"
[ -s "$defs" ] || { echo "layers: no objects under $B/obj: build first" >&2; exit 1; }
for m in $mods; do
	uses=$(uses_of "$m")
	for o in $(objs "$m"); do
		nm -u "$o" | awk '{ print $NF }' | sort -u | join - "$defs" |
		while read -r sym n; do
			[ "$n" = "$m" ] && continue
			ok=0
			for u in $uses; do [ "$u" = "$n" ] && ok=1; done
			[ $ok -eq 1 ] ||
			    echo "layers: ${o#$B/obj/} calls $sym of $n/, but $m may not use $n"
		done
	done
done > "$probe/calls"
if [ -s "$probe/calls" ]; then
	cat "$probe/calls" >&2
	rc=1
fi
[ $rc -eq 0 ] && echo "layers: every arrow holds ($(echo $ARROWS))"
exit $rc
