# The archive reader's, the perf.data reader's, the perf map and jitdump
# readers', the LLDB bundle and CoreSight snapshot importers', fpt's
# differential, the hostile-binary, the SQL differential and the
# damaged-database fuzzers (`make fuzz`) and the archive reader's seed
# corpus.
#
#   make fuzz [FUZZ_SECONDS=120]  run the eight fuzzers, that long each
#   make fuzz-reader, make fuzz-perf, make fuzz-import, make fuzz-jit
#   make fuzz-fpt    fpt against libipt (tests/fuzz/fuzz-fpt.mk)
#   make fuzz-elf    hostile ELF images through the whole index: each input
#	is the program of a small fixed archive over the calls fixture,
#	indexed (hwtr_ix_run()) and queried (symbols, lines, inlines)
#	(tests/fuzz/fuzz-elf.mk); libelf, libdw and the indexer's own ELF
#	readers (indexer/elfsym.c, elfinline.c, ix_lines.c, ix_image.c,
#	format/elf_inflate.c).  tests/fuzz/t_elf_seeds replays its check in
#	make check.  A long run that goes on past what it finds:
#	make fuzz-elf FUZZ_SECONDS=1800 FUZZ_FLAGS="-fork=1 -ignore_crashes=1"
#   make fuzz-sql    SQL over the calls, exec_order and exec_insns
#	virtual tables (indexer/calls_vtab.c, exec_vtab.c) against SQLite
#	itself: each input is a few queries and writes, decoded from its
#	bytes by a grammar, run on a database hwtrace index wrote and on a
#	reference where those tables are ordinary ones; a difference aborts
#	with both answers (tests/fuzz/fuzz-sql.mk, sql_one.h).  Add an input
#	that found one to tests/fuzz/corpus-sql/ as reg-<what>;
#	tests/fuzz/t_sql_seeds replays that corpus in make check.
#   make fuzz-db     damaged databases through the verbs: each input is a
#	fixture (an ixgen walk over calls in two threads, the inline
#	fixture's valgrind capture: databases hwtrace index wrote, made
#	with the tests), a verb of hwtrace-query(1) and a few mutations of
#	the fixture's rows (extreme values, deltas, flipped bits in blobs
#	and inside their zstd frames, truncated blobs, deleted rows) on an
#	in-memory copy; the verb, run through the library, must answer or
#	fail with a message (tests/fuzz/fuzz-db.mk, db_one.h).  Add an
#	input that found a crash, a hang or a failure without a message to
#	tests/fuzz/corpus-db/ as reg-<what>; tests/fuzz/t_db_seeds replays
#	that corpus in make check.
#
#   fuzz-reader: build build-fuzz/fuzz_reader with clang
#	(libFuzzer + ASan + UBSan, the library too) and run it for that long
#	over tests/fuzz/corpus/ (read only) and build-fuzz/corpus/ (what it
#	finds); fails on any crash, sanitizer report, leak, timeout (10 s)
#	or memory use over 2 GiB, leaving the input in build-fuzz/artifacts/.
#	Add such an input to tests/fuzz/corpus/ as reg-<what>.hwtrace.
#	reg-16-* are the hostile archives of issue 16 (members listed in
#	end.json that are links, devices or badly named, frames without a
#	checksum, out-of-range fields, terminal escapes), made by the
#	format tests (t_reader) and tests/cli/t_security.
#   make fuzz-seeds  regenerate tests/fuzz/corpus/ with mkseeds (keeps
#	the reg-* regressions and the fz-* inputs the fuzzer found).

FUZZ_B	= build-fuzz
FUZZ_SECONDS ?= 120
FUZZ_FLAGS ?=
FUZZ_SAN = -fsanitize=address,undefined -fno-sanitize-recover=all \
	  -fno-omit-frame-pointer
FUZZ_ENV = ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

# The seed-corpus test needs the walker it shares with the fuzzer.
$(B)/tests/fuzz/t_corpus: tests/fuzz/fuzz_walk.h
# fpt's seed test shares the fuzzer's check of one input.
$(B)/tests/fuzz/t_fpt_seeds: tests/fuzz/fpt_one.h

$(B)/fuzz/mkseeds: tests/fuzz/mkseeds.c $(B)/libhwtrace.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(B)/libhwtrace.a $(LDFLAGS_ALL) $(LIBS)

tests: $(B)/fuzz/mkseeds

.PHONY: fuzz-build fuzz-seeds
# Only common/ and format/ are built for the fuzzer: the reader needs no
# more, and the fuzzer does not wait on the rest of the library.
FUZZ_OBJ = $(patsubst %.c,$(FUZZ_B)/obj/%.o,$(wildcard common/*.c format/*.c))
fuzz-build:
	@$(MAKE) --no-print-directory B=$(FUZZ_B) CC=clang OPT="-O1 -g" \
	    SAN="-fsanitize=fuzzer-no-link $(FUZZ_SAN)" $(FUZZ_OBJ)
	clang -std=c11 -D_GNU_SOURCE -O1 -g $(WARN) -Iinclude -Itests/fuzz \
	    -fsanitize=fuzzer $(FUZZ_SAN) -o $(FUZZ_B)/fuzz_reader \
	    tests/fuzz/fuzz_reader.c $(FUZZ_OBJ) $(LIBS)
	clang -std=c11 -D_GNU_SOURCE -O1 -g $(WARN) -Iinclude -Icommon -Iformat \
	    -fsanitize=fuzzer $(FUZZ_SAN) -o $(FUZZ_B)/fuzz_perf \
	    tests/fuzz/fuzz_perf.c $(FUZZ_OBJ) $(LIBS)
	clang -std=c11 -D_GNU_SOURCE -O1 -g $(WARN) -Iinclude \
	    -fsanitize=fuzzer $(FUZZ_SAN) -o $(FUZZ_B)/fuzz_import \
	    tests/fuzz/fuzz_import.c $(FUZZ_OBJ) $(LIBS)
	clang -std=c11 -D_GNU_SOURCE -O1 -g $(WARN) -Iinclude -Iformat \
	    -fsanitize=fuzzer $(FUZZ_SAN) -o $(FUZZ_B)/fuzz_jit \
	    tests/fuzz/fuzz_jit.c $(FUZZ_OBJ) $(LIBS)

.PHONY: fuzz-reader fuzz-perf fuzz-import fuzz-jit
fuzz: fuzz-reader fuzz-perf fuzz-import fuzz-jit fuzz-fpt fuzz-elf fuzz-sql \
	fuzz-db

# fuzz-perf: the perf.data reader and importer (tests/fuzz/fuzz_perf.c),
# seeded with the shared corpus's real recordings when present (read
# only; what it finds goes to build-fuzz/corpus-perf/).
FUZZ_PERF_SEEDS = $(wildcard ../shared/corpus/perf-data/intel_pt \
	  ../shared/corpus/perf-data/cs_etm)
fuzz-perf: deps fuzz-build
	@mkdir -p $(FUZZ_B)/corpus-perf $(FUZZ_B)/artifacts
	$(FUZZ_ENV) $(FUZZ_B)/fuzz_perf -max_total_time=$(FUZZ_SECONDS) \
	    -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 \
	    -max_len=262144 -print_final_stats=1 \
	    -artifact_prefix=$(FUZZ_B)/artifacts/perf- $(FUZZ_FLAGS) \
	    $(FUZZ_B)/corpus-perf $(FUZZ_PERF_SEEDS)

# fuzz-import: the LLDB bundle and CoreSight snapshot importers
# (tests/fuzz/fuzz_import.c: a directory of files packed in one input),
# seeded with the shared corpus's bundles and small snapshots packed by
# tests/fuzz/import_seeds.py into build-fuzz/seeds-import/ (none when the
# corpus is absent); what it finds goes to build-fuzz/corpus-import/.
fuzz-import: deps fuzz-build
	@mkdir -p $(FUZZ_B)/corpus-import $(FUZZ_B)/artifacts
	python3 tests/fuzz/import_seeds.py ../shared/corpus \
	    $(FUZZ_B)/seeds-import
	$(FUZZ_ENV) $(FUZZ_B)/fuzz_import -max_total_time=$(FUZZ_SECONDS) \
	    -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 \
	    -max_len=262144 -print_final_stats=1 \
	    -artifact_prefix=$(FUZZ_B)/artifacts/import- $(FUZZ_FLAGS) \
	    $(FUZZ_B)/corpus-import $(FUZZ_B)/seeds-import

# fuzz-jit: the perf map, jitdump and code-region readers
# (tests/fuzz/fuzz_jit.c), seeded with a two-region code file and with
# what node writes when it is installed (build-fuzz/seeds-jit/, made
# here); what it finds goes to build-fuzz/corpus-jit/.
FUZZ_CODE_SEED = import struct, sys; sys.stdout.buffer.write(b"HWTRCODE" + \
	struct.pack("<IIQQQII", 1, 0, 0x1000, 1, 2, 1, 0) + b"\xc3")
fuzz-jit: deps fuzz-build
	@mkdir -p $(FUZZ_B)/corpus-jit $(FUZZ_B)/seeds-jit $(FUZZ_B)/artifacts
	python3 -c '$(FUZZ_CODE_SEED)' >$(FUZZ_B)/seeds-jit/code.seed
	-cd $(FUZZ_B)/seeds-jit && command -v node >/dev/null && \
	    echo 'function f(a){return a*3|0} let s=0;' \
	    'for(let i=0;i<99999;i++)s=f(s+i);' >seed.js && \
	    node --perf-prof --no-turbo-inlining seed.js && \
	    for f in jit-*.dump; do head -c 200000 $$f >$$f.seed; \
	    rm $$f; done && rm -f isolate-*.log && \
	    { node --perf-basic-prof seed.js & p=$$!; wait $$p; \
	    head -c 65536 /tmp/perf-$$p.map >map.seed; rm /tmp/perf-$$p.map; }
	$(FUZZ_ENV) $(FUZZ_B)/fuzz_jit -max_total_time=$(FUZZ_SECONDS) \
	    -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 \
	    -max_len=262144 -print_final_stats=1 \
	    -artifact_prefix=$(FUZZ_B)/artifacts/jit- $(FUZZ_FLAGS) \
	    $(FUZZ_B)/corpus-jit $(FUZZ_B)/seeds-jit

fuzz-reader: deps fuzz-build
	@mkdir -p $(FUZZ_B)/corpus $(FUZZ_B)/artifacts
	$(FUZZ_ENV) $(FUZZ_B)/fuzz_reader -max_total_time=$(FUZZ_SECONDS) \
	    -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 \
	    -max_len=1048576 -print_final_stats=1 \
	    -artifact_prefix=$(FUZZ_B)/artifacts/ $(FUZZ_FLAGS) \
	    $(FUZZ_B)/corpus tests/fuzz/corpus

fuzz-seeds: $(B)/fuzz/mkseeds
	find tests/fuzz/corpus -name '*.hwtrace' ! -name 'reg-*' ! -name 'fz-*' \
	    -delete
	$(B)/fuzz/mkseeds tests/fuzz/corpus
	@du -sh tests/fuzz/corpus

# The fpt decoder's differential fuzzer (its own file).
-include tests/fuzz/fuzz-fpt.mk
# Hostile binaries through the index (its own file).
-include tests/fuzz/fuzz-elf.mk
# SQL over the virtual tables against SQLite (its own file).
-include tests/fuzz/fuzz-sql.mk
# Damaged databases through the verbs (its own file).
-include tests/fuzz/fuzz-db.mk
