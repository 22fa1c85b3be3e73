build2/obj/format/elf.o: format/elf.c common/hwtr_common.h \
 include/hwtrace.h format/hwtr_elf.h
common/hwtr_common.h:
include/hwtrace.h:
format/hwtr_elf.h:
