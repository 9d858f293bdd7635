/**
 * @file cu_fft.cuh
 * Internal to cuda/: the partitioned FFT algorithm (cu_fft.cu; its shape:
 * cu_fft_shape.cu; its work: cu_fft_run.cu): its functions, its state, which
 * the persistent path's FFT tail (cu_hybrid.cu) also reads and extends, and
 * the complex multiply-adds both use.
 */
#ifndef GPUFIR_CU_FFT_CUH
#define GPUFIR_CU_FFT_CUH

#include "cu_common.cuh"

/* Partitioned FFT algorithm (cu_fft.cu; its shape: cu_fft_shape.cu; its work: cu_fft_run.cu). */
#define GF_CU_FFT_MAX_P (1u << 20)	 /**< largest partition */
#define GF_CU_FFT_LIVE_BLOCK 16384u /**< smaller max_block: live rule (latency), else the cost model */

/** Segmentation: hop B (power of two), window N = B + Hh, M partitions of B taps (or one of all). */
struct gf_cu_fft_shape {
	uint32_t B, Hh, N, M;
};
/**
 * Shape for a filter of @p taps and calls of up to @p max_block frames, of
 * which at most @p max_frames go to the device at once (the staging chunk
 * before it is fitted to the hop). GPUFIR_CUDA_FFT_PARTITION or
 * GPUFIR_CUDA_FFT_HOP in the environment force one (benchmarks).
 */
void gf_cu_fft_pick_shape(uint32_t taps, uint32_t max_block, uint32_t max_frames,
			  struct gf_cu_fft_shape *out);
int gf_cu_fft_new(struct gf_cu_fft **out, struct gf_cu_inst *in, const struct gf_filter_set *fs,
		  const struct gf_cu_fft_shape *shape, struct gf_errbuf *eb);
void gf_cu_fft_free(struct gf_cu_fft *f);
/** Does an instance of @p M partitions for calls of @p max_block frames sum its tails ahead (live)? */
int gf_cu_fft_sums_ahead(uint32_t M, uint32_t max_block);
/** History frames the FFT algorithm keeps in the line (the window, N). */
uint32_t gf_cu_fft_keep(const struct gf_cu_fft_shape *shape);
/** Hop B (the partition in the UPOLS shape). */
uint32_t gf_cu_fft_partition(const struct gf_cu_fft *f);
/** FFT size N. */
uint32_t gf_cu_fft_size(const struct gf_cu_fft *f);
/** Reset spectra (history = silence). */
int gf_cu_fft_reset(struct gf_cu_fft *f, struct gf_cu_inst *in, cudaStream_t s, struct gf_errbuf *eb);
/**
 * Process the @p frames interleaved frames in @p d_in; the line holds the
 * history before them (pos at index @p j0; line.pos not yet advanced). With
 * @p d_out NULL only the spectra are updated (priming).
 */
int gf_cu_fft_run(struct gf_cu_fft *f, struct gf_cu_inst *in, const float *d_in, int64_t j0, uint32_t frames,
		  float *d_out, cudaStream_t s, struct gf_errbuf *eb);
/** Go on from stream position @p pos after another path ran (the spectrum ring holds every
 * completed segment): nothing cached, the tails summed ahead as after a prime (enqueued on @p s). */
int gf_cu_fft_resume(struct gf_cu_fft *f, int64_t pos, cudaStream_t s, struct gf_errbuf *eb);
/** Load the staged path's kernels now (lazy loading, docs/cuda.md). */
void gf_cu_fft_preload(void);
/** Completion words for the next gf_cu_fft_run's last kernel (NULL: none); returns how many it writes. */
unsigned gf_cu_fft_set_done(struct gf_cu_fft *f, unsigned *done, unsigned seq, uint32_t frames);
/**
 * Batched prime: the spectra of the last M segments of the @p n history frames
 * at @p d_hist (interleaved, on the device), in passes of one gather and one
 * batched R2C each. The line must already hold the newest frames.
 */
int gf_cu_fft_prime(struct gf_cu_fft *f, struct gf_cu_inst *in, const float *d_hist, uint32_t n,
		    cudaStream_t s, struct gf_errbuf *eb);

#define GF_CU_FFT_MAX_PLANS 24

struct gf_cu_fft {
	uint32_t B, Hh, N, NB, M, L, C, Mr, gmax;
	uint32_t lb; /**< log2(B) */
	cufftComplex *d_H; /**< [M][C][NB], scaled by 1/N */
	cufftComplex *d_X; /**< ring [Mr][C][NB] */
	cufftComplex *d_T; /**< [2][C][NB] cached tail of segment tf_seg, double-buffered */
	cufftComplex *d_Y; /**< [gmax][C][NB] */
	float *d_W;	   /**< [gmax][C][N] windows */
	float *d_y;	   /**< [gmax][C][N] inverse transforms */
	void *d_work;
	int nplans;
	cufftHandle r2c[GF_CU_FFT_MAX_PLANS], c2r[GF_CU_FFT_MAX_PLANS]; /**< batch (1 << i) * C, from the plan cache */
	int made_r2c, made_c2r;
	cufftHandle r2c_prime; /**< batch gp * C: the batched prime's passes */
	uint32_t gp;
	int made_prime;
	size_t ws;	   /**< the work area's size */
	cudaStream_t s;	   /**< the instance's stream: memory is freed on it */
	unsigned *done;	   /**< completion words for the next run's scatter, or NULL */
	unsigned done_seq;
	int64_t tf_seg;
	int tf_cur; /**< which half of d_T holds the cached tail */
	/* Tails summed ahead (live shapes, M > 2): while segment s fills, each
	 * call adds its share of partitions j >= 2 of T_{s+1} (they read only
	 * completed segments), so no call pays the whole sum. */
	cufftComplex *d_A; /**< [3][C][NB]: A_s = sum_{j=2}^{M-1} H_j X_{s-j} at slot s % 3, or NULL */
	int64_t a_seg;	   /**< the segment whose A is being summed, -1 none */
	uint32_t a_done;   /**< its partitions summed so far, of M - 2 (j = 2 .. 1 + a_done) */
	int64_t a_ready;   /**< a segment whose A a reset or prime made whole, -1 none */
};

/** Blocks of @p block threads for @p n items, within the grid's limits. */
static inline unsigned blocks_for(uint64_t n, unsigned block)
{
	uint64_t g = (n + block - 1) / block;
	return (unsigned)(g < 1 ? 1 : g > 1048576 ? 1048576 : g);
}

/* Largest planned power-of-two batch (in segments) not above n. */
static inline int plan_for(const struct gf_cu_fft *f, uint32_t n)
{
	int i = 0;
	while (i + 1 < f->nplans && (2u << i) <= n)
		i++;
	return i;
}

static __device__ __forceinline__ float2 cmac(float2 acc, float2 h, float2 x)
{
	acc.x = fmaf(h.x, x.x, fmaf(-h.y, x.y, acc.x));
	acc.y = fmaf(h.x, x.y, fmaf(h.y, x.x, acc.y));
	return acc;
}

/* acc += H_j X_{segment of slot - j} for partitions j = 2 + i, i in [i0, i1): the same order
 * however the range is split over calls, so the sum does not depend on the call sizes. */
static __device__ __forceinline__ float2 mac_range(float2 acc, const cufftComplex *__restrict__ H,
						   const cufftComplex *__restrict__ X, uint64_t cs, uint64_t off,
						   int slot, uint32_t Mr, uint32_t i0, uint32_t i1)
{
	for (uint32_t i = i0; i < i1; i++) {
		int s = slot - (int)(2 + i);
		s += s < 0 ? (int)Mr : 0;
		acc = cmac(acc, H[(uint64_t)(2 + i) * cs + off], X[(uint64_t)s * cs + off]);
	}
	return acc;
}

#endif
