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

/*
 * Close @aw (renaming its file to @out); on failure remove the partial
 * file too and say why in @errbuf.  Frees @aw.
 */
int hwtr_import_close(struct hwtr_aw *aw, const char *out, char *errbuf,
    size_t errlen);

#endif /* !HWTR_IMPORT_H */
