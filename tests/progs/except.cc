/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Fixture: C++ exceptions thrown through several frames and caught (the
 * unwinder's landing-pad jumps), a rethrow, and a destructor run during
 * unwinding.  Uses printf, not iostream, to keep static start-up short.
 */

#include <cstdio>
#include <stdexcept>

static unsigned int dtors;

struct guard {
	~guard() { dtors++; }
};

static __attribute__((noinline)) int
thrower(int n)
{
	guard g;

	if (n == 0)
		throw std::runtime_error("boom");
	return (thrower(n - 1) + 1);
}

static __attribute__((noinline)) int
rethrower(int n)
{
	try {
		return (thrower(n));
	} catch (const std::exception &) {
		throw;
	}
}

int
main()
{
	volatile int n = 3;
	int caught = 0;

	try {
		thrower(n);
	} catch (const std::runtime_error &e) {
		caught++;
	}
	try {
		rethrower(n);
	} catch (const std::exception &e) {
		caught++;
	}
	std::printf("except: caught %d dtors %u\n", caught, dtors);
	return (0);
}
