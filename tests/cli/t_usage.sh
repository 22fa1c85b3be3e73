#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# The verbs' interfaces: --help, the man pages' SYNOPSIS and options, and
# usage errors (exit 2, a message naming the problem, nothing written).

. "$(atf_get_srcdir)/../env.sh"
. "$HWTRACE_SRC/tests/lib/hwtr_test.sh"

VERBS="import info verify diff report"

atf_test_case help_every_verb
help_every_verb_head()
{
	atf_set descr "every verb's --help and -h print its synopsis and exit 0"
}
help_every_verb_body()
{
	for v in $VERBS; do
		for h in --help -h; do
			run_status 0 "$HWTRACE" $v $h
			case $(head -n 1 out) in
			"usage: hwtrace $v "*) ;;
			*) atf_fail "hwtrace $v $h: expected 'usage: hwtrace $v ...', got '$(head -n 1 out)'" ;;
			esac
			expect_line out "See hwtrace-$v(1)."
			! [ -s err ] || atf_fail "hwtrace $v $h wrote to stderr: $(cat err)"
		done
	done
	run_status 0 "$HWTRACE" --help
	for v in $VERBS; do
		grep -q "^  $v " out || atf_fail "hwtrace --help does not list '$v': $(cat out)"
	done
}

atf_test_case help_fits_80_columns
help_fits_80_columns_head()
{
	atf_set descr "every --help (each verb, each query and fleet verb) and the usage of a usage error stay within 79 columns; a verb's usage error names its own --help"
}
help_fits_80_columns_body()
{
	{
		"$HWTRACE" --help
		for v in capture index $VERBS query export fleet; do
			"$HWTRACE" $v --help
		done
		for v in summary threads last calls tree func coverage hot \
		    branches timeline insns sql export bt annotate; do
			"$HWTRACE" query x.db $v --help
		done
		for v in runs func coverage diff; do
			"$HWTRACE" fleet URL $v --help
		done
		"$HWTRACE" query x.db tree --no-such-option 2>&1
		"$HWTRACE" report --no-such-option 2>&1
	} > help
	[ "$(grep -c '^usage: ' help)" -ge 27 ] ||
		atf_fail "expected 27 usages, got: $(grep '^usage: ' help)"
	awk 'length > 79' help > long
	[ ! -s long ] || atf_fail "lines past 79 columns: $(cat long)"
	# Wrapped where a word ends: no option is cut from its argument.
	grep -q -- '--timeout SECONDS' help ||
		atf_fail "expected '--timeout SECONDS' on one line"
	# A verb's usage error points at that verb's help.
	expect_line help "Try 'hwtrace query DB tree --help' for more information."
	"$HWTRACE" fleet URL diff --no-such-option 2> err && atf_fail "fleet accepted --no-such-option"
	expect_line err "Try 'hwtrace fleet URL diff --help' for more information."
}

# The SYNOPSIS of docs/hwtrace-VERB.1, as mandoc renders it, on one line.
man_synopsis()
{
	mandoc -Tascii "$HWTRACE_SRC/docs/hwtrace-$1.1" | sed 's/.\x08//g' |
	    sed -n '/^SYNOPSIS/,/^DESCRIPTION/p' | sed '1d;$d' | tr -s ' \t\n' '   ' |
	    sed 's/^ //; s/ $//'
}

atf_test_case help_matches_man
help_matches_man_head()
{
	atf_set descr "--help's usage equals the man page's SYNOPSIS and the man page documents every option of --help"
	atf_set require.progs "mandoc"
}
help_matches_man_body()
{
	for v in $VERBS; do
		"$HWTRACE" $v --help > help
		want=$(sed -n '1,/^$/p' help | sed 's/^usage: //' | tr -s ' \t\n' '   ' | sed 's/^ //; s/ $//')
		got=$(man_synopsis $v)
		[ "$want" = "$got" ] || atf_fail "hwtrace-$v.1 SYNOPSIS differs from --help: expected '$want', got '$got'"
		mandoc -Tascii "$HWTRACE_SRC/docs/hwtrace-$v.1" | sed 's/.\x08//g' > man
		for o in $(grep -o -- '--[a-z0-9.-]*' help | sort -u); do
			grep -q -- "$o" man || atf_fail "hwtrace-$v.1 does not document $o"
		done
	done
}

atf_test_case man_lint
man_lint_head()
{
	atf_set descr "every man page is mandoc -Tlint -W warning clean"
	atf_set require.progs "mandoc"
}
man_lint_body()
{
	for f in "$HWTRACE_SRC"/docs/*.[0-9]; do
		mandoc -Tlint -W warning "$f" > lint 2>&1 || atf_fail "$f: $(cat lint)"
	done
}

atf_test_case man_examples_run
man_examples_run_head()
{
	atf_set descr "the EXAMPLES of hwtrace(1), hwtrace-import(1), hwtrace-info(1) and hwtrace-verify(1) run and exit 0"
	atf_set require.progs "mandoc python3"
}
man_examples_run_body()
{
	require_corpus libipt-ptt/loop-tnt
	require_corpus lldb-intelpt
	# The files the examples name, from the corpus.
	for f in "$HWTRACE_CORPUS"/libipt-ptt/loop-tnt/loop-tnt.* \
	    "$HWTRACE_CORPUS"/lldb-intelpt/intelpt-trace-multi-file/*; do
		ln -s "$f" .
	done
	ln -s "$HWTRACE_CORPUS/lldb-intelpt/intelpt-trace" .
	ln -s "$HWTRACE_CORPUS/opencsd/snapshots" .
	ln -s "$HWTRACE_CORPUS/perf-data/cs_etm/perf_etm.data" .
	for v in "" -import -info -verify; do
		mandoc -Tascii "$HWTRACE_SRC/docs/hwtrace$v.1" | sed 's/.\x08//g' |
		    sed -n '/^EXAMPLES/,/^SEE ALSO/p' > ex
		# "$ command", with "\" continuation lines joined.
		python3 -c '
import sys
cmds, cur = [], None
for line in open("ex"):
    s = line.strip()
    if cur is None and s.startswith("$ "):
        cur = s[2:]
    elif cur is not None:
        cur += " " + s
    else:
        continue
    if cur.endswith("\\"):
        cur = cur[:-1]
    else:
        cmds.append(cur)
        cur = None
print("\n".join(cmds))
' > cmds
		[ -s cmds ] || atf_fail "hwtrace$v.1 has no examples"
		while IFS= read -r c; do
			case $c in
			*"| jq "*) command -v jq >/dev/null 2>&1 || continue ;;
			esac
			case $c in
			hwtrace\ *) ;;
			*) atf_fail "hwtrace$v.1: example '$c' does not start with hwtrace" ;;
			esac
			(PATH=$(dirname "$HWTRACE"):$PATH; eval "$c") > exout 2>&1 < /dev/null ||
			    atf_fail "hwtrace$v.1: example '$c' failed: $(cat exout)"
		done < cmds
	done
}

# usage_case "expected stderr first line" args...
usage_case()
{
	msg=$1
	shift
	run_status 2 "$HWTRACE" "$@"
	expect_first err "$msg"
	! [ -s out ] || atf_fail "'hwtrace $*' printed to stdout: $(cat out)"
	expect_no_output o.hwtrace
}

atf_test_case usage_errors
usage_errors_head()
{
	atf_set descr "unknown options, missing operands and malformed numbers exit 2 naming the problem"
}
usage_errors_body()
{
	printf 'x' > x.pt
	usage_case "usage: hwtrace [--version] [--help] VERB [ARGS...]"
	usage_case "hwtrace: unknown verb 'frob'" frob
	usage_case "hwtrace info: no archive given" info
	usage_case "hwtrace info: more than one archive given" info a b
	usage_case "hwtrace info: unknown option '--bogus'" info --bogus a
	usage_case "hwtrace info: unknown option '-x'" info -x a
	usage_case "hwtrace verify: no archive given" verify
	usage_case "hwtrace verify: more than one archive given" verify a b
	usage_case "hwtrace verify: unknown option '--json'" verify --json a
	usage_case "hwtrace import: no output given (-o OUT)" import --pt x.pt
	usage_case "hwtrace import: option '-o' needs an argument" import --pt x.pt -o
	usage_case "hwtrace import: option '--mtc-freq' needs an argument" import --pt x.pt --mtc-freq
	usage_case "hwtrace import: nothing to import (--pt FILE or TRACE.JSON)" import -o o.hwtrace
	usage_case "hwtrace import: no trace given (--pt FILE)" import --raw x.pt:0x1000 -o o.hwtrace
	usage_case "hwtrace import: malformed --mtc-freq '16': want 0 to 15" import --mtc-freq 16 --pt x.pt -o o.hwtrace
	usage_case "hwtrace import: malformed --mtc-freq '3x': want 0 to 15" import --mtc-freq 3x --pt x.pt -o o.hwtrace
	usage_case "hwtrace import: malformed --nom-freq '256': want 0 to 255" import --nom-freq 256 --pt x.pt -o o.hwtrace
	usage_case "hwtrace import: malformed --nom-freq '': want 0 to 255" import --nom-freq "" --pt x.pt -o o.hwtrace
	usage_case "hwtrace import: malformed --cpuid-0x15.eax '0x100000000': want a 32-bit number" import --cpuid-0x15.eax 0x100000000 --pt x.pt -o o.hwtrace
	usage_case "hwtrace import: malformed --cpuid-0x15.ebx '-1': want a 32-bit number" import --cpuid-0x15.ebx -1 --pt x.pt -o o.hwtrace
	usage_case "hwtrace import: malformed --cpu '6': want F/M[/S], auto or none" import --cpu 6 --pt x.pt -o o.hwtrace
	usage_case "hwtrace import: malformed --cpu '6/256': want F/M[/S], auto or none" import --cpu 6/256 --pt x.pt -o o.hwtrace
	usage_case "hwtrace import: malformed --cpu '6/79/1/2': want F/M[/S], auto or none" import --cpu 6/79/1/2 --pt x.pt -o o.hwtrace
	usage_case "hwtrace import: malformed --cpu 'intel': want F/M[/S], auto or none" import --cpu intel --pt x.pt -o o.hwtrace
	usage_case "hwtrace import: --raw 'x.pt': no load address (FILE[:FROM[-TO]]:VADDR)" import --raw x.pt --pt x.pt -o o.hwtrace
	usage_case "hwtrace import: --raw 'x.pt:zz': malformed load address 'zz'" import --raw x.pt:zz --pt x.pt -o o.hwtrace
	usage_case "hwtrace import: --raw 'x.pt:0x20-0x10:0x1000': malformed range (FROM or FROM-TO, TO above FROM)" import --raw x.pt:0x20-0x10:0x1000 --pt x.pt -o o.hwtrace
	usage_case "hwtrace import: --raw 'x.pt:1-2x:0x1000': malformed range (FROM or FROM-TO, TO above FROM)" import --raw x.pt:1-2x:0x1000 --pt x.pt -o o.hwtrace
	usage_case "hwtrace import: --pt 'x.pt:5-': malformed range (FROM or FROM-TO, TO above FROM)" import --pt x.pt:5- -o o.hwtrace
	usage_case "hwtrace import: --elf 'a.out:0xzz': malformed base '0xzz'" import --elf a.out:0xzz --pt x.pt -o o.hwtrace
	usage_case "hwtrace import: raw files (--pt, --raw, --elf) and a trace bundle cannot be imported together" import --pt x.pt --lldb t.json -o o.hwtrace
	usage_case "hwtrace import: --cpu, --cpuid-*, --mtc-freq and --nom-freq apply to raw imports; a trace bundle carries its own" import --cpu 6/79 t.json -o o.hwtrace
	usage_case "hwtrace import: more than one trace bundle given" import a.json b.json -o o.hwtrace
}

atf_test_case version
version_head()
{
	atf_set descr "--version names the program and the archive format"
}
version_body()
{
	run_status 0 "$HWTRACE" --version
	case $(cat out) in
	"hwtrace "[0-9]*" (archive format "[0-9]*.[0-9]*")") ;;
	*) atf_fail "expected 'hwtrace X.Y.Z (archive format M.N)', got '$(cat out)'" ;;
	esac
}

atf_init_test_cases()
{
	atf_add_test_case help_every_verb
	atf_add_test_case help_fits_80_columns
	atf_add_test_case help_matches_man
	atf_add_test_case man_lint
	atf_add_test_case man_examples_run
	atf_add_test_case usage_errors
	atf_add_test_case version
}
