build2/obj/format/aw.o: format/aw.c common/hwtr_common.h \
 include/hwtrace.h format/hwtr_elf.h format/hwtr_format.h
common/hwtr_common.h:
include/hwtrace.h:
format/hwtr_elf.h:
format/hwtr_format.h:
