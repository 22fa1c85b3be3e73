# The step source's benchmark helper (see bench_step.sh).
BENCH_PROGS += $(BENCH_B)/stepbare

$(BENCH_B)/stepbare: tests/bench/stepbare.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(LDFLAGS_ALL)
