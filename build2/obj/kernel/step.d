build2/obj/kernel/step.o: kernel/step.c common/hwtr_common.h \
 include/hwtrace.h kernel/kernel.h kernel/x86insn.h
common/hwtr_common.h:
include/hwtrace.h:
kernel/kernel.h:
kernel/x86insn.h:
