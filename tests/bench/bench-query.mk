# The query benchmark's and tests' database maker (tests/query/mkdb.c):
# hand-written fixtures for tests/query, a synthetic >= 10M-block history
# for tests/bench/bench_query.sh.
BENCH_PROGS += $(BENCH_B)/qmkdb

# Linked with libhwtrace: the schema's calls table needs its module.
$(BENCH_B)/qmkdb: tests/query/mkdb.c indexer/schema.sql.h include/hwtrace.h \
    indexer/linestore.h \
    $(B)/libhwtrace.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ tests/query/mkdb.c $(B)/libhwtrace.a \
	    $(LDFLAGS_ALL) $(LIBS)
