/**
 * @file filter_set.h
 * A set of FIR filters, one per channel, all of the same length
 * (shorter ones are zero-padded). This is what the engine convolves with.
 */
#ifndef GPUFIR_FILTER_SET_H
#define GPUFIR_FILTER_SET_H

#include <stdint.h>

struct gf_filter_set {
	uint32_t channels; /**< number of FIRs, one per audio channel */
	uint32_t taps;	   /**< length of every FIR, >= 1 */
	float *coeffs;	   /**< channels * taps, channel-major: coeffs[c * taps + k] */
};

/** Allocate a zeroed set. Control thread. @return 0 or GF_E_NOMEM / GF_E_INVAL */
int gf_filter_set_new(struct gf_filter_set **out, uint32_t channels, uint32_t taps);

/** Deep copy. */
int gf_filter_set_dup(struct gf_filter_set **out, const struct gf_filter_set *src);

/** Coefficients of channel @p c. */
static inline float *gf_filter_set_channel(const struct gf_filter_set *fs, uint32_t c)
{
	return fs->coeffs + (uint64_t)c * fs->taps;
}

/** @return GF_E_NONFINITE if any coefficient is NaN or Inf, else 0. */
int gf_filter_set_check_finite(const struct gf_filter_set *fs);

/** Accepts NULL. */
void gf_filter_set_free(struct gf_filter_set *fs);

#endif
