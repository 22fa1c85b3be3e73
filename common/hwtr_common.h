/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Helpers shared by the modules of libhwtrace (private: not installed, not
 * part of hwtrace.h).  Every module may include this header; it includes no
 * third-party header.
 */

#ifndef HWTR_COMMON_H
#define HWTR_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "hwtrace.h"

#define HWTR_NELEM(a)	(sizeof(a) / sizeof((a)[0]))

/*
 * Make room for @need elements of @size bytes in the array *@vp (a pointer
 * to the array pointer) of capacity *@capp, doubling it (from 16): 0, or
 * -HWTR_E_NOMEM with *@vp and *@capp unchanged.
 */
int hwtr_grow(void *vp, size_t *capp, size_t need, size_t size);

/*
 * Binary search, as bsearch(3) is given a key and an array, but over
 * @n elements of @base that only @below(@key, @base, i) looks at (an
 * array of pointers, a column of rows): the least i in [0, @n] for which
 * @below is false, @below being true for a prefix of the indices and
 * false for the rest.  For "the first at or above the key", @below says
 * "element i < key"; for "the last at or below it", "element i <= key",
 * and the answer is the index after it (0: none).
 */
size_t hwtr_bsearch(const void *key, const void *base, size_t n,
    int (*below)(const void *key, const void *base, size_t i));

/*
 * Text from an archive or a database (host names, command lines, paths,
 * symbol names) made safe for a terminal: control characters (C0, DEL,
 * C1) and bytes that are not valid UTF-8 become \n, \t, \r, \e or \xHH;
 * valid UTF-8 passes unchanged.  With HWTR_ESC_KEEP_NL newlines stay (for
 * messages of several lines).  Every human-readable output goes through
 * it; JSON and CSV output stay exact.  Returns a copy the caller frees,
 * NULL when out of memory; hwtr_esc_needed() says whether anything would
 * change.
 */
#define HWTR_ESC_KEEP_NL	0x1
char *hwtr_esc_dup(const char *s, int flags);
int hwtr_esc_needed(const char *s, int flags);

/*
 * "cannot open 'PATH': WHY" into @buf, or WHY alone when it already names
 * 'PATH' (the reader's own "cannot open 'PATH': ..."): a path said once.
 */
const char *hwtr_open_failed(const char *path, const char *why, char *buf,
    size_t len);

/* Format a message and send it to @log (which may be NULL). */
void hwtr_logf(const struct hwtr_log *log, enum hwtr_log_level level,
    const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/*
 * SHA-256 (FIPS 180-4), common/sha256.c.  Incremental: init, update any
 * number of times, final.
 */
struct hwtr_sha256 {
	uint32_t	h[8];
	uint64_t	len;
	uint8_t		buf[64];
	size_t		nbuf;
};

void hwtr_sha256_init(struct hwtr_sha256 *s);
void hwtr_sha256_update(struct hwtr_sha256 *s, const void *data, size_t len);
void hwtr_sha256_final(struct hwtr_sha256 *s, uint8_t out[32]);
/* One-shot digest of @len bytes at @data. */
void hwtr_sha256(const void *data, size_t len, uint8_t out[32]);
/*
 * Whether the processor's SHA extensions compute the digests (1) or the
 * portable rounds (0).  @use < 0 only asks; 0 turns them off for the
 * process, 1 on where the processor has them (tests compare the two).
 */
int hwtr_sha256_accel(int use);
/* Lowercase hex of @len bytes into @out (2 * @len + 1 bytes). */
/* Numbers and bytes to and from text (common/strconv.c). */
/* @len bytes as 2 * @len lowercase hex digits and a NUL. */
void hwtr_hex(char *out, const uint8_t *p, size_t len);
/* The value of hex digit @c (either case), or -1. */
int hwtr_hexdigit(int c);
/*
 * The inverse: an even number of lowercase hex digits, at most @max bytes,
 * into @out and *@lenp.  Returns 0 or -HWTR_E_INVAL.
 */
int hwtr_unhex(const char *s, uint8_t *out, size_t max, size_t *lenp);
/*
 * The whole of @s as an unsigned number in C syntax (0x hex, 0 octal,
 * decimal): no sign, no space, no trailing characters, no overflow.
 * Returns 0 or -HWTR_E_INVAL.
 */
int hwtr_parse_u64(const char *s, uint64_t *vp);
/*
 * A whole number in strtol()'s syntax (base 0) from @min to @max into
 * *@vp; 0 or -HWTR_E_INVAL.
 */
int hwtr_parse_long(const char *s, long min, long max, long *vp);

/*
 * The GNU build-id of an ELF image (common/elfnote.c).  @id receives up to
 * HWTR_BUILD_ID_MAX bytes.  Returns 1 when found, 0 when the image is not
 * a little-endian ELF or has no build-id note, -HWTR_E_NOMEM.  @rd reads
 * @len bytes at @off and returns the count read or -1.
 */
#include <sys/types.h>
typedef ssize_t (*hwtr_elf_read_fn)(void *arg, uint64_t off, void *buf,
    size_t len);
/* One ELF note, as hwtr_elf_note_next() found it. */
struct hwtr_elf_note {
	uint64_t	off;		/* of its header, in the notes */
	uint32_t	type;
	uint32_t	namesz;		/* the terminating NUL included */
	uint32_t	descsz;
	const uint8_t	*name;
	const uint8_t	*desc;
	const char	*bad;		/* "name", "descriptor": which is too large */
};
/*
 * The note at *@pos in the notes @p[0..@len) (a PT_NOTE segment or SHT_NOTE
 * section; @be: big-endian; entries padded to @align, 8 or else 4): 1 and
 * *@pos moved past it; 0 when fewer than 12 bytes are left; -HWTR_E_FORMAT
 * when its name or descriptor runs past the end (@n->bad says which).
 */
int hwtr_elf_note_next(const uint8_t *p, size_t len, int be, uint64_t align,
    uint64_t *pos, struct hwtr_elf_note *n);
/* 1 when @n is a GNU build-id note (NT_GNU_BUILD_ID, owner "GNU"). */
int hwtr_elf_note_is_build_id(const struct hwtr_elf_note *n);
int hwtr_elf_build_id(hwtr_elf_read_fn rd, void *arg, uint8_t *id,
    size_t *idlen);
int hwtr_elf_build_id_fd(int fd, uint8_t *id, size_t *idlen);
int hwtr_elf_build_id_mem(const void *buf, size_t len, uint8_t *id,
    size_t *idlen);

/*
 * Temporary outputs (common/outfile.c).  hwtr_out_create() creates the
 * temporary file of the output @path, exclusively and never through a
 * symbolic link, mode 0600: "@path.partial" (an earlier file or link of
 * that name is removed first, not followed), or with HWTR_OUT_RANDOM an
 * unpredictable "@path.partial.XXXXXX".  Returns the descriptor and the
 * name in *@tmpp (the caller frees it), or -1 with errno set.
 * hwtr_out_commit() renames the finished @tmp over @path (-1 and errno).
 * A device, a FIFO or "-" (standard output) is written into, never
 * replaced: hwtr_out_create() then opens it and sets *@tmpp to NULL (the
 * writer writes it directly; hwtr_out_commit(NULL, ...) does nothing), or
 * with HWTR_OUT_SEEKABLE creates a temporary file in TMPDIR that
 * hwtr_out_commit() copies into it.  hwtr_out_commit_cancel() is
 * hwtr_out_commit() that gives up with EINTR as soon as *@cancel is
 * non-zero while it waits for a FIFO's reader or for room in the FIFO
 * (the flag a SIGINT/SIGTERM handler sets, whichever thread ran it).
 * hwtr_out_is_stream() says whether @path is such an output.
 */
/*
 * Leftovers of runs that were killed (common/outfile.c): a run holds a
 * flock(2) on its temporary file or directory, so one of ours that nobody
 * holds and that is older than @age_s seconds is left over.
 * hwtr_stale_open() says whether @name in @dfd is such a leftover (a
 * directory when @isdir, else a regular file); then its descriptor,
 * locked, is in *@fdp.  hwtr_stale_rmdir() removes such a directory and
 * the files in it, through the descriptor checked and locked rather than
 * the path: 1 when removed, 0 when not.
 */
int hwtr_stale_open(int dfd, const char *name, int isdir, int age_s,
    int *fdp);
int hwtr_stale_rmdir(int dfd, const char *name, int age_s);

/*
 * The signals of @sigs that the process was started with ignored, noted
 * before it catches any of them (hwtr_sig_note_ignored()); a child about
 * to exec a program it traces gives them back ignored
 * (hwtr_sig_restore_ignored(), safe between fork and exec).  The program
 * then gets its signals as its caller gave them, not as hwtrace handles
 * them (common/sigentry.c).
 */
void hwtr_sig_note_ignored(const int *sigs, size_t n);
void hwtr_sig_restore_ignored(void);

/* Receives @len bytes of output (hwtr_json_quote()). */
typedef void (*hwtr_put_fn)(void *arg, const char *p, size_t len);
/*
 * @s as a JSON string, quotes included, handed to @put in pieces: quote,
 * backslash and control characters (C0 and DEL) escaped, UTF-8 as it is;
 * NULL as null (common/json.c).
 */
void hwtr_json_quote(hwtr_put_fn put, void *arg, const char *s);

/*
 * The one writer of the JSON that hwtrace outputs (hwtrace info --json,
 * the query verbs' json format, the Perfetto export), common/json.c:
 *   1) hwtr_jw_init(&j, put, arg, flags): HWTR_JW_SPACED separates
 *      members with ", " and keys with ": " (else "," and ":");
 *   2) hwtr_jw_obj()/hwtr_jw_arr() open an object or array, each
 *      hwtr_jw_key() names the next member, the value calls write one
 *      value, hwtr_jw_end() closes the innermost; the writer puts the
 *      commas.  hwtr_jw_ws(): layout (newlines, indentation) written
 *      after the next comma, before the next key, value or closing;
 *   3) nothing to finish: every call hands its bytes to @put.
 * The archive's own JSON members are jansson's (format/archive_json.c).
 */
#define HWTR_JW_SPACED	0x1
#define HWTR_JW_DEPTH		16

struct hwtr_jw {
	hwtr_put_fn	put;
	void		*arg;
	int		flags;
	int		depth;		/* open objects and arrays */
	int		key;		/* a key waits for its value */
	const char	*ws;		/* layout before the next item */
	unsigned char	any[HWTR_JW_DEPTH];	/* per level: items so far */
	char		close[HWTR_JW_DEPTH];
};

void hwtr_jw_init(struct hwtr_jw *j, hwtr_put_fn put, void *arg,
    int flags);
void hwtr_jw_obj(struct hwtr_jw *j);
void hwtr_jw_arr(struct hwtr_jw *j);
void hwtr_jw_end(struct hwtr_jw *j);
void hwtr_jw_ws(struct hwtr_jw *j, const char *ws);
void hwtr_jw_key(struct hwtr_jw *j, const char *key);
/* A string; NULL writes null. */
void hwtr_jw_str(struct hwtr_jw *j, const char *s);
void hwtr_jw_u64(struct hwtr_jw *j, uint64_t v);
void hwtr_jw_i64(struct hwtr_jw *j, int64_t v);
void hwtr_jw_bool(struct hwtr_jw *j, int v);
void hwtr_jw_null(struct hwtr_jw *j);
/* A number written as @len bytes of @text (the caller's JSON number). */
void hwtr_jw_num(struct hwtr_jw *j, const char *text, size_t len);
/* printf(3) @fmt, one value as the caller formats it (a number). */
void hwtr_jw_numf(struct hwtr_jw *j, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Key and value in one call. */
void hwtr_jw_kstr(struct hwtr_jw *j, const char *key, const char *s);
void hwtr_jw_ku64(struct hwtr_jw *j, const char *key, uint64_t v);
void hwtr_jw_ki64(struct hwtr_jw *j, const char *key, int64_t v);

/* The CPU this runs on (CPUID): vendor, family, model, stepping, brand. */
void hwtr_cpu_host(struct hwtr_cpu *cpu);
/*
 * CPUID leaves 0 and 1: the vendor string ("GenuineIntel", NUL-terminated)
 * and family, model and stepping as Intel and AMD compose them.  Returns 0,
 * or -HWTR_E_UNSUPPORTED (not x86, or CPUID does not answer: what could
 * be read is set, the rest is "" or 0).
 */
int hwtr_cpu_host_id(char vendor[13], unsigned *family, unsigned *model,
    unsigned *stepping);

#define HWTR_OUT_RANDOM	0x1
#define HWTR_OUT_SEEKABLE 0x2
int hwtr_out_create(const char *path, int flags, char **tmpp);
int hwtr_out_commit(const char *tmp, const char *path);
int hwtr_out_commit_cancel(const char *tmp, const char *path,
    const volatile int *cancel);
int hwtr_out_is_stream(const char *path);

/*
 * Inputs (common/infile.c).  hwtr_in_open() opens @path read-only, never
 * blocking (a FIFO without a writer is refused, not waited for), and
 * refuses anything but a regular file: "'@path' is not a regular file".
 * hwtr_in_open_under() opens @path, "@dir/NAME" with NAME a name an
 * input gave, only inside the directory @dir: a @path that does not start
 * with "@dir/", a ".." component or a symbolic link on the way is
 * refused, then as hwtr_in_open(); a NULL @dir allows any @path, as
 * hwtr_in_open() does.  Both return the descriptor (*@st
 * filled) or -HWTR_E_* with the reason in @err.
 */
struct stat;
int hwtr_in_open(const char *path, struct stat *st, char *err,
    size_t errlen);
int hwtr_in_open_under(const char *dir, const char *path, struct stat *st,
    char *err, size_t errlen);

/*
 * Whether @path is in one of the system's directories of programs and
 * libraries (/usr but /usr/local, /lib*, /bin, /sbin: common/syspath.c),
 * where the C library, the loader and distribution packages live; the
 * rest is the program's own (capture --debug-info=own, report's
 * coverage).  A relative path or NULL is not the system's.
 */
int hwtr_path_system(const char *path);

#endif /* !HWTR_COMMON_H */
