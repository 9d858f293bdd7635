/**
 * @file cu_plan.cuh
 * Internal to cuda/: what an instance will allocate, decided before it
 * allocates anything (cu_instance.cu), and the memory check against it
 * (cu_memcheck.cu).
 */
#ifndef GPUFIR_CU_PLAN_CUH
#define GPUFIR_CU_PLAN_CUH

#include "cu_fft.cuh"

/* Memory estimate before an instance allocates (cu_memcheck.cu). */
/** What an instance will allocate: its algorithms, FFT shape, staging chunk and line history. */
struct gf_cu_plan {
	bool direct, fft; /* both while calibration decides between them */
	struct gf_cu_fft_shape shape;
	uint32_t chunk;
	int64_t keep;
	uint32_t live_frames; /* max_block where the fused path may be built beside direct, else 0 */
};
/** Device and pinned host bytes an instance of @p pl for @p channels x @p taps will take (estimates). */
void gf_cu_estimate(const struct gf_cu_plan *pl, uint32_t channels, uint32_t taps, double *device_bytes,
		    double *pinned_bytes);
/**
 * With @p dev current: refuse (GF_E_NOMEM, how much is needed and free in
 * @p eb) an instance whose estimate exceeds the device's free memory
 * (cudaMemGetInfo, plus what the stream-ordered pool holds unused) or the
 * host memory this process may still use for pinned buffers.
 */
int gf_cu_check_memory(int dev, const struct gf_cu_plan *pl, uint32_t channels, uint32_t taps,
		       struct gf_errbuf *eb);

#endif
