build2/obj/query/q_prof.o: query/q_prof.c query/q_int.h include/hwtrace.h \
 common/hwtr_common.h
query/q_int.h:
include/hwtrace.h:
common/hwtr_common.h:
