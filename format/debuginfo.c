/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Separate debug files: where GDB and the rest of the toolchain look for
 * the symbols and DWARF a distribution strips out of its binaries (the
 * build-id tree under /usr/lib/debug, .gnu_debuglink, debuginfod), so that
 * an archive can carry them (hwtrace(5), aux/debug/).  A candidate is kept
 * only when it is the image's: the same GNU build-id, or for an image
 * without one the CRC-32 its .gnu_debuglink names.  libdebuginfod is used
 * here only, and only when DEBUGINFOD_URLS is set.
 */

#include <elfutils/debuginfod.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hwtr_common.h"
#include "hwtr_elf.h"

#define DEBUG_ROOT	"/usr/lib/debug"
#define DEBUG_MAX	(2ULL << 30)

/* CRC-32 (IEEE 802.3, reflected), the checksum .gnu_debuglink holds. */
static uint32_t
crc32_ieee(const uint8_t *p, size_t n)
{
	uint32_t c = 0xffffffffu;
	size_t i;
	int k;

	for (i = 0; i < n; i++) {
		c ^= p[i];
		for (k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
	}
	return (c ^ 0xffffffffu);
}

struct want {
	const void	*img;
	size_t		imglen;
	uint8_t		bid[HWTR_BUILD_ID_MAX];
	size_t		bidlen;
	int		has_link;
	char		link[256];
	uint32_t	crc;
};

/* 1 when @buf is @w's debug file. */
static int
verify(const struct want *w, const void *buf, size_t len)
{
	struct hwtr_elf_info ei;

	if (len == w->imglen && memcmp(buf, w->img, len) == 0)
		return (0);		/* the image itself */
	if (hwtr_elf_parse(buf, len, &ei, NULL, 0) < 0)
		return (0);
	if (w->bidlen > 0)
		return (ei.build_id_len == w->bidlen &&
		    memcmp(ei.build_id, w->bid, w->bidlen) == 0);
	return (w->has_link && crc32_ieee(buf, len) == w->crc);
}

/* Try the file at @path; 1 and the bytes when it is the one. */
static int
try_path(const struct want *w, const char *path, void **bufp, size_t *lenp,
    char *from, size_t fromlen)
{
	void *buf;
	size_t len;
	char err[HWTR_ERRMSG_MAX];

	if (access(path, R_OK) != 0 ||
	    hwtr_read_file(path, DEBUG_MAX, &buf, &len, err, sizeof(err)) < 0)
		return (0);
	if (!verify(w, buf, len)) {
		free(buf);
		return (0);
	}
	*bufp = buf;
	*lenp = len;
	snprintf(from, fromlen, "%s", path);
	return (1);
}

/* Under @root: the build-id tree, then the debuglink name. */
static int
try_root(const struct want *w, const char *root, const char *imgdir,
    void **bufp, size_t *lenp, char *from, size_t fromlen)
{
	char hex[2 * HWTR_BUILD_ID_MAX + 1], path[4096];

	if (w->bidlen > 1) {
		hwtr_hex(hex, w->bid, w->bidlen);
		snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug",
		    root, hex, hex + 2);
		if (try_path(w, path, bufp, lenp, from, fromlen))
			return (1);
	}
	if (!w->has_link)
		return (0);
	snprintf(path, sizeof(path), "%s/%s", root, w->link);
	if (try_path(w, path, bufp, lenp, from, fromlen))
		return (1);
	if (imgdir != NULL) {
		snprintf(path, sizeof(path), "%s%s/%s", root, imgdir, w->link);
		if (try_path(w, path, bufp, lenp, from, fromlen))
			return (1);
	}
	return (0);
}

static int
try_debuginfod(const struct want *w, void **bufp, size_t *lenp, char *from,
    size_t fromlen)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	debuginfod_client *c;
	char *path = NULL;
	int fd, rc = 0;

	if (urls == NULL || *urls == '\0' || w->bidlen == 0)
		return (0);
	if ((c = debuginfod_begin()) == NULL)
		return (0);
	fd = debuginfod_find_debuginfo(c, w->bid, (int)w->bidlen, &path);
	if (fd >= 0) {
		close(fd);
		rc = try_path(w, path, bufp, lenp, from, fromlen);
	}
	free(path);
	debuginfod_end(c);
	return (rc);
}

int
hwtr_debug_find(const void *buf, size_t len, const char *path,
    const char *dir, int system, void **bufp, size_t *lenp, char *from,
    size_t fromlen)
{
	struct hwtr_elf_info ei;
	struct want w;
	char imgdir[4096], p[4096 + 300];
	const char *slash;

	*bufp = NULL;
	*lenp = 0;
	if (!hwtr_elf_is_elf(buf, len) ||
	    hwtr_elf_parse(buf, len, &ei, NULL, 0) < 0)
		return (0);
	memset(&w, 0, sizeof(w));
	w.img = buf;
	w.imglen = len;
	memcpy(w.bid, ei.build_id, ei.build_id_len);
	w.bidlen = ei.build_id_len;
	w.has_link = hwtr_elf_debuglink(buf, len, w.link, sizeof(w.link),
	    &w.crc) == 1 && strchr(w.link, '/') == NULL;
	if (w.bidlen == 0 && !w.has_link)
		return (0);
	imgdir[0] = '\0';
	if (path != NULL && path[0] == '/' &&
	    (slash = strrchr(path, '/')) != NULL)
		snprintf(imgdir, sizeof(imgdir), "%.*s", (int)(slash - path),
		    path);
	if (dir != NULL && try_root(&w, dir, path != NULL && path[0] == '/' ?
	    imgdir : NULL, bufp, lenp, from, fromlen))
		return (1);
	if (!system)
		return (0);
	if (w.has_link && path != NULL && path[0] == '/') {
		snprintf(p, sizeof(p), "%s/%s", imgdir, w.link);
		if (try_path(&w, p, bufp, lenp, from, fromlen))
			return (1);
		snprintf(p, sizeof(p), "%s/.debug/%s", imgdir, w.link);
		if (try_path(&w, p, bufp, lenp, from, fromlen))
			return (1);
	}
	if (try_root(&w, DEBUG_ROOT, path != NULL && path[0] == '/' ?
	    imgdir : NULL, bufp, lenp, from, fromlen))
		return (1);
	return (try_debuginfod(&w, bufp, lenp, from, fromlen));
}
