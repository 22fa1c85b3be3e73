/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Helpers shared by the modules of libhwtrace (private: not installed, not
 * part of hwtrace.h).  Every module may include this header; it includes no
 * third-party header.
 */

#ifndef HWTR_COMMON_H
#define HWTR_COMMON_H

#include <stdint.h>

#include "hwtrace.h"

#define HWTR_NELEM(a)	(sizeof(a) / sizeof((a)[0]))

/* Format a message and send it to @log (which may be NULL). */
void hwtr_logf(const struct hwtr_log *log, enum hwtr_log_level level,
    const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif /* !HWTR_COMMON_H */
