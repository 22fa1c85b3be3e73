/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * perfline (see perfline.c) as a dynamic position-independent executable,
 * for the perf source's --trigger in a program whose addresses are known
 * only after its exec.
 */

#include "perfline.c"
