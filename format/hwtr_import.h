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

struct hwtr_elf_info;

/*
 * Fill @r with the MMAP record (pid and tid -1) of @ei's PT_LOAD segment
 * @j placed at its p_vaddr plus @slide: the image @path, whose key in the
 * archive is @key.
 */
void hwtr_import_seg_mmap(struct hwtr_sb_rec *r,
    const struct hwtr_elf_info *ei, size_t j, uint64_t slide,
    const char *path, const char *key);

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
 * Zero @meta and fill what every import says: host "unknown", @source,
 * sideband origin "import".
 */
void hwtr_import_meta_init(struct hwtr_capture_meta *meta,
    const char *source);
/* The CPU of @meta as --cpu said: @cpu as given, the host's, or none. */
void hwtr_import_meta_cpu(struct hwtr_capture_meta *meta,
    enum hwtr_import_cpu mode, const struct hwtr_cpu *cpu);

/*
 * Where a loader puts what it read.  The driver (format/import.c) fills
 * the first four fields; the loader validates its input, then opens the
 * archive with hwtr_import_begin() and writes streams, images and
 * sideband through @aw.  It may count loss in @end.  The driver closes
 * the archive when the loader returns 0 and removes it otherwise.
 */
struct hwtr_import_sink {
	const char	*out;
	const struct hwtr_aw_opts *aw_opts;
	char		*errbuf;
	size_t		errlen;
	struct hwtr_aw	*aw;
	struct hwtr_capture_end end;
	/*
	 * A live capture's identity (the perf source's recording): the
	 * importer takes host, source, command line and start time from it
	 * instead of the file's.  NULL for an import.
	 */
	const struct hwtr_capture_meta *base;
	uint64_t	trace_bytes;	/* written by the loader */
};

/* Open the archive described by @meta; on failure errbuf says why. */
int hwtr_import_begin(struct hwtr_import_sink *sk,
    const struct hwtr_capture_meta *meta);

/*
 * One importer.  @bid returns how sure it is that @path is its format:
 * 0 not at all, 100 certain (a magic number matched).  @load reads @path
 * and writes it through @sk; it returns 0 or -HWTR_E_* with the reason in
 * sk->errbuf.
 */
struct hwtr_importer {
	const char	*name;
	int		(*bid)(const char *path);
	int		(*load)(const char *path,
			    const struct hwtr_import_opts *o,
			    struct hwtr_import_sink *sk);
};

extern const struct hwtr_importer hwtr_importer_raw;
extern const struct hwtr_importer hwtr_importer_lldb;
extern const struct hwtr_importer hwtr_importer_cs;
extern const struct hwtr_importer hwtr_importer_perf;
extern const struct hwtr_importer hwtr_importer_hwt;	/* hwt(8) -r dump */

/*
 * ptxed's --pevent sideband of a raw import (format/import_pevent.c):
 * hwtr_pevent_load() reads and checks every file before anything is
 * written (*pep stays NULL when there are none); hwtr_pevent_write()
 * writes their records, in file order, through @aw.
 */
struct hwtr_pevent;
int hwtr_pevent_load(struct hwtr_pevent **pep,
    const struct hwtr_import_raw_opts *o, char *errbuf, size_t errlen);
int hwtr_pevent_write(struct hwtr_pevent *pe, struct hwtr_aw *aw,
    char *errbuf, size_t errlen);
void hwtr_pevent_free(struct hwtr_pevent *pe);

/*
 * The archive of a live perf recording (the perf source's perf.data, pipe
 * format), written by the perf.data importer so that streams, loss,
 * decoder configuration and sideband are what an import of the same file
 * gives; @base supplies the capture's host, source, command line and
 * start, @end its exit status (loss is added to it).  Written by the
 * driver (format/import.c) like an import.  Called by the
 * capture session (capture/) for the perf source.  *@trace_bytes
 * receives the bytes of trace written.
 */
int hwtr_import_perf_capture(const char *recording,
    const struct hwtr_import_opts *o, const struct hwtr_capture_meta *base,
    struct hwtr_capture_end *end, const char *out, uint64_t *trace_bytes,
    char *errbuf, size_t errlen);

#endif /* !HWTR_IMPORT_H */
