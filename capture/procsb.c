/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Sideband and images from /proc: the executable mappings of a traced
 * process, read from /proc/<pid>/maps when it starts, execs, or makes a
 * mapping syscall (the step source reports those), become MMAP/MUNMAP
 * records, and every mapped image is stored in the archive: files as on
 * disk, the vdso and deleted or anonymous code dumped from memory.
 */

#include <sys/mman.h>
#include <sys/stat.h>

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hwtr_common.h"
#include "capture.h"

struct cap_map {
	uint64_t	lo, hi, off;
	uint64_t	dev, ino;
	uint32_t	prot;
	char		*path;
	char		key[HWTR_IMAGE_KEY_MAX];
	int		seen;
};

struct cap_procmaps {
	pid_t		pid;
	struct cap_map	*m;
	size_t		n, cap;
	struct cap_procmaps *next;
};

/* Image keys of files already stored, by device and inode. */
struct cap_imgkey {
	uint64_t	dev, ino;
	char		key[HWTR_IMAGE_KEY_MAX];
};

struct cap_imgcache {
	struct cap_imgkey *k;
	size_t		n, cap;
};

static struct cap_imgcache *
imgcache(struct cap *cap)
{
	return (cap->imgcache);
}

static struct cap_procmaps *
pm_find(struct cap *cap, pid_t pid, int create)
{
	struct cap_procmaps *pm;

	for (pm = cap->maps; pm != NULL; pm = pm->next)
		if (pm->pid == pid)
			return (pm);
	if (!create || (pm = calloc(1, sizeof(*pm))) == NULL)
		return (NULL);
	pm->pid = pid;
	pm->next = cap->maps;
	cap->maps = pm;
	return (pm);
}

static void
pm_clear(struct cap_procmaps *pm)
{
	size_t i;

	for (i = 0; i < pm->n; i++)
		free(pm->m[i].path);
	pm->n = 0;
}

/* Dump [lo, hi) of @pid's memory as an image named @name. */
static int
dump_image(struct cap *cap, pid_t pid, uint64_t lo, uint64_t hi,
    const char *name, char *key)
{
	struct hwtr_image_desc d;
	char path[64];
	uint8_t *buf;
	ssize_t n;
	int fd, rc;

	if (hi <= lo || hi - lo > (256u << 20))
		return (-HWTR_E_LIMIT);
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return (-HWTR_E_IO);
	if ((buf = malloc(hi - lo)) == NULL) {
		close(fd);
		return (-HWTR_E_NOMEM);
	}
	n = pread(fd, buf, hi - lo, (off_t)lo);
	close(fd);
	if (n <= 0) {
		free(buf);
		return (-HWTR_E_IO);
	}
	memset(&d, 0, sizeof(d));
	d.path = name;
	d.kind = HWTR_IMG_MEMORY;
	rc = hwtr_aw_add_image(cap->aw, &d, buf, (size_t)n, key);
	free(buf);
	return (rc);
}

static int
store_image(struct cap *cap, pid_t pid, struct cap_map *m)
{
	struct cap_imgcache *ic = imgcache(cap);
	struct cap_imgkey *nk;
	size_t i, plen;
	int rc;

	m->key[0] = '\0';
	if (m->path == NULL || m->path[0] == '\0')
		return (dump_image(cap, pid, m->lo, m->hi, "[anon]", m->key));
	if (strcmp(m->path, "[vsyscall]") == 0)
		return (0);
	if (m->path[0] == '[')
		return (dump_image(cap, pid, m->lo, m->hi, m->path, m->key));
	plen = strlen(m->path);
	if (plen > 10 && strcmp(m->path + plen - 10, " (deleted)") == 0)
		return (dump_image(cap, pid, m->lo, m->hi, m->path, m->key));
	for (i = 0; ic != NULL && i < ic->n; i++)
		if (ic->k[i].dev == m->dev && ic->k[i].ino == m->ino) {
			memcpy(m->key, ic->k[i].key, sizeof(m->key));
			return (0);
		}
	rc = hwtr_aw_add_image_file(cap->aw, m->path, NULL, 0, m->key);
	if (rc < 0) {
		hwtr_logf(&cap->cfg->log, HWTR_LOG_WARN, "image '%s': %s; "
		    "dumping the mapping from memory", m->path,
		    hwtr_aw_errmsg(cap->aw));
		return (dump_image(cap, pid, m->lo, m->hi, m->path, m->key));
	}
	if (ic != NULL) {
		if (ic->n == ic->cap) {
			size_t nc = ic->cap ? 2 * ic->cap : 32;

			if ((nk = realloc(ic->k, nc * sizeof(*nk))) == NULL)
				return (0);
			ic->k = nk;
			ic->cap = nc;
		}
		ic->k[ic->n].dev = m->dev;
		ic->k[ic->n].ino = m->ino;
		memcpy(ic->k[ic->n].key, m->key, sizeof(m->key));
		ic->n++;
	}
	return (0);
}

static int
emit_mmap(struct cap *cap, pid_t pid, const struct cap_map *m, uint64_t time)
{
	struct hwtr_sb_rec rec;

	memset(&rec, 0, sizeof(rec));
	rec.type = HWTR_SB_MMAP;
	rec.time = time;
	rec.pid = pid;
	rec.tid = pid;
	rec.u.mmap.addr = m->lo;
	rec.u.mmap.len = m->hi - m->lo;
	rec.u.mmap.pgoff = m->off;
	rec.u.mmap.prot = m->prot;
	rec.u.mmap.flags = MAP_PRIVATE;
	rec.u.mmap.path = m->path != NULL ? m->path : "";
	rec.u.mmap.image = m->key[0] ? m->key : NULL;
	return (hwtr_cap_sideband(cap, &rec));
}

static int
emit_munmap(struct cap *cap, pid_t pid, const struct cap_map *m,
    uint64_t time)
{
	struct hwtr_sb_rec rec;

	memset(&rec, 0, sizeof(rec));
	rec.type = HWTR_SB_MUNMAP;
	rec.time = time;
	rec.pid = pid;
	rec.tid = pid;
	rec.u.munmap.addr = m->lo;
	rec.u.munmap.len = m->hi - m->lo;
	return (hwtr_cap_sideband(cap, &rec));
}

int
cap_procsb_scan(struct cap *cap, pid_t pid, uint64_t time, int fresh)
{
	struct cap_procmaps *pm;
	struct cap_map cur, *nm;
	char path[64], line[4352], perms[8], *name;
	unsigned maj, min;
	FILE *fp;
	size_t i;
	int rc = 0, found;

	if (cap->imgcache == NULL)
		cap->imgcache = calloc(1, sizeof(struct cap_imgcache));
	if ((pm = pm_find(cap, pid, 1)) == NULL)
		return (-HWTR_E_NOMEM);
	if (fresh)
		pm_clear(pm);
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if ((fp = fopen(path, "re")) == NULL)
		return (0);	/* gone already */
	for (i = 0; i < pm->n; i++)
		pm->m[i].seen = 0;
	while (fgets(line, sizeof(line), fp) != NULL) {
		memset(&cur, 0, sizeof(cur));
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64
		    " %x:%x %" SCNu64, &cur.lo, &cur.hi, perms, &cur.off,
		    &maj, &min, &cur.ino) != 7 || perms[2] != 'x')
			continue;
		cur.dev = ((uint64_t)maj << 32) | min;
		cur.prot = PROT_EXEC | (perms[0] == 'r' ? PROT_READ : 0) |
		    (perms[1] == 'w' ? PROT_WRITE : 0);
		name = strchr(line, '/');
		if (name == NULL)
			name = strchr(line, '[');
		if (name != NULL)
			name[strcspn(name, "\n")] = '\0';
		for (found = 0, i = 0; i < pm->n; i++) {
			nm = &pm->m[i];
			if (nm->lo == cur.lo && nm->hi == cur.hi &&
			    nm->off == cur.off && nm->ino == cur.ino &&
			    strcmp(nm->path ? nm->path : "",
			    name ? name : "") == 0) {
				nm->seen = 1;
				found = 1;
				break;
			}
		}
		if (found)
			continue;
		if (pm->n == pm->cap) {
			size_t nc = pm->cap ? 2 * pm->cap : 16;

			if ((nm = realloc(pm->m, nc * sizeof(*nm))) == NULL) {
				rc = -HWTR_E_NOMEM;
				break;
			}
			pm->m = nm;
			pm->cap = nc;
		}
		cur.path = strdup(name != NULL ? name : "");
		cur.seen = 1;
		nm = &pm->m[pm->n++];
		*nm = cur;
		if ((rc = store_image(cap, pid, nm)) < 0)
			hwtr_logf(&cap->cfg->log, HWTR_LOG_WARN,
			    "process %d: image of '%s' not stored: %s",
			    (int)pid, nm->path, hwtr_errstr(rc));
		if ((rc = emit_mmap(cap, pid, nm, time)) < 0)
			break;
	}
	fclose(fp);
	if (rc < 0)
		return (rc);
	for (i = 0; i < pm->n; ) {
		if (pm->m[i].seen) {
			i++;
			continue;
		}
		if ((rc = emit_munmap(cap, pid, &pm->m[i], time)) < 0)
			return (rc);
		free(pm->m[i].path);
		pm->m[i] = pm->m[--pm->n];
	}
	return (0);
}

int
cap_procsb_exec(struct cap *cap, pid_t pid, const char *path, uint64_t time)
{
	struct hwtr_sb_rec rec;
	char p[64], comm[64];
	FILE *fp;
	int rc;

	(void)path;
	snprintf(p, sizeof(p), "/proc/%d/comm", (int)pid);
	comm[0] = '\0';
	if ((fp = fopen(p, "re")) != NULL) {
		if (fgets(comm, sizeof(comm), fp) == NULL)
			comm[0] = '\0';
		comm[strcspn(comm, "\n")] = '\0';
		fclose(fp);
	}
	memset(&rec, 0, sizeof(rec));
	rec.type = HWTR_SB_COMM;
	rec.time = time;
	rec.pid = pid;
	rec.tid = pid;
	rec.u.comm.comm = comm;
	rec.u.comm.exec = 1;
	if ((rc = hwtr_cap_sideband(cap, &rec)) < 0)
		return (rc);
	return (cap_procsb_scan(cap, pid, time, 1));
}

void
cap_procsb_forget(struct cap *cap, pid_t pid)
{
	struct cap_procmaps **pp, *pm;

	for (pp = &cap->maps; (pm = *pp) != NULL; pp = &pm->next)
		if (pm->pid == pid) {
			*pp = pm->next;
			pm_clear(pm);
			free(pm->m);
			free(pm);
			return;
		}
}

void
cap_procsb_free(struct cap *cap)
{
	struct cap_imgcache *ic = imgcache(cap);

	while (cap->maps != NULL)
		cap_procsb_forget(cap, cap->maps->pid);
	if (ic != NULL) {
		free(ic->k);
		free(ic);
		cap->imgcache = NULL;
	}
}
