build2/obj/indexer/stitch.o: indexer/stitch.c common/hwtr_common.h \
 include/hwtrace.h indexer/hwtr_ix.h
common/hwtr_common.h:
include/hwtrace.h:
indexer/hwtr_ix.h:
