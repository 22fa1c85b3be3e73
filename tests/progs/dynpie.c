/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Fixture: the smallest dynamic PIE: ld.so start-up, relocation, one lazily
 * bound libc call (write) through the PLT, and exit.
 */

#include <unistd.h>

int
main(void)
{
	write(1, "dynpie: ok\n", 11);
	return (0);
}
