# SPDX-License-Identifier: BSD-2-Clause
#
# Copyright (c) 2026 The hwtrace authors
#
# Calls per function: an hwtrace database against a callgrind profile of
# the same run, for the functions of one object.
#
# callgrind side: each calls= line's count, for the function holding its
# target address (callgrind counts a jump into the start of another
# function as a call; its names are not used: it names the levels of a
# recursion "f'2", and a function below main "(below main)").  hwtrace
# side: the rows of calls entered by a call or a tail call (entry_kind
# 'call' or 'tail'; a thread's first function, 'start', and a return
# into a function not seen entered, 'return', are no calls), by the
# address of their function's symbol, counted by `hwtrace query DB sql`.
#
# The functions compared are the object's symbols in its .text section
# that have a size (nm -S, readelf): callgrind sees neither the code of
# .init, .fini and .plt as functions (cgcompare.py) nor a symbol without
# a size (crtstuff's register_tm_clones, jumped to: a jump inside the
# code before it).  Left out too: the ELF entry point (the dynamic loader
# jumps to it, which hwtrace records as a tail call and callgrind as
# nothing), and the parts gcc moves out of a function (".cold": hwtrace
# counts a jump there as the function's own, callgrind as a call of the
# part).  Calls that never return (into a function the process exits
# in) count on both sides.
#
# usage: python3 cgcalls.py [-v] HWTRACE CALLGRIND_OUT DB OBJECT
#   HWTRACE: the hwtrace binary; OBJECT: the object's path (the image
#   whose real path has the same file name).
# Prints one line per function that differs (at most 30, all with -v)
# and a summary line; exit 0 when all agree, 1 when one differs, 2 on
# bad usage or input.
import bisect, collections, csv, io, os, re, subprocess, sys

# Positions as cgcompare.py reads them (the directory of this file).
from cgcompare import parse_pos

MAXSHOW = 30


def die(msg):
    sys.stderr.write('cgcalls: %s\n' % msg)
    sys.exit(2)


def run(argv):
    try:
        p = subprocess.run(argv, capture_output=True, text=True)
    except OSError as e:
        die('cannot run %s: %s' % (argv[0], e))
    if p.returncode != 0:
        die('%s failed: %s' % (' '.join(argv[:3]), p.stderr.strip()[:300]))
    return p.stdout


def text_functions(obj):
    """
    The object's functions in .text that have a size, as sorted (address,
    end, name) (one name an address), less the entry point and the parts
    gcc moved out of a function.
    """
    lo = hi = entry = None
    for line in run(['readelf', '-hSW', obj]).splitlines():
        m = re.search(r'Entry point address:\s+0x([0-9a-f]+)', line)
        if m:
            entry = int(m.group(1), 16)
        f = line.split()
        if '.text' in f:
            k = f.index('.text')
            if k + 4 < len(f) and f[k + 1] == 'PROGBITS':
                lo = int(f[k + 2], 16)
                hi = lo + int(f[k + 4], 16)
    if lo is None:
        die("'%s' has no .text section" % obj)
    funcs = {}
    for line in run(['nm', '-S', '-C', '--defined-only', obj]).splitlines():
        f = line.split(None, 3)
        if len(f) == 4 and f[2] in 'tTwWi':
            a, n = int(f[0], 16), int(f[1], 16)
            if lo <= a < hi and n > 0 and a != entry and \
                    '.cold' not in f[3] and a not in funcs:
                funcs[a] = (a + n, f[3])
    return sorted((a, e, name) for a, (e, name) in funcs.items())


def containing(funcs, addr):
    """The address of the function of @funcs holding @addr, or None."""
    k = bisect.bisect_right(funcs, (addr, float('inf'), '')) - 1
    if k >= 0 and funcs[k][0] <= addr < funcs[k][1]:
        return funcs[k][0]
    return None


def callgrind_calls(path, obj, funcs):
    """
    Calls per function of @obj, by the address of the function holding
    each call's target (calls=COUNT TARGET: TARGET a link-time address
    of the callee's object, or relative to the last cost line's, which
    it does not move, as are the cost lines' to each other).  Object names compress ("(N) name", then
    "(N)"); a cob= names the object of the one call spec that follows
    (else it is the caller's, ob=).  Callgrind's function names are not
    used: it calls a function below main "(below main)".
    """
    want = os.path.basename(os.path.realpath(obj))
    ids = {}
    calls = collections.Counter()
    ob = cob = None
    last = 0        # the instruction of the last cost line

    def name(s):
        m = re.match(r'\((\d+)\)(?: (.*))?$', s)
        if not m:
            return s
        if m.group(2) is not None:
            ids[m.group(1)] = m.group(2)
        if m.group(1) not in ids:
            die('%s: object (%s) used before it is named' % (path,
                                                            m.group(1)))
        return ids[m.group(1)]

    try:
        f = open(path)
    except OSError as e:
        die('cannot read %s: %s' % (path, e))
    with f:
        for line in f:
            if line[:1].isdigit() or line[:1] in ('+', '-', '*'):
                last = parse_pos(line.split()[0], last)
            elif line.startswith('ob='):
                ob = cob = name(line[3:].strip())
            elif line.startswith('fn='):
                cob = ob
            elif line.startswith('cob='):
                cob = name(line[4:].strip())
            elif line.startswith('calls='):
                w = line[6:].split()
                if len(w) < 2:
                    die('%s: calls= without a target: %s' % (path,
                                                             line.strip()))
                if cob is not None and \
                        os.path.basename(os.path.realpath(cob)) == want:
                    a = containing(funcs, parse_pos(w[1], last))
                    if a is not None:
                        calls[a] += int(w[0])
                cob = ob
    return calls


def hwtrace_calls(hwtrace, db, obj):
    want = os.path.basename(os.path.realpath(obj))
    sql = ("SELECT i.path, s.addr, count(*) FROM calls c "
           "JOIN symbols s ON s.id = c.symbol JOIN images i ON i.id = s.image "
           "WHERE c.entry_kind IN ('call', 'tail') GROUP BY s.id")
    out = run([hwtrace, 'query', db, 'sql', sql, '--format', 'csv',
               '--timeout', '0'])
    calls = collections.Counter()
    for row in list(csv.reader(io.StringIO(out)))[1:]:
        if row[0] and os.path.basename(os.path.realpath(row[0])) == want:
            calls[int(row[1])] += int(row[2])
    return calls


def main(argv):
    verbose = False
    if argv[:1] == ['-v']:
        verbose = True
        argv = argv[1:]
    if len(argv) != 4:
        die('usage: cgcalls.py [-v] HWTRACE CALLGRIND_OUT DB OBJECT')
    hwtrace, cgout, db, obj = argv
    funcs = text_functions(obj)
    cg = callgrind_calls(cgout, obj, funcs)
    hw = hwtrace_calls(hwtrace, db, obj)
    same = differ = shown = 0
    for a, _, f in funcs:
        x, y = hw.get(a, 0), cg.get(a, 0)
        if x == 0 and y == 0:
            continue
        if x == y:
            same += 1
            continue
        differ += 1
        if verbose or shown < MAXSHOW:
            print('function %s: hwtrace %d, callgrind %d' % (f, x, y))
            shown += 1
    print('functions called: %d, %d differ (%d calls by hwtrace, %d by '
          'callgrind)' % (same + differ, differ,
                          sum(hw.get(a, 0) for a, _, _ in funcs),
                          sum(cg.get(a, 0) for a, _, _ in funcs)))
    return 1 if differ else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
