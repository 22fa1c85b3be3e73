/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The image collector (capture/images.c): the images a capture's MMAP
 * records name, stored in the archive.  Internal to capture/ (and its
 * tests).
 */

#ifndef HWTR_IMG_H
#define HWTR_IMG_H

#include <stddef.h>
#include <stdint.h>

#include "hwtrace.h"

/*
 * How to use the image collector (hwtr_img_*):
 *   1) hwtr_img_new(&img, aw, log) next to the archive writer.
 *   2) For every MMAP record, before writing it: hwtr_img_mmap(img, rec),
 *      best while the process is still alive.  It stores the mapped image
 *      once (hwtr_aw_add_image_file() for a file whose build-id is the one
 *      the record names; otherwise the exact mapped file through
 *      /proc/<pid>/map_files; otherwise the mapped bytes from
 *      /proc/<pid>/mem as HWTR_IMG_MEMORY) and sets rec->u.mmap.image to
 *      its key.  [vdso] is dumped from the process's memory (or, when the
 *      process is gone, from this process's own vdso, the same image);
 *      [vsyscall] is dumped when readable.  A record with mmap.slice set
 *      (a source's choice, not in the sideband format) stores only the
 *      bytes it maps, read from the file, as HWTR_IMG_MEMORY.
 *   3) hwtr_img_free().
 * For an HWTR_IMG_MEMORY image the record's pgoff is set to 0: the image
 * holds the mapping's bytes from its start address (a [vdso] dump is the
 * whole vdso ELF).  For an HWTR_IMG_FILE image, pgoff is the file offset
 * mapped at the start address, as the kernel said.
 */
struct hwtr_img;
struct hwtr_aw;

/* @aw and @log are borrowed and must outlive @img. */
int hwtr_img_new(struct hwtr_img **imgp, struct hwtr_aw *aw,
    const struct hwtr_log *log);

/*
 * Store the image @rec (an HWTR_SB_MMAP record) maps and set
 * rec->u.mmap.image (valid until hwtr_img_free()).  Returns 1 when an
 * image was stored now, 0 when it was stored before, -HWTR_E_NOENT when
 * no copy of it could be had (the record then keeps image NULL and should
 * still be written), or another negative error of the archive writer.
 */
int hwtr_img_mmap(struct hwtr_img *img, struct hwtr_sb_rec *rec);

/* Details of the last failure; valid until the next call. */
const char *hwtr_img_errmsg(const struct hwtr_img *img);

void hwtr_img_free(struct hwtr_img *img);

#endif /* !HWTR_IMG_H */
