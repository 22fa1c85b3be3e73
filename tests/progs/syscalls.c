/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Fixture: many system calls of different kinds (each one a trip into the
 * kernel, where tracing pauses), including vdso calls that never enter the
 * kernel (clock_gettime, gettimeofday, time, getcpu: code executed in the
 * [vdso] image, which the capture must dump from memory).
 */

#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

int
main(void)
{
	struct timespec ts, nap = { 0, 1000 };
	struct timeval tv;
	struct utsname un;
	unsigned int cpu, node, n = 0;
	char buf[64];
	int fd, p[2];
	void *m;

	n += getpid() > 0;
	n += getppid() > 0;
	n += getuid() == geteuid();
	n += uname(&un) == 0;
	n += clock_gettime(CLOCK_MONOTONIC, &ts) == 0;
	n += clock_gettime(CLOCK_REALTIME, &ts) == 0;
	n += gettimeofday(&tv, NULL) == 0;
	n += time(NULL) > 0;
	n += getcpu(&cpu, &node) == 0;
	n += sched_yield() == 0;
	n += nanosleep(&nap, NULL) == 0;
	fd = open("/proc/self/stat", O_RDONLY);
	n += fd >= 0;
	n += read(fd, buf, sizeof(buf)) > 0;
	n += close(fd) == 0;
	n += pipe(p) == 0;
	n += write(p[1], "x", 1) == 1;
	n += read(p[0], buf, 1) == 1;
	n += close(p[0]) == 0 && close(p[1]) == 0;
	m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
	    -1, 0);
	n += m != MAP_FAILED;
	n += mprotect(m, 4096, PROT_READ) == 0;
	n += munmap(m, 8192) == 0;
	printf("syscalls: %u of 21 ok\n", n);
	return (n == 21 ? 0 : 1);
}
