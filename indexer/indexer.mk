# indexer/indexer.mk: the loadable SQLite extension that expands the
# execution order of a hwtrace database for plain sqlite3 (hwtrace-db(5)).
# Built without sanitizers: it is loaded into programs that have none.

# It reads the calls column store too (colstore.c's codec, zstd through
# format/zbuf.c) and the lines store (linestore.c), and searches with
# common/'s hwtr_bsearch.
HWTR_SQLITE_SO_SRC = indexer/exec_vtab.c indexer/calls_vtab.c \
	indexer/calls_vtab_write.c indexer/calls_vtab_page.c \
	indexer/colstore.c indexer/linestore.c format/zbuf.c common/common.c
$(B)/hwtrace_sqlite.so: $(HWTR_SQLITE_SO_SRC) indexer/hwtr_ix_sqlite.h \
    indexer/calls_vtab_int.h indexer/colstore.h indexer/linestore.h \
    indexer/varint.h \
    format/hwtr_zbuf.h \
    common/hwtr_common.h include/hwtrace.h
	@mkdir -p $(dir $@)
	$(CC) $(filter-out $(SAN),$(CFLAGS_BASE)) $(call MODULE_INC,indexer) \
	    -Iindexer -DHWTR_SQLITE_EXTENSION \
	    -fPIC -shared -o $@ $(HWTR_SQLITE_SO_SRC) -lzstd -lm

all: $(B)/hwtrace_sqlite.so
tests: $(B)/hwtrace_sqlite.so

# The conformance tests share a header of helpers.
$(B)/tests/indexer/t_ptt: tests/indexer/ptt.h
