/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The database schema, version HWTR_DB_SCHEMA_VERSION, documented in
 * hwtrace-db(5).  Kept as one SQL text so that the indexer, the tests and the
 * manual can all be checked against the same words.  Addresses are stored as
 * SQLite INTEGERs holding the 64-bit pattern (kernel addresses read as
 * negative numbers; printf('%x', ip) prints them right).  Times: *_tsc in the
 * trace's time domain, *_ns wall-clock nanoseconds since the Epoch, NULL when
 * unknown.  Positions: "seq" counts executed blocks of a thread from 0,
 * "insn" counts executed instructions of a thread from 0.  calls,
 * lines, exec_order and exec_insns are virtual tables
 * (indexer/calls_vtab.c, colstore.h; indexer/linestore.c;
 * indexer/exec_vtab.c): a connection must have the modules registered
 * (hwtr_ix_sqlite_register()) to create or read them.  Each reads the
 * tables of the database it is declared in, so that an attached
 * database's calls are its own.
 */

#ifndef HWTR_IX_SCHEMA_SQL_H
#define HWTR_IX_SCHEMA_SQL_H

/*
 * call_times: when each call began and ended, on its thread's clock, each
 * end marked exact or estimated.  A view, computed when read (calls and
 * their storage stay as they are): the stored entry_ns and exit_ns are
 * the last clock reading before each end, so that most calls of a trace
 * with sparse timestamps last 0 ns; hwtr_time_at() places each end by
 * instruction count between the readings around it (a bisection over one
 * thread's readings, kept per connection).  The clock of a thread:
 * 'ns' when it has a wall-clock time (threads.first_ns), else 'tsc' when
 * it has trace timestamps, else 'instructions' (its instruction count,
 * exact).  The functions read the timestamps of the database whose
 * archive id they are given, the view's own (a view's tables are its
 * database's, a function's are main's).  Needs the extension's functions
 * (hwtr_ix_sqlite_register()).
 */
#define HWTR_IX_CALL_TIMES_SQL \
"CREATE VIEW call_times AS SELECT c.id AS call, c.thread AS thread,\n"	\
"  CASE k.clock WHEN 'instructions' THEN c.entry_insn\n"		\
"    ELSE hwtr_time_at(c.thread, c.entry_insn, k.clock, a.id) END AS t_entry,\n" \
"  CASE k.clock WHEN 'instructions' THEN c.exit_insn\n"		\
"    ELSE hwtr_time_at(c.thread, c.exit_insn, k.clock, a.id) END AS t_exit,\n" \
"  CASE k.clock WHEN 'instructions' THEN 0 ELSE\n"			\
"    hwtr_time_estimated(c.thread, c.entry_insn, k.clock, a.id) END\n"	\
"    AS entry_estimated,\n"						\
"  CASE k.clock WHEN 'instructions' THEN 0 ELSE\n"			\
"    hwtr_time_estimated(c.thread, c.exit_insn, k.clock, a.id) END\n"	\
"    AS exit_estimated,\n"						\
"  k.clock AS clock\n"							\
"FROM calls c CROSS JOIN (SELECT id, CASE WHEN first_ns IS NOT NULL THEN 'ns'\n" \
"  WHEN first_tsc IS NOT NULL THEN 'tsc' ELSE 'instructions' END AS clock\n" \
"  FROM threads) k ON k.id = c.thread\n"				\
"  CROSS JOIN (SELECT max(value) AS id FROM meta\n"			\
"    WHERE key = 'archive_id') a;\n"

/*
 * The view as hwtrace wrote it before it passed its database's archive
 * id (a.id above), so that an attached database's view read the main
 * database's timestamps: the text above without ", a.id" and without its
 * last CROSS JOIN.  Readers accept it too (q_db.c): the same answers in a
 * database opened alone.
 */
#define HWTR_IX_CALL_TIMES_SQL_8 \
"CREATE VIEW call_times AS SELECT c.id AS call, c.thread AS thread,\n"	\
"  CASE k.clock WHEN 'instructions' THEN c.entry_insn\n"		\
"    ELSE hwtr_time_at(c.thread, c.entry_insn, k.clock) END AS t_entry,\n" \
"  CASE k.clock WHEN 'instructions' THEN c.exit_insn\n"		\
"    ELSE hwtr_time_at(c.thread, c.exit_insn, k.clock) END AS t_exit,\n" \
"  CASE k.clock WHEN 'instructions' THEN 0 ELSE\n"			\
"    hwtr_time_estimated(c.thread, c.entry_insn, k.clock) END\n"	\
"    AS entry_estimated,\n"						\
"  CASE k.clock WHEN 'instructions' THEN 0 ELSE\n"			\
"    hwtr_time_estimated(c.thread, c.exit_insn, k.clock) END\n"		\
"    AS exit_estimated,\n"						\
"  k.clock AS clock\n"							\
"FROM calls c CROSS JOIN (SELECT id, CASE WHEN first_ns IS NOT NULL THEN 'ns'\n" \
"  WHEN first_tsc IS NOT NULL THEN 'tsc' ELSE 'instructions' END AS clock\n" \
"  FROM threads) k ON k.id = c.thread;\n"

#define HWTR_IX_SCHEMA_SQL \
"PRAGMA application_id = 1752659058;\n"	/* 0x68777472, "hwtr" */	\
"PRAGMA user_version = 8;\n"						\
"CREATE TABLE meta (\n"							\
"  key TEXT PRIMARY KEY NOT NULL,\n"					\
"  value TEXT\n"							\
") WITHOUT ROWID;\n"							\
"CREATE TABLE streams (\n"						\
"  id INTEGER PRIMARY KEY,\n"						\
"  name TEXT NOT NULL,\n"						\
"  format TEXT NOT NULL,\n"						\
"  pid INTEGER,\n"							\
"  tid INTEGER,\n"							\
"  cpu INTEGER,\n"							\
"  bytes INTEGER NOT NULL,\n"						\
"  lost_bytes INTEGER NOT NULL,\n"					\
"  undecoded_bytes INTEGER NOT NULL,\n"					\
"  errors INTEGER NOT NULL,\n"						\
"  status TEXT NOT NULL\n"						\
");\n"									\
"CREATE TABLE processes (\n"						\
"  pid INTEGER PRIMARY KEY,\n"						\
"  ppid INTEGER,\n"							\
"  path TEXT,\n"							\
"  comm TEXT,\n"							\
"  start_tsc INTEGER,\n"						\
"  end_tsc INTEGER,\n"							\
"  exit_kind TEXT,\n"							\
"  exit_value INTEGER\n"						\
");\n"									\
"CREATE TABLE threads (\n"						\
"  id INTEGER PRIMARY KEY,\n"						\
"  stream INTEGER REFERENCES streams(id),\n"				\
"  pid INTEGER,\n"							\
"  tid INTEGER,\n"							\
"  name TEXT,\n"							\
"  start_tsc INTEGER,\n"						\
"  end_tsc INTEGER,\n"							\
"  exit_kind TEXT,\n"							\
"  exit_value INTEGER,\n"						\
"  blocks INTEGER NOT NULL,\n"						\
"  insns INTEGER NOT NULL,\n"						\
"  first_tsc INTEGER,\n"						\
"  last_tsc INTEGER,\n"							\
"  first_ns INTEGER,\n"							\
"  last_ns INTEGER,\n"							\
"  errors INTEGER NOT NULL,\n"						\
"  gaps INTEGER NOT NULL,\n"						\
"  calls INTEGER NOT NULL,\n"						\
"  max_depth INTEGER NOT NULL\n"					\
");\n"									\
"CREATE TABLE images (\n"						\
"  id INTEGER PRIMARY KEY,\n"						\
"  key TEXT NOT NULL UNIQUE,\n"						\
"  path TEXT,\n"							\
"  kind TEXT NOT NULL,\n"						\
"  build_id TEXT,\n"							\
"  size INTEGER NOT NULL,\n"						\
"  sha256 TEXT,\n"							\
"  present INTEGER NOT NULL,\n"						\
"  elf INTEGER NOT NULL,\n"						\
"  has_symbols INTEGER NOT NULL,\n"					\
"  has_lines INTEGER NOT NULL\n"					\
");\n"									\
"CREATE TABLE mappings (\n"						\
"  id INTEGER PRIMARY KEY,\n"						\
"  pid INTEGER,\n"							\
"  image INTEGER REFERENCES images(id),\n"				\
"  path TEXT,\n"							\
"  start_ip INTEGER NOT NULL,\n"					\
"  end_ip INTEGER NOT NULL,\n"						\
"  pgoff INTEGER NOT NULL,\n"						\
"  bias INTEGER NOT NULL,\n"						\
"  prot INTEGER NOT NULL,\n"						\
"  from_tsc INTEGER,\n"							\
"  to_tsc INTEGER\n"							\
");\n"									\
"CREATE TABLE symbols (\n"						\
"  id INTEGER PRIMARY KEY,\n"						\
"  image INTEGER NOT NULL REFERENCES images(id),\n"			\
"  name TEXT NOT NULL,\n"						\
"  addr INTEGER NOT NULL,\n"						\
"  size INTEGER NOT NULL,\n"						\
"  kind TEXT NOT NULL,\n"						\
"  bind TEXT NOT NULL,\n"						\
"  origin TEXT NOT NULL,\n"						\
"  mangled TEXT\n"							\
");\n"									\
"CREATE TABLE files (\n"						\
"  id INTEGER PRIMARY KEY,\n"						\
"  path TEXT NOT NULL UNIQUE\n"						\
");\n"									\
"CREATE TABLE line_pages (\n"						\
"  image INTEGER NOT NULL REFERENCES images(id),\n"			\
"  lo INTEGER NOT NULL,\n"						\
"  last INTEGER NOT NULL,\n"						\
"  n INTEGER NOT NULL,\n"						\
"  data BLOB NOT NULL,\n"						\
"  PRIMARY KEY (image, lo)\n"						\
") WITHOUT ROWID;\n"							\
"CREATE VIRTUAL TABLE lines USING hwtr_lines;\n"			\
"CREATE TABLE inlines (\n"						\
"  image INTEGER NOT NULL REFERENCES images(id),\n"			\
"  lo INTEGER NOT NULL,\n"						\
"  hi INTEGER NOT NULL,\n"						\
"  entry INTEGER NOT NULL,\n"						\
"  inst INTEGER NOT NULL,\n"						\
"  depth INTEGER NOT NULL,\n"						\
"  name TEXT NOT NULL,\n"						\
"  call_file INTEGER REFERENCES files(id),\n"				\
"  call_line INTEGER NOT NULL,\n"					\
"  parent INTEGER,\n"							\
"  PRIMARY KEY (image, lo, inst)\n"					\
") WITHOUT ROWID;\n"							\
"CREATE TABLE blocks (\n"						\
"  id INTEGER PRIMARY KEY,\n"						\
"  start_ip INTEGER NOT NULL,\n"					\
"  last_ip INTEGER NOT NULL,\n"						\
"  size INTEGER NOT NULL,\n"						\
"  ninsns INTEGER NOT NULL,\n"						\
"  mode INTEGER NOT NULL,\n"						\
"  last_class TEXT NOT NULL,\n"						\
"  image INTEGER REFERENCES images(id),\n"				\
"  image_addr INTEGER,\n"						\
"  symbol INTEGER REFERENCES symbols(id),\n"				\
"  sym_offset INTEGER,\n"						\
"  file INTEGER REFERENCES files(id),\n"				\
"  line INTEGER,\n"							\
"  exec_count INTEGER NOT NULL,\n"					\
"  insn_lens BLOB,\n"							\
"  code BLOB\n"								\
");\n"									\
"CREATE TABLE block_counts (\n"						\
"  thread INTEGER NOT NULL REFERENCES threads(id),\n"			\
"  block INTEGER NOT NULL REFERENCES blocks(id),\n"			\
"  count INTEGER NOT NULL,\n"						\
"  PRIMARY KEY (thread, block)\n"					\
") WITHOUT ROWID;\n"							\
"CREATE TABLE exec_chunks (\n"						\
"  thread INTEGER NOT NULL REFERENCES threads(id),\n"			\
"  seq INTEGER NOT NULL,\n"						\
"  nblocks INTEGER NOT NULL,\n"						\
"  insn INTEGER NOT NULL,\n"						\
"  ninsns INTEGER NOT NULL,\n"						\
"  first_tsc INTEGER,\n"						\
"  data BLOB NOT NULL,\n"						\
"  PRIMARY KEY (thread, seq)\n"						\
") WITHOUT ROWID;\n"							\
"CREATE TABLE timestamps (\n"						\
"  thread INTEGER NOT NULL REFERENCES threads(id),\n"			\
"  seq INTEGER NOT NULL,\n"						\
"  insn INTEGER NOT NULL,\n"						\
"  tsc INTEGER NOT NULL,\n"						\
"  ns INTEGER,\n"							\
"  PRIMARY KEY (thread, seq)\n"						\
") WITHOUT ROWID;\n"							\
"CREATE VIRTUAL TABLE exec_order USING exec_order;\n"			\
"CREATE VIRTUAL TABLE exec_insns USING exec_insns;\n"			\
"CREATE TABLE branches (\n"						\
"  thread INTEGER NOT NULL REFERENCES threads(id),\n"			\
"  from_block INTEGER NOT NULL REFERENCES blocks(id),\n"		\
"  to_block INTEGER NOT NULL REFERENCES blocks(id),\n"			\
"  from_ip INTEGER NOT NULL,\n"						\
"  to_ip INTEGER NOT NULL,\n"						\
"  kind TEXT NOT NULL,\n"						\
"  count INTEGER NOT NULL,\n"						\
"  PRIMARY KEY (thread, from_block, to_block)\n"			\
") WITHOUT ROWID;\n"							\
"CREATE VIRTUAL TABLE calls USING hwtr_calls;\n"			\
"CREATE TABLE call_paths (\n"					\
"  id INTEGER PRIMARY KEY,\n"						\
"  thread INTEGER NOT NULL REFERENCES threads(id),\n"			\
"  parent INTEGER REFERENCES call_paths(id),\n"				\
"  depth INTEGER NOT NULL,\n"						\
"  symbol INTEGER REFERENCES symbols(id),\n"				\
"  func_ip INTEGER NOT NULL,\n"						\
"  call_ip INTEGER,\n"							\
"  calls INTEGER NOT NULL,\n"						\
"  insns INTEGER NOT NULL,\n"						\
"  self_insns INTEGER NOT NULL,\n"					\
"  duration_ns INTEGER\n"						\
");\n"									\
"CREATE TABLE events (\n"						\
"  id INTEGER PRIMARY KEY,\n"						\
"  thread INTEGER REFERENCES threads(id),\n"				\
"  stream INTEGER REFERENCES streams(id),\n"				\
"  seq INTEGER,\n"							\
"  insn INTEGER,\n"							\
"  kind TEXT NOT NULL,\n"						\
"  offset INTEGER,\n"							\
"  ip INTEGER,\n"							\
"  tsc INTEGER,\n"							\
"  ns INTEGER,\n"							\
"  pid INTEGER,\n"							\
"  detail TEXT\n"							\
");\n"									\
"CREATE TABLE cycles (\n"						\
"  id INTEGER NOT NULL,\n"						\
"  thread INTEGER NOT NULL REFERENCES threads(id),\n"			\
"  seq INTEGER NOT NULL,\n"						\
"  insn INTEGER NOT NULL,\n"						\
"  count INTEGER NOT NULL,\n"						\
"  element TEXT NOT NULL,\n"						\
"  cumulative INTEGER NOT NULL,\n"					\
"  PRIMARY KEY (thread, seq, id)\n"					\
") WITHOUT ROWID;\n"							\
HWTR_IX_CALL_TIMES_SQL							\
"CREATE TABLE cpu_parts (\n"						\
"  stream INTEGER NOT NULL REFERENCES streams(id),\n"			\
"  cpu INTEGER,\n"							\
"  part INTEGER NOT NULL,\n"						\
"  thread INTEGER REFERENCES threads(id),\n"				\
"  pid INTEGER,\n"							\
"  tid INTEGER,\n"							\
"  start_tsc INTEGER,\n"						\
"  end_tsc INTEGER,\n"							\
"  start_ns INTEGER,\n"						\
"  end_ns INTEGER,\n"							\
"  start_offset INTEGER,\n"						\
"  end_offset INTEGER,\n"						\
"  psbs INTEGER NOT NULL,\n"						\
"  tscs INTEGER NOT NULL,\n"						\
"  mtcs INTEGER NOT NULL,\n"						\
"  cycs INTEGER NOT NULL,\n"						\
"  stream_thread INTEGER NOT NULL REFERENCES threads(id),\n"		\
"  first_seq INTEGER,\n"						\
"  end_seq INTEGER,\n"							\
"  first_insn INTEGER,\n"						\
"  end_insn INTEGER,\n"						\
"  errors INTEGER NOT NULL,\n"						\
"  PRIMARY KEY (stream, part)\n"					\
") WITHOUT ROWID;\n"

/*
 * Indexes, created after the bulk load (cheaper than maintaining them).
 * Not calls_thread, above: calls rows come in exit order, whose (thread,
 * entry_seq) keys are nearly sorted, so the index grows at its end.  On
 * gzip of 8 MiB (8.9 M calls) keeping it cost the bulk load 1.7 CPU-s,
 * where building it at the end took 2.5 s of a tail that runs alone.
 */
#define HWTR_IX_INDEX_SQL \
"CREATE INDEX symbols_name ON symbols(name);\n"				\
"CREATE INDEX symbols_mangled ON symbols(mangled);\n"			\
"CREATE INDEX symbols_addr ON symbols(image, addr);\n"			\
"CREATE INDEX inlines_name ON inlines(name);\n"			\
"CREATE INDEX blocks_start ON blocks(start_ip);\n"			\
"CREATE INDEX blocks_symbol ON blocks(symbol);\n"			\
"CREATE INDEX events_thread ON events(thread, seq);\n"			\
"CREATE INDEX events_kind ON events(kind);\n"				\
"CREATE INDEX mappings_pid ON mappings(pid, start_ip);\n"		\
"CREATE INDEX exec_chunks_insn ON exec_chunks(thread, insn);\n"

#endif /* !HWTR_IX_SCHEMA_SQL_H */
