/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * ELF notes, and the GNU build-id of an ELF image read from its PT_NOTE
 * segments.  format/elf.c walks notes with the same hwtr_elf_note_next().  The
 * sideband collector names mappings by build-id and the image collector
 * checks that a file on disk is still the one that was mapped; both work on
 * files and on memory dumps (the vdso), so the reader goes through a
 * callback.  <elf.h> is glibc's, not a third-party header, and libelf
 * belongs to the indexer.
 */

#include <assert.h>
#include <elf.h>
#include <stddef.h>
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

static uint32_t
rd32(const uint8_t *p, int be)
{
	if (be)
		return ((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
		    (uint32_t)p[2] << 8 | p[3]);
	return ((uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[1] << 8 | p[0]);
}

int
hwtr_elf_note_next(const uint8_t *p, size_t len, int be, uint64_t align,
    uint64_t *pos, struct hwtr_elf_note *n)
{
	uint64_t off = *pos, name, desc;

	if (align != 8)
		align = 4;
	if (off > len || len - off < 12)
		return (0);
	n->off = off;
	n->namesz = rd32(p + off, be);
	n->descsz = rd32(p + off + 4, be);
	n->type = rd32(p + off + 8, be);
	/* Name and descriptor each start aligned relative to the notes. */
	name = off + 12;
	if (n->namesz > len - name) {
		n->bad = "name";
		return (-HWTR_E_FORMAT);
	}
	desc = align_up(name + n->namesz, align);
	if (desc > len || n->descsz > len - desc) {
		n->bad = "descriptor";
		return (-HWTR_E_FORMAT);
	}
	n->bad = NULL;
	n->name = p + name;
	n->desc = p + desc;
	*pos = align_up(desc + n->descsz, align);
	return (1);
}

int
hwtr_elf_note_is_build_id(const struct hwtr_elf_note *n)
{
	return (n->type == NT_GNU_BUILD_ID && n->namesz == 4 &&
	    memcmp(n->name, "GNU", 4) == 0 && n->descsz > 0);
}

/* Look for NT_GNU_BUILD_ID in one note segment @p[0..@len). */
static int
scan_notes(const uint8_t *p, size_t len, uint64_t align, uint8_t *id,
    size_t *idlen)
{
	struct hwtr_elf_note n;
	uint64_t pos = 0;

	while (hwtr_elf_note_next(p, len, 0, align, &pos, &n) > 0) {
		if (hwtr_elf_note_is_build_id(&n) &&
		    n.descsz <= HWTR_BUILD_ID_MAX) {
			memcpy(id, n.desc, n.descsz);
			*idlen = n.descsz;
			return (1);
		}
	}
	return (0);
}

/*
 * Where the fields the build-id walk reads sit in the ELF header and in a
 * program header of each class, [0] ELFCLASS32 and [1] ELFCLASS64: the one
 * walk below reads both, by these offsets and the width of an offset.
 */
struct elf_layout {
	size_t	ehsize, e_phoff, e_phentsize, e_phnum;
	size_t	phsize, p_type, p_offset, p_filesz, p_align;
	size_t	word;		/* bytes of an offset or a size: 4 or 8 */
};

#define ELF_LAYOUT(E, P) {						\
	sizeof(E), offsetof(E, e_phoff), offsetof(E, e_phentsize),	\
	offsetof(E, e_phnum), sizeof(P), offsetof(P, p_type),		\
	offsetof(P, p_offset), offsetof(P, p_filesz),			\
	offsetof(P, p_align), sizeof(((P *)0)->p_offset) }

static const struct elf_layout elf_layout[2] = {
	ELF_LAYOUT(Elf32_Ehdr, Elf32_Phdr),
	ELF_LAYOUT(Elf64_Ehdr, Elf64_Phdr),
};

/* The little-endian unsigned integer of @n (at most 8) bytes at @p. */
static uint64_t
rdle(const uint8_t *p, size_t n)
{
	uint64_t v = 0;

	assert(n <= 8);
	while (n-- > 0)
		v = v << 8 | p[n];
	return (v);
}

int
hwtr_elf_build_id(hwtr_elf_read_fn rd, void *arg, uint8_t *id, size_t *idlen)
{
	uint8_t eh[sizeof(Elf64_Ehdr)], ph[sizeof(Elf64_Phdr)];
	const struct elf_layout *l;
	uint64_t phoff, poff, psz, palign;
	unsigned int phnum, phentsize, i;
	uint8_t *seg;
	int rc;

	*idlen = 0;
	if (rd(arg, 0, eh, EI_NIDENT) != EI_NIDENT ||
	    memcmp(eh, ELFMAG, SELFMAG) != 0 || eh[EI_DATA] != ELFDATA2LSB ||
	    (eh[EI_CLASS] != ELFCLASS64 && eh[EI_CLASS] != ELFCLASS32))
		return (0);
	l = &elf_layout[eh[EI_CLASS] == ELFCLASS64];
	assert(l->ehsize <= sizeof(eh) && l->phsize <= sizeof(ph));
	if (rd(arg, 0, eh, l->ehsize) != (ssize_t)l->ehsize)
		return (0);
	phoff = rdle(eh + l->e_phoff, l->word);
	phnum = (unsigned int)rdle(eh + l->e_phnum, 2);
	phentsize = (unsigned int)rdle(eh + l->e_phentsize, 2);
	if (phentsize < l->phsize || phnum > 4096)
		return (0);
	for (i = 0; i < phnum; i++) {
		if (rd(arg, phoff + (uint64_t)i * phentsize, ph, l->phsize) !=
		    (ssize_t)l->phsize)
			return (0);
		poff = rdle(ph + l->p_offset, l->word);
		psz = rdle(ph + l->p_filesz, l->word);
		palign = rdle(ph + l->p_align, l->word);
		if (rdle(ph + l->p_type, 4) != PT_NOTE || psz == 0 ||
		    psz > NOTE_SEG_MAX)
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
