/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * selfmod: code that lives in no file (issue 32).  It writes a function
 * into an anonymous page, runs it, rewrites it in place with other code
 * and runs it again: what a JIT does.  x86-64 only.
 *
 *   version 1: mov %edi,%eax; add $7,%eax; ret        f(x) = x + 7
 *   version 2: imul $5,%edi,%eax; nop; nop; nop; ret  f(x) = 5x
 *
 * Each runs for x = 0, 1, 2: sums 7+8+9 = 24 and 0+5+10 = 15, so it
 * prints "selfmod: v1 24 v2 15".
 *
 * selfmod -d PREFIX also writes what a test checks a capture against:
 * PREFIX.v1 and PREFIX.v2, the two versions' bytes, and PREFIX.addr,
 * the page's address (0x%lx).
 */

#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static const unsigned char v1[] = {
	0x89, 0xf8,		/* mov %edi,%eax */
	0x83, 0xc0, 0x07,	/* add $7,%eax */
	0xc3			/* ret */
};
static const unsigned char v2[] = {
	0x6b, 0xc7, 0x05,	/* imul $5,%edi,%eax */
	0x90, 0x90, 0x90,	/* nop x3 (v2 is a byte longer) */
	0xc3			/* ret */
};

typedef int (*fn_t)(int);

/* Write @code at @page (made writable, then executable again). */
static int
put(unsigned char *page, long pgsz, const unsigned char *code, size_t len)
{
	if (mprotect(page, (size_t)pgsz, PROT_READ | PROT_WRITE) != 0)
		return (-1);
	memset(page, 0xcc, 64);
	memcpy(page, code, len);
	__builtin___clear_cache((char *)page, (char *)page + len);
	return (mprotect(page, (size_t)pgsz, PROT_READ | PROT_EXEC));
}

/* PREFIX.SUFFIX holds @len bytes at @p; 0 or -1. */
static int
dump(const char *prefix, const char *suffix, const void *p, size_t len)
{
	char path[4096];
	FILE *fp;
	int rc;

	snprintf(path, sizeof(path), "%s.%s", prefix, suffix);
	if ((fp = fopen(path, "w")) == NULL) {
		perror(path);
		return (-1);
	}
	rc = fwrite(p, 1, len, fp) == len ? 0 : -1;
	if (fclose(fp) != 0)
		rc = -1;
	return (rc);
}

static int
run3(unsigned char *page)
{
	fn_t f;
	int i, sum = 0;

	memcpy(&f, &page, sizeof(f));
	for (i = 0; i < 3; i++)
		sum += f(i);
	return (sum);
}

int
main(int argc, char **argv)
{
	long pgsz = sysconf(_SC_PAGESIZE);
	const char *prefix = NULL;
	unsigned char *page;
	char addr[32];
	int s1, s2;

	if (argc == 3 && strcmp(argv[1], "-d") == 0)
		prefix = argv[2];
	else if (argc != 1) {
		fprintf(stderr, "usage: selfmod [-d prefix]\n");
		return (2);
	}
	page = mmap(NULL, (size_t)pgsz, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED) {
		perror("selfmod: mmap");
		return (1);
	}
	snprintf(addr, sizeof(addr), "0x%lx\n", (unsigned long)(uintptr_t)page);
	if (prefix != NULL && (dump(prefix, "v1", v1, sizeof(v1)) != 0 ||
	    dump(prefix, "v2", v2, sizeof(v2)) != 0 ||
	    dump(prefix, "addr", addr, strlen(addr)) != 0))
		return (1);
	if (put(page, pgsz, v1, sizeof(v1)) != 0) {
		perror("selfmod: mprotect");
		return (1);
	}
	s1 = run3(page);
	if (put(page, pgsz, v2, sizeof(v2)) != 0) {
		perror("selfmod: mprotect");
		return (1);
	}
	s2 = run3(page);
	printf("selfmod: v1 %d v2 %d\n", s1, s2);
	return (0);
}
