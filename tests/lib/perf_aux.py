# SPDX-License-Identifier: BSD-2-Clause
#
# Copyright (c) 2026 The hwtrace authors
#
# The AUXTRACE payloads of a perf.data file, by CPU: an independent reader
# of PERFILE2 for the shell tests (the file header's data section, then
# header.size steps, AUXTRACE payloads after their 48-byte record).
#
#   python3 perf_aux.py FILE DIR   writes each CPU's payloads, concatenated
#                                  in file order, to DIR/cpuN
#   from perf_aux import aux_buffers

import os
import struct
import sys

PERF_RECORD_AUXTRACE = 71


def aux_buffers(path):
    """{cpu: bytearray} of the AUXTRACE payloads of perf.data file PATH."""
    b = open(path, 'rb').read()
    if b[:8] != b'PERFILE2':
        sys.exit('%s: not a PERFILE2 file' % path)
    doff, dsize = struct.unpack_from('<QQ', b, 40)
    off, end = doff, doff + dsize
    bufs = {}
    while off < end:
        typ, _, size = struct.unpack_from('<IHH', b, off)
        if size < 8:
            sys.exit('%s: record of size %d at %d' % (path, size, off))
        if typ == PERF_RECORD_AUXTRACE:
            sz, _, _, _, _, cpu = struct.unpack_from('<QQQIII', b, off + 8)
            bufs.setdefault(cpu, bytearray()).extend(
                b[off + size:off + size + sz])
            off += size + sz
        else:
            off += size
    return bufs


if __name__ == '__main__':
    if len(sys.argv) != 3:
        sys.exit('usage: perf_aux.py FILE DIR')
    os.makedirs(sys.argv[2], exist_ok=True)
    for cpu, data in aux_buffers(sys.argv[1]).items():
        with open(os.path.join(sys.argv[2], 'cpu%d' % cpu), 'wb') as f:
            f.write(data)
