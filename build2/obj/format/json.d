build2/obj/format/json.o: format/json.c common/hwtr_common.h \
 include/hwtrace.h format/hwtr_format.h
common/hwtr_common.h:
include/hwtrace.h:
format/hwtr_format.h:
