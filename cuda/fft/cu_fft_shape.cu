/*
 * The FFT algorithm's shape (cu_fft.cu): hop, window and partitions for a
 * filter and a call size. Live blocks get a partition from a rule (latency);
 * large calls the cheapest shape by a cost model measured on the device.
 * Host code only, no CUDA call.
 */
#include <stdlib.h>

#include "cu_fft.cuh"

extern "C" {
#include "test_hook.h"
}

uint32_t gf_cu_fft_keep(const struct gf_cu_fft_shape *shape)
{
	return shape->N;
}

static uint32_t next_pow2(uint64_t v)
{
	uint64_t p = 1;
	while (p < v)
		p <<= 1;
	return (uint32_t)p;
}

static uint32_t floor_pow2(uint64_t v)
{
	uint64_t p = 1;
	while (p * 2 <= v)
		p <<= 1;
	return (uint32_t)p;
}

static void set_upols(struct gf_cu_fft_shape *s, uint32_t taps, uint32_t P)
{
	s->B = s->Hh = P;
	s->N = 2 * P;
	s->M = (taps + P - 1) / P;
}

static void set_long_hop(struct gf_cu_fft_shape *s, uint32_t taps, uint32_t B)
{
	uint32_t hh = next_pow2(taps > 1 ? taps - 1 : 1);
	if (hh < 16)
		hh = 16;
	if (B <= hh) { /* a hop no longer than the history: partitions of B */
		set_upols(s, taps, B > GF_CU_FFT_MAX_P ? GF_CU_FFT_MAX_P : B);
		return;
	}
	s->B = B;
	s->Hh = hh;
	s->N = B + hh;
	s->M = 1;
}

/*
 * Device time per window point (ps): gather, R2C, spectral product, C2R and
 * scatter, measured on an H200 over stereo calls of 2^22 frames (bench_gpu's
 * kernel rows, docs/benchmarks.md). cuFFT is much cheaper per point at powers
 * of two than at the 3, 5 and 9 times a power of two of the long hops.
 */
static double point_cost(uint64_t n)
{
	if ((n & (n - 1)) == 0)
		return n <= 8192 ? 14.0 : n <= 32768 ? 19.3 : n <= (1u << 19) ? 23.1 : n <= (1u << 21) ? 25.0 : 27.0;
	return n < 8192 ? 25.0 : n <= 16384 ? 21.5 : n <= 65536 ? 26.5 : n <= (1u << 20) ? 29.5 : n <= (1u << 22) ? 31.0 : 34.0;
}

/* Each further partition, per bin (ps): more once the spectra stop fitting in L2. */
static double partition_cost(uint64_t n, uint32_t m)
{
	return n <= 8192 ? (m <= 4 ? 1.0 : 1.3) : n <= (1u << 17) ? 1.65 : 2.6;
}

/*
 * Modelled device time per sample of calls of F frames (ps): the windows' points,
 * the further partitions' bins, and 4 ps a sample of input and output traffic.
 * A call transforms F/B windows when F and B are aligned powers of two, else
 * one more (the partial window, transformed again by the next call).
 */
static double shape_cost(const struct gf_cu_fft_shape *s, uint32_t F)
{
	bool aligned = (F & (F - 1)) == 0;
	double w = F >= s->B ? (double)F / s->B : 1.0;
	if (!aligned)
		w = (double)((F + s->B - 1) / s->B) + 1.0;
	double per_win = (double)s->N * point_cost(s->N) + (double)(s->M - 1) * (s->N / 2) * partition_cost(s->N, s->M);
	return w * per_win / F + 4.0;
}

/* Live blocks (below GF_CU_FFT_LIVE_BLOCK frames): P at least the block (fewer
 * segments a call), at least ~4*sqrt(taps) so that a long filter's
 * per-segment tail sum stays short and wide, at most the filter's own length. */
static uint32_t live_partition(uint32_t taps, uint32_t max_block)
{
	uint64_t p = next_pow2(max_block);
	uint32_t s = 1;
	while ((uint64_t)s * s < (uint64_t)taps * 16)
		s++;
	if (next_pow2(s) > p)
		p = next_pow2(s);
	if (p > next_pow2(taps))
		p = next_pow2(taps);
	if (p > GF_CU_FFT_MAX_P)
		p = GF_CU_FFT_MAX_P;
	if (p < 32)
		p = 32;
	return (uint32_t)p;
}

void gf_cu_fft_pick_shape(uint32_t taps, uint32_t max_block, uint32_t max_frames, struct gf_cu_fft_shape *out)
{
	int64_t force = gf_test_hook_value("GPUFIR_CUDA_FFT_PARTITION", "cuda"); /* benchmarks */
	if (force >= 16) {
		set_upols(out, taps, next_pow2(force > GF_CU_FFT_MAX_P ? GF_CU_FFT_MAX_P : (uint64_t)force));
		return;
	}
	force = gf_test_hook_value("GPUFIR_CUDA_FFT_HOP", "cuda");
	if (force >= 16) {
		set_long_hop(out, taps, next_pow2(force > (1 << 24) ? (1u << 24) : (uint64_t)force));
		return;
	}
	if (max_block < GF_CU_FFT_LIVE_BLOCK) {
		set_upols(out, taps, live_partition(taps, max_block));
		return;
	}
	/* Large calls: the cheapest shape by the model, among partitions and hops
	 * no longer than a call (max_frames caps a call at one staging chunk).
	 * Windows of at least 2048 points: smaller ones leave the gather's blocks
	 * and cuFFT's batches mostly idle, which the model does not see. */
	uint32_t F = max_block < max_frames ? max_block : max_frames;
	uint32_t lim = floor_pow2(F), ptaps = next_pow2(taps);
	struct gf_cu_fft_shape c;
	set_upols(out, taps, ptaps < 1024 ? 1024 : ptaps > lim ? lim : ptaps);
	double best = shape_cost(out, F);
	for (uint32_t P = 1024; P <= GF_CU_FFT_MAX_P && P <= ptaps && P <= lim; P *= 2) {
		set_upols(&c, taps, P);
		double cost = shape_cost(&c, F);
		if (cost < best)
			best = cost, *out = c;
	}
	/* Long hops: any history Hh >= taps-1 (a power of two), B = 2, 4 or 8 Hh. */
	uint32_t hh0 = next_pow2(taps > 1 ? taps - 1 : 1);
	for (uint64_t hh = hh0 < 16 ? 16 : hh0; hh * 2 <= lim; hh *= 2)
		for (uint32_t k = 1; k <= 3 && (hh << k) <= lim; k++) {
			c.B = (uint32_t)(hh << k);
			c.Hh = (uint32_t)hh;
			c.N = c.B + c.Hh;
			c.M = 1;
			if (c.N < 2048)
				continue;
			double cost = shape_cost(&c, F);
			if (cost < best)
				best = cost, *out = c;
		}
}
