/**
 * @file cu_direct.cuh
 * Internal to cuda/: the direct algorithm (cu_direct.cu): taps in a
 * constant bank or global memory, convolved over the input line; and the
 * launcher of the fused path's kernel, which reads these taps.
 */
#ifndef GPUFIR_CU_DIRECT_CUH
#define GPUFIR_CU_DIRECT_CUH

#include "cu_common.cuh"

int gf_cu_direct_new(struct gf_cu_direct **out, struct gf_cu_inst *in, const struct gf_filter_set *fs,
		     struct gf_errbuf *eb);
void gf_cu_direct_free(struct gf_cu_direct *d);
/** Convolve @p frames already-appended frames at line index @p j0 into @p d_out. */
int gf_cu_direct_run(struct gf_cu_direct *d, struct gf_cu_inst *in, int64_t j0, uint32_t frames, float *d_out,
		     cudaStream_t s, struct gf_errbuf *eb);
/** Does this launch accumulate with atomics (d_out must be zeroed first)? */
int gf_cu_direct_needs_zero(const struct gf_cu_direct *d, uint32_t frames);
/** "constant bank N" or "global memory". */
const char *gf_cu_direct_where(const struct gf_cu_direct *d);
/** Taps per channel as stored (padded with zeros to a multiple of 16). */
uint32_t gf_cu_direct_taps_pad(const struct gf_cu_direct *d);
/** The taps in global memory, [channels][taps_pad] (also when a constant bank holds them). */
const float *gf_cu_direct_taps(const struct gf_cu_direct *d);
/** Arguments of the fused per-block kernel (fused/cu_fused_kernel.cuh), passed by value. */
struct gf_cu_live_args {
	float *ring;
	uint32_t L;
	int64_t pos;
	int frames, C, taps_pad, ks; /**< ks: taps a warp; a slice is blockDim.y * ks taps */
	const float *in;
	float *out;
	unsigned *done;
	unsigned seq;
	float *part;	      /**< [slices][C][part_stride]: each slice's sums (more than one slice) */
	uint32_t part_stride; /**< frames a plane holds: max_block */
	unsigned *count;      /**< [C][tiles]: arrivals of a tile's slices, wrapping to 0 */
};
/** Once per instance at create: allow the fused kernel @p smem_max bytes of shared memory. */
int gf_cu_direct_live_setup(size_t smem_max, struct gf_errbuf *eb);
/** Load the fused kernel's variants (lazy loading: see warm_staged in cu_choose.cu). */
void gf_cu_direct_live_preload(void);
/** Launch the fused kernel with R = @p r (1, 2, 4) outputs a lane, reading the taps of @p d from
 * global memory (also where a constant bank holds them). */
cudaError_t gf_cu_direct_live_launch(const struct gf_cu_direct *d, int r, dim3 grid, dim3 block, size_t smem,
				     cudaStream_t s, const struct gf_cu_live_args *a);
/** Force the launch shape (benchmarks): 0 = automatic, 4 or 16 outputs per thread. */
void gf_cu_direct_force_r(struct gf_cu_direct *d, int r);

#endif
