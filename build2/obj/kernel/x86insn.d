build2/obj/kernel/x86insn.o: kernel/x86insn.c common/hwtr_common.h \
 include/hwtrace.h kernel/x86insn.h
common/hwtr_common.h:
include/hwtrace.h:
kernel/x86insn.h:
