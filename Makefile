# hwtrace top-level Makefile.
#
#   make            build build/hwtrace, build/libhwtrace.a and the tests
#   make demo       install missing packages, build, run the demo
#   make check      install missing packages, build, run the Kyua suite
#   make sanitize   the suite under AddressSanitizer + UBSan (build-asan/)
#   make fuzz       run the libFuzzer targets (archive reader, perf.data, importers,
#                   perf maps and jitdump, fpt against libipt, hostile ELF
#                   images, SQL over the virtual tables against SQLite,
#                   damaged databases through the verbs)
#   make bench      benchmarks (see docs/PERFORMANCE.md)
#   make lint       mandoc -Tlint on every man page
#   make layers     the module arrows hold (includes and calls) and no
#                   module's objects call each other in a circle; make
#                   runs it too, when an object or a header changed
#   make conform    the conformance matrix against callgrind, gdb, nm, addr2line
#   make install    install under PREFIX (/usr/local), DESTDIR; make uninstall
#
# Every module's .c files are picked up by wildcard; a test directory
# tests/<module>/ builds each t_*.c into an atf-c program and installs
# each t_*.sh as an atf-sh program.

CC	?= cc
B	?= build
SAN	?=
OPT	?= -O2 -g
WARN	= -Wall -Wextra -Werror -Wno-unused-parameter -Wshadow -Wformat=2 \
	  -Wmissing-prototypes -Wstrict-prototypes
CFLAGS_BASE = -std=c11 -D_GNU_SOURCE $(OPT) $(WARN) \
	  -fno-strict-aliasing -pthread $(SAN) $(CFLAGS)
LIBS	= -larchive -lzstd -lz -ljansson -lipt -lopencsd_c_api -lopencsd \
	  -lsqlite3 -lpq -ldw -lelf -lZydis -liberty -ldebuginfod -llzma -lpthread -lm
LDFLAGS_ALL = -pthread $(SAN) $(LDFLAGS)
# Link-time optimisation of the indexer into hwtrace (gcc, no sanitizer):
# the decoder's per-block calls cross files (fpt_next, fpt_time and
# fpt_offset from fpt_seg.c, the block loop in segfast.c), and only LTO
# inlines them (index -j 1 on the gzip capture: about 17% less decode
# CPU).  The objects are fat: the tests, tools and libhwtrace.a's users
# link their plain code.  LTO= turns it off.
LTO	?= $(if $(SAN),,$(if $(filter cc gcc,$(notdir $(CC))),\
	    -flto=auto -ffat-lto-objects))
LTO_indexer = $(LTO)
LTO_LINK = $(if $(strip $(LTO)),$(LTO) $(OPT))

MODULES	= common format kernel capture indexer query

# The arrows between modules: the modules each one may use.  A module is
# compiled with include/ (the public hwtrace.h) and the folders of these
# modules only, so an #include of another module's header fails to build;
# `make layers` (run by `make` and `make check`) also holds every object's
# calls to these arrows, and keeps a module's private headers its own: a
# module's interface is its hwtr_*.h and the headers IFACE_<module> names
# (tests/layers.sh).  README.md, "Architecture", draws them.
USES_common =
USES_format = common
USES_kernel = common format
USES_capture = common format kernel
USES_indexer = common format
USES_query = common format indexer
USES_cli = common format capture indexer query
IFACE_format = perf_record.h
MODULE_INC = -Iinclude $(addprefix -I,$(USES_$(1)))
# Tests, benchmarks, the fuzzer and the analyzer see every module.
CFLAGS_ALL = $(CFLAGS_BASE) -Iinclude $(addprefix -I,$(MODULES))
LIB_SRC	= $(foreach m,$(MODULES),$(wildcard $(m)/*.c))
LIB_OBJ	= $(LIB_SRC:%.c=$(B)/obj/%.o)
CLI_SRC	= $(wildcard cli/*.c)
CLI_OBJ	= $(CLI_SRC:%.c=$(B)/obj/%.o)

TEST_DIRS = $(sort $(dir $(wildcard tests/*/Kyuafile)))
TEST_C	= $(wildcard tests/*/t_*.c)
TEST_SH	= $(wildcard tests/*/t_*.sh)
TEST_C_BIN = $(TEST_C:tests/%.c=$(B)/tests/%)
TEST_SH_BIN = $(TEST_SH:tests/%.sh=$(B)/tests/%)
TEST_KYUA = $(B)/tests/Kyuafile $(TEST_DIRS:tests/%=$(B)/tests/%Kyuafile)

# Fixture programs (tests/progs/*.c, *.cc) are built by their own makefile.
-include tests/progs/progs.mk
# `all` stays the default goal whatever the *.mk files below define first.
.DEFAULT_GOAL := all

# Modules may add targets (the Valgrind tool, benchmarks) in a *.mk file.
-include $(wildcard kernel/*/build.mk) $(wildcard tests/bench/bench.mk) \
	$(wildcard tests/fuzz/fuzz.mk)

.PHONY: all deps demo check sanitize fuzz bench lint analyze clean layers conform
all: $(B)/hwtrace $(B)/libhwtrace.a tests $(B)/layers.ok

$(B)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_BASE) $(LTO_$(firstword $(subst /, ,$*))) \
	    $(call MODULE_INC,$(firstword $(subst /, ,$*))) \
	    -MMD -MP -c -o $@ $<

# hwtrace report's script, embedded into the binary (query/q_report_asset.c,
# .incbin): d3-flame-graph and the d3 modules it needs, installed at build
# time by npm into $(B)/report (versions pinned by query/report/
# package-lock.json; no network when a report is written), their licences,
# then the page's own code.
REPORT_LIBS = internmap d3-array d3-color d3-interpolate d3-format d3-time \
	d3-time-format d3-scale d3-selection d3-dispatch d3-timer d3-ease \
	d3-transition d3-hierarchy
$(B)/report/node_modules/.installed: query/report/package.json \
    query/report/package-lock.json
	@command -v npm >/dev/null 2>&1 || { echo "make: hwtrace report's" \
	    "page needs npm to install d3-flame-graph: run ./install-deps.sh" >&2; \
	    exit 1; }
	@mkdir -p $(B)/report
	cp query/report/package.json query/report/package-lock.json $(B)/report/
	cd $(B)/report && npm ci --no-audit --no-fund --ignore-scripts \
	    --loglevel=error
	touch $@
$(B)/report/report.js: $(B)/report/node_modules/.installed \
    query/report/report.js
	@{ echo "/*"; echo " * hwtrace report: the libraries inlined below," \
	    "with their licences."; \
	  for m in $(REPORT_LIBS) d3-flame-graph; do \
	    echo " *"; echo " * $$m (npm), its LICENSE:"; \
	    sed 's/\*\//* \//g; s/^/ * /' $(B)/report/node_modules/$$m/LICENSE; \
	  done; echo " */"; \
	  for m in $(REPORT_LIBS); do \
	    cat $(B)/report/node_modules/$$m/dist/$$m.min.js; echo; done; \
	  cat $(B)/report/node_modules/d3-flame-graph/dist/d3-flamegraph.umd.min.js; \
	  echo; cat query/report/report.js; } > $@.tmp && mv $@.tmp $@
$(B)/obj/query/q_report_asset.o: query/q_report_asset.c $(B)/report/report.js
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_BASE) $(call MODULE_INC,query) \
	    -DHWTR_REPORT_JS='"$(abspath $(B))/report/report.js"' \
	    -MMD -MP -c -o $@ $<

$(B)/libhwtrace.a: $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(B)/hwtrace: $(CLI_OBJ) $(B)/libhwtrace.a
	$(CC) $(LDFLAGS_ALL) $(LTO_LINK) -o $@ $(CLI_OBJ) $(B)/libhwtrace.a \
	    $(LIBS)

# --- tests ---------------------------------------------------------------
.PHONY: tests
tests: $(B)/hwtrace $(TEST_C_BIN) $(TEST_SH_BIN) $(TEST_KYUA) $(B)/tests/env.sh \
	$(PROGS_BIN)

$(B)/tests/env.sh: Makefile
	@mkdir -p $(dir $@)
	@{ echo "# generated by make: where the build and the sources are"; \
	   echo "HWTRACE=$(abspath $(B))/hwtrace"; \
	   echo "HWTRACE_BUILD=$(abspath $(B))"; \
	   echo "HWTRACE_SRC=$(abspath .)"; \
	   echo "HWTRACE_PROGS=$(abspath $(B))/progs"; \
	   echo "HWTRACE_CORPUS=$(abspath ..)/shared/corpus"; } > $@

$(B)/tests/%: tests/%.c $(B)/libhwtrace.a tests/common/hwtr_test.h \
    $(wildcard tests/lib/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Itests/common -DHWTR_TEST_BUILD='"$(abspath $(B))"' \
	    -DHWTR_TEST_SRC='"$(abspath .)"' -MMD -MP -MF $@.d -o $@ $< \
	    $(B)/libhwtrace.a $(LDFLAGS_ALL) -latf-c $(LIBS)

$(B)/tests/%: tests/%.sh
	@mkdir -p $(dir $@)
	cp $< $@ && chmod +x $@

$(B)/tests/%Kyuafile: tests/%Kyuafile
	@mkdir -p $(dir $@)
	cp $< $@

$(B)/tests/Kyuafile: tests/Kyuafile
	@mkdir -p $(dir $@)
	cp $< $@

deps:
	@./install-deps.sh

# The module arrows (USES_* and IFACE_* above) hold for includes and for
# calls, and no module's objects call each other in a circle.  `make`
# checks them again only when an object, a header or the check changed
# (the stamp $(B)/layers.ok); `make layers` always does.
# LAYERS_ORDER=1 make layers prints each module's files in their order,
# as README draws them.
comma	:= ,
empty	:=
space	:= $(empty) $(empty)
# Modules whose circles are told, not refused (none: every module's
# files call downward only).
LAYERS_CIRCLE_EXEMPT =
LAYERS_RUN = LAYERS_CIRCLE_EXEMPT="$(LAYERS_CIRCLE_EXEMPT)" \
	    sh tests/layers.sh $(B) "$(CC)" $(foreach m,$(MODULES) cli,\
	    $(m):$(subst $(space),$(comma),$(strip $(USES_$(m))))$(if \
	    $(IFACE_$(m)),:$(subst $(space),$(comma),$(strip $(IFACE_$(m))))))
layers: $(LIB_OBJ) $(CLI_OBJ)
	@$(LAYERS_RUN)
$(B)/layers.ok: $(LIB_OBJ) $(CLI_OBJ) tests/layers.sh Makefile \
    $(wildcard include/*.h $(addsuffix /*.h,$(MODULES) cli))
	@$(LAYERS_RUN) >/dev/null && touch $@

# Runs the whole suite; fails on any failed or broken case.  Cases run
# CHECK_JOBS at a time (one per CPU by default): each has its own work
# directory, and most wait on child processes more than they compute.
CHECK_JOBS ?= $(shell nproc 2>/dev/null || echo 1)
check: deps
	@$(MAKE) --no-print-directory all layers
	@rm -f $(B)/kyua.db
	cd $(B)/tests && kyua -v parallelism=$(CHECK_JOBS) test -r ../kyua.db; \
	    rc=$$?; \
	    if [ $$rc -ne 0 ]; then kyua report -r ../kyua.db --verbose \
	        --results-filter=broken,failed; fi; exit $$rc

# The conformance matrix: fixtures built per cell, hwtrace checked against
# callgrind, gdb, nm, addr2line and counts known by construction
# (docs/CONFORMANCE.md; its fast slice runs in make check).
conform: all
	@sh tests/conform/conform.sh $(B)

demo: deps
	@$(MAKE) --no-print-directory all
	@tests/demo.sh $(B)

# Sanitizer run-time options: leaks are errors (LSan), atf-c's own
# never-freed test-case list excepted (tests/lsan.supp); nothing may be
# printed on a clean run, since Kyua breaks a test program whose case list
# writes to stderr; every report exits 86, which no test expects.
SAN_ENV	= ASAN_OPTIONS=detect_leaks=1:exitcode=86:detect_stack_use_after_return=1:strict_string_checks=1 \
	  LSAN_OPTIONS=suppressions=$(abspath tests/lsan.supp):print_suppressions=0 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:exitcode=86

# Warnings are not errors in this build: gcc's -Wformat-truncation and
# friends depend on the optimization level and on the sanitizers' own
# code, and `make` and the clang build already hold the sources to -Werror.
sanitize: deps
	@$(SAN_ENV) $(MAKE) --no-print-directory B=build-asan OPT="-O1 -g" \
	    CFLAGS="$(CFLAGS) -Wno-error" \
	    SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" check

# The clang static analyzer over every C source of the library, the CLI,
# the tests and the tools (not the fixture programs: tests/conform's
# crash on purpose); any report fails.
ANALYZE_SRC = $(LIB_SRC) $(CLI_SRC) $(TEST_C) \
	  $(filter-out tests/progs/% tests/conform/%,$(wildcard tests/*/*.c))
analyze:
	@rc=0; for f in $(sort $(ANALYZE_SRC)); do \
	    clang --analyze -Xclang -analyzer-werror \
	        -Xclang -analyzer-output=text -std=c11 -D_GNU_SOURCE \
	        -Iinclude $(addprefix -I,$(MODULES)) -Itests/common -DHWTR_TEST_BUILD='"."' \
	        -DHWTR_TEST_SRC='"."' $(CFLAGS) -o /dev/null "$$f" || rc=1; \
	done; [ $$rc -eq 0 ] && echo "clang --analyze: clean"; exit $$rc

lint:
	@for f in docs/*.[0-9]; do mandoc -Tlint -W warning "$$f" || exit 1; done; echo "mandoc -Tlint: clean"

clean:
	rm -rf build build-asan build-clang build-fuzz

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(TEST_C_BIN:=.d)

# The indexer's SQLite extension (after the default goal on purpose).
-include indexer/indexer.mk
# make install, make uninstall (PREFIX, DESTDIR).
include install.mk
