/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Hand-written ELF reader: only the ELF header, the program headers, the
 * section headers (for notes when no PT_NOTE exists) and the notes.  Written
 * against the System V gABI; every read goes through rd() which checks the
 * bounds, so nothing the file claims is trusted.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hwtr_common.h"
#include "hwtr_elf.h"

#define PT_LOAD		1
#define PT_NOTE		4
#define SHT_NOTE	7

struct elfr {
	const uint8_t	*p;
	size_t		len;
	int		be;
	char		*err;
	size_t		errlen;
};

static void
setfail(struct elfr *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
setfail(struct elfr *r, const char *fmt, ...)
{
	va_list ap;

	if (r->err != NULL && r->errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(r->err, r->errlen, fmt, ap);
		va_end(ap);
	}
}

/* Keep the message, evaluate to the error (visibly negative). */
#define fail(r, code, ...)	(setfail((r), __VA_ARGS__), -(code))

/* Read an unsigned @n-byte integer at @off; 0 on success. */
static int
rd(const struct elfr *r, uint64_t off, int n, uint64_t *v)
{
	uint64_t x = 0;
	int i;

	if (off > r->len || (uint64_t)n > r->len - off)
		return (-1);
	for (i = 0; i < n; i++) {
		if (r->be)
			x = x << 8 | r->p[off + i];
		else
			x |= (uint64_t)r->p[off + i] << (8 * i);
	}
	*v = x;
	return (0);
}

int
hwtr_elf_is_elf(const void *buf, size_t len)
{
	return (len >= 4 && memcmp(buf, "\177ELF", 4) == 0);
}

/*
 * Walk the notes in [@off, @off + @size) looking for the GNU build-id.
 * Notes are padded to @align (4, or 8 for some ELF64 producers).
 */
static int
scan_notes(struct elfr *r, struct hwtr_elf_info *info, uint64_t off,
    uint64_t size, uint64_t align)
{
	struct hwtr_elf_note n;
	uint64_t pos = 0;
	int rc;

	if (off > r->len || size > r->len - off)
		return (fail(r, HWTR_E_TRUNCATED,
		    "notes at 0x%jx size 0x%jx lie past the end (0x%zx)",
		    (uintmax_t)off, (uintmax_t)size, r->len));
	while ((rc = hwtr_elf_note_next(r->p + off, size, r->be, align, &pos,
	    &n)) != 0) {
		if (rc < 0)
			return (fail(r, HWTR_E_FORMAT,
			    "note at 0x%jx: %s size %ju too large",
			    (uintmax_t)(off + n.off), n.bad,
			    (uintmax_t)(n.bad[0] == 'n' ? n.namesz : n.descsz)));
		if (hwtr_elf_note_is_build_id(&n) && info->build_id_len == 0) {
			if (n.descsz > HWTR_BUILD_ID_MAX)
				return (fail(r, HWTR_E_FORMAT,
				    "note at 0x%jx: build-id of %ju bytes",
				    (uintmax_t)(off + n.off), (uintmax_t)n.descsz));
			memcpy(info->build_id, n.desc, n.descsz);
			info->build_id_len = n.descsz;
		}
	}
	return (0);
}

int
hwtr_elf_parse(const void *buf, size_t len, struct hwtr_elf_info *info,
    char *err, size_t errlen)
{
	struct elfr r = { buf, len, 0, err, errlen };
	uint64_t phoff, shoff, phentsize, phnum, shentsize, shnum, v;
	uint64_t ptype, ent, i;
	int is64, rc, w;
	struct hwtr_elf_seg *s;
	uint64_t nnotes = 0;

	memset(info, 0, sizeof(*info));
	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if (!hwtr_elf_is_elf(buf, len))
		return (fail(&r, HWTR_E_FORMAT, "not an ELF file"));
	if (len < 16)
		return (fail(&r, HWTR_E_TRUNCATED, "ELF identification cut at %zu bytes", len));
	if (r.p[4] != 1 && r.p[4] != 2)
		return (fail(&r, HWTR_E_FORMAT, "bad ELF class %u", r.p[4]));
	if (r.p[5] != 1 && r.p[5] != 2)
		return (fail(&r, HWTR_E_FORMAT, "bad ELF data encoding %u", r.p[5]));
	is64 = r.p[4] == 2;
	r.be = r.p[5] == 2;
	info->elfclass = is64 ? 64 : 32;
	info->big_endian = r.be;
	w = is64 ? 8 : 4;
	if (len < (size_t)(is64 ? 64 : 52))
		return (fail(&r, HWTR_E_TRUNCATED, "ELF header cut at %zu bytes", len));
	rd(&r, 16, 2, &v);
	info->type = (uint16_t)v;
	rd(&r, 18, 2, &v);
	info->machine = (uint16_t)v;
	rd(&r, 24, w, &info->entry);
	rd(&r, 24 + w, w, &phoff);
	rd(&r, 24 + 2 * w, w, &shoff);
	rd(&r, is64 ? 54 : 42, 2, &phentsize);
	rd(&r, is64 ? 56 : 44, 2, &phnum);
	rd(&r, is64 ? 58 : 46, 2, &shentsize);
	rd(&r, is64 ? 60 : 48, 2, &shnum);

	if (phnum > 0) {
		if (phentsize < (uint64_t)(is64 ? 56 : 32))
			return (fail(&r, HWTR_E_FORMAT,
			    "program header size %ju too small", (uintmax_t)phentsize));
		if (phoff > len || phnum * phentsize > len - phoff)
			return (fail(&r, HWTR_E_TRUNCATED,
			    "program headers at 0x%jx (%ju of %ju bytes) lie past the end (0x%zx)",
			    (uintmax_t)phoff, (uintmax_t)phnum, (uintmax_t)phentsize, len));
	}
	for (i = 0; i < phnum; i++) {
		uint64_t flags, poff, vaddr, filesz, memsz, align;

		ent = phoff + i * phentsize;
		rd(&r, ent, 4, &ptype);
		if (is64) {
			rd(&r, ent + 4, 4, &flags);
			rd(&r, ent + 8, 8, &poff);
			rd(&r, ent + 16, 8, &vaddr);
			rd(&r, ent + 32, 8, &filesz);
			rd(&r, ent + 40, 8, &memsz);
			rd(&r, ent + 48, 8, &align);
		} else {
			rd(&r, ent + 4, 4, &poff);
			rd(&r, ent + 8, 4, &vaddr);
			rd(&r, ent + 16, 4, &filesz);
			rd(&r, ent + 20, 4, &memsz);
			rd(&r, ent + 24, 4, &flags);
			rd(&r, ent + 28, 4, &align);
		}
		if (ptype == PT_LOAD) {
			if (info->nload >= HWTR_ELF_MAX_LOAD)
				return (fail(&r, HWTR_E_LIMIT,
				    "more than %d PT_LOAD segments", HWTR_ELF_MAX_LOAD));
			if (filesz > memsz)
				return (fail(&r, HWTR_E_FORMAT,
				    "PT_LOAD %ju: file size 0x%jx exceeds memory size 0x%jx",
				    (uintmax_t)i, (uintmax_t)filesz, (uintmax_t)memsz));
			s = &info->load[info->nload++];
			s->vaddr = vaddr;
			s->offset = poff;
			s->filesz = filesz;
			s->memsz = memsz;
			s->flags = (uint32_t)flags;
		} else if (ptype == PT_NOTE) {
			nnotes++;
			if (info->build_id_len == 0 &&
			    (rc = scan_notes(&r, info, poff, filesz, align)) < 0)
				return (rc);
		}
	}
	/* No PT_NOTE (relocatable objects, some stripped files): try sections. */
	if (nnotes == 0 && shnum > 0 && shoff != 0) {
		if (shentsize < (uint64_t)(is64 ? 64 : 40))
			return (fail(&r, HWTR_E_FORMAT,
			    "section header size %ju too small", (uintmax_t)shentsize));
		if (shoff > len || shnum * shentsize > len - shoff)
			return (fail(&r, HWTR_E_TRUNCATED,
			    "section headers at 0x%jx lie past the end (0x%zx)",
			    (uintmax_t)shoff, len));
		for (i = 0; i < shnum; i++) {
			uint64_t stype, soff, ssize, salign;

			ent = shoff + i * shentsize;
			rd(&r, ent + 4, 4, &stype);
			if (stype != SHT_NOTE)
				continue;
			rd(&r, ent + (is64 ? 24 : 16), w, &soff);
			rd(&r, ent + (is64 ? 32 : 20), w, &ssize);
			rd(&r, ent + (is64 ? 48 : 32), w, &salign);
			if ((rc = scan_notes(&r, info, soff, ssize, salign)) < 0)
				return (rc);
			if (info->build_id_len > 0)
				break;
		}
	}
	return (0);
}

/*
 * The identification of an ELF file at least 64 bytes long whose class
 * and data encoding are known: 1 with r->be, *@is64 and the word size *@w
 * set, else 0 (the lenient readers below then find nothing).
 */
static int
quick_ident(struct elfr *r, int *is64, int *w)
{
	if (!hwtr_elf_is_elf(r->p, r->len) || r->len < 64)
		return (0);
	if ((r->p[4] != 1 && r->p[4] != 2) || (r->p[5] != 1 && r->p[5] != 2))
		return (0);
	*is64 = r->p[4] == 2;
	r->be = r->p[5] == 2;
	*w = *is64 ? 8 : 4;
	return (1);
}

/*
 * The .gnu_debuglink section: the debug file's name (NUL-terminated,
 * padded to 4 bytes) and the CRC-32 of its contents.  Found by name
 * through the section header string table.
 */
int
hwtr_elf_debuglink(const void *buf, size_t len, char *name, size_t namelen,
    uint32_t *crc)
{
	struct elfr r = { buf, len, 0, NULL, 0 };
	uint64_t shoff, shentsize, shnum, shstrndx, stroff, strsize, v, i;
	uint64_t ent, sname, soff, ssize;
	int is64, w;
	size_t n;

	if (!quick_ident(&r, &is64, &w))
		return (0);
	rd(&r, 24 + 2 * w, w, &shoff);
	rd(&r, is64 ? 58 : 46, 2, &shentsize);
	rd(&r, is64 ? 60 : 48, 2, &shnum);
	rd(&r, is64 ? 62 : 50, 2, &shstrndx);
	if (shnum == 0 || shoff == 0 || shstrndx >= shnum ||
	    shentsize < (uint64_t)(is64 ? 64 : 40) || shoff > len ||
	    shnum * shentsize > len - shoff)
		return (0);
	ent = shoff + shstrndx * shentsize;
	rd(&r, ent + (is64 ? 24 : 16), w, &stroff);
	rd(&r, ent + (is64 ? 32 : 20), w, &strsize);
	if (stroff > len || strsize > len - stroff)
		return (-HWTR_E_FORMAT);
	for (i = 0; i < shnum; i++) {
		ent = shoff + i * shentsize;
		rd(&r, ent, 4, &sname);
		rd(&r, ent + 4, 4, &v);
		if (v == 8 /* SHT_NOBITS */ || sname >= strsize ||
		    strsize - sname < sizeof(".gnu_debuglink") ||
		    memcmp(r.p + stroff + sname, ".gnu_debuglink",
		    sizeof(".gnu_debuglink")) != 0)
			continue;
		rd(&r, ent + (is64 ? 24 : 16), w, &soff);
		rd(&r, ent + (is64 ? 32 : 20), w, &ssize);
		if (soff > len || ssize > len - soff || ssize < 8)
			return (-HWTR_E_FORMAT);
		n = strnlen((const char *)r.p + soff, (size_t)ssize);
		if (n == 0 || n >= namelen || ((n + 4) & ~(size_t)3) + 4 > ssize)
			return (-HWTR_E_FORMAT);
		memcpy(name, r.p + soff, n);
		name[n] = '\0';
		rd(&r, soff + ((n + 4) & ~(size_t)3), 4, &v);
		*crc = (uint32_t)v;
		return (1);
	}
	return (0);
}

/*
 * Look @name up in the symbol table: the section of type SHT_SYMTAB (2),
 * else SHT_DYNSYM (11), with the string table its sh_link names.  The
 * importer of perf.data needs it to place a vmlinux where perf did: at
 * the address its relocation symbol (_text) had in the running kernel.
 */
int
hwtr_elf_symbol(const void *buf, size_t len, const char *name,
    uint64_t *value)
{
	struct elfr r = { buf, len, 0, NULL, 0 };
	uint64_t shoff, shentsize, shnum, type, ent, want, i, k;
	uint64_t soff, ssize, link, stroff, strsize, sname, esz;
	size_t nlen = strlen(name);
	int is64, w;

	if (!quick_ident(&r, &is64, &w))
		return (0);
	esz = is64 ? 24 : 16;
	rd(&r, 24 + 2 * w, w, &shoff);
	rd(&r, is64 ? 58 : 46, 2, &shentsize);
	rd(&r, is64 ? 60 : 48, 2, &shnum);
	if (shnum == 0 || shoff == 0 ||
	    shentsize < (uint64_t)(is64 ? 64 : 40) || shoff > len ||
	    shnum * shentsize > len - shoff)
		return (0);
	for (want = 2; want != 0; want = want == 2 ? 11 : 0) {
		for (i = 0; i < shnum; i++) {
			ent = shoff + i * shentsize;
			rd(&r, ent + 4, 4, &type);
			if (type != want)
				continue;
			rd(&r, ent + (is64 ? 24 : 16), w, &soff);
			rd(&r, ent + (is64 ? 32 : 20), w, &ssize);
			rd(&r, ent + (is64 ? 40 : 24), 4, &link);
			if (soff > len || ssize > len - soff || link >= shnum)
				return (-HWTR_E_FORMAT);
			ent = shoff + link * shentsize;
			rd(&r, ent + (is64 ? 24 : 16), w, &stroff);
			rd(&r, ent + (is64 ? 32 : 20), w, &strsize);
			if (stroff > len || strsize > len - stroff)
				return (-HWTR_E_FORMAT);
			for (k = 0; k + esz <= ssize; k += esz) {
				rd(&r, soff + k, 4, &sname);
				if (sname >= strsize || strsize - sname <= nlen ||
				    memcmp(r.p + stroff + sname, name,
				    nlen + 1) != 0)
					continue;
				rd(&r, soff + k + (is64 ? 8 : 4), w, value);
				return (1);
			}
			return (0);
		}
	}
	return (0);
}

int
hwtr_open_regular(const char *path, struct stat *st, char *err,
    size_t errlen)
{
	/* Never blocks on a FIFO; refuses anything but a regular file. */
	return (hwtr_in_open(path, st, err, errlen));
}

int
hwtr_read_file(const char *path, uint64_t max, void **bufp, size_t *lenp,
    char *err, size_t errlen)
{
	return (hwtr_read_under(NULL, path, max, bufp, lenp, err, errlen));
}

int
hwtr_read_under(const char *dir, const char *path, uint64_t max,
    void **bufp, size_t *lenp, char *err, size_t errlen)
{
	struct stat st;
	int fd;

	*bufp = NULL;
	*lenp = 0;
	if ((fd = hwtr_in_open_under(dir, path, &st, err, errlen)) < 0)
		return (fd);
	return (hwtr_read_fd(fd, &st, path, max, bufp, lenp, err, errlen));
}

int
hwtr_read_fd(int fd, const struct stat *sp, const char *path, uint64_t max,
    void **bufp, size_t *lenp, char *err, size_t errlen)
{
	struct stat st = *sp;
	uint8_t *buf;
	size_t got = 0;
	ssize_t n;
	int e;

	*bufp = NULL;
	*lenp = 0;
	if ((uint64_t)st.st_size > max) {
		snprintf(err, errlen, "'%s' is larger than %ju bytes", path,
		    (uintmax_t)max);
		close(fd);
		return (-HWTR_E_LIMIT);
	}
	if ((buf = malloc(st.st_size > 0 ? (size_t)st.st_size : 1)) == NULL) {
		close(fd);
		return (-HWTR_E_NOMEM);
	}
	while (got < (size_t)st.st_size) {
		n = read(fd, buf + got, (size_t)st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			e = n < 0 ? errno : EIO;
			snprintf(err, errlen, "cannot read '%s': %s", path,
			    n < 0 ? strerror(e) : "file shrank while read");
			free(buf);
			close(fd);
			return (-HWTR_E_IO);
		}
		got += (size_t)n;
	}
	close(fd);
	*bufp = buf;
	*lenp = got;
	return (0);
}
