/**
 * @file minphase.h
 * Minimum-phase conversion of an FIR and the group-delay figures that show
 * what it buys.
 *
 * gf_minphase keeps |H(f)| and moves every zero inside (or onto) the unit
 * circle, by the homomorphic (real-cepstrum) method: fold the cepstrum of
 * log|H| onto its causal half and exponentiate. The cepstrum of a filter with
 * zeros on the unit circle (stopbands, notches) decays slowly, so the FFT is
 * oversampled: at 16x a 243-tap low-pass is off by 0.028 dB, at 256x by
 * 0.0006 dB (test_minphase measures it). Exact notch zeros become notches
 * about 90 dB deep (the FFT grid does not sample the zero itself).
 *
 * Control thread only (allocates, plans FFTW transforms; FFTW's planner is not
 * thread-safe, and only the control thread plans in double precision).
 */
#ifndef GPUFIR_MINPHASE_H
#define GPUFIR_MINPHASE_H

#include <stdint.h>

#include "error.h"

/** FFT length / filter length: 256 while the FFT stays within 2^23 points, else at least 16. */
#define GF_MINPHASE_OVERSAMPLE 256u
#define GF_MINPHASE_MIN_OVERSAMPLE 16u
/** Longest filter gf_minphase converts (its FFT is 2^24 points at the limit). */
#define GF_MINPHASE_MAX_TAPS (1u << 20)
/** log|H| is clamped this far below the filter's peak: exact zeros (notches) have no logarithm. */
#define GF_MINPHASE_FLOOR_DB 200.0

/**
 * Replace @p h (length @p n) by its minimum-phase counterpart of the same
 * length and magnitude response.
 * @return 0, GF_E_TOOLONG (n > GF_MINPHASE_MAX_TAPS), GF_E_INVAL (all zeros) or GF_E_NOMEM
 *         (the message, how much its FFT needs against what is available, in @p eb: may be NULL).
 */
int gf_minphase(double *h, uint32_t n, struct gf_errbuf *eb);

/** Group delay of @p h in samples at @p freq_hz: Re{sum k h[k] z^-k / H(z)} on the unit circle. */
double gf_group_delay(const double *h, uint32_t n, double freq_hz, double rate);

/**
 * Group delay over [lo_hz, hi_hz] (clipped to below rate/2) in samples, on a
 * grid of @p points: its smallest, largest and mean value. Frequencies where
 * |H| is more than 20 dB below the filter's peak in the band are skipped
 * (group delay means little in a stopband). @return number of points used.
 */
uint32_t gf_group_delay_band(const double *h, uint32_t n, double rate, double lo_hz, double hi_hz,
			     uint32_t points, double *min, double *max, double *mean);

/** The band --check-config reports group delay over: where speech lives. */
#define GF_DELAY_BAND_LO_HZ 300.0
#define GF_DELAY_BAND_HI_HZ 3000.0

#endif
