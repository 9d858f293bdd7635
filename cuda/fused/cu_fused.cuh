/**
 * @file cu_fused.cuh
 * Internal to cuda/: the fused path (cu_fused.cu), one kernel a block on
 * host-mapped memory for the direct algorithm: it appends the block to its
 * own history ring, convolves with the direct algorithm's taps
 * (cu_fused_kernel.cuh, launched by cu_direct.cu) and writes the output and
 * completion words the host polls. Its table is gf_cu_path_fused (cu_path.cuh).
 */
#ifndef GPUFIR_CU_FUSED_CUH
#define GPUFIR_CU_FUSED_CUH

#include "cu_common.cuh"

/** Largest call and filter the fused path takes (beyond them the pipelined path runs). */
#define GF_CU_LIVE_MAX_FRAMES 4096u
#define GF_CU_LIVE_MAX_TAPS 16384u
/** Larger calls read too much host memory with strided (per-channel) loads: copies win. */
#define GF_CU_LIVE_MAX_SAMPLES 16384u
#define GF_CU_LIVE_MAX_WARPS 32   /**< warps a block (1024 threads) */
#define GF_CU_LIVE_SLICE_TAPS 512 /**< taps a block sums, about: the taps are spread over slices of blocks */
#define GF_CU_LIVE_MAX_SLICES 32
/** GPUFIR_CUDA_LIVE: 0 never, 1 wherever it fits, unset or auto: timed against the staged path at create. */
enum gf_cu_live_mode { GF_CU_LIVE_OFF, GF_CU_LIVE_ON, GF_CU_LIVE_AUTO };
enum gf_cu_live_mode gf_cu_live_mode(void);
/** Can an instance of these sizes use it? */
int gf_cu_live_fits(uint32_t channels, uint32_t taps, uint32_t max_block);
/** Load its kernels: every call size's variant and the history load. */
void gf_cu_live_preload(void);
int gf_cu_live_new(struct gf_cu_live **out, struct gf_cu_inst *in, struct gf_errbuf *eb);
void gf_cu_live_free(struct gf_cu_live *l, cudaStream_t s);
/** History = silence, position 0. */
int gf_cu_live_reset(struct gf_cu_live *l, cudaStream_t s, struct gf_errbuf *eb);
/** Load the newest frames of @p d_hist (n interleaved frames on the device) as history. */
int gf_cu_live_load(struct gf_cu_live *l, const float *d_hist, uint32_t n, cudaStream_t s,
		    struct gf_errbuf *eb);
/** Start a call: copy into mapped memory, launch the kernel. */
int gf_cu_live_submit(struct gf_cu_live *l, const float *inp, uint32_t frames, struct gf_errbuf *eb);
/** Wait for its completion words until @p deadline_ns (CLOCK_MONOTONIC), copy the output out. */
int gf_cu_live_finish(struct gf_cu_live *l, float *outp, uint32_t frames, uint64_t deadline_ns,
		      struct gf_errbuf *eb);

#endif
