# Benchmarks: `make bench` (see docs/PERFORMANCE.md).
#
# Every tests/bench/bench_*.sh is run in turn by tests/bench/run.sh, which
# prints one table of side-by-side ratios.  A benchmark needing its own
# program adds it to BENCH_PROGS in a tests/bench/bench-<name>.mk of its
# own (picked up below) with a rule building it into $(B)/bench/; the
# programs are built by `make` too, so that they keep compiling.

BENCH_B	= $(B)/bench
BENCH_PROGS += $(BENCH_B)/ptgen

-include $(filter-out tests/bench/bench.mk,$(wildcard tests/bench/*.mk))

# Building the benchmark programs is part of `make`.
tests: $(BENCH_PROGS)

$(BENCH_B)/ptgen: tests/bench/ptgen.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(LDFLAGS_ALL) -lipt

# BENCH_RUNS: runs per measurement (best of); BENCH_ONLY: a name pattern.
BENCH_RUNS ?= 3
BENCH_ONLY ?=
bench: deps
	@$(MAKE) --no-print-directory all
	@BENCH_RUNS=$(BENCH_RUNS) BENCH_ONLY="$(BENCH_ONLY)" \
	    tests/bench/run.sh $(B)
