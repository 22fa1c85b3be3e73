# The archive benchmark's program (bench_archive.sh).
BENCH_PROGS += $(BENCH_B)/bench_archive

$(BENCH_B)/bench_archive: tests/bench/bench_archive.c $(B)/libhwtrace.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(B)/libhwtrace.a $(LDFLAGS_ALL) $(LIBS)
