/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Fixture: what the program was given for SIGINT, SIGHUP, SIGTERM,
 * SIGUSR2 and SIGPIPE, as sigaction(2) reports it: "INT=IGNORE
 * HUP=DEFAULT ...".  Run outside hwtrace it is the reference for the same
 * program under capture (an ignored signal is inherited across exec).
 * With the argument "hup-parent" it first sends its parent SIGHUP and
 * waits 300 ms, and exits 7.
 */

#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void
put(const char *s)
{
	write(1, s, strlen(s));
}

int
main(int argc, char **argv)
{
	static const struct {
		int		sig;
		const char	*name;
	} sigs[] = { { SIGINT, "INT" }, { SIGHUP, "HUP" }, { SIGTERM, "TERM" },
	    { SIGUSR2, "USR2" }, { SIGPIPE, "PIPE" } };
	struct timespec ts = { 0, 300000000 };
	struct sigaction sa;
	size_t i;
	int hup = argc > 1 && strcmp(argv[1], "hup-parent") == 0;

	if (hup) {
		kill(getppid(), SIGHUP);
		while (nanosleep(&ts, &ts) != 0)
			;
	}
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		if (sigaction(sigs[i].sig, NULL, &sa) != 0)
			return (1);
		put(i > 0 ? " " : "");
		put(sigs[i].name);
		put(sa.sa_handler == SIG_IGN ? "=IGNORE" :
		    sa.sa_handler == SIG_DFL ? "=DEFAULT" : "=CAUGHT");
	}
	put("\n");
	return (hup ? 7 : 0);
}
