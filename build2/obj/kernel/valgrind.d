build2/obj/kernel/valgrind.o: kernel/valgrind.c common/hwtr_common.h \
 include/hwtrace.h kernel/hwtr_vgevents.h kernel/kernel.h kernel/vgconv.h
common/hwtr_common.h:
include/hwtrace.h:
kernel/hwtr_vgevents.h:
kernel/kernel.h:
kernel/vgconv.h:
