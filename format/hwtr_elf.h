/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * A small, bounds-checked ELF32/ELF64 reader (private to libhwtrace; the
 * importers use it too).  It finds what an archive needs about an image:
 * the GNU build-id and the PT_LOAD segments.  Every offset and size read
 * from the file is checked against the buffer before use, so it is safe on
 * truncated and hostile files.
 */

#ifndef HWTR_ELF_H
#define HWTR_ELF_H

#include <stddef.h>
#include <stdint.h>

#include "hwtrace.h"

#define HWTR_ELF_MAX_LOAD	64

/* Segment flags, as PF_X / PF_W / PF_R. */
#define HWTR_ELF_PF_X		0x1u
#define HWTR_ELF_PF_W		0x2u
#define HWTR_ELF_PF_R		0x4u

struct hwtr_elf_seg {
	uint64_t	vaddr;
	uint64_t	offset;		/* in the file */
	uint64_t	filesz;
	uint64_t	memsz;
	uint32_t	flags;		/* HWTR_ELF_PF_* */
};

struct hwtr_elf_info {
	int		elfclass;	/* 32 or 64 */
	int		big_endian;
	uint16_t	type;		/* ET_EXEC 2, ET_DYN 3, ... */
	uint16_t	machine;	/* EM_X86_64 62, EM_AARCH64 183, ... */
	uint64_t	entry;
	uint8_t		build_id[HWTR_BUILD_ID_MAX];
	size_t		build_id_len;	/* 0: no NT_GNU_BUILD_ID note */
	struct hwtr_elf_seg load[HWTR_ELF_MAX_LOAD];
	size_t		nload;
};

/* 1 when @buf starts with the ELF magic, else 0. */
int hwtr_elf_is_elf(const void *buf, size_t len);

/*
 * Parse @len bytes at @buf.  Returns 0, -HWTR_E_FORMAT (not ELF or
 * malformed), -HWTR_E_TRUNCATED (a header or table lies past the end) or
 * -HWTR_E_LIMIT (more than HWTR_ELF_MAX_LOAD PT_LOAD segments); @err
 * (may be NULL) receives the reason with the offset.
 */
int hwtr_elf_parse(const void *buf, size_t len, struct hwtr_elf_info *info,
    char *err, size_t errlen);

/*
 * The name and CRC-32 in @buf's .gnu_debuglink section: 1 found, 0 none,
 * -HWTR_E_FORMAT malformed.
 */
int hwtr_elf_debuglink(const void *buf, size_t len, char *name,
    size_t namelen, uint32_t *crc);

/*
 * The value of the symbol @name in @buf's .symtab (or, without one, its
 * .dynsym): 1 found, 0 none, -HWTR_E_FORMAT when a table lies outside
 * the file.
 */
int hwtr_elf_symbol(const void *buf, size_t len, const char *name,
    uint64_t *value);

/*
 * Find the separate debug file of the ELF image @buf (from @path, may be
 * NULL) and verify it: the same GNU build-id, or without one the CRC-32
 * of its .gnu_debuglink.  Looked for, in order, under @dir when not NULL
 * (DIR/.build-id/xx/yyyy.debug, DIR/NAME, DIR/IMAGEDIR/NAME), then, when
 * @system, under /usr/lib/debug the same way, beside the image
 * (IMAGEDIR/NAME, IMAGEDIR/.debug/NAME) and through debuginfod when
 * DEBUGINFOD_URLS is set.  Returns 1 with a malloc'd copy in @bufp and
 * where it came from in @from, 0 when there is none.
 */
int hwtr_debug_find(const void *buf, size_t len, const char *path,
    const char *dir, int system, void **bufp, size_t *lenp, char *from,
    size_t fromlen);

/* Read the file at @path into a malloc'd buffer (at most @max bytes). */
int hwtr_read_file(const char *path, uint64_t max, void **bufp, size_t *lenp,
    char *err, size_t errlen);

/*
 * A copy of the ELF file @buf whose compressed debug sections (SHF_COMPRESSED
 * with zlib or zstd, GNU .zdebug_*) are decompressed, for a DWARF reader:
 * the sections that are not loaded (compressed location lists and macros
 * empty: hwtrace reads neither), the loaded ones as SHT_NOBITS, and the
 * section headers (malloc'd in *@outp, *@outlenp bytes).  0 when nothing
 * is compressed (*@outp NULL: read @buf itself), 1 with the copy, 2 with
 * the copy where some sections could not be decompressed and are empty
 * (@warn names the first and why), or -HWTR_E_FORMAT (not ELF, section
 * headers past the end) or -HWTR_E_NOMEM.
 */
int hwtr_elf_inflate(const void *buf, size_t len, void **outp,
    size_t *outlenp, char *warn, size_t warnlen);

/*
 * Open @path for reading; it must be a regular file (*@st its status).
 * Returns the descriptor, or -HWTR_E_* with the reason in @err.
 */
struct stat;
int hwtr_open_regular(const char *path, struct stat *st, char *err,
    size_t errlen);
/*
 * hwtr_read_file() on a descriptor already open (*@st its status, @path
 * its name in messages); closes @fd in every case.
 */
int hwtr_read_fd(int fd, const struct stat *st, const char *path,
    uint64_t max, void **bufp, size_t *lenp, char *err, size_t errlen);
/*
 * hwtr_read_file() of @path opened by hwtr_in_open_under(@dir): inside
 * the directory @dir only, or anywhere when @dir is NULL.
 */
int hwtr_read_under(const char *dir, const char *path, uint64_t max,
    void **bufp, size_t *lenp, char *err, size_t errlen);

#endif /* !HWTR_ELF_H */
