/**
 * @file cpu_fft_kernels.h
 * Internal to the CPU FFT convolver: its vector kernels, one table per
 * instruction set. Spectra are in split form (re[], im[]) with n a multiple
 * of 8. Pure functions: RT-safe, any thread.
 */
#ifndef GPUFIR_CPU_FFT_KERNELS_H
#define GPUFIR_CPU_FFT_KERNELS_H

#include <stdint.h>

struct gf_fft_kernels {
	/** a += b * c over n complex bins. */
	void (*cmac)(float *restrict ar, float *restrict ai, const float *br, const float *bi,
		     const float *cr, const float *ci, uint32_t n);
	/** z = b * c (+ a when ar is non-NULL) over n complex bins. */
	void (*cmul_add)(float *restrict zr, float *restrict zi, const float *br, const float *bi,
			 const float *cr, const float *ci, const float *ar, const float *ai, uint32_t n);
	/** y[i*ys] = tail[i] + sum_k hr[k] x[i+k] for i < m (tail may be NULL): lh reversed head taps. */
	void (*head)(const float *hr, uint32_t lh, const float *x, const float *tail, float *y, uint32_t ys,
		     uint32_t m);
};

/** The fastest table this CPU runs (AVX2+FMA where present). */
const struct gf_fft_kernels *gf_cpu_fft_kernels(void);

#endif
