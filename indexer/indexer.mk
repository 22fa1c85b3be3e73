# indexer/indexer.mk: the loadable SQLite extension that expands the
# execution order of a hwtrace database for plain sqlite3 (hwtrace-db(5)).
# Built without sanitizers: it is loaded into programs that have none.

$(B)/hwtrace_sqlite.so: indexer/exec_vtab.c indexer/hwtr_ix_sqlite.h include/hwtrace.h
	@mkdir -p $(dir $@)
	$(CC) $(filter-out $(SAN),$(CFLAGS_BASE)) $(call MODULE_INC,indexer) \
	    -DHWTR_SQLITE_EXTENSION \
	    -fPIC -shared -o $@ indexer/exec_vtab.c

all: $(B)/hwtrace_sqlite.so
tests: $(B)/hwtrace_sqlite.so

# The conformance tests share a header of helpers.
$(B)/tests/indexer/t_ptt: tests/indexer/ptt.h
