build2/obj/kernel/src.o: kernel/src.c common/hwtr_common.h \
 include/hwtrace.h kernel/kernel.h
common/hwtr_common.h:
include/hwtrace.h:
kernel/kernel.h:
