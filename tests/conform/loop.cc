// Conformance fixture: work() runs 100 times and throws on every fourth
// call (25 throws, 25 catches), so the unwinder leaves 25 frames of work.
#include <cstdio>

__attribute__((noinline)) int
work(int i)
{
	if (i % 4 == 0)
		throw i;
	return (i * 3 + 1);
}

int
main()
{
	volatile int s = 0;

	for (int i = 0; i < 100; i++) {
		try {
			s += work(i);
		} catch (int e) {
			s -= e;
		}
	}
	std::printf("%d\n", (int)s);
	return (0);
}
