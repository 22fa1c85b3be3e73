build-clang/obj/cli/tmp_stub.o: cli/tmp_stub.c cli/cli.h

cli/cli.h:
