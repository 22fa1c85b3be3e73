/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Import an LLDB Intel PT trace bundle ("trace save" output): a trace.json
 * naming the CPU, the processes with their threads (one raw PT file each)
 * and modules (an ELF file, its load address and uuid), and optionally the
 * perf TSC conversion.
 *
 * The import runs in two passes, so that a bad bundle leaves nothing
 * behind and the first error is the one a reader of the JSON meets first:
 *   1) the JSON is checked against the schema, field by field, and turned
 *      into plain structures (messages name the field: "processes[1].pid:
 *      missing");
 *   2) every file is checked: traces are readable regular files, modules
 *      parse as ELF, their build-id matches the uuid and a non-relocatable
 *      (ET_EXEC) module is loaded where it was linked.
 * Only then is the archive written.
 */

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
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

#define LLDB_MAX_IMAGE	(1ull << 30)
#define LLDB_MAX_COUNT	100000		/* processes, threads, modules */

/* x86 CPUID: family is base (4 bits) + extended (8 bits). */
#define X86_MAX_FAMILY	(0xf + 0xff)

struct lldb_thread {
	int64_t		tid;
	char		*trace;		/* resolved path, or NULL */
	int		fd;
	uint64_t	size;
};

struct lldb_module {
	char		*system_path;	/* as in the bundle */
	char		*file;		/* resolved path of the copy read */
	char		field[96];	/* "processes[0].modules[1]" */
	uint64_t	load;
	uint8_t		uuid[HWTR_BUILD_ID_MAX];
	size_t		uuid_len;
	void		*buf;
	size_t		len;
	struct hwtr_elf_info elf;
};

struct lldb_process {
	int64_t		pid;
	struct lldb_thread *threads;
	size_t		nthreads;
	struct lldb_module *modules;
	size_t		nmodules;
};

/* A per-CPU trace: its Intel PT and its context-switch records. */
struct lldb_cpu {
	int64_t		id;
	char		*trace, *switches;	/* resolved paths */
	int		fd;
	uint64_t	size;
};

/* A context switch read from a contextSwitchTrace, time in TSC. */
struct lldb_switch {
	uint64_t	tsc;
	int32_t		pid, tid, cpu;
	int		out;
	size_t		seq;
};

struct lldb_bundle {
	const char	*json;		/* as given */
	char		*dir;		/* its directory */
	int		outside;	/* --allow-outside */
	struct hwtr_cpu	cpu;
	struct hwtr_timeconv tconv;
	uint64_t	time_zero;	/* perf's, unsigned */
	struct lldb_process *procs;
	size_t		nprocs;
	struct lldb_cpu	*cpus;
	size_t		ncpus;
	struct lldb_switch *sw;
	size_t		nsw, csw;
	uint64_t	lost_records;
	char		*errbuf;
	size_t		errlen;
};

static const char *
jtype(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return ("an object");
	case JSON_ARRAY:
		return ("an array");
	case JSON_STRING:
		return ("a string");
	case JSON_INTEGER:
		return ("an integer");
	case JSON_REAL:
		return ("a real number");
	case JSON_TRUE:
	case JSON_FALSE:
		return ("a boolean");
	default:
		return ("null");
	}
}

/* "'trace.json': FIELD: message" into the bundle's error buffer. */
static void berr(struct lldb_bundle *, const char *, ...)
    __attribute__((format(printf, 2, 3)));

static void
berr(struct lldb_bundle *b, const char *fmt, ...)
{
	char m[HWTR_ERRMSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(m, sizeof(m), fmt, ap);
	va_end(ap);
	hwtr_import_err(b->errbuf, b->errlen, "'%s': %s", b->json, m);
}

/*
 * Look up @key in @obj (named @where), which must have type @type (or be
 * absent when @optional).  Returns the value, or NULL with *rc set.
 */
static json_t *
get(struct lldb_bundle *b, json_t *obj, const char *where, const char *key,
    json_type type, int optional, int *rc)
{
	json_t *v;
	static const char *const want[] = {
		[JSON_OBJECT] = "an object", [JSON_ARRAY] = "an array",
		[JSON_STRING] = "a string", [JSON_INTEGER] = "an integer",
		[JSON_REAL] = "a real number", [JSON_TRUE] = "a boolean",
		[JSON_FALSE] = "a boolean", [JSON_NULL] = "null"
	};

	*rc = 0;
	v = json_object_get(obj, key);
	if (v == NULL) {
		if (!optional) {
			berr(b, "%s%s%s: missing", where, *where ? "." : "",
			    key);
			*rc = -HWTR_E_FORMAT;
		}
		return (NULL);
	}
	if (json_typeof(v) != type) {
		berr(b, "%s%s%s: expected %s, got %s", where,
		    *where ? "." : "", key, want[type], jtype(v));
		*rc = -HWTR_E_FORMAT;
		return (NULL);
	}
	return (v);
}

/* An integer field within [min, max]. */
static int
get_int(struct lldb_bundle *b, json_t *obj, const char *where,
    const char *key, int64_t min, int64_t max, int64_t *vp)
{
	json_t *v;
	int rc;

	*vp = 0;
	if ((v = get(b, obj, where, key, JSON_INTEGER, 0, &rc)) == NULL)
		return (rc < 0 ? rc : -HWTR_E_FORMAT);
	*vp = json_integer_value(v);
	if (*vp < min || *vp > max) {
		berr(b, "%s%s%s: %" PRId64 " is out of range (%" PRId64
		    " to %" PRId64 ")", where, *where ? "." : "", key, *vp,
		    min, max);
		return (-HWTR_E_FORMAT);
	}
	return (0);
}

/*
 * jansson keeps integers as int64_t and refuses a bigger one ("too big
 * integer") before any field is seen, yet LLDB writes unsigned 64-bit
 * values (timeZero, addresses) as plain JSON integers.  So the text is
 * rewritten before parsing: every integer token above INT64_MAX becomes
 * the string BIGINT_MARK followed by its digits, which only the unsigned
 * getters accept; the marker begins with U+0001, and a bundle whose own
 * strings hold an escaped U+0001 is refused, so no string of the file
 * can pose as a number.  Above 2^64 - 1 the digits are kept too, and the
 * getter says the value is out of range.
 */
#define BIGINT_MARK	"\\u0001hwtr-bigint:"
#define BIGINT_VAL	"\001hwtr-bigint:"

static int
prescan(const char *in, size_t len, char **outp, size_t *outlen, char *err,
    size_t errlen)
{
	size_t i = 0, j, o = 0, cap = len + 1;
	char *out, *nout;
	int neg;

	if ((out = malloc(cap)) == NULL)
		return (-HWTR_E_NOMEM);
	while (i < len) {
		if (in[i] == '"') {
			/* A string, with its escapes, as it is. */
			j = i + 1;
			while (j < len && in[j] != '"') {
				if (in[j] == '\\' && j + 1 < len) {
					if (in[j + 1] == 'u' && j + 5 < len &&
					    strncmp(in + j + 2, "000", 3) == 0 &&
					    in[j + 5] == '1') {
						snprintf(err, errlen, "byte %zu: "
						    "a string holds U+0001, "
						    "which a trace bundle never "
						    "does", j);
						free(out);
						return (-HWTR_E_FORMAT);
					}
					j++;
				}
				j++;
			}
			j = j < len ? j + 1 : j;
		} else if (in[i] == '-' || (in[i] >= '0' && in[i] <= '9')) {
			neg = in[i] == '-';
			j = i + (size_t)neg;
			while (j < len && in[j] >= '0' && in[j] <= '9')
				j++;
			if ((j >= len || (in[j] != '.' && in[j] != 'e' &&
			    in[j] != 'E')) && !neg && j - i >= 19 &&
			    (j - i > 19 || strncmp(in + i,
			    "9223372036854775807", 19) > 0)) {
				/* An integer above INT64_MAX. */
				cap += sizeof(BIGINT_MARK) + 2;
				if ((nout = realloc(out, cap)) == NULL) {
					free(out);
					return (-HWTR_E_NOMEM);
				}
				out = nout;
				o += (size_t)sprintf(out + o, "\"%s",
				    BIGINT_MARK);
				memcpy(out + o, in + i, j - i);
				o += j - i;
				out[o++] = '"';
				i = j;
				continue;
			}
		} else
			j = i + 1;
		memcpy(out + o, in + i, j - i);
		o += j - i;
		i = j;
	}
	out[o] = '\0';
	*outp = out;
	*outlen = o;
	return (0);
}

/*
 * An unsigned 64-bit integer field: a JSON integer in [0, INT64_MAX], or
 * one above (the prescan's string), up to 2^64 - 1.
 */
static int
get_u64(struct lldb_bundle *b, json_t *obj, const char *where,
    const char *key, uint64_t *vp)
{
	const char *s;
	json_t *v;
	char *end;

	*vp = 0;
	v = json_object_get(obj, key);
	if (v == NULL) {
		berr(b, "%s%s%s: missing", where, *where ? "." : "", key);
		return (-HWTR_E_FORMAT);
	}
	if (json_is_integer(v) && json_integer_value(v) >= 0) {
		*vp = (uint64_t)json_integer_value(v);
		return (0);
	}
	if (json_is_string(v) && strncmp(json_string_value(v), BIGINT_VAL,
	    sizeof(BIGINT_VAL) - 1) == 0) {
		s = json_string_value(v) + sizeof(BIGINT_VAL) - 1;
		errno = 0;
		*vp = strtoull(s, &end, 10);
		if (errno == 0 && *end == '\0')
			return (0);
		berr(b, "%s%s%s: %s is out of range (0 to %" PRIu64 ")", where,
		    *where ? "." : "", key, s, UINT64_MAX);
		return (-HWTR_E_FORMAT);
	}
	berr(b, "%s%s%s: expected an unsigned 64-bit integer, got %s", where,
	    *where ? "." : "", key, json_is_integer(v) ?
	    "a negative integer" : json_is_string(v) ? "a string" : jtype(v));
	return (-HWTR_E_FORMAT);
}

/*
 * An address: an integer, or a string holding a decimal or 0x number (newer
 * LLDB writes "0x..." strings for addresses above 2^63).
 */
static int
get_addr(struct lldb_bundle *b, json_t *obj, const char *where,
    const char *key, uint64_t *vp)
{
	const char *s;
	json_t *v;

	v = json_object_get(obj, key);
	if (v == NULL) {
		berr(b, "%s.%s: missing", where, key);
		return (-HWTR_E_FORMAT);
	}
	if (json_is_integer(v) && json_integer_value(v) >= 0) {
		*vp = (uint64_t)json_integer_value(v);
		return (0);
	}
	if (json_is_string(v) && strncmp(json_string_value(v), BIGINT_VAL,
	    sizeof(BIGINT_VAL) - 1) == 0)
		return (get_u64(b, obj, where, key, vp));
	if (json_is_string(v)) {
		s = json_string_value(v);
		if (hwtr_parse_u64(s, vp) == 0)
			return (0);
		berr(b, "%s.%s: '%s' is not an address", where, key, s);
		return (-HWTR_E_FORMAT);
	}
	berr(b, "%s.%s: expected an address (integer or string), got %s",
	    where, key, json_is_integer(v) ? "a negative integer" : jtype(v));
	return (-HWTR_E_FORMAT);
}

/* @rel relative to the bundle's directory, unless absolute. */
static char *
resolve(const struct lldb_bundle *b, const char *rel)
{
	char *p;
	size_t n;

	if (rel[0] == '/')
		return (strdup(rel));
	n = strlen(b->dir) + 1 + strlen(rel) + 1;
	if ((p = malloc(n)) != NULL)
		snprintf(p, n, "%s/%s", b->dir, rel);
	return (p);
}

/*
 * Open @path, a file the bundle names (resolve()): inside the bundle's
 * directory only, unless --allow-outside.  Never blocks on a FIFO.
 */
static int
lldb_open(const struct lldb_bundle *b, const char *path, struct stat *st,
    char *err, size_t errlen)
{
	return (hwtr_in_open_under(b->outside ? NULL : b->dir, path, st,
	    err, errlen));
}

/* hwtr_read_file() of a file the bundle names, as lldb_open() opens it. */
static int
lldb_read(const struct lldb_bundle *b, const char *path, uint64_t max,
    void **bufp, size_t *lenp, char *err, size_t errlen)
{
	return (hwtr_read_under(b->outside ? NULL : b->dir, path, max,
	    bufp, lenp, err, errlen));
}

/* LLDB's uuid text: hex digits in groups separated by '-'. */
static int
parse_uuid(const char *s, uint8_t *out, size_t *lenp)
{
	size_t n = 0;
	int hi = -1, d;

	for (; *s != '\0'; s++) {
		if (*s == '-' && hi < 0)
			continue;
		if ((d = hwtr_hexdigit((unsigned char)*s)) < 0)
			return (-1);
		if (hi < 0) {
			hi = d;
			continue;
		}
		if (n == HWTR_BUILD_ID_MAX)
			return (-1);
		out[n++] = (uint8_t)(hi << 4 | d);
		hi = -1;
	}
	if (hi >= 0 || n == 0)
		return (-1);
	*lenp = n;
	return (0);
}

static int
parse_cpu(struct lldb_bundle *b, json_t *root)
{
	json_t *ci, *v;
	const char *vendor;
	int64_t x;
	int rc;

	if ((ci = get(b, root, "", "cpuInfo", JSON_OBJECT, 0, &rc)) == NULL)
		return (rc);
	if ((v = get(b, ci, "cpuInfo", "vendor", JSON_STRING, 0, &rc)) ==
	    NULL)
		return (rc);
	vendor = json_string_value(v);
	if (strcmp(vendor, "GenuineIntel") == 0)
		b->cpu.vendor = HWTR_CPU_INTEL;
	else if (strcmp(vendor, "Unknown") == 0)
		b->cpu.vendor = HWTR_CPU_UNKNOWN;
	else {
		berr(b, "cpuInfo.vendor: '%s' is not GenuineIntel or Unknown",
		    vendor);
		return (-HWTR_E_FORMAT);
	}
	if ((rc = get_int(b, ci, "cpuInfo", "family", 0, X86_MAX_FAMILY,
	    &x)) < 0)
		return (rc);
	b->cpu.family = (uint16_t)x;
	if ((rc = get_int(b, ci, "cpuInfo", "model", 0, 0xff, &x)) < 0)
		return (rc);
	b->cpu.model = (uint8_t)x;
	if ((rc = get_int(b, ci, "cpuInfo", "stepping", 0, 0xf, &x)) < 0)
		return (rc);
	b->cpu.stepping = (uint8_t)x;
	return (0);
}

static int
parse_tconv(struct lldb_bundle *b, json_t *root)
{
	json_t *tc;
	int64_t mult, shift;
	uint64_t zero;
	json_t *z;
	int rc;

	tc = get(b, root, "", "tscPerfZeroConversion", JSON_OBJECT, 1, &rc);
	if (tc == NULL)
		return (rc);
	if ((rc = get_int(b, tc, "tscPerfZeroConversion", "timeMult", 1,
	    UINT32_MAX, &mult)) < 0 ||
	    (rc = get_int(b, tc, "tscPerfZeroConversion", "timeShift", 0, 63,
	    &shift)) < 0)
		return (rc);
	/*
	 * perf's time_zero is unsigned (perf_event_mmap_page): LLDB writes
	 * it as such, and values past INT64_MAX are common (a clock that
	 * started before the TSC's zero).  A negative integer is the same
	 * 64 bits written signed.
	 */
	z = json_object_get(tc, "timeZero");
	if (z != NULL && json_is_integer(z) && json_integer_value(z) < 0)
		zero = (uint64_t)json_integer_value(z);
	else if ((rc = get_u64(b, tc, "tscPerfZeroConversion", "timeZero",
	    &zero)) < 0)
		return (rc);
	/* perf: ns = time_zero + (tsc * time_mult) >> time_shift. */
	b->tconv.valid = 1;
	b->tconv.tsc_zero = 0;
	b->time_zero = zero;
	b->tconv.ns_zero = (int64_t)zero;
	b->tconv.mult = (uint32_t)mult;
	b->tconv.shift = (uint32_t)shift;
	return (0);
}

static int
parse_process(struct lldb_bundle *b, json_t *pj, size_t pi,
    struct lldb_process *p)
{
	char where[64], w2[96];
	json_t *arr, *t, *m, *v;
	size_t i;
	int64_t x;
	int rc;

	snprintf(where, sizeof(where), "processes[%zu]", pi);
	if (!json_is_object(pj)) {
		berr(b, "%s: expected an object, got %s", where, jtype(pj));
		return (-HWTR_E_FORMAT);
	}
	if ((rc = get_int(b, pj, where, "pid", 0, INT32_MAX, &x)) < 0)
		return (rc);
	p->pid = x;
	if ((arr = get(b, pj, where, "threads", JSON_ARRAY, 0, &rc)) == NULL)
		return (rc);
	if (json_array_size(arr) > LLDB_MAX_COUNT) {
		berr(b, "%s.threads: more than %d threads", where,
		    LLDB_MAX_COUNT);
		return (-HWTR_E_LIMIT);
	}
	p->threads = calloc(json_array_size(arr) + 1, sizeof(*p->threads));
	if (p->threads == NULL)
		return (-HWTR_E_NOMEM);
	json_array_foreach(arr, i, t) {
		struct lldb_thread *th = &p->threads[p->nthreads++];

		th->fd = -1;
		snprintf(w2, sizeof(w2), "%s.threads[%zu]", where, i);
		if (!json_is_object(t)) {
			berr(b, "%s: expected an object, got %s", w2,
			    jtype(t));
			return (-HWTR_E_FORMAT);
		}
		if ((rc = get_int(b, t, w2, "tid", 0, INT32_MAX, &x)) < 0)
			return (rc);
		th->tid = x;
		v = get(b, t, w2, "iptTrace", JSON_STRING, 1, &rc);
		if (rc < 0)
			return (rc);
		if (v != NULL) {
			if (*json_string_value(v) == '\0') {
				berr(b, "%s.iptTrace: empty file name", w2);
				return (-HWTR_E_FORMAT);
			}
			if ((th->trace = resolve(b, json_string_value(v))) ==
			    NULL)
				return (-HWTR_E_NOMEM);
		}
	}
	if ((arr = get(b, pj, where, "modules", JSON_ARRAY, 0, &rc)) == NULL)
		return (rc);
	if (json_array_size(arr) > LLDB_MAX_COUNT) {
		berr(b, "%s.modules: more than %d modules", where,
		    LLDB_MAX_COUNT);
		return (-HWTR_E_LIMIT);
	}
	p->modules = calloc(json_array_size(arr) + 1, sizeof(*p->modules));
	if (p->modules == NULL)
		return (-HWTR_E_NOMEM);
	json_array_foreach(arr, i, m) {
		struct lldb_module *mo = &p->modules[p->nmodules++];
		const char *file;

		snprintf(mo->field, sizeof(mo->field), "%s.modules[%zu]",
		    where, i);
		if (!json_is_object(m)) {
			berr(b, "%s: expected an object, got %s", mo->field,
			    jtype(m));
			return (-HWTR_E_FORMAT);
		}
		if ((v = get(b, m, mo->field, "systemPath", JSON_STRING, 0,
		    &rc)) == NULL)
			return (rc);
		if ((mo->system_path = strdup(json_string_value(v))) == NULL)
			return (-HWTR_E_NOMEM);
		file = mo->system_path;
		v = get(b, m, mo->field, "file", JSON_STRING, 1, &rc);
		if (rc < 0)
			return (rc);
		if (v != NULL)
			file = json_string_value(v);
		if (*file == '\0') {
			berr(b, "%s.%s: empty file name", mo->field,
			    v != NULL ? "file" : "systemPath");
			return (-HWTR_E_FORMAT);
		}
		if ((mo->file = resolve(b, file)) == NULL)
			return (-HWTR_E_NOMEM);
		if ((rc = get_addr(b, m, mo->field, "loadAddress",
		    &mo->load)) < 0)
			return (rc);
		v = get(b, m, mo->field, "uuid", JSON_STRING, 1, &rc);
		if (rc < 0)
			return (rc);
		if (v != NULL && parse_uuid(json_string_value(v), mo->uuid,
		    &mo->uuid_len) != 0) {
			berr(b, "%s.uuid: '%s' is not a hex uuid", mo->field,
			    json_string_value(v));
			return (-HWTR_E_FORMAT);
		}
	}
	return (0);
}

/* cpus: [{id, iptTrace, contextSwitchTrace}], LLDB's per-CPU bundles. */
static int
parse_cpus(struct lldb_bundle *b, json_t *arr)
{
	char where[48];
	const char *keys[2] = { "iptTrace", "contextSwitchTrace" };
	char **dst[2];
	json_t *c, *v;
	size_t i, j, k;
	int64_t x;
	int rc;

	if (!json_is_array(arr)) {
		berr(b, "cpus: expected an array, got %s", jtype(arr));
		return (-HWTR_E_FORMAT);
	}
	if (json_array_size(arr) > LLDB_MAX_COUNT) {
		berr(b, "cpus: more than %d CPUs", LLDB_MAX_COUNT);
		return (-HWTR_E_LIMIT);
	}
	if (!b->tconv.valid) {
		berr(b, "cpus: a per-CPU bundle needs tscPerfZeroConversion "
		    "(the context switches are in perf time, the trace in "
		    "TSC)");
		return (-HWTR_E_FORMAT);
	}
	b->cpus = calloc(json_array_size(arr) + 1, sizeof(*b->cpus));
	if (b->cpus == NULL)
		return (-HWTR_E_NOMEM);
	json_array_foreach(arr, i, c) {
		struct lldb_cpu *cp = &b->cpus[b->ncpus++];

		cp->fd = -1;
		snprintf(where, sizeof(where), "cpus[%zu]", i);
		if (!json_is_object(c)) {
			berr(b, "%s: expected an object, got %s", where,
			    jtype(c));
			return (-HWTR_E_FORMAT);
		}
		if ((rc = get_int(b, c, where, "id", 0, INT32_MAX, &x)) < 0)
			return (rc);
		cp->id = x;
		for (k = 0; k < i; k++)
			if (b->cpus[k].id == x) {
				berr(b, "%s.id: %" PRId64 " appears twice",
				    where, x);
				return (-HWTR_E_FORMAT);
			}
		dst[0] = &cp->trace;
		dst[1] = &cp->switches;
		for (j = 0; j < 2; j++) {
			if ((v = get(b, c, where, keys[j], JSON_STRING, 0,
			    &rc)) == NULL)
				return (rc);
			if (*json_string_value(v) == '\0') {
				berr(b, "%s.%s: empty file name", where,
				    keys[j]);
				return (-HWTR_E_FORMAT);
			}
			if ((*dst[j] = resolve(b, json_string_value(v))) ==
			    NULL)
				return (-HWTR_E_NOMEM);
		}
	}
	return (0);
}

/* Pass 1: the JSON, field by field. */
static int
parse_bundle(struct lldb_bundle *b, json_t *root)
{
	json_t *v, *arr, *pj;
	size_t i, j, k, l;
	int rc;

	if (!json_is_object(root)) {
		berr(b, "expected an object at the top, got %s", jtype(root));
		return (-HWTR_E_FORMAT);
	}
	if ((v = get(b, root, "", "type", JSON_STRING, 0, &rc)) == NULL)
		return (rc);
	if (strcmp(json_string_value(v), "intel-pt") != 0) {
		berr(b, "type: '%s' is not an Intel PT bundle (\"intel-pt\")",
		    json_string_value(v));
		return (-HWTR_E_FORMAT);
	}
	if ((rc = parse_cpu(b, root)) < 0)
		return (rc);
	if (json_object_get(root, "kernel") != NULL) {
		berr(b, "kernel: kernel trace bundles are not supported yet");
		return (-HWTR_E_UNSUPPORTED);
	}
	if ((rc = parse_tconv(b, root)) < 0)
		return (rc);
	if ((v = json_object_get(root, "cpus")) != NULL &&
	    (rc = parse_cpus(b, v)) < 0)
		return (rc);
	if ((arr = get(b, root, "", "processes", JSON_ARRAY, 0, &rc)) == NULL)
		return (rc);
	if (json_array_size(arr) > LLDB_MAX_COUNT) {
		berr(b, "processes: more than %d processes", LLDB_MAX_COUNT);
		return (-HWTR_E_LIMIT);
	}
	b->procs = calloc(json_array_size(arr) + 1, sizeof(*b->procs));
	if (b->procs == NULL)
		return (-HWTR_E_NOMEM);
	json_array_foreach(arr, i, pj) {
		if ((rc = parse_process(b, pj, i, &b->procs[b->nprocs++])) < 0)
			return (rc);
	}
	if (b->nprocs == 0) {
		berr(b, "processes: empty, nothing to import");
		return (-HWTR_E_FORMAT);
	}
	/* Process and thread ids name streams: they must be unique. */
	for (i = 0; i < b->nprocs; i++) {
		for (j = 0; j < i; j++)
			if (b->procs[j].pid == b->procs[i].pid) {
				berr(b, "processes[%zu].pid: %" PRId64
				    " appears twice", i, b->procs[i].pid);
				return (-HWTR_E_FORMAT);
			}
		for (j = 0; j < b->procs[i].nthreads; j++)
			for (k = 0; k <= i; k++)
				for (l = 0; l < (k == i ? j :
				    b->procs[k].nthreads); l++)
					if (b->procs[k].threads[l].tid ==
					    b->procs[i].threads[j].tid) {
						berr(b, "processes[%zu]."
						    "threads[%zu].tid: %" PRId64
						    " appears twice", i, j,
						    b->procs[i].threads[j].tid);
						return (-HWTR_E_FORMAT);
					}
	}
	return (0);
}

/* perf's perf_time_to_tsc(): perf clock ns to TSC. */
static uint64_t
ns_to_tsc(const struct lldb_bundle *b, uint64_t ns)
{
	uint64_t t = ns - b->time_zero, q, r;

	q = t / b->tconv.mult;
	r = t % b->tconv.mult;
	return ((q << b->tconv.shift) + ((r << b->tconv.shift) /
	    b->tconv.mult));
}

#define PERF_REC_LOST		2
#define PERF_REC_SWITCH_CPU_WIDE 15
#define PERF_MISC_SWITCH_OUT	(1u << 13)
#define SWITCH_REC_SIZE		32	/* header, next/prev, pid, tid, time */

/*
 * A contextSwitchTrace: the perf_event data buffer of a CPU's context
 * switch event, records of struct perf_event_header, the switch records
 * (PERF_RECORD_SWITCH_CPU_WIDE) with a sample_id of pid, tid and time,
 * as LLDB asks the kernel for.  Other records are skipped by their size;
 * LOST records are counted.
 */
static int
read_switches(struct lldb_bundle *b, size_t ci)
{
	struct lldb_cpu *cp = &b->cpus[ci];
	char ebuf[HWTR_ERRMSG_MAX];
	uint8_t *buf;
	size_t len, off = 0;
	uint32_t type, u[4];
	uint16_t misc, size;
	uint64_t t;
	void *vb;
	int rc;

	if ((rc = lldb_read(b, cp->switches, LLDB_MAX_IMAGE, &vb, &len,
	    ebuf, sizeof(ebuf))) < 0) {
		berr(b, "cpus[%zu].contextSwitchTrace: %s", ci, ebuf);
		return (rc);
	}
	buf = vb;
	while (off < len) {
		if (len - off < 8) {
			berr(b, "cpus[%zu].contextSwitchTrace: '%s' offset "
			    "%zu: a record header cut short (%zu bytes left)",
			    ci, cp->switches, off, len - off);
			rc = -HWTR_E_FORMAT;
			break;
		}
		memcpy(&type, buf + off, 4);
		memcpy(&misc, buf + off + 4, 2);
		memcpy(&size, buf + off + 6, 2);
		if (size < 8 || size > len - off) {
			berr(b, "cpus[%zu].contextSwitchTrace: '%s' offset "
			    "%zu: a record of %u bytes%s", ci, cp->switches,
			    off, size, size < 8 ? "" : " runs past the end");
			rc = -HWTR_E_FORMAT;
			break;
		}
		if (type == PERF_REC_LOST)
			b->lost_records++;
		if (type != PERF_REC_SWITCH_CPU_WIDE) {
			off += size;
			continue;
		}
		if (size < SWITCH_REC_SIZE) {
			berr(b, "cpus[%zu].contextSwitchTrace: '%s' offset "
			    "%zu: a switch record of %u bytes (at least %d)",
			    ci, cp->switches, off, size, SWITCH_REC_SIZE);
			rc = -HWTR_E_FORMAT;
			break;
		}
		memcpy(u, buf + off + 8, sizeof(u));
		memcpy(&t, buf + off + 24, 8);
		if (hwtr_grow(&b->sw, &b->csw, b->nsw + 1,
		    sizeof(*b->sw)) < 0) {
			rc = -HWTR_E_NOMEM;
			break;
		}
		b->sw[b->nsw].tsc = ns_to_tsc(b, t);
		b->sw[b->nsw].pid = (int32_t)u[2];
		b->sw[b->nsw].tid = (int32_t)u[3];
		b->sw[b->nsw].cpu = (int32_t)cp->id;
		b->sw[b->nsw].out = (misc & PERF_MISC_SWITCH_OUT) != 0;
		b->sw[b->nsw].seq = b->nsw;
		b->nsw++;
		off += size;
	}
	free(vb);
	return (rc);
}

static int
sw_cmp(const void *a, const void *c)
{
	const struct lldb_switch *x = a, *y = c;

	if (x->tsc != y->tsc)
		return (x->tsc < y->tsc ? -1 : 1);
	return (x->seq < y->seq ? -1 : x->seq > y->seq);
}

/* The CPUs' files: traces readable regular files, switch records sane. */
static int
check_cpus(struct lldb_bundle *b)
{
	struct lldb_cpu *cp;
	struct stat st;
	char ebuf[HWTR_ERRMSG_MAX];
	size_t i;
	int rc;

	for (i = 0; i < b->ncpus; i++) {
		cp = &b->cpus[i];
		if ((cp->fd = lldb_open(b, cp->trace, &st, ebuf,
		    sizeof(ebuf))) < 0) {
			rc = cp->fd;
			cp->fd = -1;
			berr(b, "cpus[%zu].iptTrace: %s", i, ebuf);
			return (rc);
		}
		cp->size = (uint64_t)st.st_size;
		if ((rc = read_switches(b, i)) < 0)
			return (rc);
	}
	if (b->nsw > 1)
		qsort(b->sw, b->nsw, sizeof(*b->sw), sw_cmp);
	return (0);
}

/* Pass 2: every file the bundle names. */
static int
check_files(struct lldb_bundle *b)
{
	struct lldb_process *p;
	struct lldb_thread *th;
	struct lldb_module *mo;
	struct stat st;
	char ebuf[HWTR_ERRMSG_MAX];
	uint64_t minv;
	size_t i, j, k;
	int rc;

	for (i = 0; i < b->nprocs; i++) {
		p = &b->procs[i];
		for (j = 0; j < p->nthreads; j++) {
			th = &p->threads[j];
			if (th->trace == NULL)
				continue;
			if ((th->fd = lldb_open(b, th->trace, &st, ebuf,
			    sizeof(ebuf))) < 0) {
				rc = th->fd;
				th->fd = -1;
				berr(b, "processes[%zu].threads[%zu].iptTrace:"
				    " %s", i, j, ebuf);
				return (rc);
			}
			th->size = (uint64_t)st.st_size;
		}
		for (j = 0; j < p->nmodules; j++) {
			mo = &p->modules[j];
			rc = lldb_read(b, mo->file, LLDB_MAX_IMAGE, &mo->buf,
			    &mo->len, ebuf, sizeof(ebuf));
			if (rc < 0) {
				berr(b, "%s: %s", mo->field, ebuf);
				return (rc);
			}
			rc = hwtr_elf_parse(mo->buf, mo->len, &mo->elf, ebuf,
			    sizeof(ebuf));
			if (rc < 0) {
				berr(b, "%s: '%s': %s", mo->field, mo->file,
				    ebuf);
				return (rc);
			}
			if (mo->uuid_len != 0 &&
			    (mo->uuid_len != mo->elf.build_id_len ||
			    memcmp(mo->uuid, mo->elf.build_id,
			    mo->uuid_len) != 0)) {
				char want[2 * HWTR_BUILD_ID_MAX + 1];
				char got[2 * HWTR_BUILD_ID_MAX + 1];

				hwtr_hex(want, mo->uuid, mo->uuid_len);
				hwtr_hex(got, mo->elf.build_id,
				    mo->elf.build_id_len);
				berr(b, "%s.uuid: %s does not match the "
				    "build-id of '%s' (%s)", mo->field, want,
				    mo->file, got[0] ? got : "none");
				return (-HWTR_E_FORMAT);
			}
			minv = UINT64_MAX;
			for (k = 0; k < mo->elf.nload; k++)
				if (mo->elf.load[k].vaddr < minv)
					minv = mo->elf.load[k].vaddr;
			if (minv == UINT64_MAX) {
				berr(b, "%s: '%s' has no PT_LOAD segment",
				    mo->field, mo->file);
				return (-HWTR_E_FORMAT);
			}
			/*
			 * An ET_EXEC file runs where it was linked: a load
			 * address elsewhere means the bundle is wrong, and
			 * decoding would read the wrong bytes.
			 */
			if (mo->elf.type == 2 && mo->load != minv) {
				berr(b, "%s.loadAddress: 0x%" PRIx64 ", but "
				    "'%s' is not relocatable (ET_EXEC linked "
				    "at 0x%" PRIx64 ")", mo->field, mo->load,
				    mo->file, minv);
				return (-HWTR_E_FORMAT);
			}
			for (k = 0; k < mo->elf.nload; k++)
				if (hwtr_import_wraps(mo->load,
				    mo->elf.load[k].vaddr - minv,
				    mo->elf.load[k].filesz)) {
					berr(b, "%s.loadAddress: 0x%" PRIx64
					    " puts segment %zu of '%s' past "
					    "the end of the address space",
					    mo->field, mo->load, k, mo->file);
					return (-HWTR_E_FORMAT);
				}
		}
	}
	return (0);
}

static int
write_archive(struct lldb_bundle *b, struct hwtr_import_sink *sk)
{
	static const char *const caveats[] = {
		"imported from an LLDB trace bundle: mappings hold for the "
		"whole trace and carry no time",
		"time conversion, when present, gives perf clock time "
		"(tscPerfZeroConversion), not wall-clock time"
	};
	struct hwtr_capture_meta meta;
	struct hwtr_stream_desc sd;
	struct hwtr_image_desc id;
	struct hwtr_sb_rec r;
	struct hwtr_aw *aw = NULL;
	struct lldb_process *p;
	struct lldb_module *mo;
	struct lldb_thread *th;
	char key[HWTR_IMAGE_KEY_MAX], name[64], label[128];
	const char *out = sk->out;
	uint64_t minv;
	uint32_t sid;
	size_t i, j, k;
	int rc;

	hwtr_import_meta_init(&meta, "lldb");
	meta.caveats = caveats;
	meta.ncaveats = b->tconv.valid ? 2 : 1;
	meta.cpu = b->cpu;
	meta.tconv = b->tconv;
	if ((rc = hwtr_import_begin(sk, &meta)) < 0)
		return (rc);
	aw = sk->aw;
	for (i = 0; i < b->nprocs; i++) {
		p = &b->procs[i];
		memset(&r, 0, sizeof(r));
		r.type = HWTR_SB_PROC_START;
		r.pid = (int32_t)p->pid;
		r.tid = (int32_t)p->pid;
		r.u.proc_start.ppid = -1;
		if ((rc = hwtr_aw_sideband(aw, &r)) < 0)
			goto fail;
		for (j = 0; j < p->nmodules; j++) {
			mo = &p->modules[j];
			memset(&id, 0, sizeof(id));
			id.path = mo->system_path;
			id.kind = HWTR_IMG_FILE;
			memcpy(id.build_id, mo->elf.build_id,
			    mo->elf.build_id_len);
			id.build_id_len = mo->elf.build_id_len;
			if ((rc = hwtr_aw_add_image(aw, &id, mo->buf, mo->len,
			    key)) < 0)
				goto fail;
			minv = UINT64_MAX;
			for (k = 0; k < mo->elf.nload; k++)
				if (mo->elf.load[k].vaddr < minv)
					minv = mo->elf.load[k].vaddr;
			for (k = 0; k < mo->elf.nload; k++) {
				if (mo->elf.load[k].filesz == 0)
					continue;
				memset(&r, 0, sizeof(r));
				r.type = HWTR_SB_MMAP;
				r.pid = (int32_t)p->pid;
				r.tid = -1;
				r.u.mmap.addr = mo->load +
				    (mo->elf.load[k].vaddr - minv);
				r.u.mmap.len = mo->elf.load[k].filesz;
				r.u.mmap.pgoff = mo->elf.load[k].offset;
				r.u.mmap.prot =
				    hwtr_import_prot(mo->elf.load[k].flags);
				r.u.mmap.path = mo->system_path;
				r.u.mmap.image = key;
				memcpy(r.u.mmap.build_id, mo->elf.build_id,
				    mo->elf.build_id_len);
				r.u.mmap.build_id_len =
				    (uint8_t)mo->elf.build_id_len;
				if ((rc = hwtr_aw_sideband(aw, &r)) < 0)
					goto fail;
			}
		}
		for (j = 0; j < p->nthreads; j++) {
			th = &p->threads[j];
			memset(&r, 0, sizeof(r));
			r.type = HWTR_SB_THREAD_START;
			r.pid = (int32_t)p->pid;
			r.tid = (int32_t)th->tid;
			r.u.thread_start.ptid = -1;
			if ((rc = hwtr_aw_sideband(aw, &r)) < 0)
				goto fail;
			if (th->trace == NULL)
				continue;
			memset(&sd, 0, sizeof(sd));
			sd.format = HWTR_TF_INTEL_PT;
			sd.pid = (int32_t)p->pid;
			sd.tid = (int32_t)th->tid;
			sd.cpu = -1;
			snprintf(name, sizeof(name), "tid %" PRId64, th->tid);
			sd.name = name;
			if ((rc = hwtr_aw_add_stream(aw, &sd, &sid)) < 0)
				goto fail;
			snprintf(label, sizeof(label),
			    "processes[%zu].threads[%zu].iptTrace ", i, j);
			if ((rc = hwtr_import_copy(aw, sid, th->fd, label,
			    th->trace, 0, th->size, b->errbuf,
			    b->errlen)) < 0)
				return (rc);
		}
	}
	/* Per-CPU traces, and their context switches in time order. */
	for (i = 0; i < b->ncpus; i++) {
		memset(&sd, 0, sizeof(sd));
		sd.format = HWTR_TF_INTEL_PT;
		sd.pid = -1;
		sd.tid = -1;
		sd.cpu = (int32_t)b->cpus[i].id;
		snprintf(name, sizeof(name), "cpu %" PRId64, b->cpus[i].id);
		sd.name = name;
		if ((rc = hwtr_aw_add_stream(aw, &sd, &sid)) < 0)
			goto fail;
		snprintf(label, sizeof(label), "cpus[%zu].iptTrace ", i);
		if ((rc = hwtr_import_copy(aw, sid, b->cpus[i].fd, label,
		    b->cpus[i].trace, 0, b->cpus[i].size, b->errbuf,
		    b->errlen)) < 0)
			return (rc);
	}
	for (i = 0; i < b->nsw; i++) {
		memset(&r, 0, sizeof(r));
		r.type = HWTR_SB_SWITCH;
		r.time = b->sw[i].tsc;
		r.pid = b->sw[i].pid;
		r.tid = b->sw[i].tid;
		r.u.sw.cpu = b->sw[i].cpu;
		r.u.sw.out = (uint8_t)b->sw[i].out;
		if ((rc = hwtr_aw_sideband(aw, &r)) < 0)
			goto fail;
	}
	if (b->lost_records > 0) {
		memset(&r, 0, sizeof(r));
		r.type = HWTR_SB_LOST;
		r.time = b->nsw > 0 ? b->sw[b->nsw - 1].tsc : 0;
		r.pid = r.tid = -1;
		r.u.lost.stream = UINT32_MAX;
		r.u.lost.reason = HWTR_LOST_SIDEBAND;
		r.u.lost.records = b->lost_records;
		if ((rc = hwtr_aw_sideband(aw, &r)) < 0)
			goto fail;
	}
	return (0);
fail:
	hwtr_import_err(b->errbuf, b->errlen, "writing '%s': %s", out,
	    hwtr_aw_errmsg(aw));
	return (rc);
}

static void
bundle_free(struct lldb_bundle *b)
{
	struct lldb_process *p;
	size_t i, j;

	for (i = 0; i < b->nprocs; i++) {
		p = &b->procs[i];
		for (j = 0; j < p->nthreads; j++) {
			free(p->threads[j].trace);
			if (p->threads[j].fd >= 0)
				close(p->threads[j].fd);
		}
		for (j = 0; j < p->nmodules; j++) {
			free(p->modules[j].system_path);
			free(p->modules[j].file);
			free(p->modules[j].buf);
		}
		free(p->threads);
		free(p->modules);
	}
	free(b->procs);
	for (i = 0; i < b->ncpus; i++) {
		free(b->cpus[i].trace);
		free(b->cpus[i].switches);
		if (b->cpus[i].fd >= 0)
			close(b->cpus[i].fd);
	}
	free(b->cpus);
	free(b->sw);
	free(b->dir);
}

static int
lldb_load(const char *json, const struct hwtr_import_opts *io,
    struct hwtr_import_sink *sk)
{
	struct lldb_bundle b;
	json_error_t jerr;
	json_t *root;
	char ebuf[HWTR_ERRMSG_MAX], *text;
	void *raw;
	size_t rawlen, textlen;
	const char *slash;
	char *errbuf = sk->errbuf;
	size_t errlen = sk->errlen;
	int rc;

	if (json == NULL) {
		hwtr_import_err(errbuf, errlen, "no bundle or no output");
		return (-HWTR_E_INVAL);
	}
	memset(&b, 0, sizeof(b));
	b.json = json;
	b.outside = io != NULL && io->allow_outside;
	b.errbuf = errbuf;
	b.errlen = errlen;
	slash = strrchr(json, '/');
	b.dir = slash == NULL ? strdup(".") :
	    strndup(json, slash == json ? 1 : (size_t)(slash - json));
	if (b.dir == NULL) {
		hwtr_import_err(errbuf, errlen, "out of memory");
		return (-HWTR_E_NOMEM);
	}
	if ((rc = hwtr_read_file(json, LLDB_MAX_IMAGE, &raw, &rawlen, ebuf,
	    sizeof(ebuf))) < 0) {
		/* hwtr_read_file()'s message names the file. */
		hwtr_import_err(errbuf, errlen, "%s", ebuf);
		free(b.dir);
		return (rc);
	}
	rc = prescan(raw, rawlen, &text, &textlen, ebuf, sizeof(ebuf));
	free(raw);
	if (rc < 0) {
		hwtr_import_err(errbuf, errlen, "'%s': %s", json,
		    rc == -HWTR_E_NOMEM ? "out of memory" : ebuf);
		free(b.dir);
		return (rc);
	}
	root = json_loadb(text, textlen, JSON_REJECT_DUPLICATES, &jerr);
	free(text);
	if (root == NULL) {
		hwtr_import_err(errbuf, errlen, "'%s': line %d column %d: %s",
		    json, jerr.line, jerr.column, jerr.text);
		free(b.dir);
		return (-HWTR_E_FORMAT);
	}
	rc = parse_bundle(&b, root);
	json_decref(root);
	if (rc == -HWTR_E_NOMEM)
		hwtr_import_err(errbuf, errlen, "out of memory");
	if (rc >= 0)
		rc = check_files(&b);
	if (rc >= 0)
		rc = check_cpus(&b);
	if (rc >= 0)
		rc = write_archive(&b, sk);
	bundle_free(&b);
	return (rc < 0 ? rc : 0);
}

/*
 * A JSON object is a bundle; any other file gets the lowest bid, so that
 * a file no importer knows is still refused with the JSON parser's
 * reason (as before the table).
 */
static int
lldb_bid(const char *path)
{
	struct stat st;
	FILE *fp;
	int c;

	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return (0);
	if ((fp = fopen(path, "re")) == NULL)
		return (1);
	while ((c = getc(fp)) != EOF && isspace(c))
		;
	fclose(fp);
	return (c == '{' ? 80 : 1);
}

const struct hwtr_importer hwtr_importer_lldb = {
	.name = "lldb",
	.bid = lldb_bid,
	.load = lldb_load,
};

