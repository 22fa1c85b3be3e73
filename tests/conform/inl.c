/* Conformance fixture: with an argument, sq(), inlined into outer(),
 * dereferences NULL after its first instruction, so gdb shows the inlined
 * frame (at an inlined block's first instruction it shows the caller). */
#include <stddef.h>

static volatile int ncalls;

static inline int
sq(int *p)
{
	ncalls++;
	return (*p * *p);
}

__attribute__((noinline)) int
outer(int *p)
{
	return (sq(p) + 1);
}

int
main(int argc, char **argv)
{
	(void)argv;
	return (outer(argc > 1 ? NULL : &argc));
}
