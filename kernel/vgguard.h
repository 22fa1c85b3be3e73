/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

#ifndef HWTR_VGGUARD_H
#define HWTR_VGGUARD_H

#include <sys/types.h>

/*
 * The guardian of a valgrind capture's process tree (vgguard.c).  Start
 * it before Valgrind, with the event directory every Valgrind of the tree
 * is given (--out-dir=@dir); end it when the capture ends normally.
 * Should hwtrace die first, however it dies, the guardian kills every
 * process of the tree.  0 or -HWTR_E_*; *@pidp and *@fdp are the
 * guardian's process and the pipe to it (both -1 on failure).
 */
int	vg_guard_start(const char *dir, pid_t *pidp, int *fdp);

/* Dismiss the guardian (its tree is left alone) and reap it. */
void	vg_guard_end(pid_t pid, int fd);

#endif /* !HWTR_VGGUARD_H */
