build2/obj/cli/cmd_capture.o: cli/cmd_capture.c include/hwtrace.h \
 cli/cli.h
include/hwtrace.h:
cli/cli.h:
