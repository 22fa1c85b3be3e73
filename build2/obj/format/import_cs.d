build2/obj/format/import_cs.o: format/import_cs.c include/hwtrace.h \
 common/hwtr_common.h format/hwtr_elf.h format/hwtr_import.h
include/hwtrace.h:
common/hwtr_common.h:
format/hwtr_elf.h:
format/hwtr_import.h:
