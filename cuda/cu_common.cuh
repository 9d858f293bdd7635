/**
 * @file cu_common.cuh
 * Internal to cuda/: the instance shared by the CUDA backend's files and the
 * per-channel input line both algorithms read their history from.
 *
 * Threads: everything here runs on the thread that owns the instance (control
 * thread for create/destroy, audio thread for prime/process). Functions that
 * run in process() only enqueue work on a stream: no allocation, no sync.
 */
#ifndef GPUFIR_CU_COMMON_CUH
#define GPUFIR_CU_COMMON_CUH

#include <cuda_runtime.h>
#include <cufft.h>
#include <stdint.h>

extern "C" {
#include "backend.h"
#include "error.h"
}

#include "cu_error.cuh"

/**
 * Per-channel linear input buffer: x at absolute frame t of channel c lives at
 * d_line[c * cap + (t - origin)]. At least @c keep frames before the current
 * position stay readable; when a chunk would run past the end, the newest
 * @c keep frames move to the front (cap >= 2*keep + chunk makes that move
 * non-overlapping and rare).
 */
struct gf_cu_line {
	float *d_line;
	int64_t cap;	/**< frames per channel */
	int64_t keep;	/**< history frames the algorithm reads before the current position */
	int64_t origin; /**< absolute frame of index 0 */
	int64_t pos;	/**< absolute frame of the next input */
};

struct gf_direct;
struct gf_fft;

/** One backend instance: one filter set on one device. */
struct gf_cuda_inst {
	int dev;
	uint32_t channels, taps, max_block;
	uint32_t chunk; /**< frames per staging chunk (the pipeline's unit) */
	enum gf_algo algo;
	cudaStream_t s_h2d, s_comp, s_d2h;
	cudaEvent_t ev_h2d[2], ev_comp[2], ev_d2h[2];
	float *h_in[2], *h_out[2]; /**< pinned staging, chunk * channels floats */
	float *d_in[2], *d_out[2]; /**< device staging, interleaved */
	struct gf_cu_line line;
	struct gf_direct *direct;
	struct gf_fft *fft;
	long fail_after; /**< GPUFIR_CUDA_FAIL_AFTER test hook; -1 = off */
	long hang_after; /**< GPUFIR_CUDA_HANG_AFTER test hook; -1 = off */
	int *h_hang, *d_hang;  /**< mapped flag the hook's kernel spins on (host and device address) */
	long long hang_cycles; /**< the hook kernel's bound: a few seconds of GPU clock */
	uint64_t calls;
	/* submit/finish: one call in flight (cuda_backend.cu) */
	uint32_t sub_frames;   /**< frames submitted, 0 = none */
	const float *sub_in;   /**< a large (pipelined) call's input, read in finish */
	bool sub_single;       /**< submitted on the single-chunk path: finish waits for ev_done */
	cudaEvent_t ev_done;   /**< recorded after the single-chunk path's download */
	struct gf_errbuf eb; /**< last error of prime/process */
	char desc[160];
};

/* Line helpers (cuda_line.cu). */
int gf_cu_line_init(struct gf_cu_line *l, uint32_t channels, int64_t keep, uint32_t chunk,
		    struct gf_errbuf *eb);
void gf_cu_line_free(struct gf_cu_line *l);
/** Zero the line and restart at position 0 (history = silence). */
int gf_cu_line_reset(struct gf_cu_line *l, uint32_t channels, cudaStream_t s, struct gf_errbuf *eb);
/**
 * Append @p frames interleaved frames from @p d_in (moving history first if
 * needed). With @p tail_only only the newest @c keep frames are written (the
 * caller reads this chunk's own frames from d_in). @p d_zero_out, when not
 * NULL, is cleared (frames*channels floats) in the same launch. Does not
 * advance pos. *j0 receives the line index of pos.
 */
int gf_cu_line_append(struct gf_cu_line *l, uint32_t channels, const float *d_in, uint32_t frames,
		      int tail_only, float *d_zero_out, cudaStream_t s, struct gf_errbuf *eb, int64_t *j0);

/* Direct algorithm (cuda_direct.cu). */
int gf_direct_new(struct gf_direct **out, struct gf_cuda_inst *in, const struct gf_filter_set *fs,
		  struct gf_errbuf *eb);
void gf_direct_free(struct gf_direct *d);
/** Convolve @p frames already-appended frames at line index @p j0 into @p d_out. */
int gf_direct_run(struct gf_direct *d, struct gf_cuda_inst *in, int64_t j0, uint32_t frames, float *d_out,
		  cudaStream_t s, struct gf_errbuf *eb);
/** Does this launch accumulate with atomics (d_out must be zeroed first)? */
int gf_direct_needs_zero(const struct gf_direct *d, uint32_t frames);
/** "constant bank N" or "global memory". */
const char *gf_direct_where(const struct gf_direct *d);
/** Force the launch shape (benchmarks): 0 = automatic, 4 or 16 outputs per thread. */
void gf_direct_force_r(struct gf_direct *d, int r);

/* Partitioned FFT algorithm (cuda_fft.cu). */
#define GF_FFT_MAX_P (1u << 20)	     /**< largest partition */
#define GF_FFT_LIVE_BLOCK 16384u /**< smaller max_block: live rule (latency), else the cost model */

/** Segmentation: hop B (power of two), window N = B + Hh, M partitions of B taps (or one of all). */
struct gf_fft_shape {
	uint32_t B, Hh, N, M;
};
/**
 * Shape for a filter of @p taps and calls of up to @p max_block frames, of
 * which at most @p max_frames go to the device at once (the staging chunk
 * before it is fitted to the hop). GPUFIR_CUDA_FFT_PARTITION or
 * GPUFIR_CUDA_FFT_HOP in the environment force one (benchmarks).
 */
void gf_fft_pick_shape(uint32_t taps, uint32_t max_block, uint32_t max_frames, struct gf_fft_shape *out);
int gf_fft_new(struct gf_fft **out, struct gf_cuda_inst *in, const struct gf_filter_set *fs,
	       const struct gf_fft_shape *shape, struct gf_errbuf *eb);
void gf_fft_free(struct gf_fft *f);
/** History frames the FFT algorithm keeps in the line (the window, N). */
uint32_t gf_fft_keep(const struct gf_fft_shape *shape);
/** Hop B (the partition in the UPOLS shape). */
uint32_t gf_fft_partition(const struct gf_fft *f);
/** FFT size N. */
uint32_t gf_fft_size(const struct gf_fft *f);
/** Reset spectra (history = silence). */
int gf_fft_reset(struct gf_fft *f, struct gf_cuda_inst *in, cudaStream_t s, struct gf_errbuf *eb);
/**
 * Process the @p frames interleaved frames in @p d_in; the line holds the
 * history before them (pos at index @p j0; line.pos not yet advanced). With
 * @p d_out NULL only the spectra are updated (priming).
 */
int gf_fft_run(struct gf_fft *f, struct gf_cuda_inst *in, const float *d_in, int64_t j0, uint32_t frames,
	       float *d_out, cudaStream_t s, struct gf_errbuf *eb);

#endif
