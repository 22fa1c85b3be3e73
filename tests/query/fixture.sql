-- SPDX-License-Identifier: BSD-2-Clause
--
-- The database hwtrace index would write for one run of fix.c (built at
-- 0x401000, hand-assembled; every row derived by hand from this walk):
--
--   thread 1 (tid 100): main calls sum(2), which calls sq(0) and sq(1).
--     seq  block  address   function  insns  insn positions
--     0    0      0x401030  main         2   0-1    mov edi, 2; call sum
--     1    1      0x401010  sum          4   2-5    xor; xor; mov; call sq
--     2    2      0x401000  sq           3   6-8    mov; imul; ret
--     3    3      0x40101b  sum+0xb      4   9-12   add; inc; cmp; jl (taken)
--     4    4      0x401014  sum+0x4      2   13-14  mov; call sq
--     5    2      0x401000  sq           3   15-17
--     6    3      0x40101b  sum+0xb      4   18-21  (jl not taken)
--     7    5      0x401024  sum+0x14     2   22-23  mov; ret
--     8    6      0x40103a  main+0xa     1   24     ret
--   thread 2 (tid 101): the trace starts inside sq, runs it once (insns
--   0-2), then a decode error and the end.
--
-- Execution order data: zigzag(block - (previous + 1)) per block, LEB128.
-- Times: tsc 1000 at seq 0, 1500 at seq 5, 2000 at seq 8 (thread 1), 1200
-- (thread 2); ns = 1700000000000000000 + tsc.

INSERT INTO meta VALUES ('schema_version', '1'), ('hwtrace_version', '0.1.0'),
  ('source_archive', 'fix.hwtrace'), ('archive_version', '1.0'),
  ('archive_complete', '1'), ('capture_source', 'step'),
  ('cpu', 'intel 6/79/1'), ('argv', '/usr/local/bin/fix'),
  ('start_ns', '1700000000000000900'), ('end_ns', '1700000000000002100'),
  ('exit_kind', 'code'), ('exit_value', '1'), ('tsc_zero', '0'),
  ('ns_zero', '1700000000000000000'), ('tsc_mult', '1'), ('tsc_shift', '0'),
  ('chunk_blocks', '4096'), ('exec_encoding', 'delta-zigzag-varint'),
  ('exec_bytes_per_block', '1.0');

INSERT INTO streams VALUES
  (1, 'tid 100', 'intel-pt', 100, 100, NULL, 512, 0, 0, 0, 'ok'),
  (2, 'tid 101', 'intel-pt', 100, 101, NULL, 64, 128, 16, 1, 'errors');

INSERT INTO processes VALUES
  (100, 1, '/usr/local/bin/fix', 'fix', 900, 2100, 'code', 1);

INSERT INTO threads VALUES
  (1, 1, 100, 100, 'fix', 900, 2100, 'code', 1, 9, 25, 1000, 2000,
   1700000000000001000, 1700000000000002000, 0, 0, 4, 2),
  (2, 2, 100, 101, 'worker', 1150, 1300, 'code', 0, 1, 3, 1200, 1200,
   1700000000000001200, 1700000000000001200, 1, 1, 1, 0);

INSERT INTO images VALUES
  (1, 'bid-f1c5', '/usr/local/bin/fix', 'file', 'f1c5', 16384, NULL, 1, 1, 1, 1);

INSERT INTO mappings VALUES
  (1, 100, 1, '/usr/local/bin/fix', 0x400000, 0x405000, 0, 0, 5, NULL, NULL);

INSERT INTO symbols VALUES
  (1, 1, 'sq', 0x401000, 6, 'func', 'global', 'symtab', NULL),
  (2, 1, 'sum', 0x401010, 23, 'func', 'global', 'symtab', NULL),
  (3, 1, 'main', 0x401030, 11, 'func', 'global', 'symtab', NULL),
  (4, 1, 'unused', 0x401040, 6, 'func', 'global', 'symtab', NULL),
  (5, 1, 'puts@plt', 0x401050, 16, 'plt', 'global', 'plt', NULL),
  (6, 1, 'counter', 0x404000, 4, 'object', 'global', 'symtab', NULL);

INSERT INTO files VALUES (1, 'fix.c');

-- end_addr: the next row, or where the DWARF sequence (the function) ends.
INSERT INTO lines VALUES
  (1, 0x401000, 1, 5, 9, 1, 0x401005), (1, 0x401005, 1, 6, 1, 1, 0x401006),
  (1, 0x401010, 1, 10, 6, 1, 0x401012), (1, 0x401012, 1, 11, 11, 1, 0x401014),
  (1, 0x401014, 1, 12, 8, 1, 0x40101b), (1, 0x40101b, 1, 12, 5, 1, 0x40101d),
  (1, 0x40101d, 1, 11, 28, 1, 0x401024), (1, 0x401024, 1, 13, 9, 1, 0x401026),
  (1, 0x401026, 1, 15, 1, 1, 0x401027),
  (1, 0x401030, 1, 24, 9, 1, 0x40103a), (1, 0x40103a, 1, 25, 1, 1, 0x40103b),
  (1, 0x401040, 1, 19, 2, 1, 0x401045), (1, 0x401045, 1, 20, 1, 1, 0x401046);

INSERT INTO blocks VALUES
  (0, 0x401030, 0x401035, 10, 2, 64, 'call', 1, 0x401030, 3, 0, 1, 24, 1,
   X'0505', X'bf02000000e8d6ffffff'),
  (1, 0x401010, 0x401016, 11, 4, 64, 'call', 1, 0x401010, 2, 0, 1, 10, 1,
   X'02020205', X'31db31ed89efe8e5ffffff'),
  (2, 0x401000, 0x401005, 6, 3, 64, 'return', 1, 0x401000, 1, 0, 1, 5, 3,
   X'020301', X'89f80fafc7c3'),
  (3, 0x40101b, 0x401022, 9, 4, 64, 'cond', 1, 0x40101b, 2, 11, 1, 12, 2,
   X'02020302', X'01c3ffc583fd027cf0'),
  (4, 0x401014, 0x401016, 7, 2, 64, 'call', 1, 0x401014, 2, 4, 1, 12, 1,
   X'0205', X'89efe8e5ffffff'),
  (5, 0x401024, 0x401026, 3, 2, 64, 'return', 1, 0x401024, 2, 20, 1, 13, 1,
   X'0201', X'89d8c3'),
  (6, 0x40103a, 0x40103a, 1, 1, 64, 'return', 1, 0x40103a, 3, 10, 1, 25, 1,
   X'01', X'c3');

INSERT INTO block_counts VALUES
  (1, 0, 1), (1, 1, 1), (1, 2, 2), (1, 3, 2), (1, 4, 1), (1, 5, 1), (1, 6, 1),
  (2, 2, 1);

INSERT INTO exec_chunks VALUES
  (1, 0, 9, 0, 25, 1000, X'000000000005000200'),
  (2, 0, 1, 0, 3, 1200, X'04');

INSERT INTO timestamps VALUES
  (1, 0, 0, 1000, 1700000000000001000),
  (1, 5, 15, 1500, 1700000000000001500),
  (1, 8, 24, 2000, 1700000000000002000),
  (2, 0, 0, 1200, 1700000000000001200);

INSERT INTO branches VALUES
  (1, 0, 1, 0x401035, 0x401010, 'call', 1),
  (1, 1, 2, 0x401016, 0x401000, 'call', 1),
  (1, 2, 3, 0x401005, 0x40101b, 'return', 2),
  (1, 3, 4, 0x401022, 0x401014, 'cond-taken', 1),
  (1, 4, 2, 0x401016, 0x401000, 'call', 1),
  (1, 3, 5, 0x401022, 0x401024, 'cond-not-taken', 1),
  (1, 5, 6, 0x401026, 0x40103a, 'return', 1);

INSERT INTO calls VALUES
  (1, 1, NULL, 0, 3, 0x401030, NULL, 'start', 'return', 0, 9, 0, 25,
   1000, 2000, 1700000000000001000, 1700000000000002000, 25, 3, 9),
  (2, 1, 1, 1, 2, 0x401010, 0x401035, 'call', 'return', 1, 8, 2, 24,
   1000, 2000, 1700000000000001000, 1700000000000002000, 22, 16, 7),
  (3, 1, 2, 2, 1, 0x401000, 0x401016, 'call', 'return', 2, 3, 6, 9,
   1000, 1000, 1700000000000001000, 1700000000000001000, 3, 3, 1),
  (4, 1, 2, 2, 1, 0x401000, 0x401016, 'call', 'return', 5, 6, 15, 18,
   1500, 1500, 1700000000000001500, 1700000000000001500, 3, 3, 1),
  (5, 2, NULL, 0, 1, 0x401000, NULL, 'start', 'end', 0, 1, 0, 3,
   1200, 1200, 1700000000000001200, 1700000000000001200, 3, 3, 1);

INSERT INTO events VALUES
  (1, 1, 1, 0, 0, 'enabled', 0, 0x401030, 1000, 1700000000000001000, 100, NULL),
  (2, 1, 1, 9, 25, 'disabled', 500, NULL, 2000, 1700000000000002000, 100, NULL),
  (3, 2, 2, 0, 0, 'enabled', 0, 0x401000, 1200, 1700000000000001200, 100, NULL),
  (4, 2, 2, 1, 3, 'decode-error', 48, NULL, 1200, 1700000000000001200, 100,
   'unexpected packet'),
  (5, NULL, 2, NULL, NULL, 'lost', NULL, NULL, 1250, 1700000000000001250, 100,
   '128 bytes'),
  (6, NULL, NULL, NULL, NULL, 'exec', NULL, NULL, 900, 1700000000000000900, 100,
   '/usr/local/bin/fix');
