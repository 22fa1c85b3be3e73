/* Conformance fixture: work() calls div() in the C library through the
 * PLT (a function with one name and no inline version in the headers);
 * each runs exactly 100 times. */
#include <stdlib.h>

__attribute__((noinline)) int
work(int i)
{
	return (div(i, 7).quot + 1);
}

#include "work100.h"
