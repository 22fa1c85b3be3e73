# fuzz-db: damaged databases through the verbs (tests/fuzz/fuzz_db.c):
# each input's bytes are choices (tests/fuzz/db_one.h says which) of a
# fixture, a verb of hwtrace-query(1), hwtrace-report(1) or
# hwtrace-diff(1) (the copy against the unmutated fixture, both ways)
# and a few mutations of the fixture's rows (extreme values, deltas,
# flipped bits in blobs and inside their zstd frames, truncated blobs,
# deleted rows), made on an in-memory copy written to a file of the
# fuzzer's own under /dev/shm, which the verb reads through the library.  A failure without a message
# aborts with the mutations; a crash, a sanitizer report or a hang
# (-timeout) leaves the input in build-fuzz/artifacts/db-*, and
# FUZZ_DB_VERBOSE=1 build-fuzz/fuzz_db ARTIFACT says its mutations before
# the verb runs.  Add such an input to tests/fuzz/corpus-db/ as
# reg-<what>; tests/fuzz/t_db_seeds replays that corpus in make check,
# built with the normal compiler.
#
# The fixtures are made with the tests, by hwtrace itself
# (build/fuzz/db-fix/): ixgen's walk over the calls fixture program in two
# threads, indexed, with two calls added by SQL (ixgen2.db), and a
# valgrind capture of the inline fixture program (inline.db, as
# tests/query/t_query_inline makes it), indexed: between them every table
# but cycles and cpu_parts has rows (neither source makes them).  The
# whole library is built with clang for the fuzzer.

FUZZ_DB_OBJ = $(patsubst %.c,$(FUZZ_B)/obj/%.o,$(LIB_SRC))
FUZZ_DB_DIR = $(B)/fuzz/db-fix
FUZZ_DB_ABS = $(abspath $(FUZZ_DB_DIR))
FUZZ_DB_FIXES = $(FUZZ_DB_DIR)/ixgen2.db $(FUZZ_DB_DIR)/inline.db
# ixgen's walk for the first fixture: some 20,000 instructions a thread.
FUZZ_DB_GEN = -n 20000 -t 2 -s 7

tests: $(FUZZ_DB_FIXES)
$(B)/tests/fuzz/t_db_seeds: tests/fuzz/db_one.h

# Two calls written with SQL through the calls table (hwtrace_sqlite.so)
# put rows in calls_rows too.
FUZZ_DB_COLS = thread, parent, depth, symbol, func_ip, call_ip, entry_kind, \
	exit_kind, entry_seq, exit_seq, entry_insn, exit_insn, entry_tsc, \
	exit_tsc, entry_ns, exit_ns, insns, self_insns, blocks
$(FUZZ_DB_DIR)/ixgen2.db: $(BENCH_B)/ixgen $(B)/hwtrace $(B)/progs/calls \
    $(B)/hwtrace_sqlite.so tests/fuzz/fuzz-db.mk
	@mkdir -p $(dir $@)
	rm -f $@ $@.tmp $(FUZZ_DB_DIR)/ixgen2.hwtrace
	$(BENCH_B)/ixgen $(FUZZ_DB_GEN) $(B)/progs/calls \
	    $(FUZZ_DB_DIR)/ixgen2.hwtrace
	$(B)/hwtrace index -q -o $@.tmp $(FUZZ_DB_DIR)/ixgen2.hwtrace
	sqlite3 -bail -cmd ".load $(abspath $(B))/hwtrace_sqlite" $@.tmp \
	    "INSERT INTO calls ($(FUZZ_DB_COLS)) SELECT $(FUZZ_DB_COLS) \
	    FROM calls WHERE id IN (3, 200)"
	test "$$(sqlite3 $@.tmp 'SELECT count(*) FROM calls_rows')" = 2
	mv -f $@.tmp $@

# valgrind.bin runs the hwtrace tool (kernel/vgtool/build.mk).
$(FUZZ_DB_DIR)/inline.db: $(B)/hwtrace $(B)/progs/inline $(VG_READY) \
    tests/fuzz/fuzz-db.mk
	@mkdir -p $(dir $@)
	rm -f $@ $@.tmp $(FUZZ_DB_DIR)/inline.hwtrace
	env -i $(abspath $(B))/hwtrace capture --source valgrind \
	    -o $(FUZZ_DB_DIR)/inline.hwtrace -- $(abspath $(B))/progs/inline \
	    ok >/dev/null
	$(B)/hwtrace index -q -o $@.tmp $(FUZZ_DB_DIR)/inline.hwtrace
	mv -f $@.tmp $@

.PHONY: fuzz-db fuzz-db-build
fuzz-db-build: $(FUZZ_DB_FIXES)
	@$(MAKE) --no-print-directory B=$(FUZZ_B) CC=clang OPT="-O1 -g" \
	    CFLAGS="$(CFLAGS) -Wno-error" \
	    SAN="-fsanitize=fuzzer-no-link $(FUZZ_SAN)" $(FUZZ_DB_OBJ)
	clang -std=c11 -D_GNU_SOURCE -O1 -g $(WARN) -Iinclude -Iformat \
	    -DFUZZ_DB_FIXTURES='"$(FUZZ_DB_ABS)/ixgen2.db:$(FUZZ_DB_ABS)/inline.db"' \
	    -fsanitize=fuzzer $(FUZZ_SAN) -o $(FUZZ_B)/fuzz_db.tmp$$$$ \
	    tests/fuzz/fuzz_db.c $(FUZZ_DB_OBJ) $(LIBS) && \
	    mv -f $(FUZZ_B)/fuzz_db.tmp$$$$ $(FUZZ_B)/fuzz_db

# -timeout: a verb has 3 s of CPU (db_one.h), but a loop inside a virtual
# table's xFilter never reaches SQLite's progress handler, which that
# limit runs on; libFuzzer's alarm catches it.
fuzz-db: deps fuzz-db-build
	@mkdir -p $(FUZZ_B)/corpus-db $(FUZZ_B)/artifacts
	$(FUZZ_ENV) $(FUZZ_B)/fuzz_db -max_total_time=$(FUZZ_SECONDS) \
	    -timeout=20 -rss_limit_mb=2048 -malloc_limit_mb=2048 \
	    -max_len=64 -print_final_stats=1 \
	    -artifact_prefix=$(FUZZ_B)/artifacts/db- $(FUZZ_FLAGS) \
	    $(FUZZ_B)/corpus-db tests/fuzz/corpus-db
