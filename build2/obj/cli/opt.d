build2/obj/cli/opt.o: cli/opt.c cli/cli.h
cli/cli.h:
