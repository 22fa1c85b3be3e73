# SPDX-License-Identifier: BSD-2-Clause
#
# Copyright (c) 2026 The hwtrace authors
#
# A perf.data recording made to say its times as a machine with a short
# counter does (Linux 5.12's TIME_CONV: time_cycles, time_mask,
# cap_user_time_zero, cap_user_time_short): the kernel documents that a
# counter value c is extended to time_cycles + ((c - time_cycles) &
# time_mask) before time_zero + c * time_mult >> time_shift.  The
# recording's own TIME_CONV (32 bytes: shift, mult, zero) becomes the
# 56-byte form with a counter of 56 bits whose top byte is 5: time_cycles
# = 5 << 56 + a value below the recording's TSCs, and time_zero lowered by
# exactly what 5 << 56 cycles add, so that every trace TSC (56 bits, as
# Intel PT's TSC packets hold them) still means the same perf time, and
# every perf time now converts (perf_time_to_tsc()) to 5 << 56 more
# cycles, of which the counter holds the low 56 bits: the same values as
# before.  AUXTRACE_INFO's own time conversion is switched off
# (cap_user_time_zero 0) so that TIME_CONV is the one to use.
#
# The record grows by 24 bytes: the data section's size, the feature
# sections' offsets and the AUXTRACE index's file offsets after it move.
#
# usage: python3 perf_timeconv.py IN OUT T
# prints: time_cycles time_mask time_zero (as written)
import struct, sys

src, dst = sys.argv[1], sys.argv[2]
b = bytearray(open(src, 'rb').read())
assert b[:8] == b'PERFILE2'
doff, dsize = struct.unpack_from('<QQ', b, 40)
feats = struct.unpack_from('<4Q', b, 72)
nfeat = sum(bin(f).count('1') for f in feats)
HEADER_AUXTRACE = 19

M64 = (1 << 64) - 1
off, end, tc = doff, doff + dsize, None
while off < end:
    typ, misc, size = struct.unpack_from('<IHH', b, off)
    if typ == 79:
        tc = off
    elif typ == 70:
        # AUXTRACE_INFO: type, reserved, priv[]; priv[4] is Intel PT's
        # cap_user_time_zero.
        struct.pack_into('<Q', b, off + 16 + 4 * 8, 0)
    if typ == 71:
        off += size + struct.unpack_from('<Q', b, off + 8)[0]
    else:
        off += size
assert tc is not None, 'no TIME_CONV'
typ, misc, size = struct.unpack_from('<IHH', b, tc)
assert size == 32, 'TIME_CONV of %d bytes' % size
shift, mult, zero = struct.unpack_from('<QQQ', b, tc + 8)
assert shift <= 56

hi = 5 << 56
def to_tsc(ns):
    q, r = divmod((ns - zero) & M64, mult)
    return ((q << shift) + ((r << shift) // mult)) & M64
# A counter value below every TSC of the recording: half of that of
# perf time T (the recording's first).
cycles = hi + to_tsc(int(sys.argv[3])) // 2
mask = (1 << 56) - 1
zero2 = (zero - ((hi >> shift) * mult)) & M64
rec = struct.pack('<IHHQQQQQBB6x', 79, misc, 56, shift, mult, zero2,
                  cycles, mask, 1, 1)
assert len(rec) == 56
grow = len(rec) - 32
out = b[:tc] + rec + b[tc + 32:]
struct.pack_into('<Q', out, 48, dsize + grow)
# The feature sections' table (after the data) and what it points to.
ftab = doff + dsize + grow
bit = 0
secs = []
for i in range(nfeat):
    o, s = struct.unpack_from('<QQ', out, ftab + 16 * i)
    if o > tc:
        o += grow
    struct.pack_into('<Q', out, ftab + 16 * i, o)
    secs.append((o, s))
# Which section is the AUXTRACE index: the features' bits in order.
k = 0
for bit in range(256):
    if feats[bit // 64] >> (bit % 64) & 1:
        if bit == HEADER_AUXTRACE:
            o, s = secs[k]
            n = struct.unpack_from('<Q', out, o)[0]
            for j in range(n):
                eo = struct.unpack_from('<Q', out, o + 8 + 16 * j)[0]
                if eo > tc:
                    struct.pack_into('<Q', out, o + 8 + 16 * j, eo + grow)
        k += 1
open(dst, 'wb').write(out)
print(cycles, mask, zero2)
