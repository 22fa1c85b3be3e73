# fptbare: fpt (the indexer's own Intel PT decoder) alone against libipt's
# block decoder alone on the same archive, in CPU time (issue 29).

BENCH_PROGS += $(BENCH_B)/fptbare

$(BENCH_B)/fptbare: tests/bench/fptbare.c $(B)/libhwtrace.a \
    tests/lib/hwtr_test_fpt.h indexer/fpt.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(LTO_LINK) -o $@ $< $(B)/libhwtrace.a $(LDFLAGS_ALL) \
	    $(LIBS)

# The differential test shares its helpers with fptbare.
$(B)/tests/indexer/t_fpt: tests/lib/hwtr_test_fpt.h indexer/fpt.h
