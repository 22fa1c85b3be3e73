# SPDX-License-Identifier: BSD-2-Clause
#
# Helpers sourced by the atf-sh programs of tests/cli (after env.sh).

# Run "$@"; fail unless it exits with status $1 (shift).  Output goes to
# ./out and ./err.
run_status()
{
	want=$1
	shift
	"$@" >out 2>err
	got=$?
	if [ "$got" -ne "$want" ]; then
		atf_fail "'$*': expected exit status $want, got $got; stdout: $(head -c 2000 out); stderr: $(head -c 2000 err)"
	fi
}

# Fail unless file $1 has the exact line $2.
expect_line()
{
	if ! grep -qxF -- "$2" "$1"; then
		atf_fail "expected the line '$2' in $1; got: $(head -c 3000 "$1")"
	fi
}

# Fail unless the first line of file $1 is exactly $2.
expect_first()
{
	first=$(head -n 1 "$1")
	if [ "$first" != "$2" ]; then
		atf_fail "expected first line '$2' in $1, got '$first'; all: $(head -c 2000 "$1")"
	fi
}

# Fail when any file matching the output name $1 (or its .partial) exists.
expect_no_output()
{
	for f in "$1" "$1.partial"; do
		if [ -e "$f" ]; then
			atf_fail "'$f' was left behind after a failed import"
		fi
	done
}

# Skip unless the shared corpus has $1.
require_corpus()
{
	if [ ! -e "$HWTRACE_CORPUS/$1" ]; then
		atf_skip "shared corpus not found at $HWTRACE_CORPUS/$1"
	fi
}

# The GNU build-id of ELF file $1 as readelf(1) prints it.
readelf_build_id()
{
	readelf -n "$1" | sed -n 's/^ *Build ID: *\([0-9a-f]*\).*/\1/p'
}

# "vaddr offset filesz flags" of each PT_LOAD of ELF file $1, per readelf(1).
readelf_loads()
{
	readelf -lW "$1" | awk '$1 == "LOAD" { f = ""; for (i = 7; i < NF; i++) f = f $i; print $3, $2, $5, f }'
}

# The mapping lines "hwtrace info" should print for ELF file $1 (as $2 in
# the archive) mapped with its lowest segment at $3 (0: where linked), for
# process $4, image key $5 -- computed from readelf(1) alone.
expected_mappings()
{
	readelf_loads "$1" | python3 -c '
import sys
path, base, pid, key = sys.argv[1], int(sys.argv[2], 0), sys.argv[3], sys.argv[4]
segs = [l.split() for l in sys.stdin if l.strip()]
minv = min(int(s[0], 16) for s in segs)
slide = base - minv if base else 0
for vaddr, off, filesz, flags in segs:
    v, o, n = int(vaddr, 16), int(off, 16), int(filesz, 16)
    if n == 0:
        continue
    prot = ("r" if "R" in flags else "-") + ("w" if "W" in flags else "-") + ("x" if "E" in flags else "-")
    print("  pid %s: 0x%x-0x%x pgoff 0x%x %s %s [%s]" % (pid, v + slide, v + slide + n, o, prot, path, key))
' "$2" "$3" "$4" "$5"
}
