#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Copyright (c) 2026 The hwtrace authors
#
# tests/layers.sh (make layers) over a tree of three made-up modules
# built here: low/ (interface hwtr_low.h and low_pub.h, private
# low_priv.h), mid/ using low/, side/ using low/ only.  The clean tree
# passes; each rule broken once makes it exit 1 naming the file and
# what it reached.

. "$(atf_get_srcdir)/../env.sh"
. "$HWTRACE_SRC/tests/lib/hwtr_test.sh"

ARROWS="low::low_pub.h mid:low side:low"

# fake_tree: the three modules, every source compiled as the Makefile
# would (include/ and the used modules' folders only).
fake_tree()
{
	require_tools cc nm join
	mkdir -p include low mid side
	echo '/* the public header */' > include/hwtrace.h
	echo 'int low_f(void);' > low/hwtr_low.h
	echo 'int low_g(void);' > low/low_priv.h
	echo 'int low_h(void);' > low/low_pub.h
	cat > low/low.c <<'EOF'
#include "hwtr_low.h"
#include "low_priv.h"
#include "low_pub.h"
int low_f(void) { return (low_g() + 1); }
int low_g(void) { return (2); }
int low_h(void) { return (3); }
EOF
	cat > mid/mid.c <<'EOF'
#include "hwtrace.h"
#include "hwtr_low.h"
#include "low_pub.h"
int mid_f(void);
int mid_f(void) { return (low_f() + low_h()); }
EOF
	cat > side/side.c <<'EOF'
#include "hwtr_low.h"
int side_f(void);
int side_f(void) { return (low_f()); }
EOF
	build_fake
}

# build_fake: compile each module's sources into B/obj/<module>/.
build_fake()
{
	for m in low mid side; do
		inc="-Iinclude"
		[ "$m" = low ] || inc="$inc -Ilow"
		mkdir -p B/obj/$m
		for c in $m/*.c; do
			cc -c $inc -o "B/obj/${c%.c}.o" "$c" 2>cc.err ||
			    atf_fail "cannot compile $c: $(oneline cc.err)"
		done
	done
}

# layers WANT: tests/layers.sh over the tree exits WANT.
layers()
{
	sh "$HWTRACE_SRC/tests/layers.sh" B cc $ARROWS >out 2>err
	rc=$?
	[ "$rc" -eq "$1" ] ||
	    atf_fail "layers.sh: expected exit $1, got $rc; stdout: $(oneline out); stderr: $(oneline err)"
}

atf_test_case clean_tree_passes
clean_tree_passes_head()
{
	atf_set descr "interface headers (hwtr_*.h and one named after the second colon) and calls along the arrows: exit 0"
}
clean_tree_passes_body()
{
	fake_tree
	layers 0
	expect_line out "layers: every arrow holds ($ARROWS)"
}

atf_test_case private_header_refused
private_header_refused_head()
{
	atf_set descr "a module including another module's private header fails, naming the file and the header"
}
private_header_refused_body()
{
	fake_tree
	sed -i 's/"low_pub.h"/"low_priv.h"/' mid/mid.c
	build_fake
	layers 1
	grep -qF "layers: mid/mid.c includes low/low_priv.h, a header private to low/ (its interface: hwtr_*.h low_pub.h)" err ||
	    atf_fail "expected mid/mid.c's include of low/low_priv.h named; got: $(oneline err)"
	# The same header listed as low's interface is allowed.
	ARROWS="low::low_pub.h,low_priv.h mid:low side:low"
	layers 0
}

atf_test_case call_against_arrow_refused
call_against_arrow_refused_head()
{
	atf_set descr "an object calling a module its module may not use fails, naming the object and the symbol"
}
call_against_arrow_refused_body()
{
	fake_tree
	printf 'int mid_f(void);\nint side_g(void);\nint side_g(void) { return (mid_f()); }\n' >> side/side.c
	build_fake
	layers 1
	expect_line err "layers: side/side.o calls mid_f of mid/, but side may not use mid"
}

atf_test_case include_around_paths_refused
include_around_paths_refused_head()
{
	atf_set descr "an #include \"../...\" reaching around the include paths fails"
}
include_around_paths_refused_body()
{
	fake_tree
	printf '#include "../mid/mid.h"\n' >> side/side.c
	echo 'int mid_f(void);' > mid/mid.h
	layers 1
	grep -q '^layers: side/ includes around its include paths: side/side.c:[0-9]*:#include "../mid/mid.h"$' err ||
	    atf_fail "expected side.c's include of ../mid/mid.h named; got: $(oneline err)"
}

atf_test_case unusable_header_reachable_refused
unusable_header_reachable_refused_head()
{
	atf_set descr "a header of a module that may not be used, reachable through the include paths, fails"
}
unusable_header_reachable_refused_body()
{
	fake_tree
	# mid.h of mid/, and a copy of it in include/ that side/ reaches.
	echo 'int mid_f(void);' > mid/hwtr_mid.h
	cp mid/hwtr_mid.h include/
	layers 1
	expect_line err "layers: side/ can include mid/hwtr_mid.h, but side may not use mid"
}

# fn FILE F [G]: append to FILE a function F returning G() (or 1).
fn()
{
	if [ $# -gt 2 ]; then
		printf 'int %s(void);\nint %s(void);\nint %s(void) { return (%s()); }\n' \
		    "$3" "$2" "$2" "$3" >> "$1"
	else
		printf 'int %s(void);\nint %s(void) { return (1); }\n' \
		    "$2" "$2" >> "$1"
	fi
}

atf_test_case circle_refused
circle_refused_head()
{
	atf_set descr "two objects of one module calling each other fail, naming both objects and the symbols of each edge; a chain passes; LAYERS_CIRCLE_EXEMPT tells the module's circle without failing"
}
circle_refused_body()
{
	fake_tree
	# A chain inside low/: low_a.o uses low_b.o, low_b.o uses nothing.
	fn low/low_a.c low_a1 low_b1
	fn low/low_b.c low_b1
	build_fake
	layers 0
	# LAYERS_ORDER: the files level by level, bottom first.
	LAYERS_ORDER=1 layers 0
	expect_line err "order low/: low.c low_b.c < low_a.c"
	# low_b.o now uses low_a.o back: a circle of two.
	fn low/low_a.c low_a2
	fn low/low_b.c low_b2 low_a2
	build_fake
	layers 1
	expect_line err "layers: low/ has a circle of calls among 2 objects: low/low_a.o low/low_b.o; one circle: low/low_a.o -> low/low_b.o (low_b1) -> low/low_a.o (low_a2)"
	# Exempt: told on stdout, exit 0.
	LAYERS_CIRCLE_EXEMPT="side low" layers 0
	grep -qF "layers: low/ has a circle of calls among 2 objects" out ||
	    atf_fail "expected the exempt circle told on stdout; got: $(oneline out)"
	grep -qF "(exempt: LAYERS_CIRCLE_EXEMPT)" out ||
	    atf_fail "expected the exemption named; got: $(oneline out)"
	# A module named like a prefix of low is no exemption.
	LAYERS_CIRCLE_EXEMPT="lo" layers 1
}

atf_test_case circle_of_three_refused
circle_of_three_refused_head()
{
	atf_set descr "a circle through three objects (a -> b -> c -> a) fails; every object of it is named"
}
circle_of_three_refused_body()
{
	fake_tree
	fn mid/mid_a.c mid_a mid_b
	fn mid/mid_b.c mid_b mid_c
	fn mid/mid_c.c mid_c mid_a
	build_fake
	layers 1
	expect_line err "layers: mid/ has a circle of calls among 3 objects: mid/mid_a.o mid/mid_b.o mid/mid_c.o; one circle: mid/mid_a.o -> mid/mid_b.o (mid_b) -> mid/mid_c.o (mid_c) -> mid/mid_a.o (mid_a)"
}

atf_init_test_cases()
{
	atf_add_test_case circle_refused
	atf_add_test_case circle_of_three_refused
	atf_add_test_case clean_tree_passes
	atf_add_test_case private_header_refused
	atf_add_test_case call_against_arrow_refused
	atf_add_test_case include_around_paths_refused
	atf_add_test_case unusable_header_reachable_refused
}
