/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Error strings, time conversion, names, array growth and binary search
 * shared by every module.
 */

#include <assert.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwtrace.h"
#include "hwtr_common.h"

static const char *const errstr[HWTR_E_MAX] = {
	[HWTR_OK] = "success",
	[HWTR_E_NOMEM] = "out of memory",
	[HWTR_E_IO] = "input/output error",
	[HWTR_E_INVAL] = "invalid argument",
	[HWTR_E_FORMAT] = "malformed input",
	[HWTR_E_VERSION] = "unsupported version",
	[HWTR_E_TRUNCATED] = "truncated input",
	[HWTR_E_NOENT] = "not found",
	[HWTR_E_UNSUPPORTED] = "not supported",
	[HWTR_E_LIMIT] = "limit exceeded",
	[HWTR_E_DECODE] = "trace decode error",
	[HWTR_E_PERM] = "permission denied",
	[HWTR_E_INTR] = "interrupted",
	[HWTR_E_DB] = "database error",
	[HWTR_E_EXISTS] = "already exists",
	[HWTR_E_CHECKSUM] = "checksum mismatch",
};

const char *
hwtr_errstr(int err)
{
	if (err < 0)
		err = -err;
	if (err >= HWTR_E_MAX || errstr[err] == NULL)
		return ("unknown error");
	return (errstr[err]);
}

int64_t
hwtr_tsc_to_ns(const struct hwtr_timeconv *tc, uint64_t tsc)
{
	unsigned __int128 d;

	if (tc == NULL || !tc->valid || tc->shift > 63)
		return (0);
	if (tsc >= tc->tsc_zero) {
		d = (unsigned __int128)(tsc - tc->tsc_zero) * tc->mult;
		return (tc->ns_zero + (int64_t)(d >> tc->shift));
	}
	d = (unsigned __int128)(tc->tsc_zero - tsc) * tc->mult;
	return (tc->ns_zero - (int64_t)(d >> tc->shift));
}

static const char *const sbname[HWTR_SB_MAX] = {
	[HWTR_SB_PROC_START] = "proc-start",
	[HWTR_SB_PROC_EXIT] = "proc-exit",
	[HWTR_SB_THREAD_START] = "thread-start",
	[HWTR_SB_THREAD_EXIT] = "thread-exit",
	[HWTR_SB_EXEC] = "exec",
	[HWTR_SB_COMM] = "comm",
	[HWTR_SB_MMAP] = "mmap",
	[HWTR_SB_MUNMAP] = "munmap",
	[HWTR_SB_SWITCH] = "switch",
	[HWTR_SB_LOST] = "lost",
	[HWTR_SB_BUFPOS] = "bufpos",
};

const char *
hwtr_sb_type_name(enum hwtr_sb_type type)
{
	if ((int)type <= 0 || type >= HWTR_SB_MAX)
		return ("unknown");
	return (sbname[type]);
}

const char *
hwtr_open_failed(const char *path, const char *why, char *buf, size_t len)
{
	size_t n = strlen(path);
	const char *q;

	for (q = why; n > 0 && (q = strstr(q, path)) != NULL; q++)
		if (q > why && q[-1] == '\'' && q[n] == '\'') {
			snprintf(buf, len, "%s", why);
			return (buf);
		}
	snprintf(buf, len, "cannot open '%s': %s", path, why);
	return (buf);
}

void
hwtr_logf(const struct hwtr_log *log, enum hwtr_log_level level,
    const char *fmt, ...)
{
	char buf[HWTR_ERRMSG_MAX];
	va_list ap;

	if (log == NULL || log->fn == NULL || level > log->level)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	log->fn(log->arg, level, buf);
}

int
hwtr_grow(void *vp, size_t *capp, size_t need, size_t size)
{
	void **v = vp, *nv;
	size_t cap;

	assert(size > 0);
	if (need <= *capp)
		return (0);
	cap = *capp ? *capp : 16;
	while (cap < need) {
		if (cap > SIZE_MAX / 2 / size)
			return (-HWTR_E_NOMEM);
		cap *= 2;
	}
	if ((nv = realloc(*v, cap * size)) == NULL)
		return (-HWTR_E_NOMEM);
	*v = nv;
	*capp = cap;
	return (0);
}

size_t
hwtr_bsearch(const void *key, const void *base, size_t n,
    int (*below)(const void *key, const void *base, size_t i))
{
	size_t lo = 0, hi = n, mid;

	assert(below != NULL);
	/* Invariant: below() holds before lo and does not from hi on. */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (below(key, base, mid))
			lo = mid + 1;
		else
			hi = mid;
	}
	return (lo);
}
