/**
 * @file humsig.h
 * Test signals for the hum detector: a speech-like voice (glottal pulses at
 * a gliding, jittered pitch through two formant resonators, in syllables
 * with pauses and unvoiced ones, over a quiet white floor) and mains hum.
 */
#ifndef GPUFIR_TESTS_HUMSIG_H
#define GPUFIR_TESTS_HUMSIG_H

#include <stddef.h>
#include <stdint.h>

/** Write @p n samples of speech-like signal peaking near @p peak_dbfs, noise floor at -70 dBFS. */
void gf_test_speechlike(float *x, size_t n, double rate, double peak_dbfs, uint64_t *rng);

/**
 * Add hum at @p f0 Hz to samples [@p from, @p to) of @p x (every @p stride-th float: interleaved
 * channels): harmonic @p harm[i] at @p dbfs[i] (peak), @p nh of them, phases from sample 0.
 */
void gf_test_add_hum(float *x, size_t from, size_t to, size_t stride, double rate, double f0,
		     const uint32_t *harm, const double *dbfs, size_t nh);

/** RMS in dBFS of the component at @p f_hz in @p n samples of @p x (every @p stride-th float). */
double gf_test_tone_dbfs(const float *x, size_t n, size_t stride, double rate, double f_hz);

#endif
