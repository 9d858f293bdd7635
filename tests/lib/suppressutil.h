/**
 * @file suppressutil.h
 * For the noise suppressor's tests, on the CPU and the GPU, of the suppressor
 * and of its bank: a speech-like signal, SI-SDR, the worst channel's
 * difference, and banks of channels of two settings over tones in noise.
 */
#ifndef GPUFIR_TESTS_SUPPRESSUTIL_H
#define GPUFIR_TESTS_SUPPRESSUTIL_H

#include <stdint.h>

#include "suppress_bank.h"

/**
 * Speech-like, mono, at @p rate: voiced bursts of 80-300 ms with a gliding
 * pitch, falling harmonics and a formant, a syllable envelope, pauses between
 * words. @return a calloc'ed buffer of @p frames samples.
 */
float *gf_test_speech_like(uint32_t frames, uint32_t rate, uint64_t *st);

/** Scale-invariant SDR of the estimate @p est against the reference @p ref over [from, n), in dB. */
double gf_test_si_sdr(const float *ref, const float *est, uint32_t from, uint32_t n);

/**
 * The largest relative L2 difference of one channel of @p got against
 * @p want (@p channels interleaved, @p frames frames); the largest sample
 * difference into @p max_abs (may be NULL).
 */
double gf_test_worst_channel_rel_l2(const float *got, const float *want, uint32_t channels, uint32_t frames,
				    double *max_abs);

/** Which channels of a test bank run which setting. */
struct gf_test_bank_mix {
	uint32_t channels, rate;
	uint32_t group;	 /**< channels 0..group-1: group_params (the set the GPU takes) */
	uint32_t others; /**< the next ones: other_params; the rest have no suppressor */
	const struct gf_suppress_params *group_params, *other_params;
};

/** The bank of @p m (gf_suppress_bank_new_ex with @p o; NULL: the CPU), or fail the test. */
struct gf_suppress_bank *gf_test_bank(const struct gf_test_bank_mix *m,
				      const struct gf_suppress_bank_opts *o);

/**
 * @p frames frames of @p channels: channel c a tone of 0.3 at @p step (c + 1)
 * radians a frame, on for the first half of every @p cycle frames, over
 * white noise of 0.02. @return a malloc'ed buffer.
 */
float *gf_test_bank_input(uint32_t frames, uint32_t channels, double step, uint32_t cycle, uint64_t *st);

/** What gf_test_bank_run saw. */
struct gf_test_bank_calls {
	int first;     /**< index of the first call that failed, -1 if none did */
	int first_err; /**< its GF_E_* */
	int failures;  /**< calls that failed */
};

/** Every call of @p call frames of @p frames (@p channels interleaved) through @p b. */
struct gf_test_bank_calls gf_test_bank_run(struct gf_suppress_bank *b, float *buf, uint32_t channels,
					   uint32_t frames, uint32_t call);

#endif
