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

#include <stddef.h>
#include <stdint.h>

#include "hwtrace.h"

#define HWTR_NELEM(a)	(sizeof(a) / sizeof((a)[0]))

/* Format a message and send it to @log (which may be NULL). */
void hwtr_logf(const struct hwtr_log *log, enum hwtr_log_level level,
    const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/*
 * SHA-256 (FIPS 180-4), common/sha256.c.  Incremental: init, update any
 * number of times, final.
 */
struct hwtr_sha256 {
	uint32_t	h[8];
	uint64_t	len;
	uint8_t		buf[64];
	size_t		nbuf;
};

void hwtr_sha256_init(struct hwtr_sha256 *s);
void hwtr_sha256_update(struct hwtr_sha256 *s, const void *data, size_t len);
void hwtr_sha256_final(struct hwtr_sha256 *s, uint8_t out[32]);
/* One-shot digest of @len bytes at @data. */
void hwtr_sha256(const void *data, size_t len, uint8_t out[32]);
/* Lowercase hex of @len bytes into @out (2 * @len + 1 bytes). */
void hwtr_hex(char *out, const uint8_t *p, size_t len);

#endif /* !HWTR_COMMON_H */
