/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The stream view: an open archive's trace streams as byte ranges rather
 * than chunks (format/stream.c).
 *
 * hwtr_sv_open() reads every chunk of every stream once, in order (helper
 * threads decompress ahead of the scan), and cuts each stream into
 *  - pieces: runs of contiguous readable chunks; the bytes between two
 *    pieces were lost (a chunk missing or unreadable);
 *  - segments, which a decoder can take independently: Intel PT is cut at
 *    a PSB at least seg_size bytes after the segment's start (and
 *    HWTR_SV_PSB_GAP after the PSB before it), and at every piece; a
 *    CoreSight stream is one segment over all of its pieces, its units
 *    (trace IDs) being separated by the decoder, unless it is longer
 *    than seg_max: then each piece is cut in segments of at most seg_max
 *    bytes (HWTR_SV_CS_CUT).
 * hwtr_sv_read() then reads any offset range of a stream across chunks,
 * through a cache shared by threads: a chunk is decompressed once, by the
 * first reader, and kept until every segment that reads it called
 * hwtr_sv_seg_done().
 */

#ifndef HWTR_STREAM_H
#define HWTR_STREAM_H

#include <stddef.h>
#include <stdint.h>

struct hwtr_ar;
struct hwtr_sv;

/* Contiguous readable chunks of a stream: [c0, c1) at [off, off + len). */
struct hwtr_sv_piece {
	uint64_t	off, len;
	size_t		c0, c1;
};

/* A segment: [start, end) of piece @piece of stream @stream. */
struct hwtr_sv_seg {
	size_t		stream, piece;
	/* CoreSight: pieces[0].off, 0, unless has_limit (cut) */
	uint64_t	start, end;
	int		has_limit;	/* end is the next segment's PSB */
	int		first_of_stream;
	int		lost_before;	/* a piece after lost bytes */
	uint64_t	lost_bytes;	/* how many */
	/*
	 * Cut without a PSB (HWTR_SV_SEG_MAX): @blind_end, the decoder
	 * stops at end; @blind_start, it starts at the first PSB after
	 * start, and the bytes before it are not decoded.
	 */
	int		blind_start, blind_end;
};

/* Bytes a segment's decoder reads past its end (hwtr_sv_seg_top()). */
#define HWTR_SV_SEG_MARGIN	(64u << 10)
/*
 * A PSB this close to the one before it is not a cut point: libipt reads
 * ahead past a PSB+ (to find the events of a PSB+ that has none, to bind
 * timing packets), and would deliver the next PSB+'s status updates as
 * the first segment's own.  Hardware writes PSBs 2 KiB apart or more.
 */
#define HWTR_SV_PSB_GAP		256
/*
 * The most bytes of Intel PT a segment holds (so that memory stays
 * bounded whatever the chunks hold): a segment longer than this, its
 * bytes holding no PSB to cut at, is cut at this length without one
 * (blind_start, blind_end).  libipt needs a PSB to start decoding, and a
 * processor writes one every 2^(PSBFreq + 11) bytes (64 KiB at most on
 * the parts that say which periods they support); seg_size is at most
 * half of it, so only bytes without a PSB for 8 MiB are cut so.
 */
#define HWTR_SV_SEG_MAX		(16u << 20)

/*
 * A CoreSight stream longer than seg_max is cut (without a sync point) at
 * multiples of this from a piece's start: whole 16-byte formatter frames
 * and 512-byte DSTREAM blocks.
 */
#define HWTR_SV_CS_CUT		512u

struct hwtr_sv_opts {
	uint64_t	seg_size;	/* Intel PT bytes per segment, >= 16 */
	uint64_t	seg_max;	/* 0: HWTR_SV_SEG_MAX; >= 32 */
	size_t		readahead;	/* helper threads for the scan (< 2: none) */
	/*
	 * 0: every chunk.  Otherwise an Intel PT stream longer than @tail
	 * bytes is planned from its end only: the chunks before its last
	 * @tail bytes are not read, and its first segment starts at the
	 * first PSB from there, or at the last one before when there is
	 * none after (further back, twice as far each time, when the bytes
	 * read hold no PSB at all).  hwtr_sv_tail_from() says where.
	 */
	uint64_t	tail;
	/* A chunk that cannot be read: its stream, offset, the reason. */
	void		(*problem)(void *arg, size_t stream, uint64_t off,
			    const char *why);
	void		*problem_arg;
	/* When set (a signal), the scan stops with -HWTR_E_INTR. */
	const volatile int *cancel;
};

/*
 * Scan every stream of @ar (which must outlive the view).  Returns 0,
 * -HWTR_E_NOMEM or -HWTR_E_INTR (opts.cancel); an unreadable chunk is a
 * problem, not an error.
 */
int	hwtr_sv_open(struct hwtr_sv **svp, struct hwtr_ar *ar,
	    const struct hwtr_sv_opts *opts);
void	hwtr_sv_free(struct hwtr_sv *sv);

size_t	hwtr_sv_nstreams(const struct hwtr_sv *sv);
size_t	hwtr_sv_npieces(const struct hwtr_sv *sv, size_t s);
const struct hwtr_sv_piece *hwtr_sv_piece(const struct hwtr_sv *sv, size_t s,
	    size_t k);
/* Readable bytes of stream @s, and bytes lost between its pieces. */
uint64_t hwtr_sv_bytes(const struct hwtr_sv *sv, size_t s);
/*
 * opts.tail: 1 when stream @s was planned from its end only, from stream
 * offset *@offp on; 0 when it is whole.
 */
int	hwtr_sv_tail_from(const struct hwtr_sv *sv, size_t s, uint64_t *offp);
uint64_t hwtr_sv_gaps(const struct hwtr_sv *sv, size_t s);
/*
 * Chunks of stream @s that could not be read (opts.problem said each),
 * and in *@bytesp the bytes their table entries claim.
 */
size_t	hwtr_sv_unreadable(const struct hwtr_sv *sv, size_t s,
	    uint64_t *bytesp);

/* Segments, streams in order; those of stream @s are [first, first + n). */
size_t	hwtr_sv_nsegs(const struct hwtr_sv *sv);
const struct hwtr_sv_seg *hwtr_sv_seg(const struct hwtr_sv *sv, size_t i);
void	hwtr_sv_stream_segs(const struct hwtr_sv *sv, size_t s, size_t *first,
	    size_t *n);
/*
 * The end of the bytes segment @i decodes: its end plus up to
 * HWTR_SV_SEG_MARGIN within its piece (Intel PT, 0), its end (CoreSight
 * cut, 0), or -1 when it reads every piece of its stream (CoreSight).
 */
int	hwtr_sv_seg_top(const struct hwtr_sv *sv, size_t i, uint64_t *top);

/*
 * Bytes [@from, @to) of stream @s: a pointer into a cached chunk when one
 * holds them all, else a copy in *@copyp (caller frees).  The bytes stay
 * valid until the segments that read them are done (or the view is
 * freed, for a range no segment covers).  On error, a message in @err.
 * Safe to call from several threads.
 */
int	hwtr_sv_read(struct hwtr_sv *sv, size_t s, uint64_t from, uint64_t to,
	    const uint8_t **dstp, uint8_t **copyp, char *err, size_t errlen);
/* Segment @i no longer needs its bytes: chunks nobody else needs go. */
void	hwtr_sv_seg_done(struct hwtr_sv *sv, size_t i);

#endif /* !HWTR_STREAM_H */
