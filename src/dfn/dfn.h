/**
 * @file dfn.h
 * gpufir's own DeepFilterNet3 inference on the CPU: a batch of independent
 * channels, one 480-sample hop (10 ms at 48 kHz) at a time, each channel's
 * output the same as libdeepfilter's df_process_frame() on that channel alone
 * (docs/neural.md states the tolerance). It is the reference the CUDA forward
 * (cuda/dfn/) is tested against.
 *
 * Layer dfn (src/dfn/). dfn_cpu_new/_free: control thread, allocate and plan
 * FFTs. dfn_cpu_process: one thread at a time per instance, RT-safe (nothing
 * allocated, locked, logged or read from files).
 */
#ifndef GPUFIR_DFN_H
#define GPUFIR_DFN_H

#include "dfn_model.h"
#include "dfn_net.h"
#include "dfn_spectral.h"

/** Samples a channel's output lags its input, as libdeepfilter's does: the STFT's (window less hop,
 * 480) and the DFN_DF_LOOKAHEAD hops the networks look ahead (960): 1440, 30 ms. */
#define DFN_LATENCY ((uint32_t)(DFN_WIN - DFN_HOP + DFN_DF_LOOKAHEAD * DFN_HOP))

/** The run-time settings of libDF's RuntimeParams, as its C API sets them. */
struct dfn_params {
	float atten_lim_db; /**< limit on the attenuation, dB; >= 100 means none (libdeepfilter: df_create) */
	float post_filter_beta;	 /**< post-filter strength; 0 turns it off (the C API's default) */
	float min_db_thresh;	 /**< below this local SNR (dB) the hop is noise: gains 0, no deep filter */
	float max_db_erb_thresh; /**< above it the hop is clean: neither stage runs */
	float max_db_df_thresh;	 /**< above it only the ERB mask runs */
};

/** libdeepfilter's local-SNR thresholds, dB (dfn_params_default), the only ones the GPU forward runs. */
#define DFN_MIN_DB_THRESH (-15.0f)
#define DFN_MAX_DB_ERB_THRESH 35.0f
#define DFN_MAX_DB_DF_THRESH 35.0f

/** libdeepfilter's C API defaults: no attenuation limit, no post-filter, thresholds -15/35/35 dB. */
void dfn_params_default(struct dfn_params *p);

struct dfn_cpu;

/**
 * A forward instance for @p channels channels on model @p m (which must
 * outlive it), every channel at the reference's initial state.
 * @return 0, GF_E_INVAL (channels < 1, a parameter out of range: named in
 *         @p eb), GF_E_NOMEM or GF_E_FFT
 */
int dfn_cpu_new(const struct dfn_model *m, int channels, const struct dfn_params *p, struct dfn_cpu **out,
		struct gf_errbuf *eb);

/**
 * One hop of every channel: @p in and @p out are [channels][480] (planar),
 * @p lsnr (NULL allowed) gets each channel's local SNR estimate in dB.
 * @p out lags @p in by DFN_LATENCY samples. A NaN or Inf input
 * sample counts as 0 (libdeepfilter would carry it in its state for good).
 * RT-safe.
 */
void dfn_cpu_process(struct dfn_cpu *d, const float *in, float *out, float *lsnr);

/**
 * Set every channel's attenuation limit, dB (libDF's df_set_atten_lim: >= 100
 * means none), from the next hop. The thread that runs dfn_cpu_process, between
 * hops. RT-safe.
 */
void dfn_cpu_set_atten_lim(struct dfn_cpu *d, float db);

/**
 * Every channel back to the state dfn_cpu_new() made (the attenuation limit
 * kept): a standby that takes over a stream starts clean. The thread that
 * runs dfn_cpu_process, between hops. RT-safe (memsets).
 */
void dfn_cpu_reset(struct dfn_cpu *d);

/** Free an instance (NULL is fine). */
void dfn_cpu_free(struct dfn_cpu *d);

#endif
