build2/obj/format/import_lldb.o: format/import_lldb.c include/hwtrace.h \
 common/hwtr_common.h format/hwtr_elf.h format/hwtr_import.h
include/hwtrace.h:
common/hwtr_common.h:
format/hwtr_elf.h:
format/hwtr_import.h:
