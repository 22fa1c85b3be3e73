# fuzz-elf: hostile binaries through the whole index (tests/fuzz/fuzz_elf.c):
# each input is an ELF file put in place of the calls fixture in a small
# fixed archive (an ixgen walk over calls, made here in
# build-fuzz/elf-walk/walk.0), indexed by hwtr_ix_run() into a temporary
# database and read back by a few verbs (fuzz_elf_one.h).  Seeded with
# fixture programs and compressed-DWARF copies of calls made here
# (build-fuzz/seeds-elf/) and with the inputs it once found a bug with
# (tests/fuzz/corpus-elf/reg-*, read only); what it finds goes to
# build-fuzz/corpus-elf/.  tests/fuzz/t_elf_seeds replays the same check
# on calls and tests/fuzz/corpus-elf/ in make check, built with the
# normal compiler.  The whole library is built with clang for it.

FUZZ_ELF_OBJ = $(patsubst %.c,$(FUZZ_B)/obj/%.o,$(LIB_SRC))
FUZZ_ELF_PROG = $(abspath $(B))/progs/calls
FUZZ_ELF_PT = $(abspath $(FUZZ_B))/elf-walk/walk.0
# The fixture programs the seeds are: calls, whose code the walk
# follows, and others of other shapes (inline functions, C++, a dynamic
# PIE, a shared library, a stripped one).
FUZZ_ELF_SEEDS = calls inline except dynpie libdlfix.so plt-stripped

$(B)/tests/fuzz/t_elf_seeds: tests/fuzz/fuzz_elf_one.h

.PHONY: fuzz-elf fuzz-elf-build
# Warnings are no errors for the library's objects here, as in `make
# sanitize`: clang warns where gcc does not (an unused static inline
# function of a .c file), and `make` holds the sources to -Werror.
fuzz-elf-build: $(PROGS_BIN) $(BENCH_B)/ixgen
	@$(MAKE) --no-print-directory B=$(FUZZ_B) CC=clang OPT="-O1 -g" \
	    CFLAGS="$(CFLAGS) -Wno-error" \
	    SAN="-fsanitize=fuzzer-no-link $(FUZZ_SAN)" $(FUZZ_ELF_OBJ)
	clang -std=c11 -D_GNU_SOURCE -O1 -g $(WARN) -Iinclude \
	    -DFUZZ_ELF_PROG='"$(FUZZ_ELF_PROG)"' \
	    -DFUZZ_ELF_PT='"$(FUZZ_ELF_PT)"' \
	    -fsanitize=fuzzer $(FUZZ_SAN) -o $(FUZZ_B)/fuzz_elf.tmp$$$$ \
	    tests/fuzz/fuzz_elf.c $(FUZZ_ELF_OBJ) $(LIBS) && \
	    mv -f $(FUZZ_B)/fuzz_elf.tmp$$$$ $(FUZZ_B)/fuzz_elf
	@mkdir -p $(FUZZ_B)/seeds-elf $(FUZZ_B)/elf-walk
	$(BENCH_B)/ixgen -n 5000 -t 1 -s 1 -p $(FUZZ_B)/elf-walk/walk \
	    $(FUZZ_ELF_PROG) $(FUZZ_B)/elf-walk/walk.hwtrace && \
	    rm -f $(FUZZ_B)/elf-walk/walk.hwtrace
	for p in $(FUZZ_ELF_SEEDS); do \
	    cp -f $(B)/progs/$$p $(FUZZ_B)/seeds-elf/$$p.seed || exit 1; done
	@# Compressed DWARF: zlib (ELF compression header), zstd when this
	@# objcopy has it, and the old .zdebug_* of --compress-debug-sections=zlib-gnu.
	for z in zlib zstd zlib-gnu; do \
	    objcopy --compress-debug-sections=$$z $(FUZZ_ELF_PROG) \
	        $(FUZZ_B)/seeds-elf/calls-$$z.seed 2>/dev/null || \
	    echo "fuzz-elf: no $$z seed (objcopy cannot)"; done

fuzz-elf: deps fuzz-elf-build
	@mkdir -p $(FUZZ_B)/corpus-elf $(FUZZ_B)/artifacts
	$(FUZZ_ENV) $(FUZZ_B)/fuzz_elf -max_total_time=$(FUZZ_SECONDS) \
	    -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 \
	    -max_len=1048576 -print_final_stats=1 \
	    -artifact_prefix=$(FUZZ_B)/artifacts/elf- $(FUZZ_FLAGS) \
	    $(FUZZ_B)/corpus-elf $(FUZZ_B)/seeds-elf tests/fuzz/corpus-elf
