# The hwtrace Valgrind tool (GPL-2.0-or-later, see kernel/vgtool/LICENSE):
# a separate program, built from Debian's valgrind kit, that hwtrace runs
# as `valgrind.bin --tool=hwtrace` with VALGRIND_LIB=$(B)/valgrind-lib.
# It has its own flags: Valgrind's headers do not build under the
# project's -Werror set, and the tool is linked the way Valgrind links its
# tools (static, no libc, text at 0x58000000).

VG_INC	= /usr/include/valgrind
VG_LIBDIR = /usr/lib/x86_64-linux-gnu/valgrind
VG_PKGLIB = /usr/libexec/valgrind
VG_TOOL	= $(B)/valgrind-lib/hwtrace-amd64-linux
# What a rule that runs `hwtrace capture --source valgrind` needs built:
# the tool and the version it was built for, which hwtrace checks.
VG_READY = $(VG_TOOL) $(B)/valgrind-lib/hwtrace-built-for
VG_CFLAGS = -O2 -g -m64 -fno-pie -fno-stack-protector -fno-builtin \
	-fno-strict-aliasing -fomit-frame-pointer -Wall -Wno-unused-parameter \
	-DVGA_amd64=1 -DVGO_linux=1 -DVGP_amd64_linux=1 \
	-DVGPV_amd64_linux_vanilla=1 -I$(VG_INC) -Ikernel
VG_LDFLAGS = -m64 -static -nodefaultlibs -nostartfiles -no-pie -u _start \
	-Wl,--build-id=none -Wl,-Ttext-segment=0x58000000
VG_LIBS	= $(VG_LIBDIR)/libcoregrind-amd64-linux.a \
	$(VG_LIBDIR)/libvex-amd64-linux.a $(VG_LIBDIR)/libgcc-sup-amd64-linux.a -lgcc
# The tool is always built with gcc: Valgrind's kit is built with it.
VG_CC	= gcc

.PHONY: valgrind-tool
all: valgrind-tool
tests: valgrind-tool
valgrind-tool: $(VG_TOOL) $(B)/valgrind-lib/hwtrace-built-for

$(B)/obj/kernel/vgtool/%.o: kernel/vgtool/%.c kernel/hwtr_vgevents.h
	@test -f $(VG_LIBDIR)/libcoregrind-amd64-linux.a || { echo \
	    "make: the Valgrind tool needs Debian's valgrind package ($(VG_LIBDIR)/libcoregrind-amd64-linux.a is missing): run 'make deps'" >&2; exit 1; }
	@mkdir -p $(dir $@)
	$(VG_CC) $(VG_CFLAGS) -c -o $@ $<

$(VG_TOOL): $(B)/obj/kernel/vgtool/hw_main.o
	@mkdir -p $(dir $@)
	$(VG_CC) $(VG_LDFLAGS) -o $@ $^ $(VG_LIBS)
	@# The rest of the private VALGRIND_LIB: Debian's files, linked.
	@for f in vgpreload_core-amd64-linux.so default.supp \
	    getoff-amd64-linux; do \
	    ln -sf $(VG_PKGLIB)/$$f $(B)/valgrind-lib/$$f; done
	@for f in $(VG_PKGLIB)/64bit-*.xml $(VG_PKGLIB)/amd64-*.xml; do \
	    ln -sf $$f $(B)/valgrind-lib/; done

# What the tool was built for: the valgrind version hwtrace checks at run time.
$(B)/valgrind-lib/hwtrace-built-for: $(VG_TOOL)
	@valgrind.bin --version > $@.tmp && mv $@.tmp $@
