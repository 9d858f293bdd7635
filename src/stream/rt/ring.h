/**
 * @file ring.h
 * Single-producer single-consumer lock-free ring of interleaved float frames.
 *
 * Design (PipeWire's spa_ringbuffer, JACK's ringbuffer.h):
 * - Two free-running uint32_t frame indices, written by one side each and read
 *   by the other with C11 acquire/release. fill = (int32_t)(write - read);
 *   capacity is a power of two, so index & (capacity - 1) is the slot and the
 *   indices may wrap past UINT32_MAX freely.
 * - The indices are absolute stream positions. The reader may run past the
 *   writer (an underrun: it plays silence for frames that were not there);
 *   the writer then sees gf_ring_write_lag() > 0 and drops that many frames
 *   with gf_ring_write_advance() so that every frame keeps its position.
 * - Two-segment read/write vectors give zero-copy access to the storage.
 * - Storage comes from gf_pinned_alloc(): page-aligned, mlock'ed and, where a
 *   CUDA device is present, page-locked for DMA.
 *
 * Threads and real-time contract:
 * - gf_ring_new(), gf_ring_free(), gf_ring_reset(): control thread, with
 *   neither side running. They allocate.
 * - Writer-side functions (gf_ring_write*, gf_ring_write_lag) are called from
 *   one thread only, reader-side functions (gf_ring_read*) from one other
 *   thread only. They are RT-safe: no locks, no allocation, no system calls,
 *   wait-free, and may be called from an audio callback.
 * - gf_ring_read_space() and gf_ring_write_space() are exact for their own side
 *   and conservative (never over-report) when the other side is active.
 */
#ifndef GPUFIR_RING_H
#define GPUFIR_RING_H

#include <stdint.h>

struct gf_ring;

/** One contiguous piece of the ring: @p frames interleaved frames at @p data. */
struct gf_ring_vec {
	float *data;
	uint32_t frames;
};

/**
 * Allocate a ring of at least @p min_frames frames of @p channels floats
 * (capacity rounded up to a power of two). Zero-filled; both indices 0.
 * Control thread. @return 0, GF_E_INVAL or GF_E_NOMEM
 */
int gf_ring_new(struct gf_ring **out, uint32_t min_frames, uint32_t channels);

/** Control thread. Accepts NULL. */
void gf_ring_free(struct gf_ring *r);

/** Capacity in frames (a power of two). Any thread. */
uint32_t gf_ring_capacity(const struct gf_ring *r);
/** Floats per frame. Any thread. */
uint32_t gf_ring_channels(const struct gf_ring *r);

/**
 * Empty the ring and set both indices to @p index; zero the storage.
 * Control thread, neither side active (tests use it to start near UINT32_MAX).
 */
void gf_ring_reset(struct gf_ring *r, uint32_t index);

/* ---- writer side ------------------------------------------------------ */

/** Writer's own index: the stream position of the next frame it writes. Writer thread. */
uint32_t gf_ring_write_index(const struct gf_ring *r);

/** Frames that can be written now. Writer thread, RT-safe. */
uint32_t gf_ring_write_space(const struct gf_ring *r);

/**
 * Frames by which the reader has run past the writer (0 normally). Those
 * positions were already played as silence: the writer should drop that many
 * frames with gf_ring_write_advance() to keep later frames at their position.
 * Writer thread, RT-safe.
 */
uint32_t gf_ring_write_lag(const struct gf_ring *r);

/**
 * Zero-copy write access: fills @p vec with up to two segments starting at
 * the write index. @return total frames available (vec[0].frames + vec[1].frames).
 * Writer thread, RT-safe.
 */
uint32_t gf_ring_write_vector(struct gf_ring *r, struct gf_ring_vec vec[2]);

/**
 * Publish @p frames frames written through the vectors (release), or skip
 * @p frames positions the reader has already passed.
 * @pre frames <= gf_ring_write_space() + gf_ring_write_lag()
 * Writer thread, RT-safe.
 */
void gf_ring_write_advance(struct gf_ring *r, uint32_t frames);

/** Copy up to @p frames frames in and publish them. @return frames written. Writer, RT-safe. */
uint32_t gf_ring_write(struct gf_ring *r, const float *src, uint32_t frames);

/** Write up to @p frames frames of silence. @return frames written. Writer, RT-safe. */
uint32_t gf_ring_write_zeros(struct gf_ring *r, uint32_t frames);

/**
 * Copy up to @p frames frames (silence when @p src is NULL) into the slots at
 * the write index without publishing them: the reader sees them only after
 * gf_ring_write_advance(). @return frames staged. Writer, RT-safe.
 */
uint32_t gf_ring_stage(struct gf_ring *r, const float *src, uint32_t frames);

/* ---- reader side ------------------------------------------------------ */

/** Reader's own index: the stream position of the next frame it reads. Reader thread. */
uint32_t gf_ring_read_index(const struct gf_ring *r);

/** Frames ready to read (0 while the reader is ahead of the writer). Reader, RT-safe. */
uint32_t gf_ring_read_space(const struct gf_ring *r);

/**
 * Zero-copy read access: up to two segments starting at the read index.
 * @return total frames readable. Reader thread, RT-safe.
 */
uint32_t gf_ring_read_vector(struct gf_ring *r, struct gf_ring_vec vec[2]);

/**
 * Consume @p frames frames (release) so the writer may reuse their slots.
 * @p frames may exceed gf_ring_read_space(): the reader then runs past the
 * writer (an underrun; keep it below 2^30 frames), and the writer drops the
 * positions it missed. Reader thread, RT-safe.
 */
void gf_ring_read_advance(struct gf_ring *r, uint32_t frames);

/**
 * Move the read index to @p index (release): a reader that joins a running
 * stream at a chosen position, e.g. a playback latency behind the writer.
 * Moving back exposes slots again: use it only while the slots between
 * @p index and the write index hold silence or valid frames (true for slots
 * never written since gf_ring_new()/gf_ring_reset(), which are zeroed).
 * Reader thread, RT-safe.
 */
void gf_ring_read_seek(struct gf_ring *r, uint32_t index);

/** Copy out up to @p frames frames and consume them. @return frames read. Reader, RT-safe. */
uint32_t gf_ring_read(struct gf_ring *r, float *dst, uint32_t frames);

#endif
