/*
 * The CPU FFT convolver's cost model (cpu_fft.c): the partition size it
 * picks, and what the engine's auto and the cost module weigh it by.
 */
#include <math.h>

#include "cpu_fft.h"
#include "cpu_fft_cost.h"

/*
 * Nanoseconds on a 2020s x86-64 core with AVX2 (fitted to bench_cpu runs);
 * only the ratios matter. A complex multiply-add streams 16 bytes of H and X:
 * its cost grows as the delay line falls out of L2 and then L3.
 */
#define NS_FFT 0.13	 /* per N log2 N of one real transform in L2 */
#define NS_FFT_BIG 0.18	 /* the same for N > 32768 */
#define NS_FRAME 4.0	 /* per frame: copies, (de)interleaving, head multiply */
#define NS_PARTITION 3.0 /* per partition and segment: loop and call overhead */
#define NS_SEGMENT 100.0 /* per segment: calls into FFTW and the kernels */
#define NS_HEAD_MAC GF_FFT_NS_HEAD_MAC

double gf_cpu_fft_transform_cost(uint32_t n)
{
	return (n <= 32768 ? NS_FFT : NS_FFT_BIG) * n * log2((double)n);
}

static double cmac_cost(double bytes)
{
	return bytes <= 2e6 ? 0.25 : bytes <= 8e6 ? 0.5 : 0.65;
}

/* Cost per frame and channel of partition size P for calls of max_block frames. */
static double partition_cost(uint32_t taps, uint32_t channels, uint32_t max_block, uint32_t P)
{
	uint32_t K = (taps + P - 1) / P, n = 2 * P, nbp = (P + 8) & ~7u;
	double fdl_bytes = 16.0 * K * nbp * channels;
	double seg = NS_SEGMENT + 2.0 * gf_cpu_fft_transform_cost(n) +
		     (double)K * nbp * cmac_cost(fdl_bytes) + K * NS_PARTITION;
	double per_frame = NS_FRAME + seg / P;
	if (max_block % P != 0) {
		/* Calls end inside a segment: one partial chunk per call, head by the cheaper way. */
		uint32_t m = max_block < P ? max_block : max_block % P;
		uint32_t lh = taps < P ? taps : P;
		double direct =
			(double)m * lh * NS_HEAD_MAC + (K > 1 ? gf_cpu_fft_transform_cost(n) * m / P : 0.0);
		double pair = 2.0 * gf_cpu_fft_transform_cost(n) + nbp * 0.25;
		per_frame += (direct < pair ? direct : pair) / max_block;
	}
	return per_frame;
}

uint32_t gf_cpu_fft_choose_partition(uint32_t taps, uint32_t channels, uint32_t max_block, double *cost)
{
	uint32_t best = 64;
	double best_cost = INFINITY;
	for (uint32_t P = 16; P <= (1u << 16); P *= 2) {
		double c = partition_cost(taps, channels, max_block, P);
		if (c < best_cost) {
			best_cost = c;
			best = P;
		}
		if (P >= 2 * (uint64_t)taps)
			break; /* longer partitions only add zero padding */
	}
	if (cost)
		*cost = best_cost;
	return best;
}
