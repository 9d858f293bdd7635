/**
 * @file dfn_spectral.h
 * DeepFilterNet3's signal side around the networks, as libDF computes it:
 * the STFT (960-point Vorbis window, hop 480), the ERB and complex features
 * with their exponential normalisation, the ERB mask, the deep filter, the
 * post-filter, the attenuation limit and the overlap-add synthesis.
 *
 * Any thread; RT-safe: nothing here allocates, locks or does I/O (the FFTs
 * are the caller's).
 */
#ifndef GPUFIR_DFN_SPECTRAL_H
#define GPUFIR_DFN_SPECTRAL_H

#include <math.h>

#include "dfn_net.h"

enum {
	DFN_HOP = 480,		    /**< samples per hop at 48 kHz */
	DFN_WIN = 960,		    /**< FFT size and window length */
	DFN_FREQS = DFN_WIN / 2 + 1 /**< bins of a spectrum */
};

/**
 * libDF's set_atten_lim as the gain the spectrum is mixed back with: a limit of 100 dB or more is
 * none (0), one under 0.01 dB no reduction at all (1). The GPU's forward (cuda/dfn/dfn_gpu.cu,
 * which uploads the gain with each hop) keeps its own copy of the rule, atten_gain.
 */
static inline float dfn_atten_gain(float db)
{
	float lim = fabsf(db);
	if (lim >= 100.0f)
		return 0.0f;
	if (lim < 0.01f)
		return 1.0f;
	return powf(10.0f, -lim / 20.0f);
}

/** Constants shared by every channel: window, ERB band widths, normalisation factor. */
struct dfn_consts {
	float window[DFN_WIN];
	int erb_width[DFN_NB_ERB];   /**< bins per ERB band, summing to DFN_FREQS */
	float alpha;		     /**< the normalisation's smoothing factor per hop */
	float mean_init[DFN_NB_ERB]; /**< a channel's ERB normalisation at its start (dfn_norm_init) */
	float unit_init[DFN_NB_DF];  /**< its complex normalisation at its start */
};

/** Fill @p k (libDF's DFState::new, erb_fb and calc_norm_alpha). */
void dfn_consts_init(struct dfn_consts *k);

/** One channel's normalisation state at its initial values (libDF's init_norm_states). */
void dfn_norm_init(float *mean_norm, float *unit_norm);

/** The windowed frame to transform: the last hop (@p mem) then @p in; @p mem becomes @p in. */
void dfn_analysis_frame(const struct dfn_consts *k, const float *in, float *mem, float *frame);

/**
 * Features of spectrum @p spec ([bin][re, im], already scaled by 1/960):
 * feat_erb [32] (band power in dB, mean-normalised, /40) and feat_spec
 * [2][96] (re plane, im plane, unit-normalised); updates the states.
 */
void dfn_features(const struct dfn_consts *k, const float *spec, float *mean_norm, float *unit_norm,
		  float *feat_erb, float *feat_spec);

/** Multiply each bin of @p spec by its ERB band's gain. */
void dfn_apply_mask(const struct dfn_consts *k, const float *gains, float *spec);

/** The deep filter into bins 0..95 of @p out: sum over taps of spec[tap][bin] coef[bin][tap] (complex). */
void dfn_deep_filter(const float *const spec[DFN_DF_ORDER], const float *coefs, float *out);

/** libDF's post-filter with @p beta (> 0) on the first 480 bins (its loop takes four bins at a time). */
void dfn_post_filter(const float *noisy, float *enh, float beta);

/** The overlap-add: @p frame (the inverse FFT, unscaled) windowed; out = first half + mem, mem = second half.
 */
void dfn_synthesis(const struct dfn_consts *k, float *frame, float *mem, float *out);

#endif
