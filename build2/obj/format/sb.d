build2/obj/format/sb.o: format/sb.c common/hwtr_common.h \
 include/hwtrace.h format/hwtr_format.h
common/hwtr_common.h:
include/hwtrace.h:
format/hwtr_format.h:
