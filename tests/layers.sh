#! /bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Copyright (c) 2026 The hwtrace authors
#
# The module arrows hold (make layers; make runs it).  Usage, from the top
# of the tree:
#   tests/layers.sh BUILD CC module:used,used[:header,header] ...
# one argument per module, as the Makefile's USES_<module> and IFACE_<module>
# list them.  A module's interface headers are its hwtr_*.h and the headers
# named after the second colon; every other header in its folder is
# private to it.  Four checks, each naming what breaks the rule:
#  1. includes: every header of a module another may not use fails to
#     preprocess with that module's include paths, and the interface
#     headers of the modules it may use preprocess (so a failure is the
#     arrow, not a broken probe; a module's other headers are its own and
#     may need more);
#  2. no module source includes a private header of another module;
#  3. no module source reaches around its paths (#include "../x/y.h");
#  4. calls: every symbol an object of BUILD/obj/<module>/ needs from
#     another module's objects is defined by a module it may use.

set -u
export LC_ALL=C
B=$1 CC=$2
shift 2
rc=0
ARROWS="$*"
mods=
for a in $ARROWS; do mods="$mods ${a%%:*}"; done
probe=$B/layers
mkdir -p "$probe"

# The arrows as shell variables, read without a subshell: A_USES_<m>,
# A_IFACE_<m> (space-separated).
for a in $ARROWS; do
	r=${a#*:}
	u=${r%%:*}
	i=
	case $r in *:*) i=${r#*:};; esac
	eval "A_USES_${a%%:*}=\"$(echo "$u" | tr ',' ' ')\""
	eval "A_IFACE_${a%%:*}=\"$(echo "$i" | tr ',' ' ')\""
done
# is_iface M H: H (a file name) is an interface header of module M.
is_iface()
{
	case $2 in hwtr_*.h) return 0;; esac
	eval "l=\$A_IFACE_$1"
	case " $l " in *" $2 "*) return 0;; esac
	return 1
}
# may_use M N: M may use N.
may_use()
{
	eval "l=\$A_USES_$1"
	case " $l " in *" $2 "*) return 0;; esac
	return 1
}

for m in $mods; do
	eval "uses=\$A_USES_$m"
	inc="-Iinclude"
	for u in $uses; do inc="$inc -I$u"; done

	# 1. One preprocessor run for the headers of the modules m may not
	# use (with -MG, a header not found is listed by its bare name) and
	# one for the interface headers of those it may use; a failure of
	# the latter is told header by header.
	: > "$probe/deny"
	: > "$probe/allow.c"
	for n in $mods; do
		[ "$n" = "$m" ] && continue
		for h in "$n"/*.h; do
			[ -f "$h" ] || continue
			if ! may_use "$m" "$n"; then
				echo "$h" >> "$probe/deny"
			elif is_iface "$n" "${h##*/}"; then
				printf '#include "%s"\n' "${h##*/}" >> "$probe/allow.c"
			fi
		done
	done
	if [ -s "$probe/deny" ]; then
		sed 's|.*/\(.*\)|#include "\1"|' "$probe/deny" > "$probe/deny.c"
		$CC -MM -MG $inc "$probe/deny.c" 2>/dev/null |
		    tr ' \\' '\n\n' | sed '/^$/d' > "$probe/deny.deps"
		while read -r h; do
			grep -qxF "${h##*/}" "$probe/deny.deps" ||
			    echo "layers: $m/ can include $h, but $m may not use ${h%/*}"
		done < "$probe/deny"
	fi
	if ! $CC -E $inc -o /dev/null "$probe/allow.c" 2>/dev/null; then
		sed 's/^#include "\(.*\)"$/\1/' "$probe/allow.c" | while read -r h; do
			printf '#include "%s"\n' "$h" > "$probe/one.c"
			$CC -E $inc -o /dev/null "$probe/one.c" 2>/dev/null ||
			    echo "layers: $m/ may use the module of $h but cannot include it ($CC -E $inc)"
		done
	fi

	# 2. Each #include of m's sources is found where the compiler finds
	# it (m's own folder first, then include/, then the used modules in
	# order); one found in another module must be that module's
	# interface.
	grep -H '^[[:space:]]*#[[:space:]]*include[[:space:]]*["<]' \
	    "$m"/*.c "$m"/*.h 2>/dev/null |
	    sed 's/^\([^:]*\):[^"<]*["<]\([^">]*\)[">].*/\1 \2/' |
	    while read -r f h; do
		[ -f "$m/$h" ] && continue
		[ -f "include/$h" ] && continue
		for u in $uses; do
			[ -f "$u/$h" ] || continue
			is_iface "$u" "$h" && break
			eval "ifc=\$A_IFACE_$u"
			echo "layers: $f includes $u/$h, a header private to $u/ (its interface: hwtr_*.h${ifc:+ $ifc})"
			break
		done
	done

	# 3. Around the include paths.
	grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"\.\./' \
	    "$m"/*.c "$m"/*.h 2>/dev/null |
	    sed "s/^/layers: $m\/ includes around its include paths: /"
done > "$probe/includes"
if [ -s "$probe/includes" ]; then
	cat "$probe/includes" >&2
	rc=1
fi

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
# 4. "symbol object" for every symbol a module's objects need, joined with
# who defines it.
for m in $mods; do
	o=$(objs "$m")
	[ -n "$o" ] || continue
	nm -A -u $o | awk '{ f = $1; sub(/:$/, "", f); print $NF, f }' |
	    sort -u | join - "$defs" |
	    while read -r sym obj n; do
		[ "$n" = "$m" ] && continue
		may_use "$m" "$n" ||
		    echo "layers: ${obj#$B/obj/} calls $sym of $n/, but $m may not use $n"
	done
done > "$probe/calls"
if [ -s "$probe/calls" ]; then
	cat "$probe/calls" >&2
	rc=1
fi
[ $rc -eq 0 ] && echo "layers: every arrow holds ($(echo $ARROWS))"
exit $rc
