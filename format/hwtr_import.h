/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Helpers shared by the importers (format/import_*.c); private to
 * libhwtrace.
 */

#ifndef HWTR_IMPORT_H
#define HWTR_IMPORT_H

#include <stddef.h>
#include <stdint.h>

#include "hwtrace.h"

/* snprintf into @errbuf when it is not NULL. */
void hwtr_import_err(char *errbuf, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ELF segment flags (HWTR_ELF_PF_*) to mmap protection (PROT_*). */
uint32_t hwtr_import_prot(uint32_t pflags);

/*
 * Copy bytes @from..@end of the open file @fd into stream @id of @aw in
 * chunks.  @label and @path name the input in messages ("--pt 'x.pt'").
 */
int hwtr_import_copy(struct hwtr_aw *aw, uint32_t id, int fd,
    const char *label, const char *path, uint64_t from, uint64_t end,
    char *errbuf, size_t errlen);

/* 1 when @base + @rel + @len does not fit in 64 bits, else 0. */
static inline int
hwtr_import_wraps(uint64_t base, uint64_t rel, uint64_t len)
{
	return (rel > UINT64_MAX - base || len > UINT64_MAX - base - rel);
}

/*
 * Close @aw (renaming its file to @out); on failure remove the partial
 * file too and say why in @errbuf.  Frees @aw.
 */
int hwtr_import_close(struct hwtr_aw *aw, const char *out, char *errbuf,
    size_t errlen);

#endif /* !HWTR_IMPORT_H */
