build2/obj/cli/cmd_import.o: cli/cmd_import.c include/hwtrace.h cli/cli.h
include/hwtrace.h:
cli/cli.h:
