#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
#
# Copyright (c) 2026 The hwtrace authors
#
# import_seeds.py CORPUS OUTDIR: seeds for fuzz_import (tests/fuzz/
# fuzz_import.c) from the shared corpus: each LLDB bundle of
# CORPUS/lldb-intelpt (its JSON as trace.json, with the other files of
# its directory) and each CoreSight snapshot of CORPUS/opencsd/snapshots
# under 100 KiB, packed as fuzz_import reads them: a first byte 'L' or
# 'C', then "\n@@@@ NAME\n" and the bytes of each file.
import os
import sys

MARK = b'\n@@@@ '


def pack(kind, files):
    out = kind
    for name, path in files:
        with open(path, 'rb') as f:
            out += MARK + name.encode() + b'\n' + f.read()
    return out


def regular(d):
    return sorted(n for n in os.listdir(d)
                  if os.path.isfile(os.path.join(d, n)))


def main():
    corpus, outdir = sys.argv[1], sys.argv[2]
    os.makedirs(outdir, exist_ok=True)
    seeds = {}
    lldb = os.path.join(corpus, 'lldb-intelpt')
    for sub in sorted(os.listdir(lldb)) if os.path.isdir(lldb) else []:
        d = os.path.join(lldb, sub)
        if not os.path.isdir(d):
            continue
        names = regular(d)
        for j in (n for n in names if n.endswith('.json')):
            files = [('trace.json', os.path.join(d, j))]
            files += [(n, os.path.join(d, n)) for n in names
                      if not n.endswith('.json')]
            seeds['lldb-%s-%s' % (sub, j[:-5])] = pack(b'L', files)
    snaps = os.path.join(corpus, 'opencsd', 'snapshots')
    for sub in sorted(os.listdir(snaps)) if os.path.isdir(snaps) else []:
        d = os.path.join(snaps, sub)
        if not os.path.isdir(d):
            continue
        names = regular(d)
        if sum(os.path.getsize(os.path.join(d, n)) for n in names) > 100 << 10:
            continue
        seeds['cs-' + sub] = pack(b'C', [(n, os.path.join(d, n))
                                         for n in names])
    for name, data in seeds.items():
        with open(os.path.join(outdir, name), 'wb') as f:
            f.write(data)
    print('%d seeds in %s' % (len(seeds), outdir))


main()
