/* Conformance fixture: middle() ends in a tail call (jmp leaf at -O2);
 * middle and leaf each run exactly 100 times. */
#include <stdio.h>

__attribute__((noinline)) int
leaf(int x)
{
	return (x * 5 + 2);
}

__attribute__((noinline)) int
middle(int x)
{
	return (leaf(x + 7));
}

int
main(void)
{
	volatile int s = 0;
	int i;

	for (i = 0; i < 100; i++)
		s += middle(i);
	printf("%d\n", s);
	return (0);
}
