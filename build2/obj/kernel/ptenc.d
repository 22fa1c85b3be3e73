build2/obj/kernel/ptenc.o: kernel/ptenc.c common/hwtr_common.h \
 include/hwtrace.h
common/hwtr_common.h:
include/hwtrace.h:
