/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * FreeBSD's hwt(4) user interface, as the hwt source (kernel/hwt.c) uses
 * it, declared here so that the source compiles on every system.
 *
 * It follows FreeBSD 15.0 (main): sys/sys/hwt.h and sys/sys/hwt_record.h
 * at commit d4f758a9dcc654d631fb1363aa0b9571c2e78dc9, and the Intel PT
 * backend's configuration, struct pt_cpu_config of sys/amd64/pt/pt.h at
 * commit bf52e028163aa96f5ffd967be2dddf5f5551cc59.  The names are the
 * project's (hwt_ belongs to FreeBSD); each field says which one it
 * mirrors.  The layouts are checked below for amd64 and arm64, the two
 * architectures with hwt(4) backends (LP64: size_t, pointers, pid_t,
 * vm_offset_t and register_t as the kernel has them), and on FreeBSD
 * against <sys/hwt.h> itself when the system has it.
 */

#ifndef HWTR_HWT_ABI_H
#define HWTR_HWT_ABI_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * FreeBSD's ioctl encoding (sys/sys/ioccom.h): direction in the top bits
 * (IOC_IN 0x80000000 for _IOW), the parameter length in bits 16-28
 * (IOCPARM_MASK 0x1fff), the group in bits 8-15, the number in 0-7.
 * Linux's _IOW puts the length in bits 16-29 and the direction in 30-31,
 * so the host's macros cannot be used.
 */
#define HWTR_HWT_IOC_IN		0x80000000UL
#define HWTR_HWT_IOCPARM_MASK	0x1fffUL
#define HWTR_HWT_IOW(g, n, t)	(HWTR_HWT_IOC_IN |			\
	(((unsigned long)sizeof(t) & HWTR_HWT_IOCPARM_MASK) << 16) |	\
	((unsigned long)(g) << 8) | (unsigned long)(n))

#define HWTR_HWT_MAGIC		0x42	/* HWT_MAGIC */
#define HWTR_HWT_MAXPATHLEN	1024	/* MAXPATHLEN, sys/sys/param.h */
#define HWTR_HWT_BACKEND_MAXNAMELEN 256	/* HWT_BACKEND_MAXNAMELEN */
#define HWTR_HWT_MODE_THREAD	1	/* HWT_MODE_THREAD */
#define HWTR_HWT_MODE_CPU	2	/* HWT_MODE_CPU */
#define HWTR_HWT_PAGE		4096	/* ToPA entries and bufsize unit */
#define HWTR_HWT_RECORDS_MAX	1024	/* RECORD_GET takes 1 to 1024 */

/* enum hwt_record_type, sys/sys/hwt_record.h. */
enum hwtr_hwt_record_type {
	HWTR_HWT_RECORD_MMAP,		/* HWT_RECORD_MMAP */
	HWTR_HWT_RECORD_MUNMAP,		/* HWT_RECORD_MUNMAP */
	HWTR_HWT_RECORD_EXECUTABLE,	/* HWT_RECORD_EXECUTABLE */
	HWTR_HWT_RECORD_KERNEL,		/* HWT_RECORD_KERNEL */
	HWTR_HWT_RECORD_THREAD_CREATE,	/* HWT_RECORD_THREAD_CREATE */
	HWTR_HWT_RECORD_THREAD_SET_NAME, /* HWT_RECORD_THREAD_SET_NAME */
	HWTR_HWT_RECORD_BUFFER		/* HWT_RECORD_BUFFER */
};

/* struct hwt_alloc: HWT_IOC_ALLOC on /dev/hwt. */
struct hwtr_hwt_alloc {
	size_t		bufsize;	/* a page multiple */
	int		mode;		/* HWTR_HWT_MODE_* */
	pid_t		pid;		/* thread mode */
	void		*cpu_map;	/* cpuset_t *, CPU mode */
	size_t		cpusetsize;
	const char	*backend_name;	/* "pt", "coresight" */
	int		*ident;		/* out: the context's number */
	int		kqueue_fd;
} __attribute__((aligned(16)));

/* struct hwt_start, struct hwt_stop, struct hwt_wakeup. */
struct hwtr_hwt_start {
	int		reserved;
} __attribute__((aligned(16)));

struct hwtr_hwt_stop {
	int		reserved;
} __attribute__((aligned(16)));

struct hwtr_hwt_wakeup {
	int		reserved;
} __attribute__((aligned(16)));

/* struct hwt_record_user_entry: one record handed out by RECORD_GET. */
struct hwtr_hwt_record_user_entry {
	enum hwtr_hwt_record_type record_type;
	union {
		struct {		/* MMAP, EXECUTABLE, KERNEL */
			char	fullpath[HWTR_HWT_MAXPATHLEN];
			uintptr_t addr;
			uintptr_t baseaddr;
		} img;
		struct {		/* BUFFER */
			int	buf_id;
			int	curpage;
			uintptr_t offset;	/* vm_offset_t */
		} buf;
		int		thread_id;	/* THREAD_* */
	} u;
} __attribute__((aligned(16)));

/* struct hwt_record_get: HWT_IOC_RECORD_GET. */
struct hwtr_hwt_record_get {
	struct hwtr_hwt_record_user_entry *records;
	int		*nentries;	/* in: room (1-1024), out: count */
	int		wait;
} __attribute__((aligned(16)));

/* struct hwt_bufptr_get: HWT_IOC_BUFPTR_GET. */
struct hwtr_hwt_bufptr_get {
	int		*ident;		/* out: the page (curpage) */
	uintptr_t	*offset;	/* out: vm_offset_t, in the page */
	uint64_t	*data;		/* out: backend data */
} __attribute__((aligned(16)));

/* struct hwt_set_config: HWT_IOC_SET_CONFIG. */
struct hwtr_hwt_set_config {
	int		pause_on_mmap;
	void		*config;	/* the backend's, as is */
	size_t		config_size;
	int		config_version;
} __attribute__((aligned(16)));

/* struct hwt_svc_buf: HWT_IOC_SVC_BUF. */
struct hwtr_hwt_svc_buf {
	void		*data;
	size_t		data_size;
	int		data_version;
} __attribute__((aligned(16)));

/* struct pt_cpu_config, sys/amd64/pt/pt.h (PT_IP_FILTER_MAX_RANGES 2). */
#define HWTR_HWT_PT_RANGES	2
struct hwtr_hwt_pt_config {
	uint64_t	rtit_ctl;
	int64_t		cr3_filter;	/* register_t */
	int		nranges;
	struct {
		uintptr_t start;	/* vm_offset_t */
		uintptr_t end;
	}		ip_ranges[HWTR_HWT_PT_RANGES];
	uint32_t	mtc_freq;
	uint32_t	cyc_thresh;
	uint32_t	psb_freq;
};

/* IA32_RTIT_CTL bits the FreeBSD PT backend accepts (PT_SUPPORTED_FLAGS). */
#define HWTR_RTIT_CTL_OS	(1ULL << 2)
#define HWTR_RTIT_CTL_USER	(1ULL << 3)
#define HWTR_RTIT_CTL_CR3FILTER	(1ULL << 7)
#define HWTR_RTIT_CTL_MTCEN	(1ULL << 9)
#define HWTR_RTIT_CTL_BRANCHEN	(1ULL << 13)
#define HWTR_RTIT_CTL_DIS_TNT	(1ULL << 55)

#define HWTR_HWT_IOC_ALLOC	HWTR_HWT_IOW(HWTR_HWT_MAGIC, 0x00, \
	struct hwtr_hwt_alloc)
#define HWTR_HWT_IOC_START	HWTR_HWT_IOW(HWTR_HWT_MAGIC, 0x01, \
	struct hwtr_hwt_start)
#define HWTR_HWT_IOC_STOP	HWTR_HWT_IOW(HWTR_HWT_MAGIC, 0x02, \
	struct hwtr_hwt_stop)
#define HWTR_HWT_IOC_RECORD_GET	HWTR_HWT_IOW(HWTR_HWT_MAGIC, 0x03, \
	struct hwtr_hwt_record_get)
#define HWTR_HWT_IOC_BUFPTR_GET	HWTR_HWT_IOW(HWTR_HWT_MAGIC, 0x04, \
	struct hwtr_hwt_bufptr_get)
#define HWTR_HWT_IOC_SET_CONFIG	HWTR_HWT_IOW(HWTR_HWT_MAGIC, 0x05, \
	struct hwtr_hwt_set_config)
#define HWTR_HWT_IOC_WAKEUP	HWTR_HWT_IOW(HWTR_HWT_MAGIC, 0x06, \
	struct hwtr_hwt_wakeup)
#define HWTR_HWT_IOC_SVC_BUF	HWTR_HWT_IOW(HWTR_HWT_MAGIC, 0x07, \
	struct hwtr_hwt_svc_buf)


/*
 * ptrace(2) as the --trigger breakpoint uses it: the requests of
 * sys/sys/ptrace.h (FreeBSD 15.0, main) and the debug registers of
 * struct dbreg.
 */
#define HWTR_PT_CONTINUE	7	/* PT_CONTINUE */
#define HWTR_PT_STEP		9	/* PT_STEP */
#define HWTR_PT_ATTACH		10	/* PT_ATTACH */
#define HWTR_PT_DETACH		11	/* PT_DETACH */
#define HWTR_PT_GETDBREGS	37	/* PT_GETDBREGS */
#define HWTR_PT_SETDBREGS	38	/* PT_SETDBREGS */

/*
 * amd64's struct dbreg (sys/x86/include/reg.h, struct __dbreg64): the
 * sixteen debug registers DR0 to DR15, 64 bits each.  DR0 holds the
 * breakpoint's address; DR7's bit 0 (L0) enables it locally, and its
 * bits 16-19 (R/W0 and LEN0) left 00 make it an execution breakpoint of
 * one byte (Intel SDM vol. 3B, 17.2.4); DR6's bit 0 (B0) says that
 * breakpoint 0 fired, bit 14 (BS) a single step.
 */
struct hwtr_dbreg_amd64 {
	uint64_t	dr[16];		/* dr[16] */
};
#define HWTR_DR7_L0		0x1ULL
#define HWTR_DR7_RWLEN0		(0xfULL << 16)
#define HWTR_DR6_B0		0x1ULL

/*
 * arm64's struct dbreg (sys/arm64/include/reg.h): the debug
 * architecture's version and counts, then sixteen breakpoint and sixteen
 * watchpoint pairs of an address and a control word.  DBGBCR<n> (Arm ARM
 * D13.3): E (bit 0) enables, PMC (bits 1-2) 0b10 matches at EL0, BAS
 * (bits 5-8) 0b1111 for an A64 instruction.
 */
struct hwtr_dbreg_arm64 {
	uint8_t		db_debug_ver;	/* db_debug_ver */
	uint8_t		db_nbkpts;	/* db_nbkpts */
	uint8_t		db_nwtpts;	/* db_nwtpts */
	uint8_t		db_pad[5];	/* db_pad */
	struct {
		uint64_t	dbr_addr;	/* dbr_addr */
		uint32_t	dbr_ctrl;	/* dbr_ctrl */
		uint32_t	dbr_pad;	/* dbr_pad */
	} db_breakregs[16];		/* db_breakregs */
	struct {
		uint64_t	dbw_addr;	/* dbw_addr */
		uint32_t	dbw_ctrl;	/* dbw_ctrl */
		uint32_t	dbw_pad;	/* dbw_pad */
	} db_watchregs[16];		/* db_watchregs */
};
#define HWTR_DBGBCR_EXEC_EL0	(0x1u | (0x2u << 1) | (0xfu << 5))

#if defined(__x86_64__) || defined(__aarch64__)
/*
 * amd64 and arm64 (LP64, 16-byte alignment honoured), computed by hand
 * from the FreeBSD headers cited above: every structure is padded to a
 * multiple of its __aligned(16).
 */
_Static_assert(sizeof(struct hwtr_hwt_alloc) == 64, "hwt_alloc size");
_Static_assert(offsetof(struct hwtr_hwt_alloc, bufsize) == 0, "bufsize");
_Static_assert(offsetof(struct hwtr_hwt_alloc, mode) == 8, "mode");
_Static_assert(offsetof(struct hwtr_hwt_alloc, pid) == 12, "pid");
_Static_assert(offsetof(struct hwtr_hwt_alloc, cpu_map) == 16, "cpu_map");
_Static_assert(offsetof(struct hwtr_hwt_alloc, cpusetsize) == 24,
    "cpusetsize");
_Static_assert(offsetof(struct hwtr_hwt_alloc, backend_name) == 32,
    "backend_name");
_Static_assert(offsetof(struct hwtr_hwt_alloc, ident) == 40, "ident");
_Static_assert(offsetof(struct hwtr_hwt_alloc, kqueue_fd) == 48,
    "kqueue_fd");
_Static_assert(sizeof(struct hwtr_hwt_start) == 16, "hwt_start size");
_Static_assert(sizeof(struct hwtr_hwt_stop) == 16, "hwt_stop size");
_Static_assert(sizeof(struct hwtr_hwt_wakeup) == 16, "hwt_wakeup size");
/* 4 (enum) + 4 pad + 1024 + 8 + 8 = 1048, padded to 1056. */
_Static_assert(sizeof(struct hwtr_hwt_record_user_entry) == 1056,
    "hwt_record_user_entry size");
_Static_assert(offsetof(struct hwtr_hwt_record_user_entry, u) == 8,
    "record union");
_Static_assert(offsetof(struct hwtr_hwt_record_user_entry, u.img.addr) ==
    1032, "record addr");
_Static_assert(offsetof(struct hwtr_hwt_record_user_entry, u.img.baseaddr)
    == 1040, "record baseaddr");
_Static_assert(offsetof(struct hwtr_hwt_record_user_entry, u.buf.curpage)
    == 12, "record curpage");
_Static_assert(offsetof(struct hwtr_hwt_record_user_entry, u.buf.offset)
    == 16, "record offset");
_Static_assert(sizeof(struct hwtr_hwt_record_get) == 32,
    "hwt_record_get size");
_Static_assert(offsetof(struct hwtr_hwt_record_get, wait) == 16, "wait");
_Static_assert(sizeof(struct hwtr_hwt_bufptr_get) == 32,
    "hwt_bufptr_get size");
_Static_assert(offsetof(struct hwtr_hwt_bufptr_get, data) == 16, "data");
_Static_assert(sizeof(struct hwtr_hwt_set_config) == 32,
    "hwt_set_config size");
_Static_assert(offsetof(struct hwtr_hwt_set_config, config) == 8,
    "config");
_Static_assert(offsetof(struct hwtr_hwt_set_config, config_version) == 24,
    "config_version");
_Static_assert(sizeof(struct hwtr_hwt_svc_buf) == 32, "hwt_svc_buf size");
/* 8 + 8 + 4 + 4 pad + 2 * 16 + 3 * 4 = 68, padded to 72. */
_Static_assert(sizeof(struct hwtr_hwt_pt_config) == 72,
    "pt_cpu_config size");
_Static_assert(offsetof(struct hwtr_hwt_pt_config, nranges) == 16,
    "nranges");
_Static_assert(offsetof(struct hwtr_hwt_pt_config, ip_ranges) == 24,
    "ip_ranges");
_Static_assert(offsetof(struct hwtr_hwt_pt_config, mtc_freq) == 56,
    "mtc_freq");
_Static_assert(offsetof(struct hwtr_hwt_pt_config, psb_freq) == 64,
    "psb_freq");
/* The request numbers FreeBSD's _IOW gives them. */
_Static_assert(HWTR_HWT_IOC_ALLOC == 0x80404200UL, "HWT_IOC_ALLOC");
_Static_assert(HWTR_HWT_IOC_START == 0x80104201UL, "HWT_IOC_START");
_Static_assert(HWTR_HWT_IOC_STOP == 0x80104202UL, "HWT_IOC_STOP");
_Static_assert(HWTR_HWT_IOC_RECORD_GET == 0x80204203UL,
    "HWT_IOC_RECORD_GET");
_Static_assert(HWTR_HWT_IOC_BUFPTR_GET == 0x80204204UL,
    "HWT_IOC_BUFPTR_GET");
_Static_assert(HWTR_HWT_IOC_SET_CONFIG == 0x80204205UL,
    "HWT_IOC_SET_CONFIG");
_Static_assert(HWTR_HWT_IOC_WAKEUP == 0x80104206UL, "HWT_IOC_WAKEUP");
_Static_assert(HWTR_HWT_IOC_SVC_BUF == 0x80204207UL, "HWT_IOC_SVC_BUF");
_Static_assert(sizeof(struct hwtr_dbreg_amd64) == 128, "amd64 dbreg size");
_Static_assert(sizeof(struct hwtr_dbreg_arm64) == 520, "arm64 dbreg size");
_Static_assert(offsetof(struct hwtr_dbreg_arm64, db_breakregs) == 8,
    "db_breakregs");
_Static_assert(offsetof(struct hwtr_dbreg_arm64, db_watchregs) == 264,
    "db_watchregs");
#endif

#if defined(__FreeBSD__) && defined(__has_include)
#if __has_include(<sys/hwt.h>)
#include <sys/param.h>
#include <sys/cpuset.h>
#include <sys/ioccom.h>
#include <sys/hwt.h>
#define HWTR_HWT_SAME(a, b)	_Static_assert(sizeof(struct a) == \
	sizeof(struct b), #a " differs from " #b)
#define HWTR_HWT_AT(a, f, b, g)	_Static_assert(offsetof(struct a, f) == \
	offsetof(struct b, g), #a "." #f " differs")
HWTR_HWT_SAME(hwt_alloc, hwtr_hwt_alloc);
HWTR_HWT_AT(hwt_alloc, pid, hwtr_hwt_alloc, pid);
HWTR_HWT_AT(hwt_alloc, cpu_map, hwtr_hwt_alloc, cpu_map);
HWTR_HWT_AT(hwt_alloc, backend_name, hwtr_hwt_alloc, backend_name);
HWTR_HWT_AT(hwt_alloc, ident, hwtr_hwt_alloc, ident);
HWTR_HWT_AT(hwt_alloc, kqueue_fd, hwtr_hwt_alloc, kqueue_fd);
HWTR_HWT_SAME(hwt_start, hwtr_hwt_start);
HWTR_HWT_SAME(hwt_record_user_entry, hwtr_hwt_record_user_entry);
HWTR_HWT_AT(hwt_record_user_entry, addr, hwtr_hwt_record_user_entry,
    u.img.addr);
HWTR_HWT_AT(hwt_record_user_entry, baseaddr, hwtr_hwt_record_user_entry,
    u.img.baseaddr);
HWTR_HWT_AT(hwt_record_user_entry, curpage, hwtr_hwt_record_user_entry,
    u.buf.curpage);
HWTR_HWT_AT(hwt_record_user_entry, offset, hwtr_hwt_record_user_entry,
    u.buf.offset);
HWTR_HWT_SAME(hwt_record_get, hwtr_hwt_record_get);
HWTR_HWT_AT(hwt_record_get, wait, hwtr_hwt_record_get, wait);
HWTR_HWT_SAME(hwt_bufptr_get, hwtr_hwt_bufptr_get);
HWTR_HWT_SAME(hwt_set_config, hwtr_hwt_set_config);
HWTR_HWT_AT(hwt_set_config, config_version, hwtr_hwt_set_config,
    config_version);
HWTR_HWT_SAME(hwt_svc_buf, hwtr_hwt_svc_buf);
_Static_assert(HWT_IOC_ALLOC == HWTR_HWT_IOC_ALLOC, "HWT_IOC_ALLOC");
_Static_assert(HWT_IOC_START == HWTR_HWT_IOC_START, "HWT_IOC_START");
_Static_assert(HWT_IOC_STOP == HWTR_HWT_IOC_STOP, "HWT_IOC_STOP");
_Static_assert(HWT_IOC_RECORD_GET == HWTR_HWT_IOC_RECORD_GET,
    "HWT_IOC_RECORD_GET");
_Static_assert(HWT_IOC_BUFPTR_GET == HWTR_HWT_IOC_BUFPTR_GET,
    "HWT_IOC_BUFPTR_GET");
_Static_assert(HWT_IOC_SET_CONFIG == HWTR_HWT_IOC_SET_CONFIG,
    "HWT_IOC_SET_CONFIG");
_Static_assert(HWT_IOC_WAKEUP == HWTR_HWT_IOC_WAKEUP, "HWT_IOC_WAKEUP");
_Static_assert(HWT_IOC_SVC_BUF == HWTR_HWT_IOC_SVC_BUF, "HWT_IOC_SVC_BUF");
_Static_assert(HWT_RECORD_BUFFER == HWTR_HWT_RECORD_BUFFER,
    "HWT_RECORD_BUFFER");
_Static_assert(HWT_MODE_CPU == HWTR_HWT_MODE_CPU, "HWT_MODE_CPU");
#undef HWTR_HWT_SAME
#undef HWTR_HWT_AT
#endif
#include <sys/ptrace.h>
#include <machine/reg.h>
_Static_assert(PT_CONTINUE == HWTR_PT_CONTINUE, "PT_CONTINUE");
_Static_assert(PT_STEP == HWTR_PT_STEP, "PT_STEP");
_Static_assert(PT_ATTACH == HWTR_PT_ATTACH, "PT_ATTACH");
_Static_assert(PT_DETACH == HWTR_PT_DETACH, "PT_DETACH");
_Static_assert(PT_GETDBREGS == HWTR_PT_GETDBREGS, "PT_GETDBREGS");
_Static_assert(PT_SETDBREGS == HWTR_PT_SETDBREGS, "PT_SETDBREGS");
#if defined(__amd64__)
_Static_assert(sizeof(struct dbreg) == sizeof(struct hwtr_dbreg_amd64),
    "struct dbreg differs");
#elif defined(__aarch64__)
_Static_assert(sizeof(struct dbreg) == sizeof(struct hwtr_dbreg_arm64),
    "struct dbreg differs");
_Static_assert(offsetof(struct dbreg, db_breakregs) ==
    offsetof(struct hwtr_dbreg_arm64, db_breakregs), "db_breakregs");
#endif
#endif

#endif /* !HWTR_HWT_ABI_H */
