build2/obj/indexer/cs_decode.o: indexer/cs_decode.c common/hwtr_common.h \
 include/hwtrace.h indexer/hwtr_ix.h
common/hwtr_common.h:
include/hwtrace.h:
indexer/hwtr_ix.h:
