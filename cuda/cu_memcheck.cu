/* Device and pinned host memory a new instance will take, estimated and
 * checked before it allocates any (docs/cuda.md, "Memory"), so that a filter
 * too large for the GPU is refused with how much it needs and how much is
 * free, not failed halfway through create with a bare CUDA error. */
#include <unistd.h>

#include "cu_fused.cuh"
#include "cu_plan.cuh"

/* Context reserves, allocator granularity and cuFFT plan state: a fixed
 * allowance, and 10 % over the sum of the buffers. */
#define CU_MEM_SLACK_BYTES (64.0 * 1024 * 1024)
#define CU_MEM_SLACK_FACTOR 1.1

void gf_cu_estimate(const struct gf_cu_plan *pl, uint32_t channels, uint32_t taps, double *device_bytes,
		    double *pinned_bytes)
{
	double C = channels, io = (double)pl->chunk * C * sizeof(float);
	double dev = 4.0 * io; /* d_in, d_out, double-buffered (alloc_io) */
	double pin = 7.0 * io; /* h_in, h_out double-buffered; mapped in, out and completion words */
	int64_t line = (2 * pl->keep + pl->chunk + 31) & ~(int64_t)31;
	dev += (double)line * C * sizeof(float); /* the input line (cu_line.cu) */
	if (pl->direct)
		dev += (double)taps * C * sizeof(float); /* the taps in global memory */
	if (pl->live_frames) { /* the fused path's mirrored ring, slice planes and mapped buffers */
		double mf = pl->live_frames;
		double L = gf_cu_pow2_at_least((uint64_t)taps + 32 + pl->live_frames); /* taps padded to 16 */
		dev += (2.0 * L + GF_CU_LIVE_MAX_SLICES * mf) * C * sizeof(float);
		pin += 2.0 * mf * C * sizeof(float);
	}
	if (pl->fft) {
		const struct gf_cu_fft_shape *sh = &pl->shape;
		double nb = sh->N / 2 + 1, spec = C * nb * sizeof(cufftComplex),
		       win = C * sh->N * sizeof(float);
		double gmax = (pl->chunk + sh->B - 1) / sh->B + 1;
		/* d_H (M), d_X (M + gmax), d_T (2), d_Y (gmax), d_A (3, live shapes: counted
		 * for every shape of M > 2); d_W and d_y (gmax windows each) */
		double ahead = sh->M > 2 ? 3.0 : 0.0;
		dev += spec * (2.0 * sh->M + 2.0 * gmax + 2.0 + ahead) + 2.0 * win * gmax;
		dev += win * gmax;			 /* cuFFT's work area: about one batch of windows */
		dev += (double)taps * C * sizeof(float); /* make_spectra's upload of the taps, freed after */
	}
	*device_bytes = dev * CU_MEM_SLACK_FACTOR + CU_MEM_SLACK_BYTES;
	*pinned_bytes = pin;
}

/* Free device memory for new allocations: the driver's, plus what the default
 * pool keeps reserved but unused (gf_cu_pool_init keeps freed memory). */
static int device_free(int dev, double *free_b, double *total_b, struct gf_errbuf *eb)
{
	size_t fr = 0, tot = 0;
	CU_RET(eb, cudaMemGetInfo(&fr, &tot));
	cudaMemPool_t pool;
	uint64_t reserved = 0, used = 0;
	if (cudaDeviceGetDefaultMemPool(&pool, dev) == cudaSuccess &&
	    cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved) == cudaSuccess &&
	    cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used) == cudaSuccess &&
	    reserved > used)
		fr += (size_t)(reserved - used);
	(void)cudaGetLastError(); /* a pool query that failed is not this call's error */
	*free_b = (double)fr;
	*total_b = (double)tot;
	return 0;
}

int gf_cu_check_memory(int dev, const struct gf_cu_plan *pl, uint32_t channels, uint32_t taps,
		       struct gf_errbuf *eb)
{
	double need_dev, need_pin, free_dev, total_dev;
	gf_cu_estimate(pl, channels, taps, &need_dev, &need_pin);
	int err = device_free(dev, &free_dev, &total_dev, eb);
	if (err)
		return err;
	const double mib = 1024.0 * 1024.0;
	if (need_dev > free_dev) {
		gf_errbuf_set(
			eb,
			"cuda: %u taps x %u channels (%s) need about %.0f MiB of device memory, more "
			"than the %.0f MiB free on GPU %d (of %.0f MiB): shorten the filter (max_taps), "
			"filter fewer channels, or use backend = \"cpu\"",
			taps, channels, pl->fft ? (pl->direct ? "direct and fft" : "fft") : "direct",
			need_dev / mib, free_dev / mib, dev, total_dev / mib);
		return GF_E_NOMEM;
	}
	/* Free physical memory (the module links nothing of gpufir's; staging is small). */
	long pages = sysconf(_SC_AVPHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
	double host = pages > 0 && psz > 0 ? (double)pages * (double)psz : 1e300;
	if (need_pin > host) {
		gf_errbuf_set(eb,
			      "cuda: %u channels need about %.1f MiB of pinned host memory for staging, more "
			      "than the %.1f MiB of free memory",
			      channels, need_pin / mib, host / mib);
		return GF_E_NOMEM;
	}
	return 0;
}
