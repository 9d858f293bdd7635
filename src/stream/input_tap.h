/**
 * @file input_tap.h
 * The worker's copy of its input for analysis off the audio path (the
 * daemon's live hum detector): each block's frames, channels averaged to one,
 * go into a lock-free SPSC ring (rt/ring.h) that the control thread drains.
 *
 * Per block the worker does frames x channels additions and at most two
 * contiguous stores into the ring: no allocation, lock, system call or wait.
 * A block that does not fit whole (the control thread has not drained) is
 * dropped and counted, never waited for; the reader sees the count change
 * and knows its history has a gap.
 *
 * Threads: new/free on the control thread with no worker running; push on
 * the worker (the one writer); read on the control thread (the one reader);
 * the counters on any thread.
 */
#ifndef GPUFIR_INPUT_TAP_H
#define GPUFIR_INPUT_TAP_H

#include <stdint.h>

#include "error.h"

struct gf_input_tap;

/** A tap holding at least @p min_frames mono frames (locked memory). @return 0, GF_E_INVAL or GF_E_NOMEM */
int gf_input_tap_new(struct gf_input_tap **out, uint32_t min_frames, struct gf_errbuf *eb);
/** Accepts NULL. */
void gf_input_tap_free(struct gf_input_tap *t);

/** Worker, RT-safe: @p frames interleaved frames of @p channels, averaged, or the block dropped. */
void gf_input_tap_push(struct gf_input_tap *t, const float *x, uint32_t frames, uint32_t channels);

/** Control thread: up to @p max mono frames into @p dst. @return frames read */
uint32_t gf_input_tap_read(struct gf_input_tap *t, float *dst, uint32_t max);

/** Frames dropped because the ring was full. Any thread. */
uint64_t gf_input_tap_dropped(const struct gf_input_tap *t);
/** Frames the ring took. Any thread. */
uint64_t gf_input_tap_taken(const struct gf_input_tap *t);
/** Its capacity in frames. Any thread. */
uint32_t gf_input_tap_capacity(const struct gf_input_tap *t);

#endif
