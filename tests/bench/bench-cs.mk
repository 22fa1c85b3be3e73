# The CoreSight indexing benchmark (tests/bench/bench_cs.sh): csbare is the
# bare OpenCSD decode loop `hwtrace index` is compared with.

BENCH_PROGS += $(BENCH_B)/csbare

$(BENCH_B)/csbare: tests/bench/csbare.c $(B)/libhwtrace.a indexer/hwtr_ix.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(B)/libhwtrace.a $(LDFLAGS_ALL) $(LIBS)
