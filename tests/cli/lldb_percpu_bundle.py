import re, struct, sys, os, json
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', 'lib'))
from perf_aux import aux_buffers
pdata, script, dump, out = sys.argv[1:5]
bufs = aux_buffers(pdata)
tc = {}
for line in open(dump):
    m = re.match(r'\.\.\. Time (Shift|Muliplier|Multiplier|Zero)\s+(\d+)', line)
    if m:
        tc[m.group(1)[0]] = int(m.group(2))
m = re.search(r'cpuid : GenuineIntel,(\d+),(\d+),(\d+)', open(dump).read())
rx = re.compile(r'\s*(-?\d+)/(-?\d+)\s+\[(-?\d+)\]\s+(\d+)\.(\d+):\s+'
                r'PERF_RECORD_SWITCH_CPU_WIDE\s+(OUT|IN)\s*(?:preempt\s+)?'
                r'(?:next|prev) pid/tid:\s*(-?\d+)/(-?\d+)')
sw = {}
for line in open(script):
    m2 = rx.match(line)
    if not m2:
        continue
    pid, tid, cpu = int(m2.group(1)), int(m2.group(2)), int(m2.group(3))
    ns = int(m2.group(4)) * 1000000000 + int(m2.group(5).ljust(9, '0'))
    rec = struct.pack('<IHHIIIIQ', 15, 0x2000 if m2.group(6) == 'OUT' else 0,
                      32, int(m2.group(7)), int(m2.group(8)), pid, tid, ns)
    sw.setdefault(cpu, bytearray()).extend(rec)
os.makedirs(out, exist_ok=True)
cpus = []
for cpu in sorted(bufs):
    open(os.path.join(out, 'cpu%d.ipt' % cpu), 'wb').write(bufs[cpu])
    open(os.path.join(out, 'cpu%d.switches' % cpu), 'wb').write(sw.get(cpu, b''))
    cpus.append('{"id": %d, "iptTrace": "cpu%d.ipt", "contextSwitchTrace": "cpu%d.switches"}' % (cpu, cpu, cpu))
fam, mod, step = (int(m.group(1)), int(m.group(2)), int(m.group(3))) if m else (6, 78, 3)
text = ('{"type": "intel-pt", "cpuInfo": {"vendor": "GenuineIntel", "family": %d, '
        '"model": %d, "stepping": %d}, "tscPerfZeroConversion": {"timeMult": %d, '
        '"timeShift": %d, "timeZero": %d}, "processes": [{"pid": 3174, "threads": '
        '[{"tid": 3174}], "modules": []}], "cpus": [%s]}\n' %
        (fam, mod, step, tc['M'], tc['S'], tc['Z'], ', '.join(cpus)))
open(os.path.join(out, 'trace.json'), 'w').write(text)
