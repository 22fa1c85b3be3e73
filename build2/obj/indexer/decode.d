build2/obj/indexer/decode.o: indexer/decode.c common/hwtr_common.h \
 include/hwtrace.h indexer/hwtr_ix.h
common/hwtr_common.h:
include/hwtrace.h:
indexer/hwtr_ix.h:
