build2/obj/kernel/sideband.o: kernel/sideband.c include/hwtrace.h \
 common/hwtr_common.h
include/hwtrace.h:
common/hwtr_common.h:
