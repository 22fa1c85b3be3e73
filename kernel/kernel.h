/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/* Private to kernel/: the ops tables of the trace sources. */

#ifndef HWTR_KERNEL_H
#define HWTR_KERNEL_H

#include "hwtrace.h"

extern const struct hwtr_src_ops hwtr_step_ops;

#endif /* !HWTR_KERNEL_H */
