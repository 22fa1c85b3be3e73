# The Valgrind source's benchmark helper (see bench_valgrind.sh).
BENCH_PROGS += $(BENCH_B)/vgconv

$(BENCH_B)/vgconv: tests/bench/vgconv.c $(B)/libhwtrace.a kernel/vgconv.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(B)/libhwtrace.a $(LDFLAGS_ALL) $(LIBS)
