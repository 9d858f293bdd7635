/* Direct (time-domain) convolution: taps in one of two 32 KiB __constant__
 * banks (global memory when neither is free or the set is too big), input
 * tile plus taps-1 halo in shared memory, R outputs per thread in registers. */
#include <atomic>
#include <stdio.h>
#include <stdlib.h>

#include "cu_direct.cuh"

#define GF_CU_BANK_FLOATS 8192 /* 32 KiB per bank; two banks fill the 64 KiB constant space */
#define GF_CU_MAX_DEVICES 16
#define GF_CU_TAP_ALIGN 16 /* taps padded with zeros to a multiple of the largest R */

__constant__ __align__(16) float c_taps[2][GF_CU_BANK_FLOATS];

/* Process-wide bank ownership, per device (each context has its own constant space). */
static std::atomic<int> g_bank_used[GF_CU_MAX_DEVICES][2];

struct gf_cu_direct {
	int dev;
	int bank; /**< 0/1, or -1 = taps read from global memory */
	uint32_t channels, taps, taps_pad;
	float *d_taps; /**< channels * taps_pad, zero padded */
	cudaStream_t s; /**< the instance's stream: d_taps is freed on it */
	int force_r;
	char where[32];
};

/* Launch shape: TO x TK threads; each thread R outputs over ks taps. */
struct shape {
	int r, to, tk, ks;
	unsigned gx, gz;
	size_t smem;
};

/* Shared row stride: R floats plus 4 of padding for R >= 8, so the 16-byte
 * loads of a quarter warp (rows R+pad floats apart, an odd count of float4s)
 * fall in distinct banks. */
__host__ __device__ constexpr int row_stride(int r)
{
	return r >= 8 ? r + 4 : r;
}

template <bool CONST_TAPS>
__device__ __forceinline__ float4 load_taps4(int bank, const float *__restrict__ g, int idx)
{
	if (CONST_TAPS)
		return *reinterpret_cast<const float4 *>(&c_taps[bank][idx]);
	return __ldg(reinterpret_cast<const float4 *>(g + idx));
}

/*
 * y[t0+n] += sum_{k in block's tap range} h[k] x[t0+n-k] for the block's tile
 * of outputs of channel blockIdx.y. x is the line (x[i] at line[j0+i]); the
 * shared window holds x[wbase+1 .. wbase+wlen). Each thread keeps R outputs
 * and a 2R-sample register window (xhi, xlo) that slides R taps per step, so
 * every shared load feeds R FMAs.
 */
template <int R, bool CONST_TAPS>
__global__ void k_direct(const float *__restrict__ line, int64_t cap, int64_t j0, int frames, int C,
			 int taps_pad, int ks, int bank, const float *__restrict__ d_taps,
			 float *__restrict__ out, int accumulate)
{
	constexpr int S = row_stride(R);
	extern __shared__ float4 s_raw[];
	float *s_x = reinterpret_cast<float *>(s_raw);
	const int TO = blockDim.x, TK = blockDim.y;
	const int c = blockIdx.y;
	const int tile0 = blockIdx.x * TO * R;
	const int kz0 = blockIdx.z * TK * ks;
	const int wlen = TO * R + TK * ks;
	const int64_t wbase = (int64_t)tile0 - kz0 - (int64_t)TK * ks;
	const float *x = line + (int64_t)c * cap + j0;
	const int tid = threadIdx.y * TO + threadIdx.x, nth = TO * TK;

	for (int i = tid; i < wlen; i += nth) {
		int64_t xi = wbase + i;
		s_x[(i / R) * S + (i % R)] = (xi >= -j0 && xi < frames) ? x[xi] : 0.0f;
	}
	__syncthreads();

	const int to = threadIdx.x, tk = threadIdx.y;
	const int k0 = kz0 + tk * ks;
	const int k1 = min(k0 + ks, taps_pad);
	float acc[R];
#pragma unroll
	for (int r = 0; r < R; r++)
		acc[r] = 0.0f;
	const int hbase = c * taps_pad;
	if (k0 < k1) {
		/* Row holding x[n0-k0 .. n0-k0+R-1], n0 = tile0 + to*R. */
		int row = to + (TK * ks - tk * ks) / R;
		float xhi[R], xlo[R];
#pragma unroll
		for (int q = 0; q < R / 4; q++) {
			float4 v = reinterpret_cast<const float4 *>(s_x + row * S)[q];
			xhi[4 * q] = v.x, xhi[4 * q + 1] = v.y, xhi[4 * q + 2] = v.z, xhi[4 * q + 3] = v.w;
		}
		for (int kk = k0; kk < k1; kk += R) {
			row--;
#pragma unroll
			for (int q = 0; q < R / 4; q++) {
				float4 v = reinterpret_cast<const float4 *>(s_x + row * S)[q];
				xlo[4 * q] = v.x, xlo[4 * q + 1] = v.y, xlo[4 * q + 2] = v.z,
					xlo[4 * q + 3] = v.w;
			}
#pragma unroll
			for (int q = 0; q < R / 4; q++) {
				float4 h4 = load_taps4<CONST_TAPS>(bank, d_taps, hbase + kk + 4 * q);
				float h[4] = {h4.x, h4.y, h4.z, h4.w};
#pragma unroll
				for (int u = 0; u < 4; u++) {
					const int j = 4 * q + u;
#pragma unroll
					for (int r = 0; r < R; r++)
						acc[r] = fmaf(h[u], r >= j ? xhi[r - j] : xlo[R + r - j],
							      acc[r]);
				}
			}
#pragma unroll
			for (int i = 0; i < R; i++)
				xhi[i] = xlo[i];
		}
	}

	const int n0 = tile0 + to * R;
	if (TK == 1) {
#pragma unroll
		for (int r = 0; r < R; r++) {
			int n = n0 + r;
			if (n < frames) {
				if (accumulate)
					atomicAdd(&out[(int64_t)n * C + c], acc[r]);
				else
					out[(int64_t)n * C + c] = acc[r];
			}
		}
		return;
	}
	/* Sum the TK partial results of each output in shared memory. */
	__syncthreads();
	float *s_red = s_x;
#pragma unroll
	for (int r = 0; r < R; r++)
		s_red[(tk * TO + to) * S + r] = acc[r];
	__syncthreads();
	for (int o = tid; o < TO * R; o += nth) {
		float v = 0.0f;
		for (int t = 0; t < TK; t++)
			v += s_red[(t * TO + o / R) * S + o % R];
		int n = tile0 + o;
		if (n < frames) {
			if (accumulate)
				atomicAdd(&out[(int64_t)n * C + c], v);
			else
				out[(int64_t)n * C + c] = v;
		}
	}
}

#include "cu_fused_kernel.cuh"

template <int R>
static cudaError_t live_launch(const struct gf_cu_direct *d, dim3 grid, dim3 block, size_t smem,
			       cudaStream_t s, const struct gf_cu_live_args *a)
{
	k_live<R><<<grid, block, smem, s>>>(*a, d->d_taps);
	return cudaGetLastError();
}

cudaError_t gf_cu_direct_live_launch(const struct gf_cu_direct *d, int r, dim3 grid, dim3 block, size_t smem,
				     cudaStream_t s, const struct gf_cu_live_args *a)
{
	return r == 1	? live_launch<1>(d, grid, block, smem, s, a)
	       : r == 2 ? live_launch<2>(d, grid, block, smem, s, a)
			: live_launch<4>(d, grid, block, smem, s, a);
}

template <int R> static int live_attr(size_t smem, struct gf_errbuf *eb)
{
	CU_RET(eb, cudaFuncSetAttribute(k_live<R>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
	return 0;
}

int gf_cu_direct_live_setup(size_t smem_max, struct gf_errbuf *eb)
{
	/* The same value from every instance: the attribute is per function, process-wide. */
	int err = live_attr<1>(smem_max, eb);
	err = err ? err : live_attr<2>(smem_max, eb);
	return err ? err : live_attr<4>(smem_max, eb);
}

void gf_cu_direct_live_preload(void)
{
	cudaFuncAttributes a;
	(void)cudaFuncGetAttributes(&a, k_live<1>);
	(void)cudaFuncGetAttributes(&a, k_live<2>);
	(void)cudaFuncGetAttributes(&a, k_live<4>);
	(void)cudaGetLastError();
}

uint32_t gf_cu_direct_taps_pad(const struct gf_cu_direct *d)
{
	return d->taps_pad;
}

const float *gf_cu_direct_taps(const struct gf_cu_direct *d)
{
	return d->d_taps;
}

static void pick_shape(const struct gf_cu_direct *d, uint32_t frames, struct shape *sh)
{
	/* Large tiles (16 outputs a thread, 2048 a block, 4096 taps a z-slice)
	 * when they alone fill the GPU; otherwise small tiles with the taps also
	 * split across threads, so a 64-frame live block still spreads wide. */
	int tp = (int)d->taps_pad;
	int ks_l = tp < 4096 ? tp : 4096;
	unsigned gx_l = (frames + 2047) / 2048, gz_l = (tp + ks_l - 1) / ks_l;
	bool large = d->force_r == 16 || (d->force_r == 0 && (uint64_t)gx_l * gz_l * d->channels >= 264);
	if (large) {
		sh->r = 16, sh->to = 128, sh->tk = 1, sh->ks = ks_l, sh->gx = gx_l, sh->gz = gz_l;
	} else {
		sh->r = 4, sh->to = 32, sh->tk = 8;
		int per = (tp + sh->tk - 1) / sh->tk;
		per = (per + 3) & ~3;
		sh->ks = per < 64 ? per : 64;
		sh->gx = (frames + 127) / 128;
		sh->gz = (tp + sh->tk * sh->ks - 1) / (sh->tk * sh->ks);
	}
	int s = row_stride(sh->r);
	size_t win = (size_t)(sh->to * sh->r + sh->tk * sh->ks) / sh->r * s;
	size_t red = sh->tk > 1 ? (size_t)sh->tk * sh->to * s : 0;
	sh->smem = (win > red ? win : red) * sizeof(float);
}

int gf_cu_direct_needs_zero(const struct gf_cu_direct *d, uint32_t frames)
{
	struct shape sh;
	pick_shape(d, frames, &sh);
	return sh.gz > 1;
}

template <int R, bool CT>
static int launch(const struct gf_cu_direct *d, const struct shape *sh, const struct gf_cu_line *l,
		  int64_t j0, uint32_t frames, float *d_out, cudaStream_t s, struct gf_errbuf *eb)
{
	if (sh->smem > 48 * 1024)
		CU_RET(eb, cudaFuncSetAttribute(k_direct<R, CT>, cudaFuncAttributeMaxDynamicSharedMemorySize,
						(int)sh->smem));
	dim3 grid(sh->gx, d->channels, sh->gz), block(sh->to, sh->tk);
	k_direct<R, CT><<<grid, block, sh->smem, s>>>(l->d_line, l->cap, j0, (int)frames, (int)d->channels,
						      (int)d->taps_pad, sh->ks, d->bank < 0 ? 0 : d->bank,
						      d->d_taps, d_out, sh->gz > 1);
	CU_LAUNCHED(eb);
	return 0;
}

int gf_cu_direct_run(struct gf_cu_direct *d, struct gf_cu_inst *in, int64_t j0, uint32_t frames, float *d_out,
		     cudaStream_t s, struct gf_errbuf *eb)
{
	struct shape sh;
	pick_shape(d, frames, &sh);
	bool ct = d->bank >= 0;
	if (sh.r == 16)
		return ct ? launch<16, true>(d, &sh, &in->line, j0, frames, d_out, s, eb)
			  : launch<16, false>(d, &sh, &in->line, j0, frames, d_out, s, eb);
	return ct ? launch<4, true>(d, &sh, &in->line, j0, frames, d_out, s, eb)
		  : launch<4, false>(d, &sh, &in->line, j0, frames, d_out, s, eb);
}

static int claim_bank(int dev)
{
	if (dev < 0 || dev >= GF_CU_MAX_DEVICES)
		return -1;
	for (int b = 0; b < 2; b++)
		if (g_bank_used[dev][b].exchange(1) == 0)
			return b;
	return -1;
}

int gf_cu_direct_new(struct gf_cu_direct **out, struct gf_cu_inst *in, const struct gf_filter_set *fs,
		     struct gf_errbuf *eb)
{
	int err = GF_E_NOMEM;
	float *h = NULL;
	struct gf_cu_direct *d = (struct gf_cu_direct *)calloc(1, sizeof(*d));
	if (!d)
		goto fail;
	d->dev = in->dev;
	d->bank = -1;
	d->channels = fs->channels;
	d->taps = fs->taps;
	d->taps_pad = (fs->taps + GF_CU_TAP_ALIGN - 1) / GF_CU_TAP_ALIGN * GF_CU_TAP_ALIGN;
	{
		size_t n = (size_t)d->channels * d->taps_pad;
		h = (float *)calloc(n, sizeof(float));
		if (!h)
			goto fail;
		for (uint32_t c = 0; c < d->channels; c++)
			for (uint32_t k = 0; k < d->taps; k++)
				h[(size_t)c * d->taps_pad + k] = fs->coeffs[(size_t)c * fs->taps + k];
		d->s = in->s_comp;
		if ((err = gf_cu_dmalloc((void **)&d->d_taps, n * sizeof(float), in->s_comp, eb)))
			goto fail;
		if ((err = CU_TRY(eb, cudaMemcpyAsync(d->d_taps, h, n * sizeof(float), cudaMemcpyHostToDevice,
						      in->s_comp))))
			goto fail;
		if (n <= GF_CU_BANK_FLOATS)
			d->bank = claim_bank(d->dev);
		if (d->bank >= 0 &&
		    (err = CU_TRY(eb,
				  cudaMemcpyToSymbolAsync(c_taps, h, n * sizeof(float),
							  (size_t)d->bank * GF_CU_BANK_FLOATS * sizeof(float),
							  cudaMemcpyHostToDevice, in->s_comp))))
			goto fail;
		/* h is pageable: the copies above completed before returning, but wait
		 * anyway so the taps are resident before the instance is published. */
		if ((err = CU_TRY(eb, cudaStreamSynchronize(in->s_comp))))
			goto fail;
	}
	if (d->bank >= 0)
		snprintf(d->where, sizeof(d->where), "constant bank %d", d->bank);
	else
		snprintf(d->where, sizeof(d->where), "global memory");
	free(h);
	*out = d;
	return 0;
fail:
	if (err == GF_E_NOMEM)
		gf_errbuf_set(eb, "cuda direct: out of host memory");
	free(h);
	gf_cu_direct_free(d);
	return err;
}

void gf_cu_direct_free(struct gf_cu_direct *d)
{
	if (!d)
		return;
	gf_cu_dfree(d->d_taps, d->s);
	if (d->bank >= 0)
		g_bank_used[d->dev][d->bank].store(0);
	free(d);
}

const char *gf_cu_direct_where(const struct gf_cu_direct *d)
{
	return d->where;
}

void gf_cu_direct_force_r(struct gf_cu_direct *d, int r)
{
	d->force_r = r;
}
