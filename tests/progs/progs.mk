# Fixture programs for the trace sources' ground-truth tests (see README).
# Included by the top Makefile; builds everything into $(B)/progs/ and the
# ground-truth checker into $(B)/tests/capture/ptcheck.
#
# Most fixtures are static (no ld.so start-up: single-stepping runs at 17k-50k
# instructions/s, and a dynamic program's start-up alone is ~100k); dlopen and
# dynpie are the dynamic PIEs.  -O2 so that jump tables and tail calls exist.

# This file is included before the top Makefile's first target: keep "all"
# the default goal.
.DEFAULT_GOAL := all

PROGS_STATIC = loop recurse calls tailcall switch setjmp signal timer threads \
	hello forkexec vfork rep syscalls segv exit3 demo spin manyfork \
	threxec midfault measure inline cancel perfline deepcrash manycalls cpuswitch \
	chase forkexit selfmod sigdisp wakeup
PROGS_DYNAMIC = dlopen dynpie perfline-pie
PROGS_LAZY = plt noplt plt-stripped plt-nocfi tailplt
PROGS_CXX = except longname
PROGS_LIBS = libdlfix.so
PROGS_LATE = late_a late_b late_c late_d late_e
PROGS_ASM = bigdata longblock

PROGS_BIN = $(addprefix $(B)/progs/,$(PROGS_STATIC) $(PROGS_DYNAMIC) \
	$(PROGS_LAZY) $(PROGS_CXX) $(PROGS_LIBS) $(PROGS_LATE) $(PROGS_ASM))

CXX	?= g++
PROGS_WARN = -Wall -Wextra -Werror -Wno-unused-parameter
PROGS_CFLAGS = -std=gnu11 -D_GNU_SOURCE -O2 -g $(PROGS_WARN) -pthread
PROGS_CXXFLAGS = -std=gnu++17 -O2 -g $(PROGS_WARN)
PROGS_LDFLAGS = -Wl,--build-id=sha1 -pthread

$(addprefix $(B)/progs/,$(PROGS_STATIC)): $(B)/progs/%: tests/progs/%.c \
    tests/progs/progdir.h tests/progs/progs.mk
	@mkdir -p $(dir $@)
	$(CC) $(PROGS_CFLAGS) -static $(PROGS_LDFLAGS) -o $@ $<

$(addprefix $(B)/progs/,$(PROGS_DYNAMIC)): $(B)/progs/%: tests/progs/%.c \
    tests/progs/progdir.h tests/progs/progs.mk
	@mkdir -p $(dir $@)
	$(CC) $(PROGS_CFLAGS) -fPIE -pie $(PROGS_LDFLAGS) -o $@ $<

# Library calls through lazily bound PLT stubs, and the same through the
# GOT (-fno-plt, bound at start-up).
$(B)/progs/plt: tests/progs/plt.c tests/progs/progs.mk
	@mkdir -p $(dir $@)
	$(CC) $(PROGS_CFLAGS) -fPIE -pie $(PROGS_LDFLAGS) -Wl,-z,lazy -o $@ $<

# Tail calls, one of them through a lazily bound PLT stub.
$(B)/progs/tailplt: tests/progs/tailplt.c tests/progs/progs.mk
	@mkdir -p $(dir $@)
	$(CC) $(PROGS_CFLAGS) -fPIE -pie $(PROGS_LDFLAGS) -Wl,-z,lazy -o $@ $<

$(B)/progs/noplt: tests/progs/plt.c tests/progs/progs.mk
	@mkdir -p $(dir $@)
	$(CC) $(PROGS_CFLAGS) -fPIE -pie -fno-plt $(PROGS_LDFLAGS) -Wl,-z,now \
	    -o $@ $<

# The same stripped of its symbols (-s): functions only .eh_frame names;
# and stripped without unwind tables either: code nothing names.
$(B)/progs/plt-stripped: tests/progs/plt.c tests/progs/progs.mk
	@mkdir -p $(dir $@)
	$(CC) $(PROGS_CFLAGS) -fPIE -pie $(PROGS_LDFLAGS) -Wl,-z,lazy -s -o $@ $<

$(B)/progs/plt-nocfi: tests/progs/plt.c tests/progs/progs.mk
	@mkdir -p $(dir $@)
	$(CC) $(PROGS_CFLAGS) -fPIE -pie -fno-asynchronous-unwind-tables \
	    -fno-unwind-tables $(PROGS_LDFLAGS) -Wl,-z,lazy -s -o $@ $<

# -static-pie, not -static: with -static, crtbeginT registers .eh_frame and
# the first throw sorts every FDE of libstdc++ (4.4M instructions); a static
# PIE finds FDEs through PT_GNU_EH_FRAME's binary search table (160k in all).
$(B)/progs/except: tests/progs/except.cc tests/progs/progs.mk
	@mkdir -p $(dir $@)
	$(CXX) $(PROGS_CXXFLAGS) -fPIE -static-pie $(PROGS_LDFLAGS) -o $@ $<

# Static: the valgrind source captures it without ld.so's start-up.
$(B)/progs/longname: tests/progs/longname.cc tests/progs/progs.mk
	@mkdir -p $(dir $@)
	$(CXX) $(PROGS_CXXFLAGS) -static $(PROGS_LDFLAGS) -o $@ $<

# Libc-free, one per case of tests/progs/lateasm.S.
$(addprefix $(B)/progs/,$(PROGS_LATE)): $(B)/progs/late_%: \
    tests/progs/lateasm.S tests/progs/progs.mk
	@mkdir -p $(dir $@)
	$(CC) -DCASE_$* -nostdlib -static $(PROGS_LDFLAGS) -o $@ $<

# Libc-free, from tests/progs/NAME.S.
$(addprefix $(B)/progs/,$(PROGS_ASM)): $(B)/progs/%: tests/progs/%.S \
    tests/progs/progs.mk
	@mkdir -p $(dir $@)
	$(CC) -nostdlib -static $(PROGS_LDFLAGS) -o $@ $<

$(B)/progs/libdlfix.so: tests/progs/libdlfix.c tests/progs/progs.mk
	@mkdir -p $(dir $@)
	$(CC) $(PROGS_CFLAGS) -fPIC -shared $(PROGS_LDFLAGS) -o $@ $<

# dlopen finds the library next to itself at run time.
$(B)/progs/dlopen: $(B)/progs/libdlfix.so

# The ground-truth checker (tests/capture/ptcheck.c): a test helper, not an
# atf program; the capture tests run it on their archives.
PTCHECK = $(B)/tests/capture/ptcheck

$(PTCHECK): tests/capture/ptcheck.c $(B)/libhwtrace.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(B)/libhwtrace.a $(LDFLAGS_ALL) $(LIBS)

tests: $(PTCHECK)

# The simulated perf_event kernel (tests/kernel/fakeperf.c), preloaded into
# hwtrace by tests/capture/t_perfcap.sh; it writes PT with the project's
# encoder, built into it.
FAKEPERF = $(B)/tests/kernel/fakeperf.so

$(FAKEPERF): tests/kernel/fakeperf.c kernel/ptenc.c kernel/hwtr_kernel.h tests/progs/progs.mk
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -fPIC -shared -o $@ tests/kernel/fakeperf.c \
	    kernel/ptenc.c -ldl -lipt

tests: $(FAKEPERF)

# perfline-pie is perfline.c built as a PIE.
$(B)/progs/perfline-pie: tests/progs/perfline.c
