/**
 * @file dfn_gpu.h
 * gpufir's DeepFilterNet3 forward on the GPU: every channel of a hop in one
 * launch sequence (cuFFT for the STFT, batched kernels for the convolutions,
 * grouped linears, GRUs as one GEMM over all channels, the decoders and the
 * spectral stages). Computes what the CPU forward (src/dfn/dfn.h) computes,
 * channel by channel, within docs/neural.md's tolerance. A plain C header: no
 * CUDA type crosses it.
 *
 * dfn_gpu_new/_free: control thread; allocate device, pinned and FFT memory.
 * dfn_gpu_process: one thread at a time per instance; allocates nothing; it
 * waits for the GPU (the stage that runs it live bounds that wait).
 */
#ifndef GPUFIR_DFN_GPU_H
#define GPUFIR_DFN_GPU_H

#include "dfn.h"
#include "dfn_spectral.h"

#ifdef __cplusplus
extern "C" {
#endif

struct dfn_gpu;

/**
 * A forward instance for @p channels channels on CUDA device 0. The weights
 * are copied to the device (@p m may be freed after). @p k: dfn_consts_init().
 * The GPU runs both decoders on every hop, which is what libdeepfilter's
 * thresholds (dfn_params_default) amount to; other thresholds, and an
 * attenuation limit under 0.01 dB (a pass-through), are refused.
 * @return 0, GF_E_INVAL (named in @p eb), GF_E_NOGPU, GF_E_CUDA or GF_E_NOMEM
 */
int dfn_gpu_new(const struct dfn_model *m, const struct dfn_consts *k, int channels, const struct dfn_params *p,
		struct dfn_gpu **out, struct gf_errbuf *eb);

/**
 * One hop of every channel: @p in and @p out are host arrays [channels][480],
 * @p lsnr (NULL allowed) each channel's local SNR. Copies up, runs, copies
 * back and waits. @return 0 or GF_E_CUDA
 */
int dfn_gpu_process(struct dfn_gpu *d, const float *in, float *out, float *lsnr, struct gf_errbuf *eb);

/** Free an instance (NULL is fine). */
void dfn_gpu_free(struct dfn_gpu *d);

#ifdef __cplusplus
}
#endif

#endif
