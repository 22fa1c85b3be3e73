build2/obj/cli/cmd_query.o: cli/cmd_query.c include/hwtrace.h cli/cli.h
include/hwtrace.h:
cli/cli.h:
