build2/obj/capture/trigger.o: capture/trigger.c common/hwtr_common.h \
 include/hwtrace.h capture/capture.h
common/hwtr_common.h:
include/hwtrace.h:
capture/capture.h:
