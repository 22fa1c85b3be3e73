/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * Code in no file (ix_jit.c, issue 32): the archive's code regions and
 * JIT symbol files as an image "[jit]" per process, after the archive's
 * images, with a mapping per region over the time it was valid.
 */

#ifndef HWTR_IX_JIT_H
#define HWTR_IX_JIT_H

#include "ix_run.h"

/*
 * After the sideband replay, before ix_add_sections(): the images and
 * mappings of every process with jit/ members.  Members that cannot be
 * parsed are problems; 0 or -HWTR_E_NOMEM / -HWTR_E_IO.
 */
int	ix_jit_load(struct ix_images *im, const char *tmpdir);
/* Image @i's description: the archive's, or the "[jit]" one's. */
const struct hwtr_image_desc *ix_img_desc(const struct ix_images *im,
	    struct hwtr_ar *ar, size_t i);
/*
 * When image @image is a "[jit]" one or a memory image of anonymous
 * memory: "[anon]+0xOFF" for @addr in @buf (OFF from the start of the
 * anonymous mapping holding it, or of its page) and 1; else 0.
 */
int	ix_jit_anon_name(const struct ix_images *im, size_t image,
	    uint64_t addr, char *buf, size_t len);
/*
 * The symbol of "[jit]" mapping @m's image naming @addr while @m's code
 * was there (a JIT symbol is valid from its load until it moves or a
 * later load at its address), or NULL.
 */
const struct ix_sym *ix_jit_func(const struct ix_images *im,
	    const struct ix_map *m, uint64_t addr);
/*
 * When mapping @m is of a memory image of anonymous memory (the step
 * source's) and the JIT symbols of its process name @ip while @m was
 * mapped: 1, the "[jit]" image in *@imagep, the symbol in *@symp.
 */
int	ix_jit_other(const struct ix_images *im, const struct ix_map *m,
	    uint64_t ip, size_t *imagep, const struct ix_sym **symp);

#endif /* !HWTR_IX_JIT_H */
