/**
 * @file denoise.h
 * A filter learned from a noise sample: design = "denoise".
 *
 * The noise file's power spectrum is measured by Welch's method (Hann
 * segments of GF_DENOISE_SEGMENT_FACTOR x taps rounded up to a power of two,
 * half overlapping, every channel averaged), smoothed across frequency over
 * 1/6 octave, and turned into a static Wiener gain S / (S + N), bounded
 * below by 10^(-reduction_db / 20). The program's spectrum S + N = P is
 * measured the same way where it is known (offline: the input file), so
 *
 *     G(f) = max(1 - N(f) / P(f), 10^(-reduction_db / 20))
 *
 * Where it is not (live), the program is assumed flat at the noise's floor
 * Nref, the 10th percentile of N over 20 Hz .. 0.45 rate, and Wiener's
 * Nref / (Nref + N) is scaled to 0 dB there: G = min(2 Nref / (Nref + N), 1),
 * bounded the same way. Bands where the noise stands above its floor (hum,
 * rumble, a fan's tones, hiss) are cut, about 3 dB per doubling of the noise
 * power beyond twice the floor; flat (white) noise is left alone, since a
 * static filter cannot separate it from the program without knowing the
 * program. The FIR is that zero-phase gain sampled,
 * Hann-windowed to @p taps, linear phase (odd taps); the config's phase = "minimum" converts it.
 *
 * Control thread only (reads the file, allocates, plans FFTW transforms).
 * Errors: "KEY: why" in the gf_errbuf, as design.h's.
 */
#ifndef GPUFIR_DENOISE_H
#define GPUFIR_DENOISE_H

#include <stdint.h>

#include "error.h"

#define GF_DENOISE_DEFAULT_TAPS 4095u
#define GF_DENOISE_DEFAULT_REDUCTION_DB 12.0
#define GF_DENOISE_MAX_REDUCTION_DB 60.0
/** Welch segment length / taps (then a power of two). */
#define GF_DENOISE_SEGMENT_FACTOR 2u
/** Fewest Welch segments a noise sample must give (a shorter one is an error). */
#define GF_DENOISE_MIN_SEGMENTS 8u
/** A noise sample whose RMS is below this (dBFS) is silence, not noise. */
#define GF_DENOISE_SILENCE_DBFS -100.0

struct gf_denoise_report {
	double seconds;	     /**< noise analysed */
	uint32_t segments;   /**< Welch segments averaged */
	double rms_dbfs;     /**< the sample's level */
	double max_cut_db;   /**< deepest cut of the gain (<= reduction_db) */
	double max_cut_hz;   /**< where it is */
	double cut_fraction; /**< fraction of the band cut by 3 dB or more */
	int from_program;    /**< 1: the gain used the program's measured spectrum */
};

/**
 * Design from the noise file @p path at @p rate: @p taps odd (0 = the
 * default), @p reduction_db the most any band is cut (0..60); @p program
 * (may be NULL) the file to be filtered, whose spectrum makes the gain Wiener's.
 * @return 0, GF_E_CONFIG ("noise: why": unreadable, another rate, silent, too
 * short), or GF_E_NOMEM. @p rep (may be NULL) says what was found.
 */
int gf_denoise_design(const char *path, const char *program, double rate, uint32_t taps, double reduction_db,
		      double **h, uint32_t *n, struct gf_denoise_report *rep, struct gf_errbuf *eb);

#endif
