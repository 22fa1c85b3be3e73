build2/obj/cli/cmd_info.o: cli/cmd_info.c include/hwtrace.h cli/cli.h
include/hwtrace.h:
cli/cli.h:
