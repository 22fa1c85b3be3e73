/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The GNU build-id of an ELF image, read from its PT_NOTE segments.  The
 * sideband collector names mappings by build-id and the image collector
 * checks that a file on disk is still the one that was mapped; both work on
 * files and on memory dumps (the vdso), so the reader goes through a
 * callback.  <elf.h> is glibc's, not a third-party header, and libelf
 * belongs to the indexer.
 */

#include <elf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hwtr_common.h"

#define NOTE_SEG_MAX	(64 * 1024)	/* larger note segments are ignored */

static uint64_t
align_up(uint64_t v, uint64_t a)
{
	return ((v + a - 1) & ~(a - 1));
}

/* Look for NT_GNU_BUILD_ID in one note segment @p[0..@len). */
static int
scan_notes(const uint8_t *p, size_t len, uint64_t align, uint8_t *id,
    size_t *idlen)
{
	uint64_t off = 0, namesz, descsz, type, dataoff;

	while (off + 12 <= len) {
		namesz = (uint32_t)(p[off] | p[off + 1] << 8 |
		    p[off + 2] << 16 | (uint32_t)p[off + 3] << 24);
		descsz = (uint32_t)(p[off + 4] | p[off + 5] << 8 |
		    p[off + 6] << 16 | (uint32_t)p[off + 7] << 24);
		type = (uint32_t)(p[off + 8] | p[off + 9] << 8 |
		    p[off + 10] << 16 | (uint32_t)p[off + 11] << 24);
		dataoff = off + 12 + align_up(namesz, align);
		if (dataoff > len || descsz > len - dataoff)
			return (0);
		if (type == NT_GNU_BUILD_ID && namesz == 4 &&
		    memcmp(p + off + 12, "GNU", 4) == 0 && descsz > 0 &&
		    descsz <= HWTR_BUILD_ID_MAX) {
			memcpy(id, p + dataoff, descsz);
			*idlen = descsz;
			return (1);
		}
		off = dataoff + align_up(descsz, align);
	}
	return (0);
}

int
hwtr_elf_build_id(hwtr_elf_read_fn rd, void *arg, uint8_t *id, size_t *idlen)
{
	unsigned char ident[EI_NIDENT];
	uint64_t phoff, poff, psz, palign;
	unsigned int phnum, phentsize, i, ptype;
	int is64, rc;
	uint8_t *seg;
	union {
		Elf64_Ehdr e64;
		Elf32_Ehdr e32;
		Elf64_Phdr p64;
		Elf32_Phdr p32;
	} u;

	*idlen = 0;
	if (rd(arg, 0, ident, sizeof(ident)) != (ssize_t)sizeof(ident) ||
	    memcmp(ident, ELFMAG, SELFMAG) != 0 ||
	    ident[EI_DATA] != ELFDATA2LSB)
		return (0);
	is64 = ident[EI_CLASS] == ELFCLASS64;
	if (!is64 && ident[EI_CLASS] != ELFCLASS32)
		return (0);
	if (is64) {
		if (rd(arg, 0, &u.e64, sizeof(u.e64)) != (ssize_t)sizeof(u.e64))
			return (0);
		phoff = u.e64.e_phoff;
		phnum = u.e64.e_phnum;
		phentsize = u.e64.e_phentsize;
		if (phentsize < sizeof(Elf64_Phdr))
			return (0);
	} else {
		if (rd(arg, 0, &u.e32, sizeof(u.e32)) != (ssize_t)sizeof(u.e32))
			return (0);
		phoff = u.e32.e_phoff;
		phnum = u.e32.e_phnum;
		phentsize = u.e32.e_phentsize;
		if (phentsize < sizeof(Elf32_Phdr))
			return (0);
	}
	if (phnum > 4096)
		return (0);
	for (i = 0; i < phnum; i++) {
		if (is64) {
			if (rd(arg, phoff + (uint64_t)i * phentsize, &u.p64,
			    sizeof(u.p64)) != (ssize_t)sizeof(u.p64))
				return (0);
			ptype = u.p64.p_type;
			poff = u.p64.p_offset;
			psz = u.p64.p_filesz;
			palign = u.p64.p_align;
		} else {
			if (rd(arg, phoff + (uint64_t)i * phentsize, &u.p32,
			    sizeof(u.p32)) != (ssize_t)sizeof(u.p32))
				return (0);
			ptype = u.p32.p_type;
			poff = u.p32.p_offset;
			psz = u.p32.p_filesz;
			palign = u.p32.p_align;
		}
		if (ptype != PT_NOTE || psz == 0 || psz > NOTE_SEG_MAX)
			continue;
		if ((seg = malloc(psz)) == NULL)
			return (-HWTR_E_NOMEM);
		if (rd(arg, poff, seg, psz) != (ssize_t)psz) {
			free(seg);
			continue;
		}
		/* Notes are 4-byte aligned, but 8 in segments aligned so. */
		rc = scan_notes(seg, psz, palign == 8 ? 8 : 4, id, idlen);
		free(seg);
		if (rc != 0)
			return (rc);
	}
	return (0);
}

static ssize_t
fd_read(void *arg, uint64_t off, void *buf, size_t len)
{
	return (pread(*(int *)arg, buf, len, (off_t)off));
}

int
hwtr_elf_build_id_fd(int fd, uint8_t *id, size_t *idlen)
{
	return (hwtr_elf_build_id(fd_read, &fd, id, idlen));
}

struct membuf {
	const uint8_t	*p;
	size_t		len;
};

static ssize_t
mem_read(void *arg, uint64_t off, void *buf, size_t len)
{
	const struct membuf *m = arg;

	if (off > m->len || len > m->len - off)
		return (-1);
	memcpy(buf, m->p + off, len);
	return ((ssize_t)len);
}

int
hwtr_elf_build_id_mem(const void *buf, size_t len, uint8_t *id,
    size_t *idlen)
{
	struct membuf m = { buf, len };

	return (hwtr_elf_build_id(mem_read, &m, id, idlen));
}
