build2/obj/indexer/ix.o: indexer/ix.c common/hwtr_common.h \
 include/hwtrace.h indexer/hwtr_ix.h indexer/schema.sql.h
common/hwtr_common.h:
include/hwtrace.h:
indexer/hwtr_ix.h:
indexer/schema.sql.h:
