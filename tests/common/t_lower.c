/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The lower layer every module uses (common/): strict number parsing,
 * hex, JSON string quoting, the host CPU's identity and ELF notes, each
 * held to something not written here: values known by construction,
 * jansson's parser, /proc/cpuinfo and readelf -n.
 */

#include <atf-c.h>
#include <ctype.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hwtrace.h"
#include "hwtr_common.h"
#include "hwtr_test.h"

ATF_TC_WITHOUT_HEAD(parse_u64_is_strict);
ATF_TC_BODY(parse_u64_is_strict, tc)
{
	static const struct {
		const char	*s;
		uint64_t	v;
	} good[] = {
		{ "0", 0 }, { "42", 42 }, { "0x10", 16 }, { "0X1f", 31 },
		{ "010", 8 }, { "18446744073709551615", UINT64_MAX },
		{ "0xffffffffffffffff", UINT64_MAX },
	};
	static const char *const bad[] = {
		"", " 5", "5 ", "\t5", "-1", "+1", "12abc", "0x", "x10", "08",
		"18446744073709551616", "0x10000000000000000", "1.5",
	};
	uint64_t v;
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		v = 7;
		ATF_CHECK_EQ_MSG(hwtr_parse_u64(good[i].s, &v), 0, "'%s'",
		    good[i].s);
		ATF_CHECK_EQ_MSG(v, good[i].v, "'%s' gave %" PRIu64,
		    good[i].s, v);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = 7;
		ATF_CHECK_EQ_MSG(hwtr_parse_u64(bad[i], &v), -HWTR_E_INVAL,
		    "'%s' accepted", bad[i]);
		ATF_CHECK_EQ_MSG(v, 7, "'%s' changed the result", bad[i]);
	}
	ATF_CHECK_EQ(hwtr_parse_u64(NULL, &v), -HWTR_E_INVAL);
}

ATF_TC_WITHOUT_HEAD(hex_round_trip);
ATF_TC_BODY(hex_round_trip, tc)
{
	uint8_t in[256], out[256];
	char txt[2 * sizeof(in) + 1], want[8];
	size_t i, n;

	for (i = 0; i < sizeof(in); i++)
		in[i] = (uint8_t)(i * 7 + 3);
	hwtr_hex(txt, in, sizeof(in));
	ATF_REQUIRE_EQ(strlen(txt), 2 * sizeof(in));
	for (i = 0; i < sizeof(in); i++) {
		snprintf(want, sizeof(want), "%02x", in[i]);
		ATF_REQUIRE_MSG(memcmp(txt + 2 * i, want, 2) == 0,
		    "byte %zu: %.2s, printf says %s", i, txt + 2 * i, want);
	}
	ATF_REQUIRE_EQ(hwtr_unhex(txt, out, sizeof(out), &n), 0);
	ATF_REQUIRE_EQ(n, sizeof(in));
	ATF_REQUIRE(memcmp(in, out, n) == 0);
	ATF_CHECK_EQ(hwtr_unhex("abc", out, sizeof(out), &n), -HWTR_E_INVAL);
	ATF_CHECK_EQ(hwtr_unhex("AB", out, sizeof(out), &n), -HWTR_E_INVAL);
	ATF_CHECK_EQ(hwtr_unhex("0g", out, sizeof(out), &n), -HWTR_E_INVAL);
	ATF_CHECK_EQ(hwtr_unhex("0102", out, 1, &n), -HWTR_E_INVAL);
	ATF_CHECK_EQ(hwtr_unhex("", out, 1, &n), 0);
	ATF_CHECK_EQ(n, 0);
}

struct sbuf {
	char	buf[4096];
	size_t	len;
};

static void
sput(void *arg, const char *p, size_t len)
{
	struct sbuf *b = arg;

	ATF_REQUIRE(b->len + len < sizeof(b->buf));
	memcpy(b->buf + b->len, p, len);
	b->len += len;
	b->buf[b->len] = '\0';
}

ATF_TC_WITHOUT_HEAD(json_quote_parses_back);
ATF_TC_BODY(json_quote_parses_back, tc)
{
	char s[200];
	struct sbuf b;
	json_error_t err;
	json_t *j;
	size_t i, n = 0;

	/* Every ASCII byte, then UTF-8 (which stays as it is). */
	for (i = 1; i < 128; i++)
		s[n++] = (char)i;
	memcpy(s + n, "\xc3\xa9\xe2\x82\xac", 5);	/* U+00E9 U+20AC */
	n += 5;
	s[n] = '\0';
	b.len = 0;
	hwtr_json_quote(sput, &b, s);
	for (i = 0; i < b.len; i++)
		ATF_CHECK_MSG((unsigned char)b.buf[i] >= 0x20 &&
		    b.buf[i] != 0x7f, "raw control byte 0x%02x at %zu",
		    (unsigned char)b.buf[i], i);
	j = json_loadb(b.buf, b.len, JSON_DECODE_ANY, &err);
	ATF_REQUIRE_MSG(j != NULL, "jansson: %s at %d: %s", err.text,
	    err.position, b.buf);
	ATF_REQUIRE(json_is_string(j));
	ATF_CHECK_EQ(json_string_length(j), n);
	ATF_CHECK(memcmp(json_string_value(j), s, n) == 0);
	ATF_CHECK(strstr(b.buf, "\xc3\xa9\xe2\x82\xac") != NULL);
	json_decref(j);

	b.len = 0;
	hwtr_json_quote(sput, &b, NULL);
	ATF_CHECK_STREQ(b.buf, "null");
	b.len = 0;
	hwtr_json_quote(sput, &b, "");
	ATF_CHECK_STREQ(b.buf, "\"\"");
}

/* The value of the first "@key : value" line of /proc/cpuinfo, trimmed. */
static int
cpuinfo(const char *key, char *val, size_t len)
{
	char line[512], *c, *v, *e;
	FILE *fp;
	int found = 0;

	if ((fp = fopen("/proc/cpuinfo", "re")) == NULL)
		return (0);
	while (!found && fgets(line, sizeof(line), fp) != NULL) {
		if ((c = strchr(line, ':')) == NULL)
			continue;
		for (e = c; e > line && isspace((unsigned char)e[-1]); e--)
			;
		if ((size_t)(e - line) != strlen(key) ||
		    strncmp(line, key, strlen(key)) != 0)
			continue;
		for (v = c + 1; isspace((unsigned char)*v); v++)
			;
		for (e = v + strlen(v); e > v && isspace((unsigned char)e[-1]);
		    e--)
			;
		*e = '\0';
		snprintf(val, len, "%s", v);
		found = 1;
	}
	fclose(fp);
	return (found);
}

/*
 * The JSON writer: what it writes for a document built call by call, in
 * both layouts, byte for byte as RFC 8259 spells it, and parsed back by
 * jansson to the same values.
 */
ATF_TC_WITHOUT_HEAD(json_writer_builds_documents);
ATF_TC_BODY(json_writer_builds_documents, tc)
{
	static const char compact[] = "{\"a\":1,\"b\":[true,null,\"x\\\"y\"],"
	    "\"c\":{},\"d\":-9223372036854775808,\"e\":1099511627776,"
	    "\"f\":[],\"g\":1.5}";
	static const char spaced[] = "{\"a\": 1, \"b\": [true, null, "
	    "\"x\\\"y\"], \"c\": {}, \"d\": -9223372036854775808, "
	    "\"e\": 1099511627776, \"f\": [], \"g\": 1.5}";
	static const char rows[] = "[\n  {\"n\": 0},\n  {\"n\": 1}\n]";
	struct hwtr_jw w;
	struct sbuf b;
	json_error_t err;
	json_t *j;
	int pass;

	for (pass = 0; pass < 2; pass++) {
		b.len = 0;
		hwtr_jw_init(&w, sput, &b, pass ? HWTR_JW_SPACED : 0);
		hwtr_jw_obj(&w);
		hwtr_jw_ku64(&w, "a", 1);
		hwtr_jw_key(&w, "b");
		hwtr_jw_arr(&w);
		hwtr_jw_bool(&w, 1);
		hwtr_jw_null(&w);
		hwtr_jw_str(&w, "x\"y");
		hwtr_jw_end(&w);
		hwtr_jw_key(&w, "c");
		hwtr_jw_obj(&w);
		hwtr_jw_end(&w);
		hwtr_jw_ki64(&w, "d", INT64_MIN);
		hwtr_jw_ku64(&w, "e", (uint64_t)1 << 40);
		hwtr_jw_key(&w, "f");
		hwtr_jw_arr(&w);
		hwtr_jw_end(&w);
		hwtr_jw_key(&w, "g");
		hwtr_jw_numf(&w, "%d.%d", 1, 5);
		hwtr_jw_end(&w);
		ATF_CHECK_MSG(strcmp(b.buf, pass ? spaced : compact) == 0,
		    "expected '%s', got '%s'", pass ? spaced : compact, b.buf);
		j = json_loadb(b.buf, b.len, 0, &err);
		ATF_REQUIRE_MSG(j != NULL, "jansson: %s at %d: %s", err.text,
		    err.position, b.buf);
		ATF_CHECK_EQ(json_integer_value(json_object_get(j, "a")), 1);
		ATF_CHECK_EQ(json_array_size(json_object_get(j, "b")), 3);
		ATF_CHECK_STREQ(json_string_value(json_array_get(
		    json_object_get(j, "b"), 2)), "x\"y");
		ATF_CHECK_EQ(json_integer_value(json_object_get(j, "d")),
		    INT64_MIN);
		ATF_CHECK(json_real_value(json_object_get(j, "g")) == 1.5);
		json_decref(j);
	}

	/* Layout: after the comma, before the item or the closing. */
	b.len = 0;
	hwtr_jw_init(&w, sput, &b, HWTR_JW_SPACED);
	hwtr_jw_arr(&w);
	for (pass = 0; pass < 2; pass++) {
		hwtr_jw_ws(&w, "\n  ");
		hwtr_jw_obj(&w);
		hwtr_jw_ki64(&w, "n", pass);
		hwtr_jw_end(&w);
	}
	hwtr_jw_ws(&w, "\n");
	hwtr_jw_end(&w);
	ATF_CHECK_MSG(strcmp(b.buf, rows) == 0, "expected '%s', got '%s'",
	    rows, b.buf);
}

/*
 * The brand string as cpuid(1) (Debian's cpuid, make deps installs it)
 * reads it from the processor now, outer spaces trimmed; 0 without it.
 */
static int
cpuid_tool_brand(char *val, size_t len)
{
	char line[512], *v, *e;
	FILE *fp;
	int found = 0;

	if ((fp = popen("cpuid -1 2>/dev/null", "r")) == NULL)
		return (0);
	while (fgets(line, sizeof(line), fp) != NULL) {
		if (found || (v = strstr(line, "brand = \"")) == NULL)
			continue;
		for (v += strlen("brand = \""); *v == ' '; v++)
			;
		if ((e = strrchr(v, '"')) == NULL)
			continue;
		while (e > v && e[-1] == ' ')
			e--;
		*e = '\0';
		snprintf(val, len, "%s", v);
		found = 1;
	}
	return (pclose(fp) == 0 && found);
}

ATF_TC_WITHOUT_HEAD(cpu_host_matches_proc_cpuinfo);
ATF_TC_BODY(cpu_host_matches_proc_cpuinfo, tc)
{
	struct hwtr_cpu cpu;
	char v[256], brand[sizeof(cpu.brand)], *p, *e;

	if (!cpuinfo("vendor_id", v, sizeof(v)))
		atf_tc_skip("/proc/cpuinfo has no vendor_id (not x86)");
	hwtr_cpu_host(&cpu);
	if (strcmp(v, "GenuineIntel") == 0)
		ATF_CHECK_EQ(cpu.vendor, HWTR_CPU_INTEL);
	else if (strcmp(v, "AuthenticAMD") == 0)
		ATF_CHECK_EQ(cpu.vendor, HWTR_CPU_AMD);
	else
		ATF_CHECK_EQ(cpu.vendor, HWTR_CPU_UNKNOWN);
	ATF_REQUIRE(cpuinfo("cpu family", v, sizeof(v)));
	ATF_CHECK_EQ_MSG(cpu.family, strtoul(v, NULL, 10), "family %u, "
	    "/proc/cpuinfo %s", cpu.family, v);
	ATF_REQUIRE(cpuinfo("model", v, sizeof(v)));
	ATF_CHECK_EQ_MSG(cpu.model, strtoul(v, NULL, 10), "model %u, "
	    "/proc/cpuinfo %s", cpu.model, v);
	if (cpuinfo("stepping", v, sizeof(v)) && strcmp(v, "unknown") != 0)
		ATF_CHECK_EQ_MSG(cpu.stepping, strtoul(v, NULL, 10),
		    "stepping %u, /proc/cpuinfo %s", cpu.stepping, v);
	/*
	 * The kernel prints the brand string without outer spaces, as it
	 * read it at boot: a virtual machine moved to another host since
	 * (its CPUID now "Oxide Virtual Turin-like Processor", the kernel's
	 * "AMD EPYC") is compared with what cpuid(1) reads now.
	 */
	if ((cpuid_tool_brand(v, sizeof(v)) ||
	    cpuinfo("model name", v, sizeof(v))) && cpu.brand[0] != '\0') {
		for (p = cpu.brand; *p == ' '; p++)
			;
		snprintf(brand, sizeof(brand), "%s", p);
		for (e = brand + strlen(brand); e > brand && e[-1] == ' '; e--)
			;
		*e = '\0';
		ATF_CHECK_STREQ(brand, v);
	}
}

/*
 * A minimal ELF64 file whose one PT_NOTE segment is 8-aligned and holds a
 * GNU property note before the build-id note, as linkers lay out
 * .note.gnu.property and .note.gnu.build-id when they share a segment.
 */
static size_t
craft_elf(uint8_t *buf, size_t len, const uint8_t *id, size_t idlen)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)(void *)buf;
	Elf64_Phdr *ph = (Elf64_Phdr *)(void *)(buf + sizeof(*eh));
	uint8_t *n = buf + sizeof(*eh) + sizeof(*ph), *p = n;
	uint32_t w[3];

	memset(buf, 0, len);
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_DYN;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_phoff = sizeof(*eh);
	eh->e_ehsize = sizeof(*eh);
	eh->e_phentsize = sizeof(*ph);
	eh->e_phnum = 1;
	/* NT_GNU_PROPERTY_TYPE_0: x86 feature_1_and = IBT|SHSTK. */
	w[0] = 4, w[1] = 16, w[2] = NT_GNU_PROPERTY_TYPE_0;
	memcpy(p, w, 12);
	memcpy(p + 12, "GNU", 4);
	w[0] = 0xc0000002, w[1] = 4, w[2] = 3;
	memcpy(p + 16, w, 12);			/* pr_type, pr_datasz, data */
	p += 32;				/* 16 + 16, 8-aligned */
	w[0] = 4, w[1] = (uint32_t)idlen, w[2] = NT_GNU_BUILD_ID;
	memcpy(p, w, 12);
	memcpy(p + 12, "GNU", 4);
	memcpy(p + 16, id, idlen);
	p += 16 + ((idlen + 7) & ~(size_t)7);
	ph->p_type = PT_NOTE;
	ph->p_flags = PF_R;
	ph->p_offset = (uint64_t)(n - buf);
	ph->p_vaddr = ph->p_paddr = ph->p_offset;
	ph->p_filesz = ph->p_memsz = (uint64_t)(p - n);
	ph->p_align = 8;
	return ((size_t)(p - buf));
}

/* The "Build ID: ..." readelf -n prints for @path, or "". */
static void
readelf_build_id(const char *path, char *out, size_t len)
{
	char cmd[512], line[512], *p;
	FILE *fp;

	out[0] = '\0';
	snprintf(cmd, sizeof(cmd), "readelf -n '%s' 2>/dev/null", path);
	ATF_REQUIRE((fp = popen(cmd, "r")) != NULL);
	while (fgets(line, sizeof(line), fp) != NULL)
		if ((p = strstr(line, "Build ID: ")) != NULL && out[0] == '\0') {
			p += strlen("Build ID: ");
			p[strcspn(p, " \n")] = '\0';
			snprintf(out, len, "%s", p);
		}
	pclose(fp);
}

ATF_TC(elf_notes_agree_with_readelf);
ATF_TC_HEAD(elf_notes_agree_with_readelf, tc)
{
	atf_tc_set_md_var(tc, "require.progs", "readelf");
}
ATF_TC_BODY(elf_notes_agree_with_readelf, tc)
{
	static const uint8_t want[20] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4,
	    5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
	uint8_t buf[512], id[HWTR_BUILD_ID_MAX];
	char re[128], hex[2 * HWTR_BUILD_ID_MAX + 1];
	char self[4096];
	size_t n, idlen;
	ssize_t sl;
	int fd;

	/* The crafted file: what readelf and both of our readers say. */
	n = craft_elf(buf, sizeof(buf), want, sizeof(want));
	fd = open("crafted.elf", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ATF_REQUIRE(fd >= 0);
	ATF_REQUIRE(write(fd, buf, n) == (ssize_t)n);
	close(fd);
	readelf_build_id("crafted.elf", re, sizeof(re));
	hwtr_hex(hex, want, sizeof(want));
	ATF_REQUIRE_STREQ_MSG(re, hex, "readelf does not read the crafted "
	    "file as meant");
	ATF_REQUIRE_EQ(hwtr_elf_build_id_mem(buf, n, id, &idlen), 1);
	hwtr_hex(hex, id, idlen);
	ATF_CHECK_STREQ(hex, re);

	/* A real program: this test itself (by name: readelf is another). */
	sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
	ATF_REQUIRE(sl > 0);
	self[sl] = '\0';
	readelf_build_id(self, re, sizeof(re));
	if (re[0] == '\0')
		atf_tc_skip("this test program has no build-id note");
	ATF_REQUIRE((fd = open(self, O_RDONLY)) >= 0);
	ATF_REQUIRE_EQ(hwtr_elf_build_id_fd(fd, id, &idlen), 1);
	close(fd);
	hwtr_hex(hex, id, idlen);
	ATF_CHECK_STREQ(hex, re);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, parse_u64_is_strict);
	ATF_TP_ADD_TC(tp, hex_round_trip);
	ATF_TP_ADD_TC(tp, json_quote_parses_back);
	ATF_TP_ADD_TC(tp, json_writer_builds_documents);
	ATF_TP_ADD_TC(tp, cpu_host_matches_proc_cpuinfo);
	ATF_TP_ADD_TC(tp, elf_notes_agree_with_readelf);
	return (atf_no_error());
}
