build2/obj/kernel/vgconv.o: kernel/vgconv.c include/hwtrace.h \
 kernel/hwtr_vgevents.h kernel/vgconv.h
include/hwtrace.h:
kernel/hwtr_vgevents.h:
kernel/vgconv.h:
