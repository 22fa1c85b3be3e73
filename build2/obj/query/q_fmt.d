build2/obj/query/q_fmt.o: query/q_fmt.c query/q_int.h include/hwtrace.h \
 common/hwtr_common.h
query/q_int.h:
include/hwtrace.h:
common/hwtr_common.h:
