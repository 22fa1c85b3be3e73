build2/obj/query/q_verbs.o: query/q_verbs.c query/q_int.h \
 include/hwtrace.h common/hwtr_common.h
query/q_int.h:
include/hwtrace.h:
common/hwtr_common.h:
