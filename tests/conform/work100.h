/*
 * main() of the C fixtures loop.c and plt.c, included after their work():
 * work(i) for i from 0 to 99, exactly 100 calls, and the sum printed.
 */
#include <stdio.h>

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
