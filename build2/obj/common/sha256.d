build2/obj/common/sha256.o: common/sha256.c common/hwtr_common.h \
 include/hwtrace.h
common/hwtr_common.h:
include/hwtrace.h:
