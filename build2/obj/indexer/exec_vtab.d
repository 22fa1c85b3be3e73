build2/obj/indexer/exec_vtab.o: indexer/exec_vtab.c include/hwtrace.h
include/hwtrace.h:
