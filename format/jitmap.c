/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * perf maps and jitdump files (hwtr_jit.h): the names, and for jitdump the
 * code bytes, of code that JIT compilers put in anonymous memory.  The
 * formats are perf's (tools/perf/Documentation/jit-interface.txt and
 * jitdump-specification.txt); this is a reader of its own that trusts no
 * length in the file.
 */

#include <assert.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwtrace.h"
#include "hwtr_common.h"
#include "hwtr_jit.h"

#define JD_MAGIC	0x4A695444u	/* "JiTD" in the writer's byte order */
#define JD_MAGIC_SW	0x4454694Au
#define JD_HDR_SIZE	40
#define JD_REC_HDR	16

enum {
	JD_LOAD = 0,
	JD_MOVE = 1,
	JD_DEBUG = 2,
	JD_CLOSE = 3,
	JD_UNWIND = 4
};

/* A jitdump being read: the buffer and the writer's byte order. */
struct jd {
	const uint8_t	*p;
	size_t		len;
	int		swap;
	const char	*file;
	char		*err;
	size_t		errlen;
};

static int jit_err(char *, size_t, int, const char *, size_t,
    const char *, ...) __attribute__((format(printf, 6, 7)));
static int sym_add(struct hwtr_jit_list *, const struct hwtr_jit_sym *,
    const char *, size_t);
static uint32_t rd32(const struct jd *, size_t);
static uint64_t rd64(const struct jd *, size_t);

int
hwtr_jit_name_ok(const char *name)
{
	const char *p, *end;
	size_t n;

	if (strncmp(name, "perf-", 5) == 0)
		p = name + 5, end = ".map";
	else if (strncmp(name, "jit-", 4) == 0)
		p = name + 4, end = ".dump";
	else
		return (0);
	for (n = 0; p[n] >= '0' && p[n] <= '9'; n++)
		;
	return (n > 0 && n <= 10 && strcmp(p + n, end) == 0);
}

int
hwtr_jit_parse(struct hwtr_jit_list *l, const char *file, const void *buf,
    size_t len, char *err, size_t errlen)
{
	const uint8_t *p = buf;

	if (len >= 4 && ((p[0] == 'D' && p[1] == 'T' && p[2] == 'i' &&
	    p[3] == 'J') || (p[0] == 'J' && p[1] == 'i' && p[2] == 'T' &&
	    p[3] == 'D')))
		return (hwtr_jit_parse_dump(l, file, buf, len, err, errlen));
	return (hwtr_jit_parse_map(l, file, buf, len, err, errlen));
}

/* A hex number of at most 16 digits, "0x" allowed; the end in *endp. */
static int
hex_field(const char *s, size_t n, size_t *endp, uint64_t *vp)
{
	size_t i = 0, d = 0;
	uint64_t v = 0;
	int c;

	if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		i = 2;
	for (; i < n; i++, d++) {
		if ((c = hwtr_hexdigit((unsigned char)s[i])) < 0)
			break;
		if (d == 16)
			return (-1);
		v = v << 4 | (uint64_t)c;
	}
	if (d == 0)
		return (-1);
	*endp = i;
	*vp = v;
	return (0);
}

/*
 * A perf map: lines "START SIZE NAME", START and SIZE in hex, NAME the
 * rest of the line (it may hold spaces).  Empty lines are skipped; a last
 * line without its newline is taken (the writer may still be running).
 */
int
hwtr_jit_parse_map(struct hwtr_jit_list *l, const char *file,
    const void *buf, size_t len, char *err, size_t errlen)
{
	const char *s = buf, *nl;
	struct hwtr_jit_sym sym;
	size_t off = 0, n, e, i, line = 0;
	int rc;

	while (off < len) {
		line++;
		nl = memchr(s + off, '\n', len - off);
		n = nl != NULL ? (size_t)(nl - (s + off)) : len - off;
		if (n > 0 && s[off + n - 1] == '\r')
			n--;
		if (n == 0) {
			off += nl != NULL ? 1 : 0;
			if (nl == NULL)
				break;
			continue;
		}
		memset(&sym, 0, sizeof(sym));
		sym.until = UINT64_MAX;
		if (memchr(s + off, '\0', n) != NULL)
			return (jit_err(err, errlen, HWTR_E_FORMAT, file, off,
			    "line %zu: a NUL byte in a perf map", line));
		if (hex_field(s + off, n, &e, &sym.start) < 0 || e == n ||
		    s[off + e] != ' ')
			return (jit_err(err, errlen, HWTR_E_FORMAT, file, off,
			    "line %zu: not \"START SIZE NAME\" (START: up to "
			    "16 hex digits, then a space)", line));
		i = e + 1;
		if (hex_field(s + off + i, n - i, &e, &sym.size) < 0 ||
		    i + e == n || s[off + i + e] != ' ' || i + e + 1 == n)
			return (jit_err(err, errlen, HWTR_E_FORMAT, file,
			    off + i, "line %zu: not \"START SIZE NAME\" (SIZE: "
			    "up to 16 hex digits, a space, a name)", line));
		i += e + 1;
		if (sym.size > UINT64_MAX - sym.start)
			return (jit_err(err, errlen, HWTR_E_FORMAT, file, off,
			    "line %zu: START 0x%jx + SIZE 0x%jx passes the "
			    "end of the address space", line,
			    (uintmax_t)sym.start, (uintmax_t)sym.size));
		if ((rc = sym_add(l, &sym, s + off + i, n - i)) < 0)
			return (rc == -HWTR_E_LIMIT ? jit_err(err, errlen,
			    HWTR_E_LIMIT, file, off, "more than %u symbols",
			    HWTR_JIT_MAX_SYMS) : rc);
		if (nl == NULL)
			break;
		off = (size_t)(nl - s) + 1;
	}
	return (0);
}

/* The last symbol still valid with @idx, or NULL. */
static struct hwtr_jit_sym *
find_index(struct hwtr_jit_list *l, uint64_t idx)
{
	size_t i;

	for (i = l->n; i > 0; i--)
		if (l->v[i - 1].code_index == idx &&
		    l->v[i - 1].until == UINT64_MAX)
			return (&l->v[i - 1]);
	return (NULL);
}

/* JIT_CODE_LOAD: pid, tid, vma, code_addr, code_size, index, name, code. */
static int
jd_load(struct hwtr_jit_list *l, const struct jd *j, size_t off, size_t rlen,
    uint64_t ts)
{
	struct hwtr_jit_sym sym;
	const char *name, *z;
	size_t b = off + JD_REC_HDR, left;
	int rc;

	if (rlen < JD_REC_HDR + 40)
		return (jit_err(j->err, j->errlen, HWTR_E_FORMAT, j->file, off,
		    "code load record of %zu bytes, shorter than its %d "
		    "fixed bytes", rlen, JD_REC_HDR + 40));
	memset(&sym, 0, sizeof(sym));
	sym.pid = rd32(j, b);
	sym.tid = rd32(j, b + 4);
	sym.start = rd64(j, b + 16);	/* code_addr; vma is at b + 8 */
	sym.size = rd64(j, b + 24);
	sym.code_index = rd64(j, b + 32);
	sym.timestamp = ts;
	sym.until = UINT64_MAX;
	name = (const char *)j->p + b + 40;
	left = rlen - JD_REC_HDR - 40;
	if ((z = memchr(name, '\0', left)) == NULL)
		return (jit_err(j->err, j->errlen, HWTR_E_FORMAT, j->file,
		    b + 40, "code load record: the name has no NUL within "
		    "the record"));
	left -= (size_t)(z - name) + 1;
	if (sym.size > left)
		return (jit_err(j->err, j->errlen, HWTR_E_FORMAT, j->file, off,
		    "code load record: code_size %ju, but only %zu bytes "
		    "are left in the record", (uintmax_t)sym.size, left));
	if (sym.size > UINT64_MAX - sym.start)
		return (jit_err(j->err, j->errlen, HWTR_E_FORMAT, j->file, off,
		    "code load record: code_addr 0x%jx + code_size 0x%jx "
		    "passes the end of the address space",
		    (uintmax_t)sym.start, (uintmax_t)sym.size));
	sym.code = (const uint8_t *)z + 1;
	if ((rc = sym_add(l, &sym, name, (size_t)(z - name))) < 0)
		return (rc == -HWTR_E_LIMIT ? jit_err(j->err, j->errlen,
		    HWTR_E_LIMIT, j->file, off, "more than %u symbols",
		    HWTR_JIT_MAX_SYMS) : rc);
	l->nloads++;
	return (0);
}

/*
 * JIT_CODE_MOVE: the code of @code_index now lives at new_code_addr.  The
 * old symbol ends at the move; a new one, with the same name and bytes,
 * begins.  A move of an index never loaded is counted and skipped.
 */
static int
jd_move(struct hwtr_jit_list *l, const struct jd *j, size_t off, size_t rlen,
    uint64_t ts)
{
	struct hwtr_jit_sym sym, *old;
	size_t b = off + JD_REC_HDR;
	char *name;
	int rc;

	if (rlen < JD_REC_HDR + 48)
		return (jit_err(j->err, j->errlen, HWTR_E_FORMAT, j->file, off,
		    "code move record of %zu bytes, shorter than its %d "
		    "bytes", rlen, JD_REC_HDR + 48));
	l->nmoves++;
	if ((old = find_index(l, rd64(j, b + 40))) == NULL)
		return (0);
	sym = *old;
	old->until = ts;
	sym.pid = rd32(j, b);
	sym.tid = rd32(j, b + 4);
	sym.start = rd64(j, b + 24);
	if (rd64(j, b + 32) != sym.size)
		return (jit_err(j->err, j->errlen, HWTR_E_FORMAT, j->file, off,
		    "code move record: code_size %ju, the load said %ju",
		    (uintmax_t)rd64(j, b + 32), (uintmax_t)sym.size));
	if (sym.size > UINT64_MAX - sym.start)
		return (jit_err(j->err, j->errlen, HWTR_E_FORMAT, j->file, off,
		    "code move record: new_code_addr 0x%jx + code_size "
		    "passes the end of the address space",
		    (uintmax_t)sym.start));
	sym.timestamp = ts;
	sym.until = UINT64_MAX;
	name = sym.name;	/* sym_add copies it; old may move */
	if ((name = strdup(name)) == NULL)
		return (-HWTR_E_NOMEM);
	rc = sym_add(l, &sym, name, strlen(name));
	free(name);
	if (rc == -HWTR_E_LIMIT)
		return (jit_err(j->err, j->errlen, HWTR_E_LIMIT, j->file, off,
		    "more than %u symbols", HWTR_JIT_MAX_SYMS));
	return (rc);
}

/*
 * JIT_CODE_DEBUG_INFO: code_addr, nr_entry, then entries of (addr, line,
 * discriminator, NUL-terminated file name).  Checked, not kept yet.
 */
static int
jd_debug(const struct jd *j, size_t off, size_t rlen)
{
	size_t b = off + JD_REC_HDR + 16, end = off + rlen;
	uint64_t nr, i;
	const char *z;

	if (rlen < JD_REC_HDR + 16)
		return (jit_err(j->err, j->errlen, HWTR_E_FORMAT, j->file, off,
		    "debug info record of %zu bytes, shorter than its %d "
		    "fixed bytes", rlen, JD_REC_HDR + 16));
	nr = rd64(j, off + JD_REC_HDR + 8);
	for (i = 0; i < nr; i++) {
		if (end - b < 17)
			return (jit_err(j->err, j->errlen, HWTR_E_FORMAT,
			    j->file, b, "debug info record: entry %ju of %ju "
			    "passes the end of the record", (uintmax_t)i,
			    (uintmax_t)nr));
		z = memchr(j->p + b + 16, '\0', end - b - 16);
		if (z == NULL)
			return (jit_err(j->err, j->errlen, HWTR_E_FORMAT,
			    j->file, b + 16, "debug info record: entry %ju's "
			    "file name has no NUL within the record",
			    (uintmax_t)i));
		b = (size_t)((const uint8_t *)z - j->p) + 1;
	}
	return (0);
}

/* JIT_CODE_UNWINDING_INFO: three sizes, then the data. */
static int
jd_unwind(const struct jd *j, size_t off, size_t rlen)
{
	uint64_t usize, hsize;

	if (rlen < JD_REC_HDR + 24)
		return (jit_err(j->err, j->errlen, HWTR_E_FORMAT, j->file, off,
		    "unwinding info record of %zu bytes, shorter than its "
		    "%d fixed bytes", rlen, JD_REC_HDR + 24));
	usize = rd64(j, off + JD_REC_HDR);
	hsize = rd64(j, off + JD_REC_HDR + 8);
	if (usize > rlen - JD_REC_HDR - 24 || hsize > usize)
		return (jit_err(j->err, j->errlen, HWTR_E_FORMAT, j->file, off,
		    "unwinding info record: unwinding_size %ju (eh_frame_hdr "
		    "%ju) does not fit the record's %zu bytes",
		    (uintmax_t)usize, (uintmax_t)hsize, rlen));
	return (0);
}

/*
 * A jitdump: a header of total_size bytes (at least 40), then records of
 * (id, total_size, timestamp) and a body; every record at least its 16
 * header bytes, so the walk always moves on.  A record cut off by the end
 * of the file is an error: capture copies the file after the run.
 */
int
hwtr_jit_parse_dump(struct hwtr_jit_list *l, const char *file,
    const void *buf, size_t len, char *err, size_t errlen)
{
	struct jd j = { .p = buf, .len = len, .file = file, .err = err,
	    .errlen = errlen };
	uint32_t magic, hsize, id, rlen;
	uint64_t ts;
	size_t off;
	int rc = 0;

	if (len < JD_HDR_SIZE)
		return (jit_err(err, errlen, HWTR_E_FORMAT, file, 0, "a jitdump "
		    "header needs %d bytes, the file has %zu", JD_HDR_SIZE,
		    len));
	magic = rd32(&j, 0);
	if (magic == JD_MAGIC_SW)
		j.swap = 1;
	else if (magic != JD_MAGIC)
		return (jit_err(err, errlen, HWTR_E_FORMAT, file, 0, "not a "
		    "jitdump: magic 0x%08x", magic));
	if (rd32(&j, 4) != 1)
		return (jit_err(err, errlen, HWTR_E_FORMAT, file, 4, "jitdump "
		    "version %u (this reader knows 1)", rd32(&j, 4)));
	hsize = rd32(&j, 8);
	if (hsize < JD_HDR_SIZE || hsize > len)
		return (jit_err(err, errlen, HWTR_E_FORMAT, file, 8, "header "
		    "total_size %u: not within %d and the file's %zu bytes",
		    hsize, JD_HDR_SIZE, len));
	l->dump = 1;
	l->elf_mach = rd32(&j, 12);
	l->pid = rd32(&j, 20);
	l->flags = rd64(&j, 32);
	for (off = hsize; off < len && rc == 0 && !l->closed; off += rlen) {
		if (len - off < JD_REC_HDR)
			return (jit_err(err, errlen, HWTR_E_FORMAT, file, off,
			    "a record header needs %d bytes, %zu are left",
			    JD_REC_HDR, len - off));
		id = rd32(&j, off);
		rlen = rd32(&j, off + 4);
		ts = rd64(&j, off + 8);
		if (rlen < JD_REC_HDR || rlen > len - off)
			return (jit_err(err, errlen, HWTR_E_FORMAT, file, off,
			    "record of type %u: total_size %u is not within "
			    "%d and the %zu bytes left", id, rlen, JD_REC_HDR,
			    len - off));
		switch (id) {
		case JD_LOAD:
			rc = jd_load(l, &j, off, rlen, ts);
			break;
		case JD_MOVE:
			rc = jd_move(l, &j, off, rlen, ts);
			break;
		case JD_DEBUG:
			rc = jd_debug(&j, off, rlen);
			l->ndebug++;
			break;
		case JD_CLOSE:
			l->closed = 1;
			break;
		case JD_UNWIND:
			rc = jd_unwind(&j, off, rlen);
			l->nunwind++;
			break;
		default:
			/* Later versions of the format may add types. */
			l->nunknown++;
			break;
		}
	}
	return (rc);
}

void
hwtr_jit_list_free(struct hwtr_jit_list *l)
{
	size_t i;

	if (l == NULL)
		return;
	for (i = 0; i < l->n; i++)
		free(l->v[i].name);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* ---- helpers --------------------------------------------------------- */

static int
jit_err(char *err, size_t errlen, int code, const char *file, size_t off,
    const char *fmt, ...)
{
	va_list ap;
	int n;

	if (errlen > 0) {
		n = snprintf(err, errlen, "%s offset 0x%zx: ", file, off);
		if (n >= 0 && (size_t)n < errlen) {
			va_start(ap, fmt);
			vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
			va_end(ap);
		}
	}
	return (-code);
}

/* Append @sym with a copy of the @n bytes of @name. */
static int
sym_add(struct hwtr_jit_list *l, const struct hwtr_jit_sym *sym,
    const char *name, size_t n)
{
	struct hwtr_jit_sym *nv;
	size_t cap;

	if (l->n >= HWTR_JIT_MAX_SYMS)
		return (-HWTR_E_LIMIT);
	if (l->n == l->cap) {
		cap = l->cap ? 2 * l->cap : 64;
		if ((nv = realloc(l->v, cap * sizeof(*nv))) == NULL)
			return (-HWTR_E_NOMEM);
		l->v = nv;
		l->cap = cap;
	}
	assert(l->n < l->cap);
	l->v[l->n] = *sym;
	if ((l->v[l->n].name = malloc(n + 1)) == NULL)
		return (-HWTR_E_NOMEM);
	memcpy(l->v[l->n].name, name, n);
	l->v[l->n].name[n] = '\0';
	l->n++;
	return (0);
}

static uint32_t
rd32(const struct jd *j, size_t off)
{
	uint32_t v;

	assert(off <= j->len && j->len - off >= 4);
	memcpy(&v, j->p + off, 4);
	return (j->swap ? __builtin_bswap32(v) : v);
}

static uint64_t
rd64(const struct jd *j, size_t off)
{
	uint64_t v;

	assert(off <= j->len && j->len - off >= 8);
	memcpy(&v, j->p + off, 8);
	return (j->swap ? __builtin_bswap64(v) : v);
}

/* ---- code regions (jit/code-PID.bin) ---------------------------------- */

int
hwtr_code_name_ok(const char *name, uint32_t *pidp)
{
	unsigned long long v;
	size_t n;

	if (strncmp(name, "code-", 5) != 0)
		return (0);
	for (n = 0; name[5 + n] >= '0' && name[5 + n] <= '9'; n++)
		;
	if (n == 0 || n > 10 || (n > 1 && name[5] == '0') ||
	    strcmp(name + 5 + n, ".bin") != 0)
		return (0);
	v = strtoull(name + 5, NULL, 10);
	if (v > UINT32_MAX)
		return (0);
	if (pidp != NULL)
		*pidp = (uint32_t)v;
	return (1);
}

static uint64_t
le_get(const uint8_t *p, int n)
{
	uint64_t v = 0;
	int i;

	for (i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return (v);
}

static void
le_put(uint8_t *p, uint64_t v, int n)
{
	int i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

void
hwtr_code_put_hdr(uint8_t *out)
{
	memcpy(out, HWTR_CODE_MAGIC, 8);
	le_put(out + 8, 1, 4);
	le_put(out + 12, 0, 4);
}

void
hwtr_code_put_rec(uint8_t *out, uint64_t addr, uint64_t from, uint64_t until,
    uint32_t len)
{
	le_put(out, addr, 8);
	le_put(out + 8, from, 8);
	le_put(out + 16, until, 8);
	le_put(out + 24, len, 4);
	le_put(out + 28, 0, 4);
}

int
hwtr_code_parse(struct hwtr_code_list *l, const char *file, const void *buf,
    size_t len, char *err, size_t errlen)
{
	const uint8_t *p = buf;
	struct hwtr_code_region r, *nv;
	size_t off, cap;
	uint64_t ver;

	if (len < HWTR_CODE_HDR || memcmp(p, HWTR_CODE_MAGIC, 8) != 0)
		return (jit_err(err, errlen, HWTR_E_FORMAT, file, 0,
		    "not a code-region file (no %s header of %d bytes)",
		    HWTR_CODE_MAGIC, HWTR_CODE_HDR));
	if ((ver = le_get(p + 8, 4)) != 1 || le_get(p + 12, 4) != 0)
		return (jit_err(err, errlen, HWTR_E_FORMAT, file, 8,
		    "version %ju with reserved %ju, expected 1 and 0",
		    (uintmax_t)ver, (uintmax_t)le_get(p + 12, 4)));
	for (off = HWTR_CODE_HDR; off < len; off += HWTR_CODE_REC + r.len) {
		if (len - off < HWTR_CODE_REC)
			return (jit_err(err, errlen, HWTR_E_FORMAT, file, off,
			    "record head of %d bytes cut short at %zu",
			    HWTR_CODE_REC, len - off));
		r.addr = le_get(p + off, 8);
		r.from = le_get(p + off + 8, 8);
		r.until = le_get(p + off + 16, 8);
		r.len = (uint32_t)le_get(p + off + 24, 4);
		if (le_get(p + off + 28, 4) != 0)
			return (jit_err(err, errlen, HWTR_E_FORMAT, file,
			    off + 28, "flags 0x%jx, expected 0",
			    (uintmax_t)le_get(p + off + 28, 4)));
		if (r.len == 0 || r.len > HWTR_CODE_MAX_LEN)
			return (jit_err(err, errlen, r.len == 0 ?
			    HWTR_E_FORMAT : HWTR_E_LIMIT, file, off + 24,
			    "region length %u not in 1..%u", r.len,
			    HWTR_CODE_MAX_LEN));
		if (r.addr > UINT64_MAX - r.len)
			return (jit_err(err, errlen, HWTR_E_FORMAT, file, off,
			    "region 0x%jx + %u passes the address space",
			    (uintmax_t)r.addr, r.len));
		if (r.from > r.until)
			return (jit_err(err, errlen, HWTR_E_FORMAT, file,
			    off + 8, "valid from %ju after until %ju",
			    (uintmax_t)r.from, (uintmax_t)r.until));
		if (len - off - HWTR_CODE_REC < r.len)
			return (jit_err(err, errlen, HWTR_E_FORMAT, file,
			    off + 24, "region of %u bytes, %zu left", r.len,
			    len - off - HWTR_CODE_REC));
		if (l->n >= HWTR_CODE_MAX_REGIONS)
			return (jit_err(err, errlen, HWTR_E_LIMIT, file, off,
			    "more than %u regions", HWTR_CODE_MAX_REGIONS));
		if (l->n == l->cap) {
			cap = l->cap ? 2 * l->cap : 16;
			if ((nv = realloc(l->v, cap * sizeof(*nv))) == NULL)
				return (-HWTR_E_NOMEM);
			l->v = nv;
			l->cap = cap;
		}
		r.bytes = p + off + HWTR_CODE_REC;
		assert(l->n < l->cap);
		l->v[l->n++] = r;
	}
	return (0);
}

void
hwtr_code_list_free(struct hwtr_code_list *l)
{
	if (l == NULL)
		return;
	free(l->v);
	memset(l, 0, sizeof(*l));
}
