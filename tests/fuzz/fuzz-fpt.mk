# fuzz-fpt: fpt, the indexer's own Intel PT decoder, against libipt's
# block decoder on mutated traces over the calls fixture
# (tests/fuzz/fuzz_fpt.c), and fpt's run API against its fpt_next().
# Seeded with ixgen walks over the same program made here
# (build-fuzz/seeds-fpt/), a valgrind capture of it (runs: TNT packets of
# many bits) and with the inputs it once found fpt
# differing on (tests/fuzz/corpus-fpt/, read only; add such an input
# there as reg-<what>, with a hand-built case in tests/indexer/t_fptreg.c,
# t_fpt.c being full);
# what it finds goes to build-fuzz/corpus-fpt/.  tests/fuzz/t_fpt_seeds
# runs the walks and tests/fuzz/corpus-fpt/ in make check.  Built with
# clang like the other fuzzers, from common/ and fpt's own sources only.

# fpt_seg.c is the indexer's adapter (over segout.c), not fpt's.
FUZZ_FPT_OBJ = $(patsubst %.c,$(FUZZ_B)/obj/%.o,$(wildcard common/*.c) \
	  $(filter-out indexer/fpt_seg.c,$(wildcard indexer/fpt*.c)))
FUZZ_FPT_PROG = $(abspath $(B))/progs/calls

.PHONY: fuzz-fpt fuzz-fpt-build
fuzz-fpt-build: $(PROGS_BIN) $(BENCH_B)/ixgen $(B)/hwtrace $(VG_READY)
	@$(MAKE) --no-print-directory B=$(FUZZ_B) CC=clang OPT="-O1 -g" \
	    SAN="-fsanitize=fuzzer-no-link $(FUZZ_SAN)" $(FUZZ_FPT_OBJ)
	clang -std=c11 -D_GNU_SOURCE -O1 -g $(WARN) -Iinclude -Icommon \
	    -Iformat -Iindexer -DFUZZ_FPT_PROG='"$(FUZZ_FPT_PROG)"' \
	    -fsanitize=fuzzer $(FUZZ_SAN) -o $(FUZZ_B)/fuzz_fpt.tmp$$$$ \
	    tests/fuzz/fuzz_fpt.c $(FUZZ_FPT_OBJ) -lipt -lZydis -lm && \
	    mv -f $(FUZZ_B)/fuzz_fpt.tmp$$$$ $(FUZZ_B)/fuzz_fpt
	@mkdir -p $(FUZZ_B)/seeds-fpt
	for s in 1 2 3 4; do \
	    $(BENCH_B)/ixgen -n 3000 -t 1 -s $$s -p $(FUZZ_B)/seeds-fpt/walk$$s \
	        $(FUZZ_FPT_PROG) $(FUZZ_B)/seeds-fpt/walk$$s.hwtrace && \
	    rm -f $(FUZZ_B)/seeds-fpt/walk$$s.hwtrace || exit 1; \
	done
	@# A genuine trace of the fixture, TNT-rich, for fpt's run API.
	@v=$(FUZZ_B)/seeds-fpt/vg; rm -f $$v.hwtrace $$v.part; \
	if valgrind --version > /dev/null 2>&1 && \
	    $(B)/hwtrace capture --source valgrind -o $$v.hwtrace -- \
	        $(FUZZ_FPT_PROG) > /dev/null 2>&1 && \
	    tar -xOf $$v.hwtrace streams/0/0000000000000000.chunk > $$v.part; \
	then mv -f $$v.part $(FUZZ_B)/seeds-fpt/vg-calls; \
	else echo "fuzz-fpt: no valgrind seed (no valgrind, or its" \
	    "capture failed)"; fi; rm -f $$v.hwtrace $$v.part

fuzz-fpt: deps fuzz-fpt-build
	@mkdir -p $(FUZZ_B)/corpus-fpt $(FUZZ_B)/artifacts
	$(FUZZ_ENV) $(FUZZ_B)/fuzz_fpt -max_total_time=$(FUZZ_SECONDS) \
	    -timeout=30 -rss_limit_mb=2048 -malloc_limit_mb=2048 \
	    -max_len=65536 -print_final_stats=1 \
	    -artifact_prefix=$(FUZZ_B)/artifacts/fpt- $(FUZZ_FLAGS) \
	    $(FUZZ_B)/corpus-fpt $(FUZZ_B)/seeds-fpt tests/fuzz/corpus-fpt

# Its timeout is 30 s, not the other targets' 10: code that jumps to
# itself without trace makes libipt's block decoder open, map and unmap
# its file again for most of the 300,000 instructions both decoders stop
# at (libipt's image of files, pt_image_add_file(), which fpt's block
# boundaries follow; its section cache would keep the file mapped and
# end blocks elsewhere), 10.8 s of one such input under the sanitizers,
# most of it in those system calls; past 10 s on a busy machine.
#
# Part of `make fuzz` (tests/fuzz/fuzz.mk).  Each difference it found is
# an input in tests/fuzz/corpus-fpt/ (reg-*) that make check replays,
# most also a hand-built case in tests/indexer/t_fpt.c or t_fptreg.c; the
# libipt bugs the comparison skips are in tests/fuzz/fpt_one.h.  A run
# with another seed: make fuzz-fpt FUZZ_FLAGS=-seed=N; one that compares
# the errors' offsets too (t_fpt_seeds does): FUZZ_FPT_OFFSETS=1 make
# fuzz-fpt.
