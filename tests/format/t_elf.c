/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The ELF reader against readelf(1)'s view of a real binary, on truncated
 * and hand-made ELF32 files; SHA-256 against the FIPS 180-4 example
 * vectors.
 */

#include <atf-c.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwtrace.h"
#include "hwtr_common.h"
#include "hwtr_test.h"
#include "../../format/hwtr_elf.h"

static void
check_sha(const char *msg, size_t len, const char *hex)
{
	uint8_t d[32];
	char got[65];

	hwtr_sha256(msg, len, d);
	hwtr_hex(got, d, 32);
	ATF_CHECK_STREQ_MSG(got, hex, "SHA-256 of %zu bytes", len);
}

ATF_TC_WITHOUT_HEAD(sha256_fips_vectors);
ATF_TC_BODY(sha256_fips_vectors, tc)
{
	struct hwtr_sha256 s;
	char *a;
	uint8_t d[32];
	char got[65];
	size_t i;

	check_sha("abc", 3,
	    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	check_sha("", 0,
	    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	check_sha("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56,
	    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	check_sha("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmn"
	    "hijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu", 112,
	    "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
	/* One million 'a', fed in uneven pieces through the incremental API. */
	a = malloc(1000000);
	memset(a, 'a', 1000000);
	hwtr_sha256_init(&s);
	for (i = 0; i < 1000000; i += 777)
		hwtr_sha256_update(&s, a + i, 1000000 - i < 777 ? 1000000 - i : 777);
	hwtr_sha256_final(&s, d);
	hwtr_hex(got, d, 32);
	ATF_CHECK_STREQ(got,
	    "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	free(a);
}

static char *
run(const char *cmd)
{
	static char out[65536];
	size_t n;
	FILE *f = popen(cmd, "r");

	ATF_REQUIRE(f != NULL);
	n = fread(out, 1, sizeof(out) - 1, f);
	out[n] = '\0';
	ATF_REQUIRE_EQ_MSG(pclose(f), 0, "'%s' failed", cmd);
	return (out);
}

ATF_TC_WITHOUT_HEAD(bin_true_matches_readelf);
ATF_TC_BODY(bin_true_matches_readelf, tc)
{
	struct hwtr_elf_info ei;
	char err[256], hex[129], *out, *p, *line;
	char flg[8];
	void *buf;
	size_t len, n = 0;
	uintmax_t off, va, pa, fs, ms;

	if (system("command -v readelf >/dev/null") != 0)
		atf_tc_skip("readelf not installed");
	ATF_REQUIRE_EQ(hwtr_read_file("/bin/true", 1 << 30, &buf, &len, err,
	    sizeof(err)), 0);
	ATF_REQUIRE_EQ_MSG(hwtr_elf_parse(buf, len, &ei, err, sizeof(err)), 0,
	    "%s", err);
	ATF_CHECK_EQ(ei.elfclass, 64);
	out = run("readelf -n /bin/true");
	p = strstr(out, "Build ID: ");
	if (p == NULL)
		ATF_CHECK_EQ_MSG(ei.build_id_len, 0, "readelf sees no build-id");
	else {
		p += 10;
		p[strcspn(p, "\n")] = '\0';
		hwtr_hex(hex, ei.build_id, ei.build_id_len);
		ATF_CHECK_STREQ_MSG(hex, p, "build-id: readelf says %s", p);
	}
	out = run("readelf -lW /bin/true");
	for (line = strtok(out, "\n"); line != NULL; line = strtok(NULL, "\n")) {
		memset(flg, 0, sizeof(flg));
		if (sscanf(line, " LOAD 0x%jx 0x%jx 0x%jx 0x%jx 0x%jx %7[RWE ]",
		    &off, &va, &pa, &fs, &ms, flg) < 6)
			continue;
		ATF_REQUIRE_MSG(n < ei.nload, "readelf has more PT_LOADs than %zu",
		    ei.nload);
		ATF_CHECK_EQ(ei.load[n].offset, off);
		ATF_CHECK_EQ(ei.load[n].vaddr, va);
		ATF_CHECK_EQ(ei.load[n].filesz, fs);
		ATF_CHECK_EQ(ei.load[n].memsz, ms);
		ATF_CHECK_EQ_MSG(ei.load[n].flags,
		    (strchr(flg, 'R') ? HWTR_ELF_PF_R : 0) |
		    (strchr(flg, 'W') ? HWTR_ELF_PF_W : 0) |
		    (strchr(flg, 'E') ? HWTR_ELF_PF_X : 0),
		    "segment %zu flags '%s'", n, flg);
		n++;
	}
	ATF_CHECK_EQ_MSG(n, ei.nload, "readelf lists %zu PT_LOADs, we found %zu",
	    n, ei.nload);
	ATF_CHECK(n > 0);
	free(buf);
}

/* Every prefix of a real ELF file: never a crash, never a false result. */
ATF_TC_WITHOUT_HEAD(truncated_elf_never_crashes);
ATF_TC_BODY(truncated_elf_never_crashes, tc)
{
	struct hwtr_elf_info full, ei;
	char err[256];
	uint8_t *buf;
	void *v;
	size_t len, cut;
	int rc;

	ATF_REQUIRE_EQ(hwtr_read_file("/bin/true", 1 << 30, &v, &len, err,
	    sizeof(err)), 0);
	buf = v;
	ATF_REQUIRE_EQ(hwtr_elf_parse(buf, len, &full, err, sizeof(err)), 0);
	for (cut = 0; cut < len; cut += cut < 4096 ? 1 : 61) {
		uint8_t *copy = malloc(cut ? cut : 1);

		/* An exact-size copy so ASan sees any read past the end. */
		memcpy(copy, buf, cut);
		rc = hwtr_elf_parse(copy, cut, &ei, err, sizeof(err));
		if (rc == 0) {
			ATF_CHECK_EQ_MSG(ei.nload, full.nload, "cut %zu", cut);
			ATF_CHECK_MSG(ei.build_id_len == full.build_id_len,
			    "cut %zu: build-id %zu bytes", cut, ei.build_id_len);
		} else
			ATF_CHECK_MSG(err[0] != '\0', "cut %zu: no message", cut);
		free(copy);
	}
	ATF_CHECK(hwtr_elf_parse(buf, 3, &ei, err, sizeof(err)) ==
	    -HWTR_E_FORMAT);
	free(buf);
}

static void
put(uint8_t *p, uint64_t v, int n, int be)
{
	int i;

	for (i = 0; i < n; i++)
		p[be ? n - 1 - i : i] = (uint8_t)(v >> (8 * i));
}

/* A hand-made big-endian ELF32 file with one PT_LOAD and a build-id. */
ATF_TC_WITHOUT_HEAD(elf32_big_endian);
ATF_TC_BODY(elf32_big_endian, tc)
{
	uint8_t f[256];
	struct hwtr_elf_info ei;
	char err[256];

	memset(f, 0, sizeof(f));
	memcpy(f, "\177ELF", 4);
	f[4] = 1;		/* ELFCLASS32 */
	f[5] = 2;		/* big endian */
	f[6] = 1;
	put(f + 16, 2, 2, 1);	/* ET_EXEC */
	put(f + 18, 40, 2, 1);	/* EM_ARM */
	put(f + 24, 0x8000, 4, 1);
	put(f + 28, 52, 4, 1);	/* phoff */
	put(f + 42, 32, 2, 1);	/* phentsize */
	put(f + 44, 2, 2, 1);	/* phnum */
	/* PT_LOAD */
	put(f + 52, 1, 4, 1);
	put(f + 56, 0, 4, 1);
	put(f + 60, 0x8000, 4, 1);
	put(f + 68, 0x100, 4, 1);
	put(f + 72, 0x200, 4, 1);
	put(f + 76, 5, 4, 1);
	/* PT_NOTE at 116 */
	put(f + 84, 4, 4, 1);
	put(f + 88, 116, 4, 1);
	put(f + 100, 24, 4, 1);
	put(f + 116, 4, 4, 1);	/* namesz */
	put(f + 120, 8, 4, 1);	/* descsz */
	put(f + 124, 3, 4, 1);	/* NT_GNU_BUILD_ID */
	memcpy(f + 128, "GNU", 4);
	memcpy(f + 132, "\x01\x02\x03\x04\x05\x06\x07\x08", 8);
	ATF_REQUIRE_EQ_MSG(hwtr_elf_parse(f, sizeof(f), &ei, err, sizeof(err)),
	    0, "%s", err);
	ATF_CHECK_EQ(ei.elfclass, 32);
	ATF_CHECK_EQ(ei.big_endian, 1);
	ATF_CHECK_EQ(ei.machine, 40);
	ATF_CHECK_EQ(ei.entry, 0x8000);
	ATF_REQUIRE_EQ(ei.nload, 1);
	ATF_CHECK_EQ(ei.load[0].vaddr, 0x8000);
	ATF_CHECK_EQ(ei.load[0].filesz, 0x100);
	ATF_CHECK_EQ(ei.load[0].memsz, 0x200);
	ATF_CHECK_EQ(ei.load[0].flags, HWTR_ELF_PF_R | HWTR_ELF_PF_X);
	ATF_REQUIRE_EQ(ei.build_id_len, 8);
	ATF_CHECK(memcmp(ei.build_id, "\x01\x02\x03\x04\x05\x06\x07\x08", 8) == 0);
	/* A note claiming more than its segment holds is refused. */
	put(f + 120, 200, 4, 1);
	ATF_CHECK_EQ(hwtr_elf_parse(f, sizeof(f), &ei, err, sizeof(err)),
	    -HWTR_E_FORMAT);
	ATF_CHECK_MSG(strstr(err, "descriptor size 200") != NULL, "%s", err);
	/* Program headers past the end. */
	put(f + 28, 250, 4, 1);
	ATF_CHECK_EQ(hwtr_elf_parse(f, sizeof(f), &ei, err, sizeof(err)),
	    -HWTR_E_TRUNCATED);
}

/*
 * hwtr_elf_symbol() against nm(1) on this test program (not stripped):
 * a static function of .symtab; a name that is not there; and every
 * prefix of the file, never a crash, never a wrong value.
 */
ATF_TC_WITHOUT_HEAD(symbol_matches_nm);
ATF_TC_BODY(symbol_matches_nm, tc)
{
	char err[256], cmd[4200], self[4096], *out;
	uintmax_t want;
	uint64_t got;
	uint8_t *buf, *copy;
	void *v;
	size_t len, cut;
	ssize_t n;
	int rc;

	if (system("command -v nm >/dev/null") != 0)
		atf_tc_skip("nm not installed");
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	ATF_REQUIRE(n > 0);
	self[n] = '\0';
	snprintf(cmd, sizeof(cmd), "nm '%s' | awk '$3 == \"check_sha\" "
	    "{ print $1 }'", self);
	out = run(cmd);
	ATF_REQUIRE_MSG(sscanf(out, "%jx", &want) == 1,
	    "nm shows no check_sha in %s: '%s'", self, out);
	ATF_REQUIRE_EQ(hwtr_read_file(self, 1 << 30, &v, &len, err,
	    sizeof(err)), 0);
	buf = v;
	ATF_REQUIRE_EQ(hwtr_elf_symbol(buf, len, "check_sha", &got), 1);
	ATF_CHECK_EQ_MSG(got, want, "check_sha at 0x%jx, nm says 0x%jx",
	    (uintmax_t)got, want);
	ATF_CHECK_EQ(hwtr_elf_symbol(buf, len, "check_sh", &got), 0);
	ATF_CHECK_EQ(hwtr_elf_symbol(buf, len, "no_such_symbol_here", &got),
	    0);
	for (cut = 0; cut < len; cut += cut < 4096 ? 1 : 997) {
		copy = malloc(cut ? cut : 1);
		memcpy(copy, buf, cut);
		got = 0;
		rc = hwtr_elf_symbol(copy, cut, "check_sha", &got);
		ATF_CHECK_MSG(rc == 0 || rc == -HWTR_E_FORMAT ||
		    (rc == 1 && got == want), "cut %zu: %d, 0x%jx", cut, rc,
		    (uintmax_t)got);
		free(copy);
	}
	free(buf);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, sha256_fips_vectors);
	ATF_TP_ADD_TC(tp, bin_true_matches_readelf);
	ATF_TP_ADD_TC(tp, truncated_elf_never_crashes);
	ATF_TP_ADD_TC(tp, elf32_big_endian);
	ATF_TP_ADD_TC(tp, symbol_matches_nm);
	return (atf_no_error());
}
