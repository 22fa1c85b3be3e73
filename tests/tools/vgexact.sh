#! /bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Copyright (c) 2026 The hwtrace authors
#
# Is a capture exact against callgrind, per instruction and per
# conditional branch, in one object?  Runs COMMAND under callgrind and
# under `hwtrace capture` (the valgrind source unless -s), indexes the
# capture and compares the two with cgcompare.py.
#
# Both runs get the same environment, as far as the program can see:
# only PATH, HOME, HWTRACE_VALGRIND_LIB and the -e variables;
# VALGRIND_LIB (and so Valgrind's LD_PRELOAD) names one directory, which
# holds the hwtrace tool and callgrind; the signals as the caller left
# them (hwtrace capture passes an ignored SIGPIPE on since f61cbd4, an
# ignored SIGINT, SIGHUP, SIGTERM or SIGUSR2 since it gives them back to
# the program ignored; before, the program got them at their defaults:
# run from a script's background job, xz took another path).  Another
# source (-s step) runs the program natively: the callgrind run's load
# bias of OBJECT, read from a valgrind-source capture made here too,
# places the code callgrind cannot name.
#
# usage: vgexact.sh [-k DIR] [-s SOURCE] [-r LO:HI] [-e NAME=VALUE]...
#            OBJECT COMMAND [ARG...]
#   HWTRACE: the hwtrace binary (default: hwtrace on PATH).
#   -k DIR: work in DIR and keep it (default: a temporary directory,
#   removed).  Exit status: cgcompare.py's (0 exact, 1 differs, 2 error).

usage() {
	echo "usage: vgexact.sh [-k DIR] [-s SOURCE] [-r LO:HI]" \
	    "[-e NAME=VALUE]... OBJECT COMMAND [ARG...]" >&2
	exit 2
}

fail() {
	echo "vgexact.sh: $*" >&2
	exit 2
}

keep= source=valgrind range= envs=
while getopts k:s:r:e: opt; do
	case $opt in
	k) keep=$OPTARG ;;
	s) source=$OPTARG ;;
	r) range="-r $OPTARG" ;;
	e) case $OPTARG in
	   *=*) envs="$envs $OPTARG" ;;
	   *) fail "-e: expected NAME=VALUE, got '$OPTARG'" ;;
	   esac ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 2 ] || usage
object=$1
shift

: "${HWTRACE:=$(command -v hwtrace)}"
[ -x "$HWTRACE" ] || fail "no hwtrace binary (set HWTRACE)"
command -v valgrind.bin >/dev/null 2>&1 || fail "valgrind is not installed"
cg=$(dirname "$(readlink -f "$(command -v valgrind.bin)")")
cg=$(readlink -f "$cg/../libexec/valgrind/callgrind-amd64-linux")
[ -x "$cg" ] || cg=/usr/libexec/valgrind/callgrind-amd64-linux
[ -x "$cg" ] || fail "callgrind's tool is not installed"
lib=${HWTRACE_VALGRIND_LIB:-$(dirname "$HWTRACE")/valgrind-lib}
[ -f "$lib/hwtrace-amd64-linux" ] ||
	fail "no hwtrace Valgrind tool in '$lib' (set HWTRACE_VALGRIND_LIB)"
here=$(dirname "$(readlink -f "$0")")

if [ -n "$keep" ]; then
	dir=$keep
	mkdir -p "$dir" || fail "cannot create '$dir'"
else
	dir=$(mktemp -d "${TMPDIR:-/tmp}/vgexact.XXXXXX") ||
		fail "cannot create a temporary directory"
	trap 'rm -rf "$dir"' EXIT
fi
dir=$(readlink -f "$dir")

# One Valgrind library directory for both tools.
mkdir -p "$dir/vl" || fail "cannot create '$dir/vl'"
for f in "$lib"/*; do
	ln -sf "$(readlink -f "$f")" "$dir/vl/$(basename "$f")"
done
ln -sf "$cg" "$dir/vl/callgrind-amd64-linux"

# run COMMAND...: with the environment both runs share.  The capture
# needs HWTRACE_VALGRIND_LIB and passes it on to the program: the
# callgrind run gets it too, or the program's environment would be one
# variable longer under hwtrace (getenv's loop ran 25% more in libc).
run() {
	env -i PATH="$PATH" HOME="$HOME" HWTRACE_VALGRIND_LIB="$dir/vl" \
	    $envs "$@"
}

(
	run VALGRIND_LIB="$dir/vl" valgrind.bin --tool=callgrind -q \
	    --dump-instr=yes --collect-jumps=yes --skip-plt=no \
	    --run-libc-freeres=no --run-cxx-freeres=no \
	    --callgrind-out-file="$dir/cg.out" "$@" >"$dir/cg.stdout" \
	    2>"$dir/cg.stderr"
) || fail "callgrind failed: $(head -c 600 "$dir/cg.stderr")"

sources=valgrind
[ "$source" = valgrind ] || sources="valgrind $source"
for s in $sources; do
	run "$HWTRACE" capture --source "$s" \
	    --force -o "$dir/$s.hwtrace" -- "$@" >"$dir/$s.stdout" \
	    2>"$dir/$s.stderr" ||
		fail "capture --source $s failed: $(head -c 600 "$dir/$s.stderr")"
	cmp -s "$dir/cg.stdout" "$dir/$s.stdout" ||
		fail "the program's output under --source $s differs from" \
		    "its output under callgrind ($dir)"
	"$HWTRACE" index -o "$dir/$s.db.new" "$dir/$s.hwtrace" \
	    >"$dir/$s.index" 2>&1 ||
		fail "index failed: $(head -c 600 "$dir/$s.index")"
	mv "$dir/$s.db.new" "$dir/$s.db"
done

bias=
if [ "$source" != valgrind ]; then
	bias=$(python3 - "$dir/valgrind.db" "$object" <<'EOF'
import os, sqlite3, sys
db = sqlite3.connect('file:%s?mode=ro' % sys.argv[1], uri=True)
want = os.path.basename(os.path.realpath(sys.argv[2]))
for path, bias in db.execute('SELECT i.path, m.bias FROM mappings m '
                             'JOIN images i ON m.image = i.id'):
    if path and os.path.basename(os.path.realpath(path)) == want:
        print('%#x' % bias)
        break
EOF
	) || fail "cannot read the mappings of $dir/valgrind.db"
	[ -n "$bias" ] || fail "'$object' is not mapped in the valgrind capture"
	bias="-b $bias"
fi
python3 "$here/cgcompare.py" $bias $range "$dir/cg.out" "$dir/$source.db" \
    "$object"
