#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# The EXAMPLES of hwtrace-query(1) run: every "$ command" line of its
# literal blocks is run on the fixture database, and what it prints must be
# the lines the manual shows under it.

. "$(atf_get_srcdir)/../env.sh"

atf_test_case manual_examples_run
manual_examples_run_head() { atf_set descr "every EXAMPLES command of hwtrace-query(1) prints what the manual shows"; }
manual_examples_run_body()
{
	"$HWTRACE_BUILD/bench/qmkdb" trace.db "$HWTRACE_SRC/tests/query/fixture.sql" ||
	    atf_fail "cannot make the fixture database"
	cp "$HWTRACE_SRC/tests/query/fix.c" . || atf_fail "no fix.c"
	mkdir bin && ln -s "$HWTRACE" bin/hwtrace || atf_fail "cannot link hwtrace"
	cat > run.py <<'X'
import subprocess, sys
src = open(sys.argv[1]).read().split("\n")
sec, lit, cases = None, False, []
for l in src:
    if l.startswith(".Sh "):
        sec = l[4:]
    elif sec == "EXAMPLES" and l.startswith(".Bd -literal"):
        lit = True
    elif lit and l == ".Ed":
        lit = False
    elif lit:
        l = l.replace("\\e", "\\").replace("\\&", "")
        if l.startswith("$ "):
            cases.append([l[2:], []])
        elif cases:
            cases[-1][1].append(l)
if len(cases) < 5:
    sys.exit("only %d examples found" % len(cases))
bad = 0
for cmd, exp in cases:
    p = subprocess.run(cmd, shell=True, capture_output=True, text=True)
    want = "".join(e + "\n" for e in exp)
    if p.returncode != 0 or p.stdout != want:
        bad += 1
        print("example: %s\nexit %d, expected 0\nexpected:\n%sgot:\n%s%s" %
              (cmd, p.returncode, want, p.stdout, p.stderr))
print("%d examples, %d failed" % (len(cases), bad))
sys.exit(1 if bad else 0)
X
	PATH="$PWD/bin:$PATH" atf_check -s exit:0 -o match:"examples, 0 failed" \
	    python3 run.py "$HWTRACE_SRC/docs/hwtrace-query.1"
}

atf_init_test_cases()
{
	atf_add_test_case manual_examples_run
}
