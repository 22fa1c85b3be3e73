/*
 * Fixture of the perf source's test (tests/capture/t_perfcap.sh): waits
 * until the file argv[1] exists (the simulated kernel has written its
 * records), runs perfline_code (ten NOPs, then perfline_end: its RET) and
 * exits 3.  The test reads both addresses with nm and the instruction
 * count with objdump.
 */

#include <stdlib.h>
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

int
main(int argc, char **argv)
{
	struct timespec ts = { 0, 5000000 };
	int i;

	for (i = 0; argc > 1 && i < 2000 && access(argv[1], F_OK) != 0; i++)
		nanosleep(&ts, NULL);
	perfline_code();
	return (3);
}
