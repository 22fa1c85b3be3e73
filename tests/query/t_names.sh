#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Copyright (c) 2026 The hwtrace authors
#
# Function names as people type them, matched as gdb's linespecs match:
# in any namespace, impl or package, every overload and template
# instance; a qualified name or a parameter list narrows it.  Programs
# in C++, Rust and Go, captured with the valgrind source; the call counts
# are those of their source, the names those nm -C prints.

. "$(atf_get_srcdir)/../env.sh"
. "$HWTRACE_SRC/tests/lib/hwtr_test.sh"

# capture PROG: capture ./PROG into PROG.hwtrace.
capture()
{
	"$HWTRACE" capture --source valgrind -o $1.hwtrace -- ./$1 > out 2> err ||
	    atf_fail "capture of $1 failed: $(cat err)"
}

# expect ARCHIVE PATTERN WANT: func PATTERN gives, per function, the rows
# WANT says ("NAME=COUNT;NAME=COUNT", sorted by name; "" none).
expect()
{
	"$HWTRACE" query "$1" func "$2" --format tsv > f.tsv 2> f.err
	rc=$?
	if [ -z "$3" ]; then
		[ $rc -eq 1 ] || atf_fail "func '$2': expected exit 1 (no match), got $rc: $(head -3 f.tsv)"
		return
	fi
	[ $rc -eq 0 ] || atf_fail "func '$2': exit $rc: $(cat f.err)"
	got=$(tail -n +2 f.tsv | cut -f4 | LC_ALL=C sort | uniq -c |
	    awk '{ c = $1; $1 = ""; sub(/^ /, ""); printf "%s%s=%s", n++ ? ";" : "", $0, c }')
	[ "$got" = "$3" ] || atf_fail "func '$2': expected '$3', got '$got'"
}

# suggests ARCHIVE PATTERN NAME: func PATTERN matches nothing, exits 1 and
# names NAME among the names it suggests.
suggests()
{
	"$HWTRACE" query "$1" func "$2" > f.tsv 2> f.err
	rc=$?
	[ $rc -eq 1 ] || atf_fail "func '$2': expected exit 1 (no match), got $rc: $(head -3 f.tsv)"
	head -1 f.err | grep -q "func: no symbol matches '.*'; did you mean .*'$3'" ||
	    atf_fail "func '$2': expected a suggestion of '$3', got: $(cat f.err)"
}

# has_names PROG NAME...: nm -C lists each NAME as a function of PROG.
has_names()
{
	p=$1
	shift
	nm -C $p | sed 's/^[0-9a-f]* [tTW] //' > names.txt
	for n in "$@"; do
		grep -qxF "$n" names.txt || atf_fail "nm -C $p does not list '$n': the expected names are wrong here"
	done
}

atf_test_case c_aliases_coverage
c_aliases_coverage_head() { atf_set descr "C: aliases of a function (a global and a weak alias, as glibc's __GI_ names) are the same code: coverage gives each the entries and the instructions the function ran (100 calls of a straight-line function, its length by objdump), whole, per thread and over a range; func matches each"; }
c_aliases_coverage_body()
{
	need_valgrind
	require_tools cc nm objdump
	cat > al.c <<'EOF'
#include <stdio.h>
__attribute__((noipa)) int work(int x) { return x * 3 + 1; }
extern int work_alias(int) __attribute__((alias("work")));
extern int work_weak(int) __attribute__((weak, alias("work")));
int main(void)
{
	int s = 0;

	for (int i = 0; i < 100; i++)
		s = work(s) & 0xffff;
	printf("%d\n", s);
	return 0;
}
EOF
	cc -O2 -g -o al al.c || atf_fail "cc failed"
	# work's instructions by objdump: one straight run up to its ret.
	set -- $(nm -S al | awk '$4 == "work" { print $1, $2 }')
	[ $# -eq 2 ] || atf_fail "nm -S does not list work"
	lo=$((0x$1))
	hi=$((lo + 0x$2))
	objdump -d --no-show-raw-insn --start-address=$lo --stop-address=$hi al |
	    grep -E '^ +[0-9a-f]+:' > work.s
	n=$(wc -l < work.s)
	[ "$n" -ge 2 ] || atf_fail "objdump shows $n instructions in work"
	grep -E '	j|call' work.s && atf_fail "work is not straight-line here"
	tail -1 work.s | grep -q 'ret' || atf_fail "work does not end in ret: $(tail -1 work.s)"
	capture al
	"$HWTRACE" index -q -o al.db al.hwtrace || atf_fail "index failed"
	t=$("$HWTRACE" query al.db summary --format tsv | awk -F'\t' '$1 == "instructions" { print $2 }')
	for opts in "" "--thread 1" "--from 0 --to $((t - 1))"; do
		"$HWTRACE" query al.db coverage --image al --format tsv $opts > cov.tsv 2> cov.err ||
		    atf_fail "coverage $opts: $(cat cov.err)"
		for f in work work_alias work_weak; do
			got=$(awk -F'\t' -v f=$f '$2 == f { print $5 " " $6 }' cov.tsv)
			[ "$got" = "100 $((100 * n))" ] ||
			    atf_fail "coverage $opts: $f: entries and instructions '$got', expected '100 $((100 * n))'"
		done
	done
	expect al.db work_alias "work=100"
	expect al.db work_weak "work=100"
}

atf_test_case cxx_namespaces_overloads
cxx_namespaces_overloads_head() { atf_set descr "C++: 'f' names every f of every namespace and overload, 'geo::f' those of geo, 'f(double)' one overload, 'Sq::area' a method, 'twice' every instance of a template, 'hidden' a function of an anonymous namespace; counts as the source makes them; a typo gets names spelled as the pattern is"; }
cxx_namespaces_overloads_body()
{
	need_valgrind
	command -v g++ >/dev/null 2>&1 || atf_skip "g++ is not installed"
	cat > ns.cc <<'EOF'
#include <cstdio>
#define F __attribute__((noipa))
namespace geo {
F int f(int x) { return x + 1; }
F double f(double x) { return x * 2; }
struct Sq { int s; F int area() const { return s * s; } };
namespace inner { F int f(int x) { return x - 1; } }
}
namespace other { F int f(int x) { return x * 3; } }
template <typename T> F T twice(T x) { return x + x; }
namespace { F int hidden(int x) { return x ^ 1; } }
int main(int argc, char **)
{
	int s = 0;
	double d = 0;
	geo::Sq q{argc + 1};

	for (int i = 0; i < 3; i++) s += geo::f(i + argc);
	for (int i = 0; i < 4; i++) d += geo::f(i + 0.5 * argc);
	for (int i = 0; i < 5; i++) s += geo::inner::f(i);
	for (int i = 0; i < 6; i++) s += other::f(i);
	for (int i = 0; i < 7; i++) s += q.area();
	for (int i = 0; i < 2; i++) s += twice<int>(i);
	for (int i = 0; i < 8; i++) d += twice<double>(i);
	for (int i = 0; i < 9; i++) s += hidden(i);
	std::printf("%d %f\n", s, d);
	return 0;
}
EOF
	g++ -O1 -g -o ns ns.cc || atf_fail "g++ failed"
	has_names ns "geo::f(int)" "geo::f(double)" "geo::inner::f(int)" \
	    "other::f(int)" "geo::Sq::area() const" "int twice<int>(int)" \
	    "double twice<double>(double)" "(anonymous namespace)::hidden(int)"
	capture ns
	expect ns.hwtrace f "geo::f(double)=4;geo::f(int)=3;geo::inner::f(int)=5;other::f(int)=6"
	expect ns.hwtrace geo::f "geo::f(double)=4;geo::f(int)=3"
	expect ns.hwtrace inner::f "geo::inner::f(int)=5"
	expect ns.hwtrace geo::inner::f "geo::inner::f(int)=5"
	expect ns.hwtrace "f(double)" "geo::f(double)=4"
	expect ns.hwtrace "geo::f(int)" "geo::f(int)=3"
	expect ns.hwtrace "f(int)" "geo::f(int)=3;geo::inner::f(int)=5;other::f(int)=6"
	expect ns.hwtrace area "geo::Sq::area() const=7"
	expect ns.hwtrace Sq::area "geo::Sq::area() const=7"
	expect ns.hwtrace twice "double twice<double>(double)=8;int twice<int>(int)=2"
	expect ns.hwtrace "twice<int>" "int twice<int>(int)=2"
	expect ns.hwtrace hidden "(anonymous namespace)::hidden(int)=9"
	# Narrowed to nothing: a scope that is not there, the global one.
	expect ns.hwtrace other::area ""
	expect ns.hwtrace ::f ""
	expect ns.hwtrace inner ""
	# Globs and mangled names as before.
	expect ns.hwtrace "geo::f*" "geo::f(double)=4;geo::f(int)=3"
	expect ns.hwtrace _ZN3geo1fEi "geo::f(int)=3"
	# A typo: the names suggested are spelled as the pattern is.
	suggests ns.hwtrace Sq::aera Sq::area
	suggests ns.hwtrace hiden hidden
	suggests ns.hwtrace "geo::f(dobule)" "geo::f(double)"
}

atf_test_case cxx_long_names
cxx_long_names_head() { atf_set descr "C++: a function whose demangled name (nested std::map, std::function, std::tuple) is over 4 KiB is named by 'run', 'Holder::run', '::deep::Holder::run', its parameters and its template arguments as a short one is, in func, annotate and branches; calls counted by the fixture's source"; }
cxx_long_names_body()
{
	need_vg_fixture longname
	cp "$HWTRACE_PROGS/longname" . || atf_fail "cannot copy the fixture"
	short="deep::Holder<int>::run(int const&, int)"
	has_names longname "$short"
	long=$(sed -n 's/^\(deep::Holder<std::map<.*>::run(.*)\)$/\1/p' names.txt)
	[ ${#long} -gt 4096 ] ||
	    atf_fail "nm -C longname: expected a deep::Holder<std::map<...>>::run over 4096 characters, got ${#long}: '$long'"
	# The parameters and the template argument, as nm -C spells them.
	params=${long##*>::run}
	targ=${long#deep::Holder<}
	targ=${targ%>::run(*}
	[ ${#params} -gt 4096 ] && [ ${#targ} -gt 4096 ] ||
	    atf_fail "expected parameters and a template argument over 4096 characters, got ${#params} and ${#targ}"
	capture longname
	expect longname.hwtrace run "$short=3;$long=7"
	expect longname.hwtrace Holder::run "$short=3;$long=7"
	expect longname.hwtrace deep::Holder::run "$short=3;$long=7"
	expect longname.hwtrace ::deep::Holder::run "$short=3;$long=7"
	expect longname.hwtrace "run$params" "$long=7"
	expect longname.hwtrace "deep::Holder::run$params" "$long=7"
	expect longname.hwtrace "Holder<$targ>::run" "$long=7"
	expect longname.hwtrace "::deep::Holder<$targ>::run$params" "$long=7"
	expect longname.hwtrace "run(int const&, int)" "$short=3"
	expect longname.hwtrace "Holder<int>::run" "$short=3"
	expect longname.hwtrace other::run ""
	expect longname.hwtrace "run(int)" ""
	suggests longname.hwtrace Holder::rn Holder::run
	# The other verbs that take a function: 7 runs of each instruction,
	# 7 returns, 7 calls; the name whole in every cell.
	"$HWTRACE" query longname.hwtrace annotate "Holder::run$params" \
	    --format tsv > a.tsv 2> a.err || atf_fail "annotate: $(cat a.err)"
	got=$(tail -n +2 a.tsv | awk -F'\t' -v n="$long" '
	    { k++; if (($2 == n || index($2, n "+0x") == 1) && $3 == 7) ok++ }
	    END { printf "%d of %d", ok, k }')
	[ "$got" = "2 of 2" ] ||
	    atf_fail "annotate: expected 2 instructions of the long run (lea, ret: 2 of 2 rows named whole, run 7 times), got $got"
	"$HWTRACE" query longname.hwtrace branches --from "run$params" \
	    --format tsv > b.tsv 2> b.err || atf_fail "branches --from: $(cat b.err)"
	got=$(tail -n +2 b.tsv | awk -F'\t' -v n="$long" '
	    index($1, n "+0x") == 1 && $3 == "return" { c += $4 } END { print c + 0 }')
	[ "$got" = 7 ] || atf_fail "branches --from: expected 7 returns from the long run, got $got"
	"$HWTRACE" query longname.hwtrace branches --to "Holder::run$params" \
	    --format tsv > b.tsv 2> b.err || atf_fail "branches --to: $(cat b.err)"
	got=$(tail -n +2 b.tsv | awk -F'\t' -v n="$long" '
	    $2 == n && $3 == "call" { c += $4 } END { print c + 0 }')
	[ "$got" = 7 ] || atf_fail "branches --to: expected 7 calls of the long run, got $got"
}

atf_test_case rust_modules_impls
rust_modules_impls_head() { atf_set descr "Rust: 'count_words' names shapes::count_words, 'area' every impl's area, 'Sq::area' and 'Shape::area' through the type and the trait"; }
rust_modules_impls_body()
{
	need_valgrind
	rc=/usr/bin/rustc
	[ -x $rc ] || rc=$(command -v rustc) || atf_skip "rustc is not installed (Debian's rustc)"
	cat > shapes.rs <<'EOF'
mod shapes {
    pub trait Shape { fn area(&self) -> f64; }
    pub struct Sq(pub f64);
    pub struct Circle(pub f64);
    impl Shape for Sq {
        #[inline(never)]
        fn area(&self) -> f64 { self.0 * self.0 }
    }
    impl Shape for Circle {
        #[inline(never)]
        fn area(&self) -> f64 { 3.0 * self.0 * self.0 }
    }
    #[inline(never)]
    pub fn count_words(s: &str) -> usize { s.split_whitespace().count() }
}
use shapes::Shape;
fn main() {
    let v: Vec<Box<dyn Shape>> = vec![Box::new(shapes::Sq(2.0)),
        Box::new(shapes::Circle(1.0)), Box::new(shapes::Sq(3.0))];
    let mut t = 0.0;
    for s in v.iter() { t += s.area(); }
    let mut n = 0;
    for _ in 0..4 {
        n += shapes::count_words(if std::env::args().count() > 5 { "x" } else { "a b c" });
    }
    println!("{} {}", t, n);
}
EOF
	$rc -g -O -o shapes shapes.rs || atf_fail "rustc failed"
	sq="<shapes::shapes::Sq as shapes::shapes::Shape>::area"
	ci="<shapes::shapes::Circle as shapes::shapes::Shape>::area"
	has_names shapes "$sq" "$ci" "shapes::shapes::count_words"
	capture shapes
	expect shapes.hwtrace count_words "shapes::shapes::count_words=4"
	expect shapes.hwtrace shapes::count_words "shapes::shapes::count_words=4"
	expect shapes.hwtrace area "$ci=1;$sq=2"
	expect shapes.hwtrace Sq::area "$sq=2"
	expect shapes.hwtrace Circle::area "$ci=1"
	expect shapes.hwtrace Shape::area "$ci=1;$sq=2"
	expect shapes.hwtrace Triangle::area ""
	suggests shapes.hwtrace Sq::aera Sq::area
	suggests shapes.hwtrace count_wrods count_words
}

atf_test_case go_packages
go_packages_head() { atf_set descr "Go: 'main.work' as Go prints it, 'work' in any package, '(*Acc).Add' a method"; }
go_packages_body()
{
	need_valgrind
	go_work gop
	has_names gop "main.work" "main.(*Acc).Add"
	capture gop
	expect gop.hwtrace main.work "main.work=6"
	expect gop.hwtrace work "main.work=6"
	expect gop.hwtrace "(*Acc).Add" "main.(*Acc).Add=4"
	expect gop.hwtrace "main.(*Acc).Add" "main.(*Acc).Add=4"
	expect gop.hwtrace other.work ""
	suggests gop.hwtrace main.wrok main.work
}

atf_init_test_cases()
{
	atf_add_test_case c_aliases_coverage
	atf_add_test_case cxx_namespaces_overloads
	atf_add_test_case cxx_long_names
	atf_add_test_case rust_modules_impls
	atf_add_test_case go_packages
}
