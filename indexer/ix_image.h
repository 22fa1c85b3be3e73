/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The indexer's images and sideband replay (ix_image.c): the archive's
 * images extracted for libipt, the sideband replayed into processes,
 * threads and mappings over time, and the units (what the database calls
 * streams: one per archive stream, one per trace ID of a CoreSight
 * buffer).
 */

#ifndef HWTR_IX_IMAGE_H
#define HWTR_IX_IMAGE_H

#include "ix_run.h"

/*
 * The layer's state, over the archive @ar with @nstreams streams (@ix
 * for its diagnostics), freed.  Its functions take it alone, and the
 * units where they need them.
 */
struct ix_images *ix_images_new(struct hwtr_ix *ix, struct hwtr_ar *ar,
	    size_t nstreams);
void	ix_images_free(struct ix_images *im);

/* Units of the archive's streams: r->nunits, ustream, ufirst, ures. */
int	ix_make_units(struct run *r);
/* Is unit @u a CoreSight one; its streams.id; units of stream @s. */
int	ix_is_cs_unit(const struct run *r, size_t u);
int64_t	ix_unit_id(const struct run *r, size_t u);
size_t	ix_stream_units(const struct run *r, size_t s);
/*
 * The archive's images, in r->imgs, extracted under r->tmpdir, with what
 * the decoders need of their ELF; ix_load_symbols() the rest (symbols,
 * lines, inlines), which only the writer reads.
 */
int	ix_load_images(struct ix_images *im, const char *tmpdir);
int	ix_load_symbols(struct ix_images *im);
/* The sideband: r->procs, r->threads, r->maps, r->sbev, r->lost. */
int	ix_replay_sideband(struct ix_images *im, size_t nunits,
	    const size_t *ustream);
/* Every mapping's section in the shared image section cache. */
int	ix_add_sections(struct ix_images *im);
/* A section cache of a segment's own (the caller frees it). */
struct pt_image_section_cache *ix_job_iscache(struct ix_images *im);
/* Thread @tid of @pid (made when @create), or NULL. */
struct ix_thread *ix_thread_get(struct ix_images *im, int32_t pid,
	    int32_t tid, int create);
/* Problems for the mappings whose image is missing and that failed. */
/*
 * A problem for each mapping whose image is not in the archive and where
 * decoding failed (@errips: the decode errors' addresses, sorted here).
 */
void	ix_warn_missing(struct hwtr_ix *ix, const struct ix_images *im,
	    uint64_t *errips, size_t nerrips);

#endif /* !HWTR_IX_IMAGE_H */
