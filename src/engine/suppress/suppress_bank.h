/**
 * @file suppress_bank.h
 * The noise suppressors of a stream's channels (suppress.h), one per channel
 * whose chain has one (each with its chain's settings), over interleaved
 * audio. A channel without a suppressor is delayed by the same latency, so
 * that every channel of the output stays aligned with every other.
 *
 * Threads: new/free/reset on the control (or build) thread: they allocate,
 * plan FFTW and may fail. process() on the audio thread: no allocation, lock,
 * I/O or wait.
 */
#ifndef GPUFIR_SUPPRESS_BANK_H
#define GPUFIR_SUPPRESS_BANK_H

#include <stdint.h>

#include "error.h"
#include "suppress.h"

struct gf_suppress_bank;

/**
 * A bank for @p channels channels at @p rate: channel c is suppressed with
 * @p per_channel[c], or only delayed where that is NULL. The parameters (and
 * their noise samples) are read only during the call.
 * @return 0, GF_E_INVAL (no channel has a suppressor, or bad parameters:
 * message in @p eb) or GF_E_NOMEM.
 */
int gf_suppress_bank_new(const struct gf_suppress_params *const *per_channel, uint32_t channels,
			 uint32_t rate, struct gf_suppress_bank **out, struct gf_errbuf *eb);

/** Accepts NULL. Control thread. */
void gf_suppress_bank_free(struct gf_suppress_bank *b);

/** Frames every channel of the output lags the input. Any thread. */
uint32_t gf_suppress_bank_latency(const struct gf_suppress_bank *b);

/** Channels with a suppressor of their own (the others are only delayed). Any thread. */
uint32_t gf_suppress_bank_active(const struct gf_suppress_bank *b);

/**
 * Suppress (or delay) @p frames interleaved frames in place, any number per
 * call. Audio thread, RT-safe.
 */
void gf_suppress_bank_process(struct gf_suppress_bank *b, float *buf, uint32_t frames);

/** Back to the state new() made. Control thread, audio stopped. */
void gf_suppress_bank_reset(struct gf_suppress_bank *b);

#endif
