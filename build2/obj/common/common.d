build2/obj/common/common.o: common/common.c include/hwtrace.h \
 common/hwtr_common.h
include/hwtrace.h:
common/hwtr_common.h:
