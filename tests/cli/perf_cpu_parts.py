# SPDX-License-Identifier: BSD-2-Clause
#
# Copyright (c) 2026 The hwtrace authors
#
# The per-CPU split of a perf.data recording as perf itself shows it,
# independent of hwtrace: perf script's switch records (perf time, pid,
# tid, cpu, OUT/IN, next pid/tid) and perf report -D's TIME_CONV and
# Intel PT packet dump.  A switch out hands the CPU to its next pid/tid
# (perf's rule for CPU-wide switch records); a switch in of another
# thread starts a part too.  Times go to TSC with perf's
# perf_time_to_tsc(); each packet takes the time of the last TSC packet
# before it, a PSB (and its PSB+ up to the TSC) the time of its PSB+'s
# TSC.  Prints one line per part:
#   cpu pid tid start_tsc end_tsc off0 off1 psbs tscs mtcs cycs
# with "-" for what is not known.
#
# usage: python3 perf_cpu_parts.py SCRIPT_OUTPUT REPORT_D_OUTPUT CPU...
import re, sys

script, dump = sys.argv[1], sys.argv[2]
cpus = [int(c) for c in sys.argv[3:]]

shift = mult = zero = None
for line in open(dump):
    m = re.match(r'\.\.\. Time (Shift|Muliplier|Multiplier|Zero)\s+(\d+)', line)
    if m:
        v = int(m.group(2))
        if m.group(1) == 'Shift':
            shift = v
        elif m.group(1) == 'Zero':
            zero = v
        else:
            mult = v
if None in (shift, mult, zero):
    sys.exit('no TIME_CONV in perf report -D output')

M64 = (1 << 64) - 1
def to_tsc(ns):
    t = (ns - zero) & M64
    q, r = divmod(t, mult)
    return ((q << shift) + ((r << shift) & M64) // mult) & M64

sw = {}
rx = re.compile(r'\s*(-?\d+)/(-?\d+)\s+\[(-?\d+)\]\s+(\d+)\.(\d+):\s+'
                r'PERF_RECORD_SWITCH(?:_CPU_WIDE)?\s+(OUT|IN)\s*'
                r'(?:(?:preempt\s+)?(?:next|prev) pid/tid:\s*(-?\d+)/(-?\d+))?')
for line in open(script):
    m = rx.match(line)
    if not m:
        continue
    pid, tid, cpu = int(m.group(1)), int(m.group(2)), int(m.group(3))
    ns = int(m.group(4)) * 1000000000 + int(m.group(5).ljust(9, '0'))
    nxt = (int(m.group(7)), int(m.group(8))) if m.group(7) else None
    sw.setdefault(cpu, []).append((ns, m.group(6) == 'OUT', pid, tid, nxt))

# Packets per CPU: (offset, size, name, tsc or None)
pk = {}
cur = None
base = 0
hdr = re.compile(r'.*PERF_RECORD_AUXTRACE size: 0x[0-9a-f]+\s+offset: '
                 r'(0x[0-9a-f]+|\d+)\s+.*cpu: (-?\d+)')
prx = re.compile(r'\.\s+([0-9a-f]{8}):\s+((?:[0-9a-f]{2} )+)\s*(\S+)\s*(\S*)')
for line in open(dump):
    m = hdr.match(line)
    if m:
        cur = int(m.group(2))
        base = int(m.group(1), 0)
        pk.setdefault(cur, [])
        continue
    if cur is None:
        continue
    m = prx.match(line)
    if not m:
        if not line.startswith('.'):
            cur = None
        continue
    off = base + int(m.group(1), 16)
    size = len(m.group(2).split())
    name = m.group(3)
    tsc = int(m.group(4), 16) if name == 'TSC' else None
    pk[cur].append([off, size, name, tsc])

for cpu in cpus:
    v = sorted(sw.get(cpu, []), key=lambda x: x[0])
    parts = []   # [pid, tid, start, end, off0, off1, psbs, tscs, mtcs, cycs]
    for i, (ns, out, pid, tid, nxt) in enumerate(v):
        t = to_tsc(ns)
        if not parts and out:
            parts.append([pid, tid, None, None, None, None, 0, 0, 0, 0])
        if out:
            owner = nxt if nxt is not None else (-1, -1)
        else:
            if parts and (parts[-1][0], parts[-1][1]) == (pid, tid):
                continue
            owner = (pid, tid)
        if parts:
            parts[-1][3] = t
        parts.append([owner[0], owner[1], t, None, None, None, 0, 0, 0, 0])

    def part_at(t):
        k = None
        for j, p in enumerate(parts):
            if p[2] is None or p[2] <= t:
                k = j
        return k

    def attr(k, o0, o1):
        if k is None:
            return
        p = parts[k]
        p[4] = o0 if p[4] is None else min(p[4], o0)
        p[5] = o1 if p[5] is None else max(p[5], o1)

    have = False
    k = None
    in_psb = held = False
    h0 = h1 = 0
    for off, size, name, tsc in pk.get(cpu, []):
        if name == 'PSB':
            in_psb = held = True
            h0, h1 = off, off + size
            continue
        if name == 'TSC':
            have = True
            k = part_at(tsc)
            if held:
                attr(k, h0, h1)
                if k is not None:
                    parts[k][6] += 1
                held = False
            attr(k, off, off + size)
            if k is not None:
                parts[k][7] += 1
            continue
        if name == 'PSBEND':
            in_psb = False
            if held:
                kk = k if have else None
                attr(kk, h0, off + size)
                if kk is not None:
                    parts[kk][6] += 1
                held = False
                continue
        if in_psb and held:
            h1 = off + size
            continue
        if not have:
            continue
        attr(k, off, off + size)
        if k is None:
            continue
        if name == 'MTC':
            parts[k][8] += 1
        elif name == 'CYC':
            parts[k][9] += 1
    for p in parts:
        print(cpu, ' '.join('-' if x is None or (i < 2 and x < 0) else str(x)
                            for i, x in enumerate(p)))
