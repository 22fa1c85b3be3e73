build2/obj/cli/main.o: cli/main.c include/hwtrace.h cli/cli.h
include/hwtrace.h:
cli/cli.h:
