/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * ixgen: make an archive whose Intel PT decodes over a real binary, for
 * the indexer's benchmarks and robustness tests.
 *
 * The software trace sources are too slow to capture 50 MB of PT in a
 * test run, so this walks the control flow of a real x86-64 ELF program
 * (a static, non-PIE one, such as the fixture programs) and encodes the walk with the
 * project's PT encoder (hwtr_ptenc, libipt's packet encoder underneath):
 * conditional branches go one way or the other with a bias fixed per
 * branch (loops exit now and then), direct jumps and calls are followed,
 * returns go back to their call site (return compression), indirect
 * branches and returns with an empty stack go to a random function, and
 * syscalls leave and re-enter the trace as a user-only PT trace does.  The
 * walk is not an execution of the program, but every packet is a real
 * packet about real code, so libipt's block decoder does exactly the work
 * it does on a real trace of that binary.
 *
 * Options make the archive damaged in known ways: bit flips, a truncated
 * stream, garbage in the middle, or the image left out.  -p writes each
 * stream's PT to PREFIX.N too, for the bare libipt loop (ixbare).
 */

#include <elf.h>
#include <err.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hwtrace.h"
#include "hwtr_kernel.h"
#include "../../indexer/hwtr_ix.h"
#include "../lib/hwtr_test_tool.h"

struct seg {
	uint64_t	vaddr, off, filesz, memsz;
	uint32_t	flags;
};

struct prog {
	uint8_t		*buf;
	size_t		len;
	struct seg	seg[16];
	size_t		nseg;
	uint64_t	*func;
	size_t		nfunc;
};

struct out {
	uint8_t		*p;
	size_t		len, cap;
};

static uint64_t rng_state;

static uint64_t
rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (rng_state);
}

static int
out_write(void *arg, const void *buf, size_t len)
{
	struct out *o = arg;

	if (o->len + len > o->cap) {
		size_t n = o->cap ? o->cap * 2 : 1 << 20;

		while (n < o->len + len)
			n *= 2;
		o->p = realloc(o->p, n);
		if (o->p == NULL)
			return (-1);
		o->cap = n;
	}
	memcpy(o->p + o->len, buf, len);
	o->len += len;
	return (0);
}

static void
load_prog(struct prog *p, const char *path)
{
	FILE *fp = fopen(path, "rb");
	const Elf64_Ehdr *eh;
	const Elf64_Shdr *sh;
	size_t i, j;

	if (fp == NULL)
		err(1, "%s", path);
	fseek(fp, 0, SEEK_END);
	p->len = (size_t)ftell(fp);
	rewind(fp);
	p->buf = malloc(p->len);
	if (p->buf == NULL || fread(p->buf, 1, p->len, fp) != p->len)
		err(1, "%s", path);
	fclose(fp);
	eh = (const Elf64_Ehdr *)p->buf;
	if (p->len < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_type != ET_EXEC)
		errx(1, "%s: not a 64-bit non-PIE ELF executable", path);
	for (i = 0; i < eh->e_phnum && p->nseg < 16; i++) {
		const Elf64_Phdr *ph = (const Elf64_Phdr *)(p->buf +
		    eh->e_phoff + i * eh->e_phentsize);

		if (ph->p_type != PT_LOAD)
			continue;
		p->seg[p->nseg].vaddr = ph->p_vaddr;
		p->seg[p->nseg].off = ph->p_offset;
		p->seg[p->nseg].filesz = ph->p_filesz;
		p->seg[p->nseg].memsz = ph->p_memsz;
		p->seg[p->nseg].flags = ph->p_flags;
		p->nseg++;
	}
	sh = (const Elf64_Shdr *)(p->buf + eh->e_shoff);
	for (i = 0; i < eh->e_shnum; i++) {
		const Elf64_Sym *sym;
		size_t n;

		if (sh[i].sh_type != SHT_SYMTAB || p->func != NULL)
			continue;
		sym = (const Elf64_Sym *)(p->buf + sh[i].sh_offset);
		n = sh[i].sh_size / sizeof(*sym);
		p->func = calloc(n ? n : 1, sizeof(*p->func));
		if (p->func == NULL)
			err(1, "calloc");
		for (j = 0; j < n; j++)
			if (ELF64_ST_TYPE(sym[j].st_info) == STT_FUNC &&
			    sym[j].st_size > 0 && sym[j].st_shndx != SHN_UNDEF)
				p->func[p->nfunc++] = sym[j].st_value;
	}
	if (p->nfunc == 0)
		errx(1, "%s: no function symbols", path);
}

/* Up to 15 code bytes at @ip; 0 when @ip is not in an executable segment. */
static size_t
code_at(const struct prog *p, uint64_t ip, uint8_t *buf)
{
	size_t i, n;

	for (i = 0; i < p->nseg; i++) {
		const struct seg *s = &p->seg[i];

		if (!(s->flags & PF_X) || ip < s->vaddr ||
		    ip >= s->vaddr + s->filesz)
			continue;
		n = (size_t)(s->vaddr + s->filesz - ip);
		if (n > 15)
			n = 15;
		memcpy(buf, p->buf + s->off + (ip - s->vaddr), n);
		return (n);
	}
	return (0);
}

static uint64_t
random_func(const struct prog *p)
{
	return (p->func[rng() % p->nfunc]);
}

/* Walk @ninsn instructions of @p, encoding them into @o. */
static void
walk(const struct prog *p, uint64_t ninsn, struct out *o, uint64_t seed)
{
	struct hwtr_ptenc_opts eo = { .no_ret_compression = 1 };
	struct hwtr_ptenc_out cb = { out_write, NULL, o };
	struct hwtr_ptenc *enc;
	uint64_t stack[256], ip, tsc = 1000000, n = 0, quiet = 0;
	size_t depth = 0;
	uint8_t buf[16];
	struct hwtr_x86_insn x;
	int cls;

	rng_state = seed * 0x9e3779b97f4a7c15ULL + 1;
	if (hwtr_ptenc_new(&enc, &eo, &cb) < 0)
		errx(1, "cannot make a PT encoder");
	ip = random_func(p);
	if (hwtr_ptenc_enable(enc, ip, 1, tsc) < 0)
		errx(1, "encoder failed");
	while (n < ninsn) {
		size_t len = code_at(p, ip, buf);
		uint64_t next, target;

		/*
		 * Off the map, or a loop of direct jumps that would run
		 * forever without a packet: leave and resume elsewhere.
		 */
		if (len == 0 || hwtr_x86_decode(buf, len, ip, 64, &x) < 0 ||
		    quiet > 4096) {
			quiet = 0;
			hwtr_ptenc_disable(enc, ip, tsc);
			ip = random_func(p);
			hwtr_ptenc_enable(enc, ip, 1, tsc);
			depth = 0;
			continue;
		}
		n++;
		tsc += 2;
		cls = hwtr_ic_of_x86(&x);
		quiet = cls == HWTR_IC_JUMP || cls == HWTR_IC_OTHER ||
		    cls == HWTR_IC_CALL ? quiet + 1 : 0;
		next = ip + (uint64_t)x.len;
		target = x.has_target ? x.target : next;
		switch (cls) {
		case HWTR_IC_COND: {
			/* A fixed bias per branch: loops run, then exit. */
			uint64_t h = (ip * 0x9e3779b97f4a7c15ULL) >> 60;
			int taken = (rng() & 15) < h;

			hwtr_ptenc_cond(enc, taken);
			ip = taken ? target : next;
			break;
		}
		case HWTR_IC_JUMP:
			ip = target;
			break;
		case HWTR_IC_CALL:
		case HWTR_IC_CALL_IND:
			if (depth == 256)
				memmove(stack, stack + 128, 128 * sizeof(*stack)),
				    depth = 128;
			stack[depth++] = next;
			ip = cls == HWTR_IC_CALL ? target : random_func(p);
			hwtr_ptenc_call(enc, next, ip, cls != HWTR_IC_CALL);
			break;
		case HWTR_IC_JUMP_IND:
			ip = random_func(p);
			hwtr_ptenc_indirect(enc, ip);
			break;
		case HWTR_IC_RET:
			ip = depth > 0 ? stack[--depth] : random_func(p);
			hwtr_ptenc_ret(enc, ip);
			break;
		case HWTR_IC_FAR_CALL:
			/*
			 * A syscall: mostly a far transfer back to the next
			 * instruction; one in 64 leaves the trace and comes
			 * back, as a user-only trace does around a blocking
			 * call.
			 */
			if ((rng() & 63) == 0) {
				hwtr_ptenc_disable(enc, 0, tsc);
				tsc += 500;
				hwtr_ptenc_enable(enc, next, 1, tsc);
			} else
				hwtr_ptenc_far(enc, next, 1);
			ip = next;
			break;
		default:
			ip = next;
			break;
		}
		hwtr_ptenc_at(enc, ip, tsc);
	}
	hwtr_ptenc_disable(enc, 0, tsc);
	hwtr_ptenc_flush(enc);
	hwtr_ptenc_free(enc);
}

static void
usage(void)
{
	fprintf(stderr, "usage: ixgen [-mV] [-c flip|truncate|garbage] "
	    "[-n INSNS] [-p PREFIX] [-s SEED] [-t THREADS] PROGRAM OUT\n");
	exit(2);
}

/* -c: damage the trace @o as @how says (flip, truncate, garbage). */
static void
damage(struct out *o, const char *how)
{
	size_t k;

	if (strcmp(how, "flip") == 0) {
		for (k = 0; k < 16; k++)
			o->p[16 + rng() % (o->len - 16)] ^=
			    (uint8_t)(1u << (rng() & 7));
	} else if (strcmp(how, "truncate") == 0)
		o->len = o->len / 2 + 7;
	else if (strcmp(how, "garbage") == 0) {
		size_t at = o->len / 3, glen = o->len / 10;

		for (k = 0; k < glen; k++)
			o->p[at + k] = (uint8_t)rng();
	} else
		usage();
}

/*
 * The mappings of @p's executable segments from file @path (image @key,
 * NULL: not in the archive), and with @vsyscall [vsyscall]'s.
 */
static void
add_mappings(struct hwtr_aw *aw, const struct prog *p, const char *path,
    const char *key, int vsyscall)
{
	size_t i;
	int t;

	for (i = 0; i < p->nseg; i++) {
		struct hwtr_sb_rec rec;
		const struct seg *s = &p->seg[i];

		if (!(s->flags & PF_X))
			continue;
		memset(&rec, 0, sizeof(rec));
		rec.type = HWTR_SB_MMAP;
		rec.pid = 1000;
		rec.tid = 1000;
		rec.time = 0;
		rec.u.mmap.addr = s->vaddr & ~0xfffULL;
		rec.u.mmap.pgoff = s->off & ~0xfffULL;
		rec.u.mmap.len = s->vaddr + s->filesz - rec.u.mmap.addr;
		rec.u.mmap.prot = PROT_READ | PROT_EXEC;
		rec.u.mmap.path = path;
		rec.u.mmap.image = key;
		if (hwtr_aw_sideband(aw, &rec) < 0)
			errx(1, "sideband: %s", hwtr_aw_errmsg(aw));
	}
	/*
	 * -V: [vsyscall] mapped twice, without an image and never executed,
	 * as the step source's process-map sideband records it.
	 */
	for (t = 0; vsyscall && t < 2; t++) {
		struct hwtr_sb_rec rec;

		memset(&rec, 0, sizeof(rec));
		rec.type = HWTR_SB_MMAP;
		rec.pid = 1000;
		rec.tid = 1000;
		rec.time = 0;
		rec.u.mmap.addr = 0xffffffffff600000ULL;
		rec.u.mmap.len = 0x1000;
		rec.u.mmap.prot = PROT_EXEC;
		rec.u.mmap.path = "[vsyscall]";
		rec.u.mmap.image = NULL;
		if (hwtr_aw_sideband(aw, &rec) < 0)
			errx(1, "sideband: %s", hwtr_aw_errmsg(aw));
	}
}

int
main(int argc, char **argv)
{
	struct prog p;
	struct out *o;
	struct hwtr_capture_meta meta;
	struct hwtr_aw *aw;
	const char *corrupt = NULL, *prefix = NULL;
	char key[HWTR_IMAGE_KEY_MAX], errbuf[256];
	uint64_t ninsn = 1000000, seed = 1;
	int c, nthreads = 1, missing = 0, vsyscall = 0, t;

	while ((c = getopt(argc, argv, "c:mn:p:s:t:V")) != -1) {
		switch (c) {
		case 'c':
			corrupt = optarg;
			break;
		case 'm':
			missing = 1;
			break;
		case 'n':
			ninsn = strtoull(optarg, NULL, 0);
			break;
		case 'p':
			prefix = optarg;
			break;
		case 's':
			seed = strtoull(optarg, NULL, 0);
			break;
		case 't':
			nthreads = atoi(optarg);
			break;
		case 'V':
			vsyscall = 1;
			break;
		default:
			usage();
		}
	}
	if (argc - optind != 2 || nthreads < 1 || nthreads > 64)
		usage();
	memset(&p, 0, sizeof(p));
	load_prog(&p, argv[optind]);
	o = calloc((size_t)nthreads, sizeof(*o));
	for (t = 0; t < nthreads; t++) {
		walk(&p, ninsn, &o[t], seed + (uint64_t)t);
		if (corrupt != NULL && o[t].len > 64)
			damage(&o[t], corrupt);
		if (prefix != NULL) {
			char path[1024];
			FILE *fp;

			snprintf(path, sizeof(path), "%s.%d", prefix, t);
			fp = fopen(path, "wb");
			if (fp == NULL || fwrite(o[t].p, 1, o[t].len, fp) !=
			    o[t].len || fclose(fp) != 0)
				err(1, "%s", path);
		}
	}
	tool_intel_meta(&meta, "ixgen", "synthetic", 158);
	meta.cpu.stepping = 10;
	if (hwtr_aw_open(&aw, argv[optind + 1], &meta, NULL, errbuf,
	    sizeof(errbuf)) < 0)
		errx(1, "%s: %s", argv[optind + 1], errbuf);
	key[0] = '\0';
	if (!missing && hwtr_aw_add_image_file(aw, argv[optind], NULL, 0,
	    key) < 0)
		errx(1, "image: %s", hwtr_aw_errmsg(aw));
	for (t = 0; t < nthreads; t++) {
		struct hwtr_stream_desc sd;
		struct hwtr_sb_rec rec;
		uint32_t id;
		size_t off;

		memset(&sd, 0, sizeof(sd));
		sd.format = HWTR_TF_INTEL_PT;
		sd.pid = 1000;
		sd.tid = 1000 + t;
		sd.cpu = -1;
		if (hwtr_aw_add_stream(aw, &sd, &id) < 0)
			errx(1, "stream: %s", hwtr_aw_errmsg(aw));
		for (off = 0; off < o[t].len; off += 8u << 20) {
			size_t n = o[t].len - off < (8u << 20) ?
			    o[t].len - off : 8u << 20;

			if (hwtr_aw_chunk(aw, id, off, o[t].p + off, n) < 0)
				errx(1, "chunk: %s", hwtr_aw_errmsg(aw));
		}
		memset(&rec, 0, sizeof(rec));
		rec.type = HWTR_SB_THREAD_START;
		rec.pid = 1000;
		rec.tid = 1000 + t;
		rec.u.thread_start.ptid = -1;
		hwtr_aw_sideband(aw, &rec);
	}
	add_mappings(aw, &p, argv[optind], missing ? NULL : key, vsyscall);
	if (hwtr_aw_close(aw, errbuf, sizeof(errbuf)) < 0)
		errx(1, "%s: %s", argv[optind + 1], errbuf);
	for (t = 0; t < nthreads; t++)
		free(o[t].p);
	free(o);
	free(p.buf);
	free(p.func);
	return (0);
}
