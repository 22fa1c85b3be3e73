build2/obj/format/ar.o: format/ar.c common/hwtr_common.h \
 include/hwtrace.h format/hwtr_format.h
common/hwtr_common.h:
include/hwtrace.h:
format/hwtr_format.h:
