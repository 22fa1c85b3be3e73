build2/obj/capture/images.o: capture/images.c include/hwtrace.h \
 common/hwtr_common.h
include/hwtrace.h:
common/hwtr_common.h:
