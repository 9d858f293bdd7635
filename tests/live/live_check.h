/**
 * @file live_check.h
 * test_live_jack's checks of a recording: the delay at which it matches the
 * reference convolution (FFT cross-correlation), and the match window by
 * window. Interleaved LIVE_CHECK_CH-channel float frames at LIVE_CHECK_RATE.
 */
#ifndef GPUFIR_TESTS_LIVE_CHECK_H
#define GPUFIR_TESTS_LIVE_CHECK_H

#include <stdint.h>

#define LIVE_CHECK_RATE 48000u
#define LIVE_CHECK_CH 2u
#define LIVE_CHECK_WINDOW 4800u	    /* frames per checked window (0.1 s) */
#define LIVE_CHECK_XCORR_LEN 16384u /* reference frames correlated to find the delay */
#define LIVE_CHECK_TOL 1e-5

/** Lag in [0, maxlag) at which @p got (channel 0) best matches the first
 *  LIVE_CHECK_XCORR_LEN frames of @p ref. */
long live_check_find_delay(const float *got, uint32_t got_frames, const double *ref, uint32_t maxlag);

/** rel. L2 of the window of @p got starting @p w frames after @p delay, against @p ref (frames long). */
double live_check_window_error(const float *got, long delay, const double *ref, uint32_t frames, uint32_t w);

/** @p got from frame @p delay on must equal @p ref (frames long), window by window; prints and CHECKs. */
void live_check_windows(const char *what, const float *got, uint32_t got_frames, long delay,
			const double *ref, uint32_t frames);

/** The first and last window index of @p got (from @p delay) over the tolerance
 *  against @p ref in *first, *last (-1 if none). */
void live_check_bad_windows(const float *got, long delay, const double *ref, uint32_t frames, long *first,
			    long *last);

/** A float WAV recording of LIVE_CHECK_CH channels at LIVE_CHECK_RATE (CHECKs that). */
float *live_check_read_wav(const char *path, uint32_t *frames);

#endif
