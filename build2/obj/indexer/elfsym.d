build2/obj/indexer/elfsym.o: indexer/elfsym.c indexer/hwtr_ix.h \
 include/hwtrace.h
indexer/hwtr_ix.h:
include/hwtrace.h:
