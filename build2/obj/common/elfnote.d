build2/obj/common/elfnote.o: common/elfnote.c common/hwtr_common.h \
 include/hwtrace.h
common/hwtr_common.h:
include/hwtrace.h:
