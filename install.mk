# install.mk: `make install` and `make uninstall` (included by the Makefile).
#
#   make install [PREFIX=/usr/local] [DESTDIR=]
#
# PREFIX/bin/hwtrace                       the command
# PREFIX/lib/hwtrace/valgrind-lib/         the Valgrind tool (GPL, its own
#                                          program) and links to Debian's
#                                          valgrind files it needs
# PREFIX/lib/hwtrace/hwtrace_sqlite.so     the SQLite extension (.load it)
# PREFIX/lib/libhwtrace.a                  the library (static only)
# PREFIX/include/hwtrace.h                 its header
# PREFIX/lib/pkgconfig/hwtrace.pc          pkg-config --cflags --libs hwtrace
#                                          (the library is static: Libs
#                                          names its dependencies too)
# PREFIX/share/man/man1, man5              the manual
#
# An installed hwtrace finds its Valgrind tool as ../lib/hwtrace/valgrind-lib
# from the directory of its own executable (/proc/self/exe), so the whole
# tree can be moved (DESTDIR, a relocated prefix).  Install installs what
# the build made and builds nothing itself: run make first.

PREFIX	?= /usr/local
DESTDIR	?=
BINDIR	= $(PREFIX)/bin
LIBDIR	= $(PREFIX)/lib
PKGLIBDIR = $(LIBDIR)/hwtrace
INCDIR	= $(PREFIX)/include
MANDIR	= $(PREFIX)/share/man
PCDIR	= $(LIBDIR)/pkgconfig

INSTALL_MAN1 = $(wildcard docs/*.1)
INSTALL_MAN5 = $(wildcard docs/*.5)

.PHONY: install uninstall
install: $(B)/hwtrace $(B)/libhwtrace.a $(B)/hwtrace_sqlite.so valgrind-tool
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(PKGLIBDIR)/valgrind-lib \
	    $(DESTDIR)$(INCDIR) $(DESTDIR)$(PCDIR) $(DESTDIR)$(MANDIR)/man1 \
	    $(DESTDIR)$(MANDIR)/man5
	install -m 755 $(B)/hwtrace $(DESTDIR)$(BINDIR)/hwtrace
	install -m 644 $(B)/libhwtrace.a $(DESTDIR)$(LIBDIR)/libhwtrace.a
	install -m 755 $(B)/hwtrace_sqlite.so $(DESTDIR)$(PKGLIBDIR)/hwtrace_sqlite.so
	install -m 644 include/hwtrace.h $(DESTDIR)$(INCDIR)/hwtrace.h
	install -m 644 $(INSTALL_MAN1) $(DESTDIR)$(MANDIR)/man1/
	install -m 644 $(INSTALL_MAN5) $(DESTDIR)$(MANDIR)/man5/
	@# The tool and its version stamp; Debian's files stay links.
	install -m 755 $(VG_TOOL) $(DESTDIR)$(PKGLIBDIR)/valgrind-lib/
	install -m 644 $(B)/valgrind-lib/hwtrace-built-for \
	    $(DESTDIR)$(PKGLIBDIR)/valgrind-lib/
	cd $(B)/valgrind-lib && for f in *; do \
	    [ -L "$$f" ] || continue; \
	    ln -sfn "$$(readlink "$$f")" \
	        "$(DESTDIR)$(PKGLIBDIR)/valgrind-lib/$$f" || exit 1; done
	@{ echo "prefix=$(PREFIX)"; \
	   echo "libdir=\$${prefix}/lib"; \
	   echo "includedir=\$${prefix}/include"; \
	   echo ""; \
	   echo "Name: hwtrace"; \
	   echo "Description: capture, archive, index and query program execution traces"; \
	   echo "Version: $$(sed -n 's/^#define HWTRACE_VERSION[^"]*"\(.*\)"/\1/p' include/hwtrace.h)"; \
	   echo "Cflags: -I\$${includedir}"; \
	   echo "Libs: -L\$${libdir} -lhwtrace $(LIBS)"; } > $(DESTDIR)$(PCDIR)/hwtrace.pc.tmp && \
	    mv $(DESTDIR)$(PCDIR)/hwtrace.pc.tmp $(DESTDIR)$(PCDIR)/hwtrace.pc
	@echo "hwtrace installed under $(DESTDIR)$(PREFIX)"

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/hwtrace $(DESTDIR)$(LIBDIR)/libhwtrace.a \
	    $(DESTDIR)$(INCDIR)/hwtrace.h $(DESTDIR)$(PCDIR)/hwtrace.pc \
	    $(DESTDIR)$(PKGLIBDIR)/hwtrace_sqlite.so
	rm -rf $(DESTDIR)$(PKGLIBDIR)/valgrind-lib
	-rmdir $(DESTDIR)$(PKGLIBDIR) 2>/dev/null
	for f in $(notdir $(INSTALL_MAN1)); do \
	    rm -f $(DESTDIR)$(MANDIR)/man1/$$f; done
	for f in $(notdir $(INSTALL_MAN5)); do \
	    rm -f $(DESTDIR)$(MANDIR)/man5/$$f; done
