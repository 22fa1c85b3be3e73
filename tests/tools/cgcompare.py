# SPDX-License-Identifier: BSD-2-Clause
#
# Copyright (c) 2026 The hwtrace authors
#
# Per-instruction and per-branch comparison of an hwtrace database with a
# callgrind profile of the same run, restricted to one object (an
# executable or a shared library), by link-time address.
#
# callgrind side (valgrind --tool=callgrind --dump-instr=yes
# --collect-jumps=yes): Ir per instruction (self cost lines; the cost line
# after calls= is the call's inclusive cost and is not the instruction's
# own), and per conditional branch the times it jumped (jcnd=JUMPS/EXECS
# TARGET, the source being the position line that follows; a target's
# relative position counts from the last cost line and does not move
# it).  Positions are link-time addresses of the object ("relative to the
# offset of the binary").  Callgrind names an object only for its .text section: the
# object's other code (.plt, .plt.got, .plt.sec, .init, .fini) is under
# "ob=???" at run-time addresses, mapped here through the object's
# mapping in the database, or with -b BIAS (the object's load bias in
# the callgrind run, for a database of another source whose layout is
# not Valgrind's).  (Summing callgrind's cost of the named
# object alone misses it: libsqlite3's PLT stubs, 317,887 Ir in a run of
# 13.36 M, are all there.)
#
# hwtrace side: per instruction the sum of exec_count over the blocks that
# hold it (start at image_addr, lengths from insn_lens); per conditional
# branch the cond-taken and cond-not-taken counts of the branches table,
# at the link-time address of from_ip.
#
# The rep convention (hwtrace-capture(1)): a rep-prefixed string
# instruction is one instruction however often it repeats.  Callgrind
# counts one Ir per pass and records each pass that goes round again as a
# jump back to the instruction itself, so its executions are Ir minus
# those jumps; the jump out of it when done is no program branch.
#
# A conditional branch executed E times with T jumps in callgrind has
# E - T fall-throughs, with E its Ir.
#
# Callgrind must run with --skip-plt=no, or it adds most executions of a
# PLT stub to the call that reached it.  The program's environment must
# be the one hwtrace gives it (variables, and SIGPIPE, which gzip looks
# at: hwtrace capture passes on the caller's disposition).
#
# usage: python3 cgcompare.py [-v] [-b BIAS] [-r LO:HI] CALLGRIND_OUT DB
#     OBJECT
#   OBJECT: the object's path; it matches the image whose real path has
#   the same file name.  -r: only link-time addresses in [LO, HI).
# Prints one line per difference (at most 30 of each kind, all with -v)
# and a summary line per kind; exit 0 when all agree, 1 when something
# differs, 2 on bad usage or input.
import os, re, sqlite3, struct, sys

MAXSHOW = 30


def die(msg):
    sys.stderr.write('cgcompare: %s\n' % msg)
    sys.exit(2)


def same_object(path, want):
    if not path or path == '???':
        return False
    try:
        p = os.path.realpath(path)
    except OSError:
        p = path
    return os.path.basename(p) == os.path.basename(os.path.realpath(want))


def parse_pos(tok, last):
    if tok == '*':
        return last
    if tok[0] == '+':
        return last + int(tok[1:], 0)
    if tok[0] == '-':
        return last - int(tok[1:], 0)
    return int(tok, 0)


def callgrind(path, want):
    """Ir per address, jumps per (source, target), the sources of
    conditional jumps (address, unnamed?), and run-time addresses of
    unnamed code, for the object @want."""
    names = {}          # ob compression ids
    ob = None
    ir, jumps, unnamed, cond = {}, {}, {}, set()
    last = [0, 0]
    pending = None      # ('call',) or ('jump', target, count)
    positions = 2
    try:
        f = open(path)
    except OSError as e:
        die("cannot open '%s': %s" % (path, e.strerror))
    with f:
        for line in f:
            line = line.rstrip('\n')
            if not line or line[0] == '#':
                continue
            c = line[0]
            if c.isdigit() or c in '+-*':
                tok = line.split()
                pos = []
                for i in range(positions):
                    pos.append(parse_pos(tok[i], last[i]))
                last = pos
                cost = int(tok[positions]) if len(tok) > positions else 0
                kind = pending
                pending = None
                mine = ob is not None and (same_object(ob, want) or
                                           ob == '???')
                if not mine:
                    continue
                table = ir if ob != '???' else unnamed
                if kind is not None and kind[0] == 'jump':
                    key = (pos[0], kind[1])
                    d = jumps if ob != '???' else unnamed.setdefault(
                        'jumps', {})
                    d[key] = d.get(key, 0) + kind[2]
                    if kind[3]:
                        cond.add((pos[0], ob == '???'))
                if kind is not None and kind[0] == 'call':
                    continue
                table[pos[0]] = table.get(pos[0], 0) + cost
                continue
            key, _, val = line.partition('=')
            if key == 'positions' or line.startswith('positions:'):
                positions = len(line.split(':', 1)[1].split())
                if positions < 1 or 'instr' not in line:
                    die("'%s': not dumped with --dump-instr=yes" % path)
                continue
            if key in ('ob', 'cob'):
                m = re.match(r'\((\d+)\)\s*(.*)$', val)
                if m:
                    if m.group(2):
                        names[m.group(1)] = m.group(2)
                    name = names.get(m.group(1))
                else:
                    name = val
                if key == 'ob':
                    ob = name
            elif key == 'calls':
                pending = ('call',)
            elif key in ('jump', 'jcnd'):
                tok = val.split()
                n = int(tok[0].split('/')[0])
                tgt = parse_pos(tok[1], last[0])
                pending = ('jump', tgt, n, key == 'jcnd')
    unnamed.setdefault('jumps', {})
    return ir, jumps, unnamed, cond


def is_rep_string(code):
    """A rep/repe/repne-prefixed string instruction (movs, cmps, stos,
    lods, scas, ins, outs)?"""
    i, rep = 0, False
    while i < len(code):
        b = code[i]
        if b in (0xf2, 0xf3):
            rep = True
        elif b in (0x66, 0x67, 0x2e, 0x3e, 0x26, 0x36, 0x64, 0x65) or \
                (b & 0xf0) == 0x40:
            pass
        else:
            break
        i += 1
    return rep and i < len(code) and code[i] in (
        0xa4, 0xa5, 0xa6, 0xa7, 0xaa, 0xab, 0xac, 0xad, 0xae, 0xaf,
        0x6c, 0x6d, 0x6e, 0x6f)


def hwtrace(dbpath, want):
    """Counts, code bytes and branch directions per link-time address of
    @want, and its run-time mapping ranges with their bias."""
    if not os.path.exists(dbpath):
        die("cannot open '%s': no such file" % dbpath)
    db = sqlite3.connect('file:%s?mode=ro' % dbpath, uri=True)
    imgs = [r[0] for r in db.execute('SELECT id, path FROM images')
            if same_object(r[1], want)]
    if not imgs:
        die("'%s' has no image named like '%s'" % (dbpath, want))
    q = ','.join(str(i) for i in imgs)
    counts, code, lens_at = {}, {}, {}
    for start, iaddr, n, lens, blob in db.execute(
            'SELECT start_ip, image_addr, exec_count, insn_lens, code '
            'FROM blocks WHERE image IN (%s)' % q):
        if lens is None:
            die('block at %#x has no instruction lengths' % start)
        a, off = iaddr, 0
        for ln in lens:
            counts[a] = counts.get(a, 0) + n
            lens_at[a] = ln
            if blob is not None:
                code[a] = bytes(blob[off:off + ln])
            a += ln
            off += ln
    br = {}
    for ip, to, kind, n, bias in db.execute(
            'SELECT br.from_ip, br.to_ip, br.kind, br.count, '
            'b.start_ip - b.image_addr FROM branches br JOIN blocks b '
            'ON br.from_block = b.id WHERE b.image IN (%s) AND '
            "br.kind IN ('cond-taken', 'cond-not-taken')" % q):
        t = br.setdefault(ip - bias, [0, 0])
        t[0 if kind == 'cond-taken' else 1] += n
    maps = [(r[0], r[1], r[2]) for r in db.execute(
        'SELECT start_ip, end_ip, bias FROM mappings WHERE image IN (%s)'
        % q)]
    db.close()
    return counts, code, lens_at, br, maps


def elf_bytes(path, addr, n):
    """@n bytes at link-time address @addr of ELF64 @path, or b''."""
    try:
        with open(os.path.realpath(path), 'rb') as f:
            h = f.read(64)
            if h[:4] != b'\x7fELF' or h[4] != 2:
                return b''
            phoff, = struct.unpack_from('<Q', h, 32)
            phentsize, phnum = struct.unpack_from('<HH', h, 54)
            f.seek(phoff)
            ph = f.read(phentsize * phnum)
            for i in range(phnum):
                typ, _, off, vaddr, _, filesz = struct.unpack_from(
                    '<IIQQQQ', ph, i * phentsize)
                if typ == 1 and vaddr <= addr < vaddr + filesz:
                    f.seek(off + addr - vaddr)
                    return f.read(n)
    except OSError:
        pass
    return b''


def elf_exec_ranges(path):
    """Link-time [start, end) of the executable PT_LOAD segments."""
    r = []
    try:
        with open(os.path.realpath(path), 'rb') as f:
            h = f.read(64)
            if h[:4] != b'\x7fELF' or h[4] != 2:
                return r
            phoff, = struct.unpack_from('<Q', h, 32)
            phentsize, phnum = struct.unpack_from('<HH', h, 54)
            f.seek(phoff)
            ph = f.read(phentsize * phnum)
    except OSError:
        return r
    for i in range(phnum):
        typ, flags, _, vaddr, _, _, memsz = struct.unpack_from(
            '<IIQQQQQ', ph, i * phentsize)
        if typ == 1 and flags & 1:
            r.append((vaddr, vaddr + memsz))
    return r


def main(argv):
    verbose = False
    lo, hi = 0, 1 << 64
    cgbias = None
    while argv and argv[0] in ('-v', '-r', '-b'):
        if argv[0] == '-v':
            verbose = True
            argv = argv[1:]
            continue
        if argv[0] == '-b':
            try:
                cgbias = int(argv[1], 0)
            except (IndexError, ValueError):
                die("-b: expected an address, got '%s'" %
                    ' '.join(argv[1:2]))
            argv = argv[2:]
            continue
        m = re.match(r'(\w+):(\w+)$', argv[1] if len(argv) > 1 else '')
        if not m:
            die("-r: expected LO:HI, got '%s'" % ' '.join(argv[1:2]))
        lo, hi = int(m.group(1), 0), int(m.group(2), 0)
        argv = argv[2:]
    if len(argv) != 3:
        sys.stderr.write('usage: python3 cgcompare.py [-v] [-b BIAS] '
                         '[-r LO:HI] CALLGRIND_OUT DB OBJECT\n')
        sys.exit(2)
    cgpath, dbpath, want = argv
    ir, jumps, unnamed, cgcond = callgrind(cgpath, want)
    hw, code, lens, hbr, maps = hwtrace(dbpath, want)
    if cgbias is not None:
        maps = [(cgbias + lo, cgbias + hi, cgbias) for lo, hi in
                elf_exec_ranges(want)]
        if not maps:
            die("-b: cannot read the executable segments of '%s' (give "
                "the object's path)" % want)
    if not ir:
        die("'%s' has no cost in an object named like '%s'" %
            (cgpath, want))

    # Unnamed code that lies in the object's mapping: link-time address.
    moved = 0
    for a, n in unnamed.items():
        if a == 'jumps':
            continue
        for mlo, mhi, bias in maps:
            if mlo <= a < mhi:
                ir[a - bias] = ir.get(a - bias, 0) + n
                moved += 1
                break
    for (s, t), n in unnamed['jumps'].items():
        for mlo, mhi, bias in maps:
            if mlo <= s < mhi:
                k = (s - bias, t - bias)
                jumps[k] = jumps.get(k, 0) + n
                if (s, True) in cgcond:
                    cgcond.add((s - bias, False))
                break
    cgcond = set(a for a, u in cgcond if not u)

    for d in (ir, hw, hbr):
        for a in [a for a in d if not lo <= a < hi]:
            del d[a]
    cgcond = set(a for a in cgcond if lo <= a < hi)

    def insn_code(a):
        return code.get(a) or elf_bytes(want, a, 15)

    # Per instruction.
    nrep = 0
    self_jumps = {}
    for (s, t), n in jumps.items():
        if s == t:
            self_jumps[s] = self_jumps.get(s, 0) + n
    diffs = []
    tot_hw = tot_cg = 0
    for a in sorted(set(ir) | set(hw)):
        c = ir.get(a, 0)
        h = hw.get(a, 0)
        if is_rep_string(insn_code(a)):
            nrep += 1
            c -= self_jumps.get(a, 0)
        tot_hw += h
        tot_cg += c
        if c != h:
            diffs.append((a, h, c))
    for a, h, c in diffs[:None if verbose else MAXSHOW]:
        why = ('phantom' if c == 0 else 'missing' if h == 0 else
               'count')
        print('insn %#x: hwtrace %d, callgrind %d (%s)' % (a, h, c, why))
    print('instructions: %d addresses, hwtrace %d, callgrind %d, '
          '%d differ (%d rep-prefixed, %d from unnamed code)' %
          (len(set(ir) | set(hw)), tot_hw, tot_cg, len(diffs), nrep,
           moved))

    # Per conditional branch: taken and not taken.  Callgrind records
    # the exit VEX made of the branch, which may be its fall-through (a
    # jump to the next instruction), so only jumps elsewhere are taken.
    out = {}
    for (s, t), n in jumps.items():
        out.setdefault(s, []).append((t, n))
    bdiffs = []
    nbr = 0
    for s in sorted(set(hbr) | cgcond):
        if is_rep_string(insn_code(s)):
            continue
        ht, hn = hbr.get(s, (0, 0))
        nxt = s + lens[s] if s in lens else None
        ct = sum(n for t, n in out.get(s, []) if t != nxt)
        cn = ir.get(s, 0) - ct
        nbr += 1
        if (ht, hn) != (ct, cn):
            bdiffs.append((s, ht, hn, ct, cn))
    for s, ht, hn, ct, cn in bdiffs[:None if verbose else MAXSHOW]:
        print('branch %#x: hwtrace taken %d not taken %d, callgrind taken '
              '%d not taken %d' % (s, ht, hn, ct, cn))
    print('conditional branches: %d, %d differ' % (nbr, len(bdiffs)))
    return 1 if diffs or bdiffs else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
