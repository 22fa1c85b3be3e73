/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Image collection (hwtrace.h section 6c): every image a trace executes
 * goes into the archive, so that the archive decodes on any machine.
 *
 * The kernel names a mapped file by path and build-id.  The file at that
 * path is stored when its build-id is the one the kernel saw; when the file
 * was replaced or deleted since, the very file that is mapped is still
 * reachable through /proc/<pid>/map_files (root only); failing that, the
 * mapped bytes themselves are dumped from /proc/<pid>/mem, which is always
 * what executed.  Images without a file ([vdso], anonymous executable
 * memory) are dumped from memory too.
 *
 * A source may ask for only the bytes a record maps, read from the file
 * (mmap.slice: the valgrind source for the pages of its tool that Valgrind
 * maps into the program), stored like a memory dump.
 *
 * Images are stored once: an image whose build-id key is in the archive is
 * not read again, and files without a build-id are remembered by device,
 * inode, size and modification time.
 */

#include <sys/auxv.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hwtrace.h"
#include "hwtr_img.h"
#include "hwtr_common.h"

#define IMG_MEM_MAX	(256u << 20)	/* largest mapping dumped from memory */

/* A file without a build-id, already stored. */
struct img_file {
	dev_t		dev;
	ino_t		ino;
	off_t		size;
	struct timespec	mtime;
	char		*key;
};

struct hwtr_img {
	struct hwtr_aw	*aw;
	const struct hwtr_log *log;
	char		**keys;		/* interned keys handed out */
	size_t		nkeys;
	struct img_file	*files;
	size_t		nfiles;
	char		errmsg[HWTR_ERRMSG_MAX];
};

static int img_err(struct hwtr_img *, int, const char *, ...)
    __attribute__((format(printf, 3, 4)));

static int
img_err(struct hwtr_img *img, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(img->errmsg, sizeof(img->errmsg), fmt, ap);
	va_end(ap);
	return (rc);
}

int
hwtr_img_new(struct hwtr_img **imgp, struct hwtr_aw *aw,
    const struct hwtr_log *log)
{
	struct hwtr_img *img;

	*imgp = NULL;
	if (aw == NULL)
		return (-HWTR_E_INVAL);
	if ((img = calloc(1, sizeof(*img))) == NULL)
		return (-HWTR_E_NOMEM);
	img->aw = aw;
	img->log = log;
	*imgp = img;
	return (0);
}

void
hwtr_img_free(struct hwtr_img *img)
{
	size_t i;

	if (img == NULL)
		return;
	for (i = 0; i < img->nkeys; i++)
		free(img->keys[i]);
	free(img->keys);
	for (i = 0; i < img->nfiles; i++)
		free(img->files[i].key);
	free(img->files);
	free(img);
}

const char *
hwtr_img_errmsg(const struct hwtr_img *img)
{
	return (img->errmsg);
}

/* A copy of @key that lives as long as @img. */
static const char *
intern(struct hwtr_img *img, const char *key)
{
	char **nk;
	size_t i;

	for (i = img->nkeys; i-- > 0;)
		if (strcmp(img->keys[i], key) == 0)
			return (img->keys[i]);
	if ((nk = realloc(img->keys, (img->nkeys + 1) * sizeof(*nk))) == NULL)
		return (NULL);
	img->keys = nk;
	if ((nk[img->nkeys] = strdup(key)) == NULL)
		return (NULL);
	return (nk[img->nkeys++]);
}

static int
set_key(struct hwtr_img *img, struct hwtr_sb_rec *rec, const char *key,
    int stored)
{
	if ((rec->u.mmap.image = intern(img, key)) == NULL)
		return (-HWTR_E_NOMEM);
	return (stored);
}

/* Read @len bytes at @addr of process @pid; returns the count or -errno. */
static ssize_t
read_mem(int32_t pid, uint64_t addr, void *buf, size_t len)
{
	char path[64];
	size_t done = 0;
	ssize_t n;
	int fd, e;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return (-errno);
	while (done < len) {
		n = pread(fd, (char *)buf + done, len - done,
		    (off_t)(addr + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		done += (size_t)n;
	}
	e = errno;
	close(fd);
	return (done == len ? (ssize_t)done : -(e ? e : EIO));
}

/*
 * This process's own vdso: the kernel maps the same vdso into every 64-bit
 * process, so it stands in when the traced process is gone.
 */
static int
own_vdso(void **bufp, size_t *lenp)
{
	unsigned long long start, end;
	char line[512];
	void *buf;
	FILE *f;

	*bufp = NULL;
	if (getauxval(AT_SYSINFO_EHDR) == 0 ||
	    (f = fopen("/proc/self/maps", "re")) == NULL)
		return (-1);
	start = end = 0;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strstr(line, "[vdso]") != NULL &&
		    sscanf(line, "%llx-%llx", &start, &end) == 2)
			break;
	}
	fclose(f);
	if (start != getauxval(AT_SYSINFO_EHDR) || end <= start ||
	    end - start > IMG_MEM_MAX || (buf = malloc(end - start)) == NULL)
		return (-1);
	memcpy(buf, (const void *)(uintptr_t)start, end - start);
	*bufp = buf;
	*lenp = end - start;
	return (0);
}

/* 1 when the archive has the image @buf would be stored as. */
static int
dump_stored(struct hwtr_img *img, const void *buf, size_t len)
{
	char key[HWTR_IMAGE_KEY_MAX], hex[2 * HWTR_BUILD_ID_MAX + 1];
	uint8_t id[HWTR_BUILD_ID_MAX], sum[32];
	size_t idlen = 0;

	if (hwtr_elf_build_id_mem(buf, len, id, &idlen) == 1) {
		hwtr_hex(hex, id, idlen);
		snprintf(key, sizeof(key), "bid-%s", hex);
	} else {
		hwtr_sha256(buf, len, sum);
		hwtr_hex(hex, sum, sizeof(sum));
		snprintf(key, sizeof(key), "sha256-%s", hex);
	}
	return (hwtr_aw_has_image(img->aw, key));
}

/*
 * Store @buf, the @len bytes @rec maps, as an HWTR_IMG_MEMORY image; the
 * record then maps it from offset 0.
 */
static int
store_bytes(struct hwtr_img *img, struct hwtr_sb_rec *rec, const void *buf,
    size_t len)
{
	struct hwtr_image_desc d;
	char key[HWTR_IMAGE_KEY_MAX];
	int had, rc;

	memset(&d, 0, sizeof(d));
	d.path = rec->u.mmap.path;
	d.kind = HWTR_IMG_MEMORY;
	/* The writer keys it by the build-id of an ELF dump ([vdso]). */
	had = dump_stored(img, buf, len);
	rc = hwtr_aw_add_image(img->aw, &d, buf, len, key);
	if (rc < 0)
		return (img_err(img, rc, "image '%s': %s", rec->u.mmap.path,
		    hwtr_aw_errmsg(img->aw)));
	rec->u.mmap.pgoff = 0;
	return (set_key(img, rec, key, !had));
}

/*
 * Store the bytes @rec maps, read from the process's memory, as an
 * HWTR_IMG_MEMORY image.
 */
static int
store_memory(struct hwtr_img *img, struct hwtr_sb_rec *rec, const char *why)
{
	const char *path = rec->u.mmap.path;
	int is_vdso = strcmp(path, "[vdso]") == 0, rc;
	size_t len = rec->u.mmap.len;
	void *buf;
	ssize_t n;

	if (len == 0 || len > IMG_MEM_MAX)
		return (img_err(img, -HWTR_E_LIMIT, "image '%s' (pid %d at "
		    "0x%" PRIx64 "): mapping of %zu bytes not dumped", path,
		    (int)rec->pid, rec->u.mmap.addr, len));
	if ((buf = malloc(len)) == NULL)
		return (-HWTR_E_NOMEM);
	n = read_mem(rec->pid, rec->u.mmap.addr, buf, len);
	if (n < 0 && is_vdso) {
		free(buf);
		if (own_vdso(&buf, &len) != 0)
			return (img_err(img, -HWTR_E_NOENT, "image '[vdso]' "
			    "(pid %d): cannot read the process's memory (%s) "
			    "nor our own vdso", (int)rec->pid, strerror((int)-n)));
		hwtr_logf(img->log, HWTR_LOG_INFO, "image '[vdso]' (pid %d): "
		    "process gone, storing this process's vdso", (int)rec->pid);
	} else if (n < 0) {
		free(buf);
		return (img_err(img, -HWTR_E_NOENT, "image '%s' (pid %d at "
		    "0x%" PRIx64 "): %s, and reading its memory failed: %s",
		    path, (int)rec->pid, rec->u.mmap.addr, why,
		    strerror((int)-n)));
	}
	rc = store_bytes(img, rec, buf, len);
	free(buf);
	if (rc >= 0 && !is_vdso && why != NULL)
		hwtr_logf(img->log, HWTR_LOG_INFO, "image '%s' (pid %d): %s; "
		    "stored the mapped bytes instead", path, (int)rec->pid, why);
	return (rc);
}


/* Read the whole file open at @fd. */
static int
slurp(int fd, void **bufp, size_t *lenp)
{
	size_t len = 0, cap = 1 << 16;
	char *buf, *nb;
	ssize_t n;

	if ((buf = malloc(cap)) == NULL)
		return (-HWTR_E_NOMEM);
	for (;;) {
		if (len == cap) {
			if (cap >= (size_t)4 << 30 ||
			    (nb = realloc(buf, cap *= 2)) == NULL) {
				free(buf);
				return (-HWTR_E_NOMEM);
			}
			buf = nb;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			free(buf);
			return (-HWTR_E_IO);
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	*bufp = buf;
	*lenp = len;
	return (0);
}

/*
 * The mapped file itself through /proc/<pid>/map_files, when its build-id
 * is @bid.  Returns 1 stored, 0 not available, < 0 an error.
 */
static int
store_map_file(struct hwtr_img *img, struct hwtr_sb_rec *rec)
{
	struct hwtr_image_desc d;
	char path[96], key[HWTR_IMAGE_KEY_MAX];
	uint8_t bid[HWTR_BUILD_ID_MAX];
	size_t bidlen = 0, len;
	void *buf;
	int fd, rc;

	snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64,
	    (int)rec->pid, rec->u.mmap.addr, rec->u.mmap.addr +
	    rec->u.mmap.len);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return (0);
	if (hwtr_elf_build_id_fd(fd, bid, &bidlen) != 1 ||
	    bidlen != rec->u.mmap.build_id_len ||
	    memcmp(bid, rec->u.mmap.build_id, bidlen) != 0) {
		close(fd);
		return (0);
	}
	rc = slurp(fd, &buf, &len);
	close(fd);
	if (rc < 0)
		return (rc);
	memset(&d, 0, sizeof(d));
	d.path = rec->u.mmap.path;
	d.kind = HWTR_IMG_FILE;
	memcpy(d.build_id, bid, bidlen);
	d.build_id_len = bidlen;
	rc = hwtr_aw_add_image(img->aw, &d, buf, len, key);
	free(buf);
	if (rc < 0)
		return (img_err(img, rc, "image '%s': %s", rec->u.mmap.path,
		    hwtr_aw_errmsg(img->aw)));
	return (set_key(img, rec, key, 1));
}

static struct img_file *
find_file(struct hwtr_img *img, const struct stat *st)
{
	size_t i;

	for (i = 0; i < img->nfiles; i++)
		if (img->files[i].dev == st->st_dev &&
		    img->files[i].ino == st->st_ino &&
		    img->files[i].size == st->st_size &&
		    img->files[i].mtime.tv_sec == st->st_mtim.tv_sec &&
		    img->files[i].mtime.tv_nsec == st->st_mtim.tv_nsec)
			return (&img->files[i]);
	return (NULL);
}

/* A file the record gives no build-id for. */
static int
store_plain_file(struct hwtr_img *img, struct hwtr_sb_rec *rec)
{
	char key[HWTR_IMAGE_KEY_MAX];
	struct img_file *f, *nf;
	struct stat st;
	int rc;

	if (stat(rec->u.mmap.path, &st) != 0)
		return (store_memory(img, rec, "the file is gone"));
	if ((f = find_file(img, &st)) != NULL)
		return (set_key(img, rec, f->key, 0));
	rc = hwtr_aw_add_image_file(img->aw, rec->u.mmap.path, NULL, 0, key);
	if (rc < 0)
		return (store_memory(img, rec, hwtr_aw_errmsg(img->aw)));
	if ((nf = realloc(img->files, (img->nfiles + 1) * sizeof(*nf))) == NULL)
		return (-HWTR_E_NOMEM);
	img->files = nf;
	f = &nf[img->nfiles];
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	f->size = st.st_size;
	f->mtime = st.st_mtim;
	if ((f->key = strdup(key)) == NULL)
		return (-HWTR_E_NOMEM);
	img->nfiles++;
	return (set_key(img, rec, key, 1));
}

/*
 * Only the bytes a record of a file maps (rec->u.mmap.slice), read from
 * the file, as an HWTR_IMG_MEMORY image: for a large file of which the
 * program runs a page.  The file as a whole when they cannot be read.
 */
static int
store_slice(struct hwtr_img *img, struct hwtr_sb_rec *rec)
{
	size_t len = rec->u.mmap.len, got = 0;
	ssize_t n;
	void *buf;
	int fd, rc;

	if (len == 0 || len > IMG_MEM_MAX || (buf = malloc(len)) == NULL)
		return (store_plain_file(img, rec));
	if ((fd = open(rec->u.mmap.path, O_RDONLY | O_CLOEXEC)) >= 0) {
		while (got < len && (n = pread(fd, (char *)buf + got,
		    len - got, (off_t)(rec->u.mmap.pgoff + got))) > 0)
			got += (size_t)n;
		close(fd);
	}
	if (got != len) {
		free(buf);
		return (store_plain_file(img, rec));
	}
	rc = store_bytes(img, rec, buf, len);
	free(buf);
	return (rc);
}

int
hwtr_img_mmap(struct hwtr_img *img, struct hwtr_sb_rec *rec)
{
	char key[HWTR_IMAGE_KEY_MAX], hex[2 * HWTR_BUILD_ID_MAX + 1];
	char why[160];
	uint8_t bid[HWTR_BUILD_ID_MAX];
	const char *path;
	size_t bidlen = 0;
	int fd, rc;

	if (rec == NULL || rec->type != HWTR_SB_MMAP)
		return (-HWTR_E_INVAL);
	/* The message, if any, is this call's (capture.c shows it). */
	img->errmsg[0] = '\0';
	rec->u.mmap.image = NULL;
	path = rec->u.mmap.path;
	if (path == NULL || path[0] != '/')
		return (store_memory(img, rec, path == NULL ? "no path" :
		    NULL));
	if (rec->u.mmap.slice)
		return (store_slice(img, rec));
	if (rec->u.mmap.build_id_len == 0)
		return (store_plain_file(img, rec));

	hwtr_hex(hex, rec->u.mmap.build_id, rec->u.mmap.build_id_len);
	snprintf(key, sizeof(key), "bid-%s", hex);
	if (hwtr_aw_has_image(img->aw, key))
		return (set_key(img, rec, key, 0));

	/* The file on disk, if it is still the one that was mapped. */
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
		rc = hwtr_elf_build_id_fd(fd, bid, &bidlen);
		close(fd);
		if (rc == 1 && bidlen == rec->u.mmap.build_id_len &&
		    memcmp(bid, rec->u.mmap.build_id, bidlen) == 0) {
			rc = hwtr_aw_add_image_file(img->aw, path, bid, bidlen,
			    key);
			if (rc < 0)
				return (img_err(img, rc, "image '%s': %s",
				    path, hwtr_aw_errmsg(img->aw)));
			return (set_key(img, rec, key, 1));
		}
		hwtr_hex(hex, bid, bidlen);
		snprintf(why, sizeof(why), "the file's build-id is now '%s'",
		    bidlen ? hex : "none");
	} else {
		snprintf(why, sizeof(why), "cannot open the file: %s",
		    strerror(errno));
	}
	if ((rc = store_map_file(img, rec)) != 0)
		return (rc);
	return (store_memory(img, rec, why));
}
