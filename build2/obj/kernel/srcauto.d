build2/obj/kernel/srcauto.o: kernel/srcauto.c common/hwtr_common.h \
 include/hwtrace.h kernel/kernel.h
common/hwtr_common.h:
include/hwtrace.h:
kernel/kernel.h:
