/* Conformance fixture: work() runs exactly 100 times. */
#include <stdio.h>

__attribute__((noinline)) int
work(int i)
{
	return (i * 3 + 1);
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
