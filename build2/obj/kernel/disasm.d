build2/obj/kernel/disasm.o: kernel/disasm.c include/hwtrace.h
include/hwtrace.h:
