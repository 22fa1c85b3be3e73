build2/obj/cli/cmd_index.o: cli/cmd_index.c include/hwtrace.h cli/cli.h
include/hwtrace.h:
cli/cli.h:
