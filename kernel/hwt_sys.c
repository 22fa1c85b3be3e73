/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The hwt source's system calls (hwt_int.h): FreeBSD's own on FreeBSD,
 * and on every other system a table whose calls fail with ENOSYS, so
 * that the source compiles and says what is missing everywhere.
 */

#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include <sys/wait.h>

#ifdef __FreeBSD__
#include <sys/ptrace.h>
#include <sys/event.h>
#include <sys/sysctl.h>
#include <sys/time.h>
#endif

#include "hwtr_common.h"
#include "hwt_int.h"

/* waitpid(2), the same everywhere. */
static pid_t
sys_waitpid(void *arg, pid_t pid, int *status, int options)
{
	return (waitpid(pid, status, options));
}

#ifdef __FreeBSD__

static int
sys_open(void *arg, const char *path, int flags)
{
	return (open(path, flags | O_CLOEXEC));
}

static int
sys_ioctl(void *arg, int fd, unsigned long req, void *data)
{
	return (ioctl(fd, req, data));
}

static void *
sys_mmap(void *arg, size_t len, int prot, int fd)
{
	return (mmap(NULL, len, prot, MAP_SHARED, fd, 0));
}

static int
sys_munmap(void *arg, void *addr, size_t len)
{
	return (munmap(addr, len));
}

static int
sys_close(void *arg, int fd)
{
	return (close(fd));
}

static int
sys_kqueue(void *arg)
{
	return (kqueue());
}

static int
sys_kwait(void *arg, int kq, int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };
	struct kevent ev;
	int n;

	n = kevent(kq, NULL, 0, &ev, 1, &ts);
	if (n < 0 && errno == EINTR)
		return (0);
	return (n < 0 ? -1 : n > 0);
}

static int
sys_sysctl(void *arg, const char *name, void *old, size_t *oldlen)
{
	return (sysctlbyname(name, old, oldlen, NULL, 0));
}

static int
sys_ptrace(void *arg, int req, pid_t pid, void *addr, int data)
{
	return (ptrace(req, pid, (caddr_t)addr, data));
}

static const struct hwtr_hwt_sys native_sys = {
	NULL, sys_open, sys_ioctl, sys_mmap, sys_munmap, sys_close,
	sys_kqueue, sys_kwait, sys_sysctl, sys_ptrace, sys_waitpid
};

const struct hwtr_hwt_sys *
hwtr_hwt_sys_default(int *native)
{
	*native = 1;
	return (&native_sys);
}

#else /* !__FreeBSD__ */

static int
none_open(void *arg, const char *path, int flags)
{
	errno = ENOSYS;
	return (-1);
}

static int
none_ioctl(void *arg, int fd, unsigned long req, void *data)
{
	errno = ENOSYS;
	return (-1);
}

static void *
none_mmap(void *arg, size_t len, int prot, int fd)
{
	errno = ENOSYS;
	return (MAP_FAILED);
}

static int
none_munmap(void *arg, void *addr, size_t len)
{
	errno = ENOSYS;
	return (-1);
}

static int
none_close(void *arg, int fd)
{
	errno = ENOSYS;
	return (-1);
}

static int
none_kqueue(void *arg)
{
	errno = ENOSYS;
	return (-1);
}

static int
none_kwait(void *arg, int kq, int ms)
{
	errno = ENOSYS;
	return (-1);
}

static int
none_sysctl(void *arg, const char *name, void *old, size_t *oldlen)
{
	errno = ENOSYS;
	return (-1);
}

static int
none_ptrace(void *arg, int req, pid_t pid, void *addr, int data)
{
	errno = ENOSYS;
	return (-1);
}

static const struct hwtr_hwt_sys none_sys = {
	NULL, none_open, none_ioctl, none_mmap, none_munmap, none_close,
	none_kqueue, none_kwait, none_sysctl, none_ptrace, sys_waitpid
};

const struct hwtr_hwt_sys *
hwtr_hwt_sys_default(int *native)
{
	*native = 0;
	return (&none_sys);
}

#endif /* __FreeBSD__ */

/* The source's error message (at the bottom: every hwt file says it). */
void
hwt_err(struct hwt_src *hs, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(hs->src->errmsg, sizeof(hs->src->errmsg), fmt, ap);
	va_end(ap);
}
