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
#     another module's objects is defined by a module it may use;
#  5. no circles: inside a module, no object uses (through a chain of
#     others) a symbol of an object that uses one of its own.  A module
#     named in the environment's LAYERS_CIRCLE_EXEMPT (space-separated)
#     has its circles printed on stdout, not refused.  With LAYERS_ORDER
#     set, each module without a circle has its files printed on stderr
#     level by level, bottom first ("order m/: a.c b.c < c.c"; README
#     draws them).

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

# 5. No circle of calls inside a module: the graph "object A uses a
# symbol object B of the same module defines" has no cycle.  Each strongly
# connected set of two or more objects is refused, with one circle
# through it and the symbols on each of its edges.  The modules named in
# LAYERS_CIRCLE_EXEMPT are told, not refused.
for m in $mods; do
	o=$(objs "$m")
	[ -n "$o" ] || continue
	# "symbol object" for every definition, then "user definer symbol".
	nm -A -g --defined-only $o |
	    awk 'NF == 3 { f = $1; sub(/:[^:]*$/, "", f); print $3, f }' |
	    sort -u > "$probe/mdefs"
	nm -A -u $o | awk '{ f = $1; sub(/:$/, "", f); print $NF, f }' |
	    sort -u | join - "$probe/mdefs" |
	    awk -v b="$B/obj/" '$2 != $3 {
		u = substr($2, length(b) + 1); d = substr($3, length(b) + 1)
		print u, d, $1 }' > "$probe/edges"
	for f in $o; do echo "${f#$B/obj/}"; done > "$probe/nodes"
	awk -v m="$m" -v order="${LAYERS_ORDER:-}" -f - "$probe/nodes" \
	    "$probe/edges" <<'AWK'
# Tarjan's strongly connected components over the edges "from to sym";
# the objects alone first, so that one with no edge is a node too.
NF == 1 {
	node[$1]
	next
}
{
	k = $1 SUBSEP $2
	if (!(k in sym)) {
		nout[$1]++
		out[$1, nout[$1]] = $2
		sym[k] = $3
	} else
		sym[k] = sym[k] ", " $3
	node[$1]; node[$2]
}
function visit(v,	i, w, c, n) {
	idx[v] = low[v] = ++counter
	stack[++sp] = v
	on[v] = 1
	for (i = 1; i <= nout[v]; i++) {
		w = out[v, i]
		if (!(w in idx)) {
			visit(w)
			if (low[w] < low[v])
				low[v] = low[w]
		} else if (on[w] && idx[w] < low[v])
			low[v] = idx[w]
	}
	if (low[v] != idx[v])
		return
	n = 0
	do {
		w = stack[sp--]
		on[w] = 0
		comp[w] = v
		n++
	} while (w != v)
	size[v] = n
}
# circle(s): the shortest way from s back to s inside its component.
function circle(s,	q, head, tail, prev, seen, v, i, w, path, t) {
	head = tail = 0
	for (i = 1; i <= nout[s]; i++) {
		w = out[s, i]
		if (comp[w] == comp[s] && !(w in seen)) {
			seen[w] = 1
			prev[w] = s
			q[tail++] = w
		}
	}
	while (head < tail) {
		v = q[head++]
		if (v == s)
			break
		for (i = 1; i <= nout[v]; i++) {
			w = out[v, i]
			if (comp[w] == comp[s] && !(w in seen)) {
				seen[w] = 1
				prev[w] = v
				q[tail++] = w
			}
		}
	}
	path = ""
	v = s
	do {
		t = prev[v]
		path = " -> " v " (" sym[t SUBSEP v] ")" path
		v = t
	} while (v != s)
	return (s path)
}
END {
	n = 0
	for (v in node) {
		for (j = ++n; j > 1 && names[j - 1] > v; j--)
			names[j] = names[j - 1]
		names[j] = v
	}
	for (i = 1; i <= n; i++)
		if (!(names[i] in idx))
			visit(names[i])
	for (i = 1; i <= n; i++) {
		r = comp[names[i]]
		if (size[r] < 2 || (r in told))
			continue
		told[r] = 1
		members = ""
		for (j = 1; j <= n; j++)
			if (comp[names[j]] == r)
				members = members " " names[j]
		printf "layers: %s/ has a circle of calls among %d objects:%s; " \
		    "one circle: %s\n", m, size[r], members, circle(names[i])
	}
	if (order == "" || length(told) > 0)
		exit
	# LAYERS_ORDER: the objects level by level, bottom first (an
	# object's level is one above the highest of those it uses).
	top = 0
	for (i = 1; i <= n; i++)
		if (level(names[i]) > top)
			top = level(names[i])
	line = ""
	for (l = 0; l <= top; l++) {
		line = line (l ? " <" : "")
		for (i = 1; i <= n; i++)
			if (lev[names[i]] == l) {
				f = names[i]
				sub(/^.*\//, "", f)
				sub(/\.o$/, ".c", f)
				line = line " " f
			}
	}
	printf "order %s/:%s\n", m, line > "/dev/stderr"
}
function level(v,	i, w, l) {
	if (v in lev)
		return (lev[v])
	l = 0
	for (i = 1; i <= nout[v]; i++) {
		w = out[v, i]
		if (level(w) + 1 > l)
			l = level(w) + 1
	}
	lev[v] = l
	return (l)
}
AWK
	[ $? -eq 0 ] || echo "layers: $m/: the circle check itself failed"
done > "$probe/circles"
if [ -s "$probe/circles" ]; then
	refused=0
	while read -r line; do
		m=${line#layers: }
		m=${m%%/*}
		case " ${LAYERS_CIRCLE_EXEMPT:-} " in
		*" $m "*)
			echo "$line (exempt: LAYERS_CIRCLE_EXEMPT)";;
		*)
			echo "$line" >&2
			refused=1;;
		esac
	done < "$probe/circles"
	[ $refused -eq 0 ] || rc=1
fi
[ $rc -eq 0 ] && echo "layers: every arrow holds ($(echo $ARROWS))"
exit $rc
