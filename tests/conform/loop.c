/* Conformance fixture: work() runs exactly 100 times. */

__attribute__((noinline)) int
work(int i)
{
	return (i * 3 + 1);
}

#include "work100.h"
