/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Symbols (libelf: .symtab, .dynsym and named PLT stubs) and source lines
 * (libdw: the DWARF line table) of one image held in memory.
 *
 * PLT stubs have no symbols of their own, yet a trace spends time in them
 * and a call tree without them mislabels every library call; they are
 * named "NAME@plt" the way objdump does, from .rela.plt (lazy and
 * .plt.sec stubs) and from the GLOB_DAT relocation of the GOT slot an
 * .plt.got stub jumps through.
 *
 * A stripped image may carry MiniDebugInfo (Fedora's and gdb's): in its
 * .gnu_debugdata section, an xz-compressed ELF file whose .symtab holds
 * the functions .dynsym lacks.
 */

#include <assert.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <inttypes.h>
#include <gelf.h>
#include <libelf.h>
#include <lzma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "hwtr_common.h"
#include "hwtr_elf.h"
#include "hwtr_ix.h"
#include "elfinline.h"

static int
add_sym(struct ix_elf *e, size_t *cap, uint64_t addr, uint64_t size,
    const char *name, const char *kind, const char *bind, const char *origin)
{
	struct ix_sym *s;

	if (hwtr_grow((void **)&e->syms, cap, e->nsyms + 1,
	    sizeof(*e->syms)) < 0)
		return (-1);
	s = &e->syms[e->nsyms];
	s->name = strdup(name);
	if (s->name == NULL)
		return (-1);
	s->dname = NULL;
	s->addr = addr;
	s->size = size;
	s->kind = kind;
	s->bind = bind;
	s->origin = origin;
	s->id = 0;
	s->code = strcmp(kind, "func") == 0 || strcmp(kind, "ifunc") == 0 ||
	    strcmp(kind, "plt") == 0;
	s->sec_end = UINT64_MAX;
	s->reach = addr + size;
	e->nsyms++;
	return (0);
}

/*
 * A symbol that can name code: a function, a PLT stub, or a label without
 * a type in an executable section (the "_start" of ld.so, written in
 * assembly), as gdb's minimal symbols and addr2line take them.
 */
static int
func_like(const struct ix_sym *s)
{
	return (s->code);
}

/* Functions before untyped labels at one address. */
static int
kind_rank(const struct ix_sym *s)
{
	return (!s->code ? 2 : strcmp(s->kind, "notype") == 0 ? 1 : 0);
}

static int
bind_rank(const char *b)
{
	return (strcmp(b, "global") == 0 ? 0 : strcmp(b, "weak") == 0 ? 1 : 2);
}

static int
sym_cmp(const void *a, const void *b)
{
	const struct ix_sym *x = a, *y = b;
	int r;

	if (x->addr != y->addr)
		return (x->addr < y->addr ? -1 : 1);
	if ((r = kind_rank(x) - kind_rank(y)) != 0)
		return (r);
	if ((r = bind_rank(x->bind) - bind_rank(y->bind)) != 0)
		return (r);
	if ((r = strcmp(x->name, y->name)) != 0)
		return (r);
	/* symtab before dynsym, so that duplicates keep the symtab entry. */
	return (strcmp(y->origin, x->origin));
}

/* Where each section of @elf ends, and whether it holds code. */
struct ix_secs {
	struct {
		uint64_t	end;
		int		exec;
	}		*s;
	size_t		n;
};

static int
read_secs(Elf *elf, struct ix_secs *t)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t k;

	t->s = NULL;
	t->n = 0;
	if (elf_getshdrnum(elf, &t->n) != 0 || t->n == 0)
		return (0);
	if ((t->s = calloc(t->n, sizeof(*t->s))) == NULL)
		return (-1);
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		if ((k = elf_ndxscn(scn)) >= t->n ||
		    gelf_getshdr(scn, &sh) == NULL)
			continue;
		t->s[k].end = sh.sh_addr + sh.sh_size;
		t->s[k].exec = (sh.sh_flags & SHF_ALLOC) &&
		    (sh.sh_flags & SHF_EXECINSTR);
	}
	return (0);
}

static int
read_symtab(struct ix_elf *e, Elf *elf, Elf_Scn *scn, GElf_Shdr *sh,
    const char *origin, size_t *cap)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	struct ix_secs secs;
	size_t i, n;
	GElf_Sym sym;
	int rc = -1;

	if (data == NULL || sh->sh_entsize == 0)
		return (0);
	if (read_secs(elf, &secs) < 0)
		return (-1);
	n = sh->sh_size / sh->sh_entsize;
	for (i = 1; i < n; i++) {
		const char *name, *kind, *bind;

		if (gelf_getsym(data, (int)i, &sym) == NULL)
			continue;
		if (sym.st_shndx == SHN_UNDEF || sym.st_shndx == SHN_ABS)
			continue;
		switch (GELF_ST_TYPE(sym.st_info)) {
		case STT_FUNC:
			kind = "func";
			break;
		case STT_GNU_IFUNC:
			kind = "ifunc";
			break;
		case STT_OBJECT:
		case STT_TLS:
			kind = "object";
			break;
		case STT_NOTYPE:
			kind = "notype";
			break;
		default:
			continue;
		}
		switch (GELF_ST_BIND(sym.st_info)) {
		case STB_GLOBAL:
			bind = "global";
			break;
		case STB_WEAK:
			bind = "weak";
			break;
		default:
			bind = "local";
			break;
		}
		name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (name == NULL || *name == '\0')
			continue;
		if (add_sym(e, cap, sym.st_value, sym.st_size, name, kind, bind,
		    origin) < 0)
			goto out;
		if (sym.st_shndx < secs.n) {
			struct ix_sym *s = &e->syms[e->nsyms - 1];

			s->sec_end = secs.s[sym.st_shndx].end;
			if (strcmp(kind, "notype") == 0)
				s->code = secs.s[sym.st_shndx].exec;
		}
	}
	rc = 0;
out:
	free(secs.s);
	return (rc);
}

/* The largest MiniDebugInfo ELF file decompressed; real ones are KBs. */
#define IX_MINIDEBUG_MAX	((size_t)256 << 20)

/*
 * The xz stream @in (borrowed), decompressed into a new buffer the caller
 * frees; NULL when it is not a whole xz stream or would exceed
 * IX_MINIDEBUG_MAX.
 */
static void *
unxz(const uint8_t *in, size_t inlen, size_t *outlen)
{
	lzma_stream z = LZMA_STREAM_INIT;
	lzma_ret r;
	uint8_t *out = NULL, *p;
	size_t cap = 0, n;

	if (lzma_stream_decoder(&z, IX_MINIDEBUG_MAX, 0) != LZMA_OK)
		return (NULL);
	z.next_in = in;
	z.avail_in = inlen;
	do {
		if (z.avail_out == 0) {
			assert(z.total_out == cap);
			n = cap ? cap * 2 : inlen * 4 + 4096;
			if (cap >= IX_MINIDEBUG_MAX ||
			    (p = realloc(out, n)) == NULL) {
				r = LZMA_MEM_ERROR;
				break;
			}
			out = p;
			z.next_out = out + cap;
			z.avail_out = n - cap;
			cap = n;
		}
		r = lzma_code(&z, LZMA_FINISH);
	} while (r == LZMA_OK);
	*outlen = z.total_out;
	lzma_end(&z);
	if (r != LZMA_STREAM_END) {
		free(out);
		return (NULL);
	}
	return (out);
}

/*
 * The symbols of the MiniDebugInfo in @scn (.gnu_debugdata), origin
 * "minidebuginfo".  A section that does not decompress to ELF is ignored,
 * as gdb ignores it: the image's other symbols still name its code.
 */
static int
read_minidebug(struct ix_elf *e, Elf_Scn *scn, size_t *cap)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	Elf_Scn *ms = NULL;
	GElf_Shdr sh;
	Elf *melf;
	void *mini;
	size_t mlen;
	int rc = 0;

	if (data == NULL || data->d_buf == NULL || data->d_size == 0 ||
	    (mini = unxz(data->d_buf, data->d_size, &mlen)) == NULL)
		return (0);
	if ((melf = elf_memory(mini, mlen)) != NULL &&
	    elf_kind(melf) == ELF_K_ELF)
		while (rc == 0 && (ms = elf_nextscn(melf, ms)) != NULL)
			if (gelf_getshdr(ms, &sh) != NULL &&
			    sh.sh_type == SHT_SYMTAB)
				rc = read_symtab(e, melf, ms, &sh,
				    "minidebuginfo", cap);
	if (melf != NULL)
		elf_end(melf);
	free(mini);
	return (rc);
}

static const char *
dynsym_name(Elf *elf, Elf_Data *dsym, size_t strndx, size_t idx)
{
	GElf_Sym sym;

	if (gelf_getsym(dsym, (int)idx, &sym) == NULL)
		return (NULL);
	return (elf_strptr(elf, strndx, sym.st_name));
}

struct slot {
	uint64_t	addr;		/* GOT slot */
	char		*name;
};

static int
slot_cmp(const void *a, const void *b)
{
	const struct slot *x = a, *y = b;

	return (x->addr < y->addr ? -1 : x->addr > y->addr);
}

/*
 * The function an IRELATIVE slot's resolver belongs to: the symbol at
 * @addr, an ifunc before a plain function, of aliases the one with the
 * fewest leading underscores ("strnlen", not "__strnlen").  The symbols
 * read so far, not sorted yet: a few dozen slots, a few thousand symbols.
 */
static const char *
resolver_name(const struct ix_elf *e, uint64_t addr)
{
	const char *best = NULL;
	size_t i, u, bu = 0;
	int rank, brank = 0;

	for (i = 0; i < e->nsyms; i++) {
		const struct ix_sym *s = &e->syms[i];

		if (s->addr != addr || s->name[0] == '\0')
			continue;
		rank = strcmp(s->kind, "ifunc") == 0 ? 2 :
		    strcmp(s->kind, "func") == 0 ? 1 : 0;
		u = strspn(s->name, "_");
		if (rank > 0 && (best == NULL || rank > brank ||
		    (rank == brank && u < bu))) {
			best = s->name;
			brank = rank;
			bu = u;
		}
	}
	return (best);
}

/*
 * Name the PLT stubs of an x86-64 ELF file.  Every stub jumps through a
 * GOT slot ("jmp *slot(%rip)", maybe after endbr64 and a bnd prefix), and
 * a relocation says what the slot holds: JUMP_SLOT and GLOB_DAT name a
 * symbol, IRELATIVE (static binaries) the address of a resolver, named by
 * the function symbol there (the STT_GNU_IFUNC "strchr" of a static glibc:
 * "strchr@plt"), or "*ABS*+0xADDR" as objdump does when there is none.
 * This covers .plt, .plt.sec and .plt.got alike.
 */
static int
read_plt(struct ix_elf *e, Elf *elf, size_t shstrndx, size_t *cap)
{
	struct slot *slots = NULL;
	size_t nslots = 0, cslots = 0, i, n;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh, lsh;
	GElf_Ehdr eh;
	GElf_Rela rela;
	char name[512];
	int rc = -1;

	if (gelf_getehdr(elf, &eh) == NULL || eh.e_machine != EM_X86_64)
		return (0);
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		Elf_Data *data, *ldata = NULL;
		Elf_Scn *lscn;

		if (gelf_getshdr(scn, &sh) == NULL || sh.sh_type != SHT_RELA ||
		    sh.sh_entsize == 0 || (data = elf_getdata(scn, NULL)) == NULL)
			continue;
		lscn = sh.sh_link ? elf_getscn(elf, sh.sh_link) : NULL;
		if (lscn != NULL && gelf_getshdr(lscn, &lsh) != NULL &&
		    (lsh.sh_type == SHT_DYNSYM || lsh.sh_type == SHT_SYMTAB))
			ldata = elf_getdata(lscn, NULL);
		n = sh.sh_size / sh.sh_entsize;
		for (i = 0; i < n; i++) {
			const char *sn = NULL;
			unsigned type;

			if (gelf_getrela(data, (int)i, &rela) == NULL)
				continue;
			type = GELF_R_TYPE(rela.r_info);
			if (type == R_X86_64_IRELATIVE) {
				sn = resolver_name(e, (uint64_t)rela.r_addend);
				if (sn == NULL) {
					snprintf(name, sizeof(name),
					    "*ABS*+%#llx",
					    (unsigned long long)rela.r_addend);
					sn = name;
				}
			} else if ((type == R_X86_64_JUMP_SLOT ||
			    type == R_X86_64_GLOB_DAT) && ldata != NULL) {
				sn = dynsym_name(elf, ldata, lsh.sh_link,
				    GELF_R_SYM(rela.r_info));
			}
			if (sn == NULL || *sn == '\0')
				continue;
			if (nslots == cslots) {
				size_t c = cslots ? cslots * 2 : 64;
				void *p = realloc(slots, c * sizeof(*slots));

				if (p == NULL)
					goto out;
				slots = p;
				cslots = c;
			}
			slots[nslots].addr = rela.r_offset;
			if ((slots[nslots].name = strdup(sn)) == NULL)
				goto out;
			nslots++;
		}
	}
	if (nslots == 0) {
		rc = 0;
		goto out;
	}
	qsort(slots, nslots, sizeof(*slots), slot_cmp);
	scn = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		const char *sname;
		Elf_Data *data;
		const uint8_t *p;
		size_t ent, off, k;

		if (gelf_getshdr(scn, &sh) == NULL ||
		    sh.sh_type != SHT_PROGBITS ||
		    (sname = elf_strptr(elf, shstrndx, sh.sh_name)) == NULL ||
		    strncmp(sname, ".plt", 4) != 0 ||
		    (data = elf_getdata(scn, NULL)) == NULL ||
		    data->d_buf == NULL)
			continue;
		ent = sh.sh_entsize ? sh.sh_entsize :
		    (sh.sh_addralign >= 16 ? 16 : 8);
		p = data->d_buf;
		for (off = 0; off + ent <= data->d_size; off += ent) {
			for (k = 0; k + 6 <= ent; k++) {
				int32_t disp;
				uint64_t slot;
				size_t lo = 0, hi = nslots;

				if (p[off + k] != 0xff || p[off + k + 1] != 0x25)
					continue;
				memcpy(&disp, p + off + k + 2, 4);
				slot = sh.sh_addr + off + k + 6 +
				    (uint64_t)(int64_t)disp;
				while (lo < hi) {
					size_t mid = (lo + hi) / 2;

					if (slots[mid].addr < slot)
						lo = mid + 1;
					else
						hi = mid;
				}
				if (lo < nslots && slots[lo].addr == slot) {
					snprintf(name, sizeof(name), "%s@plt",
					    slots[lo].name);
					if (add_sym(e, cap, sh.sh_addr + off, ent,
					    name, "plt", "local", "plt") < 0)
						goto out;
				}
				break;
			}
		}
	}
	rc = 0;
out:
	for (i = 0; i < nslots; i++)
		free(slots[i].name);
	free(slots);
	return (rc);
}

/*
 * File names of a line table, interned: an open-addressing table of
 * indexes + 1 into e->files by the name's hash.  libc's debug file names
 * a few thousand files over a million line rows; a scan of the names for
 * each row was a seventh of a lazy query's time (hwtrace-query(1)).
 */
struct ix_ftab {
	size_t		*slot;
	size_t		cap;		/* a power of 2, or 0 */
};

static uint64_t
name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s != '\0'; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ULL;
	}
	return (h);
}

static int
ftab_grow(struct ix_elf *e, struct ix_ftab *t)
{
	size_t ncap = t->cap ? t->cap * 2 : 256, i, k;
	size_t *ns = calloc(ncap, sizeof(*ns));

	if (ns == NULL)
		return (-1);
	for (i = 0; i < e->nfiles; i++) {
		k = (size_t)name_hash(e->files[i]) & (ncap - 1);
		while (ns[k] != 0)
			k = (k + 1) & (ncap - 1);
		ns[k] = i + 1;
	}
	free(t->slot);
	t->slot = ns;
	t->cap = ncap;
	return (0);
}

static int64_t
intern_file(struct ix_elf *e, size_t *cap, struct ix_ftab *t,
    const char *path)
{
	size_t k;

	/* Line tables name few files per CU, mostly the same one in a row. */
	if (e->nfiles > 0 && strcmp(e->files[e->nfiles - 1], path) == 0)
		return ((int64_t)e->nfiles - 1);
	if ((t->slot == NULL || (e->nfiles + 1) * 2 > t->cap) &&
	    ftab_grow(e, t) < 0)
		return (-1);
	k = (size_t)name_hash(path) & (t->cap - 1);
	for (; t->slot[k] != 0; k = (k + 1) & (t->cap - 1))
		if (strcmp(e->files[t->slot[k] - 1], path) == 0)
			return ((int64_t)t->slot[k] - 1);
	if (e->nfiles == *cap) {
		size_t n = *cap ? *cap * 2 : 64;
		void *p = realloc(e->files, n * sizeof(*e->files));

		if (p == NULL)
			return (-1);
		e->files = p;
		*cap = n;
	}
	e->files[e->nfiles] = strdup(path);
	if (e->files[e->nfiles] == NULL)
		return (-1);
	t->slot[k] = e->nfiles + 1;
	return ((int64_t)e->nfiles++);
}

/*
 * Line rows as read are kept in libdw's order (a row's index is that
 * order), their is_stmt also holding LT_ENDSEQ for an end of sequence.
 */
#define LT_ENDSEQ	2

struct line_key {
	uint64_t	addr;
	uint32_t	i;		/* into the rows */
	uint32_t	endseq;		/* the row's */
};

/*
 * The order of line rows @t (@n of them): by address; at one address,
 * ends of sequences first (a sequence may end where another begins, and
 * the row that starts code must win there), then as libdw gave them
 * (@order).  A stable radix sort on the address, a byte a pass (passes
 * whose byte all rows share are skipped), of the ends of sequences
 * followed by the other rows.  libc's debug file gives 291,211 rows
 * (182,640 kept): qsort() took 101 M instructions more than this to
 * order them and gzip's, 4% of indexing a trace of gzip that ran 185,007
 * (callgrind).  Into @out, n entries; -1 out of memory.
 */
static int
line_order(const struct ix_line *t, size_t n, struct line_key *out)
{
	struct line_key *tmp, *a = out, *b, *sw;
	size_t cnt[256], i, k, pos;
	unsigned shift;

	if ((tmp = malloc(n * sizeof(*tmp))) == NULL)
		return (-1);
	b = tmp;
	for (i = 0, k = 0; i < n; i++)
		if (t[i].is_stmt & LT_ENDSEQ)
			a[k++] = (struct line_key){ t[i].addr,
			    (uint32_t)i, 1 };
	for (i = 0; i < n; i++)
		if (!(t[i].is_stmt & LT_ENDSEQ))
			a[k++] = (struct line_key){ t[i].addr,
			    (uint32_t)i, 0 };
	for (shift = 0; shift < 64; shift += 8) {
		memset(cnt, 0, sizeof(cnt));
		for (i = 0; i < n; i++)
			cnt[(a[i].addr >> shift) & 0xff]++;
		if (cnt[(a[0].addr >> shift) & 0xff] == n)
			continue;
		for (i = 0, pos = 0; i < 256; i++) {
			k = cnt[i];
			cnt[i] = pos;
			pos += k;
		}
		for (i = 0; i < n; i++)
			b[cnt[(a[i].addr >> shift) & 0xff]++] = a[i];
		sw = a;
		a = b;
		b = sw;
	}
	if (a != out)
		memcpy(out, a, n * sizeof(*out));
	free(tmp);
	return (0);
}

/*
 * How many rows the line tables of @dw's units hold, at most: read once
 * here (libdw keeps each unit's table), so that the rows are stored in
 * one allocation of their size.  Growing it by doubling copied libc's
 * rows (323,429 with the ends of sequences) into memory touched for the
 * first time at each step: of the 20,490 page faults of indexing a
 * capture of gzip that ran 185,007 instructions, 6,100 were those copies.
 */
static size_t
count_lines(Dwarf *dw)
{
	Dwarf_Off off = 0, next;
	size_t hsize, total = 0;

	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die die;
		Dwarf_Lines *lines;
		size_t nl = 0;

		if (dwarf_offdie(dw, off + hsize, &die) != NULL &&
		    dwarf_hasattr(&die, DW_AT_stmt_list) &&
		    dwarf_getsrclines(&die, &lines, &nl) == 0 &&
		    nl <= SIZE_MAX - total)
			total += nl;
		off = next;
	}
	return (total);
}

static int
read_lines(struct ix_elf *e, Dwarf *dw, char *warn, size_t warnlen)
{
	Dwarf_Off off = 0, next;
	size_t hsize, fcap = 0, cap, n = 0, i, j, nbad = 0;
	struct ix_line *tmp = NULL;
	struct line_key *ord = NULL;
	struct ix_ftab ft = { NULL, 0 };
	int rc = 0, cu;

	if (dw == NULL)
		return (0);
	if ((cap = count_lines(dw)) > UINT32_MAX) {
		snprintf(warn, warnlen, "more than %" PRIu32 " line table "
		    "rows", UINT32_MAX);
		return (1);
	}
	if (cap > 0 && (cap > SIZE_MAX / sizeof(*tmp) ||
	    (tmp = malloc(cap * sizeof(*tmp))) == NULL))
		return (-1);
	while ((cu = dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL,
	    NULL)) == 0) {
		Dwarf_Die die;
		Dwarf_Lines *lines = NULL;
		size_t nl = 0;

		if (dwarf_offdie(dw, off + hsize, &die) == NULL ||
		    (dwarf_hasattr(&die, DW_AT_stmt_list) &&
		    dwarf_getsrclines(&die, &lines, &nl) != 0)) {
			if (nbad++ == 0)
				snprintf(warn, warnlen, "compilation unit at "
				    "%#" PRIx64 " of .debug_info: libdw: %s",
				    (uint64_t)off, dwarf_errmsg(-1));
		} else if (dwarf_hasattr(&die, DW_AT_stmt_list)) {
			/* Counted above: a unit read again the same. */
			for (i = 0; i < nl && n < cap; i++) {
				Dwarf_Line *l = dwarf_onesrcline(lines, i);
				Dwarf_Addr a;
				int ln = 0, col = 0;
				bool stmt = false, endseq = false;
				const char *src;
				int64_t f;

				if (l == NULL || dwarf_lineaddr(l, &a) != 0)
					continue;
				/*
				 * End-of-sequence rows are kept as the end of
				 * the row before them: code after a sequence
				 * (libc without line information in a static
				 * binary) has no line and must not borrow the
				 * last line of the CU before it.
				 */
				(void)dwarf_lineendsequence(l, &endseq);
				src = endseq ? NULL : dwarf_linesrc(l, NULL, NULL);
				if (src == NULL && !endseq)
					continue;
				(void)dwarf_lineno(l, &ln);
				(void)dwarf_linecol(l, &col);
				(void)dwarf_linebeginstatement(l, &stmt);
				f = endseq ? 0 : intern_file(e, &fcap, &ft, src);
				if (f < 0) {
					rc = -1;
					goto out;
				}
				tmp[n].addr = a;
				tmp[n].file = f;
				tmp[n].line = ln;
				tmp[n].col = col;
				tmp[n].is_stmt = stmt |
				    (endseq ? LT_ENDSEQ : 0);
				tmp[n].end = a;
				n++;
			}
		}
		off = next;
	}
	if (cu < 0 && nbad++ == 0)
		snprintf(warn, warnlen, ".debug_info after %#" PRIx64
		    ": libdw: %s", (uint64_t)off, dwarf_errmsg(-1));
	if (nbad > 1 && strlen(warn) + 1 < warnlen)
		snprintf(warn + strlen(warn), warnlen - strlen(warn),
		    " (and %zu more)", nbad - 1);
	if (nbad > 0)
		rc = 1;
	if (n == 0)
		goto out;
	e->lines = malloc(n * sizeof(*e->lines));
	if (e->lines == NULL || (ord = malloc(n * sizeof(*ord))) == NULL ||
	    line_order(tmp, n, ord) < 0) {
		rc = -1;
		goto out;
	}
	/*
	 * The last row at an address is the one that applies; it reaches up
	 * to the next row's address, which is an end of sequence where the
	 * code with lines stops.  Ends of sequences are not rows of their own.
	 */
	for (i = 0, j = 0; i < n; i++) {
		if (i + 1 < n && ord[i + 1].addr == ord[i].addr)
			continue;
		if (ord[i].endseq)
			continue;
		e->lines[j] = tmp[ord[i].i];
		e->lines[j].is_stmt &= ~LT_ENDSEQ;
		e->lines[j].end = i + 1 < n ? ord[i + 1].addr :
		    ord[i].addr + 1;
		j++;
	}
	e->nlines = j;
out:
	free(ord);
	free(tmp);
	free(ft.slot);
	return (rc);
}

/*
 * The DWARF of an ELF file held in memory.  Compressed debug sections
 * (gcc -gz, Go, distributions' debug files) are read from a copy with
 * them decompressed (hwtr_elf_inflate()): libelf would decompress them
 * by writing the section headers in the caller's buffer, a read-only
 * mapping of the image (SIGSEGV), and Debian 12's knows no zstd.
 */
struct ix_dwarf {
	Dwarf		*dw;		/* NULL: no DWARF */
	Elf		*elf;		/* over copy, or NULL */
	void		*copy;
};

/* @elf has a section named @name. */
static int
has_section(Elf *elf, const char *name)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	const char *sn;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return (0);
	while ((scn = elf_nextscn(elf, scn)) != NULL)
		if (gelf_getshdr(scn, &sh) != NULL && (sn = elf_strptr(elf,
		    shstrndx, sh.sh_name)) != NULL && strcmp(sn, name) == 0)
			return (1);
	return (0);
}

/*
 * Open the DWARF of @elf, the ELF file @buf of @len bytes (borrowed; must
 * outlive @d).  0; 1 when some debug section is unreadable, @warn saying
 * which (the others are read); -1 out of memory.
 */
static int
dwarf_open(struct ix_dwarf *d, Elf *elf, const void *buf, size_t len,
    char *warn, size_t warnlen)
{
	size_t clen;
	int rc;

	memset(d, 0, sizeof(*d));
	rc = hwtr_elf_inflate(buf, len, &d->copy, &clen, warn, warnlen);
	if (rc == -HWTR_E_NOMEM)
		return (-1);
	if (rc < 0) {
		snprintf(warn, warnlen, "section headers cut or past the end");
		return (1);
	}
	if (rc > 0) {
		assert(d->copy != NULL);
		if ((d->elf = elf_memory(d->copy, clen)) == NULL) {
			snprintf(warn, warnlen, "libelf: %s", elf_errmsg(-1));
			return (1);
		}
		elf = d->elf;
	}
	d->dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	if (d->dw == NULL && rc != 2 && has_section(elf, ".debug_info")) {
		snprintf(warn, warnlen, "libdw: %s", dwarf_errmsg(-1));
		return (1);
	}
	return (rc == 2);
}

static void
dwarf_close(struct ix_dwarf *d)
{
	if (d->dw != NULL)
		dwarf_end(d->dw);
	if (d->elf != NULL)
		elf_end(d->elf);
	free(d->copy);
	memset(d, 0, sizeof(*d));
}

/*
 * Lines of @elf (the file @buf, @len bytes) into @e.  0, 1 with @err
 * saying what of its DWARF is unreadable (@what names the file), -1 out
 * of memory.
 */
static int
lines_of(struct ix_elf *e, Elf *elf, const void *buf, size_t len,
    const char *what, char *err, size_t errlen)
{
	struct ix_dwarf d;
	char warn[256], more[256];
	int rc, lr;

	if ((rc = dwarf_open(&d, elf, buf, len, warn, sizeof(warn))) < 0)
		return (-1);
	/* The first warning is kept. */
	if ((lr = read_lines(e, d.dw, rc ? more : warn, rc ? sizeof(more) :
	    sizeof(warn))) < 0) {
		dwarf_close(&d);
		return (-1);
	}
	if (lr > 0)
		rc = 1;
	/* Inlined subroutines from the same DWARF (elfinline.c). */
	if (ix_inl_read(e, d.dw) < 0) {
		dwarf_close(&d);
		return (-1);
	}
	if (rc > 0)
		snprintf(err, errlen, "DWARF of %s: %s; lines there are "
		    "missing", what, warn);
	dwarf_close(&d);
	return (rc);
}

static int
plt0_push(const uint8_t *p)
{
	static const uint8_t endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };

	if (memcmp(p, endbr64, 4) == 0)
		p += 4;
	return (p[0] == 0xff && p[1] == 0x35);
}

/*
 * A code symbol of size 0 (crtstuff's deregister_tm_clones, _init, ld.so's
 * _start label) names the code from its address to the next code symbol
 * or the end of its section, as addr2line and perf name it; none inside
 * a function with a size, whose own name wins there.
 */
static void
set_reach(struct ix_elf *e)
{
	uint64_t cover = 0;
	size_t i, k;

	for (i = 0; i < e->nsyms; i++) {
		struct ix_sym *s = &e->syms[i];

		if (!func_like(s))
			continue;
		if (s->size > 0) {
			s->reach = s->addr + s->size;
			if (s->reach > cover)
				cover = s->reach;
			continue;
		}
		s->reach = s->addr;
		if (s->addr < cover)
			continue;
		for (k = i + 1; k < e->nsyms; k++)
			if (func_like(&e->syms[k]) &&
			    e->syms[k].addr > s->addr)
				break;
		s->reach = k < e->nsyms ? e->syms[k].addr : UINT64_MAX;
		if (s->reach > s->sec_end)
			s->reach = s->sec_end;
		if (s->reach <= s->addr)
			s->reach = s->addr + 1;
	}
}

/* Sort by address; a name at an address found in two tables appears once. */
static void
sort_syms(struct ix_elf *e)
{
	size_t i, j;

	if (e->nsyms == 0)
		return;
	qsort(e->syms, e->nsyms, sizeof(*e->syms), sym_cmp);
	for (i = 1, j = 1; i < e->nsyms; i++) {
		struct ix_sym *p = &e->syms[j - 1], *s = &e->syms[i];

		if (s->addr == p->addr && strcmp(s->name, p->name) == 0) {
			free(s->name);
			free(s->dname);
			continue;
		}
		e->syms[j++] = *s;
	}
	e->nsyms = j;
	set_reach(e);
}

/*
 * The function of the first @n symbols of @e (sorted by sort_syms())
 * that covers @addr, or NULL.
 */
static const struct ix_sym *
func_of(const struct ix_elf *e, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n, k, steps;
	const struct ix_sym *best = NULL;

	/* The last symbol at or below @addr. */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (e->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/*
	 * Walk down to a function that covers it (aliases, nested objects);
	 * a symbol of size 0 covers what set_reach() gave it.
	 */
	for (k = lo, steps = 0; k > 0 && steps < 32; k--, steps++) {
		const struct ix_sym *s = &e->syms[k - 1];

		if (!func_like(s))
			continue;
		assert(s->size == 0 || s->reach == s->addr + s->size);
		if (addr < s->reach)
			best = s;	/* keep the first in sorted order */
		if (best != NULL && (k < 2 || e->syms[k - 2].addr != s->addr))
			return (best);
	}
	return (best);
}

/* A signed 32-bit little-endian value at @p. */
static int64_t
rd_s32(const uint8_t *p)
{
	int32_t v;

	memcpy(&v, p, 4);
	return ((int64_t)v);
}

/*
 * Functions without a symbol (a stripped image), recovered from the
 * unwind tables every x86-64 function compiled by GCC or Clang has: the
 * starts from .eh_frame_hdr's sorted table, each range from its FDE
 * (pc_begin, pc_range).  Each range no function symbol covers becomes a
 * function named "BASE+0xADDR" (link-time address), origin "eh_frame".
 * Only the encodings x86-64 toolchains write are read (table: pcrel
 * sdata4 pointer, udata4 count, datarel sdata4 entries; FDE: pcrel
 * sdata4 pc_begin, checked against the table); an FDE read otherwise
 * ends at the next start.  Returns how many were added.
 */
static int
recover_funcs(struct ix_elf *e, Elf *elf, size_t shstrndx, const char *base,
    size_t *cap)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	Elf_Data *hd = NULL, *fd = NULL;
	const uint8_t *p, *f = NULL;
	uint64_t hdr = 0, fa = 0, fsz = 0, k, nfde;
	char name[512];
	int added = 0;
	size_t nsorted = e->nsyms;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		const char *sname;

		if (gelf_getshdr(scn, &sh) == NULL ||
		    sh.sh_type != SHT_PROGBITS ||
		    (sname = elf_strptr(elf, shstrndx, sh.sh_name)) == NULL)
			continue;
		if (strcmp(sname, ".eh_frame_hdr") == 0) {
			hd = elf_getdata(scn, NULL);
			hdr = sh.sh_addr;
		} else if (strcmp(sname, ".eh_frame") == 0 &&
		    (fd = elf_getdata(scn, NULL)) != NULL) {
			f = fd->d_buf;
			fa = sh.sh_addr;
			fsz = fd->d_size;
		}
	}
	if (hd == NULL || hd->d_buf == NULL || hd->d_size < 12)
		return (0);
	p = hd->d_buf;
	if (p[0] != 1 || p[1] != 0x1b || p[2] != 0x03 || p[3] != 0x3b)
		return (0);
	memcpy(&k, p + 8, 4);
	nfde = (uint32_t)k;
	if (nfde > (hd->d_size - 12) / 8)
		return (0);
	for (k = 0; k < nfde; k++) {
		uint64_t start = hdr + (uint64_t)rd_s32(p + 12 + 8 * k);
		uint64_t fde = hdr + (uint64_t)rd_s32(p + 16 + 8 * k);
		uint64_t size = 0, o;
		uint32_t range;

		if (f != NULL && fde >= fa && fde - fa + 16 <= fsz) {
			o = fde - fa;
			if (fa + o + 8 + (uint64_t)rd_s32(f + o + 8) == start) {
				memcpy(&range, f + o + 12, 4);
				size = range;
			}
		}
		if (size == 0 && k + 1 < nfde)
			size = hdr + (uint64_t)rd_s32(p + 12 + 8 * (k + 1)) -
			    start;
		/*
		 * Against the symbols read, which are sorted: those added
		 * here come after them, out of order, which the search
		 * cannot take (it then found a function far away that
		 * "covered" the start, and named hardly any).
		 */
		if (size == 0 || size > (1u << 28) ||
		    func_of(e, nsorted, start) != NULL)
			continue;
		snprintf(name, sizeof(name), "%s+%#" PRIx64,
		    base != NULL ? base : "image", start);
		if (add_sym(e, cap, start, size, name, "func", "local",
		    "eh_frame") < 0)
			return (-1);
		added++;
	}
	return (added);
}

/* e_entry and the PT_LOAD segments of @elf; -1: out of memory. */
static int
read_loads(struct ix_elf *e, Elf *elf)
{
	GElf_Ehdr eh;
	GElf_Phdr ph;
	size_t nph, i;

	if (gelf_getehdr(elf, &eh) != NULL &&
	    (eh.e_type == ET_EXEC || eh.e_type == ET_DYN))
		e->entry = eh.e_entry;
	if (elf_getphdrnum(elf, &nph) != 0 || nph == 0)
		return (0);
	if ((e->loads = calloc(nph, sizeof(*e->loads))) == NULL)
		return (-1);
	for (i = 0; i < nph; i++) {
		if (gelf_getphdr(elf, (int)i, &ph) == NULL ||
		    ph.p_type != PT_LOAD)
			continue;
		e->loads[e->nloads].off = ph.p_offset;
		e->loads[e->nloads].filesz = ph.p_filesz;
		e->loads[e->nloads].vaddr = ph.p_vaddr;
		e->loads[e->nloads].flags = ph.p_flags;
		e->nloads++;
	}
	return (0);
}

/* @buf as ELF (e->elf set), or NULL when it is not ELF. */
static Elf *
elf_open(struct ix_elf *e, const void *buf, size_t len)
{
	Elf *elf = elf_memory((char *)(uintptr_t)buf, len);

	if (elf == NULL || elf_kind(elf) != ELF_K_ELF) {
		if (elf != NULL)
			elf_end(elf);
		return (NULL);
	}
	e->elf = 1;
	return (elf);
}

int
ix_elf_load_hdr(struct ix_elf *e, const void *buf, size_t len)
{
	Elf *elf;
	int no_host = e->no_host, rc;

	memset(e, 0, sizeof(*e));
	e->no_host = no_host;
	/* Not ELF, or no libelf: what ix_elf_load() will say, if anything. */
	if (elf_version(EV_CURRENT) == EV_NONE)
		return (0);
	if ((elf = elf_open(e, buf, len)) == NULL)
		return (0);
	rc = read_loads(e, elf);
	elf_end(elf);
	return (rc);
}

int
ix_elf_load(struct ix_elf *e, const void *buf, size_t len, const void *dbg,
    size_t dbglen, const char *base, char *err, size_t errlen)
{
	Elf *elf, *delf = NULL;
	Elf_Scn *scn = NULL, *mini = NULL;
	GElf_Shdr sh;
	size_t shstrndx, cap = 0, i;
	char wbuf[256];
	int warned, has_symtab = 0, no_host = e->no_host;
	int rc = -1;

	memset(e, 0, sizeof(*e));
	e->no_host = no_host;
	if (elf_version(EV_CURRENT) == EV_NONE) {
		snprintf(err, errlen, "libelf: %s", elf_errmsg(-1));
		return (-1);
	}
	/* Not ELF (a raw memory dump): no symbols, not an error. */
	if ((elf = elf_open(e, buf, len)) == NULL)
		return (0);
	if (read_loads(e, elf) < 0)
		goto out;
	if (elf_getshdrstrndx(elf, &shstrndx) != 0) {
		rc = 0;
		goto out;
	}
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		const char *sname;
		Elf_Data *data;

		if (gelf_getshdr(scn, &sh) == NULL)
			continue;
		if (sh.sh_type == SHT_PROGBITS && (sh.sh_flags & SHF_EXECINSTR) &&
		    (sname = elf_strptr(elf, shstrndx, sh.sh_name)) != NULL &&
		    (strcmp(sname, ".plt") == 0 || strcmp(sname, ".plt.sec") == 0 ||
		    strcmp(sname, ".plt.got") == 0) && e->nplts < 4) {
			e->plts[e->nplts].lo = sh.sh_addr;
			e->plts[e->nplts].hi = sh.sh_addr + sh.sh_size;
			e->nplts++;
			/*
			 * The lazy-binding header: pushq GOT+8 (ff 35, maybe
			 * after endbr64); jmp *GOT+16.  A static binary's
			 * .plt has stubs only.
			 */
			if (strcmp(sname, ".plt") == 0 && sh.sh_size >= 16 &&
			    (data = elf_getdata(scn, NULL)) != NULL &&
			    data->d_buf != NULL && data->d_size >= 16 &&
			    plt0_push(data->d_buf)) {
				e->has_plt0 = 1;
				e->plt0 = sh.sh_addr;
				e->plt0_end = sh.sh_addr + 16;
			}
		}
		if (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM)
			if (read_symtab(e, elf, scn, &sh, sh.sh_type ==
			    SHT_SYMTAB ? "symtab" : "dynsym", &cap) < 0)
				goto nomem;
		if (sh.sh_type == SHT_SYMTAB)
			has_symtab = 1;
		if (sh.sh_type == SHT_PROGBITS &&
		    (sname = elf_strptr(elf, shstrndx, sh.sh_name)) != NULL &&
		    strcmp(sname, ".gnu_debugdata") == 0)
			mini = scn;
	}
	/* MiniDebugInfo, as gdb: only without .symtab or a debug file. */
	if (mini != NULL && !has_symtab && dbg == NULL &&
	    read_minidebug(e, mini, &cap) < 0)
		goto nomem;
	/* A separate debug file: its symbol table (a stripped file has none). */
	if (dbg != NULL && (delf = elf_memory((char *)(uintptr_t)dbg,
	    dbglen)) != NULL && elf_kind(delf) == ELF_K_ELF) {
		scn = NULL;
		while ((scn = elf_nextscn(delf, scn)) != NULL)
			if (gelf_getshdr(scn, &sh) != NULL &&
			    sh.sh_type == SHT_SYMTAB &&
			    read_symtab(e, delf, scn, &sh, "debug", &cap) < 0)
				goto nomem;
	}
	if (read_plt(e, elf, shstrndx, &cap) < 0)
		goto nomem;
	sort_syms(e);
	if ((rc = recover_funcs(e, elf, shstrndx, base, &cap)) < 0) {
		rc = -1;
		goto nomem;
	}
	if (rc > 0)
		sort_syms(e);
	rc = -1;
	for (i = 0; i < e->nsyms; i++)
		if (e->syms[i].name[0] == '_')
			e->syms[i].dname = ix_demangle(e->syms[i].name);
	/* Lines from the debug file when it has them. */
	warned = 0;
	if (delf != NULL && elf_kind(delf) == ELF_K_ELF &&
	    (warned = lines_of(e, delf, dbg, dbglen, "its debug file", err,
	    errlen)) < 0)
		goto nomem;
	if (e->nlines == 0 && (rc = lines_of(e, elf, buf, len, "the image",
	    warned ? wbuf : err, warned ? sizeof(wbuf) : errlen)) != 0) {
		if (rc < 0)
			goto nomem;
		warned = 1;
	}
	ix_inl_sort(e);
	rc = warned;
	goto out;
nomem:
	snprintf(err, errlen, "out of memory");
out:
	if (delf != NULL)
		elf_end(delf);
	elf_end(elf);
	return (rc);
}

void
ix_elf_free(struct ix_elf *e)
{
	size_t i;

	if (e == NULL)
		return;
	for (i = 0; i < e->nsyms; i++) {
		free(e->syms[i].name);
		free(e->syms[i].dname);
	}
	free(e->syms);
	for (i = 0; i < e->nfiles; i++)
		free(e->files[i]);
	free(e->files);
	free(e->lines);
	free(e->loads);
	ix_inl_free(e);
	memset(e, 0, sizeof(*e));
}

const struct ix_sym *
ix_elf_func(const struct ix_elf *e, uint64_t addr)
{
	return (func_of(e, e->nsyms, addr));
}

const struct ix_line *
ix_elf_line(const struct ix_elf *e, uint64_t addr)
{
	size_t lo = 0, hi = e->nlines;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (e->lines[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || addr >= e->lines[lo - 1].end)
		return (NULL);
	return (&e->lines[lo - 1]);
}

int
ix_elf_plt(const struct ix_elf *e, uint64_t addr)
{
	size_t i;

	if (e->has_plt0 && addr >= e->plt0 && addr < e->plt0_end)
		return (2);
	for (i = 0; i < e->nplts; i++)
		if (addr >= e->plts[i].lo && addr < e->plts[i].hi)
			return (1);
	return (0);
}

/*
 * Which PT_LOAD segment a mapping of @len bytes of the file from @pgoff,
 * with protection @prot (PROT_*, 0: not known), maps, and so the image's
 * load bias.  A loader maps each segment from its offset rounded down to
 * a page, so with lld's, gold's and mold's layouts, where segments share
 * file pages and p_vaddr - p_offset differs from one to the next, the
 * segment holding @pgoff is often not the mapped one: lld's text segment
 * at offset 0x680 and address 0x1680 is mapped from offset 0, which the
 * read-only first segment holds.  The segments whose bytes the mapping
 * covers are the candidates; one whose execute and write permissions
 * agree with @prot is preferred (RELRO makes a writable segment read-only
 * later, so a read-only mapping still takes a writable one), then one
 * holding @pgoff, then the first.  The mapping's byte at @pgoff is at
 * @start, the segment's at bias + p_vaddr: bias = start + p_offset -
 * pgoff - p_vaddr, whatever the rounding.  -1 when no segment is mapped.
 */
int
ix_elf_map_bias(const struct ix_elf *e, uint64_t start, uint64_t len,
    uint64_t pgoff, uint32_t prot, int64_t *biasp)
{
	size_t i, best = SIZE_MAX;
	int rank, brank = -1;

	for (i = 0; i < e->nloads; i++) {
		const struct ix_load *l = &e->loads[i];

		if (l->filesz == 0 || l->off >= pgoff + len ||
		    l->off + l->filesz <= pgoff)
			continue;
		rank = 0;
		if (prot != 0 && !(prot & PROT_EXEC) == !(l->flags & PF_X))
			rank += 4;
		if (prot != 0 && (prot & PROT_WRITE) && (l->flags & PF_W))
			rank += 2;
		if (pgoff >= l->off)
			rank += 1;
		if (rank > brank) {
			best = i;
			brank = rank;
		}
	}
	if (best == SIZE_MAX)
		return (-1);
	*biasp = (int64_t)(start + e->loads[best].off - pgoff -
	    e->loads[best].vaddr);
	return (0);
}
