# fuzz-sql: SQL over the virtual tables (calls_vtab.c, exec_vtab.c)
# against SQLite itself (tests/fuzz/fuzz_sql.c): each input's bytes are
# choices that build a few steps (queries over calls, exec_order and
# exec_insns; INSERT, UPDATE, DELETE on calls; savepoints) run on an
# in-memory copy of a database hwtrace index wrote and on a reference
# where those tables are ordinary ones holding the same rows
# (tests/fuzz/sql_one.h says what is compared and what is left to
# SQLite).  The fixture is made here: an ixgen walk over the recurse
# fixture program, two threads of two pages of calls each
# (build-fuzz/sql-fix/fix.db).  Seeded with tests/fuzz/corpus-sql/ (read
# only: one input per constraint shape, and reg-* for each input that
# found a difference); what it finds goes to build-fuzz/corpus-sql/.
# tests/fuzz/t_sql_seeds replays the seeds in make check, built with the
# normal compiler.  The whole library is built with clang for it.  The
# timeout is a minute: a DELETE of every call writes each page again once
# a row (seconds under the sanitizers), slow but not wrong.

FUZZ_SQL_OBJ = $(patsubst %.c,$(FUZZ_B)/obj/%.o,$(LIB_SRC))
FUZZ_SQL_DB = $(abspath $(FUZZ_B))/sql-fix/fix.db
# ixgen's walk for the fixture (tests/fuzz/t_sql_seeds.c makes the same).
FUZZ_SQL_GEN = -n 120000 -t 2 -s 14

$(B)/tests/fuzz/t_sql_seeds: tests/fuzz/sql_one.h

.PHONY: fuzz-sql fuzz-sql-build
fuzz-sql-build: $(PROGS_BIN) $(BENCH_B)/ixgen $(B)/hwtrace
	@$(MAKE) --no-print-directory B=$(FUZZ_B) CC=clang OPT="-O1 -g" \
	    CFLAGS="$(CFLAGS) -Wno-error" \
	    SAN="-fsanitize=fuzzer-no-link $(FUZZ_SAN)" $(FUZZ_SQL_OBJ)
	clang -std=c11 -D_GNU_SOURCE -O1 -g $(WARN) -Iinclude -Iindexer \
	    -DFUZZ_SQL_DB='"$(FUZZ_SQL_DB)"' \
	    -fsanitize=fuzzer $(FUZZ_SAN) -o $(FUZZ_B)/fuzz_sql.tmp$$$$ \
	    tests/fuzz/fuzz_sql.c $(FUZZ_SQL_OBJ) $(LIBS) && \
	    mv -f $(FUZZ_B)/fuzz_sql.tmp$$$$ $(FUZZ_B)/fuzz_sql
	@mkdir -p $(FUZZ_B)/sql-fix
	rm -f $(FUZZ_B)/sql-fix/fix.hwtrace $(FUZZ_B)/sql-fix/fix.db
	$(BENCH_B)/ixgen $(FUZZ_SQL_GEN) $(B)/progs/recurse \
	    $(FUZZ_B)/sql-fix/fix.hwtrace
	$(B)/hwtrace index -q -o $(FUZZ_B)/sql-fix/fix.db \
	    $(FUZZ_B)/sql-fix/fix.hwtrace

fuzz-sql: deps fuzz-sql-build
	@mkdir -p $(FUZZ_B)/corpus-sql $(FUZZ_B)/artifacts
	$(FUZZ_ENV) $(FUZZ_B)/fuzz_sql -max_total_time=$(FUZZ_SECONDS) \
	    -timeout=60 -rss_limit_mb=2048 -malloc_limit_mb=2048 \
	    -max_len=512 -print_final_stats=1 \
	    -artifact_prefix=$(FUZZ_B)/artifacts/sql- $(FUZZ_FLAGS) \
	    $(FUZZ_B)/corpus-sql tests/fuzz/corpus-sql
