/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * hwtr_elf_inflate() on hand-made ELF64 files: a debug section compressed
 * with zlib and with zstd behind an Elf64_Chdr (gABI), and the GNU
 * ".zdebug" form, each decompressed to the bytes it was made from; and
 * on hostile ones (every truncation, a size claim of a terabyte, a
 * corrupt stream), which give an error or a warning, never a crash;
 * location lists, which no reader of the copy asks for, left out.
 * Its use on real binaries is tests/indexer/t_zdebug.
 */

#include <atf-c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "hwtrace.h"
#include "hwtr_common.h"
#include "../../format/hwtr_elf.h"

#define PAYLOAD		3000
#define SHSTR		".shstrtab\0.zdebug_x\0.debug_x\0.text\0" \
			".debug_loclists\0.zdebug_loc\0"
#define SHSTR_LEN	(sizeof(SHSTR) + 1)	/* with the leading NUL */
#define NAME_SHSTRTAB	1
#define NAME_ZDEBUG	11
#define NAME_DEBUG	21
#define NAME_TEXT	30
#define NAME_LOCLISTS	36
#define NAME_ZDEBUG_LOC	52

enum kind { K_ZLIB, K_ZSTD, K_GNU };

static void
put(uint8_t *p, uint64_t v, int n)
{
	int i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t
get(const uint8_t *p, int n)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return (v);
}

static void
payload(uint8_t *p)
{
	size_t i;

	for (i = 0; i < PAYLOAD; i++)
		p[i] = (uint8_t)((i * 7) % 251);
}

static void
shdr(uint8_t *p, uint32_t name, uint32_t type, uint64_t flags, uint64_t addr,
    uint64_t off, uint64_t size, uint64_t align)
{
	put(p, name, 4);
	put(p + 4, type, 4);
	put(p + 8, flags, 8);
	put(p + 16, addr, 8);
	put(p + 24, off, 8);
	put(p + 32, size, 8);
	put(p + 48, align, 8);
}

/*
 * An ELF64 file: header, .shstrtab, the compressed section (named
 * ".debug_x", or ".zdebug_x" for K_GNU), 16 bytes of .text, section
 * headers.  malloc'd; *@lenp its size.
 */
static uint8_t *
craft(enum kind k, size_t *lenp)
{
	uint8_t src[PAYLOAD], z[PAYLOAD * 2], *f;
	size_t zn, hdr, off, shoff;
	uLongf zl = sizeof(z);

	payload(src);
	if (k == K_ZSTD) {
		zn = ZSTD_compress(z, sizeof(z), src, PAYLOAD, 3);
		ATF_REQUIRE(!ZSTD_isError(zn));
	} else {
		ATF_REQUIRE_EQ(compress(z, &zl, src, PAYLOAD), Z_OK);
		zn = zl;
	}
	hdr = k == K_GNU ? 12 : 24;
	shoff = (64 + SHSTR_LEN + hdr + zn + 16 + 7) & ~(size_t)7;
	f = calloc(1, shoff + 4 * 64);
	ATF_REQUIRE(f != NULL);
	memcpy(f, "\177ELF\2\1\1", 7);
	put(f + 16, 3, 2);
	put(f + 18, 62, 2);
	put(f + 20, 1, 4);
	put(f + 40, shoff, 8);
	put(f + 52, 64, 2);
	put(f + 58, 64, 2);
	put(f + 60, 4, 2);
	put(f + 62, 1, 2);
	memcpy(f + 65, SHSTR, sizeof(SHSTR));
	off = 64 + SHSTR_LEN;
	if (k == K_GNU) {
		memcpy(f + off, "ZLIB", 4);
		for (zl = 0; zl < 8; zl++)
			f[off + 4 + zl] = (uint8_t)((uint64_t)PAYLOAD >> (8 * (7 - zl)));
	} else {
		put(f + off, k == K_ZSTD ? 2 : 1, 4);
		put(f + off + 8, PAYLOAD, 8);
		put(f + off + 16, 1, 8);
	}
	memcpy(f + off + hdr, z, zn);
	memset(f + off + hdr + zn, 0x90, 16);
	shdr(f + shoff + 64, NAME_SHSTRTAB, 3, 0, 0, 64, SHSTR_LEN, 1);
	shdr(f + shoff + 128, k == K_GNU ? NAME_ZDEBUG : NAME_DEBUG, 1,
	    k == K_GNU ? 0 : 0x800, 0, off, hdr + zn, 1);
	shdr(f + shoff + 192, NAME_TEXT, 1, 0x6, 0x1000, off + hdr + zn, 16, 16);
	*lenp = shoff + 4 * 64;
	return (f);
}

/* The copy @c has .debug_x with the payload, .text as SHT_NOBITS. */
static void
check_copy(const uint8_t *c, size_t clen)
{
	uint8_t want[PAYLOAD];
	uint64_t shoff, s2, s3, str;

	ATF_REQUIRE(clen >= 64);
	shoff = get(c + 40, 8);
	ATF_REQUIRE_MSG(get(c + 60, 2) == 4 && shoff + 4 * 64 <= clen,
	    "copy: %ju sections at %#jx of %zu bytes", (uintmax_t)get(c + 60, 2),
	    (uintmax_t)shoff, clen);
	s2 = shoff + 128;
	s3 = shoff + 192;
	str = get(c + shoff + 64 + 24, 8);
	ATF_CHECK_STREQ((const char *)c + str + get(c + s2, 4), ".debug_x");
	ATF_CHECK_EQ_MSG(get(c + s2 + 8, 8) & 0x800, 0,
	    "SHF_COMPRESSED still set");
	ATF_REQUIRE_EQ_MSG(get(c + s2 + 32, 8), PAYLOAD,
	    "size %ju, expected %d", (uintmax_t)get(c + s2 + 32, 8), PAYLOAD);
	ATF_REQUIRE(get(c + s2 + 24, 8) + PAYLOAD <= clen);
	payload(want);
	ATF_CHECK_MSG(memcmp(c + get(c + s2 + 24, 8), want, PAYLOAD) == 0,
	    "decompressed bytes differ from the payload");
	ATF_CHECK_EQ_MSG(get(c + s3 + 4, 4), 8, ".text: type %ju, expected "
	    "SHT_NOBITS", (uintmax_t)get(c + s3 + 4, 4));
	ATF_CHECK_EQ(get(c + s3 + 16, 8), 0x1000);
	ATF_CHECK_EQ(get(c + s3 + 32, 8), 16);
}

static void
check_kind(enum kind k)
{
	size_t len, clen;
	uint8_t *f = craft(k, &len);
	void *c;
	char warn[256];
	int rc;

	rc = hwtr_elf_inflate(f, len, &c, &clen, warn, sizeof(warn));
	ATF_REQUIRE_EQ_MSG(rc, 1, "kind %d: expected 1, got %d (%s)", k, rc,
	    warn);
	check_copy(c, clen);
	free(c);
	free(f);
}

ATF_TC_WITHOUT_HEAD(zlib_zstd_gnu_decompressed);
ATF_TC_BODY(zlib_zstd_gnu_decompressed, tc)
{
	check_kind(K_ZLIB);
	check_kind(K_ZSTD);
	check_kind(K_GNU);
}

ATF_TC_WITHOUT_HEAD(uncompressed_left_alone);
ATF_TC_BODY(uncompressed_left_alone, tc)
{
	size_t len, clen;
	uint8_t *f = craft(K_ZLIB, &len);
	void *c = (void *)1;
	char warn[256];

	/* Section 2 without SHF_COMPRESSED and named ".debug_x". */
	put(f + get(f + 40, 8) + 128 + 8, 0, 8);
	ATF_CHECK_EQ(hwtr_elf_inflate(f, len, &c, &clen, warn, sizeof(warn)),
	    0);
	ATF_CHECK(c == NULL);
	ATF_CHECK_EQ(hwtr_elf_inflate("not an ELF file, 64 bytes long......"
	    "...........................", 64, &c, &clen, warn, sizeof(warn)),
	    -HWTR_E_FORMAT);
	free(f);
}

ATF_TC_WITHOUT_HEAD(hostile_warns);
ATF_TC_BODY(hostile_warns, tc)
{
	size_t len, clen, cut, off;
	uint8_t *f = craft(K_ZLIB, &len), *g;
	void *c;
	char warn[256];
	int rc;

	/* A terabyte claimed. */
	off = get(f + get(f + 40, 8) + 128 + 24, 8);
	put(f + off + 8, (uint64_t)1 << 40, 8);
	rc = hwtr_elf_inflate(f, len, &c, &clen, warn, sizeof(warn));
	ATF_CHECK_EQ_MSG(rc, 2, "size claim: expected 2, got %d", rc);
	ATF_CHECK_MSG(strstr(warn, "'.debug_x'") != NULL &&
	    strstr(warn, "claims") != NULL, "warning '%s'", warn);
	free(c);
	/*
	 * A gigabyte claimed: more than deflate makes of the section's few
	 * KB (the copy once allocated it), and more than a zstd frame that
	 * says what it holds.
	 */
	put(f + off + 8, (uint64_t)1 << 30, 8);
	rc = hwtr_elf_inflate(f, len, &c, &clen, warn, sizeof(warn));
	ATF_CHECK_EQ_MSG(rc, 2, "zlib claim: expected 2, got %d", rc);
	ATF_CHECK_MSG(strstr(warn, "claims") != NULL &&
	    strstr(warn, "compressed bytes make") != NULL, "warning '%s'",
	    warn);
	free(c);
	g = craft(K_ZSTD, &clen);
	put(g + off + 8, PAYLOAD + 1, 8);
	rc = hwtr_elf_inflate(g, clen, &c, &cut, warn, sizeof(warn));
	ATF_CHECK_EQ_MSG(rc, 2, "zstd claim: expected 2, got %d", rc);
	ATF_CHECK_MSG(strstr(warn, "compressed bytes make (3000)") != NULL,
	    "warning '%s'", warn);
	free(c);
	free(g);
	/* A corrupt stream. */
	put(f + off + 8, PAYLOAD, 8);
	memset(f + off + 24 + 2, 0xff, 8);
	rc = hwtr_elf_inflate(f, len, &c, &clen, warn, sizeof(warn));
	ATF_CHECK_EQ_MSG(rc, 2, "corrupt: expected 2, got %d", rc);
	ATF_CHECK_MSG(strstr(warn, "zlib") != NULL, "warning '%s'", warn);
	free(c);
	/* A section past the end of the file. */
	put(f + get(f + 40, 8) + 128 + 32, len * 2, 8);
	rc = hwtr_elf_inflate(f, len, &c, &clen, warn, sizeof(warn));
	ATF_CHECK_EQ_MSG(rc, 2, "past the end: expected 2, got %d", rc);
	ATF_CHECK_MSG(strstr(warn, "past the end") != NULL, "warning '%s'",
	    warn);
	free(c);
	/* No section header table, though e_shnum says 4. */
	put(f + 40, 0, 8);
	rc = hwtr_elf_inflate(f, len, &c, &clen, warn, sizeof(warn));
	ATF_CHECK_EQ_MSG(rc, 0, "e_shoff 0: expected 0, got %d", rc);
	ATF_CHECK(c == NULL);
	free(f);
	/* Every truncation: an error or a copy, never a read past the end. */
	f = craft(K_ZSTD, &len);
	for (cut = 0; cut < len; cut++) {
		g = malloc(cut ? cut : 1);
		ATF_REQUIRE(g != NULL);
		memcpy(g, f, cut);
		rc = hwtr_elf_inflate(g, cut, &c, &clen, warn, sizeof(warn));
		ATF_CHECK_MSG(rc == -HWTR_E_FORMAT || rc == 0 || rc == 2,
		    "cut at %zu: got %d", cut, rc);
		ATF_CHECK(rc > 0 || c == NULL);
		free(c);
		free(g);
	}
	free(f);
}

/*
 * A .zdebug section is renamed in the copy's .shstrtab, which must then be
 * in the copy: here the names are read from .text, loaded and so left
 * out, whose bytes are the whole file, and the name lies past the copy's
 * end (it once wrote there).
 */
ATF_TC_WITHOUT_HEAD(zdebug_name_outside_copy);
ATF_TC_BODY(zdebug_name_outside_copy, tc)
{
	size_t len, clen, shoff;
	uint8_t *f = craft(K_GNU, &len), *g;
	void *c;
	char warn[256];
	int rc, i;

	g = realloc(f, len + 16);
	ATF_REQUIRE(g != NULL);
	memcpy(g + len, ".zdebug_x", 10);
	shoff = get(g + 40, 8);
	/* e_shstrndx: .text, whose bytes are now all of the file. */
	put(g + 62, 3, 2);
	put(g + shoff + 192 + 24, 0, 8);
	put(g + shoff + 192 + 32, len + 16, 8);
	/* Every name is an offset into the file; .zdebug_x's is at the end. */
	for (i = 1; i < 4; i++)
		put(g + shoff + 64 * i, get(g + shoff + 64 * i, 4) + 65, 4);
	put(g + shoff + 128, len, 4);
	rc = hwtr_elf_inflate(g, len + 16, &c, &clen, warn, sizeof(warn));
	ATF_CHECK_EQ_MSG(rc, 1, "expected 1, got %d (%s)", rc, warn);
	ATF_REQUIRE(c != NULL && clen >= 64 + PAYLOAD);
	free(c);
	/* The same with no string table at all (e_shstrndx 0). */
	put(g + 62, 0, 2);
	put(g + shoff + 24, 0, 8);
	put(g + shoff + 32, len + 16, 8);
	rc = hwtr_elf_inflate(g, len + 16, &c, &clen, warn, sizeof(warn));
	ATF_CHECK_MSG(rc >= 0, "no string table: expected a copy or none, "
	    "got %d (%s)", rc, warn);
	free(c);
	free(g);
}

/*
 * Location lists are not inflated: the copy has the section, empty and
 * SHT_NOBITS, and says nothing of it.
 */
ATF_TC_WITHOUT_HEAD(location_lists_left_out);
ATF_TC_BODY(location_lists_left_out, tc)
{
	static const enum kind kinds[] = { K_ZLIB, K_ZSTD, K_GNU };
	size_t len, clen, k;
	uint64_t shoff, s2, str;
	uint8_t *f, *c;
	void *cv;
	char warn[256];
	int rc;

	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		f = craft(kinds[k], &len);
		put(f + get(f + 40, 8) + 128, kinds[k] == K_GNU ?
		    NAME_ZDEBUG_LOC : NAME_LOCLISTS, 4);
		rc = hwtr_elf_inflate(f, len, &cv, &clen, warn, sizeof(warn));
		ATF_REQUIRE_EQ_MSG(rc, 1, "kind %d: expected 1, got %d (%s)",
		    kinds[k], rc, warn);
		ATF_CHECK_STREQ_MSG(warn, "", "kind %d: warning '%s'",
		    kinds[k], warn);
		c = cv;
		shoff = get(c + 40, 8);
		ATF_REQUIRE(shoff + 4 * 64 <= clen);
		s2 = shoff + 128;
		str = get(c + shoff + 64 + 24, 8);
		ATF_CHECK_STREQ((const char *)c + str + get(c + s2, 4),
		    kinds[k] == K_GNU ? ".zdebug_loc" : ".debug_loclists");
		ATF_CHECK_EQ_MSG(get(c + s2 + 4, 4), 8, "kind %d: type %ju, "
		    "expected SHT_NOBITS", kinds[k],
		    (uintmax_t)get(c + s2 + 4, 4));
		ATF_CHECK_EQ_MSG(get(c + s2 + 32, 8), 0, "kind %d: size %ju, "
		    "expected 0", kinds[k], (uintmax_t)get(c + s2 + 32, 8));
		ATF_CHECK_MSG(clen < 64 + PAYLOAD, "kind %d: a copy of %zu "
		    "bytes holds the %d inflated", kinds[k], clen, PAYLOAD);
		free(cv);
		free(f);
	}
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, zlib_zstd_gnu_decompressed);
	ATF_TP_ADD_TC(tp, uncompressed_left_alone);
	ATF_TP_ADD_TC(tp, hostile_warns);
	ATF_TP_ADD_TC(tp, zdebug_name_outside_copy);
	ATF_TP_ADD_TC(tp, location_lists_left_out);
	return (0);
}
