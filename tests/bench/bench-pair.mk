# pairspin: what a second busy CPU costs the first on this machine.

BENCH_PROGS += $(BENCH_B)/pairspin

$(BENCH_B)/pairspin: tests/bench/pairspin.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(LDFLAGS_ALL)
