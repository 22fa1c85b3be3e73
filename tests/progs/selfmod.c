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
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
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

/*
 * SELFMOD_DUMP=FILE: each version's code as a line "ADDR FROM UNTIL HEX"
 * (hex address; CLOCK_MONOTONIC ns before it was written and before the
 * next version was, 0: to the end; its bytes), for tests that give the
 * archive its code regions.
 */
static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
}

static void
dump(FILE *fp, const unsigned char *page, const unsigned char *code,
    size_t len, uint64_t from, uint64_t until)
{
	size_t i;

	if (fp == NULL)
		return;
	fprintf(fp, "%#lx %llu %llu ", (unsigned long)(uintptr_t)page,
	    (unsigned long long)from, (unsigned long long)until);
	for (i = 0; i < len; i++)
		fprintf(fp, "%02x", code[i]);
	fprintf(fp, "\n");
}

int
main(void)
{
	const char *dpath = getenv("SELFMOD_DUMP");
	FILE *dfp = dpath != NULL ? fopen(dpath, "w") : NULL;
	uint64_t t0, t1;
	long pgsz = sysconf(_SC_PAGESIZE);
	unsigned char *page;
	int s1, s2;

	page = mmap(NULL, (size_t)pgsz, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED) {
		perror("selfmod: mmap");
		return (1);
	}
	t0 = now_ns();
	if (put(page, pgsz, v1, sizeof(v1)) != 0) {
		perror("selfmod: mprotect");
		return (1);
	}
	s1 = run3(page);
	t1 = now_ns();
	if (put(page, pgsz, v2, sizeof(v2)) != 0) {
		perror("selfmod: mprotect");
		return (1);
	}
	s2 = run3(page);
	dump(dfp, page, v1, sizeof(v1), t0, t1);
	dump(dfp, page, v2, sizeof(v2), t1, 0);
	if (dfp != NULL)
		fclose(dfp);
	printf("selfmod: v1 %d v2 %d\n", s1, s2);
	return (0);
}
