build2/obj/capture/capture.o: capture/capture.c common/hwtr_common.h \
 include/hwtrace.h capture/capture.h
common/hwtr_common.h:
include/hwtrace.h:
capture/capture.h:
