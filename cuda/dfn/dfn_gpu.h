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
 * dfn_gpu_submit/_collect/_process: one thread at a time per instance (the
 * audio or worker thread): nothing allocated, locked or logged; the GPU is
 * waited for by polling its event until a deadline, never by a blocking
 * synchronize.
 */
#ifndef GPUFIR_DFN_GPU_H
#define GPUFIR_DFN_GPU_H

#include "dfn.h"
#include "dfn_spectral.h"

#ifdef __cplusplus
extern "C" {
#endif

struct dfn_gpu;

/* A hop still in flight this long after its submission is a hung or lost GPU, not a slow one (a
 * thousand channels' hop takes milliseconds): the suppressor's bound (GF_SUPPRESS_GPU_HOP_WAIT_NS). */
#define DFN_GPU_HOP_WAIT_NS 250000000ull

/* The longest reset() waits for a hop still in flight, and then for its own memsets. */
#define DFN_GPU_RESET_WAIT_NS 100000000ull

/* dfn_gpu_collect's answer when the hop was not back by the caller's deadline and is not hung: no
 * failure; the hop stays in flight and a later collect takes it. */
#define DFN_GPU_LATE 1

/**
 * A forward instance for @p channels channels on the calling thread's CUDA
 * device (cudaSetDevice; the threads that run its hops select the same). The weights
 * are copied to the device (@p m may be freed after). @p k: dfn_consts_init().
 * The GPU runs both decoders on every hop, which is what libdeepfilter's
 * thresholds (dfn_params_default) amount to; other thresholds, and an
 * attenuation limit under 0.01 dB (a pass-through), are refused.
 * @return 0, GF_E_INVAL (named in @p eb), GF_E_NOGPU, GF_E_CUDA or GF_E_NOMEM
 */
int dfn_gpu_new(const struct dfn_model *m, const struct dfn_consts *k, int channels, const struct dfn_params *p,
		struct dfn_gpu **out, struct gf_errbuf *eb);

/**
 * Start one hop of every channel: @p in is a host array [channels][480],
 * copied to pinned memory before this returns; the hop's copies and kernels
 * are queued. @return 0, GF_E_BUSY (the last hop not collected yet) or GF_E_CUDA
 */
int dfn_gpu_submit(struct dfn_gpu *d, const float *in, struct gf_errbuf *eb);

/**
 * Wait for the hop submitted last until @p deadline_ns (gf_now_ns() time; 0:
 * until it counts as hung) and copy its output to @p out [channels][480] and
 * each channel's local SNR to @p lsnr (NULL allowed).
 * @return 0, DFN_GPU_LATE (not back yet, not hung: collect again), GF_E_TIMEOUT
 *         (in flight DFN_GPU_HOP_WAIT_NS: hung), GF_E_INVAL (nothing submitted) or GF_E_CUDA
 */
int dfn_gpu_collect(struct dfn_gpu *d, float *out, float *lsnr, uint64_t deadline_ns, struct gf_errbuf *eb);

/** dfn_gpu_submit, then dfn_gpu_collect until the hop is back or hung. @return 0 or as they do */
int dfn_gpu_process(struct dfn_gpu *d, const float *in, float *out, float *lsnr, struct gf_errbuf *eb);

/**
 * From now on run each hop as one CUDA graph (captured here, 15 of them: the
 * hop's arguments repeat every 15 hops) instead of about 60 launches: the
 * same work in the same order, at a fraction of the host's launch cost.
 * Control thread, no hop in flight. @return 0, GF_E_BUSY or GF_E_CUDA (the
 * instance then goes on with launches)
 */
int dfn_gpu_use_graphs(struct dfn_gpu *d, struct gf_errbuf *eb);

/** The phases of a hop, in order: copy up, STFT and features, encoder, ERB decoder, deep-filter
 * decoder, spectral stages and synthesis, copy back. */
#define DFN_GPU_PHASES 7
/** Where a hop's time went on the GPU, ms per phase (events between them). */
struct dfn_gpu_phases {
	float ms[DFN_GPU_PHASES];
};

/**
 * dfn_gpu_process with the GPU time of each phase into @p ph: for the
 * benchmark's breakdown (compute, copies; what the host adds is launches).
 * Control thread: creates and destroys events. @return 0 or as dfn_gpu_process
 */
int dfn_gpu_profile(struct dfn_gpu *d, const float *in, float *out, struct dfn_gpu_phases *ph,
		    struct gf_errbuf *eb);

/**
 * The attenuation limit, dB (libDF's: >= 100 none, under 0.01 a pass-through of the
 * delayed spectrum), from the next hop submitted: the value goes up with each hop,
 * so a captured graph takes it too. The thread that submits. RT-safe.
 * @pre no hop in flight (collected, or the instance reset): the value is written
 * into the pinned memory that a submitted hop's copy reads, unguarded.
 */
void dfn_gpu_set_atten_lim(struct dfn_gpu *d, float db);

/**
 * Every channel back to the state dfn_gpu_new() made, after waiting at most
 * DFN_GPU_RESET_WAIT_NS for a hop in flight (a hop never collected is
 * dropped). Control thread. @return 0, GF_E_TIMEOUT (a hop still in flight:
 * a hung GPU, nothing changed) or GF_E_CUDA
 */
int dfn_gpu_reset(struct dfn_gpu *d, struct gf_errbuf *eb);

/** Free an instance (NULL is fine). */
void dfn_gpu_free(struct dfn_gpu *d);

#ifdef __cplusplus
}
#endif

#endif
