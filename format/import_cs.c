/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Import an ARM "trace and debug snapshot" directory (the format DS-5 and
 * OpenCSD's trc_pkt_lister read): snapshot.ini lists device files, each
 * device file has a [device] section (name, class, type), [regs] with
 * register values and [dump*] sections with memory dumps; trace.ini names
 * the trace buffers, which sources write to which buffer and which core
 * each source traces.
 *
 * One HWTR_TF_CORESIGHT stream is written per trace buffer, with its frame
 * format and its sources (protocol, trace ID, core type, registers); each
 * memory dump becomes a HWTR_IMG_MEMORY image and a HWTR_SB_MMAP record
 * with pid -1.  The memory space of each dump ("S", "EL2", ...) has no
 * place in an MMAP record, so the list of dumps with their spaces is kept
 * in the auxiliary member "aux/coresight-dumps" (lines "ADDRESS LENGTH
 * SPACE FILE").  Everything is read and checked before the writer starts,
 * so a bad snapshot leaves no file behind.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hwtrace.h"
#include "hwtr_common.h"
#include "hwtr_elf.h"
#include "hwtr_import.h"

#define CS_MAX_INI	(4u << 20)	/* largest .ini file */
#define CS_MAX_LINE	4096
#define CS_MAX_DEV	256
#define CS_MAX_IMAGE	(1ull << 30)
#define CS_MAX_SRC	128

/* One "key=value" of an .ini file, with its section and line. */
struct ini_ent {
	char		*sec;
	char		*key;
	char		*val;
	unsigned	line;
};

struct ini {
	char		*path;		/* as named in messages */
	char		*buf;
	struct ini_ent	*ent;
	size_t		nent;
	char		**secs;		/* every section header, in order */
	size_t		nsecs;
};

struct cs_dump {
	char		*file;		/* path of the dump file */
	const char	*space;		/* "" when not given */
	uint64_t	addr;
	uint64_t	off;
	uint64_t	len;
	void		*buf;
	size_t		buflen;
};

struct cs_dev {
	struct ini	ini;
	const char	*name;
	const char	*class;
	const char	*type;
};

struct cs_src {
	struct hwtr_cs_source s;
	struct hwtr_reg	*regs;
	const struct cs_dev *dev;
	int		buffer;		/* index in the buffer list */
};

struct cs_buf {
	const char	*name;
	char		*file;
	enum hwtr_cs_frame frame;
	uint64_t	size;
	struct hwtr_cs_source *srcs;
	size_t		nsrcs;
};

struct cs_snap {
	const char	*dir;
	int		outside;	/* --allow-outside */
	struct ini	snap, trace;
	struct cs_dev	*dev;
	size_t		ndev;
	struct cs_src	*src;
	size_t		nsrc;
	struct cs_buf	*buf;
	size_t		nbuf;
	struct cs_dump	*dump;
	size_t		ndump;
	char		**caveat;
	size_t		ncaveat;
	char		*errbuf;
	size_t		errlen;
};

static int add_caveat(struct cs_snap *sn, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static char *
trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = '\0';
	return (s);
}

static char *
path_join(const char *dir, const char *name)
{
	char *p;
	size_t n;

	size_t dl = strlen(dir);

	while (dl > 1 && dir[dl - 1] == '/')
		dl--;
	n = dl + strlen(name) + 2;
	if ((p = malloc(n)) == NULL)
		return (NULL);
	if (name[0] == '/')
		snprintf(p, n, "%s", name);
	else
		snprintf(p, n, "%.*s/%s", (int)dl, dir, name);
	return (p);
}

/*
 * Open @path, a file the snapshot names (path_join()): inside the
 * snapshot's directory only, unless --allow-outside.  Never blocks on a
 * FIFO.
 */
static int
cs_open(const struct cs_snap *sn, const char *path, struct stat *st,
    char *err, size_t errlen)
{
	return (hwtr_in_open_under(sn->outside ? NULL : sn->dir, path, st,
	    err, errlen));
}

/* hwtr_read_file() of a file the snapshot names, as cs_open() opens it. */
static int
cs_read(const struct cs_snap *sn, const char *path, uint64_t max,
    void **bufp, size_t *lenp, char *err, size_t errlen)
{
	return (hwtr_read_under(sn->outside ? NULL : sn->dir, path, max,
	    bufp, lenp, err, errlen));
}

/*
 * A line of @ini as it may appear in a message: the text of a file
 * inside the snapshot is the input's own, but with --allow-outside an
 * .ini may be any file on the machine (/etc/shadow), so only its line
 * number is given.
 */
static const char *
ini_quote(const struct cs_snap *sn, const char *line)
{
	return (sn->outside ? "(not shown: --allow-outside)" : line);
}

static void
ini_free(struct ini *ini)
{
	free(ini->path);
	free(ini->buf);
	free(ini->ent);
	free(ini->secs);
	memset(ini, 0, sizeof(*ini));
}

/*
 * Parse an .ini file strictly: blank lines, ';' or '#' comments, "[name]"
 * section headers and "key=value" lines inside a section; anything else is
 * an error naming the file and line.  Entries point into ini->buf.
 */
static int
ini_load(struct cs_snap *sn, struct ini *ini, const char *dir,
    const char *name, const char *ref)
{
	char ebuf[HWTR_ERRMSG_MAX], *p, *line, *nl, *eq, *sec = NULL, *e;
	void *vbuf;
	size_t len, cap = 0, scap = 0;
	unsigned lineno = 0;

	memset(ini, 0, sizeof(*ini));
	if ((ini->path = path_join(dir, name)) == NULL)
		goto nomem;
	if (cs_read(sn, ini->path, CS_MAX_INI, &vbuf, &len, ebuf,
	    sizeof(ebuf)) < 0) {
		/* hwtr_read_file() names the file; @ref says who named it. */
		hwtr_import_err(sn->errbuf, sn->errlen, "%s%s%s",
		    ref != NULL ? ref : "", ref != NULL ? ": " : "", ebuf);
		return (-HWTR_E_IO);
	}
	/* A terminated copy: the file may hold NULs, which are refused. */
	if ((ini->buf = malloc(len + 1)) == NULL) {
		free(vbuf);
		goto nomem;
	}
	memcpy(ini->buf, vbuf, len);
	ini->buf[len] = '\0';
	free(vbuf);
	if (memchr(ini->buf, '\0', len) != NULL) {
		hwtr_import_err(sn->errbuf, sn->errlen, "'%s': a NUL byte: "
		    "not a text file", ini->path);
		return (-HWTR_E_FORMAT);
	}
	for (p = ini->buf; *p != '\0'; p = nl) {
		lineno++;
		line = p;
		if ((nl = strchr(p, '\n')) != NULL)
			*nl++ = '\0';
		else
			nl = p + strlen(p);
		if ((size_t)(nl - line) > CS_MAX_LINE) {
			hwtr_import_err(sn->errbuf, sn->errlen, "'%s' line %u: "
			    "longer than %u bytes", ini->path, lineno,
			    CS_MAX_LINE);
			return (-HWTR_E_LIMIT);
		}
		line = trim(line);
		/* A UTF-8 byte order mark on the first line. */
		if (lineno == 1 && strncmp(line, "\xef\xbb\xbf", 3) == 0)
			line = trim(line + 3);
		if (*line == '\0' || *line == ';' || *line == '#')
			continue;
		if (*line == '[') {
			e = strchr(line, ']');
			if (e == NULL || trim(e + 1)[0] != '\0' || e == line + 1) {
				hwtr_import_err(sn->errbuf, sn->errlen, "'%s' "
				    "line %u: malformed section header '%s'",
				    ini->path, lineno, ini_quote(sn, line));
				return (-HWTR_E_FORMAT);
			}
			*e = '\0';
			sec = trim(line + 1);
			if (hwtr_grow(&ini->secs, &scap, ini->nsecs + 1,
			    sizeof(*ini->secs)) < 0)
				goto nomem;
			ini->secs[ini->nsecs++] = sec;
			continue;
		}
		if ((eq = strchr(line, '=')) == NULL || eq == line) {
			hwtr_import_err(sn->errbuf, sn->errlen, "'%s' line %u: "
			    "not 'key=value' or '[section]': '%s'", ini->path,
			    lineno, ini_quote(sn, line));
			return (-HWTR_E_FORMAT);
		}
		if (sec == NULL) {
			hwtr_import_err(sn->errbuf, sn->errlen, "'%s' line %u: "
			    "key outside any section", ini->path, lineno);
			return (-HWTR_E_FORMAT);
		}
		*eq = '\0';
		if (hwtr_grow(&ini->ent, &cap, ini->nent + 1,
		    sizeof(*ini->ent)) < 0)
			goto nomem;
		ini->ent[ini->nent].sec = sec;
		ini->ent[ini->nent].key = trim(line);
		ini->ent[ini->nent].val = trim(eq + 1);
		ini->ent[ini->nent].line = lineno;
		ini->nent++;
	}
	return (0);
nomem:
	hwtr_import_err(sn->errbuf, sn->errlen, "out of memory");
	return (-HWTR_E_NOMEM);
}

/* The value of [@sec] @key (case-insensitive key), or NULL. */
static const char *
ini_get(const struct ini *ini, const char *sec, const char *key)
{
	size_t i;

	for (i = 0; i < ini->nent; i++)
		if (strcmp(ini->ent[i].sec, sec) == 0 &&
		    strcasecmp(ini->ent[i].key, key) == 0)
			return (ini->ent[i].val);
	return (NULL);
}

static int
ini_has_sec(const struct ini *ini, const char *sec)
{
	size_t i;

	for (i = 0; i < ini->nsecs; i++)
		if (strcmp(ini->secs[i], sec) == 0)
			return (1);
	return (0);
}

static const char *
ini_need(struct cs_snap *sn, const struct ini *ini, const char *sec,
    const char *key)
{
	const char *v;

	if ((v = ini_get(ini, sec, key)) == NULL || *v == '\0')
		hwtr_import_err(sn->errbuf, sn->errlen, "'%s': [%s] %s: %s",
		    ini->path, sec, key, v == NULL ? "missing" : "empty");
	return (v != NULL && *v != '\0' ? v : NULL);
}

static int
need_num(struct cs_snap *sn, const struct ini *ini, const char *sec,
    const char *key, uint64_t *vp)
{
	const char *v;

	if ((v = ini_need(sn, ini, sec, key)) == NULL)
		return (-HWTR_E_FORMAT);
	if (hwtr_parse_u64(v, vp) != 0) {
		hwtr_import_err(sn->errbuf, sn->errlen, "'%s': [%s] %s: "
		    "malformed number '%s'", ini->path, sec, key, v);
		return (-HWTR_E_FORMAT);
	}
	return (0);
}

/* "ETM4", "ETM4.2", "ETM3.5", "PTM1.1", "PFT1.1", "ETE", "STM" ... */
static enum hwtr_trace_format
protocol_of(const char *type)
{
	if (strncasecmp(type, "ETM4", 4) == 0)
		return (HWTR_TF_ETMV4);
	if (strncasecmp(type, "ETM3", 4) == 0)
		return (HWTR_TF_ETMV3);
	if (strncasecmp(type, "PTM", 3) == 0 ||
	    strncasecmp(type, "PFT", 3) == 0)
		return (HWTR_TF_PTM);
	if (strncasecmp(type, "ETE", 3) == 0)
		return (HWTR_TF_ETE);
	if (strncasecmp(type, "STM", 3) == 0)
		return (HWTR_TF_STM);
	return (HWTR_TF_NONE);
}

/* Registers a decoder of @proto cannot do without. */
static const char *const etm4_regs[] = { "TRCCONFIGR", "TRCTRACEIDR",
	"TRCIDR0", "TRCIDR1", "TRCIDR2", "TRCIDR8", "TRCIDR9", "TRCIDR10",
	"TRCIDR11", "TRCIDR12", "TRCIDR13", NULL };
static const char *const ete_regs[] = { "TRCCONFIGR", "TRCTRACEIDR",
	"TRCIDR0", "TRCIDR1", "TRCIDR2", "TRCIDR8", "TRCDEVARCH", NULL };
static const char *const etm3_regs[] = { "ETMCR", "ETMIDR", "ETMCCER",
	"ETMTRACEIDR", NULL };
static const char *const stm_regs[] = { "STMTCSR", NULL };

static const struct hwtr_reg *
find_reg(const struct cs_src *s, const char *name)
{
	size_t i;

	for (i = 0; i < s->s.nregs; i++)
		if (s->regs[i].name != NULL &&
		    strcasecmp(s->regs[i].name, name) == 0)
			return (&s->regs[i]);
	return (NULL);
}

/*
 * TRCDEVARCH, as ETMv4 and ETE define it: ARCHITECT (bits 31:21, 0x23b
 * for Arm), PRESENT (bit 20), REVISION (19:16), ARCHVER (15:12) and
 * ARCHPART (11:0, 0xa13 for a PE trace unit).  ARCHVER is 4 for ETMv4
 * and 5 for ETE.
 */
#define DEVARCH_ARCHITECT(v)	(((v) >> 21) & 0x7ff)
#define DEVARCH_PRESENT(v)	(((v) >> 20) & 0x1)
#define DEVARCH_ARCHVER(v)	(((v) >> 12) & 0xf)
#define DEVARCH_ARCHPART(v)	((v) & 0xfff)
#define DEVARCH_ARM		0x23b
#define DEVARCH_TRACE_UNIT	0xa13

/*
 * The architecture version of an ETMv4 or ETE source must be the one its
 * device type names.  TRCIDR1.TRCARCHMAJ (bits 11:8) holds it, or 0xf,
 * which means "see TRCDEVARCH": every ETE unit says 0xf (ETE has no
 * version of its own in TRCIDR1), later ETMv4 units may.  TRCDEVARCH,
 * when present, must describe an Arm trace unit of that version.  This
 * is how OpenCSD reads ETE: its version from TRCDEVARCH, TRCIDR1's
 * architecture fields ignored.
 */
static int
check_arch(struct cs_snap *sn, const struct cs_src *s, const struct ini *ini)
{
	const struct hwtr_reg *idr1, *da;
	uint64_t maj, want;

	want = s->s.protocol == HWTR_TF_ETE ? 5 : 4;
	if ((da = find_reg(s, "TRCDEVARCH")) != NULL) {
		if (DEVARCH_ARCHITECT(da->value) != DEVARCH_ARM ||
		    !DEVARCH_PRESENT(da->value) ||
		    DEVARCH_ARCHPART(da->value) != DEVARCH_TRACE_UNIT) {
			hwtr_import_err(sn->errbuf, sn->errlen, "'%s': [regs] "
			    "TRCDEVARCH: 0x%" PRIx64 " does not describe an Arm "
			    "trace unit (architect 0x%x, present %d, part "
			    "0x%03x; expected 0x23b, 1, 0xa13)", ini->path,
			    da->value, (unsigned)DEVARCH_ARCHITECT(da->value),
			    (int)DEVARCH_PRESENT(da->value),
			    (unsigned)DEVARCH_ARCHPART(da->value));
			return (-HWTR_E_FORMAT);
		}
		if (DEVARCH_ARCHVER(da->value) != want) {
			hwtr_import_err(sn->errbuf, sn->errlen, "'%s': [regs] "
			    "TRCDEVARCH: 0x%" PRIx64 " says architecture "
			    "version %u, not %" PRIu64 " (%s, as type '%s' "
			    "says)", ini->path, da->value,
			    (unsigned)DEVARCH_ARCHVER(da->value), want,
			    want == 5 ? "ETE" : "ETMv4", s->dev->type);
			return (-HWTR_E_FORMAT);
		}
	}
	idr1 = find_reg(s, "TRCIDR1");
	maj = (idr1->value >> 8) & 0xf;
	if (maj == 0xf && da == NULL) {
		hwtr_import_err(sn->errbuf, sn->errlen, "'%s': [regs] TRCIDR1: "
		    "0x%" PRIx64 " says architecture 15 (see TRCDEVARCH) but "
		    "TRCDEVARCH is missing", ini->path, idr1->value);
		return (-HWTR_E_FORMAT);
	}
	if (maj != 0xf && maj != want) {
		hwtr_import_err(sn->errbuf, sn->errlen, "'%s': [regs] TRCIDR1: "
		    "0x%" PRIx64 " says architecture %" PRIu64 ", not %s (%"
		    PRIu64 ", or 15 and TRCDEVARCH)", ini->path, idr1->value,
		    maj, want == 5 ? "ETE" : "ETMv4", want);
		return (-HWTR_E_FORMAT);
	}
	return (0);
}

/*
 * Read the [regs] of a trace source: "NAME(annotations)=VALUE", the name
 * stored without its annotations.  Check that the registers the decoder
 * needs are there and make sense, and take the trace ID from them.
 */
static int
load_source(struct cs_snap *sn, struct cs_src *s, const struct cs_dev *d,
    enum hwtr_cs_frame frame)
{
	const struct ini *ini = &d->ini;
	const char *const *need;
	const struct hwtr_reg *r;
	uint64_t v, id;
	size_t i, n = 0;
	char *par;

	s->dev = d;
	s->s.protocol = protocol_of(d->type);
	for (i = 0; i < ini->nent; i++)
		if (strcmp(ini->ent[i].sec, "regs") == 0)
			n++;
	if ((s->regs = calloc(n + 1, sizeof(*s->regs))) == NULL) {
		hwtr_import_err(sn->errbuf, sn->errlen, "out of memory");
		return (-HWTR_E_NOMEM);
	}
	for (i = 0; i < ini->nent; i++) {
		struct ini_ent *e = &ini->ent[i];

		if (strcmp(e->sec, "regs") != 0)
			continue;
		if ((par = strchr(e->key, '(')) != NULL) {
			if (e->key[strlen(e->key) - 1] != ')' || par == e->key) {
				hwtr_import_err(sn->errbuf, sn->errlen, "'%s' "
				    "line %u: [regs] %s: malformed register "
				    "name", ini->path, e->line, e->key);
				return (-HWTR_E_FORMAT);
			}
			*par = '\0';
		}
		if (hwtr_parse_u64(e->val, &v) != 0) {
			hwtr_import_err(sn->errbuf, sn->errlen, "'%s' line "
			    "%u: [regs] %s: malformed value '%s'", ini->path,
			    e->line, e->key, e->val);
			return (-HWTR_E_FORMAT);
		}
		s->regs[s->s.nregs].name = e->key;
		s->regs[s->s.nregs].value = v;
		s->s.nregs++;
	}
	s->s.regs = s->regs;
	switch (s->s.protocol) {
	case HWTR_TF_ETMV4:
		need = etm4_regs;
		break;
	case HWTR_TF_ETE:
		need = ete_regs;
		break;
	case HWTR_TF_ETMV3:
	case HWTR_TF_PTM:
		need = etm3_regs;
		break;
	default:
		need = stm_regs;
		break;
	}
	for (; *need != NULL; need++)
		if (find_reg(s, *need) == NULL) {
			hwtr_import_err(sn->errbuf, sn->errlen, "'%s': [regs] "
			    "%s: missing (a %s source needs it)", ini->path,
			    *need, d->type);
			return (-HWTR_E_FORMAT);
		}
	if (s->s.protocol == HWTR_TF_STM) {
		r = find_reg(s, "STMTCSR");
		id = (r->value >> 16) & 0x7f;
	} else {
		r = find_reg(s, s->s.protocol == HWTR_TF_ETMV3 ||
		    s->s.protocol == HWTR_TF_PTM ? "ETMTRACEIDR" :
		    "TRCTRACEIDR");
		id = r->value;
	}
	/*
	 * IDs 0 and 0x70-0x7f are reserved (CoreSight architecture); an
	 * unformatted buffer has no IDs on the wire, so any is accepted.
	 */
	if (id > 0x7f || (frame != HWTR_CS_FRAME_NONE &&
	    (id == 0 || id >= 0x70))) {
		hwtr_import_err(sn->errbuf, sn->errlen, "'%s': [regs] %s: "
		    "trace ID 0x%" PRIx64 " is reserved or out of range "
		    "(0x01-0x6f)", ini->path, r->name, id);
		return (-HWTR_E_FORMAT);
	}
	s->s.trace_id = (uint8_t)id;
	for (i = 0; i < s->s.nregs; i++) {
		/* Only the few 64-bit address comparators may exceed 32 bits. */
		if (s->regs[i].value > UINT32_MAX && (s->s.protocol ==
		    HWTR_TF_ETMV3 || s->s.protocol == HWTR_TF_PTM ||
		    strncasecmp(s->regs[i].name, "TRCIDR", 6) == 0 ||
		    strcasecmp(s->regs[i].name, "TRCCONFIGR") == 0)) {
			hwtr_import_err(sn->errbuf, sn->errlen, "'%s': [regs] "
			    "%s: 0x%" PRIx64 " does not fit the 32-bit "
			    "register", ini->path, s->regs[i].name,
			    s->regs[i].value);
			return (-HWTR_E_FORMAT);
		}
	}
	if (s->s.protocol == HWTR_TF_ETMV4 || s->s.protocol == HWTR_TF_ETE)
		return (check_arch(sn, s, ini));
	return (0);
}

/* Read the [dump*] sections of a device file. */
static int
load_dumps(struct cs_snap *sn, const struct cs_dev *d)
{
	const struct ini *ini = &d->ini;
	struct cs_dump du, *nv;
	const char *f, *sp;
	char ebuf[HWTR_ERRMSG_MAX];
	size_t i, j;
	int rc;

	for (i = 0; i < ini->nsecs; i++) {
		const char *sec = ini->secs[i];

		if (strncmp(sec, "dump", 4) != 0)
			continue;
		memset(&du, 0, sizeof(du));
		if ((f = ini_need(sn, ini, sec, "file")) == NULL)
			return (-HWTR_E_FORMAT);
		if ((rc = need_num(sn, ini, sec, "address", &du.addr)) < 0)
			return (rc);
		if (ini_get(ini, sec, "offset") != NULL &&
		    (rc = need_num(sn, ini, sec, "offset", &du.off)) < 0)
			return (rc);
		if (ini_get(ini, sec, "length") != NULL &&
		    (rc = need_num(sn, ini, sec, "length", &du.len)) < 0)
			return (rc);
		sp = ini_get(ini, sec, "space");
		du.space = sp != NULL ? sp : "";
		if ((du.file = path_join(sn->dir, f)) == NULL) {
			hwtr_import_err(sn->errbuf, sn->errlen, "out of "
			    "memory");
			return (-HWTR_E_NOMEM);
		}
		/*
		 * A dump file that is absent is noted, not fatal: snapshots
		 * in the wild name dumps they do not ship (OpenCSD decodes
		 * them, reporting the memory as not accessible).
		 */
		rc = cs_read(sn, du.file, CS_MAX_IMAGE, &du.buf, &du.buflen,
		    ebuf, sizeof(ebuf));
		if (rc == -HWTR_E_NOENT) {
			rc = add_caveat(sn, "'%s': [%s] file '%s': missing: "
			    "memory at 0x%" PRIx64 " not imported", ini->path,
			    sec, du.file, du.addr);
			free(du.file);
			if (rc < 0)
				return (rc);
			continue;
		}
		if (rc < 0) {
			hwtr_import_err(sn->errbuf, sn->errlen, "'%s': [%s] "
			    "file '%s': %s", ini->path, sec, du.file, ebuf);
			free(du.file);
			return (rc);
		}
		if (du.len == 0)
			du.len = du.off < du.buflen ? du.buflen - du.off : 0;
		/*
		 * A length past the end of the file is cut to the file, as
		 * OpenCSD's snapshot reader does; an offset past it, or a
		 * range that wraps the address space, is an error.
		 */
		if (du.off >= du.buflen || du.len == 0) {
			hwtr_import_err(sn->errbuf, sn->errlen, "'%s': [%s] "
			    "offset 0x%" PRIx64 ": outside '%s' (%zu bytes)",
			    ini->path, sec, du.off, du.file, du.buflen);
			free(du.file);
			free(du.buf);
			return (-HWTR_E_FORMAT);
		}
		if (du.len > du.buflen - du.off)
			du.len = du.buflen - du.off;
		if (hwtr_import_wraps(du.addr, 0, du.len)) {
			hwtr_import_err(sn->errbuf, sn->errlen, "'%s': [%s] "
			    "address 0x%" PRIx64 " plus length wraps around",
			    ini->path, sec, du.addr);
			free(du.file);
			free(du.buf);
			return (-HWTR_E_FORMAT);
		}
		/* Several cores often name the same dump. */
		for (j = 0; j < sn->ndump; j++)
			if (sn->dump[j].addr == du.addr &&
			    sn->dump[j].len == du.len &&
			    sn->dump[j].off == du.off &&
			    strcmp(sn->dump[j].file, du.file) == 0 &&
			    strcmp(sn->dump[j].space, du.space) == 0)
				break;
		if (j < sn->ndump) {
			free(du.file);
			free(du.buf);
			continue;
		}
		nv = realloc(sn->dump, (sn->ndump + 1) * sizeof(*nv));
		if (nv == NULL) {
			free(du.file);
			free(du.buf);
			hwtr_import_err(sn->errbuf, sn->errlen, "out of "
			    "memory");
			return (-HWTR_E_NOMEM);
		}
		sn->dump = nv;
		sn->dump[sn->ndump++] = du;
	}
	return (0);
}

static const struct cs_dev *
find_dev(const struct cs_snap *sn, const char *name)
{
	size_t i;

	for (i = 0; i < sn->ndev; i++)
		if (sn->dev[i].name != NULL &&
		    strcmp(sn->dev[i].name, name) == 0)
			return (&sn->dev[i]);
	return (NULL);
}

static int
add_caveat(struct cs_snap *sn, const char *fmt, ...)
{
	char buf[512], **nv;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	nv = realloc(sn->caveat, (sn->ncaveat + 1) * sizeof(*nv));
	if (nv == NULL || (nv[sn->ncaveat] = strdup(buf)) == NULL) {
		if (nv != NULL)
			sn->caveat = nv;
		hwtr_import_err(sn->errbuf, sn->errlen, "out of memory");
		return (-HWTR_E_NOMEM);
	}
	sn->caveat = nv;
	sn->ncaveat++;
	return (0);
}

/*
 * Device @e of snapshot.ini's [device_list], the next sn->dev (sn->dev
 * owns what it loads, also on error: snap_free()).
 */
static int
snap_device(struct cs_snap *sn, const struct ini_ent *e)
{
	struct cs_dev *d = &sn->dev[sn->ndev++];
	char ref[512];
	size_t j;
	int rc;

	snprintf(ref, sizeof(ref), "'%s': [device_list] %s", sn->snap.path,
	    e->key);
	if ((rc = ini_load(sn, &d->ini, sn->dir, e->val, ref)) < 0)
		return (rc);
	if ((d->name = ini_need(sn, &d->ini, "device", "name")) == NULL ||
	    (d->class = ini_need(sn, &d->ini, "device", "class")) == NULL ||
	    (d->type = ini_need(sn, &d->ini, "device", "type")) == NULL)
		return (-HWTR_E_FORMAT);
	for (j = 0; j + 1 < sn->ndev; j++)
		if (strcmp(sn->dev[j].name, d->name) == 0) {
			hwtr_import_err(sn->errbuf, sn->errlen, "'%s': [device] "
			    "name: '%s' is also the name in '%s'", d->ini.path,
			    d->name, sn->dev[j].ini.path);
			return (-HWTR_E_FORMAT);
		}
	return (load_dumps(sn, d));
}

/* snapshot.ini's [device_list]: each device's ini file and dumps. */
static int
snap_devices(struct cs_snap *sn)
{
	size_t i, n;
	int rc;

	if (!ini_has_sec(&sn->snap, "device_list")) {
		hwtr_import_err(sn->errbuf, sn->errlen, "'%s': [device_list]: "
		    "missing", sn->snap.path);
		return (-HWTR_E_FORMAT);
	}
	for (i = n = 0; i < sn->snap.nent; i++)
		if (strcmp(sn->snap.ent[i].sec, "device_list") == 0)
			n++;
	if (n > CS_MAX_DEV) {
		hwtr_import_err(sn->errbuf, sn->errlen, "'%s': [device_list]: "
		    "more than %u devices", sn->snap.path, CS_MAX_DEV);
		return (-HWTR_E_LIMIT);
	}
	if ((sn->dev = calloc(n + 1, sizeof(*sn->dev))) == NULL) {
		hwtr_import_err(sn->errbuf, sn->errlen, "out of memory");
		return (-HWTR_E_NOMEM);
	}
	for (i = 0; i < sn->snap.nent; i++)
		if (strcmp(sn->snap.ent[i].sec, "device_list") == 0 &&
		    (rc = snap_device(sn, &sn->snap.ent[i])) < 0)
			return (rc);
	return (0);
}

/* A buffer's format= value as a frame kind; -1 when unknown. */
static int
frame_of(const char *fmt)
{
	if (strcmp(fmt, "coresight") == 0)
		return (HWTR_CS_FRAME_CORESIGHT);
	if (strcmp(fmt, "source_data") == 0 || strcmp(fmt, "raw") == 0)
		return (HWTR_CS_FRAME_NONE);
	if (strcmp(fmt, "dstream_coresight") == 0)
		return (HWTR_CS_FRAME_DSTREAM);
	if (strcmp(fmt, "tpiu") == 0 || strcmp(fmt, "tpiu_coresight") == 0)
		return (HWTR_CS_FRAME_TPIU);
	return (-1);
}

/* Trace buffer section @sec of the trace metadata: the next sn->buf. */
static int
snap_buffer(struct cs_snap *sn, const char *sec)
{
	const struct ini *ti = &sn->trace;
	struct cs_buf *b = &sn->buf[sn->nbuf];
	const char *f, *fmt;
	struct stat st;
	char ebuf[HWTR_ERRMSG_MAX];
	size_t j;
	int rc, frame, fd;

	if (!ini_has_sec(ti, sec)) {
		hwtr_import_err(sn->errbuf, sn->errlen, "'%s': "
		    "[trace_buffers] buffers: no section [%s]",
		    ti->path, sec);
		return (-HWTR_E_FORMAT);
	}
	if ((b->name = ini_need(sn, ti, sec, "name")) == NULL ||
	    (f = ini_need(sn, ti, sec, "file")) == NULL ||
	    (fmt = ini_need(sn, ti, sec, "format")) == NULL)
		return (-HWTR_E_FORMAT);
	if ((frame = frame_of(fmt)) < 0) {
		hwtr_import_err(sn->errbuf, sn->errlen, "'%s': [%s] "
		    "format: unknown '%s' (coresight, source_data, "
		    "dstream_coresight, tpiu)", ti->path, sec, fmt);
		return (-HWTR_E_FORMAT);
	}
	b->frame = frame;
	if ((b->file = path_join(sn->dir, f)) == NULL) {
		hwtr_import_err(sn->errbuf, sn->errlen, "out of memory");
		return (-HWTR_E_NOMEM);
	}
	sn->nbuf++;
	if ((fd = cs_open(sn, b->file, &st, ebuf, sizeof(ebuf))) < 0) {
		hwtr_import_err(sn->errbuf, sn->errlen, "'%s': [%s] "
		    "file: %s", ti->path, sec, ebuf);
		return (fd);
	}
	close(fd);
	b->size = (uint64_t)st.st_size;
	/*
	 * Formatted buffers are whole 16-byte frames.  An empty
	 * buffer is a source that wrote nothing (ete-wfet's second
	 * session): an empty stream, as trc_pkt_lister decodes it.
	 */
	if (b->frame != HWTR_CS_FRAME_NONE && b->size % 16 != 0) {
		hwtr_import_err(sn->errbuf, sn->errlen, "'%s': [%s] "
		    "file '%s': %" PRIu64 " bytes: truncated (not a "
		    "whole number of 16-byte frames)", ti->path, sec,
		    b->file, b->size);
		return (-HWTR_E_TRUNCATED);
	}
	rc = 0;
	for (j = 0; j + 1 < sn->nbuf; j++)
		if (strcmp(sn->buf[j].name, b->name) == 0) {
			hwtr_import_err(sn->errbuf, sn->errlen, "'%s': "
			    "[%s] name: '%s' names another buffer "
			    "too", ti->path, sec, b->name);
			rc = -HWTR_E_FORMAT;
		}
	return (rc);
}

/* The trace metadata file and its [trace_buffers] buffers. */
static int
snap_buffers(struct cs_snap *sn)
{
	const struct ini *ti;
	const char *v, *meta;
	char *list, *tok, *save, ref[512];
	size_t n;
	int rc;

	if ((meta = ini_need(sn, &sn->snap, "trace", "metadata")) == NULL)
		return (-HWTR_E_FORMAT);
	snprintf(ref, sizeof(ref), "'%s': [trace] metadata", sn->snap.path);
	if ((rc = ini_load(sn, &sn->trace, sn->dir, meta, ref)) < 0)
		return (rc);
	ti = &sn->trace;
	if ((v = ini_need(sn, ti, "trace_buffers", "buffers")) == NULL)
		return (-HWTR_E_FORMAT);
	if ((list = strdup(v)) == NULL) {
		hwtr_import_err(sn->errbuf, sn->errlen, "out of memory");
		return (-HWTR_E_NOMEM);
	}
	n = 1;
	for (tok = list; *tok != '\0'; tok++)
		n += *tok == ',';
	if ((sn->buf = calloc(n, sizeof(*sn->buf))) == NULL) {
		free(list);
		hwtr_import_err(sn->errbuf, sn->errlen, "out of memory");
		return (-HWTR_E_NOMEM);
	}
	rc = 0;
	for (tok = strtok_r(list, ",", &save); tok != NULL && rc == 0;
	    tok = strtok_r(NULL, ",", &save))
		rc = snap_buffer(sn, trim(tok));
	free(list);
	if (rc < 0)
		return (rc);
	if (sn->nbuf == 0) {
		hwtr_import_err(sn->errbuf, sn->errlen, "'%s': "
		    "[trace_buffers] buffers: empty", ti->path);
		return (-HWTR_E_FORMAT);
	}
	return (0);
}

/* One [source_buffers] SOURCE=BUFFER entry. */
static int
snap_source(struct cs_snap *sn, const struct ini_ent *e)
{
	const struct ini *ti = &sn->trace;
	const struct cs_dev *d;
	struct cs_src *s;
	size_t j;
	int rc;

	for (j = 0; j < sn->nbuf; j++)
		if (sn->buf[j].name != NULL &&
		    strcmp(sn->buf[j].name, e->val) == 0)
			break;
	if (j == sn->nbuf) {
		hwtr_import_err(sn->errbuf, sn->errlen, "'%s': "
		    "[source_buffers] %s: no buffer named '%s'",
		    ti->path, e->key, e->val);
		return (-HWTR_E_FORMAT);
	}
	if ((d = find_dev(sn, e->key)) == NULL) {
		/*
		 * Snapshots name sources of every core whether or
		 * not they list their device files (OpenCSD skips
		 * them); keep a caveat rather than refuse.
		 */
		return (add_caveat(sn, "'%s': [source_buffers] %s: "
		    "no device of that name in '%s': not imported",
		    ti->path, e->key, sn->snap.path));
	}
	if (protocol_of(d->type) == HWTR_TF_NONE) {
		/*
		 * ITM has no decoder in OpenCSD 1.3 (Debian 12's);
		 * say so rather than drop it silently or refuse the
		 * snapshot.  Any other type is an error.
		 */
		if (strcasecmp(d->type, "ITM") == 0)
			return (add_caveat(sn, "trace source '%s' "
			    "(%s) not imported: no decoder for it",
			    d->name, d->type));
		hwtr_import_err(sn->errbuf, sn->errlen, "'%s': "
		    "[device] type: unknown trace protocol '%s' (ETM3.x,"
		    " PTM1.x, PFT1.x, ETM4.x, ETE, STM)", d->ini.path,
		    d->type);
		return (-HWTR_E_FORMAT);
	}
	s = &sn->src[sn->nsrc++];
	s->buffer = (int)j;
	if ((rc = load_source(sn, s, d, sn->buf[j].frame)) < 0)
		return (rc);
	for (j = 0; j + 1 < sn->nsrc; j++)
		if (sn->src[j].buffer == s->buffer &&
		    sn->src[j].s.trace_id == s->s.trace_id) {
			hwtr_import_err(sn->errbuf, sn->errlen, "'%s': "
			    "[regs]: trace ID 0x%x is also the ID of "
			    "'%s' in buffer '%s'", d->ini.path,
			    s->s.trace_id, sn->src[j].dev->name,
			    sn->buf[s->buffer].name);
			return (-HWTR_E_FORMAT);
		}
	return (0);
}

/* [core_trace_sources] CORE=SOURCE: the core type of each source. */
static int
snap_cores(struct cs_snap *sn)
{
	const struct ini *ti = &sn->trace;
	size_t i, j;

	for (i = 0; i < ti->nent; i++) {
		const struct ini_ent *e = &ti->ent[i];
		const struct cs_dev *c;

		if (strcmp(e->sec, "core_trace_sources") != 0)
			continue;
		for (j = 0; j < sn->nsrc; j++)
			if (sn->src[j].dev != NULL &&
			    strcmp(sn->src[j].dev->name, e->val) == 0)
				break;
		if (j == sn->nsrc)
			continue;	/* a source in no buffer */
		if ((c = find_dev(sn, e->key)) == NULL) {
			hwtr_import_err(sn->errbuf, sn->errlen, "'%s': "
			    "[core_trace_sources] %s: no device of that name",
			    ti->path, e->key);
			return (-HWTR_E_FORMAT);
		}
		sn->src[j].s.core = c->type;
	}
	for (i = 0; i < sn->nsrc; i++)
		if (sn->src[i].s.core == NULL &&
		    sn->src[i].s.protocol != HWTR_TF_STM) {
			hwtr_import_err(sn->errbuf, sn->errlen, "'%s': "
			    "[core_trace_sources]: no core for source '%s'",
			    ti->path, sn->src[i].dev != NULL ?
			    sn->src[i].dev->name : "?");
			return (-HWTR_E_FORMAT);
		}
	return (0);
}

/* Group the sources by buffer. */
static int
snap_group(struct cs_snap *sn)
{
	size_t i, j;
	int rc;

	for (j = 0; j < sn->nbuf; j++) {
		struct cs_buf *b = &sn->buf[j];

		if ((b->srcs = calloc(sn->nsrc + 1, sizeof(*b->srcs))) ==
		    NULL) {
			hwtr_import_err(sn->errbuf, sn->errlen, "out of "
			    "memory");
			return (-HWTR_E_NOMEM);
		}
		for (i = 0; i < sn->nsrc; i++)
			if (sn->src[i].buffer == (int)j)
				b->srcs[b->nsrcs++] = sn->src[i].s;
		if (b->nsrcs == 0 && (rc = add_caveat(sn, "trace buffer '%s' "
		    "(%s) has no source that can be decoded", b->name,
		    b->file)) < 0)
			return (rc);
		if (b->frame == HWTR_CS_FRAME_NONE && b->nsrcs > 1) {
			hwtr_import_err(sn->errbuf, sn->errlen, "'%s': "
			    "[source_buffers]: buffer '%s' is unformatted "
			    "(source_data) but has %zu sources", sn->trace.path,
			    b->name, b->nsrcs);
			return (-HWTR_E_FORMAT);
		}
	}
	return (0);
}

static int
load_snapshot(struct cs_snap *sn)
{
	const struct ini *ti = &sn->trace;
	size_t i;
	int rc;

	if ((rc = ini_load(sn, &sn->snap, sn->dir, "snapshot.ini", NULL)) < 0 ||
	    (rc = snap_devices(sn)) < 0 || (rc = snap_buffers(sn)) < 0)
		return (rc);
	if ((sn->src = calloc(ti->nent + 1, sizeof(*sn->src))) == NULL) {
		hwtr_import_err(sn->errbuf, sn->errlen, "out of memory");
		return (-HWTR_E_NOMEM);
	}
	for (i = 0; i < ti->nent; i++)
		if (strcmp(ti->ent[i].sec, "source_buffers") == 0 &&
		    (rc = snap_source(sn, &ti->ent[i])) < 0)
			return (rc);
	if ((rc = snap_cores(sn)) < 0)
		return (rc);
	return (snap_group(sn));
}

static void
snap_free(struct cs_snap *sn)
{
	size_t i;

	for (i = 0; i < sn->ndev; i++)
		ini_free(&sn->dev[i].ini);
	for (i = 0; i < sn->nsrc; i++)
		free(sn->src[i].regs);
	for (i = 0; i < sn->nbuf; i++) {
		free(sn->buf[i].file);
		free(sn->buf[i].srcs);
	}
	for (i = 0; i < sn->ndump; i++) {
		free(sn->dump[i].file);
		free(sn->dump[i].buf);
	}
	for (i = 0; i < sn->ncaveat; i++)
		free(sn->caveat[i]);
	ini_free(&sn->snap);
	ini_free(&sn->trace);
	free(sn->dev);
	free(sn->src);
	free(sn->buf);
	free(sn->dump);
	free(sn->caveat);
}

/* 1 when @path is a directory holding a snapshot.ini, else 0. */
static int
is_snapshot(const char *path)
{
	struct stat st;
	char *p;
	int r;

	if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
		return (0);
	if ((p = path_join(path, "snapshot.ini")) == NULL)
		return (0);
	r = stat(p, &st) == 0;
	free(p);
	return (r);
}

static int
cs_load(const char *dir, const struct hwtr_import_opts *io,
    struct hwtr_import_sink *sk)
{
	struct cs_snap sn;
	struct hwtr_capture_meta meta;
	struct hwtr_stream_desc sd;
	struct hwtr_image_desc id;
	struct hwtr_sb_rec r;
	struct hwtr_aw *aw = NULL;
	char key[HWTR_IMAGE_KEY_MAX], name[160], *aux = NULL, ebuf[HWTR_ERRMSG_MAX];
	char *errbuf = sk->errbuf;
	struct stat st;
	size_t errlen = sk->errlen;
	size_t i, auxlen = 0, auxcap = 0;
	uint32_t sid;
	int fd, rc;

	memset(&sn, 0, sizeof(sn));
	sn.dir = dir;
	sn.outside = io != NULL && io->allow_outside;
	sn.errbuf = errbuf;
	sn.errlen = errlen;
	if ((rc = load_snapshot(&sn)) < 0)
		goto out;

	hwtr_import_meta_init(&meta, "coresight-snapshot");
	/* ARM cores: the database says so ("arm 0/0/0" in meta cpu). */
	meta.cpu.vendor = HWTR_CPU_ARM;
	meta.caveats = (const char *const *)sn.caveat;
	meta.ncaveats = sn.ncaveat;
	if ((rc = hwtr_import_begin(sk, &meta)) < 0)
		goto out;
	aw = sk->aw;
	for (i = 0; i < sn.nbuf; i++) {
		struct cs_buf *b = &sn.buf[i];

		memset(&sd, 0, sizeof(sd));
		sd.format = HWTR_TF_CORESIGHT;
		sd.pid = sd.tid = sd.cpu = -1;
		snprintf(name, sizeof(name), "buffer %s", b->name);
		sd.name = name;
		sd.cs.frame = b->frame;
		sd.cs.sources = b->srcs;
		sd.cs.nsources = b->nsrcs;
		if ((rc = hwtr_aw_add_stream(aw, &sd, &sid)) < 0) {
			hwtr_import_err(errbuf, errlen, "buffer '%s': %s",
			    b->name, hwtr_aw_errmsg(aw));
			goto out;
		}
		if ((fd = cs_open(&sn, b->file, &st, ebuf, sizeof(ebuf))) <
		    0) {
			hwtr_import_err(errbuf, errlen, "%s", ebuf);
			rc = fd;
			goto out;
		}
		rc = hwtr_import_copy(aw, sid, fd, "buffer ", b->file, 0,
		    b->size, errbuf, errlen);
		close(fd);
		if (rc < 0)
			goto out;
	}
	for (i = 0; i < sn.ndump; i++) {
		struct cs_dump *du = &sn.dump[i];
		char line[600], *nv;
		int n;

		memset(&id, 0, sizeof(id));
		id.path = du->file;
		id.kind = HWTR_IMG_MEMORY;
		if ((rc = hwtr_aw_add_image(aw, &id, du->buf, du->buflen,
		    key)) < 0) {
			hwtr_import_err(errbuf, errlen, "dump '%s': %s",
			    du->file, hwtr_aw_errmsg(aw));
			goto out;
		}
		memset(&r, 0, sizeof(r));
		r.type = HWTR_SB_MMAP;
		r.pid = r.tid = -1;
		r.u.mmap.addr = du->addr;
		r.u.mmap.len = du->len;
		r.u.mmap.pgoff = du->off;
		r.u.mmap.prot = 0x1 | 0x4;	/* PROT_READ | PROT_EXEC */
		r.u.mmap.path = du->file;
		r.u.mmap.image = key;
		if ((rc = hwtr_aw_sideband(aw, &r)) < 0) {
			hwtr_import_err(errbuf, errlen, "dump '%s': %s",
			    du->file, hwtr_aw_errmsg(aw));
			goto out;
		}
		n = snprintf(line, sizeof(line), "0x%" PRIx64 " 0x%" PRIx64
		    " %s %s\n", du->addr, du->len, du->space[0] ? du->space :
		    "-", du->file);
		if (n < 0 || (size_t)n >= sizeof(line))
			continue;
		if (auxlen + (size_t)n + 1 > auxcap) {
			auxcap = (auxcap + (size_t)n + 1) * 2;
			if ((nv = realloc(aux, auxcap)) == NULL) {
				hwtr_import_err(errbuf, errlen, "out of "
				    "memory");
				rc = -HWTR_E_NOMEM;
				goto out;
			}
			aux = nv;
		}
		memcpy(aux + auxlen, line, (size_t)n);
		auxlen += (size_t)n;
	}
	if (auxlen > 0 && (rc = hwtr_aw_add_aux(aw, "coresight-dumps", aux,
	    auxlen)) < 0) {
		hwtr_import_err(errbuf, errlen, "aux/coresight-dumps: %s",
		    hwtr_aw_errmsg(aw));
		goto out;
	}
out:
	free(aux);
	snap_free(&sn);
	return (rc < 0 ? rc : 0);
}

static int
cs_bid(const char *path)
{
	return (is_snapshot(path) ? 100 : 0);
}

const struct hwtr_importer hwtr_importer_cs = {
	.name = "coresight",
	.bid = cs_bid,
	.load = cs_load,
};

