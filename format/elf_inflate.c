/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Compressed debug sections, decompressed into a copy of the file that a
 * DWARF reader takes as it is.  Toolchains compress .debug_* sections two
 * ways: SHF_COMPRESSED (gABI; gcc -gz=zlib, objcopy
 * --compress-debug-sections=zstd, Go 1.20 on, distributions' debug files)
 * with an Elf_Chdr naming zlib or zstd, and the GNU ".zdebug_*" sections
 * (-gz=zlib-gnu, older Go): "ZLIB", the size as 8 big-endian bytes, a zlib
 * stream.  libelf decompresses the first kind by writing the section
 * headers where the file is, which an image mapped read-only cannot take,
 * and the elfutils of Debian 12 knows no zstd.  The copy holds the ELF
 * header, every section that is not loaded (the debug sections
 * decompressed, ".zdebug" renamed ".debug"; compressed location lists and
 * macros, which hwtrace does not read, empty), the loaded ones as SHT_NOBITS
 * with their addresses and sizes, and the section headers: a separate
 * debug file, as objcopy --only-keep-debug makes, and about as large as
 * the debug information.  Every offset and size is checked against the
 * buffer; a section that does not decompress becomes empty and is named,
 * the rest are kept.
 */

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "hwtr_common.h"
#include "hwtr_elf.h"

#define SHT_NOTE_	7
#define SHT_NOBITS_	8
#define SHF_ALLOC_	0x2u
#define SHF_COMPRESSED_	0x800u
#define ELFCOMPRESS_ZLIB_ 1
#define ELFCOMPRESS_ZSTD_ 2

/* A decompressed section is at most this large (a claim, not yet data). */
#define INFLATE_MAX	((uint64_t)4 << 30)
/*
 * Nor more than deflate can make of its compressed bytes: a 258-byte
 * match costs at least two bits, about 1032 to 1, with a margin for the
 * stream's header.  A hostile file claims gigabytes from a few bytes,
 * which the copy would allocate before decompressing.
 */
#define DEFLATE_RATIO	1032
#define DEFLATE_SLACK	1024

/* One section header, whatever the class. */
struct sec {
	uint64_t	name, type, flags, addr, off, size, link, info;
	uint64_t	align, entsize;
	/* In the copy: */
	uint64_t	nsize, nalign, noff, nname;
	int		how;		/* 0 copy, 1 SHF_COMPRESSED, 2 .zdebug */
};

struct elfw {
	const uint8_t	*p;
	size_t		len;
	int		be, is64;
	uint64_t	shnum, shstrndx;
	struct sec	*s;
	char		*warn;
	size_t		warnlen;
	int		nwarn;
};

static uint64_t
get(const struct elfw *w, uint64_t off, int n)
{
	uint64_t v = 0;
	int i;

	assert(off <= w->len && (uint64_t)n <= w->len - off);
	for (i = 0; i < n; i++)
		v |= (uint64_t)w->p[off + (uint64_t)(w->be ? n - 1 - i : i)] <<
		    (8 * i);
	return (v);
}

static void
put(const struct elfw *w, uint8_t *p, uint64_t v, int n)
{
	int i;

	for (i = 0; i < n; i++)
		p[w->be ? n - 1 - i : i] = (uint8_t)(v >> (8 * i));
}

static void
warn_sec(struct elfw *w, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Keep the first unreadable section's reason; count the others. */
static void
warn_sec(struct elfw *w, const char *name, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (w->nwarn++ == 0 && w->warn != NULL && w->warnlen > 0) {
		n = snprintf(w->warn, w->warnlen, "section '%s': ", name);
		if (n >= 0 && (size_t)n < w->warnlen) {
			va_start(ap, fmt);
			vsnprintf(w->warn + n, w->warnlen - (size_t)n, fmt, ap);
			va_end(ap);
		}
	}
}

/* The name of section @i, or "?" when its name lies outside .shstrtab. */
static const char *
sec_name(const struct elfw *w, uint64_t i)
{
	const struct sec *t;
	uint64_t o;

	if (w->shstrndx >= w->shnum)
		return ("?");
	t = &w->s[w->shstrndx];
	o = w->s[i].name;
	if (t->type == SHT_NOBITS_ || t->off > w->len ||
	    t->size > w->len - t->off || o >= t->size ||
	    memchr(w->p + t->off + o, '\0', t->size - o) == NULL)
		return ("?");
	return ((const char *)w->p + t->off + o);
}

/* Read the section headers; -HWTR_E_FORMAT when they are not there. */
static int
read_shdrs(struct elfw *w)
{
	uint64_t shoff, shentsize, ent, i;
	int ws = w->is64 ? 8 : 4;

	shoff = get(w, w->is64 ? 40 : 32, ws);
	shentsize = get(w, w->is64 ? 58 : 46, 2);
	w->shnum = get(w, w->is64 ? 60 : 48, 2);
	w->shstrndx = get(w, w->is64 ? 62 : 50, 2);
	if (shoff == 0) {
		w->shnum = 0;		/* no section headers, whatever it says */
		return (0);
	}
	if (shentsize < (uint64_t)(w->is64 ? 64 : 40) || shoff > w->len ||
	    w->len - shoff < shentsize)
		return (-HWTR_E_FORMAT);
	/* Extended numbering: the counts in section 0. */
	if (w->shnum == 0)
		w->shnum = get(w, shoff + (w->is64 ? 32 : 20), ws);
	if (w->shstrndx == 0xffff)
		w->shstrndx = get(w, shoff + (w->is64 ? 40 : 24), 4);
	if (w->shnum > (w->len - shoff) / shentsize)
		return (-HWTR_E_FORMAT);
	if ((w->s = calloc(w->shnum ? w->shnum : 1, sizeof(*w->s))) == NULL)
		return (-HWTR_E_NOMEM);
	for (i = 0; i < w->shnum; i++) {
		struct sec *s = &w->s[i];

		ent = shoff + i * shentsize;
		s->name = get(w, ent, 4);
		s->type = get(w, ent + 4, 4);
		s->flags = get(w, ent + 8, ws);
		s->addr = get(w, ent + 8 + (uint64_t)ws, ws);
		s->off = get(w, ent + 8 + 2 * (uint64_t)ws, ws);
		s->size = get(w, ent + 8 + 3 * (uint64_t)ws, ws);
		s->link = get(w, ent + 8 + 4 * (uint64_t)ws, 4);
		s->info = get(w, ent + 12 + 4 * (uint64_t)ws, 4);
		s->align = get(w, ent + 16 + 4 * (uint64_t)ws, ws);
		s->entsize = get(w, ent + 16 + 5 * (uint64_t)ws, ws);
	}
	return (0);
}

/*
 * The most section @s (SHF_COMPRESSED or .zdebug, its header read) can
 * decompress to: what deflate makes of its bytes at most, or what its
 * zstd frames say they hold when they all say (objcopy's do).
 */
static uint64_t
claim_limit(const struct elfw *w, const struct sec *s)
{
	uint64_t hdr = s->how == 1 ? (w->is64 ? 24 : 12) : 12;
	const uint8_t *p = w->p + s->off + hdr;
	uint64_t n = s->size - hdr, sum = 0;
	unsigned long long fcs;
	size_t fn;

	if (s->how != 1 || get(w, s->off, 4) != ELFCOMPRESS_ZSTD_)
		return (n * DEFLATE_RATIO + DEFLATE_SLACK);
	while (n > 0) {
		fcs = ZSTD_getFrameContentSize(p, (size_t)n);
		fn = ZSTD_findFrameCompressedSize(p, (size_t)n);
		/* Not a frame: decompressing says why. */
		if (fcs == ZSTD_CONTENTSIZE_ERROR || ZSTD_isError(fn) ||
		    fn == 0)
			return (s->nsize);
		if (fcs == ZSTD_CONTENTSIZE_UNKNOWN || fcs > INFLATE_MAX - sum)
			return (INFLATE_MAX);
		sum += fcs;
		p += fn;
		n -= fn;
	}
	return (sum);
}

/*
 * Whether a debug section named ".@rest" is one no reader of the copy
 * asks for: location lists and macros (libc's debug file: 1.4 of its
 * 10.0 MB of DWARF are location lists).  Left out compressed, it is not
 * inflated: an empty section of the copy, said nowhere.
 */
static int
unread(const char *rest)
{
	static const char *const names[] = { "debug_loc", "debug_loclists",
	    "debug_macro", "debug_macinfo" };
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(rest, names[i]) == 0)
			return (1);
	return (0);
}

/*
 * What section @i becomes in the copy: its size and alignment there and
 * how it is made.  0 when it is copied as it is.
 */
static void
plan_sec(struct elfw *w, uint64_t i)
{
	struct sec *s = &w->s[i];
	const char *name = sec_name(w, i);
	uint64_t chsz = w->is64 ? 24 : 12, ct, k, lim;

	s->nsize = s->size;
	s->nalign = s->align;
	s->nname = s->name;
	s->how = 0;
	if (i == 0 || s->type == SHT_NOBITS_ ||
	    ((s->flags & SHF_ALLOC_) && s->type != SHT_NOTE_))
		return;
	if (s->off > w->len || s->size > w->len - s->off) {
		warn_sec(w, name, "lies past the end of the file");
		s->nsize = 0;
		s->how = -1;
		return;
	}
	if (s->flags & SHF_COMPRESSED_) {
		s->how = 1;
		if (s->size < chsz) {
			warn_sec(w, name, "compression header cut");
			s->how = -1;
		} else {
			ct = get(w, s->off, 4);
			s->nsize = get(w, s->off + (w->is64 ? 8 : 4),
			    w->is64 ? 8 : 4);
			s->nalign = get(w, s->off + (w->is64 ? 16 : 8),
			    w->is64 ? 8 : 4);
			if (ct != ELFCOMPRESS_ZLIB_ && ct != ELFCOMPRESS_ZSTD_) {
				warn_sec(w, name, "unknown compression type %ju",
				    (uintmax_t)ct);
				s->how = -1;
			}
		}
	} else if (strncmp(name, ".zdebug", 7) == 0) {
		s->how = 2;
		s->nsize = 0;
		if (s->size < 12 || memcmp(w->p + s->off, "ZLIB", 4) != 0) {
			warn_sec(w, name, "no \"ZLIB\" header");
			s->how = -1;
		} else {
			for (k = 0; k < 8; k++)		/* big-endian */
				s->nsize = s->nsize << 8 | w->p[s->off + 4 + k];
		}
	}
	if (s->how > 0 && name[0] == '.' &&
	    unread(name + (s->how == 2 ? 2 : 1))) {
		s->how = -1;
		s->nsize = 0;
		return;
	}
	if (s->how > 0 && s->nsize > INFLATE_MAX) {
		warn_sec(w, name, "claims %ju bytes decompressed, more than "
		    "%ju", (uintmax_t)s->nsize, (uintmax_t)INFLATE_MAX);
		s->how = -1;
	} else if (s->how > 0 && (lim = claim_limit(w, s)) < s->nsize) {
		warn_sec(w, name, "claims %ju bytes decompressed, more than "
		    "its %ju compressed bytes make (%ju)", (uintmax_t)s->nsize,
		    (uintmax_t)s->size, (uintmax_t)lim);
		s->how = -1;
	}
	if (s->how < 0)
		s->nsize = 0;
}

/* Decompress section @i into @dst (s->nsize bytes); 0 or -1 (said). */
static int
inflate_sec(struct elfw *w, uint64_t i, uint8_t *dst)
{
	const struct sec *s = &w->s[i];
	const uint8_t *src = w->p + s->off;
	uint64_t n = s->size, ct = ELFCOMPRESS_ZLIB_;
	uLongf got;
	size_t zr;
	int zrc;

	if (s->how == 1) {
		ct = get(w, s->off, 4);
		src += w->is64 ? 24 : 12;
		n -= w->is64 ? 24 : 12;
	} else {
		src += 12;
		n -= 12;
	}
	if (ct == ELFCOMPRESS_ZSTD_) {
		zr = ZSTD_decompress(dst, (size_t)s->nsize, src, (size_t)n);
		if (ZSTD_isError(zr)) {
			warn_sec(w, sec_name(w, i), "zstd: %s",
			    ZSTD_getErrorName(zr));
			return (-1);
		}
		got = (uLongf)zr;
	} else {
		got = (uLongf)s->nsize;
		zrc = uncompress(dst, &got, src, (uLong)n);
		if (zrc != Z_OK) {
			warn_sec(w, sec_name(w, i), "zlib: %s", zError(zrc));
			return (-1);
		}
	}
	if ((uint64_t)got != s->nsize) {
		warn_sec(w, sec_name(w, i), "decompressed to %ju bytes, its "
		    "header says %ju", (uintmax_t)got, (uintmax_t)s->nsize);
		return (-1);
	}
	return (0);
}

/* Write section header @i of the copy at @p. */
static void
write_shdr(struct elfw *w, uint8_t *p, uint64_t i)
{
	const struct sec *s = &w->s[i];
	int ws = w->is64 ? 8 : 4;
	uint64_t type = s->type, flags = s->flags, name = s->nname;

	if (i != 0 && (type == SHT_NOBITS_ || s->how < 0 ||
	    ((flags & SHF_ALLOC_) && type != SHT_NOTE_)))
		type = SHT_NOBITS_;
	if (s->how > 0)
		flags &= ~(uint64_t)SHF_COMPRESSED_;
	put(w, p, name, 4);
	put(w, p + 4, type, 4);
	put(w, p + 8, flags, ws);
	put(w, p + 8 + ws, s->addr, ws);
	put(w, p + 8 + 2 * ws, i == 0 ? s->off : s->noff, ws);
	put(w, p + 8 + 3 * ws, s->how < 0 ? 0 : s->nsize, ws);
	put(w, p + 8 + 4 * ws, s->link, 4);
	put(w, p + 12 + 4 * ws, s->info, 4);
	put(w, p + 16 + 4 * ws, s->nalign, ws);
	put(w, p + 16 + 5 * ws, s->entsize, ws);
}

/* Whether section @i's bytes are in the copy as they are in the file. */
static int
kept_as_is(const struct sec *s, uint64_t i)
{
	return (i != 0 && s->how == 0 && s->type != SHT_NOBITS_ &&
	    (!(s->flags & SHF_ALLOC_) || s->type == SHT_NOTE_));
}

/* Lay the copy out, allocate it and fill it. */
static int
build(struct elfw *w, void **outp, size_t *outlenp)
{
	uint64_t ehsz = w->is64 ? 64 : 52, shsz = w->is64 ? 64 : 40;
	uint64_t off = ehsz, a, i;
	const struct sec *t;
	uint8_t *out;

	for (i = 0; i < w->shnum; i++) {
		struct sec *s = &w->s[i];

		s->noff = off;
		if (s->how < 0 || i == 0 || s->type == SHT_NOBITS_ ||
		    ((s->flags & SHF_ALLOC_) && s->type != SHT_NOTE_))
			continue;
		a = s->nalign > 1 && s->nalign <= 4096 ? s->nalign : 1;
		off = (off + a - 1) & ~(a - 1);
		s->noff = off;
		off += s->nsize;
	}
	off = (off + 7) & ~(uint64_t)7;
	if (off > SIZE_MAX - w->shnum * shsz)
		return (-HWTR_E_NOMEM);
	if ((out = calloc(1, (size_t)(off + w->shnum * shsz))) == NULL)
		return (-HWTR_E_NOMEM);
	memcpy(out, w->p, (size_t)ehsz);
	put(w, out + (w->is64 ? 32 : 28), 0, w->is64 ? 8 : 4);	/* e_phoff */
	put(w, out + (w->is64 ? 40 : 32), off, w->is64 ? 8 : 4); /* e_shoff */
	put(w, out + (w->is64 ? 54 : 42), 0, 2);		/* e_phentsize */
	put(w, out + (w->is64 ? 56 : 44), 0, 2);		/* e_phnum */
	put(w, out + (w->is64 ? 58 : 46), shsz, 2);		/* e_shentsize */
	for (i = 0; i < w->shnum; i++) {
		struct sec *s = &w->s[i];

		if (kept_as_is(s, i))
			memcpy(out + s->noff, w->p + s->off, (size_t)s->size);
		else if (s->how > 0 && inflate_sec(w, i, out + s->noff) < 0)
			s->how = -1;
	}
	/*
	 * ".zdebug_x" named ".debug_x": the copy's .shstrtab has "..debug_x"
	 * where it had ".zdebug_x", and the section's name starts one on.
	 * Only when .shstrtab is in the copy as it was: a hostile file's
	 * names may come from a loaded section, left out, or from none.
	 */
	t = w->shstrndx != 0 && w->shstrndx < w->shnum &&
	    kept_as_is(&w->s[w->shstrndx], w->shstrndx) ?
	    &w->s[w->shstrndx] : NULL;
	for (i = 0; t != NULL && i < w->shnum; i++) {
		if (w->s[i].how == 2 && strcmp(sec_name(w, i), "?") != 0) {
			assert(w->s[i].name + 1 < t->size);
			out[t->noff + w->s[i].name + 1] = '.';
			w->s[i].nname = w->s[i].name + 1;
		}
	}
	for (i = 0; i < w->shnum; i++)
		write_shdr(w, out + off + i * shsz, i);
	*outp = out;
	*outlenp = (size_t)(off + w->shnum * shsz);
	return (0);
}

int
hwtr_elf_inflate(const void *buf, size_t len, void **outp, size_t *outlenp,
    char *warn, size_t warnlen)
{
	struct elfw w;
	uint64_t i;
	int any = 0, rc;

	*outp = NULL;
	*outlenp = 0;
	memset(&w, 0, sizeof(w));
	w.p = buf;
	w.len = len;
	w.warn = warn;
	w.warnlen = warnlen;
	if (warn != NULL && warnlen > 0)
		warn[0] = '\0';
	if (!hwtr_elf_is_elf(buf, len) || len < 64 ||
	    (w.p[4] != 1 && w.p[4] != 2) || (w.p[5] != 1 && w.p[5] != 2))
		return (-HWTR_E_FORMAT);
	w.is64 = w.p[4] == 2;
	w.be = w.p[5] == 2;
	if ((rc = read_shdrs(&w)) < 0)
		goto out;
	for (i = 0; i < w.shnum; i++) {
		plan_sec(&w, i);
		if (w.s[i].how != 0)
			any = 1;
	}
	rc = 0;
	if (!any)
		goto out;
	if ((rc = build(&w, outp, outlenp)) < 0)
		goto out;
	rc = w.nwarn > 0 ? 2 : 1;
	if (w.nwarn > 1 && warn != NULL && strlen(warn) + 1 < warnlen)
		snprintf(warn + strlen(warn), warnlen - strlen(warn),
		    " (and %d more sections)", w.nwarn - 1);
out:
	free(w.s);
	return (rc);
}
