build2/obj/cli/cmd_verify.o: cli/cmd_verify.c include/hwtrace.h cli/cli.h
include/hwtrace.h:
cli/cli.h:
