/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * hwtrace import: pack a foreign capture into an archive.  Raw Intel PT
 * files described with ptxed's options (--pt, --raw, --elf, --cpu, ...),
 * so that a ptxed command line becomes an import command by changing its
 * name; anything else is one operand whose format the importer table
 * (format/import.c) recognizes: LLDB Intel PT trace bundles, ARM CoreSight
 * snapshot directories, perf.data files.  This file only parses options.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hwtrace.h"
#include "hwtr_common.h"
#include "cli.h"

enum {
	OPT_OUT = 'o',
	OPT_CPU = 0x100,
	OPT_ALLOW_OUTSIDE,
	OPT_BUILDID_DIR,
	OPT_CPUID_EAX,
	OPT_CPUID_EBX,
	OPT_DEBUG_DIR,
	OPT_ELF,
	OPT_KCORE,
	OPT_LLDB,
	OPT_MTC_FREQ,
	OPT_NO_DEBUG_INFO,
	OPT_NOM_FREQ,
	OPT_PERF_ARCHIVE,
	OPT_PEV_PRIMARY,
	OPT_PEV_SECONDARY,
	OPT_PEV_SAMPLE_TYPE,
	OPT_PEV_TIME_ZERO,
	OPT_PEV_TIME_SHIFT,
	OPT_PEV_TIME_MULT,
	OPT_PEV_TSC_OFFSET,
	OPT_PEV_KERNEL_START,
	OPT_PEV_SYSROOT,
	OPT_PEV_VDSO_X64,
	OPT_SB_PRINT,
	OPT_PT,
	OPT_RAW,
	OPT_SYMFS,
	OPT_VMLINUX,
	/* --filter:addrN_cfg, _a, _b: OPT_FILTER + 3 * N + 0, 1, 2 */
	OPT_FILTER = 0x200
};

#define FILTER_OPTS(n)							\
	{ "filter:addr" #n "_cfg", OPT_FILTER + 3 * (n), "N",		\
	    "address range " #n ": 0 off, 1 filter, 2 stop" },		\
	{ "filter:addr" #n "_a", OPT_FILTER + 3 * (n) + 1, "ADDR",	\
	    "address range " #n ": first address" },			\
	{ "filter:addr" #n "_b", OPT_FILTER + 3 * (n) + 2, "ADDR",	\
	    "address range " #n ": last address" }

static const struct cli_opt import_opts[] = {
	{ "allow-outside", OPT_ALLOW_OUTSIDE, NULL, "read the files a bundle "
	    "or snapshot names outside its directory" },
	{ "buildid-dir", OPT_BUILDID_DIR, "DIR",
	    "perf's build-id cache (default ~/.debug)" },
	{ "cpu", OPT_CPU, "F/M[/S]|auto|none",
	    "CPU identity for the decoder (default none)" },
	{ "cpuid-0x15.eax", OPT_CPUID_EAX, "N", "CPUID leaf 0x15 EAX" },
	{ "cpuid-0x15.ebx", OPT_CPUID_EBX, "N", "CPUID leaf 0x15 EBX" },
	{ "debug-dir", OPT_DEBUG_DIR, "DIR", "store the images' separate "
	    "debug files found in DIR" },
	{ "elf", OPT_ELF, "FILE[:BASE]",
	    "map FILE's PT_LOAD segments (lowest at BASE)" },
	FILTER_OPTS(0),
	FILTER_OPTS(1),
	FILTER_OPTS(2),
	FILTER_OPTS(3),
	{ "kcore", OPT_KCORE, "DIR|FILE",
	    "kernel code from a kcore copy (perf record --kcore)" },
	{ "lldb", OPT_LLDB, NULL,
	    "SOURCE is an LLDB trace bundle, whatever it looks like" },
	{ "mtc-freq", OPT_MTC_FREQ, "N",
	    "MTC frequency (IA32_RTIT_CTL[17:14])" },
	{ "no-debug-info", OPT_NO_DEBUG_INFO, NULL, "store no separate debug "
	    "files (--debug-dir ignored)" },
	{ "nom-freq", OPT_NOM_FREQ, "N",
	    "nominal frequency (MSR_PLATFORM_INFO[15:8])" },
	{ "output", OPT_OUT, "OUT", "the archive to write" },
	{ "perf-archive", OPT_PERF_ARCHIVE, "TARBALL",
	    "images from a `perf archive` tarball" },
	{ "pevent:kernel-start", OPT_PEV_KERNEL_START, "ADDR",
	    "mmaps from ADDR up are the kernel's (every process's)" },
	{ "pevent:primary", OPT_PEV_PRIMARY, "FILE[:FROM[-TO]]",
	    "perf_event sideband of the traced CPU (repeatable)" },
	{ "pevent:sample-type", OPT_PEV_SAMPLE_TYPE, "N",
	    "the sideband records' perf_event sample_type" },
	{ "pevent:secondary", OPT_PEV_SECONDARY, "FILE[:FROM[-TO]]",
	    "perf_event sideband of other CPUs (repeatable)" },
	{ "pevent:sysroot", OPT_PEV_SYSROOT, "DIR",
	    "look files of mmap records up under DIR" },
	{ "pevent:time-mult", OPT_PEV_TIME_MULT, "N",
	    "perf time to TSC: multiplier" },
	{ "pevent:time-shift", OPT_PEV_TIME_SHIFT, "N",
	    "perf time to TSC: shift" },
	{ "pevent:time-zero", OPT_PEV_TIME_ZERO, "N",
	    "perf time to TSC: time zero" },
	{ "pevent:tsc-offset", OPT_PEV_TSC_OFFSET, "N",
	    "added to every converted sideband time" },
	{ "pevent:vdso-x64", OPT_PEV_VDSO_X64, "FILE",
	    "the file of [vdso] mappings" },
	{ "pt", OPT_PT, "FILE[:FROM[-TO]]", "an Intel PT stream (repeatable)" },
	{ "raw", OPT_RAW, "FILE[:FROM[-TO]]:VADDR",
	    "load bytes FROM..TO of FILE at VADDR" },
	{ "sb:compact", OPT_SB_PRINT, NULL, "accepted; ptxed printing only" },
	{ "sb:filename", OPT_SB_PRINT, NULL, "accepted; ptxed printing only" },
	{ "sb:offset", OPT_SB_PRINT, NULL, "accepted; ptxed printing only" },
	{ "sb:switch", OPT_SB_PRINT, NULL, "accepted; ptxed printing only" },
	{ "sb:time", OPT_SB_PRINT, NULL, "accepted; ptxed printing only" },
	{ "sb:verbose", OPT_SB_PRINT, NULL, "accepted; ptxed printing only" },
	{ "sb:warn", OPT_SB_PRINT, NULL, "accepted; ptxed printing only" },
	{ "symfs", OPT_SYMFS, "DIR",
	    "look recorded paths (images, jitdumps) up under DIR" },
	{ "vmlinux", OPT_VMLINUX, "FILE", "the kernel image (ELF)" },
	{ NULL, 0, NULL, NULL }
};

static const struct cli_cmd import_cmd = {
	.verb = "import",
	.usage = "[--cpu F/M[/S]|auto|none] [--cpuid-0x15.eax N]\n"
	    "       [--cpuid-0x15.ebx N] [--debug-dir DIR] [--elf FILE[:BASE]]\n"
	    "       [--mtc-freq N] [--filter:addrN_cfg N] [--filter:addrN_a ADDR]\n"
	    "       [--filter:addrN_b ADDR] [--no-debug-info] [--nom-freq N]\n"
	    "       [--pevent:primary FILE[:FROM[-TO]]]\n"
	    "       [--pevent:secondary FILE[:FROM[-TO]]] [--pevent:OPTION VALUE]\n"
	    "       [--raw FILE[:FROM[-TO]]:VADDR] [--sb:OPTION]\n"
	    "       --pt FILE[:FROM[-TO]] -o OUT\n"
	    "       hwtrace import [--allow-outside] [--debug-dir DIR] [--lldb]\n"
	    "       [--no-debug-info] TRACE.JSON -o OUT\n"
	    "       hwtrace import [--allow-outside] [--debug-dir DIR]\n"
	    "       [--no-debug-info] SNAPSHOT_DIR -o OUT\n"
	    "       hwtrace import [--buildid-dir DIR] [--debug-dir DIR]\n"
	    "       [--kcore DIR|FILE] [--no-debug-info] [--perf-archive TARBALL]\n"
	    "       [--symfs DIR] [--vmlinux FILE] PERF.DATA -o OUT\n"
	    "       hwtrace import [--cpu F/M[/S]|auto|none] [--debug-dir DIR]\n"
	    "       [--no-debug-info] --elf FILE[:BASE] HWT_DUMP -o OUT",
	.summary = "Pack a foreign capture into a hwtrace archive: raw Intel "
	    "PT files with ptxed's options, an LLDB Intel PT trace bundle, "
	    "an ARM CoreSight trace snapshot directory (one holding "
	    "snapshot.ini), a perf.data file of Linux perf or "
	    "simpleperf with Intel PT or CoreSight ETM trace (and the "
	    "jitdump it names), or FreeBSD hwt(8)'s raw dump.",
	.opts = import_opts,
};

/* What the command line of one import says. */
struct imp {
	struct hwtr_import_req r;
	const char	*out;
	struct cli_operands ops;
};

/* --filter:addrN_cfg|a|b (ptxed's IA32_RTIT_ADDRn_A/B and ADDRn_CFG). */
static int
opt_filter(struct imp *im, int c, const char *arg)
{
	int n = (c - OPT_FILTER) / 3, k = (c - OPT_FILTER) % 3;
	struct hwtr_pt_filter *pf = &im->r.raw.pt_config.filter[n];
	uint64_t u;

	if (hwtr_parse_u64(arg, &u) != 0 || (k == 0 && u > 0xf))
		return (cli_usage_error(&import_cmd, "malformed "
		    "--filter:addr%d_%s '%s': want %s", n, k == 0 ? "cfg" :
		    k == 1 ? "a" : "b", arg, k == 0 ? "0 to 15" :
		    "an address"));
	if (k == 0)
		pf->cfg = (uint32_t)u;
	else if (k == 1)
		pf->a = u;
	else
		pf->b = u;
	if ((uint32_t)n + 1 > im->r.raw.pt_config.nfilters)
		im->r.raw.pt_config.nfilters = (uint32_t)n + 1;
	return (0);
}

/* The numeric --pevent:OPTION values. */
static int
opt_pevent_num(struct imp *im, int c, const char *arg)
{
	struct hwtr_import_raw_opts *o = &im->r.raw;
	uint64_t u;

	if (hwtr_parse_u64(arg, &u) != 0 ||
	    (c == OPT_PEV_TIME_SHIFT && u > 63) ||
	    (c == OPT_PEV_TIME_MULT && u > UINT32_MAX))
		return (cli_usage_error(&import_cmd, "malformed "
		    "--pevent option value '%s'", arg));
	if (c == OPT_PEV_SAMPLE_TYPE)
		o->pevent_sample_type = u;
	else if (c == OPT_PEV_TIME_ZERO)
		o->pevent_time_zero = u;
	else if (c == OPT_PEV_TSC_OFFSET)
		o->pevent_tsc_offset = u;
	else if (c == OPT_PEV_KERNEL_START)
		o->pevent_kernel_start = u;
	else if (c == OPT_PEV_TIME_SHIFT)
		o->pevent_time_shift = (uint32_t)u;
	else
		o->pevent_time_mult = (uint32_t)u;
	im->r.npevopt++;
	return (0);
}

/* --cpu, --cpuid-0x15.*, --mtc-freq, --nom-freq. */
static int
opt_cpu(struct imp *im, int c, const char *arg)
{
	struct hwtr_pt_config *pc = &im->r.raw.pt_config;
	uint64_t u;
	long v;

	switch (c) {
	case OPT_CPU:
		if (hwtr_import_parse_cpu(arg, &im->r.raw) != 0)
			return (cli_usage_error(&import_cmd, "malformed "
			    "--cpu '%s': want F/M[/S], auto or none", arg));
		break;
	case OPT_CPUID_EAX:
	case OPT_CPUID_EBX:
		if (hwtr_parse_u64(arg, &u) != 0 || u > UINT32_MAX)
			return (cli_usage_error(&import_cmd, "malformed "
			    "--%s '%s': want a 32-bit number",
			    c == OPT_CPUID_EAX ? "cpuid-0x15.eax" :
			    "cpuid-0x15.ebx", arg));
		if (c == OPT_CPUID_EAX)
			pc->cpuid_15_eax = (uint32_t)u;
		else
			pc->cpuid_15_ebx = (uint32_t)u;
		break;
	case OPT_MTC_FREQ:
		if (cli_parse_int(arg, 0, 15, &v) != 0)
			return (cli_usage_error(&import_cmd, "malformed "
			    "--mtc-freq '%s': want 0 to 15", arg));
		pc->mtc_freq = (uint8_t)v;
		break;
	default:	/* OPT_NOM_FREQ */
		if (cli_parse_int(arg, 0, 255, &v) != 0)
			return (cli_usage_error(&import_cmd, "malformed "
			    "--nom-freq '%s': want 0 to 255", arg));
		pc->nom_freq = (uint8_t)v;
		break;
	}
	return (0);
}

/*
 * --pt, --raw, --elf and --pevent:primary|secondary: FILE with its
 * suffixes.  Returns -1 when out of memory.
 */
static int
opt_file(struct imp *im, int c, const char *arg)
{
	char errbuf[HWTR_ERRMSG_MAX];
	int rc;

	rc = hwtr_import_req_file(&im->r, c == OPT_PT ? HWTR_IMPORT_PT :
	    c == OPT_RAW ? HWTR_IMPORT_RAW : c == OPT_ELF ? HWTR_IMPORT_ELF :
	    c == OPT_PEV_PRIMARY ? HWTR_IMPORT_PEV_PRIMARY :
	    HWTR_IMPORT_PEV_SECONDARY, arg, errbuf, sizeof(errbuf));
	if (rc == -HWTR_E_INVAL)
		return (cli_usage_error(&import_cmd, "%s", errbuf));
	return (rc < 0 ? -1 : 0);
}

/* One option; 0, a usage error's exit status, or -1 out of memory. */
static int
import_opt(struct imp *im, int c, const char *arg, const char *word)
{
	if (c >= OPT_FILTER && c < OPT_FILTER + 3 * HWTR_PT_MAX_FILTERS)
		return (opt_filter(im, c, arg));
	switch (c) {
	case OPT_OUT:
		im->out = arg;
		break;
	case OPT_LLDB:
		im->r.lldb = 1;
		break;
	case OPT_DEBUG_DIR:
		if (*arg == '\0')
			return (cli_usage_error(&import_cmd,
			    "empty --debug-dir"));
		im->r.aw.debug_dir = arg;
		break;
	case OPT_NO_DEBUG_INFO:
		im->r.aw.debug_info = -1;
		break;
	case OPT_ALLOW_OUTSIDE:
		im->r.opts.allow_outside = 1;
		break;
	case OPT_PEV_SAMPLE_TYPE:
	case OPT_PEV_TIME_ZERO:
	case OPT_PEV_TSC_OFFSET:
	case OPT_PEV_KERNEL_START:
	case OPT_PEV_TIME_SHIFT:
	case OPT_PEV_TIME_MULT:
		return (opt_pevent_num(im, c, arg));
	case OPT_PEV_SYSROOT:
		im->r.raw.pevent_sysroot = arg;
		im->r.npevopt++;
		break;
	case OPT_PEV_VDSO_X64:
		im->r.raw.pevent_vdso_x64 = arg;
		im->r.npevopt++;
		break;
	case OPT_SB_PRINT:
		/* ptxed's printing of sideband: nothing to keep. */
		break;
	case OPT_BUILDID_DIR:
		im->r.opts.buildid_dir = arg;
		break;
	case OPT_SYMFS:
		im->r.opts.symfs = arg;
		break;
	case OPT_PERF_ARCHIVE:
		im->r.opts.perf_archive = arg;
		break;
	case OPT_KCORE:
		im->r.opts.kcore = arg;
		break;
	case OPT_VMLINUX:
		im->r.opts.vmlinux = arg;
		break;
	case OPT_CPU:
	case OPT_CPUID_EAX:
	case OPT_CPUID_EBX:
	case OPT_MTC_FREQ:
	case OPT_NOM_FREQ:
		return (opt_cpu(im, c, arg));
	case OPT_PT:
	case OPT_RAW:
	case OPT_ELF:
	case OPT_PEV_PRIMARY:
	case OPT_PEV_SECONDARY:
		return (opt_file(im, c, arg));
	default:
		return (cli_usage_error(&import_cmd, "unhandled option "
		    "'%s'", word));
	}
	return (0);
}

int
cmd_import(int argc, char **argv)
{
	struct imp im;
	const char *arg;
	char errbuf[HWTR_ERRMSG_MAX];
	int c, rc = 0;

	memset(&im, 0, sizeof(im));
	/*
	 * Options may follow the operand ("import trace.json -o x", as
	 * hwtrace(1) shows it), so operands are collected as getopt stops at
	 * them; everything after "--" is an operand.
	 */
	while ((c = cli_getopt_ops(&import_cmd, argc, argv, &arg,
	    &im.ops)) != -1)
		if ((rc = import_opt(&im, c, arg, argv[optind - 1])) != 0)
			goto out;
	if (im.out == NULL)
		rc = cli_usage_error(&import_cmd, "no output given (-o OUT)");
	else if (*im.out == '\0')
		rc = cli_usage_error(&import_cmd, "empty output name");
	else {
		errbuf[0] = '\0';
		im.r.ops = im.ops.v;
		im.r.nops = (size_t)im.ops.n;
		if (hwtr_import_req_check(&im.r, errbuf, sizeof(errbuf)) != 0)
			rc = cli_usage_error(&import_cmd, "%s", errbuf);
		else if (hwtr_import_req_run(&im.r, im.out, errbuf,
		    sizeof(errbuf)) < 0) {
			cli_warnx("import", "%s", errbuf);
			rc = 1;
		}
	}
out:
	if (rc < 0) {
		cli_warnx("import", "out of memory");
		rc = 1;
	}
	hwtr_import_req_free(&im.r);
	return (rc);
}
