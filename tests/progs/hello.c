/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Fixture: the smallest static program; what forkexec and vfork exec.  No
 * stdio, so it runs few instructions after the C start-up.
 */

#include <string.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	const char *who = argc > 1 ? argv[1] : "world";

	write(1, "hello ", 6);
	write(1, who, strlen(who));
	write(1, "\n", 1);
	return (0);
}
