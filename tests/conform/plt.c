/* Conformance fixture: work() calls div() in the C library through the
 * PLT (a function with one name and no inline version in the headers);
 * each runs exactly 100 times. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) int
work(int i)
{
	return (div(i, 7).quot + 1);
}

int
main(void)
{
	volatile int s = 0;
	int i;

	for (i = 0; i < 100; i++)
		s += work(i);
	printf("%d\n", s);
	return (0);
}
