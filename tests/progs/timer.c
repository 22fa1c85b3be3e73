/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Fixture: asynchronous signals.  An interval timer (setitimer ITIMER_REAL,
 * 2 ms) interrupts a busy loop at arbitrary instructions until its handler
 * has run 3 times.  The loop's length depends on speed (traced or not); the
 * output does not.
 */

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

static volatile sig_atomic_t ticks;

static void
on_alarm(int sig)
{
	(void)sig;
	ticks++;
}

int
main(void)
{
	struct sigaction sa;
	struct itimerval it;
	volatile unsigned long spin = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	memset(&it, 0, sizeof(it));
	it.it_interval.tv_usec = 2000;
	it.it_value.tv_usec = 2000;
	setitimer(ITIMER_REAL, &it, NULL);
	while (ticks < 3)
		spin++;
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	printf("timer: %d ticks\n", (int)ticks);
	return (0);
}
