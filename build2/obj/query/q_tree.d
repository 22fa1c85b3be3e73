build2/obj/query/q_tree.o: query/q_tree.c query/q_int.h include/hwtrace.h \
 common/hwtr_common.h
query/q_int.h:
include/hwtrace.h:
common/hwtr_common.h:
