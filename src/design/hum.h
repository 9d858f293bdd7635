/**
 * @file hum.h
 * Mains hum found, not guessed: freq_hz = "auto" on a notch.
 *
 * The input (channels mixed, at most GF_HUM_MAX_SECONDS and GF_HUM_MAX_SAMPLES from its start) is
 * Hann-windowed and transformed once, zero-padded 2x. For each mains family
 * (50 and 60 Hz) a harmonic sum over fundamentals within +-0.5 Hz of it, in
 * 0.002 Hz steps, picks the best fundamental; each harmonic's peak is then
 * refined by parabolic interpolation, and the fundamental is their weighted
 * fit. A harmonic "stands above the noise" when its peak is at least
 * GF_HUM_MIN_SNR_DB above the mean of the spectrum within +-5 Hz of it
 * (the +-1 Hz around the peak left out).
 *
 * Control thread only (reads the file, allocates, plans FFTW transforms).
 */
#ifndef GPUFIR_HUM_H
#define GPUFIR_HUM_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define GF_HUM_MAX_SECONDS 30.0
/** And at most this many samples (2^21: 44 s at 48 kHz, 5.5 s at 384 kHz), which bounds the FFT. */
#define GF_HUM_MAX_SAMPLES (1u << 21)
#define GF_HUM_MIN_SNR_DB 12.0
#define GF_HUM_MAX_HARMONICS 128u
/** With freq_hz = "auto", harmonics (the highest one looked at) defaults to this. */
#define GF_HUM_DEFAULT_HARMONICS 16u

struct gf_hum {
	double f0_hz;				 /**< the fundamental found; 0 = no hum above the noise */
	uint32_t n;				 /**< harmonics that stand above the noise */
	uint32_t harmonic[GF_HUM_MAX_HARMONICS]; /**< their numbers (1 = the fundamental), ascending */
	double snr_db[GF_HUM_MAX_HARMONICS];	 /**< and how far above the noise each is */
	double seconds;				 /**< audio analysed */
};

/**
 * Look for mains hum in @p path (at @p rate; its rate must match), up to
 * harmonic @p max_harmonic. @return 0 (h->f0_hz = 0 when none is found),
 * GF_E_CONFIG ("freq_hz: why": unreadable, another rate, too short) or GF_E_NOMEM.
 */
int gf_hum_detect(const char *path, double rate, uint32_t max_harmonic, struct gf_hum *h,
		  struct gf_errbuf *eb);

/**
 * The same on @p n samples in memory (mono, at @p rate): the live detector's
 * window (hum_track.h). @return 0, GF_E_CONFIG (under 1 s) or GF_E_NOMEM.
 */
int gf_hum_detect_samples(const double *x, size_t n, double rate, uint32_t max_harmonic, struct gf_hum *h,
			  struct gf_errbuf *eb);

#endif
