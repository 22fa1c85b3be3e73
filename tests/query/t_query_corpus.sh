#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# hwtrace query on real Intel PT captures (the shared corpus's LLDB test
# traces): the archive is indexed on first use into a cache beside it, and
# the instruction history `insns` prints is the one libipt's ptxed printed
# for the same trace (expected/*.ptxed.txt), address by address and, up to
# the spelling of hex numbers, instruction by instruction.

. "$(atf_get_srcdir)/../env.sh"

LLDB=$HWTRACE_CORPUS/lldb-intelpt

need_corpus()
{
	[ -d "$LLDB" ] || atf_skip "shared corpus not found at $LLDB"
}

# ptxed's "ADDRESS  INSN" lines vs our TSV insns (address, instruction),
# hex numbers normalized (0x04 and 0x4 are the same number).
cat_cmp()
{
	cat > cmp.py <<'X'
import re, sys
def norm(s):
    s = re.sub(r"0x0*([0-9a-f]+)", r"0x\1", s.strip().lower())
    return re.sub(r"\s+", " ", s)
exp = []
for l in open(sys.argv[1]):
    m = re.match(r"^([0-9a-f]{16})\s+(.*)$", l)
    if m:
        exp.append(("0x%x" % int(m.group(1), 16), norm(m.group(2))))
got = []
rows = open(sys.argv[2]).read().split("\n")[1:]
for r in rows:
    if r:
        f = r.split("\t")
        got.append((f[2], norm(f[5])))
if len(exp) < 10:
    sys.exit("only %d instructions in %s" % (len(exp), sys.argv[1]))
for i, (e, g) in enumerate(zip(exp, got)):
    if e[0] != g[0] or (sys.argv[3] == "insn" and e[1] != g[1]):
        sys.exit("instruction %d: ptxed %s, hwtrace query %s" % (i, e, g))
if len(exp) != len(got):
    sys.exit("ptxed has %d instructions, hwtrace query %d" % (len(exp), len(got)))
print("%d instructions match" % len(exp))
X
	atf_check -s exit:0 -o match:"instructions match" python3 cmp.py "$@"
}

atf_test_case lldb_single_matches_ptxed
lldb_single_matches_ptxed_head() { atf_set descr "an imported LLDB capture is indexed on first use; insns equals ptxed's addresses and instructions"; }
lldb_single_matches_ptxed_body()
{
	need_corpus
	atf_check -s exit:0 -o ignore -e ignore "$HWTRACE" import \
	    "$LLDB/intelpt-trace/trace.json" -o t.hwtrace
	atf_check -s exit:0 -o match:"^instructions +21\$" -o match:"^decode_errors +0\$" \
	    "$HWTRACE" query t.hwtrace summary
	test -f t.hwtrace.db || atf_fail "no cache t.hwtrace.db beside the archive"
	# The cache is reused: the second question does not index again.
	touch -d '2030-01-01' t.hwtrace.db
	before=$(stat -c %Y t.hwtrace.db)
	"$HWTRACE" query t.hwtrace insns --count 1000 --format tsv > insns.tsv ||
	    atf_fail "insns failed"
	[ "$(stat -c %Y t.hwtrace.db)" = "$before" ] ||
	    atf_fail "the cache was rewritten although it is newer than the archive"
	cat_cmp "$LLDB/expected/single.ptxed.txt" insns.tsv insn
	# The end of the trace: the loop of main, at main.cpp lines 4 and 5.
	atf_check -s exit:0 -o match:"main\+0x20	.*main\.cpp:4	jle 0x0*400521" \
	    "$HWTRACE" query t.hwtrace last -n 1 --insns --format tsv
}

atf_test_case lldb_multifile_matches_ptxed
lldb_multifile_matches_ptxed_head() { atf_set descr "a capture across three images: insns (with --db) equals ptxed's addresses"; }
lldb_multifile_matches_ptxed_body()
{
	need_corpus
	d=$LLDB/intelpt-trace-multi-file
	atf_check -s exit:0 -o ignore -e ignore "$HWTRACE" import --cpu 6/79/1 \
	    --elf "$d/a.out" --elf "$d/libfoo.so:0x7ffff7bd9000" \
	    --elf "$d/libbar.so:0x7ffff79d7000" --pt "$d/multi-file.trace" \
	    -o m.hwtrace
	"$HWTRACE" query --db cache.db m.hwtrace insns --count 1000 --format tsv > insns.tsv ||
	    atf_fail "insns failed"
	test -f cache.db || atf_fail "--db cache.db was not written"
	test ! -e m.hwtrace.db || atf_fail "m.hwtrace.db written although --db was given"
	cat_cmp "$LLDB/expected/multifile.ptxed.txt" insns.tsv addr
	# Calls into the libraries are in the call tree.  The trace starts
	# in code no image covers (ptxed's first "no memory mapped" error):
	# the counts are lower bounds, said on stderr with CSV.
	atf_check -s exit:0 -o match:"foo" \
	    -e match:"counts are lower bounds: the trace lost data in 1 place .*decode error: no memory mapped" \
	    "$HWTRACE" query cache.db tree --format csv
}

atf_init_test_cases()
{
	atf_add_test_case lldb_single_matches_ptxed
	atf_add_test_case lldb_multifile_matches_ptxed
}
