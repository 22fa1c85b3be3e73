/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * hwtrace.h: the public interface of libhwtrace, what a front end needs:
 * reading and writing archives, capture sessions, importers, the indexer,
 * queries.  The contracts between modules live in module headers that are
 * not installed (kernel/hwtr_kernel.h, format/hwtr_format.h,
 * indexer/hwtr_ix.h, ...; README.md, "Architecture").
 *
 * libhwtrace records how a program ran (trace sources, capture), packs the
 * recording into a self-contained archive (format), decodes archives into an
 * SQLite execution history (indexer) and answers questions over it (query).
 * No third-party type appears in this header.
 *
 * Sections, each opening with a short outline:
 *   1. Errors and logging
 *   2. Capture identity and stream configuration (plain data)
 *   3. Sideband records
 *   4. Archive writer  (hwtr_aw_*)
 *   5. Archive reader  (hwtr_ar_*)
 *   6. Capture sessions (hwtr_cap_*)
 *   7. Indexer (hwtr_ix_*)
 *   8. Query (hwtr_q_*)
 *   9. PostgreSQL export and fleet questions (hwtr_pg_*)
 *
 * Conventions: functions return int, >= 0 on success and -HWTR_E_* on
 * failure; hwtr_errstr() names the code and each handle keeps a message with
 * the details (which member, which offset).  Opaque handles; _open/_close for
 * file-backed objects, _new/_free otherwise; every destructor accepts NULL.
 * The library never prints and never exits.
 */

#ifndef HWTRACE_H
#define HWTRACE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HWTRACE_VERSION		"0.1.0"

/* ===================================================================== */
/* 1. Errors and logging                                                  */
/* ===================================================================== */

/*
 * How to use this: test a result with `if (rc < 0)`, report it with
 * hwtr_errstr(rc) and the handle's message (for example hwtr_ar_errmsg()).
 */
enum hwtr_error {
	HWTR_OK = 0,
	HWTR_E_NOMEM,		/* out of memory */
	HWTR_E_IO,		/* a system call failed; errno was kept in the message */
	HWTR_E_INVAL,		/* invalid argument from the caller */
	HWTR_E_FORMAT,		/* malformed or corrupt input */
	HWTR_E_VERSION,		/* input of a newer major version */
	HWTR_E_TRUNCATED,	/* input ends early */
	HWTR_E_NOENT,		/* no such member, stream, image, symbol */
	HWTR_E_UNSUPPORTED,	/* not supported on this system or build */
	HWTR_E_LIMIT,		/* a size or count limit was exceeded */
	HWTR_E_DECODE,		/* trace decode error */
	HWTR_E_PERM,		/* permission refused */
	HWTR_E_INTR,		/* interrupted on request */
	HWTR_E_DB,		/* database error */
	HWTR_E_EXISTS,		/* already exists */
	HWTR_E_CHECKSUM,	/* a checksum did not match */
	HWTR_E_MAX
};

/* A static string naming @err (positive or negative); never NULL. */
const char *hwtr_errstr(int err);

/*
 * The size of the buffers hwtrace keeps a message in, and the size to give
 * a function that takes an error buffer.  A message names what failed and
 * where, and the messages of the layers nest ("cannot index 'A': cannot
 * create 'B': ..."), so this holds two paths of a few thousand bytes with
 * their reasons; 512 bytes cut the reason off behind a long path.
 */
#define HWTR_ERRMSG_MAX	8192

enum hwtr_log_level {
	HWTR_LOG_ERROR = 0,
	HWTR_LOG_WARN,
	HWTR_LOG_INFO,
	HWTR_LOG_DEBUG
};

/*
 * Where library code sends messages.  @fn may be NULL (messages are dropped).
 * Messages above @level are not formatted at all.
 */
struct hwtr_log {
	void	(*fn)(void *arg, enum hwtr_log_level level, const char *msg);
	void	*arg;
	enum hwtr_log_level level;
};

/* ===================================================================== */
/* 2. Capture identity and stream configuration                           */
/* ===================================================================== */

/*
 * How to use this: these are plain structures.  A writer copies what it is
 * given; a reader hands out pointers that stay valid until the reader is
 * closed.
 */

#define HWTR_FORMAT_MAJOR	1
#define HWTR_FORMAT_MINOR	0

enum hwtr_cpu_vendor {
	HWTR_CPU_UNKNOWN = 0,
	HWTR_CPU_INTEL,
	HWTR_CPU_AMD,
	HWTR_CPU_ARM
};

struct hwtr_cpu {
	enum hwtr_cpu_vendor vendor;
	uint16_t	family;
	uint8_t		model;
	uint8_t		stepping;
	char		brand[64];	/* CPUID brand string or "" */
};

/*
 * Trace time (TSC, or the source's own counter) to wall-clock time:
 *   ns = ns_zero + ((tsc - tsc_zero) * mult) >> shift
 * computed in 128 bits.  @valid is 0 when the capture had no conversion.
 */
struct hwtr_timeconv {
	int		valid;
	uint64_t	tsc_zero;
	int64_t		ns_zero;	/* ns since the Epoch at tsc_zero */
	uint32_t	mult;
	uint32_t	shift;
};

/* Convert @tsc with @tc; returns 0 when @tc is not valid. */
int64_t hwtr_tsc_to_ns(const struct hwtr_timeconv *tc, uint64_t tsc);

/* What the first archive member says about the capture. */
struct hwtr_capture_meta {
	const char	*host;
	const char	*source;	/* "step", "valgrind", "perf", "hwt", "import-raw", "lldb", "coresight-snapshot" */
	const char	*source_version;/* may be NULL */
	const char	*sideband_origin;/* "perf_event", "proc", "import", or NULL */
	const char *const *caveats;	/* free-text caveats of the source */
	size_t		ncaveats;
	/* What the source found out about the machine (its probes). */
	const char *const *notes;
	size_t		nnotes;
	struct hwtr_cpu	cpu;
	const char *const *argv;	/* command line of the traced program */
	size_t		argc;
	int64_t		start_ns;	/* wall clock, ns since the Epoch; 0 unknown */
	struct hwtr_timeconv tconv;
	const char	*writer;	/* set by the writer: "hwtrace 0.1.0" */
};

enum hwtr_exit_kind {
	HWTR_EXIT_NONE = 0,		/* unknown or still running */
	HWTR_EXIT_CODE,			/* exited with status */
	HWTR_EXIT_SIGNAL		/* killed by signal */
};

/* What the final archive member says; absent in a truncated archive. */
struct hwtr_capture_end {
	int64_t		end_ns;		/* wall clock */
	enum hwtr_exit_kind exit_kind;
	int		exit_value;	/* status or signal number */
	uint64_t	lost_bytes;	/* trace bytes lost, all streams */
	uint64_t	lost_records;	/* sideband records lost */
};

enum hwtr_trace_format {
	HWTR_TF_NONE = 0,
	HWTR_TF_INTEL_PT,
	HWTR_TF_ETMV3,
	HWTR_TF_PTM,
	HWTR_TF_ETMV4,
	HWTR_TF_ETE,
	HWTR_TF_STM,
	HWTR_TF_CORESIGHT		/* a formatted buffer of several sources */
};

/* Intel PT packet options (struct hwtr_pt_config.options). */
#define HWTR_PT_OPT_TSC		0x0001u	/* TSC packets */
#define HWTR_PT_OPT_MTC		0x0002u
#define HWTR_PT_OPT_CYC		0x0004u
#define HWTR_PT_OPT_NORETCOMP	0x0008u	/* return compression disabled */
#define HWTR_PT_OPT_PWR		0x0010u
#define HWTR_PT_OPT_PTW		0x0020u
#define HWTR_PT_OPT_BRANCH	0x0040u	/* BranchEn */
#define HWTR_PT_OPT_USER	0x0080u	/* user mode traced */
#define HWTR_PT_OPT_KERNEL	0x0100u	/* kernel mode traced */

#define HWTR_PT_MAX_FILTERS	4

struct hwtr_pt_filter {
	uint32_t	cfg;		/* 0 off, 1 filter, 2 stop */
	uint64_t	a, b;
};

struct hwtr_pt_config {
	uint32_t	cpuid_15_eax;	/* TSC/core crystal clock ratio */
	uint32_t	cpuid_15_ebx;
	uint8_t		nom_freq;	/* nominal frequency / 100 MHz; 0 unknown */
	uint8_t		mtc_freq;	/* MTC period exponent */
	uint8_t		cyc_thresh;
	uint8_t		psb_freq;	/* PSB period exponent (2^(n+11) bytes) */
	uint32_t	options;	/* HWTR_PT_OPT_* */
	uint32_t	nfilters;
	struct hwtr_pt_filter filter[HWTR_PT_MAX_FILTERS];
};

/* One register value of a CoreSight source, named as in snapshot files. */
struct hwtr_reg {
	const char	*name;
	uint64_t	value;
};

enum hwtr_cs_frame {
	HWTR_CS_FRAME_NONE = 0,		/* raw single-source trace */
	HWTR_CS_FRAME_CORESIGHT,	/* 16-byte formatter frames */
	HWTR_CS_FRAME_TPIU,		/* with TPIU frame syncs */
	HWTR_CS_FRAME_DSTREAM		/* DSTREAM packed */
};

struct hwtr_cs_source {
	enum hwtr_trace_format protocol;	/* ETMV3, PTM, ETMV4, ETE, STM */
	uint8_t		trace_id;
	const char	*core;		/* "Cortex-A57" or NULL */
	const struct hwtr_reg *regs;
	size_t		nregs;
};

struct hwtr_cs_config {
	enum hwtr_cs_frame frame;
	const struct hwtr_cs_source *sources;
	size_t		nsources;
};

/* A trace stream: one per thread, per CPU, or per CoreSight buffer. */
struct hwtr_stream_desc {
	uint32_t	id;		/* assigned by the writer */
	enum hwtr_trace_format format;
	int32_t		pid;		/* -1 when not per process */
	int32_t		tid;		/* -1 when not per thread */
	int32_t		cpu;		/* -1 when not per CPU */
	const char	*name;		/* "tid 4242"; NULL: the writer makes one */
	struct hwtr_pt_config pt;	/* format == HWTR_TF_INTEL_PT */
	struct hwtr_cs_config cs;	/* CoreSight formats */
};

enum hwtr_image_kind {
	HWTR_IMG_FILE = 0,		/* a file as on disk (ELF usually) */
	HWTR_IMG_MEMORY			/* bytes dumped from memory (vdso, raw) */
};

#define HWTR_BUILD_ID_MAX	64
#define HWTR_IMAGE_KEY_MAX	(8 + 2 * HWTR_BUILD_ID_MAX + 1)

/*
 * An image the trace executes.  Its key is "bid-<hex build-id>" when a
 * build-id is known and "sha256-<hex>" of the content otherwise.
 */
struct hwtr_image_desc {
	char		key[HWTR_IMAGE_KEY_MAX];
	const char	*path;		/* where it came from, or "[vdso]" */
	enum hwtr_image_kind kind;
	uint8_t		build_id[HWTR_BUILD_ID_MAX];
	size_t		build_id_len;
	uint64_t	size;
	uint8_t		sha256[32];
};

/* ===================================================================== */
/* 3. Sideband records                                                    */
/* ===================================================================== */

/*
 * How to use this: fill a struct hwtr_sb_rec and hand it to
 * hwtr_aw_sideband(); a reader returns the same structures in capture order.
 * @time is in the capture's trace time domain (see struct hwtr_timeconv).
 * On disk each record is typed and length-prefixed (hwtrace(5)), so readers
 * skip types and trailing fields they do not know.
 */
enum hwtr_sb_type {
	HWTR_SB_PROC_START = 1,		/* a process appeared (fork, or first) */
	HWTR_SB_PROC_EXIT,		/* a process ended, with status or signal */
	HWTR_SB_THREAD_START,
	HWTR_SB_THREAD_EXIT,
	HWTR_SB_EXEC,			/* the process image was replaced */
	HWTR_SB_COMM,			/* thread name */
	HWTR_SB_MMAP,			/* an executable mapping */
	HWTR_SB_MUNMAP,
	HWTR_SB_SWITCH,			/* context switch in or out */
	HWTR_SB_LOST,			/* data lost or overwritten */
	HWTR_SB_BUFPOS,			/* a stream offset at @time */
	HWTR_SB_MAX
};

enum hwtr_lost_reason {
	HWTR_LOST_OVERFLOW = 1,		/* the tracer could not keep up */
	HWTR_LOST_WRAP,			/* ring buffer overwritten */
	HWTR_LOST_STOPPED,		/* stop-on-full ended the trace */
	HWTR_LOST_SIDEBAND,		/* sideband records dropped */
	HWTR_LOST_OTHER,
	/*
	 * Instructions ran that the source could not record exactly (the
	 * step source's single-step trap came late and the path between
	 * two stops was ambiguous): the trace has a gap, PGD to PGE.
	 */
	HWTR_LOST_UNTRACED
};

struct hwtr_sb_rec {
	enum hwtr_sb_type type;
	uint64_t	time;
	int32_t		pid;
	int32_t		tid;
	union {
		struct {
			int32_t	ppid;		/* parent, -1 unknown */
		} proc_start;
		struct {
			int32_t	ptid;		/* creating thread, -1 unknown */
		} thread_start;
		struct {
			enum hwtr_exit_kind kind;
			int32_t	value;		/* status or signal */
		} exit;				/* PROC_EXIT, THREAD_EXIT */
		struct {
			const char *path;
		} exec;
		struct {
			const char *comm;
			uint8_t	exec;		/* set by exec */
		} comm;
		struct {
			uint64_t addr;
			uint64_t len;
			uint64_t pgoff;		/* offset into the image */
			uint32_t prot;		/* PROT_* */
			uint32_t flags;		/* MAP_* */
			const char *path;
			const char *image;	/* image key in the archive, or NULL */
			uint8_t	build_id[HWTR_BUILD_ID_MAX];
			uint8_t	build_id_len;
			uint8_t	slice;		/* image: the mapped bytes only */
		} mmap;
		struct {
			uint64_t addr;
			uint64_t len;
		} munmap;
		struct {
			int32_t	cpu;
			uint8_t	out;		/* 1 switched out, 0 in */
			uint8_t	preempt;
		} sw;
		struct {
			uint32_t stream;	/* stream id, UINT32_MAX: none */
			enum hwtr_lost_reason reason;
			uint64_t bytes;
			uint64_t records;
		} lost;
		struct {
			uint32_t stream;
			uint64_t offset;	/* byte offset in the stream */
		} bufpos;
	} u;
};

/* A static name for @type ("mmap", "lost"), or "unknown". */
const char *hwtr_sb_type_name(enum hwtr_sb_type type);

/*
 * Static names, as the archive's JSON members spell them ("intel-pt",
 * "tpiu", "amd"), or "unknown".
 */
const char *hwtr_tf_name(enum hwtr_trace_format f);
const char *hwtr_cs_frame_name(enum hwtr_cs_frame f);
const char *hwtr_cpu_vendor_name(enum hwtr_cpu_vendor v);

/* ===================================================================== */
/* 4. Archive writer                                                      */
/* ===================================================================== */

/*
 * How to use this:
 *   1) hwtr_aw_open(&aw, "out.hwtrace", &meta, NULL): the file is written as
 *      "out.hwtrace.partial"; the first member (format version, identity) is
 *      written at once.
 *   2) hwtr_aw_add_stream() for each trace buffer; hwtr_aw_chunk() writes
 *      one chunk of a stream as soon as the caller has it (compressed in
 *      the background while the caller produces the next one).
 *   3) hwtr_aw_add_image_file() / hwtr_aw_add_image() for every image the
 *      trace executes; hwtr_aw_sideband() for every sideband record.
 *   4) hwtr_aw_set_end() with the exit status, then hwtr_aw_close(), which
 *      writes the final member and renames the file to its name.
 *      hwtr_aw_abort() instead removes the partial file.
 * Durability: every member but a chunk is in the file when its call
 * returns.  A chunk is in the file as soon as a background thread has
 * compressed it (milliseconds for a few MiB; no timer is involved, so a
 * capture that goes quiet still gets it out), and at the latest when the
 * next hwtr_aw_chunk(), hwtr_aw_flush() or hwtr_aw_close() returns (and
 * the next call writing another member: a stream, an image, an auxiliary
 * or a full sideband member, which all follow it).  So a writer killed at
 * any point leaves a ".partial" archive whose completed members a reader
 * still returns, and the archive's bytes depend only on the calls made,
 * not on timing or thread count.  Not thread-safe: callers serialize.
 */
struct hwtr_aw;

struct hwtr_aw_opts {
	int		level;		/* zstd level; 0: default (3) */
	int		threads;	/* compression threads, at most 2 for
					   chunks; 0: default (2); < 0: none,
					   every call compresses */
	int		no_partial;	/* write @path directly, no rename */
	/*
	 * Separate debug files of the ELF images stored (member
	 * aux/debug/KEY, hwtrace(5)): 0 looked for under @debug_dir only,
	 * > 0 also where the system keeps them (/usr/lib/debug, beside the
	 * image, debuginfod when DEBUGINFOD_URLS is set), < 0 never.
	 */
	int		debug_info;
	const char	*debug_dir;	/* or NULL; copied */
	/*
	 * Which images' debug files are looked for: those whose path
	 * @debug_want(@debug_arg, path) accepts (non-zero); NULL: every
	 * image's.  capture --debug-info=own keeps the program's own.
	 */
	int		(*debug_want)(void *arg, const char *path);
	void		*debug_arg;
};

/*
 * Open a writer.  @meta is copied.  @opts may be NULL.  On failure *awp is
 * NULL and @errbuf (may be NULL) receives the reason.
 */
int hwtr_aw_open(struct hwtr_aw **awp, const char *path,
    const struct hwtr_capture_meta *meta, const struct hwtr_aw_opts *opts,
    char *errbuf, size_t errlen);

/* Details of the last failure; valid until the next call. */
const char *hwtr_aw_errmsg(const struct hwtr_aw *aw);

/* Declare a stream; @desc is copied and its id returned in *idp. */
int hwtr_aw_add_stream(struct hwtr_aw *aw, const struct hwtr_stream_desc *desc,
    uint32_t *idp);

#define HWTR_AW_APPEND	UINT64_MAX

/*
 * Write @len bytes of stream @id as one chunk at stream byte @offset
 * (HWTR_AW_APPEND: right after the previous chunk).  Offsets only grow; a
 * gap means bytes that were lost (record why with a HWTR_SB_LOST record).
 * A chunk of 0 bytes is not stored.  Chunks of 1 MiB or more compress best
 * and fastest (each chunk is a zstd frame of its own).
 *
 * @buf is copied before the call returns: the caller may reuse it at once.
 * The chunk is compressed by a background thread while the caller goes on
 * (see "Durability" above; at most two chunks are held, so memory stays
 * about four times the largest chunk).  An error of that background work
 * (a failed write) is returned by the next call on the writer or by
 * hwtr_aw_close(), with hwtr_aw_errmsg() naming the chunk's member; no
 * chunk after a failed one is written.
 */
int hwtr_aw_chunk(struct hwtr_aw *aw, uint32_t id, uint64_t offset,
    const void *buf, size_t len);

/*
 * Store an image.  @desc gives path, kind and build-id (key, size and sha256
 * are computed).  An image whose key is already stored is not stored again.
 * The key is returned in @key (HWTR_IMAGE_KEY_MAX bytes).
 */
int hwtr_aw_add_image(struct hwtr_aw *aw, const struct hwtr_image_desc *desc,
    const void *buf, size_t len, char *key);

/* Store the file at @path; @build_id may be NULL (it is read from the ELF notes when present). */
int hwtr_aw_add_image_file(struct hwtr_aw *aw, const char *path,
    const uint8_t *build_id, size_t build_id_len, char *key);

/* 1 when an image with @key is stored already, else 0. */
int hwtr_aw_has_image(const struct hwtr_aw *aw, const char *key);

/*
 * Append one sideband record (buffered, flushed in members of up to 1 MiB).
 * References point backwards so that any prefix of an archive is
 * consistent: the stream of a LOST (unless UINT32_MAX) or BUFPOS record
 * and the image key of an MMAP record must be stored already
 * (-HWTR_E_NOENT otherwise).
 */
int hwtr_aw_sideband(struct hwtr_aw *aw, const struct hwtr_sb_rec *rec);

/* Write buffered sideband now (a member boundary). */
int hwtr_aw_flush(struct hwtr_aw *aw);

/*
 * Store an auxiliary member "aux/@name" (@name: [A-Za-z0-9._-/], no "..").
 * Readers that do not know it skip it.
 */
int hwtr_aw_add_aux(struct hwtr_aw *aw, const char *name, const void *buf,
    size_t len);

/*
 * Store a JIT compiler's symbol file as member "jit/@name" (hwtrace(5)):
 * @name is the file's base name, perf-PID.map or jit-PID.dump; or the
 * code regions of process PID (hwtr_jit.h), code-PID.bin.  The bytes
 * are stored as they are; readers check them when they open the archive.
 */
int hwtr_aw_add_jit(struct hwtr_aw *aw, const char *name, const void *buf,
    size_t len);

/* Set what the final member says. */
void hwtr_aw_set_end(struct hwtr_aw *aw, const struct hwtr_capture_end *end);

/*
 * The member whose background write failed first (a trace chunk, written
 * while the caller went on), or NULL: what a failure reported by a later
 * call was really about.
 */
const char *hwtr_aw_failed_member(const struct hwtr_aw *aw);

/* The file name being written (the ".partial" name until closed). */
const char *hwtr_aw_path(const struct hwtr_aw *aw);

/* Finish and rename.  Frees @aw in all cases.  NULL is accepted. */
int hwtr_aw_close(struct hwtr_aw *aw, char *errbuf, size_t errlen);

/* Stop writing; remove the partial file unless @keep.  Frees @aw. */
void hwtr_aw_abort(struct hwtr_aw *aw, int keep);

/*
 * 4b. Importers of foreign captures (format/import*.c).
 *
 * How to use this:
 *   1) Describe the capture: struct hwtr_import_raw_opts for raw Intel PT
 *      files with ptxed-style memory images, or the path of what another
 *      tool recorded (an LLDB trace bundle, an ARM snapshot, a perf.data).
 *   2) hwtr_import_raw() or hwtr_import() validate every input file, then
 *      write the archive @out through the writer (as "@out.partial",
 *      renamed when complete).  On failure nothing is left at @out or
 *      "@out.partial" and @errbuf names the bad option, field or file.
 * Both return 0 or -HWTR_E_*; they never print.
 */

/*
 * One input file: bytes @from up to @to (0: the end of the file) of @path;
 * @addr is where they are loaded (--raw VADDR, --elf BASE) when @has_addr.
 */
struct hwtr_import_file {
	const char	*path;
	uint64_t	from;
	uint64_t	to;
	uint64_t	addr;
	int		has_addr;
};

enum hwtr_import_cpu {
	HWTR_IMPORT_CPU_NONE = 0,	/* no CPU identity (ptxed's default) */
	HWTR_IMPORT_CPU_AUTO,		/* the CPU of this machine */
	HWTR_IMPORT_CPU_GIVEN		/* @cpu as given (Intel family/model) */
};

/*
 * A raw import, modelled on ptxed's options:
 *   pt[]   --pt FILE[:FROM[-TO]]      one Intel PT stream each;
 *   raw[]  --raw FILE[:FROM[-TO]]:VADDR  the whole file is stored as a
 *          HWTR_IMG_MEMORY image and a HWTR_SB_MMAP record with pid -1
 *          (every stream) maps bytes FROM..TO of it at VADDR (pgoff FROM);
 *   elf[]  --elf FILE[:BASE]  the file is stored as a HWTR_IMG_FILE image
 *          and each PT_LOAD segment with file bytes is mapped (pid -1) at
 *          p_vaddr, or, with a BASE, at p_vaddr - lowest p_vaddr + BASE, as
 *          ptxed's load_elf() does for ET_EXEC and ET_DYN alike.
 * @pt_config (CPUID 0x15, nominal and MTC frequency) is copied to every
 * stream.
 */
struct hwtr_import_raw_opts {
	const struct hwtr_import_file *pt;
	size_t		npt;
	const struct hwtr_import_file *raw;
	size_t		nraw;
	const struct hwtr_import_file *elf;
	size_t		nelf;
	enum hwtr_import_cpu cpu_mode;
	struct hwtr_cpu	cpu;		/* HWTR_IMPORT_CPU_GIVEN */
	struct hwtr_pt_config pt_config;
	const struct hwtr_aw_opts *aw_opts;	/* may be NULL */
	/*
	 * ptxed's perf_event sideband (--pevent:primary, --pevent:secondary):
	 * files of perf_event records, each with a sample_id of
	 * @pevent_sample_type; times convert to TSC as ptxed converts them
	 * (time-zero, -shift, -mult, plus tsc-offset).  MMAP records map
	 * their file (looked up under @pevent_sysroot, else as named) from
	 * pgoff, COMM, FORK, EXIT, SWITCH, SWITCH_CPU_WIDE, ITRACE_START and
	 * LOST become the matching sideband records.
	 */
	const struct hwtr_import_file *pevent;
	size_t		npevent;
	uint64_t	pevent_sample_type;
	uint64_t	pevent_time_zero;
	uint64_t	pevent_tsc_offset;
	uint32_t	pevent_time_shift;
	uint32_t	pevent_time_mult;	/* 0: 1 */
	uint64_t	pevent_kernel_start;	/* mmaps above: pid -1 */
	const char	*pevent_sysroot;
	const char	*pevent_vdso_x64;	/* the file of "[vdso]" */
};

/* Import raw files; see struct hwtr_import_raw_opts. */
int hwtr_import_raw(const struct hwtr_import_raw_opts *opts, const char *out,
    char *errbuf, size_t errlen);

/*
 * The importers are registered in one table (format/import.c), like
 * libarchive's formats: each has a name, a bid on a path (how sure it is
 * that the path is its format) and a loader that hands what it read to
 * one shared writer.  hwtr_import() picks the importer @opts->format names,
 * or the one that bids highest on @path, and writes @out as
 * hwtr_import_raw() does (nothing is left behind on failure).
 *   "raw"        ptxed's options in @raw; @path is not used (NULL)
 *   "lldb"       an LLDB Intel PT trace bundle, @path its "trace.json"
 *                (file names in it are relative to its directory):
 *                cpuInfo gives the CPU, each process a
 *                HWTR_SB_PROC_START record, each thread a stream (and a
 *                HWTR_SB_THREAD_START record), each module an image
 *                checked against its uuid (the ELF build-id) and
 *                HWTR_SB_MMAP records of its PT_LOAD segments at
 *                loadAddress; tscPerfZeroConversion, when present, the
 *                time conversion
 *   "coresight"  an ARM trace and debug snapshot directory (snapshot.ini,
 *                the device files it lists, trace.ini): one
 *                HWTR_TF_CORESIGHT stream per trace buffer with its frame
 *                format and sources (protocol, trace ID, core type,
 *                registers named without their "(...)" annotations), each
 *                memory dump a HWTR_IMG_MEMORY image mapped by a
 *                HWTR_SB_MMAP record with pid -1, and the dumps' memory
 *                spaces in "aux/coresight-dumps" (lines "ADDRESS LENGTH
 *                SPACE FILE", SPACE "-" when not given); ITM sources are
 *                left out with a caveat
 *   "perf"       a perf.data file of Linux perf or simpleperf (PERFILE2,
 *                file or pipe mode): every AUXTRACE buffer a stream,
 *                AUXTRACE_INFO the decoder configuration, the kernel's
 *                records the sideband, AUX flags and LOST records loss;
 *                images found by build-id (see the perf_* fields)
 */
struct hwtr_import_opts {
	const char	*format;	/* importer name; NULL: best bid */
	const struct hwtr_import_raw_opts *raw;	/* "raw" */
	/* "perf": where images are looked up, each may be NULL. */
	const char	*buildid_dir;	/* perf's build-id cache (~/.debug) */
	const char	*symfs;		/* root for the recorded paths */
	const char	*perf_archive;	/* a `perf archive` tarball */
	const char	*kcore;		/* a kcore copy (perf record --kcore) */
	const char	*vmlinux;	/* the kernel's ELF image */
	const struct hwtr_aw_opts *aw_opts;	/* may be NULL */
	/*
	 * "lldb", "coresight": the files a bundle or a snapshot names may
	 * lie outside its directory (absolute names, "..", links leaving
	 * it).  By default they are refused.
	 */
	int		allow_outside;
};

int hwtr_import(const char *path, const struct hwtr_import_opts *opts,
    const char *out, char *errbuf, size_t errlen);

/*
 * The name of the importer bidding highest on @path (static), or NULL
 * when none recognizes it.
 */
const char *hwtr_import_guess(const char *path);

/* Importer names in table order, NULL-terminated (static). */
const char *const *hwtr_import_formats(void);

/*
 * An import as a command line states it (format/import_req.c): ptxed's
 * raw files, the options of every importer and at most one operand.
 * hwtr_import_req_file() adds the FILE[:SUFFIX] of --pt, --raw, --elf,
 * --pevent:primary or --pevent:secondary; hwtr_import_req_check() says
 * whether the options make one import; hwtr_import_req_run() runs it
 * (hwtr_import_raw() or hwtr_import()).  The first two return 0,
 * -HWTR_E_INVAL with the reason in @errbuf (the command line is wrong),
 * or -HWTR_E_NOMEM.  hwtr_import_req_free() frees the files.
 */
enum hwtr_import_list {
	HWTR_IMPORT_PT,			/* --pt FILE[:FROM[-TO]] */
	HWTR_IMPORT_RAW,		/* --raw FILE[:FROM[-TO]]:VADDR */
	HWTR_IMPORT_ELF,		/* --elf FILE[:BASE] */
	HWTR_IMPORT_PEV_PRIMARY,	/* --pevent:primary FILE[:FROM[-TO]] */
	HWTR_IMPORT_PEV_SECONDARY	/* --pevent:secondary, same */
};

struct hwtr_import_files {
	struct hwtr_import_file *v;
	size_t		n;
};

struct hwtr_import_req {
	struct hwtr_import_raw_opts raw;	/* all but the file lists */
	struct hwtr_import_opts opts;		/* all but format, aw_opts */
	struct hwtr_aw_opts aw;
	struct hwtr_import_files pt, rawf, elf, pev;
	size_t		npevopt;	/* --pevent:OPTION values given */
	const char *const *ops;		/* the operands */
	size_t		nops;
	int		lldb;		/* the operand is an LLDB bundle */
};

int hwtr_import_req_file(struct hwtr_import_req *r,
    enum hwtr_import_list which, const char *arg, char *errbuf,
    size_t errlen);
int hwtr_import_req_check(const struct hwtr_import_req *r, char *errbuf,
    size_t errlen);
int hwtr_import_req_run(struct hwtr_import_req *r, const char *out,
    char *errbuf, size_t errlen);
void hwtr_import_req_free(struct hwtr_import_req *r);

/* "F/M[/S]", "auto" or "none" (--cpu) into @o; 0 or -HWTR_E_INVAL. */
int hwtr_import_parse_cpu(const char *s, struct hwtr_import_raw_opts *o);

/* ===================================================================== */
/* 5. Archive reader                                                      */
/* ===================================================================== */

/*
 * How to use this:
 *   1) hwtr_ar_open(&ar, path, NULL): validates the container and reads the
 *      manifest, stream and image descriptions and all sideband.  A
 *      truncated archive opens; hwtr_ar_status() says where it was cut.
 *   2) hwtr_ar_meta(), hwtr_ar_nstreams()/hwtr_ar_stream(),
 *      hwtr_ar_nimages()/hwtr_ar_image(), hwtr_ar_nsideband()/
 *      hwtr_ar_sideband_rec() describe it.
 *   3) hwtr_ar_read_chunk() / hwtr_ar_read_image() read one member without
 *      decompressing anything before it; they may be called from several
 *      threads at once.
 *   4) hwtr_ar_close().
 * Nothing read is trusted: names, sizes, counts and offsets are validated
 * and limited (struct hwtr_ar_opts).
 */
struct hwtr_ar;

struct hwtr_ar_opts {
	uint64_t	max_member_size;	/* 0: default 4 GiB */
	uint64_t	max_members;		/* 0: default 1,000,000 */
	uint64_t	max_sideband;		/* records; 0: default 1M */
	uint64_t	max_ratio;		/* decompressed/compressed; 0: default 4096 */
	/* Content of frames above max_ratio, in all; 0: default 1 GiB. */
	uint64_t	ratio_allowance;
	/* Non-zero (set by a signal handler): long reads stop, -HWTR_E_INTR. */
	const volatile int *cancel;
};

enum hwtr_member_kind {
	HWTR_M_MANIFEST = 1,
	HWTR_M_STREAM_DESC,
	HWTR_M_CHUNK,
	HWTR_M_IMAGE_DESC,
	HWTR_M_IMAGE,
	HWTR_M_SIDEBAND,
	HWTR_M_AUX,
	HWTR_M_END,
	HWTR_M_JIT,		/* jit/perf-PID.map, jit/jit-PID.dump */
	HWTR_M_CODE,		/* jit/code-PID.bin: code regions */
	HWTR_M_UNKNOWN
};

struct hwtr_member_info {
	const char	*name;
	enum hwtr_member_kind kind;
	uint64_t	offset;		/* of its zstd frame in the file */
	uint64_t	csize;		/* compressed bytes */
	uint64_t	usize;		/* content bytes */
};

struct hwtr_chunk_info {
	size_t		member;		/* index for hwtr_ar_member() */
	uint64_t	offset;		/* byte offset in the stream */
	uint64_t	len;
};

struct hwtr_ar_status {
	int		complete;	/* the final member was found */
	uint64_t	file_size;
	uint64_t	valid_end;	/* bytes up to the last whole member */
	const char	*why;		/* why it is incomplete, or NULL */
	uint32_t	version_major;
	uint32_t	version_minor;
};

/*
 * Open @path.  *arp is set in all cases but out of memory, so that
 * hwtr_ar_errmsg() can say what was wrong; close it with hwtr_ar_close().
 */
int hwtr_ar_open(struct hwtr_ar **arp, const char *path,
    const struct hwtr_ar_opts *opts);
int hwtr_ar_close(struct hwtr_ar *ar);

/* Details of the last failure, naming member and offset. */
const char *hwtr_ar_errmsg(const struct hwtr_ar *ar);

/*
 * The identity of the archive file @path, for caches built from it: the
 * text "sha256:" and the SHA-256 of the file's size and of its bytes from
 * end.json (the table of contents, which holds every member's size and
 * position and the digests of all but the chunks, whose frames carry their
 * own checksum) to the end; of the whole file when it has no valid
 * trailer.  @id receives HWTR_AR_ID_LEN bytes.  0 or -HWTR_E_* (@err says
 * why).
 */
#define HWTR_AR_ID_LEN	72
int hwtr_ar_identity(const char *path, char *id, char *err, size_t errlen);

const struct hwtr_ar_status *hwtr_ar_status(const struct hwtr_ar *ar);
const struct hwtr_capture_meta *hwtr_ar_meta(const struct hwtr_ar *ar);
/* NULL when the archive is truncated. */
const struct hwtr_capture_end *hwtr_ar_end(const struct hwtr_ar *ar);

size_t hwtr_ar_nmembers(const struct hwtr_ar *ar);
const struct hwtr_member_info *hwtr_ar_member(const struct hwtr_ar *ar,
    size_t i);
/*
 * Members read whole into memory are at most HWTR_AR_MEM_MAX bytes (-HWTR_E_LIMIT
 * otherwise): hwtr_ar_extract_image() writes a bigger image out in
 * bounded memory.  A stream chunk is at most HWTR_CHUNK_MAX bytes (the
 * writer splits bigger ones; the reader refuses them when it opens).
 */
#define HWTR_AR_MEM_MAX		(256ULL << 20)
#define HWTR_CHUNK_MAX		(16u << 20)

/* Read member @i whole into a malloc'd buffer the caller frees. */
int hwtr_ar_read_member(struct hwtr_ar *ar, size_t i, void **bufp,
    size_t *lenp);
/* Look a member up by name; -HWTR_E_NOENT when absent. */
int hwtr_ar_find_member(const struct hwtr_ar *ar, const char *name,
    size_t *ip);

size_t hwtr_ar_nstreams(const struct hwtr_ar *ar);
const struct hwtr_stream_desc *hwtr_ar_stream(const struct hwtr_ar *ar,
    size_t i);
size_t hwtr_ar_nchunks(const struct hwtr_ar *ar, size_t stream);
const struct hwtr_chunk_info *hwtr_ar_chunk(const struct hwtr_ar *ar,
    size_t stream, size_t chunk);
/*
 * Read chunk @chunk of stream @stream (malloc'd; caller frees).  Only its
 * frame is decompressed; its checksum is checked (-HWTR_E_CHECKSUM or
 * -HWTR_E_FORMAT with hwtr_ar_errmsg() naming the member when damaged).
 */
int hwtr_ar_read_chunk(struct hwtr_ar *ar, size_t stream, size_t chunk,
    void **bufp, size_t *lenp);

size_t hwtr_ar_nimages(const struct hwtr_ar *ar);
const struct hwtr_image_desc *hwtr_ar_image(const struct hwtr_ar *ar,
    size_t i);
/* Index of the image with @key, or -HWTR_E_NOENT. */
int hwtr_ar_find_image(const struct hwtr_ar *ar, const char *key);
/*
 * Both check the image's SHA-256 against its description
 * (-HWTR_E_CHECKSUM).  hwtr_ar_extract_image() writes the image to @fd
 * (at its offset) in bounded memory, whatever its size.
 */
int hwtr_ar_read_image(struct hwtr_ar *ar, size_t i, void **bufp,
    size_t *lenp);
int hwtr_ar_extract_image(struct hwtr_ar *ar, size_t i, int fd);

size_t hwtr_ar_nsideband(const struct hwtr_ar *ar);
const struct hwtr_sb_rec *hwtr_ar_sideband_rec(const struct hwtr_ar *ar,
    size_t i);

/* Things skipped while reading (unknown members, types, fields). */
size_t hwtr_ar_nwarnings(const struct hwtr_ar *ar);
const char *hwtr_ar_warning(const struct hwtr_ar *ar, size_t i);

/*
 * Decompress every member, check every checksum and cross-reference.
 * Returns 0, or a negative error with hwtr_ar_errmsg() naming the member.
 * It checks the members that are there: on a truncated archive it returns 0
 * when everything before the cut is sound, and whether the archive is
 * complete is hwtr_ar_status()->complete (hwtrace verify checks both).
 */
int hwtr_ar_verify(struct hwtr_ar *ar);

/* ===================================================================== */
/* 6. Capture sessions                                                    */
/* ===================================================================== */

/*
 * A capture session (capture/) drives one trace source (kernel/).
 *
 * How to use this (a front end):
 *   1) fill struct hwtr_cap_config (hwtr_cap_config_init() sets defaults);
 *   2) hwtr_cap_run(&cfg, &res): runs the capture to its end and writes the
 *      archive; res says how the traced command ended and what was lost;
 *   3) map res to an exit status (hwtr_cap_exit_status()).
 * The trace sources, the PT encoder and the sideband and image collectors
 * the session drives are internal (kernel/hwtr_kernel.h, capture/hwtr_img.h).
 */

/* 1 when a trace source named @name ("step", "valgrind", "perf") exists. */
int hwtr_cap_source_known(const char *name);

/* hwtr_cap_config.debug_info */
#define HWTR_CAP_DEBUG_ALL	0
#define HWTR_CAP_DEBUG_OWN	1
#define HWTR_CAP_DEBUG_NONE	2

enum hwtr_cap_mode {
	HWTR_CAP_STREAM = 0,		/* everything, in chunks */
	HWTR_CAP_RING,			/* the last @buffer_size bytes */
	HWTR_CAP_STOP			/* stop a thread's trace when full */
};

struct hwtr_cap_config {
	const char	*source;	/* "step" */
	const char	*output;	/* archive path */
	char *const	*argv;		/* command, or NULL with @pid */
	int32_t		pid;
	enum hwtr_cap_mode mode;
	uint64_t	buffer_size;	/* per thread; 0: 4 MiB (ring, stop) */
	uint64_t	chunk_size;	/* stream mode chunks; 0: 1 MiB */
	uint32_t	psb_period;	/* 0: 4096 */
	const char	*trigger;	/* symbol, or NULL */
	int		no_follow;
	int		no_ret_compression;
	int		ground_truth;
	int		keep_on_failure;
	/* Replace an existing @output; 0: refuse (-HWTR_E_EXISTS) at once. */
	int		force;
	int		no_debug_info;	/* store no separate debug files */
	/*
	 * Which separate debug files are stored: HWTR_CAP_DEBUG_ALL
	 * (every image's, so that the archive decodes fully elsewhere),
	 * HWTR_CAP_DEBUG_OWN (the images outside the system's directories
	 * only: not the C library's or the loader's) or HWTR_CAP_DEBUG_NONE
	 * (as @no_debug_info).
	 */
	int		debug_info;
	int		redact_args;	/* record argv[0] only, not the
					   arguments */
	/*
	 * Written by signal handlers, polled by the session: *@stop non-zero
	 * ends the capture (launched commands killed, attached processes
	 * detached); every change of *@snapshot (a counter the SIGUSR2
	 * handler increments) writes a ring snapshot, and when attached
	 * (@pid) also ends the capture.  Either may be NULL.
	 */
	const volatile int *stop;
	const volatile int *snapshot;
	struct hwtr_log	log;
	/* perf source: address filters, CPUs to trace (NULL, -a: all). */
	const char	*filter;
	const char	*cpus;
	int		all_cpus;
};

struct hwtr_cap_result {
	enum hwtr_exit_kind exit_kind;	/* of the first traced process */
	int		exit_value;
	int		kept;		/* the archive was written and kept */
	uint64_t	trace_bytes;	/* PT bytes written */
	uint64_t	lost_bytes;
	uint64_t	lost_records;	/* sideband records lost */
	uint64_t	instructions;	/* reported by the source */
	uint32_t	nthreads;
	uint32_t	nprocs;
	/*
	 * The errno of a command that could not be started (ENOENT: not
	 * found; EACCES, ENOEXEC...: not executable), 0 otherwise; the CLI
	 * exits 127 or 126 as a shell does.
	 */
	int		exec_errno;
	char		errmsg[HWTR_ERRMSG_MAX];	/* why it failed, when it did */
};

void hwtr_cap_config_init(struct hwtr_cap_config *cfg);

/*
 * Run a capture to its end.  Returns 0 when the archive was written (or
 * deliberately not kept: --keep-on-failure and success), or -HWTR_E_*
 * with @res->errmsg saying why.  @res is filled in all cases.
 */
int hwtr_cap_run(const struct hwtr_cap_config *cfg,
    struct hwtr_cap_result *res);

/* The exit status hwtrace should return: the command's, 128+signal. */
int hwtr_cap_exit_status(const struct hwtr_cap_result *res);

/* ===================================================================== */
/* 7. Indexer                                                             */
/* ===================================================================== */

/*
 * How to use this:
 *   1) hwtr_ix_new(&ix, &opts): options may say how many threads decode
 *      (jobs), where log messages and progress go, and a flag to cancel.
 *   2) hwtr_ix_run(ix, "trace.hwtrace", "trace.db"): decodes every stream
 *      into an SQLite database written as "trace.db.partial" and renamed
 *      when complete; a failed run leaves nothing under the final name.
 *      Decode errors are data (table events), not failures: the run
 *      succeeds and hwtr_ix_nproblems()/hwtr_ix_problem() list what could
 *      not be decoded, one line per stream or image.
 *   3) hwtr_ix_stats() for the figures, hwtr_ix_free().
 * The schema is hwtrace-db(5).  build/hwtrace_sqlite.so adds the
 * exec_order and exec_insns table-valued functions and the modules of the
 * calls and lines virtual tables to a plain sqlite3 connection that reads
 * such a database.
 */
#define HWTR_DB_SCHEMA_VERSION	8
/*
 * Blocks per exec_chunks row at most (hwtrace-db(5) EXECUTION ORDER):
 * readers look for the chunk holding a block no further back than this.
 * Schema version 6 made it 65536 (5: 4096).
 */
#define HWTR_DB_CHUNK_BLOCKS	65536
/*
 * Inlined instances nest at most this deep in the inlines table
 * (hwtrace-db(5)): index records no deeper one (hostile or broken DWARF),
 * and the readers follow a chain of up to this many.
 */
#define HWTR_DB_INLINE_DEPTH	64
#define HWTR_DB_APPLICATION_ID	0x68777472	/* "hwtr" */

struct hwtr_ix;

struct hwtr_ix_opts {
	int		jobs;		/* decoding threads; 0: number of cores */
	struct hwtr_log	log;
	/* Called from the calling thread now and then; may be NULL. */
	void		(*progress)(void *arg, uint64_t done, uint64_t total);
	void		*progress_arg;
	/* Set to non-zero (from a signal handler) to stop: -HWTR_E_INTR. */
	volatile int	*cancel;
	/*
	 * 0: the whole trace.  Otherwise decode only the end of each Intel
	 * PT stream, from the first PSB in its last @tail bytes (or the
	 * last PSB before them): a partial database, marked so in meta
	 * (partial, tail_from; hwtrace-db(5)), for the questions about a
	 * trace's last moments (hwtrace-query(1): lazy verbs).
	 */
	uint64_t	tail;
	/*
	 * Read nothing from this machine: images, debug files and DWARF
	 * come from the archive only (libdw would otherwise open split
	 * units' .dwo files by their paths here); hwtrace verify --decode.
	 */
	int		archive_only;
	/*
	 * The Intel PT segment decoder by name (hwtrace-index(1)
	 * --decoder): "libipt" (NULL: the default) or "fast", the indexer's
	 * own, which hands a segment it cannot decode exactly as libipt
	 * does to libipt (fallback_* below).
	 */
	const char	*decoder;
};

struct hwtr_ix_stats {
	uint64_t	streams;
	uint64_t	threads;
	uint64_t	trace_bytes;	/* all streams */
	uint64_t	undecoded_bytes;/* skipped after errors */
	uint64_t	blocks;		/* executed */
	uint64_t	insns;
	uint64_t	static_blocks;
	uint64_t	errors;		/* decode errors */
	uint64_t	calls;
	uint64_t	exec_bytes;	/* execution order BLOB bytes */
	uint64_t	segments;	/* pieces of streams decoded apart */
	uint64_t	decode_cpu_ns;	/* CPU time of the decoding threads */
	uint64_t	write_cpu_ns;	/* of the thread that stitches and writes */
	uint64_t	index_ns;	/* wall time of the final index build */
	/*
	 * --decoder fast: the segments (and their bytes) decoded again by
	 * libipt, because the trace holds packets the fast decoder does not
	 * decode (fallback_unsupported) or has a decode error, which libipt
	 * words (fallback_errors); fallback_why: the last reason given.
	 */
	uint64_t	fallback_segments;
	uint64_t	fallback_bytes;
	uint64_t	fallback_unsupported;
	uint64_t	fallback_errors;
	const char	*fallback_why;	/* static; NULL: none */
};

int hwtr_ix_new(struct hwtr_ix **ixp, const struct hwtr_ix_opts *opts);
void hwtr_ix_free(struct hwtr_ix *ix);

/* Index archive @archive into database @db (replaced if it exists). */
int hwtr_ix_run(struct hwtr_ix *ix, const char *archive, const char *db);

/* Details of the last failure; valid until the next call. */
const char *hwtr_ix_errmsg(const struct hwtr_ix *ix);
const struct hwtr_ix_stats *hwtr_ix_stats(const struct hwtr_ix *ix);

/* What could not be decoded in the last run: "stream 'tid 42': ...". */
size_t hwtr_ix_nproblems(const struct hwtr_ix *ix);
const char *hwtr_ix_problem(const struct hwtr_ix *ix, size_t i);

/*
 * Whether @archive decodes elsewhere (hwtrace verify --decode): index it
 * into @db with nothing from this machine (@ix's archive_only is set),
 * then list in *@mp (*@np entries; hwtr_ix_miss_free()) what a machine
 * without this one's files would miss: "image" (code the trace ran whose
 * image the archive lacks), "debug" (debug info left out that this
 * machine has), "note" (what indexing could not do with the archive
 * alone).  @differs: decoding elsewhere gives less than here.
 */
struct hwtr_ix_miss {
	const char	*kind;
	char		*path;		/* the image's, "?" when unknown */
	char		*detail;
	int		differs;
};
int hwtr_ix_portable(struct hwtr_ix *ix, const char *archive, const char *db,
    struct hwtr_ix_miss **mp, size_t *np);
void hwtr_ix_miss_free(struct hwtr_ix_miss *m, size_t n);

/* ===================================================================== */
/* 8. Query                                                               */
/* ===================================================================== */

/*
 * How to use this:
 *   1) hwtr_q_open(&q, path, &opts, errbuf, errlen): a database is opened
 *      read-only and checked (application_id, schema version: a newer one
 *      is refused with HWTR_E_VERSION); an archive is first indexed with
 *      hwtr_ix_run() into opts.cache, or "<archive>.db" beside it, which
 *      later opens reuse while it is newer than the archive.
 *   2) hwtr_q_req_init(&req, HWTR_Q_LAST), set the fields the verb uses and
 *      hwtr_q_run(q, &req, &res): the whole answer is computed into @res
 *      before anything is written anywhere, so a failure never leaves a
 *      partial output.  Files a verb writes (coverage --lcov, export) are
 *      written under a temporary name and renamed when complete.
 *   3) hwtr_q_res_format() renders the answer as an aligned table, CSV, TSV
 *      or JSON into one buffer; hwtr_q_res_free().
 *   2+3) Or hwtr_q_stream(q, &req, fmt, width, sink, arg): the rendered
 *      answer is handed to @sink as it is made, in blocks of rows, so that
 *      the first rows of a long answer (calls of a whole thread) come at
 *      once and memory stays bounded.  An answer of up to 1024 rows is
 *      still handed over whole at the end (nothing on failure); a longer
 *      one may fail after blocks were written: the caller must report it.
 *   4) hwtr_q_close().
 * Column names are stable and listed in hwtrace-query(1).  Addresses are
 * text ("0x401000"), functions "name+0x1a", places "file.c:42".
 */
struct hwtr_q;
struct hwtr_q_res;

struct hwtr_q_opts {
	const char	*cache;		/* database for an archive; NULL: "<archive>.db" */
	int		jobs;		/* indexing threads; 0: the indexer's default */
	struct hwtr_log	log;		/* "indexing 'x' into 'y'" and the indexer's messages */
	/* Set to non-zero (from a signal handler) to stop indexing. */
	volatile int	*cancel;
	/*
	 * The verb may be lazy (last, bt without --at): an archive never
	 * indexed is decoded only at the end of each thread, into a partial
	 * cache "<cache>.tail" kept for the next question; a verb that
	 * needs the whole history then indexes it (hwtr_q_run()) and the
	 * full cache replaces the partial one.
	 */
	int		lazy;
	/* Indexing's progress, as hwtr_ix_opts.progress; may be NULL. */
	void		(*progress)(void *arg, uint64_t done, uint64_t total);
	void		*progress_arg;
};

enum hwtr_q_verb {
	HWTR_Q_SUMMARY = 0,
	HWTR_Q_THREADS,
	HWTR_Q_LAST,
	HWTR_Q_CALLS,
	HWTR_Q_TREE,
	HWTR_Q_FUNC,
	HWTR_Q_COVERAGE,
	HWTR_Q_HOT,
	HWTR_Q_BRANCHES,
	HWTR_Q_TIMELINE,
	HWTR_Q_INSNS,
	HWTR_Q_SQL,
	HWTR_Q_EXPORT,
	HWTR_Q_BT,
	HWTR_Q_ANNOTATE
};

/* What a verb is asked; hwtr_q_req_init() sets every field to "not given". */
struct hwtr_q_req {
	enum hwtr_q_verb verb;
	int64_t		thread;		/* threads.id; -1: every thread */
	int64_t		n;		/* last -n, hot -n; -1: default */
	int		insns;		/* last --insns */
	int64_t		depth;		/* calls, tree --depth; -1: any */
	const char	*pattern;	/* func: a name or a glob (*, ?, [..]) */
	const char	*image;		/* coverage --image: id, path or file name */
	const char	*lcov;		/* coverage --lcov: tracefile to write */
	const char	*by;		/* hot --by: "func", "block", "edge" */
	const char	*from_sym;	/* branches --from */
	const char	*to_sym;	/* branches --to */
	const char	*kind;		/* branches --kind (branches.kind) */
	int64_t		t_from, t_to;	/* timeline, export: ns from the trace start; -1 */
	int64_t		from, count;	/* insns --from, --count; -1 */
	const char	*sql;		/* sql: statement(s) */
	/*
	 * Every verb: stop when it has used this much CPU time (ms; 0: no
	 * limit; -1: the default, HWTR_Q_SQL_TIMEOUT_MS for sql
	 * and for the others HWTR_Q_VERB_TIMEOUT_MS plus one second per MiB
	 * of database).  sql: refuse a string or blob longer than
	 * sql_max_length (bytes; default HWTR_Q_SQL_MAX_LENGTH).
	 */
	int64_t		sql_timeout_ms;
	int64_t		sql_max_length;
	const char	*perfetto;	/* export --perfetto: file to write */
	int64_t		min_dur;	/* export --min-dur, ns; -1 */
	int64_t		max_depth;	/* export --max-depth; -1 */
	int64_t		at;		/* bt --at: an instruction number; -1 */
	int64_t		to;		/* --to: an instruction number; -1 */
	const char	*folded;	/* export --folded: file to write */
	const char	*weight;	/* export --weight: "insns" or "time" */
	/*
	 * --thread tid:N: the thread whose tid is N (threads.tid), looked
	 * up by hwtr_q_run() in place of @thread; -1: none.
	 */
	int64_t		tid;
};

#define HWTR_Q_SQL_TIMEOUT_MS	10000
#define HWTR_Q_VERB_TIMEOUT_MS	60000
#define HWTR_Q_SQL_MAX_LENGTH	(64 << 20)

int hwtr_q_open(struct hwtr_q **qp, const char *path,
    const struct hwtr_q_opts *opts, char *errbuf, size_t errlen);
/* Frees @q; NULL is accepted. */
int hwtr_q_close(struct hwtr_q *q);
/* Details of the last failure ("no function matches 'foo'; did you mean..."). */
const char *hwtr_q_errmsg(const struct hwtr_q *q);

void hwtr_q_req_init(struct hwtr_q_req *req, enum hwtr_q_verb verb);
/*
 * Whether @req is a request hwtr_q_run() can answer as far as its fields
 * alone tell (query/q_req.c): the verb's --by and --weight words, a range
 * in one unit that ends after it starts, export's one output with its own
 * options.  0, or -HWTR_E_INVAL with the reason in @errbuf, which names the
 * options as hwtrace-query(1) does.
 */
int hwtr_q_req_check(const struct hwtr_q_req *req, char *errbuf,
    size_t errlen);
/*
 * Answer @req.  On success *resp is a result the caller frees.  Failures:
 * -HWTR_E_NOENT (unknown symbol, thread or image: the message suggests close
 * names), -HWTR_E_INVAL (a bad argument), -HWTR_E_DB (SQLite's message),
 * -HWTR_E_PERM (a statement that would write), -HWTR_E_IO.
 */
int hwtr_q_run(struct hwtr_q *q, const struct hwtr_q_req *req,
    struct hwtr_q_res **resp);

enum hwtr_q_type {
	HWTR_Q_NULL = 0,
	HWTR_Q_INT,
	HWTR_Q_REAL,
	HWTR_Q_TEXT
};

size_t hwtr_q_res_nrows(const struct hwtr_q_res *res);
/* A cell as text (NULL for SQL NULL); borrowed from @res. */
const char *hwtr_q_res_cell(const struct hwtr_q_res *res, size_t row,
    size_t col, enum hwtr_q_type *typep);
void hwtr_q_res_free(struct hwtr_q_res *res);
/*
 * What the trace lost where the answer looked (a ring's start, an
 * overflow, a missing or unreadable chunk, a decode error, a truncated
 * archive): a note for people ("counts are lower bounds: the trace lost
 * data in 2 places (...)"), or NULL when nothing was lost there.  A table
 * shows it as its last line and JSON rows say "gaps" (and "lower_bound");
 * a caller writing CSV or TSV says it on stderr.  hwtr_q_lost() is that
 * of @q's last answer (after hwtr_q_stream()); both borrowed.
 */
const char *hwtr_q_res_lost(const struct hwtr_q_res *res);
const char *hwtr_q_lost(const struct hwtr_q *q);

enum hwtr_q_format {
	HWTR_Q_FMT_TABLE = 0,		/* aligned columns, header line */
	HWTR_Q_FMT_CSV,			/* RFC 4180 quoting, "\n" line ends */
	HWTR_Q_FMT_TSV,			/* tab, newline, backslash escaped */
	HWTR_Q_FMT_JSON			/* an array of objects, one per row */
};

/* "table", "csv", "tsv", "json" to a format; -HWTR_E_INVAL otherwise. */
int hwtr_q_format_parse(const char *name, enum hwtr_q_format *fmtp);
/*
 * Render @res into a malloc'd buffer (*bufp, *lenp; caller frees).  @width
 * > 0 shortens long text cells of a table so rows fit that many columns
 * (for a terminal); 0 never shortens.
 */
int hwtr_q_res_format(const struct hwtr_q_res *res, enum hwtr_q_format fmt,
    int width, char **bufp, size_t *lenp);

/*
 * hwtrace info: describe archive @ar (hwtr_ar_open() of @path, the name
 * the description gives) into a malloc'd buffer (*bufp, *lenp; caller
 * frees): HWTR_Q_FMT_TABLE as "key: value" lines for people, archive
 * content escaped (hwtr_esc_dup()); HWTR_Q_FMT_JSON as one JSON object,
 * its keys documented in hwtrace-info(1).  A truncated archive is
 * described as far as it goes.  -HWTR_E_INVAL for another format.
 */
int hwtr_q_info(struct hwtr_ar *ar, const char *path, enum hwtr_q_format fmt,
    char **bufp, size_t *lenp);

/*
 * Answer @req and render it as hwtr_q_res_format() would, handing the text
 * to @sink(@arg, buf, len) block by block (calls, func, last, insns,
 * timeline and tree stream; other verbs hand over their answer at the end).
 * A table longer than one block is aligned on the widths seen so far (and
 * the bounds some verbs know, such as the largest call id): a column
 * widens where a later block needs it.  @sink returns 0, or < 0 to
 * stop (a write failed; the reader went away): hwtr_q_stream then stops
 * reading and returns -HWTR_E_IO.  Other failures as hwtr_q_run.
 */
int hwtr_q_stream(struct hwtr_q *q, const struct hwtr_q_req *req,
    enum hwtr_q_format fmt, int width,
    int (*sink)(void *arg, const char *buf, size_t len), void *arg);

/*
 * hwtrace report: one self-contained HTML page of a run (no network: its
 * script and style are inlined) for a person to read before any command:
 * what ran and what the trace lost, the backtrace and the last blocks at
 * the end with their source lines, a flame graph and an icicle of the
 * whole run, hot functions and lines, each thread's call timeline and the
 * coverage of the program's own files.  Whatever the trace's length the
 * page stays of bounded size: the flame graph is merged by call path and
 * pruned, timelines are bucketed into @columns, tables cut at @top rows.
 * Written to @path through a temporary file and a rename; the page's size
 * in *@sizep (may be NULL).  Fails as hwtr_q_run; a section whose verb
 * fails (no calls, a time limit) says so on the page instead.
 */
struct hwtr_q_report_opts {
	int64_t		columns;	/* timeline columns per thread; 0: 600 */
	int64_t		depth;		/* timeline call levels; 0: 8 */
	int64_t		threads;	/* timelines drawn; 0: the 16 longest */
	int64_t		top;		/* rows of the tables; 0: 40 */
	int64_t		max_nodes;	/* flame graph frames; 0: 20000 */
	int64_t		timeout_ms;	/* each section's CPU time limit;
					   0: hwtr_q_req's default; < 0:
					   none */
};
int hwtr_q_report(struct hwtr_q *q, const struct hwtr_q_report_opts *opts,
    const char *path, size_t *sizep);

/*
 * hwtrace diff: compare two executions (two databases opened with
 * hwtr_q_open).  The threads are paired in id order and aligned by call
 * tree and loop iteration; the answer is a row per divergence region, with
 * the columns region, group, thread, insns, branch, line, next_a, next_b,
 * rejoin, rejoin_line, only_a, only_b, lines_a, lines_b, insns_a, insns_b
 * (hwtrace-diff(1)).  With @first, the answer of before: the columns kind,
 * run, thread, seq, what, line, count: a row per function ("function"),
 * source line ("line") and branch ("branch") that only one run ("A" or
 * "B") executed, then per pair of threads "same" or "split" (the last block
 * both ran) and "next" rows (the first @next blocks of each run from where
 * they differ).  Errors are reported on @a (hwtr_q_errmsg(a)).
 */
struct hwtr_q_diff_opts {
	int		first;		/* the first-divergence answer */
	int64_t		next;		/* "next" rows per run; <= 0: 4 */
	/* Functions and lines named per side of a region: 0 6, < 0 all. */
	int64_t		list;
	/*
	 * The time limit (ms) as hwtr_q_req's sql_timeout_ms for the verbs,
	 * but 0 here is the default and -1 no limit (a zeroed struct is the
	 * defaults).
	 */
	int64_t		timeout_ms;
};

int hwtr_q_diff(struct hwtr_q *a, struct hwtr_q *b,
    const struct hwtr_q_diff_opts *opts, struct hwtr_q_res **resp);

/* ===================================================================== */
/* 9. PostgreSQL: export and fleet questions (hwtr_pg_*)                  */
/* ===================================================================== */

/*
 * How to use this:
 *   1) hwtr_pg_open(&pg, conninfo, &log, errbuf, errlen): @conninfo is a
 *      libpq connection string, a URL ("postgresql://user@host/db") or
 *      key=value pairs; empty fields come from the PG* environment variables
 *      and the password from ~/.pgpass, as libpq does.  No message of this
 *      section ever contains the password.
 *   2) Export: hwtr_pg_export_begin(pg) opens one transaction (creating the
 *      schema "hwtrace" of hwtrace-db(5) if it is missing);
 *      hwtr_pg_export_add(pg, path, &opts, &run) loads one history (a
 *      database, or an archive, indexed first as hwtr_q_open() does);
 *      hwtr_pg_export_commit(pg) makes them all visible at once.  Any
 *      failure (and hwtr_pg_export_abort()) rolls the whole export back.  A
 *      run is known by its archive's SHA-256: adding one that is already
 *      there changes nothing (run.existed is set).
 *   3) Fleet questions: hwtr_pg_fleet(pg, &req, &res) answers over every
 *      run exported, into a struct hwtr_q_res rendered with
 *      hwtr_q_res_format() like any query answer.
 *   4) hwtr_pg_close().
 */
struct hwtr_pg;

/* A label of a run: "key=value"; any bytes but NUL in either. */
struct hwtr_pg_label {
	const char	*key;
	const char	*value;
};

struct hwtr_pg_export_opts {
	const struct hwtr_pg_label *labels;	/* given to the new run */
	size_t		nlabels;
	struct hwtr_q_opts qopts;	/* how an archive is indexed */
};

/* What one hwtr_pg_export_add() did. */
struct hwtr_pg_run {
	int64_t		id;		/* runs.id */
	int		existed;	/* already exported: nothing changed */
	char		sha256[65];	/* of the archive, hex */
	uint64_t	blocks, new_blocks;	/* the run's; new to the database */
	uint64_t	calls, branches;
	uint64_t	new_images;	/* images whose static data was loaded */
};

enum hwtr_pg_verb {
	HWTR_PG_RUNS = 0,
	HWTR_PG_FUNC,
	HWTR_PG_COVERAGE,
	HWTR_PG_DIFF
};

struct hwtr_pg_req {
	enum hwtr_pg_verb verb;
	const struct hwtr_pg_label *labels;	/* runs having all of them */
	size_t		nlabels;
	const char	*pattern;	/* func: a name or a glob */
	const char	*lcov;		/* coverage: tracefile to write */
	struct hwtr_pg_label pass, fail;	/* diff */
};

int hwtr_pg_open(struct hwtr_pg **pgp, const char *conninfo,
    const struct hwtr_log *log, char *errbuf, size_t errlen);
/* Rolls back an export still open; NULL is accepted. */
int hwtr_pg_close(struct hwtr_pg *pg);
/* Details of the last failure; never contains the password. */
const char *hwtr_pg_errmsg(const struct hwtr_pg *pg);
/* "user@host:port/dbname" of the connection, for messages. */
const char *hwtr_pg_name(const struct hwtr_pg *pg);

int hwtr_pg_export_begin(struct hwtr_pg *pg);
int hwtr_pg_export_add(struct hwtr_pg *pg, const char *path,
    const struct hwtr_pg_export_opts *opts, struct hwtr_pg_run *run);
int hwtr_pg_export_commit(struct hwtr_pg *pg);
void hwtr_pg_export_abort(struct hwtr_pg *pg);

/*
 * Answer @req; *resp is freed with hwtr_q_res_free().  -HWTR_E_NOENT when
 * no run or function matches (the message says what), -HWTR_E_DB with
 * the server's message, -HWTR_E_IO when the lcov file cannot be written.
 */
int hwtr_pg_fleet(struct hwtr_pg *pg, const struct hwtr_pg_req *req,
    struct hwtr_q_res **resp);

#ifdef __cplusplus
}
#endif

#endif /* !HWTRACE_H */
