/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Signals hwtrace was started with ignored, given back to the programs
 * it runs (hwtr_common.h).  An ignored signal is inherited across exec
 * and a caught one is reset to the default: where hwtrace catches a
 * signal its caller ignored, the program would get the default, and run
 * as it does not outside hwtrace.
 */

#include <signal.h>
#include <stddef.h>

#include "hwtr_common.h"

static sigset_t	se_ign;
static int	se_noted;

void
hwtr_sig_note_ignored(const int *sigs, size_t n)
{
	struct sigaction sa;
	size_t i;

	if (!se_noted)
		sigemptyset(&se_ign);
	se_noted = 1;
	for (i = 0; i < n; i++)
		if (sigaction(sigs[i], NULL, &sa) == 0 &&
		    sa.sa_handler == SIG_IGN)
			sigaddset(&se_ign, sigs[i]);
}

void
hwtr_sig_restore_ignored(void)
{
	struct sigaction sa;
	int sig;

	if (!se_noted)
		return;
	/* sigismember(), sigemptyset(), sigaction(): safe after fork. */
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0;
	sa.sa_handler = SIG_IGN;
	for (sig = 1; sig < NSIG; sig++)
		if (sigismember(&se_ign, sig) == 1)
			(void)sigaction(sig, &sa, NULL);
}
