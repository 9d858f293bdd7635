/**
 * @file cu_live_kernel.cuh
 * Internal to cuda/: the fused per-block kernel (cuda_live.cu describes it),
 * included by cuda_direct.cu, where the constant tap banks are visible.
 */
#ifndef GPUFIR_CU_LIVE_KERNEL_CUH
#define GPUFIR_CU_LIVE_KERNEL_CUH

template <int R, bool CT>
__global__ void __launch_bounds__(1024) k_live(float *__restrict__ ring, uint32_t L, int64_t pos, int frames,
					       int C, int taps_pad, int ks, int bank, const float *__restrict__ taps,
					       const float *__restrict__ in, float *__restrict__ out,
					       unsigned *done, unsigned seq)
{
	constexpr int T = 32 * R;
	extern __shared__ float4 s_raw[]; /* the same declaration as k_direct's */
	float *s_mem = reinterpret_cast<float *>(s_raw);
	const int c = blockIdx.y, tile0 = blockIdx.x * T;
	const int lane = threadIdx.x, w = threadIdx.y, TK = blockDim.y;
	const int tid = w * 32 + lane, nth = 32 * TK;
	const int wlen = taps_pad - 1 + T;
	float *s_x = s_mem, *s_red = s_mem + ((wlen + 3) & ~3);
	float *rc = ring + (size_t)c * 2 * L;
	/* s_x[i] = x[pos + tile0 - (taps_pad-1) + i] */
	const int64_t t0 = pos + tile0 - (taps_pad - 1);
	const uint32_t i0 = (uint32_t)t0 & (L - 1);
	for (int i = tid; i < wlen; i += nth) {
		int64_t t = t0 + i;
		float v;
		if (t < pos)
			v = rc[i0 + i];
		else {
			int n = (int)(t - pos);
			v = n < frames ? in[(size_t)n * C + c] : 0.0f;
			if (n < frames && n >= tile0) { /* this tile's new frames go into the ring */
				uint32_t j = (uint32_t)t & (L - 1);
				rc[j] = v;
				rc[j + L] = v;
			}
		}
		s_x[i] = v;
	}
	__syncthreads();

	float acc[R];
#pragma unroll
	for (int r = 0; r < R; r++)
		acc[r] = 0.0f;
	const int k0 = w * ks, k1 = min(k0 + ks, taps_pad);
	const int hb = c * taps_pad;
	/* output n (local) with tap k reads s_x[n - k + taps_pad - 1] */
	const float *xb = s_x + lane + taps_pad - 1;
	for (int k = k0; k < k1; k += 4) {
		float4 h4 = load_taps4<CT>(bank, taps, hb + k); /* warp-uniform: a broadcast */
#pragma unroll
		for (int r = 0; r < R; r++) {
			const float *xr = xb + 32 * r - k;
			acc[r] = fmaf(h4.x, xr[0], acc[r]);
			acc[r] = fmaf(h4.y, xr[-1], acc[r]);
			acc[r] = fmaf(h4.z, xr[-2], acc[r]);
			acc[r] = fmaf(h4.w, xr[-3], acc[r]);
		}
	}
#pragma unroll
	for (int r = 0; r < R; r++)
		s_red[w * T + 32 * r + lane] = acc[r];
	__syncthreads();
	for (int o = tid; o < T; o += nth) {
		float v = 0.0f;
		for (int q = 0; q < TK; q++) /* fixed order: deterministic */
			v += s_red[q * T + o];
		if (tile0 + o < frames)
			out[(size_t)(tile0 + o) * C + c] = v;
	}
	/* One fence a block, not one a thread: the barrier orders every thread's
	 * output before thread 0's fence, which is cumulative at system scope
	 * (the pattern of a grid barrier's arrival). */
	__syncthreads();
	if (tid == 0) {
		__threadfence_system();
		*(volatile unsigned *)&done[blockIdx.y * gridDim.x + blockIdx.x] = seq;
	}
}

#endif
