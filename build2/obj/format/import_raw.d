build2/obj/format/import_raw.o: format/import_raw.c include/hwtrace.h \
 common/hwtr_common.h format/hwtr_elf.h format/hwtr_import.h
include/hwtrace.h:
common/hwtr_common.h:
format/hwtr_elf.h:
format/hwtr_import.h:
