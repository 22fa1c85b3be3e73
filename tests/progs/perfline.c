/*
 * Fixture of the perf source's test (tests/capture/t_perfcap.sh): waits
 * until the file argv[1] exists (the simulated kernel has written its
 * records), runs perfline_code (ten NOPs, then perfline_end: its RET) and
 * exits 3.  The test reads both addresses with nm and the instruction
 * count with objdump.  A second argument "segv" makes it crash after
 * perfline_code instead (SIGSEGV); "thread" runs a second thread, waiting
 * as the first, for attaching (-p) to a process of two threads; "map FILE
 * ADDR" maps FILE executable at ADDR (hexadecimal) first, as CoreSight
 * tests want the traced image where a recording had it.
 */

#include <sys/mman.h>

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void perfline_code(void);

__asm__(".text\n"
    ".globl perfline_code\n"
    ".type perfline_code, @function\n"
    "perfline_code:\n"
    "\tnop\n\tnop\n\tnop\n\tnop\n\tnop\n"
    "\tnop\n\tnop\n\tnop\n\tnop\n\tnop\n"
    ".globl perfline_end\n"
    "perfline_end:\n"
    "\tret\n"
    ".size perfline_code, .-perfline_code\n");

static void *
waiter(void *arg)
{
	struct timespec ts = { 0, 5000000 };
	int i;

	for (i = 0; i < 2000 && access(arg, F_OK) != 0; i++)
		nanosleep(&ts, NULL);
	return (NULL);
}

int
main(int argc, char **argv)
{
	pthread_t t;
	int two;

	/* "map FILE ADDR": FILE mapped executable at ADDR (hexadecimal). */
	if (argc > 4 && strcmp(argv[2], "map") == 0) {
		int fd = open(argv[3], O_RDONLY | O_CLOEXEC);
		void *want = (void *)(uintptr_t)strtoull(argv[4], NULL, 16);

		if (fd < 0 || mmap(want, 0x3000, PROT_READ | PROT_EXEC,
		    MAP_PRIVATE | MAP_FIXED_NOREPLACE, fd, 0) != want)
			return (1);
	}
	two = argc > 2 && strcmp(argv[2], "thread") == 0 &&
	    pthread_create(&t, NULL, waiter, argv[1]) == 0;
	if (argc > 1)
		(void)waiter(argv[1]);
	if (two)
		(void)pthread_join(t, NULL);
	perfline_code();
	if (argc > 2 && strcmp(argv[2], "segv") == 0) {
		signal(SIGSEGV, SIG_DFL);
		raise(SIGSEGV);
	}
	return (3);
}
