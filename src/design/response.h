/**
 * @file response.h
 * What a FIR does, seen from outside: its frequency response, group delay,
 * and the figures --check-config reports (DC and peak gain, the worst-case
 * gain a full-scale input can reach, the passband delay).
 *
 * Pure computation in double precision on any thread; gf_response_stats
 * allocates (control thread, never on the audio path).
 */
#ifndef GPUFIR_RESPONSE_H
#define GPUFIR_RESPONSE_H

#include <stdint.h>

#include "error.h"

/**
 * H(f) = sum_k h[k] e^{-j 2 pi f k / rate}, evaluated directly (O(n)), into
 * @p re and @p im.
 */
void gf_response_at(const float *h, uint32_t n, double rate, double freq_hz, double *re, double *im);

/**
 * Group delay -d(phase)/d(omega) at @p freq_hz, in samples: Re(sum k h[k] z^-k / H).
 * Where |H| is 0 the group delay is undefined: the result is NAN.
 */
double gf_response_group_delay(const float *h, uint32_t n, double rate, double freq_hz);

/**
 * |H(f)| and the group delay (samples) at @p freq_hz in one pass; *gd is NAN
 * where |H| is 0.
 */
void gf_response_eval(const float *h, uint32_t n, double rate, double freq_hz, double *mag, double *gd);

/**
 * |H| and the group delay (samples; NAN where |H| is 0) at the @p nf
 * frequencies in @p freqs. Each point is evaluated directly while n x nf
 * stays under 4 Mi; above, both come from one FFT of the zero-padded taps
 * (sized as for gf_response_stats: at least 8 n up to 2 Mi points) and each
 * frequency moves to its nearest bin, written back into @p freqs: the values
 * are exact at the frequencies returned, and a megatap filter costs two
 * FFTs, not nf passes over its taps. A frequency already on a bin stays.
 * @return 0 or GF_E_NOMEM
 */
int gf_response_curve(const float *h, uint32_t n, double rate, double *freqs, size_t nf, double *mag,
		      double *gd);

struct gf_response_stats {
	double dc_gain;	      /**< H(0) = sum h (signed) */
	double peak_gain;     /**< max |H(f)| over 0..rate/2 */
	double peak_hz;	      /**< where (the lowest such frequency, within 1e-9 relative) */
	double abs_sum;	      /**< sum |h|: the largest output a full-scale input can give */
	double delay_samples; /**< passband delay: group delay averaged, weighted by |H|^2, over
				   the frequencies within 3 dB of the peak; NAN for an all-zero filter */
};

/**
 * Compute the figures of @p h (n taps) at @p rate: an FFT (zero-padded to
 * 8 n rounded up to a power of two, at least 65536 and at most 2 Mi points
 * unless n itself is longer), the peak refined by direct evaluation.
 * @return 0 or GF_E_NOMEM
 */
int gf_response_stats(const float *h, uint32_t n, double rate, struct gf_response_stats *st);

#endif
