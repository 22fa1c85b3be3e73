build2/obj/indexer/ild.o: indexer/ild.c indexer/hwtr_ix.h \
 include/hwtrace.h
indexer/hwtr_ix.h:
include/hwtrace.h:
