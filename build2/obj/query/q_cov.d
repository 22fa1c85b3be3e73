build2/obj/query/q_cov.o: query/q_cov.c query/q_int.h include/hwtrace.h \
 common/hwtr_common.h
query/q_int.h:
include/hwtrace.h:
common/hwtr_common.h:
