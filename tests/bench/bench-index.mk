# The indexer's benchmark programs (tests/bench/bench_index.sh):
# ixgen makes archives whose PT decodes over a real binary, ixbare is the
# bare libipt block-decode loop the indexer is compared with.

BENCH_PROGS += $(BENCH_B)/ixgen $(BENCH_B)/ixbare

$(BENCH_B)/ixgen: tests/bench/ixgen.c $(B)/libhwtrace.a indexer/hwtr_ix.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(B)/libhwtrace.a $(LDFLAGS_ALL) $(LIBS)

$(BENCH_B)/ixbare: tests/bench/ixbare.c $(B)/libhwtrace.a indexer/hwtr_ix.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(B)/libhwtrace.a $(LDFLAGS_ALL) $(LIBS)
