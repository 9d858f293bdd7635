/**
 * @file cu_fused_kernel.cuh
 * Internal to cuda/: the fused per-block kernel (cu_fused.cu describes it),
 * included by cu_direct.cu, which holds the taps' global copy it reads.
 */
#ifndef GPUFIR_CU_LIVE_KERNEL_CUH
#define GPUFIR_CU_LIVE_KERNEL_CUH

/*
 * Block (tile of 32R outputs, channel, slice of the taps). The window holds
 * x[pos + tile0 - (kb-1) + i] for the slice [ka, kb): output o with tap k
 * reads s_x[o - k + kb - 1]. Slice 0's blocks also write the tile's new frames
 * into the ring. With one slice the block's sum is the output; with more, each
 * block leaves its sum in its plane of d_part and the last of the tile's
 * blocks to finish (a counter that wraps to 0 for the next call) adds the
 * planes in slice order: deterministic whichever block comes last.
 */
template <int R>
__global__ void __launch_bounds__(1024) k_live(struct gf_cu_live_args a, const float *__restrict__ taps)
{
	constexpr int T = 32 * R;
	extern __shared__ float4 s_raw[]; /* the same declaration as k_direct's */
	float *s_mem = reinterpret_cast<float *>(s_raw);
	__shared__ int s_last;
	const int c = blockIdx.y, z = blockIdx.z, tile0 = blockIdx.x * T, C = a.C;
	const int lane = threadIdx.x, w = threadIdx.y, TK = blockDim.y;
	const int tid = w * 32 + lane, nth = 32 * TK;
	const int ka = z * TK * a.ks, kb = min(ka + TK * a.ks, a.taps_pad);
	const int wlen = kb - ka - 1 + T;
	float *s_x = s_mem, *s_red = s_mem + ((wlen + 3) & ~3);
	float *rc = a.ring + (size_t)c * 2 * a.L;
	const int64_t pos = a.pos, t0 = pos + tile0 - (kb - 1);
	const uint32_t i0 = (uint32_t)t0 & (a.L - 1);
	for (int i = tid; i < wlen; i += nth) {
		int64_t t = t0 + i;
		float v;
		if (t < pos)
			v = rc[i0 + i];
		else {
			int n = (int)(t - pos);
			v = n < a.frames ? a.in[(size_t)n * C + c] : 0.0f;
			if (z == 0 && n < a.frames &&
			    n >= tile0) { /* this tile's new frames go into the ring */
				uint32_t j = (uint32_t)t & (a.L - 1);
				rc[j] = v;
				rc[j + a.L] = v;
			}
		}
		s_x[i] = v;
	}
	__syncthreads();

	float acc[R];
#pragma unroll
	for (int r = 0; r < R; r++)
		acc[r] = 0.0f;
	const int k0 = ka + w * a.ks, k1 = min(k0 + a.ks, kb);
	const int hb = c * a.taps_pad;
	const float *xb = s_x + lane + kb - 1;
	for (int k = k0; k < k1; k += 4) {
		/* Warp-uniform: one L1 broadcast. From global memory, not a constant bank: each warp
		 * streams its own taps, and constant-cache misses are served one at a time
		 * (docs/cuda.md, "The fused path"). */
		float4 h4 = __ldg(reinterpret_cast<const float4 *>(taps + hb + k));
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
	const int S = gridDim.z;
	float *plane = S > 1 ? a.part + (size_t)c * a.part_stride + tile0 : nullptr; /* no planes with one */
	for (int o = tid; o < T; o += nth) {
		float v = 0.0f;
		for (int q = 0; q < TK; q++) /* fixed order: deterministic */
			v += s_red[q * T + o];
		if (tile0 + o >= a.frames)
			continue;
		if (S == 1)
			a.out[(size_t)(tile0 + o) * C + c] = v;
		else
			plane[(size_t)z * C * a.part_stride + o] = v;
	}
	if (S > 1)
		__threadfence(); /* this thread's plane writes before the block's arrival below */
	__syncthreads();
	if (S > 1) {
		if (tid == 0) {
			unsigned *count = a.count + blockIdx.y * gridDim.x + blockIdx.x;
			s_last = atomicInc(count, (unsigned)S - 1) == (unsigned)S - 1;
			__threadfence(); /* the other blocks' planes are read after the last arrival */
		}
		__syncthreads();
		if (!s_last)
			return;
		for (int o = tid; o < T && tile0 + o < a.frames; o += nth) {
			float v = 0.0f;
			for (int q = 0; q < S; q++) /* slice order */
				v += __ldcg(plane + (size_t)q * C * a.part_stride + o);
			a.out[(size_t)(tile0 + o) * C + c] = v;
		}
		__syncthreads();
	}
	/* One fence a block, not one a thread: the barrier orders every thread's
	 * output before thread 0's fence, which is cumulative at system scope
	 * (the pattern of a grid barrier's arrival). */
	if (tid == 0) {
		__threadfence_system();
		*(volatile unsigned *)&a.done[blockIdx.y * gridDim.x + blockIdx.x] = a.seq;
	}
}

#endif
