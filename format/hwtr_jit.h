/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Readers for the two files JIT compilers write to name the code they put
 * in anonymous memory (issue 32): perf's map (/tmp/perf-PID.map, one
 * "START SIZE NAME" line per symbol, hex without 0x) and perf's jitdump
 * (jit-PID.dump: a header, then records; code loads carry the code bytes).
 * Both are parsed from memory into one list of symbols; nothing read is
 * trusted, every length is checked against what is left, and a failure
 * names the file and the byte offset.  Library code: no printing.
 *
 *   1) struct hwtr_jit_list l = { 0 };
 *   2) hwtr_jit_parse(&l, "jit-42.dump", buf, len, err, sizeof(err));
 *   3) l.v[0 .. l.n - 1]; the code pointers point into @buf, which must
 *      outlive the list's use of them.
 *   4) hwtr_jit_list_free(&l).
 */

#ifndef HWTR_JIT_H
#define HWTR_JIT_H

#include <stddef.h>
#include <stdint.h>

/* Members of this kind in an archive: "jit/" + the file's own name. */
#define HWTR_JIT_PREFIX		"jit/"

/* A symbol valid from @timestamp while @until is UINT64_MAX. */
struct hwtr_jit_sym {
	uint64_t	start;
	uint64_t	size;
	char		*name;		/* owned by the list */
	const uint8_t	*code;		/* jitdump loads: @size bytes; or NULL */
	uint64_t	timestamp;	/* jitdump: the record's; maps: 0 */
	uint64_t	until;		/* moved at; UINT64_MAX while valid */
	uint64_t	code_index;	/* jitdump: the runtime's id */
	uint32_t	pid;
	uint32_t	tid;
};

struct hwtr_jit_list {
	struct hwtr_jit_sym *v;
	size_t		n;
	size_t		cap;
	int		dump;		/* 1: read from a jitdump */
	uint32_t	pid;		/* jitdump header's; maps: 0 */
	uint32_t	elf_mach;	/* jitdump header's */
	uint64_t	flags;		/* jitdump header's: HWTR_JIT_F_* */
	size_t		nloads;		/* jitdump records of each type */
	size_t		nmoves;
	size_t		ndebug;
	size_t		nunwind;
	size_t		nunknown;	/* records of types after UNWINDING_INFO */
	int		closed;		/* a JIT_CODE_CLOSE was read */
};

/* jitdump header flag: timestamps are the CPU's counter (TSC). */
#define HWTR_JIT_F_ARCH_TIMESTAMP	1u

/* Most symbols one file may hold. */
#define HWTR_JIT_MAX_SYMS	(1u << 24)

/* 1 when @name (a file's base name) is perf-N.map or jit-N.dump. */
int hwtr_jit_name_ok(const char *name);

/*
 * Parse @len bytes at @buf, the contents of the file named @file: a
 * jitdump when it starts with the jitdump magic, a perf map otherwise.
 * Symbols are appended to @l.  0, or -HWTR_E_FORMAT / -HWTR_E_LIMIT with
 * "FILE offset 0xN: why" in @err, or -HWTR_E_NOMEM.
 */
int hwtr_jit_parse(struct hwtr_jit_list *l, const char *file,
    const void *buf, size_t len, char *err, size_t errlen);
int hwtr_jit_parse_map(struct hwtr_jit_list *l, const char *file,
    const void *buf, size_t len, char *err, size_t errlen);
int hwtr_jit_parse_dump(struct hwtr_jit_list *l, const char *file,
    const void *buf, size_t len, char *err, size_t errlen);

/* Frees what @l holds (not @l); accepts an empty list. */
void hwtr_jit_list_free(struct hwtr_jit_list *l);

/*
 * Code regions (hwtrace(5) member jit/code-PID.bin): the bytes of code in
 * anonymous executable memory of process PID, each version with the time
 * range in which it was the code at its address.  Little-endian: a
 * 16-byte header, "HWTRCODE", u32 version (1), u32 0; then records of a
 * 32-byte head, u64 address, u64 from, u64 until (UINT64_MAX: still
 * valid at the end), u32 length (1 .. HWTR_CODE_MAX_LEN), u32 flags (0),
 * followed by length code bytes.  Times are the capture's (tsc, or a
 * sequence number when the source has no clock); from <= until.
 */
#define HWTR_CODE_MAGIC		"HWTRCODE"
#define HWTR_CODE_HDR		16
#define HWTR_CODE_REC		32
#define HWTR_CODE_MAX_LEN	(1u << 20)
#define HWTR_CODE_MAX_REGIONS	(1u << 22)

struct hwtr_code_region {
	uint64_t	addr;
	uint64_t	from;
	uint64_t	until;
	uint32_t	len;
	const uint8_t	*bytes;		/* @len bytes in the parsed buffer */
};

struct hwtr_code_list {
	struct hwtr_code_region *v;
	size_t		n;
	size_t		cap;
};

/* 1 when @name (after "jit/") is code-N.bin; the pid in *pidp if not NULL. */
int hwtr_code_name_ok(const char *name, uint32_t *pidp);

/*
 * Parse a code-region file of @len bytes at @buf named @file, appending
 * to @l; the regions' bytes point into @buf.  0, or -HWTR_E_FORMAT /
 * -HWTR_E_LIMIT with "FILE offset 0xN: why" in @err, or -HWTR_E_NOMEM.
 */
int hwtr_code_parse(struct hwtr_code_list *l, const char *file,
    const void *buf, size_t len, char *err, size_t errlen);

/* Encoders for writers: 16 and 32 bytes; the code bytes follow a record. */
void hwtr_code_put_hdr(uint8_t *out);
void hwtr_code_put_rec(uint8_t *out, uint64_t addr, uint64_t from,
    uint64_t until, uint32_t len);

/* Frees what @l holds (not @l); accepts an empty list. */
void hwtr_code_list_free(struct hwtr_code_list *l);

#endif /* !HWTR_JIT_H */
