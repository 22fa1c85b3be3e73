build2/obj/query/q_core.o: query/q_core.c query/q_int.h include/hwtrace.h \
 common/hwtr_common.h
query/q_int.h:
include/hwtrace.h:
common/hwtr_common.h:
