build2/obj/cli/cmd_diff.o: cli/cmd_diff.c include/hwtrace.h cli/cli.h
include/hwtrace.h:
cli/cli.h:
