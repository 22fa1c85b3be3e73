/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * --trigger SYMBOL: find the function in the ELF symbol tables (.symtab,
 * then .dynsym) of the executable the capture runs.  Only <elf.h> is
 * needed for that; everything read from the file is bounds-checked.
 */

#include <sys/mman.h>
#include <sys/stat.h>

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hwtr_common.h"
#include "capture.h"

/* argv[0] as execvp(3) would find it. */
static int
find_exe(const char *cmd, char *out, size_t len)
{
	const char *path, *p, *e;

	if (strchr(cmd, '/') != NULL) {
		snprintf(out, len, "%s", cmd);
		return (access(out, X_OK) == 0 ? 0 : -HWTR_E_NOENT);
	}
	if ((path = getenv("PATH")) == NULL)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path; ; p = e + 1) {
		e = strchr(p, ':');
		if (e == NULL)
			e = p + strlen(p);
		snprintf(out, len, "%.*s/%s", (int)(e - p), e == p ? "." : p,
		    cmd);
		if (access(out, X_OK) == 0)
			return (0);
		if (*e == '\0')
			break;
	}
	return (-HWTR_E_NOENT);
}

static int
lookup(const uint8_t *img, size_t size, const char *sym, uint64_t *vaddrp,
    int *piep)
{
	const Elf64_Ehdr *eh = (const void *)img;
	const Elf64_Shdr *sh, *s, *strs;
	const Elf64_Sym *st;
	size_t i, j, n;
	int pass;

	if (size < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64)
		return (-HWTR_E_FORMAT);
	if (eh->e_shoff == 0 || eh->e_shentsize != sizeof(Elf64_Shdr) ||
	    eh->e_shoff > size ||
	    (size - eh->e_shoff) / sizeof(Elf64_Shdr) < eh->e_shnum)
		return (-HWTR_E_FORMAT);
	sh = (const void *)(img + eh->e_shoff);
	*piep = eh->e_type == ET_DYN;
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < eh->e_shnum; i++) {
			s = &sh[i];
			if (s->sh_type != (pass == 0 ? SHT_SYMTAB : SHT_DYNSYM))
				continue;
			if (s->sh_link >= eh->e_shnum || s->sh_offset > size ||
			    s->sh_size > size - s->sh_offset)
				continue;
			strs = &sh[s->sh_link];
			if (strs->sh_offset > size ||
			    strs->sh_size > size - strs->sh_offset)
				continue;
			st = (const void *)(img + s->sh_offset);
			n = s->sh_size / sizeof(*st);
			for (j = 0; j < n; j++) {
				const char *name;

				if (st[j].st_name >= strs->sh_size ||
				    ELF64_ST_TYPE(st[j].st_info) != STT_FUNC ||
				    st[j].st_value == 0)
					continue;
				name = (const char *)img + strs->sh_offset +
				    st[j].st_name;
				if (strnlen(name, strs->sh_size -
				    st[j].st_name) == strs->sh_size -
				    st[j].st_name)
					continue;
				if (strcmp(name, sym) == 0) {
					*vaddrp = st[j].st_value;
					return (0);
				}
			}
		}
	}
	return (-HWTR_E_NOENT);
}

int
cap_trigger_resolve(struct cap *cap, const char *sym, uint64_t *vaddrp,
    int *piep)
{
	char exe[PATH_MAX];
	struct stat sb;
	void *img;
	int fd, rc;

	if (cap->cfg->argv != NULL) {
		if (find_exe(cap->cfg->argv[0], exe, sizeof(exe)) < 0) {
			snprintf(cap->res->errmsg, sizeof(cap->res->errmsg),
			    "cannot run '%.300s': command not found",
			    cap->cfg->argv[0]);
			return (-HWTR_E_NOENT);
		}
	} else
		snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)cap->cfg->pid);
	if ((fd = open(exe, O_RDONLY | O_CLOEXEC)) < 0 ||
	    fstat(fd, &sb) < 0) {
		snprintf(cap->res->errmsg, sizeof(cap->res->errmsg),
		    "--trigger: cannot read '%.300s': %s", exe, strerror(errno));
		if (fd >= 0)
			close(fd);
		return (-HWTR_E_IO);
	}
	img = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (img == MAP_FAILED) {
		snprintf(cap->res->errmsg, sizeof(cap->res->errmsg),
		    "--trigger: cannot read '%.300s': %s", exe, strerror(errno));
		return (-HWTR_E_IO);
	}
	rc = lookup(img, (size_t)sb.st_size, sym, vaddrp, piep);
	munmap(img, (size_t)sb.st_size);
	if (rc == -HWTR_E_FORMAT)
		snprintf(cap->res->errmsg, sizeof(cap->res->errmsg),
		    "--trigger: '%.300s' is not a 64-bit ELF file", exe);
	else if (rc < 0)
		snprintf(cap->res->errmsg, sizeof(cap->res->errmsg),
		    "--trigger: no function '%.100s' in the symbol tables of '%.300s'",
		    sym, exe);
	return (rc);
}
